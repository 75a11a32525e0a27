"""Unary pointwise math: trigonometric, exponential, rounding, special functions and friends.

Each op keeps its input's names. Transcendental functions turn integer inputs into the default
float dtype (``floating=True``); abs, sign, ceil, floor, round, trunc, square, relu keep integers,
like torch. Derivatives follow torch's conventions (abs'(0) = 0, rounding ops have zero gradient)
and are written in ember ops, so they are differentiable again. Complex derivatives use torch's
convention (the gradient is conjugated: ``grad * conj(f'(z))``).

The scipy.special functions run through ``special(xp)``: scipy.special on cpu, cupyx.scipy.special
on cuda.
"""

from __future__ import annotations

import math

import numpy as np

from ...autograd.grad_mode import _state
from .. import dtype as _dt
from .. import layout as _layout
from ..arg_errors import tensor_input as _tensor_input
from ..kernels.blocked import blocked
from ..kernels.select import select
from ..names import keep, unify_inputs
from ..registry import alias as _alias
from ..registry import op, scalar_name
from ..return_types import return_types
from ..tensor import Tensor, _set_imag, _set_real, _wrap, number_arg
from .creation import zeros_like
from .shape import _conj, cat

_PI = math.pi
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_LOG_PI = math.log(math.pi)

__all__ = [  # the registered ops are exported by the registry; these are the plain functions
    "absolute",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "conj",
    "fix",
    "gradient",
    "polygamma",
    "positive",
    "real",
    "resolve_conj",
]

# ------------------------------------------------------------------------------------ helpers
_SPECIAL: dict = {}


def special(xp):
    """The scipy.special-like module for the array module ``xp`` (imported once, lazily)."""
    m = _SPECIAL.get(xp)
    if m is None:
        if xp is np:
            import scipy.special as m
        elif hasattr(xp, "host_module"):  # the meta device
            m = xp.host_module("scipy.special")
        else:
            import cupyx.scipy.special as m
        _SPECIAL[xp] = m
    return m


def _sp(xp, name, x, *args):
    """special(xp).<name>(*args, x) in x's dtype (half types compute in float32, like torch)."""
    f = getattr(special(xp), name)
    d = x.dtype
    if d.itemsize <= 2:  # float16 / bfloat16: scipy has no loops for them
        return f(*args, x.astype(_dt.float32.np)).astype(d)
    r = f(*args, x)
    return r if r.dtype == d else r.astype(d)


def _up(x):
    """Half types compute in float32 and round once at the end, like torch's opmath."""
    return x.astype(_dt.float32.np) if x.dtype.itemsize == 2 else x


def _down(r, d):
    return r if r.dtype == d else r.astype(d)


def _dev(xp) -> str:
    return "cpu" if xp is np else "cuda"


def _not_impl(kernel, a, xp=np, suffix=True):
    name = f"{kernel}_{_dev(xp)}" if suffix else kernel
    return NotImplementedError(
        f"\"{name}\" not implemented for '{scalar_name(_dt._FROM_NP[a.dtype])}'"
    )


def _cj(t):
    """conj(t) for complex tensors, t itself otherwise (torch's gradient convention)."""
    return conj_physical(t) if t._data.dtype.kind == "c" else t


def _eps_of(t: Tensor) -> float:
    """The machine epsilon of t's floating dtype (bfloat16 included)."""
    return float(_dt.finfo(t.dtype).eps)


def _no_half_backward(kernel: str, input: Tensor) -> None:
    """torch's refusal of a derivative it has no float16/bfloat16 kernel for (the forward has)."""
    a = input._data
    if a.dtype.itemsize == 2:
        raise _not_impl(kernel, a, suffix=False)


def _zero_grad(grad):
    return zeros_like(grad)


def _no_bool_or_complex(name, input, xp):
    k = input.dtype.kind
    if k == "b":
        raise _not_impl(f"{name}_vml", input, xp)
    if k == "c":
        raise NotImplementedError(f"{name} is not supported for complex inputs")


@op(names=keep, method=False)
def _where_ok(xp, input, ref, *, test="nonzero", lo=0.0, hi=1.0, fill=0.0):
    """input where ``test`` holds for ref, else fill. Masks derivatives (sinc at 0, relu, ...)."""
    fill = input.dtype.type(fill)
    if test == "nonzero":
        return select(xp, ref != 0, input, fill)
    if test == "pos":  # written as "not <= 0" so NaN passes the gradient, like torch's relu
        return select(xp, ref <= 0, fill, input)
    if test == "finite":
        return select(xp, xp.isfinite(ref), input, fill)
    if test == "big":  # |ref| > lo: fill where a formula's x -> 0 limit is all that is left
        return select(xp, xp.abs(ref) > lo, input, fill)
    return select(xp, (ref >= lo) & (ref <= hi), input, fill)  # "inside"


@_where_ok.vjp
def _(grad, ref, test, lo, hi):
    return _where_ok(grad, ref, test=test, lo=lo, hi=hi), None


@op(names=keep, method=False)
def _tied(xp, input, ref, *, node="TiedBackward0"):
    """``input`` unchanged, recorded as a function of ``ref`` whose derivative is zero.

    A piecewise-linear op's derivative (relu, threshold, leaky_relu, hardtanh) is constant in the
    op's input, yet torch computes it with a backward op of that input (threshold_backward, ...)
    whose own derivative there is a zero tensor: under ``create_graph`` the first derivative stays
    connected to the input, so a second derivative there is zeros (``x.grad`` after a gradient
    penalty, ``autograd.grad`` of a ReLU network's input gradient) rather than None or "appears
    to not have been used in the graph". Those derivatives pass through this op only while a
    graph is recorded; ``node`` is the name torch gives that backward op's node."""
    return input.copy()


@_tied.vjp
def _(grad, ref, node):
    return grad, zeros_like(ref)


# the name of torch's node for the backward op this one stands for (ThresholdBackwardBackward0...)
_tied.op.name_rule = lambda n: n.saved_arg("node")


def _tie(g: Tensor, ref: Tensor, node: str) -> Tensor:
    """``g`` tied to ``ref`` by :func:`_tied` while a graph is recorded, ``g`` itself otherwise
    (the first-order backward pays one flag test)."""
    return _tied(g, ref, node=node) if _state.enabled else g


# ------------------------------------------------------------------------------- abs / sign
@op(names=keep, inplace="abs_")
def abs(xp, input):
    """Computes the absolute value of each element (complex: the modulus, a real tensor)."""
    if input.dtype.kind == "b":
        raise _not_impl("abs", input, xp)
    return xp.abs(input)


@abs.vjp
def _(grad, input):
    return grad * (sgn(input) if input._data.dtype.kind == "c" else sign(input))


@op(names=keep, inplace="sign_")
def sign(xp, input):
    """The sign of each element: -1, 0 or 1 (0 for NaN, like torch)."""
    k = input.dtype.kind
    if k == "b":
        return input.copy()
    if k == "c":
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex "
            "numbers. Please use torch.sgn instead."
        )
    r = xp.sign(input)
    if k != "i" and k != "u":
        r[xp.isnan(r)] = 0  # torch's sign(nan) is 0
        if k == "V":  # ml_dtypes' bfloat16 sign keeps -0's sign (numpy's float sign gives +0)
            r += r.dtype.type(0)
    return r


