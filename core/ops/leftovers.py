"""The rest of the torch namespace's ops: range, frombuffer, from_file, geqrf, ormqr.

``frombuffer`` and ``from_file(shared=True)`` share memory with the buffer / the file (numpy views
and ``numpy.memmap``), like torch. ``geqrf`` / ``ormqr`` call LAPACK through scipy on cpu.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

from ...autograd.grad_mode import is_grad_enabled as _grad_enabled
from .. import dtype as _dt
from ..autocast import entry as _autocast_entry
from ..registry import op
from ..return_types import _return_type
from ..tensor import Tensor
from .creation import (
    _check_out_dtype,
    _dev,
    _finish,
    _no_range_kernel,
    _np_dtype,
    _num,
    _on,
    _real_bound,
    _rg_arg,
)
from .creation import eye as _eye
from .decompositions import _rule

__all__ = ["from_file", "frombuffer", "geqrf", "ormqr", "range"]

_pyrange = range
_geqrf_t = _return_type("geqrf", ("a", "tau"))

_RANGE_MSG = (
    "torch.range is deprecated and will be removed in a future release because its behavior is "
    "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
    "in [start, end)."
)


def range(
    start=0,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """Deprecated: values from ``start`` to ``end`` INCLUSIVE by ``step`` (default float dtype)."""
    if requires_grad is not False and requires_grad is not True:
        _rg_arg("range", requires_grad, none=False)  # the binding's error comes before the warning
    warnings.warn(_RANGE_MSG, UserWarning, stacklevel=2)
    _check_out_dtype(dtype, out)
    if end is None:  # torch's range has no one-argument form
        raise TypeError('range() missing 1 required positional arguments: "end"')
    start, end, step = (_real_bound(_num(v)) for v in (start, end, step))
    if dtype is None:
        npd = out._data.dtype if out is not None else _dt.get_default_dtype().np
    else:
        npd = np.dtype(_np_dtype(dtype))
    if npd.kind in "bc":
        raise _no_range_kernel("range_cpu", npd)
    if npd.kind in "iu":  # integer results: the bounds are truncated to integers first
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    for v in (start, end):
        if not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = math.floor((end - start) / step) + 1
    vals = start + step * np.arange(n, dtype=np.float64)
    d = _dev(device) if out is None or device is not None else out.device
    return _finish(_on(vals.astype(npd, copy=False), d), requires_grad, None, out, "range")


def frombuffer(
    buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False
) -> Tensor:
    """A 1-D cpu tensor sharing memory with an object that implements the buffer protocol."""
    try:
        mv = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    npd = np.dtype(_np_dtype(dtype))
    size, elt = mv.nbytes, npd.itemsize
    if size == 0 or count == 0:
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if offset < 0 or offset >= size:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({size} bytes) minus 1"
        )
    if count < 0:
        if (size - offset) % elt:
            raise ValueError(
                f"buffer length ({size - offset} bytes) after offset ({offset} bytes) must be a "
                f"multiple of element size ({elt})"
            )
        count = (size - offset) // elt
    elif offset + count * elt > size:
        raise ValueError(
            f"requested buffer length ({count} * {elt} bytes) after offset ({offset} bytes) must "
            f"not be greater than actual buffer length ({size} bytes)"
        )
    # numpy keeps a reference to the buffer, so the memory outlives the caller's object
    arr = np.frombuffer(mv.cast("B"), dtype=npd, count=count, offset=offset)
    if mv.readonly:
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.",
            UserWarning,
            stacklevel=2,
        )
        arr = arr.copy()  # numpy refuses writes into read-only memory: ember gets its own copy
    return _finish(arr, requires_grad, None)


def from_file(
    filename,
    shared=None,
    size: int = 0,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``size`` elements read from a raw binary file; ``shared=True`` maps the file, so writes to
    the tensor reach the file (the file is created, zero-filled, when it does not exist)."""
    npd = np.dtype(_np_dtype(dtype))
    need = size * npd.itemsize
    filename = os.fspath(filename)
    if shared:
        if not os.path.exists(filename):
            with open(filename, "wb") as f:
                f.truncate(need)
        have = os.path.getsize(filename)
    else:
        if not os.path.exists(filename):
            raise RuntimeError(
                f"unable to open file <{filename}> in read-only mode: No such file or directory (2)"
            )
        have = os.path.getsize(filename)
    if have < need:
        raise RuntimeError(
            f"file <{filename}> size <{have}> is smaller than the required mapping size <{need}>"
        )
    if size == 0:
        arr = np.empty(0, dtype=npd)
    elif shared:
        # a plain ndarray view of the map (ember dispatches on exact ndarray type); it keeps the
        # map alive, and MAP_SHARED pages make writes visible to readers of the file at once
        arr = np.memmap(filename, dtype=npd, mode="r+", shape=(size,)).view(np.ndarray)
    else:
        arr = np.fromfile(filename, dtype=npd, count=size)
    t = _finish(arr, requires_grad, None)
    if device is not None:
        t = t.to(device)
    return t


