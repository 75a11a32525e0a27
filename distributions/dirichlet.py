"""Dirichlet distribution."""

from __future__ import annotations

from typing import ClassVar

import ember
import ember.nn.functional as F

from . import constraints
from .exp_family import ExponentialFamily
from .gamma_sampling import _sample_dirichlet

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    r"""A Dirichlet distribution parameterized by concentration ``concentration``.

    Example::

        >>> m = Dirichlet(ember.tensor([0.5, 0.5]))
        >>> m.sample()  # Dirichlet distributed with concentration [0.5, 0.5]
        tensor([ 0.1046,  0.8954])

    Args:
        concentration (Tensor): concentration parameter of the distribution (often referred to
            as alpha).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "concentration": constraints.independent(constraints.positive, 1)
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: ember.Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        new.concentration = self.concentration.expand(ember.Size(batch_shape) + self.event_shape)
        return self._expand_params(Dirichlet, batch_shape, new)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (
            ember.xlogy(c - 1.0, value).sum(-1) + ember.lgamma(c.sum(-1)) - ember.lgamma(c).sum(-1)
        )

    @property
    def mean(self) -> ember.Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> ember.Tensor:
        c = self.concentration
        concentrationm1 = (c - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, keepdim=True)
        all_small = (c < 1).all(dim=-1, keepdim=True)
        # With every concentration below 1 the density is unbounded at every corner; torch
        # reports the first corner (the argmax of its all-NaN 0/0 row), whatever the sizes.
        corner = F.one_hot(ember.zeros(c.shape[:-1], dtype=ember.int64), c.shape[-1])
        corner = corner.to(mode.dtype)
        return ember.where(all_small, corner, mode)

    @property
    def variance(self) -> ember.Tensor:
        c = self.concentration
        con0 = c.sum(-1, keepdim=True)
        return c * (con0 - c) / (con0.pow(2) * (con0 + 1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - ember.lgamma(x.sum(-1))

    def entropy(self) -> ember.Tensor:
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (
            ember.lgamma(c).sum(-1)
            - ember.lgamma(a0)
            - (k - a0) * ember.digamma(a0)
            - ((c - 1.0) * ember.digamma(c)).sum(-1)
        )
