"""Kumaraswamy distribution."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """The n-th moment ``E[X^n] = b B(1 + n/a, b)`` of Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    log_value = ember.lgamma(arg1) + ember.lgamma(b) - ember.lgamma(arg1 + b)
    return b * ember.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    r"""Samples from a Kumaraswamy distribution:
    ``(1 - (1 - U) ** (1 / concentration0)) ** (1 / concentration1)`` for ``U`` uniform.

    Example::

        >>> m = Kumaraswamy(ember.tensor([1.0]), ember.tensor([1.0]))
        >>> m.sample()  # sample from a Kumaraswamy distribution with concentrations 1 and 1
        tensor([ 0.1729])

    Args:
        concentration1 (float or Tensor): 1st concentration parameter of the distribution
            (often referred to as alpha).
        concentration0 (float or Tensor): 2nd concentration parameter of the distribution
            (often referred to as beta).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            ember.full_like(self.concentration0, 0),
            ember.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Kumaraswamy:
        return self._expand_transformed(
            Kumaraswamy, batch_shape, _instance, ("concentration1", "concentration0")
        )

    @property
    def mean(self) -> ember.Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> ember.Tensor:
        # ((a - 1) / (a b - 1)) ** (1 / a), defined for a >= 1, b >= 1 (not both 1): NaN
        # elsewhere. (torch 2.13 evaluates a formula that is NaN for every b > 1.)
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        bad = (a < 1) | (b < 1) | ((a == 1) & (b == 1))
        return ember.where(bad, ember.full_like(log_mode, math.nan), log_mode.exp())

    @property
    def variance(self) -> ember.Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - ember.pow(self.mean, 2)

    def entropy(self) -> ember.Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = ember.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - ember.log(self.concentration1) - ember.log(self.concentration0)
