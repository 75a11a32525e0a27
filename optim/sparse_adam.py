"""SparseAdam: Adam's update applied only to the entries a sparse gradient holds."""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..core.device import array_module
from .optimizer import Optimizer, _bump, _check, _check_lr, _val, _zeros

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam: for sparse gradients (``nn.Embedding(sparse=True)``).

    Only the rows present in a step's gradient have their moments and values updated (a
    row absent from the batch keeps its moments, unlike Adam on a dense gradient). A dense
    gradient is refused, as in torch.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_lr(lr, valid=lambda v: 0.0 < v)  # unlike the others, 0 refused too
        _check(0.0 < eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        # torch refuses complex parameters when the optimizer is built, listing each one's
        # [group index, index in its group]
        cplx = [
            [i, j]
            for i, group in enumerate(self.param_groups)
            for j, p in enumerate(group["params"])
            if p.is_complex()
        ]
        if cplx:
            raise ValueError(
                f"Complex params at indices {cplx}: SparseAdam does not support complex parameters"
            )

    def step(self, closure=None):
        """One SparseAdam step."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _val(group["lr"])
                beta1, beta2 = group["betas"]
                eps = group["eps"]
                for p in group["params"]:
                    g = p._grad
                    if g is None:
                        continue
                    if not getattr(g, "is_sparse", False):
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider Adam "
                            "instead"
                        )
                    st = self.state[p]
                    if not st:
                        st["step"] = 0
                        st["exp_avg"] = _zeros(p)
                        st["exp_avg_sq"] = _zeros(p)
                    st["step"] += 1
                    step = st["step"]
                    g = g.coalesce()
                    rows = tuple(g._ci._data)  # the entries' indices over the sparse dims
                    gv = g._vals._data
                    if group["maximize"]:
                        gv = -gv
                    m, v, d = st["exp_avg"]._data, st["exp_avg_sq"]._data, p._data
                    om, ov = m[rows], v[rows]
                    um = (gv - om) * (1 - beta1)
                    m[rows] = om + um
                    uv = (gv * gv - ov) * (1 - beta2)
                    v[rows] = ov + uv
                    step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
                    d[rows] += -step_size * ((um + om) / (array_module(gv).sqrt(uv + ov) + eps))
                    _bump(p)
        return loss
