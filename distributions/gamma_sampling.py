"""Gamma and Dirichlet samplers with implicit-reparameterization gradients.

ember has no core ``_standard_gamma`` op, so the sampler lives here: Marsaglia and Tsang's
squeeze-rejection method (with the ``U ** (1 / alpha)`` boost for ``alpha < 1``), drawing its
normals and uniforms from the ember generator of the parameter's device. The gradient of a draw
``x ~ Gamma(alpha, 1)`` with respect to ``alpha`` is the implicit reparameterization
``dx/dalpha = -(dP/dalpha)(x; alpha) / f(x; alpha)`` (P the regularized lower incomplete gamma
function, f the density), evaluated analytically in float64: for ``x <= alpha + 1`` by
differentiating P's power series term by term (``P/f = sum_n x^(n+1) Gamma(alpha) /
Gamma(alpha+n+1)``), above by forward-mode differentiation of the Lentz evaluation of the
complement's continued fraction. Both are accurate to ~1e-14 relative (torch's closed-form
approximation is within ~1e-3 of them).
"""

from __future__ import annotations

import ember
import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..core.device import module_for
from ..core.dtype import SCALAR_NAMES
from ..core.random import Generator, default_generator_for
from ..core.tensor import _wrap

__all__ = ["_sample_dirichlet", "_standard_gamma", "_standard_gamma_grad"]


