"""The cpu fast paths of convolutions and batch norm, against torch: the direct depthwise
convolution (core/kernels/depthwise.py: values, input/weight/bias gradients with a non-uniform
upstream gradient, strides, paddings, dilations, odd sizes, channels_last and non-contiguous
inputs, float64 gradcheck and gradgradcheck), which calls take it, im2col as one strided copy and
col2im's non-overlapping copy (1x1 stride-2 shortcuts, kernels no larger than their stride), the
per-sample products of small-K stems (forward, and weight/bias gradients without the
channels-first copy), the BLAS finiteness check that routes inf/NaN around Winograd, and batch
norm's BLAS sums."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.core.kernels import depthwise
from ember.core.ops import convolution as conv_ops
from harness import A, Case, needs_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover - parity checks skip without the oracle
    torch = None


def F(m):
    return m.nn.functional


@pytest.fixture(autouse=True)
def _direct_depthwise_at_any_size(monkeypatch):
    """The small tensors of these tables take the direct depthwise path too (the size threshold
    off; test_depthwise_route checks it)."""
    monkeypatch.setattr(conv_ops, "_DW_MIN_SIZE", 0)


# ---------------------------------------------------------------------- depthwise: parity
def _dw_case(n, c, sp, k, dtype="float32", bias=True, **kw):
    sp = sp if isinstance(sp, tuple) else (sp, sp)
    k = k if isinstance(k, tuple) else (k, k)
    ins = [A(n, c, *sp, dtype=dtype), A(c, 1, *k, dtype=dtype, seed=1)]
    if bias:
        ins.append(A(c, dtype=dtype, seed=2))
    name = f"dw-{dtype}-n{n}c{c}-{sp}-k{k}-{'b' if bias else 'nob'}-" + ",".join(
        f"{a}={v}" for a, v in kw.items()
    )

    def run(m, x, w, b=None):
        return F(m).conv2d(x, w, b, groups=c, **kw)

    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}
    return Case(name, run, ins, **tol)


DW_CASES = [
    _dw_case(2, 3, 7, 3, padding=1),
    _dw_case(2, 4, (9, 6), 3, dtype="float64", padding=1),
    _dw_case(2, 3, 8, 3, stride=2, padding=1),
    _dw_case(3, 2, (7, 9), 3, stride=2, padding=1, bias=False),  # odd sizes, stride 2
    _dw_case(1, 5, (10, 7), 3, dtype="float64", stride=(2, 1), padding=(0, 1)),
    _dw_case(2, 3, 9, 3, dilation=2, padding=2),
    _dw_case(2, 3, 11, (3, 2), dtype="float64", stride=(3, 2), dilation=(2, 1), padding=(2, 0)),
    _dw_case(2, 2, 8, 5, padding=2),
    _dw_case(2, 4, 6, (3, 1), padding=(1, 0), bias=False),
    _dw_case(2, 3, 5, 3),  # no padding
    _dw_case(1, 3, 3, 3, padding=1, dtype="float64"),  # a 3x3 map
    _dw_case(2, 3, 6, 2, stride=2),  # windows that do not overlap
    _dw_case(2, 3, 7, 3, padding="same"),
    _dw_case(2, 3, 6, 4, padding="same", dtype="float64"),  # asymmetric 'same'
]


@needs_torch
@pytest.mark.parametrize("case", DW_CASES, ids=str)
def test_depthwise_parity(case):
    run_case(case)


GRADCHECK_CASES = [
    _dw_case(1, 2, 5, 3, dtype="float64", padding=1),
    _dw_case(2, 2, (5, 6), 3, dtype="float64", stride=2, padding=1, bias=False),
    _dw_case(1, 3, 6, (2, 3), dtype="float64", stride=(1, 2), dilation=(2, 1), padding=(1, 0)),
]


@pytest.mark.parametrize("case", GRADCHECK_CASES, ids=str)
def test_depthwise_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


@needs_torch
@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_gradients_large_batch(stride):
    # a size where every phase plane and shift of the kernels is exercised many times over
    rng = np.random.default_rng(stride)
    x = rng.standard_normal((4, 16, 15, 13)).astype(np.float32)
    w = rng.standard_normal((16, 1, 3, 3)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    outs = {}
    for m in (ember, torch):
        tx, tw, tb = (m.tensor(a, requires_grad=True) for a in (x, w, b))
        y = F(m).conv2d(tx, tw, tb, stride=stride, padding=1, groups=16)
        up = np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)).astype(np.float32)
        y.backward(m.tensor(up))
        outs[m] = [a.detach().numpy() for a in (y, tx.grad, tw.grad, tb.grad)]
    for e, t in zip(outs[ember], outs[torch]):
        assert e.dtype == t.dtype and e.shape == t.shape
        np.testing.assert_allclose(e, t, atol=1e-4, rtol=1e-4)


@needs_torch
def test_depthwise_channels_last_and_strided_inputs():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 7, 8)).astype(np.float32)
    w = rng.standard_normal((6, 1, 3, 3)).astype(np.float32)
    res = {}
    for m in (ember, torch):
        tx = m.tensor(x).to(memory_format=m.channels_last).requires_grad_(True)
        tw = m.tensor(w, requires_grad=True)
        y = F(m).conv2d(tx, tw, padding=1, groups=6)
        assert y.is_contiguous(memory_format=m.channels_last)
        y.backward(m.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape))).float())
        assert tx.grad.is_contiguous(memory_format=m.channels_last)
        # a non-contiguous (transposed-back) input
        xs = m.tensor(np.ascontiguousarray(x.swapaxes(2, 3))).transpose(2, 3)
        z = F(m).conv2d(xs, tw.detach(), stride=2, padding=1, groups=6)
        res[m] = [a.detach().numpy() for a in (y, tx.grad, tw.grad, z)]
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e, t, atol=1e-4, rtol=1e-4)


@needs_torch
def test_depthwise_unbatched_and_module():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    tm = torch.nn.Conv2d(4, 4, 3, padding=1, groups=4)
    em = ember.nn.Conv2d(4, 4, 3, padding=1, groups=4)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    ye, yt = em(ember.tensor(x)), tm(torch.tensor(x))
    assert tuple(ye.shape) == tuple(yt.shape) == (4, 6, 5)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), atol=1e-5, rtol=1e-5)


def test_kernels_match_the_generic_path_exactly_in_float64():
    # the direct kernels against the im2col route (forced), float64: equal to rounding
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 9, 8))
    w = rng.standard_normal((5, 1, 3, 3))
    g = rng.standard_normal((2, 5, 5, 8))
    y = depthwise.dw_forward(np, x, w, (2, 1), (1, 1), (1, 1))
    gx, gw = depthwise.dw_backward(np, g, x, w, (2, 1), (1, 1), (1, 1), True, True, False)
    ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    cols = conv_ops._im2col(ex.detach(), (3, 3), (2, 1), (1, 1), (1, 1))
    ref = conv_ops._conv_cols(ex, cols, ew, 5, (2, 1), (1, 1), (1, 1))
    ref.backward(ember.tensor(g))
    np.testing.assert_allclose(y, ref.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(gx, ex.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(gw, ew.grad.numpy(), atol=1e-12)
    # only what is asked for, in order
    (gw_only,) = depthwise.dw_backward(np, g, x, w, (2, 1), (1, 1), (1, 1), False, True, False)
    np.testing.assert_array_equal(gw_only, gw)


# ---------------------------------------------------------------------- depthwise: routing
def _route(x_shape, w_shape, dtype=ember.float32, **kw):
    x = ember.randn(*x_shape, dtype=dtype, requires_grad=True)
    w = ember.randn(*w_shape, dtype=dtype, requires_grad=True)
    return F(ember).conv2d(x, w, **kw).grad_fn.op.name  # the kernel that ran (not torch's name)


def test_depthwise_route():
    assert _route((2, 4, 6, 6), (4, 1, 3, 3), groups=4, padding=1) == "_conv_dw"
    x = ember.randn(2, 4, 6, 6)
    w = ember.randn(4, 1, 3, 3, requires_grad=True)
    b = ember.randn(4, requires_grad=True)
    assert F(ember).conv2d(x, w, b, groups=4).grad_fn.op.name == "_conv_dw_bias"
    # not depthwise, or not this route: channel multiplier 2, grouped, ungrouped, half, conv1d
    assert _route((2, 4, 6, 6), (8, 1, 3, 3), groups=4) != "_conv_dw"
    assert _route((2, 4, 6, 6), (4, 2, 3, 3), groups=2) != "_conv_dw"
    assert _route((2, 1, 6, 6), (1, 1, 3, 3)) != "_conv_dw"
    with ember.no_grad():
        y = F(ember).conv2d(
            ember.randn(2, 4, 6, 6, dtype=ember.float16),
            ember.randn(4, 1, 3, 3, dtype=ember.float16),
            groups=4,
        )
    assert y.dtype == ember.float16
    x1 = ember.randn(2, 4, 9, requires_grad=True)
    y1 = F(ember).conv1d(x1, ember.randn(4, 1, 3), groups=4)
    assert y1.grad_fn.op.name != "_conv_dw"


def test_depthwise_route_size_threshold(monkeypatch):
    monkeypatch.setattr(conv_ops, "_DW_MIN_SIZE", 4096)
    assert _route((2, 8, 16, 16), (8, 1, 3, 3), groups=8, padding=1) == "_conv_dw"
    assert _route((2, 8, 8, 8), (8, 1, 3, 3), groups=8, padding=1) == "_conv_cols"


@needs_torch
def test_depthwise_double_backward_matches_torch():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 6, 5))
    w = rng.standard_normal((3, 1, 3, 3))
    res = {}
    for m in (ember, torch):
        tx, tw = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        y = F(m).conv2d(tx, tw, stride=(2, 1), padding=1, groups=3)
        (gx,) = m.autograd.grad((y * y).sum(), tx, create_graph=True)
        (gx * gx).sum().backward()
        res[m] = [a.detach().numpy() for a in (gx, tx.grad, tw.grad)]
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e, t, atol=1e-10, rtol=1e-10)


def test_depthwise_on_the_strict_device_backend():
    from strict_backend import strict_cuda

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    w = rng.standard_normal((3, 1, 3, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    res = []
    for cuda in (False, True):
        ctx = strict_cuda() if cuda else None
        if ctx is not None:
            ctx.__enter__()
        try:
            dev = "cuda" if cuda else "cpu"
            tx, tw, tb = (ember.tensor(a, device=dev, requires_grad=True) for a in (x, w, b))
            y = F(ember).conv2d(tx, tw, tb, stride=2, padding=1, groups=3)
            y.backward(ember.ones_like(y))
            res.append([a.detach().cpu().numpy() for a in (y, tx.grad, tw.grad, tb.grad)])
        finally:
            if ctx is not None:
                ctx.__exit__(None, None, None)
    for e, t in zip(*res):
        np.testing.assert_allclose(e, t, atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------- im2col / col2im
def _conv_case(n, c, sp, o, k, dtype="float32", bias=True, **kw):
    sp = sp if isinstance(sp, tuple) else (sp, sp)
    k = k if isinstance(k, tuple) else (k, k)
    g = kw.get("groups", 1)
    ins = [A(n, c, *sp, dtype=dtype), A(o, c // g, *k, dtype=dtype, seed=1)]
    if bias:
        ins.append(A(o, dtype=dtype, seed=2))
    name = f"conv-{dtype}-{sp}-o{o}-k{k}-" + ",".join(f"{a}={v}" for a, v in kw.items())

    def run(m, x, w, b=None):
        return F(m).conv2d(x, w, b, **kw)

    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}
    return Case(name, run, ins, **tol)


IM2COL_CASES = [
    _conv_case(2, 4, 8, 6, 1, stride=2, bias=False),  # the ResNet shortcut
    _conv_case(2, 4, 7, 6, 1, stride=2, padding=1, dtype="float64"),  # odd size, padded
    _conv_case(2, 3, 8, 5, 2, stride=2),  # windows tile the input
    _conv_case(2, 3, 10, 5, 2, stride=3, dilation=2, dtype="float64"),  # gaps between windows
    _conv_case(2, 3, 9, 4, 3, stride=2, padding=1),  # overlapping windows
    _conv_case(1, 6, (7, 5), 4, (3, 2), stride=(2, 3), padding=(1, 0), groups=2),
    _conv_case(3, 2, 5, 3, 3, dilation=2, padding=2, dtype="float64"),
]


@needs_torch
@pytest.mark.parametrize("case", IM2COL_CASES, ids=str)
def test_im2col_col2im_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", IM2COL_CASES[1:4], ids=str)
def test_im2col_col2im_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


@needs_torch
def test_conv_transpose_with_stride_beyond_kernel():
    # the transposed convolution's output is col2im of its columns: gaps between the windows
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 2, 2)).astype(np.float32)
    res = {}
    for m in (ember, torch):
        tx, tw = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        y = F(m).conv_transpose2d(tx, tw, stride=3, padding=1)
        y.backward(m.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape))).float())
        res[m] = [a.detach().numpy() for a in (y, tx.grad, tw.grad)]
    for e, t in zip(res[ember], res[torch]):
        assert e.shape == t.shape
        np.testing.assert_allclose(e, t, atol=1e-5, rtol=1e-5)


@needs_torch
def test_unfold_matches_torch():
    x = np.random.default_rng(9).standard_normal((2, 3, 7, 6)).astype(np.float32)
    e = F(ember).unfold(ember.tensor(x), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    t = F(torch).unfold(torch.tensor(x), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    np.testing.assert_array_equal(e.numpy(), t.numpy())


# ---------------------------------------------------------------------- small-K stems
def _stem_case(n, c, sp, o, k, dtype="float32", bias=True, x_grad=False, **kw):
    sp = sp if isinstance(sp, tuple) else (sp, sp)
    k = k if isinstance(k, tuple) else (k, k)
    ins = [A(n, c, *sp, dtype=dtype, grad=x_grad), A(o, c, *k, dtype=dtype, seed=1)]
    if bias:
        ins.append(A(o, dtype=dtype, seed=2))
    name = f"stem-{dtype}-c{c}-{sp}-o{o}-k{k}-xg{x_grad}-" + ",".join(
        f"{a}={v}" for a, v in kw.items()
    )

    def run(m, x, w, b=None):
        return F(m).conv2d(x, w, b, **kw)

    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}
    return Case(name, run, ins, **tol)


STEM_CASES = [
    _stem_case(3, 1, 9, 4, 3, padding=1),  # the CNN's stem: weight and bias gradients only
    _stem_case(2, 1, (7, 8), 5, 3, dtype="float64", bias=False),
    _stem_case(2, 2, 7, 3, 2, stride=2),  # 8 columns per output
    _stem_case(2, 3, 6, 4, 3, padding=1),  # 27 columns: the regular forward
    _stem_case(2, 4, 6, 4, 3, padding=1, dtype="float64"),  # 36 columns: the regular path
    _stem_case(2, 1, 6, 3, 3, x_grad=True, padding=1),  # an input gradient too
    _stem_case(2, 4, 5, 6, 1, x_grad=True),  # 1x1, 4 columns: the forward per sample
    _stem_case(2, 4, 5, 6, 1, dtype="float64", bias=False),
]


@needs_torch
@pytest.mark.parametrize("case", STEM_CASES, ids=str)
def test_small_k_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", [STEM_CASES[1], STEM_CASES[2]], ids=str)
def test_small_k_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_small_k_route(monkeypatch):
    calls = []
    real = conv_ops._conv_small_k_grads

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(conv_ops, "_conv_small_k_grads", counted)
    w = ember.randn(4, 1, 3, 3, requires_grad=True)
    F(ember).conv2d(ember.randn(2, 1, 6, 6), w, padding=1).sum().backward()
    assert len(calls) == 1
    # an input gradient, more columns, or create_graph: the channels-first path
    F(ember).conv2d(ember.randn(2, 1, 6, 6, requires_grad=True), w).sum().backward()
    F(ember).conv2d(
        ember.randn(2, 4, 6, 6), ember.randn(4, 4, 3, 3, requires_grad=True)
    ).sum().backward()
    y = F(ember).conv2d(ember.randn(2, 1, 6, 6), w)
    ember.autograd.grad(y.sum(), w, create_graph=True)
    assert len(calls) == 1


@needs_torch
def test_small_k_channels_last_stem():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 1, 6, 7)).astype(np.float32)
    w = rng.standard_normal((4, 1, 3, 3)).astype(np.float32)
    res = {}
    for m in (ember, torch):
        tx = m.tensor(x).to(memory_format=m.channels_last)
        tw = m.tensor(w).to(memory_format=m.channels_last).requires_grad_(True)
        y = F(m).conv2d(tx, tw, padding=1)
        y.backward(m.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape))).float())
        assert tw.grad.is_contiguous(memory_format=m.channels_last) == tw.is_contiguous(
            memory_format=m.channels_last
        )
        res[m] = [a.detach().numpy() for a in (y, tw.grad)]
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e, t, atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------- non-finite values
@needs_torch
@pytest.mark.parametrize("where", ["input", "grad"])
@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_winograd_sized_conv_with_non_finite_values(where, value):
    # arrays large enough (>= 16384 values) for the BLAS finiteness check; Winograd's transforms
    # would smear an inf into NaN beyond its window, so these calls must take im2col
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 16, 24, 24)).astype(np.float32)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    up = rng.uniform(0.5, 1.5, (2, 16, 24, 24)).astype(np.float32)
    {"input": x, "grad": up}[where][0, 3, 2, 1] = value
    res = {}
    for m in (ember, torch):
        tx, tw = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        y = F(m).conv2d(tx, tw, padding=1)
        y.backward(m.tensor(up))
        res[m] = [a.detach().numpy() for a in (y, tx.grad, tw.grad)]
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
        np.testing.assert_array_equal(np.isinf(e), np.isinf(t))
        fin = np.isfinite(t)
        np.testing.assert_allclose(e[fin], t[fin], atol=1e-2, rtol=1e-3)


# ---------------------------------------------------------------------- batch norm
def _bn_case(shape, dtype="float32", offset=0.0, scale=1.0):
    c = shape[1]
    ins = [A(*shape, dtype=dtype), A(c, dtype=dtype, seed=1), A(c, dtype=dtype, seed=2)]

    def run(m, x, w, b):
        return F(m).batch_norm(x * scale + offset, None, None, w, b, training=True)

    name = f"bn-{dtype}-{shape}-off{offset}"
    tol = {"atol": 1e-4, "rtol": 1e-3} if dtype == "float32" else {}
    return Case(name, run, ins, **tol)


BN_CASES = [
    _bn_case((4, 3, 5, 6)),
    _bn_case((4, 3, 5, 6), "float64"),
    _bn_case((8, 5, 7)),
    _bn_case((16, 4)),
    _bn_case((4, 3, 5, 6), offset=50.0),  # mean large against the spread: centred sums
    _bn_case((2, 3, 2, 2, 3), "float64", offset=-3.0, scale=0.1),
]


@needs_torch
@pytest.mark.parametrize("case", BN_CASES, ids=str)
def test_batch_norm_train_parity(case):
    run_case(case)


@needs_torch
def test_batch_norm_running_stats_and_channels_last():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 6, 5, 5)).astype(np.float32) * 3 + 1
    res = {}
    for m in (ember, torch):
        bn = m.nn.BatchNorm2d(6)
        tx = m.tensor(x).to(memory_format=m.channels_last).requires_grad_(True)
        y = bn(tx)
        assert y.is_contiguous(memory_format=m.channels_last)
        y.backward(m.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape))).float())
        res[m] = [
            a.detach().numpy()
            for a in (y, tx.grad, bn.weight.grad, bn.bias.grad, bn.running_mean, bn.running_var)
        ]
    for e, t in zip(res[ember], res[torch]):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, atol=1e-4, rtol=1e-4)


def test_batch_norm_gradcheck():
    run_gradcheck(_bn_case((3, 2, 3, 2), "float64"), gradgrad=True)


def test_depthwise_kept_planes_reused_and_not_kept_without_grad():
    # the forward's phase planes serve every backward through the graph (retain_graph), and the
    # weight gradient is the same as from planes made again from the input
    x = ember.randn(2, 4, 9, 7, requires_grad=True)
    w = ember.randn(4, 1, 3, 3, requires_grad=True)
    y = F(ember).conv2d(x, w, stride=2, padding=1, groups=4)
    up = ember.randn(*y.shape)
    y.backward(up, retain_graph=True)
    g1 = (x.grad.clone(), w.grad.clone())
    y.backward(up)
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), 2 * g1[1].numpy(), rtol=1e-6)
    (gw,) = depthwise.dw_backward(
        np, up.numpy(), x.detach().numpy(), w.detach().numpy(), (2, 2), (1, 1), (1, 1),
        False, True, False,
    )  # fmt: skip
    np.testing.assert_allclose(gw, g1[1].numpy(), rtol=1e-5, atol=1e-6)
    with ember.no_grad():
        z = F(ember).conv2d(x, w, padding=1, groups=4)
    assert z.grad_fn is None


@needs_torch
@pytest.mark.parametrize("groups, cin", [(1, 3), (4, 4)])
def test_empty_batch_gradients(groups, cin):
    # an empty batch: empty outputs and input gradients, zero weight gradients (stride-1 input
    # gradient path, and the direct depthwise path)
    res = {}
    for m in (ember, torch):
        x = m.zeros(0, cin, 5, 5, requires_grad=True)
        w = m.ones(4, cin // groups, 3, 3, requires_grad=True)
        y = F(m).conv2d(x, w, padding=1, groups=groups)
        y.sum().backward()
        res[m] = [tuple(y.shape), tuple(x.grad.shape), w.grad.numpy().tolist()]
    assert res[ember] == res[torch]
