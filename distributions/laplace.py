"""Laplace distribution."""

from __future__ import annotations

from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution

__all__ = ["Laplace"]


class Laplace(Distribution):
    r"""A Laplace distribution parameterized by ``loc`` and ``scale``.

    Example::

        >>> m = Laplace(ember.tensor([0.0]), ember.tensor([1.0]))
        >>> m.sample()  # Laplace distributed with loc=0, scale=1
        tensor([ 0.1046])

    Args:
        loc (float or Tensor): mean of the distribution.
        scale (float or Tensor): scale of the distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self._init_params(("loc", "scale"), (loc, scale), validate_args)

    def expand(self, batch_shape, _instance=None) -> Laplace:
        return self._expand_params(Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> ember.Tensor:
        return self.loc

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @property
    def variance(self) -> ember.Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> ember.Tensor:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = self._extended_shape(sample_shape)
        eps = ember.finfo(self.loc.dtype).eps
        with no_grad():
            u = ember.empty(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
            u.uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * ember.log1p(-u.abs())

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -ember.log(2 * self.scale) - ember.abs(value - self.loc) / self.scale

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * ember.expm1(-d.abs() / self.scale)

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ember.log1p(-2 * term.abs())

    def entropy(self) -> ember.Tensor:
        return 1 + ember.log(2 * self.scale)
