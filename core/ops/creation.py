"""Creation: tensor, as_tensor, from_numpy, zeros, ones, full, empty, arange, linspace, eye, ...,
the *_like factories and the Tensor.new_* methods.

Every factory is device-aware: it builds its array with ``module_for(device)`` (numpy on cpu, cupy on
cuda), so nothing is created on the host and copied.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtype as _dt
from ..arg_errors import as_int, int_list, int_list_error
from ..device import array_module, get_default_device, module_for, out_of_memory, to_device
from ..layout import like_array, new_array
from ..names import check_names, unify_inputs
from ..registry import _check_writable, op
from ..runtime import _warn_once
from ..tensor import Size, Tensor, _wrap
from ..torch_function import dispatches_on_input
from ..vmap_state import like as _vmap_like

__all__ = [
    "arange",
    "as_tensor",
    "asarray",
    "empty",
    "empty_like",
    "empty_permuted",
    "empty_strided",
    "eye",
    "from_dlpack",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "logspace",
    "ones",
    "ones_like",
    "scalar_tensor",
    "tensor",
    "tril_indices",
    "triu_indices",
    "zeros",
    "zeros_like",
]

_GRAD_MSG = "Only Tensors of floating point and complex dtype can require gradients"


# ---------------------------------------------------------------------- helpers
def _dev(device):
    return get_default_device() if device is None else to_device(device)


def _on(arr, d):
    """``arr`` (a numpy array) placed on device ``d``."""
    return arr if d.type == "cpu" else _make(d, lambda xp: xp.asarray(arr))


def _make(d, fn):
    """``fn(xp)`` with the array module of device ``d`` (on cuda, with d as cupy's device)."""
    try:
        if d.type != "cuda":
            return fn(module_for(d))
        xp = module_for(d)
        with xp.cuda.Device(d.index or 0):
            return fn(xp)
    except MemoryError as e:
        raise out_of_memory(e, d.type) from None


def _rg_arg(fname: str, v, none: bool = True) -> None:
    """torch's binding refuses a ``requires_grad=`` that is not a bool (numpy's bool too); None
    passes where the signature keeps its default (``none``). Called only off the fast path."""
    if v is None and none:
        return
    from ..arg_errors import type_name

    raise TypeError(f"{fname}(): argument 'requires_grad' must be bool, not {type_name(v)}")


def _finish(arr, requires_grad, names, out=None, name=None):
    t = _wrap(arr, check_names(names, arr.ndim) if names is not None else None)
    if requires_grad:
        if arr.dtype.kind not in "fcV":
            raise RuntimeError(_GRAD_MSG)
        t.requires_grad = True
    if out is not None:
        return _into(out, t, name)
    return t


# factories that resize their out= first (to its own shape too), which a tensor requiring grad
# refuses; those that keep the out tensor's shape when its element count fits, and of them those
# that warn when it does not (arange, and fftfreq through it)
_RESIZE_FIRST = frozenset(("empty", "randn"))
_RANGES = frozenset(("arange", "fft_fftfreq", "fft_rfftfreq"))
_COUNTED = frozenset((*_RANGES, "linspace", "logspace", "range"))
# factories writing one value everywhere: an expanded out tensor gets its memory filled
_FILLS = frozenset(("zeros", "ones", "full", "empty"))


def _check_out_dtype(dtype, out) -> None:
    """A factory given both ``dtype`` and ``out`` needs them to agree (torch's error)."""
    if dtype is not None and isinstance(out, Tensor):
        want = _dt.to_dtype(dtype)
        if want is not out.dtype:
            raise RuntimeError(
                f"dtype {_dt.scalar_name(want)} does not match dtype of out parameter "
                f"({_dt.scalar_name(out.dtype)})"
            )


def _into(out, t, name=None):
    """Write a factory's result into ``out`` (resized like torch's out= for factories);
    ``name``: torch's op, for its errors about an out tensor that requires grad."""
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if out.requires_grad and name is not None:
        if name in _RESIZE_FIRST:
            raise RuntimeError("cannot resize variables that require grad")
        from ...autograd.grad_mode import _state

        if _state.enabled:
            raise RuntimeError(
                f"aten::{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
    a = t._data
    if name in _COUNTED and out._data.shape != a.shape:
        if out._data.size == a.size:  # torch keeps the out tensor's shape when the count fits
            a = a.reshape(out._data.shape)
        elif out._data.size and name in _RANGES:
            from .conversion import warn_user

            warn_user(
                f"The number of elements in the out tensor of shape {list(out._data.shape)} is "
                f"{out._data.size} which does not match the computed number of elements "
                f"{a.size}. Note that this may occur as a result of rounding error. The out "
                f"tensor will be resized to a tensor of shape ({a.size},)."
            )
    if out._data.shape == a.shape and out._data.dtype == a.dtype:
        try:
            out._data[...] = a
        except ValueError:  # numpy's read-only destination: an expanded out tensor
            if name not in _FILLS:
                _check_writable(out._data)  # torch's error (a draw, a range)
                raise
            from .conversion import _fill_target

            _fill_target(out._data)[...] = a  # one value for all: torch fills its memory
    else:
        out._data = a.astype(out._data.dtype, copy=False) if out._data.dtype != a.dtype else a
    out._ver[0] += 1
    if t._names is not None:
        out._names = t._names
    if name is not None:  # torch's factories set their requires_grad= on the out tensor too
        out.requires_grad = t.requires_grad
    return out


def _np_dtype(dtype, default=None):
    if dtype is None:
        return (default or _dt.get_default_dtype()).np
    return _dt.to_dtype(dtype).np


# ---------------------------------------------------------------------- tensor() and friends
def _is_seq(x) -> bool:
    return isinstance(x, (list, tuple)) or (isinstance(x, (Tensor, np.ndarray)) and x.ndim > 0)


def _nested_shape(data):
    """Walk nested sequences like torch: the shape (read along the first elements), with torch's
    errors for ragged lists."""
    shape = []
    x = data
    while _is_seq(x):
        shape.append(len(x))
        if not len(x):
            break
        x = x[0]
    if shape:
        _check_nested(data, 0, shape)
    return shape


def _check_nested(data, dim, shape) -> None:
    n = len(data)
    if shape[dim] != n:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {n})")
    last = dim + 1 == len(shape)
    for x in data:
        if _is_seq(x):
            if last:  # a number was expected here: torch reads it as one
                raise _SequenceAsNumber(type(x).__name__)
            _check_nested(x, dim + 1, shape)
        elif not last:
            raise TypeError("not a sequence")


class _SequenceAsNumber(TypeError):
    """A sequence where a ragged list had a number; the message depends on the dtype."""


def _leaf_kind(data) -> str:
    """The kind torch infers from a nested list's Python numbers: 'c', 'f' or 'i'."""
    kind = "i"
    for x in data:
        k = _leaf_kind(x) if isinstance(x, (list, tuple)) else None
        if x is None:  # torch infers the dtype before it reads the data
            raise RuntimeError("Could not infer dtype of NoneType")
        if k is None:
            k = "c" if isinstance(x, complex) else "f" if isinstance(x, float) else "i"
        if k == "c":
            return k
        if k == "f":
            kind = k
    return kind


def _holds_arrays(seq) -> bool:
    """Whether nested sequence ``seq`` holds a non-empty numpy array (torch warns about such
    lists, once). A level whose first item is a number is taken to hold only numbers."""
    if not seq or not isinstance(seq[0], (list, tuple, np.ndarray)):
        return False
    for x in seq:
        if isinstance(x, np.ndarray):
            if x.size:
                return True
        elif isinstance(x, (list, tuple)) and _holds_arrays(x):
            return True
    return False


def _scalarize(x):
    """0-d tensors in a list become numpy scalars (their dtype drives the inference)."""
    if isinstance(x, Tensor):
        if x._data.size != 1:  # torch reads any one-element tensor as its number
            if x._data.dtype.kind in "biu":  # torch tries __index__ first for integer tensors
                raise TypeError(
                    "only integer tensors of a single element can be converted to an index"
                )
            raise ValueError("only one element tensors can be converted to Python scalars")
        a = x._data if type(x._data) is np.ndarray else x.cpu()._data
        return a.reshape(())[()]
    if isinstance(x, (list, tuple)):
        return [_scalarize(v) for v in x]
    return x


def _has_tensor(data) -> bool:
    for x in data:
        if isinstance(x, Tensor):
            return True
        if isinstance(x, (list, tuple)) and x and _has_tensor(x):
            return True
    return False


_TYPED = (Tensor, np.generic, np.ndarray)  # list elements whose dtype drives the inference
_PLAIN = (bool, int, float, complex, list, tuple)


def _typed_top(data) -> bool:
    """Whether a top-level element carries a dtype ([1, np.float64(2.5)], [arr, arr]); deeper
    levels are checked along the first element only, so nested Python lists stay cheap."""
    for v in data:
        if type(v) not in _PLAIN and isinstance(v, _TYPED):
            return True
    return False


def _typed_dtype(data):
    """torch's inference over elements that carry dtypes: promote every leaf's dtype."""
    seen = set()

    def walk(x):
        if isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, Tensor):
            seen.add(x.dtype)
        elif isinstance(x, (np.generic, np.ndarray)):
            seen.add(_dt.from_numpy_dtype(x.dtype))
        else:
            seen.add(_dt.scalar_dtype(x))

    walk(data)
    out = None
    for d in seen:
        out = d if out is None else _dt.promote_types(out, d)
    return out


