"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_."""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable

from ...autograd.grad_mode import no_grad
from ...core import linalg as _linalg
from ...core.layout import sparse_coo
from ...core.ops.creation import tensor as _tensor
from ...core.ops.foreach import _foreach_norm
from ...core.ops.joining import stack as _stack
from ...core.registry import NonStridedError
from ...core.tensor import Tensor

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]


def _sparse_coo_error(aten_name, tensors) -> None:
    """torch's dispatcher error for a sparse COO gradient (its first sentence: the rest lists
    torch's backends), raised when one of ``tensors`` is one."""
    for t in tensors:
        if t.layout is sparse_coo:
            backend = "SparseCUDA" if t.device.type == "cuda" else "SparseCPU"
            raise NotImplementedError(
                f"Could not run 'aten::{aten_name}' with arguments from the '{backend}' backend. "
                "This could be because the operator doesn't exist for this backend (ember: call "
                ".to_dense() on the gradients first)."
            ) from None


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type`` norm of all ``tensors`` together (as if concatenated into one vector)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _tensor(0.0)
    with no_grad():
        # norm of the per-tensor norms == norm of the concatenation, for every p-norm and inf;
        # every ember device has the foreach form, which torch picks unless foreach=False
        try:
            if foreach is False:
                norms = [_linalg.vector_norm(t, norm_type) for t in tensors]
            else:
                norms = _foreach_norm(tensors, norm_type)
        except NonStridedError:
            _sparse_coo_error("linalg_vector_norm", tensors)
            raise
        dev = norms[0].device
        total = _linalg.vector_norm(
            _stack([n if n.device == dev else n.to(dev) for n in norms]), norm_type
        )
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        if not isinstance(total_norm, Tensor):
            total_norm = _tensor(float(total_norm))
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef if coef.device == g.device else coef.to(g.device))


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Clip the gradients of ``parameters`` in place so their total norm is at most ``max_norm``.

    Returns the total norm of the gradients before clipping (a 0-dim tensor)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        was_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator is read once, for both passes below
        if was_generator and not parameters:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=2,
            )
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor],
    clip_value: float,
    foreach: bool | None = None,
) -> None:
    """Clamp every gradient of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                try:
                    p.grad.clamp_(min=-clip_value, max=clip_value)
                except NonStridedError:
                    # (torch's foreach path clamps with clamp_min_ first)
                    _sparse_coo_error("clamp_" if foreach is False else "clamp_min_", [p.grad])
                    raise
