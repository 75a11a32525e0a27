"""Conv1d/2d/3d, ConvTranspose1d/2d/3d and their Lazy variants (torch.nn.modules.conv).

Parameters, shapes, default initialisation, ``extra_repr`` and argument errors follow torch:
weight (out, in/groups, *kernel) for convolutions, (in, out/groups, *kernel) for transposed ones,
``kaiming_uniform_(a=sqrt(5))`` for the weight and U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias.
Non-zero padding modes pad with F.pad first. Names (spec 4.3): see core/ops/convolution.py.
"""

from __future__ import annotations

import math
from typing import Any

from ...autograd.grad_mode import no_grad
from ...core.ops.creation import empty
from ...core.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module, _name_init

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]

_PADDING_STRINGS = frozenset(("same", "valid"))
_PADDING_MODES = frozenset(("zeros", "reflect", "replicate", "circular"))


def _ntuple(v, n: int) -> tuple:
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """The shared machinery of every convolution module."""

    __constants__ = (
        "stride",
        "padding",
        "dilation",
        "groups",
        "padding_mode",
        "output_padding",
        "in_channels",
        "out_channels",
        "kernel_size",
    )
    _nd = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed: bool,
        output_padding,
        groups: int,
        bias: bool,
        padding_mode: str,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {set(_PADDING_STRINGS)}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts (last dim first) for the non-zero padding modes
        if isinstance(padding, str):
            rev = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    rev[2 * i] = left
                    rev[2 * i + 1] = total - left
        else:
            rev = [p for p in reversed(padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = rev
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    @classmethod
    def _geometry(cls, kernel_size, stride, padding, dilation) -> tuple:
        """kernel_size, stride, padding (unless a string) and dilation as ``_nd``-tuples."""
        n = cls._nd
        if not isinstance(padding, str):
            padding = _ntuple(padding, n)
        return _ntuple(kernel_size, n), _ntuple(stride, n), padding, _ntuple(dilation, n)

    def reset_parameters(self) -> None:
        # kaiming_uniform(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), torch's default
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _init_per_layer = True  # torch writes this __init__ in each layer

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        geometry = self._geometry(kernel_size, stride, padding, dilation)
        super().__init__(in_channels, out_channels, *geometry, False, (0,) * self._nd, groups, bias,
                         padding_mode, device, dtype)  # fmt: skip

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        fn = self._fn
        if self.padding_mode != "zeros":
            x = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(x, weight, bias, self.stride, (0,) * self._nd, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or (C_in, L) inputs."""

    _nd = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) inputs."""

    _nd = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) inputs."""

    _nd = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _init_per_layer = True  # torch writes this __init__ in each layer

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {self.__class__.__name__}'
            )
        if isinstance(padding, str):
            # no padding strings here: torch splits one into characters like any sequence, and
            # the forward then rejects them
            padding = tuple(padding)
        geometry = self._geometry(kernel_size, stride, padding, dilation)
        super().__init__(in_channels, out_channels, *geometry, True, _ntuple(output_padding, self._nd), groups, bias,
                         padding_mode, device, dtype)  # fmt: skip

    def _output_padding(
        self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None
    ):
        """The output_padding that makes the output ``output_size`` (torch's helper)."""
        if output_size is None:
            return _ntuple(self.output_padding, num_spatial_dims)
        has_batch = input.dim() == num_spatial_dims + 2
        non_spatial = 2 if has_batch else 1
        # sliced, not converted: torch's size error shows the sequence as given (tuple, list)
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have {num_spatial_dims} or {non_spatial + num_spatial_dims} elements (got "
                f"{len(output_size)})"
            )
        dilation = dilation if dilation is not None else (1,) * num_spatial_dims
        mins, maxs = [], []
        for d in range(num_spatial_dims):
            size = (
                (input.size(d + non_spatial) - 1) * stride[d]
                - 2 * padding[d]
                + dilation[d] * (kernel_size[d] - 1)
                + 1
            )
            mins.append(size)
            maxs.append(size + stride[d] - 1)
        for i in range(len(output_size)):
            size = output_size[i]
            if size < mins[i] or size > maxs[i]:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{mins} to {maxs} (for an input of {input.size()[2:]})"
                )
        return tuple(output_size[d] - mins[d] for d in range(num_spatial_dims))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        n = self._nd
        output_padding = self._output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, n, self.dilation
        )
        return self._fn(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution ("deconvolution"); weight (C_in, C_out/groups, k)."""

    _nd = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution; weight (C_in, C_out/groups, kh, kw)."""

    _nd = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution; weight (C_in, C_out/groups, kd, kh, kw)."""

    _nd = 3
    _fn = staticmethod(F.conv_transpose3d)


# ---------------------------------------------------------------------- lazy variants
class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels is inferred from the first input; the module then becomes cls_to_become."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(
                f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == nd + 2 else input.shape[0]

    def _uninitialized(self, out_channels: int, bias: bool, device, dtype) -> None:
        """Replace the 0-channel placeholder's parameters by uninitialized ones."""
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    shape = (self.in_channels, self.out_channels // self.groups)
                else:
                    shape = (self.out_channels, self.in_channels // self.groups)
                self.weight.materialize(shape + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _named_lazy(lazy, cls):
    """Name ``lazy`` (the Lazy form of ``cls``) as this module's public class Lazy<cls name>."""
    lazy.__name__ = lazy.__qualname__ = f"Lazy{cls.__name__}"
    lazy.__doc__ = f"A {cls.__name__} whose in_channels is inferred from the first input."
    lazy.__module__ = __name__
    _name_init(lazy)  # argument errors name the public class, as torch's
    return lazy


def _lazy_conv(cls):
    class LazyConv(_LazyConvXdMixin, cls):
        cls_to_become = cls
        weight: UninitializedParameter
        bias: UninitializedParameter

        def __init__(
            self,
            out_channels: int,
            kernel_size,
            stride=1,
            padding=0,
            dilation=1,
            groups: int = 1,
            bias: bool = True,
            padding_mode: str = "zeros",
            device=None,
            dtype=None,
        ) -> None:
            # a 0-channel module without bias: no initialisation work until the shape is known
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode)  # fmt: skip
            self._uninitialized(out_channels, bias, device, dtype)

    return _named_lazy(LazyConv, cls)


def _lazy_conv_transpose(cls):
    class LazyConvTranspose(_LazyConvXdMixin, cls):
        cls_to_become = cls
        weight: UninitializedParameter
        bias: UninitializedParameter

        def __init__(
            self,
            out_channels: int,
            kernel_size,
            stride=1,
            padding=0,
            output_padding=0,
            groups: int = 1,
            bias: bool = True,
            dilation=1,
            padding_mode: str = "zeros",
            device=None,
            dtype=None,
        ) -> None:
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                             dilation, padding_mode)  # fmt: skip
            self._uninitialized(out_channels, bias, device, dtype)

    return _named_lazy(LazyConvTranspose, cls)


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d)
