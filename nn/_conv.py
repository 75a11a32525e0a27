"""Functional convolutions (torch.nn.functional.conv*, conv_transpose*, unfold, fold).

The ops live in core/ops/convolution.py (im2col + one GEMM; see its docstring); this module only
gives them their torch.nn.functional names.
"""

from __future__ import annotations

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

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "unfold",
]