def _draw_standard_gamma(alpha, generator: Generator, xp):
    """Draws of Gamma(alpha, 1) for the raw float64 array ``alpha``. Like torch, an alpha that
    is not positive (or NaN) draws 0 (the caller's clamp makes it the smallest normal number) and
    an infinite one draws inf: the rejection loop below would never accept those."""
    a = alpha.reshape(-1)
    ok = (a > 0) & xp.isfinite(a)
    boost = ok & (a < 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = xp.where(boost, a + 1, a) - 1.0 / 3.0
        c = 1.0 / xp.sqrt(9.0 * d)
    out = xp.where(a == xp.inf, xp.inf, 0.0)
    todo = xp.nonzero(ok)[0]
    while todo.size:
        d_t, c_t = d[todo], c[todo]
        x = generator._normal(todo.shape, np.float64)
        v = (1.0 + c_t * x) ** 3
        u = generator._uniform(todo.shape, np.float64)
        pos = v > 0
        safe_v = xp.where(pos, v, 1.0)
        with np.errstate(divide="ignore"):
            accept = pos & (xp.log(u) < 0.5 * x * x + d_t - d_t * safe_v + d_t * xp.log(safe_v))
        out[todo[accept]] = (d_t * safe_v)[accept]
        todo = todo[~accept]
    if bool(boost.any()):
        idx = xp.nonzero(boost)[0]
        u = generator._uniform(idx.shape, np.float64)
        out[idx] = out[idx] * u ** (1.0 / a[idx])
    return out.reshape(alpha.shape)


_MAX_TERMS = 100000


def _lower_series_grad(xp, a, x, logx, psi):
    """``-(dP/da)/f`` from P's power series (used where ``x <= a + 1``: no cancellation).

    ``P = f * sum_n r_n`` with ``r_0 = x/a`` and ``r_{n+1} = r_n x / (a+n+1)``; term by term,
    ``(dP/da) / f = sum_n r_n (log x - psi(a+n+1))``. ``psi`` is ``digamma(a + 1)``."""
    r = x / a
    s = r * (logx - psi)
    out = xp.empty_like(a)
    idx = xp.arange(a.size)
    n = 0
    while idx.size and n < _MAX_TERMS:
        n += 1
        den = a + n
        psi = psi + 1.0 / den
        r = r * x / den
        t = r * (logx - psi)
        s = s + t
        done = xp.abs(t) <= 1e-17 * xp.abs(s)
        if bool(done.any()):
            out[idx[done]] = s[done]
            keep = ~done
            idx, a, x, logx, psi, r, s = (v[keep] for v in (idx, a, x, logx, psi, r, s))
    out[idx] = s
    return -out


def _upper_fraction_grad(xp, a, x):
    """``(dQ/da)/f`` (Q = 1 - P) from Q's continued fraction (used where ``x > a + 1``, where it
    converges fast), differentiated in forward mode through the modified Lentz iteration.

    Returns ``h`` and ``dh/da`` where ``Q = x^a e^-x / Gamma(a) * h``, so that
    ``(dQ/da)/f = x (h (log x - digamma(a)) + dh/da)``."""
    tiny = 1e-300
    b = x + 1.0 - a  # db/da = -1 throughout
    c = xp.full_like(a, 1.0 / tiny)
    dc = xp.zeros_like(a)
    d = 1.0 / b
    dd = d * d  # -db/da / b^2
    h, dh = d.copy(), dd.copy()
    out_h, out_dh = xp.empty_like(a), xp.empty_like(a)
    idx = xp.arange(a.size)
    i = 0
    while idx.size and i < _MAX_TERMS:
        i += 1
        an = -i * (i - a)  # d an / da = i
        b = b + 2.0
        D = an * d + b
        dD = i * d + an * dd - 1.0
        D = xp.where(xp.abs(D) < tiny, tiny, D)
        C = b + an / c
        dC = -1.0 + (i * c - an * dc) / (c * c)
        C = xp.where(xp.abs(C) < tiny, tiny, C)
        d, dd = 1.0 / D, -dD / (D * D)
        c, dc = C, dC
        delta = d * c
        ddelta = dd * c + d * dc
        h, dh = h * delta, dh * delta + h * ddelta
        done = (xp.abs(delta - 1.0) <= 1e-16) & (xp.abs(h * ddelta) <= 1e-16 * xp.abs(dh))
        if bool(done.any()):
            out_h[idx[done]] = h[done]
            out_dh[idx[done]] = dh[done]
            keep = ~done
            idx, a, b, c, dc, d, dd, h, dh = (v[keep] for v in (idx, a, b, c, dc, d, dd, h, dh))
    out_h[idx], out_dh[idx] = h, dh
    return out_h, out_dh


def _standard_gamma_grad(alpha: ember.Tensor, x: ember.Tensor) -> ember.Tensor:
    """``dx/dalpha`` for ``x ~ Gamma(alpha, 1)`` (implicit reparameterization), in alpha's dtype
    and broadcast shape (like ``torch._standard_gamma_grad``); not itself differentiable."""
    with no_grad():
        alpha, x = ember.broadcast_tensors(alpha.detach(), x.detach())
        xp = module_for(alpha.device)
        a = alpha._data.astype(np.float64).reshape(-1)
        xv = x._data.astype(np.float64).reshape(-1)
        out = xp.zeros_like(a)
        ok = (xv > 0) & (a > 0) & xp.isfinite(xv) & xp.isfinite(a)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            logx = xp.log(xp.where(ok, xv, 1.0))
            lower = ok & (xv <= a + 1.0)
            upper = ok & ~lower
            if bool(lower.any()):
                al = a[lower]
                psi = ember.digamma(_wrap(al + 1.0))._data
                out[lower] = _lower_series_grad(xp, al, xv[lower], logx[lower], psi)
            if bool(upper.any()):
                au, xu, lu = a[upper], xv[upper], logx[upper]
                psi = ember.digamma(_wrap(au))._data
                h, dh = _upper_fraction_grad(xp, au, xu)
                out[upper] = xu * (h * (lu - psi) + dh)
        out = xp.where(xp.isnan(a) | xp.isnan(xv), xp.nan, out)
        return _wrap(out.reshape(alpha._data.shape).astype(alpha._data.dtype))


def _check_sampler_args(fn: str, kernel: str, alpha, generator) -> None:
    """torch's argument errors for _standard_gamma / _sample_dirichlet: a tensor of float32 or
    float64 (its cpu kernels' dtypes) and, if given, a Generator."""
    if not isinstance(alpha, ember.Tensor):
        raise TypeError(
            f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(alpha).__name__}"
        )
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(
            f"{fn}(): argument 'generator' must be torch.Generator, not {type(generator).__name__}"
        )
    if alpha.dtype not in (ember.float32, ember.float64):
        name = SCALAR_NAMES[alpha.dtype.name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha, generator):
        d = alpha.device
        g = default_generator_for(d) if generator is None else generator
        xp = module_for(d)
        a = alpha._data.astype(np.float64)
        x = _draw_standard_gamma(a, g, xp)
        tiny = np.finfo(alpha._data.dtype).tiny
        x = xp.maximum(x.astype(alpha._data.dtype), alpha._data.dtype.type(tiny))
        out = _wrap(x, alpha._names)  # one draw per element: the draws keep alpha's names
        ctx.save_for_backward(alpha, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        if is_grad_enabled():  # create_graph: the reparameterization gradient has no derivative
            return grad * _StandardGammaGrad.apply(alpha, x), None
        return grad * _standard_gamma_grad(alpha, x), None


class _StandardGammaGrad(Function):
    """``_standard_gamma_grad`` recorded in a graph (a backward with create_graph): like
    torch's, it has no derivative, so a double backward through a Gamma draw raises instead of
    treating ``dx/dalpha`` as a constant in alpha (a silently wrong second derivative)."""

    @staticmethod
    def forward(ctx, alpha, x):
        return _standard_gamma_grad(alpha, x)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


def _standard_gamma(alpha: ember.Tensor, generator: Generator | None = None) -> ember.Tensor:
    r"""Draws of Gamma(alpha, 1), one per element of ``alpha`` (same shape and dtype), clamped
    below by the dtype's smallest normal number; differentiable with respect to ``alpha``.

    Args:
        alpha (Tensor): positive concentrations.
        generator (Generator, optional): the generator to draw with.
    """
    _check_sampler_args("_standard_gamma", "gamma_cpu", alpha, generator)
    return _StandardGamma.apply(alpha, generator)


def _sample_dirichlet(concentration: ember.Tensor, generator=None) -> ember.Tensor:
    r"""Draws of Dirichlet(concentration) along the last dim, as normalized Gamma draws;
    differentiable with respect to ``concentration`` through the Gamma draws."""
    _check_sampler_args("_sample_dirichlet", "dirichlet", concentration, generator)
    gammas = _standard_gamma(concentration, generator)
    x = gammas / gammas.sum(-1, keepdim=True)
    return x.clamp(min=ember.finfo(x.dtype).tiny)
