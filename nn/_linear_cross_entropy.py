"""F.linear_cross_entropy: ``cross_entropy(linear(input, linear_weight, linear_bias), target)``,
and its options (torch 2.13's LinearCrossEntropyOptions) for a chunked form that never holds the
whole ``(batch, num_classes)`` logits: the batch rows go through in chunks, and the backward pass
recomputes each chunk's logits instead of keeping them (large-vocabulary heads).

Difference from torch: the accumulation policy (``acc_policy``, ``acc_dtype``) is accepted and
checked but ember's chunks compute in the input's dtype like the reference path; the chunked
backward may run again under ``retain_graph=True`` (it recomputes from the saved inputs).
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings

from ..autograd.engine import grad as _grad
from ..autograd.function import Function, once_differentiable
from ..autograd.grad_mode import enable_grad
from ..core import dtype as _dt
from ..core.names import as_op_error as _as_op_error
from ..core.ops.shape import cat
from ..core.tensor import Tensor
from ._losses import _reduction, cross_entropy

__all__ = ["LinearCrossEntropyOptions", "linear_cross_entropy"]

_ACC_POLICIES = ("auto", "compact", "accurate", "balanced")
_ACC_DTYPES = (None, _dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Opt-in to the chunked ``linear_cross_entropy``: ``batch_chunk_size`` rows per chunk, or,
    when None, ``k * in_features`` rows for ``chunking_method='aspect_ratio:k'`` (``'auto'`` and
    ``'aspect_ratio'``: k = 1)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: _dt.dtype | None = None

    def __post_init__(self) -> None:
        b = self.batch_chunk_size
        if b is not None and (not isinstance(b, int) or b <= 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {b!r}")
        if self.chunking_method not in ("auto", "aspect_ratio") and not re.fullmatch(
            r"aspect_ratio:[1-9][0-9]*", self.chunking_method
        ):
            raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if not any(self.acc_dtype is d for d in _ACC_DTYPES):
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                "automatically."
            )

    def rows(self, in_features: int) -> int:
        if self.batch_chunk_size is not None:
            return self.batch_chunk_size
        k = self.chunking_method.partition(":")[2]
        return max(1, in_features * (int(k) if k else 1))


def _chunk_loss(x, w, b, t, class_weight, ignore_index, reduction):
    return cross_entropy(
        x.matmul(w.t()) if b is None else x.matmul(w.t()) + b,
        t,
        class_weight,
        ignore_index=ignore_index,
        reduction=reduction,
    )


class _Chunked(Function):
    """The loss over row chunks; backward recomputes each chunk's logits."""

    @staticmethod
    def forward(ctx, input, weight, bias, target, class_weight, ignore_index, reduction, rows):
        n = input.shape[0]
        red = "none" if reduction == "none" else "sum"
        parts = [
            _chunk_loss(
                input[s : s + rows],
                weight,
                bias,
                target[s : s + rows],
                class_weight,
                ignore_index,
                red,
            )
            for s in range(0, n, rows)
        ]
        ctx.save_for_backward(input, weight, bias, target, class_weight)
        ctx.args = (ignore_index, reduction, rows)
        if reduction == "none":
            return cat(parts) if parts else input.new_zeros((0,))
        total = sum(parts[1:], parts[0]) if parts else input.new_zeros(())
        if reduction == "mean":
            valid = target != ignore_index
            den = (
                class_weight[target.clamp(min=0)][valid].sum()
                if class_weight is not None
                else valid.sum().to(total.dtype)
            )
            ctx.den = den
            return total / den
        return total

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        input, weight, bias, target, class_weight = ctx.saved_tensors
        ignore_index, reduction, rows = ctx.args
        if reduction == "mean":
            grad = grad / ctx.den
        dx = input.new_zeros(input.shape) if ctx.needs_input_grad[0] else None
        dw = weight.new_zeros(weight.shape) if ctx.needs_input_grad[1] else None
        db = bias.new_zeros(bias.shape) if bias is not None and ctx.needs_input_grad[2] else None
        leaves = [t.detach().requires_grad_(True) for t in (weight, bias) if t is not None]
        for s in range(0, input.shape[0], rows):
            x = input[s : s + rows].detach().requires_grad_(dx is not None)
            with enable_grad():
                loss = _chunk_loss(
                    x,
                    leaves[0],
                    leaves[1] if bias is not None else None,
                    target[s : s + rows],
                    class_weight,
                    ignore_index,
                    "none" if reduction == "none" else "sum",
                )
            g = grad[s : s + rows] if reduction == "none" else grad
            got = _grad(loss, [x, *leaves], g, allow_unused=True)
            if dx is not None:
                dx[s : s + rows] = got[0]
            if dw is not None:
                dw += got[1]
            if db is not None:
                db += got[2]
        return dx, dw, db, None, None, None, None, None


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: LinearCrossEntropyOptions | None = None,
) -> Tensor:
    """Cross entropy of ``input`` (N, in_features) or (in_features,) mapped by ``linear_weight``
    (num_classes, *out_features, in_features) and ``linear_bias`` (num_classes, *out_features):
    ``cross_entropy(logits, target, weight, ...)`` with logits (N, num_classes, *out_features).
    ``ignore_index=None`` ignores nothing but -100 (cross_entropy's default); it may not be given
    with class-probability targets. ``options`` opts in to the chunked form (see the module)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    d = input.shape[-1]
    if d != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{d} and {linear_weight.shape[-1]}, respectively"
        )
    c, out = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (c, *out):
        raise RuntimeError(
            f"expected linear_bias shape {(c, *out)}, got {tuple(linear_bias.shape)}"
        )
    batch = tuple(input.shape[:-1])
    if out and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {d}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    probs = tuple(target.shape) == (*batch, c, *out)
    if probs and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    reduction = _reduction(reduction)
    ii = -100 if ignore_index is None else ignore_index
    try:
        if options is not None:
            if out or label_smoothing != 0.0 or target.dtype is not _dt.int64:
                warnings.warn(
                    "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                    "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
                    f"out_features == (). Got reduction={reduction!r}, label_smoothing="
                    f"{label_smoothing}, target.dtype={target.dtype}, out_features={out}, "
                    "tracing=False, linear_bias.shape="
                    f"{tuple(linear_bias.shape) if linear_bias is not None else None}.",
                    stacklevel=2,
                )
            else:
                x, t = (input, target) if batch else (input.unsqueeze(0), target.unsqueeze(0))
                loss = _Chunked.apply(
                    x, linear_weight, linear_bias, t, weight, ii, reduction, options.rows(d)
                )
                return loss if batch or reduction != "none" else loss.squeeze(0)
        flat = linear_weight.reshape(c * math.prod(out), d)
        logits = input.matmul(flat.t())
        if linear_bias is not None:
            logits = logits + linear_bias.reshape(-1)
        logits = logits.reshape(*batch, c, *out)
        return cross_entropy(
            logits,
            target,
            weight,
            ignore_index=ii,
            reduction=reduction,
            label_smoothing=label_smoothing,
        )
    except RuntimeError as e:  # a name clash is linear_cross_entropy's (spec 4.10)
        named = (input, linear_weight, target, linear_bias, weight)
        raise _as_op_error(e, "linear_cross_entropy", ("cross_entropy", "add"), *named) from None
