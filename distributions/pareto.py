"""Pareto type-1 distribution."""

from __future__ import annotations

from typing import ClassVar

import ember

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    r"""Samples from a Pareto Type 1 distribution: ``scale * exp(E)`` for ``E`` exponential with
    rate ``alpha``.

    Example::

        >>> m = Pareto(ember.tensor([1.0]), ember.tensor([1.0]))
        >>> m.sample()  # sample from a Pareto distribution with scale=1 and alpha=1
        tensor([ 1.5623])

    Args:
        scale (float or Tensor): scale parameter of the distribution.
        alpha (float or Tensor): shape parameter of the distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "alpha": constraints.positive,
        "scale": constraints.positive,
    }

    def __init__(self, scale, alpha, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Pareto:
        return self._expand_transformed(Pareto, batch_shape, _instance, ("scale", "alpha"))

    @property
    def mean(self) -> ember.Tensor:
        # infinite for alpha <= 1
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> ember.Tensor:
        return self.scale

    @property
    def variance(self) -> ember.Tensor:
        # infinite for alpha <= 2
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> ember.Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
