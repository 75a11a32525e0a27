"""The meta device: tensors that have a shape, a dtype and a device but no data.

A meta tensor's array is a ``MetaArray``: an ndarray subclass over lazily zeroed memory (numpy's
zeros come from calloc, so the operating system maps pages only when they are written), which the
dispatcher knows by its type (``device_of`` answers ``meta``). Kernels run unchanged through
``meta_xp``, a module-like view of numpy whose results are MetaArrays.

Inside a kernel a meta array reads as the zeros it is made of, and small arrays (up to ``SMALL``
elements) behave as real arrays over those stand-in values: results are computed and kept, writes
land, so a kernel's bookkeeping (masks, counts, checks) stays consistent. Large arrays are shapes
only: element-wise ufuncs, matmul and the ones/full/zeros/empty factories compute just the
result's shape and dtype, other functions run and drop their result, writes (``out=``, item
assignment, ``fill``, ``copyto``, ``ufunc.at``) land nowhere, casts and copies allocate nothing.
Random draws draw nothing; linear algebra runs on identity stand-ins (zeros are singular). Ops
whose result depends on the values (nonzero, unique, masked_select, boolean masks, bincount,
equal) raise NotImplementedError on meta inputs through ``no_meta_kernel``, as torch's do;
``Tensor.item()``, ``.cpu()`` and ``.numpy()`` refuse with torch's messages. Indices computed from
stand-in values may fall out of bounds: reads take index 0 instead (the result's shape is the
same) and writes skip them. A meta array pickles as its shape and dtype.
"""

from __future__ import annotations

import importlib
import mmap
import sys
import types
import warnings

import numpy as np

from .device import device, register_backend
from .random import DEFAULT_SEED, Generator

META = device("meta")
# results up to this many elements are computed (from the zeros a meta tensor is made of) and
# kept, so a kernel's checks on small arrays see consistent values; larger ones are shapes only
SMALL = 1 << 16

_NO_DATA = "Cannot copy out of meta tensor; no data!"


def no_meta_kernel(xp, op: str) -> None:
    """Ops whose result (its shape, or a Python value) depends on the data, which a meta tensor
    does not have (nonzero, unique, masked_select, equal, ...): they raise on meta inputs, as
    torch's do."""
    if xp is meta_xp:
        raise NotImplementedError(
            f"{op}: attempted to run this operator with Meta tensors, but its result depends on "
            "the data, which a meta tensor does not have"
        )


