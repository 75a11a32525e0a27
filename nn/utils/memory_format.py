"""Weight memory-format conversion of convolutions (torch.nn.utils.memory_format)."""

from __future__ import annotations

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, kinds: tuple, memory_format) -> Module:
    # only the convolutions' weights change layout (the rest of the tree is left alone); the
    # Parameter object stays, its data becomes a copy laid out in ``memory_format``
    if isinstance(module, kinds):
        data = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = data.resize_(data.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, kinds, memory_format)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Lay out the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (itself or any
    descendant) in ``memory_format``, e.g. ``torch.channels_last``; returns ``module``."""
    return _convert(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """Lay out the weight of every ``Conv3d``/``ConvTranspose3d`` in ``module`` (itself or any
    descendant) in ``memory_format``, e.g. ``torch.channels_last_3d``; returns ``module``."""
    return _convert(module, (Conv3d, ConvTranspose3d), memory_format)
