"""Quantized tensors (torch's affine quantization): integers plus a scale and a zero point.

A quantized tensor is a ``QuantizedTensor``, a Tensor subclass that keeps its integer values and
its quantization parameters in slots of its own. Its base ``_data`` slot is a property that
raises, so every dense op given a quantized tensor fails loudly instead of computing on integers;
the dense Tensor's hot path pays nothing. What works on it: shape/dtype/device accessors,
``int_repr``, ``dequantize``, the ``q_*`` accessors, ``qscheme``, ``clone``/``detach``, ``==`` and
``equal``, repr, pickling, and the quantized ops here (``quantized_batch_norm``,
``quantized_max_pool1d/2d/3d``).

Arithmetic follows torch's CPU kernels bit for bit: quantize is
``round_half_even(x * (1/scale) + zero_point)`` in float32, clamped to the dtype's range (see
_quantize_array for where torch rounds the product-add once or twice); dequantize is
``(q - zero_point) * scale`` (float32 per tensor, float64 per channel, rounded to float32).
"""

from __future__ import annotations

import numpy as np

from . import dtype as _dt
from .arg_errors import invalid_arguments, must_be_tensor
from .device import array_module, device_of
from .dtype import QUANTIZED_TYPES, qint8, qint32, quint2x4, quint4x2, quint8

# the fake quantization ops are dense ops (registered there); exported with this family
from .ops.fake_quant import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine
from .registry import NON_STRIDED, NonStridedError, caller_op_name
from .runtime import _warn_once
from .tensor import Size, Tensor, _new, _size, _wrap
from .torch_function import _disabled_torch_function_impl

__all__ = [
    "dequantize",
    "fake_quantize_per_channel_affine",
    "fake_quantize_per_tensor_affine",
    "int_repr",
    "per_channel_affine",
    "per_channel_affine_float_qparams",
    "per_channel_symmetric",
    "per_tensor_affine",
    "per_tensor_symmetric",
    "q_per_channel_axis",
    "q_per_channel_scales",
    "q_per_channel_zero_points",
    "q_scale",
    "q_zero_point",
    "qint8",
    "qint32",
    "qscheme",
    "quantize_per_channel",
    "quantize_per_tensor",
    "quantize_per_tensor_dynamic",
    "quantized_batch_norm",
    "quantized_max_pool1d",
    "quantized_max_pool2d",
    "quantized_max_pool3d",
    "quint2x4",
    "quint4x2",
    "quint8",
]


