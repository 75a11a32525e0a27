"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    _bump,
    _check,
    _check_lr,
    _Half,
    _half,
    _lr_scalar_type,
    _params_with_grad,
    _promote_scalar_types,
    _scalar,
    _scalar_pow,
    _val,
    _weight_decay,
    _zeros,
)

__all__ = ["ASGD"]


def _asgd_half_(xp, d, g, ax, eta, mu, lambd, wd, fe) -> None:
    """ASGD's update of a float16/bfloat16 parameter ``d`` (average ``ax``) in float32, rounded
    after each of torch's ops (see ``_Half``). torch's foreach path adds ``lambd * param`` to
    the gradient and always averages with ``mu``."""
    h = _Half(d.dtype, fe)
    g = h.f(g)
    if wd:
        g = h.r(g + h.alpha(wd) * h.f(d))
    if fe:
        g = h.r(g + h.alpha(lambd) * h.f(d))
        df = h.addcmul(h.f(d), g, h.F(eta), -1)
        d[...] = df
        ax[...] = h.addcmul(h.f(ax), h.r(df - h.f(ax)), h.F(mu), 1)
        return
    df = h.r(h.r(h.f(d) * h.s(1 - lambd * eta)) + h.alpha(-eta) * g)
    d[...] = df
    if mu != 1:
        axf = h.f(ax)
        ax[...] = axf + h.r(h.r(df - axf) * h.s(mu))
    else:
        ax[...] = d


class ASGD(Optimizer):
    """torch.optim.ASGD."""

    _setstate_group_defaults = (
        ("foreach", None),
        ("maximize", False),
        ("differentiable", False),
        ("capturable", False),
    )
    _setstate_tensor_state = ("step", "eta", "mu")

    _capturable_what = ("params, mus, etas, and state_steps",) * 2

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_lr(lr)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One ASGD step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                lr_t = _lr_scalar_type(group["lr"])
                lambd, alpha, t0, wd = (
                    group["lambd"],
                    group["alpha"],
                    group["t0"],
                    _val(group["weight_decay"]),
                )
                for p, g, xp in _params_with_grad(group):
                    st, step = self._step_state(
                        p, eta=lambda p, lr=lr: _scalar(lr), mu=lambda p: _scalar(1.0), ax=_zeros
                    )
                    d = p._data
                    eta = float(st["eta"]._data)
                    mu_t = st["mu"]._data
                    ax = st["ax"]._data
                    if _half(d):
                        hargs = (eta, float(mu_t), lambd, wd, bool(group["foreach"]))
                        _asgd_half_(xp, d, g, ax, *hargs)
                        self._next_eta_mu(st, lr, lambd, alpha, t0, step, hargs[-1], lr_t)
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd)
                    if group["foreach"]:
                        # torch's foreach implementation rounds as param - eta * (grad + lambd *
                        # param) and always averages with mu (float64 results differ in the last
                        # bits from the single-tensor order below)
                        d -= eta * (g + lambd * d)
                        ax += (d - ax) * mu_t
                        self._next_eta_mu(st, lr, lambd, alpha, t0, step, True, lr_t)
                        _bump(p)
                        continue
                    d *= 1 - lambd * eta
                    d -= eta * g
                    if float(mu_t) != 1:
                        ax += (d - ax) * mu_t
                    else:
                        ax[...] = d
                    self._next_eta_mu(st, lr, lambd, alpha, t0, step, False, lr_t)
                    _bump(p)
        return loss

    @staticmethod
    def _next_eta_mu(
        st: dict,
        lr: float,
        lambd: float,
        alpha: float,
        t0: float,
        step: float,
        fe: bool = False,
        lr_t: type = float,
    ):
        # torch computes the next eta in tensor arithmetic when lr is a tensor (in its dtype) or
        # in the foreach path (with the float32 step counter: float32 unless lr is a float64
        # tensor), else in Python floats; a Python float is stored through a float32 tensor
        # (torch.as_tensor), as is the next mu
        t = _promote_scalar_types(lr_t, np.float32) if fe else lr_t
        lambd_lr = t(lambd * lr) if lr_t is float else t(lambd) * t(lr)
        x = _scalar_pow(t(1) + lambd_lr * t(step), alpha, t)
        # a Python float divided by a tensor is its reciprocal times the float
        eta = (t(1) / x) * t(lr) if fe and lr_t is float else t(lr) / x
        st["eta"]._data[...] = np.float32(eta) if t is float else eta
        st["mu"]._data[...] = np.float32(1 / max(1, step - t0))
