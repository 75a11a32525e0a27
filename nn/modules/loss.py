"""Loss modules (torch.nn.modules.loss): thin Modules over the functional losses of nn/_losses.py,
plus AdaptiveLogSoftmaxWithLoss (torch.nn.modules.adaptive). Per-class ``weight`` and
``pos_weight`` are buffers, so they appear in state_dict and follow ``.to()``."""

from __future__ import annotations

from collections.abc import Callable

from ...core.tensor import Tensor
from .. import _losses as L
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .module import Module, _deprecated_module

__all__ = [
    "AdaptiveLogSoftmaxWithLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "CTCLoss",
    "CosineEmbeddingLoss",
    "CrossEntropyLoss",
    "GaussianNLLLoss",
    "HingeEmbeddingLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "MSELoss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "NLLLoss",
    "NLLLoss2d",
    "PoissonNLLLoss",
    "SmoothL1Loss",
    "SoftMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]


class _Loss(Module):
    reduction: str

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = L._legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction

    # the attributes forward passes on to the functional loss by keyword (besides reduction)
    _options: tuple[str, ...] = ()

    def _apply_loss(self, fn, *args) -> Tensor:
        kwargs = {k: getattr(self, k) for k in self._options}
        return fn(*args, reduction=self.reduction, **kwargs)


class _WeightedLoss(_Loss):
    def __init__(
        self, weight: Tensor | None = None, size_average=None, reduce=None, reduction="mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Tensor | None

    _options = ("weight",)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.l1_loss, input, target)


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.mse_loss, input, target)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities at class indices."""

    _options = ("weight", "ignore_index")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.nll_loss, input, target)


@_deprecated_module(
    "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
    "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more "
    "details."
)
class NLLLoss2d(NLLLoss):
    """Deprecated alias of NLLLoss (torch keeps it, with a FutureWarning)."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL over class indices or class probabilities."""

    _options = ("weight", "ignore_index", "label_smoothing")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.cross_entropy, input, target)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood."""

    _options = ("log_input", "full", "eps")

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.poisson_nll_loss, log_input, target)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with a predicted variance."""

    _options = ("full", "eps")

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return self._apply_loss(L.gaussian_nll_loss, input, target, var)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``."""

    _options = ("log_target",)

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.kl_div, input, target)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.binary_cross_entropy, input, target)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy in one numerically stable step."""

    _options = ("weight", "pos_weight")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.weight: Tensor | None
        self.pos_weight: Tensor | None

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.binary_cross_entropy_with_logits, input, target)


class HingeEmbeddingLoss(_Loss):
    """x for target 1, max(0, margin - x) for target -1."""

    _options = ("margin",)

    def __init__(
        self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.hinge_embedding_loss, input, target)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss over -1-terminated class-index targets."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.multilabel_margin_loss, input, target)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above."""

    _options = ("beta",)

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.smooth_l1_loss, input, target)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, ``delta``-scaled linear above."""

    _options = ("delta",)

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.huber_loss, input, target)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss log(1 + exp(-y x))."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.soft_margin_loss, input, target)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """One-versus-all logistic loss averaged over classes."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.multilabel_soft_margin_loss, input, target)


class CosineEmbeddingLoss(_Loss):
    """1 - cos for similar pairs, max(0, cos - margin) for dissimilar ones."""

    _options = ("margin",)

    def __init__(
        self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.cosine_embedding_loss, input1, input2, target)


class MarginRankingLoss(_Loss):
    """max(0, -y (x1 - x2) + margin)."""

    _options = ("margin",)

    def __init__(
        self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.margin_ranking_loss, input1, input2, target)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss."""

    _options = ("p", "margin", "weight")

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D "
                "instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._apply_loss(L.multi_margin_loss, input, target)


class TripletMarginLoss(_Loss):
    """max(0, d(a, p) - d(a, n) + margin) with the p-norm distance."""

    _options = ("margin", "p", "eps", "swap")

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return self._apply_loss(L.triplet_margin_loss, anchor, positive, negative)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with a custom distance (default: a PairwiseDistance submodule)."""

    _options = ("distance_function", "margin", "swap")

    def __init__(
        self,
        *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        if distance_function is None:
            from .distance import PairwiseDistance

            distance_function = PairwiseDistance()
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return self._apply_loss(L.triplet_margin_with_distance_loss, anchor, positive, negative)


class CTCLoss(_Loss):
    """Connectionist Temporal Classification loss."""

    _options = ("blank", "zero_infinity")

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> Tensor:
        return self._apply_loss(L.ctc_loss, log_probs, targets, input_lengths, target_lengths)
