"""Statistics: nanmedian, quantile, nanquantile, bincount, histc, histogram, dist, cov, corrcoef.

quantile's derivative sends the upstream gradient to the two order statistics it interpolates
(weights 1 - w and w) with scatter_add, and to ``q`` through the interpolation weight; both are
written in ember ops, so double backward works. dist, cov and corrcoef are composites of
registered ops (their gradients come from those ops).
"""

from __future__ import annotations

import builtins
import math
import numbers
import warnings

import numpy as np

from .. import dtype as _dt
from ..arg_errors import is_ints, must_be_tensor
from ..arg_errors import overloaded as _overloaded
from ..arg_errors import tensor_input as _tensor_input
from ..device import array_module
from ..layout import restride
from ..meta import no_meta_kernel
from ..names import as_op_error
from ..registry import op
from ..return_types import return_types
from ..tensor import Tensor, _wrap
from .indexing import gather, scatter_add
from .reduction import _by_dim, _empty_median, _index_grad, _median_out
from .sorting import _argsort, _axis, _kth_idx, _tname, _unnamed

__all__ = [
    "bincount",
    "corrcoef",
    "cov",
    "dist",
    "histc",
    "histogram",
    "histogramdd",
    "nanmedian",
    "nanquantile",
    "quantile",
]

_INT64 = np.dtype(np.int64)


def _const(arr) -> Tensor:
    return _wrap(arr)


def _reduced_names(ins, dim=None, keepdim=False, *args, **kwargs):
    """The reduced dim loses its name unless keepdim (all dims when dim is None)."""
    names = ins[0]._names
    if names is None or keepdim:
        return names
    if dim is None:
        return None
    ax = _axis(dim, len(names))
    out = tuple(n for i, n in enumerate(names) if i != ax)
    return None if all(n is None for n in out) else out


def _quantile_names(ins, dim=None, keepdim=False, *args, **kwargs):
    """As a reduction; a 1-D ``q`` adds an unnamed leading dim."""
    names = _reduced_names(ins, dim, keepdim)
    q = ins[1]
    if names is not None and isinstance(q, Tensor) and q._data.ndim == 1:
        names = (None,) + names
    return names


