"""Math on sparse tensors (ember.sparse.mm / addmm / sum / softmax ..., arithmetic), their repr,
and the sparse methods of dense tensors (to_sparse*, sparse_mask, and torch's errors for the
sparse-only accessors). Every computation is dense ember ops on the values, so autograd works."""

from __future__ import annotations

from numbers import Integral

import ember as _E

from . import dtype as _dt
from .device import array_module
from .layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr
from .registry import NON_STRIDED
from .sparse import (
    _BLOCK,
    _COMPRESSED,
    _ROWS,
    _TNAME,
    SparseTensor,
    _expand_ptr,
    _gather_rows,
    _long,
    _make,
    _not_sparse_error,
    _prod,
    _ravel,
    _segsum,
    _wrap_dim,
)
from .sparse_factories import _to_compressed, _to_coo, _to_sparse
from .tensor import Tensor, _wrap

__all__ = ["hspmm", "smm", "spmm", "sspaddmm"]


# ---------------------------------------------------------------------------- repr
def _inner(x: Tensor, indent: int) -> str:
    from .printing import _body

    x = x.detach()
    if x.numel() == 0:
        return f"[], size={tuple(x.shape)}"
    return _body(x, indent)


def sparse_repr(t: SparseTensor) -> str:
    """torch's repr of a sparse tensor, with ``ember.`` where torch writes ``torch.``."""
    from .device import get_default_device
    from .printing import OPTS

    lay = t._lay
    if lay is sparse_coo:
        items = (("indices", t._ci), ("values", t._vals))
    else:
        from .sparse import _INAMES

        c, p = _INAMES[lay]
        items = ((c, t._ci), (p, t._pi), ("values", t._vals))
    lines = []
    for k, (nm, x) in enumerate(items):
        head = ("tensor(" if k == 0 else " " * 7) + nm + "=tensor("
        lines.append(head + _inner(x, len(head)) + ")")
    s = ",\n".join(lines)
    suffixes = []
    dev, default_dev = t.device, get_default_device()
    if dev.type != default_dev.type or (
        dev.type == "cuda" and dev.index != (default_dev.index or 0)
    ):
        suffixes.append(f"device='{dev}'")
    suffixes += [f"size={tuple(t._shp)}", f"nnz={t._nnz()}"]
    dt, default = t.dtype, _dt.get_default_dtype()
    if dt not in (default, default.to_complex(), _dt.int64, _dt.bool_):
        suffixes.append(f"dtype={dt!r}")
    suffixes.append(f"layout={lay!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    # like torch: a COO tensor starts its suffixes on a new line; lines wrap at linewidth
    parts = [s]
    last = len(s) - s.rfind("\n") + 1
    force = lay is sparse_coo
    for suf in suffixes:
        if force or last + len(suf) + 2 > OPTS.linewidth:
            parts.append(",\n       " + suf)
            last = 7 + len(suf)
            force = False
        else:
            parts.append(", " + suf)
            last += len(suf) + 2
    return "".join(parts) + ")"


# ---------------------------------------------------------------------------- helpers
def _check_sparse(t, who) -> SparseTensor:
    if not isinstance(t, SparseTensor):
        raise RuntimeError(  # noqa: TRY004
            f"{who}: expected a sparse tensor, got a strided (dense) tensor"
        )
    return t


def _coo2d(s: SparseTensor, who):
    """(rows, cols) raw index arrays and the values of a 2-D sparse matrix of any layout."""
    if s.sparse_dim() != 2:
        raise RuntimeError(f"{who}: matrices expected, got {s.sparse_dim()}D tensor")
    c = _to_coo(s, None)
    if c.dense_dim():
        raise RuntimeError(f"{who}: ember supports sparse matrices without dense dims only")
    idx = c._ci._data
    return idx[0], idx[1], c._vals


_MM_REDUCE = {"sum": "sum", "mean": "mean", "amax": "amax", "amin": "amin", "max": "amax"}
_MM_REDUCE["min"] = "amin"


def _mm(s: SparseTensor, d: Tensor, who="addmm", reduce="sum") -> Tensor:
    rows, cols, vals = _coo2d(s, who)
    if isinstance(d, SparseTensor):
        raise RuntimeError(  # noqa: TRY004
            f"{who}: sparse @ sparse: call .to_dense() on the second operand"
        )
    if d.dim() != 2:
        raise RuntimeError(f"{who}: matrices expected, got {d.dim()}D tensor")
    n, k = s.shape
    if d.shape[0] != k:
        raise RuntimeError(f"{who}: Argument #3 (dense): Expected dim 0 size {k}, got {d.shape[0]}")
    if d.dtype is not s.dtype:
        raise RuntimeError(
            f"expected scalar type {_dt.scalar_name(s.dtype)} but found {_dt.scalar_name(d.dtype)}"
        )
    xp = array_module(rows)
    # one product per stored entry, then a scatter-add of the rows (sort + reduceat)
    contrib = vals.reshape(-1, 1) * d.index_select(0, _long(xp, cols))
    if reduce == "sum":
        return _segsum(contrib, _long(xp, rows), n)
    # a row's mean/max/min over its stored entries only (a row without any gives 0)
    idx = _long(xp, rows).reshape(-1, 1).expand(contrib.shape)
    z = _E.zeros((n, contrib.shape[1]), dtype=contrib.dtype, device=contrib.device)
    return z.scatter_reduce(0, idx, contrib, reduce, include_self=False)


def _dims(dim, nd):
    if isinstance(dim, int):
        dim = (dim,)
    out = [_wrap_dim(d, nd) for d in dim]
    for k, d in enumerate(out):
        if d in out[:k]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return sorted(out)


def _segmax(xp, v, g, ng):
    """Per-group maximum of the rows of raw array ``v`` (group ids ``g`` in [0, ng))."""
    out = xp.full((ng, *v.shape[1:]), -xp.inf, dtype=v.dtype)
    if xp.__name__ == "numpy":
        order = xp.argsort(g, kind="stable")
        gs = g[order]
        starts = xp.flatnonzero(xp.concatenate(([True], gs[1:] != gs[:-1])))
        out[gs[starts]] = xp.maximum.reduceat(v[order], starts, axis=0)
    else:
        from .ops.indexing import _ufunc_at

        _ufunc_at(xp, "maximum", out, (g,), v)
    return out


# ---------------------------------------------------------------------------- ember.sparse.*
def mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """``mat1 @ mat2`` with ``mat1`` sparse (any layout, 2-D): a dense result; sparse @ sparse
    gives a sparse COO result. Gradients reach the sparse values and the dense operand."""
    if reduce is not None and reduce not in _MM_REDUCE:
        raise RuntimeError(f"sparse_mm_reduce: reduce type of {reduce} has not been enabled.")
    if not isinstance(mat1, SparseTensor) and reduce is None:
        try:
            return _E.mm(mat1, mat2)  # torch's sparse.mm falls back to mm for a dense first matrix
        except (RuntimeError, IndexError):
            # torch's fallback is addmm on the transposed operands, (mat2^T @ mat1^T)^T: its
            # errors name them in that form and order, so fail the way that call fails
            z = _E.zeros((mat1.size(-2), mat2.size(-1)), dtype=mat1.dtype, device=mat1.device)
            _E.addmm(z.mT, mat2.transpose(-2, -1), mat1.transpose(-2, -1), beta=0)
            raise
    if not isinstance(mat1, SparseTensor):
        raise RuntimeError("sparse.mm: the first argument must be a sparse tensor")  # noqa: TRY004
    if isinstance(mat2, SparseTensor):
        return _mm_sparse(mat1, mat2)
    return _mm(mat1, mat2, reduce=_MM_REDUCE[reduce or "sum"])


def _mm_sparse(mat1: SparseTensor, mat2: SparseTensor) -> SparseTensor:
    """sparse @ sparse: COO @ COO is COO, CSR/CSC @ CSR/CSC is CSR (torch's kernels; they
    refuse a COO operand with a compressed one)."""
    if mat1.dim() == 2 and mat2.dim() == 2 and mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    flat = (sparse_csr, sparse_csc)
    if (mat1._lay is sparse_coo) != (mat2._lay is sparse_coo) and (
        mat1._lay in flat or mat2._lay in flat
    ):
        t1 = _TNAME[mat1._lay]
        raise RuntimeError(
            f"addmm: computation on CPU is not implemented for {t1} + {t1} @ {_TNAME[mat2._lay]}"
        )
    out = _mm(mat1, mat2.to_dense(), "addmm").to_sparse()
    return _to_compressed(out, sparse_csr, None, None) if mat1._lay in flat else out


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1.0, alpha=1.0) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` with ``mat1`` sparse (a dense result)."""
    if isinstance(mat, SparseTensor):  # torch's kernels write into a dense result only
        if mat._lay is sparse_coo:
            raise RuntimeError(
                f"addmm_sparse_dense: expected strided result tensor, got tensor with layout "
                f"{_TNAME[mat._lay]}"
            )
        kind = _TNAME[mat1._lay] if isinstance(mat1, SparseTensor) else "Strided"
        raise RuntimeError(  # noqa: TRY004
            f"addmm: computation on CPU is not implemented for {_TNAME[mat._lay]} + {kind} @ "
            "Strided"
        )
    prod = _mm(_check_sparse(mat1, "sparse.addmm"), mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (mat if beta == 1 else mat * beta)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:
    """Sum of a sparse COO tensor: all of it (a dense 0-d tensor), or over ``dim`` (a sparse
    tensor, or dense when every sparse dim is summed)."""
    if not isinstance(input, SparseTensor):
        return input.sum() if dim is None else input.sum(dim, dtype=dtype)
    s = input if input._lay is sparse_coo else _to_coo(input, None)
    vals = s._vals if dtype is None else s._vals.to(dtype)
    if dim is None:
        return vals.sum()
    nd = s.dim()
    sd = s.sparse_dim()
    dims = _dims(dim, nd)
    sp = [d for d in dims if d < sd]
    dn = [d - sd + 1 for d in dims if d >= sd]
    if dn:
        vals = vals.sum(dn)
    if len(sp) == sd:
        return vals.sum(0)
    keep = [d for d in range(sd) if d not in sp]
    shape = tuple(s._shp[d] for d in range(nd) if d not in dims)
    idx = s._ci._data[keep]
    out = _make(sparse_coo, shape, _wrap(idx), None, vals, s._coal and not sp)
    return out.coalesce()


def _softmax(input, dim, dtype, log: bool):
    who = "log_softmax" if log else "softmax"
    if not isinstance(input, SparseTensor) or input._lay is not sparse_coo:
        raise NotImplementedError(
            f"sparse.{who}: ember supports sparse COO input only (got "
            f"{getattr(input, 'layout', 'strided')!r})"
        )
    if dtype is None and input.dtype not in (_dt.float32, _dt.float64):
        # torch's sparse (log_)softmax kernels exist for float and double only
        raise NotImplementedError(f"\"{who}\" not implemented for '{_dt.scalar_name(input.dtype)}'")
    s = input.coalesce()
    vals = s._vals if dtype is None else s._vals.to(dtype)
    nd, sd = s.dim(), s.sparse_dim()
    d = _wrap_dim(dim, nd)
    if d >= sd:  # a dense dim: every stored slice is normalised on its own
        v = vals.log_softmax(d - sd + 1) if log else vals.softmax(d - sd + 1)
        return s._like(v, True)
    idx = s._ci._data
    xp = array_module(idx)
    others = [k for k in range(sd) if k != d]
    key = _ravel(xp, idx[others], [s._shp[k] for k in others])
    uniq, g = xp.unique(key, return_inverse=True)
    g = g.reshape(-1)
    ng = uniq.shape[0]
    # unspecified entries count as -inf: the softmax runs over the stored entries of each line
    m = _segmax(xp, vals.detach()._data, g, ng)
    gt = _long(xp, g)
    z = vals - _wrap(m[g])
    e = z.exp()
    tot = _segsum(e, gt, ng)
    v = z - tot.log().index_select(0, gt) if log else e / tot.index_select(0, gt)
    return s._like(v, True)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Softmax over ``dim`` of a sparse COO tensor; unspecified entries count as -inf."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Log-softmax over ``dim`` of a sparse COO tensor; unspecified entries count as -inf."""
    return _softmax(input, dim, dtype, True)


def spdiags(diagonals: Tensor, offsets: Tensor, shape, layout=None) -> Tensor:
    """A sparse 2-D tensor of ``shape`` with row ``k`` of ``diagonals`` on diagonal
    ``offsets[k]`` (column ``j`` of a diagonal holds ``diagonals[k, j]``, like scipy)."""
    if layout not in (None, sparse_coo, sparse_csr, sparse_csc):
        raise RuntimeError(
            "Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got "
            + _TNAME.get(layout, str(layout))
        )
    if len(shape) != 2:
        raise RuntimeError(f"Output shape must be 2d, got {len(shape)}")
    if diagonals.dim() not in (1, 2):
        raise RuntimeError(f"Diagonals must be vector or matrix, got {diagonals.dim()}d")
    if offsets.dim() > 1:
        raise RuntimeError(f"Offsets must be scalar or vector, got {offsets.dim()}d")
    d2 = diagonals.reshape(1, -1) if diagonals.dim() == 1 else diagonals
    off = offsets._data.reshape(-1).astype("int64")
    xp = array_module(off)
    if d2.shape[0] != off.shape[0]:
        raise RuntimeError(
            f"Number of diagonals ({d2.shape[0]}) does not match the number of offsets "
            f"({off.shape[0]})"
        )
    if xp.unique(off).shape[0] != off.shape[0]:
        raise RuntimeError("Offset tensor contains duplicate values")
    m, n = int(shape[0]), int(shape[1])
    width = d2.shape[1]
    rows, cols, src = [], [], []
    for k, o in enumerate(off.tolist()):
        c0, c1 = max(0, o), min(n, m + o, width)
        if c1 <= c0:
            continue
        c = xp.arange(c0, c1, dtype=xp.int64)
        rows.append(c - o)
        cols.append(c)
        src.append(k * width + c)
    if rows:
        r, c, lin = xp.concatenate(rows), xp.concatenate(cols), xp.concatenate(src)
    else:
        r = c = lin = xp.zeros(0, xp.int64)
    vals = _gather_rows(d2.reshape(-1), lin)
    out = _make(sparse_coo, (m, n), _wrap(xp.stack((r, c))), None, vals, False)
    return out if layout in (None, sparse_coo) else _to_compressed(out, layout, None, None)


class check_sparse_tensor_invariants:
    """Context manager / decorator turning on the sparse invariant checks of the factories
    (torch.sparse.check_sparse_tensor_invariants). ember always checks index bounds; the flag
    adds the sortedness check of compressed plain indices."""

    @staticmethod
    def is_enabled() -> bool:
        from .sparse import _Invariants

        return _Invariants.on

    @staticmethod
    def enable() -> None:
        from .sparse import _Invariants

        _Invariants.on = True
        _Invariants.explicit = True

    @staticmethod
    def disable() -> None:
        from .sparse import _Invariants

        _Invariants.on = False
        _Invariants.explicit = True

    def __init__(self, enable: bool = True) -> None:
        self.state = enable
        self.saved = None

    def __enter__(self):
        if self.saved is not None:
            raise RuntimeError("This context manager instance is already activated.")
        self.saved = self.is_enabled()
        (self.enable if self.state else self.disable)()
        return self

    def __exit__(self, *exc) -> None:
        (self.enable if self.saved else self.disable)()
        self.saved = None

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return fn(*args, **kwargs)

        return wrapper


# ---------------------------------------------------------------------------- torch.smm & co
def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """torch.spmm: ``input @ mat2`` as a dense result, ``input`` sparse (or dense: ``mm``)."""
    if not isinstance(input, SparseTensor):
        return input.mm(mat2)
    return mm(input, mat2)


def smm(input: Tensor, mat: Tensor) -> Tensor:
    """``input @ mat`` (``input`` sparse COO 2-D) as a sparse tensor: every column of each
    row ``input`` stores something in."""
    return sspaddmm(_E.zeros(0), input, mat, beta=0.0, alpha=1.0, _who="smm")


def hspmm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` (``mat1`` sparse COO 2-D, ``mat2`` dense) as a hybrid sparse tensor: one
    sparse dim listing the rows ``mat1`` stores something in, each a dense row of the product."""
    if not isinstance(mat1, SparseTensor) or mat1._lay is not sparse_coo:
        raise RuntimeError("hspmm: expected a sparse COO first argument")
    prod = _mm(mat1, mat2, "hspmm")
    rows, _, _ = _coo2d(mat1, "hspmm")
    xp = array_module(rows)
    ur = xp.unique(rows)
    # torch flags the result uncoalesced although its rows come out sorted and unique
    return _make(sparse_coo, tuple(prod.shape), _wrap(ur[None]), None, _gather_rows(prod, ur))


def _narrow_copy(self, dim, start, length):
    """``narrow`` as a copy, on a sparse COO tensor: the entries inside the range, shifted."""
    if self._lay is not sparse_coo:
        raise _not_sparse_error(self._lay, "narrow_copy")
    d, nd = int(dim), self.dim()
    if not 0 <= d < nd:  # torch's sparse kernel wraps neither dim nor start
        raise RuntimeError(f"Dimension {d} out of range. Expecting 0 <= dim < {nd}.")
    size = self._shp[d]
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < 0 or start + length > size:
        raise RuntimeError(
            "Invalid range to narrow. range(start, start+length) must be a subset of "
            f"range(0, {size})."
        )
    shape = list(self._shp)
    shape[d] = length
    sd = self.sparse_dim()
    if d >= sd:  # a dense dim: narrow every stored value, keep the pattern
        v = self._vals.narrow_copy(d - sd + 1, start, length)
        return _make(sparse_coo, shape, self._ci.clone(), None, v, self._coal)
    idx = self._ci._data
    xp = array_module(idx)
    keep = xp.flatnonzero((idx[d] >= start) & (idx[d] < start + length))
    ci = idx[:, keep]
    ci[d] -= start  # a fresh array (fancy indexing copies)
    return _make(sparse_coo, shape, _wrap(ci), None, _gather_rows(self._vals, keep), self._coal)


def _select(self: SparseTensor, dim, index, _getitem=False) -> Tensor:
    """``select`` of a sparse tensor (any layout; torch answers in COO): the entries at
    ``index`` along ``dim``, one dim fewer; dense when no sparse dim is left (the entries there
    summed, duplicates included). torch flags the result uncoalesced unless nnz <= 1."""
    nd = self.dim()
    d = _wrap_dim(dim, nd)
    size, i = self._shp[d], int(index)
    if not -size <= i < size:
        if _getitem:
            raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
        raise IndexError(
            f"select(): index {i} out of range for tensor of size {list(self._shp)} at "
            f"dimension {d}"
        )
    i += size if i < 0 else 0
    # a compressed input's entries are sorted and unique, and torch flags its answer so
    comp = self._lay is not sparse_coo
    s = _to_coo(self, None) if comp else self
    sd = s.sparse_dim()
    shape = self._shp[:d] + self._shp[d + 1 :]
    if d >= sd:  # a dense dim: every stored value selects along it
        v = s._vals.select(d - sd + 1, i)
        return _make(sparse_coo, shape, s._ci.clone(), None, v, comp or v.shape[0] <= 1)
    idx = s._ci._data
    xp = array_module(idx)
    keep = xp.flatnonzero(idx[d] == i)
    vals = _gather_rows(s._vals, keep)
    if sd == 1:  # the last sparse dim: a dense tensor of the dense dims
        return _segsum(vals, _long(xp, xp.zeros(keep.shape[0], xp.int64)), 1)[0]
    ci = xp.delete(idx[:, keep], d, axis=0)
    return _make(sparse_coo, shape, _wrap(ci), None, vals, comp or keep.shape[0] <= 1)


def _unbind(self: SparseTensor, dim=0):
    d = _wrap_dim(dim, self.dim())
    return tuple(_select(self, d, i) for i in range(self._shp[d]))


_INDEX_DTYPES = (_dt.int8, _dt.int16, _dt.int32, _dt.int64)  # a 0-d one indexes as an int


def _sparse_getitem(self: SparseTensor, index):
    """``t[...]`` with ints (or 0-d integer tensors), None, ``...`` and ``:``, the keys torch's
    sparse tensors take (select / unsqueeze); anything else: the dense path's error."""
    key = index if isinstance(index, tuple) else (index,)
    plain = True  # only ``:`` / ``...``: torch's alias has no sparse kernel either
    for k in key:
        if k is None or (isinstance(k, Integral) and not isinstance(k, bool)):
            plain = False
        elif isinstance(k, Tensor) and not isinstance(k, SparseTensor):
            if k.dim() or k.dtype not in _INDEX_DTYPES:
                return Tensor.__getitem__(self, index)
            plain = False
        elif not (k is Ellipsis or k == slice(None)):
            return Tensor.__getitem__(self, index)
    if plain or len([k for k in key if k is Ellipsis]) > 1:
        return Tensor.__getitem__(self, index)
    used = len([k for k in key if k is not None and k is not Ellipsis])
    if used > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    e = next((j for j, k in enumerate(key) if k is Ellipsis), None)
    if e is not None:
        key = key[:e] + (slice(None),) * (self.dim() - used) + key[e + 1 :]
    if self._lay is not sparse_coo and any(k is None for k in key):
        return Tensor.__getitem__(self, index)
    t, d = self, 0
    for j, k in enumerate(key):
        if not isinstance(t, SparseTensor):  # every sparse dim selected: the rest is dense
            return t[(slice(None),) * d + key[j:]]
        if k is None:
            t, d = _unsqueeze(t, d), d + 1
        elif isinstance(k, slice):
            d += 1
        else:
            t = _select(t, d, int(k), _getitem=True)
    return t


def sspaddmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1.0, alpha=1.0, _who=None):
    """``beta * input + alpha * (mat1 @ mat2)``: ``input`` and ``mat1`` sparse COO, the result
    sparse COO (the entries of ``input``, then full rows of the product)."""
    if not isinstance(input, SparseTensor) and _who is None:
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if not isinstance(mat1, SparseTensor):
        raise RuntimeError(  # noqa: TRY004
            "tensor.sspaddmm(...) can only be called on sparse tensors"
        )
    prod = _mm(mat1, mat2)
    rows, _, _ = _coo2d(mat1, "addmm")
    xp = array_module(rows)
    ur = xp.unique(rows)
    p = prod.shape[1]
    idx = xp.stack((xp.repeat(ur, p), xp.tile(xp.arange(p, dtype=xp.int64), ur.shape[0])))
    pv = _gather_rows(prod, ur).reshape(-1)
    if alpha != 1:
        pv = pv * alpha
    shape = tuple(prod.shape)
    if _who is not None:  # smm: torch flags its result uncoalesced (rows sorted though)
        return _make(sparse_coo, shape, _wrap(idx), None, pv, False)
    if tuple(input.shape) != shape:
        raise RuntimeError(
            f"sspaddmm: Argument #1 (t): Expected dim 0 size {shape[0]}, got {input.shape[0]}"
        )
    base = _to_coo(input, None)
    bv = base._vals if beta == 1 else base._vals * beta
    idx = xp.concatenate((base._ci._data, idx), axis=1)
    return _make(sparse_coo, shape, _wrap(idx), None, _E.cat([bv, pv.to(bv.dtype)]), False)


