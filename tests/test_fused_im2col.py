"""The fused im2col/col2im kernels (core/kernels/fused_im2col.py) checked on the host: the C bodies
are compiled with the machine's C++ compiler (tests/host_kernels.py) and the convolutions, their
transposes and unfold/fold run with them on numpy arrays. Outputs and every gradient must equal
the generic path's (1-3 spatial dims, strides, padding, dilation, groups, non-contiguous inputs).
Only cupy's own compilation of the same text waits for a GPU (the convolution rows of
tests/test_device_modules.py run there)."""

import ember
import numpy as np
import pytest
from ember.core.kernels import fused_im2col, im2col
from ember.core.ops import convolution
from host_kernels import CXX, numpy_kernel_sets

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler to build the host harness")
F = ember.nn.functional


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """{dtype: Im2colKernels on numpy backed by the host-compiled bodies}."""
    return numpy_kernel_sets(fused_im2col, fused_im2col.Im2colKernels, tmp_path_factory)


def _conv(nd, dtype, seed, transposed=False, **kw):
    rng = np.random.default_rng(seed)
    groups = kw.get("groups", 1)
    x = rng.standard_normal((2, 4) + (7, 6, 5)[:nd]).astype(dtype)
    if kw.pop("strided_input", False):  # a non-contiguous input
        x = np.ascontiguousarray(x.swapaxes(0, 1)).swapaxes(0, 1)
    wshape = (4, 6 // groups) if transposed else (6, 4 // groups)
    w = rng.standard_normal(wshape + (3, 2, 3)[:nd]).astype(dtype)
    x, w = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
    out = getattr(F, name)(x, w, **kw)
    up = np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(dtype)
    (out * ember.tensor(up)).sum().backward()
    return [out.detach().numpy(), x.grad.numpy(), w.grad.numpy()]


def _unfold_fold(nd, dtype, seed):
    rng = np.random.default_rng(seed)
    x = ember.tensor(rng.standard_normal((2, 3, 6, 7)).astype(dtype), requires_grad=True)
    cols = F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    back = F.fold(cols * 1.5, (6, 7), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    (back * back).sum().backward()
    return [cols.detach().numpy(), back.detach().numpy(), x.grad.numpy()]


CASES = {
    "conv1d-padded": lambda dt, s: _conv(1, dt, s, padding=1),
    "conv1d-strided-dilated": lambda dt, s: _conv(1, dt, s, stride=2, dilation=2),
    "conv2d-padded": lambda dt, s: _conv(2, dt, s, padding=1),
    "conv2d-strided-grouped": lambda dt, s: _conv(
        2, dt, s, stride=(2, 1), padding=(1, 0), groups=2
    ),
    "conv2d-dilated-strided-input": lambda dt, s: _conv(
        2, dt, s, dilation=(2, 1), padding=2, strided_input=True
    ),
    "conv3d": lambda dt, s: _conv(3, dt, s, stride=(1, 2, 1), padding=1),
    "conv-transpose2d": lambda dt, s: _conv(2, dt, s, True, stride=2, padding=1, output_padding=1),
    "conv-transpose3d": lambda dt, s: _conv(3, dt, s, True, stride=(2, 1, 2)),
    "unfold-fold": lambda dt, s: _unfold_fold(2, dt, s),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_im2col_matches_the_generic_path(host_kernels, monkeypatch, case, dtype):
    expected = CASES[case](dtype, 0)
    CASES[case](dtype, 1)  # recycled buffers now hold other values
    calls = []

    def kernels(xp, dt, nd):
        calls.append(nd)
        return host_kernels[np.dtype(dt)]

    monkeypatch.setattr(im2col, "im2col_kernels", kernels)
    monkeypatch.setattr(convolution, "im2col_kernels", kernels)
    got = CASES[case](dtype, 0)
    assert calls, "the fused kernels did not run"
    for k, (g, e) in enumerate(zip(got, expected)):
        # the same sums in the same order: equal values (the stride-1 cpu path adds zeros)
        np.testing.assert_allclose(g, e, rtol=1e-6 if dtype == "float32" else 1e-14, atol=0,
                                   err_msg=f"result {k}")  # fmt: skip


def test_winograd_is_the_cpu_route(host_kernels, monkeypatch):
    # where im2col is one fused kernel (cupy), a Winograd-shaped conv takes im2col + one GEMM
    x = ember.randn(4, 16, 12, 12, requires_grad=True)
    w = ember.randn(16, 16, 3, 3, requires_grad=True)
    assert F.conv2d(x, w, padding=1).grad_fn.op.name == "_conv_wino"
    monkeypatch.setattr(im2col, "im2col_kernels", lambda xp, dt, nd: host_kernels[np.dtype(dt)])
    monkeypatch.setattr(
        convolution, "im2col_kernels", lambda xp, dt, nd: host_kernels[np.dtype(dt)]
    )
    y = F.conv2d(x, w, padding=1)
    assert y.grad_fn.op.name == "_conv_cols"
    assert convolution._winograd_fits(x, w, (1, 1), (1, 1), (1, 1), 1)


def test_fused_im2col_only_for_cupy_float_arrays():
    # numpy (and the strict test backend, which has no ElementwiseKernel) keep the generic path
    assert fused_im2col.im2col_kernels(np, np.dtype(np.float32), 2) is None

    class FakeCupy:
        def ElementwiseKernel(self, in_params, out_params, body, name):
            return body

    fake = FakeCupy()
    assert fused_im2col.im2col_kernels(fake, np.dtype(np.float16), 2) is None
    assert fused_im2col.im2col_kernels(fake, np.dtype(np.float32), 4) is None
    k = fused_im2col.im2col_kernels(fake, np.dtype(np.float64), 3)
    assert k._kernels == (fused_im2col.IM2COL, fused_im2col.COL2IM)
    fused_im2col._CACHE.clear()
