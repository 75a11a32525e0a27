"""NAdam: Adam with Nesterov momentum."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _adam_defaults,
    _bump,
    _check,
    _Half,
    _half,
    _lerp_,
    _params_with_grad,
    _scalar,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["NAdam"]


def _nadam_half_(xp, d, g, m, v, lr, beta1, beta2, eps, wd, dec, bc2, c1, c2, fe) -> None:
    """NAdam's update of a float16/bfloat16 parameter ``d`` (moments ``m``, ``v``) in float32,
    rounded after each of torch's in-place ops (see ``_Half``); ``c1``/``c2`` are the gradient's
    and the momentum's step sizes. torch's foreach path divides the rounded square root by
    sqrt(bc2) where its single-tensor loop takes the root of the rounded quotient."""
    h = _Half(d.dtype, fe)
    g, mf, vf = h.moments(d, h.f(g), m, v, lr, wd, dec, beta1, beta2)
    m[...] = mf
    v[...] = vf
    if fe:
        den = h.r(h.r(xp.sqrt(vf)) / h.s(bc2**0.5))
    else:
        den = h.r(xp.sqrt(h.r(vf / h.s(bc2))))
    den = h.r(den + h.alpha(eps))
    d[...] = h.r(h.f(d) + h.s(-c1) * g / den) + h.s(-c2) * mf / den


class NAdam(Optimizer):
    """torch.optim.NAdam."""

    _setstate_group_defaults = (
        ("maximize", False),
        ("foreach", None),
        ("capturable", False),
        ("differentiable", False),
        ("decoupled_weight_decay", False),
    )
    _setstate_tensor_state = ("step", "mu_product")

    _capturable_what = (
        "params, mu_products and state_steps",
        "params, mu_products, and state_steps",
    )

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        defaults = _adam_defaults(
            lr,
            betas,
            eps,
            weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One NAdam step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                beta1, beta2 = map(_val, group["betas"])
                eps, wd, md = group["eps"], _val(group["weight_decay"]), group["momentum_decay"]
                for p, g, xp in _params_with_grad(group):
                    st, step = self._step_state(
                        p, mu_product=lambda p: _scalar(1.0), exp_avg=_zeros, exp_avg_sq=_zeros
                    )
                    d = p._data
                    bc2 = 1 - beta2**step
                    dec = group["decoupled_weight_decay"]
                    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
                    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
                    mp = st["mu_product"]._data
                    mp *= mu
                    mu_prod = float(mp)
                    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
                    if _half(d):
                        c1 = lr * (1.0 - mu) / (1.0 - mu_prod)
                        c2 = lr * mu_next / (1.0 - mu_prod * mu_next)
                        hargs = (lr, beta1, beta2, eps, wd, dec, bc2, c1, c2)
                        _nadam_half_(xp, d, g, m, v, *hargs, bool(group["foreach"]))
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd, dec)
                    _lerp_(xp, m, g, 1 - beta1)
                    v *= beta2
                    v += (1 - beta2) * (g * g)
                    denom = xp.sqrt(v / bc2)
                    denom += eps
                    d -= (lr * (1.0 - mu) / (1.0 - mu_prod)) * (g / denom)
                    d -= (lr * mu_next / (1.0 - mu_prod * mu_next)) * (m / denom)
                    _bump(p)
        return loss
