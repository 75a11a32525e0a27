"""ember.cuda (torch.cuda): truthful answers about the GPU ember can use (through cupy).

``is_available()`` is True only when cupy imports and sees a CUDA device. Queries that need a GPU
raise ember's "CUDA is not available" RuntimeError (which says why) when there is none; seeding and
cache calls are no-ops then, as in torch.
"""

from __future__ import annotations

import sys as _sys

from ..core import device as _dev
from ..core import streams as _streams
from ..core.device import OutOfMemoryError
from ..core.legacy_types import CUDA_TYPES as _legacy_types
from . import amp

globals().update(_legacy_types)  # torch.cuda.FloatTensor, ... (core/legacy_types.py)

__all__ = [
    "Event",
    "OutOfMemoryError",
    "Stream",
    "amp",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "get_rng_state_all",
    "init",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "stream",
    "synchronize",
]

_peak = {"allocated": 0, "reserved": 0}


def is_available() -> bool:
    """Whether ember can compute on a GPU here (cupy importable and a CUDA device present)."""
    return _dev.is_cuda_available()


def device_count() -> int:
    """The number of CUDA devices ember can use (0 without cupy or a GPU)."""
    return _dev.device_count()


def is_initialized() -> bool:
    """Whether ember has set up CUDA in this process (cupy imported and a device found)."""
    return _dev._cupy is not None


def init() -> None:
    """Set up CUDA now (raises the reason when ember cannot use a GPU)."""
    _dev.cupy()


def _index(device=None) -> int:
    cp = _dev.cupy()
    if device is None:
        return cp.cuda.Device().id
    if isinstance(device, int):
        return device
    d = _dev.to_device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return cp.cuda.Device().id if d.index is None else d.index


def current_device() -> int:
    """The index of the current CUDA device."""
    return _index()


def set_device(device) -> None:
    """Make ``device`` (an index, 'cuda:N' or ember.device) the current CUDA device."""
    idx = _index(device)
    if idx >= 0:
        _dev.gpu_in_use(idx)
        _dev.cupy().cuda.Device(idx).use()


class device:
    """Context manager that makes a CUDA device current inside the block (torch.cuda.device)."""

    def __init__(self, device) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev = current_device()
            set_device(self.idx)
        return self

    def __exit__(self, *exc) -> None:
        if self.prev >= 0:
            set_device(self.prev)


def synchronize(device=None) -> None:
    """Wait for all kernels on the device to finish."""
    cp = _dev.cupy()
    with cp.cuda.Device(_index(device)):
        cp.cuda.Device().synchronize()


def get_device_name(device=None) -> str:
    """The GPU's name."""
    return get_device_properties(device).name


class _Properties:
    def __init__(self, props: dict) -> None:
        def text(v):
            return v.decode() if isinstance(v, bytes) else str(v)

        self.name = text(props.get("name", b""))
        self.major = int(props.get("major", 0))
        self.minor = int(props.get("minor", 0))
        self.total_memory = int(props.get("totalGlobalMem", 0))
        self.multi_processor_count = int(props.get("multiProcessorCount", 0))

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


def get_device_properties(device=None) -> _Properties:
    """Name, compute capability, total memory and SM count of the GPU."""
    cp = _dev.cupy()
    return _Properties(cp.cuda.runtime.getDeviceProperties(_index(device)))


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability (major, minor)."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 works on the GPU (compute capability 8.0 or newer)."""
    if not is_available():
        return False
    return get_device_capability()[0] >= 8


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of GPU memory."""
    cp = _dev.cupy()
    with cp.cuda.Device(_index(device)):
        return tuple(cp.cuda.runtime.memGetInfo())


def _pool():
    return _dev.cupy().get_default_memory_pool() if is_initialized() else None


def _pool_bytes(kind: str, count: str) -> int:
    """The pool's ``count()`` bytes (0 without CUDA), raising ``_peak[kind]`` to it."""
    pool = _pool()
    if pool is None:
        return 0
    n = int(getattr(pool, count)())
    _peak[kind] = max(_peak[kind], n)
    return n


def memory_allocated(device=None) -> int:
    """Bytes held by ember's tensors on the GPU (cupy's memory pool in use); 0 without CUDA."""
    return _pool_bytes("allocated", "used_bytes")


