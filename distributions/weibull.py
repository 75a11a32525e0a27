"""Two-parameter Weibull distribution."""

from __future__ import annotations

from typing import ClassVar

import ember

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    r"""Samples from a two-parameter Weibull distribution: ``scale * E ** (1 / concentration)``
    for ``E`` a standard exponential.

    Example::

        >>> m = Weibull(ember.tensor([1.0]), ember.tensor([1.0]))
        >>> m.sample()  # sample from a Weibull distribution with scale=1, concentration=1
        tensor([ 0.4784])

    Args:
        scale (float or Tensor): scale parameter of the distribution (lambda).
        concentration (float or Tensor): concentration parameter of the distribution (k/shape).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "scale": constraints.positive,
        "concentration": constraints.positive,
    }
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ember.ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> ember.Tensor:
        return self.scale * ember.exp(ember.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> ember.Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self) -> ember.Tensor:
        return self.scale.pow(2) * (
            ember.exp(ember.lgamma(1 + 2 * self.concentration_reciprocal))
            - ember.exp(2 * ember.lgamma(1 + self.concentration_reciprocal))
        )

    def entropy(self) -> ember.Tensor:
        return (
            euler_constant * (1 - self.concentration_reciprocal)
            + ember.log(self.scale * self.concentration_reciprocal)
            + 1
        )
