"""Arithmetic: add, sub, mul, div, pow and friends, with torch's promotion and integer rules."""

from __future__ import annotations

import cmath
import math

import numpy as np

from .. import dtype as _dt
from ..layout import broadcast_copy
from ..names import keep, unify_inputs
from ..registry import (
    _foreign,
    _operator_dunder,
    apply_inplace,
    op,
    reflected,
    scalar_name,
)
from ..registry import alias as _alias
from ..registry import promote_arrays as promote_raw
from ..tensor import Tensor, _wrap, number_arg

__all__ = ["arctan2", "divide", "multiply", "negative", "pow", "subtract", "true_divide"]

_LN2 = math.log(2.0)
_FROM_NP = _dt._FROM_NP
_PY_SCALARS = (bool, int, float, complex)


# ---------------------------------------------------------------------- helpers
def _tname(a) -> str:
    """torch's scalar-type name ('Float', 'Long' ...) of an array or Python scalar."""
    d = _FROM_NP[a.dtype] if hasattr(a, "dtype") else _dt.scalar_dtype(a)
    return scalar_name(d)


def _kind(*vals) -> str:
    """The dtype kind the computation runs in, after promotion: the first array's kind, raised by
    a Python int (over bool) or float (over bool and integers) among ``vals``."""
    kind = "f"
    for v in vals:
        if hasattr(v, "dtype"):
            kind = v.dtype.kind
            break
    if kind in "biufV":
        for v in vals:
            t = type(v)
            if t is complex:
                return "c"
            if t is float and kind in "biu":
                return "f"
            if t is int and kind == "b":
                kind = "i"
    return kind


def _real_only(kernel, *vals):
    for v in vals:
        if getattr(v, "dtype", None) is not None and v.dtype.kind == "c":
            raise _not_impl(kernel, v)
        if isinstance(v, complex):
            # a complex Python scalar makes the computation complex: torch names that dtype
            t = next(a for a in vals if hasattr(a, "dtype"))
            name = "ComplexHalf" if t.dtype == np.float16 else scalar_name(_dt.result_type(*vals))
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _not_impl(kernel: str, a):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(a)}'")


def _int_div_check(x, y):
    # torch raises on integer division by zero (numpy would warn and return 0), when it divides
    if getattr(x, "size", 1) == 0:
        return
    if hasattr(y, "dtype"):
        if y.dtype.kind in "iub" and bool((y == 0).any()):
            raise RuntimeError("ZeroDivisionError")
    elif isinstance(y, int) and y == 0:
        raise RuntimeError("ZeroDivisionError")


def _need_tensor(name: str, pos: int, arg: str, v):
    if isinstance(v, _PY_SCALARS):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(v).__name__}"
        )


def _alpha_arg(alpha, fn: str, operands=()):
    """add/sub/rsub's ``alpha`` (not the int 1) as a Python number, as torch's parser reads it:
    a 0-d tensor gives its value, a numpy scalar its Python number; any other type is refused
    (rsub, given its ``operands``, lists its overloads; an in-place method names itself)."""
    t = type(alpha)
    if t is int or t is float or t is bool or t is complex:
        return alpha
    if isinstance(alpha, np.generic):
        return _dt.numpy_scalar(alpha)
    if isinstance(alpha, Tensor) and alpha.dim() == 0:
        return alpha.item()
    from ..arg_errors import tensor_method, type_name

    if fn == "rsub":  # torch's parser blames the keyword under its (Number other) overload
        got = [type_name(a) if isinstance(a, _PY_SCALARS) else "Tensor" for a in operands]
        raise TypeError(
            f"rsub() received an invalid combination of arguments - got ({', '.join(got)}, "
            f"alpha={type_name(alpha)}), but expected one of:\n * {rsub.op.overloads[0]}\n"
            f" * {rsub.op.overloads[1]}\n"
            "      didn't match because some of the keywords were incorrect: alpha\n"
        )
    raise TypeError(
        f"{tensor_method(fn) or fn}(): argument 'alpha' must be Number, not {type_name(alpha)}"
    )


def _check_alpha(alpha, kind, what="alpha"):
    if isinstance(alpha, bool):
        if kind != "b":
            raise RuntimeError(f"Boolean {what} only supported for Boolean results.")
    elif isinstance(alpha, (float, complex)) and kind in "iub":
        raise RuntimeError(
            f"For integral input tensors, argument {what} must not be a floating point number."
        )
    elif isinstance(alpha, complex) and kind != "c":
        raise RuntimeError(
            f"For non-complex input tensors, argument {what} must not be a complex number."
        )


def _real_value(value, a):
    """addcmul/addcdiv's ``value`` in a real result's type, as torch converts it: a complex one
    fits only without an imaginary part (the result is not promoted)."""
    if isinstance(value, complex) and a.dtype.kind != "c":
        if value.imag:
            c = _dt._SCALAR_C_NAMES.get(_FROM_NP[a.dtype].name) or _cname(a)  # (int64_t)
            raise RuntimeError(f"value cannot be converted to type {c} without overflow")
        return value.real
    return value


def _value_arg(value, fn: str):
    """addcmul/addcdiv's ``value`` as a Python number, checked before anything else as torch's
    parser does: a number or a 0-d tensor (a numpy scalar as weak as a Python one), nothing else."""
    if type(value) is int or type(value) is float:
        return value
    v = number_arg(value, fn, "value")
    return _dt.numpy_scalar(v) if isinstance(v, np.generic) else v  # (complex64: its real part)


def _no_bool_sub(a, b):
    ab = isinstance(a, bool) or getattr(a, "dtype", None) == bool
    bb = isinstance(b, bool) or getattr(b, "dtype", None) == bool
    if ab and bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if ab or bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If "
            "you are trying to invert a mask, use the `~` or `logical_not()` operator "
            "instead."
        )


