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
from collections.abc import Iterator
from typing import Any

from .amp.deprecated import device_amp_classes
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


# a real module (not a package file: cpu.py is one file), registered so that `import
# ember.cpu.amp` and the drop-in `from torch.cpu.amp import autocast` find it
amp = types.ModuleType(
    __name__ + ".amp",
    "torch.cpu.amp: autocast and GradScaler for the cpu (see ember.amp).",
)
amp.GradScaler, amp.autocast = device_amp_classes("cpu", _dt.bfloat16, amp.__name__)
amp.__all__ = ["GradScaler", "autocast"]
sys.modules[amp.__name__] = amp
# importing a submodule needs its parent to look like a package (torch.cpu is one): an empty
# search path finds nothing on disk, the only submodule is the one registered above
__path__: list[str] = []
