"""torch.backends.cuda: matmul precision flags and the scaled-dot-product-attention backend
switches (kept for scripts; ember's attention has one implementation)."""

from __future__ import annotations

import contextlib
import importlib.util
import warnings

from ..core import runtime as _runtime

__all__ = [
    "cudnn_sdp_enabled",
    "cufft_plan_cache",
    "enable_cudnn_sdp",
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "is_built",
    "is_flash_attention_available",
    "math_sdp_enabled",
    "matmul",
    "mem_efficient_sdp_enabled",
    "preferred_linalg_library",
    "sdp_kernel",
]


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: TF32 and reduced-precision reduction switches."""

    def __init__(self) -> None:
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "none"

    # one switch with set_float32_matmul_precision, as in torch: TF32 is any precision but
    # "highest" (ember's numpy matmuls compute in full float32 whatever it says)
    @property
    def allow_tf32(self) -> bool:
        return _runtime.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _runtime.set_float32_matmul_precision("high" if value else "highest")

    def __repr__(self) -> str:
        return f"<torch.backends.cuda.matmul: allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()


class _PlanCache:
    size = 0
    max_size = 0

    def clear(self) -> None:
        pass

    def __getitem__(self, device) -> _PlanCache:
        return self


cufft_plan_cache = _PlanCache()


def is_built() -> bool:
    """Whether ember can use CUDA at all here (cupy is installed)."""
    return importlib.util.find_spec("cupy") is not None


_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}


def is_flash_attention_available() -> bool:
    """Whether a FlashAttention kernel is built in: never in ember (one SDPA implementation)."""
    return False


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Set the attention backend switches inside a ``with`` block (restored after); deprecated
    in favour of ``torch.nn.attention.sdpa_kernel``, as in torch."""
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.",
        FutureWarning,
        stacklevel=2,
    )
    return _sdp_switches(enable_flash, enable_math, enable_mem_efficient, enable_cudnn)


@contextlib.contextmanager
def _sdp_switches(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    old = dict(_sdp)
    _sdp.update(
        flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn
    )
    try:
        yield
    finally:
        _sdp.update(old)


_linalg = ["default"]


def preferred_linalg_library(backend=None) -> str:
    """Record a preferred GPU linear-algebra library (ember uses cupy's); returns the setting."""
    if backend is not None:
        _linalg[0] = str(backend)
    return _linalg[0]
