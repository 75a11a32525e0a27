"""Convolutions: F.conv*, F.conv_transpose*, unfold/fold, the Conv*/ConvTranspose*/Lazy*/Fold/Unfold
modules, against torch (values and input/weight/bias gradients), gradcheck and gradgradcheck,
torch's error messages, names (spec 4.3) and device dispatch (strict fake-cupy backend)."""

from __future__ import annotations

import math
import re

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, run_case, run_gradcheck
from nn_harness import check_module, copy_state, to_ember

try:
    import torch
except ImportError:  # pragma: no cover - parity checks skip without the oracle
    torch = None


def F(m):
    return m.nn.functional


# ---------------------------------------------------------------------- functional parity grid
def _conv_case(nd, n, c, sp, o, k, dtype="float32", bias=True, **kw):
    k = k if isinstance(k, tuple) else (k,) * nd
    sp = sp if isinstance(sp, tuple) else (sp,) * nd
    g = kw.get("groups", 1)
    ins = [A(n, c, *sp, dtype=dtype), A(o, c // g, *k, dtype=dtype, seed=1)]
    if bias:
        ins.append(A(o, dtype=dtype, seed=2))
    name = f"conv{nd}d-{dtype}-k{k}-{'b' if bias else 'nob'}-" + ",".join(
        f"{a}={v}" for a, v in kw.items()
    )
    fn = getattr(ember.nn.functional, f"conv{nd}d").__name__

    def run(m, x, w, b=None):
        return getattr(F(m), fn)(x, w, b, **kw)

    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}
    return Case(name, run, ins, **tol)


CONV_CASES = [
    # 2-d: kernel sizes, strides, paddings, dilations, groups
    _conv_case(2, 2, 3, 7, 4, 3),
    _conv_case(2, 2, 3, 7, 4, 3, dtype="float64", padding=1),
    _conv_case(2, 2, 3, 8, 4, (2, 3), stride=2, padding=(1, 0)),
    _conv_case(2, 2, 3, 9, 5, 3, stride=(1, 2), dilation=2, padding=2),
    _conv_case(2, 2, 4, 6, 6, 3, groups=2, padding=1),
    _conv_case(2, 2, 4, 6, 8, 3, groups=4, stride=2, dtype="float64"),  # depthwise x2
    _conv_case(2, 2, 3, 5, 4, 1),  # 1x1 fast path
    _conv_case(2, 2, 3, 5, 4, 1, bias=False, stride=2),
    _conv_case(2, 1, 4, 5, 6, 1, groups=2, dtype="float64"),
    _conv_case(2, 2, 3, 6, 4, 3, padding="same"),
    _conv_case(2, 2, 3, 6, 4, (2, 4), padding="same", dtype="float64"),  # asymmetric same
    _conv_case(2, 2, 3, 7, 4, 2, padding="same", dilation=2),
    _conv_case(2, 2, 3, 6, 4, 3, padding="valid", bias=False),
    _conv_case(2, 3, 2, (5, 8), 3, (3, 1), stride=(2, 3), padding=(1, 0), dilation=(1, 2)),
    _conv_case(2, 2, 3, 3, 4, 3, padding=1, stride=3),
    # 1-d
    _conv_case(1, 2, 3, 9, 4, 3),
    _conv_case(1, 2, 4, 10, 6, 4, stride=2, padding=1, dilation=2, groups=2, dtype="float64"),
    _conv_case(1, 2, 3, 8, 4, 4, padding="same"),
    _conv_case(1, 3, 2, 5, 2, 1, bias=False),
    # 3-d
    _conv_case(3, 2, 2, 5, 3, 3),
    _conv_case(3, 1, 4, (4, 5, 6), 4, (2, 3, 1), stride=(1, 2, 1), padding=1, groups=2),
    _conv_case(3, 2, 2, 5, 2, 2, dilation=2, padding="same", dtype="float64"),
]


@needs_torch
@pytest.mark.parametrize("case", CONV_CASES, ids=str)
def test_conv_parity(case):
    run_case(case)


def _convt_case(nd, n, c, sp, o, k, dtype="float32", bias=True, **kw):
    k = k if isinstance(k, tuple) else (k,) * nd
    sp = sp if isinstance(sp, tuple) else (sp,) * nd
    g = kw.get("groups", 1)
    ins = [A(n, c, *sp, dtype=dtype), A(c, o // g, *k, dtype=dtype, seed=1)]
    if bias:
        ins.append(A(o, dtype=dtype, seed=2))
    name = f"conv_transpose{nd}d-{dtype}-k{k}-" + ",".join(f"{a}={v}" for a, v in kw.items())

    def run(m, x, w, b=None):
        return getattr(F(m), f"conv_transpose{nd}d")(x, w, b, **kw)

    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}
    return Case(name, run, ins, **tol)


CONVT_CASES = [
    _convt_case(2, 2, 3, 4, 5, 3),
    _convt_case(2, 2, 3, 4, 5, 3, stride=2, padding=1, output_padding=1, dtype="float64"),
    _convt_case(2, 2, 4, 3, 6, (2, 3), stride=(2, 1), groups=2, dilation=(1, 2)),
    _convt_case(2, 1, 2, 3, 2, 3, stride=1, dilation=2, output_padding=1, bias=False),
    _convt_case(2, 2, 4, 4, 4, 1, groups=4),
    _convt_case(1, 2, 3, 5, 4, 3, stride=3, padding=2, output_padding=2),
    _convt_case(1, 2, 4, 6, 2, 2, groups=2, dtype="float64"),
    _convt_case(3, 1, 2, 3, 3, 2, stride=2, output_padding=(1, 0, 1)),
    _convt_case(3, 1, 2, (2, 3, 2), 2, (3, 1, 2), padding=(1, 0, 0), dtype="float64"),
]


@needs_torch
@pytest.mark.parametrize("case", CONVT_CASES, ids=str)
def test_conv_transpose_parity(case):
    run_case(case)


FOLD_CASES = [
    Case("unfold", lambda m, x: F(m).unfold(x, 2), [A(2, 3, 4, 5)]),
    Case(
        "unfold-opts",
        lambda m, x: F(m).unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
        [A(2, 2, 5, 6, dtype="float64")],
    ),
    Case("unfold-unbatched", lambda m, x: F(m).unfold(x, 3, padding=1), [A(2, 4, 4)]),
    Case("fold", lambda m, x: F(m).fold(x, (4, 5), 2), [A(2, 12, 12)]),
    Case(
        "fold-opts",
        lambda m, x: F(m).fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
        [A(2, 12, 12, dtype="float64")],
    ),
    Case("fold-unbatched", lambda m, x: F(m).fold(x, 3, 2), [A(8, 4)]),
]


@needs_torch
@pytest.mark.parametrize("case", FOLD_CASES, ids=str)
def test_fold_unfold_parity(case):
    run_case(case)


# ---------------------------------------------------------------------- gradcheck / gradgradcheck
GRAD_CASES = [
    Case(
        "conv2d",
        lambda m, x, w, b: F(m).conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2)),
        [A(2, 2, 5, 5), A(3, 2, 2, 2, seed=1), A(3, seed=2)],
    ),
    Case(
        "conv2d-groups",
        lambda m, x, w: F(m).conv2d(x, w, groups=2, padding="same"),
        [A(1, 4, 4, 4), A(4, 2, 3, 2, seed=1)],
    ),
    Case("conv2d-1x1", lambda m, x, w: F(m).conv2d(x, w), [A(2, 3, 3, 3), A(2, 3, 1, 1, seed=1)]),
    Case(
        "conv1d",
        lambda m, x, w, b: F(m).conv1d(x, w, b, stride=2, padding=1),
        [A(2, 2, 7), A(3, 2, 3, seed=1), A(3, seed=2)],
    ),
    Case(
        "conv3d",
        lambda m, x, w: F(m).conv3d(x, w, padding=(1, 0, 0)),
        [A(1, 2, 3, 3, 3), A(2, 2, 2, 2, 2, seed=1)],
    ),
    Case(
        "conv_transpose2d",
        lambda m, x, w, b: F(m).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        [A(1, 2, 3, 3), A(2, 3, 3, 3, seed=1), A(3, seed=2)],
    ),
    Case(
        "conv_transpose1d-groups",
        lambda m, x, w: F(m).conv_transpose1d(x, w, groups=2, dilation=2),
        [A(2, 4, 4), A(4, 1, 3, seed=1)],
    ),
    Case("unfold", lambda m, x: F(m).unfold(x, 2, padding=1, stride=2), [A(1, 2, 4, 3)]),
    Case("fold", lambda m, x: F(m).fold(x, (3, 4), 2, padding=1, stride=2), [A(1, 8, 6)]),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


# ---------------------------------------------------------------------- modules
def _mods(nd):
    return {"Conv": f"Conv{nd}d", "ConvT": f"ConvTranspose{nd}d"}


MODULE_CASES = [
    (lambda m: m.nn.Conv2d(3, 4, 3), [A(2, 3, 6, 6)]),
    (lambda m: m.nn.Conv2d(3, 6, (3, 2), stride=2, padding=(1, 2), groups=3), [A(2, 3, 7, 6)]),
    (lambda m: m.nn.Conv2d(2, 4, 3, padding=1, padding_mode="reflect"), [A(2, 2, 5, 5)]),
    (lambda m: m.nn.Conv2d(2, 4, 3, padding=(2, 1), padding_mode="replicate"), [A(1, 2, 5, 4)]),
    (lambda m: m.nn.Conv2d(2, 4, 3, padding=1, padding_mode="circular", bias=False), [A(2, 5, 5)]),
    (lambda m: m.nn.Conv2d(2, 3, 4, padding="same", padding_mode="reflect"), [A(1, 2, 6, 6)]),
    (lambda m: m.nn.Conv1d(2, 4, 3, padding=1, padding_mode="circular"), [A(2, 2, 7)]),
    (lambda m: m.nn.Conv1d(4, 4, 3, groups=4, dilation=2, padding="same"), [A(2, 4, 9)]),
    (lambda m: m.nn.Conv3d(2, 3, 2, padding=1, padding_mode="replicate"), [A(1, 2, 3, 4, 3)]),
    (lambda m: m.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1), [A(2, 3, 4, 4)]),
    (lambda m: m.nn.ConvTranspose1d(4, 2, 2, groups=2, bias=False), [A(4, 5)]),
    (lambda m: m.nn.ConvTranspose3d(2, 2, 2, stride=2), [A(1, 2, 2, 3, 2)]),
]


