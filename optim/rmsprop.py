"""RMSprop."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _bump,
    _check,
    _check_lr,
    _Half,
    _half,
    _lerp_,
    _params_with_grad,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["RMSprop"]


def _rmsprop_half_(xp, d, g, st, lr, alpha, eps, wd, mom, centered, fe) -> None:
    """RMSprop's update of a float16/bfloat16 parameter ``d`` in float32, rounded after each
    of torch's in-place ops (see ``_Half``)."""
    h = _Half(d.dtype, fe)
    g = h.f(g)
    if wd:
        g = h.r(g + h.alpha(wd) * h.f(d))
    sq = st["square_avg"]._data
    sqf = h.addcmul(h.r(h.f(sq) * h.mul(alpha)), g, g, 1 - alpha)
    sq[...] = sqf
    if centered:
        ga = st["grad_avg"]._data
        gaf = h.lerp(h.f(ga), g, 1 - alpha)
        ga[...] = gaf
        avg = h.r(xp.sqrt(h.addcmul(sqf, gaf, gaf, -1)))
    else:
        avg = h.r(xp.sqrt(sqf))
    avg = h.r(avg + h.alpha(eps))
    if mom > 0:
        buf = st["momentum_buffer"]._data
        bf = h.r(h.r(h.f(buf) * h.mul(mom)) + g / avg)
        buf[...] = bf
        d[...] = h.f(d) + h.alpha(-lr) * bf
    else:
        d[...] = h.f(d) + h.s(-lr) * g / avg


class RMSprop(Optimizer):
    """torch.optim.RMSprop."""

    _setstate_group_defaults = (
        ("momentum", 0),
        ("centered", False),
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
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RMSprop step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                alpha, eps, wd = group["alpha"], group["eps"], _val(group["weight_decay"])
                mom, centered = _val(group["momentum"]), group["centered"]
                for p, g, xp in _params_with_grad(group):
                    st, _ = self._step_state(
                        p,
                        square_avg=_zeros,
                        momentum_buffer=_zeros if mom > 0 else None,
                        grad_avg=_zeros if centered else None,
                    )
                    d = p._data
                    if _half(d):
                        _rmsprop_half_(
                            xp, d, g, st, lr, alpha, eps, wd, mom, centered, bool(group["foreach"])
                        )
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd)
                    sq = st["square_avg"]._data
                    sq *= alpha
                    sq += (1 - alpha) * (g * g)
                    if centered:
                        ga = st["grad_avg"]._data
                        _lerp_(xp, ga, g, 1 - alpha)
                        avg = xp.sqrt(sq - ga * ga)
                    else:
                        avg = xp.sqrt(sq)
                    avg += eps
                    if mom > 0:
                        buf = st["momentum_buffer"]._data
                        buf *= mom
                        buf += g / avg
                        d -= lr * buf
                    else:
                        d -= lr * (g / avg)
                    _bump(p)
        return loss
