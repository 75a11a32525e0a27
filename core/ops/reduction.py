"""Reductions: sum, mean, ... and sum_to_size (the engine's broadcast reduction)."""

from __future__ import annotations

from .. import dtype as _dt
from ..names import remove_dims, keep
from ..registry import op


__all__ = []


def _axes(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(d % ndim if ndim else 0 for d in dim) if len(dim) else None
    return (dim % ndim if ndim else 0,)


def _reduced_names(ins, dim=None, keepdim=False, **kw):
    t = ins[0]
    if keepdim:
        return t._names
    axes = _axes(dim, t._data.ndim)
    return remove_dims(t._names, range(t._data.ndim) if axes is None else axes)


def _np_dtype(dtype):
    return None if dtype is None else _dt.to_dtype(dtype).np


def _expand_back(grad, input_shape, dim, keepdim):
    """Broadcast a reduction's gradient back to the input shape."""
    if not keepdim and dim is not None:
        axes = _axes(dim, len(input_shape))
        if axes:
            shape = list(grad.shape)
            for a in sorted(axes):
                shape.insert(a, 1)
            grad = grad.reshape(shape)
    elif not keepdim:
        grad = grad.reshape((1,) * len(input_shape))
    return grad.expand(input_shape)


@op(names=_reduced_names)
def sum(xp, input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (int, name, or a list of them; all dims when None)."""
    npd = _np_dtype(dtype)
    if npd is None and input.dtype.kind in "bui":
        npd = _dt.int64.np
    return xp.sum(input, axis=_axes(dim, input.ndim), keepdims=keepdim, dtype=npd)


@sum.vjp
def _(grad, input_shape, dim, keepdim):
    return _expand_back(grad, input_shape, dim, keepdim)


@op(names=_reduced_names)
def mean(xp, input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim``; floating and complex inputs only (like torch)."""
    npd = _np_dtype(dtype)
    if npd is None and input.dtype.kind not in "fcV":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_dt._FROM_NP[input.dtype].name.capitalize()}")
    return xp.mean(input, axis=_axes(dim, input.ndim), keepdims=keepdim, dtype=npd)


@mean.vjp
def _(grad, input_shape, dim, keepdim):
    n = 1
    axes = _axes(dim, len(input_shape))
    for i, s in enumerate(input_shape):
        if axes is None or i in axes:
            n *= s
    return _expand_back(grad / n, input_shape, dim, keepdim)


@op(names=keep)
def sum_to_size(xp, input, *size):
    """Sum ``input`` down to ``size`` (the shape it was broadcast from)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    lead = input.ndim - len(size)
    if lead < 0:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(input.shape)}}}.")
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and input.shape[lead + i] != 1)
    out = xp.sum(input, axis=axes, keepdims=True) if axes else input
    return out.reshape(size) if lead else out


@sum_to_size.vjp
def _(grad, input_shape):
    return grad.expand(input_shape)
