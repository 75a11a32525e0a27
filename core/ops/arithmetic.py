"""Arithmetic: add, sub, mul, div, neg, pow and friends, with torch's promotion and integer rules."""

from __future__ import annotations

from .. import dtype as _dt
from ..names import unify_inputs, keep
from ..registry import op, reflected


def _int_div_check(xp, y):
    # torch raises on integer division by zero; numpy would warn and return 0
    if getattr(y, "dtype", None) is not None and y.dtype.kind in "iub":
        if bool((y == 0).any()):
            raise ZeroDivisionError("ZeroDivisionError")
    elif isinstance(y, (int, bool)) and y == 0:
        raise ZeroDivisionError("ZeroDivisionError")


@op(names=unify_inputs, promote=True, dunders=("__add__",), inplace="add_")
def add(xp, input, other, *, alpha=1):
    """out = input + alpha * other (broadcasting; names unify)."""
    if alpha != 1:
        other = other * alpha
    return xp.add(input, other)


@add.vjp
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * alpha)


@op(names=unify_inputs, promote=True, dunders=("__sub__",), inplace="sub_")
def sub(xp, input, other, *, alpha=1):
    """out = input - alpha * other."""
    if getattr(input, "dtype", None) == bool and getattr(other, "dtype", None) == bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if alpha != 1:
        other = other * alpha
    return xp.subtract(input, other)


@sub.vjp
def _(grad, alpha):
    return grad, -grad if alpha == 1 else grad * -alpha


@op(names=unify_inputs, promote=True, dunders=("__mul__",), inplace="mul_")
def mul(xp, input, other):
    """out = input * other."""
    return xp.multiply(input, other)


@mul.vjp
def _(grad, input, other, needs):
    return (grad * other if needs[0] else None), (grad * input if needs[1] else None)


@op(names=unify_inputs, promote=True, floating=True, dunders=("__truediv__",), inplace="div_")
def div(xp, input, other, *, rounding_mode=None):
    """out = input / other; rounding_mode None (true division), 'trunc' or 'floor'."""
    if rounding_mode is None:
        return xp.true_divide(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                           f"found '{rounding_mode}'")
    return _rounded_div(xp, input, other, rounding_mode)


def _rounded_div(xp, x, y, mode):
    kind = x.dtype.kind if hasattr(x, "dtype") else y.dtype.kind
    if kind in "iub":
        _int_div_check(xp, y)
        if mode == "floor":
            return xp.floor_divide(x, y)
        q = xp.floor_divide(x, y)
        # truncation differs from floor where the signs differ and the division is inexact
        fix = ((x % y) != 0) & ((x < 0) != (y < 0))
        return q + fix.astype(q.dtype)
    q = xp.true_divide(x, y)
    return xp.floor(q) if mode == "floor" else xp.trunc(q)


@div.vjp
def _(grad, input, other, rounding_mode, needs):
    if rounding_mode is not None:
        return grad * 0, grad * 0
    return (grad / other if needs[0] else None), (-grad * input / (other * other) if needs[1]
                                                   else None)


true_divide = div
divide = div
multiply = mul
subtract = sub


@op(names=keep, dunders=("__neg__",), inplace="neg_")
def neg(xp, input):
    """out = -input."""
    if input.dtype == bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return xp.negative(input)


@neg.vjp
def _(grad):
    return -grad


negative = neg


@op(names=unify_inputs, promote=True, dunders=("__pow__",), inplace="pow_")
def pow(xp, input, exponent):
    """out = input ** exponent."""
    if hasattr(input, "dtype") and input.dtype.kind in "iu":
        e = exponent
        if (hasattr(e, "dtype") and e.dtype.kind in "iu" and bool((e < 0).any())) or (
                isinstance(e, int) and e < 0):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    return xp.power(input, exponent)


@pow.vjp
def _(grad, input, exponent, result):
    from ..tensor import Tensor

    if isinstance(exponent, Tensor):
        gi = None
        if isinstance(input, Tensor) and input.requires_grad:
            gi = grad * exponent * input ** (exponent - 1)
        ge = None
        if exponent.requires_grad:
            ge = grad * result * (_safe_log(input) if isinstance(input, Tensor) else _log(input))
        return gi, ge
    if exponent == 0:
        return grad * 0, None
    return grad * exponent * input ** (exponent - 1), None


def _log(c):
    import math

    return math.log(c) if c > 0 else float("nan")


def _safe_log(x):
    # d(a^b)/db = a^b log a, taken as 0 where a == 0 (torch's convention)
    return x.masked_fill(x == 0, 1).log()


@op(names=unify_inputs, promote=True, dunders=("__floordiv__",), inplace="floor_divide_")
def floor_divide(xp, input, other):
    """Integer-style division rounding toward -inf (torch's ``//``)."""
    return _rounded_div(xp, input, other, "floor")


@floor_divide.vjp
def _(grad):
    return grad * 0, grad * 0


@op(names=unify_inputs, promote=True, dunders=("__mod__",), inplace="remainder_")
def remainder(xp, input, other):
    """Python-style modulus: the result has the sign of the divisor."""
    kind = input.dtype.kind if hasattr(input, "dtype") else other.dtype.kind
    if kind in "iu":
        _int_div_check(xp, other)
    return xp.remainder(input, other)


@remainder.vjp
def _(grad, input, other):
    return grad, -grad * (input / other).floor() if hasattr(other, "requires_grad") else None


@op(names=unify_inputs, promote=True, inplace="fmod_")
def fmod(xp, input, other):
    """C-style modulus: the result has the sign of the dividend."""
    kind = input.dtype.kind if hasattr(input, "dtype") else other.dtype.kind
    if kind in "iu":
        _int_div_check(xp, other)
    return xp.fmod(input, other)


@fmod.vjp
def _(grad, input, other):
    return grad, -grad * (input / other).trunc() if hasattr(other, "requires_grad") else None


def _install_reflected():
    from ..tensor import Tensor

    Tensor.__radd__ = reflected(add)
    Tensor.__rsub__ = reflected(sub)
    Tensor.__rmul__ = reflected(mul)
    Tensor.__rtruediv__ = reflected(div)
    Tensor.__rpow__ = reflected(pow)
    Tensor.__rfloordiv__ = reflected(floor_divide)
    Tensor.__rmod__ = reflected(remainder)
    Tensor.__pos__ = lambda self: self


_install_reflected()
del _dt
