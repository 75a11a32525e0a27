"""The rest of ``torch.Tensor``'s public methods: strided windows (unfold), put, fill_diagonal_,
hardshrink/prelu, legacy constructors and resizes, Python-callable maps, and the predicates and
quantization accessors that are constant (or raise) for ember's dense CPU/GPU tensors.

Methods that compute something differentiable are registered ops (one entry: kernel + vjp + name
rule); the rest are plain functions installed on Tensor with setattr at the end of this module.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtype as _dt
from ..autocast import entry as _autocast_entry
from ..device import array_module
from ..dims import normalize_dim
from ..names import FALLBACK, check_weight_dims, keep
from ..registry import check_metadata_inplace, op
from ..tensor import Tensor, _wrap
from .activation import _prelu_kernel, check_prelu_dtypes
from .pointwise import _tie
from .shape import _ints_arg, _ints_error

__all__ = [
    "as_strided_scatter",
    "eig",
    "hardshrink",
    "lstsq",
    "matrix_rank",
    "solve",
    "symeig",
]


# ---------------------------------------------------------------------- unfold
@op(name="_unfold", names=FALLBACK, view=True, method=False)
def _unfold(xp, input, dimension=0, size=1, step=1):
    """Every ``size``-long window of ``dimension``, ``step`` apart, as a new last dim (a view)."""
    nd = input.ndim
    d = dimension  # normalised by the method
    n = input.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if nd == 0:  # one window of size 1, or none
        return input.reshape(1)[:size]
    shape = list(input.shape)
    strides = list(input.strides)
    shape[d] = (n - size) // step + 1
    st = strides[d]
    strides[d] = st * step
    return xp.lib.stride_tricks.as_strided(input, (*shape, size), (*strides, st))


@_unfold.vjp
def _(grad, input_shape, dimension, size, step):
    nd = len(input_shape)
    if nd == 0:
        return grad.sum()  # (the window of size 0 has no element: a zero gradient)
    d = dimension
    n_win = grad.shape[d]
    xp = array_module(grad._data)
    # the source position of window i, element j is i*step + j: scatter-add the windows there
    idx = xp.arange(n_win, dtype=np.int64)[:, None] * step + xp.arange(size, dtype=np.int64)
    g = grad.movedim(-1, d + 1)
    shp = list(input_shape)
    shp[d] = n_win * size
    g = g.reshape(shp)
    return grad.new_zeros(tuple(input_shape)).index_add(d, _wrap(idx.reshape(-1)), g)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view with every ``size``-long slice of ``dimension`` (``step`` apart) in a new last dim."""
    d = normalize_dim(self, dimension)
    return _unfold(self, dimension=d, size=int(size), step=int(step))


