"""im2col / col2im for N-d convolutions (and pooling windows): plain array code, no autograd.

Layout: ``x`` is (N, C, *spatial) (any strides); the columns are one contiguous array of shape
(C, *kernel, N, *out_spatial). Reshaped to (C*prod(kernel), N*prod(out_spatial)) they are the
right operand of ONE GEMM with the weight (O, C*prod(kernel)), and the GEMM's result
(O, N*prod(out_spatial)) only needs its first two axes swapped to be the NCHW output.

im2col is ONE copy from a strided window view (C, *kernel, N, *out_spatial) of the padded input
(innermost axis the image row: numpy moves contiguous rows; as fast as a loop over the kernel
offsets on large inputs, and half the time of one on small ones, where the loop's Python cost
dominated). col2im is a Python loop over the kernel offsets, each adding one strided slice (the
windows overlap), or, where they do not overlap (stride >= dilated kernel, e.g. a 1x1 stride-2
shortcut), one strided copy into a zeroed array. On cupy each direction is one gather kernel
instead (fused_im2col.py).
"""

from __future__ import annotations

from itertools import product

from .fused_im2col import im2col_kernels

__all__ = ["col2im", "conv_out_size", "im2col", "pad_input"]


def conv_out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    """Output length of a convolution along one dim (torch's formula, floor mode)."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def pad_input(xp, x, padding, value=0):
    """``x`` (N, C, *spatial) zero-padded (symmetrically) on each spatial dim; ``x`` itself when no
    padding is asked for."""
    if not any(padding):
        return x
    nd = len(padding)
    shape = x.shape[:2] + tuple(n + 2 * p for n, p in zip(x.shape[2:], padding))
    out = xp.empty(shape, x.dtype)
    # zero only the borders: the interior is overwritten right away
    for i, p in enumerate(padding):
        if p:
            lo = [slice(None)] * (nd + 2)
            lo[i + 2] = slice(0, p)
            out[tuple(lo)] = value
            lo[i + 2] = slice(shape[i + 2] - p, None)
            out[tuple(lo)] = value
    inner = (slice(None), slice(None)) + tuple(
        slice(p, p + n) for p, n in zip(padding, x.shape[2:])
    )
    out[inner] = x
    return out


def _window(o: int, d: int, s: int, n: int) -> slice:
    # the input positions seen by kernel offset o for the n output positions
    start = o * d
    return slice(start, start + s * (n - 1) + 1, s)


_OFFSETS: dict = {}


def _offsets(kernel, stride, dilation, out_spatial):
    """Per kernel offset: (its index into the columns, its window into the padded input viewed
    (C, N, *spatial)), built once per geometry (the per-call Python cost of small convs)."""
    key = (kernel, stride, dilation, out_spatial)
    r = _OFFSETS.get(key)
    if r is None:
        r = []
        for off in product(*(range(k) for k in kernel)):
            win = zip(off, dilation, stride, out_spatial)
            r.append(((slice(None), *off), (slice(None), slice(None), *(_window(*w) for w in win))))
        if len(_OFFSETS) > 512:
            _OFFSETS.clear()
        _OFFSETS[key] = r = tuple(r)
    return r


def _windows(xp, src, kernel, stride, dilation, out_spatial):
    """The strided view (C, *kernel, N, *out_spatial) of ``src`` (C, N, *padded spatial): entry
    [c, *k, n, *o] is src[c, n, *(o * stride + k * dilation)]."""
    st = src.strides
    sp = st[2:]
    shape = (src.shape[0], *kernel, src.shape[1], *out_spatial)
    strides = (
        st[0],
        *(s * d for s, d in zip(sp, dilation)),
        st[1],
        *(s * t for s, t in zip(sp, stride)),
    )
    return xp.lib.stride_tricks.as_strided(src, shape, strides)


def im2col(xp, x, kernel, stride, padding, dilation, out_spatial=None):
    """Columns (C, *kernel, N, *out_spatial) of ``x`` (N, C, *spatial), contiguous."""
    n, c = x.shape[:2]
    if out_spatial is None:
        out_spatial = tuple(
            conv_out_size(sz, k, s, p, d)
            for sz, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation)
        )
    fused = im2col_kernels(xp, x.dtype, len(kernel))
    if fused is not None:  # cupy: one gather kernel (fused_im2col.py)
        return fused.im2col(xp.ascontiguousarray(x), kernel, stride, padding, dilation, out_spatial)
    # source viewed as (C, N, ...): the copy then runs over contiguous image rows
    src = pad_input(xp, x, padding).swapaxes(0, 1)
    cols = xp.empty((c, *kernel, n, *out_spatial), x.dtype)
    cols[...] = _windows(xp, src, tuple(kernel), stride, dilation, tuple(out_spatial))
    return cols


def col2im(xp, cols, spatial, stride, padding, dilation):
    """The adjoint of im2col: sums columns (C, *kernel, N, *out_spatial) back into an array
    (N, C, *spatial) (contiguous)."""
    nd = len(spatial)
    fused = im2col_kernels(xp, cols.dtype, nd)
    if fused is not None:  # cupy: one gather kernel, no atomics (fused_im2col.py)
        return fused.col2im(xp.ascontiguousarray(cols), spatial, stride, padding, dilation)
    c = cols.shape[0]
    kernel = tuple(cols.shape[1 : 1 + nd])
    n = cols.shape[1 + nd]
    out_spatial = tuple(cols.shape[2 + nd :])
    padded = tuple(sz + 2 * p for sz, p in zip(spatial, padding))
    acc = xp.zeros((n, c, *padded), cols.dtype)
    dst = acc.swapaxes(0, 1)
    if all(s >= d * (k - 1) + 1 for s, d, k in zip(stride, dilation, kernel)):
        # the windows do not overlap: every padded position gets at most one column entry
        _windows(xp, dst, kernel, stride, dilation, out_spatial)[...] = cols
    else:
        for ci, win in _offsets(kernel, stride, dilation, out_spatial):
            dst[win] += cols[ci]
    if not any(padding):
        return acc
    inner = (slice(None), slice(None)) + tuple(slice(p, p + sz) for p, sz in zip(padding, spatial))
    return xp.ascontiguousarray(acc[inner])
