"""Bernoulli distribution."""

from __future__ import annotations

from numbers import Number
from typing import ClassVar

import ember
import ember.nn.functional as F

from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
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
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = ember.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = ember.Size(batch_shape)
        self._expand_probs_or_logits(new, batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

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

    @lazy_property
    def logits(self) -> ember.Tensor:
        """Log-odds of sampling ``1``."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> ember.Tensor:
        """Probability of sampling ``1``."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> ember.Size:
        """The shape of the parameter tensor."""
        return self._param.size()

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
        return values
