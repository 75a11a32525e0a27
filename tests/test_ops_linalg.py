"""The matmul family and einsum: parity with torch, float64 gradcheck/gradgradcheck, errors."""

import ember
import numpy as np
import pytest
from harness import A, Case, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

CASES = [
    Case("matmul_2d", lambda m, x, y: m.matmul(x, y), [A(3, 4), A(4, 5)]),
    Case("matmul_1d_1d", lambda m, x, y: m.matmul(x, y), [A(4), A(4)]),
    Case("matmul_2d_1d", lambda m, x, y: m.matmul(x, y), [A(3, 4), A(4)]),
    Case("matmul_1d_2d", lambda m, x, y: m.matmul(x, y), [A(4), A(4, 5)]),
    Case("matmul_1d_3d", lambda m, x, y: m.matmul(x, y), [A(4), A(2, 4, 5)]),
    Case("matmul_3d_1d", lambda m, x, y: m.matmul(x, y), [A(2, 3, 4), A(4)]),
    Case("matmul_batched", lambda m, x, y: x @ y, [A(2, 3, 4), A(2, 4, 5)]),
    Case("matmul_bcast", lambda m, x, y: x @ y, [A(2, 1, 3, 4), A(5, 4, 2)]),
    Case("matmul_bcast_2d", lambda m, x, y: x @ y, [A(3, 4), A(2, 4, 5)]),
    Case("mm", lambda m, x, y: m.mm(x, y), [A(3, 4), A(4, 5)]),
    Case("mm_method", lambda m, x, y: x.mm(y), [A(2, 3), A(3, 1)]),
    Case("bmm", lambda m, x, y: m.bmm(x, y), [A(2, 3, 4), A(2, 4, 5)]),
    Case("mv", lambda m, x, y: m.mv(x, y), [A(3, 4), A(4)]),
    Case("dot", lambda m, x, y: m.dot(x, y), [A(5), A(5)]),
    Case("vdot", lambda m, x, y: m.vdot(x, y), [A(5), A(5)]),
    Case("inner_1d", lambda m, x, y: m.inner(x, y), [A(5), A(5)]),
    Case("inner_nd", lambda m, x, y: m.inner(x, y), [A(2, 3), A(4, 3)]),
    Case("outer", lambda m, x, y: m.outer(x, y), [A(3), A(4)]),
    Case("ger", lambda m, x, y: m.ger(x, y), [A(3), A(4)]),
    Case("addmm", lambda m, i, x, y: m.addmm(i, x, y), [A(3, 5), A(3, 4), A(4, 5)]),
    Case(
        "addmm_bcast_scaled",
        lambda m, i, x, y: m.addmm(i, x, y, beta=0.5, alpha=2.0),
        [A(5), A(3, 4), A(4, 5)],
    ),
    Case("addmm_beta0", lambda m, i, x, y: m.addmm(i, x, y, beta=0), [A(3, 5), A(3, 4), A(4, 5)]),
    Case("addmv", lambda m, i, x, y: m.addmv(i, x, y, beta=2.0, alpha=-1.0), [A(3), A(3, 4), A(4)]),
    Case(
        "baddbmm",
        lambda m, i, x, y: m.baddbmm(i, x, y, alpha=0.5),
        [A(3, 5), A(2, 3, 4), A(2, 4, 5)],
    ),
    Case(
        "addbmm", lambda m, i, x, y: m.addbmm(i, x, y, beta=1.5), [A(3, 5), A(2, 3, 4), A(2, 4, 5)]
    ),
    Case("tensordot_int", lambda m, x, y: m.tensordot(x, y, dims=2), [A(2, 3, 4), A(3, 4, 5)]),
    Case(
        "tensordot_lists",
        lambda m, x, y: m.tensordot(x, y, dims=([1, 2], [1, 0])),
        [A(2, 3, 4), A(4, 3, 5)],
    ),
    Case("kron", lambda m, x, y: m.kron(x, y), [A(2, 3), A(3, 2)]),
    Case("kron_mixed_rank", lambda m, x, y: m.kron(x, y), [A(2, 3), A(4)]),
    # einsum
    Case("einsum_mm", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [A(3, 4), A(4, 5)]),
    Case("einsum_list", lambda m, x, y: m.einsum("ij,jk->ik", [x, y]), [A(3, 4), A(4, 5)]),
    Case("einsum_implicit", lambda m, x, y: m.einsum("Ba,aA", x, y), [A(3, 4), A(4, 5)]),
    Case(
        "einsum_batched", lambda m, x, y: m.einsum("bij,bjk->bik", x, y), [A(2, 3, 4), A(2, 4, 5)]
    ),
    Case("einsum_trace", lambda m, x: m.einsum("ii", x), [A(4, 4)]),
    Case("einsum_diag", lambda m, x: m.einsum("ii->i", x), [A(4, 4)]),
    Case("einsum_batch_diag", lambda m, x: m.einsum("...ii->...i", x), [A(2, 3, 3)]),
    Case("einsum_transpose", lambda m, x: m.einsum("ij->ji", x), [A(3, 4)]),
    Case("einsum_sum", lambda m, x: m.einsum("ijk->j", x), [A(2, 3, 4)]),
    Case("einsum_outer", lambda m, x, y: m.einsum("i,j->ij", x, y), [A(3), A(4)]),
    Case("einsum_dot", lambda m, x, y: m.einsum("i,i->", x, y), [A(5), A(5)]),
    Case("einsum_ellipsis", lambda m, x, y: m.einsum("...ij,...jk", x, y), [A(5, 2, 3), A(3, 4)]),
    Case(
        "einsum_ellipsis_bcast",
        lambda m, x, y: m.einsum("...ij,...jk->...ik", x, y),
        [A(2, 1, 2, 3), A(4, 3, 2)],
    ),
    Case("einsum_size1_bcast", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [A(2, 1), A(3, 4)]),
    Case(
        "einsum_bilinear",
        lambda m, x, w, y: m.einsum("bi,oij,bj->bo", x, w, y),
        [A(2, 3), A(4, 3, 5), A(2, 5)],
    ),
    Case(
        "einsum_chain4",
        lambda m, a, b, c, d: m.einsum("ab,bc,cd,de->ae", a, b, c, d),
        [A(2, 3), A(3, 4), A(4, 2), A(2, 3)],
    ),
    Case(
        "einsum_attention",
        lambda m, q, k: m.einsum("bhqd,bhkd->bhqk", q, k),
        [A(2, 2, 3, 4), A(2, 2, 5, 4)],
    ),
    Case("einsum_repeat_in_two", lambda m, x, y: m.einsum("iij,j->i", x, y), [A(3, 3, 2), A(2)]),
    Case("einsum_only_in_one", lambda m, x, y: m.einsum("ij,k->ik", x, y), [A(2, 3), A(4)]),
]