def _infer(a: np.ndarray, data):
    """torch.tensor's dtype for data whose numpy conversion is ``a``."""
    k = a.dtype.kind
    if k == "b":
        return a.dtype
    if k in "iu":
        return _dt.int64.np
    if k == "f":
        return _dt.get_default_dtype().np
    if k == "c":
        if _dt.get_default_dtype() is _dt.bfloat16:  # bfloat16 has no complex partner
            raise RuntimeError("invalid default scalar type for complex")
        return _dt.get_default_dtype().to_complex().np
    raise TypeError(f"new(): invalid data type '{type(data).__name__}'")


def _check_numpy(a: np.ndarray, shared: bool = False) -> None:
    """torch's checks on a numpy array it reads, in copies (torch.tensor) as in views
    (``shared``: from_numpy, as_tensor, which also warn, once, about a read-only array such as
    ``np.asarray(pil_image)``)."""
    if not a.dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. Conversion "
            "between byte orders is currently not supported."
        )
    flags = a.flags
    if not flags.c_contiguous or not a.size:  # (a filled C-contiguous array has no negative
        _no_negative_strides(a)  # strides; numpy calls an empty one contiguous whatever they are)
    if shared and not flags.writeable:
        _warn_once(
            "numpy_not_writable",
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before converting "
            "it to a tensor. This type of warning will be suppressed for the rest of this "
            "program.",
        )


def _plain_ndarray(a: np.ndarray) -> np.ndarray:
    """A numpy subclass (``np.memmap``, ``np.matrix``, ...) as a plain ndarray over the same
    memory, as torch reads it: kernels and the device lookup dispatch on the exact array type."""
    return a if type(a) is np.ndarray else a.view(np.ndarray)


def _no_negative_strides(a: np.ndarray) -> None:
    """torch reads numpy arrays by their strides and refuses negative ones (``img[..., ::-1]``)."""
    if any(s < 0 for s in a.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making "
            "a copy of your array  with array.copy().) "
        )


def _to_array(data, dtype):
    """Convert Python data (scalars, nested sequences, arrays) to a new numpy array."""
    if isinstance(data, np.ndarray):
        _check_numpy(data)
        _dt.from_numpy_dtype(data.dtype)  # the array's own type first (a str array: TypeError)
        npd = data.dtype if dtype is None else _np_dtype(dtype)
        _dt.from_numpy_dtype(npd)
        return np.array(data, dtype=npd)
    if isinstance(data, np.generic):
        npd = data.dtype if dtype is None else _np_dtype(dtype)
        _dt.from_numpy_dtype(npd)
        return np.array(data, dtype=npd)
    if data is None:
        raise RuntimeError("Could not infer dtype of NoneType")
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (range, bytearray, memoryview)):  # sequences of ints, as in torch
        data = list(data.tolist() if isinstance(data, memoryview) else data)
    if isinstance(data, (list, tuple)):
        leaf = data
        while isinstance(leaf, (list, tuple)) and leaf:
            leaf = leaf[0]
        if type(leaf) is np.ndarray and not leaf.ndim:  # torch reads a listed array as a
            raise TypeError("len() of unsized object")  # sequence: a 0-d one has no len()
        if _holds_arrays(data):
            _warn_once(
                "list_of_ndarrays",
                "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                "consider converting the list to a single numpy.ndarray with numpy.array() before "
                "converting to a tensor.",
            )
        try:  # the fast path: numpy reads plain nested lists (and 0-d tensors via __array__)
            a = np.array(data)
            ok = a.dtype.kind not in "OUSV"
        except (ValueError, TypeError):
            ok = False
        if ok:
            leaf = data
            while isinstance(leaf, (list, tuple)) and leaf:
                leaf = leaf[0]
            if isinstance(leaf, Tensor) or (
                dtype is None and (isinstance(leaf, _TYPED) or _typed_top(data))
            ):
                # typed scalars (one-element tensors, numpy scalars) keep their dtype, promoted
                # like torch; a one-element tensor counts as its number
                npd = _typed_dtype(data).np if dtype is None else _np_dtype(dtype)
                return np.array(_scalarize(data), dtype=npd)
        else:
            if _has_tensor(data):
                data = _scalarize(data)
            try:
                _nested_shape(data)  # torch's errors for ragged lists
            except _SequenceAsNumber as e:
                kind = _leaf_kind(data) if dtype is None else np.dtype(_np_dtype(dtype)).kind
                if kind in "biu":
                    raise TypeError(f"'{e}' object cannot be interpreted as an integer") from None
                raise TypeError(f"must be real number, not {e}") from None
            try:
                a = np.array(data)
            except (ValueError, TypeError):
                raise TypeError("not a sequence") from None
            if a.dtype.kind == "O":
                if any(v is None for v in a.reshape(-1)):
                    raise RuntimeError("Could not infer dtype of NoneType")
                raise ValueError("Overflow when unpacking long long")
            if a.dtype.kind in "US":
                leaf = data
                while isinstance(leaf, (list, tuple)) and leaf:
                    leaf = leaf[0]
                if isinstance(leaf, str):  # torch reads a leading str as one more dimension
                    raise ValueError("too many dimensions 'str'")
                kind = "str" if a.dtype.kind == "U" else "bytes"
                raise TypeError(f"new(): invalid data type '{kind}'")
    elif isinstance(data, (bool, int, float, complex)):
        try:
            a = np.array(data)
        except OverflowError:
            a = None
        if a is None or a.dtype.kind == "O":  # an int past 64 bits
            return _big_int(data, dtype)
    elif hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        a = np.asarray(data)
        return a.astype(_np_dtype(dtype) if dtype is not None else a.dtype, copy=True)
    else:
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")
    npd = _infer(a, data) if dtype is None else _np_dtype(dtype)
    if a.dtype.kind == "c" and npd.kind in "iufV" and a.size:
        # torch reads each Python number as the target type: a complex fits no real type but bool
        if isinstance(data, (list, tuple)) and _typed_top(data):
            pass  # numpy's complex scalars are cast instead, with numpy's warning
        elif npd.kind in "iu":
            raise TypeError("'complex' object cannot be interpreted as an integer")
        else:
            raise TypeError("must be real number, not complex")
    if a.dtype.kind in "iuf" and npd.kind in "iu" and a.dtype != npd and a.size:
        _check_int_range(a, npd)
    return a.astype(npd, copy=False)


