"""ember.linalg (torch.linalg) and the torch-level decompositions: parity with torch (values up to
sign/phase conventions: reconstructions and invariants), gradients, float64 gradcheck, errors."""

import math

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, raises_like_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

# torch warns that its legacy aliases (torch.lu_solve, torch.triangular_solve...) are deprecated
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _eye(m, n, like):
    return m.eye(n, dtype=like.dtype)


def wc(m, x):
    """A well-conditioned square matrix (batch) built from x."""
    return x + 4 * _eye(m, x.shape[-1], x)


def spd(m, x):
    """A symmetric positive-definite matrix (batch) built from x."""
    return x @ x.mT + x.shape[-1] * _eye(m, x.shape[-1], x)


def sym(m, x):
    return x + x.mT


def _w(m, k, like):
    """Fixed distinct weights 1..k (as a tensor of like's dtype)."""
    return m.arange(1, k + 1, dtype=like.dtype)


def svd_inv(m, x, full=False):
    """Sign-invariant functions of the SVD: S and sum_i w_i u_i v_i^H."""
    U, S, Vh = m.linalg.svd(x, full_matrices=full)
    k = S.shape[-1]
    U, Vh = U[..., :, :k], Vh[..., :k, :]
    return S, (U * _w(m, k, x)) @ Vh


def eigh_inv(m, x, uplo="L", junk=False):
    a = spd(m, x)
    if junk:  # the other triangle is never read
        a = a + (x.triu(1) if uplo == "L" else x.tril(-1))
    L, Q = m.linalg.eigh(a, UPLO=uplo)
    return L, (Q * _w(m, Q.shape[-1], x)) @ Q.mT


def torch_svd_inv(m, x):
    U, S, V = m.svd(x)
    return S, (U * S) @ V.mT


def qr_inv(m, x, mode="reduced"):
    Q, R = m.linalg.qr(x, mode=mode)
    # Q R and Q diag(sign) ... : the sign convention is LAPACK's in both; still check products
    return Q @ R, Q.mT @ Q, R.abs()


