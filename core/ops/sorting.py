"""Sorting, selection, sets and search: sort, argsort, msort, topk, kthvalue, unique,
unique_consecutive, isin, searchsorted, bucketize.

Every sort here is stable and treats NaN as the largest value, like torch. The derivatives of the
value-selecting ops (sort, msort, topk, kthvalue) send the upstream gradient back to the selected
positions with gather/scatter_add, which are themselves differentiable, so double backward works.
The positions are recomputed from the saved input (the same deterministic stable sort).
"""

from __future__ import annotations

import numpy as np

from .. import dtype as _dt
from ..arg_errors import type_name
from ..device import array_module
from ..dims import int_dim
from ..layout import row_major
from ..meta import no_meta_kernel
from ..names import keep
from ..registry import op
from ..return_types import return_types
from ..tensor import Tensor, _wrap
from .decompositions import _exact
from .indexing import gather, scatter_add
from .reduction import _index_out

__all__ = [
    "argsort",
    "bucketize",
    "isin",
    "kthvalue",
    "msort",
    "searchsorted",
    "sort",
    "topk",
    "unique",
    "unique_consecutive",
]

_INT64 = np.dtype(np.int64)


# ---------------------------------------------------------------------- helpers
def _tname(a) -> str:
    return _dt.SCALAR_NAMES.get(_dt._FROM_NP[a.dtype].name, str(a.dtype))


def _axis(dim, ndim: int):
    """A dim as a non-negative axis; a 0-dim tensor accepts 0 and -1 and has no axis (None)."""
    d = dim if type(dim) is int else int_dim(dim)
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if d < lo or d > hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})"
        )
    if ndim == 0:
        return None
    return d + ndim if d < 0 else d


def _argsort(xp, a, ax: int, descending: bool = False):
    """Stable sorting indices along ``ax`` (NaN counts as the largest value, like torch)."""
    kw = {"kind": "stable"} if xp is np else {}
    if a.dtype.kind == "V":  # bfloat16: numpy's sort of it puts NaN first, float32 orders it last
        a = a.astype(np.float32)
    if not descending:
        return xp.argsort(a, axis=ax, **kw)
    # stable descending: sort the reversed array ascending, reverse back, map the positions
    o = xp.argsort(xp.flip(a, ax), axis=ax, **kw)
    return (a.shape[ax] - 1) - xp.flip(o, ax)


def _no_complex(a, what: str) -> None:
    if a.dtype.kind == "c":
        raise RuntimeError(f"{what} does not support complex dtypes on CPU")


def _const(arr) -> Tensor:
    return _wrap(arr)


def _zeros(like: Tensor, shape) -> Tensor:
    a = like._data
    return _wrap(array_module(a).zeros(tuple(shape), dtype=a.dtype))


def _unnamed(ins, *args, **kwargs):
    """Results whose dims are new (unique's values, counts, histograms): unnamed (None)."""


def _drop_dim_names(ins, k=None, dim=-1, keepdim=False):
    """kthvalue: the reduced dim loses its name unless keepdim."""
    names = ins[0]._names
    if keepdim or names is None:
        return names
    ax = _axis(dim, len(names))
    out = tuple(n for i, n in enumerate(names) if i != ax)
    return None if all(n is None for n in out) else out


def _first_tensor_names(ins, *args, **kwargs):
    """isin/bucketize: the result has the shape of the first argument (when it is a tensor)."""
    t = ins[0]
    return t._names if isinstance(t, Tensor) else None


def _values_names(ins, *args, **kwargs):
    """searchsorted: the result has the shape of the values (the second argument)."""
    t = ins[1]
    return t._names if isinstance(t, Tensor) else None


# ---------------------------------------------------------------------- sort / argsort / msort
@op(names=keep, out_type=return_types.sort)
def sort(xp, input, dim=-1, descending=False, *, stable=None):
    """(values, indices) of ``input`` sorted along ``dim`` (stable; NaN sorts as the largest)."""
    ax = _axis(dim, input.ndim)  # torch checks the dim first
    _no_complex(input, " Sort")
    if ax is None:
        return input.copy(), xp.zeros((), dtype=_INT64)
    idx = _argsort(xp, input, ax, descending)
    return xp.take_along_axis(input, idx, axis=ax), idx.astype(_INT64, copy=False)


