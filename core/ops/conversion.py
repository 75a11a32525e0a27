"""Conversions: to (dtype, device), type casts (float(), long() ...), clone, contiguous, cpu/cuda."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...autograd.grad_mode import _INFERENCE_USED, check_inference_inplace
from ...autograd.grad_mode import _state as _grad_state
from .. import dtype as _dt
from ..arg_errors import int_varargs, invalid_arguments
from ..device import device as _device
from ..device import module_for, to_device
from ..kernels.blocked import blocked
from ..layout import broadcast_copy, format_array, memory_format, new_array, preserve_format
from ..layout import is_contiguous as _is_contiguous
from ..meta import meta_xp
from ..names import check_out_names, check_resize, keep, unify_inputs
from ..registry import _check_writable, apply_inplace, broadcast_error, op
from ..tensor import Tensor
from ..vmap_state import SLICES as _VMAP_SLICES
from ..vmap_state import refuse_inplace as _vmap_refuse_inplace

_PKG_ROOT = __file__.rsplit("core", 1)[0]  # the ember package folder
_USER_DIRS = tuple(_PKG_ROOT + d for d in ("tests", "examples", "bench"))  # callers, not ember


def _user_level() -> int:
    """The warnings stacklevel of the first frame outside ember (the user's call), however deep
    the entry point (x.float(), x.to(...), x.type(...)) called the cast."""
    import sys

    f, level = sys._getframe(2), 2
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG_ROOT) or fn.startswith(_USER_DIRS):
            break
        f, level = f.f_back, level + 1
    return level


def warn_user(msg: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(msg)`` pointing at the user's line, past ember's own frames."""
    warnings.warn(msg, category, stacklevel=_user_level())


def _warn_complex_to_real() -> None:
    """torch's warning, pointing at the user's line. (torch warns once per process; ember warns
    each time, which Python's default filter shows once per line, and tests can rely on.)"""
    warn_user("Casting complex values to real discards the imaginary part")


@op(names=keep, method=False)
def _cast(xp, input, dtype=None):  # a default makes dtype an option, not an input
    if input.dtype.kind == "c" and dtype is _dt.bool_:
        return input != 0  # torch: nonzero real or imaginary part is True
    if input.dtype.kind == "c" and dtype.category < _dt.COMPLEX:
        _warn_complex_to_real()
        input = input.real
    if xp is np and input.size >= _BITS_MIN:
        src = input.dtype
        if src == np.float32 and dtype is _dt.float16:
            return _f32_to_f16(input)
        if src == np.float16 and dtype.category == _dt.FLOAT and dtype.np.itemsize >= 4:
            r = _f16_to_f32(input)  # exact, so float64 may take the same road
            return r if dtype is _dt.float32 else r.astype(dtype.np)
    r = input.astype(dtype.np)
    # numpy's 'K' order puts an expanded input's stride-0 dims fastest; torch's cast keeps them
    return r if r.flags.c_contiguous else broadcast_copy(xp, input, r)


# float32 <-> float16 on the host. numpy converts halves one element at a time in software (~1.5
# ns per element, 40x torch's F16C); these few vector passes of integer and float32 arithmetic
# give the same bits as torch (checked on all 2^32 floats and 2^16 halves: round to nearest even,
# subnormals, overflow to inf, NaN quieted with its payload's top bits). Small arrays keep numpy's
# cast, which wins below a few thousand elements.
_BITS_MIN = 8192
_BLOCK = 1 << 16
_U32 = np.uint32
_F32 = np.float32
_CONST: dict = {}


def _filled(n, v):
    """n uint32 copies of ``v`` (a cached buffer: ``maximum`` with a scalar takes numpy's slow
    scalar loop, with an array its vector loop)."""
    a = _CONST.get(v)
    if a is None or a.size < n:
        a = _CONST[v] = np.full(2 * _BLOCK, v, _U32)
    return a[:n]


def _f32_to_f16(x):
    return blocked(_f32_to_f16_block, x, _BLOCK, np.float16)


def _f32_to_f16_block(x):
    xb = x.view(_U32)
    c = xb & _U32(0x7F800000)  # each value's exponent field
    if c.max() >= _U32(143 << 23):  # |x| >= 2^16, inf or NaN: the clamping variant
        return _f32_to_f16_wide(x)
    # C = 1.5 * 2^(e + 13) with e clamped below at -14: x + C rounds x to the 11 significant
    # bits of a half (to nearest even), at the fixed 2^-24 step of the half subnormals below;
    # (x + C) - C is then exact
    lo = _filled(c.size, 113 << 23).reshape(c.shape) if c.size <= 2 * _BLOCK else _U32(113 << 23)
    np.maximum(c, lo, out=c)
    c += _U32((13 << 23) | 0x400000)
    cf = c.view(_F32)
    y = x + cf
    y -= cf
    # 2^-112 moves the exponent bias from 127 to 15 (half subnormals become float32 subnormals,
    # exactly): bits 13..27 of each float are the half's exponent and mantissa
    y *= _F32(2.0**-112)
    b = y.view(_U32)
    s = np.right_shift(xb, _U32(16), out=c)  # the sign from x: a value rounded to 0 lost it
    s &= _U32(0x8000)
    b >>= _U32(13)  # the sign moves to bit 18, which the uint16 cast drops
    b |= s
    return b.astype(np.uint16).view(np.float16)


def _f32_to_f16_wide(x):
    y = np.clip(x, _F32(-65536.0), _F32(65536.0))  # rounds to inf; NaN stays NaN
    b = y.view(_U32)
    c = b & _U32(0x7F800000)
    np.clip(c, _U32(113 << 23), _U32(143 << 23), out=c)
    c += _U32((13 << 23) | 0x400000)
    cf = c.view(_F32)
    y += cf  # quiets a signaling NaN, like the hardware conversion
    y -= cf
    y *= _F32(2.0**-112)
    s = np.right_shift(x.view(_U32), _U32(16), out=c)
    s &= _U32(0x8000)
    b >>= _U32(13)
    b &= _U32(0x7FFF)  # NaN: its exponent 255 leaves bits above the half's exponent
    b |= s
    return b.astype(np.uint16).view(np.float16)


def _f16_to_f32(h):
    w = h.view(np.int16).astype(np.int32)  # sign-extended: copies of the sign above bit 15
    w <<= 13
    w &= np.int32(-0x70000001)  # 0x8fffffff: the sign at bit 31, the half in bits 13..27
    f = w.view(_F32)
    f *= _F32(2.0**112)  # exponent bias 15 -> 127; half subnormals become normal floats, exactly
    if f.max() >= 65536 or f.min() <= -65536:  # inf / NaN halves (exponent 31) landed at 2^16
        a = np.abs(f)
        big, nan = a >= 65536, a > 65536
        u = w.view(_U32)
        u[big] |= _U32(0x7F800000)
        u[nan] |= _U32(0x400000)  # quieted, as torch's conversion does
    return f


@_cast.vjp
def _(grad, input_dtype):
    if grad.dtype.category < _dt.FLOAT:
        return None
    if grad.is_complex() and input_dtype.category < _dt.COMPLEX:
        grad = grad.real  # the gradient of a real -> complex cast is the real part (silently)
    return grad.to(input_dtype)


@op(names=keep, method=False)
def _to_device(xp, input, device=None):  # a default: device is an option
    if device.type == "cpu":
        return input.get() if hasattr(input, "get") else input.copy()
    cp = module_for(device)
    if device.type == "meta":  # to meta keeps shape and dtype only
        return cp.empty(input.shape, input.dtype)
    if xp is meta_xp:  # (to cpu, a meta array's get() refuses the same way)
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    with cp.cuda.Device(device.index or 0):
        return cp.asarray(input)


@_to_device.vjp
def _(grad, input):
    return grad.to(input.device)


# torch names both the dtype cast and the device move "ToCopyBackward0"
_cast.op.backward_name = _to_device.op.backward_name = "ToCopyBackward0"


_TO_TAIL = (
    "bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None"
)
_TO_SIGNATURES = tuple(
    f"({lead}, {_TO_TAIL})"
    for lead in (
        "torch.device device = None, torch.dtype dtype = None",
        "torch.dtype dtype",
        "Tensor tensor",
    )
)
_PY_DTYPES = (float, int, bool, complex)  # torch takes Python's number types as dtypes


def _is_dtype(a) -> bool:
    return isinstance(a, _dt.dtype) or (isinstance(a, type) and a in _PY_DTYPES)


# what each of to()'s parameters accepts (None: its default, where it has one)
_TO_CHECKS = {
    "tensor": lambda v: isinstance(v, Tensor),
    "device": lambda v: v is None or isinstance(v, (str, int, _device)),
    "dtype": lambda v: v is None or _is_dtype(v),
    "non_blocking": lambda v: isinstance(v, bool),
    "copy": lambda v: isinstance(v, bool),
    "memory_format": lambda v: v is None or isinstance(v, memory_format),
}


def _to_error(args, kwargs) -> TypeError:
    return invalid_arguments("to", args, kwargs, _TO_SIGNATURES)


def _parse_to(args, kwargs):
    """torch's parsing of ``to(...)`` (Tensor.to and Module.to): one of its three signatures,
    else its TypeError. Returns (device, dtype, non_blocking, copy, memory_format); copy is
    None when not given (Module.to refuses it even as False)."""
    if not kwargs and len(args) == 1:  # the common calls: to(dtype), to(device), to(tensor)
        a = args[0]
        if isinstance(a, _dt.dtype):
            return None, a, False, None, None
        if isinstance(a, (str, _device)):
            return a, None, False, None, None
        if isinstance(a, Tensor):
            return a.device, a.dtype, False, None, None
    if len(args) > 4:
        raise TypeError(f"to() takes from 0 to 4 positional arguments but {len(args)} were given")
    first = args[0] if args else kwargs.get("tensor", kwargs.get("dtype"))
    if isinstance(first, Tensor) and (args or "tensor" in kwargs):
        names = ("tensor", "non_blocking", "copy")
    elif _is_dtype(first) and (args or "device" not in kwargs):
        names = ("dtype", "non_blocking", "copy")
    else:
        names = ("device", "dtype", "non_blocking", "copy")
    if len(args) > len(names):
        raise _to_error(args, kwargs)
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in bound or (k not in names and k != "memory_format"):
            raise _to_error(args, kwargs)
        bound[k] = v
    for k, v in bound.items():
        if not _TO_CHECKS[k](v):
            raise _to_error(args, kwargs)
    t = bound.get("tensor")
    return (
        bound.get("device") if t is None else t.device,
        bound.get("dtype") if t is None else t.dtype,
        bound.get("non_blocking", False),
        bound.get("copy"),
        bound.get("memory_format"),
    )


def to(self, *args, **kwargs):
    """Move/cast: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``, each with
    ``non_blocking``, ``copy`` and ``memory_format``.

    Returns ``self`` when nothing changes (unless ``copy=True``).
    """
    if not kwargs and len(args) == 1 and type(self) is Tensor:
        # the common no-ops, decided without parsing: to(its own dtype), to("cpu") on cpu
        a = args[0]
        if type(a) is _dt.dtype:
            if self._data.dtype is a.np:
                return self
        elif type(a) is str and a == "cpu" and type(self._data) is np.ndarray:
            return self
    dev, dtype, _non_blocking, copy, memory_format = _parse_to(args, kwargs)
    t = self
    if dev is not None:
        dev = to_device(dev)
        if dev != self.device:
            t = _to_device(t, dev)
    if dtype is not None:
        dtype = _dt.to_dtype(dtype)
        if t._data.dtype is not dtype.np:
            t = _cast(t, dtype)
    if memory_format is not None:
        from ..layout import apply_memory_format

        t = apply_memory_format(t, memory_format)
    if copy and t is self:
        t = self.clone()
    return t


Tensor.to = to


def _caster(d):
    def cast(self, memory_format=None):
        return to(self, d)

    cast.__name__ = d.name
    return cast


# Tensor.float() ... Tensor.cdouble(): method name -> dtype (the sparse tensors reuse the table)
CAST_METHODS = (
    ("float", _dt.float32),
    ("double", _dt.float64),
    ("half", _dt.float16),
    ("bfloat16", _dt.bfloat16),
    ("long", _dt.int64),
    ("int", _dt.int32),
    ("short", _dt.int16),
    ("char", _dt.int8),
    ("byte", _dt.uint8),
    ("bool", _dt.bool_),
    ("cfloat", _dt.complex64),
    ("cdouble", _dt.complex128),
)
for _name, _d in CAST_METHODS:
    setattr(Tensor, _name, _caster(_d))


def cpu(self, memory_format=None):
    if type(self) is Tensor and type(self._data) is np.ndarray:
        return self  # (already on cpu: what to() finds)
    return to(self, "cpu")


def cuda(self, device=None, non_blocking: bool = False, memory_format=None):
    if device is None:
        device = "cuda"
    elif isinstance(device, int):
        # a plain int reads as torch's accelerator index (its error when there is none)
        device = _device(device) if type(device) is int else _device("cuda", device)
    return to(self, device)


def type_as(self, other):
    return to(self, other.dtype)


Tensor.cpu = cpu
Tensor.cuda = cuda
Tensor.type_as = type_as


@op(names=keep)
def clone(xp, input, *, memory_format=None):
    """A copy with its own storage, laid out like the input (``preserve_format``, the default:
    a channels_last input stays channels_last) or in ``memory_format``."""
    return format_array(xp, input, preserve_format if memory_format is None else memory_format)


@clone.vjp
def _(grad):
    return grad


# ---------------------------------------------------------------------- copy_, resize_
@op(names=unify_inputs, method=False, name="_copy_")
def _copy_from(xp, input, src):
    """``src`` broadcast to ``input``'s shape, in ``input``'s dtype: the value ``copy_`` writes."""
    ss = getattr(src, "shape", ())
    if ss != input.shape:
        try:
            shape = np.broadcast_shapes(input.shape, ss)
        except ValueError:
            raise broadcast_error([input.shape, ss]) from None
        if shape != input.shape:
            raise RuntimeError(
                f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
    src = xp.asarray(src)
    if src.dtype.kind == "c" and input.dtype.kind != "c":
        if input.dtype.kind == "b":
            src = src != 0  # torch: a nonzero real or imaginary part is True
        else:
            _warn_complex_to_real()
            src = src.real
    return xp.broadcast_to(src, input.shape).astype(input.dtype)


@_copy_from.vjp
def _(grad, needs):
    # self's old value gets zeros, as torch's CopyBackwards sends (its history still runs);
    # the engine sums src's broadcast dims away and casts to its dtype
    return (grad.new_zeros(grad.shape) if needs[0] else None), grad


_copy_from.op.backward_name = "torch::autograd::CopyBackwards"  # printed CopyBackwards


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast to self's dtype) into self; names unify (spec 3)."""
    if isinstance(src, Tensor):
        if src.device != self.device:
            src = src.to(self.device)
    elif not isinstance(src, (bool, int, float, complex)):
        # torch's parser names the argument 'other' (its keyword is still src)
        raise TypeError(
            f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}"
        )
    return apply_inplace(_copy_from.op, self, (src,), {})


def resize_(self: Tensor, *size, memory_format=None) -> Tensor:
    """Resize in place, keeping the leading elements (new ones are zero). A tensor with named
    dims only allows resizes that keep its shape."""
    if not size:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    given = size
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if not all(type(s) is int for s in size):  # torch's parser (int() would truncate 2.5)
        size = int_varargs("resize_", "size", given)
    check_resize(self, size)
    if _INFERENCE_USED[0]:
        check_inference_inplace(self)
    ex = self._extra  # a view made in no_grad of a tensor requiring grad requires grad in torch
    if self.requires_grad or (ex and "ngr" in ex):
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in size):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(size)}: {list(size)}"
        )
    a = self._data
    fmt = memory_format
    if fmt is not None:
        if fmt is preserve_format:
            raise RuntimeError("Unsupported memory formatPreserve")
        if fmt.ndim is not None and len(size) != fmt.ndim:
            raise RuntimeError(f"required rank {fmt.ndim} tensor to use {fmt.name} format")
    # a new shape is laid out row-major (or as memory_format); the same shape keeps its strides
    # unless memory_format asks for others
    if size != a.shape or (fmt is not None and not _is_contiguous(self, fmt)):
        xp = module_for(self.device)
        buf = xp.zeros(math.prod(size), dtype=a.dtype)
        n = min(buf.size, a.size)
        # the leading elements of the storage, in memory order (torch reuses the storage)
        buf[:n] = a.ravel(order="K")[:n]
        self._data = new_array(xp, size, a.dtype, lambda xp_, s_, d_: buf.reshape(s_), fmt)
        self._names = None
        self._ver[0] += 1
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """Resize to ``the_template``'s shape; its names propagate (the out= rule, spec 3)."""
    resize_(self, the_template._data.shape)
    self._names = check_out_names(self, the_template._names, "resize_as_")
    return self


