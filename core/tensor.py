"""The Tensor: a lean __slots__ wrapper of one numpy/cupy array. Ops are installed from the registry."""

from __future__ import annotations

import numbers

import numpy as np

from . import dtype as _dt
from . import vmap_state as _vmap
from .device import array_module, device_of
from .dims import DimTypeError as _DimTypeError
from .vmap_state import SLICES as _VMAP_SLICES


class Size(tuple):
    """A tensor's shape: a tuple of ints (torch.Size). Slicing and concatenation give a Size."""

    __module__ = "ember"  # printed (and pickled) as ember.Size, like torch.Size
    __slots__ = ()

    def __new__(cls, sizes=()):
        out = []
        for i, s in enumerate(sizes):
            if type(s) is not int:
                if isinstance(s, float) or not hasattr(s, "__index__"):
                    np_ = "numpy." if isinstance(s, np.generic) else ""  # (torch's tp_name)
                    raise TypeError(
                        f"torch.Size() takes an iterable of 'int' (item {i} is "
                        f"'{np_}{type(s).__name__}')"
                    )
                s = s.__index__()
            out.append(s)
        return tuple.__new__(cls, out)

    def __repr__(self) -> str:
        return f"{_dt.DISPLAY[0]}.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return _size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return _size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return _size(tuple.__add__(other, self))

    def __mul__(self, n):
        return _size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


def _size(shape) -> Size:
    """Size from a tuple of ints, without validation (the hot path: ``t.shape``)."""
    return tuple.__new__(Size, shape)


_new = object.__new__
_ndarray = np.ndarray
_ALL = object()  # size()/stride() without a dim (None is a dim lookup on a named tensor)
_FLOAT_WARNED = False
_NONLEAF_GRAD_MSG = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)


def _warn_float_of_grad() -> None:
    """torch warns once per process when float() reads a tensor that requires grad (in grad
    mode)."""
    global _FLOAT_WARNED
    _FLOAT_WARNED = True
    import warnings

    warnings.warn(
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
        "behavior.\nConsider using tensor.detach() first.",
        UserWarning,
        stacklevel=3,
    )


_generic = np.generic
# numpy's error for np.array(t, copy=False) on torch, whose __array__ cannot promise no copy
_NO_COPY_MSG = (
    "Unable to avoid copy while creating an array as requested.\nIf using "
    "`np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a copy when needed "
    "(no behavior change in NumPy 1.x).\nFor more details, see "
    "https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
    "#adapting-to-changes-in-the-copy-keyword."
)


def _dim_arg_error(fn, dim) -> TypeError:
    """torch's parser error for a size()/stride() dim that is no int (bool, float, a list)."""
    from .arg_errors import type_name

    return TypeError(f"{fn}(): argument 'dim' (position 1) must be int, not {type_name(dim)}")


def _no_dims_error(dim) -> IndexError:
    """``size(dim)``/``stride(dim)`` of a 0-d tensor: torch's ops wrap -1 and 0 there, these two
    methods do not."""
    return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


