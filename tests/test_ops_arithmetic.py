"""Arithmetic ops (core/ops/arithmetic.py): parity with torch, float64 gradchecks, dtype promotion,
in-place and reflected dunders, and torch's error messages."""

import itertools
import re

import ember
import numpy as np
import pytest
from harness import DTYPES, A, Case, assert_same, raises_like_torch, run_case, run_gradcheck, torch

POS = {"low": 0.5, "high": 2.0}  # strictly positive inputs (divisors, logs, bases)

# differentiable rows: parity (values, dtypes, gradients) and float64 gradcheck + gradgradcheck
GRAD_CASES = [
    Case("add", lambda m, x, y: m.add(x, y), [A(3, 4), A(4)]),
    Case("add_alpha", lambda m, x, y: m.add(x, y, alpha=2.5), [A(3, 4), A(3, 1)]),
    Case("add_scalar", lambda m, x: x + 1.5, [A(3, 4)]),
    Case("radd", lambda m, x: 2 + x, [A(3, 4)]),
    Case("sub", lambda m, x, y: x - y, [A(3, 4), A(4)]),
    Case("sub_alpha", lambda m, x, y: m.sub(x, y, alpha=-3), [A(3, 4), A(4)]),
    Case("rsub_dunder", lambda m, x: 2 - x, [A(3, 4)]),
    Case("rsub_fn", lambda m, x, y: m.rsub(x, y, alpha=2), [A(3, 4), A(4)]),
    Case("subtract", lambda m, x, y: m.subtract(x, y), [A(3, 4), A(4)]),
    Case("mul", lambda m, x, y: x * y, [A(2, 3, 4), A(3, 1)]),
    Case("rmul", lambda m, x: 3 * x, [A(3, 4)]),
    Case("multiply", lambda m, x, y: m.multiply(x, y), [A(3, 4), A(3, 4)]),
    Case("div", lambda m, x, y: x / y, [A(3, 4), A(3, 1, **POS)]),
    Case("div_scalar", lambda m, x: x / 4, [A(3, 4)]),
    Case("rdiv", lambda m, x: 2 / x, [A(3, 4, **POS)]),
    Case("true_divide", lambda m, x, y: m.true_divide(x, y), [A(3, 4), A(4, **POS)]),
    Case("divide", lambda m, x, y: m.divide(x, y), [A(3, 4), A(4, **POS)]),
    Case("neg", lambda m, x: -x, [A(3, 4)]),
    Case("negative", lambda m, x: m.negative(x), [A(3, 4)]),
    Case("pos", lambda m, x: +x, [A(3, 4)]),
    Case("pow_tt", lambda m, x, y: m.pow(x, y), [A(3, 4, **POS), A(4)]),
    Case("pow_scalar", lambda m, x: x**3, [A(3, 4)]),
    Case("pow_frac", lambda m, x: x**0.5, [A(3, 4, **POS)]),
    Case("pow_zero", lambda m, x: x**0, [A(3, 4)]),
    Case("rpow", lambda m, x: 2**x, [A(3, 4)]),
    Case("rpow_float", lambda m, x: 1.5**x, [A(3, 4)]),
    Case("remainder", lambda m, x, y: m.remainder(x, y), [A(3, 4, low=-3, high=3), A(4, **POS)]),
    Case("mod_scalar", lambda m, x: x % 0.7, [A(3, 4)]),
    Case("rmod", lambda m, x: 5.5 % x, [A(3, 4, **POS)], grad=False),  # torch: no derivative
    Case("fmod", lambda m, x, y: m.fmod(x, y), [A(3, 4, low=-3, high=3), A(4, **POS)]),
    Case("fmod_scalar", lambda m, x: m.fmod(x, -0.7), [A(3, 4)]),
    Case("addcmul", lambda m, x, a, b: m.addcmul(x, a, b), [A(3, 4), A(4), A(3, 1)]),
    Case(
        "addcmul_value",
        lambda m, x, a, b: m.addcmul(x, a, b, value=-0.5),
        [A(3, 4), A(3, 4), A(3, 4)],
    ),
    Case(
        "addcdiv", lambda m, x, a, b: m.addcdiv(x, a, b, value=2), [A(3, 4), A(4), A(3, 1, **POS)]
    ),
    Case("lerp_scalar", lambda m, x, y: m.lerp(x, y, 0.3), [A(3, 4), A(4)]),
    Case("lerp_scalar_hi", lambda m, x, y: m.lerp(x, y, 0.8), [A(3, 4), A(3, 4)]),
    Case(
        "lerp_tensor", lambda m, x, y, w: m.lerp(x, y, w), [A(3, 4), A(3, 4), A(4, low=0, high=1)]
    ),
    Case("hypot", lambda m, x, y: m.hypot(x, y), [A(3, 4), A(4)]),
    Case("atan2", lambda m, x, y: m.atan2(x, y), [A(3, 4), A(4)]),
    Case("arctan2", lambda m, x, y: m.arctan2(x, y), [A(3, 4), A(3, 4)]),
    Case("logaddexp", lambda m, x, y: m.logaddexp(x, y), [A(3, 4), A(4)]),
    Case("logaddexp2", lambda m, x, y: m.logaddexp2(x, y), [A(3, 4), A(4)]),
    Case("copysign", lambda m, x, y: m.copysign(x, y), [A(3, 4), A(4)]),
    Case("copysign_scalar", lambda m, x: m.copysign(x, -1.0), [A(3, 4)]),
    Case("float_power", lambda m, x: m.float_power(x, 2), [A(3, 4)], atol=1e-6),
    Case("float_power_t", lambda m, x, y: m.float_power(x, y), [A(3, 4, **POS), A(4)]),
    Case("xlogy", lambda m, x, y: m.xlogy(x, y), [A(3, 4), A(4, **POS)]),
    Case("xlogy_scalar_other", lambda m, x: m.xlogy(x, 3.0), [A(3, 4)]),
    Case("xlogy_scalar_self", lambda m, y: m.xlogy(2.0, y), [A(3, 4, **POS)]),
    Case("ldexp", lambda m, x, y: m.ldexp(x, y), [A(3, 4), A(4)]),
    Case(
        "method_chain",
        lambda m, x, y: x.mul(y).add(y, alpha=2).div(y.abs() + 1).sub(x),
        [A(3, 4), A(4)],
    ),
]

