"""ember.cuda.nvtx (torch.cuda.nvtx): NVTX profiler ranges and markers.

With a GPU ember can use, the calls go to cupy's NVTX bindings, so the ranges show up in Nsight
Systems as under torch. Without one (cupy or its NVTX library missing) every call raises the
RuntimeError torch's CPU build raises, so a script that guards its profiling with
``torch.cuda.is_available()`` behaves the same and one that does not fails the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..core import device as _dev

__all__ = ["mark", "range", "range_pop", "range_push"]

_NOT_INSTALLED = "NVTX functions not installed. Are you sure you have a CUDA build?"
_depth = 0  # torch's range_push/range_pop return the nesting depth; cupy's return nothing


def _nvtx():
    """cupy's NVTX module, or torch's CPU-build error when there is none."""
    try:
        nvtx = _dev.cupy().cuda.nvtx
        nvtx.RangePush  # noqa: B018  (cupy built without NVTX lacks the bindings)
    except (RuntimeError, AttributeError, ImportError):
        raise RuntimeError(_NOT_INSTALLED) from None
    return nvtx


def range_push(msg: str) -> int:
    """Push a range named ``msg`` onto the NVTX range stack; returns the (0-based) depth."""
    global _depth
    _nvtx().RangePush(msg)
    _depth += 1
    return _depth - 1


def range_pop() -> int:
    """Pop the innermost NVTX range; returns the depth of the range that ended."""
    global _depth
    _nvtx().RangePop()
    _depth = max(_depth - 1, 0)
    return _depth


def mark(msg: str) -> None:
    """Mark an instantaneous NVTX event named ``msg``."""
    _nvtx().Mark(msg)


@contextmanager
def range(msg: str, *args, **kwargs) -> Iterator[None]:
    """Context manager: an NVTX range around the block; ``msg`` is ``str.format``-ed with args."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
