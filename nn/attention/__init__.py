"""torch.nn.attention: choosing scaled-dot-product-attention backends.

ember has one SDPA implementation (numpy/cupy matmuls around an in-place softmax), so
``sdpa_kernel`` validates its argument like torch and records the choice in torch.backends.cuda's
switches (``flash_sdp_enabled()`` & co. report it), which changes nothing else.
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


# torch's default priority, and each backend's switch in torch.backends.cuda (whose
# flash_sdp_enabled() & co. report what the innermost ``sdpa_kernel`` chose)
_ALL = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.MATH, SDPBackend.OVERRIDEABLE]  # fmt: skip
_FLAG = {
    SDPBackend.CUDNN_ATTENTION: "cudnn",
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
    SDPBackend.MATH: "math",
    SDPBackend.OVERRIDEABLE: "overrideable",
}


def _cur_sdpa_kernel_backends() -> list:
    """The enabled backends, in torch's default priority order (all of them by default; a
    ``set_priority`` order is not reflected here, as in torch)."""
    from ...backends.cuda import _sdp

    return [b for b in _ALL if _sdp[_FLAG[b]]]


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
    from ...backends.cuda import _sdp

    flags = dict(_sdp)
    _sdp.update({_FLAG[b]: b in chosen for b in _ALL})
    try:
        yield
    finally:
        _sdp.update(flags)
