"""F.pad (constant incl. negative = cropping, reflect, replicate, circular), ember.constant_pad_nd
and the padding modules: parity with torch (values, dtypes, gradients), float64 gradcheck and
gradgradcheck, torch's errors, names, reprs, and dispatch on a strict device backend."""

import re

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, raises_like_torch, run_case, run_gradcheck
from nn_harness import check_module

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None


def _pad(pad, mode="constant", value=None):
    def fn(m, x):
        kw = {} if value is None else {"value": value}
        return m.nn.functional.pad(x, pad, mode=mode, **kw)

    return fn


# (shape, pad) per mode; negative amounts crop (also mixed with padding in the same dim)
CONSTANT = [
    ((2, 3, 5), (1, 2)),
    ((2, 3, 5), (-1, 2)),
    ((2, 3, 5), (-2, -1)),
    ((2, 3, 4, 5), (1, 0, 2, 3)),
    ((2, 3, 4, 5), (-1, 1, 1, -2)),
    ((2, 3, 4, 5), (1, 1, 1, 1, 1, 1, 1, 1)),
    ((3, 4), (2, -3, 0, 1)),
    ((5,), (3, 1)),
    ((2, 2, 3, 4, 5), (1, -1, 0, 2, -1, 1)),
]
OTHER = [
    ((2, 3, 5), (1, 2)),
    ((3, 5), (2, 1)),
    ((2, 3, 5), (4, 0)),
    ((2, 3, 5), (-1, 2)),
    ((2, 3, 5), (3, -2)),
    ((2, 3, 4, 5), (1, 2, 3, 1)),
    ((3, 4, 5), (2, 1, 0, 3)),
    ((2, 3, 4, 5), (-1, 2, 2, -1)),
    ((1, 2, 3, 4, 5), (1, 2, 2, 1, 1, 2)),
    ((2, 3, 4, 5), (2, 1, 1, 0, 2, 1)),
    ((1, 2, 3, 4, 5), (-1, 1, 2, -2, 1, 0)),
]


