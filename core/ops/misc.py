"""torch's "other operations": cross, diag, diagflat, diff, rot90, gcd, lcm, renorm,
repeat_interleave, trace, vander, view_as_real/view_as_complex, resolve_neg, trapezoid,
cumulative_trapezoid, addr.

Ops with their own kernel are registered with a derivative in ember ops; the rest are compositions
of registered ops, so their gradients (and double gradients) come from those.
"""

from __future__ import annotations

import numpy as np

from ...autograd.node import as_torch_node
from .. import dtype as _dt
from ..arg_errors import overloaded as _overloaded
from ..arg_errors import tensor_input as _tensor_input
from ..arg_errors import type_name as _type_name
from ..autocast import entry as _autocast_entry
from ..dims import by_name
from ..layout import contiguous_format
from ..layout import row_major as _layout_row_major
from ..names import as_op_error, remove_dims, unify_inputs
from ..names import unify as _unify_names
from ..registry import op
from ..tensor import Tensor, _wrap
from .comparison import where
from .decompositions import _exact
from .indexing import _dtype_word, _index_select, _wrap_dim, _xp_of
from .linalg import _check_add_input, _outer_names
from .shape import _conj_if, _int_arg, _rename_to, cat, diag_embed

__all__ = [
    "addr",
    "cross",
    "cumulative_trapezoid",
    "diag",
    "diagflat",
    "diff",
    "gcd",
    "is_neg",
    "lcm",
    "renorm",
    "repeat_interleave",
    "resolve_neg",
    "rot90",
    "segment_reduce",
    "trace",
    "trapezoid",
    "trapz",
    "vander",
    "view_as_complex",
    "view_as_real",
]


def _addr_names(ins, *args, **kwargs):
    """outer's names (vec1's dim, then vec2's; a repeated name is outer's error) unified with
    the added input's, as addmm composes mm's rule with add's (spec section 3)."""
    t = ins[0]
    out = _outer_names(ins[1:])
    if t._names is None:
        return out
    return _unify_names(t._names, (None, None) if out is None else out)


# ---------------------------------------------------------------------- cross
def _cross_dim(shape, dim, warn=False):
    if dim is None:
        if warn:
            import warnings

            warnings.warn(
                "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
                "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
                "dim will change to agree with that of linalg.cross in a future release.",
                UserWarning,
                stacklevel=4,
            )
        for k, s in enumerate(shape):
            if s == 3:
                return k
        raise RuntimeError("no dimension of size 3 in input")
    return _wrap_dim(dim, len(shape))


@op(names=unify_inputs)
def cross(xp, input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (the first dim of size 3 when None)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = np.broadcast_shapes(input.shape, other.shape)
    d = _cross_dim(shape, dim, warn=True)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {d if dim is None else dim} must have length 3. Got "
            f"{input.shape[d]} and {other.shape[d]}"
        )
    if input.dtype != other.dtype:  # torch's kernel checks it after the shapes
        raise RuntimeError(
            f"expected scalar type {_dtype_word(input)} but found {_dtype_word(other)}"
        )
    if input.dtype.kind == "b":
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    r = xp.cross(input, other, axis=d)
    # numpy's cross keeps a permuted (channels_last) input's order, torch's result is contiguous
    return _layout_row_major(xp, r) if r.ndim > 1 else r


@cross.vjp(only_for={"input": "other", "other": "input"})
def _(grad, input, other, dim, needs):
    d = _cross_dim(tuple(grad.shape), dim)
    gi = cross(_conj_if(other), grad, d) if needs[0] else None
    go = cross(grad, _conj_if(input), d) if needs[1] else None
    return gi, go


cross.op.backward_name = "LinalgCrossBackward0"  # torch.cross runs linalg_cross
cross.op.out_dtype = _exact  # linalg_cross is structured: its out= has the result's dtype


# ---------------------------------------------------------------------- gcd / lcm
def _int_check(input, other, who):
    if input.dtype.kind not in "iu":
        raise NotImplementedError(f"\"{who}_cpu\" not implemented for '{_dtype_word(input)}'")


