"""Parity regressions found by the sixty-sixth wave, a seeded random fuzz of dtype promotion and
scalar semantics against torch (tensors of every dtype, 0-d, 1-d, 2-d and empty, broadcasting
and not; Python bools, ints past int64, floats with inf, nan and -0.0, complex numbers and numpy
scalars; the arithmetic, bitwise, shift and comparison operators and their reflected and in-place
forms, add/sub with alpha, the division family, pow, atan2, hypot, copysign, maximum, xlogy,
ldexp, where, clamp, lerp, addcmul/addcdiv, result_type/promote_types/can_cast, out= dtypes and
a changed default dtype): a numpy scalar is the number torch's parser reads (a numpy bool and a
complex64 read as floats, numpy ints as ints: ``int8_tensor * np.True_`` is float32), a Python
int past int64 is refused as torch refuses it (past uint64 "int too big to convert", below int64
"can't convert negative int to unsigned", uint64's upper half a uint64 that promotes with no bool
tensor), an elementwise op checks that its operands broadcast and that its result casts to out=
before the kernel refuses a dtype or divides by zero, an integer division of an empty tensor by
zero divides nothing, ``x -= bool_tensor`` is refused like ``x - bool_tensor``, a bitwise or
shift op with a float or complex scalar names the promoted type, add/sub's alpha is range-checked
in integer math and the product wraps, an integer pow's exponent is range-checked in the base's
type, addcmul/addcdiv take only tensors, and a numpy scalar where a tensor belongs is named
``numpy.float64``."""

from __future__ import annotations

import math
import warnings

import ember
import numpy as np
import pytest
from harness import DTYPES, assert_same, results_or_same_error, same_error

torch = pytest.importorskip("torch")


def _t(m, values, dtype):
    return m.tensor(values).to(getattr(m, dtype))


