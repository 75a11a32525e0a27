"""Functional losses (``ember.nn.functional.*_loss``), written over ember ops so autograd, double
backward and devices come for free. Numerically stable forms: log-softmax via logsumexp, BCE with
logits via softplus, KL via xlogy. CTC is one registered op (forward algorithm in log space,
vectorised over the batch) whose derivative is computed by the alpha-beta recursion.

Names (spec 4.3): with reduction='none' the result keeps the batch names; the target's names are
unified with the input's.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from contextlib import nullcontext

import numpy as np

from ..autograd.grad_mode import _state as _grad_state
from ..autograd.node import as_torch_node as _as_torch_node
from ..core.arg_errors import invalid_arguments, is_ints
from ..core.arg_errors import no_derivative as _no_derivative
from ..core.autocast import entry as _autocast_entry
from ..core.device import array_module
from ..core.dtype import bool_ as _bool
from ..core.dtype import can_cast, promote_types, scalar_name
from ..core.names import check_weight_dims, keep, names_of, unify, unify_inputs
from ..core.ops.comparison import maximum as _maximum
from ..core.ops.comparison import minimum as _minimum
from ..core.ops.comparison import where as _where
from ..core.ops.conversion import _user_level
from ..core.ops.joining import broadcast_shapes as _broadcast_shapes
from ..core.ops.joining import broadcast_tensors as _broadcast_tensors
from ..core.ops.pointwise import _tie
from ..core.ops.pointwise import sigmoid as _sigmoid
from ..core.ops.reduction import _tname
from ..core.ops.reduction import mean as _mean
from ..core.ops.reduction import sum as _sum
from ..core.registry import _cast_error, _inplace_shape_error, op
from ..core.tensor import Tensor, _wrap
from ._args import arg_type_error

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "ctc_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

_REDUCTIONS = ("none", "mean", "sum")
_I64, _F32, _F64 = np.dtype(np.int64), np.dtype(np.float32), np.dtype(np.float64)
_EXACT_COUNT = 1 << 24  # counts up to here are exact in float32: N is the total weight
_ARANGES: dict = {}  # n -> np.arange(n), read-only (see _arange)


# ------------------------------------------------------------------ reduction helpers
def _legacy_reduction(size_average, reduce, emit_warning: bool = True) -> str:
    """The reduction string for the deprecated ``size_average``/``reduce`` pair (torch's rule)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
            "instead.",
            UserWarning,
            stacklevel=3,
        )
    return ret


def _reduction(
    reduction, size_average=None, reduce=None, old_name: bool = True, weighted: bool = False
) -> str:
    # old_name: the loss reads 'elementwise_mean' as 'mean' (torch's C++-reduced losses do;
    # the few it reduces in Python refuse it); weighted: torch reduces a weighted elementwise
    # loss in Python, and _weighted checks the string after the weight's size
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if weighted:
        return reduction
    if old_name:
        reduction = _no_elementwise_mean(reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _no_elementwise_mean(reduction):
    """torch still reads the old name 'elementwise_mean' as 'mean', with a warning."""
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            UserWarning,
            stacklevel=_user_level(),
        )
        return "mean"
    return reduction


def _reduce(loss: Tensor, reduction: str, weight: Tensor | None = None) -> Tensor:
    """``loss`` (times ``weight``, when given) reduced by ``reduction``."""
    if weight is not None:
        loss = loss * weight
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _size(shape) -> str:
    return f"torch.Size({list(shape)})"


def _warn_size(input, target) -> tuple:
    """``(input, target)``, warned about and broadcast as torch's elementwise losses do when
    their sizes differ (broadcast first: a 0-dim operand then takes part in type promotion)."""
    if target.shape == input.shape:
        return input, target
    warnings.warn(
        f"Using a target size ({_size(target.shape)}) that is different to the input size "
        f"({_size(input.shape)}). This will likely lead to incorrect results due to "
        "broadcasting. Please ensure they have the same size.",
        UserWarning,
        stacklevel=_user_level(),  # the caller, past the loss's wrappers
    )
    return _broadcast_tensors(input, target)


def _const(arr, like: Tensor) -> Tensor:
    """A constant (no-grad) tensor around a raw array, in ``like``'s dtype."""
    return _wrap(arr.astype(like._data.dtype, copy=False))


# ------------------------------------------------------------------ names
def _all_names(*ts):
    return any(isinstance(t, Tensor) and t._names is not None for t in ts)


def _strip(t):
    return t.rename(None) if isinstance(t, Tensor) and t._names is not None else t


def _stamp(out: Tensor, names) -> Tensor:
    if names is None or out.ndim == 0 or all(n is None for n in names):
        return out
    return out.rename(*names[len(names) - out.ndim :]) if len(names) >= out.ndim else out


def _unified(*ts):
    names = None
    for t in ts:
        if isinstance(t, Tensor) and t.ndim:
            n = t._names if t._names is not None else (None,) * t.ndim
            names = n if names is None else unify(names, n)
    return names


def _with_names(rule):
    """Run the loss on unnamed tensors, then name a reduction='none' result by ``rule``.

    ``rule(args, kwargs)`` returns the result's names from the original arguments (``args``: all
    of them, in signature order). Unnamed calls pay one scan of the arguments."""

    def deco(fn):
        sig = inspect.signature(fn)
        tname = _TORCH_NAMES.get(fn.__name__, fn.__name__)

        def wrapper(*args, **kwargs):
            if not (_all_names(*args) or _all_names(*kwargs.values())):
                try:
                    return fn(*args, **kwargs)
                except (AttributeError, TypeError) as e:  # (a str met an operator: TypeError)
                    raise _not_tensor(tname, sig, e, args, kwargs) from None
            # the rule sees every argument (defaults too) in signature order, however passed
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            try:
                names = rule(list(bound.arguments.values()), {})
            except RuntimeError as e:  # a name clash: the message names the loss (spec 4.10)
                msg = str(e)
                raise RuntimeError(
                    msg if msg.startswith(fn.__name__) else f"{fn.__name__}: {msg}"
                ) from None
            out = fn(*[_strip(a) for a in args], **{k: _strip(v) for k, v in kwargs.items()})
            return _stamp(out, names)

        wrapper.__name__ = wrapper.__qualname__ = fn.__name__
        wrapper.__doc__ = fn.__doc__
        wrapper.__wrapped__ = fn
        return wrapper

    return deco


# torch's op names in its argument TypeErrors, where they differ from F's
_TORCH_NAMES = {"cross_entropy": "cross_entropy_loss", "nll_loss": "nll_loss_nd"}


def _not_tensor(fn: str, sig, exc, args, kwargs):
    """torch's TypeError for a list (or array) where a loss wants a Tensor (failure path only)."""
    try:
        bound = sig.bind(*args, **kwargs).arguments
    except TypeError:
        return exc
    params = tuple(sig.parameters.values())
    wants = [("Tensor" in str(p.annotation)) for p in params]
    if not any(wants):
        return exc
    k = len(wants) - wants[::-1].index(True)  # up to the last Tensor parameter
    vals = tuple(bound.get(p.name) if w else None for p, w in zip(params[:k], wants))
    req = 0  # the leading Tensors without a default: None is no absent optional there
    while req < k and wants[req] and params[req].default is params[req].empty:
        req += 1
    return arg_type_error(fn, exc, tuple(p.name for p in params[:k]), vals, required=req)


def _elementwise_names(args, kwargs):
    return _unified(*[a for a in args[:3] if isinstance(a, Tensor)])


def _class_names(args, kwargs):
    """(N, C, d1, ...) input and (N, d1, ...) target: the input's names without the class dim."""
    input, target = args[0], args[1] if len(args) > 1 else kwargs.get("target")
    if not isinstance(input, Tensor) or not isinstance(target, Tensor) or input.ndim < 2:
        return None
    n = input._names or (None,) * input.ndim
    n = n[:1] + n[2:]
    if target.ndim == input.ndim:  # probabilities: same shape as the input
        n = unify(input._names or (None,) * input.ndim, target._names or (None,) * target.ndim)
        return n[:1] + n[2:]
    if target.ndim == len(n):
        return unify(n, target._names or (None,) * target.ndim)
    return n


def _class_weighted(k: int, fname: str):
    """``_class_names`` after checking a named per-class ``weight`` (argument ``k``) against the
    input's class dim (dim 1, or 0 unbatched), as a layer's weight is checked (spec 4.3)."""

    def rule(args, kwargs):
        input, w = args[0], args[k] if len(args) > k else None
        named = isinstance(w, Tensor) and w._names is not None and w.ndim
        if named and isinstance(input, Tensor) and input._names is not None and input.ndim:
            c = 1 if input.ndim >= 2 else 0
            check_weight_dims(fname, "class", input._names, (c,), w._names, (w.ndim - 1,))
        return _class_names(args, kwargs)

    return rule


def _bce_logits_names(args, kwargs):
    """input, target, weight and pos_weight (per class, broadcast from the right) unify."""
    return _unified(*[a for a in args[:3] + args[6:7] if isinstance(a, Tensor)])


