"""Shape and view ops: view, reshape, flatten, permute, transpose, squeeze, expand, cat, split, ...

Ops that torch documents as views ("Tensor Views") are registered with ``view=True``: their result
shares storage and the version counter with the input. Multi-output ops (split, chunk, unbind)
return tuples of views; their derivative receives a tuple of gradients (zeros for unused outputs).
"""

from __future__ import annotations

import types as _types
import warnings
from itertools import pairwise
from operator import index as _index

import numpy as np
from numpy.lib.stride_tricks import as_strided as _as_strided

from ...autograd.grad_mode import _state as _grad_state
from ...autograd.node import as_torch_node
from .. import dtype as _dt
from .. import layout as _layout
from ..arg_errors import as_int as _as_int
from ..arg_errors import int_list as _int_list
from ..arg_errors import int_list_error as _int_list_error
from ..arg_errors import invalid_arguments as _invalid_arguments
from ..arg_errors import must_be_tensor as _must_be_tensor
from ..arg_errors import tensor_method as _tensor_method
from ..arg_errors import type_name as _type_name
from ..arg_errors import varargs_error as _varargs_error
from ..autocast import entry as _autocast_entry
from ..device import array_module
from ..dims import DimTypeError, normalize_dim
from ..names import FALLBACK, keep, remove_dims, unify_inputs
from ..registry import alias, apply, backward_names, op
from ..storage import _root
from ..tensor import Size, Tensor, _view, _wrap
from ..vmap_state import SLICES as _VMAP_SLICES

_ndarray = np.ndarray


def _np_view(a, shape, strides):
    """numpy: a view of ``a``'s memory with this shape and these byte strides, read-only when
    ``a`` is, built on the array that owns the memory. numpy's as_strided would end the view's
    base chain at a helper object, and numpy then refuses to make any view of it writable again:
    ``x.unsqueeze(0)[0, 0].add_(1)`` of an expanded ``x``, whose own elements are distinct, was
    refused where torch writes (the registry's in-place check re-enables such views)."""
    root = _root(a)
    f = root.flags
    if not f.c_contiguous:
        if not f.f_contiguous:  # memory not one block in any order: no buffer to build on
            return _as_strided(a, shape, strides, writeable=a.flags.writeable)
        root = root.T  # the same block, exported as a C-contiguous buffer
    off = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    r = _ndarray(shape, a.dtype, root, off, strides)
    if not a.flags.writeable:
        r.flags.writeable = False
    return r


__all__ = [
    "adjoint",
    "broadcast_to",
    "cat",
    "concat",
    "concatenate",
    "dstack",
    "flatten",
    "fliplr",
    "flipud",
    "hstack",
    "moveaxis",
    "ravel",
    "reshape",
    "stack",
    "swapaxes",
    "swapdims",
    "t",
    "tile",
    "unflatten",
    "vstack",
]

_ALL = 1 << 62  # n_diff_out of multi-output ops: every output is differentiable
_EMPTY: dict = {}


# ---------------------------------------------------------------------- helpers
def _shape_arg(shape) -> tuple:
    """``view(2, 3)``, ``view((2, 3))``, ``view([2, 3])`` and ``view(Size)`` -> a tuple of ints
    (TypeError for a size that is no integer: a float too)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    out = tuple(_index(s) for s in shape)
    if out and type(shape[0]) is bool:  # a bool first picks no int[] overload (torch's parser)
        raise TypeError("a bool is no first size")
    return out


def _norm(d: int, n: int) -> int:
    """A (possibly negative) dim of an n-dim tensor as an index, with torch's error."""
    if d is None:
        raise RuntimeError("Please look up dimensions by name, got: name = None.")
    lo, hi = (-1, 0) if n == 0 else (-n, n - 1)
    try:
        out = d < lo or d > hi
    except TypeError:  # a tuple: the registry words torch's error for the op's argument
        raise DimTypeError(d) from None
    if out:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})"
        )
    return d + n if d < 0 else (d if n else 0)


def _int_arg(fname: str, name: str, pos: int, v) -> int:
    """``v`` (no int: a numpy integer or a 0-d integer tensor) as an int, or torch's parser
    error for an int argument (a float, a bool, a str ...); ``pos`` counts the input (a method,
    told by the call's source, counts its arguments after self and names the in-place one)."""
    if _not_int(v):
        method = _tensor_method(fname)
        if method is not None:
            fname, pos = method, pos - 1
        raise TypeError(
            f"{fname}(): argument '{name}' (position {pos}) must be int, not {_type_name(v)}"
        )
    return v.__index__()


def _not_int(v) -> bool:
    return isinstance(v, (float, bool)) or not hasattr(v, "__index__")


def _ints_error(fname: str, name: str, pos: int, v, i=None) -> TypeError:
    """:func:`int_list_error` for ``v``, named as the call spelled it (``pos`` as in
    :func:`_int_arg`)."""
    method = _tensor_method(fname)
    if method is not None:
        fname, pos = method, pos - 1
    return _int_list_error(fname, name, pos, v, i)


def _ints_arg(fname: str, name: str, pos: int, v) -> tuple:
    """``v`` (an int or a sequence of them) as a tuple of ints, or :func:`_ints_error`."""
    try:
        return _int_list(fname, name, pos, v)
    except TypeError:
        method = _tensor_method(fname)
        if method is None:
            raise
    return _int_list(method, name, pos - 1, v)  # raises, named as the method


def _norm_list(dims, n: int, fname: str, name: str, pos: int) -> tuple:
    """``dims``, ``fname``'s ``int[]`` argument ``name`` at ``pos`` (an int or a sequence of
    them, see :func:`_ints_arg`), each wrapped into ``[0, n)``."""
    return tuple(_norm(d, n) for d in _ints_arg(fname, name, pos, dims))


