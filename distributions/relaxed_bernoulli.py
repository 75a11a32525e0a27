"""Relaxed Bernoulli (binary Concrete) distributions."""

from __future__ import annotations

from typing import ClassVar

import ember
import ember.nn.functional as F

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import _forwarded, _ProbsOrLogitsParam, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_ProbsOrLogitsParam, Distribution):
    r"""A LogitRelaxedBernoulli distribution parameterized by :attr:`probs` or :attr:`logits`
    (but not both): the logit of a :class:`RelaxedBernoulli` sample (Maddison et al., 2017;
    Jang et al., 2017).

    Args:
        temperature (Tensor): relaxation temperature.
        probs (Number, Tensor): the probability of sampling ``1``.
        logits (Number, Tensor): the log-odds of sampling ``1``.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.real

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        self.temperature = temperature
        # a Number parameter gives a 0-d tensor, so its size is the empty batch shape
        super().__init__(
            self._set_probs_or_logits(probs, logits).size(), validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None) -> LogitRelaxedBernoulli:
        return self._expand_probs_or_logits(
            LogitRelaxedBernoulli, batch_shape, _instance, copy=("temperature",)
        )

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(ember.rand(shape, dtype=probs.dtype, device=probs.device))
        return (
            uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()
        ) / self.temperature

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        t = self.temperature
        log_t = t.log() if isinstance(t, ember.Tensor) else ember.log(ember.as_tensor(t))
        # log(1 + exp(diff)) as a softplus: finite where exp(diff) overflows
        return log_t + diff - 2 * F.softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    r"""A RelaxedBernoulli distribution, parametrized by :attr:`temperature` and either
    :attr:`probs` or :attr:`logits` (but not both): a relaxed version of the Bernoulli
    distribution whose values are in (0, 1) and which has reparametrizable samples.

    Example::

        >>> m = RelaxedBernoulli(ember.tensor([2.2]), ember.tensor([0.1, 0.2, 0.3, 0.99]))
        >>> m.sample()
        tensor([ 0.2951,  0.3442,  0.8918,  0.9021])

    Args:
        temperature (Tensor): relaxation temperature.
        probs (Number, Tensor): the probability of sampling ``1``.
        logits (Number, Tensor): the log-odds of sampling ``1``.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self, temperature, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> RelaxedBernoulli:
        return self._expand_transformed(RelaxedBernoulli, batch_shape, _instance)

    temperature = _forwarded("base_dist.temperature", "The relaxation temperature.")
    logits = _forwarded("base_dist.logits", "Log-odds of sampling ``1``.")
    probs = _forwarded("base_dist.probs", "Probability of sampling ``1``.")
