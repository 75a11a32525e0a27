"""torch.utils.hooks: the handle hooks return, and the serialization warnings about hooks."""

from __future__ import annotations

import warnings
from collections.abc import Callable

from ..core.tensor import Tensor
from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f: Callable) -> Callable:
    """Mark a tensor hook as not meant to be saved: ``warn_if_has_hooks`` stays quiet about it."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor: Tensor) -> list:
    """The backward hooks registered on ``tensor`` (not retain_grad's own)."""
    ex = tensor._extra or {}
    if tensor._grad_fn is None:
        hooks = ex.get("hooks", ())
    else:
        hooks = (tensor._grad_fn.hooks or {}).get(ex.get("nr", 0), ())
    return [h for h in hooks if h is not ex.get("retain_hook")]


def warn_if_has_hooks(tensor: Tensor) -> None:
    """Warn for each backward hook of ``tensor`` that serialization will drop."""
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(
                f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, "
                "you can decorate the function with @torch.utils.hooks.unserializable_hook to "
                "suppress this warning",
                stacklevel=2,
            )
