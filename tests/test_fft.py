"""ember.fft, window functions and stft/istft (core/fft.py, core/ops/spectral.py): parity with
torch (values, dtypes, gradients), float64 gradcheck/gradgradcheck, errors."""

import ember
import numpy as np
import pytest
from harness import A, Case, assert_same, needs_torch, raises_like_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def ri(y):
    """A complex result as (real, imag): gradchecks and upstream grads see both parts."""
    return (y.real, y.imag) if y.is_complex() else y


def _real(name, shape, **kw):
    return Case(
        f"{name}{kw or ''}-real",
        lambda m, x: ri(getattr(m.fft, name)(x, **kw)),
        [A(*shape)],
    )


def _cplx(name, shape, **kw):
    # a complex input made of two real leaves, so float64 gradcheck applies to it too
    return Case(
        f"{name}{kw or ''}-complex",
        lambda m, a, b: ri(getattr(m.fft, name)(m.complex(a, b), **kw)),
        [A(*shape), A(*shape, seed=1)],
    )


S = (2, 6)
CASES = [
    _real("fft", S),
    _real("fft", S, n=9, norm="ortho"),
    _real("fft", S, n=4, dim=0),
    _real("ifft", S, norm="forward"),
    _real("rfft", S),
    _real("rfft", S, n=9, norm="ortho"),
    _real("rfft", (5, 3), dim=0, norm="forward"),
    _real("irfft", S),
    _real("irfft", S, n=7),
    _real("irfft", S, n=4, norm="ortho"),
    _real("hfft", S),
    _real("hfft", S, n=5, norm="forward"),
    _real("ihfft", S),
    _real("ihfft", S, n=7, norm="ortho"),
    _real("fft2", (2, 3, 4)),
    _real("ifft2", (3, 4), s=(2, 6)),
    _real("fftn", (2, 3, 4), dim=(0, 2)),
    _real("ifftn", (3, 4), norm="ortho"),
    _real("rfft2", (3, 4)),
    _real("rfftn", (2, 3, 4), s=(4, 5)),
    _real("irfft2", (3, 4)),
    _real("irfftn", (2, 3, 4), s=(3, 5), norm="ortho"),
    _real("hfft2", (3, 4)),
    _real("ihfft2", (3, 4)),
    _real("hfftn", (2, 3, 4), s=(2, 5)),
    _real("ihfftn", (2, 3, 4), norm="forward"),
    _real("fftshift", (3, 4)),
    _real("ifftshift", (3, 5), dim=1),
    _cplx("fft", S),
    _cplx("fft", S, n=9, norm="forward"),
    _cplx("ifft", S, n=4),
    _cplx("irfft", S),
    _cplx("irfft", S, n=7, norm="ortho"),
    _cplx("irfft", S, n=4),
    _cplx("hfft", S),
    _cplx("hfft", S, n=9, norm="ortho"),
    _cplx("fft2", (3, 4)),
    _cplx("ifftn", (2, 3, 4), s=(2, 4, 3)),
    _cplx("irfftn", (3, 4), norm="forward"),
    _cplx("irfft2", (3, 4), s=(4, 5)),
    _cplx("hfftn", (3, 4)),
    _cplx("fftshift", (3, 4)),
]


def _stft(m, x, **kw):
    w = m.hann_window(kw.get("win_length", 16), dtype=x.dtype)
    return ri(m.stft(x, 16, window=w, return_complex=True, **kw))


def _istft(m, a, b, **kw):
    w = m.hann_window(kw.get("win_length", 16), dtype=a.dtype)
    return m.istft(m.complex(a, b), 16, window=w, **kw)


STFT_CASES = [
    Case("stft", lambda m, x: _stft(m, x), [A(40)]),
    Case("stft-batch-hop", lambda m, x: _stft(m, x, hop_length=5, win_length=12), [A(2, 37)]),
    Case(
        "stft-normalized-nocenter", lambda m, x: _stft(m, x, normalized=True, center=False), [A(40)]
    ),
    Case(
        "stft-twosided-constant",
        lambda m, x: _stft(m, x, onesided=False, pad_mode="constant"),
        [A(33)],
    ),
    Case(
        "stft-real-out",
        lambda m, x: m.stft(x, 8, return_complex=False, window=m.ones(8, dtype=x.dtype)),
        [A(20)],
    ),
    Case("istft", lambda m, a, b: _istft(m, a, b), [A(9, 7), A(9, 7, seed=1)]),
    Case(
        "istft-length",
        lambda m, a, b: _istft(m, a, b, length=20, normalized=True),
        [A(2, 9, 7), A(2, 9, 7, seed=1)],
    ),
    Case(
        "istft-twosided",
        lambda m, a, b: _istft(m, a, b, onesided=False),
        [A(16, 6), A(16, 6, seed=1)],
    ),
]


