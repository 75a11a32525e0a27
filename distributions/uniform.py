"""Continuous uniform distribution on a half-open interval."""

from __future__ import annotations

import ember

from . import constraints
from .distribution import Distribution

__all__ = ["Uniform"]


class Uniform(Distribution):
    r"""Uniformly distributed samples from the half-open interval ``[low, high)``.

    Example::

        >>> m = Uniform(ember.tensor([0.0]), ember.tensor([5.0]))
        >>> m.sample()  # uniformly distributed in the range [0.0, 5.0)
        tensor([ 2.3418])

    Args:
        low (float or Tensor): lower range (inclusive).
        high (float or Tensor): upper range (exclusive).
        validate_args (bool, optional): whether to validate arguments.
    """

    has_rsample = True

    @property
    def arg_constraints(self) -> dict:
        return {
            "low": constraints.less_than(self.high),
            "high": constraints.greater_than(self.low),
        }

    def __init__(self, low, high, validate_args: bool | None = None) -> None:
        self._init_params(("low", "high"), (low, high), validate_args)

    def expand(self, batch_shape, _instance=None) -> Uniform:
        return self._expand_params(Uniform, batch_shape, _instance, ("low", "high"))

    @property
    def mean(self) -> ember.Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> ember.Tensor:
        return float("nan") * self.high

    @property
    def stddev(self) -> ember.Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> ember.Tensor:
        return (self.high - self.low).pow(2) / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = self._extended_shape(sample_shape)
        rand = ember.rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).type_as(self.low)
        ub = (self.high > value).type_as(self.low)
        return ember.log(lb * ub) - ember.log(self.high - self.low)

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> ember.Tensor:
        return ember.log(self.high - self.low)
