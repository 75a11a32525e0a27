"""Comparison, min/max/clamp, where, classification, logical and bitwise ops
(core/ops/comparison.py): parity with torch, float64 gradchecks, promotion and error messages."""

import itertools
import re

import ember
import numpy as np
import pytest
from harness import (
    REAL_DTYPES,
    A,
    Case,
    assert_same,
    raises_like_torch,
    run_case,
    run_gradcheck,
    torch,
)

I64 = {"dtype": "int64", "low": -5, "high": 5}
GRAD_CASES = [
    Case("maximum", lambda m, x, y: m.maximum(x, y), [A(3, 4), A(4)]),
    Case("minimum", lambda m, x, y: m.minimum(x, y), [A(3, 4), A(3, 1)]),
    Case("fmax", lambda m, x, y: m.fmax(x, y), [A(3, 4), A(4)]),
    Case("fmin", lambda m, x, y: m.fmin(x, y), [A(3, 4), A(4)]),
    Case("clamp_both", lambda m, x: m.clamp(x, -0.5, 0.7), [A(3, 4)]),
    Case("clamp_min_kw", lambda m, x: m.clamp(x, min=0.1), [A(3, 4)]),
    Case("clamp_max_kw", lambda m, x: x.clamp(max=-0.3), [A(3, 4)]),
    Case("clip", lambda m, x: m.clip(x, -1, 1), [A(3, 4)]),
    Case("clamp_min_fn", lambda m, x: m.clamp_min(x, 0.2), [A(3, 4)]),
    Case("clamp_max_fn", lambda m, x: m.clamp_max(x, 0.2), [A(3, 4)]),
    Case(
        "clamp_tensor",
        lambda m, x, lo, hi: m.clamp(x, lo, hi),
        [A(3, 4), A(4, low=-2, high=0), A(3, 1, low=0, high=2)],
    ),
    Case(
        "clamp_tensor_crossed",
        lambda m, x, lo, hi: m.clamp(x, lo, hi),
        [A(3, 4), A(4, low=0.5, high=1.5), A(4, low=-1.5, high=0.3)],
    ),
    Case("clamp_tensor_min", lambda m, x, lo: m.clamp(x, min=lo), [A(3, 4), A(4)]),
    Case("clamp_tensor_max", lambda m, x, hi: x.clamp(max=hi), [A(3, 4), A(3, 1)]),
    Case("where", lambda m, x, y: m.where(x > y, x, y), [A(3, 4), A(4)]),
    Case("where_scalar_y", lambda m, x: m.where(x > 0, x, 0.0), [A(3, 4)]),
    Case("where_scalar_x", lambda m, x: m.where(x > 0, -1.5, x), [A(3, 4)]),
    Case("where_method", lambda m, x, y: x.where(y > 0, y), [A(3, 4), A(3, 4)]),
    Case("where_broadcast", lambda m, x, y: m.where(x > 0, x, y), [A(2, 3, 4), A(3, 1, seed=3)]),
]


def _named(name):
    return lambda m, x, y: getattr(m, name)(x, y)


