"""Matrix decompositions and solvers: the kernels (and derivatives) behind ``ember.linalg``.

Kernels call ``xp.linalg`` (numpy.linalg / cupy.linalg) and fall back to ``scipy.linalg``
(``cupyx.scipy.linalg`` on cuda) only where numpy has no batched routine (triangular solves, LU,
the matrix exponential). Every kernel batches over leading dims. Derivatives are written in ember
ops (mostly these same ops), so double backward works. Multi-output decompositions (eigh, svd,
qr, eig) recompute the factorization inside their derivative: the node saves only the input, and
the recomputed factors carry their own graph under ``create_graph=True``.

Names: batch dims keep their names, the matrix dims of the results are unnamed.
This module also holds the torch-level functions (``torch.det``, ``torch.inverse``, ``torch.svd``
returning V, ``torch.triangular_solve``, ...); ``ember.linalg`` (core/linalg.py) is the namespace.
"""

from __future__ import annotations

import math

import numpy as np

from ...autograd.node import as_torch_node
from .. import dtype as _dt
from ..arg_errors import must_be_tensor, tensor_input
from ..autocast import entry as _autocast_entry
from ..layout import contiguous_format, row_major
from ..meta import MetaArray, identity_like
from ..names import _clean, as_op_error, unify
from ..registry import backward_names, broadcast_error, op
from ..return_types import return_types
from ..runtime import _warn_once
from ..tensor import Tensor

__all__ = [
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "det",
    "inverse",
    "logdet",
    "lu",
    "lu_solve",
    "lu_unpack",
    "matrix_exp",
    "matrix_power",
    "orgqr",
    "pca_lowrank",
    "pinverse",
    "qr",
    "slogdet",
    "svd",
    "svd_lowrank",
    "triangular_solve",
]


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed (singular or non positive-definite input), like
    ``torch.linalg.LinAlgError`` (a RuntimeError)."""


# torch's class is torch._C._LinAlgError: scripts that log type(e).__name__ print that name.
LinAlgError.__module__ = "ember.linalg"
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"


# ---------------------------------------------------------------------- helpers
def _scipy(xp, name, *arrays, **kw):
    """``scipy.linalg.<name>`` for numpy arrays; ``cupyx.scipy.linalg.<name>`` for cupy ones (per
    matrix where it does not batch); on another device backend, on a host copy moved back."""
    import scipy.linalg as sl

    if xp is np:
        return getattr(sl, name)(*arrays, **kw)
    if hasattr(xp, "host_module"):  # the meta device
        return getattr(xp.host_module("scipy.linalg"), name)(*arrays, **kw)
    try:  # pragma: no cover - cuda only
        import cupyx.scipy.linalg as csl

        f = getattr(csl, name)
    except (ImportError, AttributeError):
        r = getattr(sl, name)(*[_host(a) for a in arrays], **kw)
        return tuple(xp.asarray(x) for x in r) if isinstance(r, tuple) else xp.asarray(r)
    batch = arrays[0].shape[:-2]  # pragma: no cover
    if not batch:  # pragma: no cover
        return f(*arrays, **kw)
    outs = [f(*[a[idx] for a in arrays], **kw) for idx in np.ndindex(*batch)]  # pragma: no cover
    if isinstance(outs[0], tuple):  # pragma: no cover
        return tuple(
            xp.stack([o[k] for o in outs]).reshape(batch + outs[0][k].shape)
            for k in range(len(outs[0]))
        )
    return xp.stack(outs).reshape(batch + outs[0].shape)  # pragma: no cover


def _host(a):
    """A host array for LAPACK; a meta array's stand-in is identity matrices (zeros are singular)."""
    if type(a) is MetaArray:
        return identity_like(a)
    return a if isinstance(a, np.ndarray) else a.get()


def _check_float(name, a, what="input", kernel=None):
    """torch's dtype checks of a linalg input: float or complex, and (where torch checks it)
    not half precision; with ``kernel``, torch lets half/bfloat16 reach that kernel, which has
    no such version (its NotImplementedError)."""
    k = a.dtype.kind
    if kernel is not None and (k == "V" or (k == "f" and a.dtype.itemsize == 2)):
        _no_kernel(kernel, a)
        return  # an empty input, which that kernel returns on before its dispatch
    if k not in "fc":
        if k == "V":  # bfloat16 (int16/uint16 are 2 bytes too, but not floating point)
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_sname(a)}")
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as {what}. Got {_sname(a)}"
        )
    if a.dtype.itemsize == 2:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_sname(a)}")


# torch's kernels that return on an empty input before their dtype dispatch, so that no
# dtype (half, bfloat16, integer) is refused there
_EMPTY_FIRST = frozenset({"lu", "cholesky", "linalg_svd", "linalg_eigh", "linalg.lu_solve",
                          "ldl_factor_kernel"})  # fmt: skip


def _no_kernel(kernel, a):
    """torch's error for a dtype ``kernel`` has no version for (none for an empty input where
    that kernel returns first)."""
    if a.size == 0 and kernel in _EMPTY_FIRST:
        return
    dev = "cuda" if type(a).__module__.startswith("cupy") else "cpu"
    raise NotImplementedError(f"\"{kernel}_{dev}\" not implemented for '{_sname(a)}'")


def _sname(a) -> str:
    return _dt.SCALAR_NAMES["bfloat16" if a.dtype.kind == "V" else a.dtype.name]


def _check_equation(name: str, n: int, B, left: bool) -> None:
    """torch's error when B's rows (left: A X = B) or columns (X A = B) do not match n x n A."""
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
            f"{B.shape[-2]}x{B.shape[-1]})"
        )


def _check_matrix(name, a, arg="A"):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def _check_square(name, a, arg="A"):
    _check_matrix(name, a, arg)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{name}: {arg} must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )


def _check_square_float(name, a, arg="A", kernel=None):
    _check_square(name, a, arg)
    _check_float(name, a, kernel=kernel)


def _batch_prefix(shape, idx) -> str:
    if len(shape) <= 2:
        return ""
    flat = int(np.ravel_multi_index(idx, shape[:-2])) if shape[:-2] else 0
    return f"(Batch element {flat}): "


def _first_zero_pivots(a):
    """Per matrix (host arrays): the 1-based index of the first zero pivot of its LU, 0 if none."""
    import scipy.linalg as sl

    a = _host(a)
    info = np.zeros(a.shape[:-2], np.int32)
    for idx in np.ndindex(*a.shape[:-2]):
        m = a[idx]
        if not np.all(np.isfinite(m)):
            continue
        (getrf,) = sl.get_lapack_funcs(("getrf",), (m,))
        _, _, inf = getrf(m)
        info[idx] = max(int(inf), 0)
    return info


def _chol_info(a, upper):
    """Per matrix: the order of the first leading minor that is not positive-definite, or 0."""
    import scipy.linalg as sl

    a = _host(a)
    info = np.zeros(a.shape[:-2], np.int32)
    for idx in np.ndindex(*a.shape[:-2]):
        m = a[idx]
        (potrf,) = sl.get_lapack_funcs(("potrf",), (m,))
        c, inf = potrf(m, lower=not upper, clean=True)
        if inf == 0:  # OpenBLAS's potrf goes on past a NaN pivot: the first one is the bad minor
            nan = np.flatnonzero(np.isnan(np.diagonal(c)))
            inf = nan[0] + 1 if len(nan) else 0
        info[idx] = max(int(inf), 0)
    return info


def _raise_first(info, shape, fmt, exc=None):
    nz = np.argwhere(info != 0) if info.ndim else (np.zeros((1, 0), int) if info else [])
    if len(nz):
        idx = tuple(int(i) for i in nz[0])
        v = int(info[idx]) if info.ndim else int(info)
        name, rest = fmt.format(v).split(": ", 1)
        raise (exc or LinAlgError)(f"{name}: {_batch_prefix(shape, idx)}{rest}")


def _linear_solve_checks(b, A, name):
    """torch's linearSolveCheckInputs (cholesky_solve, ldl_solve): dtypes, then shapes."""
    if b.dtype != A.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {_sname(b)} and A "
            f"of type {_sname(A)} instead."
        )
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"A must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )
    if b.ndim < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-b.ndim}, {b.ndim - 1}], "
            "but got -2)"
        )
    if A.shape[-1] != b.shape[-2]:
        n = A.shape[-1]
        raise RuntimeError(
            f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b "
            f"matrix is {b.shape[-2]} by {b.shape[-1]}"
        )