@needs_torch
@pytest.mark.parametrize("k", range(len(MODULE_CASES)))
def test_module_parity(k):
    ctor, ins = MODULE_CASES[k]
    check_module(ctor, ins, atol=1e-4)


@needs_torch
def test_conv_transpose_output_size():
    check_module(
        lambda m: m.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1),
        [A(1, 2, 4, 4)],
        call=lambda mod, x: mod(x, output_size=[8, 8]),
    )
    e = ember.nn.ConvTranspose2d(2, 3, 3, stride=2)
    assert e(ember.randn(1, 2, 5, 5), output_size=(1, 3, 12, 12)).shape == (1, 3, 12, 12)
    msg = "requested an output size of [14, 14], but valid sizes range from [11, 11] to [12, 12]"
    with pytest.raises(ValueError, match=re.escape(msg)):
        e(ember.randn(2, 2, 5, 5), output_size=[14, 14])


@needs_torch
def test_module_repr_and_attributes():
    cases = [
        lambda m: m.nn.Conv2d(3, 4, 3),
        lambda m: m.nn.Conv2d(3, 4, (3, 5), 2, (1, 2), 2, 1, False, "reflect"),
        lambda m: m.nn.Conv1d(4, 4, 3, padding="same", groups=2),
        lambda m: m.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1, dilation=2),
        lambda m: m.nn.ConvTranspose3d(2, 4, 1, groups=2, bias=False),
        lambda m: m.nn.Fold((4, 5), 2),
        lambda m: m.nn.Unfold((2, 3), padding=1),
    ]
    for c in cases:
        e, t = c(ember), c(torch)
        assert repr(e) == repr(t)
        for a in ("stride", "padding", "dilation", "output_padding", "groups", "transposed"):
            if hasattr(t, a):
                assert getattr(e, a) == getattr(t, a), a
        if hasattr(t, "_reversed_padding_repeated_twice"):
            assert list(e._reversed_padding_repeated_twice) == list(
                t._reversed_padding_repeated_twice
            )
        assert list(e.state_dict()) == list(t.state_dict())
        for k, v in t.state_dict().items():
            assert tuple(e.state_dict()[k].shape) == tuple(v.shape)


