"""``ember.linalg``: torch.linalg's functions, names and signatures.

Thin functions over the decomposition ops of core/ops/decompositions.py (which hold the kernels and
derivatives) and over ember's reductions and matmul; composites are differentiable because the ops
they call are. Batch dims keep their names; the matrix dims of results are unnamed.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..autograd.node import as_torch_node as _as_torch_node
from .arg_errors import invalid_arguments as _invalid_arguments
from .arg_errors import overloaded as _overloaded
from .arg_errors import tensor_input as _tensor_input
from .autocast import entry as _autocast_entry
from .names import as_op_error as _as_op_error
from .ops import decompositions as _d
from .ops.decompositions import LinAlgError, _exact, _out
from .return_types import return_types
from .tensor import Tensor

_LinAlgError = LinAlgError  # the class's own name, so pickle finds it by module and name

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]

solve_triangular = _d.solve_triangular
matrix_exp = _d.matrix_exp
matrix_power = _d.matrix_power
householder_product = _d.householder_product


def _e():
    import ember

    return ember


def matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Alias of ember.matmul."""
    return _e().matmul(input, other, out=out)


# ---------------------------------------------------------------------- determinants / inverses
def det(A: Tensor, *, out=None) -> Tensor:
    """The determinant of (a batch of) square matrices."""
    return _out(out, _d.det(A), "_linalg_det", _exact)


def slogdet(A: Tensor, *, out=None):
    """(sign, logabsdet): the sign (phase) and log of the absolute value of the determinant."""
    s, la = _d.slogdet(A)
    r = return_types.linalg_slogdet(s, la)
    return _out(out, r, "_linalg_slogdet", _exact)


def _norm_check(name):
    def check(out, res, ins=()):
        raise RuntimeError(
            f"{name} expected out tensor dtype {_d._sname(res._data)} but got: "
            f"{_d._sname(out._data)}"
        )

    return check


def _vecdot_check(out, res, ins=()):
    raise RuntimeError(
        f"linalg.vecdot: Expected out of dtype{_d._sname(res._data)} but found "
        f"{_d._sname(out._data)}"
    )


def _multi_dot_check(out, res, ins=()):
    raise RuntimeError(
        f"multi_dot(): expected out tensor to have dtype {_d._cn(res)} but got {_d._cn(out)}"
    )


# out= as torch writes each: the op named in its error for an input that requires grad (None:
# no such error) and its error for an out= tensor of another dtype
def _mn_out(out, r):
    return _out(out, r, None, _norm_check("linalg.matrix_norm"))


def _norm_out(out, r):
    return _out(out, r, None, _norm_check("linalg.norm"))


def _cond_out(out, r):
    return _out(out, r, None, _d.castable_out("linalg.cond"))


@_autocast_entry
@_tensor_input("linalg_inv", "A")
def inv(A: Tensor, *, out=None) -> Tensor:
    """The inverse of (a batch of) square matrices; LinAlgError when one is singular."""
    return _d.inverse(A, out=out)


@_autocast_entry
@_tensor_input("linalg_inv_ex", "A")
def inv_ex(A: Tensor, *, check_errors: bool = False, out=None):
    """(inverse, info): info > 0 marks a singular matrix (no error unless check_errors)."""
    return _out(out, _d._linalg_inv_ex(A, check_errors, "linalg.inv_ex"), "linalg_inv_ex", _exact)


_PINV_SIGS = (
    " * (Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, "
    "Tensor out = None)\n"
    " * (Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, "
    "Tensor out = None)\n"
    " * (Tensor input, Tensor rcond, bool hermitian = False, *, Tensor out = None)\n"
    " * (Tensor input, float rcond, bool hermitian = False, *, Tensor out = None)\n"
)


def _pinv_types(A, rcond, hermitian, atol, rtol) -> None:
    """torch's TypeError when an argument of pinv fits none of its overloads (a tolerance
    neither Tensor nor number, a non-Tensor input); rcond is taken as passed positionally."""
    tols = [v for v in (atol, rtol, rcond) if v is not None]
    if isinstance(A, Tensor) and all(isinstance(v, (Tensor, int, float)) for v in tols):
        return
    args = (A,) if rcond is None else (A, rcond)
    kw = {k: v for k, v in (("atol", atol), ("rtol", rtol)) if v is not None}
    if hermitian is not False:
        kw["hermitian"] = hermitian
    sigs = [line[3:] for line in _PINV_SIGS.splitlines()]
    raise _invalid_arguments("linalg_pinv", args, kw, sigs)


