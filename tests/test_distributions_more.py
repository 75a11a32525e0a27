"""The newer ember.distributions families against torch.distributions: log_prob/cdf/icdf/
entropy/moments and their gradients, shapes, expand, validation errors, KL divergences,
transforms, sample statistics, and the Gamma implicit-reparameterization gradient."""

import math

import ember
import ember.distributions as ED
import numpy as np
import pytest
from test_distributions import (
    TD,
    _build,
    _check_expand,
    _check_sample_moments,
    _check_shapes_support_repr,
    _compare_with,
    _errs,
    _kl_check,
    _np,
    _pos,
    _simplex,
    _torch_validating,
    needs_torch,
    torch,
)

R = np.random.default_rng(11)


def _spd(n, *batch, jitter=1.0):
    a = R.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) / n + jitter * np.eye(n)


def _corr_cholesky(n, *batch):
    a = _spd(n, *batch, jitter=0.3)
    d = np.sqrt(np.diagonal(a, axis1=-2, axis2=-1))
    return np.linalg.cholesky(a / d[..., :, None] / d[..., None, :])


# name -> (class name, params (Python numbers are passed as they are), log_prob value maker)
CASES = {
    "studentt": (
        "StudentT",
        {"df": np.array([0.8, 1.5, 3.0, 7.0]), "loc": R.normal(size=(4,)), "scale": _pos(4)},
        lambda: R.normal(size=(2, 4)) * 2,
    ),
    "cauchy": (
        "Cauchy",
        {"loc": R.normal(size=(3,)), "scale": _pos(3)},
        lambda: R.normal(size=(2, 3)) * 3,
    ),
    "halfcauchy": ("HalfCauchy", {"scale": _pos(3)}, lambda: _pos(2, 3, lo=0.01, hi=5)),
    "halfnormal": ("HalfNormal", {"scale": _pos(3)}, lambda: _pos(2, 3, lo=0.01, hi=3)),
    "gumbel": (
        "Gumbel",
        {"loc": R.normal(size=(3,)), "scale": _pos(3)},
        lambda: R.normal(size=(2, 3)) * 2,
    ),
    "weibull": (
        "Weibull",
        {"scale": _pos(3), "concentration": np.array([0.7, 1.5, 3.0])},
        lambda: _pos(2, 3, lo=0.05, hi=3),
    ),
    "pareto": (
        "Pareto",
        {"scale": _pos(4, lo=0.2, hi=1.0), "alpha": np.array([0.8, 1.5, 2.5, 4.0])},
        lambda: _pos(2, 4, lo=1.0, hi=4),
    ),
    "chi2": ("Chi2", {"df": np.array([0.7, 2.0, 5.5])}, lambda: _pos(2, 3, lo=0.05, hi=6)),
    "fisher": (
        "FisherSnedecor",
        {"df1": np.array([1.5, 3.0, 6.0]), "df2": np.array([1.5, 4.5, 9.0])},
        lambda: _pos(2, 3, lo=0.05, hi=4),
    ),
    "geometric_probs": (
        "Geometric",
        {"probs": R.uniform(0.1, 0.9, (4,))},
        lambda: R.integers(0, 6, (3, 4)).astype(float),
    ),
    "geometric_logits": (
        "Geometric",
        {"logits": R.normal(size=(4,))},
        lambda: R.integers(0, 6, (4,)).astype(float),
    ),
    "negbin_probs": (
        "NegativeBinomial",
        {"total_count": np.array([2.0, 5.5, 10.0]), "probs": R.uniform(0.1, 0.9, (3,))},
        lambda: R.integers(0, 12, (2, 3)).astype(float),
    ),
    "negbin_logits": (
        "NegativeBinomial",
        {"total_count": 4.0, "logits": R.normal(size=(3,))},
        lambda: R.integers(0, 9, (3,)).astype(float),
    ),
    "multinomial": (
        "Multinomial",
        {"total_count": 5, "probs": _simplex(2, 4)},
        lambda: np.array([[1.0, 2.0, 0.0, 2.0], [0.0, 0.0, 5.0, 0.0]]),
    ),
    "multinomial_logits": (
        "Multinomial",
        {"total_count": 3, "logits": R.normal(size=(3,))},
        lambda: np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]),
    ),
    "lowrank": (
        "LowRankMultivariateNormal",
        {"loc": R.normal(size=(2, 3)), "cov_factor": R.normal(size=(3, 2)), "cov_diag": _pos(3)},
        lambda: R.normal(size=(4, 2, 3)),
    ),
    "relaxed_bernoulli": (
        "RelaxedBernoulli",
        {"temperature": np.array(0.7), "probs": R.uniform(0.1, 0.9, (3,))},
        lambda: R.uniform(0.05, 0.95, (2, 3)),
    ),
    "relaxed_bernoulli_logits": (
        "RelaxedBernoulli",
        {"temperature": np.array(1.3), "logits": R.normal(size=(3,))},
        lambda: R.uniform(0.05, 0.95, (3,)),
    ),
    "relaxed_onehot": (
        "RelaxedOneHotCategorical",
        {"temperature": np.array(0.8), "probs": _simplex(2, 4)},
        lambda: _simplex(3, 2, 4),
    ),
    "relaxed_onehot_logits": (
        "RelaxedOneHotCategorical",
        {"temperature": np.array(1.5), "logits": R.normal(size=(3,))},
        lambda: _simplex(3),
    ),
    "contbern": (
        "ContinuousBernoulli",
        {"probs": np.array([0.1, 0.3, 0.4995, 0.5, 0.8])},
        lambda: R.uniform(0.02, 0.98, (2, 5)),
    ),
    "contbern_logits": (
        "ContinuousBernoulli",
        {"logits": np.array([-2.0, 0.5, 0.0, 1e-4])},
        lambda: R.uniform(0.02, 0.98, (4,)),
    ),
    "vonmises": (
        "VonMises",
        {"loc": R.normal(size=(4,)), "concentration": np.array([0.05, 0.8, 4.0, 20.0])},
        lambda: R.uniform(-3, 3, (2, 4)),
    ),
    "kumaraswamy": (
        "Kumaraswamy",
        {"concentration1": np.array([0.7, 2.0, 3.5]), "concentration0": _pos(3)},
        lambda: R.uniform(0.05, 0.95, (2, 3)),
    ),
    "logisticnormal": (
        "LogisticNormal",
        {"loc": R.normal(size=(2, 3)), "scale": _pos(2, 3)},
        lambda: _simplex(2, 4),
    ),
    "inversegamma": (
        "InverseGamma",
        {"concentration": np.array([0.7, 1.5, 3.0]), "rate": _pos(3)},
        lambda: _pos(2, 3, lo=0.1, hi=3),
    ),
    "wishart": (
        "Wishart",
        {"df": np.array([4.0, 6.5]), "covariance_matrix": _spd(3)},
        lambda: _spd(3, 2, 2),
    ),
    "wishart_tril": (
        "Wishart",
        {"df": np.array([3.5, 4.0, 5.0]), "scale_tril": np.linalg.cholesky(_spd(2, 3))},
        lambda: _spd(2, 4, 3),
    ),
    "lkj": (
        "LKJCholesky",
        {"dim": 3, "concentration": np.array([0.5, 1.0, 2.5])},
        lambda: _corr_cholesky(3, 2, 3),
    ),
}
NO_GRAD = {"total_count", "temperature", "dim"}
HAS_CDF = {
    "cauchy",
    "halfcauchy",
    "halfnormal",
    "gumbel",
    "weibull",
    "pareto",
    "contbern",
    "contbern_logits",
    "kumaraswamy",
}
HAS_ICDF = HAS_CDF
# per-case extra tolerance (VonMises no longer needs one: ember evaluates torch's polynomial
# approximations of the Bessel functions too)
LOOSE: dict = {}


