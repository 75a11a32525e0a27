"""nn.LinearCrossEntropyLoss: a Linear head and cross entropy in one module (torch 2.13)."""

from __future__ import annotations

import math

from ...core.tensor import Tensor
from .._linear_cross_entropy import LinearCrossEntropyOptions, linear_cross_entropy
from .linear import Linear
from .module import Module

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class LinearCrossEntropyLoss(Module):
    """``F.linear_cross_entropy`` with its own head: ``linear`` maps ``in_features`` to
    ``num_classes * prod(out_features)`` logits; ``weight`` (per-class rescaling) is a buffer.

    Shapes: input (N, in_features) or (in_features,); target (N, *out_features) class indices
    or (N, num_classes, *out_features) probabilities."""

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        if weight is not None and weight.shape != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__()
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.linear = Linear(
            in_features,
            math.prod(self.out_features, start=num_classes),
            bias=bias,
            device=device,
            dtype=dtype,
        )
        self.register_buffer("weight", weight)
        self.reduction = reduction
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return linear_cross_entropy(
            input,
            self.linear.weight.reshape(*shape, self.linear.in_features),
            target,
            linear_bias=bias.reshape(shape) if bias is not None else None,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