# ---------------------------------------------------------------------------- methods
def _binary_parts(a: SparseTensor, b: SparseTensor, who):
    if tuple(a._shp) != tuple(b._shp):
        raise RuntimeError(
            f"{who}: expected sizes of 'self' and 'other' to match, but {list(a._shp)} != "
            f"{list(b._shp)}"
        )
    return _to_coo(a, None), _to_coo(b, None)


def _add(self, other, alpha=1):
    if isinstance(other, SparseTensor):
        a, b = _binary_parts(self, other, "add")
        if a.sparse_dim() != b.sparse_dim():
            raise RuntimeError("add: the two sparse tensors must have the same sparse_dim")
        bv = b._vals if alpha == 1 else b._vals * alpha
        if a._coal and b._coal:  # the merge of two sorted, unique lists: their coalesced union
            idx = _E.cat([a._ci, b._ci], 1)
            out = _make(sparse_coo, a._shp, idx, None, _E.cat([a._vals, bv]), False).coalesce()
        else:
            out = _merge_add(a, b, bv)
        if self._lay is sparse_coo:
            return out
        return _to_compressed(out, self._lay, tuple(self._vals.shape[1:3]) or None, None)
    if isinstance(other, Tensor) and self._lay in _COMPRESSED and alpha == 1:
        # torch adds a dense tensor of the same shape to a compressed one (a dense result)
        if tuple(other.shape) != tuple(self._shp):
            raise RuntimeError(
                f"add: expected 'self' and 'other' to have same size, but self has size "
                f"{list(other.shape)} while other has size {list(self._shp)} (FYI: op2-sparse "
                "addition does not currently support broadcasting)"
            )
        return _E.add(other, self.to_dense())
    if isinstance(other, Tensor):
        raise RuntimeError(  # noqa: TRY004
            "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
        )
    # a scalar would fill every unspecified entry: torch refuses it as it refuses a dense one
    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