@needs_torch
def test_fold_modules():
    check_module(lambda m: m.nn.Unfold(2, padding=1, stride=2), [A(2, 3, 4, 4)])
    check_module(lambda m: m.nn.Fold((4, 4), 2, stride=2), [A(2, 8, 4)])


@pytest.mark.parametrize(
    "ctor",
    [
        lambda: ember.nn.Conv2d(16, 32, 3),
        lambda: ember.nn.Conv1d(8, 64, 5, groups=4),
        lambda: ember.nn.ConvTranspose2d(16, 48, 3, groups=2),
    ],
)
def test_default_init(ctor):
    ember.manual_seed(0)
    m = ctor()
    w = m.weight.detach().numpy()
    fan_in = w.shape[1] * math.prod(w.shape[2:])
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) of torch's reset_parameters
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.mean()) < 0.1 * bound
    assert abs(w.var() / (bound**2 / 3) - 1) < 0.1
    b = m.bias.detach().numpy()
    assert np.abs(b).max() <= bound and b.std() > 0.2 * bound


@needs_torch
def test_lazy_modules():
    for lazy, nd, shape in [
        ("LazyConv1d", 1, (2, 3, 8)),
        ("LazyConv2d", 2, (2, 3, 6, 6)),
        ("LazyConv3d", 3, (1, 3, 4, 4, 4)),
        ("LazyConvTranspose1d", 1, (2, 3, 4)),
        ("LazyConvTranspose2d", 2, (3, 4, 4)),
        ("LazyConvTranspose3d", 3, (1, 3, 2, 2, 2)),
    ]:
        e = getattr(ember.nn, lazy)(4, 3)
        t = getattr(torch.nn, lazy)(4, 3)
        assert e.has_uninitialized_params()
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        t(torch.tensor(x))
        e(ember.tensor(x))
        assert type(e).__name__ == type(t).__name__ and repr(e) == repr(t)
        assert e.in_channels == t.in_channels == 3
        copy_state(t, e)
        np.testing.assert_allclose(
            e(ember.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), atol=1e-5
        )
    with pytest.raises(RuntimeError, match=re.escape("Expected 3D (unbatched) or 4D (batched)")):
        ember.nn.LazyConv2d(4, 3)(ember.randn(2, 3))


