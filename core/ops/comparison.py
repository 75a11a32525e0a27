"""Comparisons, min/max/clamp, where, floating-point classification, logical and bitwise ops."""

from __future__ import annotations

import numpy as np

from .. import dtype as _dt
from ..arg_errors import called_as, invalid_arguments, type_name
from ..device import array_module
from ..kernels.select import select
from ..meta import no_meta_kernel
from ..names import as_op_error, keep, unify_inputs
from ..registry import (
    NonStridedError,
    _bad_input,
    _operator_dunder,
    _wrap_np,
    label_of,
    non_strided_call,
    op,
    reflected,
    scalar_name,
)
from ..registry import alias as _alias
from ..runtime import _warn_once
from ..tensor import Tensor, _wrap
from ..vmap_state import SLICES as _VMAP_SLICES
from .arithmetic import _kind, _not_impl, _real_only, _tname, promote_raw

__all__ = [
    "allclose",
    "clamp",
    "clamp_",
    "clip",
    "clip_",
    "equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "where",
]

# numpy's numeric scalars count as numbers (np.float32(2) < t, t > arr.max()), as in torch
_SCALARS = (bool, int, float, complex, np.number, np.bool_)
_FROM_NP = _dt._FROM_NP


# ---------------------------------------------------------------------- comparisons
def _int_other(a, v):
    """A Python scalar is first cast to the tensor's dtype, as torch does: an int wraps into an
    integer dtype (uint8 == 300 compares with 44), a number rounds to float16/bfloat16 (past
    their range: inf, so float16 == 1e6 holds for an inf element)."""
    t = type(v)
    if t is int or t is float or t is complex:
        d = getattr(a, "dtype", None)
        if d is None:
            return v
        if d.kind in "iu":
            return _dt.wrap_int(v, d) if t is int else v
        if d is _F16 or d is _BF16:
            with np.errstate(over="ignore"):
                if t is complex:  # (torch's complex32: each part rounded)
                    return complex(_round16(v.real, d), _round16(v.imag, d))
                return _round16(v, d)
    return v


def _round16(v, d):
    return float(np.asarray(float(v)).astype(d))


_F16 = np.dtype(np.float16)
_BF16 = _dt.bfloat16.np


def _no_complex(name, a, b):
    _real_only(f"{name}_cpu", a, b)  # also a complex Python scalar against a real tensor


@op(names=unify_inputs, promote=True, inplace="eq_", tensors_only=1)
def eq(xp, input, other):
    """input == other, elementwise (a bool tensor)."""
    return xp.equal(input, _int_other(input, other))


@op(names=unify_inputs, promote=True, inplace="ne_", tensors_only=1)
def ne(xp, input, other):
    """input != other, elementwise."""
    return xp.not_equal(input, _int_other(input, other))


@op(names=unify_inputs, promote=True, inplace="lt_", tensors_only=1)
def lt(xp, input, other):
    """input < other, elementwise."""
    _no_complex("lt", input, other)
    return xp.less(input, _int_other(input, other))


@op(names=unify_inputs, promote=True, inplace="le_", tensors_only=1)
def le(xp, input, other):
    """input <= other, elementwise."""
    _no_complex("le", input, other)
    return xp.less_equal(input, _int_other(input, other))


@op(names=unify_inputs, promote=True, inplace="gt_", tensors_only=1)
def gt(xp, input, other):
    """input > other, elementwise."""
    _no_complex("gt", input, other)
    return xp.greater(input, _int_other(input, other))


@op(names=unify_inputs, promote=True, inplace="ge_", tensors_only=1)
def ge(xp, input, other):
    """input >= other, elementwise."""
    _no_complex("ge", input, other)
    return xp.greater_equal(input, _int_other(input, other))


greater = _alias(gt, "greater")
greater_equal = _alias(ge, "greater_equal")
less = _alias(lt, "less")
less_equal = _alias(le, "less_equal")
not_equal = _alias(ne, "not_equal")