def _perm_grad(grad, input, ax, descending):
    """Gradient of a sort along ``ax``: the grad gathered through the inverse permutation."""
    if ax is None:
        return grad
    a = input._data
    xp = array_module(a)
    idx = _argsort(xp, a, ax, descending)
    inv = xp.argsort(idx, axis=ax).astype(_INT64, copy=False)
    return gather(grad, ax, _const(inv))


def _selected_grad(grad, indices, input_shape, ax):
    """Gradient of sort/topk/kthvalue (keepdim form) along ``ax`` from the saved index output,
    as torch keeps it: the grad lands where the indices point."""
    if ax is None:
        return grad
    return scatter_add(_zeros(grad, input_shape), ax, indices, grad)


@sort.vjp
def _(grad, indices, input_shape, dim, descending, stable):
    return _selected_grad(grad, indices, input_shape, _axis(dim, len(input_shape)))


# torch's grad_fn names: sort() is SortBackward0, its overload with ``stable`` SortBackward1
sort.op.name_rule = lambda node: (
    "SortBackward0" if node.saved_arg("stable") is None else "SortBackward1"
)


@op(names=keep)
def argsort(xp, input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim`` (stable)."""
    ax = _axis(dim, input.ndim)  # torch checks the dim first
    _no_complex(input, " Sort")
    if ax is None:
        return xp.zeros((), dtype=_INT64)
    return _argsort(xp, input, ax, descending).astype(_INT64, copy=False)


@op(names=keep)
def msort(xp, input):
    """``input`` sorted along its first dim (``sort(input, 0).values``)."""
    _no_complex(input, " Sort")
    if input.ndim == 0:
        return input.copy()
    return xp.take_along_axis(input, _argsort(xp, input, 0), axis=0)


msort.op.backward_name = "SortBackward0"  # torch's msort is sort(input, 0).values


@msort.vjp
def _(grad, input):
    return _perm_grad(grad, input, 0 if input._data.ndim else None, False)


# ---------------------------------------------------------------------- topk / kthvalue
def _take(idx, ax, start, stop):
    sl = [slice(None)] * idx.ndim
    sl[ax] = slice(start, stop)
    return idx[tuple(sl)]


def _along(xp, a, idx, ax):
    """``take_along_axis(a, idx, ax)``; a 2-D numpy gather along its last dim as one fancy index
    (numpy's function builds its index in Python: twice the cost on small inputs)."""
    if xp is np and a.ndim == 2 and ax == 1:
        return a[np.arange(a.shape[0])[:, None], idx]
    return xp.take_along_axis(a, idx, axis=ax)


def _topk_idx(xp, a, k, ax, largest):
    """Indices of the k largest (smallest) along ``ax``, in sorted order (NaN is the largest)."""
    n = a.shape[ax]
    if 0 < k and 4 * k < n:
        # partial selection (O(n)), then sort only the k selected values
        if largest:
            sel = _take(xp.argpartition(a, n - k, axis=ax), ax, n - k, n)
        else:
            sel = _take(xp.argpartition(a, k - 1, axis=ax), ax, 0, k)
        vals = _along(xp, a, sel, ax)
        return _along(xp, sel, _argsort(xp, vals, ax, largest), ax)
    # the first k of a full sort are a strided view of it; torch's indices are contiguous
    # (MoE routers call .view(-1) on them)
    return xp.ascontiguousarray(_take(_argsort(xp, a, ax, largest), ax, 0, k))


def _check_k(fname: str, k) -> None:
    """torch's parser error for a ``k`` that is no int (a numpy integer or a 0-d integer tensor
    passes, as torch takes it; a bool does not)."""
    if isinstance(k, (float, bool)) or not hasattr(k, "__index__"):
        raise TypeError(f"{fname}(): argument 'k' (position 2) must be int, not {type_name(k)}")


@op(names=keep, out_type=return_types.topk)
def topk(xp, input, k=None, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim``: (values, indices), sorted."""
    if k is None:
        raise TypeError('topk() missing 1 required positional arguments: "k"')
    if type(k) is not int:
        _check_k("topk", k)
    ax = _axis(dim, input.ndim)
    n = 1 if ax is None else input.shape[ax]
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    # torch checks dim and k before the dtype
    _no_complex(input, " topk")
    if input.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if ax is None:
        return input.copy(), xp.zeros((), dtype=_INT64)
    idx = _topk_idx(xp, input, k, ax, largest)
    return _along(xp, input, idx, ax), idx.astype(_INT64, copy=False)


@topk.vjp
def _(grad, indices, input_shape, dim):
    return _selected_grad(grad, indices, input_shape, _axis(dim, len(input_shape)))


def _kth_idx(xp, a, k, ax):
    """keepdim int64 indices of the k-th smallest element along ``ax``: the element a stable sort
    puts at position k - 1 (NaN counts as the largest).

    torch's median picks that element among equal values (its kthvalue's choice among ties
    follows its selection algorithm, which no rule reproduces). A stable sort of every row costs
    ~25 us per 256 floats; the selection below gets the same index from ``partition`` (values
    only) and a few passes, falling back to the sort for a k-th value that is NaN.
    """
    if xp is np and a.shape[ax] >= _SELECT_MIN and a.dtype.kind in "fiu":
        idx = _kth_idx_select(a, k, ax)
        if idx is not None:
            return idx
    # one position of a full sort is a strided view of it; torch's indices are contiguous
    return xp.ascontiguousarray(_take(_argsort(xp, a, ax), ax, k - 1, k).astype(_INT64, copy=False))


_SELECT_MIN = 16  # shorter rows: the sort is as fast


def _kth_idx_select(a, k, ax):
    v = np.take(np.partition(a, k - 1, axis=ax), [k - 1], axis=ax)  # the k-th value, keepdim
    if v.dtype.kind == "f" and np.isnan(v).any():
        return None  # the k-th value is NaN: its position among the NaNs comes from the sort
    eq = a == v
    # the element's rank among its equals in stable order: k - 1 minus the number of smaller
    # values (NaN compares False, so it never counts)
    r = (k - 1) - np.count_nonzero(a < v, axis=ax, keepdims=True)
    if not r.any():  # the first of its equals (always so without ties)
        return np.argmax(eq, axis=ax, keepdims=True).astype(_INT64, copy=False)
    # ties: the r-th True of each row of eq, from the row-major positions of all Trues
    n = a.shape[ax]
    rows = np.moveaxis(eq, ax, -1).reshape(-1, n)
    where_r, where_c = np.nonzero(rows)
    starts = np.searchsorted(where_r, np.arange(rows.shape[0]))
    pick = where_c[starts + np.moveaxis(r, ax, -1).reshape(-1)]
    shape = list(np.moveaxis(r, ax, -1).shape)
    return np.moveaxis(pick.reshape(shape), -1, ax).astype(_INT64, copy=False)


@op(names=_drop_dim_names, out_type=return_types.kthvalue)
def kthvalue(xp, input, k=None, dim=-1, keepdim=False):
    """(values, indices) of the ``k``-th smallest element along ``dim``."""
    if k is None:
        raise TypeError('kthvalue() missing 1 required positional arguments: "k"')
    if type(k) is not int:
        _check_k("kthvalue", k)
    ax = _axis(dim, input.ndim)
    n = 1 if ax is None else input.shape[ax]
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {ax} to have non-zero size.")
    if k < 1 or k > n:
        raise RuntimeError(
            f"kthvalue(): selected number k out of range for dimension {0 if ax is None else ax}"
        )
    if ax is None:
        return input.copy(), xp.zeros((), dtype=_INT64)
    if input.dtype.kind in "bc":  # torch checks dim and k (and a 0-d input) before the dtype
        raise NotImplementedError(f"\"kthvalue_cpu\" not implemented for '{_tname(input)}'")
    idx = _kth_idx(xp, input, k, ax)
    vals = xp.take_along_axis(input, idx, axis=ax)
    if not keepdim:
        idx, vals = idx.squeeze(ax), vals.squeeze(ax)
    return vals, idx


@kthvalue.vjp
def _(grad, indices, input_shape, dim, keepdim):
    ax = _axis(dim, len(input_shape))
    if ax is not None and not keepdim:
        grad, indices = grad.unsqueeze(ax), indices.unsqueeze(ax)
    return _selected_grad(grad, indices, input_shape, ax)


# ---------------------------------------------------------------------- unique
def _unique_flat(xp, a, return_inverse, return_counts):
    flat = a.reshape(-1)
    order = _argsort(xp, flat, 0)
    s = flat[order]
    if s.size:
        # NaN != NaN: every NaN is its own value, like torch
        new = xp.concatenate([xp.ones(1, dtype=bool), s[1:] != s[:-1]])
    else:
        new = xp.zeros(0, dtype=bool)
    vals = s[new]
    out = [vals]
    if return_inverse:
        inv = xp.empty(flat.shape, dtype=_INT64)
        inv[order] = xp.cumsum(new) - 1
        out.append(inv.reshape(a.shape))
    if return_counts:
        starts = xp.flatnonzero(new)
        out.append(xp.diff(xp.append(starts, s.size)).astype(_INT64))
    return out


def _unique_dim(xp, a, ax, return_inverse, return_counts):
    b = xp.moveaxis(a, ax, 0)
    rows = b.reshape(b.shape[0], _prod(b.shape[1:]))
    n = rows.shape[0]
    # lexicographic order of the slices: sort by the last column first (stable), then earlier ones
    order = xp.arange(n)
    for c in range(rows.shape[1] - 1, -1, -1):
        col = rows[order, c]
        order = order[_argsort(xp, col, 0)]
    s = rows[order]
    if n:
        new = xp.concatenate([xp.ones(1, dtype=bool), (s[1:] != s[:-1]).any(axis=1)])
    else:
        new = xp.zeros(0, dtype=bool)
    vals = xp.moveaxis(b[order][new], 0, ax)
    out = [xp.ascontiguousarray(vals)]
    if return_inverse:
        inv = xp.empty(n, dtype=_INT64)
        inv[order] = xp.cumsum(new) - 1
        out.append(inv)
    if return_counts:
        starts = xp.flatnonzero(new)
        out.append(xp.diff(xp.append(starts, n)).astype(_INT64))
    return out


def _dim_axis(input, dim) -> int:
    """unique's and unique_consecutive's ``dim``: torch's checks, then the axis."""
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    ax = _axis(dim, input.ndim)
    # the slices along ax would be empty yet counted: torch refuses rather than guess
    if any(n == 0 for i, n in enumerate(input.shape) if i != ax):
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
        )
    return ax


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _one_or_tuple(out):
    return out[0] if len(out) == 1 else tuple(out)


@op(names=_unnamed)
def unique(xp, input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements (sorted), and optionally the inverse indices and the counts."""
    no_meta_kernel(xp, "aten::_unique2")
    if input.dtype.kind == "c":
        raise NotImplementedError(f"\"unique\" not implemented for '{_tname(input)}'")
    if dim is None:
        out = _unique_flat(xp, input, return_inverse, return_counts)
    else:
        out = _unique_dim(xp, input, _dim_axis(input, dim), return_inverse, return_counts)
    return _one_or_tuple(out)


@op(names=_unnamed)
def unique_consecutive(xp, input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``) to one."""
    no_meta_kernel(xp, "aten::unique_consecutive")
    if input.dtype.kind == "c":  # torch's kernels have no complex types
        # torch's dim overload takes a 1-D input's literal dim 0 through the flat kernel
        flat = dim is None or (input.ndim == 1 and dim == 0)
        who = "unique" if flat else "unique_dim"
        raise NotImplementedError(
            f"\"{who}\" not implemented for '{_dt.scalar_name(_dt._FROM_NP[input.dtype])}'"
        )
    if dim is None:
        flat = input.reshape(-1)
        n = flat.shape[0]
        new = xp.ones(n, dtype=bool)
        if n:
            new[1:] = flat[1:] != flat[:-1]
        vals = flat[new]
        shape = input.shape
    else:
        ax = _dim_axis(input, dim)
        b = xp.moveaxis(input, ax, 0)
        rows = b.reshape(b.shape[0], _prod(b.shape[1:]))
        n = rows.shape[0]
        new = xp.ones(n, dtype=bool)
        if n:
            new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        vals = xp.ascontiguousarray(xp.moveaxis(b[new], 0, ax))
        shape = (n,)
    out = [vals]
    if return_inverse:
        out.append((xp.cumsum(new) - 1).astype(_INT64).reshape(shape))
    if return_counts:
        out.append(xp.diff(xp.append(xp.flatnonzero(new), n)).astype(_INT64))
    return _one_or_tuple(out)


# ---------------------------------------------------------------------- isin
@op(names=_first_tensor_names, method=False)
def isin(xp, elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (bool, elements' shape)."""
    e = xp.asarray(elements)
    t = xp.asarray(test_elements).reshape(-1)
    # torch's sort-based kernel has neither complex nor bool: it names the elements' dtype, else
    # the test elements'
    for a in (e, t):
        if a.dtype.kind == "c":
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_tname(a)}")
        if a.dtype.kind == "b":
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    return xp.isin(e, t, invert=invert)


def _complex_of(*arrays):
    """The array of the widest complex dtype among ``arrays`` (torch's promoted type)."""
    cs = [a for a in arrays if a.dtype.kind == "c"]
    return max(cs, key=lambda a: a.dtype.itemsize) if cs else None


def _search_complex(*arrays):
    c = _complex_of(*arrays)
    if c is not None:
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for '{_tname(c)}'")


# ---------------------------------------------------------------------- searchsorted / bucketize
def _search(xp, seq, vals, right):
    """Insertion positions of ``vals`` into the sorted last dim of ``seq`` (batched)."""
    v = xp.asarray(vals)
    # bfloat16 (kind V) searches as float32 (exact): numpy orders and compares its NaN wrongly
    if seq.dtype.kind == "V":
        seq = seq.astype(np.float32)
    if v.dtype.kind == "V":
        v = v.astype(np.float32)
    if seq.dtype.kind == "b" and v.dtype.kind == "b":  # a bool beside a number promotes
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    if (seq.dtype.kind == "f" and bool(xp.isnan(seq).any())) or (
        v.dtype.kind == "f" and bool(xp.isnan(v).any())
    ):
        return _bisect(xp, seq, v, right)
    side = "right" if right else "left"
    if seq.ndim == 1:
        return xp.searchsorted(seq, v.reshape(-1), side=side).reshape(v.shape)
    # batched: count the boundaries below each value (<= for right); vectorized over the batch
    cmp = xp.less_equal if right else xp.less
    return cmp(seq[..., None, :], v[..., :, None]).sum(axis=-1)


def _bisect(xp, seq, v, right):
    """torch's binary search step by step, vectorized over the values: with NaN about, where
    numpy orders NaN last, torch's comparisons (all false with NaN) decide each step."""
    n = seq.shape[-1]
    rows = seq.reshape(-1, n) if seq.ndim > 1 else seq.reshape(1, n)
    flat = v.reshape(rows.shape[0], -1) if seq.ndim > 1 else v.reshape(1, -1)
    lo = xp.zeros(flat.shape, dtype=_INT64)
    hi = xp.full(flat.shape, n, dtype=_INT64)
    with np.errstate(invalid="ignore"):
        while bool((lo < hi).any()):
            live = lo < hi
            mid = lo + (hi - lo) // 2
            b = xp.take_along_axis(rows, xp.minimum(mid, n - 1), axis=-1)
            # torch moves right unless the boundary is above (right: or equal to) the value
            go = ~(b > flat) if right else ~(b >= flat)
            lo = xp.where(live & go, mid + 1, lo)
            hi = xp.where(live & ~go, mid, hi)
    return lo.reshape(v.shape)


def _search_dtype(r, out_int32):
    return r.astype(np.int32 if out_int32 else _INT64, copy=False)


@op(names=_values_names, method=False)
def searchsorted(
    xp, sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None
):
    """Indices where ``input`` would be inserted into the innermost dim of ``sorted_sequence``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    seq = sorted_sequence
    v = xp.asarray(input)
    if seq.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
            "dimension"
        )
    if seq.ndim > 1 and (v.ndim != seq.ndim or v.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(v.shape)}"
        )
    if sorter is not None:
        s = sorter._data if isinstance(sorter, Tensor) else xp.asarray(sorter)
        if s.dtype != _INT64:
            raise RuntimeError(
                "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                f"{_tname(s)}"
            )
        if s.shape != seq.shape:
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {list(seq.shape)}and got sorter tensor {list(s.shape)}"
            )
        if s.size and bool(((s < 0) | (s >= seq.shape[-1])).any()):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        seq = xp.take_along_axis(seq, s, axis=-1)
    if v.size:
        _search_complex(seq, v)
    r = _search_dtype(_search(xp, seq, v, right), out_int32)
    # numpy's result follows a permuted ``values``' layout; torch's is contiguous
    return row_major(xp, r) if r.ndim > 1 else r


@op(names=_first_tensor_names, method=False)
def bucketize(xp, input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element of ``input`` among the sorted 1-D ``boundaries``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    v = xp.asarray(input)
    if v.size:
        _search_complex(boundaries, v)
    return _search_dtype(_search(xp, boundaries, v, right), out_int32)


def _search_out(out, res, ins):
    """out= must be int64, or int32 under out_int32=True (the result's dtype says which)."""
    raise RuntimeError(
        "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
        "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
        f"dtype {_dt.scalar_name(out.dtype)} and out_int32 flag is {res.dtype == _dt.int32}"
    )


searchsorted.op.out_dtype = bucketize.op.out_dtype = _search_out


def _kthvalue_out(out, res, ins):
    if _index_out(res, ins):
        raise RuntimeError("output indices must be of scalar type Long")
    raise RuntimeError("output values must be of same type as input")


# torch's kernels refuse an out= tensor of another dtype (no cast)
sort.op.out_dtype = topk.op.out_dtype = msort.op.out_dtype = _exact
kthvalue.op.out_dtype = _kthvalue_out


# an operand neither Tensor nor number matches none of torch's overloads
_FLAGS = "bool out_int32 = False, bool right = False"
# a dim of the wrong type (a float) matches none of torch's overloads: it lists them all
sort.op.dim_overloads = (
    (
        "(Tensor input, *, bool stable, int dim = -1, bool descending = False, "
        "tuple of Tensors out = None)"
    ),
    "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)",
)
argsort.op.dim_overloads = (
    "(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)",
    "(Tensor input, int dim = -1, bool descending = False)",
)
bucketize.op.overloads = (
    f"(Tensor input, Tensor boundaries, *, {_FLAGS}, Tensor out = None)",
    f"(Number self, Tensor boundaries, *, {_FLAGS})",
)
searchsorted.op.overloads = tuple(
    f"(Tensor sorted_sequence, {v}, *, {_FLAGS}, str side = None, Tensor sorter = None, "
    "Tensor out = None)"
    for v in ("Tensor input", "Number self")
)
isin.op.out_dtype = _exact  # the out= of isin is bool, never cast
isin.op.overloads = tuple(
    f"({a}, *, bool assume_unique = False, bool invert = False, Tensor out = None)"
    for a in (
        "Tensor elements, Tensor test_elements",
        "Number element, Tensor test_elements",
        "Tensor elements, Number test_element",
    )
)