@sign.vjp
def _(grad):
    return _zero_grad(grad)


@op(names=keep, inplace="sgn_")
def sgn(xp, input):
    """sign for real tensors; z / |z| (0 at 0) for complex ones."""
    if input.dtype.kind != "c":
        return sign.op.kernel(xp, input)
    a = xp.abs(input)
    # a == 0 divides 0 by 0; the where keeps 0 there
    return xp.where(a == 0, input.dtype.type(0), input / a)


@sgn.vjp
def _(grad, input, result):
    if input._data.dtype.kind != "c":
        return _zero_grad(grad)
    d = (grad - real(grad * result.conj()) * result) / abs(input)
    return _where_ok(d, input)


@op(names=keep)
def signbit(xp, input):
    """True where the sign bit is set (negative numbers and -0.0)."""
    k = input.dtype.kind
    if k == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if k == "b" or k == "u":
        return xp.zeros(input.shape, bool)
    return xp.signbit(input)


def _signbit_out(out, res, ins):
    raise RuntimeError("signbit does not support non-boolean outputs.")


signbit.op.out_dtype = _signbit_out


def positive(input: Tensor) -> Tensor:
    """Returns ``input`` itself (``+input``); bool tensors are refused like torch."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# --------------------------------------------------------------------------------- rounding
@op(names=keep, inplace="ceil_")
def ceil(xp, input):
    """The smallest integer >= each element (integer tensors are returned unchanged)."""
    k = input.dtype.kind
    if k == "i" or k == "u":
        return input.copy()
    _no_bool_or_complex("ceil", input, xp)
    return xp.ceil(input)


@ceil.vjp
def _(grad):
    return _zero_grad(grad)


@op(names=keep, inplace="floor_")
def floor(xp, input):
    """The largest integer <= each element (integer tensors are returned unchanged)."""
    k = input.dtype.kind
    if k == "i" or k == "u":
        return input.copy()
    _no_bool_or_complex("floor", input, xp)
    return xp.floor(input)


@floor.vjp
def _(grad):
    return _zero_grad(grad)


@op(names=keep, inplace="trunc_")
def trunc(xp, input):
    """Rounds each element toward zero."""
    k = input.dtype.kind
    if k == "i" or k == "u":
        return input.copy()
    _no_bool_or_complex("trunc", input, xp)
    return xp.trunc(input)


@trunc.vjp
def _(grad):
    return _zero_grad(grad)


def _decimals_arg(v) -> int:
    """round's ``decimals`` given as other than an int: a numpy integer or a 0-d integer tensor
    gives its value; any other type is torch's parser error (the function lists its overloads,
    the methods name the argument)."""
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, Tensor) and v.dim() == 0 and v._data.dtype.kind in "iu":
        return int(v.item())
    from ..arg_errors import tensor_method, type_name

    method = tensor_method("round")
    if method is not None:
        raise TypeError(f"{method}(): argument 'decimals' must be int, not {type_name(v)}")
    raise TypeError(
        "round() received an invalid combination of arguments - got (Tensor, "
        f"decimals={type_name(v)}), but expected one of:\n * (Tensor input, *, Tensor out = "
        "None)\n * (Tensor input, *, int decimals, Tensor out = None)\n"
    )


@op(names=keep, inplace="round_")
def round(xp, input, *, decimals=0):
    """Rounds half to even; ``decimals`` rounds to that many decimal places (negative: tens...)."""
    if type(decimals) is not int:
        decimals = _decimals_arg(decimals)
    elif not -(2**63) <= decimals < 2**63:
        raise ValueError("Overflow when unpacking long long")  # (torch's parser)
    k = input.dtype.kind
    if decimals == 0:
        if k == "i" or k == "u":
            return input.copy()
        if k == "b" or k == "c":
            raise _not_impl("round_vml", input, xp)
        return xp.rint(input)
    if k not in "fV":
        raise _not_impl("round", input, xp)
    # torch scales by 10**|decimals| in the tensor's own precision
    x = _up(input)
    # past 10**308 the scale is inf, as in torch (whose results are then NaN): Python's float
    # power raises OverflowError there
    e = decimals if decimals > 0 else -decimals  # (abs is this module's op)
    m = x.dtype.type(10.0**e if e <= 308 else math.inf)
    if decimals > 0:
        return _down(xp.rint(x * m) / m, input.dtype)
    return _down(xp.rint(x / m) * m, input.dtype)


@round.vjp
def _(grad, decimals):
    return _zero_grad(grad)


# torch's round.decimals overload is its own node (and saves ``decimals``)
round.op.name_rule = lambda node: (
    "RoundBackward1" if node.saved_arg("decimals") else "RoundBackward0"
)


@op(names=keep, inplace="frac_")
def frac(xp, input):
    """The fractional part of each element: ``input - trunc(input)`` (sign kept)."""
    if input.dtype.kind not in "fV":
        raise _not_impl("frac", input, xp)
    return input - xp.trunc(input)


@frac.vjp
def _(grad):
    return grad


# ------------------------------------------------------------------------- trigonometric
@op(names=keep, floating=True, inplace="sin_")
def sin(xp, input):
    """Sine of each element (radians)."""
    return xp.sin(input)


@sin.vjp
def _(grad, input):
    return grad * _cj(cos(input))


@op(names=keep, floating=True, inplace="cos_")
def cos(xp, input):
    """Cosine of each element (radians)."""
    return xp.cos(input)


@cos.vjp
def _(grad, input):
    return grad * -_cj(sin(input))


@op(names=keep, floating=True, inplace="tan_")
def tan(xp, input):
    """Tangent of each element (radians)."""
    return xp.tan(input)


@tan.vjp
def _(grad, result):
    return grad * _cj(result * result + 1)


@op(names=keep, floating=True, inplace="asin_")
def asin(xp, input):
    """Arcsine of each element."""
    return xp.arcsin(input)


@asin.vjp
def _(grad, input):
    return grad * _cj(rsqrt(1 - input * input))


@op(names=keep, floating=True, inplace="acos_")
def acos(xp, input):
    """Arccosine of each element."""
    return xp.arccos(input)


@acos.vjp
def _(grad, input):
    return grad * -_cj(rsqrt(1 - input * input))


@op(names=keep, floating=True, inplace="atan_")
def atan(xp, input):
    """Arctangent of each element."""
    return xp.arctan(input)


@atan.vjp
def _(grad, input):
    return grad / _cj(input * input + 1)


@op(names=keep, floating=True, inplace="sinh_")
def sinh(xp, input):
    """Hyperbolic sine of each element."""
    return xp.sinh(input)


@sinh.vjp
def _(grad, input):
    return grad * _cj(cosh(input))


@op(names=keep, floating=True, inplace="cosh_")
def cosh(xp, input):
    """Hyperbolic cosine of each element."""
    return xp.cosh(input)


@cosh.vjp
def _(grad, input):
    return grad * _cj(sinh(input))


@op(names=keep, floating=True, inplace="tanh_")
def tanh(xp, input):
    """Hyperbolic tangent of each element."""
    return xp.tanh(input)


def _plain_pair(grad, result):
    """(g, y) arrays when a derivative can run on them directly: no graph to record, a float32
    or float64 numpy output of 1+ dims and a gradient of its dtype (else None: the ember ops)."""
    if _state.enabled:
        return None
    y, g = result._data, grad._data
    if type(y) is np.ndarray and y.ndim and g.dtype is y.dtype and y.dtype.char in "fd":
        return g, y
    return None


@tanh.vjp
def _(grad, result):
    gy = _plain_pair(grad, result)
    if gy is not None:  # the formula below on the arrays, without three op calls
        g, y = gy
        t = y * y
        np.subtract(1, t, out=t)
        return _wrap(np.multiply(g, t, out=t))
    y = result._data
    if not _state.enabled and y.dtype.itemsize == 2 and grad._data.dtype is y.dtype:
        # half types: torch's tanh_backward computes in float32 and rounds once
        yf = _up(y)
        return _wrap(((1 - yf * yf) * _up(grad._data)).astype(y.dtype))
    return grad * _cj(1 - result * result)


@op(names=keep, floating=True, inplace="asinh_")
def asinh(xp, input):
    """Inverse hyperbolic sine of each element."""
    return xp.arcsinh(input)


@asinh.vjp
def _(grad, input):
    return grad * _cj(rsqrt(input * input + 1))


@op(names=keep, floating=True, inplace="acosh_")
def acosh(xp, input):
    """Inverse hyperbolic cosine of each element (domain [1, inf))."""
    return xp.arccosh(input)


@acosh.vjp
def _(grad, input):
    if input._data.dtype.kind == "c":  # sqrt(z-1)sqrt(z+1) has the right branch cuts
        return grad * _cj(1 / (sqrt(input - 1) * sqrt(input + 1)))
    return grad * rsqrt(input * input - 1)


@op(names=keep, floating=True, inplace="atanh_")
def atanh(xp, input):
    """Inverse hyperbolic tangent of each element (domain (-1, 1))."""
    return xp.arctanh(input)


@atanh.vjp
def _(grad, input):
    return grad / _cj(1 - input * input)


@op(names=keep, floating=True, inplace="deg2rad_")
def deg2rad(xp, input):
    """Converts angles from degrees to radians."""
    if input.dtype.kind == "c":
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    x = _up(input)
    return _down(x * x.dtype.type(_PI / 180.0), input.dtype)


@deg2rad.vjp
def _(grad):
    return grad * (_PI / 180.0)


@op(names=keep, floating=True, inplace="rad2deg_")
def rad2deg(xp, input):
    """Converts angles from radians to degrees."""
    if input.dtype.kind == "c":
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    x = _up(input)
    return _down(x * x.dtype.type(180.0 / _PI), input.dtype)


@rad2deg.vjp
def _(grad):
    return grad * (180.0 / _PI)


@op(names=keep, floating=True, inplace="sinc_")
def sinc(xp, input):
    """The normalized sinc: sin(pi x) / (pi x), 1 at 0."""
    x = _up(input)
    px = x * x.dtype.type(_PI)
    # at 0 the quotient is 0/0: the where keeps the limit 1 there
    return _down(xp.where(x == 0, x.dtype.type(1), xp.sin(px) / px), input.dtype)


@sinc.vjp
def _(grad, input):
    px = input * _PI
    den = px * input
    d = (cos(px) * px - sin(px)) / den
    # masked where the denominator underflows to 0 (x = 0 and tiny x, whose derivative
    # -pi^2 x / 3 is 0 to working precision), not only at x = 0: 0/0 is NaN there
    return _where_ok(grad * _cj(d), den)


# ------------------------------------------------------------------------ exponential / log
@op(names=keep, floating=True, inplace="exp_")
def exp(xp, input):
    """e to the power of each element."""
    return xp.exp(input)


@exp.vjp
def _(grad, result):
    return grad * _cj(result)


@op(names=keep, floating=True, inplace="exp2_")
def exp2(xp, input):
    """2 to the power of each element."""
    return xp.exp2(input)


@exp2.vjp
def _(grad, result):
    return grad * _cj(result * _LN2)


@op(names=keep, floating=True, inplace="expm1_")
def expm1(xp, input):
    """exp(x) - 1, accurate for small x."""
    return xp.expm1(input)


@expm1.vjp
def _(grad, result):
    return grad * _cj(result + 1)


@op(names=keep, floating=True, inplace="log_")
def log(xp, input):
    """Natural logarithm of each element."""
    return xp.log(input)


@log.vjp
def _(grad, input):
    return grad / _cj(input)


@op(names=keep, floating=True, inplace="log2_")
def log2(xp, input):
    """Base-2 logarithm of each element."""
    return xp.log2(input)


@log2.vjp
def _(grad, input):
    return grad / _cj(input * _LN2)


@op(names=keep, floating=True, inplace="log10_")
def log10(xp, input):
    """Base-10 logarithm of each element."""
    return xp.log10(input)


@log10.vjp
def _(grad, input):
    return grad / _cj(input * _LN10)


@op(names=keep, floating=True, inplace="log1p_")
def log1p(xp, input):
    """log(1 + x), accurate for small x."""
    if input.dtype.kind == "c" and input.size:
        # numpy's complex log1p is log(1 + z): it loses the real part of a small z, which is
        # log|1 + z| = log1p(2x + x^2 + y^2) / 2 there (its imaginary part, the angle, is fine)
        r = xp.log1p(input)
        x, y = input.real, input.imag
        with np.errstate(all="ignore"):
            small = xp.log1p(x * (2 + x) + y * y) / 2 + 1j * r.imag
        return xp.where(xp.abs(input) < 0.5, small, r).astype(input.dtype, copy=False)
    return xp.log1p(input)


@log1p.vjp
def _(grad, input):
    return grad / _cj(input + 1)


@op(names=keep, floating=True, inplace="logit_")
def logit(xp, input, eps=None):
    """log(p / (1 - p)); with ``eps`` the input is first clamped to [eps, 1 - eps]."""
    if input.dtype.kind == "c":
        raise _not_impl("logit", input, xp)
    x = _up(input)
    if eps is not None:
        # torch rounds the bounds to the input's dtype (float16's 1 - 1e-6 is 1: logit is inf)
        lo, hi = (x.dtype.type(input.dtype.type(v)) for v in (eps, 1 - eps))
        x = xp.where(x < lo, lo, xp.where(x > hi, hi, x))
    return _down(xp.log(x / (1 - x)), input.dtype)


@logit.vjp
def _(grad, input, eps):
    d = grad / (input * (1 - input))
    if eps is None or eps < 0:  # outside [0, 1] the derivative is NaN, like torch
        return _where_ok(d, input, test="inside", lo=0.0, hi=1.0, fill=math.nan)
    return _where_ok(d, input, test="inside", lo=eps, hi=1 - eps)


@op(names=keep, floating=True, inplace="sigmoid_")
def sigmoid(xp, input):
    """1 / (1 + exp(-x))."""
    d = input.dtype
    # half types compute in float32 (like torch): exp(-x) would overflow float16 at x < -11
    r = xp.negative(_up(input))
    xp.exp(r, out=r)  # exp(-x) = inf for very negative x gives 1/inf = 0, the right limit
    r += 1
    xp.reciprocal(r, out=r)
    return r if r.dtype == d else r.astype(d)


@sigmoid.vjp
def _(grad, result):
    gy = _plain_pair(grad, result)
    if gy is not None:  # (see tanh's)
        g, y = gy
        t = np.subtract(1, y)
        np.multiply(y, t, out=t)
        return _wrap(np.multiply(g, t, out=t))
    y = result._data
    if not _state.enabled and y.dtype.itemsize == 2 and grad._data.dtype is y.dtype:
        # torch's sigmoid_backward: (g (1 - y)) y, in float32 rounded once for bfloat16, in
        # float16 steps for float16
        if y.dtype.kind == "f":
            return _wrap((grad._data * (1 - y)) * y)
        yf = _up(y)
        return _wrap((_up(grad._data) * (1 - yf) * yf).astype(y.dtype))
    return grad * _cj(result * (1 - result))


@op(names=keep, floating=True, inplace="reciprocal_")
def reciprocal(xp, input):
    """1 / x for each element."""
    if input.dtype.kind == "c":  # numpy's complex reciprocal gives nan at 0; 1 / 0j is inf+nanj
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.true_divide(input.dtype.type(1), input)
    return xp.reciprocal(input)


@reciprocal.vjp
def _(grad, result):
    return grad * -_cj(result * result)


@op(names=keep, floating=True, inplace="sqrt_")
def sqrt(xp, input):
    """Square root of each element."""
    return xp.sqrt(input)


@sqrt.vjp
def _(grad, result):
    return grad / (2 * _cj(result))


@op(names=keep, floating=True, inplace="rsqrt_")
def rsqrt(xp, input):
    """1 / sqrt(x) for each element."""
    r = xp.sqrt(_up(input))
    if r.dtype.kind == "c":  # 1 / 0j is inf+nanj (numpy's complex reciprocal gives nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.true_divide(r.dtype.type(1), r)
    return _down(xp.reciprocal(r, out=r), input.dtype)


@rsqrt.vjp
def _(grad, result):
    return grad * (-0.5 * _cj(result * result * result))


@op(names=keep, inplace="square_")
def square(xp, input):
    """x * x for each element (bool becomes int64, like torch)."""
    if input.dtype.kind == "b":
        input = input.astype(_dt.int64.np)
    return xp.square(input)


@square.vjp
def _(grad, input):
    return grad * (2 * _cj(input))


# ----------------------------------------------------------------------- special functions
@op(names=keep, floating=True, inplace="erf_")
def erf(xp, input):
    """The error function."""
    if input.dtype.kind == "c":
        raise _not_impl("erf_vml", input, xp)
    if xp is np and input.size >= _ERF_MIN and input.dtype.itemsize <= 4:
        d = input.dtype
        r = _erf_f32(input if d == np.float32 else input.astype(np.float32))
        return r if d == np.float32 else r.astype(d)
    return _sp(xp, "erf", input)


# erf in float32 vector passes (scipy's erf is a scalar double-precision loop: ~11 ns per
# element, 11x torch). Two pieces, our least-squares fits (against scipy in float64):
#   |x| <= B: erf(x) = x + x * S(x^2)           (S: erf(x)/x - 1, degree 5)
#   |x| >= B: erf(|x|) = 1 - exp(L(|x|))        (L: log(erfc(x)) on [B, 3.92], degree 8; above
#                                                3.92, erf rounds to 1 in float32)
# Evaluated in float32 they are within 1.5 ulp of the exact value (mean 0.25 ulp, like a
# correctly rounded result). Both run on the whole array with clamped arguments and are merged
# without a mask: erf = S-part + sign(x) * (L-part - erf(B)). B is a float32 at which both
# pieces give the same float32, so for |x| <= B the L-part term is exactly 0, and for |x| > B the
# S-part is +-erf(B) and the sum is exactly the L-part (Sterbenz: the difference is exact).
_ERF_MIN = 4096  # below this scipy's loop is faster than ~40 numpy calls
_ERF_BLOCK = 1 << 16  # elements per block: the passes stay in cache
_ERF_B = np.float32(0.8749881)
_ERF_HI = np.float32(3.92)
_ERF_S = tuple(
    np.float32(c)
    for c in (0.12837915, -0.37612557, 0.112825245, -0.026793964, 0.005035888, -0.00062225084)
)
_ERF_L = tuple(
    np.float32(c)
    for c in (
        0.0001417012, -1.129334, -0.63377327, -0.1077167, 0.024663135, -0.0039392193,
        0.00036232173, -8.530703e-06, -9.375119e-07,
    )
)  # fmt: skip


def _horner(u, coefs):
    p = u * coefs[-1]
    p += coefs[-2]
    for c in coefs[-3::-1]:
        p *= u
        p += c
    return p


def _erf_small(x):
    xs = np.clip(x, -_ERF_B, _ERF_B)
    p = _horner(xs * xs, _ERF_S)
    p *= xs
    p += xs
    return p


def _erf_large(x):
    u = np.abs(x)
    np.clip(u, _ERF_B, _ERF_HI, out=u)
    q = _horner(u, _ERF_L)
    np.exp(q, out=q)
    np.subtract(np.float32(1), q, out=q)
    return q


_ERF_AT_B = _erf_large(np.full(64, _ERF_B, np.float32))[0]  # == _erf_small(B) (checked in tests)


def _erf_f32_block(x):
    d = _erf_large(x)
    d -= _ERF_AT_B  # 0 where |x| <= B; >= 0
    db = d.view(np.uint32)
    db |= x.view(np.uint32) & np.uint32(0x80000000)  # sign(x) * d, also for d == 0
    d += _erf_small(x)
    return d


def _erf_f32(x):
    return blocked(_erf_f32_block, x, _ERF_BLOCK, np.float32)


@erf.vjp
def _(grad, input):
    return grad * (exp(-(input * input)) * (2 / math.sqrt(_PI)))


@op(names=keep, floating=True, inplace="erfc_")
def erfc(xp, input):
    """The complementary error function, 1 - erf(x)."""
    if input.dtype.kind == "c":
        raise _not_impl("erfc_vml", input, xp)
    r = _sp(xp, "erfc", input)
    if input.dtype == np.float64:
        # scipy flushes erfc to 0 once x^2 passes log(max) (x > 26.64), where float64 still has
        # subnormals (to x ~ 27.3): those elements alone, as exp(log(erfcx(x)) - x^2). The cost
        # on ordinary inputs is one comparison pass (float64 only)
        far = input > 26.6
        if far.any():
            xf = input[far]
            r = xp.asarray(r)  # (a 0-d input's ufunc result is a scalar)
            r[far] = xp.exp(xp.log(special(xp).erfcx(xf)) - xf * xf)
    return r


@erfc.vjp
def _(grad, input):
    return grad * (exp(-(input * input)) * (-2 / math.sqrt(_PI)))


@op(names=keep, floating=True, inplace="erfinv_")
def erfinv(xp, input):
    """The inverse error function (domain (-1, 1))."""
    if input.dtype.kind == "c":
        raise _not_impl("erfinv_vml", input, xp)
    # scipy's float32 loop is off by up to ~2.6 ulp (the derivative exp(erfinv(x)^2) multiplies
    # that near +-1); its float64 loop, rounded once, is as fast and within 0.5 ulp
    x = input.astype(np.float64) if input.dtype == np.float32 else input
    r = _sp(xp, "erfinv", x)
    # scipy answers +0 at -0; erfinv is odd, so the input's sign is the result's (one pass)
    return xp.copysign(r, x).astype(input.dtype, copy=False)


@erfinv.vjp
def _(grad, input):
    # torch keeps the input, not the result (an in-place change of the result is allowed)
    r = erfinv(input)
    return grad * (exp(r * r) * (math.sqrt(_PI) / 2))


@op(names=keep, floating=True, inplace="i0_")
def i0(xp, input):
    """The modified Bessel function of the first kind, order 0."""
    if input.dtype.kind == "c":
        raise _not_impl("i0_vml", input, xp)
    return _sp(xp, "i0", input)


@i0.vjp
def _(grad, input):
    return grad * _i1(input)


@op(names=keep, method=False)
def _i1(xp, input):
    """The modified Bessel function of the first kind, order 1 (i0's derivative)."""
    return _sp(xp, "i1", input)


@_i1.vjp
def _(grad, input):
    _no_half_backward("i1_backward", input)  # (i0's second derivative)
    # i1'(x) = i0(x) - i1(x) / x, whose limit 1/2 holds to working precision for |x| <= eps
    # (i1(x) / x loses its digits for subnormal x)
    return grad * _where_ok(i0(input) - _i1(input) / input, input, test="big",
                            lo=_eps_of(input), fill=0.5)  # fmt: skip


@op(names=keep, floating=True, inplace="lgamma_")
def lgamma(xp, input):
    """log |gamma(x)|."""
    if input.dtype.kind == "c":
        raise _not_impl("lgamma_vml", input, xp)
    r = _sp(xp, "gammaln", input)
    if input.dtype == np.float64:
        # scipy's float64 gammaln keeps its absolute, not relative, error at lgamma's zeros 1
        # and 2 (1e6 ulp at 1 - 1e-6): on (0.5, 2.5), the Taylor series about 1 or 2 instead.
        # The cost on other inputs: two comparisons and an any (~2% of gammaln; float64 only)
        near = (input > 0.5) & (input < 2.5)
        if near.any():
            r = xp.asarray(r)  # (a 0-d input's ufunc result is a scalar)
            r[near] = _lgamma_near_1_2(xp, input[near])
    # scipy's gammaln(-inf) is -inf; lgamma(-inf) is +inf (C99, torch). No finite x gives -inf.
    r = xp.where(r == -xp.inf, r.dtype.type(xp.inf), r)
    # scipy overflows for subnormal x, where lgamma(x) = -log|x| (to within x)
    tiny = (r == xp.inf) & (input != 0) & (xp.abs(input) < 1)
    if tiny.any():
        with np.errstate(all="ignore"):
            r = xp.where(tiny, -xp.log(xp.abs(input)).astype(r.dtype, copy=False), r)
    return r


@lgamma.vjp
def _(grad, input):
    return grad * digamma(input)


_LGAMMA_TAYLOR: list = []  # [coefficients about 1, about 2], lowest power first (_horner's)


def _lgamma_taylor():
    if not _LGAMMA_TAYLOR:
        from scipy.special import zeta

        euler = 0.5772156649015329
        # log gamma(1 + z) = -euler z + sum_k>=2 (-1)^k zeta(k) z^k / k; adding log1p(z) gives
        # log gamma(2 + z) = (1 - euler) z + sum_k>=2 (-1)^k (zeta(k) - 1) z^k / k. Terms to
        # k = 60 and 34 stay below 1e-19 at |z| = 1/2
        c1 = [0.0, -euler] + [(-1) ** k * float(zeta(k)) / k for k in range(2, 61)]
        c2 = [0.0, 1 - euler] + [(-1) ** k * float(zeta(k) - 1) / k for k in range(2, 35)]
        _LGAMMA_TAYLOR.extend((c1, c2))
    return _LGAMMA_TAYLOR


def _lgamma_near_1_2(xp, x):
    """log gamma(x) for float64 x in (0.5, 2.5), to full relative precision."""
    c1, c2 = _lgamma_taylor()
    two = x > 1.5
    z = x - xp.where(two, 2.0, 1.0)  # exact (Sterbenz)
    out = xp.empty_like(x)
    for mask, coefs in ((~two, c1), (two, c2)):
        if mask.any():
            out[mask] = _horner(z[mask], coefs)
    return out


# the asymptotic series of digamma in z = 1/x^2 (Bernoulli numbers B_2k / 2k, highest power
# first; Cephes' psi) and digamma(10)
_PSI_SERIES = (
    8.33333333333333333333e-2,
    -2.10927960927960927961e-2,
    7.57575757575757575758e-3,
    -4.16666666666666666667e-3,
    3.96825396825396825397e-3,
    -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)
_PSI_10 = 2.25175258906672110764


def _psi(xp, x):
    """digamma evaluated as torch's cpu kernel does, in x's own dtype (half types in float32):
    for x > 0 the recurrence up to x >= 10, then the asymptotic series; x < 0 by reflection from
    1 - x. The roundings are then torch's (scipy's psi differs in the last bit for ~40% of float32
    inputs, which entropies of Gamma / Beta / Dirichlet at large concentrations amplify)."""
    if xp is not np or x.dtype.kind != "f" and x.dtype.itemsize != 2:
        return _sp(xp, "psi", x)
    d = x.dtype
    w = _up(x)
    t = w.dtype.type
    neg = w < 0
    # reflection: psi(x) = psi(1 - x) - pi / tan(pi r), r the fractional part of x (more
    # accurate than pi x)
    y = np.where(neg, t(1) - w, w)
    pos = y > 0
    y = np.where(pos, y, t(10)).copy(order="C")  # ravel() must be a view of it
    acc = np.zeros(y.shape, t)
    idx = np.flatnonzero(y < 10)
    if idx.size:  # the recurrence, on the elements below 10 only
        ys, accs = y.ravel()[idx], acc.ravel()[idx]
        for _ in range(11):  # any 0 < x < 10 reaches 10 within ceil(10 - x) steps
            below = ys < 10
            if not below.any():
                break
            accs[below] -= t(1) / ys[below]
            ys[below] += t(1)
        y.ravel()[idx] = ys
        acc.ravel()[idx] = accs
    z = t(1) / (y * y)
    poly = np.full_like(y, t(_PSI_SERIES[0]))
    for c in _PSI_SERIES[1:]:
        poly = poly * z + t(c)
    tail = np.where(y < t(1e17), z * poly, t(0))
    # numpy's float32 log is not always correctly rounded, the C library's logf is
    log = np.log(y) if t is np.float64 else np.log(y.astype(np.float64)).astype(y.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(y == 10, acc + t(_PSI_10), acc + log - t(0.5) / y - tail)
        if neg.any():
            frac = (w - np.trunc(w)).astype(np.float64)
            term = (np.pi / np.tan(np.pi * frac)).astype(t)  # in double, for float32 too
            r = np.where(neg, np.where(frac == 0, t(np.nan), r - term), r)
    if not (pos | neg).all():  # 0 and nan: scipy's (+-inf, nan)
        r = np.where(pos | neg, r, special(xp).psi(w).astype(w.dtype))
    return _down(r, d)


@op(names=keep, floating=True, inplace="digamma_")
def digamma(xp, input):
    """The logarithmic derivative of gamma, d/dx log gamma(x)."""
    if input.dtype.kind == "c":
        raise _not_impl("digamma", input, xp, suffix=False)
    return _psi(xp, input)


@digamma.vjp
def _(grad, input):
    return grad * _polygamma(input, 1)


@op(names=keep, floating=True, method=False, inplace="polygamma_")
def _polygamma(xp, input, n=0):
    """The n-th derivative of digamma (kernel order: input first, as the Tensor method)."""
    if type(n) is not int:
        raise TypeError(
            f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}"
        )
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if input.dtype.kind == "c":
        raise _not_impl(
            "digamma" if n == 0 else "trigamma" if n == 1 else "polygamma", input, xp, suffix=False
        )
    if n == 0:
        return _psi(xp, input)
    # cupyx's polygamma tests `n == 0` as an array: a Python int breaks its cupy.where
    r = _sp(xp, "polygamma", input, n if xp is np else xp.asarray(n))
    if input.dtype.kind in "fV":  # V: bfloat16
        # torch's kernels at the infinities: trigamma(-inf) and polygamma(n >= 2, +inf) are nan
        bad = input == (-np.inf if n == 1 else np.inf)
        r = xp.where(bad, r.dtype.type(np.nan), r)
    return r


@_polygamma.vjp
def _(grad, input, n):
    return grad * _polygamma(input, n + 1)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The n-th derivative of the digamma function, evaluated at ``input``."""
    if isinstance(n, Tensor) and n.ndim == 0 and n._data.dtype.kind in "iu":
        n = int(n.item())  # a 0-d integer tensor, as torch's argument parser takes it
    if out is None:
        return _polygamma(input, n)
    return _polygamma(input, n, out=out)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return _polygamma(self, n)


@op(names=keep, inplace="mvlgamma_")
def mvlgamma(xp, input, p):
    """The multivariate log-gamma function of dimension ``p``."""
    if getattr(p, "ndim", None) == 0 and p.dtype.kind in "iu":
        p = int(p)  # a 0-d integer tensor, as torch takes it
    if type(p) is not int:
        got = "Tensor" if hasattr(p, "ndim") else type(p).__name__
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {got}")
    k = input.dtype.kind
    if k == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if k == "c":
        raise _not_impl("arange", input, xp)
    if k in "iu":  # promoted here, not by the registry, so bool can be refused first
        input = input.astype(_dt.get_default_dtype().np)
    x = _up(input)
    lg = lgamma.op.kernel  # lgamma's fixes of scipy's gammaln (+inf at -inf, subnormals)
    r = lg(xp, x)
    for j in range(1, p):
        r += lg(xp, x - x.dtype.type(j / 2))
    r = _down(r + x.dtype.type(p * (p - 1) / 4 * _LOG_PI), input.dtype)
    # torch sums over a new last dim: its result is contiguous whatever the input's layout
    return _layout.row_major(xp, r) if r.ndim > 1 else r


def _mvlgamma_out(out, res, ins=()):
    """torch's mvlgamma(out=) and mvlgamma_ check the cast of the result, in words naming the
    input's dtype and the result's (not the out tensor's)."""
    if not _dt.can_cast(res.dtype, out.dtype):
        raise RuntimeError(
            f"mvlgamma: result type {scalar_name(ins[0].dtype)} can't be cast to the desired "
            f"output type {scalar_name(res.dtype)}"
        )


mvlgamma.op.out_dtype = _mvlgamma_out
mvlgamma.op.inplace_is_out = mvlgamma.op.composite_out = True


@mvlgamma.vjp
def _(grad, input, p):
    d = digamma(input)
    for j in range(1, p):
        d = d + digamma(input - j / 2)
    return grad * d


# ---------------------------------------------------------------------------- activations
_NOT_GIVEN = object()  # threshold's defaults: a missing argument (None is torch's type error)


def _missing_args(fn: str, names: tuple) -> TypeError:
    """torch's binding text for required arguments not given: all from the first missing one
    on (a later one given by keyword too), its plural the other way round."""
    n = len(names)
    return TypeError(
        f"{fn}() missing {n} required positional argument{'s' if n == 1 else ''}: "
        + ", ".join(f'"{m}"' for m in names)
    )


@op(names=keep, inplace="threshold_")
def threshold(xp, input, threshold=_NOT_GIVEN, value=_NOT_GIVEN):
    """``value`` where input <= ``threshold``, else input (NaN passes, like torch)."""
    npd = input.dtype
    kind = npd.kind
    if kind == "b" or kind == "c":
        raise _not_impl("threshold", input, xp)
    try:
        threshold = number_arg(threshold, "threshold", "threshold", 2)
    except TypeError:
        if threshold is _NOT_GIVEN:
            raise _missing_args("threshold", ("threshold", "value")) from None
        raise
    try:
        value = number_arg(value, "threshold", "value", 3)
    except TypeError:
        if value is _NOT_GIVEN:
            raise _missing_args("threshold", ("value",)) from None
        raise
    try:
        fast = kind == "f" and npd.itemsize > 2 and -_F32_MAX < threshold < _F32_MAX
        fast = fast and -_F32_MAX < value < _F32_MAX
    except TypeError:  # (a complex number)
        fast = False
    if not fast:
        # torch's kernel converts the threshold to the input's compute type (float32 for half
        # types) and the value to its own: its overflow error, an int wrapped into uint8
        opmath = _F32 if npd.itemsize == 2 and kind in "fV" else npd
        threshold = _dt.fill_scalar(threshold, opmath)
        value = _dt.fill_scalar(value, npd)
    return select(xp, input <= threshold, npd.type(value), input)


_F32 = np.dtype(np.float32)
_F32_MAX = float(np.finfo(np.float32).max)


@threshold.vjp
def _(grad, input, threshold):
    g = _where_ok(grad, input.detach() - threshold, test="pos")
    return _tied(g, input, node="ThresholdBackwardBackward0") if _state.enabled else g


# torch's threshold_ kernel has its own derivative entry (its node saves the result)
threshold.op.inplace_backward_name = "ThresholdBackward1"


@op(names=keep, inplace="relu_")
def relu(xp, input):
    """max(x, 0) for each element (integer tensors stay integer)."""
    k = input.dtype.kind
    if k == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if k == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if xp is np and k == "f":
        # numpy's maximum against a scalar runs a scalar loop; against a zeroed array of the same
        # shape its SIMD loop: fill + max is ~2x faster than maximum(input, 0) on this machine
        if input.flags.c_contiguous:  # (np.zeros: calloc, where zeros_like writes its zeros)
            out = np.zeros(input.shape, input.dtype)
        else:
            out = np.zeros_like(input)  # keeps the input's layout (channels_last stays so)
            if not out.flags.c_contiguous:  # but not an expanded input's stride-0 dims fastest
                out = _layout.broadcast_copy(np, input, out)
        # relu(-0.0) is -0.0 in torch: numpy's SIMD maximum gives the second operand on a tie,
        # its float16 loop the first
        if input.dtype.itemsize == 2:
            return np.maximum(input, out, out=out)
        return np.maximum(out, input, out=out)
    return xp.maximum(input, 0)  # a Python 0 keeps the dtype (NEP 50)


@relu.vjp
def _(grad, result):
    g = _where_ok(grad, result, test="pos")
    return _tied(g, result, node="ThresholdBackwardBackward0") if _state.enabled else g


def _float_opt(v, arg: str):
    """nan_to_num's ``float?`` option ``arg`` as a Python number, or torch's parser error (an
    in-place method naming itself)."""
    try:
        v = number_arg(v, "nan_to_num", arg, kind="float")
    except TypeError as e:
        from ..arg_errors import tensor_method

        if tensor_method("nan_to_num") != "nan_to_num_":
            raise
        raise TypeError(str(e).replace("nan_to_num()", "nan_to_num_()", 1)) from None
    return float(v.real) if isinstance(v, np.complexfloating) else v


@op(names=keep, inplace="nan_to_num_")
def nan_to_num(xp, input, nan=0.0, posinf=None, neginf=None):
    """Replaces NaN, +inf and -inf by ``nan``, ``posinf`` and ``neginf`` (default: the dtype's
    largest and lowest finite values)."""
    # torch's parser refuses a non-number replacement first (a str was written into the data)
    nan, posinf, neginf = (
        v if v is None or type(v) is float else _float_opt(v, k)
        for k, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf))
    )
    if nan is None:  # (torch's default, spelled out)
        nan = 0.0
    r = input.copy()
    if input.dtype.kind not in "fcV" or xp.isfinite(input).all():
        return r
    # written out (not xp.nan_to_num): numpy's leaves bfloat16 untouched
    real = r.real.dtype if input.dtype.kind == "c" else r.dtype
    big = _dt.finfo(_dt._FROM_NP[real]).max
    for part in (r.real, r.imag) if input.dtype.kind == "c" else (r,):
        part[xp.isnan(part)] = nan
        part[part == math.inf] = big if posinf is None else posinf
        part[part == -math.inf] = -big if neginf is None else neginf
    return r


