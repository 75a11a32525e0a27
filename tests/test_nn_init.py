"""nn.init: distributions vs torch's formulas, exact fills, gains, and torch's errors."""

import math
import warnings

import ember
import ember.nn.init
import numpy as np
import pytest
from harness import raises_like_torch

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

init = ember.nn.init


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)


def _np(t):
    return np.asarray(t.detach()._data, dtype=np.float64)


def _check_uniform(x, lo, hi):
    v = _np(x).ravel()
    assert v.min() >= lo and v.max() < hi
    n = v.size
    # mean and variance of U(lo, hi), within 5 standard errors
    assert abs(v.mean() - (lo + hi) / 2) < 5 * (hi - lo) / math.sqrt(12 * n)
    np.testing.assert_allclose(v.var(), (hi - lo) ** 2 / 12, rtol=0.05)


def _check_normal(x, mean, std):
    v = _np(x).ravel()
    assert abs(v.mean() - mean) < 5 * std / math.sqrt(v.size)
    np.testing.assert_allclose(v.std(), std, rtol=0.05)
    # a normal sample has ~4.6% of its mass beyond 2 sigma (a uniform would have none)
    assert 0.03 < np.mean(np.abs(v - mean) > 2 * std) < 0.065


# ------------------------------------------------------------------ gains and fans
GAINS = [
    ("linear", None),
    ("conv1d", None),
    ("conv2d", None),
    ("conv3d", None),
    ("conv_transpose1d", None),
    ("conv_transpose2d", None),
    ("conv_transpose3d", None),
    ("sigmoid", None),
    ("tanh", None),
    ("relu", None),
    ("leaky_relu", None),
    ("leaky_relu", 0.2),
    ("leaky_relu", 3),
    ("selu", None),
    ("tanh", 7),
]


@pytest.mark.parametrize("nl,param", GAINS)
def test_calculate_gain(nl, param):
    got = init.calculate_gain(nl, param)
    want = torch.nn.init.calculate_gain(nl, param) if torch else got
    assert got == pytest.approx(want, rel=1e-12)
    assert type(got) is type(want)


@pytest.mark.parametrize(
    "nl,param,msg",
    [
        ("foo", None, "Unsupported nonlinearity foo"),
        ("leaky_relu", True, "negative_slope True not a valid number"),
        ("leaky_relu", "x", "negative_slope x not a valid number"),
    ],
)
def test_calculate_gain_errors(nl, param, msg):
    raises_like_torch(lambda m: m.nn.init.calculate_gain(nl, param), ValueError, msg)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (6, 4, 3, 2), (2, 3, 1, 2, 2)])
def test_fans(shape):
    got = init._calculate_fan_in_and_fan_out(ember.empty(*shape))
    if torch:
        assert got == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    rf = math.prod(shape[2:])
    assert got == (shape[1] * rf, shape[0] * rf)


# ------------------------------------------------------------------ distributions
def test_uniform_normal():
    x = ember.empty(200, 300)
    assert init.uniform_(x, -0.5, 2.0) is x
    _check_uniform(x, -0.5, 2.0)
    assert init.normal_(x, 1.5, 0.3) is x
    _check_normal(x, 1.5, 0.3)
    assert x.dtype == ember.float32


def test_uniform_generator_reproducible():
    g1, g2 = ember.Generator().manual_seed(3), ember.Generator().manual_seed(3)
    a = init.uniform_(ember.empty(10), generator=g1)
    b = init.uniform_(ember.empty(10), generator=g2)
    np.testing.assert_array_equal(_np(a), _np(b))
    a = init.kaiming_normal_(ember.empty(4, 5), generator=g1)
    b = init.kaiming_normal_(ember.empty(4, 5), generator=g2)
    np.testing.assert_array_equal(_np(a), _np(b))


@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier(gain):
    x = ember.empty(300, 200, dtype=ember.float64)
    std = gain * math.sqrt(2.0 / 500)
    _check_uniform(init.xavier_uniform_(x, gain=gain), -math.sqrt(3) * std, math.sqrt(3) * std)
    _check_normal(init.xavier_normal_(x, gain=gain), 0.0, std)
    assert x.dtype == ember.float64


@pytest.mark.parametrize(
    "a,mode,nl",
    [
        (0, "fan_in", "leaky_relu"),
        (0.2, "fan_out", "leaky_relu"),
        (0, "fan_in", "relu"),
        (0, "FAN_OUT", "tanh"),
        (math.sqrt(5), "fan_in", "leaky_relu"),
    ],
)
def test_kaiming(a, mode, nl):
    x = ember.empty(120, 50, 3, 3)
    fan = (50 if mode.lower() == "fan_in" else 120) * 9
    std = init.calculate_gain(nl, a) / math.sqrt(fan)
    b = math.sqrt(3) * std
    _check_uniform(init.kaiming_uniform_(x, a=a, mode=mode, nonlinearity=nl), -b, b)
    _check_normal(init.kaiming_normal_(x, a=a, mode=mode, nonlinearity=nl), 0, std)


def test_kaiming_zero_element_warns():
    x = ember.empty(0, 4)
    for f in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            assert f(x) is x


@pytest.mark.parametrize("mean,std,a,b", [(0, 1, -2, 2), (0.5, 2.0, -1.0, 3.0), (0, 0.02, -1, 1)])
def test_trunc_normal(mean, std, a, b):
    x = init.trunc_normal_(ember.empty(100000, dtype=ember.float64), mean, std, a, b)
    v = _np(x)
    assert v.min() >= a and v.max() <= b
    # the truncated normal's mean and variance (closed form)
    al, be = (a - mean) / std, (b - mean) / std
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    Z = 0.5 * (math.erf(be / math.sqrt(2)) - math.erf(al / math.sqrt(2)))
    m = mean + std * (phi(al) - phi(be)) / Z
    var = std**2 * (1 + (al * phi(al) - be * phi(be)) / Z - ((phi(al) - phi(be)) / Z) ** 2)
    assert abs(v.mean() - m) < 5 * math.sqrt(var / v.size)
    np.testing.assert_allclose(v.var(), var, rtol=0.03)


