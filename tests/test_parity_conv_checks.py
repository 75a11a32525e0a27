"""Convolution calls torch refuses, checked against torch on this machine: which error comes
first when several things are wrong (torch's generic checks, then its backend's: oneDNN checks
the dtypes before the geometry, the native kernels read the data last), the backend chosen by
dtype and cpu (float16 through oneDNN on a cpu with AVX-512 FP16), and the calls oneDNN lets
through (an empty transposed output, a zero dilation on a size-1 kernel axis)."""

import random

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

_DT = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "complex64", "bool"]


def _call(m, transposed, nd, dts, xs, ws, bs, kw):
    xd, wd, bd = (getattr(m, d) for d in dts)
    x, w = m.ones(*xs, dtype=xd), m.ones(*ws, dtype=wd)
    b = None if bs is None else m.ones(*bs, dtype=bd)
    fn = getattr(m.nn.functional, f"conv_transpose{nd}d" if transposed else f"conv{nd}d")
    try:
        out = fn(x, w, b, **kw)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__, str(e)
    return "ok", str(out.dtype).split(".")[-1], tuple(out.shape)


def _case(rng: random.Random):
    transposed, nd = rng.random() < 0.5, rng.choice([1, 2, 3])
    n = rng.choice([None, 1, 2])  # a batch of 2 takes float32 to oneDNN
    xd = rng.choice(_DT[:3] + _DT)
    wd, bd = (rng.choice([xd, xd, rng.choice(_DT)]) for _ in range(2))
    c, g, k, sp = (
        rng.choice([2, 3]),
        rng.choice([1, 1, 2]),
        rng.choice([0, 1, 3, 5]),
        rng.choice([1, 2, 6]),
    )
    xs = ((n,) if n else ()) + (c,) + (sp,) * nd
    ws = (2, 2 if transposed else 2 // g) + (k,) * nd if rng.random() < 0.9 else (2, 2)
    bs = rng.choice([None, (2,), (2,), (4,), (3,)])
    kw = {"groups": g} if g > 1 else {}
    for key, values, p in (
        ("stride", [0, 1, 2], 0.3),
        ("dilation", [0, 1, 2, -1], 0.3),
        ("padding", [-1, 0, 1, 3], 0.3),
        ("output_padding", [0, 1, 3], 0.3 if transposed else 0),
    ):
        if rng.random() < p:
            kw[key] = rng.choice(values)
    return transposed, nd, (xd, wd, bd), xs, ws, bs, kw


@pytest.mark.parametrize("seed", range(4))
def test_random_bad_calls_fail_as_torch_does(seed):
    # several faults at once (dtypes, channels, bias size, signs, empty kernels, zero dilation,
    # output padding, outputs too small), each call's first error or result as torch's
    rng = random.Random(seed)
    wrong = []
    for _ in range(600):
        case = _case(rng)
        got, want = _call(ember, *case), _call(torch, *case)
        if got != want:
            wrong.append((case, got, want))
    assert not wrong, f"{len(wrong)} differ, first: {wrong[:3]}"


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize(
    "dts",
    [
        ("float16", "float32", "float16"),
        ("bfloat16", "float32", "bfloat16"),
        ("float32", "float64", "float32"),
        ("float32", "float32", "float64"),
        ("int32", "float32", "int32"),
        ("bool", "float32", "bool"),
        ("complex64", "float32", "complex64"),
    ],
)
@pytest.mark.parametrize(
    "fault", ["channels", "too small", "bias size", "negative padding", "zero stride", "none"]
)
def test_dtype_errors_wait_for_the_shape_checks(transposed, nd, batch, dts, fault):
    # torch reports a wrong weight dtype at its backend, after the channel, bias-size, padding
    # and kernel-size checks (a complex input's weight and a plain bias are checked first)
    xs, ws, bs, kw = (batch, 2, *[6] * nd), (2, 2, *[3] * nd), (2,), {}
    if fault == "channels":
        xs = (batch, 3, *[6] * nd)
    elif fault == "too small":
        xs = (batch, 2, *[2] * nd)
    elif fault == "bias size":
        bs = (3,)
    elif fault == "negative padding":
        kw = {"padding": -1}
    elif fault == "zero stride":
        kw = {"stride": 0}
    case = (transposed, nd, dts, xs, ws, bs, kw)
    assert _call(ember, *case) == _call(torch, *case)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("xd", ["float32", "float64", "float16", "bfloat16", "int32", "bool"])
@pytest.mark.parametrize("bd", ["float64", "float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("batch", [1, 2])
def test_transposed_bias_dtypes(nd, xd, bd, batch):
    # the native 1-d/2-d kernels cast the bias, the 3-d one refuses it; oneDNN refuses it (a
    # bool is "CPUBoolType" there); narrow integers fail at the kernel's dispatch first
    if xd == bd:
        return
    case = (True, nd, (xd, xd, bd), (batch, 2, *[6] * nd), (2, 2, *[3] * nd), (2,), {})
    assert _call(ember, *case) == _call(torch, *case)


@pytest.mark.parametrize(
    "fn, xs, ws, kw",
    [
        ("conv_transpose1d", (2, 2, 5), (2, 3, 1), {"dilation": 0}),
        ("conv_transpose2d", (2, 2, 5, 4), (2, 3, 1, 1), {"dilation": 0, "stride": 2}),
        ("conv_transpose2d", (2, 2, 2, 2), (2, 2, 5, 5), {"padding": 3}),
        ("conv_transpose3d", (1, 2, 2, 2, 2), (2, 2, 5, 5, 5), {"padding": 3}),
    ],
)
@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16"])
def test_calls_onednn_lets_through(fn, xs, ws, kw, dt):
    # where torch's oneDNN takes the call (batch 2 of float32; float16/bfloat16 by cpu) an
    # empty output is made and a size-1 kernel ignores a zero dilation; natively both fail
    rs = np.random.RandomState(0)
    xa, wa = rs.randn(*xs).astype(np.float32), rs.randn(*ws).astype(np.float32)
    out = []
    for m in (ember, torch):
        x = m.tensor(xa).to(getattr(m, dt)).requires_grad_()
        w = m.tensor(wa).to(getattr(m, dt)).requires_grad_()
        try:
            y = getattr(m.nn.functional, fn)(x, w, None, **kw)
        except RuntimeError as e:
            out.append(str(e))
            continue
        g = np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape)) / 7 - 1
        y.backward(m.tensor(g).to(getattr(m, dt)))
        out.append([t.detach().float().numpy() for t in (y, x.grad, w.grad)])
    if isinstance(out[1], str):
        assert out[0] == out[1]
        return
    assert not isinstance(out[0], str), out[0]
    for a, b in zip(*out):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("groups", [1, 2])
def test_bool_1x1x1_conv3d_names_torchs_kernel(n, groups):
    # an ungrouped 1x1x1 kernel skips torch's columns; a grouped one does not
    case = (False, 3, ("bool",) * 3, (n, 2, 2, 2, 2), (2, 2 // groups, 1, 1, 1), None, {})
    case[-1]["groups"] = groups
    assert _call(ember, *case) == _call(torch, *case)