VALUE_CASES = [
    *[
        Case(n, _named(n), [A(3, 4), A(4)])
        for n in (
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "greater",
            "greater_equal",
            "less",
            "less_equal",
            "not_equal",
        )
    ],
    Case("eq_dunder", lambda m, x: x == x.clone(), [A(3, 4)]),
    Case("ne_dunder", lambda m, x, y: x != y, [A(3, 4), A(3, 4)]),
    Case("lt_dunder_scalar", lambda m, x: x < 0.5, [A(3, 4)]),
    Case("rlt_scalar", lambda m, x: 0.5 < x, [A(3, 4)]),
    Case("req_scalar", lambda m, x: 1 == x, [A(3, 4, dtype="int64", low=0, high=2)]),
    Case("ge_int_float", lambda m, x, y: x >= y, [A(3, 4, **I64), A(4)]),
    Case("le_int_float_scalar", lambda m, x: x <= 1.5, [A(3, 4, **I64)]),
    Case("eq_bool_int", lambda m, x: x == 1, [A(5, dtype="bool")]),
    Case("gt_f16_f64_0d", lambda m, x, y: x > y, [A(5, dtype="float16"), A(dtype="float64")]),
    Case("maximum_int", lambda m, x, y: m.maximum(x, y), [A(3, 4, **I64), A(4, **I64)]),
    Case("minimum_int_float", lambda m, x, y: m.minimum(x, y), [A(3, 4, **I64), A(4, grad=False)]),
    Case("fmin_int", lambda m, x, y: m.fmin(x, y), [A(3, **I64), A(3, **I64)]),
    Case("clamp_int", lambda m, x: m.clamp(x, -2, 3), [A(3, 4, **I64)]),
    Case("clamp_int_float", lambda m, x: m.clamp(x, 0.5), [A(3, 4, **I64)]),
    Case(
        "clamp_f32_f64_tensor",
        lambda m, x, y: m.clamp(x, y),
        [A(3, grad=False), A(3, dtype="float64", grad=False)],
    ),
    Case("where_ints", lambda m, c: m.where(c, 1, 0), [A(3, 4, dtype="bool")]),
    Case("where_float_scalars", lambda m, c: m.where(c, 1.0, 0), [A(3, 4, dtype="bool")]),
    Case(
        "where_int_float",
        lambda m, c, x: m.where(c, x, 2.5),
        [A(3, 4, dtype="bool"), A(3, 4, **I64)],
    ),
    Case(
        "where_f32_f64_0d",
        lambda m, c, x, y: m.where(c, x, y),
        [A(4, dtype="bool"), A(4, grad=False), A(dtype="float64", grad=False)],
    ),
    Case(
        "where_uint8_cond",
        lambda m, c, x: m.where(c, x, -x),
        [A(4, dtype="uint8", low=0, high=1), A(4, grad=False)],
    ),
    Case("where_one_arg", lambda m, c: m.where(c), [A(3, 4, dtype="bool")]),
    Case("isnan", lambda m, x: m.isnan(x), [A(3, 4)]),
    Case("isinf_int", lambda m, x: m.isinf(x), [A(3, **I64)]),
    Case("isfinite", lambda m, x: x.isfinite(), [A(3, 4)]),
    Case("isreal_float", lambda m, x: m.isreal(x), [A(3, 4)]),
    Case("isreal_complex", lambda m, x: m.isreal(x), [A(3, dtype="complex64", grad=False)]),
    Case("isposinf_int", lambda m, x: m.isposinf(x), [A(3, **I64)]),
    Case("isclose", lambda m, x, y: m.isclose(x, y, rtol=0.5, atol=0.1), [A(3, 4), A(3, 4)]),
    Case("isclose_int", lambda m, x, y: m.isclose(x, y, atol=1), [A(8, **I64), A(8, **I64)]),
    Case("logical_and", lambda m, x, y: m.logical_and(x, y), [A(3, 4, **I64), A(4)]),
    Case("logical_or", lambda m, x, y: m.logical_or(x, y), [A(3, 4, dtype="bool"), A(4, **I64)]),
    Case("logical_xor", lambda m, x, y: x.logical_xor(y), [A(3, 4, **I64), A(3, 4, **I64)]),
    Case("logical_not", lambda m, x: m.logical_not(x), [A(3, 4, **I64)]),
    Case("and", lambda m, x, y: x & y, [A(3, 4, dtype="bool"), A(4, dtype="bool")]),
    Case("or_int", lambda m, x, y: x | y, [A(3, 4, **I64), A(4, dtype="int32", low=0, high=9)]),
    Case("xor_int", lambda m, x: x ^ 6, [A(3, 4, **I64)]),
    Case("rand_scalar", lambda m, x: 3 & x, [A(3, 4, **I64)]),
    Case("ror_bool", lambda m, x: True | x, [A(3, 4, dtype="bool")]),
    Case("rxor", lambda m, x: 5 ^ x, [A(3, dtype="uint8", low=0, high=200)]),
    Case("bool_and_int", lambda m, x, y: x & y, [A(4, dtype="bool"), A(4, **I64)]),
    Case("invert_int", lambda m, x: ~x, [A(3, 4, **I64)]),
    Case("invert_bool", lambda m, x: ~x, [A(3, 4, dtype="bool")]),
    Case("bitwise_not_u8", lambda m, x: m.bitwise_not(x), [A(4, dtype="uint8", low=0, high=255)]),
    Case("lshift", lambda m, x: x << 3, [A(3, 4, **I64)]),
    Case("rshift", lambda m, x: x >> 1, [A(3, 4, **I64)]),
    Case(
        "lshift_tensor",
        lambda m, x, s: m.bitwise_left_shift(x, s),
        [A(3, 4, **I64), A(4, dtype="int64", low=0, high=5)],
    ),
    Case(
        "rshift_tensor",
        lambda m, x, s: m.bitwise_right_shift(x, s),
        [A(3, 4, **I64), A(4, dtype="int64", low=0, high=5)],
    ),
    Case("shift_overflow", lambda m, x: (x << 64) + (x >> 70), [A(6, **I64)]),
    Case(
        "shift_overflow_i8", lambda m, x: (x << 9) + (x >> 9), [A(6, dtype="int8", low=-9, high=9)]
    ),
    Case("shift_overflow_u8", lambda m, x: x >> 9, [A(6, dtype="uint8", low=0, high=200)]),
    Case(
        "shift_tensor_overflow",
        lambda m, x, s: x >> s,
        [A(6, **I64), A(6, dtype="int64", low=60, high=70)],
    ),
    Case("rlshift", lambda m, x: 1 << x, [A(5, dtype="int64", low=0, high=8)]),
    Case("bool_lshift", lambda m, x: x << 1, [A(5, dtype="bool")]),
]


