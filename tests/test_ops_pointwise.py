"""Unary pointwise math ops (core/ops/pointwise.py): parity with torch, gradchecks, in-place variants,
dtype rules and errors."""

import re

import ember
import numpy as np
import pytest
from harness import A, Case, assert_same, needs_torch, raises_like_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def _u(name, fn, low=-2.0, high=2.0, shape=(3, 4), dtype="float32", **kw):
    return Case(name, fn, [A(*shape, dtype=dtype, low=low, high=high)], **kw)


def _op(name, **kw):
    """m.<name>(x, **kw) as a table function."""
    return lambda m, x: getattr(m, name)(x, **kw)


def _meth(name, *args, **kw):
    return lambda m, x: getattr(x, name)(*args, **kw)


# (name, low, high, gradgrad): differentiable ops, float32 parity + float64 gradcheck.
# Ranges stay inside each op's domain and away from kinks.
DIFF = [
    ("abs", 0.2, 2.0, True),
    ("absolute", -2.0, -0.2, True),
    ("acos", -0.9, 0.9, True),
    ("arccos", -0.9, 0.9, True),
    ("acosh", 1.2, 3.0, True),
    ("arccosh", 1.2, 3.0, True),
    ("asin", -0.9, 0.9, True),
    ("arcsin", -0.9, 0.9, True),
    ("asinh", -2.0, 2.0, True),
    ("arcsinh", -2.0, 2.0, True),
    ("atan", -2.0, 2.0, True),
    ("arctan", -2.0, 2.0, True),
    ("atanh", -0.9, 0.9, True),
    ("arctanh", -0.9, 0.9, True),
    ("ceil", -3.0, 3.0, True),
    ("floor", -3.0, 3.0, True),
    ("round", -3.0, 3.0, True),
    ("trunc", -3.0, 3.0, True),
    ("fix", -3.0, 3.0, True),
    ("frac", -3.0, 3.0, True),
    ("cos", -3.0, 3.0, True),
    ("cosh", -2.0, 2.0, True),
    ("sin", -3.0, 3.0, True),
    ("sinh", -2.0, 2.0, True),
    ("tan", -1.2, 1.2, True),
    ("tanh", -2.0, 2.0, True),
    ("deg2rad", -360.0, 360.0, True),
    ("rad2deg", -3.0, 3.0, True),
    ("exp", -2.0, 2.0, True),
    ("exp2", -2.0, 2.0, True),
    ("expm1", -2.0, 2.0, True),
    ("log", 0.1, 3.0, True),
    ("log10", 0.1, 3.0, True),
    ("log1p", -0.9, 3.0, True),
    ("log2", 0.1, 3.0, True),
    ("logit", 0.05, 0.95, True),
    ("sigmoid", -5.0, 5.0, True),
    ("reciprocal", 0.3, 2.0, True),
    ("rsqrt", 0.2, 3.0, True),
    ("sqrt", 0.1, 3.0, True),
    ("square", -2.0, 2.0, True),
    ("sign", -2.0, 2.0, True),
    ("sgn", -2.0, 2.0, True),
    ("sinc", -2.0, 2.0, True),
    ("i0", -3.0, 3.0, True),
    ("erf", -2.0, 2.0, True),
    ("erfc", -2.0, 2.0, True),
    ("erfinv", -0.9, 0.9, True),
    ("lgamma", 0.1, 5.0, True),
    ("digamma", 0.3, 5.0, True),
    ("relu", -2.0, 2.0, True),
    ("nan_to_num", -2.0, 2.0, True),
    ("angle", -2.0, 2.0, True),
    ("real", -2.0, 2.0, True),
    ("conj", -2.0, 2.0, True),
    ("positive", -2.0, 2.0, True),
    ("conj_physical", -2.0, 2.0, True),
]

