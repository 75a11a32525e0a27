"""ember.fft: discrete Fourier transforms (torch.fft).

Every transform resizes its input to ``n``/``s`` (zero-padding or trimming, with differentiable
ops) and calls one of the three registered transforms of core/ops/spectral.py, so gradients and
double backward come from their adjoints. ``norm`` is torch's: "backward" (default: the forward
transform is unscaled, the inverse scaled by 1/n), "ortho" (1/sqrt(n) both ways) or "forward".
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from ..autograd.grad_mode import _state
from . import dtype as _dt
from .arg_errors import tensor_input as _tensor_input
from .arg_errors import type_name as _type_name
from .autocast import entry as _autocast_entry
from .dims import normalize_dim
from .names import check_out_names as _check_out_names
from .ops.creation import _check_out_dtype, _dev, _finish, _into, _make
from .ops.pointwise import conj as _conj
from .ops.pointwise import conj_physical
from .ops.pooling import _int_list_error
from .ops.shape import cat, roll
from .ops.spectral import _fft_c2c, _fft_c2r, _fft_r2c
from .registry import _warn_resized
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
    """Adds torch's argument parser (``_parse``) and ``out=`` keyword to a transform (no autograd
    through ``out``)."""
    name = fn.__name__
    one_d = name in _ONE_D
    # torch's 2-D transforms are its n-D ones: their out= errors name those (ifftn writes
    # through fftn's out=)
    nd_name = name[:-1] + "n" if name.endswith("2") else name
    shown = "fftn" if nd_name == "ifftn" else nd_name
    complex_out = not nd_name.startswith(("irfft", "hfft"))

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        kwargs = _parse(name, args, kwargs, out)
        if out is None:
            return fn(**kwargs)
        # torch's 1-D transforms of a real signal, and its complex-to-real ones, check the out
        # tensor first; the others last
        early = one_d and (name in ("irfft", "hfft") or not kwargs["input"].is_complex())
        if early:
            _check_out_kind(shown, out, complex_out)
        r = fn(**kwargs)
        if not early:
            _check_out_kind(shown, out, complex_out)
        real = not kwargs["input"].is_complex()
        # torch's ifft/ihfft of a real signal is a composite: the conjugate of a real-to-complex
        # transform, written by conj_physical's out=, which takes no other dtype and refuses
        # autograd only for an out that requires grad
        conj = real and name in ("ifft", "ihfft")
        if _state.enabled and (out.requires_grad or (r.requires_grad and not conj)):
            kernel = "aten::conj_physical" if conj else _kernel_name(nd_name, real, r)
            raise RuntimeError(
                f"{kernel}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        if conj and out.dtype != r.dtype:
            raise RuntimeError(
                f"Found dtype {_dt.scalar_name(out.dtype)} but expected {_dt.scalar_name(r.dtype)}"
            )
        # out= semantics of the names spec: a named out must carry the computed names
        names = _check_out_names(out, r._names, f"fft_{name}")
        if out._data.size and out._data.shape != r._data.shape:
            _warn_resized(out._data.shape, r._data.shape)
        out = _into(out, r)
        out._names = names
        return out

    return wrapper


def _check_out_kind(shown: str, out: Tensor, complex_out: bool) -> None:
    """torch's check of the out tensor's kind: complex for a complex result, else floating."""
    if not out.is_complex() if complex_out else not out.is_floating_point():
        what = "complex" if complex_out else "floating point"
        raise RuntimeError(
            f"{shown} expects a {what} output tensor, but got {_dt.scalar_name(out.dtype)}"
        )


def _kernel_name(name: str, real: bool, r: Tensor) -> str:
    """torch's kernel under a transform (its autograd refusal of out= names it): complex to
    real, real to complex (rfft, fft of a real signal) or complex to complex (the n-d
    transforms and ihfft take a real signal as complex)."""
    if not r.is_complex():
        return "_fft_c2r"
    return "_fft_r2c" if real and name in ("fft", "rfft", "rfftn") else "_fft_c2c"


# --------------------------------------------------------------------------------- input checks
_ONE_D = frozenset(("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))


def _parse(name: str, args: tuple, kwargs: dict, out) -> dict:
    """torch's argument parser for ``fft_<name>(input, n | s, dim, norm, *, out)``: the arguments
    by name, ``n``/``s``/``dim`` read as ints (an int ``s``/``dim`` of an n-D transform is a
    list of one; ember's dim names pass), or its TypeError: the first argument of the wrong type,
    then (torch unpacks lists last) a list with an element that is no int."""
    fname = f"fft_{name}"
    one_d = name in _ONE_D
    params = ("input", "n" if one_d else "s", "dim", "norm")
    if len(args) > 4:
        raise TypeError(
            f"{fname}() takes from 1 to 4 positional arguments but {len(args)} were given"
        )
    given = dict(zip(params, args))
    for k in kwargs.keys() & given.keys():
        raise TypeError(f"{fname}() got multiple values for argument '{k}'")
    given.update(kwargs)
    if "input" not in given:
        raise TypeError(f'{fname}() missing 1 required positional arguments: "input"')
    lists = []
    for i, key in enumerate(params):
        if key not in given:
            continue
        v = given[key]
        pos = i + 1 if i < len(args) else None
        if key == "input":
            ok, want = isinstance(v, Tensor), "Tensor"
        elif key == "norm":
            ok, want = v is None or isinstance(v, str), "str"
        elif key == "n" or one_d:  # n is optional, a dim may be a name
            ok, want = (v is None if key == "n" else isinstance(v, str)) or _is_int(v), "int"
            if _is_int(v):
                given[key] = operator.index(v)
        elif v is None:  # a 2-D transform's dim (a default, not optional) takes no None
            ok, want = key == "s" or not name.endswith("2"), "tuple of ints"
        else:
            ok, want = _int_list_head(v, key), "tuple of ints"
            lists.append(key)
            if not ok and pos and isinstance(v, (tuple, list)):
                raise _int_list_error(fname, key, 0, v, pos)
        if not ok:
            where = f" (position {pos})" if pos else ""
            raise TypeError(
                f"{fname}(): argument '{key}'{where} must be {want}, not {_type_name(v)}"
            )
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {_type_name(out)}")
    for key in reversed(lists):  # torch's generated binding unpacks dim before s
        given[key] = _int_list(fname, key, given[key])
    for k in given.keys() - set(params):
        raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
    return given


def _is_int(v) -> bool:
    """What torch's parser reads as an int: an int or a numpy integer (no bool), or a 0-d integer
    tensor."""
    if isinstance(v, Tensor):
        return v.ndim == 0 and v._data.dtype.kind in "iu"
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _int_list_head(v, key: str) -> bool:
    """Whether torch's parser takes ``v`` as an int list: an int, or a tuple or list whose first
    element is one (for ``dim``, ember's names too)."""
    if isinstance(v, (tuple, list)):
        if not v:
            return True
        v = v[0]
    return _is_int(v) or (key == "dim" and isinstance(v, str))


def _int_list(fname: str, key: str, v) -> list:
    """The int list ``v`` (its first element checked by ``_int_list_head``) as a list of ints,
    with torch's error for a later element that is not int-like (a bool is)."""
    v = v if isinstance(v, (tuple, list)) else [v]
    for i, x in enumerate(v[1:], 1):
        if not (_is_int(x) or isinstance(x, (bool, np.bool_, str if key == "dim" else ()))):
            raise _int_list_error(fname, key, i, v)
    return [x if isinstance(x, str) else operator.index(x) for x in v]


def _check_dtype(x: Tensor, name: str, real_only: bool = False) -> Tensor:
    k = x._data.dtype.kind
    if k in "biu":
        return x.to(_dt.get_default_dtype())
    if x._data.dtype.itemsize == 2 or k == "V":  # pocketfft has no half-precision transforms
        raise RuntimeError(f"Unsupported dtype {_dt.scalar_name(x.dtype)}")
    if real_only and k == "c":
        tn = _dt.scalar_name(x.dtype)
        if name == "ihfftn":
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {tn}")
        what = "real-valued" if name == "rfftn" else "real"
        raise RuntimeError(f"{name} expects a {what} input tensor, but got {tn}")
    return x


def _to_complex(x: Tensor) -> Tensor:
    if x._data.dtype.kind == "c":
        return x
    from .ops.creation import _complex

    # complex(x, 0) rather than a cast: its gradient takes the real part without a ComplexWarning
    return _complex(x, x.new_zeros(()).expand_as(x))


def _dims(x: Tensor, s, dim, c2r: bool = False):
    """torch's (shape, dims) canonicalisation for the n-dimensional transforms; for a
    complex-to-real one (``c2r``), the last size is the output length: -1 there stands for the
    default, 2 * (m - 1) for m input bins."""
    nd = x.ndim
    if dim is not None:
        if not nd and dim and not isinstance(dim[0], str):
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
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
        dims = list(range(nd))
    given = s
    if s is not None:
        s = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    for n in s if s is not None else [x.shape[d] for d in dims]:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    if c2r and given and given[-1] == -1:
        s[-1] = 2 * (s[-1] - 1)  # checked by _c2r
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
    if x._data.dtype.kind != "c":
        if name not in ("fft", "ifft"):  # torch's n-d transforms take a real signal as complex
            return _fft_c2c(_to_complex(x), dims, mode, forward)
        # a real signal: the two-sided real-to-complex transform
        r = _fft_r2c(x, dims, mode, False)
        return r if forward else _conj(r)  # torch's node: ConjBackward0
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
    s, dims = _dims(input, s, dim)  # torch checks s/dim before the dtype
    input = _check_dtype(input, "fftn")
    return _c2c("fftn", input, s, dims, norm, True)


@_autocast_entry
@_outable
def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional inverse discrete Fourier transform."""
    s, dims = _dims(input, s, dim)  # torch checks s/dim before the dtype
    input = _check_dtype(input, "ifftn")
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
def _r2c(name, x, s, dims, norm, inverse=False):
    """The one-sided transform of a real signal; ``inverse``: ihfft's, the conjugate (torch's
    order for several dims: the last one-sided, then the others by an inverse c2c)."""
    if not dims:  # before the dtype, as torch
        raise RuntimeError(f"{name} must transform at least one axis")
    # torch's ihfftn refuses a complex signal in its kernel, after the norm
    x = _check_dtype(x, name, real_only=name != "ihfftn")
    if s is not None:
        x = _resize(x, dims, s)
    mode = _mode(norm, not inverse)
    if x.is_complex():
        _check_dtype(x, name, real_only=True)
    if not inverse:
        return _fft_r2c(x, tuple(dims), mode, True)
    if len(dims) == 1:
        return _conj(_fft_r2c(x, tuple(dims), mode, True))
    r = conj_physical(_fft_r2c(x, (dims[-1],), mode, True))
    return _fft_c2c(r, tuple(dims[:-1]), mode, False)


def _c2r(name, x, s, dims, norm, forward=False):
    """The real signal of a Hermitian half spectrum (its length ``s[-1]``, by default
    2 * (m - 1) for m bins); ``forward``: hfft's, the transform of the conjugate."""
    if not dims:  # torch's order: the axes, the output length, the dtype, the norm
        raise RuntimeError(f"{name} must transform at least one axis")
    last = dims[-1]
    n = s[-1] if s is not None else 2 * (x.shape[last] - 1)
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    x = _check_dtype(x, name)
    sizes = list(s[:-1]) if s is not None else [x.shape[d] for d in dims[:-1]]
    x = _resize(_to_complex(x), dims, sizes + [n // 2 + 1])
    mode = _mode(norm, forward)
    if forward:
        # sum_k x_k e^{-i..} = conj(sum_k conj(x_k) e^{+i..}), real: a c2r of conj(x)
        x = conj_physical(x)
    return _fft_c2r(x, tuple(dims), mode, n)


@_autocast_entry
@_outable
def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-sided DFT of a real signal: n // 2 + 1 frequency bins."""
    input = _check_dtype(input, "rfft", real_only=True)
    d = _one_dim(input, n, dim)
    return _r2c("rfft", input, None if n is None else [n], [d], norm)


@_autocast_entry
@_outable
def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of rfft: a real signal of length ``n`` (default 2 * (bins - 1))."""
    input = _check_dtype(input, "irfft")
    d = _one_dim(input, n, dim, c2r=True)
    return _c2r("irfft", input, None if n is None else [n], [d], norm)


@_autocast_entry
@_outable
def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional DFT of a real signal, one-sided in the last transformed dim."""
    if input.is_complex():  # torch refuses a complex input before it looks at s/dim
        _check_dtype(input, "rfftn", real_only=True)
    s, dims = _dims(input, s, dim)
    return _r2c("rfftn", input, s, dims, norm)


@_autocast_entry
@_outable
def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of rfftn."""
    s, dims = _dims(input, s, dim, c2r=True)  # torch checks s/dim before the dtype
    return _c2r("irfftn", input, s, dims, norm)


@_autocast_entry
@_outable
def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-dimensional DFT of a real signal."""
    return rfftn(input, s, dim, norm)


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
    return _c2r("hfft", input, None if n is None else [n], [d], norm, forward=True)


@_autocast_entry
@_outable
def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of hfft: the one-sided inverse DFT of a real signal."""
    input = _check_dtype(input, "ihfft", real_only=True)
    d = _one_dim(input, n, dim)
    return _r2c("ihfft", input, None if n is None else [n], [d], norm, inverse=True)


@_outable
def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional DFT of a Hermitian-symmetric signal (real output)."""
    s, dims = _dims(input, s, dim, c2r=True)  # torch checks s/dim before the dtype
    return _c2r("hfftn", input, s, dims, norm, forward=True)


@_outable
def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of hfftn."""
    s, dims = _dims(input, s, dim)  # torch checks s/dim before the dtype
    return _r2c("ihfftn", input, s, dims, norm, inverse=True)


@_outable
def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-dimensional hfft."""
    return hfftn(input, s, dim, norm)


@_outable
def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The 2-dimensional ihfft."""
    return ihfftn(input, s, dim, norm)


# ------------------------------------------------------------------------------- helpers
def _freq_args(name, n, d, dtype, out):
    """torch's checks of fftfreq/rfftfreq's arguments, in its order: their types, the length
    of the result (allocated before the dtype is checked; into ``out``, arange's check after
    it), the dtype; returns (the length, d as a float, the dtype)."""
    if type(n) is bool or not isinstance(n, (int, np.integer)):
        raise TypeError(
            f"fft_{name}(): argument 'n' (position 1) must be int, not {type(n).__name__}"
        )
    if isinstance(d, Tensor):
        d = d.item()
    if type(d) is bool or not isinstance(d, (int, float, np.number)):
        raise TypeError(
            f"fft_{name}(): argument 'd' (position 2) must be float, not {type(d).__name__}"
        )
    # rfftfreq's n // 2 + 1 bins: torch halves n in C++, rounding toward zero
    m = n if name == "fftfreq" else (n // 2 if n >= 0 else -(-n // 2)) + 1
    if m < 0 and out is None:
        raise RuntimeError(f"Trying to create tensor with negative dimension {m}: [{m}]")
    dt = _dt.get_default_dtype() if dtype is None else _dt.to_dtype(dtype)
    if dt.category < _dt.FLOAT:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dt.np.kind == "c":  # torch's arange has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dt.scalar_name(dt)}'")
    if m < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    return m, float(d), dt


def _freq(vals, n, d, dt, device, requires_grad, out=None, name=None):
    with np.errstate(divide="ignore", invalid="ignore"):  # n * d == 0 gives inf/nan, as torch
        arr = (vals / (n * d)).astype(dt.np)
    dev = _dev(device) if out is None or device is not None else out.device
    return _finish(_make(dev, lambda xp: xp.asarray(arr)), requires_grad, None, out, name)


def _out_dtype(dtype, out):
    """The dtype of a factory with ``out=``: the out tensor's when none is given (torch's error
    when another is)."""
    _check_out_dtype(dtype, out)
    return out.dtype if dtype is None and isinstance(out, Tensor) else dtype


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of fft(n): [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n),
    written into ``out`` when given (in its dtype)."""
    n, d, dt = _freq_args("fftfreq", n, d, _out_dtype(dtype, out), out)
    k = np.arange(n, dtype=np.float64)
    vals = np.where(k <= (n - 1) // 2, k, k - n)
    return _freq(vals, n, d, dt, device, requires_grad, out, "fft_fftfreq")


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of rfft(n): [0, 1, ..., n // 2] / (d * n) (one bin, NaN, at n=0),
    written into ``out`` when given (in its dtype)."""
    m, d, dt = _freq_args("rfftfreq", n, d, _out_dtype(dtype, out), out)
    vals = np.arange(m, dtype=np.float64)
    return _freq(vals, n, d, dt, device, requires_grad, out, "fft_rfftfreq")


def _shift_dims(x, dim, name):
    if dim is None:
        return list(range(x.ndim))
    if not _int_list_head(dim, "dim"):
        raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not {_type_name(dim)}")
    dim = _int_list(name, "dim", dim)
    if not x.ndim and dim and not isinstance(dim[0], str):
        raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
    return [normalize_dim(x, d) for d in dim]


@_tensor_input("fft_fftshift")
def fftshift(input: Tensor, dim=None) -> Tensor:
    """Moves the zero-frequency bin to the centre (a roll by n // 2 along ``dim``)."""
    # no dims (a 0-d input, dim=()): roll's "shifts required"
    dims = _shift_dims(input, dim, "fft_fftshift")
    return roll(input, [input.shape[d] // 2 for d in dims], dims)


@_tensor_input("fft_ifftshift")
def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of fftshift (a roll by -(n // 2))."""
    dims = _shift_dims(input, dim, "fft_ifftshift")
    return roll(input, [-(input.shape[d] // 2) for d in dims], dims)


# ``import ember.fft`` works like ``import torch.fft``: the namespace is this module
import sys as _sys

_sys.modules.setdefault(__name__.rsplit(".", 2)[0] + ".fft", _sys.modules[__name__])
