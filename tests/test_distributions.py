"""ember.distributions against torch.distributions: log_prob/entropy/moments/cdf values and their
gradients, kl_divergence, sample shapes and dtypes, sample statistics, argument validation errors,
reprs, and two small training losses (VAE, REINFORCE) fed identical draws."""

import math

import ember
import ember.distributions as ED
import numpy as np
import pytest

try:
    import torch
    import torch.distributions as TD
except ImportError:  # pragma: no cover
    torch = TD = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")

R = np.random.default_rng(7)


def _pos(*shape, lo=0.5, hi=2.5):
    return R.uniform(lo, hi, shape)


def _simplex(*shape):
    a = R.uniform(0.1, 1.0, shape)
    return a / a.sum(-1, keepdims=True)


def _spd(n, *batch):
    a = R.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _tril(n, *batch):
    a = np.tril(R.normal(size=batch + (n, n)))
    idx = np.arange(n)
    a[..., idx, idx] = np.abs(a[..., idx, idx]) + 0.5
    return a


# name -> (class name, params (name -> array, or a scalar passed as is), log_prob value maker)
CASES = {
    "normal": (
        "Normal",
        {"loc": R.normal(size=(3,)), "scale": _pos(3)},
        lambda: R.normal(size=(2, 3)),
    ),
    "normal_scalar": ("Normal", {"loc": 0.3, "scale": 1.7}, lambda: R.normal(size=(4,))),
    "uniform": (
        "Uniform",
        {"low": R.normal(size=(2, 3)) - 2, "high": R.normal(size=(2, 3)) + 2},
        lambda: R.uniform(-0.5, 0.5, (2, 3)),
    ),
    "laplace": (
        "Laplace",
        {"loc": R.normal(size=(4,)), "scale": _pos(4)},
        lambda: R.normal(size=(4,)),
    ),
    "exponential": ("Exponential", {"rate": _pos(3)}, lambda: _pos(5, 3, lo=0.1)),
    "bernoulli_probs": (
        "Bernoulli",
        {"probs": R.uniform(0.1, 0.9, (4,))},
        lambda: R.integers(0, 2, (3, 4)).astype(float),
    ),
    "bernoulli_logits": (
        "Bernoulli",
        {"logits": R.normal(size=(4,))},
        lambda: R.integers(0, 2, (4,)).astype(float),
    ),
    "categorical_probs": (
        "Categorical",
        {"probs": _simplex(2, 5)},
        lambda: R.integers(0, 5, (3, 2)).astype(float),
    ),
    "categorical_logits": (
        "Categorical",
        {"logits": R.normal(size=(3, 4))},
        lambda: R.integers(0, 4, (3,)).astype(float),
    ),
    "onehot": (
        "OneHotCategorical",
        {"probs": _simplex(2, 4)},
        lambda: np.eye(4)[R.integers(0, 4, (3, 2))],
    ),
    "gamma": (
        "Gamma",
        {"concentration": _pos(3, lo=0.3), "rate": _pos(3)},
        lambda: _pos(2, 3, lo=0.1),
    ),
    "beta": (
        "Beta",
        {"concentration1": _pos(3), "concentration0": _pos(3)},
        lambda: R.uniform(0.05, 0.95, (3,)),
    ),
    "dirichlet": ("Dirichlet", {"concentration": _pos(2, 4)}, lambda: _simplex(2, 4)),
    "poisson": (
        "Poisson",
        {"rate": _pos(4, lo=0.5, hi=6)},
        lambda: R.integers(0, 8, (4,)).astype(float),
    ),
    "binomial_probs": (
        "Binomial",
        {"total_count": 6.0, "probs": R.uniform(0.1, 0.9, (3,))},
        lambda: R.integers(0, 7, (3,)).astype(float),
    ),
    "binomial_logits": (
        "Binomial",
        {"total_count": 4.0, "logits": R.normal(size=(2, 3))},
        lambda: R.integers(0, 5, (2, 3)).astype(float),
    ),
    "mvn_cov": (
        "MultivariateNormal",
        {"loc": R.normal(size=(2, 3)), "covariance_matrix": _spd(3)},
        lambda: R.normal(size=(4, 2, 3)),
    ),
    "mvn_prec": (
        "MultivariateNormal",
        {"loc": R.normal(size=(3,)), "precision_matrix": _spd(3, 2)},
        lambda: R.normal(size=(2, 3)),
    ),
    "mvn_tril": (
        "MultivariateNormal",
        {"loc": R.normal(size=(3,)), "scale_tril": _tril(3)},
        lambda: R.normal(size=(5, 3)),
    ),
    "lognormal": (
        "LogNormal",
        {"loc": R.normal(size=(3,)), "scale": _pos(3)},
        lambda: _pos(2, 3, lo=0.1),
    ),
}
# which params are differentiable (integer-valued ones are not)
NO_GRAD = {"total_count"}
HAS_CDF = {"normal", "normal_scalar", "uniform", "laplace", "exponential", "gamma", "lognormal"}
HAS_ICDF = {"normal", "normal_scalar", "uniform", "laplace", "exponential", "lognormal"}
NO_ENTROPY = {"poisson"}