def _big_int(v: int, dtype) -> np.ndarray:
    """A Python int past int64 (and uint64): a float dtype takes its value; torch's parser
    refuses it for the others."""
    npd = None if dtype is None else np.dtype(_np_dtype(dtype))
    if npd is not None and npd.kind in "fc":
        return np.array(float(v), dtype=npd)
    if npd == np.uint64:
        raise OverflowError("int too big to convert")
    raise ValueError("Overflow when unpacking long long")


def _check_int_range(a: np.ndarray, npd) -> None:
    """torch.tensor's check on Python numbers bound for an integer dtype: no wrapping, no NaN
    (numpy reads 2**63 as uint64, which int64 would wrap)."""
    info = np.iinfo(npd)
    with np.errstate(invalid="ignore"):
        lo, hi = a.min(), a.max()
    # torch lets negative Python ints wrap into an unsigned dtype (two's complement) down to -max
    low = -int(info.max) if npd.kind == "u" and a.dtype.kind in "iu" else info.min
    if np.isnan(lo) or np.isnan(hi) or lo < low or hi > info.max:
        if a.dtype.kind == "u" and npd == np.int64:
            raise ValueError("Overflow when unpacking long long")
        raise RuntimeError(f"value cannot be converted to type {npd.name} without overflow")


def tensor(
    data,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    names=None,
) -> Tensor:
    """A new tensor that copies ``data`` (nested lists, scalars, numpy arrays, tensors).

    dtype inference: bools -> bool, ints -> int64, floats -> the default dtype, complex ->
    complex64 (complex128 under a float64 default); numpy arrays keep their dtype.
    """
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("tensor", requires_grad, none=False)
    if isinstance(data, Tensor):
        _warn_copy_construct(f"{_dt.DISPLAY[0]}.tensor")
    return _tensor(data, dtype=dtype, device=device, requires_grad=requires_grad, names=names)


def _warn_copy_construct(what: str) -> None:
    warnings.warn(
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
        "or sourceTensor.detach().clone().requires_grad_(True), rather than "
        f"{what}(sourceTensor).",
        UserWarning,
        stacklevel=3,  # the user's call
    )