def _cmp_dunder(public):
    # a non-tensor, non-number operand is not ours: Python then falls back (== gives False,
    # < raises its own TypeError), like torch. Of torch's comparison operators only == takes a
    # numeric ndarray (as a cpu tensor); the others leave it to numpy, which defers back
    takes_array = public.__name__ == "eq"
    uf = _CMP_UFUNCS[public.__name__]

    def d(self, other):
        # the common operands need none of the registry's work (no promotion, no names, no
        # graph: comparisons have no gradient): the kernel's own ufunc on the arrays
        if type(self) is Tensor and self._names is None and not _VMAP_SLICES:
            a = self._data
            if type(a) is _ndarray:
                to = type(other)
                if to is Tensor:
                    b = other._data
                    if (
                        other._names is None
                        and type(b) is _ndarray
                        and b.dtype is a.dtype
                        and a.dtype.kind in "biuf"
                    ):
                        try:
                            return _wrap(uf(a, b))
                        except ValueError:
                            pass  # (shapes that do not broadcast: the registry's error)
                elif (
                    (to is float or (to is int and -_I64 <= other < _I64))
                    and a.dtype.kind == "f"
                    and a.dtype.itemsize > 2
                ):
                    return _wrap(uf(a, other))  # (a wider int: the registry's check first)
        if isinstance(other, (Tensor, _SCALARS)):
            return public(self, other)
        if takes_array and isinstance(other, np.ndarray) and other.dtype.kind in "biufc":
            return public(self, _wrap_np(other))
        return NotImplemented

    return d


_CMP_UFUNCS = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}
_ndarray = np.ndarray
_I64 = 1 << 63


# ---------------------------------------------------------------------- maximum / minimum
def _minmax_check(name, a, b):
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")


@op(names=unify_inputs, promote=True, tensors_only=True)
def maximum(xp, input, other):
    """Elementwise maximum; NaN propagates."""
    _minmax_check("maximum", input, other)
    return xp.maximum(input, other)


@maximum.vjp
def _(grad, input, other, needs):
    half = grad / 2  # ties split the gradient evenly, like torch
    tie = input == other
    gi = where(input < other, 0.0, where(tie, half, grad)) if needs[0] else None
    go = where(input > other, 0.0, where(tie, half, grad)) if needs[1] else None
    return gi, go


@op(names=unify_inputs, promote=True, tensors_only=True)
def minimum(xp, input, other):
    """Elementwise minimum; NaN propagates."""
    _minmax_check("minimum", input, other)
    return xp.minimum(input, other)


@minimum.vjp
def _(grad, input, other, needs):
    half = grad / 2
    tie = input == other
    gi = where(input > other, 0.0, where(tie, half, grad)) if needs[0] else None
    go = where(input < other, 0.0, where(tie, half, grad)) if needs[1] else None
    return gi, go


@op(names=unify_inputs, promote=True, tensors_only=True)
def fmax(xp, input, other):
    """Elementwise maximum that ignores NaN (NaN only where both are NaN)."""
    _minmax_check("fmax", input, other)
    return xp.fmax(input, other)


@fmax.vjp
def _(grad, input, other, needs):
    pick = (input >= other) | other.isnan()
    return (where(pick, grad, 0.0) if needs[0] else None), (
        where(pick, 0.0, grad) if needs[1] else None
    )


@op(names=unify_inputs, promote=True, tensors_only=True)
def fmin(xp, input, other):
    """Elementwise minimum that ignores NaN."""
    _minmax_check("fmin", input, other)
    return xp.fmin(input, other)


@fmin.vjp
def _(grad, input, other, needs):
    pick = (input <= other) | other.isnan()
    return (where(pick, grad, 0.0) if needs[0] else None), (
        where(pick, 0.0, grad) if needs[1] else None
    )


# ---------------------------------------------------------------------- clamp
def _int_bound(a, v):
    """A Python int bound for an integer array: torch's range rule (out of range raises, a
    negative one wraps into an unsigned type), not the wrap arithmetic gives (uint8 + 300)."""
    return _dt.fill_scalar(v, a.dtype) if type(v) is int and a.dtype.kind in "iu" else v


_clip_ufunc = np._core.umath.clip if hasattr(np, "_core") else np.core.umath.clip  # numpy 1.x

_CLAMP_COMPLEX = "clamp is not supported for complex types"
_NUMBERS = (float, int)


def _clamp_check(kernel, tensor_kernel, a, *bounds):
    """clamp's checks, then the operands promoted. Number bounds: a complex result is refused
    as clamp's; tensor bounds: a complex result finds no ``tensor_kernel`` (after the shapes
    are checked; clamp itself refuses a complex input first, see _clamp_dispatch)."""
    d = a.dtype
    if d.kind == "f":  # the common case: float bounds of a float input need no promotion
        for b in bounds:
            if type(b) not in _NUMBERS:
                if getattr(b, "dtype", None) is not d:
                    break
            elif not -65504.0 <= b <= 65504.0 and d.itemsize < 8:
                break  # past float16's range: the checks below (a float64 never overflows)
        else:
            return a, *bounds
    arrays, d = promote_raw([a, *bounds])
    if d.category == _dt.COMPLEX:
        if not any(hasattr(b, "dtype") for b in bounds):
            raise NotImplementedError(_CLAMP_COMPLEX)
        raise NotImplementedError(f"\"{tensor_kernel}\" not implemented for '{d.scalar_type}'")
    a = arrays[0]
    if a.dtype.kind in "fV":
        for b in bounds:
            if type(b) in _NUMBERS:  # a float type takes no finite bound past its range
                _dt.fill_scalar(b, a.dtype)
    if a.dtype.kind == "b" and _kind(*arrays) == "b":
        if any(hasattr(b, "dtype") for b in bounds):
            if len(bounds) == 1:
                return arrays  # max/min of bools is well defined (torch allows it)
            kernel = "clamp_cpu"
        raise _not_impl(kernel, a)
    return arrays


