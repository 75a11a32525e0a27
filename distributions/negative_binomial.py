"""Negative binomial distribution."""

from __future__ import annotations

from typing import ClassVar

import ember
import ember.nn.functional as F

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    r"""A Negative Binomial distribution: the number of successful independent and identical
    Bernoulli trials before ``total_count`` failures are achieved. The probability of success
    of each Bernoulli trial is :attr:`probs`.

    Args:
        total_count (float or Tensor): non-negative number of negative Bernoulli trials to stop,
            although the distribution is still valid for real valued count.
        probs (Tensor): event probabilities of success in the half open interval [0, 1).
        logits (Tensor): event log-odds for probabilities of success.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self, total_count, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_probs_or_logits(new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> ember.Tensor:
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self) -> ember.Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> ember.Tensor:
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def logits(self) -> ember.Tensor:
        """Event log-odds."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> ember.Tensor:
        """Event probabilities."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> ember.Size:
        """The shape of the parameter tensor."""
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # a Gamma-Poisson mixture
        return Gamma(
            concentration=self.total_count, rate=ember.exp(-self.logits), validate_args=False
        )

    def sample(self, sample_shape=()) -> ember.Tensor:
        with no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return ember.poisson(rate)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * F.logsigmoid(
            -self.logits
        ) + value * F.logsigmoid(self.logits)
        log_normalization = (
            -ember.lgamma(self.total_count + value)
            + ember.lgamma(1.0 + value)
            + ember.lgamma(self.total_count)
        )
        # C(-1, 0) = 1: total_count + value == 0 contributes nothing
        log_normalization = ember.where(
            self.total_count + value == 0.0,
            ember.zeros_like(log_normalization),
            log_normalization,
        )
        return log_unnormalized_prob - log_normalization
