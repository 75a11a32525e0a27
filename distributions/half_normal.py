"""Half-normal distribution: the absolute value of a centered normal."""

from __future__ import annotations

import math

import ember

from .normal import Normal
from .transformed_distribution import _HalfDistribution

__all__ = ["HalfNormal"]


class HalfNormal(_HalfDistribution):
    r"""A half-normal distribution parameterized by ``scale``::

        X ~ Normal(0, scale)
        Y = |X| ~ HalfNormal(scale)

    Args:
        scale (float or Tensor): scale of the full Normal distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    _base = Normal

    def expand(self, batch_shape, _instance=None) -> HalfNormal:
        return self._expand_transformed(HalfNormal, batch_shape, _instance)

    @property
    def mean(self) -> ember.Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> ember.Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)