CASES = [
    # determinants and inverses
    Case("det", lambda m, x: m.linalg.det(wc(m, x)), [A(3, 3)]),
    Case("det_batched", lambda m, x: m.linalg.det(wc(m, x)), [A(2, 3, 3)]),
    Case("torch_det", lambda m, x: m.det(wc(m, x)), [A(4, 4)]),
    Case("det_method", lambda m, x: wc(m, x).det(), [A(2, 2)]),
    Case("slogdet", lambda m, x: m.linalg.slogdet(x - 0.5 * _eye(m, 3, x)), [A(2, 3, 3)]),
    Case("torch_slogdet", lambda m, x: m.slogdet(wc(m, x)), [A(3, 3)]),
    Case("logdet", lambda m, x: m.logdet(spd(m, x)), [A(2, 3, 3)]),
    Case("inv", lambda m, x: m.linalg.inv(wc(m, x)), [A(3, 3)]),
    Case("inv_batched", lambda m, x: m.linalg.inv(wc(m, x)), [A(2, 4, 4)]),
    Case("inverse", lambda m, x: m.inverse(wc(m, x)), [A(3, 3)]),
    Case("inverse_method", lambda m, x: wc(m, x).inverse(), [A(3, 3)]),
    Case("inv_ex", lambda m, x: m.linalg.inv_ex(wc(m, x)), [A(2, 3, 3)]),
    Case("pinv_tall", lambda m, x: m.linalg.pinv(x), [A(5, 3)], atol=1e-4),
    Case("pinv_wide", lambda m, x: m.linalg.pinv(x), [A(2, 3, 4)], atol=1e-4),
    Case("pinv_hermitian", lambda m, x: m.linalg.pinv(spd(m, x), hermitian=True), [A(3, 3)]),
    Case("pinverse", lambda m, x: m.pinverse(x), [A(4, 3)], atol=1e-4),
    # solvers
    Case("solve", lambda m, a, b: m.linalg.solve(wc(m, a), b), [A(3, 3), A(3, 2)]),
    Case("solve_vec", lambda m, a, b: m.linalg.solve(wc(m, a), b), [A(3, 3), A(3)]),
    Case("solve_batch_vec", lambda m, a, b: m.linalg.solve(wc(m, a), b), [A(2, 3, 3), A(2, 3)]),
    Case("solve_bcast", lambda m, a, b: m.linalg.solve(wc(m, a), b), [A(2, 3, 3), A(3, 4)]),
    Case(
        "solve_right", lambda m, a, b: m.linalg.solve(wc(m, a), b, left=False), [A(3, 3), A(2, 3)]
    ),
    Case("solve_ex", lambda m, a, b: m.linalg.solve_ex(wc(m, a), b), [A(3, 3), A(3, 2)]),
    Case(
        "solve_triangular_upper",
        lambda m, a, b: m.linalg.solve_triangular(wc(m, a), b, upper=True),
        [A(3, 3), A(3, 2)],
    ),
    Case(
        "solve_triangular_lower_right_unit",
        lambda m, a, b: m.linalg.solve_triangular(
            wc(m, a), b, upper=False, left=False, unitriangular=True
        ),
        [A(2, 3, 3), A(2, 4, 3)],
    ),
    Case(
        "triangular_solve",
        lambda m, b, a: m.triangular_solve(b, wc(m, a), upper=False, transpose=True),
        [A(3, 2), A(3, 3)],
    ),
    Case(
        "cholesky_solve",
        lambda m, b, x: m.cholesky_solve(b, m.linalg.cholesky(spd(m, x))),
        [A(3, 2), A(3, 3)],
    ),
    Case(
        "cholesky_solve_upper",
        lambda m, b, x: m.cholesky_solve(b, m.linalg.cholesky(spd(m, x), upper=True), upper=True),
        [A(2, 3, 2), A(3, 3)],
    ),
    Case(
        "cholesky_inverse", lambda m, x: m.cholesky_inverse(m.linalg.cholesky(spd(m, x))), [A(3, 3)]
    ),
    Case(
        "lstsq_tall",
        lambda m, a, b: m.linalg.lstsq(a, b).solution,
        [A(5, 3), A(5, 2)],
        atol=1e-4,
    ),
    Case(
        "lstsq_gelsd",
        lambda m, a, b: m.linalg.lstsq(a, b, driver="gelsd"),
        [A(2, 5, 3), A(2, 5, 2)],
        atol=1e-4,
        grad=False,
    ),
    # decompositions
    Case("cholesky", lambda m, x: m.linalg.cholesky(spd(m, x)), [A(3, 3)]),
    Case(
        "cholesky_batched_upper",
        lambda m, x: m.linalg.cholesky(spd(m, x), upper=True),
        [A(2, 4, 4)],
    ),
    Case("cholesky_lower_read", lambda m, x: m.linalg.cholesky(spd(m, x) + x.triu(1)), [A(3, 3)]),
    Case("cholesky_ex", lambda m, x: m.linalg.cholesky_ex(spd(m, x)), [A(3, 3)]),
    Case("torch_cholesky", lambda m, x: m.cholesky(spd(m, x)), [A(3, 3)]),
    Case("eigh", lambda m, x: eigh_inv(m, x), [A(3, 3)], atol=1e-4),
    Case("eigh_upper_batched", lambda m, x: eigh_inv(m, x, "U"), [A(2, 4, 4)], atol=1e-4),
    Case("eigh_lower_read", lambda m, x: eigh_inv(m, x, "L", True), [A(3, 3)], atol=1e-4),
    Case("eigh_upper_read", lambda m, x: eigh_inv(m, x, "U", True), [A(3, 3)], atol=1e-4),
    Case("eigvalsh", lambda m, x: m.linalg.eigvalsh(sym(m, x)), [A(2, 3, 3)]),
    Case("svd_tall", lambda m, x: svd_inv(m, x), [A(5, 3)], atol=1e-4),
    Case("svd_wide_batched", lambda m, x: svd_inv(m, x), [A(2, 3, 4)], atol=1e-4),
    Case("svd_full", lambda m, x: svd_inv(m, x, True), [A(4, 3)], atol=1e-4),
    Case("svdvals", lambda m, x: m.linalg.svdvals(x), [A(2, 4, 3)]),
    Case(
        "torch_svd",
        lambda m, x: torch_svd_inv(m, x),
        [A(4, 3)],
        atol=1e-4,
    ),
    Case("qr_tall", lambda m, x: qr_inv(m, x), [A(5, 3)], atol=1e-4),
    Case("qr_square_batched", lambda m, x: qr_inv(m, x), [A(2, 3, 3)], atol=1e-4),
    Case("qr_wide", lambda m, x: qr_inv(m, x), [A(3, 5)], atol=1e-4),
    Case("qr_complete_wide", lambda m, x: qr_inv(m, x, "complete"), [A(2, 4)], atol=1e-4),
    Case("qr_values", lambda m, x: m.linalg.qr(x), [A(4, 3)], atol=1e-4),
    Case("torch_qr", lambda m, x: m.qr(x), [A(4, 3)], atol=1e-4),
    Case("torch_svd_no_uv", lambda m, x: m.svd(x, compute_uv=False), [A(4, 3)], grad=False),
    Case(
        "eigvals",
        lambda m, x: m.linalg.eigvals(sym(m, x)).real.sort().values,
        [A(3, 3)],
        atol=1e-4,
        grad=False,
    ),
    Case("matrix_exp", lambda m, x: m.linalg.matrix_exp(x), [A(3, 3)]),
    Case("matrix_exp_batched", lambda m, x: m.matrix_exp(x), [A(2, 4, 4)]),
    Case("lu_factor", lambda m, x: m.linalg.lu_factor(x), [A(2, 3, 3)]),
    Case("lu", lambda m, x: m.linalg.lu(x), [A(2, 3, 3)]),
    Case("lu_LU", lambda m, x: m.linalg.lu(x)[1:], [A(3, 3)]),
    Case("lu_factor_LU", lambda m, x: m.linalg.lu_factor(x)[0], [A(4, 4)]),
    Case("lu_factor_tall", lambda m, x: m.linalg.lu_factor(x)[0], [A(2, 5, 3)]),
    Case("lu_factor_wide", lambda m, x: m.linalg.lu_factor(x)[0], [A(3, 5)]),
    Case("lu_tall", lambda m, x: m.linalg.lu(x), [A(5, 3)]),
    Case("lu_wide", lambda m, x: m.linalg.lu(x), [A(3, 5)]),
    Case(
        "lu_solve",
        lambda m, x, b: m.linalg.lu_solve(*m.linalg.lu_factor(wc(m, x)), b),
        [A(3, 3), A(3, 2)],
    ),
    Case(
        "lu_solve_adjoint_right",
        lambda m, x, b: m.linalg.lu_solve(
            *m.linalg.lu_factor(wc(m, x)), b, left=False, adjoint=True
        ),
        [A(3, 3), A(2, 3)],
    ),
    Case("lu_unpack", lambda m, x: m.lu_unpack(*m.linalg.lu_factor(x)), [A(2, 3, 3)]),
    Case(
        "torch_lu_solve",
        lambda m, x, b: m.lu_solve(b, *m.linalg.lu_factor(wc(m, x))),
        [A(3, 3), A(3, 1)],
    ),
    # powers, norms, products
    Case("matrix_power_3", lambda m, x: m.linalg.matrix_power(x, 3), [A(2, 3, 3)]),
    Case("matrix_power_0", lambda m, x: m.linalg.matrix_power(x, 0), [A(3, 3)]),
    Case("matrix_power_neg", lambda m, x: m.linalg.matrix_power(wc(m, x), -2), [A(3, 3)]),
    Case("matrix_power_method", lambda m, x: x.matrix_power(5), [A(2, 2)]),
    Case("vector_norm", lambda m, x: m.linalg.vector_norm(x), [A(3, 4)]),
    Case("vector_norm_p3", lambda m, x: m.linalg.vector_norm(x, 3, dim=1), [A(3, 4)]),
    Case("vector_norm_inf", lambda m, x: m.linalg.vector_norm(x, math.inf, (0, 1)), [A(3, 4)]),
    Case("vector_norm_0", lambda m, x: m.linalg.vector_norm(x, 0, -1), [A(3, 4)]),
    Case("vector_norm_1_keep", lambda m, x: m.linalg.vector_norm(x, 1, 0, True), [A(3, 4)]),
]
for _o in ["fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2]:
    CASES.append(
        Case(
            f"matrix_norm_{_o}",
            lambda m, x, o=_o: m.linalg.matrix_norm(x, o),
            [A(2, 3, 4)],
            atol=1e-4,
        )
    )
CASES += [
    Case(
        "matrix_norm_dims_keep", lambda m, x: m.linalg.matrix_norm(x, 1, (0, 2), True), [A(3, 2, 4)]
    ),
    Case(
        "matrix_norm_nuc_dims",
        lambda m, x: m.linalg.matrix_norm(x, "nuc", (2, 0)),
        [A(3, 2, 4)],
        atol=1e-4,
    ),
    Case("norm_default", lambda m, x: m.linalg.norm(x), [A(2, 3, 4)]),
    Case("norm_matrix_ord", lambda m, x: m.linalg.norm(x, 2), [A(3, 4)], atol=1e-4),
    Case("norm_vector_ord", lambda m, x: m.linalg.norm(x, -1), [A(4)]),
    Case("norm_dim", lambda m, x: m.linalg.norm(x, dim=(1, 2)), [A(2, 3, 4)]),
    Case("norm_dim_int", lambda m, x: m.linalg.norm(x, 3, dim=1), [A(2, 3, 4)]),
    Case("cond", lambda m, x: m.linalg.cond(wc(m, x)), [A(3, 3)], atol=1e-4),
    Case("cond_fro", lambda m, x: m.linalg.cond(wc(m, x), "fro"), [A(3, 3)], atol=1e-4, grad=False),
    Case("cross", lambda m, a, b: m.linalg.cross(a, b), [A(4, 3), A(4, 3)]),
    Case("cross_dim_bcast", lambda m, a, b: m.linalg.cross(a, b, dim=0), [A(3, 2), A(3, 1)]),
    Case("vecdot", lambda m, a, b: m.linalg.vecdot(a, b), [A(2, 4), A(4)]),
    Case("vecdot_dim", lambda m, a, b: m.linalg.vecdot(a, b, dim=0), [A(3, 2), A(3, 2)]),
    Case("multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [A(3), A(3, 4), A(4, 2)]),
    Case("multi_dot_vec_end", lambda m, a, b: m.linalg.multi_dot([a, b]), [A(2, 3), A(3)]),
    Case("diagonal", lambda m, x: m.linalg.diagonal(x, offset=1), [A(2, 3, 4)]),
    Case("vander", lambda m, x: m.linalg.vander(x), [A(2, 4)]),
    Case("vander_N", lambda m, x: m.linalg.vander(x, N=2), [A(3)]),
    Case("matmul", lambda m, a, b: m.linalg.matmul(a, b), [A(2, 3), A(3, 2)]),
    Case(
        "householder_product",
        lambda m, a, t: m.linalg.householder_product(a, t),
        [A(2, 5, 3), A(2, 2, low=0.2, high=1.5)],
    ),
    Case("orgqr", lambda m, a, t: m.orgqr(a, t), [A(4, 4), A(4, low=0.2, high=1.5)]),
    Case(
        "tensorinv",
        lambda m, x: m.linalg.tensorinv(wc(m, x).reshape(2, 3, 6), ind=2),
        [A(6, 6)],
    ),
    Case(
        "tensorsolve",
        lambda m, x, b: m.linalg.tensorsolve(wc(m, x).reshape(2, 3, 6), b),
        [A(6, 6), A(2, 3)],
    ),
    Case("matrix_rank", lambda m, x: m.linalg.matrix_rank(x @ x.mT), [A(2, 4, 2)], grad=False),
    Case(
        "matrix_rank_tol",
        lambda m, x: m.linalg.matrix_rank(x, atol=1.0, rtol=0.0),
        [A(4, 4)],
        grad=False,
    ),
    Case(
        "matrix_rank_herm",
        lambda m, x: m.linalg.matrix_rank(sym(m, x), hermitian=True),
        [A(4, 4)],
        grad=False,
    ),
]

# torch itself cannot differentiate these (or gives sign-dependent results): parity only
_NO_GRADCHECK = {
    "lstsq_gelsd",
    "eigvals",
    "matrix_rank",
    "matrix_rank_tol",
    "matrix_rank_herm",
    "lu_factor",
    "lu_unpack",
    "vector_norm_0",
    "matrix_norm_inf",
    "matrix_norm_-inf",
    "matrix_norm_1",
    "matrix_norm_-1",
    "matrix_norm_dims_keep",
    "vector_norm_inf",
    # torch's gradient is the symmetric one, not the one-triangle finite difference
    "cholesky_lower_read",
    "eigh_lower_read",
    "eigh_upper_read",
}
# the derivative is itself differentiable and cheap enough to check twice
_GRADGRAD = {
    "det",
    "inv",
    "solve",
    "cholesky",
    "matrix_exp",
    "eigh",
    "svd_tall",
    "qr_tall",
    "solve_triangular_upper",
    "slogdet",
    "matrix_power_neg",
    "pinv_tall",
    "lu_LU",
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in _NO_GRADCHECK], ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=case.name in _GRADGRAD)


# ---------------------------------------------------------------------- complex
def _c(shape, seed=0):
    r = np.random.default_rng(seed)
    return (r.uniform(-1, 1, shape) + 1j * r.uniform(-1, 1, shape)).astype(np.complex128)


def _both(a):
    return ember.tensor(a), torch.tensor(a)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_complex_values():
    a = _c((2, 3, 3)) + 4 * np.eye(3)
    e, t = _both(a)
    for f in (
        lambda m, x: m.linalg.det(x),
        lambda m, x: m.linalg.inv(x),
        lambda m, x: m.linalg.slogdet(x)[1],
        lambda m, x: m.linalg.slogdet(x)[0],
        lambda m, x: m.linalg.svdvals(x),
        lambda m, x: m.linalg.eigvalsh(x @ x.mH),
        lambda m, x: m.linalg.cholesky(x @ x.mH),
        lambda m, x: m.linalg.matrix_exp(x),
        lambda m, x: m.linalg.solve(x, x[..., 0]),
    ):
        np.testing.assert_allclose(f(ember, e).numpy(), f(torch, t).numpy(), atol=1e-8)


def csvd_inv(m, x):
    U, S, Vh = m.linalg.svd(x, full_matrices=False)
    return (U * m.arange(1, 4, dtype=m.float64).to(x.dtype)) @ Vh + S.unsqueeze(-1)


def ceigh_inv(m, x):
    L, Q = m.linalg.eigh(x @ x.mH)
    return (Q * m.arange(1, 4, dtype=m.float64).to(x.dtype)) @ Q.mH + L.unsqueeze(-1)


def qr_c(m, x):
    Q, R = m.linalg.qr(x)
    return Q @ R.mH


COMPLEX_GRADS = [
    ("inv", lambda m, x: m.linalg.inv(x)),
    ("det", lambda m, x: m.linalg.det(x)),
    ("slogdet", lambda m, x: m.linalg.slogdet(x).logabsdet),
    ("solve", lambda m, x: m.linalg.solve(x, x[..., :2].exp())),
    ("cholesky", lambda m, x: m.linalg.cholesky(x @ x.mH)),
    ("eigvalsh", lambda m, x: m.linalg.eigvalsh(x @ x.mH)),
    ("svdvals", lambda m, x: m.linalg.svdvals(x)),
    ("matrix_exp", lambda m, x: m.linalg.matrix_exp(x)),
    ("solve_triangular", lambda m, x: m.linalg.solve_triangular(x, x.mH, upper=True)),
    ("qr_R", lambda m, x: m.linalg.qr(x).R.diagonal(0, -2, -1).abs()),
    ("svd", lambda m, x: csvd_inv(m, x)),
    ("eigh", lambda m, x: ceigh_inv(m, x)),
    ("qr", qr_c),
]


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("row", COMPLEX_GRADS, ids=[r[0] for r in COMPLEX_GRADS])
def test_complex_grads(row):
    _, f = row
    a = _c((2, 3, 3)) + 3 * np.eye(3)
    w = _c((2, 3, 3), 5)
    grads = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        y = f(m, x)
        wy = m.tensor(w[..., : y.shape[-1]] if y.ndim == 3 else w[..., 0, : y.shape[-1]])
        wy = wy[..., 0] if y.ndim == 1 else wy
        loss = (y * wy.to(y.dtype)).real.sum() if y.is_complex() else (y * wy.real).sum()
        loss.backward()
        grads.append(np.asarray(x.grad.numpy() if m is ember else x.grad.detach().numpy()))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-8)