def _infer_shape(shp: tuple, size: int) -> tuple:
    """Resolve one -1 in ``shp`` so that it holds ``size`` elements (torch's messages)."""
    known = 1
    infer = -1
    for i, s in enumerate(shp):
        if s == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shp)}")
        else:
            known *= s
    if infer >= 0:
        if known == 0 and size == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shp)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if known == 0 or size % known:
            raise RuntimeError(f"shape '{list(shp)}' is invalid for input of size {size}")
        shp = shp[:infer] + (size // known,) + shp[infer + 1 :]
    elif known != size:
        raise RuntimeError(f"shape '{list(shp)}' is invalid for input of size {size}")
    return shp


_VIEW_ERR = (
    "view size is not compatible with input tensor's size and stride (at least one "
    "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
)


def _reshape_names(ins, *shape):
    # the longest unchanged leading and trailing runs of dims keep their names
    t = ins[0]
    old, names = t._data.shape, t._names
    try:
        new = _infer_shape(_shape_arg(shape), t._data.size)
    except RuntimeError:
        return None
    out = [None] * len(new)
    i = 0
    while i < min(len(old), len(new)) and old[i] == new[i]:
        out[i] = names[i]
        i += 1
    j = 1
    while j <= min(len(old), len(new)) - i and old[-j] == new[-j]:
        out[-j] = names[-j]
        j += 1
    return None if all(n is None for n in out) else tuple(out)


def _permuted_names(names, perm):
    return tuple(names[d] for d in perm)


# ---------------------------------------------------------------------- view / reshape
def _view_strides(old: tuple, strides: tuple, new: tuple) -> tuple | None:
    """torch's strides (here in bytes) for viewing a non-empty tensor of shape ``old`` with
    ``strides`` as shape ``new``, or None when no view can be made (torch's computeStride)."""
    out = [0] * len(new)
    vd = len(new) - 1
    base = strides[-1]
    tn = vn = 1
    for td in range(len(old) - 1, -1, -1):
        tn *= old[td]
        # a chunk ends where the memory of the next-outer dim does not continue this one's
        if td == 0 or (old[td - 1] != 1 and strides[td - 1] != tn * base):
            while vd >= 0 and (vn < tn or new[vd] == 1):
                out[vd] = vn * base
                vn *= new[vd]
                vd -= 1
            if vn != tn:
                return None
            if td > 0:
                base = strides[td - 1]
                tn = vn = 1
    return None if vd != -1 else tuple(out)


@op(names=_reshape_names, view=True, method=False)
def view(xp, input, *shape):
    """A view with a new shape (must be compatible with the strides; -1 infers one size)."""
    packed = len(shape) == 1 and not isinstance(shape[0], int) and getattr(shape[0], "ndim", 1)
    if packed:
        shape = shape[0]  # view((2, 3)), view([2, 3]), view(Size); not a 0-d integer tensor
    try:
        if shape is None or (shape and min(shape) < -1):
            raise ValueError  # (numpy takes any negative size as "infer", None as no change)
        if input.flags.c_contiguous:
            return input.reshape(shape)  # always a view of a contiguous array
        out = input.view()
        out.shape = shape
        if 1 in out.shape and xp is np:  # numpy strides size-1 dims its own way
            st = _view_strides(input.shape, input.strides, out.shape)
            if st is not None:  # (numpy found a view, so torch's rule finds one too)
                return _np_view(input, out.shape, st)
        return out
    except AttributeError:
        raise RuntimeError(_VIEW_ERR) from None
    except (ValueError, TypeError):
        packed = packed and isinstance(shape, (tuple, list))  # one sequence, not view(2.5)
        if not isinstance(shape, (tuple, list)):
            shape = (shape,)
        bad = [i for i, s in enumerate(shape) if _as_int(s, i == 0) is None]
        if not bad and any(isinstance(s, (bool, np.bool_)) for s in shape):
            # a bool past the first size is an int to torch's unpack; numpy refuses it
            return _VIEW.kernel(xp, input, *(_as_int(s, False) for s in shape))
        if bad and bad[0]:
            # view(2, 3.0), view((2, 3.0)): the first size chose the sizes overload, which
            # then failed to unpack a later one
            raise _int_list_error("view", "size", None, shape, bad[0]) from None
        if bad:
            # one argument (a sequence too): torch says why neither signature took it
            args = (shape,) if packed else tuple(shape)
            raise _invalid_arguments("view", args, {}, _VIEW_SIGS) from None
        try:
            _infer_shape(_shape_arg((shape,)), input.size)
        except RuntimeError as e:
            raise e from None  # torch's message, without numpy's error chained to it
        raise


@view.vjp
def _(grad, input_shape):
    return grad.reshape(input_shape)


_VIEW = view.op


@op(names=keep, view=True, method=False)
def _view_dtype(xp, input, dtype=None):
    # reinterpret the bytes (never differentiable, like torch: no vjp)
    new = _dt.to_dtype(dtype)
    old = _dt._FROM_NP[input.dtype]
    a, b = input.itemsize, new.np.itemsize
    if a != b:
        what = f"to view {_legacy(old)} as {_legacy(new)} (different element sizes)"
        if input.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        st = input.strides[-1] // a
        # a size-1 last dim counts too (torch checks its stride), except numpy's 0 for one
        # inserted by ``x[..., None]`` or an empty array's (torch's strides would be 1 there)
        strided = st != 1 and input.size and not (st == 0 and input.shape[-1] == 1)
        if b > a:  # torch's order: the size, the offset, then the strides
            k = b // a
            if input.shape[-1] % k:
                raise RuntimeError(
                    f"self.size(-1) must be divisible by {k} {what}, but got {input.shape[-1]}"
                )
            # numpy would read the other strides and the offset in halves of an element
            off = _storage(input)[1]
            if off % k:
                raise RuntimeError(
                    f"self.storage_offset() must be divisible by {k} {what}, but got {off}"
                )
        if strided:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {st}")
        if b > a:
            for i, s in enumerate(input.strides[:-1]):
                if s // a % k:
                    raise RuntimeError(
                        f"self.stride({i}) must be divisible by {k} {what}, but got {s // a}"
                    )
    return input.view(new.np)


_legacy = _dt.scalar_name
_VIEW_SIGS = ("(torch.dtype dtype)", "(tuple of ints size)")


def _fast_view(t, shape):
    """``t.view(*shape)`` without the registry for a plain, unnamed, contiguous numpy tensor no
    gradient flows through, sized by plain ints (what view's kernel does then: a reshape, always
    a view); None for any other call (and for every error, which the general path reports)."""
    if type(t) is not Tensor or t.requires_grad or t._names is not None or _VMAP_SLICES:
        return None
    a = t._data
    if type(a) is not _ndarray or not a.flags.c_contiguous:
        return None
    for s in shape:
        if type(s) is not int or s < -1:
            return None
    try:
        r = _view(t, a.reshape(shape))
    except (ValueError, TypeError):
        return None
    if not _grad_state.enabled:  # (the registry's note for views made without grad)
        r._extra["ng"] = _grad_state.inference
    return r


def _view_method(self, *shape, dtype=None, size=None):
    """``view(*shape)`` (a view with a new shape) or ``view(dtype)`` (reinterpret the bytes)."""
    if shape and dtype is None and size is None:
        t0 = type(shape[0])
        if t0 is int or (len(shape) == 1 and (t0 is tuple or t0 is Size)):
            r = _fast_view(self, shape if t0 is int else shape[0])
            if r is not None:
                return r
    if dtype is not None:
        return _view_dtype(self, dtype)
    if shape and isinstance(shape[0], (_dt.dtype, type)):
        return _view_dtype(self, shape[0])
    if size is not None:
        if not isinstance(size, (tuple, list)) or _as_int(size[0] if size else 0, True) is None:
            # a keyword int[] is a sequence whose first element picks the overload
            raise _invalid_arguments("view", (), {"size": size}, _VIEW_SIGS)
        shape = (size,)
    elif not shape:  # torch's parser: neither a dtype nor sizes
        raise TypeError(
            "view() received an invalid combination of arguments - got (), but expected one "
            "of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n"
        )
    return apply(_VIEW, (self,) + shape, {})


@op(names=_reshape_names, method=False)
def _reshape_copy(xp, input, *shape):
    return xp.reshape(xp.ascontiguousarray(input), _infer_shape(_shape_arg(shape), input.size))


@_reshape_copy.vjp
def _(grad, input_shape):
    return grad.reshape(input_shape)


_RESHAPE_COPY = _reshape_copy.op


def reshape(input: Tensor, *shape, **kw) -> Tensor:
    """A tensor with a new shape: a view of ``input`` when the strides allow, else a copy."""
    if kw:
        if "shape" in kw:
            # by keyword: no position, and a sequence only (no loose int)
            given = kw.pop("shape")
            if not isinstance(given, (tuple, list)):
                raise _int_list_error("reshape", "shape", None, given)
            shape = (_int_list("reshape", "shape", None, given),)
    elif not shape:  # (view's kernel would take no sizes as a 0-d shape)
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    else:
        t0 = type(shape[0])
        if t0 is int or (len(shape) == 1 and (t0 is tuple or t0 is Size)):
            r = _fast_view(input, shape if t0 is int else shape[0])
            if r is not None:
                return r
    try:
        a = input._data
        if not a.flags.c_contiguous:
            try:
                s = _infer_shape(_shape_arg(shape), a.size)
            except (RuntimeError, ValueError, TypeError):
                return apply(_VIEW, (input,) + shape, {})  # a bad shape: view raises the error
            if _copies(a, s):  # the strides do not allow a view
                return apply(_RESHAPE_COPY, (input,) + shape, {})
            # torch's reshape views a non-contiguous tensor with _reshape_alias
            return as_torch_node(apply(_VIEW, (input,) + shape, {}), "ReshapeAliasBackward0")
        return apply(_VIEW, (input,) + shape, {})
    except (AttributeError, TypeError) as e:
        raise _reshape_type_error(input, shape) or e from None


def _reshape_type_error(input, shape: tuple) -> TypeError | None:
    """torch's parser error for reshape's input or shape (not view's: ember reshapes through
    view), or None when both are of the right types."""
    if not isinstance(input, Tensor):
        return _must_be_tensor("reshape", ("input",), (input,))
    if len(shape) > 1:
        return _varargs_error("reshape", "shape", shape)
    try:
        _ints_arg("reshape", "shape", 2, shape[0])
    except TypeError as e:
        return e
    return None


# numpy 2.1's reshape(copy=False) refuses a copy before making one; setting ``.shape`` (older
# numpy, cupy) makes the copy, then refuses it
_NO_COPY_RESHAPE = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def _copies(a, shape: tuple) -> bool:
    """Whether reshaping array ``a`` to ``shape`` needs a copy (its strides allow no view)."""
    try:
        if _NO_COPY_RESHAPE and isinstance(a, np.ndarray):
            np.reshape(a.view(np.ndarray), shape, copy=False)
        else:
            a.view().shape = shape
    except (ValueError, AttributeError):
        return True
    return False


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.shape)``."""
    return apply(_VIEW, (self, other._data.shape), {})


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.shape)``."""
    return reshape(self, other._data.shape)