def _where(cond, x, y):
    from .comparison import where

    return where(cond, x, y)


# ---------------------------------------------------------------------- add / sub / mul / div
@op(names=unify_inputs, promote=True, dunders=("__add__",), inplace="add_", ufunc="add")
def add(xp, input, other, *, alpha=1):
    """out = input + alpha * other (broadcasting; names unify)."""
    if type(alpha) is not int or alpha != 1:
        if type(alpha) is not float and type(alpha) is not int:
            alpha = _alpha_arg(alpha, "add")
        kind = _kind(input, other)
        _check_alpha(alpha, kind)
        if kind == "b":
            other = xp.logical_and(other, bool(alpha))
        else:
            return _scaled(xp, xp.add, input, other, alpha)
    return xp.add(input, other)


@add.vjp
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * _cj(alpha))


def _sub_kernel(xp, a, b, alpha, fn="sub"):
    if type(alpha) is not int and type(alpha) is not float:
        alpha = _alpha_arg(alpha, fn, (b, a) if fn == "rsub" else ())
    ka, kb = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if ka is None or ka is not kb or ka.kind not in "fc":
        _no_bool_sub(a, b)
        a, b = promote_raw([a, b])[0]
    if type(alpha) is not int or alpha != 1:
        _check_alpha(alpha, _kind(a, b))
        return _scaled(xp, xp.subtract, a, b, alpha)
    return xp.subtract(a, b)


def _scaled(xp, fn, a, b, alpha):
    """``fn(a, alpha * b)`` with ``alpha`` in the computation's dtype, as torch does. numpy keeps
    the dtype itself, except for bfloat16, which it does not know: there a Python float would
    make the result float32."""
    d = a.dtype if hasattr(a, "dtype") else getattr(b, "dtype", None)
    if d is not None and d.kind in "iu" and type(alpha) is int:
        # alpha converts to the tensor's type, range-checked; the integer math then wraps, as
        # torch's does (int8 - 3 * 300)
        alpha = _dt.fill_scalar(alpha, d)
        if type(b) is int:
            b = _dt.wrap_int(b * alpha, d)
            alpha = 1
    if d is None or d.kind != "V":
        return fn(a, b * alpha)
    return fn(a, b * d.type(alpha) if hasattr(b, "dtype") else d.type(b * alpha))


@op(names=unify_inputs, dunders=("__sub__",), inplace="sub_", ufunc="subtract")
def sub(xp, input, other, *, alpha=1):
    """out = input - alpha * other."""
    return _sub_kernel(xp, input, other, alpha)


@sub.vjp
def _(grad, alpha):
    return grad, (-grad if alpha == 1 else grad * -_cj(alpha))


@op(names=unify_inputs, tensors_only=1)
def rsub(xp, input, other, *, alpha=1):
    """out = other - alpha * input."""
    return _sub_kernel(xp, other, input, alpha, "rsub")


@rsub.vjp
def _(grad, alpha):
    return (-grad if alpha == 1 else grad * -_cj(alpha)), grad


# torch's rsub with a number is RsubBackward1 (with a tensor RsubBackward0); ember's node keeps no
# operand, so "other needs no gradient" stands in for "other is a number" (`1 - x`)
rsub.op.name_rule = lambda node: "RsubBackward1" if node.edges[1] is None else "RsubBackward0"


@op(
    names=unify_inputs,
    promote=True,
    dunders=("__mul__",),
    inplace="mul_",
    ufunc="multiply",
    opmath_scalar=True,
)
def mul(xp, input, other):
    """out = input * other."""
    return xp.multiply(input, other)


def _cj(v):
    """The complex conjugate (complex gradients follow torch's conjugate Wirtinger convention)."""
    if isinstance(v, Tensor):
        return v.conj() if v._data.dtype.kind == "c" else v
    return v.conjugate() if isinstance(v, complex) else v


@mul.vjp(only_for={"input": "other", "other": "input"})
def _(grad, input, other, needs):
    return (grad * _cj(other) if needs[0] else None), (grad * _cj(input) if needs[1] else None)


# div promotes in its kernel: true division of integers casts straight to the default float, so
# a 0-d int64 divisor (m / m.sum()) is never first narrowed to the other operand's int8/uint8
@op(names=unify_inputs, dunders=("__truediv__",), inplace="div_", opmath_scalar=True)
def div(xp, input, other, *, rounding_mode=None):
    """out = input / other; rounding_mode None (true division), 'trunc' or 'floor'."""
    if rounding_mode is None:
        if not _same_float(input, other):
            input, other = promote_raw([input, other], floating=True)[0]
        return xp.true_divide(input, other)
    if type(rounding_mode) is not str:
        raise _rounding_mode_error(input, other, rounding_mode)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
            f"found '{rounding_mode}'"
        )
    if not _same_float(input, other):
        input, other = promote_raw([input, other])[0]
    return _rounded_div(xp, input, other, rounding_mode)


def _rounding_mode_error(input, other, mode) -> TypeError:
    """torch's parser error for a rounding_mode that is no str: no overload of div (divide,
    the methods, in place) takes the call, and it lists them."""
    from ..arg_errors import called_as, method_signatures, tensor_method, type_name

    method = tensor_method("divide") or tensor_method("div")
    base = (method or called_as() or "div").rpartition(".")[2].rstrip("_")
    if base not in ("div", "divide"):
        base = "div"
    sigs = (
        _TENSOR_OUT,
        "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
        *(("(Tensor input, Number other)",) if base == "divide" else ()),
        "(Tensor input, Number other, *, str rounding_mode)",
    )
    got = [type_name(a) if isinstance(a, _PY_SCALARS) else "Tensor" for a in (input, other)]
    if method is not None:  # a method lists its signatures without the input
        base, sigs, got = method, method_signatures(sigs), got[1:]
    lines = "".join(f" * {s}\n" for s in sigs)
    return TypeError(
        f"{base}() received an invalid combination of arguments - got ({', '.join(got)}, "
        f"rounding_mode={type_name(mode)}), but expected one of:\n{lines}"
    )