def test_eig_reconstruction_and_grad():
    x = np.random.default_rng(3).uniform(-1, 1, (2, 4, 4))
    e = ember.tensor(x)
    L, V = ember.linalg.eig(e)
    assert L.dtype == ember.complex128 and V.dtype == ember.complex128
    rec = V @ ember.diag_embed(L) @ ember.linalg.inv(V)
    np.testing.assert_allclose(rec.real.numpy(), x, atol=1e-10)
    if torch is not None:
        tl = torch.linalg.eigvals(torch.tensor(x)).numpy()
        np.testing.assert_allclose(np.sort_complex(L.numpy()), np.sort_complex(tl), atol=1e-10)
    assert ember.linalg.eigvals(ember.tensor(x.astype(np.float32))).dtype == ember.complex64
    # the eigenvalue gradient of a real matrix is real; check it against finite differences
    xs = ember.tensor(x[0], requires_grad=True)
    w = ember.tensor(np.arange(1.0, 5.0))

    def f(a):
        lam = ember.linalg.eigvals(a)
        return (lam.real.sort().values * w).sum() + (lam.imag.abs().sort().values * w).sum()

    assert ember.autograd.gradcheck(f, [xs])
    if torch is not None:
        tx = torch.tensor(x[0], requires_grad=True)
        lam = torch.linalg.eigvals(tx)
        tw = torch.tensor(np.arange(1.0, 5.0))
        ((lam.real.sort().values * tw).sum() + (lam.imag.abs().sort().values * tw).sum()).backward()
        f(xs).backward()
        np.testing.assert_allclose(xs.grad.numpy(), tx.grad.numpy(), atol=1e-8)