@pytest.mark.parametrize("case", GRAD_CASES + VALUE_CASES, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def _both(fn, *arrays, grad=False):
    """Run fn on ember and torch tensors made from the same arrays."""
    out = []
    for m in (ember, torch):
        ts = [m.tensor(a) for a in arrays]
        if grad:
            for t in ts:
                t.requires_grad_(True)
        out.append((fn(m, *ts), ts))
    return out


NAN, INF = float("nan"), float("inf")
SPECIAL = np.array([0.0, -0.0, 1.5, NAN, INF, -INF, 2.0, -1.0], dtype=np.float32)
OTHER = np.array([0.0, 0.5, 1.5, 2.0, NAN, INF, NAN, -1.0], dtype=np.float32)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal"])
def test_classification_special_values(name):
    if torch is None:
        pytest.skip("torch missing")
    (e, _), (t, _) = _both(lambda m, x: getattr(m, name)(x), SPECIAL)
    assert_same(e, t)


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt", "ge"])
def test_nan_and_ties(name):
    # NaN propagation (maximum) vs NaN skipping (fmax); ties split the gradient like torch
    if torch is None:
        pytest.skip("torch missing")
    (e, (ex, ey)), (t, (tx, ty)) = _both(
        lambda m, x, y: getattr(m, name)(x, y),
        SPECIAL,
        OTHER,
        grad=name in ("maximum", "minimum", "fmax", "fmin"),
    )
    assert_same(e, t)
    if e.requires_grad:
        up = np.arange(1, 9, dtype=np.float32)
        e.backward(ember.tensor(up))
        t.backward(torch.tensor(up))
        assert_same(ex.grad, tx.grad, what="grad input")
        assert_same(ey.grad, ty.grad, what="grad other")


def test_clamp_nan_and_ties():
    if torch is None:
        pytest.skip("torch missing")
    x = np.array([NAN, -1.0, 1.0, 0.5, -3.0], dtype=np.float32)
    (e, (ex,)), (t, (tx,)) = _both(lambda m, x: m.clamp(x, -1.0, 1.0), x, grad=True)
    assert_same(e, t)
    e.sum().backward()
    t.sum().backward()
    assert_same(ex.grad, tx.grad)


def test_isclose_special():
    if torch is None:
        pytest.skip("torch missing")
    for equal_nan in (False, True):
        (e, _), (t, _) = _both(
            lambda m, x, y, en=equal_nan: m.isclose(x, y, equal_nan=en), SPECIAL, OTHER
        )
        assert_same(e, t)


def test_allclose_equal_return_bool():
    x = ember.tensor([1.0, 2.0, 3.0])
    r = ember.allclose(x, x + 1e-9)
    assert r is True and ember.allclose(x, x + 1) is False
    assert x.allclose(x) is True
    assert ember.equal(x, x.clone()) is True
    assert ember.equal(x, ember.tensor([1.0, 2.0])) is False
    assert ember.equal(x, ember.tensor([1.0, 2.0, 4.0])) is False
    assert ember.equal(ember.tensor([NAN]), ember.tensor([NAN])) is False
    assert x.equal(x) is True
    if torch is not None:
        assert ember.equal(x, x.double()) == torch.equal(torch.ones(3), torch.ones(3).double())


def test_eq_dunder_hash_and_fallbacks():
    x = ember.tensor([1.0, 2.0])
    assert hash(x) == id(x)  # __eq__ returns a tensor; the hash stays identity-based
    d = {x: 1}
    assert d[x] == 1 and len({x, ember.tensor([1.0, 2.0])}) == 2
    assert (x == None) is False and (x != None) is True
    assert (x == "a") is False
    assert x in [x]
    with pytest.raises(
        TypeError, match=re.escape("'<' not supported between instances of 'Tensor' and 'str'")
    ):
        x < "a"  # noqa: B015


def test_inplace_variants():
    if torch is None:
        pytest.skip("torch missing")
    a = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=np.float32)
    b = np.array([0.5, -2.0, 2.0], dtype=np.float32)
    ops = [
        lambda x, y: x.clamp_(-1, 1),
        lambda x, y: x.clamp_(min=0),
        lambda x, y: x.clip_(y),
        lambda x, y: x.clamp_(max=y),
        lambda x, y: x.clamp_(y, y + 1),
        lambda x, y: x.clamp_min_(0.5),
        lambda x, y: x.clamp_max_(y),
        lambda x, y: x.eq_(y),
        lambda x, y: x.lt_(1.0),
        lambda x, y: x.ge_(y),
        lambda x, y: x.greater_(y),
        lambda x, y: x.logical_and_(y),
        lambda x, y: x.logical_not_(),
    ]
    for k, fn in enumerate(ops):
        ex, tx = ember.tensor(a), torch.tensor(a)
        assert fn(ex, ember.tensor(b)) is ex
        fn(tx, torch.tensor(b))
        assert_same(ex, tx, what=f"in-place op {k}")
    ai = np.array([5, -6, 7], dtype=np.int64)
    for op in ("__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"):
        ex, tx = ember.tensor(ai), torch.tensor(ai)
        getattr(ex, op)(3)
        getattr(tx, op)(3)
        assert_same(ex, tx, what=op)
    eb, tb = ember.tensor([True, False]), torch.tensor([True, False])
    eb &= ember.tensor([True, True])
    tb &= torch.tensor([True, True])
    assert_same(eb, tb)