def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor (a view when ``input`` is contiguous)."""
    try:
        # torch's ravel views a contiguous copy (its ``_base``), where reshape would not
        return apply(_VIEW, (input.contiguous(), -1), {})
    except (AttributeError, TypeError) as e:
        raise _must_be_tensor("ravel", ("input",), (input,)) or e from None


def _rename_to(t: Tensor, names) -> Tensor:
    if names is None or all(n is None for n in names):
        return t.rename(None) if t._names is not None else t
    return t.rename(*names)


def flatten(input: Tensor, start_dim=0, end_dim=-1, out_dim=None, *, _self_pos=0) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one (a view when possible).

    Named forms: ``flatten(start_dim, end_dim, out_dim)`` and ``flatten(dims, out_dim)``.
    """
    try:
        n = input._data.ndim
    except AttributeError:
        raise _must_be_tensor("flatten", ("input",), (input,)) from None
    if type(start_dim) is int and type(end_dim) is int and out_dim is None:
        # the common call (x.flatten(1)): in-range int dims of an unnamed tensor
        s = start_dim + n if start_dim < 0 else start_dim
        e = end_dim + n if end_dim < 0 else end_dim
        if 0 <= s <= e < n and input._names is None:
            if s == e:
                return input
            shape = input._data.shape
            k = 1
            for x in shape[s : e + 1]:
                k *= x
            return reshape(input, shape[:s] + (k,) + shape[e + 1 :])
    if isinstance(start_dim, (list, tuple)):
        dims = [normalize_dim(input, d) for d in start_dim]
        out_dim = end_dim
        if not dims:
            raise RuntimeError("flatten(tensor, dims, out_dim): dims cannot be empty")
        if any(b != a + 1 for a, b in pairwise(dims)):
            raise RuntimeError(
                f"flatten(tensor, dims, out_dim): dims {list(start_dim)} must be "
                f"consecutive in Tensor{list(input._names or (None,) * n)}"
            )
        s, e = dims[0], dims[-1]
    else:
        try:
            s = normalize_dim(input, start_dim)
            e = normalize_dim(input, end_dim)
        except DimTypeError as err:
            k = 1 if err.value is start_dim else 2
            name = "start_dim" if k == 1 else "end_dim"
            raise TypeError(
                f"flatten(): argument '{name}' (position {k + 1 - _self_pos}) must be int, "
                f"not {_type_name(err.value)}"
            ) from None
    if n == 0:
        return reshape(input, 1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    names = input._names
    if s == e and out_dim is None:
        return input
    shape = input._data.shape
    k = 1
    for x in shape[s : e + 1]:
        k *= x
    r = reshape(input, shape[:s] + (k,) + shape[e + 1 :]) if s != e else input
    if names is not None or out_dim is not None:
        old = names or (None,) * n
        r = _rename_to(r, old[:s] + (out_dim,) + old[e + 1 :])
    return r


def unflatten(input: Tensor, dim, sizes) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (a view); ``sizes`` may be a named shape:
    ``(('C', 3), ('H', 4))`` or an OrderedDict of name -> size."""
    if isinstance(sizes, dict):
        pairs = list(sizes.items())
    else:
        if sizes is None:
            sizes = ()  # (torch reads None as no sizes)
        elif not isinstance(sizes, (tuple, list)):
            raise _ints_error("unflatten", "sizes", 3, sizes)  # one int is no int[] here
        sizes = list(sizes)
        # a named shape (('C', 3), ...) pairs names with sizes; [[1], 3] is a bad size list
        first = sizes[0] if sizes else None
        named = isinstance(first, (tuple, list)) and first and isinstance(first[0], str)
        pairs = sizes if named else None
    if pairs is not None:
        new_names = tuple(p[0] for p in pairs)
        sz = tuple(int(p[1]) for p in pairs)
    else:
        if isinstance(dim, str):
            raise TypeError("unflatten(): argument 'dim' (position 1) must be int, not str")
        new_names = None
        sz = _ints_arg("unflatten", "sizes", 3, sizes)
    if not input._data.ndim:  # (torch wraps this one in an "unexpected error" with a trace)
        raise RuntimeError("unflatten: Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(input, dim)
    if not sz:
        raise RuntimeError("unflatten: sizes must be non-empty")
    shape = input._data.shape
    size = shape[d]
    names = input._names

    def bad():
        if names is not None:
            where = f"dim {d} ('{names[d]}': {size}) in Tensor{list(names)}"
        else:
            where = f"dim {d} ({size}) in the input tensor"
        return RuntimeError(
            f"unflatten: Provided sizes {list(sz)} don't multiply up to the size of {where}"
        )

    if sz.count(-1) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    known = 1
    for s in sz:
        if s != -1:
            known *= s
    if -1 in sz:
        if known == 0:
            if size == 0:
                raise RuntimeError(
                    "unflatten: the unspecified dimension size -1 can be any value and is ambiguous"
                )
            raise bad()
        if size % known:
            raise bad()
        i = sz.index(-1)
        sz = sz[:i] + (size // known,) + sz[i + 1 :]
    elif known != size:
        raise bad()
    r = apply(_VIEW, (input, shape[:d] + sz + shape[d + 1 :]), {})
    if names is not None or new_names is not None:
        old = names or (None,) * len(shape)
        r = _rename_to(r, old[:d] + (new_names or (None,) * len(sz)) + old[d + 1 :])
    return r


# ---------------------------------------------------------------------- expand / repeat
def _expand_names(ins, *sizes):
    t = ins[0]
    n = len(_shape_arg(sizes))
    return (None,) * (n - t._data.ndim) + t._names


@op(names=_expand_names, view=True)
def expand(xp, input, *sizes):
    """A broadcast view: size -1 keeps a dim, size-1 dims stretch, new leading dims are added."""
    try:
        shp = list(_shape_arg(sizes))
    except TypeError:
        if len(sizes) == 1:
            _ints_arg("expand", "size", 2, sizes[0])
        raise _varargs_error("expand", "size", sizes) from None
    nd = input.ndim
    lead = len(shp) - nd
    if lead < 0:
        raise RuntimeError(
            f"expand({_legacy_type(input)}{{{list(input.shape)}}}, size={shp}): the "
            f"number of sizes provided ({len(shp)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({nd})"
        )
    for i in range(lead):
        if shp[i] == -1:  # (other negative sizes: torch's numel overflow, below)
            raise RuntimeError(
                f"The expanded size of the tensor ({shp[i]}) isn't allowed in a "
                f"leading, non-existing dimension {i}"
            )
    ishape = input.shape
    for i in reversed(range(nd)):  # torch names the last mismatching dim
        s = shp[lead + i]
        if s == -1:
            shp[lead + i] = ishape[i]
        elif s != ishape[i] and ishape[i] != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({ishape[i]}) "
                f"at non-singleton dimension {lead + i}.  Target sizes: {list(_shape_arg(sizes))}."
                f"  Tensor sizes: {list(ishape)}"
            )
    shp = tuple(shp)
    if shp == ishape:
        return input.view()  # nothing to broadcast: keep the strides and writability
    # torch's strides: 0 where a dim is stretched; a new size-1 leading dim gets the stride a
    # contiguous tensor would have there (0 past the last dim: a 0-D input's); a kept dim keeps
    # its stride
    m = len(shp)
    st = [0] * m
    ist = input.strides
    for i in range(m - 1, -1, -1):
        j = i - lead
        if j >= 0:
            st[i] = ist[j] if ishape[j] == shp[i] else 0
        elif shp[i] == 1:
            st[i] = shp[i + 1] * st[i + 1] if i + 1 < m else 0
    try:
        if xp is np:
            if input.flags.c_contiguous:  # the fast constructor needs a contiguous buffer
                r = _ndarray(shp, input.dtype, input, 0, tuple(st))
                r.flags.writeable = False  # like numpy's broadcast_to: elements are aliased
                return r
            r = _np_view(input, shp, tuple(st))
            r.flags.writeable = False  # elements are aliased, as above
            return r
        return xp.lib.stride_tricks.as_strided(input, shp, tuple(st))
    except ValueError:
        if min(shp) < -1:  # a size below -1 where torch checks none (torch's text)
            raise RuntimeError("numel: integer multiplication overflow") from None
        raise


@expand.vjp
def _(grad, input_shape):
    return grad.sum_to_size(input_shape)


def _legacy_type(a) -> str:
    return _legacy(_dt._FROM_NP[a.dtype]).join(("torch.", "Tensor"))


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.expand(other.size())``."""
    return expand(self, other._data.shape)


def broadcast_to(input: Tensor, size) -> Tensor:
    """``input.expand(size)``."""
    try:
        return expand(input, tuple(size))
    except TypeError:
        if not isinstance(input, Tensor):
            raise
        if not isinstance(size, (tuple, list)):  # one int is no int[] here
            raise _ints_error("broadcast_to", "size", 2, size) from None
        _ints_arg("broadcast_to", "size", 2, size)  # torch's parser error, named as called
        raise


@op(names=FALLBACK)
def repeat(xp, input, *repeats):
    """Tile the tensor ``repeats[i]`` times along each dim (new leading dims when longer)."""
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    try:
        reps = _shape_arg(repeats)
    except TypeError:  # a size that is no int: torch's parser error
        if len(repeats) == 1:
            _ints_arg("repeat", "repeats", 2, repeats[0])
        raise _varargs_error("repeat", "repeats", repeats) from None
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of "
            "dimensions of tensor"
        )
    if min(reps, default=0) < 0:  # torch checks the result's sizes
        shp = (1,) * (len(reps) - input.ndim) + input.shape
        out = [r * s for r, s in zip(reps, shp)]
        if min(out) < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {out}")
    # numpy's tile of all ones is a copy in the input's order ('K'); torch's is contiguous
    return _layout.row_major(xp, xp.tile(input, reps))


@repeat.vjp
def _(grad, input_shape, repeats):
    reps = _shape_arg(repeats)
    shp = (1,) * (len(reps) - len(input_shape)) + tuple(input_shape)
    inter = []
    for r, s in zip(reps, shp):
        inter += [r, s]
    g = grad.reshape(inter).sum(tuple(range(0, 2 * len(reps), 2)))
    return g.reshape(input_shape)


def tile(*args, **kw) -> Tensor:
    """``tile(input, dims)``: ``repeat`` with ``dims`` padded by leading ones to the tensor's
    rank. torch's function form takes one sequence (no bare int, no tensor; the method does)."""
    if len(args) == 2 and not kw:
        input, dims = args
        if isinstance(dims, (tuple, list)):
            return _tile(input, dims, 2)
    return _tile(*_tile_call(args, kw))


def _tile_call(args: tuple, kw: dict) -> tuple:
    """(input, dims, dims' position) of a ``tile`` call that is not ``tile(x, sequence)``, or
    torch's parser error for it (failure path)."""
    if len(args) > 2:
        raise TypeError(f"tile() takes 2 positional arguments but {len(args)} were given")
    for k in kw:
        if k not in ("input", "dims"):
            raise TypeError(f"tile() got an unexpected keyword argument '{k}'")
        if ("input", "dims").index(k) < len(args):
            raise TypeError(f"tile() got multiple values for argument '{k}'")
    given = dict(zip(("input", "dims"), args), **kw)
    if len(given) < 2:
        raise TypeError('tile() missing 2 required positional argument: "input", "dims"')
    input, dims = given["input"], given["dims"]
    pos = 2 if len(args) == 2 else None
    if not isinstance(input, Tensor):
        raise _must_be_tensor("tile", ("input",), (input,))
    if not isinstance(dims, (tuple, list)):
        raise _int_list_error("tile", "dims", pos, dims)
    return input, dims, pos


