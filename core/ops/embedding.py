"""The embedding lookup as one op: rows of ``weight`` picked by integer ``indices``.

A registered op (not a composite of index_select) because its derivative must skip the padding
row and may scale each row's gradient by the inverse frequency of its index in the batch; both
are constants of the indices, so the derivative stays an ember op (index_add) and double backward
works. Used by nn.functional.embedding and embedding_bag.
"""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import _state
from ..names import _fmt, no_duplicates
from ..registry import op
from ..tensor import Tensor, _wrap

__all__: list = []


def _embedding_names(ins, *args, **kwargs):
    """The output is indices' dims plus the vector dim (spec 4.3): created, so unnamed, for an
    unnamed weight; a weight named (vocabulary, vector) names it, as naming a layer's weight does."""
    w, n = ins[0]._names, ins[1]._names
    vec = None if w is None else w[-1]
    if vec is None:
        return None if n is None else tuple(n) + (None,)
    n = (None,) * ins[1]._data.ndim if n is None else tuple(n)
    return no_duplicates(n + (vec,), f"Looking up Tensor{_fmt(n)} in Tensor{_fmt(w)}")


def _check_indices(xp, indices, n, who: str = "embedding", arg: int = 1):
    """torch's index checks: int64 or int32 indices (``who``, its argument number ``arg``: the
    op whose check a call meets first), each in [0, n) (``n`` None: the dtype check only)."""
    if indices.dtype != np.int64 and indices.dtype != np.int32:
        raise RuntimeError(
            f"Expected tensor for argument #{arg} 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {_type_name(indices.dtype)} instead (while checking "
            f"arguments for {who})"
        )
    if n is not None and indices.size and (bool((indices < 0).any()) or bool((indices >= n).any())):
        raise IndexError("index out of range in self")


def _type_name(npd) -> str:
    """How torch's argument checks name a cpu tensor of numpy dtype ``npd``."""
    from .. import dtype as _dt

    return _dt.cpu_type_name(_dt._FROM_NP[npd])


@op(names=_embedding_names, method=False)
def _embedding(xp, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """weight[indices]: an (*indices.shape, embedding_dim) tensor. ``sparse``: the weight's
    gradient is a sparse COO tensor (one row per looked-up index)."""
    if weight.shape[0] == 0 and indices.size and indices.dtype in (np.int64, np.int32):
        # torch's index_select refuses an empty table before reading any index
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    _check_indices(xp, indices, weight.shape[0])
    return weight[indices]


@_embedding.vjp
def _(grad, weight_shape, indices, padding_idx, scale_grad_by_freq, sparse):
    idx = indices._data.reshape(-1)
    g = grad.reshape(idx.shape[0], weight_shape[-1])  # not -1: embedding_dim may be 0
    if sparse:
        return _sparse_grad(grad, g, idx, weight_shape, padding_idx, scale_grad_by_freq), None
    if padding_idx >= 0 or scale_grad_by_freq:
        xp = _xp(idx)
        dt = grad._data.dtype
        c = xp.ones(idx.shape[0], dtype=dt)
        if scale_grad_by_freq:
            counts = xp.bincount(idx, minlength=weight_shape[0])
            c = c / counts[idx].astype(dt)
        if padding_idx >= 0:
            c = c * (idx != padding_idx).astype(dt)
        g = g * _wrap(c.reshape(-1, 1))
    if not _state.enabled:  # no graph wanted: add the rows into fresh zeros in place
        from .indexing import _add_at

        gw = _zeros(grad, weight_shape)
        # torch's cpu backward adds the rows one by one (a half dtype rounds after each)
        _add_at(_xp(idx), gw._data, (idx,), g._data, sequential=True)
        return gw, None
    # under create_graph: index_add, so the weight's gradient is differentiable again
    return _zeros(grad, weight_shape).index_add(0, _wrap(idx), g), None


def _sparse_grad(grad, g, idx, weight_shape, padding_idx, scale_grad_by_freq):
    """The looked-up rows' gradients as an uncoalesced sparse COO tensor (padding rows left
    out), as torch's sparse embedding backward gives; differentiable through its values."""
    from ..layout import sparse_coo
    from ..sparse import _make

    if scale_grad_by_freq:
        raise RuntimeError(
            "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
        )
    xp = _xp(idx)
    if padding_idx >= 0:
        keep = xp.nonzero(idx != padding_idx)[0]
        idx = idx[keep]
        g = g[_wrap(keep)]
    elif g._data.base is not None and not _state.enabled:
        g = g.clone()  # its own rows: the upstream gradient's array may be held elsewhere
    ci = _wrap(xp.ascontiguousarray(idx.reshape(1, -1)).astype(xp.int64))
    return _make(sparse_coo, weight_shape, ci, None, g, False)


def _xp(a):
    from ..device import array_module

    return array_module(a)


def _zeros(like: Tensor, shape) -> Tensor:
    return _wrap(_xp(like._data).zeros(tuple(shape), dtype=like._data.dtype))
