"""Parity regressions of the eighty-eighth wave, the matmul family and torch.linalg fuzzed
against torch (errors: type and first line; results: dtype, shape and values). It found:

* torch's order of checks: matmul / mm of mismatched shapes (the shapes before a dtype clash or
  a bool kernel), addmm (the operands' dtypes before their ranks; a bool product after the
  input's shape), baddbmm / addbmm with a batch of fewer than 3 dims (torch reads sizes first:
  its IndexError), addr (the input's shape before beta/alpha), tensordot (the dims' count, then
  the dtypes, then their range), linalg.cross / torch.cross (shapes before dtypes), chain_matmul
  (multi_dot's dtype error), lstsq (dtypes before ranks), solve_triangular (A square before B's
  rank), eigh (A before UPLO), qr (the kind, then the mode, then the kernel), svd / svdvals
  (the input's checks and an empty input before driver=), householder_product (tau's rank),
  matrix_power (n's type first), einsum (sizes before dtypes and kernels);
* the expand error of the addmm family naming the last dim, never the mismatching one, and no
  "number of sizes" error for an input of more dims; addr taking a bool beta/alpha for a
  non-bool result (torch: "Boolean beta only supported for Boolean results.");
* the bool kernels' names (mv / addmv / matmul-to-vector: "addmv_impl_cpu", batched matmul:
  "bmm", inner / tensordot: "dot" / "addmm_impl_cpu_"), and empty bool products refused;
* mv(0-d, v) (torch's IndexError), mv's out= dtype text, addmv's half type in its complex
  scalar error, einsum's ellipsis broadcast text, matrix_norm with an int dim (the parser's
  error), linalg.norm(A, dim=(0, 0)) without ord (a vector norm: "dim 0 appears multiple
  times"), matrix_rank(tol=, atol=) accepted, pinv(hermitian=True) of an empty non-square
  matrix refused, matrix_exp of float16 / bfloat16 refused (torch's cpu kernel takes them).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly
from harness import upstream as _up

_RNG = np.random.default_rng(88)
_DATA = {}


def _r(T, *shape, dtype="float64"):
    """A fixed random array of ``shape`` as a tensor of ``dtype`` (the same on both sides)."""
    a = _DATA.setdefault(shape, _RNG.standard_normal(shape))
    t = T.tensor(a)
    return t > 0 if dtype == "bool" else t.to(getattr(T, dtype))


def _f(T, *shape):
    return _r(T, *shape, dtype="float32")


def _b(T, *shape):
    return _r(T, *shape, dtype="bool")


def _wc(T, n, dtype="float64"):
    """A well-conditioned n x n matrix."""
    return (_r(T, n, n) + 3 * n * T.eye(n, dtype=T.float64)).to(getattr(T, dtype))


def _outcome(call, T):
    e, r = run_quietly(call, T)
    if e is not None:
        return type(e).__name__, str(e).split("\n")[0].replace("ember.", "torch.")
    rs = r if isinstance(r, tuple) else (r,)
    return [
        ("ok", str(t.dtype).split(".")[-1], tuple(t.shape), t.detach().double().numpy())
        if not t.is_complex()
        else ("ok", str(t.dtype).split(".")[-1], tuple(t.shape), t.detach().numpy())
        for t in rs
    ]


L = "linalg"
CASES = {
    # ---- matmul / mm: shapes before dtypes and kernels
    "matmul_bool_shapes": lambda T: T.matmul(_b(T, 2, 3), _b(T, 4, 5)),
    "matmul_dtype_shapes": lambda T: T.matmul(_f(T, 2, 3), _r(T, 4, 5)),
    "matmul_int_float_shapes": lambda T: T.matmul(_r(T, 2, 3, dtype="int64"), _f(T, 4, 5)),
    "matmul_bool_vec_sizes": lambda T: T.matmul(_b(T, 3), _b(T, 4)),
    "matmul_bool_mv": lambda T: T.matmul(_b(T, 2, 3), _b(T, 3)),
    "matmul_bool_batch_mv": lambda T: T.matmul(_b(T, 2, 4, 3), _b(T, 3)),
    "matmul_bool_batch_mv_sizes": lambda T: T.matmul(_b(T, 2, 3, 4), _b(T, 5)),
    "matmul_bool_bmm": lambda T: T.matmul(_b(T, 2, 3, 4), _b(T, 2, 4, 5)),
    "matmul_bool_vec_bmm": lambda T: T.matmul(_b(T, 4), _b(T, 2, 4, 3)),
    "matmul_bool_empty": lambda T: T.matmul(_b(T, 0, 3), _b(T, 3, 2)),
    "mm_bool_empty_inner": lambda T: T.mm(_b(T, 2, 0), _b(T, 0, 4)),
    "mm_bool": lambda T: T.mm(_b(T, 2, 3), _b(T, 3, 2)),
    "bmm_bool_empty": lambda T: T.bmm(_b(T, 0, 2, 3), _b(T, 0, 3, 2)),
    "mv_bool": lambda T: T.mv(_b(T, 2, 3), _b(T, 3)),
    "mv_bool_empty": lambda T: T.mv(_b(T, 2, 0), _b(T, 0)),
    "mv_0d": lambda T: T.mv(_r(T), _r(T, 3)),
    "addmv_bool": lambda T: T.addmv(_b(T, 2), _b(T, 2, 3), _b(T, 3)),
    "addmv_half_complex_beta": lambda T: T.addmv(
        _r(T, 2, dtype="float16"), _r(T, 2, 3, dtype="float16"), _r(T, 3, dtype="float16"), beta=1j
    ),
    "inner_bool_vec": lambda T: T.inner(_b(T, 3), _b(T, 3)),
    "inner_bool_mat": lambda T: T.inner(_b(T, 2, 3), _b(T, 3)),
    # ---- addmm family: the expand error, the order
    "addmm_expand_dim0": lambda T: T.addmm(_r(T, 3, 4), _r(T, 2, 3), _r(T, 3, 4)),
    "addmm_expand_ndim": lambda T: T.addmm(_r(T, 5, 1, 4), _r(T, 2, 3), _r(T, 3, 4)),
    "addmm_expand_col": lambda T: T.addmm(_r(T, 3, 1), _r(T, 2, 3), _r(T, 3, 4)),
    "addmm_dtype_before_rank": lambda T: T.addmm(_r(T, 2, 4), _f(T, 2, 3, 1), _f(T, 3, 4)),
    "addmm_bool_expand": lambda T: T.addmm(_b(T, 3, 4), _b(T, 2, 3), _b(T, 3, 4)),
    "addmm_bool": lambda T: T.addmm(_b(T, 2, 4), _b(T, 2, 3), _b(T, 3, 4)),
    "addmm_bool_empty": lambda T: T.addmm(_b(T, 0, 4), _b(T, 0, 3), _b(T, 3, 4)),
    "baddbmm_2d_batch1_expand": lambda T: T.baddbmm(_r(T, 2, 3, 5), _r(T, 3, 4), _r(T, 2, 4, 5)),
    "baddbmm_2d_batch1": lambda T: T.baddbmm(_r(T, 1, 1, 5), _r(T, 3, 4), _r(T, 2, 4, 5)),
    "baddbmm_2d_batches": lambda T: T.baddbmm(_r(T, 2, 3, 5), _r(T, 3, 4), _r(T, 4, 5)),
    "baddbmm_1d_batch2": lambda T: T.baddbmm(_r(T, 2, 3, 5), _r(T, 3, 4), _r(T, 5)),
    "baddbmm_0d_batch1": lambda T: T.baddbmm(_r(T, 2, 3, 5), _r(T), _r(T, 2, 4, 5)),
    "baddbmm_0d_batch2": lambda T: T.baddbmm(_r(T, 2, 3, 5), _r(T, 2, 3, 4), _r(T)),
    "baddbmm_shape_before_dtype": lambda T: T.baddbmm(
        _r(T, 2, 3, 5, dtype="int64"), _r(T, 3, 4), _r(T, 4, 5)
    ),
    "baddbmm_4d": lambda T: T.baddbmm(_r(T, 2, 3, 5), _r(T, 2, 3, 4, 1), _r(T, 2, 4, 5)),
    "addbmm_2d_batch1_expand": lambda T: T.addbmm(_r(T, 3, 5), _r(T, 3, 4), _r(T, 2, 4, 5)),
    "addbmm_2d_batch1": lambda T: T.addbmm(_r(T, 4, 5), _r(T, 3, 4), _r(T, 2, 4, 5)),
    "addbmm_0d_batch1": lambda T: T.addbmm(_r(T, 3, 5), _r(T), _r(T, 2, 4, 5)),
    "addbmm_1d_batch1": lambda T: T.addbmm(_r(T, 3, 5), _r(T, 4), _r(T, 2, 4, 5)),
    "addbmm_2d_batch2": lambda T: T.addbmm(_r(T, 3, 5), _r(T, 2, 3, 4), _r(T, 4, 5)),
    "addr_shape_before_complex": lambda T: T.addr(_r(T, 2, 4), _r(T, 2), _r(T, 3), beta=1j),
    "addr_shape_before_float": lambda T: T.addr(
        _r(T, 2, 4, dtype="int64"), _r(T, 2, dtype="int64"), _r(T, 3, dtype="int64"), alpha=1.5
    ),
    "addr_bool_beta": lambda T: T.addr(_r(T, 2, 3), _r(T, 2), _r(T, 3), beta=True),
    "addr_bool_alpha_after_complex_beta": lambda T: T.addr(
        _r(T, 2, 3), _r(T, 2), _r(T, 3), beta=1j, alpha=True
    ),
    "addr_int_bool_beta": lambda T: T.addr(
        _r(T, 2, 3, dtype="int64"), _r(T, 2, dtype="int64"), _r(T, 3, dtype="int64"), beta=True
    ),
    "addr_bool_ok": lambda T: T.addr(_b(T, 2, 3), _b(T, 2), _b(T, 3), beta=2),
    "addr_ndim": lambda T: T.addr(_r(T, 2, 2, 3), _r(T, 2), _r(T, 3)),
    # ---- the rest of the products
    "tensordot_bool": lambda T: T.tensordot(_b(T, 2, 3), _b(T, 3, 4), 1),
    "tensordot_bool_outer": lambda T: T.tensordot(_b(T, 2, 3), _b(T, 3, 4), 0),
    "tensordot_bool_empty": lambda T: T.tensordot(_b(T, 2, 0), _b(T, 0, 4), 1),
    "tensordot_lengths": lambda T: T.tensordot(_r(T, 2, 3), _r(T, 3, 4), ([1, 0], [0])),
    "tensordot_dims_before_dtype": lambda T: T.tensordot(_f(T, 2, 3), _r(T, 3, 4), 3),
    "tensordot_dtype_before_range": lambda T: T.tensordot(_f(T, 2, 3), _r(T, 3, 4), ([5], [0])),
    "chain_matmul_dtype": lambda T: T.chain_matmul(_f(T, 2, 3), _r(T, 3, 4)),
    "chain_matmul_dtype_before_shapes": lambda T: T.chain_matmul(_f(T, 2, 3), _r(T, 4, 5)),
    "cross_shapes_before_dtype": lambda T: T.linalg.cross(_f(T, 2, 3), _r(T, 4, 3)),
    "torch_cross_no_dim3": lambda T: T.cross(_f(T, 2, 4), _r(T, 2, 4)),
    "torch_cross_length": lambda T: T.cross(_f(T, 3, 2), _r(T, 3, 2), dim=1),
    "einsum_sizes_before_dtype": lambda T: T.einsum("ij,jk->ik", _f(T, 2, 3), _r(T, 4, 4)),
    "einsum_sizes_before_bool": lambda T: T.einsum("i,i->", _b(T, 3), _b(T, 4)),
    "einsum_ellipsis": lambda T: T.einsum("...ij,...jk->...ik", _r(T, 7, 2, 3), _r(T, 4, 5, 3, 4)),
    "einsum_ellipsis_first": lambda T: T.einsum(
        "...ij,...jk->...ik", _r(T, 2, 5, 2, 3), _r(T, 5, 3, 3, 4)
    ),
    # ---- out=
    "mv_out_dtype": lambda T: T.mv(_f(T, 2, 3), _f(T, 3), out=T.empty(0, dtype=T.float64)),
    "matmul_mv_out_dtype": lambda T: T.matmul(_f(T, 2, 3), _f(T, 3), out=T.empty(0, dtype=T.int64)),
    "mv_out_dtype_shaped": lambda T: T.mv(_f(T, 2, 3), _f(T, 3), out=T.empty(2, dtype=T.float64)),
    "matmul_batch_mv_out_dtype": lambda T: T.matmul(
        _f(T, 2, 2, 3), _f(T, 3), out=T.empty(0, dtype=T.float64)
    ),
    # ---- torch.linalg
    "lstsq_dtype_before_size": lambda T: T.linalg.lstsq(_f(T, 3, 3), _r(T, 4)),
    "lstsq_dtype_before_rank": lambda T: T.linalg.lstsq(_f(T, 3, 3), _r(T, 2, 2, 3, 1)),
    "solve_triangular_square_first": lambda T: T.linalg.solve_triangular(
        _r(T, 3, 4), _r(T, 3), upper=True
    ),
    "eigh_rank_before_uplo": lambda T: T.linalg.eigh(_r(T, 3), UPLO="x"),
    "eigh_square_before_uplo": lambda T: T.linalg.eigvalsh(_r(T, 3, 4), UPLO="x"),
    "qr_kind_before_mode": lambda T: T.linalg.qr(_r(T, 3, 3, dtype="int64"), mode="x"),
    "qr_mode_before_half": lambda T: T.linalg.qr(_r(T, 3, 3, dtype="float16"), mode="x"),
    "svd_kind_before_driver": lambda T: T.linalg.svd(_r(T, 3, 3, dtype="int64"), driver="x"),
    "svd_rank_before_driver": lambda T: T.linalg.svd(_r(T, 3), driver="x"),
    "svd_empty_driver": lambda T: T.linalg.svd(_r(T, 0, 3), driver="gesvd"),
    "svdvals_empty_driver": lambda T: T.linalg.svdvals(_r(T, 0, 3), driver="x"),
    "svd_half_driver": lambda T: T.linalg.svd(_r(T, 3, 3, dtype="float16"), driver="x"),
    "householder_tau_rank": lambda T: T.linalg.householder_product(_r(T, 3, 3), _r(T, 2, 3, 2)),
    "householder_tau_rank_2d": lambda T: T.linalg.householder_product(_r(T, 3, 3), _r(T, 3, 2)),
    "householder_tau_0d": lambda T: T.linalg.householder_product(_r(T, 3, 3), _r(T)),
    "matrix_power_float_n": lambda T: T.linalg.matrix_power(_r(T, 3), 2.0),
    "matrix_norm_int_dim": lambda T: T.linalg.matrix_norm(_r(T, 3, 3, dtype="int64"), "fro", 0),
    "norm_repeated_dims": lambda T: T.linalg.norm(_r(T, 3, 3), dim=(0, 0)),
    "norm_int_two_dims": lambda T: T.linalg.norm(_r(T, 3, 3, dtype="int64"), dim=(0, 1)),
    "norm_half_two_dims": lambda T: T.linalg.norm(_r(T, 3, 3, dtype="float16"), dim=(-1, -2)),
    "matrix_rank_tol_and_atol": lambda T: T.linalg.matrix_rank(_r(T, 3, 3), 0.1, atol=0.1),
    "pinv_hermitian_empty": lambda T: T.linalg.pinv(_r(T, 0, 3), hermitian=True),
    "pinv_hermitian_batch_empty": lambda T: T.linalg.pinv(_r(T, 2, 3, 0), hermitian=True),
    "matrix_exp_half_empty_ok": lambda T: T.linalg.matrix_exp(_r(T, 0, 2, 2, dtype="float16")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    call = CASES[name]
    want, got = _outcome(call, torch), _outcome(call, ember)
    if isinstance(want, tuple):
        assert got == want
        return
    assert len(got) == len(want)
    for (_, dw, sw, vw), (_, dg, sg, vg) in zip(want, got):
        assert (dg, sg) == (dw, sw)
        np.testing.assert_allclose(vg, vw, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_matrix_exp_half(dtype):
    # torch's cpu kernel takes half types (its values there overflow: compared with float64)
    a = _r(ember, 2, 3, 3, dtype=dtype) * 0.5
    r = ember.linalg.matrix_exp(a)
    assert r.dtype == getattr(ember, dtype) and r.shape == (2, 3, 3)
    assert torch.linalg.matrix_exp(_r(torch, 2, 3, 3, dtype=dtype) * 0.5).dtype == getattr(
        torch, dtype
    )
    want = torch.linalg.matrix_exp(torch.tensor(a.double().numpy()))
    np.testing.assert_allclose(r.double().numpy(), want.numpy(), rtol=2e-2, atol=2e-2)


def _grads(T, f, *shapes):
    xs = [_r(T, *s).requires_grad_() for s in shapes]
    y = f(T, *xs)
    return [g.numpy() for g in T.autograd.grad(y, xs, _up(T, y))]


GRADS = {
    "pinv_hermitian_empty": (lambda T, a: T.linalg.pinv(a, hermitian=True), (0, 3)),
    "matmul_vec_batch": (lambda T, a, b: T.matmul(a, b), (4,), (2, 4, 3)),
    "matmul_batch_vec": (lambda T, a, b: T.matmul(a, b), (2, 4, 3), (3,)),
    "solve_broadcast": (
        lambda T, a, b: T.linalg.solve(a + 9 * T.eye(3, dtype=T.float64), b),
        (2, 1, 3, 3),
        (4, 3, 2),
    ),
    "addmm_empty_inner": (lambda T, i, a, b: T.addmm(i, a, b, beta=0.5), (1, 4), (2, 0), (0, 4)),
    "einsum_ellipsis_broadcast": (
        lambda T, a, b: T.einsum("...ij,jk->...ik", a, b),
        (2, 1, 2, 3),
        (3, 4),
    ),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_torch(name):
    f, *shapes = GRADS[name]
    for gw, gg in zip(_grads(torch, f, *shapes), _grads(ember, f, *shapes)):
        assert gg.shape == gw.shape
        np.testing.assert_allclose(gg, gw, rtol=1e-7, atol=1e-10)


def test_gradcheck_matrix_exp_and_pinv_paths():
    a = _r(ember, 2, 2, 2).requires_grad_()
    assert ember.autograd.gradcheck(lambda x: ember.linalg.matrix_exp(x), (a,))
    e = _r(ember, 2, 0, 3).requires_grad_()
    assert ember.autograd.gradcheck(lambda x: ember.linalg.pinv(x, hermitian=True), (e,))
