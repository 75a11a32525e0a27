"""Winograd F(2x2, 3x3) convolutions (core/kernels/winograd.py and the _conv_wino route of
core/ops/convolution.py): the kernels against torch's conv2d (values, input/weight/bias gradients
with a non-uniform upstream gradient) over a grid of shapes, float32 and float64; which calls take
the route; F.conv2d parity, gradcheck and gradgradcheck through it."""

from __future__ import annotations

import itertools

import ember
import ember.core.ops.convolution as conv_ops
import numpy as np
import pytest
from ember.core.kernels import winograd
from ember.core.kernels.winograd import (
    wino_backward,
    wino_forward,
    wino_input_transform,
    wino_out_size,
)
from harness import A, Case, needs_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover - parity checks skip without the oracle
    torch = None


# the tolerances of tests/test_nn_conv.py: float32 values 1e-4, gradients 10x (harness)
TOL = {"float32": (1e-4, 1e-4), "float64": (1e-5, 1e-4)}


def _grid():
    """(N, C, O, H, W, padding, bias) rows: even and odd sizes down to the smallest output,
    paddings 0/1/2 (and unequal per dim), 1..3 images, 1..8 channels."""
    spatial = [(2, 2), (3, 3), (4, 4), (5, 7), (6, 5), (8, 9), (9, 8)]
    rows = []
    for k, ((h, w), p) in enumerate(itertools.product(spatial, (0, 1, 2, (1, 2)))):
        ph, pw = p if isinstance(p, tuple) else (p, p)
        if h + 2 * ph < 3 or w + 2 * pw < 3:
            continue  # no output at all
        n = 1 + k % 3
        c = (1, 3, 8, 5)[k % 4]
        o = (2, 8, 1, 4, 7)[k % 5]
        rows.append((n, c, o, h, w, (ph, pw), k % 2 == 0))
    return rows


GRID = _grid()


