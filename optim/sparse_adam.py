"""SparseAdam (dense fallback: only the nonzero entries of a gradient are updated, as for
a sparse gradient)."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _bump,
    _check,
    _check_lr,
    _params_with_grad,
    _val,
    _zeros,
)

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam; ember has no sparse tensors, so a dense gradient's nonzero entries
    play the role of the sparse gradient's values."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_lr(lr)
        _check(0.0 < eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})

    def step(self, closure=None):
        """One SparseAdam step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                beta1, beta2 = group["betas"]
                eps = group["eps"]
                for p, g, xp in _params_with_grad(group):
                    st = self.state[p]
                    if not st:
                        st["step"] = 0
                        st["exp_avg"] = _zeros(p)
                        st["exp_avg_sq"] = _zeros(p)
                    st["step"] += 1
                    step = st["step"]
                    idx = g != 0
                    gv = g[idx]
                    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
                    om, ov = m[idx], v[idx]
                    um = (gv - om) * (1 - beta1)
                    m[idx] = om + um
                    uv = (gv * gv - ov) * (1 - beta2)
                    v[idx] = ov + uv
                    numer = um + om
                    denom = xp.sqrt(uv + ov) + eps
                    bc1 = 1 - beta1**step
                    bc2 = 1 - beta2**step
                    step_size = lr * math.sqrt(bc2) / bc1
                    d = p._data
                    d[idx] += -step_size * (numer / denom)
                    _bump(p)
        return loss