# ---------------------------------------------------------------------- name rules
def _batch(t):
    n = t._names
    return None if n is None else n[:-2]


def _batch_of(ins):
    out = None
    for t in ins:
        if isinstance(t, Tensor) and t._data.ndim >= 2:
            b = _batch(t)
            if b is not None:
                out = b if out is None else unify(out, b)
            elif out is not None and t._data.ndim - 2 > len(out):
                out = (None,) * (t._data.ndim - 2 - len(out)) + out
    return out


def _rule(*trail):
    """Names of outputs that are batch dims + ``trail[k]`` unnamed dims (one entry per output)."""

    def rule(ins, *a, **k):
        b = _batch_of(ins)
        if b is None:
            return None
        outs = [_clean(b + (None,) * n) for n in trail]
        return outs if len(outs) > 1 else outs[0]

    return rule


_mat, _scalar = _rule(2), _rule(0)


# ---------------------------------------------------------------------- small ember helpers
def _mh(t):
    t = t.transpose(-2, -1)
    return t.conj() if t.is_complex() else t


def _sym_lower(t):
    """The Hermitian matrix whose lower triangle is ``t``'s (what LAPACK reads with UPLO='L')."""
    return t.tril() + _mh(t.tril(-1))


def _eye_like(t, n=None):
    from .creation import eye

    n = t.shape[-1] if n is None else n
    return eye(n, dtype=t.dtype, device=t.device)


def _real_if(g, like):
    return g.real if g.is_complex() and not like.is_complex() else g


# ---------------------------------------------------------------------- inverse
@op(names=_rule(2, 0), out_type=return_types.linalg_inv_ex, method=False, name="_linalg_inv_ex")
def _linalg_inv_ex(xp, A, check_errors=False, who="linalg.inv"):
    """(inverse, info) of square matrices; info > 0: the (1-based) zero pivot of a singular one.
    ``who`` names the function in the singular error (linalg.inv_ex's is its own)."""
    _check_square_float("linalg.inv", A)
    info = xp.zeros(A.shape[:-2], np.int32)
    try:
        return xp.linalg.inv(A), info
    except np.linalg.LinAlgError:
        inf = _first_zero_pivots(A)
        if check_errors:
            _raise_first(
                inf,
                A.shape,
                who + ": The diagonal element {} is zero, the inversion could not be "
                "completed because the input matrix is singular.",
            )
        with np.errstate(all="ignore"):
            safe = xp.where(xp.asarray(inf != 0)[..., None, None], xp.nan, A)
            fin = xp.isfinite(safe).all(axis=(-2, -1), keepdims=True)
            r = xp.linalg.inv(xp.where(fin, safe, xp.eye(A.shape[-1], dtype=A.dtype)))
        return xp.where(fin, r, xp.nan).astype(A.dtype, copy=False), xp.asarray(inf)


@_linalg_inv_ex.vjp
def _(grad, result):
    ri = _mh(result)
    return -(ri @ grad @ ri)


@_autocast_entry
@tensor_input("inverse")
def inverse(input: Tensor, *, out=None) -> Tensor:
    """The inverse of square matrices (torch.inverse, linalg.inv)."""
    r = _linalg_inv_ex(input, True)[0]
    return _out(out, r, "linalg_inv_ex", _exact)


# ---------------------------------------------------------------------- pseudo-inverse
@op(names=_mat, method=False, name="_linalg_pinv_of")
def _linalg_pinv_of(xp, A, P):
    """``P``, the pseudo-inverse linalg.pinv computed for ``A`` (tolerances applied), recorded as
    one op whose derivative is the pseudo-inverse's (for hermitian=True too, as torch's)."""
    return P


@_linalg_pinv_of.vjp
def _(grad, A, result):
    # dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P (Golub & Pereyra), so
    # dL/dA = -P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A), with G = dL/dP
    P, PH, GH = result, _mh(result), _mh(grad)
    T = GH @ (P @ PH)
    U = (PH @ P) @ GH
    return -(PH @ grad @ PH) + T - A @ (P @ T) + U - (U @ P) @ A, None


_linalg_pinv_of.op.backward_name = "LinalgPinvBackward0"


def _cn(t) -> str:
    return _dt.C_NAMES["bfloat16" if t._data.dtype.kind == "V" else t._data.dtype.name]


def _exact(out, res, ins=()):
    """torch's structured linalg kernels refuse an out= tensor of another dtype (no cast)."""
    raise RuntimeError(f"Expected out tensor to have dtype {_cn(res)}, but got {_cn(out)} instead")


def castable_out(who: str):
    """An out= check of torch's composite linalg ops: any safe cast is fine, another is refused
    in their words."""

    def check(out, res, ins=()):
        if not _dt.can_cast(res.dtype, out.dtype):
            raise RuntimeError(
                f"{who}: Expected result to be safely castable from {_sname(res._data)} dtype, "
                f"but got result with dtype {_sname(out._data)}"
            )

    return check


def _out(out, r, name="_linalg_inv_ex", check=None, ins=()):
    """Write ``r`` (a tensor or a named tuple of them) into ``out``: ``name`` is torch's op in
    its error for an input that requires grad (None: torch writes without that check),
    ``check(out, res, ins)`` raises torch's error for an out= of another dtype (None: any safe
    cast is fine); ``ins``: the inputs an out= must not overlap (by ``name``'s rule)."""
    if out is None:
        return r
    from types import SimpleNamespace

    from ..registry import _write_out

    if name is None:
        r = type(r)(*(t.detach() for t in r)) if isinstance(r, tuple) else r.detach()
    return _write_out(SimpleNamespace(name=name or "", out_dtype=check), out, r, ins)


# ---------------------------------------------------------------------- det / slogdet
@op(names=_scalar)
def det(xp, input):
    """The determinant of square matrices."""
    _check_square_float("linalg.det", input, kernel="lu")
    if input.size == 0:  # no LAPACK call (which has no half-precision version)
        return xp.ones(input.shape[:-2], input.dtype)
    if input.ndim > 3:  # permuted batch dims: numpy's result keeps their order, torch's not
        input = row_major(xp, input)
    return xp.linalg.det(input)


@det.vjp
def _(grad, input, result):
    if input.shape[-1] == 1:
        # a 1x1 determinant is its entry: derivative 1, also at 0, where det * inv would be 0
        return grad.unsqueeze(-1).unsqueeze(-1)
    g = (grad * result.conj()).unsqueeze(-1).unsqueeze(-1)
    inv, info = _linalg_inv_ex(input)
    if not input.is_meta and bool((info != 0).any()):  # exactly singular: det 0, gradient 0
        from .comparison import ne

        ok = ne(info, 0).logical_not().unsqueeze(-1).unsqueeze(-1)
        inv = inv.nan_to_num(0.0, 0.0, 0.0) * ok.to(inv.dtype)
    return g * _mh(inv)


@op(names=_rule(0, 0), out_type=return_types.slogdet, n_diff_out=2)
def slogdet(xp, input):
    """(sign, log|det|) of square matrices."""
    _check_square_float("linalg.slogdet", input)
    if input.ndim > 3:  # permuted batch dims: numpy's results keep their order, torch's not
        input = row_major(xp, input)
    s, la = xp.linalg.slogdet(input)
    return s.astype(input.dtype, copy=False), la


slogdet.op.out_dtype = _exact  # torch's kernel refuses an out= of another dtype


@slogdet.vjp
def _(grad, input, result):
    gs, g = grad
    if input.is_complex():
        # d sign = sign * i Im(tr(A^-1 dA)): its adjoint adds -i Im(conj(g_sign) sign) to g
        g = g - 1j * (gs.conj() * result).imag  # result: the sign
    # unchecked: a singular matrix gives a non-finite gradient as torch's (its -inf logabsdet
    # has no finite derivative), not inverse's error
    return g.unsqueeze(-1).unsqueeze(-1) * _mh(_linalg_inv_ex(input)[0])


