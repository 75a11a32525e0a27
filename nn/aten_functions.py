"""The torch.* spellings of nn functions (``torch.dropout``, ``torch.kl_div``, ...).

They keep torch's low-level signatures: ``train`` is a required positional flag, losses take
``reduction`` as an integer (0: none, 1: mean, 2: sum), ``torch.embedding`` takes the weight
first. Each one calls its nn.functional function, where the computation lives.
"""

from __future__ import annotations

from ..core.tensor import Tensor
from . import functional as F

__all__ = [
    "alpha_dropout",
    "alpha_dropout_",
    "bilinear",
    "binary_cross_entropy_with_logits",
    "conv_tbc",
    "cosine_embedding_loss",
    "ctc_loss",
    "dropout",
    "dropout_",
    "embedding",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "hinge_embedding_loss",
    "kl_div",
    "margin_ranking_loss",
    "poisson_nll_loss",
    "triplet_margin_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(r: int) -> str:
    if isinstance(r, bool) or not isinstance(r, int):
        raise TypeError(f"argument 'reduction' must be int, not {type(r).__name__}")
    if not 0 <= r < 3:
        raise ValueError(f"{r} is not a valid value for reduction")
    return _REDUCTIONS[r]


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.dropout(input, p, training=train)``."""
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Whole features zeroed: one draw per (sample, channel), kept ones scaled by 1/(1-p)."""
    return _feature_dropout(input, p, train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _feature_dropout(input, p, train, True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _feature_dropout(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    # F's dropout machinery with one draw per (sample, channel), whatever the rank
    p = F._check_p(p)
    if not train or p == 0:
        return input
    shape = F._feature_shape(input, True) if input.dim() >= 2 else input._data.shape
    return F._inplace(input, F._dropout, p, shape) if inplace else F._dropout(input, p, shape)


def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """``F.embedding(indices, weight, ...)`` (weight first; padding_idx -1: none)."""
    pad = None if padding_idx == -1 else padding_idx
    return F.embedding(indices, weight, pad, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    return F.bilinear(input1, input2, weight, bias)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 1,
) -> Tensor:
    return F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction), pos_weight=pos_weight
    )


conv_tbc = F.conv_tbc  # same signature in both namespaces


def kl_div(input: Tensor, target: Tensor, reduction: int = 1, *, log_target: bool = False):
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    return F.margin_ranking_loss(
        input1, input2, target, margin=margin, reduction=_reduction(reduction)
    )


def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: int = 1):
    return F.hinge_embedding_loss(input, target, margin=margin, reduction=_reduction(reduction))


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    return F.cosine_embedding_loss(
        input1, input2, target, margin=margin, reduction=_reduction(reduction)
    )


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int = 1,
):
    return F.triplet_margin_loss(
        anchor,
        positive,
        negative,
        margin=margin,
        p=p,
        eps=eps,
        swap=swap,
        reduction=_reduction(reduction),
    )


def poisson_nll_loss(input, target, log_input: bool, full: bool, eps: float, reduction: int):
    return F.poisson_nll_loss(
        input, target, log_input=log_input, full=full, eps=eps, reduction=_reduction(reduction)
    )


def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: int = 1,
    zero_infinity: bool = False,
):
    return F.ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank=blank,
        reduction=_reduction(reduction),
        zero_infinity=zero_infinity,
    )
