"""The fused layer norm kernels (core/kernels/fused_norm.py) checked on the host: the C bodies are
compiled with the machine's C++ compiler (tests/host_kernels.py) and the layer norm op runs with
them on numpy arrays. Outputs, saved statistics and every gradient must match the generic path's
(with and without weight and bias, several normalized dims, non-contiguous inputs and gradients,
half inputs). Only cupy's own compilation of the same text waits for a GPU (the module rows of
tests/test_device_modules.py run LayerNorm and the Transformer layers there)."""

import ember
import numpy as np
import pytest
from ember.core.kernels import fused_norm
from ember.core.ops import normalization
from host_kernels import CXX, numpy_kernel_sets

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler to build the host harness")
F = ember.nn.functional


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """{dtype: LayerNormKernels on numpy backed by the host-compiled bodies}."""
    return numpy_kernel_sets(fused_norm, fused_norm.LayerNormKernels, tmp_path_factory)


def _run(dtype, shape, nd, affine, seed=0, transposed=False):
    """native_layer_norm's (out, mean, rstd) and the gradients of input, weight and bias under a
    non-uniform, non-contiguous upstream gradient."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3 + 2
    if transposed:  # a non-contiguous input: the kernels need rows in C order
        x = np.ascontiguousarray(x.swapaxes(0, 1)).swapaxes(0, 1)
    x = ember.tensor(x.astype(dtype), requires_grad=True)
    pshape = shape[len(shape) - nd :]
    w = b = None
    if affine:  # True: weight and bias; "bias": a bias alone
        b = ember.tensor(rng.standard_normal(pshape).astype(dtype), requires_grad=True)
        if affine is True:
            w = ember.tensor(rng.uniform(0.5, 1.5, pshape).astype(dtype), requires_grad=True)
    out, mean, rstd = ember.native_layer_norm(x, pshape, w, b, 1e-5)
    up = ember.tensor(rng.standard_normal(shape[::-1]).astype(dtype)).permute(
        *range(len(shape) - 1, -1, -1)
    )
    (out * up).sum().backward()
    leaves = [x] + [t for t in (w, b) if t is not None]
    return [t.detach().float().numpy() for t in (out, mean, rstd)] + [
        t.grad.float().numpy() for t in leaves
    ]


CASES = {
    "rows-affine": ((6, 5, 16), 1, True, False),
    "rows-plain": ((6, 5, 16), 1, False, False),
    "rows-bias-only": ((6, 5, 16), 1, "bias", False),
    "two-dims-affine": ((4, 3, 5, 8), 2, True, False),
    "transposed-input": ((5, 6, 16), 1, True, True),
    "one-row": ((1, 33), 1, True, False),
}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_layer_norm_matches_the_generic_path(host_kernels, monkeypatch, case, dtype):
    shape, nd, affine, transposed = CASES[case]
    expected = _run(dtype, shape, nd, affine, transposed=transposed)
    _run(dtype, shape, nd, affine, seed=1)  # recycled buffers now hold other values
    calls = []

    def kernels(xp, dt, row):
        calls.append(row)
        return host_kernels[np.dtype(dt)]

    monkeypatch.setattr(normalization, "layer_norm_kernels", kernels)
    got = _run(dtype, shape, nd, affine, transposed=transposed)
    assert len(calls) == 2, "the fused forward and backward did not both run"
    tol = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-12}[dtype]
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"result {k}")


def test_fused_layer_norm_in_a_transformer_layer(host_kernels, monkeypatch):
    # the norms of a whole encoder layer (pre- and post-norm), forward and backward
    def run():
        ember.manual_seed(0)
        layer = ember.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, norm_first=True)
        x = ember.randn(5, 3, 16, requires_grad=True)
        out = layer(x)
        (out * ember.linspace(-1, 1, out.numel()).reshape(out.shape)).sum().backward()
        return [out.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()]

    expected = run()
    monkeypatch.setattr(
        normalization, "layer_norm_kernels", lambda xp, dt, row: host_kernels[np.dtype(dt)]
    )
    for g, e in zip(run(), expected):
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5)


def test_fused_layer_norm_only_for_cupy_float_arrays_and_short_rows():
    # numpy (and the strict test backend, which has no ElementwiseKernel) keep the generic path
    assert fused_norm.layer_norm_kernels(np, np.dtype(np.float32), 16) is None

    class FakeCupy:
        def ElementwiseKernel(self, in_params, out_params, body, name):
            return (in_params, out_params, body, name)

    fake = FakeCupy()
    assert fused_norm.layer_norm_kernels(fake, np.dtype(np.float16), 16) is None
    assert fused_norm.layer_norm_kernels(fake, np.dtype(np.float32), fused_norm.MAX_ROW + 1) is None
    k = fused_norm.layer_norm_kernels(fake, np.dtype(np.float64), fused_norm.MAX_ROW)
    assert isinstance(k, fused_norm.LayerNormKernels)
    bodies = (fused_norm.LAYER_NORM, fused_norm.LAYER_NORM_BACKWARD)
    assert tuple(kern[2] for kern in k._kernels[:2]) == bodies  # the text tested above
    fused_norm._CACHE.clear()
