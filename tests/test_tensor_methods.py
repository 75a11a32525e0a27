"""The rest of torch.Tensor's methods (core/ops/tensor_methods.py): parity with torch, float64
gradchecks, and torch's errors."""

from __future__ import annotations

import re
import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, raises_like_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def _idx(m, v):
    return m.tensor(v, dtype=m.int64)


CASES = [
    Case("unfold_dim1", lambda m, x: x.unfold(1, 2, 1), [A(4, 5)]),
    Case("unfold_step2", lambda m, x: x.unfold(0, 2, 2), [A(5, 3)]),
    Case("unfold_neg_dim", lambda m, x: x.unfold(-1, 3, 2) * 2, [A(2, 3, 7)]),
    Case("unfold_size0", lambda m, x: x.unfold(0, 1, 1), [A()]),
    Case("unfold_transposed", lambda m, x: x.t().unfold(0, 2, 1), [A(3, 4)]),
    Case("put", lambda m, x, s: x.put(_idx(m, [0, 7, -1]), s), [A(3, 4), A(3)]),
    Case("put_2d_index", lambda m, x, s: x.put(_idx(m, [[1, 2], [5, 6]]), s), [A(3, 4), A(2, 2)]),
    Case(
        "put_accumulate",
        lambda m, x, s: x.put(_idx(m, [0, 7, 0]), s, accumulate=True),
        [A(3, 4), A(3)],
    ),
    Case("put_", lambda m, x, s: (x * 1).put_(_idx(m, [1, 3]), s), [A(2, 3), A(2)]),
    Case("fill_diagonal_", lambda m, x: (x * 1).fill_diagonal_(3.0), [A(3, 4)]),
    Case("fill_diagonal_tall", lambda m, x: (x * 1).fill_diagonal_(-1.0), [A(7, 3)]),
    Case("fill_diagonal_wrap", lambda m, x: (x * 1).fill_diagonal_(2.0, wrap=True), [A(7, 3)]),
    Case("fill_diagonal_3d", lambda m, x: (x * 1).fill_diagonal_(2.0), [A(3, 3, 3)]),
    Case("hardshrink", lambda m, x: x.hardshrink(0.5), [A(4, 5)]),
    Case("hardshrink_fn", lambda m, x: m.hardshrink(x, lambd=1.0), [A(6)]),
    Case("prelu_scalar", lambda m, x, w: x.prelu(w), [A(2, 3, 4), A(1)]),
    Case("prelu_channel", lambda m, x, w: x.prelu(w), [A(2, 3, 4), A(3)]),
    Case(
        "as_strided_scatter_src",
        lambda m, x, s: x.as_strided_scatter(s, (2, 2), (1, 3), 1),
        [A(3, 4, grad=False), A(2, 2)],
    ),
    Case("split_with_sizes", lambda m, x: x.split_with_sizes([1, 3], 1), [A(2, 4)]),
    Case("unsafe_split", lambda m, x: x.unsafe_split(2, 0), [A(5, 2)]),
    Case("unsafe_chunk", lambda m, x: x.unsafe_chunk(3, 1), [A(2, 7)]),
    Case("unsafe_split_with_sizes", lambda m, x: x.unsafe_split_with_sizes([2, 1]), [A(3, 2)]),
]


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity(case):
    run_case(case)


GRADCHECK = [c for c in CASES if not c.name.startswith("unfold_size0")]


