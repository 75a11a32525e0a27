"""The fused attention softmax kernels (core/kernels/fused_softmax.py) checked on the host: the C
bodies are compiled with the machine's C++ compiler (tests/host_kernels.py) and the attention
functions run with them on numpy arrays. Outputs and the gradients of query, key and value must
match the generic path's: causal or not, default and custom scales, more queries than keys,
NaN/inf scores (the safe SDPA rows and MultiheadAttention's NaN weights), half inputs. Only cupy's
own compilation of the same text waits for a GPU (the attention rows of
tests/test_device_modules.py run there)."""

import ember
import numpy as np
import pytest
from ember.core.kernels import fused_softmax
from ember.nn import _attention
from host_kernels import CXX, numpy_kernel_sets

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler to build the host harness")
F = ember.nn.functional


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """{dtype: AttentionSoftmaxKernels on numpy backed by the host-compiled bodies}."""
    return numpy_kernel_sets(fused_softmax, fused_softmax.AttentionSoftmaxKernels, tmp_path_factory)


def _sdpa(dtype, seed, causal, scale, L=5, S=5, bad=False):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((2, 3, n, 4)).astype(dtype) for n in (L, S, S))
    if bad:  # an inf and a NaN score row
        q[0, 0, 1, 0] = np.inf
        q[1, 2, 3, 1] = np.nan
    q, k, v = (ember.tensor(a, requires_grad=True) for a in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    up = ember.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(dtype))
    (out * up).sum().backward()
    return [out.detach().float().numpy()] + [t.grad.float().numpy() for t in (q, k, v)]


def _mha(dtype, seed, causal, scale, bad=False):
    ember.manual_seed(seed)
    mha = ember.nn.MultiheadAttention(8, 2).to(getattr(ember, dtype))
    x = ember.randn(5, 3, 8, dtype=getattr(ember, dtype), requires_grad=True)
    if bad:
        with ember.no_grad():
            x[2, 1, 0] = float("nan")
    mask = ember.nn.Transformer.generate_square_subsequent_mask(5) if causal else None
    out, w = mha(x, x, x, need_weights=True, attn_mask=mask, is_causal=causal)
    (out.sum() + (w * ember.linspace(0, 1, w.numel()).reshape(w.shape)).sum()).backward()
    return [out.detach().numpy(), w.detach().numpy(), x.grad.numpy()] + [
        p.grad.numpy() for p in mha.parameters()
    ]


def _probs_all_masked(dtype, seed, safe):
    # a row whose scores are all -inf: zeros when safe (SDPA), NaN otherwise (MHA's weights)
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3))
    k[..., 0] = np.abs(k[..., 0]) + 0.1
    q[0, 1, 0] = -np.inf
    q, k = (ember.tensor(a.astype(dtype), requires_grad=True) for a in (q, k))
    p = _attention._attention_probs(q, k, 0.5, False, safe)
    up = ember.tensor(np.linspace(-1, 1, p.numel()).reshape(p.shape).astype(dtype))
    (p * up).sum().backward()
    return [p.detach().float().numpy(), q.grad.float().numpy(), k.grad.float().numpy()]


CASES = {
    "probs-masked-row-safe": lambda dt, seed: _probs_all_masked(dt, seed, True),
    "probs-masked-row-unsafe": lambda dt, seed: _probs_all_masked(dt, seed, False),
    "sdpa": lambda dt, seed: _sdpa(dt, seed, False, None),
    "sdpa-causal-scaled": lambda dt, seed: _sdpa(dt, seed, True, 0.7),
    "sdpa-causal-more-queries": lambda dt, seed: _sdpa(dt, seed, True, None, L=7, S=4),
    "sdpa-inf-nan": lambda dt, seed: _sdpa(dt, seed, True, None, bad=True),
    "mha-weights": lambda dt, seed: _mha(dt, seed, False, None),
    "mha-weights-nan": lambda dt, seed: _mha(dt, seed, False, None, bad=True),
}


ROWS = [
    (case, dtype)
    for case in sorted(CASES)
    for dtype in ("float16", "float32", "float64")
    if not (case.startswith("mha") and dtype == "float16")  # SDPA's rows take the half path
]


@pytest.mark.parametrize(("case", "dtype"), ROWS)
def test_fused_softmax_matches_the_generic_path(host_kernels, monkeypatch, case, dtype):
    expected = CASES[case](dtype, 0)
    CASES[case](dtype, 1)  # recycled buffers now hold other values
    calls = []

    def kernels(xp, dt):
        calls.append(dt)
        return host_kernels[np.dtype(dt)]

    monkeypatch.setattr(_attention, "attention_softmax_kernels", kernels)
    got = CASES[case](dtype, 0)
    assert len(calls) >= 2, "the fused forward and backward did not both run"
    tol = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-12}[dtype]
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"result {k}")


def test_fused_softmax_only_for_cupy_float_arrays():
    # numpy (and the strict test backend, which has no ElementwiseKernel) keep the generic path
    assert fused_softmax.attention_softmax_kernels(np, np.dtype(np.float32)) is None

    class FakeCupy:
        def ElementwiseKernel(self, in_params, out_params, body, name):
            return body

    fake = FakeCupy()
    assert fused_softmax.attention_softmax_kernels(fake, np.dtype(np.float16)) is None
    k = fused_softmax.attention_softmax_kernels(fake, np.dtype(np.float64))
    bodies = (fused_softmax.ATTENTION_SOFTMAX, fused_softmax.ATTENTION_SOFTMAX_BACKWARD)
    assert k._kernels == bodies
    fused_softmax._CACHE.clear()