def _tensor(data, *, dtype=None, device=None, requires_grad=False, names=None) -> Tensor:
    """tensor() without its copy-construct warning (torch.Tensor(t), torch.asarray(t, copy=True)
    and the legacy FloatTensor(t) copy silently)."""
    if isinstance(data, Tensor):
        d = data.detach()
        if dtype is not None or device is not None:
            d = d.to(device=device, dtype=dtype)
        if d._data is data._data:
            d = _wrap(d._data.copy(), d._names)
        else:
            d = _wrap(d._data, d._names)
        if names is not None:
            d._names = check_names(names, d.ndim)
        if requires_grad:
            d.requires_grad_(True)
        return d
    arr = _to_array(data, dtype)
    d = _dev(device)
    return _finish(_on(arr, d), requires_grad, names)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding ``s`` (default float dtype)."""
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("scalar_tensor", requires_grad)
    _need_number("scalar_tensor", "s", 1, s)
    if isinstance(s, Tensor):
        s = s.item()
    npd = np.dtype(_np_dtype(dtype))
    return _finish(
        _on(np.array(_dt.fill_scalar(s, npd), dtype=npd), _dev(device)), requires_grad, None
    )


def _need_number(fname: str, arg: str, pos: int, v) -> None:
    """torch's check on a Number argument (a fill value): Python and numpy numbers and 0-d
    tensors pass; lists, None, strings, arrays and tensors with dims do not; a Python int
    must fit int64 or uint64 (torch's Scalar)."""
    if type(v) is int and not -(2**63) <= v < 2**64:
        raise OverflowError(
            "int too big to convert" if v > 0 else "can't convert negative int to unsigned"
        )
    if type(v) in (int, float, bool, complex) or isinstance(v, (np.number, np.bool_)):
        return
    if isinstance(v, Tensor) and v.ndim == 0:
        return
    t = type(v)
    tn = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
    if isinstance(v, Tensor):
        tn = "Tensor"
    at = "" if pos is None else f" (position {pos})"  # None: given by keyword
    raise TypeError(f"{fname}(): argument '{arg}'{at} must be Number, not {tn}")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like tensor() but shares memory with a numpy array or tensor when dtype and device allow."""
    if isinstance(data, Tensor):
        if dtype is None and device is None:
            return data
        return data.to(device=device, dtype=dtype)
    d = _dev(device) if device is not None else None
    if isinstance(data, np.ndarray) and (d is None or d.type == "cpu"):
        _check_numpy(data, shared=True)
        data = _plain_ndarray(data)
        npd = data.dtype if dtype is None else _np_dtype(dtype)
        _dt.from_numpy_dtype(npd)
        return _wrap(data if data.dtype == npd else data.astype(npd))
    if d is None:
        xp = array_module(data) if type(data) in _array_types() else None
        if xp is not None and xp is not np:  # a cupy array: stays where it is
            npd = data.dtype if dtype is None else _np_dtype(dtype)
            return _wrap(data if data.dtype == npd else data.astype(npd))
    return tensor(data, dtype=dtype, device=device)


def _array_types():
    from ..device import _XP

    return _XP


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    """torch.asarray: share memory when possible (copy=None), always (copy=False) or never (True)."""
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("asarray", requires_grad)
    if copy:
        t = _tensor(obj, dtype=dtype, device=device)
    else:
        if copy is False:
            _check_alias(obj, dtype, device)
        if (
            not isinstance(obj, (Tensor, np.ndarray))
            and hasattr(obj, "__dlpack__")
            and dtype is None
            and device is None
        ):
            t = from_dlpack(obj)
        else:
            t = as_tensor(obj, dtype=dtype, device=device)
        if copy is False and isinstance(obj, (Tensor, np.ndarray)):
            src = obj._data if isinstance(obj, Tensor) else obj
            if t._data is not src and not array_module(src).may_share_memory(t._data, src):
                raise ValueError("can't alias tensor without copying (dtype or device mismatch)")
    if requires_grad:
        t = t.detach() if t.requires_grad else t
        t.requires_grad_(True)
    return t


def _check_alias(obj, dtype, device) -> None:
    """asarray(copy=False): torch's errors for what it cannot share without a copy."""
    if isinstance(obj, np.generic):  # torch's error types, not TypeError
        raise RuntimeError(  # noqa: TRY004
            "can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. "
        )
    if isinstance(obj, (list, tuple, bool, int, float, complex)):
        raise ValueError("can't alias arbitrary sequence into a tensor.")  # noqa: TRY004
    if not isinstance(obj, (Tensor, np.ndarray)):
        return
    src = obj.dtype if isinstance(obj, Tensor) else _dt.from_numpy_dtype(obj.dtype)
    if dtype is not None and _dt.to_dtype(dtype) != src:
        raise ValueError(
            f"can't alias tensor with dtype '{_dt.scalar_name(src)}' into dtype "
            f"'{_dt.scalar_name(_dt.to_dtype(dtype))}'."
        )
    here = obj.device if isinstance(obj, Tensor) else to_device("cpu")
    if device is not None and to_device(device) != here:
        raise ValueError(f"can't alias tensor from device '{here}' to '{to_device(device)}'.")


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory with ``ndarray``."""
    if not isinstance(ndarray, np.ndarray):
        t = type(ndarray)
        name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
        raise TypeError(f"expected np.ndarray (got {name})")
    _check_numpy(ndarray, shared=True)
    _dt.from_numpy_dtype(ndarray.dtype)
    return _wrap(_plain_ndarray(ndarray))


class _Capsule:
    """A bare DLPack capsule (torch.utils.dlpack.to_dlpack's result) dressed as a DLPack
    producer: array modules' from_dlpack take only those."""

    def __init__(self, capsule) -> None:
        import ctypes

        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        try:
            ptr = get(capsule, b"dltensor")
        except ValueError:  # a consumed capsule is renamed "used_dltensor"
            raise RuntimeError(
                "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                "consumed only once, so you might have already constructed a tensor from it once."
            ) from None
        # DLManagedTensor starts with DLTensor: void* data, then DLDevice {int32 type, int32 id}
        dev = (ctypes.c_int32 * 2).from_address(ptr + ctypes.sizeof(ctypes.c_void_p))
        self._capsule, self._device = capsule, (dev[0], dev[1])

    def __dlpack__(self, **_kw):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def from_dlpack(ext) -> Tensor:
    """A tensor sharing memory with any DLPack-capable array (numpy/torch cpu, cupy on cuda) or
    a DLPack capsule."""
    if isinstance(ext, Tensor):
        return ext
    if type(ext).__name__ == "PyCapsule":
        ext = _Capsule(ext)
    if not hasattr(ext, "__dlpack__"):
        raise TypeError(
            f"from_dlpack(): expected an object with __dlpack__, got {type(ext).__name__}"
        )
    dev = ext.__dlpack_device__()[0] if hasattr(ext, "__dlpack_device__") else 1
    if dev == 1:  # kDLCPU
        return _wrap(np.from_dlpack(ext))
    return _wrap(module_for(to_device("cuda")).from_dlpack(ext))


# ---------------------------------------------------------------------- sizes
def _size_args(size, name="empty"):
    for s in size:  # the common case: plain non-negative ints
        if type(s) is not int or s < 0:
            break
    else:
        return size if type(size) is tuple else tuple(size)
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        seq = True
        size = tuple(size[0])
    else:
        seq = False
    out = []
    for i, s in enumerate(size):
        n = s if type(s) is int else as_int(s, i == 0)
        if n is None:
            if not seq and len(size) == 1:
                raise int_list_error(name, "size", 1, s)
            if i == 0 and not seq:
                # a bad first element decides the overload: loose arguments no longer read as
                # one size
                raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
            raise int_list_error(name, "size", 1, size, i)
        out.append(n)
    for s in out:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _keyword_size(name: str, size: tuple, kw: dict) -> tuple:
    """The sizes of a factory given ``size=`` (popped from ``kw``): torch's parser takes a
    sequence of ints there (named without a position; a bare number is not read as one), and
    not next to loose sizes."""
    if size:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    given = kw.pop("size")
    if not isinstance(given, (tuple, list)):
        raise int_list_error(name, "size", None, given)
    return (int_list(name, "size", None, given),)


def _factory(name, fill):
    def make(
        *size,
        out=None,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        pin_memory=False,
        memory_format=None,
        names=None,
        **kw,
    ):
        if requires_grad is not False and requires_grad is not True:
            _rg_arg(name, requires_grad)
        if "size" in kw:
            size = _keyword_size(name, size, kw)
        if kw:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
        _check_out_dtype(dtype, out)
        if memory_format is not None and name != "empty":  # only torch.empty takes a layout
            raise TypeError(f"{name}() got an unexpected keyword argument 'memory_format'")
        if not size:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        shape = _size_args(size, name)
        if layout is not None and layout.name != "strided" and out is None:
            from ..sparse_factories import _empty_sparse  # sparse imports the ops: a cycle

            return _empty_sparse(name, shape, layout, dtype, device, requires_grad)
        if out is not None and dtype is None:
            npd = out._data.dtype
            d = out.device if device is None else to_device(device)
        else:
            npd = _np_dtype(dtype)
            d = _dev(device)
        if memory_format is None:
            arr = _make(d, lambda xp: fill(xp, shape, npd))
        else:
            arr = _make(d, lambda xp: new_array(xp, shape, npd, fill, memory_format))
        return _finish(arr, requires_grad, names, out, name)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"A tensor of the given size filled like torch.{name} (default float dtype)."
    return make


zeros = _factory("zeros", lambda xp, s, d: xp.zeros(s, d))
ones = _factory("ones", lambda xp, s, d: xp.ones(s, d))
empty = _factory("empty", lambda xp, s, d: xp.empty(s, d))


_NO_ARG = object()  # full's argument not given by position


def _full_keywords(size, fill_value, extra: tuple, kw: dict, fname: str = "full"):
    """``fname``'s (full, new_full) ``size`` and ``fill_value`` given (or not) by keyword, with
    the position of each for the parser's errors (None: by keyword), as torch binds them
    (failure path)."""
    if extra:
        raise TypeError(f"{fname}() takes 2 positional arguments but {2 + len(extra)} were given")
    given = [v for v in (size, fill_value) if v is not _NO_ARG]
    lack = [k >= len(given) and n not in kw for k, n in enumerate(("size", "fill_value"))]
    if any(lack):
        # torch lists every parameter from the first missing one (spelled as torch does)
        missing = ("size", "fill_value")[lack.index(True) :]
        s = "s" if len(missing) == 1 else ""
        listed = ", ".join(f'"{n}"' for n in missing)
        raise TypeError(
            f"{fname}() missing {len(missing)} required positional argument{s}: {listed}"
        )
    extra = next((k for k in kw if k not in ("size", "fill_value")), None)
    if extra is not None:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{extra}'")
    at = [1, 2]
    for k, name in enumerate(("size", "fill_value")):
        if name in kw:
            if k < len(given):
                raise TypeError(f"{fname}() got multiple values for argument '{name}'")
            at[k] = None
    return kw.get("size", size), kw.get("fill_value", fill_value), tuple(at)


def _fill_dtype(fill_value):
    if isinstance(fill_value, Tensor):
        return fill_value.dtype
    if type(fill_value) is int and fill_value >= 2**63:  # an int's dtype is int64, not uint64
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return _dt.scalar_dtype(fill_value)


def full(
    size=_NO_ARG,
    fill_value=_NO_ARG,
    /,
    *extra,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    names=None,
    **kw,
) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from the value if not given)."""
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("full", requires_grad)
    # positional-only: torch's parser names an argument given by keyword without its position
    at = 1, 2
    if kw or extra or fill_value is _NO_ARG:
        size, fill_value, at = _full_keywords(size, fill_value, extra, kw)
    _check_out_dtype(dtype, out)
    if not isinstance(size, (tuple, list, Size)):
        raise int_list_error("full", "size", at[0], size)
    if at[0] is None:
        size = int_list("full", "size", None, size)
    shape = _size_args((tuple(size),), "full")
    _need_number("full", "fill_value", at[1], fill_value)
    if dtype is None:
        npd = out._data.dtype if out is not None else _fill_dtype(fill_value).np
    else:
        npd = _np_dtype(dtype)
    d = _dev(device) if out is None or device is not None else out.device
    return _finish(_full_array(d, shape, fill_value, npd), requires_grad, names, out, "full")


def _full_array(d, shape, fill_value, npd):
    """xp.full on device ``d``: a 0-d tensor value counts as its number, checked like torch's
    fill (a value out of the dtype's range raises; -1 in uint8 is 255)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    fill_value = _dt.fill_scalar(fill_value, np.dtype(npd))
    return _make(d, lambda xp: xp.full(shape, fill_value, npd))


def empty_strided(
    size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
) -> Tensor:
    """An uninitialised tensor with the given size and strides (in elements)."""
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("empty_strided", requires_grad)
    shape = _size_args((tuple(size),), "empty_strided")
    stride = tuple(int(s) for s in stride)
    if len(stride) != len(shape):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
            f"({len(stride)})"
        )
    if all(shape) and any(st < 0 and s > 1 for s, st in zip(shape, stride)):
        # the storage size would come out short: the view would reach outside its buffer
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(shape)} and "
            f"strides={list(stride)}"
        )
    npd = np.dtype(_np_dtype(dtype))
    n = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if all(shape) else 0
    d = _dev(device)

    def mk(xp):
        buf = xp.empty(max(n, 0), npd)
        return xp.lib.stride_tricks.as_strided(
            buf, shape, tuple(st * npd.itemsize for st in stride)
        )

    return _finish(_make(d, mk), requires_grad, None)