def _same_float(a, b) -> bool:
    """Both operands already in one float/complex dtype numpy keeps (a Python scalar beside a
    float32 array counts): the common case, which needs no promotion."""
    da = getattr(a, "dtype", None)
    db = getattr(b, "dtype", None)
    if da is None:
        da, b = db, a
    elif db is None:
        db = da
    if da is not db or da.kind not in "fc":
        return False
    return type(b) is not complex or da.kind == "c"


def _rounded_div(xp, x, y, mode):
    kind = _kind(x, y)
    if kind in "bc":
        _real_only(f"div_{mode}_cpu", x, y)  # complex, maybe from a Python scalar: named so
        raise _not_impl(f"div_{mode}_cpu", x if hasattr(x, "dtype") else y)
    if kind in "iu":
        _int_div_check(x, y)
        q = xp.floor_divide(x, y)
        if mode == "floor":
            return q
        # truncation differs from floor where the signs differ and the division is inexact
        fix = (xp.remainder(x, y) != 0) & ((x < 0) != (y < 0))
        return q + fix.astype(q.dtype)
    if mode == "floor":
        return xp.floor_divide(x, y)  # Python's floor division (1 // 0.1 == 9), like torch
    return xp.trunc(xp.true_divide(x, y))


@div.vjp(only_for={"input": "other"})
def _(grad, input, other, rounding_mode, needs):
    if rounding_mode is not None:
        return (grad * 0 if needs[0] else None), (grad * 0 if needs[1] else None)
    # d/d other = -input / other^2, divided twice: other * other overflows for |other| beyond
    # sqrt(max) (1.8e19 in float32, 256 in float16), which zeroed the gradient there
    return (grad / _cj(other) if needs[0] else None), (
        -grad * _cj(input / other / other) if needs[1] else None
    )


# torch computes number / tensor as reciprocal(tensor) * number; a rounding division is its
# own overload (div.Tensor_mode), whatever the operands
div.op.name_rule = lambda node: (
    "DivBackward2"
    if node.saved_arg("rounding_mode") is not None
    else "MulBackward0"
    if isinstance(node.saved_arg("input"), (int, float, complex))
    else "DivBackward0"
)

# torch lists the aliases' own overloads for a wrong-type input where mul/div/sub name the
# argument (their hidden Scalar overloads make the difference)
_TENSOR_OUT = "(Tensor input, Tensor other, *, Tensor out = None)"
true_divide = _alias(div, "true_divide", overloads=(_TENSOR_OUT, "(Tensor input, Number other)"))
divide = _alias(
    div,
    "divide",
    overloads=(
        _TENSOR_OUT,
        "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
        "(Tensor input, Number other)",
        "(Tensor input, Number other, *, str rounding_mode)",
    ),
)
multiply = _alias(mul, "multiply", overloads=(_TENSOR_OUT, "(Tensor input, Number other)"))
subtract = _alias(
    sub,
    "subtract",
    overloads=(
        "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
        "(Tensor input, Number other, Number alpha = 1)",
    ),
)


@op(names=keep, dunders=("__neg__",), inplace="neg_")
def neg(xp, input):
    """out = -input."""
    if input.dtype == bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return xp.negative(input)


@neg.vjp
def _(grad):
    return -grad


negative = _alias(neg, "negative")


# ---------------------------------------------------------------------- powers
def _pow_kernel(xp, input, exponent):
    kind = _kind(input, exponent)
    if kind == "b":
        if hasattr(exponent, "dtype") or not hasattr(input, "dtype"):
            raise _not_impl("pow", input if hasattr(input, "dtype") else exponent)
        return input.copy() if exponent else xp.ones_like(input)  # bool ** bool scalar
    if kind in "iu":
        if isinstance(exponent, int):
            if exponent < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            # torch converts the exponent to the base's type (a uint64 one to int64 first)
            _dt.fill_scalar(exponent, _dt.int64.np if exponent >> 63 else input.dtype)
        if hasattr(exponent, "dtype") and kind == "i" and bool((exponent < 0).any()):
            return _int_pow_negative(xp, input, exponent)
    elif kind == "c":
        if type(exponent) is float and exponent == 0.5:
            return xp.sqrt(input)  # torch takes z ** 0.5 as sqrt (exact on the axes)
        if type(exponent) in (int, float) and exponent == -1:
            # and z ** -1 as the reciprocal: 0 at the infinities (numpy's power gives NaN)
            with np.errstate(divide="ignore", invalid="ignore"):
                return xp.true_divide(input.dtype.type(1), input)
        r = xp.power(input, exponent)
        if isinstance(exponent, (int, float, complex)) and exponent == 0:
            return r  # torch's x ** 0 is one, also at 0
        zero = xp.asarray(input == 0)
        if bool(zero.any()):
            # numpy's 0 ** y is NaN for Re(y) < 0 or Im(y) != 0 (1 for y = 0); torch's is
            # exp(y * log(0)): inf+nanj for Re(y) < 0, NaN where y is imaginary or 0
            with np.errstate(all="ignore"):
                base = xp.asarray(input, dtype=r.dtype)
                z = xp.exp(xp.asarray(exponent, dtype=r.dtype) * xp.log(base))
            r = xp.where(zero, z, r)
        return r
    elif kind == "V":
        # bfloat16: ml_dtypes' power has none of numpy's scalar fast paths (x ** 0.5 as sqrt:
        # (-inf) ** 0.5 is NaN and (-0) ** 0.5 is -0, like torch); float32 has them, and
        # rounds once, as torch's float32 opmath does
        d = input.dtype if hasattr(input, "dtype") else exponent.dtype
        # the float32 path (x ** -0.5 as rsqrt too, like torch's bfloat16), a scalar operand
        # (made a bfloat16 scalar by the promotion) as a Python float, weak as it came in
        b, e = (
            float(v) if isinstance(v, np.generic) else v.astype(np.float32)
            for v in (input, exponent)
        )
        return _pow_kernel(xp, b, e).astype(d)
    if type(exponent) is float and exponent == -0.5 and kind == "f" and input.dtype.itemsize > 2:
        # torch takes float32/64 x ** -0.5 as rsqrt: -inf at -0 and NaN at -inf, where C's pow
        # gives inf and 0 (pow's derivative at x ** 0.5 uses it: -inf at -0)
        r = xp.sqrt(input)
        return xp.divide(1, r, out=r)
    return xp.power(input, exponent)