@nan_to_num.vjp
def _(grad, input):
    return _where_ok(grad, input, test="finite")


# -------------------------------------------------------------------------------- complex
@op(names=keep, floating=True)
def angle(xp, input):
    """The argument of each element (real tensors: 0 for x >= 0, pi for x < 0, NaN kept)."""
    if input.dtype.kind == "c":
        return xp.angle(input)
    r = (input < 0) * input.dtype.type(_PI)
    nan = xp.isnan(input)
    if nan.any():
        r[nan] = input[nan]
    return r


@angle.vjp
def _(grad, input):
    if input._data.dtype.kind != "c":
        return _zero_grad(grad)
    a = abs(input)
    return _where_ok(grad * input * 1j / (a * a), input)


@op(names=keep, view=True, method=False)
def _real(xp, input):
    """The real part of a complex tensor (a view)."""
    return input.real


@_real.vjp
def _(grad):
    return grad


@op(names=keep, view=True, method=False)
def imag(xp, input):
    """The imaginary part of a complex tensor (a view)."""
    if input.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return input.imag


@imag.vjp
def _(grad):
    return grad * 1j


# torch views a complex tensor as real pairs and selects one: its node is a select
_real.op.backward_name = imag.op.backward_name = "SelectBackward0"


def real(input: Tensor) -> Tensor:
    """The real part of ``input`` (a view); a real tensor is returned as is."""
    if input._data.dtype.kind != "c":
        return input
    return _real(input)