# The helpers below (up to the tests) serve test_distributions_more.py too, with its own tables.
def _build(lib, cls_name, params, no_grad, skip=(), numbers=(float,)):
    """``cls_name(**params)`` in ember or torch: arrays become float64 tensors (requiring grad
    unless named in ``no_grad`` or ``skip``), ``numbers`` are passed as they are. Returns the
    distribution and its {name: tensor requiring grad}."""
    mod = ember if lib == "ember" else torch
    tensors, kw = {}, {}
    for k, v in params.items():
        if isinstance(v, numbers):
            kw[k] = v
        else:
            t = kw[k] = mod.tensor(v, dtype=mod.float64)
            if k not in no_grad and k not in skip:
                tensors[k] = t.requires_grad_(True)
    dist = getattr(ED if lib == "ember" else TD, cls_name)(**kw)
    return dist, tensors


def _make(lib, case, skip=()):
    cls_name, params, _ = CASES[case]
    return _build(lib, cls_name, params, NO_GRAD, skip)


def _np(t):
    if isinstance(t, ember.Tensor):
        return np.asarray(t.detach()._data, dtype=np.float64)
    return t.detach().numpy().astype(np.float64)


def _same_grad(case, name, a, b, ot):
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-7, atol=1e-9, err_msg=name)


def _compare_with(
    make, rng, case, fn, *, with_value=None, rtol=1e-9, atol=1e-10, skip=(), same_grad=_same_grad
):
    """fn(dist, value) on both libraries (dists from ``make``): values, then gradients w.r.t.
    every parameter for a non-uniform upstream gradient (drawn from ``rng``), compared by
    ``same_grad(case, name, ember_grad, torch_grad, torch_output)`` where torch has one."""
    de, pe = make("ember", case, skip)
    dt, pt = make("torch", case, skip)
    ve = vt = None
    if with_value is not None:
        ve = ember.tensor(with_value, dtype=ember.float64)
        vt = torch.tensor(with_value, dtype=torch.float64)
    oe, ot = fn(de, ve), fn(dt, vt)
    assert tuple(oe.shape) == tuple(ot.shape)
    np.testing.assert_allclose(_np(oe), _np(ot), rtol=rtol, atol=atol)
    if not ot.requires_grad:
        return
    up = rng.uniform(0.5, 1.5, tuple(ot.shape))
    finite = np.isfinite(_np(ot))
    up = np.where(finite, up, 0.0)
    ge = ember.autograd.grad(oe, list(pe.values()), ember.tensor(up), allow_unused=True)
    gt = torch.autograd.grad(ot, list(pt.values()), torch.tensor(up), allow_unused=True)
    for name, a, b in zip(pe, ge, gt):
        if b is None:
            assert a is None or np.allclose(_np(a), 0), name
            continue
        same_grad(case, name, a, b, ot)


def _compare(case, fn, **kw):
    _compare_with(_make, R, case, fn, **kw)


