"""Normal (Gaussian) distribution."""

from __future__ import annotations

import math
from numbers import Real
from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _standard_normal

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    r"""A normal (Gaussian) distribution parameterized by ``loc`` and ``scale``.

    Example::

        >>> m = Normal(ember.tensor([0.0]), ember.tensor([1.0]))
        >>> m.sample()  # normally distributed with loc=0 and scale=1
        tensor([ 0.1046])

    Args:
        loc (float or Tensor): mean of the distribution (often referred to as mu).
        scale (float or Tensor): standard deviation of the distribution (often referred to as
            sigma).
        validate_args (bool, optional): whether to validate arguments. Default: None (the class
            default).
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self._init_params(("loc", "scale"), (loc, scale), validate_args)

    def expand(self, batch_shape, _instance=None) -> Normal:
        return self._expand_params(Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> ember.Tensor:
        return self.loc

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @property
    def stddev(self) -> ember.Tensor:
        return self.scale

    @property
    def variance(self) -> ember.Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape=()) -> ember.Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ember.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    @property
    def _natural_params(self) -> tuple:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * ember.log(-math.pi / y)

    def entropy(self) -> ember.Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + ember.log(self.scale)
