"""Rprop: resilient backpropagation."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _bump,
    _check,
    _check_lr,
    _full,
    _params_with_grad,
    _val,
    _zeros,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """torch.optim.Rprop."""

    _setstate_group_defaults = (
        ("foreach", None),
        ("maximize", False),
        ("differentiable", False),
        ("capturable", False),
    )
    _setstate_tensor_state = ("step",)

    _capturable_xla = (True, True)

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Rprop step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                etaminus, etaplus = group["etas"]
                smin, smax = group["step_sizes"]
                for p, g, xp in _params_with_grad(group):
                    st, _ = self._step_state(
                        p, prev=_zeros, step_size=lambda p, g0=group: _full(p, _val(g0["lr"]))
                    )
                    d = p._data
                    prev, ss = st["prev"]._data, st["step_size"]._data
                    s = g * prev
                    pos, neg = s > 0, s < 0
                    factor = xp.ones_like(d)
                    factor[pos] = etaplus
                    factor[neg] = etaminus
                    ss *= factor
                    xp.clip(ss, smin, smax, out=ss)
                    g = g.copy()
                    g[neg] = 0
                    d -= xp.sign(g) * ss
                    prev[...] = g
                    _bump(p)
        return loss