def _check_shapes_support_repr(de, dt, sample_shapes, finite=False):
    """Shapes, flags, reprs and constraints of ember's ``de`` against torch's ``dt``; samples of
    each of ``sample_shapes`` lie in the support (and have a finite density when ``finite``)."""
    assert tuple(de.batch_shape) == tuple(dt.batch_shape)
    assert tuple(de.event_shape) == tuple(dt.event_shape)
    assert de.has_rsample == dt.has_rsample
    assert de.has_enumerate_support == dt.has_enumerate_support
    assert repr(de).replace("ember", "torch") == repr(dt)
    assert repr(de.support).replace("ember", "torch") == repr(dt.support)
    assert {k: repr(v).replace("ember", "torch") for k, v in de.arg_constraints.items()} == {
        k: repr(v) for k, v in dt.arg_constraints.items()
    }
    for sample_shape in sample_shapes:
        se = de.sample(sample_shape)
        st = dt.sample(sample_shape)
        assert tuple(se.shape) == tuple(st.shape)
        assert str(se.dtype).replace("ember", "torch") == str(st.dtype)
        assert not se.requires_grad
        if dt.has_rsample:
            re_ = de.rsample(sample_shape)
            assert tuple(re_.shape) == tuple(st.shape)
            assert re_.requires_grad == dt.rsample(sample_shape).requires_grad
        # samples lie in the support (log_prob validates them)
        lp = de.log_prob(se)
        if finite:
            assert np.isfinite(_np(lp)).all()


def _check_expand(de, dt, atol=0.0):
    """ember's ``de.expand`` against torch's ``dt.expand``: type, shapes, log_prob values."""
    new_batch = (2,) + tuple(dt.batch_shape)
    ee, et = de.expand(new_batch), dt.expand(new_batch)
    assert type(ee) is type(de)
    assert tuple(ee.batch_shape) == tuple(et.batch_shape)
    assert tuple(ee.event_shape) == tuple(et.event_shape)
    assert tuple(ee.sample().shape) == tuple(et.sample().shape)
    v = _np(et.sample((3,)))
    np.testing.assert_allclose(
        _np(ee.log_prob(ember.tensor(v))), _np(et.log_prob(torch.tensor(v))), rtol=1e-9, atol=atol
    )


def _kl_check(ke, kt, params_e, params_t, rng, rtol=1e-9):
    """ember's KL ``ke`` against torch's ``kt``: values, then gradients w.r.t. the parameters
    for a non-uniform upstream gradient (drawn from ``rng``)."""
    assert tuple(ke.shape) == tuple(kt.shape)
    np.testing.assert_allclose(_np(ke), _np(kt), rtol=rtol, atol=1e-12)
    if not kt.requires_grad:
        assert not ke.requires_grad
        return
    up = rng.uniform(0.5, 1.5, tuple(kt.shape))
    up = np.where(np.isfinite(_np(kt)), up, 0.0)
    ge = ember.autograd.grad(ke, params_e, ember.tensor(up), allow_unused=True)
    gt = torch.autograd.grad(kt, params_t, torch.tensor(up), allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is None:
            assert a is None or np.allclose(_np(a), 0), i
            continue
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-7, atol=1e-9, err_msg=str(i))


def _check_sample_moments(d, n, var_rtol):
    """``n`` samples (and rsamples) of ``d`` have its mean (to 6 standard errors) and variance
    (to ``var_rtol``)."""
    x = _np(d.sample((n,)))
    mean, var = _np(d.mean), _np(d.variance)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 6 * np.sqrt(var / n) + 1e-12)
    np.testing.assert_allclose(x.var(0), var, rtol=var_rtol)
    if d.has_rsample:
        y = _np(d.rsample((n,)))
        np.testing.assert_array_less(np.abs(y.mean(0) - mean), 6 * np.sqrt(var / n) + 1e-12)


def _errs(build_e, build_t):
    with pytest.raises(Exception) as ee:
        build_e()
    if torch is not None:
        with pytest.raises(Exception) as et:
            build_t()
        assert type(ee.value) is type(et.value)
        assert str(ee.value).replace("ember", "torch") == str(et.value)
    return ee.value


def _torch_validating():
    # importing torch._dynamo (torch.compile, which other test files call) turns torch's default
    # validation off for the rest of the process: the oracle must validate here
    if TD is None:
        yield
        return
    was = TD.Distribution._validate_args
    TD.Distribution.set_default_validate_args(True)
    yield
    TD.Distribution.set_default_validate_args(was)


@needs_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_log_prob_values_and_grads(case):
    _compare(case, lambda d, v: d.log_prob(v), with_value=CASES[case][2]())


@needs_torch
@pytest.mark.parametrize("case", sorted(set(CASES) - NO_ENTROPY))
def test_entropy_values_and_grads(case):
    _compare(case, lambda d, v: d.entropy())


