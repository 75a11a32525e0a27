"""Functional convolutions (torch.nn.functional.conv*, conv_transpose*, conv_tbc, unfold, fold).

The ops live in core/ops/convolution.py (im2col + one GEMM; see its docstring); this module gives
them their torch.nn.functional names, and lays conv_tbc's time-batch-channel form onto conv1d.
"""

from __future__ import annotations

from ..autograd.node import as_torch_node
from ..core.ops.convolution import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from ..core.tensor import Tensor

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_tbc",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "unfold",
]


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution in time-batch-channel layout: input (T, B, C_in), weight
    (k, C_in, C_out), bias (C_out,), ``pad`` zeros at both ends of time (negative: cropped);
    output (T + 2 pad - k + 1, B, C_out)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    x = input.permute(1, 2, 0)
    if pad < 0:  # torch crops: conv1d takes no negative padding
        x, pad = x[:, :, -pad : x.shape[2] + pad], 0
    out = conv1d(x, weight.permute(2, 1, 0), bias, 1, pad)
    return as_torch_node(out.permute(2, 0, 1), "ConvTbcBackward0")  # one kernel in torch