# no gradient (zero derivative) or non-float rows: parity only
VALUE_CASES = [
    Case(
        "div_trunc",
        lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
        [A(3, 4, low=-5, high=5), A(4, **POS)],
    ),
    Case(
        "div_floor",
        lambda m, x, y: m.div(x, y, rounding_mode="floor"),
        [A(3, 4, low=-5, high=5), A(4, **POS)],
    ),
    Case("floordiv", lambda m, x, y: x // y, [A(3, 4, low=-5, high=5), A(4, **POS)], grad=False),
    Case("floordiv_float_edge", lambda m, x: x // 0.1, [A(3, 4, low=-5, high=5)], grad=False),
    Case("rfloordiv", lambda m, x: 7 // x, [A(3, 4, **POS)], grad=False),
    Case("int_floordiv", lambda m, x: x // -3, [A(3, 4, dtype="int64", low=-9, high=9)]),
    Case(
        "int_floordiv_t",
        lambda m, x, y: m.floor_divide(x, y),
        [A(3, 4, dtype="int32", low=-9, high=9), A(4, dtype="int32", low=1, high=4)],
    ),
    Case(
        "int_div_trunc",
        lambda m, x: m.div(x, -4, rounding_mode="trunc"),
        [A(3, 4, dtype="int64", low=-9, high=9)],
    ),
    Case(
        "int_div_floor",
        lambda m, x, y: m.div(x, y, rounding_mode="floor"),
        [A(3, 4, dtype="int64", low=-9, high=9), A(4, dtype="int64", low=1, high=3)],
    ),
    Case(
        "int_truediv",
        lambda m, x, y: x / y,
        [A(3, 4, dtype="int64", low=-9, high=9), A(4, dtype="int32", low=1, high=3)],
    ),
    Case("bool_truediv", lambda m, x: x / 2, [A(3, dtype="bool")]),
    Case("int_mod", lambda m, x: x % -4, [A(3, 4, dtype="int64", low=-9, high=9)]),
    Case("int_rmod", lambda m, x: 7 % x, [A(3, 4, dtype="int64", low=1, high=4)]),
    Case("int_fmod", lambda m, x: m.fmod(x, 4), [A(3, 4, dtype="int16", low=-9, high=9)]),
    Case("int_pow", lambda m, x: x**2, [A(3, 4, dtype="int64", low=-9, high=9)]),
    Case("int_rpow", lambda m, x: 2**x, [A(3, 4, dtype="int64", low=0, high=9)]),
    Case(
        "int_pow_negative_t",
        lambda m, x, y: x**y,
        [A(12, dtype="int64", low=-2, high=3), A(12, dtype="int64", low=-3, high=2)],
    ),
    Case("rpow_int_negative", lambda m, y: 2**y, [A(6, dtype="int64", low=-3, high=3)]),
    Case(
        "bool_add_alpha",
        lambda m, x, y: m.add(x, y, alpha=2),
        [A(4, dtype="bool"), A(4, dtype="bool", seed=1)],
    ),
    Case("bool_pow_int", lambda m, x: x**2, [A(5, dtype="bool")]),
    Case("bool_pow_bool", lambda m, x: x**False, [A(5, dtype="bool")]),
    Case("bool_mod_int", lambda m, x: x % 2, [A(5, dtype="bool")]),
    Case("int_add_float_scalar", lambda m, x: x + 2.5, [A(3, dtype="int64")]),
    Case("int32_add_f64_0d", lambda m, x, y: x + y, [A(3, dtype="int32"), A(dtype="float64")]),
    Case(
        "f32_add_f64_0d", lambda m, x, y: x + y, [A(3, grad=False), A(dtype="float64", grad=False)]
    ),
    Case(
        "i64_add_f16",
        lambda m, x, y: x + y,
        [A(3, dtype="int64"), A(3, dtype="float16")],
        atol=1e-2,
        rtol=1e-2,
    ),
    Case("bool_add_bool", lambda m, x, y: x + y, [A(4, dtype="bool"), A(4, dtype="bool", seed=1)]),
    Case("bool_add_int", lambda m, x: x + 3, [A(4, dtype="bool")]),
    Case(
        "u8_add_i8",
        lambda m, x, y: x + y,
        [A(4, dtype="uint8", low=0, high=9), A(4, dtype="int8", low=-9, high=9)],
    ),
    Case(
        "int_mul_alpha",
        lambda m, x, y: m.add(x, y, alpha=3),
        [A(4, dtype="int64"), A(4, dtype="int64")],
    ),
    Case(
        "int_addcmul_value",
        lambda m, x: m.addcmul(x, x, x, value=2),
        [A(4, dtype="int64", low=-3, high=3)],
    ),
    Case(
        "addcdiv_int_input",
        lambda m, x, a, b: m.addcdiv(x, a, b),
        [A(4, dtype="int64"), A(4, grad=False), A(4, grad=False, **POS)],
    ),
    Case("nextafter", lambda m, x, y: m.nextafter(x, y), [A(3, 4, grad=False), A(4, grad=False)]),
    Case(
        "nextafter_f64",
        lambda m, x, y: m.nextafter(x, y),
        [A(3, dtype="float64", grad=False), A(3, dtype="float64", grad=False)],
    ),
    Case("float_power_int", lambda m, x: m.float_power(x, 3), [A(4, dtype="int64")]),
    Case(
        "complex_mul",
        lambda m, x, y: x * y,
        [A(3, dtype="complex64", grad=False), A(3, dtype="complex64", grad=False)],
    ),
    Case("complex_scalar", lambda m, x: x + 1j, [A(3, grad=False)]),
    Case(
        "complex_mul_div_grad",
        lambda m, x, y: x * y / (y + 3),
        [A(3, dtype="complex64"), A(3, dtype="complex64")],
    ),
]


@pytest.mark.parametrize("case", GRAD_CASES + VALUE_CASES, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_rounded_grads_are_zero():
    # div with a rounding mode has zero derivative (torch returns zeros, not None); floor_divide
    # (``//``) has none at all: torch records it and its backward raises
    x = ember.tensor([1.5, -2.5], requires_grad=True)
    y = ember.tensor([0.7, 0.3], requires_grad=True)
    (
        ember.div(x, y, rounding_mode="floor") + ember.div(x, y, rounding_mode="trunc")
    ).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0] and y.grad.tolist() == [0.0, 0.0]
    q = x // y
    assert q.requires_grad
    with pytest.raises(
        RuntimeError, match="^derivative for aten::floor_divide is not implemented$"
    ):
        q.sum().backward()


def test_pow_exponent_grad_at_zero_base():
    # d(0^b)/db is taken as 0 for b >= 0 (torch's convention), not nan
    if torch is None:
        pytest.skip("torch missing")
    vals = ([0.0, 2.0, 0.0], [2.0, 1.5, 0.0])
    ex, ey = (ember.tensor(v, requires_grad=True) for v in vals)
    tx, ty = (torch.tensor(v, requires_grad=True) for v in vals)
    ember.pow(ex, ey).sum().backward()
    torch.pow(tx, ty).sum().backward()
    assert_same(ex.grad, tx.grad)
    assert_same(ey.grad, ty.grad)


def test_xlogy_zero():
    if torch is None:
        pytest.skip("torch missing")
    x, y = [0.0, 0.0, 1.0, 0.0], [0.0, float("nan"), 2.0, -1.0]
    assert_same(
        ember.xlogy(ember.tensor(x), ember.tensor(y)), torch.xlogy(torch.tensor(x), torch.tensor(y))
    )


def test_copysign_negative_zero_and_grad():
    if torch is None:
        pytest.skip("torch missing")
    x, y = [1.0, 0.0, -2.0, 3.0], [-0.0, -1.0, 2.0, 0.0]
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    er, tr = ember.copysign(ex, ember.tensor(y)), torch.copysign(tx, torch.tensor(y))
    assert_same(er, tr)
    er.sum().backward()
    tr.sum().backward()
    assert_same(ex.grad, tx.grad)


def test_lerp_endpoints_exact():
    x = ember.tensor([1e8, -3.0, 0.1])
    y = ember.tensor([1.0, 7.0, 0.3])
    assert ember.lerp(x, y, 1.0).tolist() == y.tolist()
    assert ember.lerp(x, y, 0.0).tolist() == x.tolist()


def test_uint8_scalar_wraps():
    if torch is None:
        pytest.skip("torch missing")
    a = np.array([3, 250], dtype=np.uint8)
    assert_same(ember.tensor(a) + 10, torch.tensor(a) + 10)
    assert_same(ember.tensor(a) * 2, torch.tensor(a) * 2)
    assert_same(ember.tensor(a) + 300, torch.tensor(a) + 300)  # out-of-range scalars wrap
    i = np.array([1, -2], dtype=np.int32)
    assert_same(ember.tensor(i) * 2**40 + 3, torch.tensor(i) * 2**40 + 3)


# ---------------------------------------------------------------------- in-place and dunders
INPLACE = [
    ("iadd", lambda x, y: x.__iadd__(y)),
    ("isub", lambda x, y: x.__isub__(y)),
    ("imul", lambda x, y: x.__imul__(y)),
    ("itruediv", lambda x, y: x.__itruediv__(y)),
    ("ifloordiv", lambda x, y: x.__ifloordiv__(y)),
    ("imod", lambda x, y: x.__imod__(y)),
    ("ipow", lambda x, y: x.__ipow__(y)),
    ("add_alpha", lambda x, y: x.add_(y, alpha=2)),
    ("sub_alpha", lambda x, y: x.sub_(y, alpha=0.5)),
    ("div_floor", lambda x, y: x.div_(y, rounding_mode="floor")),
    ("fmod_", lambda x, y: x.fmod_(y)),
    ("remainder_", lambda x, y: x.remainder_(y)),
    ("addcmul_", lambda x, y: x.addcmul_(y, y, value=2)),
    ("addcdiv_", lambda x, y: x.addcdiv_(y, y + 3)),
    ("lerp_", lambda x, y: x.lerp_(y, 0.25)),
    ("hypot_", lambda x, y: x.hypot_(y)),
    ("atan2_", lambda x, y: x.atan2_(y)),
    ("copysign_", lambda x, y: x.copysign_(y)),
    ("xlogy_", lambda x, y: x.xlogy_(y)),
    ("ldexp_", lambda x, y: x.ldexp_(y)),
    ("true_divide_", lambda x, y: x.true_divide_(y)),
    ("mul_scalar", lambda x, y: x.mul_(3)),
    ("neg_", lambda x, y: x.neg_()),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace(name, fn):
    if torch is None:
        pytest.skip("torch missing")
    a = np.array([[1.5, -2.25, 3.0], [0.5, 4.0, -1.0]], dtype=np.float32)
    b = np.array([0.75, 2.0, 1.25], dtype=np.float32)
    ex, tx = ember.tensor(a), torch.tensor(a)
    er = fn(ex, ember.tensor(b))
    fn(tx, torch.tensor(b))
    assert er is ex  # in place: the same object comes back
    assert_same(ex, tx)
    assert ex._version > 0


def test_inplace_int_dunders():
    if torch is None:
        pytest.skip("torch missing")
    a = np.array([7, -8, 9], dtype=np.int64)
    for op in ("__iadd__", "__isub__", "__imul__", "__ifloordiv__", "__imod__", "__ipow__"):
        ex, tx = ember.tensor(a), torch.tensor(a)
        getattr(ex, op)(3)
        getattr(tx, op)(3)
        assert_same(ex, tx, what=op)


def test_inplace_float_into_float32_keeps_dtype():
    x = ember.ones(3)
    x += ember.ones(3, dtype=ember.float64)
    assert x.dtype is ember.float32 and x.tolist() == [2.0, 2.0, 2.0]


def test_float_power_inplace_double():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    x.float_power_(2)
    assert x.tolist() == [1.0, 4.0]


def test_inplace_autograd():
    if torch is None:
        pytest.skip("torch missing")
    a = np.array([1.5, -2.0, 3.0], dtype=np.float32)
    res = []
    for m in (ember, torch):
        w = m.tensor(a, requires_grad=True)
        y = w * 2
        y += w
        y *= w
        y /= 2
        y.sum().backward()
        res.append(w.grad)
    assert_same(res[0], res[1])


# ---------------------------------------------------------------------- promotion table
_HALF = {"float16", "bfloat16"}
_CPLX = {"complex64", "complex128"}
PAIRS = [
    (a, b)
    for a, b in itertools.product(DTYPES, DTYPES)
    if not ((a in _HALF and b in _CPLX) or (b in _HALF and a in _CPLX))
]  # no complex32


def _mk(m, d, zero_dim):
    return m.ones(() if zero_dim else (2,), dtype=getattr(m, d))


def _name(d):
    return str(d).split(".")[-1]


@pytest.mark.parametrize(
    "op",
    ["add", "mul", "div", "floor_divide", "remainder", "pow", "sub", "atan2", "copysign", "hypot"],
)
def test_promotion_table(op):
    if torch is None:
        pytest.skip("torch missing")
    bad = []
    for a, b in PAIRS:
        for za, zb in ((False, False), (False, True), (True, False)):
            args = [(_mk(m, a, za), _mk(m, b, zb)) for m in (ember, torch)]
            tr = _name(torch.result_type(*args[1]))
            if _name(ember.result_type(*args[0])) != tr:
                bad.append(("result_type", a, b, za, zb))
            try:
                want = _name(getattr(torch, op)(*args[1]).dtype)
            except Exception as e:  # noqa: BLE001 - the exception type is what we compare
                want = type(e).__name__
            try:
                got = _name(getattr(ember, op)(*args[0]).dtype)
            except Exception as e:  # noqa: BLE001
                got = type(e).__name__
            if got != want:
                bad.append((a, b, za, zb, got, want))
    assert not bad, bad[:10]


SCALARS = [True, 3, -2.5, 1j]


@pytest.mark.parametrize("op", ["add", "mul", "div", "sub", "floor_divide", "remainder", "pow"])
def test_promotion_scalars(op):
    if torch is None:
        pytest.skip("torch missing")
    bad = []
    for d in DTYPES:
        for s in SCALARS:
            if d in _HALF and isinstance(s, complex):
                continue  # half + complex scalar is complex32 in torch, which ember lacks
            for rev in (False, True):
                e, t = _mk(ember, d, False), _mk(torch, d, False)
                ea, ta = ((s, e), (s, t)) if rev else ((e, s), (t, s))
                if _name(ember.result_type(*ea)) != _name(torch.result_type(*ta)):
                    bad.append(("result_type", d, s, rev))
                try:
                    want = _name(getattr(torch, op)(*ta).dtype)
                except Exception as ex:  # noqa: BLE001
                    want = type(ex).__name__
                try:
                    got = _name(getattr(ember, op)(*ea).dtype)
                except Exception as ex:  # noqa: BLE001
                    got = type(ex).__name__
                if got != want:
                    bad.append((d, s, rev, got, want))
    assert not bad, bad[:10]


# ---------------------------------------------------------------------- errors
F = lambda m: m.ones(3)
INT = lambda m: m.ones(3, dtype=m.int64)
BOOL = lambda m: m.ones(3, dtype=m.bool)

ERRORS = [
    (
        "imul_cast",
        lambda m: INT(m).__imul__(F(m)),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    ),
    (
        "iadd_float_scalar",
        lambda m: m.ones(3, dtype=m.int32).__iadd__(2.5),
        RuntimeError,
        "result type Float can't be cast to the desired output type Int",
    ),
    (
        "itruediv_int",
        lambda m: INT(m).__itruediv__(2),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    ),
    ("int_floordiv_zero", lambda m: INT(m) // 0, RuntimeError, "ZeroDivisionError"),
    (
        "int_mod_zero",
        lambda m: INT(m) % m.zeros(3, dtype=m.int64),
        RuntimeError,
        "ZeroDivisionError",
    ),
    ("int_fmod_zero", lambda m: m.fmod(INT(m), 0), RuntimeError, "ZeroDivisionError"),
    (
        "int_div_floor_zero",
        lambda m: m.div(INT(m), 0, rounding_mode="floor"),
        RuntimeError,
        "ZeroDivisionError",
    ),
    (
        "bad_rounding",
        lambda m: m.div(F(m), 2, rounding_mode="round"),
        RuntimeError,
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'",
    ),
    (
        "sub_bools",
        lambda m: BOOL(m) - BOOL(m),
        RuntimeError,
        (
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        ),
    ),
    (
        "sub_bool_float",
        lambda m: BOOL(m) - F(m),
        RuntimeError,
        (
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        ),
    ),
    (
        "rsub_bool",
        lambda m: 1 - BOOL(m),
        RuntimeError,
        "Subtraction, the `-` operator, with a bool tensor is not supported.",
    ),
    (
        "neg_bool",
        lambda m: -BOOL(m),
        RuntimeError,
        "Negation, the `-` operator, on a bool tensor is not supported.",
    ),
    (
        "int_neg_pow",
        lambda m: INT(m) ** -1,
        RuntimeError,
        "Integers to negative integer powers are not allowed.",
    ),
    (
        "bool_floordiv",
        lambda m: BOOL(m) // BOOL(m),
        NotImplementedError,
        "\"div_floor_cpu\" not implemented for 'Bool'",
    ),
    (
        "bool_trunc",
        lambda m: m.div(BOOL(m), BOOL(m), rounding_mode="trunc"),
        NotImplementedError,
        "\"div_trunc_cpu\" not implemented for 'Bool'",
    ),
    (
        "bool_mod",
        lambda m: BOOL(m) % BOOL(m),
        NotImplementedError,
        "\"remainder_cpu\" not implemented for 'Bool'",
    ),
    (
        "bool_fmod",
        lambda m: m.fmod(BOOL(m), BOOL(m)),
        NotImplementedError,
        "\"fmod_cpu\" not implemented for 'Bool'",
    ),
    (
        "bool_pow",
        lambda m: BOOL(m) ** BOOL(m),
        NotImplementedError,
        "\"pow\" not implemented for 'Bool'",
    ),
    (
        "complex_floordiv",
        lambda m: m.ones(2, dtype=m.complex64) // 2,
        NotImplementedError,
        "\"div_floor_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        "int_alpha_float",
        lambda m: m.add(INT(m), INT(m), alpha=0.5),
        RuntimeError,
        "For integral input tensors, argument alpha must not be a floating point number.",
    ),
    (
        "bool_alpha",
        lambda m: m.add(F(m), F(m), alpha=True),
        RuntimeError,
        "Boolean alpha only supported for Boolean results.",
    ),
    (
        "sub_bool_alpha",
        lambda m: m.sub(INT(m), F(m), alpha=True),
        RuntimeError,
        "Boolean alpha only supported for Boolean results.",
    ),
    (
        "addcdiv_int",
        lambda m: m.addcdiv(F(m), INT(m), INT(m)),
        RuntimeError,
        "Integer division with addcdiv is no longer supported",
    ),
    (
        "lerp_end_dtype",
        lambda m: m.lerp(F(m), m.ones(3, dtype=m.float64), 0.5),
        RuntimeError,
        "expected dtype float for `end` but got dtype double",
    ),
    (
        "lerp_weight_dtype",
        lambda m: m.lerp(F(m), F(m), m.ones(3, dtype=m.float64)),
        RuntimeError,
        "expected dtype float for `weight` but got dtype double",
    ),
    (
        "lerp_int",
        lambda m: m.lerp(INT(m), INT(m), 0.5),
        NotImplementedError,
        "\"lerp_kernel_scalar\" not implemented for 'Long'",
    ),
    (
        "hypot_int",
        lambda m: m.hypot(INT(m), INT(m)),
        NotImplementedError,
        "\"hypot_cpu\" not implemented for 'Long'",
    ),
    (
        "logaddexp_int",
        lambda m: m.logaddexp(INT(m), INT(m)),
        NotImplementedError,
        "\"logaddexp_cpu\" not implemented for 'Long'",
    ),
    (
        "nextafter_int",
        lambda m: m.nextafter(INT(m), INT(m)),
        NotImplementedError,
        "\"nextafter_cpu\" not implemented for 'Long'",
    ),
    (
        "atan2_scalar",
        lambda m: m.atan2(F(m), 2),
        TypeError,
        "atan2(): argument 'other' (position 2) must be Tensor, not int",
    ),
    (
        "logaddexp_scalar",
        lambda m: m.logaddexp(F(m), 2.0),
        TypeError,
        "logaddexp(): argument 'other' (position 2) must be Tensor, not float",
    ),
    (
        "ldexp_scalar",
        lambda m: m.ldexp(F(m), 2),
        TypeError,
        "ldexp(): argument 'other' (position 2) must be Tensor, not int",
    ),
    (
        "float_power_inplace",
        lambda m: F(m).float_power_(2),
        RuntimeError,
        (
            "the base given to float_power_ has dtype Float but the operation's result requires "
            "dtype Double"
        ),
    ),
    (
        "broadcast",
        lambda m: F(m) + m.ones(4),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0",
    ),
]


@pytest.mark.parametrize("name,fn,exc,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, fn, exc, msg):
    raises_like_torch(fn, exc, msg)


def test_fmod_scalar_input_error():
    # torch has no (Number self, Tensor other) overload of fmod: its parser lists the two
    msg = "fmod() received an invalid combination of arguments - got (int, Tensor)"
    with pytest.raises(TypeError, match=re.escape(msg)):
        ember.fmod(2, ember.ones(3))


def test_pow_scalar_exponent_saves_input_not_result():
    # torch's PowBackward0 saves the base only: changing the output in place keeps the graph valid
    grads = []
    for m in (ember, torch) if torch is not None else (ember,):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x**3
        assert y.grad_fn.name() == "PowBackward0"
        y.mul_(2)
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == [6.0, 24.0, 54.0]
    assert all(g == grads[0] for g in grads)


def test_pow_tensor_exponent_saves_result():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ember.tensor(2.0) ** x
    assert y.grad_fn.name() == "PowBackward1"
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