@op(names=unify_inputs, inplace="clamp_min_")
def clamp_min(xp, input, min):
    """max(input, min) elementwise; min is a number or a tensor."""
    input, min = _clamp_check("clamp_min_scalar_cpu", "maximum_cpu", input, min)
    return xp.maximum(input, _int_bound(input, min))


@clamp_min.vjp
def _(grad, input, min, needs):
    # two tests, not one and its negation: where a NaN meets a bound, neither side gets it
    return (where(input >= min, grad, 0.0) if needs[0] else None), (
        where(input < min, grad, 0.0) if needs[1] else None
    )


@op(names=unify_inputs, inplace="clamp_max_")
def clamp_max(xp, input, max):
    """min(input, max) elementwise; max is a number or a tensor."""
    input, max = _clamp_check("clamp_max_scalar_cpu", "minimum_cpu", input, max)
    return xp.minimum(input, _int_bound(input, max))


@clamp_max.vjp
def _(grad, input, max, needs):
    # (see clamp_min: a NaN on either side sends the gradient to neither)
    return (where(input <= max, grad, 0.0) if needs[0] else None), (
        where(input > max, grad, 0.0) if needs[1] else None
    )


@op(name="_clamp", names=unify_inputs, method=False, inplace="_clamp_")
def _clamp(xp, input, min, max):
    input, min, max = _clamp_check("clamp_scalar_cpu", "clamp_cpu", input, min, max)
    min, max = _int_bound(input, min), _int_bound(input, max)
    if input.dtype.kind == "V":  # bfloat16: clip would compute in float32
        return xp.minimum(xp.maximum(input, min), max)
    if xp is np and min is not None and max is not None and input.dtype.kind == "f":
        return _clip_ufunc(input, min, max)  # what np.clip runs, without its Python steps
    return xp.clip(input, min, max)  # min > max gives max, like torch


@_clamp.vjp
def _(grad, input, min, max, needs):
    gi = gmin = gmax = None
    if needs[0]:
        gi = where((input >= min) & (input <= max), grad, 0.0)
    if needs[1]:
        gmin = where((input < min) & (min <= max), grad, 0.0)
    if needs[2]:
        lo = input.clamp_min(min) if isinstance(input, Tensor) else min
        gmax = where(lo > max, grad, 0.0)
    return gi, gmin, gmax


def _is_number(v) -> bool:
    return isinstance(v, (int, float))


# torch's grad_fn names: Clamp/ClampMin/ClampMax Backward0 for tensor bounds, 1 for numbers
# (but ClampMinBackward0 and ClampMaxBackward0 for numbers)
_clamp.op.name_rule = lambda node: (
    "ClampBackward1"
    if _is_number(node.saved_arg("min")) and _is_number(node.saved_arg("max"))
    else "ClampBackward0"
)
clamp_min.op.scalar_cast_c_name = clamp_max.op.scalar_cast_c_name = True
clamp_min.op.name_rule = lambda node: (
    "ClampMinBackward0" if _is_number(node.saved_arg("min")) else "ClampMinBackward1"
)
clamp_max.op.name_rule = lambda node: (
    "ClampMaxBackward0" if _is_number(node.saved_arg("max")) else "ClampMaxBackward1"
)


# clamp(input, min=...) / clamp(input, max=...): clamp_min's / clamp_max's kernel and derivative,
# registered again under torch's Clamp node names
_clamp_lo = op(name="_clamp_lo", names=unify_inputs, method=False)(clamp_min.op.kernel)
_clamp_hi = op(name="_clamp_hi", names=unify_inputs, method=False)(clamp_max.op.kernel)
_clamp_lo.vjp(clamp_min.op.vjp)
_clamp_hi.vjp(clamp_max.op.vjp)
# a bound neither Tensor nor number: torch's "invalid combination" error under clamp's name
_CLAMP_SIGS = (
    "(Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)",
    "(Tensor input, Number min = None, Number max = None, *, Tensor out = None)",
)
for _o in (_clamp.op, _clamp_lo.op, _clamp_hi.op):
    _o.label, _o.overloads = "clamp", _CLAMP_SIGS
    _alias(_o.public, "clip")
