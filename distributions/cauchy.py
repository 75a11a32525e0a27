"""Cauchy (Lorentz) distribution."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    r"""Samples from a Cauchy (Lorentz) distribution: the ratio of independent normally
    distributed random variables with means ``0``.

    Example::

        >>> m = Cauchy(ember.tensor([0.0]), ember.tensor([1.0]))
        >>> m.sample()  # sample from a Cauchy distribution with loc=0 and scale=1
        tensor([ 2.3214])

    Args:
        loc (float or Tensor): mode or median of the distribution.
        scale (float or Tensor): half width at half maximum.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self._init_params(("loc", "scale"), (loc, scale), validate_args)

    def expand(self, batch_shape, _instance=None) -> Cauchy:
        return self._expand_params(Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> ember.Tensor:
        # undefined everywhere, but shaped (and named: spec 4.2) like the batch
        return ember.full(
            tuple(self._extended_shape()),
            math.nan,
            dtype=self.loc.dtype,
            device=self.loc.device,
            names=self.loc._names,
        )

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @property
    def variance(self) -> ember.Tensor:
        return ember.full(
            tuple(self._extended_shape()),
            math.inf,
            dtype=self.loc.dtype,
            device=self.loc.device,
            names=self.loc._names,
        )

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            eps = ember.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - ((value - self.loc) / self.scale).pow(2).log1p()
        )

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> ember.Tensor:
        return math.log(4 * math.pi) + self.scale.log()
