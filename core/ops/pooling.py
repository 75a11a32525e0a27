"""Pooling: max / average pooling over window views, adaptive, fractional, unpooling.

Kernels loop over the kernel offsets only (never over batch or pixels): each offset is one strided
view of the (padded) input, so a 2x2 max pool is three ``maximum`` calls (numpy's reductions over
a reshaped (.., Ho, 2, Wo, 2) view are ~50x slower). Max pooling's node keeps only its input and
finds the argmax again in backward by comparing each offset's view with the window maxima (the
first maximum of each window, torch's tie rule; the last NaN where a window holds NaNs): that
costs about what storing indices would, keeps the no-indices forward lean, and lets the output be
changed in place (pool -> relu_) as in torch. Derivatives are registered ops that come in linear
pairs (scatter into the argmax positions <-> gather from them; average pooling <-> its strided
add), so double backward works. Every pooling op keeps all names (spec 4.3 / P129).
"""

from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from ...autograd.grad_mode import _state as _grad_state
from .. import layout as _layout
from ..arg_errors import as_int as _as_int
from ..arg_errors import int_list_error as _parser_int_list_error
from ..kernels.fused_pool import max_pool_2x2_kernels
from ..names import keep, unify_inputs
from ..registry import backward_names, op
from ..tensor import _wrap

__all__: list = []

_WORDS = {1: "one", 2: "two", 3: "three"}
_LETTERS = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}
_INT64 = "int64"


# ---------------------------------------------------------------------- argument checks
def _ints(v, nd, fn, what, style):
    """An int or a sequence of ints as an nd-tuple, with torch's messages per function family."""
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0 and what == "stride"):
        return None
    if not isinstance(v, (tuple, list)):
        n = _as_int(v, True)  # (a numpy integer, a 0-d integer tensor)
        if n is None:
            pos = {"kernel_size": 2, "stride": 3, "padding": 4, "dilation": 5}[what]
            raise _parser_int_list_error(fn, what, pos, v)
        return (n,) * nd
    for i, x in enumerate(v):  # torch's argument parser: ints only (int() would truncate)
        if _as_int(x, i == 0) is None:
            raise _int_list_error(fn, what, i, v)
    v = tuple(int(x) for x in v)
    if style == "max1":
        if len(v) == 1:
            return v
        form = {
            "kernel_size": "an int, list of ints or tuple of ints",
            "stride": "None, an int, list of ints, or tuple of ints",
            "padding": "an int, list of ints, or tuple of ints",
            "dilation": "an int, list of ints or tuple of ints",
        }[what]
        raise RuntimeError(f"{fn}() {what} must be {form} of size 1 but got size {len(v)}")
    if style in ("avg1", "max1i"):
        if len(v) == 1:
            return v
        raise RuntimeError(f"{fn}() argument '{what}' should contain one int (got {len(v)})")
    if len(v) == 1:
        return v * nd
    if len(v) == nd:
        return v
    w = _WORDS[nd]
    if style == "avg3":
        form = {
            "kernel_size": f"be a single int, or a tuple of {w} ints",
            "stride": f"be omitted, a single int, or a tuple of {w} ints",
            "padding": f"be a single int, or a tuple of {w} ints",
        }[what]
    else:
        form = {
            "kernel_size": f"either be a single int, or a tuple of {w} ints",
            "stride": f"either be omitted, a single int, or a tuple of {w} ints",
            "padding": f"either be a single int, or a tuple of {w} ints",
            "dilation": f"be either a single int, or a tuple of {w} ints",
        }[what]
    raise RuntimeError(f"{fn}: {what} must {form}")


def _int_list_error(fn: str, what: str, i: int, v, pos: int | None = None) -> TypeError:
    """torch's parser error for element ``i`` (no int) of the int list ``v`` given as
    ``what``, the ``pos``-th argument (by default that of the pooling functions' signatures)."""
    if pos is None and not i:
        pos = {"kernel_size": 2, "stride": 3, "output_size": 3, "padding": 4, "dilation": 5}[what]
    return _parser_int_list_error(fn, what, pos, v, i)


def _parse_lists(fn: str, items: tuple, divisor=None) -> None:
    """torch's argument parser over the int-list options ``items`` ((name, value) in signature
    order): each option's type and first element, then ``divisor`` (an int option), then each
    option's other elements, the last option first (its bindings read them right to left)."""
    for what, v in items:
        if not isinstance(v, (tuple, list)):
            _ints(v, 1, fn, what, "max")  # (a scalar: its type errors)
        elif v and _as_int(v[0], True) is None:
            raise _int_list_error(fn, what, 0, v)
    if divisor is not None and (isinstance(divisor, bool) or not hasattr(divisor, "__index__")):
        raise TypeError(
            f"{fn}(): argument 'divisor_override' must be int, not {type(divisor).__name__}"
        )
    for what, v in reversed(items):
        if isinstance(v, (tuple, list)):
            for i, x in enumerate(v[1:], 1):
                if _as_int(x, False) is None:  # (a bool past the first is an int)
                    raise _int_list_error(fn, what, i, v)


def _geometry(
    fn,
    nd,
    style,
    kernel_size,
    stride,
    padding,
    dilation=1,
    before_values=None,
    parse_as=None,
    divisor=None,
    shape=None,
):
    """(kernel, stride, padding, dilation) as nd-tuples, checked with torch's messages and in
    its order: the parser's (as ``parse_as``), the lengths, ``before_values()``, the values."""
    if kernel_size is None:
        raise TypeError(f"{fn}() missing required argument 'kernel_size'")
    opts = (("kernel_size", kernel_size), ("stride", stride), ("padding", padding))
    if style not in ("avg1", "avg3") and fn[:3] != "avg":
        opts += (("dilation", dilation),)
    _parse_lists(parse_as or fn, opts, divisor)
    if shape is not None:
        _check_first(fn, style, shape)
    k = _ints(kernel_size, nd, fn, "kernel_size", style)
    s = _ints(stride, nd, fn, "stride", style) or k
    p = _ints(padding, nd, fn, "padding", style)
    d = _ints(dilation, nd, fn, "dilation", style)
    if before_values is not None:
        before_values()
    if style == "max1":
        for what, v, ok, cond in (
            ("kernel_size", k, k[0] > 0, "greater than zero"),
            ("stride", s, s[0] > 0, "greater than zero"),
            ("padding", p, p[0] >= 0, "non-negative"),
            ("dilation", d, d[0] > 0, "greater than zero"),
        ):
            if not ok:
                raise RuntimeError(f"{fn}() {what} must be {cond}, but got {v[0]}")
            if what == "padding" and p[0] > k[0] // 2:  # checked before the dilation
                raise RuntimeError(
                    f"{fn}() padding should be at most half of kernel size, but got "
                    f"padding={p[0]} and kernel_size={k[0]}"
                )
        return k, s, p, d
    if style in ("avg1", "max1i"):  # torch runs these 1-d pools as 2-d pools of height 1
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    # torch sizes the output dim by dim (checking stride, pad and the dilated kernel's half,
    # divided in C: truncated) before it checks kernel, stride and dilation are positive
    for ki, si, pi, di in zip(k, s, p, d):
        if si == 0:
            raise RuntimeError("stride should not be zero")
        if pi < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pi}")
        if pi > int(((ki - 1) * di + 1) / 2):
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pi}, kernel_size={ki} and dilation={di}"
            )
    names = _LETTERS[len(k)]

    def show(prefix, v):
        return " ".join(f"{prefix}{n}: {x}" for n, x in zip(names, v))

    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got {show('k', k)}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got {show('d', s)}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {show('dilation', d)}")
    if style in ("avg1", "max1i"):
        k, s, p, d = k[1:], s[1:], p[1:], d[1:]
    return k, s, p, d


def _out_len(n, k, s, p, d, ceil):
    """torch's pooling output length (ceil mode: the last window starts inside input or left pad)."""
    o = (n + 2 * p - d * (k - 1) - 1 + ((s - 1) if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def _check_input(fn, nd, style, shape):
    """The input rank and empty-dim checks of torch's pooling functions."""
    nd_in = len(shape)
    if style == "max1":
        if nd_in not in (2, 3) or 0 in shape[-2:]:
            raise RuntimeError(
                f"{fn}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                f"for input, but got:{list(shape)}"
            )
        return
    if style in ("avg1", "max1i"):
        if nd_in not in (2, 3):
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {nd_in}-dimensional tensor for argument #1 "
                f"'self' (while checking arguments for {fn})"
            )
        if 0 in shape[-2:]:
            s4 = list(shape[:-1]) + [1, shape[-1]]
            raise RuntimeError(
                "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                f"but got:{s4}"
            )
        return
    if fn == "avg_pool2d":
        _check_plane_dim(shape)
    else:
        _check_rank(nd, shape)
    if 0 in shape[-nd - 1 :] or nd_in > nd + 2:  # (only avg_pool2d gets here with > nd + 2)
        if nd == 2:
            raise RuntimeError(
                "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                f"but got:{list(shape)}"
            )
        where = "max_pool3d_with_indices_out_cpu_template" if fn == "max_pool3d" else fn
        # torch's text names the dimension by its length (so always 0), not by its index
        raise RuntimeError(
            f"{where}(): Expected input's non-batch dimensions to have positive length, but input "
            f"has a shape of {list(shape)} and non-batch dimension 0 has length zero!"
        )


def _check_plane_dim(shape):
    """torch's 2-d average pooling indexes dim -3 (the planes) before it checks the options."""
    if len(shape) < 3:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-len(shape)}, "
            f"{len(shape) - 1}], but got -3)"
        )