@op(names=keep, inplace="conj_physical_")
def conj_physical(xp, input):
    """The complex conjugate, computed into new memory."""
    if input.dtype.kind != "c":
        return input.copy()
    return xp.conj(input)


@conj_physical.vjp
def _(grad):
    return conj_physical(grad)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (a real tensor is returned as is; complex ones are copied, so
    ``is_conj()`` is always False in ember)."""
    try:
        real = input._data.dtype.kind != "c"
    except AttributeError:
        from ..arg_errors import must_be_tensor

        raise must_be_tensor("conj", ("input",), (input,)) from None
    if real:
        return input
    return _conj(input)


def resolve_conj(input: Tensor) -> Tensor:
    """ember never keeps a lazy conjugate bit: returns ``input``."""
    return input


def _is_conj(self: Tensor) -> bool:
    return False


# ---------------------------------------------------------------- aliases and Tensor methods
absolute = _alias(abs, "absolute")
arccos = _alias(acos, "arccos")
arccosh = _alias(acosh, "arccosh")
arcsin = _alias(asin, "arcsin")
arcsinh = _alias(asinh, "arcsinh")
arctan = _alias(atan, "arctan")
arctanh = _alias(atanh, "arctanh")
fix = _alias(trunc, "fix")
psi = digamma  # torch.special.psi; torch itself has no torch.psi / Tensor.psi

_ALIASES = {
    "absolute": "abs",
    "arccos": "acos",
    "arccosh": "acosh",
    "arcsin": "asin",
    "arcsinh": "asinh",
    "arctan": "atan",
    "arctanh": "atanh",
    "fix": "trunc",
}

# torch.<name>_(input, ...) exists for these: the functional spelling of the in-place method
_TORCH_INPLACE = [
    "abs",
    "acos",
    "arccos",
    "acosh",
    "arccosh",
    "asin",
    "arcsin",
    "asinh",
    "arcsinh",
    "atan",
    "arctan",
    "atanh",
    "arctanh",
    "ceil",
    "floor",
    "round",
    "trunc",
    "fix",
    "frac",
    "cos",
    "cosh",
    "sin",
    "sinh",
    "tan",
    "tanh",
    "deg2rad",
    "rad2deg",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log10",
    "log1p",
    "log2",
    "logit",
    "sigmoid",
    "reciprocal",
    "rsqrt",
    "sqrt",
    "square",
    "sinc",
    "i0",
    "erf",
    "erfc",
    "nan_to_num",
    "relu",
    "conj_physical",
]


def _inplace_function(method: str):
    def fn(input: Tensor, *args, **kwargs) -> Tensor:
        return getattr(input, method)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = method
    fn.__doc__ = f"In-place version of :func:`{method[:-1]}`."
    return fn


def _abs_inplace(self: Tensor) -> Tensor:
    if self._data.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _abs_inplace_registered(self)


def _install():
    for alias, name in _ALIASES.items():
        setattr(Tensor, alias, getattr(Tensor, name))
    Tensor.abs_ = _abs_inplace
    for alias, name in _ALIASES.items():
        setattr(Tensor, alias + "_", getattr(Tensor, name + "_"))
    Tensor.__abs__ = abs
    Tensor.polygamma = _polygamma_method
    Tensor.positive = positive
    Tensor.real = property(real, _set_real)  # z.real = v writes into z (core/tensor.py)
    Tensor.imag = property(imag, _set_imag)
    Tensor.conj = conj
    Tensor.resolve_conj = resolve_conj
    Tensor.is_conj = _is_conj
    g = globals()
    for name in _TORCH_INPLACE:
        g[name + "_"] = _inplace_function(name + "_")
        __all__.append(name + "_")


_abs_inplace_registered = Tensor.abs_
_install()


# --------------------------------------------------------------------- frexp, igamma
@op(names=keep, out_type=return_types.frexp)
def frexp(xp, input):
    """Split into mantissa in [0.5, 1) (same dtype) and int32 exponent: input = m * 2**e."""
    if input.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = xp.frexp(_up(input))
    return m.astype(input.dtype, copy=False), e.astype(_dt.int32.np)


@frexp.vjp
def _(grad, input):
    # d mantissa / d input = 2**-exponent (the exponent is piecewise constant)
    return grad / frexp(input.detach())[1].to(grad.dtype).exp2()


def _frexp_out(out, res, ins):
    """torch wants out=(mantissa, exponent) in exactly the result's dtypes (no casting)."""
    got = _dt.C_NAMES[out.dtype.name]
    if res.dtype == _dt.int32:
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got {got}")
    want = _dt.C_NAMES[res.dtype.name]
    raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {want} but got {got}")