def pinv(
    A: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None, out=None
) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values below max(atol, rtol * s_max) drop.

    ``rcond`` (torch's older overload) is a relative tolerance: the same as ``rtol`` with atol 0.
    """
    if atol is not None or rtol is not None or rcond is not None or type(A) is not Tensor:
        _pinv_types(A, rcond, hermitian, atol, rtol)
    if rcond is not None:
        if atol is not None or rtol is not None:
            got = ", ".join(
                ["Tensor"]
                + [
                    f"{k}={'Tensor' if isinstance(v, Tensor) else type(v).__name__}"
                    for k, v in (("atol", atol), ("rtol", rtol), ("rcond", rcond))
                    if v is not None
                ]
            )
            raise TypeError(
                "linalg_pinv() received an invalid combination of arguments - got "
                f"({got}), but expected one of:\n" + _PINV_SIGS
            )
        atol, rtol = 0.0, rcond
    a = A._data
    if rtol is None and atol is not None and not isinstance(atol, Tensor):
        # torch's overload for a number atol reads A.size(-2) and its dtype's epsilon first
        A.size(-2)
        if a.dtype.kind not in "fc" or a.dtype.itemsize < 4:
            raise RuntimeError("This function doesn't handle types other than float and double")
    e = _e()
    if a.ndim < 2 or a.dtype.kind not in "fc" or a.dtype.itemsize < 4:
        raise RuntimeError(
            f"linalg.pinv({_d._sname(a)}{{{list(a.shape)}}}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types"
        )
    with e.no_grad():  # the value; its derivative is the pseudo-inverse's own (one op)
        m, n = A.shape[-2], A.shape[-1]
        if rtol is None:
            rtol = (
                0.0
                if (atol is not None and _pos(atol))
                else np.finfo(A._data.real.dtype).eps * max(m, n)
            )
        if not A.numel():  # torch returns before the decomposition (and eigh's square check)
            s = A.new_zeros(tuple(A.shape[:-2]) + (0,))
        elif hermitian:
            L, Q = eigh(A)
            s = L.abs()
        else:
            U, s, Vh = svd(A, full_matrices=False)
        if s.shape[-1] == 0:
            # an empty product, as torch's: under autocast its dtype is the matmul's
            batch = tuple(A.shape[:-2])
            r = A.new_zeros(batch + (n, 0)) @ A.new_zeros(batch + (0, m))
        else:
            r = _pinv_from(e, s, rtol, atol, (L, Q) if hermitian else (U, Vh), hermitian)
    return _out(out, _d._linalg_pinv_of(A, r), "linalg_pinv", _d.castable_out("linalg.pinv"))


def _pinv_from(e, s, rtol, atol, factors, hermitian: bool) -> Tensor:
    """The pseudo-inverse from the eigendecomposition ``factors`` = (L, Q), s = |L|, or the SVD
    ``factors`` = (U, Vh), singular values s."""
    smax = s.amax(-1, keepdim=True)
    # a tolerance tensor broadcasts against the batch dims: give it the singular-value dim
    tol = (rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol) * smax
    if atol is not None:
        tol = e.maximum(
            tol,
            atol.unsqueeze(-1)
            if isinstance(atol, Tensor)
            else e.tensor(atol, dtype=s.dtype, device=s.device),
        )
    keep = (s > tol).to(s.dtype)
    sinv = keep / (s * keep + (1 - keep))  # 1/s where kept, 0 elsewhere
    if hermitian:
        L, Q = factors
        sinv = sinv * e.sgn(L) if not L.is_complex() else sinv / e.sgn(L)
        return (Q * sinv.to(Q.dtype).unsqueeze(-2)) @ _d._mh(Q)
    U, Vh = factors
    return _d._mh(Vh) @ (sinv.to(U.dtype).unsqueeze(-1) * _d._mh(U))


def _pos(v) -> bool:
    return bool((v > 0).all()) if isinstance(v, Tensor) else v > 0


# ---------------------------------------------------------------------- solvers
@_autocast_entry
@_tensor_input("linalg_solve", "A", "B")
def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """X with A X = B (or X A = B when not left); B may be a (batch of) vector."""
    try:
        X = _d._solve_ex(A, B, left, True)[0]
    except RuntimeError as e:  # a name clash is linalg.solve's (spec 4.10)
        raise _as_op_error(e, "linalg.solve", ("linalg_solve_ex",), A, B) from None
    return _out(out, X, "_linalg_solve_ex", _exact)


@_autocast_entry
@_tensor_input("linalg_solve_ex", "A", "B")
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out=None):
    """(result, info) of linalg.solve; info > 0 marks a singular matrix."""
    try:
        X, info = _d._solve_ex(A, B, left, check_errors, "torch.linalg.solve_ex")
    except RuntimeError as e:  # a name clash is linalg.solve_ex's (spec 4.10)
        raise _as_op_error(e, "linalg.solve_ex", ("linalg_solve_ex",), A, B) from None
    return _out(out, return_types.linalg_solve_ex(X, info), "_linalg_solve_ex", _exact)


@_autocast_entry
@_tensor_input("linalg_lstsq", "input", "b")
def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values): the least-squares solution of A X = B."""
    e = _e()
    if driver is not None and driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    driver = driver or "gelsy"
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A.dtype != B.dtype:  # before B's rank and sizes, as torch
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {_d._sname(A._data)} and other's dtype {_d._sname(B._data)}"
        )
    if not (A.ndim >= B.ndim and A.ndim - B.ndim <= 1):
        raise RuntimeError(
            "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
            "(input.dim() - other.dim()) <= 1"
        )
    # a vector right-hand side is one with A's shape less its last dim (as in linalg.solve)
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vec else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError(
            f"torch.linalg.lstsq: input.size(-2) should match other.size(-{1 if vec else 2})"
        )
    if A._data.dtype.kind not in "fc" or A._data.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if B.ndim == A.ndim - 1 and not vec:
        # a matrix B one dim short of A: torch broadcasts A's batch dims against all of B's but
        # the last (so B's rows count as a batch dim too) and expands B to that batch
        from .registry import broadcast_error

        err = broadcast_error((tuple(A.shape[:-2]), tuple(B.shape[:-1])))
        if err is not None:
            raise err
        Bm = B.expand(tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1])))
                      + tuple(B.shape[-2:]))  # fmt: skip
    m, n = A.shape[-2], A.shape[-1]
    eps = np.finfo(A._data.real.dtype).eps
    rc = eps * max(m, n) if rcond is None or rcond < 0 else rcond
    # torch's gradient is that of pinv(A) @ B at pinv's default tolerance, whatever rcond is;
    # the value is the driver's: gels (QR) ignores rcond, the others truncate at it (gelsy's
    # rank-revealing QR is approximated by the SVD's truncation: LAPACKs differ there anyway)
    try:
        X = pinv(A) @ Bm
    except RuntimeError as err:  # a name clash is linalg.lstsq's (spec 4.10), not matmul's
        raise _as_op_error(err, "linalg.lstsq", ("matmul",), A, B) from None
    if driver != "gels" and rcond is not None and rcond >= 0:
        X = X + (pinv(A, rtol=rc) @ Bm - X).detach()
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(Bm.shape[:-2])))
    real = A._data.real.dtype
    empty = e.empty(0, dtype=A.dtype, device=A.device)
    empty = empty.real if A.is_complex() else empty
    sv = _d._linalg_svdvals(A.detach()) if driver in ("gelsd", "gelss", "gelsy") else None
    rank = e.empty(0, dtype=e.int64, device=A.device)
    if driver != "gels" and sv is not None:
        smax = sv.amax(-1, keepdim=True) if sv.shape[-1] else sv.sum(-1, keepdim=True)
        rank = (sv > rc * smax).sum(-1).to(e.int64)
        if driver == "gelsy" and Bm.shape[-1] == 0:
            rank = rank * 0  # LAPACK's gelsy returns rank 0 for no right-hand sides
    resid = empty
    if m > n and driver != "gelsy":
        full = bool((rank == n).all()) if rank.numel() else True
        if full:
            r = A @ X - Bm
            resid = (r.abs() ** 2).sum(-2)  # a vector B keeps its column: torch's shape
    svals = sv if driver in ("gelsd", "gelss") else empty
    _ = (batch, real)
    X = _as_torch_node(X.squeeze(-1) if vec else X, "LinalgLstsqBackward0")  # one op in torch
    return return_types.linalg_lstsq(X, resid, rank, svals)


