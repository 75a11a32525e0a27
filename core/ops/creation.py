"""Creation: tensor, as_tensor, from_numpy, zeros, ones, full, empty, arange, ..., *_like, new_*."""

from __future__ import annotations

import numpy as np

from .. import dtype as _dt
from ..device import array_module, get_default_device, module_for, to_device, device_of
from ..names import check_names
from ..tensor import Tensor, _wrap


__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like"]


def _infer_np_dtype(data):
    """torch.tensor's dtype inference: bools -> bool, ints -> int64, floats -> default dtype."""
    a = np.asarray(data)
    k = a.dtype.kind
    if k == "b":
        return _dt.bool_.np
    if k in "iu":
        return a.dtype if isinstance(data, np.ndarray) else _dt.int64.np
    if k == "f":
        return a.dtype if isinstance(data, np.ndarray) else _dt.get_default_dtype().np
    if k == "c":
        return a.dtype if isinstance(data, np.ndarray) else _dt.get_default_dtype().to_complex().np
    if k == "V" and a.dtype == _dt.bfloat16.np:
        return a.dtype
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _unwrap_nested(data):
    """Lists that contain tensors become arrays (torch.tensor([t1, t2]))."""
    if isinstance(data, Tensor):
        return data._data if type(data._data) is np.ndarray else data.cpu()._data
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, (Tensor, list, tuple)) for x in data):
            return [_unwrap_nested(x) for x in data]
    return data


def _finish(arr, device, requires_grad, names):
    d = get_default_device() if device is None else to_device(device)
    if d.type != "cpu":
        xp = module_for(d)
        with xp.cuda.Device(d.index or 0):
            arr = xp.asarray(arr)
    t = _wrap(arr, check_names(names, arr.ndim) if names is not None else None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
           names=None) -> Tensor:
    """A new tensor that copies ``data`` (nested lists, scalars, arrays, tensors)."""
    if isinstance(data, Tensor):
        d = data.detach().clone()
        if dtype is not None or device is not None:
            d = d.to(device=device, dtype=dtype)
        if requires_grad:
            d.requires_grad_(True)
        if names is not None:
            d._names = check_names(names, d.ndim)
        return d
    data = _unwrap_nested(data)
    npd = _dt.to_dtype(dtype).np if dtype is not None else _infer_np_dtype(data)
    arr = np.array(data, dtype=npd)
    return _finish(arr, device, requires_grad, names)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like tensor() but shares memory with a numpy array or tensor when dtype and device allow."""
    if isinstance(data, Tensor):
        if dtype is None and device is None:
            return data
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray) and (device is None or to_device(device).type == "cpu"):
        npd = data.dtype if dtype is None else _dt.to_dtype(dtype).np
        _dt.from_numpy_dtype(npd)
        return _wrap(data if data.dtype == npd else data.astype(npd))
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    """torch.asarray: share memory when possible, copy when asked or needed."""
    if copy:
        t = tensor(obj, dtype=dtype, device=device)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory with ``ndarray``."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dt.from_numpy_dtype(ndarray.dtype)
    return _wrap(ndarray)


def from_dlpack(ext) -> Tensor:
    """A tensor sharing memory with any DLPack-capable array (cpu numpy, or cupy on cuda)."""
    if isinstance(ext, Tensor):
        return ext
    dev = ext.__dlpack_device__()[0] if hasattr(ext, "__dlpack_device__") else 1
    if dev == 1:
        return _wrap(np.from_dlpack(ext))
    return _wrap(module_for(to_device("cuda")).from_dlpack(ext))


def _size_args(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, float) or not hasattr(s, "__index__"):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
        s = s.__index__()
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(s)
    return tuple(out)


def _xp_dtype(dtype, device, default=None):
    d = get_default_device() if device is None else to_device(device)
    npd = (default or _dt.get_default_dtype()).np if dtype is None else _dt.to_dtype(dtype).np
    return d, npd


def _factory(fill):
    def make(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False, memory_format=None, names=None):
        shape = _size_args(size)
        d, npd = _xp_dtype(dtype, device)
        xp = module_for(d)
        arr = fill(xp, shape, npd)
        if d.type != "cpu":
            pass
        t = _wrap(arr, check_names(names, len(shape)) if names is not None else None)
        if requires_grad:
            t.requires_grad_(True)
        if out is not None:
            out._data, out._names = t._data, t._names
            return out
        return t

    return make


zeros = _factory(lambda xp, s, d: xp.zeros(s, d))
ones = _factory(lambda xp, s, d: xp.ones(s, d))
empty = _factory(lambda xp, s, d: xp.empty(s, d))
zeros.__name__, ones.__name__, empty.__name__ = "zeros", "ones", "empty"


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         names=None) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from the value if not given)."""
    if dtype is None:
        dtype = _dt.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    shape = _size_args((size,) if not isinstance(size, (tuple, list)) else tuple(size))
    d, npd = _xp_dtype(dtype, device)
    t = _wrap(module_for(d).full(shape, fill_value, npd),
              check_names(names, len(shape)) if names is not None else None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _like(fn):
    def make(input, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, names=None):
        a = input._data
        xp = array_module(a) if device is None else module_for(to_device(device))
        npd = a.dtype if dtype is None else _dt.to_dtype(dtype).np
        t = _wrap(fn(xp, a.shape, npd), input._names if names is None else
                  check_names(names, a.ndim))
        if requires_grad:
            t.requires_grad_(True)
        return t

    return make


zeros_like = _like(lambda xp, s, d: xp.zeros(s, d))
ones_like = _like(lambda xp, s, d: xp.ones(s, d))
empty_like = _like(lambda xp, s, d: xp.empty(s, d))
zeros_like.__name__, ones_like.__name__, empty_like.__name__ = "zeros_like", "ones_like", "empty_like"


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    a = input._data
    xp = array_module(a) if device is None else module_for(to_device(device))
    npd = a.dtype if dtype is None else _dt.to_dtype(dtype).np
    t = _wrap(xp.full(a.shape, fill_value, npd), input._names)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _legacy_new(cls, *args, device=None, **kwargs):
    """``Tensor(2, 3)`` (uninitialised float) or ``Tensor(data)`` (a float copy)."""
    if len(args) == 1 and not isinstance(args[0], int):
        t = tensor(args[0], dtype=_dt.get_default_dtype(), device=device)
    else:
        t = empty(*args, device=device)
    if cls is not Tensor:
        return cls(t, **kwargs)
    return t


def _rebuild(arr, device, requires_grad, names):
    t = _wrap(arr, names)
    if device != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t
