"""torch.backends.mps: ember has no Metal backend."""

__all__ = ["is_available", "is_built", "is_macos13_or_newer"]


def is_available() -> bool:
    """False: ember computes on cpu (numpy) or cuda (cupy) only."""
    return False


def is_built() -> bool:
    """False: ember has no MPS backend."""
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    return False