@tensor_input("logdet")
def logdet(input: Tensor) -> Tensor:
    """log(det(input)): nan for a negative determinant, -inf for a zero one (real input)."""
    from .pointwise import log

    _check_square_float("logdet", input._data)
    s, la = slogdet(input)
    if input.is_complex():
        # a singular matrix: torch's phase of a zero determinant is nan
        r = (la + log(s)).masked_fill(s == 0, complex(-math.inf, math.nan))
        return as_torch_node(r, "AddBackward0")  # torch's: logabsdet + log(sign)
    # a negative determinant gives nan, selected with a where as torch's: no gradient flows
    # there (la's would be inv(A)^T); a zero one is la's -inf
    return as_torch_node(la.masked_fill(s < 0, float("nan")), "WhereBackward0")


# ---------------------------------------------------------------------- cholesky
@op(
    names=_rule(2, 0),
    out_type=return_types.linalg_cholesky_ex,
    method=False,
    name="_linalg_cholesky_ex",
)
def _linalg_cholesky_ex(xp, A, upper=False, check_errors=False, who="linalg.cholesky"):
    """(L, info) with A = L L^H (or U^H U when upper); info: the first bad leading minor.
    ``who`` names the function in the not-positive-definite error."""
    _check_square_float("linalg.cholesky", A, kernel="cholesky")
    info = xp.zeros(A.shape[:-2], np.int32)
    if A.size == 0:
        return A.copy(), info
    low = xp.tril(A) if not upper else xp.swapaxes(xp.triu(A), -1, -2).conj()
    try:
        L = xp.linalg.cholesky(low + xp.swapaxes(xp.tril(low, -1), -1, -2).conj())
        # cupy raises nothing for a matrix that is not positive-definite, nor does OpenBLAS for a
        # NaN pivot (reference LAPACK's potrf stops there, as torch): the factor's diagonal is NaN
        failed = bool(xp.isnan(xp.diagonal(L, axis1=-2, axis2=-1)).any())
    except np.linalg.LinAlgError:
        failed = True
    if failed:
        inf = _chol_info(A, upper)
        if check_errors:
            _raise_first(
                inf,
                A.shape,
                who + ": The factorization could not be completed because the input "
                "is not positive-definite (the leading minor of order {} is not "
                "positive-definite).",
            )
        import scipy.linalg as sl

        h = _host(A)
        L = np.zeros_like(h)
        for idx in np.ndindex(*h.shape[:-2]):
            (potrf,) = sl.get_lapack_funcs(("potrf",), (h[idx],))
            c, _ = potrf(h[idx], lower=not upper, clean=True)
            L[idx] = c if not upper else c.conj().T
        L, info = xp.asarray(L), xp.asarray(inf)
    if upper:
        return xp.swapaxes(L, -1, -2).conj(), info
    return L, info


@_linalg_cholesky_ex.vjp
def _(grad, result, upper):
    # A = L L^H:  gA = L^{-H} Phi L^{-1}, Phi = (T + T_strict^H) / 2 for T = tril(L^H gL).
    # Real: the symmetric gradient. Complex: as torch, the diagonal keeps its imaginary part
    # (gA is not made Hermitian).
    L = _mh(result) if upper else result
    gL = _mh(grad) if upper else grad
    P = (_mh(L) @ gL).tril()
    P = 0.5 * (P + _mh(P.tril(-1)))
    S = solve_triangular(_mh(L), P, upper=True)
    return solve_triangular(L, S, upper=False, left=False)


@_autocast_entry
@tensor_input("cholesky")
def cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """torch.cholesky (deprecated in torch): the Cholesky factor."""
    _warn_once(  # torch warns once per process about each deprecated function
        "cholesky",
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent "
        "results for all valid (symmetric positive definite) inputs.",
    )
    a = input._data
    _check_square("cholesky", a)
    if a.dtype.kind not in "fc" or a.dtype.itemsize == 2:  # torch's own op: no dtype check
        _no_kernel("cholesky", a)
    r = _linalg_cholesky_ex(input, upper, True, "cholesky")[0]
    r = as_torch_node(r, "CholeskyBackward0")
    return _out(out, r, "cholesky")


# ---------------------------------------------------------------------- triangular solve
def _trsm(A, B, lower, unit):
    """Triangular solves (same batch dims) without LAPACK's singularity check: BLAS trsm divides
    by a zero pivot as IEEE arithmetic does, giving torch's inf/nan instead of an error."""
    import scipy.linalg.blas as bl

    (trsm,) = bl.get_blas_funcs(("trsm",), (A, B))
    X = np.empty(B.shape, trsm.dtype)
    for idx in np.ndindex(*A.shape[:-2]):
        X[idx] = trsm(1.0, A[idx], B[idx], side=0, lower=lower, trans_a=0, diag=unit)
    return X


@op(names=_mat, method=False, name="_linalg_solve_triangular")
def _linalg_solve_triangular(xp, A, B, upper=False, left=True, unitriangular=False):
    """X with op(A) X = B (left) or X A = B: A triangular (the other triangle is ignored)."""
    if A.dtype.kind not in "fc" or A.dtype.itemsize == 2:  # torch's kernel has no such version
        dev = "cpu" if xp is np else "cuda"
        raise NotImplementedError(f"\"triangular_solve_{dev}\" not implemented for '{_sname(A)}'")
    if B.dtype != A.dtype:  # torch computes (and returns) in A's dtype
        B = B.astype(A.dtype)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        A, B, upper = xp.swapaxes(A, -1, -2), xp.swapaxes(B, -1, -2), not upper
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = xp.broadcast_to(A, batch + A.shape[-2:])
    B = xp.broadcast_to(B, batch + B.shape[-2:])
    with np.errstate(all="ignore"):
        if A.shape[-1] == 0 or B.size == 0:
            X = xp.zeros(B.shape, A.dtype)
        else:
            try:
                X = _scipy(
                    xp,
                    "solve_triangular",
                    A,
                    B,
                    lower=not upper,
                    unit_diagonal=unitriangular,
                    check_finite=False,
                )
            except np.linalg.LinAlgError:  # a zero on the diagonal
                X = xp.asarray(_trsm(_host(A), _host(B), not upper, unitriangular))
    X = X.astype(A.dtype, copy=False)
    return xp.swapaxes(X, -1, -2) if not left else X


@_linalg_solve_triangular.vjp
def _(grad, A, result, upper, left, unitriangular, needs):
    gB = gA = None
    tri = Tensor.triu if upper else Tensor.tril
    if left:  # A X = B: gB = A^{-H} g, gA = -gB X^H
        gB = solve_triangular(_mh(A), grad, upper=not upper, unitriangular=unitriangular)
        if needs[0]:
            gA = -(gB @ _mh(result))
    else:  # X A = B: gB = g A^{-H}, gA = -X^H gB
        gB = solve_triangular(
            _mh(A), grad, upper=not upper, left=False, unitriangular=unitriangular
        )
        if needs[0]:
            gA = -(_mh(result) @ gB)
    if gA is not None:
        gA = tri(gA, 1 if unitriangular else 0) if upper else tri(gA, -1 if unitriangular else 0)
    return gA, gB


def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False, out=None
) -> Tensor:
    """linalg.solve_triangular: X with A X = B (left) or X A = B, A upper/lower triangular."""
    try:
        low = A.ndim < 2 or B.ndim < 2
    except AttributeError as e:
        names = ("input", "B")
        raise must_be_tensor("linalg_solve_triangular", names, (A, B)) or e from None
    _check_square("linalg.solve_triangular", A)  # A entirely before B, as torch
    if low:
        _check_matrix("linalg.solve_triangular", B, "B")
    _check_equation("linalg.solve_triangular", A.shape[-1], B, left)
    _batch_check(A, B)
    r = _linalg_solve_triangular(A, B, upper, left, unitriangular)
    return _out(out, r, "linalg_solve_triangular", _scalar_type_check)


def _scalar_type_check(out, res, ins=()):
    raise RuntimeError(f"expected scalar type {_sname(res._data)} but found {_sname(out._data)}")


def _batch_check(A, B) -> None:
    """torch's error when the batch dims of A and B do not broadcast (it names B's first)."""
    err = broadcast_error((tuple(B.shape[:-2]), tuple(A.shape[:-2])))
    if err is not None:
        raise err


