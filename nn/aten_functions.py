"""The torch.* spellings of nn functions (``torch.dropout``, ``torch.kl_div``, ...).

They keep torch's low-level signatures: ``train`` is a required positional flag, losses take
``reduction`` as an integer (0: none, 1: mean, 2: sum), ``torch.embedding`` takes the weight
first. Each one calls its nn.functional function, where the computation lives.
"""

from __future__ import annotations

import numpy as np

from ..core.dtype import scalar_name as _scalar_name
from ..core.ops.creation import ones_like as _ones_like
from ..core.ops.creation import tensor as _tensor
from ..core.tensor import Tensor, _wrap
from ..core.tensor import number_arg as _number
from . import functional as F
from .modules.rnn import run_layers as _run_layers
from .utils.weight_norm import _norm_except_dim

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
    "embedding_bag",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "gru",
    "hinge_embedding_loss",
    "kl_div",
    "lstm",
    "margin_ranking_loss",
    "native_dropout",
    "norm_except_dim",
    "poisson_nll_loss",
    "rnn_relu",
    "rnn_tanh",
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


def embedding_bag(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Sums (mode 0), means (1) or maxes (2) of the bags of rows of ``weight`` that
    ``offsets`` cuts the 1-D ``indices`` into, with torch's bookkeeping tensors:
    ``(output, offset2bag, bag_size, max_indices)``. ``offset2bag`` is each index's bag (empty
    in sum mode without ``padding_idx`` for a single or half precision weight), ``bag_size`` the number of non-padding indices of each
    bag (zeros in sum mode), ``max_indices`` the row each max came from in max mode (the bag
    sizes in mean mode, zeros in sum mode). Only ``output`` is differentiable."""
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    out = F.embedding_bag(
        indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
        mode=("sum", "mean", "max")[mode], sparse=sparse, per_sample_weights=per_sample_weights,
        include_last_offset=include_last_offset, padding_idx=padding_idx,
    )  # fmt: skip
    return (out, *_bag_bookkeeping(weight, indices, offsets, mode, padding_idx, out.shape[0],
                                   out.requires_grad))  # fmt: skip


def _bag_bookkeeping(weight, indices, offsets, mode, padding_idx, nbags, grad):
    """embedding_bag's offset2bag, bag_size and max_indices (torch's cpu values), computed on
    the host: they are integer side results, not part of the output's computation."""
    idx = indices.detach().cpu().numpy().reshape(-1)
    starts_all = offsets.detach().cpu().numpy().reshape(-1)
    starts = starts_all[:nbags]
    both32 = indices.dtype.name == "int32" and offsets.dtype.name == "int32"
    it = np.int32 if both32 else np.int64
    n = weight.shape[0]
    pad = None if padding_idx is None else padding_idx % n if padding_idx < 0 else padding_idx
    if mode == 0 and pad is None and weight.dtype.name in ("float32", "float16", "bfloat16"):
        # torch's fast sum kernel of these dtypes leaves offset2bag empty (float64 fills it)
        offset2bag = np.zeros(0, it)
    else:
        offset2bag = np.clip(np.searchsorted(starts, np.arange(idx.size), "right") - 1, 0, None)
        offset2bag = offset2bag.astype(it)
    # torch's sum kernel without autograd sizes its (all-zero) bag counts by the offsets, which
    # include_last_offset makes one longer than the bags
    zeros = np.zeros(nbags if grad else starts_all.size, it)
    if mode == 0:
        bag_size = max_indices = zeros
    else:
        keep = idx != pad if pad is not None else np.ones(idx.size, bool)
        bag_size = np.bincount(offset2bag[keep], minlength=nbags)[:nbags].astype(it)
        max_indices = bag_size
        if mode == 2:
            w = weight.detach().cpu()._data  # (numpy() refuses bfloat16)
            max_indices = np.zeros((nbags, w.shape[1]), it)
            for b in range(nbags):
                rows = idx[keep & (offset2bag == b)]
                if rows.size:  # the first of equal maxima, as torch's loop keeps it
                    max_indices[b] = rows[np.argmax(w[rows], axis=0)]
    dev = weight.device
    o2b, size, imax = (_tensor(a, device=dev) for a in (offset2bag, bag_size, max_indices))
    if indices._names is not None and offset2bag.size:  # a bag per index: the index dim's name
        o2b = o2b.refine_names(*indices._names)
    return o2b, size, imax


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


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """Dropout returning ``(output, mask)``: ``mask`` (bool, the input's shape and names) marks
    the kept elements, which are scaled by 1/(1-p). Out of training (``train=False``) the output
    is a copy of the input and the mask all True."""
    if train is not None and not train:
        return input.clone(), _ones_like(input, dtype=bool)
    q = 1.0 - _number(p, "native_dropout", "p")
    if not 0.0 <= q <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={q}")
    if not input.dtype.is_floating_point and not input.dtype.is_complex:
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type "
            f"{_scalar_name(input.dtype)}"
        )
    keep = F._keep_mask(input, 1.0 - q, input._data.shape)
    mask = _wrap(keep.astype(bool))
    if input._names is not None:
        mask = mask.refine_names(*input._names)
    keep *= 0.0 if q == 0.0 else 1.0 / q  # p = 1 keeps nothing: a zero scale, not 1/0
    return input * _wrap(keep), mask


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept with size 1 elsewhere
    (weight normalization's ``||v||``); ``dim=-1`` gives the norm of the whole tensor."""
    return _norm_except_dim(v, pow, dim)


def _rnn(mode, args, kwargs):
    """torch.lstm / gru / rnn_tanh / rnn_relu: (input, hx, params, has_biases, num_layers,
    dropout, train, bidirectional, batch_first) or, for packed data, (data, batch_sizes, hx,
    params, has_biases, num_layers, dropout, train, bidirectional)."""
    name = mode.lower()
    lstm = mode == "LSTM"
    # the packed overload puts the batch sizes (a tensor) where the other has hx (a list of
    # tensors for lstm, a tensor otherwise): its params come one place later
    packed = isinstance(args[1], Tensor) if lstm else len(args) > 2 and isinstance(args[2], Tensor)
    keys = ("hx", "params", "has_biases", "num_layers", "dropout", "train", "bidirectional")
    keys = ("data", "batch_sizes") + keys if packed else ("input",) + keys + ("batch_first",)
    if len(args) + len(kwargs) != len(keys):
        raise TypeError(f"{name}() takes {len(keys)} arguments ({', '.join(keys)})")
    a = dict(zip(keys, args))
    a.update(kwargs)
    x, hx, params = a[keys[0]], a["hx"], list(a["params"])
    states = list(hx) if lstm else [hx]
    if lstm and len(states) != 2:
        raise RuntimeError("lstm expects two hidden states")
    has_proj = lstm and states[0].shape[-1] != states[1].shape[-1]
    batch_sizes = None
    if packed:
        batch_sizes = tuple(int(b) for b in a["batch_sizes"].tolist())
    elif a["batch_first"]:
        x = x.transpose(0, 1)
    p = float(a["dropout"]) if a["train"] else 0.0
    out, hidden = _run_layers(
        x, states, params, mode, int(a["num_layers"]), bool(a["bidirectional"]),
        bool(a["has_biases"]), has_proj, p, batch_sizes,
    )  # fmt: skip
    if not packed and a["batch_first"]:
        out = out.transpose(0, 1)
    return (out, *hidden)


def lstm(*args, **kwargs) -> tuple[Tensor, Tensor, Tensor]:
    """A multi-layer LSTM over a sequence from a flat weight list: ``lstm(input, (h0, c0),
    params, has_biases, num_layers, dropout, train, bidirectional, batch_first)`` or, on a
    PackedSequence's parts, ``lstm(data, batch_sizes, (h0, c0), params, has_biases, num_layers,
    dropout, train, bidirectional)``. ``params`` holds w_ih, w_hh, (b_ih, b_hh), (w_hr) of each
    layer and direction, in nn.LSTM's order. Returns ``(output, h_n, c_n)``."""
    return _rnn("LSTM", args, kwargs)


def gru(*args, **kwargs) -> tuple[Tensor, Tensor]:
    """A multi-layer GRU from a flat weight list (arguments as :func:`lstm`, with one hidden
    state ``hx``). Returns ``(output, h_n)``."""
    return _rnn("GRU", args, kwargs)


def rnn_tanh(*args, **kwargs) -> tuple[Tensor, Tensor]:
    """A multi-layer Elman RNN with tanh from a flat weight list (arguments as :func:`gru`).
    Returns ``(output, h_n)``."""
    return _rnn("RNN_TANH", args, kwargs)


def rnn_relu(*args, **kwargs) -> tuple[Tensor, Tensor]:
    """A multi-layer Elman RNN with ReLU from a flat weight list (arguments as :func:`gru`).
    Returns ``(output, h_n)``."""
    return _rnn("RNN_RELU", args, kwargs)
