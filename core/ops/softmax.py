"""softmax and log_softmax: numerically stable kernels (the max is subtracted first), derivatives
written in ember ops so double backward works. Names are kept."""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import _state
from .. import dtype as _dt
from ..arg_errors import type_name
from ..device import array_module
from ..dims import int_dim
from ..layout import row_major
from ..names import keep
from ..registry import op
from ..tensor import _wrap
from .conversion import _warn_complex_to_real
from .reduction import _axis1, _exp, _tname

__all__: list = []

_max_reduce = np.maximum.reduce
_add_reduce = np.add.reduce


def _prepare(name, input, dim, dtype):
    """Cast to ``dtype`` and resolve ``dim`` (None for a 0-dim tensor), with torch's errors."""
    if type(dim) is int and dtype is None:  # the common call: an in-range dim of a float input
        n = input.ndim
        if -n <= dim < n and input.dtype.kind == "f":
            return input, dim + n if dim < 0 else dim
    if dim is None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    if type(dim) is not int:
        int_dim(dim)  # torch's parser reads dim before dtype: its TypeError comes first
    if dtype is not None:
        if not isinstance(dtype, _dt.dtype):
            raise TypeError(
                f"{name}(): argument 'dtype' must be torch.dtype, not {type_name(dtype)}"
            )
        if input.dtype.kind == "c" and not dtype.is_complex:
            _warn_complex_to_real()  # torch's warning, not numpy's ComplexWarning
            input = input.real
        input = input.astype(dtype.np, copy=False)
    ax = _axis1(dim, input.ndim)
    if input.dtype.kind not in "fV" and input.size:  # an empty input runs no kernel in torch
        last = ax is None or ax == input.ndim - 1
        kind = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kind}\" not implemented for '{_tname(input.dtype)}'")
    if ax is None:  # a 0-dim tensor: work on one element so the in-place steps have an array
        return input.reshape(1), 0
    return input, ax


@op(names=keep)
def softmax(xp, input, dim=None, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``; ``dtype`` casts the input first."""
    x, ax = _prepare("softmax", input, dim, dtype)
    if not x.size:
        return x.copy()
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV":  # half types: float32 math, like torch
        f32 = _dt.float32.np
        if ax == x.ndim - 1:
            r = softmax.op.kernel(xp, x.astype(f32), dim).astype(x.dtype)
        else:  # torch's other-dim kernel stores exp(x - max) in the half dtype, then divides
            e = x.astype(f32)
            e -= e.max(axis=ax, keepdims=True)
            xp.exp(e, out=e)
            r = (e.astype(x.dtype).astype(f32) / e.sum(axis=ax, keepdims=True)).astype(x.dtype)
        return r if input.ndim else r.reshape(())
    if xp is np:  # ufunc methods: ndarray.max/sum run numpy's Python-level steps first
        e = x - _max_reduce(x, ax, None, None, True)
        xp.exp(e, out=e)
        e /= _add_reduce(e, ax, None, None, True)
    else:
        e = x - x.max(axis=ax, keepdims=True)
        xp.exp(e, out=e)
        e /= e.sum(axis=ax, keepdims=True)
    if input.ndim > 1:
        return row_major(xp, e)
    return e if input.ndim else e.reshape(())


def _half_grad(grad, result, dim, log: bool):
    """The softmax/log_softmax gradient of a float16/bfloat16 output computed in float32 and
    rounded once, as torch's kernels do; None where the ember-op formula applies (another dtype,
    a graph to record, a named or 0-d dim)."""
    y = result._data
    if _state.enabled or y.dtype.itemsize != 2 or type(dim) is not int or not y.ndim:
        return None
    ax = dim % y.ndim
    f32 = _dt.float32.np
    yf, g = y.astype(f32), grad._data.astype(f32)
    if log:  # g - exp(y) sum(g)
        r = g - array_module(y).exp(yf) * g.sum(axis=ax, keepdims=True)
    else:  # y (g - sum(g y))
        r = yf * (g - (g * yf).sum(axis=ax, keepdims=True))
    return _wrap(r.astype(y.dtype))


@softmax.vjp
def _(grad, result, dim):
    half = _half_grad(grad, result, dim, False)
    if half is not None:
        return half
    y, g = result._data, grad._data
    if (
        not _state.enabled
        and type(dim) is int
        and type(y) is np.ndarray
        and y.ndim
        and g.dtype is y.dtype
        and y.dtype.char in "fd"
    ):  # no graph to record: the formula below on the arrays, without five op calls
        gy = g * y
        r = y * _add_reduce(gy, dim, None, None, True)
        return _wrap(np.subtract(gy, r, out=r))
    # d softmax: y * (g - sum(g * y)); the saved output keeps it differentiable
    gy = grad * result
    return gy - result * gy.sum(dim, keepdim=True)


@op(names=keep)
def log_softmax(xp, input, dim=None, dtype=None):
    """x - logsumexp(x) along ``dim``; ``dtype`` casts the input first."""
    x, ax = _prepare("log_softmax", input, dim, dtype)
    if not x.size:
        return x.copy()
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV":  # half types: float32 math, like torch
        f32 = _dt.float32.np
        s = x.astype(f32)
        s -= s.max(axis=ax, keepdims=True)
        lse = xp.exp(s).sum(axis=ax, keepdims=True)
        if ax == x.ndim - 1:
            # torch's last-dim kernel keeps the sum of exps, and its log, in the input's dtype
            lse = xp.log(lse.astype(x.dtype).astype(f32)).astype(x.dtype).astype(f32)
        else:
            lse = xp.log(lse)
        r = (s - lse).astype(x.dtype)
        return r if input.ndim else r.reshape(())
    if xp is np:  # (see softmax)
        s = x - _max_reduce(x, ax, None, None, True)
        s -= xp.log(_add_reduce(xp.exp(s), ax, None, None, True))
    else:
        s = x - x.max(axis=ax, keepdims=True)
        s -= xp.log(xp.exp(s).sum(axis=ax, keepdims=True))
    if input.ndim > 1:
        return row_major(xp, s)
    return s if input.ndim else s.reshape(())


@log_softmax.vjp
def _(grad, result, dim):
    y = result._data
    if not _state.enabled and type(dim) is int and y.ndim and y.dtype.kind == "f":
        if y.dtype.itemsize == 2:
            return _half_grad(grad, result, dim, True)
        # no graph to record: the formula below on the arrays, without four op calls
        g = grad._data
        if g.dtype is y.dtype:
            xp = array_module(y)
            r = xp.exp(y)
            r *= g.sum(axis=dim, keepdims=True)
            return _wrap(xp.subtract(g, r, out=r))
    half = _half_grad(grad, result, dim, True)
    if half is not None:
        return half
    return grad - _exp(result) * grad.sum(dim, keepdim=True)