@_autocast_entry
@tensor_input("triangular_solve", "input", "A")
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve: (solution, cloned_coefficient) of op(A) X = b."""
    _warn_once(
        "triangular_solve",
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will "
        "be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\n"
        "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B).",
    )
    for t, what in ((b, "b"), (A, "A")):
        if t.ndim < 2:
            raise RuntimeError(
                f"torch.triangular_solve: Expected {what} to have at least 2 dimensions, but it "
                f"has {t.ndim} dimensions instead"
            )
    _linear_solve_checks(b._data, A._data, "triangular_solve")
    _batch_check(A, b)
    M = A.mT if transpose else A
    try:
        x = solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    except RuntimeError as e:  # a name clash is triangular_solve's (spec 4.10)
        raise as_op_error(e, "triangular_solve", _LU_INNER, b, A) from None
    x = as_torch_node(x, "TriangularSolveBackward0")  # torch's own (deprecated) op
    # torch returns A broadcast to the solution's batch dims
    r = return_types.triangular_solve(x, A.expand(x.shape[:-2] + A.shape[-2:]).clone())
    return _out(out, r, "triangular_solve", _exact)


# ---------------------------------------------------------------------- solve
def _solve_ex_names(ins, *a, **k):
    """X: the broadcast batch + 2 unnamed dims; info: A's own batch (torch factors A alone)."""
    b = _batch_of(ins)
    if b is None:
        return None
    ba = _batch(ins[0])
    return [_clean(b + (None, None)), None if ba is None else _clean(ba)]


@op(names=_solve_ex_names, out_type=return_types.linalg_solve_ex, method=False,
    name="_linalg_solve_ex")  # fmt: skip
def _linalg_solve_ex(xp, A, B, check_errors=False, who="torch.linalg.solve"):
    """(X, info) with A X = B; B is a (batch of) matrix, broadcast against A's batch. ``info``
    (and the batch element a singular error names) follow A's own batch, not the broadcast one:
    torch LU-factors A before broadcasting. ``who`` names the function in the singular error."""
    _check_square_float("linalg.solve", A, kernel="lu")
    if A.dtype != B.dtype:
        raise RuntimeError(
            "linalg.solve: Expected A and B to have the same dtype, but found A of type "
            f"{_sname(A)} and B of type {_sname(B)} instead"
        )
    info = xp.zeros(A.shape[:-2], np.int32)
    if A.size == 0:  # no LAPACK call (which has no half-precision version)
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        return xp.zeros(batch + B.shape[-2:], A.dtype), info
    try:
        return xp.linalg.solve(A, B), info
    except np.linalg.LinAlgError:
        inf = _first_zero_pivots(A)
        if check_errors:
            _raise_first(
                inf,
                A.shape,
                who + ": The solver failed because the input matrix is singular.",
            )
        bad = xp.asarray(inf != 0)[..., None, None]
        with np.errstate(all="ignore"):
            Af = xp.where(bad, xp.eye(A.shape[-1], dtype=A.dtype), A)
            X = xp.linalg.solve(Af, B)
        return xp.where(bad, xp.nan, X).astype(A.dtype, copy=False), xp.asarray(inf)


@_linalg_solve_ex.vjp
def _(grad, A, result, needs):
    gB = _linalg_solve_ex(_mh(A), grad)[0]
    gA = -(gB @ _mh(result)) if needs[0] else None
    return gA, gB


def _solve_prep(name, A, B, left):
    # torch checks the dtypes before any shape
    if A._data.dtype.kind not in "fcV":
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {_sname(A._data)}"
        )
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found A of type "
            f"{_sname(A._data)} and B of type {_sname(B._data)} instead"
        )
    _check_matrix(name, A._data)
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vec:  # a column, also for XA = B (which a vector then cannot satisfy, as in torch)
        B = B.unsqueeze(-1)
    if A.shape[-1] != A.shape[-2]:
        _check_square(name, A._data)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
            f"{B.shape[-2]}x{B.shape[-1]})"
        )
    if vec and not left:
        raise RuntimeError(
            f"{name}: Vector broadcasting of the left hand side is not supported for left=False. "
            "In this case linalg.solve is equivalent to B / A.squeeze(-1)"
        )
    _batch_check(A, B)
    return B, vec


def _solve_ex(A, B, left, check, who="torch.linalg.solve"):
    B, vec = _solve_prep("linalg.solve", A, B, left)
    if left:
        X, info = _linalg_solve_ex(A, B, check, who)
        X = X.squeeze(-1) if vec else X
    else:
        X, info = _linalg_solve_ex(A.mT, B.mT, check, who)
        X = X.mT
    # torch solves in one node, for a vector right-hand side and X A = B too
    return as_torch_node(X, "LinalgSolveExBackward0"), info


# ---------------------------------------------------------------------- eigh
@op(
    names=_rule(1, 2),
    out_type=return_types.linalg_eigh,
    n_diff_out=2,
    method=False,
    name="_linalg_eigh",
)
def _linalg_eigh(xp, A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors) of Hermitian matrices (one triangle is read)."""
    _check_square("linalg.eigh", A)  # before UPLO, as torch
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if A.dtype.kind not in "fc" or A.dtype.itemsize == 2:  # torch's dispatch error here
        _no_kernel("linalg_eigh", A)
    if A.size == 0:
        return xp.zeros(A.shape[:-1], A.real.dtype), xp.zeros(A.shape, A.dtype)
    if A.ndim > 3:  # permuted batch dims: numpy's results keep their order, torch's not
        A = row_major(xp, A)
    w, v = xp.linalg.eigh(A, UPLO=UPLO.upper())
    return w, v


def _safe_gaps(d):
    """d with zeros replaced by ones (degenerate pairs get no off-diagonal contribution)."""
    from .comparison import eq

    z = eq(d, 0)
    return d + z.to(d.dtype)


@_linalg_eigh.vjp
def _(grad, A, UPLO):
    gL, gV = grad
    L, V = _linalg_eigh(A, UPLO)
    Vh = _mh(V)
    VhgV = Vh @ gV
    _phase_check(VhgV, None, "linalg_eigh_backward", _EIG_PHASE)
    VhgV = 0.5 * (VhgV - _mh(VhgV))  # the skew-Hermitian part: the tangent space of U(n)
    E = L.unsqueeze(-2) - L.unsqueeze(-1)  # E_ij = L_j - L_i
    inner = VhgV / _safe_gaps(E).to(VhgV.dtype)
    n = L.shape[-1]
    offdiag = 1 - _eye_like(L, n)
    inner = inner * offdiag.to(inner.dtype) + gL.to(inner.dtype).diag_embed()
    return _real_if(V @ inner @ Vh, A)


# ---------------------------------------------------------------------- eig
@op(
    names=_rule(1, 2),
    out_type=return_types.linalg_eig,
    n_diff_out=2,
    method=False,
    name="_linalg_eig",
)
def _linalg_eig(xp, A, who="linalg.eig"):
    """(eigenvalues, eigenvectors) of general square matrices, always complex. ``who`` names
    the function in the errors (linalg.eigvals's are its own)."""
    if A.dtype.kind not in "fcV":  # torch looks for the complex result type first
        raise RuntimeError(f"Unknown Complex ScalarType for {_sname(A)}")
    _check_square(who, A)
    if A.dtype.kind == "V" or A.dtype.itemsize == 2:  # its kernel has no half-precision version
        dev = "cpu" if xp is np else "cuda"
        raise NotImplementedError(f"\"linalg_eig_out_{dev}\" not implemented for '{_sname(A)}'")
    cd = np.complex64 if A.dtype in (np.float32, np.complex64) else np.complex128
    if A.ndim > 3:  # permuted batch dims: numpy's results keep their order, torch's not
        A = row_major(xp, A)
    h = _host(A)
    if h.shape[-1] == 0:
        w, v = np.zeros(h.shape[:-1], cd), np.zeros(h.shape, cd)
    else:
        if not np.all(np.isfinite(h)):
            raise LinAlgError("linalg.eig: The algorithm failed to converge")
        w, v = np.linalg.eig(h)  # cupy has no general eig: host LAPACK (like torch's magma path)
    w, v = w.astype(cd, copy=False), v.astype(cd, copy=False)
    return (w, v) if xp is np else (xp.asarray(w), xp.asarray(v))


_EIG_PHASE = (
    "The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. The "
    "specified loss function depends on this quantity, so it is ill-defined."
)
_SVD_PHASE = (
    "The singular vectors in the complex case are specified up to multiplication by e^{i phi}. "
    "The specified loss function depends on this phase term, making it ill-defined."
)


def _phase_check(XhgX, YhgY, who, msg) -> None:
    """torch's error when a loss depends on the free phases of complex eigen/singular vectors:
    the imaginary diagonal of X^H gX (plus that of Y^H gY, the right singular vectors, which
    share each phase) must vanish, to within torch's allclose(rtol=atol=1e-2)."""
    if not XhgX.is_complex():
        return
    a = XhgX.diagonal(0, -2, -1).imag
    b = YhgY.diagonal(0, -2, -1).imag if YhgY is not None else None
    bad = (a.abs() > 1e-2) if b is None else ((a + b).abs() > 1e-2 + 1e-2 * b.abs())
    if bool(bad.any()):
        raise RuntimeError(f"{who}: {msg}")


@_linalg_eig.vjp
def _(grad, A):
    gL, gV = grad
    L, V = _linalg_eig(A)
    Vh = _mh(V)
    VhgV = Vh @ gV
    _phase_check(VhgV, None, "linalg_eig_backward", _EIG_PHASE)
    d = VhgV.diagonal(0, -2, -1).real
    VhgV = VhgV - Vh @ (V * d.unsqueeze(-2))  # the gauge: eigenvectors have unit norm
    E = L.conj().unsqueeze(-2) - L.conj().unsqueeze(-1)
    n = L.shape[-1]
    off = (1 - _eye_like(L.real, n)).to(VhgV.dtype)
    inner = VhgV / _safe_gaps(E) * off + gL.diag_embed()
    gA = _linalg_solve_ex(Vh, inner @ Vh)[0]
    return _real_if(gA, A)


# ---------------------------------------------------------------------- svd
@op(
    names=_rule(2, 1, 2),
    out_type=return_types.linalg_svd,
    n_diff_out=3,
    method=False,
    name="_linalg_svd",
)
def _linalg_svd(xp, A, full_matrices=True):
    """(U, S, Vh) with A = U diag(S) Vh, S descending."""
    _check_matrix("linalg.svd", A)
    _check_float("linalg.svd", A, kernel="linalg_svd")
    m, n = A.shape[-2:]
    if A.size == 0:
        k = min(m, n)
        mu, nv = (m, n) if full_matrices else (k, k)
        b = A.shape[:-2]
        U = xp.broadcast_to(xp.eye(m, mu, dtype=A.dtype), b + (m, mu)).copy()
        Vh = xp.broadcast_to(xp.eye(nv, n, dtype=A.dtype), b + (nv, n)).copy()
        return U, xp.zeros(b + (k,), A.real.dtype), Vh
    if A.ndim > 3:  # permuted batch dims: numpy's S keeps their order, torch's not
        A = row_major(xp, A)
    U, S, Vh = _xp_svd(xp, A, full_matrices=full_matrices)
    # torch's U and Vh are LAPACK's column-major matrices (so torch.svd's V = Vh^H is
    # contiguous and its .view works); numpy's are row-major
    return _column_major(xp, U), S, _column_major(xp, Vh)


def _column_major(xp, a):
    """Each matrix of ``a`` (the last two dims) in column-major order, batches outermost."""
    return xp.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)


