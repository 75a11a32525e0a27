"""Activations as single ops (nn.functional's hot paths): leaky_relu, hardtanh, elu
(with selu/celu's scales), softplus, hardsigmoid, hardswish, gelu, silu.

As compositions these cost several full passes plus ``where`` (slow on random masks); here the
forward is one kernel written with max/min/clip arithmetic. Derivatives follow torch at the
breakpoints (hardtanh's is 0 on its bounds, elu's at 0 is alpha). When no graph is being built
for the gradient (the engine runs vjps under no_grad), the derivative is computed on raw arrays;
under ``create_graph=True`` it is written in ember ops so double backward works. Names are kept.
"""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import _state
from .. import layout as _layout
from ..device import array_module
from ..kernels.blocked import blocked
from ..kernels.select import select
from ..names import keep, unify_inputs
from ..registry import op
from ..tensor import _wrap
from .pointwise import _tied
from .reduction import _tname

__all__: list = []


def _c(arr):
    """A raw array as a constant tensor (no graph)."""
    return _wrap(arr)


def _opmath(a):
    """``a`` as torch's kernels compute it: float16/bfloat16 in float32 (the caller rounds the
    result back once; computing in the 16-bit type rounds each step and misses by an ulp)."""
    return a.astype("float32") if a.dtype.itemsize == 2 and a.dtype.kind in "fV" else a


def _scaled(grad, d):
    """``grad * d`` for a derivative array ``d`` (no graph): a 16-bit gradient times a float32
    ``d`` (computed by ``_opmath``) is multiplied in float32 and rounded once, as torch's
    backward kernels do."""
    g = grad._data
    if d.dtype == g.dtype:
        return grad * _c(d)
    return _wrap((g.astype(d.dtype) * d).reshape(g.shape).astype(g.dtype), grad._names)


# ---------------------------------------------------------------------- leaky_relu
def _raw(t):
    """A derivative's raw array of ``t``: 1-element for a 0-d tensor, since numpy ufuncs turn
    0-d arrays into scalars that ``out=`` refuses (the engine sums the gradient back to ())."""
    a = t._data
    return a if a.ndim else a.reshape(1)


@op(names=keep, method=False)
def _leaky_relu(xp, input, negative_slope=0.01):
    s = negative_slope
    x = _opmath(input)
    # max(x, s*x) is x for x > 0 and s*x otherwise whenever s <= 1 (min when s > 1)
    r = xp.maximum(x, x * s) if s <= 1 else xp.minimum(x, x * s)
    return r.astype(input.dtype, copy=False)


@_leaky_relu.vjp
def _(grad, input, negative_slope):
    a = _raw(input)
    if not _state.enabled:
        a = _opmath(a)
    d = (a > 0).astype(a.dtype)
    d *= 1 - negative_slope
    d += negative_slope
    g = _scaled(grad, d)
    # torch's leaky_relu_backward is a function of the input (zero derivative): keep it so
    return _tied(g, input, node="LeakyReluBackwardBackward0") if _state.enabled else g


# ---------------------------------------------------------------------- hardtanh
@op(names=keep, method=False)
def _hardtanh(xp, input, min_val=-1.0, max_val=1.0):
    return xp.minimum(xp.maximum(input, min_val), max_val).astype(input.dtype, copy=False)


@_hardtanh.vjp
def _(grad, input, min_val, max_val):
    a = _raw(input)
    g = grad * _c(((a > min_val) & (a < max_val)).astype(a.dtype))
    return _tied(g, input, node="HardtanhBackwardBackward0") if _state.enabled else g


# ---------------------------------------------------------------------- softshrink
@op(names=keep, method=False)
def _softshrink(xp, input, lambd=0.5):
    x = _opmath(input)
    return (x - xp.clip(x, -lambd, lambd)).astype(input.dtype, copy=False)  # NaN stays NaN


@_softshrink.vjp
def _(grad, input, lambd):
    a = _raw(input)
    # outside [-lambd, lambd]; NaN gets none (torch's vectorized kernel; its scalar tail does)
    g = grad * _c((array_module(a).abs(a) > lambd).astype(a.dtype))
    return _tied(g, input, node="SoftshrinkBackwardBackward0") if _state.enabled else g


# ---------------------------------------------------------------------- prelu
def check_prelu_dtypes(input, weight) -> None:
    """torch's error for a prelu weight of another dtype (its kernel does not promote)."""
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"prelu: Type promoting not supported. Got {_tname(input._data.dtype)} and "
            f"{_tname(weight._data.dtype)}"
        )


