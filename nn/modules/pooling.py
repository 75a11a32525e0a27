"""Pooling layers (torch.nn.modules.pooling): max, average, LP, adaptive, fractional, unpooling.

Every pooling layer keeps all names of its input (spec 4.3). Each family's base class holds the
forward; a per-dimension subclass names its functional in ``_fn``.
"""

from __future__ import annotations

from ...core.tensor import Tensor
from .. import _pooling as F
from .module import Module

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


def _ntuple(v, n):
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


# ---------------------------------------------------------------------- max pooling
class _MaxPoolNd(Module):
    __constants__ = ("kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode")

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )

    def forward(self, input: Tensor):
        return self._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling over (N, C, L) or (C, L) inputs."""

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling over (N, C, H, W) or (C, H, W) inputs."""

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W) inputs."""

    _fn = staticmethod(F.max_pool3d)


# ---------------------------------------------------------------------- max unpooling
class _MaxUnpoolNd(Module):
    _init_per_layer = True  # torch writes this __init__ in each layer

    _nd = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        n = self._nd
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if (stride is not None) else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of MaxPool1d (non-maximal positions become zero)."""

    _nd = 1
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of MaxPool2d (non-maximal positions become zero)."""

    _nd = 2
    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of MaxPool3d (non-maximal positions become zero)."""

    _nd = 3
    _fn = staticmethod(F.max_unpool3d)


# ---------------------------------------------------------------------- average pooling
class _AvgPoolNd(Module):
    __constants__ = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1-d average pooling over (N, C, L) or (C, L) inputs."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class AvgPool2d(_AvgPoolNd):
    """2-d average pooling over (N, C, H, W) or (C, H, W) inputs."""

    _init_per_layer = True  # torch writes this __init__ in each layer

    __constants__ = _AvgPoolNd.__constants__ + ("divisor_override",)
    _fn = staticmethod(F.avg_pool2d)

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AvgPool3d(AvgPool2d):
    """3-d average pooling over (N, C, D, H, W) or (C, D, H, W) inputs."""

    _fn = staticmethod(F.avg_pool3d)


# ---------------------------------------------------------------------- LP pooling
class _LPPoolNd(Module):
    __constants__ = ("norm_type", "kernel_size", "stride", "ceil_mode")

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """1-d power-average pooling: (sum of x^p over the window)^(1/p)."""

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-d power-average pooling: (sum of x^p over the window)^(1/p)."""

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-d power-average pooling: (sum of x^p over the window)^(1/p)."""

    _fn = staticmethod(F.lp_pool3d)


# ---------------------------------------------------------------------- adaptive pooling
class _AdaptiveMaxPoolNd(Module):
    __constants__ = ("output_size", "return_indices")

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor):
        return self._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-d adaptive max pooling to ``output_size``."""

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-d adaptive max pooling to ``output_size`` (None keeps a dim)."""

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-d adaptive max pooling to ``output_size`` (None keeps a dim)."""

    _fn = staticmethod(F.adaptive_max_pool3d)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ("output_size",)

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """1-d adaptive average pooling to ``output_size``."""

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """2-d adaptive average pooling to ``output_size`` (None keeps a dim)."""

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-d adaptive average pooling to ``output_size`` (None keeps a dim)."""

    _fn = staticmethod(F.adaptive_avg_pool3d)


# ---------------------------------------------------------------------- fractional max pooling
class _FractionalMaxPoolNd(Module):
    _init_per_layer = True  # torch writes this __init__ in each layer

    _nd = 0
    __constants__ = ("kernel_size", "return_indices", "output_size", "output_ratio")

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples=None,
    ) -> None:
        super().__init__()
        n = self._nd
        # torch checks the kernel size of the 3-d layer only
        if n == 3 and (
            (isinstance(kernel_size, int) and kernel_size <= 0)
            or (isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))
        ):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{type(self).__name__} requires specifying either an output size, or a "
                "pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        return self._fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling (Graham, 2014)."""

    _nd = 2
    _fn = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling (Graham, 2014)."""

    _nd = 3
    _fn = staticmethod(F.fractional_max_pool3d)
