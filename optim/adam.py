"""Adam and AdamW."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..core.kernels.fused_optim import adam_step
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

__all__ = ["Adam"]


class Adam(Optimizer):
    """torch.optim.Adam (``decoupled_weight_decay=True`` is AdamW)."""

    _sparse_msg = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        defaults = _adam_defaults(
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One Adam step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                beta1, beta2 = (_val(b) for b in group["betas"])
                eps, wd, ams = group["eps"], group["weight_decay"], group["amsgrad"]
                decoupled = group.get("decoupled_weight_decay", False)
                for p, g, xp in _params_with_grad(group):
                    st, step = self._step_state(
                        p, exp_avg=_zeros, exp_avg_sq=_zeros, max_exp_avg_sq=_zeros if ams else None
                    )
                    d = p._data
                    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
                    bc1 = 1 - beta1**step
                    bc2s = math.sqrt(1 - beta2**step)
                    mx = st["max_exp_avg_sq"]._data if ams else None
                    if d.ndim == 0:  # numpy makes 0-d results scalars: update 1-element views
                        d, m, v, g = d.reshape(1), m.reshape(1), v.reshape(1), xp.reshape(g, (1,))
                        mx = None if mx is None else mx.reshape(1)
                    args = (lr, beta1, beta2, eps, wd, bc1, bc2s, decoupled)
                    if adam_step(xp, d, g, m, v, mx, *args):  # one kernel (cupy)
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd, decoupled)
                    # one scratch array for the whole update (numpy temporaries cost most)
                    if abs(1 - beta1) < 0.5:
                        tmp = xp.subtract(g, m)
                        tmp *= 1 - beta1
                        m += tmp
                    else:
                        _lerp_(xp, m, g, 1 - beta1)
                        tmp = xp.empty_like(m)
                    xp.multiply(g, g, out=tmp)
                    tmp *= 1 - beta2
                    v *= beta2
                    v += tmp
                    if ams:
                        xp.maximum(mx, v, out=mx)
                        xp.sqrt(mx, out=tmp)
                    else:
                        xp.sqrt(v, out=tmp)
                    tmp /= bc2s
                    tmp += eps
                    xp.divide(m, tmp, out=tmp)
                    tmp *= lr / bc1
                    d -= tmp
                    _bump(p)
        return loss
