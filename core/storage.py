"""Storages: the memory under a tensor (torch.UntypedStorage, torch.TypedStorage and the legacy
per-dtype classes such as FloatStorage).

A storage views the whole buffer a tensor (and its views) live in, so writes through it are seen
by the tensors. Buffers are numpy (cpu) or cupy (cuda) arrays; the storage holds a flat view.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtype as _dt
from .device import array_module, device_of, module_for, to_device
from .runtime import _warn_once

__all__ = [
    "BFloat16Storage",
    "BoolStorage",
    "ByteStorage",
    "CharStorage",
    "ComplexDoubleStorage",
    "ComplexFloatStorage",
    "DoubleStorage",
    "FloatStorage",
    "HalfStorage",
    "IntStorage",
    "LongStorage",
    "ShortStorage",
    "TypedStorage",
    "UntypedStorage",
    "is_storage",
]


def _root(arr):
    """The array owning the memory ``arr`` views (numpy and cupy both keep ``.base``). Only
    arrays count: one read from a file has a memoryview/mmap/bytes base. numpy's as_strided
    puts a helper object (an ``__array_interface__`` holder) between a view and its array."""
    kind = np.ndarray if isinstance(arr, np.ndarray) else type(arr)
    while True:
        base = getattr(arr, "base", None)
        if not isinstance(base, kind) and hasattr(base, "__array_interface__"):
            base = getattr(base, "base", None)  # skip numpy's as_strided holder
        if not isinstance(base, kind):
            return arr
        arr = base


def _flat_bytes(arr):
    xp = array_module(arr)
    root = _root(arr)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        root = arr  # memory not one block: the tensor's own elements are what can be viewed
    return root.ravel(order="K").view(xp.uint8)


def _check_index(i: int, n: int) -> int:
    if not -n <= i < n:
        raise IndexError(f"index {i} out of range for storage of size {n}")
    return i % n if n else i


class _StorageBase:
    __slots__ = ("_array",)

    def data_ptr(self) -> int:
        a = self._array
        return a.ctypes.data if hasattr(a, "ctypes") else a.data.ptr

    @property
    def device(self):
        return device_of(self._array)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def nbytes(self) -> int:
        return int(self._array.nbytes)

    def __len__(self) -> int:
        return self.size()

    def tolist(self) -> list:
        return self._array.tolist()

    def is_shared(self) -> bool:
        return False

    def __iter__(self):
        return iter(self.tolist())


class UntypedStorage(_StorageBase):
    """Bytes of memory. ``UntypedStorage(n)`` allocates ``n`` zero bytes; ``tensor.untyped_storage()``
    views the buffer the tensor lives in."""

    __slots__ = ()

    def __init__(self, size: int = 0, *, device: Any = None) -> None:
        xp = module_for(to_device(device if device is not None else "cpu"))
        self._array = xp.zeros(int(size), dtype=xp.uint8)

    @classmethod
    def _view(cls, array) -> UntypedStorage:
        s = object.__new__(cls)
        s._array = array
        return s

    def size(self) -> int:
        return int(self._array.size)

    def element_size(self) -> int:
        return 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return UntypedStorage._view(self._array[i])
        return int(self._array[_check_index(i, self.size())])

    def __setitem__(self, i, value) -> None:
        if not isinstance(i, slice):
            i = _check_index(i, self.size())
        self._array[i] = value

    def fill_(self, value: int) -> UntypedStorage:
        self._array[...] = value
        return self

    def copy_(self, source: UntypedStorage) -> UntypedStorage:
        if source.nbytes() != self.nbytes():
            raise RuntimeError(
                f"size mismatch: {source.nbytes()} bytes copied into a storage of "
                f"{self.nbytes()} bytes"
            )
        self._array[...] = source._array
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage._view(self._array.copy())

    def cpu(self) -> UntypedStorage:
        if self.device.type == "cpu":
            return self
        return UntypedStorage._view(self._array.get())

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        head = (
            f"[{type(self).__module__.split('.')[0]}.storage.UntypedStorage(device={self.device})"
        )
        return f"{body}\n{head} of size {self.size()}]"


class TypedStorage(_StorageBase):
    """Elements of one dtype over an untyped storage (torch's legacy storage API).

    ``TypedStorage(n, dtype=...)`` allocates ``n`` zeros; ``tensor.storage()`` views the tensor's
    whole buffer as elements of its dtype."""

    __slots__ = ("_dtype",)

    def __init__(self, size: int = 0, *, dtype: Any = None, device: Any = None) -> None:
        _warn_once("typed_storage", _TYPED_DEPRECATED)
        self._dtype = dtype if dtype is not None else _dt.get_default_dtype()
        xp = module_for(to_device(device if device is not None else "cpu"))
        self._array = xp.zeros(int(size), dtype=self._dtype.np)

    @classmethod
    def _view(cls, array, dtype) -> TypedStorage:
        s = object.__new__(cls)
        s._array, s._dtype = array, dtype
        return s

    @property
    def dtype(self):
        return self._dtype

    def size(self) -> int:
        return int(self._array.size)

    def element_size(self) -> int:
        return int(self._array.itemsize)

    def untyped(self) -> UntypedStorage:
        return UntypedStorage._view(self._array.view(array_module(self._array).uint8))

    def _untyped_storage(self) -> UntypedStorage:
        return self.untyped()

    def __getitem__(self, i):
        if isinstance(i, slice):
            raise RuntimeError(  # noqa: TRY004 - torch raises RuntimeError
                "slices are only supported in UntypedStorage.__getitem__"
            )
        return self._array[_check_index(i, self.size())].item()

    def __setitem__(self, i, value) -> None:
        if not isinstance(i, slice):
            i = _check_index(i, self.size())
        self._array[i] = value

    def fill_(self, value) -> TypedStorage:
        self._array[...] = value
        return self

    def copy_(self, source: TypedStorage) -> TypedStorage:
        if source.size() != self.size():
            raise RuntimeError(
                f"size mismatch: {source.size()} elements copied into a storage of "
                f"{self.size()} elements"
            )
        self._array[...] = source._array
        return self

    def clone(self) -> TypedStorage:
        return TypedStorage._view(self._array.copy(), self.dtype)

    def cpu(self) -> TypedStorage:
        if self.device.type == "cpu":
            return self
        return TypedStorage._view(self._array.get(), self.dtype)

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return (
            f"{body}\n[ember.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
            f"of size {self.size()}]"
        )


def _legacy(name: str, dt) -> type:
    """A legacy per-dtype storage class (FloatStorage, ...): a TypedStorage of a fixed dtype."""

    def __init__(self, size: int = 0, *, device: Any = None) -> None:
        TypedStorage.__init__(self, size, dtype=dt, device=device)

    body = {"__slots__": (), "__init__": __init__, "dtype": dt, "__module__": "ember"}
    return type(name, (TypedStorage,), body)


FloatStorage = _legacy("FloatStorage", _dt.float32)
DoubleStorage = _legacy("DoubleStorage", _dt.float64)
HalfStorage = _legacy("HalfStorage", _dt.float16)
BFloat16Storage = _legacy("BFloat16Storage", _dt.bfloat16)
LongStorage = _legacy("LongStorage", _dt.int64)
IntStorage = _legacy("IntStorage", _dt.int32)
ShortStorage = _legacy("ShortStorage", _dt.int16)
CharStorage = _legacy("CharStorage", _dt.int8)
ByteStorage = _legacy("ByteStorage", _dt.uint8)
BoolStorage = _legacy("BoolStorage", _dt.bool_)
ComplexFloatStorage = _legacy("ComplexFloatStorage", _dt.complex64)
ComplexDoubleStorage = _legacy("ComplexDoubleStorage", _dt.complex128)
_LEGACY = {cls.dtype: cls for cls in TypedStorage.__subclasses__()}


def is_storage(obj: Any) -> bool:
    """True if ``obj`` is a storage (untyped or typed)."""
    return isinstance(obj, _StorageBase)


# ---------------------------------------------------------------------- Tensor methods
def _untyped_storage(self) -> UntypedStorage:
    """The whole buffer this tensor (and every view of it) lives in, as bytes."""
    return UntypedStorage._view(_flat_bytes(self._data))


_TYPED_DEPRECATED = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
    "only storage class. This should only matter to you if you are using storages directly.  To "
    "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()"
)


def _storage(self) -> TypedStorage:
    """The tensor's whole buffer as elements of its dtype (torch's legacy TypedStorage)."""
    _warn_once("typed_storage", _TYPED_DEPRECATED)
    raw = _flat_bytes(self._data)
    return TypedStorage._view(raw.view(self._data.dtype), self.dtype)


def _storage_type(self) -> type:
    """The legacy storage class of this tensor's dtype (e.g. FloatStorage)."""
    if self.dtype not in _LEGACY:
        raise RuntimeError(f"no legacy storage class for dtype {self.dtype}")
    return _LEGACY[self.dtype]


def _install() -> None:
    from .tensor import Tensor

    Tensor.untyped_storage = _untyped_storage
    Tensor.storage = _storage
    Tensor.storage_type = _storage_type


_install()
