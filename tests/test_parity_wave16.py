"""Parity regressions found by the sixteenth wave, a class-by-class sweep of
torch.distributions (every distribution's shapes, supports, moments, entropy, cdf/icdf,
log_prob on valid and boundary values, sample shapes/dtypes/statistics, gradients, validation
errors, expand/repr, the kl_divergence registry, the composite distributions, transforms and
constraints; torch is the oracle): the mode of a Dirichlet (and so of a Beta) whose
concentrations are all below 1 (torch reports the first corner, ember picked the largest
concentration's), ``Distribution.sample_n``'s deprecation warning (torch's FutureWarning and
text), the construction and shape errors of the composite constraints (independent, cat,
stack, the mixture's support) and of Cat/StackTransform (torch's AssertionErrors and wording, where
ember raised ValueError or nothing and sliced a mismatched input silently), GeneralizedPareto's
log_prob at concentration -1 (a uniform density: NaN at the upper end of the support, and torch's
gradient), and what ember lacked: GeneralizedPareto.log_cdf/log_survival_function, the ``torch.distributions.log_normal`` module and
``distributions.utils.tril_matrix_to_vec``/``vec_to_tril_matrix`` (flattening the lower triangle
of a covariance factor, as Cholesky-parameterized models do)."""

from __future__ import annotations

import warnings

import ember
import ember.distributions as ED
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")


# ------------------------------------------------------------ Dirichlet / Beta mode below 1
@pytest.mark.parametrize(
    "conc",
    [
        [0.6, 0.7],
        [0.5, 0.9, 0.8],
        [[0.5, 0.7], [1.5, 2.0], [0.9, 0.3]],
        [[0.2, 0.4, 0.3], [0.5, 1.5, 1.5]],
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_mode_all_concentrations_below_one(conc, dtype):
    t = torch.distributions.Dirichlet(torch.tensor(conc, dtype=getattr(torch, dtype))).mode
    e = ED.Dirichlet(ember.tensor(conc, dtype=getattr(ember, dtype))).mode
    assert str(e.dtype).split(".")[-1] == dtype
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "c1, c0", [([0.6, 0.5, 0.3], [0.7, 0.5, 0.9]), ([0.5, 1.5, 0.8], [0.5, 0.5, 0.2])]
)
def test_beta_mode_both_concentrations_below_one(c1, c0):
    t = torch.distributions.Beta(torch.tensor(c1), torch.tensor(c0)).mode
    e = ED.Beta(ember.tensor(c1), ember.tensor(c0)).mode
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


# ------------------------------------------------------------------ sample_n's deprecation
def _recorded(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fn()
    return out, [(w.category, str(w.message)) for w in rec]


def test_sample_n_future_warning():
    t, tw = _recorded(lambda: torch.distributions.Normal(torch.zeros(2), 1.0).sample_n(3))
    e, ew = _recorded(lambda: ED.Normal(ember.zeros(2), 1.0).sample_n(3))
    assert ew == tw
    assert tuple(e.shape) == tuple(t.shape) == (3, 2)


# ---------------------------------------------------------------------- log_normal module
def test_log_normal_module():
    import ember.distributions.log_normal as lm

    assert lm.LogNormal is ED.LogNormal
    assert ED.log_normal is lm
    d = lm.LogNormal(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 0.5]))
    t = torch.distributions.log_normal.LogNormal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
    x = [0.5, 2.0]
    np.testing.assert_allclose(
        d.log_prob(ember.tensor(x)).numpy(), t.log_prob(torch.tensor(x)).numpy(), rtol=1e-6
    )


# ------------------------------------------------------- tril_matrix_to_vec / vec_to_tril_matrix
@pytest.mark.parametrize("diag", [-3, -1, 0, 1, 3])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_tril_matrix_to_vec_round_trip(diag, batch):
    from ember.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    from torch.distributions import utils as tu

    mat = np.random.default_rng(0).normal(size=batch + (4, 4))
    tv = tu.tril_matrix_to_vec(torch.tensor(mat), diag)
    ev = tril_matrix_to_vec(ember.tensor(mat), diag)
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    tm = tu.vec_to_tril_matrix(tv, diag)
    em = vec_to_tril_matrix(ev, diag)
    assert tuple(em.shape) == tuple(tm.shape)
    np.testing.assert_array_equal(em.numpy(), tm.numpy())