@pytest.mark.parametrize("case", GRADCHECK, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_as_strided_scatter_input_grad():
    # torch's own derivative for `input` is wrong (its gradcheck fails); ember's passes gradcheck
    x = ember.rand(6, dtype=ember.float64, requires_grad=True)
    s = ember.rand(2, dtype=ember.float64, requires_grad=True)
    f = lambda x, s: x.as_strided_scatter(s, (2,), (3,), 1)
    assert ember.autograd.gradcheck(f, (x, s))
    y = f(x, s)
    y.backward(ember.arange(6.0, dtype=ember.float64) + 1)
    np.testing.assert_array_equal(x.grad.numpy(), [1, 0, 3, 4, 0, 6])
    np.testing.assert_array_equal(s.grad.numpy(), [2, 5])


def test_unfold_is_a_view():
    x = ember.arange(6.0)
    v = x.unfold(0, 2, 1)
    assert v._base is x
    x[1] = 100.0
    assert v[0, 1].item() == 100.0 and v[1, 0].item() == 100.0


@needs_torch
@pytest.mark.parametrize("shape,dim", [((6,), 0), ((2, 3), 1), ((4, 5, 6), 1), ((), 0)])
def test_unfold_strides(shape, dim):
    e = ember.zeros(shape).unfold(dim, 1, 1)
    t = torch.zeros(shape).unfold(dim, 1, 1)
    assert e.shape == t.shape and e.stride() == t.stride()


@pytest.mark.parametrize(
    "fn,exc,msg",
    [
        (
            lambda m: m.arange(6.0).unfold(0, 7, 1),
            RuntimeError,
            "maximum size for tensor at dimension 0 is 6 but size is 7",
        ),
        (lambda m: m.arange(6.0).unfold(0, 2, 0), RuntimeError, "step is 0 but must be > 0"),
        (
            lambda m: m.arange(6.0).unfold(1, 2, 1),
            IndexError,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        ),
        (
            lambda m: m.arange(6.0).put(_idx(m, [0, 7]), m.tensor([1.0, 2.0])),
            IndexError,
            "out of range: tried to access index 7 on a tensor of 6 elements.",
        ),
        (
            lambda m: m.arange(6.0).put(_idx(m, [0, 1]), m.tensor([1.0, 2, 3])),
            IndexError,
            (
                "put_(): Expected source and index to have the same number of elements, but got "
                "source.numel() = 3, index.numel() = 2"
            ),
        ),
        (
            lambda m: m.zeros(3).put_(m.tensor([0.0]), m.ones(1)),
            RuntimeError,
            "put_(): Expected a long tensor for index, but got Float",
        ),
        (
            lambda m: m.zeros(3).put_(m.tensor([0], dtype=m.int32), m.ones(1)),
            RuntimeError,
            "put_(): Expected a long tensor for index, but got Int",
        ),
        (lambda m: m.zeros(7).fill_diagonal_(5), RuntimeError, "dimensions must larger than 1"),
        (
            lambda m: m.zeros(2, 3, 4).fill_diagonal_(5),
            RuntimeError,
            "all dimensions of input must be of equal length",
        ),
        (
            lambda m: m.zeros(4).split_with_sizes([1, 2]),
            RuntimeError,
            (
                "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at "
                "dimension 0), but got split_sizes=[1, 2]"
            ),
        ),
        (
            lambda m: m.zeros(3, requires_grad=True).apply_(lambda v: v),
            RuntimeError,
            (
                "Can't call apply_() on Variable that requires grad. Use var.detach().apply_() "
                "instead."
            ),
        ),
        (
            lambda m: m.zeros(3).pin_memory(),
            RuntimeError,
            "Cannot access accelerator device when none is available.",
        ),
        (lambda m: m.zeros(3).record_stream(None), RuntimeError, "unknown parameter type"),
        (
            lambda m: m.zeros(2, 3).prelu(m.ones(2)),
            RuntimeError,
            (
                "Mismatch of parameter numbers and input channel size. Found parameter numbers = 2 "
                "and channel size = 3."
            ),
        ),
    ],
)
def test_errors_like_torch(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


@pytest.mark.parametrize(
    "name",
    [
        "int_repr",
        "q_scale",
        "q_zero_point",
        "q_per_channel_scales",
        "q_per_channel_zero_points",
        "q_per_channel_axis",
        "qscheme",
    ],
)
def test_quantized_accessors_raise(name):
    msg = f"Could not run 'aten::{name}' with arguments from the 'CPU' backend"
    raises_like_torch(lambda m: getattr(m.zeros(2), name)(), NotImplementedError, msg)


def test_chalf_raises():
    with pytest.raises(TypeError, match="complex32"):
        ember.zeros(2).chalf()


@needs_torch
def test_small_methods_match_torch():
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], dtype=np.float32)
    e, t = ember.tensor(a), torch.tensor(a)
    for size, fill in [(5, -1), (2, 0), (0, 7)]:
        np.testing.assert_array_equal(
            e.nonzero_static(size=size, fill_value=fill).numpy(),
            t.nonzero_static(size=size, fill_value=fill).numpy(),
        )
    assert e.nonzero_static(size=2).dtype == ember.int64
    assert e.dim_order() == t.dim_order() and e.t().dim_order() == t.t().dim_order()
    assert e.const_data_ptr() == e.data_ptr()
    assert e.is_same_size(ember.zeros(2, 3)) and not e.is_same_size(ember.zeros(3, 2))
    for n in [
        "is_nested",
        "is_mkldnn",
        "is_xla",
        "is_xpu",
        "is_mps",
        "is_vulkan",
        "is_ipu",
        "is_maia",
        "is_mtia",
    ]:
        assert getattr(e, n) is getattr(t, n) is False
    assert e.name is None and t.name is None
    assert e.grad_dtype == ember.float32 and e.output_nr == t.output_nr == 0
    o = ember.ones(2)
    assert e.module_load(o) is o
    assert e.dequantize() is e or np.array_equal(e.dequantize().numpy(), a)