# ---------------------------------------------------------------------- errors (torch's messages)
def _x(m, *shape):
    return m.ones(*shape)


ERRORS = [
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 2, 3, 3)),
        (
            "Given groups=1, weight of size [4, 2, 3, 3], expected input[2, 3, 5, 5] to have 2 "
            "channels, but got 3 channels instead"
        ),
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 7, 7)),
        (
            "Calculated padded input size per channel: (5 x 5). Kernel size: (7 x 7). Kernel size "
            "can't be greater than actual input size"
        ),
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), dilation=3),
        "Kernel size: (7 x 7). Kernel size can't be greater than actual input size",
    ),
    (
        lambda m: F(m).conv1d(_x(m, 2, 3, 5), _x(m, 4, 3, 7)),
        "Calculated padded input size per channel: (5). Kernel size: (7).",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), padding="same", stride=2),
        "padding='same' is not supported for strided convolutions",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), padding="foo"),
        "Invalid padding string: 'foo'",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 3, 1, 3, 3), groups=2),
        (
            "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of "
            "size [[3, 1, 3, 3]] instead"
        ),
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 1, 3, 3), groups=2),
        (
            "Given groups=2, weight of size [4, 1, 3, 3], expected input[2, 3, 5, 5] to have 2 "
            "channels, but got 3 channels instead"
        ),
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3), _x(m, 4, 3, 3, 3)),
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), _x(m, 5)),
        (
            "Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 elements, "
            "but got bias of size [5] instead"
        ),
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), stride=0),
        "non-positive stride is not supported",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), padding=-1),
        "negative padding is not supported",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), dilation=0),
        "non-positive dilation is not supported",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), groups=0),
        "non-positive groups is not supported",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), stride=(1, 1, 1)),
        (
            "expected stride to be a single integer value or a list of 2 values to match the "
            "convolution dimensions, but got stride=[1, 1, 1]"
        ),
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3).double()),
        "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same",
    ),
    (
        lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), _x(m, 4).double()),
        "Input type (float) and bias type (double) should be the same",
    ),
    (
        lambda m: F(m).conv_transpose2d(_x(m, 2, 3, 5, 5), _x(m, 3, 4, 3, 3), output_padding=1),
        (
            "output padding must be smaller than either stride or dilation, but got "
            "output_padding_height: 1 output_padding_width: 1 stride_height: 1 stride_width: 1 "
            "dilation_height: 1 dilation_width: 1"
        ),
    ),
    (
        lambda m: F(m).conv_transpose2d(_x(m, 2, 3, 5, 5), _x(m, 4, 4, 3, 3)),
        (
            "Given transposed=1, weight of size [4, 4, 3, 3], expected input[2, 3, 5, 5] to have 4 "
            "channels, but got 3 channels instead"
        ),
    ),
    (
        lambda m: F(m).fold(_x(m, 2, 12, 15), (5, 5), 2),
        (
            "Given output_size=(5, 5), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
            "stride=(1, 1), expected size of input's dimension 2 to match the calculated number of "
            "sliding blocks 4 * 4 = 16, but got input.size(2)=15."
        ),
    ),
    (
        lambda m: F(m).fold(_x(m, 2, 13, 16), (5, 5), 2),
        (
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
            "got input.size(1)=13 and kernel_size=(2, 2)."
        ),
    ),
    (
        lambda m: F(m).unfold(_x(m, 2, 3, 5, 5), 6),
        (
            "Given input with spatial size (5, 5), kernel_size=(6, 6), dilation=(1, 1), "
            "padding=(0, 0), calculated shape of the array of sliding blocks as (0, 0), but its "
            "components must be at least one."
        ),
    ),
    (
        lambda m: F(m).unfold(_x(m, 2, 3, 5, 5, 5), 2),
        (
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
            "dimensions for input, but got: [2, 3, 5, 5, 5]"
        ),
    ),
    (
        lambda m: F(m).unfold(_x(m, 2, 3, 5, 5), (2, 2, 2)),
        "It is expected kernel_size equals to 2, but got size 3",
    ),
]


