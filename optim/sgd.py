"""SGD: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..core.kernels.fused_optim import sgd_fusable, sgd_step
from ..core.tensor import _wrap
from .optimizer import (
    Optimizer,
    SparseRows,
    _bump,
    _check,
    _check_lr,
    _params_with_grad,
    _val,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """torch.optim.SGD. Takes sparse gradients (embedding(sparse=True)) without weight decay."""

    _sparse_wd_msg = "add(sparse, dense) is not supported. Use add(dense, sparse) instead."

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        _check_lr(lr)
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        self._check_fused()

    def step(self, closure=None):
        """One SGD step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                mom, damp = group["momentum"], group["dampening"]
                wd, nesterov = group["weight_decay"], group["nesterov"]
                for p, g, xp in _params_with_grad(group, sparse_rows=mom == 0):
                    d = p._data
                    if type(g) is SparseRows:  # embedding(sparse=True): only its rows move
                        d[g.index] -= lr * g.values
                        _bump(p)
                        continue
                    if self._fused_step(p, g, xp, lr, mom, damp, wd, nesterov):
                        continue
                    if wd != 0:
                        g = g + wd * d
                    if mom != 0:
                        st = self.state[p]
                        buf = st.get("momentum_buffer")
                        if buf is None:
                            buf = st["momentum_buffer"] = _wrap(g.copy(), p._names)
                        else:
                            b = buf._data
                            b *= mom
                            b += g if damp == 0 else (1 - damp) * g  # no temporary for 1 * g
                            _bump(buf)
                        g = g + mom * buf._data if nesterov else buf._data
                    d -= lr * g
                    _bump(p)
        return loss

    def _fused_step(self, p, g, xp, lr, mom, damp, wd, nesterov) -> bool:
        """The whole update of ``p`` as one kernel where the array module has one (cupy)."""
        if not sgd_fusable(xp, p._data, g):
            return False
        buf, first = None, False
        if mom != 0:
            st = self.state[p]
            buf = st.get("momentum_buffer")
            first = buf is None
            if first:
                buf = _wrap(xp.empty_like(p._data), p._names)
        if not sgd_step(
            xp, p._data, g, None if buf is None else buf._data, lr, mom, damp, wd, nesterov, first
        ):
            return False  # a momentum buffer that is not one C-contiguous block
        if first:
            self.state[p]["momentum_buffer"] = buf
        elif buf is not None:
            _bump(buf)
        _bump(p)
        return True
