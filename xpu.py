"""ember.xpu (torch.xpu): Intel GPUs (XPU), which ember does not support.

ember computes on numpy (CPU) and cupy (CUDA) only, so the answers are those of a torch build
without XPU: availability False, 0 devices, memory counters 0, seeding and ``empty_cache`` no-ops,
and everything that needs an XPU device raises torch's "Torch not compiled with XPU enabled"
AssertionError.
"""

from __future__ import annotations

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "init",
    "initial_seed",
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
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "synchronize",
]


def _not_compiled() -> AssertionError:
    return AssertionError("Torch not compiled with XPU enabled")


def is_available() -> bool:
    """Whether an XPU device can be used: never with ember."""
    return False


def device_count() -> int:
    """The number of XPU devices: 0 with ember."""
    return 0


def is_initialized() -> bool:
    """Whether the XPU runtime is initialized: never with ember."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the XPU device supports bfloat16: False, as there is none."""
    return False


def get_arch_list() -> list[str]:
    """The XPU architectures this build targets: none."""
    return []


def empty_cache() -> None:
    """Release cached XPU memory: nothing to release."""


def memory_allocated(device=None) -> int:
    """XPU memory held by tensors: 0."""
    return 0


def memory_reserved(device=None) -> int:
    """XPU memory held by the caching allocator: 0."""
    return 0


def max_memory_allocated(device=None) -> int:
    """Peak XPU memory held by tensors: 0."""
    return 0


def max_memory_reserved(device=None) -> int:
    """Peak XPU memory held by the caching allocator: 0."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the current XPU generator: a no-op without XPU (as in torch)."""


def manual_seed_all(seed: int) -> None:
    """Seed every XPU generator: a no-op without XPU (as in torch)."""


def seed() -> None:
    """Seed the current XPU generator randomly: a no-op without XPU (as in torch)."""


def seed_all() -> None:
    """Seed every XPU generator randomly: a no-op without XPU (as in torch)."""


def init() -> None:
    """Initialize the XPU runtime: raises, as ember has no XPU support."""
    raise _not_compiled()


def synchronize(device=None) -> None:
    """Wait for an XPU device: raises, as ember has no XPU support."""
    raise _not_compiled()


def current_device() -> int:
    """The index of the current XPU device: raises, as ember has no XPU support."""
    raise _not_compiled()


def set_device(device) -> None:
    """Select an XPU device: raises, as ember has no XPU support."""
    raise _not_compiled()


def get_device_name(device=None) -> str:
    """An XPU device's name: raises, as ember has no XPU support."""
    raise _not_compiled()


def get_device_properties(device=None):
    """An XPU device's properties: raises, as ember has no XPU support."""
    raise _not_compiled()


def get_device_capability(device=None) -> dict:
    """An XPU device's capabilities: raises, as ember has no XPU support."""
    raise _not_compiled()


def mem_get_info(device=None) -> tuple[int, int]:
    """Free and total XPU memory: raises, as ember has no XPU support."""
    raise _not_compiled()


def initial_seed() -> int:
    """The current XPU generator's seed: raises, as ember has no XPU support."""
    raise _not_compiled()


def get_rng_state(device="xpu"):
    """An XPU generator's state: raises, as ember has no XPU support."""
    raise _not_compiled()


def set_rng_state(new_state, device="xpu") -> None:
    """Restore an XPU generator's state: a no-op without XPU (torch defers it until XPU starts)."""
