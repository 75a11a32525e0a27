"""torch.backends.cudnn: flags kept for scripts; ember does not use cuDNN (is_available False)."""

from __future__ import annotations

import contextlib

__all__ = [
    "allow_tf32",
    "benchmark",
    "benchmark_limit",
    "deterministic",
    "enabled",
    "flags",
    "is_acceptable",
    "is_available",
    "version",
]

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether ember uses cuDNN: it does not (its GPU kernels are cupy's)."""
    return False


def version() -> None:
    """The cuDNN version ember uses: None (none)."""
    return


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take ``tensor``: never on ember."""
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags inside a ``with`` block, restoring them after."""
    g = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {n: g[n] for n in names}
    new = dict(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    g.update(new)
    try:
        yield
    finally:
        g.update(old)
