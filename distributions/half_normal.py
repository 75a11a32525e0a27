"""Half-normal distribution: the absolute value of a centered normal."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    r"""A half-normal distribution parameterized by ``scale``::

        X ~ Normal(0, scale)
        Y = |X| ~ HalfNormal(scale)

    Args:
        scale (float or Tensor): scale of the full Normal distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> ember.Tensor:
        """Scale of the full Normal distribution."""
        return self.base_dist.scale

    @property
    def mean(self) -> ember.Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> ember.Tensor:
        return ember.zeros_like(self.scale)

    @property
    def variance(self) -> ember.Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, log_prob, ember.full_like(log_prob, -math.inf))

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: ember.Tensor) -> ember.Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> ember.Tensor:
        return self.base_dist.entropy() - math.log(2)