def _int_pow_negative(xp, b, e):
    # torch's integer pow with a negative exponent tensor: 1 / b**|e| truncated (numpy raises)
    neg = e < 0
    r = xp.power(b, xp.where(neg, 0, e).astype(e.dtype))
    odd = (e % 2) != 0
    alt = xp.where(b == 1, 1, xp.where(b == -1, xp.where(odd, -1, 1), 0)).astype(r.dtype)
    return xp.where(neg, alt, r)


def _pow_grads(grad, input, exponent, result, needs):
    gi = ge = None
    if needs[0]:
        # complex inputs: the conjugate Wirtinger convention multiplies by conj(d out / d in)
        if isinstance(exponent, Tensor):
            gi = _where(exponent == 0, 0.0, grad * _cj(exponent * input ** (exponent - 1)))
        elif exponent == 0:
            gi = grad * 0
        else:
            gi = grad * _cj(exponent * input ** (exponent - 1))
    if needs[1]:
        if isinstance(input, Tensor):
            # d(a^b)/db = a^b log a, taken as 0 where a == 0 and b >= 0 (torch's convention)
            # (a complex exponent: its real part decides, like torch)
            e = exponent.real if exponent.is_complex() else exponent
            ge = grad * _cj(_where((input == 0) & (e >= 0), 0.0, result * input.log()))
        elif input == 0:
            ge = grad * _where(exponent >= 0, 0.0, result * -math.inf)
        elif isinstance(input, complex):
            ge = grad * _cj(result * cmath.log(input))
        else:
            ge = grad * _cj(result * (math.log(input) if input > 0 else math.nan))
    return gi, ge


@op(names=unify_inputs, promote=True, method=False, inplace="pow_")
def _pow_tensor(xp, input, exponent):
    """input ** exponent with a tensor operand on either side (PowBackward1 saves the result)."""
    return _pow_kernel(xp, input, exponent)


@_pow_tensor.vjp
def _(grad, input, exponent, result, needs):
    return _pow_grads(grad, input, exponent, result, needs)


@op(names=unify_inputs, promote=True, method=False)
def _pow_scalar(xp, input, exponent):
    """tensor ** Python number: like torch's PowBackward0, saves only the input (not the result),
    so an in-place change of the output does not invalidate the graph."""
    return _pow_kernel(xp, input, exponent)


@_pow_scalar.vjp
def _(grad, input, exponent):
    return _pow_grads(grad, input, exponent, None, (True, False))[0]


_pow_tensor.op.backward_name = "PowBackward1"
_pow_scalar.op.backward_name = "PowBackward0"
# both are torch's pow: its name in their errors
_pow_tensor.op.label = _pow_scalar.op.label = "pow"
# number ** tensor is torch's third pow overload
_pow_tensor.op.name_rule = lambda node: (
    "PowBackward2"
    if isinstance(node.saved_arg("input"), (int, float, complex))
    # pow_ of a number runs this op in place: torch's node is pow's number overload's
    else "PowBackward0"
    if isinstance(node.saved_arg("exponent"), (int, float, complex))
    else "PowBackward1"
)


def pow(input, exponent, *, out: Tensor | None = None) -> Tensor:
    """out = input ** exponent (tensors or Python numbers on either side, torch's promotion)."""
    if type(exponent) in (int, float) and isinstance(input, Tensor):
        fn = _pow_scalar
    else:
        fn = _pow_tensor
    return fn(input, exponent) if out is None else fn(input, exponent, out=out)


@op(names=unify_inputs)
def float_power(xp, input, exponent):
    """input ** exponent computed in double precision (float64, or complex128)."""
    c = any(
        getattr(v, "dtype", None) is not None and v.dtype.kind == "c" or isinstance(v, complex)
        for v in (input, exponent)
    )
    npd = _dt.complex128.np if c else _dt.float64.np
    a = input
    if hasattr(input, "dtype"):
        input = input.astype(npd, copy=False)
    if hasattr(exponent, "dtype"):
        exponent = exponent.astype(npd, copy=False)
    r = xp.power(input, exponent)
    # the cast put an expanded input's stride-0 dims fastest (numpy's 'K' order)
    return r if r.flags.c_contiguous else broadcast_copy(xp, a, r)


def _float_power_out(out, res, ins):
    """An out= tensor must already be double (or complex double): torch does not cast."""
    raise RuntimeError(
        f"the output given to float_power has dtype {scalar_name(out.dtype)} but the "
        f"operation's result requires dtype {scalar_name(res.dtype)}"
    )


float_power.op.out_dtype = _float_power_out


