"""The special functions of ``ember.special`` that have no ``ember.<name>`` twin: Bessel and Airy
functions, the scaled Bessel functions, the normal distribution's ndtr/ndtri/log_ndtr, erfcx, entr,
xlog1py, zeta and the classical orthogonal polynomials.

They are registered as private ops (``_special_<name>``, like torch's ``aten::special_<name>``), so
they are not Tensor methods; core/special.py gives them their public names. Derivatives exist where
torch has them (the Bessel/Airy functions and the polynomials have none in torch: their results do
not require grad). Kernels run scipy.special on cpu and cupyx.scipy.special on cuda.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtype as _dt
from ..layout import broadcast_copy
from ..names import keep, unify_inputs
from ..registry import op
from .arithmetic import _real_only
from .pointwise import (
    _dev,
    _eps_of,
    _no_half_backward,
    _not_impl,
    _sp,
    _where_ok,
    exp,
    i0,
    log,
    sign,
    special,
)

__all__: list = []

_SQRT_2PI = math.sqrt(2 * math.pi)


def _check(name, x, xp, half_ok=False):
    """torch's dtype errors: complex never, float16/bfloat16 only where torch has kernels."""
    k = x.dtype.kind
    if k == "c" or (not half_ok and (x.dtype.itemsize == 2 or k == "V")):
        raise _not_impl(name, x, xp)


def _unary(name, scipy_name, half_ok=False, args=(), kernel_name=None):
    """Register ``_special_<name>``: scipy's ``scipy_name`` elementwise, floating results
    (``kernel_name``: the torch kernel its dtype errors name, when not ``name``)."""

    def kernel(xp, input):
        _check(kernel_name or name, input, xp, half_ok)
        return _sp(xp, scipy_name, input, *args)

    kernel.__name__ = kernel.__qualname__ = f"_special_{name}"
    kernel.__doc__ = f"torch.special.{name} (elementwise)."
    return op(names=keep, floating=True, method=False)(kernel)


# ------------------------------------------------------------------- no derivative in torch
_special_bessel_j0 = _unary("bessel_j0", "j0")
_special_bessel_j1 = _unary("bessel_j1", "j1")
_special_bessel_y0 = _unary("bessel_y0", "y0")
_special_bessel_y1 = _unary("bessel_y1", "y1")
_special_modified_bessel_i0 = _unary("modified_bessel_i0", "i0")
_special_modified_bessel_i1 = _unary("modified_bessel_i1", "i1")
_special_modified_bessel_k0 = _unary("modified_bessel_k0", "k0")
_special_modified_bessel_k1 = _unary("modified_bessel_k1", "k1")
_special_scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0", "k0e")
_special_scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1", "k1e")


@op(names=keep, floating=True, method=False)
def _special_airy_ai(xp, input):
    """The Airy function Ai(x)."""
    _check("airy_ai", input, xp)
    sp = special(xp)
    if not hasattr(sp, "airy"):  # cupyx.scipy.special has no airy: compute on the host
        import scipy.special

        r = xp.asarray(scipy.special.airy(xp.asnumpy(input))[0])
    else:
        r = sp.airy(input)[0]
    # scipy gives NaN for finite x >= ~1e10, where Ai (0 from x ~ 105 on) is 0 in torch; Ai(inf)
    # stays NaN, as torch
    r = xp.where((input > 200) & (input < xp.inf), r.dtype.type(0), r)
    return r.astype(input.dtype, copy=False)


@op(names=keep, floating=True, method=False)
def _special_spherical_bessel_j0(xp, input):
    """The spherical Bessel function of the first kind, order 0: sin(x) / x."""
    _check("spherical_bessel_j0", input, xp)
    x = input if input.dtype.kind == "f" else input.astype(np.float32)
    # sin(x)/x, with its limits: 1 at 0, and 0 at +-inf (sin(inf) is nan)
    safe = xp.where((x == 0) | xp.isinf(x), x.dtype.type(1), x)
    r = xp.where(x == 0, x.dtype.type(1), xp.sin(safe) / safe)
    return xp.where(xp.isinf(x), x.dtype.type(0), r).astype(x.dtype, copy=False)


# ----------------------------------------------------------------------- with derivatives
_special_erfcx = _unary("erfcx", "erfcx")


@_special_erfcx.vjp
def _(grad, input, result):
    if input.dtype is not _dt.float64:
        # 2 x erfcx(x) - 2/sqrt(pi) cancels ~2 x^2-fold for large x (from the float32 result:
        # 0.6% off at x = 200, 0 at 1e4): taken in float64 from x itself, then rounded once
        x = input.to(_dt.float64)
        return grad * (2 * x * _special_erfcx(x) - 2 / math.sqrt(math.pi)).to(input.dtype)
    return grad * (2 * input * result - 2 / math.sqrt(math.pi))


_special_i0e = _unary("i0e", "i0e", half_ok=True)


@_special_i0e.vjp
def _(grad, input, result):
    return grad * (_special_i1e(input) - sign(input) * result)


_special_i1 = _unary("i1", "i1", half_ok=True)


