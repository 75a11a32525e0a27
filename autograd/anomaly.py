"""Anomaly detection: remember where each node was created (its forward stack) and check every
backward step for NaN, naming the op and showing the forward traceback (torch's detect_anomaly)."""

from __future__ import annotations

import functools
import os
import traceback
import warnings

from ..core.device import array_module
from .grad_mode import _state

__all__ = [
    "detect_anomaly",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_anomaly_enabled",
    "set_detect_anomaly",
]

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# frames inside the op machinery are noise in a forward traceback
_INTERNAL = (os.path.join(_PKG, "core", "registry.py"), os.path.join(_PKG, "autograd") + os.sep)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward results for NaN."""
    return _state.anomaly_check_nan


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection.

    Nodes created inside remember the traceback of their forward call; a backward step that fails,
    or (with ``check_nan=True``) returns NaN, reports that traceback.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = _state.anomaly
        self.prev_check_nan = _state.anomaly_check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self.prev = _state.anomaly
        self.prev_check_nan = _state.anomaly_check_nan
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        _state.anomaly = self.prev
        _state.anomaly_check_nan = self.prev_check_nan

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once when called, and as a context manager restores
    the previous setting on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _state.anomaly
        self.prev_check_nan = _state.anomaly_check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _state.anomaly = self.prev
        _state.anomaly_check_nan = self.prev_check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for good (``set_detect_anomaly`` without the context
    manager): ``check_nan`` also checks backward results for NaN."""
    from ..core.runtime import _bool_arg

    # torch's binding takes only real bools (1, None or a string are a TypeError)
    fname = "set_anomaly_enabled"
    _bool_arg(fname, "enabled", " (position 1)", enabled)
    _bool_arg(fname, "check_nan", " (position 2)", check_nan)
    _state.anomaly = enabled
    _state.anomaly_check_nan = check_nan


# `ember run script.py`: the runner's frames (ember's __main__, dropin, runpy) sit below the
# script's, where `python script.py` has none
_RUNNER = (os.path.join(_PKG, "__main__.py"), os.path.join(_PKG, "dropin") + os.sep)


def _script_frames(frames: list) -> list:
    """``frames`` from the drop-in script's own outermost frame on (all of them otherwise)."""
    last = -1
    for i, f in enumerate(frames):
        if f.filename == _RUNNER[0] or f.filename.startswith(_RUNNER[1]):
            last = i
    if last < 0:
        return frames
    i = last + 1
    while i < len(frames) and (
        frames[i].filename.startswith("<frozen ") or frames[i].filename.endswith("runpy.py")
    ):
        i += 1  # a directory or zip script runs through runpy.run_path
    return frames[i:]


def capture_trace() -> list:
    """The current Python stack (user frames), stored on a node created in anomaly mode."""
    frames = _script_frames(traceback.extract_stack()[:-1])
    return [
        f for f in frames if not f.filename.startswith(_INTERNAL[1]) and f.filename != _INTERNAL[0]
    ]


def _forward_trace(node) -> str:
    name = node.name()
    if node.trace is None:
        return (
            f"Error detected in {name}. No forward pass information available. Enable detect "
            "anomaly during forward pass for more information."
        )
    return (
        f"Error detected in {name}. Traceback of forward call that caused the error:\n"
        + "".join(traceback.format_list(node.trace))
    )


def report(node) -> None:
    """Warn with the forward traceback of ``node`` (before its backward error propagates)."""
    warnings.warn(_forward_trace(node), stacklevel=2)


def check_nan(node, grads) -> None:
    """Raise if a backward step returned NaN (anomaly mode with check_nan)."""
    if not _state.anomaly_check_nan:
        return
    for i, g in enumerate(grads):
        if g is None or g._data.dtype.kind not in "fc":
            continue
        a = g._data
        if bool(array_module(a).isnan(a).any()):
            report(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