def test_clamp_inplace_autograd():
    if torch is None:
        pytest.skip("torch missing")
    a = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    res = []
    for m in (ember, torch):
        w = m.tensor(a, requires_grad=True)
        y = w * 3
        y.clamp_(-1, 1)
        (y * y).sum().backward()
        res.append(w.grad)
    assert_same(res[0], res[1])


# ---------------------------------------------------------------------- promotion table
DTYPES = REAL_DTYPES


def _mk(m, d, zero_dim):
    return m.ones(() if zero_dim else (2,), dtype=getattr(m, d))


def _name(d):
    return str(d).split(".")[-1]


def _outcome(fn):
    try:
        return _name(fn().dtype)
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        return type(e).__name__


OPS = {
    "eq": lambda m, x, y: m.eq(x, y),
    "lt": lambda m, x, y: x < y,
    "maximum": lambda m, x, y: m.maximum(x, y),
    "fmin": lambda m, x, y: m.fmin(x, y),
    "clamp": lambda m, x, y: m.clamp(x, y, y),
    "where": lambda m, x, y: m.where(m.ones(2, dtype=m.bool), x, y),
    "bitwise_and": lambda m, x, y: x & y,
    "bitwise_or": lambda m, x, y: m.bitwise_or(x, y),
    "lshift": lambda m, x, y: x << y,
    "logical_xor": lambda m, x, y: m.logical_xor(x, y),
}


