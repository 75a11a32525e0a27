"""Binomial distribution."""

from __future__ import annotations

from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import _name_support, _ProbsOrLogitsParam

__all__ = ["Binomial"]


def _clamp_by_zero(x: ember.Tensor) -> ember.Tensor:
    # like x.clamp(min=0) but with gradient 0.5 at x == 0
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_ProbsOrLogitsParam, Distribution):
    r"""A Binomial distribution parameterized by ``total_count`` and either :attr:`probs` or
    :attr:`logits` (but not both). ``total_count`` must be broadcastable with
    :attr:`probs`/:attr:`logits`.

    Example::

        >>> m = Binomial(100, ember.tensor([0, 0.2, 0.8, 1]))
        >>> x = m.sample()
        tensor([   0.,   22.,   71.,  100.])

    Args:
        total_count (int or Tensor): number of Bernoulli trials.
        probs (Tensor): event probabilities.
        logits (Tensor): event log-odds.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self, total_count=1, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        param = self._set_probs_or_logits(probs, logits, total_count)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Binomial:
        return self._expand_probs_or_logits(
            Binomial, batch_shape, _instance, names=("total_count",)
        )

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> ember.Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> ember.Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> ember.Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            p = self.probs.expand(shape)
            return ember.binomial(self.total_count.expand(shape).to(p.dtype), p)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = ember.lgamma(n + 1)
        log_factorial_k = ember.lgamma(value + 1)
        log_factorial_nmk = ember.lgamma(n - value + 1)
        # n * log(1 + exp(logits)), computed stably
        normalize_term = (
            n * _clamp_by_zero(self.logits)
            + n * ember.log1p(ember.exp(-ember.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> ember.Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> ember.Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = ember.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return _name_support(values, self._param)
