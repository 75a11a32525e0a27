"""Adagrad."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..core.tensor import Tensor
from .optimizer import (
    Optimizer,
    SparseRows,
    _bump,
    _check,
    _check_lr,
    _full,
    _Half,
    _half,
    _params_with_grad,
    _scalar,
    _val,
    _weight_decay,
)

__all__ = ["Adagrad"]


def _adagrad_half_(xp, d, g, s, clr, eps, wd, fe, maximize) -> None:
    """Adagrad's update of a float16/bfloat16 parameter ``d`` (accumulator ``s``) in float32,
    rounded after each of torch's in-place ops (see ``_Half``). torch's foreach path scales the
    gradient by -clr and divides it by the denominator as two rounded ops."""
    h = _Half(d.dtype, fe)
    g = h.f(g)
    if wd:
        g = h.r(g + h.alpha(wd) * h.f(d))
    sf = h.addcmul(h.f(s), g, g, 1)
    s[...] = sf
    std = h.r(h.r(xp.sqrt(sf)) + h.alpha(eps))
    if fe:
        # an in-place _foreach_mul_ rounds its multiplier to the dtype, the copying one not
        k = h.mul(-clr) if wd or maximize else h.s(-clr)
        d[...] = h.f(d) + h.r(g * k) / std
    else:
        d[...] = h.f(d) + h.s(-clr) * g / std


class Adagrad(Optimizer):
    """torch.optim.Adagrad. Takes sparse gradients (embedding(sparse=True)) without weight
    decay."""

    _setstate_group_defaults = (
        ("foreach", None),
        ("maximize", False),
        ("differentiable", False),
        ("fused", None),
    )
    _setstate_tensor_state = ("step",)

    _sparse_wd_msg = "weight_decay option is not compatible with sparse gradients"

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        _check_lr(lr)
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(
            0.0 <= initial_accumulator_value,
            f"Invalid initial_accumulator_value value: {initial_accumulator_value}",
        )
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        self._check_fused()
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p) -> None:
        """``step`` and ``sum`` of ``p``: made for every parameter by the constructor, and at
        its first step for a parameter added later (add_param_group). The accumulator starts
        at the constructor's ``initial_accumulator_value`` whatever the group says, and at
        ``v + vj`` for a complex parameter, as in torch."""
        v = self.defaults["initial_accumulator_value"]
        st = self.state[p]
        st["step"] = _scalar(0.0)
        st["sum"] = _full(p, complex(v, v) if p._data.dtype.kind == "c" else v)

    def share_memory(self) -> None:
        """No-op (ember tensors are process-local)."""

    def _complex_error(self, group: dict, p: Tensor) -> Exception | None:
        if group.get("fused"):
            return RuntimeError("`fused` does not support sparse grad or complex param")
        return super()._complex_error(group, p)

    def step(self, closure=None):
        """One Adagrad step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                eps, wd, lr_decay = group["eps"], _val(group["weight_decay"]), group["lr_decay"]
                for p, g, xp in _params_with_grad(group, sparse_rows=True):
                    if not self.state[p]:  # a parameter of a group added after __init__
                        self._init_state(p)
                    st, step = self._step_state(p)
                    d = p._data
                    clr = lr / (1 + (step - 1) * lr_decay)
                    s = st["sum"]._data
                    if type(g) is SparseRows:  # embedding(sparse=True): only its rows move
                        rs = s[g.index] + g.values * g.values
                        s[g.index] = rs
                        d[g.index] -= clr * (g.values / (xp.sqrt(rs) + eps))
                        _bump(p)
                        continue
                    if _half(d):
                        fe, mx = bool(group["foreach"]), group["maximize"]
                        _adagrad_half_(xp, d, g, s, clr, eps, wd, fe, mx)
                        _bump(p)
                        continue
                    g = _weight_decay(g, d, lr, wd)
                    s += g * g
                    std = xp.sqrt(s)
                    std += eps
                    d -= clr * (g / std)
                    _bump(p)
        return loss