@op(names=unify_inputs, promote=True, inplace="gcd_", tensors_only=True)
def gcd(xp, input, other):
    """The element-wise greatest common divisor (non-negative) of integer tensors."""
    _int_check(input, other, "gcd")
    r = xp.gcd(input, other)
    if input.dtype.kind == "i":
        # where an operand is the type's minimum, |x| wraps to itself in torch's Euclid (C
        # remainders), whose answer may then be negative (gcd(-128, 127) is -1 in int8); numpy's
        # is the mathematical one. Two comparisons on every call; the rest only then
        low = np.iinfo(input.dtype).min
        odd = (input == low) | (other == low)
        if odd.any():
            a, b = xp.broadcast_arrays(input, other)
            r = xp.array(r)
            r[odd] = _c_gcd(xp, a[odd], b[odd])
    return r


def _c_gcd(xp, a, b):
    """Euclid's algorithm on |a|, |b| with wrapping abs and C's truncated remainder, elementwise."""
    a, b = xp.abs(a), xp.abs(b)  # (numpy's abs of the minimum wraps to the minimum, as C's)
    while True:
        go = a != 0
        if not go.any():
            return b
        # b % a with C's sign (fmod's); x % -1 is 0 (written out: the minimum % -1 traps)
        rem = xp.where(a == -1, 0, xp.fmod(b, xp.where(go & (a != -1), a, 1)))
        a, b = xp.where(go, rem, 0).astype(a.dtype), xp.where(go, a, b)


@op(names=unify_inputs, promote=True, inplace="lcm_", tensors_only=True)
def lcm(xp, input, other):
    """The element-wise least common multiple (non-negative) of integer tensors."""
    _int_check(input, other, "lcm")
    return xp.lcm(input, other)


# ---------------------------------------------------------------------- complex views
def _real_names(ins, *args, **kwargs):
    n = ins[0]._names
    return None if n is None else tuple(n) + (None,)


def _complex_names(ins, *args, **kwargs):
    n = ins[0]._names
    return None if n is None else remove_dims(n, (len(n) - 1,))


@op(names=_real_names, view=True, method=False)
def view_as_real(xp, input):
    """A real view of a complex tensor, with a last dim of size 2 (real, imaginary)."""
    if input.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    f = np.float32 if input.dtype == np.complex64 else np.float64
    return input[..., None].view(f)


@view_as_real.vjp
def _(grad):
    return view_as_complex(grad.contiguous())


