"""Parity regressions found by the seventy-fourth wave, a seeded random fuzz of torch.distributions
(several thousand cases: a random class, parameter shapes from scalars to broadcast batches with
size-1 dims, edge values, both parametrizations, validate_args on and off; batch/event shapes,
support, moments, entropy, cdf/icdf, log_prob inside, on and outside the support with its
ValueError text, sample/rsample/expand shapes, log_prob/entropy/KL gradients, transforms and
TransformedDistribution with fixed-noise rsample gradients, Independent, MixtureSameFamily). It
found two root causes: ``linalg.cholesky`` let a NaN pivot through (OpenBLAS's potrf goes on past
it where reference LAPACK's, and torch's, stop), so ``MultivariateNormal``/``Wishart`` with a NaN
in the covariance built silently instead of raising torch's not-positive-definite LinAlgError,
and ``cholesky_ex`` reported ``info=0``; and CorrCholeskyTransform/StickBreakingTransform's
``forward_shape``/``inverse_shape`` made an ``ember.Size`` of a plain tuple (torch keeps the
caller's type) and CorrCholesky's raised other texts than torch's; ``Wishart.expand`` expanded the
scale matrix before ``df`` (torch: df first), so a bad batch shape named other sizes. The mini-fuzz
at the end keeps the sweep running."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import assert_same, same_error
from harness import upstream as _up

NAN_COV = [[math.nan, 0.5, 0.0], [0.5, 3.0, 0.0], [0.0, 0.0, 3.0]]
NAN_OFFDIAG = [[3.0, math.nan, 0.0], [math.nan, 3.0, 0.0], [0.0, 0.0, 3.0]]


@pytest.mark.parametrize("a", [NAN_COV, NAN_OFFDIAG], ids=["diag", "offdiag"])
def test_cholesky_nan_pivot_is_a_failed_minor(a):
    # torch: info names the first NaN pivot (1, then 2); ember answered info=0
    t = torch.linalg.cholesky_ex(torch.tensor(a, dtype=torch.float64)).info
    e = ember.linalg.cholesky_ex(ember.tensor(a, dtype=ember.float64)).info
    assert_same(e, t)
    same_error(lambda T: T.linalg.cholesky(T.tensor(a, dtype=T.float64)), RuntimeError)


@pytest.mark.parametrize("name", ["MultivariateNormal", "Wishart"])
@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix"])
def test_nan_covariance_raises_linalg_error(name, param):
    # validate_args=False: the factorization itself must refuse the NaN matrix, as torch's does
    def build(T):
        m = T.tensor(NAN_COV, dtype=T.float64)
        first = T.zeros(3, dtype=T.float64) if name == "MultivariateNormal" else T.tensor(4.5)
        return getattr(T.distributions, name)(first, **{param: m}, validate_args=False)

    same_error(build, RuntimeError)


@pytest.mark.parametrize(
    "fn, shape",
    [("forward_shape", (2, 4)), ("inverse_shape", (3, 6))],
    ids=["not-triangular", "not-square"],
)
def test_corr_cholesky_shape_errors(fn, shape):
    # torch: "Input is not a flattened lower-diagonal number" / "Input is not square"; ember
    # answered with its _call's and its LowerCholesky-style texts
    same_error(lambda T: getattr(T.distributions.transforms.CorrCholeskyTransform(), fn)(shape))


@pytest.mark.parametrize(
    "name, fn, shape",
    [
        ("CorrCholeskyTransform", "forward_shape", (2, 3)),
        ("CorrCholeskyTransform", "inverse_shape", (2, 3, 3)),
        ("StickBreakingTransform", "forward_shape", (2, 3)),
        ("StickBreakingTransform", "inverse_shape", (2, 3)),
    ],
)
def test_shape_maps_keep_the_callers_type(name, fn, shape):
    # torch: a tuple in, a tuple out (and a Size in, a Size out); ember always made a Size
    for sh in (shape, "size"):
        got = []
        for T in (torch, ember):
            t = getattr(T.distributions.transforms, name)()
            got.append(getattr(t, fn)(T.Size(shape) if sh == "size" else sh))
        assert type(got[1]).__name__ == type(got[0]).__name__
        assert tuple(got[1]) == tuple(got[0])


@pytest.mark.parametrize("shape", [(2, 1), (4,)])
def test_wishart_expand_checks_df_first(shape):
    # torch expands df before the matrices, so a bad batch_shape names df's sizes ([3]); ember
    # expanded the scale matrix first and named [3, 2, 2]
    same_error(
        lambda T: T.distributions.Wishart(T.ones(3) * 3, T.eye(2)).expand(shape), RuntimeError
    )


# ------------------------------------------------------------------------------ the mini-fuzz
SHAPES = [(), (3,), (2, 3), (1, 3), (2, 1)]


def _pos(rng, sh):
    return rng.rand(*sh) + 0.5


def _shape(rng):
    return SHAPES[rng.randint(len(SHAPES))]


# name -> (parameters from rng, a value in the support for a batch shape)
SPECS = {
    "Normal": (lambda r: {"loc": r.randn(*_shape(r)), "scale": _pos(r, _shape(r))}, "real"),
    "Laplace": (lambda r: {"loc": r.randn(*_shape(r)), "scale": _pos(r, _shape(r))}, "real"),
    "Gumbel": (lambda r: {"loc": r.randn(*_shape(r)), "scale": _pos(r, _shape(r))}, "real"),
    "Cauchy": (lambda r: {"loc": r.randn(*_shape(r)), "scale": _pos(r, _shape(r))}, "real"),
    "LogNormal": (lambda r: {"loc": r.randn(*_shape(r)), "scale": _pos(r, _shape(r))}, "pos"),
    "Gamma": (lambda r: {"concentration": _pos(r, _shape(r)), "rate": _pos(r, _shape(r))}, "pos"),
    "Exponential": (lambda r: {"rate": _pos(r, _shape(r))}, "pos"),
    "Weibull": (
        lambda r: {"scale": _pos(r, _shape(r)), "concentration": _pos(r, _shape(r))},
        "pos",
    ),
    "Beta": (
        lambda r: {"concentration1": _pos(r, _shape(r)), "concentration0": _pos(r, _shape(r))},
        "unit",
    ),
    "StudentT": (lambda r: {"df": _pos(r, _shape(r)) + 2, "loc": r.randn(*_shape(r))}, "real"),
    "Bernoulli": (lambda r: {"logits": r.randn(*_shape(r))}, "bin"),
    "Geometric": (lambda r: {"probs": r.rand(*_shape(r)) * 0.8 + 0.1}, "count"),
    "Poisson": (lambda r: {"rate": _pos(r, _shape(r))}, "count"),
    "Categorical": (lambda r: {"logits": r.randn(*_shape(r), 4)}, "cat"),
    "Dirichlet": (lambda r: {"concentration": _pos(r, _shape(r) + (4,))}, "simplex"),
    "MultivariateNormal": (
        lambda r: {"loc": r.randn(*_shape(r), 3), "scale_tril": np.tril(r.rand(3, 3)) + np.eye(3)},
        "vec",
    ),
}


def _value(rng, kind, shape):
    if kind == "real":
        return rng.randn(*shape)
    if kind == "pos":
        return rng.rand(*shape) + 0.1
    if kind == "unit":
        return rng.rand(*shape) * 0.8 + 0.1
    if kind == "bin":
        return rng.randint(0, 2, shape).astype(float)
    if kind == "count":
        return rng.randint(0, 5, shape).astype(float)
    if kind == "cat":
        return rng.randint(0, 4, shape)
    if kind == "simplex":
        a = rng.rand(*shape) + 0.1
        return a / a.sum(-1, keepdims=True)
    return rng.randn(*shape)  # vec


def _one_case(seed):
    rng = np.random.RandomState(seed)
    name = sorted(SPECS)[rng.randint(len(SPECS))]
    make, kind = SPECS[name]
    kw = make(rng)
    va = bool(rng.rand() < 0.5)

    def run(T):
        leaves = {k: T.tensor(np.asarray(v, np.float64), requires_grad=True) for k, v in kw.items()}
        d = getattr(T.distributions, name)(**leaves, validate_args=va)
        shape = tuple(d.batch_shape) + tuple(d.event_shape)
        v = T.tensor(np.asarray(_value(np.random.RandomState(seed + 1), kind, shape)))
        lp = d.log_prob(v)
        ent = d.mean.sum() if name == "Poisson" else d.entropy()  # torch has no Poisson entropy
        loss = (lp * _up(T, lp)).sum() + (ent * _up(T, ent)).sum()
        grads = T.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        out = [lp, ent, d.mean, d.variance, *grads]
        shapes = (tuple(d.batch_shape), tuple(d.event_shape), tuple(d.sample((2, 1)).shape))
        return shapes, [t for t in out if t is not None]

    (ts, tv), (es, ev) = run(torch), run(ember)
    assert es == ts, (seed, name)
    assert len(ev) == len(tv), (seed, name)
    for e, t in zip(ev, tv):
        assert_same(e.detach(), t.detach(), atol=1e-8, rtol=1e-7, what=f"{name} seed={seed}")


def test_distributions_mini_fuzz():
    for seed in range(150):
        _one_case(seed)
