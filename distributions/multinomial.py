"""Multinomial distribution."""

from __future__ import annotations

from typing import ClassVar

import ember
import ember.nn.functional as F

from . import constraints
from .binomial import Binomial
from .categorical import _CategoricalWrapper, _name_events
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_CategoricalWrapper, Distribution):
    r"""A Multinomial distribution parameterized by ``total_count`` and either :attr:`probs` or
    :attr:`logits` (but not both). The innermost dimension of :attr:`probs` indexes over
    categories; all other dimensions index over batches.

    ``total_count`` need not be specified if only :meth:`log_prob` is called (see example
    below). ``probs`` must be non-negative, finite and have a non-zero sum; it is normalized to
    sum to 1 along the last dimension.

    Example::

        >>> m = Multinomial(100, ember.tensor([1.0, 1.0, 1.0, 1.0]))
        >>> x = m.sample()  # equal probability of 0, 1, 2, 3
        tensor([ 21.,  24.,  30.,  25.])
        >>> Multinomial(probs=ember.tensor([1.0, 1.0, 1.0, 1.0])).log_prob(x)
        tensor([-4.1338])

    Args:
        total_count (int): number of trials.
        probs (Tensor): event probabilities.
        logits (Tensor): event log probabilities (unnormalized).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    total_count: int

    @property
    def mean(self) -> ember.Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> ember.Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(
        self, total_count: int = 1, probs=None, logits=None, validate_args: bool | None = None
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        batch_shape, event_shape = self._set_categorical(probs, logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        new._binomial = self._binomial.expand(ember.Size(batch_shape) + self.event_shape)
        return self._expand_params(
            Multinomial, batch_shape, new, names=("_categorical",), copy=("total_count",)
        )

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    def sample(self, sample_shape=()) -> ember.Tensor:
        sample_shape = ember.Size(sample_shape)
        n, k = self.total_count, self._categorical._num_events
        samples = self._categorical.sample(ember.Size((n,)) + sample_shape)
        # count the draws of each category: one-hot, summed over the trials (dim 0)
        if n == 0:
            shape = tuple(self._extended_shape(sample_shape))
            return ember.zeros(shape, dtype=self.probs.dtype, device=self.probs.device)
        counts = F.one_hot(samples, k).sum(0)
        return _name_events(counts.type_as(self.probs), self.probs)

    def entropy(self) -> ember.Tensor:
        n = ember.tensor(self.total_count, dtype=self.probs.dtype, device=self.probs.device)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = ember.exp(self._binomial.log_prob(support))
        weights = ember.lgamma(support + 1)
        cat_entropy = self._categorical.entropy()
        return n * cat_entropy - ember.lgamma(n + 1) + (binomial_probs * weights).sum(0).sum(-1)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = ember.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ember.lgamma(value + 1).sum(-1)
        # a zero count of an impossible category contributes 0, not 0 * -inf
        logits = ember.where(
            (value == 0) & (logits == -float("inf")), ember.zeros_like(logits), logits
        )
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
