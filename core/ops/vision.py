"""Resampling and shuffles: the kernels under F.interpolate, F.pixel_shuffle and friends.

Every interpolation mode torch has is separable: along each spatial dim an output position reads
a few input positions with fixed weights (nearest: 1 tap, linear: 2, cubic: 4, area and
antialiased modes: a window). ``_AxisPlan`` holds those taps (torch's exact index and weight
formulas, computed once per size on the host, in torch's arithmetic precision) and
``_resample`` applies one plan per dim: gathers and a weighted sum, or one GEMM (along the last
dim, where BLAS beats strided gathers, and for wide windows). The map is linear, so its
derivative is ``_resample`` with the transposed plans (whose taps are again gathers), and every
order of derivative is the same op.

pixel_shuffle / pixel_unshuffle and channel_shuffle are permutations (reshape + transpose); each
one's derivative is its inverse, which is again one of these ops.

grid_sampler (F.grid_sample) gathers channels-last rows at each tap of each sample point; its
first derivative is computed directly (bincount scatter for the input, weight derivatives for the
grid), and under create_graph it differentiates an ember-op composition of the same sampling, so
double backward works. affine_grid_generator is one op, a matmul of a base grid with theta whose
derivative rebuilds the base grid from the size (it saves no tensor, as torch's node).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import layout as _layout
from ..names import keep, unify
from ..registry import op
from ..tensor import Tensor, _wrap

__all__ = [
    "affine_grid_generator",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "native_channel_shuffle",
]

_DENSE_TAPS = 8  # wider windows are applied as one GEMM along the dim


class _AxisPlan:
    """Taps of one resampled dim: ``out[o] = sum_k w[o, k] * in[idx[o, k]]`` (host arrays)."""

    __slots__ = ("_dense", "_dev", "_t", "idx", "n_in", "n_out", "unit", "w")

    def __init__(self, idx: np.ndarray, w: np.ndarray, n_in: int) -> None:
        self.idx = np.ascontiguousarray(idx, dtype=np.intp)
        self.w = np.ascontiguousarray(w, dtype=np.float64)
        self.n_in = n_in
        self.n_out = idx.shape[0]
        self.unit = self.w.shape[1] == 1 and bool((self.w == 1.0).all())  # a pure gather
        self._t = None
        self._dense = None
        self._dev = {}

    @property
    def T(self) -> _AxisPlan:
        """The adjoint: ``in[i] += w * out[o]`` as taps over ``out`` (no scatter needed)."""
        if self._t is None:
            rows = np.repeat(np.arange(self.n_out), self.idx.shape[1])
            cols = self.idx.reshape(-1)
            ws = self.w.reshape(-1)
            keep_ = ws != 0
            rows, cols, ws = rows[keep_], cols[keep_], ws[keep_]
            order = np.lexsort((rows, cols))
            rows, cols, ws = rows[order], cols[order], ws[order]
            counts = np.bincount(cols, minlength=self.n_in)
            k = max(int(counts.max()) if counts.size else 1, 1)
            idx = np.zeros((self.n_in, k), dtype=np.intp)
            w = np.zeros((self.n_in, k))
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            slot = np.arange(cols.size) - starts[cols]
            idx[cols, slot] = rows
            w[cols, slot] = ws
            t = _AxisPlan(idx, w, self.n_out)
            t._t = self
            self._t = t
        return self._t

    def dense(self) -> np.ndarray:
        """The (n_in, n_out) matrix of the map (for wide windows)."""
        if self._dense is None:
            m = np.zeros((self.n_in, self.n_out))
            np.add.at(m, (self.idx, np.arange(self.n_out)[:, None]), self.w)
            self._dense = m
        return self._dense

    def dense_on(self, xp, like):
        """The dense matrix as an array of ``xp`` with ``like``'s dtype and device (cached)."""
        dtype = like.dtype
        key = ("dense", xp.__name__, dtype, _device_id(like))
        got = self._dev.get(key)
        if got is None:
            got = xp.asarray(self.dense().astype(dtype))
            if len(self._dev) < 8:
                self._dev[key] = got
        return got

    def on(self, xp, like):
        """(idx, w, dense-or-None) as arrays of ``xp`` on ``like``'s device, weights of its
        dtype (cached per device and dtype)."""
        dtype = like.dtype
        key = (dtype, _device_id(like)) if xp is np else (xp.__name__, dtype, _device_id(like))
        got = self._dev.get(key)
        if got is None:
            if self.idx.shape[1] > _DENSE_TAPS:
                got = (None, None, xp.asarray(self.dense().astype(dtype)))
            else:
                got = (xp.asarray(self.idx), xp.asarray(self.w.astype(dtype)), None)
            if len(self._dev) < 8:
                self._dev[key] = got
        return got


def _device_id(a):
    if type(a) is np.ndarray:
        return None
    return getattr(getattr(a, "device", None), "id", None)


_LAST_AXIS_GEMM = 128  # along the last dim, a GEMM with the (n_in, n_out) matrix beats gathers


def _uses_gemm(x, d: int, plan: _AxisPlan) -> bool:
    """Whether ``_apply_axis`` resamples dim ``d`` of ``x`` by a GEMM (else tap by tap)."""
    if d == x.ndim - 1 and not plan.unit and plan.n_in <= _LAST_AXIS_GEMM:
        return True
    return plan.idx.shape[1] > _DENSE_TAPS


