"""Memory formats like torch's: Module.to(memory_format=), the *_like factories' preserve_format,
and CNN layers whose output (and input gradient) follow a channels_last input."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from harness import needs_torch, torch

pytestmark = needs_torch

X0 = np.random.RandomState(0).randn(2, 3, 6, 5).astype(np.float32)


def _cl(m):
    return m.tensor(X0).to(memory_format=m.channels_last)


def _layout(t, m):
    return (
        tuple(t.stride()),
        t.is_contiguous(),
        t.is_contiguous(memory_format=m.channels_last),
    )


# ---------------------------------------------------------------------- Module.to
@pytest.mark.parametrize(
    "make, args",
    [
        (lambda m: m.nn.Conv2d(3, 4, 3), {"memory_format": "channels_last"}),
        (lambda m: m.nn.Conv2d(3, 4, 3), {"dtype": "float64", "memory_format": "channels_last"}),
        (lambda m: m.nn.Conv2d(3, 4, 3), {"device": "cpu", "memory_format": "channels_last"}),
        (lambda m: m.nn.Conv3d(2, 3, 2), {"memory_format": "channels_last_3d"}),
        (lambda m: m.nn.Conv2d(3, 4, 3), {"memory_format": "contiguous_format"}),
        (lambda m: m.nn.Conv2d(3, 4, 3), {"memory_format": "preserve_format"}),
        (
            lambda m: m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.BatchNorm2d(4), m.nn.Linear(2, 2)),
            {"memory_format": "channels_last"},
        ),
    ],
)
def test_module_to_memory_format(make, args):
    got = {}
    for m in (ember, torch):
        kw = {k: getattr(m, v) if k != "device" else v for k, v in args.items()}
        mod = make(m).to(**kw)
        got[m] = [(n, tuple(p.stride()), str(p.dtype)[6:]) for n, p in mod.named_parameters()]
        got[m] += [(n, tuple(b.stride())) for n, b in mod.named_buffers()]
        assert all(isinstance(p, m.nn.Parameter) for p in mod.parameters())
    assert got[ember] == got[torch]


def test_module_to_memory_format_grad_and_errors():
    for m in (ember, torch):
        c = m.nn.Conv2d(3, 4, 3)
        w = c.weight
        c.weight.grad = m.ones_like(c.weight)
        c.to(memory_format=m.channels_last)
        assert c.weight is w  # the Parameter keeps its identity
        assert tuple(c.weight.stride()) == (27, 1, 9, 3)
        assert tuple(c.weight.grad.stride()) == (27, 1, 9, 3)
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            m.nn.Conv3d(2, 3, 2).to(memory_format=m.channels_last)
        with pytest.raises(TypeError, match="to\\(\\) received an invalid combination"):
            m.nn.Linear(2, 2).to(memory_format="channels_last")


# ---------------------------------------------------------------------- *_like
_INPUTS = {
    "contiguous": lambda m: m.tensor(X0),
    "transposed": lambda m: m.tensor(X0[0, 0]).t(),
    "permuted": lambda m: m.tensor(X0).permute(0, 2, 3, 1),
    "channels_last": _cl,
    "cl_sliced": lambda m: _cl(m)[:, :, ::2],  # not dense, strides like channels_last
    "sliced": lambda m: m.tensor(X0)[:, :, :, ::2],  # not dense: contiguous result
    "expanded": lambda m: m.tensor(X0[:1]).expand(3, 3, 6, 5),
    "size1": lambda m: m.tensor(X0[:1, :, :1]).permute(2, 0, 3, 1),
}
_LIKES = {
    "empty_like": lambda m, x, **k: m.empty_like(x, **k),
    "zeros_like": lambda m, x, **k: m.zeros_like(x, **k),
    "ones_like": lambda m, x, **k: m.ones_like(x, **k),
    "full_like": lambda m, x, **k: m.full_like(x, 2.5, **k),
    "zeros_like_f64": lambda m, x, **k: m.zeros_like(x, dtype=m.float64, **k),
    "ones_like_int": lambda m, x, **k: m.ones_like(x, dtype=m.int32, **k),
}


@pytest.mark.parametrize("inp", list(_INPUTS))
@pytest.mark.parametrize("fn", list(_LIKES))
def test_like_preserve_format(fn, inp):
    res = {}
    for m in (ember, torch):
        x = _INPUTS[inp](m)
        y = _LIKES[fn](m, x)
        y2 = _LIKES[fn](m, x, memory_format=m.preserve_format)
        assert tuple(y2.stride()) == tuple(y.stride())
        res[m] = (_layout(y, m), tuple(y.shape), str(y.dtype)[6:])
        if fn != "empty_like":
            res[m] += (y.numpy().tolist(),)
    assert res[ember] == res[torch]


@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last"])
@pytest.mark.parametrize("inp", ["contiguous", "permuted", "channels_last"])
def test_like_explicit_format(fmt, inp):
    res = {}
    for m in (ember, torch):
        y = m.zeros_like(_INPUTS[inp](m), memory_format=getattr(m, fmt))
        res[m] = _layout(y, m)
    assert res[ember] == res[torch]
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            m.empty_like(m.zeros(2, 3), memory_format=m.channels_last)


# ---------------------------------------------------------------------- CNN layers
_LAYERS = {
    "conv1x1": lambda m: m.nn.Conv2d(3, 4, 1),
    "conv3x3": lambda m: m.nn.Conv2d(3, 4, 3, padding=1),
    "conv_stride": lambda m: m.nn.Conv2d(3, 4, 3, stride=2),
    "conv_nobias": lambda m: m.nn.Conv2d(3, 8, 3, bias=False),
    "conv_groups": lambda m: m.nn.Conv2d(3, 3, 3, groups=3),
    "conv_transpose": lambda m: m.nn.ConvTranspose2d(3, 4, 3),
    "batchnorm": lambda m: m.nn.BatchNorm2d(3),
    "batchnorm_eval": lambda m: m.nn.BatchNorm2d(3).eval(),
    "gelu": lambda m: m.nn.GELU(),
    "leaky_relu": lambda m: m.nn.LeakyReLU(),
    "sigmoid": lambda m: m.nn.Sigmoid(),
    "relu": lambda m: m.nn.ReLU(),
}
_NO_INPUT_GRAD = {"conv_transpose"}  # its input gradient is still contiguous (torch: channels_last)


def _params(mod_e, mod_t):
    with torch.no_grad():
        for pe, pt in zip(mod_e.parameters(), mod_t.parameters()):
            pt.copy_(torch.tensor(pe.detach().numpy()))


@pytest.mark.parametrize("name", list(_LAYERS))
def test_layer_keeps_channels_last(name):
    ember.manual_seed(0)
    mod_e = _LAYERS[name](ember)
    mod_t = _LAYERS[name](torch)
    _params(mod_e, mod_t)
    out = {}
    for m, mod in ((ember, mod_e), (torch, mod_t)):
        x = _cl(m).requires_grad_()
        y = mod(x)
        g = m.tensor(np.random.RandomState(1).randn(*y.shape).astype(np.float32))
        (gx,) = m.autograd.grad(y, x, g.to(memory_format=m.channels_last))
        out[m] = (y, gx)
    ye, gxe = out[ember]
    yt, gxt = out[torch]
    assert _layout(ye, ember) == _layout(yt, torch)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gxe.numpy(), gxt.numpy(), rtol=1e-4, atol=1e-4)
    if name not in _NO_INPUT_GRAD:
        assert _layout(gxe, ember) == _layout(gxt, torch)


@pytest.mark.parametrize("name", ["conv1x1", "conv3x3", "conv_stride", "batchnorm_eval"])
def test_layer_contiguous_upstream_grad(name):
    # the input gradient follows the input's layout even from a contiguous output gradient
    ember.manual_seed(0)
    res = {}
    for m in (ember, torch):
        mod = _LAYERS[name](m)
        x = _cl(m).requires_grad_()
        y = mod(x)
        (gx,) = m.autograd.grad(y, x, m.ones(y.shape))
        res[m] = _layout(gx, m)
    assert res[ember] == res[torch]


def test_conv_channels_last_weight_contiguous_input():
    res = {}
    for m in (ember, torch):
        c = m.nn.Conv2d(3, 4, 3).to(memory_format=m.channels_last)
        x = m.tensor(X0).requires_grad_()
        y = c(x)
        gx, gw = m.autograd.grad(y, (x, c.weight), m.ones(y.shape))
        res[m] = (_layout(y, m), _layout(gx, m), _layout(gw, m))
    assert res[ember] == res[torch]


@pytest.mark.parametrize("name", list(_LAYERS))
def test_channels_last_values_unchanged(name):
    # the channels_last path gives the contiguous path's numbers (only strides differ): exactly,
    # except batch norm, whose reductions sum a differently strided view (float rounding)
    ember.manual_seed(0)
    mod = _LAYERS[name](ember)
    same = np.array_equal if not name.startswith("batchnorm") else _close
    xc = ember.tensor(X0).requires_grad_()
    xl = _cl(ember).requires_grad_()
    yc, yl = mod(xc), mod(xl)
    g = ember.tensor(np.random.RandomState(1).randn(*yc.shape).astype(np.float32))
    gc = ember.autograd.grad(yc, (xc, *mod.parameters()), g)
    gl = ember.autograd.grad(yl, (xl, *mod.parameters()), g)
    assert same(yc.detach().numpy(), yl.detach().numpy())
    for a, b in zip(gc, gl):
        assert same(a.numpy(), b.numpy())


def _close(a, b):
    return np.allclose(a, b, rtol=1e-5, atol=1e-6)


def test_contiguous_input_stays_contiguous():
    for make in _LAYERS.values():
        ember.manual_seed(0)
        y = make(ember)(ember.tensor(X0))
        assert y.is_contiguous()


def test_cnn_block_channels_last_end_to_end():
    res = {}
    for m in (ember, torch):
        m.manual_seed(0)
        net = m.nn.Sequential(
            m.nn.Conv2d(3, 8, 3, padding=1), m.nn.BatchNorm2d(8), m.nn.GELU(), m.nn.Conv2d(8, 4, 1)
        ).to(memory_format=m.channels_last)
        x = _cl(m).requires_grad_()
        y = net(x)
        y.backward(m.ones_like(y))
        res[m] = (_layout(y, m), _layout(x.grad, m), _layout(net[0].weight.grad, m))
    assert res[ember] == res[torch]


@needs_torch
@pytest.mark.parametrize("fn", ["rand_like", "randn_like", "randint_like"])
def test_random_like_factories_preserve_layout(fn):
    # the values differ between frameworks; the layout must not
    def strides(m):
        args = (5,) if fn == "randint_like" else ()
        f = getattr(m, fn)
        cl = m.ones(2, 3, 4, 5).to(memory_format=m.channels_last)
        out = [
            f(m.ones(2, 3).t(), *args),
            f(cl, *args),
            f(cl, *args, memory_format=m.contiguous_format),
        ]
        return [tuple(t.stride()) for t in out]

    assert strides(ember) == strides(torch)


@needs_torch
def test_grad_takes_the_leafs_layout():
    # torch's layout contract: a dense leaf's .grad has the leaf's strides
    def strides(m):
        x = m.ones(2, 3, 4, 5).to(memory_format=m.channels_last).requires_grad_()
        m.relu(x).sum().backward()
        xt = m.ones(3, 2).t().requires_grad_()
        (xt * 2).sum().backward()
        return x.grad.stride(), xt.grad.stride()

    assert strides(ember) == strides(torch)


def _cl_cases(F):
    return {
        "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(x, 3),
        "adaptive_max_pool2d": lambda x: F.adaptive_max_pool2d(x, 3),
        "interpolate_nearest": lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
        "interpolate_bilinear": lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        "interpolate_bicubic": lambda x: F.interpolate(x, size=(5, 5), mode="bicubic"),
        "pad_constant": lambda x: F.pad(x, (1, 1, 1, 1)),
        "pad_reflect": lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"),
        "pad_replicate": lambda x: F.pad(x, (1, 2, 0, 1), mode="replicate"),
    }


@pytest.mark.parametrize("case", sorted(_cl_cases(ember.nn.functional)))
def test_channels_last_in_channels_last_out(case):
    # torch's kernels keep a channels_last input's layout (values were equal; strides were not)
    a = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    outs = []
    for m in (ember, torch):
        x = m.tensor(a).to(memory_format=m.channels_last)
        y = _cl_cases(m.nn.functional)[case](x)
        outs.append((tuple(y.stride()), y.detach().numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-6)
