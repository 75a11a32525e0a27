"""Gamma and Dirichlet samplers with implicit-reparameterization gradients.

ember has no core ``_standard_gamma`` op, so the sampler lives here: Marsaglia and Tsang's
squeeze-rejection method (with the ``U ** (1 / alpha)`` boost for ``alpha < 1``), drawing its
normals and uniforms from the ember generator of the parameter's device. The gradient of a draw
``x ~ Gamma(alpha, 1)`` with respect to ``alpha`` is the implicit reparameterization
``dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha)`` (F the cdf, f the density), with
``dF/dalpha`` taken by a central difference of ``ember.igamma`` in float64 (relative step 1e-5).
"""

from __future__ import annotations

import ember
import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..core.device import module_for
from ..core.random import Generator, default_generator_for
from ..core.tensor import _wrap

__all__ = ["_sample_dirichlet", "_standard_gamma", "_standard_gamma_grad"]


def _draw_standard_gamma(alpha, generator: Generator, xp):
    """Draws of Gamma(alpha, 1) for the raw float64 array ``alpha`` (all entries > 0)."""
    a = alpha.reshape(-1)
    boost = a < 1
    d = xp.where(boost, a + 1, a) - 1.0 / 3.0
    c = 1.0 / xp.sqrt(9.0 * d)
    out = xp.empty_like(a)
    todo = xp.arange(a.size)
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


def _standard_gamma_grad(alpha: ember.Tensor, x: ember.Tensor) -> ember.Tensor:
    """``dx/dalpha`` for ``x ~ Gamma(alpha, 1)`` (implicit reparameterization), in alpha's dtype."""
    with no_grad():
        a = alpha.detach().double()
        xv = x.detach().double()
        h = 1e-5 * a
        dcdf = (ember.igamma(a + h, xv) - ember.igamma(a - h, xv)) / (2 * h)
        log_pdf = (a - 1) * xv.log() - xv - a.lgamma()
        grad = ember.where(dcdf == 0, ember.zeros_like(dcdf), -dcdf * ember.exp(-log_pdf))
        return grad.to(alpha.dtype)


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
        out = _wrap(x)
        ctx.save_for_backward(alpha, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * _standard_gamma_grad(alpha, x), None


def _standard_gamma(alpha: ember.Tensor, generator: Generator | None = None) -> ember.Tensor:
    r"""Draws of Gamma(alpha, 1), one per element of ``alpha`` (same shape and dtype), clamped
    below by the dtype's smallest normal number; differentiable with respect to ``alpha``.

    Args:
        alpha (Tensor): positive concentrations.
        generator (Generator, optional): the generator to draw with.
    """
    return _StandardGamma.apply(alpha, generator)


def _sample_dirichlet(concentration: ember.Tensor, generator=None) -> ember.Tensor:
    r"""Draws of Dirichlet(concentration) along the last dim, as normalized Gamma draws;
    differentiable with respect to ``concentration`` through the Gamma draws."""
    gammas = _standard_gamma(concentration, generator)
    x = gammas / gammas.sum(-1, keepdim=True)
    return x.clamp(min=ember.finfo(x.dtype).tiny)
