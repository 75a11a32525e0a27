"""Streams and events (torch.Stream, torch.Event) and torch.get_device_module.

On the cpu every op runs synchronously, so a stream is always idle and, as in torch, the cpu
backend has no events to record. On cuda they wrap cupy's streams and events.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .device import cupy, device, get_default_device, to_device

__all__ = ["Event", "Stream", "get_device_module"]

_NO_EVENTS = "cpu backend doesn't support events."
_TYPE_CODES = {"cpu": 0, "cuda": 1}


def _resolve(dev: Any) -> device:
    d = to_device(dev) if dev is not None else get_default_device()
    if d.type == "cuda":
        cupy()  # a clear error when cupy or the GPU is missing
    return d


class Stream:
    """A queue of work on a device (``device=None``: the current device).

    Args:
        device: where the stream runs.
        priority: accepted; cupy streams are created with the default priority.
    """

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        self.device = _resolve(device)
        self.priority = priority
        self._native = cupy().cuda.Stream(non_blocking=True) if self.device.type == "cuda" else None

    @property
    def device_type(self) -> int:
        """The device type as torch's enum value (cpu 0, cuda 1)."""
        return _TYPE_CODES[self.device.type]

    @property
    def device_index(self) -> int:
        return -1 if self.device.index is None else self.device.index

    @property
    def stream_id(self) -> int:
        return 0 if self._native is None else int(self._native.ptr)

    def query(self) -> bool:
        """True when all work queued on the stream has finished."""
        return True if self._native is None else bool(self._native.done)

    def synchronize(self) -> None:
        """Wait for all work queued on the stream."""
        if self._native is not None:
            self._native.synchronize()

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) on this stream."""
        if self._native is None:
            raise RuntimeError(_NO_EVENTS)
        event = event if event is not None else Event(self.device)
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        """Make future work on this stream wait for ``event``."""
        if self._native is not None and event._native is not None:
            self._native.wait_event(event._native)

    def wait_stream(self, stream: Stream) -> None:
        """Make future work on this stream wait for the work queued on ``stream``."""
        self.wait_event(stream.record_event())

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Stream)
            and self.device == other.device
            and self.stream_id == other.stream_id
        )

    def __hash__(self) -> int:
        return hash((self.device.type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (
            f"ember.Stream device_type={self.device.type}, device_index={self.device_index}, "
            f"stream_id={self.stream_id}"
        )


class Event:
    """A marker in a stream, to wait for or to time work (cuda only, as in torch).

    Args:
        device: the device of the streams it is recorded on.
        enable_timing: whether ``elapsed_time`` may be used.
    """

    def __init__(
        self,
        device: Any = None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ) -> None:
        self.device = _resolve(device)
        self.enable_timing = enable_timing
        self._native = None
        if self.device.type == "cuda":
            self._native = cupy().cuda.Event(
                block=blocking, disable_timing=not enable_timing, interprocess=interprocess
            )

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (the current stream if None)."""
        if self._native is None:
            raise RuntimeError(_NO_EVENTS)
        self._native.record(None if stream is None else stream._native)

    def query(self) -> bool:
        """True when the work before the event has finished."""
        return True if self._native is None else bool(self._native.done)

    def synchronize(self) -> None:
        """Wait until the work before the event has finished."""
        if self._native is not None:
            self._native.synchronize()

    def wait(self, stream: Stream | None = None) -> None:
        """Make future work on ``stream`` (the current stream if None) wait for this event."""
        if self._native is None:
            return
        if stream is None:
            cupy().cuda.get_current_stream().wait_event(self._native)
        else:
            stream.wait_event(self)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and ``end_event``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._native is None:
            raise RuntimeError(_NO_EVENTS)
        return float(cupy().cuda.get_elapsed_time(self._native, end_event._native))

    def __repr__(self) -> str:
        index = -1 if self.device.index is None else self.device.index
        return f"ember.Event device_type={self.device.type}, device_index={index}"


def get_device_module(device: Any = None) -> ModuleType:
    """The module of a device type: ``ember.cpu`` or ``ember.cuda`` (``None``: the default
    device's)."""
    if device is not None and not isinstance(device, (str, type(get_default_device()))):
        raise RuntimeError(f"Invalid value of device '{device}', expect ember.device, str, or None")
    kind = to_device(device).type if device is not None else get_default_device().type
    return importlib.import_module(f"ember.{kind}")
