"""Inverse-gamma distribution."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform
from .utils import _forwarded

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    r"""An inverse-gamma distribution parameterized by ``concentration`` and ``rate``::

        X ~ Gamma(concentration, rate)
        Y = 1 / X ~ InverseGamma(concentration, rate)

    Args:
        concentration (float or Tensor): shape parameter of the distribution (alpha).
        rate (float or Tensor): rate = 1 / scale of the distribution (beta).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(exponent=neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> InverseGamma:
        return self._expand_transformed(InverseGamma, batch_shape, _instance)

    concentration = _forwarded("base_dist.concentration", "The shape parameter (alpha).")
    rate = _forwarded("base_dist.rate", "The rate parameter (beta).")

    @property
    def mean(self) -> ember.Tensor:
        result = self.rate / (self.concentration - 1)
        return ember.where(self.concentration > 1, result, ember.full_like(result, math.inf))

    @property
    def mode(self) -> ember.Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> ember.Tensor:
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return ember.where(self.concentration > 2, result, ember.full_like(result, math.inf))

    def entropy(self) -> ember.Tensor:
        return (
            self.concentration
            + self.rate.log()
            + self.concentration.lgamma()
            - (1 + self.concentration) * self.concentration.digamma()
        )
