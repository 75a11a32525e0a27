"""Parity regressions found by the sixty-eighth wave, a seeded random fuzz of nn layer
configurations against torch (Conv and ConvTranspose 1d-3d with every padding form and mode,
dilation, groups, output_padding, output_size=, unbatched and channels_last inputs; max, average,
adaptive, LP and fractional pooling with ceil_mode, padding, dilation and indices, MaxUnpool;
interpolate and the Upsample modules in every mode; Fold/Unfold, pixel and channel shuffles,
F.pad with negative pads; batch, group, instance, layer, local-response and RMS norms in train
and eval; Embedding and EmbeddingBag; and invalid arguments of each; outputs, shapes, input and
parameter gradients, buffers and errors compared, torch is the oracle): max pooling's gradient
for a window lying wholly in padding (dilation skips the input) went nowhere (torch sends it to
the index it reports); fractional_max_pool3d's size checks in torch's order (width before
height); conv_transpose's output_padding check after the channel, bias, groups and kernel-size
checks; pooling's per-dim stride, padding and dilated-kernel checks before the positivity checks
(the half kernel divided as C does); max_pool1d's padding bound before its dilation check;
embedding into an empty table (index_select's error) and with embedding_dim 0 (its backward
crashed); conv's 'same' padding with an even kernel reporting the padded input in its channel
error; 'area' interpolation of a negative size failing as adaptive average pooling, before its
dtype check, and adaptive max / fractional pooling naming the first negative size; conv1d/2d/3d
arguments of the wrong type raising torch's two-overload error with the call's own arguments;
and a 1-d convolution given a weight of more dims (or one of under three). Left alone as torch
quirks: float32 transposed convs (oneDNN) returning empty outputs where the reference kernel
refuses them, circular F.pad with negative pads (torch reads uninitialised memory), antialiased
resizing of a last dim of 1, EmbeddingBag's scale_grad_by_freq on CPU (pytorch#190063) and
max_unpool's racy choice of which bad index to report."""

from __future__ import annotations

import random
import warnings

import ember
import numpy as np
import pytest
from harness import assert_same, compare_run, same_error, same_grads_or_error

torch = pytest.importorskip("torch")


def _F(m):
    return m.nn.functional


def _rand(m, shape, seed=0, dtype="float64"):
    a = np.random.RandomState(seed).uniform(-2, 2, shape).astype(dtype)
    return m.tensor(a, requires_grad=True)


# ---------------------------------------------------------------------- max pooling, padding windows
@pytest.mark.parametrize(
    "shape, kw",
    [
        ((2, 1, 7, 1, 2), {"kernel_size": 2, "padding": 1, "dilation": 2}),  # the fuzz's case
        # (torch's index must lie inside the plane: past it, torch's kernel writes out of it)
        ((1, 2, 5, 1), {"kernel_size": 2, "padding": 1, "dilation": 2}),
    ],
)
def test_max_pool_window_wholly_in_padding(shape, kw):
    """The gradient (and its double backward) of a window with no input position goes to the
    index torch reports for it."""
    fn = "max_pool3d" if len(shape) == 5 else "max_pool2d"

    def grads(m):
        x = _rand(m, shape)
        y = getattr(_F(m), fn)(x, **kw)
        g = (m.arange(1.0, y.numel() + 1, dtype=m.float64).reshape(y.shape)).requires_grad_()
        (gx,) = m.autograd.grad(y, x, g, create_graph=True)
        up = m.arange(3.0, 3 + x.numel(), dtype=m.float64).reshape(x.shape)
        (gg,) = m.autograd.grad(gx, g, up)
        return [gx, gg]

    same_grads_or_error(grads)


# ---------------------------------------------------------------------- check orders
@pytest.mark.parametrize("osz", [(3, 5, 4), (2, 5, 2), (7, 2, 1), (2, 4, 4)])
def test_fractional_max_pool3d_size_check_order(osz):
    def f(m):
        samples = m.full((1, 1, 3), 0.5)
        return _F(m).fractional_max_pool3d(
            m.ones(1, 8, 6, 2), 3, output_size=osz, _random_samples=samples
        )

    same_error(f, RuntimeError)