class MetaArray(np.ndarray):
    """An array that stands for data it does not hold (see the module docstring)."""

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            target = out[0] if len(out) == 1 else out
            if not any(isinstance(o, MetaArray) and _writes_land(o) for o in out):
                return target  # a large meta array is written nothing (its pages stay unmapped)
            kwargs["out"] = tuple(plain(o) for o in out)
            getattr(ufunc, method)(*map(plain, inputs), **kwargs)
            return target
        if method == "__call__" and "where" not in kwargs:
            if ufunc.signature is None:
                shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
                if _big(shape):
                    return _elementwise(ufunc, shape, inputs, kwargs)
            elif ufunc is np.matmul:
                return _matmul(inputs, kwargs)
        elif method == "reduce" and kwargs.get("where", True) is True and _big(np.shape(inputs[0])):
            return _dims_kept(lambda a: ufunc.reduce(a, **kwargs), inputs[0])
        if method == "at":
            if _writes_land(inputs[0]):
                _ignore_bounds(getattr(ufunc, method), *map(plain_deep, inputs))
            return None
        with np.errstate(all="ignore"):
            return to_meta(getattr(ufunc, method)(*map(plain, inputs), **kwargs))

    def __array_function__(self, func, types_, args, kwargs):
        name = func.__name__
        if name in _WRITES:
            if _writes_land(args[0]):
                _ignore_bounds(func, *plain_deep(args), **plain_deep(kwargs))
            return None
        if name in _REDUCTIONS and "out" not in kwargs and _big(np.shape(args[0])):
            rest, kw = plain_deep(args[1:]), plain_deep(kwargs)
            return _dims_kept(lambda a: func(a, *rest, **kw), args[0])
        with np.errstate(all="ignore"):
            return to_meta(func(*plain_deep(args), **plain_deep(kwargs)))

    # ------------------------------------------------------------ what would spend or read data
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if _big(self.shape):  # a cast of a large meta array allocates nothing
            dtype = np.dtype(dtype)
            if not copy and dtype == self.dtype:
                return self
            if not np.can_cast(self.dtype, dtype, casting):
                raise TypeError(
                    f"Cannot cast array data from {self.dtype!r} to {dtype!r} according to the "
                    f"rule {casting!r}"
                )
            return meta_empty(self.shape, dtype)
        return plain(self).astype(dtype, order, casting, True, copy).view(MetaArray)

    def copy(self, order="C"):
        if _big(self.shape):
            return meta_empty(self.shape, self.dtype)
        return plain(self).copy(order).view(MetaArray)

    def argmax(self, *args, **kwargs):
        if _big(self.shape):  # numpy copies a large array to find positions along a leading axis
            return _dims_kept(lambda a: a.argmax(*args, **kwargs), self)
        return super().argmax(*args, **kwargs)

    def argmin(self, *args, **kwargs):
        if _big(self.shape):
            return _dims_kept(lambda a: a.argmin(*args, **kwargs), self)
        return super().argmin(*args, **kwargs)

    # writes land in small meta arrays (kernels read them back) and nowhere in large ones
    def fill(self, value) -> None:
        if _writes_land(self):
            plain(self).fill(value)

    def __setitem__(self, key, value) -> None:
        if _writes_land(self):
            _ignore_bounds(plain(self).__setitem__, plain_deep(key), plain(value))

    def __getitem__(self, key):
        try:
            r = super().__getitem__(key)
        except IndexError:
            # an index computed from a meta array's stand-in values may be out of bounds: the
            # result's shape does not depend on the values, so read at index 0 instead
            r = super().__getitem__(_zero_indices(key))
        return r if isinstance(r, MetaArray) else to_meta(r)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return to_meta(plain(self).take(plain(indices), axis, None, "clip"))

    # inside a kernel a meta array reads as what it holds (zeros, or a small result computed
    # from them); Tensor.item() and friends refuse meta tensors before they get here
    def item(self, *args):
        return self.view(np.ndarray).item(*args)

    def __bool__(self) -> bool:
        return bool(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __index__(self) -> int:
        return int(self.item())

    def tolist(self):
        raise NotImplementedError(_NO_DATA)

    def get(self):
        raise NotImplementedError(_NO_DATA)

    def __reduce__(self):  # pickled (deep-copied, sent to a worker) as what it is: a shape
        return meta_empty, (self.shape, self.dtype)


def _writes_land(a) -> bool:
    """Whether a write into meta array ``a`` is carried out: only where the memory it views is
    small (a small view of a large meta array writes nothing either)."""
    if not isinstance(a, MetaArray):
        return True
    return all(not _big(b.shape) for b in _bases(a))


def _ignore_bounds(write, *args, **kwargs) -> None:
    """``write(*args)``, skipped where indices computed from stand-in values are out of bounds."""
    try:
        write(*args, **kwargs)
    except IndexError:
        pass


def _zero_indices(key):
    """``key`` with its integer index arrays replaced by zeros of their shape."""
    keys = key if isinstance(key, tuple) else (key,)
    keys = tuple(
        np.zeros(np.shape(k), np.intp) if isinstance(k, np.ndarray) and k.dtype.kind in "iu" else k
        for k in keys
    )
    return keys if isinstance(key, tuple) else keys[0]


# above this many bytes a meta array's memory is reserved with MAP_NORESERVE: calloc's mapping
# is refused past the machine's memory (overcommit), so torch's meta tensors of any size could
# not be made (a 40 GB embedding table on a 24 GB machine)
_RESERVE_BYTES = 1 << 28
# Python adds mmap.MAP_NORESERVE in 3.13; Linux's value before that (other systems: calloc)
_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform == "linux" else 0)