# ---------------------------------------------------------------------- return types, misc
def test_named_tuples():
    x = ember.tensor(np.random.default_rng(0).uniform(-1, 1, (3, 3)) + 3 * np.eye(3))
    s = ember.linalg.slogdet(x)
    assert s.sign is s[0] and s.logabsdet is s[1]
    assert type(s).__name__ == "linalg_slogdet"
    assert ember.linalg.svd(x).Vh.shape == (3, 3)
    assert ember.svd(x).V.shape == (3, 3)
    assert ember.linalg.eigh(x).eigenvalues.shape == (3,)
    assert ember.linalg.qr(x).R.shape == (3, 3)
    assert ember.linalg.inv_ex(x).info.dtype == ember.int32
    assert ember.linalg.cholesky_ex(x @ x.mT).info.item() == 0
    r = ember.linalg.lstsq(x, x[:, :1])
    assert r.solution.shape == (3, 1) and r.rank.dtype == ember.int64
    assert ember.linalg.lu_factor(x).pivots.dtype == ember.int32
    assert ember.linalg.qr(x, mode="r").Q.shape == (0,)
    P, L, U = ember.linalg.lu(x)
    np.testing.assert_allclose((P @ L @ U).numpy(), x.numpy(), atol=1e-12)
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


def test_module_import():
    import ember.linalg as L
    from ember.linalg import norm

    assert L is ember.linalg and norm is ember.linalg.norm
    assert ember.linalg.matrix_exp is ember.matrix_exp and ember.Tensor.det is ember.det


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_ex_infos_and_lstsq_drivers():
    sing = np.stack([np.eye(3), np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])])
    for name in ("inv_ex", "cholesky_ex", "lu_factor_ex"):
        ei = getattr(ember.linalg, name)(ember.tensor(sing)).info
        ti = getattr(torch.linalg, name)(torch.tensor(sing)).info
        np.testing.assert_array_equal(ei.numpy(), ti.numpy(), err_msg=name)
    b = np.ones((2, 3, 1))
    ei = ember.linalg.solve_ex(ember.tensor(sing), ember.tensor(b)).info
    ti = torch.linalg.solve_ex(torch.tensor(sing), torch.tensor(b)).info
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    a = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    bb = np.random.default_rng(1).uniform(-1, 1, (5, 2))
    for drv in ("gels", "gelsy", "gelsd", "gelss"):
        er = ember.linalg.lstsq(ember.tensor(a), ember.tensor(bb), driver=drv)
        tr = torch.linalg.lstsq(torch.tensor(a), torch.tensor(bb), driver=drv)
        for k in range(4):
            assert tuple(er[k].shape) == tuple(tr[k].shape), (drv, k)
            np.testing.assert_allclose(er[k].numpy(), tr[k].numpy(), atol=1e-10, err_msg=drv)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_lowrank():
    x = np.random.default_rng(0).uniform(-1, 1, (6, 4))
    for name, kw in (("svd_lowrank", {"q": 4}), ("pca_lowrank", {"q": 4, "center": False})):
        U, S, V = getattr(ember, name)(ember.tensor(x), **kw)
        _tU, tS, _tV = getattr(torch, name)(torch.tensor(x), **kw)
        np.testing.assert_allclose(S.numpy(), tS.numpy(), atol=1e-8)
        np.testing.assert_allclose(((U * S) @ V.mT).numpy(), x, atol=1e-10)
    # centered, full q: exact in torch too; a smaller q keeps the leading components
    S = ember.pca_lowrank(ember.tensor(x), q=4)[1]
    ts = torch.pca_lowrank(torch.tensor(x), q=4)[1]
    np.testing.assert_allclose(S.numpy(), ts.numpy(), atol=1e-8)
    np.testing.assert_allclose(ember.pca_lowrank(ember.tensor(x), q=2)[1].numpy(), S[:2].numpy())


