"""Indexing: ``Tensor.__getitem__`` / ``__setitem__`` and gather, scatter, index_select, masked_*,
take, take_along_dim, nonzero.

Basic indexing (ints, slices, None, Ellipsis, 0-d integer tensors) returns a view sharing storage
and the version counter. Advanced indexing (integer/bool tensors, lists, arrays) returns a copy with
numpy's (= torch's) semantics, except that ints are applied first as selects, like torch does.

The index reaches the registry as an option in a plain form: tensors become raw arrays. An
advanced key mixing ints and arrays is split into ``pre`` (a basic key of the ints, a view) and
``key`` (the rest).
"""

from __future__ import annotations

import numbers
import operator
import warnings

import numpy as np

from ...autograd.grad_mode import _INFERENCE_USED, _state, check_inference_inplace
from .. import dtype as _dt
from ..arg_errors import invalid_arguments, method_signatures, tensor_method, type_name
from ..autocast import entry as _autocast_entry
from ..device import _XP, array_module
from ..layout import dense_order_strides, restride, row_major
from ..meta import meta_xp, no_meta_kernel
from ..names import (
    FALLBACK,
    align_mask_unify,
    as_op_error,
    broadcast_to_self,
    keep,
    keep_indexed,
)
from ..registry import _rebase_history, broadcast_error, leaf_write_error, op
from ..registry import apply as _apply
from ..registry import apply_inplace as _apply_inplace
from ..tensor import Tensor, _generic, _ndarray, _new, _ptr, _wrap
from ..vmap_state import SLICES as _VMAP_SLICES
from ..vmap_state import mark_results as _vmap_mark
from ..vmap_state import refuse_inplace as _vmap_refuse_inplace
from ..vmap_state import refuse_mask_index as _vmap_refuse_mask_index
from .conversion import _warn_complex_to_real, warn_user
from .decompositions import _exact

__all__ = [
    "gather",
    "index_add",
    "index_fill",
    "index_put",
    "index_select",
    "masked_fill",
    "masked_scatter",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "take_along_dim",
]

_NOKW: dict = {}  # never mutated: the registry only pops from a non-empty kw
_NoneType = type(None)
_EllipsisType = type(Ellipsis)
_INT64 = np.dtype(np.int64)
_INT32 = np.dtype(np.int32)
_UINT8 = np.dtype(np.uint8)
_BOOL = np.dtype(np.bool_)
_IDX_DTYPES = (_INT64, _INT32)
_FAST_DTYPES = (_INT64, _INT32, _BOOL)
_BAD_TENSOR_INDEX = "tensors used as indices must be long, int, byte or bool tensors"


# ---------------------------------------------------------------------- small helpers
def _xp_of(a):
    return _XP.get(type(a)) or array_module(a)


def _add_at(xp, a, key, v, sequential: bool = False) -> None:
    """a[key] += v with duplicate indices accumulating (numpy ufunc.at / cupyx.scatter_add).

    A float16/bfloat16 ``a`` sums its updates in float32 and rounds once (torch's scatter_add,
    index_add); ``sequential``: adds them one by one in index order, rounding after each (torch's
    serial kernels: index_put_ with accumulate, index_add_ with alpha != 1 or a 1-D self)."""
    if a.dtype == _BOOL:
        # a bool sum is a logical or (torch), which add.at refuses: count in int64, test nonzero
        t = a.astype(_INT64)
        _add_at(xp, t, key, xp.asarray(v).astype(_INT64))
        a[...] = t != 0
        return
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":  # V: bfloat16
        if sequential and xp is np:
            np.add.at(a, key, xp.asarray(v).astype(a.dtype, copy=False))  # in order, each rounded
            return
        t = a.astype(np.float32)
        _add_at(xp, t, key, xp.asarray(v).astype(np.float32))
        a[...] = t
        return
    if xp is np:
        k = key[0] if len(key) == 1 else None
        if (
            getattr(k, "ndim", 0) == 1
            and k.dtype.kind in "iu"
            and v.ndim == a.ndim > 1
            and v.shape[0] == k.shape[0]  # (a value broadcast along the rows: add.at's way)
        ):
            _add_rows(a, key[0], v)
        elif not _add_by_bincount(a, key, v):
            np.add.at(a, key, v)
    elif xp is meta_xp:  # (core/meta.py: the write lands in small meta arrays only)
        np.add.at(a, key, v)
    else:
        import cupyx

        cupyx.scatter_add(a, key, v)


def _add_by_bincount(a, key, v) -> bool:
    """a[key] += v for a full tuple of non-negative integer index arrays (scatter_add's), as one
    ``bincount`` over flat positions: ~10x faster than ``np.add.at``. Only for real floats, and
    when the updates are not far fewer than ``a``'s elements (bincount makes a full-size sum)."""
    if (
        a.dtype.char not in "fd"
        or not a.flags.c_contiguous
        or type(key) is not tuple
        or len(key) != a.ndim
        or not all(getattr(k, "dtype", None) is not None and k.dtype.kind in "iu" for k in key)
    ):
        return False
    try:  # (the value broadcasts to the indexed shape, never the other way)
        ks = np.broadcast_arrays(*key)
        vb = np.broadcast_to(v, ks[0].shape)
    except ValueError:  # np.add.at raises the error callers translate
        return False
    if not vb.size or vb.size * 4 < a.size:  # (no updates: np.add.at does nothing)
        return False
    ks = [np.where(k < 0, k + n, k) if k.dtype.kind == "i" and k.min() < 0 else k
          for k, n in zip(ks, a.shape)]  # fmt: skip
    try:
        flat = np.ravel_multi_index(ks, a.shape).ravel()
    except ValueError:  # an index out of range: np.add.at raises the error callers translate
        return False
    sums = np.bincount(flat, weights=vb.ravel(), minlength=a.size)
    a.reshape(-1)[...] += sums.astype(a.dtype, copy=False)
    return True


def _add_rows(a, idx, v) -> None:
    """a[idx] += v for whole rows (embedding and index_add backward, index_add_). For float and
    complex rows: one sparse (unique rows x len(idx)) 0/1 matrix times ``v`` (scipy's compiled
    product; 3.5-8x faster than the sorted ``add.reduceat`` below, which other dtypes take, and
    that one ~4x faster than ``np.add.at``)."""
    if idx.size == 0:
        return
    idx = np.where(idx < 0, idx + a.shape[0], idx)  # -1 and n-1 are one row
    if v.dtype == a.dtype and a.dtype.char in "fdFD":
        from scipy.sparse import csr_matrix

        rows, inv = np.unique(idx, return_inverse=True)
        if rows[0] < 0:  # (below -n: numpy would wrap it again)
            raise IndexError(f"index {rows[0] - a.shape[0]} is out of range")
        m = idx.size
        sel = csr_matrix((np.ones(m, a.dtype), (inv, np.arange(m))), shape=(rows.size, m))
        a[rows] += (sel @ v.reshape(m, -1)).reshape((rows.size,) + v.shape[1:])
        return
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    if s[0] < 0:  # (below -n: numpy would wrap it again)
        raise IndexError(f"index {s[0] - a.shape[0]} is out of range")
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    a[s[starts]] += np.add.reduceat(v[order], starts, axis=0)


def _ufunc_at(xp, name, a, key, v) -> None:
    if xp is np or xp is meta_xp:  # (core/meta.py: lands in small meta arrays only)
        getattr(np, name).at(a, key, v)
        return
    import cupyx

    fn = {"add": "scatter_add", "maximum": "scatter_max", "minimum": "scatter_min"}.get(name)
    if fn is None:
        getattr(xp, name).at(a, key, v)  # cupy >= 13 has ufunc.at
    else:
        getattr(cupyx, fn)(a, key, v)


def _zeros_t(like: Tensor, shape) -> Tensor:
    a = like._data
    return _wrap(_xp_of(a).zeros(shape, a.dtype))


def _wrap_dim(dim: int, nd: int) -> int:
    lo, hi = (-1, 0) if nd == 0 else (-nd, nd - 1)
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return dim % nd if nd else 0


_C10_NAMES = {
    "float32": "float",
    "float64": "double",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


_dtype_word = _dt.array_scalar_name


# ---------------------------------------------------------------------- index normalisation
def _index_array(a, xp):
    """An index array (from a tensor, list or ndarray) checked and moved to ``xp``'s device."""
    d = a.dtype
    if d is _UINT8 or d == _UINT8:
        if a.ndim:  # (torch reads a 0-dim one as a Python bool, without warning)
            warn_user(_BYTE_MASK)
        a = a.astype(_BOOL)  # byte tensors index as masks (torch's deprecated behaviour)
    elif d.kind not in "iub" or (d.kind in "iu" and d not in _IDX_DTYPES):
        raise IndexError(_BAD_TENSOR_INDEX)
    if type(a) is not _ndarray:
        if xp is np:
            raise RuntimeError(
                "indices should be either on cpu or on the same device as the indexed tensor (cpu)"
            )
    elif xp is not np:
        a = xp.asarray(a)
    return a


_NON_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
    "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
    "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result"
)
_BYTE_MASK = (
    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."
)


def _byte_masked_fill(index, value, put: bool = False) -> bool:
    """``x[byte_mask] = v``, a one-element ``v`` and no other index tensor: torch sends it to
    masked_fill_, which refuses byte masks (after its checks of the index's shape). ``put``:
    index_put_'s index, whose 0-dim integer tensors are index tensors, not selects."""
    if isinstance(value, Tensor) and value._data.size != 1:
        return False
    byte = False
    for i in index if isinstance(index, (tuple, list)) else (index,):
        a = i._data if isinstance(i, Tensor) else i
        if isinstance(a, (bool, list)):
            return False  # (another index tensor)
        if hasattr(a, "dtype"):
            if not a.ndim and a.dtype.kind in "iu" and a.dtype != _UINT8 and not put:
                continue  # a select
            if byte or not a.ndim or a.dtype != _UINT8:
                return False
            byte = True
    return byte


def _put_converts(index, value: Tensor) -> bool:
    """Whether ``x[index] = value`` may convert ``value`` to x's dtype, as torch: a key without
    index tensors writes through a view (copy_ converts), and one boolean mask with a one-element
    value is a masked fill (which converts); any other key goes to index_put_, which refuses."""
    if index is True or index is False or index is None or index is Ellipsis:
        return True
    seq = isinstance(index, tuple) or (isinstance(index, list) and _seq_as_tuple(index))
    masks = []  # one entry per index tensor: whether it is a mask
    for it in index if seq else (index,):
        if isinstance(it, Tensor):
            a = it._data
            if a.ndim == 0 and a.dtype.kind in "iu" and a.dtype != _UINT8:
                continue  # a 0-dim integer tensor selects, like an int
            # (a 0-dim bool or byte tensor becomes an index tensor, like a bool)
            masks.append(a.ndim > 0 and (a.dtype.kind == "b" or a.dtype == _UINT8))
        elif isinstance(it, bool):
            masks.append(False)  # inside a tuple, a bool becomes an int64 index tensor
        elif isinstance(it, (list, _ndarray)):
            a = np.asarray(it)
            if a.ndim == 0 and a.dtype.kind in "iu" and a.dtype != _UINT8:
                continue  # (so does a 0-dim integer array)
            masks.append(a.dtype.kind == "b")
    if not masks:
        return True
    return len(masks) == 1 and masks[0] and value.numel() == 1


def _seq_as_tuple(seq) -> bool:
    # torch reads a short list holding sequences, slices, tensors, None or ... as a tuple
    if len(seq) >= 32:
        return False
    for e in seq:
        if isinstance(e, (list, tuple, slice, Tensor, _ndarray)) or e is None or e is Ellipsis:
            return True
    return False


def _check_step(s: slice) -> slice:
    st = s.step
    if st is not None:
        st = operator.index(st)
        if st <= 0:
            raise ValueError(
                "slice step cannot be zero" if st == 0 else "step must be greater than zero"
            )
    return s


def _convert(self: Tensor, index, strict: bool = True, select: bool = True):
    """The index as a list of plain items (ints, slices, None, ..., bools, arrays).

    Returns (items, advanced, has_int, index_names): index_names lists the names of the integer
    index tensors when one of them is named (they name the indexed dims), else None.
    ``strict=False`` (for _diagnose) keeps index tensors of any dtype as they are: torch checks
    their dtypes only after the ints and slices. ``select=False`` (index_put_'s): a 0-dim integer
    tensor is an index tensor, not a select."""
    if type(index) is tuple:
        items = index
    elif type(index) is list and _seq_as_tuple(index):
        warn_user(_NON_TUPLE)
        items = tuple(index)
    elif type(index) is dict:
        items = _dict_items(self, index)  # x[{'C': 0}]: select by name
    else:
        items = (index,)
    xp = _xp_of(self._data)
    out = []
    adv = has_int = False
    inames = None
    masks = None
    for it in items:
        tp = type(it)
        if tp is int:
            out.append(it)
            has_int = True
        elif tp is slice:
            out.append(_check_step(it) if strict else it)
        elif it is None or it is Ellipsis:
            out.append(it)
        elif isinstance(it, Tensor):
            a = it._data
            if (
                a.ndim == 0
                and a.dtype.kind in "iu"
                and a.dtype is not _UINT8
                and a.dtype != _UINT8
                and select
            ):
                # a 0-d integer tensor (of any integer dtype) selects, like an int (a view)
                out.append(int(a))
                has_int = True
            else:
                out.append(_index_array(a, xp) if strict else a)
                adv = True
                if it._names is not None:
                    if out[-1].dtype.kind != "b":
                        inames = (inames or []) + [it._names]
                    else:
                        masks = (masks or {}) | {len(out) - 1: it._names}
        elif tp is bool:  # (numpy's bool scalar is refused below, as torch does)
            out.append(it)
            adv = True
        elif isinstance(it, (list, tuple, range, _ndarray)):
            # torch reads any sequence of ints as a long index (``x[range(n), target]``)
            a = np.asarray(it) if not isinstance(it, _ndarray) else it
            if (
                tp is _ndarray
                and a.dtype.kind != "b"
                and a.dtype != _UINT8
                and a.dtype not in _IDX_DTYPES
            ):  # torch reads a numpy index as a long tensor (truncating)
                if a.dtype.kind == "c":
                    _warn_complex_to_real()
                    a = a.real
                elif a.dtype.kind not in "iuf":
                    _dt.from_numpy_dtype(a.dtype)  # (torch's refusal of its dtype)
                a = a.astype(_INT64)
            if not a.ndim and a.dtype.kind in "iu" and a.dtype != _UINT8:
                out.append(int(a))  # a 0-d integer array selects, like a 0-d integer tensor
                has_int = True
                continue
            if not isinstance(it, _ndarray) and (a.size == 0 or a.dtype.kind in "iuf"):
                a = a.astype(_INT64)  # torch reads a list of numbers as a long tensor
            out.append(_index_array(a, xp) if strict else a)
            adv = True
        elif hasattr(it, "__index__") and not isinstance(it, (float, np.bool_)):
            out.append(operator.index(it))
            has_int = True
        else:
            if type(it).__module__ == "cupy" or (xp is not np and isinstance(it, xp.ndarray)):
                out.append(_index_array(it, xp))
                adv = True
                continue
            _before_bad_item(self, items, it)
            name = tp.__name__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__name__}"
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {name})"
            )
    if masks is not None and self._names is not None:
        _check_masks(self._names, out, masks)
    return out, adv, has_int, inames