@pytest.mark.parametrize("op", list(OPS))
def test_promotion_table(op):
    if torch is None:
        pytest.skip("torch missing")
    fn = OPS[op]
    bad = []
    for a, b in itertools.product(DTYPES, DTYPES):
        for za, zb in ((False, False), (False, True), (True, False)):
            want = _outcome(
                lambda m=torch, k=(a, b, za, zb): fn(m, _mk(m, k[0], k[2]), _mk(m, k[1], k[3]))
            )
            got = _outcome(
                lambda m=ember, k=(a, b, za, zb): fn(m, _mk(m, k[0], k[2]), _mk(m, k[1], k[3]))
            )
            if got != want:
                bad.append((a, b, za, zb, got, want))
    assert not bad, bad[:10]


SCALAR_OPS = {
    "gt": lambda m, x, s: x > s,
    "clamp": lambda m, x, s: m.clamp(x, s),
    "where_x": lambda m, x, s: m.where(m.ones(2, dtype=m.bool), x, s),
    "where_s": lambda m, x, s: m.where(m.ones(2, dtype=m.bool), s, x),
    "and": lambda m, x, s: x & s,
    "rshift": lambda m, x, s: x >> s,
}


@pytest.mark.parametrize("op", list(SCALAR_OPS))
def test_promotion_scalars(op):
    if torch is None:
        pytest.skip("torch missing")
    fn = SCALAR_OPS[op]
    bad = []
    for d in DTYPES:
        for s in (True, 3, -2.5):
            want = _outcome(lambda m=torch, d=d, s=s: fn(m, _mk(m, d, False), s))
            got = _outcome(lambda m=ember, d=d, s=s: fn(m, _mk(m, d, False), s))
            if got != want:
                bad.append((d, s, got, want))
    assert not bad, bad


def test_where_scalars_both():
    c = ember.tensor([True, False])
    assert ember.where(c, 1.0, 0.0).dtype is ember.float32
    assert ember.where(c, 1, 0).dtype is ember.int64
    assert ember.where(c, True, False).dtype is ember.bool


# ---------------------------------------------------------------------- errors
F = lambda m: m.ones(3)
INT = lambda m: m.ones(3, dtype=m.int64)
CPLX = lambda m: m.ones(3, dtype=m.complex64)

ERRORS = [
    (
        "clamp_none",
        lambda m: m.clamp(F(m)),
        RuntimeError,
        "torch.clamp: At least one of 'min' or 'max' must not be None",
    ),
    (
        "clamp_inplace_none",
        lambda m: F(m).clamp_(),
        RuntimeError,
        "torch.clamp: At least one of 'min' or 'max' must not be None",
    ),
    (
        "clamp_complex",
        lambda m: m.clamp(CPLX(m), 0, 1),
        NotImplementedError,
        "clamp is not supported for complex types",
    ),
    (
        "clamp_int_inplace_float",
        lambda m: INT(m).clamp_min_(0.5),
        RuntimeError,
        "result type Float can't be cast to the desired output type",
    ),
    (
        "where_float_cond",
        lambda m: m.where(F(m), F(m), F(m)),
        RuntimeError,
        "where expected condition to be a boolean tensor, but got a tensor with dtype Float",
    ),
    (
        "maximum_complex",
        lambda m: m.maximum(CPLX(m), CPLX(m)),
        RuntimeError,
        "maximum not implemented for complex tensors.",
    ),
    (
        "fmax_complex",
        lambda m: m.fmax(CPLX(m), CPLX(m)),
        RuntimeError,
        "fmax not implemented for complex tensors.",
    ),
    (
        "maximum_scalar",
        lambda m: m.maximum(F(m), 2),
        TypeError,
        "maximum(): argument 'other' (position 2) must be Tensor, not int",
    ),
    (
        "lt_complex",
        lambda m: CPLX(m) < 0,
        NotImplementedError,
        "\"lt_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        "ge_complex",
        lambda m: m.ge(CPLX(m), CPLX(m)),
        NotImplementedError,
        "\"ge_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        "isposinf_complex",
        lambda m: m.isposinf(CPLX(m)),
        RuntimeError,
        "isposinf does not support complex inputs.",
    ),
    (
        "isneginf_complex",
        lambda m: m.isneginf(CPLX(m)),
        RuntimeError,
        "isneginf does not support complex inputs.",
    ),
    (
        "isclose_dtype",
        lambda m: m.isclose(F(m), F(m).double()),
        RuntimeError,
        "Float did not match Double",
    ),
    (
        "allclose_dtype",
        lambda m: m.allclose(F(m), INT(m)),
        RuntimeError,
        "Float did not match Long",
    ),
    (
        "isclose_rtol",
        lambda m: m.isclose(F(m), F(m), rtol=-1),
        RuntimeError,
        "rtol must be greater than or equal to zero, but got -1",
    ),
    (
        "isclose_atol",
        lambda m: m.isclose(F(m), F(m), atol=-0.5),
        RuntimeError,
        "atol must be greater than or equal to zero, but got -0.5",
    ),
    (
        "and_float",
        lambda m: F(m) & F(m),
        NotImplementedError,
        "\"bitwise_and_cpu\" not implemented for 'Float'",
    ),
    (
        "and_int_float_scalar",
        lambda m: INT(m) & 1.5,
        NotImplementedError,
        "\"bitwise_and_cpu\" not implemented for 'Float'",
    ),
    (
        "or_float",
        lambda m: m.bitwise_or(F(m), 1),
        NotImplementedError,
        "\"bitwise_or_cpu\" not implemented for 'Float'",
    ),
    (
        "xor_double",
        lambda m: F(m).double() ^ INT(m),
        NotImplementedError,
        "\"bitwise_xor_cpu\" not implemented for 'Double'",
    ),
    (
        "not_float",
        lambda m: m.bitwise_not(F(m)),
        NotImplementedError,
        "\"bitwise_not_cpu\" not implemented for 'Float'",
    ),
    (
        "invert_float",
        lambda m: ~F(m),
        TypeError,
        "~ (operator.invert) is only implemented on integer and Boolean-type tensors",
    ),
    (
        "lshift_float",
        lambda m: F(m) << 1,
        NotImplementedError,
        "\"lshift_cpu\" not implemented for 'Float'",
    ),
    (
        "rshift_int_float",
        lambda m: INT(m) >> 1.5,
        NotImplementedError,
        "\"rshift_cpu\" not implemented for 'Float'",
    ),
    (
        "eq_broadcast",
        lambda m: m.eq(F(m), m.ones(4)),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0",
    ),
]


