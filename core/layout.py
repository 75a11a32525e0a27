"""Layouts and memory formats: ``ember.strided``, ``ember.channels_last`` and friends.

A dense ember tensor is always ``strided`` (a numpy/cupy array with element strides). A memory
format names an order of the strides: ``contiguous_format`` is row-major (C order),
``channels_last`` stores a 4-D NCHW tensor as NHWC in memory (strides ``(H*W*C, 1, W*C, C)``),
``channels_last_3d`` the 5-D NCDHW analogue. ``preserve_format`` keeps the input's layout.
"""

from __future__ import annotations

from itertools import pairwise

from .dtype import DISPLAY

__all__ = [
    "apply_memory_format",
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "is_contiguous",
    "layout",
    "legacy_contiguous_format",
    "memory_format",
    "preserve_format",
    "sparse_bsc",
    "sparse_bsr",
    "sparse_coo",
    "sparse_csc",
    "sparse_csr",
    "strided",
    "suggest_memory_format",
]


class layout:
    """A tensor storage layout (``ember.strided`` for every dense tensor)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{DISPLAY[0]}.{self.name}"

    def __reduce__(self):
        return self.name  # pickles as the module-level singleton


class memory_format:
    """An order of a tensor's strides (``ember.contiguous_format``, ``ember.channels_last`` ...)."""

    __slots__ = ("name", "ndim", "order")

    def __init__(self, name: str, ndim: int | None, order: tuple | None) -> None:
        self.name = name
        self.ndim = ndim  # the rank the format applies to (None: any)
        self.order = order  # dims from the fastest-varying to the slowest

    def __repr__(self) -> str:
        return f"{DISPLAY[0]}.{self.name}"

    def __reduce__(self):
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
contiguous_format = memory_format("contiguous_format", None, None)
channels_last = memory_format("channels_last", 4, (1, 3, 2, 0))
channels_last_3d = memory_format("channels_last_3d", 5, (1, 4, 3, 2, 0))
preserve_format = memory_format("preserve_format", None, None)
legacy_contiguous_format = contiguous_format  # torch's old name: the same object there too


def _check_format(fmt) -> memory_format:
    if not isinstance(fmt, memory_format):
        raise TypeError(f"memory_format must be ember.memory_format, not {type(fmt).__name__}")
    return fmt


def _strides_follow(shape, strides, order) -> bool:
    # size-1 dims may have any stride (torch ignores them too)
    expected = 1
    for d in order:
        s = shape[d]
        if s != 1:
            if strides[d] != expected:
                return False
            expected *= s
    return True