def _before_bad_item(self: Tensor, items: tuple, bad) -> None:
    """torch's errors that precede its refusal of index item ``bad`` (a str, a float): too
    many indices (every item but None, ..., a bool counts one dim; a mask its rank), then a
    slice before it with a step below one."""
    n = 0
    for it in items:
        if isinstance(it, Tensor) and it._data.dtype.kind in "bu" and it._data.dtype.itemsize == 1:
            n += it._data.ndim
        elif not (it is None or it is Ellipsis or type(it) is bool):
            n += 1
    if n > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim}")
    for it in items:
        if it is bad:
            break
        if type(it) is slice:
            _check_step(it)
    if type(bad) is str:  # (torch reads a str as data for a tensor)
        raise TypeError("new(): invalid data type 'str'")


def _consumes(it) -> int:
    """How many of the indexed tensor's dims an index item uses up."""
    if it is None or it is Ellipsis or type(it) is bool:
        return 0
    if hasattr(it, "dtype"):
        return it.ndim if it.dtype.kind == "b" else 1
    return 1


def _check_masks(names: tuple, items: list, masks: dict) -> None:
    """A named boolean mask must match the names of the dims it covers (unify rules), as
    masked_select's mask does (spec line 150, P111). ``masks``: item position -> mask names."""

    used = sum(_consumes(it) for it in items)
    pos = 0
    for k, it in enumerate(items):
        if k in masks:
            _check_mask_names(names[pos : pos + it.ndim], masks[k])
        pos += len(names) - used if it is Ellipsis else _consumes(it)


def _check_mask_names(covered: tuple, mask_names: tuple) -> None:
    from ..names import unify

    try:
        unify(covered, mask_names)
    except RuntimeError as e:
        raise RuntimeError(
            f"index: the boolean mask's names do not fit the dims it masks: {e}"
        ) from None


def _dict_items(self: Tensor, index: dict) -> tuple:
    """A dict index ``{dim: item}`` (dims by name or position) as a positional index tuple."""
    from ..dims import normalize_dim

    nd = self._data.ndim
    items = [slice(None)] * nd
    given = [False] * nd
    for d, it in index.items():
        try:
            k = normalize_dim(self, d, nd)
        except RuntimeError as e:  # name the op (names spec 4.10)
            raise RuntimeError(f"index: {e}") from None
        if given[k]:
            raise IndexError(f"dim {d!r} is indexed more than once (dim {k} in a dict index)")
        if it is None or it is Ellipsis:
            raise IndexError(
                f"a dict index selects within existing dims: got {it!r} for dim {d!r}; "
                "use a tuple index (or unsqueeze) to insert dims"
            )
        given[k] = True
        items[k] = it
    while items and not given[len(items) - 1]:
        items.pop()  # trailing full slices: keep the key short (and basic when it can be)
    return tuple(items)


def _prepare(self: Tensor, index, select: bool = True):
    """(op, args, index_names) for reading ``self[index]`` (index_names: see _convert)."""
    items, adv, has_int, inames = _convert(self, index, select=select)
    if not adv:  # (a bare slice stays bare: torch's grad_fn is then always a slice's)
        return _VIEW, (self, items[0] if type(index) is slice else tuple(items)), None
    k = next((i for i, it in enumerate(items) if it is Ellipsis), -1)
    if k >= 0:
        # spell ... out: numpy treats advanced indices around an empty ... as separated, torch not
        used = 0
        for it in items:
            tp = type(it)
            if tp is int or tp is slice:
                used += 1
            elif it is not None and it is not Ellipsis and tp is not bool:
                used += it.ndim if it.dtype.kind == "b" else 1
        items[k : k + 1] = [slice(None)] * max(self._data.ndim - used, 0)
    if not has_int:
        return _ADV, (self, tuple(items)), inames
    # torch applies ints as selects first; numpy would treat them as broadcast advanced indices
    pre = []
    key = []
    ell = False
    for it in items:
        tp = type(it)
        if tp is int:
            pre.append(it)
        elif it is None or tp is bool:
            key.append(it)
        elif it is Ellipsis:
            pre.append(it)
            key.append(it)
            ell = True
        else:
            n = it.ndim if tp is not slice and it.dtype.kind == "b" else 1
            pre.extend((slice(None),) * n)
            key.append(it)
    if not ell:  # (a[pre] is then a view even when pre selects every dim, not numpy's scalar)
        pre.append(Ellipsis)
    return _ADV, (self, tuple(key), tuple(pre)), inames


_OVERLAP_MSG = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
    "a single memory location. Please clone() the tensor before performing the operation."
)


def _addr(a):
    """The address of an array's first element: numpy's or cupy's (None for others)."""
    if type(a) is _ndarray:
        return a.__array_interface__["data"][0]
    p = getattr(getattr(a, "data", None), "ptr", None)
    return p if isinstance(p, int) else None


def _spans_meet(a, b) -> bool:
    """Whether the memory spans of arrays ``a`` and ``b`` intersect (False when unknown)."""
    if not a.size or not b.size:
        return False
    lo_a, lo_b = _addr(a), _addr(b)
    if lo_a is None or lo_b is None or type(a) is not type(b):
        return False
    span_a = sum((n - 1) * abs(st) for n, st in zip(a.shape, a.strides)) + a.itemsize
    span_b = sum((n - 1) * abs(st) for n, st in zip(b.shape, b.strides)) + b.itemsize
    lo_a -= sum((n - 1) * -st for n, st in zip(a.shape, a.strides) if st < 0)
    lo_b -= sum((n - 1) * -st for n, st in zip(b.shape, b.strides) if st < 0)
    return lo_a < lo_b + span_b and lo_b < lo_a + span_a


def _overlaps(a, b, full_ok: bool = False) -> bool:
    """torch's memory-overlap test: two dense arrays whose memory meets overlap (``full_ok``: the
    very same elements are fine, as for copy_); a strided pair it cannot decide passes."""
    if not _spans_meet(a, b):
        return False
    fa, fb = a.flags, b.flags
    if not (fa.c_contiguous or fa.f_contiguous) or not (fb.c_contiguous or fb.f_contiguous):
        return False
    return not (full_ok and _addr(a) == _addr(b) and a.shape == b.shape and a.strides == b.strides)


def _check_no_overlap(self: Tensor, *others) -> None:
    """An in-place index op (or an out=) must not read from the memory it writes."""
    a = self._data
    for o in others:
        if isinstance(o, Tensor) and _overlaps(a, o._data):
            raise RuntimeError(_OVERLAP_MSG)


def _has_empty_mask(key) -> bool:
    """Whether ``key`` holds an empty boolean mask: numpy does not check its shape."""
    for it in key if type(key) is tuple else (key,):
        if getattr(it, "dtype", None) is not None and it.dtype.kind == "b" and not it.size:
            return True
    return False


def _raise_mask_error(self: Tensor, index) -> None:
    err = _diagnose(self, index)
    if err is not None:
        raise err


def _fast_key(index):
    """The key itself when ``index`` is plain basic indexing (the hot path), else None."""
    tp = type(index)
    if tp is int:
        return index
    if tp is slice:
        return index if index.step is None else None
    if tp is tuple:
        for it in index:
            t = type(it)
            if t is int or it is None or it is Ellipsis or (t is slice and it.step is None):
                continue
            return None
        return index
    return None


_ZERO_DIM_INDEX = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
    "C++ to convert a 0-dim tensor to a number"
)


def _is_mask(a) -> bool:
    return a.dtype.kind == "b" or a.dtype == _UINT8


def _mask_shape_error(a, d: int, after: list):
    """torch's error for mask ``a`` at dim ``d`` of the shape ``after`` (None if it fits)."""
    for j in range(a.ndim):
        if d + j >= len(after) or a.shape[j] != after[d + j]:
            return IndexError(
                f"The shape of the mask {list(a.shape)} at index {j} does not match the "
                f"shape of the indexed tensor {after} at index {d + j}"
            )
    return None


def _diagnose(
    self: Tensor, index, values: bool = True, fill: bool = False, select: bool = True
) -> Exception | None:
    """torch's error for an index numpy rejected (None when the index looks fine), found in
    torch's order: a bare int or slice on a 0-dim tensor; the count of indexed dims; the items
    in order (an int's bounds, reported by its position in the index); the index tensors'
    dtypes; each mask's shape; the broadcast of the index tensors (a mask counts as one index
    per dim it covers, a bool or 0-dim mask as one of size 1 or 0); an index into an empty
    dim; and last the index values, only when the result has elements (torch's kernel checks
    each value as it reads it, so an empty result checks none: see _empty_index; ``values=False``
    leaves them out, for index_put_'s dtype check, which comes before them; ``fill``: a write of
    one value, which torch first tries as a masked fill: it checks the shape of a mask that is
    the first index tensor before any index tensor's dtype)."""
    shape = self._data.shape
    nd = len(shape)
    if not nd and (
        type(index) is slice or (isinstance(index, numbers.Integral) and type(index) is not bool)
    ):
        # torch selects or slices a bare int or slice at once, without counting the dims first
        if type(index) is slice:
            _check_step(index)  # (torch reads the slice before it applies it)
            return IndexError("slice() cannot be applied to a 0-dim tensor.")
        if index == 0:
            return IndexError(_ZERO_DIM_INDEX)
        return IndexError(f"index {index} is out of bounds for dimension 0 with size 0")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the first conversion has warned already)
            items = _convert(self, index, strict=False, select=select)[0]
    except (IndexError, ValueError, TypeError, RuntimeError) as e:
        return e
    arrays = [
        None
        if type(it) in (int, slice, bool) or it is None or it is Ellipsis
        else (it if type(it) is _ndarray else it.get())
        for it in items
    ]
    used = 0
    for it, a in zip(items, arrays):
        if a is not None:
            used += a.ndim if _is_mask(a) else 1
        elif type(it) is int or type(it) is slice:
            used += 1
    if used > nd:
        return IndexError(f"too many indices for tensor of dimension {nd}")
    # the items in order: ints and slices, the shape they leave (``after``, with a dim of size 1
    # for None, a bool and a 0-dim mask) and where each index array lands in it
    src = 0
    after = []
    adv = []  # (first dim in ``after``, index array)
    for pos, (it, a) in enumerate(zip(items, arrays)):
        tp = type(it)
        if it is Ellipsis:  # (each ... skips the dims no item names: torch allows several)
            k = nd - used
            after.extend(shape[src : src + k])
            src += k
        elif it is None:
            after.append(1)
        elif tp is bool or (a is not None and not a.ndim and _is_mask(a)):
            adv.append((len(after), np.asarray(it) if a is None else a))
            after.append(1)
        elif src >= nd:
            return IndexError(f"too many indices for tensor of dimension {nd}")
        elif tp is int:
            size = shape[src]
            if not -size <= it < size:
                return IndexError(
                    f"index {it} is out of bounds for dimension {pos} with size {size}"
                )
            src += 1
        elif tp is slice:
            try:
                after.append(len(range(*_check_step(it).indices(shape[src]))))
            except (TypeError, ValueError) as e:
                return e
            src += 1
        else:
            k = a.ndim if _is_mask(a) else 1
            adv.append((len(after), a))
            after.extend(shape[src : src + k])
            src += k
    after.extend(shape[src:])
    if fill and adv and adv[0][1].ndim and _is_mask(adv[0][1]):
        err = _mask_shape_error(adv[0][1], adv[0][0], after)
        if err is not None:
            return err
    for _, a in adv:
        if a.dtype.kind not in "iub" or (
            a.dtype.kind in "iu" and a.dtype not in _IDX_DTYPES + (_UINT8,)
        ):
            return IndexError(_BAD_TENSOR_INDEX)
    shapes = []
    indexed = []  # the sizes of the dims the index tensors index
    for d, a in adv:
        if not _is_mask(a):
            shapes.append(list(a.shape))
            indexed.append(after[d])
        elif not a.ndim:
            shapes.append([int(bool(a))])
            indexed.append(1)
        else:
            err = _mask_shape_error(a, d, after)
            if err is not None:
                return err
            shapes.extend([[int(np.count_nonzero(a))]] * a.ndim)
            indexed.extend(after[d : d + a.ndim])
    try:
        bshape = np.broadcast_shapes(*[tuple(s) for s in shapes])
    except ValueError:
        return IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with "
            "shapes " + ", ".join(str(s) for s in shapes)
        )
    if 0 in indexed and 0 not in bshape:  # (no value can index an empty dim)
        return IndexError("index is out of bounds for dimension with size 0")
    if not values or not all(after) or 0 in bshape:
        return None  # (an empty result: torch reads no index value)
    rank = 0
    for d, a in adv:
        if _is_mask(a):
            rank += max(a.ndim, 1)
            continue
        size = after[d]
        bad = (a < -size) | (a >= size)
        if bad.any():
            v = int(a[bad].reshape(-1)[0])
            return IndexError(f"index {v} is out of bounds for dimension {rank} with size {size}")
        rank += 1
    return None


# ---------------------------------------------------------------------- names
def _basic_names(names, key):
    items = key if type(key) is tuple else (key,)
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    out = []
    i = 0
    for it in items:
        if it is None:
            out.append(None)
        elif it is Ellipsis:
            k = len(names) - used
            out.extend(names[i : i + k])
            i += k
        elif type(it) is slice:
            out.append(names[i])
            i += 1
        else:
            i += 1
    out.extend(names[i:])
    return out


def _getitem_names(ins, key, pre=None, **kw):
    """Ints drop a dim's name, slices keep it, None inserts an unnamed dim; advanced-indexed dims
    become unnamed."""
    names = tuple(ins[0]._names)
    if pre is not None:
        names = tuple(_basic_names(names, pre))
    items = key if type(key) is tuple else (key,)
    if not any(hasattr(it, "dtype") or type(it) is bool for it in items):
        out = _basic_names(names, items)
        return None if all(n is None for n in out) else tuple(out)

    used = sum(_consumes(it) for it in items)
    out = []
    i = 0
    first = None
    bnd = 0
    gaps = False
    last = None
    for k, it in enumerate(items):
        if hasattr(it, "dtype") or type(it) is bool:
            if first is None:
                first = len(out)
            elif last is not None and last != k - 1:
                gaps = True
            last = k
            bnd = max(bnd, 1 if type(it) is bool or it.dtype.kind == "b" else it.ndim)
            i += _consumes(it)
        elif it is None:
            out.append(None)
        elif it is Ellipsis:
            n = len(names) - used
            out.extend(names[i : i + n])
            i += n
        else:
            out.append(names[i])
            i += 1
    out.extend(names[i:])
    at = 0 if gaps else first
    out[at:at] = [None] * bnd
    return None if all(n is None for n in out) else tuple(out)


