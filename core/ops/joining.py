"""Joining, splitting and scatter-into-a-copy ops: atleast_*d, block_diag, broadcast_tensors,
broadcast_shapes, meshgrid, cartesian_prod, combinations, column_stack, row_stack, h/v/dsplit,
index_copy, index_reduce, slice_scatter, select_scatter, diagonal_scatter, narrow_copy,
unravel_index.

Most are compositions of registered ops (their gradients come for free); the scatter-into-a-copy
ops are registered with derivatives written in ember ops.
"""

from __future__ import annotations

import itertools
import operator

import numpy as np

from ...autograd.node import as_torch_node
from ..arg_errors import invalid_arguments as _invalid_arguments
from ..arg_errors import is_ints as _is_ints
from ..arg_errors import overloaded as _overloaded
from ..arg_errors import sequence_error as _sequence_error
from ..arg_errors import tensor_input as _tensor_input
from ..arg_errors import tensor_sequence as _tensor_sequence
from ..autocast import entry as _autocast_entry
from ..dims import by_name
from ..layout import contiguous_format
from ..names import keep, keep_indexed, unify_inputs
from ..registry import NonStridedError, non_strided_call, op
from ..registry import apply as _apply
from ..registry import apply_inplace as _apply_inplace
from ..registry import broadcast_error as _broadcast_error
from ..runtime import _warn_once
from ..tensor import Size, Tensor, _wrap
from .indexing import (
    _INT64,
    _accumulate_index,
    _check_args,
    _check_no_overlap,
    _dtype_word,
    _index_fill,
    _index_func_checks,
    _index_select,
    _scatter_reduce,
    _wrap_dim,
    _xp_of,
)
from .shape import _diag_dims, _diag_view, _not_one_tensor, cat, hstack, reshape, stack, vstack

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "column_stack",
    "combinations",
    "diagonal_scatter",
    "dsplit",
    "hsplit",
    "index_copy",
    "index_reduce",
    "meshgrid",
    "narrow_copy",
    "row_stack",
    "select_scatter",
    "slice_scatter",
    "unravel_index",
    "vsplit",
]

_NOKW: dict = {}


# ---------------------------------------------------------------------- atleast_nd
def _atleast(tensors, fix):
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return fix(tensors[0])
    one = len(tensors) == 1
    if one and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
        one = False
    try:
        return tuple(fix(t) for t in tensors)
    except AttributeError:
        if one:  # a lone non-Tensor matches neither (Tensor input) nor (tuple of Tensors)
            fn = f"atleast_{fix.__name__[-1]}d"
            sigs = ("(Tensor input)", "(tuple of Tensors tensors)")
            raise _invalid_arguments(fn, tensors, {}, sigs) from None
        raise _sequence_error(tensors) from None


def _at1(t: Tensor) -> Tensor:
    return reshape(t, 1) if t._data.ndim == 0 else t


def _at2(t: Tensor) -> Tensor:
    n = t._data.ndim
    return reshape(t, 1, -1) if n < 2 else t


def _at3(t: Tensor) -> Tensor:
    n = t._data.ndim
    if n == 0:
        return reshape(t, 1, 1, 1)
    if n == 1:
        return reshape(t, 1, -1, 1)
    return t.unsqueeze(-1) if n == 2 else t


# torch's overloads, for its error when the arguments match none (the failure path only)
_SPLIT_SIGS = ("(Tensor input, int sections)", "(Tensor input, tuple of ints indices)")


def _split_args(args, kwargs) -> bool:
    given = (*args, *kwargs.values())
    return len(given) == 2 and isinstance(given[0], Tensor) and _is_ints(given[1])


def atleast_1d(*tensors):
    """Views of the inputs with at least one dim (0-d tensors become shape (1,))."""
    return _atleast(tensors, _at1)


def atleast_2d(*tensors):
    """Views of the inputs with at least two dims (new leading dims of size 1)."""
    return _atleast(tensors, _at2)


def atleast_3d(*tensors):
    """Views with at least three dims: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _atleast(tensors, _at3)


# ---------------------------------------------------------------------- broadcasting
def _given(shape) -> str:
    """A shape argument as torch's messages print it (a Size by its torch name)."""
    if isinstance(shape, Size):
        return f"torch.Size({list(shape)})"
    return str((shape,) if isinstance(shape, int) else shape)