def _merge_add(a: SparseTensor, b: SparseTensor, bv: Tensor) -> SparseTensor:
    """``a + b`` for COO operands not both coalesced, entry for entry as torch's kernel makes
    it: one pass over both entry lists in their stored order, the smaller index first and equal
    heads summed into one entry (so duplicates stay, unsorted runs stay unsorted); flagged
    uncoalesced. Gradients reach both operands' values."""
    xp = array_module(a._ci._data)
    sd = a.sparse_dim()
    ka = _ravel(xp, a._ci._data, a._shp[:sd]).tolist()  # row-major rank: lexicographic order
    kb = _ravel(xp, b._ci._data, a._shp[:sd]).tolist()
    na, nb = len(ka), len(kb)
    pos = [0] * (na + nb)  # the output entry of each input entry (a's, then b's)
    take = []  # the input entry whose index each output entry has
    i = j = 0
    while i < na or j < nb:
        r = len(take)
        if j < nb and (i >= na or kb[j] < ka[i]):
            pos[na + j] = r
            take.append(na + j)
            j += 1
            continue
        if j < nb and kb[j] == ka[i]:  # equal heads: one entry
            pos[na + j] = r
            j += 1
        pos[i] = r
        take.append(i)
        i += 1
    ci = xp.concatenate([a._ci._data, b._ci._data], axis=1)[:, xp.asarray(take, dtype=xp.int64)]
    p = _long(xp, xp.asarray(pos, dtype=xp.int64))
    return _make(sparse_coo, a._shp, _wrap(ci), None, _segsum(_E.cat([a._vals, bv]), p, len(take)))


def _radd(self, other):
    if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
        return other + self.to_dense()  # dense + sparse: a dense result, like torch
    return _add(self, other)


def _sub(self, other, alpha=1):
    if isinstance(other, SparseTensor):
        return _add(self, other, -alpha)
    if isinstance(other, Tensor) and self._lay in _COMPRESSED:
        raise RuntimeError(f"unsupported tensor layout: {_TNAME[self._lay]}")
    return _add(self, other, None)  # add's error for a dense or scalar operand


def _rsub(self, other):
    if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
        return other - self.to_dense()
    return _add(self, other)


