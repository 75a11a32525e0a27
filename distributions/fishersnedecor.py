"""Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import ClassVar

import ember

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    r"""A Fisher-Snedecor distribution parameterized by ``df1`` and ``df2``.

    Example::

        >>> m = FisherSnedecor(ember.tensor([1.0]), ember.tensor([2.0]))
        >>> m.sample()  # Fisher-Snedecor-distributed with df1=1 and df2=2
        tensor([ 0.2453])

    Args:
        df1 (float or Tensor): degrees of freedom parameter 1.
        df2 (float or Tensor): degrees of freedom parameter 2.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        if isinstance(df1, Number) and isinstance(df2, Number):
            batch_shape = ember.Size()
        else:
            batch_shape = self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> FisherSnedecor:
        names = ("df1", "df2", "_gamma1", "_gamma2")
        return self._expand_params(FisherSnedecor, batch_shape, _instance, names)

    @property
    def mean(self) -> ember.Tensor:
        df2 = self.df2
        safe = ember.where(df2 > 2, df2, ember.full_like(df2, 3.0))
        return ember.where(df2 > 2, safe / (safe - 2), ember.full_like(df2, math.nan))

    @property
    def mode(self) -> ember.Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ember.where(self.df1 > 2, mode, ember.full_like(mode, math.nan))

    @property
    def variance(self) -> ember.Tensor:
        # df2 <= 4 becomes NaN *before* the formula (as torch does), so the gradient w.r.t. df1
        # is NaN there while df2 itself gets a zero gradient.
        df1 = self.df1
        df2 = ember.where(self.df2 > 4, self.df2, ember.full_like(self.df2, math.nan))
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()) -> ember.Tensor:
        # X1 ~ Gamma(df1 / 2, 1 / df1), X2 ~ Gamma(df2 / 2, 1 / df2): Y = X1 / X2 ~ F(df1, df2)
        X1 = self._gamma1.rsample(sample_shape).view(tuple(self._extended_shape(sample_shape)))
        X2 = self._gamma2.rsample(sample_shape).view(tuple(self._extended_shape(sample_shape)))
        tiny = ember.finfo(X2.dtype).tiny
        X2 = X2.clamp(min=tiny)
        Y = X1 / X2
        return Y.clamp(min=tiny)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * ember.log(value)
        t3 = (ct1 + ct2) * ember.log1p(ct3 * value)
        return t1 + t2 - t3