def empty_permuted(
    size,
    physical_layout,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """An uninitialised dense tensor of ``size`` whose dims lie in memory in the order
    ``physical_layout`` gives, outermost first (``(0, 2, 3, 1)``: NHWC for an NCHW size)."""
    shape = _size_args((tuple(size),), "empty_permuted")
    order = tuple(int(d) for d in physical_layout)
    if len(order) != len(shape):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(shape)} is not equal to len(physical_layout) = {len(order)}"
        )
    if sorted(order) != list(range(len(shape))):
        raise RuntimeError("Duplicate dim not allowed")
    stride = [0] * len(shape)
    step = 1
    for d in reversed(order):
        stride[d] = step
        step *= max(shape[d], 1)
    return empty_strided(shape, stride, dtype=dtype, device=device, requires_grad=requires_grad)


# ---------------------------------------------------------------------- *_like
def _like(name, fill):
    def make(
        input,
        *,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        memory_format=None,
        names=None,
    ):
        if (
            type(input) is Tensor
            and dtype is None
            and device is None
            and requires_grad is False
            and layout is None
            and memory_format is None
            and names is None
        ):
            # the common call: a plain (strided) tensor's dense numpy array, all as it is
            a = input._data
            if type(a) is np.ndarray and a.flags.c_contiguous:
                return _named(_wrap(fill(np, a.shape, a.dtype)), input._names)
        if requires_grad is not False and requires_grad is not True:
            _rg_arg(name, requires_grad)
        try:
            strided = input.layout.name == "strided"
        except AttributeError:  # not a Tensor: torch's parser error
            from ..arg_errors import must_be_tensor

            raise must_be_tensor(name, ("input",), (input,)) from None
        if not strided or (layout is not None and layout.name != "strided"):
            return _like_layout(name, input, layout, dtype, device, requires_grad)
        a = input._data
        npd = a.dtype if dtype is None else _np_dtype(dtype)
        # memory_format (default preserve_format): the input's strides when it is dense
        if device is None and array_module(a) is np:
            arr = like_array(np, a, npd, fill, memory_format)
        else:
            d = input.device if device is None else to_device(device)
            arr = _make(d, lambda m: like_array(m, a, npd, fill, memory_format))
        return (
            _finish(arr, requires_grad, names if names is not None else None)
            if names is not None
            else _named(_finish(arr, requires_grad, None), input._names)
        )

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"torch.{name}: a tensor with ``input``'s shape (and dtype/device unless given)."
    return dispatches_on_input(_vmap_like(make))


