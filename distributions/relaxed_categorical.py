"""Relaxed one-hot categorical (Concrete / Gumbel-softmax) distributions."""

from __future__ import annotations

from typing import ClassVar

import ember

from . import constraints
from .categorical import _CategoricalWrapper
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import _forwarded, broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(_CategoricalWrapper, Distribution):
    r"""An ExpRelaxedCategorical distribution parameterized by :attr:`temperature` and either
    :attr:`probs` or :attr:`logits` (but not both): the log of a point in the simplex, whose
    exp is a :class:`RelaxedOneHotCategorical` sample (Maddison et al., 2017).

    Args:
        temperature (Tensor): relaxation temperature.
        probs (Tensor): event probabilities.
        logits (Tensor): unnormalized log probability for each event.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        batch_shape, event_shape = self._set_categorical(probs, logits)
        self.temperature = temperature
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> ExpRelaxedCategorical:
        return self._expand_params(
            ExpRelaxedCategorical, batch_shape, _instance, ("_categorical",), ("temperature",)
        )

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        logits = self.logits
        uniforms = clamp_probs(ember.rand(shape, dtype=logits.dtype, device=logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = ember.as_tensor(self.temperature, dtype=logits.dtype, device=logits.device)
        log_scale = ember.full_like(temperature, float(K)).lgamma() - temperature.log() * (-(K - 1))
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    r"""A RelaxedOneHotCategorical distribution parametrized by :attr:`temperature` and either
    :attr:`probs` or :attr:`logits`: a relaxed version of the :class:`OneHotCategorical`
    distribution whose samples are on the simplex and reparametrizable.

    Example::

        >>> m = RelaxedOneHotCategorical(ember.tensor([2.2]),
        ...                              ember.tensor([0.1, 0.2, 0.3, 0.4]))
        >>> m.sample()
        tensor([ 0.1294,  0.2324,  0.3859,  0.2523])

    Args:
        temperature (Tensor): relaxation temperature.
        probs (Tensor): event probabilities.
        logits (Tensor): unnormalized log probability for each event.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> RelaxedOneHotCategorical:
        return self._expand_transformed(RelaxedOneHotCategorical, batch_shape, _instance)

    temperature = _forwarded("base_dist.temperature", "The relaxation temperature.")
    logits = _forwarded("base_dist.logits", "Normalized log probabilities.")
    probs = _forwarded("base_dist.probs", "Normalized probabilities.")