def broadcast_shapes(*shapes) -> Size:
    """The shape the given shapes broadcast to (like torch, without making tensors)."""
    given = shapes
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    n = max((len(s) for s in shapes), default=0)
    result = [1] * n
    for k, s in enumerate(shapes):
        for i in range(-1, -1 - len(s), -1):
            d = s[i]
            if d < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if d == 1 or d == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {d} at {i}! Mismatching "
                    f"argument at index {k} had {_given(given[k])}; but expected shape should be "
                    f"broadcastable to {result}"
                )
            result[i] = d
    return Size(result)


def broadcast_tensors(*tensors) -> tuple:
    """Expanded views of the tensors, all of their common broadcast shape.

    Named tensors unify their names from the right (the rule of binary ops): every result
    carries the unified names, and clashing names raise before the sizes are compared."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    names = None
    try:
        named = any(t._names is not None for t in tensors)
    except AttributeError:
        raise _sequence_error(tensors) from None
    if named:
        try:
            names = unify_inputs(tensors)
        except RuntimeError as e:
            raise RuntimeError(f"broadcast_tensors: {e}") from None
    shapes = [t._data.shape for t in tensors]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise _broadcast_error(shapes) from None
    out = tuple(t if t._data.shape == shape else t.expand(shape) for t in tensors)
    if names is not None:
        out = tuple(t if t._names == names else t.rename(*names) for t in out)
    return out


# ---------------------------------------------------------------------- meshgrid & products
@_tensor_sequence(unpack=True)
def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 0-D/1-D tensors: views of shape (len(t0), len(t1), ...) for 'ij',
    with the first two dims swapped for 'xy'."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings

        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    d0 = tensors[0]._data.dtype
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"{t._data.ndim}D"
            )
        if t._data.dtype != d0:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t._data.size for t in ts)
    n = len(ts)
    out = []
    for i, t in enumerate(ts):
        v = reshape(t, (1,) * i + (-1,) + (1,) * (n - i - 1))
        out.append(v.expand(shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def _check_1d(t: Tensor) -> None:
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")


@_tensor_sequence()
def cartesian_prod(*tensors) -> Tensor:
    """The Cartesian product of 1-D tensors: a (prod of lengths, len(tensors)) tensor."""
    for t in tensors:
        _check_1d(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


@_tensor_input("combinations")
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """All length-``r`` combinations of the elements of a 1-D tensor (like itertools)."""
    _check_1d(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if input._names is not None:
        # the result's dims (combinations, their elements) are created: unnamed (spec 4.2)
        input = input.rename(None)
    if r == 0:
        return _wrap(input._data[:0].copy())
    n = input._data.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = np.array(list(gen(range(n), r)), dtype=np.int64).reshape(-1, r)
    xp = _xp_of(input._data)
    cols = [_index_select(input, _wrap(xp.asarray(combos[:, k])), 0) for k in range(r)]
    return stack(cols, 1)


# ---------------------------------------------------------------------- stacks & splits
def column_stack(tensors, *, out=None) -> Tensor:
    """Stack tensors as columns: 0-D/1-D tensors become (n, 1) columns, then hstack."""
    _not_one_tensor(tensors, "column_stack")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    ts = [reshape(t, -1, 1) if t._data.ndim <= 1 else t for t in tensors]
    return hstack(ts, out=out) if out is not None else hstack(ts)


def row_stack(tensors, *, out=None) -> Tensor:
    """Alias of ``vstack``."""
    _not_one_tensor(tensors, "row_stack")
    return vstack(tensors, out=out) if out is not None else vstack(tensors)


def _nsplit(input: Tensor, sections, dim: int, need: int, who: str) -> tuple:
    n = input._data.ndim
    if n < need:
        raise RuntimeError(
            f"torch.{who} requires a tensor with at least {need} dimension, but got a tensor "
            f"with {n} dimensions!"
        )
    if isinstance(sections, int):
        size = input._data.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(
                f"torch.{who} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {sections}!"
            )
    return input.tensor_split(sections, dim)


@_overloaded("hsplit", _SPLIT_SIGS, _split_args)
def hsplit(input: Tensor, indices_or_sections) -> tuple:
    """Split horizontally (dim 1, or dim 0 for 1-D tensors) with ``tensor_split`` semantics."""
    n = input._data.ndim
    return _nsplit(input, indices_or_sections, 1 if n > 1 else 0, 1, "hsplit")


@_overloaded("vsplit", _SPLIT_SIGS, _split_args)
def vsplit(input: Tensor, indices_or_sections) -> tuple:
    """Split vertically (dim 0) a tensor of at least 2 dims."""
    return _nsplit(input, indices_or_sections, 0, 2, "vsplit")


@_overloaded("dsplit", _SPLIT_SIGS, _split_args)
def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """Split depth-wise (dim 2) a tensor of at least 3 dims."""
    return _nsplit(input, indices_or_sections, 2, 3, "dsplit")


def narrow_copy(input: Tensor, dim, start, length) -> Tensor:
    """``narrow`` as a fresh copy."""
    try:
        nd = input._data.ndim
    except NonStridedError:  # a sparse input: its own kernel (free for dense inputs)
        out = non_strided_call("narrow_copy", (input, dim, start, length), {})
        if out is NotImplemented:
            raise
        return out
    if nd and not isinstance(dim, str):
        # torch's narrow_copy kernel checks before narrow does, in its own words
        d = operator.index(dim)
        if d >= nd:
            raise RuntimeError(
                "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got "
                "false.  (Could this error message be improved?  If so, please report an "
                "enhancement request to PyTorch.)"
            )
        size = input._data.shape[d] if d >= -nd else 0
        s = int(start)
        if d >= -nd and int(length) < 0 and -size <= s <= size:
            s = s + size if s < 0 else s
            raise RuntimeError(f"start ({s}) + length ({length}) exceeds dimension size ({size}).")
    return as_torch_node(input.narrow(dim, start, length).clone(), "NarrowCopyBackward0")


# ---------------------------------------------------------------------- block_diag
@_autocast_entry  # torch's is one kernel: its cats must not cast (autocast's OWN)
@_tensor_sequence()
def block_diag(*tensors) -> Tensor:
    """A block-diagonal matrix of the inputs (0-D -> 1x1, 1-D -> 1xn blocks); dtypes promoted."""
    from ... import zeros
    from ..dtype import result_type

    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{i} has {t._data.ndim} dimensions"
            )
    if not tensors:
        return zeros(1, 0)
    blocks = [reshape(t, 1, -1) if t._data.ndim < 2 else t for t in tensors]
    if len(blocks) > 1:  # each block's dims are parts of new ones: unnamed (spec 4.2), unchecked
        blocks = [b if b._names is None else b.rename(None) for b in blocks]
    dt = result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
    dev = tensors[0].device
    cols = sum(b._data.shape[1] for b in blocks)
    rows = []
    left = 0
    for b in blocks:
        r, c = b._data.shape
        parts = []
        if left:
            parts.append(zeros(r, left, dtype=dt, device=dev))
        parts.append(b if b.dtype == dt else b.to(dt))
        if cols - left - c:
            parts.append(zeros(r, cols - left - c, dtype=dt, device=dev))
        rows.append(parts[0] if len(parts) == 1 else cat(parts, 1))
        left += c
    if len(rows) > 1:
        return cat(rows, 0)
    r = rows[0]
    # one block and no padding: a new contiguous tensor, never the input (or a view of it)
    return r.clone(memory_format=contiguous_format) if r is blocks[0] else r


# ---------------------------------------------------------------------- unravel_index
def unravel_index(indices: Tensor, shape) -> tuple:
    """The coordinates in a tensor of ``shape`` of flat ``indices``: a tuple of int64 tensors."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    a = indices._data
    if a.dtype.kind not in "iu" or a.dtype.kind == "b":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape:
        raise RuntimeError("ZeroDivisionError")  # torch's own (odd) message
    xp = _xp_of(a)
    rem = a.astype(_INT64)
    coords = []
    for s in reversed(shape):  # like torch, every coordinate wraps (python-style modulo)
        coords.append(rem % s if s else rem)
        rem = rem // s if s else rem
    # each coordinate has the indices' shape: it keeps their names (spec 4.2)
    return tuple(_wrap(xp.array(c, dtype=_INT64), indices._names) for c in reversed(coords))


