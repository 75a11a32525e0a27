"""torch.nn.functional: torch's F names mapped onto ember ops.

Activations are plain compositions of registered ops (their derivatives come from the ops, so
double backward works); the in-place ``_`` variants compute out of place and write the result
into the input's storage (rebasing its history), like the registry's in-place ops. Dropout draws
its masks from ember's global generator of the input's device.
"""

from __future__ import annotations

import math
import numbers as _numbers
import warnings

import numpy as _np

from ..autograd.grad_mode import _state
from ..autograd.node import as_torch_node as _as_torch_node
from ..core import layout as _layout
from ..core import ops as _ops  # noqa: F401  (registers every op)
from ..core.arg_errors import invalid_arguments as _invalid_arguments
from ..core.arg_errors import type_name as _type_name
from ..core.autocast import entry as _autocast_entry
from ..core.dims import normalize_dim as _normalize_dim
from ..core.dtype import fill_scalar as _fill_scalar
from ..core.dtype import promote_types as _promote_types
from ..core.dtype import scalar_name
from ..core.meta import no_meta_kernel as _no_meta_kernel
from ..core.names import as_op_error as _as_op_error
from ..core.names import check_weight_dims as _check_weight_dims
from ..core.names import unify as _unify_names
from ..core.ops import activation as _act
from ..core.ops import embedding as _emb_ops
from ..core.ops.creation import zeros as _zeros
from ..core.ops.joining import broadcast_tensors as _broadcast_tensors
from ..core.ops.reduction import _tname
from ..core.random import default_generator_for as _gen_for
from ..core.registry import OPS as _OPS
from ..core.registry import _rebase_history, _snapshot
from ..core.tensor import Tensor, _wrap
from ..core.tensor import number_arg as _number
from ..overrides import (  # noqa: F401  (torch's F re-exports these for its __torch_function__)
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)
from . import _attention as _attention_mod
from . import _conv as _conv_mod
from . import _losses as _losses_mod
from . import _normalization as _normalization_mod
from . import _pooling as _pooling_mod
from . import _vision as _vision_mod
from . import grad  # noqa: F401  (torch.nn.functional.grad is torch.nn.grad)
from ._args import arg_type_error as _arg_type_error
from ._args import tensor_input as _tensor_input
from ._attention import *
from ._attention import _canonical_mask, _in_projection_packed, _none_or_dtype  # noqa: F401
from ._conv import *
from ._linear_cross_entropy import linear_cross_entropy
from ._losses import *
from ._normalization import *
from ._pooling import *
from ._vision import *

_embedding_op = _emb_ops._embedding
_softmax = _OPS["softmax"].public
_log_softmax = _OPS["log_softmax"].public
_threshold_op = _OPS["threshold"].public
_addmm = _OPS["addmm"].public

__all__ = [
    "alpha_dropout",
    "bilinear",
    "celu",
    "celu_",
    "cosine_similarity",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "elu_",
    "embedding",
    "embedding_bag",
    "feature_alpha_dropout",
    "gelu",
    "glu",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "linear",
    "linear_cross_entropy",
    "log_softmax",
    "logsigmoid",
    "mish",
    "normalize",
    "one_hot",
    "pairwise_distance",
    "pdist",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]
__all__ += _losses_mod.__all__  # the loss functions (nn/_losses.py)
__all__ += _attention_mod.__all__  # attention (nn/_attention.py)
__all__ += _conv_mod.__all__  # conv*, conv_transpose*, unfold, fold (nn/_conv.py)
__all__ += _normalization_mod.__all__  # batch_norm, layer_norm, ... (nn/_normalization.py)
__all__ += _vision_mod.__all__  # pad, interpolate, grid_sample, shuffles (nn/_vision.py)
__all__ += _pooling_mod.__all__  # max/avg/lp/adaptive/fractional pooling, unpool (nn/_pooling.py)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# ---------------------------------------------------------------------- in-place helper
def _inplace(input: Tensor, fn, *args, node: str | None = None) -> Tensor:
    """Run ``fn(input, *args)`` out of place and write the result into ``input`` (version bump;
    under autograd the input's history is rebased onto the result, its old value snapshotted).
    ``node``: the grad_fn name of torch's in-place kernel where it differs from the out-of-place
    one (elu_ saves its result, not its input: EluBackward1)."""
    src = input
    if _state.enabled and input.requires_grad:
        if input._grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        src = _snapshot(input)
    r = fn(src, *args)
    input._data[...] = r._data
    input._ver[0] += 1
    if r._grad_fn is not None and _state.enabled:
        if node is not None:
            _as_torch_node(r, node)
        _rebase_history(input, r)
    return input


# ---------------------------------------------------------------------- activations
def _in_opmath(fn, *tensors: Tensor) -> Tensor:
    """``fn(*tensors)`` for a composite that torch runs as one kernel: float16/bfloat16 inputs
    are computed in float32 and the result rounded once (its gradient too), as torch does."""
    dt = tensors[0].dtype
    if dt.itemsize != 2 or not dt.is_floating_point:
        return fn(*tensors)
    return fn(*(t.float() for t in tensors)).to(dt)


def _float_kernel_only(input: Tensor, kernel: str, complex_ok: bool = False) -> None:
    """torch's error for a kernel with no integer or bool (or complex) implementation."""
    d = input._data.dtype
    if d.kind in "biu" or (d.kind == "c" and not complex_ok):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(d)}'")


# float32's largest finite value: a limit within it needs no conversion check on the hot path
_F32_MAX = 3.4028234663852886e38
_I64 = _np.dtype(_np.int64)


_F32, _F64 = _np.dtype(_np.float32), _np.dtype(_np.float64)


def _to_scalar_type(v, npd):
    """``v`` as torch's kernel converts it to the numpy dtype ``npd``: its overflow error for a
    value the type cannot hold (a NaN or inf for an integer type; a complex one with an
    imaginary part); the value as given otherwise, a complex one as its real part."""
    _fill_scalar(v, npd)
    return v.real if isinstance(v, complex) else v


def _double(v):
    """``v`` as torch's binding reads a double argument (before the input's dtype is looked at):
    a complex one with an imaginary part refused, one without as its real part."""
    return _to_scalar_type(v, _F64) if isinstance(v, complex) else v


