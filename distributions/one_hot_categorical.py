"""One-hot categorical distribution."""

from __future__ import annotations

from typing import ClassVar

import ember
import ember.nn.functional as F

from . import constraints
from .categorical import _CategoricalWrapper, _name_events
from .distribution import Distribution
from .utils import _name_support

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(_CategoricalWrapper, Distribution):
    r"""A one-hot categorical distribution parameterized by :attr:`probs` or :attr:`logits`.

    Samples are one-hot coded vectors of size ``probs.size(-1)``; see :class:`Categorical` for
    the parameters' meaning.

    Example::

        >>> m = OneHotCategorical(ember.tensor([0.25, 0.25, 0.25, 0.25]))
        >>> m.sample()  # equal probability of 0, 1, 2, 3
        tensor([ 0.,  0.,  0.,  1.])

    Args:
        probs (Tensor): event probabilities.
        logits (Tensor): event log probabilities (unnormalized).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        batch_shape, event_shape = self._set_categorical(probs, logits)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> OneHotCategorical:
        return self._expand_params(OneHotCategorical, batch_shape, _instance, ("_categorical",))

    @property
    def mean(self) -> ember.Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> ember.Tensor:
        probs = self._categorical.probs
        mode = probs.argmax(dim=-1)
        return _name_events(F.one_hot(mode, num_classes=probs.shape[-1]).to(probs.dtype), probs)

    @property
    def variance(self) -> ember.Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=()) -> ember.Tensor:
        sample_shape = ember.Size(sample_shape)
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return _name_events(F.one_hot(indices, num_events).to(probs.dtype), probs)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self) -> ember.Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> ember.Tensor:
        n = self.event_shape[0]
        values = ember.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return _name_support(values, self._param)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    r"""A reparameterizable :class:`OneHotCategorical` via the straight-through gradient
    estimator of Bengio et al. (2013): ``rsample`` returns the one-hot sample, with gradients
    flowing as if it were ``probs``."""

    has_rsample = True

    def rsample(self, sample_shape=()) -> ember.Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs  # cached by Categorical
        return samples + (probs - probs.detach())
