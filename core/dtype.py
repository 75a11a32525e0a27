"""dtype objects mirroring torch's, and torch's type-promotion rules on top of numpy."""

from __future__ import annotations

import math

import numpy as np

try:  # bfloat16 storage comes from ml_dtypes (the package JAX uses)
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a hard dependency
    _BF16 = None

# category order used by promotion: bool < integer < floating < complex
BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


# the module name that dtype, Size and layout reprs show: "torch" while the drop-in alias is
# installed (`ember run`), so scripts that print or compare str(x.dtype) see torch's spelling
DISPLAY = ["ember"]


class dtype:
    """A tensor element type (``ember.float32`` ...). Compares by identity, like torch's."""

    __module__ = "ember"  # printed as ember.dtype, like torch.dtype
    __slots__ = ("_aliases", "category", "is_signed", "itemsize", "name", "np")

    def __init__(self, name: str, np_dtype, category: int, signed: bool):
        self.name = name
        self.np = np_dtype
        self.category = category
        self.itemsize = np_dtype.itemsize if np_dtype is not None else 0
        self.is_signed = signed

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    @property
    def is_complex(self) -> bool:
        return self.category == COMPLEX

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        """The complex type with this real part (float16 -> complex64: ember has no complex32)."""
        if self.category < FLOAT:
            raise RuntimeError(f"Unknown Complex ScalarType for {self.scalar_type}")
        return complex128 if self is float64 or self is complex128 else complex64

    def __repr__(self) -> str:
        return DISPLAY[0] + "." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    @property
    def scalar_type(self) -> str:
        """torch's C++ name of this type ('Float', 'Long', ...), as its error messages spell it."""
        return _SCALAR_TYPE[self.name]


# torch's C++ ScalarType names, used in its error messages ("result type Float can't be cast...")
_SCALAR_TYPE = {
    "bool": "Bool",
    "uint8": "Byte",
    "uint16": "UInt16",
    "uint32": "UInt32",
    "uint64": "UInt64",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "qint8": "QInt8",
    "quint8": "QUInt8",
    "qint32": "QInt32",
    "quint4x2": "QUInt4x2",
    "quint2x4": "QUInt2x4",
}


def _by_name(name: str) -> dtype:
    return _NAMES[name]


bool_ = dtype("bool", np.dtype(np.bool_), BOOL, False)
uint8 = dtype("uint8", np.dtype(np.uint8), INT, False)
uint16 = dtype("uint16", np.dtype(np.uint16), INT, False)
uint32 = dtype("uint32", np.dtype(np.uint32), INT, False)
uint64 = dtype("uint64", np.dtype(np.uint64), INT, False)
int8 = dtype("int8", np.dtype(np.int8), INT, True)
int16 = dtype("int16", np.dtype(np.int16), INT, True)
int32 = dtype("int32", np.dtype(np.int32), INT, True)
int64 = dtype("int64", np.dtype(np.int64), INT, True)
float16 = dtype("float16", np.dtype(np.float16), FLOAT, True)
bfloat16 = dtype("bfloat16", _BF16, FLOAT, True)
float32 = dtype("float32", np.dtype(np.float32), FLOAT, True)
float64 = dtype("float64", np.dtype(np.float64), FLOAT, True)
complex64 = dtype("complex64", np.dtype(np.complex64), COMPLEX, True)
complex128 = dtype("complex128", np.dtype(np.complex128), COMPLEX, True)

ALL = (
    bool_,
    uint8,
    uint16,
    uint32,
    uint64,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
)
_NAMES = {d.name: d for d in ALL}