# ---------------------------------------------------------------------- index_copy
@op(names=keep_indexed, method=False, name="_index_copy")
def _index_copy(xp, input, index, source, dim=0):
    """A copy of ``input`` with the slices of ``source`` written at ``index`` along ``dim``."""
    who = "index_copy_"
    nd, ns = input.ndim, source.ndim
    dim = _wrap_dim(dim, nd)  # (torch's order: the dim, the ranks, the dtypes, the shapes)
    if index.ndim > 1:
        raise IndexError(f"{who}(): Index should have dimension 1 or 0 (got {index.ndim})")
    if not ns and index.size != 1:
        raise IndexError(
            f"{who}(): When source is scalar, index should have one element (got {index.size})"
        )
    if ns != nd and ns and nd:
        raise IndexError(
            f"{who}(): When source and destination are not scalars, their dimensionality must "
            f"match. Source dimensionality ({ns}), destination dimensionality ({nd})"
        )
    if index.dtype != _INT64:
        raise RuntimeError(
            f"{who}(): Expected a long tensor for index, but got {_dtype_word(index)}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"{who}(): self and source expected to have the same dtype, but got (self) "
            f"{_dtype_word(input)} and (source) {_dtype_word(source)}"
        )
    xs = input.shape[:dim] + input.shape[dim + 1 :]  # (the slices: a 0-dim one is empty)
    ss = source.shape[:dim] + source.shape[dim + 1 :]
    if xs != ss:
        raise RuntimeError(
            f"{who}(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {' '.join(map(str, xs))} at dimension {dim} and source slice shape: "
            f"{' '.join(map(str, ss))} at dimension 0."
        )
    idx = index.reshape(-1)
    if ns and idx.size != source.shape[dim]:
        raise IndexError(
            f"{who}(): Number of indices ({idx.size}) should be equal to source.size(dim) "
            f"({source.shape[dim]})"
        )
    out = input.copy()
    size = input.shape[dim] if nd else 1  # (a 0-dim self is one slice)
    # (torch's kernel reads no index of an empty self, unless it has values to write there)
    if xp is np and idx.size and (out.size or (source.size and not size)):
        bad = (idx < 0) | (idx >= size)
        if bad.any():
            raise IndexError(
                f"{who}(): index {int(idx[bad][0])} is out of bounds for dimension {dim} with "
                f"size {size}"
            )
    if not out.size:
        return out
    if not nd:
        if idx.size:
            out[...] = source.reshape(-1)[-1]  # (torch's serial kernel: the last write stays)
        return out
    out[(slice(None),) * dim + (idx,)] = source
    return out