# ---------------------------------------------------------------------- nanmedian
def _nanmedian_idx(a, ax):
    """keepdim int64 indices of the lower median of the non-NaN values along ``ax``."""
    xp = array_module(a)
    # no NaN: one k for every row, and the host selection path (checked on the host only: a
    # device keeps the sort, without a sync)
    if xp is np and (a.dtype.kind in "iu" or not np.isnan(a).any()):
        return _kth_idx(xp, a, (a.shape[ax] - 1) // 2 + 1, ax)
    order = _argsort(xp, a, ax)  # NaN last
    if a.dtype.kind in "fcV":  # V: bfloat16
        m = (~xp.isnan(a)).sum(axis=ax, keepdims=True)
        k = xp.maximum((m - 1) // 2, 0)
    else:
        shape = [1] * a.ndim
        shape[ax] = 1
        k = xp.full(shape, (a.shape[ax] - 1) // 2, dtype=_INT64)
    return xp.take_along_axis(order, k.astype(_INT64, copy=False), axis=ax).astype(_INT64)


@op(names=_reduced_names, out_type=return_types.nanmedian)
def nanmedian(xp, input, dim=None, keepdim=False):
    """Lower median ignoring NaN: of all elements (dim None), or (values, indices) along ``dim``."""
    if dim is None and not input.size:  # torch answers before its dtype check
        return _empty_median(xp, input)
    # with a dim, torch checks it (range, then size) before the dtype
    ax = None if dim is None else _axis(dim, input.ndim)
    if ax is not None and not input.shape[ax]:
        raise IndexError(f"median(): Expected reduction dim {ax} to have non-zero size.")
    if input.dtype.kind in "bc":
        kname = "median_cpu" if dim is None else "median_out"
        raise NotImplementedError(f"\"{kname}\" not implemented for '{_tname(input)}'")
    if dim is None:
        flat = input.reshape(-1)
        return xp.take(flat, _nanmedian_idx(flat, 0)).reshape(())
    if ax is None:
        return input.copy(), xp.zeros((), dtype=_INT64)
    idx = _nanmedian_idx(input, ax)
    vals = xp.take_along_axis(input, idx, axis=ax)
    if not keepdim:
        idx, vals = idx.squeeze(ax), vals.squeeze(ax)
    return vals, idx


@nanmedian.vjp(one_output=("input", "result"))
def _(grad, input, result, indices, input_shape, dim, keepdim):
    if dim is not None:
        return _index_grad(grad, indices, input_shape, dim, keepdim)
    # like torch: split evenly among the elements equal to the median (NaN matches NaN)
    a, v = input._data, result._data
    xp = array_module(a)
    m = a == v
    if a.dtype.kind in "fcV" and bool(xp.isnan(v)):  # V: bfloat16
        m = xp.isnan(a)
    return grad * _const(m.astype(a.dtype) / max(int(m.sum()), 1))


# nanmedian() is torch's NanmedianBackward0, nanmedian(dim) its NanmedianBackward1
nanmedian.op.name_rule = _by_dim("NanmedianBackward0", "NanmedianBackward1")
nanmedian.op.out_dtype = _median_out  # torch's median kernel checks (and names) the out= dtypes
nanmedian.op.indices_checked_first = True


# ---------------------------------------------------------------------- quantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_checks(name, a, q, interpolation, dim):
    """quantile's argument checks, in torch's order: a number q's range, the interpolation, an
    empty input, a q tensor's rank, the input's and q's dtypes, dim, a q tensor's values."""
    is_tensor = hasattr(q, "dtype") and hasattr(q, "ndim")
    if not is_tensor:
        if not isinstance(q, numbers.Real) or isinstance(q, bool):
            raise TypeError(
                f"{name}(): argument 'q' must be float or Tensor, not {type(q).__name__}"
            )
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )
    if not a.size:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if is_tensor and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if is_tensor and q.dtype != a.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    ax = None if dim is None else _axis(dim, a.ndim)
    if not is_tensor:
        return array_module(a).asarray([q], dtype=a.dtype), True, ax
    if q.size and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    return q.reshape(-1), q.ndim == 0, ax


class _QPlan:
    """What quantile's kernel and derivative share: the rows, their order and the positions."""

    __slots__ = ("ax", "hi", "lo", "m1", "moved", "n", "nan_rows", "order", "out_shape", "rows",
                 "scalar", "w")  # fmt: skip


def _q_plan(a, q, dim, keepdim, interpolation, ignore_nan, name):
    xp = array_module(a)
    qv, scalar, ax = _q_checks(name, a, q, interpolation, dim)
    p = _QPlan()
    p.ax = ax
    b = a.reshape(-1) if ax is None else xp.moveaxis(a, ax, -1)
    p.moved = b
    rows = b.shape[:-1]
    p.rows = rows
    n = b.shape[-1]
    p.n = n
    order = _argsort(xp, b, -1)  # NaN last
    p.order = order
    Q = qv.shape[0]
    qb = qv.reshape((Q,) + (1,) * (len(rows) + 1))
    if ignore_nan:
        m = (~xp.isnan(b)).sum(axis=-1, keepdims=True)
    else:
        m = xp.full(rows + (1,), n, dtype=_INT64)
    m1 = (m - 1).astype(a.dtype)
    p.m1 = m1
    rank = qb * m1  # in the input's dtype, like torch
    if interpolation == "lower":
        lo = hi = xp.floor(rank)
    elif interpolation == "higher":
        lo = hi = xp.ceil(rank)
    elif interpolation == "nearest":
        lo = hi = xp.round(rank)  # half to even, like torch
    else:
        lo, hi = xp.floor(rank), xp.ceil(rank)
    if interpolation == "linear":
        w = rank - lo
    elif interpolation == "midpoint":
        w = xp.full(rank.shape, 0.5, dtype=a.dtype)
    else:
        w = xp.zeros(rank.shape, dtype=a.dtype)
    p.nan_rows = None
    if not ignore_nan and a.dtype.kind == "f":
        # a row holding NaN has quantile NaN: like torch, both positions pick its last sorted value
        # (the last NaN), so that element takes the whole gradient
        nan_rows = xp.isnan(xp.take_along_axis(b, order[..., -1:], axis=-1))
        if bool(nan_rows.any()):
            p.nan_rows = nan_rows
            lo = xp.where(nan_rows, n - 1, lo)
            hi = xp.where(nan_rows, n - 1, hi)
    p.lo = xp.clip(lo, 0, n - 1).astype(_INT64)
    p.hi = xp.clip(hi, 0, n - 1).astype(_INT64)
    p.w = w.astype(a.dtype, copy=False)
    if keepdim:
        if ax is None:
            out = (1,) * a.ndim
        else:
            out = rows[:ax] + (1,) + rows[ax:]
    else:
        out = rows
    p.out_shape = out if scalar else (Q,) + out
    p.scalar = scalar
    return p


def _q_first(xp, r):
    """``r`` (q's dim first) laid out as torch's: it computes the quantiles with q's dim fastest
    in memory and moves that dim to the front, so q's dim has stride 1 and the others are
    row-major times len(q)."""
    shape = r.shape
    st = [1] * len(shape)
    step = shape[0]
    for d in range(len(shape) - 1, 0, -1):
        st[d] = step
        step *= shape[d]
    return restride(xp, r, tuple(st))


def _lerp(xp, lo, hi, w):
    # torch's lerp: exact at both ends
    return xp.where(w < 0.5, lo + w * (hi - lo), hi - (hi - lo) * (1 - w))


def _make_quantile(name, ignore_nan):
    def kernel(xp, input, q, dim=None, keepdim=False, *, interpolation="linear"):
        p = _q_plan(input, q, dim, keepdim, interpolation, ignore_nan, name)
        s = xp.take_along_axis(p.moved, p.order, axis=-1)[None]
        shape = p.lo.shape[:-1] + (p.n,)
        s = xp.broadcast_to(s, shape)
        v_lo = xp.take_along_axis(s, p.lo, axis=-1)
        v_hi = xp.take_along_axis(s, p.hi, axis=-1)
        with np.errstate(invalid="ignore"):
            r = _lerp(xp, v_lo, v_hi, p.w)[..., 0]
        if ignore_nan:
            nan_rows = p.m1[..., 0] < 0  # every value NaN
        else:
            nan_rows = xp.isnan(s[..., -1])  # NaN sorts last: any NaN in the row
        if bool(nan_rows.any()):
            r = xp.where(nan_rows, xp.nan, r)
        r = r.astype(input.dtype, copy=False).reshape(p.out_shape)
        return r if p.scalar or not r.size else _q_first(xp, r)

    kernel.__name__ = name
    kernel.__doc__ = (
        f"The ``q``-th quantiles of ``input`` along ``dim`` (all elements when None)"
        f"{', ignoring NaN' if ignore_nan else ''}; ``q`` is a float or a 0/1-D tensor; "
        "interpolation: linear, lower, higher, midpoint or nearest."
    )
    fn = op(names=_quantile_names, name=name)(kernel)
    # torch's quantile is composite, ending on a squeeze of its sorted rows' dims
    fn.op.backward_name = "SqueezeBackward4"

    @fn.vjp
    def _(grad, input, q, dim, keepdim, interpolation, needs):
        a = input._data
        xp = array_module(a)
        p = _q_plan(a, q._data if isinstance(q, Tensor) else q, dim, keepdim, interpolation,
                    ignore_nan, name)  # fmt: skip
        Q = p.lo.shape[0]
        full = (Q,) + p.rows + (p.n,)
        order = xp.broadcast_to(p.order[None], full)
        i_lo = _const(xp.take_along_axis(order, p.lo, axis=-1))
        i_hi = _const(xp.take_along_axis(order, p.hi, axis=-1))
        g = grad.reshape((Q,) + p.rows).unsqueeze(-1)
        q_diff = interpolation == "linear" and isinstance(q, Tensor)
        if q_diff:  # w = q (m - 1) - floor(...): keep q in the graph (d grad / dq for gradgrad)
            w = q.reshape((Q,) + (1,) * (len(p.rows) + 1)) * _const(p.m1) - _const(
                p.lo.astype(a.dtype)
            )
        else:
            w = _const(p.w)
        g_in = g_q = None
        if needs[0]:
            z = _wrap(xp.zeros(full, dtype=grad._data.dtype))
            if interpolation in ("linear", "midpoint"):
                gi = scatter_add(scatter_add(z, -1, i_lo, g * (1 - w)), -1, i_hi, g * w)
            else:
                gi = scatter_add(z, -1, i_lo, g)
            gi = gi.sum(0)
            g_in = gi.reshape(a.shape) if p.ax is None else gi.movedim(-1, p.ax)
        if len(needs) > 1 and needs[1] and q_diff:
            x = input.reshape(-1) if p.ax is None else input.movedim(p.ax, -1)
            xe = x.unsqueeze(0).expand(*full)
            span = gather(xe, -1, i_hi) - gather(xe, -1, i_lo)
            if p.nan_rows is not None:  # q does not move a NaN row's result (NaN - NaN there)
                span = span.masked_fill(_const(xp.broadcast_to(p.nan_rows, span.shape)), 0)
            gq = g * span * _const(p.m1)
            g_q = gq.reshape(Q, -1).sum(1).reshape(q.shape)
        return g_in, g_q

    return fn


quantile = _make_quantile("quantile", False)
nanquantile = _make_quantile("nanquantile", True)


def _quantile_out(out, res, ins):
    raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")


quantile.op.out_dtype = nanquantile.op.out_dtype = _quantile_out


# ---------------------------------------------------------------------- bincount / histograms
@op(names=_unnamed)
def bincount(xp, input, weights=None, minlength=0):
    """Count of each non-negative integer value in a 1-D ``input`` (weighted: sum of weights)."""
    no_meta_kernel(xp, "aten::bincount")
    if input.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_tname(input)}'")
    if isinstance(minlength, float):
        raise TypeError("bincount(): argument 'minlength' must be int, not float")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or (input.size and int(input.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return xp.bincount(input.astype(_INT64, copy=False), minlength=minlength).astype(_INT64)
    w = weights._data if isinstance(weights, Tensor) else xp.asarray(weights)
    if w.ndim != 1 or w.shape[0] != input.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if not input.size:  # torch returns its (int64) zeros before looking at the weights
        return xp.zeros(minlength, dtype=_INT64)
    out_dt = np.float32 if w.dtype == np.float32 else np.float64
    r = xp.bincount(input.astype(_INT64, copy=False), weights=w, minlength=minlength)
    return r.astype(out_dt, copy=False)


def _float_only(a, kernel_name, half=True):
    if a.dtype.kind != "f" or (not half and a.dtype.itemsize == 2):
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{_tname(a)}'")


def _bins_positive(bins, d=0):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension {d}")


@op(names=_unnamed)
def histc(xp, input, bins=100, min=0, max=0):
    """Histogram of ``input`` with ``bins`` equal bins over [min, max] (the data's range when
    min == max); elements outside are ignored."""
    if isinstance(bins, float):
        raise TypeError("histc(): argument 'bins' (position 2) must be int, not float")
    _bins_positive(bins)
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    # torch refuses a dtype at the step that lacks it, after the checks above: the data's range
    # (aminmax) has no complex or wide unsigned kernel, the bin edges (linspace) no bool one and
    # the binning (histogram_cpu) no integer one; bfloat16 bins in its own arithmetic
    k = input.dtype.kind
    reduced = lo == hi and input.size
    if reduced:
        if k == "c" or (k == "u" and input.dtype.itemsize > 1):
            raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_tname(input)}'")
        lo, hi = float(input.min()), float(input.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        f = _cfmt if reduced else "{:g}".format  # (a given range prints plainly)
        raise RuntimeError(f"torch.histc: range of [{f(lo)}, {f(hi)}] is not finite")
    _no_overflow(input, lo, hi)
    if k != "f" and k != "V":
        wide_u = k == "u" and input.dtype.itemsize > 1
        kernel = "linspace_cpu" if k == "b" or wide_u else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(input)}'")
    dt = input.dtype
    x = input.reshape(-1)
    x = x[(x >= dt.type(lo)) & (x <= dt.type(hi))]
    pos = ((x - dt.type(lo)) * dt.type(bins) / (dt.type(hi) - dt.type(lo))).astype(_INT64)
    pos = xp.minimum(pos, bins - 1)
    return xp.bincount(pos, minlength=bins).astype(dt)


def _cfmt(v: float) -> str:
    # C++'s stream formatting of a double: nan prints as -nan after a min/max reduction
    return "-nan" if math.isnan(v) else f"{v:g}"


def _linspace(xp, lo, hi, steps, dtype):
    """torch's linspace in ``dtype`` (bit-exact): the step is rounded to ``dtype``, the first half
    steps up from lo and the rest down from hi."""
    lo, hi = dtype.type(lo), dtype.type(hi)
    step = float((hi - lo) / dtype.type(builtins.max(steps - 1, 1)))
    i = xp.arange(steps, dtype=np.float64)
    up = float(lo) + step * i
    down = float(hi) - step * (steps - 1 - i)
    return xp.where(i < steps // 2, up, down).astype(dtype)


def _edges_of(xp, col, bins, rng, d, dt):
    """The bin edges of dimension ``d``: a given 1-D edges array, or ``bins`` equal bins over
    ``rng`` (the column's range when None; widened by 0.5 each side when it is one point)."""
    if hasattr(bins, "ndim"):
        if bins.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{bins.ndim} dimensions in the bins tensor for dimension {d}"
            )
        if bins.dtype != dt:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                f"got input with dtype {_cname(dt)} and bins for dimension {d} with dtype "
                f"{_cname(bins.dtype)}"
            )
        if not bins.shape[0]:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                f"elements in the bins tensor for dimension {d}"
            )
        _bins_positive(bins.shape[0] - 1, d)  # one edge makes no bin
        return bins.copy()
    nb = int(bins)
    _bins_positive(nb, d)
    if rng is not None:
        lo, hi = float(rng[0]), float(rng[1])
    elif col.size:
        lo, hi = float(col.min()), float(col.max())
    else:
        lo, hi = 0.0, 1.0  # torch's default range for an empty input
    _check_range(lo, hi, d)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _linspace(xp, lo, hi, nb + 1, dt)