C = "complex64"
COMPLEX_CASES = [
    Case("c_matmul", lambda m, x, y: x @ y, [A(3, 4, dtype=C), A(4, 2, dtype=C)]),
    Case("c_matmul_1d", lambda m, x, y: x @ y, [A(4, dtype=C), A(2, 4, 3, dtype=C)]),
    Case("c_mv", lambda m, x, y: m.mv(x, y), [A(3, 4, dtype=C), A(4, dtype=C)]),
    Case("c_dot", lambda m, x, y: m.dot(x, y), [A(4, dtype=C), A(4, dtype=C)]),
    Case("c_vdot", lambda m, x, y: m.vdot(x, y), [A(4, dtype=C), A(4, dtype=C)]),
    Case("c_outer", lambda m, x, y: m.outer(x, y), [A(3, dtype=C), A(4, dtype=C)]),
    Case(
        "c_addmm",
        lambda m, i, x, y: m.addmm(i, x, y, alpha=2.0),
        [A(2, dtype=C), A(3, 4, dtype=C), A(4, 2, dtype=C)],
    ),
    Case(
        "c_einsum",
        lambda m, x, y: m.einsum("bij,bjk->bik", x, y),
        [A(2, 3, 4, dtype=C), A(2, 4, 5, dtype=C)],
    ),
    Case("c_einsum_diag", lambda m, x: m.einsum("ii->i", x), [A(3, 3, dtype=C)]),
]