def _make(lib, case, skip=()):
    cls_name, params, _ = CASES[case]
    return _build(lib, cls_name, params, NO_GRAD, skip, numbers=(float, int))


def _same_grad(case, name, a, b, ot):
    assert a is not None, name
    # torch's masked formulas leak NaN gradients (0 * nan) where ember's where() gives 0
    keep = ~np.isnan(_np(b)) | bool(np.isfinite(_np(ot)).all())
    np.testing.assert_allclose(
        _np(a)[keep] if keep.ndim else _np(a),
        _np(b)[keep] if keep.ndim else _np(b),
        rtol=1e-7,
        atol=max(1e-9, 10 * LOOSE.get(case, 0)),
        err_msg=name,
    )


def _compare(case, fn, *, atol=1e-10, **kw):
    atol = max(atol, LOOSE.get(case, 0.0))
    _compare_with(_make, R, case, fn, atol=atol, same_grad=_same_grad, **kw)


@pytest.fixture(autouse=True)
def torch_validates():
    yield from _torch_validating()


@needs_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_log_prob_values_and_grads(case):
    _compare(case, lambda d, v: d.log_prob(v), with_value=CASES[case][2]())


def _torch_has(case, method):
    d, _ = _make("torch", case)
    try:
        out = getattr(d, method)
        if callable(out):
            out()
    except NotImplementedError:
        return False
    return True


ENTROPY_CASES = sorted(c for c in CASES if c not in {"fisher", "negbin_probs", "negbin_logits"})


@needs_torch
@pytest.mark.parametrize("case", ENTROPY_CASES)
def test_entropy_values_and_grads(case):
    if not _torch_has(case, "entropy"):
        de, _ = _make("ember", case)
        with pytest.raises(NotImplementedError):
            de.entropy()
        return
    # Multinomial's entropy sums a Binomial pmf over its support: ~1e-8 rounding either way
    _compare(case, lambda d, v: d.entropy(), rtol=1e-7 if "multinomial" in case else 1e-9)