@_index_copy.vjp
def _(grad, index, dim, needs):
    gi = _index_fill(grad, index, 0, dim) if needs[0] else None
    gs = _index_select(grad, index, dim) if needs[2] else None
    return gi, None, gs


@_autocast_entry
def index_copy(input: Tensor, dim, index: Tensor, source: Tensor, *, out=None) -> Tensor:
    """A copy of ``input`` with ``source``'s slices copied to ``index`` along ``dim``."""
    _check_args("index_copy", input, dim, ("index", 3, index), ("source", 4, source))
    dim = by_name(input, dim)
    return _apply(
        _index_copy.op, (input, index, source, dim), _NOKW if out is None else {"out": out}
    )


def _index_copy_(self, dim, index, source):
    _check_args("index_copy_", self, dim, ("index", 3, index), ("source", 4, source), method=True)
    _check_no_overlap(self, index, source)
    dim = by_name(self, dim)
    return _apply_inplace(_index_copy.op, self, (index, source, dim), _NOKW)


# ---------------------------------------------------------------------- index_reduce
def _index_reduce_checks(input, dim, index, source, reduce, include_self):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    a, s, i = input._data, source._data, index._data
    nd = a.ndim
    d = _wrap_dim(dim, nd)  # (torch's order: the dim, the index, the dtypes)
    i = _accumulate_index(i, "index_reduce_")
    if s.dtype != a.dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({_dtype_word(a)}) and source ({_dtype_word(s)}) must have "
            "the same scalar type"
        )
    _index_func_checks("index_reduce_", a, i, s, d)
    size = a.shape[d] if nd else 1
    if not include_self:  # torch first fills the slots with index_fill_'s checks
        if a.dtype.kind in "bc":
            raise NotImplementedError(
                f"\"index_reduce_func_exclude_input_init\" not implemented for '{_dtype_word(a)}'"
            )
        bad = (i < -size) | (i >= size)
        if bad.any():
            raise IndexError(
                f"index {int(i[bad][0])} is out of bounds for dimension {d} with size {size}"
            )
    if nd <= 1 and a.dtype.kind in "bc":  # torch's 1-d kernel has neither type
        raise NotImplementedError(f"\"index_func_\" not implemented for '{_dtype_word(a)}'")
    if bool(((i < 0) | (i >= size)).any()):
        raise IndexError("index out of range in self")
    if reduce == "mean" and a.dtype.kind == "b" and i.size:  # (a floor division ends it)
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    if a.dtype.kind == "c" and i.size and reduce in ("amax", "amin"):
        # torch's n-d kernel reduces slices with ops of which only maximum/minimum refuse them
        kernel = "maximum_cpu" if reduce == "amax" else "minimum_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype_word(a)}'")
    return d