def test_trunc_normal_warns():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(ember.empty(5), mean=10.0)


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (5, 2, 3), (8, 2, 2, 2)])
@pytest.mark.parametrize("gain", [1.0, 0.5])
def test_orthogonal(shape, gain):
    x = init.orthogonal_(ember.empty(*shape, dtype=ember.float64), gain=gain)
    w = _np(x).reshape(shape[0], -1) / gain
    r, c = w.shape
    if r <= c:
        np.testing.assert_allclose(w @ w.T, np.eye(r), atol=1e-10)
    else:
        np.testing.assert_allclose(w.T @ w, np.eye(c), atol=1e-10)


def test_orthogonal_float32_and_empty():
    x = init.orthogonal_(ember.empty(30, 20))
    assert x.dtype == ember.float32
    np.testing.assert_allclose(_np(x).T @ _np(x), np.eye(20), atol=1e-5)
    e = ember.empty(0, 4)
    assert init.orthogonal_(e) is e


@pytest.mark.parametrize("sparsity,rows,cols", [(0.1, 10, 50), (0.5, 7, 30), (0.0, 4, 4)])
def test_sparse(sparsity, rows, cols):
    x = init.sparse_(ember.empty(rows, cols, dtype=ember.float64), sparsity, std=0.5)
    v = _np(x)
    zeros_per_col = (v == 0).sum(0)
    assert (zeros_per_col == math.ceil(sparsity * rows)).all()
    nz = v[v != 0]
    assert nz.size == rows * cols - math.ceil(sparsity * rows) * cols
    np.testing.assert_allclose(nz.std(), 0.5, rtol=0.25)


# ------------------------------------------------------------------ exact fills
def _torch_same(name, shape, *args, **kw):
    """The deterministic initializers give exactly torch's tensor."""
    e = getattr(init, name)(ember.empty(*shape), *args, **kw)
    if torch is None:
        return _np(e)
    t = getattr(torch.nn.init, name)(torch.empty(*shape), *args, **kw)
    np.testing.assert_array_equal(_np(e), t.numpy())
    return _np(e)


@pytest.mark.parametrize(
    "name,shape,args,kw",
    [
        ("constant_", (3, 4), (2.5,), {}),
        ("ones_", (2, 3, 2), (), {}),
        ("zeros_", (4,), (), {}),
        ("eye_", (3, 5), (), {}),
        ("eye_", (5, 3), (), {}),
        ("dirac_", (4, 2, 3), (), {"groups": 2}),
        ("dirac_", (6, 4, 3, 3), (), {}),
        ("dirac_", (6, 2, 3, 3), (), {"groups": 3}),
        ("dirac_", (2, 3, 3, 4, 5), (), {}),
    ],
)
def test_exact(name, shape, args, kw):
    _torch_same(name, shape, *args, **kw)


def test_eye_int_and_requires_grad():
    x = init.eye_(ember.empty(2, 3, dtype=ember.int64))
    np.testing.assert_array_equal(_np(x), np.eye(2, 3))
    p = ember.empty(3, 3, requires_grad=True)
    for f in (init.eye_, init.zeros_, init.ones_, init.uniform_, init.normal_, init.xavier_normal_):
        assert f(p) is p
        assert p.requires_grad and p.grad_fn is None and p.is_leaf
    assert init.constant_(p, 3.0) is p


def test_deprecated_aliases():
    with pytest.warns(FutureWarning, match="`nn.init.uniform` is now deprecated in favor of"):
        x = init.uniform(ember.empty(3))
    assert x.shape == (3,)
    for old in ("normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"):  # fmt: skip
        assert callable(getattr(init, old))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(_np(init.eye(ember.empty(2, 2))), np.eye(2))


# ------------------------------------------------------------------ errors
ERRORS = [
    (lambda m: m.nn.init.xavier_uniform_(m.empty(4)), ValueError,
     "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"),
    (lambda m: m.nn.init.kaiming_normal_(m.empty(3, 4), mode="bad"), ValueError,
     "Mode bad not supported, please use one of ['fan_in', 'fan_out']"),
    (lambda m: m.nn.init.kaiming_uniform_(m.empty(3, 4), nonlinearity="bad"), ValueError,
     "Unsupported nonlinearity bad"),
    (lambda m: m.nn.init.eye_(m.empty(4)), ValueError,
     "Only tensors with 2 dimensions are supported"),
    (lambda m: m.nn.init.dirac_(m.empty(4, 4)), ValueError,
     "Only tensors with 3, 4, or 5 dimensions are supported"),
    (lambda m: m.nn.init.dirac_(m.empty(3, 4, 3), groups=2), ValueError,
     "dim 0 must be divisible by groups"),
    (lambda m: m.nn.init.orthogonal_(m.empty(4)), ValueError,
     "Only tensors with 2 or more dimensions are supported"),
    (lambda m: m.nn.init.sparse_(m.empty(4, 3, 2), 0.5), ValueError,
     "Only tensors with 2 dimensions are supported"),
    (lambda m: m.nn.init.uniform_(m.empty(2), 2, 1), RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=2 > to=1"),
    (lambda m: m.nn.init.normal_(m.empty(2), 0, -1), RuntimeError,
     "normal expects std >= 0.0, but found std -1"),
    (lambda m: m.nn.init.uniform_(m.empty(2, dtype=m.int64)), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
]  # fmt: skip


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)
