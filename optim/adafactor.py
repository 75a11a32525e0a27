"""Adafactor: factored second-moment estimates."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..core.dtype import finfo
from ..core.tensor import _wrap
from .optimizer import (
    Optimizer,
    _bump,
    _check,
    _check_lr,
    _lerp_,
    _params_with_grad,
    _scalar,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """torch.optim.Adafactor."""

    _setstate_group_defaults = (("foreach", None),)
    _setstate_tensor_state = ("step",)

    _complex_msg = "Adafactor does not support complex parameters"

    def __init__(
        self,
        params,
        lr=1e-2,
        beta2_decay=-0.8,
        eps=(None, 1e-3),
        d=1.0,
        weight_decay=0.0,
        *,
        foreach=None,
        maximize=False,
    ):
        _check_lr(lr, "Learning rate should be >= 0 but is: {}")
        _check(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adafactor step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                eps1, eps2 = group["eps"]
                dclip, wd, b2d = group["d"], _val(group["weight_decay"]), group["beta2_decay"]
                for p, g, xp in _params_with_grad(group):
                    st = self.state[p]
                    d = p._data
                    if not st:
                        st["step"] = _scalar(0.0)
                        if g.ndim > 1:
                            rs = list(g.shape)
                            rs[-1] = 1
                            cs = list(g.shape)
                            cs[-2] = 1
                            # the factored moments are p's squares averaged over one dim
                            # (kept, size 1): named like p, as a keepdim reduction (spec 4.9)
                            st["row_var"] = _wrap(xp.zeros(tuple(rs), d.dtype), p._names)
                            st["col_var"] = _wrap(xp.zeros(tuple(cs), d.dtype), p._names)
                        else:
                            st["variance"] = _zeros(p)
                    e1 = finfo(p.dtype).eps if eps1 is None else eps1  # (bfloat16 too)
                    st, step = self._step_state(p)  # state was created just above
                    beta2_t = step**b2d
                    rho_t = min(lr, 1 / (step**0.5))
                    alpha = max(eps2, float(xp.linalg.norm(d)) / (d.size**0.5)) * rho_t
                    _weight_decay(g, d, lr, wd, decoupled=True)
                    if g.ndim > 1:
                        rv, cv = st["row_var"]._data, st["col_var"]._data
                        row_mean = (g * g).sum(axis=-1, keepdims=True) / g.shape[-1]
                        _lerp_(xp, rv, row_mean, beta2_t)
                        col_mean = (g * g).sum(axis=-2, keepdims=True) / g.shape[-2]
                        _lerp_(xp, cv, col_mean, beta2_t)
                        var = rv @ cv
                        var /= xp.maximum(rv.mean(axis=-2, keepdims=True), e1)
                    else:
                        v = st["variance"]._data
                        _lerp_(xp, v, g * g, beta2_t)
                        var = v.copy()
                    upd = 1 / xp.sqrt(xp.maximum(var, e1 * e1))
                    upd *= g
                    denom = max(1.0, float(xp.linalg.norm(upd)) / ((upd.size**0.5) * dclip))
                    d -= (alpha / denom) * upd
                    _bump(p)
        return loss