@float_power.vjp
def _(grad, input, exponent, result, needs):
    # grad and result are double; the engine casts each gradient back to its input's dtype.
    # The operands too are taken in double: in float32, x ** (e - 1) over- and underflowed and
    # e - 1 rounded (e = 1e-8 gave -1, an odd power, so -0's derivative took the wrong sign)
    wide = result.dtype
    if isinstance(input, Tensor) and input.dtype is not wide:
        input = input.to(wide)
    if isinstance(exponent, Tensor) and exponent.dtype is not wide:
        exponent = exponent.to(wide)
    return _pow_grads(grad, input, exponent, result, needs)


def _float_power_(self: Tensor, exponent) -> Tensor:
    want = (
        _dt.complex128
        if (
            self.dtype.is_complex
            or isinstance(exponent, complex)
            or (isinstance(exponent, Tensor) and exponent.dtype.is_complex)
        )
        else _dt.float64
    )
    if self.dtype is not want:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {scalar_name(self.dtype)} but "
            f"the operation's result requires dtype {scalar_name(want)}"
        )
    return apply_inplace(float_power.op, self, (exponent,), {})


# ---------------------------------------------------------------------- integer-style division
@op(names=unify_inputs, promote=True, dunders=("__floordiv__",), inplace="floor_divide_")
def floor_divide(xp, input, other):
    """Division rounding toward -inf (torch's ``//``)."""
    return _rounded_div(xp, input, other, "floor")


@floor_divide.vjp
def _(grad):
    # torch records floor_divide (its result requires grad) but has no derivative for it: a
    # backward through ``//`` raises instead of handing back zeros
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


@op(names=unify_inputs, promote=True, dunders=("__mod__",), inplace="remainder_")
def remainder(xp, input, other):
    """Python-style modulus: the result has the sign of the divisor."""
    kind = _kind(input, other)
    if kind in "bc":
        _real_only("remainder_cpu", input, other)
        raise _not_impl("remainder_cpu", input if hasattr(input, "dtype") else other)
    if kind in "iu":
        _int_div_check(input, other)
        return xp.remainder(input, other)
    # torch's float remainder is fmod moved into the divisor's sign: a zero keeps the dividend's
    # sign (numpy's takes the divisor's: 0 % -3 would print as -0.)
    mod = xp.fmod(input, other)
    return xp.where((mod != 0) & ((other < 0) != (mod < 0)), mod + other, mod)


@remainder.vjp(only_for={"input": "other", "other": "other"})  # input's gradient reads neither
def _(grad, input, other, other_dtype, needs):
    return (grad if needs[0] else None), (
        -grad * div(input, other, rounding_mode="floor") if needs[1] else None
    )


# torch's overload by a number (...Backward0) or a tensor (...Backward1)
remainder.op.name_rule = lambda node: (
    node.op.backward_name[:-1] + ("0" if node.saved_arg("other_dtype") is None else "1")
)


@op(names=unify_inputs, promote=True, inplace="fmod_", tensors_only=1)
def fmod(xp, input, other):
    """C-style modulus: the result has the sign of the dividend."""
    kind = _kind(input, other)
    if kind in "bc":
        _real_only("fmod_cpu", input, other)
        raise _not_impl("fmod_cpu", input)
    if kind in "iu":
        _int_div_check(input, other)
    return xp.fmod(input, other)


@fmod.vjp(only_for={"input": "other", "other": "other"})  # input's gradient reads neither
def _(grad, input, other, other_dtype, needs):
    return (grad if needs[0] else None), (
        -grad * div(input, other, rounding_mode="trunc") if needs[1] else None
    )


# torch's overload by a number (...Backward0) or a tensor (...Backward1)
fmod.op.name_rule = lambda node: (
    node.op.backward_name[:-1] + ("0" if node.saved_arg("other_dtype") is None else "1")
)


# ---------------------------------------------------------------------- fused and binary math
@op(names=unify_inputs, promote=True, inplace="addcmul_", tensors_only=True)
def addcmul(xp, input, tensor1, tensor2, *, value=1):
    """out = input + value * tensor1 * tensor2."""
    value = _value_arg(value, "addcmul")
    if input.dtype.kind == "b":
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    if input.dtype.itemsize == 2 and input.dtype.kind in "fV":  # float32 math, one rounding
        f = _dt.float32.np
        r = addcmul.op.kernel(
            xp, input.astype(f), tensor1.astype(f), tensor2.astype(f), value=value
        )
        return r.astype(input.dtype)
    prod = xp.multiply(tensor1, tensor2)
    # a numpy product of the result's shape and dtype takes the scaling and the sum in place
    own = type(prod) is np.ndarray and prod.shape == input.shape and prod.dtype == input.dtype
    if type(value) is not int or value != 1:
        value = _real_value(value, prod)
        if isinstance(value, float) and prod.dtype.kind in "iub":  # (_kind of one array)
            value = int(value)  # torch casts value to the integer result type
        if own and prod.dtype.kind in "fc":
            prod *= value
        else:
            prod = prod * value
            own = False
    return np.add(input, prod, out=prod) if own else xp.add(input, prod)


@addcmul.vjp(only_for={"tensor1": "tensor2", "tensor2": "tensor1"})
def _(grad, tensor1, tensor2, value, needs):
    g = grad if value == 1 else grad * _cj(value)
    return (
        (grad if needs[0] else None),
        (g * _cj(tensor2) if needs[1] else None),
        (g * _cj(tensor1) if needs[2] else None),
    )


