"""The fused 2x2 max pooling kernels (core/kernels/fused_pool.py) checked on the host: the C bodies
are compiled with the machine's C++ compiler (tests/host_kernels.py) and ``F.max_pool2d(x, 2)``
runs with them on numpy arrays. Outputs and input gradients must match the generic path's, also
for ties, NaN windows (torch's rule: the last NaN), infinities, non-contiguous inputs, unbatched
inputs and inf/NaN upstream gradients. Only cupy's own compilation of the same text waits for a
GPU (the MaxPool2d rows of tests/test_device_modules.py run there)."""

import ember
import numpy as np
import pytest
from ember.core.kernels import fused_pool
from ember.core.ops import pooling
from host_kernels import CXX, numpy_kernel_sets

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler to build the host harness")
F = ember.nn.functional


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """{dtype: MaxPool2x2Kernels on numpy backed by the host-compiled bodies}."""
    return numpy_kernel_sets(fused_pool, fused_pool.MaxPool2x2Kernels, tmp_path_factory)


def _input(case, dtype, seed):
    rng = np.random.default_rng(seed)
    shape = (3, 4, 6) if case == "unbatched" else (2, 3, 4, 6)
    x = rng.standard_normal(shape)
    if case == "ties":
        x = np.round(x)  # many equal values: the first maximum takes the gradient
    elif case == "nan-and-inf":
        flat = x.reshape(-1)
        flat[[0, 1, 3, 9, 30]] = np.nan  # window 0 holds three NaNs: the last takes it
        flat[[12, 13, 40]] = np.inf
        flat[[26, 27, 38, 39]] = -np.inf  # a window of -inf only
    elif case == "transposed":
        x = np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2)
    return x.astype(dtype)


def _run(case, dtype, seed=0, bad_grad=False):
    x = ember.tensor(_input(case, dtype, seed), requires_grad=True)
    with ember.no_grad():
        inferred = F.max_pool2d(x, 2).numpy()
    y = F.max_pool2d(x, 2)
    up = np.linspace(-1, 2, y.numel()).reshape(y.shape).astype(dtype)
    if bad_grad:
        up.reshape(-1)[[1, 5]] = (np.inf, np.nan)
    (y * ember.tensor(up)).sum().backward()
    return [inferred, y.detach().numpy(), x.grad.numpy()]


CASES = ["random", "ties", "nan-and-inf", "transposed", "unbatched"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bad_grad", [False, True], ids=["finite-grad", "inf-nan-grad"])
@pytest.mark.parametrize("case", CASES)
def test_fused_max_pool_matches_the_generic_path(host_kernels, monkeypatch, case, bad_grad, dtype):
    expected = _run(case, dtype, bad_grad=bad_grad)
    _run(case, dtype, seed=1)  # recycled buffers now hold other values
    calls = []

    def kernels(xp, dt):
        calls.append(dt)
        return host_kernels[np.dtype(dt)]

    monkeypatch.setattr(pooling, "max_pool_2x2_kernels", kernels)
    got = _run(case, dtype, bad_grad=bad_grad)
    assert len(calls) == 3, "the fused forward (twice) and backward did not all run"
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, e, err_msg=f"result {k}")


def test_double_backward_takes_the_generic_path(host_kernels, monkeypatch):
    def run():
        x = ember.tensor(_input("random", "float64", 0), requires_grad=True)
        (g,) = ember.autograd.grad((F.max_pool2d(x, 2) ** 2).sum(), x, create_graph=True)
        (gg,) = ember.autograd.grad((g * g).sum(), x)
        return g.detach().numpy(), gg.numpy()

    expected = run()
    monkeypatch.setattr(pooling, "max_pool_2x2_kernels", lambda xp, dt: host_kernels[np.dtype(dt)])
    for g, e in zip(run(), expected):
        np.testing.assert_array_equal(g, e)


def test_fused_max_pool_only_for_cupy_float_arrays():
    # numpy (and the strict test backend, which has no ElementwiseKernel) keep the generic path
    assert fused_pool.max_pool_2x2_kernels(np, np.dtype(np.float32)) is None

    class FakeCupy:
        int8 = np.int8

        def ElementwiseKernel(self, in_params, out_params, body, name):
            return body

    fake = FakeCupy()
    assert fused_pool.max_pool_2x2_kernels(fake, np.dtype(np.float16)) is None
    k = fused_pool.max_pool_2x2_kernels(fake, np.dtype(np.float64))
    assert k._kernels == (fused_pool.MAX_POOL_2X2, fused_pool.MAX_POOL_2X2_BACKWARD)
    fused_pool._CACHE.clear()
