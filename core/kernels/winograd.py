"""Winograd F(2x2, 3x3) for 3x3 stride-1 2-D convolutions: plain array code, no autograd.

Each 2x2 block of outputs (a "tile") is computed from the 4x4 input patch under it as
``Y = A^T [(G g G^T) * (B^T d B)] A``: 16 products per tile and channel pair instead of 36, which
become 16 GEMMs (one per position k of the 4x4 transformed tile): ``M[k] = U[k] @ V[k]`` with
the weight transform U (16, O, C) and the input transform V (16, C, T).

Layout. numpy runs ops on views whose innermost axis is strided several times slower than on
contiguous data, and the tiles overlap with stride 2, so the padded input is split ONCE (one
strided pass) into its four row/column parity planes (2, 2, C, N, Hh, Wh): padded pixel
(2i + rp, 2j + cp) is plane [rp, cp] at (i, j). Every tile element is then a plain shift of a
parity plane, and every transform step is an op on contiguous (flattened) data: rows shift by
Wh, columns by 1. The tile index runs over (N, th, Wh): each row of tiles carries one extra
"garbage" tile (j = tw) so that the column shift stays a flat shift; its products are computed and
dropped (the output transform never reads them), and its output gradient is zero, so it adds
nothing to the weight or input gradients. T = N * th * Wh.

Backward: dM = A dY A^T (16, O, T) (built from the four de-interleaved output-gradient planes; the
signs of its rows/columns 3 are folded into the small weight-side matrices), dU = dM @ V^T,
dV = U^T @ dM, then the input gradient is the adjoint of the input transform (the same shifts,
adding), laid back from the parity planes onto the input.

On the host both directions run over chunks of samples (``_CHUNK_BYTES``): a sample's tiles are
a contiguous range of T, so a chunk is a column range of V and a slice of the batch.
"""

from __future__ import annotations

import numpy as _np

__all__ = [
    "wino_backward",
    "wino_forward",
    "wino_input_transform",
    "wino_out_size",
    "wino_weight_transform",
]

# F(2, 3): B^T (4x4), G (4x3), A^T (2x4)
_G = _np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_AT = _np.array([[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, -1.0, -1.0]])
# sign of dM[r, s] = A dY A^T relative to the planes wino_backward builds: rows/cols 3 of A are
# (0, -1), so dM[r, s] is the built plane negated when exactly one of r, s is 3
_SIGN = _np.array([-1.0 if (r == 3) != (s == 3) else 1.0 for r in range(4) for s in range(4)])
_CONST: dict = {}
# The forward and backward run over chunks of samples whose products (M, dM) take about this
# many bytes, so that a chunk's GEMMs and transforms work on data still in cache, and M, dM and
# dV are never whole-batch arrays. Measured here (bench_cnn.py steps, 2 threads): 2-4 MB chunks
# are best (CNN 17.4-17.9 -> 15.9-16.8 ms, ResNet stack 96-98 -> 91-95 ms); 1 MB and less lose
# to per-chunk overhead, 8 MB and more to the cache.
_CHUNK_BYTES = 3 << 20


def _consts(xp, dtype):
    """(G (x) G (16, 9), the same with dM's signs, A^T (x) A^T (4, 16)) as ``xp`` arrays."""
    c = _CONST.get(dtype)
    if c is None:
        gk = _np.kron(_G, _G)
        c = (
            gk.astype(dtype),
            (gk * _SIGN[:, None]).astype(dtype),
            _np.kron(_AT, _AT).astype(dtype),
        )
        _CONST[dtype] = c
    # a device array module gets them copied to its current device (a few hundred bytes)
    return c if xp is _np else tuple(xp.asarray(a) for a in c)


def wino_out_size(spatial, padding):
    """(Ho, Wo, th, tw): the output size and the tile grid of a 3x3 stride-1 convolution."""
    ho = spatial[0] + 2 * padding[0] - 2
    wo = spatial[1] + 2 * padding[1] - 2
    return ho, wo, (ho + 1) // 2, (wo + 1) // 2