class Tensor:
    """A multi-dimensional array with autograd, device placement and optional dimension names.

    ``_data`` is the array (numpy on cpu, cupy on cuda). ``_names`` is None (unnamed: the fast path)
    or a tuple of ``str | None``. ``_ver`` is a one-item list shared by every view of one storage;
    in-place ops bump it so autograd can detect saved tensors that changed. ``_extra`` holds rarely
    used state (hooks, retain_grad, view base, output index) so the common tensor stays small.
    """

    __module__ = "ember"  # printed (and pickled) as ember.Tensor, like torch.Tensor
    __slots__ = (
        "__weakref__",
        "_data",
        "_extra",
        "_grad",
        "_grad_fn",
        "_names",
        "_ver",
        "requires_grad",
    )

    __array_priority__ = 1000  # numpy defers to our reflected dunders

    def __new__(cls, *args, device=None):
        """torch's legacy constructor: ``Tensor(2, 3)`` is uninitialised (default float dtype),
        ``Tensor([1., 2.])`` copies data as the default float dtype, ``Tensor(size)`` allocates,
        ``Tensor(t)`` aliases ``t``. A subclass ``C(...)`` gives an instance of ``C``."""
        t = _legacy_new(args, device)
        return t if cls is Tensor else Tensor._make_subclass(cls, t, t.requires_grad)

    @staticmethod
    def _make_subclass(subclass, data: Tensor, require_grad: bool = False) -> Tensor:
        """An instance of Tensor subclass ``cls`` sharing ``data``'s storage (torch's helper for
        nn.Parameter-style subclasses). ``data`` is detached; ``require_grad`` sets
        requires_grad."""
        t = _new(subclass)
        t._data = data._data
        t.requires_grad = False
        t._grad_fn = None
        t._grad = None
        t._names = data._names
        t._ver = data._ver
        ex = data._extra
        t._extra = (
            {"base": data._base_or_self()}
            if ex and ex.get("base") is not None
            else {"inf": True}  # an inference tensor's subclass is one too (Parameter refuses it)
            if ex and ex.get("inf")
            else None
        )
        if require_grad:
            t.requires_grad_(True)
        return t

    def as_subclass(self, cls) -> Tensor:
        """This tensor's data viewed as an instance of Tensor subclass ``cls`` (no copy)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): argument 'cls' must be a Tensor subclass, got {cls!r}")
        src = self
        if self.requires_grad and self._grad_fn is None and _state.enabled:
            # a leaf's alias is a graph node (torch's AliasBackward0): its gradient reaches self
            src = self.view_as(self)
        t = Tensor._make_subclass(cls, src)
        t.requires_grad = src.requires_grad
        t._grad_fn = src._grad_fn
        return t

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
        return _size(self._data.shape)

    def size(self, dim=_ALL):
        if dim is _ALL:
            return _size(self._data.shape)
        if dim is None:
            if self._names is not None:  # a named tensor: size(None) is a lookup of no name
                self._dim(None)
            return _size(self._data.shape)
        if type(dim) is int:  # the common x.size(0): an in-range int dim
            s = self._data.shape
            if -len(s) <= dim < len(s):
                return s[dim]
        try:
            return self._data.shape[self._dim(dim)]
        except IndexError:
            if self._data.ndim:
                raise
            raise _no_dims_error(dim) from None
        except _DimTypeError:
            raise _dim_arg_error("size", dim) from None

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

    def stride(self, dim=_ALL):
        a = self._data
        if a.size or not a.ndim or any(a.strides):
            st = tuple(s // a.itemsize for s in a.strides)
        else:  # numpy gives a new empty array zero strides; torch, contiguous ones (0 counts as 1)
            st, n = [], 1
            for s in reversed(a.shape):
                st.append(n)
                n *= s or 1
            st = tuple(reversed(st))
        if dim is _ALL:
            return st
        if dim is None:
            if self._names is not None:  # as in size(None)
                self._dim(None)
            return st
        try:
            return st[self._dim(dim)]
        except IndexError:
            if self._data.ndim:
                raise
            raise _no_dims_error(dim) from None
        except _DimTypeError:
            raise _dim_arg_error("stride", dim) from None

    def storage_offset(self) -> int:
        base = self._extra.get("base") if self._extra else None
        if base is None:
            return 0
        xp = array_module(self._data)
        return int((_ptr(self._data, xp) - _ptr(base._data, xp)) // self._data.itemsize)

    def data_ptr(self) -> int:
        if _VMAP_SLICES:
            _vmap.refuse(self, _vmap.STORAGE_MSG)
        if self.is_meta:
            return 0  # no data
        return _ptr(self._data, array_module(self._data))

    def get_device(self) -> int:
        d = self.device
        return d.index if d.type == "cuda" else -1

    @property
    def layout(self):
        from .layout import strided

        return strided

    @property
    def is_leaf(self) -> bool:
        ex = self._extra
        if ex and ("gv" in ex or "ngr" in ex):
            return self.grad_fn is None  # a view: regenerated (or refused) as torch's
        return self._grad_fn is None

    @is_leaf.setter
    def is_leaf(self, value) -> None:
        raise AttributeError("attribute 'is_leaf' of 'ember.Tensor' objects is not writable")

    @property
    def grad_fn(self):
        """The node that computed this tensor (None for leaves and tensors made without grad).

        A view whose base changed in place since gets its regenerated node, as torch's does;
        the node's type is named like torch's (``type(y.grad_fn).__name__ == "MulBackward0"``).
        Internals read the ``_grad_fn`` slot, which does neither."""
        ex = self._extra
        if ex and "gv" in ex and ex["gv"] != self._ver[0]:
            from ..autograd.views import refresh

            refresh(self)
        elif ex and "ngr" in ex:
            from .registry import check_no_grad_view

            check_no_grad_view(self)
        node = self._grad_fn
        if node is not None and node.__class__ is _Node:
            node.__class__ = _typed_node(node)
        return node

    @grad_fn.setter
    def grad_fn(self, value) -> None:
        raise AttributeError("attribute 'grad_fn' of 'ember.Tensor' objects is not writable")

    @property
    def is_sparse(self) -> bool:
        return False

    is_quantized = is_sparse_csr = is_sparse

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f" or self._data.dtype is _dt.bfloat16.np

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def is_nonzero(self) -> bool:
        """The truth value of a one-element tensor (torch.Tensor.is_nonzero)."""
        n = self._data.size
        if n != 1:
            raise RuntimeError(
                "Boolean value of Tensor with "
                f"{'no values' if n == 0 else 'more than one value'} is ambiguous"
            )
        return bool(self.item())

    def is_pinned(self, device=None) -> bool:
        return False  # ember has no pinned host memory

    def is_shared(self) -> bool:
        # share_memory_ puts the data in a shared file mapping (core/shared_memory.py)
        import mmap

        a = self._data
        while isinstance(getattr(a, "base", None), np.ndarray):
            a = a.base
        b = getattr(a, "base", None)
        return isinstance(b, memoryview) and isinstance(b.obj, mmap.mmap)

    # ------------------------------------------------------------------ names
    @property
    def names(self) -> tuple:
        """The dimension names: a tuple of ``str | None``, one per dim (all None when unnamed)."""
        n = self._names
        return (None,) * self._data.ndim if n is None else n

    @names.setter
    def names(self, names) -> None:
        from .names import check_names

        new = None if names is None else check_names(names, self._data.ndim)
        self._names = new
        g = self._grad
        if g is not None and g._data.shape == self._data.shape:
            g._names = new  # keep t.grad.names == t.names

    def has_names(self) -> bool:
        """True when any dim has a name."""
        return self._names is not None

    def is_inference(self) -> bool:
        """Whether this tensor was made in inference mode (a view: whether its base was)."""
        from ..autograd.grad_mode import _inference_tensor

        return _inference_tensor(self)

    def _dim(self, dim) -> int:
        """Normalise a dim argument (int or name) to a non-negative index, with torch's errors."""
        from .dims import normalize_dim

        return normalize_dim(self, dim)

    # ------------------------------------------------------------------ autograd attributes
    @property
    def grad(self):
        g = self._grad
        if g is None and self._grad_fn is not None and not self.retains_grad:
            import warnings

            warnings.warn(_NONLEAF_GRAD_MSG, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, g) -> None:
        from ..autograd.engine import check_grad_assignment

        self._grad = None if g is None else check_grad_assignment(self, g)

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        from .runtime import _bool_arg

        # torch's binding takes only a real bool: 1, None or a 0-d tensor are a TypeError
        _bool_arg("requires_grad_", "requires_grad", " (position 1)", requires_grad)
        if _vmap.TRANSFORMS[0]:
            _vmap.refuse_requires_grad()
        if not requires_grad and self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self.is_inference():
            from ..autograd.grad_mode import _state

            if not _state.inference:
                raise RuntimeError(
                    "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                    "allowed."
                )
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self) -> Tensor:
        """A new tensor sharing storage (and version counter) with no autograd history."""
        t = _new(Tensor)
        t._data = self._data
        t.requires_grad = False
        t._grad_fn = None
        t._grad = None
        t._names = self._names
        t._ver = self._ver
        # the storage's root (storage_offset, in-place writes) but not a view for autograd
        t._extra = {"base": self._base_or_self(), "detached": True}
        if _VMAP_SLICES:
            _vmap.mark_results((self,), (t,))
        return t

    def detach_(self) -> Tensor:
        ex = self._extra
        if ex and ex.get("base") is not None and not ex.get("detached"):
            # torch refuses every autograd view, whether or not its base requires grad
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._grad_fn = None
        self.requires_grad = False
        return self

    def retain_grad(self) -> None:
        from ..autograd.engine import retain_grad

        retain_grad(self)

    @property
    def retains_grad(self) -> bool:
        return bool(self._extra and self._extra.get("retains_grad"))

    @retains_grad.setter
    def retains_grad(self, value) -> None:
        raise AttributeError("attribute 'retains_grad' of 'ember.Tensor' objects is not writable")

    def register_hook(self, hook):
        from ..autograd.engine import register_tensor_hook

        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        from ..autograd.engine import register_post_accumulate_grad_hook

        return register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (see ember.autograd.backward)."""
        from ..autograd.engine import backward

        # as torch's: a tensor is one gradient, anything else a sequence of them (a number is
        # "not iterable", a list of numbers "can be either Tensors or None")
        grads = (
            None if gradient is None else (gradient,) if isinstance(gradient, Tensor) else gradient
        )
        backward((self,), grads, retain_graph, create_graph, inputs=inputs)

    @property
    def _version(self) -> int:
        if self.is_inference():
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._ver[0]

    @property
    def _base(self):
        ex = self._extra
        return None if not ex or ex.get("detached") else ex.get("base")

    def _is_view(self) -> bool:
        """Whether this tensor is an autograd view of another (``_base`` is set), as in torch."""
        return self._base is not None

    def _base_or_self(self) -> Tensor:
        b = self._extra.get("base") if self._extra else None
        return self if b is None else b

    @property
    def data(self) -> Tensor:
        """The same storage without autograd history. Unlike detach(), in-place changes through
        ``.data`` are invisible to autograd (a fresh version counter), as in torch."""
        if _VMAP_SLICES:
            _vmap.refuse(self, _vmap.DATA_MSG)
        t = self.detach()
        t._ver = [0]
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if _VMAP_SLICES:
            _vmap.refuse(self, _vmap.SET_DATA_MSG)
            _vmap.refuse(value, _vmap.SET_DATA_MSG)
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self.requires_grad and value._data.dtype.kind not in "fcV":
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex "
                "dtype"
            )
        self._data = value._data
        self._names = value._names

    # ------------------------------------------------------------------ conversion
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The cpu array sharing memory with this tensor (torch.Tensor.numpy)."""
        if _VMAP_SLICES:
            _vmap.refuse(self, _vmap.STORAGE_MSG)
        # torch refuses only where autograd records (not under no_grad, nor in a custom op's or a
        # Function's forward)
        if self.requires_grad and not force and _state.enabled:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead."
            )
        if type(self._data) is not _ndarray:
            if not force:
                raise TypeError(
                    f"can't convert {self.device} device type tensor to numpy. Use "
                    "Tensor.cpu() to copy the tensor to host memory first."
                )
            a = self.cpu()._data
        else:
            a = self._data
        if a.dtype is _dt.bfloat16.np:  # numpy has no bfloat16: torch refuses, even forced
            raise TypeError("Got unsupported ScalarType BFloat16")
        return a

    def __array__(self, dtype=None, copy=None):
        # numpy 2's signature (torch's has no copy=, for which numpy warns: ember does not), with
        # torch's outcomes: numpy()'s checks (grad, bfloat16; another device is read through a
        # host copy), and np.array(t, copy=False) refused as numpy refuses it for torch
        a = self.numpy(force=type(self._data) is not _ndarray and not self.requires_grad)
        if copy is False:
            raise ValueError(_NO_COPY_MSG)
        b = a if dtype is None else a.astype(dtype, copy=False)
        return b.copy() if copy and b is a else b

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # like torch (without numpy 2's DeprecationWarning about its one-argument form): a
        # numpy ufunc (or np.transpose & co.) on a tensor answers a cpu tensor sharing the
        # result's memory, a 0-d one even for a reduction; a bool result comes back as uint8
        from .ops.creation import from_numpy

        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return from_numpy(np.asarray(array))

    def tolist(self):
        if _VMAP_SLICES:
            _vmap.refuse(self, _vmap.STORAGE_MSG)
        a = self._data if type(self._data) is _ndarray else self.cpu()._data
        if a.dtype is _dt.bfloat16.np:
            a = a.astype(np.float32)
        return a.tolist()

    def item(self):
        if _VMAP_SLICES:
            _vmap.refuse_value(self, _vmap.ITEM_MSG)
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        a = self._data
        if type(a) is not _ndarray:
            if self.is_meta:
                raise RuntimeError("Tensor.item() cannot be called on meta tensors")
            a = self.cpu()._data
        if a.dtype is _dt.bfloat16.np:
            a = a.astype(np.float32)
        return a.reshape(()).item()

    def __bool__(self) -> bool:
        if _VMAP_SLICES:
            _vmap.refuse_value(self, _vmap.CONTROL_FLOW_MSG)
        n = self._data.size
        if n != 1:
            raise RuntimeError(
                "Boolean value of Tensor with "
                f"{'no values' if n == 0 else 'more than one value'} is ambiguous"
            )
        return bool(self.item())

    def _scalar(self, ctype: str | None = None):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        v = self.item()
        if ctype is not None and type(v) is complex:
            if v.imag:
                raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
            v = v.real
        return v

    def __float__(self) -> float:
        if not _FLOAT_WARNED and self.requires_grad and _state.enabled:
            _warn_float_of_grad()
        return float(self._scalar("double"))

    def __int__(self) -> int:
        return int(self._scalar("int64_t"))

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        # like torch: any single-element integer or bool tensor, so it works as a slice bound
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if not self._data.ndim:
            raise TypeError("iteration over a 0-d tensor")
        unbind = getattr(self, "unbind", None)  # the shape family's op (differentiable)
        if unbind is not None:
            return iter(unbind(0))
        return iter([self[i] for i in range(self._data.shape[0])])

    def __contains__(self, element) -> bool:
        if not isinstance(element, (Tensor, int, float, complex)):  # bool is an int
            raise RuntimeError(  # noqa: TRY004  (torch's type)
                "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                f"{type(element)}."
            )
        return bool((self == element).any())

    def __reversed__(self) -> Tensor:
        # like torch: the tensor flipped along dim 0 (a 0-d tensor is itself)
        return self.flip(0) if self._data.ndim else self

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        # like torch: a 0-d tensor formats as its Python number (f"{loss:.4f}", f"{loss}")
        if self._data.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return str(self)

    def __repr__(self, *, tensor_contents=None) -> str:
        from .printing import tensor_repr

        return tensor_repr(self, tensor_contents)

    __str__ = __repr__

    def __dlpack__(self, *args, **kwargs):
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __reduce_ex__(self, proto):
        # a cpu copy of the values + device, requires_grad, names; subclasses keep their type and
        # instance __dict__ (Parameter-style attributes). The autograd graph is not pickled.
        a = self._data
        if type(a) is _ndarray:
            a = np.array(a)
        elif not self.is_meta:  # (a meta array pickles as its shape and dtype)
            a = self.detach().cpu()._data
        state = getattr(self, "__dict__", None) or None
        return (
            _rebuild_tensor,
            (type(self), a, str(self.device), self.requires_grad, self._names, state),
        )

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support "
                "the deepcopy protocol at the moment.  If you were attempting to "
                "deepcopy a module, this may be because of a torch.nn.utils.weight_norm "
                "usage, see https://github.com/pytorch/pytorch/pull/103001"
            )
        if id(self) in memo:
            return memo[id(self)]
        t = _new(type(self))
        t._data = self._data.copy()
        t.requires_grad = self.requires_grad
        t._grad_fn = None
        t._grad = None
        t._names = self._names
        t._ver = [0]
        t._extra = None
        memo[id(self)] = t
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        d = getattr(self, "__dict__", None)
        if d:
            import copy

            t.__dict__.update(copy.deepcopy(d, memo))
        return t

    # ------------------------------------------------------------------ legacy type strings
    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """No argument: the legacy type string, torch-spelled so PyTorch code comparing it keeps
        working (``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``). With a dtype, or a type
        string (``'torch.DoubleTensor'``, ``'ember.IntTensor'``): a cast, like ``to(dtype)``."""
        if dtype is None:
            prefix = "torch.cuda." if self.is_cuda else "torch."
            return prefix + _TYPE_NAMES[self.dtype]
        dtype = getattr(dtype, "_legacy_name", dtype)  # a legacy type class: torch.LongTensor
        if isinstance(dtype, str):
            name = dtype[6:] if dtype.startswith(("torch.", "ember.")) else ""
            cuda = name.startswith("cuda.")
            target = _TENSOR_TYPES.get(name[5:] if cuda else name)
            if target is None:
                raise ValueError(f"invalid type: '{dtype}'")
            t = self.to(target)
            return t.cuda() if cuda and not t.is_cuda else (t.cpu() if not cuda else t)
        if isinstance(dtype, _dt.dtype):
            return self.to(dtype)
        if isinstance(dtype, type):  # like torch (ValueError): classes are not dtypes here
            raise ValueError(  # noqa: TRY004
                f"invalid type: '{dtype.__module__}.{dtype.__qualname__}'"
            )
        raise TypeError("dtype must be a type, str, or dtype object")