@needs_torch
@pytest.mark.parametrize("prop", ["mean", "variance", "stddev", "mode"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_moments(case, prop):
    d, _ = _make("torch", case)
    try:
        getattr(d, prop)
    except NotImplementedError:
        de, _ = _make("ember", case)
        with pytest.raises(NotImplementedError):
            getattr(de, prop)
        return
    _compare(case, lambda d, v: getattr(d, prop) * 1.0, atol=1e-9)


@needs_torch
@pytest.mark.parametrize("case", sorted(HAS_CDF))
def test_cdf(case):
    # like torch, igamma has no derivative for its first argument (Gamma's concentration)
    skip = ("concentration",) if case == "gamma" else ()
    _compare(case, lambda d, v: d.cdf(v), with_value=CASES[case][2](), rtol=1e-8, skip=skip)


@needs_torch
@pytest.mark.parametrize("case", sorted(HAS_ICDF))
def test_icdf(case):
    de, _ = _make("torch", case)
    q = R.uniform(0.05, 0.95, tuple(de.batch_shape) or (3,))
    _compare(case, lambda d, v: d.icdf(v), with_value=q, rtol=1e-8)


@needs_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_shapes_batch_event_support_repr(case):
    _check_shapes_support_repr(_make("ember", case)[0], _make("torch", case)[0], [(), (5,), (2, 3)])


@needs_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_expand(case):
    _check_expand(_make("ember", case)[0], _make("torch", case)[0])


@needs_torch
@pytest.mark.parametrize(
    "case", ["bernoulli_probs", "categorical_logits", "onehot", "binomial_probs"]
)
def test_enumerate_support(case):
    de, _ = _make("ember", case)
    dt, _ = _make("torch", case)
    for expand in (True, False):
        a, b = de.enumerate_support(expand), dt.enumerate_support(expand)
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).replace("ember", "torch") == str(b.dtype)
        np.testing.assert_array_equal(_np(a), _np(b))


# ------------------------------------------------------------------------ kl divergence
KL_PAIRS = [
    ("normal", "Normal", {"loc": (3,), "scale": (3,)}),
    ("uniform", "Uniform", None),
    ("laplace", "Laplace", {"loc": (4,), "scale": (4,)}),
    ("exponential", "Exponential", {"rate": (3,)}),
    ("bernoulli", "Bernoulli", {"probs": (4,)}),
    ("categorical", "Categorical", {"probs": (2, 5)}),
    ("onehot", "OneHotCategorical", {"logits": (2, 5)}),
    ("gamma", "Gamma", {"concentration": (3,), "rate": (3,)}),
    ("beta", "Beta", {"concentration1": (3,), "concentration0": (3,)}),
    ("dirichlet", "Dirichlet", {"concentration": (2, 4)}),
    ("poisson", "Poisson", {"rate": (3,)}),
    ("mvn", "MultivariateNormal", None),
    ("lognormal", "LogNormal", {"loc": (3,), "scale": (3,)}),
]


def _kl_params(kind, shapes):
    if kind == "uniform":
        lo = R.normal(size=(4,))
        return {"low": lo, "high": lo + _pos(4)}
    if kind == "mvn":
        return {"loc": R.normal(size=(2, 3)), "scale_tril": _tril(3, 2)}
    out = {}
    for k, shape in shapes.items():
        if k in ("probs",) and kind in ("categorical",):
            out[k] = _simplex(*shape)
        elif k == "probs":
            out[k] = R.uniform(0.1, 0.9, shape)
        elif k in ("loc", "logits"):
            out[k] = R.normal(size=shape)
        else:
            out[k] = _pos(*shape)
    return out


def _kl_compare(cls_name, pp, qp):
    res = {}
    for lib, mod, dmod in (("e", ember, ED), ("t", torch, TD)):
        ts = {}
        mk = {}
        for side, params in (("p", pp), ("q", qp)):
            kw = {}
            for k, v in params.items():
                t = mod.tensor(v, dtype=mod.float64, requires_grad=True)
                ts[side + k] = kw[k] = t
            mk[side] = getattr(dmod, cls_name)(**kw)
        kl = (ED if lib == "e" else TD).kl_divergence(mk["p"], mk["q"])
        res[lib] = (kl, ts)
    (ke, te), (kt, tt) = res["e"], res["t"]
    assert kt.requires_grad  # every parameter is differentiable here
    _kl_check(ke, kt, list(te.values()), list(tt.values()), R)


@needs_torch
@pytest.mark.parametrize("kind,cls_name,shapes", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_divergence_values_and_grads(kind, cls_name, shapes):
    _kl_compare(cls_name, _kl_params(kind, shapes), _kl_params(kind, shapes))


@needs_torch
def test_kl_uniform_outside_support_is_inf():
    pe, qe = ED.Uniform(ember.tensor([0.0, 0.0]), 2.0), ED.Uniform(ember.tensor([0.0, 1.0]), 3.0)
    pt, qt = TD.Uniform(torch.tensor([0.0, 0.0]), 2.0), TD.Uniform(torch.tensor([0.0, 1.0]), 3.0)
    np.testing.assert_allclose(_np(ED.kl_divergence(pe, qe)), _np(TD.kl_divergence(pt, qt)))


@needs_torch
def test_kl_independent_and_mixed_pairs():
    loc, scale = R.normal(size=(2, 3)), _pos(2, 3)
    loc2, scale2 = R.normal(size=(2, 3)), _pos(2, 3)
    e = ED.kl_divergence(
        ED.Independent(ED.Normal(ember.tensor(loc), ember.tensor(scale)), 1),
        ED.Independent(ED.Normal(ember.tensor(loc2), ember.tensor(scale2)), 1),
    )
    t = TD.kl_divergence(
        TD.Independent(TD.Normal(torch.tensor(loc), torch.tensor(scale)), 1),
        TD.Independent(TD.Normal(torch.tensor(loc2), torch.tensor(scale2)), 1),
    )
    assert tuple(e.shape) == (2,)
    np.testing.assert_allclose(_np(e), _np(t), rtol=1e-10)
    # a few mixed pairs
    for mk in (
        lambda m, D: (
            D.Normal(m.tensor(loc), m.tensor(scale)),
            D.Laplace(m.tensor(loc2), m.tensor(scale2)),
        ),
        lambda m, D: (
            D.Uniform(m.tensor(loc), m.tensor(loc + scale)),
            D.Normal(m.tensor(loc2), m.tensor(scale2)),
        ),
        lambda m, D: (D.Exponential(m.tensor(scale)), D.Gamma(m.tensor(scale2), m.tensor(scale))),
    ):
        a = ED.kl_divergence(*mk(ember, ED))
        b = TD.kl_divergence(*mk(torch, TD))
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10)


def test_kl_not_implemented_and_register_kl():
    # (Normal and Poisson are both exponential families: their pair has torch's Bregman error,
    # see test_distributions_more.py)
    p, q = ED.Normal(0.0, 1.0), ED.Categorical(ember.ones(2))
    with pytest.raises(
        NotImplementedError,
        match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type Categorical",
    ):
        ED.kl_divergence(p, q)

    class MyNormal(ED.Normal):
        pass

    # a subclass dispatches to its parent's rule until it registers its own
    assert float(ED.kl_divergence(MyNormal(0.0, 1.0), ED.Normal(1.0, 1.0))) == pytest.approx(0.5)

    @ED.register_kl(MyNormal, ED.Normal)
    def _kl(p, q):
        return ember.tensor(42.0)

    assert float(ED.kl_divergence(MyNormal(0.0, 1.0), ED.Normal(1.0, 1.0))) == 42.0
    assert float(ED.kl_divergence(ED.Normal(0.0, 1.0), ED.Normal(1.0, 1.0))) == pytest.approx(0.5)
    with pytest.raises(TypeError):
        ED.register_kl(int, ED.Normal)


# ------------------------------------------------------------------------ sampling statistics
STAT_CASES = [
    ("Normal", {"loc": [0.5, -1.0], "scale": [1.0, 2.0]}),
    ("Uniform", {"low": [0.0, -2.0], "high": [1.0, 3.0]}),
    ("Laplace", {"loc": [0.5, -1.0], "scale": [1.0, 0.5]}),
    ("Exponential", {"rate": [0.5, 3.0]}),
    ("Bernoulli", {"probs": [0.2, 0.7]}),
    ("Gamma", {"concentration": [0.4, 3.0], "rate": [1.0, 2.0]}),
    ("Beta", {"concentration1": [0.5, 2.0], "concentration0": [0.7, 5.0]}),
    ("Dirichlet", {"concentration": [[0.5, 1.0, 3.0]]}),
    ("Poisson", {"rate": [0.5, 7.0]}),
    ("Binomial", {"total_count": [5.0, 20.0], "probs": [0.3, 0.9]}),
    ("MultivariateNormal", {"loc": [1.0, -1.0], "covariance_matrix": [[2.0, 0.6], [0.6, 1.0]]}),
    ("LogNormal", {"loc": [0.0, 0.3], "scale": [0.3, 0.5]}),
]


@pytest.mark.parametrize("cls_name,params", STAT_CASES, ids=[c[0] for c in STAT_CASES])
def test_sample_statistics(cls_name, params):
    ember.manual_seed(0)
    d = getattr(ED, cls_name)(
        **{k: ember.tensor(v, dtype=ember.float64) for k, v in params.items()}
    )
    _check_sample_moments(d, 20000, var_rtol=0.1)


def test_categorical_sample_frequencies():
    ember.manual_seed(0)
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    x = _np(ED.Categorical(ember.tensor(p)).sample((20000,))).astype(int)
    assert x.shape == (20000, 2)
    for b in range(2):
        freq = np.bincount(x[:, b], minlength=3) / 20000
        np.testing.assert_allclose(freq, p[b], atol=0.02)
    oh = _np(ED.OneHotCategorical(ember.tensor(p)).sample((20000,)))
    np.testing.assert_allclose(oh.mean(0), p, atol=0.02)


def test_rsample_pathwise_gradients_are_unbiased():
    """d/dtheta E[f(x)] estimated by rsample matches the analytic value (a test that can fail)."""
    ember.manual_seed(1)
    n = 40000
    # Normal: E[x^2] = loc^2 + scale^2
    loc = ember.tensor(0.7, dtype=ember.float64, requires_grad=True)
    scale = ember.tensor(1.3, dtype=ember.float64, requires_grad=True)
    (ED.Normal(loc, scale).rsample((n,)) ** 2).mean().backward()
    assert float(loc.grad) == pytest.approx(1.4, abs=0.05)
    assert float(scale.grad) == pytest.approx(2.6, abs=0.08)
    # Gamma (implicit reparameterization): E[x] = alpha / beta
    for a0 in (0.4, 2.5):
        alpha = ember.tensor(a0, dtype=ember.float64, requires_grad=True)
        beta = ember.tensor(2.0, dtype=ember.float64, requires_grad=True)
        ED.Gamma(alpha, beta).rsample((n,)).mean().backward()
        assert float(alpha.grad) == pytest.approx(0.5, rel=0.04)
        assert float(beta.grad) == pytest.approx(-a0 / 4, rel=0.04)
    # Beta: E[x] = a / (a + b)
    a = ember.tensor(2.0, dtype=ember.float64, requires_grad=True)
    b = ember.tensor(3.0, dtype=ember.float64, requires_grad=True)
    ED.Beta(a, b).rsample((n,)).mean().backward()
    assert float(a.grad) == pytest.approx(3 / 25, rel=0.06)
    assert float(b.grad) == pytest.approx(-2 / 25, rel=0.06)
    # Uniform, Laplace, Exponential, MultivariateNormal: E[x] = known means
    for d, params, expect in (
        (ED.Uniform, (0.5, 2.0), (0.5, 0.5)),
        (ED.Laplace, (0.5, 2.0), (1.0, 0.0)),
    ):
        ps = [ember.tensor(v, dtype=ember.float64, requires_grad=True) for v in params]
        d(*ps).rsample((n,)).mean().backward()
        for p, e in zip(ps, expect):
            assert float(p.grad) == pytest.approx(e, abs=0.03)
    rate = ember.tensor(2.0, dtype=ember.float64, requires_grad=True)
    ED.Exponential(rate).rsample((n,)).mean().backward()
    assert float(rate.grad) == pytest.approx(-0.25, rel=0.04)


@needs_torch
def test_standard_gamma_grad_matches_torch():
    from ember.distributions.gamma_sampling import _standard_gamma_grad

    a = np.array([0.3, 0.5, 1.0, 2.5, 7.0, 30.0, 2.5])
    x = np.array([0.1, 0.7, 1.3, 2.0, 9.0, 25.0, 6.0])
    ours = _np(_standard_gamma_grad(ember.tensor(a), ember.tensor(x)))
    theirs = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-3)