# ---------------------------------------------------------------------- decompositions
@_autocast_entry
@_tensor_input("linalg_cholesky")
def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """The Cholesky factor L (A = L L^H), or U (A = U^H U) when upper."""
    return _out(out, _d._linalg_cholesky_ex(A, upper, True)[0], "linalg_cholesky_ex", _exact)


@_autocast_entry
@_tensor_input("linalg_cholesky_ex")
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info): info > 0 is the order of the first leading minor that is not positive-definite."""
    r = _d._linalg_cholesky_ex(A, upper, check_errors, "linalg.cholesky_ex")
    return _out(out, r, "linalg_cholesky_ex", _exact)


@_autocast_entry
@_tensor_input("linalg_qr", "A")
def qr(A: Tensor, mode: str = "reduced", *, out=None):
    """(Q, R) with A = Q R; mode 'reduced' (default), 'complete' or 'r' (Q is empty)."""
    return _out(out, _d._linalg_qr(A, mode), "linalg_qr", _exact)


@_autocast_entry
@_tensor_input("linalg_svd", "A")
def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh and S descending."""
    _svd_driver_check(A, driver)
    return _out(out, _d._linalg_svd(A, full_matrices), "_linalg_svd", _exact)


def _svd_driver_check(A: Tensor, driver) -> None:
    if driver is not None and not A.is_cuda:  # a cuSOLVER choice: torch refuses it elsewhere
        # after its checks of the input's rank and kind, and not for an empty input
        a = A._data
        _d._check_matrix("linalg.svd", a)
        if a.dtype.kind not in "fcV":
            _d._check_float("linalg.svd", a)
        if not a.size:
            return
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
            "cuSOLVER backend."
        )