@pytest.mark.parametrize("case", CASES + COMPLEX_CASES, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_einsum_sublist_format():
    x = np.random.default_rng(0).random((2, 3)).astype(np.float32)
    r = ember.einsum(ember.tensor(x), [0, 1], [1])
    np.testing.assert_allclose(r.numpy(), x.sum(0), rtol=1e-6)


@pytest.mark.parametrize("dt", ["int64", "int32", "float64"])
def test_matmul_dtypes(dt):
    a = np.arange(12).reshape(3, 4).astype(dt)
    b = np.arange(20).reshape(4, 5).astype(dt)
    r = ember.tensor(a) @ ember.tensor(b)
    assert (
        r.dtype == ember.to_dtype(dt) if hasattr(ember, "to_dtype") else str(r.dtype).endswith(dt)
    )
    np.testing.assert_array_equal(r.numpy(), a @ b)
    e = ember.einsum("ij,jk->ik", ember.tensor(a), ember.tensor(b))
    np.testing.assert_array_equal(e.numpy(), a @ b)
    assert str(e.dtype).endswith(dt)


def test_float32_stays_float32():
    a, b = ember.ones(3, 4), ember.ones(4, 5)
    for r in (
        a @ b,
        ember.mm(a, b),
        ember.addmm(ember.ones(5), a, b, beta=0.5, alpha=2.0),
        ember.einsum("ij,jk", a, b),
        ember.outer(ember.ones(3), ember.ones(2)),
    ):
        assert r.dtype == ember.float32


def test_einsum_result_owns_memory():
    # a summing einsum owns its memory; one that sums nothing is a view, as in torch
    x = ember.ones(3, 3)
    ember.einsum("ii", x).add_(1)
    ember.einsum("ij->i", x).add_(1)
    assert float(x.sum()) == 9.0
    ember.einsum("ii->i", x).add_(1)
    assert float(x.sum()) == 12.0


def test_matmul_names():
    x = ember.ones(2, 3, 4, names=("B", "N", "C"))
    y = ember.ones(4, 5, names=("C", "D"))
    assert (x @ y)._names == ("B", "N", "D")
    assert ember.mv(ember.ones(3, 4, names=("N", "C")), ember.ones(4))._names == ("N",)


# ---------------------------------------------------------------------- errors
def _raises(exc, msg):
    return pytest.raises(exc, match=msg)


ERRORS = [
    (
        lambda m: m.matmul(m.tensor(1.0), m.ones(3)),
        RuntimeError,
        r"both arguments to matmul need to be at least 1D, but they are 0D and 1D",
    ),
    (
        lambda m: m.matmul(m.ones(3, 4), m.ones(5, 2)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x2\)",
    ),
    (lambda m: m.matmul(m.ones(3), m.ones(4)), RuntimeError, r"inconsistent tensor size"),
    (
        lambda m: m.matmul(m.ones(3, 4), m.ones(5)),
        RuntimeError,
        r"size mismatch, got input \(3\), mat \(3x4\), vec \(5\)",
    ),
    (
        lambda m: m.matmul(m.ones(3), m.ones(4, 5)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 4x5\)",
    ),
    (
        lambda m: m.matmul(m.ones(2, 3, 4), m.ones(3, 4, 5)),
        RuntimeError,
        (
            r"The size of tensor a \(2\) must match the size of tensor b \(3\) at non-singleton "
            r"dimension 0"
        ),
    ),
    (
        lambda m: m.matmul(m.ones(2, 3, 4), m.ones(2, 5, 6)),
        RuntimeError,
        (
            r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: "
            r"\[2, 5\]"
        ),
    ),
    (
        lambda m: m.matmul(m.ones(2, 3), m.ones(3, 4, dtype=m.float64)),
        RuntimeError,
        r"expected m1 and m2 to have the same dtype, but got: float != double",
    ),
    (
        lambda m: m.mm(m.ones(2, 3), m.ones(4, 5)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)",
    ),
    (lambda m: m.mm(m.ones(2, 3, 1), m.ones(4, 5)), RuntimeError, r"self must be a matrix"),
    (lambda m: m.mm(m.ones(2, 3), m.ones(3)), RuntimeError, r"mat2 must be a matrix"),
    (lambda m: m.bmm(m.ones(2, 3), m.ones(3, 4)), RuntimeError, r"batch1 must be a 3D tensor"),
    (lambda m: m.bmm(m.ones(2, 2, 3), m.ones(2, 3)), RuntimeError, r"batch2 must be a 3D tensor"),
    (
        lambda m: m.bmm(m.ones(2, 2, 3), m.ones(3, 3, 4)),
        RuntimeError,
        (
            r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: "
            r"\[3, 3\]"
        ),
    ),
    (
        lambda m: m.mv(m.ones(2, 3), m.ones(4)),
        RuntimeError,
        r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)",
    ),
    (
        lambda m: m.mv(m.ones(2, 3), m.ones(3, 1)),
        RuntimeError,
        r"vector \+ matrix @ vector expected, got 1, 2, 2",
    ),
    (
        lambda m: m.dot(m.ones(2, 3), m.ones(3)),
        RuntimeError,
        r"1D tensors expected, but got 2D and 1D tensors",
    ),
    (
        lambda m: m.dot(m.ones(3), m.ones(3, dtype=m.float64)),
        RuntimeError,
        r"dot : expected both vectors to have same dtype, but found Float and Double",
    ),
    (
        lambda m: m.inner(m.ones(3), m.ones(4)),
        RuntimeError,
        (
            r"inner\(\) the last dimension must match on both input tensors but got shapes \[3\] and "
            r"\[4\]"
        ),
    ),
    (
        lambda m: m.outer(m.ones(3, 2), m.ones(4)),
        RuntimeError,
        r"outer: Expected 1-D argument self, but got 2-D",
    ),
    (
        lambda m: m.addmm(m.ones(3), m.ones(2, 3), m.ones(4, 5)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)",
    ),
    (
        lambda m: m.addmm(m.ones(4), m.ones(2, 3), m.ones(3, 5)),
        RuntimeError,
        r"The expanded size of the tensor \(5\) must match the existing size \(4\)",
    ),
    (
        lambda m: m.addmv(m.ones(4), m.ones(2, 3), m.ones(3)),
        RuntimeError,
        r"size mismatch, got input \(4\), mat \(2x3\), vec \(3\)",
    ),
    (
        lambda m: m.addbmm(m.ones(3), m.ones(2, 2, 3), m.ones(3, 3, 3)),
        RuntimeError,
        r"batch1 and batch2 must have same number of batches, got 2 and 3",
    ),
    (
        lambda m: m.tensordot(m.ones(2, 3), m.ones(4, 5), dims=1),
        RuntimeError,
        (
            r"contracted dimensions need to match, but first has size 3 in dim -1 and second has size 4 "
            r"in dim 0"
        ),
    ),
    (
        lambda m: m.tensordot(m.ones(2, 3), m.ones(3, 5), dims=-1),
        RuntimeError,
        r"tensordot expects dims >= 0, but got dims=-1",
    ),
    (
        lambda m: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(4, 5)),
        RuntimeError,
        (
            r"einsum\(\): subscript j has size 4 for operand 1 which does not broadcast with previously "
            r"seen size 3"
        ),
    ),
    (
        lambda m: m.einsum("ij,jk->ik", m.ones(2, 3)),
        RuntimeError,
        r"einsum\(\): fewer operands were provided than specified in the equation",
    ),
    (
        lambda m: m.einsum("ij->ik", m.ones(2, 3)),
        RuntimeError,
        r"einsum\(\): output subscript k does not appear in the equation for any input operand",
    ),
    (
        lambda m: m.einsum("ijk->ij", m.ones(2, 3)),
        RuntimeError,
        (
            r"einsum\(\): the number of subscripts in the equation \(3\) does not match the number of "
            r"dimensions \(2\) for operand 0 and no ellipsis was given"
        ),
    ),
    (
        lambda m: m.einsum("ii->i", m.ones(2, 3)),
        RuntimeError,
        r"einsum\(\): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2",
    ),
    (
        lambda m: m.einsum("i,i->ii", m.ones(2), m.ones(2)),
        RuntimeError,
        r"einsum\(\): output subscript i appears more than once in the output",
    ),
    (
        lambda m: m.einsum("i$,i->i", m.ones(2, 2), m.ones(2)),
        RuntimeError,
        (
            r"einsum\(\): invalid subscript given at index 1 in the equation string, subscripts must be "
            r"in \[a-zA-Z\]"
        ),
    ),
    (
        lambda m: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(3, 4), m.ones(2)),
        RuntimeError,
        r"einsum\(\): more operands were provided than specified in the equation",
    ),
    (
        lambda m: m.einsum("ij->j.", m.ones(2, 3)),
        RuntimeError,
        r"einsum\(\): found '\.' for output that is not part of any ellipsis \(\.\.\.\)",
    ),
    (
        lambda m: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(3, 5, dtype=m.float64)),
        RuntimeError,
        r"expected scalar type Float but found Double",
    ),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    fn, exc, msg = ERRORS[k]
    with _raises(exc, msg):
        fn(ember)
    if torch is not None:  # the expectation itself is torch's behaviour
        with _raises(exc, msg):
            fn(torch)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_low_precision_matmul_and_einsum(dt):
    d = getattr(ember, dt)
    r = np.random.default_rng(3)
    a32 = r.uniform(-1, 1, (3, 4)).astype(np.float32)
    b32 = r.uniform(-1, 1, (4, 5)).astype(np.float32)
    a, b = ember.tensor(a32).to(d), ember.tensor(b32).to(d)
    ref = a.float().numpy() @ b.float().numpy()  # float32 accumulation, like torch
    for out in (a @ b, ember.mm(a, b), ember.einsum("ij,jk->ik", a, b)):
        assert out.dtype == d
        np.testing.assert_allclose(out.float().numpy(), ref, rtol=2e-2, atol=2e-2)
    assert ember.einsum("ii", ember.ones(3, 3, dtype=d)).float().item() == 3.0
    if torch is not None:
        ta, tb = torch.tensor(a32).to(getattr(torch, dt)), torch.tensor(b32).to(getattr(torch, dt))
        np.testing.assert_allclose(
            (a @ b).float().numpy(), (ta @ tb).float().numpy(), rtol=1e-2, atol=1e-2
        )


