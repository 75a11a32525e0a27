"""torch.nn.attention: choosing scaled-dot-product-attention backends.

ember has one SDPA implementation (numpy/cupy matmuls around an in-place softmax), so
``sdpa_kernel`` validates its argument like torch and records the choice, which changes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from . import bias
from .bias import _TorchIntEnum

__all__ = ["WARN_FOR_UNFUSED_KERNELS", "SDPBackend", "bias", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(_TorchIntEnum):
    """The SDPA backends torch knows (ember runs every request on its one implementation)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]  # fmt: skip
_current: list = list(_ALL)


def _cur_sdpa_kernel_backends() -> list:
    """The backends enabled by the innermost ``sdpa_kernel`` (all of them by default)."""
    return list(_current)


@contextlib.contextmanager
def sdpa_kernel(
    backends: list[SDPBackend] | SDPBackend, set_priority: bool = False
) -> Iterator[None]:
    """Context manager selecting the SDPA backends (``backends``: one or a list)."""
    if isinstance(backends, SDPBackend):
        chosen = [backends]
    elif isinstance(backends, Iterable) and not isinstance(backends, (str, bytes)):
        chosen = list(backends)
        if not all(isinstance(b, SDPBackend) for b in chosen):
            raise AssertionError(
                "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                f"got {type(backends).__name__}"
            )
    else:
        raise AssertionError(  # noqa: TRY004  (torch's error type)
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
            f"{type(backends).__name__}"
        )
    global _current
    prev = _current
    _current = chosen
    try:
        yield
    finally:
        _current = prev
