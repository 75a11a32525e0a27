"""Gumbel (type-I extreme value) distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

import ember

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    r"""Samples from a Gumbel distribution: ``loc - scale * log(-log(U))`` for ``U`` uniform on
    (0, 1).

    Examples::

        >>> m = Gumbel(ember.tensor([1.0]), ember.tensor([2.0]))
        >>> m.sample()  # sample from Gumbel distribution with loc=1, scale=2
        tensor([ 1.0124])

    Args:
        loc (float or Tensor): location parameter of the distribution.
        scale (float or Tensor): scale parameter of the distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = ember.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(
                ember.full_like(self.loc, finfo.tiny),
                ember.full_like(self.loc, 1 - finfo.eps),
                validate_args=validate_args,
            )
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-ember.ones_like(self.scale)),
            ExpTransform().inv,
            AffineTransform(loc=self.loc, scale=-self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Gumbel:
        return self._expand_transformed(Gumbel, batch_shape, _instance, ("loc", "scale"))

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> ember.Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @property
    def stddev(self) -> ember.Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> ember.Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> ember.Tensor:
        return self.scale.log() + (1 + euler_constant)