class qscheme:
    """A quantization scheme (``ember.per_tensor_affine`` ...); compares by identity."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return "ember." + self.name

    def __reduce__(self):
        return (_qscheme_by_name, (self.name,))


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
_QSCHEMES = {
    q.name: q
    for q in (
        per_tensor_affine,
        per_channel_affine,
        per_tensor_symmetric,
        per_channel_symmetric,
        per_channel_affine_float_qparams,
    )
}


def _qscheme_by_name(name: str) -> qscheme:
    return _QSCHEMES[name]


_PER_TENSOR_ONLY = (
    "Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.  (Could this "
    "error message be improved?  If so, please report an enhancement request to PyTorch.)"
)
_PER_CHANNEL_ONLY = (
    "Expected quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
    "kPerChannelAffineFloatQParams to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)


def _no_dense(self):
    # NonStridedError: the registry runs a handler of NON_STRIDED for the op, if there is one
    raise NonStridedError(
        f"{caller_op_name()}: ember does not support quantized tensors ({self._qdtype!r}) here; "
        "call .dequantize() first"
    )


class QuantizedTensor(Tensor):
    """A quantized tensor: integer values ``_q`` (one per element, also for the packed sub-byte
    dtypes) with a per-tensor or per-channel scale and zero point."""

    __slots__ = ("_axis", "_q", "_qdtype", "_qscheme", "_scale", "_zero_point")

    # dense ops read `_data`: for a quantized tensor that is an error, never the integers
    _data = property(_no_dense)
    # ops on it give plain Tensors (never dispatched: a cached per-type check)
    __torch_function__ = _disabled_torch_function_impl

    # ------------------------------------------------------------------ what a tensor is
    @property
    def dtype(self) -> _dt.dtype:
        return self._qdtype

    @property
    def device(self):
        return device_of(self._q)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return type(self._q) is np.ndarray

    @property
    def is_quantized(self) -> bool:
        return True

    @property
    def shape(self) -> Size:
        return _size(self._q.shape)

    def size(self, dim=None):
        if dim is None:
            return _size(self._q.shape)
        return self._q.shape[self._dim(dim)]

    def dim(self) -> int:
        return self._q.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._q.ndim

    def numel(self) -> int:
        return self._q.size

    nelement = numel

    def __len__(self) -> int:
        if not self._q.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._q.shape[0]

    def element_size(self) -> int:
        return self._qdtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._qdtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._q.size * self._qdtype.itemsize

    def stride(self, dim=None):
        q = self._q
        if q.size:
            st = tuple(s // q.itemsize for s in q.strides)
        else:  # numpy's strides of an empty array are arbitrary: torch's contiguous ones
            st, n = [], 1
            for size in reversed(q.shape):
                st.append(n)
                n *= max(size, 1)
            st = tuple(reversed(st))
        return st if dim is None else st[self._dim(dim)]

    def storage_offset(self) -> int:
        return 0

    def data_ptr(self) -> int:
        a = self._q
        return a.__array_interface__["data"][0] if type(a) is np.ndarray else a.data.ptr

    def is_contiguous(self, memory_format=None) -> bool:
        return bool(self._q.flags.c_contiguous)

    def contiguous(self, memory_format=None) -> QuantizedTensor:
        if self._q.flags.c_contiguous:
            return self
        return self._like(array_module(self._q).ascontiguousarray(self._q))

    # ------------------------------------------------------------------ views (per tensor)
    def _like(self, q) -> QuantizedTensor:
        """A quantized tensor over integer array ``q`` with this tensor's parameters."""
        return _make(q, self._qdtype, self._qscheme, self._scale, self._zero_point, self._axis)

    def _on_ints(self, name: str, fn):
        """Run dense op ``fn`` on the integers (a view op: it moves values, never changes them)
        and wrap the result with the same parameters. Per-channel tensors would need their
        axis moved along: not supported."""
        if self._qscheme is not per_tensor_affine:
            raise RuntimeError(
                f"{name}: ember supports this on per-tensor quantized tensors only; call "
                ".dequantize() first"
            )
        return self._like(fn(_wrap(self._q))._data)

    def __getitem__(self, index):
        if isinstance(index, QuantizedTensor):
            index = index.dequantize()
        return self._on_ints("__getitem__", lambda t: t[index])

    def reshape(self, *shape) -> QuantizedTensor:
        return self._on_ints("reshape", lambda t: t.reshape(*shape))

    def view(self, *shape) -> QuantizedTensor:
        return self._on_ints("view", lambda t: t.view(*shape))

    def flatten(self, start_dim=0, end_dim=-1) -> QuantizedTensor:
        return self._on_ints("flatten", lambda t: t.flatten(start_dim, end_dim))

    def permute(self, *dims) -> QuantizedTensor:
        return self._on_ints("permute", lambda t: t.permute(*dims))

    def transpose(self, dim0, dim1) -> QuantizedTensor:
        return self._on_ints("transpose", lambda t: t.transpose(dim0, dim1))

    def t(self) -> QuantizedTensor:
        return self._on_ints("t", lambda t: t.t())

    def squeeze(self, *dim) -> QuantizedTensor:
        return self._on_ints("squeeze", lambda t: t.squeeze(*dim))

    def unsqueeze(self, dim) -> QuantizedTensor:
        return self._on_ints("unsqueeze", lambda t: t.unsqueeze(dim))

    @property
    def names(self) -> tuple:
        return (None,) * self._q.ndim

    def _dim(self, dim) -> int:
        from .dims import normalize_dim

        return normalize_dim(self, dim, self._q.ndim)

    def is_floating_point(self) -> bool:
        return False

    def is_complex(self) -> bool:
        return False

    def is_signed(self) -> bool:
        return self._qdtype.is_signed  # raises, like torch

    def requires_grad_(self, requires_grad: bool = True) -> QuantizedTensor:
        if requires_grad:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        return self

    # ------------------------------------------------------------------ quantization parameters
    def qscheme(self) -> qscheme:
        """The quantization scheme (``ember.per_tensor_affine`` or ``per_channel_affine``)."""
        return self._qscheme

    def q_scale(self) -> float:
        """The scale of a per-tensor quantized tensor (a Python float)."""
        if self._qscheme is not per_tensor_affine:
            raise RuntimeError(_PER_TENSOR_ONLY)
        return self._scale

    def q_zero_point(self) -> int:
        """The zero point of a per-tensor quantized tensor (a Python int)."""
        if self._qscheme is not per_tensor_affine:
            raise RuntimeError(_PER_TENSOR_ONLY)
        return self._zero_point

    def q_per_channel_scales(self) -> Tensor:
        """The scales of a per-channel quantized tensor (float64; float32 with float zero
        points)."""
        if self._qscheme is per_tensor_affine:
            raise RuntimeError(_PER_CHANNEL_ONLY)
        return _wrap(self._scale.copy())

    def q_per_channel_zero_points(self) -> Tensor:
        """The zero points of a per-channel quantized tensor (int64, or float32 when given as
        floats)."""
        if self._qscheme is per_tensor_affine:
            raise RuntimeError(_PER_CHANNEL_ONLY)
        return _wrap(self._zero_point.copy())

    def q_per_channel_axis(self) -> int:
        """The channel axis of a per-channel quantized tensor."""
        if self._qscheme is per_tensor_affine:
            raise RuntimeError(_PER_CHANNEL_ONLY)
        return self._axis

    def int_repr(self) -> Tensor:
        """The integer values as a dense tensor (uint8 for quint8, int8 for qint8, int32 for
        qint32); the packed bytes (flat) for quint4x2 / quint2x4."""
        d = self._qdtype
        q = self._q
        if d.bits >= 8:
            return _wrap(q.copy())
        xp = array_module(q)
        per = 8 // d.bits  # values per byte, the first in the low bits
        flat = q.reshape(-1).astype(np.uint8)
        n = -(-flat.size // per)
        flat = xp.concatenate([flat, xp.zeros(n * per - flat.size, dtype=np.uint8)])
        out = xp.zeros(n, dtype=np.uint8)
        for k in range(per):
            out |= flat[k::per] << np.uint8(k * d.bits)
        return _wrap(out)

    def dequantize(self) -> Tensor:
        """The float32 values ``(q - zero_point) * scale``."""
        return _wrap(_dequantize_array(self))

    # ------------------------------------------------------------------ copies and conversions
    def clone(self, *, memory_format=None) -> QuantizedTensor:
        return self._like(self._q.copy())  # contiguous, as torch clones quantized tensors

    def detach(self) -> QuantizedTensor:
        return _make(
            self._q, self._qdtype, self._qscheme, self._scale, self._zero_point, self._axis
        )

    def cpu(self, memory_format=None) -> QuantizedTensor:
        if type(self._q) is np.ndarray:
            return self
        host = lambda a: a.get() if hasattr(a, "get") else a  # cupy -> numpy
        return _make(
            self._q.get(),
            self._qdtype,
            self._qscheme,
            host(self._scale),
            host(self._zero_point),
            self._axis,
        )

    def to(self, *args, **kwargs) -> QuantizedTensor:
        """Only a no-op ``to`` (same device, no dtype) is supported on quantized tensors."""
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, _dt.dtype) and a is not self._qdtype:
                raise RuntimeError(
                    "Creation of quantized tensor requires quantized dtype like ember.quint8"
                )
            if isinstance(a, (str, Tensor)) or type(a).__name__ == "device":
                dev = a.device if isinstance(a, Tensor) else a
                if str(dev) not in ("cpu", str(self.device)):
                    raise RuntimeError(
                        "to: ember does not move quantized tensors between devices; "
                        "dequantize first"
                    )
        return self

    def numpy(self, *, force: bool = False):
        raise TypeError(f"Got unsupported ScalarType {self._qdtype.scalar_type}")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Got unsupported ScalarType {self._qdtype.scalar_type}")

    def tolist(self):
        raise RuntimeError("load_scalar: invalid type")

    def item(self):
        n = self._q.size
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        return float(_dequantize_array(self).reshape(()).item())

    def __bool__(self) -> bool:
        n = self._q.size
        if n != 1:
            raise RuntimeError(
                "Boolean value of Tensor with "
                f"{'no values' if n == 0 else 'more than one value'} is ambiguous"
            )
        return bool(self.item())

    def __format__(self, spec: str) -> str:
        if self._q.ndim == 0:
            return format(self.item(), spec)
        return format(str(self), spec)

    # ------------------------------------------------------------------ comparison
    def __eq__(self, other):
        """Elementwise ``==`` of the dequantized values (as torch compares quantized tensors)."""
        o = other.dequantize() if isinstance(other, QuantizedTensor) else other
        return self.dequantize() == o

    __hash__ = Tensor.__hash__

    def equal(self, other) -> bool:
        """True when ``other`` is quantized alike (dtype, scheme, parameters) with equal
        integer values."""
        return equal(self, other)

    # ------------------------------------------------------------------ printing and pickling
    def __repr__(self, *, tensor_contents=None) -> str:
        return _repr(self)

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        # arrays travel as dense cpu tensors (ember.save stores them as arrays, and
        # ember.load(weights_only=True) allows _rebuild)
        def cpu(a):
            if isinstance(a, (int, float)):
                return a
            return _wrap(a if type(a) is np.ndarray else a.get())

        return (
            _rebuild,
            (
                cpu(self._q),
                self._qdtype.name,
                self._qscheme.name,
                cpu(self._scale),
                cpu(self._zero_point),
                self._axis,
            ),
        )

    def __deepcopy__(self, memo):
        t = self.clone()
        memo[id(self)] = t
        return t