@needs_torch
@pytest.mark.parametrize("prop", ["mean", "variance", "stddev", "mode"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_moments(case, prop):
    if case == "kumaraswamy" and prop == "mode":
        pytest.skip("torch 2.13's Kumaraswamy.mode is NaN for every concentration0 > 1")
    if not _torch_has(case, prop):
        de, _ = _make("ember", case)
        with pytest.raises(NotImplementedError):
            getattr(de, prop)
        return
    _compare(case, lambda d, v: getattr(d, prop) * 1.0, atol=1e-9)


def test_kumaraswamy_mode_is_the_density_maximum():
    a = ember.tensor([2.0, 3.5, 1.5], dtype=ember.float64)
    b = ember.tensor([4.0, 1.5, 2.0], dtype=ember.float64)
    d = ED.Kumaraswamy(a, b)
    m = d.mode
    expect = ((a - 1) / (a * b - 1)) ** (1 / a)
    np.testing.assert_allclose(_np(m), _np(expect), rtol=1e-12)
    lp = d.log_prob(m)
    for eps in (1e-3, -1e-3):
        assert bool((d.log_prob(m + eps) < lp).all())
    assert math.isnan(float(ED.Kumaraswamy(0.5, 2.0).mode))


@needs_torch
@pytest.mark.parametrize("case", sorted(HAS_CDF))
def test_cdf(case):
    _compare(case, lambda d, v: d.cdf(v), with_value=CASES[case][2](), rtol=1e-8)


@needs_torch
@pytest.mark.parametrize("case", sorted(HAS_ICDF))
def test_icdf(case):
    de, _ = _make("torch", case)
    q = R.uniform(0.05, 0.95, tuple(de.batch_shape) or (3,))
    _compare(case, lambda d, v: d.icdf(v), with_value=q, rtol=1e-8)


@needs_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_shapes_batch_event_support_repr(case):
    de, dt = _make("ember", case)[0], _make("torch", case)[0]
    # samples also have a finite density
    _check_shapes_support_repr(de, dt, [(), (3,), (2, 3)], finite=True)


@needs_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_expand(case):
    _check_expand(_make("ember", case)[0], _make("torch", case)[0], atol=LOOSE.get(case, 0))


# ------------------------------------------------------------------------ mixtures
def _mixture(m, D, comp):
    logits = m.tensor([[0.3, -0.2, 1.0], [0.0, 0.5, -1.0]], dtype=m.float64)
    if comp == "normal":
        c = D.Normal(
            m.tensor([[-1.0, 0.5, 2.0], [0.0, 1.0, -2.0]], dtype=m.float64),
            m.tensor([[0.5, 1.0, 0.7], [1.5, 0.3, 1.0]], dtype=m.float64),
        )
    else:
        c = D.Independent(
            D.Normal(
                m.tensor(np.arange(12.0).reshape(2, 3, 2) / 4 - 1, dtype=m.float64),
                m.tensor(np.linspace(0.5, 2, 12).reshape(2, 3, 2), dtype=m.float64),
            ),
            1,
        )
    logits.requires_grad_(True)
    return D.MixtureSameFamily(D.Categorical(logits=logits), c), logits


@needs_torch
@pytest.mark.parametrize("comp", ["normal", "independent"])
def test_mixture_same_family(comp):
    de, le = _mixture(ember, ED, comp)
    dt, lt = _mixture(torch, TD, comp)
    assert tuple(de.batch_shape) == tuple(dt.batch_shape) == (2,)
    assert tuple(de.event_shape) == tuple(dt.event_shape)
    assert repr(de).replace("ember", "torch") == repr(dt)
    assert repr(de.support).replace("ember", "torch") == repr(dt.support)
    x = R.normal(size=(4, 2) + tuple(dt.event_shape))
    oe, ot = de.log_prob(ember.tensor(x)), dt.log_prob(torch.tensor(x))
    np.testing.assert_allclose(_np(oe), _np(ot), rtol=1e-10)
    up = R.uniform(0.5, 1.5, tuple(ot.shape))
    (ge,) = ember.autograd.grad(oe, [le], ember.tensor(up))
    (gt,) = torch.autograd.grad(ot, [lt], torch.tensor(up))
    np.testing.assert_allclose(_np(ge), _np(gt), rtol=1e-9)
    for prop in ("mean", "variance"):
        np.testing.assert_allclose(_np(getattr(de, prop)), _np(getattr(dt, prop)), rtol=1e-10)
    if comp == "normal":
        xe = R.normal(size=(3, 2))
        np.testing.assert_allclose(
            _np(de.cdf(ember.tensor(xe))), _np(dt.cdf(torch.tensor(xe))), rtol=1e-10
        )
    for s in [(), (5,)]:
        assert tuple(de.sample(s).shape) == tuple(dt.sample(s).shape)
    ee = de.expand((4, 2))
    assert tuple(ee.batch_shape) == (4, 2)
    assert tuple(ee.sample().shape) == tuple(dt.expand((4, 2)).sample().shape)


def test_mixture_sample_statistics():
    ember.manual_seed(0)
    mix = ED.Categorical(ember.tensor([0.2, 0.8], dtype=ember.float64))
    comp = ED.Normal(
        ember.tensor([-2.0, 3.0], dtype=ember.float64),
        ember.tensor([0.5, 1.0], dtype=ember.float64),
    )
    d = ED.MixtureSameFamily(mix, comp)
    x = _np(d.sample((20000,)))
    assert abs(x.mean() - float(d.mean)) < 6 * math.sqrt(float(d.variance) / 20000)
    assert abs(x.var() / float(d.variance) - 1) < 0.1


# ------------------------------------------------------------------------ lowrank extras
@needs_torch
def test_lowrank_matrices_match_torch():
    loc, W, Dg = R.normal(size=(2, 3)), R.normal(size=(3, 2)), _pos(3)
    de = ED.LowRankMultivariateNormal(ember.tensor(loc), ember.tensor(W), ember.tensor(Dg))
    dt = TD.LowRankMultivariateNormal(torch.tensor(loc), torch.tensor(W), torch.tensor(Dg))
    for prop in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        a, b = getattr(de, prop), getattr(dt, prop)
        assert tuple(a.shape) == tuple(b.shape), prop
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12, err_msg=prop)
    # the same log density as the equivalent full-covariance MultivariateNormal
    full = ED.MultivariateNormal(ember.tensor(loc), de.covariance_matrix)
    x = ember.tensor(R.normal(size=(5, 2, 3)))
    np.testing.assert_allclose(_np(de.log_prob(x)), _np(full.log_prob(x)), rtol=1e-10)


# ------------------------------------------------------------------------ kl divergence
def _kl_build(m, D, kind, params):
    t = {
        k: m.tensor(v, dtype=m.float64, requires_grad=k not in ("total_count",))
        for k, v in params.items()
    }
    return getattr(D, kind)(**t), [v for v in t.values() if v.requires_grad]


KL_CASES = [
    ("Cauchy", "Cauchy", {"loc": (3,), "scale": (3,)}, {"loc": (3,), "scale": (3,)}),
    ("Geometric", "Geometric", {"probs": (3,)}, {"probs": (3,)}),
    ("Gumbel", "Gumbel", {"loc": (3,), "scale": (3,)}, {"loc": (3,), "scale": (3,)}),
    ("HalfNormal", "HalfNormal", {"scale": (3,)}, {"scale": (3,)}),
    ("Pareto", "Pareto", {"scale": (3,), "alpha": (3,)}, {"scale": (3,), "alpha": (3,)}),
    ("ContinuousBernoulli", "ContinuousBernoulli", {"probs": (4,)}, {"probs": (4,)}),
    (
        "Beta",
        "Normal",
        {"concentration1": (3,), "concentration0": (3,)},
        {"loc": (3,), "scale": (3,)},
    ),
    ("Gamma", "Normal", {"concentration": (3,), "rate": (3,)}, {"loc": (3,), "scale": (3,)}),
    ("Exponential", "Normal", {"rate": (3,)}, {"loc": (3,), "scale": (3,)}),
    ("Laplace", "Normal", {"loc": (3,), "scale": (3,)}, {"loc": (3,), "scale": (3,)}),
    ("Gumbel", "Normal", {"loc": (3,), "scale": (3,)}, {"loc": (3,), "scale": (3,)}),
    ("ContinuousBernoulli", "Normal", {"probs": (3,)}, {"loc": (3,), "scale": (3,)}),
    ("Beta", "Exponential", {"concentration1": (3,), "concentration0": (3,)}, {"rate": (3,)}),
    ("Gamma", "Exponential", {"concentration": (3,), "rate": (3,)}, {"rate": (3,)}),
    ("ContinuousBernoulli", "Exponential", {"probs": (3,)}, {"rate": (3,)}),
    ("Normal", "Exponential", {"loc": (3,), "scale": (3,)}, {"rate": (3,)}),
    ("Uniform", "Exponential", "uniform", {"rate": (4,)}),
    ("Bernoulli", "Poisson", {"probs": (3,)}, {"rate": (3,)}),
]


def _kl_params(shapes):
    if shapes == "uniform":
        lo = np.array([-0.5, 0.2, 1.0, 0.0])
        return {"low": lo, "high": lo + _pos(4)}
    out = {}
    for k, shape in shapes.items():
        if k == "probs":
            out[k] = R.uniform(0.1, 0.9, shape)
        elif k == "loc":
            out[k] = R.normal(size=shape)
        else:
            out[k] = _pos(*shape)
    return out


def _kl_check_dists(pe, qe, pt, qt, params_e, params_t, rtol=1e-9):
    ke, kt = ED.kl_divergence(pe, qe), TD.kl_divergence(pt, qt)
    _kl_check(ke, kt, params_e, params_t, R, rtol=rtol)


@needs_torch
@pytest.mark.parametrize(
    "p_kind,q_kind,p_shapes,q_shapes", KL_CASES, ids=[f"{c[0]}-{c[1]}" for c in KL_CASES]
)
def test_kl_divergence_values_and_grads(p_kind, q_kind, p_shapes, q_shapes):
    pp, qp = _kl_params(p_shapes), _kl_params(q_shapes)
    pe, pe_params = _kl_build(ember, ED, p_kind, pp)
    qe, qe_params = _kl_build(ember, ED, q_kind, qp)
    pt, pt_params = _kl_build(torch, TD, p_kind, pp)
    qt, qt_params = _kl_build(torch, TD, q_kind, qp)
    _kl_check_dists(pe, qe, pt, qt, pe_params + qe_params, pt_params + qt_params)


@needs_torch
@pytest.mark.parametrize("pair", ["lr-lr", "mvn-lr", "lr-mvn"])
def test_kl_lowrank(pair):
    def build(m, D, kind, seed):
        g = np.random.default_rng(seed)
        loc = m.tensor(g.normal(size=(2, 3)), requires_grad=True)
        if kind == "lr":
            W = m.tensor(g.normal(size=(3, 2)), requires_grad=True)
            Dg = m.tensor(g.uniform(0.5, 2, (3,)), requires_grad=True)
            return D.LowRankMultivariateNormal(loc, W, Dg), [loc, W, Dg]
        a = g.normal(size=(3, 3))
        cov = m.tensor(a @ a.T + 3 * np.eye(3), requires_grad=True)
        return D.MultivariateNormal(loc, cov), [loc, cov]

    pk, qk = pair.split("-")
    pe, a = build(ember, ED, pk, 1)
    qe, b = build(ember, ED, qk, 2)
    pt, c = build(torch, TD, pk, 1)
    qt, d = build(torch, TD, qk, 2)
    _kl_check_dists(pe, qe, pt, qt, a + b, c + d)


@needs_torch
def test_kl_infinite_and_errors():
    pe, qe = ED.Pareto(ember.tensor([1.0, 2.0]), 2.0), ED.Pareto(ember.tensor([1.5, 1.5]), 3.0)
    pt, qt = TD.Pareto(torch.tensor([1.0, 2.0]), 2.0), TD.Pareto(torch.tensor([1.5, 1.5]), 3.0)
    np.testing.assert_allclose(_np(ED.kl_divergence(pe, qe)), _np(TD.kl_divergence(pt, qt)))
    lr = ED.LowRankMultivariateNormal(ember.zeros(3), ember.ones(3, 1), ember.ones(3))
    lr2 = ED.LowRankMultivariateNormal(ember.zeros(2), ember.ones(2, 1), ember.ones(2))
    mvn2 = ED.MultivariateNormal(ember.zeros(2), ember.eye(2))
    tlr = TD.LowRankMultivariateNormal(torch.zeros(3), torch.ones(3, 1), torch.ones(3))
    tlr2 = TD.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), torch.ones(2))
    tmvn2 = TD.MultivariateNormal(torch.zeros(2), torch.eye(2))
    for (a, b), (c, d) in (((lr, lr2), (tlr, tlr2)), ((lr, mvn2), (tlr, tmvn2))):
        with pytest.raises(ValueError) as et:
            TD.kl_divergence(c, d)
        with pytest.raises(ValueError) as ee:
            ED.kl_divergence(a, b)
        assert str(ee.value) == str(et.value)