@needs_torch
@pytest.mark.parametrize("case", CASES + STFT_CASES, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", CASES + STFT_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=case.name.startswith(("fft", "rfft", "irfft", "hfft", "ihfft")))


# ------------------------------------------------------------------------------- dtypes
@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "irfft", "hfft"])
def test_dtypes(name, dtype):
    x = A(3, 4, dtype=dtype, grad=False).make(0)
    e = getattr(ember.fft, name)(ember.tensor(x))
    t = getattr(torch.fft, name)(torch.tensor(x))
    assert_same(e, t, atol=1e-4)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("name", ["rfft", "ihfft", "rfftn"])
def test_real_input_dtypes(name, dtype):
    x = A(3, 4, dtype=dtype, grad=False).make(0)
    e = getattr(ember.fft, name)(ember.tensor(x))
    t = getattr(torch.fft, name)(torch.tensor(x))
    assert_same(e, t, atol=1e-4)


def test_complex64_stays_single_precision():
    x = ember.tensor(np.ones(8, np.complex64))
    assert ember.fft.fft(x).dtype == ember.complex64
    assert ember.fft.irfft(x).dtype == ember.float32
    assert ember.fft.rfft(ember.ones(8)).dtype == ember.complex64


@needs_torch
def test_complex_leaf_gradient():
    # a complex leaf gets torch's (conjugate Wirtinger) gradient
    x = A(6, dtype="complex64").make(0)
    g = A(6, dtype="complex64", seed=3).make(1)
    outs = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        m.fft.fft(t, norm="ortho").backward(m.tensor(g))
        outs.append(t.grad)
    assert_same(outs[0], outs[1], atol=1e-5)


# ----------------------------------------------------------------------------- helpers
@needs_torch
@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.1])
def test_fftfreq(n, d):
    assert_same(ember.fft.fftfreq(n, d), torch.fft.fftfreq(n, d))
    assert_same(ember.fft.rfftfreq(n, d), torch.fft.rfftfreq(n, d))
    assert_same(
        ember.fft.fftfreq(n, d, dtype=ember.float64), torch.fft.fftfreq(n, d, dtype=torch.float64)
    )


@needs_torch
@pytest.mark.parametrize(
    "name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(name, n, periodic):
    e = getattr(ember, name)(n, periodic)
    t = getattr(torch, name)(n, periodic)
    assert_same(e, t, atol=1e-6)
    e = getattr(ember, name)(n, periodic, dtype=ember.float64, requires_grad=True)
    t = getattr(torch, name)(n, periodic, dtype=torch.float64)
    assert_same(e, t, atol=1e-12)
    assert e.requires_grad


@needs_torch
def test_window_options():
    assert_same(ember.hamming_window(9, False, 0.5, 0.5), torch.hamming_window(9, False, 0.5, 0.5))
    assert_same(ember.kaiser_window(9, True, 3.0), torch.kaiser_window(9, True, 3.0))


def test_stft_method_and_roundtrip():
    x = ember.tensor(A(2, 50, grad=False).make(0))
    w = ember.hann_window(16)
    s = x.stft(16, hop_length=4, window=w, return_complex=True)
    y = s.istft(16, hop_length=4, window=w, length=50)
    np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-5)


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (lambda m: m.fft.fft(m.ones(4, dtype=m.float16)), RuntimeError, "Unsupported dtype Half"),
        (lambda m: m.fft.fft(m.ones(4), n=0), RuntimeError,
         "Invalid number of data points (0) specified"),
        (lambda m: m.fft.irfft(m.ones(1)), RuntimeError,
         "Invalid number of data points (0) specified"),
        (lambda m: m.fft.fft(m.ones(4), norm="bad"), RuntimeError,
         'Invalid normalization mode: "bad"'),
        (lambda m: m.fft.fft(m.ones(4), dim=3), IndexError, "Dimension out of range"),
        (lambda m: m.fft.fft2(m.ones(4)), IndexError, "Dimension out of range"),
        (lambda m: m.fft.fftn(m.ones(4), s=(2, 3)), RuntimeError,
         "Got shape with 2 values but input tensor only has 1 dimensions."),
        (lambda m: m.fft.fftn(m.ones(3, 4), dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
        (lambda m: m.fft.fftn(m.ones(3, 4), s=(2,), dim=(0, 1)), RuntimeError,
         "When given, dim and shape arguments must have the same length"),
        (lambda m: m.fft.rfft(m.ones(3, dtype=m.complex64)), RuntimeError,
         "rfft expects a real input tensor, but got ComplexFloat"),
        (lambda m: m.fft.rfftn(m.ones(3, dtype=m.complex64)), RuntimeError,
         "rfftn expects a real-valued input tensor, but got ComplexFloat"),
        (lambda m: m.fft.ihfft(m.ones(3, dtype=m.complex64)), RuntimeError,
         "ihfft expects a real input tensor, but got ComplexFloat"),
        (lambda m: m.stft(m.ones(100), 16), RuntimeError,
         "stft requires the return_complex parameter be given for real inputs"),
        (lambda m: m.stft(m.ones(100), 16, hop_length=0, return_complex=True), RuntimeError,
         "expected hop_length > 0, but got hop_length=0"),
        (lambda m: m.stft(m.ones(100), 16, win_length=20, return_complex=True), RuntimeError,
         "expected 0 < win_length <= n_fft, but got win_length=20"),
        (lambda m: m.stft(m.ones(10), 32, return_complex=True), RuntimeError,
         "Padding size should be less than the corresponding input dimension"),
        (lambda m: m.istft(m.ones(9, 5), 16), RuntimeError,
         "istft requires a complex-valued input tensor"),
        (lambda m: m.istft(m.ones(9, 5, dtype=m.complex64), 16, onesided=False), RuntimeError,
         "expected the frequency dimension (3rd to the last) of the input tensor to match n_fft"),
        (lambda m: m.hann_window(-1), RuntimeError,
         "hann_window requires non-negative window_length, got window_length=-1"),
        (lambda m: m.hann_window(4, dtype=m.int64), RuntimeError,
         "hann_window expects floating point dtypes, got: "),
    ],
)  # fmt: skip
def test_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


def test_istft_nola_error():
    w = ember.hann_window(16, dtype=ember.float64)
    s = ember.stft(ember.ones(64, dtype=ember.float64), 16, window=w, center=False,
                   return_complex=True)  # fmt: skip
    with pytest.raises(RuntimeError, match="window overlap add min"):
        ember.istft(s, 16, window=w, center=False)


def test_names():
    # a transform that keeps the shape keeps the names; a one-sided one unnames the dim it
    # halves (or restores), the other dims keep theirs (spec 4.2)
    x = ember.ones(2, 4, names=("N", "T"))
    assert ember.fft.fft(x, dim="T").names == ("N", "T")
    assert ember.fft.fftn(x.to(ember.complex64), dim=("N", "T")).names == ("N", "T")
    assert ember.fft.ifft(x).names == ("N", "T")
    assert ember.fft.fftshift(x, dim="N").names == ("N", "T")
    assert ember.fft.rfft(x, dim="T").names == ("N", None)
    assert ember.fft.irfft(x).names == ("N", None)
    assert ember.fft.rfft(x, dim="N").names == (None, "T")
    g = ember.ones(2, 4, names=("N", "T"), requires_grad=True)
    ember.fft.fft(g).abs().sum().backward()
    assert g.grad.names == ("N", "T")


@needs_torch
def test_out():
    outs = []
    for m in (ember, torch):
        o = m.empty(0, dtype=m.complex64)
        m.fft.rfft(m.arange(6.0), out=o)
        outs.append(o)
    assert_same(outs[0], outs[1])
    raises_like_torch(
        lambda m: m.fft.fft(m.ones(4), out=m.empty(0)),
        RuntimeError,
        "fft expects a complex output tensor, but got Float",
    )
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.fft.fft(ember.ones(4, requires_grad=True), out=ember.empty(0, dtype=ember.complex64))
