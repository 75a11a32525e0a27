"""Adam and AdamW."""

from __future__ import annotations

import math

import numpy as np

from ..autograd.grad_mode import no_grad
from ..core.kernels.fused_optim import adam_step
from ..core.tensor import Tensor
from .optimizer import (
    Optimizer,
    _adam_defaults,
    _bump,
    _Half,
    _lerp_,
    _lr_scalar_type,
    _params_with_grad,
    _promote_scalar_types,
    _scalar_pow,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["Adam"]


def _adam_half_(
    xp, d, g, m, v, mx, lr, beta1, beta2, eps, wd, bc1, step_size, bc2s, dec, fused, fe
) -> None:
    """Adam's update of a float16/bfloat16 parameter ``d`` (moments ``m``, ``v``, AMSGrad's
    ``mx``, all of its dtype) in float32, rounded where torch rounds.

    torch's fused cpu kernel computes in float32 and rounds each tensor once, when it stores it;
    its single-tensor and foreach loops round after each op (see ``_Half``: the fused
    ``lerp_``/``addcmul_``, eps rounded to the dtype, the foreach ``mul_`` multipliers too)."""
    h = _Half(d.dtype, fe)
    gf, mf = h.f(g), h.f(m)
    if fused:
        pf = h.f(d)
        if wd:
            if dec:
                pf *= h.s(1 - lr * wd)
            else:
                gf += h.s(wd) * pf
        # the kernel's lerp and its second-moment update fuse their multiply-add, as the
        # single-tensor lerp_/addcmul_ do, but keep float32 between them
        mf = h.lerp32(mf, gf, 1 - beta1)
        vf = h.addcmul32(h.f(v) * h.s(beta2), gf, gf, 1 - beta2)
        if mx is not None:
            vf_max = xp.maximum(h.f(mx), vf)
            mx[...] = vf_max
        den = xp.sqrt(vf if mx is None else vf_max) / h.s(bc2s) + h.s(eps)
        pf -= h.s(lr / bc1) * mf / den
    else:
        gf, mf, vf = h.moments(d, gf, m, v, lr, wd, dec, beta1, beta2)
        pf = h.f(d)
        if mx is not None:
            xp.maximum(mx, vf.astype(d.dtype), out=mx)
        den = h.r(h.r(xp.sqrt(vf if mx is None else h.f(mx))) / h.s(bc2s))
        den = h.r(den + h.alpha(eps))
        pf = pf + h.s(-step_size) * mf / den
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


def _refuse_foreach_tensors(group: dict) -> None:
    """torch's foreach Adam (capturable=False) refuses a tensor lr or betas when it steps a group
    with gradients (a group's own options, which the constructor does not check)."""
    msg = "as a Tensor is not supported for capturable=False and foreach=True"
    if isinstance(group["lr"], Tensor):
        raise RuntimeError(f"lr {msg}")  # noqa: TRY004 - torch's types
    for i, b in enumerate(group["betas"][:2], 1):
        if isinstance(b, Tensor):
            raise ValueError(f"beta{i} {msg}")  # noqa: TRY004


class Adam(Optimizer):
    """torch.optim.Adam (``decoupled_weight_decay=True`` is AdamW)."""

    _capturable_first = True

    _setstate_group_defaults = (
        ("amsgrad", False),
        ("maximize", False),
        ("foreach", None),
        ("capturable", False),
        ("differentiable", False),
        ("decoupled_weight_decay", False),
        ("fused", None),
    )
    _setstate_tensor_state = ("step",)

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

    def _complex_error(self, group: dict, p: Tensor) -> Exception | None:
        if group.get("fused"):  # torch's fused kernels take real floating parameters only
            return RuntimeError(
                "`fused=True` requires all the params to be floating point Tensors of supported "
                "devices: ['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone'] but "
                f"torch.{p.dtype.name} and {p.device.type}"
            )
        return super()._complex_error(group, p)

    def step(self, closure=None):
        """One Adam step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                lr_t = _lr_scalar_type(group["lr"])
                beta1, beta2 = (_val(b) for b in group["betas"])
                b_t = _lr_scalar_type(group["betas"][0])
                s_t = _promote_scalar_types(lr_t, b_t)
                one_m_beta2 = float(b_t(1 - b_t(beta2)))
                eps, wd, ams = group["eps"], _val(group["weight_decay"]), group["amsgrad"]
                decoupled = group.get("decoupled_weight_decay", False)
                todo = _params_with_grad(group)
                if todo and group["foreach"] and not group["capturable"]:
                    _refuse_foreach_tensors(group)
                for p, g, xp in todo:
                    st, step = self._step_state(
                        p, exp_avg=_zeros, exp_avg_sq=_zeros, max_exp_avg_sq=_zeros if ams else None
                    )
                    d = p._data
                    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
                    # tensor betas: the bias corrections and 1 - beta2 are 0-d tensors of
                    # their dtype in torch, rounded to it
                    if b_t is float:  # (math.sqrt: numpy's on a scalar costs ~1 us a param)
                        bc1, bc2s = 1 - beta1**step, math.sqrt(1 - beta2**step)
                    else:
                        bc1 = float(b_t(1 - _scalar_pow(beta1, step, b_t)))
                        bc2s = float(np.sqrt(b_t(1 - _scalar_pow(beta2, step, b_t))))
                    mx = st["max_exp_avg_sq"]._data if ams else None
                    if d.ndim == 0:  # numpy makes 0-d results scalars: update 1-element views
                        d, m, v, g = d.reshape(1), m.reshape(1), v.reshape(1), xp.reshape(g, (1,))
                        mx = None if mx is None else mx.reshape(1)
                    args = (lr, beta1, beta2, eps, wd, bc1, bc2s, decoupled)
                    if adam_step(xp, d, g, m, v, mx, *args):  # one kernel (cupy)
                        _bump(p)
                        continue
                    if d.dtype.itemsize == 2 and d.dtype.kind in "fV":  # V: bfloat16
                        step_size = float(s_t(s_t(lr) / s_t(bc1)))
                        hargs = (lr, beta1, beta2, eps, wd, bc1, step_size, bc2s, decoupled)
                        _adam_half_(
                            xp, d, g, m, v, mx, *hargs, group.get("fused"), bool(group["foreach"])
                        )
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
                    tmp *= one_m_beta2
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
                    tmp *= float(s_t(s_t(lr) / s_t(bc1)))
                    d -= tmp
                    _bump(p)
        return loss