def _opmath_scalar(v, x: Tensor):
    """``v`` as a floating kernel converts a Scalar argument to ``x``'s compute type (double for
    float64, else float): torch's overflow error beyond float's range, or for a complex one."""
    if not isinstance(v, complex) and -_F32_MAX < v < _F32_MAX:  # (NaN: checked, and passes)
        return v
    return _to_scalar_type(v, _F64 if x._data.dtype == _F64 else _F32)


def _storage_scalar(v, x: Tensor):
    """:func:`_opmath_scalar` for a kernel that converts to ``x``'s own dtype (half included)."""
    npd = x._data.dtype
    if npd.itemsize > 2 and not isinstance(v, complex) and -_F32_MAX < v < _F32_MAX:
        return v
    return _to_scalar_type(v, npd)


@_tensor_input("threshold")
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where input <= ``threshold``, else input."""
    fn = "threshold_" if inplace else "threshold"
    threshold = _number(threshold, fn, "threshold", 2)
    value = _number(value, fn, "value", 3)
    npd = input._data.dtype
    if npd.kind in "bc":
        _float_kernel_only(input, "threshold_cpu")
    try:
        lim = _F32_MAX if npd.kind == "f" and npd.itemsize > 2 else 0.0
        fast = -lim < threshold < lim and -lim < value < lim
    except TypeError:  # (a complex number)
        fast = False
    if not fast:
        # the kernel compares in the input's opmath type (float32 for half types) and writes
        # the value in the input's
        opmath = _np.dtype(_np.float32) if npd.itemsize == 2 and npd.kind in "fV" else npd
        threshold = _to_scalar_type(threshold, opmath)
        value = _to_scalar_type(value, npd)
    if inplace:
        return input.threshold_(threshold, value)
    return _threshold_op(input, threshold, value)


_threshold_f = threshold  # (threshold_'s argument of that name hides the function)
# torch's F.threshold is its Python function _threshold: that name, in its missing-argument text
threshold.__name__ = threshold.__qualname__ = "_threshold"
threshold.__wrapped__.__name__ = threshold.__wrapped__.__qualname__ = "_threshold"
_threshold = threshold  # (where pickle finds it by that name)
_NOT_GIVEN = object()  # threshold_'s defaults: a missing argument, worded as torch's binding


@_tensor_input("threshold_", binding=True)
def threshold_(
    input: Tensor = _NOT_GIVEN, threshold: float = _NOT_GIVEN, value: float = _NOT_GIVEN
) -> Tensor:
    """In-place :func:`threshold`."""
    if input is _NOT_GIVEN or threshold is _NOT_GIVEN or value is _NOT_GIVEN:
        # torch's binding lists the required arguments from the first missing one on
        given = [a is not _NOT_GIVEN for a in (input, threshold, value)]
        miss = ("input", "threshold", "value")[given.index(False) :]
        raise TypeError(
            f"threshold_() missing {len(miss)} required positional argument"
            f"{'s' if len(miss) == 1 else ''}: " + ", ".join(f'"{m}"' for m in miss)
        )
    return _threshold_f(input, threshold, value, True)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    try:
        return input.relu_() if inplace else input.relu()
    except AttributeError as e:
        raise _arg_type_error("relu_" if inplace else "relu", e, ("input",), (input,)) from None


@_tensor_input("relu_")
def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return input.relu_()


_hardtanh = _act._hardtanh


@_tensor_input("hardtanh")
def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """x clamped into [min_val, max_val]."""
    if min_val > max_val:  # (first: torch compares before it reads a 0-d tensor's number)
        raise ValueError("min_val cannot be greater than max_val")
    min_val = _number(min_val, "hardtanh", "min_val", 2)
    max_val = _number(max_val, "hardtanh", "max_val", 3)
    return _hardtanh_checked(input, min_val, max_val, inplace)


def _hardtanh_checked(input: Tensor, min_val, max_val, inplace: bool) -> Tensor:
    npd = input._data.dtype
    kind = npd.kind
    if kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    try:
        lim = _F32_MAX if kind == "f" and npd.itemsize > 2 else 0.0
        fast = -lim < min_val < lim and -lim < max_val < lim
    except TypeError:  # (a complex limit, which hardtanh_ alone lets through)
        fast = False
    if not fast:
        min_val, max_val = _hardtanh_limits(npd, min_val, max_val)
    if inplace:
        return _inplace(input, _hardtanh, min_val, max_val)
    return _hardtanh(input, min_val, max_val)


def _hardtanh_limits(npd, min_val, max_val) -> tuple:
    """hardtanh's limits after torch's checked conversions to the input's type: an integer type
    reads them as int64 first (truncated toward zero), an unsigned one refuses a negative one;
    a floating one reads a complex limit (hardtanh_'s) as a double first."""
    if npd.kind in "iu":
        min_val, max_val = _fill_scalar(min_val, _I64), _fill_scalar(max_val, _I64)
        if npd.kind == "u" and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    else:
        min_val, max_val = _double(min_val), _double(max_val)
    return _to_scalar_type(min_val, npd), _to_scalar_type(max_val, npd)


@_tensor_input("hardtanh_", binding=True)
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh` (torch's binding: no min_val > max_val check, as clamp_)."""
    min_val = _number(min_val, "hardtanh_", "min_val", 2)
    max_val = _number(max_val, "hardtanh_", "max_val", 3)
    return _hardtanh_checked(input, min_val, max_val, True)


@_tensor_input("relu6")
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


_hardsigmoid = _act._hardsigmoid


@_tensor_input("hardsigmoid")
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    _float_kernel_only(input, "hardsigmoid_cpu")
    return _inplace(input, _hardsigmoid) if inplace else _hardsigmoid(input)


_hardswish = _act._hardswish


@_tensor_input("hardswish")
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    _float_kernel_only(input, "hardswish_cpu")
    return _inplace(input, _hardswish) if inplace else _hardswish(input)


def _elu(x: Tensor, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    _float_kernel_only(x, "elu_cpu")
    if scale != 1.0 or input_scale != 1.0:  # (elu_'s extra arguments)
        scale, input_scale = _opmath_scalar(scale, x), _opmath_scalar(input_scale, x)
    return _act._elu(x, _opmath_scalar(alpha, x), scale, input_scale)


@_tensor_input("elu")
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    alpha = _number(alpha, "elu_" if inplace else "elu", "alpha", 2)
    return _inplace(input, _elu, alpha, node="EluBackward1") if inplace else _elu(input, alpha)


@_tensor_input("elu_", binding=True)
def elu_(input: Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    """In-place :func:`elu`; torch's binding also takes the scales selu and celu use."""
    if scale == 1 and input_scale == 1:
        return elu(input, alpha, True)
    alpha = _number(alpha, "elu_", "alpha", 2)
    scale = _number(scale, "elu_", "scale", 3)
    input_scale = _number(input_scale, "elu_", "input_scale", 4)
    return _inplace(input, _elu, alpha, scale, input_scale, node="EluBackward1")


@_tensor_input("selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalizing constants."""
    if inplace:
        return _inplace(input, _elu, _SELU_ALPHA, _SELU_SCALE, node="EluBackward1")
    return _elu(input, _SELU_ALPHA, _SELU_SCALE)


@_tensor_input("selu_", binding=True)
def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return selu(input, True)


def _celu(x: Tensor, alpha: float) -> Tensor:
    # checked here, after _inplace's leaf check, in torch's order
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _float_kernel_only(x, "elu_cpu")
    alpha = _opmath_scalar(alpha, x)
    return _as_torch_node(_act._elu(x, alpha, 1.0, 1.0 / alpha), "CeluBackward0")


@_tensor_input("celu")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    alpha = _double(_number(alpha, "celu_" if inplace else "celu", "alpha", 2))
    if inplace:
        return _inplace(input, _celu, alpha, node="CeluBackward1")
    return _celu(input, alpha)


@_tensor_input("celu_", binding=True)
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return celu(input, alpha, True)


def _leaky_relu(x: Tensor, negative_slope: float) -> Tensor:
    _float_kernel_only(x, "leaky_relu_cpu")
    return _act._leaky_relu(x, _opmath_scalar(negative_slope, x))


@_tensor_input("leaky_relu")
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, negative_slope * x otherwise."""
    fn = "leaky_relu_" if inplace else "leaky_relu"
    negative_slope = _number(negative_slope, fn, "negative_slope", 2)
    if inplace:
        return _inplace(input, _leaky_relu, negative_slope, node="LeakyReluBackward1")
    return _leaky_relu(input, negative_slope)


@_tensor_input("leaky_relu_", binding=True)
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, True)


@_autocast_entry
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """leaky_relu with a learned slope: one for all channels, or one per channel (dim 1)."""
    _act.check_prelu_dtypes(input, weight)
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        c = input.shape[1] if input.dim() >= 2 else 1  # a 1-d input is one channel
        if n != c:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {n} and channel size = {c}."
            )
        if input.dim() >= 2:
            if weight._names is not None and input._names is not None:
                # spec 4.3: a named slope is checked against the channel dim (dim 1)
                _check_weight_dims("prelu", "channel", input._names, (1,), weight._names)
            weight = weight.reshape((n,) + (1,) * (input.dim() - 2))
    elif weight.dim() != 0:
        weight = weight.reshape(())
    _float_kernel_only(input, "prelu_cpu")
    return _act._prelu_kernel(input, weight)


def _rrelu(x: Tensor, lower: float, upper: float, training: bool) -> Tensor:
    if not training:
        # torch's eval kernel writes a fresh contiguous tensor (leaky_relu keeps x's layout)
        return _leaky_relu(x, (lower + upper) / 2).contiguous()
    _float_kernel_only(x, "rrelu_with_noise_out_cpu")
    a = x._data
    u = _gen_for(x.device)._uniform(a.shape, a.dtype if a.dtype.kind == "f" else "float32")
    slope = u.astype(a.dtype)  # in-place below: a 0-d array's arithmetic would give a scalar
    slope *= upper - lower
    slope += lower
    pos = a > 0
    slope[pos] = 1  # the multiplier: 1 for x > 0, a random slope otherwise
    return x * _wrap(slope)


@_tensor_input("rrelu")
def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: slopes ~ U(lower, upper) in training, their mean in eval."""
    fn = "rrelu_" if inplace else "rrelu"
    lower, upper = _number(lower, fn, "lower", 2), _number(upper, fn, "upper", 3)
    lower, upper = _double(lower), _double(upper)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if inplace:
        return _inplace(input, _rrelu, lower, upper, training, node="RreluWithNoiseBackward1")
    return _as_torch_node(_rrelu(input, lower, upper, training), "RreluWithNoiseBackward0")


@_tensor_input("rrelu_", binding=True)
def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, True)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) where a, b are the halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not isinstance(dim, str):  # (a name is looked up below)
        dim = _number(dim, "glu", "dim", 2, "int")
    d = _normalize_dim(input, dim)
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    _float_kernel_only(input, "glu_cpu")
    a, b = input.split(size // 2, d)
    return _as_torch_node(_in_opmath(lambda u, v: u * v.sigmoid(), a, b), "GluBackward0")


@_tensor_input("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (exact, with erf) or its tanh approximation (``approximate='tanh'``)."""
    if not isinstance(approximate, str):
        raise TypeError(
            f"gelu(): argument 'approximate' must be str, not {_type_name(approximate)}"
        )
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_kernel_only(input, "GeluKernelImpl")
    return _act._gelu(input, approximate=approximate)


@_tensor_input("log_sigmoid")
def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    _float_kernel_only(input, "log_sigmoid_cpu")
    # torch's kernel writes a fresh contiguous tensor (the pointwise ops keep x's layout)
    # no linear cut-off: softplus's threshold 20 drops log1p(e^x) ~ 2e-9 at x = -20, which
    # float64 resolves (its stable form needs none)
    r = _in_opmath(lambda x: -softplus(-x, threshold=math.inf), input).contiguous()
    return _as_torch_node(r, "LogSigmoidBackward0")


@_tensor_input("hardshrink", binding=True)
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    lambd = _number(lambd, "hardshrink", "lambd", 2)
    _float_kernel_only(input, "hardshrink_cpu")
    return input.hardshrink(_storage_scalar(lambd, input))


@_tensor_input("softshrink", binding=True)
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd for x > lambd, x + lambd for x < -lambd, else 0."""
    lambd = _double(_number(lambd, "softshrink", "lambd", 2))
    _float_kernel_only(input, "softshrink_check")
    if not 0 <= lambd <= _finfo_max(input):
        from ..core.dtype import SCALAR_NAMES

        fmax = f"{_finfo_max(input):g}"
        dname = input.dtype.name if hasattr(input.dtype, "name") else str(input.dtype)
        raise RuntimeError(
            f"lambda must be in range [0, {fmax}] for input dtype "
            f"{SCALAR_NAMES.get(dname, dname.capitalize())}, but found {lambd:g}"
        )
    return _act._softshrink(input, lambd)


def _finfo_max(t: Tensor) -> float:
    from ..core.dtype import finfo

    return finfo(t.dtype).max


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


@_autocast_entry
@_tensor_input("softplus", binding=True)
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta; linear where beta * x > threshold (stable)."""
    beta = _number(beta, "softplus", "beta", 2)
    threshold = _number(threshold, "softplus", "threshold", 3)
    _float_kernel_only(input, "softplus_cpu")
    beta, threshold = _opmath_scalar(beta, input), _opmath_scalar(threshold, input)
    return _act._softplus(input, beta, threshold)


def _as_method_error(e: TypeError) -> TypeError:
    """``e`` as torch's F.softmax family raises it: they call the Tensor method, whose parser
    counts ``dim`` as argument 1 (ember's error path sees the user's function call)."""
    e.args = (str(e).replace("'dim' (position 2)", "'dim' (position 1)"),)
    return e


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,  # the caller's _stacklevel, as torch (a str: warn's TypeError)
    )
    return 0 if ndim in (0, 1, 3) else 1


@_autocast_entry
def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    try:
        return input.softmax(dim, dtype=dtype)  # the method, as torch (a list: AttributeError)
    except TypeError as e:
        raise _as_method_error(e) from None


@_autocast_entry
def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    try:
        return (-input).softmax(dim, dtype=dtype)  # negated first: a bool input's error leads
    except TypeError as e:
        raise _as_method_error(e) from None


@_autocast_entry
def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """x - logsumexp(x) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    try:
        return input.log_softmax(dim, dtype=dtype)
    except TypeError as e:
        raise _as_method_error(e) from None


@_tensor_input("empty_like")  # torch's first use of the input names it
def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Samples from the Gumbel-softmax distribution; ``hard`` returns one-hot vectors whose
    gradient is the soft sample's (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    a = logits._data
    if a.dtype.kind in "biuc":
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {_tname(a.dtype)}"
        )
    e = _gen_for(logits.device)._exponential(a.shape, a.dtype if a.dtype.kind == "f" else "float32")
    gumbels = (logits + _wrap(-_xp_log(e).astype(a.dtype))) / tau
    try:
        y = _softmax(gumbels, dim)
    except TypeError as e:  # (torch calls the method)
        raise _as_method_error(e) from None
    if not hard:
        return y
    index = y.max(dim, keepdim=True)[1]
    y_hard = _zeros_like(y.detach()).scatter(dim, index, 1.0)
    return y_hard - y.detach() + y


def _xp_log(a):
    from ..core.device import array_module

    return array_module(a).log(a)


def _zeros_like(t: Tensor) -> Tensor:
    from ..core.ops.creation import zeros_like

    return zeros_like(t)


def tanh(input: Tensor) -> Tensor:
    """tanh(x)."""
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return input.sigmoid()


_silu = _act._silu


@_tensor_input("silu")
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    _float_kernel_only(input, "silu_cpu", complex_ok=True)
    return _inplace(input, _silu) if inplace else _silu(input)


def _mish(x: Tensor) -> Tensor:
    return _as_torch_node(_in_opmath(lambda u: u * softplus(u).tanh(), x), "MishBackward0")


@_tensor_input("mish")
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    _float_kernel_only(input, "mish_cpu")
    return _inplace(input, _mish) if inplace else _mish(input)


# ---------------------------------------------------------------------- linear
def _linear_out_names(input: Tensor, weight: Tensor):
    """Spec 4.3: batch dims keep their names; the features dim keeps its name for an unnamed
    weight; a named weight ('out', 'in') checks the input's features name and names the output."""
    xn = input.names
    wn = weight.names if weight.dim() == 2 else (None,)
    w_out, w_in = (wn[0], wn[1]) if len(wn) == 2 else (None, wn[0])
    if w_out is None and w_in is None:
        return xn if weight.dim() == 2 else xn[:-1]  # a 1-D weight contracts the features dim
    if xn:
        _check_weight_dims("linear", "features", xn, (-1,), wn, (len(wn) - 1,))
    if weight.dim() == 1:
        return xn[:-1]
    return tuple(xn[:-1]) + (w_out,)


def _unname(t):
    return t if t is None or t._names is None else t.rename(None)


@_autocast_entry
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    try:
        named = (
            input._names is not None
            or weight._names is not None
            or (bias is not None and bias._names is not None)
        )
    except AttributeError as e:
        raise _arg_type_error(
            "linear", e, ("input", "weight", "bias"), (input, weight, bias), required=2
        ) from None
    if named:
        names = _linear_out_names(input, weight)
        if bias is not None and bias._names is not None and weight._names is not None:
            # a named weight names the output (spec 4.3); the bias then unifies with the
            # product's names, as in addmm (with an unnamed weight the features dim keeps the
            # input's name, and the bias is not consulted, as before)
            try:
                names = _unify_names(tuple(names), bias._names)
            except RuntimeError as e:
                raise RuntimeError(f"linear: {e}") from None
        out = linear(_unname(input), _unname(weight), _unname(bias))
        if names is not None and any(n is not None for n in names):
            out = out.rename(*names)
        return out
    if input.dim() == 2 and bias is not None and weight.dim() == 2:
        return _addmm(bias, input, weight.t())
    if input.dim() >= 2 and weight.dim() == 2 and input.shape[-1] != weight.shape[1]:
        rows = input.numel() // max(input.shape[-1], 1) if input.shape[-1] else 0
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )
    if input.dim() > 2 and weight.dim() == 2:
        # fold the leading dims: one GEMM each way (a stacked matmul would run one per row
        # block and make its weight gradient as a batch of products summed afterwards)
        lead = input.shape[:-1]
        flat = input.reshape(math.prod(lead), input.shape[-1])  # -1 is ambiguous for 0 features
        if bias is not None:
            return _addmm(bias, flat, weight.t()).reshape(*lead, weight.shape[0])
        # torch's matmul folds the same way and ends in an _unsafe_view
        out = flat.matmul(weight.t()).reshape(*lead, weight.shape[0])
        return _as_torch_node(out, "UnsafeViewBackward0")
    out = input.matmul(weight.t())
    if bias is not None and bias.dtype is not out.dtype:  # torch's addmv refuses to promote
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {scalar_name(bias.dtype)} and "
            f"{scalar_name(out.dtype)}"
        )
    if bias is None:
        return out
    if input.dim() == 1 and weight.dim() == 2:  # torch: addmm on the unsqueezed row, viewed back
        return _as_torch_node(out + bias, "ViewBackward0")
    return out + bias


@_autocast_entry
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x1^T A x2 + b, per output feature: out[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j]."""
    # torch's check order: ranks, batch dims (per dim), feature sizes, bias
    if input1.ndim != input2.ndim:
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}"
        )
    for d, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {d}: got {a} and {b}"
            )
    o, i, j = weight.shape
    if input1.shape[-1] != i:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
            f"expected {i}"
        )
    if input2.shape[-1] != j:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
            f"expected {j}"
        )
    if bias is not None:  # torch reads bias.size(0)
        if bias.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if bias.shape[0] != o:
            raise RuntimeError(
                f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
                f"expected {o}"
            )
    batch = tuple(input1.shape[:-1])
    rows = math.prod(batch)  # not -1: ambiguous for 0 features
    x1 = _unname(input1).reshape(rows, i)
    x2 = _unname(input2).reshape(rows, j)
    w = _unname(weight)
    t = x1.matmul(w.permute(1, 0, 2).reshape(i, o * j)).reshape(rows, o, j)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + _unname(bias)
    out = out.reshape(batch + (o,))
    return _bilinear_names(out, input1, input2, weight)


def _bilinear_names(out: Tensor, input1: Tensor, input2: Tensor, weight: Tensor) -> Tensor:
    """Spec 4.3: batch dims keep input1's names; the output features dim is created (unnamed)
    unless the weight is named ('out', 'in1', 'in2'): then each input's features name is checked
    against the weight's and the output takes the weight's 'out' name."""
    n1 = input1._names
    wn = weight._names
    w_out = None
    if wn is not None:
        w_out = wn[0]
        for k, x in ((1, input1), (2, input2)):
            x_in = None if x._names is None else x._names[-1]
            if wn[k] is not None and x_in is not None and x_in != wn[k]:
                raise RuntimeError(
                    f"bilinear: the features dim of input{k} is named '{x_in}' (input{k} names "
                    f"{list(x._names)}), but the weight expects '{wn[k]}' (weight names "
                    f"{list(wn)}); rename the input's last dim or the weight (rename/refine_names)"
                )
    batch = (None,) * (out.ndim - 1) if n1 is None else tuple(n1[:-1])
    if input2._names is not None:  # the inputs pair up sample by sample: their batch names unify
        try:
            batch = _unify_names(batch, input2._names[:-1])
        except RuntimeError as e:
            raise RuntimeError(f"bilinear: {e}") from None
    if w_out is not None or any(n is not None for n in batch):
        out = out.rename(*batch, w_out)
    return out


# ---------------------------------------------------------------------- dropout
def _check_p(p: float) -> float:
    """The dropout probability as a Python number, checked."""
    if isinstance(p, Tensor) and p.dim() != 0:  # torch compares it with 0 in Python
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if p < 0.0 or p > 1.0:  # compared first, as torch (a str or None: Python's TypeError)
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _number(p, "dropout", "p")


def _keep_mask(input: Tensor, p: float, shape):
    """A 0/1 array of ``shape`` (dtype of input) with P(1) = 1 - p, from the global generator."""
    a = input._data
    fdt = a.dtype if a.dtype.kind == "f" else "float32"
    u = _gen_for(input.device)._uniform(shape, fdt)
    return (u < (1.0 - p)).astype(a.dtype)


def _all_dropped(x: Tensor) -> Tensor:
    # torch multiplies by zeros of the input's dtype: integers and bools stay as they are
    return x * 0.0 if x._data.dtype.kind not in "biu" else x * _zeros_like(x)


def _no_int_result(x: Tensor, bool_name: str = "Bool") -> None:
    d = x._data.dtype
    if d.kind in "biuc":
        if d.kind == "c":  # torch draws the mask in the input's dtype: no complex bernoulli
            raise NotImplementedError(
                f"\"bernoulli_scalar_cpu_\" not implemented for '{_tname(d)}'"
            )
        name = bool_name if d.kind == "b" else _tname(d)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")


def _dropout(x: Tensor, p: float, shape) -> Tensor:
    if p == 1.0:
        return _all_dropped(x)
    _no_int_result(x)
    m = _keep_mask(x, p, shape)
    m *= 1.0 / (1.0 - p)
    r = x * _wrap(m)
    # torch's mask is laid out like the input: a channels_last input stays channels_last (the
    # product with a row-major mask would not); one flags check for a contiguous input
    fmt = _layout.cl_format(x)
    return r if fmt is None else _layout.follow_format(r, fmt)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability ``p`` in training, scaling the rest by 1/(1-p)."""
    p = _check_p(p)
    if type(training) is not bool or not isinstance(input, Tensor):  # (torch's binding checks)
        _train_arg("dropout_" if inplace else "dropout", input, training)
    if not training or p == 0.0:
        return input
    try:
        shape = input._data.shape
    except AttributeError as e:
        raise _arg_type_error("dropout", e, ("input",), (input,)) from None
    if 0 in shape:  # torch hands an empty input back untouched, whatever its dtype
        return input
    return _inplace(input, _dropout, p, shape) if inplace else _dropout(input, p, shape)


def _train_arg(fn: str, input, training) -> None:
    """torch's parser errors of the dropout bindings ``fn(input, p, train)``."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{fn}(): argument 'input' (position 1) must be Tensor, not {_type_name(input)}"
        )
    if type(training) is not bool:
        raise TypeError(
            f"{fn}(): argument 'train' (position 3) must be bool, not {_type_name(training)}"
        )


def _feature_shape(input: Tensor, batched: bool):
    s = input._data.shape
    k = 2 if batched else 1
    return tuple(s[:k]) + (1,) * (len(s) - k)


def _feature_rank_check(nd: int, p: float) -> None:
    """torch's feature dropout kernel: a channel needs a dim of its own (all-dropping p=1 aside)."""
    if nd < 2 and p < 1.0:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")


def _feature_dropout(input, p, training, inplace, name, spatial) -> Tensor:
    p = _check_p(p)
    nd = input.dim()
    lo, hi = spatial + 1, spatial + 2
    if spatial == 1 and nd not in (lo, hi):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    if spatial > 1 and nd not in (lo, hi):
        warnings.warn(
            f"{name}: Received a {nd}-D input to {name}, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this "
            f"warning, please use dropout instead. Note that {name} exists to provide "
            f"channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
            f"dimension, and an optional batch dimension (i.e. {lo}D or {hi}D inputs).",
            stacklevel=3,
        )
    batched = nd != lo
    if spatial == 2 and nd == 3:  # warned in eval mode too, like torch
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=3,
        )
        batched = True
    # dropout1d/3d add a batch dim to an input without one and squeeze it away after (dropout2d
    # adds none): torch's result is then that squeeze's view, in eval mode too
    squeezed = spatial != 2 and nd != hi
    if type(training) is not bool:
        _train_arg("feature_dropout_" if inplace else "feature_dropout", input, training)
    if not training or p == 0.0 or not input._data.size:  # (empty: untouched, as dropout)
        return input.unsqueeze(0).squeeze(0) if squeezed and not inplace else input
    _feature_rank_check(nd + 1 if squeezed else nd, p)
    shape = _feature_shape(input, batched) if nd >= 2 else input._data.shape
    if inplace:  # torch's in-place squeeze_ is the input's last node
        return _inplace(input, _dropout, p, shape, node="SqueezeBackward4" if squeezed else None)
    out = _dropout(input, p, shape)
    return out.unsqueeze(0).squeeze(0) if squeezed else out


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zeroes whole channels of (N, C, L) or (C, L) inputs with probability ``p``."""
    return _feature_dropout(input, p, training, inplace, "dropout1d", 1)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) inputs with probability ``p``."""
    return _feature_dropout(input, p, training, inplace, "dropout2d", 2)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability ``p``."""
    return _feature_dropout(input, p, training, inplace, "dropout3d", 3)


_ALPHA_SELU = 1.7580993408473766  # scale * alpha of SELU: the value SELU saturates to is -this


def _alpha_dropout(x: Tensor, p: float, shape) -> Tensor:
    if p == 1.0:
        return _all_dropped(x)
    _no_int_result(x, "Long")  # torch's alpha dropout promotes bool to long first
    m = _keep_mask(x, p, shape)
    # dropped units take SELU's saturation value; then an affine map restores mean and variance
    a = 1.0 / math.sqrt((_ALPHA_SELU * _ALPHA_SELU * p + 1) * (1 - p))
    b = (m - 1.0) * (_ALPHA_SELU * a) + _ALPHA_SELU * a * p
    m *= a
    return x * _wrap(m) + _wrap(b.astype(m.dtype))


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: keeps the input's mean and variance."""
    p = _check_p(p)
    if type(training) is not bool or not isinstance(input, Tensor):
        _train_arg("alpha_dropout_" if inplace else "alpha_dropout", input, training)
    if not training or p == 0.0:
        return input
    shape = input._data.shape
    if 0 in shape:  # torch hands an empty input back untouched, whatever its dtype
        return input
    if inplace:
        return _inplace(input, _alpha_dropout, p, shape)
    return _alpha_dropout(input, p, shape)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout of whole channels (dim 1)."""
    p = _check_p(p)
    if type(training) is not bool or not isinstance(input, Tensor):
        fn = "feature_alpha_dropout_" if inplace else "feature_alpha_dropout"
        _train_arg(fn, input, training)
    if not training or p == 0.0 or not input._data.size:  # (empty: untouched, as dropout)
        return input
    _feature_rank_check(input.dim(), p)
    shape = _feature_shape(input, True) if input.dim() >= 2 else input._data.shape
    if inplace:
        return _inplace(input, _alpha_dropout, p, shape)
    return _alpha_dropout(input, p, shape)


# ---------------------------------------------------------------------- sparse
def _renorm_rows_(weight: Tensor, idx_arr, max_norm: float, norm_type: float) -> None:
    """Rescale (in place, outside autograd) the rows of ``weight`` that ``idx_arr`` looks up and
    whose ``norm_type``-norm exceeds ``max_norm`` (torch's embedding_renorm_)."""
    from ..core.device import array_module

    if type(max_norm) is not float or type(norm_type) is not float:  # torch's parser
        max_norm = _number(max_norm, "embedding_renorm_", "max_norm", 3, "float")
        norm_type = _number(norm_type, "embedding_renorm_", "norm_type", 4, "float")
    _emb_ops._check_indices(None, idx_arr, None, "embedding_renorm_", 2)
    xp = array_module(weight._data)
    rows = xp.unique(idx_arr.reshape(-1))
    w = weight._data
    # torch selects each distinct index in sorted order: -n <= i < n passes (i < 0 wraps)
    bad = rows[(rows < -w.shape[0]) | (rows >= w.shape[0])]
    if bad.size:
        raise IndexError(
            f"select(): index {int(bad[0])} out of range for tensor of size {list(w.shape)} at "
            "dimension 0"
        )
    if rows.size and w.dtype.kind in "biu":  # (each selected row's norm refuses the dtype)
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{_tname(w.dtype)} instead."
        )
    ct = xp.float32 if w.dtype.itemsize == 2 else w.dtype  # torch's compute dtype
    sub = w[rows].astype(ct, copy=False)
    if norm_type == float("inf"):
        norms = xp.abs(sub).max(axis=1)
    elif norm_type == 0:  # the count of nonzero entries
        norms = (sub != 0).sum(axis=1).astype(ct)
    else:
        norms = (xp.abs(sub) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    # torch reads the norm (of the row's dtype) out as a double and scales the row by a double
    # rounded to the row's dtype (1 / (2 + 1e-7) is not 0.5 in float32)
    rt = w.real.dtype if w.dtype.kind == "c" else w.dtype  # (a complex row's norm is real)
    norms = norms.astype(rt).astype(xp.float64)
    big = norms > max_norm
    if bool(big.any()):
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype).astype(ct)
        w[rows[big]] = (sub[big] * scale[:, None]).astype(w.dtype)
        weight._ver[0] += 1


def _padding_idx(padding_idx, n: int):
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        if padding_idx >= n:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx += n
    return padding_idx


def _bool_arg(v, fn: str, name: str, pos: int) -> None:
    """torch's parser error for a ``bool`` argument given as anything else."""
    if type(v) is not bool and not isinstance(v, _np.bool_):
        raise TypeError(
            f"{fn}(): argument '{name}' (position {pos}) must be bool, not {_type_name(v)}"
        )


def _binding_args(fn: str, padding_idx, pad_pos: int, scale_grad_by_freq, sparse, sparse_pos):
    """torch's parser checks of the arguments F.embedding / F.embedding_bag hand its binding,
    in their order there; the padding index as an int."""
    if type(scale_grad_by_freq) is not bool or type(sparse) is not bool:
        if pad_pos < 4:
            padding_idx = _number(padding_idx, fn, "padding_idx", pad_pos, "int")
        _bool_arg(scale_grad_by_freq, fn, "scale_grad_by_freq", 4)
        _bool_arg(sparse, fn, "sparse", sparse_pos)
    if type(padding_idx) is not int:
        padding_idx = _number(padding_idx, fn, "padding_idx", pad_pos, "int")
    return padding_idx


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` looked up by the integer ``input``: shape (*input.shape, dim)."""
    try:
        pad = _padding_idx(padding_idx, weight.shape[0])
        if max_norm is not None:
            _renorm_rows_(weight, input._data, max_norm, norm_type)
        pad = _binding_args("embedding", pad, 3, scale_grad_by_freq, sparse, 5)
        if weight.dim() != 2:
            raise RuntimeError("'weight' must be 2-D")
        return _embedding_op(
            weight, input, padding_idx=pad, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse
        )
    except (AttributeError, TypeError) as e:
        # torch's ATen order: embedding(weight, indices)
        names = ("weight", "indices")
        raise _arg_type_error("embedding", e, names, (weight, input), required=2) from None


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxes of bags of embeddings, without building the per-index tensor's
    batch shape: bags are the rows of a 2-D ``input``, or slices of a 1-D one cut at ``offsets``."""
    from ..core.device import array_module

    if weight.dtype.name == "int64" and input.dtype.is_floating_point:
        # torch's backward compatibility with its old argument order (weight, input)
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights (torch.Size({list(per_sample_weights.shape)}"
            f")) is not None, then it must have the same shape as the input (torch.Size("
            f"{list(input.shape)}))"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    input.dim()  # (torch's first use of the input here: a list's AttributeError names dim)
    xn = input._names
    if per_sample_weights is not None and per_sample_weights._names is not None:
        # a weight per index: their names unify with the input's (add's rule, spec section 3)
        try:
            xn = _unify_names(xn or (None,) * input.dim(), per_sample_weights._names)
        except RuntimeError as e:
            raise RuntimeError(f"embedding_bag: {e}") from None
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                "of fixed length sequences. However, found offsets of type "
                f"{_torch_type_repr(offsets)}"
            )
        nb, ln = input.shape
        if ln == 0:  # torch makes the offsets with arange(0, numel, size(1))
            raise RuntimeError("step must be nonzero")
        starts = None
        flat = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        flat = input
        starts = offsets._data
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    n = weight.shape[0]
    if max_norm is not None:  # torch renormalises before it looks at per_sample_weights
        _renorm_rows_(weight, flat._data, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    pad = -1 if padding_idx is None else padding_idx
    pad = _binding_args("embedding_bag", pad, 9, scale_grad_by_freq, sparse, 6)
    if not -n <= pad < n and padding_idx is not None:  # (torch's kernel: no wrap-around check)
        raise RuntimeError(
            f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, but got "
            f"{pad}"
        )
    pad = pad + n if pad < 0 and padding_idx is not None else pad
    if flat.dtype.name not in ("int64", "int32") or (
        starts is not None and offsets.dtype.name not in ("int64", "int32")
    ):
        # torch promotes the indices with the offsets (which a 2-D input makes in its own
        # dtype): narrow integers and bools pass with int64 offsets, and are then read as such
        if starts is None and flat.dtype.name == "bool":
            raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
        common = flat.dtype if starts is None else _promote_types(flat.dtype, offsets.dtype)
        if common.name not in ("int64", "int32"):
            raise RuntimeError(
                "Expected tensor for argument #1 'indices' to have one of the following scalar "
                f"types: Long, Int; but got {_emb_ops._type_name(common.np)} instead (while "
                "checking arguments for embedding_bag)"
            )
        flat = flat.long()
    if weight.dtype.name not in _BAG_WEIGHT_TYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar "
            "types: Half, BFloat16, Float, Double; but got "
            f"{_emb_ops._type_name(weight._data.dtype)} instead (while checking arguments for "
            "embedding_bag)"
        )
    xp = array_module(flat._data)
    m = flat.shape[0]
    if starts is None:
        seg = xp.repeat(xp.arange(nb), ln)
    else:
        if include_last_offset and not starts.shape[0]:
            raise RuntimeError("include_last_offset: number of offset should be at least 1")
        if starts.shape[0] and int(starts[0]) != 0:
            legacy = "Int" if offsets.dtype.name == "int32" else "Long"  # (torch prints offsets[0])
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                f"from position 0. However, got {int(starts[0])}\n[ torch.{legacy}Tensor{{}} ]"
            )
        if starts.shape[0] and int(starts[-1]) > m:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {m} but got offsets[-1] of "
                f"{int(starts[-1])}"
            )
        nb = starts.shape[0] - 1 if include_last_offset else starts.shape[0]
        # the bag of each position: how many bag starts (after the first) lie at or before it
        seg = xp.searchsorted(starts[1:], xp.arange(m), side="right")
        if include_last_offset:
            # positions past the last offset join no bag (torch's own kernels disagree there:
            # the documented contract is a last offset equal to the input's length)
            seg = xp.where(xp.arange(m) < int(starts[-1]), seg, nb)
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            "argument #1 'per_sample_weights'; but type "
            f"{_emb_ops._type_name(weight._data.dtype)} does not equal "
            f"{_emb_ops._type_name(per_sample_weights._data.dtype)} (while checking arguments "
            "for embedding_bag)"
        )
    bad = (flat._data < 0) | (flat._data >= n)
    if bool(bad.any()):  # the first bad index, in the words of torch's kernel for the mode
        i = int(xp.nonzero(bad)[0][0])
        v = int(flat._data[i])
        if mode == "max" or pad >= 0:
            raise RuntimeError(
                f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {v}"
            )
        raise RuntimeError(
            f"Index {i} of input takes value {v} which is not in the valid range [0, {n})"
        )
    e = _embedding_op(
        weight, flat, padding_idx=pad, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse
    )
    valid = xp.ones(m, dtype=bool) if pad < 0 else flat._data != pad
    if starts is not None and (include_last_offset or not nb):
        valid = valid & (seg < nb)  # the positions in no bag (past the last offset, or no bags)
    seg_v = seg[valid].astype("int64")
    if not bool(valid.all()):
        e = e[_wrap(xp.nonzero(valid)[0])]
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights[_wrap(xp.nonzero(valid)[0])]
    d = weight.shape[1]
    if per_sample_weights is not None:
        e = e * per_sample_weights.unsqueeze(1)
    if mode == "max":
        out = _zeros((nb, d), dtype=weight.dtype, device=weight.device)
        # (also with nothing to gather: the output is then still in the weight's graph)
        idx = _wrap(xp.broadcast_to(seg_v[:, None], (seg_v.shape[0], d)).copy())
        if not seg_v.shape[0] or not e.requires_grad:
            out = out.scatter_reduce(0, idx, e, "amax", include_self=False)
        else:
            out = _bag_max_first(out, idx, e, seg_v, xp)
    else:
        out = _zeros((nb, d), dtype=weight.dtype, device=weight.device)
        out = out.index_add(0, _wrap(seg_v), e)
        if mode == "mean":
            cnt = xp.bincount(seg_v, minlength=nb)[:nb].astype(weight._data.dtype)
            cnt = xp.maximum(cnt, 1)
            out = out / _wrap(cnt[:, None])
    out = _as_torch_node(out, "EmbeddingBagBackward0")  # one kernel in torch
    # spec 4.3: a 2-D input's bag dim is left alone (keeps its name), the bag's positions are
    # reduced away and the vector dim is created (unnamed), as in Embedding, unless the weight
    # is named (vocabulary, vector): then it names the vector dim
    bag = xn[0] if xn is not None and starts is None else None
    vec = weight._names[-1] if weight._names is not None else None
    if bag is not None or vec is not None:
        out = out.rename(bag, vec)
    return out