def _check_range(lo: float, hi: float, d: int) -> None:
    if not (math.isfinite(lo) and math.isfinite(hi)):  # a given range, or the data's
        raise RuntimeError(
            f"torch.histogramdd: dimension {d}'s range [{lo:g}, {hi:g}] is not finite"
        )
    if lo > hi:
        raise RuntimeError(
            f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
            f"dimension {d}"
        )


# the C++ names of torch's "value cannot be converted to type ... without overflow"
_OVERFLOW_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                   "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}  # fmt: skip


def _no_overflow(a, lo: float, hi: float) -> None:
    """torch's error for histogram bounds that its input's (integer or half) dtype cannot hold."""
    name = _OVERFLOW_NAMES.get(_dt._FROM_NP[a.dtype].name)
    if name is None:  # (float32/64 hold any finite bound; torch names no other type's overflow)
        return
    if a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        bad = not (info.min <= lo <= info.max and info.min <= hi <= info.max)
    else:
        with np.errstate(over="ignore"):
            bad = not np.isfinite(np.array([lo, hi]).astype(a.dtype)).all()
    if bad:
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def _histogram_dtype(a, bins, rng) -> None:
    """torch's refusals of histogram's input dtype, in its order: only float32/64 find the data's
    own range; a given range is first checked, then converted to the input's dtype (bool has no
    linspace, a bound outside the dtype overflows), and only floating types (half ones included)
    bin; given edges likewise."""
    k = a.dtype.kind
    if k == "f" and a.dtype.itemsize > 2:
        return
    kernel = "histogram_cpu"
    if hasattr(bins, "ndim"):
        _edges_of(array_module(a), None, bins, None, 0, a.dtype)  # the edges' own checks first
    else:
        if k == "b":
            kernel = "linspace_cpu"
        _bins_positive(int(bins))
        if rng is None and a.size:  # the data's range (an empty input has none to find)
            kernel = "histogramdd"
        elif rng is not None:
            lo, hi = float(rng[0]), float(rng[1])
            _check_range(lo, hi, 0)
            _no_overflow(a, lo, hi)
    if k not in "fV" or kernel == "histogramdd":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(a)}'")


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}  # fmt: skip


