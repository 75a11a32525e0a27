"""Fused cupy kernels for the LSTM's and GRU's per-step gate math (one launch per time step and
direction, forward and backward).

On a GPU the generic path of ``core/ops/recurrent.py`` launches ~13 small kernels per LSTM step
forward and ~18 backward (one per array op), so a step of batch 32 is bound by launches: on an
H200 the LSTM training step of bench/ took 8x torch's, 20 of its 30 ms in the gate math. Here the
whole gate math of a step is one ``ElementwiseKernel`` over the (batch, hidden) elements; only
the recurrent product stays a GEMM.

The kernel bodies are plain C over one element ``i`` of arrays indexed linearly, so the test
suite compiles the same text with the host's C++ compiler and runs the recurrent driver with it
(tests/test_fused_rnn.py): the math and the driver are checked against the generic path on every
machine, and only cupy's compilation of the text waits for a GPU.

Layouts (C-contiguous): ``g`` (B, kH) the input-side pre-activations of the step (LSTM gates i,
f, g, o, rows i, f and o pre-scaled by 0.5; GRU gates r, z, n, rows r and z pre-scaled; see
``_scaled_gates``), overwritten with the activations; ``gh`` (kH, B) the recurrent product
``W_hh_scaled @ h^T``; states and their copies (B, H).
"""

from __future__ import annotations

from .launch import KernelSet, kernel_set, launch

LSTM_STEP = """
const ptrdiff_t b = i / H, j = i % H, r = b * 4 * H + j;
const T zi = g[r] + gh[j * B + b];
const T zf = g[r + H] + gh[(j + H) * B + b];
const T zg = g[r + 2 * H] + gh[(j + 2 * H) * B + b];
const T zo = g[r + 3 * H] + gh[(j + 3 * H) * B + b];
const T mid = 0.5;  // not "half": the name of CUDA's 16-bit float type
const T ai = tanh(zi) * mid + mid;
const T af = tanh(zf) * mid + mid;
const T ag = tanh(zg);
const T ao = tanh(zo) * mid + mid;
g[r] = ai;
g[r + H] = af;
g[r + 2 * H] = ag;
g[r + 3 * H] = ao;
if (save) {
    hprev[i] = h[i];
    cprev[i] = c[i];
}
const T cn = af * c[i] + ai * ag;
const T t = tanh(cn);
c[i] = cn;
tc[i] = t;
y[i] = ao * t;
h[i] = ao * t;
"""
"""One forward step: activations into ``g``; the cell ``c`` and hidden ``h`` (B, H) updated in
place (their old values copied to ``hprev``/``cprev`` when ``save``); ``tc`` = tanh(c') and the
output ``y`` = h'."""

LSTM_STEP_BACKWARD = """
const ptrdiff_t b = i / H, j = i % H, r = b * 4 * H + j;
const T one = 1;
const T ai = a[r], af = a[r + H], ag = a[r + 2 * H], ao = a[r + 3 * H];
const T t = tc[i];
const T dhv = dh[i] + dy[i];
const T dct = dc[i] + dhv * ao * (one - t * t);
d[r] = dct * ag * ai * (one - ai);
d[r + H] = dct * cprev[i] * af * (one - af);
d[r + 2 * H] = dct * ai * (one - ag * ag);
d[r + 3 * H] = dhv * t * ao * (one - ao);
dc[i] = dct * af;
"""
"""One backward step: from the step's activations ``a`` (B, 4H), tanh of its cell ``tc``, the
previous cell ``cprev``, the carried gradients ``dh`` and ``dc`` and the output gradient ``dy``
(B, H): the pre-activation gradients ``d`` (B, 4H); ``dc`` becomes the previous cell's."""

GRU_STEP = """
const ptrdiff_t b = i / H, j = i % H, r = b * 3 * H + j;
const T mid = 0.5;  // not "half": the name of CUDA's 16-bit float type
const T hr = gh[j * B + b] + bh[j];
const T hz = gh[(j + H) * B + b] + bh[j + H];
const T hn = gh[(j + 2 * H) * B + b] + bh[j + 2 * H];
const T ar = tanh(g[r] + hr) * mid + mid;
const T az = tanh(g[r + H] + hz) * mid + mid;
const T an = tanh(g[r + 2 * H] + ar * hn);
g[r] = ar;
g[r + H] = az;
g[r + 2 * H] = an;
if (save) {
    hprev[i] = h[i];
    hna[i] = hn;
}
const T hv = (h[i] - an) * az + an;
y[i] = hv;
h[i] = hv;
"""
"""One GRU forward step: activations into ``g``; ``h`` (B, H) updated in place (its old value
copied to ``hprev``, and ``W_hn h + b_hn`` to ``hna``, when ``save``); ``bh`` (3H) the scaled
recurrent bias (zeros without bias); the output ``y`` = h'."""

GRU_STEP_BACKWARD = """
const ptrdiff_t b = i / H, j = i % H, r = b * 3 * H + j;
const T one = 1;
const T ar = a[r], az = a[r + H], an = a[r + 2 * H];
const T dhv = dh[i] + dy[i];
const T dn = (one - az) * dhv * (one - an * an);
dxn[i] = dn;
d[r] = dn * hna[i] * ar * (one - ar);
d[r + H] = (hprev[i] - an) * dhv * az * (one - az);
d[r + 2 * H] = dn * ar;
dh[i] = dhv * az;
"""
"""One GRU backward step: from the activations ``a`` (B, 3H), ``hprev``, ``hna``, the carried
gradient ``dh`` and the output gradient ``dy``: the recurrent-side pre-activation gradients
``d`` (B, 3H), the input-side gradient of the n gate ``dxn``, and ``dh`` becomes the part of the
previous state's gradient that bypasses W_hh (dh * z)."""

# (in params, out params) of each body, in the order the recurrent driver passes them
PARAMS = {
    LSTM_STEP: (
        "raw T gh, int64 H, int64 B, int32 save",
        "raw T g, raw T c, raw T h, raw T tc, raw T y, raw T hprev, raw T cprev",
    ),
    LSTM_STEP_BACKWARD: (
        "raw T a, raw T tc, raw T cprev, raw T dh, raw T dy, int64 H",
        "raw T d, raw T dc",
    ),
    GRU_STEP: (
        "raw T gh, raw T bh, int64 H, int64 B, int32 save",
        "raw T g, raw T h, raw T y, raw T hprev, raw T hna",
    ),
    GRU_STEP_BACKWARD: (
        "raw T a, raw T hprev, raw T hna, raw T dy, int64 H",
        "raw T d, raw T dxn, raw T dh",
    ),
}


class StepKernels(KernelSet):
    """A recurrent mode's forward and backward step kernels. ``forward(*args, size=B * H)`` and
    ``backward(...)`` take the arguments in the order of ``PARAMS`` (C-contiguous arrays and
    integers) and run the body once per (batch, hidden) element."""

    def forward(self, *args, size: int) -> None:
        launch(self._kernels[0], args, size)

    def backward(self, *args, size: int) -> None:
        launch(self._kernels[1], args, size)


_BODIES = {"lstm": (LSTM_STEP, LSTM_STEP_BACKWARD), "gru": (GRU_STEP, GRU_STEP_BACKWARD)}
_CACHE: dict = {}  # mode -> {array module: StepKernels}


def step_kernels(xp, dtype, mode: str):
    """The fused step kernels of ``mode`` ("lstm" or "gru") for arrays of ``xp`` (the real cupy
    module) and ``dtype`` (float32/float64), or None where the generic path runs (numpy, other
    array modules and dtypes)."""
    fwd, bwd = _BODIES[mode]
    bodies = {f"ember_{mode}_step": fwd, f"ember_{mode}_step_backward": bwd}
    return kernel_set(xp, dtype, _CACHE.setdefault(mode, {}), StepKernels, bodies, PARAMS)
