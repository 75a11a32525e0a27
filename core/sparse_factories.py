"""Sparse tensor factories (ember.sparse_coo_tensor, sparse_csr_tensor, ...) with torch's
validation, and the conversions between the strided and the sparse layouts (Tensor.to_sparse*).
Values move with differentiable ember ops (reshape, index_select), so gradients flow."""

from __future__ import annotations

import ember as _E  # partially initialised while ember imports; used at call time only

from . import dtype as _dt
from .device import array_module
from .layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .runtime import _warn_once
from .sparse import (
    _BLOCK,
    _COMPRESSED,
    _INAMES,
    _ROWS,
    _TNAME,
    SparseTensor,
    _expand_ptr,
    _gather_rows,
    _Invariants,
    _long,
    _make,
    _prod,
    _ptr_of,
    _unravel,
    _xp,
)
from .tensor import Tensor, _wrap

__all__ = [
    "sparse_bsc_tensor",
    "sparse_bsr_tensor",
    "sparse_compressed_tensor",
    "sparse_coo_tensor",
    "sparse_csc_tensor",
    "sparse_csr_tensor",
]


# ---------------------------------------------------------------------------- factories
def _as_tensor(x, dtype=None, device=None, who="") -> Tensor:
    if isinstance(x, SparseTensor):
        raise TypeError(f"{who}(): expected a dense tensor, got a {x.layout.name} tensor")
    if isinstance(x, Tensor):
        # sparse tensors carry no names: named indices/values give an unnamed result (names
        # spec 4.2: no op refuses a named tensor; the result's shape is not the input's)
        t = x.rename(None) if x._names is not None else x
        if dtype is not None and t.dtype is not _dt.to_dtype(dtype):
            t = t.to(dtype)
        if device is not None and t.device != _E.device(device):
            t = t.to(device)
        return t
    return _E.tensor(x, dtype=dtype, device=device)


# the factories' ``requires_grad=True`` on an integer tensor, in torch's words
_FACTORY_WHO = "Only Tensors of floating point and complex dtype"


def _finish(t: SparseTensor, values: Tensor, requires_grad: bool) -> SparseTensor:
    if requires_grad:
        t._vals = t._vals.detach()
        t.requires_grad_(True, _who=_FACTORY_WHO)
    elif values.requires_grad:
        # like torch, a sparse tensor made from values that require grad is not a leaf
        t._vals = t._vals.view(t._vals.shape)
    return t


def _check_invariants(check_invariants) -> bool:
    if check_invariants is None:
        if not _Invariants.explicit:
            # torch's factories warn once per process while nobody chose the checks' state
            _warn_once(
                "sparse_invariants_implicit",
                "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) "
                "will occur when operating on a sparse tensor which violates the invariants, but "
                "checks incur performance overhead. To silence this warning, explicitly opt in "
                "or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.",
            )
        return _Invariants.on
    return bool(check_invariants)