def test_sampling_is_seeded_and_float32_stays_float32():
    ember.manual_seed(3)
    a = _np(ED.Gamma(ember.tensor([0.5, 2.0]), 1.0).sample((4,)))
    ember.manual_seed(3)
    b = _np(ED.Gamma(ember.tensor([0.5, 2.0]), 1.0).sample((4,)))
    np.testing.assert_array_equal(a, b)
    for d in (
        ED.Normal(ember.zeros(2), 1.0),
        ED.Gamma(ember.ones(2), 1.0),
        ED.Dirichlet(ember.ones(3)),
        ED.Uniform(ember.zeros(2), 1.0),
        ED.Laplace(ember.zeros(2), 1.0),
    ):
        assert d.rsample((3,)).dtype == ember.float32
    assert ED.Categorical(ember.ones(3)).sample((3,)).dtype == ember.int64


# ------------------------------------------------------------------------ validation
BAD = [
    ("normal_scale", lambda m, D: D.Normal(m.zeros(2), -m.ones(2))),
    ("uniform_order", lambda m, D: D.Uniform(1.0, 0.0)),
    ("bernoulli_both", lambda m, D: D.Bernoulli(m.tensor([0.3]), logits=m.tensor([0.3]))),
    ("bernoulli_none", lambda m, D: D.Bernoulli()),
    ("bernoulli_range", lambda m, D: D.Bernoulli(m.tensor([1.3]))),
    ("categorical_simplex", lambda m, D: D.Categorical(m.tensor([0.3, -1.0]))),
    ("categorical_0d", lambda m, D: D.Categorical(m.tensor(0.3))),
    ("gamma_rate", lambda m, D: D.Gamma(m.tensor([1.0]), m.tensor([0.0]))),
    ("dirichlet_0d", lambda m, D: D.Dirichlet(m.tensor(1.0))),
    ("mvn_none", lambda m, D: D.MultivariateNormal(m.zeros(2))),
    ("mvn_1d_cov", lambda m, D: D.MultivariateNormal(m.zeros(2), m.ones(2))),
    ("mvn_0d_loc", lambda m, D: D.MultivariateNormal(m.tensor(0.0), m.eye(2))),
    ("mvn_not_pd", lambda m, D: D.MultivariateNormal(m.zeros(2), -m.eye(2))),
    ("mvn_tril", lambda m, D: D.MultivariateNormal(m.zeros(2), scale_tril=m.ones(2, 2))),
    ("independent_ndims", lambda m, D: D.Independent(D.Normal(0.0, 1.0), 1)),
    ("log_prob_support", lambda m, D: D.Uniform(0.0, 1.0).log_prob(m.tensor(2.0))),
    ("log_prob_bool", lambda m, D: D.Bernoulli(m.tensor([0.3])).log_prob(m.tensor([0.5]))),
    ("log_prob_not_tensor", lambda m, D: D.Bernoulli(m.tensor([0.3])).log_prob([0.5])),
    ("log_prob_shape", lambda m, D: D.Normal(m.zeros(2), m.ones(2)).log_prob(m.zeros(3))),
    ("log_prob_event", lambda m, D: D.Dirichlet(m.ones(3)).log_prob(m.ones(2) / 2)),
    ("log_prob_categorical", lambda m, D: D.Categorical(m.ones(3)).log_prob(m.tensor(3))),
    ("log_prob_poisson", lambda m, D: D.Poisson(m.tensor([2.0])).log_prob(m.tensor([1.5]))),
    ("expand", lambda m, D: D.Normal(m.zeros(2), 1.0).expand([3])),
]