def _cname(npd) -> str:
    """The C++ type name torch's histogram messages print for a dtype."""
    name = _dt._FROM_NP[np.dtype(npd)].name
    return _C_NAMES.get(name, name)


def _histdd(xp, x, bins, ranges, weight, density):
    """(hist, [edges per dim]) of the points in the rows of the 2-D ``x`` (N, D)."""
    dt = x.dtype
    n, nd = x.shape
    edges = [
        _edges_of(xp, x[:, d], bins[d], None if ranges is None else ranges[d], d, dt)
        for d in builtins.range(nd)
    ]
    w = None
    if weight is not None:
        w = weight._data if isinstance(weight, Tensor) else xp.asarray(weight)
        if w.dtype != dt:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                f"should have the same dtype, but got input({_cname(dt)}), and "
                f"weight({_cname(w.dtype)})"
            )
        if w.shape != (n,):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape "
                f"{[n, nd]} and weight with shape {list(w.shape)}"
            )
    shape = tuple(builtins.max(e.shape[0] - 1, 0) for e in edges)
    if not all(shape):
        return xp.zeros(shape, dtype=dt), edges
    inside = xp.ones(n, dtype=bool)
    for d, e in enumerate(edges):
        inside &= (x[:, d] >= e[0]) & (x[:, d] <= e[-1])
    flat = xp.zeros(int(inside.sum()), dtype=_INT64)
    for d, e in enumerate(edges):
        # the bin whose edges hold x (e[i] <= x < e[i + 1]); the last bin includes its end
        pos = xp.minimum(xp.searchsorted(e, x[inside, d], side="right") - 1, shape[d] - 1)
        flat = flat * shape[d] + pos
    size = 1
    for s in shape:
        size *= s
    hist = xp.bincount(flat, weights=None if w is None else w[inside], minlength=size)
    hist = hist.astype(dt).reshape(shape)
    if density:
        vol = xp.ones(shape, dtype=dt)
        for d, e in enumerate(edges):
            sh = [1] * nd
            sh[d] = shape[d]
            vol = vol * xp.diff(e).reshape(sh)
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = (hist / (hist.sum() * vol)).astype(dt)
    return hist, edges