_TYPE_NAMES = {d: _dt.legacy_type_name(d) for d in _dt.ALL}


def _set_part(self, part: str, value) -> None:
    """``z.real = v`` / ``z.imag = v``: torch's ``z.real.copy_(v)`` (the part is a view, so
    the write lands in ``z``; a real tensor's ``.imag`` raises as its getter does)."""
    view = getattr(self, part)
    if not isinstance(value, (Tensor, bool, int, float, complex, _generic)):
        raise TypeError(
            f"can't assign a {type(value).__name__} to a torch.{_TYPE_NAMES[view.dtype]}"
        )
    view.copy_(value)


def _set_real(self, value) -> None:
    _set_part(self, "real", value)


def _set_imag(self, value) -> None:
    _set_part(self, "imag", value)


_TENSOR_TYPES = {v: k for k, v in _TYPE_NAMES.items()}


def number_arg(v, fn: str, arg: str, pos: int | None = None, kind: str = "Number"):
    """A number argument as a Python number: torch takes a 0-d tensor there too, and no other
    tensor or type (its message, naming ``fn``'s argument ``arg`` at position ``pos``; ``kind``
    "int" refuses floats and bools, "float" a Python complex)."""
    t = type(v)
    if t is int or (t is float and kind != "int"):  # the common case, without the ABC check
        return v
    if isinstance(v, Tensor):
        if v.dim() == 0:
            x = v.item()
            if kind == "float" and type(x) is complex:  # torch converts it to a double
                if x.imag:
                    raise RuntimeError("value cannot be converted to type double without overflow")
                return x.real
            return x
    elif kind == "int":
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return v
    elif kind == "float" and t is complex:  # (a numpy complex passes, as its real part)
        pass
    elif isinstance(v, numbers.Number):  # bool, numpy scalars and complex pass torch's parser
        return v
    from .arg_errors import type_name

    at = f" (position {pos})" if pos else ""
    raise TypeError(f"{fn}(): argument '{arg}'{at} must be {kind}, not {type_name(v)}")