@_autocast_entry
@_tensor_input("linalg_svdvals", "A")
def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """The singular values, descending."""
    _svd_driver_check(A, driver)
    return _out(out, _d._linalg_svdvals(A), "_linalg_svd", _exact)


@_autocast_entry
@_tensor_input("linalg_eigh")
def eigh(A: Tensor, UPLO: str = "L", *, out=None):
    """(eigenvalues ascending, eigenvectors) of Hermitian matrices; only the UPLO triangle is
    read."""
    r = _d._linalg_eigh(A, UPLO)
    if isinstance(out, (tuple, list)) and len(out) == 2 and out[1].dtype != r[1].dtype:
        _exact(out[1], r[1])  # torch checks the eigenvectors' out= first
    return _out(out, r, "_linalg_eigh", _exact)


@_autocast_entry
@_tensor_input("linalg_eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """The eigenvalues (ascending) of Hermitian matrices."""
    return _out(out, _d._linalg_eigh(A, UPLO)[0], "_linalg_eigh", _exact)


@_autocast_entry
@_tensor_input("linalg_eig")
def eig(A: Tensor, *, out=None):
    """(eigenvalues, eigenvectors) of square matrices, complex, eigenvectors of unit norm."""
    r = _d._linalg_eig(A)
    _eig_out_check("torch.linalg.eig", r, out)
    return _out(out, r, "linalg_eig")


def _eig_out_check(who, r, out) -> None:
    """torch's error for an out= of a real type where eig's results are complex."""
    if out is None:
        return
    r, out = (r, out) if isinstance(r, tuple) else ((r,), (out,))
    for v, o, what in zip(r, out, ("eigenvalues", "eigenvectors")):
        if isinstance(o, Tensor) and not o.is_complex():
            raise RuntimeError(
                f"{who}: Expected {what} to be safely castable from {_d._sname(v._data)} dtype, "
                f"but got {what} with dtype {_d._sname(o._data)}"
            )


@_autocast_entry
@_tensor_input("linalg_eigvals")
def eigvals(A: Tensor, *, out=None) -> Tensor:
    """The (complex) eigenvalues of square matrices."""
    r = _d._linalg_eig(A, "linalg.eigvals")[0]
    _eig_out_check("torch.linalg.eigvals", r, out)
    return _out(out, r, None)


@_tensor_input("linalg_lu_factor", "A")
def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    """(LU, pivots): the packed LU decomposition with partial pivoting (1-based int32 pivots)."""
    LU, piv, _ = _d._linalg_lu_factor_ex(A, pivot, True)
    return _out(out, return_types.linalg_lu_factor(LU, piv), "linalg_lu_factor_ex", _exact)


@_tensor_input("linalg_lu_factor_ex", "A")
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    """(LU, pivots, info) of lu_factor; info > 0 marks an exactly singular U."""
    r = _d._linalg_lu_factor_ex(A, pivot, check_errors, "torch.linalg.lu_factor_ex")
    return _out(out, r, "linalg_lu_factor_ex", _exact)


@_tensor_input("linalg_lu", "A")
def lu(A: Tensor, *, pivot: bool = True, out=None):
    """(P, L, U) with A = P L U."""
    P, L, U = _d._linalg_lu(A, pivot)
    r = return_types.linalg_lu(P.detach(), L, U)  # P is not differentiable
    return _out(out, r, "linalg_lu", _exact)


def lu_solve(
    LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False, out=None
) -> Tensor:
    """X with A X = B (or X A = B; A^H when adjoint) from A's lu_factor."""
    try:
        X = _d._lu_solve(LU, pivots, B, left, adjoint)
    except RuntimeError as e:  # a name clash is linalg.lu_solve's (spec 4.10)
        raise _as_op_error(e, "linalg.lu_solve", _d._LU_INNER, LU, pivots, B) from None
    r = _as_torch_node(X, "LinalgLuSolveBackward0")
    return _out(out, r, "linalg_lu_solve", _exact)


# torch's linalg_lu_solve is one kernel off the autocast lists: ember's triangular solves and
# permutation products must not be cast to the region's dtype (listed as autocast's OWN)
lu_solve = _autocast_entry(lu_solve, "linalg_lu_solve")


@_tensor_input("linalg_ldl_factor")
def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):
    """(LD, pivots): the Bunch-Kaufman LDL^T (LDL^H when hermitian) of A's lower triangle."""
    LD, piv, _ = _d._linalg_ldl_factor_ex(A, hermitian, True, "ldl_factor")
    return _out(out, return_types.linalg_ldl_factor(LD, piv), None, _exact)