class _QuantizedDtype(dtype):
    """A quantized element type (``ember.qint8`` ...): integers plus a scale and zero point that
    live on the tensor (core/quantized.py). Not in ALL / _FROM_NP: a numpy int8 array stays int8,
    and dense tensors never have these dtypes."""

    __slots__ = ("bits", "qmax", "qmin", "storage")

    def __init__(self, name: str, storage, qmin: int, qmax: int, bits: int):
        self.name = name
        self.category = QUANTIZED
        self.itemsize = storage.itemsize
        self.storage = storage  # the numpy type of the integer values, one per element
        self.qmin, self.qmax, self.bits = qmin, qmax, bits

    @property
    def is_signed(self) -> bool:
        raise RuntimeError("isSignedType not supported for quantized types")

    @property
    def np(self):
        # no dense array has this type: a factory or cast asking for it fails loudly here
        raise RuntimeError(
            f"{self!r} is a quantized dtype, which dense tensors cannot hold: create quantized "
            "tensors with ember.quantize_per_tensor / quantize_per_channel"
        )


QUANTIZED = 4  # category of the quantized dtypes: they promote with nothing but themselves
qint8 = _QuantizedDtype("qint8", np.dtype(np.int8), -128, 127, 8)
quint8 = _QuantizedDtype("quint8", np.dtype(np.uint8), 0, 255, 8)
qint32 = _QuantizedDtype("qint32", np.dtype(np.int32), -(2**31), 2**31 - 1, 32)
# torch bounds-checks zero points of the packed sub-byte types against uint8's range
quint4x2 = _QuantizedDtype("quint4x2", np.dtype(np.uint8), 0, 15, 4)
quint2x4 = _QuantizedDtype("quint2x4", np.dtype(np.uint8), 0, 3, 2)
QUANTIZED_TYPES = (qint8, quint8, qint32, quint4x2, quint2x4)
_NAMES.update({d.name: d for d in QUANTIZED_TYPES})
# torch's aliases, exported from the ember namespace as well
ALIASES = {
    "bool": bool_,
    "half": float16,
    "float": float32,
    "double": float64,
    "cfloat": complex64,
    "cdouble": complex128,
    "short": int16,
    "int": int32,
    "long": int64,
    "chalf": None,
}
_NAMES.update({k: v for k, v in ALIASES.items() if v is not None})

# numpy dtype -> ember dtype; keyed by numpy dtype objects (the hot path reads array.dtype)
# torch's C++ scalar-type names (Float, Long, ...), as its error messages and legacy tensor type
# strings ('torch.FloatTensor') spell them
SCALAR_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "uint16": "UInt16",
    "uint32": "UInt32",
    "uint64": "UInt64",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


# torch's C++ element type names, as its "expected the same dtype" messages spell them
C_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "uint16": "short unsigned int",
    "uint32": "unsigned int",
    "uint64": "long unsigned int",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