@op(names=_unnamed, out_type=return_types.histogram)
def histogram(xp, input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges): ``bins`` equal bins over ``range`` (the data's range when None), or the
    given edges tensor; ``weight`` weighs each element; ``density`` normalizes to a density."""
    if isinstance(bins, Tensor):  # an option (it has torch's default), so still a Tensor here
        bins = bins._data
    _histogram_dtype(input, bins, range)
    if weight is not None and getattr(weight, "shape", None) != input.shape:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as the "
            "input tensor excluding its innermost dimension, but got input with shape "
            f"{[input.size, 1]} and weight with shape {list(weight.shape)}"
        )
    w = None if weight is None else weight._data.reshape(-1)
    hist, edges = _histdd(
        xp, input.reshape(-1, 1), [bins], None if range is None else [range], w, density
    )
    return hist, edges[0]


@op(names=_unnamed, method=False)
def _histogramdd(xp, input, bins=None, range=None, weight=None, density=False):
    """histogramdd's kernel: (hist, *edges) as one flat tuple."""
    _float_only(input, "histogramdd", half=False)  # no float16 kernel
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    nd = input.shape[-1]
    x = input.reshape(-1, nd)
    if isinstance(bins, (list, tuple)):
        if len(bins) != nd:
            raise RuntimeError(
                "histogramdd: The size of bins must be equal to the innermost dimension of the "
                "input."
            )
        bins = [b._data if isinstance(b, Tensor) else b for b in bins]
    else:
        bins = [bins] * nd
    ranges = None
    if range is not None:
        if len(range) != 2 * nd:
            raise RuntimeError(
                f"torch.histogramdd: for a {nd}-dimensional histogram range should have "
                f"{2 * nd} elements, but got {len(range)}"
            )
        ranges = [(range[2 * d], range[2 * d + 1]) for d in builtins.range(nd)]
    w = weight
    if w is not None:
        w = w._data if isinstance(w, Tensor) else xp.asarray(w)
        if w.shape != input.shape[:-1]:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with shape "
                f"{list(input.shape)} and weight with shape {list(w.shape)}"
            )
        w = w.reshape(-1)
    hist, edges = _histdd(xp, x, bins, ranges, w, density)
    return (hist, *edges)