def _rebuild_tensor(cls, arr, device, requires_grad, names, state=None):
    """Unpickle a tensor (see Tensor.__reduce_ex__)."""
    t = _wrap(arr, names)
    if device != "cpu":
        t = t.to(device)
    if cls is not Tensor:
        t = Tensor._make_subclass(cls, t)
        if state:
            t.__dict__.update(state)
    if requires_grad:
        t.requires_grad = True
    return t


def _legacy_new(args, device) -> Tensor:
    from .ops import creation

    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        return t if device is None else t.to(device)
    if len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], Size):
        data = args[0]
        if isinstance(data, (float, complex, bool)) or (
            not hasattr(data, "__len__") and hasattr(data, "__float__")
        ):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if isinstance(data, np.ndarray):
            creation._check_numpy(data, shared=True)  # torch warns as for from_numpy here
        return creation._tensor(data, dtype=_dt.get_default_dtype(), device=device)
    for a in args:
        if not isinstance(a, int) or isinstance(a, bool):
            if isinstance(a, Size) and len(args) == 1:
                continue
            raise TypeError(
                f"new() received an invalid combination of arguments - got "
                f"({', '.join(type(x).__name__ for x in args)})"
            )
    size = args[0] if len(args) == 1 and isinstance(args[0], Size) else (args or (0,))
    return creation.empty(*size, device=device)


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
    t._grad_fn = None
    t._grad = None
    t._names = names
    t._ver = [0]
    t._extra = None
    if _INF_OPEN[0] and _state.inference:
        t._extra = {"inf": True}  # made in inference mode (factories, ember.tensor)
    return t


