"""Categorical distribution over ``{0, ..., K-1}``."""

from __future__ import annotations

from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import _check_probs_or_logits, _forwarded, _name_support, _ProbsOrLogitsParam

__all__ = ["Categorical"]


class Categorical(_ProbsOrLogitsParam, Distribution):
    r"""A categorical distribution parameterized by either :attr:`probs` or :attr:`logits` (but
    not both).

    Samples are integers from :math:`\{0, \ldots, K-1\}` where ``K`` is ``probs.size(-1)``.
    ``probs`` must be non-negative, finite and have a non-zero sum; it is normalized to sum to 1
    along the last dimension. ``logits`` are unnormalized log probabilities (normalized so that
    the resulting probabilities sum to 1 along the last dimension).

    Example::

        >>> m = Categorical(ember.tensor([0.25, 0.25, 0.25, 0.25]))
        >>> m.sample()  # equal probability of 0, 1, 2, 3
        tensor(3)

    Args:
        probs (Tensor): event probabilities.
        logits (Tensor): event log probabilities (unnormalized).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.simplex,
        "logits": constraints.real_vector,
    }
    has_enumerate_support = True
    _is_binary = False

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        _check_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else ember.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Categorical:
        return self._expand_probs_or_logits(
            Categorical, batch_shape, _instance, copy=("_num_events",)
        )

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> ember.Tensor:
        pn = self._param._names
        return ember.full(
            tuple(self._extended_shape()),
            float("nan"),
            dtype=self.probs.dtype,
            device=self.probs.device,
            # undefined, but shaped and named like the batch (spec 4.2): the events dim goes
            names=None if pn is None else pn[:-1],
        )

    @property
    def mode(self) -> ember.Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> ember.Tensor:
        return self.mean

    def sample(self, sample_shape=()) -> ember.Tensor:
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = ember.multinomial(probs_2d, sample_shape.numel(), True).T
        out = samples_2d.reshape(tuple(self._extended_shape(sample_shape)))
        pn = self._param._names
        if pn is not None and any(n is not None for n in pn[:-1]):
            # one draw per batch element: the batch dims keep the parameter's names (spec 4.2,
            # as the other distributions' samples do); the sample dims are new (unnamed)
            out = out.rename(*((None,) * len(sample_shape) + tuple(pn[:-1])))
        return out

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ember.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> ember.Tensor:
        min_real = ember.finfo(self.logits.dtype).min
        logits = ember.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True) -> ember.Tensor:
        num_events = self._num_events
        values = ember.arange(num_events, dtype=ember.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return _name_support(values, self._param)


class _CategoricalWrapper:
    r"""Mixin of the families built on a :class:`Categorical` (``_categorical``): its
    parameters, seen through the wrapper."""

    logits = _forwarded("_categorical.logits", "Normalized log probabilities.")
    probs = _forwarded("_categorical.probs", "Normalized probabilities.")
    param_shape = _forwarded("_categorical.param_shape", "The shape of the parameter tensor.")
    _param = _forwarded("_categorical._param")
    _new = _forwarded("_categorical._new")

    def _set_categorical(self, probs, logits) -> tuple:
        """Build ``_categorical``; return the (batch_shape, event_shape) of the wrapper."""
        self._categorical = Categorical(probs, logits)
        return self._categorical.batch_shape, self._categorical.param_shape[-1:]


def _name_events(out: ember.Tensor, param: ember.Tensor) -> ember.Tensor:
    """A (..., events) one-hot or count sample: its events dim is the parameter's (named so)."""
    pn = param._names
    if pn is None or pn[-1] is None:
        return out
    return out.rename(*(out.names[:-1] + (pn[-1],)))
