"""Devices: 'cpu' arrays are numpy, 'cuda:N' arrays are cupy. Kernels get xp from array_module."""

from __future__ import annotations

import builtins
import re
import threading

import numpy as np

_cupy = None  # the cupy module once imported successfully
_cupy_error: str | None = None


builtins_type = builtins.type  # `type` is a parameter name below, as in torch's signature
_TYPES = ("cpu", "cuda", "meta")  # the device types ember knows (torch knows more: mps, xla, ...)
# torch's other device types: a clear refusal instead of "expected one of cpu, cuda, meta"
_TORCH_ONLY = frozenset(
    ("ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla")
    + ("lazy", "vulkan", "mps", "hpu", "mtia", "privateuseone")
)
_TORCH_LIST = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, "
    "mps, meta, hpu, mtia, privateuseone"
)
_DEVICE_RE = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?\Z")


class device:
    """ember.device('cpu'), device('cuda', 0), device('cuda:1'). Also a context manager that sets
    the default device for factory functions inside the block."""

    __module__ = "ember"  # printed as ember.device, like torch.device
    __slots__ = ("_prev", "index", "type")

    def __init__(self, type, index: int | None = None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int) and not isinstance(type, bool):
            # an int is an accelerator index (cuda here); torch refuses it when none is usable
            if type >= 0 and not is_cuda_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = "cuda", type
        elif not isinstance(type, str):
            raise TypeError(
                f"device() received an invalid combination of arguments - got "
                f"({builtins_type(type).__name__}), but expected one of:\n"
                " * (ember.device device)\n * (str type, int index = -1)"
            )
        else:
            spec = type
            if not spec:
                raise RuntimeError("Device string must not be empty")
            m = _DEVICE_RE.match(spec)
            if m is None:
                raise RuntimeError(f"Invalid device string: '{spec}'")
            type, idx = m.group(1), m.group(2)
            if type in _TORCH_ONLY:
                raise RuntimeError(
                    f"ember has no '{type}' device: it computes on cpu (numpy) and cuda (cupy)"
                )
            if type not in _TYPES:
                # torch's text, which lists its every device type (ember refuses those above)
                raise RuntimeError(
                    f"Expected one of {_TORCH_LIST} device type at start of device string: {type}"
                )
            if idx is not None:
                if index is not None:
                    raise RuntimeError(
                        "type (string) must not include an index because index was "
                        f"passed explicitly: {spec}"
                    )
                index = int(idx)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(
                    f"device(): argument 'index' must be int, not {builtins_type(index).__name__}"
                )
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index
        self._prev = None

    def __eq__(self, other) -> bool:
        # deliberate extension: torch compares a device to a string as False; ember parses the
        # string, so `t.device == "cpu"` means what it says (an invalid string is simply unequal)
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        elif not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __enter__(self):
        self._prev = _default.device
        set_default_device(self)
        return self

    def __exit__(self, *exc) -> None:
        _default.device = self._prev

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")


class OutOfMemoryError(RuntimeError, MemoryError):
    """An allocation failed (torch.OutOfMemoryError, also ``ember.cuda.OutOfMemoryError``).

    Raised for cuda and cpu alike: torch's cpu allocator raises its base RuntimeError, which
    this subclasses; it is a MemoryError too, what numpy and cupy raise."""

    __module__ = "ember"


def out_of_memory(e: MemoryError, device_type: str) -> OutOfMemoryError:
    """torch's error for a failed allocation ``e`` (numpy's or cupy's MemoryError) on a device
    of type ``device_type``."""
    if isinstance(e, OutOfMemoryError):
        return e
    if device_type == "cuda":
        return OutOfMemoryError(f"CUDA out of memory. {e}")
    size = getattr(e, "_total_size", None)  # numpy's _ArrayMemoryError knows the request
    what = f"you tried to allocate {size} bytes." if size is not None else str(e)
    return OutOfMemoryError(f"DefaultCPUAllocator: can't allocate memory: {what}")


class _Default(threading.local):
    device = CPU


_default = _Default()


def get_default_device() -> device:
    return _default.device


def set_default_device(d) -> None:
    d = CPU if d is None else to_device(d)
    if d.type == "cuda":
        cupy()
    _default.device = d


def to_device(d) -> device:
    if type(d) is device:
        return d
    return CPU if d == "cpu" else device(d)


def cupy():
    """The cupy module, or a RuntimeError that says why CUDA cannot be used here."""
    global _cupy, _cupy_error
    if _cupy is not None:
        return _cupy
    if _cupy_error is None:
        try:
            import cupy as cp

            if cp.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("no CUDA GPUs are available")
            _cupy = cp
            _XP[cp.ndarray] = cp
            return cp
        except Exception as e:  # noqa: BLE001 - ImportError, CUDA driver errors
            _cupy_error = f"{type(e).__name__}: {e}"
    raise RuntimeError(
        "ember: CUDA is not available (install cupy, e.g. pip install 'ember[cuda13]', and run "
        f"on a machine with an NVIDIA GPU): {_cupy_error}"
    )


def is_cuda_available() -> bool:
    try:
        cupy()
        return True
    except RuntimeError:
        return False


def device_count() -> int:
    return cupy().cuda.runtime.getDeviceCount() if is_cuda_available() else 0


# array type -> array module. Other backends (cupy, the test-only strict backend) register here.
_XP: dict = {np.ndarray: np}
# array module -> function(array) -> ember device
_DEVICE_OF: dict = {np: lambda a: CPU}


def array_module(arr):
    """The array module (numpy or cupy) that owns ``arr``: every kernel computes with it."""
    xp = _XP.get(type(arr))
    if xp is None:
        if isinstance(arr, np.generic):
            return np
        raise TypeError(f"ember: unsupported array type {type(arr).__name__}")
    return xp


def device_of(arr) -> device:
    xp = _XP.get(type(arr), np)
    if xp is np:
        return CPU
    if xp is _cupy:
        return device("cuda", arr.device.id)
    return _DEVICE_OF[xp](arr)


# set once data is placed on a GPU other than 0: from then on ops compare their inputs' GPUs
# (with one GPU, the common case, that check costs nothing)
_SEVERAL_GPUS = [False]


def gpu_in_use(index) -> None:
    """Note that GPU ``index`` holds (or will hold) data."""
    if index:
        _SEVERAL_GPUS[0] = True


def module_for(d: device):
    """The array module that holds data on device ``d``."""
    if d.type == "cpu":
        return np
    if d.type == "meta":
        from .meta import meta_xp

        return meta_xp
    gpu_in_use(d.index)
    return cupy()


def register_backend(array_type, xp, device_fn=None) -> None:
    """Teach the dispatcher a new array type (used by tests to prove dispatch discipline)."""
    _XP[array_type] = xp
    if device_fn is not None:
        _DEVICE_OF[xp] = device_fn