def test_names_batch_dims_kept():
    x = ember.randn(2, 3, 3, names=("B", "R", "C"))
    x = x + 0  # a named non-leaf
    assert ember.linalg.inv(x + 3 * ember.eye(3)).names == ("B", None, None)
    assert ember.linalg.det(x).names == ("B",)
    L, Q = ember.linalg.eigh(x)
    assert L.names == ("B", None) and Q.names == ("B", None, None)
    assert ember.linalg.svdvals(x).names == ("B", None)


def test_double_backward_hvp():
    x = ember.tensor(
        np.random.default_rng(0).uniform(-1, 1, (3, 3)) + 3 * np.eye(3), requires_grad=True
    )
    (g,) = ember.autograd.grad(ember.linalg.det(x), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    if torch is not None:
        tx = torch.tensor(x.detach().numpy(), requires_grad=True)
        (tg,) = torch.autograd.grad(torch.linalg.det(tx), tx, create_graph=True)
        (th,) = torch.autograd.grad(tg.sum(), tx)
        np.testing.assert_allclose(h.numpy(), th.numpy(), atol=1e-10)


# ---------------------------------------------------------------------- errors
_SING = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]


def _t(m, v, dtype=None):
    return m.tensor(v, dtype=dtype if dtype is None else getattr(m, dtype))


