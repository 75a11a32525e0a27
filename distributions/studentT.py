"""Student's t-distribution (module named like torch.distributions.studentT)."""

# ruff: noqa: N999

from __future__ import annotations

import math
from typing import ClassVar

import ember

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    r"""A Student's t-distribution parameterized by degrees of freedom ``df``, mean ``loc`` and
    scale ``scale``.

    Example::

        >>> m = StudentT(ember.tensor([2.0]))
        >>> m.sample()  # Student's t-distributed with degrees of freedom=2
        tensor([ 0.1046])

    Args:
        df (float or Tensor): degrees of freedom.
        loc (float or Tensor): mean of the distribution.
        scale (float or Tensor): scale of the distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> StudentT:
        names = ("df", "loc", "scale", "_chi2")
        return self._expand_params(StudentT, batch_shape, _instance, names)

    @property
    def mean(self) -> ember.Tensor:
        return ember.where(self.df > 1, self.loc, ember.full_like(self.loc, math.nan))

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @property
    def variance(self) -> ember.Tensor:
        df = self.df
        # finite for df > 2, infinite for 1 < df <= 2, undefined for df <= 1
        safe = ember.where(df > 2, df, ember.full_like(df, 3.0))
        finite = self.scale.pow(2) * safe / (safe - 2)
        out = ember.where(df > 2, finite, ember.full_like(finite, math.inf))
        return ember.where(df > 1, out, ember.full_like(out, math.nan))

    def rsample(self, sample_shape=()) -> ember.Tensor:
        # X ~ Normal(0, 1), Z ~ Chi2(df): Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * ember.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + ember.lgamma(0.5 * self.df)
            - ember.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * ember.log1p(y**2.0 / self.df) - Z

    def entropy(self) -> ember.Tensor:
        lbeta = ember.lgamma(0.5 * self.df) + math.lgamma(0.5) - ember.lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5
            * (self.df + 1)
            * (ember.digamma(0.5 * (self.df + 1)) - ember.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