def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants=None,
    is_coalesced=None,
) -> Tensor:
    """A COO sparse tensor with ``values`` at the columns of ``indices`` (``(sparse_dim, nnz)``).

    ``size`` defaults to the smallest that holds the indices (dense dims from ``values``).
    """
    who = "sparse_coo_tensor"
    _check_invariants(check_invariants)  # only for its warning: ember checks bounds always
    values = _as_tensor(values, dtype, device, who)
    indices = _as_tensor(indices, None, values.device, who)
    xp = _xp(values)
    ia = indices._data
    if ia.dtype.kind not in "iu":
        if ia.dtype.kind == "f":
            ia = ia.astype(xp.int64)
        else:
            raise RuntimeError(f"indices must be an int64 tensor, got {indices.dtype!r}")
    if ia.ndim != 2:
        if ia.ndim == 1 and size is not None:
            raise RuntimeError(
                f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                f"{len(size)}, sparse_dim = {ia.shape[0]}, dense_dim = {values.ndim - 1}"
            )
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(ia.shape)}")
    ia = ia.astype(xp.int64, copy=False)
    sd, nnz = ia.shape
    if values.ndim == 0:
        raise RuntimeError("values must have at least one dimension (nnz)")
    if values.shape[0] != nnz:
        raise RuntimeError(
            "indices and values must have same nnz, but got nnz from indices: "
            f"{nnz}, nnz from values: {values.shape[0]}"
        )
    dense = tuple(values.shape[1:])
    if size is None:
        if nnz:
            sshape = tuple(int(m) + 1 for m in ia.max(axis=1).tolist())
        else:
            sshape = (0,) * sd
        # an inferred size still has to reject negative indices (torch checks them here too)
        _check_coo_bounds(xp, ia, sshape)
        size = sshape + dense
    else:
        size = tuple(_size_arg(size))
        if len(size) != sd + len(dense):
            raise RuntimeError(
                f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                f"{len(size)}, sparse_dim = {sd}, dense_dim = {len(dense)}"
            )
        if tuple(size[sd:]) != dense:
            raise RuntimeError(
                f"values has incorrect size, expected {[nnz, *size[sd:]]}, got {list(values.shape)}"
            )
        _check_coo_bounds(xp, ia, size[:sd])
    coal = is_coalesced if is_coalesced is not None else nnz <= 1
    ci = _wrap(ia) if ia is not indices._data else indices.detach()
    t = _make(sparse_coo, size, ci, None, values, coal)
    if requires_grad and not (values.is_floating_point() or values.is_complex()):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return _finish(t, values, requires_grad)


def _size_arg(size):
    out = []
    for s in size:
        s = int(s)
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(s)
    return out


def _check_coo_bounds(xp, ia, sshape) -> None:
    if not ia.shape[1]:
        return
    lo = ia.min(axis=1).tolist()
    hi = ia.max(axis=1).tolist()
    for d, s in enumerate(sshape):
        if lo[d] < 0:
            raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
        if hi[d] >= s:
            raise RuntimeError(
                f"size is inconsistent with indices: for dim {d}, size is {s} but found "
                f"index {hi[d]}"
            )