clamp_min.op.overloads = (
    "(Tensor input, Tensor min, *, Tensor out = None)",
    "(Tensor input, Number min, *, Tensor out = None)",
)
clamp_max.op.overloads = tuple(s.replace("min", "max") for s in clamp_min.op.overloads)
_clamp_lo.op.name_rule = lambda node: (
    "ClampBackward1" if _is_number(node.saved_arg("min")) else "ClampBackward0"
)
_clamp_hi.op.name_rule = lambda node: (
    "ClampBackward1" if _is_number(node.saved_arg("max")) else "ClampBackward0"
)


def _clamp_scalar_cast(input, min, max) -> None:
    """An integer (bool) tensor clamped in place by float or complex (or int) numbers: torch's
    error."""
    wider = (int, float, complex) if input._data.dtype.kind == "b" else (float, complex)
    bounds = [b for b in (min, max) if type(b) in wider]
    if bounds:
        frm = _dt.result_type(input, *bounds)
        to = _dt.C_NAMES[input._data.dtype.name]  # torch names the target by its C++ type
        raise RuntimeError(
            f"result type {scalar_name(frm)} can't be cast to the desired output type {to}"
        )


def _clamp_dispatch(input, min, max, out, inplace):
    if min is None and max is None:
        if not inplace and not isinstance(input, Tensor):
            # torch's parser refuses the input before the kernel asks for a bound
            raise invalid_arguments(label_of(_clamp.op), (input,), {}, _CLAMP_SIGS)
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    kw = {} if out is None else {"out": out}
    if inplace and input._data.dtype.kind in "biu":
        _clamp_scalar_cast(input, min, max)
    if (
        min is not None
        and max is not None
        and (type(min) is Tensor) is not (type(max) is Tensor)
        and (min if type(min) is Tensor else max).dim()
    ):
        _clamp_mixed_bounds(input, min, max, inplace)
    try:
        if max is None:
            return input.clamp_min_(min) if inplace else _clamp_lo(input, min, **kw)
        if min is None:
            return input.clamp_max_(max) if inplace else _clamp_hi(input, max, **kw)
        return input._clamp_(min, max) if inplace else _clamp(input, min, max, **kw)
    except TypeError:
        if not inplace:
            raise
        # the method's own overloads (it ran clamp_min_ or clamp_max_, whose would show)
        raise _clamp_method_error(input, min, max) from None
    except RuntimeError as e:
        # clamp refuses a complex input before it looks at the bounds (clamp_min's and
        # clamp_max's kernels, which it runs, check the bounds' shapes and types first)
        if isinstance(input, Tensor) and input._data.dtype.kind == "c":
            raise NotImplementedError(_CLAMP_COMPLEX) from None
        if str(e) == _CLAMP_COMPLEX and input._data.dtype.kind in "fV":
            # clamp (not clamp_min/max) converts a number bound to a floating input's type
            # through double: a complex one fits without an imaginary part
            if any(type(b) is complex and b.imag for b in (min, max)):
                raise RuntimeError(
                    "value cannot be converted to type double without overflow"
                ) from None
            real = [b.real if type(b) is complex else b for b in (min, max)]
            return _clamp_dispatch(input, *real, out, inplace)
        raise


def _clamp_mixed_bounds(input, min, max, inplace) -> None:
    """A tensor bound with dims next to a number: clamp's overloads take two of a kind (a 0-d
    tensor passes as a number), so torch's parser refuses the call; else nothing."""
    other = max if type(min) is Tensor else min
    if isinstance(other, Tensor) or not isinstance(other, (int, float, complex, np.generic)):
        return  # (another type: the op's own error)
    from ..arg_errors import method_signatures, tensor_method

    method = (tensor_method("clamp") or tensor_method("clip")) if not inplace else None
    if inplace or method is not None:
        # the method's parser marks both bounds under both of its overloads
        if inplace:
            method = "clip_" if (called_as() or "").endswith("clip_") else "clamp_"
        names = f"{type_name(min)}, {type_name(max)}"
        note = (
            "      didn't match because some of the arguments have invalid types: "
            f"(!{type_name(min)}!, !{type_name(max)}!)\n"
        )
        raise TypeError(
            f"{method}() received an invalid combination of arguments - got ({names}), but "
            "expected one of:\n"
            + "".join(f" * {s}\n{note}" for s in method_signatures(_CLAMP_SIGS))
        )
    raise _bad_input(_clamp.op, 1, min, (input, min, max), {})


