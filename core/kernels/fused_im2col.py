"""Fused cupy kernels for im2col and col2im (1 to 3 spatial dims): one launch each.

On a GPU the generic im2col of kernels/im2col.py copies one strided slice per kernel offset (9
launches for a 3x3 kernel, plus the padded copy of the input), and col2im adds one per offset;
the convolutions of bench/'s CNN step make ~30 of its device-array calls that way
(bench/launch_census.py). Here im2col is a gather with a thread per column value (reading the
input, or 0 in the padding) and col2im a gather with a thread per input value that sums the
column values it appears in: no padded copy, and no atomics. The sums run over the kernel
offsets in the generic path's order, in the array's type, so both paths give the same bits.

The bodies are plain C over one index ``i`` of linearly indexed raw arrays, as in fused_rnn.py:
the test suite compiles the same text with the host's C++ compiler and runs the convolutions with
it (tests/test_fused_im2col.py); only cupy's compilation of the text waits for a GPU.

Layouts (C-contiguous), with fewer spatial dims taken as leading dims of size 1: ``x``
(N, C, ID, IH, IW); ``cols`` (C, KD, KH, KW, N, OD, OH, OW).
"""

from __future__ import annotations

from .launch import KernelSet, kernel_set, launch

_GEOMETRY = (
    "int64 nc, int64 nn, int64 id, int64 ih, int64 iw, int64 kd, int64 kh, int64 kw, "
    "int64 od, int64 oh, int64 ow, int64 sd, int64 sh, int64 sw, int64 pd, int64 ph, int64 pw, "
    "int64 dd, int64 dh, int64 dw"
)

IM2COL = """
ptrdiff_t r = i;
const ptrdiff_t x_ = r % ow; r /= ow;
const ptrdiff_t y_ = r % oh; r /= oh;
const ptrdiff_t z_ = r % od; r /= od;
const ptrdiff_t n = r % nn; r /= nn;
const ptrdiff_t kx = r % kw; r /= kw;
const ptrdiff_t ky = r % kh; r /= kh;
const ptrdiff_t kz = r % kd;
const ptrdiff_t c = r / kd;
const ptrdiff_t iz = z_ * sd - pd + kz * dd;
const ptrdiff_t iy = y_ * sh - ph + ky * dh;
const ptrdiff_t ix = x_ * sw - pw + kx * dw;
const bool inside = iz >= 0 && iz < id && iy >= 0 && iy < ih && ix >= 0 && ix < iw;
cols[i] = inside ? x[(((n * nc + c) * id + iz) * ih + iy) * iw + ix] : (T)0;
"""
"""im2col, one column value ``i``: the input value its kernel offset and output position read
(0 in the padding)."""

COL2IM = """
ptrdiff_t r = i;
const ptrdiff_t ix = r % iw; r /= iw;
const ptrdiff_t iy = r % ih; r /= ih;
const ptrdiff_t iz = r % id; r /= id;
const ptrdiff_t c = r % nc;
const ptrdiff_t n = r / nc;
T acc = 0;
for (ptrdiff_t kz = 0; kz < kd; kz++) {
    const ptrdiff_t tz = iz + pd - kz * dd;
    if (tz < 0 || tz % sd != 0 || tz / sd >= od) continue;
    for (ptrdiff_t ky = 0; ky < kh; ky++) {
        const ptrdiff_t ty = iy + ph - ky * dh;
        if (ty < 0 || ty % sh != 0 || ty / sh >= oh) continue;
        for (ptrdiff_t kx = 0; kx < kw; kx++) {
            const ptrdiff_t tx = ix + pw - kx * dw;
            if (tx < 0 || tx % sw != 0 || tx / sw >= ow) continue;
            const ptrdiff_t k = ((c * kd + kz) * kh + ky) * kw + kx;
            acc += cols[((k * nn + n) * od + tz / sd) * oh * ow + (ty / sh) * ow + tx / sw];
        }
    }
}
x[i] = acc;
"""
"""col2im, one input value ``i``: the sum of the column values that read it, over the kernel
offsets in order."""

# (in params, out params) of each body, in the order the drivers pass them
PARAMS = {
    IM2COL: (f"raw T x, {_GEOMETRY}", "raw T cols"),
    COL2IM: (f"raw T cols, {_GEOMETRY}", "raw T x"),
}


def _three(values, fill):
    """A per-spatial-dim tuple widened to three dims (leading ``fill``)."""
    return (fill,) * (3 - len(values)) + tuple(values)


class Im2colKernels(KernelSet):
    """The two kernels on arrays of one module ``xp``; each method allocates its output."""

    @staticmethod
    def _geometry(n, c, spatial, kernel, out_spatial, stride, padding, dilation):
        return (
            c, n, *_three(spatial, 1), *_three(kernel, 1), *_three(out_spatial, 1),
            *_three(stride, 1), *_three(padding, 0), *_three(dilation, 1),
        )  # fmt: skip

    def im2col(self, x, kernel, stride, padding, dilation, out_spatial):
        """Columns (C, *kernel, N, *out_spatial) of C-contiguous ``x`` (N, C, *spatial)."""
        n, c = x.shape[:2]
        cols = self.xp.empty((c, *kernel, n, *out_spatial), x.dtype)
        geo = self._geometry(n, c, x.shape[2:], kernel, out_spatial, stride, padding, dilation)
        launch(self._kernels[0], (x, *geo, cols), cols.size)
        return cols

    def col2im(self, cols, spatial, stride, padding, dilation):
        """The sum of C-contiguous columns (C, *kernel, N, *out_spatial) back into
        (N, C, *spatial)."""
        nd = len(spatial)
        c, n = cols.shape[0], cols.shape[1 + nd]
        kernel, out_spatial = cols.shape[1 : 1 + nd], cols.shape[2 + nd :]
        x = self.xp.empty((n, c, *spatial), cols.dtype)
        geo = self._geometry(n, c, spatial, kernel, out_spatial, stride, padding, dilation)
        launch(self._kernels[1], (cols, *geo, x), x.size)
        return x


_CACHE: dict = {}


def im2col_kernels(xp, dtype, nd: int):
    """The fused im2col/col2im kernels for arrays of ``xp`` (the real cupy module), ``dtype``
    (float32/float64) and ``nd`` (1 to 3) spatial dims, or None where the generic path runs."""
    if not 1 <= nd <= 3:
        return None
    bodies = {"ember_im2col": IM2COL, "ember_col2im": COL2IM}
    return kernel_set(xp, dtype, _CACHE, Im2colKernels, bodies, PARAMS)