def _apply_axis(xp, x, d: int, plan: _AxisPlan, taps: bool = False):
    """``x`` resampled along dim ``d`` by ``plan``: a GEMM where it pays, else tap by tap
    (``taps``: tap by tap always, torch's arithmetic for NaNs and infinities)."""
    if taps or not _uses_gemm(x, d, plan):
        if plan.idx.shape[1] > _DENSE_TAPS:  # (the device plan holds the dense matrix only)
            return _apply_taps(xp, x, d, plan.idx, plan.w)
        idx, w, _ = plan.on(xp, x)
        return _apply_taps(xp, x, d, idx, w, plan.unit)
    if d == x.ndim - 1:
        return x @ plan.dense_on(xp, x)
    r = xp.moveaxis(x, d, -1) @ plan.dense_on(xp, x)
    return xp.ascontiguousarray(xp.moveaxis(r, -1, d))


def apply_plans(xp, x, plans, first_dim: int):
    """``x`` resampled along dims ``first_dim, first_dim + 1, ...`` by ``plans``.

    A NaN or an infinity in ``x`` meets every output of a GEMM's row through the matrix's zeros
    (0 * inf is NaN), where torch's taps keep it to the outputs whose windows hold it: then the
    dims are resampled again tap by tap. One pass over the smaller of ``x`` and the result
    tells (an input without them, or a result without NaNs, is torch's)."""
    y, gemm = x, False
    for j, p in enumerate(plans):
        gemm = gemm or _uses_gemm(y, first_dim + j, p)
        y = _apply_axis(xp, y, first_dim + j, p)
    if not gemm or x.dtype.kind != "f":  # taps only (a gather, say): torch's arithmetic
        return y
    clean = not bool(xp.isnan(y).any()) if y.size <= x.size else bool(xp.isfinite(x).all())
    if clean:
        return y
    y = x
    for j, p in enumerate(plans):
        y = _apply_axis(xp, y, first_dim + j, p, taps=True)
    return y


def _apply_taps(xp, x, d: int, idx, w, unit: bool = False):
    """``out[o] = sum_k w[o, k] * x[idx[o, k]]`` along dim ``d``, tap by tap (``unit``: the
    weights are all 1, a pure gather)."""
    if type(idx) is np.ndarray and xp is not np:  # the host plan (the GEMM paths' fallback)
        idx, w = xp.asarray(idx), xp.asarray(w)
    w = w.astype(x.dtype, copy=False)
    bshape = (idx.shape[0],) + (1,) * (x.ndim - 1 - d)
    k = idx.shape[1]
    if k == 1:
        r = xp.take(x, idx[:, 0], axis=d)
        return r if unit else r * w[:, 0].reshape(bshape)
    r = xp.take(x, idx[:, 0], axis=d)
    r *= w[:, 0].reshape(bshape)
    for j in range(1, k):
        t = xp.take(x, idx[:, j], axis=d)
        t *= w[:, j].reshape(bshape)
        r += t
    return r


@op(names=keep, method=False)
def _resample(xp, input, plans=(), first_dim=2, kind=""):
    """Separable resampling of dims ``first_dim, first_dim + 1, ...`` by per-dim tap plans.

    ``kind``: the grad_fn name of the torch kernel this call stands for (F.interpolate's mode
    and rank pick one of torch's upsample/adaptive-pool kernels); empty: ResampleBackward0."""
    x = input
    low = x.dtype.itemsize < 4 and x.dtype.kind in "fV"  # float16, bfloat16
    if low:
        x = x.astype(xp.float32)  # half precision computes in float32, like torch's opmath
    x = apply_plans(xp, x, plans, first_dim)
    if x is input:
        x = input.copy()
    # channels_last in, channels_last out (as torch's upsample kernels)
    return _layout.follow_array(xp, x.astype(input.dtype) if low else x, input)


@_resample.vjp
def _(grad, plans, first_dim, kind):  # kind: saved for the node's name only
    if any(p.n_out == 0 for p in plans):  # only 'area' (adaptive average pooling) makes these
        from .pooling import _empty_adaptive_grad

        raise _empty_adaptive_grad("avg", tuple(grad.shape), len(plans))
    return _resample(grad, tuple(p.T for p in plans), first_dim)


_resample.op.name_rule = lambda node: node.saved_arg("kind") or "ResampleBackward0"


# ---------------------------------------------------------------------- torch's tap formulas
def _opmath(dtype) -> type:
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _scale_value(f, n_in: int, n_out: int, scale):
    """compute_scales_value: 1/scale_factor when given, else in/out (in arithmetic ``f``)."""
    if scale is not None and scale > 0:
        return f(1.0 / scale)
    return f(n_in) / f(n_out)


def _area_scale(f, n_in: int, n_out: int, align_corners: bool, scale):
    if align_corners:
        return f(n_in - 1) / f(n_out - 1) if n_out > 1 else f(0)
    return _scale_value(f, n_in, n_out, scale)