def _like_layout(name, input, layout, dtype, device, requires_grad):
    """A ``*_like`` of a sparse input, or into a sparse ``layout``: torch keeps the input's
    layout unless ``layout`` is given (sparse tensors carry no names)."""
    from ..sparse_factories import _empty_sparse  # sparse imports the ops: a cycle

    lay = input.layout if layout is None else layout
    dt = input.dtype if dtype is None else dtype
    dev = input.device if device is None else device
    base = name[: -len("_like")]
    if lay.name == "strided":
        make = {"zeros": zeros, "ones": ones, "empty": empty}[base]
        return make(tuple(input.shape), dtype=dt, device=dev, requires_grad=requires_grad)
    if base == "ones":  # a fill value would specify every element
        raise NotImplementedError(
            "Could not run 'aten::fill_.Scalar' with arguments from the sparse backend: "
            "ember.ones_like makes no sparse tensor (use layout=ember.strided)"
        )
    # a COO input keeps its sparse/dense split (a hybrid tensor's zeros are hybrid too)
    sd = input.sparse_dim() if input.layout is lay and lay.name == "sparse_coo" else None
    return _empty_sparse(base, tuple(input.shape), lay, dt, dev, requires_grad, sd)


def _named(t, names):
    t._names = names
    return t


zeros_like = _like("zeros_like", lambda xp, s, d: xp.zeros(s, d))
ones_like = _like("ones_like", lambda xp, s, d: xp.ones(s, d))
empty_like = _like("empty_like", lambda xp, s, d: xp.empty(s, d))