@pytest.mark.parametrize(
    "shapes, kw",
    [
        (((1, 2, 3, 3), (1, 1, 1, 1), None), {}),  # channels
        (((2, 3, 3), (1, 1, 1, 1), None), {}),  # unbatched
        (((1, 1, 3, 3), (1, 1, 1, 1), (3,)), {}),  # bias
        (((1, 3, 3, 3), (3, 1, 1, 1), None), {"groups": 2}),  # groups
        (((1, 1, 3, 3), (1, 1, 0, 1), None), {}),  # empty kernel
        (((1, 2, 3), (1, 1, 1), None), {}),
        (((1, 2, 3, 3, 3), (1, 1, 1, 1, 1), None), {}),
    ],
)
def test_conv_transpose_output_padding_checked_late(shapes, kw):
    xs, ws, bs = shapes
    fn = f"conv_transpose{len(ws) - 2}d"

    def f(m):
        b = None if bs is None else m.ones(bs)
        return getattr(_F(m), fn)(m.ones(xs), m.ones(ws), b, output_padding=2, **kw)

    same_error(f, RuntimeError)


POOL_ARGS = [
    ("max_pool2d", 2, (2, 2), {"stride": (1, 0), "padding": (2, 0)}),  # pad of H before W's stride
    ("max_pool2d", 2, (2, -2), {"stride": 1}),  # (-3) / 2 in C: -1
    ("max_pool2d", 2, (2, -1), {"stride": 1}),  # (-1) / 2 in C: 0, the kernel check
    ("max_pool2d", 2, 2, {"stride": 1, "padding": (0, 1), "dilation": (1, -1)}),
    ("max_pool2d", 2, 2, {"padding": 2, "stride": -1, "dilation": 0}),
    ("avg_pool2d", 2, 7, {"padding": 4, "stride": -1}),
    ("avg_pool3d", 3, -1, {"padding": 2, "stride": 1}),
    ("avg_pool3d", 3, 2, {"padding": -1, "stride": -1}),
    ("avg_pool1d", 1, -3, {"stride": 1}),
    ("max_pool3d", 3, (2, 2, 2), {"stride": 1, "padding": (0, 0, 2), "dilation": (1, 0, 1)}),
    ("max_pool1d", 1, 3, {"stride": 2, "padding": 4, "dilation": 0}),  # max_pool1d's own checks
    ("max_pool1d", 1, 3, {"stride": -1, "padding": 4, "dilation": 0}),
]


@pytest.mark.parametrize("fn, nd, k, kw", POOL_ARGS)
def test_pool_argument_check_order(fn, nd, k, kw):
    same_error(lambda m: getattr(_F(m), fn)(m.ones((1, 1) + (6,) * nd), k, **kw), RuntimeError)


# ---------------------------------------------------------------------- embedding
def test_embedding_empty_table():
    for idx in ([0, 1], 0):
        same_error(lambda m, i=idx: _F(m).embedding(m.tensor(i), m.zeros(0, 2)), RuntimeError)
    # a dtype error still comes first
    same_error(
        lambda m: _F(m).embedding(m.tensor([0, 1], dtype=m.uint8), m.zeros(0, 2)), RuntimeError
    )


def test_embedding_zero_dim_backward():
    def grads(m, **kw):
        w = m.zeros(3, 0, dtype=m.float64, requires_grad=True)
        y = _F(m).embedding(m.tensor([[0, 1], [2, 2]]), w, **kw)
        y.backward(m.ones_like(y))
        return [w.grad.to_dense() if kw.get("sparse") else w.grad]

    for kw in ({}, {"padding_idx": 1}, {"scale_grad_by_freq": True}, {"sparse": True}):
        same_grads_or_error(lambda m, kw=kw: grads(m, **kw))