@op(names=keep, method=False, name="_fill")
def _fill(xp, input, value):
    """``value`` (a number or 0-dim tensor) in ``input``'s shape and dtype: what fill_ writes."""
    if getattr(value, "ndim", 0):
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value.ndim} dimensions."
        )
    return xp.full(input.shape, _dt.fill_scalar(value, input.dtype), dtype=input.dtype)


@_fill.vjp
def _(grad, needs):
    return (grad.new_zeros(grad.shape) if needs[0] else None), (grad.sum() if needs[1] else None)


# torch's fill_ overloads: a number (FillBackward2) or a 0-dim tensor (FillBackward3)
_fill.op.inplace_backward_name = lambda args: (
    "FillBackward3" if isinstance(args[0], Tensor) else "FillBackward2"
)


def _fill_target(a):
    """A writable alias of numpy array ``a`` (read-only as a broadcast view) over its root's
    memory, or torch's overlap error where the memory itself is read-only."""
    from ..storage import _root

    root = _root(a)
    if root.flags.writeable and root.flags.c_contiguous:
        off = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return np.ndarray(a.shape, a.dtype, buffer=root, offset=off, strides=a.strides)
    _check_writable(a)
    return a


def fill_(self: Tensor, value) -> Tensor:
    """Fill with ``value`` in place; names are unchanged (spec 2: no name semantics)."""
    if _INFERENCE_USED[0]:
        check_inference_inplace(self)
    if _VMAP_SLICES:
        _vmap_refuse_inplace("fill_", self, (value,))
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        if value.device != self.device:
            value = value.to(self.device)
    elif not isinstance(value, (bool, int, float, complex)):
        raise invalid_arguments("fill_", (value,), {}, ("(Tensor value)", "(Number value)"))
    ex = self._extra  # a view made in no_grad: apply_inplace raises torch's error
    if not (_grad_state.enabled and (self.requires_grad or _rg(value) or (ex and "ngr" in ex))):
        a = self._data
        if getattr(a.flags, "writeable", True) is False:
            a = _fill_target(a)  # an expanded tensor: torch fills its memory (one value for all)
        a[...] = value._data if isinstance(value, Tensor) else _dt.fill_scalar(value, a.dtype)
        self._ver[0] += 1
        return self
    return apply_inplace(_fill.op, self, (value,), {})


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place; names are unchanged."""
    fn = self._grad_fn
    fill_(self, 0)
    if self._grad_fn is not fn:  # recorded: torch's node is ZeroBackward0, not FillBackward
        self._grad_fn.bname = "ZeroBackward0"
    return self


def _rg(v) -> bool:
    return isinstance(v, Tensor) and v.requires_grad


Tensor.copy_ = copy_
Tensor.fill_ = fill_
Tensor.zero_ = zero_
Tensor.resize_ = resize_
Tensor.resize_as_ = resize_as_