EXTRA = [
    _u("lgamma_negative", _op("lgamma"), -3.9, -3.1),
    _u("digamma_negative", _op("digamma"), -2.9, -2.1, atol=1e-4),
    _u("polygamma_0", lambda m, x: m.polygamma(0, x), 0.5, 3.0),
    _u("polygamma_1", lambda m, x: m.polygamma(1, x), 0.5, 3.0),
    _u("polygamma_3", lambda m, x: m.polygamma(3, x), 0.5, 3.0, rtol=1e-3),
    _u("polygamma_method", _meth("polygamma", 2), 0.5, 3.0),
    _u("mvlgamma_1", lambda m, x: m.mvlgamma(x, 1), 2.0, 5.0),
    _u("mvlgamma_3", lambda m, x: m.mvlgamma(x, p=3), 2.0, 5.0),
    _u("mvlgamma_method", _meth("mvlgamma", 4), 2.0, 5.0),
    _u("round_decimals2", _op("round", decimals=2), -30.0, 30.0),
    _u("round_decimals_neg", _meth("round", decimals=-1), -300.0, 300.0),
    _u("logit_eps", lambda m, x: m.logit(x, 0.2), 0.0, 1.0),
    _u("logit_eps_kw", lambda m, x: m.logit(x, eps=0.1), -0.5, 1.5),
    _u("logit_outside", _op("logit"), -0.5, 1.5),
    _u("nan_to_num_log", lambda m, x: m.nan_to_num(m.log(x)), -1.0, 2.0),
    _u(
        "nan_to_num_values",
        lambda m, x: m.nan_to_num(m.log(x) * 1e38, nan=1.5, posinf=2.0, neginf=-3.0),
        -1.0,
        3.0,
    ),
    _u("sinc_method", _meth("sinc"), -2.0, 2.0),
    _u("signbit", _op("signbit"), -2.0, 2.0),
    _u("exp_method", _meth("exp"), -2.0, 2.0),
    _u("arccos_method", _meth("arccos"), -0.9, 0.9),
    _u("fix_method", _meth("fix"), -3.0, 3.0),
    _u("dunder_abs", lambda m, x: abs(x), -2.0, 2.0),
    _u("sqrt_negative_nan", _op("sqrt"), -2.0, 2.0),
    _u("relu_method", _meth("relu"), -2.0, 2.0),
    _u("scalar_0d", _op("exp"), shape=()),
    _u("empty", _op("sin"), shape=(0, 3)),
    # float64 rows: the result stays float64
    _u("exp_f64", _op("exp"), dtype="float64"),
    _u("lgamma_f64", _op("lgamma"), 0.1, 5.0, dtype="float64"),
    _u("erfinv_f64", _op("erfinv"), -0.99, 0.99, dtype="float64"),
    _u("sigmoid_f64", _op("sigmoid"), -30.0, 30.0, dtype="float64"),
    _u("round_f64_decimals", _op("round", decimals=3), -3.0, 3.0, dtype="float64"),
    _u("polygamma_f64", lambda m, x: m.polygamma(2, x), 0.5, 3.0, dtype="float64"),
    _u("i0_f64", _op("i0"), -3.0, 3.0, dtype="float64"),
    # float16 rows: scipy functions compute in float32 and round back
    _u("erf_f16", _op("erf"), dtype="float16", atol=1e-3, rtol=1e-2),
    _u("sigmoid_f16", _op("sigmoid"), dtype="float16", atol=1e-3, rtol=1e-2),
    _u("exp_f16", _op("exp"), dtype="float16", atol=1e-3, rtol=1e-2),
    _u("lgamma_f16", _op("lgamma"), 0.5, 3.0, dtype="float16", atol=1e-3, rtol=1e-2),
]

# transcendental functions: integer (and bool) inputs give the default float dtype
FLOATING = [
    ("acos", -1, 1),
    ("acosh", 1, 4),
    ("asin", -1, 1),
    ("asinh", -3, 3),
    ("atan", -3, 3),
    ("atanh", 0, 0),
    ("cos", -3, 3),
    ("cosh", -3, 3),
    ("sin", -3, 3),
    ("sinh", -3, 3),
    ("tan", -3, 3),
    ("tanh", -3, 3),
    ("deg2rad", -3, 3),
    ("rad2deg", -3, 3),
    ("exp", -3, 3),
    ("exp2", -3, 3),
    ("expm1", -3, 3),
    ("log", 1, 9),
    ("log10", 1, 9),
    ("log1p", 0, 9),
    ("log2", 1, 9),
    ("logit", 0, 0),
    ("sigmoid", -3, 3),
    ("reciprocal", 1, 9),
    ("rsqrt", 1, 9),
    ("sqrt", 0, 9),
    ("sinc", -3, 3),
    ("i0", -3, 3),
    ("erf", -3, 3),
    ("erfc", -3, 3),
    ("erfinv", 0, 0),
    ("lgamma", 1, 9),
    ("digamma", 1, 9),
    ("angle", -3, 3),
    ("arccos", -1, 1),
    ("arctanh", 0, 0),
]
# these keep integer dtypes
KEEPS_INT = [
    "abs",
    "absolute",
    "ceil",
    "floor",
    "round",
    "trunc",
    "fix",
    "square",
    "sign",
    "sgn",
    "signbit",
    "positive",
    "relu",
    "nan_to_num",
    "conj",
    "real",
    "conj_physical",
]