@needs_torch
@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_functional_errors(k):
    fn, msg = ERRORS[k]
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            fn(m)


MODULE_ERRORS = [
    (lambda m: m.nn.Conv2d(3, 4, 3, padding_mode="foo"), "padding_mode must be one of {"),
    (lambda m: m.nn.Conv2d(3, 4, 3, groups=2), "in_channels must be divisible by groups"),
    (lambda m: m.nn.Conv2d(4, 3, 3, groups=2), "out_channels must be divisible by groups"),
    (
        lambda m: m.nn.Conv2d(3, 4, 3, padding="same", stride=2),
        "padding='same' is not supported for strided convolutions",
    ),
    (lambda m: m.nn.Conv2d(3, 4, 3, padding="foo"), "Invalid padding string 'foo', should be one"),
    (lambda m: m.nn.Conv2d(3, 4, 3, groups=0), "groups must be a positive integer"),
    (
        lambda m: m.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
        'Only "zeros" padding mode is supported for ConvTranspose2d',
    ),
]


@needs_torch
@pytest.mark.parametrize("k", range(len(MODULE_ERRORS)))
def test_module_errors(k):
    fn, msg = MODULE_ERRORS[k]
    for m in (torch, ember):
        with pytest.raises(ValueError, match=re.escape(msg)):
            fn(m)