_SCALAR_C_NAMES = {"int64": "int64_t", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def check_real_scalar(npd, *scalars, half_as_float: bool = True) -> None:
    """torch's error for a complex Python scalar (alpha, beta, weight) that an op converts to a
    real tensor's type ``npd`` (a numpy dtype) instead of promoting: half types are named as
    the float32 they compute in (``half_as_float``) or as themselves."""
    if npd.kind == "c" or not any(isinstance(v, complex) for v in scalars):
        return
    name = _FROM_NP[npd].name
    if npd.itemsize == 2 and npd.kind in "fV" and half_as_float:
        name = "float32"
    c = _SCALAR_C_NAMES.get(name) or C_NAMES.get(name)
    if c is not None and name != "bool":
        raise RuntimeError(f"value cannot be converted to type {c} without overflow")


def scalar_name(d) -> str:
    """torch's scalar-type name of an ember dtype (``Float`` for float32, ``Long`` for int64)."""
    return SCALAR_NAMES[d.name]


def array_scalar_name(a) -> str:
    """torch's scalar-type name of an array's dtype (its numpy name when ember has none)."""
    d = _FROM_NP.get(a.dtype)
    return SCALAR_NAMES[d.name] if d is not None else str(a.dtype)


def legacy_type_name(d) -> str:
    """The legacy tensor-type name (``FloatTensor``) of an ember dtype."""
    return SCALAR_NAMES[d.name] + "Tensor"


# the scalar types with a legacy tensor class (torch.FloatTensor ...)
_LEGACY_CLASSES = frozenset(("Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"))


def cpu_type_name(d) -> str:
    """How torch's checks name a cpu tensor of ember dtype ``d``: its legacy class
    (``torch.FloatTensor``) where it has one, else its backend type (``CPUComplexDoubleType``,
    ``CPUBoolType``)."""
    return device_type_name(d, "cpu")


def device_type_name(d, device: str) -> str:
    """:func:`cpu_type_name` on any device type: ``torch.cuda.FloatTensor``,
    ``CUDAComplexFloatType``, ``MetaFloatType``."""
    name = SCALAR_NAMES[d.name]
    if name in _LEGACY_CLASSES and device in ("cpu", "cuda"):
        return f"torch.{'cuda.' if device == 'cuda' else ''}{name}Tensor"
    return f"{device.upper() if device in ('cpu', 'cuda') else device.capitalize()}{name}Type"


_FROM_NP = {d.np: d for d in ALL if d.np is not None}
_UNSIGNED_WIDE = (uint16, uint32, uint64)


def from_numpy_dtype(npd) -> dtype:
    """The ember dtype of a numpy dtype; TypeError for types tensors cannot hold."""
    try:
        return _FROM_NP[npd]
    except KeyError:
        pass
    npd = np.dtype(npd)
    if npd in _FROM_NP:
        return _FROM_NP[npd]
    raise TypeError(
        f"can't convert np.ndarray of type numpy.{npd.type.__name__}. The only supported types "
        "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, "
        "uint32, uint16, uint8, and bool."
    )


def to_dtype(d) -> dtype:
    """An ember dtype from an ember dtype, a numpy dtype/type, a Python type, or a name."""
    if type(d) is dtype:
        return d
    if d is float:  # torch: Python's float is double precision, whatever the default dtype
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    if isinstance(d, str):
        name = d[6:] if d.startswith("torch.") else d.removeprefix("ember.")
        if name in _NAMES:
            return _NAMES[name]
        raise TypeError(f"unknown dtype {d!r}")
    if isinstance(d, dtype):  # a quantized dtype (a dtype subclass)
        return d
    if getattr(d, "__module__", "").startswith("torch") and hasattr(d, "is_floating_point"):
        return _NAMES[str(d).split(".")[-1]]  # a torch.dtype handed to ember
    try:
        return from_numpy_dtype(np.dtype(d))
    except TypeError:
        raise TypeError(f"dtype must be an ember.dtype, got {d!r}") from None


_default = [float32]


def get_default_dtype() -> dtype:
    return _default[0]


def set_default_dtype(d) -> None:
    """Set the dtype of Python floats in tensor(), of float factories and of int->float promotion.

    Like torch, only a dtype object of a floating type (float16, bfloat16, float32, float64).
    """
    if type(d) is not dtype:
        if not (getattr(type(d), "__module__", "").startswith("torch") and hasattr(d, "itemsize")):
            raise TypeError(
                "invalid dtype object: only floating-point types are supported as the default type"
            )
        d = to_dtype(d)  # a torch.dtype handed to ember
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def is_floating_point(t) -> bool:
    try:
        return t.dtype.category == FLOAT
    except AttributeError as e:
        raise _not_tensor("is_floating_point", t, e) from None


def is_complex(t) -> bool:
    try:
        return t.dtype.category == COMPLEX
    except AttributeError as e:
        raise _not_tensor("is_complex", t, e) from None


def _not_tensor(fn: str, input, e: Exception) -> Exception:
    from .arg_errors import must_be_tensor  # (it imports this module)

    return must_be_tensor(fn, ("input",), (input,)) or e


# ---------------------------------------------------------------- promotion
_PROMOTE: dict = {}


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: the smallest dtype both ``a`` and ``b`` convert to, keeping kind."""
    key = (a, b)
    r = _PROMOTE.get(key)
    if r is None:
        r = _PROMOTE[key] = _promote(to_dtype(a), to_dtype(b))
    return r


def _promote(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a.category == QUANTIZED or b.category == QUANTIZED:
        raise RuntimeError(
            "promoteTypes with quantized numbers is not handled yet; figure out what the correct "
            f"rules should be, offending types: {a.scalar_type} {b.scalar_type}"
        )
    if (a in _UNSIGNED_WIDE or b in _UNSIGNED_WIDE) and a.category != FLOAT and b.category != FLOAT:
        # torch: the wide unsigned types only promote with themselves and floating types
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, "
            f"attempted to promote {a.scalar_type} and {b.scalar_type}"
        )
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo is float64:
            return complex128
        return hi
    if a.category == FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    return _FROM_NP[np.promote_types(a.np, b.np)]


def _combine(higher, lower):
    # priority tiers: dimensioned tensors > zero-dim tensors > Python scalars; a lower tier only
    # wins when its category is higher
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        return higher.to_complex() if higher.category == FLOAT else lower
    if higher.category == FLOAT:
        return higher
    if higher.category == BOOL or lower.category == FLOAT:
        return promote_types(higher, lower)
    return higher


_FILL_TYPE_NAMES = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
                    "uint64": "uint64_t", "float32": "float", "float64": "double",
                    "float16": "c10::Half", "bfloat16": "c10::BFloat16"}  # fmt: skip
# keyed by the numpy dtypes themselves: their .name costs ~5 us a call
_FLOAT_MAX = {
    float16.np: float(np.finfo(np.float16).max),
    bfloat16.np: float(ml_dtypes.finfo(ml_dtypes.bfloat16).max),
    float32.np: float(np.finfo(np.float32).max),
}


def fill_scalar(v, npd):
    """Python number ``v`` to store in an array of numpy dtype ``npd`` (fill_, full, masked_fill,
    x[i] = v), checked like torch: a value out of the type's range raises, except that negative
    ints wrap into unsigned types (uint8 fill_(-1) gives 255); inf and nan pass into float types."""
    kind = npd.kind
    t = type(v)
    if t is complex and kind != "c":  # a real target takes only a real value
        if kind == "b":
            return bool(v)  # bool takes any number: nonzero is True
        if v.imag:
            raise _fill_overflow(npd)
        v, t = v.real, float
    if kind in "iu" and t is not bool:
        info = np.iinfo(npd)
        if t is float:
            # the float itself must lie in the type's range (uint8 takes no -0.5 and no 255.5;
            # only ints wrap), then it truncates toward zero, like torch
            if not info.min <= v <= info.max:  # NaN fails too
                raise _fill_overflow(npd)
            return int(v)
        if t is not int:
            return v
        if not (-info.max if kind == "u" else info.min) <= v <= info.max:
            raise _fill_overflow(npd)
        return v + info.max + 1 if v < 0 and kind == "u" else v
    if t in (float, int) and kind in "fV":
        top = _FLOAT_MAX.get(npd)
        if top is not None and top < abs(v) < math.inf:  # past the type's range: no silent inf
            raise _fill_overflow(npd)
    return v


def wrap_int(v: int, npd) -> int:
    """Python int ``v`` wrapped into integer numpy dtype ``npd`` (two's complement), as torch
    takes an out-of-range int scalar in arithmetic and comparisons (uint8 + 300 adds 44)."""
    bits = npd.itemsize * 8
    w = v & ((1 << bits) - 1)
    if npd.kind == "i" and w >= 1 << (bits - 1):
        w -= 1 << bits
    return w


def _fill_overflow(npd) -> RuntimeError:
    name = _FILL_TYPE_NAMES.get(npd.name, npd.name)
    return RuntimeError(f"value cannot be converted to type {name} without overflow")


def scalar_dtype(v) -> dtype:
    """The dtype a Python scalar takes when it is a 'wrapped number' in an op."""
    if isinstance(v, bool):
        return bool_
    if isinstance(v, int):
        return uint64 if v >= 1 << 63 else int64  # torch reads [2**63, 2**64) as uint64
    if isinstance(v, float):
        return get_default_dtype()
    if isinstance(v, complex):
        return get_default_dtype().to_complex()
    return from_numpy_dtype(np.asarray(v).dtype)


def numpy_scalar(v: np.generic) -> int | float | complex:
    """The Python number torch's argument parser reads a numpy scalar as: an integer as an int,
    a complex128 (a Python complex) as a complex, anything else through ``float()``: a numpy
    bool is a float, and so is a complex64 (its real part)."""
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, complex):
        return complex(v)
    return float(v.real)


def check_wide_int(v: int, operands) -> None:
    """torch's errors for a Python int outside int64 in an op over ``operands`` (none for an
    op that does not promote): past uint64 it converts to nothing, and in uint64's upper half
    it is a uint64 that promotes with no bool tensor."""
    _check_int_range(v)
    result_type(*operands)


def _check_int_range(v: int) -> None:
    if v < -(1 << 63):
        raise OverflowError("can't convert negative int to unsigned")
    if v >= 1 << 64:
        raise OverflowError("int too big to convert")


def result_type(*operands) -> dtype:
    """torch.result_type over tensors (or their raw arrays) and Python scalars."""
    tiers = [None, None, None]  # dimensioned, zero-dim, scalar
    try:
        for o in operands:
            a = getattr(o, "_data", o)  # a Tensor's array; arrays and scalars as they are
            if isinstance(a, np.generic):
                a = numpy_scalar(a)
            if isinstance(a, (bool, int, float, complex)):
                if type(a) is int and not -(1 << 63) <= a < 1 << 63:
                    _check_int_range(a)
                d, t = scalar_dtype(a), 2
            else:
                d, t = from_numpy_dtype(a.dtype), (0 if a.ndim else 1)
            tiers[t] = d if tiers[t] is None else promote_types(tiers[t], d)
    except AttributeError:  # neither Tensor nor number: no overload of torch's matches
        from .arg_errors import invalid_arguments

        sigs = ("(Tensor tensor, Tensor other)", "(Number scalar, Tensor tensor)")
        sigs += ("(Tensor tensor, Number other)", "(Number scalar1, Number scalar2)")
        raise invalid_arguments("result_type", operands, {}, sigs) from None
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch.can_cast: allowed unless it lowers the category (float->int, complex->float...)."""
    return to_dtype(from_).category <= to_dtype(to).category


class finfo:
    """Machine limits for floating-point ember dtypes (torch.finfo)."""

    def __init__(self, type: dtype | None = None):
        d = to_dtype(type) if type is not None else get_default_dtype()
        if d.category not in (FLOAT, COMPLEX):
            raise TypeError(
                "ember.finfo() requires a floating point input type. Use ember.iinfo "
                "to handle 'ember.finfo'"
            )
        d = d.to_real()
        info = ml_dtypes.finfo(d.np) if d is bfloat16 else np.finfo(d.np)
        self.dtype = d.name
        self.bits = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # exactly torch's 10^-digits10

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Machine limits for integer ember dtypes (torch.iinfo)."""

    def __init__(self, type: dtype):
        d = to_dtype(type)
        if d is bool_:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if d.category != INT:
            raise TypeError(
                "ember.iinfo() requires an integer input type. Use ember.finfo to "
                "handle 'ember.iinfo'"
            )
        info = np.iinfo(d.np)
        self.dtype = d.name
        self.bits = 8 * d.itemsize
        self.max = int(info.max)
        self.min = int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
