"""torch.utils.checkpoint: activation checkpointing.

ember computes the wrapped function normally and keeps its activations: values and gradients are
exactly those of the checkpointed run, only the memory saving does not happen.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["checkpoint", "checkpoint_sequential"]


def _check_reentrant(use_reentrant) -> None:
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: pass use_reentrant explicitly (use_reentrant=False is the "
            "recommended variant)",
            UserWarning,
            stacklevel=3,
        )


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable | None = None,
    determinism_check: str = "default",
    debug: bool = False,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args, **kwargs)`` (ember keeps the activations: no recomputation)."""
    _check_reentrant(use_reentrant)
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not None:
        fwd_ctx, _ = context_fn()
        with fwd_ctx:
            return function(*args, **kwargs)
    return function(*args, **kwargs)


def checkpoint_sequential(
    functions, segments: int, input, use_reentrant: bool | None = None, **kwargs: Any
):
    """Run a Sequential (or list of modules/functions) on ``input``, segment by segment."""
    _check_reentrant(use_reentrant)
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    for f in functions:
        input = f(input)
    return input