@op(names=_complex_names, view=True, method=False)
def view_as_complex(xp, input):
    """A complex view of a real tensor whose last dim has size 2 (real, imaginary)."""
    dt = input.dtype
    if dt not in (np.float32, np.float64):
        word = "Half" if dt == np.float16 else _dtype_word(input)
        if dt == np.float16:
            raise RuntimeError(
                "ember: complex32 (a view_as_complex of a half tensor) is not supported"
            )
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {word}"
        )
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    size = dt.itemsize
    if input.strides[-1] != size:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * size) for s, n in zip(input.strides[:-1], input.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    # an odd storage offset (allocations are aligned to more than a complex value, so a
    # misaligned start is one): torch's complex elements start at even offsets; no pointer to
    # read on the meta device
    ptr = input.__array_interface__["data"][0] if xp is np else getattr(input.data, "ptr", 0)
    if ptr % (2 * size):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    c = np.complex64 if dt == np.float32 else np.complex128
    return input.view(c)[..., 0]


@view_as_complex.vjp
def _(grad):
    return view_as_real(grad)


def resolve_neg(input: Tensor) -> Tensor:
    """``input`` itself: ember never stores a lazy negation bit."""
    return input


def is_neg(input: Tensor) -> bool:
    """False: ember never stores a lazy negation bit."""
    return False


# ---------------------------------------------------------------------- diag & co
@_tensor_input("diag")
def diag(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """1-D input: a square matrix with ``input`` on its ``diagonal``; 2-D input: that diagonal."""
    if type(diagonal) is not int:
        diagonal = _int_arg("diag", "diagonal", 2, diagonal)
    n = input._data.ndim
    if n == 1:
        r = diag_embed(input, diagonal, 0, 1)
    elif n == 2:  # torch's diagonal_copy: a node named as below
        r = as_torch_node(input.diagonal(diagonal).clone(), "DiagonalBackward0_copy")
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")
    # torch's diag writes through diagonal_copy/diag_embed's structured out=: no cast
    return r if out is None else _copy_out(out, r, "diag", _exact)


@_tensor_input("diagflat")
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on its ``offset`` diagonal."""
    if type(offset) is not int:
        offset = _int_arg("diagflat", "offset", 2, offset)
    return diag_embed(input.reshape(-1), offset, 0, 1)


@_autocast_entry
@_tensor_input("trace")
def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers sum to int64)."""
    n = input._data.ndim
    if n != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {n}")
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return as_torch_node(input.diagonal().sum(), "TraceBackward0")


def _copy_out(out: Tensor, r: Tensor, who: str, check=None) -> Tensor:
    from ..registry import _write_out

    class _Who:  # what _write_out reads of an op: its name, its out= dtype rule (none: cast)
        name = who
        out_dtype = check

    return _write_out(_Who, out, r)


# ---------------------------------------------------------------------- diff / rot90
@_tensor_input("diff")
def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None, *, out=None
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first)."""
    nd = input._data.ndim
    if type(n) is not int and (isinstance(n, (float, bool)) or not hasattr(n, "__index__")):
        # torch's parser error as for n given by keyword (its usual spelling; positionally
        # torch adds "(position 2)")
        raise TypeError(f"diff(): argument 'n' must be int, not {_type_name(n)}")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if nd == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    dim = by_name(input, dim)
    if type(dim) is not int and isinstance(dim, float):  # it would compare as a number
        raise TypeError("diff(): argument 'dim' (position 3) must be int, not float")
    d = _wrap_dim(dim, nd)
    parts = []
    for extra in (prepend, append):
        if extra is None:
            continue
        if extra._data.ndim != nd:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for k in range(nd):
            if k != d and extra._data.shape[k] != input._data.shape[k]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({k}) = "
                    f"{input._data.shape[k]}, but got tensor.size({k}) = {extra._data.shape[k]}"
                )
    if n and (prepend is not None or append is not None):  # n = 0 leaves them out, as torch
        parts = [t for t in (prepend, input, append) if t is not None]
        try:
            x = cat(parts, d)
        except RuntimeError as e:  # a name clash of prepend/append is diff's (spec 4.10)
            raise as_op_error(e, "diff", ("cat",), *parts) from None
    else:
        x = input
    is_bool = x._data.dtype.kind == "b"
    for _ in range(n):
        size = x._data.shape[d]
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = hi.logical_xor(lo) if is_bool else hi - lo
    if x is input:  # n = 0: a new tensor (torch clones), never the input itself
        x = input.clone()
    # torch's out= variant runs the last subtraction into out (its errors name sub())
    return x if out is None else _copy_out(out, x, "sub")


@_tensor_input("rot90")
def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from dims[0] towards dims[1])."""
    if type(k) is not int:
        k = _int_arg("rot90", "k", 2, k)
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    nd = input._data.ndim
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    if isinstance(dims[0], str) or isinstance(dims[1], str):
        dims = [input._dim(x) if isinstance(x, str) else x for x in dims]
    if dims[0] == dims[1]:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    d0, d1 = _wrap_dim(dims[0], nd), _wrap_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    k %= 4
    # torch flips, then transposes the copy in place: the result is no view
    if k == 1:
        out = input.flip(d1).transpose_(d0, d1)
    elif k == 2:
        out = input.flip((d0, d1))
    elif k == 3:
        out = input.flip(d0).transpose_(d0, d1)
    else:  # torch: a contiguous copy (not one laid out like the input)
        out = input.clone(memory_format=contiguous_format)
    return as_torch_node(out, "Rot90Backward0")  # one op in torch


# ---------------------------------------------------------------------- renorm
def renorm(input: Tensor, p, dim: int, maxnorm, *, out=None) -> Tensor:
    """Each slice along ``dim`` rescaled so that its ``p``-norm is at most ``maxnorm``."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        # printed as C++ prints a double (-1.0 -> -1)
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    nd = input._data.ndim
    if nd <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_dtype_word(input._data)}"
        )
    dim = by_name(input, dim)
    d = _wrap_dim(dim, nd)
    dims = tuple(i for i in range(nd) if i != d)
    norm = input.norm(p, dims, keepdim=True)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    # the product keeps a permuted input's layout; torch's result is contiguous
    r = (input * factor).contiguous()
    if out is None:
        return r
    if out.dtype != r.dtype:  # renorm's out= is not cast into
        raise RuntimeError(
            f"Expected out tensor to have dtype {_dt.C_NAMES[r.dtype.name]}, but "
            f"got {_dt.C_NAMES[out.dtype.name]} instead"
        )
    return _copy_out(out, r, "renorm")


def _renorm_(self: Tensor, p, dim, maxnorm) -> Tensor:
    from .joining import _inplace_composite

    return _inplace_composite(self, lambda s: renorm(s, p, dim, maxnorm))


# ---------------------------------------------------------------------- repeat_interleave
def _repeats_array(repeats, size, who="repeat_interleave", dim=0):
    a = repeats._data
    if a.dtype.kind not in "iu":
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{_dtype_word(a)}'"
        )
    if a.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.is_meta:
        raise RuntimeError(f"cannot {who} a meta tensor without output_size")
    a = np.asarray(a.get() if hasattr(a, "get") else a).reshape(-1)
    if a.size == 1:
        a = np.broadcast_to(a, (size,))
    elif a.size != size:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got repeats.size(0) = "
            f"{a.size} and input.size({dim}) = {size}"
        )
    if a.size and int(a.min()) < 0:
        raise RuntimeError("repeats can not be negative")
    return a


def _repeat_args(args, kwargs) -> bool:
    given = (*args, *kwargs.values())[:2]
    dim = args[2] if len(args) > 2 else kwargs.get("dim")
    return (
        all(isinstance(v, Tensor) or type(v) is int for v in given)
        and (isinstance(given[0], Tensor) if given else True)
        and (dim is None or type(dim) in (int, str))
    )


@_overloaded(
    "repeat_interleave",
    (
        "(Tensor input, Tensor repeats, int dim = None, *, int output_size = None)",
        "(Tensor repeats, *, int output_size = None)",
        "(Tensor input, int repeats, int dim = None, *, int output_size = None)",
    ),
    _repeat_args,
)
def repeat_interleave(input: Tensor, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Repeat each element (or slice along ``dim``) ``repeats`` times in place, like
    ``numpy.repeat``; with a single int64 tensor, repeat its positions by its values."""
    xp = _xp_of(input._data)
    if repeats is None:  # repeat_interleave(repeats): the positions repeated
        if input._data.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        reps = _repeats_array(input, input._data.shape[0])
        idx = np.repeat(np.arange(reps.size, dtype=np.int64), reps)
        if output_size is not None and output_size != idx.size:
            raise RuntimeError("allocated size does not match required size")
        return _wrap(xp.asarray(idx))
    if dim is None:
        input = input.reshape(-1)
        d = 0
    else:
        if isinstance(dim, str):
            dim = input._dim(dim)
        elif isinstance(dim, float):
            raise TypeError(dim)  # no overload takes it: torch lists them
        d = _wrap_dim(dim, input._data.ndim)
    if input._data.ndim == 0:
        input = input.reshape(1)
    size = input._data.shape[d]
    if not isinstance(repeats, Tensor):
        reps = repeats.__index__()  # (no float: torch's overloads are listed)
        if reps < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and output_size != size * reps:
            raise RuntimeError(
                f"repeat_interleave: Invalid output_size, expected {size * reps} but got "
                f"{output_size}"
            )
        # torch's way for a number: the result is a view of a row-major copy of an expansion
        # (its ``_base``), whatever the input's layout
        shape = list(input._data.shape)
        shape.insert(d + 1, reps)
        r = input.unsqueeze(d + 1).expand(shape).clone(memory_format=contiguous_format)
        r = r.flatten(d, d + 1)
        names = input._names
        return r if names is None else _rename_to(r, names)  # the repeated dim keeps its name
    reps = _repeats_array(repeats, size, dim=d)
    idx = np.repeat(np.arange(size, dtype=np.int64), reps)
    if output_size is not None and output_size != idx.size:
        raise RuntimeError("allocated size does not match required size")
    return _index_select(input, _wrap(xp.asarray(idx)), d)


# ---------------------------------------------------------------------- segment_reduce
_SEGMENT_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax", "amax": "amax"}
_SEGMENT_REDUCE.update(min="amin", amin="amin")
# what an empty segment reduces to without ``initial``
_SEGMENT_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": float("nan"), "amax": -np.inf, "amin": np.inf}


def segment_reduce(
    data: Tensor,
    reduce: str,
    *,
    lengths=None,
    indices=None,
    offsets=None,
    axis: int = 0,
    unsafe: bool = False,
    initial=None,
) -> Tensor:
    """Reduce the consecutive segments of ``data`` along ``axis`` whose sizes are the last dim of
    ``lengths`` (or the differences of ``offsets``); the leading dims of ``lengths`` are batch
    dims of ``data``. ``initial`` joins every segment (a mean still divides by the length).
    One scatter_reduce into a slot per segment, so its derivatives (ties share) apply."""
    red = _SEGMENT_REDUCE.get(reduce)
    if red is None:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None:
        if offsets is None:
            raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
        lengths = diff(offsets, dim=-1)
    if lengths._data.dtype.kind not in "iu":
        raise NotImplementedError(
            '"_segment_reduce_lengths_cpu_kernel1" not implemented for '
            f"'{_dtype_word(lengths._data)}'"
        )
    if data._data.dtype.kind not in "fV":  # V: bfloat16, which torch reduces too (no complex)
        raise NotImplementedError(
            f"\"_segment_reduce_cpu\" not implemented for '{_dtype_word(data._data)}'"
        )
    nb = lengths._data.ndim - 1
    axis = _wrap_dim(axis, data._data.ndim)
    if axis != nb:
        raise RuntimeError(
            f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}."
        )
    lens = lengths._data
    if bool((lens < 0).any()):
        raise RuntimeError("lengths contains negative value!")
    shape = data._data.shape
    if not unsafe and bool((lens.sum(-1) != shape[axis]).any()):
        raise RuntimeError(
            "segment_reduce(): Expected all rows of lengths along axis to sum to "
            "data.size(lengths.dim()-1) when !unsafe."
        )
    batch, rest, nseg = shape[:axis], shape[axis + 1 :], lens.shape[-1]
    slots = int(np.prod(batch, dtype=np.int64)) * nseg
    flat_lengths = lengths.reshape(-1)
    ids = repeat_interleave(flat_lengths)  # element -> its segment's slot, in data's order
    idx = ids.reshape(-1, *(1,) * len(rest)).expand(-1, *rest)
    x = data.reshape(-1, *rest)
    fill = _SEGMENT_EMPTY[red] if initial is None else initial
    out = data.new_full((slots, *rest), fill)
    if red == "mean" and initial is not None:
        count = flat_lengths.clamp(min=1).reshape(-1, *(1,) * len(rest))
        out = out.scatter_reduce(0, idx, x, "sum") / count
    else:
        out = out.scatter_reduce(0, idx, x, red, include_self=initial is not None)
    out = out.reshape(*batch, nseg, *rest)
    names = data._names
    if names is not None:  # the segments are a new dim; the others keep their names
        out = out.refine_names(*names[:axis], None, *names[axis + 1 :])
    return out


