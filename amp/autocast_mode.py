"""torch.autocast / torch.amp.autocast: mixed-precision regions.

Inside an enabled region, the ops on torch's autocast lists cast their floating-point inputs
(to the region's dtype, to float32, or to the widest input dtype) before they run, as torch's
do: the lists and the casting live in ``core/autocast.py``; this module holds torch's Python
API over that state (the context manager, the getters and setters, custom_fwd/custom_bwd).
"""

from __future__ import annotations

import collections.abc
import functools
import warnings

from ..core import autocast as _ac
from ..core import dtype as _dt

__all__ = [
    "autocast",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "clear_autocast_cache",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_gpu_dtype",
]

_KNOWN = ("cpu", "cuda", "mps", "xpu", "xla", "hpu", "mtia", "ipu", "maia")
# every device type torch's device strings know, in the order its parser's error lists them
_TORCH_TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone"
)
_state = _ac.state


def _device_kind(device_type: str) -> str:
    """The type of a device string ('cuda:0' -> 'cuda'); torch's error for one it cannot parse."""
    from ..core.device import _DEVICE_RE

    m = _DEVICE_RE.match(device_type)
    if m is None or m.group(1) not in _TORCH_TYPES.split(", "):
        raise RuntimeError(
            f"Expected one of {_TORCH_TYPES} device type at start of device string: {device_type}"
        )
    return m.group(1)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast regions are accepted for ``device_type`` (a device string, like
    torch's: 'cuda:0' counts as 'cuda'; an unknown type is an error)."""
    return _device_kind(device_type) in _KNOWN


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an enabled autocast region is active for ``device_type`` (default: cuda)."""
    return _state.enabled.get("cuda" if device_type is None else device_type, False)


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Set the autocast flag of ``device_type`` (``set_autocast_enabled(bool)``: cuda)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _ac.set_enabled(device_type, enabled)


def get_autocast_dtype(device_type: str) -> _dt.dtype:
    """The dtype autocast regions of ``device_type`` ask for."""
    return _state.dtype.get(device_type, _dt.float16)


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype autocast regions of ``device_type`` ask for."""
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(
            "set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
            f"{type(dtype).__name__}"
        )
    _state.dtype[device_type] = dtype


def _deprecated(old: str, new: str) -> None:
    # stacklevel 3: the caller of the deprecated function
    warnings.warn(
        f"torch.{old} is deprecated. Please use torch.{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled('cpu')``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled('cpu', enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dt.dtype:
    """Deprecated: ``get_autocast_dtype('cpu')``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    """Deprecated: ``set_autocast_dtype('cpu', dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> _dt.dtype:
    """Deprecated: ``get_autocast_dtype('cuda')``."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    """Deprecated: ``set_autocast_dtype('cuda', dtype)``."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether regions keep one cast of each weight (``autocast(cache_enabled=...)``)."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the weights' cached casts (the outermost region does it on exit)."""
    _ac.clear_cache()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


class autocast:
    """Context manager / decorator for a mixed-precision region (see the module docstring)."""

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
        kind = _device_kind(device_type)
        if kind not in _KNOWN:  # a device type torch knows but has no autocast dtype for
            raise RuntimeError("unsupported scalarType")
        self.device = kind
        # a dtype that is not a dtype (a string) is only refused on entering, as torch does: it
        # warns here (not a supported dtype) and set_autocast_dtype raises its TypeError
        self.fast_dtype = get_autocast_dtype(kind) if dtype is None else dtype
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
        elif self._enabled and self.fast_dtype not in (_dt.bfloat16, _dt.float16):
            name = kind.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling "
                f"autocast.\n{name} Autocast only supports dtypes of torch.bfloat16, "
                "torch.float16 currently.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        self._prev: list = []

    def __enter__(self):
        prev = (is_autocast_enabled(self.device), get_autocast_dtype(self.device))
        self._prev.append(prev + (is_autocast_cache_enabled(),))
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc) -> None:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        enabled, dtype, cache = self._prev.pop()
        set_autocast_enabled(self.device, enabled)
        set_autocast_dtype(self.device, dtype)
        set_autocast_cache_enabled(cache)

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def _cast(value, device_type: str, dtype):
    """torch.amp's cast of custom_fwd inputs: floating tensors of the device (not float64),
    inside lists, tuples and dicts; anything else as is."""
    from ..core.tensor import Tensor

    if isinstance(value, Tensor):
        ok = value.is_floating_point() and value.device.type == device_type
        return value.to(dtype) if ok and value.dtype is not _dt.float64 else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {
            _cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()
        }
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(  # noqa: TRY004 - torch's type
            f"Expected `device_type` of type `str`, got: `{type(device_type)}`"
        )


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for a custom Function's ``forward``: records the region's state for
    :func:`custom_bwd`; with ``cast_inputs``, inside an enabled region, casts the floating
    inputs to it and runs ``forward`` with autocast disabled."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(
                *_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs)
            )

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for a custom Function's ``backward``: runs it with the autocast state its
    ``forward`` (decorated with :func:`custom_fwd`) ran with."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