def meta_empty(shape, dtype) -> MetaArray:
    """A meta array of ``shape`` and ``dtype`` (no memory is touched)."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = dtype.itemsize
    for v in shape:
        n *= v
    if n < _RESERVE_BYTES or not _NORESERVE:
        return np.zeros(shape, dtype).view(MetaArray)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _NORESERVE
    return np.frombuffer(mmap.mmap(-1, n, flags=flags), dtype).reshape(shape).view(MetaArray)


def to_meta(r):
    """``r`` (a numpy result, or a tuple/list of them) as meta arrays; other values unchanged."""
    if isinstance(r, MetaArray):
        return r
    if isinstance(r, np.ndarray):
        # a view of a meta array's memory costs nothing to keep, nor does a small result
        if r.size <= SMALL or _views_meta(r):
            return r.view(MetaArray)
        return meta_empty(r.shape, r.dtype)
    if isinstance(r, np.generic):
        return np.asarray(r).view(MetaArray)
    if isinstance(r, tuple):
        vals = [to_meta(v) for v in r]
        return type(r)(*vals) if hasattr(r, "_fields") else tuple(vals)
    if isinstance(r, list):
        return [to_meta(v) for v in r]
    return r


def _bases(a):
    """The arrays whose memory ``a`` views, innermost first (through as_strided's wrappers)."""
    b = a.base
    while b is not None:
        if isinstance(b, np.ndarray):
            yield b
        elif not hasattr(b, "__array_interface__"):  # bytes, mmap: not an array's memory
            return
        b = getattr(b, "base", None)


def _views_meta(a: np.ndarray) -> bool:
    return any(isinstance(b, MetaArray) for b in _bases(a))


def plain(x):
    """``x`` as a plain ndarray view when it is an ndarray subclass (a meta array, or a test
    backend's device array); anything else unchanged."""
    return x.view(np.ndarray) if isinstance(x, np.ndarray) and type(x) is not np.ndarray else x


def plain_deep(x):
    """``plain`` through lists, tuples and dicts (a numpy function's arguments)."""
    if isinstance(x, (list, tuple)):
        return type(x)(plain_deep(v) for v in x)
    if isinstance(x, dict):
        return {k: plain_deep(v) for k, v in x.items()}
    return plain(x)


def _sample(x):
    """One element of ``x`` with its dtype (Python scalars stay as they are: numpy's weak scalars)."""
    if isinstance(x, np.ndarray):
        return np.zeros(1, x.dtype)
    return x


def _big(shape) -> bool:
    n = 1
    for s in shape:
        n *= s
    return n > SMALL


def _elementwise(ufunc, shape, inputs, kwargs):
    with np.errstate(all="ignore"):
        r = ufunc(*map(_sample, inputs), **kwargs)
    if isinstance(r, tuple):
        return tuple(meta_empty(shape, v.dtype) for v in r)
    return meta_empty(shape, np.asarray(r).dtype)


# numpy functions whose result's dims are some of the input's, the others reduced away (or kept
# with size 1)
_REDUCTIONS = frozenset(
    ("sum", "prod", "mean", "max", "min", "amax", "amin", "any", "all", "std", "var", "ptp")
    + ("argmax", "argmin", "count_nonzero", "nansum", "nanprod", "nanmean", "nanmax", "nanmin")
    + ("nanstd", "nanvar", "nanargmax", "nanargmin")
)


def _dims_kept(call, a):
    """What reduction ``call`` gives for large meta array ``a``, as a shape: it runs on a small
    stand-in whose dim i has size i + 2, so each dim of the result names the input dim it keeps
    (or is 1: a dim kept by keepdims); the stand-in also gives the dtype and the checks."""
    with np.errstate(all="ignore"):
        r = np.asarray(call(np.zeros(tuple(range(2, a.ndim + 2)), a.dtype)))
    return meta_empty(tuple(1 if v == 1 else a.shape[v - 2] for v in r.shape), r.dtype)


def _matmul(inputs, kwargs):
    a, b = inputs
    sa, sb = np.shape(a), np.shape(b)
    if not sa or not sb:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    ma, mb = (1,) + sa if len(sa) == 1 else sa, sb + (1,) if len(sb) == 1 else sb
    if ma[-1] != mb[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {mb[-2]} is "
            f"different from {ma[-1]})"
        )
    shape = np.broadcast_shapes(ma[:-2], mb[:-2]) + (ma[-2], mb[-1])
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(sb) == 1:
        shape = shape[:-1]
    dtype = np.matmul(
        np.zeros((1, 1), np.dtype(a.dtype)), np.zeros((1, 1), np.dtype(b.dtype)), **kwargs
    )
    return meta_empty(shape, dtype.dtype)


# numpy functions that only write
_WRITES = frozenset(["copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"])


class ConvertedUfunc:
    """A numpy ufunc whose results (of its methods too) pass through ``convert``, whatever its
    inputs (Python scalars too)."""

    def __init__(self, uf, convert) -> None:
        self._uf, self._convert = uf, convert
        self.__name__ = uf.__name__

    def __call__(self, *args, **kwargs):
        return self._convert(self._uf(*args, **kwargs))

    def __getattr__(self, name):
        v = getattr(self._uf, name)
        if callable(v):
            return lambda *a, **k: self._convert(v(*a, **k))
        return v


class ArrayNamespace(types.ModuleType):
    """numpy's namespace (or a submodule's, or a host library's) whose results pass through
    ``_convert``: the ``xp`` of a backend whose arrays are ndarray subclasses (meta here; the
    tests' strict stand-in for cupy). Subclasses give ``_convert`` and may replace names
    (``_special``) or how functions are called (``_function``)."""

    def __init__(self, mod=np, name: str | None = None) -> None:
        super().__init__(name or mod.__name__)
        self._mod = mod
        self._cache = {}

    def _convert(self, result):
        raise NotImplementedError

    def _special(self, name: str):
        """A replacement for the module's ``name``, or None (none here)."""

    def _function(self, fn):
        def call(*args, **kwargs):
            return self._convert(fn(*args, **kwargs))

        call.__name__ = getattr(fn, "__name__", "function")
        call.__wrapped__ = fn
        return call

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cache = self.__dict__["_cache"]
        if name in cache:
            return cache[name]
        v = self._special(name)
        if v is None:
            v = getattr(self._mod, name)
            if isinstance(v, types.ModuleType):
                v = type(self)(v, f"{self.__name__}.{name}")
            elif isinstance(v, np.ufunc):
                v = ConvertedUfunc(v, self._convert)
            elif callable(v) and not isinstance(v, type):
                v = self._function(v)
        cache[name] = v
        return v


def _filled(fill):
    """numpy's factory ``fill`` (ones, full, zeros and their _like forms) for meta arrays: a small
    result is made (a kernel may test its values), a large one is only a shape (numpy would write
    every element)."""
    like = fill.__name__.endswith("_like")

    def factory(*args, **kwargs):
        args, kwargs = plain_deep(args), plain_deep(kwargs)
        shape = kwargs.pop("shape", None)
        if shape is None:
            shape = np.shape(args[0]) if like else args[0]
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        small = shape if not _big(shape) else (1,)
        r = fill(*args, shape=small, **kwargs) if like else fill(small, *args[1:], **kwargs)
        return r.view(MetaArray) if small is shape else meta_empty(shape, r.dtype)

    return factory


# (empty is zeros: a meta array reads as what kernels made of zeros, never as garbage)
_CREATION = {
    name: _filled(getattr(np, name.replace("empty", "zeros")))
    for name in (
        "ones",
        "full",
        "zeros",
        "empty",
        "ones_like",
        "full_like",
        "zeros_like",
        "empty_like",
    )
}


def _relaid(lay):
    """numpy's ``lay`` (ascontiguousarray...) for meta arrays: a large one's copy is only a
    shape (``contiguous()`` of a transposed meta weight larger than memory)."""

    def relay(a, dtype=None, **kwargs):
        if isinstance(a, MetaArray) and _big(a.shape):
            return meta_empty(a.shape, a.dtype if dtype is None else dtype)
        return to_meta(lay(plain_deep(a), dtype, **kwargs))

    return relay


_COPIES = {name: _relaid(getattr(np, name)) for name in ("ascontiguousarray", "asfortranarray")}


class MetaXP(ArrayNamespace):
    """numpy's namespace producing meta arrays: the ``xp`` kernels get for meta tensors."""

    def __init__(self, mod=np, name: str = "meta_xp") -> None:
        super().__init__(mod, name)
        # linear algebra on zeros fails (singular): it runs on identity matrices instead
        self._solver = mod.__name__ in ("numpy.linalg", "scipy.linalg")

    _convert = staticmethod(to_meta)

    def _special(self, name: str):
        if self._mod is np:
            return MetaArray if name == "ndarray" else _CREATION.get(name) or _COPIES.get(name)
        return None

    def _function(self, fn):
        solver = self._solver

        def call(*args, **kwargs):
            if solver:
                args = [identity_like(a) for a in args]
            with np.errstate(all="ignore"):
                return to_meta(fn(*args, **kwargs))

        call.__name__ = getattr(fn, "__name__", "function")
        return call

    def host_module(self, name: str) -> MetaXP:
        """The meta view of a host library (``scipy.special``, ``scipy.linalg``) that cupy's
        cupyx mirrors: kernels ask for it where they would import cupyx."""
        mods = self.__dict__["_cache"].setdefault("_host_modules", {})
        if name not in mods:
            mods[name] = MetaXP(importlib.import_module(name), f"meta_xp<{name}>")
        return mods[name]


def identity_like(a):
    """A plain array standing in for meta array ``a`` in linear algebra: identity matrices (zeros
    are singular: factorizations and solvers would fail on them), and integer arrays as LAPACK's
    pivots of no interchange (1, 2, ..., n: a zero pivot would send LAPACK out of bounds)."""
    if isinstance(a, MetaArray):
        if a.dtype.kind in "iu" and a.ndim:
            return np.broadcast_to(np.arange(1, a.shape[-1] + 1, dtype=a.dtype), a.shape).copy()
        if a.ndim < 2:
            return np.zeros(a.shape, a.dtype)
        eye = np.eye(a.shape[-2], a.shape[-1], dtype=a.dtype)
        return np.broadcast_to(eye, a.shape).copy()
    return a


meta_xp = MetaXP()
register_backend(MetaArray, meta_xp, lambda a: META)


class _MetaGenerator(Generator):
    """The generator of the meta device: its draws are meta arrays, so nothing is drawn."""

    def __init__(self) -> None:
        self._device = META
        self._reset(DEFAULT_SEED)

    def _uniform(self, shape, npd):
        return meta_empty(shape, npd)

    _normal = _exponential = _uniform

    def _integers(self, low, high, shape, npd):
        return meta_empty(shape, npd)

    def _permutation(self, n):
        return meta_empty((n,), np.int64)

    def _poisson(self, lam):
        return meta_empty(np.shape(lam), np.int64)

    def _binomial(self, n, p):
        return meta_empty(np.shape(n), np.int64)


meta_generator = _MetaGenerator()


def warn_load_into_meta(key: str) -> None:
    """load_state_dict copying a real tensor into a meta parameter: torch's warning (a no-op)."""
    warnings.warn(
        f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter in "
        "the current model, which is a no-op. (Did you mean to pass `assign=True` to assign items "
        "in the state dictionary to their corresponding key in the module instead of copying them "
        "in place?)",
        UserWarning,
        stacklevel=4,
    )