def _check_rank(nd, shape):
    if len(shape) not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"
        )


def _check_first(fn, style, shape):
    """The input checks torch's 1-d pools make before looking at the options."""
    if style == "max1" or (style in ("avg1", "max1i") and len(shape) not in (2, 3)):
        _check_input(fn, 1, style, shape)


def _out_shape(fn, style, shape, k, s, p, d, ceil):
    nd = len(k)
    S = shape[-nd:]
    if style in ("max", "max1i") and any(pi > ki // 2 for ki, pi in zip(k, p)):
        # torch's second pad check: against the kernel itself, not the dilated one
        if style == "max1i":
            msg = f"padW = {p[0]}, padH = 0, kW = {k[0]}, kH = 1"
        elif nd == 2:
            msg = f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}"
        else:
            msg = f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}"
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got {msg}"
        )
    o = tuple(_out_len(n, *g, ceil) for n, *g in zip(S, k, s, p, d))
    if style == "avg3" and any(n < ki for n, ki in zip(S, k)):
        o = (0,)  # torch: the input (without padding) must hold one kernel
    if min(o) <= 0:
        if style == "max1":
            raise RuntimeError(f"{fn}() Invalid computed output size: {o[0]}")
        if style == "avg3":
            raise RuntimeError(
                f"input image (T: {S[0]} H: {S[1]} W: {S[2]}) smaller than kernel size "
                f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})"
            )
        c = shape[-nd - 1] if len(shape) > nd else 1
        ins, outs = (c,) + S, (c,) + o
        if style in ("avg1", "max1i"):
            ins, outs = (c, 1) + S, (c, 1) + o
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, ins))}). Calculated output size: "
            f"({'x'.join(map(str, outs))}). Output size is too small"
        )
    return o


def _dtype_name(dtype) -> str:
    """torch's scalar-type name of a numpy dtype (Long, Bool, ...)."""
    from ..dtype import _FROM_NP, SCALAR_NAMES

    d = _FROM_NP[dtype]
    return SCALAR_NAMES.get(d.name, d.name.capitalize())


def _unsupported(fn, dtype):
    return NotImplementedError(f"\"{fn}\" not implemented for '{_dtype_name(dtype)}'")


def _no_int(fn, a, ok_ints):
    """torch's dtype dispatch: bool and complex never, integers only where ``ok_ints``."""
    kind = a.dtype.kind
    if kind == "b" or (kind in "iu" and not ok_ints) or kind == "c":
        raise _unsupported(fn, a.dtype)


# ---------------------------------------------------------------------- plans (per-call cost)
_PLANS: dict = {}


def _cached(key):
    """The checked geometry of an earlier call with the same input shape, dtype and options
    (checks and output sizes cost more than a small pool itself); None if new or unhashable."""
    try:
        return _PLANS.get(key)
    except TypeError:  # a list option: no caching
        return None


def _recheck(types, opts) -> bool:
    """Whether a cached plan must not be trusted: an option tuple holding anything but plain
    ints ((2, 2.0) == (2, 2) and (True, 1) == (1, 1) find the plan of a good call, but torch's
    parser refuses them). Plain-int options pay one ``in`` test."""
    if tuple in types:
        for v in opts:
            if type(v) is tuple:
                for x in v:
                    if type(x) is not int:
                        return True
    return False


def _store(key, plan):
    try:
        if len(_PLANS) > 2048:
            _PLANS.clear()
        _PLANS[key] = plan
    except TypeError:
        pass
    return plan


# ---------------------------------------------------------------------- window views
@functools.lru_cache(maxsize=512)
def _windows(nd, k, s, d, o):
    """The index tuple of the strided view of every kernel offset, row-major."""
    per_dim = [
        [slice(j * di, j * di + (oi - 1) * si + 1, si) for j in range(ki)]
        for ki, si, di, oi in zip(k, s, d, o)
    ]
    return tuple((Ellipsis,) + sl for sl in itertools.product(*per_dim))


def _pad_amounts(S, k, s, p, d, o):
    """Left and right padding so that every window lies inside the buffer."""
    right = [
        max((oi - 1) * si + (ki - 1) * di + 1 - pi - n, 0)
        for n, ki, si, pi, di, oi in zip(S, k, s, p, d, o)
    ]
    return p, right


def _padded(xp, a, nd, left, right, fill):
    """``a`` padded by ``left``/``right`` on its last nd dims with ``fill`` (a itself if no pad)."""
    if not any(left) and not any(right):
        return a
    S = a.shape[-nd:]
    shape = a.shape[:-nd] + tuple(n + lo + hi for n, lo, hi in zip(S, left, right))
    buf = xp.full(shape, fill, a.dtype)
    buf[(Ellipsis,) + tuple(slice(lo, lo + n) for lo, n in zip(left, S))] = a
    return buf


def _crop(buf, nd, left, S):
    if not any(left) and buf.shape[-nd:] == tuple(S):
        return buf
    return buf[(Ellipsis,) + tuple(slice(lo, lo + n) for lo, n in zip(left, S))]


def _valid_masks(xp, nd, S, k, s, p, d, o):
    """Per offset: a broadcastable bool mask of windows whose position at that offset is inside
    the input (None when no window ever reaches padding)."""
    if not any(p) and all(
        (oi - 1) * si + (ki - 1) * di < n for n, ki, si, di, oi in zip(S, k, s, d, o)
    ):
        return None
    per_dim = []
    for i, (n, ki, si, pi, di, oi) in enumerate(zip(S, k, s, p, d, o)):
        shape = (oi,) + (1,) * (nd - 1 - i)
        pos = xp.arange(oi).reshape(shape) * si - pi
        per_dim.append([((pos + j * di) >= 0) & ((pos + j * di) < n) for j in range(ki)])
    masks = []
    for combo in itertools.product(*per_dim):
        m = combo[0]
        for c in combo[1:]:
            m = m & c
        masks.append(m)
    return masks


def _flat_positions(xp, nd, S, k, s, p, d, o):
    """Per offset: the flat per-plane input index of each window's element at that offset."""
    strides = [1] * nd
    for i in range(nd - 2, -1, -1):
        strides[i] = strides[i + 1] * S[i + 1]
    per_dim = []
    for i, (ki, si, pi, di, oi) in enumerate(zip(k, s, p, d, o)):
        shape = (oi,) + (1,) * (nd - 1 - i)
        pos = xp.arange(oi, dtype=_INT64).reshape(shape) * si - pi
        per_dim.append([(pos + j * di) * strides[i] for j in range(ki)])
    out = []
    for combo in itertools.product(*per_dim):
        f = combo[0]
        for c in combo[1:]:
            f = f + c
        out.append(f)
    return out


def _min_fill(xp, a):
    return float("-inf") if a.dtype.kind in "fV" else xp.iinfo(a.dtype).min


# ---------------------------------------------------------------------- max pooling kernels
def _max_of(xp, buf, views):
    if len(views) == 1:
        return buf[views[0]].copy()
    m = xp.maximum(buf[views[0]], buf[views[1]])
    for v in views[2:]:
        xp.maximum(m, buf[v], out=m)
    return m


def _max_values(xp, a, k, s, p, d, o):
    nd = len(k)
    left, right = _pad_amounts(a.shape[-nd:], k, s, p, d, o)
    buf = _padded(xp, a, nd, left, right, _min_fill(xp, a))
    return _max_of(xp, buf, _windows(nd, k, s, d, o))


