"""torch.autocast / torch.amp.autocast.

ember runs an autocast region in the tensors' own dtypes: the region, its dtype and the decorator
form are accepted and reported (``is_autocast_enabled``), but no op is cast to a lower precision.
A script written for mixed precision therefore computes in float32 on ember, with the same results
up to rounding.
"""

from __future__ import annotations

import functools
import threading
import warnings

from ..core import dtype as _dt

__all__ = [
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

_DEFAULT_DTYPE = {"cuda": _dt.float16, "cpu": _dt.bfloat16}
_KNOWN = ("cpu", "cuda", "mps", "xpu", "xla", "hpu", "mtia", "ipu", "maia")


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = dict(_DEFAULT_DTYPE)


_state = _State()
_warned = [False]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast regions are accepted for ``device_type`` (cpu and cuda)."""
    return device_type in ("cpu", "cuda")


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an enabled autocast region is active for ``device_type`` (default: cuda)."""
    return _state.enabled.get("cuda" if device_type is None else device_type, False)


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Set the autocast flag of ``device_type`` (``set_autocast_enabled(bool)``: cuda)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _state.enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type: str) -> _dt.dtype:
    """The dtype autocast regions of ``device_type`` ask for."""
    return _state.dtype.get(device_type, _dt.float16)


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype autocast regions of ``device_type`` ask for."""
    _state.dtype[device_type] = dtype


class autocast:
    """Context manager / decorator marking a mixed-precision region (computed in the tensors'
    own dtypes by ember; see the module docstring)."""

    def __init__(
        self,
        device_type: str,
        dtype=None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(  # noqa: TRY004 - torch's type
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`"
            )
        kind = device_type.split(":", 1)[0]
        if kind not in _KNOWN:
            raise RuntimeError(
                f"Expected one of {', '.join(_KNOWN)} device type at start of device string: "
                f"{device_type}"
            )
        self.device = kind
        self.fast_dtype = get_autocast_dtype(kind) if dtype is None else dtype
        if not isinstance(self.fast_dtype, _dt.dtype):
            raise ValueError(  # noqa: TRY004 - torch's type
                f"Expected `dtype` of type `torch.dtype`, got: `{type(dtype)}`"
            )
        self._enabled = bool(enabled)
        if self._enabled and kind == "cuda":
            from ..core.device import is_cuda_available

            if not is_cuda_available():
                warnings.warn(
                    "CUDA is not available or torch_xla is imported. Disabling autocast.",
                    UserWarning,
                    stacklevel=2,
                )
                self._enabled = False
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        self._prev: list = []

    def __enter__(self):
        if self._enabled and not _warned[0] and self.device in ("cpu", "cuda"):
            _warned[0] = True
            warnings.warn(
                "ember: autocast regions compute in the tensors' own dtypes (no mixed "
                "precision is applied)",
                UserWarning,
                stacklevel=2,
            )
        self._prev.append((_state.enabled.get(self.device, False), _state.dtype.get(self.device)))
        _state.enabled[self.device] = self._enabled
        _state.dtype[self.device] = self.fast_dtype
        return self

    def __exit__(self, *exc) -> None:
        enabled, dtype = self._prev.pop()
        _state.enabled[self.device] = enabled
        if dtype is not None:
            _state.dtype[self.device] = dtype

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Decorator for a custom Function's forward (ember: runs it unchanged)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """Decorator for a custom Function's backward (ember: runs it unchanged)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