def _batch_names(args, kwargs):
    """Per-sample losses of (N, C) inputs: the batch dim's name, unified over every tensor
    argument's first dim (the other inputs' and the target's names count too: spec 4.3)."""
    t = args[0]
    if not isinstance(t, Tensor) or t.ndim < 2:
        return None
    out = (None,)
    for a in args:
        if isinstance(a, Tensor) and a.ndim and a._names is not None:
            out = unify(out, a._names[:1])
    return out


def _compared_batch_names(k: int):
    """``_batch_names`` after unifying the full names of the first ``k`` arguments: inputs the
    loss compares feature by feature (cosine_embedding_loss's pair, triplet_margin_loss's
    anchor, positive and negative) must agree on every dim, as their ``sub``/``mul`` would
    check them; the batch names alone let a clashing feature dim through (spec 4.3)."""

    def rule(args, kwargs):
        _unified(*[a for a in args[:k] if isinstance(a, Tensor)])
        return _batch_names(args, kwargs)

    return rule


def _triplet_distance_names(args, kwargs):
    """triplet_margin_with_distance_loss: the default distance compares the three inputs feature
    by feature (as triplet_margin_loss); a custom one decides for itself."""
    if args[3] is None:
        return _compared_batch_names(3)(args, kwargs)
    return _batch_names(args, kwargs)


# ------------------------------------------------------------------ private ops
def _reduced_rule(ins, reduction="none"):
    """An elementwise loss op's names: its inputs' unified, none once reduced."""
    return unify_inputs(ins) if reduction == "none" else None


def _reduced_array(xp, r, reduction: str):
    """A fused loss kernel's elementwise result ``r`` reduced by the sum/mean kernels."""
    if reduction == "none":
        return r
    return (_mean if reduction == "mean" else _sum).op.kernel(xp, r)


@op(names=keep, method=False)
def _loss_softplus(xp, input):
    """log(1 + exp(x)), stable for large |x|."""
    # max(x, 0) + log1p(exp(-|x|)): far cheaper than numpy's logaddexp
    r = xp.exp(-xp.abs(input))
    xp.log1p(r, out=r)
    r += xp.maximum(input, 0)
    return r


@_loss_softplus.vjp
def _(grad, input):
    return grad * input.sigmoid()


@op(names=_reduced_rule, promote=True, method=False)
def _bce_logits(xp, input, target, reduction="none"):
    """(1 - y) x + log(1 + exp(-x)) elementwise, in one pass; then reduced as by mean or sum
    (the common call's one node)."""
    sp = xp.exp(-xp.abs(input))  # softplus(-x) = max(-x, 0) + log1p(exp(-|x|)), added last as
    # torch does: with y = 1 and a large x, (1 - y) x is 0 and the loss keeps its tiny softplus
    # instead of x - x y cancelling it (a 0-d input gives numpy scalars, which out= refuses)
    sp = xp.log1p(sp, out=sp) if sp.ndim else xp.log1p(sp)
    sp += xp.maximum(-input, 0)
    r = (1 - target) * input
    r += sp
    return _reduced_array(xp, r, reduction)


@_bce_logits.vjp
def _(grad, input, target, reduction, needs):
    x, y = input._data, target._data
    fast = x.ndim and x.dtype is y.dtype and (x.dtype is _F32 or x.dtype is _F64)
    if fast and not _grad_state.enabled:
        # no graph to record: the formulas below on the arrays (mean's grad / n included)
        g = grad._data
        if reduction == "mean":
            g = g / x.size
        gx = g * (_sigmoid.op.kernel(array_module(x), x) - y) if needs[0] else None
        gy = g * -x if needs[1] else None
        return (None if gx is None else _wrap(gx)), (None if gy is None else _wrap(gy))
    if reduction != "none":  # mean's (or sum's) gradient, broadcast back
        grad = (grad / input.numel() if reduction == "mean" else grad).expand(input.shape)
    gx = grad * (input.sigmoid() - target) if needs[0] else None
    return gx, (grad * -input if needs[1] else None)


@op(names=unify_inputs, promote=True, method=False)
def _bce(xp, input, target):
    """-(y log(x) + (1 - y) log(1 - x)) elementwise, each log clamped at -100 (torch's kernel)."""
    a = xp.maximum(xp.log(input), -100)
    b = xp.maximum(xp.log1p(-input), -100)
    return (target - 1) * b - target * a


_bce.op.backward_name = "BinaryCrossEntropyBackward0"


@_bce.vjp
def _(grad, input, target, needs):
    # torch's derivative, not the clamped logs': at x = 0 or 1 the latter is inf * 0 = NaN
    gx = _bce_grad(grad, input, target) if needs[0] else None
    return gx, (grad * -input.logit() if needs[1] else None)


_BCE_EPS = float(np.float32(1e-12))  # torch's epsilon is a float 1e-12, in float64 too


@op(names=unify_inputs, promote=True, method=False)
def _bce_grad(xp, grad, input, target):
    """grad (x - y) / max(x (1 - x), eps): torch's BCE input gradient, finite at 0 and 1."""
    return grad * (input - target) / xp.maximum((1 - input) * input, _BCE_EPS)


_bce_grad.op.backward_name = "BinaryCrossEntropyBackwardBackward0"


@_bce_grad.vjp
def _(gg, grad, input, target, needs):
    # torch's binary_cross_entropy_double_backward* formulas (eps added, not clamped)
    eps = 1e-12
    d = (input + eps) * (1 - input + eps)
    g_grad = gg * (input - target) / d if needs[0] else None
    g_in = None
    if needs[1]:
        g_in = gg * grad * (input * input - 2 * input * target + target) / (d * d)
    g_t = -gg * grad / d if needs[2] else None
    return g_grad, g_in, g_t


@op(names=_reduced_rule, method=False)
def _bce_reduced(xp, input, target, reduction="none"):
    """binary_cross_entropy of a plain pair without weight as one node, torch's
    BinaryCrossEntropyBackward0: ``_bce``'s kernel, then reduced."""
    r = _bce.op.kernel(xp, input, target)
    return _reduced_array(xp, r, reduction)


_bce_reduced.op.backward_name = "BinaryCrossEntropyBackward0"


@_bce_reduced.vjp
def _(grad, input, target, reduction, needs):
    # torch's backward: the elementwise gradient of the expanded grad, then / n for the mean
    if not _grad_state.enabled:  # no graph to record: the same on the arrays
        x, y, g = input._data, target._data, grad._data
        n = x.size if reduction == "mean" else 1
        gx = gy = None
        if needs[0]:
            gx = g * (x - y) / np.maximum((1 - x) * x, _BCE_EPS)
            gx = _wrap(gx / n if n != 1 else gx)
        if needs[1]:
            gy = -np.log(x / (1 - x)) * g
            gy = _wrap(gy / n if n != 1 else gy)
        return gx, gy
    g = grad if reduction == "none" else grad.expand(input.shape)
    gx = _bce_grad(g, input, target) if needs[0] else None
    gy = g * -input.logit() if needs[1] else None
    if reduction == "mean":
        n = input.numel()
        gx = None if gx is None else gx / n
        gy = None if gy is None else gy / n
    return gx, gy


def _softplus(x: Tensor) -> Tensor:
    return _loss_softplus(x)


def _logsigmoid(x: Tensor) -> Tensor:
    return -_loss_softplus(-x)


# ------------------------------------------------------------------ regression losses
def _float_only(kernel: str, input, target, into_input: bool = False) -> None:
    """torch's errors for a kernel with only real floating implementations: it runs in the
    promoted type of ``input`` and ``target``, which must not be complex; one with integer
    operands only names the input's type. ``into_input``: the kernel writes into the input's
    dtype, which must hold the promoted type (huber's)."""
    a = input._data.dtype
    b = target._data.dtype
    if a.kind in "fV" and b.kind in "fV":  # the common case: both floating, nothing to check
        return
    res = promote_types(input.dtype, target.dtype)
    if into_input and not can_cast(res, input.dtype):
        raise _cast_error(res, input.dtype)
    if not res.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(res)}'")


def _float_input(kernel: str, input: Tensor, cpu_half: bool = True) -> None:
    """torch's error for a kernel with only real floating implementations, which it picks by
    the input's dtype whatever the target's; ``cpu_half=False``: its cpu kernel has no float16
    or bfloat16 implementation either."""
    a = input._data.dtype
    if a.kind not in "fV" or (not cpu_half and a.itemsize == 2 and type(input._data) is np.ndarray):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(a)}'")


def _weighted(loss, weight, input, reduction, normalize):
    """An elementwise loss reduced, optionally weighted per element (``normalize``: 'mean'
    divides by the total weight)."""
    if weight is None:
        return _reduce(loss, reduction)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
        )
    loss = loss * weight
    if reduction == "mean" and normalize:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