def _tile_method(self, *dims, **kw) -> Tensor:
    """``x.tile(*dims)`` or ``x.tile(dims)``: the method takes one int (a numpy integer, a 0-d
    tensor) as a tuple of one."""
    if kw or not dims:
        if dims or list(kw) != ["dims"]:
            if not dims and not kw:
                raise TypeError('tile() missing 1 required positional arguments: "dims"')
            return tile(self, *dims, **kw)  # (its errors)
        return _tile(self, *_tile_call((self,), kw)[1:])
    if len(dims) == 1:
        d = dims[0]
        if not isinstance(d, (tuple, list)):
            n = _as_int(d, True)
            if n is None:
                raise _int_list_error("tile", "dims", 1, d)
            d = (n,)
        return _tile(self, d, 1)
    if type(dims[0]) is not int:
        err = _varargs_error("tile", "dims", dims)  # x.tile(2.0, 2): no overload takes it
        if err is not None:
            raise err
    return _tile(self, dims, 1)


def _tile(input: Tensor, dims, pos) -> Tensor:
    """tile of a checked call: ``dims`` (torch's parser error for a bad element, at ``pos``)."""
    reps = _int_list("tile", "dims", pos, dims)
    try:
        n = input._data.ndim
    except AttributeError:
        raise _must_be_tensor("tile", ("input",), (input,)) from None
    if len(reps) < n:
        reps = (1,) * (n - len(reps)) + reps
    return repeat(input, reps)


# ---------------------------------------------------------------------- transpose / permute
def _transpose_names(ins, dim0, dim1):
    n = list(ins[0]._names)
    n[dim0], n[dim1] = n[dim1], n[dim0]
    return tuple(n)


@op(names=_transpose_names, view=True)
def transpose(xp, input, dim0=None, dim1=None):
    """Swap two dims (ints or names): a view."""
    if input.ndim == 0:
        _norm(dim0, 0), _norm(dim1, 0)
        return input.view()
    # the array method wraps negative dims; an out-of-range dim raises numpy's AxisError, which
    # the registry turns into torch's IndexError
    try:
        return input.swapaxes(dim0, dim1)
    except TypeError:  # no int (None, a tuple): the registry words torch's error
        raise DimTypeError(dim0 if _not_int(dim0) else dim1) from None


@transpose.vjp
def _(grad, dim0, dim1):
    return grad.transpose(dim0, dim1)


swapaxes = alias(transpose, "swapaxes", renames={"dim0": "axis0", "dim1": "axis1"})
swapdims = alias(transpose, "swapdims")


def _permute_names(ins, dims):
    return _permuted_names(ins[0]._names, _shape_arg((dims,)))


@op(names=_permute_names, view=True, method=False)
def permute(xp, input, dims=None):
    """Reorder the dims (ints or names): a view."""
    n = input.ndim
    if not isinstance(dims, (tuple, list)):
        # torch's function form takes no bare int (the method makes one a tuple; a name is a
        # one-dim list by now): the registry words torch's parser error
        raise DimTypeError(dims)
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not "
            "match the length of the desired ordering of dimensions i.e. input.dim() "
            f"= {n} is not equal to len(dims) = {len(dims)}"
        )
    try:
        return input.transpose(dims)  # numpy wraps negative dims and rejects repeats
    except TypeError:
        _ints_arg("permute", "dims", 2, dims)  # torch's error for a dim that is no int
        raise
    except ValueError:
        _norm_list(dims, n, "permute", "dims", 2)  # torch's IndexError for a dim out of range
        raise RuntimeError("permute(): duplicate dims are not allowed.") from None


@permute.vjp
def _(grad, dims):
    dims = (dims,) if isinstance(dims, int) else dims
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return grad.permute(inv)


_PERMUTE = permute.op


def _dims_method(name: str, od):
    """The method ``x.<name>(*dims)`` / ``x.<name>(dims)`` of an op taking an ``int[] dims``
    (permute, flip): loose dims or one sequence (``x.permute(())`` is a 0-D tensor's)."""

    def method(self, *dims, **kw):
        if kw:
            return _dims_keyword(self, name, od, kw)
        if not dims:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dims"')
        elif len(dims) > 1 and type(dims[0]) is not int and not isinstance(dims[0], str):
            err = _varargs_error(name, "dims", dims)  # x.permute(1.0, 0): no overload takes it
            if err is not None:
                raise err
        if len(dims) == 1 and type(dims[0]) is not int:
            dims = _one_dims(name, dims[0])
        return apply(od, (self, dims), {})

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``x.{name}(*dims)`` or ``x.{name}(dims)``."
    return method


_permute_method = _dims_method("permute", _PERMUTE)


def _one_dims(fname: str, d):
    """``x.permute(d)``/``x.flip(d)``'s dims: one sequence (or a name), one int as torch's
    parser takes it (a numpy integer, a 0-d integer tensor), else the parser's error."""
    if isinstance(d, (tuple, list, str)):
        return d
    n = _as_int(d, True)
    if n is None:
        raise _int_list_error(fname, "dims", 1, d)
    return (n,)


def _dims_keyword(self, fname: str, od, kw: dict):
    """``x.permute(dims=...)``/``x.flip(dims=...)``: a keyword ``int[]`` is a sequence (or,
    here, a name), never one int."""
    d = kw.get("dims", ())
    if not isinstance(d, (tuple, list, str)):
        raise _int_list_error(fname, "dims", None, d)
    return apply(od, (self,), kw)


def _movedim_perm(n, source, destination):
    src = _norm_list(source, n, "movedim", "source", 2)
    dst = _norm_list(destination, n, "movedim", "destination", 3)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims)"
            f" should contain the same number of dims as destination ({list(dst)} "
            "dims)"
        )
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    if not n:  # a 0-D tensor accepts dim 0 / -1, which moves nothing
        return ()
    perm = [-1] * n
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(n) if i not in src)
    return tuple(p if p >= 0 else next(rest) for p in perm)


def _movedim_names(ins, source, destination):
    t = ins[0]
    return _permuted_names(t._names, _movedim_perm(t._data.ndim, source, destination))


@op(names=_movedim_names, view=True)
def movedim(xp, input, source=None, destination=None):
    """Move dims ``source`` to positions ``destination`` (ints, names or sequences): a view."""
    return xp.transpose(input, _movedim_perm(input.ndim, source, destination))


@movedim.vjp
def _(grad, source, destination):
    return grad.movedim(destination, source)


moveaxis = movedim  # declared an alias next to movedim.op.dim_overloads below


# ---------------------------------------------------------------------- squeeze / unsqueeze
def _unsqueeze_names(ins, dim):
    n = list(ins[0]._names)
    n.insert(dim % (len(n) + 1), None)
    return tuple(n)


@op(names=_unsqueeze_names, view=True)
def unsqueeze(xp, input, dim=None):
    """Insert a size-1 dim at ``dim`` (-ndim-1 <= dim <= ndim): a view."""
    if type(dim) is not int:
        dim = _int_arg("unsqueeze", "dim", 2, dim)
    n = input.ndim
    if not -n - 1 <= dim <= n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n - 1}, {n}], but got {dim})"
        )
    d = dim + n + 1 if dim < 0 else dim
    if input.flags.c_contiguous:
        s = input.shape
        return input.reshape(s[:d] + (1,) + s[d:])
    # torch's stride for the new dim (numpy's reshape would pick another for size-1 dims)
    st = list(input.strides)
    st.insert(d, input.shape[d] * st[d] if d < n else input.itemsize)
    shape = input.shape[:d] + (1,) + input.shape[d:]
    if xp is np:
        if input.flags.writeable:
            return _as_strided(input, shape, tuple(st))
        return _np_view(input, shape, tuple(st))  # of an expanded tensor: its views stay writable
    return xp.lib.stride_tricks.as_strided(input, shape, tuple(st))


@unsqueeze.vjp
def _(grad, dim):
    return grad.squeeze(dim)