def _xp_svd(xp, A, **kw):
    """xp.linalg.svd with torch's error when LAPACK does not converge (non-finite input)."""
    try:
        return xp.linalg.svd(A, **kw)
    except np.linalg.LinAlgError:
        raise LinAlgError(
            "linalg.svd: The algorithm failed to converge because the input matrix contained "
            "non-finite values."
        ) from None


def _svd_grad(A, gU, gS, gVh, U, S, Vh):
    k = S.shape[-1]
    m, n = A.shape[-2], A.shape[-1]
    U, Vh = U[..., :, :k], Vh[..., :k, :]
    gU = gU[..., :, :k] if gU is not None else None
    gVh = gVh[..., :k, :] if gVh is not None else None
    V = _mh(Vh)
    Sc = S.to(A.dtype)
    core = gS.to(A.dtype).diag_embed()
    if gU is not None or gVh is not None:
        S2 = S * S
        F = 1 / _safe_gaps(S2.unsqueeze(-2) - S2.unsqueeze(-1))  # 1/(s_j^2 - s_i^2)
        F = (F * (1 - _eye_like(S, k))).to(A.dtype)
        Sr = Sc.unsqueeze(-2)  # scales columns
        Sl = Sc.unsqueeze(-1)  # scales rows
        if A.is_complex():
            _phase_check(
                _mh(U) @ gU if gU is not None else Vh @ _mh(gVh),
                Vh @ _mh(gVh) if gU is not None and gVh is not None else None,
                "svd_backward",
                _SVD_PHASE,
            )
        if gU is not None:
            UhgU = _mh(U) @ gU
            core = core + (F * (UhgU - _mh(UhgU))) * Sr
            if A.is_complex():  # the phase gauge of each (u_i, v_i) pair
                d = UhgU.diagonal(0, -2, -1).imag.to(A.dtype) * 1j
                core = core + (d / Sc).diag_embed()
        if gVh is not None:
            gV = _mh(gVh)
            VhgV = Vh @ gV
            core = core + Sl * (F * (VhgV - _mh(VhgV)))
    gA = U @ core @ Vh
    if gU is not None and m > k:
        proj = gU - U @ (_mh(U) @ gU)
        gA = gA + (proj / Sr) @ Vh
    if gVh is not None and n > k:
        gV = _mh(gVh)
        proj = gV - V @ (Vh @ gV)
        gA = gA + (U / Sr) @ _mh(proj)
    return gA


@_linalg_svd.vjp
def _(grad, A, full_matrices):
    gU, gS, gVh = grad
    U, S, Vh = _linalg_svd(A, False)
    return _svd_grad(A, gU, gS, gVh, U, S, Vh)


@op(names=_rule(1), method=False, name="_linalg_svdvals")
def _linalg_svdvals(xp, A):
    """The singular values (descending)."""
    _check_matrix("linalg.svd", A)
    _check_float("linalg.svd", A, kernel="linalg_svd")
    if A.size == 0:
        return xp.zeros(A.shape[:-2] + (min(A.shape[-2:]),), A.real.dtype)
    if A.ndim > 3:  # permuted batch dims: numpy's result keeps their order, torch's not
        A = row_major(xp, A)
    return _xp_svd(xp, A, compute_uv=False)


@_linalg_svdvals.vjp
def _(grad, A):
    U, S, Vh = _linalg_svd(A, False)
    return _svd_grad(A, None, grad, None, U, S, Vh)


