"""Every nn layer, loss and optimizer on a cuda device, compared with the cpu.

Each row builds a module on the cpu, copies it to the device (``Module.to``), runs forward and a
backward with a non-uniform upstream gradient there, and checks that every output, gradient,
parameter and buffer stays a device array and equals the cpu's. The rows run on the strict
fake-cupy backend everywhere (tests/strict_backend.py) and on a real GPU when cupy has one.
"""

from __future__ import annotations

import copy
import inspect

import ember
import numpy as np
import pytest
from ember import nn
from ember.core import device as devmod
from strict_backend import StrictArray, strict_cuda
from test_device import _tensors

HAS_GPU = devmod.is_cuda_available()
BACKENDS = [
    "strict",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not HAS_GPU, reason="no GPU with cupy: strict stands in")
    ),
]


class Fixed:
    """An input that takes no gradient (targets, masks, variances held fixed)."""

    def __init__(self, value) -> None:
        self.value = value


def f(*shape, lo=0.5, hi=1.5, seed=0):
    """A float64 input in [lo, hi) that takes a gradient."""
    return np.random.default_rng(seed + len(shape)).uniform(lo, hi, shape)


def fx(*shape, lo=0.5, hi=1.5, seed=7):
    return Fixed(f(*shape, lo=lo, hi=hi, seed=seed))


def ints(hi, *shape, seed=3):
    return np.random.default_rng(seed).integers(0, hi, shape)


def signs(*shape):
    return Fixed(np.where(np.arange(np.prod(shape)).reshape(shape) % 3 == 0, -1.0, 1.0))


def log_probs(*shape):
    x = f(*shape, lo=-1, hi=1, seed=5)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _unpool(dims):
    pool = {1: nn.MaxPool1d, 2: nn.MaxPool2d, 3: nn.MaxPool3d}[dims](2, return_indices=True)

    def call(m, x):
        return m(*pool(x))

    return call


def _ctc(m, lp, targets, in_lens, tgt_lens):
    return m(lp, targets, in_lens, tgt_lens)


def _mha(m, q, k, v):
    return m(q, k, v, need_weights=True)


def _mha_masked(m, q, k, v):
    pad = ember.tensor([[False, False, True], [False, False, False]], device=q.device)
    mask = ember.tensor([[0.0, -1.0, 0.5]] * 4, dtype=q.dtype, device=q.device)
    return m(q, k, v, key_padding_mask=pad, attn_mask=mask, average_attn_weights=False)