# ------------------------------------------------------------------------ sampling statistics
STAT_CASES = [
    ("StudentT", {"df": [5.0, 9.0], "loc": [0.5, -1.0], "scale": [1.0, 2.0]}),
    ("Cauchy", None),
    ("HalfNormal", {"scale": [0.5, 2.0]}),
    ("HalfCauchy", None),
    ("Gumbel", {"loc": [0.5, -1.0], "scale": [1.0, 2.0]}),
    ("Weibull", {"scale": [1.0, 2.0], "concentration": [0.8, 3.0]}),
    ("Pareto", {"scale": [1.0, 2.0], "alpha": [5.0, 8.0]}),
    ("Chi2", {"df": [0.8, 6.0]}),
    ("FisherSnedecor", {"df1": [4.0, 10.0], "df2": [12.0, 20.0]}),
    ("Geometric", {"probs": [0.2, 0.7]}),
    ("NegativeBinomial", {"total_count": [3.0, 10.0], "probs": [0.3, 0.6]}),
    ("Multinomial", {"total_count": 6, "probs": [[0.2, 0.3, 0.5]]}),
    (
        "LowRankMultivariateNormal",
        {"loc": [1.0, -1.0], "cov_factor": [[1.0], [0.5]], "cov_diag": [0.5, 1.0]},
    ),
    ("ContinuousBernoulli", {"probs": [0.2, 0.5, 0.9]}),
    ("VonMises", {"loc": [0.5, -1.0], "concentration": [4.0, 20.0]}),
    ("Kumaraswamy", {"concentration1": [0.8, 2.0], "concentration0": [1.5, 3.0]}),
    ("InverseGamma", {"concentration": [5.0, 8.0], "rate": [1.0, 2.0]}),
    ("Wishart", {"df": [5.0], "covariance_matrix": [[[1.0, 0.3], [0.3, 0.5]]]}),
]


@pytest.mark.parametrize("cls_name,params", STAT_CASES, ids=[c[0] for c in STAT_CASES])
def test_sample_statistics(cls_name, params):
    ember.manual_seed(0)
    n = 20000
    if params is None:  # no finite moments: compare quantiles with the cdf
        d = getattr(ED, cls_name)(
            *[ember.tensor([0.5, 2.0], dtype=ember.float64)] * (2 if cls_name == "Cauchy" else 1)
        )
        x = d.sample((n,))
        for q in (0.25, 0.5, 0.75):
            qs = d.icdf(ember.tensor(q, dtype=ember.float64))
            frac = _np((x <= qs).double().mean(0))
            np.testing.assert_allclose(frac, q, atol=0.015)
        return
    kw = {
        k: v if isinstance(v, int) else ember.tensor(v, dtype=ember.float64)
        for k, v in params.items()
    }
    d = getattr(ED, cls_name)(**kw)
    if cls_name == "VonMises":  # circular moments
        ang = _np(d.sample((n,))) - _np(d.loc)
        np.testing.assert_allclose(1 - np.cos(ang).mean(0), _np(d.variance), rtol=0.05)
        return
    _check_sample_moments(d, n, var_rtol=0.12)


def test_lkj_cholesky_samples():
    ember.manual_seed(0)
    eta = np.array([0.5, 2.0])
    d = ED.LKJCholesky(4, ember.tensor(eta, dtype=ember.float64))
    L = d.sample((20000,))
    assert tuple(L.shape) == (20000, 2, 4, 4)
    assert bool(ED.constraints.corr_cholesky.check(L).all())
    C = _np(L @ L.mT)
    # every off-diagonal correlation of LKJ(eta) in D dims: mean 0, variance 1 / (2 eta + D - 1)
    for i, j in ((0, 1), (1, 3), (2, 3)):
        np.testing.assert_allclose(C[..., i, j].mean(0), 0.0, atol=0.02)
        np.testing.assert_allclose(C[..., i, j].var(0), 1 / (2 * eta + 3), rtol=0.05)


@needs_torch
def test_lkj_and_wishart_errors():
    _errs(lambda: ED.LKJCholesky(1), lambda: TD.LKJCholesky(1))
    for df in (1.0, [1.0, 5.0]):
        _errs(
            lambda df=df: ED.Wishart(ember.tensor(df), ember.eye(3)),
            lambda df=df: TD.Wishart(torch.tensor(df), torch.eye(3)),
        )
    _errs(lambda: ED.Wishart(1, ember.eye(3)), lambda: TD.Wishart(1, torch.eye(3)))
    _errs(lambda: ED.Wishart(4.0), lambda: TD.Wishart(4.0))
    _errs(lambda: ED.Wishart(4.0, ember.ones(3)), lambda: TD.Wishart(4.0, torch.ones(3)))
    _errs(
        lambda: ED.Wishart(4.0, ember.eye(3)).log_prob(-ember.eye(3)),
        lambda: TD.Wishart(4.0, torch.eye(3)).log_prob(-torch.eye(3)),
    )


def test_relaxed_samples_approach_discrete_at_low_temperature():
    ember.manual_seed(0)
    p = ember.tensor([0.2, 0.7], dtype=ember.float64)
    x = _np(ED.RelaxedBernoulli(ember.tensor(0.05, dtype=ember.float64), probs=p).sample((20000,)))
    np.testing.assert_allclose((x > 0.5).mean(0), [0.2, 0.7], atol=0.015)
    probs = ember.tensor([0.1, 0.3, 0.6], dtype=ember.float64)
    y = _np(ED.RelaxedOneHotCategorical(ember.tensor(0.05), probs).sample((20000,)))
    np.testing.assert_allclose(y.sum(-1), 1.0, atol=1e-9)
    np.testing.assert_allclose(
        np.bincount(y.argmax(-1), minlength=3) / 20000, _np(probs), atol=0.015
    )


def test_rsample_pathwise_gradients():
    """d/dtheta E[x] by rsample matches the analytic derivative of the mean."""
    ember.manual_seed(2)
    n = 40000
    checks = [
        (ED.HalfNormal, (1.5,), lambda s: (math.sqrt(2 / math.pi),)),
        (ED.Gumbel, (0.5, 2.0), lambda lo, s: (1.0, 0.5772156649)),
        (
            ED.Weibull,
            (2.0, 1.5),
            lambda s, c: (
                math.gamma(1 + 1 / c),
                s * math.gamma(1 + 1 / c) * (-1 / c**2) * _digamma(1 + 1 / c),
            ),
        ),
        (ED.Chi2, (3.0,), lambda df: (1.0,)),
        (ED.Kumaraswamy, (2.0, 3.0), None),
        (ED.StudentT, (6.0, 0.5, 2.0), lambda df, lo, s: (0.0, 1.0, 0.0)),
        (ED.InverseGamma, (4.0, 2.0), lambda a, b: (-b / (a - 1) ** 2, 1 / (a - 1))),
        # E[X] = df * Sigma: d/d df of the mean of its 4 entries is mean(Sigma) = 3.4 / 4
        (
            lambda df: ED.Wishart(df, ember.tensor([[1.0, 0.7], [0.7, 1.0]], dtype=ember.float64)),
            (3.0,),
            lambda df: (0.85,),
        ),
    ]
    for cls, vals, grad_fn in checks:
        ps = [ember.tensor(v, dtype=ember.float64, requires_grad=True) for v in vals]
        cls(*ps).rsample((n,)).mean().backward()
        if grad_fn is None:  # Kumaraswamy: compare with a finite difference of the exact mean
            for i, p in enumerate(ps):
                h = 1e-5
                up = [
                    ember.tensor(v + (h if j == i else 0), dtype=ember.float64)
                    for j, v in enumerate(vals)
                ]
                dn = [
                    ember.tensor(v - (h if j == i else 0), dtype=ember.float64)
                    for j, v in enumerate(vals)
                ]
                fd = (float(cls(*up).mean) - float(cls(*dn).mean)) / (2 * h)
                assert float(p.grad) == pytest.approx(fd, abs=0.01), str(cls)
            continue
        for p, e in zip(ps, grad_fn(*vals)):
            assert float(p.grad) == pytest.approx(e, abs=0.03 * max(1, abs(e))), str(cls)