def sparse_compressed_tensor(
    compressed_indices,
    plain_indices,
    values,
    size=None,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants=None,
) -> Tensor:
    """A compressed sparse tensor of ``layout`` (csr/csc/bsr/bsc); see sparse_csr_tensor."""
    if layout not in _COMPRESSED:
        raise RuntimeError(
            "sparse_compressed_tensor expected sparse compressed tensor layout but got "
            f"{_TNAME.get(layout, layout)}"
        )
    who = f"sparse_{layout.name[7:]}_tensor"
    values = _as_tensor(values, dtype, device, who)
    ci = _as_tensor(compressed_indices, None, values.device, who)
    pi = _as_tensor(plain_indices, None, values.device, who)
    cname, pname = _INAMES[layout]
    for t, nm in ((ci, cname), (pi, pname)):
        if t._data.dtype.kind not in "iu":
            raise RuntimeError(f"{who}: {nm} must have an integer dtype, got {t.dtype!r}")
    if ci.ndim != 1 or pi.ndim != 1:
        raise RuntimeError(
            f"{who}: ember supports only 1-D {cname} and {pname} (no batch dims), got "
            f"{ci.ndim}-D and {pi.ndim}-D"
        )
    if ci.dtype is not pi.dtype:
        raise RuntimeError(
            f"{cname} and {pname} must have the same dtype, bot got {_dt.scalar_name(ci.dtype)}"
            f" and {_dt.scalar_name(pi.dtype)}, respectively"
        )
    block = layout in _BLOCK
    nnz = pi.shape[0]
    if values.ndim < (3 if block else 1):
        raise RuntimeError(
            f"{who}: values must be at least {3 if block else 1}-D (nnz"
            f"{', blockrows, blockcols' if block else ''}), got {values.ndim}-D"
        )
    if values.shape[0] != nnz:
        raise RuntimeError(
            f"{who}: values must have nnz = {pname}.numel() = {nnz} entries, got {values.shape[0]}"
        )
    dense = tuple(values.shape[3:] if block else values.shape[1:])
    bs = tuple(values.shape[1:3]) if block else (1, 1)
    xp = _xp(values)
    ca, pa = ci._data, pi._data
    ncomp = ca.shape[0] - 1
    if size is None:
        nplain = int(pa.max()) + 1 if nnz else 0
        n0, n1 = (ncomp, nplain) if layout in _ROWS else (nplain, ncomp)
        size = (n0 * bs[0], n1 * bs[1], *dense)
    else:
        size = tuple(_size_arg(size))
        if len(size) != 2 + len(dense):
            raise RuntimeError(
                f"{who}: size must have {2 + len(dense)} dims (2 sparse dims + "
                f"{len(dense)} dense dims of the values), got {len(size)}"
            )
        if tuple(size[2:]) != dense:
            raise RuntimeError(
                f"{who}: the dense dims of size {list(size[2:])} do not match those of the "
                f"values {list(dense)}"
            )
    if block and (size[0] % bs[0] or size[1] % bs[1]):
        raise RuntimeError(
            f"{who}: the size ({size[0]}, {size[1]}) must be divisible by the blocksize "
            f"({bs[0]}, {bs[1]})"
        )
    nrb, ncb = size[0] // bs[0], size[1] // bs[1]
    ncomp_want, nplain = (nrb, ncb) if layout in _ROWS else (ncb, nrb)
    cdim = "nrows" if layout in _ROWS else "ncols"
    pdim = "ncols" if layout in _ROWS else "nrows"
    if ncomp != ncomp_want:
        raise RuntimeError(
            f"{cname}.shape[-1] must be equal to {cdim} + 1 (={ncomp_want + 1}), but got "
            f"{ncomp + 1}"
        )
    # the invariants torch checks with check_invariants=True (ember: bounds always)
    if nnz and (int(pa.min()) < 0 or int(pa.max()) >= nplain):
        raise RuntimeError(f"`0 <= {pname} < {pdim}` is not satisfied.")
    if ncomp >= 0 and ca.shape[0]:
        if int(ca[0]) != 0:
            raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
        if int(ca[-1]) != nnz:
            raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
        if ncomp and bool((xp.diff(ca) < 0).any()):
            raise RuntimeError(
                f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {pdim}` is not satisfied."
            )
    if _check_invariants(check_invariants) and nnz > 1:
        comp = _expand_ptr(xp, ca)
        same = comp[1:] == comp[:-1]
        if bool((same & (pa[1:] <= pa[:-1])).any()):
            raise RuntimeError(
                f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., "
                f"{cdim} are sorted and distinct along the last dimension values` is not "
                "satisfied."
            )
    if requires_grad and not (values.is_floating_point() or values.is_complex()):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t = _make(layout, size, ci.detach(), pi.detach(), values)
    return _finish(t, values, requires_grad)


def _compressed_factory(layout):
    def factory(
        compressed_indices,
        plain_indices,
        values,
        size=None,
        *,
        dtype=None,
        device=None,
        pin_memory: bool = False,
        requires_grad: bool = False,
        check_invariants=None,
    ) -> Tensor:
        return sparse_compressed_tensor(
            compressed_indices,
            plain_indices,
            values,
            size,
            dtype=dtype,
            layout=layout,
            device=device,
            requires_grad=requires_grad,
            check_invariants=check_invariants,
        )

    cname, pname = _INAMES[layout]
    factory.__name__ = factory.__qualname__ = f"sparse_{layout.name[7:]}_tensor"
    factory.__doc__ = (
        f"A {layout.name[7:].upper()} sparse tensor from ``{cname}``, ``{pname}`` and ``values``"
        f" (torch.{factory.__name__})."
    )
    return factory