@functools.lru_cache(maxsize=256)
def axis_plan(
    mode: str, n_in: int, n_out: int, scale, align_corners: bool, antialias: bool, dtype: str
) -> _AxisPlan:
    """Taps of one dim for ``mode`` (nearest, nearest-exact, linear, cubic, area)."""
    f = _opmath(dtype)
    o = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        s = _scale_value(np.float32, n_in, n_out, scale)
        if mode == "nearest":
            if n_out == n_in:
                i = o
            elif n_out == 2 * n_in:
                i = o >> 1
            else:
                i = (o.astype(np.float32) * s).astype(np.int64)
        else:
            src = ((o + 0.5) * np.float64(s)).astype(np.float32)
            i = np.floor(src).astype(np.int64)
        i = np.minimum(i, n_in - 1)
        return _AxisPlan(i[:, None], np.ones((n_out, 1)), n_in)
    if mode == "area":
        start = (o * n_in) // n_out
        end = ((o + 1) * n_in + n_out - 1) // n_out
        k = int((end - start).max()) if n_out else 1
        j = np.arange(k)
        idx = start[:, None] + j
        valid = idx < end[:, None]
        w = np.where(valid, 1.0 / (end - start)[:, None], 0.0)
        return _AxisPlan(np.where(valid, idx, start[:, None]), w, n_in)
    if n_in == n_out and scale is None and (antialias or mode == "linear"):
        # torch's linear and antialiased kernels copy a dim whose size is unchanged: no
        # zero-weight neighbour taps (a NaN must stay where it is)
        return _AxisPlan(o[:, None], np.ones((n_out, 1)), n_in)
    if antialias:
        return _aa_plan(mode, n_in, n_out, scale, align_corners, f)
    s = _area_scale(f, n_in, n_out, align_corners, scale)
    of = o.astype(f)
    cubic = mode == "cubic"
    if align_corners:
        src = s * of
    else:
        src = s * (of + f(0.5)) - f(0.5)
        if not cubic:
            src = np.maximum(src, f(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    t = np.clip(src - i0.astype(f), f(0), f(1))
    if not cubic:
        i1 = i0 + (i0 < n_in - 1)
        return _AxisPlan(np.stack([i0, i1], 1), np.stack([f(1) - t, t], 1).astype(f), n_in)
    a = f(-0.75)

    def c1(x):
        return ((a + f(2)) * x - (a + f(3))) * x * x + f(1)

    def c2(x):
        return ((a * x - f(5) * a) * x + f(8) * a) * x - f(4) * a

    w = np.stack([c2(t + f(1)), c1(t), c1(f(1) - t), c2(f(2) - t)], 1).astype(f)
    idx = np.clip(i0[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return _AxisPlan(idx, w, n_in)


def _aa_filter(mode: str, x):
    x = np.abs(x)
    if mode == "linear":
        return np.where(x < 1, 1 - x, 0.0)
    if mode == "cubic":
        a = -0.5  # antialiased bicubic uses PIL's a = -0.5
        return np.where(
            x < 1,
            ((a + 2) * x - (a + 3)) * x * x + 1,
            np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0),
        )
    # lanczos (a = 3)
    return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)


_AA_SIZE = {"linear": 2, "cubic": 4, "lanczos": 6}


def _aa_plan(mode, n_in, n_out, scale, align_corners, f):
    """Antialiased taps (torch's _compute_index_ranges_weights): a filter stretched by the
    downscale factor, weights normalized to sum to one."""
    s = float(_area_scale(f, n_in, n_out, align_corners, scale))
    support = (_AA_SIZE[mode] * 0.5) * s if s >= 1.0 else _AA_SIZE[mode] * 0.5
    invscale = 1.0 / s if s >= 1.0 else 1.0
    o = np.arange(n_out)
    # the window's ends in torch's opmath precision (a centre of 3.4999999 in float64 is 3.5
    # in float32: one more tap, which a NaN there reaches through its tiny weight)
    center = (s * (o + 0.5)).astype(f)
    lo, hi = center - f(support), center + f(support)
    center = center.astype(np.float64)
    xmin = np.maximum((lo + 0.5).astype(np.int64), 0)
    xmax = np.minimum((hi + 0.5).astype(np.int64), n_in)
    size = xmax - xmin
    k = max(int(size.max()), 1)
    j = np.arange(k)
    w = _aa_filter(mode, (j[None, :] + xmin[:, None] - center[:, None] + 0.5) * invscale)
    w = np.where(j[None, :] < size[:, None], w, 0.0)
    total = w.sum(1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
    # the padding taps (past a short window) read the window's first pixel, as area's do:
    # a NaN elsewhere must not reach this output through a zero weight
    idx = np.where(j[None, :] < size[:, None], xmin[:, None] + j[None, :], xmin[:, None])
    return _AxisPlan(idx, w.astype(f), n_in)


# ---------------------------------------------------------------------- shuffles
def _shuffle_names(ins, *args, **kwargs):
    # pixel/channel shuffles move values between the channel and spatial dims; each dim keeps
    # its role (batch, channel, height, width), so each keeps its name (spec 4.3)
    return ins[0]._names


def _is_int_dtype(dt) -> bool:
    return not (dt.is_floating_point or dt.is_complex or dt.name == "bool")


def _int_arg(v, fname: str, arg: str) -> int:
    if isinstance(v, Tensor) and v.dim() == 0 and _is_int_dtype(v.dtype):
        return int(v.item())  # torch's parser takes a 0-d integer tensor for an int too
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position 2) must be int, not {type(v).__name__}"
        )
    return int(v)


def _shuffle_factor(x, fname: str, argname: str, value) -> int:
    """pixel_(un)shuffle's checks: an input of 3+ dims and a positive int factor ``value``."""
    if x.ndim < 3:
        raise RuntimeError(
            f"{fname} expects input to have at least 3 dimensions, but got input with "
            f"{x.ndim} dimension(s)"
        )
    r = _int_arg(value, fname, argname)
    if r <= 0:
        raise RuntimeError(f"{fname} expects a positive {argname}, but got {r}")
    return r


@op(names=_shuffle_names, method=False)
def pixel_shuffle(xp, input, upscale_factor=1):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = _shuffle_factor(input, "pixel_shuffle", "upscale_factor", upscale_factor)
    *b, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    x = input.reshape(*b, c // (r * r), r, r, h, w)
    n = len(b)
    perm = list(range(n + 1)) + [n + 3, n + 1, n + 4, n + 2]
    out = xp.ascontiguousarray(x.transpose(perm)).reshape(*b, c // (r * r), h * r, w * r)
    # a channels_last input gives channels_last (torch refuses channels_last_3d)
    return _layout.follow_array(xp, out, input) if input.ndim == 4 else out


@pixel_shuffle.vjp
def _(grad, upscale_factor):
    return pixel_unshuffle(grad, upscale_factor)


@op(names=_shuffle_names, method=False)
def pixel_unshuffle(xp, input, downscale_factor=1):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = _shuffle_factor(input, "pixel_unshuffle", "downscale_factor", downscale_factor)
    *b, c, h, w = input.shape
    if h % r:
        raise RuntimeError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but "
            f"input.size(-2)={h} is not divisible by {r}"
        )
    if w % r:
        raise RuntimeError(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but "
            f"input.size(-1)={w} is not divisible by {r}"
        )
    x = input.reshape(*b, c, h // r, r, w // r, r)
    n = len(b)
    perm = list(range(n + 1)) + [n + 2, n + 4, n + 1, n + 3]
    out = xp.ascontiguousarray(x.transpose(perm)).reshape(*b, c * r * r, h // r, w // r)
    return _layout.follow_array(xp, out, input) if input.ndim == 4 else out


@pixel_unshuffle.vjp
def _(grad, downscale_factor):
    return pixel_shuffle(grad, downscale_factor)


@op(names=_shuffle_names, method=False)
def channel_shuffle(xp, input, groups=1):
    """(N, C, *) -> channels regrouped: (N, g, C/g, *) transposed to (N, C/g, g, *)."""
    g = _int_arg(groups, "channel_shuffle", "groups")
    if g <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{g}"
        )
    if input.ndim <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    n, c = input.shape[:2]
    if c % g:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {g} groups."
        )
    rest = input.shape[2:]
    x = input.reshape(n, g, c // g, *rest).swapaxes(1, 2)
    return _layout.follow_array(xp, xp.ascontiguousarray(x).reshape(input.shape), input)


@channel_shuffle.vjp
def _(grad, groups):
    c = grad.shape[1]
    return channel_shuffle(grad, c // groups)


native_channel_shuffle = channel_shuffle  # torch.native_channel_shuffle: the same permutation


# ---------------------------------------------------------------------- grid sampling
# grid_sampler's create_graph path is a composition of ember ops (gather, floor, clamp, ...): its
# derivatives with respect to the input and the grid come from those ops, so double backward
# works too.
_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _unnormalize(coord, size: int, align_corners: bool):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect_bounds(size: int, align_corners: bool) -> tuple:
    """(twice_low, twice_high): the reflection interval of grid_sample's 'reflection' padding."""
    return (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)


def _reflect(coord, twice_low: int, twice_high: int):
    from .creation import zeros_like

    if twice_low == twice_high:
        return zeros_like(coord)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (coord - lo).abs()
    extra = c.fmod(span)
    flips = (c / span).floor().detach()
    return extra.where(flips.fmod(2) == 0, span - extra) + lo


def _apply_padding(coord, size: int, padding: str, align_corners: bool):
    if padding == "border":
        return coord.clamp(0, size - 1)
    if padding == "reflection":
        return _reflect(coord, *_reflect_bounds(size, align_corners)).clamp(0, size - 1)
    return coord


class _Gatherer:
    """Reads input values at integer coordinates (zero outside), flattened over space."""

    def __init__(self, input, sizes) -> None:
        n, c = input.shape[:2]
        self.flat = input.reshape(n, c, -1)
        self.sizes = sizes  # spatial sizes, slowest first (D, H, W)
        self.n, self.c = n, c

    def __call__(self, coords, out_sp):
        """coords: one float tensor (N, *out) of integer values per spatial dim (x, y[, z]) in
        grid order (fastest dim first). Returns (values (N, C, L), validity (N, 1, L))."""
        valid = None
        lin = None
        for k, (cd, size) in enumerate(zip(coords, reversed(self.sizes))):
            ok = (cd >= 0).logical_and(cd <= size - 1)
            valid = ok if valid is None else valid.logical_and(ok)
            ci = cd.clamp(0, size - 1).long()
            stride = 1
            for s in list(reversed(self.sizes))[:k]:
                stride *= s
            lin = ci * stride if lin is None else lin + ci * stride
        L = lin[0].numel()
        idx = lin.reshape(self.n, 1, L).expand(self.n, self.c, L)
        return self.flat.gather(2, idx), valid.reshape(self.n, 1, L)


_CUBIC_A = -0.75  # torch's bicubic convolution coefficient


def _cubic_c1(x):
    a = _CUBIC_A
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_c2(x):
    a = _CUBIC_A
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_coeffs(t):
    """The 4 bicubic tap weights at fractional offset ``t`` (tensors or arrays)."""
    return [_cubic_c2(t + 1), _cubic_c1(t), _cubic_c1(1 - t), _cubic_c2(2 - t)]


def _grid_sampler_composite(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler as ember ops (its derivatives are differentiable: used for double
    backward)."""
    mode = _INTERP[int(interpolation_mode)]
    padding = _PADDING[int(padding_mode)]
    names = None
    if input._names is not None or grid._names is not None:
        ni = input._names or (None,) * input.ndim
        ng = grid._names or (None,) * grid.ndim
        names = (ni[0] or ng[0], ni[1]) + tuple(ng[1:-1])
        input, grid = input.rename(None), grid.rename(None)
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])
    out_sp = tuple(grid.shape[1:-1])
    k = len(sizes)
    gat = _Gatherer(input, sizes)
    # grid components: x (fastest dim, W), y (H), z (D)
    comps = [grid[..., j] for j in range(k)]
    dims = list(reversed(sizes))  # sizes in grid component order: W, H, D
    L = 1
    for s in out_sp:
        L *= s
    if mode == "bicubic":
        ix = _unnormalize(comps[0], dims[0], align_corners)
        iy = _unnormalize(comps[1], dims[1], align_corners)
        x0, y0 = ix.floor().detach(), iy.floor().detach()
        wx, wy = _cubic_coeffs(ix - x0), _cubic_coeffs(iy - y0)
        out = None
        for j in range(4):
            yy = _apply_padding(y0 + (j - 1), dims[1], padding, align_corners)
            row = None
            for i in range(4):
                xx = _apply_padding(x0 + (i - 1), dims[0], padding, align_corners)
                v, ok = gat([xx.detach(), yy.detach()], out_sp)
                term = v * (wx[i].reshape(n, 1, L) * ok)
                row = term if row is None else row + term
            term = row * wy[j].reshape(n, 1, L)
            out = term if out is None else out + term
    else:
        src = [
            _apply_padding(_unnormalize(cd, size, align_corners), size, padding, align_corners)
            for cd, size in zip(comps, dims)
        ]
        if mode == "nearest":
            v, ok = gat([s.round().detach() for s in src], out_sp)
            out = v * ok
            if grid.requires_grad:  # torch's grid gradient is zeros here, not absent
                g0 = comps[0] - comps[0].detach()
                out = out + (g0.where(g0.isfinite(), 0.0) * 0).reshape(n, 1, L)
        else:
            lo = [s.floor().detach() for s in src]
            out = None
            for corner in range(1 << k):
                pts, w = [], None
                for j in range(k):
                    up = (corner >> j) & 1
                    p = lo[j] + up
                    f = (src[j] - lo[j]) if up else (lo[j] + 1 - src[j])
                    pts.append(p)
                    w = f if w is None else w * f
                v, ok = gat(pts, out_sp)
                term = v * (w.reshape(n, 1, L) * ok)
                out = term if out is None else out + term
    out = out.reshape(n, c, *out_sp)
    if names is not None:
        out = out.rename(*names)
    return out


def _check_grid_shapes(ish: list, gsh: list, interpolation_mode, k: int | None = None) -> None:
    """torch's shape checks in its order: the common ones, then the ``k``-d kernel's (``k``: by
    default that of the input's rank)."""
    if ish and gsh:
        if ish[0] != gsh[0]:
            raise RuntimeError(
                "grid_sampler(): expected grid and input to have same batch size, but got input "
                f"with sizes {ish} and grid with sizes {gsh}"
            )
        if gsh[-1] != len(ish) - 2:
            raise RuntimeError(
                f"grid_sampler(): expected grid to have size {len(ish) - 2} in last dimension, "
                f"but got grid with sizes {gsh}"
            )
        for d in range(2, len(ish)):
            if ish[d] == 0:
                raise RuntimeError(
                    "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                    f"input has sizes {ish} with dimension {d} being empty"
                )
    if k is None:
        k = 2 if len(ish) == 4 else 3
    if len(ish) != k + 2 or len(gsh) != k + 2:
        raise RuntimeError(
            f"grid_sampler(): expected {k + 2}D input and grid with same number of dimensions, "
            f"but got input with sizes {ish} and grid with sizes {gsh}"
        )
    if int(interpolation_mode) == 2 and k != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _check_grid(input, grid, interpolation_mode) -> bool:
    """torch's checks in its order (shapes, then the cpu kernel's dtype checks); returns whether
    the output is empty, which the 2-d kernel returns before looking at the dtypes."""
    ish, gsh = list(input.shape), list(grid.shape)
    _check_grid_shapes(ish, gsh, interpolation_mode)
    empty = 0 in ish[:2] or 0 in gsh[1:-1]
    if empty and input.ndim == 4:
        return True
    if input.dtype.kind not in "fV":  # V: bfloat16
        where = "grid_sampler_2d_cpu_kernel_impl" if input.ndim == 4 else "grid_sampler3d_cpu"
        raise NotImplementedError(f"\"{where}\" not implemented for '{_scalar(input.dtype)}'")
    if empty:
        return True
    if input.dtype != grid.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar(input.dtype)} but found {_scalar(grid.dtype)}"
        )
    return False


def _scalar(npdtype) -> str:
    from .. import dtype as _dt

    return _dt.scalar_name(_dt._FROM_NP[np.dtype(npdtype)])


def _base_coords(n: int, align_corners: bool, like):
    from .creation import linspace, zeros

    if n <= 1:
        return zeros(1, dtype=like.dtype, device=like.device)
    v = linspace(-1, 1, n, dtype=like.dtype, device=like.device)
    return v if align_corners else v * ((n - 1) / n)


def _base_grid(sp: tuple, align_corners: bool, like) -> Tensor:
    """The (L, k+1) rows [x, y, (z,) 1] of normalized output coordinates (L = prod(sp))."""
    from .creation import ones
    from .shape import stack

    k = len(sp)
    grids = []
    for j, s in enumerate(reversed(sp)):  # x (W), y (H), z (D)
        view = [1] * k
        view[k - 1 - j] = s
        grids.append(_base_coords(s, align_corners, like).reshape(view).expand(*sp))
    grids.append(ones(*sp, dtype=like.dtype, device=like.device))
    return stack(grids, -1).reshape(-1, k + 1)


def _affine_grid_names(ins, size=(), align_corners=False):
    """The grid's batch dim keeps theta's batch name; its spatial and coordinate dims are new."""
    n = ins[0]._names
    return None if n is None or n[0] is None else (n[0],) + (None,) * (len(size) - 1)


@op(names=_affine_grid_names, method=False, name="affine_grid_generator")
def _affine_grid(xp, theta, size=(), align_corners=False):
    """The grid of the affine maps ``theta`` over the base grid of ``size``: one op, whose
    derivative rebuilds the base grid from the size instead of saving it (torch's node saves no
    tensor, so a grid reused by several backward passes works)."""
    sp = tuple(size[2:])
    base = _base_grid(sp, align_corners, _wrap(theta[:0]))._data  # (L, k+1)
    out = xp.matmul(base, theta.transpose(0, 2, 1))  # (16-bit: computed wider, rounded once)
    return out.astype(theta.dtype, copy=False).reshape(size[0], *sp, len(sp))


@_affine_grid.vjp
def _(grad, size, align_corners):
    sp = tuple(size[2:])
    g = grad.reshape(grad.shape[0], -1, len(sp))  # (N, L, k)
    return g.transpose(1, 2) @ _base_grid(sp, align_corners, grad)  # (N, k, k+1)


_affine_grid.op.backward_name = "AffineGridGeneratorBackward0"


def affine_grid_generator(theta, size, align_corners: bool):
    """torch.affine_grid_generator: the (N, *size[2:], k) sampling grid of the affine maps
    ``theta`` (N, k, k+1) over normalized output coordinates."""
    sp = list(size[2:])
    k = len(sp)
    n = size[0]
    if theta.dtype.itemsize == 2 and min(sp, default=2) <= 1:
        # torch builds a unit axis's coordinate with at::tensor, which has no cpu half kernel
        from .. import dtype as _dt

        raise NotImplementedError(
            f"\"tensor_cpu\" not implemented for '{_dt.scalar_name(theta.dtype)}'"
        )
    if theta.shape[0] != n:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {k + 1}] but "
            f"got: [{theta.shape[0]}, {theta.shape[2]}]."
        )
    return _affine_grid(theta, tuple(size), bool(align_corners))


# ---------------------------------------------------------------------- grid_sampler (the op)
def _grid_names(ins, *args, **kwargs):
    """Batch and channel names of the input (batch from the grid if unnamed there), spatial
    names of the grid."""
    ni = ins[0]._names or (None,) * ins[0].ndim
    ng = ins[1]._names or (None,) * ins[1].ndim
    # one grid per sample: the batch names unify (add's rule; clashing ones are an error)
    return unify(ni[:1], ng[:1]) + (ni[1],) + tuple(ng[1:-1])


def _unnorm_arr(xp, c, size: int, align: bool):
    if align:
        return (c + 1) * ((size - 1) / 2), (size - 1) / 2
    return ((c + 1) * size - 1) / 2, size / 2


def _clip_arr(xp, x, size: int, mult):
    inside = (x > 0) & (x < size - 1)
    # NaN goes to the far edge, as torch's scalar min(size - 1, max(x, 0)) sends it
    return xp.where(xp.isnan(x), size - 1, xp.clip(x, 0, size - 1)), mult * inside


def _reflect_arr(xp, x, lo2: int, hi2: int, mult):
    if lo2 == hi2:
        return x * 0, mult * 0
    mn = lo2 / 2
    span = (hi2 - lo2) / 2
    x = x - mn
    neg = x < 0
    x = xp.abs(x)
    extra = xp.fmod(x, span)
    odd = xp.fmod(xp.floor(x / span), 2) == 1
    x = xp.where(odd, span - extra + mn, extra + mn)
    flip = neg != odd  # the derivative's sign: -1 when exactly one of the two flips happened
    return x, xp.where(flip, -mult, mult)


def _src_arr(xp, c, size: int, padding: str, align: bool):
    """Source coordinate of normalized ``c`` and its derivative d(coordinate)/d(c)."""
    x, m = _unnorm_arr(xp, c, size, align)
    mult = xp.full(c.shape, m, dtype=c.dtype)
    if padding == "border":
        x, mult = _clip_arr(xp, x, size, mult)
    elif padding == "reflection":
        lo2, hi2 = _reflect_bounds(size, align)
        x, mult = _reflect_arr(xp, x, lo2, hi2, mult)
        x, mult = _clip_arr(xp, x, size, mult)
    return x, mult


def _int_coord(xp, x, size: int, padding: str, align: bool):
    """torch's compute_coordinates for an integer tap of bicubic sampling (no gradient)."""
    one = xp.ones(x.shape, dtype=x.dtype)
    if padding == "border":
        x = xp.clip(x, 0, size - 1)
    elif padding == "reflection":
        lo2, hi2 = _reflect_bounds(size, align)
        x, _ = _reflect_arr(xp, x, lo2, hi2, one)
        x = xp.clip(x, 0, size - 1)
    return x


def _cubic_arr(t):
    """The bicubic tap weights at ``t`` and their derivatives in ``t``."""
    a = _CUBIC_A

    def d1(x):
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def d2(x):
        return (3 * a * x - 10 * a) * x + 8 * a

    dw = [d2(t + 1), d1(t), -d1(1 - t), -d2(2 - t)]
    return _cubic_coeffs(t), dw


def _taps(xp, grid, sizes, mode: str, padding: str, align: bool):
    """Yield (lin (N, L) int, weight (N, L), dweights [per grid component] or None) per tap;
    also returns the chain multipliers of the grid components."""
    n = grid.shape[0]
    k = len(sizes)
    g = grid.reshape(n, -1, k)
    dims = list(reversed(sizes))  # grid component order: W, H, D
    strides = [1] * k
    for j in range(1, k):
        strides[j] = strides[j - 1] * dims[j - 1]
    dt = grid.dtype
    taps = []
    if mode == "bicubic":
        mults = []
        w_all, dw_all, base = [], [], []
        for j in range(2):
            u, m = _unnorm_arr(xp, g[:, :, j], dims[j], align)
            mults.append(xp.full(u.shape, m, dtype=dt))
            f = xp.floor(u)
            w, dw = _cubic_arr(u - f)
            w_all.append(w)
            dw_all.append(dw)
            base.append(f)
        for jy in range(4):
            yy = _int_coord(xp, base[1] + (jy - 1), dims[1], padding, align)
            oky = (yy >= 0) & (yy <= dims[1] - 1)
            yi = xp.where(oky, yy, 0).astype(xp.intp)  # where: NaN-safe
            for ix in range(4):
                xx = _int_coord(xp, base[0] + (ix - 1), dims[0], padding, align)
                ok = oky & (xx >= 0) & (xx <= dims[0] - 1)
                xi = xp.where(ok, xx, 0).astype(xp.intp)
                w = w_all[0][ix] * w_all[1][jy] * ok  # a product: NaN grid points give NaN
                dws = [dw_all[0][ix] * w_all[1][jy] * ok, w_all[0][ix] * dw_all[1][jy] * ok]
                taps.append((xi + yi * strides[1], w, dws))
        return taps, mults
    src, mults = [], []
    for j in range(k):
        x, m = _src_arr(xp, g[:, :, j], dims[j], padding, align)
        src.append(x)
        mults.append(m)
    if mode == "nearest":
        lin, ok = 0, True
        for j in range(k):
            r = xp.rint(src[j])
            ok_j = (r >= 0) & (r <= dims[j] - 1)
            ok = ok & ok_j
            lin = lin + xp.where(ok_j, r, 0).astype(xp.intp) * strides[j]
        taps.append((lin, ok.astype(dt), None))
        return taps, mults
    lo = [xp.floor(x) for x in src]
    for corner in range(1 << k):
        lin, ok = 0, True
        fs = []
        for j in range(k):
            up = (corner >> j) & 1
            p = lo[j] + up
            fs.append((src[j] - lo[j]) if up else (lo[j] + 1 - src[j]))
            ok_j = (p >= 0) & (p <= dims[j] - 1)
            ok = ok & ok_j
            lin = lin + xp.where(ok_j, p, 0).astype(xp.intp) * strides[j]
        w = fs[0]
        for f in fs[1:]:
            w = w * f
        w = w * ok  # a product, so a NaN grid point gives NaN (like torch)
        dws = []
        for j in range(k):
            d = 1.0 if (corner >> j) & 1 else -1.0
            for i in range(k):
                if i != j:
                    d = d * fs[i]
            dws.append((d * ok).astype(dt))
        taps.append((lin, w.astype(dt), dws))
    return taps, mults


@op(names=_grid_names, method=False)
def grid_sampler(xp, input, grid, interpolation_mode=0, padding_mode=0, align_corners=False):
    """torch.grid_sampler: samples ``input`` (N, C, *in) at the normalized ``grid`` points
    (N, *out, k) (modes 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border,
    2 reflection)."""
    odt = input.dtype
    if _check_grid(input, grid, interpolation_mode):
        return xp.zeros(input.shape[:2] + grid.shape[1:-1], odt)
    if odt.itemsize < 4:  # half precision (float16, bfloat16) computes in float32
        input, grid = input.astype(xp.float32), grid.astype(xp.float32)
    n, c = input.shape[:2]
    sizes = input.shape[2:]
    out_sp = grid.shape[1:-1]
    taps, _ = _taps(
        xp, grid, sizes, _INTERP[int(interpolation_mode)], _PADDING[int(padding_mode)],
        bool(align_corners),
    )  # fmt: skip
    # channels-last rows: each sample point gathers C contiguous values
    rows_of = _rows(xp, n, input)
    inp = _channels_last(xp, input)
    out = None
    for lin, w, _d in taps:
        v = xp.take(inp, rows_of(lin), axis=0)
        v *= w.reshape(-1, 1)
        if out is None:
            out = v
        else:
            out += v
    out = out.reshape(n, -1, c).transpose(0, 2, 1)
    return xp.ascontiguousarray(out).reshape(n, c, *out_sp).astype(odt, copy=False)


def _grid_sampler_nd(k: int, input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler restricted to ``k`` spatial dims (torch's entry points of that name)."""
    _check_grid_shapes(list(input.shape), list(grid.shape), interpolation_mode, k)
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """Samples a (N, C, H, W) ``input`` at the normalized (N, H_out, W_out, 2) ``grid`` points:
    ``F.grid_sample`` with integer modes (interpolation 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection)."""
    return _grid_sampler_nd(2, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """:func:`grid_sampler_2d` for a (N, C, D, H, W) ``input`` and a (N, D_out, H_out, W_out, 3)
    ``grid`` (interpolation 0 trilinear or 1 nearest)."""
    return _grid_sampler_nd(3, input, grid, interpolation_mode, padding_mode, align_corners)


def _channels_last(xp, a):
    """(N, C, *sp) -> contiguous (N * prod(sp), C)."""
    n, c = a.shape[:2]
    return xp.ascontiguousarray(a.reshape(n, c, -1).transpose(0, 2, 1)).reshape(-1, c)


def _rows(xp, n: int, input):
    hw = 1
    for s_ in input.shape[2:]:
        hw *= s_
    off = (xp.arange(n, dtype=xp.intp) * hw).reshape(n, 1)
    return lambda lin: (lin + off).reshape(-1)


# torch has one kernel per rank: GridSampler2DBackward0 / GridSampler3DBackward0
grid_sampler.op.name_rule = lambda node: f"GridSampler{len(node.meta[0][0]) - 2}DBackward0"


@grid_sampler.vjp
def _(grad, input, grid, needs, interpolation_mode, padding_mode, align_corners):
    from ...autograd.grad_mode import _state
    from ..tensor import _wrap

    if _state.enabled:  # create_graph: differentiate the composite, which is differentiable
        from ...autograd.engine import grad as _grad

        targets = [t for t, nd in zip((input, grid), needs) if nd]
        out = _grid_sampler_composite(input, grid, interpolation_mode, padding_mode, align_corners)
        gs = list(_grad(out, targets, grad, create_graph=True, allow_unused=True))
        return tuple(gs.pop(0) if nd else None for nd in needs)
    xi, xg, go = input._data, grid._data, grad._data
    xp = _xp_of(xi)
    odt = xi.dtype
    if odt.itemsize < 4:
        xi, xg, go = xi.astype(xp.float32), xg.astype(xp.float32), go.astype(xp.float32)
    n, c = xi.shape[:2]
    sizes = xi.shape[2:]
    hw = int(np.prod(sizes))
    mode = _INTERP[int(interpolation_mode)]
    taps, mults = _taps(xp, xg, sizes, mode, _PADDING[int(padding_mode)], bool(align_corners))
    g_cl = _channels_last(xp, go) if needs[1] and mode != "nearest" else None  # (N * L, C)
    rows_of = _rows(xp, n, xi)
    inp = _channels_last(xp, xi) if needs[1] and mode != "nearest" else None
    gin = ggrid = None
    if needs[0]:
        g3 = go.reshape(n, c, -1)
        rows = xp.concatenate([rows_of(lin) for lin, _w, _d in taps])  # (T * N * L,)
        ws = xp.stack([w for _l, w, _d in taps])  # (T, N, L)
        gin = _scatter_channels(xp, rows, ws, g3, n * hw).astype(odt, copy=False)
        gin = _wrap(gin.reshape(xi.shape))
    if needs[1]:
        k = len(sizes)
        if mode == "nearest":
            gg = xp.zeros(xg.shape, dtype=odt)
        else:
            comps = [0] * len(mults)
            for lin, _w, dws in taps:
                v = xp.take(inp, rows_of(lin), axis=0)
                gv = xp.einsum("ij,ij->i", g_cl, v).reshape(n, -1)
                for j, d in enumerate(dws):
                    comps[j] = comps[j] + gv * d
            gg = xp.stack([comps[j] * mults[j] for j in range(k)], -1).reshape(xg.shape)
        ggrid = _wrap(gg.astype(odt, copy=False))
    return gin, ggrid


def _scatter_channels(xp, rows, ws, g3, n_rows: int):
    """Input gradient (N, C, n_rows / N): every tap's ``w * grad`` added at its source row.

    rows: (T * N * L,) flat source rows (batch offset included); ws: (T, N, L) tap weights;
    g3: (N, C, L) the output gradient."""
    n, c = g3.shape[:2]
    if xp is np:  # one bincount per channel beats ufunc.at and a (rows x C) flat bincount
        out = np.empty((c, n_rows), dtype=np.float64)
        for j in range(c):
            out[j] = np.bincount(rows, weights=(ws * g3[:, j]).reshape(-1), minlength=n_rows)
        return out.reshape(c, n, -1).transpose(1, 0, 2).astype(g3.dtype)
    t = ws.shape[0]
    hw = n_rows // n
    lin = rows.reshape(t, n, 1, -1) - (xp.arange(n, dtype=rows.dtype) * hw).reshape(1, n, 1, 1)
    base = (xp.arange(n * c, dtype=rows.dtype) * hw).reshape(1, n, c, 1)
    idx = (lin + base).reshape(-1)
    wts = (ws[:, :, None, :] * g3[None]).reshape(-1)
    out = xp.bincount(idx, weights=wts, minlength=n_rows * c)
    return out.reshape(n, c, hw).astype(g3.dtype, copy=False)


def _xp_of(a):
    from ..device import array_module

    return array_module(a)