@_autocast_entry
@_with_names(_elementwise_names)
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error |input - target| (optionally weighted per element)."""
    x, y = _warn_size(input, target)  # torch broadcasts before it reads the reduction
    reduction = _reduction(reduction, size_average, reduce, weighted=weight is not None)
    loss = (x - y).abs()
    return _weighted(loss, weight, input, reduction, True)


@_autocast_entry
@_with_names(_elementwise_names)
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error (input - target)**2 (optionally weighted per element)."""
    plain = weight is None and size_average is None and reduce is None
    if (  # the common call: one node
        plain
        and type(input) is Tensor
        and type(target) is Tensor
        and _plain_pair(input._data, target._data)
        and (reduction == "mean" or reduction == "sum" or reduction == "none")
    ):
        return _mse(input, target, reduction)
    x, y = _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce, weighted=weight is not None)
    _float_only("mse_cpu", input, target)
    d = _difference(x, y)
    loss = _weighted(d * d, weight, input, reduction, True)
    return loss if weight is not None else _as_torch_node(loss, "MseLossBackward0")


@op(names=_reduced_rule, method=False)
def _mse(xp, input, target, reduction="none"):
    """mse_loss of same-shape float32/float64 operands as one node, torch's MseLossBackward0:
    the values of sub, mul and mean (or sum), whose kernels it runs, and their gradients."""
    d = xp.subtract(input, target)
    r = d * d
    return _reduced_array(xp, r, reduction)


_mse.op.backward_name = "MseLossBackward0"


@_mse.vjp
def _(grad, input, target, reduction, needs):
    x = input._data
    if x.ndim and not _grad_state.enabled:  # the composite's gradient on arrays: g d + g d
        g = grad._data
        if reduction == "mean":
            g = g / x.size
        gd = g * (x - target._data)
        gd += gd
        return (_wrap(gd) if needs[0] else None), (_wrap(-gd) if needs[1] else None)
    g = grad
    if reduction != "none":
        g = (g / input.numel() if reduction == "mean" else g).expand(input.shape)
    d = input - target
    gd = g * d + g * d
    return (gd if needs[0] else None), (-gd if needs[1] else None)


def _plain_pair(a, b) -> bool:
    """Same-shape, same-dtype float32/float64 numpy operands, not 0-d or empty: the common call
    of an elementwise loss, which one fused op serves (the rest take the composite path)."""
    return (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.dtype is b.dtype
        and (a.dtype is _F32 or a.dtype is _F64)
        and a.shape == b.shape
        and a.ndim  # (a 0-d result is a numpy scalar)
        and a.size
    )


def _piecewise_grad(g, d, bound, scale, norm):
    """torch's smooth_l1/huber backward kernel on arrays: +-norm g scale outside (-bound,
    bound) (ties included), norm d g (/ bound for smooth_l1, ``scale`` 1) inside; NaN stays."""
    t = d.dtype.type
    b, n = t(bound), t(norm)
    ng = n * g
    if scale != 1:
        ng = ng * t(scale)
        inner = n * d * g
    else:  # n (d / b) g: torch's order, bitwise
        inner = n * (d / b) * g
    return np.where(d <= -b, -ng, np.where(d >= b, ng, inner))


@op(names=_reduced_rule, method=False)
def _smooth_l1(xp, input, target, reduction="none", beta=1.0):
    """smooth_l1_loss of a plain pair (beta > 0) as one node, torch's SmoothL1LossBackward0:
    its kernel z < beta ? 0.5 z z / beta : z - 0.5 beta, z = |x - y|, beta in the dtype."""
    b = input.dtype.type(beta)
    z = xp.abs(xp.subtract(input, target))
    r = xp.where(z < b, 0.5 * z * z / b, z - 0.5 * b)
    return _reduced_array(xp, r, reduction)


_smooth_l1.op.backward_name = "SmoothL1LossBackward0"


def _piecewise_vjp(grad, input, target, reduction, bound, huber, needs):
    """smooth_l1's (the inner branch / bound, +-1 outside) or huber's (+-delta outside)
    gradient for input and target: torch's backward kernel on the arrays (/n folded in as its),
    or under create_graph the same formula in ember ops."""
    x = input._data
    if not _grad_state.enabled:
        n = 1.0 / x.size if reduction == "mean" else 1.0
        gx = _piecewise_grad(grad._data, x - target._data, bound, bound if huber else 1, n)
        return (_wrap(gx) if needs[0] else None), (_wrap(-gx) if needs[1] else None)
    g = grad
    if reduction != "none":
        g = (g / input.numel() if reduction == "mean" else g).expand(input.shape)
    gd = g * _quadratic_arg(input - target, bound)
    if not huber:
        gd = gd / bound
    return (gd if needs[0] else None), (-gd if needs[1] else None)


@_smooth_l1.vjp
def _(grad, input, target, reduction, beta, needs):
    return _piecewise_vjp(grad, input, target, reduction, beta, False, needs)


@op(names=_reduced_rule, method=False)
def _huber(xp, input, target, reduction="none", delta=1.0):
    """huber_loss of a plain pair (delta > 0) as one node, torch's HuberLossBackward0: its
    kernel z < delta ? 0.5 z z : delta (z - 0.5 delta), z = |x - y|, delta in the dtype."""
    dl = input.dtype.type(delta)
    z = xp.abs(xp.subtract(input, target))
    r = xp.where(z < dl, 0.5 * z * z, dl * (z - 0.5 * dl))
    return _reduced_array(xp, r, reduction)


_huber.op.backward_name = "HuberLossBackward0"


@_huber.vjp
def _(grad, input, target, reduction, delta, needs):
    return _piecewise_vjp(grad, input, target, reduction, delta, True, needs)


def _difference(x: Tensor, y: Tensor) -> Tensor:
    """``x - y`` as torch's mse/smooth_l1 kernels compute it, in the promoted type: a bool
    input against a floating target is no subtraction of a bool (which ember's ``-`` refuses)."""
    if x.dtype is _bool:
        x = x.to(y.dtype)
    return x - y


def _quadratic_arg(d: Tensor, bound: float) -> Tensor:
    """``d`` for the quadratic branch of huber/smooth_l1: under grad, limited to the branch's
    range (equal where the branch is selected), since the where passes the unselected branch a
    0 and 0 * d is NaN at an infinite difference, where torch's gradient is +-bound. maximum and
    minimum rather than clamp: they keep a NaN and pass its gradient, NaN as torch's."""
    if not d.requires_grad:
        return d
    return _minimum(_maximum(d, d.new_full((), -bound)), d.new_full((), bound))


def _huber_mixed(loss: Tensor, input: Tensor, target: Tensor) -> Tensor:
    """torch's huber kernel of operands of two dtypes: the loss written in the input's dtype,
    and a backward that refuses them (its gradient kernel takes one dtype only)."""
    if loss.requires_grad:
        want, got = (input, target) if input.requires_grad else (target, input)
        msg = f"Found dtype {scalar_name(got.dtype)} but expected {scalar_name(want.dtype)}"

        def refuse(grad):
            raise RuntimeError(msg)

        loss.register_hook(refuse)
    return loss.to(input.dtype)


@_autocast_entry
@_with_names(_elementwise_names)
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 d**2 where |d| < delta, delta (|d| - delta/2) elsewhere."""
    plain = weight is None and type(input) is Tensor and type(target) is Tensor
    plain = plain and type(delta) is float and delta > 0 and reduction in _REDUCTIONS
    if plain and _plain_pair(input._data, target._data):
        return _huber(input, target, reduction, delta)  # the common call: one node
    x, y = _warn_size(input, target)
    reduction = _reduction(reduction, weighted=weight is not None)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _float_only("huber_cpu", input, target, into_input=True)
    d = x - y
    a = d.abs()
    loss = _where(a < delta, 0.5 * _quadratic_arg(d, delta) ** 2, delta * (a - 0.5 * delta))
    if input.dtype is not target.dtype:
        loss = _huber_mixed(loss, input, target)
    loss = _weighted(loss, weight, input, reduction, False)
    return loss if weight is not None else _as_torch_node(loss, "HuberLossBackward0")


@_autocast_entry
@_with_names(_elementwise_names)
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, |d| - beta/2 elsewhere (plain L1 when beta == 0)."""
    plain = size_average is None and reduce is None and type(input) is Tensor
    plain = plain and type(target) is Tensor and type(beta) is float and beta > 0
    if plain and _plain_pair(input._data, target._data) and reduction in _REDUCTIONS:
        return _smooth_l1(input, target, reduction, beta)  # the common call: one node
    x, y = _warn_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _float_only("smooth_l1_cpu", input, target)
    d = _difference(x, y)
    a = d.abs()
    if beta == 0:
        return _reduce(a, reduction)
    loss = _where(a < beta, (0.5 / beta) * _quadratic_arg(d, beta) ** 2, a - 0.5 * beta)
    return _as_torch_node(_reduce(loss, reduction), "SmoothL1LossBackward0")


@_autocast_entry
@_with_names(_elementwise_names)
def soft_margin_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """log(1 + exp(-target * input)) for targets in {1, -1}."""
    reduction = _reduction(reduction, size_average, reduce)
    _no_derivative("soft_margin_loss", "target", target)
    # input first: a size mismatch names the input as tensor a, as in torch; torch's kernel is
    # log1p(exp(-input * target)) as written: it overflows to inf (a NaN gradient) where
    # -input * target passes log(max) of the dtype (88.7 in float32, just 11.1 in float16)
    loss = (-input * target).exp().log1p()  # negating first: a bool input is refused as torch's
    if loss.shape != input.shape:  # torch's kernel writes the loss into the input's shape
        raise _inplace_shape_error(input, loss)
    if loss.is_complex() and loss.requires_grad:
        raise RuntimeError(
            "soft_margin_loss does not support automatic differentiation for outputs with "
            "complex dtype."
        )
    if loss.dtype != input.dtype:
        # torch writes the loss in the input's dtype: an integer input cannot hold it
        if not (input.is_floating_point() or input.is_complex()):
            raise RuntimeError(
                f"result type {scalar_name(_float_result(input, target))} can't be cast to the "
                f"desired output type {scalar_name(input.dtype)}"
            )
        loss = loss.to(input.dtype)
    return _as_torch_node(_reduce(loss, reduction), "SoftMarginLossBackward0")


def _float_result(input: Tensor, target: Tensor):
    """The floating dtype of an op on ``input`` and ``target`` (the default one for integers)."""
    from ..core.dtype import get_default_dtype

    dt = promote_types(input.dtype, target.dtype)
    return dt if dt.is_floating_point else get_default_dtype()


@_autocast_entry
@_with_names(_elementwise_names)
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log likelihood (``log_input``: the input is the log rate); ``full`` adds
    the Stirling term target*log(target) - target + 0.5*log(2*pi*target) where target > 1."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:  # (concatenated, as torch's: None meets a TypeError)
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        # the term of every target, then masked, as torch's: a target <= 0 that requires grad
        # gets a NaN gradient (0 * log(target))
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + _where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


@_with_names(_elementwise_names)
def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log likelihood 0.5 (log(var) + (input - target)**2 / var) (+ const)."""
    # torch checks the sign before the size
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.new_full(input.shape, float(var))
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)  # one variance per sample (homoscedastic over the last dim)
        # else broadcast, when var has the input's rank and the sizes of var's dims that differ
        # from the input's sum to 1 (torch's test: one dim of size 1, as (4, 1, 32, 32))
        elif var.ndim != input.ndim or (
            sum(v for i, v in zip(input.shape, var.shape) if i != v) != 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # clamp for stability without changing the gradient (torch clamps under no_grad)
    vd = var.detach()
    var = var + (vd.clamp_min(eps) - vd)
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@_autocast_entry
@_with_names(_elementwise_names)
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Kullback-Leibler divergence with ``input`` log-probabilities; ``target`` probabilities
    (log-probabilities when ``log_target``). reduction='batchmean' divides by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=_user_level(),
        )
    if reduction != "batchmean":
        reduction = _no_elementwise_mean(reduction)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    ki = input._data.dtype.kind
    kt = target._data.dtype.kind
    if ki == "c" or kt == "c":
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if ki in "biu" or kt in "biu":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        s = loss.sum()
        return s / input.shape[0] if input.ndim else s
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ binary losses
@_autocast_entry
@_with_names(_elementwise_names)
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """-w (y log(x) + (1 - y) log(1 - x)), the logs clamped at -100 and the gradient
    (x - y) / max(x (1 - x), 1e-12), like torch."""
    plain = weight is None and size_average is None and reduce is None
    if plain and reduction in _REDUCTIONS and type(input) is Tensor and type(target) is Tensor:
        x, y = input._data, target._data
        # the common call: one node; min and max prove the range (NaN fails them), else the
        # checks below raise torch's error
        if _plain_pair(x, y) and x.min() >= 0 and x.max() <= 1 and y.min() >= 0 and y.max() <= 1:
            return _bce_reduced(input, target, reduction)
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({_size(target.shape)}) that is different to the input size "
            f"({_size(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None and weight.shape != input.shape:
        # torch expands the weight to the target's size, then writes into the input's shape
        _broadcast_shapes(target.shape, weight.shape)
    _no_derivative("binary_cross_entropy", "weight", weight)
    if weight is not None and weight.shape != input.shape:
        err = _inplace_shape_error(input, weight)
        if err is not None:
            raise err
    if target.dtype is not input.dtype:
        raise RuntimeError(
            f"Found dtype {scalar_name(target.dtype)} but expected {scalar_name(input.dtype)}"
        )
    _float_input("binary_cross_entropy", input)
    # written as "not inside [0, 1]", so that NaN fails the checks, as in torch
    x = input._data
    if not bool(((x >= 0) & (x <= 1)).all()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    y = target._data
    if not bool(((y >= 0) & (y <= 1)).all()):
        raise RuntimeError("all elements of target should be between 0 and 1")
    loss = _reduce(_bce(input, target), reduction, _as_dtype(weight, input.dtype))
    return _as_torch_node(loss, "BinaryCrossEntropyBackward0")


def _as_dtype(weight: Tensor | None, dtype) -> Tensor | None:
    """The BCE losses cast their weight to the loss's dtype (torch's result keeps it)."""
    return weight if weight is None or weight.dtype is dtype else weight.to(dtype)


@_autocast_entry
@_with_names(_bce_logits_names)
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid + BCE in one stable expression: (1 - y) x + (1 + (p - 1) y) softplus(-x)."""
    reduction = _reduction(reduction, size_average, reduce)
    if (  # the common call: loss and reduction in one node
        weight is None
        and pos_weight is None
        and type(input) is Tensor
        and type(target) is Tensor
        and _plain_pair(input._data, target._data)
    ):
        loss = _bce_logits(input, target, reduction)
        return _as_torch_node(loss, "BinaryCrossEntropyWithLogitsBackward0")
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({_size(target.shape)}) must be the same as input size "
            f"({_size(input.shape)})"
        )
    _no_derivative("binary_cross_entropy_with_logits", "weight", weight)
    _no_derivative("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    _float_input("log_sigmoid_cpu", input)  # torch's kernel refuses an integer input first
    if target._data.dtype.kind not in "fV":
        if target.dtype is _bool:
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                "`^` or `logical_xor()` operator instead."
            )
        if not target.is_complex():
            raise RuntimeError(
                f"result type {scalar_name(input.dtype)} can't be cast to the desired output "
                f"type {scalar_name(target.dtype)}"
            )
        if pos_weight is not None:  # torch's kernel writes a step into the input's dtype
            res = promote_types(promote_types(input.dtype, target.dtype), pos_weight.dtype)
            raise _cast_error(res, input.dtype)
        pos_weight = 1  # the fused kernel is real: torch's formula, complex from the target
    if pos_weight is not None:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * _softplus(-input)
    else:
        loss = _bce_logits(input, target)
    # torch's kernel writes the loss into the input's shape, weights applied in place
    for w in (loss, weight):
        if w is not None and w.shape != input.shape:
            err = _inplace_shape_error(input, w)
            if err is not None:
                raise err
    if loss.dtype is not target.dtype:  # torch's loss takes the target's dtype
        loss = loss.to(target.dtype)
    loss = _reduce(loss, reduction, _as_dtype(weight, target.dtype))
    return _as_torch_node(loss, "BinaryCrossEntropyWithLogitsBackward0")


# ------------------------------------------------------------------ class-index losses
def _nll_from_logp(logp, target, weight, ignore_index, reduction, cd):
    """NLL of (N, C, d...) log-probabilities ``logp`` (class dim ``cd``) at class indices."""
    if cd == 1:
        # the common call: (N, C) float32/float64 log-probabilities, N int64 targets, all in
        # range and none ignored (one reduction tells: a negative target is a huge uint64), and
        # no weight or a plain one of C values: none of the checks below can fail, and the
        # kernel needs no mask (the target is wrapped afresh, as the masked one below)
        ld, td = logp._data, target._data
        if (
            type(td) is np.ndarray
            and td.dtype is _I64
            and td.ndim == 1
            and ld.ndim == 2
            and (ld.dtype is _F32 or ld.dtype is _F64)
            and 0 < td.shape[0] == ld.shape[0] < _EXACT_COUNT
            and type(ignore_index) is int
            and not 0 <= ignore_index < ld.shape[1]
        ):
            if weight is None:
                if td.view(np.uint64).max() < ld.shape[1]:
                    ones = _wrap(np.ones(td.shape, ld.dtype))  # (saved, as any call's weights)
                    return _nll_loss(logp, _wrap(td), ones, reduction, True)
            elif type(weight) is Tensor and not weight.requires_grad:
                wd = weight._data
                if (
                    type(wd) is np.ndarray
                    and wd.dtype is ld.dtype
                    and wd.shape == ld.shape[1:]
                    and td.view(np.uint64).max() < ld.shape[1]
                ):
                    return _nll_loss(logp, _wrap(td), _wrap(wd[td]), reduction)
    shape = logp.shape
    C = shape[cd]
    if cd:
        tb = target.shape[0] if target.ndim else 0
        if tb != shape[0]:
            raise ValueError(
                f"Expected input batch_size ({shape[0]}) to match target batch_size ({tb})."
            )
        if logp.ndim > 2 and logp.ndim != 4 and target.shape != shape[:1] + shape[2:]:
            raise RuntimeError(
                f"Expected target size {list(shape[:1] + shape[2:])}, got {list(target.shape)}"
            )
    # torch refuses a weight requiring grad before its kernels' own checks
    _no_derivative("nll_loss2d_forward" if logp.ndim > 2 else "nll_loss_forward", "weight", weight)
    multi_target = target.ndim > 1 if cd == 0 else logp.ndim == 2 and target.ndim != 1
    if multi_target:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if logp.ndim == 4 and target.ndim != 3:  # torch's nll_loss2d checks
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets of "
            f"dimension: {target.ndim}"
        )
    td = target._data
    if td.dtype != np.int64 and td.dtype != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_tname(td.dtype)}")
    if weight is not None and logp.ndim > 2:
        # torch runs (N, C, d...) inputs as 2-d images: weight needs C values in any shape
        if weight.numel() != C:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        weight = weight.reshape(-1)
        if logp.ndim == 4 and target.shape != shape[:1] + shape[2:]:
            raise RuntimeError(
                f"size mismatch (got input: {list(shape)} , target: {list(target.shape)}"
            )
    elif logp.ndim == 4 and target.shape != shape[:1] + shape[2:]:
        raise RuntimeError(
            f"size mismatch (got input: {list(shape)} , target: {list(target.shape)}"
        )
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != C):
        raise RuntimeError(
            f"weight tensor should be defined either for all {C} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    if logp._data.dtype.kind not in "fV":  # nll_loss's own input (cross_entropy's is floating)
        kernel = "nll_loss2d_forward_out_frame" if logp.ndim > 2 else "nll_loss_out_frame"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(logp._data.dtype)}'")
    if weight is not None and weight.dtype is not logp.dtype:  # torch's kernel never casts it
        raise RuntimeError(
            f"expected scalar type {scalar_name(logp.dtype)} but found {scalar_name(weight.dtype)}"
        )
    # torch's image kernel (nll_loss2d) reads the target as Long only, after the weight (its
    # reduced forward skips an empty batch)
    if logp.ndim > 2 and td.dtype == np.uint8 and (td.size or reduction == "none"):
        raise RuntimeError("expected scalar type Long but found Byte")
    xp = array_module(td)
    valid = td != ignore_index
    bad = valid & ((td < 0) | (td >= C))
    if bool(bad.any()):
        raise IndexError(f"Target {int(td[bad].reshape(-1)[0])} is out of bounds.")
    # -1: ignored (torch's kernel skips it); int64 first, as a Byte target cannot hold the -1
    safe = xp.where(valid, td.astype(np.int64, copy=False), -1)
    wt = xp.where(valid, weight._data[safe], 0) if weight is not None else valid
    wt = wt.astype(logp._data.dtype, copy=False)
    if cd == 0:  # unbatched: one sample
        out = _nll_loss(logp.unsqueeze(0), _wrap(safe.reshape(1)), _wrap(wt.reshape(1)), reduction)
        return _as_torch_node(out.reshape(()), "NllLossBackward0") if reduction == "none" else out
    return _nll_loss(logp, _wrap(safe), _wrap(wt), reduction)


def _nll_rule(ins, reduction="mean", plain=False):
    """(N, C, d...) -> (N, d...) for reduction='none' (the class dim drops its name)."""
    if reduction != "none" or ins[0]._names is None:
        return None
    n = ins[0]._names
    return _unified_names(n[:1] + n[2:], ins[1]._names)


def _unified_names(a, b):
    n = a if b is None else unify(a, b)
    return None if all(x is None for x in n) else n


_CASCADE_LEVELS = 8


def _cascade_sum(vals, at, batch: int):
    """The sum of the half-precision ``vals`` (one per sample, at batch positions ``at``) as
    torch's cpu nll_loss forms it in the half dtype: each sample is added to the first of 8
    partial sums, which moves up a level after every 16th (16**j-th) batch position; the
    partial sums are added last. (A plain half-precision sum of thousands of losses loses most
    of its digits: ember's mean of 2048 was 8x torch's.) Host arrays only."""
    dt = vals.dtype.type
    power = max(4, (batch - 1).bit_length() // _CASCADE_LEVELS)
    mask = (1 << power) - 1
    parts = [dt(0)] * _CASCADE_LEVELS
    start = 0
    for e in np.flatnonzero((at & mask) == 0):
        if e >= start:
            parts[0] = np.add.accumulate(np.concatenate([[parts[0]], vals[start : e + 1]]))[-1]
            start = e + 1
        b = int(at[e])
        for j in range(_CASCADE_LEVELS - 1):
            if b & (mask << (j * power)):
                break
            parts[j + 1], parts[j] = dt(parts[j + 1] + parts[j]), dt(0)
    if start < vals.size:
        parts[0] = np.add.accumulate(np.concatenate([[parts[0]], vals[start:]]))[-1]
    total = dt(0)
    for p in parts:
        total = dt(total + p)
    return total


def _half_nll_sums(input, target, wt):
    """(loss sum, total weight) of a 2-D half-precision nll_loss, rounded as torch's cpu kernel
    rounds them (see _cascade_sum); None for other inputs (numpy's sum matches torch's there)."""
    if input.ndim != 2 or input.dtype.itemsize != 2 or type(input) is not np.ndarray:
        return None
    at = np.flatnonzero(wt != 0)  # (a zero weight adds nothing: skipping it changes no sum)
    picked = np.take_along_axis(input, target[:, None], axis=1)[at, 0]
    w = wt[at]
    loss = _cascade_sum(-(picked * w), at, input.shape[0])
    # unweighted: the count of kept samples, rounded to the dtype
    ones = bool((w == 1).all())
    tw = wt.dtype.type(at.size) if ones else _cascade_sum(w, at, input.shape[0])
    return loss, tw


def _arange(n: int):
    """np.arange(n), cached (row indices for picking one class per row; never written to)."""
    r = _ARANGES.get(n)
    if r is None:
        if len(_ARANGES) > 64:
            _ARANGES.clear()
        r = _ARANGES[n] = np.arange(n)
        r.flags.writeable = False
    return r


def _rows(xp, n: int):
    return _arange(n) if xp is np else xp.arange(n)


@op(names=_nll_rule, method=False)
def _nll_loss(xp, input, target, wt, reduction="mean", plain=False):
    """-wt * input[n, target[n, ...], ...] reduced; ``target`` holds valid class indices, -1
    where ignored, and ``wt`` the per-element weights (0 where ignored); ``plain``: every
    target valid and every weight one (float32/float64 (N, C) inputs only)."""
    if input.ndim == 2:  # one class per row: plain fancy indexing
        picked = input[_rows(xp, input.shape[0]), target]
    else:
        picked = xp.take_along_axis(input, xp.expand_dims(target, 1), axis=1)[:, 0]
    if plain:
        loss = -picked
        if reduction == "none":
            return loss
        s = loss.sum()
        if reduction == "mean":
            s = s / target.shape[0]  # (a Python int: the division stays in the input's dtype)
        return xp.asarray(s, dtype=input.dtype)
    # an ignored element adds 0, whatever its input holds (an -inf logit: not 0 * inf = nan)
    loss = xp.where(target < 0, 0, picked * -wt).astype(input.dtype, copy=False)
    if reduction == "none":
        return loss
    half = _half_nll_sums(input, target, wt)
    if half is not None:
        s, tw = half
        with _errstate(xp):
            return xp.asarray(s / tw if reduction == "mean" else s, dtype=input.dtype)
    s = loss.sum()
    if reduction == "mean":
        with _errstate(xp):  # every target ignored: nan, silently (like torch)
            s = s / wt.sum()
    return xp.asarray(s, dtype=input.dtype)


def _put_classes(xp, g, t, vals) -> None:
    """g[n, t[n, ...], ...] = vals (an index of -1, an ignored target, writes the last class)."""
    if g.ndim == 2:
        g[_rows(xp, g.shape[0]), t] = vals
    else:
        xp.put_along_axis(g, xp.expand_dims(t, 1), xp.expand_dims(vals, 1), axis=1)


@_nll_loss.vjp
def _(grad, input, target, wt, reduction, plain):
    input_shape = input._data.shape
    t, w = target._data, wt._data
    xp = array_module(t)
    if plain and reduction != "none" and not _grad_state.enabled:
        # the branch below with weights one: -(grad / N) at each target
        gd = grad._data
        gv = -(gd / t.shape[0]) if reduction == "mean" else -gd
        g = xp.zeros(input_shape, dtype=w.dtype)
        g[_rows(xp, input_shape[0]), t] = gv
        return _wrap(g), None, None
    if reduction != "none" and not _grad_state.enabled:
        # torch's kernel: -(grad / total_weight) rounded once to the input's dtype, then times
        # each weight (bfloat16: rounding -w / total_weight first put ~half the rows one unit
        # off)
        tw = w.sum(dtype=np.float32 if w.dtype.itemsize < 4 else w.dtype).astype(w.dtype)
        if w.dtype.itemsize == 2 and len(input_shape) == 2 and type(w) is np.ndarray:
            at = np.flatnonzero(w != 0)
            if not bool((w[at] == 1).all()):  # the forward's total weight (_half_nll_sums)
                tw = _cascade_sum(w[at], at, input_shape[0])
        with _errstate(xp):
            gv = -(grad._data / tw) if reduction == "mean" else -grad._data
        g = xp.zeros(input_shape, dtype=w.dtype)
        vals = (w * gv.astype(w.dtype)).astype(w.dtype, copy=False)
        vals[w == 0] = 0  # an ignored target is skipped: +0, not 0 * -x
        _put_classes(xp, g, t, vals)
        return _wrap(g), None, None
    with _errstate(xp):
        scale = -w / w.sum() if reduction == "mean" else -w
    # -scale at each target class, zeros elsewhere (written in place: no dense one-hot)
    g = xp.zeros(input_shape, dtype=w.dtype)
    _put_classes(xp, g, t, scale.astype(w.dtype))
    g = _wrap(g) * (grad.unsqueeze(1) if reduction == "none" else grad)
    # torch's nll_loss_backward is a function of the input with a zero derivative there
    name = "NllLossBackwardBackward0" if len(input_shape) <= 2 else "NllLoss2DBackwardBackward0"
    return _tie(g, input, name), None, None


def _nll_node_name(node) -> str:
    # torch runs (N, C, d...) inputs through its 2-d image kernel (nll_loss2d), viewing other
    # ranks as (N, C, d1, d2...) and an unreduced loss back
    nd = len(node.saved_arg("input").shape)
    if nd <= 2:
        return "NllLossBackward0"
    if nd != 4 and node.saved_arg("reduction") == "none":
        return "ViewBackward0"
    return "NllLoss2DBackward0"


_nll_loss.op.name_rule = _nll_node_name


def _check_classes_input(input):
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")


@_autocast_entry
@_with_names(_class_weighted(2, "nll_loss"))
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of log-probabilities ``input`` (N, C, d1, ...) at class indices."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_classes_input(input)
    return _nll_from_logp(
        input, target, weight, ignore_index, reduction, 1 if input.ndim > 1 else 0
    )


@_autocast_entry
@_with_names(_class_weighted(2, "cross_entropy"))
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax + NLL over class indices or class probabilities (``target`` shaped like
    ``input``), with optional per-class ``weight`` and ``label_smoothing``."""
    reduction = _reduction(reduction, size_average, reduce)
    # torch's order: a target shaped like the input is class probabilities, checked first
    probs = target.shape == input.shape
    if probs:
        if target._data.dtype.kind not in "fV":
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_tname(target._data.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
    if input.ndim == 0:  # torch's log_softmax over dim 1 of a 0-dim input
        if probs:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if not label_smoothing <= 1.0:  # a negative one smooths nothing, as torch's
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {float(label_smoothing):g}"
        )
    cd = 1 if input.ndim > 1 else 0
    C = input.shape[cd]
    logp = input.log_softmax(cd)
    wshape = None
    if weight is not None:
        wshape = (C,) + (1,) * (input.ndim - cd - 1)
    if probs:
        # class probabilities
        if weight is not None and (weight.ndim != 1 or weight.shape[0] != C):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {C} classes or "
                f"no classes but got weight tensor of shape: {list(weight.shape)}"
            )
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        if reduction == "none":
            return -prod.sum(cd)
        total = -prod.sum()  # torch's node names: NegBackward0, then a scalar DivBackward1
        if reduction == "sum":
            return total
        if not input.numel():
            return total / 0.0
        return _as_torch_node(total / (input.numel() // C), "DivBackward1")
    nll = _nll_from_logp(logp, target, weight, ignore_index, reduction, cd)
    if label_smoothing <= 0:
        return nll
    # the smoothing term: -sum_c w_c logp_c per element, zero where the target is ignored
    # (a fill, as torch's masked_fill_: an ignored row's -inf logit must not make 0 * inf = nan)
    td = target._data
    valid = td != ignore_index
    lw = logp * weight.reshape(wshape) if weight is not None else logp
    smooth = (-lw.sum(cd)).masked_fill(_wrap(~valid), 0.0)
    if reduction == "mean":
        if weight is not None:
            # torch gathers the weights at the kept targets: Long only (when there are any)
            if td.dtype == np.uint8 and bool(valid.any()):
                raise RuntimeError("gather(): Expected dtype int32/int64 for index")
            xp = array_module(td)
            den = weight._data[xp.where(valid, td, 0).astype(np.int64)][valid].sum()
            smooth = smooth.sum() / _const(xp.asarray(den), logp)
        else:
            smooth = smooth.sum() / _const(valid.sum(), logp)
    else:
        smooth = _reduce(smooth, reduction)
    # torch scales by C++ Scalars: two MulBackward1 nodes
    return _as_torch_node((1 - label_smoothing) * nll, "MulBackward1") + _as_torch_node(
        smooth * (label_smoothing / C), "MulBackward1"
    )


def _check_nd_classes(input):
    if input.ndim > 2 or input.numel() == 0 and input.ndim != 2:
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )


@_autocast_entry
@_with_names(_class_weighted(4, "multi_margin_loss"))
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge: sum over j != y of max(0, margin - x[y] + x[j])**p * w[y] / C."""
    reduction = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _no_derivative("multi_margin_loss", "weight", weight)
    _check_nd_classes(input)
    x = input if input.ndim == 2 else input.reshape(1, -1)
    N, C = x.shape
    if target.numel() != N or target.ndim > 1:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{N}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if weight is not None and weight.shape[0] != C:
        raise RuntimeError(f"inconsistent weight size, expected {C} but got {list(weight.shape)}")
    # an empty batch runs no kernel: torch checks none of the dtypes then
    _float_input("multi_margin_loss_cpu_kernel", input, cpu_half=not N)
    if N and target.dtype.name != "int64":  # class indices: torch takes no other index dtype
        raise RuntimeError(f"expected scalar type Long but found {scalar_name(target.dtype)}")
    if N and weight is not None and weight.dtype is not input.dtype:  # the kernel never casts
        raise RuntimeError(
            f"expected scalar type {scalar_name(input.dtype)} but found {scalar_name(weight.dtype)}"
        )
    td = target._data.reshape(-1)
    if bool(((td < 0) | (td >= C)).any()):
        raise RuntimeError("target out of range")
    xp = array_module(td)
    td = td.astype(np.int64, copy=False)  # (an empty target may be of any dtype)
    idx = _wrap(td[:, None])
    z = (margin - x.gather(1, idx) + x).relu()  # torch: no gradient at the hinge (> 0)
    if p == 2:
        z = z * z
    keepm = xp.arange(C)[None, :] != td[:, None]
    if weight is not None:
        keepm = keepm * weight._data[td][:, None]
    loss = (z * _const(keepm, x)).sum(1) / C
    if input.ndim < 2:
        loss = loss.reshape(target.shape)
    return _as_torch_node(_reduce(loss, reduction), "MultiMarginLossBackward0")


@_autocast_entry
@_with_names(_class_names)
def multilabel_margin_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """Multi-label hinge: targets are class indices padded by -1; sum over target j and
    non-target i of max(0, 1 - (x[j] - x[i])) / C."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_nd_classes(input)
    if target.shape != input.shape:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    x = input if input.ndim == 2 else input.reshape(1, -1)
    N, C = x.shape
    td = target._data.reshape(N, C)
    xp = array_module(td)
    # the targets of a row are its entries before the first -1
    slot = xp.cumprod(td >= 0, axis=1).astype(bool)
    if bool(((td >= C) & slot).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    # torch reads the target's values (range), then picks its kernel by the input's dtype,
    # before it insists on the target's dtype
    _float_input("multilabel_margin_loss_forward_out_frame", input, cpu_half=not N)
    # (an empty batch runs no kernel: no dtype check); class indices: Long only
    if N and target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {scalar_name(target.dtype)}")
    safe = xp.where(slot, td, 0).astype(np.int64)
    is_t = xp.zeros((N, C), dtype=bool)
    rows = xp.broadcast_to(xp.arange(N)[:, None], (N, C))
    is_t[rows[slot], safe[slot]] = True
    xj = x.gather(1, _wrap(safe))  # (N, C): the input at each target slot
    pair = (1 - xj.unsqueeze(2) + x.unsqueeze(1)).relu()
    m = slot[:, :, None] & ~is_t[:, None, :]
    loss = (pair * _const(m, x)).sum((1, 2)) / C
    if input.ndim < 2:
        loss = loss.reshape(())
    return _as_torch_node(_reduce(loss, reduction), "MultilabelMarginLossBackward0")


@_with_names(_class_weighted(2, "multilabel_soft_margin_loss"))
def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Per-class binary logistic loss averaged over the classes (last dim)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _float_input("log_sigmoid_cpu", input)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    cd = input.ndim - 1
    loss = loss.sum(cd) / input.size(cd)
    # torch reads the reduction last: an error of the loss itself comes first
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ pair / triplet losses
@_autocast_entry
@_with_names(_elementwise_names)
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(reduction, size_average, reduce)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, "
            f"target: {_size(target.shape)} "
        )
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@_autocast_entry
@_with_names(_elementwise_names)
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """x where target == 1, max(0, margin - x) where target == -1."""
    reduction = _reduction(reduction, size_average, reduce)
    zero = 0.0
    if not (input.is_floating_point() or input.is_complex()):
        # torch writes the margin and the zeros in an integer (or bool) input's own dtype
        margin, zero = input.new_full((), margin), input.new_zeros(())
    m = (margin - input).clamp_min(0)
    loss = _where(target != 1, m, zero) + _where(target != -1, input, zero)
    return _reduce(loss, reduction)


@_autocast_entry
@_with_names(_compared_batch_names(2))
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.ndim == 1:
        if input1.ndim != 2 or input2.ndim != 2:
            raise RuntimeError(
                "1D target tensor expects 2D input tensors, but found inputs with sizes "
                f"{list(input1.shape)} and {list(input2.shape)}."
            )
    elif input1.ndim != 1 or input2.ndim != 1:
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    d = input1.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + eps
    m2 = (input2 * input2).sum(d) + eps
    cos = prod / (m1 * m2).sqrt()
    pos = _where(target == 1, 1 - cos, 0.0)
    neg = _where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(pos + neg, reduction)


def _pairwise(x1, x2, p=2.0, eps=1e-6):
    return (x1 - x2 + eps).norm(p, dim=-1)


def _check_triplet(a, p, n):
    if not a.ndim == p.ndim == n.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a.ndim}D, positive {p.ndim}D, and negative "
            f"{n.ndim}D inputs"
        )


def _triplet(anchor, positive, negative, dist, margin, swap, reduction):
    """max(0, margin + dist(a, p) - dist(a, n)) (``swap``: the harder of d(a, n), d(p, n))."""
    _check_triplet(anchor, positive, negative)
    dp = dist(anchor, positive)
    dn = dist(anchor, negative)
    if swap:
        dn = dn.minimum(dist(positive, negative))
    return _reduce((margin + dp - dn).clamp_min(0), reduction)


@_autocast_entry
@_with_names(_compared_batch_names(3))
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with the p-norm distance (``swap``: the harder of
    d(a, n) and d(p, n))."""
    reduction = _reduction(reduction, size_average, reduce)
    return _triplet(
        anchor, positive, negative, lambda x, y: _pairwise(x, y, p, eps), margin, swap, reduction
    )


@_with_names(_triplet_distance_names)
def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """Triplet loss with a custom ``distance_function`` (default: pairwise Euclidean)."""
    _reduction(reduction, old_name=False)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dist = distance_function if distance_function is not None else _pairwise
    return _triplet(anchor, positive, negative, dist, margin, swap, reduction)


# ------------------------------------------------------------------ CTC
def _errstate(xp):
    return (
        xp.errstate(divide="ignore", invalid="ignore") if hasattr(xp, "errstate") else nullcontext()
    )


def _lse3(xp, a, b, c):
    m = xp.maximum(xp.maximum(a, b), c)
    ms = xp.where(xp.isfinite(m), m, 0)
    return xp.log(xp.exp(a - ms) + xp.exp(b - ms) + xp.exp(c - ms)) + ms


def _ctc_setup(xp, lp, targets, in_len, tgt_len, blank):
    """Extended label sequences (blank-interleaved), their emissions and skip masks."""
    T, N, _C = lp.shape
    tgt_len = tgt_len.astype(np.int64)
    smax = int(tgt_len.max()) if N else 0
    ar = xp.arange(smax)
    inside = ar[None, :] < tgt_len[:, None]
    if targets.ndim == 1:  # concatenated targets
        offs = xp.cumsum(tgt_len) - tgt_len
        idx = offs[:, None] + ar[None, :]
        flat = targets if targets.size else xp.zeros(1, targets.dtype)
        tg = flat[xp.clip(idx, 0, flat.size - 1)]
    else:
        tg = targets[:, :smax]
    tg = xp.where(inside, tg, blank).astype(np.int64)
    S = 2 * smax + 1
    ext = xp.full((N, S), blank, dtype=np.int64)
    ext[:, 1::2] = tg
    skip = xp.zeros((N, S), dtype=bool)  # s-2 -> s allowed
    if smax > 1:
        skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]
    svalid = xp.arange(S)[None, :] < (2 * tgt_len + 1)[:, None]
    # emissions (T, N, S): lp[t, n, ext[n, s]]
    em = xp.take_along_axis(lp, xp.broadcast_to(ext[None], (T, N, S)), axis=2)
    return ext, skip, svalid, em, tgt_len


def _ctc_alpha(xp, em, skip, svalid, in_len):
    T, N, S = em.shape
    ninf = xp.asarray(-np.inf, dtype=em.dtype)
    alpha = xp.full((T, N, S), -np.inf, dtype=em.dtype)
    a0 = xp.full((N, S), -np.inf, dtype=em.dtype)
    a0[:, 0] = em[0, :, 0]
    if S > 1:
        a0[:, 1] = em[0, :, 1]
    alpha[0] = xp.where(svalid, a0, ninf)
    pad1 = xp.full((N, 1), -np.inf, dtype=em.dtype)
    pad2 = xp.full((N, min(2, S)), -np.inf, dtype=em.dtype)  # S is 1 when all targets are empty
    for t in range(1, T):
        a = alpha[t - 1]
        a1 = xp.concatenate([pad1, a[:, :-1]], axis=1)
        a2 = xp.where(skip, xp.concatenate([pad2, a[:, : S - 2]], axis=1), ninf)
        alpha[t] = xp.where(svalid, _lse3(xp, a, a1, a2) + em[t], ninf)
    return alpha


def _ctc_beta(xp, em, skip, svalid, in_len, tgt_len):
    T, N, S = em.shape
    ninf = xp.asarray(-np.inf, dtype=em.dtype)
    beta = xp.full((T, N, S), -np.inf, dtype=em.dtype)
    rows = xp.arange(N)
    last = 2 * tgt_len
    w2 = min(2, S)  # S is 1 when all targets are empty
    skip_from = xp.concatenate([skip[:, 2:], xp.zeros((N, w2), dtype=bool)], axis=1)
    pad1 = xp.full((N, 1), -np.inf, dtype=em.dtype)
    pad2 = xp.full((N, w2), -np.inf, dtype=em.dtype)
    b = xp.full((N, S), -np.inf, dtype=em.dtype)
    for t in range(T - 1, -1, -1):
        b1 = xp.concatenate([b[:, 1:], pad1], axis=1)
        b2 = xp.where(skip_from, xp.concatenate([b[:, 2:], pad2], axis=1), ninf)
        rec = xp.where(svalid, _lse3(xp, b, b1, b2) + em[t], ninf)
        init = xp.full((N, S), -np.inf, dtype=em.dtype)
        init[rows, last] = em[t, rows, last]
        has = tgt_len > 0
        init[rows[has], last[has] - 1] = em[t, rows[has], last[has] - 1]
        here = (t == in_len - 1)[:, None]
        before = (t < in_len - 1)[:, None]
        b = xp.where(here, init, xp.where(before, rec, ninf))
        beta[t] = b
    return beta


def _ctc_nll(xp, alpha, in_len, tgt_len):
    N = alpha.shape[1]
    rows = xp.arange(N)
    fin = alpha[xp.clip(in_len - 1, 0, None), rows]  # (N, S)
    last = 2 * tgt_len
    a = fin[rows, last]
    b = xp.where(tgt_len > 0, fin[rows, xp.maximum(last - 1, 0)], -np.inf)
    return -xp.logaddexp(a, b)


def _ctc_rule(ins, *args, **kwargs):
    """(T, N, C) log-probabilities -> (N,) losses: the batch dim keeps its name."""
    n = ins[0]._names
    return None if n is None or n[1] is None else (n[1],)


@op(names=_ctc_rule, method=False)
def _ctc_loss(xp, log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    """Per-sample CTC negative log likelihood of (T, N, C) log-probabilities."""
    in_len = input_lengths.astype(np.int64)
    with _errstate(xp):
        _ext, skip, svalid, em, tl = _ctc_setup(
            xp, log_probs, targets, in_len, target_lengths, blank
        )
        nll = _ctc_nll(xp, _ctc_alpha(xp, em, skip, svalid, in_len), in_len, tl)
    if zero_infinity:
        nll = xp.where(xp.isinf(nll), 0, nll)
    return nll.astype(log_probs.dtype, copy=False)


def _ctc_grad(xp, lp, targets, input_lengths, target_lengths, blank, zero_infinity):
    """d nll / d log_probs as torch computes it: exp(lp) - posterior (the gradient through a
    preceding log_softmax), zero past each input length."""
    in_len = input_lengths.astype(np.int64)
    T, N, C = lp.shape
    with _errstate(xp):
        ext, skip, svalid, em, tl = _ctc_setup(xp, lp, targets, in_len, target_lengths, blank)
        alpha = _ctc_alpha(xp, em, skip, svalid, in_len)
        nll = _ctc_nll(xp, alpha, in_len, tl)
        beta = _ctc_beta(xp, em, skip, svalid, in_len, tl)
        post = xp.exp(alpha + beta - em + nll[None, :, None])  # (T, N, S), summing to 1 per t
        acc = xp.zeros((T, N, C), dtype=lp.dtype)
        tt = xp.arange(T)[:, None]
        nn_ = xp.arange(N)[None, :]
        for s in range(ext.shape[1]):  # (t, n, ext[n, s]) are distinct for one s
            acc[tt, nn_, ext[None, :, s]] += post[:, :, s]
        g = xp.exp(lp) - acc
    inside = (xp.arange(T)[:, None] < in_len[None, :])[:, :, None]
    g = xp.where(inside, g, 0)
    infeasible = xp.isinf(nll)[None, :, None]
    if zero_infinity:
        g = xp.where(infeasible, 0, g)
    else:  # torch's exp(lp) - exp(log(alpha beta) + nll - lp): -inf + inf for every class
        g = xp.where(infeasible & inside, xp.nan, g)
    return g.astype(lp.dtype, copy=False)


@_ctc_loss.vjp
def _(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    g = _ctc_loss_backward(
        grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity
    )
    return g, None, None, None


def _ctc_backward_rule(ins, *args, **kwargs):
    """The gradient is shaped (and named) like the log-probabilities."""
    return ins[1]._names


@op(names=_ctc_backward_rule, method=False)
def _ctc_loss_backward(
    xp, grad, log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False
):
    """CTC's gradient with respect to the log-probabilities, scaled by the (N,) upstream grad.

    One op rather than ember ops over the alpha/beta recursions: like torch's
    ``_ctc_loss_backward`` it has no derivative of its own, so a double backward through CTC
    raises instead of treating the posterior as a constant (a silently wrong Hessian)."""
    g = _ctc_grad(xp, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    return g * grad[None, :, None]


@_ctc_loss_backward.vjp
def _(grad):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


def _lengths(x, like):
    if isinstance(x, Tensor):
        return x
    x = [x] if isinstance(x, int) else list(x)
    return _wrap(array_module(like._data).asarray(x, dtype=np.int64))


def _ctc_names(args, kwargs):
    """The batch dim's name: log_probs' dim 1, unified with the batch dim of padded (N, S)
    targets and of the (N,) length tensors (the target's names count: spec 4.3)."""
    lp = args[0]
    if not isinstance(lp, Tensor) or lp.ndim != 3:
        return None
    out = (names_of(lp)[1],)
    for i, a in enumerate(args[1:4]):
        # concatenated 1-D targets (i == 0) have no batch dim
        if isinstance(a, Tensor) and a._names is not None and a.ndim == (2 if i == 0 else 1):
            out = unify(out, a._names[:1])
    return None if out[0] is None else out


_CTC_SIGS = tuple(
    f"(Tensor log_probs, Tensor targets, {k} input_lengths, {k} target_lengths, int blank = 0, "
    "int reduction = at::Reduction::Mean, bool zero_infinity = False)"
    for k in ("tuple of ints", "Tensor")
)


def _ctc_call_error(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank=0,
    reduction="mean",
    zero_infinity=False,
) -> TypeError | None:
    """torch's error for a ctc_loss call that matches neither overload of torch.ctc_loss (to which
    F.ctc_loss passes its seven arguments positionally, the reduction as its enum); None when
    the call matches one, or when the reduction is no reduction (torch's ValueError comes first)."""
    if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
        return None
    il, tl = input_lengths, target_lengths
    lengths = (isinstance(il, Tensor) and isinstance(tl, Tensor)) or (
        isinstance(il, (tuple, list))
        and isinstance(tl, (tuple, list))
        and is_ints(il)
        and is_ints(tl)
    )
    int_blank = not isinstance(blank, (float, bool)) and hasattr(blank, "__index__")
    if (
        isinstance(log_probs, Tensor)
        and isinstance(targets, Tensor)
        and lengths
        and int_blank
        and type(zero_infinity) is bool
    ):
        return None
    args = (log_probs, targets, il, tl, blank, _REDUCTIONS.index(reduction), zero_infinity)
    return invalid_arguments("ctc_loss", args, {}, _CTC_SIGS)


def _ctc_arg_errors(fn):
    """torch's "invalid combination" error for a ctc_loss that failed on arguments of the wrong
    type (the failure path only: a correct call pays one frame)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (AttributeError, TypeError, ValueError):
            try:
                err = _ctc_call_error(*args, **kwargs)
            except TypeError:  # missing or unknown arguments: the call's own error stands
                err = None
            if err is None:
                raise
            raise err from None

    return wrapper


def _ctc_bad_dims(log_probs, input_lengths, target_lengths):
    """torch's error for log-probabilities neither (T, N, C) nor (T, C): it checks the lengths'
    dtype, unsqueezes dim 1 as for an unbatched input (an IndexError on a 0-d tensor), checks
    the dtype, then wants 3 dims."""
    for name, x in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if isinstance(x, Tensor) and x._data.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
    if log_probs.ndim == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if log_probs._data.dtype.itemsize < 4 or log_probs._data.dtype.kind != "f":
        # torch's kernel takes float32 and float64 only (not half, bfloat16 or integers)
        raise NotImplementedError(
            f"\"ctc_loss_cpu\" not implemented for '{_tname(log_probs._data.dtype)}'"
        )
    raise RuntimeError(
        f"Expected 3-dimensional tensor, but got {log_probs.ndim + 1}-dimensional tensor for "
        "argument #1 'log_probs' (while checking arguments for ctc_loss_allocate_outputs)"
    )


@_autocast_entry
@_ctc_arg_errors
@_with_names(_ctc_names)
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist Temporal Classification loss of (T, N, C) log-probabilities (or (T, C)),
    targets padded (N, S) or concatenated; 'mean' divides by the target lengths first."""
    reduction = _reduction(reduction)
    if (
        type(input_lengths) is not Tensor
        or type(target_lengths) is not Tensor
        or type(blank) is not int
        or type(zero_infinity) is not bool
    ):
        # what the checks below let through (lengths of floats, a bare int or one list with one
        # tensor, a float blank, a zero_infinity of any type) matches no overload of torch's
        err = _ctc_call_error(
            log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity
        )
        if err is not None:
            raise err
    batched = log_probs.ndim == 3
    if not batched:
        if log_probs.ndim != 2:
            return _ctc_bad_dims(log_probs, input_lengths, target_lengths)
        # (the targets stay as given: 1-d is torch's concatenated form, sized by the length)
        log_probs = log_probs.unsqueeze(1)
        # (a batch of lengths fails the batch-size checks below, as in torch)
        input_lengths = _lengths(input_lengths, log_probs).reshape(-1)
        target_lengths = _lengths(target_lengths, log_probs).reshape(-1)
    il = _lengths(input_lengths, log_probs)
    tl = _lengths(target_lengths, log_probs)
    for name, x in (("input_lengths", il), ("target_lengths", tl)):
        if x._data.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
    # torch 2.13's order: the dtype, the targets' dims, blank, the lengths' sizes, then each
    # target length (>= 0) and the targets' size, then each input length (>= 0, <= T)
    if log_probs._data.dtype.itemsize < 4 or log_probs._data.dtype.kind != "f":
        # torch's kernel takes float32 and float64 only (not half, bfloat16 or integers)
        raise NotImplementedError(
            f"\"ctc_loss_cpu\" not implemented for '{_tname(log_probs._data.dtype)}'"
        )
    where = "(while checking arguments for ctc_loss_allocate_outputs)"
    twhere = f"for argument #2 'targets' {where}"
    if targets.ndim not in (1, 2):
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor {twhere}"
        )
    T, N, C = log_probs.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    if il.numel() != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.numel() != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    tld = tl._data.reshape(-1)
    tgd = targets._data
    if N and int(tld.min()) < 0:
        raise RuntimeError(
            f"Expected target_lengths to have value at least 0, but got value "
            f"{int(tld[tld < 0][0])} {where}"
        )
    if targets.ndim == 1:
        need = int(tld.sum()) if N else 0
        if tgd.shape[0] != need:
            raise RuntimeError(
                f"Expected tensor to have size {need} at dimension 0, but got size "
                f"{tgd.shape[0]} {twhere}"
            )
    elif tgd.shape[0] != N:
        raise RuntimeError(
            f"Expected tensor to have size {N} at dimension 0, but got size {tgd.shape[0]} {twhere}"
        )
    elif N and tgd.shape[1] < int(tld.max()):
        raise RuntimeError(
            f"Expected tensor to have size at least {int(tld.max())} at dimension 1, but got "
            f"size {tgd.shape[1]} {twhere}"
        )
    ild = il._data.reshape(-1)
    bad = (ild < 0) | (ild > T)
    if bad.any():  # the first bad length, as torch's loop over the batch meets it
        v = int(ild[bad][0])
        edge = "at least 0" if v < 0 else f"at most {T}"
        raise RuntimeError(
            f"Expected input_lengths to have value {edge}, but got value {v} {where}"
        )
    if tgd.dtype.kind != "i":
        targets = targets.long()  # torch accepts float targets as class indices
        tgd = targets._data
    if tgd.size and bool(((tgd < 0) | (tgd >= C)).any()):
        # torch reads out of bounds here; ember refuses
        raise RuntimeError(f"ctc_loss(): target values must be in [0, {C - 1}]")
    nll = _ctc_loss(
        log_probs, targets, il.reshape(-1), tl.reshape(-1), blank=blank, zero_infinity=zero_infinity
    )
    if reduction == "mean":
        den = tl.reshape(-1).clamp_min(1).to(nll.dtype)
        out = (nll / den).mean()
    elif reduction == "sum":
        out = nll.sum()
    else:
        out = nll
    return out if batched or reduction != "none" else out.reshape(())
