"""Spectral ops: the discrete Fourier transforms behind ``ember.fft``, window functions, stft/istft.

Three registered transforms do all the work, like torch's internals: ``_fft_c2c`` (complex to
complex, either direction), ``_fft_r2c`` (real to complex, always forward) and ``_fft_c2r``
(Hermitian half spectrum to real, always inverse). ``normalization`` is the scale mode: 0 none,
1 ``1/sqrt(n)``, 2 ``1/n``. Their derivatives are the adjoint transforms, written with the same
three ops, so double backward works. Kernels run scipy.fft on cpu (it keeps complex64 in single
precision, unlike numpy.fft) and cupy.fft on cuda.

The ``ember.fft`` functions (core/fft.py) resize inputs (``n``/``s``) with differentiable ops and
then call one of the three transforms. Window functions are factories; stft/istft are composites.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtype as _dt
from ..autocast import entry as _autocast_entry
from ..names import keep
from ..registry import op
from ..runtime import _warn_once
from ..tensor import Tensor
from .creation import _dev, _finish, _make

__all__ = [
    "bartlett_window",
    "blackman_window",
    "hamming_window",
    "hann_window",
    "istft",
    "kaiser_window",
    "stft",
]

_FWD_NORM = ("backward", "ortho", "forward")  # scipy's norm for a forward transform, by mode
_INV_NORM = ("forward", "ortho", "backward")  # ... and for an inverse transform
_FFTMOD: dict = {}


def _fftmod(xp):
    m = _FFTMOD.get(xp)
    if m is None:
        if xp is np:
            import scipy.fft as m
        else:
            m = xp.fft
        _FFTMOD[xp] = m
    return m


def _halved_names(ins, dim=(), *args, **kwargs):
    """A one-sided transform (rfft's, irfft's) changes the length of its last transformed dim:
    that dim is unnamed; every other dim keeps its length and its name (a batch of signals
    keeps its batch names, spec 4.2)."""
    n = ins[0]._names
    last = _axes(dim)[-1] % len(n)
    out = n[:last] + (None,) + n[last + 1 :]
    return None if all(x is None for x in out) else out


def _r2c_names(ins, dim=(), normalization=0, onesided=True):
    """A two-sided transform keeps the shape, so the names; a one-sided one halves its last
    transformed dim (see ``_halved_names``)."""
    return _halved_names(ins, dim) if onesided else ins[0]._names


def _axes(dim) -> tuple:
    return (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)


def _cast_like(r, d):
    return r if r.dtype == d else r.astype(d)


# ------------------------------------------------------------------------ the three transforms
@op(names=keep, method=False)
def _fft_c2c(xp, input, dim=(), normalization=0, forward=True):
    """Complex-to-complex DFT over ``dim`` (forward: exp(-i...), else exp(+i...))."""
    dim = _axes(dim)
    if not dim:
        return input.copy()
    m = _fftmod(xp)
    if forward:
        r = m.fftn(input, axes=dim, norm=_FWD_NORM[normalization])
    else:
        r = m.ifftn(input, axes=dim, norm=_INV_NORM[normalization])
    return _cast_like(r, input.dtype)


@_fft_c2c.vjp
def _(grad, dim, normalization, forward):
    # the adjoint of a scaled DFT is the opposite-direction DFT with the same scale
    return _fft_c2c(grad, dim, normalization, not forward)


@op(names=_r2c_names, method=False)
def _fft_r2c(xp, input, dim=(), normalization=0, onesided=True):
    """Real-to-complex forward DFT over ``dim``; ``onesided`` keeps n//2+1 bins of the last dim."""
    dim = _axes(dim)
    m = _fftmod(xp)
    cd = np.result_type(input.dtype, np.complex64)
    if onesided:
        r = m.rfftn(input, axes=dim, norm=_FWD_NORM[normalization])
    else:  # as complex: scipy's real-input path gives -0.0 imaginary parts where torch has +0.0
        r = m.fftn(input.astype(cd), axes=dim, norm=_FWD_NORM[normalization])
    return _cast_like(r, cd)


@_fft_r2c.vjp
def _(grad, input_shape, dim, normalization, onesided):
    if onesided:  # the dropped bins had no gradient: zero-pad back to the full length
        last = _axes(dim)[-1]
        n = input_shape[last]
        missing = n - grad.shape[last]
        if missing > 0:
            shape = list(grad.shape)
            shape[last] = missing
            grad = _cat([grad, grad.new_zeros(shape)], last)
    return _fft_c2c(grad, dim, normalization, False).real