ERRORS = [
    (
        "inv_singular",
        lambda m: m.linalg.inv(m.tensor([[1.0, 0.0, 0], [2, 0, 0], [0, 0, 1]])),
        RuntimeError,
        (
            "linalg.inv: The diagonal element 2 is zero, the inversion could not be "
            "completed because the input matrix is singular."
        ),
    ),
    (
        "inv_batch_singular",
        lambda m: m.linalg.inv(m.stack([m.eye(3), m.zeros(3, 3)])),
        RuntimeError,
        "linalg.inv: (Batch element 1): The diagonal element 1 is zero",
    ),
    (
        "inv_not_square",
        lambda m: m.linalg.inv(m.zeros(2, 3)),
        RuntimeError,
        "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    (
        "inv_int",
        lambda m: m.linalg.inv(m.zeros(3, 3, dtype=m.int64)),
        RuntimeError,
        "linalg.inv: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        "inv_half",
        lambda m: m.linalg.inv(m.eye(2, dtype=m.float16)),
        RuntimeError,
        "linalg.inv: Low precision dtypes not supported. Got Half",
    ),
    (
        "cholesky_not_pd",
        lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]])),
        RuntimeError,
        (
            "linalg.cholesky: The factorization could not be completed because the input "
            "is not positive-definite (the leading minor of order 2 is not positive-definite)."
        ),
    ),
    (
        "cholesky_batch",
        lambda m: m.linalg.cholesky(m.stack([m.eye(3), -m.eye(3)])),
        RuntimeError,
        (
            "linalg.cholesky: (Batch element 1): The factorization could not be "
            "completed because the input is not positive-definite (the leading minor of order 1"
        ),
    ),
    (
        "cholesky_1d",
        lambda m: m.linalg.cholesky(m.zeros(3)),
        RuntimeError,
        "linalg.cholesky: The input tensor A must have at least 2 dimensions.",
    ),
    (
        "det_1d",
        lambda m: m.linalg.det(m.zeros(3)),
        RuntimeError,
        "linalg.det: The input tensor A must have at least 2 dimensions.",
    ),
    (
        "det_not_square",
        lambda m: m.linalg.det(m.zeros(2, 3)),
        RuntimeError,
        "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    (
        "solve_singular",
        lambda m: m.linalg.solve(m.tensor(_SING), m.ones(3)),
        RuntimeError,
        "torch.linalg.solve: The solver failed because the input matrix is singular.",
    ),
    (
        "solve_batch_singular",
        lambda m: m.linalg.solve(m.stack([m.eye(3), m.zeros(3, 3)]), m.zeros(3)),
        RuntimeError,
        (
            "torch.linalg.solve: (Batch element 1): The solver failed because the input matrix is "
            "singular."
        ),
    ),
    (
        "solve_shapes",
        lambda m: m.linalg.solve(m.eye(3), m.zeros(4)),
        RuntimeError,
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)",
    ),
    (
        "solve_shapes_right",
        lambda m: m.linalg.solve(m.eye(3), m.zeros(4), left=False),
        RuntimeError,
        "linalg.solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 4x1)",
    ),
    (
        "solve_dtypes",
        lambda m: m.linalg.solve(m.eye(3), m.zeros(3, dtype=m.float64)),
        RuntimeError,
        (
            "linalg.solve: Expected A and B to have the same dtype, but found A of type "
            "Float and B of type Double instead"
        ),
    ),
    (
        "eigh_uplo",
        lambda m: m.linalg.eigh(m.eye(3), UPLO="X"),
        RuntimeError,
        "Expected UPLO argument to be 'L' or 'U', but got X",
    ),
    (
        "eigh_not_square",
        lambda m: m.linalg.eigh(m.zeros(3, 2)),
        RuntimeError,
        "linalg.eigh: A must be batches of square matrices, but they are 3 by 2 matrices",
    ),
    (
        "svd_int",
        lambda m: m.linalg.svd(m.zeros(3, 2, dtype=m.int64)),
        RuntimeError,
        "linalg.svd: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        "qr_mode",
        lambda m: m.linalg.qr(m.eye(3), mode="x"),
        RuntimeError,
        (
            "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or "
            "'complete'"
        ),
    ),
    (
        "matrix_norm_ord",
        lambda m: m.linalg.matrix_norm(m.eye(3), ord=3),
        RuntimeError,
        "linalg.matrix_norm: Order 3 not supported.",
    ),
    (
        "vector_norm_str",
        lambda m: m.linalg.vector_norm(m.ones(3), "fro"),
        TypeError,
        "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str",
    ),
    (
        "householder_wide",
        lambda m: m.linalg.householder_product(m.zeros(3, 4), m.zeros(2)),
        RuntimeError,
        (
            "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
            "input.shape[-1]"
        ),
    ),
    (
        "householder_tau",
        lambda m: m.linalg.householder_product(m.zeros(4, 3), m.zeros(4)),
        RuntimeError,
        (
            "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
            "tau.shape[-1]"
        ),
    ),
    (
        "lu_factor_singular",
        lambda m: m.linalg.lu_factor(m.tensor(_SING)),
        RuntimeError,
        (
            "torch.linalg.lu_factor: U[3,3] is zero and using it on lu_solve would result in a "
            "division by zero."
        ),
    ),
    (
        "multi_dot_shapes",
        lambda m: m.linalg.multi_dot([m.zeros(4, 3), m.zeros(4, 3)]),
        RuntimeError,
        "multi_dot(): tensors 0 and 1 with shapes [4, 3] and [4, 3] cannot be multiplied",
    ),
    (
        "cross_ndim",
        lambda m: m.linalg.cross(m.zeros(2, 1, 3), m.zeros(4, 3)),
        RuntimeError,
        "linalg.cross: inputs must have the same number of dimensions.",
    ),
    (
        "vector_norm_int",
        lambda m: m.linalg.vector_norm(m.zeros(3, dtype=m.int64)),
        RuntimeError,
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        "norm_3d_ord",
        lambda m: m.linalg.norm(m.zeros(2, 2, 2), 2),
        RuntimeError,
        "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.",
    ),
    (
        "cross_len",
        lambda m: m.linalg.cross(m.zeros(2), m.zeros(2)),
        RuntimeError,
        "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2",
    ),
    (
        "multi_dot_one",
        lambda m: m.linalg.multi_dot([m.zeros(2)]),
        RuntimeError,
        "multi_dot(): expected at least 2 tensors but got 1",
    ),
    (
        "matrix_power_not_square",
        lambda m: m.linalg.matrix_power(m.zeros(2, 3), 2),
        RuntimeError,
        "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    (
        "qr_r_backward",
        lambda m: m.linalg.qr(m.eye(3, requires_grad=True), mode="r").R.sum().backward(),
        RuntimeError,
        ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'."),
    ),
]


