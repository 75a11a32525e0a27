"""Adadelta."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _bump,
    _check,
    _check_lr,
    _Half,
    _half,
    _params_with_grad,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["Adadelta"]


def _adadelta_half_(xp, d, g, sq, acc, lr, rho, eps, wd, fe) -> None:
    """Adadelta's update of a float16/bfloat16 parameter ``d`` (accumulators ``sq``, ``acc``) in
    float32, rounded after each of torch's ops (see ``_Half``)."""
    h = _Half(d.dtype, fe)
    g = h.f(g)
    if wd:
        g = h.r(g + h.alpha(wd) * h.f(d))
    sqf = h.addcmul(h.r(h.f(sq) * h.mul(rho)), g, g, 1 - rho)
    sq[...] = sqf
    std = h.r(xp.sqrt(h.r(sqf + h.alpha(eps))))
    accf = h.f(acc)
    delta = h.r(h.r(h.r(xp.sqrt(h.r(accf + h.alpha(eps)))) / std) * g)
    acc[...] = h.addcmul(h.r(accf * h.mul(rho)), delta, delta, 1 - rho)
    d[...] = h.f(d) + h.alpha(-lr) * delta


class Adadelta(Optimizer):
    """torch.optim.Adadelta."""

    _setstate_group_defaults = (
        ("foreach", None),
        ("maximize", False),
        ("differentiable", False),
        ("capturable", False),
    )
    _setstate_tensor_state = ("step",)

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
                rho, eps, wd = group["rho"], group["eps"], _val(group["weight_decay"])
                for p, g, xp in _params_with_grad(group):
                    st, _ = self._step_state(p, square_avg=_zeros, acc_delta=_zeros)
                    d = p._data
                    sq, acc = st["square_avg"]._data, st["acc_delta"]._data
                    if _half(d):
                        hargs = (lr, rho, eps, wd, bool(group["foreach"]))
                        _adadelta_half_(xp, d, g, sq, acc, *hargs)
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd)
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