def _make(q, qdtype, scheme, scale, zero_point, axis) -> QuantizedTensor:
    _warn_once(
        "quantized",
        "torch.quantize_per_tensor, torch.quantize_per_channel and other quantized tensor "
        "creation functions that produce tensors with dtype torch.quint8, torch.qint8, and "
        "torch.qint32 are deprecated and will be removed in a future PyTorch release. Please "
        "see https://github.com/pytorch/pytorch/issues/184982 for more information.",
    )
    t = _new(QuantizedTensor)
    t._q = q
    t._qdtype = qdtype
    t._qscheme = scheme
    t._scale = scale
    t._zero_point = zero_point
    t._axis = axis
    t.requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._names = None
    t._ver = [0]
    t._extra = None
    return t


def _rebuild(q, dtype_name, scheme_name, scale, zero_point, axis) -> QuantizedTensor:
    """Unpickle a quantized tensor (see QuantizedTensor.__reduce_ex__)."""

    def arr(a):
        return a._data if isinstance(a, Tensor) else a

    return _make(
        arr(q), _dt._NAMES[dtype_name], _QSCHEMES[scheme_name], arr(scale), arr(zero_point), axis
    )


def equal(input: Tensor, other: Tensor) -> bool:
    """torch.equal for quantized tensors: same dtype, scheme, parameters and integer values."""
    if not (isinstance(input, QuantizedTensor) and isinstance(other, QuantizedTensor)):
        return False
    if input._qdtype is not other._qdtype or input._qscheme is not other._qscheme:
        return False
    if input._q.shape != other._q.shape:
        return False
    if input._qscheme is per_tensor_affine:
        if input._scale != other._scale or input._zero_point != other._zero_point:
            return False
    elif (
        input._axis != other._axis
        or not np.array_equal(input._scale, other._scale)
        or not np.array_equal(input._zero_point, other._zero_point)
    ):
        return False
    return bool((input._q == other._q).all())