@needs_torch
def test_type_errors():
    cases = [
        (
            lambda m: F(m).conv_transpose2d(_x(m, 2, 3, 5, 5), _x(m, 3, 4, 3, 3), padding="same"),
            "conv_transpose2d(): argument 'padding' must be tuple of ints, not str",
        ),
        (
            lambda m: F(m).conv2d(_x(m, 2, 3, 5, 5), _x(m, 4, 3, 3, 3), groups=1.5),
            (
                "conv2d() received an invalid combination of arguments - got (Tensor, Tensor, "
                "groups=float)"
            ),
        ),
        (
            lambda m: F(m).conv2d([1.0], _x(m, 4, 3, 3, 3)),
            "conv2d() received an invalid combination of arguments - got (list, Tensor)",
        ),
    ]
    for fn, msg in cases:
        for m in (torch, ember):
            with pytest.raises(TypeError, match=re.escape(msg)):
                fn(m)


@needs_torch
def test_reflect_padding_too_large():
    # the non-zero padding modes go through F.pad, which reports the bad amount
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="Padding size should be less than"):
            m.nn.Conv2d(3, 4, 3, padding=10, padding_mode="reflect")(m.ones(2, 3, 5, 5))


# ---------------------------------------------------------------------- misc behaviour
@needs_torch
def test_torch_namespace_and_convolution():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    for args in [
        ([2, 1], [1, 0], [1, 2], False, [0, 0], 2),
        ([2, 2], [1, 1], [1, 1], True, [1, 1], 2),
    ]:
        e = ember.convolution(ember.tensor(x), ember.tensor(w), ember.tensor(b), *args)
        t = torch.convolution(torch.tensor(x), torch.tensor(w), torch.tensor(b), *args)
        np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-4)
    for fn in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d"):
        assert callable(getattr(ember, fn))
    e = ember.conv2d(ember.tensor(x), ember.tensor(w), None, 1, "same", 1, 2)
    t = torch.conv2d(torch.tensor(x), torch.tensor(w), None, 1, "same", 1, 2)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-4)


@needs_torch
def test_integer_and_empty_batch():
    x = np.arange(2 * 3 * 5 * 5).reshape(2, 3, 5, 5) % 7
    w = np.arange(4 * 3 * 3 * 3).reshape(4, 3, 3, 3) % 5 - 2
    e = ember.nn.functional.conv2d(ember.tensor(x), ember.tensor(w), padding=1)
    t = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1)
    assert e.dtype == ember.int64
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    z = ember.nn.functional.conv2d(ember.zeros(0, 3, 5, 5), ember.zeros(4, 3, 3, 3))
    assert z.shape == (0, 4, 3, 3)


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = {}
    for m in (ember, torch):
        d = getattr(m, dtype)
        xt = m.tensor(x).to(d).requires_grad_()
        wt = m.tensor(w).to(d).requires_grad_()
        y = m.nn.functional.conv2d(xt, wt, padding=1)
        y.float().pow(2).sum().backward()
        out[m] = [t.float().detach().numpy() for t in (y, xt.grad, wt.grad)]
        assert str(y.dtype).endswith(dtype) and str(wt.grad.dtype).endswith(dtype)
    for e, t in zip(out[ember], out[torch]):
        np.testing.assert_allclose(e, t, rtol=0.05, atol=0.1 * np.abs(t).max())


