"""Sparse tensors: the COO, CSR, CSC, BSR and BSC layouts (torch.sparse_coo_tensor & co.).

A sparse tensor is a ``SparseTensor``, a Tensor subclass that keeps its arrays in its own slots:
``_ci`` (COO: the ``(sparse_dim, nnz)`` indices; compressed layouts: the compressed indices),
``_pi`` (compressed layouts: the plain indices) and ``_vals`` (the values, a dense ember Tensor).
Its base slot ``_data`` is a property that raises, so a dense op handed a sparse tensor fails
loudly instead of computing on the wrong array (the dense hot path pays nothing).

Autograd: every kernel here is written with dense ember ops on ``_vals`` (index_select,
index_add, reshape ...), so gradients reach the values (and through them whatever made them), and
double backward works. A sparse leaf created with ``requires_grad=True`` keeps a leaf ``_vals``;
its ``.grad`` is a sparse tensor with the same indices and the values' gradient.

Compressed layouts are 2-D (plus dense dims); batched compressed tensors are not supported.
Index bounds are always checked (torch checks them only with ``check_invariants=True``), so an
invalid tensor never reaches a numpy kernel.
"""

from __future__ import annotations

import ember as _E  # partially initialised while ember imports; used at call time only

from . import dtype as _dt
from .device import array_module
from .layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .ops.conversion import CAST_METHODS
from .registry import NonStridedError, caller_op_name
from .runtime import _warn_once
from .tensor import _ALL, Size, Tensor, _new, _size, _wrap
from .torch_function import _disabled_torch_function_impl

__all__: list = []  # the factories' and the ops' (both imported at the end)

_COMPRESSED = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
_BLOCK = (sparse_bsr, sparse_bsc)
_ROWS = (sparse_csr, sparse_bsr)  # rows are the compressed dim
# torch's spellings in messages ("SparseCsr") and accessor names per layout
_TNAME = {
    sparse_coo: "Sparse",
    sparse_csr: "SparseCsr",
    sparse_csc: "SparseCsc",
    sparse_bsr: "SparseBsr",
    sparse_bsc: "SparseBsc",
    strided: "Strided",
}
_INAMES = {
    sparse_csr: ("crow_indices", "col_indices"),
    sparse_bsr: ("crow_indices", "col_indices"),
    sparse_csc: ("ccol_indices", "row_indices"),
    sparse_bsc: ("ccol_indices", "row_indices"),
}


class _Invariants:
    """The global flag of ``ember.sparse.check_sparse_tensor_invariants``; ``explicit`` says the
    user chose it (enable, disable or the context manager), which silences the factories' warning
    about implicitly disabled checks."""

    on = False
    explicit = False


# ---------------------------------------------------------------------------- helpers
def _xp(t: Tensor):
    return array_module(t._data)


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _long(xp, a) -> Tensor:
    return _wrap(a.astype(xp.int64, copy=False))


def _segsum(vals: Tensor, idx: Tensor, n: int) -> Tensor:
    """``out[idx[k]] += vals[k]`` into ``n`` rows (differentiable; sort + reduceat on numpy)."""
    if vals.dtype is _dt.bool_:  # duplicates of a bool tensor combine as a logical or
        return _segsum(vals.to(_dt.int64), idx, n).to(_dt.bool_)
    flat = vals.ndim == 1
    v = vals.reshape(-1, 1) if flat else vals  # whole rows take index_add's reduceat path
    z = _E.zeros((n, *v.shape[1:]), dtype=vals.dtype, device=vals.device)
    out = _E.index_add(z, 0, idx, v)
    return out.reshape(n) if flat else out


def _gather_rows(x: Tensor, lin) -> Tensor:
    """``x.reshape(-1, *dense)[lin]`` (differentiable), ``lin`` a raw int array."""
    return x.index_select(0, _long(array_module(lin), lin))


def _ravel(xp, idx, shape):
    """Row-major linear positions of the columns of ``idx`` (one row per dim of ``shape``)."""
    lin = xp.zeros(idx.shape[1], xp.int64)
    for d, s in enumerate(shape):
        lin = lin * s + idx[d]
    return lin


