"""RAdam: rectified Adam."""

from __future__ import annotations

import math

import numpy as np

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

__all__ = ["RAdam"]


def _radam_half_(xp, d, g, m, v, lr, beta1, beta2, eps, wd, dec, bc1, bc2, rect, fe) -> None:
    """RAdam's update of a float16/bfloat16 parameter ``d`` (moments ``m``, ``v``) in float32,
    rounded after each of torch's ops (see ``_Half``); ``rect`` is 0 while the variance is not
    tractable. torch's foreach path folds the step into one per-element factor
    (``1 / ((sqrt(v) + eps) / -(lr * rect * sqrt(bc2) / bc1)) - lr * unrectified / bc1``) that
    multiplies the first moment, where its single-tensor loop scales the bias-corrected moment
    op by op."""
    h = _Half(d.dtype, fe)
    g, mf, vf = h.moments(d, h.f(g), m, v, lr, wd, dec, beta1, beta2)
    m[...] = mf
    v[...] = vf
    if fe:
        if rect > 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                buf = h.r(h.r(xp.sqrt(vf)) + h.alpha(eps))
                buf = h.r(buf / h.s(-(bc2**0.5) * (lr * rect / bc1)))
                buf = h.r(h.s(1) / buf)
        else:
            # while rect is 0 torch divides by -0.0: 1 / (x / -0.0) is -0.0, except where x
            # rounded to 0 (float16 exp_avg_sq underflows), where torch makes NaN; that bug is
            # not copied: the adaptive term is 0 there too
            buf = xp.full(vf.shape, -0.0, dtype=vf.dtype)
        buf = h.r(buf + h.alpha(-(lr * (0.0 if rect > 0 else 1.0) / bc1)))
        d[...] = h.addcmul(h.f(d), mf, buf, 1)
        return
    upd = h.r(h.r(mf / h.s(bc1)) * h.s(lr))
    if rect:
        # a Python number over a tensor is the tensor's reciprocal times the number in torch
        ad = h.r(h.r(h.s(1) / h.r(h.r(xp.sqrt(vf)) + h.alpha(eps))) * h.s(bc2**0.5))
        upd = h.r(h.r(upd * ad) * h.s(rect))
    d[...] = h.f(d) - upd


def _radam_terms(beta1: float, beta2: float, step: float) -> tuple[float, float, float]:
    """The bias corrections and the variance rectification (0 while it is intractable) of a
    16-bit step, in torch's float64 arithmetic."""
    bc1, bc2 = 1 - beta1**step, 1 - beta2**step
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bc2
    rect = 0.0
    if rho_t > 5.0:
        rect = (
            (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        ) ** 0.5
    return bc1, bc2, rect


class RAdam(Optimizer):
    """torch.optim.RAdam."""

    _setstate_group_defaults = (
        ("foreach", None),
        ("maximize", False),
        ("differentiable", False),
        ("decoupled_weight_decay", False),
        ("capturable", False),
    )
    _setstate_tensor_state = ("step",)

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        defaults = _adam_defaults(
            lr,
            betas,
            eps,
            weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One RAdam step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                beta1, beta2 = map(_val, group["betas"])
                eps, wd = group["eps"], _val(group["weight_decay"])
                for p, g, xp in _params_with_grad(group):
                    st, step = self._step_state(p, exp_avg=_zeros, exp_avg_sq=_zeros)
                    d = p._data
                    dec = group["decoupled_weight_decay"]
                    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
                    if _half(d):
                        hargs = (lr, beta1, beta2, eps, wd, dec, *_radam_terms(beta1, beta2, step))
                        _radam_half_(xp, d, g, m, v, *hargs, bool(group["foreach"]))
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd, dec)
                    _lerp_(xp, m, g, 1 - beta1)
                    v *= beta2
                    v += (1 - beta2) * (g * g)
                    bc1 = 1 - beta1**step
                    bc2 = 1 - beta2**step
                    mhat = m / bc1
                    rho_inf = 2 / (1 - beta2) - 1
                    rho_t = rho_inf - 2 * step * (beta2**step) / bc2
                    if rho_t > 5.0:
                        rect = math.sqrt(
                            (rho_t - 4)
                            * (rho_t - 2)
                            * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                        )
                        adaptive = math.sqrt(bc2) / (xp.sqrt(v) + eps)
                        d -= mhat * lr * adaptive * rect
                    else:
                        d -= mhat * lr
                    _bump(p)
        return loss