sparse_csr_tensor = _compressed_factory(sparse_csr)
sparse_csc_tensor = _compressed_factory(sparse_csc)
sparse_bsr_tensor = _compressed_factory(sparse_bsr)
sparse_bsc_tensor = _compressed_factory(sparse_bsc)


# ---------------------------------------------------------------------------- conversions
def _dense_to_coo(x: Tensor, sd: int) -> SparseTensor:
    nd = x.ndim
    if not 0 <= sd <= nd:
        raise RuntimeError(
            f"dense_to_sparse: sparse_dim argument must be in [0,{nd}] range, but {sd} is given"
        )
    if sd == 0 and nd > 0:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
    a = x._data
    xp = array_module(a)
    sshape, dshape = tuple(a.shape[:sd]), tuple(a.shape[sd:])
    m = (a != 0).reshape(_prod(sshape), _prod(dshape)).any(axis=1)
    lin = xp.flatnonzero(m)
    vals = _gather_rows(x.reshape(_prod(sshape), *dshape), lin)
    return _make(sparse_coo, a.shape, _wrap(_unravel(xp, lin, sshape)), None, vals, True)


def _block_args(layout, blocksize, who):
    if layout not in _BLOCK:
        return None
    if blocksize is None:
        raise RuntimeError(
            f"{who}: conversion from Strided to {_TNAME[layout]} without blocksize argument "
            "given is not supported"
        )
    bs = (blocksize, blocksize) if isinstance(blocksize, int) else tuple(blocksize)
    if len(bs) != 2:
        raise RuntimeError(f"{who}: blocksize needs to be a tuple of size 2, but got {len(bs)}")
    return bs


def _dense_to_compressed(x: Tensor, layout, blocksize, dense_dim) -> SparseTensor:
    who = "dense_to_sparse_" + layout.name[7:]
    nd = x.ndim
    dd = dense_dim or 0
    if nd - dd < 2:
        raise RuntimeError(
            f"{who}: expected at least 2 sparse dims, but the input has {nd} dims and "
            f"dense_dim={dd}"
        )
    if nd - dd > 2:
        raise RuntimeError(
            f"{who}: ember does not support batched sparse compressed tensors ({nd - dd} "
            "sparse dims); use dense_dim or a 2-D input"
        )
    bs = _block_args(layout, blocksize, "dense_to_sparse") or (1, 1)
    shape = tuple(x.shape)
    R, C = shape[0], shape[1]
    dense = shape[2:]
    if R % bs[0] or C % bs[1]:
        raise RuntimeError(
            f"{who}: tensor sparse size ({R},{C}) must be divisible by given blocksize "
            f"({bs[0]},{bs[1]})"
        )
    nr, nc = R // bs[0], C // bs[1]
    k = len(dense)
    if layout in _BLOCK:
        blocks = x.reshape(nr, bs[0], nc, bs[1], *dense).permute(0, 2, 1, 3, *range(4, 4 + k))
        blocks = blocks.reshape(nr * nc, bs[0], bs[1], *dense)
    else:
        blocks = x.reshape(nr * nc, *dense)
    a = blocks._data
    xp = array_module(a)
    m = (a != 0).reshape(nr, nc, -1).any(axis=2) if a.size else xp.zeros((nr, nc), bool)
    if layout in _ROWS:
        lin = xp.flatnonzero(m)
        comp, plain = lin // nc, lin % nc
        ncomp = nr
    else:
        lin_t = xp.flatnonzero(m.T)
        comp, plain = lin_t // nr, lin_t % nr
        lin = plain * nc + comp
        ncomp = nc
    vals = _gather_rows(blocks, lin)
    ptr = _ptr_of(xp, comp, ncomp, xp.int64)
    return _make(layout, shape, _wrap(ptr), _long(xp, plain), vals)