class _AllDims:
    """squeeze's default dim (every size-1 dim): torch has no None overload, so an explicit
    ``squeeze(None)`` is its parser's TypeError (on a named tensor a name lookup, names spec 1)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "None"

    def __reduce__(self):
        return "_ALL_DIMS"


_ALL_DIMS = _AllDims()


def _squeeze_axes(shape, dim):
    if dim is _ALL_DIMS:
        return tuple(i for i, s in enumerate(shape) if s == 1)
    if dim is None:
        raise DimTypeError(None)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    n = len(shape)
    out = []
    seen = []
    for d in dims:
        if n == 0 and d in (0, -1):
            continue
        d = _norm(d, n)
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
        if shape[d] == 1:
            out.append(d)
    return tuple(out)


def _squeeze_names(ins, dim=_ALL_DIMS):
    t = ins[0]
    return remove_dims(t._names, _squeeze_axes(t._data.shape, dim))


@op(names=_squeeze_names, view=True)
def squeeze(xp, input, dim=_ALL_DIMS):
    """Remove size-1 dims (all of them, or those in ``dim``): a view."""
    return input.squeeze(axis=_squeeze_axes(input.shape, dim))


@squeeze.vjp
def _(grad, input_shape, dim):
    return grad.reshape(input_shape)


# torch's grad_fn names: squeeze() is SqueezeBackward0, squeeze(int) 1, squeeze(dims) 2
squeeze.op.name_rule = lambda node: (
    "SqueezeBackward0"
    if (d := node.saved_arg("dim")) is _ALL_DIMS
    else "SqueezeBackward2"
    if isinstance(d, (tuple, list))
    else "SqueezeBackward1"
)


# ---------------------------------------------------------------------- indexing-like views
@op(names=FALLBACK, method=False, view=True)
def _take(xp, input, key=None):
    # input[key] for a tuple of slices/ints ending with Ellipsis (a view); pairs with _put_back
    return input[key]


@_take.vjp
def _(grad, input_shape, key):
    return _put_back(grad, input_shape, key)


@op(names=FALLBACK, method=False)
def _put_back(xp, grad, shape=None, key=None):
    # zeros of ``shape`` with ``grad`` written at ``key``: the derivative of _take/narrow/select
    out = xp.zeros(tuple(shape), grad.dtype)
    out[key] = grad
    return out


@_put_back.vjp
def _(grad, key):
    return _take(grad, key)


def _select_names(ins, dim, index):
    t = ins[0]
    return remove_dims(t._names, (dim % t._data.ndim,))


def _select_key(n, dim, index):
    return (slice(None),) * dim + (index, Ellipsis)


@op(names=_select_names, view=True)
def select(xp, input, dim=None, index=None):
    """The slice at ``index`` along ``dim`` (the dim is removed): a view."""
    n = input.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _norm(dim, n)
    size = input.shape[d]
    if type(index) is not int:
        index = _int_arg("select", "index", 3, index)
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(input.shape)} at dimension {d}"
        )
    return input[(slice(None),) * d + (index, Ellipsis)]


@select.vjp
def _(grad, input_shape, dim, index):
    n = len(input_shape)
    d = dim % n
    return _put_back(
        grad, input_shape, (slice(None),) * d + (int(index) % input_shape[d], Ellipsis)
    )


def _narrow_int(v) -> int:
    # no int (a float, a bool, a str) matches none of torch's narrow overloads: the registry
    # turns DimTypeError into its "invalid combination" error (narrow.op.dim_overloads)
    if isinstance(v, (float, bool)) or not hasattr(v, "__index__"):
        raise DimTypeError(v)
    return int(v)


@op(names=keep, view=True)
def narrow(xp, input, dim=None, start=None, length=None):
    """``length`` elements from ``start`` along ``dim``: a view."""
    n = input.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _norm(dim, n)
    size = input.shape[d]
    st = getattr(start, "_data", start)  # a tensor start: 0-dim integral only, like torch
    if hasattr(st, "ndim") and (st.ndim or st.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    if type(start) is not int or type(length) is not int:
        start, length = _narrow_int(start), _narrow_int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return input[(slice(None),) * d + (slice(start, start + length), Ellipsis)]


@narrow.vjp
def _(grad, input_shape, dim, start, length):
    d = dim % len(input_shape)
    s = int(start) % input_shape[d] if input_shape[d] else 0
    return _put_back(grad, input_shape, (slice(None),) * d + (slice(s, s + int(length)), Ellipsis))


# ---------------------------------------------------------------------- split / chunk / unbind
def _pieces(input, d, bounds):
    pre = (slice(None),) * d
    return tuple(input[pre + (slice(a, b), Ellipsis)] for a, b in pairwise(bounds))


def _bounds(sizes):
    b = [0]
    for s in sizes:
        b.append(b[-1] + s)
    return b


def _cat_grads(grad, dim):
    return cat(grad if type(grad) is tuple else (grad,), dim)


@op(names=keep, view=True, n_diff_out=_ALL)
def split(xp, input, split_size_or_sections=None, dim=0):
    """Views of ``split_size`` elements each along ``dim`` (the last may be smaller), or of the
    listed sizes."""
    if not input.ndim:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _norm(dim, input.ndim)
    size = input.shape[d]
    s = split_size_or_sections
    if isinstance(s, (tuple, list)):
        sizes = list(_ints_arg("split_with_sizes", "split_sizes", 2, s))
        if any(x < 0 for x in sizes):
            raise RuntimeError(
                "split_with_sizes expects split_sizes have only non-negative "
                f"entries, but got split_sizes={sizes}"
            )
        if sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} "
                f"(input tensor's size at dimension {d}), but got "
                f"split_sizes={sizes}"
            )
        return _pieces(input, d, _bounds(sizes))
    if type(s) is not int:
        if not isinstance(s, Tensor) or s.ndim:
            # torch takes an int or a tensor as the size and sends anything else (a numpy
            # integer too) to split_with_sizes, whose error is the one shown (torch's listing
            # of split's overloads for a bool is not reproduced: it gets this text too)
            raise TypeError(
                "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, "
                f"not {_type_name(s)}"
            )
        s = int(s)
    if s < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
    if s == 0:
        if size != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            )
        return (input[(slice(None),) * d + (slice(0, 0), Ellipsis)],)
    return _pieces(input, d, list(range(0, size, s)) + [size] if size else [0, 0])


@split.vjp
def _(grad, dim, split_size_or_sections):  # the sizes name the node (SplitWithSizesBackward0)
    return _cat_grads(grad, dim)


split.op.name_rule = lambda node: (
    "SplitWithSizesBackward0"
    if isinstance(node.saved_arg("split_size_or_sections"), (list, tuple))
    else "SplitBackward0"
)


@op(names=keep, view=True, n_diff_out=_ALL)
def chunk(xp, input, chunks=None, dim=0):
    """At most ``chunks`` views of equal size (the last may be smaller) along ``dim``."""
    if type(chunks) is not int:
        chunks = _int_arg("chunk", "chunks", 2, chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if not input.ndim:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = _norm(dim, input.ndim)
    size = input.shape[d]
    if size == 0:
        return _pieces(input, d, [0] * (chunks + 1))
    s = -(-size // chunks)
    return _pieces(input, d, list(range(0, size, s)) + [size])


@chunk.vjp
def _(grad, dim):
    return _cat_grads(grad, dim)


@op(names=keep, view=True, n_diff_out=_ALL)
def tensor_split(xp, input, indices_or_sections=None, dim=0):
    """Views split at the given indices, or into n nearly equal sections (the first ones larger)."""
    if not input.ndim:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = _norm(dim, input.ndim)
    size = input.shape[d]
    s = indices_or_sections
    if hasattr(s, "_data"):  # torch: a 1-d tensor holds indices, a 0-d tensor the sections
        if s.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {s.dim()} dims"
            )
        if s.dtype != _dt.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                f"{_dt.scalar_name(s.dtype)}"
            )
        s = s.tolist()
    if isinstance(s, (tuple, list)):
        pre = (slice(None),) * d
        return tuple(input[pre + k] for k in _index_pieces(s, size))
    if isinstance(s, (float, bool)) or not hasattr(s, "__index__"):
        raise DimTypeError(s)  # no overload takes it: the registry lists them (dim_overloads)
    n = int(s)
    if n <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {n}")
    q, r = divmod(size, n)
    return _pieces(input, d, _bounds([q + 1] * r + [q] * (n - r)))


def _index_pieces(indices, size: int) -> list:
    """tensor_split's pieces at ``indices`` of a dim of ``size``, as (slice, Ellipsis) keys."""
    bounds = [0] + [min(max(int(i) if i >= 0 else int(i) + size, 0), size) for i in indices]
    bounds.append(size)
    return [(slice(a, max(a, b)), Ellipsis) for a, b in pairwise(bounds)]


@tensor_split.vjp
def _(grad, input_shape, dim, indices_or_sections):
    s = indices_or_sections
    if not isinstance(s, (tuple, list)) and getattr(s, "ndim", 0) != 1:
        return _cat_grads(grad, dim)  # sections tile the input
    d = dim % len(input_shape)
    keys = _index_pieces(s.tolist() if hasattr(s, "_data") else s, input_shape[d])
    if all(a.stop <= b.start for (a, _), (b, _) in pairwise(keys)):
        return _cat_grads(grad, dim)
    # indices that go back make pieces overlap: each piece's gradient goes where it came from
    pre = (slice(None),) * d
    out = None
    for g, k in zip(grad if type(grad) is tuple else (grad,), keys):
        g = _put_back(g, input_shape, pre + k)
        out = g if out is None else out + g
    return out


def _unbind_names(ins, dim=0):
    t = ins[0]
    return remove_dims(t._names, (dim % t._data.ndim,))


@op(names=_unbind_names, view=True, n_diff_out=_ALL)
def unbind(xp, input, dim=0):
    """The slices along ``dim`` (removed), as a tuple of views."""
    if not input.ndim:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _norm(dim, input.ndim)
    pre = (slice(None),) * d
    return tuple(input[pre + (i, Ellipsis)] for i in range(input.shape[d]))


@unbind.vjp
def _(grad, dim):
    return stack(grad if type(grad) is tuple else (grad,), dim)