@pytest.mark.parametrize("name,fn,exc,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, fn, exc, msg):
    raises_like_torch(fn, exc, msg)


def test_equal_type_error():
    with pytest.raises(
        TypeError, match=re.escape("equal(): argument 'other' (position 2) must be Tensor, not int")
    ):
        ember.equal(ember.ones(2), 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "bool"])
def test_where_large_random_mask_like_numpy_and_torch(dtype):
    # large arrays take the branch-free select kernel (core/kernels/select.py): every value,
    # NaN payloads and signed zeros included, is copied bit for bit
    from ember.core.kernels.select import select

    rng = np.random.default_rng(7)
    shape = (130, 257)  # > 16384 elements: the fast path
    a = (rng.standard_normal(shape) * 9).astype(dtype)
    b = (rng.standard_normal(shape) * 9).astype(dtype)
    if dtype.startswith("float"):
        a.flat[::7] = np.nan
        b.flat[::5] = -0.0
        a.flat[::11] = np.inf
    m = rng.random(shape) > 0.5
    want = np.where(m, a, b)
    got = select(np, m, a, b)
    assert got.dtype == want.dtype
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    scalar = np.asarray(True if dtype == "bool" else 3).astype(dtype)[()]
    assert np.array_equal(select(np, m, a, scalar), np.where(m, a, scalar), equal_nan=True)
    row = b[0]  # broadcast operand: numpy's where (same result)
    assert np.array_equal(select(np, m, a, row), np.where(m, a, row), equal_nan=True)
    if torch is not None:
        e = ember.where(ember.tensor(m), ember.tensor(a), ember.tensor(b)).numpy()
        t = torch.where(torch.tensor(m), torch.tensor(a), torch.tensor(b)).numpy()
        assert np.array_equal(e, t, equal_nan=True)


@pytest.mark.skipif(torch is None, reason="torch is not installed (the parity oracle)")
def test_where_large_grads_like_torch():
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((2, 200, 100))
    m = rng.random((200, 100)) > 0.5
    g = rng.standard_normal((200, 100))
    res = []
    for mod in (ember, torch):
        x, y = mod.tensor(a, requires_grad=True), mod.tensor(b, requires_grad=True)
        mod.where(mod.tensor(m), x, y).backward(mod.tensor(g))
        res.append((x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
