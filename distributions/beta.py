"""Beta distribution."""

from __future__ import annotations

from numbers import Number, Real
from typing import ClassVar

import ember

from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    r"""A Beta distribution parameterized by ``concentration1`` and ``concentration0``.

    Example::

        >>> m = Beta(ember.tensor([0.5]), ember.tensor([0.5]))
        >>> m.sample()  # Beta distributed with concentration concentration1 and concentration0
        tensor([ 0.1046])

    Args:
        concentration1 (float or Tensor): 1st concentration parameter of the distribution
            (often referred to as alpha).
        concentration0 (float or Tensor): 2nd concentration parameter of the distribution
            (often referred to as beta).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            c1_c0 = ember.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            c1_c0 = ember.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(c1_c0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Beta:
        return self._expand_params(Beta, batch_shape, _instance, ("_dirichlet",))

    @property
    def mean(self) -> ember.Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> ember.Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> ember.Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()) -> ember.Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ember.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x) + ember.lgamma(y) - ember.lgamma(x + y)

    def entropy(self) -> ember.Tensor:
        return self._dirichlet.entropy()

    @property
    def concentration1(self) -> ember.Tensor:
        """The first concentration parameter (alpha)."""
        result = self._dirichlet.concentration[..., 0]
        if isinstance(result, Number):
            return ember.tensor([result])
        return result

    @property
    def concentration0(self) -> ember.Tensor:
        """The second concentration parameter (beta)."""
        result = self._dirichlet.concentration[..., 1]
        if isinstance(result, Number):
            return ember.tensor([result])
        return result