class _Argmax:
    """The padded input, window views and maxima of one max pooling: the argmax is found from
    these by comparison (``hits``), in forward (indices) or again in backward."""

    __slots__ = ("buf", "has_nan", "left", "m", "shape", "valid", "views")

    def __init__(self, xp, a, k, s, p, d, o, m=None):
        nd = len(k)
        S = a.shape[-nd:]
        self.left, right = _pad_amounts(S, k, s, p, d, o)
        self.shape = a.shape[:-nd] + tuple(n + lo + hi for n, lo, hi in zip(S, self.left, right))
        fill = _min_fill(xp, a)
        self.buf = _padded(xp, a, nd, self.left, right, fill)
        self.views = _windows(nd, k, s, d, o)
        self.m = _max_of(xp, self.buf, self.views) if m is None else m
        # padding (the fill value) can only tie with a window whose real values all equal the
        # fill (-inf): only then do the hits need masking to positions inside the input
        self.valid = _valid_masks(xp, nd, S, k, s, p, d, o)
        if self.valid is not None and not bool((self.m == fill).any()):
            self.valid = None
        # one host sync: NaN windows take torch's other rule (the last NaN)
        self.has_nan = self.m.dtype.kind in "fV" and bool(xp.isnan(self.m).any())

    def hits(self, xp):
        """Yield (offset number, view, hit mask): hit marks the windows whose argmax is at that
        offset (torch's rule: the first maximum; the last NaN in a window holding NaNs)."""
        buf, views, valid, m = self.buf, self.views, self.valid, self.m
        left_over = None
        last = len(views) - 1
        hit = xp.empty(m.shape, bool)  # one buffer, reused: consumers use each mask at once
        for n, v in enumerate(views):
            xp.equal(buf[v], m, out=hit)
            if valid is not None:
                hit &= valid[n]
            if left_over is None:
                if n < last:
                    left_over = ~hit
            else:
                hit &= left_over
                if n < last:
                    left_over ^= hit
            yield n, v, hit
        if self.has_nan:
            left_over = xp.isnan(m)
            for n in range(last, -1, -1):
                hit = xp.isnan(buf[views[n]]) & left_over
                left_over ^= hit
                yield n, views[n], hit

    def stray(self, xp, S, k, s, p, d, o):
        """The windows lying wholly in padding (dilation can skip the input) and torch's index
        for them (``_first_inside``), as flat per-plane positions ``idx`` and a mask ``keep``
        of the windows whose position is inside the plane (torch writes the others out of
        it); None when every window reaches the input."""
        if self.valid is None:
            return None
        inside = self.valid[0].copy()
        for v in self.valid[1:]:
            inside |= v
        if bool(inside.all()):
            return None
        size = 1
        for n in S:
            size *= n
        idx = xp.broadcast_to(_first_inside(xp, S, k, s, p, d, o), self.m.shape)
        keep = ~inside & (idx < size)
        return xp.where(keep, idx, 0), keep


def _max_indices(xp, a, m, k, s, p, d, o):
    nd = len(k)
    S = a.shape[-nd:]
    flat = _flat_positions(xp, nd, S, k, s, p, d, o)
    # a window lying wholly in padding (possible with dilation) has no hit: torch reports the
    # first position at or after the input's start on the window's dilation grid
    first = _first_inside(xp, S, k, s, p, d, o)
    idx = xp.broadcast_to(first, m.shape).copy()
    for n, _, hit in _Argmax(xp, a, k, s, p, d, o, m).hits(xp):
        idx += hit * (flat[n] - first)
    return idx


