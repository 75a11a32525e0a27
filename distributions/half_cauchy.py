"""Half-Cauchy distribution: the absolute value of a centered Cauchy."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    r"""A half-Cauchy distribution parameterized by ``scale``::

        X ~ Cauchy(0, scale)
        Y = |X| ~ HalfCauchy(scale)

    Args:
        scale (float or Tensor): scale of the full Cauchy distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> ember.Tensor:
        """Scale of the full Cauchy distribution."""
        return self.base_dist.scale

    @property
    def mean(self) -> ember.Tensor:
        return ember.full(
            tuple(self._extended_shape()),
            math.inf,
            dtype=self.scale.dtype,
            device=self.scale.device,
        )

    @property
    def mode(self) -> ember.Tensor:
        return ember.zeros_like(self.scale)

    @property
    def variance(self) -> ember.Tensor:
        return self.base_dist.variance

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        value = ember.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.scale.device)
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
