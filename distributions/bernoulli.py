"""Bernoulli distribution."""

from __future__ import annotations

from typing import ClassVar

import ember
import ember.nn.functional as F

from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _name_support, _ProbsOrLogitsParam, broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(_ProbsOrLogitsParam, ExponentialFamily):
    r"""A Bernoulli distribution parameterized by :attr:`probs` or :attr:`logits` (but not both).

    Samples are binary (0 or 1): 1 with probability ``p`` and 0 with probability ``1 - p``.

    Example::

        >>> m = Bernoulli(ember.tensor([0.3]))
        >>> m.sample()  # 30% chance 1; 70% chance 0
        tensor([ 0.])

    Args:
        probs (Number, Tensor): the probability of sampling ``1``.
        logits (Number, Tensor): the log-odds of sampling ``1``.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        # a Number parameter gives a 0-d tensor, so its size is the empty batch shape
        super().__init__(
            self._set_probs_or_logits(probs, logits).size(), validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None) -> Bernoulli:
        return self._expand_probs_or_logits(Bernoulli, batch_shape, _instance)

    @property
    def mean(self) -> ember.Tensor:
        return self.probs

    @property
    def mode(self) -> ember.Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ember.where(self.probs == 0.5, ember.full_like(mode, float("nan")), mode)

    @property
    def variance(self) -> ember.Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> ember.Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ember.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> ember.Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def _natural_params(self) -> tuple:
        return (ember.logit(self.probs),)

    def _log_normalizer(self, x):
        return ember.log1p(ember.exp(x))

    def enumerate_support(self, expand: bool = True) -> ember.Tensor:
        values = ember.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return _name_support(values, self._param)