# ---------------------------------------------------------------------- vander
@_tensor_input("vander", "x")
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-D tensor: columns x**(N-1), ..., x**0 (or increasing)."""
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0]
    if N is None:
        N = n
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "biu":
        x = x.to(_dt.int64)
    ones = _wrap(_xp_of(x._data).ones((n, min(N, 1)), x._data.dtype))
    if N <= 1:
        r = ones
    else:
        powers = x.unsqueeze(1).expand(n, N - 1).cumprod(1)
        r = cat([ones, powers], 1)
    return r if increasing else r.flip(1)


# ---------------------------------------------------------------------- trapezoid
def _trapz_parts(y: Tensor, x, dim, who):
    cumulative = who != "trapezoid"
    nd = y._data.ndim
    if isinstance(x, Tensor):  # with sample points torch wraps dim first (a 0-d y's as 1-d's)
        dim = _wrap_dim(by_name(y, dim), nd)
    if cumulative:  # its bool check comes next; trapezoid's only for a non-empty y (below)
        _trapz_no_bool(y, x, who)
    if nd == 0:
        if not cumulative or (isinstance(x, Tensor) and x._data.ndim == 1):
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(by_name(y, dim), nd)
    size = y._data.shape[d]
    if not cumulative:
        if not size:  # torch's zeros come before any look at the sample points
            return y, x, d, size
        _trapz_no_bool(y, x, who)
    if isinstance(x, Tensor):
        if x._data.ndim == 1:
            if x._data.shape[0] != size:
                raise RuntimeError(f"{who}: There must be one `x` value for each sample point")
            shape = [1] * nd
            shape[d] = size
            x = x.reshape(shape)
        elif x._data.shape[d if x._data.ndim == nd else -1] != size:
            raise RuntimeError(f"{who}: There must be one `x` value for each sample point")
    # integers stay integers until the halving, so their pair sums wrap in y's type as torch's
    return y, x, d, size


def _trapz_no_bool(y: Tensor, x, who) -> None:
    if y._data.dtype.kind == "b" or (isinstance(x, Tensor) and x._data.dtype.kind == "b"):
        which = "`x` or `y`" if isinstance(x, Tensor) else "`y`"
        raise RuntimeError(f"{who}: received a bool input for {which}, but bool is not supported")


def _pair_sums(y: Tensor, d: int, size: int) -> Tensor:
    return y.narrow(d, 1, size - 1) + y.narrow(d, 0, size - 1)


@_tensor_input("trapezoid", "y")
def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``, with sample points ``x`` or a constant spacing ``dx``."""
    y, x, d, size = _trapz_parts(y, x, dim, "trapezoid")
    if size == 0:  # torch returns fresh zeros of y's dtype, outside the graph
        return y.detach().sum(d, dtype=y.dtype)
    # torch's node names: a scalar division by 2 after the sum with sample points, a scalar
    # product by dx (1 by default) otherwise
    try:
        if isinstance(x, Tensor):
            xd = x.narrow(d, 1, size - 1) - x.narrow(d, 0, size - 1)
            return as_torch_node((_pair_sums(y, d, size) * xd).sum(d) / 2, "DivBackward1")
        # torch's constant-spacing form: the sum less half the two ends (an infinite end
        # gives NaN, as torch's does)
        s = y.sum(d) - (y.select(d, 0) + y.select(d, size - 1)) * 0.5
        if dx is not None and (isinstance(dx, Tensor) or dx != 1):
            s = s * dx
    except RuntimeError as e:  # a name clash of y and x (or dx) is trapezoid's (spec 4.10)
        raise as_op_error(e, "trapezoid", ("mul",), y, x, dx) from None
    return as_torch_node(s, "MulBackward1")


