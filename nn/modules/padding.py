"""Padding layers (torch.nn.modules.padding): constant/zero, reflection, replication, circular.

Each keeps every dim name of its input (spec 4.3: padding keeps all names).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core.ops.padding import pad as _pad
from ...core.tensor import Tensor
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _ntuple(padding, n: int) -> tuple:
    if isinstance(padding, Sequence) and not isinstance(padding, str):
        return tuple(padding)
    return (padding,) * n


class _PadNd(Module):
    _init_per_layer = True  # torch writes this __init__ in each layer

    __constants__ = ("padding",)
    _mode = "constant"
    _n = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._n)

    def forward(self, input: Tensor) -> Tensor:
        return _pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    _init_per_layer = True  # torch writes this __init__ in each layer

    __constants__ = ("padding", "value")

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return _pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``: ``padding`` is an int or (left, right)."""

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``: ``padding`` is an int or (left, right, top, bottom)."""

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``: an int or (left, right, top, bottom, front, back)."""

    _n = 3


class _ZeroPadMixin:
    """A ConstantPadNd with value 0, whose repr shows only the padding."""

    _init_per_layer = True  # torch writes this __init__ in each layer

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadMixin, ConstantPad1d):
    """Pads the last dim with zeros."""


class ZeroPad2d(_ZeroPadMixin, ConstantPad2d):
    """Pads the last 2 dims with zeros."""


class ZeroPad3d(_ZeroPadMixin, ConstantPad3d):
    """Pads the last 3 dims with zeros."""


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its reflection (the edge itself not repeated)."""

    _n = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last 2 dims with their reflection."""

    _n = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last 3 dims with their reflection."""

    _n = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values."""

    _n = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last 2 dims by repeating their edge values."""

    _n = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last 3 dims by repeating their edge values."""

    _n = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input: Tensor) -> None:
        n = self._n
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return _pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pads the last dim circularly (wrapping around)."""

    _n = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims circularly."""

    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims circularly."""

    _n = 3