def _mul_sparse(self: SparseTensor, other: SparseTensor) -> SparseTensor:
    """sparse * sparse: the product at the positions both store (an intersection; the
    duplicates of either operand summed first): COO * COO is COO; a CSR ``self`` takes any
    sparse operand and gives CSR, as torch's kernels do (the rest they refuse)."""
    if self._lay in _BLOCK:
        raise RuntimeError(
            "empty_sparse_compressed expected sparse compressed (non-block) tensor layout but "
            f"got {_TNAME[self._lay]}"
        )
    if self._lay is not sparse_csr and (
        self._lay is not sparse_coo or other._lay is not sparse_coo
    ):
        raise RuntimeError("Expected result Tensor to be of format CSR")
    if (
        self.dim() != other.dim()
        or self.sparse_dim() != other.sparse_dim()
        or tuple(self._shp[: self.sparse_dim()]) != tuple(other._shp[: other.sparse_dim()])
    ):
        raise RuntimeError(
            "sparse_binary_op_intersection_cpu(): expects sparse inputs with equal "
            "dimensionality, number of sparse dimensions, and shape of sparse dimensions"
        )
    a, b = _to_coo(self, None).coalesce(), _to_coo(other, None).coalesce()
    sd = a.sparse_dim()
    xp = array_module(a._ci._data)
    la = _ravel(xp, a._ci._data, a._shp[:sd])
    lb = _ravel(xp, b._ci._data, b._shp[:sd])
    # both sorted and unique after coalesce: each entry of a finds its match in b by bisection
    pos = xp.minimum(xp.searchsorted(lb, la), max(lb.shape[0] - 1, 0))
    hit = lb[pos] == la if lb.shape[0] else xp.zeros(la.shape[0], bool)
    ia = xp.flatnonzero(hit)
    ib = pos[ia]
    vals = a._vals.index_select(0, _long(xp, ia)) * b._vals.index_select(0, _long(xp, ib))
    shape = _E.broadcast_shapes(tuple(a._shp), tuple(b._shp))
    out = _make(sparse_coo, shape, _wrap(a._ci._data[:, ia]), None, vals, True)
    return out if self._lay is sparse_coo else _to_compressed(out, sparse_csr, None, None)


def _mul(self, other):
    if isinstance(other, SparseTensor):
        return _mul_sparse(self, other)
    if isinstance(other, Tensor):
        if other.dim() == 0:
            return self._like(self._vals * other)
        if self._lay is sparse_csr and tuple(other.shape) == tuple(self._shp) and self.dim() == 2:
            # torch keeps a CSR operand's pattern: each stored value times the dense entry there
            xp = array_module(self._ci._data)
            rows = _expand_ptr(xp, self._ci._data)
            lin = _long(xp, rows * self._shp[1] + self._pi._data)
            return self._like(self._vals * other.reshape(-1).index_select(0, lin))
        if other.dim() <= self.dim() and self._lay is sparse_coo:
            try:  # a dense operand that broadcasts to the sparse shape (torch's rule too)
                other = other.expand(self._shp)
            except RuntimeError:
                pass
        if tuple(other.shape) != tuple(self._shp) or self._lay is not sparse_coo:
            raise RuntimeError(
                "mul: ember supports sparse COO * dense only for a dense tensor of the same shape"
            )
        sd = self.sparse_dim()
        idx = self._ci._data
        lin = _ravel(array_module(idx), idx, self._shp[:sd])
        d = _gather_rows(other.reshape(_prod(self._shp[:sd]), *self._shp[sd:]), lin)
        return self._like(self._vals * d)
    return self._like(self._vals * other)


def _div(self, other, *, rounding_mode=None, _who="division"):
    if isinstance(other, Tensor) and other.dim() != 0:
        raise RuntimeError(
            f"Sparse {_who} requires a scalar or zero-dim dense tensor divisor (got shape "
            f"{list(other.shape)} for divisor)"
        )
    if rounding_mode is None:  # linear: duplicates may stay uncoalesced
        return self._like(self._vals / other)
    s = self.coalesce() if self._lay is sparse_coo else self  # rounding a sum of duplicates
    return s._like(_E.div(s._vals, other, rounding_mode=rounding_mode))


def _floor_divide(self, other):
    return _div(self, other, rounding_mode="floor", _who="floor division")


def _neg(self):
    return self._like(-self._vals)


def _mv(self: SparseTensor, vec: Tensor) -> Tensor:
    """sparse matrix @ dense vector: a dense vector, after torch's checks of the shapes."""
    if self._lay is sparse_coo:
        if self.dim() != 2 or vec.dim() != 1:
            raise RuntimeError(
                f"mv: two tensor dim should be 2 and 1, but got SparseTensor Dim: {self.dim()}"
                f"Tensor Dim: {vec.dim()}"
            )
        if self._shp[1] != vec.shape[0]:
            raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
    elif vec.dim() == 1 and self.dim() == 2 and self._shp[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self._shp[0]}), mat ({self._shp[0]}x{self._shp[1]}), "
            f"vec ({vec.shape[0]})"
        )
    return _mm(self, vec.unsqueeze(1), "addmm").squeeze(1)


def _matmul(self, other):
    if isinstance(other, SparseTensor):
        return mm(self, other)
    if isinstance(other, Tensor) and other.dim() == 1:  # matrix @ vector: a dense vector
        if self.dim() > 2:  # torch's matmul folds the batch dims with a reshape
            raise RuntimeError("reshape is not implemented for sparse tensors")
        return _mv(self, other)
    return _mm(self, other, "addmm")


# the elementwise ops that map 0 to 0, so a sparse result keeps the sparsity pattern; torch
# coalesces a COO input first (f(a) + f(b) is not f(a + b) for duplicate entries)
_ZERO_PRESERVING = [
    "abs",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "ceil",
    "deg2rad",
    "erf",
    "erfinv",
    "expm1",
    "floor",
    "frac",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "log1p",
    "nan_to_num",
    "rad2deg",
    "relu",
    "round",
    "sgn",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "trunc",
]


def _pointwise(name: str):
    def h(input, *args, **kwargs):
        if not _is_sparse(input):
            return NotImplemented
        s = input.coalesce() if input._lay is sparse_coo else input
        return s._like(getattr(_E, name)(s._vals, *args, **kwargs))

    h.__name__ = name
    return h


def _pow_scalar(input, exponent):
    if not _is_sparse(input):
        return NotImplemented
    # like torch, a negative power also acts on the stored values only; 0 would fill everything
    if exponent == 0:
        raise RuntimeError(
            "pow: cannot raise to zeroth power on sparse tensor; it would make the result "
            "tensor dense"
        )
    return _pointwise("pow")(input, exponent)


_FLIPPED = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc}
_FLIPPED[sparse_bsc] = sparse_bsr


def _transpose(self, dim0, dim1):
    nd = self.dim()
    d0, d1 = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
    if self._lay is not sparse_coo:
        if d0 == d1:
            return self
        if self.dense_dim():
            raise RuntimeError(
                "transpose(): hybrid sparse compressed tensors with dense dimensions are not "
                "supported"
            )
        if {d0, d1} != {0, 1}:
            raise RuntimeError(
                f"transpose: ember transposes the two sparse dims of a {self._lay} tensor only"
            )
        # the compressed rows of a matrix are the compressed columns of its transpose: the same
        # index arrays in the other layout (a block is transposed in place too)
        vals = self._vals.transpose(1, 2) if self._lay in _BLOCK else self._vals
        shape = (self._shp[1], self._shp[0], *self._shp[2:])
        return _make(_FLIPPED[self._lay], shape, self._ci, self._pi, vals)
    sd = self.sparse_dim()
    if d0 == d1:
        return self
    if d0 >= sd or d1 >= sd:  # torch swaps sparse dims only (two dense ones neither)
        raise RuntimeError(
            f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {sd}, "
            f"d0: {d0}, d1: {d1}"
        )
    shape = list(self._shp)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    idx = self._ci._data.copy()
    idx[[d0, d1]] = idx[[d1, d0]]
    # torch flags the swap uncoalesced unless nothing is stored
    return _make(sparse_coo, shape, _wrap(idx), None, self._vals, idx.shape[1] == 0)


