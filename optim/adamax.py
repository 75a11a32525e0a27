"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _bump,
    _check_adam_args,
    _check_lr,
    _lerp_,
    _params_with_grad,
    _scalar,
    _val,
    _zeros,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """torch.optim.Adamax."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adamax step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                beta1, beta2 = group["betas"]
                eps, wd = group["eps"], group["weight_decay"]
                for p, g, xp in _params_with_grad(group):
                    st = self.state[p]
                    if not st:
                        st["step"] = _scalar(0.0)
                        st["exp_avg"] = _zeros(p)
                        st["exp_inf"] = _zeros(p)
                    d = p._data
                    st["step"]._data += 1
                    step = float(st["step"]._data)
                    if wd != 0:
                        g = g + wd * d
                    m, u = st["exp_avg"]._data, st["exp_inf"]._data
                    _lerp_(xp, m, g, 1 - beta1)
                    u *= beta2
                    xp.maximum(u, xp.abs(g) + eps, out=u)
                    d -= (lr / (1 - beta1**step)) * (m / u)
                    _bump(p)
        return loss