def _digamma(x):
    return float(ember.digamma(ember.tensor(x, dtype=ember.float64)))


# ------------------------------------------------------------------------ Gamma gradient
@needs_torch
def test_standard_gamma_grad_against_torch_and_finite_differences():
    from ember.distributions.gamma_sampling import _standard_gamma_grad

    g = np.random.default_rng(0)
    a = np.repeat(np.geomspace(0.1, 100, 30), 20)
    x = g.gamma(a)
    x = np.concatenate([x, [0.5, 2.0, 2.0 + 1e-9, 1e-8, 40.0]])
    a = np.concatenate([a, [1.0, 1.0, 1.0, 0.3, 8.0]])
    ours = _np(_standard_gamma_grad(ember.tensor(a), ember.tensor(x)))
    theirs = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    # torch's closed-form approximation is itself off the exact value by up to ~1e-3
    rel = np.abs(ours - theirs) / np.abs(theirs)
    assert rel.max() < 2e-3
    assert np.median(rel) < 1e-4
    # exact: -(dP/dalpha) / density, with dP/dalpha by central differences in float64
    ta, tx = torch.tensor(a), torch.tensor(x)
    h = 1e-6 * ta
    dp = (torch.special.gammainc(ta + h, tx) - torch.special.gammainc(ta - h, tx)) / (2 * h)
    log_pdf = (ta - 1) * tx.log() - tx - torch.lgamma(ta)
    exact = (-dp * torch.exp(-log_pdf)).numpy()
    # (the difference quotient is meaningless where P(alpha, x) is within 1e-6 of 1)
    ok = (1 - torch.special.gammainc(ta, tx)).numpy() > 1e-6
    np.testing.assert_allclose(ours[ok], exact[ok], rtol=2e-5)
    # float32 in, float32 out; broadcasting like torch
    r = _standard_gamma_grad(ember.tensor([[1.0], [2.0]]), ember.tensor([0.5, 1.5, 3.0]))
    assert r.dtype == ember.float32 and tuple(r.shape) == (2, 3)


def test_gamma_rsample_gradient_is_analytic_and_unbiased():
    ember.manual_seed(4)
    for a0 in (0.2, 1.0, 5.0, 60.0):
        alpha = ember.tensor(a0, dtype=ember.float64, requires_grad=True)
        ED.Gamma(alpha, 1.0).rsample((30000,)).mean().backward()
        assert float(alpha.grad) == pytest.approx(1.0, rel=0.03)
    # Beta and Dirichlet through it: E[x_0] = a0 / sum(a)
    c = ember.tensor([0.5, 1.5, 3.0], dtype=ember.float64, requires_grad=True)
    ED.Dirichlet(c).rsample((30000,))[:, 0].mean().backward()
    expect = np.array([5.0 - 0.5, -0.5, -0.5]) / 25
    np.testing.assert_allclose(_np(c.grad), expect, atol=0.006)


# ------------------------------------------------------------------------ transforms
T_CASES = [
    ("PowerTransform", lambda m, T: T.PowerTransform(m.tensor(2.5, dtype=m.float64)), "pos"),
    ("TanhTransform", lambda m, T: T.TanhTransform(), "real"),
    ("SoftplusTransform", lambda m, T: T.SoftplusTransform(), "real"),
    ("AbsTransform", lambda m, T: T.AbsTransform(), "pos"),
    ("StickBreakingTransform", lambda m, T: T.StickBreakingTransform(), "real"),
    ("SoftmaxTransform", lambda m, T: T.SoftmaxTransform(), "real"),
    ("LowerCholeskyTransform", lambda m, T: T.LowerCholeskyTransform(), "mat"),
    ("PositiveDefiniteTransform", lambda m, T: T.PositiveDefiniteTransform(), "mat"),
    ("CorrCholeskyTransform", lambda m, T: T.CorrCholeskyTransform(), "real6"),
    (
        "ComposeTransform",
        lambda m, T: T.ComposeTransform(
            [
                T.ExpTransform(),
                T.AffineTransform(1.0, 2.0),
                T.PowerTransform(m.tensor(0.5, dtype=m.float64)),
            ]
        ),
        "real",
    ),
    ("IndependentTransform", lambda m, T: T.IndependentTransform(T.ExpTransform(), 1), "real"),
    ("ReshapeTransform", lambda m, T: T.ReshapeTransform((2, 3), (6,)), "real"),
    (
        "CatTransform",
        lambda m, T: T.CatTransform(
            [T.ExpTransform(), T.AffineTransform(0.0, 3.0)], dim=-1, lengths=[1, 2]
        ),
        "real",
    ),
    (
        "StackTransform",
        lambda m, T: T.StackTransform(
            [T.ExpTransform(), T.TanhTransform(), T.SigmoidTransform()], dim=-1
        ),
        "real",
    ),
]


@needs_torch
@pytest.mark.parametrize("name,build,kind", T_CASES, ids=[c[0] for c in T_CASES])
def test_transforms_match_torch(name, build, kind):
    import torch.distributions.transforms as TT

    te, tt = build(ember, ED.transforms), build(torch, TT)
    x = {
        "pos": _pos(4, 3),
        "real": R.normal(size=(4, 2, 3)),
        "mat": R.normal(size=(2, 3, 3)),
        "real6": R.normal(size=(2, 6)) * 0.7,
    }[kind]
    xe = ember.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ye, yt = te(xe), tt(xt)
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=1e-10, atol=1e-12)
    assert te.bijective == tt.bijective
    assert te.domain.event_dim == tt.domain.event_dim
    assert te.codomain.event_dim == tt.codomain.event_dim
    assert tuple(te.forward_shape(tuple(x.shape))) == tuple(tt.forward_shape(tuple(x.shape)))
    y = _np(yt)
    if name != "SoftmaxTransform":
        ie = te.inv(ember.tensor(y))
        it = tt.inv(torch.tensor(y))
        np.testing.assert_allclose(_np(ie), _np(it), rtol=1e-8, atol=1e-10)
        if tt.bijective:
            np.testing.assert_allclose(_np(ie), x, rtol=1e-7, atol=1e-9)
    if name in (
        "SoftmaxTransform",
        "LowerCholeskyTransform",
        "PositiveDefiniteTransform",
        "AbsTransform",
    ):
        return
    le = te.log_abs_det_jacobian(xe, ye)
    lt = tt.log_abs_det_jacobian(xt, yt)
    assert tuple(le.shape) == tuple(lt.shape)
    np.testing.assert_allclose(_np(le), _np(lt), rtol=1e-9, atol=1e-11)
    if not lt.requires_grad:
        return
    up = R.uniform(0.5, 1.5, tuple(lt.shape))
    (ge,) = ember.autograd.grad(le, [xe], ember.tensor(up))
    (gt,) = torch.autograd.grad(lt, [xt], torch.tensor(up))
    np.testing.assert_allclose(_np(ge), _np(gt), rtol=1e-8, atol=1e-10)


