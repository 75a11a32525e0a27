"""Adam and AdamW."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..core.kernels.fused_optim import adam_step
from ..core.tensor import Tensor
from .optimizer import (
    Optimizer,
    _adam_defaults,
    _bump,
    _lerp_,
    _lr_scalar_type,
    _params_with_grad,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["Adam"]


def _adam_half_(xp, d, g, m, v, mx, lr, beta1, beta2, eps, wd, bc1, step_size, bc2s, dec, fused):
    """Adam's update of a float16/bfloat16 parameter ``d`` (moments ``m``, ``v``, AMSGrad's
    ``mx``, all of its dtype) in float32, rounded where torch rounds.

    In half-precision numpy every operation rounds, which put about half the moments one unit
    off torch's after a few steps. torch's fused cpu kernel rounds each tensor once, when it
    stores it; its single-tensor loop rounds after each in-place op (``mul_``, ``lerp_``,
    ``addcmul_``, ``sqrt``, ``div``, ``add_``, ``addcdiv_``)."""
    f = xp.float32
    dt = d.dtype
    gf, mf = g.astype(f), m.astype(f)

    def rnd(a):
        return a.astype(dt).astype(f)

    if fused:
        pf = d.astype(f)
        if wd:
            if dec:
                pf -= f(lr * wd) * pf
            else:
                gf += f(wd) * pf
        mf += f(1 - beta1) * (gf - mf)
        vf = v.astype(f) * f(beta2) + f(1 - beta2) * gf * gf
        if mx is not None:
            vmax = xp.maximum(mx.astype(f), vf)
            mx[...] = vmax
        den = xp.sqrt(vf if mx is None else vmax) / f(bc2s) + f(eps)
        pf -= f(lr / bc1) * mf / den
    else:
        if wd:
            if dec:
                d *= f(1 - lr * wd)  # param.mul_: one rounding
            else:
                # grad.add(param, alpha=wd): torch casts alpha to the half dtype first
                gf = rnd(gf + f(dt.type(wd)) * d.astype(f))
        pf = d.astype(f)
        mf = rnd(mf + f(1 - beta1) * (gf - mf))
        vf = rnd(rnd(v.astype(f) * f(beta2)) + f(1 - beta2) * gf * gf)
        if mx is not None:
            xp.maximum(mx, vf.astype(dt), out=mx)
        den = rnd(rnd(rnd(xp.sqrt(vf if mx is None else mx.astype(f))) / f(bc2s)) + f(eps))
        pf += f(-step_size) * (mf / den)
    d[...] = pf
    m[...] = mf
    v[...] = vf


def _check_tensor_betas(betas, foreach_uncapturable: bool) -> None:
    """Adam's betas are two floats or two one-element tensors (ints are refused too)."""
    if not (
        all(isinstance(b, float) for b in betas[:2])
        or all(isinstance(b, Tensor) for b in betas[:2])
    ):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, b in enumerate(betas[:2]):
        if isinstance(b, Tensor):
            if foreach_uncapturable:
                raise ValueError(
                    f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True"
                )
            if b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


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
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
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
        _check_tensor_betas(betas, foreach and not capturable)
        super().__init__(params, defaults)
        self._check_fused()

    def step(self, closure=None):
        """One Adam step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                lr_t = _lr_scalar_type(group["lr"])
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
                    if d.dtype.itemsize == 2 and d.dtype.kind in "fV":  # V: bfloat16
                        step_size = float(lr_t(lr_t(lr) / lr_t(bc1)))
                        hargs = (lr, beta1, beta2, eps, wd, bc1, step_size, bc2s, decoupled)
                        _adam_half_(xp, d, g, m, v, mx, *hargs, group.get("fused"))
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd, decoupled, lr_t)
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
                    tmp *= float(lr_t(lr_t(lr) / lr_t(bc1)))
                    d -= tmp
                    _bump(p)
        return loss