# name[:variant] -> (constructor, inputs, call or None, random). Inputs: float arrays take a gradient,
# integer arrays and Fixed ones do not. "random" rows draw from the generator: only the
# device, dtypes and shapes are compared.
X3 = f(2, 3, 4)
SPECS = {
    # activations and shape layers
    **{
        name: (lambda name=name: getattr(nn, name)(), [X3 - 1.0], None, False)
        for name in [
            "CELU",
            "ELU",
            "GELU",
            "Hardshrink",
            "Hardsigmoid",
            "Hardswish",
            "Hardtanh",
            "LeakyReLU",
            "LogSigmoid",
            "Mish",
            "PReLU",
            "ReLU",
            "ReLU6",
            "SELU",
            "SiLU",
            "Sigmoid",
            "Softmax2d",
            "Softplus",
            "Softshrink",
            "Softsign",
            "Tanh",
            "Tanhshrink",
            "Identity",
            "Flatten",
        ]
    },
    "GLU": (lambda: nn.GLU(), [X3], None, False),
    "LogSoftmax": (lambda: nn.LogSoftmax(1), [X3], None, False),
    "Softmax": (lambda: nn.Softmax(1), [X3], None, False),
    "Softmin": (lambda: nn.Softmin(1), [X3], None, False),
    "Threshold": (lambda: nn.Threshold(1.0, 20.0), [X3], None, False),
    "RReLU": (lambda: nn.RReLU(), [X3 - 1.0], None, True),
    "Unflatten": (lambda: nn.Unflatten(1, (3, 1)), [X3], None, False),
    "ChannelShuffle": (lambda: nn.ChannelShuffle(2), [f(1, 4, 2, 2)], None, False),
    "CosineSimilarity": (lambda: nn.CosineSimilarity(), [f(3, 4), f(3, 4, seed=1)], None, False),
    "PairwiseDistance": (lambda: nn.PairwiseDistance(), [f(3, 4), f(3, 4, seed=1)], None, False),
    # dropout
    "Dropout": (lambda: nn.Dropout(), [X3], None, True),
    "Dropout1d": (lambda: nn.Dropout1d(), [X3], None, True),
    "Dropout2d": (lambda: nn.Dropout2d(), [f(2, 3, 4, 4)], None, True),
    "Dropout3d": (lambda: nn.Dropout3d(), [f(2, 3, 2, 2, 2)], None, True),
    "AlphaDropout": (lambda: nn.AlphaDropout(), [X3], None, True),
    "FeatureAlphaDropout": (lambda: nn.FeatureAlphaDropout(), [f(2, 3, 4, 4)], None, True),
    # linear and embeddings
    "Linear": (lambda: nn.Linear(4, 5), [X3], None, False),
    "LazyLinear": (lambda: nn.LazyLinear(5), [X3], None, False),
    "NonDynamicallyQuantizableLinear": (
        lambda: nn.NonDynamicallyQuantizableLinear(4, 5),
        [X3],
        None,
        False,
    ),
    "Bilinear": (lambda: nn.Bilinear(4, 3, 2), [f(5, 4), f(5, 3, seed=1)], None, False),
    "Embedding": (lambda: nn.Embedding(10, 3, padding_idx=0), [ints(10, 2, 4)], None, False),
    "EmbeddingBag": (lambda: nn.EmbeddingBag(10, 3, mode="max"), [ints(10, 2, 4)], None, False),
    # convolution
    "Conv1d": (lambda: nn.Conv1d(3, 4, 3, padding=1), [f(2, 3, 8)], None, False),
    "Conv2d": (lambda: nn.Conv2d(3, 4, 3, stride=2, groups=1), [f(2, 3, 7, 7)], None, False),
    "Conv3d": (lambda: nn.Conv3d(2, 3, 2, dilation=2), [f(1, 2, 5, 5, 5)], None, False),
    "ConvTranspose1d": (lambda: nn.ConvTranspose1d(3, 4, 3, stride=2), [f(2, 3, 5)], None, False),
    "ConvTranspose2d": (
        lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, groups=2),
        [f(1, 4, 4, 4)],
        None,
        False,
    ),
    "ConvTranspose3d": (lambda: nn.ConvTranspose3d(2, 2, 2), [f(1, 2, 3, 3, 3)], None, False),
    "LazyConv1d": (lambda: nn.LazyConv1d(4, 3), [f(2, 3, 8)], None, False),
    "LazyConv2d": (lambda: nn.LazyConv2d(4, 3), [f(2, 3, 6, 6)], None, False),
    "LazyConv3d": (lambda: nn.LazyConv3d(3, 2), [f(1, 2, 4, 4, 4)], None, False),
    "LazyConvTranspose1d": (lambda: nn.LazyConvTranspose1d(4, 3), [f(2, 3, 5)], None, False),
    "LazyConvTranspose2d": (lambda: nn.LazyConvTranspose2d(2, 3), [f(1, 3, 4, 4)], None, False),
    "LazyConvTranspose3d": (lambda: nn.LazyConvTranspose3d(2, 2), [f(1, 2, 3, 3, 3)], None, False),
    # the other convolution routes: 1x1 (a plain GEMM), im2col without bias, Winograd
    "Conv2d:1x1": (lambda: nn.Conv2d(3, 4, 1), [f(2, 3, 5, 5)], None, False),
    "Conv1d:no_bias": (lambda: nn.Conv1d(3, 4, 3, bias=False), [f(2, 3, 8)], None, False),
    "Conv2d:winograd": (lambda: nn.Conv2d(4, 4, 3, padding=1), [f(2, 4, 16, 16)], None, False),
    "Conv2d:winograd_no_bias": (
        lambda: nn.Conv2d(4, 4, 3, bias=False),
        [f(2, 4, 18, 18)],
        None,
        False,
    ),
    "Fold": (lambda: nn.Fold((4, 4), 2), [f(1, 12, 9)], None, False),
    "Unfold": (lambda: nn.Unfold(2, stride=2), [f(1, 3, 4, 4)], None, False),
    # normalization
    "BatchNorm1d": (lambda: nn.BatchNorm1d(3), [f(4, 3, 5)], None, False),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(3), [f(4, 3, 4, 4)], None, False),
    "BatchNorm3d": (lambda: nn.BatchNorm3d(3), [f(2, 3, 3, 3, 3)], None, False),
    "LazyBatchNorm1d": (lambda: nn.LazyBatchNorm1d(), [f(4, 3, 5)], None, False),
    "LazyBatchNorm2d": (lambda: nn.LazyBatchNorm2d(), [f(4, 3, 4, 4)], None, False),
    "LazyBatchNorm3d": (lambda: nn.LazyBatchNorm3d(), [f(2, 3, 3, 3, 3)], None, False),
    "SyncBatchNorm": (lambda: nn.SyncBatchNorm(3), [f(4, 3, 4, 4)], None, False),
    "InstanceNorm1d": (
        lambda: nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
        [f(2, 3, 5)],
        None,
        False,
    ),
    "InstanceNorm2d": (lambda: nn.InstanceNorm2d(3, affine=True), [f(2, 3, 4, 4)], None, False),
    "InstanceNorm3d": (lambda: nn.InstanceNorm3d(3), [f(2, 3, 3, 3, 3)], None, False),
    "LazyInstanceNorm1d": (lambda: nn.LazyInstanceNorm1d(affine=True), [f(2, 3, 5)], None, False),
    "LazyInstanceNorm2d": (
        lambda: nn.LazyInstanceNorm2d(track_running_stats=True),
        [f(2, 3, 4, 4)],
        None,
        False,
    ),
    "LazyInstanceNorm3d": (lambda: nn.LazyInstanceNorm3d(), [f(2, 3, 3, 3, 3)], None, False),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), [f(2, 4, 3, 3)], None, False),
    "LayerNorm": (lambda: nn.LayerNorm(4), [X3], None, False),
    "RMSNorm": (lambda: nn.RMSNorm(4), [X3], None, False),
    "LocalResponseNorm": (lambda: nn.LocalResponseNorm(2), [f(2, 4, 3, 3)], None, False),
    "CrossMapLRN2d": (lambda: nn.CrossMapLRN2d(3), [f(2, 4, 3, 3)], None, False),
    # pooling
    "AdaptiveAvgPool1d": (lambda: nn.AdaptiveAvgPool1d(2), [f(2, 3, 5)], None, False),
    "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d((2, 3)), [f(2, 3, 5, 5)], None, False),
    "AdaptiveAvgPool3d": (lambda: nn.AdaptiveAvgPool3d(2), [f(1, 2, 5, 5, 5)], None, False),
    "AdaptiveMaxPool1d": (lambda: nn.AdaptiveMaxPool1d(2), [f(2, 3, 5)], None, False),
    "AdaptiveMaxPool2d": (lambda: nn.AdaptiveMaxPool2d((2, 3)), [f(2, 3, 5, 5)], None, False),
    "AdaptiveMaxPool3d": (lambda: nn.AdaptiveMaxPool3d(2), [f(1, 2, 5, 5, 5)], None, False),
    "AvgPool1d": (lambda: nn.AvgPool1d(3, 2, padding=1), [f(2, 3, 7)], None, False),
    "AvgPool2d": (lambda: nn.AvgPool2d(2, ceil_mode=True), [f(2, 3, 5, 5)], None, False),
    "AvgPool3d": (lambda: nn.AvgPool3d(2), [f(1, 2, 4, 4, 4)], None, False),
    "MaxPool1d": (lambda: nn.MaxPool1d(3, 2), [f(2, 3, 7)], None, False),
    "MaxPool2d": (lambda: nn.MaxPool2d(2), [f(2, 3, 4, 4)], None, False),
    "MaxPool3d": (lambda: nn.MaxPool3d(2, padding=1), [f(1, 2, 4, 4, 4)], None, False),
    "LPPool1d": (lambda: nn.LPPool1d(2, 2), [f(2, 3, 6)], None, False),
    "LPPool2d": (lambda: nn.LPPool2d(2, 2), [f(2, 3, 4, 4)], None, False),
    "LPPool3d": (lambda: nn.LPPool3d(2, 2), [f(1, 2, 4, 4, 4)], None, False),
    "FractionalMaxPool2d": (
        lambda: nn.FractionalMaxPool2d(2, output_size=3),
        [f(1, 2, 6, 6)],
        None,
        True,
    ),
    "FractionalMaxPool3d": (
        lambda: nn.FractionalMaxPool3d(2, output_size=2),
        [f(1, 2, 5, 5, 5)],
        None,
        True,
    ),
    "MaxUnpool1d": (lambda: nn.MaxUnpool1d(2), [f(2, 3, 6)], _unpool(1), False),
    "MaxUnpool2d": (lambda: nn.MaxUnpool2d(2), [f(2, 3, 4, 4)], _unpool(2), False),
    "MaxUnpool3d": (lambda: nn.MaxUnpool3d(2), [f(1, 2, 4, 4, 4)], _unpool(3), False),
    # padding
    **{
        f"{kind}Pad{d}d": (
            lambda kind=kind, d=d: getattr(nn, f"{kind}Pad{d}d")(
                *((1, 0.5) if kind == "Constant" else (1,))
            ),
            [f(*(1, 2) + (3,) * d)],
            None,
            False,
        )
        for kind in ("Circular", "Constant", "Reflection", "Replication", "Zero")
        for d in (1, 2, 3)
    },
    # vision
    "PixelShuffle": (lambda: nn.PixelShuffle(2), [f(1, 8, 2, 3)], None, False),
    "PixelUnshuffle": (lambda: nn.PixelUnshuffle(2), [f(1, 2, 4, 6)], None, False),
    "Upsample": (
        lambda: nn.Upsample(scale_factor=2, mode="bicubic", align_corners=False),
        [f(1, 2, 3, 3)],
        None,
        False,
    ),
    "UpsamplingBilinear2d": (
        lambda: nn.UpsamplingBilinear2d(scale_factor=2),
        [f(1, 2, 3, 3)],
        None,
        False,
    ),
    "UpsamplingNearest2d": (
        lambda: nn.UpsamplingNearest2d(size=(5, 4)),
        [f(1, 2, 3, 3)],
        None,
        False,
    ),
    # recurrent
    "RNN": (lambda: nn.RNN(4, 5, num_layers=2, nonlinearity="relu"), [f(3, 2, 4)], None, False),
    "LSTM": (
        lambda: nn.LSTM(4, 5, bidirectional=True, proj_size=3, batch_first=True),
        [f(2, 3, 4)],
        None,
        False,
    ),
    "GRU": (lambda: nn.GRU(4, 5, num_layers=2), [f(3, 2, 4)], None, False),
    "RNNCell": (lambda: nn.RNNCell(4, 5), [f(2, 4)], None, False),
    "LSTMCell": (lambda: nn.LSTMCell(4, 5), [f(2, 4)], None, False),
    "GRUCell": (lambda: nn.GRUCell(4, 5), [f(2, 4)], None, False),
    # attention and transformer (dropout off: the layers' own randomness is the dropout rows')
    "MultiheadAttention": (
        lambda: nn.MultiheadAttention(8, 2, kdim=6, vdim=5),
        [f(4, 2, 8), f(3, 2, 6, seed=1), f(3, 2, 5, seed=2)],
        _mha,
        False,
    ),
    "MultiheadAttention:masked": (
        lambda: nn.MultiheadAttention(8, 2, batch_first=True),
        [f(2, 4, 8), f(2, 3, 8, seed=1), f(2, 3, 8, seed=2)],
        _mha_masked,
        False,
    ),
    "TransformerEncoderLayer": (
        lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
        [f(5, 2, 8)],
        None,
        False,
    ),
    "TransformerEncoder": (
        lambda: nn.TransformerEncoder(
            nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, norm_first=True), 2
        ),
        [f(5, 2, 8)],
        None,
        False,
    ),
    "TransformerDecoderLayer": (
        lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
        [f(2, 4, 8), f(2, 5, 8, seed=1)],
        None,
        False,
    ),
    "TransformerDecoder": (
        lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2),
        [f(4, 2, 8), f(5, 2, 8, seed=1)],
        None,
        False,
    ),
    "Transformer": (
        lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0),
        [f(5, 2, 8), f(4, 2, 8, seed=1)],
        None,
        False,
    ),
    "AdaptiveLogSoftmaxWithLoss": (
        lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4], div_value=2.0),
        [f(5, 8), ints(10, 5)],
        None,
        False,
    ),
    # containers with a forward
    "Sequential": (lambda: nn.Sequential(nn.Linear(4, 3), nn.Tanh()), [X3], None, False),
    "DataParallel": (lambda: nn.DataParallel(nn.Linear(4, 3)), [X3], None, False),
    # losses
    "BCELoss": (lambda: nn.BCELoss(), [f(3, 4, lo=0.1, hi=0.9), fx(3, 4, lo=0, hi=1)], None, False),
    "BCEWithLogitsLoss": (
        lambda: nn.BCEWithLogitsLoss(pos_weight=ember.tensor([1.0, 2.0, 0.5, 1.5])),
        [X3 - 1.0, fx(2, 3, 4, lo=0, hi=1)],
        None,
        False,
    ),
    "CTCLoss": (
        lambda: nn.CTCLoss(),
        [
            log_probs(6, 2, 4),
            ints(3, 2, 3) + 1,
            Fixed(np.array([6, 5])),
            Fixed(np.array([3, 2])),
        ],
        _ctc,
        False,
    ),
    "CosineEmbeddingLoss": (
        lambda: nn.CosineEmbeddingLoss(0.1),
        [f(3, 4), f(3, 4, seed=1), signs(3)],
        None,
        False,
    ),
    "CrossEntropyLoss": (
        lambda: nn.CrossEntropyLoss(weight=ember.tensor([1.0, 2.0, 0.5, 1.0]), label_smoothing=0.1),
        [f(3, 4), ints(4, 3)],
        None,
        False,
    ),
    "LinearCrossEntropyLoss": (
        lambda: nn.LinearCrossEntropyLoss(4, 3, bias=True, label_smoothing=0.1),
        [f(5, 4), ints(3, 5)],
        None,
        False,
    ),
    "GaussianNLLLoss": (
        lambda: nn.GaussianNLLLoss(),
        [f(3, 4), fx(3, 4), f(3, 4, seed=2)],
        None,
        False,
    ),
    "HingeEmbeddingLoss": (lambda: nn.HingeEmbeddingLoss(), [f(3, 4), signs(3, 4)], None, False),
    "HuberLoss": (lambda: nn.HuberLoss(delta=0.3), [f(3, 4), fx(3, 4)], None, False),
    "KLDivLoss": (
        lambda: nn.KLDivLoss(reduction="batchmean"),
        [log_probs(3, 4), fx(3, 4)],
        None,
        False,
    ),
    "L1Loss": (lambda: nn.L1Loss(), [f(3, 4), fx(3, 4)], None, False),
    "MSELoss": (lambda: nn.MSELoss(reduction="sum"), [f(3, 4), fx(3, 4)], None, False),
    "MarginRankingLoss": (
        lambda: nn.MarginRankingLoss(0.2),
        [f(4), f(4, seed=1), signs(4)],
        None,
        False,
    ),
    "MultiLabelMarginLoss": (
        lambda: nn.MultiLabelMarginLoss(),
        [f(2, 4), Fixed(np.array([[3, 0, -1, 1], [1, 2, 0, -1]]))],
        None,
        False,
    ),
    "MultiLabelSoftMarginLoss": (
        lambda: nn.MultiLabelSoftMarginLoss(),
        [f(3, 4), Fixed(ints(2, 3, 4).astype(float))],
        None,
        False,
    ),
    "MultiMarginLoss": (
        lambda: nn.MultiMarginLoss(p=2, margin=0.8),
        [f(3, 4), ints(4, 3)],
        None,
        False,
    ),
    "NLLLoss": (lambda: nn.NLLLoss(ignore_index=1), [log_probs(5, 4), ints(4, 5)], None, False),
    "NLLLoss2d": (lambda: nn.NLLLoss2d(), [log_probs(5, 4), ints(4, 5)], None, False),
    "PoissonNLLLoss": (
        lambda: nn.PoissonNLLLoss(full=True),
        [f(3, 4), fx(3, 4, lo=1, hi=4)],
        None,
        False,
    ),
    "SmoothL1Loss": (lambda: nn.SmoothL1Loss(beta=0.2), [f(3, 4), fx(3, 4)], None, False),
    "SoftMarginLoss": (lambda: nn.SoftMarginLoss(), [f(3, 4), signs(3, 4)], None, False),
    "TripletMarginLoss": (
        lambda: nn.TripletMarginLoss(swap=True),
        [f(3, 4), f(3, 4, seed=1), f(3, 4, seed=2)],
        None,
        False,
    ),
    "TripletMarginWithDistanceLoss": (
        lambda: nn.TripletMarginWithDistanceLoss(distance_function=nn.CosineSimilarity()),
        [f(3, 4), f(3, 4, seed=1), f(3, 4, seed=2)],
        None,
        False,
    ),
}