@op(names=unify_inputs, method=False)
def _prelu_kernel(xp, input, weight):
    """x for x > 0, else weight * x (``weight`` broadcast against ``input``)."""
    r = weight * input
    lo, hi = weight.min(), weight.max()
    # slopes in (0, 1]: max(x, w x) is x for x > 0 and w x otherwise (slopes >= 1: min), also for
    # NaN and a zero's sign; one vector pass where a masked select is ~15x slower
    if 0 < lo and hi <= 1:
        return xp.maximum(r, input)
    if lo >= 1:
        return xp.minimum(r, input)
    return xp.where(input > 0, input, r)


@_prelu_kernel.vjp
def _(grad, input, weight):
    a = input._data
    pos = a > 0
    neg = _c((~pos).astype(a.dtype))
    gi = grad * _c(pos.astype(a.dtype)) + grad * weight * neg
    # the weight's gradient is x * grad off the positive part (the engine sums it to its shape)
    gw = grad * input * neg
    return _tied(gi, input, node="PreluKernelBackwardBackward0") if _state.enabled else gi, gw


# ---------------------------------------------------------------------- elu / selu / celu
@op(names=keep, method=False)
def _elu(xp, input, alpha=1.0, scale=1.0, input_scale=1.0):
    x = _opmath(input)
    neg = xp.minimum(x, 0)
    if input_scale != 1:
        neg *= input_scale
    neg = xp.expm1(neg)
    neg *= alpha * scale
    pos = xp.maximum(x, 0)
    if scale != 1:
        pos *= scale
    pos += neg
    if not -np.inf < alpha * scale < np.inf:  # (0 * inf is NaN: torch selects, it adds no 0)
        pos = xp.where(x > 0, x * scale, pos)
    return pos.astype(input.dtype, copy=False)


@_elu.vjp
def _(grad, input, alpha, scale, input_scale):
    a = _raw(input)
    xp = array_module(a)
    if not _state.enabled:
        a = _opmath(a)
    neg = a <= 0  # torch's test: a NaN input takes the linear branch's gradient, not NaN
    pos = (~neg).astype(a.dtype)
    k = alpha * scale * input_scale
    if not _state.enabled:
        e = xp.fmin(a, 0)  # fmin: 0 (not NaN) at a NaN, which the 1 - pos below then zeroes
        if input_scale != 1:
            e *= input_scale
        e = xp.exp(e)
        e *= k
        e *= 1 - pos  # x <= 0: alpha*scale*input_scale*exp(x*input_scale); at 0 that is the limit
        if scale != 1:
            pos *= scale
        e += pos
        return _scaled(grad, e)
    # double backward: the exponential branch stays a function of the input
    from .comparison import where  # (comparison imports this module's neighbours)

    e = (where(_c(neg), input, 0.0) * input_scale).exp() * k
    return grad * (e * _c(1 - pos) + _c(pos * scale))


# ---------------------------------------------------------------------- softplus
@op(names=keep, method=False)
def _softplus(xp, input, beta=1.0, threshold=20.0):
    x = _opmath(input)
    z = x * beta if beta != 1 else x
    # max(z, 0) + log1p(exp(-|z|)): no overflow anywhere; linear above the threshold, like torch
    r = xp.log1p(xp.exp(-xp.abs(z)))
    r += xp.maximum(z, 0)
    if beta != 1:
        r /= beta
    xp.copyto(r, x, where=z > threshold)
    return r.astype(input.dtype, copy=False)


@_softplus.vjp
def _(grad, input, beta, threshold):
    a = _raw(input)
    xp = array_module(a)
    if not _state.enabled:
        a = _opmath(a)
    z = a * beta if beta != 1 else a
    lin = z > threshold
    if not _state.enabled:
        # sigmoid(z) without overflow, e = exp(-|z|): 1 / (1 + e) for z >= 0, e / (1 + e) below
        e = xp.exp(-xp.abs(z))
        neg = (z < 0).astype(a.dtype)
        s = neg * e
        s += 1 - neg
        s /= 1 + e
        xp.copyto(s, 1, where=lin)
        return _scaled(grad, s)
    m = lin.astype(a.dtype)
    return grad * ((input * beta).sigmoid() * _c(1 - m) + _c(m))


# ---------------------------------------------------------------------- hardsigmoid / hardswish
@op(names=keep, method=False)
def _hardsigmoid(xp, input):
    # torch's formula: min(max(x + 3, 0), 6) / 6 (x / 6 + 0.5 rounds differently); clip with
    # both bounds runs numpy's vector loop, maximum/minimum with a scalar its slow scalar loop
    x = input.astype("float32") if input.dtype.itemsize == 2 else input  # torch's opmath
    r = x + 3
    xp.clip(r, 0, 6, out=r)
    r /= 6
    return r.astype(input.dtype, copy=False)


@_hardsigmoid.vjp
def _(grad, input):
    a = _raw(input)
    if not _state.enabled:
        a = _opmath(a)
    d = ((a > -3) & (a < 3)).astype(a.dtype)
    d /= 6
    return _scaled(grad, d)


