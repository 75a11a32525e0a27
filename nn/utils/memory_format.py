"""Weight memory-format conversion of convolutions (torch.nn.utils.memory_format).

ember tensors have one (contiguous) layout, so these only walk the module tree and return it."""

from __future__ import annotations

from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Return ``module`` (layouts are a no-op in ember; kept for API compatibility)."""
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """Return ``module`` (layouts are a no-op in ember; kept for API compatibility)."""
    for child in module.children():
        convert_conv3d_weight_memory_format(child, memory_format)
    return module
