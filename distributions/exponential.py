"""Exponential distribution."""

from __future__ import annotations

from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    r"""An exponential distribution parameterized by ``rate``.

    Example::

        >>> m = Exponential(ember.tensor([1.0]))
        >>> m.sample()  # Exponential distributed with rate=1
        tensor([ 0.1046])

    Args:
        rate (float or Tensor): rate = 1 / scale of the distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        self._init_params(("rate",), (rate,), validate_args)

    def expand(self, batch_shape, _instance=None) -> Exponential:
        return self._expand_params(Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> ember.Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> ember.Tensor:
        return ember.zeros_like(self.rate)

    @property
    def stddev(self) -> ember.Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> ember.Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            e = ember.empty(tuple(shape), dtype=self.rate.dtype, device=self.rate.device)
            e.exponential_()
        return e / self.rate

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ember.exp(-self.rate * value)

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        return -ember.log1p(-value) / self.rate

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -ember.log(-x)

    def entropy(self) -> ember.Tensor:
        return 1.0 - ember.log(self.rate)