frexp.op.out_dtype = _frexp_out


def _igamma_kernel(xp, name, a, x):
    if a.dtype.kind not in "fV" or x.dtype.kind not in "fV":
        # the promoted dtype is integral or bool: torch has no such kernel (no int -> float)
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{scalar_name(_dt._FROM_NP[a.dtype])}'"
        )
    r = _sp(xp, "gammainc" if name == "igamma" else "gammaincc", x, a)
    nan = xp.isnan(r)
    if nan.any():  # (one pass on every call; the rest only when some result is NaN)
        # where one argument alone decides, torch answers even if the other is NaN (scipy: NaN):
        # x = 0 gives P = 0, x = inf gives P = 1, a = inf gives P = 0 (Q = 1 - P)
        an, xn = xp.isnan(a), xp.isnan(x)
        low = (an & (x == 0)) | (xn & (a == xp.inf))
        high = an & (x == xp.inf)
        p_low, p_high = (0, 1) if name == "igamma" else (1, 0)
        t = r.dtype.type
        r = xp.where(low, t(p_low), xp.where(high, t(p_high), r))
    return r


def _igamma_grad(grad, input, other, needs, sign):
    if needs[0]:
        raise NotImplementedError(
            f"the derivative for '{'igamma' if sign > 0 else 'igammac'}: input' is not implemented."
        )
    # d/dx P(a, x) = x**(a-1) e**-x / Gamma(a); Q = 1 - P
    d = (other.log() * (input - 1) - other - input.lgamma()).exp()
    return None, grad * d if sign > 0 else -grad * d