def _clamp_method_error(input, min, max) -> TypeError:
    """torch's parser error for ``input.clamp_(min, max)`` (``clip_``) with bounds no overload
    takes (as spelled by position; a lone max by keyword)."""
    from ..arg_errors import invalid_method_arguments

    name = "clip_" if (called_as() or "").endswith("clip_") else "clamp_"
    if min is None:
        args, kw = (input,), {"max": max}
    else:
        args, kw = ((input, min) if max is None else (input, min, max)), {}
    return invalid_method_arguments(name, args, kw, _CLAMP_SIGS)


def _clamp_out(out, res, ins=()):
    """torch's clamp with number bounds (an unstructured kernel) writes only its result dtype;
    with tensor bounds any out= the result casts to will do."""
    if not any(isinstance(b, Tensor) for b in ins[1:]):
        raise RuntimeError(
            f"Found dtype {scalar_name(out.dtype)} but expected {scalar_name(res.dtype)}"
        )


for _o in (_clamp.op, _clamp_lo.op, _clamp_hi.op, clamp_min.op, clamp_max.op):
    _o.out_dtype = _clamp_out


def clamp(input: Tensor, min=None, max=None, *, out=None) -> Tensor:
    """Clamp every element into [min, max] (numbers or tensors; at least one given)."""
    return _clamp_dispatch(input, min, max, out, False)


def clamp_(input: Tensor, min=None, max=None) -> Tensor:
    """In-place clamp."""
    return _clamp_dispatch(input, min, max, None, True)


clip, clip_ = clamp, clamp_


# ---------------------------------------------------------------------- where
@op(name="_where", names=unify_inputs, method=False)
def _where(xp, condition, input, other):
    if condition.dtype.kind != "b" and condition.dtype != _dt.uint8.np:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor "
            f"with dtype {_tname(condition)}"
        )
    ti, to = type(input), type(other)
    if ti is int and hasattr(other, "dtype"):
        input = _int_bound(other, input)
    elif to is int and hasattr(input, "dtype"):
        other = _int_bound(input, other)
    if (
        getattr(input, "dtype", None) is getattr(other, "dtype", 0)
        or (to is float and hasattr(input, "dtype") and input.dtype.kind in "fc")
        or (ti is float and hasattr(other, "dtype") and other.dtype.kind in "fc")
    ):
        return select(xp, condition, input, other)  # same dtype, or a weak float scalar
    (x, y), d = promote_raw([input, other])
    npd = d.np
    if not hasattr(x, "dtype"):
        x = xp.asarray(x, dtype=npd)
    if not hasattr(y, "dtype"):
        y = xp.asarray(y, dtype=npd)
    return select(xp, condition, x, y)


def _where_out(out, res, ins=()):
    raise RuntimeError(
        f"Expected out type to be {scalar_name(res.dtype)} but got {scalar_name(out.dtype)}"
    )


_where.op.out_dtype = _where_out  # torch's where writes only the promoted dtype
_where.op.label = "where"
_where.op.overloads = (
    "(Tensor condition)",
    "(Tensor condition, Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor condition, Number self, Tensor other)",
    "(Tensor condition, Tensor input, Number other)",
    "(Tensor condition, Number self, Number other)",
)


@_where.vjp
def _(grad, condition, needs):
    return (
        None,
        (where(condition, grad, 0.0) if needs[1] else None),
        (where(condition, 0.0, grad) if needs[2] else None),
    )


_ABSENT = object()  # where's operands not given (None given is refused, as by torch)