INT_CASES = (
    [_u(f"{n}_int64", _op(n), lo, hi, dtype="int64") for n, lo, hi in FLOATING]
    + [_u(f"{n}_int32", _op(n), -3, 3, dtype="int32") for n in ("exp", "sin", "atan", "erf")]
    + [_u(f"{n}_uint8", _op(n), 0, 9, dtype="uint8") for n in ("sqrt", "log1p", "sigmoid")]
    + [_u(f"{n}_bool", _op(n), dtype="bool") for n in ("exp", "sigmoid", "cos", "erf")]
    + [_u(f"{n}_int64", _op(n), -5, 5, dtype="int64") for n in KEEPS_INT]
    + [
        _u(f"{n}_uint8", _op(n), 0, 200, dtype="uint8")
        for n in ("abs", "sign", "square", "floor", "relu")
    ]
    + [_u(f"{n}_int8", _op(n), -128, 127, dtype="int8") for n in ("abs", "square", "sign")]
    + [
        _u(f"{n}_bool", _op(n), dtype="bool")
        for n in ("sign", "sgn", "square", "signbit", "nan_to_num", "conj")
    ]
    + [
        _u("polygamma_int", lambda m, x: m.polygamma(1, x), 1, 9, dtype="int64"),
        _u("mvlgamma_int", lambda m, x: m.mvlgamma(x, 2), 2, 9, dtype="int64"),
    ]
)

COMPLEX_CASES = [
    _u(f"{n}_complex", _op(n), lo, hi, dtype="complex64", atol=1e-4)
    for n, lo, hi in [
        ("exp", -1, 1),
        ("sin", -1, 1),
        ("cos", -1, 1),
        ("tan", -1, 1),
        ("tanh", -1, 1),
        ("sinh", -1, 1),
        ("cosh", -1, 1),
        ("asin", -0.8, 0.8),
        ("acos", -0.8, 0.8),
        ("atan", -0.8, 0.8),
        ("asinh", -1, 1),
        ("acosh", 1.2, 2),
        ("atanh", -0.8, 0.8),
        ("sqrt", 0.2, 2),
        ("rsqrt", 0.2, 2),
        ("log", 0.2, 2),
        ("log2", 0.2, 2),
        ("log10", 0.2, 2),
        ("log1p", 0.2, 2),
        ("exp2", -1, 1),
        ("expm1", -1, 1),
        ("reciprocal", 0.3, 2),
        ("sigmoid", -1, 1),
        ("square", -1, 1),
        ("sinc", 0.2, 1),
        ("abs", -1, 1),
        ("sgn", -1, 1),
        ("angle", -1, 1),
        ("real", -1, 1),
        ("imag", -1, 1),
        ("conj_physical", -1, 1),
        ("positive", -1, 1),
    ]
] + [
    _u("real_attr_complex", lambda m, x: x.real * 2, -1, 1, dtype="complex64"),
    _u("imag_attr_complex", lambda m, x: x.imag * 2, -1, 1, dtype="complex64"),
    # torch refuses to differentiate nan_to_num of complex tensors; ember's gradient is the mask
    Case("nan_to_num_complex", _op("nan_to_num"), [A(3, 4, dtype="complex64", grad=False)]),
]

# torch hands back a ZeroTensor gradient for sgn/angle of real inputs, which the harness cannot
# read: "+ x * 0" makes it an ordinary tensor without changing the values
_ZERO_TENSOR_GRAD = ("sgn", "angle")
PARITY = (
    [
        _u(
            n,
            (lambda m, x, n=n: getattr(m, n)(x) + x * 0) if n in _ZERO_TENSOR_GRAD else _op(n),
            lo,
            hi,
        )
        for n, lo, hi, _ in DIFF
    ]
    + EXTRA
    + INT_CASES
    + COMPLEX_CASES
)

# float64 gradcheck (+ gradgradcheck) of every differentiable op, on small inputs
GRAD = (
    [
        Case(n, _op(n), [A(2, 3, low=lo, high=hi)])
        for n, lo, hi, _ in DIFF
        if n not in ("real", "conj", "positive")
    ]
    + [
        Case(c.name, c.fn, [A(2, 3, low=c.inputs[0].low, high=c.inputs[0].high)])
        for c in EXTRA
        if c.inputs[0].dtype == "float32"
        and c.name
        not in (
            "signbit",
            "sqrt_negative_nan",
            "logit_outside",
            "scalar_0d",
            "empty",
            "nan_to_num_values",
            "logit_eps",
            "logit_eps_kw",
        )
    ]
    + [
        Case("logit_eps_inside", lambda m, x: m.logit(x, 0.2), [A(2, 3, low=0.25, high=0.75)]),
        Case("logit_eps_outside", lambda m, x: m.logit(x, eps=0.3), [A(2, 3, low=0.8, high=1)]),
        Case("polygamma_5", lambda m, x: m.polygamma(5, x), [A(2, 3, low=1.0, high=3.0)]),
        Case("i0_small", _op("i0"), [A(2, 3, low=-0.1, high=0.1)]),
        Case("sinc_near_0", _op("sinc"), [A(2, 3, low=-0.05, high=0.05)]),
        Case("chain", lambda m, x: m.sigmoid(m.exp(x).log1p()).sqrt() * m.erf(x).tanh(), [A(2, 3)]),
    ]
)