# ---------------------------------------------------------------------- cat / stack
@op(name="_cat", names=unify_inputs, promote=True, seq=True, method=False)
def _cat(xp, tensors, dim=0):
    ref = None
    for i, a in enumerate(tensors):
        if not hasattr(a, "ndim") or isinstance(a, (int, float, complex)):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(a).__name__}"
            )
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if ref is None and a.shape != (0,):
            ref = a
    if ref is None:  # only legacy empty 1-D tensors: torch checks no dim (all are skipped)
        return xp.concatenate(tensors)
    n = ref.ndim
    d = _norm(dim, n)
    keep_ = []
    for i, a in enumerate(tensors):
        if a.shape == (0,) and n != 1:
            continue  # torch skips empty 1-D tensors (legacy behaviour)
        if a.ndim != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and {a.ndim}")
        for k in range(n):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list."
                )
        keep_.append(a)
    out = xp.concatenate(keep_, axis=d)
    fmt = _layout.contiguous_format
    if out.ndim in (4, 5) and not tensors[0].flags.c_contiguous:
        fmt = _layout.suggest_array(tensors[0])
        for a in tensors[1:]:  # torch: the format every input suggests, else contiguous
            if _layout.suggest_array(a) is not fmt:
                fmt = _layout.contiguous_format
                break
    if fmt is _layout.contiguous_format:
        # numpy keeps the inputs' common layout (transposed inputs: a transposed result)
        return out if out.flags.c_contiguous else xp.ascontiguousarray(out)
    # numpy strides a size-1 dim its own way, which can make its result row-major
    isz = out.itemsize
    if tuple(s // isz for s in out.strides) != _layout._format_strides(out.shape, fmt):
        out = _layout.format_array(xp, out, fmt)
    return out


@_cat.vjp
def _(grad, dim, tensors_shape):
    shapes = tensors_shape
    n = grad.dim()
    d = dim % n
    # Each input's gradient is a narrow of grad (torch's SliceBackward0 under create_graph, also
    # for a single input); a skipped legacy empty 1-D input gets an empty gradient, like torch's.
    grads = []
    start = 0
    for s in shapes:
        if s == (0,) and n != 1:
            grads.append(grad.detach().new_zeros(0))
            continue
        grads.append(grad.narrow(d, start, s[d]))
        start += s[d]
    return grads[0] if len(shapes) == 1 else tuple(grads)


def _plain_arrays(tensors):
    """The arrays of ``tensors`` when joining them needs none of the registry's work (plain,
    unnamed numpy tensors of one dtype no gradient flows through, outside vmap); else None."""
    if _VMAP_SLICES:
        return None
    arrays = []
    dt = None
    for t in tensors:
        if type(t) is not Tensor or t.requires_grad or t._names is not None:
            return None
        a = t._data
        if type(a) is not _ndarray:
            return None
        if dt is None:
            dt = a.dtype
            if dt.kind == "V":  # bfloat16: the registry's promotion pass
                return None
        elif a.dtype is not dt:
            return None
        arrays.append(a)
    return arrays or None


def _fast_cat(tensors, dim):
    """cat's common call without the registry: None sends any other (and every error) down the
    general path, which reports it."""
    arrays = _plain_arrays(tensors)
    if arrays is None:
        return None
    try:
        r = np.concatenate(arrays, axis=dim)  # numpy refuses what torch's cat refuses here
    except (ValueError, TypeError, MemoryError):
        return None
    if r.ndim in (4, 5) and not arrays[0].flags.c_contiguous:
        return None  # (the result's memory format follows the inputs': the kernel decides)
    return _wrap(r if r.flags.c_contiguous else np.ascontiguousarray(r))


def _fast_stack(tensors, dim):
    """stack's common call along dim 0 without the registry (see _fast_cat)."""
    arrays = _plain_arrays(tensors)
    if arrays is None:
        return None
    a0 = arrays[0]
    s = a0.shape
    if len(s) in (4, 5) and not a0.flags.c_contiguous:
        return None  # (a channels_last input: the kernel's layout rules)
    for a in arrays:
        if a.shape != s:
            return None
    if not s:  # 0-d values (a batch of labels): np.array joins them 10x faster than np.stack
        return _wrap(np.array(arrays, dtype=a0.dtype))
    r = np.concatenate(arrays).reshape((len(arrays), *s))  # (np.stack costs 3x as much)
    return _wrap(r if r.flags.c_contiguous else np.ascontiguousarray(r))


@_autocast_entry
def cat(tensors, dim=0, *, axis=None, out=None) -> Tensor:
    """Concatenate tensors along an existing dim ``dim`` (dtypes promoted like torch; names
    unified)."""
    if out is None and axis is None and type(dim) is int and type(tensors) in (list, tuple):
        r = _fast_cat(tensors, dim)
        if r is not None:
            return r
    if axis is not None:
        dim = axis
    _not_one_tensor(tensors, "cat")
    try:
        return _cat(tensors, dim) if out is None else _cat(tensors, dim, out=out)
    except RuntimeError as e:
        if str(e).startswith("Sizes of tensors"):
            _unify_names(tensors)  # like torch, a names mismatch is reported first
        raise
    except ValueError as e:
        # the registry names the kernel (_cat); torch names the public function
        if str(e).startswith("_cat(): expected a non-empty"):
            raise ValueError("torch.cat(): expected a non-empty list of Tensors") from None
        raise
    except TypeError:
        if not isinstance(tensors, (list, tuple)):
            # torch's parser takes a sequence only (a str or a number is no list of tensors)
            raise TypeError(
                "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                + _type_name(tensors)
            ) from None
        raise


def _as_alias(e: TypeError, name: str) -> None:
    """Raise ``e``, raised by cat, as the alias ``name`` reports it (torch's parser names the
    function called); any other error of cat's stands."""
    msg = str(e)
    if msg.startswith("cat()"):
        raise TypeError(name + msg[3:]) from None


def _unify_names(tensors) -> None:
    from ..names import unify

    names = None
    for t in tensors:
        if t._names is not None:
            names = t._names if names is None else unify(names, t._names)


def concat(tensors, dim=0, *, out=None) -> Tensor:
    """Alias of ``cat``."""
    try:
        return cat(tensors, dim, out=out) if out is not None else cat(tensors, dim)
    except TypeError as e:
        _as_alias(e, "concat")
        raise


def concatenate(tensors, axis=0, *, out=None) -> Tensor:
    """Alias of ``cat`` (numpy's argument name)."""
    try:
        return cat(tensors, axis, out=out) if out is not None else cat(tensors, axis)
    except TypeError as e:
        _as_alias(e, "concatenate")
        raise


def _not_one_tensor(tensors, who) -> None:
    """torch refuses a single tensor where a sequence of tensors goes (it would iterate rows)."""
    if isinstance(tensors, Tensor):
        raise TypeError(
            f"{who}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
        )


def _check_seq(tensors, who):
    _not_one_tensor(tensors, who)
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError(f"{who} expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    return tensors


def _stack_names(ins, dim=0):
    names = unify_inputs(ins)
    if names is None:
        return None
    n = list(names)
    n.insert(dim % (len(n) + 1), None)
    return tuple(n)


@op(name="_stack", names=_stack_names, promote=True, seq=True, method=False)
def _stack(xp, tensors, dim=0):
    s0 = None
    for i, a in enumerate(tensors):
        if not hasattr(a, "ndim") or isinstance(a, (int, float, complex)):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(a).__name__}"
            )
        if s0 is None:
            s0 = a.shape
        elif a.shape != s0:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(s0)} at "
                f"entry 0 and {list(a.shape)} at entry {i}"
            )
    d = _norm(dim, len(s0) + 1)
    out = xp.stack(tensors, axis=d)
    if not out.flags.c_contiguous:
        # numpy keeps the inputs' layout (transposed inputs: a transposed result); torch's is
        # contiguous unless the inputs are channels_last and the new dim is not the last one
        a = tensors[0]
        if d == a.ndim or _layout.suggest_array(a) is _layout.contiguous_format:
            out = xp.ascontiguousarray(out)
    return out


@_stack.vjp
def _(grad, dim):
    return grad.unbind(dim)


def _join_out(out, res, ins=()):
    """torch's cat (and stack, written through it) refuses an out= its inputs cannot be cast
    to with a TypeError of its own; a safe cast is fine."""
    if not _dt.can_cast(res.dtype, out.dtype):
        raise TypeError(
            "torch.cat(): input types can't be cast to the desired output type "
            f"{_dt.scalar_name(out.dtype)}"
        )


_cat.op.out_dtype = _stack.op.out_dtype = _join_out
_cat.op.label, _stack.op.label = "cat", "stack"  # (their errors name the public functions)


@_autocast_entry
def stack(tensors, dim=0, *, out=None) -> Tensor:
    """Join same-shaped tensors along a new dim ``dim`` (its name is None)."""
    if not isinstance(tensors, (tuple, list)):
        _not_one_tensor(tensors, "stack")
        tensors = tuple(tensors)
    elif type(dim) is int and dim == 0 and out is None:
        r = _fast_stack(tensors, dim)
        if r is not None:
            return r
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    return _stack(tensors, dim) if out is None else _stack(tensors, dim, out=out)


def hstack(tensors, *, out=None) -> Tensor:
    """Concatenate horizontally (dim 1; dim 0 for 1-D tensors)."""
    tensors = _check_seq(tensors, "hstack")
    tensors = [reshape(t, 1) if t._data.ndim == 0 else t for t in tensors]
    d = 0 if tensors and tensors[0]._data.ndim == 1 else 1
    return cat(tensors, d, out=out) if out is not None else cat(tensors, d)


def vstack(tensors, *, out=None) -> Tensor:
    """Concatenate vertically (dim 0) after making every tensor at least 2-D."""
    tensors = [reshape(t, 1, -1) if t._data.ndim < 2 else t for t in _check_seq(tensors, "vstack")]
    return cat(tensors, 0, out=out) if out is not None else cat(tensors, 0)


def dstack(tensors, *, out=None) -> Tensor:
    """Concatenate depth-wise (dim 2) after making every tensor at least 3-D."""

    def at3(t):
        n = t._data.ndim
        if n == 0 or n == 1:
            return reshape(t, 1, -1, 1)
        return unsqueeze(t, 2) if n == 2 else t

    tensors = [at3(t) for t in _check_seq(tensors, "dstack")]
    return cat(tensors, 2, out=out) if out is not None else cat(tensors, 2)


