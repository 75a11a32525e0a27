"""softmax and log_softmax: numerically stable kernels (the max is subtracted first), derivatives
written in ember ops so double backward works. Names are kept."""

from __future__ import annotations

from .. import dtype as _dt
from ..names import keep
from ..registry import op
from .reduction import _axis1, _exp, _tname

__all__: list = []


def _prepare(name, input, dim, dtype):
    """Cast to ``dtype`` and resolve ``dim`` (None for a 0-dim tensor), with torch's errors."""
    if dim is None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    if dtype is not None:
        input = input.astype(_dt.to_dtype(dtype).np, copy=False)
    ax = _axis1(dim, input.ndim)
    if input.dtype.kind not in "fV":
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
        r = softmax.op.kernel(xp, x.astype(_dt.float32.np), dim).astype(x.dtype)
        return r if input.ndim else r.reshape(())
    e = x - x.max(axis=ax, keepdims=True)
    xp.exp(e, out=e)
    e /= e.sum(axis=ax, keepdims=True)
    return e if input.ndim else e.reshape(())


@softmax.vjp
def _(grad, result, dim):
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
        r = log_softmax.op.kernel(xp, x.astype(_dt.float32.np), dim).astype(x.dtype)
        return r if input.ndim else r.reshape(())
    s = x - x.max(axis=ax, keepdims=True)
    s -= xp.log(xp.exp(s).sum(axis=ax, keepdims=True))
    return s if input.ndim else s.reshape(())


@log_softmax.vjp
def _(grad, result, dim):
    return grad - _exp(result) * grad.sum(dim, keepdim=True)