def test_transform_reprs_and_caching():
    T = ED.transforms
    assert (
        repr(T.ComposeTransform([T.ExpTransform()])) == "ComposeTransform(\n    ExpTransform()\n)"
    )
    assert repr(T.TanhTransform().codomain) == "Interval(lower_bound=-1.0, upper_bound=1.0)"
    t = T.ExpTransform(cache_size=1)
    x = ember.tensor([0.5])
    y = t(x)
    assert t.inv(y) is x
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    with pytest.raises(ValueError, match="different numbers of elements"):
        T.ReshapeTransform((2, 3), (5,))


# ------------------------------------------------------------------------ validation
BAD = [
    ("studentt_df", lambda m, D: D.StudentT(m.tensor([-1.0]))),
    ("cauchy_scale", lambda m, D: D.Cauchy(0.0, m.tensor([0.0]))),
    ("halfcauchy_scale", lambda m, D: D.HalfCauchy(m.tensor([-1.0]))),
    ("halfnormal_value", lambda m, D: D.HalfNormal(m.tensor([1.0])).log_prob(m.tensor([-1.0]))),
    ("gumbel_scale", lambda m, D: D.Gumbel(m.tensor([0.0]), m.tensor([-2.0]))),
    ("weibull_conc", lambda m, D: D.Weibull(m.tensor([1.0]), m.tensor([-1.0]))),
    ("pareto_value", lambda m, D: D.Pareto(m.tensor([2.0]), 1.0).log_prob(m.tensor([1.0]))),
    ("chi2_df", lambda m, D: D.Chi2(m.tensor([0.0]))),
    ("fisher_df", lambda m, D: D.FisherSnedecor(m.tensor([1.0]), m.tensor([-1.0]))),
    ("geometric_zero", lambda m, D: D.Geometric(m.tensor([0.0, 0.5]))),
    ("geometric_both", lambda m, D: D.Geometric(m.tensor([0.5]), m.tensor([0.0]))),
    ("geometric_value", lambda m, D: D.Geometric(m.tensor([0.5])).log_prob(m.tensor([1.5]))),
    ("negbin_probs", lambda m, D: D.NegativeBinomial(3.0, m.tensor([1.0]))),
    ("negbin_count", lambda m, D: D.NegativeBinomial(m.tensor([-1.0]), m.tensor([0.5]))),
    ("multinomial_count", lambda m, D: D.Multinomial(2.5, m.ones(2))),
    ("multinomial_value", lambda m, D: D.Multinomial(2, m.ones(2)).log_prob(m.tensor([3.0, 0.0]))),
    (
        "lowrank_factor_dim",
        lambda m, D: D.LowRankMultivariateNormal(m.zeros(3), m.zeros(3), m.ones(3)),
    ),
    (
        "lowrank_factor",
        lambda m, D: D.LowRankMultivariateNormal(m.zeros(3), m.zeros(2, 1), m.ones(3)),
    ),
    (
        "lowrank_diag",
        lambda m, D: D.LowRankMultivariateNormal(m.zeros(3), m.zeros(3, 1), m.ones(2)),
    ),
    (
        "lowrank_batch",
        lambda m, D: D.LowRankMultivariateNormal(m.zeros(2, 3), m.zeros(3, 3, 1), m.ones(3)),
    ),
    (
        "lowrank_diag_pos",
        lambda m, D: D.LowRankMultivariateNormal(m.zeros(3), m.zeros(3, 1), -m.ones(3)),
    ),
    (
        "lowrank_0d",
        lambda m, D: D.LowRankMultivariateNormal(m.tensor(0.0), m.zeros(3, 1), m.ones(3)),
    ),
    ("mixture_not_cat", lambda m, D: D.MixtureSameFamily(m.ones(2), D.Normal(0.0, 1.0))),
    ("mixture_not_dist", lambda m, D: D.MixtureSameFamily(D.Categorical(m.ones(2)), 3)),
    (
        "mixture_batch",
        lambda m, D: D.MixtureSameFamily(D.Categorical(m.ones(3, 2)), D.Normal(m.zeros(4, 2), 1.0)),
    ),
    (
        "mixture_k",
        lambda m, D: D.MixtureSameFamily(D.Categorical(m.ones(3)), D.Normal(m.zeros(2), 1.0)),
    ),
    ("relaxed_both", lambda m, D: D.RelaxedBernoulli(m.tensor(1.0))),
    ("relaxed_probs", lambda m, D: D.RelaxedBernoulli(m.tensor(1.0), m.tensor([1.5]))),
    (
        "relaxed_value",
        lambda m, D: D.RelaxedBernoulli(m.tensor(1.0), m.tensor([0.5])).log_prob(m.tensor([1.5])),
    ),
    (
        "relaxed_onehot_simplex",
        lambda m, D: D.RelaxedOneHotCategorical(m.tensor(1.0), m.tensor([0.5, -0.5])),
    ),
    ("contbern_explicit", lambda m, D: D.ContinuousBernoulli(m.tensor([1.5]), validate_args=True)),
    (
        "contbern_value",
        lambda m, D: D.ContinuousBernoulli(m.tensor([0.3])).log_prob(m.tensor([1.5])),
    ),
    ("vonmises_conc", lambda m, D: D.VonMises(m.tensor([0.0]), m.tensor([-1.0]))),
    (
        "kumaraswamy_value",
        lambda m, D: D.Kumaraswamy(m.tensor([1.0]), m.tensor([2.0])).log_prob(m.tensor([1.5])),
    ),
    (
        "logisticnormal_value",
        lambda m, D: D.LogisticNormal(m.zeros(2), m.ones(2)).log_prob(m.tensor([0.5, 0.6, 0.2])),
    ),
    ("inversegamma_rate", lambda m, D: D.InverseGamma(m.tensor([1.0]), m.tensor([0.0]))),
]


@pytest.mark.parametrize("name,build", BAD, ids=[b[0] for b in BAD])
def test_validation_errors_match_torch(name, build):
    _errs(lambda: build(ember, ED), lambda: build(torch, TD))


def test_new_families_are_exported_like_torch():
    if TD is None:
        pytest.skip("torch missing")
    missing = {n for n in TD.__all__ if not hasattr(ED, n)}
    assert not missing, missing


def _mixed_params(name, g):
    n = 3
    return {
        "Beta": {"concentration1": g.uniform(0.5, 3, n), "concentration0": g.uniform(0.5, 3, n)},
        "ContinuousBernoulli": {"probs": g.uniform(0.1, 0.9, n)},
        "Exponential": {"rate": g.uniform(0.5, 3, n)},
        "Gamma": {"concentration": g.uniform(0.5, 3, n), "rate": g.uniform(0.5, 3, n)},
        "Gumbel": {"loc": g.normal(size=n), "scale": g.uniform(0.5, 3, n)},
        "Laplace": {"loc": g.normal(size=n), "scale": g.uniform(0.5, 3, n)},
        "Normal": {"loc": g.normal(size=n), "scale": g.uniform(0.5, 3, n)},
        # alpha below 1, between 1 and 2, above 2: finite and infinite moments
        "Pareto": {"scale": g.uniform(0.2, 1.0, n), "alpha": np.array([0.7, 1.5, 3.5])},
        # one interval inside (0, 1), one crossing 0, one above 1: finite and infinite KLs
        "Uniform": {"low": np.array([0.1, -0.2, 1.2]), "high": np.array([0.8, 0.5, 2.5])},
        "Poisson": {"rate": g.uniform(0.5, 3, n)},
        "Bernoulli": {"probs": g.uniform(0.1, 0.9, n)},
        "Binomial": {"total_count": np.full(n, 5.0), "probs": g.uniform(0.1, 0.9, n)},
    }[name]