def _repr(t: QuantizedTensor) -> str:
    from .device import get_default_device
    from .printing import _add_suffixes, _body

    indent = len("tensor(")
    q = t._q
    suffixes = []
    dev = t.device
    if dev != get_default_device():
        suffixes.append(f"device='{dev}'")
    body = "[]" if q.size == 0 else _body(_wrap(_dequantize_array(t)), indent)
    suffixes.append(f"size={tuple(q.shape)}")
    suffixes.append(f"dtype={t._qdtype!r}")
    suffixes.append(f"quantization_scheme={t._qscheme!r}")
    if t._qscheme is per_tensor_affine:
        suffixes.append(f"scale={t._scale!r}")
        suffixes.append(f"zero_point={t._zero_point!r}")
    else:
        suffixes.append(f"scale={_wrap(t._scale)!r}")
        suffixes.append(f"zero_point={_wrap(t._zero_point)!r}")
        suffixes.append(f"axis={t._axis}")
    return _add_suffixes("tensor(" + body, suffixes, indent)


# ---------------------------------------------------------------------- kernels
def _storage_range(d) -> tuple:
    """The bounds torch checks zero points against (the storage type's, for sub-byte types)."""
    return (0, 255) if d.bits < 8 else (d.qmin, d.qmax)


def _quantize_array(xp, x, scale, zero_point, d, mode: str):
    """round_half_even(x * (1/scale) + zero_point) clamped to d's range, as d's storage type.

    ``scale``/``zero_point``: Python numbers, or float64/int64 arrays broadcasting against ``x``.
    ``1/scale`` is float32. Where torch rounds differs by kernel, which rounding ties show:
    ``"fma"``: the product-add rounds once to float32 (its per-tensor 8-bit kernel, a fused
    multiply-add; x and 1/scale are float32, so their product is exact in float64); ``"sum"``:
    product, then sum, each rounded to float32, then rounded to an integer (qint32, per channel);
    ``"int"``: the product is rounded to an integer before the zero point is added (sub-byte).
    """
    s32 = xp.asarray(scale, dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        inv = np.float32(1.0) / s32
        if mode == "fma":
            v = x.astype(np.float64) * inv.astype(np.float64)
            v = xp.rint((v + xp.asarray(zero_point, dtype=np.float64)).astype(np.float32))
        elif mode == "sum":
            v = xp.rint(x * inv + xp.asarray(zero_point, dtype=np.float32))
        else:
            v = xp.rint(x * inv) + xp.asarray(zero_point, dtype=np.float32)
        v = xp.clip(v, d.qmin, d.qmax)
        # NaN (an inf scale): the value is undefined in torch too; use qmin
        v = xp.where(xp.isnan(v), d.qmin, v)
    return v.astype(d.storage, order="C")  # torch's result is contiguous


def _dequantize_array(t: QuantizedTensor):
    """(q - zero_point) * scale as float32: per tensor in float32 (scale rounded to float32);
    per channel in float64 with the float64 scales, then rounded (torch's two kernels)."""
    q = t._q
    xp = array_module(q)
    with np.errstate(invalid="ignore", over="ignore"):
        if t._qscheme is per_tensor_affine:
            zp = t._zero_point
            if q.dtype == np.int32 and zp:
                diff = (q.astype(np.int64) - zp).astype(np.float32)
            else:
                diff = q.astype(np.float32) - np.float32(zp)
            return diff * np.float32(t._scale)
        shape = [1] * q.ndim
        if q.ndim:
            shape[t._axis] = -1
        s = xp.asarray(t._scale).reshape(shape)
        zp = xp.asarray(t._zero_point).reshape(shape)
        if zp.dtype.kind == "f":  # float zero points: all in float32
            return (q.astype(np.float32) - zp) * s.astype(np.float32)
        return ((q.astype(np.int64) - zp) * s).astype(np.float32)


def _check_qdtype(dtype):
    d = _dt.to_dtype(dtype) if not isinstance(dtype, _dt.dtype) else dtype
    if d not in QUANTIZED_TYPES:
        raise RuntimeError(f"ScalarType {d.scalar_type} is not supported in new_qtensor.")
    return d


def _check_float_input(t, what="Quantize only works on Float Tensor, got "):
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    if isinstance(t, QuantizedTensor) or t.dtype is not _dt.float32:
        raise RuntimeError(what + t.dtype.scalar_type)


def _scalar_of(v, kind):
    if isinstance(v, Tensor):
        return kind(v.item())
    return v


def quantize_per_tensor(input, scale, zero_point, dtype) -> QuantizedTensor:
    """Quantize a float32 tensor with one scale and zero point (numbers or one-element tensors).

    Also the list form: ``quantize_per_tensor([t1, t2], scales, zero_points, dtype)`` with
    tensors of scales and zero points, one per input tensor; returns a tuple.
    """
    if isinstance(input, (list, tuple)):
        if not isinstance(scale, Tensor) or not isinstance(zero_point, Tensor):
            raise TypeError(
                "quantize_per_tensor(): with a list of tensors, 'scale' and 'zero_point' must "
                "be Tensors (one value per tensor)"
            )
        out = []
        for i, t in enumerate(input):
            for name, v in (("scales", scale), ("zero_points", zero_point)):
                if i >= v.numel():
                    raise IndexError(
                        f"select(): index {i} out of range for tensor of size "
                        f"[{v.numel()}] at dimension 0"
                    )
            s = float(scale.reshape(-1)[i].item())
            z = int(zero_point.reshape(-1)[i].item())
            out.append(quantize_per_tensor(t, s, z, dtype))
        return tuple(out)
    if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
        if not (isinstance(scale, Tensor) and isinstance(zero_point, Tensor)):
            raise TypeError(
                "quantize_per_tensor(): 'scale' and 'zero_point' must both be Tensors or both "
                "be numbers"
            )
        scale = float(scale.item())
        zero_point = int(zero_point.item())
    if isinstance(zero_point, float) or not isinstance(zero_point, (int, np.integer)):
        raise TypeError(
            f"quantize_per_tensor(): argument 'zero_point' must be int, not "
            f"{type(zero_point).__name__}"
        )
    if not isinstance(scale, (int, float, np.floating, np.integer)) or isinstance(scale, bool):
        raise TypeError(
            f"quantize_per_tensor(): argument 'scale' must be float, not {type(scale).__name__}"
        )
    _check_float_input(input)
    d = _check_qdtype(dtype)
    zero_point = int(zero_point)
    lo, hi = _storage_range(d)
    if zero_point > hi:
        raise RuntimeError(
            f"quantize_tensor_per_tensor_affine zero_point {zero_point} is above upper bound."
        )
    if zero_point < lo:
        raise RuntimeError(
            f"quantize_tensor_per_tensor_affine zero_point {zero_point} is below lower bound."
        )
    x = input.detach()._data
    mode = "fma" if d.bits == 8 else ("sum" if d.bits == 32 else "int")
    q = _quantize_array(array_module(x), x, float(scale), zero_point, d, mode)
    return _make(q, d, per_tensor_affine, float(scale), zero_point, None)


def quantize_per_channel(input, scales, zero_points, axis, dtype) -> QuantizedTensor:
    """Quantize a float32 tensor with one scale and zero point per slice along ``axis``."""
    names = ("input", "scales", "zero_points")
    err = must_be_tensor("quantize_per_channel", names, (input, scales, zero_points))
    if err is not None:
        raise err
    d = _check_qdtype(dtype)
    if d.bits < 8:
        raise NotImplementedError(
            f"\"quantize_tensor_per_channel_affine\" not implemented for '{d.scalar_type}'"
        )
    if scales.dim() != 1:
        raise RuntimeError("scale tensor must have dimension 1")
    if zero_points.dim() != 1:
        raise RuntimeError("zero_points tensor must have dimension 1")
    if scales.numel() != zero_points.numel():
        raise RuntimeError("number of elements in scales and zero_points must match")
    ndim = input.dim()
    axis = int(axis)
    if not 0 <= axis < ndim:
        raise RuntimeError(
            "Channel axis out of range in per channel affine quantization. Got: "
            f"{axis}Expected: [0, {ndim})"
        )
    c = input.shape[axis]
    if scales.numel() != c:
        raise RuntimeError(
            f"length of scales must equal to channel, expected {c} got, {scales.numel()}"
        )
    _check_float_input(input, "quantize_tensor_per_channel_affine expects a Float Tensor, got ")
    x = input.detach()._data
    xp = array_module(x)
    s = scales.detach()._data.astype(np.float64)
    z = zero_points.detach()._data
    # float zero points stay floats (float32, added before rounding, never bounds-checked);
    # integers become int64, like torch
    z = z.astype(np.int64) if z.dtype.kind != "f" else z.astype(np.float32)
    if z.size and z.dtype.kind != "f":
        lo, hi = _storage_range(d)
        if int(z.max()) > hi:
            raise RuntimeError(
                f"quantize_tensor_per_channel_affine zero_point {int(z.max())} is above upper "
                "bound."
            )
        if int(z.min()) < lo:
            raise RuntimeError(
                f"quantize_tensor_per_channel_affine zero_point {int(z.min())} is below lower "
                "bound."
            )
    shape = [1] * ndim
    shape[axis] = -1
    q = _quantize_array(xp, x, s.reshape(shape), z.reshape(shape), d, "sum")
    if z.dtype.kind == "f":  # torch's float-qparams scheme keeps float32 scales
        return _make(q, d, per_channel_affine_float_qparams, s.astype(np.float32), z.copy(), axis)
    return _make(q, d, per_channel_affine, s.copy(), z.copy(), axis)


def _choose_qparams(lo: float, hi: float, qmin: int, qmax: int) -> tuple:
    """Scale and zero point mapping [lo, hi] (widened to hold 0) onto [qmin, qmax]."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / (qmax - qmin)
    if np.float32(scale) == 0 or np.isinf(np.float32(1.0) / np.float32(scale)):
        scale = 0.1
    f32 = np.float32
    small = f32(6.1e-5)
    if scale < small:  # very small scales lose precision: widen the range instead (in float32)
        org = f32(scale)
        scale = float(small)
        if lo == 0.0:
            hi = float(small * f32(qmax - qmin))
        elif hi == 0.0:
            lo = float(-small * f32(qmax - qmin))
        else:
            amp = small / org
            lo, hi = float(f32(lo) * amp), float(f32(hi) * amp)
    zp_min = qmin - lo / scale
    zp_max = qmax - hi / scale
    err_min = abs(qmin) - abs(lo / scale)
    err_max = abs(qmax) - abs(hi / scale)
    zp = zp_min if err_min < err_max else zp_max
    if zp < qmin:
        zp = qmin
    elif zp > qmax:
        zp = qmax
    else:
        zp = int(np.rint(zp))
    return scale, int(zp)


def quantize_per_tensor_dynamic(input, dtype, reduce_range: bool) -> QuantizedTensor:
    """Quantize with a scale and zero point chosen from the input's range (quint8 / qint8)."""
    d = _dt.to_dtype(dtype) if not isinstance(dtype, _dt.dtype) else dtype
    if d not in (quint8, qint8):
        raise RuntimeError(f"dtype {d.scalar_type}not supported")
    if input.numel() == 0:
        raise RuntimeError(
            "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument."
        )
    x = input.detach()._data
    qmin, qmax = d.qmin, d.qmax
    if reduce_range:
        qmin, qmax = qmin // 2 if qmin >= 0 else -((-qmin) // 2), qmax // 2
    scale, zp = _choose_qparams(float(x.min()), float(x.max()), qmin, qmax)
    return quantize_per_tensor(input, scale, zp, d)


def dequantize(tensor):
    """The float32 values of a quantized tensor (a dense tensor is returned as is); a list of
    tensors gives a tuple."""
    if isinstance(tensor, (list, tuple)):
        return tuple(dequantize(t) for t in tensor)
    try:
        return tensor.dequantize()
    except AttributeError:  # neither overload (Tensor, tuple of Tensors) takes it
        sigs = ("(Tensor input)", "(tuple of Tensors tensors)")
        raise invalid_arguments("dequantize", (tensor,), {}, sigs) from None


# ---------------------------------------------------------------------- quantized ops
def _not_quantized(name: str, t) -> None:
    if not isinstance(t, QuantizedTensor):
        dev = t.device.type.upper() if isinstance(t, Tensor) else "CPU"
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the '{dev}' backend. It takes a "
            "quantized tensor (see ember.quantize_per_tensor)."
        )


