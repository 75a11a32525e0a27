"""SGD: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import no_grad
from ..core.dtype import scalar_name
from ..core.kernels.fused_optim import sgd_fusable, sgd_step
from ..core.tensor import Tensor, _wrap
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

    _foreach_refuses_autograd = False

    _setstate_group_defaults = (
        ("nesterov", False),
        ("maximize", False),
        ("foreach", None),
        ("differentiable", False),
        ("fused", False),
    )

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
        # SGD's checks are ``x < 0.0`` (NaN passes), unlike the other optimizers'
        _check_lr(lr, valid=lambda v: not v < 0.0)
        _check(not momentum < 0.0, f"Invalid momentum value: {momentum}")
        _check(not weight_decay < 0.0, f"Invalid weight_decay value: {weight_decay}")
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

    def _complex_error(self, group: dict, p: Tensor) -> Exception | None:
        if group.get("fused"):  # torch's fused kernel has no complex types
            return NotImplementedError(
                f"\"fused_sgd_kernel\" not implemented for '{scalar_name(p.dtype)}'"
            )
        return super()._complex_error(group, p)

    def step(self, closure=None):
        """One SGD step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                mom, damp = _val(group["momentum"]), group["dampening"]
                wd, nesterov = _val(group["weight_decay"]), group["nesterov"]
                # torch's _foreach_mul_ rounds the momentum like an alpha, Tensor.mul_ does not
                mul = _alpha if group["foreach"] else _scalar
                for p, g, xp in _params_with_grad(group, sparse_rows=mom == 0):
                    d = p._data
                    if type(g) is SparseRows:  # embedding(sparse=True): only its rows move
                        d[g.index] -= lr * g.values
                        _bump(p)
                        continue
                    if self._fused_step(p, g, xp, lr, mom, damp, wd, nesterov):
                        continue
                    if wd != 0:
                        g = _same_dtype(g + _alpha(wd, d) * d, d)
                    if mom != 0:
                        st = self.state[p]
                        buf = st.get("momentum_buffer")
                        if buf is None:
                            buf = st["momentum_buffer"] = _wrap(g.copy(), p._names)
                        else:
                            b = buf._data
                            b *= mul(mom, d)
                            # no temporary for 1 * g
                            b += g if damp == 0 else _alpha(1 - damp, d) * g
                            _bump(buf)
                        g = (
                            _same_dtype(g + _alpha(mom, d) * buf._data, d)
                            if nesterov
                            else buf._data
                        )
                    d -= _alpha(lr, d) * g
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


def _same_dtype(a, like):
    """``a`` in ``like``'s dtype: the update's float32 sum of 16-bit parameters rounded once,
    as torch's ``grad.add(param, alpha=wd)`` (a momentum buffer made from it stays 16-bit)."""
    return a if a.dtype == like.dtype else a.astype(like.dtype)


# torch's arithmetic on 16-bit tensors: an add's alpha is first rounded to the tensor's dtype (so
# is a _foreach_mul_ multiplier, not a mul_ one), and the product is taken in float32 and rounded
# once with its sum (numpy would round a Python float to float16 first, and make bfloat16 times
# it float32)
def _alpha(x: float, like):
    return np.float32(like.dtype.type(x)) if like.dtype.itemsize == 2 else x


def _scalar(x: float, like):
    return np.float32(x) if like.dtype.itemsize == 2 else x