MIXED_KL = [
    ("Bernoulli", "Poisson"),
    *[
        ("Beta", q)
        for q in ("ContinuousBernoulli", "Exponential", "Gamma", "Normal", "Pareto", "Uniform")
    ],
    *[("ContinuousBernoulli", q) for q in ("Exponential", "Normal", "Pareto", "Uniform")],
    *[
        ("Exponential", q)
        for q in ("Beta", "ContinuousBernoulli", "Gamma", "Gumbel", "Normal", "Pareto", "Uniform")
    ],
    *[
        ("Gamma", q)
        for q in (
            "Beta",
            "ContinuousBernoulli",
            "Exponential",
            "Gumbel",
            "Normal",
            "Pareto",
            "Uniform",
        )
    ],
    *[
        (p, q)
        for p in ("Gumbel", "Laplace")
        for q in (
            "Beta",
            "ContinuousBernoulli",
            "Exponential",
            "Gamma",
            "Normal",
            "Pareto",
            "Uniform",
        )
    ],
    *[
        ("Normal", q)
        for q in (
            "Beta",
            "ContinuousBernoulli",
            "Exponential",
            "Gamma",
            "Gumbel",
            "Laplace",
            "Pareto",
            "Uniform",
        )
    ],
    *[
        ("Pareto", q)
        for q in ("Beta", "ContinuousBernoulli", "Exponential", "Gamma", "Normal", "Uniform")
    ],
    ("Poisson", "Bernoulli"),
    ("Poisson", "Binomial"),
    *[
        ("Uniform", q)
        for q in (
            "Beta",
            "ContinuousBernoulli",
            "Exponential",
            "Gamma",
            "Gumbel",
            "Normal",
            "Pareto",
        )
    ],
]


@needs_torch
@pytest.mark.parametrize("p_kind,q_kind", MIXED_KL, ids=[f"{p}-{q}" for p, q in MIXED_KL])
def test_kl_mixed_pairs_match_torch(p_kind, q_kind):
    g = np.random.default_rng(len(p_kind) * 31 + len(q_kind))
    pp, qp = _mixed_params(p_kind, g), _mixed_params(q_kind, g)
    pe, a = _kl_build(ember, ED, p_kind, pp)
    qe, b = _kl_build(ember, ED, q_kind, qp)
    pt, c = _kl_build(torch, TD, p_kind, pp)
    qt, d = _kl_build(torch, TD, q_kind, qp)
    _kl_check_dists(pe, qe, pt, qt, a + b, c + d, rtol=1e-8)


@needs_torch
def test_every_torch_kl_pair_among_ember_families_is_registered():
    from ember.distributions.kl import _KL_REGISTRY as EMBER_KL
    from torch.distributions.kl import _KL_REGISTRY

    ours = {(p.__name__, q.__name__) for p, q in EMBER_KL}
    missing = {
        (p.__name__, q.__name__)
        for p, q in _KL_REGISTRY
        if hasattr(ED, p.__name__) and hasattr(ED, q.__name__)
    } - ours
    assert not missing, missing


# ------------------------------------------------------------------------ GeneralizedPareto
@needs_torch
@pytest.mark.parametrize(
    "what", ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "mode", "support"]
)
def test_generalized_pareto_matches_torch(what):
    # torch 2.13's GeneralizedPareto fails in float64 (it compares with a float32 zero): float32
    c = np.array([0.0, 0.5, 1.0, 1.5, -0.5, 0.2], dtype=np.float32)
    loc = np.array([0.0, 1.0, -1.0, 0.5, 0.0, 2.0], dtype=np.float32)
    scale = np.array([2.0, 1.0, 0.5, 1.5, 2.0, 1.0], dtype=np.float32)
    x = loc + scale * np.array([0.25, 0.5, 1.0, 2.0, 1.9, 3.0], dtype=np.float32)
    q = np.array([0.1, 0.3, 0.5, 0.7, 0.9, 0.99], dtype=np.float32)
    out = {}
    for lib, m, D in (("e", ember, ED), ("t", torch, TD)):
        ps = [m.tensor(v, requires_grad=True) for v in (loc, scale, c)]
        d = D.GeneralizedPareto(*ps)
        if what == "support":
            out[lib] = (repr(d.support).replace("ember", "torch"), None)
            continue
        r = getattr(d, what)
        if callable(r):
            r = r(m.tensor(q if what == "icdf" else x)) if what != "entropy" else r()
        g = None
        if r.requires_grad:
            up = np.where(np.isfinite(_np(r)), np.linspace(0.5, 1.5, 6), 0.0).astype(np.float32)
            g = m.autograd.grad(r, ps, m.tensor(up), allow_unused=True)
        out[lib] = (r, g)
    (re_, ge), (rt, gt) = out["e"], out["t"]
    if what == "support":
        assert re_ == rt
        return
    assert re_.dtype == ember.float32
    np.testing.assert_allclose(_np(re_), _np(rt), rtol=2e-6, atol=1e-6)
    for a, b in zip(ge or (), gt or ()):
        if b is None:
            assert a is None or np.allclose(_np(a), 0)
            continue
        keep = ~np.isnan(_np(b))
        np.testing.assert_allclose(_np(a)[keep], _np(b)[keep], rtol=2e-5, atol=2e-6)


def test_generalized_pareto_sampling_and_validation():
    ember.manual_seed(0)
    d = ED.GeneralizedPareto(
        ember.tensor([0.0, 1.0], dtype=ember.float64),
        ember.tensor([1.0, 2.0], dtype=ember.float64),
        ember.tensor([0.1, -0.3], dtype=ember.float64),
    )
    x = d.sample((20000,))
    assert tuple(x.shape) == (20000, 2) and tuple(d.expand((3, 2)).sample().shape) == (3, 2)
    mean, var = _np(d.mean), _np(d.variance)
    np.testing.assert_array_less(np.abs(_np(x).mean(0) - mean), 6 * np.sqrt(var / 20000))
    assert bool(d.support.check(x).all())
    with pytest.raises(ValueError, match="to be within the support"):
        d.log_prob(ember.tensor([-1.0, 0.0], dtype=ember.float64))
    with pytest.raises(ValueError, match="Expected parameter scale"):
        ED.GeneralizedPareto(0.0, -1.0, 0.1)


# ------------------------------------------------------------------------ straight-through
@needs_torch
def test_one_hot_categorical_straight_through():
    logits = R.normal(size=(2, 4))
    up = R.normal(size=(2, 4))
    res = {}
    for lib, m, D in (("e", ember, ED), ("t", torch, TD)):
        lg = m.tensor(logits, requires_grad=True)
        d = D.OneHotCategoricalStraightThrough(logits=lg)
        assert d.has_rsample
        s = d.rsample((3,))
        assert tuple(s.shape) == (3, 2, 4)
        # forward: an exact one-hot sample; backward: the gradient of probs
        assert np.allclose(_np(s).sum(-1), 1) and set(np.unique(_np(s))) <= {0.0, 1.0}
        (g,) = m.autograd.grad((s * m.tensor(up)).sum(), [lg])
        res[lib] = g
    np.testing.assert_allclose(_np(res["e"]), _np(res["t"]), rtol=1e-9)


