"""Functional normalization (torch.nn.functional): batch_norm, instance_norm, layer_norm,
group_norm, rms_norm, local_response_norm. The fused kernels live in core/ops/normalization.py;
this file maps torch's F signatures onto them, with torch's argument checks."""

from __future__ import annotations

import math
import numbers

from ..autograd.node import as_torch_node as _as_torch_node
from ..core import vmap as _vmap
from ..core.arg_errors import int_list, invalid_arguments, type_name
from ..core.autocast import entry as _autocast_entry
from ..core.dtype import scalar_name
from ..core.ops import normalization as _norm
from ..core.tensor import Tensor, number_arg
from ._args import arg_type_error

__all__ = [
    "batch_norm",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "local_response_norm",
    "rms_norm",
]


def _shape_arg(fn: str, normalized_shape) -> tuple:
    t = normalized_shape
    if type(t) is tuple and len(t) == 1 and type(t[0]) is int:  # the common (C,), as below
        return t
    if isinstance(normalized_shape, (int, str)) or not hasattr(normalized_shape, "__iter__"):
        raise TypeError(
            f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
            f"{type(normalized_shape).__name__}"
        )
    return tuple(int(k) for k in normalized_shape)


@_autocast_entry
def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Layer normalization over the trailing dims given by ``normalized_shape``."""
    shape = _shape_arg("layer_norm", normalized_shape)
    eps = number_arg(eps, "layer_norm", "eps", 5, "float")
    try:
        return _norm.layer_norm(input, shape, weight, bias, eps)
    except AttributeError as e:
        names = ("input", "normalized_shape", "weight", "bias")
        raise arg_type_error("layer_norm", e, names, (input, None, weight, bias)) from None


def _verify_batch_size(input) -> None:
    """torch's F.batch_norm check in training (a single value per channel has no variance), made
    before its kernel's own checks."""
    shape = tuple(input.shape)
    if shape[0] * math.prod(shape[2:]) == 1:  # (0-d: the tuple's IndexError, as torch)
        raise ValueError(
            "Expected more than 1 value per channel when training, got input size "
            f"torch.Size({list(shape)})"
        )


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalization over every dim but dim 1; in training the running statistics (when
    given) are updated in place with ``momentum`` (the variance unbiased, like torch)."""
    if training and _vmap.SLICES:
        _verify_batch_size(input)  # torch's Python-level check, before vmap's
        _vmap.refuse_unbatched_stats(running_mean, running_var)
    # torch's checks (a batch of equal values would divide 0 by 0), in its order: out of
    # training it compares with < first (a non-number: that comparison's TypeError)
    if training and eps <= 0.0:
        _verify_batch_size(input)  # (checked first in torch)
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    try:
        return _norm._batch_norm(
            input, running_mean, running_var, weight, bias, training, momentum, eps
        )[0]
    except (AttributeError, TypeError) as e:
        # torch's parser checks in ATen's order: weight and bias before the running stats
        names = ("input", "weight", "bias", "running_mean", "running_var")
        args = (input, weight, bias, running_mean, running_var)
        raise arg_type_error("batch_norm", e, names, args) from None


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Instance normalization: each (sample, channel) normalized over its spatial dims."""
    if use_input_stats:
        shape = tuple(input.size())
        if math.prod(shape[2:]) == 1:  # (a 0-d or 1-d input too)
            raise ValueError(
                "Expected more than 1 spatial element when training, got input size "
                f"torch.Size({list(shape)})"
            )
    if use_input_stats and _vmap.SLICES:  # (after the size check, as torch)
        _vmap.refuse_unbatched_stats(running_mean, running_var)
    elif input.dim() < 2:  # torch's kernel reads dims 0 and 1, after the statistics' check
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "Expected running_mean and running_var to be defined when use_input_stats is false"
            )
        if not input.dim():
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        _norm._dim1_error(1)
    if type(use_input_stats) is not bool or type(momentum) is not float or type(eps) is not float:
        _norm._check_bn_scalars("instance_norm", use_input_stats, momentum, eps)
    try:
        out = _norm._instance_norm(
            input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
        )
    except (AttributeError, TypeError) as e:
        names = ("input", "weight", "bias", "running_mean", "running_var")
        args = (input, weight, bias, running_mean, running_var)
        raise arg_type_error("instance_norm", e, names, args) from None
    # torch batch-normalizes a (1, N*C, ...) view and views the result back
    return _as_torch_node(out, "ViewBackward0")