def _first_inside(xp, S, k, s, p, d, o):
    nd = len(k)
    flat = None
    stride = 1
    for i in range(nd - 1, -1, -1):
        start = xp.arange(o[i], dtype=_INT64) * s[i] - p[i]
        start = xp.where(start < 0, start + ((-start + d[i] - 1) // d[i]) * d[i], start)
        term = start.reshape((o[i],) + (1,) * (nd - 1 - i)) * stride
        flat = term if flat is None else flat + term
        stride *= S[i]
    return flat


def _overlap(k, s, d) -> bool:
    return any((ki - 1) * di + 1 > si for ki, si, di in zip(k, s, d))


def _tiles(S, k, s, d, o) -> bool:
    """The windows cover the input exactly, each position once (kernel == stride, no rest)."""
    return all(di == 1 and ki == si and oi * si == n for n, ki, si, di, oi in zip(S, k, s, d, o))


def _max_out(a, k, s, p, d, ceil_mode):
    nd = len(k)
    return tuple(_out_len(n, *g, ceil_mode) for n, *g in zip(a.shape[-nd:], k, s, p, d))


def _max_backward_kernel(xp, grad, a, k, s, p, d, ceil_mode):
    """Scatter ``grad`` into the argmax position of each window (a strided write per offset)."""
    nd = len(k)
    S = a.shape[-nd:]
    o = _max_out(a, k, s, p, d, ceil_mode)
    am = _Argmax(xp, a, k, s, p, d, o)
    add = am.has_nan or _overlap(k, s, d)
    exact = not add and not any(p) and _tiles(S, k, s, d, o)
    out = (xp.empty if exact else xp.zeros)(am.shape, grad.dtype)
    # grad * hit is the fast select; an inf/NaN upstream gradient needs where() (inf * 0 = NaN)
    finite = grad.dtype.kind not in "fV" or bool(xp.isfinite(grad).all())
    zero = grad.dtype.type(0)
    tmp = xp.empty(grad.shape, grad.dtype) if add and finite else None
    for _, v, hit in am.hits(xp):
        if not finite:
            if add:
                out[v] += xp.where(hit, grad, zero)
            else:
                out[v] = xp.where(hit, grad, zero)
        elif add:
            out[v] += xp.multiply(grad, hit, out=tmp)
        else:  # disjoint windows: each input position is written once, straight into place
            xp.multiply(grad, hit, out=out[v])
    out = _crop(out, nd, am.left, S)
    stray = am.stray(xp, S, k, s, p, d, o)
    if stray is not None:  # no hit in these windows: their gradient goes to torch's index
        idx, keep = stray
        out = out + _scatter_kernel(xp, xp.where(keep, grad, 0), idx, S)
    return out


def _max_select_kernel(xp, src, a, k, s, p, d, ceil_mode):
    """``src`` (input-shaped) read at each window's argmax: the transpose of the scatter."""
    nd = len(k)
    o = _max_out(a, k, s, p, d, ceil_mode)
    am = _Argmax(xp, a, k, s, p, d, o)
    sb = _padded(
        xp,
        src,
        nd,
        am.left,
        [x - n - lo for x, n, lo in zip(am.shape[-nd:], a.shape[-nd:], am.left)],
        0,
    )
    out = xp.zeros(am.m.shape, src.dtype)
    finite = bool(xp.isfinite(src).all())
    zero = src.dtype.type(0)
    for _, v, hit in am.hits(xp):
        out += sb[v] * hit if finite else xp.where(hit, sb[v], zero)
    stray = am.stray(xp, a.shape[-nd:], k, s, p, d, o)
    if stray is not None:
        idx, keep = stray
        planes = _planes(src.shape, nd)
        picked = xp.take_along_axis(src.reshape(planes, -1), idx.reshape(planes, -1), axis=1)
        out += xp.where(keep, picked.reshape(out.shape), zero)
    return out


def _max_geom(nd, kernel_size, stride, padding, dilation):
    style = "max1" if nd == 1 else "max"
    return _geometry(f"max_pool{nd}d", nd, style, kernel_size, stride, padding, dilation)


def _make_max_pool(nd, name, with_indices):
    fn = f"max_pool{nd}d"
    # torch's max_pool1d_with_indices runs as a 2-d pool of height 1 (its checks and messages)
    style = ("max1i" if with_indices else "max1") if nd == 1 else "max"
    follow = _layout.follow_array_1d if nd == 1 else _layout.follow_array

    parse_as = fn + "_with_indices" if with_indices else fn

    def kernel(xp, input, kernel_size=None, stride=(), padding=0, dilation=1, ceil_mode=False):
        def rank_check():  # torch's 2-d and 3-d max pools check the rank before the values
            if nd > 1:
                _check_rank(nd, input.shape)

        opts = (kernel_size, stride, padding, dilation, ceil_mode)
        types = tuple(map(type, opts))
        key = (name, input.shape, input.dtype, opts, types)
        plan = _cached(key)
        if plan is None or _recheck(types, opts):
            k, s, p, d = _geometry(
                fn, nd, style, kernel_size, stride, padding, dilation, rank_check, parse_as,
                shape=input.shape,
            )  # fmt: skip
            _check_input(fn, nd, style, input.shape)
            o = _out_shape(fn, style, input.shape, k, s, p, d, ceil_mode)
            _no_int(
                "max_pool1d_impl" if style == "max1" else "max_pool2d" if nd == 1 else fn,
                input,
                style != "max1",
            )
            plan = _store(key, (k, s, p, d, o))
        k, s, p, d, o = plan
        m = _max_values(xp, input, k, s, p, d, o)
        if with_indices:
            idx = _max_indices(xp, input, m, k, s, p, d, o)
            # a channels_last input pools to channels_last outputs, as in torch
            return follow(xp, m, input), follow(xp, idx, input)
        if nd == 1:  # torch's max_pool1d (no indices) has its own kernel: always contiguous
            return _layout.row_major(xp, m)
        return _layout.follow_array(xp, m, input)

    kernel.__name__ = name
    kernel.__doc__ = f"{nd}-d max pooling over the last {nd} dims" + (
        " -> (values, flat per-plane indices)." if with_indices else "."
    )
    pool = op(names=keep, method=False, name=name, n_diff_out=1)(kernel)

    # only the input is saved (like torch, which saves input and indices): the output may be
    # changed in place (pool -> relu_) without invalidating the backward
    @pool.vjp
    def _(grad, input, kernel_size, stride, padding, dilation, ceil_mode):
        k, s, p, d = _max_geom(nd, kernel_size, stride, padding, dilation)
        return _max_pool_backward(grad, input, k, s, p, d, ceil_mode)

    return pool


def _make_max_linear(name, kernel_fn, doc):
    """One op of max pooling's linear pair: ``src`` scattered into (backward) or gathered from
    (select) each window's argmax; each is the other's derivative (linked below)."""

    def kernel(xp, src, input, kernel_size=(), stride=(), padding=(), dilation=(), ceil_mode=False):
        return kernel_fn(xp, src, input, kernel_size, stride, padding, dilation, ceil_mode)

    kernel.__name__ = name
    kernel.__doc__ = doc
    return op(names=keep, method=False, name=name)(kernel)


def _link_max_linear(pool, other):
    # the argmax is piecewise constant in ``input``: its gradient is zeros (torch's
    # zeros_like(self), so ``x.grad`` after a double backward is zeros, not None)
    @pool.vjp
    def _(g, input, kernel_size, stride, padding, dilation, ceil_mode):
        return other(g, input, kernel_size, stride, padding, dilation, ceil_mode), _zeros_of(
            g, input
        )


def _zeros_of(g, input):
    """The zero gradient of a pooling backward's ``input`` operand (its values only pick windows)."""
    return g.new_zeros(input.shape)


_max_pool_backward = _make_max_linear(
    "_max_pool_backward",
    _max_backward_kernel,
    "Max pooling's input gradient: ``src`` (the gradient) scattered into each window's argmax.",
)
_max_pool_select = _make_max_linear(
    "_max_pool_select",
    _max_select_kernel,
    "``src`` read at each window's argmax (max pooling's double backward: a gather).",
)
_link_max_linear(_max_pool_backward, _max_pool_select)
_link_max_linear(_max_pool_select, _max_pool_backward)


# ---------------------------------------------------------------------- 2x2 max pooling
@op(names=keep, method=False)
def _max_pool2x2(xp, input, cache=None):
    """2x2 stride-2 max pooling of planes with even sides (F.max_pool2d's common case). With a
    ``cache`` list, each window's argmax is kept there as three bool masks for the backward.

    The general path finds the argmax again in backward by comparing every window view with the
    maxima; views with a stride-2 inner axis run ~8x slower than contiguous data, and here the
    argmax costs two extra comparisons in forward instead: v1 > v0 and v3 > v2 within the
    pairs, m23 > m01 between them (strict: the first maximum wins ties, torch's rule). The four
    window elements are first copied apart into contiguous planes (one strided pass), so the
    comparisons run on contiguous data (a third faster than on the stride-2 views). On cupy
    the forward and backward are one fused kernel each (core/kernels/fused_pool.py), with the
    argmax kept as one int8 array."""
    fused = max_pool_2x2_kernels(xp, input.dtype)
    if fused is not None:
        m, arg = fused.forward(xp.ascontiguousarray(input))
        if cache is not None:
            cache.append(arg)
        return m
    h, w = input.shape[-2] // 2, input.shape[-1] // 2
    planes = xp.empty((4,) + input.shape[:-2] + (h, w), input.dtype)
    for k, (i, j) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        planes[k] = input[..., i::2, j::2]
    v0, v1, v2, v3 = planes
    m01 = xp.maximum(v0, v1)
    m23 = xp.maximum(v2, v3)
    if cache is not None:
        masks = (xp.greater(v1, v0), xp.greater(v3, v2), xp.greater(m23, m01))
    m = xp.maximum(m01, m23, out=m01)
    # a NaN makes the comparisons meaningless (torch then takes the NaN): the general backward
    if cache is not None and not bool(xp.isnan(m.sum())):
        cache.extend(masks)
    return _layout.follow_array(xp, m, input)  # channels_last in, channels_last out


@_max_pool2x2.vjp
def _(grad, input, cache):
    g = grad._data
    xp = _xp_of(grad)
    dt = input._data.dtype
    fused = max_pool_2x2_kernels(xp, dt)  # the forward's path: its cache holds the argmax
    if fused is not None and cache and not _grad_state.enabled:
        g = xp.ascontiguousarray(g.astype(dt, copy=False))
        return _wrap(fused.backward(g, cache[0], input.shape))
    if _grad_state.enabled or not cache or not bool(xp.isfinite(g.sum())):
        # double backward, a NaN input, or an inf/NaN gradient (inf * 0 = NaN in the products)
        return _max_pool_backward(grad, input, (2, 2), (2, 2), (0, 0), (1, 1), False)
    c01, c23, c = cache
    nc = ~c
    hits = (nc > c01, nc & c01, c > c23, c & c23)  # a > b on bools: a and not b
    out = xp.empty(input.shape, g.dtype)
    for (i, j), hit in zip(((0, 0), (0, 1), (1, 0), (1, 1)), hits):
        xp.multiply(g, hit, out=out[..., i::2, j::2])
    return _wrap(out)


max_pool1d = _make_max_pool(1, "max_pool1d", False)
max_pool2d = _make_max_pool(2, "max_pool2d", False)
max_pool3d = _make_max_pool(3, "max_pool3d", False)
max_pool1d_with_indices = _make_max_pool(1, "max_pool1d_with_indices", True)
_max_pool2d_with_indices = _make_max_pool(2, "_max_pool2d_with_indices", True)
_max_pool3d_with_indices = _make_max_pool(3, "_max_pool3d_with_indices", True)


# ---------------------------------------------------------------------- average pooling
def _avg_divisor(xp, S, k, s, p, o, count_include_pad, dtype):
    """Per-window divisor (broadcastable over the output): torch's window size rule."""
    nd = len(k)
    div = None
    for i, (n, ki, si, pi, oi) in enumerate(zip(S, k, s, p, o)):
        start = xp.arange(oi, dtype=_INT64) * si - pi
        end = xp.minimum(start + ki, n + pi)
        if count_include_pad:
            size = end - start
        else:
            size = xp.minimum(end, n) - xp.maximum(start, 0)
        size = size.reshape((oi,) + (1,) * (nd - 1 - i))
        div = size if div is None else div * size
    return div.astype(dtype)


def _avg_needs_divisor_array(S, k, s, p, o, count_include_pad) -> bool:
    # every window the full kernel size: one scalar divisor
    for n, ki, si, pi, oi in zip(S, k, s, p, o):
        last_end = (oi - 1) * si - pi + ki
        if count_include_pad:
            if last_end > n + pi:
                return True
        elif pi or last_end > n:
            return True
    return False


def _avg_forward_kernel(xp, a, k, s, p, o, ceil_mode, count_include_pad, divisor_override):
    nd = len(k)
    S = a.shape[-nd:]
    d = (1,) * nd
    left, right = _pad_amounts(S, k, s, p, d, o)
    is_int = a.dtype.kind in "iu"
    low = a.dtype.itemsize == 2 and not is_int  # float16 / bfloat16 accumulate in float32
    src = a.astype("float64") if is_int else a.astype("float32") if low else a
    buf = _padded(xp, src, nd, left, right, 0)
    views = _windows(nd, k, s, d, o)
    if len(views) == 1:
        acc = buf[views[0]].copy()
    else:
        acc = buf[views[0]] + buf[views[1]]
        for v in views[2:]:
            acc += buf[v]
    if divisor_override:
        acc /= acc.dtype.type(divisor_override)
    elif _avg_needs_divisor_array(S, k, s, p, o, count_include_pad):
        acc /= _avg_divisor(xp, S, k, s, p, o, count_include_pad, acc.dtype)
    else:
        n = 1
        for ki in k:
            n *= ki
        acc /= acc.dtype.type(n)
    if is_int:
        return xp.trunc(acc).astype(a.dtype)
    return acc.astype(a.dtype) if low else acc


def _avg_backward_kernel(xp, grad, S, k, s, p, o, ceil_mode, count_include_pad, divisor_override):
    nd = len(k)
    d = (1,) * nd
    if divisor_override:
        g = grad / grad.dtype.type(divisor_override)
    elif _avg_needs_divisor_array(S, k, s, p, o, count_include_pad):
        g = grad / _avg_divisor(xp, S, k, s, p, o, count_include_pad, grad.dtype)
    else:
        n = 1
        for ki in k:
            n *= ki
        g = grad / grad.dtype.type(n)
    left, right = _pad_amounts(S, k, s, p, d, o)
    shape = grad.shape[:-nd] + tuple(n + lo + hi for n, lo, hi in zip(S, left, right))
    add = _overlap(k, s, d)
    exact = not add and not any(p) and _tiles(S, k, s, d, o)
    out = (xp.empty if exact else xp.zeros)(shape, grad.dtype)
    for v in _windows(nd, k, s, d, o):
        if add:
            out[v] += g
        else:
            out[v] = g
    return _crop(out, nd, left, S)


def _avg_style(nd):
    return {1: "avg1", 2: "max", 3: "avg3"}[nd]


def _avg_geom(nd, kernel_size, stride, padding):
    return _geometry(f"avg_pool{nd}d", nd, _avg_style(nd), kernel_size, stride, padding)[:3]


def _check_divisor(divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")


def _follow_for(nd):
    """How a pool's result is laid out: 1-d pools run as 2-d ones of height 1 in torch
    (layout.follow_array_1d); its 3-d average and adaptive pools have no channels_last_3d
    kernels (contiguous results); the others keep a channels_last input's layout."""
    if nd == 1:
        return _layout.follow_array_1d
    if nd == 3:
        return lambda xp, a, like: _layout.row_major(xp, a)
    return _layout.follow_array


def _make_avg_pool(nd, name):
    fn = f"avg_pool{nd}d"
    style = _avg_style(nd)
    follow = _follow_for(nd)

    def kernel(
        xp,
        input,
        kernel_size=None,
        stride=(),
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        div = divisor_override
        opts = (kernel_size, stride, padding, ceil_mode, div)
        types = tuple(map(type, opts))
        key = (name, input.shape, input.dtype, opts, types)
        plan = _cached(key)
        if plan is None or _recheck(types, opts):

            def before_values():  # torch's order: (3-d: the rank), the divisor, the values
                if nd == 3:
                    _check_rank(nd, input.shape)
                _check_divisor(div)
                if nd == 2:
                    _check_plane_dim(input.shape)

            k, s, p, _ = _geometry(
                fn, nd, style, kernel_size, stride, padding, 1, before_values, divisor=div,
                shape=input.shape,
            )  # fmt: skip
            _check_input(fn, nd, style, input.shape)
            o = _out_shape(fn, style, input.shape, k, s, p, (1,) * nd, ceil_mode)
            where = "avg_pool3d_out_frame" if nd == 3 else "avg_pool2d"
            kind, size = input.dtype.kind, input.dtype.itemsize
            # torch: int64 is the one integer type; no half / bfloat16 in 3-d
            _no_int(where, input, kind == "i" and size == 8)
            if nd == 3 and size == 2 and kind in "fV":
                raise _unsupported(where, input.dtype)
            plan = _store(key, (k, s, p, o))
        k, s, p, o = plan
        out = _avg_forward_kernel(xp, input, k, s, p, o, ceil_mode, count_include_pad, div)
        return follow(xp, out, input)  # a padded input's buffer is contiguous

    # the input itself is saved (as torch saves self): it is an operand of the backward op, so
    # the first-order gradient has a graph to the input too (zeros) under create_graph=True
    def vjp(
        grad,
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override=None,
    ):
        k, s, p = _avg_geom(nd, kernel_size, stride, padding)
        return _avg_pool_backward(
            grad, input, k, s, p, ceil_mode, count_include_pad, divisor_override
        )

    if nd == 1:
        # torch's avg_pool1d has no divisor_override; an op's options (and what its node saves)
        # follow the parameter names, so the 1-d op gets signatures without it
        full_kernel, full_vjp = kernel, vjp

        def kernel(
            xp,
            input,
            kernel_size=None,
            stride=(),
            padding=0,
            ceil_mode=False,
            count_include_pad=True,
        ):
            return full_kernel(
                xp, input, kernel_size, stride, padding, ceil_mode, count_include_pad
            )

        def vjp(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad):
            return full_vjp(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad)

    kernel.__name__ = name
    kernel.__doc__ = f"{nd}-d average pooling over the last {nd} dims."
    pool = op(names=keep, method=False, name=name)(kernel)
    pool.vjp(vjp)
    return pool


@op(names=keep, method=False)
def _avg_pool_backward(
    xp,
    grad,
    input,
    kernel_size=(),
    stride=(),
    padding=(),
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """Average pooling's input gradient: each window's share added back (a strided add per
    kernel offset). ``input`` (the pooled tensor) gives the shape; its own gradient is zeros."""
    nd = len(kernel_size)
    S = tuple(input.shape[-nd:])
    return _avg_backward_kernel(
        xp,
        grad,
        S,
        kernel_size,
        stride,
        padding,
        grad.shape[-nd:],
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


@_avg_pool_backward.vjp
def _(
    gg, input_shape, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    return _avg_pool_apply(
        gg, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    ), gg.new_zeros(input_shape)


@op(names=keep, method=False)
def _avg_pool_apply(
    xp,
    input,
    kernel_size=(),
    stride=(),
    padding=(),
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """Average pooling with checked geometry (the backward's derivative)."""
    nd = len(kernel_size)
    o = tuple(
        _out_len(n, ki, si, pi, 1, ceil_mode)
        for n, ki, si, pi in zip(input.shape[-nd:], kernel_size, stride, padding)
    )
    return _avg_forward_kernel(
        xp, input, kernel_size, stride, padding, o, ceil_mode, count_include_pad, divisor_override
    )


@_avg_pool_apply.vjp
def _(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return _avg_pool_backward(
        grad,
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


avg_pool1d = _make_avg_pool(1, "avg_pool1d")
_avg_pool2d = _make_avg_pool(2, "_avg_pool2d")
_avg_pool3d = _make_avg_pool(3, "_avg_pool3d")
# their argument errors carry F's names (torch's ops are these)
_avg_pool2d.op.label = "avg_pool2d"
_avg_pool3d.op.label = "avg_pool3d"


# ---------------------------------------------------------------------- adaptive pooling
def _adaptive_bounds(n, o):
    """torch's adaptive windows: start = floor(i*n/o), end = ceil((i+1)*n/o) (host ints)."""
    starts = [(i * n) // o for i in range(o)]
    ends = [-((-(i + 1) * n) // o) for i in range(o)]
    return starts, ends


def _avg_matrix(xp, n, o, dtype):
    """The (o, n) averaging matrix of one adaptive dim."""
    i = xp.arange(o, dtype=_INT64).reshape(o, 1)
    j = xp.arange(n, dtype=_INT64).reshape(1, n)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    inside = (j >= start) & (j < end)
    return inside.astype(dtype) / (end - start).astype(dtype)


def _adaptive_avg_kernel(xp, a, out_size, transpose=False):
    """Adaptive average pooling as one GEMM per spatial dim (the windows are separable).

    Each dim in turn (last first) is moved last and contracted with its (o, n) averaging
    matrix in a single 2-d GEMM; the spatial dims come out reversed and are put back at the end.
    ``transpose``: ``a`` is a gradient and ``out_size`` the input's spatial size (the adjoint).
    """
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":  # 16-bit: in float32, rounded once
        return _adaptive_avg_kernel(xp, a.astype("float32"), out_size, transpose).astype(a.dtype)
    nd = len(out_size)
    lead = a.shape[: a.ndim - nd]
    if 0 in lead or 0 in out_size:  # nothing to average (any dtype: torch never looks at it)
        return xp.zeros(lead + tuple(out_size), a.dtype)
    if not transpose and all(o == 1 for o in out_size):  # global pooling: one mean
        n = 1
        for x in a.shape[a.ndim - nd :]:
            n *= x
        if a.dtype.char in "fd" and n:  # a GEMV by 1/n: ~7x numpy's mean over short rows
            m = a.reshape(-1, n) @ xp.full(n, 1.0 / n, dtype=a.dtype)
            return m.reshape(lead + (1,) * nd)
        return a.reshape(lead + (-1,)).mean(-1).reshape(lead + (1,) * nd)
    if transpose and all(o == 1 for o in a.shape[a.ndim - nd :]):
        n = 1
        for x in out_size:
            n *= x
        g = a / a.dtype.type(n)
        return xp.ascontiguousarray(xp.broadcast_to(g, lead + tuple(out_size)))
    y = a
    for i in range(nd - 1, -1, -1):
        axis = len(lead) + i
        if transpose:
            P = _avg_matrix(xp, out_size[i], a.shape[axis], a.dtype).T
        else:
            P = _avg_matrix(xp, a.shape[axis], out_size[i], a.dtype)
        if i != nd - 1:
            y = xp.moveaxis(y, axis, -1)
        shape = y.shape
        y = (y.reshape(-1, shape[-1]) @ P.T).reshape(shape[:-1] + (P.shape[0],))
    if nd > 1:  # spatial dims are reversed now
        y = xp.ascontiguousarray(
            y.transpose(tuple(range(len(lead))) + tuple(range(y.ndim - 1, len(lead) - 1, -1)))
        )
    if not transpose and a.dtype.kind == "f" and bool(xp.isnan(y).any()):
        # a NaN or an infinity in the input: the GEMMs' zero weights spread it over the whole
        # plane (0 * inf is NaN), where torch's window sums keep it to the windows holding it
        return _adaptive_avg_nonfinite(xp, a, out_size)
    return y


def _adaptive_avg_nonfinite(xp, a, out_size):
    """Adaptive average pooling of an input with NaNs or infinities, window by window as torch:
    the finite values averaged, then each window holding a NaN (or both infinities) NaN and
    each holding one infinity that infinity (found by pooling indicator planes)."""
    finite = xp.isfinite(a)
    y = _adaptive_avg_kernel(xp, xp.where(finite, a, a.dtype.type(0)), out_size)

    def holds(mask):
        return _adaptive_avg_kernel(xp, mask.astype(a.dtype), out_size) > 0

    pos, neg = holds(a == xp.inf), holds(a == -xp.inf)
    y = xp.where(pos, a.dtype.type(xp.inf), y)
    y = xp.where(neg, a.dtype.type(-xp.inf), y)
    return xp.where(holds(xp.isnan(a)) | (pos & neg), a.dtype.type(xp.nan), y)


def _adaptive_output_size(fn, nd, output_size, shape, check_input=None):
    """``output_size`` as an nd-tuple, checked in torch's order: its Python wrapper's length
    check, the argument parser's, the sizes' count, ``check_input(shape)``, negative sizes."""
    if nd > 1 and hasattr(output_size, "__len__") and len(output_size) >= len(shape):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if output_size is None:  # (None keeps a dim's size only inside a tuple)
        if nd == 1:
            raise TypeError(
                f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, not NoneType"
            )
        raise TypeError("object of type 'NoneType' has no len()")
    if isinstance(output_size, int):
        if isinstance(output_size, bool):
            raise TypeError(
                f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, not bool"
            )
        osz = (output_size,) * nd
    elif isinstance(output_size, (tuple, list)):
        osz = tuple(output_size)
    else:  # torch's 1-d pools parse it; the others first take its len() in Python
        tn = type(output_size).__name__
        if nd == 1:
            raise TypeError(
                f"{fn}(): argument 'output_size' (position 2) must be tuple of ints, not {tn}"
            )
        if not hasattr(output_size, "__len__"):
            raise TypeError(f"object of type '{tn}' has no len()")
        osz = tuple(output_size)
    if len(osz) != nd or nd == 1:  # torch parses the list before its kernel's checks
        _check_output_sizes(fn, nd, osz)
    if check_input is not None:
        check_input(shape)
    if len(osz) != nd:
        if nd == 1:
            raise RuntimeError(
                f"{fn}() argument 'output_size' should contain one int (got {len(osz)})"
            )
        if fn.startswith("adaptive_max"):
            raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {nd}")
        raise RuntimeError(f"{fn}: output_size must be {nd}")
    S = shape[-nd:]
    try:  # operator.index: a float or a string is no size (int() would take them)
        osz = tuple(S[i] if v is None else operator.index(v) for i, v in enumerate(osz))
    except TypeError:
        _check_output_sizes(fn, nd, osz)
        raise
    if any(v < 0 for v in osz):
        # torch's 1-d pools run as 2-d ones of height 1 (their messages show it)
        lead, sizes = list(shape[:-nd]), list(osz)
        if nd == 1:
            fn, lead, sizes = fn.replace("1d", "2d"), lead + [1], [1, *sizes]
        if fn.startswith("adaptive_max"):
            raise RuntimeError(_negative_dim(osz, lead))
        # (torch's 3-d message leaves out the last space)
        text = ", ".join(map(str, sizes[:2])) + ("," + str(sizes[2]) if nd == 3 else "")
        raise RuntimeError(
            f"{fn}: elements of output_size must be greater than or equal to 0 but received "
            "{" + text + "}"
        )
    return osz


def _negative_dim(osz, lead: list) -> str:
    """torch's message for an output of negative size: the first negative dim is named."""
    neg = next(v for v in osz if v < 0)
    return f"Trying to create tensor with negative dimension {neg}: {lead + list(osz)}"


def _check_output_sizes(fn: str, nd: int, osz: tuple) -> None:
    """torch's argument-parser error for a non-int element of an adaptive pool's output_size
    (None only where its Python code fills a dim in: beyond 1-d)."""
    for i, v in enumerate(osz):
        if (v is not None or nd == 1) and _as_int(v, i == 0) is None:
            raise _int_list_error(fn, "output_size", i, osz, pos=2)


def _empty_adaptive_grad(kind: str, shape: tuple, nd: int) -> RuntimeError:
    """torch's adaptive pooling backward refusing the gradient of an empty output (``kind``:
    avg or max; its 1-d pools run as 2-d ones of height 1)."""
    if nd == 1:
        shape, nd = (*shape[:-1], 1, shape[-1]), 2
    first = len(shape) - nd - 1 if len(shape) == nd + 2 else 0  # (the batch may be empty)
    dim = next((i for i in range(max(first, 1), len(shape)) if shape[i] == 0), first)
    return RuntimeError(
        f"adaptive_{kind}_pool{nd}d_backward(): Expected grad_output to have non-zero size for "
        f"non-batch dimensions, but grad_output has sizes {list(shape)} with dimension {dim} "
        "being empty"
    )


def _adaptive_check_input(fn, nd, shape):
    n = len(shape)
    if nd == 1:
        if n not in (2, 3):
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {n}-dimensional tensor for argument #1 "
                f"'self' (while checking arguments for {fn})"
            )
    elif n not in (nd + 1, nd + 2):
        sep = ": " if fn.startswith("adaptive_max") else " "
        raise RuntimeError(
            f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep}{list(shape)}"
        )
    # torch checks the spatial dims (adaptive avg 1-d/2-d, 1-d as 2-d of height 1) or every dim
    # after the first (adaptive max, adaptive avg 3-d)
    first = n - nd if fn in ("adaptive_avg_pool1d", "adaptive_avg_pool2d") else 1
    for i in range(first, n):
        if shape[i] == 0:
            name, sizes, dim = fn, list(shape), i
            if fn == "adaptive_avg_pool1d":
                name, sizes, dim = "adaptive_avg_pool2d", sizes[:-1] + [1, sizes[-1]], i + 1
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, "
                f"but input has sizes {sizes} with dimension {dim} being empty"
            )


# the names torch's dtype errors give (1-d pools run as 2-d ones; the 3-d kernels' cpu names)
_ADAPTIVE_KERNELS = {
    "adaptive_avg_pool1d": "adaptive_avg_pool2d",
    "adaptive_avg_pool3d": "adaptive_avg_pool3d_cpu",
    "adaptive_max_pool1d": "adaptive_max_pool2d",
    "adaptive_max_pool3d": "adaptive_max_pool3d_cpu",
}


def _adaptive_avg_checks(nd: int, shape: tuple, dtype, output_size) -> tuple:
    """torch's checks of an nd-d adaptive average pooling, in its order; the output size."""
    fn = f"adaptive_avg_pool{nd}d"

    def rank_check(shape):  # torch's 1-d pool checks the rank first; the others the sizes
        if nd == 1 and len(shape) not in (2, 3):
            _adaptive_check_input(fn, nd, shape)

    osz = _adaptive_output_size(fn, nd, output_size, shape, rank_check)
    if all(o == 1 for o in osz):  # torch takes a mean (of any rank): its dtype rule
        if dtype.kind in "biu":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_dtype_name(dtype)}"
            )
    else:
        _adaptive_check_input(fn, nd, shape)
        if dtype.kind in "biuc" and (nd == 3 or (0 not in shape and 0 not in osz)):
            # (an empty 1-d/2-d pool never reaches the kernel that looks at the dtype)
            raise _unsupported(_ADAPTIVE_KERNELS.get(fn, fn), dtype)
    return osz


def _make_adaptive_avg(nd, name):
    fn = f"adaptive_avg_pool{nd}d"

    def kernel(xp, input, output_size=None):
        osz = _adaptive_avg_checks(nd, input.shape, input.dtype, output_size)
        return _follow_for(nd)(xp, _adaptive_avg_kernel(xp, input, osz), input)

    kernel.__name__ = name
    kernel.__doc__ = f"{nd}-d adaptive average pooling to ``output_size``."
    pool = op(names=keep, method=False, name=name)(kernel)

    # input saved like torch's self: an operand of the backward op (output_size: for the name)
    @pool.vjp
    def _(grad, input, output_size):
        if 0 in grad._data.shape[-nd - 1 :]:  # (an empty batch is fine)
            raise _empty_adaptive_grad("avg", tuple(grad.shape), nd)
        return _adaptive_avg_backward(grad, input, tuple(input.shape[-nd:]))

    def node_name(node) -> str:
        # torch pools to a single value per plane with a mean over the pooled dims
        shape = node.saved_arg("input").shape
        osz = _adaptive_output_size(fn, nd, node.saved_arg("output_size"), shape)
        return "MeanBackward1" if all(o == 1 for o in osz) else node.op.backward_name

    if nd > 1:  # (torch's 1-d pooling is the 2-d one between an unsqueeze and a squeeze)
        pool.op.name_rule = node_name

    # pooling to one value per plane: torch's mean, which keeps only the input's shape (the
    # input may then change in place); the same kernel, so the same checks and speed
    gpool = op(names=keep, method=False, name=f"_{name.lstrip('_')}_global")(kernel)

    @gpool.vjp
    def _(grad, input_shape):
        n = 1
        for k in input_shape[-nd:]:
            n *= k
        # scaled small, then materialized (as torch's)
        return (grad * (1.0 / n)).expand(input_shape).contiguous()

    gname = "MeanBackward1" if nd > 1 else "SqueezeBackward1"
    gpool.op.name_rule = lambda node: gname

    def pool_to(input, output_size):
        """``pool``, or for an output of one value per plane ``gpool`` (F's entry)."""
        if type(output_size) is int:
            one = output_size == 1
        else:  # a sequence of nd ones (None entries take the general path)
            one = isinstance(output_size, (tuple, list)) and len(output_size) == nd
            one = one and all(type(o) is int and o == 1 for o in output_size)
        return (gpool if one else pool)(input, output_size)

    return pool, pool_to


@op(names=keep, method=False)
def _adaptive_avg_backward(xp, grad, input, input_size=()):
    """Adaptive average pooling's input gradient (the transposed GEMMs); ``input`` is the pooled
    tensor (an operand only so the gradient has a graph to it: its own gradient is zeros)."""
    return _adaptive_avg_kernel(xp, grad, tuple(input_size), transpose=True)


@_adaptive_avg_backward.vjp
def _(gg, grad_shape, input_shape, input_size):
    return _adaptive_avg_apply(gg, tuple(grad_shape[-len(input_size) :])), gg.new_zeros(input_shape)


@op(names=keep, method=False)
def _adaptive_avg_apply(xp, input, output_size=()):
    """Adaptive average pooling to a full output size (the backward's derivative)."""
    return _adaptive_avg_kernel(xp, input, tuple(output_size))


@_adaptive_avg_apply.vjp
def _(grad, input, output_size):
    return _adaptive_avg_backward(grad, input, tuple(input.shape[-len(output_size) :]))


adaptive_avg_pool1d, _adaptive_avg_to1 = _make_adaptive_avg(1, "adaptive_avg_pool1d")
_adaptive_avg_pool2d, _adaptive_avg_to2 = _make_adaptive_avg(2, "_adaptive_avg_pool2d")
_adaptive_avg_pool3d, _adaptive_avg_to3 = _make_adaptive_avg(3, "_adaptive_avg_pool3d")


def _adaptive_max_kernel(xp, a, osz):
    """Adaptive max pooling -> (values, flat per-plane indices of the argmax)."""
    if xp is np and a.dtype.kind == "f" and a.size:
        n_win = planes = 1
        for o in osz:
            n_win *= o
        for v in a.shape[: -len(osz)]:
            planes *= v
        # a Python step per window: for many windows over few planes the general kernel's step
        # per window offset is fewer calls
        if n_win <= 64 or planes >= 128:
            r = _adaptive_max_blocks(a, osz)
            if r is not None:
                return r
    return _adaptive_max_exact(xp, a, osz)


def _adaptive_max_blocks(a, osz):
    """The host path for few windows (the usual adaptive output: 1x1 to 7x7): each window's block
    is copied contiguous and one ``argmax`` over its rows (one per plane) finds the first maximum
    in row-major order, torch's rule (16x32x32x32 to 3x3: 0.4 ms, against 4 ms for the general
    kernel's per-offset gathers; reducing dim by dim over window offsets instead took 1.4 ms, as
    numpy's ufuncs over views with short contiguous rows are slow). numpy's argmax takes a
    window's first NaN, torch its last: a result with NaN goes to the general kernel (returns
    None)."""
    nd = len(osz)
    S = a.shape[-nd:]
    lead = a.shape[:-nd]
    planes = 1
    for v in lead:
        planes *= v
    x = a.reshape((planes,) + S)
    cols = []
    for sl, pos in _block_plan(S, tuple(osz)):
        k = np.ascontiguousarray(x[sl]).reshape(planes, -1).argmax(axis=1)
        cols.append(pos[k])
    idx = np.stack(cols, axis=1)
    vals = np.take_along_axis(x.reshape(planes, -1), idx, axis=1)
    if np.isnan(vals).any():
        return None
    shape = lead + tuple(osz)
    return vals.reshape(shape), idx.reshape(shape)


@functools.lru_cache(maxsize=256)
def _block_plan(S, osz):
    """Per adaptive window: its block's index (planes first) and its positions, in row-major
    order, as flat indices of a plane."""
    plan = []
    for win in itertools.product(*[tuple(zip(*_adaptive_bounds(n, o))) for n, o in zip(S, osz)]):
        grid = np.ix_(*[np.arange(b, e) for b, e in win])
        pos = np.ravel_multi_index(grid, S).reshape(-1)
        plan.append(((slice(None),) + tuple(slice(b, e) for b, e in win), pos))
    return tuple(plan)


def _adaptive_max_exact(xp, a, osz):
    """Separable adaptive max: reduce the last dim first so ties resolve in row-major order."""
    nd = len(osz)
    S = a.shape[-nd:]
    vals = a
    picked = {}  # dim -> index array (broadcast to vals' shape)
    isfloat = a.dtype.kind in "fV"
    for i in range(nd - 1, -1, -1):
        n, o = S[i], osz[i]
        axis = vals.ndim - nd + i
        starts, ends = _adaptive_bounds(n, o)
        kmax = max(e - b for b, e in zip(starts, ends))
        bshape = (o,) + (1,) * (nd - 1 - i)
        start = xp.asarray(starts, dtype=_INT64)
        length = (xp.asarray(ends, dtype=_INT64) - start).reshape(bshape)
        m = am = None
        sub = {}
        for j in range(kmax):
            idx = xp.minimum(start + j, n - 1)
            v = xp.take(vals, idx, axis=axis)
            if m is None:
                m = v
                am = xp.broadcast_to(idx.reshape(bshape), v.shape)
                sub = {q: xp.take(t, idx, axis=axis) for q, t in picked.items()}
                continue
            better = v > m
            if isfloat:
                better |= xp.isnan(v)
            better &= j < length
            m = xp.where(better, v, m)
            am = xp.where(better, idx.reshape(bshape), am)
            sub = {
                q: xp.where(better, xp.take(t, idx, axis=axis), sub[q]) for q, t in picked.items()
            }
        vals = m
        picked = sub
        picked[i] = am
    flat = None
    stride = 1
    for i in range(nd - 1, -1, -1):
        term = picked[i] * stride if stride != 1 else picked[i]
        flat = term if flat is None else flat + term
        stride *= S[i]
    flat = xp.broadcast_to(flat, vals.shape).astype(_INT64)
    return (vals if vals is not a else vals.copy()), flat


def _even_windows(S, osz):
    """The kernel size when every adaptive window has the same size and none overlap."""
    if all(n % o == 0 for n, o in zip(S, osz)):
        return tuple(n // o for n, o in zip(S, osz))
    return None


def _make_adaptive_max(nd, name):
    fn = f"adaptive_max_pool{nd}d"

    def kernel(xp, input, output_size=None):
        osz = _adaptive_output_size(
            fn, nd, output_size, input.shape, functools.partial(_adaptive_check_input, fn, nd)
        )
        _no_int(_ADAPTIVE_KERNELS.get(fn, fn), input, False)
        if 0 in osz:
            shape = input.shape[:-nd] + osz
            return xp.zeros(shape, input.dtype), xp.zeros(shape, _INT64)
        k = _even_windows(input.shape[-nd:], osz)
        if k is not None:  # equal, disjoint windows: a max pool with kernel = stride
            g = (k, k, (0,) * nd, (1,) * nd, osz)
            m = _max_values(xp, input, *g)
            idx = _max_indices(xp, input, m, *g)
        else:
            m, idx = _adaptive_max_kernel(xp, input, osz)
        # channels_last in, channels_last out (as torch's kernels)
        follow = _follow_for(nd)
        return follow(xp, m, input), follow(xp, idx, input)

    kernel.__name__ = name
    kernel.__doc__ = f"{nd}-d adaptive max pooling -> (values, flat per-plane indices)."
    pool = op(names=keep, method=False, name=name, n_diff_out=1)(kernel)

    @pool.vjp
    def _(grad, input, output_size):
        if 0 in grad._data.shape[-nd - 1 :]:  # (an empty batch is fine)
            raise _empty_adaptive_grad("max", tuple(grad.shape), nd)
        osz = _adaptive_output_size(fn, nd, output_size, input.shape)
        k = _even_windows(input.shape[-nd:], osz) if 0 not in osz else None
        if k is not None:
            return _max_pool_backward(grad, input, k, k, (0,) * nd, (1,) * nd, False)
        _, idx = kernel(_xp_of(input), input._data, output_size)
        return _max_index_backward(grad, input, _wrap(idx), tuple(input.shape[-nd:]))

    return pool


def _xp_of(t):
    from ..device import array_module

    return array_module(t._data)


# ---------------------------------------------------------------------- index pair (gather / scatter)
def _planes(shape, nd):
    n = 1
    for x in shape[:-nd] if nd else shape:
        n *= x
    return n


@op(names=keep, method=False)
def _index_scatter(xp, grad, indices, input_size=()):
    """``grad`` summed into the flat per-plane ``indices`` of planes of ``input_size``."""
    return _scatter_kernel(xp, grad, indices, input_size)


def _scatter_kernel(xp, grad, indices, input_size):
    nd = len(input_size)
    size = 1
    for x in input_size:
        size *= x
    lead = grad.shape[: grad.ndim - nd]
    planes = _planes(grad.shape, nd)
    if planes == 0 or grad.size == 0:
        return xp.zeros(lead + tuple(input_size), grad.dtype)
    glob = indices.reshape(planes, -1) + xp.arange(planes, dtype=_INT64).reshape(planes, 1) * size
    out = xp.bincount(glob.reshape(-1), weights=grad.reshape(-1), minlength=planes * size)
    return out.astype(grad.dtype).reshape(lead + tuple(input_size))


@_index_scatter.vjp
def _(gg, indices, input_size):
    return _index_gather(gg, indices, len(input_size)), None


@op(names=keep, method=False)
def _index_gather(xp, src, indices, nd=1):
    """``src`` read at the flat per-plane ``indices`` (planes: the last ``nd`` dims of src;
    indices share src's leading dims)."""
    planes = _planes(src.shape, nd)
    if planes == 0 or indices.size == 0:
        return xp.zeros(indices.shape, src.dtype)
    flat = src.reshape(planes, -1)
    idx = indices.reshape(planes, -1)
    return xp.take_along_axis(flat, idx, axis=1).reshape(indices.shape)


@_index_gather.vjp
def _(g, indices, src_shape, nd):
    return _index_scatter(g, indices, tuple(src_shape[len(src_shape) - nd :])), None


@op(names=keep, method=False)
def _max_index_backward(xp, grad, input, indices, input_size=()):
    """Adaptive / fractional max pooling's input gradient: ``grad`` summed into the argmax
    ``indices``. ``input`` (the pooled tensor) is an operand like torch's self, so the gradient
    has a graph to it (zeros: the argmax is piecewise constant)."""
    return _scatter_kernel(xp, grad, indices, input_size)


@_max_index_backward.vjp
def _(gg, input_shape, indices, input_size):
    return _index_gather(gg, indices, len(input_size)), gg.new_zeros(input_shape), None


adaptive_max_pool1d = _make_adaptive_max(1, "adaptive_max_pool1d")
_adaptive_max_pool2d = _make_adaptive_max(2, "_adaptive_max_pool2d")
_adaptive_max_pool3d = _make_adaptive_max(3, "_adaptive_max_pool3d")


# ---------------------------------------------------------------------- fractional max pooling
def _fractional_starts(xp, samples, n, k, o):
    """torch's pseudo-random window starts of one dim, in the samples' dtype: (planes, o)."""
    dt = samples.dtype
    planes = samples.shape[0]
    if o == 1:
        return xp.full((planes, 1), n - k, dtype=_INT64)
    alpha = xp.asarray(n - k, dtype=dt) / xp.asarray(o - 1, dtype=dt)
    i = xp.arange(o - 1, dtype=dt).reshape(1, o - 1)
    u = samples.reshape(planes, 1)
    seq = xp.trunc((i + u) * alpha).astype(_INT64) - xp.trunc(u * alpha).astype(_INT64)
    last = xp.full((planes, 1), n - k, dtype=_INT64)
    return xp.concatenate([seq, last], axis=1)


def _fractional_kernel(xp, a, samples, k, osz):
    nd = len(k)
    S = a.shape[-nd:]
    lead = a.shape[:-nd]
    planes = _planes(a.shape, nd)
    smp = samples.reshape(-1, nd)[:planes]
    strides = [1] * nd
    for i in range(nd - 2, -1, -1):
        strides[i] = strides[i + 1] * S[i + 1]
    starts = []
    for i in range(nd):
        # torch's sample order: (w, h) in 2-d but (t, h, w) in 3-d
        col = 1 - i if nd == 2 else i
        st = _fractional_starts(xp, smp[:, col], S[i], k[i], osz[i])
        shape = (planes,) + (1,) * i + (osz[i],) + (1,) * (nd - 1 - i)
        starts.append(st.reshape(shape) * strides[i])
    base = starts[0]
    for st in starts[1:]:
        base = base + st
    flat_src = a.reshape(planes, -1)
    m = idx = None
    isfloat = a.dtype.kind in "fV"
    for off in itertools.product(*[range(ki) for ki in k]):
        delta = sum(j * st for j, st in zip(off, strides))
        f = (base + delta).reshape(planes, -1)
        v = xp.take_along_axis(flat_src, f, axis=1)
        if m is None:
            m, idx = v, f
            continue
        better = v > m
        if isfloat:
            better |= xp.isnan(v)
        m = xp.where(better, v, m)
        idx = xp.where(better, f, idx)
    out = lead + tuple(osz)
    return m.reshape(out), idx.reshape(out)


def _make_fractional(nd, name):
    fn = f"fractional_max_pool{nd}d"
    dims = {2: ("height", "width"), 3: ("time", "height", "width")}[nd]
    order = (0, 1) if nd == 2 else (0, 2, 1)  # torch's 3-d kernel checks width before height

    def kernel(xp, input, random_samples, kernel_size=(), output_size=()):
        k, osz = tuple(kernel_size), tuple(output_size)
        S = input.shape[-nd:]
        where = fn if nd == 2 else f"{fn}_out"
        for i in order:
            # the 3-d kernel also refuses a last window that ends exactly at the input's end
            span = osz[i] + k[i] - 1
            if span > S[i] or (nd == 3 and span == S[i]):
                raise RuntimeError(
                    f"{where}(): pool {dims[i]} {k[i]} too large relative to input {dims[i]} {S[i]}"
                )
        if min(osz) < 0:
            raise RuntimeError(_negative_dim(osz, list(input.shape[:-nd])))
        if random_samples.ndim != 3:
            raise RuntimeError(
                f"Expect _random_samples to have 3 dimensions, got {random_samples.ndim}"
            )
        if random_samples.dtype != input.dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        batch = input.shape[0] if input.ndim == nd + 2 else 1
        if random_samples.shape[0] < batch:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        if random_samples.shape[1] != input.shape[-nd - 1]:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if random_samples.shape[-1] != nd:
            raise RuntimeError(
                f"Expect _random_samples.size(2) equals to {nd}; got {random_samples.shape[-1]}."
            )
        if 0 in osz or input.size == 0:  # (no kernel runs: any dtype)
            shape = input.shape[:-nd] + osz
            return xp.zeros(shape, input.dtype), xp.zeros(shape, _INT64)
        _no_int(f"{fn}_out_frame", input, False)  # torch's kernel: floating types only
        if min(k) <= 0:  # (torch pools such windows to -inf at indices past the plane)
            raise RuntimeError(f"{where}(): kernel_size must be greater than zero, but got {k}")
        smp = random_samples[:batch]
        return _fractional_kernel(xp, input, smp.astype(input.dtype), k, osz)

    kernel.__name__ = name
    kernel.__doc__ = f"{nd}-d fractional max pooling -> (values, flat per-plane indices)."
    pool = op(names=keep, method=False, name=name, n_diff_out=1)(kernel)

    @pool.vjp
    def _(grad, input, random_samples, kernel_size, output_size):
        _, idx = kernel(_xp_of(input), input._data, random_samples._data, kernel_size, output_size)
        return _max_index_backward(grad, input, _wrap(idx), tuple(input.shape[-nd:])), None

    return pool


_fractional_max_pool2d = _make_fractional(2, "_fractional_max_pool2d")
_fractional_max_pool3d = _make_fractional(3, "_fractional_max_pool3d")


# ---------------------------------------------------------------------- max unpooling
@op(names=unify_inputs, method=False)  # indices pair with the values one to one: add's rule
def _max_unpool(xp, input, indices, output_size=()):
    """Each value written at its flat per-plane index in planes of ``output_size``."""
    nd = len(output_size)
    size = 1
    for x in output_size:
        size *= x
    lead = input.shape[: input.ndim - nd]
    planes = _planes(input.shape, nd)
    out = xp.zeros((planes, size), input.dtype)
    if input.size:
        idx = indices.reshape(planes, -1)
        bad = (idx < 0) | (idx >= size)
        if bool(bad.any()):
            # torch's kernel keeps scanning and reports the last bad index it met
            flat = bad.reshape(-1)
            last = int(idx.reshape(-1)[flat.size - 1 - int(xp.argmax(flat[::-1]))])
            dims = "x".join(map(str, output_size))
            raise RuntimeError(
                f"Found an invalid max index: {last} (output volumes are of size {dims})"
            )
        rows = xp.arange(planes, dtype=_INT64).reshape(planes, 1)
        out[rows, idx] = input.reshape(planes, -1)
    return out.reshape(lead + tuple(output_size))


@_max_unpool.vjp
def _(grad, indices, output_size):
    return _index_gather(grad, indices, len(output_size)), None


# one op for torch's max_unpool2d and max_unpool3d kernels: the output size tells them apart
_max_unpool.op.name_rule = lambda node: f"MaxUnpool{len(node.saved_arg('output_size'))}DBackward0"


backward_names(
    {
        "_max_pool2x2": "MaxPool2DWithIndicesBackward0",
        "max_pool2d": "MaxPool2DWithIndicesBackward0",
        "_max_pool2d_with_indices": "MaxPool2DWithIndicesBackward0",
        "max_pool3d": "MaxPool3DWithIndicesBackward0",
        "_max_pool3d_with_indices": "MaxPool3DWithIndicesBackward0",
        "_avg_pool2d": "AvgPool2DBackward0",
        "_avg_pool3d": "AvgPool3DBackward0",
        # torch runs the 1-d pools as 2-d ones of height 1 and squeezes the result
        "max_pool1d": "SqueezeBackward1",
        "max_pool1d_with_indices": "SqueezeBackward1",
        "avg_pool1d": "SqueezeBackward1",
        "adaptive_avg_pool1d": "SqueezeBackward1",
        "adaptive_max_pool1d": "SqueezeBackward1",
        "_adaptive_avg_pool2d": "AdaptiveAvgPool2DBackward0",
        "_adaptive_avg_pool3d": "AdaptiveAvgPool3DBackward0",
        "_adaptive_max_pool2d": "AdaptiveMaxPool2DBackward0",
        "_adaptive_max_pool3d": "AdaptiveMaxPool3DBackward0",
        "_fractional_max_pool2d": "FractionalMaxPool2DBackward0",
        "_fractional_max_pool3d": "FractionalMaxPool3DBackward0",
    }
)