# ------------------------------------------------------------------------ constraint registry
REGISTRY_CASES = [
    ("real", lambda C, m: C.real),
    ("positive", lambda C, m: C.positive),
    ("nonnegative", lambda C, m: C.nonnegative),
    ("greater_than", lambda C, m: C.greater_than(2.0)),
    ("less_than", lambda C, m: C.less_than(3.0)),
    ("unit_interval", lambda C, m: C.unit_interval),
    ("interval", lambda C, m: C.interval(-1.0, 2.0)),
    ("interval_tensor", lambda C, m: C.interval(m.tensor(0.0), m.tensor(1.0))),
    ("half_open", lambda C, m: C.half_open_interval(0.0, 1.0)),
    ("simplex", lambda C, m: C.simplex),
    ("corr_cholesky", lambda C, m: C.corr_cholesky),
    ("independent", lambda C, m: C.independent(C.positive, 1)),
    ("lower_cholesky", lambda C, m: C.lower_cholesky),
    ("positive_definite", lambda C, m: C.positive_definite),
    ("cat", lambda C, m: C.cat([C.real, C.positive], dim=-1, lengths=[2, 1])),
    ("stack", lambda C, m: C.stack([C.real, C.positive, C.unit_interval], dim=-1)),
]


@needs_torch
@pytest.mark.parametrize("fn", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name,build", REGISTRY_CASES, ids=[c[0] for c in REGISTRY_CASES])
def test_biject_to_and_transform_to_match_torch(fn, name, build):
    ce, ct = build(ED.constraints, ember), build(TD.constraints, torch)
    fe, ft = getattr(ED, fn), getattr(TD, fn)
    try:
        tt = ft(ct)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as ee:
            fe(ce)
        assert str(ee.value) == str(e)
        return
    te = fe(ce)
    assert repr(te).replace("ember", "torch") == repr(tt)
    shape = {
        "corr_cholesky": (2, 6),
        "lower_cholesky": (2, 3, 3),
        "positive_definite": (2, 3, 3),
    }.get(name, (4, 3))
    x = R.normal(size=shape)
    ye, yt = te(ember.tensor(x)), tt(torch.tensor(x))
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=1e-10, atol=1e-12)
    assert bool(ce.check(ye).all())


@needs_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_float32_stays_float32(case):
    cls_name, params, value = CASES[case]
    out = {}
    for lib, m, D in (("e", ember, ED), ("t", torch, TD)):
        kw = {
            k: v if isinstance(v, (int, float)) else m.tensor(v, dtype=m.float32)
            for k, v in params.items()
        }
        d = getattr(D, cls_name)(**kw)
        s = d.sample((2,))
        lp = d.log_prob(m.tensor(value(), dtype=m.float32))
        r = d.rsample((2,)).dtype if d.has_rsample else None
        out[lib] = [str(t).replace("ember", "torch") for t in (s.dtype, lp.dtype, r)]
    assert out["e"] == out["t"]


# ------------------------------------------------------------------------ exponential families
@needs_torch
def test_exponential_family_entropy_and_bregman_kl():
    g = np.random.default_rng(5)
    fams = [
        ("Normal", {"loc": g.normal(size=3), "scale": g.uniform(0.5, 2, 3)}),
        ("Gamma", {"concentration": g.uniform(0.5, 3, 3), "rate": g.uniform(0.5, 2, 3)}),
        ("Exponential", {"rate": g.uniform(0.5, 2, 3)}),
        ("Bernoulli", {"probs": g.uniform(0.1, 0.9, 3)}),
        ("ContinuousBernoulli", {"probs": np.array([0.2, 0.4995, 0.8])}),
        ("Poisson", {"rate": g.uniform(0.5, 3, 3)}),
        ("Beta", {"concentration1": g.uniform(0.5, 3, 3), "concentration0": g.uniform(0.5, 3, 3)}),
        ("Dirichlet", {"concentration": g.uniform(0.5, 3, (2, 3))}),
    ]
    for name, params in fams:
        de = getattr(ED, name)(**{k: ember.tensor(v) for k, v in params.items()})
        dt = getattr(TD, name)(**{k: torch.tensor(v) for k, v in params.items()})
        assert isinstance(de, ED.ExponentialFamily) == isinstance(dt, TD.ExponentialFamily)
        try:
            ht = TD.ExponentialFamily.entropy(dt)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                ED.ExponentialFamily.entropy(de)
            continue
        he = ED.ExponentialFamily.entropy(de)
        np.testing.assert_allclose(_np(he), _np(ht), rtol=1e-9, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(_np(he), _np(de.entropy()), rtol=1e-9, atol=1e-12, err_msg=name)
        # the Bregman divergence of the log normalizer equals the registered closed form
        from ember.distributions.kl import _kl_expfamily_expfamily

        de2 = getattr(ED, name)(**{k: ember.tensor(v[::-1].copy()) for k, v in params.items()})
        np.testing.assert_allclose(
            _np(_kl_expfamily_expfamily(de, de2)),
            _np(ED.kl_divergence(de, de2)),
            rtol=1e-7,
            atol=1e-10,
            err_msg=name,
        )
    with pytest.raises(NotImplementedError) as et:
        TD.kl_divergence(TD.Normal(0.0, 1.0), TD.Poisson(1.0))
    with pytest.raises(NotImplementedError) as ee:
        ED.kl_divergence(ED.Normal(0.0, 1.0), ED.Poisson(1.0))
    assert str(ee.value) == str(et.value)


@needs_torch
def test_wishart_kl_matches_closed_form():
    S = np.array([[2.0, 0.5], [0.5, 1.0]])
    Sq = np.array([[1.5, -0.2], [-0.2, 0.8]])
    nu_p, nu_q = np.array([3.0, 4.5]), 5.0

    def closed(m, nup, Sp):
        # KL(W(nup, Sp) || W(nu_q, Sq)), evaluated with torch as a calculator
        Sq_ = m.tensor(Sq)

        def ld(M):
            return m.linalg.slogdet(M)[1]

        psi = sum(m.digamma(nup / 2 - i / 2) for i in range(2))
        trace = m.linalg.solve(Sq_, Sp).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (
            nu_q / 2 * (ld(Sq_) - ld(Sp))
            + nup / 2 * (trace - 2)
            + m.mvlgamma(m.tensor(nu_q / 2), 2)
            - m.mvlgamma(nup / 2, 2)
            + (nup - nu_q) / 2 * psi
        )

    df = ember.tensor(nu_p, requires_grad=True)
    Se = ember.tensor(S, requires_grad=True)
    kl = ED.kl_divergence(ED.Wishart(df, Se), ED.Wishart(ember.tensor(nu_q), ember.tensor(Sq)))
    dft = torch.tensor(nu_p, requires_grad=True)
    St = torch.tensor(S, requires_grad=True)
    ref = closed(torch, dft, St)
    np.testing.assert_allclose(_np(kl), _np(ref), rtol=1e-10)
    up = np.array([0.7, 1.3])
    ge = ember.autograd.grad(kl, [df, Se], ember.tensor(up))
    gt = torch.autograd.grad(ref, [dft, St], torch.tensor(up))
    for a, b in zip(ge, gt):
        # the covariance gradient is compared symmetrized (a symmetric input's two triangles)
        a, b = _np(a), _np(b)
        if a.ndim == 2:
            a, b = a + a.T, b + b.T
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