@op(names=unify_inputs, promote=True, inplace="igamma_", tensors_only=True)
def igamma(xp, input, other):
    """The regularized lower incomplete gamma function P(input, other) (gammainc)."""
    return _igamma_kernel(xp, "igamma", input, other)


@igamma.vjp
def _(grad, input, other, needs):
    return _igamma_grad(grad, input, other, needs, 1)


@op(names=unify_inputs, promote=True, inplace="igammac_", tensors_only=True)
def igammac(xp, input, other):
    """The regularized upper incomplete gamma function Q(input, other) (gammaincc)."""
    return _igamma_kernel(xp, "igammac", input, other)


@igammac.vjp
def _(grad, input, other, needs):
    return _igamma_grad(grad, input, other, needs, -1)


# --------------------------------------------------------------------- gradient
@_tensor_input("gradient")
def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """Estimate the derivative of ``input`` along each of ``dim`` by finite differences:
    second-order central differences inside, ``edge_order`` one-sided at the edges.

    spacing: a number (same step everywhere), a list of numbers (one per dim), or a list of 1-D
    coordinate tensors (one per dim). Built from differentiable ops, so it has a gradient.
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(range(input.ndim))
    elif isinstance(dim, (list, tuple)):
        dims = [input._dim(d) for d in dim]
    else:
        dims = [input._dim(dim)]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if dim is None:
                raise RuntimeError(
                    "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                    f"length equal to 'self.dim() = {input.ndim}', since dim argument was not "
                    f"given, but got a list of length {len(spacing)}"
                )
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                "dim arguments to have the same length, but got a spacing argument of length "
                f"{len(spacing)} and a dim argument of length {len(dims)}."
            )
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    return tuple(_gradient_1d(input, d, s, edge_order) for d, s in zip(dims, steps))


def _gradient_1d(f: Tensor, d: int, step, edge_order: int) -> Tensor:
    n = f.shape[d]
    if n < edge_order + 1:
        raise RuntimeError(
            "torch.gradient expected each dimension size to be at least edge_order+1"
        )
    if not f.is_floating_point() and not f.is_complex():
        f = f.to(_dt.get_default_dtype())
    shape = [1] * f.ndim
    shape[d] = -1

    def sl(start, length):
        return f.narrow(d, start, length)

    if isinstance(step, Tensor):  # coordinates: non-uniform steps, broadcast along dim d
        h = (step[1:] - step[:-1]).to(f.dtype)
        h1, h2 = h[:-1].reshape(shape), h[1:].reshape(shape)
        first, last = h[0], h[-1]
        second, penult = (h[1], h[-2]) if n > 2 else (h[0], h[-1])
    else:
        h1 = h2 = first = last = second = penult = step
    inner = (
        sl(0, n - 2) * (-h2 / (h1 * (h1 + h2)))
        + sl(1, n - 2) * ((h2 - h1) / (h1 * h2))
        + sl(2, n - 2) * (h1 / (h2 * (h1 + h2)))
    )
    if edge_order == 1:
        lo = (sl(1, 1) - sl(0, 1)) / first
        hi = (sl(n - 1, 1) - sl(n - 2, 1)) / last
    else:
        a, b = first, second
        lo = (
            sl(0, 1) * (-(2 * a + b) / (a * (a + b)))
            + sl(1, 1) * ((a + b) / (a * b))
            + sl(2, 1) * (-a / (b * (a + b)))
        )
        a, b = penult, last
        hi = (
            sl(n - 3, 1) * (b / (a * (a + b)))
            + sl(n - 2, 1) * (-(a + b) / (a * b))
            + sl(n - 1, 1) * ((2 * b + a) / (b * (a + b)))
        )
    return cat([lo, inner, hi], d) if n > 2 else cat([lo, hi], d)


# ---------------------------------------------------------------------- out= of another dtype
def _exact_out(out, res, ins=()):
    """torch's unstructured unary kernels write only their own result dtype (no cast); they
    name the input's dtype (abs of a complex tensor: the complex one, though it writes floats)."""
    want = ins[0].dtype if ins and isinstance(ins[0], Tensor) else res.dtype
    raise RuntimeError(f"Found dtype {scalar_name(out.dtype)} but expected {scalar_name(want)}")


def _abs_out(out, res, ins=()):
    """abs of a complex tensor: torch's kernel writes |z| into an out= of the input's complex
    dtype, and casts it into a real one (the usual cast check follows); the rest as
    _exact_out."""
    x = ins[0] if ins and isinstance(ins[0], Tensor) else None
    if x is not None and x.dtype.is_complex and (out.dtype is x.dtype or not out.dtype.is_complex):
        return
    _exact_out(out, res, ins)


def _nan_to_num_out(out, res, ins=()):
    raise RuntimeError(
        f"nan_to_num: dtype of out: {scalar_name(out.dtype)} should be same as input: "
        f"{scalar_name(res.dtype)}"
    )


def _install_out_checks() -> None:
    from .arithmetic import neg
    from .comparison import bitwise_not

    for f in (neg, sign, floor, ceil, trunc, round, frac, sgn, bitwise_not, conj_physical):
        f.op.out_dtype = _exact_out
    abs.op.out_dtype = _abs_out
    nan_to_num.op.out_dtype = _nan_to_num_out


_install_out_checks()
