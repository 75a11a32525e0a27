"""Reductions: sum, mean, prod, max/min, std/var, norm, cumsum, median, ... and sum_to_size
(the engine's broadcast reduction).

Gradients are written in ember ops. Masks that select elements (ties of a max, the index a
``max(dim)`` picked, non-NaN entries) are piecewise constant, so they enter the derivative as
constant tensors built from the raw arrays: that keeps double backward exact without needing the
comparison ops.
"""

from __future__ import annotations

import builtins
import math
from types import SimpleNamespace

import numpy as np

from .. import dtype as _dt
from ..arg_errors import int_varargs
from ..device import array_module
from ..dims import int_dim
from ..layout import reduced, row_major
from ..names import keep, remove_dims
from ..registry import OPS, op
from ..return_types import return_types
from ..tensor import Tensor, _wrap
from ..vmap_state import SLICES as _VMAP_SLICES
from .arithmetic import _complex_logaddexp
from .decompositions import _exact
from .pointwise import _tie

__all__ = ["return_types"]

_TORCH_NAMES = _dt.SCALAR_NAMES


def _tname(npd) -> str:
    d = _dt._FROM_NP[npd]
    return _TORCH_NAMES.get(d.name, d.name.capitalize())


# ---------------------------------------------------------------------- dims
def _range_error(d, ndim):
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    return IndexError(
        f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})"
    )


def _axis1(d, ndim):
    """One dim as a non-negative axis (a 0-dim tensor accepts 0 and -1, and has no axis: None)."""
    if type(d) is int and 0 <= d < ndim:
        return d
    d = int_dim(d)
    if ndim == 0:
        if d in (0, -1):
            return None
        raise _range_error(d, 0)
    if d < -ndim or d >= ndim:
        raise _range_error(d, ndim)
    return d + ndim if d < 0 else d


def _axes(dim, ndim):
    """torch's dim argument -> numpy axes: None (all dims) or a tuple of distinct axes."""
    if dim is None:
        return None
    if type(dim) is int:
        if 0 <= dim < ndim:
            return (dim,)
        a = _axis1(dim, ndim)
        return () if a is None else (a,)
    if isinstance(dim, (list, tuple)):
        if not dim:
            return None  # an empty list reduces every dim, like torch
        if ndim == 0:  # its dims 0 and -1 are both dim 0
            for d in dim:
                _axis1(d, 0)
            if len(dim) > 1:
                raise RuntimeError("dim 0 appears multiple times in the list of dims")
            return ()
        out = []
        for d in dim:
            a = _axis1(d, ndim)
            if a is not None:
                if a in out:
                    raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
                out.append(a)
        return tuple(out)
    a = _axis1(dim, ndim)
    return () if a is None else (a,)


def _drop(t, dim, keepdim):
    if keepdim:
        return t._names
    axes = _axes(dim, t._data.ndim)
    return remove_dims(t._names, range(t._data.ndim) if axes is None else axes)


def _reduced_names(ins, dim=None, keepdim=False, **kw):
    return _drop(ins[0], dim, keepdim)


def _np_dtype(dtype):
    return None if dtype is None else _dt.to_dtype(dtype).np


def _count(shape, axes) -> int:
    n = 1
    for i, s in enumerate(shape):
        if axes is None or i in axes:
            n *= s
    return n


def _kept_shape(shape, axes):
    return tuple(1 if axes is None or i in axes else s for i, s in enumerate(shape))


def _unsqueeze_back(t, input_shape, dim, keepdim):
    """A reduction's output (or gradient) reshaped to broadcast against the input (keepdim form)."""
    if keepdim:
        return t
    shape = _kept_shape(input_shape, _axes(dim, len(input_shape)))
    return t if tuple(t.shape) == shape else t.reshape(shape)


def _expand_back(grad, input_shape, dim, keepdim):
    """Broadcast a reduction's gradient back to the input shape."""
    return _unsqueeze_back(grad, input_shape, dim, keepdim).expand(input_shape)


def _const(arr) -> Tensor:
    """A constant (no grad) tensor around an array: masks inside derivatives."""
    return _wrap(arr)


def _not_impl(kernel, a):
    """torch's dispatch error for a dtype its kernel lacks (complex, for the ordering ops)."""
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{_dt.scalar_name(_dt._FROM_NP[a.dtype])}'"
    )


def _nonempty(name, a, axes, who=None, all_dims=None):
    """torch refuses max-like reductions over an empty dim (there is no identity). ``who``: the
    messages' prefix (default ``name()``); ``all_dims``: the message when no dim is given."""
    if a.size:
        return
    who = who or f"{name}()"
    if axes is None:
        raise RuntimeError(
            all_dims
            or f"{who}: Expected reduction dim to be specified for input.numel() == 0. Specify "
            "the reduction dim with the 'dim' argument."
        )
    for ax in axes:
        if a.shape[ax] == 0:
            raise IndexError(f"{who}: Expected reduction dim {ax} to have non-zero size.")


# ---------------------------------------------------------------------- private helper op
@op(names=keep, method=False)
def _exp(xp, input):
    """exp for derivatives (logsumexp, log_softmax) without depending on the pointwise family."""
    return xp.exp(input)


@_exp.vjp
def _(grad, result):
    return grad * result


# ---------------------------------------------------------------------- sum / mean
_F32 = np.dtype(np.float32)


# ufunc methods are C calls: ndarray.sum/mean run numpy's Python-level _methods first
_add_reduce = np.add.reduce
_intp = np.intp
_or_reduce = np.logical_or.reduce
_max_reduce = np.maximum.reduce
_min_reduce = np.minimum.reduce


def _np_sum(xp, a, ax, keepdim, npd):
    """``a.sum(axis=ax, keepdims=keepdim, dtype=npd)``; on numpy the same reduce, called directly."""
    if xp is np:
        return _add_reduce(a, ax, npd, None, keepdim)
    return a.sum(axis=ax, keepdims=keepdim, dtype=npd)


def _np_mean(xp, a, ax, keepdim, npd, n):
    """``a.mean(axis=ax, keepdims=keepdim, dtype=npd)`` of a non-empty floating or complex ``a``
    (``n`` elements per result, ``npd`` not None for a 16-bit input); on numpy numpy's own steps
    (sum, then divide by an intp count into the sum) without its Python-level wrapper."""
    if xp is not np:
        return a.mean(axis=ax, keepdims=keepdim, dtype=npd)
    s = _add_reduce(a, ax, npd, None, keepdim)
    if type(s) is np.ndarray:
        return np.true_divide(s, _intp(n), out=s, casting="unsafe", subok=False)
    return s.dtype.type(s / _intp(n))


def _any(xp, mask) -> bool:
    """``mask.any()`` of a bool array (numpy's method runs Python-level steps first)."""
    return bool(_or_reduce(mask, None)) if xp is np else bool(mask.any())


def _lowp(a) -> bool:
    """float16/bfloat16: torch's cpu reductions accumulate these in float32 (numpy's would sum
    in the 16-bit type, where a running sum stops growing at 2048 or 256)."""
    return a.dtype.itemsize == 2 and a.dtype.kind in "fV"


