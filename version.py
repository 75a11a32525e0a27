"""ember.version (torch.version): the version of ember and of the CUDA runtime it computes with.

``cuda`` is ``None`` unless cupy is importable and a GPU is present; then it is the CUDA runtime
version as torch spells it (``'13.0'``). It is found on first access, so importing ember never
imports cupy. ``hip``, ``rocm`` and ``xpu`` are ``None``: ember runs on numpy or cupy only.
"""

from __future__ import annotations

from typing import Any

from .torch_version import TorchVersion

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]  # noqa: F822 - cuda is lazy (__getattr__)

# keep in step with pyproject.toml; ember.__version__ is this string, which (as torch's) compares
# with "1.10" or (2, 0) as a version
__version__ = TorchVersion("0.1.0")
debug = False
git_version = "unknown"
hip = None
rocm = None
xpu = None

_UNSET = object()
_cuda: Any = _UNSET


def _cuda_version() -> str | None:
    """The CUDA runtime version of cupy (``'major.minor'``), or None without cupy or a GPU."""
    from .core import device as _dev

    if not _dev.is_cuda_available():
        return None
    try:
        v = int(_dev.cupy().cuda.runtime.runtimeGetVersion())
    except Exception:  # noqa: BLE001 - a broken runtime means no usable CUDA
        return None
    return f"{v // 1000}.{v % 1000 // 10}"


def __getattr__(name: str) -> Any:
    global _cuda
    if name == "cuda":
        if _cuda is _UNSET:
            _cuda = _cuda_version()
        return _cuda
    raise AttributeError(f"module 'ember.version' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted([*globals(), "cuda"])
