"""ember.accelerator (torch.accelerator): the GPU ember can use, if any (CUDA through cupy)."""

from __future__ import annotations

from .core import device as _dev

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "device_count",
    "device_index",
    "is_available",
    "set_device_idx",
    "set_device_index",
    "synchronize",
]


def is_available() -> bool:
    """Whether ember has an accelerator to compute on (a CUDA GPU through cupy)."""
    return _dev.is_cuda_available()


def current_accelerator(check_available: bool = False) -> _dev.device | None:
    """``device('cuda')`` when ember can use a GPU, else None."""
    return _dev.device("cuda") if is_available() else None


def device_count() -> int:
    """The number of GPUs ember can use."""
    return _dev.device_count()


def current_device_index() -> int:
    """The index of the current GPU."""
    from . import cuda

    return cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device) -> None:
    """Make ``device`` the current GPU."""
    from . import cuda

    cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device=None) -> None:
    """Wait for the GPU's work to finish (nothing to wait for without one)."""
    if is_available():
        from . import cuda

        cuda.synchronize(device)


class device_index:
    """Context manager that makes a GPU index current inside the block."""

    def __init__(self, device) -> None:
        self.idx = device
        self.prev = None

    def __enter__(self):
        if self.idx is not None:
            self.prev = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc) -> None:
        if self.prev is not None:
            set_device_index(self.prev)
