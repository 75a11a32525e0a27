"""Half-Cauchy distribution: the absolute value of a centered Cauchy."""

from __future__ import annotations

import math

import ember

from .cauchy import Cauchy
from .transformed_distribution import _HalfDistribution

__all__ = ["HalfCauchy"]


class HalfCauchy(_HalfDistribution):
    r"""A half-Cauchy distribution parameterized by ``scale``::

        X ~ Cauchy(0, scale)
        Y = |X| ~ HalfCauchy(scale)

    Args:
        scale (float or Tensor): scale of the full Cauchy distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    _base = Cauchy

    def expand(self, batch_shape, _instance=None) -> HalfCauchy:
        return self._expand_transformed(HalfCauchy, batch_shape, _instance)

    @property
    def mean(self) -> ember.Tensor:
        return ember.full(
            tuple(self._extended_shape()),
            math.inf,
            dtype=self.scale.dtype,
            device=self.scale.device,
            names=self.scale._names,  # shaped and named like the batch (spec 4.2)
        )

    @property
    def variance(self) -> ember.Tensor:
        return self.base_dist.variance

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        # unlike HalfNormal (as in torch), a number is accepted here
        value = ember.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.scale.device)
        return super().log_prob(value)
