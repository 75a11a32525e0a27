"""Relaxed Bernoulli (binary Concrete) distributions."""

from __future__ import annotations

from numbers import Number
from typing import ClassVar

import ember
import ember.nn.functional as F

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
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
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = ember.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LogitRelaxedBernoulli:
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = ember.Size(batch_shape)
        new.temperature = self.temperature
        self._expand_probs_or_logits(new, batch_shape)
        super(LogitRelaxedBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self) -> ember.Tensor:
        """Log-odds of sampling ``1``."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> ember.Tensor:
        """Probability of sampling ``1``."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> ember.Size:
        """The shape of the parameter tensor."""
        return self._param.size()

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
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        """The relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self) -> ember.Tensor:
        """Log-odds of sampling ``1``."""
        return self.base_dist.logits

    @property
    def probs(self) -> ember.Tensor:
        """Probability of sampling ``1``."""
        return self.base_dist.probs