@_tensor_input("linalg_ldl_factor_ex")
def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """(LD, pivots, info) of ldl_factor; info > 0 marks an exactly singular D."""
    return _out(out, _d._linalg_ldl_factor_ex(A, hermitian, check_errors), None, _exact)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out=None):
    """X with A X = B from A's ldl_factor (batch dims broadcast)."""
    return _out(out, _d._linalg_ldl_solve(LD, pivots, B, hermitian))


# ---------------------------------------------------------------------- norms
@_autocast_entry
def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None, out=None):
    """The vector ord-norm over ``dim`` (all elements when None): inf, -inf, 0 or any real."""
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str")
    if isinstance(dim, list):
        dim = tuple(dim)
    r = _e().norm(x, float(ord), dim, keepdim, dtype=dtype)
    return _out(out, r, "linalg_vector_norm", _exact)


def _mdims(A, dim, name):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    from .dims import normalize_dim

    d0, d1 = (normalize_dim(A, d) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _matrix_norm_args(args, kwargs) -> bool:
    dim = args[2] if len(args) > 2 else kwargs.get("dim", ())
    return isinstance(dim, (tuple, list))


@_autocast_entry
@_overloaded(
    "linalg_matrix_norm",
    tuple(
        f"(Tensor input, {o}, tuple of ints dim = {{-2,-1}}, bool keepdim = False, *, "
        "torch.dtype dtype = None, Tensor out = None)"
        for o in ("Number ord", 'str ord = "fro"')
    ),
    _matrix_norm_args,
)
@_tensor_input("linalg_matrix_norm")
def matrix_norm(
    A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None, out=None
) -> Tensor:
    """The matrix norm: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2 over the two dims ``dim``."""
    dim = tuple(dim)  # the parser's error for another type (the decorator's), before all else
    name = "linalg.matrix_norm"
    if ord not in ("fro", "nuc") and (
        isinstance(ord, str) or ord not in (1, -1, 2, -2, math.inf, -math.inf)
    ):
        raise RuntimeError(f"{name}: Order {ord} not supported.")  # torch checks ord first
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    a = A._data
    half = a.dtype.itemsize == 2 and a.dtype.kind in "fV"  # float16 / bfloat16
    if not half or ord == "nuc" or ord in (2, -2):  # torch computes svd norms in 32+ bits only
        _d._check_float(name, a)
    d0, d1 = _mdims(A, tuple(dim), name)
    if dtype is not None:
        from .dtype import to_dtype
        from .ops.reduction import _check_norm_dtype

        _check_norm_dtype(name, a.dtype, to_dtype(dtype).np)
        A = A.to(dtype)
    if ord == "fro":
        return _mn_out(out, vector_norm(A, 2, (d0, d1), keepdim))
    if ord == "nuc" or ord in (2, -2, 2.0, -2.0):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        if ord == "nuc" or (ord > 0 and not s.shape[-1]):
            r = s.sum(-1)  # torch: the largest of no singular values is 0
        elif ord > 0:
            r = s.amax(-1)
        elif not s.shape[-1]:  # torch's message names the dim as written, unnormalized
            raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
        else:
            r = s.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
            r = _as_torch_node(r, "PermuteBackward0")  # torch moves the kept dims back
        return _mn_out(out, r)
    if ord in (1, -1, math.inf, -math.inf):
        s_dim, m_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        r = A.abs().sum(s_dim, keepdim=keepdim)
        m_dim -= not keepdim and s_dim < m_dim  # m_dim in the summed result (as amin's error)
        if ord > 0 and not r.shape[m_dim]:
            r = r.sum(m_dim, keepdim=keepdim)  # torch: the largest of no sums is 0
        else:
            r = r.amax(m_dim, keepdim) if ord > 0 else r.amin(m_dim, keepdim)
        return _mn_out(out, r)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None, out=None):
    """The vector or matrix norm, chosen like torch.linalg.norm from ``ord`` and ``dim``."""
    if isinstance(dim, (int, str)):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}"
            )
        if ord is None or (len(dim) == 1 and not isinstance(ord, str)):
            # a string ord is a matrix norm's; no ord is the vector 2-norm over dim (torch)
            r = vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        else:
            r = matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        return _norm_out(out, r)
    if ord is None:
        return _norm_out(out, vector_norm(A, 2, None, keepdim, dtype=dtype))
    if A.ndim not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
            f"{A.ndim}D."
        )
    if A.ndim == 1 and not isinstance(ord, str):
        return _norm_out(out, vector_norm(A, ord, None, keepdim, dtype=dtype))
    return _norm_out(out, matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype))