@op(names=unify_inputs, inplace="addcdiv_", tensors_only=True)
def addcdiv(xp, input, tensor1, tensor2, *, value=1):
    """out = input + value * tensor1 / tensor2."""
    value = _value_arg(value, "addcdiv")
    if _kind(tensor1) in "iub" and _kind(tensor2) in "iub":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: (input "
            "+ value * tensor1 / tensor2), for all dtypes."
        )
    (input, tensor1, tensor2), _ = promote_raw([input, tensor1, tensor2])
    if input.dtype.itemsize == 2 and input.dtype.kind in "fV":  # float32 math, one rounding
        f = _dt.float32.np
        r = addcdiv.op.kernel(
            xp, input.astype(f), tensor1.astype(f), tensor2.astype(f), value=value
        )
        return r.astype(input.dtype)
    q = xp.true_divide(tensor1, tensor2)
    if type(value) is not int or value != 1:
        value = _real_value(value, q)
        if type(value) is bool:  # torch takes it as 1 or 0 here (a floating result)
            value = int(value)
        q = q * value
    return xp.add(input, q)


@addcdiv.vjp(only_for={"tensor1": "tensor2"})  # torch keeps tensor2 whatever needs a gradient
def _(grad, tensor1, tensor2, value, needs):
    g = grad if value == 1 else grad * _cj(value)
    return (
        (grad if needs[0] else None),
        (g / _cj(tensor2) if needs[1] else None),
        (-g * _cj(tensor1 / (tensor2 * tensor2)) if needs[2] else None),
    )


_C_NAMES = _dt.C_NAMES


def _cname(a) -> str:
    return _C_NAMES.get(_FROM_NP[a.dtype].name, str(a.dtype))


@op(names=unify_inputs, inplace="lerp_", opmath_scalar=True, tensors_only=2)
def lerp(xp, input, end, weight):
    """out = input + weight * (end - input); weight is a number or a tensor."""
    if end.dtype != input.dtype:
        raise RuntimeError(f"expected dtype {_cname(input)} for `end` but got dtype {_cname(end)}")
    scalar_w = type(weight) is float or not hasattr(weight, "dtype")  # (a float: no lookup)
    if not scalar_w and weight.ndim and weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected dtype {_cname(input)} for `weight` but got dtype {_cname(weight)}"
        )
    if input.dtype.kind not in "fcV":
        raise _not_impl("lerp_kernel_scalar" if scalar_w else "lerp_kernel_tensor", input)
    if type(weight) is not float:  # (a float is real)
        _dt.check_real_scalar(input.dtype, weight)  # a complex weight does not promote
    if not scalar_w and weight.dtype != input.dtype:
        weight = weight.astype(input.dtype)
    if input.dtype.itemsize == 2:  # half types compute in float32, like torch's opmath
        f32 = _dt.float32.np
        r = _lerp(
            xp,
            input.astype(f32),
            end.astype(f32),
            weight if scalar_w else weight.astype(f32),
            scalar_w,
        )
        return r.astype(input.dtype)
    return _lerp(xp, input, end, weight, scalar_w)


def _lerp(xp, input, end, weight, scalar_w):
    diff = end - input
    # torch's two-sided formula: exact at both ends (weight 0 gives input, weight 1 gives end)
    if scalar_w:
        if type(diff) is np.ndarray:  # the same products and sums, in diff's buffer
            if abs(weight) < 0.5:
                diff *= weight
                diff += input
            else:
                diff *= 1 - weight
                np.subtract(end, diff, out=diff)
            return diff
        return input + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
    return xp.where(xp.abs(weight) < 0.5, input + weight * diff, end - diff * (1 - weight))


@lerp.vjp(only_for={"input": "weight", "end": "weight"})  # torch always keeps a tensor weight
def _(grad, input, end, weight, needs):
    # a complex weight (or input) multiplies by conjugates (torch's Wirtinger convention)
    gw = None
    if needs[2]:
        gw = grad * _cj(end - input)
    return (
        (grad * _cj(1 - weight) if needs[0] else None),
        (grad * _cj(weight) if needs[1] else None),
        gw,
    )


@op(names=unify_inputs, promote=True, inplace="hypot_", tensors_only=True)
def hypot(xp, input, other):
    """sqrt(input**2 + other**2), elementwise."""
    if input.dtype.kind not in "fV":
        raise _not_impl("hypot_cpu", input)
    return xp.hypot(input, other)


@hypot.vjp(only_for={"input": "input", "other": "other"})  # each gradient reads its own operand
def _(grad, input, other, result, needs):
    return (grad * input / result if needs[0] else None), (
        grad * other / result if needs[1] else None
    )


@op(names=unify_inputs, promote=True, floating=True, inplace="atan2_", tensors_only=True)
def atan2(xp, input, other):
    """The angle of the point (other, input): arctan(input / other) in the right quadrant."""
    _real_only("atan2_cpu", input, other)
    return xp.arctan2(input, other)


@atan2.vjp
def _(grad, input, other, needs):
    d = input * input + other * other
    z = d._data == 0
    if z.any():  # torch's convention at the origin: a zero gradient
        d = d + _wrap(z.astype(d._data.dtype))
    return (grad * other / d if needs[0] else None), (-grad * input / d if needs[1] else None)


arctan2 = _alias(atan2, "arctan2")


def _logaddexp_kernel(xp, name, a, b, base2):
    if a.dtype.kind not in "fcV" or (base2 and a.dtype.kind == "c"):  # no complex logaddexp2
        raise _not_impl(f"{name}_cpu", a)
    if a.dtype.kind == "c":
        return _complex_logaddexp(xp, a, b)
    return xp.logaddexp2(a, b) if base2 else xp.logaddexp(a, b)