def _bag_max_first(zeros: Tensor, idx: Tensor, e: Tensor, seg, xp) -> Tensor:
    """embedding_bag's max for a gradient: each (bag, column) takes the value of its FIRST
    maximal row, so the gradient goes to that row alone, as torch's kernel routes it (amax
    would share it among tied rows)."""
    m = e.shape[0]
    mx = zeros.detach().scatter_reduce(0, idx, e.detach(), "amax", include_self=False)
    hit = e._data == mx._data[seg]
    pos = xp.where(hit, xp.arange(m)[:, None], m)
    first = _wrap(xp.zeros(mx.shape, dtype=pos.dtype))
    first = first.scatter_reduce(0, idx, _wrap(pos), "amin", include_self=False)
    empty = xp.bincount(seg, minlength=mx.shape[0])[: mx.shape[0]] == 0
    return e.gather(0, first).masked_fill(_wrap(empty[:, None]), 0)


# the weight types torch's embedding_bag takes
_BAG_WEIGHT_TYPES = frozenset(("float16", "bfloat16", "float32", "float64"))


def _torch_type_repr(t) -> str:
    return "<class 'torch.Tensor'>" if isinstance(t, Tensor) else str(type(t))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """(..., num_classes) int64 tensor with a 1 at each index."""
    from ..core.device import array_module

    try:
        a = tensor._data
    except AttributeError as e:
        raise _arg_type_error("one_hot", e, ("input",), (tensor,)) from None
    if a.dtype.kind != "i" or a.dtype.itemsize != 8:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = array_module(a)
    if num_classes == -1:
        _no_meta_kernel(xp, "aten::one_hot (num_classes=-1)")  # the count comes from the values
    if a.size:
        if bool((a < 0).any()):
            raise RuntimeError("Class values must be non-negative.")
        mx = int(a.max())
        if num_classes == -1:
            num_classes = mx + 1
        elif mx >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    out = xp.zeros(a.shape + (num_classes,), dtype="int64")  # a 1 written at each index
    xp.put_along_axis(out, a[..., None], 1, axis=-1)
    names = tensor._names
    return _wrap(out, None if names is None else tuple(names) + (None,))