@_special_i1.vjp
def _(grad, input, result):
    _no_half_backward("i1_backward", input)
    # i1'(x) = i0(x) - i1(x) / x, with its limit 1/2 for |x| <= eps (see pointwise._i1)
    return grad * _where_ok(i0(input) - result / input, input, test="big", lo=_eps_of(input),
                            fill=0.5)  # fmt: skip


_special_i1e = _unary("i1e", "i1e", half_ok=True)


@_special_i1e.vjp
def _(grad, input, result):
    _no_half_backward("i1e_backward", input)
    # i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x), with the limit 1/2 at 0
    # (1 / x overflows for subnormal x: the limit is taken for |x| <= eps)
    return grad * _where_ok(_special_i0e(input) - result * (sign(input) + 1 / input), input,
                            test="big", lo=_eps_of(input), fill=0.5)  # fmt: skip


_special_ndtr = _unary("ndtr", "ndtr", half_ok=True, kernel_name="erf_vml")  # torch's is erf's
# torch computes ndtr as (1 + erf(x / sqrt(2))) * 0.5, so its result's node is the scalar product
_special_ndtr.op.backward_name = "MulBackward1"
_special_ndtr.op.composite_out = True  # erf's refusal comes before the out= checks


@_special_ndtr.vjp
def _(grad, input):
    return grad * (exp(input * input * -0.5) / _SQRT_2PI)


_special_ndtri = _unary("ndtri", "ndtri")


@_special_ndtri.vjp
def _(grad, result):
    return grad * (_SQRT_2PI * exp(result * result * 0.5))


_special_log_ndtr = _unary("log_ndtr", "log_ndtr")


@_special_log_ndtr.vjp
def _(grad, input, result):
    return grad * (exp(input * input * -0.5 - result) / _SQRT_2PI)


_special_entr = _unary("entr", "entr", half_ok=True)


@_special_entr.vjp
def _(grad, input):
    return grad * -(1 + log(input))


# ------------------------------------------------------------------------------ binary
def _binary_check(name, a, b, xp):
    for v in (a, b):
        if getattr(v, "dtype", None) is not None and v.dtype.kind == "c":
            raise _not_impl(name, v, xp)
    if type(a) is complex or type(b) is complex:  # a complex Python scalar makes it complex
        _real_only(f"{name}_{_dev(xp)}", a, b)


def _f(xp, name, x, *args):
    """scipy.special.<name>(*args) in x's dtype (Python scalars follow the tensor's dtype)."""
    d = x.dtype if hasattr(x, "dtype") else next(a.dtype for a in args if hasattr(a, "dtype"))
    up = _dt.float32.np if d.itemsize <= 2 else d
    args = [a.astype(up) if hasattr(a, "astype") else a for a in args]
    r = getattr(special(xp), name)(*args).astype(d, copy=False)
    # the cast put an expanded input's stride-0 dims fastest (numpy's 'K' order); torch's
    # result keeps the dims in place
    return r if r.flags.c_contiguous or not hasattr(x, "strides") else broadcast_copy(xp, x, r)


@op(names=unify_inputs, promote=True, floating=True, method=False)
def _special_xlog1py(xp, input, other):
    """input * log1p(other), 0 where input == 0 (NaN other still gives NaN)."""
    _binary_check("xlog1py", input, other, xp)
    ref = input if hasattr(input, "dtype") else other
    return _f(xp, "xlog1py", ref, input, other)


@_special_xlog1py.vjp
def _(grad, input, other, needs):
    from .comparison import where
    from .pointwise import log1p

    gi = go = None
    if needs[0]:
        # torch's derivative is xlog1py(input != 0, other): 0 where input == 0 and log1p(other)
        # is -inf or NaN (other <= -1), else log1p(other) (-inf at -1, NaN below)
        if hasattr(other, "_data"):
            gi = grad * where((input == 0) & (other <= -1), 0.0, log1p(other))
        else:
            lg = math.log1p(other) if other > -1 else (-math.inf if other == -1 else math.nan)
            gi = grad * (where(input == 0, 0.0, lg) if other <= -1 else lg)
    if needs[1]:
        go = grad * input / (1 + other)
    return gi, go


@op(names=unify_inputs, promote=True, floating=True, method=False)
def _special_zeta(xp, input, other):
    """The Hurwitz zeta function zeta(x, q) = sum_k (k + q)^-x."""
    _binary_check("zeta", input, other, xp)
    ref = input if hasattr(input, "dtype") else other
    if ref.dtype.itemsize == 2 or ref.dtype.kind == "V":  # torch has no half-precision kernel
        raise _not_impl("zeta", ref, xp)
    r = _f(xp, "zeta", ref, input, other)
    # torch's series does not take the limit q -> inf: NaN there (scipy's is 0), but x = 1 is
    # its pole first
    bad = (xp.asarray(other) == np.inf) & (xp.asarray(input) != 1)
    return xp.where(bad, r.dtype.type(np.nan), r)


@_special_zeta.vjp
def _(grad, input, other, needs):
    if needs[0]:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    return None, grad * -input * _special_zeta(input + 1, other)