# ---------------------------------------------------------------------- convolution messages
@pytest.mark.parametrize(
    "fn, xs, ws, kw",
    [
        ("conv1d", (2, 7, 3), (6, 2, 4), {"groups": 3}),
        ("conv1d", (7, 3), (6, 2, 4), {"groups": 3}),
        ("conv2d", (1, 7, 3, 3), (6, 2, 4, 3), {"groups": 3}),
        ("conv3d", (1, 7, 3, 3, 3), (6, 2, 3, 4, 2), {"groups": 3}),
    ],
)
def test_conv_same_even_kernel_channel_error(fn, xs, ws, kw):
    """torch pads the extra zero of an even kernel's 'same' padding before the channel check."""
    with warnings.catch_warnings():  # the even kernel's copy warning (once per process)
        warnings.simplefilter("ignore")
        same_error(lambda m: getattr(_F(m), fn)(m.ones(xs), m.ones(ws), padding="same", **kw))


CONV_TYPE_CASES = [
    lambda m: _F(m).conv2d(m.ones(2, 2, 4, 4), m.ones(2, 2, 2, 2), stride=(None, None)),
    lambda m: _F(m).conv2d(m.ones(2, 2, 4, 4), m.ones(2, 2, 2, 2), None, (None, None), 0, 1, 1),
    lambda m: _F(m).conv2d(m.ones(2, 2, 4, 4), m.ones(2, 2, 2, 2), padding=1.5),
    lambda m: _F(m).conv1d(m.ones(2, 2, 4), m.ones(2, 2, 2), padding=(1.5,)),
    lambda m: _F(m).conv3d(m.ones(2, 2, 4, 4, 4), m.ones(2, 2, 2, 2, 2), dilation=("x",)),
    lambda m: _F(m).conv2d(m.ones(2, 2, 4, 4), m.ones(2, 2, 2, 2), foo=1),
    lambda m: _F(m).conv2d(m.ones(2, 2, 4, 4), m.ones(2, 2, 2, 2), None, 1, 1, 1, 1, 1),
    lambda m: m.nn.Conv2d(2, 2, 2, stride=None)(m.ones(2, 2, 4, 4)),
    lambda m: m.nn.Conv1d(2, 2, 2, padding=1.5)(m.ones(2, 2, 4)),
]


@pytest.mark.parametrize("k", range(len(CONV_TYPE_CASES)))
def test_conv_bad_argument_types(k):
    """conv{n}d has two overloads: a bad argument type is torch's "invalid combination" error
    naming the call's own arguments (Parameter for a module's weight)."""
    same_error(CONV_TYPE_CASES[k], TypeError, first_line=True)


@pytest.mark.parametrize(
    "fn, xs, ws",
    [
        ("conv1d", (2, 2, 4), (2, 2, 1, 1)),
        ("conv1d", (2, 3, 4), (2, 2, 1, 1, 1)),
        ("conv_transpose1d", (2, 4), (2, 2, 1, 1)),
        ("conv1d", (2, 2, 4), (2, 2)),
        ("conv2d", (2, 2, 4, 4), (2, 2)),
    ],
)
def test_conv1d_weight_of_other_rank(fn, xs, ws):
    same_error(lambda m: getattr(_F(m), fn)(m.ones(xs), m.ones(ws)), RuntimeError)


# ---------------------------------------------------------------------- negative output sizes
@pytest.mark.parametrize(
    "f",
    [
        lambda m: _F(m).interpolate(m.ones(2, 2, 6, 6), size=(-1, 2), mode="area"),
        lambda m: _F(m).interpolate(m.ones(2, 2, 6, 6).to(m.uint8), size=(-1, 2), mode="area"),
        lambda m: _F(m).interpolate(m.ones(2, 2, 6), scale_factor=-1.0, mode="area"),
        lambda m: _F(m).interpolate(m.ones(2, 2, 6, 6, 6), scale_factor=-1.0, mode="area"),
        lambda m: _F(m).adaptive_max_pool3d(m.ones(2, 3, 3, 3), (1, -2, -1)),
        lambda m: _F(m).adaptive_max_pool2d(m.ones(2, 3, 3), (-1, -2)),
        lambda m: _F(m).fractional_max_pool2d(m.ones(1, 3, 3), 2, output_size=(-1, -2)),
    ],
)
def test_negative_output_size_messages(f):
    same_error(f, RuntimeError)


