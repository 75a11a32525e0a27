"""ember._C (torch._C): the TorchScript fusion switches that training scripts flip at start-up.

torch._C is torch's C++ binding; ember has none. It provides the ``__torch_function__`` switches
(``DisableTorchFunctionSubclass``, ``DisableTorchFunction``, ``_disabled_torch_function_impl``,
from core/torch_function.py) and, for the rest, what real code reaches for is the handful of JIT
settings Megatron-style scripts set before training (``set_jit_fusion_options``: the profiling
executor, the CPU/GPU fusers, the tensor-expression fuser, nvFuser, autodiff subgraph inlining).
ember has no graph executor, so these switches only remember what they were given and answer with
torch's return values, which lets such scripts run unchanged: a setter that torch makes return the
previous value does so here too, the others return None. Values are taken by truthiness, as
torch's bindings take them.
"""

# ruff: noqa: N999 - the module is named after torch._C, which scripts reach by that name

from __future__ import annotations

from .core.torch_function import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
)

__all__: list[str] = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "_disabled_torch_function_impl",
]

# torch's defaults on a CPU build
_state = {
    "profiling_executor": True,
    "profiling_mode": True,
    "fuse_cpu": False,
    "fuse_gpu": False,
    "texpr": True,
    "autodiff_inlining": True,
    "llga": False,
}


def _swap(key: str, value) -> bool:
    old = _state[key]
    _state[key] = bool(value)
    return old


def _jit_set_profiling_executor(enabled) -> bool:
    """Turn the profiling graph executor on or off; returns the previous setting."""
    return _swap("profiling_executor", enabled)


def _jit_set_profiling_mode(enabled) -> bool:
    """Turn profiling mode on or off; returns the previous setting."""
    return _swap("profiling_mode", enabled)


def _jit_override_can_fuse_on_cpu(enabled) -> None:
    """Allow or forbid the legacy fuser on CPU (ember fuses nothing)."""
    _swap("fuse_cpu", enabled)


def _jit_override_can_fuse_on_gpu(enabled) -> None:
    """Allow or forbid the legacy fuser on GPU (ember fuses nothing)."""
    _swap("fuse_gpu", enabled)


def _jit_can_fuse_on_cpu() -> bool:
    return _state["fuse_cpu"]


def _jit_can_fuse_on_gpu() -> bool:
    return _state["fuse_gpu"]


def _jit_set_texpr_fuser_enabled(enabled) -> None:
    """Turn the tensor-expression fuser on or off."""
    _swap("texpr", enabled)


def _jit_texpr_fuser_enabled() -> bool:
    return _state["texpr"]


def _jit_set_nvfuser_enabled(enabled) -> None:
    """A no-op, as in torch 2.x (nvFuser left TorchScript); answers None."""


def _jit_nvfuser_enabled() -> None:
    return None


def _jit_set_llga_enabled(enabled) -> bool:
    """Turn the oneDNN graph (LLGA) fuser on or off; returns the previous setting."""
    return _swap("llga", enabled)


def _jit_llga_enabled() -> bool:
    return _state["llga"]


def _debug_set_autodiff_subgraph_inlining(enabled) -> None:
    """Inline (or keep) differentiable subgraphs in the graph executor."""
    _swap("autodiff_inlining", enabled)
