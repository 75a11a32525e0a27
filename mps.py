"""ember.mps (torch.mps): Apple's Metal (MPS) backend, which ember does not have.

ember computes on numpy (CPU) and cupy (CUDA) only, so the answers are those of a torch build
without MPS: ``is_available()`` is False, ``device_count()`` is 0, ``manual_seed`` is a no-op, and
everything that needs the Metal device raises torch's RuntimeError ("... without MPS backend").
"""

from __future__ import annotations

__all__ = [
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "get_rng_state",
    "is_available",
    "manual_seed",
    "recommended_max_memory",
    "seed",
    "set_per_process_memory_fraction",
    "set_rng_state",
    "synchronize",
]


def _no_mps(call: str) -> RuntimeError:
    return RuntimeError(f"Cannot execute {call}() without MPS backend.")


def is_available() -> bool:
    """Whether an MPS device can be used: never with ember."""
    return False


def device_count() -> int:
    """The number of MPS devices: 0 with ember."""
    return 0


def synchronize() -> None:
    """Wait for the MPS device: raises, as ember has no MPS backend."""
    raise _no_mps("deviceSynchronize")


def empty_cache() -> None:
    """Release MPS cached memory: raises, as ember has no MPS backend."""
    raise _no_mps("emptyCache")


def current_allocated_memory() -> int:
    """MPS memory held by tensors: raises, as ember has no MPS backend."""
    raise _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    """MPS memory held by the Metal driver: raises, as ember has no MPS backend."""
    raise _no_mps("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    """Metal's recommended working-set size: raises, as ember has no MPS backend."""
    raise _no_mps("getRecommendedMaxMemory")


def set_per_process_memory_fraction(fraction: float) -> None:
    """Cap MPS memory use: raises, as ember has no MPS backend."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    raise _no_mps("setMemoryFraction")


def manual_seed(seed: int) -> None:
    """Seed the MPS generator: a no-op without MPS (as in torch)."""


def seed() -> None:
    """Seed the MPS generator randomly: raises, as ember has no MPS backend."""
    raise _no_mps("getDefaultGenerator")


def get_rng_state(device: int | str = "mps"):
    """The MPS generator's state: raises, as ember has no MPS backend."""
    raise _no_mps("getDefaultGenerator")


def set_rng_state(new_state, device: int | str = "mps") -> None:
    """Restore the MPS generator's state: raises, as ember has no MPS backend."""
    raise _no_mps("getDefaultGenerator")