@_autocast_entry
@tensor_input("svd")
def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch.svd: (U, S, V) — V, not Vh; ``some=False`` gives the full U and V."""
    if not compute_uv:
        S = _linalg_svdvals(input)
        m, n = input.shape[-2:]
        b = tuple(input.shape[:-2])
        z = input.new_zeros(b + (m, m))  # torch: zero-filled, full-size U and V
        zv = input.new_zeros(b + (n, n))
        r = return_types.svd(z, S, zv)
    else:
        U, S, Vh = _linalg_svd(input, not some)
        r = return_types.svd(U, S, _mh(Vh))
    return _out(out, r, "_linalg_svd", _exact)


# ---------------------------------------------------------------------- qr
@op(
    names=_rule(2, 2),
    out_type=return_types.linalg_qr,
    n_diff_out=2,
    method=False,
    name="_linalg_qr",
)
def _linalg_qr(xp, A, mode="reduced"):
    """(Q, R) with A = Q R; mode 'reduced', 'complete' or 'r' (Q empty)."""
    _check_matrix("linalg.qr", A)
    if A.dtype.kind not in "fcV":  # torch: the input's kind, then the mode, then the kernel
        _check_float("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    _check_float("linalg.qr", A, kernel="geqrf")
    m, n = A.shape[-2:]
    if A.size == 0:
        k = m if mode == "complete" else min(m, n)
        b = A.shape[:-2]
        Q = xp.broadcast_to(xp.eye(m, k, dtype=A.dtype), b + (m, k)).copy()
        R = xp.zeros(b + (k, n), A.dtype)
    else:
        Q, R = xp.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        Q = xp.zeros((0,), A.dtype)
    return Q, R


def _qr_grad_tall(gQ, gR, Q, R):
    # m >= n: gA = (gQ + Q copyltu(M)) R^{-H}, M = R gR^H - gQ^H Q
    M = R @ _mh(gR) - _mh(gQ) @ Q
    low = M.tril(-1)
    c = low + _mh(low) + M.diagonal(0, -2, -1).real.to(M.dtype).diag_embed()
    return solve_triangular(_mh(R), gQ + Q @ c, upper=False, left=False)


@_linalg_qr.vjp
def _(grad, A, mode):
    gQ, gR = grad
    m, n = A.shape[-2], A.shape[-1]
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr."
        )
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    Q, R = _linalg_qr(A, mode)
    if m >= n:
        return _qr_grad_tall(gQ, gR, Q, R)
    # wide: A = [X | Y], X = Q U (square), Y = Q V
    U, _V = R[..., :, :m], R[..., :, m:]
    Y = A[..., :, m:]
    gU, gV = gR[..., :, :m], gR[..., :, m:]
    gY = Q @ gV
    gX = _qr_grad_tall(gQ + Y @ _mh(gV), gU, Q, U)
    from .shape import cat

    return cat([gX, gY], -1)


# ---------------------------------------------------------------------- matrix exponential
@op(names=_mat)
def matrix_exp(xp, input):
    """exp(A) of square matrices (Pade approximation with scaling and squaring)."""
    _check_square("linalg.matrix_exp", input)
    if input.size == 0 and input.dtype.kind in "fcV":  # before torch's low-precision check
        return input.copy()
    if input.dtype.kind == "V" or input.dtype == np.float16:
        # torch's cpu kernel takes half types (computed here in float32, rounded back)
        return _scipy(xp, "expm", input.astype(np.float32)).astype(input.dtype)
    _check_float("linalg.matrix_exp", input)
    r = _scipy(xp, "expm", input)
    return r.astype(input.dtype, copy=False)


@matrix_exp.vjp
def _(grad, input):
    # d/dA <G, exp(A)> = the upper-right block of exp([[A^H, G], [0, A^H]])
    from .shape import cat

    Ah = _mh(input)
    top = cat([Ah, grad], -1)
    bot = cat([Ah.new_zeros(tuple(Ah.shape)), Ah], -1)
    n = input.shape[-1]
    return matrix_exp(cat([top, bot], -2))[..., :n, n:]


# ---------------------------------------------------------------------- LU
@op(
    names=_rule(2, 1, 0),
    out_type=return_types.linalg_lu_factor_ex,
    n_diff_out=1,
    method=False,
    name="_linalg_lu_factor_ex",
)
def _linalg_lu_factor_ex(xp, A, pivot=True, check_errors=False, who="torch.linalg.lu_factor"):
    """(LU, pivots, info): the packed partial-pivoting LU; pivots are 1-based int32. ``who``
    names the function in the singular error."""
    if A.ndim < 2:
        raise RuntimeError(
            "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(A.shape)} instead"
        )
    if A.dtype.kind not in "fc" or A.dtype.itemsize == 2:  # torch's kernel: none for these
        _no_kernel("lu", A)
    m, n = A.shape[-2:]
    k = min(m, n)
    if A.size == 0:  # torch returns before refusing pivot=False
        piv = xp.broadcast_to(xp.arange(1, k + 1, dtype=np.int32), A.shape[:-2] + (k,))
        return A.copy(), piv.copy(), xp.zeros(A.shape[:-2], np.int32)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lu_, piv = _scipy(xp, "lu_factor", A, check_finite=False)
    piv = piv.astype(np.int32) + 1
    d = xp.diagonal(lu_, 0, -2, -1)
    z = d == 0
    first = xp.argmax(z, axis=-1).astype(np.int32) + 1
    info = xp.where(z.any(axis=-1), first, 0).astype(np.int32)
    if check_errors:
        _raise_first(
            _host(info),
            A.shape,
            who + ": U[{0},{0}] is zero and using it on lu_solve would result in a "
            "division by zero. If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)",
            RuntimeError,  # torch raises a plain RuntimeError here, not LinAlgError
        )
    return lu_.astype(A.dtype, copy=False), piv, info


def _lu_grad(A, gL, gU, L, U, P):
    # square: A = P L U, gA = P L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    if m == n:
        phi = (_mh(L) @ gL).tril(-1) + (gU @ _mh(U)).triu()
        x = solve_triangular(_mh(L), phi, upper=True, unitriangular=True)
        x = solve_triangular(_mh(U), x, upper=False, left=False)
        return P @ x
    if m < n:  # wide: A = P L [U1 | U2]
        U1, U2 = U[..., :, :k], U[..., :, k:]
        gU1, gU2 = gU[..., :, :k], gU[..., :, k:]
        phi = (_mh(L) @ gL).tril(-1) + (gU1 @ _mh(U1)).triu() - (gU2 @ _mh(U2)).tril(-1)
        x = solve_triangular(_mh(L), phi, upper=True, unitriangular=True)
        g1 = solve_triangular(_mh(U1), x, upper=False, left=False)
        g2 = solve_triangular(_mh(L), gU2, upper=True, unitriangular=True)
        from .shape import cat

        return P @ cat([g1, g2], -1)
    # tall: A = P [L1; L2] U
    L1, L2 = L[..., :k, :], L[..., k:, :]
    gL1, gL2 = gL[..., :k, :], gL[..., k:, :]
    phi = (_mh(L1) @ gL1).tril(-1) + (gU @ _mh(U)).triu() - (_mh(L2) @ gL2).triu()
    x = solve_triangular(_mh(U), phi, upper=False, left=False)
    g1 = solve_triangular(_mh(L1), x, upper=True, unitriangular=True)
    g2 = solve_triangular(_mh(U), gL2, upper=False, left=False)
    from .shape import cat

    return P @ cat([g1, g2], -2)


def _pivots_to_perm(xp, piv, m):
    """Row permutation (..., m) with A[perm] = L U from LAPACK's sequential 1-based swaps."""
    b = piv.shape[:-1]
    perm = xp.broadcast_to(xp.arange(m), b + (m,)).copy()
    idx = piv.astype(np.int64) - 1
    for i in range(piv.shape[-1]):
        j = idx[..., i : i + 1]
        a = perm[..., i : i + 1].copy()
        bj = xp.take_along_axis(perm, j, -1)
        perm[..., i : i + 1] = bj
        xp.put_along_axis(perm, j, a, -1)
    return perm


@op(names=_rule(2), method=False, name="_lu_perm_matrix")
def _lu_perm_matrix(xp, pivots, m=0, dtype=None):
    """The permutation matrix P (A = P L U) of LAPACK pivots."""
    perm = _pivots_to_perm(xp, pivots, m)
    eye = xp.eye(m, dtype=dtype)
    return xp.swapaxes(eye[perm], -1, -2)


@_linalg_lu_factor_ex.vjp
def _(grad, A, pivot):
    LU, piv = _linalg_lu_factor_ex(A, pivot)[:2]
    L, U = _unpack_lu(LU)
    P = _lu_perm_matrix(piv, A.shape[-2], LU.dtype.np)
    return _lu_grad(
        A, grad.tril(-1)[..., :, : L.shape[-1]], grad.triu()[..., : U.shape[-2], :], L, U, P
    )


def _unpack_lu(LU):
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + _eye_rect(LU, m, k)
    U = LU[..., :k, :].triu()
    return L, U


def _eye_rect(like, m, k):
    from .creation import eye

    return eye(m, k, dtype=like.dtype, device=like.device)


@op(
    names=_rule(2, 2, 2),
    out_type=return_types.linalg_lu,
    n_diff_out=3,
    method=False,
    name="_linalg_lu",
)
def _linalg_lu(xp, A, pivot=True):
    """(P, L, U) with A = P L U."""
    if A.ndim < 2:
        raise RuntimeError(
            f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} "
            "instead"
        )
    if A.dtype.kind not in "fc" or A.dtype.itemsize == 2:  # torch's kernel: none for these
        _no_kernel("lu", A)
    m, n = A.shape[-2:]
    k = min(m, n)
    if A.size == 0:  # torch returns before refusing pivot=False; P is then empty
        b = A.shape[:-2]
        P = xp.broadcast_to(xp.eye(m, dtype=A.dtype), b + (m, m)).copy()
        L = xp.broadcast_to(xp.eye(m, k, dtype=A.dtype), b + (m, k)).copy()
        return P if pivot else xp.zeros(0, A.dtype), L, xp.zeros(b + (k, n), A.dtype)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    with np.errstate(all="ignore"):
        P, L, U = _scipy(xp, "lu", A, check_finite=False)
    return P.astype(A.dtype, copy=False), L, U