def _lapack(name, a):
    from scipy.linalg import lapack

    return lapack.get_lapack_funcs((name,), (a,))[0]


def _check_lapack_dtype(fname, a) -> None:
    if a.dtype.kind not in "fc" or a.dtype.itemsize < 4 or a.dtype == np.float16:
        raise NotImplementedError(
            f"\"{fname}_cpu\" not implemented for '{_dt.SCALAR_NAMES[_dn(a)]}'"
        )


def _dn(a) -> str:
    return "bfloat16" if a.dtype.kind == "V" else a.dtype.name


@op(names=_rule(2, 1), out_type=_geqrf_t, n_diff_out=2)
def geqrf(xp, input):
    """QR factorization in LAPACK's compact form: (a, tau) (Householder reflectors)."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack_dtype("geqrf", input)
    # numpy / cupy's qr(mode="raw") is LAPACK's geqrf, batched, with h transposed (Fortran order)
    if input.ndim > 3:  # permuted batch dims: numpy's tau keeps their order, torch's not
        input = xp.ascontiguousarray(input)
    h, tau = xp.linalg.qr(input, mode="raw")
    return xp.ascontiguousarray(xp.swapaxes(h, -1, -2)), tau


@geqrf.vjp
def _(grad, input):
    # torch records geqrf (its outputs require grad) but has no derivative for it
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def _reflect_xp(xp, a, tau, c, left, transpose):
    """op(Q) @ c (or c @ op(Q)) with array ops (cuda: no LAPACK ormqr there), one reflector at a
    time; a, tau, c already broadcast to one batch shape."""
    m, k = a.shape[-2], tau.shape[-1]
    v_all = xp.tril(a, -1) + xp.eye(m, a.shape[-1], dtype=a.dtype)
    t = xp.conj(tau) if transpose else tau
    order = _pyrange(k) if transpose == left else _pyrange(k - 1, -1, -1)
    for i in order:
        v = v_all[..., :, i : i + 1]
        vh = xp.conj(xp.swapaxes(v, -1, -2))
        ti = t[..., i : i + 1, None]
        c = c - ti * (v @ (vh @ c)) if left else c - ti * ((c @ v) @ vh)
    return c


@op(names=_rule(2), method=False, name="_ormqr")
def _ormqr(xp, input, tau, other, left=True, transpose=False):
    """The LAPACK kernel of ormqr (no graph: ``ormqr`` composes ember ops when grads are needed)."""
    if input.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    if other.ndim != input.ndim:
        raise RuntimeError(
            "torch.ormqr: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {other.ndim} and input.ndim is equal to {input.ndim}"
        )
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(
            "torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.ndim} and input.ndim is equal to {input.ndim}"
        )
    for nm, shp in (("tau", tau.shape[:-1]), ("other", other.shape[:-2])):
        if shp != input.shape[:-2]:
            raise RuntimeError(
                f"torch.ormqr: Expected batch dimensions of {nm} to be equal to input.shape[:-2], "
                f"but got {list(shp)}"
            )
    for nm, x in (("tau", tau), ("other", other)):
        if x.dtype != input.dtype:
            raise RuntimeError(
                f"torch.ormqr: Expected input and {nm} to have the same dtype, but input has "
                f"dtype{_dt.SCALAR_NAMES[_dn(input)]} and {nm} has dtype "
                f"{_dt.SCALAR_NAMES[_dn(x)]}"
            )
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(
            f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])"
        )
    _check_lapack_dtype("ormqr", input)
    complex_ = input.dtype.kind == "c"
    trans = ("C" if complex_ else "T") if transpose else "N"
    batch = np.broadcast_shapes(input.shape[:-2], tau.shape[:-1], other.shape[:-2])
    a = xp.broadcast_to(input, (*batch, *input.shape[-2:]))
    tb = xp.broadcast_to(tau, (*batch, tau.shape[-1]))
    c = xp.broadcast_to(other, (*batch, *other.shape[-2:])).copy()
    k = min(tb.shape[-1], a.shape[-1])
    if c.size == 0 or k == 0:  # no reflectors (LAPACK refuses a 0-column input): Q = I
        return c
    if xp is not np:
        return _reflect_xp(xp, a[..., :k], tb[..., :k], c, left, transpose)
    f = _lapack("unmqr" if complex_ else "ormqr", a)
    tb = tb[..., :k]
    for idx in np.ndindex(*batch):
        cc = c[idx]
        lwork = max(1, cc.shape[1] if left else cc.shape[0]) * 64
        # LAPACK reads k = len(tau) reflectors: the first k columns of input
        res, _, _ = f("L" if left else "R", trans, a[idx][:, :k], tb[idx], cc, lwork)
        c[idx] = res
    return c


def _apply_reflectors(input, tau, other, left, transpose):
    """op(Q) @ other (or other @ op(Q)) with ember ops, one reflector at a time (differentiable,
    twice): Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i = column i of input's unit-lower part."""
    m, n = input.shape[-2], input.shape[-1]
    k = min(tau.shape[-1], n)
    eye = _eye(m, n, dtype=input.dtype, device=input.device)
    V = input.tril(-1) + eye
    t = tau.conj() if transpose and tau.is_complex() else tau
    # Q @ C and C @ Q^H apply H_k first; Q^H @ C and C @ Q apply H_1 first
    order = _pyrange(k) if transpose == left else _pyrange(k - 1, -1, -1)
    c = other
    for i in order:
        v = V[..., :, i : i + 1]
        ti = t[..., i : i + 1].unsqueeze(-1)
        vh = v.transpose(-2, -1).conj() if v.is_complex() else v.transpose(-2, -1)
        c = c - ti * (v @ (vh @ c)) if left else c - ti * ((c @ v) @ vh)
    return c