def _complex_logaddexp(xp, a, b):
    """log(exp(a) + exp(b)) of complex arrays as torch forms it (logaddexp, and each step of
    logcumsumexp): hi + log1p(exp(lo - hi)), hi the operand with the larger real part (``a`` on a
    tie), so the imaginary part is hi's plus a principal angle, not wrapped into (-pi, pi].
    NaN anywhere gives nan+nanj; two infinite real parts of one sign give lo (-inf) or
    log(exp(a) + exp(b)) (+inf)."""
    swap = a.real < b.real
    hi = xp.where(swap, b, a)
    lo = xp.where(swap, a, b)
    with np.errstate(all="ignore"):
        r = hi + xp.log1p(xp.exp(lo - hi))
        both_inf = xp.isinf(lo.real) & (lo.real == hi.real)
        if both_inf.any():
            r = xp.where(both_inf & (lo.real < 0), lo, r)
            r = xp.where(both_inf & (lo.real > 0), xp.log(xp.exp(lo) + xp.exp(hi)), r)
    nan = xp.isnan(a) | xp.isnan(b)
    return xp.where(nan, r.dtype.type(complex(math.nan, math.nan)), r).astype(r.dtype, copy=False)


@op(names=unify_inputs, promote=True, tensors_only=True)
def logaddexp(xp, input, other):
    """log(exp(input) + exp(other)), computed without overflow."""
    return _logaddexp_kernel(xp, "logaddexp", input, other, False)


@logaddexp.vjp
def _(grad, input, other, needs):
    # torch's form 1 / (1 + exp(other - input)), not exp(input - result): that is inf - inf = NaN
    # where one side is inf and the other -inf (torch: 1 and 0)
    return (grad / _cj(1 + (other - input).exp()) if needs[0] else None), (
        grad / _cj(1 + (input - other).exp()) if needs[1] else None
    )


@op(names=unify_inputs, promote=True, tensors_only=True)
def logaddexp2(xp, input, other):
    """log2(2**input + 2**other), computed without overflow."""
    return _logaddexp_kernel(xp, "logaddexp2", input, other, True)


@logaddexp2.vjp
def _(grad, input, other, needs):
    # 1 / (1 + 2 ** (other - input)), as logaddexp's (finite where one side is inf, one -inf)
    return (grad / (1 + (other - input).exp2()) if needs[0] else None), (
        grad / (1 + (input - other).exp2()) if needs[1] else None
    )


@op(names=unify_inputs, promote=True, floating=True, inplace="copysign_", tensors_only=1)
def copysign(xp, input, other):
    """|input| with the sign of other (the sign bit, so -0.0 counts as negative)."""
    _real_only("copysign_cpu", input, other)
    return xp.copysign(input, other)


@copysign.vjp(only_for={"input": "input"})  # other's gradient is zero
def _(grad, input, result, needs):
    # d|x|*s / dx = sign(x) * s = result / x, defined as 0 at x == 0 (torch's convention)
    gi = grad * _where(input == 0, 0.0, result / input) if needs[0] else None
    return gi, (grad * 0 if needs[1] else None)


@op(names=unify_inputs, promote=True, floating=True, inplace="xlogy_")
def xlogy(xp, input, other):
    """input * log(other), defined as 0 where input == 0 (unless other is nan)."""
    _real_only("xlogy_cpu", input, other)
    if hasattr(other, "dtype"):
        lg = xp.log(other)
    else:  # a Python float stays weakly typed (float32 input stays float32)
        lg = math.log(other) if other > 0 else (-math.inf if other == 0 else math.nan)
    r = xp.multiply(input, lg)
    z = input == 0
    if hasattr(z, "shape"):
        return xp.where(z & ~xp.isnan(other), xp.zeros((), r.dtype), r)
    if z:
        return xp.where(xp.isnan(other), r, xp.zeros((), r.dtype))
    return r


@xlogy.vjp
def _(grad, input, other, needs):
    gi = go = None
    if needs[0]:
        if isinstance(other, Tensor):
            gi = grad * _where((input == 0) & (other <= 0), 0.0, other.log())
        else:
            lg = math.log(other) if other > 0 else (-math.inf if other == 0 else math.nan)
            gi = grad * (_where(input == 0, 0.0, lg) if other <= 0 else lg)
    if needs[1]:
        go = grad * input / other
    return gi, go


@op(names=unify_inputs, inplace="ldexp_", tensors_only=True)
def ldexp(xp, input, other):
    """input * 2 ** other."""
    # torch scales a floating input by an integer exponent exactly (its own kernel, which has
    # no bool case); anything else is input * 2 ** other in the promoted floating dtype
    scaled = input.dtype.kind in "fV" and other.dtype.kind in "iub"
    if scaled and other.dtype.kind == "b":
        raise _not_impl("ldexp_cpu_exp", other)
    (input, other), _ = promote_raw([input, other], floating=True)
    p = xp.exp2(other)
    r = xp.multiply(input, p)
    if scaled:
        # 2 ** other alone over- or underflows (|other| >= 128 in float32) where the product
        # does not (ldexp(0.1, 128) is 3.4e37, not inf). A test on 2 ** other; the rest only then
        far = (p == 0) | (p == xp.inf)
        if far.any():
            x = _dt.float32.np if r.dtype.itemsize == 2 else r.dtype  # (no half ldexp)
            e = xp.clip(xp.where(far, other, 0), -4096, 4096).astype(np.int32)
            exact = xp.ldexp(xp.asarray(input).astype(x), e).astype(r.dtype)
            r = xp.where(far, exact, r)
    return r


def _ldexp_out(out, res, ins=()):
    """ldexp is torch's composite (a mul into out=, also in place): its own cast error."""
    if not _dt.can_cast(res.dtype, out.dtype):
        if out.dtype.is_floating_point:  # a complex result: the mul's own check says it
            raise RuntimeError(
                f"result type {scalar_name(res.dtype)} can't be cast to the desired output "
                f"type {scalar_name(out.dtype)}"
            )
        raise RuntimeError(
            f"ldexp can't be cast to the desired output type {scalar_name(out.dtype)}"
        )


ldexp.op.out_dtype = _ldexp_out
ldexp.op.inplace_is_out = True


