"""Adadelta."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _bump,
    _check,
    _check_lr,
    _params_with_grad,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """torch.optim.Adadelta."""

    _capturable_xla = (False, False)

    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adadelta step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
                for p, g, xp in _params_with_grad(group):
                    st, _ = self._step_state(p, square_avg=_zeros, acc_delta=_zeros)
                    d = p._data
                    g = _weight_decay(g, d, lr, wd)
                    sq, acc = st["square_avg"]._data, st["acc_delta"]._data
                    sq *= rho
                    sq += (1 - rho) * (g * g)
                    std = xp.sqrt(sq + eps)
                    delta = xp.sqrt(acc + eps)
                    delta /= std
                    delta *= g
                    acc *= rho
                    acc += (1 - rho) * (delta * delta)
                    d -= lr * delta
                    _bump(p)
        return loss