# ---------------------------------------------------------------------- getitem
def _with_ellipsis(key):
    return key + (Ellipsis,) if type(key) is tuple else (key, Ellipsis)


@op(names=_getitem_names, view=True, method=False)
def _index_view(xp, input, key=None):
    """Basic indexing: a view."""
    r = input[key]
    if isinstance(r, _generic):  # numpy returns a scalar for a full int index: keep a 0-d view
        r = input[_with_ellipsis(key)]
    return r


@_index_view.vjp
def _(grad, input_shape, key):
    return _index_grad(grad, input_shape, key, None, False)


def _slice_skipped(s: slice, n: int) -> bool:
    """Whether torch skips slice ``s`` of a dim of size ``n`` (records no node for it): one
    that starts at 0 as written (not -n), steps by 1 and ends at or past the end."""
    return s.start in (None, 0) and s.step in (None, 1) and (s.stop is None or s.stop >= n)


def _writes_a_view(index, shape) -> bool:
    """Whether torch's setitem writes through a view: some item of the index is basic and does
    something (an int, None, a bool, a 0-dim index tensor, a slice torch does not skip); index
    tensors, ``...`` and slices such as ``x[:]`` write into the tensor itself. Error path: the
    leaf's in-place message."""
    items = index if type(index) is tuple else (index,)
    rest = len(shape) - sum(it is not Ellipsis for it in items)
    dim = 0
    for it in items:
        if it is Ellipsis:
            dim += rest
        elif isinstance(it, (list, np.ndarray)) or getattr(it, "ndim", 0):
            dim += it.ndim if getattr(it, "dtype", None) in (_dt.bool_, np.bool_) else 1
        elif type(it) is slice and dim < len(shape) and _slice_skipped(it, shape[dim]):
            dim += 1
        else:
            return True
    return False


def _index_view_name(node) -> str:
    """torch's grad_fn for basic indexing: that of the last index item that does something (it
    applies them in order: an int selects, a slice slices, None unsqueezes)."""
    key = node.saved_arg("key")
    shape = node.saved_arg("input_shape")
    items = key if type(key) is tuple else (key,)
    rest = len(shape) - sum(it is not None and it is not Ellipsis for it in items)
    name, dim = None, 0
    for it in items:
        if it is Ellipsis:
            dim += rest
        elif it is None:
            name = "UnsqueezeBackward0"
        elif isinstance(it, slice):
            if not _slice_skipped(it, shape[dim]):
                name = "SliceBackward0"
            dim += 1
        else:
            name = "SelectBackward0"
            dim += 1
    if name is None:  # nothing done: x[:] is still a slice, x[...] an alias
        return "SliceBackward0" if isinstance(key, slice) else "AliasBackward0"
    return name


_index_view.op.name_rule = _index_view_name


@op(names=_getitem_names, method=False)
def _index(xp, input, key=None, pre=None):
    """Advanced indexing: a copy."""
    contiguous = input.flags.c_contiguous
    if pre is not None:
        input = input[pre]
    elif contiguous and type(key) is _ndarray and key.dtype.kind == "i":
        # x[idx]: take is faster than fancy indexing (its result is row-major: a permuted
        # input goes the long way, whose result keeps the input's order as torch's does)
        return input.take(key, axis=0)
    if xp is meta_xp and any(
        getattr(k, "dtype", None) == _BOOL for k in (key if type(key) is tuple else (key,))
    ):
        no_meta_kernel(xp, "aten::index (a boolean mask)")
    r = input[key]
    if not r.flags.c_contiguous:
        # numpy lays out x[:, idx] with the indexed dim outermost; torch's result of a
        # contiguous input is contiguous (``.view`` of it works), that of a permuted one keeps
        # the input's order for the sliced dims
        r = xp.ascontiguousarray(r) if contiguous else _index_layout(xp, input, key, r)
    return r


def _index_layout(xp, a, key, r):
    """``r = a[key]`` (``key``: slices, None, bools and index arrays, no ints or ...) laid out
    as torch's index kernel lays it out: dense, the dims that slice ``a`` in the order of
    ``a``'s strides, the dims of the broadcast index arrays (one block: in place when the
    arrays are adjacent in ``key``, else first) where they are (layout.dense_order_strides with
    a stride of 0 for them)."""
    items = key if type(key) is tuple else (key,)
    before, after, adv = [], [], []
    d = 0
    for i, it in enumerate(items):
        if isinstance(it, slice):
            (after if adv else before).append(a.strides[d] * (it.step or 1))
            d += 1
        elif it is None or type(it) is bool:
            (after if adv else before).append(0)  # a new size-1 (or 0) dim: no order
        else:
            adv.append(i)
            d += it.ndim if it.dtype.kind == "b" else 1
    if not adv:
        return r
    after.extend(a.strides[d:])
    nb = r.ndim - len(before) - len(after)
    if adv[-1] - adv[0] + 1 == len(adv):
        st = before + [0] * nb + after
    else:  # separated index arrays: numpy and torch put their dims first
        st = [0] * nb + before + after
    return restride(xp, r, dense_order_strides(r.shape, st))


@_index.vjp
def _(grad, input_shape, key, pre):
    return _index_grad(grad, input_shape, key, pre, True)


def _has_int_array(key) -> bool:
    for k in key if type(key) is tuple else (key,):
        d = getattr(k, "dtype", None)
        if d is not None and d.kind in "iu":
            return True
    return False


@op(names=FALLBACK, method=False)
def _index_grad(xp, grad, shape=None, key=None, pre=None, adv=False):
    """Zeros of ``shape`` with ``grad`` added at ``[pre][key]`` (duplicates accumulate)."""
    z = xp.zeros(shape, grad.dtype)
    t = z if pre is None else z[pre]
    if adv and _has_int_array(key):
        _add_at(xp, t, key, grad, sequential=True)  # torch: index_put_(accumulate=True)
    else:
        t[key] = grad
    return z


@_index_grad.vjp
def _(grad, key, pre, adv):
    return _get(grad, key, pre, adv)


def _get(t: Tensor, key, pre=None, adv=False) -> Tensor:
    """``t[key]`` with an already-normalised key."""
    if not adv:
        return _apply(_VIEW, (t, key), _NOKW)
    return _apply(_ADV, (t, key, pre), _NOKW)


def _view_of(self: Tensor, r) -> Tensor:
    t = _new(Tensor)
    t._data = r
    t.requires_grad = False
    t._grad_fn = None
    t._grad = None
    t._names = None
    t._ver = self._ver
    ex = self._extra
    base = ex.get("base") if ex else None
    t._extra = {"base": self if base is None else base}
    if not _state.enabled:  # a recorded in-place write to it is refused (_rebase_history)
        t._extra["ng"] = _state.inference  # made in no_grad (False) or inference mode
        if self.requires_grad:  # torch's view requires grad then: apply_inplace refuses
            t._extra["ngr"] = t._ver[0]  # (the version its base must keep)
            t.requires_grad = True  # (with no edge to the base: the registry's record loop)
    return t


def _getitem(self: Tensor, index) -> Tensor:
    key = _fast_key(index)
    if (
        key is not None
        and self._names is None
        and not (self.requires_grad and _state.enabled)
        and not _VMAP_SLICES
    ):
        # the hot path (x[0], x[:, 1] without autograd): a view, no registry round trip
        a = self._data
        try:
            r = a[key]
        except (IndexError, ValueError, TypeError) as e:
            return _index_failed(self, index, e)
        if isinstance(r, _generic):  # numpy's scalar for a full int index: keep a 0-d view
            r = a[_with_ellipsis(key)]
        return _view_of(self, r)
    if _VMAP_SLICES:
        # under vmap: part of a per-element value (or one picked by it) is one too
        _vmap_refuse_mask_index(index)
        r = _getitem_general(self, index, key)
        _vmap_mark((self, index), (r,))
        return r
    return _getitem_general(self, index, key)


def _getitem_general(self: Tensor, index, key) -> Tensor:
    if key is not None:
        args = (self, key)
        od = _VIEW
        inames = None
    elif (
        type(index) is Tensor
        and type(index._data) is type(self._data)
        and index._data.dtype in _FAST_DTYPES
        and index._data.ndim
    ):
        args = (self, index._data)  # x[idx], x[mask]: the array is the key
        od = _ADV
        inames = index._names
        if inames is not None and index._data.dtype.kind == "b":
            if self._names is not None:  # a named mask covers the leading dims: check them
                _check_mask_names(self._names[: index._data.ndim], inames)
            inames = None
        elif inames is not None:
            inames = [inames]
    else:
        try:
            od, args, inames = _prepare(self, index)
        except (IndexError, ValueError) as e:  # (torch reads the items in order)
            raise _diagnose(self, index) or e from None
    if od is _ADV and _has_empty_mask(args[1]):
        _raise_mask_error(self, index)
    try:
        if self._names is None and inames is None and not (self.requires_grad and _state.enabled):
            a = self._data
            r = od.kernel(_xp_of(a), a, *args[1:])
            if od is _VIEW:
                return _view_of(self, r)
            return _wrap(r if type(r) is _ndarray or not isinstance(r, _generic) else np.asarray(r))
        r = _apply(od, args, _NOKW)
        node = r._grad_fn
        if node is not None and od is _ADV:
            if type(index) is Tensor and node.vers is None:  # x[idx]: its node keeps nothing else
                node.vers = [(index, index._ver[0])]
            else:
                _check_index_tensors(node, index)
        if inames is not None:
            return _name_by_index(r, args, inames)
        return r
    except (IndexError, ValueError, TypeError) as e:
        return _index_failed(self, index, e)


def _check_index_tensors(node, index) -> None:
    """The node of ``x[idx]`` keeps the index tensors' arrays in its key: like torch, which saves
    them, it refuses a backward after one of them changed in place (it would scatter the
    gradient to the new positions)."""
    for it in index if type(index) is tuple else (index,):
        if isinstance(it, Tensor):
            if node.vers is None:
                node.vers = []
            node.vers.append((it, it._ver[0]))


def _index_failed(self: Tensor, index, e: Exception) -> Tensor:
    """``self[index]`` where numpy raised ``e``: torch's error, or torch's result for what numpy
    refuses and torch allows (several ``...``; an out-of-range index value in an empty result)."""
    err = _diagnose(self, index)
    if err is not None:
        raise err from None
    msg = str(e)
    if "single ellipsis" in msg:
        return _getitem(self, _expand_ellipses(self, index))
    if "out of bounds" in msg:
        r = _empty_index(self, index)
        if not r._data.size:  # (any other result: numpy's error stands)
            return r
    raise e


_ELLIPSIS_SLICE = slice(None)  # (told apart from the user's slices by identity)


def _expand_ellipses(self: Tensor, index: tuple) -> tuple:
    """An index with several ``...`` spelled without them, as torch reads it: each skips the
    dims no other item names (and the ones past the last dim are dropped: they skip nothing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        items = _convert(self, index, strict=False)[0]  # (one per item of the tuple)
    used = 0
    for it in items:
        if type(it) is int or type(it) is slice:
            used += 1
        elif it is not None and it is not Ellipsis and type(it) is not bool:
            used += it.ndim if it.dtype.kind == "b" or it.dtype == _UINT8 else 1
    out = []
    for it in index:
        if it is Ellipsis:
            out.extend([_ELLIPSIS_SLICE] * max(self._data.ndim - used, 0))
        else:
            out.append(it)
    while out and out[-1] is _ELLIPSIS_SLICE and len(out) > self._data.ndim:
        out.pop()
    return tuple(out)


def _empty_index(self: Tensor, index) -> Tensor:
    """``self[index]`` for an index whose result is empty though a value of an index array is
    out of range: torch checks the values only as its kernel reads them (none here), numpy all
    of them. Any value in range gives the same empty result: 0 (numpy does not check an index
    into an empty dim when the broadcast indices are empty)."""
    return _getitem_general(self, _zeroed(tuple(_convert(self, index)[0])), None)


_VIEW = _index_view.op
_ADV = _index.op


def _name_by_index(r: Tensor, args: tuple, inames: list) -> Tensor:
    """``x[idx]`` with named index tensors: the indexed (advanced) dims of the result take the
    index tensors' names (unified from the right, like their broadcast), spec 4.6."""
    from ..names import check_names, unify

    key = args[1]
    nd = args[0]._data.ndim
    if len(args) > 2:  # ints were applied first as selects
        nd -= sum(1 for it in args[2] if type(it) is int)
    items = key if type(key) is tuple else (key,)

    used = sum(_consumes(it) for it in items)
    pos = 0
    first = last = None
    gaps = False
    bnd = 0
    for k, it in enumerate(items):
        if hasattr(it, "dtype") or type(it) is bool:
            if first is None:
                first = pos
            elif last != k - 1:
                gaps = True
            last = k
            bnd = max(bnd, 1 if type(it) is bool or it.dtype.kind == "b" else it.ndim)
        elif it is Ellipsis:
            pos += nd - used
        else:  # a slice or None: one result dim
            pos += 1
    at = 0 if gaps else first
    block = None
    try:
        for n in inames:
            block = n if block is None else unify(block, n)
    except RuntimeError as e:  # index tensors broadcast together: name the op (spec 4.10)
        raise RuntimeError(f"index: the index tensors' names do not match: {e}") from None
    block = (None,) * (bnd - len(block)) + tuple(block[-bnd:] if bnd else ())
    names = list(r._names or (None,) * r._data.ndim)
    names[at : at + bnd] = block
    try:
        new = check_names(names, r._data.ndim)
    except RuntimeError as e:
        raise RuntimeError(
            f"index: the index tensor's names {list(block)} clash with the indexed tensor's "
            f"remaining dims: {e} Rename the index tensor (.rename(...)) first."
        ) from None
    r._names = new  # a fresh result: its node's record of the output's names follows
    fn = r._grad_fn
    if fn is not None and fn.op is _ADV:
        shape, dtype, _ = fn.meta[0]
        fn.meta = ((shape, dtype, new),)
    return r


# ---------------------------------------------------------------------- setitem
@op(names=keep, method=False)
def _index_put(xp, input, values, key=None, pre=None, adv=False, accumulate=False):
    """``input[pre][key] = values`` (or ``+=`` with duplicates accumulating) written into input's
    storage (the registry's result shares it)."""
    t = input if pre is None else input[pre]
    if accumulate:
        _add_at(xp, t, key, values, sequential=True)
    else:
        t[key] = values
    return input


@_index_put.vjp
def _(grad, key, pre, adv, accumulate, values_shape, needs):
    gs = None
    if needs[0]:
        gs = grad if accumulate else _index_zero(grad, key, pre)
    gv = None
    if needs[1]:
        gv = _get(grad, key, pre, adv)
        extra = len(values_shape) - gv.ndim
        if extra > 0:  # a value with extra leading 1-dims (allowed, like numpy)
            gv = gv.reshape((1,) * extra + tuple(gv.shape))
    return gs, gv


