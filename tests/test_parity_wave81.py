"""Parity regressions found by the eighty-first wave, a seeded random fuzz of torch.func against
torch (vmap over random functions of one to four ops drawn from pointwise ops, reductions with
dims, shape and view ops, indexing, the matmul family, softmax, layers of nn.functional, in-place
ops on per-element and shared tensors and random ops under the three ``randomness`` modes; random
``in_dims`` (negative, None, nested tuples and dicts), ``out_dims`` and ``chunk_size``; nested
vmap, vmap of grad and grad of vmap; grad, grad_and_value, jacrev, jacfwd and hessian with
``argnums`` and ``has_aux``; vjp, jvp and linearize; functional_call with parameter and buffer
dicts, tied weights and ``strict``; stack_module_state ensembles; values, shapes, dtypes, errors
and gradients). It found that a nested vmap let an in-place op write a value mapped by the inner
vmap into a tensor only the outer one maps (torch refuses: ``self`` lacks the inner batch dim),
since ember marked per-element values without their vmap level; and that
``randomness='same'`` ran bernoulli, normal, poisson, binomial and multinomial on per-element
parameters, which torch refuses (one draw cannot serve elements whose parameters differ);
multinomial's draws from per-element weights were not per-element values themselves (so
``.item()`` on them went through); an in-place sampler (``normal_``, ``uniform_``, ...) writing
into a tensor a ``randomness='different'`` vmap does not map ran, where torch refuses (the
elements would all see one draw); and nested vmaps of mixed randomness modes now refuse as
torch does, from the innermost vmap out (an outer 'error' vmap no longer replaces an inner
vmap's refusal with its own). torch's own quirks left alone: its error texts under vmap show
the physical batched shapes (ember's show one element's), and torch's linearize disagrees with
its own jvp for a function with an in-place ``__setitem__`` (ember agrees with jvp)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")

_A = np.random.RandomState(81).randn(2, 3, 3)
_B = np.random.RandomState(82).randn(2, 3)


def _nested(T, g):
    """``g(x, y)`` under two vmaps: ``x`` is mapped by both, ``y`` by the outer one only."""
    inner = T.vmap(g, in_dims=(0, None))
    return T.vmap(inner, in_dims=(0, 0))(T.tensor(_A), T.tensor(_B))


@pytest.mark.parametrize(
    "g",
    [
        lambda T, x, y: y.clone().copy_(x),
        lambda T, x, y: y.mul_(x),
        lambda T, x, y: y.clone().__setitem__(0, x[0]),
        lambda T, x, y: y.clone().fill_(x[0]),
        lambda T, x, y: y.clone().masked_fill_(x > 0, 1.0),
        lambda T, x, y: y.clone().index_add_(0, T.tensor([0]), x[:1]),
        lambda T, x, y: y.clone().addcmul_(x, x),  # torch's generic rule: "at level 2"
    ],
    ids=["copy_", "mul_", "setitem", "fill_", "masked_fill_", "index_add_", "addcmul_"],
)
def test_nested_vmap_inplace_into_outer_only_value(g):
    # y is a per-element value of the outer vmap, shared by the inner one's elements
    same_error(lambda T: _nested(T, lambda x, y: g(T, x, y)), RuntimeError)


def test_nested_vmap_inplace_allowed_where_self_is_mapped_at_every_level():
    def f(T):
        return _nested(T, lambda x, y: x.clone().mul_(y).add_(y))

    np.testing.assert_allclose(f(ember).numpy(), f(torch).numpy(), rtol=1e-12)

    def h(T):  # an outer-only value into an outer-only value: both lack the inner dim
        return _nested(T, lambda x, y: x * y.clone().mul_(y))

    np.testing.assert_allclose(h(ember).numpy(), h(torch).numpy(), rtol=1e-12)


_PARAMETRISED = {
    "bernoulli": lambda T, a: T.bernoulli(a.sigmoid()),
    "bernoulli_p": lambda T, a: a.bernoulli(0.3),
    "normal_mean": lambda T, a: T.normal(a, 1.0),
    "normal_std": lambda T, a: T.normal(0.0, a.abs()),
    "poisson": lambda T, a: T.poisson(a.abs()),
    "binomial": lambda T, a: T.binomial(a.abs().round() + 1, a.sigmoid()),
    "multinomial": lambda T, a: T.multinomial(a.abs() + 0.1, 2),
}


@pytest.mark.parametrize("name", list(_PARAMETRISED))
def test_same_randomness_refuses_per_element_parameters(name):
    fn = _PARAMETRISED[name]
    x = np.random.RandomState(1).randn(4, 3)
    msg = same_error(
        lambda T: T.vmap(lambda a: fn(T, a), randomness="same")(T.tensor(x)), RuntimeError
    )
    assert msg.startswith("Vmap does not currently support same randomness")
    for T in (ember, torch):  # 'different' draws per element; a shared parameter is fine
        assert T.vmap(lambda a, T=T: fn(T, a), randomness="different")(T.tensor(x)).shape[0] == 4
        shared = T.vmap(lambda a, p, T=T: (a, fn(T, p)), in_dims=(0, None), randomness="same")
        assert shared(T.tensor(x), T.tensor(x[0]))[1].shape[0] == 4


def test_multinomial_draws_from_per_element_weights_are_per_element():
    w = np.random.RandomState(2).rand(3, 4) + 0.1

    def f(T):
        return T.vmap(lambda a: T.multinomial(a, 1).sum().item(), randomness="different")(
            T.tensor(w)
        )

    same_error(f, RuntimeError)


_MODES = ["error", "different", "same"]
_X3 = np.random.RandomState(3).rand(2, 3, 1) + 0.5


def _two_levels(T, draw, outer, inner, src):
    """``draw(t)`` under two vmaps of the given randomness, ``t`` mapped by both ("both"), by
    the outer one only ("outer") or by neither ("none")."""

    def f(a, b):
        return draw({"both": a, "outer": b, "none": T.ones(1)}[src])

    g = T.vmap(f, in_dims=(0, None), randomness=inner)
    x = T.tensor(_X3)
    return T.vmap(g, in_dims=(0, 0), randomness=outer)(x, x[:, 0])


def _same_outcome(fn):
    """Both frameworks succeed with the same shape, or raise the same error."""
    try:
        want = fn(torch).shape
    except RuntimeError:
        same_error(fn, RuntimeError)
        return
    assert tuple(fn(ember).shape) == tuple(want)


@pytest.mark.parametrize("outer", _MODES)
@pytest.mark.parametrize("inner", _MODES)
@pytest.mark.parametrize("src", ["both", "outer", "none"])
def test_nested_randomness_in_place_and_parametrised_draws(outer, inner, src):
    # an in-place draw into a tensor a 'different' vmap does not map is refused; torch works
    # from the inner vmap out, a 'same' one drawing once into a buffer no vmap maps
    _same_outcome(lambda T: _two_levels(T, lambda t: t.clone().normal_(), outer, inner, src))
    # a draw whose parameter a 'same' vmap maps is refused, unless an inner 'error' vmap
    # refuses the random op first
    _same_outcome(lambda T: _two_levels(T, lambda t: T.normal(t, 1.0), outer, inner, src))


def test_different_randomness_refuses_in_place_draw_into_shared_tensor():
    for draw in ("uniform_", "normal_", "bernoulli_", "exponential_"):

        def f(T, draw=draw):
            return T.vmap(lambda a: a + getattr(T.zeros(3), draw)(), randomness="different")(
                T.ones(2, 3)
            )

        same_error(f, RuntimeError)
        for T in (ember, torch):  # a fresh per-element tensor, or 'same': fine
            per = T.vmap(lambda a, T=T: a.clone().uniform_(), randomness="different")
            assert per(T.ones(2, 3)).shape == (2, 3)
            shared = T.vmap(lambda a, T=T: a + T.zeros(3).uniform_(), randomness="same")
            assert shared(T.ones(2, 3)).shape == (2, 3)