def test_output_nr_of_multi_output():
    x = ember.rand(4, requires_grad=True)
    if torch is not None:
        tx = torch.rand(4, requires_grad=True)
        assert [p.output_nr for p in tx.split(2)] == [0, 1]
    assert [p.output_nr for p in x.split(2)] == [0, 1]


@needs_torch
def test_legacy_constructors():
    e, t = ember.zeros(2, dtype=ember.float64), torch.zeros(2, dtype=torch.float64)
    assert e.new(2, 3).shape == t.new(2, 3).shape and e.new(2, 3).dtype == ember.float64
    assert e.new().shape == t.new().shape
    np.testing.assert_array_equal(e.new([1, 2]).numpy(), t.new([1, 2]).numpy())
    assert e.new([1, 2]).dtype == ember.float64
    s = e.new_empty_strided((2, 3), (1, 2))
    assert s.stride() == t.new_empty_strided((2, 3), (1, 2)).stride() and s.dtype == e.dtype


@needs_torch
def test_resize_and_resize_as():
    a = np.arange(6.0, dtype=np.float32)
    for name, arg in [("resize", (2, 3)), ("resize_as", None)]:
        res = []
        for m in (ember, torch):
            x = m.tensor(a)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                y = x.resize(2, 3) if arg else x.resize_as(m.zeros(3, 2))
            assert any(f"non-inplace {name} is deprecated" in str(i.message) for i in w)
            res.append(y.numpy())
        np.testing.assert_array_equal(res[0], res[1])


@needs_torch
def test_apply_map_map2():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = []
    for m in (ember, torch):
        x = m.tensor(a)
        x.apply_(lambda v: v * 2)
        x.map_(m.tensor(a), lambda p, q: p + q)
        x.map2_(m.tensor(a), m.ones(3), lambda p, q, r: p * q - r)
        out.append(x.numpy())
    np.testing.assert_array_equal(out[0], out[1])


def test_apply_bumps_version():
    x = ember.zeros(3)
    v = x._version
    x.apply_(lambda v: v + 1)
    assert x._version > v and x.tolist() == [1.0, 1.0, 1.0]


@needs_torch
def test_multinomial_method():
    p = ember.tensor([0.0, 1.0, 0.0])
    assert p.multinomial(2, True).tolist() == [1, 1]
    assert p.multinomial(1).dtype == ember.int64


def test_hardshrink_functional_unchanged():
    x = ember.tensor([-1.0, -0.2, 0.3, 2.0])
    assert ember.nn.functional.hardshrink(x).tolist() == x.hardshrink().tolist()
    assert re.search("hardshrink", ember.hardshrink.__name__)