def _unsqueeze(self, dim):
    if self._lay is not sparse_coo:
        return NotImplemented
    nd, sd = self.dim(), self.sparse_dim()
    if not -nd - 1 <= dim <= nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd - 1}, {nd}], but got {dim})"
        )
    d = dim + nd + 1 if dim < 0 else dim
    shape = (*self._shp[:d], 1, *self._shp[d:])
    idx = self._ci._data
    one = idx.shape[1] <= 1  # torch: not coalesced, unless it stores at most one entry
    if d > sd:  # a new dense dim: the values grow it
        return _make(sparse_coo, shape, self._ci, None, self._vals.unsqueeze(d - sd + 1), one)
    xp = array_module(idx)
    zero = xp.zeros((1, idx.shape[1]), dtype=idx.dtype)
    idx = xp.concatenate([idx[:d], zero, idx[d:]])
    return _make(sparse_coo, shape, _wrap(idx), None, self._vals, one)


def _permute(self, *dims):
    if self._lay is not sparse_coo:
        return NotImplemented
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    nd, sd = self.dim(), self.sparse_dim()
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    p = [_wrap_dim(d, nd) for d in dims]
    if len(set(p)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if any((a < sd) != (k < sd) for k, a in enumerate(p)):
        raise RuntimeError(
            "permute(sparse_coo): transpositions between sparse and dense dimensions are not "
            "allowed.Only transpositions within sparse and dense dimensions are supported."
        )
    shape = tuple(self._shp[a] for a in p)
    vals = self._vals.permute(0, *(a - sd + 1 for a in p[sd:]))
    same = p[:sd] == list(range(sd))
    ci = self._ci if same else _wrap(self._ci._data[p[:sd]])
    return _make(sparse_coo, shape, ci, None, vals, self._coal and same)


def _t(self):
    if self._lay is sparse_coo and (self.sparse_dim() > 2 or self.dense_dim()):
        raise RuntimeError(
            "t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
            f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions"
        )
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _transpose(self, 0, 1) if self.dim() == 2 else self


def _sum_method(self, dim=None, keepdim=False, dtype=None):
    if not keepdim:
        return sum(self, dim, dtype)
    if self._lay is not sparse_coo:
        raise RuntimeError("sum: keepdim=True is not supported on sparse compressed tensors")
    nd = self.dim()
    dims = range(nd) if dim is None else _dims(dim, nd)
    out = sum(self, dim, dtype)
    # torch's answer is the reduced one with each summed dim back as size 1: unsqueezed at
    # or below sparse_dim it is a sparse dim (index 0), even where a dense dim was summed
    for d in dims:
        out = _unsqueeze(out, d) if isinstance(out, SparseTensor) else out.unsqueeze(d)
    return out


_RESIZE_HINT = (
    "\nYou could try the following options:\n1. If you need an empty sparse tensor of this "
    "size, call `x = ember.sparse_coo_tensor(size)`.\n2. If you need to resize this tensor, "
    "you have the following options:\n    1. For both sparse and dense dimensions, keep the "
    "number of them constant and the size of them non-shrinking, and then try the same call "
    "again.\n    2. Or, create a new sparse tensor with the correct indices and values from "
    "this sparse tensor."
)


def _sparse_resize_(self, size, sparse_dim, dense_dim):
    if self._lay is not sparse_coo:
        raise RuntimeError(f"sparse_resize_: expected a sparse COO tensor, got {self._lay}")
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(
            f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({dense_dim}), "
            f"but got {len(size)}"
        )
    sd, dd = self.sparse_dim(), self.dense_dim()
    if self._nnz():
        if sd != sparse_dim:
            raise RuntimeError(
                f"changing the number of sparse dimensions (from {sd} to {sparse_dim}) on a "
                "non-empty sparse tensor is not supported." + _RESIZE_HINT
            )
        if dd != dense_dim:
            raise RuntimeError(
                f"changing the number of dense dimensions (from {dd} to {dense_dim}) on a "
                "non-empty sparse tensor is not supported." + _RESIZE_HINT
            )
        old = list(self._shp)
        if any(n < o for n, o in zip(size[:sd], old[:sd])):
            raise RuntimeError(
                f"shrinking the size of sparse dimensions (from {old[:sd]} to {list(size[:sd])})"
                " on a non-empty sparse tensor is not supported." + _RESIZE_HINT
            )
        if tuple(size[sd:]) != tuple(old[sd:]):
            raise RuntimeError(
                f"shrinking the size of dense dimensions (from {old[sd:]} to {list(size[sd:])})"
                " on a non-empty sparse tensor is not supported." + _RESIZE_HINT
            )
        self._shp = size
        return self
    return _resize_clear(self, size, sparse_dim)


def _resize_clear(self, size, sparse_dim):
    xp = array_module(self._ci._data)
    self._shp = tuple(int(s) for s in size)
    self._ci = _wrap(xp.zeros((sparse_dim, 0), xp.int64))
    v = self._vals
    self._vals = _E.zeros((0, *self._shp[sparse_dim:]), dtype=v.dtype, device=v.device)
    self._coal = True
    return self


def _sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
    if self._lay is not sparse_coo:
        raise RuntimeError(
            f"sparse_resize_and_clear_: expected a sparse COO tensor, got {self._lay}"
        )
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(
            f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({dense_dim}), "
            f"but got {len(size)}"
        )
    return _resize_clear(self, size, sparse_dim)


def _resize_as_sparse_(self, other):
    if not isinstance(self, SparseTensor) or not isinstance(other, SparseTensor):
        raise RuntimeError(  # noqa: TRY004
            "resize_as_sparse_: expected sparse COO tensors for self and the_template"
        )
    return _sparse_resize_(self, other.shape, other.sparse_dim(), other.dense_dim())


def _sparse_mask(self, mask):
    """The entries of ``self`` at the positions ``mask`` (sparse) stores, with mask's layout."""
    if not isinstance(mask, SparseTensor):
        raise RuntimeError(  # noqa: TRY004
            "sparse_mask(): expected mask to be a sparse tensor, got a strided one"
        )
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(
            "sparse_mask(): operands have incompatible sizes; self has size "
            f"{list(self.shape)} but mask has size {list(mask.shape)}"
        )
    if isinstance(self, SparseTensor):
        self = self.to_dense()
    if mask._lay in _BLOCK:
        raise RuntimeError("sparse_mask(): ember does not support block sparse (bsr/bsc) masks")
    sd = mask.sparse_dim()
    coo = _to_coo(mask, None)  # a CSC mask lists its entries column by column, like its values
    idx = coo._ci._data
    lin = _ravel(array_module(idx), idx, self.shape[:sd])
    return mask._like(_gather_rows(self.reshape(_prod(self.shape[:sd]), *self.shape[sd:]), lin))


def _inplace(f, cast_error):
    """``self.<op>_(...)``: the out-of-place op, its result then taking ``self``'s place (its
    indices, values and coalesced flag), as torch's sparse in-place kernels leave it;
    ``cast_error(result dtype, self dtype, other)`` words torch's refusal to narrow the dtype."""

    def g(self, other, *args, **kwargs):
        if self.is_leaf and self.requires_grad and _E.is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        out = f(self, other, *args, **kwargs)
        if tuple(out.shape) != tuple(self._shp) or out._lay is not self._lay:
            raise RuntimeError(
                f"output with shape {list(self._shp)} doesn't match the broadcast shape "
                f"{list(out.shape)}"
            )
        vals = out._vals
        if vals.dtype is not self.dtype:
            if not _E.can_cast(vals.dtype, self.dtype):
                r, o = _dt.scalar_name(vals.dtype), _dt.scalar_name(self.dtype)
                raise RuntimeError(cast_error(r, o, other))
            vals = vals.to(self.dtype)
        self._ci, self._pi, self._vals, self._coal = out._ci, out._pi, vals, out._coal
        self._ver[0] += 1
        return self

    g.__name__ = f.__name__.lstrip("_") + "_"
    return g


# torch's words when an in-place sparse op's result dtype cannot narrow to self's
def _add_cast(r, o, other):
    return f"Can't convert result type {r} to output {o} in add operation"


def _mul_cast(r, o, other):
    if isinstance(other, SparseTensor):
        return f"Can't convert result type {r} to output {o}"
    return f"dtype of values ({r}) must match dtype of sparse tensor ({o})"


def _div_cast(r, o, other):
    return f"result type {r} can't be cast to the desired output type {o}"


def _install() -> None:
    m = {
        "__add__": _add,
        "add": _add,
        "__radd__": _radd,
        "__sub__": _sub,
        "sub": _sub,
        "__rsub__": _rsub,
        "__mul__": _mul,
        "__rmul__": _mul,
        "mul": _mul,
        "__truediv__": _div,
        "__floordiv__": _floor_divide,
        "floor_divide": _floor_divide,
        "div": _div,
        "add_": _inplace(_add, _add_cast),
        "sub_": _inplace(_sub, _add_cast),
        "mul_": _inplace(_mul, _mul_cast),
        "div_": _inplace(_div, _div_cast),
        "__neg__": _neg,
        "neg": _neg,
        "__matmul__": _matmul,
        "matmul": _matmul,
        "mm": _matmul,
        "smm": lambda self, mat: smm(self, mat),
        "narrow_copy": _narrow_copy,
        "sspaddmm": lambda self, mat1, mat2, *, beta=1, alpha=1: sspaddmm(
            self, mat1, mat2, beta=beta, alpha=alpha
        ),
        "transpose": _transpose,
        "t": _t,
        "sum": _sum_method,
        "sparse_resize_": _sparse_resize_,
        "sparse_resize_and_clear_": _sparse_resize_and_clear_,
        "resize_as_sparse_": _resize_as_sparse_,
        "sparse_mask": _sparse_mask,
        "select": _select,
        "unbind": _unbind,
        "__getitem__": _sparse_getitem,
    }
    for n, f in m.items():
        setattr(SparseTensor, n, f)

    # the dense Tensor's side: conversions, sparse_mask, and torch's errors for the rest
    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        return _to_sparse(self, args, layout, blocksize, dense_dim)

    def _layout_error(name, kind):
        def f(self, *args, **kwargs):
            raise RuntimeError(f"{name} expected {kind} tensor layout but got Strided")

        f.__name__ = name
        return f

    def _not_sparse(name, exc=RuntimeError, msg=None):
        def f(self, *args, **kwargs):
            raise exc(
                msg
                or f"Could not run 'aten::{name}' with arguments from the 'CPU' backend "
                "(a dense tensor): ember's {name} needs a sparse tensor".format(name=name)
            )

        f.__name__ = name
        return f

    dense = {
        "to_sparse": to_sparse,
        "to_sparse_coo": lambda self: _to_coo(self, None),
        "to_sparse_csr": lambda self, dense_dim=None: _to_compressed(
            self, sparse_csr, None, dense_dim
        ),
        "to_sparse_csc": lambda self, dense_dim=None: _to_compressed(
            self, sparse_csc, None, dense_dim
        ),
        "to_sparse_bsr": lambda self, blocksize, dense_dim=None: _to_compressed(
            self, sparse_bsr, blocksize, dense_dim
        ),
        "to_sparse_bsc": lambda self, blocksize, dense_dim=None: _to_compressed(
            self, sparse_bsc, blocksize, dense_dim
        ),
        "sparse_mask": _sparse_mask,
        "indices": _layout_error("indices", "sparse coordinate"),
        "values": _layout_error("values", "sparse"),
        "coalesce": _layout_error("coalesce", "sparse coordinate"),
        "is_coalesced": _layout_error("is_coalesced", "sparse coordinate"),
        "crow_indices": _layout_error("crow_indices", "sparse row compressed"),
        "col_indices": _layout_error("col_indices", "sparse row compressed"),
        "ccol_indices": _layout_error("ccol_indices", "sparse column compressed"),
        "row_indices": _layout_error("row_indices", "sparse column compressed"),
        "smm": _not_sparse("smm", msg="tensor.sspaddmm(...) can only be called on sparse tensors"),
        "sspaddmm": _not_sparse(
            "sspaddmm", msg="tensor.sspaddmm(...) can only be called on sparse tensors"
        ),
        "sparse_resize_": _not_sparse("sparse_resize_", NotImplementedError),
        "sparse_resize_and_clear_": _not_sparse("sparse_resize_and_clear_", NotImplementedError),
        "resize_as_sparse_": _not_sparse(
            "resize_as_sparse_",
            msg="resize_as_sparse_: expected sparse COO tensors for self and the_template",
        ),
    }
    for n, f in dense.items():
        if n not in Tensor.__dict__:
            f.__name__ = n
            setattr(Tensor, n, f)


def _is_sparse(t) -> bool:
    return isinstance(t, SparseTensor)


def _h_mm(input, mat2):
    if _is_sparse(input):
        return _matmul(input, mat2)
    if _is_sparse(mat2) and isinstance(input, Tensor):
        return input @ mat2.to_dense()  # dense @ sparse: a dense result, like torch
    return NotImplemented


def _h_addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if _is_sparse(mat1) and not _is_sparse(input) and not _is_sparse(mat2):
        return addmm(input, mat1, mat2, beta=beta, alpha=alpha)
    return NotImplemented


def _h_add(input, other, *, alpha=1):
    if _is_sparse(input):
        return _add(input, other, alpha)
    if _is_sparse(other) and isinstance(input, Tensor):  # dense + sparse: dense, as torch
        return _E.add(input, other.to_dense(), alpha=alpha)
    return NotImplemented


def _h_sub(input, other, *, alpha=1):
    if _is_sparse(input):
        return _sub(input, other, alpha)
    if _is_sparse(other) and isinstance(input, Tensor):  # dense - sparse: dense, as torch
        return _E.sub(input, other.to_dense(), alpha=alpha)
    return NotImplemented


def _h_mul(input, other):
    if _is_sparse(input):
        return _mul(input, other)
    return _mul(other, input) if _is_sparse(other) else NotImplemented


def _h_mv(input, vec):
    if _is_sparse(input) and not _is_sparse(vec):  # sparse @ vector: a dense vector, as torch
        return _mv(input, vec)
    return NotImplemented


def _index_select(self: SparseTensor, dim, index) -> SparseTensor:
    """index_select of a COO tensor: for each entry of ``index`` in turn, the stored entries
    (duplicates and explicit zeros included, in their order) whose index along ``dim`` is it, as
    torch selects them; gradients reach the values."""
    d = _wrap_dim(dim, self.dim())
    if (
        not isinstance(index, Tensor)
        or isinstance(index, SparseTensor)
        or index.dim() != 1
        or index.dtype is not _dt.int64
    ):
        raise IndexError(
            "index_select() argument index must be 1-D strided (non-sparse) long-tensor."
        )
    size = self._shp[d]
    xp = array_module(self._ci._data)
    ix = index._data
    bad = (ix >= size) | (ix < -size)
    if bad.any():
        raise IndexError(
            f"index_select(): index contains {int(ix[bad][0])} that is out of range for tensor "
            f"of size {list(self._shp)} at dimension {d}"
        )
    ix = xp.where(ix < 0, ix + size, ix)
    shape = list(self._shp)
    shape[d] = ix.shape[0]
    sd = self.sparse_dim()
    if d >= sd:  # a dense dim: every stored value selects along it
        v = self._vals.index_select(d - sd + 1, _long(xp, ix))
        return _make(sparse_coo, shape, self._ci.clone(), None, v, False)
    idx = self._ci._data
    # each entry matches the run of equal values in the sorted index; one copy per match
    order = xp.argsort(ix, kind="stable")
    srt = ix[order]
    lo = xp.searchsorted(srt, idx[d], side="left")
    cnt = xp.searchsorted(srt, idx[d], side="right") - lo
    ent = xp.repeat(xp.arange(idx.shape[1], dtype=xp.int64), cnt)
    start = xp.cumsum(cnt) - cnt  # where each entry's copies begin in ``ent``
    k = order[xp.repeat(lo, cnt) + xp.arange(ent.shape[0], dtype=xp.int64) - start[ent]]
    by_k = xp.argsort(k, kind="stable")  # grouped by output position, then the input order
    ent, k = ent[by_k], k[by_k]
    ci = idx[:, ent]
    ci[d] = k
    vals = _gather_rows(self._vals, ent)
    return _make(sparse_coo, shape, _wrap(ci), None, vals, ent.shape[0] <= 1)


def _h_index_select(input, dim, index):
    if _is_sparse(input) and not _is_sparse(index):
        if input._lay is sparse_coo:
            return _index_select(input, dim, index)
        # a compressed input: through the dense tensor (gradients reach the values)
        return input.to_dense().index_select(dim, index).to_sparse()
    return NotImplemented


def _join_coo(tensors, dim, stack: bool):
    """cat/stack of COO tensors along a sparse dim, as torch joins them: every operand's
    entries in turn (uncoalesced), their indices along ``dim`` offset (cat) or a new index row
    naming the operand (stack); None when torch's sparse kernel does not take these inputs
    (a compressed operand, a dense dim) and the caller's own path decides."""
    tensors = list(tensors)
    if not tensors or not any(_is_sparse(t) for t in tensors):
        return None
    for i, t in enumerate(tensors):
        if not _is_sparse(t):
            raise RuntimeError(
                f"Concatenating sparse tensors, but a dense tensor was found at position {i}."
            )
    if any(t._lay is not sparse_coo for t in tensors):
        return None
    s0 = list(tensors[0]._shp)
    sd = tensors[0].sparse_dim()
    for i, t in enumerate(tensors):
        si = list(t._shp)
        if stack and si != s0:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {s0} at entry 0 and {si} "
                f"at entry {i}"
            )
    d = _wrap_dim(dim, len(s0) + stack)
    if not stack:
        for i, t in enumerate(tensors):
            si = list(t._shp)
            if len(si) != len(s0) or si[:d] + si[d + 1 :] != s0[:d] + s0[d + 1 :]:
                raise RuntimeError(
                    f"All tensors must have the same shape: {s0} (except in the concatenating "
                    f"dimension), but found shape: {si} at position {i}."
                )
    if d > sd or (not stack and d == sd) or any(t.sparse_dim() != sd for t in tensors):
        return None
    xp = array_module(tensors[0]._ci._data)
    parts, off = [], 0
    for i, t in enumerate(tensors):
        idx = t._ci._data
        if stack:
            row = xp.full((1, idx.shape[1]), i, dtype=xp.int64)
            idx = xp.concatenate((idx[:d], row, idx[d:]))
        else:
            idx = idx.copy()
            idx[d] += off
            off += t._shp[d]
        parts.append(idx)
    shape = list(s0)
    if stack:
        shape.insert(d, len(tensors))
    else:
        shape[d] = off
    vals = _E.cat([t._vals for t in tensors])
    return _make(sparse_coo, shape, _wrap(xp.concatenate(parts, axis=1)), None, vals, False)