@op(names=keep, method=False)
def _hardswish(xp, input):
    x = input.astype("float32") if input.dtype.itemsize == 2 else input  # torch's opmath
    r = x + 3
    xp.clip(r, 0, 6, out=r)  # one vector pass (maximum/minimum with a scalar: slow loops)
    r *= x
    r /= 6
    return r.astype(input.dtype, copy=False)


@_hardswish.vjp
def _(grad, input):
    # 0 for x <= -3, x/3 + 1/2 inside, 1 for x >= 3 (torch's breakpoints; +-inf give 1 and 0,
    # NaN stays NaN as in torch's vectorized kernel)
    a = _raw(input)
    mid = ~((a <= -3) | (a >= 3))
    if not _state.enabled:
        a = _opmath(a)
        outer = (a >= 3).astype(a.dtype)
        d = a / 3
        d += 0.5
        return _scaled(grad, select(array_module(a), mid, d, outer))
    outer = (a >= 3).astype(a.dtype)
    from .comparison import where  # (comparison imports this module's neighbours)

    return grad * where(_c(mid), input / 3 + 0.5, _c(outer))


# ---------------------------------------------------------------------- gelu
_SQRT1_2 = 0.7071067811865476
_SQRT_2_PI = 0.7978845608028654  # sqrt(2 / pi)
_INV_SQRT_2PI = 0.3989422804014327  # 1 / sqrt(2 pi)


# log(erfc(z) / t) + z^2 with t = 1 / (1 + z / 2), as a polynomial in s = 2t - 1 (lowest power
# first): our least-squares fit for z in [0, 10] against scipy's erfcx in float64 (fit error
# 1.2e-8). Evaluated in float32, Phi's relative error is below 1.2e-6 for x >= -3 and grows
# to 1.7e-5 at x = -12 (the float32 rounding of x^2 / 2 inside the exp): measured against
# scipy's ndtr in float64; torch's float32 GELU loses far more there
_ERFC_POLY = (
    -0.671794056892395,
    0.6726431846618652,
    0.047342799603939056,
    -0.046894557774066925,
    -0.009864618070423603,
    0.008812656626105309,
    0.0017150070052593946,
    -0.002278935397043824,
    -5.5343200074275956e-05,
    0.0005029924213886261,
    -0.00012908829376101494,
)


_PHI_BLOCK = 1 << 16  # elements per block: the ~25 passes then stay in cache (20% faster)


def _phi_f32(a):
    """The standard normal CDF of a float32 numpy array, in float32 vector ops (scipy's ndtr runs
    a scalar double-precision loop: ~11 ns per element, 80x torch's GELU), block by block."""
    return blocked(_phi_block, a, _PHI_BLOCK, np.float32)


def _tail_block(a):
    """(Phi(-|x|), |x|) of a float32 block."""
    f = np.float32
    ax = np.abs(a)
    u = ax * f(_SQRT1_2)  # |x| / sqrt(2): Phi(x) = erfc(-x / sqrt(2)) / 2
    # t = 1 / (1 + u/2), as 2 / (2 + u): the same float (scaling by 2 is exact), in one pass
    # fewer, and numpy's float32 divide is a vector loop where reciprocal is not
    t = u + f(2)
    np.divide(f(2), t, out=t)
    s = t + t
    s -= f(1)
    p = s * f(_ERFC_POLY[-1])
    p += f(_ERFC_POLY[-2])
    for c in _ERFC_POLY[-3::-1]:
        p *= s
        p += f(c)
    u *= u
    p -= u
    np.exp(p, out=p)
    p *= t
    p *= f(0.5)  # Phi(-|x|)
    return p, ax


def _gelu_f32(a):
    """x Phi(x) as relu(x) - |x| Phi(-|x|) (x > 0: x (1 - Phi(-x)); x <= 0: x Phi(x)): no blend
    of the two sides. A NaN and -inf (-inf * 0) give NaN, as torch's kernels do, +inf gives inf
    (the limit: torch's float64 and AVX2 kernels; its AVX-512 one gives NaN)."""
    if a.size > 2 * _PHI_BLOCK:
        flat = a.reshape(-1)
        out = np.empty(flat.shape, np.float32)
        for i in range(0, flat.size, _PHI_BLOCK):
            out[i : i + _PHI_BLOCK] = _gelu_f32(flat[i : i + _PHI_BLOCK])
        return out.reshape(a.shape)
    p, ax = _tail_block(a)
    p *= ax
    if a.flags.c_contiguous:
        # relu: max(0, x) against zeros (the same bits as clip, -0.0 and NaN included: numpy's
        # maximum returns its second operand unless the first is greater) at half clip's cost
        r = np.zeros(a.shape, np.float32)
        np.maximum(r, a, out=r)
    else:
        r = np.clip(a, np.float32(0), np.float32(np.inf))  # relu: clip's vector loop
    r -= p
    if np.isnan(r).any():  # (+inf - inf * 0; one reduction, ~2% of the op)
        r[a == np.inf] = np.inf
    return r