@_linalg_lu.vjp
def _(grad, A, pivot):
    _, gL, gU = grad
    P, L, U = _linalg_lu(A, pivot)
    return _lu_grad(A, gL, gU, L, U, P)


# ---------------------------------------------------------------------- LDL (Bunch-Kaufman)
def _sytr(names, hermitian, m):
    """LAPACK's ?sytr<x> (?hetr<x> for a complex Hermitian matrix) for ``m``'s dtype."""
    import scipy.linalg as sl

    kind = "he" if hermitian and m.dtype.kind == "c" else "sy"
    return sl.get_lapack_funcs(tuple(kind + n for n in names), (m,))


@op(
    names=_rule(2, 1, 0),
    out_type=return_types.linalg_ldl_factor_ex,
    n_diff_out=1,
    method=False,
    name="_linalg_ldl_factor_ex",
)
def _linalg_ldl_factor_ex(xp, A, hermitian=False, check_errors=False, who="ldl_factor_ex"):
    """(LD, pivots, info): LAPACK sytrf/hetrf on A's lower triangle, as torch returns it (L's
    strict lower part and the 1x1/2x2 blocks of D in LD's lower triangle; 1-based int32
    pivots, negative for a 2x2 block; info > 0: D is exactly singular)."""
    _check_square("torch.linalg.ldl_factor_ex", A)
    if A.dtype.kind not in "fcV" or A.dtype.itemsize == 2:
        if A.dtype.kind in "fV":
            _no_kernel("ldl_factor_kernel", A)
        else:
            _check_float("torch.linalg.ldl_factor_ex", A)
    n = A.shape[-1]
    a = _host(A)
    LD = np.zeros(a.shape, a.dtype)
    piv = np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), a.shape[:-1]).copy()
    info = np.zeros(a.shape[:-2], np.int32)
    if n:
        sytrf, sytrf_lwork = _sytr(("trf", "trf_lwork"), hermitian, a)
        # the optimal workspace, as torch queries it: it selects LAPACK's blocked algorithm
        lwork = max(int(sytrf_lwork(n, lower=1)[0].real), 1)
        for idx in np.ndindex(*a.shape[:-2]):
            ldu, p, inf = sytrf(a[idx], lower=1, lwork=lwork)
            LD[idx], piv[idx], info[idx] = np.tril(ldu), p, inf
    if check_errors:
        _raise_unknown_info(info, who)
    return xp.asarray(LD), xp.asarray(piv), xp.asarray(info)


def _raise_unknown_info(info, who):
    # torch reports sytrf's info > 0 (an exactly singular D) as an unknown LAPACK error code
    if info.any():
        code = int(info.flat[np.argmax(info.reshape(-1) != 0)])
        raise RuntimeError(f"torch.linalg.{who}: Unknown error code: {code}.")


@_linalg_ldl_factor_ex.vjp
def _(grad):
    raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


@op(names=_mat, method=False, name="_linalg_ldl_solve")
def _linalg_ldl_solve(xp, LD, pivots, B, hermitian=False):
    """X with A X = B, from A's ldl_factor (LAPACK sytrs/hetrs per matrix of the broadcast
    batch)."""
    who = "torch.linalg.ldl_solve"
    _check_square(who, LD)
    _check_float(who, LD)
    _linear_solve_checks(B, LD, who)
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(
            f"{who}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots "
            f"with shape {list(pivots.shape)} instead"
        )
    if pivots.dtype.kind not in "iu":
        raise RuntimeError(f"{who}: Expected pivots to be integers. Got {_sname(pivots)}")
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    ld = np.broadcast_to(_host(LD), batch + LD.shape[-2:])
    pv = np.broadcast_to(_host(pivots).astype(np.int32), batch + pivots.shape[-1:])
    b = np.broadcast_to(_host(B), batch + B.shape[-2:])
    X = np.empty(b.shape, b.dtype)
    if X.size:
        (sytrs,) = _sytr(("trs",), hermitian, ld)
        for idx in np.ndindex(*batch):
            X[idx] = sytrs(ld[idx], pv[idx], b[idx], lower=1)[0]
    return xp.asarray(X)


@_linalg_ldl_solve.vjp
def _(grad):
    raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


# torch records these ops with its NotImplemented node (backward then raises)
_linalg_ldl_factor_ex.op.backward_name = _linalg_ldl_solve.op.backward_name = (
    "torch::autograd::NotImplemented"
)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from a packed LU and its pivots (torch.lu_unpack)."""
    if LU_data.ndim < 2:
        raise RuntimeError(
            "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(LU_data.shape)} instead"
        )
    m, _n = LU_data.shape[-2], LU_data.shape[-1]
    if unpack_pivots:
        if LU_pivots.dtype != _dt.int32:
            raise RuntimeError(
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced by "
                "torch.linalg.lu_factor"
            )
        pv = _host(LU_pivots._data)
        if pv.shape[-1:] != (min(m, _n),) or (pv.size and (pv.min() < 1 or pv.max() > m)):
            raise RuntimeError(
                "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you "
                "properly pass the result of lu_factor?"
            )
    if unpack_data:
        L, U = _unpack_lu(LU_data)
    else:
        L = U = LU_data.new_zeros((0,))
    if unpack_pivots:
        P = _lu_perm_matrix(LU_pivots, m, LU_data.dtype.np)
    else:
        P = LU_data.new_zeros((0,))
    r = return_types.lu_unpack(P, L, U)
    return _out(out, r, "lu_unpack", _exact)


def _lu_solve_checks(LU, pivots, B, left) -> None:
    """torch's checks for lu_solve, in its order: dtypes, then shapes, then batch dims."""
    _check_float("torch.linalg.lu_solve", LU._data, kernel="linalg.lu_solve")
    if LU.dtype != B.dtype:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{_sname(LU._data)} and B of type {_sname(B._data)} instead"
        )
    if pivots.dtype != _dt.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    _check_square("torch.linalg.lu_solve", LU._data)
    _check_matrix("linalg.lu_solve", B._data, "B")
    n = LU.shape[-1]
    _check_equation("linalg.lu_solve", n, B, left)
    if pivots.ndim == 0 or pivots.shape[-1] != n:
        raise RuntimeError(
            "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the "
            "matrix"
        )
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(
            "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
            f"pivots with shape {list(pivots.shape)} instead"
        )
    _batch_check(LU, B)


def _lu_solve(LU, pivots, B, left=True, adjoint=False):
    _lu_solve_checks(LU, pivots, B, left)
    if LU._data.dtype.itemsize == 2:  # an empty one (checked): torch returns before its kernel
        batch = np.broadcast_shapes(tuple(LU.shape[:-2]), tuple(B.shape[:-2]))
        return B.new_zeros(batch + tuple(B.shape[-2:]))
    L, U = _unpack_lu(LU)
    P = _lu_perm_matrix(pivots, LU.shape[-2], LU.dtype.np)
    if left and not adjoint:  # P L U X = B
        y = solve_triangular(L, P.mT @ B, upper=False, unitriangular=True)
        return solve_triangular(U, y, upper=True)
    if left:  # U^H L^H P^T X = B
        y = solve_triangular(_mh(U), B, upper=False)
        y = solve_triangular(_mh(L), y, upper=True, unitriangular=True)
        return P @ y
    if not adjoint:  # X P L U = B
        y = solve_triangular(U, B, upper=True, left=False)
        y = solve_triangular(L, y, upper=False, left=False, unitriangular=True)
        return y @ P.mT
    # X U^H L^H P^T = B
    y = solve_triangular(_mh(L), B @ P, upper=True, left=False, unitriangular=True)
    return solve_triangular(_mh(U), y, upper=False, left=False)