def _unravel(xp, lin, shape):
    if not shape:
        return xp.zeros((0, lin.shape[0]), xp.int64)
    return xp.stack(xp.unravel_index(lin, tuple(shape))).astype(xp.int64)


def _expand_ptr(xp, ptr):
    """Compressed pointers -> the compressed index of every entry (repeat by run length)."""
    # entry k belongs to the last row whose pointer is <= k (searchsorted: numpy and cupy alike)
    nnz = int(ptr[-1]) if ptr.shape[0] else 0
    k = xp.arange(nnz, dtype=ptr.dtype)
    return xp.searchsorted(ptr[1:], k, side="right").astype(xp.int64)


def _ptr_of(xp, idx, n, dtype):
    """Compressed pointers of sorted compressed indices ``idx`` over ``n`` rows."""
    counts = xp.bincount(idx, minlength=n) if idx.size else xp.zeros(n, xp.int64)
    return xp.concatenate((xp.zeros(1, dtype), xp.cumsum(counts).astype(dtype)))


def _not_sparse_error(layout, what):
    return RuntimeError(
        f"{what}: ember does not support {layout.name} tensors here; call .to_dense() first"
    )


# ---------------------------------------------------------------------------- the subclass
class SparseTensor(Tensor):
    """A sparse tensor (layout sparse_coo / sparse_csr / sparse_csc / sparse_bsr / sparse_bsc)."""

    __slots__ = ("_ci", "_coal", "_lay", "_pi", "_shp", "_vals")
    # ops on it give plain Tensors (never dispatched: a cached per-type check)
    __torch_function__ = _disabled_torch_function_impl

    # dense ops read ``_data``: on a sparse tensor that is a loud error, never a wrong array
    @property
    def _data(self):
        # NonStridedError: the registry runs a handler of NON_STRIDED for the op, if there is one
        raise NonStridedError(
            f"{caller_op_name()}: ember does not support {self._lay.name} tensors here; call "
            ".to_dense() first"
        )

    # ------------------------------------------------------------------ attributes
    @property
    def layout(self):
        return self._lay

    @property
    def is_sparse(self) -> bool:
        return self._lay is sparse_coo

    @property
    def is_sparse_csr(self) -> bool:
        return self._lay is sparse_csr

    @property
    def dtype(self):
        return self._vals.dtype

    @property
    def device(self):
        return self._vals.device

    @property
    def is_cpu(self) -> bool:
        return self._vals.is_cpu

    @property
    def shape(self) -> Size:
        return _size(self._shp)

    def size(self, dim=_ALL):
        if dim is _ALL or dim is None:
            return _size(self._shp)
        return self._shp[_wrap_dim(dim, len(self._shp))]

    def dim(self) -> int:
        return len(self._shp)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return len(self._shp)

    def numel(self) -> int:
        return _prod(self._shp)

    nelement = numel

    def element_size(self) -> int:
        return self._vals.element_size()

    @property
    def itemsize(self) -> int:
        return self._vals.itemsize

    def is_floating_point(self) -> bool:
        return self._vals.is_floating_point()

    def is_complex(self) -> bool:
        return self._vals.is_complex()

    def is_contiguous(self, memory_format=None) -> bool:
        raise RuntimeError(f"is_contiguous is not supported for {self._lay.name} tensors")

    def stride(self, dim=_ALL):
        raise RuntimeError(f"{self._lay.name} tensors do not have strides")

    @property
    def names(self) -> tuple:
        # only a conversion from a named dense tensor names a sparse one (to_sparse*, kept by
        # the layout conversions and handed back by to_dense); other sparse ops give unnamed
        return self._names if self._names is not None else (None,) * len(self._shp)

    @names.setter
    def names(self, names) -> None:
        if names is not None and any(n is not None for n in names):
            raise RuntimeError("ember: sparse tensors cannot have dimension names")
        self._names = None  # clearing the names a conversion gave is allowed

    def has_names(self) -> bool:
        return self._names is not None

    # ------------------------------------------------------------------ autograd
    @property
    def requires_grad(self) -> bool:
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value, _who="only Tensors of floating point and complex dtype")

    def requires_grad_(self, requires_grad: bool = True, *, _who=None) -> Tensor:
        if requires_grad and not (self.is_floating_point() or self.is_complex()):
            # torch words it three ways: this method, the attribute (``_who``) and the
            # factories' ``requires_grad=True`` (``_who`` too)
            who = _who or "only Tensors of floating point dtype"
            raise RuntimeError(f"{who} can require gradients")
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._vals.grad_fn

    @property
    def _grad_fn(self):
        # what the engine and optimizers read of a tensor's node, here the values' one
        return self._vals._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._vals._grad_fn is None

    @property
    def grad(self):
        g = self._vals._grad
        if g is None:
            return None
        if self._coal or self._lay is not sparse_coo:
            return self._like(g)
        # uncoalesced: a duplicate's values all received the gradient of their one position;
        # torch lists each position once (sorted, flagged uncoalesced), so summing the sparse
        # gradient gives the gradient of the dense tensor and not a multiple of it
        idx = self._ci._data
        xp = array_module(idx)
        sd = idx.shape[0]
        uniq, first = xp.unique(_ravel(xp, idx, self._shp[:sd]), return_index=True)
        ci = _wrap(_unravel(xp, uniq, self._shp[:sd]))
        return _make(sparse_coo, self._shp, ci, None, _gather_rows(g, first), False)

    @grad.setter
    def grad(self, g) -> None:
        if g is None:
            self._vals._grad = None
            return
        if not isinstance(g, SparseTensor) or g._lay is not self._lay:
            raise RuntimeError("assigned grad has data of a different type")
        self._vals._grad = g._vals

    @grad.deleter
    def grad(self) -> None:
        self._vals._grad = None

    def retain_grad(self) -> None:
        self._vals.retain_grad()

    def detach(self) -> Tensor:
        return self._like(self._vals.detach())

    def detach_(self) -> Tensor:
        self._vals = self._vals.detach()
        return self

    def backward(self, *args, **kwargs):
        raise _not_sparse_error(self._lay, "backward")

    def zero_(self) -> Tensor:
        """No entries left (in place: nnz becomes 0), as torch zeroes a sparse tensor."""
        xp = array_module(self._ci._data)
        sd = self.sparse_dim()
        if self._lay is not sparse_coo:
            raise _not_sparse_error(self._lay, "zero_")
        if self._vals.requires_grad and _E.is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        self._ci = _wrap(xp.zeros((sd, 0), dtype=xp.int64))
        v = self._vals._data
        self._vals = _wrap(xp.zeros((0, *v.shape[1:]), dtype=v.dtype))
        self._coal = True
        self._ver[0] += 1
        return self

    def _like(self, vals: Tensor, coalesced=None) -> SparseTensor:
        """A sparse tensor with this one's indices and ``vals``."""
        c = self._coal if coalesced is None else coalesced
        return _make(self._lay, self._shp, self._ci, self._pi, vals, c)

    # ------------------------------------------------------------------ copies and casts
    def clone(self, *, memory_format=None) -> Tensor:
        ci = self._ci.clone()
        pi = None if self._pi is None else self._pi.clone()
        return _make(self._lay, self._shp, ci, pi, self._vals.clone(), self._coal)

    def to(self, *args, non_blocking: bool = False, copy: bool = False, **kwargs):
        from .ops.conversion import _parse_to

        dev, dtype = _parse_to(args, kwargs)[:2]
        vals = self._vals
        if dtype is not None:
            vals = vals.to(dtype)
        ci, pi = self._ci, self._pi
        if dev is not None and _E.device(dev) != self.device:
            vals, ci = vals.to(dev), ci.to(dev)
            pi = None if pi is None else pi.to(dev)
        if vals is self._vals and ci is self._ci:
            return self.clone() if copy else self
        return _make(self._lay, self._shp, ci, pi, vals, self._coal)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None):
        return self.to("cuda" if device is None else device)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        if dtype is None:
            name = _dt.legacy_type_name(self.dtype)
            return ("torch.cuda.sparse." if self.is_cuda else "torch.sparse.") + name
        return self.to(dtype)

    def __deepcopy__(self, memo):
        if self._vals._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support "
                "the deepcopy protocol at the moment."
            )
        t = self.clone().detach()
        if self.requires_grad:
            t.requires_grad_(True)
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, proto):
        # the index arrays and the values as dense cpu tensors (ember.save stores them as arrays,
        # and ember.load(weights_only=True) allows _rebuild_sparse); the autograd graph is not kept
        return (
            _rebuild_sparse,
            (
                self._lay.name,
                tuple(self._shp),
                self._ci.detach().cpu(),
                None if self._pi is None else self._pi.detach().cpu(),
                self._vals.detach().cpu(),
                self._coal,
                str(self.device),
                # torch's COO rebuild drops requires_grad; its compressed rebuild keeps it
                self.requires_grad and self._lay is not sparse_coo,
            ),
        )

    def __repr__(self, *, tensor_contents=None) -> str:
        from .sparse_ops import sparse_repr

        return sparse_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __len__(self) -> int:
        if not self._shp:
            raise TypeError("len() of a 0-d tensor")
        return self._shp[0]

    def numpy(self, *, force: bool = False):
        raise RuntimeError(
            f"can't convert a {self._lay.name} tensor to numpy; call .to_dense() first"
        )

    # ------------------------------------------------------------------ accessors
    def sparse_dim(self) -> int:
        return self._ci.shape[0] if self._lay is sparse_coo else 2

    def dense_dim(self) -> int:
        return len(self._shp) - self.sparse_dim()

    def _nnz(self) -> int:
        return self._vals.shape[0]

    def _indices(self) -> Tensor:
        self._need(sparse_coo, "_indices", "sparse coordinate")
        return self._ci

    def _values(self) -> Tensor:
        # torch's raw accessor aliases the stored values outside autograd (values() tracks)
        return self._vals.detach()

    def _vals_view(self) -> Tensor:
        v = self._vals
        return v.view(v.shape) if v.requires_grad else v

    def indices(self) -> Tensor:
        self._need(sparse_coo, "indices", "sparse coordinate")
        if not self._coal:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._ci

    def values(self) -> Tensor:
        if self._lay is sparse_coo and not self._coal:
            raise RuntimeError(
                "Cannot get values on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._vals_view()

    def crow_indices(self) -> Tensor:
        self._need(_ROWS, "crow_indices", "sparse row compressed")
        return self._ci

    def col_indices(self) -> Tensor:
        self._need(_ROWS, "col_indices", "sparse row compressed")
        return self._pi

    def ccol_indices(self) -> Tensor:
        self._need((sparse_csc, sparse_bsc), "ccol_indices", "sparse column compressed")
        return self._ci

    def row_indices(self) -> Tensor:
        self._need((sparse_csc, sparse_bsc), "row_indices", "sparse column compressed")
        return self._pi

    def _need(self, layouts, who, kind) -> None:
        ok = self._lay is layouts if not isinstance(layouts, tuple) else self._lay in layouts
        if not ok:
            raise RuntimeError(f"{who} expected {kind} tensor layout but got {_TNAME[self._lay]}")

    def is_coalesced(self) -> bool:
        self._need(sparse_coo, "is_coalesced", "sparse coordinate")
        return self._coal

    def _coalesced_(self, coalesced: bool) -> Tensor:
        self._need(sparse_coo, "_coalesced_", "sparse coordinate")
        self._coal = bool(coalesced)
        return self

    def coalesce(self) -> Tensor:
        """Duplicates summed, indices sorted (row-major); ``self`` when already coalesced."""
        self._need(sparse_coo, "coalesce", "sparse coordinate")
        if self._coal:
            return self
        idx = self._ci._data
        xp = array_module(idx)
        sd = idx.shape[0]
        lin = _ravel(xp, idx, self._shp[:sd])
        uniq, inv = xp.unique(lin, return_inverse=True)
        vals = _segsum(self._vals, _long(xp, inv.reshape(-1)), uniq.shape[0])
        ci = _wrap(_unravel(xp, uniq, self._shp[:sd]))
        return _make(sparse_coo, self._shp, ci, None, vals, True)

    # ------------------------------------------------------------------ conversions
    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The dense tensor (differentiable w.r.t. the values), with the names the sparse
        tensor was converted with."""
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_to_dense")
        out = self._dense()
        if self._names is not None:
            return out.rename(*self._names)
        # names cleared since the conversion: the values' names (which the scatter into the
        # dense result unifies, as index_add does) name nothing any more
        return out if out._names is None else out.rename(None)

    def _dense(self) -> Tensor:
        sd = self.sparse_dim()
        vals = self._vals
        lay = self._lay
        if lay is sparse_coo:
            idx = self._ci._data
            xp = array_module(idx)
            n = _prod(self._shp[:sd])
            lin = _ravel(xp, idx, self._shp[:sd])
            return _segsum(vals, _long(xp, lin), n).reshape(self._shp)
        xp = array_module(self._ci._data)
        comp = _expand_ptr(xp, self._ci._data)
        plain = self._pi._data.astype(xp.int64)
        nr, nc = self._shp[0], self._shp[1]
        dense = tuple(self._shp[2:])
        if lay in _BLOCK:
            br, bc = vals.shape[1], vals.shape[2]
            nr, nc = nr // br, nc // bc
        r, c = (comp, plain) if lay in _ROWS else (plain, comp)
        out = _segsum(vals, _long(xp, r * nc + c), nr * nc)
        if lay not in _BLOCK:
            return out.reshape(self._shp)
        out = out.reshape(nr, nc, br, bc, *dense)
        k = len(dense)
        out = out.permute(0, 2, 1, 3, *range(4, 4 + k))
        return out.reshape(self._shp)

    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None) -> Tensor:
        return _to_sparse(self, args, layout, blocksize, dense_dim)

    def to_sparse_coo(self) -> Tensor:
        return _to_coo(self, None)

    def to_sparse_csr(self, dense_dim=None) -> Tensor:
        return _to_compressed(self, sparse_csr, None, dense_dim)

    def to_sparse_csc(self, dense_dim=None) -> Tensor:
        return _to_compressed(self, sparse_csc, None, dense_dim)

    def to_sparse_bsr(self, blocksize, dense_dim=None) -> Tensor:
        return _to_compressed(self, sparse_bsr, blocksize, dense_dim)

    def to_sparse_bsc(self, blocksize, dense_dim=None) -> Tensor:
        return _to_compressed(self, sparse_bsc, blocksize, dense_dim)


for _name, _d in CAST_METHODS:

    def _cast(self, memory_format=None, _d=_d):
        return self.to(_d)

    _cast.__name__ = _name
    setattr(SparseTensor, _name, _cast)


def _wrap_dim(dim, nd: int) -> int:
    if not isinstance(dim, int):
        raise RuntimeError("ember: sparse tensors have no dimension names")  # noqa: TRY004
    lo, hi = (-1, 0) if nd == 0 else (-nd, nd - 1)
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return dim + nd if dim < 0 else dim


def _make(layout, shape, ci, pi, vals, coalesced=False) -> SparseTensor:
    if layout is not sparse_coo:
        # torch warns (once per process) whenever a compressed tensor comes to exist, whether a
        # factory, a conversion or an op made it
        _warn_once(
            "sparse_compressed_beta",
            f"Sparse {layout.name[7:].upper()} tensor support is in beta state. If you miss a "
            "functionality in the sparse tensor support, please submit a feature request to "
            "https://github.com/pytorch/pytorch/issues.",
        )
    t = _new(SparseTensor)
    t._lay = layout
    t._shp = tuple(shape)
    t._ci = ci
    t._pi = pi
    t._vals = vals
    t._coal = bool(coalesced)
    t._grad = None
    t._names = None
    t._ver = [0]
    t._extra = None
    return t


def _rebuild_sparse(layout, shape, ci, pi, vals, coal, device, requires_grad):
    lay = {x.name: x for x in (sparse_coo, *_COMPRESSED)}[layout]
    t = _make(lay, shape, ci, pi, vals, coal)
    if device != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


# the factories and conversions build SparseTensor (above); sparse_ops needs them: keep this order
from . import sparse_factories as _sparse_factories  # noqa: I001
from .sparse_factories import _to_compressed, _to_coo, _to_sparse
from . import sparse_ops as _sparse_ops

for _m in (_sparse_factories, _sparse_ops):  # their public names are this module's
    __all__ += _m.__all__
    globals().update({n: getattr(_m, n) for n in _m.__all__})
