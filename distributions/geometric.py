"""Geometric distribution: the number of failures before the first success."""

from __future__ import annotations

from typing import ClassVar

import ember
import ember.nn.functional as F

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution, _error_repr
from .utils import _ProbsOrLogits, broadcast_all

__all__ = ["Geometric"]


class Geometric(_ProbsOrLogits, Distribution):
    r"""A Geometric distribution parameterized by :attr:`probs`, the probability of success of
    each Bernoulli trial; samples are the number of failures before the first success,
    :math:`P(X=k) = (1-p)^{k} p, k = 0, 1, ...`.

    Example::

        >>> m = Geometric(ember.tensor([0.3]))
        >>> m.sample()  # underlying Bernoulli has 30% chance 1; 70% chance 0
        tensor([ 2.])

    Args:
        probs (Number, Tensor): the probability of sampling ``1``; in (0, 1].
        logits (Number, Tensor): the log-odds of sampling ``1``.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        super().__init__(
            self._set_probs_or_logits(probs, logits).size(), validate_args=validate_args
        )
        if self._validate_args and probs is not None:
            # unit_interval admits 0, which is not a valid success probability
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value.data[~valid]
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {_error_repr(self)} "
                    f"to be positive but found invalid values:\n{invalid_value}"
                )

    def expand(self, batch_shape, _instance=None) -> Geometric:
        return self._expand_probs_or_logits(Geometric, batch_shape, _instance)

    @property
    def mean(self) -> ember.Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> ember.Tensor:
        return ember.zeros_like(self.probs)

    @property
    def variance(self) -> ember.Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        tiny = ember.finfo(self.probs.dtype).tiny
        with no_grad():
            u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # 0 * log(0) = 0 at probs == 1, value == 0
        probs = ember.where((probs == 1) & (value == 0), ember.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> ember.Tensor:
        return (
            F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
            / self.probs
        )
