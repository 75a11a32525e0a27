"""Depthwise 2-D convolutions (groups == in channels == out channels) as direct multiply-adds:
plain array code, no autograd.

im2col + a GEMM per channel is the wrong shape here: each channel's GEMM has K = kh * kw (9) and
one output row, so the work is the 9x column copy plus C matrix-vector products. Directly, the
output is a sum over the kernel offsets of the shifted input times a per-channel weight: one
multiply and one add per offset over the input's size.

Every op is a flat shift: the zero-padded input is split once into its stride phases (s0 * s1
planes; for stride 1 the padded input itself), each flattened per sample to (C * Hs * Ws) with a
zero tail, and the output is computed on the planes' (Hs, Ws) grid, so kernel offset (i, j) reads
one phase plane shifted by a constant, and every op runs over one long contiguous row per sample;
the per-channel weight is repeated along its channel's plane (numpy broadcasting a (C, 1) vector
over (N, C, L) runs one short inner loop per (n, c) and is ~1.7x slower). Grid positions outside
the output read across rows and channels; they are dropped (forward) or hold a zero gradient
(backward), so they add nothing.
"""

from __future__ import annotations

__all__ = ["dw_backward", "dw_forward", "dw_out_size"]


def dw_out_size(spatial, kernel, stride, padding, dilation):
    """(Ho, Wo) of the convolution (torch's formula)."""
    return tuple(
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation)
    )