@_autocast_entry
def _ormqr_out(out, res, ins):
    # torch refuses an out= of another dtype than input's (no cast)
    raise RuntimeError(
        "torch.ormqr: Expected input and result to have the same dtype, but input has dtype"
        f"{_dt.SCALAR_NAMES[_dn(res._data)]} and result has dtype {_dt.SCALAR_NAMES[_dn(out._data)]}"
    )


_ormqr.op.out_dtype = _ormqr_out
_ormqr.op.label, _ormqr.op.arg_names = "ormqr", ("input", "input2", "input3")  # torch's names


def ormqr(
    input: Tensor,
    tau: Tensor,
    other: Tensor,
    left: bool = True,
    transpose: bool = False,
    *,
    out=None,
) -> Tensor:
    """Multiply ``other`` by the Q of a geqrf factorization: op(Q) @ other or other @ op(Q)."""
    try:
        grad = _grad_enabled() and (input.requires_grad or tau.requires_grad or other.requires_grad)
    except AttributeError:
        grad = False  # a non-Tensor argument: _ormqr's type check names it
    if grad:
        chk = _ormqr(input.detach(), tau.detach(), other.detach(), left, transpose)  # checks
        named = input._names is not None or tau._names is not None or other._names is not None
        if named:
            # the reflector products would contract named matrix dims into duplicate names:
            # run them unnamed, then name the result as _ormqr's rule does
            input, tau, other = input.rename(None), tau.rename(None), other.rename(None)
        r = _apply_reflectors(input, tau, other, left, transpose)
        if named and chk._names is not None:
            r = r.rename(*chk._names)
        if out is not None:
            raise RuntimeError(
                "ormqr(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        return r
    return _ormqr(input, tau, other, left, transpose, out=out)