@_tensor_input("trapz", "y")
def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """Alias of ``trapezoid``."""
    return trapezoid(y, x, dx=dx, dim=dim)


@_tensor_input("cumulative_trapezoid", "y")
def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one element shorter than ``y``)."""
    y, x, d, size = _trapz_parts(y, x, dim, "cumulative_trapezoid")
    if size == 0 and not isinstance(x, Tensor):
        return y / 2  # empty, in the halved pair sums' dtype
    pairs = _pair_sums(y, d, size) if size else y
    try:
        if isinstance(x, Tensor):
            pairs = pairs * (x.narrow(d, 1, size - 1) - x.narrow(d, 0, size - 1) if size else x)
            return as_torch_node(pairs.cumsum(d) / 2, "DivBackward1")  # torch halves last here
        avg = pairs / 2
        if dx is not None and (isinstance(dx, Tensor) or dx != 1):
            avg = avg * dx
    except RuntimeError as e:  # a name clash of y and x (or dx) is the function's (spec 4.10)
        raise as_op_error(e, "cumulative_trapezoid", ("mul",), y, x, dx) from None
    return avg.cumsum(d)


# ---------------------------------------------------------------------- addr
@op(names=_addr_names, promote=True, inplace="addr_")
def addr(xp, input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (``input`` broadcast to the outer shape)."""
    for nm, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {nm}, but got {v.ndim}-D")
    shape = (vec1.shape[0], vec2.shape[0])
    if input.shape != shape:
        _check_add_input(input, shape)  # torch expands input before it reads beta and alpha
        input = xp.broadcast_to(input, shape)
    kind = input.dtype.kind
    for nm, s in (("beta", beta), ("alpha", alpha)):
        if kind != "b" and isinstance(s, bool):
            raise RuntimeError(f"Boolean {nm} only supported for Boolean results.")
        if kind in "biu" and isinstance(s, (float, complex)):
            raise RuntimeError(
                f"For integral input tensors, argument {nm} must not be a floating point number."
            )
    if kind in "fV":  # a complex beta/alpha does not promote
        _dt.check_real_scalar(input.dtype, beta, alpha, half_as_float=False)
    if kind == "b":
        o = xp.logical_and.outer(vec1, vec2) if xp is np else vec1[:, None] & vec2[None, :]
        return (input & bool(beta)) | (o & bool(alpha))
    o = xp.multiply.outer(vec1, vec2) if xp is np else vec1[:, None] * vec2[None, :]
    if alpha != 1:
        o = o * alpha
    if beta == 0:
        return xp.ascontiguousarray(o.astype(input.dtype, copy=False))
    r = (input * beta if beta != 1 else input) + o
    if kind == "V":  # numpy's bfloat16 times a Python float is float32; torch's stays bfloat16
        r = r.astype(input.dtype)
    return r


@addr.vjp(only_for={"vec1": "vec2", "vec2": "vec1"})
def _(grad, vec1, vec2, beta, alpha, needs):
    # complex beta/alpha enter conjugated (torch's Wirtinger convention)
    beta, alpha = (v.conjugate() if isinstance(v, complex) else v for v in (beta, alpha))
    gi = g1 = g2 = None
    if needs[0]:
        gi = grad if beta == 1 else grad * beta
    if needs[1]:
        g1 = grad.mv(_conj_if(vec2))
        if alpha != 1:
            g1 = g1 * alpha
    if needs[2]:
        g2 = grad.t().mv(_conj_if(vec1))
        if alpha != 1:
            g2 = g2 * alpha
    return gi, g1, g2


def _install():
    Tensor.diag = diag
    Tensor.diagflat = diagflat
    Tensor.diff = diff
    Tensor.rot90 = rot90
    Tensor.renorm = renorm
    Tensor.renorm_ = _renorm_
    Tensor.repeat_interleave = repeat_interleave
    Tensor.trace = trace
    Tensor.resolve_neg = resolve_neg
    Tensor.is_neg = is_neg


_install()
