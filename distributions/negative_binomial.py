"""Negative binomial distribution."""

from __future__ import annotations

from typing import ClassVar

import ember
import ember.nn.functional as F

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _ProbsOrLogitsParam, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_ProbsOrLogitsParam, Distribution):
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
        param = self._set_probs_or_logits(probs, logits, total_count)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> NegativeBinomial:
        return self._expand_probs_or_logits(
            NegativeBinomial, batch_shape, _instance, names=("total_count",)
        )

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