def where(condition: Tensor, input=_ABSENT, other=_ABSENT, *, out=None):
    """``input`` where ``condition`` holds, else ``other`` (numbers allowed; differentiable in
    both). With only ``condition``: the indices of its nonzero elements, as a tuple."""
    if (
        type(input) is Tensor
        and type(other) is Tensor
        and type(condition) is Tensor
        and out is None
        and not _VMAP_SLICES
    ):
        # the common call: a bool mask choosing between unnamed same-dtype numpy tensors no
        # gradient flows through: the kernel's own select, without the registry
        c, a, b = condition._data, input._data, other._data
        if (
            type(c) is _ndarray
            and type(a) is _ndarray
            and type(b) is _ndarray
            and c.dtype.kind == "b"
            and a.dtype is b.dtype
            and not (input.requires_grad or other.requires_grad)
            and condition._names is None
            and input._names is None
            and other._names is None
        ):
            try:
                return _wrap(select(np, c, a, b))
            except ValueError:
                pass  # (shapes that do not broadcast: the registry's error)
    if input is _ABSENT or other is _ABSENT or input is None or other is None:
        if input is _ABSENT and other is _ABSENT:
            input = other = None
        else:  # torch's parser: no overload takes a None (nor a lone input or other)
            given = tuple(v for v in (condition, input, other) if v is not _ABSENT)
            raise invalid_arguments("where", given, {}, _where.op.overloads)
    if not isinstance(condition, Tensor):
        if input is None and other is None:  # one overload takes a lone condition
            raise TypeError(
                "where(): argument 'condition' (position 1) must be Tensor, not "
                f"{type_name(condition)}"
            )
        given = (condition, input) if other is None else (condition, input, other)
        raise invalid_arguments("where", given, {}, _where.op.overloads)
    if input is None and other is None:
        from .indexing import nonzero  # its contiguous rows, like torch's (not numpy's columns)

        return nonzero(condition, as_tuple=True)
    if isinstance(condition, Tensor) and condition.dtype is _dt.uint8:
        _warn_once(
            "where_uint8",
            "where received a uint8 condition tensor. This behavior is deprecated and will be "
            "removed in a future version of PyTorch. Use a boolean condition instead.",
        )
    if out is not None:
        # only torch's all-tensor overload takes out=: its parser names the first number
        for k, (v, what) in enumerate(((input, "input"), (other, "other"))):
            if not isinstance(v, Tensor):
                raise TypeError(
                    f"where(): argument '{what}' (position {k + 2}) must be Tensor, not "
                    f"{type_name(v)}"
                )
        return _where(condition, input, other, out=out)
    return _where(condition, input, other)


_WHERE_METHOD_SIGS = ("(Tensor condition, Tensor other)", "(Tensor condition, Number other)")


def _where_method(self, condition=_ABSENT, other=_ABSENT):
    """``self.where(condition, other)``: torch.where(condition, self, other)."""
    if (
        isinstance(condition, Tensor)
        and other is not _ABSENT
        and isinstance(other, (Tensor, int, float, complex, np.generic))
    ):
        return where(condition, self, other)
    given = tuple(v for v in (condition, other) if v is not _ABSENT)
    raise invalid_arguments("where", given, {}, _WHERE_METHOD_SIGS)


# ---------------------------------------------------------------------- classification
@op(names=keep)
def isnan(xp, input):
    """True where input is NaN."""
    return xp.isnan(input)


@op(names=keep)
def isinf(xp, input):
    """True where input is +inf or -inf."""
    return xp.isinf(input)


@op(names=keep)
def isposinf(xp, input):
    """True where input is +inf."""
    if input.dtype.kind == "c":
        raise RuntimeError("isposinf does not support complex inputs.")
    return xp.isposinf(input) if input.dtype.kind in "fV" else xp.zeros(input.shape, bool)


@op(names=keep)
def isneginf(xp, input):
    """True where input is -inf."""
    if input.dtype.kind == "c":
        raise RuntimeError("isneginf does not support complex inputs.")
    return xp.isneginf(input) if input.dtype.kind in "fV" else xp.zeros(input.shape, bool)


def _bool_out_only(name):
    def check(out, res, ins):
        raise RuntimeError(f"{name} does not support non-boolean outputs.")

    return check


isposinf.op.out_dtype = _bool_out_only("isposinf")
isneginf.op.out_dtype = _bool_out_only("isneginf")


@op(names=keep)
def isfinite(xp, input):
    """True where input is neither inf nor NaN."""
    return xp.isfinite(input)


@op(names=keep)
def isreal(xp, input):
    """True where the imaginary part is zero (always, for real dtypes)."""
    if input.dtype.kind == "c":
        return input.imag == 0
    return xp.ones(input.shape, bool)


for _f in (isnan, isinf, isfinite, isreal):
    _f.op.no_out = True


def _close_opts(fn: str, rtol, atol, equal_nan) -> tuple:
    """isclose/allclose's options as torch's parser reads them: rtol and atol floats (a 0-d
    tensor or numpy number gives its value), equal_nan a bool and nothing else."""
    from ..tensor import number_arg

    rtol, atol = (
        float(v) if isinstance(v, np.generic) else v
        for v in (
            number_arg(rtol, fn, "rtol", kind="float"),
            number_arg(atol, fn, "atol", kind="float"),
        )
    )
    if type(equal_nan) is not bool:
        raise TypeError(f"{fn}(): argument 'equal_nan' must be bool, not {type_name(equal_nan)}")
    return rtol, atol, equal_nan


