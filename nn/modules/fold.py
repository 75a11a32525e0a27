"""Fold and Unfold (torch.nn.modules.fold): col2im and im2col as modules."""

from __future__ import annotations

from ...core.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class _BlocksBase(Module):
    """kernel_size, dilation, padding and stride of a Fold/Unfold, and their repr."""

    _init_per_layer = True  # torch writes this __init__ in each layer

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def extra_repr(self) -> str:
        return (
            "kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
            "stride={stride}".format(**self.__dict__)
        )


class Fold(_BlocksBase):
    """Combines sliding local blocks (N, C*prod(kernel_size), L) into (N, C, *output_size)."""

    __constants__ = ("output_size", "kernel_size", "dilation", "padding", "stride")

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, {super().extra_repr()}"


class Unfold(_BlocksBase):
    """Extracts sliding local blocks: (N, C, H, W) -> (N, C*prod(kernel_size), L)."""

    __constants__ = ("kernel_size", "dilation", "padding", "stride")

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)