@pytest.mark.parametrize("row", ERRORS, ids=[r[0] for r in ERRORS])
def test_errors(row):
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_det_grad_singular():
    # exactly singular (every LU leaves an exact zero pivot: torch's gradient is 0 there), next
    # to nearly singular and regular matrices (the cofactors). A matrix whose computed det is 0
    # or 1e-16 depending on the LAPACK build's rounding is avoided: the two libraries differ.
    exact = np.array([[[1.0, 1, 0], [1, 1, 0], [0, 0, 2]], [[1.0, 2, 3], [2, 4, 6], [3, 6, 9]]])
    near = np.array(
        [[[1.0, 2, 3], [2, 4, 6 + 1e-9], [1, 0, 1]], [[2.0, 1, 0], [1, 3, 0], [0, 1, 5]]]
    )
    for s in (exact, near):
        up = np.array([0.5, -1.5])
        x, tx = ember.tensor(s, requires_grad=True), torch.tensor(s, requires_grad=True)
        (ember.linalg.det(x) * ember.tensor(up)).sum().backward()
        (torch.linalg.det(tx) * torch.tensor(up)).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-12)


def test_linalg_error_type():
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.cholesky(-ember.eye(2))


# more bad inputs: ember must raise torch's exception type with torch's exact message
SAME_ERROR = {
    "st_1d": lambda m: m.linalg.solve_triangular(m.zeros(3), m.zeros(3, 1), upper=True),
    "st_B1d": lambda m: m.linalg.solve_triangular(m.eye(3), m.zeros(3), upper=True),
    "st_notsq": lambda m: m.linalg.solve_triangular(m.zeros(3, 2), m.zeros(3, 1), upper=True),
    "st_incompat": lambda m: m.linalg.solve_triangular(m.eye(3), m.zeros(2, 1), upper=True),
    "st_incompat_right": lambda m: m.linalg.solve_triangular(
        m.eye(3), m.zeros(2, 2), upper=True, left=False
    ),
    "lstsq_driver": lambda m: m.linalg.lstsq(m.eye(3), m.zeros(3, 1), driver="foo"),
    "lstsq_shape": lambda m: m.linalg.lstsq(m.eye(3), m.zeros(2, 1)),
    "lstsq_shape_vec": lambda m: m.linalg.lstsq(m.eye(3), m.zeros(2)),
    "lstsq_dim": lambda m: m.linalg.lstsq(m.eye(3), m.zeros(2, 3, 1)),
    "lstsq_dtype": lambda m: m.linalg.lstsq(m.eye(3), m.zeros(3, 1, dtype=m.float64)),
    "tensorinv_ind": lambda m: m.linalg.tensorinv(m.eye(4).reshape(2, 2, 4), ind=0),
    "tensorinv_shape": lambda m: m.linalg.tensorinv(m.zeros(2, 3, 4), ind=1),
    "tensorsolve_shape": lambda m: m.linalg.tensorsolve(m.zeros(2, 3, 4), m.zeros(2, 3)),
    "matrix_power_float": lambda m: m.linalg.matrix_power(m.eye(3), 2.0),
    "matrix_norm_1d": lambda m: m.linalg.matrix_norm(m.zeros(3)),
    "matrix_norm_dims": lambda m: m.linalg.matrix_norm(m.zeros(3, 3), dim=(0, 0)),
    "matrix_norm_int": lambda m: m.linalg.matrix_norm(m.zeros(3, 3, dtype=m.int64)),
    "norm_str_1d": lambda m: m.linalg.norm(m.zeros(3), "fro"),
    "svd_1d": lambda m: m.linalg.svd(m.zeros(3)),
    "qr_1d": lambda m: m.linalg.qr(m.zeros(3)),
    "eig_1d": lambda m: m.linalg.eig(m.zeros(3)),
    "eig_not_square": lambda m: m.linalg.eig(m.zeros(3, 2)),
    "lu_factor_1d": lambda m: m.linalg.lu_factor(m.zeros(3)),
    "lu_factor_int": lambda m: m.linalg.lu_factor(m.zeros(3, 3, dtype=m.int64)),
    "lu_1d": lambda m: m.linalg.lu(m.zeros(3)),
    "pinv_int": lambda m: m.linalg.pinv(m.zeros(3, 3, dtype=m.int64)),
    "pinv_1d": lambda m: m.linalg.pinv(m.zeros(3)),
    "matrix_rank_int": lambda m: m.linalg.matrix_rank(m.zeros(3, 3, dtype=m.int64)),
    "multi_dot_3d": lambda m: m.linalg.multi_dot([m.zeros(2, 2, 2), m.zeros(2, 2)]),
    "multi_dot_middle_1d": lambda m: m.linalg.multi_dot([m.zeros(2, 2), m.zeros(2), m.zeros(2, 2)]),
    "vander_0d": lambda m: m.linalg.vander(m.tensor(1.0)),
    "cholesky_not_square": lambda m: m.linalg.cholesky(m.zeros(2, 3)),
    "slogdet_not_square": lambda m: m.linalg.slogdet(m.zeros(2, 3)),
    "matrix_exp_not_square": lambda m: m.linalg.matrix_exp(m.zeros(2, 3)),
    "matrix_exp_int": lambda m: m.linalg.matrix_exp(m.eye(3, dtype=m.int64)),
    "det_int": lambda m: m.det(m.zeros(3, 3, dtype=m.int64)),
    "householder_batch": lambda m: m.linalg.householder_product(m.zeros(2, 4, 3), m.zeros(3, 2)),
    "cross_dim": lambda m: m.linalg.cross(m.zeros(3, 2), m.zeros(3, 2), dim=1),
    "inv_bfloat16": lambda m: m.linalg.inv(m.zeros(2, 2, dtype=m.bfloat16)),
}


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("name", sorted(SAME_ERROR))
def test_same_error_as_torch(name):
    import re

    fn = SAME_ERROR[name]
    with pytest.raises(Exception) as te:
        fn(torch)
    exc = RuntimeError if isinstance(te.value, RuntimeError) else type(te.value)
    with pytest.raises(exc, match="^" + re.escape(str(te.value)) + "$"):
        fn(ember)