def _cases():
    cases = []
    for shape, p in CONSTANT:
        cases.append(Case(f"constant{shape}{p}", _pad(p), [A(*shape)]))
        cases.append(Case(f"constant_v{shape}{p}", _pad(p, value=1.5), [A(*shape)]))
    for mode in ("reflect", "replicate", "circular"):
        for shape, p in OTHER:
            if mode == "reflect" and any(abs(v) >= shape[-1 - i // 2] for i, v in enumerate(p)):
                continue
            if mode == "replicate" and len(p) == 6 and len(shape) == 5 and p[0] < 0:
                continue
            cases.append(Case(f"{mode}{shape}{p}", _pad(p, mode), [A(*shape)]))
    cases.append(Case("reflect_large", _pad((4, 4), "reflect"), [A(2, 3, 5)]))
    cases.append(Case("replicate_large", _pad((7, 9), "replicate"), [A(2, 3, 5)]))
    cases.append(Case("circular_whole", _pad((5, 5), "circular"), [A(2, 3, 5)]))
    cases.append(
        Case("constant_pad_nd", lambda m, x: m.constant_pad_nd(x, (1, -1, 2, 0), 2.5), [A(3, 4)])
    )
    cases.append(Case("f64", _pad((1, 2, 2, 1), "reflect"), [A(2, 3, 4, dtype="float64")]))
    return cases


CASES = _cases()


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=str)
def test_pad_parity(case):
    run_case(case)


GRAD = [
    c
    for c in CASES
    if c.name.split("(")[0] in ("constant", "reflect", "replicate", "circular", "constant_pad_nd")
][::2]


@pytest.mark.parametrize("case", GRAD, ids=str)
def test_pad_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


@needs_torch
@pytest.mark.parametrize(
    "dtype,value", [("int64", 2.7), ("int64", -2.7), ("int32", 3), ("bool", 1.0), ("uint8", 7)]
)
def test_constant_integer_dtypes(dtype, value):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    e = ember.nn.functional.pad(ember.tensor(a), (1, 2, -1, 1), value=value)
    t = torch.nn.functional.pad(torch.tensor(a), (1, 2, -1, 1), value=value)
    assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@needs_torch
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_non_constant_integer_and_empty_batch(mode):
    a = np.arange(24).reshape(2, 3, 4)
    e = ember.nn.functional.pad(ember.tensor(a), (1, 2), mode)
    t = torch.nn.functional.pad(torch.tensor(a), (1, 2), mode=mode)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    if mode != "circular":
        e = ember.nn.functional.pad(ember.zeros(0, 3, 4), (1, 2), mode)
        assert tuple(e.shape) == (0, 3, 7)


def test_values_by_hand():
    x = ember.arange(5.0).reshape(1, 1, 5)
    f = ember.nn.functional.pad
    assert f(x, (2, 2), "reflect").flatten().tolist() == [2, 1, 0, 1, 2, 3, 4, 3, 2]
    assert f(x, (2, 1), "replicate").flatten().tolist() == [0, 0, 0, 1, 2, 3, 4, 4]
    assert f(x, (2, 1), "circular").flatten().tolist() == [3, 4, 0, 1, 2, 3, 4, 0]
    assert f(x, (-1, -2)).flatten().tolist() == [1, 2]


# ---------------------------------------------------------------------- errors (torch's)
_SUPPORTED = "Supported combinations for non-constant padding"
ERRORS = [
    ("odd", lambda m: m.nn.functional.pad(m.zeros(2, 3), (1,)), RuntimeError,
     "Padding length must be divisible by 2"),
    ("odd3", lambda m: m.nn.functional.pad(m.zeros(2, 3), (1, 2, 3), "reflect"), RuntimeError,
     "Padding length must be divisible by 2"),
    ("too_long", lambda m: m.nn.functional.pad(m.zeros(2, 3), (1,) * 6), RuntimeError,
     ("Padding length should be less than or equal to two times the input dimension but got "
     "padding length 6 and input of dimension 2")),
    ("too_long_reflect", lambda m: m.nn.functional.pad(m.zeros(4), (1,) * 4, "reflect"),
     RuntimeError, "Padding length should be less than or equal to two times the input"),
    ("negative_size", lambda m: m.nn.functional.pad(m.zeros(2, 3), (-2, -2)), RuntimeError,
     "narrow(): length must be non-negative."),
    ("reflect_too_large", lambda m: m.nn.functional.pad(m.zeros(2, 3, 4), (4, 1), "reflect"),
     RuntimeError, ("Argument #4: Padding size should be less than the corresponding input "
     "dimension, but got: padding (4, 1) at dimension 2 of input [2, 3, 4]")),
    ("reflect_too_large_h",
     lambda m: m.nn.functional.pad(m.zeros(1, 1, 1, 4), (1, 1, 1, 1), "reflect"), RuntimeError,
     ("Argument #6: Padding size should be less than the corresponding input dimension, but got: "
     "padding (1, 1) at dimension 2 of input [1, 1, 1, 4]")),
    ("reflect_too_large_d",
     lambda m: m.nn.functional.pad(m.zeros(1, 1, 4, 4, 4), (1, 1, 5, 5, 1, 1), "reflect"),
     RuntimeError, ("Argument #6: Padding size should be less than the corresponding input "
     "dimension, but got: padding (5, 5) at dimension 3 of input [1, 1, 4, 4, 4]")),
    ("value_with_reflect",
     lambda m: m.nn.functional.pad(m.zeros(2, 3), (1, 1), "reflect", value=1.0), RuntimeError,
     'Padding mode "reflect" doesn\'t take in value argument'),
    ("bad_mode", lambda m: m.nn.functional.pad(m.zeros(2, 3), (1, 1), "bogus"),
     NotImplementedError, "Unrecognised padding mode bogus"),
    ("mode_none", lambda m: m.nn.functional.pad(m.zeros(2, 3), (1, 1), None), TypeError,
     "pad(): argument 'mode' (position 3) must be str, not NoneType"),
    ("float_pad", lambda m: m.nn.functional.pad(m.zeros(2, 3), (1.5, 1)), TypeError,
     ("pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
     "float at pos 0")),
    ("1d_input", lambda m: m.nn.functional.pad(m.zeros(3), (1, 1), "reflect"),
     NotImplementedError, "Padding size 2 is not supported for 1D input tensor.\n" + _SUPPORTED),
    ("6d_input", lambda m: m.nn.functional.pad(m.zeros(1, 1, 1, 1, 1, 2), (1, 1), "replicate"),
     NotImplementedError, "Padding size 2 is not supported for 6D input tensor."),
    ("pad6_3d", lambda m: m.nn.functional.pad(m.zeros(2, 3, 4), (1,) * 6, "circular"),
     NotImplementedError, "Padding size 6 is not supported for 3D input tensor."),
    ("pad4_2d", lambda m: m.nn.functional.pad(m.zeros(3, 4), (1,) * 4, "replicate"),
     NotImplementedError, "Padding size 4 is not supported for 2D input tensor."),
    ("empty_dim", lambda m: m.nn.functional.pad(m.zeros(2, 0, 4), (1, 1), "reflect"),
     RuntimeError, ("Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other "
     "non-zero dimensions for input, but got: [2, 0, 4]")),
    ("empty_dim_2d", lambda m: m.nn.functional.pad(m.zeros(2, 3, 0, 4), (1,) * 4, "replicate"),
     RuntimeError, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size"),
    ("circular_wrap", lambda m: m.nn.functional.pad(m.zeros(2, 3, 4), (5, 1), "circular"),
     RuntimeError, "Padding value causes wrapping around more than once."),
    ("circular_empty", lambda m: m.nn.functional.pad(m.zeros(2, 3, 4, 3), (2, 0, -3, -2),
     "circular"), RuntimeError, "Negative padding value is resulting in an empty dimension"),
    ("uint8_overflow", lambda m: m.nn.functional.pad(m.zeros(2, dtype=m.uint8), (1, 1), value=-1),
     RuntimeError, "value cannot be converted to type uint8_t without overflow"),
]  # fmt: skip


@pytest.mark.parametrize("row", ERRORS, ids=[r[0] for r in ERRORS])
def test_errors(row):
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


def test_tensor_pad_argument():
    with pytest.raises(TypeError, match=re.escape("must be tuple of ints, not Tensor")):
        ember.nn.functional.pad(ember.zeros(2, 3), ember.tensor([1, 1]))


# ---------------------------------------------------------------------- modules
MODULES = [
    ("ReflectionPad1d", (2,), A(2, 3, 5)),
    ("ReflectionPad1d", ((1, 3),), A(3, 5)),
    ("ReflectionPad2d", (1,), A(2, 3, 4, 5)),
    ("ReflectionPad2d", ((1, 2, 3, 0),), A(3, 4, 5)),
    ("ReflectionPad3d", (1,), A(1, 2, 3, 4, 5)),
    ("ReplicationPad1d", ((3, 1),), A(2, 3, 4)),
    ("ReplicationPad2d", ((1, 2, 0, 3),), A(2, 3, 4, 5)),
    ("ReplicationPad3d", (2,), A(2, 2, 3, 3)),
    ("ZeroPad1d", ((1, 2),), A(2, 3, 4)),
    ("ZeroPad2d", (2,), A(2, 3, 4, 5)),
    ("ZeroPad2d", ((-1, 1, 2, 0),), A(2, 3, 4, 5)),
    ("ZeroPad3d", (1,), A(1, 2, 3, 4, 5)),
    ("ConstantPad1d", (2, 3.5), A(2, 3, 4)),
    ("ConstantPad2d", ((1, 2, 3, 4), -1.0), A(3, 4, 5)),
    ("ConstantPad3d", (1, 0.5), A(2, 2, 3, 4)),
    ("CircularPad1d", (2,), A(2, 3, 4)),
    ("CircularPad2d", ((1, 2, 2, 1),), A(1, 3, 4, 5)),
    ("CircularPad3d", (1,), A(1, 2, 3, 4, 5)),
]


@needs_torch
@pytest.mark.parametrize("row", MODULES, ids=[f"{r[0]}{r[1]}" for r in MODULES])
def test_module_parity_and_repr(row):
    name, args, inp = row
    check_module(lambda m: getattr(m.nn, name)(*args), [inp])
    e, t = getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(e) == repr(t)
    assert e.padding == t.padding
    assert list(e.state_dict()) == []


@needs_torch
def test_circular_module_dim_check():
    raises_like_torch(
        lambda m: m.nn.CircularPad2d(1)(m.zeros(4)),
        ValueError,
        "expected 3D or 4D input (got 1D input)",
    )


def test_module_paths():
    from ember.nn.modules.padding import ReflectionPad2d, ZeroPad2d

    assert ember.nn.ReflectionPad2d is ReflectionPad2d and ember.nn.ZeroPad2d is ZeroPad2d
    assert isinstance(ember.nn.ZeroPad2d(1), ember.nn.ConstantPad2d)
    assert ember.nn.ZeroPad1d(1).value == 0.0


# ---------------------------------------------------------------------- names
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_names_kept_on_output_and_grad(mode):
    x = ember.randn(2, 3, 4, 5, names=("N", "C", "H", "W"), requires_grad=True)
    y = ember.nn.functional.pad(x, (1, 2, 1, -1), mode)
    assert y.names == ("N", "C", "H", "W")
    y.sum().backward()
    assert x.grad.names == ("N", "C", "H", "W")
    assert ember.nn.ReflectionPad2d(1)(x).names == ("N", "C", "H", "W")


# ---------------------------------------------------------------------- device dispatch
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_strict_device(mode):
    from strict_backend import StrictArray, strict_cuda

    with strict_cuda():
        x = ember.randn(2, 3, 4, 5).to("cuda").requires_grad_(True)
        y = ember.nn.functional.pad(x, (1, 2, 2, -1), mode)
        assert type(y._data) is StrictArray
        (y * y).sum().backward()
        assert type(x.grad._data) is StrictArray
        (g,) = ember.autograd.grad((y * y).sum(), x, create_graph=True)
        g.sum().backward()