# Module classes with no forward of their own to run
NO_FORWARD = {
    "Module": "the base class",
    "Container": "deprecated base, no forward",
    "RNNBase": "base of RNN/LSTM/GRU (their rows)",
    "RNNCellBase": "base of the cell rows",
    "ModuleList": "holds modules, no forward",
    "ModuleDict": "holds modules, no forward",
    "ParameterList": "holds parameters, no forward",
    "ParameterDict": "holds parameters, no forward",
}


def _input(value, device):
    if isinstance(value, Fixed):
        return ember.tensor(value.value, device=device)
    t = ember.tensor(value, device=device)
    return t.requires_grad_() if t.dtype.is_floating_point else t


def _build(name, inputs):
    """The cpu module (float64, lazy ones materialized by a first cpu forward)."""
    ctor, _, call, _ = SPECS[name]
    ember.manual_seed(0)
    m = ctor().double()
    if name.startswith("Lazy"):
        with ember.no_grad():
            (call or (lambda mod, *a: mod(*a)))(m, *[_input(v, "cpu") for v in inputs])
    return m


def _run(module, name, device):
    """Forward + backward on `device`: (outputs, input grads, parameter grads, state)."""
    _, inputs, call, _ = SPECS[name]
    module = module.to(device)
    args = [_input(v, device) for v in inputs]
    ember.manual_seed(0)
    outs = _tensors((call or (lambda m, *a: m(*a)))(module, *args))
    diff = [o for o in outs if o.requires_grad]
    loss = sum(
        (
            o
            * ember.linspace(0.5, 1.5 + k, o.numel(), dtype=o.dtype, device=device).reshape(o.shape)
        ).sum()
        for k, o in enumerate(diff)
    )
    wrt = [a for a in args if a.requires_grad] + list(module.parameters())
    grads = ember.autograd.grad(loss, wrt, allow_unused=True) if diff else []
    return outs, [g for g in grads if g is not None], list(module.state_dict().values())


