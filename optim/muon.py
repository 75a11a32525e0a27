"""Muon: momentum orthogonalized by Newton-Schulz iterations (2-D parameters only)."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _bump, _check, _check_lr, _lerp_, _params_with_grad, _val, _zeros

__all__ = ["Muon"]


def _round_to_bfloat16(xp, v):
    """v rounded to the nearest bfloat16 (ties to even), as float32: integer ops on the bits,
    so every backend rounds alike (cupy has no bfloat16 arrays)."""
    bits = v.astype(xp.float32).view(xp.uint32)
    bits = (bits + (0x7FFF + ((bits >> 16) & 1))) & 0xFFFF0000
    return xp.where(xp.isnan(v), xp.float32("nan"), bits.view(xp.float32))


def _newton_schulz(xp, g, coeffs, steps: int, eps: float):
    """An approximately orthogonal matrix with g's singular vectors (quintic Newton-Schulz)."""
    # torch's checks, at the step
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(coeffs) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    # torch runs the iteration in bfloat16: float32 math rounded to bfloat16 after every op
    f32 = g.dtype

    def r(v):
        return _round_to_bfloat16(xp, v).astype(f32, copy=False)

    a, b, c = coeffs
    x = r(g)
    transposed = x.shape[0] > x.shape[1]
    if transposed:
        x = x.T
    nrm = float(r(xp.asarray(xp.linalg.norm(x))))
    x = r(x / max(nrm, eps))
    for _ in range(steps):
        gram = r(x @ x.T)
        upd = r(b * gram + c * (gram @ gram))
        x = r(a * x + upd @ x)
    return x.T if transposed else x


class Muon(Optimizer):
    """torch.optim.Muon (Newton-Schulz in the parameter's dtype)."""

    def __init__(
        self,
        params,
        lr=1e-3,
        weight_decay=0.1,
        momentum=0.95,
        nesterov=True,
        ns_coefficients=(3.4445, -4.775, 2.0315),
        eps=1e-7,
        ns_steps=5,
        adjust_lr_fn=None,
    ):
        _check_lr(lr, "Learning rate should be >= 0 but is: {}")
        _check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        _check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def step(self, closure=None):
        """One Muon step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                mom, wd = _val(group["momentum"]), _val(group["weight_decay"])
                for p, g, xp in _params_with_grad(group):
                    st = self.state[p]
                    if not st:
                        st["momentum_buffer"] = _zeros(p)
                    buf = st["momentum_buffer"]._data
                    _lerp_(xp, buf, g, 1 - mom)
                    if group["nesterov"]:
                        upd = g.copy()
                        _lerp_(xp, upd, buf, mom)
                    else:
                        upd = buf
                    upd = _newton_schulz(
                        xp, upd, group["ns_coefficients"], group["ns_steps"], group["eps"]
                    )
                    a, b = p._data.shape[:2]
                    if group["adjust_lr_fn"] == "match_rms_adamw":
                        alr = 0.2 * math.sqrt(max(a, b)) * lr
                    else:
                        alr = math.sqrt(max(1, a / b)) * lr
                    d = p._data
                    d *= 1 - lr * wd
                    d -= alr * upd
                    _bump(p)
        return loss
