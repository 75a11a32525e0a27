"""Generalized Pareto distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

import ember

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    r"""A Generalized Pareto distribution parameterized by ``loc``, ``scale`` and
    ``concentration`` (xi): with :math:`z = (x - loc) / scale`, the density is
    :math:`\frac{1}{scale}(1 + \xi z)^{-1/\xi - 1}` (:math:`\frac{1}{scale} e^{-z}` at
    :math:`\xi = 0`), supported on :math:`[loc, \infty)` for :math:`\xi \ge 0` and on
    :math:`[loc, loc - scale/\xi]` for :math:`\xi < 0`.

    Example::

        >>> m = GeneralizedPareto(ember.tensor([0.1]), ember.tensor([2.0]), ember.tensor([0.4]))
        >>> m.sample()  # sample from a Generalized Pareto distribution
        tensor([ 1.5623])

    Args:
        loc (float or Tensor): location parameter of the distribution.
        scale (float or Tensor): scale parameter of the distribution.
        concentration (float or Tensor): shape parameter of the distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = ember.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> GeneralizedPareto:
        return self._expand_params(
            GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration")
        )

    def _safe_c(self):
        # xi with the (near-)zeros replaced, for the formulas that divide by it: |xi| <= 1e-8
        # (torch's isclose(xi, 0)) takes the exponential limit
        c = self.concentration
        zero = c.abs() <= 1e-8
        return zero, ember.where(zero, ember.ones_like(c), c)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_c()
        # at xi = -1 (a uniform density) the exponent is exactly 0: take it as is, like torch,
        # rather than 0 * log1p(-z), which is NaN at the upper end of the support
        y = 1 / c + 1
        log_kernel = ember.where(y == 0, y, y * ember.log1p(c * z))
        return -self.scale.log() - ember.where(zero, z, log_kernel)

    def log_survival_function(self, value: ember.Tensor) -> ember.Tensor:
        r"""The log of the survival function :math:`\log P(X > value)`, accurate in the tail."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_c()
        return ember.where(zero, -z, -ember.log1p(c * z) / c)

    def log_cdf(self, value: ember.Tensor) -> ember.Tensor:
        r"""The log of the cumulative distribution function :math:`\log P(X \le value)`."""
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        return ember.exp(self.log_cdf(value))

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        zero, c = self._safe_c()
        log1m_u = ember.log1p(-value)
        z = ember.where(zero, -log1m_u, ember.expm1(-c * log1m_u) / c)
        return self.loc + self.scale * z

    @property
    def mean(self) -> ember.Tensor:
        c = self.concentration
        ok = c < 1
        safe = ember.where(ok, c, ember.zeros_like(c))
        mean = self.loc + self.scale / (1 - safe)
        return ember.where(ok, mean, ember.full_like(mean, math.nan))

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @property
    def variance(self) -> ember.Tensor:
        c = self.concentration
        ok = c < 0.5
        safe = ember.where(ok, c, ember.zeros_like(c))
        var = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))
        return ember.where(ok, var, ember.full_like(var, math.nan))

    def entropy(self) -> ember.Tensor:
        return self.scale.log() + self.concentration + 1

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        neg = c < 0
        safe = ember.where(neg, c, -ember.ones_like(c))
        upper = ember.where(neg, self.loc - self.scale / safe, ember.full_like(c, math.inf))
        return constraints.interval(self.loc, upper)