def test_tril_vec_gradients():
    from ember.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    from torch.distributions import utils as tu

    rng = np.random.default_rng(1)
    mat = rng.normal(size=(2, 3, 3))
    w = rng.uniform(0.5, 1.5, size=(2, 5))
    tm = torch.tensor(mat, requires_grad=True)
    em = ember.tensor(mat, requires_grad=True)
    (tu.tril_matrix_to_vec(tm, -1) * torch.tensor(w[:, :3])).sum().backward()
    (tril_matrix_to_vec(em, -1) * ember.tensor(w[:, :3])).sum().backward()
    np.testing.assert_array_equal(em.grad.numpy(), tm.grad.numpy())
    vec = rng.normal(size=(2, 6))
    tv = torch.tensor(vec, requires_grad=True)
    ev = ember.tensor(vec, requires_grad=True)
    gm = rng.uniform(0.5, 1.5, size=(2, 3, 3))
    (tu.vec_to_tril_matrix(tv) * torch.tensor(gm)).sum().backward()
    (vec_to_tril_matrix(ev) * ember.tensor(gm)).sum().backward()
    np.testing.assert_array_equal(ev.grad.numpy(), tv.grad.numpy())
    x = ember.tensor(vec, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: vec_to_tril_matrix(a, 0), (x,))
    assert ember.autograd.gradcheck(
        lambda a: tril_matrix_to_vec(a, 1), (em.detach().requires_grad_(),)
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda u, m: u.tril_matrix_to_vec(m.zeros(3, 3), 3),
        lambda u, m: u.tril_matrix_to_vec(m.zeros(3, 3), -4),
        lambda u, m: u.vec_to_tril_matrix(m.zeros(5)),
        lambda u, m: u.vec_to_tril_matrix(m.zeros(2, 2)),
    ],
)
def test_tril_vec_errors(call):
    from ember.distributions import utils as eu
    from torch.distributions import utils as tu

    with pytest.raises(ValueError) as t:
        call(tu, torch)
    with pytest.raises(ValueError) as e:
        call(eu, ember)
    assert str(e.value) == str(t.value)


# ------------------------------------------- composite constraints' and transforms' errors
_same_error = same_error


def _msf_constraint(m, base):
    return m.distributions.constraints.MixtureSameFamilyConstraint(base)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.distributions.constraints.independent(m.distributions.constraints.real, -1),
        lambda m: m.distributions.constraints.independent(m.distributions.constraints.real, 1.5),
        lambda m: m.distributions.constraints.independent(3, 1),
        lambda m: _msf_constraint(m, 3),
        lambda m: _msf_constraint(m, m.distributions.constraints.simplex).check(m.tensor(1.0)),
        lambda m: m.distributions.constraints.cat([m.distributions.constraints.real], 0, [1, 2]),
        lambda m: m.distributions.constraints.cat([m.distributions.constraints.real, 3], 0),
        lambda m: m.distributions.constraints.stack([3], 0),
        lambda m: m.distributions.constraints.cat([m.distributions.constraints.real], 3).check(
            m.ones(2)
        ),
        lambda m: m.distributions.constraints.stack([m.distributions.constraints.real], -3).check(
            m.ones(2)
        ),
    ],
)
def test_composite_constraint_errors(call):
    _same_error(call)


def _cat(m, dim=0, lengths=(1, 1)):
    t = m.distributions.transforms
    return t.CatTransform([t.ExpTransform(), t.ExpTransform()], dim=dim, lengths=list(lengths))