def quantized_batch_norm(
    input, weight, bias, mean, var, eps: float, output_scale: float, output_zero_point: int
) -> QuantizedTensor:
    """Batch norm (inference) of a per-tensor quantized (N, C, ...) tensor, requantized with
    ``output_scale`` / ``output_zero_point``."""
    _not_quantized("quantized_batch_norm", input)
    if input._qscheme is not per_tensor_affine:
        raise RuntimeError(_PER_TENSOR_ONLY)
    if weight is None:
        raise RuntimeError("Weight must be provided")
    if bias is None:
        raise RuntimeError("Bias must be provided")
    q = input._q
    if q.ndim < 2:
        raise RuntimeError(f"Expected 2D to 5D input, got {q.ndim}D input")
    c = q.shape[1]
    if weight.numel() != c:
        raise RuntimeError("Expect weight size to match C")
    if bias.numel() != c:
        raise RuntimeError("Expect weight size to match C")
    for t in (weight, bias, mean, var):
        if t.dtype is not _dt.float32:
            raise RuntimeError(f"expected scalar type Float but found {t.dtype.scalar_type}")
    xp = array_module(q)
    f32 = np.float32
    w, b, m, v = (t.detach()._data.reshape(-1) for t in (weight, bias, mean, var))
    inv_sigma = (1.0 / xp.sqrt(v + f32(eps)).astype(np.float64)).astype(f32)
    alpha = (inv_sigma * w).astype(np.float64) * (f32(input._scale) / float(output_scale))
    alpha = alpha.astype(f32)
    beta = ((b - m * inv_sigma * w) / f32(output_scale)).astype(f32)
    shape = (1, c) + (1,) * (q.ndim - 2)
    alpha, beta = alpha.reshape(shape), beta.reshape(shape)
    x = q.astype(f32) - f32(input._zero_point)
    y = (x.astype(np.float64) * alpha + beta).astype(f32)  # one rounding: a fused multiply-add
    d = input._qdtype
    out = xp.clip(xp.rint(y).astype(np.float64) + int(output_zero_point), d.qmin, d.qmax)
    return _make(
        out.astype(d.storage),
        d,
        per_tensor_affine,
        float(output_scale),
        int(output_zero_point),
        None,
    )


