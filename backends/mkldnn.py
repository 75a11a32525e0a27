"""torch.backends.mkldnn: ember does not use oneDNN; the ``enabled`` flag is kept for scripts."""

import contextlib

__all__ = ["enabled", "flags", "is_available"]

enabled = True


def is_available() -> bool:
    """False: ember's cpu kernels are numpy's (BLAS), not oneDNN."""
    return False


@contextlib.contextmanager
def flags(enabled=False, deterministic=False):
    g = globals()
    old = g["enabled"]
    g["enabled"] = enabled
    try:
        yield
    finally:
        g["enabled"] = old