@_autocast_entry
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Group normalization: channels split into ``num_groups`` groups, each sample's group
    normalized over its channels and spatial dims; then a per-channel affine."""
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    shape = list(input.shape)
    # torch checks the (N * C / G, G, *spatial) view has more than 1 value (num_groups=0: its
    # ZeroDivisionError)
    view = [shape[0] * shape[1] // num_groups, num_groups, *shape[2:]]
    if view[0] * math.prod(view[2:]) == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {view}"
        )
    num_groups = number_arg(num_groups, "group_norm", "num_groups", 2, "int")  # (parser: first)
    try:
        return _norm.group_norm(input, num_groups, weight, bias, eps)
    except (AttributeError, TypeError) as e:
        names = ("input", "num_groups", "weight", "bias")
        err = arg_type_error("group_norm", e, names, (input, None, weight, bias))
        if err is e and type(num_groups) is not int:
            err = TypeError(
                "group_norm(): argument 'num_groups' (position 2) must be int, not "
                f"{type(num_groups).__name__}"
            )
        raise err from None


def rms_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims; ``eps``
    defaults to the machine epsilon of the dtype it computes in (float32 for float16 and
    bfloat16 inputs)."""
    ns = _shape_arg("rms_norm", normalized_shape)
    try:
        return _norm.rms_norm(input, ns, weight, eps)
    except (AttributeError, TypeError) as e:
        names = ("input", "normalized_shape", "weight")
        raise arg_type_error("rms_norm", e, names, (input, None, weight)) from None


@_autocast_entry
def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Local response normalization across channels: x / (k + alpha/size * sum of x^2 over a
    window of ``size`` neighbouring channels)^beta (the window is zero-padded)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality                          input (got "
            f"{dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    if type(size) is not int or size < 1:
        _lrn_size_check(size, dim, input.shape[1])
    # torch averages the squares with avg_pool2d (3-D inputs) or avg_pool3d, and refuses the
    # dtypes those cpu kernels lack
    ok = ("float32", "float64", "int64") + (("float16", "bfloat16") if dim == 3 else ())
    if input.dtype.name not in ok:
        kernel = "avg_pool2d" if dim == 3 else "avg_pool3d_out_frame"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(input.dtype)}'")
    try:
        return _norm.lrn(input, size, alpha, beta, k)
    except TypeError:
        # torch scales the pooled squares with the Tensor methods mul(alpha), add(k), pow(beta)
        for fn, v in (("mul", alpha), ("add", k), ("pow", beta)):
            if not isinstance(v, (numbers.Number, Tensor)):
                if fn == "pow":
                    sigs = ("(Tensor exponent)", "(Number exponent)")
                    raise invalid_arguments(fn, (v,), {}, sigs) from None
                raise TypeError(
                    f"{fn}(): argument 'other' (position 1) must be Tensor, not {type_name(v)}"
                ) from None
        raise


def _lrn_size_check(size, dim: int, channels: int) -> None:
    """torch's error for a window ``size`` that is no positive int: its zero padding of
    ``size // 2`` and ``(size - 1) // 2`` channels (negative ones crop) takes ints only, then
    average pooling refuses a bool or non-positive window size."""
    pad = (0, 0) * (dim - 2 if dim > 3 else 1) + (size // 2, (size - 1) // 2)
    int_list("pad", "pad", 2, pad)
    pool = "avg_pool3d" if dim > 3 else "avg_pool2d"
    if isinstance(size, bool):
        raise TypeError(
            f"{pool}(): argument 'kernel_size' (position 2) must be tuple of ints, but found "
            "element of type bool at pos 0"
        )
    if channels + pad[-2] + pad[-1] < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if size >= -1:  # (C++'s -1 / 2 is 0: the padding check passes)
        window = f"kT: {size} kH: 1 kW: 1" if dim > 3 else f"kH: {size} kW: 1"
        raise RuntimeError(f"kernel size should be greater than zero, but got {window}")
    raise RuntimeError(
        f"pad should be at most half of effective kernel size, but got pad=0, kernel_size={size} "
        "and dilation=1"
    )