def _histogramdd_args(args, kwargs) -> bool:
    given = (*args, kwargs.get("bins", 0))
    bins = given[1]
    return isinstance(given[0], Tensor) and (
        is_ints(bins)
        or (isinstance(bins, (list, tuple)) and all(isinstance(b, Tensor) for b in bins))
    )


@_overloaded(
    "histogramdd",
    tuple(
        f"(Tensor input, {b} bins, tuple of floats range = None, Tensor weight = None, "
        "bool density = False)"
        for b in ("int", "tuple of ints", "tuple of Tensors")
    ),
    _histogramdd_args,
)
def histogramdd(input: Tensor, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the points in the innermost dim of ``input`` (one histogram dim per
    coordinate): ``bins`` an int, a list of ints or a list of edge tensors; ``range`` a flat list
    of (min, max) pairs."""
    r = _histogramdd(input, bins, range, weight, density)
    return return_types.histogramdd(r[0], tuple(r[1:]))


# ---------------------------------------------------------------------- dist / cov / corrcoef
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise must_be_tensor("dist", ("input", "other"), (input, other))
    if not isinstance(p, numbers.Number) or isinstance(p, bool):
        raise TypeError(f"dist(): argument 'p' (position 3) must be Number, not {type(p).__name__}")
    try:
        d = input - other
    except RuntimeError as e:  # a name clash is dist's (spec 4.10), not its inner sub's
        raise as_op_error(e, "dist", ("sub",), input, other) from None
    if d._data.dtype.kind not in "fcV":
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {_tname(d._data)} instead."
        )
    return d.norm(p)


def _weights_check(w, name, n_obs, integral):
    a = w._data
    if a.ndim > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{a.ndim} dimensions"
        )
    if a.size != n_obs:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {a.size} != {n_obs}"
        )
    if integral and a.dtype.kind not in "iub":
        raise RuntimeError(
            f"cov(): expected {name} to have integral dtype but got {name} with {_tname(a)} dtype"
        )
    if not integral and a.dtype.kind not in "fV":
        raise RuntimeError(
            f"cov(): expected {name} to have floating point dtype but got {name} with "
            f"{_tname(a)} dtype"
        )
    if a.size and bool((a < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _variables_named(c: Tensor, input: Tensor) -> Tensor:
    """cov/corrcoef of a named (variables, observations) ``input``: both dims of the (variables,
    variables) result index the variables, whose name a tensor may carry once (no duplicate
    names, spec 1), so the rows take it and the columns are unnamed. (The generic fallback
    named a square input's result by its observations dim too: a coincidence of shapes.)"""
    if c.dim() != 2 or input._names[0] is None:
        return c
    return c.rename(input._names[0], None)


@_tensor_input("cov")
def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """Covariance matrix of the variables in the rows of ``input`` (observations in columns)."""
    if input._names is not None:
        # computed unnamed (x @ x^H would repeat the variables' name), then named by the rows
        c = cov(input.rename(None), correction=correction, fweights=fweights, aweights=aweights)
        return _variables_named(c, input)
    nd = input.dim()
    if nd > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{nd} dimensions"
        )
    x = input if nd == 2 else input.reshape(1, -1)
    if x._data.dtype.kind not in "fcV":
        if x._data.dtype.kind == "b":  # integers promote to the default float, bools do not
            raise RuntimeError("cov(): bool dtype is not supported for input")
        x = x.to(_dt.get_default_dtype())
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        _weights_check(fweights, "fweights", n_obs, True)
        w = fweights
    if aweights is not None:
        _weights_check(aweights, "aweights", n_obs, False)
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        w_sum = n_obs
        norm = float(n_obs - correction)
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is not None and correction != 0:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm = w_sum - correction
    bad = (norm <= 0) if isinstance(norm, float) else bool((norm <= 0).item())
    if bad:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = norm * 0 if isinstance(norm, Tensor) else 0.0
    xm = x - avg.unsqueeze(1)
    xt = xm.transpose(0, 1)
    if xt._data.dtype.kind == "c":
        xt = xt.conj()
    c = (xm if w is None else xm * w).matmul(xt)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = c / norm
    return c.squeeze()


@_tensor_input("corrcoef")
def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of ``input``."""
    if input._names is not None:  # as cov: computed unnamed, then named by the rows
        return _variables_named(corrcoef(input.rename(None)), input)
    nd = input.dim()
    if nd > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{nd} dimensions"
        )
    c = cov(input)
    with np.errstate(divide="ignore", invalid="ignore"):
        if c.dim() == 0:
            return c / c
        d = c.diagonal()
        if d._data.dtype.kind == "c":
            d = d.real
        s = d.sqrt()
        c = c / s.unsqueeze(1)
        c = c / s.unsqueeze(0)
    if c._data.dtype.kind == "c":
        from .. import ops  # noqa: F401  (complex is a registered op)
        from ..registry import OPS

        return OPS["complex"].public(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


Tensor.dist = dist
Tensor.cov = cov
Tensor.corrcoef = corrcoef


def _histc_out(out, res, ins):
    raise RuntimeError(  # torch's histc runs its histogram kernel, which refuses a cast
        "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
        f"input {_dt.C_NAMES[res.dtype.name]} and hist {_dt.C_NAMES[out.dtype.name]}"
    )


histc.op.out_dtype = _histc_out


# an input or q of another type matches none of torch's overloads: its "invalid combination"
quantile.op.overloads = nanquantile.op.overloads = tuple(
    f"(Tensor input, {q} q, int dim = None, bool keepdim = False, *, str interpolation = "
    '"linear", Tensor out = None)'
    for q in ("Tensor", "float")
)
