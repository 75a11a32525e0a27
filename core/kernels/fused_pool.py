"""Fused cupy kernels for 2x2 stride-2 max pooling (``_max_pool2x2``): one launch forward, one
backward.

On a GPU the generic ``_max_pool2x2`` of core/ops/pooling.py is 12 array ops forward (the four
window planes, their maxima, three argmax masks) and 11 backward, plus two host syncs (a NaN
check of the output, an inf/NaN check of the gradient); the two pools of bench/'s CNN step make
46 of its 191 device-array calls (bench/launch_census.py). Here the forward is one
``ElementwiseKernel`` with a thread per output value, which also writes each window's argmax
(0-3, int8), and the backward one with a thread per input value, which takes the gradient where
its position is its window's argmax: no host sync, and inf/NaN gradients need no other path.

The argmax follows torch's rule, as the generic path does: the first maximum of the window in
row-major order, or its last NaN when it holds NaNs.

The bodies are plain C over one index ``i`` of linearly indexed raw arrays, as in fused_rnn.py:
the test suite compiles the same text with the host's C++ compiler and runs the pooling op with
it (tests/test_fused_pool.py); only cupy's compilation of the text waits for a GPU.

Layouts (C-contiguous): ``x``, ``dx`` (P, 2 ho, 2 wo) with P the planes (batch x channels);
``y``, ``g``, ``arg`` (P, ho, wo).
"""

from __future__ import annotations

from .launch import KernelSet, kernel_set, launch

MAX_POOL_2X2 = """
const ptrdiff_t c = i % wo, q = i / wo;
const ptrdiff_t o = (q / ho) * 4 * ho * wo + (q % ho) * 4 * wo + 2 * c;
const ptrdiff_t at[4] = {o, o + 1, o + 2 * wo, o + 2 * wo + 1};
T m = x[o];
int k = 0;
bool nan = m != m;
for (int n = 1; n < 4; n++) {
    const T v = x[at[n]];
    if (v != v) {
        m = v;
        k = n;
        nan = true;
    } else if (!nan && v > m) {
        m = v;
        k = n;
    }
}
y[i] = m;
arg[i] = (signed char)k;
"""
"""Forward, one window ``i``: its maximum and the position of its argmax."""

MAX_POOL_2X2_BACKWARD = """
const ptrdiff_t w2 = 2 * wo, col = i % w2, row = (i / w2) % (2 * ho), p = i / (w2 * 2 * ho);
const ptrdiff_t w = (p * ho + row / 2) * wo + col / 2;
dx[i] = arg[w] == (row % 2) * 2 + col % 2 ? g[w] : (T)0;
"""
"""Backward, one input position ``i``: its window's gradient where it is the argmax, else 0."""

# (in params, out params) of each body, in the order the pooling op passes them
PARAMS = {
    MAX_POOL_2X2: ("raw T x, int64 ho, int64 wo", "raw T y, raw int8 arg"),
    MAX_POOL_2X2_BACKWARD: ("raw T g, raw int8 arg, int64 ho, int64 wo", "raw T dx"),
}


class MaxPool2x2Kernels(KernelSet):
    """The two kernels on arrays of one module ``xp``; each method allocates its output."""

    def forward(self, x):
        """(maxima, argmax positions) of the 2x2 windows of C-contiguous ``x`` (..., H, W)."""
        xp = self.xp
        ho, wo = x.shape[-2] // 2, x.shape[-1] // 2
        shape = x.shape[:-2] + (ho, wo)
        y, arg = xp.empty(shape, x.dtype), xp.empty(shape, xp.int8)
        launch(self._kernels[0], (x, ho, wo, y, arg), y.size)
        return y, arg

    def backward(self, g, arg, shape):
        """The input gradient (``shape``) from the output gradient ``g`` (C-contiguous)."""
        dx = self.xp.empty(shape, g.dtype)
        launch(self._kernels[1], (g, arg, arg.shape[-2], arg.shape[-1], dx), dx.size)
        return dx


_CACHE: dict = {}


def max_pool_2x2_kernels(xp, dtype):
    """The fused 2x2 max pooling kernels for arrays of ``xp`` (the real cupy module) and
    ``dtype`` (float32/float64), or None where the generic path runs."""
    bodies = {
        "ember_max_pool_2x2": MAX_POOL_2X2,
        "ember_max_pool_2x2_backward": MAX_POOL_2X2_BACKWARD,
    }
    return kernel_set(xp, dtype, _CACHE, MaxPool2x2Kernels, bodies, PARAMS)