@_autocast_entry
@_tensor_input("linalg_cond")
def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    """The condition number of A in the p-norm (2-norm by default); inf for a singular A."""
    svd_p = p is None or (not isinstance(p, str) and p in (2, -2))

    def square():
        if A.shape[-1] != A.shape[-2]:
            o = f"{p:f}" if isinstance(p, float) else p  # torch's std::to_string: 1.000000
            raise RuntimeError(
                f"linalg.cond(ord={o}): A must be batches of square matrices, but they are "
                f"{A.shape[-2]} by {A.shape[-1]} matrices"
            )

    # torch's order: a numeric ord checks the dims, then returns zeros for an empty A; a string
    # ord ('fro', 'nuc') checks the dims and squareness first
    if isinstance(p, str):
        if A.ndim < 2:
            raise RuntimeError(
                f"linalg.cond(ord={p}): The input tensor A must have at least 2 dimensions."
            )
        square()
    elif A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p not in (None, 1, -1, 2, -2, math.inf, -math.inf, "fro", "nuc"):
        from .ops.random import _g

        raise RuntimeError(f"linalg.cond got an invalid norm type: {_g(p)}")
    e = _e()
    if not A.numel():  # zeros for no matrices or empty ones, before the dtype checks
        return _cond_out(out, e.zeros(A.shape[:-2], dtype=A.dtype.to_real(), device=A.device))
    if not svd_p:
        square()
    if (svd_p or p == "nuc") and A._data.dtype.itemsize == 2 and A._data.dtype.kind in "fV":
        # torch reaches its svd kernel, which has no half-precision version, without the check
        # that linalg.svd itself makes
        kind = "BFloat16" if A.dtype == e.bfloat16 else "Half"
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for '{kind}'")
    if svd_p:
        s = svdvals(A)
        r = s[..., 0] / s[..., -1] if p in (None, 2) else s[..., -1] / s[..., 0]
        return _cond_out(out, r)
    _d._check_float("linalg.svd" if p == "nuc" else "linalg.inv", A._data)
    # a singular A has an infinite condition number: torch fills its "inverse" with inf, and
    # turns the nan of 0 * inf (a zero matrix) into inf as numpy does
    Ai, info = inv_ex(A)
    singular = (info > 0)[..., None, None]
    r = matrix_norm(A, p) * matrix_norm(Ai.masked_fill(singular, 0), p)
    r = r.masked_fill(singular[..., 0, 0], math.inf)
    return _cond_out(out, r.nan_to_num(math.inf, math.inf, -math.inf))