@pytest.fixture
def torch_validates():
    yield from _torch_validating()


@pytest.mark.parametrize("name,build", BAD, ids=[b[0] for b in BAD])
@pytest.mark.usefixtures("torch_validates")
def test_validation_errors_match_torch(name, build):
    _errs(lambda: build(ember, ED), lambda: build(torch, TD))


def test_validate_args_switches():
    # off per instance
    ED.Normal(ember.zeros(2), -ember.ones(2), validate_args=False)
    assert ED.Uniform(0.0, 1.0, validate_args=False).log_prob(ember.tensor(2.0)).item() == -math.inf
    # off by default, then back on
    try:
        ED.Distribution.set_default_validate_args(False)
        ED.Normal(0.0, -1.0)
    finally:
        ED.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        ED.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        ED.Distribution.set_default_validate_args("yes")


def test_constraints_basics():
    C = ED.constraints
    assert bool(C.positive.check(ember.tensor(1.0)))
    assert not bool(C.positive.check(ember.tensor(0.0)))
    assert C.real_vector.event_dim == 1
    assert tuple(C.simplex.check(ember.tensor([[0.5, 0.5], [0.6, 0.6]])).tolist()) == (True, False)
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(ember.zeros(1))
    with pytest.raises(NotImplementedError, match="cannot be determined statically"):
        C.dependent.event_dim  # noqa: B018
    assert bool(C.positive_definite.check(ember.eye(2)))
    assert not bool(C.positive_definite.check(-ember.eye(2)))
    assert repr(ED.Uniform.support) == "Dependent()" or ED.Uniform.support is not None