def _view(base: Tensor, arr, names=None) -> Tensor:
    """A tensor over ``arr``, a view of ``base``'s storage: shares the version counter."""
    t = _new(Tensor)
    t._data = arr
    t.requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._names = names
    t._ver = base._ver
    t._extra = {"base": base._base_or_self()}
    return t


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


# torch's function forms of a few Tensor methods
def _not_tensor(fn: str, input, e: Exception) -> Exception:
    from .arg_errors import must_be_tensor

    return must_be_tensor(fn, ("input",), (input,)) or e


def numel(input: Tensor) -> int:
    try:
        return input.numel()
    except AttributeError as e:
        raise _not_tensor("numel", input, e) from None


def is_signed(input: Tensor) -> bool:
    return input.is_signed()


def get_device(input: Tensor) -> int:
    return input.get_device()


def detach(input: Tensor) -> Tensor:
    return input.detach()


def is_nonzero(input: Tensor) -> bool:
    return input.is_nonzero()


def is_conj(input: Tensor) -> bool:
    try:
        return input.is_conj()
    except AttributeError as e:
        raise _not_tensor("is_conj", input, e) from None


def to_array(x, xp=np, dtype=None):
    """The raw array of a Tensor, or a new array of ``x`` on module ``xp``."""
    if isinstance(x, Tensor):
        return x._data
    return xp.asarray(x, dtype=dtype)


# last: importing ember.autograd imports modules that need Tensor (used by _wrap at call time)
from ..autograd.grad_mode import _INFERENCE_OPEN as _INF_OPEN
from ..autograd.grad_mode import _state
from ..autograd.node import Node as _Node
from ..autograd.node import typed as _typed_node
