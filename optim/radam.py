"""RAdam: rectified Adam."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _adam_defaults,
    _bump,
    _lerp_,
    _params_with_grad,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """torch.optim.RAdam."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
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
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RAdam step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                beta1, beta2 = group["betas"]
                eps, wd = group["eps"], group["weight_decay"]
                for p, g, xp in _params_with_grad(group):
                    st, step = self._step_state(p, exp_avg=_zeros, exp_avg_sq=_zeros)
                    d = p._data
                    g = _weight_decay(g, d, lr, wd, group["decoupled_weight_decay"])
                    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
                    _lerp_(xp, m, g, 1 - beta1)
                    v *= beta2
                    v += (1 - beta2) * (g * g)
                    bc1 = 1 - beta1**step
                    bc2 = 1 - beta2**step
                    mhat = m / bc1
                    rho_inf = 2 / (1 - beta2) - 1
                    rho_t = rho_inf - 2 * step * (beta2**step) / bc2
                    if rho_t > 5.0:
                        rect = math.sqrt(
                            (rho_t - 4)
                            * (rho_t - 2)
                            * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                        )
                        adaptive = math.sqrt(bc2) / (xp.sqrt(v) + eps)
                        d -= mhat * lr * adaptive * rect
                    else:
                        d -= mhat * lr
                    _bump(p)
        return loss