# ---------------------------------------------------------------------- hardshrink
@op(names=keep)
def hardshrink(xp, input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0 (NaN stays NaN)."""
    return xp.where((input >= -lambd) & (input <= lambd), xp.zeros((), input.dtype), input)


@hardshrink.vjp
def _(grad, input, lambd):
    # NaN gets no gradient: torch's vectorized kernel (its scalar tail passes one)
    g = grad * _wrap(array_module(input._data).abs(input._data) > lambd)
    # torch's hardshrink_backward is a function of the input with a zero derivative
    return _tie(g, input, "HardshrinkBackwardBackward0")


def _prelu(self: Tensor, weight: Tensor) -> Tensor:
    """``x`` for x > 0, else ``weight * x`` (weight: one slope, or one per channel, dim 1)."""
    check_prelu_dtypes(self, weight)
    n = weight.numel()
    w = weight
    if n != 1:
        c = self.shape[1] if self.dim() >= 2 else (self.shape[0] if self.dim() else 1)
        if n != c:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {c}."
            )
        if self.dim() >= 2:
            if weight._names is not None and self._names is not None:
                # spec 4.3: a named slope is checked against the channel dim (dim 1)
                check_weight_dims("prelu", "channel", self._names, (1,), weight._names)
            w = weight.reshape((c,) + (1,) * (self.dim() - 2))
    else:
        w = weight.reshape(())
    return _prelu_kernel(self, w)


# ---------------------------------------------------------------------- put
def _check_put(index, source, n):
    if index.size != source.size:
        raise IndexError(
            f"put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.size}, index.numel() = {index.size}"
        )
    flat = index.reshape(-1)
    if flat.size:
        bad = (flat >= n) | (flat < -n)
        if bool(bad.any()):
            if not n:
                raise IndexError("put_(): Tried to put elements into an empty tensor")
            i = int(flat[bad.nonzero()[0][0]])
            raise IndexError(
                f"out of range: tried to access index {i} on a tensor of {n} elements."
            )
    return flat % max(n, 1) if flat.size else flat


@op(names=keep, inplace="put_")
def put(xp, input, index, source, accumulate=False):
    """``input`` seen flat, with ``source``'s elements written (or added) at ``index``."""
    if index.dtype != np.int64:
        raise RuntimeError(
            f"put_(): Expected a long tensor for index, but got {_scalar_word(index)}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_scalar_word(input)} and source.dtype = {_scalar_word(source)}"
        )
    flat_i = _check_put(index, source, input.size)
    out = input.copy().reshape(-1)
    src = source.reshape(-1).astype(input.dtype, copy=False)
    if accumulate:
        if xp is np:
            np.add.at(out, flat_i, src)
        else:
            xp.add.at(out, flat_i, src)
    else:
        out[flat_i] = src
    return out.reshape(input.shape)


_scalar_word = _dt.array_scalar_name


def _dtname(a):
    from ..dtype import _FROM_NP

    return str(_FROM_NP.get(a.dtype.type, a.dtype)).replace("ember.", "")


@put.vjp
def _(grad, index, accumulate, source_shape, needs):
    gi = gs = None
    n = max(grad.numel(), 1)
    idx = index.reshape(-1) % n
    if needs[0]:
        gi = grad if accumulate else grad.reshape(-1).index_fill(0, idx, 0).reshape(grad.shape)
    if needs[2]:
        gs = grad.reshape(-1)[idx].reshape(source_shape)  # (source: index's numel, any shape)
    return gi, None, gs


# ---------------------------------------------------------------------- fill_diagonal_
def _diag_positions(shape, wrap):
    nd = len(shape)
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    if nd > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    # flat positions of (i, i, ..., i); for tall 2-D matrices `wrap` restarts after ncols+1 rows
    numel = 1
    for s in shape:
        numel *= s
    step = sum(int(np.prod(shape[k + 1 :])) for k in range(nd))
    if nd == 2:
        rows, cols = shape
        end = numel if wrap or rows <= cols else cols * cols
        end = min(end, numel)
        return np.arange(0, end, step, dtype=np.int64) if rows and cols else np.zeros(0, np.int64)
    return np.arange(shape[0], dtype=np.int64) * step


@op(name="_fill_diagonal", names=keep, method=False, inplace="fill_diagonal_")
def _fill_diagonal(xp, input, fill_value=0, wrap=False):
    """``input`` with its main diagonal set to ``fill_value``."""
    pos = _diag_positions(input.shape, wrap)
    out = input.copy().reshape(-1)
    out[xp.asarray(pos)] = fill_value
    return out.reshape(input.shape)


@_fill_diagonal.vjp
def _(grad, wrap):
    pos = _diag_positions(tuple(grad.shape), wrap)
    xp = array_module(grad._data)
    return grad.reshape(-1).index_fill(0, _wrap(xp.asarray(pos)), 0).reshape(grad.shape)


# ---------------------------------------------------------------------- as_strided_scatter
def _strided_positions(xp, n, size, stride, storage_offset):
    """Flat positions (of an ``n``-element contiguous buffer) of an as_strided view, checked."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    off = 0 if storage_offset is None else int(storage_offset)
    need = off + sum((a - 1) * b for a, b in zip(size, stride)) + 1 if all(size) else 0
    if need > n or off < 0:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize 1 requiring a storage size of {need} are out of bounds for storage of "
            f"size {n}"
        )
    pos = xp.full(size, off, dtype=np.int64)
    for d, (k, st) in enumerate(zip(size, stride)):
        pos = pos + xp.arange(k, dtype=np.int64).reshape((k,) + (1,) * (len(size) - d - 1)) * st
    return pos


@op(names=FALLBACK, promote=True)
def as_strided_scatter(xp, input, src, size=(), stride=(), storage_offset=None):
    """A copy of ``input`` (contiguous) with ``src`` written into its
    ``as_strided(size, stride, storage_offset)`` view."""
    pos = _strided_positions(xp, input.size, size, stride, storage_offset)
    if pos.shape != src.shape:
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(pos.shape)}"
        )
    out = xp.ascontiguousarray(input).copy().reshape(-1)
    out[pos] = src
    return out.reshape(input.shape)


@as_strided_scatter.vjp
def _(grad, size, stride, storage_offset, needs):
    xp = array_module(grad._data)
    pos = _wrap(_strided_positions(xp, grad.numel(), size, stride, storage_offset).reshape(-1))
    flat = grad.reshape(-1)
    gi = flat.index_fill(0, pos, 0).reshape(grad.shape) if needs[0] else None
    gs = flat[pos].reshape(tuple(int(s) for s in size)) if needs[1] else None
    return gi, gs


# ---------------------------------------------------------------------- plain methods
def _split_with_sizes(self: Tensor, split_sizes, dim: int = 0):
    if not isinstance(split_sizes, (tuple, list)):  # (split() would take an int)
        raise _ints_error("split_with_sizes", "split_sizes", 2, split_sizes)
    return self.split(list(_ints_arg("split_with_sizes", "split_sizes", 2, split_sizes)), dim)


def _nonzero_static(self: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    nz = self.nonzero()
    k = nz.shape[0]
    if k >= size:
        return nz[:size]
    import ember  # the package namespace (cat lives in another ops module)

    return ember.cat([nz, nz.new_full((size - k, self.dim()), fill_value)])


def _dim_order(self: Tensor, *, ambiguity_check=False):
    st = self.stride()
    # dims from outermost to innermost: by decreasing stride, ties keep the logical order
    return tuple(sorted(range(self.dim()), key=lambda i: -st[i]))


def _new(self: Tensor, *args, device=None):
    """Legacy constructor: ``new(*sizes)`` (uninitialized), ``new(data)`` or ``new()``."""
    dev = device if device is not None else self.device
    if not args:
        return self.new_empty((0,), device=dev)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if all(isinstance(a, (int, np.integer)) for a in args):
        return self.new_empty(tuple(int(a) for a in args), device=dev)
    if len(args) == 1 and isinstance(args[0], tuple) and all(isinstance(a, int) for a in args[0]):
        return self.new_empty(args[0], device=dev)
    return self.new_tensor(args[0], device=dev)


def _new_empty_strided(
    self, size, stride, *, dtype=None, device=None, requires_grad=False, **kwargs
):
    import ember

    return ember.empty_strided(
        size,
        stride,
        dtype=dtype or self.dtype,
        device=device or self.device,
        requires_grad=requires_grad,
    )


def _resize(self: Tensor, *sizes) -> Tensor:
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return self.detach().clone().resize_(*sizes)


def _resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return self.detach().clone().resize_(*tensor.shape)


def _check_map(self, name):
    if self.requires_grad:
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
            f"instead."
        )
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _apply_(self: Tensor, callable) -> Tensor:
    """Apply a Python callable to every element, in place (CPU only, slow: as in torch)."""
    _check_map(self, "apply_")
    a = self._data
    flat = a.reshape(-1) if a.flags.c_contiguous else a.ravel()
    vals = [callable(v) for v in flat.tolist()]
    a[...] = np.asarray(vals, dtype=a.dtype).reshape(a.shape)
    self._ver[0] += 1
    return self


def _map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """``self[i] = callable(self[i], tensor[i])`` for every element (``tensor`` broadcasts)."""
    _check_map(self, "map_")
    a = self._data
    b = np.broadcast_to(tensor._data, a.shape).astype(a.dtype, copy=False)
    vals = [callable(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist())]
    a[...] = np.asarray(vals, dtype=a.dtype).reshape(a.shape)
    self._ver[0] += 1
    return self


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:
    """``self[i] = callable(self[i], x[i], y[i])`` for every element."""
    _check_map(self, "map2_")
    a = self._data
    b = np.broadcast_to(x._data, a.shape).astype(a.dtype, copy=False)
    c = np.broadcast_to(y._data, a.shape).astype(a.dtype, copy=False)
    vals = [callable(p, q, r) for p, q, r in zip(*(t.ravel().tolist() for t in (a, b, c)))]
    a[...] = np.asarray(vals, dtype=a.dtype).reshape(a.shape)
    self._ver[0] += 1
    return self


def _pin_memory(self: Tensor, device=None) -> Tensor:
    import ember

    if not ember.cuda.is_available() if hasattr(ember, "cuda") else True:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return self.clone()


def _record_stream(self: Tensor, stream) -> None:
    raise RuntimeError("unknown parameter type")


def _quantized_only(name):
    def f(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the "
            f"'{self.device.type.upper()}' backend: it takes a quantized tensor (see "
            "ember.quantize_per_tensor)."
        )

    f.__name__ = name
    return f


def _chalf(self: Tensor, memory_format=None) -> Tensor:
    raise TypeError("ember has no complex32 (chalf) dtype: use cfloat (complex64)")


def _is_same_size(self: Tensor, other: Tensor) -> bool:
    return tuple(self.shape) == tuple(other.shape)


def _output_nr(self: Tensor) -> int:
    ex = self._extra
    return int(ex["nr"]) if ex and "nr" in ex else 0


def _as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    """In place: make ``self`` the ``as_strided(size, stride, storage_offset)`` view of its own
    storage (its identity kept; recorded for autograd like ``as_strided``)."""
    import ember

    check_metadata_inplace(self)
    # an alias carries the old geometry into the graph: as_strided's backward reads its input
    r = ember.as_strided(self.view_as(self), size, stride, storage_offset)
    self._data = r._data
    self._names = None
    if r._grad_fn is not None:
        # a counter of its own: the alias saved for backward keeps the old (unbumped) one
        self._ver = [self._ver[0] + 1]
        self._grad_fn = r._grad_fn
    else:
        self._ver[0] += 1
    return self


def _ctype(a) -> str:
    """torch's name of a dtype's C type, as its set_ error message shows it."""
    n = _dtname(a)
    return _dt.C_NAMES.get(n, n)


def _set_(self: Tensor, source: Tensor | None = None) -> Tensor:
    """``set_(source)``: ``self`` shares ``source``'s memory, sizes and strides;
    ``set_()``: ``self`` becomes empty."""
    if source is not None and not isinstance(source, Tensor):
        raise TypeError(
            "ember's set_ takes a source tensor (or nothing): it has no Storage objects"
        )
    check_metadata_inplace(self)
    if source is None:
        xp = array_module(self._data)
        self._data = xp.empty((0,), dtype=self._data.dtype)
    else:
        if source.dtype != self.dtype:
            raise RuntimeError(
                f"Could not set tensor of type {_ctype(source._data)} to a tensor of type "
                f"{_ctype(self._data)}"
            )
        if source.device != self.device:
            raise RuntimeError(
                f'Attempted to set the storage of a tensor on device "{self.device}" to a '
                f'storage on different device "{source.device}".  This is no longer allowed; '
                f"the devices must match."
            )
        self._data = source._data
    self._names = None
    self._ver[0] += 1
    return self


def _share_memory_(self: Tensor) -> Tensor:
    """Move the data into shared memory (a file mapping: core/shared_memory.py), so child
    processes, forked or spawned, see this tensor's writes (``self`` keeps its identity). A no-op
    when already shared, or for gpu tensors. Views taken before the call keep the old memory
    (ember has no Storage object to move)."""
    from ..shared_memory import shared_copy

    if self.device.type == "meta":
        # torch's file-descriptor sharing is cpu-only and refuses a meta tensor (cuda: a no-op)
        raise RuntimeError("_share_fd_: only available on CPU")
    if self.device.type != "cpu" or self.is_shared():
        return self
    self._data = shared_copy(self._data)
    return self


def _false(self) -> bool:
    return False


def _removed(name, msg):
    def f(self, *args, **kwargs):
        raise RuntimeError(msg)

    f.__name__ = name
    return f


_GONE = "This function was deprecated since version 1.9 and is now removed. "
_REMOVED = {
    "eig": _GONE
    + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than "
    "real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
    "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
    "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)",
    "lstsq": _GONE
    + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
    "reversed arguments and does not return the QR decomposition in the returned tuple "
    "(although it returns other information about the problem).\n\nTo get the QR "
    "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
    "`torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
    "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
    "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\n"
    "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\n"
    "X = torch.linalg.lstsq(A, B).solution",
    "solve": _GONE
    + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has "
    "its arguments reversed and does not return the LU factorization.\n\nTo get the LU "
    "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
    "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\n"
    "X = torch.linalg.solve(A, B)",
    "symeig": _GONE
    + "The default behavior has changed from using the upper triangular portion of the matrix "
    "by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
    "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper "
    "else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced "
    "with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "reinforce": "reinforce() was removed.\nUse torch.distributions instead.",
}
# torch's removed namespace functions: the Tensor methods above but reinforce, and matrix_rank
_REMOVED_FUNCTIONS = {
    **{n: m for n, m in _REMOVED.items() if n != "reinforce"},
    "matrix_rank": _GONE.rstrip()
    + "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' "
    "was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.",
}


# torch's removed functions, with their signatures: a call raises torch's error naming what
# replaces them
def solve(input: Tensor, A: Tensor, *, out=None):
    raise RuntimeError(_REMOVED_FUNCTIONS["solve"])


def lstsq(input: Tensor, A: Tensor, *, out=None):
    raise RuntimeError(_REMOVED_FUNCTIONS["lstsq"])


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out=None):
    raise RuntimeError(_REMOVED_FUNCTIONS["symeig"])


def eig(self: Tensor, eigenvectors: bool = False, *, e=None, v=None):
    raise RuntimeError(_REMOVED_FUNCTIONS["eig"])


def matrix_rank(input: Tensor, tol=None, symmetric: bool = False, *, out=None):
    raise RuntimeError(_REMOVED_FUNCTIONS["matrix_rank"])


def _no_backend(msg, exc):
    def f(self, *args, **kwargs):
        raise exc(msg)

    return f


def _is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """True when both tensors view the same memory with the same offset, sizes and strides."""
    return (
        self.device == tensor.device
        and self.data_ptr() == tensor.data_ptr()
        and tuple(self.shape) == tuple(tensor.shape)
        and self.stride() == tensor.stride()
    )


def _orgqr(self: Tensor, input2: Tensor) -> Tensor:
    import ember  # ember.orgqr is linalg.householder_product (core/ops/decompositions.py)

    return ember.orgqr(self, input2)


def _ormqr(self: Tensor, input2: Tensor, input3: Tensor, left=True, transpose=False) -> Tensor:
    import ember  # ember.ormqr lives in another ops module

    return ember.ormqr(self, input2, input3, left, transpose)


def _unsafe(outs: tuple) -> tuple:
    """The unsafe_* splits: like torch's, the outputs share memory with the input but are not
    tracked as its views (no base, their own version counters), so they may be written in
    place, unlike split's (indexing.check_multi_view_inplace)."""
    for t in outs:
        ex = {k: v for k, v in (t._extra or {}).items() if k not in ("base", "vc", "gv")}
        ex["unsafe"] = True
        t._extra = ex
        t._ver = [0]
    return outs


def _volatile(self) -> bool:
    warnings.warn(
        "volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2
    )
    return False


_METHODS = {
    "unfold": unfold,
    "hardshrink": hardshrink,
    "prelu": _autocast_entry(_prelu, "prelu"),
    "split_with_sizes": _split_with_sizes,
    "unsafe_split_with_sizes": lambda self, *a, **k: _unsafe(_split_with_sizes(self, *a, **k)),
    "unsafe_split": lambda self, split_size, dim=0: _unsafe(self.split(split_size, dim)),
    "unsafe_chunk": lambda self, chunks, dim=0: _unsafe(self.chunk(chunks, dim)),
    "multinomial": lambda self, num_samples, replacement=False, *, generator=None: __import__(
        "ember"
    ).multinomial(self, num_samples, replacement, generator=generator),
    "nonzero_static": _nonzero_static,
    "dim_order": _dim_order,
    "const_data_ptr": lambda self: self.data_ptr(),
    "is_same_size": _is_same_size,
    "new": _new,
    "new_empty_strided": _new_empty_strided,
    "resize": _resize,
    "resize_as": _resize_as,
    "apply_": _apply_,
    "map_": _map_,
    "map2_": _map2_,
    "pin_memory": _pin_memory,
    "record_stream": _record_stream,
    "chalf": _chalf,
    "module_load": lambda self, other, assign=False: other,
    "int_repr": _quantized_only("int_repr"),
    "q_scale": _quantized_only("q_scale"),
    "q_zero_point": _quantized_only("q_zero_point"),
    "q_per_channel_scales": _quantized_only("q_per_channel_scales"),
    "q_per_channel_zero_points": _quantized_only("q_per_channel_zero_points"),
    "q_per_channel_axis": _quantized_only("q_per_channel_axis"),
    "qscheme": _quantized_only("qscheme"),
    # a dense tensor dequantizes to its float32 values (itself when already float32), like torch
    "dequantize": lambda self: self if self.dtype is _dt.float32 else self.float(),
    "to_dense": lambda self, dtype=None, *, masked_grad=None: (
        self if dtype in (None, self.dtype) else self.to(dtype)
    ),
    "dense_dim": lambda self: self.dim(),  # a dense tensor's dims are all dense
    "sparse_dim": lambda self: 0,
    "is_distributed": _false,
    "is_set_to": _is_set_to,
    "as_strided_": _as_strided_,
    "set_": _set_,
    "share_memory_": _share_memory_,
    "orgqr": _orgqr,
    "ormqr": _ormqr,
    "xpu": _no_backend("Torch not compiled with XPU enabled", AssertionError),
    "mtia": _no_backend("Torch not compiled with MTIA enabled", AssertionError),
    "ipu": _no_backend("PyTorch is not linked with support for ipu devices", RuntimeError),
    **{n: _removed(n, m) for n, m in _REMOVED.items()},
}
for _n, _f in _METHODS.items():
    if not hasattr(Tensor, _n):
        setattr(Tensor, _n, _f)

_PROPERTIES = {
    "output_nr": _output_nr,
    "name": lambda self: None,
    "grad_dtype": lambda self: self.dtype,
    "is_nested": _false,
    "is_mkldnn": _false,
    "is_xla": _false,
    "is_xpu": _false,
    "is_mps": _false,
    "is_vulkan": _false,
    "is_ipu": _false,
    "is_maia": _false,
    "is_mtia": _false,
    "volatile": _volatile,
}
for _n, _f in _PROPERTIES.items():
    if not hasattr(Tensor, _n):
        setattr(Tensor, _n, property(_f))