def is_contiguous(t, memory_format=contiguous_format) -> bool:
    """Whether ``t``'s strides are those of ``memory_format`` (Tensor.is_contiguous)."""
    a = t._data
    fmt = memory_format
    if fmt is contiguous_format or fmt is preserve_format:
        return bool(a.flags.c_contiguous)
    _check_format(fmt)
    if a.ndim != fmt.ndim:
        return False
    isz = a.itemsize
    return _strides_follow(a.shape, [s // isz for s in a.strides], fmt.order)


def _format_strides(shape, fmt) -> tuple:
    """Element strides of a fresh tensor of ``shape`` laid out as channels_last(_3d)."""
    order = fmt.order
    st = [0] * len(shape)
    st[order[0]] = 1
    for prev, d in pairwise(order):
        st[d] = st[prev] * shape[prev]
    return tuple(st)


def format_array(xp, a, fmt):
    """A copy of array ``a`` laid out in memory format ``fmt`` (channels_last needs rank 4)."""
    if fmt is contiguous_format or fmt is None:
        # a copy even of a row-major ``a``: clone(memory_format=contiguous_format) must not
        # share the input's memory (ascontiguousarray would return ``a`` itself)
        return a.copy(order="C")
    if fmt is preserve_format:
        r = a.copy(order="K")
        return r if r.flags.c_contiguous else broadcast_copy(xp, a, r)
    _check_format(fmt)
    if a.ndim != fmt.ndim:
        raise RuntimeError(f"required rank {fmt.ndim} tensor to use {fmt.name} format")
    isz = a.itemsize
    buf = xp.empty(a.size, a.dtype)
    st = tuple(s * isz for s in _format_strides(a.shape, fmt))
    out = xp.lib.stride_tricks.as_strided(buf, a.shape, st)
    out[...] = a
    return out


def _strides_like(shape, strides, order) -> bool:
    # torch's heuristic for "this tensor is laid out channels-last" (ambiguous cases: NCHW)
    if strides[order[0]] == 0:
        return False
    low = 0
    for d in order:
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[order[0]]:
            return False
        low = strides[d]
        if shape[d] > 1:
            low *= shape[d]
    return True


def suggest_memory_format(t) -> memory_format:
    """The memory format ``t``'s strides suggest (channels_last for NHWC-strided 4-D tensors)."""
    a = t._data
    n = a.ndim
    if n == 4 or n == 5:
        fmt = channels_last if n == 4 else channels_last_3d
        isz = a.itemsize
        if _strides_like(a.shape, [s // isz for s in a.strides], fmt.order):
            return fmt
    return contiguous_format


def contiguous(t, memory_format=contiguous_format):
    """``t`` itself when laid out as ``memory_format``, else a copy that is (Tensor.contiguous)."""
    if is_contiguous(t, memory_format):  # preserve_format: a row-major tensor passes (torch)
        return t
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    from .ops.shape import _contiguous

    return _contiguous(t, memory_format)


def _dense_strides(shape, strides) -> bool:
    # torch's is_non_overlapping_and_dense: sorted by stride (size<2 dims last), the strides are
    # exactly the running products of the sizes
    n = len(shape)
    if n == 1:
        return shape[0] < 2 or strides[0] == 1
    perm = sorted(range(n), key=lambda d: (shape[d] < 2, strides[d] if shape[d] >= 2 else 0))
    need = 1
    for d in perm:
        s = shape[d]
        if s < 2:
            return True
        if strides[d] != need:
            return False
        need *= s
    return True


def like_array(xp, a, npd, fill, memory_format=None):
    """The array of a ``*_like`` factory: ``fill(xp, shape, npd)`` laid out like torch's
    ``memory_format`` (default ``preserve_format``: ``a``'s own strides when ``a`` is dense and
    non-overlapping, else dense strides in the order of ``a``'s: dense_order_strides). ``fill`` must not depend on the
    element order (zeros, ones, empty, a constant)."""
    if memory_format is None or memory_format is preserve_format:
        if a.flags.c_contiguous:  # the common case: nothing to decide
            return fill(xp, a.shape, npd)
        isz = a.itemsize
        st = [s // isz for s in a.strides]
        if not _dense_strides(a.shape, st):
            st = dense_order_strides(a.shape, st)
    else:
        return new_array(xp, a.shape, npd, fill, memory_format)
    buf = fill(xp, (a.size,), npd)
    it = buf.itemsize
    return xp.lib.stride_tricks.as_strided(buf, a.shape, tuple(s * it for s in st))


def dense_order_strides(shape, strides) -> tuple:
    """Element strides of a dense tensor of ``shape`` whose dims lie in memory in the order of
    ``strides`` (torch's layout of a copy or ``*_like`` of a non-dense tensor: a sliced
    channels_last tensor gives a channels_last copy). Dims are ranked by stride (equal strides:
    the smaller size faster) by an insertion sort in which a broadcast (stride-0) dim compares
    equal to every other and so keeps its place, so a copy of ``x.expand(2, 3, 4)`` is row-major
    where numpy's 'K' order would put the stride-0 dim fastest."""
    n = len(shape)
    order = list(range(n - 1, -1, -1))  # fastest first; starts as row-major
    for i in range(1, n):
        j = i
        for k in range(i - 1, -1, -1):
            s0, s1 = strides[order[k]], strides[order[j]]
            if s0 == 0 or s1 == 0:
                continue  # a broadcast dim: no order either way, look further back
            if s0 < s1:
                break
            if s0 > s1 or shape[order[k]] > shape[order[j]]:
                order[k], order[j] = order[j], order[k]
                j = k
    out = [0] * n
    step = 1
    for d in order:
        out[d] = step
        step *= shape[d]
    return tuple(out)


def broadcast_copy(xp, a, r):
    """``r``, an array numpy made from ``a`` in its 'K' order (astype, copy, zeros_like), laid
    out as torch lays out such a copy when ``a`` has a broadcast (stride-0) dim of size > 1:
    numpy puts that dim fastest in memory, torch keeps the dims' order (dense_order_strides), so
    the clone or cast of an expanded tensor is contiguous in torch and ``.view`` works. Callers
    pass only a non-contiguous ``r``; an input without stride-0 dims pays one tuple scan."""
    if 0 not in a.strides or a.shape != r.shape:
        return r
    shape = a.shape
    isz = a.itemsize
    st = [s // isz for s in a.strides]
    if not any(s == 0 and n > 1 for s, n in zip(st, shape)):
        return r
    return restride(xp, r, dense_order_strides(shape, st))


def restride(xp, r, strides):
    """``r`` itself when its element strides are ``strides`` (dense ones), else a copy that has
    them."""
    it = r.itemsize
    if tuple(s // it for s in r.strides) == strides:
        return r
    buf = xp.empty(r.size, r.dtype)
    out = xp.lib.stride_tricks.as_strided(buf, r.shape, tuple(s * it for s in strides))
    out[...] = r
    return out


def new_array(xp, shape, npd, fill, memory_format=None):
    """A fresh array ``fill(xp, shape, npd)`` laid out as ``memory_format`` (contiguous when
    None): ``torch.empty(..., memory_format=)``, ``*_like(..., memory_format=)``. ``fill`` must
    not depend on the element order."""
    if memory_format is None or memory_format is contiguous_format:
        return fill(xp, shape, npd)
    fmt = _check_format(memory_format)
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    if len(shape) != fmt.ndim:
        raise RuntimeError(f"required rank {fmt.ndim} tensor to use {fmt.name} format")
    size = 1
    for n in shape:
        size *= n
    buf = fill(xp, (size,), npd)
    it = buf.itemsize
    st = tuple(s * it for s in _format_strides(shape, fmt))
    return xp.lib.stride_tricks.as_strided(buf, shape, st)


def _suggest(shape, st, n) -> memory_format:
    if n == 4 or n == 5:
        fmt = channels_last if n == 4 else channels_last_3d
        if _strides_like(shape, st, fmt.order):
            return fmt
    return contiguous_format


def suggest_array(a) -> memory_format:
    """suggest_memory_format of a raw array (channels_last(_3d) for an NHWC-strided 4-D/5-D
    array that is not also contiguous, else contiguous_format)."""
    if a.flags.c_contiguous:
        return contiguous_format
    isz = a.itemsize
    return _suggest(a.shape, [s // isz for s in a.strides], a.ndim)


def cl_format(*ts):
    """channels_last (channels_last_3d) when one of the 4-D (5-D) tensors ``ts`` is laid out so
    and not also contiguous (torch's suggest_memory_format), else None: the format a CNN op's
    output follows. The contiguous path pays one flags check per tensor."""
    for t in ts:
        a = t._data
        if a.flags.c_contiguous:
            continue
        n = a.ndim
        if n == 4 or n == 5:
            isz = a.itemsize
            fmt = _suggest(a.shape, [s // isz for s in a.strides], n)
            if fmt is not contiguous_format:
                return fmt
    return None


def follow_format(t, fmt):
    """``t`` relaid out as ``fmt`` (a differentiable copy) when ``fmt`` is a channels_last format
    of ``t``'s rank and ``t`` is not already laid out so; else ``t`` itself."""
    if fmt is None or t is None or t._data.ndim != fmt.ndim:
        return t
    if is_contiguous(t, fmt):
        a = t._data
        if 1 not in a.shape:
            return t
        if tuple(s // a.itemsize for s in a.strides) == _format_strides(a.shape, fmt):
            return t
        # size-1 dims with numpy's strides: torch's are those of a fresh channels_last tensor
    from .ops.shape import _contiguous

    return _contiguous(t, fmt)


def follow_array(xp, a, like):
    """Array ``a`` relaid out as channels_last(_3d) when array ``like`` (same rank) is laid out
    so and not contiguous, else ``a`` in row-major order (for kernels that work on raw arrays:
    torch's CNN ops give a channels_last result or a contiguous one, while numpy's window views
    keep a permuted input's order). A contiguous ``like`` costs one flags check."""
    if like.flags.c_contiguous:
        return a
    if like.ndim not in (4, 5) or a.ndim != like.ndim:
        return row_major(xp, a)
    isz = like.itemsize
    fmt = _suggest(like.shape, [s // isz for s in like.strides], like.ndim)
    if fmt is contiguous_format:
        return row_major(xp, a)
    isz = a.itemsize
    if _strides_follow(a.shape, [s // isz for s in a.strides], fmt.order):
        st = _format_strides(a.shape, fmt)
        if tuple(s // isz for s in a.strides) == st:
            return a
        # only size-1 dims differ: give them torch's strides (a view: they address nothing)
        return xp.lib.stride_tricks.as_strided(a, a.shape, tuple(s * isz for s in st))
    return format_array(xp, a, fmt)


def follow_array_1d(xp, a, like):
    """follow_array for torch's 1-d pools, which run as 2-d pools of height 1: an (N, C, L)
    input whose channels are fastest in memory is a channels_last (N, C, 1, L) one, and its
    result keeps the channels fastest."""
    if like.ndim == 3 and a.ndim == 3 and not like.flags.c_contiguous:
        isz = like.itemsize
        sn, sc, sl = (s // isz for s in like.strides)
        n, c, n_l = like.shape
        if _strides_like((n, c, 1, n_l), (sn, sc, sl * n_l, sl), channels_last.order):
            return restride(xp, a, (a.shape[1] * a.shape[2], 1, a.shape[1]))
    return follow_array(xp, a, like)


def apply_memory_format(t, fmt):
    """``t.to(memory_format=fmt)``: ``t`` when its strides already suggest ``fmt`` (torch's rule),
    else a copy laid out as ``fmt``."""
    if fmt is preserve_format:
        return t
    _check_format(fmt)
    if fmt.ndim is not None and t._data.ndim != fmt.ndim:
        raise RuntimeError(f"required rank {fmt.ndim} tensor to use {fmt.name} format")
    if suggest_memory_format(t) is fmt:
        return t
    from .ops.shape import _contiguous

    return _contiguous(t, fmt)


def row_major(xp, a):
    """``a`` in row-major order. torch's reductions along a dim, scans, softmax and masked_fill
    return contiguous tensors whatever the input's strides, while numpy keeps a permuted input's
    order: a later ``.view`` of the result would fail where torch's succeeds. Kernels call it
    only where the result can come out permuted (reductions of 3 or more dims, same-shape
    results of 2 or more), which keeps the common small cases free of the check."""
    return a if a.flags.c_contiguous else xp.ascontiguousarray(a)


def reduced(xp, r, a):
    """Array ``r``, a reduction's result over array ``a``, with torch's strides: row-major, and a
    size-1 dim (one keepdim leaves, or one ``a`` had) strided as in a fresh contiguous tensor,
    whatever ``a``'s layout (numpy keeps a permuted input's order, and gives size-1 dims of a
    channels_last input stride 1). A contiguous ``a`` costs two flags checks."""
    if a.flags.c_contiguous and r.flags.c_contiguous:
        return r  # numpy's strides for a row-major input are torch's already
    r = row_major(xp, r)
    shape = r.shape
    if 1 not in shape and 0 not in shape:
        return r  # c-contiguous without size-1 or empty dims: the strides are determined
    isz = r.itemsize
    st = [0] * len(shape)
    step = isz
    for d in range(len(shape) - 1, -1, -1):
        st[d] = step
        step *= shape[d] or 1
    st = tuple(st)
    if r.strides == st:
        return r
    # a view: only size-1 (or empty) dims differ, and they address nothing
    return xp.lib.stride_tricks.as_strided(r, shape, st)


def _install() -> None:
    from .tensor import Tensor

    def is_contiguous_method(self, memory_format=contiguous_format) -> bool:
        return is_contiguous(self, memory_format)

    def contiguous_method(self, memory_format=contiguous_format):
        return contiguous(self, memory_format)

    is_contiguous_method.__name__ = "is_contiguous"
    contiguous_method.__name__ = "contiguous"
    Tensor.is_contiguous = is_contiguous_method
    Tensor.contiguous = contiguous_method


_install()
