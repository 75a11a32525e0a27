"""Gamma distribution."""

from __future__ import annotations

from typing import ClassVar

import ember

from . import constraints
from .exp_family import ExponentialFamily
from .gamma_sampling import _standard_gamma

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    r"""A Gamma distribution parameterized by shape ``concentration`` and ``rate``.

    Example::

        >>> m = Gamma(ember.tensor([1.0]), ember.tensor([1.0]))
        >>> m.sample()  # Gamma distributed with concentration=1 and rate=1
        tensor([ 0.1046])

    Args:
        concentration (float or Tensor): shape parameter of the distribution (often referred to
            as alpha).
        rate (float or Tensor): rate parameter, 1 / scale (often referred to as beta).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self._init_params(("concentration", "rate"), (concentration, rate), validate_args)

    def expand(self, batch_shape, _instance=None) -> Gamma:
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> ember.Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> ember.Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> ember.Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=ember.finfo(value.dtype).tiny)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        value = ember.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            ember.xlogy(self.concentration, self.rate)
            + ember.xlogy(self.concentration - 1, value)
            - self.rate * value
            - ember.lgamma(self.concentration)
        )

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x + 1) + (x + 1) * ember.log(-y.reciprocal())

    def entropy(self) -> ember.Tensor:
        return (
            self.concentration
            - ember.log(self.rate)
            + ember.lgamma(self.concentration)
            + (1.0 - self.concentration) * ember.digamma(self.concentration)
        )

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ember.special.gammainc(self.concentration, self.rate * value)
