"""im2col / col2im for N-d convolutions (and pooling windows): plain array code, no autograd.

Layout: ``x`` is (N, C, *spatial) (any strides); the columns are one contiguous array of shape
(C, *kernel, N, *out_spatial). Reshaped to (C*prod(kernel), N*prod(out_spatial)) they are the
right operand of ONE GEMM with the weight (O, C*prod(kernel)), and the GEMM's result
(O, N*prod(out_spatial)) only needs its first two axes swapped to be the NCHW output.

Both directions are a Python loop over the kernel offsets (9 for a 3x3 kernel), each copying
(im2col) or adding (col2im) one strided slice whose innermost axis is the image row: numpy
moves contiguous rows, which is several times faster than a sliding_window_view + tensordot.
On cupy each direction is one gather kernel instead (fused_im2col.py).
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
    xpad = pad_input(xp, x, padding)
    cols = xp.empty((c, *kernel, n, *out_spatial), x.dtype)
    # source viewed as (C, N, ...): the copies then run over contiguous image rows
    src = xpad.swapaxes(0, 1)
    for off in product(*(range(k) for k in kernel)):
        win = tuple(_window(o, d, s, m) for o, d, s, m in zip(off, dilation, stride, out_spatial))
        cols[(slice(None), *off)] = src[(slice(None), slice(None), *win)]
    return cols


def col2im(xp, cols, spatial, stride, padding, dilation):
    """The adjoint of im2col: sums columns (C, *kernel, N, *out_spatial) back into an array
    (N, C, *spatial) (contiguous)."""
    nd = len(spatial)
    fused = im2col_kernels(xp, cols.dtype, nd)
    if fused is not None:  # cupy: one gather kernel, no atomics (fused_im2col.py)
        return fused.col2im(xp.ascontiguousarray(cols), spatial, stride, padding, dilation)
    c = cols.shape[0]
    kernel = cols.shape[1 : 1 + nd]
    n = cols.shape[1 + nd]
    out_spatial = cols.shape[2 + nd :]
    padded = tuple(sz + 2 * p for sz, p in zip(spatial, padding))
    acc = xp.zeros((n, c, *padded), cols.dtype)
    dst = acc.swapaxes(0, 1)
    for off in product(*(range(k) for k in kernel)):
        win = tuple(_window(o, d, s, m) for o, d, s, m in zip(off, dilation, stride, out_spatial))
        dst[(slice(None), slice(None), *win)] += cols[(slice(None), *off)]
    if not any(padding):
        return acc
    inner = (slice(None), slice(None)) + tuple(slice(p, p + sz) for p, sz in zip(padding, spatial))
    return xp.ascontiguousarray(acc[inner])
