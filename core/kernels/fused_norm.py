"""Fused cupy kernels for layer norm: one launch forward, two backward.

On a GPU the generic layer norm of ``core/ops/normalization.py`` is ~15 array ops forward and ~25
backward (row statistics, the affine, the two row sums of the input gradient, the parameter
gradients), each a kernel launch: the five layer norms of bench/'s Transformer LM step make about
200 of its 421 device-array calls (bench/launch_census.py). Here the forward is one
``ElementwiseKernel`` with one thread per row, the input gradient one more, and the weight and
bias gradients one with a thread per column.

A thread walks its whole row (three passes forward, two backward) and sums in double, so rows
stay short enough (``MAX_ROW``) for the serial walk to cost less than the launches it replaces;
longer rows take the generic path, whose kernels are bandwidth-bound there anyway.

The bodies are plain C over one index ``i`` of arrays indexed linearly, as in fused_rnn.py: the
test suite compiles the same text with the host's C++ compiler and runs the layer norm op with it
(tests/test_fused_norm.py); only cupy's compilation of the text waits for a GPU.

Layouts (C-contiguous): ``x``, ``y``, ``g``, ``dx`` (R, S) rows of S normalized values; ``w``,
``b``, ``dw``, ``db`` (S,); ``mean``, ``rstd`` (R,).
"""

from __future__ import annotations

from .launch import KernelSet, kernel_set, launch

MAX_ROW = 4096

LAYER_NORM = """
const ptrdiff_t o = i * S;
double sum = 0;
for (ptrdiff_t j = 0; j < S; j++) sum += (double)x[o + j];
const double mu = sum / S;
double sq = 0;
for (ptrdiff_t j = 0; j < S; j++) {
    const double d = (double)x[o + j] - mu;
    sq += d * d;
}
const double rs = 1.0 / sqrt(sq / S + eps);
for (ptrdiff_t j = 0; j < S; j++) {
    double v = ((double)x[o + j] - mu) * rs;
    if (has_w) v *= (double)w[j];
    if (has_b) v += (double)b[j];
    y[o + j] = (T)v;
}
mean[i] = (T)mu;
rstd[i] = (T)rs;
"""
"""Forward, one row ``i``: ``y`` = (x - mean) * rstd (* w) (+ b), and the row's mean and
1/std (what the backward reuses)."""

LAYER_NORM_BACKWARD = """
const ptrdiff_t o = i * S;
const double mu = (double)mean[i], rs = (double)rstd[i];
double s1 = 0, s2 = 0;
for (ptrdiff_t j = 0; j < S; j++) {
    const double gw = has_w ? (double)g[o + j] * (double)w[j] : (double)g[o + j];
    s1 += gw;
    s2 += gw * ((double)x[o + j] - mu) * rs;
}
s1 /= S;
s2 /= S;
for (ptrdiff_t j = 0; j < S; j++) {
    const double gw = has_w ? (double)g[o + j] * (double)w[j] : (double)g[o + j];
    dx[o + j] = (T)(rs * (gw - s1 - ((double)x[o + j] - mu) * rs * s2));
}
"""
"""Input gradient, one row ``i``: dx = rstd (g w - mean_j(g w) - xhat mean_j(g w xhat))."""

LAYER_NORM_PARAM_BACKWARD = """
double sw = 0, sb = 0;
for (ptrdiff_t r = 0; r < R; r++) {
    const double gv = (double)g[r * S + i];
    sw += gv * ((double)x[r * S + i] - (double)mean[r]) * (double)rstd[r];
    sb += gv;
}
dw[i] = (T)sw;
db[i] = (T)sb;
"""
"""Weight and bias gradients, one column ``i``: sums over the rows of g xhat and of g."""

# (in params, out params) of each body, in the order the layer norm op passes them
PARAMS = {
    LAYER_NORM: (
        "raw T x, raw T w, raw T b, int64 S, float64 eps, int32 has_w, int32 has_b",
        "raw T y, raw T mean, raw T rstd",
    ),
    LAYER_NORM_BACKWARD: (
        "raw T x, raw T g, raw T w, raw T mean, raw T rstd, int64 S, int32 has_w",
        "raw T dx",
    ),
    LAYER_NORM_PARAM_BACKWARD: (
        "raw T x, raw T g, raw T mean, raw T rstd, int64 R, int64 S",
        "raw T dw, raw T db",
    ),
}


class LayerNormKernels(KernelSet):
    """The three layer norm kernels on arrays of one module ``xp``; each method allocates its
    outputs and takes C-contiguous (R, S) rows and (S,) parameters (None: absent)."""

    def forward(self, x2, weight, bias, eps: float):
        """(y, mean, rstd) of the rows ``x2`` (R, S)."""
        xp = self.xp
        r, s = x2.shape
        y = xp.empty_like(x2)
        mean, rstd = xp.empty(r, x2.dtype), xp.empty(r, x2.dtype)
        w = x2 if weight is None else weight  # an absent parameter is never read
        b = x2 if bias is None else bias
        args = (x2, w, b, s, float(eps), int(weight is not None), int(bias is not None))
        launch(self._kernels[0], (*args, y, mean, rstd), r)
        return y, mean, rstd

    def input_grad(self, x2, g2, weight, mean, rstd):
        """dx (R, S) from the rows, their output gradient ``g2`` and the forward's statistics."""
        r, s = x2.shape
        dx = self.xp.empty_like(x2)
        w = x2 if weight is None else weight
        launch(self._kernels[1], (x2, g2, w, mean, rstd, s, int(weight is not None), dx), r)
        return dx

    def param_grads(self, x2, g2, mean, rstd):
        """(dw, db) (S,) each: the column sums of g xhat and of g."""
        xp = self.xp
        r, s = x2.shape
        dw, db = xp.empty(s, x2.dtype), xp.empty(s, x2.dtype)
        launch(self._kernels[2], (x2, g2, mean, rstd, r, s, dw, db), s)
        return dw, db


_CACHE: dict = {}


def layer_norm_kernels(xp, dtype, row: int):
    """The fused layer norm kernels for arrays of ``xp`` (the real cupy module) and ``dtype``
    (float32/float64) with rows of ``row`` values, or None where the generic path runs (numpy,
    other array modules and dtypes, rows longer than ``MAX_ROW``)."""
    if row > MAX_ROW:
        return None
    bodies = {
        "ember_layer_norm": LAYER_NORM,
        "ember_layer_norm_backward": LAYER_NORM_BACKWARD,
        "ember_layer_norm_params": LAYER_NORM_PARAM_BACKWARD,
    }
    return kernel_set(xp, dtype, _CACHE, LayerNormKernels, bodies, PARAMS)