def memory_reserved(device=None) -> int:
    """Bytes cupy's memory pool holds from the driver; 0 without CUDA."""
    return _pool_bytes("reserved", "total_bytes")


def max_memory_allocated(device=None) -> int:
    """The largest memory_allocated() seen since the last reset (sampled at each query)."""
    return max(_peak["allocated"], memory_allocated(device))


def max_memory_reserved(device=None) -> int:
    """The largest memory_reserved() seen since the last reset (sampled at each query)."""
    return max(_peak["reserved"], memory_reserved(device))


def reset_peak_memory_stats(device=None) -> None:
    """Restart the peak counters from the current usage."""
    _peak["allocated"] = _peak["reserved"] = 0


def empty_cache() -> None:
    """Return cupy's cached, unused GPU blocks to the driver (no-op without CUDA)."""
    pool = _pool()
    if pool is not None:
        pool.free_all_blocks()


def _generators(all_devices: bool):
    if not is_available():
        return []
    from ..core.random import default_generator_for

    if all_devices:
        return [default_generator_for(_dev.device("cuda", i)) for i in range(device_count())]
    return [default_generator_for(_dev.device("cuda", current_device()))]


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator (no-op without CUDA, as in torch)."""
    for g in _generators(False):
        g.manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator (no-op without CUDA)."""
    for g in _generators(True):
        g.manual_seed(seed)


def seed() -> None:
    """Seed the current GPU's generator from the OS's entropy."""
    for g in _generators(False):
        g.seed()


def seed_all() -> None:
    """Seed every GPU's generator from the OS's entropy."""
    for g in _generators(True):
        g.seed()


def get_rng_state(device="cuda"):
    """The GPU generator's state (a uint8 tensor)."""
    from ..core.random import default_generator_for

    return default_generator_for(_dev.device("cuda", _index(device))).get_state()


def set_rng_state(new_state, device="cuda") -> None:
    """Restore the GPU generator's state."""
    from ..core.random import default_generator_for

    default_generator_for(_dev.device("cuda", _index(device))).set_state(new_state)


def get_rng_state_all() -> list:
    """Every GPU generator's state, one per device (an empty list without a GPU, as in torch)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Restore each GPU generator from ``new_states`` (what :func:`get_rng_state_all` gave)."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ----------------------------------------------------------------------------- streams and events
def _cuda(device) -> _dev.device:
    if device is None:
        return _dev.device("cuda", current_device())
    if isinstance(device, int):
        return _dev.device("cuda", device)
    return _dev.to_device(device)


class Stream(_streams.Stream):
    """A CUDA stream (torch.cuda.Stream): ember.Stream on the current GPU by default."""

    def __init__(self, device=None, priority: int = 0, **kwargs) -> None:
        super().__init__(_cuda(device), priority=priority)


class Event(_streams.Event):
    """A CUDA event (torch.cuda.Event): record, synchronize, elapsed_time in milliseconds."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        super().__init__(
            _cuda(None), enable_timing=enable_timing, blocking=blocking, interprocess=interprocess
        )


def _wrap(native, device) -> Stream:
    s = Stream.__new__(Stream)
    s.device, s.priority, s._native = _cuda(device), 0, native
    return s


def current_stream(device=None) -> Stream:
    """The stream ember's GPU kernels are queued on now."""
    d = _cuda(device)
    with _dev.cupy().cuda.Device(d.index):
        return _wrap(_dev.cupy().cuda.get_current_stream(), d)


def default_stream(device=None) -> Stream:
    """The device's default (null) stream."""
    return _wrap(_dev.cupy().cuda.Stream.null, device)


def stream(stream: Stream | None):
    """Context manager making ``stream`` the current stream inside the block (None: no change)."""
    import contextlib

    return contextlib.nullcontext() if stream is None else stream._native


# `cuda` would shadow NVIDIA's `cuda` namespace package (cupy imports cuda.pathfinder) for any
# process that has the checkout on sys.path, so the folder is cuda_ and the package registers
# itself as ember.cuda
_sys.modules[__name__[:-1]] = _sys.modules[__name__]
_sys.modules[__name__[:-1] + ".amp"] = amp

# torch.cuda.random is loaded with torch.cuda; it imports the functions above, so it comes last
from . import random

_sys.modules[__name__[:-1] + ".random"] = random