@needs_torch
@pytest.mark.parametrize("chunks", ["whole-batch", "one-sample-chunks"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("row", GRID, ids=lambda r: "n{}c{}o{}-{}x{}-p{}-{}".format(*r[:6], r[6]))
def test_kernels_match_torch(row, dtype, chunks, monkeypatch):
    if chunks == "one-sample-chunks":  # the products of each sample in a chunk of their own
        monkeypatch.setattr(winograd, "_CHUNK_BYTES", 1)
    n, c, o, h, w, padding, with_bias = row
    rng = np.random.default_rng(hash(row) % 2**32)
    x = rng.uniform(-2, 2, (n, c, h, w)).astype(dtype)
    wt = rng.uniform(-1, 1, (o, c, 3, 3)).astype(dtype)
    b = rng.uniform(-1, 1, o).astype(dtype) if with_bias else None
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(wt, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True) if with_bias else None
    ty = torch.nn.functional.conv2d(tx, tw, tb, padding=padding)
    up = rng.uniform(0.5, 1.5, tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(up))

    ho, wo, _, _ = wino_out_size((h, w), padding)
    v = wino_input_transform(np, x, padding)
    y = wino_forward(np, v, wt, n, ho, wo, b)
    assert y.dtype == np.dtype(dtype) and y.shape == tuple(ty.shape)
    atol, rtol = TOL[dtype]
    np.testing.assert_allclose(y, ty.detach().numpy(), atol=atol, rtol=rtol)
    gx, gw, *gb = wino_backward(np, up, v, wt, (h, w), padding, True, True, with_bias)
    assert gx.dtype == gw.dtype == np.dtype(dtype)
    np.testing.assert_allclose(gx, tx.grad.numpy(), atol=10 * atol, rtol=10 * rtol)
    np.testing.assert_allclose(gw, tw.grad.numpy(), atol=10 * atol, rtol=10 * rtol)
    if with_bias:
        np.testing.assert_allclose(gb[0], tb.grad.numpy(), atol=10 * atol, rtol=10 * rtol)
    # only the gradients asked for, in order
    (gw_only,) = wino_backward(np, up, v, wt, (h, w), padding, False, True, False)
    np.testing.assert_array_equal(gw_only, gw)
    (gx_only,) = wino_backward(np, up, v, wt, (h, w), padding, True, False, False)
    np.testing.assert_array_equal(gx_only, gx)


# ---------------------------------------------------------------------- routing
@pytest.fixture
def spy(monkeypatch):
    """Counts the Winograd input transforms (one per convolution routed to Winograd)."""
    calls = []
    real = conv_ops._wino_input

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(conv_ops, "_wino_input", counted)
    return calls


@pytest.fixture
def always(monkeypatch):
    """Every eligible call takes the Winograd route, however small (the speed thresholds off)."""
    monkeypatch.setattr(conv_ops, "_WINO_MIN_IN", 1)
    monkeypatch.setattr(conv_ops, "_WINO_WIDE_IN", 1)
    monkeypatch.setattr(conv_ops, "_WINO_MIN_TILES", 0)


def _conv(x_shape, w_shape, dtype=ember.float32, grad=True, **kw):
    x = ember.randn(*x_shape, dtype=dtype, requires_grad=grad)
    w = ember.randn(*w_shape, dtype=dtype, requires_grad=grad)
    return ember.nn.functional.conv2d(x, w, **kw)


def test_route_taken_for_eligible_call(spy):
    y = _conv((4, 16, 12, 12), (16, 16, 3, 3), padding=1)
    assert y.grad_fn.op.name == "_conv_wino"
    x = ember.randn(4, 16, 12, 12)
    w = ember.randn(8, 16, 3, 3, requires_grad=True)
    b = ember.randn(8, requires_grad=True)
    assert ember.nn.functional.conv2d(x, w, b).grad_fn.op.name == "_conv_wino_bias"
    assert len(spy) == 2
    # no grad at all: the same route
    with ember.no_grad():
        _conv((4, 16, 12, 12), (16, 16, 3, 3), padding=1)
    _conv((4, 16, 12, 12), (16, 16, 3, 3), dtype=ember.float64, grad=False)
    assert len(spy) == 4


@pytest.mark.parametrize(
    "x_shape, w_shape, kw",
    [
        ((4, 16, 12, 12), (16, 16, 3, 3), {"stride": 2, "padding": 1}),
        ((4, 16, 12, 12), (16, 16, 3, 3), {"dilation": 2}),
        ((4, 16, 12, 12), (16, 8, 3, 3), {"groups": 2}),
        ((4, 16, 12, 12), (16, 16, 5, 5), {}),
        ((4, 16, 12, 12), (16, 16, 3, 1), {}),
        ((4, 16, 3, 12), (16, 16, 3, 3), {}),  # a single output row
        ((4, 1, 28, 28), (32, 1, 3, 3), {"padding": 1}),  # 1-channel stem: im2col is faster
        ((4, 3, 32, 32), (32, 3, 3, 3), {"padding": 1}),  # more outputs than inputs
        ((1, 64, 2, 2), (64, 64, 3, 3), {"padding": 1}),  # too few tiles
    ],
)
def test_route_not_taken(spy, x_shape, w_shape, kw):
    y = _conv(x_shape, w_shape, **kw)
    assert y.grad_fn.op.name != "_conv_wino"
    assert not spy


def test_route_not_taken_for_conv1d_conv3d_and_halves(spy, always):
    ember.nn.functional.conv1d(ember.randn(2, 4, 9), ember.randn(4, 4, 3))
    ember.nn.functional.conv3d(ember.randn(1, 2, 4, 4, 4), ember.randn(2, 2, 3, 3, 3))
    _conv((2, 4, 6, 6), (4, 4, 3, 3), dtype=ember.float16, grad=False)
    assert not spy
    _conv((2, 4, 6, 6), (4, 4, 3, 3))
    assert len(spy) == 1


# ---------------------------------------------------------------------- through F.conv2d
def _f_case(name, x_shape, o, dtype="float32", bias=True, **kw):
    c = x_shape[-3]
    ins = [A(*x_shape, dtype=dtype), A(o, c, 3, 3, dtype=dtype, seed=1)]
    if bias:
        ins.append(A(o, dtype=dtype, seed=2))

    def run(m, x, w, b=None):
        return m.nn.functional.conv2d(x, w, b, **kw)

    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}
    return Case(f"{name}-{dtype}", run, ins, **tol)


F_CASES = [
    _f_case("pad1", (2, 5, 6, 7), 4, padding=1),
    _f_case("pad0-nobias", (3, 4, 5, 8), 6, bias=False),
    _f_case("pad2", (1, 3, 4, 4), 3, dtype="float64", padding=2),
    _f_case("pad-hw", (2, 2, 5, 3), 2, padding=(2, 1)),
    _f_case("unbatched", (6, 5, 5), 4, padding=1),
    _f_case("unbatched", (3, 2, 7), 2, dtype="float64", bias=False, padding=1),
    _f_case("same", (2, 3, 6, 5), 5, padding="same"),
    _f_case("valid-2x2-out", (2, 3, 4, 4), 3, padding="valid"),
    _f_case("2x2-in", (1, 8, 2, 2), 8, dtype="float64", padding=1),
]


@needs_torch
@pytest.mark.parametrize("case", F_CASES, ids=str)
def test_conv2d_parity(case, always, spy):
    run_case(case)
    assert len(spy) == 1


@needs_torch
def test_conv2d_parity_default_thresholds(spy):
    run_case(_f_case("resnet-like", (4, 16, 10, 10), 16, padding=1))
    run_case(_f_case("resnet-like", (2, 8, 9, 11), 8, dtype="float64", bias=False, padding=1))
    assert len(spy) == 2


@needs_torch
def test_conv2d_module_padding_modes(always, spy):
    """Conv2d's reflect/replicate/circular padding is applied before the (unpadded) Winograd
    convolution."""
    for mode in ("zeros", "reflect", "replicate", "circular"):
        torch.manual_seed(0)
        t = torch.nn.Conv2d(4, 6, 3, padding=1, padding_mode=mode)
        e = ember.nn.Conv2d(4, 6, 3, padding=1, padding_mode=mode)
        e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
        x = np.random.default_rng(3).uniform(-1, 1, (2, 4, 7, 6)).astype("float32")
        np.testing.assert_allclose(
            e(ember.tensor(x)).detach().numpy(),
            t(torch.tensor(x)).detach().numpy(),
            atol=1e-4,
            rtol=1e-4,
        )
    assert len(spy) == 4


GRAD_CASES = [
    _f_case("gc-pad1", (2, 3, 5, 4), 2, dtype="float64", padding=1),
    _f_case("gc-pad0", (1, 2, 4, 5), 3, dtype="float64", bias=False),
    _f_case("gc-unbatched", (2, 4, 4), 2, dtype="float64", padding=2),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradcheck_gradgradcheck(case, always, spy):
    run_gradcheck(case, gradgrad=True)
    assert spy


def test_double_backward_matches_im2col(always, monkeypatch):
    """create_graph through a Winograd convolution: second derivatives (the im2col ops) equal
    those of the im2col route."""

    def second(route: bool):
        if not route:
            monkeypatch.setattr(conv_ops, "_WINO_MIN_IN", 10**9)
        g = np.random.default_rng(5)
        x = ember.tensor(g.uniform(-1, 1, (2, 3, 6, 5)), requires_grad=True)
        w = ember.tensor(g.uniform(-1, 1, (4, 3, 3, 3)), requires_grad=True)
        b = ember.tensor(g.uniform(-1, 1, 4), requires_grad=True)
        y = ember.nn.functional.conv2d(x, w, b, padding=1)
        assert (y.grad_fn.op.name == "_conv_wino_bias") == route
        gx, gw, gb = ember.autograd.grad((y * y).sum(), (x, w, b), create_graph=True)
        s = (gx * gx).sum() + (gw * gw).sum() + (gb * gb).sum()
        return [t.numpy() for t in ember.autograd.grad(s, (x, w, b))]

    wino = second(True)
    for a, b in zip(wino, second(False)):
        np.testing.assert_allclose(a, b, atol=1e-10, rtol=1e-10)


def test_weight_or_bias_only_gradients(always):
    """Only the gradients asked for are computed, and equal those of the full backward."""
    g = np.random.default_rng(2)
    xa, wa, ba = (
        g.standard_normal((2, 3, 6, 6)),
        g.standard_normal((4, 3, 3, 3)),
        g.standard_normal(4),
    )
    full = [ember.tensor(a, requires_grad=True) for a in (xa, wa, ba)]
    ember.nn.functional.conv2d(*full, padding=1).pow(2).sum().backward()
    for k in range(3):
        ts = [ember.tensor(a, requires_grad=(i == k)) for i, a in enumerate((xa, wa, ba))]
        ember.nn.functional.conv2d(*ts, padding=1).pow(2).sum().backward()
        np.testing.assert_allclose(ts[k].grad.numpy(), full[k].grad.numpy(), rtol=1e-12)
        assert all(t.grad is None for i, t in enumerate(ts) if i != k)


def test_strict_cuda_dispatch(always, spy):
    """The Winograd kernels stay on the device array module (a strict fake cupy): values,
    gradients and double backward equal the host's."""
    from strict_backend import StrictArray, strict_cuda

    rng = np.random.default_rng(4)
    arrays = [
        rng.standard_normal((2, 3, 5, 6)),
        rng.standard_normal((4, 3, 3, 3)),
        rng.uniform(size=4),
    ]

    def run(cuda):
        x, w, b = (
            ember.tensor(a, device="cuda" if cuda else None).requires_grad_() for a in arrays
        )
        y = ember.nn.functional.conv2d(x, w, b, padding=1)
        (y * y).sum().backward(retain_graph=True)  # the Winograd backward
        gx, gw = ember.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        (ggx,) = ember.autograd.grad((gx * gx).sum() + gw.sum(), (x,))
        return y, gx, gw, ggx, x.grad, w.grad, b.grad

    ref = run(False)
    with strict_cuda():
        got = run(True)
    for g, r in zip(got, ref):
        assert type(g._data) is StrictArray
        np.testing.assert_allclose(np.asarray(g.cpu()._data), r._data, atol=1e-10)
    assert len(spy) == 2


@needs_torch
def test_non_contiguous_input_and_weight(always, spy):
    """Strided (channels-last, sliced) inputs and a transposed weight give torch's values."""
    rng = np.random.default_rng(6)
    xa = rng.uniform(-1, 1, (2, 7, 9, 5)).astype("float32")  # NHWC data
    wa = rng.uniform(-1, 1, (3, 3, 5, 4)).astype("float32")  # (kh, kw, C, O) data

    def run(m):
        x = m.tensor(xa).permute(0, 3, 1, 2)[:, :, 1:, ::2].requires_grad_()
        w = m.tensor(wa).permute(3, 2, 0, 1).requires_grad_()
        y = m.nn.functional.conv2d(x, w, padding=1)
        y.backward(m.tensor(np.linspace(0.5, 1.5, y.numel(), dtype="float32").reshape(y.shape)))
        return [t.detach().numpy() for t in (y, x.grad, w.grad)]

    for e, t in zip(run(ember), run(torch)):
        np.testing.assert_allclose(e, t, atol=1e-4, rtol=1e-4)
    assert len(spy) == 1


@pytest.mark.skipif(torch is None, reason="torch is not installed (the parity oracle)")
def test_non_finite_values_take_im2col(always, spy):
    # Winograd's transforms subtract neighbours: an inf input, weight or output gradient would
    # give NaN where the direct convolution gives inf (or a finite value), so those take im2col
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 8, 6, 6)).astype(np.float32)
    w = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    bad_x, bad_w = x.copy(), w.copy()
    bad_x[0, 0, 4, 4] = np.inf
    bad_w[1, 2, 0, 0] = -np.inf
    # (padding 0 for the inf weight: im2col multiplies it by the padded zeros, inf * 0 = NaN,
    # where torch skips the padding; a limit of the im2col route, not of this one)
    for xa, wa, p in ((bad_x, w, 1), (x, bad_w, 0)):
        ye = ember.nn.functional.conv2d(ember.tensor(xa), ember.tensor(wa), padding=p)
        yt = torch.nn.functional.conv2d(torch.tensor(xa), torch.tensor(wa), padding=p)
        np.testing.assert_array_equal(np.isnan(ye.numpy()), np.isnan(yt.numpy()))
        np.testing.assert_array_equal(np.isinf(ye.numpy()), np.isinf(yt.numpy()))
    assert not spy
    # finite forward (Winograd), an inf upstream gradient: the input gradient as im2col's
    g = np.ones((2, 8, 6, 6), np.float32)
    g[1, 3, 2, 2] = np.inf
    grads = []
    for m in (ember, torch):
        xt = m.tensor(x, requires_grad=True)
        m.nn.functional.conv2d(xt, m.tensor(w), padding=1).backward(m.tensor(g))
        grads.append(xt.grad.numpy())
    assert len(spy) == 1
    np.testing.assert_array_equal(np.isnan(grads[0]), np.isnan(grads[1]))
    np.testing.assert_array_equal(np.isinf(grads[0]), np.isinf(grads[1]))