def _expanded_index(index: Tensor, source: Tensor, d: int) -> Tensor:
    # the index of scatter_reduce that reduces source's slice k into input's slice index[k]
    i = index._data.reshape(-1)
    nd = source._data.ndim
    shape = [1] * nd
    shape[d] = i.size
    xp = _xp_of(i)
    return _wrap(xp.ascontiguousarray(xp.broadcast_to(i.reshape(shape), source._data.shape)))


@op(names=keep, method=False, name="_index_prod")
def _index_prod(xp, input, index, source, dim=0, include_self=True):
    """``index_reduce`` with reduce='prod' (a copy)."""
    out = input.copy()
    key = (slice(None),) * dim + (index,)
    if not include_self:
        out[key] = 1
    n = index.size
    if not n:
        return out
    # duplicates multiply in turn: round r applies each index's r-th occurrence (all distinct,
    # so a plain fancy-index update is exact); ranks come from a sort, on the device
    order = xp.argsort(index)
    srt = index[order]
    rank = xp.empty(n, srt.dtype)
    rank[order] = xp.arange(n, dtype=srt.dtype) - xp.searchsorted(srt, srt, side="left")
    pre = (slice(None),) * dim
    for r in range(int(rank.max()) + 1):
        sel = xp.nonzero(rank == r)[0]
        k = pre + (index[sel],)
        out[k] = out[k] * source[pre + (sel,)]
    return out


@_index_prod.vjp
def _(grad, input, index, source, result, dim, include_self, needs):
    # d out/d x = product of the other factors; computed without dividing, so zeros are exact
    gi = gs = None
    xp = _xp_of(grad._data)
    idx = index._data
    if needs[0]:
        if include_self:
            others = _index_prod(
                _wrap(xp.ones(input._data.shape, input._data.dtype)), index, source, dim, True
            )
            gi = grad * others
        else:
            keep_mask = xp.ones(input._data.shape, input._data.dtype)
            keep_mask[(slice(None),) * dim + (idx,)] = 0
            gi = grad * _wrap(keep_mask)
    if needs[2]:
        parts = []
        for k in range(idx.size):
            j = int(idx[k])
            mask = xp.ones(source._data.shape, source._data.dtype)
            mask[(slice(None),) * dim + (k,)] = 0
            # the product of every other factor landing on slot j
            same = _wrap(xp.asarray((idx == j).nonzero()[0]))
            sel = _index_select(source * _wrap(mask) + _wrap(1 - mask), same, dim).prod(dim)
            base = input.select(dim, j) if include_self else 1
            parts.append(grad.select(dim, j) * sel * base)
        gs = stack(parts, dim) if parts else grad.new_zeros(source.shape)  # (an empty index)
    return gi, None, gs


def index_reduce(
    input: Tensor, dim, index: Tensor, source: Tensor, reduce: str, *, include_self=True, out=None
) -> Tensor:
    """Reduce the slices of ``source`` into ``input`` at ``index`` along ``dim``: 'prod', 'mean',
    'amax' or 'amin' (``include_self``: whether input's own values take part)."""
    _check_args("index_reduce", input, dim, ("index", 3, index), ("source", 4, source))
    dim = by_name(input, dim)
    d = _index_reduce_checks(input, dim, index, source, reduce, include_self)
    _warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.")
    if input._data.ndim == 0:
        r = _scatter_reduce(
            input.reshape(1), index.reshape(-1), source.reshape(-1), 0, reduce, include_self
        ).reshape(())
    else:
        i = index.reshape(-1)
        if reduce == "prod":
            r = _index_prod(input, i, source, d, include_self)
        elif not i.numel() and input._data.dtype == np.bool_:  # (scatter_reduce: no bool mean)
            r = input.clone()
        else:
            ie = _expanded_index(i, source, d)
            r = _scatter_reduce(input, ie, source, d, reduce, include_self)
    r = as_torch_node(r, "IndexReduceBackward0")  # torch's one kernel, ember's few ops
    if out is not None:
        from ..registry import _write_out

        return _write_out(_index_copy.op, out, r)
    return r


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    _check_args("index_reduce_", self, dim, ("index", 3, index), ("source", 4, source), method=True)
    _check_no_overlap(self, index, source)
    return _inplace_composite(
        self,
        lambda s: index_reduce(s, dim, index, source, reduce, include_self=include_self),
        source,
    )