@pytest.mark.parametrize("case", PARITY, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", GRAD, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


# ------------------------------------------------------------------------------- conventions
@needs_torch
@pytest.mark.parametrize(
    "name",
    [
        "abs",
        "sign",
        "sgn",
        "relu",
        "round",
        "floor",
        "ceil",
        "trunc",
        "frac",
        "sinc",
        "i0",
        "sqrt",
        "angle",
        "nan_to_num",
        "signbit",
        "sigmoid",
        "rsqrt",
        "logit",
        "erfinv",
        "digamma",
        "lgamma",
    ],
)
def test_special_values(name):
    # kinks, poles and non-finite inputs follow torch's conventions (values and gradients)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, float("nan"), float("inf"), -float("inf")]
    if name in ("lgamma", "digamma"):
        vals = [v for v in vals if v not in (-1.0, -float("inf"))]  # poles: scipy differs there
    if name == "logit":
        vals = vals[:1] + vals[2:]  # torch's d/dx logit at -0.0 is +inf
    e = ember.tensor(vals, requires_grad=True)
    t = torch.tensor(vals, requires_grad=True)
    f = (lambda m, x: m.sgn(x) + x * 0) if name == "sgn" else (lambda m, x: getattr(m, name)(x))
    eo, to = f(ember, e), f(torch, t)
    assert_same(eo, to, what=name)
    if to.requires_grad:
        eo.sum().backward()
        to.sum().backward()
        assert_same(e.grad, t.grad, what=f"{name} grad")


@needs_torch
def test_logit_eps_gradient_bounds():
    vals = [0.05, 0.1, 0.5, 0.9, 0.95, -0.5, 1.5, 0.0, 1.0]
    for eps in (None, 0.1, 0.6):
        e = ember.tensor(vals, requires_grad=True)
        t = torch.tensor(vals, requires_grad=True)
        eo, to = ember.logit(e, eps), torch.logit(t, eps)
        assert_same(eo, to, what=f"logit eps={eps}")
        eo.sum().backward()
        to.sum().backward()
        assert_same(e.grad, t.grad, what=f"logit grad eps={eps}")


@needs_torch
def test_nan_to_num_half_defaults():
    vals = [float("nan"), float("inf"), -float("inf"), 1.0]
    for dt in ("float16", "float64", "bfloat16"):
        for kw in ({}, {"nan": 1.0, "posinf": 2.0}, {"neginf": -3.0}):
            e = ember.nan_to_num(ember.tensor(vals).to(getattr(ember, dt)), **kw)
            t = torch.nan_to_num(torch.tensor(vals).to(getattr(torch, dt)), **kw)
            assert str(e.dtype)[6:] == str(t.dtype)[6:]
            np.testing.assert_array_equal(e.float()._data, t.float().numpy())
    # complex: real and imaginary parts are cleaned separately
    c = np.array(
        [complex(np.nan, 1), complex(np.inf, -np.inf), complex(-np.inf, np.nan), 1 + 2j],
        np.complex64,
    )
    for args in ((), (1.0, 2.0, -3.0)):
        assert_same(
            ember.nan_to_num(ember.tensor(c), *args), torch.nan_to_num(torch.tensor(c), *args)
        )


HALF_OPS = [
    "sigmoid",
    "erf",
    "erfc",
    "erfinv",
    "exp",
    "exp2",
    "expm1",
    "log1p",
    "i0",
    "lgamma",
    "digamma",
    "sqrt",
    "rsqrt",
    "round",
    "sign",
    "relu",
    "logit",
    "sinc",
    "tanh",
    "deg2rad",
    "rad2deg",
    "frac",
    "abs",
    "square",
    "reciprocal",
    "sin",
    "atan",
    "angle",
    "signbit",
    "nan_to_num",
]


@needs_torch
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_types(dt):
    # half types compute in float32 and round once, like torch (sinc at integers, sigmoid tails)
    a = np.concatenate(
        [np.linspace(-20, 20, 9), np.linspace(0.01, 0.99, 7), np.linspace(-3.7, 3.9, 11)]
    ).astype(np.float32)
    e = ember.tensor(a).to(getattr(ember, dt))
    t = torch.tensor(a).to(getattr(torch, dt))
    runs = [(n, getattr(ember, n)(e), getattr(torch, n)(t)) for n in HALF_OPS]
    runs += [
        ("round2", ember.round(e, decimals=2), torch.round(t, decimals=2)),
        ("mvlgamma", ember.mvlgamma(e.abs() + 2, 3), torch.mvlgamma(t.abs() + 2, 3)),
        ("polygamma", ember.polygamma(1, e.abs() + 1), torch.polygamma(1, t.abs() + 1)),
    ]
    for n, ev, tv in runs:
        assert str(ev.dtype)[6:] == str(tv.dtype)[6:], n
        np.testing.assert_allclose(
            ev._data.astype(np.float32),
            tv.float().numpy(),
            rtol=1e-2,
            atol=1e-3,
            equal_nan=True,
            err_msg=f"{n} {dt}",
        )


def test_default_dtype_float64():
    ember.set_default_dtype(ember.float64)
    assert ember.exp(ember.tensor([1, 2])).dtype == ember.float64
    assert ember.sqrt(ember.tensor([True])).dtype == ember.float64
    assert ember.polygamma(1, ember.tensor([1])).dtype == ember.float64
    assert ember.mvlgamma(ember.tensor([3]), 2).dtype == ember.float64


def test_names_kept():
    x = ember.tensor([[0.5, 1.5], [2.0, 3.0]], names=("N", "C"), requires_grad=True)
    for fn in (
        ember.exp,
        ember.abs,
        ember.sigmoid,
        ember.lgamma,
        ember.sign,
        ember.relu,
        ember.round,
        lambda t: ember.polygamma(1, t),
        lambda t: ember.mvlgamma(t, 2),
    ):
        assert fn(x)._names == ("N", "C")
    ember.lgamma(x).sum().backward()
    assert x.grad._names == ("N", "C")


def test_double_backward_values():
    # d2/dx2 exp(x) = exp(x); d2/dx2 sin = -sin; second derivative of sqrt via its result
    x = ember.tensor([0.3, 1.2], dtype=ember.float64, requires_grad=True)
    for f, f2 in (
        (ember.exp, np.exp),
        (ember.sin, lambda v: -np.sin(v)),
        (ember.sqrt, lambda v: -0.25 * v**-1.5),
        (ember.erfinv, None),
        (ember.sigmoid, None),
    ):
        (g,) = ember.autograd.grad(f(x).sum(), x, create_graph=True)
        (h,) = ember.autograd.grad(g.sum(), x)
        if f2 is not None:
            np.testing.assert_allclose(h._data, f2(x._data), rtol=1e-10)


def test_out_argument():
    x = ember.tensor([0.5, 1.0])
    o = ember.empty(2)
    r = ember.exp(x, out=o)
    assert r is o
    np.testing.assert_allclose(o._data, np.exp(x._data))
    o2 = ember.empty(2)
    assert ember.polygamma(1, x, out=o2) is o2
    with pytest.raises(
        RuntimeError, match="result type Float can't be cast to the desired output type Long"
    ):
        ember.exp(x, out=ember.empty(2, dtype=ember.int64))


def test_identity_functions_return_input():
    f = ember.tensor([1.0, -2.0])
    i = ember.tensor([1, 2])
    assert ember.positive(f) is f and f.positive() is f
    assert ember.real(f) is f and f.real is f
    assert ember.conj(f) is f and ember.conj(i) is i and f.conj() is f
    assert ember.resolve_conj(f) is f and not f.is_conj()
    assert +f is f


@needs_torch
def test_conj_complex():
    a = A(3, 4, dtype="complex64", low=-1, high=1).make(0)
    e, t = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    eo, to = ember.conj(e), torch.conj(t)
    assert_same(eo, to.resolve_conj())
    eo.sin().abs().sum().backward()
    to.sin().abs().sum().backward()
    assert_same(e.grad, t.grad.resolve_conj())
    assert_same(e.conj(), t.conj().resolve_conj())


def test_real_imag_are_views():
    z = ember.tensor([1 + 2j, 3 - 4j])
    r, im = z.real, ember.imag(z)
    z.mul_(2)
    assert r.tolist() == [2.0, 6.0] and im.tolist() == [4.0, -8.0]
    assert r._ver is z._ver


def test_torch_namespace_and_aliases():
    for alias, name in [
        ("absolute", "abs"),
        ("arccos", "acos"),
        ("arccosh", "acosh"),
        ("arcsin", "asin"),
        ("arcsinh", "asinh"),
        ("arctan", "atan"),
        ("arctanh", "atanh"),
        ("fix", "trunc"),
    ]:
        assert getattr(ember, alias) is getattr(ember, name)
        assert getattr(ember.Tensor, alias) is getattr(ember.Tensor, name)
        assert getattr(ember.Tensor, alias + "_") is getattr(ember.Tensor, name + "_")
    if torch is not None:
        # every torch.<op>_ / Tensor.<op>_ spelling of these ops exists in ember too
        names = [n for n, *_ in DIFF] + ["polygamma", "mvlgamma", "signbit", "imag"]
        for n in names:
            assert hasattr(ember, n), n
            for suffix in ("", "_"):
                if hasattr(torch, n + suffix):
                    assert hasattr(ember, n + suffix), n + suffix
                if hasattr(torch.Tensor, n + suffix):
                    assert hasattr(ember.Tensor, n + suffix), "Tensor." + n + suffix


# ---------------------------------------------------------------------------------- in-place
INPLACE = [
    ("abs_", -2, 2, ()),
    ("absolute_", -2, 2, ()),
    ("acos_", -0.9, 0.9, ()),
    ("arccos_", -0.9, 0.9, ()),
    ("acosh_", 1.2, 3, ()),
    ("asin_", -0.9, 0.9, ()),
    ("asinh_", -2, 2, ()),
    ("atan_", -2, 2, ()),
    ("atanh_", -0.9, 0.9, ()),
    ("ceil_", -3, 3, ()),
    ("floor_", -3, 3, ()),
    ("round_", -3, 3, ()),
    ("trunc_", -3, 3, ()),
    ("fix_", -3, 3, ()),
    ("frac_", -3, 3, ()),
    ("cos_", -3, 3, ()),
    ("cosh_", -2, 2, ()),
    ("sin_", -3, 3, ()),
    ("sinh_", -2, 2, ()),
    ("tan_", -1, 1, ()),
    ("tanh_", -2, 2, ()),
    ("deg2rad_", -9, 9, ()),
    ("rad2deg_", -3, 3, ()),
    ("exp_", -2, 2, ()),
    ("exp2_", -2, 2, ()),
    ("expm1_", -2, 2, ()),
    ("log_", 0.1, 3, ()),
    ("log10_", 0.1, 3, ()),
    ("log1p_", 0.1, 3, ()),
    ("log2_", 0.1, 3, ()),
    ("logit_", 0.1, 0.9, ()),
    ("sigmoid_", -3, 3, ()),
    ("reciprocal_", 0.3, 2, ()),
    ("rsqrt_", 0.2, 3, ()),
    ("sqrt_", 0.1, 3, ()),
    ("square_", -2, 2, ()),
    ("sign_", -2, 2, ()),
    ("sgn_", -2, 2, ()),
    ("sinc_", -2, 2, ()),
    ("i0_", -2, 2, ()),
    ("erf_", -2, 2, ()),
    ("erfc_", -2, 2, ()),
    ("erfinv_", -0.9, 0.9, ()),
    ("lgamma_", 0.1, 3, ()),
    ("digamma_", 0.3, 3, ()),
    ("relu_", -2, 2, ()),
    ("nan_to_num_", -2, 2, ()),
    ("conj_physical_", -2, 2, ()),
    ("polygamma_", 0.5, 3, (1,)),
    ("mvlgamma_", 2, 4, (2,)),
]


@needs_torch
@pytest.mark.parametrize("name,low,high,args", INPLACE, ids=[r[0] for r in INPLACE])
def test_inplace(name, low, high, args):
    a = A(3, 4, low=low, high=high).make(0)
    e, t = ember.tensor(a), torch.tensor(a)
    v = e._version if hasattr(e, "_version") else e._ver[0]
    r = getattr(e, name)(*args)
    getattr(t, name)(*args)
    assert r is e
    assert e._ver[0] == v + 1
    assert_same(e, t, what=name)
    # the functional spelling torch.<op>_ where torch has one
    if hasattr(torch, name):
        e2 = ember.tensor(a)
        assert getattr(ember, name)(e2, *args) is e2
        assert_same(e2, t, what="ember." + name)


@needs_torch
@pytest.mark.parametrize(
    "name",
    [
        "exp_",
        "sqrt_",
        "sigmoid_",
        "tanh_",
        "abs_",
        "sin_",
        "lgamma_",
        "erfinv_",
        "reciprocal_",
        "relu_",
        "floor_",
    ],
)
def test_inplace_autograd(name):
    a = A(3, 4, low=0.1, high=0.9).make(1)
    e, t = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ey = getattr(e * 1.5, name)()
    ty = getattr(t * 1.5, name)()
    assert_same(ey, ty, what=name)
    (ey * ey).sum().backward()
    (ty * ty).sum().backward()
    assert_same(e.grad, t.grad, what=name + " grad")


def test_inplace_int_keeps_int():
    x = ember.tensor([-2, 3])
    assert x.abs_() is x and x.tolist() == [2, 3]
    assert x.square_().tolist() == [4, 9] and x.dtype == ember.int64
    assert ember.tensor([1.5, -2.5]).round_(decimals=0).tolist() == [2.0, -2.0]


def test_inplace_leaf_requires_grad():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation.",
    ):
        x.exp_()