@op(names=FALLBACK, method=False)
def _index_zero(xp, grad, key=None, pre=None):
    """A copy of ``grad`` with ``[pre][key]`` zeroed (self-adjoint)."""
    out = grad.copy()
    t = out if pre is None else out[pre]
    t[key] = 0
    return out


@_index_zero.vjp
def _(grad, key, pre):
    return _index_zero(grad, key, pre)


def _setitem_error(a, key, pre, v, adv, strip: bool = True):
    t = a if pre is None else a[pre]
    target = list(t[key].shape) if adv else list(np.shape(t[key]))
    vs = list(getattr(v, "shape", ()))
    while strip and vs and vs[0] == 1:  # (torch's setitem drops the value's leading 1s first)
        vs.pop(0)
    if adv:
        lead = len(target) - len(vs)
        if lead >= 0 and all(s == 1 or s == target[lead + i] for i, s in enumerate(vs)):
            return None
        return RuntimeError(
            f"shape mismatch: value tensor of shape {vs} cannot be broadcast to "
            f"indexing result of shape {target}"
        )
    return _expand_error(v.dtype if vs else None, vs, target)


def _expand_error(npd, vs: list, target: list) -> RuntimeError | None:
    """torch's error for expanding a tensor of shape ``vs`` (numpy dtype ``npd``) to ``target``
    (None when it expands)."""
    if len(vs) > len(target):
        what = _dt.cpu_type_name(_dt.from_numpy_dtype(npd))
        return RuntimeError(
            f"expand({what}{{{vs}}}, size={target}): the number of sizes "
            f"provided ({len(target)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(vs)})"
        )
    lead = len(target) - len(vs)
    for i in reversed(range(len(vs))):  # (torch's expand compares from the last dim)
        s = vs[i]
        if s != 1 and s != target[lead + i]:
            return RuntimeError(
                f"The expanded size of the tensor ({target[lead + i]}) must match the existing size "
                f"({s}) at non-singleton dimension {lead + i}.  Target sizes: {target}.  Tensor "
                f"sizes: {vs}"
            )
    return None


def _without_leading_ones(a, key, pre, vs, adv):
    """The value's shape without the leading 1-dims it has beyond the target's rank, or None
    when it has none to drop."""
    t = a if pre is None else a[pre]
    nd = t[key].ndim if adv else np.ndim(t[key])
    extra = len(vs) - nd
    if extra <= 0 or any(s != 1 for s in vs[:extra]):
        return None
    return tuple(vs[extra:])


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_F32_MAX = float(np.finfo(np.float32).max)


def _in_float_range(npd, v: float) -> bool:
    """Whether real number ``v`` needs no range check to be stored in numpy dtype ``npd`` (the
    common float32/float64 targets, answered without fill_scalar's general checks)."""
    return npd is _F64 or (npd is _F32 and -_F32_MAX <= v <= _F32_MAX)


def _check_number(self: Tensor, value) -> None:
    """A number written by ``self[index] = value`` is range-checked before the index is read
    (and a value neither number nor tensor refused)."""
    if type(value) in (int, float, complex):
        _setitem_number(value, self._data.dtype)
    elif not isinstance(value, (Tensor, int, float, complex, _generic)):
        _value_type_error(self, value)


def _value_type_error(self: Tensor, value) -> None:
    cuda = "cuda." if self.device.type == "cuda" else ""
    raise TypeError(
        f"can't assign a {type_name(value)} to a torch.{cuda}{_dt.legacy_type_name(self.dtype)}"
    )


def _setitem_number(v, npd):
    """A number to store by ``x[index] = v``: fill_'s range check, except that a real number
    past a float16's or bfloat16's range rounds to inf there (torch's setitem converts it to a
    float tensor, then casts)."""
    if npd.itemsize == 2 and npd.kind in "fV":
        if type(v) is complex:  # (through a double: torch names that type)
            v = _dt.fill_scalar(v, _F64)
        if type(v) is float or type(v) is int:
            with np.errstate(over="ignore"):
                return npd.type(v)
    return _dt.fill_scalar(v, npd)


def _setitem(self: Tensor, index, value, accumulate: bool = False, put: bool = False) -> None:
    """``self[index] = value`` (``put``: for index_put_, which takes the value as it is)."""
    if _INFERENCE_USED[0]:
        check_inference_inplace(self)
    key = _fast_key(index)
    if key is not None:
        pre = None
        adv = False
    elif (
        type(index) is Tensor
        and type(index._data) is type(self._data)
        and index._data.dtype in _FAST_DTYPES
        and index._data.ndim
    ):
        key = index._data
        pre = None
        adv = True
        if index._names is not None and self._names is not None and key.dtype.kind == "b":
            _check_mask_names(self._names[: key.ndim], index._names)
    else:
        if index is False:
            return  # torch writes nothing and checks nothing
        if not accumulate and _byte_masked_fill(index, value, put):
            _check_number(self, value)
            raise _diagnose(self, index, values=False, select=not put) or RuntimeError(
                "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
            )
        try:
            od, args, _ = _prepare(self, index, select=not put)
        except (IndexError, ValueError) as e:  # (torch reads the items in order)
            _check_number(self, value)
            one = not accumulate and (not isinstance(value, Tensor) or value._data.size == 1)
            raise _diagnose(self, index, fill=one, select=not put) or e from None
        key = args[1]
        pre = args[2] if len(args) > 2 else None
        adv = od is _ADV
    if adv and _has_empty_mask(key):
        _check_number(self, value)
        _raise_mask_error(self, index)
    vt = isinstance(value, Tensor)
    if vt and _spans_meet(self._data, value._data):
        if adv:  # index_put_ refuses any overlap
            _check_no_overlap(self, value)
        else:  # copy_ into the region: the very same elements are fine, a partial overlap not
            try:
                region = self._data[key]
                if isinstance(region, _generic):  # (numpy's scalar: the 0-dim view instead)
                    region = self._data[_with_ellipsis(key)]
            except IndexError:  # (several ...: the write below reads them as torch does)
                region = None
            v = value._data
            while v.ndim > np.ndim(region) and v.shape[0] == 1:
                v = v[0]  # (torch's setitem drops the value's leading 1s first)
            if hasattr(region, "flags") and _overlaps(region, v, full_ok=True):
                raise RuntimeError(_OVERLAP_MSG)
    if vt and value.dtype is not self.dtype and not _put_converts(index, value):
        raise _put_dtype_error(self, index, key, pre, value)
    if vt and _VMAP_SLICES:
        _vmap_refuse_inplace("__setitem__", self, (value,))
    ex = self._extra
    if ex and "ngr" in ex and _state.enabled:
        _refuse_no_grad_view_write(self, index, adv or put)
    if not vt and not isinstance(value, (int, float, complex, _generic)):
        _value_type_error(self, value)
    if vt and value._names is not None and self._names is not None:
        _check_put_names(self, key, pre, value._names)
    try:
        if _state.enabled and (self.requires_grad or (vt and value.requires_grad)):
            ex = self._extra
            if ex and "cm" in ex and self._grad_fn is not None:
                check_multi_view_inplace(self, key)
            if self.requires_grad:
                err = leaf_write_error(
                    self, self._grad_fn is None and _writes_a_view(index, self._data.shape)
                )
                if err is not None:
                    raise err
            r = _apply(_PUT, (self, value, key, pre, adv, accumulate), _NOKW)
            self._ver[0] += 1
            if r._grad_fn is not None:
                _rebase_history(self, r)  # a view's write reaches its base (_write_through_view)
            return
        a = self._data
        v = value._data if vt else value
        if not vt and not ((type(v) is float or type(v) is int) and _in_float_range(a.dtype, v)):
            # torch's range check (-1 into uint8 is 255; 1e40 into float32 and 1j into a real
            # tensor raise)
            v = _setitem_number(v, a.dtype)
        if vt and type(v) is not type(a):
            v = v.item() if v.ndim == 0 else _xp_of(a).asarray(v)
        if vt and adv and type(index) is not bool and getattr(v, "dtype", a.dtype) != a.dtype:
            # one value under one mask (_put_converts): torch's masked fill of value.item(),
            # after its checks of the index
            try:
                v = _dt.fill_scalar(v.reshape(-1)[0].item(), a.dtype)
            except RuntimeError as e:
                raise _diagnose(self, index, select=not put) or e from None
        if vt and a.dtype.kind != "c" and getattr(v, "dtype", a.dtype).kind == "c":
            if a.dtype.kind == "b":  # a bool takes the truth of both parts, as copy_ does
                v = v != 0
            else:
                if adv or np.size((a if pre is None else a[pre])[key]):
                    _warn_complex_to_real()  # copy_'s warning (none for an empty region)
                v = v.real
        if accumulate:
            _add_at(_xp_of(a), a if pre is None else a[pre], key, v, sequential=True)
        elif pre is None:
            if (
                type(v) is float
                and type(key) is _ndarray
                and key.dtype is _BOOL
                and key.shape == a.shape
            ):
                np.putmask(a, key, v)  # x[mask] = 0.0: several times faster than a[mask] = v
            else:
                a[key] = v
        else:
            a[pre][key] = v
        self._ver[0] += 1
    except (IndexError, TypeError, ValueError) as e:
        _setitem_failed(self, index, value, accumulate, key, pre, adv, e, put)
    except RuntimeError as e:  # (the registry's broadcast of a recorded write's operands)
        if not str(e).startswith("The size of tensor a"):
            raise
        _setitem_failed(self, index, value, accumulate, key, pre, adv, e, put)


def _setitem_failed(
    self: Tensor, index, value, accumulate, key, pre, adv, e: Exception, put: bool = False
) -> None:
    """``self[index] = value`` where numpy raised ``e``: torch's error (the index's structure,
    then the value's shape, then the index values), or the write torch makes of what numpy
    refuses (several ``...``, a value with extra leading 1s, an empty region whose index values
    are out of range)."""
    _check_number(self, value)
    if index is True:
        adv = False  # torch writes a view (x.unsqueeze(0)): copy_'s shape messages
    err = _diagnose(self, index, values=False, select=not put)
    if err is not None:
        raise err from None
    msg = str(e)
    if "read-only" in msg and _write_expanded(self, index, value, accumulate, key, pre, adv, put):
        return
    if "single ellipsis" in msg:  # torch reads several
        return _setitem(self, _expand_ellipses(self, index), value, accumulate)
    k = _zeroed(key) if adv else key  # (the region's shape, whatever the index values)
    if isinstance(value, Tensor):
        shape = None if put else _without_leading_ones(self._data, k, pre, value.shape, adv)
        if shape is not None:  # x[0, 1] = tensor([v]): torch drops the value's leading 1s
            return _setitem(self, index, value.reshape(shape), accumulate)
        err = _setitem_error(self._data, k, pre, value._data, adv or put, not put)
    if err is None and adv:
        err = _diagnose(self, index, select=not put)  # (the index values, last)
        if err is None and "out of bounds" in msg:  # an empty region: torch reads no value
            t = self._data if pre is None else self._data[pre]
            xp = _xp_of(t)
            if not xp.broadcast_to(xp.zeros((), _BOOL), t.shape)[k].size:
                items = _convert(self, index, select=not put)[0]
                return _setitem(self, _zeroed(tuple(items)), value, accumulate, put)
    if err is None:
        raise e
    raise err from None


_EXPANDED_PUT = (
    "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
    "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = "
    "tensor"
)
_EXPANDED_FILL = (
    "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
    "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar"
)


def _write_expanded(self: Tensor, index, value, accumulate, key, pre, adv, put) -> bool:
    """``self[index] = value`` into an expanded tensor (numpy's read-only broadcast view), as
    torch: a view's copy_ refuses a region whose elements share memory, else writes; index_put_
    writes, with its deprecation warning (and masked_fill_'s, for one value under one mask).
    False for a recorded write ember cannot make (the caller raises numpy's error)."""
    from ..registry import _check_writable
    from .conversion import _fill_target

    a = self._data
    if not adv:
        if isinstance(value, Tensor):  # (copy_ checks the shapes first)
            err = _setitem_error(a, key, pre, value._data, False)
            if err is not None:
                raise err
        region = (a if pre is None else a[pre])[key]
        shape = np.shape(region)
        if 0 not in shape and any(
            n > 1 and not st for n, st in zip(shape, getattr(region, "strides", ()))
        ):
            _check_writable(region)  # (torch's internal-overlap error)
    else:
        basic = []  # (torch warns when the part its slices leave has elements that share memory)
        arrays = []
        for it in key if type(key) is tuple else (key,):
            if hasattr(it, "dtype"):
                basic += [slice(None)] * (it.ndim if it.dtype.kind == "b" else 1)
                arrays.append(it)
            elif type(it) is bool:
                arrays.append(it)
            elif it is not None:
                basic.append(it)
        part = (a if pre is None else a[pre])[tuple(basic)]
        if part.size and any(n > 1 and not st for n, st in zip(part.shape, part.strides)):
            warn_user(_EXPANDED_PUT)
            if (
                not accumulate
                and len(arrays) == 1
                and getattr(arrays[0], "ndim", 0)
                and arrays[0].dtype.kind == "b"
                and (not isinstance(value, Tensor) or value._data.size == 1)
            ):
                warn_user(_EXPANDED_FILL)
    if _state.enabled and (
        self.requires_grad or (isinstance(value, Tensor) and value.requires_grad)
    ):
        return not put and _put_into_base(self, value, key, pre, accumulate)
    alias = _fill_target(a)  # (writable, over the expanded memory)
    if accumulate and adv and a.dtype.kind != "b" and isinstance(value, Tensor):
        # one add per index, unbuffered: the updates of elements sharing memory all land
        np.add.at(alias if pre is None else alias[pre], key, value._data.astype(a.dtype))
    else:
        _setitem(_wrap(alias), index, value, accumulate, put)
    self._ver[0] += 1
    return True


