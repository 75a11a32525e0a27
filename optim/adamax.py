"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _adam_defaults,
    _bump,
    _Half,
    _half,
    _lerp_,
    _params_with_grad,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["Adamax"]


def _adamax_half_(xp, d, g, m, u, clr, beta1, beta2, eps, wd, fe) -> None:
    """Adamax's update of a float16/bfloat16 parameter ``d`` (moments ``m``, ``u``) in float32,
    rounded after each of torch's in-place ops (see ``_Half``)."""
    h = _Half(d.dtype, fe)
    g = h.f(g)
    if wd:
        g = h.r(g + h.alpha(wd) * h.f(d))
    mf = h.lerp(h.f(m), g, 1 - beta1)
    m[...] = mf
    uf = xp.maximum(h.r(h.f(u) * h.mul(beta2)), h.r(xp.abs(g) + h.alpha(eps)))
    u[...] = uf
    d[...] = h.f(d) + h.s(-clr) * mf / uf


class Adamax(Optimizer):
    """torch.optim.Adamax."""

    _setstate_group_defaults = (
        ("foreach", None),
        ("maximize", False),
        ("differentiable", False),
        ("capturable", False),
    )
    _setstate_tensor_state = ("step",)

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
        defaults = _adam_defaults(
            lr,
            betas,
            eps,
            weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adamax step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                beta1, beta2 = map(_val, group["betas"])
                eps, wd = group["eps"], _val(group["weight_decay"])
                for p, g, xp in _params_with_grad(group):
                    st, step = self._step_state(p, exp_avg=_zeros, exp_inf=_zeros)
                    d = p._data
                    m, u = st["exp_avg"]._data, st["exp_inf"]._data
                    if _half(d):
                        clr = lr / (1 - beta1**step)
                        hargs = (clr, beta1, beta2, eps, wd, bool(group["foreach"]))
                        _adamax_half_(xp, d, g, m, u, *hargs)
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd)
                    _lerp_(xp, m, g, 1 - beta1)
                    u *= beta2
                    xp.maximum(u, xp.abs(g) + eps, out=u)
                    d -= (lr / (1 - beta1**step)) * (m / u)
                    _bump(p)
        return loss