def _tuple(v, nd: int) -> tuple:
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(int(x) for x in v)
    return v * nd if len(v) == 1 else v


def _qmax_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode) -> QuantizedTensor:
    """Max pooling of a per-tensor quantized tensor over its last ``nd`` (2 or 3) dims, with
    torch's quantized checks and messages; the result keeps the input's parameters."""
    import ember

    _not_quantized(f"quantized_max_pool{nd}d", input)
    if input._qscheme is not per_tensor_affine:
        raise RuntimeError(_PER_TENSOR_ONLY)
    q = input._q
    if nd == 2 and q.ndim not in (3, 4):
        raise RuntimeError("Expecting the input tensor of rank 3 or 4.")
    if nd == 3 and q.ndim != 5:
        raise RuntimeError("Expecting the input tensor of rank 5.")
    ks = [kernel_size] * nd if isinstance(kernel_size, (int, np.integer)) else list(kernel_size)
    if nd == 2 and len(ks) not in (1, 2):
        raise RuntimeError(f"Expected 1d or 2d kernel size, got {len(ks)}")
    if nd == 3 and len(ks) != 3:
        raise RuntimeError(f"Expected 3d kernel size, got {len(ks)}")
    st = [stride] * nd if isinstance(stride, (int, np.integer)) else list(stride)
    if len(st) not in (0, nd):
        raise RuntimeError(f"Expected no strides or {nd}d strides, got{len(st)}")
    k = _tuple(ks, nd)
    s = tuple(st) if st else k
    p, d = _tuple(padding, nd), _tuple(dilation, nd)
    if min(k) <= 0:
        raise RuntimeError("kernel_size should be greater than zero.")
    if min(s) <= 0:
        raise RuntimeError("strides should be greater than zero.")
    if min(d) <= 0:
        raise RuntimeError("Expected dilation >= 1")
    if min(p) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    if any(k[i] // 2 < p[i] for i in range(nd)):
        raise RuntimeError("padding should be smaller than half of kernel_size.")
    outs = []
    for i in range(nd):
        size = q.shape[i - nd]
        n = size + 2 * p[i] - d[i] * (k[i] - 1) - 1
        o = (-(-n // s[i]) if ceil_mode else n // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= size + p[i]:
            o -= 1
        outs.append(o)
    if min(outs) <= 0:
        c = q.shape[-nd - 1]
        sep = "x" if nd == 2 else "t"  # torch writes (CtDxHxW) for 3-d pools
        ins = sep.join([str(c), "x".join(map(str, q.shape[-nd:]))])
        got = sep.join([str(c), "x".join(map(str, outs))])
        raise RuntimeError(
            f"Given input size: ({ins}). Calculated output size: ({got}). Output size is too small."
        )
    # max commutes with the monotone dequantize map: pool the integers with ember's dense pool
    pool = ember.max_pool2d if nd == 2 else ember.max_pool3d
    r = pool(_wrap(q), k, s, p, d, bool(ceil_mode))
    return _make(r._data, input._qdtype, per_tensor_affine, input._scale, input._zero_point, None)


def quantized_max_pool2d(
    input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False
) -> QuantizedTensor:
    """2-d max pooling of a per-tensor quantized (C, H, W) or (N, C, H, W) tensor; the result
    keeps the input's scale and zero point."""
    return _qmax_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def quantized_max_pool3d(
    input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False
) -> QuantizedTensor:
    """3-d max pooling of a per-tensor quantized (N, C, D, H, W) tensor; the result keeps the
    input's scale and zero point."""
    return _qmax_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode)


def quantized_max_pool1d(
    input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False
) -> QuantizedTensor:
    """1-d max pooling of a per-tensor quantized (C, L) or (N, C, L) tensor; the result keeps
    the input's scale and zero point."""
    import ember

    _not_quantized("quantized_max_pool1d", input)
    if input._qscheme is not per_tensor_affine:
        raise RuntimeError(_PER_TENSOR_ONLY)
    # ember's dense max_pool1d gives torch's argument checks and messages; it pools floats, and
    # float64 holds every quantized integer exactly
    q = input._q
    if q.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got {list(q.shape)}")
    r = ember.max_pool1d(
        _wrap(q.astype(np.float64)), kernel_size, stride, padding, dilation, bool(ceil_mode)
    )
    return _make(
        r._data.astype(q.dtype),
        input._qdtype,
        per_tensor_affine,
        input._scale,
        input._zero_point,
        None,
    )


# torch's function forms of the quantized accessors (a dense tensor raises torch's error)
def int_repr(input: Tensor) -> Tensor:
    """The integer values of a quantized tensor (see QuantizedTensor.int_repr)."""
    return input.int_repr()


def q_scale(input: Tensor) -> float:
    """The scale of a per-tensor quantized tensor."""
    return input.q_scale()


def q_zero_point(input: Tensor) -> int:
    """The zero point of a per-tensor quantized tensor."""
    return input.q_zero_point()


def q_per_channel_scales(input: Tensor) -> Tensor:
    """The scales of a per-channel quantized tensor."""
    return input.q_per_channel_scales()


def q_per_channel_zero_points(input: Tensor) -> Tensor:
    """The zero points of a per-channel quantized tensor."""
    return input.q_per_channel_zero_points()


def q_per_channel_axis(input: Tensor) -> int:
    """The channel axis of a per-channel quantized tensor."""
    return input.q_per_channel_axis()


def _equal_handler(input, other):
    # ember.equal with a quantized operand: dtype, scheme, parameters and integers must agree
    # (a quantized and a dense tensor are never equal, as in torch); without a quantized
    # operand (a sparse one) the dense op's error stands, as torch has no sparse equal
    qs = (isinstance(input, QuantizedTensor), isinstance(other, QuantizedTensor))
    if isinstance(input, Tensor) and isinstance(other, Tensor) and any(qs):
        return equal(input, other)
    return NotImplemented


NON_STRIDED["equal"] = _equal_handler