def _keeps_names(convert):
    """A layout conversion keeps the source's names (names spec: a conversion, like ``to``,
    keeps input names); ``to_dense`` gives them back to the dense result."""

    def conv(t: Tensor, *args) -> Tensor:
        out = convert(t, *args)
        if t._names is not None and out is not t and isinstance(out, SparseTensor):
            out._names = t._names if any(n is not None for n in t._names) else None
        return out

    conv.__name__ = convert.__name__
    conv.__doc__ = convert.__doc__
    return conv


@_keeps_names
def _to_coo(t: Tensor, sparse_dim) -> SparseTensor:
    if not isinstance(t, SparseTensor):
        return _dense_to_coo(t, t.ndim if sparse_dim is None else sparse_dim)
    if t._lay is sparse_coo:
        if sparse_dim is not None and sparse_dim != t.sparse_dim():
            raise RuntimeError(
                "to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                "!=self.sparse_dim() is not supported"
            )
        return t
    if sparse_dim is not None and sparse_dim != 2:
        raise RuntimeError(
            f"sparse_compressed_to_sparse: conversion from {_TNAME[t._lay]} to Sparse with "
            f"sparse_dim argument !=2 is not supported"
        )
    xp = array_module(t._ci._data)
    comp = _expand_ptr(xp, t._ci._data)
    plain = t._pi._data.astype(xp.int64)
    r, c = (comp, plain) if t._lay in _ROWS else (plain, comp)
    vals = t._vals
    if t._lay in _BLOCK:
        br, bc = vals.shape[1], vals.shape[2]
        ii = xp.repeat(xp.arange(br, dtype=xp.int64), bc)
        jj = xp.tile(xp.arange(bc, dtype=xp.int64), br)
        r = (r[:, None] * br + ii[None, :]).reshape(-1)
        c = (c[:, None] * bc + jj[None, :]).reshape(-1)
        vals = vals.reshape(-1, *vals.shape[3:])
    coal = t._lay is sparse_csr
    return _make(sparse_coo, t._shp, _wrap(xp.stack((r, c))), None, vals, coal)


@_keeps_names
def _to_compressed(t: Tensor, layout, blocksize, dense_dim) -> SparseTensor:
    if not isinstance(t, SparseTensor):
        return _dense_to_compressed(t, layout, blocksize, dense_dim)
    who = "to_sparse_" + layout.name[7:]
    src = t._lay
    if dense_dim is not None:
        raise RuntimeError(
            f"{who}: conversion from {_TNAME[src]} to {_TNAME[layout]} with dense_dim argument "
            "given is not supported"
        )
    if layout in _BLOCK:
        bs = _block_args(layout, blocksize, who)
        if src is layout:
            have = tuple(t._vals.shape[1:3])
            if have != bs:
                raise RuntimeError(
                    f"{who}: conversion from {_TNAME[src]} to {_TNAME[layout]} with blocksize "
                    f"changed from {list(have)} to {list(bs)} is not supported"
                )
            return t
        if src is sparse_coo and t.sparse_dim() != 2:
            raise RuntimeError(
                f"coo_to_sparse_{layout.name[7:]}: conversion from Sparse to {_TNAME[layout]} "
                "for input tensors with sparse_dim()!=2 is not supported"
            )
        return _dense_to_compressed(t.to_dense(), layout, bs, t.dense_dim())
    if src is layout:
        return t
    if src in _BLOCK:
        raise RuntimeError(
            f"sparse_compressed_to_sparse_{layout.name[7:]}: expected SparseCsr or SparseCsc "
            f"layout but got {_TNAME[src]}"
        )
    if src is sparse_coo and t.sparse_dim() != 2:
        raise RuntimeError(
            f"coo_to_sparse_{layout.name[7:]}: conversion from Sparse to {_TNAME[layout]} for "
            "input tensors with sparse_dim()!=2 is not supported"
        )
    coo = _to_coo(t, None).coalesce()
    idx = coo._ci._data
    xp = array_module(idx)
    r, c = idx[0], idx[1]
    vals = coo._vals
    R, C = t._shp[0], t._shp[1]
    if layout is sparse_csr:
        ptr = _ptr_of(xp, r, R, xp.int64)
        return _make(sparse_csr, t._shp, _wrap(ptr), _long(xp, c), vals)
    order = xp.argsort(c * R + r, kind="stable")
    ptr = _ptr_of(xp, c[order], C, xp.int64)
    vals = _gather_rows(vals, order)
    return _make(sparse_csc, t._shp, _wrap(ptr), _long(xp, r[order]), vals)