# ---------------------------------------------------------------------- flip / roll / tril
@op(names=keep, method=False)
def flip(xp, input, dims=None):
    """Reverse the order of elements along ``dims`` (a copy, like torch)."""
    n = input.ndim
    if not isinstance(dims, (tuple, list)):  # as permute's (the method passes a tuple)
        raise DimTypeError(dims)
    ax = _norm_list(dims, n, "flip", "dims", 2)
    if len(set(ax)) != len(ax):
        d = next(a for i, a in enumerate(ax) if a in ax[:i])
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if not n:
        ax = ()  # a 0-d tensor flips to itself (its dim 0 / -1 is allowed)
    elif 1 in input.shape:
        # a size-1 dim flips to itself; numpy would give it a negative stride, under which the
        # array still counts as contiguous (and ascontiguousarray returned the input's memory)
        ax = tuple(a for a in ax if input.shape[a] > 1)
    r = xp.flip(input, ax)
    if input.flags.c_contiguous:
        return r.copy()
    # torch's flip keeps a permuted input's layout (a transposed input gives a transposed
    # result, whose transpose in rot90 is then contiguous)
    r = r.copy(order="K")
    return r if r.flags.c_contiguous else _layout.broadcast_copy(xp, input, r)


@flip.vjp
def _(grad, dims):
    return flip(grad, dims)


_FLIP = flip.op


_flip_method = _dims_method("flip", _FLIP)


def fliplr(input: Tensor) -> Tensor:
    """Flip left/right (dim 1); needs >= 2 dims."""
    try:
        low = input._data.ndim < 2
    except AttributeError:
        raise _must_be_tensor("fliplr", ("input",), (input,)) from None
    if low:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """Flip up/down (dim 0); needs >= 1 dim."""
    try:
        low = input._data.ndim < 1
    except AttributeError:
        raise _must_be_tensor("flipud", ("input",), (input,)) from None
    if low:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@op(names=keep)
def roll(xp, input, shifts=None, dims=None):
    """Rotate elements along ``dims`` by ``shifts`` (the flattened tensor when dims is None)."""
    sh = (shifts,) if type(shifts) is int else _ints_arg("roll", "shifts", 2, shifts)
    if not len(sh):
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        return xp.roll(input, int(sh[0]))  # flattened: always row-major
    dm = (dims,) if type(dims) is int else _ints_arg("roll", "dims", 3, dims)
    if len(sh) != len(dm):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(dm)}")
    if input.ndim == 0:  # torch's wording for a 0-dim tensor (no dim, not even 0 or -1)
        raise IndexError(f"Dimension specified as {dm[0]} but tensor has no dimensions")
    r = xp.roll(input, tuple(int(s) for s in sh), _norm_list(dm, input.ndim, "roll", "dims", 3))
    if not r.flags.c_contiguous and _layout.suggest_array(input) is _layout.contiguous_format:
        # numpy keeps a permuted input's layout; torch's result has the input's suggested
        # memory format (contiguous, or channels_last for a channels_last input)
        r = xp.ascontiguousarray(r)
    return r


@roll.vjp
def _(grad, shifts, dims):
    sh = tuple(-int(s) for s in shifts) if isinstance(shifts, (tuple, list)) else -int(shifts)
    return grad.roll(sh, dims)


def _tri_check(input, who):
    if input.ndim < 2:
        raise RuntimeError(f"{who}: input tensor must have at least 2 dimensions")


@op(names=keep, inplace="tril_")
def tril(xp, input, diagonal=0):
    """The lower triangle of the last two dims (elements above ``diagonal`` are zero)."""
    _tri_check(input, "tril")
    # numpy keeps a permuted input's layout (3 or more dims), torch's result is contiguous
    if type(diagonal) is not int:
        diagonal = _int_arg("tril", "diagonal", 2, diagonal)
    r = xp.tril(input, diagonal)
    return _layout.row_major(xp, r) if input.ndim > 2 else r


@tril.vjp
def _(grad, diagonal):
    return grad.tril(diagonal)


@op(names=keep, inplace="triu_")
def triu(xp, input, diagonal=0):
    """The upper triangle of the last two dims (elements below ``diagonal`` are zero)."""
    _tri_check(input, "triu")
    # numpy keeps a permuted input's layout (3 or more dims), torch's result is contiguous
    if type(diagonal) is not int:
        diagonal = _int_arg("triu", "diagonal", 2, diagonal)
    r = xp.triu(input, diagonal)
    return _layout.row_major(xp, r) if input.ndim > 2 else r


@triu.vjp
def _(grad, diagonal):
    return grad.triu(diagonal)


def _install_out_checks() -> None:
    from .decompositions import _exact  # structured kernels: the out= dtype is the result's

    tril.op.out_dtype = triu.op.out_dtype = _exact


_install_out_checks()


# ---------------------------------------------------------------------- diagonal
def _diag_view(xp, a, offset, d1, d2):
    """The diagonal of ``a`` over dims d1, d2 (normalised) as a writable strided view, last."""
    idx = [slice(None)] * a.ndim
    if offset >= 0:
        idx[d2] = slice(offset, None)
    else:
        idx[d1] = slice(-offset, None)
    s = a[tuple(idx)]
    length = max(0, min(s.shape[d1], s.shape[d2]))
    others = [i for i in range(a.ndim) if i != d1 and i != d2]
    shape = tuple(s.shape[i] for i in others) + (length,)
    strides = tuple(s.strides[i] for i in others) + (s.strides[d1] + s.strides[d2],)
    if xp is np and not s.flags.writeable:
        return _np_view(s, shape, strides)  # of an expanded tensor: writable where torch writes
    return xp.lib.stride_tricks.as_strided(s, shape, strides)


def _diag_dims(n, dim1, dim2):
    d1, d2 = _norm(dim1, n), _norm(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _diagonal_names(ins, offset=0, dim1=0, dim2=1):
    t = ins[0]
    n = t._data.ndim
    rest = remove_dims(t._names, (dim1 % n, dim2 % n))
    return None if rest is None else rest + (None,)


@op(names=_diagonal_names, view=True)
def diagonal(xp, input, offset=0, dim1=0, dim2=1):
    """The diagonal over ``dim1``, ``dim2`` (appended as the last dim): a view."""
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    if type(offset) is not int:
        offset = _int_arg("diagonal", "offset", 2, offset)
    return _diag_view(xp, input, offset, d1, d2)


@diagonal.vjp
def _(grad, input_shape, offset, dim1, dim2):
    return _diagonal_backward(grad, input_shape, offset, dim1, dim2)


@op(names=FALLBACK, method=False)
def _diagonal_backward(xp, grad, shape=None, offset=0, dim1=0, dim2=1):
    out = xp.zeros(tuple(shape), grad.dtype)
    n = len(shape)
    _diag_view(xp, out, int(offset), dim1 % n, dim2 % n)[...] = grad
    return out


@_diagonal_backward.vjp
def _(grad, offset, dim1, dim2):
    return grad.diagonal(offset, dim1, dim2)


@op(names=FALLBACK)
def diag_embed(xp, input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals over ``dim1``, ``dim2`` hold the last dim of ``input``."""
    n = input.ndim + 1
    d1, d2 = _diag_dims(n, dim1, dim2)
    if type(offset) is not int:
        offset = _int_arg("diag_embed", "offset", 2, offset)
    m = input.shape[-1] + abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, m)
    out = xp.zeros(tuple(shape), input.dtype)
    _diag_view(xp, out, offset, d1, d2)[...] = input
    return out


@diag_embed.vjp
def _(grad, offset, dim1, dim2):
    return grad.diagonal(offset, dim1, dim2)


# ---------------------------------------------------------------------- layout copy, conj
@op(names=keep, method=False)
def _contiguous(xp, input, memory_format=None):
    # a copy laid out as memory_format (Tensor.contiguous when the layout differs)
    return _layout.format_array(xp, input, memory_format)


@_contiguous.vjp
def _(grad):
    return grad


@op(names=keep, method=False)
def _conj(xp, input):
    """conj() of a complex tensor (torch's ConjBackward0 node): a copy, as ember keeps no lazy
    conjugate bit."""
    return xp.conj(input)


@_conj.vjp
def _(grad):
    return _conj(grad)


# ---------------------------------------------------------------------- t / T / mT / H / mH
def _t_names(ins):
    return ins[0]._names[::-1]


@op(names=_t_names, view=True, method=False)
def t(xp, input):
    """Transpose a tensor of <= 2 dims: a view (of the same shape for 0-D and 1-D tensors)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return input.T


@t.vjp
def _(grad):
    return t(grad)


def _mT(self):
    if self.ndim < 2:
        if not self.ndim:
            _warn_once("mT")
            return self
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. Got "
            f"{self.ndim}-D tensor."
        )
    return transpose(self, -2, -1)


_T_WARNED: set = set()  # torch warns once per process about each deprecated use of .T etc.
_T_DEPRECATED = {
    0: "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
    3: "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
    "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose "
    "batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
    "dimensions of a tensor.",
    "mT": "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
    "mH": "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().",
    "H": "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
    "adjoint": "adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
}


def _warn_once(key) -> None:
    if key not in _T_WARNED:
        _T_WARNED.add(key)
        warnings.warn(_T_DEPRECATED[key], UserWarning, stacklevel=3)


def _T(self):
    n = self.ndim
    if n != 1 and n != 2:
        _warn_once(min(n, 3))
    # torch permutes a 0-D or 1-D tensor too: a view of it (PermuteBackward0), not the tensor
    return apply(_PERMUTE, (self, tuple(range(n - 1, -1, -1))), {})


def _conj_if(x: Tensor) -> Tensor:
    return _conj(x) if x._data.dtype.kind == "c" else x


def _H(self):
    n = self.ndim
    if n != 2 and n != 0:
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}"
        )
    if n == 0:
        _warn_once("H")
    return _conj_if(self if n == 0 else transpose(self, 0, 1))