def test_independent_and_lognormal_behave():
    d = ED.Independent(ED.Normal(ember.zeros(4, 3), ember.ones(4, 3)), 1)
    assert tuple(d.batch_shape) == (4,) and tuple(d.event_shape) == (3,)
    assert tuple(d.log_prob(ember.zeros(4, 3)).shape) == (4,)
    assert tuple(d.entropy().shape) == (4,)
    assert repr(d) == "Independent(Normal(loc: ember.Size([4, 3]), scale: ember.Size([4, 3])), 1)"
    with pytest.raises(NotImplementedError, match="cartesian product"):
        ED.Independent(ED.Bernoulli(ember.ones(2) / 2), 1).enumerate_support()


# ------------------------------------------------------------------------ training losses
@needs_torch
def test_vae_loss_gradients_match_torch():
    mu0 = R.normal(size=(4, 3))
    logvar0 = R.normal(size=(4, 3)) * 0.3
    eps = R.normal(size=(4, 3))
    x = R.normal(size=(4, 3))
    grads = {}
    for lib, m, D in (("e", ember, ED), ("t", torch, TD)):
        mu = m.tensor(mu0, requires_grad=True)
        logvar = m.tensor(logvar0, requires_grad=True)
        q = D.Normal(mu, (0.5 * logvar).exp())
        z = q.loc + q.scale * m.tensor(eps)  # rsample with a shared draw
        prior = D.Normal(m.zeros_like(mu), m.ones_like(mu))
        recon = D.Normal(z, 1.0).log_prob(m.tensor(x)).sum(-1)
        kl = D.kl_divergence(q, prior).sum(-1)
        loss = (kl - recon).mean()
        loss.backward()
        grads[lib] = (loss.item(), _np(mu.grad), _np(logvar.grad))
    assert grads["e"][0] == pytest.approx(grads["t"][0], rel=1e-10)
    np.testing.assert_allclose(grads["e"][1], grads["t"][1], rtol=1e-9)
    np.testing.assert_allclose(grads["e"][2], grads["t"][2], rtol=1e-9)
    # and the real rsample path is differentiable and shaped like torch's
    mu = ember.tensor(mu0, requires_grad=True)
    z = ED.Normal(mu, ember.ones(4, 3)).rsample()
    z.sum().backward()
    np.testing.assert_allclose(_np(mu.grad), np.ones((4, 3)))