def _phi_block(a):
    f = np.float32
    p, _ = _tail_block(a)
    # Phi(x) = Phi(-|x|) + [x > 0] (1 - 2 Phi(-|x|)): a multiply, as numpy's where on a random
    # mask runs ~15x slower; a NaN stays NaN (NaN * 0 is NaN)
    q = p * f(-2)
    q += f(1)
    q *= a > 0
    p += q
    return p


def _phi(xp, a):
    """The standard normal CDF of array ``a`` (half types computed in float32)."""
    if xp is np and a.dtype == np.float32:
        return _phi_f32(a)
    from .pointwise import _sp

    return _sp(xp, "ndtr", a)


def _opmath(a):
    """``a`` as the dtype torch computes in: float32 for float16/bfloat16, else ``a`` itself."""
    return a.astype("float32") if a.dtype.itemsize == 2 and a.dtype.kind in "fV" else a


def _tanh_inner(xp, a):
    return xp.tanh((a + 0.044715 * a * a * a) * _SQRT_2_PI)


@op(names=keep, method=False)
def _gelu(xp, input, approximate="none"):
    if approximate == "tanh":
        x = _opmath(input)  # half types computed in float32 and rounded once, as torch does
        r = _tanh_inner(xp, x)
        r += 1
        r *= 0.5  # before the x: (1 + tanh) x overflows near the dtype's max, 0.5 (1 + tanh) no
        r *= x
        return r.astype(input.dtype, copy=False)
    x = _opmath(input)
    if xp is np and x.dtype == np.float32:
        r = _gelu_f32(x).astype(input.dtype, copy=False)
    else:
        r = (x * _phi(xp, x)).astype(input.dtype, copy=False)
    # _phi works in C order: a channels_last input gets its layout back (one copy, only then)
    return r if input.flags.c_contiguous else _layout.follow_array(xp, r, input)


@_gelu.vjp
def _(grad, input, approximate):
    a = _raw(input)
    xp = array_module(a)
    if not _state.enabled:
        a32 = _opmath(a)
        if approximate == "tanh":
            th = _tanh_inner(xp, a32)
            d = (1 - th * th) * (_SQRT_2_PI * (1 + 3 * 0.044715 * a32 * a32)) * a32
            d += 1 + th
            d *= 0.5
        else:
            d = xp.exp(a32 * a32 * -0.5) * _INV_SQRT_2PI
            d *= a32
            d += _phi(xp, a32)
        if a32 is not a:  # half types: the product in float32, rounded once (torch's opmath)
            return _c((_opmath(_raw(grad)) * d).astype(a.dtype))
        return grad * _c(d.astype(a.dtype, copy=False))
    x = input
    if approximate == "tanh":
        th = ((x + x * x * x * 0.044715) * _SQRT_2_PI).tanh()
        return grad * (
            (th + 1) * 0.5 + x * 0.5 * (1 - th * th) * ((x * x * (3 * 0.044715) + 1) * _SQRT_2_PI)
        )
    cdf = ((x * _SQRT1_2).erf() + 1) * 0.5
    return grad * (cdf + x * (x * x * -0.5).exp() * _INV_SQRT_2PI)


# ---------------------------------------------------------------------- silu
def _sigmoid_raw(xp, a):
    """sigmoid(a) in a's dtype (half types computed in float32)."""
    x = a.astype("float32") if a.dtype.itemsize == 2 else a
    s = xp.negative(x)
    xp.exp(s, out=s)  # exp(-x) = inf for very negative x gives 1/inf = 0, the right limit
    s += 1
    # 1 / s: numpy's float32 divide is a vector loop, its reciprocal a scalar one (same value)
    xp.divide(s.dtype.type(1), s, out=s)
    return s


@op(names=keep, method=False)
def _silu(xp, input):
    x = _opmath(input)  # half types: float32 math rounded once, as torch
    r = _sigmoid_raw(xp, x)
    r *= x
    return r.astype(input.dtype, copy=False)


@_silu.vjp
def _(grad, input):
    a = _raw(input)
    xp = array_module(a)
    if not _state.enabled:
        a32 = _opmath(a)
        s = _sigmoid_raw(xp, a32)
        d = 1 - s
        d *= a32
        d += 1
        d *= s  # s * (1 + x * (1 - s))
        if a32 is not a:  # half types: the product in float32, rounded once
            return _c((_opmath(_raw(grad)) * d).astype(a.dtype))
        return grad * _c(d.astype(a.dtype, copy=False))
    s = input.sigmoid()
    return grad * (s * (input * (1 - s) + 1))