@_keeps_names
def _to_sparse(t: Tensor, args, layout, blocksize, dense_dim) -> SparseTensor:
    if args:
        if len(args) > 1 or layout is not None or blocksize is not None or dense_dim is not None:
            raise TypeError(
                "to_sparse() received an invalid combination of arguments: use "
                "to_sparse(sparse_dim) or to_sparse(*, layout=None, blocksize=None, "
                "dense_dim=None)"
            )
        return _to_coo(t, args[0])
    if layout is None or layout is sparse_coo:
        if dense_dim is not None and not isinstance(t, SparseTensor):
            return _dense_to_coo(t, t.ndim - dense_dim)
        return _to_coo(t, None)
    if layout is strided:
        return t.to_dense() if isinstance(t, SparseTensor) else t
    if layout not in _COMPRESSED:
        raise RuntimeError(f"to_sparse: unsupported layout {layout!r}")
    if dense_dim is not None and not isinstance(t, SparseTensor):
        nd = t.ndim
        if not 0 <= dense_dim <= nd - 2:
            raise RuntimeError(
                f"dense_to_sparse: dense_dim argument must be in [0,{nd - 2}] range, but "
                f"{dense_dim} is given"
            )
    if layout in _BLOCK and blocksize is None and not isinstance(t, SparseTensor):
        raise RuntimeError(
            f"dense_to_sparse: conversion from Strided to {_TNAME[layout]} without blocksize "
            "argument given is not supported"
        )
    if isinstance(t, SparseTensor) and t._lay is layout and layout not in _BLOCK:
        if dense_dim is not None:
            raise RuntimeError(
                f"to_sparse_{layout.name[7:]}: conversion from {_TNAME[layout]} to "
                f"{_TNAME[layout]} with dense_dim argument given is not supported"
            )
        return t
    return _to_compressed(t, layout, blocksize, dense_dim)


def _empty_sparse(
    who: str, shape, layout, dtype, device, requires_grad: bool, sparse_dim=None
) -> SparseTensor:
    """What ``ember.zeros``/``empty`` (``who``) return for a sparse ``layout``: a tensor of
    ``shape`` with no specified elements, all of its dims sparse unless ``sparse_dim`` says
    (torch has no sparse ``ones``/``full``: fill values would make it dense)."""
    if who not in ("zeros", "empty"):
        raise RuntimeError("full(...) is not implemented for sparse layout")
    if layout in _COMPRESSED:
        if len(shape) < 2:
            raise RuntimeError(
                f"ember.{who}: Only batched sparse compressed (non-block) tensors are supported, "
                f"but got size {list(shape)}"
            )
        if layout in _BLOCK:
            raise RuntimeError(
                f"{who}_sparse_compressed expected sparse compressed (non-block) tensor layout "
                f"but got {_TNAME[layout]}"
            )
        if len(shape) > 2:
            raise RuntimeError(
                f"ember.{who}: ember does not support batched sparse compressed tensors "
                f"(size {list(shape)})"
            )
    sd = len(shape) if sparse_dim is None else sparse_dim
    vals = _E.zeros((0, *shape[sd:]), dtype=dtype, device=device)
    idx = _E.zeros((sd, 0), dtype=_E.int64, device=vals.device)
    t = _make(sparse_coo, tuple(shape), idx, None, vals, True)
    if layout is not sparse_coo:
        t = _to_compressed(t, layout, None, None)
    return t.requires_grad_(True, _who=_FACTORY_WHO) if requires_grad else t