@needs_torch
def test_reinforce_loss_gradients_match_torch():
    logits0 = R.normal(size=(5, 4))
    w0 = R.normal(size=(4, 4))
    actions = R.integers(0, 4, (5,))
    rewards = R.normal(size=(5,))
    out = {}
    for lib, m, D in (("e", ember, ED), ("t", torch, TD)):
        w = m.tensor(w0, requires_grad=True)
        logits = m.tensor(logits0) @ w
        dist = D.Categorical(logits=logits)
        a = m.tensor(actions)
        loss = -(dist.log_prob(a) * m.tensor(rewards)).mean() - 0.01 * dist.entropy().mean()
        loss.backward()
        out[lib] = (loss.item(), _np(w.grad))
    assert out["e"][0] == pytest.approx(out["t"][0], rel=1e-10)
    np.testing.assert_allclose(out["e"][1], out["t"][1], rtol=1e-9)
    # a sampled action is an int64 index in range, with no gradient
    s = ED.Categorical(logits=ember.tensor(logits0)).sample()
    assert s.dtype == ember.int64 and tuple(s.shape) == (5,)
    assert int(s.min()) >= 0 and int(s.max()) < 4


def test_dropin_resolves_torch_distributions(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "s.py"
    script.write_text(
        "import torch\n"
        "from torch.distributions import Normal, kl_divergence\n"
        "import torch.distributions.constraints as C\n"
        "d = Normal(torch.zeros(2), torch.ones(2))\n"
        "print(d, type(d).__module__, C.positive)\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "ember", "run", str(script)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Normal(loc: torch.Size([2]), scale: torch.Size([2]))")
    assert "ember.distributions.normal" in r.stdout
