"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy caching."""

from __future__ import annotations

from numbers import Number

import ember

from ..autograd.grad_mode import enable_grad

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values) -> tuple:
    r"""Broadcast the given values (Tensors or numbers) against each other.

    Numbers become tensors with the dtype and device of the first tensor argument (or the default
    dtype when all are numbers).

    Args:
        values: Tensors, or objects with ``__torch_function__``, or Python numbers.

    Raises:
        ValueError: if a value is neither a Tensor nor a number.
    """
    if not all(isinstance(v, (ember.Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of numbers.Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, ember.Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, ember.Tensor)), None)
        kw = (
            {"dtype": ember.get_default_dtype()}
            if ref is None
            else {"dtype": ref.dtype, "device": ref.device}
        )
        values = [v if isinstance(v, ember.Tensor) else ember.tensor(v, **kw) for v in values]
    return tuple(ember.broadcast_tensors(*values))


def _standard_normal(shape, dtype, device) -> ember.Tensor:
    return ember.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value: ember.Tensor, dim: int) -> ember.Tensor:
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: ember.Tensor, is_binary: bool = False) -> ember.Tensor:
    r"""Convert logits to probabilities: a sigmoid when ``is_binary``, else a softmax over the
    last dimension."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def clamp_probs(probs: ember.Tensor) -> ember.Tensor:
    r"""Clamp probabilities to the open interval ``(eps, 1 - eps)`` of their dtype."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: ember.Tensor, is_binary: bool = False) -> ember.Tensor:
    r"""Convert probabilities to logits: log-odds when ``is_binary``, else log-probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(ps_clamped) - ember.log1p(-ps_clamped)
    return ember.log(ps_clamped)


class lazy_property:
    r"""A property computed on first access and then cached in the instance's ``__dict__``.

    The computation runs with gradients enabled, so a cached value stays connected to the graph.
    """

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
