"""The Tensor: a lean __slots__ wrapper of one numpy/cupy array. Ops are installed from the registry."""

from __future__ import annotations

import numpy as np

from . import dtype as _dt
from .device import array_module, device_of, to_device, module_for


class Size(tuple):
    """A tensor's shape: a tuple of ints (torch.Size)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


_new = object.__new__
_ndarray = np.ndarray
_generic = np.generic


class Tensor:
    """A multi-dimensional array with autograd, device placement and optional dimension names.

    ``_data`` is the array (numpy on cpu, cupy on cuda). ``_names`` is None (unnamed: the fast path)
    or a tuple of ``str | None``. ``_ver`` is a one-item list shared by every view of one storage;
    in-place ops bump it so autograd can detect saved tensors that changed. ``_extra`` holds rarely
    used state (hooks, retain_grad, view base, output index) so the common tensor stays small.
    """

    __slots__ = ("_data", "requires_grad", "grad_fn", "_grad", "_names", "_ver", "_extra",
                 "__weakref__")

    __array_priority__ = 1000  # numpy defers to our reflected dunders

    def __new__(cls, *args, **kwargs):
        # torch's legacy constructor: Tensor(2, 3) is uninitialised, Tensor([1., 2.]) copies data
        from .ops.creation import _legacy_new

        return _legacy_new(cls, *args, **kwargs)

    # ------------------------------------------------------------------ basic attributes
    @property
    def dtype(self) -> _dt.dtype:
        return _dt._FROM_NP[self._data.dtype]

    @property
    def device(self):
        return device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return type(self._data) is _ndarray

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[self._dim(dim)]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def stride(self, dim=None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[self._dim(dim)]

    def storage_offset(self) -> int:
        base = self._extra.get("base") if self._extra else None
        if base is None:
            return 0
        xp = array_module(self._data)
        return int((_ptr(self._data, xp) - _ptr(base._data, xp)) // self._data.itemsize)

    def data_ptr(self) -> int:
        return _ptr(self._data, array_module(self._data))

    def get_device(self) -> int:
        d = self.device
        return -1 if d.type == "cpu" else d.index

    @property
    def layout(self):
        from .layout import strided

        return strided

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def is_sparse(self) -> bool:
        return False

    is_quantized = is_meta = is_sparse

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f" or self._data.dtype is _dt.bfloat16.np

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def is_inference(self) -> bool:
        return False

    def _dim(self, dim) -> int:
        """Normalise a dim argument (int or name) to a non-negative index, with torch's errors."""
        from .dims import normalize_dim

        return normalize_dim(self, dim)

    # ------------------------------------------------------------------ autograd attributes
    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, g) -> None:
        from ..autograd.engine import check_grad_assignment

        self._grad = None if g is None else check_grad_assignment(self, g)

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and self._data.dtype.kind not in "fcV" and not self.is_floating_point():
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self) -> "Tensor":
        """A new tensor sharing storage (and version counter) with no autograd history."""
        t = _new(Tensor)
        t._data = self._data
        t.requires_grad = False
        t.grad_fn = None
        t._grad = None
        t._names = self._names
        t._ver = self._ver
        t._extra = {"base": self._base_or_self()}
        return t

    def detach_(self) -> "Tensor":
        if self._extra and self._extra.get("base") is not None and self._extra["base"].requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self.requires_grad = False
        return self

    def retain_grad(self) -> None:
        from ..autograd.engine import retain_grad

        retain_grad(self)

    @property
    def retains_grad(self) -> bool:
        return bool(self._extra and self._extra.get("retains_grad"))

    def register_hook(self, hook):
        from ..autograd.engine import register_tensor_hook

        return register_tensor_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (see ember.autograd.backward)."""
        from ..autograd.engine import backward

        backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph,
                 inputs=inputs)

    @property
    def _version(self) -> int:
        return self._ver[0]

    @property
    def _base(self):
        return self._extra.get("base") if self._extra else None

    def _base_or_self(self) -> "Tensor":
        b = self._extra.get("base") if self._extra else None
        return self if b is None else b

    @property
    def data(self) -> "Tensor":
        return self.detach()

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._data = value._data
        self._names = value._names

    # ------------------------------------------------------------------ conversion
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The cpu array sharing memory with this tensor (torch.Tensor.numpy)."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if type(self._data) is not _ndarray:
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return self.cpu()._data
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self.detach().numpy() if type(self._data) is _ndarray else self.cpu().detach()._data
        return a if dtype is None else a.astype(dtype, copy=False)

    def tolist(self):
        a = self._data if type(self._data) is _ndarray else self.cpu()._data
        if a.dtype is _dt.bfloat16.np:
            a = a.astype(np.float32)
        return a.tolist()

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        a = self._data if type(self._data) is _ndarray else self.cpu()._data
        if a.dtype is _dt.bfloat16.np:
            a = a.astype(np.float32)
        return a.reshape(()).item()

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1 or self._data.ndim:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __repr__(self, *, tensor_contents=None) -> str:
        from .printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __dlpack__(self, *args, **kwargs):
        return self.detach()._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __reduce_ex__(self, proto):
        from .ops.creation import _rebuild

        a = self._data if type(self._data) is _ndarray else self.cpu()._data
        return (_rebuild, (np.array(a), str(self.device), self.requires_grad, self._names))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.  If you were attempting to "
                               "deepcopy a module, this may be because of a torch.nn.utils.weight_norm "
                               "usage, see https://github.com/pytorch/pytorch/pull/103001")
        t = _wrap(self._data.copy(), self._names)
        t.requires_grad = self.requires_grad
        if type(self) is not Tensor:
            t = type(self)(t, requires_grad=self.requires_grad)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t


def _ptr(a, xp) -> int:
    if xp is np:
        return a.__array_interface__["data"][0]
    return a.data.ptr


def _wrap(arr, names=None) -> Tensor:
    """Internal constructor: a new leaf tensor around ``arr`` (no copy)."""
    if type(arr) is not _ndarray and isinstance(arr, _generic):
        arr = np.asarray(arr)
    t = _new(Tensor)
    t._data = arr
    t.requires_grad = False
    t.grad_fn = None
    t._grad = None
    t._names = names
    t._ver = [0]
    t._extra = None
    return t


def _view(base: Tensor, arr, names=None) -> Tensor:
    """A tensor over ``arr``, a view of ``base``'s storage: shares the version counter."""
    t = _new(Tensor)
    t._data = arr
    t.requires_grad = False
    t.grad_fn = None
    t._grad = None
    t._names = names
    t._ver = base._ver
    t._extra = {"base": base._base_or_self()}
    return t


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def to_array(x, xp=np, dtype=None):
    """The raw array of a Tensor, or a new array of ``x`` on module ``xp``."""
    if isinstance(x, Tensor):
        return x._data
    return xp.asarray(x, dtype=dtype)
