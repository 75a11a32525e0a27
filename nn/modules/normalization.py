"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and CrossMapLRN2d
(torch.nn.modules.normalization). Norm layers keep every name of their input (spec 4.3)."""

from __future__ import annotations

import numbers

from ...core.ops.creation import empty
from ...core.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


def _shape(normalized_shape) -> tuple:
    # kept as given, like torch: a bad entry is empty()'s error (only with an affine weight)
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


def _register_affine(module, affine: bool, bias: bool, shape, device, dtype) -> None:
    """``module.weight`` / ``module.bias`` of ``shape`` (left uninitialised: reset_parameters
    fills them) when ``affine`` (the bias only with ``bias``), else registered as None."""
    for name, present in (("weight", affine), ("bias", affine and bias)):
        if present:
            setattr(module, name, Parameter(empty(shape, device=device, dtype=dtype)))
        else:
            module.register_parameter(name, None)


def _reset_affine(module, affine: bool) -> None:
    """torch's affine initialisation of a norm layer: weight ones, bias (if any) zeros."""
    if affine:
        init.ones_(module.weight)
        if getattr(module, "bias", None) is not None:
            init.zeros_(module.bias)


class _LRNBase(Module):
    """size, alpha, beta, k and their repr: shared by LocalResponseNorm and CrossMapLRN2d."""

    def __init__(self, size: int, alpha: float, beta: float, k: float) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LocalResponseNorm(_LRNBase):
    """Local response normalization across channels (see F.local_response_norm)."""

    __constants__ = ("size", "alpha", "beta", "k")

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(_LRNBase):
    """Local response normalization across the channels of a 4D input (the legacy Lua form)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        from ...core.ops.normalization import cross_map_lrn2d

        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)


class LayerNorm(Module):
    """Layer normalization over the trailing ``normalized_shape`` dims, with an elementwise
    affine (weight initialised to ones, bias to zeros) unless ``elementwise_affine=False``."""

    __constants__ = ("normalized_shape", "eps", "elementwise_affine")

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, elementwise_affine, bias, self.normalized_shape, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Group normalization: ``num_channels`` split into ``num_groups`` groups, each normalized
    per sample; a per-channel affine (ones / zeros) when ``affine``."""

    __constants__ = ("num_groups", "num_channels", "eps", "affine")

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, affine, bias, num_channels, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self, self.affine)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims, scaled by a
    weight (ones) when ``elementwise_affine``; ``eps=None`` uses the machine epsilon of the dtype
    it computes in (float32 for float16/bfloat16)."""

    __constants__ = ("normalized_shape", "eps", "elementwise_affine")

    def __init__(
        self,
        normalized_shape,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self, self.elementwise_affine)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )
