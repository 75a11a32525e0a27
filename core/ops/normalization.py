"""Normalization ops: layer_norm, batch_norm, group_norm, instance_norm, rms_norm (torch namespace).

The kernels are fused: one private op per family normalizes, scales and shifts in a few passes
(sums are matrix-vector products with a ones vector, sums of squares and of products are einsums,
batch norm's per-channel ones batches of BLAS dot products; per-channel vectors are laid out along a sample so broadcasting runs long inner loops), with the
statistics in float32 for half inputs and in the input's dtype otherwise. A kernel leaves what its
derivative needs (per-row or per-channel mean and 1/std, never a full-size array) in its ``cache``
option, a fresh list per call, which the node saves by reference: the first-order derivative then
runs on raw arrays from the saved input. Under ``create_graph=True`` the derivative is computed
in ember ops instead, so double backward is exact. Norms keep all names (spec 4.3).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...autograd.grad_mode import _state
from .. import dtype as _dt
from .. import layout as _layout
from ..arg_errors import no_derivative, type_name
from ..kernels.fused_norm import layer_norm_kernels
from ..names import check_weight_dims, keep
from ..registry import backward_names, op
from ..tensor import Tensor, _wrap, number_arg

__all__ = [
    "batch_norm",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "native_batch_norm",
    "native_group_norm",
    "native_layer_norm",
    "rms_norm",
]


# ---------------------------------------------------------------------- array helpers
def _acc(a):
    """The dtype statistics are computed in: float32 for half types, else the input's own."""
    d = a.dtype
    return a if d.itemsize >= 4 and d.kind == "f" else a.astype("float32")


def _is_t(x) -> bool:
    return hasattr(x, "shape")


def _inv(s):
    """The scales (for the mean, for the variance) of sums over rows of ``s`` values: rows of
    none have mean 0 and a NaN variance, so a NaN 1/std (torch's statistics of an empty row)."""
    return (1.0 / s, 1.0 / s) if s else (0.0, math.nan)


_ONES: dict = {}  # (S, dtype) -> a read-only numpy ones vector: a row sum's matvec operand


def _ones(xp, s, dtype):
    """``xp.ones(s, dtype)``, kept for numpy (a layer norm call of the same size reuses it)."""
    if xp is not np:
        return xp.ones(s, dtype)
    key = (s, dtype)
    v = _ONES.get(key)
    if v is None:
        if len(_ONES) >= 64:  # (a bound: sizes seen once do not pile up)
            _ONES.clear()
        v = _ONES[key] = np.ones(s, dtype)
        v.flags.writeable = False
    return v


def _rows_stats(xp, x2, eps):
    """Rows of ``x2`` (R, S) normalized: (xhat, mean (R,), rstd (R,)); xhat is a new array."""
    s = x2.shape[1]
    ones = _ones(xp, s, x2.dtype)
    inv_m, inv_v = _inv(s)
    mean = x2 @ ones
    mean *= inv_m  # (in place on fresh arrays: the same values, fewer allocations)
    xc = x2 - mean[:, None]
    var = xp.einsum("ij,ij->i", xc, xc)
    var *= inv_v
    rstd = 1.0 / xp.sqrt(var + eps)
    xc *= rstd[:, None]
    return xc, mean, rstd, var


def _per_chan(xp, v, l_):
    """A per-channel vector (C,) laid out along a sample's C * L values: multiplying the
    (N, C * L) view by it runs long inner loops (broadcasting (C, 1) over (N, C, L) runs one
    short loop per (n, c) and is ~1.6x slower for 16x16 maps)."""
    return v if l_ == 1 else xp.repeat(v, l_)


def _tiled_rows(a2):
    """A (R, S) array viewed as (R / k, k S) with k the largest divisor of R keeping k S near
    16384: a per-column vector tiled k times then broadcasts with long inner loops. A small
    array (k = R) stays as it is: its one tiled row would copy the vector R times for one use."""
    r, s = a2.shape
    k = max(1, min(r, 16384 // max(s, 1)))
    if k == r:
        return a2, 1
    while r % k:
        k -= 1
    return a2.reshape(r // k, k * s), k


def _tile(xp, v, k):
    """``v`` (S,) repeated ``k`` times: one broadcast copy (xp.tile's Python layers cost more
    than the copy at layer norm's sizes)."""
    if k == 1:
        return v
    t = xp.empty((k, v.shape[0]), v.dtype)
    t[...] = v
    return t.reshape(-1)


def _chan_sum(xp, g3):
    """Sum of (N, C, L) over N and L."""
    return (g3 @ xp.ones(g3.shape[2], g3.dtype)).sum(0)


def _out(a, like):
    """Wrap a gradient array in ``like``'s dtype."""
    if a is None:
        return None
    d = like._data.dtype
    return _wrap(a if a.dtype == d else a.astype(d))


def _bias_out(a):
    """A bias gradient in its accumulation dtype (float32 for a half input): autograd casts it
    to the bias's own dtype, so a float32 bias of a half input is not rounded through half."""
    return None if a is None else _wrap(a)


def _rows(shape, nd):
    """(rows, row size) of an array of ``shape`` seen as rows of its last ``nd`` dims."""
    k = len(shape) - nd
    return math.prod(shape[:k]), math.prod(shape[k:])


def _grad_as(grad, shape, dtype):
    """The output gradient's array reshaped to ``shape``, in the kernel's ``dtype``."""
    g = grad._data.reshape(shape)
    return g if g.dtype == dtype else g.astype(dtype)


def _result(out, input, cache, *stats):
    """A fused kernel's output in the input's dtype and shape; ``stats`` (what its backward
    reuses) appended to ``cache`` when one is given."""
    if cache is not None:
        cache += stats
    return (out if out.dtype == input.dtype else out.astype(input.dtype)).reshape(input.shape)


def _or_0(*params):
    """Optional parameters as the fused kernels take them: 0 for an absent one."""
    return tuple(0 if p is None else p for p in params)


def _stats(input, cache, shape):
    """(mean, rstd) from a kernel's cache, in the input's dtype and ``shape`` (native_*)."""
    d = input._data.dtype
    return tuple(_wrap(a.astype(d, copy=False).reshape(shape)) for a in cache[:2])


# ---------------------------------------------------------------------- layer norm
@op(names=keep, method=False)
def _layer_norm(xp, input, weight, bias, normalized_ndim=1, eps=1e-5, cache=None):
    """Layer norm over the last ``normalized_ndim`` dims (weight/bias: arrays or 0 = absent)."""
    shape = input.shape
    r, s = _rows(shape, normalized_ndim)
    # row-major rows: a transposed 2-d input would reshape to a view and give a transposed
    # result, where torch's is contiguous
    x2 = _layout.row_major(xp, _acc(input)).reshape(r, s)
    fused = layer_norm_kernels(xp, x2.dtype, s)
    if fused is not None:  # cupy: one launch (core/kernels/fused_norm.py)
        w, b = (_vector(xp, p, s, x2.dtype) for p in (weight, bias))
        out, mean, rstd = fused.forward(xp.ascontiguousarray(x2), w, b, eps)
        return _result(out, input, cache, mean, rstd)
    out, mean, rstd, _ = _rows_stats(xp, x2, eps)
    # the affine in place on the normalized copy: only mean and 1/std are kept for backward
    if _is_t(weight) or _is_t(bias):
        o2, k = _tiled_rows(out)
        if _is_t(weight):
            o2 *= _tile(xp, weight.reshape(s).astype(out.dtype, copy=False), k)
        if _is_t(bias):
            o2 += _tile(xp, bias.reshape(s).astype(out.dtype, copy=False), k)
    return _result(out, input, cache, mean, rstd)


@_layer_norm.vjp
def _(grad, input, weight, normalized_ndim, eps, cache, needs):
    if _state.enabled:  # create_graph: a differentiable derivative
        return _ln_composite(grad, input, weight, normalized_ndim, eps, needs)
    from ..device import array_module

    x = input._data
    xp = array_module(x)
    shape = x.shape
    r, s = _rows(shape, normalized_ndim)
    x2 = _acc(x).reshape(r, s)
    if cache:
        mean, rstd = cache
    else:
        _, mean, rstd, _ = _rows_stats(xp, x2, eps)
    fused = layer_norm_kernels(xp, x2.dtype, s)
    if fused is not None:
        return _ln_fused_grads(
            fused, xp, grad, input, weight, normalized_ndim, x2, mean, rstd, needs
        )
    if _offset(xp, mean, rstd):
        x2 = x2 - mean[:, None]
        mean = xp.zeros_like(mean)
    g2 = _grad_as(grad, (r, s), x2.dtype)
    has_w = isinstance(weight, Tensor)
    w = weight._data.reshape(s).astype(x2.dtype, copy=False) if has_w else xp.ones(s, x2.dtype)
    dx = dw = db = None
    if needs[2]:
        db = (xp.ones(r, g2.dtype) @ g2).reshape(shape[len(shape) - normalized_ndim :])
    if not (needs[0] or needs[1]):
        return None, None, _out(db, input)
    # xhat = (x - mean) rstd is never materialized: with P = g x,
    # sum_i g xhat = rstd @ P - (mean rstd) @ g and sum_j g w xhat = rstd (P @ w - mean (g @ w))
    # (the subtractions lose ~eps |mean| / std relative accuracy: linear, unlike E[x^2] - mean^2)
    p = g2 * x2
    if needs[1]:
        dw = (rstd @ p - (mean * rstd) @ g2).reshape(weight._data.shape)
    if needs[0]:
        inv = _inv(s)[1]
        s1 = g2 @ w  # sum_j g w
        c = rstd * (p @ w - mean * s1) * inv  # mean_j(g w xhat)
        # dx = rstd (g w - mean_j(g w) - xhat c)
        #    = g w rstd - x rstd^2 c + (mean rstd^2 c - rstd s1 / s)
        k = rstd * rstd * c
        if has_w:
            g2t, kt = _tiled_rows(g2)
            dx = (g2t * _tile(xp, w, kt)).reshape(r, s)
            dx *= rstd[:, None]
        else:
            dx = g2 * rstd[:, None]
        xp.multiply(x2, k[:, None], out=p)  # P's buffer reused for x k
        dx -= p
        dx += (mean * k - rstd * s1 * inv)[:, None]
        dx = dx.reshape(shape)
    return _out(dx, input), _out(dw, weight) if has_w else None, _out(db, input)


def _vector(xp, param, s, dtype):
    """A layer norm parameter as the fused kernels take it: contiguous (S,) of ``dtype``, or
    None when absent."""
    if not _is_t(param):
        return None
    return xp.ascontiguousarray(param.reshape(s).astype(dtype, copy=False))


def _ln_fused_grads(fused, xp, grad, input, weight, nd, x2, mean, rstd, needs):
    """Layer norm's (input, weight, bias) gradients from the fused kernels."""
    r, s = x2.shape
    x2 = xp.ascontiguousarray(x2)
    g2 = xp.ascontiguousarray(_grad_as(grad, (r, s), x2.dtype))
    has_w = isinstance(weight, Tensor)
    dx = dw = db = None
    if needs[0]:
        w = _vector(xp, weight._data, s, x2.dtype) if has_w else None
        dx = fused.input_grad(x2, g2, w, mean, rstd).reshape(input.shape)
    if needs[1] or needs[2]:
        pshape = input.shape[input.dim() - nd :]
        dw, db = (a.reshape(pshape) for a in fused.param_grads(x2, g2, mean, rstd))
    return (
        _out(dx, input),
        _out(dw, weight) if has_w and needs[1] else None,
        _out(db, input) if needs[2] else None,
    )


def _ln_composite(grad, input, weight, nd, eps, needs):
    dims = tuple(range(input.dim() - nd, input.dim()))
    x = input
    mean = x.mean(dims, keepdim=True)
    xc = x - mean
    rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = xc * rstd
    has_w = isinstance(weight, Tensor)
    bdims = tuple(range(input.dim() - nd))
    dx = dw = db = None
    if needs[0]:
        gw = grad * weight if has_w else grad
        dx = (gw - gw.mean(dims, keepdim=True) - xhat * (gw * xhat).mean(dims, keepdim=True)) * rstd
    if needs[1]:
        dw = (grad * xhat).sum(bdims) if bdims else grad * xhat
    if needs[2]:
        db = grad.sum(bdims) if bdims else grad
    return dx, dw, db


def _shape_str(s) -> str:
    return "[" + ", ".join(str(int(k)) for k in s) + "]"


def _check_param_shape(name, p, ns) -> None:
    if p is not None and tuple(p.shape) != ns:
        raise RuntimeError(
            f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
            f"{_shape_str(p.shape)} and normalized_shape = {_shape_str(ns)}"
        )


def _check_ns_params(ns: tuple, **params) -> None:
    """torch's first layer / rms norm checks: a non-empty normalized_shape, then the shapes of
    the parameters, all before the input's shape."""
    if not ns:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = []"
        )
    for name, p in params.items():
        _check_param_shape(name, p, ns)


def _ln_passes(input, ns: tuple, weight, bias) -> bool:
    """Whether a layer norm call surely passes _check_ln's checks (the common call: an unnamed
    floating input, parameters of its dtype and of shape ``ns``), in a few attribute reads."""
    try:
        a = input._data
        n = len(ns)
        d = a.dtype
        return bool(
            n
            and input._names is None
            and d.kind == "f"
            and a.ndim >= n
            and a.shape[a.ndim - n :] == ns
            and (weight is None or (weight._data.shape == ns and weight._data.dtype == d))
            and (bias is None or (bias._data.shape == ns and bias._data.dtype == d))
        )
    except Exception:  # noqa: BLE001 - anything odd: _check_ln's checks raise torch's error
        return False


def _check_ln(input, normalized_shape, weight, bias):
    ns = tuple(normalized_shape)
    if _ln_passes(input, ns, weight, bias):
        return len(ns)
    _check_ns_params(ns, weight=weight, bias=bias)
    shape = tuple(input.shape)
    if len(shape) < len(ns) or shape[len(shape) - len(ns) :] != ns:
        raise RuntimeError(
            f"Given normalized_shape={_shape_str(ns)}, expected input with shape "
            f"[*, {', '.join(str(k) for k in ns)}], but got input of size{_shape_str(shape)}"
        )
    _check_param_dtype(input, weight, bias, kernel="LayerNormKernelImpl")
    if input._names is not None:
        _check_param_names("layer_norm", input, "normalized", len(ns), weight, bias)
    return len(ns)


def _check_float(input, kernel):
    if input._data.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_dt.scalar_name(input.dtype)}'"
        )


def _check_param_dtype(input, *params, kernel: str | None = None):
    """torch's dtype rules for norm parameters (weight, bias and batch norm's running stats):
    the input's dtype, or float32 beside a half / bfloat16 input (mixed precision); each
    violation with torch's message. ``kernel``: layer / group norm's float-only check, which
    torch runs between its mixed-dtype check and its same-dtype one."""
    d = input._data.dtype
    params = [p for p in params if p is not None]
    if params and params[0]._data.dtype != d:  # the mixed path: parameters first, then input
        if any(p._data.dtype.name != "float32" for p in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if d.itemsize != 2 or d.kind not in "fV":  # float16 / bfloat16 only
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    if kernel is not None:
        _check_float(input, kernel)
    for p in params[1:]:
        if p._data.dtype != d:
            raise RuntimeError(
                f"expected scalar type {_dt.scalar_name(_dt._FROM_NP[d])} but found "
                f"{_dt.scalar_name(p.dtype)}"
            )


def _check_param_names(fname, input, what, nd, *params) -> None:
    """Spec 4.3: a named parameter names the dims it applies to (``what``: the channel dim 1
    when ``nd`` is 0, else the trailing ``nd`` normalized dims); the input's names must agree.
    ``params``: weight, bias, running_mean, running_var (a prefix of them), in that order.
    Runs only when the input is named (the unnamed path pays one attribute test)."""
    xn = input._names
    if xn is None or len(xn) < 2 and not nd:
        return
    dims = (1,) if not nd else tuple(range(len(xn) - nd, len(xn)))
    # every caller passes its parameters in this order: the error names the one that clashes
    for pname, p in zip(_PARAM_ORDER, params):
        if p is not None and p._names is not None:
            check_weight_dims(fname, what, xn, dims, p._names, param=pname)


_PARAM_ORDER = ("weight", "bias", "running_mean", "running_var")


def _check_channel_params(c, k, weight, bias, running_mean, running_var) -> None:
    """Each given per-channel tensor holds ``c`` values; torch's message counts both sides ``k``
    times (instance norm runs batch norm on the batch folded into the channels: k = N)."""
    for nm, t in (  # torch's order
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{nm} should contain {c * k} elements not {t.numel() * k}")


def _norm_shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
    cudnn_enable: bool = True,
) -> Tensor:
    """Layer normalization over the trailing ``normalized_shape`` dims (torch.layer_norm)."""
    nd = _check_ln(input, _norm_shape(normalized_shape), weight, bias)
    w = 0 if weight is None else weight  # (_or_0 inline: this is every LayerNorm's call)
    return _layer_norm(input, w, 0 if bias is None else bias, nd, eps, [])


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd) of layer norm; mean and rstd have the input's shape with the
    normalized dims set to 1 (torch.native_layer_norm)."""
    ns = _norm_shape(normalized_shape)
    nd = _check_ln(input, ns, weight, bias)
    cache: list = []
    out = _layer_norm(input, *_or_0(weight, bias), nd, eps, cache)
    st = tuple(input.shape[: input.dim() - nd]) + (1,) * nd
    return (out, *_stats(input, cache, st))


# ---------------------------------------------------------------------- batch norm (training)
def _bn_view(x):
    n, c = x.shape[0], x.shape[1]
    l_ = 1
    for k in x.shape[2:]:
        l_ *= k
    return x.reshape(n, c, l_)


def _chan_dot(xp, a3, b3):
    """Per-channel sum over N and L of a3 * b3 (N, C, L): one batch of BLAS dot products (faster
    than einsum's loop: 1.3x for (32, 32, 1024) float32, 1.8x float64)."""
    n, c = a3.shape[:2]
    return xp.matmul(a3[:, :, None, :], b3[:, :, :, None]).reshape(n, c).sum(0)


def _chan_moments(xp, x3):
    """Per-channel (mean, biased var, centred x or None) of x3 (N, C, L) over N and L. Where
    the mean is small against the spread: E[x^2] - mean^2 from two BLAS-speed reductions, and
    no centred copy. Elsewhere (the subtraction would cancel), and always on cupy (no host sync):
    the two-pass formula, whose centred copy the caller then uses for accuracy."""
    n, _, l_ = x3.shape
    inv = 1.0 / (n * l_)
    mean = (x3 @ xp.ones(l_, x3.dtype)).sum(0) * inv
    if getattr(xp, "__name__", "") != "cupy":
        var = _chan_dot(xp, x3, x3) * inv - mean * mean
        if bool((var * 2.0 >= mean * mean).all()):
            return mean, var, None
    xc = x3 - mean[:, None]
    return mean, _chan_dot(xp, xc, xc) * inv, xc


def _offset(xp, mean, rstd) -> bool:
    """Whether some mean is large against its spread (|mean| > 1.5 std): then x - mean is
    formed explicitly, as sums like sum(g x) - mean sum(g) would lose accuracy."""
    if getattr(xp, "__name__", "") == "cupy":
        return True
    return mean.size > 0 and bool((xp.abs(mean) * rstd > 1.5).any())


@op(names=keep, method=False)
def _batch_norm_train(xp, input, weight, bias, eps=1e-5, cache=None):
    """Batch norm with the batch's statistics (over every dim but dim 1): out = x * scale +
    shift with per-channel scale = weight / std and shift = bias - mean * scale."""
    x3 = _bn_view(_acc(input))
    mean, var, xc = _chan_moments(xp, x3)
    rstd = 1.0 / xp.sqrt(var + eps)
    scale = rstd * weight.astype(rstd.dtype, copy=False) if _is_t(weight) else rstd
    if xc is None:
        shift = -mean * scale
    else:  # already centred
        x3, shift = xc, xp.zeros_like(scale)
    if _is_t(bias):
        shift += bias.astype(rstd.dtype, copy=False)
    n, c, l_ = x3.shape
    x2 = x3.reshape(n, c * l_)
    out = x2 * _per_chan(xp, scale, l_)
    out += _per_chan(xp, shift, l_)
    return _result(out, input, cache, mean, rstd, var)


def _cl_grad(grads, input):
    """The input gradient (first of ``grads``) laid out channels_last when ``input`` is."""
    fmt = _layout.cl_format(input)
    if fmt is None or grads[0] is None:
        return grads
    return (_layout.follow_format(grads[0], fmt), *grads[1:])


@_batch_norm_train.vjp
def _(grad, input, weight, eps, cache, needs):
    return _cl_grad(_bn_train_grads(grad, input, weight, eps, cache, needs), input)


def _bn_train_grads(grad, input, weight, eps, cache, needs):
    if _state.enabled:
        return _bn_composite(grad, input, weight, eps, needs)
    from ..device import array_module

    x = input._data
    xp = array_module(x)
    x3 = _bn_view(_acc(x))
    if cache:
        mean, rstd, _ = cache
    else:
        mean, var, _ = _chan_moments(xp, x3)
        rstd = 1.0 / xp.sqrt(var + eps)
    n, c, l_ = x3.shape
    if _offset(xp, mean, rstd):
        x3 = (x3.reshape(n, c * l_) - _per_chan(xp, mean, l_)).reshape(n, c, l_)
        mean = xp.zeros_like(mean)
    g3 = _bn_view(grad._data)
    if g3.dtype != x3.dtype:
        g3 = g3.astype(x3.dtype)
    n, _, l_ = g3.shape
    # sums of g and of g * xhat, with xhat = (x - mean) rstd never materialized
    db = _chan_sum(xp, g3)
    dw = (_chan_dot(xp, g3, x3) - mean * db) * rstd
    dx = None
    if needs[0]:
        inv = 1.0 / (n * l_)
        k1 = (
            rstd * weight._data.astype(rstd.dtype, copy=False)
            if isinstance(weight, Tensor)
            else rstd
        )
        kx = k1 * dw * rstd * inv  # dx = k1 g - kx (x - mean) - k1 db / cnt
        c = k1.shape[0]
        dx = g3.reshape(n, c * l_) * _per_chan(xp, k1, l_)
        dx -= x3.reshape(n, c * l_) * _per_chan(xp, kx, l_)
        dx += _per_chan(xp, kx * mean - k1 * db * inv, l_)
        dx = dx.reshape(x.shape)
    return (
        _out(dx, input),
        _out(dw, weight) if needs[1] else None,
        _bias_out(db) if needs[2] else None,
    )


def _bn_composite(grad, input, weight, eps, needs):
    nd = input.dim()
    dims = (0,) + tuple(range(2, nd))
    cshape = (-1,) + (1,) * (nd - 2)
    mean = input.mean(dims, keepdim=True)
    xc = input - mean
    rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = xc * rstd
    has_w = isinstance(weight, Tensor)
    dx = dw = db = None
    if needs[0]:
        gw = grad * weight.reshape(cshape) if has_w else grad
        dx = (gw - gw.mean(dims, keepdim=True) - xhat * (gw * xhat).mean(dims, keepdim=True)) * rstd
    if needs[1]:
        dw = (grad * xhat).sum(dims)
    if needs[2]:
        db = grad.sum(dims)
    return dx, dw, db


def _size_str(shape) -> str:
    return f"torch.Size({list(shape)})"


def _check_bn(input, running_mean, running_var, weight, bias, training, momentum=0.1) -> bool:
    """torch's checks, in its order; True: an empty input, which torch hands back early."""
    shape = input._data.shape  # a plain tuple (Tensor.shape is a Size: slower to index)
    if len(shape) < 2:
        _bn_rank_error(shape, running_mean, running_var, weight, bias, training)
        return True
    if training:
        prod = shape[0]
        for k in shape[2:]:
            prod *= k
        if prod == 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{_size_str(shape)}"
            )
    if type(training) is not bool or type(momentum) is not float:
        _check_bn_scalars("batch_norm", training, momentum)
    _no_stats_grad(input, running_mean, running_var)  # autograd's check: before the kernel's
    if not input._data.size:
        _empty_params(weight, bias)
        return True
    _check_channel_params(shape[1], 1, weight, bias, running_mean, running_var)
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")
    if training and (running_mean is None) != (running_var is None):
        # half a pair of running statistics cannot be updated consistently
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    _check_float(input, "batch_norm")
    _check_param_dtype(input, weight, bias, running_mean, running_var)
    for t in (running_mean, running_var):  # (the kernel reads them as vectors)
        if t is not None and t._data.ndim != 1:
            raise RuntimeError(f"TensorAccessor expected 1 dims but tensor has {t._data.ndim}")
    if input._names is not None:
        _check_param_names(
            "batch_norm", input, "channel", 0, weight, bias, running_mean, running_var
        )
    return False


def _check_bn_scalars(fn: str, training, momentum, eps=1e-5) -> None:
    """torch's parser errors for batch / instance norm's bool (position 6) and float (7, 8)
    arguments."""
    if type(training) is not bool:
        name = "training" if fn == "batch_norm" else "use_input_stats"
        raise TypeError(
            f"{fn}(): argument '{name}' (position 6) must be bool, not {type_name(training)}"
        )
    number_arg(momentum, fn, "momentum", 7, "float")
    number_arg(eps, fn, "eps", 8, "float")


def _bn_rank_error(shape, running_mean, running_var, weight, bias, training) -> None:
    """torch's batch norm of a 0-d or 1-d input: F.batch_norm's batch-size check reads dim 0
    (in training), then the kernel counts 0 channels (an empty input returns early, yet
    selects its weight's first value)."""
    if training:
        shape[0]
        if shape[0] == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{_size_str(shape)}"
            )
    if 0 in shape:
        _empty_params(weight, bias)
        return
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")
    _check_channel_params(0, 1, weight, bias, running_mean, running_var)
    if not shape:
        raise RuntimeError(
            "SmallVector unable to grow. Requested capacity (18446744073709551615) is larger "
            "than maximum value for size type (4294967295)"
        )
    _dim1_error(1)


def _empty_params(weight, bias) -> None:
    """torch's batch norm of an empty input returns early, scaled by ``weight[0]`` and shifted
    by ``bias[0]``: an empty parameter's select error."""
    for t in (weight, bias):
        if t is not None and not t._data.size:
            raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")


def _empty_bn(input, weight, bias):
    """The early return of :func:`_empty_params` (zero gradients for the parameters)."""
    out = input * 1
    if weight is not None:
        out = out * weight.reshape(-1)[0]
    if bias is not None:
        out = out + bias.reshape(-1)[0]
    return out


def _empty_instance_norm(input, running_mean, running_var, weight, bias, use_input_stats):
    """torch's instance norm of an empty input: batch norm of the (1, N C, ...) view returns
    early (:func:`_empty_bn`, of the parameters repeated N times); in training each repeated
    running statistic is then viewed as (N, C) and its mean over N (NaN for N = 0) copied back."""
    n, c = input.shape[0], input.shape[1]
    for t in (weight, bias):
        if t is not None and not (n and t._data.size):
            raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
    if use_input_stats:
        for t in (running_mean, running_var):
            if t is not None and n * t._data.size != n * c:
                raise RuntimeError(
                    f"shape '[{n}, {c}]' is invalid for input of size {n * t._data.size}"
                )
            if t is not None and not n:  # (the (C,) mean is copied in, broadcasting)
                if t._data.size != c and c != 1:
                    raise RuntimeError(
                        f"The size of tensor a ({t._data.size}) must match the size of tensor b "
                        f"({c}) at non-singleton dimension 0"
                    )
                t._data[...] = math.nan
                t._ver[0] += 1
    return _empty_bn(input, weight, bias)


def _dim1_error(ndim):
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got 1)")


def _update_running(running, stat, momentum):
    """running = (1 - momentum) running + momentum stat, in place (a version bump, like torch)."""
    a = running._data
    a *= 1.0 - momentum
    a += (stat * momentum).astype(a.dtype, copy=False)
    running._ver[0] += 1


@op(names=keep, method=False)
def _batch_norm_eval(xp, input, running_mean, running_var, weight, bias, eps=1e-5):
    """Batch norm with given statistics: x * scale + shift per channel (weight/bias: 0 =
    absent); half inputs are computed in float32."""
    x = _acc(input)
    dt = x.dtype
    scale = 1.0 / xp.sqrt(running_var.astype(dt, copy=False) + eps)
    if _is_t(weight):
        scale = scale * weight.astype(dt, copy=False)
    shift = -running_mean.astype(dt, copy=False) * scale
    if _is_t(bias):
        shift += bias.astype(dt, copy=False)
    x2 = _bn_view(x)
    n, c, l_ = x2.shape
    x2 = x2.reshape(n, c * l_)
    out = x2 * _per_chan(xp, scale, l_)
    out += _per_chan(xp, shift, l_)
    out = out.reshape(input.shape)
    return out if out.dtype == input.dtype else out.astype(input.dtype)


@_batch_norm_eval.vjp
def _(grad, input, running_mean, running_var, weight, eps, needs):
    return _cl_grad(
        _bn_eval_grads(grad, input, running_mean, running_var, weight, eps, needs), input
    )


def _bn_eval_grads(grad, input, running_mean, running_var, weight, eps, needs):
    if not _state.enabled:  # first order (e.g. a frozen, eval-mode BatchNorm in training)
        return _bn_eval_grad_fast(grad, input, running_mean, running_var, weight, eps, needs)
    # create_graph: written in ember ops, differentiable again
    nd = input.dim()
    dims = (0,) + tuple(range(2, nd))
    cshape = (-1,) + (1,) * (nd - 2)
    has_w = isinstance(weight, Tensor)
    rstd = (running_var + eps).rsqrt()
    scale = rstd * weight if has_w else rstd
    dx = dw = db = None
    if needs[0]:
        dx = grad * scale.reshape(cshape)
    if needs[3]:
        dw = (grad * (input - running_mean.reshape(cshape))).sum(dims) * rstd
    if needs[4]:
        db = grad.sum(dims)
    return dx, None, None, dw, db


def _bn_eval_grad_fast(grad, input, running_mean, running_var, weight, eps, needs):
    from ..device import array_module

    x = input._data
    xp = array_module(x)
    x3 = _bn_view(_acc(x))
    n, c, l_ = x3.shape
    dt = x3.dtype
    g3 = _bn_view(grad._data)
    if g3.dtype != dt:
        g3 = g3.astype(dt)
    rm = running_mean._data.astype(dt, copy=False)
    rstd = 1.0 / xp.sqrt(running_var._data.astype(dt, copy=False) + eps)
    has_w = isinstance(weight, Tensor)
    scale = rstd * weight._data.astype(dt, copy=False) if has_w else rstd
    dx = dw = db = None
    if needs[0]:
        dx = (g3.reshape(n, c * l_) * _per_chan(xp, scale, l_)).reshape(x.shape)
    if needs[3] or needs[4]:
        gs = _chan_sum(xp, g3)
        if needs[3]:
            dw = (xp.einsum("ncl,ncl->c", g3, x3) - rm * gs) * rstd  # sum of g (x - mean) rstd
        if needs[4]:
            db = gs
    return (
        _out(dx, input),
        None,
        None,
        _out(dw, weight) if has_w else None,
        _bias_out(db),
    )


def _no_stats_grad(input, running_mean, running_var):
    """torch's batch norm kernel has no derivative for the running statistics (an empty input
    takes another path, which does not check)."""
    if input._data.size:
        no_derivative("native_batch_norm", "running_mean", running_mean)
        no_derivative("native_batch_norm", "running_var", running_var)


def _bn_eval(input, running_mean, running_var, weight, bias, eps):
    """Batch norm with the running statistics (differentiable in input, weight and bias)."""
    return _batch_norm_eval(
        input,
        running_mean,
        running_var,
        0 if weight is None else weight,
        0 if bias is None else bias,
        eps,
    )


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """The shared body of torch.batch_norm and F.batch_norm; returns (out, cache)."""
    if _check_bn(input, running_mean, running_var, weight, bias, training, momentum):
        return _empty_bn(input, weight, bias), None
    # a channels_last input gives a channels_last output (one copy; contiguous: a flags check)
    fmt = _layout.cl_format(input)
    if not training:
        out = _bn_eval(input, running_mean, running_var, weight, bias, eps)
        return (out if fmt is None else _layout.follow_format(out, fmt)), None
    if input._data.size == 0:
        return _empty_norm(input, weight, bias), None
    cache: list = []
    out = _batch_norm_train(input, *_or_0(weight, bias), eps, cache)
    if running_mean is not None or running_var is not None:
        mean, _, var = cache
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            n = input._data.size // input.shape[1]
            _update_running(running_var, var * (n / max(n - 1, 1)), momentum)
    return (out if fmt is None else _layout.follow_format(out, fmt)), cache


def _empty_norm(input, weight, bias):
    """Batch (or instance) norm of an empty input: an empty output, zero parameter gradients,
    running statistics untouched (torch's)."""
    cshape = (-1,) + (1,) * (input.dim() - 2)
    out = input * 1.0
    if weight is not None:
        out = out * weight.reshape(cshape)
    if bias is not None:
        out = out + bias.reshape(cshape)
    return out


def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool = True,
) -> Tensor:
    """Batch normalization over every dim but dim 1 (torch.batch_norm's argument order)."""
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)[0]


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd) of batch norm (torch.native_batch_norm); the saved
    statistics are empty in evaluation mode."""
    out, cache = _batch_norm(
        input, running_mean, running_var, weight, bias, training, momentum, eps
    )
    from .creation import empty

    if cache is None:
        return out, empty(0, dtype=input.dtype), empty(0, dtype=input.dtype)
    d = input._data.dtype
    return out, _wrap(cache[0].astype(d, copy=False)), _wrap(cache[1].astype(d, copy=False))


# ---------------------------------------------------------------------- group norm
def _gn_views(shape, g):
    n, c, l_ = shape[0], shape[1], math.prod(shape[2:])
    return n, c, l_, (n * g, (c // g) * l_)


def _rows_moments(xp, x2):
    """(mean, biased var, centred x or None) of each row of x2 (R, S), like _chan_moments."""
    inv, inv_v = _inv(x2.shape[1])
    mean = (x2 @ xp.ones(x2.shape[1], x2.dtype)) * inv
    # (empty rows take the two-pass branch: their variance is NaN, as torch's)
    if getattr(xp, "__name__", "") != "cupy" and x2.shape[1]:
        var = xp.einsum("ij,ij->i", x2, x2) * inv - mean * mean
        if bool((var * 2.0 >= mean * mean).all()):
            return mean, var, None
    xc = x2 - mean[:, None]
    return mean, xp.einsum("ij,ij->i", xc, xc) * inv_v, xc


@op(names=keep, method=False)
def _group_norm(xp, input, weight, bias, num_groups=1, eps=1e-5, cache=None):
    """Group norm: statistics per (sample, group of channels), affine per channel, applied as
    out = x * scale + shift with per-(sample, channel) scale and shift."""
    n, c, l_, rows = _gn_views(input.shape, num_groups)
    x3 = _acc(input).reshape(n, c, l_)
    mean, var, xc = _rows_moments(xp, x3.reshape(rows))
    rstd = 1.0 / xp.sqrt(var + eps)
    cg = c // num_groups if num_groups else 0
    scale = xp.repeat(rstd.reshape(n, num_groups), cg, axis=1)  # (n, c)
    if _is_t(weight):
        scale *= weight.astype(scale.dtype, copy=False)
    if xc is None:
        shift = -xp.repeat(mean.reshape(n, num_groups), cg, axis=1) * scale
    else:  # already centred
        x3, shift = xc.reshape(n, c, l_), xp.zeros_like(scale)
    if _is_t(bias):
        shift += bias.astype(shift.dtype, copy=False)
    out = x3 * scale[:, :, None]
    out += shift[:, :, None]
    # channels_last in, channels_last out; any other permuted input gives a contiguous result
    return _layout.follow_array(xp, _result(out, input, cache, mean, rstd, var), input)


@_group_norm.vjp
def _(grad, input, weight, num_groups, eps, cache, needs):
    if _state.enabled:
        return _gn_composite(grad, input, weight, num_groups, eps, needs)
    from ..device import array_module

    x = input._data
    xp = array_module(x)
    n, c, l_, rows = _gn_views(x.shape, num_groups)
    x3 = _acc(x).reshape(n, c, l_)
    if cache:
        mean, rstd, _ = cache
    else:
        mean, var, _ = _rows_moments(xp, x3.reshape(rows))
        rstd = 1.0 / xp.sqrt(var + eps)
    if _offset(xp, mean, rstd):
        x3 = (x3.reshape(rows) - mean[:, None]).reshape(n, c, l_)
        mean = xp.zeros_like(mean)
    g3 = _grad_as(grad, (n, c, l_), x3.dtype)
    G = num_groups
    cg = c // G
    # per (sample, channel) sums of g and g x; xhat = (x - mean) rstd is never materialized
    sg = g3 @ xp.ones(l_, g3.dtype)
    sgx = xp.einsum("ncl,ncl->nc", g3, x3)
    m_c = xp.repeat(mean.reshape(n, G), cg, axis=1)
    r_c = xp.repeat(rstd.reshape(n, G), cg, axis=1)
    has_w = isinstance(weight, Tensor)
    dw = (r_c * (sgx - m_c * sg)).sum(0) if needs[1] else None
    db = sg.sum(0) if needs[2] else None
    dx = None
    if needs[0]:
        w = weight._data.astype(g3.dtype, copy=False) if has_w else None
        inv = _inv(cg * l_)[1]
        sgw = sg * w if has_w else sg
        sgxw = sgx * w if has_w else sgx
        r, m = rstd.reshape(n, G), mean.reshape(n, G)
        a = sgw.reshape(n, G, cg).sum(2) * inv  # mean of g w over the group
        cc = r * (sgxw.reshape(n, G, cg).sum(2) - m * sgw.reshape(n, G, cg).sum(2)) * inv
        k = r * r * cc
        # dx = r (g w - a - xhat cc) = g (w r) - x k + (m k - r a), per (sample, channel)
        coef_g = r_c * w if has_w else r_c
        coef_x = xp.repeat(k, cg, axis=1)
        const = xp.repeat(m * k - r * a, cg, axis=1)
        dx = g3 * coef_g[:, :, None]
        dx -= x3 * coef_x[:, :, None]
        dx += const[:, :, None]
        dx = dx.reshape(x.shape)
    return _out(dx, input), _out(dw, weight) if needs[1] else None, _bias_out(db)


def _gn_composite(grad, input, weight, g, eps, needs):
    shape = tuple(input.shape)
    n = shape[0]
    nd = len(shape)
    cshape = (-1,) + (1,) * (nd - 2)
    x = input.reshape(n, g, -1)
    mean = x.mean(2, keepdim=True)
    xc = x - mean
    rstd = ((xc * xc).mean(2, keepdim=True) + eps).rsqrt()
    xhat = (xc * rstd).reshape(shape)
    has_w = isinstance(weight, Tensor)
    dims = (0,) + tuple(range(2, nd))
    dx = dw = db = None
    if needs[0]:
        gw = (grad * weight.reshape(cshape) if has_w else grad).reshape(n, g, -1)
        xh = xhat.reshape(n, g, -1)
        dx = (gw - gw.mean(2, keepdim=True) - xh * (gw * xh).mean(2, keepdim=True)) * rstd
        dx = dx.reshape(shape)
    if needs[1]:
        dw = (grad * xhat).sum(dims)
    if needs[2]:
        db = grad.sum(dims)
    return dx, dw, db


def _check_gn(input, num_groups, weight, bias):
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {len(shape)}"
        )
    c = shape[1]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {_shape_str(shape)} and num_groups={num_groups}"
        )
    for nm, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {nm} to be a vector of size equal to the number of channels in input, "
                f"but got {nm} of shape {_shape_str(t.shape)} and input of shape "
                f"{_shape_str(shape)}"
            )
    _check_param_dtype(input, weight, bias, kernel="GroupNormKernelImpl")
    if input._names is not None:
        _check_param_names("group_norm", input, "channel", 0, weight, bias)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
    cudnn_enabled: bool = True,
) -> Tensor:
    """Group normalization (torch.group_norm)."""
    _check_gn(input, num_groups, weight, bias)
    return _group_norm(input, *_or_0(weight, bias), num_groups, eps, [])


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) of group norm; mean and rstd have shape (N, group)."""
    _check_gn(input, group, weight, bias)
    cache: list = []
    out = _group_norm(input, *_or_0(weight, bias), group, eps, cache)
    return (out, *_stats(input, cache, (N, group)))


# ---------------------------------------------------------------------- instance norm
def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    """Instance norm = group norm with one group per channel; running statistics (if given) are
    updated with the batch average of the per-instance statistics, like torch."""
    shape = tuple(input.shape)
    n, c = shape[0], shape[1]
    if input._names is not None:
        _check_param_names(
            "instance_norm", input, "channel", 0, weight, bias, running_mean, running_var
        )
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    if not input._data.size:
        return _empty_instance_norm(input, running_mean, running_var, weight, bias, use_input_stats)
    _check_channel_params(c, n, weight, bias, running_mean, running_var)
    _no_stats_grad(input, running_mean, running_var)
    if not use_input_stats:
        return _bn_eval(input, running_mean, running_var, weight, bias, eps)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    _check_float(input, "batch_norm")
    _check_param_dtype(input, weight, bias)
    if input._data.size == 0:  # torch runs batch norm on the (1, N C, ...) view
        return _empty_norm(input, weight, bias)
    cache: list = []
    # torch normalizes a contiguous copy (a channels_last input gives a contiguous result)
    out = _group_norm(input, *_or_0(weight, bias), c, eps, cache).contiguous()
    if running_mean is not None or running_var is not None:
        mean, _, var = cache
        l_ = input._data.size // max(n * c, 1)
        if running_mean is not None:
            _update_running(running_mean, mean.reshape(n, c).mean(0), momentum)
        if running_var is not None:
            unb = var.reshape(n, c).mean(0) * (l_ / max(l_ - 1, 1))
            _update_running(running_var, unb, momentum)
    return out


def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool = True,
) -> Tensor:
    """Instance normalization (torch.instance_norm's argument order)."""
    return _instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


# ---------------------------------------------------------------------- rms norm
# rms_norm's default eps: torch.finfo(dtype).eps of the dtype it computes in, so float16 and
# bfloat16 inputs (computed in float32) take float32's, not their own much larger one
_EPS = {
    "float64": 2.220446049250313e-16,
    "float32": 1.1920928955078125e-07,
}


def _default_eps(np_dtype) -> float:
    return _EPS.get(np_dtype.name, _EPS["float32"])


@op(names=keep, method=False)
def _rms_norm(xp, input, weight, normalized_ndim=1, eps=None, cache=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last ``normalized_ndim`` dims."""
    shape = input.shape
    r, s = _rows(shape, normalized_ndim)
    x2 = _acc(input).reshape(r, s)
    if eps is None:
        eps = _default_eps(input.dtype)
    ms = xp.einsum("ij,ij->i", x2, x2) * _inv(s)[1]
    rr = 1.0 / xp.sqrt(ms + eps)
    xhat = x2 * rr[:, None]
    out = xhat * weight.reshape(s).astype(xhat.dtype, copy=False) if _is_t(weight) else xhat
    if cache is not None:
        cache += (rr, xhat)
    if out.dtype != input.dtype:
        out = out.astype(input.dtype)
    elif out is xhat:
        out = out.copy()
    return out.reshape(shape)


@_rms_norm.vjp
def _(grad, input, weight, normalized_ndim, eps, cache, needs):
    if _state.enabled:
        return _rms_composite(grad, input, weight, normalized_ndim, eps, needs)
    from ..device import array_module

    x = input._data
    xp = array_module(x)
    shape = x.shape
    r, s = _rows(shape, normalized_ndim)
    if cache:
        rr, xhat = cache
    else:
        cache2: list = []
        _rms_norm.op.kernel(xp, x, 0, normalized_ndim, eps, cache2)
        rr, xhat = cache2
    g2 = _grad_as(grad, (r, s), xhat.dtype)
    has_w = isinstance(weight, Tensor)
    dx = dw = None
    if needs[1]:
        dw = xp.einsum("ij,ij->j", g2, xhat).reshape(weight._data.shape)
    if needs[0]:
        gw = g2 * weight._data.reshape(s).astype(g2.dtype, copy=False) if has_w else g2.copy()
        # d/dx [x rr] = rr (gw - xhat mean(gw xhat))
        s2 = xp.einsum("ij,ij->i", gw, xhat) * _inv(s)[1]
        gw -= xhat * s2[:, None]
        gw *= rr[:, None]
        dx = gw.reshape(shape)
    return _out(dx, input), _out(dw, weight) if has_w else None


def _rms_node_name(node) -> str:
    """torch's cpu rms_norm is a composite: its result's node is the last multiply, or the cast
    back to the input's dtype when it computed in another (float32 for a float16/bfloat16
    input, or the dtype a wider weight promoted to)."""
    dt = node.meta[0][1]
    w = node.saved_arg("weight")
    wider = isinstance(w, Tensor) and w._data.dtype.itemsize > dt.itemsize
    return "ToCopyBackward0" if dt.itemsize < 4 or wider else "MulBackward0"


_rms_norm.op.name_rule = _rms_node_name


def _rms_composite(grad, input, weight, nd, eps, needs):
    dims = tuple(range(input.dim() - nd, input.dim()))
    if eps is None:
        eps = _default_eps(input._data.dtype)
    rr = ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = input * rr
    has_w = isinstance(weight, Tensor)
    bdims = tuple(range(input.dim() - nd))
    dx = dw = None
    if needs[0]:
        gw = grad * weight if has_w else grad
        dx = (gw - xhat * (gw * xhat).mean(dims, keepdim=True)) * rr
    if needs[1]:
        dw = (grad * xhat).sum(bdims) if bdims else grad * xhat
    return dx, dw


def rms_norm(
    input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims."""
    ns = _norm_shape(normalized_shape)
    _check_ns_params(ns, weight=weight)
    shape = tuple(input.shape)
    if len(shape) < len(ns):
        raise ValueError(
            f"Input tensor must have at least {len(ns)} dimensions, but got {len(shape)}"
        )
    if shape[len(shape) - len(ns) :] != ns:
        raise RuntimeError(
            f"Given normalized_shape={_shape_str(ns)}, expected input with shape "
            f"[*{', '.join(str(k) for k in ns)}], but got input of size{_shape_str(shape)}"
        )
    _check_float(input, "rms_norm")
    if input._names is not None:
        _check_param_names("rms_norm", input, "normalized", len(ns), weight)
    if weight is not None and weight.dtype != input.dtype and not _RMS_WARNED:
        _RMS_WARNED.append(True)  # torch warns once per process
        warnings.warn(
            "Mismatch dtype between input and weight: input dtype = "
            f"{_dt.C_NAMES[input.dtype.name]}, weight dtype = {_dt.C_NAMES[weight.dtype.name]}, "
            "Cannot dispatch to fused implementation.",
            UserWarning,
            stacklevel=2,
        )
    return _rms_norm(input, *_or_0(weight), len(ns), eps, [])


_RMS_WARNED: list = []


# ---------------------------------------------------------------------- local response norm
def lrn(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """Local response normalization across dim 1 (a composite of ember ops: differentiable to
    any order): x / (k + alpha * mean of x^2 over ``size`` channels, zero-padded)^beta."""
    from .shape import cat

    sq = input * input
    c = input.shape[1]
    pre, post = size // 2, (size - 1) // 2
    parts = []
    if pre:
        parts.append(sq.new_zeros((sq.shape[0], pre) + tuple(sq.shape[2:])))
    parts.append(sq)
    if post:
        parts.append(sq.new_zeros((sq.shape[0], post) + tuple(sq.shape[2:])))
    padded = cat(parts, 1) if len(parts) > 1 else sq
    acc = None
    for j in range(size):
        sl = padded[:, j : j + c]
        acc = sl if acc is None else acc + sl
    if acc.dtype.is_floating_point:
        div = (acc * (alpha / size) + k) ** beta
    else:  # torch's average pooling of an integer tensor divides in integers
        div = ((acc // size) * alpha + k) ** beta
    return input / div


def _cross_map_window(c: int, size: int):
    """Which channels each channel's scale sums, as a (C, C) 0/1 matrix: the running-window
    recurrence of the legacy (Lua) SpatialCrossMapLRN, whose first and last windows are not
    centred; torch keeps that behaviour."""
    pre = (size - 1) // 2 + 1
    rows = [[0.0] * c for _ in range(c)]
    for j in range(min(pre, c)):
        rows[0][j] = 1.0
    for ch in range(1, c):
        rows[ch] = list(rows[ch - 1])
        if ch < c - pre + 1:
            rows[ch][ch + pre - 1] += 1.0
        if ch > pre:
            rows[ch][ch - pre] -= 1.0
    return rows


def cross_map_lrn2d(input: Tensor, size: int, alpha: float, beta: float, k: float):
    """CrossMapLRN2d's forward: x * (k + alpha/size * windowed sum of x^2)^-beta over channels
    (a composite of ember ops, differentiable to any order)."""
    from .creation import tensor

    c = input.shape[1]
    m = tensor(_cross_map_window(c, size), dtype=input.dtype, device=input.device)
    sq = (input * input).movedim(1, -1)
    scale = (sq @ m.t()).movedim(-1, 1) * (alpha / size) + k
    return input * scale ** (-beta)


backward_names(
    {
        "_batch_norm_train": "NativeBatchNormBackward0",
        "_batch_norm_eval": "NativeBatchNormBackward0",
        "_layer_norm": "NativeLayerNormBackward0",
        "_group_norm": "NativeGroupNormBackward0",
    }
)
