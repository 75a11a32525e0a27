"""Parameter, Buffer and their uninitialized (lazy) forms."""

from __future__ import annotations

import sys

import numpy as np

from ..core.device import register_backend
from ..core.tensor import Tensor
from ..core.torch_function import _disabled_torch_function_impl

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]


def _empty0() -> Tensor:
    from ..core.ops import creation

    return creation.empty(0)


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    ``Parameter(data=None, requires_grad=True)`` shares ``data``'s storage (no copy)."""

    _is_param = True
    # ops on it give plain Tensors (never dispatched: a cached per-type check)
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = _empty0()
        if not isinstance(data, Tensor):
            raise AttributeError(  # noqa: TRY004  (torch's error)
                f"'{type(data).__name__}' object has no attribute 'detach'"
            )
        if requires_grad and data._data.dtype.kind not in "fcV":  # V: bfloat16
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        pass

    def __deepcopy__(self, memo):
        # like torch: a fresh Parameter of cloned values (the gradient is not copied)
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__


class _BufferMeta(type):
    # a Buffer is a plain Tensor marked in its _extra; isinstance(t, Buffer) checks the mark
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and bool(
                instance._extra and instance._extra.get("is_buffer")
            )
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor marked as a module buffer: assigning one to a Module attribute registers it.

    ``Buffer(data=None, *, persistent=True)``; a non-persistent buffer is left out of
    ``state_dict``."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = _empty0()
        t = data.detach()
        if data.requires_grad:
            t.requires_grad_(True)
        extra = dict(t._extra or {})
        extra["is_buffer"] = True
        extra["persistent"] = persistent
        t._extra = extra
        return t


def _buffer_persistent(t: Tensor) -> bool:
    return bool(t._extra.get("persistent", True)) if t._extra else True


def _clear_buffer_mark(t: Tensor) -> None:
    if t._extra and "is_buffer" in t._extra:
        e = dict(t._extra)
        e.pop("is_buffer", None)
        e.pop("persistent", None)
        t._extra = e or None


_UNINIT_MSG = (
    "Attempted to use an uninitialized parameter in {}. This error happens when you are using a "
    "`LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. "
    "When using LazyModules Call `forward` with a dummy batch to initialize the parameters before "
    "calling torch functions"
)


def _uninit_error() -> ValueError:
    # the op that touched the array: the registry's public function holds its OpDef as ``od``;
    # else the function that touched it
    f = caller = sys._getframe(2)
    name = None
    while f is not None and name is None:
        name = getattr(f.f_locals.get("od"), "name", None)
        f = f.f_back
    return ValueError(_UNINIT_MSG.format(name or caller.f_code.co_name))


class _UninitArray(np.ndarray):
    """The empty array of an uninitialized parameter/buffer: numpy computing on it (a ufunc, a
    numpy function, indexing) raises torch's ValueError. Metadata (dtype, astype for ``.to``)
    works, and ops on other tensors pay nothing: only this array carries the check."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _uninit_error()

    def __array_function__(self, func, types, args, kwargs):
        raise _uninit_error()

    def __getitem__(self, key):
        raise _uninit_error()

    def __setitem__(self, key, value):  # in-place fills (init.zeros_, copy_ ...)
        raise _uninit_error()

    def fill(self, value):
        raise _uninit_error()


register_backend(_UninitArray, np)


def _uninit_array(data: Tensor) -> Tensor:
    if type(data._data) is np.ndarray:  # cpu only: a cupy array keeps its plain type
        data._data = data._data.view(_UninitArray)
    return data


class UninitializedTensorMixin:
    """Shared behaviour of UninitializedParameter/UninitializedBuffer: no shape until
    ``materialize(shape)`` turns the object into a regular Parameter/Tensor in place."""

    __slots__ = ()
    cls_to_become = None
    # ops on one fail on its placeholder array, as before dispatch existed (no subclass results)
    __torch_function__ = _disabled_torch_function_impl

    def materialize(self, shape, device=None, dtype=None) -> None:
        from ..core.ops import creation

        if device is None:
            device = self._data_device()
        if dtype is None:
            dtype = self.dtype
        if isinstance(shape, int):
            shape = (shape,)
        new = creation.empty(tuple(shape), device=device, dtype=dtype)
        self._data = new._data
        self._names = None
        self.__class__ = self.cls_to_become

    def _data_device(self):
        return self.device

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes."
        )

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (lazy modules)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        from ..core.ops import creation

        data = _uninit_array(creation.empty(0, device=device, dtype=dtype))
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (lazy modules); ``materialize`` makes it a plain
    Tensor in place."""

    __slots__ = ()  # the layout of Tensor, so materialize can turn it into a plain Tensor
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent=True):
        from ..core.ops import creation

        data = _uninit_array(creation.empty(0, device=device, dtype=dtype))
        t = Tensor._make_subclass(cls, data, requires_grad)
        t._extra = {"is_buffer": True, "persistent": persistent}
        return t

    def __init__(self, *args, **kwargs) -> None:
        pass

    @property
    def persistent(self) -> bool:
        return _buffer_persistent(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype, self.persistent)
        memo[id(self)] = result
        return result


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)