@dispatches_on_input
@_vmap_like
def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    names=None,
) -> Tensor:
    """A tensor with ``input``'s shape filled with ``fill_value`` (and its names unless given)."""
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("full_like", requires_grad)
    try:
        a = input._data
    except AttributeError:  # torch's parser checks the input first
        from ..arg_errors import must_be_tensor

        raise must_be_tensor("full_like", ("input",), (input,)) from None
    _need_number("full_like", "fill_value", 2, fill_value)
    npd = a.dtype if dtype is None else _np_dtype(dtype)
    d = input.device if device is None else to_device(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    fv = _dt.fill_scalar(fill_value, np.dtype(npd))
    arr = _make(
        d, lambda m: like_array(m, a, npd, lambda xp, s, dt: xp.full(s, fv, dt), memory_format)
    )
    if names is not None:
        return _finish(arr, requires_grad, names)
    return _named(_finish(arr, requires_grad, None), input._names)


# ---------------------------------------------------------------------- ranges
def _num(v):
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    return v


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _real_bound(v):
    """A bound of arange/range as torch reads it: a double, which a complex number converts to
    only with a zero imaginary part."""
    if type(v) is not complex:
        return v
    if v.imag:
        raise RuntimeError("value cannot be converted to type double without overflow")
    return v.real


def _no_range_kernel(kernel: str, npd) -> NotImplementedError:
    """torch's arange/range kernels take no bool or complex result type."""
    name = _dt.scalar_name(_dt._FROM_NP[npd])
    return NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


_FACTORY_KW = (
    "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool "
    "pin_memory = False, bool requires_grad = False)"
)
_ARANGE_SIGS = (
    f"(Number end, *, Tensor out = None, {_FACTORY_KW}",
    f"(Number start, Number end, *, {_FACTORY_KW}",
    f"(Number start, Number end, Number step = 1, *, Tensor out = None, {_FACTORY_KW}",
)


def arange(
    start,
    end=None,
    step=_NO_ARG,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless any bound is a float."""
    if requires_grad is not False and requires_grad is not True and requires_grad is not None:
        from ..arg_errors import invalid_arguments

        given = tuple(v for v in (start, end, step) if v is not None and v is not _NO_ARG)
        raise invalid_arguments("arange", given, {"requires_grad": requires_grad}, _ARANGE_SIGS)
    if step is _NO_ARG:
        step = 1
    _check_out_dtype(dtype, out)
    if end is None:
        start, end = 0, start
    start, end, step = _num(start), _num(end), _num(step)
    # a Python int past int64: torch's parser reads it as uint64 if it can, which only a
    # floating result takes
    big = cplx = False
    for v in (start, end, step):
        if type(v) is int and not _I64_MIN <= v <= _I64_MAX:
            if v < 0:
                raise OverflowError("can't convert negative int to unsigned")
            if v >= 2**64:
                raise OverflowError("int too big to convert")
            big = True
        elif type(v) is complex:
            cplx = True
    if cplx:  # a float from here on (or torch's error)
        start, end, step = _real_bound(start), _real_bound(end), _real_bound(step)
    if dtype is None:
        if out is not None:
            npd = out._data.dtype
        elif any(isinstance(v, float) for v in (start, end, step)):
            npd = _dt.get_default_dtype().np
        else:
            npd = np.dtype(np.int64)
    else:
        npd = np.dtype(_np_dtype(dtype))
    if npd.kind in "bc":
        raise _no_range_kernel("arange_cpu", npd)
    if big:
        if npd.kind in "iu":
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        start, end, step = float(start), float(end), float(step)
    long = npd == np.int64
    if long and isinstance(step, float) and int(step) == 0:
        raise ValueError("step must be nonzero")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    for v in (start, end):
        if not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if long:  # int64 results: torch truncates the bounds to integers first, and counts in them
        start, end, step = int(start), int(end), int(step)
    if all(isinstance(v, int) for v in (start, end, step)):
        # torch counts in int64: a span (end - start + step - 1) past its range is refused
        if not _I64_MIN <= end - start + step - (1 if step > 0 else -1) <= _I64_MAX:
            raise RuntimeError("invalid size, possible overflow?")
        n = max(0, -((start - end) // step))
        vals = start + step * np.arange(n, dtype=np.int64)
    else:
        n = (end - start) / step
        if not n < 2.0**63:  # a size no int64 holds (1e20 steps of 1e-20)
            raise RuntimeError("invalid size, possible overflow?")
        n = max(0, math.ceil(n))
        if npd.kind in "iu":  # the other integer types count in the given bounds, but step
            vals = int(start) + int(step) * np.arange(n, dtype=np.int64)  # from int(start)
        else:
            vals = start + step * np.arange(n, dtype=np.float64)
    d = _dev(device) if out is None or device is not None else out.device
    return _finish(_on(vals.astype(npd, copy=False), d), requires_grad, None, out, "arange")


def linspace(
    start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (inclusive)."""
    if requires_grad is not False and requires_grad is not True:
        _space_rg("linspace", start, end, steps, requires_grad)
    _check_out_dtype(dtype, out)
    steps = _steps("linspace", start, end, steps, dtype)
    start, end = _num(start), _num(end)
    npd = _space_dtype("linspace", start, end, out, dtype)
    start, end = _int_ends(start, end, npd)
    if npd.kind == "f" and npd.itemsize in (4, 8) and steps > 1:
        vals = _lin_float(start, end, steps, npd.type)
    else:
        vals = _lin(start, end, steps, np.complex128 if npd.kind == "c" else np.float64)
    d = _dev(device) if out is None or device is not None else out.device
    return _finish(_on(vals.astype(npd), d), requires_grad, None, out, "linspace")


def _space_sigs(name: str) -> list[str]:
    base = "float base = 10.0, " if name == "logspace" else ""
    tail = (
        f"int steps, {base}*, Tensor out = None, torch.dtype dtype = None, torch.layout layout "
        "= None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)"
    )
    return [
        f"({a} start, {b} end, {tail}"
        for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"))
        + (("Number", "Number"),)
    ]


def _space_rg(name: str, start, end, steps, requires_grad) -> None:
    """A non-bool ``requires_grad=`` of linspace/logspace: no signature matches (torch's text)."""
    if requires_grad is not None:
        from ..arg_errors import invalid_arguments

        kw = {"requires_grad": requires_grad}
        raise invalid_arguments(name, (start, end, steps), kw, _space_sigs(name))


def _steps(name: str, start, end, steps, dtype) -> int:
    """linspace/logspace's ``steps``: an int (a bool or a float matches no signature), >= 0."""
    if isinstance(steps, bool) or not hasattr(steps, "__index__"):
        from ..arg_errors import invalid_arguments

        kw = {} if dtype is None else {"dtype": _dt.to_dtype(dtype)}
        raise invalid_arguments(name, (start, end, steps), kw, _space_sigs(name))
    steps = steps.__index__()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def _space_dtype(name: str, start, end, out, dtype) -> np.dtype:
    """The result dtype of linspace/logspace: ``dtype``, else out's, else the default float
    dtype (its complex partner for a complex end point); torch has no bool kernel."""
    if dtype is not None:
        npd = np.dtype(_np_dtype(dtype))
        if npd.kind != "c" and (isinstance(start, complex) or isinstance(end, complex)):
            # torch infers a complex dtype from a complex end point, cast only to complex
            inferred = _dt.get_default_dtype().to_complex()
            raise RuntimeError(
                f"torch.{name}(): inferred dtype {_dt.C_NAMES[inferred.name]} can't be safely "
                f"cast to passed dtype {_dt.scalar_name(_dt._FROM_NP[npd])}"
            )
    elif out is not None:
        npd = out._data.dtype
    elif any(isinstance(v, complex) for v in (start, end)):
        npd = _dt.get_default_dtype().to_complex().np
    else:
        npd = _dt.get_default_dtype().np
    if npd.kind == "b":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")
    return npd


def _int_ends(start, end, npd):
    """An integer linspace/logspace runs between its end points truncated to the dtype (which
    must hold them), stepping in double."""
    if npd.kind not in "iu":
        return start, end
    info = np.iinfo(npd)
    for v in (start, end):
        if not isinstance(v, complex) and not info.min <= v <= info.max:
            raise _dt._fill_overflow(npd)
    return int(start.real if isinstance(start, complex) else start), int(
        end.real if isinstance(end, complex) else end
    )


def _lin_float(start, end, steps, T):
    """torch's float32/float64 linspace bit for bit: start, end and step in the output type, each
    value one fused multiply-add (emulated exactly in long double), up from start for the first
    half and down from end for the second."""
    with np.errstate(over="ignore", invalid="ignore"):  # out-of-range ends become inf, like torch
        s, e = T(start), T(end)
        step = T(T(e - s) / T(steps - 1))
        L = np.longdouble
        i = np.arange(steps, dtype=L)
        up = L(s) + L(step) * i
        down = L(e) - L(step) * (L(steps - 1) - i)
        return np.where(i < steps // 2, up, down).astype(T)


def _lin(start, end, steps, work):
    # torch's symmetric formula: the first half counts up from start, the second down from end
    if steps == 1:
        return np.array([start], dtype=work)
    i = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0
    half = steps // 2
    return np.where(i < half, start + step * i, end - step * (steps - 1 - i)).astype(work)


def logspace(
    start,
    end,
    steps,
    base: float = 10.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    if requires_grad is not False and requires_grad is not True:
        _space_rg("logspace", start, end, steps, requires_grad)
    _check_out_dtype(dtype, out)
    steps = _steps("logspace", start, end, steps, dtype)
    start, end = _num(start), _num(end)
    npd = _space_dtype("logspace", start, end, out, dtype)
    if steps != 1:  # (one step is base ** start, the exponent as given)
        start, end = _int_ends(start, end, npd)
    work = np.complex128 if npd.kind == "c" else np.float64  # complex exponents turn the base
    vals = np.power(work(base), _lin(start, end, steps, work))
    d = _dev(device) if out is None or device is not None else out.device
    return _finish(_on(vals.astype(npd), d), requires_grad, None, out, "logspace")


def eye(
    n: int,
    m: int | None = None,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    names=None,
) -> Tensor:
    """The ``n`` x ``m`` identity matrix (``m`` defaults to ``n``)."""
    _check_out_dtype(dtype, out)
    bad_rg = requires_grad is not False and requires_grad is not True and requires_grad is not None
    if bad_rg or (m is not None and not (_is_int(n) and _is_int(m))):
        from ..arg_errors import invalid_arguments

        tail = (
            "*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
            "torch.device device = None, bool pin_memory = False, bool requires_grad = False)"
        )
        sigs = [f"(int n, {tail}", f"(int n, int m, {tail}"]
        given = (n,) if m is None else (n, m)
        kw = {"requires_grad": requires_grad} if bad_rg else {}
        raise invalid_arguments("eye", given, kw, sigs)
    if m is None:
        n = _int_param("eye", "n", 1, n)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is None:
        m = n
    elif m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    npd = (
        (out._data.dtype if out is not None else _dt.get_default_dtype().np)
        if dtype is None
        else _np_dtype(dtype)
    )
    d = _dev(device) if out is None or device is not None else out.device
    return _finish(_make(d, lambda xp: xp.eye(n, m, dtype=npd)), requires_grad, names, out, "eye")


def _is_int(v) -> bool:
    return not isinstance(v, bool) and hasattr(v, "__index__")


def _int_param(fname: str, arg: str, pos: int, v) -> int:
    """An int argument, with torch's TypeError for a float, bool, None or str."""
    if not _is_int(v):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be int, not {type(v).__name__}"
        )
    return v.__index__()


def _tri_indices(row, col, offset, dtype, device, upper):
    who = "triu_indices" if upper else "tril_indices"
    row = _int_param(who, "row", 1, row)
    col = _int_param(who, "col", 2, col)
    offset = _int_param(who, "offset", 3, offset)
    for what, n in (("row", row), ("col", col)):
        if n < 0:  # torch's message, its missing space included
            raise RuntimeError(f"{what} must be non-negative, got{n}")
    npd = _np_dtype(dtype, _dt.int64)
    if npd not in (np.int32, np.int64):  # torch's kernel exists for int and long only
        raise NotImplementedError(
            f"\"{who}\" not implemented for '{_dt.scalar_name(_dt.to_dtype(dtype))}'"
        )
    r, c = np.triu_indices(row, offset, col) if upper else np.tril_indices(row, offset, col)
    return _finish(_on(np.stack([r, c]).astype(npd), _dev(device)), False, None)


def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None
) -> Tensor:
    """The (2, N) indices of the lower triangle of a ``row`` x ``col`` matrix."""
    return _tri_indices(row, col, offset, dtype, device, False)


def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None
) -> Tensor:
    """The (2, N) indices of the upper triangle of a ``row`` x ``col`` matrix."""
    return _tri_indices(row, col, offset, dtype, device, True)


# ---------------------------------------------------------------------- complex, polar
@op(names=unify_inputs, method=False, name="complex")
def _complex(xp, real, imag):
    """real + 1j * imag (float inputs of one dtype -> the matching complex dtype)."""
    _tensor_args("complex", real=real, imag=imag)
    if real.dtype.kind != "f" or imag.dtype.kind != "f":
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got "
            f"{_SN.get(real.dtype.name, real.dtype.name)} and "
            f"{_SN.get(imag.dtype.name, imag.dtype.name)}"
        )
    if real.dtype != imag.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {_SN[real.dtype.name]} but got scalar type "
            f"{_SN[imag.dtype.name]} for second argument"
        )
    cd = np.complex128 if real.dtype == np.float64 else np.complex64
    out = xp.empty(np.broadcast_shapes(real.shape, imag.shape), cd)
    out.real = real
    out.imag = imag
    return out