# ---------------------------------------------------------------------- a seeded mini-fuzz
def _config(r):
    """One random layer configuration: (description, build(m) -> module, input shape)."""
    kind = r.choice(["conv", "convt", "maxpool", "avgpool", "interp", "norm"])
    d = r.choice([1, 2, 3])
    sp = [r.randint(1, 6) for _ in range(d)]
    shape = [r.randint(1, 2), 2] + sp
    if kind in ("conv", "convt"):
        g = r.choice([1, 2])
        kw = {
            "stride": r.randint(1, 2),
            "padding": r.randint(0, 2),
            "dilation": r.randint(1, 2),
            "groups": g,
        }
        name = ("ConvTranspose%dd" if kind == "convt" else "Conv%dd") % d
        if kind == "conv":
            kw["padding_mode"] = r.choice(["zeros", "reflect", "replicate", "circular"])
        else:
            kw["output_padding"] = r.randint(0, 1)
        k = r.randint(1, 3)
        return f"{name}({k}, {kw})", lambda m: getattr(m.nn, name)(2, 2 * g, k, **kw), shape
    if kind in ("maxpool", "avgpool"):
        k = r.randint(1, 3)
        kw = {"stride": r.randint(1, 2), "padding": r.randint(0, 1), "ceil_mode": r.random() < 0.5}
        if kind == "maxpool":
            kw["dilation"] = r.randint(1, 2)
            name = f"MaxPool{d}d"
        else:
            kw["count_include_pad"] = r.random() < 0.5
            name = f"AvgPool{d}d"
        return f"{name}({k}, {kw})", lambda m: getattr(m.nn, name)(k, **kw), shape
    if kind == "interp":
        modes = {1: ["nearest", "linear", "area"], 2: ["bilinear", "bicubic", "nearest-exact"]}
        mode = r.choice(modes.get(d, ["trilinear", "nearest"]))
        kw = {"scale_factor": r.choice([0.5, 1.5, 2.0, 3.0])}
        if mode in ("linear", "bilinear", "bicubic", "trilinear"):
            kw["align_corners"] = r.random() < 0.5
        return f"Upsample({mode}, {kw})", lambda m: m.nn.Upsample(mode=mode, **kw), shape
    name = r.choice(["BatchNorm", "InstanceNorm"]) + f"{d}d"
    kw = {"affine": r.random() < 0.7, "track_running_stats": r.random() < 0.5}
    return f"{name}({kw})", lambda m: getattr(m.nn, name)(2, **kw).double(), shape


def test_seeded_layer_fuzz():
    r = random.Random(68)
    for i in range(100):
        desc, build, shape = _config(r)
        xa = np.random.RandomState(i).uniform(-2, 2, shape)
        out = {}
        for m in (torch, ember):
            if m is torch:
                torch.manual_seed(0)
            x = m.tensor(xa, requires_grad=True)
            try:
                mod = build(m).double()
                if m is ember and len(out[torch]) == 4:
                    mod.load_state_dict({k: ember.tensor(v) for k, v in out[torch][0].items()})
                state = {k: v.detach().numpy().copy() for k, v in mod.state_dict().items()}
                out[m] = (state, x, mod, mod(x))
            except Exception as e:  # noqa: BLE001 - the error is what is compared
                out[m] = (type(e).__name__, str(e).replace("ember.Size", "torch.Size"))
        t, e = out[torch], out[ember]
        if len(t) == 2:
            assert e[:2] == t, desc
            continue
        assert len(e) == 4, (desc, e)
        compare_run([e[1]], [t[1]], e[3], t[3], desc, atol=1e-8, rtol=1e-6)
        for (n, tp), (_, ep) in zip(t[2].named_parameters(), e[2].named_parameters()):
            assert_same(ep.grad, tp.grad, 1e-7, 1e-6, f"{desc} {n} grad")
