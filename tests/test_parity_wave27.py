"""Parity regressions found by the twenty-seventh wave, a function-by-function sweep of random
sampling (the factories rand/randn/randint/randperm/normal/bernoulli/multinomial/poisson and
their *_like forms, the in-place samplers uniform_/normal_/random_/bernoulli_/exponential_/
geometric_/log_normal_/cauchy_, their dtypes, sizes, ``generator=``/``out=`` arguments and
torch's errors; torch is the oracle): in-place samplers on an expanded view (torch's
"more than one element of the written-to tensor" RuntimeError, before anything is drawn, where
ember raised numpy's ValueError), bernoulli_ with a tensor ``p`` (torch's expand errors for a p
that does not fit, its NotImplementedError for an integer p and its range error for NaN, where
ember broadcast silently or accepted them), keywords torch refuses (uniform_(from_=/a=),
random_(from_=), a float bound for random_/randint_like), integer arguments past int64 (torch's
"Overflow when unpacking long long" for randint/randperm/random_), a float ``n`` for randperm, a
non-tensor input for rand_like/multinomial, a float ``num_samples``, multinomial's int64 ``out``,
poisson on an integer tensor (NotImplementedError) and on NaN rates (the rate error), normal on
integer tensors and with a size where none fits, and a wrong ``generator`` type (torch's
TypeErrors: by argument for one-signature samplers, "invalid combination" for the others); then
the Generator API (a tensor seed for Generator.manual_seed, graphsafe_get/set_state on a cpu
generator: torch's NotImplementedError, and graphsafe_set_state takes a Generator),
``fork_rng``'s full signature (device_type, "meta" forking nothing, torch's internal
_caller/_devices_kw), ``binomial`` recording its draw in the graph with torch's missing-derivative
error, and what ember lacked at the top level: ``_standard_gamma``/``_sample_dirichlet``/
``_standard_gamma_grad`` (with torch's dtype and argument errors, and torch's draws for a
concentration that is not positive, NaN or inf, where ember's rejection loop never ended)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")


def _same_error(fn) -> None:
    """``fn(torch)`` and ``fn(ember)`` raise the same exception type with the same first line."""
    same_error(fn, first_line=True)


ERRORS = {
    # expanded (overlapping) views: every in-place sampler refuses them
    "uniform_expanded": lambda m: m.ones(3).expand(2, 3).uniform_(),
    "normal_expanded": lambda m: m.ones(3).expand(2, 3).normal_(),
    "bernoulli_expanded": lambda m: m.ones(3).expand(2, 3).bernoulli_(),
    "random_expanded": lambda m: m.ones(3).expand(2, 3).random_(),
    "exponential_expanded": lambda m: m.ones(3).expand(2, 3).exponential_(),
    "geometric_expanded": lambda m: m.ones(3).expand(2, 3).geometric_(0.5),
    "log_normal_expanded": lambda m: m.ones(3).expand(2, 3).log_normal_(),
    "cauchy_expanded": lambda m: m.ones(3).expand(2, 3).cauchy_(),
    # bernoulli_ with a tensor p
    "bernoulli_p_longer": lambda m: m.empty(3).bernoulli_(m.rand(4)),
    "bernoulli_p_more_dims": lambda m: m.empty(3).bernoulli_(m.rand(2, 3)),
    "bernoulli_p_int": lambda m: m.empty(3).bernoulli_(m.ones(3, dtype=m.int64)),
    "bernoulli_p_nan": lambda m: m.empty(3).bernoulli_(m.tensor([0.5, float("nan"), 0.1])),
    # keywords and argument types
    "uniform_from_underscore": lambda m: m.empty(3).uniform_(from_=0, to=2),
    "uniform_a_b": lambda m: m.empty(3).uniform_(a=0, b=2),
    "random_float_to": lambda m: m.empty(3).random_(2.5),
    "random_float_from": lambda m: m.empty(3).random_(1.5, 3),
    "random_bool": lambda m: m.empty(3).random_(True),
    "random_to_past_int64": lambda m: m.empty(3, dtype=m.int64).random_(2**63),
    "random_from_to_past_int64": lambda m: m.empty(3).random_(1, 2**63),
    "randint_past_int64": lambda m: m.randint(2**63, (3,)),
    "randint_low_past_int64": lambda m: m.randint(-(2**63) - 1, 0, (3,)),
    "randperm_past_int64": lambda m: m.randperm(2**63),
    "randperm_float": lambda m: m.randperm(5.0),
    "rand_like_list": lambda m: m.rand_like([1, 2]),
    "randn_like_list": lambda m: m.randn_like([1, 2]),
    "randint_like_float_high": lambda m: m.randint_like(m.ones(2, 3), 10.5),
    "randint_like_float_low": lambda m: m.randint_like(m.ones(2, 3), 1.5, 10),
    "multinomial_list": lambda m: m.multinomial([1.0, 2.0], 1),
    "multinomial_float_n": lambda m: m.multinomial(m.ones(3), 2.0),
    "multinomial_float_out": lambda m: m.multinomial(m.ones(3), 2, out=m.empty(2)),
    "poisson_int": lambda m: m.poisson(m.ones(3, dtype=m.int64)),
    "poisson_nan": lambda m: m.poisson(m.tensor([1.0, float("nan")])),
    "normal_int_mean": lambda m: m.normal(m.zeros(3, dtype=m.int64), 1.0),
    "normal_int_std": lambda m: m.normal(1.0, m.ones(3, dtype=m.int64)),
    "normal_int_size": lambda m: m.normal(0.0, 1.0, 2),
    "normal_tensors_with_size": lambda m: m.normal(m.zeros(3), m.ones(3), (3,)),
    # a generator that is not one
    "rand_generator": lambda m: m.rand(2, generator=5),
    "randn_generator": lambda m: m.randn(2, 3, generator="x"),
    "randint_generator": lambda m: m.randint(10, (3,), generator=1),
    "randperm_generator": lambda m: m.randperm(5, generator=3),
    "uniform_generator": lambda m: m.empty(3).uniform_(generator=1),
    "normal_generator": lambda m: m.empty(3).normal_(generator=1),
    "exponential_generator": lambda m: m.empty(3).exponential_(generator=1),
    "geometric_generator": lambda m: m.empty(3).geometric_(0.5, generator=1),
    "log_normal_generator": lambda m: m.empty(3).log_normal_(generator=1),
    "cauchy_generator": lambda m: m.empty(3).cauchy_(generator=1),
    "random_generator": lambda m: m.empty(3).random_(generator=1),
    "random_to_generator": lambda m: m.empty(3).random_(5, generator=1),
    "bernoulli_generator": lambda m: m.empty(3).bernoulli_(generator=1),
    "bernoulli_p_generator": lambda m: m.empty(3).bernoulli_(0.3, generator=1),
    "poisson_generator": lambda m: m.poisson(m.ones(3), generator=1),
    "multinomial_generator": lambda m: m.multinomial(m.ones(3), 2, generator=1),
    "bernoulli_tensor_p": lambda m: m.bernoulli(m.rand(3), m.rand(3)),
    "bernoulli_1d_p": lambda m: m.bernoulli(m.rand(3), m.tensor([0.5])),
    "bernoulli_generator_fn": lambda m: m.bernoulli(m.rand(3), generator=1),
    "bernoulli_p_generator_fn": lambda m: m.bernoulli(m.rand(3), 0.5, generator=1),
    "bernoulli_complex": lambda m: m.bernoulli(m.rand(3, dtype=m.complex64)),
    "bernoulli_long": lambda m: m.bernoulli(m.ones(3, dtype=m.int64)),
    "poisson_float": lambda m: m.poisson(2.0),
    "binomial_float_prob": lambda m: m.binomial(m.ones(3) * 10, 0.5),
    "binomial_float_count": lambda m: m.binomial(10.0, m.ones(3) * 0.5),
    # complex tensors have no Bernoulli kernel; dtype and out must agree
    "bernoulli_complex_scalar_p": lambda m: m.bernoulli(m.rand(3).to(m.complex64), 0.5),
    "bernoulli__complex": lambda m: m.empty(3, dtype=m.complex128).bernoulli_(),
    "bernoulli__complex_p": lambda m: m.empty(3, dtype=m.complex64).bernoulli_(0.3),
    "bernoulli__complex_tensor_p": lambda m: m.empty(3, dtype=m.complex64).bernoulli_(m.rand(3)),
    "rand_dtype_out": lambda m: m.rand(3, dtype=m.float64, out=m.empty(3)),
    "randn_dtype_out": lambda m: m.randn(3, dtype=m.float16, out=m.empty(3)),
    "randint_dtype_out": lambda m: m.randint(3, (3,), dtype=m.int64, out=m.empty(3)),
    "randperm_dtype_out": lambda m: m.randperm(3, dtype=m.int32, out=m.empty(3, dtype=m.int64)),
    "normal_size_dtype_out": lambda m: m.normal(0.0, 1.0, (3,), dtype=m.float64, out=m.empty(3)),
    "normal_int_out": lambda m: m.normal(m.zeros(3), 1.0, out=m.empty(3, dtype=m.int64)),
    # the Generator API
    "generator_tensor_seed": lambda m: m.Generator().manual_seed(m.tensor(3)),
    "graphsafe_get_state_cpu": lambda m: m.Generator().graphsafe_get_state(),
    "graphsafe_set_state_cpu": lambda m: m.Generator().graphsafe_set_state(m.Generator()),
    "graphsafe_set_state_int": lambda m: m.Generator().graphsafe_set_state(5),
    "graphsafe_set_state_tensor": lambda m: m.Generator().graphsafe_set_state(
        m.Generator().get_state()
    ),
    # gamma / Dirichlet draws
    "standard_gamma_int": lambda m: m._standard_gamma(m.ones(3, dtype=m.int64)),
    "standard_gamma_half": lambda m: m._standard_gamma(m.ones(3, dtype=m.float16)),
    "standard_gamma_bfloat16": lambda m: m._standard_gamma(m.ones(3, dtype=m.bfloat16)),
    "standard_gamma_complex": lambda m: m._standard_gamma(m.ones(3, dtype=m.complex64)),
    "standard_gamma_float": lambda m: m._standard_gamma(2.0),
    "standard_gamma_generator": lambda m: m._standard_gamma(m.ones(3), generator=1),
    "sample_dirichlet_int": lambda m: m._sample_dirichlet(m.ones(3, dtype=m.int64)),
    "sample_dirichlet_half": lambda m: m._sample_dirichlet(m.ones(3, dtype=m.float16)),
    "sample_dirichlet_generator": lambda m: m._sample_dirichlet(m.ones(3), generator=1),
    "binomial_count_grad": lambda m: (
        m.binomial(m.ones(3, requires_grad=True) * 10, m.ones(3) * 0.5).sum().backward()
    ),
    "binomial_prob_grad": lambda m: (
        m.binomial(m.ones(3) * 10, m.full((3,), 0.5, requires_grad=True)).sum().backward()
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_like_torch(name):
    _same_error(ERRORS[name])


@pytest.mark.parametrize(
    "fill",
    [
        lambda t, g: t.uniform_(generator=g),
        lambda t, g: t.normal_(generator=g),
        lambda t, g: t.random_(generator=g),
        lambda t, g: t.bernoulli_(generator=g),
        lambda t, g: t.exponential_(generator=g),
    ],
)
def test_expanded_refusal_leaves_generator_untouched(fill):
    # the overlap error comes before any draw: the generator's stream is where it was
    g = ember.Generator().manual_seed(7)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        fill(ember.ones(3).expand(2, 3), g)
    a = ember.rand(4, generator=g)
    b = ember.rand(4, generator=ember.Generator().manual_seed(7))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_accepted_keyword_and_optional_forms():
    # what torch accepts and the fixes must keep: uniform_(from=, to=), random_(from=, to=),
    # random_(to=), random_(from, None), bernoulli_() (p = 0.5), a broadcastable tensor p
    t = ember.empty(1000).uniform_(**{"from": 2.0, "to": 3.0})
    assert 2 <= float(t.min()) and float(t.max()) < 3
    t = ember.empty(1000).uniform_(-1.0, to=0.0)
    assert torch.empty(3).uniform_(-1.0, to=0.0).shape == (3,)
    assert -1 <= float(t.min()) and float(t.max()) < 0
    t = ember.empty(1000).random_(**{"from": 3, "to": 5})
    assert set(np.unique(t.numpy())) == {3.0, 4.0}
    t = ember.empty(1000).random_(to=2)
    assert set(np.unique(t.numpy())) == {0.0, 1.0}
    t = ember.empty(100, dtype=ember.int8).random_(-3, None)
    assert int(t.min()) >= -3 and int(t.max()) <= 127
    t = ember.empty(4000).bernoulli_()
    assert abs(float(t.mean()) - 0.5) < 0.05
    p = ember.tensor([0.0, 1.0, 0.0])
    t = ember.empty(2, 3).bernoulli_(p)  # p expands to (2, 3)
    np.testing.assert_array_equal(t.numpy(), np.array([[0, 1, 0], [0, 1, 0]], np.float32))
    assert torch.empty(2, 3).bernoulli_(torch.tensor([0.0, 1.0, 0.0])).shape == t.shape


def test_int64_bounds_still_accepted():
    # the largest ranges torch parses stay valid (only past int64 is an overflow)
    r = ember.randint(-(2**63), 2**63 - 1, (5,))
    assert r.dtype == ember.int64 and r.shape == (5,)
    r = ember.empty(5, dtype=ember.int64).random_(-(2**63), 2**63 - 1)
    assert r.dtype == ember.int64
    assert ember.randperm(ember.tensor(5)).shape == (5,)  # a 0-dim integer tensor is an int


def test_multinomial_int64_out_and_poisson_rates():
    out = ember.empty(2, dtype=ember.int64)
    r = ember.multinomial(ember.ones(3), 2, out=out)
    assert r is out and sorted(set(out.tolist())) == sorted(out.tolist())
    lam = ember.tensor([0.0, 3.0, 50.0], dtype=ember.float64)
    s = ember.poisson(lam.expand(20000, 3))
    assert s.dtype == ember.float64
    np.testing.assert_allclose(s.numpy().mean(0), [0.0, 3.0, 50.0], atol=0.3)


def test_manual_seed_function_takes_a_tensor():
    # torch.manual_seed int()s its seed (a tensor is fine); only Generator.manual_seed refuses
    ember.manual_seed(ember.tensor(3))
    assert ember.initial_seed() == 3
    torch.manual_seed(torch.tensor(3))


def test_fork_rng_signature():
    state = ember.get_rng_state()
    # torch's positional internals (_caller, _devices_kw) and device_type are accepted
    with ember.random.fork_rng([], True, "_caller", "_devices", device_type="cuda"):
        ember.rand(5)
    assert bool((ember.get_rng_state() == state).all())
    # "meta" forks nothing: the draw inside moves the stream on, as in torch
    with ember.random.fork_rng(device_type="meta"):
        ember.rand(5)
    assert not bool((ember.get_rng_state() == state).all())
    t_state = torch.get_rng_state()
    with torch.random.fork_rng(device_type="meta"):
        torch.rand(5)
    assert not bool((torch.get_rng_state() == t_state).all())
    # an unknown device type is the device parser's error (ember lists only its own types)
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="device type at start of device string: xyz"):
            m.random.fork_rng(device_type="xyz").__enter__()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_degenerate_concentrations(dtype):
    # torch's draws: the smallest normal number for alpha <= 0 or NaN, inf for inf
    a = [-1.0, 0.0, float("nan"), float("inf"), 1e30]
    e = ember._standard_gamma(ember.tensor(a, dtype=getattr(ember, dtype)))
    t = torch._standard_gamma(torch.tensor(a, dtype=getattr(torch, dtype)))
    assert e.dtype == getattr(ember, dtype) and e.shape == t.shape
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)  # 1e30: a draw within 1e-15
    c = [[0.0, 0.0, 0.0], [-1.0, 1.0, float("nan")]]
    e = ember._sample_dirichlet(ember.tensor(c, dtype=getattr(ember, dtype)))
    t = torch._sample_dirichlet(torch.tensor(c, dtype=getattr(torch, dtype)))
    # the clamped entries are ~tiny / (a random draw): compare them at the scale of tiny
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-30)


def test_standard_gamma_statistics_and_gradient():
    g = ember.Generator().manual_seed(0)
    a = ember.tensor([0.3, 1.0, 4.0], dtype=ember.float64).expand(40000, 3)
    x = ember._standard_gamma(a, generator=g)
    assert x.shape == (40000, 3) and x.dtype == ember.float64
    np.testing.assert_allclose(x.numpy().mean(0), [0.3, 1.0, 4.0], rtol=0.03)
    np.testing.assert_allclose(x.numpy().var(0), [0.3, 1.0, 4.0], rtol=0.08)
    # same seed, same draws
    y = ember._standard_gamma(a, generator=ember.Generator().manual_seed(0))
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    # the reparameterized gradient is torch's _standard_gamma_grad of the draw
    alpha = ember.tensor([0.5, 2.0], requires_grad=True)
    s = ember._standard_gamma(alpha)
    s.backward(ember.tensor([1.0, 3.0]))
    ref = torch._standard_gamma_grad(torch.tensor([0.5, 2.0]), torch.tensor(s.detach().numpy()))
    np.testing.assert_allclose(alpha.grad.numpy(), ref.numpy() * [1.0, 3.0], rtol=2e-3)
    d = ember._sample_dirichlet(ember.ones(2, 0))
    assert d.shape == torch._sample_dirichlet(torch.ones(2, 0)).shape


def test_binomial_records_the_draw():
    c = ember.ones(3, requires_grad=True) * 10
    assert ember.binomial(c, ember.ones(3) * 0.5).requires_grad
    t = torch.binomial(torch.ones(3, requires_grad=True) * 10, torch.ones(3) * 0.5)
    assert t.requires_grad


def test_bernoulli_zero_dim_tensor_p():
    # a 0-dim tensor is read as the float p (torch's parser does the same)
    x = ember.bernoulli(ember.rand(4000), ember.tensor(0.25))
    assert abs(float(x.mean()) - 0.25) < 0.04
    assert torch.bernoulli(torch.rand(3), torch.tensor(0.25)).shape == (3,)


@pytest.mark.parametrize(
    "fill",
    [
        lambda m, t: t.bernoulli_(m.tensor([2.0, 1.0, 1.0])),  # p neither fits nor is in [0, 1]
        lambda m, t: t.bernoulli_(m.ones(3, dtype=m.int64)),
        lambda m, t: t.to(m.complex64).bernoulli_(0.5),
        lambda m, t: t.to(m.complex64).random_(),
        lambda m, t: t.to(m.int64).normal_(),
    ],
)
def test_empty_in_place_samplers_draw_nothing(fill):
    # on an empty tensor torch's kernels are not reached: no dtype or p errors, same tensor back
    for m in (ember, torch):
        t = m.empty(0)
        r = fill(m, t)
        assert tuple(r.shape) == (0,)
