"""torch.backends.mkl: whether numpy's BLAS (which ember uses) is Intel MKL."""

import functools

__all__ = ["is_available", "verbose"]


@functools.cache
def is_available() -> bool:
    """True when numpy is linked against MKL."""
    try:
        from threadpoolctl import threadpool_info

        return any(i.get("internal_api") == "mkl" for i in threadpool_info())
    except Exception:  # noqa: BLE001 - no threadpoolctl information: not MKL as far as we know
        return False


class verbose:
    """Context manager for MKL's verbose mode (accepted, no effect)."""

    def __init__(self, enable) -> None:
        self.enable = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass
