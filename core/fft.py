"""ember.fft: discrete Fourier transforms (torch.fft).

Every transform resizes its input to ``n``/``s`` (zero-padding or trimming, with differentiable
ops) and calls one of the three registered transforms of core/ops/spectral.py, so gradients and
double backward come from their adjoints. ``norm`` is torch's: "backward" (default: the forward
transform is unscaled, the inverse scaled by 1/n), "ortho" (1/sqrt(n) both ways) or "forward".
"""

from __future__ import annotations

import functools

import numpy as np

from ..autograd.grad_mode import _state
from . import dtype as _dt
from .autocast import entry as _autocast_entry
from .dims import normalize_dim
from .ops.creation import _dev, _finish, _into, _make
from .ops.pointwise import conj_physical
from .ops.shape import cat, roll
from .ops.spectral import _fft_c2c, _fft_c2r, _fft_r2c
from .tensor import Tensor

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_MODES = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def _mode(norm, forward: bool) -> int:
    """The scale mode (0 none, 1 1/sqrt(n), 2 1/n) of a transform in the given direction."""
    m = _MODES.get(norm) if isinstance(norm, (str, type(None))) else None
    if m is None:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return m if forward else 2 - m


def _outable(fn):
    """Adds torch's ``out=`` keyword to a transform (no autograd through ``out``)."""

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        r = fn(*args, **kwargs)
        if out is None:
            return r
        if r.requires_grad and _state.enabled:
            raise RuntimeError(
                f"fft_{fn.__name__}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        if not isinstance(out, Tensor):
            raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
        if r.is_complex() and not out.is_complex():
            raise RuntimeError(
                f"{fn.__name__} expects a complex output tensor, but got "
                f"{_dt.scalar_name(out.dtype)}"
            )
        return _into(out, r)

    return wrapper


# --------------------------------------------------------------------------------- input checks
def _check_dtype(x: Tensor, name: str, real_only: bool = False) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )
    k = x._data.dtype.kind
    if k in "biu":
        return x.to(_dt.get_default_dtype())
    if x._data.dtype.itemsize == 2 or k == "V":  # pocketfft has no half-precision transforms
        raise RuntimeError(f"Unsupported dtype {_dt.scalar_name(x.dtype)}")
    if real_only and k == "c":
        tn = _dt.scalar_name(x.dtype)
        if name in ("ihfftn", "ihfft2"):
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {tn}")
        what = "real-valued" if name in ("rfftn", "rfft2") else "real"
        raise RuntimeError(f"{name} expects a {what} input tensor, but got {tn}")
    return x


def _to_complex(x: Tensor) -> Tensor:
    if x._data.dtype.kind == "c":
        return x
    from .ops.creation import _complex

    # complex(x, 0) rather than a cast: its gradient takes the real part without a ComplexWarning
    return _complex(x, x.new_zeros(()).expand_as(x))


def _dims(x: Tensor, s, dim, default_all: bool = True):
    """torch's (shape, dims) canonicalisation for the n-dimensional transforms."""
    nd = x.ndim
    if dim is not None:
        if isinstance(dim, (int, str)):
            dim = (dim,)
        dims = [normalize_dim(x, d) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None:
            s = list(s)
            if len(s) != len(dims):
                raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        s = list(s)
        if len(s) > nd:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {nd} dimensions."
            )
        dims = list(range(nd - len(s), nd))
    else:
        dims = list(range(nd)) if default_all else []
    if s is not None:
        s = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    for n in s if s is not None else [x.shape[d] for d in dims]:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return s, dims


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """Trim or zero-pad ``x`` along ``dims`` to ``sizes`` (differentiably)."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            shape = list(x.shape)
            shape[d] = n - have
            x = cat([x, x.new_zeros(shape)], d)
    return x


def _one_dim(x: Tensor, n, dim, c2r: bool = False):
    """``dim`` as an index, with torch's errors; a c2r transform checks its output size later."""
    if not x.ndim and not isinstance(dim, str):
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(x, dim)
    if n is None:
        if c2r:
            return d
        n = x.shape[d]
    if n <= 0:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return d


# ------------------------------------------------------------------------ complex-to-complex
def _c2c(name, x, s, dims, norm, forward):
    x = _check_dtype(x, name)
    if s is not None:
        x = _resize(x, dims, s)
    mode = _mode(norm, forward)
    dims = tuple(dims)
    if x._data.dtype.kind != "c":  # a real signal: the two-sided real-to-complex transform
        r = _fft_r2c(x, dims, mode, False)
        return r if forward else conj_physical(r)
    return _fft_c2c(x, dims, mode, forward)


@_autocast_entry
@_outable
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``."""
    input = _check_dtype(input, "fft")
    d = _one_dim(input, n, dim)
    return _c2c("fft", input, None if n is None else [n], [d], norm, True)


@_autocast_entry
@_outable
def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform."""
    input = _check_dtype(input, "ifft")
    d = _one_dim(input, n, dim)
    return _c2c("ifft", input, None if n is None else [n], [d], norm, False)


@_autocast_entry
@_outable
def fftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional discrete Fourier transform over ``dim`` (all dims by default)."""
    input = _check_dtype(input, "fftn")
    s, dims = _dims(input, s, dim)
    return _c2c("fftn", input, s, dims, norm, True)


@_autocast_entry
@_outable
def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional inverse discrete Fourier transform."""
    input = _check_dtype(input, "ifftn")
    s, dims = _dims(input, s, dim)
    return _c2c("ifftn", input, s, dims, norm, False)


@_autocast_entry
@_outable
def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-dimensional discrete Fourier transform (over the last two dims by default)."""
    return fftn(input, s, dim, norm)


@_autocast_entry
@_outable
def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-dimensional inverse discrete Fourier transform."""
    return ifftn(input, s, dim, norm)


# --------------------------------------------------------------------------- real transforms
def _r2c(name, x, s, dims, mode):
    x = _check_dtype(x, name, real_only=True)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is not None:
        x = _resize(x, dims, s)
    return _fft_r2c(x, tuple(dims), mode, True)


def _c2r(name, x, s, dims, mode, conj=False):
    x = _check_dtype(x, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = dims[-1]
    n = s[-1] if s is not None else 2 * (x.shape[last] - 1)
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    sizes = list(s[:-1]) if s is not None else [x.shape[d] for d in dims[:-1]]
    x = _resize(_to_complex(x), dims, sizes + [n // 2 + 1])
    if conj:
        x = conj_physical(x)
    return _fft_c2r(x, tuple(dims), mode, n)


@_autocast_entry
@_outable
def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-sided DFT of a real signal: n // 2 + 1 frequency bins."""
    input = _check_dtype(input, "rfft", real_only=True)
    d = _one_dim(input, n, dim)
    return _r2c("rfft", input, None if n is None else [n], [d], _mode(norm, True))


@_autocast_entry
@_outable
def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of rfft: a real signal of length ``n`` (default 2 * (bins - 1))."""
    input = _check_dtype(input, "irfft")
    d = _one_dim(input, n, dim, c2r=True)
    return _c2r("irfft", input, None if n is None else [n], [d], _mode(norm, False))


@_autocast_entry
@_outable
def rfftn(
    input: Tensor, s=None, dim=None, norm: str | None = None, *, name: str = "rfftn"
) -> Tensor:
    """The N-dimensional DFT of a real signal, one-sided in the last transformed dim."""
    input = _check_dtype(input, name, real_only=True)
    s, dims = _dims(input, s, dim)
    return _r2c(name, input, s, dims, _mode(norm, True))


@_autocast_entry
@_outable
def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of rfftn."""
    input = _check_dtype(input, "irfftn")
    s, dims = _dims(input, s, dim)
    return _c2r("irfftn", input, s, dims, _mode(norm, False))


@_autocast_entry
@_outable
def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-dimensional DFT of a real signal."""
    return rfftn(input, s, dim, norm, name="rfft2")


@_autocast_entry
@_outable
def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The inverse of rfft2."""
    return irfftn(input, s, dim, norm)


@_autocast_entry
@_outable
def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The DFT of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    input = _check_dtype(input, "hfft")
    d = _one_dim(input, n, dim, c2r=True)
    # sum_k x_k e^{-i..} = conj(sum_k conj(x_k) e^{+i..}), real: an unscaled c2r of conj(x)
    return _c2r("hfft", input, None if n is None else [n], [d], _mode(norm, True), conj=True)


@_autocast_entry
@_outable
def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of hfft: the one-sided inverse DFT of a real signal."""
    input = _check_dtype(input, "ihfft", real_only=True)
    d = _one_dim(input, n, dim)
    r = _r2c("ihfft", input, None if n is None else [n], [d], _mode(norm, False))
    return conj_physical(r)


@_outable
def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional DFT of a Hermitian-symmetric signal (real output)."""
    input = _check_dtype(input, "hfftn")
    s, dims = _dims(input, s, dim)
    return _c2r("hfftn", input, s, dims, _mode(norm, True), conj=True)


@_outable
def ihfftn(
    input: Tensor, s=None, dim=None, norm: str | None = None, *, name: str = "ihfftn"
) -> Tensor:
    """The inverse of hfftn."""
    input = _check_dtype(input, name, real_only=True)
    s, dims = _dims(input, s, dim)
    return conj_physical(_r2c(name, input, s, dims, _mode(norm, False)))


@_outable
def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-dimensional hfft."""
    return hfftn(input, s, dim, norm)


@_outable
def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-dimensional ihfft."""
    return ihfftn(input, s, dim, norm, name="ihfft2")


# ------------------------------------------------------------------------------- helpers
def _freq(name, vals, n, d, dtype, device, requires_grad):
    dt = _dt.get_default_dtype() if dtype is None else _dt.to_dtype(dtype)
    arr = (vals / (n * d)).astype(dt.np) if n else np.zeros(0, dt.np)
    dev = _dev(device)
    return _finish(_make(dev, lambda xp: xp.asarray(arr)), requires_grad, None)


def fftfreq(
    n: int, d: float = 1.0, *, dtype=None, layout=None, device=None, requires_grad: bool = False
) -> Tensor:
    """The sample frequencies of fft(n): [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)."""
    k = np.arange(n, dtype=np.float64)
    vals = np.where(k <= (n - 1) // 2, k, k - n)
    return _freq("fftfreq", vals, n, d, dtype, device, requires_grad)


def rfftfreq(
    n: int, d: float = 1.0, *, dtype=None, layout=None, device=None, requires_grad: bool = False
) -> Tensor:
    """The sample frequencies of rfft(n): [0, 1, ..., n // 2] / (d * n)."""
    vals = np.arange(n // 2 + 1, dtype=np.float64)
    return _freq("rfftfreq", vals, n, d, dtype, device, requires_grad)


def _shift_dims(x, dim):
    if dim is None:
        return list(range(x.ndim))
    if isinstance(dim, (int, str)):
        return [normalize_dim(x, dim)]
    return [normalize_dim(x, d) for d in dim]


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Moves the zero-frequency bin to the centre (a roll by n // 2 along ``dim``)."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input.clone()
    return roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of fftshift (a roll by -(n // 2))."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input.clone()
    return roll(input, [-(input.shape[d] // 2) for d in dims], dims)


# ``import ember.fft`` works like ``import torch.fft``: the namespace is this module
import sys as _sys

_sys.modules.setdefault(__name__.rsplit(".", 2)[0] + ".fft", _sys.modules[__name__])