@op(names=_reduced_names, out_as_dtype=True)
def sum(xp, input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (int, name, or a list of them; all dims when None)."""
    npd = _np_dtype(dtype)
    if npd is None:
        if input.dtype.kind in "bui":
            npd = _dt.int64.np
        elif _lowp(input):
            r = input.sum(axis=_axes(dim, input.ndim), keepdims=keepdim, dtype=_F32)
            r = r.astype(input.dtype)
            return reduced(xp, r, input)
    r = _np_sum(xp, input, _axes(dim, input.ndim), keepdim, npd)  # a hot path
    return reduced(xp, r, input)


@sum.vjp
def _(grad, input_shape, dim, keepdim):
    return _expand_back(grad, input_shape, dim, keepdim)


@op(names=_reduced_names, out_as_dtype=True)
def nansum(xp, input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` treating NaN as zero."""
    npd = _np_dtype(dtype)
    ax = _axes(dim, input.ndim)  # torch checks the dims before the dtype
    _nansum_complex(xp, input, npd)
    if npd is None and input.dtype.kind in "bui":
        npd = _dt.int64.np
    if input.dtype.kind in "bui":
        r = xp.sum(input, axis=ax, keepdims=keepdim, dtype=npd)
    elif npd is None and _lowp(input):
        # (float32 first: numpy's nansum finds no NaN in bfloat16)
        r = xp.nansum(input.astype(_F32), axis=ax, keepdims=keepdim).astype(input.dtype)
    else:
        a = input.astype(_F32) if input.dtype.kind == "V" else input
        r = xp.nansum(a, axis=ax, keepdims=keepdim, dtype=npd)
    return reduced(xp, r, input)


def _nansum_complex(xp, input, npd):
    if xp is np:  # torch's CPU kernel has no complex nansum (its CUDA one does)
        if input.dtype.kind == "c":
            raise RuntimeError("nansum on CPU does not support complex inputs")
        # an integer or bool input sums without a NaN check, into any dtype (complex too)
        # (an empty input runs no kernel)
        if npd is not None and npd.kind == "c" and input.dtype.kind not in "bui" and input.size:
            raise NotImplementedError(
                f"\"nansum_cpu\" not implemented for '{_dt.scalar_name(_dt._FROM_NP[np.dtype(npd)])}'"
            )


@nansum.vjp
def _(grad, input, dim, keepdim):
    a = input._data
    mask = _const((~array_module(a).isnan(a)).astype(a.dtype))
    return _expand_back(grad, a.shape, dim, keepdim) * mask


@op(names=_reduced_names)
def mean(xp, input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim``; floating and complex inputs only (like torch)."""
    npd = _np_dtype(dtype)
    if npd is None and input.dtype.kind not in "fcV":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_tname(input.dtype)}"
        )
    if npd is not None and npd.kind not in "fcV":
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a floating point "
            f"or complex dtype. Got: {_tname(npd)}"
        )
    ax = _axes(dim, input.ndim)
    if not input.size:  # nan, like torch, without numpy's "Mean of empty slice" warning
        s = input.sum(axis=ax, keepdims=keepdim, dtype=npd)
        return s / xp.zeros((), s.dtype) if s.size else s
    n = input.size if ax is None else _count(input.shape, ax)
    if npd is None and _lowp(input):
        r = _np_mean(xp, input, ax, keepdim, _F32, n).astype(input.dtype)
    else:
        r = _np_mean(xp, input, ax, keepdim, npd, n)
    return reduced(xp, r, input)


@mean.vjp
def _(grad, input_shape, dim, keepdim):
    n = _count(input_shape, _axes(dim, len(input_shape)))
    # divide after expanding (torch's order): the gradient comes out a dense row-major tensor
    return _expand_back(grad, input_shape, dim, keepdim) / n


@op(names=_reduced_names)
def nanmean(xp, input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim`` of the non-NaN elements."""
    if input.dtype.kind not in "fcV":
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but "
            f"got {_tname(input.dtype)}"
        )
    npd = _np_dtype(dtype)
    if npd is not None and npd.kind not in "fcV":
        raise RuntimeError(
            "nanmean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {_tname(npd)}"
        )
    ax = _axes(dim, input.ndim)
    _nansum_complex(xp, input, npd)  # torch's nanmean is a nansum
    keepm = ~xp.isnan(input)
    acc = _F32 if npd is None and _lowp(input) else npd
    a = input.astype(_F32) if input.dtype.kind == "V" else input  # (see nansum)
    s = xp.nansum(a, axis=ax, keepdims=keepdim, dtype=acc)
    n = xp.sum(keepm, axis=ax, keepdims=keepdim).astype(s.dtype)  # divide in s's precision
    if acc is _F32 and npd is None:  # torch: nansum (rounded to the half type), then divide
        s = s.astype(input.dtype).astype(_F32)
    r = (s / n).astype(npd or input.dtype, copy=False)
    return reduced(xp, r, input)


@nanmean.vjp
def _(grad, input, dim, keepdim):
    a = input._data
    keepm = ~array_module(a).isnan(a)
    ax = _axes(dim, a.ndim)
    n = keepm.sum(axis=ax, keepdims=True).astype(a.dtype)
    mask = _const(keepm.astype(a.dtype))
    return _expand_back(grad, a.shape, dim, keepdim) * mask / _const(n)


# ---------------------------------------------------------------------- prod
def _prod_names(ins, dim=None, keepdim=False, **kw):
    return _drop(ins[0], dim, keepdim)


@op(names=_prod_names, out_as_dtype=True)
def prod(xp, input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or over one ``dim``."""
    if isinstance(dim, (list, tuple)):
        raise TypeError(
            "prod() received an invalid combination of arguments - got (tuple), but "
            "expected one of:\n * (*, torch.dtype dtype = None)\n * (int dim, bool "
            "keepdim = False, *, torch.dtype dtype = None)\n"
        )
    npd = _np_dtype(dtype)
    if npd is None and input.dtype.kind in "bui":
        npd = _dt.int64.np
    if npd is None and _lowp(input):
        r = input.prod(axis=_axes(dim, input.ndim), keepdims=keepdim, dtype=_F32)
        r = r.astype(input.dtype)
    else:
        r = input.prod(axis=_axes(dim, input.ndim), keepdims=keepdim, dtype=npd)
    return reduced(xp, r, input)


def _prod_others(x, d):
    """For each element of ``x``, the product of the other elements along dim ``d``.

    Built without division (zeros are allowed) as the product over a last axis where the element
    itself is replaced by 1: O(n^2) memory in the size of ``d``, used only when zeros are present.
    """
    a = x._data
    xp = array_module(a)
    last = x.dim() - 1
    xt = x.transpose(d, last) if d != last else x
    n = xt.shape[-1]
    eye = xp.eye(n, dtype=a.dtype)
    # a where, not x * (1 - eye) + eye: an infinite x times the 0 on the diagonal would be NaN
    y = _where_t(_const(eye.astype(bool)), 1.0, xt.unsqueeze(-2).expand(*xt.shape[:-1], n, n))
    others = y.prod(-1)
    return others.transpose(d, last) if d != last else others


@prod.vjp
def _(grad, input, result, dim, keepdim):
    a = input._data
    if a.ndim == 0:
        return grad
    g = _unsqueeze_back(grad, a.shape, dim, keepdim)
    c = a.dtype.kind == "c"  # complex: times conj(d out / d in) (conjugate Wirtinger)
    if not (a == 0).any():
        d = _unsqueeze_back(result, a.shape, dim, keepdim) / input
    elif dim is None:
        d = _prod_others(input.reshape(-1), 0).reshape(a.shape)
    else:
        d = _prod_others(input, _axis1(dim, a.ndim))
    return g * (d.conj() if c else d)


# ---------------------------------------------------------------------- max / min family
def _argext(xp, a, ax, largest):
    return a.argmax(axis=ax, keepdims=True) if largest else a.argmin(axis=ax, keepdims=True)


def _ext(xp, a, ax, keepdim, largest):
    """``a.max``/``a.min`` over ``ax``; on numpy the same ufunc reduce, called directly."""
    if xp is np:
        return (_max_reduce if largest else _min_reduce)(a, ax, None, None, keepdim)
    return a.max(axis=ax, keepdims=keepdim) if largest else a.min(axis=ax, keepdims=keepdim)


def _ext_dim(xp, a, dim, keepdim, largest, name, values=True):
    """Values (None unless ``values``: argmax's call) and int64 indices of the max/min along one
    dim."""
    ax = _axis1(dim, a.ndim)
    if ax is not None and not a.shape[ax]:
        _nonempty(name, a, (ax,))
    if a.dtype.kind == "c":  # checked after the dim, as torch
        raise RuntimeError(f"{name}(): does not support complex input")
    if ax is None:  # a 0-dim tensor
        return a.copy(), xp.zeros((), dtype=np.int64)
    # two method reductions beat a gather (take_along_axis) on the per-call cost; NaN-consistent
    if largest:
        idx = a.argmax(axis=ax, keepdims=keepdim)
    else:
        idx = a.argmin(axis=ax, keepdims=keepdim)
    vals = _ext(xp, a, ax, keepdim, largest) if values else None
    idx = idx.astype(np.int64, copy=False)
    if a.flags.c_contiguous:
        return vals, idx
    return (vals if vals is None else reduced(xp, vals, a)), reduced(xp, idx, a)


def _index_grad(grad, indices, input_shape, dim, keepdim):
    """Gradient of a value-selecting reduction along ``dim``, from its saved index output (what
    torch keeps): the grad goes to the selected index only, zeros elsewhere (a where, not a mask
    product, which would spread a NaN or inf gradient over the unselected elements)."""
    ax = _axis1(dim, len(input_shape))
    if ax is None:
        return grad
    g = _unsqueeze_back(grad, input_shape, dim, keepdim)
    idx = _unsqueeze_back(indices._data, input_shape, dim, keepdim)
    shape = [1] * len(input_shape)
    shape[ax] = input_shape[ax]
    r = array_module(idx).arange(input_shape[ax]).reshape(shape)
    return _where_t(_const(r == idx), g, 0.0)


def _even_grad(grad, input, dim, keepdim, ext, nan_aware=False):
    """Gradient of amax-style reductions: split evenly among the elements equal to the result."""
    a = input._data
    ax = _axes(dim, a.ndim)
    e = ext.reshape(_kept_shape(a.shape, ax)) if not keepdim else ext
    m = a == e
    if nan_aware and a.dtype.kind in "fcV":  # V: bfloat16
        xp = array_module(a)
        m = m | (xp.isnan(a) & xp.isnan(e))
    cnt = m.sum(axis=ax, keepdims=True).astype(a.dtype)
    g = _unsqueeze_back(grad, a.shape, dim, keepdim)
    return g * _const(m.astype(a.dtype) / cnt)


def _ext_names(ins, dim=None, keepdim=False, **kw):
    return _drop(ins[0], dim, keepdim)


def _all_out(red, input, out):
    """max/min of all elements into ``out``: unlike the (values, indices) overloads (one dtype
    only), torch writes any dtype the input's casts to safely."""
    from ..registry import _write_out

    out_dtype = red.op.out_dtype
    if out.dtype is not input.dtype and isinstance(input, Tensor):
        if not _dt.can_cast(input.dtype, out.dtype):
            raise RuntimeError(
                "Expected canCast( typeMetaToScalarType(self.dtype()), "
                "typeMetaToScalarType(out.dtype())) to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)"
            )
        out_dtype = None
    r = red(input)
    return _write_out(SimpleNamespace(name=red.op.name, out_dtype=out_dtype), out, r, (input,))


def _make_ext(name, largest):
    rt = getattr(return_types, name)

    def kernel(xp, input, dim=None, keepdim=False):
        if dim is None:
            _nonempty(name, input, None)
            if input.dtype.kind == "c":
                raise _not_impl(f"{name}_all", input)
            return input.max() if largest else input.min()
        return _ext_dim(xp, input, dim, keepdim, largest, name)

    kernel.__name__ = name
    kernel.__doc__ = (
        f"{name}(input) -> the {name}imum value; {name}(input, dim, keepdim=False) -> "
        f"(values, indices); {name}(input, other) -> {name}imum(input, other)."
    )
    red = op(names=_ext_names, out_type=rt, name=name)(kernel)

    @red.vjp(one_output=("input", "result"))
    def _(grad, input, result, indices, input_shape, dim, keepdim):
        if dim is None:
            return _even_grad(grad, input, None, False, result._data, nan_aware=True)
        return _index_grad(grad, indices, input_shape, dim, keepdim)

    binary = name + "imum"

    def public(input, *args, **kw):
        if not args and not kw and type(input) is Tensor and not _VMAP_SLICES:
            # the common x.max(): no graph, no names, a non-empty real numpy array
            a = input._data
            if (
                not input.requires_grad
                and input._names is None
                and type(a) is np.ndarray
                and a.size
                and a.dtype.kind != "c"
            ):
                return _wrap((_max_reduce if largest else _min_reduce)(a, None))
        if (args and isinstance(args[0], Tensor)) or "other" in kw:
            fn = OPS.get(binary)
            if fn is None:
                raise NotImplementedError(f"{name}(input, other): ember.{binary} is not available")
            other = args[0] if args else kw.pop("other")
            return fn.public(input, other, **kw)
        if not args and kw.keys() == {"out"} and isinstance(kw["out"], Tensor):
            return _all_out(red, input, kw["out"])
        return red(input, *args, **kw)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = kernel.__doc__
    public.op = red.op
    public.vjp = red.op.set_vjp
    red.op.public = public  # ember.max and Tensor.max are the dispatching function
    setattr(Tensor, name, public)
    return public


max = _make_ext("max", True)
min = _make_ext("min", False)


def _make_aext(name, largest):
    def kernel(xp, input, dim=(), keepdim=False):
        if not input.size and dim is not None:
            # torch names amax's first empty dim as given (the other max-likes wrap it), and
            # checks the dims' sizes before repeated dims
            for d in (dim,) if isinstance(dim, int) else dim:
                if input.shape[_axis1(d, input.ndim)] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        ax = _axes(dim, input.ndim)
        _nonempty(name, input, ax)
        if input.dtype.kind == "c" and input.size:
            raise _not_impl(f"{name[1:]}_values_cpu", input)
        r = _ext(xp, input, ax, keepdim, largest)
        return reduced(xp, r, input)

    kernel.__name__ = name
    kernel.__doc__ = (
        f"The {name[1:]}imum over ``dim`` (all dims when empty); the gradient is "
        "split evenly among ties."
    )
    red = op(names=_ext_names, name=name)(kernel)

    @red.vjp
    def _(grad, input, result, dim, keepdim):
        return _even_grad(grad, input, dim, keepdim, result._data)

    return red


amax = _make_aext("amax", True)
amin = _make_aext("amin", False)


def _aext_out(out, res, ins):
    """amax/amin do not cast into out=: its dtype must be the input's."""
    raise RuntimeError(
        "Expected the dtype for input and out to match, but got "
        f"{_dt.scalar_name(res.dtype)} for input's dtype and {_dt.scalar_name(out.dtype)} for "
        "out's dtype."
    )


amax.op.out_dtype = amin.op.out_dtype = _aext_out


def _aminmax_names(ins, *, dim=None, keepdim=False):
    return _drop(ins[0], dim, keepdim)


@op(names=_aminmax_names, out_type=return_types.aminmax, n_diff_out=2)
def aminmax(xp, input, *, dim=None, keepdim=False):
    """(min, max) over ``dim`` (all dims when None)."""
    ax = _axes(dim, input.ndim)
    _nonempty(  # aminmax words its empty-input errors unlike the other max-likes
        "aminmax",
        input,
        ax,
        who="aminmax",
        all_dims="aminmax(): cannot compute aminmax over an empty dimension as the operation has "
        "no identity.",
    )
    if input.dtype.kind == "c":
        raise _not_impl("aminmax_cpu", input)
    lo, hi = xp.amin(input, axis=ax, keepdims=keepdim), xp.amax(input, axis=ax, keepdims=keepdim)
    return reduced(xp, lo, input), reduced(xp, hi, input)


@aminmax.vjp
def _(grad, input, dim, keepdim):
    gmin, gmax = grad
    a = input._data
    ax = _axes(dim, a.ndim)
    return _even_grad(gmin, input, dim, keepdim, a.min(axis=ax, keepdims=keepdim)) + _even_grad(
        gmax, input, dim, keepdim, a.max(axis=ax, keepdims=keepdim)
    )


def _make_arg(name, largest):
    def kernel(xp, input, dim=None, keepdim=False):
        if input.dtype.kind in "cb":
            kind = "complex" if input.dtype.kind == "c" else "bool"
            raise RuntimeError(f"{name}(): does not support {kind} input")
        if dim is None:
            if not input.size:
                raise IndexError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                )
            r = _argext(xp, input.reshape(-1), 0, largest).reshape(())
            if keepdim:
                r = r.reshape((1,) * input.ndim)
            return r.astype(np.int64, copy=False)
        return _ext_dim(xp, input, dim, keepdim, largest, name, False)[1]

    kernel.__name__ = name
    kernel.__doc__ = f"Indices of the {name[3:]}imum (over the flattened input when dim is None)."
    return op(names=_ext_names, name=name)(kernel)


argmax = _make_arg("argmax", True)
argmin = _make_arg("argmin", False)


# ---------------------------------------------------------------------- median / mode
def _median_idx(a, ax):
    """keepdim int64 indices of the lower median along ``ax`` (NaN wins, like torch)."""
    from .sorting import _kth_idx  # the stable sort's k-th position, by selection on the host

    xp = array_module(a)
    idx = _kth_idx(xp, a, (a.shape[ax] - 1) // 2 + 1, ax)
    if a.dtype.kind in "fcV":  # V: bfloat16
        nan = xp.isnan(a)
        has = nan.any(axis=ax, keepdims=True)
        if bool(has.any()):
            idx = xp.where(has, xp.argmax(nan, axis=ax, keepdims=True), idx)
    return idx.astype(np.int64, copy=False)


def _empty_median(xp, input):
    """torch's median of no elements: NaN cast to the input's dtype (what the C++ cast gives:
    True, 0, INT_MIN, ...), not a float NaN."""
    with np.errstate(invalid="ignore"):
        return xp.full((), xp.nan, dtype=np.float32).astype(input.dtype)


@op(names=_reduced_names, out_type=return_types.median)
def median(xp, input, dim=None, keepdim=False):
    """Lower median: of all elements (dim None), or (values, indices) along ``dim``."""
    if dim is None:
        flat = input.reshape(-1)
        if not flat.size:
            return _empty_median(xp, input)
        if input.dtype.kind in "cb":
            raise _not_impl("median_cpu", input)
        return xp.take(flat, _median_idx(flat, 0)).reshape(())
    ax = _axis1(dim, input.ndim)
    if ax is not None:
        _nonempty("median", input, (ax,))
    if input.dtype.kind in "cb":
        raise _not_impl("median_out", input)
    if ax is None:
        return input.copy(), xp.zeros((), dtype=np.int64)
    idx = _median_idx(input, ax)
    vals = xp.take_along_axis(input, idx, axis=ax)
    if not keepdim:
        idx, vals = idx.squeeze(ax), vals.squeeze(ax)
    return reduced(xp, vals, input), reduced(xp, idx, input)


@median.vjp(one_output=("input", "result"))
def _(grad, input, result, indices, input_shape, dim, keepdim):
    if dim is None:
        return _even_grad(grad, input, None, False, result._data, nan_aware=True)
    return _index_grad(grad, indices, input_shape, dim, keepdim)


def _mode_idx(a, ax):
    """keepdim indices of the mode along ``ax``: the smallest most frequent value, last index."""
    xp = array_module(a)
    b = xp.moveaxis(a, ax, -1)
    eq = b[..., :, None] == b[..., None, :]
    # NaN is one value (sorted last, as torch sorts it): without this a NaN mode matched no
    # element and its index was -1
    nan = xp.isnan(b) if a.dtype.kind in "fV" else None  # V: bfloat16
    if nan is not None:
        eq |= nan[..., :, None] & nan[..., None, :]
    cnt = eq.sum(-1)
    best = cnt.max(-1, keepdims=True)
    if a.dtype.kind in "fcV":  # (bfloat16's candidates were masked by True, i.e. 1.0)
        big = np.inf
    else:
        big = np.iinfo(a.dtype).max if a.dtype.kind in "iu" else True
    top = cnt == best
    val = xp.where(top if nan is None else top & ~nan, b, big).min(-1, keepdims=True)
    n = b.shape[-1]
    pos = xp.where(b == val, xp.arange(n), -1).max(-1, keepdims=True)
    if nan is not None:  # only NaN is most frequent: the mode is NaN, at its first index (torch)
        pos = xp.where((top & ~nan).any(-1, keepdims=True), pos, xp.argmax(nan, -1)[..., None])
    return xp.moveaxis(pos, -1, ax).astype(np.int64)


def _mode_names(ins, dim=-1, keepdim=False):
    return _drop(ins[0], dim, keepdim)


@op(names=_mode_names, out_type=return_types.mode)
def mode(xp, input, dim=-1, keepdim=False):
    """(values, indices) of the most frequent value along ``dim``."""
    ax = _axis1(dim, input.ndim)
    if ax is None:
        return input.copy(), xp.zeros((), dtype=np.int64)
    _nonempty("mode", input, (ax,))
    if input.dtype.kind == "c" and input.size:
        raise _not_impl("mode_cpu", input)
    idx = _mode_idx(input, ax)
    vals = xp.take_along_axis(input, idx, axis=ax)
    if not keepdim:
        idx, vals = idx.squeeze(ax), vals.squeeze(ax)
    return reduced(xp, vals, input), reduced(xp, idx, input)


@mode.vjp
def _(grad, indices, input_shape, dim, keepdim):
    return _index_grad(grad, indices, input_shape, dim, keepdim)


# ---------------------------------------------------------------------- std / var
def _var_args(name, dim, unbiased, correction):
    """Resolve torch's overloads: (dim, unbiased, keepdim) | (dim, *, correction) | (unbiased)."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is not None and unbiased is not None:
        raise TypeError(f"{name}(): argument 'correction' can't be given together with 'unbiased'")
    if correction is None:
        correction = 0 if unbiased is False else 1
    elif isinstance(correction, Tensor):  # torch takes a 0-d tensor as the number
        if correction.dim() != 0:
            raise TypeError(f"{name}(): argument 'correction' must be Number, not Tensor")
        correction = correction.item()
    return dim, correction


def _var_names(ins, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim = None
    return _drop(ins[0], dim, keepdim)


# a float32 variance below this may have lost digits: squared deviations under ~1e-19 are
# subnormal or 0 in float32 (a std of 1e-30 came out 0, where torch accumulates in double)
_F32_VAR_FLOOR = 2.0**-100


def _var_kernel(name, xp, input, dim, unbiased, keepdim, correction, root=False):
    if input.dtype.kind not in "fcV":
        who = name if name.endswith("_mean") else "std and var"
        raise RuntimeError(f"{who} only support floating point and complex dtypes")
    dim, c = _var_args(name, dim, unbiased, correction)
    ax = _axes(dim, input.ndim)
    n = _count(input.shape, ax)
    out_dtype = input.dtype
    if _lowp(input):
        input = input.astype(_F32)
    if n - c <= 0 or not input.size:  # torch's factor is numel / output numel: 0 when empty
        import warnings

        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
            "than the reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=4,
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        if n:
            m = _np_mean(xp, input, ax, True, None, n)
        else:  # nan without numpy's "Mean of empty slice" warning
            m = xp.sum(input, axis=ax, keepdims=True) / input.dtype.type(0)
        d = input - m
        if d.dtype.kind == "c":
            sq = d.real * d.real + d.imag * d.imag
        else:
            sq = d * d
        v = _np_sum(xp, sq, ax, keepdim, None) / (n - c if n > c else 0)
        if v.dtype == _F32 and input.dtype.kind != "c" and v.size and _any(xp, v < _F32_VAR_FLOOR):
            # only then (a test on the reduced result): the variance again in float64, its root
            # (std) taken there too, as the float32 rounding of v itself may underflow
            x64 = input.astype(np.float64)
            d = x64 - xp.mean(x64, axis=ax, keepdims=True)
            v = xp.sum(d * d, axis=ax, keepdims=keepdim) / (n - c if n > c else 0)
        if n > 1 and v.size:
            v, m = _constant_rows(xp, input, ax, keepdim, v, m, n)
        if root:
            v = xp.sqrt(v)
    if out_dtype.kind != "c":  # the real dtype of a complex input's variance is sq's
        return v.astype(out_dtype, copy=False), m.astype(out_dtype, copy=False), ax
    return v.astype(sq.dtype, copy=False), m, ax


def _constant_rows(xp, input, ax, keepdim, v, m, n):
    """(var, keepdim mean) with constant rows exact: mean their value, variance 0 (torch's
    Welford gets both; a rounded mean leaves ~(n eps |mean|)^2). Only when some variance is that
    small are the rows compared (a test on the reduced result keeps the common path lean)."""
    a = m if keepdim else m.reshape(v.shape)
    if a.dtype.kind == "c":
        a = xp.abs(a)
    eps = 2.220446049250313e-16 if a.dtype.itemsize == 8 else 1.1920928955078125e-07
    if not _any(xp, v <= a * a * (eps * n) ** 2):
        return v, m
    hi = xp.max(input, axis=ax, keepdims=True)
    const = hi == xp.min(input, axis=ax, keepdims=True)
    return xp.where(const.reshape(v.shape), v.dtype.type(0), v), xp.where(const, hi, m)


@op(names=_var_names)
def var(xp, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default; ``unbiased`` is legacy)."""
    r = _var_kernel("var", xp, input, dim, unbiased, keepdim, correction)[0]
    return reduced(xp, r, input)


@op(names=_var_names)
def std(xp, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation over ``dim`` (see var)."""
    r = _var_kernel("std", xp, input, dim, unbiased, keepdim, correction, root=True)[0]
    return reduced(xp, r, input)


def _var_grad(grad, input, dim, unbiased, keepdim, correction, std_result=None):
    """d var / d x = 2 (x - mean) / (n - c); d std = that / (2 std) (0 where std is 0)."""
    dim, c = _var_args("var", dim, unbiased, correction)
    shape = input._data.shape
    ax = _axes(dim, len(shape))
    n = _count(shape, ax)
    g = _unsqueeze_back(grad, shape, dim, keepdim)
    centered = input - input.mean(ax if ax is None else list(ax), keepdim=True)
    if dim is None and n <= c:
        # torch's full reduction without degrees of freedom: 2 / 0 times the deviation, taken
        # as inf (whatever its sign) and NaN where it is 0; std's grad / (2 std) is 0 or NaN
        # there, so its gradient is NaN throughout
        d = _where_t(centered == 0, math.nan, math.inf)
        return g * d if std_result is None else g / (std_result * 2) * d
    if std_result is None:
        return g * centered * (2.0 / (n - c) if n != c else math.inf)
    s = _unsqueeze_back(std_result, shape, dim, keepdim)
    z = s._data == 0
    if z.any():  # torch's convention: no gradient where the std is 0
        s = s + _const(z.astype(s._data.dtype))
        g = g * _const((~z).astype(s._data.dtype))
    return g * centered / (s * (n - c))


@var.vjp
def _(grad, input, dim, unbiased, keepdim, correction):
    return _var_grad(grad, input, dim, unbiased, keepdim, correction)


@std.vjp
def _(grad, input, result, dim, unbiased, keepdim, correction):
    return _var_grad(grad, input, dim, unbiased, keepdim, correction, result)


@op(names=_var_names, n_diff_out=2)
def var_mean(xp, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over ``dim`` in one pass."""
    v, m, _ = _var_kernel("var_mean", xp, input, dim, unbiased, keepdim, correction)
    if not keepdim:
        m = m.reshape(v.shape)
    return reduced(xp, v, input), reduced(xp, m, input)


@op(names=_var_names, n_diff_out=2)
def std_mean(xp, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over ``dim`` in one pass."""
    v, m, _ = _var_kernel("std_mean", xp, input, dim, unbiased, keepdim, correction, root=True)
    if not keepdim:
        m = m.reshape(v.shape)
    return reduced(xp, v, input), reduced(xp, m, input)


def _mean_part(gm, input, dim, unbiased, keepdim):
    if isinstance(dim, bool):
        dim = None
    shape = input._data.shape
    n = _count(shape, _axes(dim, len(shape)))
    return _expand_back(gm / n, shape, dim, keepdim)


def _var_mean_grad(grad, input, dim, unbiased, keepdim, correction, std_result=None):
    """An unused output's gradient is None (none_grads): a zero-filled one would meet the inf
    of a var without degrees of freedom and turn the mean's gradient NaN (torch skips it)."""
    gv, gm = grad
    if gv is None:
        return _mean_part(gm, input, dim, unbiased, keepdim)
    gv = _var_grad(gv, input, dim, unbiased, keepdim, correction, std_result)
    return gv if gm is None else gv + _mean_part(gm, input, dim, unbiased, keepdim)


@var_mean.vjp(none_grads=True)
def _(grad, input, dim, unbiased, keepdim, correction):
    return _var_mean_grad(grad, input, dim, unbiased, keepdim, correction)


@std_mean.vjp(none_grads=True)
def _(grad, input, result, dim, unbiased, keepdim, correction):
    return _var_mean_grad(grad, input, dim, unbiased, keepdim, correction, result)


# ---------------------------------------------------------------------- logsumexp / norm
@op(names=_reduced_names, floating=True)
def logsumexp(xp, input, dim=None, keepdim=False):
    """log(sum(exp(input))) over ``dim``, computed stably (the max is taken out first)."""
    if dim is None:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    ax = _axes(dim, input.ndim)
    out_dtype = input.dtype
    if _lowp(input):  # the sum of exponentials in float32 (see _lowp)
        input = input.astype(_F32)
    if input.size:
        # complex: shift by the largest real part only (a complex max would add its angle
        # outside the log; torch's imaginary part is the principal one)
        m = xp.amax(input.real if input.dtype.kind == "c" else input, axis=ax, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0).astype(input.dtype, copy=False)
    else:
        m = xp.zeros(_kept_shape(input.shape, ax), dtype=input.dtype)
    with np.errstate(divide="ignore"):
        r = xp.log(xp.sum(xp.exp(input - m), axis=ax, keepdims=True)) + m
    r = r.astype(out_dtype, copy=False)
    if not keepdim:
        r = r.reshape([s for i, s in enumerate(r.shape) if not (ax is None or i in ax)])
    return reduced(xp, r, input)


def _logsumexp_out(out, res, ins):
    # torch refuses an integer or bool out= before any cast
    if out.dtype.category < _dt.FLOAT:
        raise RuntimeError(
            "logsumexp(): Expected floating point type for result tensor, but got: "
            f"{_dt.scalar_name(out.dtype)}"
        )


logsumexp.op.out_dtype = _logsumexp_out


@logsumexp.vjp
def _(grad, input, result, dim, keepdim):
    shape = input._data.shape
    g = _unsqueeze_back(grad, shape, dim, keepdim)
    d = _exp(input - _unsqueeze_back(result, shape, dim, keepdim))
    return g * (d.conj() if d._data.dtype.kind == "c" else d)


def _norm_names(ins, p="fro", dim=None, keepdim=False, dtype=None):
    return _drop(ins[0], dim, keepdim)


def _norm_p(p):
    if p is None:  # torch.norm's default spelled out: the 2-norm (Frobenius over two dims)
        return 2.0
    if isinstance(p, str):
        if p == "fro":
            return 2.0
        if p == "nuc":
            return p
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if not isinstance(p, (int, float)):
        if isinstance(p, complex):  # torch's parser takes it (a Number); its kernel does not
            raise RuntimeError(  # noqa: TRY004 - torch's type
                "linalg.vector_norm: Expected a non-complex scalar as the order of norm."
            )
        raise TypeError(
            f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
            f"{type(p).__name__}"
        )
    return float(p)


def _norm_dim_error(opts: tuple, kw: dict) -> TypeError | None:
    """torch's error for a norm's dim that is neither an int nor a name (failure path; the
    registry's dim_error hook): Tensor.norm takes the length of a 'fro' norm's dim that is no
    int, then hands the dim to linalg.vector_norm as its third argument (an int, a bool too,
    wrapped in a list). None for the nuclear norm (linalg.matrix_norm's errors: not matched)."""
    from ..arg_errors import as_int, int_list_error, type_name

    p = opts[0] if opts else kw.get("p", "fro")
    dim = opts[1] if len(opts) > 1 else kw.get("dim")
    if isinstance(p, str) and p == "nuc":
        return None
    if p == "fro" and not isinstance(dim, (int, tuple, list, str)):
        return TypeError(f"object of type '{type_name(dim)}' has no len()")
    v = [dim] if isinstance(dim, int) else dim
    i = None
    if isinstance(v, (tuple, list)):
        i = next((k for k, x in enumerate(v) if as_int(x, k == 0) is None), None)
        if i is None:
            return None
    many = p == "fro" and isinstance(v, (tuple, list)) and len(v) > 2  # (see _norm_kernel)
    return int_list_error(f"linalg_{'matrix' if many else 'vector'}_norm", "dim", 3, v, i)


def _check_norm_dtype(name, src, dst) -> None:
    """torch's checks of a norm's ``dtype=`` (numpy dtypes): a floating or complex type of the
    input's kind that the input's type converts to without narrowing."""
    if dst.kind not in "fcV":
        raise RuntimeError(
            f"{name}: dtype should be floating point or complex, but got {_tname(dst)}"
        )
    if (src.kind == "c") != (dst.kind == "c"):
        kind = "complex for complex" if src.kind == "c" else "real for real"
        raise RuntimeError(f"{name}: dtype should be {kind} inputs, but got {_tname(dst)}")
    if dst.itemsize < src.itemsize or (dst.itemsize == src.itemsize == 2 and dst != src):
        raise RuntimeError(
            f"{name}: the dtype of the input ({_tname(src)}) should be convertible without "
            f"narrowing to the specified dtype ({_tname(dst)})"
        )


@op(names=_norm_names)
def norm(xp, input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over ``dim`` (all elements when None); p may be 'fro', inf, -inf, 0."""
    r = _norm_kernel(xp, input, p, dim, keepdim, dtype)
    return reduced(xp, r, input)


norm.op.dim_error = _norm_dim_error


def _norm_kernel(xp, input, p, dim, keepdim, dtype):
    # torch's Tensor.norm runs a 'fro' norm over more than two dims as linalg.matrix_norm,
    # which refuses them (after its input's dtype and rank checks)
    fro_many = dim is not None and type(dim) is not int and p == "fro" and len(dim) > 2
    if input.dtype.kind not in "fcV":
        raise RuntimeError(
            f"linalg.{'matrix' if p == 'nuc' or fro_many else 'vector'}_norm: Expected a "
            f"floating point or complex tensor as input. Got {_tname(input.dtype)}"
        )
    if fro_many:
        _nuc_dims(input.ndim, dim)  # (raises)
    pv = _norm_p(p)
    npd = _np_dtype(dtype)
    if npd is not None:
        _check_norm_dtype(f"linalg.{'matrix' if p == 'nuc' else 'vector'}_norm", input.dtype, npd)
        input = input.astype(npd, copy=False)
    elif pv == "nuc" and _lowp(input):  # torch's svd has no half-precision version
        raise RuntimeError(
            f"linalg.matrix_norm: Low precision dtypes not supported. Got {_tname(input.dtype)}"
        )
    elif _lowp(input):  # torch accumulates half types in float32 (no overflow of sum |x|^p)
        return _norm_kernel(xp, input.astype(_F32), p, dim, keepdim, None).astype(input.dtype)
    if pv == "nuc":
        return _nuc_kernel(xp, input, dim, keepdim)
    ax = _axes(dim, input.ndim)
    a = xp.abs(input)
    if pv != 0.0 and a.size and _one_each(a.shape, ax):
        # one element per norm: it is |x| (torch's), not (|x|^p)^(1/p), which over- or
        # underflows (a 1e20 float32 gave inf); a shape test, no element work
        return xp.sum(a, axis=ax, keepdims=keepdim)
    if pv == 2.0:
        a *= a  # (a is abs's fresh array)
        return xp.sqrt(_np_sum(xp, a, ax, keepdim, None))
    if pv == 1.0:
        return _np_sum(xp, a, ax, keepdim, None)
    if (pv < 0 or pv == math.inf) and not a.size:
        _no_identity_norm(pv, a.shape, dim)
    if pv == math.inf:
        return xp.amax(a, axis=ax, keepdims=keepdim)
    if pv == -math.inf:
        return xp.amin(a, axis=ax, keepdims=keepdim)
    if pv == 0.0:
        return xp.sum(a != 0, axis=ax, keepdims=keepdim).astype(a.dtype)
    with np.errstate(divide="ignore"):
        return xp.sum(a**pv, axis=ax, keepdims=keepdim) ** (1.0 / pv)


def _one_each(shape, ax) -> bool:
    """Whether a reduction over axes ``ax`` (all when None) sums one element per result."""
    if ax is None:
        return math.prod(shape) == 1
    return builtins.all(shape[d] == 1 for d in ((ax,) if type(ax) is int else ax))


def _nuc_dims(ndim, dim):
    """torch.norm(p='nuc') is linalg.matrix_norm: exactly two distinct dims (all, when None)."""
    name = "linalg.matrix_norm"
    dims = tuple(range(ndim)) if dim is None else ((dim,) if type(dim) is int else tuple(dim))
    if ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if len(dims) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = (d % ndim for d in dims)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({d0}, {d1})")
    return d0, d1


def _nuc_kernel(xp, a, dim, keepdim):
    """The nuclear norm (sum of singular values) over two dims."""
    d0, d1 = _nuc_dims(a.ndim, dim)
    m = xp.moveaxis(a, (d0, d1), (-2, -1))
    r = xp.linalg.svd(m, compute_uv=False).sum(-1)
    if keepdim:
        r = xp.expand_dims(r, tuple(sorted((d0, d1))))
    return r.astype(a.real.dtype, copy=False)


def _no_identity_norm(pv, shape, dim):
    """torch's error for an inf- or negative-order norm over an empty reduction (no identity):
    the first empty dim of ``dim``, named as given."""
    dims = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {pv:g} norm on an empty tensor because the "
            "operation does not have an identity"
        )
    for d in dims:
        if shape[d] == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {pv:g} norm on the dimension {d}"
                "because this dimension is empty and the operation does not have an identity"
            )


@norm.vjp
def _(grad, input, result, p, dim, keepdim, dtype):
    pv = _norm_p(p)
    a = input._data
    shape = a.shape
    if dtype is not None:
        input = input.to(dtype)
        a = input._data
    if pv == "nuc":  # d sum(s) / dA = U V^H
        from ...linalg import svd

        d0, d1 = _nuc_dims(len(shape), dim)
        g = grad
        if keepdim:
            lo, hi = sorted((d0, d1))  # (max/min are this module's ops)
            g = g.squeeze(hi).squeeze(lo)
        U, _, Vh = svd(input.movedim((d0, d1), (-2, -1)), full_matrices=False)
        return (g.unsqueeze(-1).unsqueeze(-1) * (U @ Vh)).movedim((-2, -1), (d0, d1))
    g = _unsqueeze_back(grad, shape, dim, keepdim)
    if pv == 0.0:  # a count: torch leaves its gradient undefined (the input reads as unused)
        return None
    xp = array_module(a)
    sg = xp.sign(a)
    if a.dtype.kind != "c":  # torch's sgn is 0 at NaN (numpy's sign: NaN)
        sg = xp.where(xp.isnan(sg), 0, sg).astype(a.dtype, copy=False)
    sgn = _const(sg)
    # p = 1 and inf: torch's derivative multiplies by sgn(input), a function of the input with a
    # zero derivative, so under create_graph it stays connected to the input (_tie)
    if pv == 1.0:
        return _tie(g * sgn, input, "MulBackward0")
    r = _unsqueeze_back(result, shape, dim, keepdim)
    if math.isinf(pv):
        m = xp.abs(a) == r._data
        cnt = xp.maximum(m.sum(axis=_axes(dim, len(shape)), keepdims=True), 1).astype(a.dtype)
        # spread evenly over the ties; a NaN norm matches no element and torch's gradient is 0
        # there (not 0 / 0, nor sgn(NaN) * 0)
        w = xp.where(m, sgn._data / cnt, 0).astype(a.dtype, copy=False)
        return _tie(g * _const(w), input, "MulBackward0")
    z = r._data == 0
    if z.any():  # torch's convention: a zero norm has a zero gradient
        r = r + _const(z.astype(r._data.dtype))
        g = g * _const((~z).astype(r._data.dtype))
    if pv == 2.0:  # x / r first: g * x overflows near max and loses digits in subnormals
        return g * (input / r)
    absx = input * (sgn.conj() if a.dtype.kind == "c" else sgn)  # |x|, kept in the graph
    if pv < 1.0:  # |x|^(p-1) is infinite at 0: torch gives zeros there
        zx = a == 0
        if zx.any():
            absx = absx + _const(zx.astype(a.dtype))
    return g * sgn * absx ** (pv - 1) / r ** (pv - 1)


# ---------------------------------------------------------------------- all / any / count_nonzero
def _logical_names(ins, dim=None, keepdim=False):
    if dim is not None and type(dim) is not int and not len(dim):
        return ins[0]._names
    return _drop(ins[0], dim, keepdim)


def _make_logical(name):
    def kernel(xp, input, dim=None, keepdim=False):
        if dim is not None and type(dim) is not int and not len(dim):  # torch: no dims, no-op
            r = input.astype(bool)
            return r.astype(np.uint8) if input.dtype == np.uint8 else r
        ax = _axes(dim, input.ndim)
        r = (
            input.all(axis=ax, keepdims=keepdim)
            if name == "all"
            else input.any(axis=ax, keepdims=keepdim)
        )
        r = reduced(xp, r, input)
        return r.astype(np.uint8) if input.dtype == np.uint8 else r

    kernel.__name__ = name
    kernel.__doc__ = (
        f"Whether {name} elements are true over ``dim`` (bool; uint8 for uint8 input, like torch)."
    )
    return op(names=_logical_names, name=name)(kernel)


all = _make_logical("all")
any = _make_logical("any")


def _cnz_names(ins, dim=None):
    return _drop(ins[0], dim, False)


@op(names=_cnz_names)
def count_nonzero(xp, input, dim=None):
    """The number of non-zero elements over ``dim`` (int64)."""
    r = xp.sum(input != 0, axis=_axes(dim, input.ndim), dtype=np.int64)
    return reduced(xp, r, input)


# ---------------------------------------------------------------------- cumsum / cumprod
def _scan(xp, f, input, dim, dtype, name):
    if dim is None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    npd = _np_dtype(dtype)
    if npd is None and input.dtype.kind in "bui":
        npd = _dt.int64.np
    ax = _axis1(dim, input.ndim)
    if ax is None:
        return input.astype(npd or input.dtype)  # a 0-dim tensor: a copy
    if npd == np.bool_:  # torch's scan kernels have no bool version
        if input.size:
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
        return input.astype(npd)
    if npd is not None and npd != input.dtype:
        input = input.astype(npd)  # torch casts first, then scans in that dtype (as below)
    acc = _F32 if _lowp(input) else _SCAN_ACC.get(input.dtype.char)
    if xp is np:  # the ufunc's accumulate, as np.cumsum/cumprod call it, without their wrapper
        f = _ACCUMULATE.get(f, f)
    if acc is not None:  # torch's CPU scans accumulate float32 in double (no running drift)
        r = f(input, axis=ax, dtype=acc).astype(input.dtype)
    else:
        # numpy scans integers narrower than int64 in int64 (uint64 for unsigned); torch keeps
        # (and wraps in) the dtype it scans in
        r = f(input, axis=ax, dtype=input.dtype)
    return row_major(xp, r) if input.ndim > 1 else r


_ACCUMULATE = {np.cumsum: np.add.accumulate, np.cumprod: np.multiply.accumulate}
_SCAN_ACC = {"f": np.float64, "F": np.complex128}  # float32, complex64 -> the double accumulator


@op(names=keep, inplace="cumsum_", out_as_dtype=True)
def cumsum(xp, input, dim=None, *, dtype=None):
    """Cumulative sum along ``dim``."""
    return _scan(xp, xp.cumsum, input, dim, dtype, "cumsum")


@op(names=keep, method=False)
def _rev_cumsum(xp, input, dim=0):
    """sum_{k >= i} input_k along ``dim`` (cumsum's adjoint)."""
    acc = _SCAN_ACC.get(input.dtype.char)
    r = xp.cumsum(xp.flip(input, dim), axis=dim, dtype=acc)
    return xp.flip(r if acc is None else r.astype(input.dtype), dim)


@_rev_cumsum.vjp
def _(grad, dim):
    return grad.cumsum(dim)


@cumsum.vjp
def _(grad, input_shape, dim):
    if not input_shape:
        return grad
    return _rev_cumsum(grad, _axis1(dim, len(input_shape)))


@op(names=keep, inplace="cumprod_", out_as_dtype=True)
def cumprod(xp, input, dim=None, *, dtype=None):
    """Cumulative product along ``dim``."""
    return _scan(xp, xp.cumprod, input, dim, dtype, "cumprod")


@cumprod.vjp
def _(grad, input, result, dim):
    a = input._data
    if a.ndim == 0:
        return grad
    d = _axis1(dim, a.ndim)
    if a.dtype.kind == "c":  # complex: conj(d out / d in) (conjugate Wirtinger)
        input, result = input.conj(), result.conj()
    if not (a == 0).any():
        return _rev_cumsum(grad * result, d) / input
    # zeros: grad_i = sum_{k >= i} g_k prod_{j <= k, j != i} x_j, via an (i, k) table (O(n^2))
    xp = array_module(a)
    last = a.ndim - 1
    xt = input.transpose(d, last) if d != last else input
    gt = grad.transpose(d, last) if d != last else grad
    n = a.shape[d]
    eye = xp.eye(n, dtype=a.dtype)
    y = xt.unsqueeze(-2).expand(*xt.shape[:-1], n, n) * _const(1 - eye) + _const(eye)
    table = y.cumprod(-1) * _const(xp.triu(xp.ones((n, n), dtype=a.dtype)))
    gi = (gt.unsqueeze(-2) * table).sum(-1)
    return gi.transpose(d, last) if d != last else gi


# ---------------------------------------------------------------------- sum_to_size
def _sum_to_size_names(ins, *size):
    """Summed-away leading dims drop their names; the kept dims keep theirs."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    names = ins[0]._names
    return remove_dims(names, range(len(names) - len(size)))


@op(names=_sum_to_size_names)
def sum_to_size(xp, input, *size):
    """Sum ``input`` down to ``size`` (the shape it was broadcast from)."""
    given = size
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if not builtins.all(type(s) is int for s in size):  # torch's parser (a float is no size)
        size = int_varargs("sum_to_size", "size", given)
    lead = input.ndim - len(size)
    if lead < 0:
        raise RuntimeError(
            f"size {{{list(size)}}} is not expandable to size {{{list(input.shape)}}}."
        )
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(size) if s == 1 and input.shape[lead + i] != 1
    )
    if not axes:
        out = input
    elif _lowp(input):  # a half gradient reduced in float32, as torch's sum (see _lowp)
        out = xp.sum(input, axis=axes, keepdims=True, dtype=_F32).astype(input.dtype)
    else:
        out = xp.sum(input, axis=axes, keepdims=True)
    return out.reshape(size) if lead else out


@sum_to_size.vjp
def _(grad, input_shape):
    return grad.expand(input_shape)


# torch sums with keepdim (SumBackward1), then views away the summed leading dims
sum_to_size.op.name_rule = lambda node: (
    "ViewBackward0" if len(node.meta[0][0]) < len(node.saved_arg("input_shape")) else "SumBackward1"
)


# ---------------------------------------------------------------------- logcumsumexp
def _float_only(name, a):
    if a.dtype.kind not in "fcV":
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for '{_tname(a.dtype)}'")


def _accumulate(xp, name, a, ax):
    """``xp.<name>.accumulate(a, axis=ax)`` for an associative ufunc; a log-step (Hillis-Steele)
    scan where the array module has no ufunc.accumulate (cupy)."""
    f = getattr(xp, name)
    if xp is np or hasattr(f, "accumulate"):
        try:
            return f.accumulate(a, axis=ax)
        except (NotImplementedError, TypeError):
            pass
    out = xp.moveaxis(a, ax, -1).copy()
    n, k = out.shape[-1], 1
    while k < n:
        out[..., k:] = f(out[..., k:], out[..., :-k])  # the right side is computed first
        k *= 2
    return xp.moveaxis(out, -1, ax)


@op(names=keep)
def logcumsumexp(xp, input, dim=None):
    """log(cumsum(exp(input))) along ``dim``, computed stably (a running logaddexp)."""
    if dim is None:
        raise TypeError('logcumsumexp() missing 1 required positional arguments: "dim"')
    ax = _axis1(dim, input.ndim)  # torch checks the dim first
    _float_only("logcumsumexp", input)
    if ax is None:
        return input.copy()
    if input.dtype.kind == "V" or input.dtype.itemsize == 2:  # numpy: no half accumulate
        r = _accumulate(xp, "logaddexp", input.astype(np.float32), ax).astype(input.dtype)
    elif input.dtype.kind == "c":  # numpy's logaddexp has no complex loop: a running one here
        r = _complex_logcumsumexp(xp, input, ax)
    else:
        r = _accumulate(xp, "logaddexp", input, ax)
    return row_major(xp, r) if input.ndim > 1 else r  # a scan: see row_major


def _logcumsumexp_out(out, res, ins):
    # torch's kernel writes straight into out=, which must have the input's dtype
    raise RuntimeError(
        f"expected scalar_type {_dt.scalar_name(res.dtype)} but found {_dt.scalar_name(out.dtype)}"
    )


logcumsumexp.op.out_dtype = _logcumsumexp_out


def _complex_logcumsumexp(xp, a, ax):
    """r_k = logaddexp(a_k, r_{k-1}) from r_{-1} = -inf+0j, each step as torch's (see
    _complex_logaddexp: the imaginary parts add up unwrapped)."""
    x = xp.moveaxis(a, ax, 0)
    out = xp.empty_like(x)
    acc = xp.full(x.shape[1:], complex(-math.inf, 0.0), x.dtype)
    for k in range(x.shape[0]):
        acc = _complex_logaddexp(xp, x[k], acc)
        out[k] = acc
    return xp.moveaxis(out, 0, ax)


def _rev_lcse(x, d):
    return x.flip(d).logcumsumexp(d).flip(d)


@logcumsumexp.vjp
def _(grad, input, result, dim):
    # d r_k / d x_i = exp(x_i - r_k) for k >= i: split grad by sign so every term is a stable
    # (reversed) logcumsumexp; the floor stands in for log(0) and keeps double backward finite
    if input.ndim == 0:
        return grad
    d = _axis1(dim, input.ndim)
    a = input._data
    if a.dtype.kind == "c":
        # holomorphic: the gradient is sum_{k >= i} g_k conj(exp(x_i - r_k)), summed in log
        # space as exp(conj(x_i) + revlcse(log g - conj r)_i) (a zero g_k is log 0 = -inf)
        return (_rev_lcse(grad.log() - result.conj(), d) + input.conj()).exp()
    fi = np.finfo(a.dtype) if a.dtype.kind == "f" else np.finfo(np.float32)
    floor, tiny = float(fi.min) / 4, float(fi.tiny)
    la = grad.abs().clamp_min(tiny).log()
    lp = _where_t(grad > 0, la, floor)
    ln = _where_t(grad < 0, la, floor)
    return (_rev_lcse(lp - result, d) + input).exp() - (_rev_lcse(ln - result, d) + input).exp()


def _where_t(cond, x, y):
    return OPS["_where"].public(cond, x, y)


# ---------------------------------------------------------------------- cummax / cummin
def _cum_idx(xp, a, vals, ax):
    """Indices of the running max/min: the latest position holding it (NaN sticks, like torch)."""
    shape = [1] * a.ndim
    shape[ax] = a.shape[ax]
    pos = xp.arange(a.shape[ax]).reshape(shape)
    hit = a == vals
    if a.dtype.kind in "fcV":  # V: bfloat16
        hit = hit | xp.isnan(a)
    return _accumulate(xp, "maximum", xp.where(hit, pos, 0), ax).astype(np.int64)


def _make_cum(name, largest):
    ufunc = "maximum" if largest else "minimum"

    def kernel(xp, input, dim=None):
        if dim is None:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        if not input.size:  # torch returns an empty input before checking dim or dtype
            return input.copy(), xp.zeros(input.shape, dtype=np.int64)
        if input.ndim == 0 and int_dim(dim) not in (0, -1):
            raise IndexError(
                f"{name}(): Expected reduction dim -1 or 0 for scalar but got {int_dim(dim)}"
            )
        ax = _axis1(dim, input.ndim)
        if ax is None:
            return input.copy(), xp.zeros((), dtype=np.int64)
        if input.dtype.kind == "c":
            raise _not_impl(f"{name}_cpu", input)
        a = input.astype(np.float32) if input.dtype.kind == "V" else input
        vals = _accumulate(xp, ufunc, a, ax)
        idx = _cum_idx(xp, a, vals, ax)
        vals = vals.astype(input.dtype, copy=False)
        if input.ndim > 1:  # a scan: see row_major
            return row_major(xp, vals), row_major(xp, idx)
        return vals, idx

    kernel.__name__ = name
    kernel.__doc__ = f"(values, indices) of the running {name[3:]}imum along ``dim``."
    cum = op(names=keep, out_type=getattr(return_types, name), name=name)(kernel)

    @cum.vjp
    def _(grad, input, dim):
        a = input._data
        ax = _axis1(dim, a.ndim)
        if ax is None or not a.size:
            return grad
        xp = array_module(a)
        b = a.astype(np.float32) if a.dtype.kind == "V" else a
        idx = _cum_idx(xp, b, _accumulate(xp, ufunc, b, ax), ax)
        return grad.new_zeros(a.shape).scatter_add(ax, _const(idx), grad)

    return cum


cummax = _make_cum("cummax", True)
cummin = _make_cum("cummin", False)


# ---------------------------------------------------------------------- out= dtypes
# torch's kernels of these ops refuse an out= tensor of another dtype (no cast), in their words
def _index_out(res, ins) -> bool:
    """Whether ``res`` is the indices of a (values, indices) op (int64 for a non-int64 input)."""
    return res.dtype is _dt.int64 and ins[0].dtype is not _dt.int64


def _median_out(out, res, ins):
    if _index_out(res, ins):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
            f"{_dt.cpu_type_name(out.dtype)} instead (while checking arguments for median)"
        )
    got, want = _dt.cpu_type_name(out.dtype), _dt.cpu_type_name(res.dtype)
    raise RuntimeError(
        "Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; "
        f"but type {got} does not equal {want} (while checking arguments for median)"
    )


def _mode_out(out, res, ins):
    what = "indices" if _index_out(res, ins) else "values"
    raise RuntimeError(
        f"expected scalar type '{_dt.scalar_name(res.dtype)}' but got "
        f"'{_dt.scalar_name(out.dtype)}' for {what} output"
    )


def _cum_ext_out(out, res, ins):
    raise RuntimeError(
        f"expected scalar_type {_dt.scalar_name(res.dtype)} but found {_dt.scalar_name(out.dtype)}"
    )


def _logical_out(name):
    def check(out, res, ins):
        if out.dtype is not _dt.bool_ and out.dtype is not _dt.uint8:
            raise RuntimeError(
                f"{name} only supports bool tensor for result, got: {_dt.scalar_name(out.dtype)}"
            )

    return check


def _scan_out(name):
    def check(out, res, ins):
        if out.dtype is _dt.bool_ and res._data.size:  # the scan runs in out's dtype: none for bool
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")

    return check


cumsum.op.out_dtype = _scan_out("cumsum")
cumprod.op.out_dtype = _scan_out("cumprod")
# cumsum_/cumprod_ scan in self's dtype (their out= kernel into self): none for bool
cumsum.op.inplace_is_out = cumprod.op.inplace_is_out = True
for _f in (max, min, argmax, argmin, aminmax, norm):
    _f.op.out_dtype = _exact
median.op.out_dtype = _median_out
median.op.indices_checked_first = True
mode.op.out_dtype = _mode_out
cummax.op.out_dtype = cummin.op.out_dtype = _cum_ext_out
all.op.out_dtype = _logical_out("all")
any.op.out_dtype = _logical_out("any")


# torch computes Tensor.norm with linalg.vector_norm (its grad_fn's name), p='nuc' as a sum of
# singular values
norm.op.backward_name = "LinalgVectorNormBackward0"
norm.op.name_rule = lambda node: (
    "SumBackward1" if node.saved_arg("p") == "nuc" else "LinalgVectorNormBackward0"
)
# torch's nanmean is composite: nansum divided by the count of non-NaN elements
nanmean.op.backward_name = "DivBackward0"


def _by_dim(without: str, with_dim: str):
    """A grad_fn name rule: torch's overload without a dim (sum()) or with one (sum(dim))."""
    return lambda node: without if node.saved_arg("dim") is None else with_dim


for _f in (sum, mean, prod, median):
    _f.op.name_rule = _by_dim(_f.op.backward_name, _f.op.backward_name[:-1] + "1")
for _f in (max, min):  # max() is torch's MaxBackward1, max(dim) its MaxBackward0
    _f.op.name_rule = _by_dim(_f.op.backward_name[:-1] + "1", _f.op.backward_name)


# an input that is no Tensor matches none of torch's overloads: its "invalid combination" error
all.op.overloads = any.op.overloads = (
    "(Tensor input, *, Tensor out = None)",
    "(Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)",
    "(Tensor input, int dim, bool keepdim = False, *, Tensor out = None)",
)
std.op.overloads = var.op.overloads = (
    (
        "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, "
        "Tensor out = None)"
    ),
    (
        "(Tensor input, tuple of ints dim = None, *, Number correction = None, "
        "bool keepdim = False, Tensor out = None)"
    ),
    "(Tensor input, bool unbiased = True)",
)
std_mean.op.overloads = var_mean.op.overloads = (
    "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False)",
    "(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
    "(Tensor input, bool unbiased = True)",
)

# ops torch overloads on their dim: a dim of the wrong type (a float) matches none of them, and
# torch lists them all (the registry's error path reads these)
all.op.dim_overloads = any.op.dim_overloads = all.op.overloads
std.op.dim_overloads = var.op.dim_overloads = std.op.overloads
std_mean.op.dim_overloads = var_mean.op.dim_overloads = std_mean.op.overloads
_NO_DIM_SIG = "(Tensor input, *, torch.dtype dtype = None)"
_DIM_SIG = " dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)"
sum.op.dim_overloads = (_NO_DIM_SIG, "(Tensor input, tuple of ints" + _DIM_SIG)
mean.op.dim_overloads = (
    "(Tensor input, *, torch.dtype dtype = None, Tensor out = None)",
    "(Tensor input, tuple of ints" + _DIM_SIG,
)
prod.op.dim_overloads = (_NO_DIM_SIG, "(Tensor input, int" + _DIM_SIG)
max.op.dim_overloads = min.op.dim_overloads = (
    "(Tensor input, *, Tensor out = None)",
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
)
count_nonzero.op.dim_overloads = (
    "(Tensor input, int dim = None)",
    "(Tensor input, tuple of ints dim)",
)

# the dims torch parses as a tuple of ints (its type error says so)
for _f in (logsumexp, amax, amin, nansum, nanmean):
    _f.op.int_args = {"dim": "tuple of ints"}
