"""torch.cpu: the cpu device's module (what ``ember.get_device_module('cpu')`` returns).

The cpu runs every op synchronously: synchronize returns at once, its one stream is always idle.
``ember.cpu.amp`` (torch.cpu.amp, deprecated in torch but common) holds ``autocast`` and
``GradScaler`` for the cpu: the same as ``ember.autocast('cpu', ...)`` and
``ember.amp.GradScaler('cpu', ...)``.
"""

from __future__ import annotations

import contextlib
import sys
import types
import warnings
from collections.abc import Iterator
from typing import Any

from .amp import autocast_mode as _autocast_mode
from .amp import grad_scaler as _grad_scaler
from .core import dtype as _dt
from .core.streams import Event, Stream

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "amp",
    "current_device",
    "current_stream",
    "device_count",
    "is_available",
    "is_initialized",
    "set_device",
    "stream",
    "synchronize",
]


def is_available() -> bool:
    """Always True."""
    return True


def is_initialized() -> bool:
    """Always True."""
    return True


def device_count() -> int:
    """One cpu device."""
    return 1


def current_device() -> str:
    """``'cpu'``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Accepted for API compatibility: there is one cpu device."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: cpu ops finish before they return."""


_STREAM: Stream | None = None


def current_stream(device: Any = None) -> Stream:
    """The cpu's one stream."""
    global _STREAM
    if _STREAM is None:
        _STREAM = Stream("cpu")
    return _STREAM


@contextlib.contextmanager
def StreamContext(stream: Stream | None) -> Iterator[None]:
    """Run the block on ``stream``: on the cpu everything runs on its one stream anyway."""
    yield


def stream(stream: Stream | None) -> contextlib.AbstractContextManager:
    """Context manager selecting ``stream`` (see :func:`StreamContext`)."""
    return StreamContext(stream)


class _CpuAutocast(_autocast_mode.autocast):
    """torch.cpu.amp.autocast: ``ember.autocast('cpu', ...)`` (deprecated in torch)."""

    def __init__(
        self, enabled: bool = True, dtype: _dt.dtype = _dt.bfloat16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. "
            "Please use `torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class _CpuGradScaler(_grad_scaler.GradScaler):
    """torch.cpu.amp.GradScaler: ``ember.amp.GradScaler('cpu', ...)`` (deprecated in torch)."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. "
            "Please use `torch.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cpu",
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )


# a real module (not a package file: cpu.py is one file), registered so that `import
# ember.cpu.amp` and the drop-in `from torch.cpu.amp import autocast` find it
amp = types.ModuleType(
    __name__ + ".amp",
    "torch.cpu.amp: autocast and GradScaler for the cpu (see ember.amp; no op runs in a lower "
    "precision on ember).",
)
_CpuAutocast.__name__ = _CpuAutocast.__qualname__ = "autocast"
_CpuGradScaler.__name__ = _CpuGradScaler.__qualname__ = "GradScaler"
_CpuAutocast.__module__ = _CpuGradScaler.__module__ = amp.__name__
amp.autocast = _CpuAutocast
amp.GradScaler = _CpuGradScaler
amp.__all__ = ["GradScaler", "autocast"]
sys.modules[amp.__name__] = amp
# importing a submodule needs its parent to look like a package (torch.cpu is one): an empty
# search path finds nothing on disk, the only submodule is the one registered above
__path__: list[str] = []
