"""Poisson distribution."""

from __future__ import annotations

from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    r"""A Poisson distribution parameterized by ``rate``, the rate parameter.

    Samples are nonnegative integers, with a pmf given by
    :math:`\mathrm{rate}^k \frac{e^{-\mathrm{rate}}}{k!}`.

    Example::

        >>> m = Poisson(ember.tensor([4]))
        >>> m.sample()
        tensor([ 3.])

    Args:
        rate (Number, Tensor): the rate parameter.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        self._init_params(("rate",), (rate,), validate_args)

    def expand(self, batch_shape, _instance=None) -> Poisson:
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> ember.Tensor:
        return self.rate

    @property
    def mode(self) -> ember.Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> ember.Tensor:
        return self.rate

    def sample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return ember.poisson(self.rate.expand(shape))

    @property
    def _natural_params(self) -> tuple:
        return (ember.log(self.rate),)

    def _log_normalizer(self, x):
        return ember.exp(x)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()