@ldexp.vjp
def _(grad, other, result, needs):
    # (2 ** k is exact, exp(k ln 2) is not; complex: conjugates, torch's Wirtinger convention)
    return (grad * _cj(2.0**other) if needs[0] else None), (
        grad * _cj(result) * _LN2 if needs[1] else None
    )


@op(names=unify_inputs, promote=True, inplace="nextafter_", tensors_only=True)
def nextafter(xp, input, other):
    """The next representable floating-point value after input in the direction of other."""
    if input.dtype.kind == "V":  # bfloat16, which numpy's nextafter does not know
        return _nextafter_bits(xp, input, other)
    if input.dtype.kind not in "f":
        raise _not_impl("nextafter_cpu", input)
    r = xp.nextafter(input, other)
    if input.dtype.itemsize == 2:  # numpy's float16 loop answers x, not y, where x == y (-0, 0)
        r = xp.where(input == other, other, r)
    return r


def _nextafter_bits(xp, x, y):
    """nextafter by stepping the bit pattern (one ulp toward ``y``), as C's nextafter does:
    NaN in, NaN out; equal values give ``y``; from zero, the smallest subnormal of y's sign."""
    y = xp.broadcast_to(y, np.broadcast_shapes(x.shape, y.shape))
    x = xp.broadcast_to(x, y.shape)
    bits = x.view(np.uint16).astype(np.int32)
    up = (x < y) == (x > 0)  # away from zero: a larger magnitude, a larger bit pattern
    step = xp.where(up, bits + 1, bits - 1)
    tiny = xp.where(y < 0, 0x8001, 0x0001)
    out = xp.where(x == 0, tiny, step).astype(np.uint16).view(x.dtype)
    out = xp.where(x == y, y, out)
    return xp.where(xp.isnan(x) | xp.isnan(y), x + y, out)


@nextafter.vjp
def _(grad, input, other, needs):
    # torch's convention: the one-ulp step is the identity in input, except where input ==
    # other (the result is then other itself, taken as constant); other gets no gradient
    gi = grad * (input != other) if needs[0] else None
    return gi, (grad * 0 if needs[1] else None)


# ---------------------------------------------------------------------- Tensor methods and dunders
_rdiv = reflected(div)


def _rtruediv(self, other):
    """``number / t`` as torch computes it: ``reciprocal(t) * number`` (so its rounding, and its
    MulBackward0); an array still divides."""
    if isinstance(other, (bool, int, float, complex, np.number, np.bool_)):
        from .pointwise import reciprocal

        return mul(reciprocal(self), other)
    if isinstance(other, np.ndarray):  # as torch: the product is numpy's (float64 for int64)
        from .pointwise import reciprocal

        try:
            return reciprocal(self) * other
        except TypeError:  # torch's dunder answers NotImplemented for any TypeError
            return NotImplemented
    return _rdiv(self, other)


def _pow_dunder(self, exponent, modulo=None):
    """``t ** e``; a modulus (``pow(t, 2, 3)``) or a foreign exponent is not ours, so Python
    raises its own "unsupported operand" TypeError, as for torch."""
    if modulo is not None or _foreign(exponent):
        return NotImplemented
    if isinstance(exponent, np.ndarray):  # torch leaves it to numpy (which wraps a tensor)
        return NotImplemented
    return pow(self, exponent)


def _pos(self):
    """``+t``: the tensor itself, which torch refuses for bool (as it does ``-t``)."""
    if self._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _install():
    Tensor.__radd__ = reflected(add)
    Tensor.__rsub__ = reflected(rsub, swapped=True)  # number - t is torch's rsub (RsubBackward1)
    Tensor.__rmul__ = reflected(mul)
    Tensor.__rtruediv__ = _rtruediv
    Tensor.pow = pow
    Tensor.__pow__ = _pow_dunder
    Tensor.__ipow__ = _operator_dunder(Tensor.pow_, inplace=True)
    Tensor.__rpow__ = reflected(pow)
    Tensor.__rfloordiv__ = reflected(floor_divide)
    Tensor.__rmod__ = reflected(remainder)
    Tensor.__pos__ = _pos
    Tensor.float_power_ = _float_power_
    for alias, target in (
        ("arctan2", "atan2"),
        ("true_divide", "div"),
        ("divide", "div"),
        ("multiply", "mul"),
        ("subtract", "sub"),
        ("negative", "neg"),
    ):
        setattr(Tensor, alias, getattr(Tensor, target))
        setattr(Tensor, alias + "_", getattr(Tensor, target + "_"))


# an operand neither Tensor nor number: torch's "invalid combination" error
for _f in (fmod, copysign):
    _f.op.overloads = (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other, *, Tensor out = None)",
    )
remainder.op.overloads = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Number self, Tensor other)",
    "(Tensor input, Number other, *, Tensor out = None)",
)
floor_divide.op.overloads = (_TENSOR_OUT, "(Tensor input, Number other)")
# torch takes add(1, 2), sub, mul, div and floor_divide of two numbers (the first as a 0-d tensor)
for _f in (add, sub, mul, div, floor_divide):
    _f.op.number_self = True
rsub.op.overloads = (
    "(Tensor input, Tensor other, *, Number alpha = 1)",
    "(Tensor input, Number other, Number alpha = 1)",
)
lerp.op.overloads = (
    "(Tensor input, Tensor end, Tensor weight, *, Tensor out = None)",
    "(Tensor input, Tensor end, Number weight, *, Tensor out = None)",
)
float_power.op.overloads = _pow_tensor.op.overloads = (
    "(Tensor input, Tensor exponent, *, Tensor out = None)",
    "(Number self, Tensor exponent, *, Tensor out = None)",
    "(Tensor input, Number exponent, *, Tensor out = None)",
)
xlogy.op.overloads = remainder.op.overloads[:1] + (
    "(Number self, Tensor other, *, Tensor out = None)",
    remainder.op.overloads[2],
)


_install()