def _stack(m, dim=0):
    t = m.distributions.transforms
    return t.StackTransform([t.ExpTransform(), t.ExpTransform()], dim=dim)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.distributions.transforms.CatTransform(
            [m.distributions.transforms.ExpTransform()], 0, [1, 2]
        ),
        lambda m: m.distributions.transforms.CatTransform([3], 0),
        lambda m: m.distributions.transforms.StackTransform([3], 0),
        lambda m: _cat(m)(m.ones(3)),
        lambda m: _cat(m).inv(m.ones(3)),
        lambda m: _cat(m, dim=-2)(m.ones(2)),
        lambda m: _cat(m).log_abs_det_jacobian(m.ones(3), m.ones(2)),
        lambda m: _cat(m).log_abs_det_jacobian(m.ones(2), m.ones(3)),
        lambda m: _cat(m, dim=2).log_abs_det_jacobian(m.ones(2), m.ones(2)),
        lambda m: _stack(m)(m.ones(3)),
        lambda m: _stack(m).inv(m.ones(3)),
        lambda m: _stack(m).log_abs_det_jacobian(m.ones(2), m.ones(3)),
        lambda m: _stack(m, dim=1).log_abs_det_jacobian(m.ones(2), m.ones(2)),
    ],
)
def test_cat_stack_transform_errors(call):
    _same_error(call)


def test_cat_stack_transforms_still_work():
    x = np.random.default_rng(2).normal(size=(3, 3))
    for build in (lambda m: _cat(m, 1, (1, 2)), lambda m: _stack(m, 1)):
        xs = x if build(torch).__class__.__name__ == "CatTransform" else x[:, :2]
        tt, et = build(torch), build(ember)
        ty, ey = tt(torch.tensor(xs)), et(ember.tensor(xs))
        np.testing.assert_allclose(ey.numpy(), ty.numpy(), rtol=1e-12)
        np.testing.assert_allclose(et.inv(ey).numpy(), tt.inv(ty).numpy(), rtol=1e-12)
        np.testing.assert_allclose(
            et.log_abs_det_jacobian(ember.tensor(xs), ey).numpy(),
            tt.log_abs_det_jacobian(torch.tensor(xs), ty).numpy(),
            rtol=1e-12,
        )


# ---------------------------------------------------------------- GeneralizedPareto
_GP = {"loc": [0.0, 0.0, 0.0, 1.0], "scale": [1.0, 1.0, 2.0, 1.0], "conc": [0.3, -0.2, 0.0, -1.0]}


@pytest.mark.parametrize("method", ["log_prob", "cdf", "log_cdf", "log_survival_function"])
@pytest.mark.parametrize("x", [[0.5, 1.0, 3.0, 1.5], [0.0, 0.0, 0.0, 1.0], [10.0, 5.0, 20.0, 2.0]])
def test_generalized_pareto_tail_functions(method, x):
    # float32: torch's own GeneralizedPareto fails in float64 (it compares with a float32 zero)
    tp = [torch.tensor(v, requires_grad=True) for v in _GP.values()]
    ep = [ember.tensor(v, requires_grad=True) for v in _GP.values()]
    t = getattr(torch.distributions.GeneralizedPareto(*tp), method)(torch.tensor(x))
    e = getattr(ED.GeneralizedPareto(*ep), method)(ember.tensor(x))
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5)
    assert np.array_equal(np.signbit(e.detach().numpy()), np.signbit(t.detach().numpy()))
    w = [1.0, 2.0, 3.0, 4.0]
    tg = torch.autograd.grad((t * torch.tensor(w)).sum(), tp, allow_unused=True)
    eg = ember.autograd.grad((e * ember.tensor(w)).sum(), ep, allow_unused=True)
    for a, b in zip(tg, eg):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4)


def test_generalized_pareto_log_survival_gradcheck():
    loc = ember.tensor([0.0, 0.5], dtype=ember.float64, requires_grad=True)
    scale = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    conc = ember.tensor([0.3, -0.2], dtype=ember.float64, requires_grad=True)
    x = ember.tensor([0.7, 1.5], dtype=ember.float64)

    def f(a, b, c):
        d = ED.GeneralizedPareto(a, b, c)
        return d.log_survival_function(x) + d.log_cdf(x)

    assert ember.autograd.gradcheck(f, (loc, scale, conc))