def _axis_parts(n: int, p: int, s: int, planes: int):
    """Per phase q (0..s-1) of a padded axis (length n padded by p, split into s phase planes
    of ``planes`` positions): (first plane index, first source index, count) of the source
    positions landing in that plane."""
    out = []
    for q in range(s):
        i0 = max(0, -((q - p) // s))  # first plane index whose padded position i0*s+q >= p
        src = i0 * s + q - p
        cnt = max(0, min((n - src + s - 1) // s, planes - i0)) if src < n else 0
        out.append((i0, src, cnt))
    return out


def _geometry(spatial, kernel, stride, padding, dilation):
    """(Hs, Ws, [(phase row, phase col, flat shift) per kernel offset], largest shift)."""
    hs = -(-(spatial[0] + 2 * padding[0]) // stride[0])
    ws = -(-(spatial[1] + 2 * padding[1]) // stride[1])
    offs = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            r, c = i * dilation[0], j * dilation[1]
            offs.append((r % stride[0], c % stride[1], (r // stride[0]) * ws + c // stride[1]))
    return hs, ws, offs, max(o[2] for o in offs)


def _phase_windows(planes, x, stride, padding, hs, ws):
    """The matching (plane window, input window) pairs of the stride-phase layout: plane (a, b)
    holds padded positions (a + s0 * y, b + s1 * x) at (y, x)."""
    n, c, h, w = x.shape
    f = c * hs * ws
    rows = _axis_parts(h, padding[0], stride[0], hs)
    cols = _axis_parts(w, padding[1], stride[1], ws)
    for a, (i0, y0, ni) in enumerate(rows):
        for b, (j0, x0, nj) in enumerate(cols):
            if ni and nj:
                plane = planes[a, b, :, :f].reshape(n, c, hs, ws)
                yield (
                    plane[:, :, i0 : i0 + ni, j0 : j0 + nj],
                    x[
                        :,
                        :,
                        y0 : y0 + stride[0] * (ni - 1) + 1 : stride[0],
                        x0 : x0 + stride[1] * (nj - 1) + 1 : stride[1],
                    ],
                )


def _phase_planes(xp, x, stride, padding, hs, ws, tail):
    """The zero-padded input split into its stride phases: (s0, s1, N, C * Hs * Ws + tail), plane
    (a, b) holding padded positions (a + s0 * y, b + s1 * x) at (y, x) (zeros beyond the input
    and in the tail). For stride 1: the padded input, flattened per sample."""
    n, c = x.shape[:2]
    out = xp.zeros((stride[0], stride[1], n, c * hs * ws + tail), x.dtype)
    for dst, src in _phase_windows(out, x, stride, padding, hs, ws):
        dst[...] = src
    return out


def _from_phase_planes(xp, planes, shape, stride, padding, hs, ws):
    """The inverse of _phase_planes: the (N, C, H, W) input positions gathered back."""
    dx = xp.empty(shape, planes.dtype)
    for src, dst in _phase_windows(planes, dx, stride, padding, hs, ws):
        dst[...] = src
    return dx


def dw_forward(xp, x, weight, stride, padding, dilation, bias=None, keep=None):
    """out (N, C, Ho, Wo) = sum over the kernel offsets of the shifted input times weight
    (C, 1, kh, kw); plus ``bias`` (C,) when given. The input's phase planes are appended to the
    list ``keep`` when one is given (dw_backward's ``planes``)."""
    n, c = x.shape[:2]
    kernel = weight.shape[2:]
    ho, wo = dw_out_size(x.shape[2:], kernel, stride, padding, dilation)
    hs, ws, offs, smax = _geometry(x.shape[2:], kernel, stride, padding, dilation)
    p = hs * ws
    f = c * p
    planes = _phase_planes(xp, x, stride, padding, hs, ws, smax)
    if keep is not None:
        keep.append(planes)
    wk = weight.reshape(c, -1)
    acc = xp.empty((n, f), x.dtype)
    tmp = xp.empty((n, f), x.dtype)
    for k, (a, b, s) in enumerate(offs):
        wr = xp.repeat(wk[:, k], p)
        if k == 0:  # offset (0, 0): phase (0, 0), no shift
            xp.multiply(planes[0, 0, :, :f], wr, out=acc)
        else:
            xp.multiply(planes[a, b, :, s : s + f], wr, out=tmp)
            acc += tmp
    out = acc.reshape(n, c, hs, ws)[:, :, :ho, :wo]
    res = xp.empty((n, c, ho, wo), x.dtype)
    if bias is None:
        res[...] = out
    else:
        xp.add(out, bias.reshape(c, 1, 1), out=res)
    return res


def _chan_dots(xp, a3, b3):
    """Per-channel sums over N and L of a3 * b3 (N, C, L): a batch of BLAS dot products (rows
    contiguous, any row strides)."""
    n, c = a3.shape[:2]
    return xp.matmul(a3[:, :, None, :], b3[:, :, :, None]).reshape(n, c).sum(0)


def dw_backward(
    xp, grad, x, weight, stride, padding, dilation, need_x, need_w, need_b, planes=None
):
    """The gradients asked for, in the order (input (N, C, H, W), weight (C, 1, kh, kw), bias
    (C,)), of dw_forward from its output gradient ``grad`` (N, C, Ho, Wo); ``planes``: the
    input's phase planes kept by dw_forward (made again from ``x`` when None)."""
    n, c = x.shape[:2]
    kernel = weight.shape[2:]
    ho, wo = grad.shape[2:]
    hs, ws, offs, smax = _geometry(x.shape[2:], kernel, stride, padding, dilation)
    p = hs * ws
    f = c * p
    dt = grad.dtype
    # the output gradient on the phase-plane grid (zero outside the outputs)
    gf = xp.zeros((n, f), dt)
    gf.reshape(n, c, hs, ws)[:, :, :ho, :wo] = grad
    res = []
    if need_x:
        wk = weight.reshape(c, -1)
        dplanes = xp.zeros((stride[0], stride[1], n, f + smax), dt)
        tmp = xp.empty((n, f), dt)
        for k, (a, b, s) in enumerate(offs):
            xp.multiply(gf, xp.repeat(wk[:, k], p), out=tmp)
            dplanes[a, b, :, s : s + f] += tmp
        res.append(_from_phase_planes(xp, dplanes, x.shape, stride, padding, hs, ws))
    if need_w:
        if planes is None:
            planes = _phase_planes(xp, x, stride, padding, hs, ws, smax)
        g3 = gf.reshape(n, c, p)
        cols = [_chan_dots(xp, g3, planes[a, b, :, s : s + f].reshape(n, c, p)) for a, b, s in offs]
        res.append(xp.stack(cols, axis=1).reshape(weight.shape).astype(dt, copy=False))
    if need_b:
        res.append((gf.reshape(n, c, p) @ xp.ones(p, dt)).sum(0))
    return tuple(res)
