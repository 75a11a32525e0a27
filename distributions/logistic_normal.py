"""Logistic-normal distribution: a normal pushed onto the simplex by stick breaking."""

from __future__ import annotations

from typing import ClassVar

import ember

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    r"""A logistic-normal distribution parameterized by ``loc`` and ``scale`` that define the
    base Normal distribution, transformed by the :class:`StickBreakingTransform`::

        X ~ LogisticNormal(loc, scale)
        Y = log(X / (1 - X.cumsum(-1)))[..., :-1] ~ Normal(loc, scale)

    Example::

        >>> # logistic-normal distributed with mean=(0, 0, 0) and stddev=(1, 1, 1)
        >>> # of the base Normal distribution
        >>> m = LogisticNormal(ember.tensor([0.0] * 3), ember.tensor([1.0] * 3))
        >>> m.sample()
        tensor([ 0.7653,  0.0341,  0.0579,  0.1427])

    Args:
        loc (float or Tensor): mean of the base distribution.
        scale (float or Tensor): standard deviation of the base distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LogisticNormal:
        return self._expand_transformed(LogisticNormal, batch_shape, _instance)

    @property
    def loc(self) -> ember.Tensor:
        """Mean of the base Normal distribution."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> ember.Tensor:
        """Standard deviation of the base Normal distribution."""
        return self.base_dist.base_dist.scale