# ---------------------------------------------------------------------- distance
@_tensor_input("pairwise_distance", "x1", "x2")
def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim."""
    try:
        d = x1 - x2
    except RuntimeError as e:  # a name clash is pairwise_distance's (spec 4.10), not sub's
        raise _as_op_error(e, "pairwise_distance", ("sub",), x1, x2) from None
    return _as_torch_node((d + eps).norm(p, -1, keepdim), "NormBackward1")


@_autocast_entry
@_tensor_input("cosine_similarity", "x1", "x2")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / max(|x1| |x2|, ...) along ``dim``: each norm is clamped to at least ``eps``."""
    common = _promote_types(x1.dtype, x2.dtype)  # mixed inputs meet in their common dtype
    if not common.is_floating_point:  # complex too: torch has no complex kernel
        raise RuntimeError(
            f"expected common dtype to be floating point, yet common dtype is {scalar_name(common)}"
        )
    x1, x2 = x1.to(common), x2.to(common)
    if x1.shape != x2.shape:  # torch expands first: dim and the norms count in the common shape
        try:
            x1, x2 = _broadcast_tensors(x1, x2)
        except RuntimeError as e:
            raise _as_op_error(e, "cosine_similarity", ("broadcast_tensors",), x1, x2) from None
    # torch sums the product of the normalized inputs: an input that needs no gradient is then
    # not kept by the product (it may change in place before backward), and the sum is the node
    n1 = x1.norm(2, dim, keepdim=True).clamp(min=eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp(min=eps)
    try:
        prod = (x1 / n1) * (x2 / n2)
    except RuntimeError as e:  # a name clash is cosine_similarity's (spec 4.10), not mul's
        raise _as_op_error(e, "cosine_similarity", ("mul",), x1, x2) from None
    return prod.sum(dim)


@_autocast_entry
@_tensor_input("pdist")
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between all pairs of rows (i < j), as a flat N*(N-1)/2 tensor."""
    from ..core.ops.creation import triu_indices

    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n > 1 and input.dtype.itemsize == 2:  # torch's kernel: float32 and float64 only
        raise NotImplementedError(f"\"pdist\" not implemented for '{scalar_name(input.dtype)}'")
    ij = triu_indices(n, n, 1, device=input.device)
    x = _unname(input)
    return _as_torch_node((x[ij[0]] - x[ij[1]]).norm(p, 1), "PdistBackward0")


@_autocast_entry
def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """input / max(||input||_p, eps) along ``dim``."""
    try:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    except TypeError:
        if not isinstance(eps, (_numbers.Number, Tensor)):  # (torch calls the method clamp_min)
            sigs = ("(Tensor min)", "(Number min)")
            raise _invalid_arguments("clamp_min", (eps,), {}, sigs) from None
        raise
    if out is not None:
        from ..core.ops.arithmetic import div

        return div(input, denom, out=out)
    return input / denom