_SN = _dt.SCALAR_NAMES


def _tensor_args(fname: str, **args) -> None:
    """torch takes no Python number for these (the kernel sees a tensor's array, or the number)."""
    for pos, (arg, v) in enumerate(args.items(), 1):
        if not hasattr(v, "dtype"):
            raise TypeError(
                f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not "
                f"{type(v).__name__}"
            )


@_complex.vjp
def _(grad):
    return grad.real, grad.imag


@op(names=unify_inputs, method=False)
def polar(xp, abs, angle):
    """abs * (cos(angle) + 1j * sin(angle))."""
    _tensor_args("polar", abs=abs, angle=angle)
    if abs.dtype.kind != "f" or angle.dtype.kind != "f":
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got "
            f"{_SN.get(abs.dtype.name, abs.dtype.name)} and "
            f"{_SN.get(angle.dtype.name, angle.dtype.name)}"
        )
    if abs.dtype != angle.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {_SN[abs.dtype.name]} but got scalar type "
            f"{_SN[angle.dtype.name]} for second argument"
        )
    if abs.dtype == np.float16:  # its result would be complex32, which torch's kernel lacks
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    cd = np.complex128 if abs.dtype == np.float64 else np.complex64
    out = xp.empty(np.broadcast_shapes(abs.shape, angle.shape), cd)
    out.real = abs * xp.cos(angle)
    out.imag = abs * xp.sin(angle)
    return out


def _complex_out(out, res, ins=()):
    """torch's complex/polar kernels write only their complex result dtype (no cast)."""
    raise RuntimeError(
        f"Expected object of scalar type {_SN[res._data.dtype.name]} but got scalar type "
        f"{_SN.get(out._data.dtype.name, out.dtype)} for argument 'out'"
    )


_complex.op.out_dtype = polar.op.out_dtype = _complex_out


@polar.vjp
def _(grad, result, needs):
    # a real input x of a complex output gets Re(conj(grad) * d out/dx); torch writes d out/d abs
    # as sgn(out), not e^(i angle): 0 at abs == 0, negated for a negative abs, NaN where out is
    # not finite (and d out/d angle as 1j * out, NaN there too)
    gc = grad.conj()
    g_abs = (gc * result.sgn()).real if needs[0] else None
    g_ang = (gc * result * 1j).real if needs[1] else None
    return g_abs, g_ang


@op(names=unify_inputs, inplace="heaviside_", tensors_only=True)
def heaviside(xp, input, values):
    """0 where input < 0, ``values`` where input == 0, 1 where input > 0 (not differentiable)."""
    if input.dtype.kind == "c" or values.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    # torch does not promote here: even a 0-d ``values`` must have input's dtype
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    one = xp.ones((), input.dtype)
    return xp.where(input == 0, values, (input > 0).astype(input.dtype) * one)


@heaviside.vjp
def _(grad):
    # torch records heaviside in the graph (its result requires grad) but has no derivative:
    # a backward through it raises rather than treating the step as a constant
    raise RuntimeError("derivative for aten::heaviside is not implemented")


# ---------------------------------------------------------------------- Tensor.new_*
def _new_size(size, name):
    return _size_args(size, name)


def _new_tensor(
    self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False
) -> Tensor:
    """A new tensor copying ``data``, with self's dtype and device unless given."""
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("new_tensor", requires_grad, none=False)
    if isinstance(data, Tensor):
        _warn_copy_construct("tensor.new_tensor")
        # a tensor's data takes self's dtype too, as a list's would (torch casts it)
        t = data.detach().to(dtype=dtype or self.dtype, device=device or self.device)
        t = _wrap(t._data.copy() if t._data is data._data else t._data, None)
    else:
        arr = _to_array(data, dtype if dtype is not None else self.dtype)
        t = _wrap(_on(arr, self.device if device is None else to_device(device)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _new_factory(name, fill):
    def method(
        self,
        *size,
        dtype=None,
        device=None,
        requires_grad=False,
        layout=None,
        pin_memory=False,
        **kw,
    ):
        if requires_grad is not False and requires_grad is not True:
            _rg_arg(name, requires_grad)
        if "size" in kw:
            size = _keyword_size(name, size, kw)
        if not size:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        shape = _size_args(size, name)
        npd = self._data.dtype if dtype is None else _np_dtype(dtype)
        d = self.device if device is None else to_device(device)
        return _finish(_make(d, lambda xp: fill(xp, shape, npd)), requires_grad, None)

    method.__name__ = method.__qualname__ = name
    return _vmap_like(method)


@_vmap_like
def _new_full(
    self,
    size=_NO_ARG,
    fill_value=_NO_ARG,
    /,
    *extra,
    dtype=None,
    device=None,
    requires_grad=False,
    layout=None,
    pin_memory=False,
    **kw,
) -> Tensor:
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("new_full", requires_grad)
    # positional-only: torch's parser names an argument given by keyword without its position
    at = 1, 2
    if kw or extra or fill_value is _NO_ARG:
        size, fill_value, at = _full_keywords(size, fill_value, extra, kw, "new_full")
    if not isinstance(size, (list, tuple, Size)):  # unlike new_zeros, size is one argument
        raise int_list_error("new_full", "size", at[0], size)
    if at[0] is None:
        size = int_list("new_full", "size", None, size)
    shape = _size_args((tuple(size),), "new_full")
    _need_number("new_full", "fill_value", at[1], fill_value)
    npd = self._data.dtype if dtype is None else _np_dtype(dtype)
    d = self.device if device is None else to_device(device)
    return _finish(_full_array(d, shape, fill_value, npd), requires_grad, None)


Tensor.new_tensor = _new_tensor
Tensor.new_zeros = _new_factory("new_zeros", lambda xp, s, d: xp.zeros(s, d))
Tensor.new_ones = _new_factory("new_ones", lambda xp, s, d: xp.ones(s, d))
Tensor.new_empty = _new_factory("new_empty", lambda xp, s, d: xp.empty(s, d))
Tensor.new_full = _new_full