def _matrix_rank_args(args, kwargs) -> bool:
    tols = (*args[1:2], kwargs.get("tol"), kwargs.get("atol"), kwargs.get("rtol"))
    number = (Tensor, int, float)
    tol = args[1] if len(args) > 1 else kwargs.get("tol")
    no_mix = tol is None or (kwargs.get("atol") is None and kwargs.get("rtol") is None)
    return (
        no_mix
        and isinstance(args[0] if args else kwargs.get("A"), Tensor)
        and all(v is None or isinstance(v, number) for v in tols)
    )


@_autocast_entry
@_overloaded(
    "linalg_matrix_rank",
    tuple(line[3:] for line in _PINV_SIGS.splitlines() if "rcond" not in line)
    + (
        "(Tensor input, Tensor tol, bool hermitian = False, *, Tensor out = None)",
        "(Tensor input, float tol, bool hermitian = False, *, Tensor out = None)",
    ),
    _matrix_rank_args,
)
def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None, out=None):
    """The number of singular values above max(atol, rtol * s_max) (int64)."""
    if tol is not None and (atol is not None or rtol is not None):
        raise TypeError("tol with atol/rtol")  # no such overload: the decorator's error
    e = _e()
    _d._check_matrix("torch.linalg.matrix_rank", A._data, "input")
    # torch's overload for atol alone (or no tolerance) checks the dtype; the others reach svd
    if tol is None and rtol is None and (A._data.dtype.kind not in "fc" or A.element_size() == 2):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.numel() == 0:  # torch returns before the decomposition (and its checks)
        r = e.zeros(A.shape[:-2], dtype=e.int64, device=A.device)
        return _out(out, r, None, _d.castable_out("torch.linalg.matrix_rank"))
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = A.shape[-2], A.shape[-1]
    with e.no_grad():
        s = eigvalsh(A).abs() if hermitian else svdvals(A)
        if rtol is None:
            pos = atol is not None and _pos(atol)
            rtol = 0.0 if pos else np.finfo(A._data.real.dtype).eps * max(m, n)
        smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
        # a tolerance tensor broadcasts against the batch dims (as in pinv)
        tol_ = (rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol) * smax
        if atol is not None:
            at = atol.unsqueeze(-1) if isinstance(atol, Tensor) else atol
            tol_ = e.maximum(tol_, e.as_tensor(at, dtype=s.dtype, device=s.device))
        r = (s > tol_).sum(-1).to(e.int64)
    return _out(out, r, None, _d.castable_out("torch.linalg.matrix_rank"))


# ---------------------------------------------------------------------- products
@_autocast_entry
@_tensor_input("linalg_cross", "input", "other")
def cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """The 3-vector cross product along ``dim`` (inputs broadcast)."""
    e = _e()
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    from .dims import normalize_dim

    normalize_dim(input, dim)  # torch's IndexError for a dim out of range
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[dim]} and {other.shape[dim]}"
        )
    try:  # the registered op: names kept (spec 4.4)
        r = e.cross(input, other, dim)
    except RuntimeError as err:  # a name clash is linalg.cross's (spec 4.10)
        raise _as_op_error(err, "linalg.cross", ("cross",), input, other) from None
    return _out(out, r, "linalg_cross", _exact, (input, other))


@_autocast_entry
@_tensor_input("linalg_vecdot", "x", "y")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """sum(conj(x) * y) over ``dim`` (inputs broadcast)."""
    if x._data.dtype.kind not in "fcV":
        raise RuntimeError(
            "linalg.vecdot: Expected a floating point or complex tensor as input. Got "
            f"{_d._sname(x._data)}"
        )
    if x.dtype != y.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{_d._sname(x._data)} and y of type {_d._sname(y._data)} instead"
        )
    if x.ndim == 1 and y.ndim == 1 and x.shape != y.shape:  # torch runs vdot: its error
        from .ops.linalg import _matmul_error

        raise _matmul_error(x._data, y._data)
    xc = x.conj() if x.is_complex() else x
    try:
        prod = xc * y
    except RuntimeError as e:  # a name clash is vecdot's (spec 4.10), not its inner mul's
        raise _as_op_error(e, "linalg.vecdot", ("mul",), x, y) from None
    return _out(out, prod.sum(dim), "sum", _vecdot_check)