@op(names=_halved_names, method=False)
def _fft_c2r(xp, input, dim=(), normalization=0, last_dim_size=1):
    """Inverse DFT of a Hermitian half spectrum over ``dim``; the last dim's output length is
    ``last_dim_size`` (the input holds ``last_dim_size // 2 + 1`` bins there)."""
    dim = _axes(dim)
    m = _fftmod(xp)
    s = [input.shape[d] for d in dim[:-1]] + [last_dim_size]
    r = m.irfftn(input, s=s, axes=dim, norm=_INV_NORM[normalization])
    return _cast_like(r, np.empty(0, input.dtype).real.dtype)


@_fft_c2r.vjp
def _(grad, dim, normalization, last_dim_size):
    g = _fft_r2c(grad, dim, normalization, True)
    # the bins that stand for two conjugate bins of the full spectrum count twice
    nb = last_dim_size // 2 + 1
    w = np.full(nb, 2.0)
    w[0] = 1.0
    if last_dim_size % 2 == 0:
        w[-1] = 1.0
    shape = [1] * g.ndim
    shape[_axes(dim)[-1]] = nb
    real = _dt.float64 if g.dtype == _dt.complex128 else _dt.float32
    return g * g.new_tensor(w.reshape(shape), dtype=real)


def _cat(ts, dim):
    from .shape import cat

    return cat(ts, dim)


# ---------------------------------------------------------------------------- window functions
def _window_dtype(name, dtype):
    d = _dt.get_default_dtype() if dtype is None else _dt.to_dtype(dtype)
    if d.category < _dt.FLOAT or d.np.kind == "c":
        raise RuntimeError(f"{name} expects floating point dtypes, got: {d}")
    return d


def window_values(length: int, periodic: bool, fn, dtype=np.float64) -> np.ndarray:
    """``fn(k, n)`` over the ``n`` points of the symmetric window; a periodic window is the
    symmetric one of ``length + 1`` points without its last. Lengths 0 and 1: [] and [1]. float32
    windows are computed in float32, as torch does (its rounding shows: blackman's ends are
    -3e-08, not 0); other dtypes in float64."""
    if length == 0:
        return np.zeros(0)
    if length == 1:
        return np.ones(1)
    n = length + 1 if periodic else length
    dtype = np.float32 if np.dtype(dtype) == np.float32 else np.float64
    return fn(np.arange(n, dtype=dtype), n)[:length]


def cosine_sum(coeffs, high_first: bool = False):
    """The generalized cosine window sum_j (-1)^j a_j cos(2 pi j k / (n - 1)) (hann, hamming,
    blackman, nuttall are its instances), summed from a_0 or (``high_first``) from the last term:
    torch's two window families round differently."""
    terms = list(enumerate(coeffs))
    if high_first:
        terms.reverse()

    def f(k, n):
        fac = k * k.dtype.type(2 * math.pi / (n - 1))
        return sum(k.dtype.type((-1) ** j * a) * np.cos(j * fac) for j, a in terms)

    return f


def bartlett(k, n):
    """The triangular window 1 - |2k/(n-1) - 1|."""
    return 1 - np.abs(2 * k / (n - 1) - 1)


def kaiser(beta: float):
    """The Kaiser window I0(beta sqrt(1 - ((k - (n-1)/2) / ((n-1)/2))^2)) / I0(beta)."""

    def f(k, n):
        a = (n - 1) / 2
        return np.i0(beta * np.sqrt(np.clip(1 - ((k - a) / a) ** 2, 0, None))) / np.i0(beta)

    return f


def _window(name, window_length, periodic, dtype, device, requires_grad, fn):
    if type(window_length) is not int and not isinstance(window_length, np.integer):
        raise TypeError(
            f"{name}(): argument 'window_length' (position 1) must be int, not "
            f"{type(window_length).__name__}"
        )
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    d = _window_dtype(name, dtype)
    arr = window_values(window_length, periodic, fn, d.np).astype(d.np)
    dev = _dev(device)
    return _finish(_make(dev, lambda xp: xp.asarray(arr)), requires_grad, None)


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The Hann window: 0.5 - 0.5 cos(2 pi k / (N - 1)); ``periodic`` drops the last sample of N+1."""
    f = cosine_sum((0.5, 0.5))
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, f)


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The Hamming window: alpha - beta cos(2 pi k / (N - 1))."""
    f = cosine_sum((alpha, beta))
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, f)


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The Blackman window: 0.42 - 0.5 cos(2 pi k/(N-1)) + 0.08 cos(4 pi k/(N-1))."""
    f = cosine_sum((0.42, 0.5, 0.08), high_first=True)
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, f)


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The Bartlett (triangular) window: 1 - |2k/(N-1) - 1|."""
    return _window(
        "bartlett_window", window_length, periodic, dtype, device, requires_grad, bartlett
    )


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The Kaiser window: I0(beta sqrt(1 - ((k - (N-1)/2) / ((N-1)/2))^2)) / I0(beta)."""
    f = kaiser(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, f)


# ---------------------------------------------------------------------------------- stft/istft
def _type_desc(t) -> str:
    """How torch's stft/istft errors name a tensor's type: torch.FloatTensor, but
    CPUComplexFloatType for complex ones."""
    name = _dt.legacy_type_name(t.dtype)
    return f"CPU{name[:-6]}Type" if t.is_complex() else f"torch.{name}"


def _signature(name: str, input, **args) -> str:
    """The call torch's stft/istft errors start with: ``stft(torch.FloatTensor[1, 80], n_fft=16,
    ..., window=torch.FloatTensor{[10]}, normalized=0, ...)`` (bools as 0/1)."""

    def show(v):
        if isinstance(v, Tensor):
            return f"{_type_desc(v)}{{{list(v.shape)}}}"
        return int(v) if isinstance(v, bool) else v

    shown = ", ".join(f"{k}={show(v)}" for k, v in args.items())
    return f"{name}({_type_desc(input)}{list(input.shape)}, {shown})"


def _pad_window(window, win_length, n_fft, like, bad_shape):
    """The window (ones when None) zero-padded on both sides to ``n_fft``; ``bad_shape()`` is the
    error message for a window that is not 1D of ``win_length``."""
    if window is None:
        window = like.new_ones(win_length, dtype=like.real.dtype if like.is_complex() else None)
    if window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(bad_shape())
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        z = window.new_zeros
        window = _cat([z(left), window, z(n_fft - win_length - left)], 0)
    return window


def _pad_signal(x, pad, mode):
    """Pad the last dim by ``pad`` on each side, as torch: F.pad of a view of at least 3 dims
    (leading ones; its errors show that view), a 0-d signal staying 3-d."""
    from .padding import pad as _pad

    nd = x.ndim
    y = _pad(x.reshape([1] * (3 - nd) + list(x.shape)), [pad, pad], mode)
    return y.reshape(y.shape[-nd:]) if nd else y


@_autocast_entry
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """Short-time Fourier transform: (B?, L) -> (B?, n_freq, n_frames), complex.

    With ``center=False``, ``align_to_window=True`` places each frame's window (of
    ``win_length < n_fft``) at ``k * hop_length`` in the signal, rather than the frame's start:
    ``1 + (L - win_length) // hop_length`` frames."""
    from .. import fft as _fft
    from .indexing import index_select

    # torch's order: its Python checks and padding, then its kernel's warnings and checks
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = input
    if center:
        x = _pad_signal(x, n_fft // 2, pad_mode)
    if window is None:
        _warn_once(
            "stft_window",
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as torch.hann_window or "
            "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
            "device=<device>)`.",
        )

    def fail(msg):
        # torch's errors start with the call (return_complex as given), the input as padded
        sig = _signature(
            "stft", x, n_fft=n_fft, hop_length=hop, win_length=win, window=window,
            normalized=normalized, onesided=onesided, return_complex=given_complex,
            align_to_window=align_to_window,
        )  # fmt: skip
        return f"{sig} : {msg}"

    given_complex = return_complex
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if not return_complex:
        _warn_once(
            "stft_return_complex",
            "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
            "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
            "Note: you can still call torch.view_as_real on the complex output to recover the old "
            "return format.",
        )
    if x.dtype.category < _dt.FLOAT:
        raise RuntimeError(fail("expected a tensor of floating point or complex values"))
    if x.ndim not in (1, 2):
        raise RuntimeError(fail("expected a 1D or 2D tensor"))
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:  # torch reports the window length as the n_fft
        raise RuntimeError(fail(f"expected 0 < n_fft < {length}, but got n_fft={win}"))
    if hop <= 0:
        raise RuntimeError(fail(f"expected hop_length > 0, but got hop_length={hop}"))
    if win <= 0 or win > n_fft:
        raise RuntimeError(fail(f"expected 0 < win_length <= n_fft, but got win_length={win}"))
    w = _pad_window(
        window,
        win,
        n_fft,
        x,
        lambda: fail(
            f"expected a 1D window tensor of size equal to win_length={win}, but got window "
            f"with size {list(window.shape)}"
        ),
    )
    if align_to_window and win < n_fft:  # the zeros around each window come from outside
        left = (n_fft - win) // 2
        z = x.new_zeros
        x = _cat([z((*x.shape[:-1], left)), x, z((*x.shape[:-1], n_fft - win - left))], -1)
        length = x.shape[-1]
    n_frames = 1 + (length - n_fft) // hop
    idx = np.arange(n_frames)[:, None] * hop + np.arange(n_fft)
    frames = index_select(x, -1, x.new_tensor(idx.reshape(-1), dtype=_dt.int64))
    frames = frames.reshape(*x.shape[:-1], n_frames, n_fft) * w
    if onesided is None:
        onesided = not (frames.is_complex())
    norm = "ortho" if normalized else "backward"
    if onesided:
        if frames.is_complex():
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spec = _fft.rfft(frames, dim=-1, norm=norm)
    else:
        spec = _fft.fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    if not return_complex:
        from .misc import view_as_real

        return view_as_real(spec)
    return spec


def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """Inverse short-time Fourier transform (overlap-add with window-envelope normalisation)."""
    from .. import fft as _fft

    if window is None:
        _warn_once(
            "istft_window",
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning and "
            "use a rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
        )
    if not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(msg, sep=" : ", onesided=onesided):  # the onesided argument, not the one inferred
        sig = _signature(
            "istft", input, n_fft=n_fft, hop_length=hop, win_length=win, window=window,
            center=center, normalized=normalized, onesided=onesided, length=length,
            return_complex=return_complex,
        )  # fmt: skip
        return f"{sig}{sep}{msg}"

    if input.ndim < 2:  # torch reads the frames, then the bins, of the view_as_real input
        r = input.ndim + 1
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-r}, {r - 1}], but got "
            f"{-2 if r < 2 else -3})"
        )
    if input.ndim not in (2, 3):  # torch counts the dims of the view_as_real input
        raise RuntimeError(
            fail(f"expected a tensor with 3 or 4 dimensions, but got {input.ndim + 1}")
        )
    n_freq, n_frames = input.shape[-2], input.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    freq_msg = "expected the frequency dimension (3rd to the last) of the input tensor to match"
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError(fail(f"{freq_msg} n_fft / 2 + 1 when onesided=True, but got {n_freq}"))
    if not onesided and n_freq != n_fft:
        raise RuntimeError(fail(f"{freq_msg} n_fft when onesided=False, but got {n_freq}"))
    if hop <= 0 or hop > win:
        raise RuntimeError(fail("expected 0 < hop_length <= win_length"))
    if win <= 0 or win > n_fft:
        raise RuntimeError(fail("expected 0 < win_length <= n_fft"))
    if onesided and return_complex:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    w = _pad_window(
        window,
        win,
        n_fft,
        input.real,
        lambda: fail("Invalid window shape. window has to be 1D and length of `win_length`"),
    )
    if w.is_complex() and not return_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    norm = "ortho" if normalized else "backward"
    x = input.transpose(-1, -2)
    if not return_complex:
        if not onesided:  # a real result assumes a Hermitian spectrum: only half of it is read
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = _fft.irfft(x, n=n_fft, dim=-1, norm=norm)
    else:
        frames = _fft.ifft(x, n=n_fft, dim=-1, norm=norm)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    idx = (np.arange(n_frames)[:, None] * hop + np.arange(n_fft)).reshape(-1)
    it = frames.new_tensor(idx, dtype=_dt.int64)
    y = frames.new_zeros((*frames.shape[:-2], total)).index_add(
        -1, it, frames.reshape(*frames.shape[:-2], n_frames * n_fft)
    )
    w2 = w * w
    env = w2.new_zeros(total).index_add(0, it, w2.repeat(n_frames))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    end = min(end, total)
    y = y[..., start:end]
    env = env[start:end]
    if bool((env.abs() < 1e-11).any()):
        raise RuntimeError(fail("window overlap add min: 1\n[ CPUBoolType{} ]", sep=" "))
    y = y / env
    if length is not None and y.shape[-1] < length:
        _warn_once(
            "istft_length",
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
        )
        y = _cat([y, y.new_zeros((*y.shape[:-1], length - y.shape[-1]))], -1)
    return y


Tensor.stft = stft  # torch.Tensor.stft / istft: the same functions as methods
Tensor.istft = istft