def _same(fn):
    """``fn(torch)`` and ``fn(ember)`` agree: the same tensor (dtype, shape, values), the same
    dtype or number, or the same error type and message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's ComplexWarning: torch reads the real part
        pairs = results_or_same_error(fn)
    for want, got in pairs:
        if isinstance(want, torch.Tensor):
            if want.dtype == torch.bfloat16:  # (torch's numpy() takes no bfloat16)
                assert got.dtype == ember.bfloat16
                want, got = want.float(), got.float()
            assert_same(got, want, atol=1e-6, rtol=1e-5)
        else:
            assert str(got).split(".")[-1] == str(want).split(".")[-1]


# ---------------------------------------------------------------- numpy scalars
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _t(m, [1, 2], "int8") * np.True_,
        lambda m: m.add(np.True_, _t(m, [1, 2], "int32")),
        lambda m: _t(m, [1, 2], "int8") + np.complex64(1 + 2j),
        lambda m: _t(m, [1, 2], "int8") + np.complex128(1 + 2j),
        lambda m: _t(m, [0.5, 1.5], "bfloat16") / np.complex64(2 + 1j),
        lambda m: _t(m, [1.0, -2.0], "float32") >= np.complex64(1 + 1j),
        lambda m: m.rsub(_t(m, [1.5, 2.5], "float64"), np.True_),
        lambda m: m.fmod(_t(m, [3, 4], "int16"), np.True_),
        lambda m: m.result_type(_t(m, [True], "bool"), np.uint8(200)),
        lambda m: m.result_type(_t(m, [1], "int8"), np.float16(0.5)),
        lambda m: _t(m, [1, 2], "int32").__ipow__(np.True_),
        lambda m: _t(m, [1, 2], "int64").__isub__(np.float16(0.5)),
        lambda m: _t(m, [1.0, 2.0], "float32").mul_(np.complex64(3 + 1j)),
        lambda m: _t(m, [True, False], "bool") | np.True_,
    ],
)
def test_numpy_scalars_read_as_torch_reads_them(fn):
    _same(fn)


# ---------------------------------------------------------------- Python ints past int64
@pytest.mark.parametrize("value", [2**64, 2**70, -(2**63) - 1])
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, v: _t(m, [1.0, 2.0], "float32") + v,
        lambda m, v: v / _t(m, [1, 2], "int64"),
        lambda m, v: _t(m, [1, 2], "int16") == v,
        lambda m, v: m.result_type(_t(m, [0.5], "float16"), v),
        lambda m, v: _t(m, [1.0, 2.0], "float32").add_(v),
        lambda m, v: _t(m, [1, 2], "uint8") << v,
        lambda m, v: m.sub(_t(m, [1 + 1j], "complex64"), v),
    ],
)
def test_ints_past_int64_are_refused(fn, value):
    _same(lambda m: fn(m, value))


@pytest.mark.parametrize("value", [2**63, 2**64 - 1])
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, v: _t(m, [True], "bool") + v,
        lambda m, v: m.result_type(_t(m, [False], "bool"), v),
        lambda m, v: _t(m, [1.0, 2.0], "float32") + v,
        lambda m, v: m.result_type(_t(m, [1.0], "float64"), v),
    ],
)
def test_ints_in_uint64_upper_half_are_uint64(fn, value):
    _same(lambda m: fn(m, value))


# ---------------------------------------------------------------- shapes and out= first
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.fmod(_t(m, [0, 2, 3], "uint8"), m.zeros(0, dtype=m.complex64)),
        lambda m: m.bitwise_and(m.zeros(0, 3), m.zeros(0, dtype=m.float16)),
        lambda m: m.atan2(m.zeros(2, 3), m.zeros(3, 2, dtype=m.complex64)),
        lambda m: m.remainder(_t(m, [[1], [2]], "int8"), m.zeros(3, 2, dtype=m.int8)),
        lambda m: m.atan2(m.ones(3, dtype=m.complex128), m.ones(3), out=m.empty(3, dtype=m.half)),
        lambda m: m.bitwise_and(_t(m, [2, 5], "int64"), 0.5, out=m.empty(2, dtype=m.bool)),
        lambda m: m.floor_divide(m.ones(2), m.ones(2, dtype=m.cfloat), out=m.empty(2)),
        lambda m: _t(m, [[0, 1, 4]], "int8").__imod__(m.zeros(3, 1, dtype=m.int8)),
        lambda m: _t(m, [True, False], "bool").__ifloordiv__(_t(m, [0, 1], "int64")),
        lambda m: m.ones(3, dtype=m.cfloat).lt_(m.ones(3, 1, dtype=m.cfloat)),
        lambda m: m.sub(m.zeros(0, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int32), alpha=True),
        # a 0 against a 1 broadcasts to 0: torch reports the 3 that follows
        lambda m: m.addcmul(m.ones(0, dtype=m.cdouble), m.tensor(2, dtype=m.int32), m.ones(3)),
        lambda m: m.where(m.ones(0, dtype=m.bool), m.ones(1), m.ones(3)),
        # an op's own argument checks still come first: clamp's complex input
        lambda m: m.clamp(m.ones(0, dtype=m.cfloat), m.ones(2), m.ones(3)),
        lambda m: m.ones(0, dtype=m.cfloat).clamp_(m.ones(2), m.ones(3)),
        lambda m: m.ones(3) - m.ones(2, dtype=m.bool),
    ],
)
def test_shapes_and_out_are_checked_before_the_kernel(fn):
    same_error(fn)


# ---------------------------------------------------------------- clamp's complex bounds
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.clamp(m.ones(3), m.ones(3, dtype=m.cfloat), m.ones(3)),
        lambda m: m.clamp(m.ones(3, dtype=m.int8), min=m.ones(3, dtype=m.cdouble)),
        lambda m: m.clamp(m.ones(2, dtype=m.half), max=m.ones(1, dtype=m.cfloat)),
        lambda m: m.clamp_min(m.ones(3), m.ones(3, dtype=m.cfloat)),
        lambda m: m.ones(3).clamp_min_(m.ones(3, dtype=m.cfloat)),
        lambda m: m.clamp(m.ones(0), m.ones(2, dtype=m.cfloat), m.ones(3)),
        lambda m: m.clamp(m.ones(3, dtype=m.cfloat), m.ones(3), m.ones(3)),
        # clamp_min/clamp_max with a tensor bound are maximum/minimum: no check of a complex input
        lambda m: m.clamp_min(m.ones(3, dtype=m.cfloat), m.ones(2)),
        lambda m: m.ones(3, dtype=m.cfloat).clamp_max_(m.ones(3)),
        lambda m: m.clamp(m.ones(3, dtype=m.cfloat), max=m.ones(2)),
        lambda m: m.ones(3, dtype=m.int64).clamp_min_(2 + 3j),
    ],
)
def test_clamp_of_a_real_input_by_complex_bounds(fn):
    same_error(fn)


# ---------------------------------------------------------------- integer division by zero
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.remainder(m.zeros(0, 3, dtype=m.int64), 0),
        lambda m: m.fmod(m.zeros(0, dtype=m.int32), False),
        lambda m: m.zeros(0, dtype=m.int8).__ifloordiv__(False),
        lambda m: m.div(
            m.zeros(0, dtype=m.int16), m.zeros(1, dtype=m.int16), rounding_mode="floor"
        ),
        lambda m: m.remainder(_t(m, [1, 2], "int64"), 0),
        lambda m: _t(m, [3], "uint8") // m.zeros(2, dtype=m.uint8),
    ],
)
def test_integer_division_by_zero_only_where_it_divides(fn):
    _same(fn)


# ---------------------------------------------------------------- in-place sub of bools
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.ones(3).__isub__(m.ones(3, dtype=m.bool)),
        lambda m: _t(m, 5, "int16").__isub__(_t(m, False, "bool")),
        lambda m: m.ones(2, dtype=m.int8).sub_(m.ones(2, dtype=m.bool)),
        lambda m: m.ones(3, dtype=m.bool).__isub__(m.ones(3, dtype=m.uint8)),
    ],
)
def test_in_place_sub_refuses_bool_tensors(fn):
    same_error(fn)


# ---------------------------------------------------------------- bitwise refusals
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.ones(2) & 1j,
        lambda m: m.ones(2, dtype=m.float16) << 0j,
        lambda m: m.bitwise_right_shift(0j, m.ones(2, dtype=m.float64)),
        lambda m: m.ones(2, dtype=m.bool) | 2.5,
        lambda m: m.ones(2, dtype=m.int8) ^ 1.5,
    ],
)
def test_bitwise_refusal_names_the_promoted_type(fn):
    same_error(fn)


# ---------------------------------------------------------------- alpha in integer math
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.sub(_t(m, [-1, 2, 3], "int8"), 300, alpha=3),
        lambda m: m.add(_t(m, 1, "uint8"), np.int8(-1), alpha=2),
        lambda m: m.add(_t(m, [1, 2], "uint8"), 3, alpha=-1),
        lambda m: m.add(_t(m, [1, 2], "int8"), _t(m, [1, 2], "int8"), alpha=300),
        lambda m: m.add(_t(m, [1, 2], "uint8"), 3, alpha=-300),
        lambda m: m.add(300, _t(m, [1, 2], "int8"), alpha=3),
    ],
)
def test_integer_alpha(fn):
    _same(fn)


# ---------------------------------------------------------------- integer pow's exponent
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _t(m, [2], "int8") ** 200,
        lambda m: _t(m, [2], "int8") ** -200,
        lambda m: _t(m, [2], "uint8") ** 2**63,
        lambda m: m.pow(_t(m, [2], "int64"), 2**63),
        lambda m: m.zeros(0, 3, dtype=m.uint8).pow_(300),
        lambda m: _t(m, [2], "uint8") ** 255,
        lambda m: m.pow(_t(m, [2], "int8"), np.uint8(200)),
    ],
)
def test_integer_pow_exponent_range(fn):
    _same(fn)


# ---------------------------------------------------------------- tensors only
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.addcmul(m.ones(2), 1.5, m.ones(2)),
        lambda m: m.addcmul(m.ones(2), m.ones(2), np.float16(0.5)),
        lambda m: m.addcdiv(1, m.ones(2), m.ones(2)),
        lambda m: m.addcdiv(m.ones(2), m.ones(2), True),
        lambda m: m.ones(2).addcmul_(1.5, m.ones(2)),
        lambda m: m.logaddexp(m.ones(2), np.float64(2.5)),
        lambda m: m.hypot(np.True_, m.ones(2)),
    ],
)
def test_tensor_arguments_refuse_numbers(fn):
    same_error(fn, TypeError)


# ---------------------------------------------------------------- a seeded mini-fuzz
_SCALARS = [True, False, 0, 1, -3, 7, 300, -129, 2**63, 2**64, -(2**63) - 1, 0.0, -0.0, 1.5,
            -2.25, math.inf, math.nan, 1e300, 2 + 3j, np.float32(1.5), np.int16(4),
            np.uint8(200), np.True_, np.complex64(1 + 1j), np.float64(2.5)]  # fmt: skip
_BINARY = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a / b,
    lambda a, b: a // b,
    lambda a, b: a % b,
    lambda a, b: a**b,
    lambda a, b: a & b,
    lambda a, b: a | b,
    lambda a, b: a ^ b,
    lambda a, b: a << b,
    lambda a, b: a >> b,
    lambda a, b: a == b,
    lambda a, b: a < b,
]
_SHAPES = [(), (3,), (2, 3), (0,), (1, 3), (2, 1)]


def _operand(rng, shape=None, scalar_ok=True):
    if scalar_ok and rng.random() < 0.4:
        return ("s", _SCALARS[rng.integers(len(_SCALARS))])
    dtype = DTYPES[rng.integers(len(DTYPES))]
    shape = _SHAPES[rng.integers(len(_SHAPES))] if shape is None else shape
    if dtype == "bool":
        v = rng.random(shape) > 0.5
    elif dtype.startswith(("int", "uint")):
        v = rng.integers(0 if dtype == "uint8" else -5, 6, shape)
    else:
        v = np.round(rng.uniform(-4, 4, shape), 2)
        if dtype.startswith("complex"):
            v = v + 1j * np.round(rng.uniform(-4, 4, shape), 2)
    return ("t", dtype, v)


def _make(m, spec):
    if spec[0] == "s":
        return spec[1]
    return m.tensor(spec[2]).to(getattr(m, spec[1]))


def _skip(a, b):
    # left alone (see the wave's report): complex32 (ember has no chalf), and torch's complex
    # add/sub that multiplies an infinite operand by alpha (inf+nanj)
    ds = {s[1] for s in (a, b) if s[0] == "t"}
    nums = [s[1] for s in (a, b) if s[0] == "s"]
    if "float16" in ds and any(isinstance(v, (complex, np.complexfloating)) for v in nums):
        return True
    return bool(ds & {"complex64", "complex128"}) and any(
        isinstance(v, float) and not math.isfinite(v) for v in nums
    )


def _case(k, a, b):
    """The fuzz case ``k`` over operand specs ``a`` and ``b``, a function of the module."""
    if k < len(_BINARY):
        f = _BINARY[k]
        if b[0] == "t" and k % 2:  # the reflected order as well
            return lambda m: f(_make(m, b), _make(m, a))
        return lambda m: f(_make(m, a), _make(m, b))
    if k == len(_BINARY):  # in place: self keeps its dtype, or a cast error
        return lambda m: _make(m, a).__iadd__(_make(m, b))
    return lambda m: m.result_type(_make(m, a), _make(m, b))


def test_seeded_mini_fuzz():
    rng = np.random.default_rng(66)
    n = 0
    while n < 200:
        a = _operand(rng, scalar_ok=False)
        b = _operand(rng, a[2].shape if rng.random() < 0.5 else None)
        if _skip(a, b):
            continue
        n += 1
        _same(_case(rng.integers(len(_BINARY) + 2), a, b))