def _mH(self, who="mH"):
    if self.ndim < 2:
        if not self.ndim:  # torch: deprecated, the conjugate
            _warn_once(who)
            return _conj_if(self)
        what = "tensor.mH" if who == "mH" else "tensor.adjoint()"
        raise RuntimeError(
            f"{what} is only supported on matrices or batches of matrices. Got "
            f"{self.ndim}-D tensor."
        )
    return _conj_if(transpose(self, -2, -1))


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (``input.mH``)."""
    try:
        return _mH(input, "adjoint")
    except AttributeError as e:
        raise _must_be_tensor("adjoint", ("input",), (input,)) or e from None


def _inplace_meta(fn, name, bname):
    """``squeeze_``/``unsqueeze_``/``transpose_``/``t_``: change self's shape in place; ``bname``
    is torch's node for the in-place overload (a name, or a rule on the arguments)."""

    def m(self, *args, **kw):
        from ...autograd.grad_mode import _INFERENCE_USED, check_inference_inplace
        from ...autograd.views import forget
        from ..registry import check_metadata_inplace

        if _INFERENCE_USED[0]:
            check_inference_inplace(self)
        check_metadata_inplace(self)  # torch's in-place checks of a metadata change too
        r = fn(self, *args, **kw)
        self._data = r._data
        self._names = r._names
        if r._grad_fn is not None:
            r._grad_fn.bname = bname if type(bname) is str else bname(args, kw)
            self._grad_fn = r._grad_fn
            self.requires_grad = True
            if self._extra and "nr" in self._extra:
                self._extra = {k: v for k, v in self._extra.items() if k != "nr"} or None
            forget(self)  # its replay from the base no longer gives this geometry
        self._ver[0] += 1
        return self

    m.__name__ = name
    return m


def _install():
    Tensor.view = _view_method
    Tensor.view_as = view_as
    Tensor.reshape = reshape
    Tensor.reshape_as = reshape_as
    # the method: a copy of flatten counting its positions after self, as torch's method parser
    # does (a keyword default, so the call pays nothing)
    m = _types.FunctionType(flatten.__code__, flatten.__globals__, "flatten", flatten.__defaults__)
    m.__kwdefaults__ = {"_self_pos": 1}
    m.__doc__, m.__qualname__, m.__module__ = flatten.__doc__, "Tensor.flatten", flatten.__module__
    Tensor.flatten = m
    Tensor.unflatten = unflatten
    Tensor.ravel = ravel
    Tensor.permute = _permute_method
    Tensor.flip = _flip_method
    Tensor.fliplr = fliplr
    Tensor.flipud = flipud
    Tensor.swapaxes = Tensor.swapdims = transpose
    Tensor.moveaxis = movedim
    Tensor.expand_as = expand_as
    Tensor.broadcast_to = broadcast_to
    Tensor.tile = _tile_method
    Tensor.t = t
    Tensor.adjoint = adjoint
    Tensor.mT = property(_mT)
    Tensor.T = property(_T)
    Tensor.H = property(_H)
    Tensor.mH = property(_mH)
    Tensor.squeeze_ = _inplace_meta(squeeze, "squeeze_", _squeeze_inplace_node)
    Tensor.unsqueeze_ = _inplace_meta(unsqueeze, "unsqueeze_", "UnsqueezeBackward1")
    Tensor.transpose_ = _inplace_meta(transpose, "transpose_", "TransposeBackward1")
    Tensor.swapaxes_ = Tensor.swapdims_ = Tensor.transpose_
    Tensor.t_ = _inplace_meta(t, "t_", "TBackward1")


def _squeeze_inplace_node(args, kw) -> str:
    """torch's squeeze_ overloads: all dims (3), one dim (4), several (5)."""
    dim = args[0] if args else kw.get("dim")
    if dim is None:
        return "SqueezeBackward3"
    return "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4"


_install()


# ---------------------------------------------------------------------- as_strided
def _storage(input):
    """(root array, input's offset in it, root's size): the memory the input views (its storage)."""
    from ..storage import _root

    root = _root(input)
    isz = input.itemsize
    ptr = (
        (lambda a: a.__array_interface__["data"][0])
        if isinstance(input, np.ndarray)
        else (lambda a: a.data.ptr)
    )
    return root, (ptr(input) - ptr(root)) // isz, root.nbytes // isz


def _positions(xp, shape, strides, offset):
    """The storage index of every element of a (shape, strides, offset) view, as an int64 array."""
    pos = xp.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        idx = xp.arange(n, dtype=np.int64).reshape((n,) + (1,) * (len(shape) - d - 1))
        pos = pos + idx * s
    return pos


@op(names=FALLBACK, view=True)
def as_strided(xp, input, size=(), stride=(), storage_offset=None):
    """A view of ``input``'s storage with the given ``size``, ``stride`` (in elements) and
    ``storage_offset`` (default: the input's own), bounds-checked against the storage like torch."""
    if not isinstance(size, (tuple, list)) or not isinstance(stride, (tuple, list)):
        bad = ("size", 2, size) if not isinstance(size, (tuple, list)) else ("stride", 3, stride)
        raise _ints_error("as_strided", *bad)  # one int is no int[] here
    size = _ints_arg("as_strided", "size", 2, size)
    stride = _ints_arg("as_strided", "stride", 3, stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(stride)}"
        )
    root, in_off, n = _storage(input)
    off = in_off if storage_offset is None else int(storage_offset)
    need = off + sum((a - 1) * b for a, b in zip(size, stride)) + 1 if all(size) else 0
    isz = input.itemsize
    if need > n or off < 0:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize {isz} requiring a storage size of {need * isz} are out of bounds for "
            f"storage of size {n * isz}"
        )
    # the storage in memory order: a root allocated permuted (a clone of a transposed tensor
    # keeps its strides) would be copied in row-major order by reshape(-1)
    flat = root.ravel(order="K")
    if flat.dtype != input.dtype:  # a dtype view (t.view(int32)): its elements, not the root's
        flat = flat.view(input.dtype)
    r = xp.lib.stride_tricks.as_strided(flat[off:], size, tuple(s * isz for s in stride))
    if 0 in stride and any(not b and a > 1 for a, b in zip(size, stride)):
        # elements aliased like an expansion's: torch refuses writes into it (its overlap check
        # sees a zero stride only), and so does a read-only array
        r.flags.writeable = False
    return r


@as_strided.vjp
def _(grad, input_geometry, size, stride, storage_offset):
    # scatter-add the gradient into a storage-sized buffer, then read the input's elements back;
    # only the input's layout is kept (torch's too), so in-place writes to it do not invalidate
    data = input_geometry
    xp = array_module(data)
    _, in_off, n = _storage(data)
    off = in_off if storage_offset is None else int(storage_offset)
    isz = data.itemsize
    p = _wrap(_positions(xp, size, stride, off).reshape(-1))
    q = _wrap(_positions(xp, data.shape, [s // isz for s in data.strides], in_off))
    return grad.new_zeros(n).index_add(0, p, grad.reshape(-1))[q]


# torch's grad_fn names where ember's op has another name (scripts and reprs print them)
narrow.op.backward_name = "SliceBackward0"
chunk.op.backward_name = "SplitBackward0"
movedim.op.backward_name = "PermuteBackward0"

# the options torch parses as ints: a str there is its TypeError (the kernels' int() met it)
chunk.op.int_args = {"chunks": "int"}
flip.op.int_args = permute.op.int_args = {"dims": "tuple of ints"}
flip.op.list_dims = permute.op.list_dims = True  # int[], not int[1]: no bare int, no tensor
# a dim of the wrong type (a float) matches none of torch's overloads: it lists them all
squeeze.op.dim_overloads = (
    "(Tensor input)",
    "(Tensor input, int dim)",
    "(Tensor input, tuple of ints dim)",
)
narrow.op.dim_overloads = (
    "(Tensor input, int dim, Tensor start, int length)",
    "(Tensor input, int dim, int start, int length)",
)
movedim.op.dim_overloads = (
    "(Tensor input, int source, int destination)",
    "(Tensor input, tuple of ints source, tuple of ints destination)",
)
# torch lists them for moveaxis given a non-Tensor input too (movedim names the argument)
alias(movedim, "moveaxis", overloads=movedim.op.dim_overloads)
roll.op.int_args = {"shifts": "tuple of ints", "dims": "tuple of ints"}
tensor_split.op.overloads = tensor_split.op.dim_overloads = (
    "(Tensor input, tuple of ints indices, int dim = 0)",
    "(Tensor input, Tensor tensor_indices_or_sections, int dim = 0)",
    "(Tensor input, int sections, int dim = 0)",
)


# torch's contiguous() is a clone; its reshape of a tensor no view can give is a clone followed by
# an _unsafe_view, whose node is the one the result carries
backward_names({"_contiguous": "CloneBackward0", "_reshape_copy": "UnsafeViewBackward0"})
