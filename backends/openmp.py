"""torch.backends.openmp: ember does not run OpenMP itself (its threads are BLAS's)."""

__all__ = ["is_available"]


def is_available() -> bool:
    """False: ember has no OpenMP parallel regions of its own."""
    return False
