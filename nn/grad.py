"""torch.nn.grad: the gradients of a convolution with respect to its input and its weight.

``convNd_input(input_size, weight, grad_output, ...)`` is the transposed convolution of
``grad_output`` sized back to ``input_size``; ``convNd_weight(input, weight_size, grad_output,
...)`` is the weight's vector-Jacobian product, computed by the convolution's own backward. Both
are differentiable (``create_graph`` is on when an argument requires grad), as custom autograd
Functions that re-implement a convolution need.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..autograd.engine import grad as _grad
from ..autograd.grad_mode import enable_grad
from ..core.ops.convolution import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from ..core.tensor import Tensor

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]

_CONV = {1: conv1d, 2: conv2d, 3: conv3d}
_CONVT = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}


def _tuple(v, nd: int, what: str) -> tuple[int, ...]:
    t = tuple(v) if isinstance(v, Sequence) else (v,) * nd
    if len(t) != nd or not all(isinstance(i, int) for i in t):
        raise ValueError(f"{what} must be an int or a sequence of {nd} ints, got {v!r}")
    return t


def _out_size(size, k, s, p, d) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _input(nd, input_size, weight, grad_output, stride, padding, dilation, groups) -> Tensor:
    fname = f"conv{nd}d_input"
    stride, padding, dilation = (
        _tuple(v, nd, n)
        for v, n in ((stride, "stride"), (padding, "padding"), (dilation, "dilation"))
    )
    size = tuple(int(n) for n in input_size)
    if len(size) != nd + 2 or grad_output.dim() != nd + 2 or weight.dim() != nd + 2:
        raise RuntimeError(
            f"{fname}: expected a {nd + 2}-d input_size, weight and grad_output (batch, channels, "
            f"{nd} spatial), got input_size {list(size)}, weight {list(weight.shape)} and "
            f"grad_output {list(grad_output.shape)}"
        )
    want = [
        _out_size(n, k, s, p, d)
        for n, k, s, p, d in zip(size[2:], weight.shape[2:], stride, padding, dilation)
    ]
    if want != list(grad_output.shape[2:]):
        raise RuntimeError(
            f"{fname}: a convolution of an input of size {list(size)} gives outputs of spatial "
            f"size {want}, but grad_output has {list(grad_output.shape[2:])}"
        )
    # the transposed convolution's output size is ambiguous up to stride - 1: pad it to size
    extra = [
        n - ((o - 1) * s - 2 * p + d * (k - 1) + 1)
        for n, o, s, p, d, k in zip(
            size[2:], grad_output.shape[2:], stride, padding, dilation, weight.shape[2:]
        )
    ]
    return _CONVT[nd](grad_output, weight, None, stride, padding, tuple(extra), groups, dilation)


def _weight(nd, input, weight_size, grad_output, stride, padding, dilation, groups) -> Tensor:
    fname = f"conv{nd}d_weight"
    w = input.new_zeros(tuple(int(n) for n in weight_size)).requires_grad_(True)
    with enable_grad():
        y = _CONV[nd](input, w, None, stride, padding, dilation, groups)
    if y.shape != grad_output.shape:
        raise RuntimeError(
            f"{fname}: a convolution of input {list(input.shape)} with a weight of size "
            f"{list(w.shape)} gives outputs of size {list(y.shape)}, but grad_output has "
            f"{list(grad_output.shape)}"
        )
    create = input.requires_grad or grad_output.requires_grad
    (gw,) = _grad(y, w, grad_output, create_graph=create)
    return gw


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv1d with respect to its input (of shape ``input_size``)."""
    return _input(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv1d with respect to its weight (of shape ``weight_size``)."""
    return _weight(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv2d with respect to its input (of shape ``input_size``)."""
    return _input(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv2d with respect to its weight (of shape ``weight_size``)."""
    return _weight(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv3d with respect to its input (of shape ``input_size``)."""
    return _input(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv3d with respect to its weight (of shape ``weight_size``)."""
    return _weight(3, input, weight_size, grad_output, stride, padding, dilation, groups)