def test_solve_triangular_mixed_dtypes():
    # torch solves in A's dtype (no promotion, no error)
    r = ember.linalg.solve_triangular(
        ember.eye(3), ember.ones(3, 1, dtype=ember.float64), upper=True
    )
    assert r.dtype == ember.float32


@needs_torch
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_pinv_gradient_is_the_pseudo_inverses_own(hermitian, dtype):
    # torch differentiates pinv with the general formula, hermitian=True included: for a
    # non-symmetric upstream gradient the result is not symmetric (ember's went through eigh)
    import torch

    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 4)) + (
        1j * rng.standard_normal((2, 4, 4)) if "c" in dtype else 0
    )
    if hermitian:
        a = a + np.conj(np.swapaxes(a, -1, -2))
    a[1] = a[1] @ np.diag([1.0, 1.0, 1.0, 0.0]) @ a[1].conj().T  # rank 3: pinv drops one
    g = rng.standard_normal((2, 4, 4)) + (
        1j * rng.standard_normal((2, 4, 4)) if "c" in dtype else 0
    )
    grads = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.linalg.pinv(x, hermitian=hermitian)
        y.backward(m.tensor(g))
        grads.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    (ye, ge, ne), (yt, gt, nt) = grads
    assert ne == nt == "LinalgPinvBackward0"
    np.testing.assert_allclose(ye, yt, atol=1e-10)
    np.testing.assert_allclose(ge, gt, atol=1e-9)


def test_pinv_gradgradcheck():
    x = ember.tensor(np.random.default_rng(4).standard_normal((3, 3)), requires_grad=True)
    sym = lambda t: ember.linalg.pinv(t + t.mT, hermitian=True)
    assert ember.autograd.gradcheck(sym, (x,))
    assert ember.autograd.gradgradcheck(sym, (x,))
    assert ember.autograd.gradgradcheck(lambda t: ember.linalg.pinv(t[:, :2]), (x,))


@needs_torch
def test_logdet_of_a_negative_determinant_has_no_gradient():
    # torch selects nan with a where for det < 0: no gradient flows there (ember's went through
    # log|det|: inv(A)^T)
    import torch

    a = np.array([[[1.0, 2.0], [3.0, 1.0]], [[2.0, 0.5], [0.0, 3.0]]])
    out = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.logdet(x)
        y.backward(m.tensor([1.0, 2.0], dtype=m.float64))
        out.append((y.grad_fn.name(), y.detach().numpy(), x.grad.numpy()))
    assert out[0][0] == out[1][0] == "WhereBackward0"
    np.testing.assert_array_equal(np.isnan(out[0][1]), np.isnan(out[1][1]))
    np.testing.assert_allclose(out[0][1][1], out[1][1][1])
    np.testing.assert_allclose(out[0][2], out[1][2], atol=1e-15)


@needs_torch
@pytest.mark.parametrize("fn", ["logdet", "slogdet"])
def test_log_det_backward_of_a_singular_matrix_is_non_finite(fn):
    # torch's backward solves with the forward's LU, unchecked: a singular matrix (log|det|
    # -inf) gives inf/nan entries, no error (ember's raised inverse's "input matrix is singular");
    # the non-singular matrix of the batch keeps its finite gradient
    import torch

    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.5], [0.0, 3.0]]])
    out = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.logdet(x) if fn == "logdet" else m.linalg.slogdet(x).logabsdet
        y.backward(m.tensor([1.0, 2.0], dtype=m.float64))
        out.append((y.detach().numpy(), x.grad.numpy()))
    (ye, ge), (yt, gt) = out
    np.testing.assert_array_equal(ye, yt)
    assert not np.isfinite(ge[0]).all() and not np.isfinite(gt[0]).all()
    np.testing.assert_allclose(ge[1], gt[1], atol=1e-15)