@pytest.mark.parametrize(
    "fn,exc,msg",
    [
        (lambda m: m.zeros(2, 2).eig(), RuntimeError, "deprecated since version 1.9 and is now"),
        (lambda m: m.zeros(2, 2).lstsq(m.zeros(2, 2)), RuntimeError, "`torch.lstsq` is deprec"),
        (lambda m: m.zeros(2, 2).solve(m.zeros(2, 2)), RuntimeError, "`torch.solve` is deprec"),
        (lambda m: m.zeros(2, 2).symeig(), RuntimeError, "deprecated since version 1.9 and is"),
        (lambda m: m.zeros(2).reinforce(1), RuntimeError, "reinforce() was removed."),
        (lambda m: m.zeros(2).xpu(), AssertionError, "Torch not compiled with XPU enabled"),
        (lambda m: m.zeros(2).mtia(), AssertionError, "Torch not compiled with MTIA enabled"),
        (lambda m: m.zeros(2).ipu(), RuntimeError, "not linked with support for ipu devices"),
    ],
)
def test_removed_and_absent_backends(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


@needs_torch
def test_dense_predicates_match_torch():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for m in (ember, torch):
        x = m.tensor(a)
        assert x.to_dense() is x
        assert x.to_dense(m.float64).dtype == m.float64
        assert (x.dense_dim(), x.sparse_dim(), x.is_distributed()) == (2, 0, False)
        assert x.is_set_to(x) and x.is_set_to(x.view(2, 3))
        assert not x.is_set_to(x.clone()) and not x.is_set_to(x.t())
        assert not x.is_set_to(x.view(3, 2))
        with pytest.warns(UserWarning, match="volatile was removed"):
            assert x.volatile is False


@needs_torch
def test_orgqr_ormqr_methods():
    a = np.random.RandomState(0).rand(4, 3)
    c = np.random.RandomState(1).rand(4, 2)
    res = []
    for m in (ember, torch):
        h, tau = m.geqrf(m.tensor(a))
        res.append((h.orgqr(tau).numpy(), h.ormqr(tau, m.tensor(c), True, True).numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], atol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], atol=1e-10)


@needs_torch
def test_as_strided_inplace_matches_torch():
    res = []
    for m in (ember, torch):
        x = m.arange(6.0, dtype=m.float64, requires_grad=True)
        y = x * 1
        r = y.as_strided_((2, 2), (1, 2), 1)
        assert r is y and y.stride() == (1, 2) and y._version == 1
        y.backward(m.tensor([[1.0, 2], [3, 4]], dtype=m.float64))
        q = m.arange(6.0)
        q.as_strided_((2,), (2,), 1)
        res.append((y.detach().numpy(), x.grad.numpy(), q.numpy()))
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_as_strided_inplace_gradcheck():
    def f(x):
        y = x * 1
        return y.as_strided_((2, 2), (1, 2), 1) * y.sum()

    x = ember.rand(6, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(f, (x,))


@needs_torch
def test_set_matches_torch():
    for m in (ember, torch):
        z, w = m.arange(6.0), m.ones(2)
        assert z.set_(w) is z and z.data_ptr() == w.data_ptr() and z.shape == w.shape
        assert (z._version, w._version) == (1, 0)
        z.add_(1)
        assert w.tolist() == [2.0, 2.0]
        assert tuple(m.zeros(3).set_().shape) == (0,)


@pytest.mark.parametrize(
    "fn,msg",
    [
        (lambda m: m.zeros(2, requires_grad=True).set_(m.ones(2)), "a leaf Variable that"),
        (lambda m: m.zeros(4, requires_grad=True).as_strided_((2,), (1,)), "a leaf Variable"),
        (
            lambda m: m.zeros(2).set_(m.zeros(2, dtype=m.int64)),
            "Could not set tensor of type long int to a tensor of type float",
        ),
    ],
)
def test_set_and_as_strided_errors(fn, msg):
    raises_like_torch(fn, RuntimeError, msg)


def test_share_memory_survives_fork():
    import os

    z = ember.zeros(3)
    assert not z.is_shared()
    assert z.share_memory_() is z and z.is_shared() and z[1:].is_shared()
    assert z.share_memory_() is z  # already shared: a no-op
    if not hasattr(os, "fork"):  # pragma: no cover
        return
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        z[1] = 5.0
        os._exit(0)
    os.waitpid(pid, 0)
    assert z.tolist() == [0.0, 5.0, 0.0]