# ------------------------------------------------------------------------------------ errors
ERRORS = [
    (
        "exp_int",
        lambda m, mk: mk("i64").exp_(),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    ),
    (
        "sqrt_int32",
        lambda m, mk: mk("i32").sqrt_(),
        RuntimeError,
        "result type Float can't be cast to the desired output type Int",
    ),
    (
        "sigmoid_bool",
        lambda m, mk: mk("b").sigmoid_(),
        RuntimeError,
        "result type Float can't be cast to the desired output type Bool",
    ),
    (
        "abs_bool",
        lambda m, mk: m.abs(mk("b")),
        NotImplementedError,
        "\"abs_cpu\" not implemented for 'Bool'",
    ),
    (
        "abs__complex",
        lambda m, mk: mk("c").abs_(),
        RuntimeError,
        "In-place abs is not supported for complex tensors.",
    ),
    (
        "ceil_complex",
        lambda m, mk: m.ceil(mk("c")),
        NotImplementedError,
        "ceil is not supported for complex inputs",
    ),
    (
        "floor_bool",
        lambda m, mk: m.floor(mk("b")),
        NotImplementedError,
        "\"floor_vml_cpu\" not implemented for 'Bool'",
    ),
    (
        "trunc_complex",
        lambda m, mk: m.trunc(mk("c")),
        NotImplementedError,
        "trunc is not supported for complex inputs",
    ),
    (
        "round_bool",
        lambda m, mk: m.round(mk("b")),
        NotImplementedError,
        "\"round_vml_cpu\" not implemented for 'Bool'",
    ),
    (
        "round_decimals_int",
        lambda m, mk: m.round(mk("i64"), decimals=1),
        NotImplementedError,
        "\"round_cpu\" not implemented for 'Long'",
    ),
    (
        "round_decimals_float",
        lambda m, mk: mk("f").round(decimals=1.5),
        TypeError,
        "round(): argument 'decimals' must be int, not float",
    ),
    (
        "frac_int",
        lambda m, mk: m.frac(mk("i64")),
        NotImplementedError,
        "\"frac_cpu\" not implemented for 'Long'",
    ),
    (
        "sign_complex",
        lambda m, mk: m.sign(mk("c")),
        NotImplementedError,
        (
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn "
            "instead."
        ),
    ),
    (
        "signbit_complex",
        lambda m, mk: m.signbit(mk("c")),
        NotImplementedError,
        "signbit is not implemented for complex tensors.",
    ),
    (
        "positive_bool",
        lambda m, mk: m.positive(mk("b")),
        RuntimeError,
        "The `+` operator, on a bool tensor is not supported.",
    ),
    (
        "relu_bool",
        lambda m, mk: m.relu(mk("b")),
        RuntimeError,
        "Boolean inputs not supported for relu",
    ),
    (
        "relu_complex",
        lambda m, mk: m.relu(mk("c")),
        NotImplementedError,
        "clamp is not supported for complex types",
    ),
    (
        "deg2rad_complex",
        lambda m, mk: m.deg2rad(mk("c")),
        RuntimeError,
        "deg2rad is not supported for complex tensors.",
    ),
    (
        "rad2deg_complex",
        lambda m, mk: m.rad2deg(mk("c")),
        RuntimeError,
        "rad2deg is not supported for complex tensors.",
    ),
    (
        "logit_complex",
        lambda m, mk: m.logit(mk("c")),
        NotImplementedError,
        "\"logit_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        "erf_complex",
        lambda m, mk: m.erf(mk("c")),
        NotImplementedError,
        "\"erf_vml_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        "erfinv_complex",
        lambda m, mk: m.erfinv(mk("c")),
        NotImplementedError,
        "\"erfinv_vml_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        "i0_complex",
        lambda m, mk: m.i0(mk("c")),
        NotImplementedError,
        "\"i0_vml_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        "lgamma_complex",
        lambda m, mk: m.lgamma(mk("c")),
        NotImplementedError,
        "\"lgamma_vml_cpu\" not implemented for 'ComplexFloat'",
    ),
    (
        "digamma_complex",
        lambda m, mk: m.digamma(mk("c")),
        NotImplementedError,
        "\"digamma\" not implemented for 'ComplexFloat'",
    ),
    (
        "trigamma_complex",
        lambda m, mk: m.polygamma(1, mk("c")),
        NotImplementedError,
        "\"trigamma\" not implemented for 'ComplexFloat'",
    ),
    (
        "polygamma_negative",
        lambda m, mk: m.polygamma(-1, mk("f")),
        RuntimeError,
        "polygamma(n, x) does not support negative n.",
    ),
    (
        "polygamma_float_n",
        lambda m, mk: m.polygamma(1.5, mk("f")),
        TypeError,
        "polygamma(): argument 'n' (position 1) must be int, not float",
    ),
    (
        "mvlgamma_p0",
        lambda m, mk: m.mvlgamma(mk("f"), 0),
        RuntimeError,
        "p has to be greater than or equal to 1",
    ),
    (
        "mvlgamma_float_p",
        lambda m, mk: m.mvlgamma(mk("f"), 2.5),
        TypeError,
        "mvlgamma(): argument 'p' (position 2) must be int, not float",
    ),
    (
        "mvlgamma_bool",
        lambda m, mk: m.mvlgamma(mk("b"), 1),
        RuntimeError,
        "The input tensor may not be a boolean tensor.",
    ),
    (
        "imag_real",
        lambda m, mk: m.imag(mk("f")),
        RuntimeError,
        "imag is not implemented for tensors with non-complex dtypes.",
    ),
    (
        "imag_attr_real",
        lambda m, mk: mk("f").imag,
        RuntimeError,
        "imag is not implemented for tensors with non-complex dtypes.",
    ),
]