def _inplace_composite(self: Tensor, fn, *others) -> Tensor:
    """``self.op_(...)`` for a composite op: ``fn(self)`` written into self, with its history
    (like the registry's in-place ops; the graph keeps a snapshot of self's old value)."""
    from ...autograd.grad_mode import _state
    from ..registry import _check_writable, _rebase_history, _snapshot

    grad_on = _state.enabled
    if grad_on and self.requires_grad and self._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    src = self
    if grad_on and (self.requires_grad or any(o.requires_grad for o in others)):
        src = _snapshot(self)
    r = fn(src)
    _check_writable(self._data)
    self._data[...] = r._data
    self._ver[0] += 1
    if r._grad_fn is not None:
        _rebase_history(self, r)
    return self


# ---------------------------------------------------------------------- *_scatter
def _scatter_size_check(src, sl):
    if tuple(src.shape) != tuple(sl.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(sl.shape)}"
        )


def _slice_key(shape, dim, start, end, step):
    if step is None:
        step = 1
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = _wrap_dim(dim, len(shape))
    return (slice(None),) * d + (slice(start, end, step),)


@op(names=keep)
def slice_scatter(xp, input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written at ``input[..., start:end:step, ...]`` (``dim``)."""
    key = _slice_key(input.shape, dim, start, end, step)
    out = input.copy()
    _scatter_size_check(src, out[key])
    out[key] = src
    return out


@slice_scatter.vjp
def _(grad, src, dim, start, end, step, needs):
    g = grad._data
    gi = gs = None
    key = _slice_key(g.shape, dim, start, end, step)
    if needs[0]:
        z = _xp_of(g).zeros(src._data.shape, g.dtype)
        gi = slice_scatter(grad, _wrap(z), dim, start, end, step)
    if needs[1]:
        gs = grad[key]
    return gi, gs


@op(names=keep)
def select_scatter(xp, input, src, dim=None, index=None):
    """A copy of ``input`` with ``src`` written at ``input.select(dim, index)``."""
    nd = input.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, nd)
    size = input.shape[d]
    i = int(index)
    if not -size <= i < size:
        raise IndexError(
            f"select(): index {i} out of range for tensor of size {list(input.shape)} at "
            f"dimension {dim}"
        )
    out = input.copy()
    key = (slice(None),) * d + (i,)
    _scatter_size_check(src, out[key])
    out[key] = src
    return out


@select_scatter.vjp
def _(grad, src, dim, index, needs):
    gi = gs = None
    if needs[0]:
        z = _xp_of(grad._data).zeros(src._data.shape, grad._data.dtype)
        gi = select_scatter(grad, _wrap(z), dim, index)
    if needs[1]:
        gs = grad.select(dim, index)
    return gi, gs


@op(names=keep)
def diagonal_scatter(xp, input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written on its diagonal (``offset``, ``dim1``, ``dim2``)."""
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    out = input.copy()
    view = _diag_view(xp, out, int(offset), d1, d2)
    _scatter_size_check(src, view)
    view[...] = src
    return out


@diagonal_scatter.vjp
def _(grad, src, offset, dim1, dim2, needs):
    gi = gs = None
    if needs[0]:
        z = _xp_of(grad._data).zeros(src._data.shape, grad._data.dtype)
        gi = diagonal_scatter(grad, _wrap(z), offset, dim1, dim2)
    if needs[1]:
        gs = grad.diagonal(offset, dim1, dim2)
    return gi, gs


def _install():
    Tensor.index_copy = index_copy
    Tensor.index_copy_ = _index_copy_
    Tensor.index_reduce = index_reduce
    Tensor.index_reduce_ = _index_reduce_
    Tensor.hsplit = hsplit
    Tensor.vsplit = vsplit
    Tensor.dsplit = dsplit
    Tensor.narrow_copy = narrow_copy


_install()
