"""Parity regressions found by the seventy-second wave, a seeded fuzz of torch.linalg and the
matrix functions of torch.* (products, solvers, factorizations with reconstructions or invariants
compared where torch's results are not unique, norms, ranks, errors, float64 gradients of a
non-uniform weighted sum) over empty, 1x1, square, tall and wide batches of every float and
complex dtype, transposed operands and out= tensors. It found: an empty input of a dtype a LAPACK
kernel has no version for (half, bfloat16, integer) refused where torch's kernels return before
their dtype dispatch (cholesky, det, solve, svd, eigh, lu, lu_factor, lu_solve, ldl_factor,
matrix_exp), and ``lu(pivot=False)`` refused on empty input; error texts that named the wrong
function (``linalg.cholesky_ex``, ``cholesky``, ``torch.linalg.solve_ex``,
``torch.linalg.lu_factor_ex``); ``torch.lu`` refusing a singular matrix torch factors; logdet
checking the dtype before the shape; a complex slogdet (and logdet) whose gradient ignored the
sign's; ormqr with no reflectors crashing; lstsq's gelsy rank for a B without columns; the
mismatch text of a batched matrix times a matrix (torch folds it into mm); linalg.norm's
handling of ``dim`` of a length other than 1 or 2 and of a string ``ord`` with one dim;
linalg.solve checking shapes before dtypes; pinv's checks with a number ``atol`` (torch's own
overload: A.size(-2), then the dtype); matrix_rank's: only atol alone (or no tolerance) refuses
half and integer dtypes, the others reach the decomposition, and an empty input is rank 0 before
any check of the decomposition; torch.cross's error naming the normalized dim; and out= checks:
cond, tensorinv and householder_product refuse an unsafe cast in their own words, eigh checks
the eigenvectors' tensor first; cond's check of an invalid ``p`` (and its float ``p`` printed as
torch's std::to_string); and vecdot of two vectors of other lengths (torch's vdot error, where
ember broadcast a length-1 vector)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import assert_same, results_or_same_error, same_error, same_grads_or_error, upstream


def _pairs(fn):
    for want, got in results_or_same_error(fn):
        if not hasattr(want, "shape"):
            assert got == want
        elif want.numel() == 0:  # dtype and shape (torch's bfloat16 has no numpy array)
            assert (str(got.dtype)[6:], tuple(got.shape)) == (str(want.dtype)[6:], want.shape)
        elif want.dtype == torch.bfloat16:  # no numpy bfloat16 on torch's side
            assert got.dtype == ember.bfloat16
            assert_same(got.double(), want.double())
        else:
            assert_same(got, want)


# ---------------------------------------------------------------------- empty inputs
_EMPTY = {
    "cholesky": lambda T, x: T.linalg.cholesky(x),
    "cholesky_ex": lambda T, x: T.linalg.cholesky_ex(x),
    "det": lambda T, x: T.linalg.det(x),
    "solve": lambda T, x: T.linalg.solve(x, x),
    "svd": lambda T, x: T.linalg.svd(x),
    "svdvals": lambda T, x: T.linalg.svdvals(x),
    "eigh": lambda T, x: T.linalg.eigh(x),
    "eigvalsh": lambda T, x: T.linalg.eigvalsh(x),
    "lu": lambda T, x: T.linalg.lu(x),
    "lu_factor": lambda T, x: T.linalg.lu_factor(x),
    "lu_solve": lambda T, x: T.linalg.lu_solve(x, T.zeros(x.shape[:-1], dtype=T.int32), x),
    "ldl_factor": lambda T, x: T.linalg.ldl_factor(x),
    "matrix_exp": lambda T, x: T.linalg.matrix_exp(x),
    "qr": lambda T, x: T.linalg.qr(x),  # geqrf has no early return: still refused
    "inv": lambda T, x: T.linalg.inv(x),  # still refused
}


@pytest.mark.parametrize("shape", [(0, 2, 2), (2, 0, 0)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64"])
@pytest.mark.parametrize("name", list(_EMPTY))
def test_empty_input_skips_the_kernels_dtype_dispatch(name, dtype, shape):
    _pairs(lambda T: _EMPTY[name](T, T.zeros(shape, dtype=getattr(T, dtype))))


@pytest.mark.parametrize("shape", [(0, 1, 1), (2, 1, 0), (2, 0, 3), (2, 2)])
def test_lu_without_pivoting_of_an_empty_input(shape):
    _pairs(lambda T: T.linalg.lu(T.zeros(shape), pivot=False))
    _pairs(lambda T: T.linalg.lu_factor_ex(T.zeros(shape), pivot=False))


@pytest.mark.parametrize("shape", [(3, 0), (3, 2), (3,)])
@pytest.mark.parametrize("dtype", ["float16", "int64"])
def test_logdet_checks_the_shape_before_the_dtype(shape, dtype):
    same_error(lambda T: T.logdet(T.zeros(shape, dtype=getattr(T, dtype))), RuntimeError)


# ---------------------------------------------------------------------- error texts
def _not_pd(T):
    a = T.eye(3, dtype=T.float64).expand(2, 3, 3).clone()
    a[1, 1, 1] = -1.0  # batch element 1, leading minor of order 2
    return a


def _singular(T):
    return T.stack([T.eye(2, dtype=T.float64), T.zeros(2, 2, dtype=T.float64)])


@pytest.mark.parametrize(
    "fn",
    [
        lambda T: T.linalg.cholesky_ex(_not_pd(T), check_errors=True),
        lambda T: T.cholesky(_not_pd(T)),
        lambda T: T.cholesky(T.zeros(2, 3)),
        lambda T: T.linalg.solve_ex(_singular(T), T.ones(2, dtype=T.float64), check_errors=True),
        lambda T: T.linalg.lu_factor_ex(_singular(T), check_errors=True),
    ],
    ids=["cholesky_ex", "cholesky", "cholesky_shape", "solve_ex", "lu_factor_ex"],
)
def test_errors_name_the_function_called(fn):
    msg = same_error(fn)
    assert "Batch element 1" in msg or "2 by 3" in msg


def test_torch_lu_factors_a_singular_matrix():
    _pairs(lambda T: T.lu(_singular(T)))


@pytest.mark.parametrize(
    "shapes", [((2, 3, 1), (2, 1)), ((2, 1, 3, 4), (5, 6)), ((2, 3, 4), (2, 5, 6))]
)
def test_matmul_mismatch_of_a_batch_times_a_matrix(shapes):
    same_error(lambda T: T.ones(shapes[0]) @ T.ones(shapes[1]), RuntimeError)
    same_error(lambda T: T.ones(2, 4, 3).mT @ T.ones(5, 6), RuntimeError)  # not folded


@pytest.mark.parametrize(
    ("shape", "ord", "dim"),
    [((3,), "nuc", -1), ((3, 4), "fro", -1), ((3, 4), None, (0, 1, 1)), ((3, 4), "fro", ())],
)
def test_linalg_norm_dim_checks(shape, ord, dim):
    same_error(lambda T: T.linalg.norm(T.ones(shape), ord, dim=dim), RuntimeError)


@pytest.mark.parametrize("dtype", ["int64", "float16", "float32"])
@pytest.mark.parametrize(("a", "b"), [((3,), (3,)), ((2, 3), (3,)), ((2, 2), (3,))])
def test_solve_checks_dtypes_before_shapes(a, b, dtype):
    same_error(lambda T: T.linalg.solve(T.zeros(a, dtype=getattr(T, dtype)), T.zeros(b).double()))
    same_error(lambda T: T.linalg.solve(T.zeros(a).long(), T.zeros(b).long(), left=False))


@pytest.mark.parametrize("shape", [(2, 2), (3,), ()])
@pytest.mark.parametrize("dtype", ["float16", "int64", "float32"])
def test_pinv_with_a_number_atol_checks(shape, dtype):
    x = np.zeros(shape)
    if shape == (2, 2) and dtype == "float32":
        x = np.diag([2.0, 0.1])
    _pairs(lambda T: T.linalg.pinv(T.tensor(x).to(getattr(T, dtype)), atol=0.5))


@pytest.mark.parametrize(
    "kw",
    [{"tol": 1e-3}, {"rtol": 0.5}, {"rtol": 0.5, "hermitian": True}, {"atol": 0.1, "rtol": 0.5}],
)
@pytest.mark.parametrize(("shape", "dtype"), [((2, 2), "float16"), ((2, 2), "int64"),
                                              ((0, 2, 2), "int64"), ((2, 0), "float16")])  # fmt: skip
def test_matrix_rank_tolerance_overloads(kw, shape, dtype):
    _pairs(lambda T: T.linalg.matrix_rank(T.zeros(shape, dtype=getattr(T, dtype)), **kw))


@pytest.mark.parametrize(("shape", "dim"), [((3, 2), -1), ((2,), -1), ((3, 2), 1)])
def test_cross_names_the_dim_as_given(shape, dim):
    same_error(lambda T: T.cross(T.ones(shape), T.ones(shape), dim=dim), RuntimeError)


@pytest.mark.parametrize(
    "fn",
    [
        lambda T, o: T.linalg.cond(T.eye(2), out=o),
        lambda T, o: T.linalg.tensorinv(T.eye(2), ind=1, out=o),
        lambda T, o: T.linalg.householder_product(*T.geqrf(T.eye(2)), out=o),
    ],
    ids=["cond", "tensorinv", "householder_product"],
)
def test_out_of_an_unsafe_dtype_is_refused_in_the_ops_words(fn):
    same_error(lambda T: fn(T, T.empty(0, dtype=T.int64)), RuntimeError)
    _pairs(lambda T: fn(T, T.empty(0, dtype=T.float16)))


@pytest.mark.parametrize(("vals", "vecs"), [("int64", "int64"), ("float32", "int64")])
def test_eigh_checks_the_eigenvectors_out_first(vals, vecs):
    def fn(T):
        out = (T.empty(0, dtype=getattr(T, vals)), T.empty(0, dtype=getattr(T, vecs)))
        return T.linalg.eigh(T.eye(2, dtype=T.complex64), out=out)

    same_error(fn, RuntimeError)


@pytest.mark.parametrize("p", ["bad", 3, 2.5, 1.0, -1.0])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3), (0, 3, 3)])
def test_cond_checks_its_ord(p, shape):
    _pairs(lambda T: T.linalg.cond(T.ones(shape) + T.eye(shape[-1])[: shape[-2]], p))


@pytest.mark.parametrize(("a", "b"), [((3,), (4,)), ((3,), (1,)), ((2, 3), (2, 4))])
def test_vecdot_of_two_vectors_of_other_lengths(a, b):
    same_error(lambda T: T.linalg.vecdot(T.ones(a), T.ones(b)), RuntimeError)


# ---------------------------------------------------------------------- values and gradients
@pytest.mark.parametrize("left", [True, False])
def test_ormqr_without_reflectors_is_the_identity(left):
    c = np.arange(6.0).reshape(3, 2) if left else np.arange(6.0).reshape(2, 3)
    _pairs(lambda T: T.ormqr(T.zeros(3, 0), T.zeros(0), T.tensor(c, dtype=T.float32), left=left))


def test_lstsq_gelsy_rank_without_right_hand_sides():
    a = np.random.RandomState(0).rand(2, 3, 2)
    _pairs(lambda T: T.linalg.lstsq(T.tensor(a), T.zeros(2, 3, 0, dtype=T.float64)))


@pytest.mark.parametrize("n", [1, 3])
def test_complex_slogdet_and_logdet_gradients(n):
    rs = np.random.RandomState(n)
    a = rs.randn(2, n, n) + 1j * rs.randn(2, n, n)
    w = rs.randn(2) + 1j * rs.randn(2)

    def f(T):
        x = T.tensor(a, requires_grad=True)
        s, la = T.linalg.slogdet(x)
        loss = (s * T.tensor(w)).real.sum() + (la * upstream(T, la)).sum()
        loss = loss + (T.logdet(x) * T.tensor(w.conj())).real.sum()
        return T.autograd.grad(loss, x)

    same_grads_or_error(f)


# ---------------------------------------------------------------------- seeded mini-fuzz
def _mat(rs, shape, cplx, kind):
    a = rs.randn(*shape) + (1j * rs.randn(*shape) if cplx else 0)
    n = min(shape[-2:])
    if kind == "spd":
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])
    elif kind == "sing" and shape[-1]:
        a[..., :, rs.randint(shape[-1])] = 0  # an exact zero pivot in any LAPACK
    else:
        a[..., range(n), range(n)] += 3.0
    return a


_FUZZ = {  # name: (square?, matrix kind, function of (module, A, B), gradient?)
    "inv": (True, "wc", lambda T, a, b: T.linalg.inv(a), True),
    "inv_ex": (True, "sing", lambda T, a, b: T.linalg.inv_ex(a).info, False),
    "det": (True, "wc", lambda T, a, b: T.linalg.det(a), True),
    "slogdet": (True, "wc", lambda T, a, b: T.linalg.slogdet(a), True),
    "solve": (True, "wc", lambda T, a, b: T.linalg.solve(a, b), True),
    "solve_sing": (True, "sing", lambda T, a, b: T.linalg.solve(a, b), False),
    "cholesky": (True, "spd", lambda T, a, b: T.linalg.cholesky(a), True),
    "lu_factor": (True, "wc", lambda T, a, b: T.linalg.lu_factor(a), True),
    "lu_solve": (True, "wc", lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a), b), True),
    "svdvals": (False, "wc", lambda T, a, b: T.linalg.svdvals(a), True),
    "eigvalsh": (True, "spd", lambda T, a, b: T.linalg.eigvalsh(a), True),
    "matrix_norm": (False, "wc", lambda T, a, b: T.linalg.matrix_norm(a, "nuc"), True),
    "pinv": (False, "wc", lambda T, a, b: T.linalg.pinv(a), True),
    "matmul": (False, "wc", lambda T, a, b: a @ b.mT, True),
    "matrix_exp": (True, "wc", lambda T, a, b: T.linalg.matrix_exp(0.3 * a), True),
    "qr_r": (False, "wc", lambda T, a, b: T.linalg.qr(a, mode="r").R.abs(), False),
}


def _fuzz_case(seed):
    rs = np.random.RandomState(seed)
    name = sorted(_FUZZ)[rs.randint(len(_FUZZ))]
    square, kind, fn, grad = _FUZZ[name]
    batch = [(), (0,), (2,), (2, 3)][rs.randint(4)]
    m = rs.randint(4)
    n = m if square else rs.randint(4)
    dt = ["float32", "float64", "complex64", "complex128", "float16"][rs.randint(5)]
    cplx = dt.startswith("complex")
    a = _mat(rs, (*batch, m, n), cplx, kind)
    b = _mat(rs, (*batch, m, rs.randint(1, 3)) if name != "matmul" else (*batch, 2, n), cplx, "")
    transposed = rs.rand() < 0.3
    rg = grad and dt in ("float64", "complex128")

    def make(T, x):
        t = T.tensor(x.astype(dt) if cplx else x.real).to(getattr(T, dt))
        if transposed and t.ndim >= 2:
            t = t.mT.contiguous().mT  # the same values in a column-major layout
        return t.requires_grad_(rg)

    def f(T):
        ta, tb = make(T, a), make(T, b)
        out = fn(T, ta, tb)
        return (out if isinstance(out, tuple) else (out,)), (ta, tb)

    return f, rg, {"float16": 1e-2, "float32": 1e-3, "complex64": 1e-3}.get(dt, 1e-7)


def _check_fuzz_case(seed):
    f, rg, tol = _fuzz_case(seed)
    try:
        want = f(torch)[0]
    except RuntimeError:  # torch's LinAlgError is its own class: compared by name
        same_error(lambda T: f(T)[0])
        return
    for w, g in zip(want, f(ember)[0], strict=True):
        assert_same(g, w, atol=tol, rtol=tol, what=f"seed {seed}")
    if not rg:
        return

    def grads(T):
        outs, ins = f(T)
        loss = sum(
            (o.real if o.is_complex() else o).mul(upstream(T, o)).sum()
            for o in outs
            if o.dtype in (T.float64, T.complex128) and o.requires_grad
        )
        return T.autograd.grad(loss, ins, allow_unused=True)

    same_grads_or_error(grads)


@pytest.mark.parametrize("block", range(5))
def test_seeded_linalg_mini_fuzz(block):
    for seed in range(block * 30, block * 30 + 30):
        _check_fuzz_case(seed)