def _put_into_base(self: Tensor, value, key, pre, accumulate) -> bool:
    """The recorded ``self[key] = value`` of an expanded view: a write into its base at the
    positions the region's elements share, after which self is a view of the new base (so the
    gradient of every element sharing a written position is the value's, as in torch).
    False where the base's layout gives no positions (the caller's error stands)."""
    ex = self._extra
    base = ex.get("base") if ex else None
    pos = None if base is None else _positions(base, self)
    if pos is None or base._data.dtype != self._data.dtype:
        return False
    xp = _xp_of(pos)
    region = xp.asarray((pos if pre is None else pos[pre])[key])
    at = xp.unravel_index(region, base._data.shape)
    r = _apply(_PUT, (base, value, at, None, True, accumulate), _NOKW)
    base._ver[0] += 1  # (self shares it)
    _rebase_history(base, r)
    a = self._data
    isz = a.itemsize
    new = base.as_strided(a.shape, [st // isz for st in a.strides], int(pos.reshape(-1)[0]))
    self._grad_fn = new._grad_fn
    self.requires_grad = True
    return True


def _zeroed(key):
    """``key`` with its integer index arrays zeroed (in range for any non-empty dim)."""
    if type(key) is not tuple:
        return _xp_of(key).zeros_like(key) if key.dtype.kind in "iu" else key
    return tuple(
        _xp_of(it).zeros_like(it) if getattr(it, "dtype", _BOOL).kind in "iu" else it for it in key
    )


_PUT = _index_put.op


def _put_node_name(node) -> str:
    """torch's grad_fn for ``x[index] = v``: a write into a view of x (ints, None, bools, slices
    torch does not skip), recorded as CopySlices; else index_put's when there are index tensors;
    else a fill_ of a 0-dim value or a copy_ into all of x."""
    if node.saved_arg("pre") is not None:  # (ints: selects)
        return "torch::autograd::CopySlices"
    key = node.saved_arg("key")
    items = key if type(key) is tuple else (key,)
    shape = node.meta[0][0]
    used = sum(
        (it.ndim if it.dtype.kind == "b" else 1) if hasattr(it, "dtype") else 1
        for it in items
        if it is not None and it is not Ellipsis and type(it) is not bool
    )
    dim = 0
    for it in items:
        if it is Ellipsis:
            dim += len(shape) - used
        elif type(it) is slice:
            if not _slice_skipped(it, shape[dim]):
                return "torch::autograd::CopySlices"
            dim += 1
        elif hasattr(it, "dtype") and it.ndim:  # an index array (0-dim: index_put_'s)
            dim += it.ndim if it.dtype.kind == "b" else 1
        elif not hasattr(it, "dtype") or it.dtype.kind == "b":  # an int, None, a bool
            return "torch::autograd::CopySlices"
        else:
            dim += 1
    if node.saved_arg("adv"):
        return "IndexPutBackward0"
    if shape and not node.saved_arg("values_shape"):
        return "FillBackward3"  # (a 0-dim value fills a tensor of dims)
    return "torch::autograd::CopyBackwards"


_PUT.name_rule = _put_node_name


def _check_put_names(self: Tensor, key, pre, vnames: tuple) -> None:
    """``self[key] = value``: the value's names must match the names of the region it is written
    to (unify rules, like ``self[key].copy_(value)``; spec lines 64, 382-384)."""
    from ..names import unify

    region = _getitem_names((self,), key, pre)
    if region is None:
        return
    try:
        unify(region, vnames)
    except RuntimeError as e:
        raise RuntimeError(f"__setitem__: {e}") from None


def _index_put_(self: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """``self[indices] = values`` (``+=`` with duplicates accumulating when ``accumulate``)."""
    if not isinstance(indices, (tuple, list)):
        _raise_arg("index_put_", "indices", 2, "tuple of Tensors", indices, True)
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):  # (torch's binding refuses None too)
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    if not isinstance(values, Tensor):  # torch takes no number here (x[i] = 1.0 does)
        raise TypeError(
            f"index_put_(): argument 'values' (position 2) must be Tensor, not {type_name(values)}"
        )
    if len(indices) > self._data.ndim:  # (0-dim integer tensors index here: they do not select)
        raise IndexError(
            f"too many indices for tensor of dimension {self._data.ndim} (got {len(indices)})"
        )
    for t in indices:  # (so their dtype is checked as index tensors', also when 0-dim)
        d = t._data.dtype
        if d not in _IDX_DTYPES and d.kind != "b" and d != _UINT8:
            raise IndexError(_BAD_TENSOR_INDEX)
    fill = not accumulate and _mask_fill(indices, values)  # (accumulating never fills)
    if values.dtype is not self.dtype and not fill:
        # index_put_ does not convert: its refusal comes after its checks of the index's shapes
        index = tuple(indices)
        try:
            args = _prepare(self, index, select=False)[1]
        except (IndexError, ValueError) as e:
            raise _diagnose(self, index, select=False) or e from None
        pre = args[2] if len(args) > 2 else None
        raise _put_dtype_error(self, index, args[1], pre, values, put=True)
    if fill:
        values = values.reshape(())  # torch's masked fill of values.item()
    elif values._data.ndim and values._data.shape[0] == 1:
        _check_put_rank(self, tuple(indices), values)
    try:
        _setitem(self, tuple(indices), values, accumulate, put=True)
    except RuntimeError as e:  # a name clash is index_put_'s (spec 4.10), not __setitem__'s
        raise as_op_error(e, "index_put_", ("__setitem__",), self, values, *indices) from None
    return self


def _check_put_rank(self: Tensor, index: tuple, values: Tensor) -> None:
    """index_put_ takes ``values`` as it is: numpy would drop leading 1s past the rank of the
    indexed region, torch refuses them (its setitem drops them first)."""
    used = block = 0  # (the region's rank: index_put_'s indices are all tensors)
    for t in index:
        a = t._data
        mask = a.dtype.kind == "b" or a.dtype == _UINT8
        used += a.ndim if mask else 1
        block = max(block, 1 if mask else a.ndim)
    if values._data.ndim <= self._data.ndim - used + block:
        return
    try:  # (the region's shape, for the message)
        args = _prepare(self, index, select=False)[1]
        a = self._data
        t = a if len(args) < 3 else a[args[2]]
        xp = _xp_of(a)
        region = xp.broadcast_to(xp.zeros((), _BOOL), t.shape)[_zeroed(args[1])].shape
    except (IndexError, TypeError, ValueError):
        return  # (the write raises torch's error)
    if values._data.ndim > len(region):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
            f"indexing result of shape {list(region)}"
        )


def _put_dtype_error(self: Tensor, index, key, pre, value: Tensor, put: bool = False) -> Exception:
    """index_put_'s refusal of another dtype, after torch's earlier checks: a mask's shape, then
    the value's shape against the indexed region's (an index out of range is found later)."""
    a = self._data
    try:
        target = list((a if pre is None else a[pre])[key].shape)
    except (IndexError, TypeError, ValueError):
        # (torch reads the index before the value)
        err = _diagnose(self, index, values=False, select=not put)
        if err is not None:
            return err
        try:  # (an index value out of range is found later)
            target = list((a if pre is None else a[pre])[_zeroed(key)].shape)
        except (IndexError, TypeError, ValueError):
            return RuntimeError(_put_dtype_message(self, value))
    vs = list(value.shape)
    while not put and vs and vs[0] == 1:  # torch's setitem drops the value's leading 1s
        vs.pop(0)
    lead = len(target) - len(vs)
    if lead < 0 or any(v != 1 and v != target[lead + i] for i, v in enumerate(vs)):
        return RuntimeError(
            f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
            f"indexing result of shape {target}"
        )
    return RuntimeError(_put_dtype_message(self, value))


def _put_dtype_message(self: Tensor, values: Tensor) -> str:
    return (
        "Index put requires the source and destination dtypes match, got "
        f"{_dt.scalar_name(self.dtype)} for the destination and "
        f"{_dt.scalar_name(values.dtype)} for the source."
    )


def _mask_fill(indices, values) -> bool:
    """One boolean mask and one value: a masked fill, which converts the value (as torch)."""
    return (
        len(indices) == 1
        and isinstance(indices[0], Tensor)
        and indices[0].dtype is _dt.bool_
        and values.numel() == 1
    )


@_autocast_entry
def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` put (or accumulated) at ``indices``."""
    if not isinstance(indices, (tuple, list)):
        _raise_arg("index_put", "indices", 2, "tuple of Tensors", indices, False)
    if not isinstance(values, Tensor):
        _raise_arg("index_put", "values", 3, "Tensor", values, False)
    try:
        return _index_put_(input.clone(), indices, values, accumulate)
    except RuntimeError as e:  # the out-of-place form names itself (spec 4.10)
        raise as_op_error(e, "index_put", ("index_put_",), input, values, *indices) from None


def _positions(base: Tensor, view: Tensor):
    """Flat indices into ``base`` (C-contiguous) of each element of ``view``, or None. For a
    real view of a complex base (``.real``, ``.imag``, ``view_as_real``) the indices count the
    base's real and imaginary parts (its ``view_as_real`` layout)."""
    b, v = base._data, view._data
    if not b.flags.c_contiguous or type(b) is not type(v):
        return None
    xp = _xp_of(b)
    isz = v.itemsize if b.dtype.kind == "c" and v.dtype.kind != "c" else b.itemsize
    off = (_ptr(v, xp) - _ptr(b, xp)) // isz
    pos = xp.full(v.shape, off, dtype=_INT64)
    nd = v.ndim
    for d in range(nd):
        st = v.strides[d]
        if st % isz:
            return None
        if v.shape[d] > 1 and st:
            shp = [1] * nd
            shp[d] = v.shape[d]
            pos += xp.arange(v.shape[d], dtype=_INT64).reshape(shp) * (st // isz)
    return pos


@op(names=FALLBACK, method=False)
def _copy_slices(xp, base, src, positions=None):
    """Records that ``src`` was written into ``base`` at flat ``positions`` (already done)."""
    return base


@_copy_slices.vjp
def _(grad, src_dtype, positions, needs):
    from .misc import view_as_complex, view_as_real

    parts = grad.is_complex() and not src_dtype.is_complex  # positions count real/imag parts
    flat = (view_as_real(grad) if parts else grad).reshape(-1)
    gb = gs = None
    if needs[0]:
        gb = _index_zero(flat, positions)
        gb = view_as_complex(gb.reshape(*grad.shape, 2)) if parts else gb.reshape(grad.shape)
    if needs[1]:
        gs = _get(flat, positions, None, True)
    return gb, gs


_COPY = _copy_slices.op
_COPY.backward_name = "torch::autograd::CopySlices"  # torch's (C++) node, printed CopySlices


_MULTI_VIEW = {"split": "Split", "chunk": "Split", "unbind": "Unbind"}


def _refuse_no_grad_view_write(self: Tensor, index, adv: bool) -> None:
    """``self[index] = v`` for a view made in no_grad (or inference) mode of a tensor requiring
    grad: torch's refusal, naming the view of it that a basic index writes through."""
    from ..registry import refuse_no_grad_view

    kind = None if adv else _setitem_view_kind(index, self._data.shape)
    if kind is None:
        refuse_no_grad_view(self)
        return
    try:
        refuse_no_grad_view(self)
    except RuntimeError as e:
        msg = str(e)
        raise RuntimeError(
            f"Output 0 of {kind} is a view of a view which was {msg[len('A view was ') :]}"
        ) from None


def _setitem_view_kind(key, shape) -> str | None:
    """The view op torch applies last for ``self[key] = v`` (it names in-place errors), or None
    when ``key`` takes no basic view of self (v is written by index_put_ or copy_)."""
    key = key if type(key) is tuple else (key,)
    used = sum(
        0 if k is None or k is Ellipsis or type(k) is bool
        else (k.ndim if isinstance(k, Tensor) and k.dtype.is_floating_point is False
              and k._data.dtype.kind == "b" else 1)
        for k in key
    )  # fmt: skip
    kind, d = None, 0
    for k in key:
        if k is None or type(k) is bool:
            kind = "Unsqueeze"
        elif k is Ellipsis:
            d += len(shape) - used
        elif isinstance(k, int):
            kind, d = "Select", d + 1
        elif isinstance(k, slice):
            if d < len(shape) and k.indices(shape[d]) != (0, shape[d], 1):
                kind = "Slice"
            d += 1
        else:
            d += k.ndim if isinstance(k, Tensor) and k._data.dtype.kind == "b" else 1
    return kind


_VIEW_INPLACE_WHY = {
    "multi": "This view is the output of a function that returns multiple views. Such functions "
    "do not allow the output views to be modified inplace. You should replace the inplace "
    "operation by an out-of-place one.",
    "custom": "This view was created inside a custom Function (or because an input was returned "
    "as-is) and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function.",
}


def check_multi_view_inplace(self: Tensor, key=None) -> None:
    """torch refuses (in grad mode) in-place writes to a view made by an op returning several
    views (split, chunk, unbind) or by a custom Function, and to views of those ("cm" in the
    view's _extra, see autograd.views.note_views): their backward cannot take the write. The
    message names the op that made the written view (the view ``key`` takes for setitem)."""
    ex = self._extra
    why = _VIEW_INPLACE_WHY.get(ex.get("cm"))
    if why is None or ex.get("unsafe"):
        return
    kind = self._grad_fn.name()
    kind = kind[: kind.rfind("Backward")] if "Backward" in kind else kind
    if key is not None:
        kind = _setitem_view_kind(key, self._data.shape) or kind
    raise RuntimeError(
        f"Output {ex.get('nr', 0)} of {kind} is a view and is being modified inplace. {why}"
    )


def _write_through_view(self: Tensor, base: Tensor, r: Tensor) -> bool:
    """New history after an in-place op wrote ``r``'s values into ``self``, a view of ``base``
    (torch's CopySlices): the base's history takes the view's new values at their positions.

    Called by the registry's ``_rebase_history``. False when the layout does not allow it."""
    if base.requires_grad and not self.requires_grad:
        pass  # a detached view (detach(), .data): the write does not reach the base's history
    else:
        if base.requires_grad and base._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an "
                "in-place operation."
            )
        pos = _positions(base, self)
        if pos is None:
            return False
        rb = _apply(_COPY, (base, r, pos), _NOKW)
        base._grad_fn = rb._grad_fn
        base.requires_grad = True
    self._grad_fn = r._grad_fn
    self.requires_grad = True
    ex = r._extra
    if ex and ex.get("nr"):
        self._extra = dict(self._extra or {}, nr=ex["nr"])
    return True


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem


# ---------------------------------------------------------------------- gather / scatter
def _along_idx(xp, index, dim):
    """The fancy index selecting ``index`` along ``dim`` and positions elsewhere."""
    nd = index.ndim
    out = []
    for d in range(nd):
        if d == dim:
            out.append(index)
        else:
            shp = [1] * nd
            shp[d] = index.shape[d]
            out.append(xp.arange(index.shape[d]).reshape(shp))
    return tuple(out)


def _check_bounds(xp, index, size, dim, exc=RuntimeError, neg=0):
    # neg=1: negative indices wrap (index_add, index_fill); gather/scatter reject them
    if xp is np and index.size:
        lo, hi = index.min(), index.max()
        lim = -size if neg else 0
        if lo < lim or hi >= size:
            v = int(index[(index < lim) | (index >= size)].reshape(-1)[0])  # (torch's first)
            raise exc(f"index {v} is out of bounds for dimension {dim} with size {size}")


def _gather_checks(xp, input, index, dim, who):
    nd = input.ndim
    dim = _wrap_dim(dim, nd)
    if not index.size:  # torch checks nothing else of an empty index
        return dim
    if index.dtype not in _IDX_DTYPES:
        raise RuntimeError(f"{who}(): Expected dtype int32/int64 for index")
    if max(index.ndim, 1) != max(nd, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(index.ndim):
        if d != dim and index.shape[d] > input.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index "
                f"{list(index.shape)} to be no larger than self {list(input.shape)} "
                f"apart from dimension {dim}"
            )
    return dim


@op(names=keep_indexed, method=False, name="_gather")
def _gather(xp, input, index, dim=0, *, sparse_grad=False):
    """out[i][j] = input[index[i][j]][j] (dim 0), etc."""
    dim = _gather_checks(xp, input, index, dim, "gather")
    if not index.size:
        return xp.zeros(index.shape, input.dtype)
    if index.ndim == 0 and input.ndim == 1:  # one element along the dim, a 0-d result
        _check_bounds(xp, index, input.shape[0], 0)
        return input[index.reshape(1)].reshape(())
    if input.ndim == 0:  # torch reads a 0-dim input as one element along dim 0
        _check_bounds(xp, index, 1, 0)
        return xp.broadcast_to(input, index.shape).copy()
    _check_bounds(xp, index, input.shape[dim], dim)
    r = input[_along_idx(xp, index, dim)]
    # numpy lays the result out like a permuted index; torch's is contiguous
    return row_major(xp, r) if r.ndim > 1 else r


@_gather.vjp
def _(grad, input_shape, index, dim):
    return _scatter_add(_zeros_t(grad, input_shape), index, grad, dim), None


def _src_view(src, index):
    return src[tuple(slice(0, s) for s in index.shape)]


def _lift_0d(input, index, src):
    """(input, index, src) as torch reads them: a 0-d index into a 1-d self (``zeros(3).scatter_(
    0, tensor(y), value=1)``, a one-hot) is one element along the dim, and so is a 0-d src; a
    0-d self is one element along dim 0 (the caller reshapes its result back)."""
    if input.ndim <= 1 and (index.ndim == 0 or input.ndim == 0):
        input, index = input.reshape(-1), index.reshape(-1)
        if getattr(src, "ndim", None) == 0:
            src = src.reshape(1)
    return input, index, src


def _scatter_checks(xp, input, index, src, dim, bounds: bool = True):
    # torch's order, under the name "scatter" for all three ops; an empty index is not checked
    nd = input.ndim
    dim = _wrap_dim(dim, nd)
    if index.size and index.dtype not in _IDX_DTYPES:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    is_arr = hasattr(src, "shape")
    if is_arr and src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not index.size:
        return dim
    if max(index.ndim, 1) != max(nd, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if is_arr and not src.ndim and index.ndim > 1:  # (torch's shape check does not run then)
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    n = max(nd, 1)  # (torch reads a 0-d tensor's sizes as [1])
    wrong = any(d != dim and _size(index, d) > _size(input, d) for d in range(n))
    if is_arr and not wrong:
        for d in range(n):
            if src.ndim and d >= src.ndim:  # (torch reads src.size(d))
                raise IndexError(
                    f"Dimension out of range (expected to be in range of [{-src.ndim}, "
                    f"{src.ndim - 1}], but got {d})"
                )
            if _size(index, d) > _size(src, d):
                wrong = True
                break
    if wrong:
        msg = (
            f"Expected index {list(index.shape)} to be no larger than self "
            f"{list(input.shape)} apart from dimension {dim}"
        )
        if is_arr:
            msg += f" and to be no larger size than src {list(src.shape)}"
        raise RuntimeError(msg)
    if bounds:
        _scatter_bounds(xp, input, index, src, dim)
    return dim


def _size(a, d: int) -> int:
    return a.shape[d] if a.ndim else 1


def _scatter_bounds(xp, input, index, src, dim: int) -> None:
    """The checks of torch's scatter kernel (after the reduction's name): src's rank, then the
    index values."""
    if not index.size:
        return
    if hasattr(src, "shape") and max(src.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    _check_bounds(xp, index, input.shape[dim] if input.ndim else 1, dim)


@op(names=keep_indexed, method=False, name="_scatter")
def _scatter(xp, input, index, src, dim=0, reduce=None):
    """A copy of input with src written at index along dim (reduce: None, 'add', 'multiply')."""
    dim = _scatter_checks(xp, input, index, src, dim, bounds=False)
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if not index.size:  # (torch reads no value either)
        return input.copy()
    if not hasattr(src, "dtype"):  # a Python value: torch's range check (-1 into uint8 is 255)
        try:
            src = _dt.fill_scalar(src, input.dtype)
        except RuntimeError:  # torch converts it at its first write: a bad first index is first
            first = int(index.reshape(-1)[0])
            if not 0 <= first < (input.shape[dim] if input.ndim else 1):
                _scatter_bounds(xp, input, index, src, dim)
            raise
    _scatter_bounds(xp, input, index, src, dim)
    shape = input.shape
    input, index, src = _lift_0d(input, index, src)
    out = input.copy()
    idx = _along_idx(xp, index, dim)
    v = _src_view(src, index) if hasattr(src, "shape") and src.ndim else src
    if reduce is not None and not hasattr(v, "ndim"):  # a scalar value: one per index entry
        v = xp.full(index.shape, v, dtype=out.dtype)
    if reduce is None:
        out[idx] = v
    elif reduce == "add":
        _add_at(xp, out, idx, v)
    else:
        _ufunc_at(xp, "multiply", out, idx, v)
    return out.reshape(shape)


@_scatter.vjp
def _(grad, index, dim, reduce, src_shape, src_dtype, needs):
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    gi = _scatter(grad, index, 0, dim) if needs[0] else None
    gs = _pad(_gather(grad, index, dim), src_shape) if needs[2] else None
    return gi, None, gs


def _scatter_node_name(node) -> str:
    """torch's node: scatter(src) ScatterBackward0, scatter(value) ScatterBackward1; with a
    ``reduce`` torch has no derivative (its placeholder node)."""
    if node.saved_arg("reduce") is not None:
        return "torch::autograd::NotImplemented"
    return "ScatterBackward0" if node.saved_arg("src_dtype") is not None else "ScatterBackward1"


_scatter.op.name_rule = _scatter_node_name


@op(names=keep_indexed, method=False, name="_scatter_add")
def _scatter_add(xp, input, index, src, dim=0):
    """A copy of input with src added at index along dim (duplicates accumulate)."""
    dim = _scatter_checks(xp, input, index, src, dim)
    if not index.size:
        return input.copy()
    shape = input.shape
    input, index, src = _lift_0d(input, index, src)
    out = input.copy()
    _add_at(xp, out, _along_idx(xp, index, dim), _src_view(src, index) if src.ndim else src)
    return out.reshape(shape)


@_scatter_add.vjp(only_for={"index": "src"})  # input's gradient is grad itself
def _(grad, index, dim, src_shape, needs):
    gs = _pad(_gather(grad, index, dim), src_shape) if needs[2] else None
    return grad, None, gs


_REDUCE_FILL = {"sum": 0, "prod": 1, "mean": 0}


@op(names=keep_indexed, method=False, name="_scatter_reduce")
def _scatter_reduce(xp, input, index, src, dim=0, reduce="sum", include_self=True):
    """Reduce src into input at index along dim: 'sum', 'prod', 'mean', 'amax' or 'amin'."""
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # torch 2.13 takes both
    # torch's order: the shapes, the reduction's name, then (only when it fills the slots,
    # include_self=False) the index values
    dim = _scatter_checks(xp, input, index, src, dim, bounds=False)
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if not include_self:
        _scatter_bounds(xp, input, index, src, dim)
    elif index.size and max(src.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if not index.size:
        if reduce == "mean" and input.dtype.kind == "b":  # (its floor division by the counts)
            raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
        return input.copy()
    if reduce == "mean" and input.dtype.kind == "b":
        raise NotImplementedError(
            "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
        )
    if input.dtype.kind == "c" and reduce in ("amax", "amin"):  # complex numbers have no order
        raise NotImplementedError(
            f'"scatter_gather_tensor_cpu_reduce_{reduce}" not implemented for '
            f"'{_dtype_word(input)}'"
        )
    if include_self:
        _check_bounds(xp, index, input.shape[dim] if input.ndim else 1, dim)
    shape = input.shape
    input, index, src = _lift_0d(input, index, src)
    out = input.copy()
    idx = _along_idx(xp, index, dim)
    v = _src_view(src, index) if src.ndim else src
    if not include_self:
        k = out.dtype.kind
        if reduce in _REDUCE_FILL:
            out[idx] = _REDUCE_FILL[reduce]
        elif k == "b":
            out[idx] = reduce == "amin"
        elif k in "iu":  # the empty slot starts at the type's own bounds (uint8: 0 for amax)
            info = xp.iinfo(out.dtype)
            out[idx] = info.min if reduce == "amax" else info.max
        else:  # bfloat16 (numpy kind "V") is a float too
            out[idx] = -xp.inf if reduce == "amax" else xp.inf
    if reduce in ("sum", "mean"):
        _add_at(xp, out, idx, v)
        if reduce == "mean":
            cnt = xp.ones(out.shape, out.dtype) if include_self else xp.zeros(out.shape, out.dtype)
            _add_at(xp, cnt, idx, xp.ones(v.shape, out.dtype))
            cnt[cnt == 0] = 1
            out = out // cnt if out.dtype.kind in "iu" else out / cnt
    elif reduce == "prod":
        _ufunc_at(xp, "multiply", out, idx, v)
    elif reduce == "amax":
        _ufunc_at(xp, "maximum", out, idx, v)
    else:
        _ufunc_at(xp, "minimum", out, idx, v)
    return out.reshape(shape)


@_scatter_reduce.vjp
def _(grad, input, index, src, result, dim, reduce, include_self, src_shape, needs):
    if grad.ndim:
        return _scatter_reduce_grad(
            grad, input, index, src, result, dim, reduce, include_self, src_shape, needs
        )
    # a 0-d self is one element along dim 0, as in the forward
    s1 = src.reshape(-1)
    gi, _, gs = _scatter_reduce_grad(
        grad.reshape(1), input.reshape(1), index.reshape(-1), s1, result.reshape(1), 0,
        reduce, include_self, tuple(s1.shape), needs,
    )  # fmt: skip
    return (
        None if gi is None else gi.reshape(()),
        None,
        None if gs is None else gs.reshape(src_shape),
    )


def _scatter_reduce_grad(grad, input, index, src, result, dim, reduce, include_self, src_shape,
                         needs):  # fmt: skip
    if reduce == "sum":
        gi = None
        if needs[0]:
            gi = grad if include_self else _scatter(grad, index, 0, dim)
        gs = _pad(_gather(grad, index, dim), src_shape) if needs[2] else None
        return gi, None, gs
    if reduce == "prod":
        return _scatter_prod_grad(grad, input, index, src, dim, include_self, src_shape, needs)
    # mean, amax, amin: constant weights (piecewise) built from the saved arrays
    g = grad._data
    xp = _xp_of(g)
    dt = g.dtype
    ia = index._data
    idx = _along_idx(xp, ia, dim % g.ndim) if ia.ndim and g.ndim else ()
    touched = xp.zeros(g.shape, _BOOL)
    touched[idx] = True
    if reduce == "mean":
        n = xp.full(g.shape, 1 if include_self else 0, dt)
        _add_at(xp, n, idx, xp.ones(ia.shape, dt))
        src_w = None
    else:  # ties share the gradient equally, like torch
        res = result._data
        self_is = (input._data == res) if include_self else xp.zeros(g.shape, _BOOL)
        s = src._data
        src_is = (_src_view(s, ia) if s.ndim else s) == res[idx]
        n = self_is.astype(dt)
        _add_at(xp, n, idx, src_is.astype(dt))
        src_w = _wrap(src_is.astype(dt))
    n[n == 0] = 1
    inv = _wrap(1 / n)
    gi = gs = None
    if needs[0]:
        if not include_self:
            gi = grad * _wrap((~touched).astype(dt))
        elif reduce == "mean":
            gi = grad * inv
        else:
            gi = grad * _wrap(self_is.astype(dt) / n)
    if needs[2]:
        gs = _gather(grad * inv, index, dim)
        if src_w is not None:
            gs = gs * src_w
        gs = _pad(gs, src_shape)
    return gi, None, gs


@op(names=keep, method=False)
def _pad(xp, input, shape=()):
    """Zeros of ``shape`` holding ``input`` at its leading corner (identity when shapes match)."""
    shape = tuple(shape)
    if input.shape == shape:
        return input
    z = xp.zeros(shape, input.dtype)
    z[tuple(slice(0, s) for s in input.shape)] = input
    return z


@_pad.vjp
def _(grad, input_shape):
    if tuple(grad.shape) == tuple(input_shape):
        return grad
    return _get(grad, tuple(slice(0, s) for s in input_shape))


def _check_args(fname: str, input, dim, *tensors, method: bool = False) -> None:
    """torch's argument errors for ``fname(input, dim, ...)``: the public name and positions
    (the registered ops are private and take their tensors first). ``tensors``: (name,
    position, value) of the other tensor arguments. A method (``method``: the in-place one,
    ``fname`` its name; else told by the call's source) counts its arguments after self."""
    for name, pos, v in (("input", 1, input), *tensors):
        if not isinstance(v, Tensor):
            _raise_arg(fname, name, pos, "Tensor", v, method)
    if isinstance(dim, float):
        _raise_arg(fname, "dim", 2, "int", dim, method)


def _raise_arg(fname: str, name: str, pos: int, typ: str, v, method: bool) -> None:
    spelled = fname if method else tensor_method(fname)
    if spelled is not None:
        fname, pos = spelled, pos - 1
    raise TypeError(
        f"{fname}(): argument '{name}' (position {pos}) must be {typ}, not {type_name(v)}"
    )


def _check_alpha(fname: str, alpha) -> None:
    if not isinstance(alpha, (numbers.Number, Tensor)):
        raise TypeError(f"{fname}(): argument 'alpha' must be Number, not {type_name(alpha)}")


def gather(input: Tensor, dim, index: Tensor, *, sparse_grad: bool = False, out=None) -> Tensor:
    """Values of ``input`` along ``dim`` at ``index`` (same ndim; other dims no larger)."""
    _check_args("gather", input, dim, ("index", 3, index))
    if out is not None:
        _check_no_overlap(out, input, index)
    return _apply(_gather.op, (input, index, dim), _NOKW if out is None else {"out": out})


def scatter(
    input: Tensor, dim, index: Tensor, src=None, value=None, *, reduce=None, out=None
) -> Tensor:
    """A copy of ``input`` with ``src`` (tensor) or ``value`` (scalar) written at ``index``."""
    both = src is not None and value is not None
    if src is None:
        src = value
    if not (isinstance(index, Tensor) and isinstance(src, (Tensor, numbers.Number))) or both:
        raise _scatter_type_error("scatter", _given(input, dim, index, src, value), reduce)
    _check_args("scatter", input, dim)
    if reduce is not None and isinstance(src, Tensor):
        _warn_scatter_reduce()
    return _apply(
        _scatter.op, (input, index, src, dim, reduce), _NOKW if out is None else {"out": out}
    )


@_autocast_entry
def scatter_add(input: Tensor, dim, index: Tensor, src: Tensor, *, out=None) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (duplicates accumulate)."""
    _check_args("scatter_add", input, dim, ("index", 3, index), ("src", 4, src))
    return _apply(_scatter_add.op, (input, index, src, dim), _NOKW if out is None else {"out": out})


def _scatter_prod_grad(grad, input, index, src, dim, include_self, src_shape, needs):
    """Gradients of scatter_reduce(prod) without dividing by zero: d out_j / d self_j is the
    product of the src scattered to j; d out_j / d src_i is out_j without the factor src_i
    (0 when another zero also lands on j)."""
    g = grad._data
    xp = _xp_of(g)
    dt = g.dtype
    ia = index._data
    idx = _along_idx(xp, ia, dim % g.ndim) if ia.ndim and g.ndim else ()
    same = tuple(src.shape) == tuple(ia.shape)
    sv = src if same else _get(src, tuple(slice(0, n) for n in ia.shape))
    gi = gs = None
    if needs[0]:
        if include_self:
            ones = _wrap(xp.ones(g.shape, input._data.dtype))
            gi = grad * _scatter_reduce(ones, index, sv, dim, "prod", True)
        else:
            touched = xp.zeros(g.shape, _BOOL)
            touched[idx] = True
            gi = grad * _wrap((~touched).astype(dt))
    if needs[2]:
        zero = sv._data == 0
        nzero = xp.zeros(g.shape, dt)
        _add_at(xp, nzero, idx, zero.astype(dt))
        nz_at = nzero[idx] if idx != () else nzero
        masked = sv.masked_fill(_wrap(zero), 1)
        q = grad * _scatter_reduce(input, index, masked, dim, "prod", include_self)
        q = _gather(q, index, dim)
        only_zero = _wrap((zero & (nz_at == 1)).astype(dt))
        no_zero = _wrap(((~zero) & (nz_at == 0)).astype(dt))
        gs = _pad(q * only_zero + q / masked * no_zero, src_shape)
    return gi, None, gs


def scatter_reduce(
    input: Tensor,
    dim,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
    out=None,
) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index``: 'sum', 'prod', 'mean', 'amax', 'amin'."""
    _check_args("scatter_reduce", input, dim, ("index", 3, index), ("src", 4, src))
    return _apply(
        _scatter_reduce.op,
        (input, index, src, dim, reduce, include_self),
        _NOKW if out is None else {"out": out},
    )


_SCATTER_REDUCE_WARNED = [False]


def _warn_scatter_reduce() -> None:
    if not _SCATTER_REDUCE_WARNED[0]:  # torch warns once per process
        _SCATTER_REDUCE_WARNED[0] = True
        import warnings

        warnings.warn(
            "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
            "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
            "reduction options.",
            UserWarning,
            stacklevel=3,
        )


def _scatter_type_error(fname: str, args: tuple, reduce) -> TypeError:
    """torch's error for scatter / Tensor.scatter_ given an index that is not a Tensor or a
    source neither Tensor nor number: no overload matches (``args`` as passed, src positional;
    a method's listing leaves self out)."""
    sigs = _SCATTER_SIGS
    method = "scatter_" if fname == "scatter_" else tensor_method(fname)
    if method is not None:
        fname, sigs = method, _SCATTER_M
        args = args[1:] if method != "scatter_" else args
    return invalid_arguments(fname, args, {} if reduce is None else {"reduce": reduce}, sigs)


def _given(*args) -> tuple:
    """scatter's arguments as passed: src and value positional, the ones not given left out."""
    return args[:-2] + tuple(a for a in args[-2:] if a is not None)


_SCATTER_SIGS = (
    "(Tensor input, int dim, Tensor index, Tensor src, *, Tensor out = None)",
    "(Tensor input, int dim, Tensor index, Tensor src, *, str reduce, Tensor out = None)",
    "(Tensor input, int dim, Tensor index, Number value, *, Tensor out = None)",
    "(Tensor input, int dim, Tensor index, Number value, *, str reduce, Tensor out = None)",
)
_SCATTER_M = method_signatures(_SCATTER_SIGS)  # (Tensor.scatter's, without self)


def _scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    given = src if src is not None else value
    if not (
        isinstance(index, Tensor)
        and isinstance(given, (Tensor, numbers.Number))
        and (src is None or value is None)
        and not isinstance(dim, str)  # (no overload of the method takes a name)
    ):
        kw = {} if reduce is None else {"reduce": reduce}
        if src is None and value is not None:  # (passed by keyword, as value can be alone)
            raise invalid_arguments("scatter_", (dim, index), kw | {"value": value}, _SCATTER_M)
        raise _scatter_type_error("scatter_", _given(dim, index, src, value), reduce)
    _check_no_overlap(self, index, src)
    if src is None:
        src = value
    elif reduce is not None and isinstance(src, Tensor):
        _warn_scatter_reduce()
    return _apply_inplace(_scatter.op, self, (index, src, dim, reduce), _NOKW)


def _scatter_add_(self, dim, index, src):
    _check_args("scatter_add_", self, dim, ("index", 3, index), ("src", 4, src), method=True)
    _check_no_overlap(self, index, src)
    return _apply_inplace(_scatter_add.op, self, (index, src, dim), _NOKW)


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    _check_args("scatter_reduce_", self, dim, ("index", 3, index), ("src", 4, src), method=True)
    _check_no_overlap(self, index, src)
    return _apply_inplace(_scatter_reduce.op, self, (index, src, dim, reduce, include_self), _NOKW)


# ---------------------------------------------------------------------- index_select & co
def _vector_index(index, who):
    if index.ndim > 1:
        raise IndexError(f"{who}(): Index is supposed to be a vector")
    if index.dtype not in _IDX_DTYPES:
        raise RuntimeError(f"{who}(): Expected dtype int32 or int64 for index")
    return index.reshape(-1)


def _accumulate_index(index, who):
    """index_add_'s and index_reduce_'s checks of ``index`` (torch words them apart from
    index_select's: with the index's type and size)."""
    if index.ndim > 1:
        raise IndexError(
            f"{who}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
            f"{_dtype_word(index)} and size: {list(index.shape)}"
        )
    if index.dtype not in _IDX_DTYPES:
        raise RuntimeError(
            f"{who}(): Expected dtype int32/int64 for index but got: {_dtype_word(index)}"
        )
    return index.reshape(-1)


@op(names=keep, method=False, name="_index_select")
def _index_select(xp, input, index, dim=0):
    """The slices of ``input`` along ``dim`` at the positions in the 1-D ``index``."""
    nd = input.ndim
    dim = _wrap_dim(dim, nd)  # (torch's order: the dim, the index's rank, its size, its dtype)
    if nd == 0 and index.ndim <= 1 and index.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {index.size} value(s)"
        )
    idx = _vector_index(index, "index_select")
    if nd == 0:
        if xp is np and int(idx.reshape(-1)[0]) != 0:
            raise IndexError("index out of range in self")
        return input.reshape(1)[idx].reshape(())
    n = input.shape[dim]
    if not n and idx.size and nd > 1:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if xp is np and idx.size:
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            # torch's kernels differ: its dim-1 one and its check of an empty self name the
            # bad index
            if nd < 2 or (dim != 1 and input.size):
                raise IndexError("index out of range in self")
            raise RuntimeError(
                f"INDICES element is out of DATA bounds, id={int(idx[bad][0])} axis_dim={n}"
            )
    return xp.take(input, idx, axis=dim)


@_index_select.vjp
def _(grad, input_shape, index, dim):
    return _index_add(_zeros_t(grad, input_shape), index, grad, dim), None


def index_select(input: Tensor, dim, index: Tensor, *, out=None) -> Tensor:
    """The slices of ``input`` along ``dim`` at ``index`` (1-D int64/int32)."""
    _check_args("index_select", input, dim, ("index", 3, index))
    if out is not None:
        _check_no_overlap(out, input, index)
    return _apply(_index_select.op, (input, index, dim), _NOKW if out is None else {"out": out})


def _dim_key(dim, idx):
    return (slice(None),) * dim + (idx,)


def _index_func_checks(who: str, input, idx, source, dim: int) -> None:
    """torch's checks of index_add_'s and index_reduce_'s shapes (after the dtypes)."""
    if dim and dim >= source.ndim:
        raise RuntimeError(
            f"{who}(): Indexing dim {dim} is out of bounds of the source tensor with dim "
            f"{source.ndim}"
        )
    ns = source.shape[dim] if source.ndim else 1
    if idx.size != ns:
        if not source.ndim:  # torch's message reads source.size(dim), which has none
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(
            f"{who}(): Number of indices ({idx.size}) should be equal to "
            f"source.size(dim): ({ns}), for dim: {dim}"
        )
    ss, xs = source.shape, input.shape
    if (ss[:dim] != xs[:dim] or ss[dim + 1 :] != xs[dim + 1 :]) if input.ndim and ss else ss != xs:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(xs)} source.shape = {list(ss)}"
        )


@op(names=keep_indexed, method=False, name="_index_add")
def _index_add(xp, input, index, source, dim=0, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    nd = input.ndim
    dim = _wrap_dim(dim, nd)  # (torch's order: the dim, the index, the dtypes, the shapes)
    idx = _accumulate_index(index, "index_add_")
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_dtype_word(input)}) and source ({_dtype_word(source)}) must "
            "have the same scalar type"
        )
    _index_func_checks("index_add_", input, idx, source, dim)
    out = input.copy()
    if nd > 1 and not (idx.size and out.size):
        return out  # (torch's kernel returns before it reads an index value)
    # torch adds with scatter_add along the first or last dim, else per index (serially)
    serial = not (nd > 1 and alpha == 1 and idx.dtype == np.int64 and dim in (0, nd - 1))
    if input.dtype.kind == "b":  # torch converts alpha to self's type (truncating)
        alpha = bool(alpha)
    elif input.dtype.kind in "iu":  # range-checked like torch (-1 wraps into uint8)
        alpha = _dt.fill_scalar(alpha, input.dtype)
    size = input.shape[dim] if nd else 1
    if not serial:
        _check_bounds(xp, idx, size, dim, RuntimeError)
    elif xp is np and idx.size and (idx.min() < 0 or idx.max() >= size):
        # torch's per-index kernel (a 0-d or 1-D self, alpha != 1, an int32 index)
        raise IndexError("index out of range in self")
    if nd:
        v = source if alpha == 1 else source * alpha
        _add_at(xp, out, _dim_key(dim, idx), v.astype(out.dtype, copy=False), sequential=serial)
    else:
        out = out + (source if alpha == 1 else source * alpha).reshape(())
    return out


# input's gradient is grad itself; torch keeps source (for its dim) along with the index
@_index_add.vjp(only_for={"index": "source", "source": "source"})
def _(grad, index, source, dim, alpha, needs):
    gs = None
    if needs[2]:
        gs = _index_select(grad, index, dim)
        if alpha != 1:
            gs = gs * alpha
    return grad, None, gs


def index_add(input: Tensor, dim, index: Tensor, source: Tensor, *, alpha=1, out=None) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    _check_args("index_add", input, dim, ("index", 3, index), ("source", 4, source))
    _check_alpha("index_add", alpha)
    return _apply(
        _index_add.op, (input, index, source, dim, alpha), _NOKW if out is None else {"out": out}
    )


def _index_add_(self, dim, index, source, *, alpha=1):
    _check_args("index_add_", self, dim, ("index", 3, index), ("source", 4, source), method=True)
    _check_alpha("index_add_", alpha)
    _check_no_overlap(self, index, source)
    return _apply_inplace(_index_add.op, self, (index, source, dim, alpha), _NOKW)


def _by_value_kind(name: str):
    """A grad_fn name rule: torch's overload taking a number (``name``0) or a tensor (1)."""
    return lambda node: name + ("0" if node.saved_arg("value_dtype") is None else "1")


@op(names=keep, method=False, name="_index_fill")
def _index_fill(xp, input, index, value, dim=0):
    """A copy of ``input`` with ``value`` written at ``index`` along ``dim``."""
    # torch's order: the value's rank, the index's dtype (int64 only), a complex value, the
    # dim, the index's rank, the value's range
    if hasattr(value, "ndim") and value.ndim:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
            f"with {value.ndim} dimension(s)."
        )
    if index.dtype != _INT64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if input.dtype.kind != "c" and (
        type(value) is complex or (hasattr(value, "dtype") and value.dtype.kind == "c")
    ):
        raise RuntimeError(
            "index_fill_(): Converting complex Scalar to non-complex type is not supported"
        )
    dim = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    idx = index.reshape(-1)
    if hasattr(value, "dtype"):  # torch fills a 0-dim tensor's item, a number like any other
        value = value.item()
    value = _dt.fill_scalar(value, input.dtype)  # (torch's range check, as fill_'s)
    out = input.copy()
    if input.ndim == 0:
        _check_bounds(xp, idx, 1, 0, IndexError, 1)  # (one slice)
        if idx.size:
            out[...] = value
        return out
    if not out.size and input.ndim > 1 and input.shape[dim]:
        return out  # (torch reads no index value)
    _check_bounds(xp, idx, input.shape[dim], dim, IndexError, 1)
    out[_dim_key(dim, idx)] = value
    return out


@_index_fill.vjp
def _(grad, index, dim, value_dtype, needs):
    z = _index_fill(grad, index, 0, dim)
    # value's gradient: each filled element once, however often the index names it
    gv = (grad - z).sum() if needs[2] else None
    return z if needs[0] else None, None, gv


_index_fill.op.name_rule = _by_value_kind("IndexFillBackward")


def index_fill(input: Tensor, dim, index: Tensor, value) -> Tensor:
    """A copy of ``input`` with ``value`` (scalar or 0-d tensor) at ``index`` along ``dim``."""
    if not (isinstance(index, Tensor) and isinstance(value, _FILL_TYPES)):  # no overload
        method = tensor_method("index_fill")
        if method is None:
            raise invalid_arguments("index_fill", (input, dim, index, value), {}, _INDEX_FILL_SIGS)
        _index_fill_error(method, dim, index, value)
    _check_args("index_fill", input, dim)
    return _apply(_index_fill.op, (input, index, value, dim), _NOKW)


def _index_fill_(self, dim, index, value):
    if not (isinstance(index, Tensor) and isinstance(value, _FILL_TYPES)):
        _index_fill_error("index_fill_", dim, index, value)
    return _apply_inplace(_index_fill.op, self, (index, value, dim), _NOKW)


def _index_fill_error(fname: str, dim, index, value):
    raise invalid_arguments(fname, (dim, index, value), {}, method_signatures(_INDEX_FILL_SIGS))


_FILL_TYPES = (Tensor, numbers.Number)
_INDEX_FILL_SIGS = (
    "(Tensor input, int dim, Tensor index, Tensor value)",
    "(Tensor input, int dim, Tensor index, Number value)",
)


# ---------------------------------------------------------------------- masks
def _check_mask(mask, who):
    if mask.dtype is not _BOOL and mask.dtype != _BOOL:
        raise RuntimeError(
            f"{who} only supports boolean masks, but got mask with dtype "
            f"{_C10_NAMES.get(str(mask.dtype), str(mask.dtype))}"
        )


def _not(mask: Tensor) -> Tensor:
    return _wrap(~mask._data)


@op(names=broadcast_to_self, inplace="masked_fill_")
def masked_fill(xp, input, mask, value):
    """``input`` with ``value`` (scalar or 0-d tensor) where ``mask`` is True (broadcasting)."""
    try:
        vnd = getattr(value, "ndim", None)
        if vnd:  # (before the mask's dtype, as torch)
            _check_value_rank(vnd)
        _check_mask(mask, "masked_fill_")
        if vnd is None:
            value = xp.asarray(_dt.fill_scalar(value, input.dtype), dtype=input.dtype)
        elif value.dtype != input.dtype:  # torch fills with value.item(): range-checked
            value = xp.asarray(_dt.fill_scalar(value.item(), input.dtype), dtype=input.dtype)
        r = xp.where(mask, value, input)
    except (RuntimeError, ValueError):
        # out of place, torch broadcasts mask and input (the mask named first) before all
        err = broadcast_error([mask.shape, input.shape])
        if err is None:
            raise
        raise err from None
    return row_major(xp, r) if r.ndim > 1 else r


@masked_fill.vjp
def _(grad, mask, value_dtype, needs):
    gi = masked_fill(grad, mask, 0) if needs[0] else None
    gv = masked_fill(grad, _not(mask), 0).sum() if needs[2] else None
    return gi, None, gv


masked_fill.op.name_rule = _by_value_kind("MaskedFillBackward")
masked_fill.op.overloads = (
    "(Tensor input, Tensor mask, Tensor value)",
    "(Tensor input, Tensor mask, Number value)",
)
_MASKED_FILL_SIGS = method_signatures(masked_fill.op.overloads)


def _masked_fill_(self, mask, value):
    """In place; the no-grad path writes straight into self's storage."""
    if _INFERENCE_USED[0]:
        check_inference_inplace(self)
    if _VMAP_SLICES:
        _vmap_refuse_inplace("masked_fill_", self, (mask, value))
    vt = isinstance(value, Tensor)
    ex = self._extra  # a view made in no_grad: the op path raises torch's error
    if not (
        _state.enabled
        and (self.requires_grad or (vt and value.requires_grad) or (ex and "ngr" in ex))
    ) and isinstance(mask, Tensor):
        if vt:
            if value.ndim:
                _check_value_rank(value.ndim)
        elif type(value) is not float and not isinstance(value, numbers.Number):
            # (torch's parser, before all)
            raise invalid_arguments("masked_fill_", (mask, value), {}, _MASKED_FILL_SIGS)
        m = mask._data
        _check_mask(m, "masked_fill_")
        a = self._data
        if (
            m.ndim > a.ndim
            or any(s != 1 and s != t for s, t in zip(m.shape[::-1], a.shape[::-1]))
            or self._names is not None
            or mask._names is not None
        ):  # torch's shape errors, and name inference (spec 3), live in the op
            return _masked_fill_op(self, mask, value)
        v = value
        if vt:
            v = value._data
            if type(v) is not type(a) or v.dtype != a.dtype:  # (torch fills value.item():
                v = _dt.fill_scalar(v.item(), a.dtype)  # range-checked, as a number's)
        elif a.dtype.kind in "iu" or (
            (isinstance(v, _COMPLEX) or not -65504.0 <= v <= 65504.0) and a.dtype.kind != "b"
        ):  # torch's range check (a float past float16's range may not fit self either)
            v = _dt.fill_scalar(v, a.dtype)
        try:
            _xp_of(a).copyto(a, v, where=m, casting="unsafe")
        except ValueError:  # numpy's read-only broadcast view: torch writes its memory
            from .conversion import _fill_target

            warn_user(_EXPANDED_FILL)
            _xp_of(a).copyto(_fill_target(a), v, where=m, casting="unsafe")
        self._ver[0] += 1
        return self
    return _masked_fill_op(self, mask, value)


_COMPLEX = (complex, np.complexfloating)


def _masked_fill_op(self: Tensor, mask, value) -> Tensor:
    if (
        isinstance(mask, Tensor)
        and mask.shape != self.shape
        and self._names is None
        and mask._names is None  # (names may align the mask: the op's rule checks those)
    ):
        if self.requires_grad and _state.enabled:
            err = leaf_write_error(self)
            if err is not None:
                raise err
        # in place, torch checks the value's rank and the mask's dtype before the shapes
        # (self named first), and those before it converts the value
        if isinstance(value, Tensor) and value.ndim:
            _check_value_rank(value.ndim)
        _check_mask(mask._data, "masked_fill_")
        shape, ms = tuple(self.shape), tuple(mask.shape)
        err = broadcast_error([shape, ms])
        if err is not None:
            raise err
        if len(ms) > len(shape) or any(m > s for m, s in zip(ms[::-1], shape[::-1])):
            bs = list(np.broadcast_shapes(shape, ms))
            raise RuntimeError(
                f"output with shape {list(shape)} doesn't match the broadcast shape {bs}"
            )
    return _apply_inplace(masked_fill.op, self, (mask, value), _NOKW)


def _check_value_rank(n: int) -> None:
    raise RuntimeError(
        f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {n} "
        "dimension(s)."
    )


@op(names=align_mask_unify, method=True)
def masked_select(xp, input, mask):
    """The elements of ``input`` where ``mask`` is True, as a 1-D tensor (broadcasting)."""
    no_meta_kernel(xp, "aten::masked_select")
    if mask.dtype is not _BOOL and mask.dtype != _BOOL:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    e = broadcast_error((mask.shape, input.shape))  # (torch expands the mask first)
    if e is not None:
        raise e
    shape = (
        xp.broadcast_shapes(input.shape, mask.shape)
        if xp is np
        else np.broadcast_shapes(input.shape, mask.shape)
    )
    return xp.broadcast_to(input, shape)[xp.broadcast_to(mask, shape)]


@masked_select.vjp
def _(grad, input_shape, mask):
    m = mask._data
    shape = np.broadcast_shapes(tuple(input_shape), m.shape)
    mb = _xp_of(m).broadcast_to(m, shape)
    return _index_grad(grad, shape, (mb,), None, True), None


@op(names=broadcast_to_self, method=False, name="_masked_scatter")
def _masked_scatter(xp, input, mask, source):
    """A copy of ``input`` with the leading elements of ``source`` where ``mask`` is True."""
    if source.dtype != input.dtype:  # (torch's first check)
        raise RuntimeError(  # torch's message, its missing space included
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_dtype_word(input)} and {_dtype_word(source)}"
        )
    e = broadcast_error((mask.shape, input.shape))  # (torch broadcasts the mask with input first)
    if e is not None:
        raise e
    if mask.dtype == _UINT8:
        # torch warns about the old uint8 masks before refusing them
        warnings.warn(
            "masked_scatter_ received a mask with dtype torch.uint8, this behavior is now "
            "deprecated,please use a mask with dtype torch.bool instead.",
            UserWarning,
            stacklevel=2,
        )
    if mask.dtype != _BOOL:
        # unlike masked_fill_, torch names the mask's dtype by its scalar type here ("Long")
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_dtype_word(mask)}"
        )
    shape = np.broadcast_shapes(input.shape, mask.shape)
    out = xp.broadcast_to(input, shape).copy()
    mb = xp.broadcast_to(mask, shape)
    n = int(mb.sum())
    if source.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[mb] = source.reshape(-1)[:n]
    return out


@_masked_scatter.vjp
def _(grad, mask, source_shape, needs):
    gi = masked_fill(grad, mask, 0) if needs[0] else None
    gs = None
    if needs[2] and grad.is_meta:  # masked_select has no meta kernel; the shape is known
        gs = grad.new_empty(tuple(source_shape))
    elif needs[2]:
        sel = masked_select(grad, mask)
        n = 1
        for s in source_shape:
            n *= s
        gs = _pad(sel, (n,)).reshape(tuple(source_shape))
    return gi, None, gs


_masked_scatter.op.label = "masked_scatter"


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with ``source``'s leading elements written where ``mask`` is True."""
    try:
        return _apply(_masked_scatter.op, (input, mask, source), _NOKW)
    except RuntimeError as e:  # out of place, torch broadcasts mask and input before all
        if not str(e).startswith("masked_scatter: expected"):
            raise
        raise broadcast_error((tuple(mask.shape), tuple(input.shape))) or e from None


def _masked_scatter_(self, mask, source):
    if isinstance(mask, Tensor) and getattr(source, "dtype", None) == self.dtype:
        # torch checks the dtypes, expands the mask to self's shape, then checks its dtype
        err = _expand_error(mask._data.dtype, list(mask.shape), list(self.shape))
        if err is not None:
            raise err
    return _apply_inplace(_masked_scatter.op, self, (mask, source), _NOKW)


# ---------------------------------------------------------------------- take & nonzero
@op(names=FALLBACK, method=True)
def take(xp, input, index):
    """``input`` read as 1-D at ``index`` (the result has index's shape)."""
    if index.dtype is not _INT64 and index.dtype != _INT64:
        raise RuntimeError(
            f"take(): Expected a long tensor for index, but got {_dtype_word(index)}"
        )
    n = input.size
    if not n and index.size:
        raise IndexError("take(): tried to take from an empty tensor")
    if xp is np and index.size:
        bad = (index < -n) | (index >= n)
        if bad.any():
            raise IndexError(
                f"out of range: tried to access index {int(index[bad][0])} on a tensor "
                f"of {n} elements."
            )
    return input.reshape(-1)[index]


@take.vjp
def _(grad, input_shape, index):
    n = 1
    for s in input_shape:
        n *= s
    return _index_grad(grad, (n,), (index._data,), None, True).reshape(tuple(input_shape)), None


def take_along_dim(input: Tensor, indices: Tensor, dim=None, *, out=None) -> Tensor:
    """Values of ``input`` at ``indices`` along ``dim`` (broadcasting the other dims), or of the
    flattened input when ``dim`` is None."""
    _check_args("take_along_dim", input, None, ("indices", 2, indices))
    if dim is None:  # a gather of the flat input, with gather's index dtypes (int32 too)
        r = gather(input.reshape(-1), 0, indices.reshape(-1))
    else:
        if isinstance(dim, str):
            dim = input._dim(dim)
        nd = input.ndim
        if indices.ndim != nd:  # (before the dtype, as torch)
            raise RuntimeError(
                "torch.take_along_dim(): input and indices should have the same "
                f"number of dimensions, but got {nd} dimensions for input, and "
                f"{indices.ndim} dimensions for indices"
            )
        if indices._data.dtype is not _INT64 and indices._data.dtype != _INT64:
            raise RuntimeError(
                "torch.take_along_dim(): dtype of indices should be Long but got "
                f"{_dtype_word(indices._data)}"
            )
        dim = _wrap_dim(dim, nd)
        if nd == 0:  # torch reads input.size(dim), which a 0-dim tensor lacks
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        a = list(input._data.shape)
        b = list(indices._data.shape)
        a1, b1 = list(a), list(b)
        a1[dim] = b1[dim] = 1
        try:
            bs = list(np.broadcast_shapes(tuple(a1), tuple(b1)))
        except ValueError:
            a1[dim] = b1[dim] = b[dim]  # torch: input's sizes with the index's at dim, first
            for k in reversed(range(nd)):  # infer_size reports the last mismatch
                if a1[k] != b1[k] and a1[k] != 1 and b1[k] != 1:
                    raise RuntimeError(
                        f"The size of tensor a ({a1[k]}) must match the size of "
                        f"tensor b ({b1[k]}) at non-singleton dimension {k}"
                    ) from None
            raise
        sa, sb = list(bs), list(bs)
        sa[dim], sb[dim] = a[dim], b[dim]
        x = input if sa == a else input.expand(*sa)
        i = indices if sb == b else indices.expand(*sb)
        try:
            r = gather(x, dim, i)
        except RuntimeError as e:  # a name clash is take_along_dim's (spec 4.10)
            raise as_op_error(e, "take_along_dim", ("gather",), input, indices) from None
    if out is not None:
        from ..registry import _write_out

        return _write_out(_gather.op, out, r)
    return r


def _nonzero_names(ins, *a, **k):
    return None


@op(names=_nonzero_names)
def nonzero(xp, input, *, as_tuple=False):
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or one 1-D tensor per dim."""
    no_meta_kernel(xp, "aten::nonzero")
    if as_tuple:
        if input.ndim == 0:
            return (xp.zeros(int(bool(input)), _INT64),)
        # torch's are the rows of one contiguous (ndim, n) tensor; numpy's the strided columns
        # of an (n, ndim) array
        return tuple(xp.ascontiguousarray(xp.argwhere(input).astype(_INT64, copy=False).T))
    return xp.argwhere(input).astype(_INT64, copy=False)


@op(names=_nonzero_names)
def argwhere(xp, input):
    """Indices of the non-zero elements: an (n, ndim) int64 tensor."""
    no_meta_kernel(xp, "aten::argwhere")
    return xp.argwhere(input).astype(_INT64, copy=False)


# ---------------------------------------------------------------------- out= dtypes
# torch's kernels of these ops refuse an out= tensor of another dtype (no cast), in their words
def _same_dtype_out(message: str):
    def check(out, res, ins):
        raise RuntimeError(message)

    return check


def _take_out(out, res, ins):
    raise RuntimeError(
        "take(): self and out expected to have the same dtype, but got self.dtype = "
        f"{_dt.scalar_name(res.dtype)} and out.dtype = {_dt.scalar_name(out.dtype)}"
    )


def _nonzero_out(out, res, ins):
    raise RuntimeError(  # (torch's message has no space before the type)
        f"nonzero: Expected out tensor to have scalar type Long but got scalar type"
        f"{_dt.scalar_name(out.dtype)}"
    )


_gather.op.out_dtype = _exact
_index_select.op.out_dtype = _same_dtype_out(
    "index_select(): self and result must have the same scalar type"
)
masked_select.op.out_dtype = _same_dtype_out(
    "masked_select(): self and result must have the same scalar type"
)
take.op.out_dtype = _take_out
nonzero.op.out_dtype = _nonzero_out


def _install():
    Tensor.gather = gather
    Tensor.scatter = scatter
    Tensor.scatter_ = _scatter_
    Tensor.scatter_add = scatter_add
    Tensor.scatter_add_ = _scatter_add_
    Tensor.scatter_reduce = scatter_reduce
    Tensor.scatter_reduce_ = _scatter_reduce_
    Tensor.index_select = index_select
    Tensor.index_add = index_add
    Tensor.index_add_ = _index_add_
    Tensor.index_fill = index_fill
    Tensor.index_fill_ = _index_fill_
    Tensor.masked_fill_ = _masked_fill_
    Tensor.masked_scatter = masked_scatter
    Tensor.masked_scatter_ = _masked_scatter_
    Tensor.take_along_dim = take_along_dim
    Tensor.index_put = index_put
    Tensor.index_put_ = _index_put_


_install()
