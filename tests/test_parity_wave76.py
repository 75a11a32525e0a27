"""Parity regressions found by the seventy-sixth wave, a seeded random fuzz of torch.fft against
torch (every transform, fftshift/ifftshift, fftfreq/rfftfreq, stft/istft and their Tensor
methods; inputs of every dtype, 0-4 dims, empty, size-1 and non-contiguous (transposed, stepped,
expanded); random n/s/dim/norm, by keyword and by position, out= of every kind; values, dtypes,
errors, warnings, gradients and double backward against a random upstream gradient). It found
the complex-to-real transforms reading an ``s`` of -1 in their last dim as the input's length
(torch: the default output length, 2 * (m - 1)); torch's argument parser missing (``s``/``dim``
entries that are no ints crashing in narrow or a comparison, an int ``s`` refused and a tensor
``s`` taken, a float ``n`` or a None ``dim`` of a 1-D transform, the positional messages, the
order: every type first, lists unpacked last; too many, repeated or unknown arguments); the order
of the checks (a 1-D transform of a real signal, or to a real one, checks ``out`` first; ``norm``
comes after the output length, the dtype and the axes; ihfftn refuses a complex signal after the
norm); ifft/ihfft of a real signal writing an out= of the other precision or one that requires
grad (torch's conj_physical out= refuses both); rfft2's out= autograd refusal naming _fft_c2c;
fftshift of a 0-d tensor with dims; fftfreq's negative n checked after its dtype; stft's n_fft
error (torch shows the window length), its return_complex shown as given, its warnings after
the checks, its align_to_window and center padding checked after return_complex (the padding
now F.pad's, with its empty-dim error); and istft's warning when it pads to ``length``."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import results_or_same_error, same_error
from harness import same_grads_or_error as _both


def _x(T, shape, dtype="float64", seed=0):
    r = np.random.RandomState(seed)
    a = r.randn(*shape)
    if dtype.startswith("complex"):
        a = a + 1j * r.randn(*shape)
    return T.tensor(a).to(getattr(T, dtype))


def _close(pairs):
    for want, got in pairs:
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-10)


@pytest.mark.parametrize(
    "name, s, dim",
    [
        ("irfftn", (-1,), (-2,)),
        ("irfft2", (-1, -1), (-2, -1)),
        ("irfft2", (2, -1), (3, 0)),
        ("hfftn", (3, -1), None),
        ("hfft2", (-1, -1), (1, -2)),
    ],
)
def test_c2r_last_size_minus_one_is_the_default_length(name, s, dim):
    # -1 in the last dim was read as the input's m bins: torch's default is 2 * (m - 1) points
    kw = {"s": s} if dim is None else {"s": s, "dim": dim}
    _close(
        results_or_same_error(
            lambda T: getattr(T.fft, name)(_x(T, (6, 3, 5, 4), "complex128"), **kw)
        )
    )

    def grads(T):
        x = _x(T, (6, 3, 5, 4), "complex128").requires_grad_()
        y = getattr(T.fft, name)(x, **kw)
        return T.autograd.grad(y, x, _x(T, tuple(y.shape), seed=1))

    _both(grads)


def test_c2r_minus_one_of_one_bin_is_no_length():
    same_error(lambda T: T.fft.irfftn(_x(T, (3, 1), "complex128"), s=(-1,)), RuntimeError)
    same_error(lambda T: T.fft.hfft2(_x(T, (8, 5, 1), "complex128"), s=(-1, -1), dim=[-3, -1]))


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: T.fft.fftn(x, s=(None, 4)),
        lambda T, x: T.fft.fftn(x, s=(2, None)),
        lambda T, x: T.fft.fft2(x, s=[2, 2.5]),
        lambda T, x: T.fft.rfftn(x, s=(True, 3)),
        lambda T, x: T.fft.irfftn(x, s="ab"),
        lambda T, x: T.fft.fftn(x, s=3.0),
        lambda T, x: T.fft.fftn(x, s=T.tensor([3, 3])),
        lambda T, x: T.fft.hfftn(x, dim=(0, None)),
        lambda T, x: T.fft.ihfftn(x, dim=(0.5, 1)),
        lambda T, x: T.fft.fft2(x, dim=None, s=(2, None)),  # types before the unpacking
        lambda T, x: T.fft.fftn(x, s=(2, None), dim=(0, None)),
        lambda T, x: T.fft.fftn(x, s=(None, 2), norm=3),
        lambda T, x: T.fft.fftn(x, s=(2, None), dim=(0, 0)),
        lambda T, x: T.fft.fftn(x, (None, 4)),  # positional forms
        lambda T, x: T.fft.fftn(x, (2, 3), (None, 1)),
        lambda T, x: T.fft.fft2(x, (3, 3), None),
        lambda T, x: T.fft.fft(x, n=2.0),
        lambda T, x: T.fft.rfft(x, n=True),
        lambda T, x: T.fft.irfft(x, n=(2,)),
        lambda T, x: T.fft.hfft(x, dim=None, norm=3),
        lambda T, x: T.fft.ihfft(x, dim=(0,)),
        lambda T, x: T.fft.fft(x, 2.0),
        lambda T, x: T.fft.fft(x, 2, None),
        lambda T, x: T.fft.fft(x, None, -1, None, 5),
        lambda T, x: T.fft.fft(x, 3, n=4),
        lambda T, x: T.fft.fft(x, foo=1),
        lambda T, x: T.fft.fft(n=3),
        lambda T, x: T.fft.fft(x, out=5),
        lambda T, x: T.fft.fftshift(x, dim=(0.5,)),
        lambda T, x: T.fft.ifftshift(x, dim=1.0),
    ],
)
def test_argument_parser_errors(call):
    # these crashed deep (narrow, '<=' of None and int, an int not iterable) or named no function
    same_error(lambda T: call(T, _x(T, (3, 4))), TypeError)


def test_int_like_sizes():
    # an int s is a list of one; numpy and 0-d integer tensors are ints
    _close(results_or_same_error(lambda T: T.fft.fftn(_x(T, (3, 4)), s=5)))
    _close(results_or_same_error(lambda T: T.fft.fft2(_x(T, (3, 4)), s=(3, np.int64(2)))))
    _close(results_or_same_error(lambda T: T.fft.fft(_x(T, (3, 4)), n=T.tensor(2))))
    same_error(lambda T: T.fft.fft2(_x(T, (3, 4)), s=5), RuntimeError)


@pytest.mark.parametrize(
    "call",
    [
        lambda T, o: T.fft.fft(_x(T, (3,), "float16"), out=o),  # out before the dtype
        lambda T, o: T.fft.rfft(_x(T, ()), dim=0, out=o),  # ... the dim
        lambda T, o: T.fft.ifft(_x(T, (3,)), n=0, out=o),  # ... n
        lambda T, o: T.fft.ifft(_x(T, (3,)), norm="bogus", out=o),  # ... the norm
        lambda T, o: T.fft.irfft(_x(T, (1, 3), "complex128"), dim=0, out=o),
        lambda T, o: T.fft.hfft(_x(T, (3,), "float16"), out=o),
        lambda T, o: T.fft.fft(_x(T, (3,), "complex128"), norm="bogus", out=o),  # a c2c: last
        lambda T, o: T.fft.irfft(_x(T, (1, 3), "complex128"), dim=0, norm="bogus"),  # n first
        lambda T, o: T.fft.irfft2(_x(T, (3, 3), "float16"), norm="bogus"),  # the dtype first
        lambda T, o: T.fft.rfftn(_x(T, (3, 3)), dim=(), norm="bogus"),  # the axes first
        lambda T, o: T.fft.ihfftn(_x(T, (3, 3), "complex128"), norm="bogus"),  # the norm first
    ],
)
def test_order_of_checks(call):
    same_error(lambda T: call(T, T.empty(0, dtype=T.int64)), RuntimeError)


def test_fftshift_of_a_0d_tensor_with_dims():
    for dim in (0, -1, (0,), (0, 0)):
        same_error(lambda T, d=dim: T.fft.fftshift(T.tensor(1.0), dim=d), IndexError)
        same_error(lambda T, d=dim: T.fft.ifftshift(T.tensor(1.0), dim=d), IndexError)


@pytest.mark.parametrize(
    "x_dtype, out_dtype, x_grad, out_grad",
    [
        ("float32", "complex128", False, False),
        ("float64", "complex64", True, False),
        ("float64", "complex128", False, True),
        ("float32", "complex128", False, True),  # autograd before the dtype
    ],
)
@pytest.mark.parametrize("name", ["ifft", "ihfft"])
def test_conjugate_out_of_a_real_signal(name, x_dtype, out_dtype, x_grad, out_grad):
    # ember wrote the result into an out of the other precision, or that requires grad
    def f(T):
        x = _x(T, (4,), x_dtype).requires_grad_(x_grad)
        return getattr(T.fft, name)(
            x, out=T.empty(0, dtype=getattr(T, out_dtype), requires_grad=out_grad)
        )

    same_error(f, RuntimeError)


def test_rfft2_out_autograd_refusal_names_r2c():
    def f(T):
        x = _x(T, (2, 7)).requires_grad_()
        return T.fft.rfft2(x, s=(9, 4), dim=[-1, -2], out=T.empty(0, dtype=T.complex128))

    same_error(f, RuntimeError)


@pytest.mark.parametrize("dtype", ["int64", "complex64"])
def test_fftfreq_negative_length_before_the_dtype(dtype):
    same_error(lambda T: T.fft.fftfreq(-3, dtype=getattr(T, dtype)), RuntimeError)
    same_error(lambda T: T.fft.rfftfreq(-5, dtype=getattr(T, dtype)), RuntimeError)
    same_error(lambda T: T.fft.fftfreq(-3, out=T.empty(0)), RuntimeError)


@pytest.mark.parametrize(
    "shape, dtype, kw",
    [
        ((5,), "float32", {"n_fft": 8, "win_length": 6, "center": False, "return_complex": True}),
        ((5,), "complex128", {"n_fft": 4, "hop_length": 0, "center": False}),
        ((), "float64", {"n_fft": 8}),  # center's padding before return_complex
        ((20,), "float64", {"n_fft": 8, "align_to_window": True}),
        ((0, 5), "float32", {"n_fft": 4, "return_complex": True}),
        ((2, 0), "float32", {"n_fft": 4, "pad_mode": "replicate", "return_complex": True}),
        ((3, 5), "float64", {"n_fft": 4, "pad_mode": "bogus", "return_complex": True}),
    ],
)
def test_stft_errors(shape, dtype, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda T: T.stft(_x(T, shape, dtype), **kw))
        same_error(lambda T: _x(T, shape, dtype).stft(**kw))


def _w(T):
    return T.hann_window(4, dtype=T.float64) + 0.5


def _warned(T, fn):
    T.set_warn_always(True)  # TORCH_WARN_ONCE warns every time
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                fn(T)
            except RuntimeError:
                pass
        return [str(m.message).split(" (Triggered")[0] for m in w]
    finally:
        T.set_warn_always(False)


@pytest.mark.parametrize(
    "fn",
    [
        # the warnings come before stft's checks
        lambda T: T.stft(_x(T, (20,)), 8, hop_length=0, center=False, return_complex=False),
        lambda T: T.stft(_x(T, (20,), "int64"), 8),
        # istft pads to a length longer than its signal
        lambda T: T.istft(_x(T, (3, 4), "complex128"), 4, window=_w(T), length=20, center=False),
    ],
)
def test_spectral_warnings(fn):
    want = _warned(torch, fn)
    assert want
    assert _warned(ember, fn) == want