def _h_stack(tensors, dim=0):
    out = _join_coo(tensors, dim, True)
    if out is not None:
        return out
    if all(_is_sparse(t) for t in tensors):  # sparse tensors stack into a sparse tensor
        return _E.stack([t.to_dense() for t in tensors], dim).to_sparse()
    return NotImplemented


def _h_cat(tensors, dim=0, **kwargs):
    out = None if kwargs.get("out") is not None else _join_coo(tensors, dim, False)
    return NotImplemented if out is None else out


def _h_sum(input, dim=None, keepdim=False, *, dtype=None):
    return _sum_method(input, dim, keepdim, dtype) if _is_sparse(input) else NotImplemented


def _only_sparse_first(f):
    def h(input, *args, **kwargs):
        return f(input, *args, **kwargs) if _is_sparse(input) else NotImplemented

    return h


# the functional forms (ember.mm(s, d), ember.add(d, s) ...): the registry calls these when one
# of its dense ops meets a sparse input (see core/registry.py NON_STRIDED)
NON_STRIDED.update(
    {
        "mm": _h_mm,
        "matmul": _h_mm,
        "addmm": _h_addmm,
        "add": _h_add,
        "sub": _h_sub,
        "mul": _h_mul,
        "sum": _h_sum,
        "mv": _h_mv,
        "_index_select": lambda input, index, dim=0: _h_index_select(input, dim, index),
        "_stack": _h_stack,
        "_cat": _h_cat,
        "neg": _only_sparse_first(_neg),
        "div": _only_sparse_first(_div),
        "floor_divide": _only_sparse_first(_floor_divide),
        "t": _only_sparse_first(_t),
        "narrow_copy": _only_sparse_first(_narrow_copy),
        "transpose": _only_sparse_first(_transpose),
        "unsqueeze": _only_sparse_first(_unsqueeze),
        "permute": _only_sparse_first(_permute),
        "select": _only_sparse_first(_select),
        "unbind": _only_sparse_first(_unbind),
        "_pow_scalar": _pow_scalar,
        **{n: _pointwise(n) for n in _ZERO_PRESERVING},
    }
)
_install()
_ = (_COMPRESSED, _ROWS, _TNAME)  # re-exported helpers used by ember/sparse.py