# --------------------------------------------------------------------------- polynomials
def _poly(name, first, step):
    """Register ``_special_<name>(input, n)`` by the three-term recurrence (n truncated to int;
    negative n gives 0, like torch). ``first(x)`` is P_1, ``step(k, x, p, q)`` is P_{k+1}."""

    def kernel(xp, input, n):
        _binary_check(name, input, n, xp)
        ref = input if hasattr(input, "dtype") else n
        d = ref.dtype
        if d.itemsize == 2 or d.kind == "V":  # torch has no half-precision kernels
            raise _not_impl(name, ref, xp)
        # torch runs the recurrence in the result's dtype (a float32 P_n overflows to inf - inf =
        # NaN), with n cast to int64 (NaN and inf, as C casts them on x86, become negative: 0)
        x = xp.asarray(input, dtype=d)
        with np.errstate(invalid="ignore"):
            nn = xp.asarray(n).astype(np.int64)
        x, nn = xp.broadcast_arrays(x, nn)
        top = int(nn.max()) if nn.size else 0
        out = xp.where(nn == 0, d.type(1), d.type(0))
        if top >= 1:
            p, q = xp.ones_like(x), first(x)
            out = xp.where(nn == 1, q, out)
            for k in range(1, top):
                p, q = q, step(k, x, q, p)
                out = xp.where(nn == k + 1, q, out)
        out = out.astype(d, copy=False)
        # see _f: an expanded input's float64 copy had its stride-0 dims fastest
        if out.flags.c_contiguous or not hasattr(input, "strides"):
            return out
        return broadcast_copy(xp, input, out)

    kernel.__name__ = kernel.__qualname__ = f"_special_{name}"
    kernel.__doc__ = f"torch.special.{name}(input, n)."
    return op(names=unify_inputs, promote=True, floating=True, method=False)(kernel)


def _shifted(first, step):
    return (lambda x: first(2 * x - 1)), (lambda k, x, q, p: step(k, 2 * x - 1, q, p))


def _cheb(k, x, q, p):
    return 2 * x * q - p


_T1, _U1 = (lambda x: x), (lambda x: 2 * x)
_V1, _W1 = (lambda x: 2 * x - 1), (lambda x: 2 * x + 1)
_special_chebyshev_polynomial_t = _poly("chebyshev_polynomial_t", _T1, _cheb)
_special_chebyshev_polynomial_u = _poly("chebyshev_polynomial_u", _U1, _cheb)
_special_chebyshev_polynomial_v = _poly("chebyshev_polynomial_v", _V1, _cheb)
_special_chebyshev_polynomial_w = _poly("chebyshev_polynomial_w", _W1, _cheb)
_special_shifted_chebyshev_polynomial_t = _poly(
    "shifted_chebyshev_polynomial_t", *_shifted(_T1, _cheb)
)
_special_shifted_chebyshev_polynomial_u = _poly(
    "shifted_chebyshev_polynomial_u", *_shifted(_U1, _cheb)
)
_special_shifted_chebyshev_polynomial_v = _poly(
    "shifted_chebyshev_polynomial_v", *_shifted(_V1, _cheb)
)
_special_shifted_chebyshev_polynomial_w = _poly(
    "shifted_chebyshev_polynomial_w", *_shifted(_W1, _cheb)
)
_special_hermite_polynomial_h = _poly(
    "hermite_polynomial_h", lambda x: 2 * x, lambda k, x, q, p: 2 * x * q - 2 * k * p
)
_special_hermite_polynomial_he = _poly(
    "hermite_polynomial_he", lambda x: x, lambda k, x, q, p: x * q - k * p
)
_special_laguerre_polynomial_l = _poly(
    "laguerre_polynomial_l",
    lambda x: 1 - x,
    lambda k, x, q, p: ((2 * k + 1 - x) * q - k * p) / (k + 1),
)
_special_legendre_polynomial_p = _poly(
    "legendre_polynomial_p", lambda x: x, lambda k, x, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1)
)


def _binary_sigs(a: str, b: str, scalar_a: str) -> tuple:
    return (
        f"(Tensor {a}, Tensor {b}, *, Tensor out = None)",
        f"(Number {scalar_a}, Tensor {b}, *, Tensor out = None)",
        f"(Tensor {a}, Number {b}, *, Tensor out = None)",
    )


# the unary functions whose argument torch names x
_X_NAMED = frozenset(
    "_special_" + n
    for n in ("airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")
    + ("spherical_bessel_j0",)
)


# torch reports these ops under their public names (special_i1, not _special_i1); a binary one
# given an operand that is neither Tensor nor number matches none of its overloads
for _name, _fn in list(globals().items()):
    if _name.startswith("_special_") and hasattr(_fn, "op"):
        _fn.op.label = _name[1:]
        if _name in _X_NAMED:
            _fn.op.arg_names = ("x",)
        if _fn.op.n_in == 2:
            _polynomial = list(_fn.op.in_names) == ["input", "n"]
            _fn.op.overloads = (
                _binary_sigs("x", "n", "x")
                if _polynomial
                else _binary_sigs("input", "other", "self")
            )