def wino_weight_transform(xp, weight, signed=False):
    """U = G g G^T of weight (O, C, 3, 3), as (16, O, C) (one GEMM with G (x) G). ``signed``: with
    the signs of dM folded in (the backward's U^T @ dM)."""
    o, c = weight.shape[:2]
    gk = _consts(xp, weight.dtype)[1 if signed else 0]
    return xp.matmul(gk, weight.reshape(o * c, 9).T).reshape(16, o, c)


def _parity_slices(n: int, p: int, half: int):
    """For each parity q of the padded axis: (first plane index, first source index, count) of
    the source positions (length n, padded by p) that land in parity plane q."""
    out = []
    for q in (0, 1):
        i0 = (p - q + 1) // 2  # first plane index whose padded position 2*i0+q >= p
        s0 = 2 * i0 + q - p
        cnt = max(0, min((n - s0 + 1) // 2, half - i0))
        out.append((i0, s0, cnt))
    return out


def _parity_parts(spatial, padding, hh, wh):
    """(index into the (2, 2, C, N, Hh, Wh) parity planes, index into the (C, N, H, W) image) of
    each non-empty part: the image pixels that land in one parity plane of the padded image."""
    rows = _parity_slices(spatial[0], padding[0], hh)
    cols = _parity_slices(spatial[1], padding[1], wh)
    for rp, (i0, y0, ni) in enumerate(rows):
        for cp, (j0, x0, nj) in enumerate(cols):
            if ni and nj:
                plane = (rp, cp, slice(None), slice(None), slice(i0, i0 + ni), slice(j0, j0 + nj))
                pixels = (
                    slice(None),
                    slice(None),
                    slice(y0, y0 + 2 * ni - 1, 2),
                    slice(x0, x0 + 2 * nj - 1, 2),
                )
                yield plane, pixels


def wino_input_transform(xp, x, padding):
    """V = B^T d B of every 4x4 input tile: (16, C, T), T = N * th * (tw + 1) (see the module
    docstring). ``x`` is (N, C, H, W), zero-padded by ``padding`` (ph, pw) on the fly."""
    n, c, h, w = x.shape
    _, _, th, tw = wino_out_size((h, w), padding)
    hh, wh = th + 1, tw + 1
    # the four parity planes of the padded input, channels first (V's rows are channels)
    buf = xp.zeros((2, 2, c, n, hh, wh), x.dtype)
    xt = x.swapaxes(0, 1)
    for plane, pixels in _parity_parts((h, w), padding, hh, wh):
        buf[plane] = xt[pixels]
    length = th * wh
    bf = buf.reshape(2, 2, c * n, hh * wh)
    # rows (B^T from the left): e_r for both column parities at once, (4, 2, C*N, th*Wh)
    a0, a2 = bf[0, :, :, :length], bf[0, :, :, wh:]
    a1, a3 = bf[1, :, :, :length], bf[1, :, :, wh:]
    e = xp.empty((4, 2, c * n, length), x.dtype)
    xp.subtract(a0, a2, out=e[0])
    xp.add(a1, a2, out=e[1])
    xp.subtract(a2, a1, out=e[2])
    xp.subtract(a1, a3, out=e[3])
    del buf, bf, a0, a1, a2, a3
    # columns (B from the right): flat shifts by one within each parity plane
    f = c * n * length
    ef = e.reshape(4, 2, f)
    ev, od = ef[:, 0], ef[:, 1]
    v = xp.empty((4, 4, f), x.dtype)
    v[:, :, f - 1] = 0  # the last garbage tile has no right neighbour
    xp.subtract(ev[:, :-1], ev[:, 1:], out=v[:, 0, :-1])
    xp.add(od[:, :-1], ev[:, 1:], out=v[:, 1, :-1])
    xp.subtract(ev[:, 1:], od[:, :-1], out=v[:, 2, :-1])
    xp.subtract(od[:, :-1], od[:, 1:], out=v[:, 3, :-1])
    return v.reshape(16, c, n * length)


def _output_transform(xp, m, n, th, tw, bias, out):
    """Y = A^T M A of the products m (16, O, T) written into ``out`` (N, O, Ho, Wo)."""
    o = m.shape[1]
    ak = _consts(xp, m.dtype)[2]
    # one (4, 16) GEMM: the four output planes Y[a, b] (memory-bound, but BLAS-threaded)
    y = xp.matmul(ak, m.reshape(16, -1)).reshape(2, 2, o, n, th, tw + 1)
    bb = None if bias is None else bias.reshape(o, 1, 1)
    for a in (0, 1):
        for b in (0, 1):
            dst = out[:, :, a::2, b::2]
            src = y[a, b, :, :, : dst.shape[2], : dst.shape[3]].swapaxes(0, 1)
            if bb is None:
                dst[...] = src
            else:
                xp.add(src, bb, out=dst)
    return out


def _chunks(xp, n: int, per_sample: int):
    """Sample ranges [a, b) of about ``_CHUNK_BYTES`` of per-tile products each (on the host;
    a GPU takes the whole batch at once: there each chunk would cost kernel launches)."""
    if xp is not _np:
        return [(0, n)]
    step = max(1, _CHUNK_BYTES // max(1, per_sample))
    return [(a, min(a + step, n)) for a in range(0, n, step)]


def wino_forward(xp, v, weight, n, ho, wo, bias=None):
    """The convolution's output (N, O, Ho, Wo) from the input transform ``v`` (16, C, T)."""
    th, tw = (ho + 1) // 2, (wo + 1) // 2
    u = wino_weight_transform(xp, weight)
    out = xp.empty((n, weight.shape[0], ho, wo), v.dtype)
    per = v.shape[2] // n  # tiles per sample
    for a, b in _chunks(xp, n, 16 * weight.shape[0] * per * v.itemsize):
        m = xp.matmul(u, v[:, :, a * per : b * per])
        _output_transform(xp, m, b - a, th, tw, bias, out[a:b])
    return out


def _grad_planes(xp, grad, th, tw):
    """dM = A dY A^T of the output gradient (N, O, Ho, Wo) as (16, O, T), up to the signs
    folded into the signed weight transform: planes (r, s) in {0, 3}^2 are the de-interleaved
    gradient, the others sums/differences of them; the garbage tiles are zero."""
    n, o = grad.shape[:2]
    wh = tw + 1
    p = xp.empty((4, 4, o, n, th, wh), grad.dtype)
    gt = grad.swapaxes(0, 1)
    for a in (0, 1):
        for b in (0, 1):
            dst = p[3 * a, 3 * b]
            src = gt[:, :, a::2, b::2]
            hs, ws = src.shape[2], src.shape[3]
            dst[:, :, :hs, :ws] = src
            if ws < tw:  # an odd output width: the cropped column too
                dst[:, :, :, ws:] = 0
            else:
                dst.reshape(-1)[tw::wh] = 0  # the garbage tiles (one flat strided write)
            if hs < th:
                dst[:, :, hs:, :] = 0
    pf = p.reshape(4, 4, -1)
    xp.add(pf[0, 0::3], pf[3, 0::3], out=pf[1, 0::3])
    xp.subtract(pf[0, 0::3], pf[3, 0::3], out=pf[2, 0::3])
    xp.add(pf[:, 0], pf[:, 3], out=pf[:, 1])
    xp.subtract(pf[:, 0], pf[:, 3], out=pf[:, 2])
    return p.reshape(16, o, -1)


def _input_grad(xp, dv, n, c, spatial, padding, th, tw, dx):
    """The adjoint of wino_input_transform: dV (16, C, T) -> the input gradient, written into
    ``dx`` (N, C, H, W)."""
    hh, wh = th + 1, tw + 1
    length = th * wh
    f = c * n * length
    d = dv.reshape(4, 4, f)
    # columns: v0 = e[k] - e[k+1], v1 = o[k] + e[k+1], v2 = e[k+1] - o[k], v3 = o[k] - o[k+1];
    # the garbage tiles' gradients are zero, so no shift carries anything across a row
    de = xp.empty((4, 2, f), dv.dtype)  # the gradient of e (4 rows, even/odd column planes)
    t = d[:, 1] + d[:, 2]
    xp.subtract(t, d[:, 0], out=t)
    de[:, 0, 0] = d[:, 0, 0]
    xp.add(d[:, 0, 1:], t[:, :-1], out=de[:, 0, 1:])
    del t
    xp.subtract(d[:, 1], d[:, 2], out=de[:, 1])
    de[:, 1] += d[:, 3]
    de[:, 1, 1:] -= d[:, 3, :-1]
    # rows: e0 = b0[i] - b0[i+1], e1 = b1[i] + b0[i+1], e2 = b0[i+1] - b1[i], e3 = b1[i] - b1[i+1]
    g = de.reshape(4, 2, c * n, length)
    db = xp.empty((2, 2, c * n, hh * wh), dv.dtype)
    db[0, :, :, :length] = g[0]
    db[0, :, :, length:] = 0
    b0 = db[0, :, :, wh:]
    b0 += g[1]
    b0 += g[2]
    b0 -= g[0]
    b1 = db[1, :, :, :length]
    xp.subtract(g[1], g[2], out=b1)
    b1 += g[3]
    db[1, :, :, length:] = 0
    db[1, :, :, wh:] -= g[3]
    del de, g, b0, b1
    # back from the parity planes onto the input (every input pixel is in exactly one plane)
    db = db.reshape(2, 2, c, n, hh, wh)
    dxt = dx.swapaxes(0, 1)
    for plane, pixels in _parity_parts(spatial, padding, hh, wh):
        dxt[pixels] = db[plane]
    return dx


def wino_backward(
    xp, grad, v, weight, spatial, padding, need_input=True, need_weight=True, need_bias=False
):
    """The gradients asked for, as a tuple in the order (input (N, C, H, W), weight (O, C, 3, 3),
    bias (O,)), of the convolution from its output gradient (N, O, Ho, Wo) and the saved input
    transform ``v``."""
    n, o, ho, wo = grad.shape
    c = weight.shape[1]
    th, tw = (ho + 1) // 2, (wo + 1) // 2
    per = v.shape[2] // n  # tiles per sample
    dx = xp.empty((n, c) + tuple(spatial), grad.dtype) if need_input else None
    du = xp.zeros((16, o, c), grad.dtype) if need_weight else None
    db = xp.zeros((o,), grad.dtype) if need_bias else None
    if need_input:
        ust = wino_weight_transform(xp, weight, signed=True).swapaxes(1, 2)
    for a, b in _chunks(xp, n, 16 * o * per * grad.itemsize):
        dm = _grad_planes(xp, grad[a:b], th, tw)
        if need_input:
            dv = xp.matmul(ust, dm)  # (16, C, T of the chunk)
            _input_grad(xp, dv, b - a, c, spatial, padding, th, tw, dx[a:b])
            del dv
        if need_weight:
            du += xp.matmul(dm, v[:, :, a * per : b * per].swapaxes(1, 2))  # (16, O, C)
        if need_bias:
            # plane (1, 1) of dM is the sum of the four de-interleaved gradient planes: every
            # output once (the garbage tiles are zero)
            db += dm[5].sum(1)
    res = [dx] if need_input else []
    if need_weight:
        gks = _consts(xp, grad.dtype)[1]
        res.append(xp.matmul(du.reshape(16, o * c).T, gks).reshape(o, c, 3, 3))
    if need_bias:
        res.append(db)
    return tuple(res)