_VALUES = {
    "f": ([0.5, -1.5], "float32"),
    "i64": ([1, -2], "int64"),
    "i32": ([1, -2], "int32"),
    "b": ([True, False], "bool"),
    "c": ([1 + 1j], "complex64"),
}


def _maker(m):
    def mk(kind):
        vals, dt = _VALUES[kind]
        return m.tensor(vals, dtype=getattr(m, dt))

    return mk


@pytest.mark.parametrize("name,fn,exc,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, fn, exc, msg):
    with pytest.raises(exc, match="^" + re.escape(msg) + "$"):
        fn(ember, _maker(ember))
    if torch is not None:  # the expectation is torch's own message
        with pytest.raises(exc, match="^" + re.escape(msg) + "$"):
            fn(torch, _maker(torch))


# ----------------------------------------------------------------- frexp, igamma, gradient
EXTRA = [
    Case("frexp_mantissa", lambda m, x: m.frexp(x)[0], [A(3, 4, low=-40, high=40)]),
    Case(
        "igamma",
        lambda m, a, x: m.igamma(a, x),
        [A(5, low=0.5, high=3, grad=False), A(5, low=0.1, high=4)],
    ),
    Case(
        "igammac",
        lambda m, a, x: m.igammac(a, x),
        [A(5, low=0.5, high=3, grad=False), A(5, low=0.1, high=4)],
    ),
    Case("gradient", lambda m, x: m.gradient(x)[1], [A(4, 5)]),
    Case(
        "gradient_spacing_edge2",
        lambda m, x: m.gradient(x, spacing=0.5, dim=0, edge_order=2)[0],
        [A(4, 5)],
    ),
    Case(
        "gradient_coordinates",
        lambda m, x: m.gradient(
            x, spacing=(m.tensor([0.0, 0.5, 2.0, 2.5, 4.0]),), dim=1, edge_order=2
        )[0],
        [A(3, 5)],
    ),
]


@pytest.mark.parametrize("case", EXTRA, ids=str)
def test_extra_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", EXTRA, ids=str)
def test_extra_gradcheck(case):
    run_gradcheck(case, gradgrad=case.name.startswith("gradient"))


def test_frexp_exponent_and_errors():
    x = ember.tensor([1.5, -3.0, 0.2, 0.0])
    m, e = ember.frexp(x)
    assert e.dtype is ember.int32 and e.tolist() == [1, 2, -2, 0]
    assert (m * ember.tensor(2.0) ** e.float()).tolist() == x.tolist()
    with pytest.raises(RuntimeError, match=r"torch.frexp\(\) only supports floating-point dtypes"):
        ember.frexp(ember.tensor([1, 2]))


def test_igamma_input_derivative_not_implemented():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ember.igamma(a, ember.tensor([0.5, 3.0]))
    with pytest.raises(
        NotImplementedError, match="the derivative for 'igamma: input' is not implemented"
    ):
        y.sum().backward()


def test_gradient_errors():
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        ember.gradient(ember.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        ember.gradient(ember.tensor([1.0, 2.0, 3.0]), edge_order=3)


@pytest.mark.parametrize("dim", [None, (0, 1)])
def test_gradient_spacing_length_error_matches_torch(dim):
    if torch is None:
        pytest.skip("torch is not installed (the parity oracle)")
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="torch.gradient expected spacing") as e:
            m.gradient(m.ones(3, 3), spacing=[1.0, 2.0, 3.0], dim=dim)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_igamma_scalar_argument_errors_like_torch():
    raises_like_torch(
        lambda m: m.igamma(m.tensor([1.0]), 3),
        TypeError,
        "igamma(): argument 'other' (position 2) must be Tensor, not int",
    )