@op(names=unify_inputs, tensors_only=True)
def isclose(xp, input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (inf equals inf of the same sign)."""
    if type(rtol) is not float or type(atol) is not float or type(equal_nan) is not bool:
        rtol, atol, equal_nan = _close_opts("isclose", rtol, atol, equal_nan)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_tname(input)} did not match {_tname(other)}")
    # (NaN fails too; torch prints the double as C++ does: -1, nan, 1e-05)
    if not rtol >= 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if not atol >= 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    close = input == other
    kind = input.dtype.kind
    if kind == "b":
        return close
    if equal_nan and kind in "fcV":
        close = close | (xp.isnan(input) & xp.isnan(other))
    if kind in "iu":  # the tolerance is computed in the default float dtype
        fd = _dt.get_default_dtype().np
        input, other = input.astype(fd), other.astype(fd)
    diff = xp.abs(input - other)
    with_tol = xp.isfinite(diff) & (diff <= atol + xp.abs(rtol * other))
    return close | with_tol


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """True when every element of input is close to other (see isclose)."""
    if type(input) is not Tensor or type(other) is not Tensor:
        for k, (v, what) in enumerate(((input, "input"), (other, "other"))):
            if not isinstance(v, Tensor):
                from ..arg_errors import tensor_method

                pos = k + (k == 0 or tensor_method("allclose") is None)  # a method: after self
                raise TypeError(
                    f"allclose(): argument '{what}' (position {pos}) must be Tensor, not "
                    f"{type_name(v)}"
                )
    if type(rtol) is not float or type(atol) is not float or type(equal_nan) is not bool:
        rtol, atol, equal_nan = _close_opts("allclose", rtol, atol, equal_nan)
    try:
        r = isclose(input, other, rtol, atol, equal_nan)
    except RuntimeError as e:  # a name clash is allclose's (spec 4.10)
        raise as_op_error(e, "allclose", ("isclose",), input, other) from None
    a = r._data
    return bool(a.all()) if type(a) is np.ndarray else bool(r.all())  # (meta: item() refuses)


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and equal elements."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        bad, pos, nm = (input, 1, "input") if not isinstance(input, Tensor) else (other, 2, "other")
        raise TypeError(
            f"equal(): argument '{nm}' (position {pos}) must be Tensor, not {type(bad).__name__}"
        )
    try:
        a, b = input._data, other._data
    except NonStridedError:  # a quantized operand: its own rule (core/quantized.py)
        r = non_strided_call("equal", (input, other), {})
        if r is NotImplemented:
            raise
        return r
    if type(a) is not np.ndarray:
        no_meta_kernel(array_module(a), "aten::equal")
    if a.shape != b.shape:
        return False
    if (input._names is not None or other._names is not None) and input.names != other.names:
        return False  # named tensors are equal only with the same names (names spec P20)
    return bool((a == b).all())


# ---------------------------------------------------------------------- logical
@op(names=unify_inputs, inplace="logical_and_", tensors_only=True)
def logical_and(xp, input, other):
    """Elementwise logical AND of the truth values (nonzero is True); a bool tensor."""
    return xp.logical_and(input, other)


@op(names=unify_inputs, inplace="logical_or_", tensors_only=True)
def logical_or(xp, input, other):
    """Elementwise logical OR."""
    return xp.logical_or(input, other)


@op(names=unify_inputs, inplace="logical_xor_", tensors_only=True)
def logical_xor(xp, input, other):
    """Elementwise logical XOR."""
    return xp.logical_xor(input, other)


@op(names=keep, inplace="logical_not_")
def logical_not(xp, input):
    """Elementwise logical NOT."""
    return xp.logical_not(input)


# ---------------------------------------------------------------------- bitwise
def _int_only(kernel, a, b=None):
    vals = (a,) if b is None else (a, b)
    _real_only(kernel, *vals)  # complex, maybe from a Python scalar: named so
    for v in vals:
        if getattr(v, "dtype", None) is not None and v.dtype.kind not in "biu":
            raise _not_impl(kernel, v)
        if isinstance(v, float):  # a float scalar makes the computation floating: named so
            d = _dt.result_type(*vals)
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{d.scalar_type}'")


@op(
    names=unify_inputs,
    promote=True,
    dunders=("__and__",),
    inplace="bitwise_and_",
    ufunc="bitwise_and",
)
def bitwise_and(xp, input, other):
    """Elementwise AND of integer or bool tensors (``&``)."""
    _int_only("bitwise_and_cpu", input, other)
    return xp.bitwise_and(input, other)


@op(
    names=unify_inputs, promote=True, dunders=("__or__",), inplace="bitwise_or_", ufunc="bitwise_or"
)
def bitwise_or(xp, input, other):
    """Elementwise OR of integer or bool tensors (``|``)."""
    _int_only("bitwise_or_cpu", input, other)
    return xp.bitwise_or(input, other)


@op(
    names=unify_inputs,
    promote=True,
    dunders=("__xor__",),
    inplace="bitwise_xor_",
    ufunc="bitwise_xor",
)
def bitwise_xor(xp, input, other):
    """Elementwise XOR of integer or bool tensors (``^``)."""
    _int_only("bitwise_xor_cpu", input, other)
    return xp.bitwise_xor(input, other)


@op(names=keep, inplace="bitwise_not_")
def bitwise_not(xp, input):
    """Elementwise NOT of an integer or bool tensor."""
    _int_only("bitwise_not_cpu", input)
    return xp.invert(input)


def _shift(xp, x, s, left, kernel):
    _int_only(kernel, x, s)
    ref = x if hasattr(x, "dtype") else s
    if ref.dtype.kind == "b":
        if _kind(x, s) == "b":
            raise _not_impl(kernel, ref)
        # a bool tensor with a Python int computes in int64
        i64 = _dt.int64.np
        x = x.astype(i64) if hasattr(x, "dtype") else xp.asarray(x, i64)
        s = s.astype(i64) if hasattr(s, "dtype") else s
        ref = x
    elif not hasattr(x, "dtype"):  # a Python int shifted by a tensor: the tensor's dtype
        x = xp.asarray(x).astype(ref.dtype)
    bits = ref.dtype.itemsize * 8
    signed = ref.dtype.kind == "i"
    if hasattr(s, "dtype"):
        bad = (s < 0) | (s >= bits)
        sc = xp.where(bad, 0, s).astype(s.dtype)
        r = xp.left_shift(x, sc) if left else xp.right_shift(x, sc)
        if not bad.any():
            return r
        if left or not signed:
            fill = xp.zeros((), r.dtype)
        else:
            fill = xp.right_shift(x, bits - 1)  # the sign bit fills everything
        return xp.where(bad, fill, r)
    if 0 <= s < bits:
        return xp.left_shift(x, s) if left else xp.right_shift(x, s)
    if left or not signed:
        return xp.zeros_like(x)
    return xp.right_shift(x, bits - 1)


@op(names=unify_inputs, promote=True, dunders=("__lshift__",), inplace="bitwise_left_shift_")
def bitwise_left_shift(xp, input, other):
    """input << other (bits shifted out are lost; shifts past the width give 0)."""
    return _shift(xp, input, other, True, "lshift_cpu")


@op(names=unify_inputs, promote=True, dunders=("__rshift__",), inplace="bitwise_right_shift_")
def bitwise_right_shift(xp, input, other):
    """input >> other (arithmetic shift for signed integers)."""
    return _shift(xp, input, other, False, "rshift_cpu")


def _invert(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return bitwise_not(self)


# ---------------------------------------------------------------------- Tensor methods and dunders
def _install():
    T = Tensor
    h = T.__hash__  # assigning __eq__ after class creation keeps the identity hash; be explicit
    for nm, fn in (
        ("__eq__", eq),
        ("__ne__", ne),
        ("__lt__", lt),
        ("__le__", le),
        ("__gt__", gt),
        ("__ge__", ge),
    ):
        setattr(T, nm, _cmp_dunder(fn))
    T.__hash__ = h
    for alias, target in (
        ("greater", "gt"),
        ("greater_equal", "ge"),
        ("less", "lt"),
        ("less_equal", "le"),
        ("not_equal", "ne"),
    ):
        setattr(T, alias, getattr(T, target))
        setattr(T, alias + "_", getattr(T, target + "_"))
    T.__rand__ = reflected(bitwise_and)
    T.__ror__ = reflected(bitwise_or)
    T.__rxor__ = reflected(bitwise_xor)
    T.__rlshift__ = reflected(bitwise_left_shift)
    T.__rrshift__ = reflected(bitwise_right_shift)
    T.__invert__ = _invert
    # (the registry takes __r*__ names for reflected ones, so __irshift__ is set here)
    T.__irshift__ = _operator_dunder(T.bitwise_right_shift_, inplace=True)
    T.clamp = T.clip = clamp
    T.clamp_ = T.clip_ = clamp_
    T.where = _where_method
    T.isclose = isclose
    T.allclose = allclose
    T.equal = equal


# a comparison or bitwise operand neither Tensor nor number: torch's "invalid combination"
_OTHER_SIGS = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, Number other, *, Tensor out = None)",
)
for _f in (eq, ne, lt, le, gt, ge):
    _f.op.overloads = _OTHER_SIGS
for _f in (bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift):
    _f.op.overloads = (_OTHER_SIGS[0], "(Number self, Tensor other)", _OTHER_SIGS[1])


_install()