@_autocast_entry
def multi_dot(tensors, *, out=None) -> Tensor:
    """The product of a chain of matrices (the first/last may be vectors)."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        first, last = i == 0, i == len(ts) - 1
        ok = t.ndim == 2 or (t.ndim == 1 and (first or last))
        if not ok:
            if first or last:
                pos = "first" if first else "last"
                raise RuntimeError(
                    f"multi_dot(): the {pos} tensor must be 1D or 2D but got {t.ndim}D"
                )
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i, t in enumerate(ts[1:], 1):
        if t.dtype != ts[0].dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{_d._cn(ts[0])} and tensor {i} {_d._cn(t)}"
            )
    shapes = [tuple(t.shape) for t in ts]
    for i in range(len(ts) - 1):
        a = shapes[i] if shapes[i] and (i or len(shapes[i]) == 2) else (1,) + shapes[i]
        if a[-1] != shapes[i + 1][0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(shapes[i])} and "
                f"{list(shapes[i + 1])} cannot be multiplied"
            )
    row = ts[0].ndim == 1
    col = ts[-1].ndim == 1
    if row:
        ts[0] = ts[0].unsqueeze(0)
    if col:
        ts[-1] = ts[-1].unsqueeze(-1)
    r = ts[0]
    try:
        for t in ts[1:]:
            r = r @ t
    except RuntimeError as err:  # a name clash is linalg.multi_dot's (spec 4.10), not matmul's
        raise _as_op_error(err, "linalg.multi_dot", ("matmul",), *ts) from None
    if row:
        r = r.squeeze(0)
    if col:
        r = r.squeeze(-1)
    return _out(out, r, "mm", _multi_dot_check)


@_tensor_input("linalg_diagonal", "A")
def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The (batched) diagonal, a view: torch.diagonal with matrix-friendly defaults."""
    return A.diagonal(offset, dim1, dim2)


@_tensor_input("linalg_vander", "x")
def vander(x: Tensor, *, N=None) -> Tensor:
    """The Vandermonde matrix: columns x**0, x**1, ..., x**(N-1) (increasing powers)."""
    e = _e()
    if x.dtype == e.bool or x._data.dtype.itemsize == 2 and x._data.dtype.kind in "fV":
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            f"{_d._sname(x._data)}"
        )
    if not x.is_floating_point() and not x.is_complex():
        x = x.to(e.int64)  # torch's powers of integers are int64
    n = (x.shape[-1] if x.ndim else 1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.ndim == 0:  # torch takes a scalar as one point
        x = x.reshape(1)
    cols = [e.ones_like(x)]
    for _ in range(n - 1):
        cols.append(cols[-1] * x)
    return e.stack(cols, -1)


# ---------------------------------------------------------------------- tensor equations
@_autocast_entry
def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The tensor inverse w.r.t. tensordot over ``ind`` dims."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = tuple(A.shape[ind:]) + tuple(A.shape[:ind])
    rows = int(np.prod(A.shape[:ind]))
    cols = int(np.prod(A.shape[ind:]))
    if rows != cols:
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {cols} != {rows}"
        )
    # torch inverts with its legacy op, whose singular error is named "inv"
    r = _d._linalg_inv_ex(A.reshape(rows, cols), True, "inv")[0]
    return _out(out, r.reshape(out_shape), None, _d.castable_out("tensorinv"))


@_autocast_entry
def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B."""
    if dims is not None:
        from .dims import normalize_dim

        nd = A.ndim
        dims = [normalize_dim(A, d) for d in dims]
        A = A.movedim(tuple(dims), tuple(range(nd - len(dims), nd)))
    xs = tuple(A.shape[B.ndim :])
    rows = int(np.prod(tuple(B.shape)))
    cols = int(np.prod(xs))
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {cols} != {rows}"
        )
    X = solve(A.reshape(rows, cols), B.reshape(rows))
    return _out(out, X.reshape(xs), None)


# ``import ember.linalg`` / ``from ember.linalg import norm`` find this module (it lives in core/)
sys.modules.setdefault(__name__.rsplit(".", 2)[0] + ".linalg", sys.modules[__name__])
