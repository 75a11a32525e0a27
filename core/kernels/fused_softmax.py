"""Fused cupy kernels for attention's softmax (``_attention_probs``): one launch forward, one for
the softmax part of the backward.

On a GPU the generic ``_attention_probs`` of nn/_attention.py scales the scores, masks the causal
block and runs a safe softmax as ~11 array ops, and its backward's softmax part as 4; the two
attention layers of bench/'s Transformer LM step make ~30 of its device-array calls that way
(bench/launch_census.py). Here a thread per score row does all of it in place on the scores,
with the arithmetic in double: max, exp and sum, normalize (three passes over a row of keys);
the backward's p * (g - sum(g p)) * scale is one more (two passes). The products with the
query, key and value stay cuBLAS GEMMs.

Semantics are the generic path's: scores are scaled, the causal mask hides key j > query i (the
top-left aligned block), a row whose maximum is -inf gives zeros when ``safe`` (torch's SDPA)
and NaN otherwise, and a NaN score makes its row NaN.

The bodies are plain C over one index ``i`` of linearly indexed raw arrays, as in fused_rnn.py:
the test suite compiles the same text with the host's C++ compiler and runs the attention ops with
it (tests/test_fused_softmax.py); only cupy's compilation of the text waits for a GPU.

Layouts (C-contiguous): ``s``, ``g``, ``p``, ``gs`` (R, S): R score rows (batch x heads x L
queries) of S keys.
"""

from __future__ import annotations

from .launch import KernelSet, kernel_set, launch

ATTENTION_SOFTMAX = """
const ptrdiff_t o = i * S, lim = causal ? i % L : S - 1;
double mx = ninf;
for (ptrdiff_t j = 0; j < S; j++) {
    const double v = j <= lim ? (double)s[o + j] * scale : ninf;
    if (v > mx || v != v) mx = v;
    if (mx != mx) break;
}
if (safe && mx == ninf) mx = 0;
double sum = 0;
for (ptrdiff_t j = 0; j < S; j++) {
    const double v = j <= lim ? (double)s[o + j] * scale : ninf;
    const double e = exp(v - mx);
    s[o + j] = (T)e;
    sum += e;
}
if (safe && sum == 0) sum = 1;
for (ptrdiff_t j = 0; j < S; j++) s[o + j] = (T)((double)s[o + j] / sum);
"""
"""Forward, one score row ``i`` (query ``i % L``), in place: softmax(scale * s) over the keys
it may see."""

ATTENTION_SOFTMAX_BACKWARD = """
const ptrdiff_t o = i * S;
double r = 0;
for (ptrdiff_t j = 0; j < S; j++) r += (double)g[o + j] * (double)p[o + j];
for (ptrdiff_t j = 0; j < S; j++) {
    gs[o + j] = (T)((double)p[o + j] * ((double)g[o + j] - r) * scale);
}
"""
"""Backward, one row ``i``: the scores' gradient p (g - sum(g p)), times the scale."""

# (in params, out params) of each body, in the order the attention ops pass them
PARAMS = {
    ATTENTION_SOFTMAX: (
        "int64 S, int64 L, float64 scale, float64 ninf, int32 causal, int32 safe",
        "raw T s",
    ),
    ATTENTION_SOFTMAX_BACKWARD: ("raw T g, raw T p, int64 S, float64 scale", "raw T gs"),
}


class AttentionSoftmaxKernels(KernelSet):
    """The two kernels on arrays of one module ``xp``."""

    def forward(self, s, scale: float, causal: bool, safe: bool):
        """softmax(scale * s) over the last dim of C-contiguous scores ``s`` (..., L, S), in
        place (``causal``: query i sees keys j <= i); returns ``s``."""
        L, S = s.shape[-2], s.shape[-1]
        args = (S, L, float(scale), float("-inf"), int(causal), int(safe), s)
        launch(self._kernels[0], args, s.size // S if S else 0)
        return s

    def backward(self, g, p, scale: float):
        """The scores' gradient from the probabilities' gradient ``g`` and the probabilities
        ``p`` (C-contiguous, same shape)."""
        gs = self.xp.empty_like(p)
        S = p.shape[-1]
        launch(self._kernels[1], (g, p, S, float(scale), gs), p.size // S if S else 0)
        return gs


_CACHE: dict = {}


def attention_softmax_kernels(xp, dtype):
    """The fused attention softmax kernels for arrays of ``xp`` (the real cupy module) and
    ``dtype`` (float32/float64), or None where the generic path runs."""
    bodies = {
        "ember_attention_softmax": ATTENTION_SOFTMAX,
        "ember_attention_softmax_backward": ATTENTION_SOFTMAX_BACKWARD,
    }
    return kernel_set(xp, dtype, _CACHE, AttentionSoftmaxKernels, bodies, PARAMS)
