"""Loss functions (nn/_losses.py) and loss modules (nn/modules/loss.py): parity with torch (values,
input gradients with a non-uniform upstream gradient, float32 and float64), float64 gradcheck,
torch's errors for bad targets and shapes, names of reduction='none' results."""

from __future__ import annotations

import warnings

import ember
import ember.nn.functional as EF
import numpy as np
import pytest
from harness import (
    A,
    Case,
    assert_same,
    needs_torch,
    raises_like_torch,
    run_case,
    run_gradcheck,
    same_error,
    torch,
)

if torch is not None:
    import torch.nn.functional as TF
else:  # pragma: no cover
    TF = None

N, C = 4, 5
REDS = ("none", "mean", "sum")


def F(m):
    return EF if m is ember else TF


def pm1(m, y):
    """A float target in {-1, 1} made from a uniform one (same values in ember and torch)."""
    return m.where(y > 0, 1.0, -1.0)


def cls(*shape, high=C - 1, low=0, seed=0):
    return A(*shape, dtype="int64", low=low, high=high, grad=False, seed=seed)


def f(*shape, dt="float32", **kw):
    return A(*shape, dtype=dt, **kw)


def _rows(dt: str) -> list:
    s = "" if dt == "float32" else "_f64"
    rows = []
    for red in REDS:
        r = f"_{red}{s}"
        rows += [
            Case(
                "l1" + r,
                lambda m, x, y, red=red: F(m).l1_loss(x, y, reduction=red),
                [f(N, C, dt=dt), f(N, C, dt=dt, grad=True)],
            ),
            Case(
                "mse" + r,
                lambda m, x, y, red=red: F(m).mse_loss(x, y, reduction=red),
                [f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            *(
                Case(
                    f"{k}_weight" + r,
                    lambda m, x, y, w, red=red, k=k: getattr(F(m), f"{k}_loss")(
                        x, y, reduction=red, weight=w
                    ),
                    [f(N, C, dt=dt), f(N, C, dt=dt), f(N, C, dt=dt, low=0.1, high=1, grad=False)],
                )
                for k in ("mse", "l1", "huber")
            ),
            Case(
                "huber" + r,
                lambda m, x, y, red=red: F(m).huber_loss(x, y, reduction=red, delta=0.7),
                [f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "smooth_l1" + r,
                lambda m, x, y, red=red: F(m).smooth_l1_loss(x, y, reduction=red, beta=0.5),
                [f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "smooth_l1_beta0" + r,
                lambda m, x, y, red=red: F(m).smooth_l1_loss(x, y, reduction=red, beta=0.0),
                [f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "soft_margin" + r,
                lambda m, x, y, red=red: F(m).soft_margin_loss(x, pm1(m, y), reduction=red),
                [f(N, C, dt=dt, low=-6, high=6), f(N, C, dt=dt, grad=False)],
            ),
            Case(
                "poisson_log" + r,
                lambda m, x, y, red=red: F(m).poisson_nll_loss(x, y, reduction=red),
                [f(N, C, dt=dt), f(N, C, dt=dt, low=0, high=4)],
            ),
            Case(
                "poisson_full" + r,
                lambda m, x, y, red=red: F(m).poisson_nll_loss(x, y, full=True, reduction=red),
                [f(N, C, dt=dt), f(N, C, dt=dt, low=0, high=4, grad=False)],
            ),
            Case(
                "poisson_rate" + r,
                lambda m, x, y, red=red: F(m).poisson_nll_loss(
                    x, y, log_input=False, reduction=red
                ),
                [f(N, C, dt=dt, low=0.2, high=3), f(N, C, dt=dt, low=0, high=4)],
            ),
            Case(
                "gaussian" + r,
                lambda m, x, y, v, red=red: F(m).gaussian_nll_loss(x, y, v, reduction=red),
                [f(N, C, dt=dt), f(N, C, dt=dt), f(N, C, dt=dt, low=0.2, high=2)],
            ),
            Case(
                "gaussian_homo_full" + r,
                lambda m, x, y, v, red=red: F(m).gaussian_nll_loss(
                    x, y, v, full=True, reduction=red
                ),
                [f(N, C, dt=dt), f(N, C, dt=dt), f(N, dt=dt, low=0.2, high=2)],
            ),
            Case(
                "gaussian_var1" + r,
                lambda m, x, y, v, red=red: F(m).gaussian_nll_loss(x, y, v, reduction=red),
                [f(N, C, dt=dt), f(N, C, dt=dt), f(N, 1, dt=dt, low=0.2, high=2)],
            ),
            Case(
                "gaussian_float" + r,
                lambda m, x, y, red=red: F(m).gaussian_nll_loss(x, y, 0.5, reduction=red),
                [f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "kl" + r,
                lambda m, x, y, red=red: F(m).kl_div(x, y, reduction=red),
                [f(N, C, dt=dt), f(N, C, dt=dt, low=0.05, high=1)],
            ),
            Case(
                "kl_log_target" + r,
                lambda m, x, y, red=red: F(m).kl_div(x, y, reduction=red, log_target=True),
                [f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "bce" + r,
                lambda m, x, y, red=red: F(m).binary_cross_entropy(x, y, reduction=red),
                [f(N, C, dt=dt, low=0.05, high=0.95), f(N, C, dt=dt, low=0, high=1)],
            ),
            Case(
                "bce_weight" + r,
                lambda m, x, y, w, red=red: F(m).binary_cross_entropy(x, y, w, reduction=red),
                [
                    f(N, C, dt=dt, low=0.05, high=0.95),
                    f(N, C, dt=dt, low=0, high=1, grad=False),
                    f(C, dt=dt, low=0.1, high=2, grad=False),
                ],
            ),
            Case(
                "bce_logits" + r,
                lambda m, x, y, red=red: F(m).binary_cross_entropy_with_logits(x, y, reduction=red),
                [f(N, C, dt=dt, low=-8, high=8), f(N, C, dt=dt, low=0, high=1)],
            ),
            Case(
                "bce_logits_pw" + r,
                lambda m, x, y, w, p, red=red: F(m).binary_cross_entropy_with_logits(
                    x, y, w, reduction=red, pos_weight=p
                ),
                [
                    f(N, C, dt=dt, low=-8, high=8),
                    f(N, C, dt=dt, low=0, high=1),
                    f(N, 1, dt=dt, low=0.1, high=2, grad=False),
                    f(C, dt=dt, low=0.2, high=3, grad=False),
                ],
            ),
            Case(
                "margin_ranking" + r,
                lambda m, a, b, y, red=red: F(m).margin_ranking_loss(
                    a, b, pm1(m, y), margin=0.3, reduction=red
                ),
                [f(N, dt=dt), f(N, dt=dt), f(N, dt=dt, grad=False)],
            ),
            Case(
                "hinge" + r,
                lambda m, x, y, red=red: F(m).hinge_embedding_loss(
                    x, pm1(m, y), margin=1.5, reduction=red
                ),
                [f(N, C, dt=dt), f(N, C, dt=dt, grad=False)],
            ),
            Case(
                "cosine" + r,
                lambda m, a, b, y, red=red: F(m).cosine_embedding_loss(
                    a, b, pm1(m, y), margin=-0.2, reduction=red
                ),
                [f(N, C, dt=dt), f(N, C, dt=dt), f(N, dt=dt, grad=False)],
            ),
            Case(
                "triplet" + r,
                lambda m, a, p, n, red=red: F(m).triplet_margin_loss(
                    a, p, n, margin=2.0, reduction=red
                ),
                [f(N, C, dt=dt), f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "triplet_p1_swap" + r,
                lambda m, a, p, n, red=red: F(m).triplet_margin_loss(
                    a, p, n, p=1, swap=True, margin=2.0, reduction=red
                ),
                [f(N, C, dt=dt), f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "triplet_dist" + r,
                lambda m, a, p, n, red=red: F(m).triplet_margin_with_distance_loss(
                    a, p, n, margin=2.0, reduction=red
                ),
                [f(N, C, dt=dt), f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "triplet_dist_custom" + r,
                lambda m, a, p, n, red=red: F(m).triplet_margin_with_distance_loss(
                    a,
                    p,
                    n,
                    distance_function=lambda u, v: (u - v).abs().sum(-1),
                    swap=True,
                    margin=1.5,
                    reduction=red,
                ),
                [f(N, C, dt=dt), f(N, C, dt=dt), f(N, C, dt=dt)],
            ),
            Case(
                "multi_margin" + r,
                lambda m, x, y, red=red: F(m).multi_margin_loss(x, y, reduction=red),
                [f(N, C, dt=dt), cls(N)],
            ),
            Case(
                "multi_margin_p2_w" + r,
                lambda m, x, y, w, red=red: F(m).multi_margin_loss(
                    x, y, p=2, margin=0.7, weight=w, reduction=red
                ),
                [f(N, C, dt=dt), cls(N), f(C, dt=dt, low=0.1, high=2, grad=False)],
            ),
            Case(
                "multilabel_margin" + r,
                lambda m, x, y, red=red: F(m).multilabel_margin_loss(x, y, reduction=red),
                [f(N, C, dt=dt), cls(N, C, low=-1, high=C - 1, seed=3)],
            ),
            Case(
                "multilabel_soft" + r,
                lambda m, x, y, w, red=red: F(m).multilabel_soft_margin_loss(
                    x, y, w, reduction=red
                ),
                [
                    f(N, C, dt=dt, low=-6, high=6),
                    f(N, C, dt=dt, low=0, high=1, grad=False),
                    f(C, dt=dt, low=0.1, high=2, grad=False),
                ],
            ),
            Case(
                "nll" + r,
                lambda m, x, y, red=red: F(m).nll_loss(x, y, reduction=red),
                [f(N, C, dt=dt), cls(N)],
            ),
            Case(
                "nll_w_ignore_kdim" + r,
                lambda m, x, y, w, red=red: F(m).nll_loss(x, y, w, ignore_index=1, reduction=red),
                [f(N, C, 3, 2, dt=dt), cls(N, 3, 2), f(C, dt=dt, low=0.1, high=2, grad=False)],
            ),
            Case(
                "ce" + r,
                lambda m, x, y, red=red: F(m).cross_entropy(x, y, reduction=red),
                [f(N, C, dt=dt, low=-5, high=5), cls(N)],
            ),
            Case(
                "ce_w_ignore_ls_kdim" + r,
                lambda m, x, y, w, red=red: F(m).cross_entropy(
                    x, y, w, ignore_index=2, reduction=red, label_smoothing=0.15
                ),
                [f(N, C, 3, dt=dt), cls(N, 3), f(C, dt=dt, low=0.1, high=2, grad=False)],
            ),
            Case(
                "ce_ls_ignore" + r,
                lambda m, x, y, red=red: F(m).cross_entropy(
                    x, y, ignore_index=0, reduction=red, label_smoothing=0.3
                ),
                [f(N, C, dt=dt), cls(N)],
            ),
            Case(
                "ce_probs" + r,
                lambda m, x, y, red=red: F(m).cross_entropy(x, y.softmax(1), reduction=red),
                [f(N, C, 2, dt=dt), f(N, C, 2, dt=dt)],
            ),
            Case(
                "ce_probs_w_ls" + r,
                lambda m, x, y, w, red=red: F(m).cross_entropy(
                    x, y.softmax(1), w, reduction=red, label_smoothing=0.2
                ),
                [
                    f(N, C, dt=dt),
                    f(N, C, dt=dt, grad=False),
                    f(C, dt=dt, low=0.1, high=2, grad=False),
                ],
            ),
            Case(
                "ctc" + r,
                lambda m, x, y, red=red: F(m).ctc_loss(
                    x.log_softmax(2), y, [6, 5, 6, 4], [3, 2, 1, 2], reduction=red
                ),
                [f(6, N, C, dt=dt), cls(N, 3, low=1, seed=1)],
                atol=1e-4,
            ),
        ]
    rows += [
        Case(
            "ce_unbatched" + s,
            lambda m, x, y: F(m).cross_entropy(x, y),
            [f(C, dt=dt), A(dtype="int64", low=0, high=C - 1, grad=False)],
        ),
        Case(
            "ce_unbatched_probs" + s,
            lambda m, x, y: F(m).cross_entropy(x, y.softmax(0)),
            [f(C, dt=dt), f(C, dt=dt)],
        ),
        Case(
            "nll_unbatched_none" + s,
            lambda m, x, y: F(m).nll_loss(x, y, reduction="none"),
            [f(C, dt=dt), A(dtype="int64", low=0, high=C - 1, grad=False)],
        ),
        Case(
            "kl_batchmean" + s,
            lambda m, x, y: F(m).kl_div(x, y, reduction="batchmean"),
            [f(N, C, dt=dt), f(N, C, dt=dt, low=0.05, high=1)],
        ),
        Case(
            "multi_margin_1d" + s,
            lambda m, x, y: F(m).multi_margin_loss(x, y, reduction="none"),
            [f(C, dt=dt), A(1, dtype="int64", low=0, high=C - 1, grad=False)],
        ),
        Case(
            "multilabel_margin_1d" + s,
            lambda m, x, y: F(m).multilabel_margin_loss(x, y, reduction="none"),
            [f(C, dt=dt), cls(C, low=-1, high=C - 1, seed=5)],
        ),
        Case(
            "cosine_1d" + s,
            lambda m, a, b: F(m).cosine_embedding_loss(a, b, m.tensor(-1.0), margin=-0.5),
            [f(C, dt=dt), f(C, dt=dt)],
        ),
        Case(
            "ctc_concat_zero_inf" + s,
            lambda m, x, y: F(m).ctc_loss(
                x.log_softmax(2),
                y,
                (5, 5, 2, 4),
                (2, 3, 3, 2),
                reduction="none",
                zero_infinity=True,
            ),
            [f(5, N, C, dt=dt), cls(10, low=1, seed=2)],
            atol=1e-4,
        ),
        Case(
            "ctc_repeats_blank3" + s,
            lambda m, x, y: F(m).ctc_loss(
                x.log_softmax(2),
                y,
                m.tensor([7, 7, 6, 7]),
                m.tensor([4, 3, 0, 2]),
                blank=3,
                reduction="sum",
            ),
            [f(7, N, C, dt=dt), A(N, 4, dtype="int64", low=0, high=2, grad=False)],
            atol=1e-4,
        ),
        Case(
            "ctc_raw_logprobs" + s,
            lambda m, x, y: F(m).ctc_loss(x, y, [6, 6, 5, 3], [3, 2, 2, 1], reduction="none"),
            [f(6, N, C, dt=dt, low=-3, high=-0.1), cls(N, 3, low=1, seed=1)],
            atol=1e-4,
            gradcheck=False,
        ),
        Case(
            "ctc_unbatched_tuple" + s,
            lambda m, x, y: F(m).ctc_loss(x.log_softmax(1), y, (6,), (3,), reduction="sum"),
            [f(6, C, dt=dt), cls(3, low=1, seed=4)],
            atol=1e-4,
        ),
        Case(
            "ctc_unbatched" + s,
            lambda m, x, y: F(m).ctc_loss(x.log_softmax(1), y, m.tensor(6), m.tensor(3)),
            [f(6, C, dt=dt), cls(3, low=1, seed=4)],
            atol=1e-4,
        ),
    ]
    return rows


CASES = _rows("float32") + _rows("float64")
GRAD_CASES = [c for c in _rows("float32") if c.gradcheck]
NO_GRADGRAD = ("ctc",)  # torch's CTC has no double backward either


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=not case.name.startswith(NO_GRADGRAD))


# ====================================================================== modules
from nn_harness import check_module


def _ns(x):
    return ember if isinstance(x, ember.Tensor) else torch


def _w(m, n=C, seed=0):
    return m.tensor(np.random.default_rng(seed).uniform(0.2, 2.0, n).astype("float32"))


def _pm1_call(mod, *xs):
    *a, y = xs
    return mod(*a, pm1(_ns(y), y))


MODULES = [
    ("L1Loss", lambda m: m.nn.L1Loss(), [A(N, C), A(N, C)], None),
    ("MSELoss_sum", lambda m: m.nn.MSELoss(reduction="sum"), [A(N, C), A(N, C)], None),
    ("MSELoss_legacy", lambda m: m.nn.MSELoss(size_average=False), [A(N, C), A(N, C)], None),
    (
        "CrossEntropyLoss",
        lambda m: m.nn.CrossEntropyLoss(weight=_w(m), ignore_index=1, label_smoothing=0.1),
        [A(N, C, 3), cls(N, 3)],
        None,
    ),
    ("NLLLoss", lambda m: m.nn.NLLLoss(weight=_w(m), reduction="none"), [A(N, C), cls(N)], None),
    (
        "PoissonNLLLoss",
        lambda m: m.nn.PoissonNLLLoss(full=True),
        [A(N, C), A(N, C, low=0, high=4, grad=False)],
        None,
    ),
    (
        "GaussianNLLLoss",
        lambda m: m.nn.GaussianNLLLoss(full=True, reduction="sum"),
        [A(N, C), A(N, C), A(N, 1, low=0.1, high=2)],
        None,
    ),
    (
        "KLDivLoss",
        lambda m: m.nn.KLDivLoss(reduction="batchmean", log_target=True),
        [A(N, C), A(N, C)],
        None,
    ),
    (
        "BCELoss",
        lambda m: m.nn.BCELoss(weight=_w(m)),
        [A(N, C, low=0.05, high=0.95), A(N, C, low=0, high=1, grad=False)],
        None,
    ),
    (
        "BCEWithLogitsLoss",
        lambda m: m.nn.BCEWithLogitsLoss(weight=_w(m), pos_weight=_w(m, seed=1)),
        [A(N, C, low=-6, high=6), A(N, C, low=0, high=1)],
        None,
    ),
    (
        "MarginRankingLoss",
        lambda m: m.nn.MarginRankingLoss(margin=0.2),
        [A(N), A(N), A(N, grad=False)],
        _pm1_call,
    ),
    (
        "HingeEmbeddingLoss",
        lambda m: m.nn.HingeEmbeddingLoss(margin=0.5, reduction="none"),
        [A(N, C), A(N, C, grad=False)],
        _pm1_call,
    ),
    (
        "MultiLabelMarginLoss",
        lambda m: m.nn.MultiLabelMarginLoss(),
        [A(N, C), cls(N, C, low=-1, seed=3)],
        None,
    ),
    ("HuberLoss", lambda m: m.nn.HuberLoss(delta=0.5), [A(N, C), A(N, C)], None),
    ("SmoothL1Loss", lambda m: m.nn.SmoothL1Loss(beta=0.5), [A(N, C), A(N, C)], None),
    ("SoftMarginLoss", lambda m: m.nn.SoftMarginLoss(), [A(N, C), A(N, C, grad=False)], _pm1_call),
    (
        "MultiLabelSoftMarginLoss",
        lambda m: m.nn.MultiLabelSoftMarginLoss(weight=_w(m)),
        [A(N, C), A(N, C, low=0, high=1, grad=False)],
        None,
    ),
    (
        "CosineEmbeddingLoss",
        lambda m: m.nn.CosineEmbeddingLoss(margin=0.1),
        [A(N, C), A(N, C), A(N, grad=False)],
        _pm1_call,
    ),
    ("MultiMarginLoss", lambda m: m.nn.MultiMarginLoss(p=2, weight=_w(m)), [A(N, C), cls(N)], None),
    (
        "TripletMarginLoss",
        lambda m: m.nn.TripletMarginLoss(margin=1.5, swap=True),
        [A(N, C), A(N, C), A(N, C)],
        None,
    ),
    (
        "TripletMarginWithDistanceLoss",
        lambda m: m.nn.TripletMarginWithDistanceLoss(margin=2.0),
        [A(N, C), A(N, C), A(N, C)],
        None,
    ),
    (
        "CTCLoss",
        lambda m: m.nn.CTCLoss(blank=C - 1, reduction="mean"),
        [A(6, N, C), A(N, 3, dtype="int64", low=0, high=C - 2, grad=False)],
        lambda mod, x, y: mod(x.log_softmax(2), y, [6, 6, 5, 4], [3, 1, 2, 2]),
    ),
]


@pytest.mark.parametrize("row", MODULES, ids=lambda r: r[0])
def test_module_parity(row):
    _, ctor, inputs, call = row
    check_module(ctor, inputs, call=call, atol=1e-4)


@needs_torch
def test_module_state_and_repr():
    import ember.nn as enn

    m = enn.BCEWithLogitsLoss(weight=ember.ones(3), pos_weight=ember.ones(3))
    assert list(m.state_dict()) == ["weight", "pos_weight"]
    assert list(enn.CrossEntropyLoss().state_dict()) == []
    assert repr(enn.CrossEntropyLoss()) == repr(torch.nn.CrossEntropyLoss())
    assert repr(enn.TripletMarginWithDistanceLoss()) == repr(
        torch.nn.TripletMarginWithDistanceLoss()
    )
    assert enn.modules.loss.NLLLoss is enn.NLLLoss
    from ember.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss

    assert AdaptiveLogSoftmaxWithLoss is enn.AdaptiveLogSoftmaxWithLoss
    import copy
    import pickle

    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert list(clone.state_dict()) == ["weight", "pos_weight"]
        assert clone.reduction == "mean" and clone.weight.shape == (3,)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert enn.L1Loss(reduce=False).reduction == "none"
    assert enn.L1Loss(size_average=False).reduction == "sum"


@needs_torch
def test_module_constructor_errors():
    for m in (ember, torch):
        with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
            m.nn.MultiMarginLoss(p=3)
        with pytest.raises(ValueError, match="expected margin to be greater than 0, got -1"):
            m.nn.TripletMarginWithDistanceLoss(margin=-1)
        with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
            m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 4])
        with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger"):
            m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])


# ---------------------------------------------------------------------- adaptive softmax
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax(dt, head_bias):
    def ctor(m):
        return m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=head_bias)

    tgt = A(9, dtype="int64", low=0, high=11, grad=False, seed=2)
    check_module(ctor, [A(9, 8), tgt], dtypes=(dt,), atol=1e-4)
    check_module(ctor, [A(9, 8)], dtypes=(dt,), call=lambda mod, x: mod.log_prob(x), atol=1e-4)
    check_module(ctor, [A(9, 8)], dtypes=(dt,), call=lambda mod, x: mod.predict(x), grad=False)
    # unbatched: a (8,) input and a 0-dim target
    check_module(ctor, [A(8), A(dtype="int64", low=0, high=11, grad=False)], dtypes=(dt,),
                 atol=1e-4)  # fmt: skip


@needs_torch
def test_adaptive_log_softmax_errors():
    def run(m, x, y):
        torch.manual_seed(0)
        return m.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7])(x, y)

    for m in (ember, torch):
        with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 11\]"):
            run(m, m.zeros(2, 8), m.tensor([0, 12]))
        with pytest.raises(RuntimeError, match="Input and target should have the same size"):
            run(m, m.zeros(2, 8), m.tensor([0, 1, 2]))
        with pytest.raises(RuntimeError, match="multi-target not supported"):
            run(m, m.zeros(2, 8), m.zeros(2, 1, dtype=m.long))


# ====================================================================== errors and warnings
x35 = lambda m: m.ones(3, 5)
ERRORS = [
    (
        "ce_oob",
        lambda m: F(m).cross_entropy(x35(m), m.tensor([1, 5, 2])),
        IndexError,
        "Target 5 is out of bounds.",
    ),
    (
        "nll_neg",
        lambda m: F(m).nll_loss(x35(m), m.tensor([1, -1, 2])),
        IndexError,
        "Target -1 is out of bounds.",
    ),
    (
        "nll_oob_kdim",
        lambda m: F(m).nll_loss(m.ones(3, 5, 2), m.tensor([[1, 7]] * 3)),
        IndexError,
        "Target 7 is out of bounds.",
    ),
    (
        "nll_batch",
        lambda m: F(m).nll_loss(x35(m), m.tensor([1, 2])),
        ValueError,
        "Expected input batch_size (3) to match target batch_size (2).",
    ),
    (
        "nll_0d_target",
        lambda m: F(m).nll_loss(x35(m), m.tensor(2)),
        ValueError,
        "Expected input batch_size (3) to match target batch_size (0).",
    ),
    (
        "nll_float_target",
        lambda m: F(m).nll_loss(x35(m), m.tensor([1.0, 2, 3])),
        RuntimeError,
        "expected target dtype to be Long or Byte, but got Float",
    ),
    (
        "ce_int32_target",
        lambda m: F(m).cross_entropy(x35(m), m.tensor([1, 2, 3]).int()),
        RuntimeError,
        "expected target dtype to be Long or Byte, but got Int",
    ),
    (
        "ce_multi_target",
        lambda m: F(m).cross_entropy(x35(m), m.ones(3, 4)),
        RuntimeError,
        "0D or 1D target tensor expected, multi-target not supported",
    ),
    (
        "ce_kdim_shape",
        lambda m: F(m).cross_entropy(m.ones(3, 5, 2), m.tensor([1, 2, 3])),
        RuntimeError,
        "Expected target size [3, 2], got [3]",
    ),
    (
        "ce_weight",
        lambda m: F(m).cross_entropy(x35(m), m.tensor([1, 2, 3]), weight=m.ones(4)),
        RuntimeError,
        (
            "weight tensor should be defined either for all 5 classes or no classes but "
            "got weight tensor of shape: [4]"
        ),
    ),
    (
        "nll_0dim_input",
        lambda m: F(m).nll_loss(m.ones(()), m.tensor(2)),
        ValueError,
        "Expected 1 or more dimensions (got 0)",
    ),
    (
        "ce_label_smoothing",
        lambda m: F(m).cross_entropy(x35(m), m.tensor([1, 2, 3]), label_smoothing=1.5),
        RuntimeError,
        "label_smoothing must be between 0.0 and 1.0. Got: 1.5",
    ),
    (
        "bad_reduction",
        lambda m: F(m).mse_loss(x35(m), x35(m), reduction="foo"),
        ValueError,
        "foo is not a valid value for reduction",
    ),
    (
        "ce_bad_reduction",
        lambda m: F(m).cross_entropy(x35(m), m.tensor([1, 2, 3]), reduction="x"),
        ValueError,
        "x is not a valid value for reduction",
    ),
    (
        "mse_broadcast_fail",
        lambda m: F(m).mse_loss(x35(m), m.ones(4, 1)),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0",
    ),
    (
        "mse_int",
        lambda m: F(m).mse_loss(m.ones(3, dtype=m.long), m.ones(3, dtype=m.long)),
        NotImplementedError,
        "\"mse_cpu\" not implemented for 'Long'",
    ),
    (
        "weight_size",
        lambda m: F(m).mse_loss(x35(m), x35(m), weight=m.ones(5)),
        ValueError,
        "Weights and input must have the same size.",
    ),
    (
        "bce_size",
        lambda m: F(m).binary_cross_entropy(x35(m) / 2, m.ones(3, 1) / 2),
        ValueError,
        (
            "Using a target size (torch.Size([3, 1])) that is different to the input size "
            "(torch.Size([3, 5])) is deprecated. Please ensure they have the same size."
        ),
    ),
    (
        "bce_range",
        lambda m: F(m).binary_cross_entropy(x35(m) * 2, x35(m) / 2),
        RuntimeError,
        "all elements of input should be between 0 and 1",
    ),
    (
        "bce_target_range",
        lambda m: F(m).binary_cross_entropy(x35(m) / 2, x35(m) * 2),
        RuntimeError,
        "all elements of target should be between 0 and 1",
    ),
    (
        "bcel_size",
        lambda m: F(m).binary_cross_entropy_with_logits(x35(m), m.ones(3, 1)),
        ValueError,
        ("Target size (torch.Size([3, 1])) must be the same as input size (torch.Size([3, 5]))"),
    ),
    (
        "smooth_l1_beta",
        lambda m: F(m).smooth_l1_loss(x35(m), x35(m), beta=-1.0),
        RuntimeError,
        "smooth_l1_loss does not support negative values for beta.",
    ),
    (
        "huber_delta",
        lambda m: F(m).huber_loss(x35(m), x35(m), delta=-1.0),
        RuntimeError,
        "huber_loss does not support non-positive values for delta.",
    ),
    (
        "gauss_var_size",
        lambda m: F(m).gaussian_nll_loss(x35(m), x35(m), m.ones(2, 5)),
        ValueError,
        "var is of incorrect size",
    ),
    (
        "gauss_var_neg",
        lambda m: F(m).gaussian_nll_loss(x35(m), x35(m), -m.ones(3, 5)),
        ValueError,
        "var has negative entry/entries",
    ),
    (
        "gauss_reduction",
        lambda m: F(m).gaussian_nll_loss(x35(m), x35(m), x35(m), reduction="x"),
        ValueError,
        "x is not valid",
    ),
    (
        "kl_reduction",
        lambda m: F(m).kl_div(x35(m), x35(m), reduction="x"),
        ValueError,
        "x is not a valid value for reduction",
    ),
    (
        "mm_p",
        lambda m: F(m).multi_margin_loss(x35(m), m.tensor([1, 2, 2]), p=3),
        ValueError,
        "only p == 1 and p == 2 supported",
    ),
    (
        "mm_oob",
        lambda m: F(m).multi_margin_loss(x35(m), m.tensor([1, 7, 2])),
        RuntimeError,
        "target out of range",
    ),
    (
        "mm_weight",
        lambda m: F(m).multi_margin_loss(x35(m), m.tensor([1, 2, 2]), weight=m.ones(5, 1)),
        ValueError,
        "weight must be one-dimensional",
    ),
    (
        "mm_shape",
        lambda m: F(m).multi_margin_loss(x35(m), m.tensor([1, 2])),
        RuntimeError,
        (
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
            "samples (batch size). Expected target size [3], but got [2]. Input has shape [3, 5]."
        ),
    ),
    (
        "mm_3d",
        lambda m: F(m).multi_margin_loss(m.ones(2, 3, 4), m.tensor([1, 2])),
        RuntimeError,
        ("Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 3, 4]"),
    ),
    (
        "mlm_shape",
        lambda m: F(m).multilabel_margin_loss(x35(m), m.zeros(3, 4, dtype=m.long)),
        RuntimeError,
        "inconsistent target size: [3, 4] for input of size: [3, 5]",
    ),
    (
        "mlm_oob",
        lambda m: F(m).multilabel_margin_loss(x35(m), m.tensor([[7, -1, 0, 0, 0]] * 3)),
        RuntimeError,
        "argument #2 'target' is out of range",
    ),
    (
        "mrl_dims",
        lambda m: F(m).margin_ranking_loss(m.ones(3), m.ones(3, 1), m.ones(3)),
        RuntimeError,
        (
            "margin_ranking_loss : All input tensors should have same dimension but got "
            "sizes: input1: torch.Size([3]), input2: torch.Size([3, 1]), target: torch.Size([3]) "
        ),
    ),
    (
        "cos_dims",
        lambda m: F(m).cosine_embedding_loss(m.ones(3, 4), m.ones(3), m.ones(3)),
        RuntimeError,
        ("1D target tensor expects 2D input tensors, but found inputs with sizes [3, 4] and [3]."),
    ),
    (
        "cos_target",
        lambda m: F(m).cosine_embedding_loss(m.ones(3, 4), m.ones(3, 4), m.ones(3, 1)),
        RuntimeError,
        "0D or 1D target tensor expected, multi-target not supported",
    ),
    (
        "triplet_dims",
        lambda m: F(m).triplet_margin_loss(m.ones(3, 4), m.ones(3, 4), m.ones(3)),
        RuntimeError,
        (
            "The anchor, positive, and negative tensors are expected to have the same "
            "number of dimensions, but got: anchor 2D, positive 2D, and negative 1D inputs"
        ),
    ),
    (
        "triplet_dist_margin",
        lambda m: F(m).triplet_margin_with_distance_loss(
            m.ones(3, 4), m.ones(3, 4), m.ones(3, 4), margin=-1
        ),
        ValueError,
        "margin must be greater than 0, got -1",
    ),
]


ERRORS += [
    ("huber_long", lambda m: F(m).huber_loss(m.tensor([1, 2]), m.tensor([2, 2])),
     NotImplementedError, "\"huber_cpu\" not implemented for 'Long'"),
    ("smooth_l1_long", lambda m: F(m).smooth_l1_loss(m.tensor([1, 2]), m.tensor([2, 2])),
     NotImplementedError, "\"smooth_l1_cpu\" not implemented for 'Long'"),
    ("kl_long", lambda m: F(m).kl_div(m.ones(2), m.tensor([1, 0])), RuntimeError,
     "kl_div: Integral inputs not supported."),
    ("ce_int_input", lambda m: F(m).cross_entropy(m.ones(3, 5, dtype=m.long), m.tensor([1, 2, 3])),
     NotImplementedError, "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'"),
]  # fmt: skip


@pytest.mark.parametrize("row", ERRORS, ids=lambda r: r[0])
def test_errors(row):
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


def test_ctc_errors():
    def lp(m):
        return m.zeros(5, 2, 4)

    def tg(m):
        return m.ones(2, 3, dtype=m.long)

    where = "for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
    rows = [
        (lambda m: F(m).ctc_loss(lp(m), tg(m), [5, 6], [2, 2]), RuntimeError,
         "Expected input_lengths to have value at most 5, but got value 6"),
        (lambda m: F(m).ctc_loss(lp(m), tg(m), [5, 5, 5], [2, 2]), RuntimeError,
         "input_lengths must be of size batch_size"),
        (lambda m: F(m).ctc_loss(lp(m), tg(m), [5, 5], [2, 2, 2]), RuntimeError,
         "target_lengths must be of size batch_size"),
        (lambda m: F(m).ctc_loss(lp(m), tg(m), [5, 5], [2, 2], blank=4), RuntimeError,
         "blank must be in label range"),
        (lambda m: F(m).ctc_loss(lp(m), tg(m), [5, 5], [4, 2]), RuntimeError,
         "Expected tensor to have size at least 4 at dimension 1, but got size 3 " + where),
        (lambda m: F(m).ctc_loss(lp(m), m.ones(3, dtype=m.long), [5, 5], [2, 2]), RuntimeError,
         "Expected tensor to have size 4 at dimension 0, but got size 3 " + where),
        (lambda m: F(m).ctc_loss(lp(m).long(), tg(m), [5, 5], [2, 2]), NotImplementedError,
         "\"ctc_loss_cpu\" not implemented for 'Long'"),
    ]  # fmt: skip
    for fn, exc, msg in rows:
        raises_like_torch(fn, exc, msg)
    # torch reads out of bounds for a target class >= C; ember refuses
    with pytest.raises(RuntimeError, match=r"target values must be in \[0, 3\]"):
        EF.ctc_loss(lp(ember), ember.tensor([[1, 9, 1], [1, 2, 3]]), [5, 5], [3, 3])


@needs_torch
def test_size_warning():
    for m in (ember, torch):
        with pytest.warns(
            UserWarning,
            match=r"Using a target size \(torch.Size\(\[3, 1\]\)\) "
            r"that is different to the input size \(torch.Size\(\[3, 5\]\)\)",
        ):
            F(m).mse_loss(x35(m), m.ones(3, 1))
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            F(m).kl_div(x35(m), x35(m))


@needs_torch
@pytest.mark.parametrize("legacy", [(None, False), (False, None), (False, True), (True, True)])
def test_legacy_reduction(legacy):
    sa, red = legacy
    arr = np.random.default_rng(0).normal(size=(3, 5)).astype("float32")
    tgt = np.array([1, 0, 4])
    out = {}
    for m in (ember, torch):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            out[m] = F(m).cross_entropy(m.tensor(arr), m.tensor(tgt), size_average=sa, reduce=red)
    np.testing.assert_allclose(np.asarray(out[ember]._data), out[torch].numpy(), rtol=1e-5)


@needs_torch
def test_all_ignored_is_nan_and_zero_infinity():
    for m in (ember, torch):
        empty = F(m).cross_entropy(m.ones(0, 3), m.ones(0, dtype=m.long), reduction="sum")
        assert empty.item() == 0 and not np.signbit(empty.item())
        v = F(m).cross_entropy(x35(m), m.tensor([-100] * 3))
        assert v.isnan().item()
    # an impossible alignment (target longer than the input): inf, or 0 with zero_infinity
    lp = np.log(np.full((2, 1, 3), 1 / 3, dtype="float32"))
    for m in (ember, torch):
        x = m.tensor(lp, requires_grad=True)
        y = m.tensor([[1, 2, 1]])
        assert F(m).ctc_loss(x, y, [2], [3], reduction="sum").isinf().item()
        z = F(m).ctc_loss(x, y, [2], [3], reduction="sum", zero_infinity=True)
        z.backward()
        assert z.item() == 0 and not x.grad.abs().sum().item()


# ====================================================================== names (spec 4.3)
def test_names_none_reduction_keeps_batch_names():
    x = ember.randn(3, 5, names=("N", "C"))
    y = ember.randn(3, 5, names=(None, "C"))
    assert EF.mse_loss(x, y, reduction="none").names == ("N", "C")
    assert EF.mse_loss(x, y).names == ()
    t = ember.tensor([1, 0, 4], names=("N",))
    assert EF.cross_entropy(x, t, reduction="none").names == ("N",)
    assert EF.cross_entropy(x.rename(None), t, reduction="none").names == ("N",)
    assert EF.cross_entropy(target=t, input=x, reduction="none").names == ("N",)
    xk = ember.randn(3, 5, 2, names=("N", "C", "L"))
    tk = ember.zeros(3, 2, dtype=ember.long)
    assert EF.nll_loss(xk, tk, reduction="none").names == ("N", "L")
    assert EF.cross_entropy(xk, xk.softmax(1), reduction="none").names == ("N", "L")
    assert EF.multi_margin_loss(x, t, reduction="none").names == ("N",)
    assert EF.triplet_margin_loss(x, x, x, reduction="none").names == ("N",)
    lp = ember.randn(6, 2, 4, names=("T", "N", "C")).log_softmax(2)
    out = EF.ctc_loss(lp, ember.ones(2, 3, dtype=ember.long), [6, 6], [3, 2], reduction="none")
    assert out.names == ("N",)
    with pytest.raises(RuntimeError, match="do not match"):
        EF.mse_loss(x, ember.randn(3, 5, names=("M", "C")), reduction="none")


def test_names_gradient():
    x = ember.randn(3, 5, names=("N", "C"), requires_grad=True)
    EF.cross_entropy(x, ember.tensor([1, 0, 4]), reduction="none").sum().backward()
    assert x.grad.names == ("N", "C")


# ====================================================================== BCE at 0 and 1
@needs_torch
@pytest.mark.parametrize("red", REDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_saturated_gradient(red, weighted):
    """x exactly 0 or 1 (a saturated sigmoid): torch's gradient (x - y) / max(x (1 - x), 1e-12)
    stays finite where the clamped logs' would be inf * 0 = NaN; double backward follows torch's
    formulas too."""
    xs = np.array([0.0, 1.0, 1e-30, 0.3, 1 - 1e-7, 1.0, 0.0], "float32")
    ys = np.array([1.0, 0.0, 1.0, 0.2, 0.0, 1.0, 0.0], "float32")
    ws = np.linspace(0.5, 2.0, 7).astype("float32")
    up = np.linspace(0.5, 1.5, 7).astype("float32") if red == "none" else np.float32(1.3)
    res = {}
    for m in (ember, torch):
        x = m.tensor(xs, requires_grad=True)
        y = m.tensor(ys, requires_grad=True)
        w = m.tensor(ws) if weighted else None
        loss = F(m).binary_cross_entropy(x, y, w, reduction=red)
        gx, gy = m.autograd.grad(loss, (x, y), m.tensor(up), create_graph=True)
        # gy is +-inf at x in {0, 1} (torch's -logit(x)): keep it out of the second derivative
        gg = m.autograd.grad((gx * m.tensor(ws[::-1].copy())).sum() + gy[2:5].sum(), (x, y))
        res[m] = (loss, gx, gy, *gg)
    for k, (e, t) in enumerate(zip(res[ember], res[torch])):
        assert_same(e, t, rtol=1e-5, what=f"output {k}")


@needs_torch
def test_bce_saturated_sigmoid():
    out = {}
    for m in (ember, torch):
        z = m.tensor([20.0, -120.0, 3.0], requires_grad=True)
        F(m).binary_cross_entropy(m.sigmoid(z), m.tensor([1.0, 0.0, 1.0])).backward()
        out[m] = z.grad
    assert_same(out[ember], out[torch])


@needs_torch
@pytest.mark.parametrize("p", [1, 2])
def test_margin_losses_no_gradient_at_the_hinge(p):
    """A hinge term exactly 0 (margin - x[y] + x[j] == 0) gets no gradient in torch (> 0)."""
    xs = np.array([[1.0, 0.0, 0.5, 2.0], [0.25, 1.25, -1.0, 0.25]], "float32")
    up = np.array([0.7, 1.3], "float32")
    for fn in (
        lambda m, x: F(m).multi_margin_loss(x, m.tensor([0, 3]), p=p, reduction="none"),
        lambda m, x: F(m).multilabel_margin_loss(x, m.tensor([[0, -1, 0, 0], [3, 1, -1, 0]]), reduction="none"),
    ):  # fmt: skip
        g = {}
        for m in (ember, torch):
            x = m.tensor(xs, requires_grad=True)
            fn(m, x).backward(m.tensor(up))
            g[m] = x.grad
        assert_same(g[ember], g[torch])


_NO_DERIVATIVE = {
    "nll": lambda m, w: F(m).nll_loss(m.randn(2, 3), m.tensor([0, 2]), weight=w),
    "nll 2d target": lambda m, w: F(m).nll_loss(m.randn(2, 3), m.zeros(2, 2).long(), weight=w),
    "nll image": lambda m, w: F(m).nll_loss(m.randn(2, 3, 4, 5), m.zeros(2, 4).long(), weight=w),
    "nll 3-d": lambda m, w: F(m).nll_loss(m.randn(2, 3, 4), m.zeros(2, 4).long(), weight=w),
    "nll bad 3-d target": lambda m, w: F(m).nll_loss(
        m.randn(2, 3, 4), m.zeros(2, 5).long(), weight=w
    ),
    "cross_entropy smoothed": lambda m, w: F(m).cross_entropy(
        m.randn(2, 3), m.tensor([0, 2]), weight=w, label_smoothing=0.1
    ),
    "multi_margin": lambda m, w: F(m).multi_margin_loss(m.randn(2, 3), m.tensor([0, 2]), weight=w),
    "multi_margin 3-d": lambda m, w: F(m).multi_margin_loss(
        m.randn(2, 3, 4), m.tensor([0, 2]), weight=w
    ),
    "bce": lambda m, w: F(m).binary_cross_entropy(m.rand(4, 3), m.rand(4, 3), weight=w),
    "bce out of range": lambda m, w: F(m).binary_cross_entropy(m.rand(3) + 2, m.rand(3), weight=w),
    "bce_with_logits": lambda m, w: F(m).binary_cross_entropy_with_logits(
        m.randn(3), m.rand(3), weight=w
    ),
    "bce_with_logits pos_weight": lambda m, w: F(m).binary_cross_entropy_with_logits(
        m.randn(3), m.rand(3), pos_weight=w
    ),
    "bce_with_logits long input": lambda m, w: F(m).binary_cross_entropy_with_logits(
        m.ones(3).long(), m.rand(3), weight=w
    ),
}


@needs_torch
@pytest.mark.parametrize("case", list(_NO_DERIVATIVE))
def test_weights_requiring_grad_refused_in_torchs_order(case):
    """torch's kernels have no derivative for class/element weights: a weight requiring grad is
    refused under grad mode (the input need not require grad) after the checks its Python and
    nd wrappers make and before its kernels' own; ember differentiated through it."""
    fn = _NO_DERIVATIVE[case]
    msg = same_error(lambda m: fn(m, m.rand(3, requires_grad=True)))
    assert "not differentiable with respect to argument" in msg or "size" in msg


@needs_torch
def test_weights_requiring_grad_read_without_grad_mode():
    out = {}
    for m in (ember, torch):
        w = m.tensor([0.5, 2.0, 1.0], requires_grad=True)
        x = m.tensor([[0.1, -0.3, 0.8], [1.5, 0.2, -0.7]])
        with m.no_grad():
            out[m] = [
                F(m).cross_entropy(x, m.tensor([0, 2]), weight=w),
                F(m).binary_cross_entropy_with_logits(x, x.sigmoid(), weight=w, pos_weight=w),
            ]
    for e, t in zip(out[ember], out[torch]):
        assert_same(e, t, rtol=1e-6)