def _check_same(got, want, device_type, deterministic):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.device.type == "cuda", f"result {k} is on {g.device}"
        assert type(g._data) is device_type, f"result {k} holds a {type(g._data).__name__}"
        assert g.shape == w.shape and g.dtype == w.dtype, k
        if deterministic:
            np.testing.assert_allclose(
                np.asarray(g.detach().cpu()._data),
                w.detach()._data,
                rtol=1e-7,
                atol=1e-10,
                err_msg=f"result {k}",
            )


def _device_context(backend):
    if backend == "strict":
        return strict_cuda(), StrictArray
    import contextlib

    import cupy

    return contextlib.nullcontext(), cupy.ndarray


def test_every_module_class_has_a_row():
    classes = {n for n, c in vars(nn).items() if inspect.isclass(c) and issubclass(c, nn.Module)}
    rows = {name.split(":")[0] for name in SPECS}
    assert classes - rows - set(NO_FORWARD) == set()
    assert rows <= classes


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_module_on_device_matches_cpu(name, mode, backend):
    inputs, random = SPECS[name][1], SPECS[name][3]
    module = _build(name, inputs).train(mode == "train")
    # in eval mode dropout and RReLU are deterministic; fractional pooling draws in both
    random = random and (mode == "train" or name.startswith("Fractional"))
    ref = _run(copy.deepcopy(module), name, "cpu")
    ctx, device_type = _device_context(backend)
    with ctx:
        got = _run(module, name, "cuda")
        for got_part, ref_part in zip(got, ref):
            _check_same(got_part, ref_part, device_type, not random)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(n for n in SPECS if n.startswith("Lazy")))
def test_lazy_module_materializes_on_the_device(name, backend):
    # moved before its first forward: the parameters and buffers are made on the device
    ctor, inputs, _, _ = SPECS[name]
    ctx, device_type = _device_context(backend)
    with ctx:
        module = ctor().double().to("cuda")
        out = module(*[_input(v, "cuda") for v in inputs])
        assert type(out._data) is device_type and out.dtype == ember.float64
        for t in list(module.parameters()) + list(module.buffers()):
            assert type(t._data) is device_type and t.device.type == "cuda"