@_autocast_entry
def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve (deprecated in torch): X with A X = b, from A's packed LU."""
    try:
        X = _lu_solve(LU_data, LU_pivots, b)
    except RuntimeError as e:  # a name clash is lu_solve's (spec 4.10)
        raise as_op_error(e, "lu_solve", _LU_INNER, b, LU_data, LU_pivots) from None
    return _out(out, X, "linalg_lu_solve", _exact)


# the registered ops whose name errors the triangular and LU solvers re-label as their own
_LU_INNER = ("linalg_solve_triangular", "matmul")


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu (deprecated in torch): (LU, pivots[, infos])."""
    _warn_once(
        "lu",
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)"
        "\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)",
    )
    # torch's check_errors=not get_infos raises only for LAPACK's illegal-argument codes, which
    # never arise here: a singular U is returned, not refused
    LU, piv, info = _linalg_lu_factor_ex(A, pivot)
    return return_types._lu_with_info(LU, piv, info) if get_infos else (LU, piv)


# ---------------------------------------------------------------------- torch-level aliases
@_autocast_entry
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: the pseudo-inverse, singular values below rcond * max are dropped."""
    from ..linalg import pinv

    return pinv(input, rtol=rcond)


@op(names=_mat, method=False, name="_cholesky_solve")
def _cholesky_solve(xp, B, L, upper=False):
    """X with A X = B where A = L L^H (or U^H U when upper) is given by its Cholesky factor (the
    other triangle of L is not read)."""
    for what, t in (("b", B), ("u", L)):
        if t.ndim < 2:
            raise RuntimeError(
                f"{what} should have at least 2 dimensions, but has {t.ndim} dimensions instead"
            )
    _linear_solve_checks(B, L, "cholesky_solve")
    batch_error = broadcast_error((B.shape[:-2], L.shape[:-2]))
    if batch_error is not None:
        raise batch_error
    if L.dtype.kind not in "fc" or L.dtype.itemsize == 2:
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for '{_sname(L)}'")
    tri = _linalg_solve_triangular.op.kernel
    Lh = xp.swapaxes(L, -1, -2)
    if L.dtype.kind == "c":
        Lh = Lh.conj()
    if upper:  # U^H U X = B
        return tri(xp, L, tri(xp, Lh, B, False), True)
    return tri(xp, Lh, tri(xp, L, B, False), True)


@_cholesky_solve.vjp
def _(grad, L, result, upper, needs):
    # torch's formula: the factor's gradient fills both triangles (only one is read)
    gB = _cholesky_solve(grad, L, upper)
    gL = None
    if needs[1]:
        common = gB @ _mh(result)
        common = common + _mh(common)
        gL = -(L @ common) if upper else -(common @ L)
    return (gB if needs[0] else None), gL


# torch's names for cholesky_solve's arguments
_cholesky_solve.op.label, _cholesky_solve.op.arg_names = "cholesky_solve", ("input", "input2")


@_autocast_entry
def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B where A = L L^H (or U^H U when upper) is given by its Cholesky factor."""
    return _out(out, _cholesky_solve(B, L, upper), "cholesky_solve")


@_autocast_entry
@tensor_input("cholesky_inverse")
def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^H (or U^H U) from its Cholesky factor."""
    a = L._data
    _check_square("cholesky_inverse", a)
    if a.dtype.kind not in "fc" or a.dtype.itemsize == 2:
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for '{_sname(a)}'")
    d = _host(a).diagonal(0, -2, -1) == 0  # a zero on the factor's diagonal: A is singular
    info = np.where(d.any(-1), d.argmax(-1) + 1, 0) if d.shape[-1] else np.zeros(d.shape[:-1])
    _raise_first(
        info,
        a.shape,
        "cholesky_inverse: The diagonal element {} is zero, the inversion could not be completed "
        "because the input matrix is singular.",
    )
    eye = _eye_like(L).expand(tuple(L.shape))
    r = as_torch_node(cholesky_solve(eye, L, upper), "CholeskyInverseBackward0")
    return _out(out, r, "cholesky_inverse")


_power_castable = castable_out("matrix_power")


def _power_out(out, res, ins=()):
    """matrix_power's out=: safely castable (its own check), then matmul's exact dtype."""
    _power_castable(out, res, ins)
    _exact(out, res, ins)


@_autocast_entry
@tensor_input("matrix_power")
def matrix_power(input: Tensor, n: int, *, out=None) -> Tensor:
    """input**n by repeated squaring (n < 0: of the inverse)."""
    a = input._data
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):  # the parser's, first
        raise TypeError(
            f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}"
        )
    _check_square("linalg.matrix_power", a)
    if n == 0:
        r = _eye_like(input).expand(tuple(input.shape)).clone()
        if input.requires_grad:
            r = r + 0 * input
        return _out(out, r, "matmul", _power_castable)  # torch copies: any safe cast
    if n == 1:  # a new tensor, never the input itself (torch: a contiguous clone)
        return _out(out, input.clone(memory_format=contiguous_format), "matmul", _power_castable)
    if n < 0:
        input = inverse(input)
        n = -n
    r = None
    base = input
    while n:
        if n & 1:
            r = base if r is None else r @ base
        n >>= 1
        if n:
            base = base @ base
    return _out(out, r, "matmul", _power_out)


@_autocast_entry
def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H (v_i: column i of A below
    the diagonal, with a unit diagonal entry), as returned by geqrf."""
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if not tau.ndim:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if n < k:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.ndim} and input.ndim is equal to {A.ndim}"
        )
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
            f"{list(tau.shape[:-1])}"
        )
    if tau.dtype != A.dtype:
        raise RuntimeError(
            f"{name}: tau dtype {_sname(tau._data)} does not match input dtype {_sname(A._data)}"
        )
    if A._data.dtype.kind not in "fc" or A._data.dtype.itemsize == 2:  # torch's kernel: orgqr
        dev = "cuda" if A.is_cuda else "cpu"
        raise NotImplementedError(f"\"orgqr_{dev}\" not implemented for '{_sname(A._data)}'")
    names = A._names
    if names is not None or tau._names is not None:
        # the loop below mixes tau's dims with A's matrix dims positionally: it runs unnamed; Q
        # has A's shape (its rows and columns are A's), so it keeps A's names (the fallback)
        A, tau = A.rename(None), tau.rename(None)
    V = A.tril(-1) + _eye_rect(A, m, n)
    Q = _eye_rect(A, m, n).expand(tuple(A.shape))
    for i in range(k - 1, -1, -1):
        v = V[..., :, i : i + 1]
        Q = Q - tau[..., i : i + 1].unsqueeze(-1) * (v @ (_mh(v) @ Q))
    if names is not None:
        Q = Q.rename(*names)
    return _out(out, Q, "linalg_householder_product", castable_out(name))


orgqr = householder_product


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of the rank-q approximation of A - M (through the full SVD)."""
    if M is not None:
        A = A - M
    U, S, V = svd(A)
    q = min(q, S.shape[-1]) if q is not None else S.shape[-1]
    return U[..., :q], S[..., :q], V[..., :q]


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the principal components of A (rows are samples)."""
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    if center:
        A = A - A.mean(-2, keepdim=True)
    return svd_lowrank(A, q, niter)


@_autocast_entry
@tensor_input("qr")
def qr(input: Tensor, some: bool = True, *, out=None):
    """torch.qr (deprecated in torch): (Q, R), reduced when ``some``."""
    Q, R = _linalg_qr(input, "reduced" if some else "complete")
    return _out(out, return_types.qr(Q, R), "linalg_qr", _exact)


def _install() -> None:
    methods = {
        "logdet": logdet,
        "inverse": inverse,
        "pinverse": pinverse,
        "cholesky": cholesky,
        "cholesky_solve": cholesky_solve,
        "cholesky_inverse": cholesky_inverse,
        "triangular_solve": triangular_solve,
        "svd": svd,
        "qr": qr,
        "lu": lu,
        "lu_solve": lu_solve,
        "matrix_power": matrix_power,
    }
    for k, f in methods.items():
        if not hasattr(Tensor, k):
            setattr(Tensor, k, f)


_install()


# torch's det, slogdet, svdvals and matrix_exp record their linalg ops' nodes
backward_names(
    {
        "det": "LinalgDetBackward0",
        "slogdet": "LinalgSlogdetBackward0",
        "_linalg_svdvals": "LinalgSvdBackward0",
        "matrix_exp": "LinalgMatrixExpBackward0",
    }
)