LAYOUT_CASES = [
    ("F.linear+bias", lambda m, x, w: m.nn.functional.linear(x, w, w[:, 0] * 0 + 1)),
    ("F.linear", lambda m, x, w: m.nn.functional.linear(x, w)),
    ("F.linear 3-D", lambda m, x, w: m.nn.functional.linear(x.reshape(2, 3, 4), w)),
    ("mm(x, w.t())", lambda m, x, w: m.mm(x, w.t())),
    ("matmul(x, w.t())", lambda m, x, w: m.matmul(x, w.t())),
    ("addmm(b, x, w.t())", lambda m, x, w: m.addmm(w[:, 0] * 0 + 1, x, w.t(), alpha=2)),
    ("mm(x.t().t(), w.t())", lambda m, x, w: m.mm(x.t().t(), w.t())),
]


@pytest.mark.skipif(torch is None, reason="torch is not installed (the parity oracle)")
@pytest.mark.parametrize("name,fn", LAYOUT_CASES, ids=[n for n, _ in LAYOUT_CASES])
def test_weight_grad_layout_like_torch(name, fn):
    # a weight used through its transpose gets a gradient in its own row-major layout, as in
    # torch (the optimizers' elementwise updates then run on matching layouts)
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((6, 4)).astype(np.float32)
    wa = rng.standard_normal((5, 4)).astype(np.float32)
    res = []
    for m in (ember, torch):
        x, w = m.tensor(xa, requires_grad=True), m.tensor(wa, requires_grad=True)
        y = fn(m, x, w)
        y.backward(m.tensor(np.arange(y.numel(), dtype=np.float32).reshape(y.shape) / 9))
        res.append((w.grad.is_contiguous(), w.grad.numpy(), x.grad.numpy()))
    (ce, we, xe), (ct, wt, xt) = res
    assert ce == ct
    np.testing.assert_allclose(we, wt, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(xe, xt, rtol=1e-5, atol=1e-5)