def test_output_is_contiguous_and_float32():
    m = ember.nn.Conv2d(3, 8, 3, padding=1)
    y = m(ember.randn(2, 3, 6, 6))
    assert y.is_contiguous() and y.dtype == ember.float32
    y.view(2, -1)  # user code flattens conv outputs with view
    t = ember.nn.ConvTranspose2d(3, 2, 3, stride=2)(ember.randn(2, 3, 4, 4))
    assert t.is_contiguous()


def test_double_backward_gradient_penalty():
    # a gradient penalty: d/dw of ||d out / d x||^2, against finite differences (gradgradcheck)
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((2, 2, 5, 5)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    y = ember.nn.functional.conv2d(x, w, padding=1, stride=2)
    (gx,) = ember.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    pen = gx.pow(2).sum()
    pen.backward()
    assert w.grad is not None and w.grad.shape == w.shape
    if torch is not None:
        tx = torch.tensor(x.detach().numpy(), requires_grad=True)
        tw = torch.tensor(w.detach().numpy(), requires_grad=True)
        ty = torch.nn.functional.conv2d(tx, tw, padding=1, stride=2)
        (tgx,) = torch.autograd.grad(ty.pow(2).sum(), tx, create_graph=True)
        tgx.pow(2).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


# ---------------------------------------------------------------------- names (spec 4.3)
def test_names_unnamed_weight_keeps_channel_name():
    x = ember.randn(2, 3, 5, 5, names=("N", "C", "H", "W"))
    m = ember.nn.Conv2d(3, 4, 3, padding=1)
    y = m(x)
    assert y.names == ("N", "C", "H", "W")
    y.sum().backward()
    assert m.weight.grad.names == (None,) * 4
    t = ember.nn.ConvTranspose2d(3, 2, 2, stride=2)(x)
    assert t.names == ("N", "C", "H", "W") and t.shape == (2, 2, 10, 10)
    u = ember.nn.Conv1d(3, 4, 3)(ember.randn(3, 7, names=("C", "L")))
    assert u.names == ("C", "L")


def test_names_named_weight():
    x = ember.randn(2, 3, 5, 5, names=("N", "rgb", "H", "W"), requires_grad=True)
    m = ember.nn.Conv2d(3, 4, 3)
    m.weight = ember.nn.Parameter(m.weight.detach().rename("feat", "rgb", "kh", "kw"))
    y = m(x)
    assert y.names == ("N", "feat", "H", "W")
    y.sum().backward()
    assert m.weight.grad.names == ("feat", "rgb", "kh", "kw")
    assert x.grad.names == x.names
    bad = ember.randn(2, 3, 5, 5, names=("N", "C", "H", "W"))
    with pytest.raises(RuntimeError, match="channel dim is named 'C'.*expects 'rgb'"):
        m(bad)
    # transposed: the weight's layout is (in, out, ...)
    t = ember.nn.ConvTranspose2d(3, 2, 2)
    t.weight = ember.nn.Parameter(t.weight.detach().rename("rgb", "out", None, None))
    assert t(x).names == ("N", "out", "H", "W")


def test_names_unfold_fold():
    x = ember.randn(2, 3, 4, 4, names=("N", "C", "H", "W"))
    u = ember.nn.functional.unfold(x, 2)
    assert u.names == ("N", None, None)
    f = ember.nn.functional.fold(u, 4, 2)
    assert f.names == ("N", None, None, None)


# ---------------------------------------------------------------------- device dispatch
def test_strict_cuda_dispatch():
    from strict_backend import StrictArray, strict_cuda

    rng = np.random.default_rng(0)
    arrays = {
        "x": rng.standard_normal((2, 4, 5, 5)),
        "w": rng.standard_normal((4, 2, 3, 3)),
        "b": rng.standard_normal(4),
        "wt": rng.standard_normal((4, 3, 2, 2)),
        "u": rng.standard_normal((2, 16, 9)),
    }
    fns = [
        lambda t: ember.nn.functional.conv2d(t["x"], t["w"], t["b"], padding=1, groups=2),
        lambda t: ember.nn.functional.conv2d(t["x"], t["w"][:, :, :1, :1], groups=2),
        lambda t: ember.nn.functional.conv_transpose2d(t["x"], t["wt"], t["b"][:3], stride=2),
        lambda t: ember.nn.functional.unfold(t["x"], 2, padding=1),
        lambda t: ember.nn.functional.fold(t["u"], 4, 2),
        lambda t: (
            ember.nn.Conv2d(4, 2, 3, padding=1, padding_mode="reflect")
            .double()
            .to(t["x"].device)(t["x"])
        ),
    ]

    def run(cuda):
        t = {
            k: ember.tensor(a, device="cuda" if cuda else None).requires_grad_()
            for k, a in arrays.items()
        }
        res = []
        for f in fns:
            ember.manual_seed(0)
            y = f(t)
            (g,) = ember.autograd.grad((y * y).sum(), [t["x"] if f is not fns[4] else t["u"]],
                                       create_graph=True)  # fmt: skip
            (gg,) = ember.autograd.grad(g.sum(), [t["x"] if f is not fns[4] else t["u"]],
                                        allow_unused=True)  # fmt: skip
            res.append((y, g, gg))
        return res

    ref = run(False)
    with strict_cuda():
        got = run(True)
    for (y, g, gg), (ry, rg, rgg) in zip(got, ref):
        assert type(y._data) is StrictArray and type(g._data) is StrictArray
        np.testing.assert_allclose(np.asarray(y.cpu()._data), ry._data, atol=1e-10)
        np.testing.assert_allclose(np.asarray(g.cpu()._data), rg._data, atol=1e-10)
        if gg is not None:
            assert type(gg._data) is StrictArray


# ---------------------------------------------------------------------- fusion with BatchNorm
@needs_torch
def test_fuse_conv_bn_eval():
    if not hasattr(ember.nn, "BatchNorm2d"):
        pytest.skip("BatchNorm2d not available yet")
    for mod in (torch, ember):
        mod.manual_seed(0)
    tc, tb = torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)
    tb.running_mean.uniform_(-1, 1)
    tb.running_var.uniform_(0.5, 2)
    tb.weight.data.uniform_(0.5, 1.5)
    tb.bias.data.uniform_(-1, 1)
    ec, eb = ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4)
    copy_state(tc, ec)
    copy_state(tb, eb)
    tc.eval(), tb.eval(), ec.eval(), eb.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    fused = ember.nn.utils.fuse_conv_bn_eval(ec, eb)
    want = tb(tc(torch.tensor(x))).detach().numpy()
    np.testing.assert_allclose(fused(to_ember(torch.tensor(x))).detach().numpy(), want, atol=1e-5)
    np.testing.assert_allclose(eb(ec(ember.tensor(x))).detach().numpy(), want, atol=1e-5)


def test_same_padding_warning_points_at_the_callers_line():
    from ember.core.ops import convolution

    convolution._SAME_WARNED[0] = False  # torch warns once per process: re-arm it
    x, w = ember.randn(1, 1, 6, 6), ember.randn(1, 1, 2, 2)
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths") as rec:
        ember.nn.functional.conv2d(x, w, padding="same")
    assert rec[0].filename == __file__
