"""Parity regressions found by the seventy-fifth wave, a seeded random fuzz of the loss functions
against torch (every loss of torch.nn.functional, random shapes, dtypes, reductions, target dtypes,
targets requiring grad, weights and the flags of each; values, dtypes, errors, warnings and
gradients of input and target). It found Byte class targets mishandled (an ignored target of an
unbatched or 2-d nll_loss/cross_entropy read as class 255; an (N, C, d...) input took a Byte target
torch refuses, as does a weighted, label-smoothed mean), multi_margin_loss and
multilabel_margin_loss running float16 and bfloat16 inputs torch's cpu kernels do not implement,
multi_margin_loss taking Int or Float targets, a weight of another dtype and a weight of the wrong
size, binary_cross_entropy_with_logits and soft_margin_loss broadcasting past the input's shape
(torch writes the loss into it), as binary_cross_entropy's weight (expanded to the target first;
broadcast_shapes' message printed a torch.Size argument as a tuple), huber_loss with operands of
two dtypes (torch: the input's dtype, and a backward that refuses them), l1/mse/smooth_l1 of a
0-dim input and a target of another floating dtype (torch broadcasts first, so both take part in
type promotion), an unbatched ctc_loss padding a 1-d target (torch keeps it in the concatenated
form) and taking 0-d or 3-d targets, and poisson_nll_loss(full=True) giving a target <= 0 a finite
gradient where torch's is NaN."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import assert_same, results_or_same_error, same_error
from harness import same_grads_or_error as _both
from harness import upstream as _up


def _F(T):
    return T.nn.functional


def _t(T, a, dtype="float64", rg=False):
    t = T.tensor(np.asarray(a)).to(getattr(T, dtype))
    return t.requires_grad_(True) if rg else t


def _logp(T, shape, seed, rg=True):
    a = np.random.RandomState(seed).randn(*shape)
    a = a - np.log(np.exp(a).sum(axis=1 if len(shape) > 1 else 0, keepdims=True))
    return _t(T, a, rg=rg)


def test_byte_target_at_ignore_index_is_ignored():
    # an ignored Byte target was turned into -1 in its own dtype: class 255, out of bounds
    def f(T):
        x = _logp(T, (5,), 0)
        out = _F(T).nll_loss(x, _t(T, 4, "uint8"), ignore_index=4, reduction="none")
        (g,) = T.autograd.grad(out, x, _up(T, out))
        return [out, g]

    _both(f)

    def g(T):
        x = _logp(T, (3, 4), 1)
        out = _F(T).cross_entropy(x, _t(T, [1, 2, 3], "uint8"), ignore_index=2)
        return [out, *T.autograd.grad(out, x)]

    _both(g)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 2)])
@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
def test_byte_target_of_spatial_input_refused(fn, shape):
    def f(T):
        t = np.zeros(shape[:1] + shape[2:], dtype=np.uint8)
        return getattr(_F(T), fn)(_logp(T, shape, 2), _t(T, t, "uint8"))

    assert same_error(f, RuntimeError) == "expected scalar type Long but found Byte"


@pytest.mark.parametrize("shape", [(4,), (3, 4)])
def test_byte_target_weighted_smoothed_mean_refused(shape):
    # torch gathers the weights at the targets for the smoothing term's mean: Long only
    def f(T, **kw):
        t = np.arange(shape[0] if len(shape) > 1 else 1).reshape(shape[:-1]) % 4
        return _F(T).cross_entropy(
            _logp(T, shape, 8), _t(T, t, "uint8"), _t(T, [1.0, 2.0, 0.5, 1.5]), **kw
        )

    msg = same_error(lambda T: f(T, label_smoothing=0.1), RuntimeError)
    assert msg == "gather(): Expected dtype int32/int64 for index"
    for want, got in results_or_same_error(lambda T: f(T, label_smoothing=0.1, reduction="sum")):
        assert_same(got, want, atol=1e-10, rtol=1e-10)
    # every target ignored: nothing to gather, no error (nan, as torch)
    got = results_or_same_error(lambda T: f(T, label_smoothing=0.1, ignore_index=0))
    if shape == (4,):
        assert np.isnan(got[0][1].item()) and np.isnan(got[0][0].item())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_margin_losses_half_input_not_implemented_on_cpu(dtype):
    x = np.random.RandomState(3).randn(2, 3)

    def mm(T):
        return _F(T).multi_margin_loss(_t(T, x, dtype), _t(T, [0, 2], "int64"))

    def ml(T):
        return _F(T).multilabel_margin_loss(
            _t(T, x, dtype), _t(T, [[0, -1, 1], [2, 1, -1]], "int64")
        )

    name = "Half" if dtype == "float16" else "BFloat16"
    got = same_error(mm, NotImplementedError)
    assert got == f"\"multi_margin_loss_cpu_kernel\" not implemented for '{name}'"
    got = same_error(ml, NotImplementedError)
    assert got == f"\"multilabel_margin_loss_forward_out_frame\" not implemented for '{name}'"


@pytest.mark.parametrize(
    "target, weight, msg",
    [
        (([0, 1], "int32"), None, "expected scalar type Long but found Int"),
        (([0.0, 1.0], "float32"), None, "expected scalar type Long but found Float"),
        (([0, 1], "int64"), ([1.0, 2.0, 3.0], "float64"), "expected scalar type Float but found Double"),
        (([0, 5], "int64"), ([1.0, 2.0, 3.0, 4.0], "float32"), "inconsistent weight size, expected 3 but got [4]"),
    ],
)  # fmt: skip
def test_multi_margin_target_and_weight_checks(target, weight, msg):
    x = np.random.RandomState(4).randn(2, 3)

    def f(T):
        w = None if weight is None else _t(T, *weight)
        return _F(T).multi_margin_loss(_t(T, x, "float32"), _t(T, *target), weight=w)

    assert same_error(f, RuntimeError) == msg


@pytest.mark.parametrize(
    "kw", [{"pos_weight": (2, 3)}, {"weight": (2, 3)}, {"pos_weight": (4,), "weight": (2, 1)}]
)
def test_bce_with_logits_weights_do_not_broadcast_past_input(kw):
    rs = np.random.RandomState(5)
    x, y = rs.randn(3), rs.rand(3)
    w = {k: rs.rand(*s) for k, s in kw.items()}

    def f(T):
        k = {n: _t(T, a) for n, a in w.items()}
        return _F(T).binary_cross_entropy_with_logits(_t(T, x), _t(T, y), reduction="none", **k)

    same_error(f, RuntimeError)


@pytest.mark.parametrize("wshape", [(2, 3), (4,), (2, 4)])
def test_bce_weight_expanded_to_target_then_into_input(wshape):
    # torch expands the weight to the target's size (its broadcast_shapes message), then
    # writes the loss into the input's shape
    def f(T):
        x, y = _t(T, [0.2, 0.7, 1.0]), _t(T, [0.0, 1.0, 0.5])
        return _F(T).binary_cross_entropy(x, y, weight=_t(T, np.ones(wshape)), reduction="none")

    same_error(f, RuntimeError)


@pytest.mark.parametrize(
    "shapes", [("S", (3,), (2, 4)), ("S", (3,), (4,)), ("", 3, 4), ("", (3,), [2, 4])]
)
def test_broadcast_shapes_message_prints_arguments_as_given(shapes):
    kind, *args = shapes

    def f(T):
        return T.broadcast_shapes(*[T.Size(a) if kind else a for a in args])

    assert same_error(f, RuntimeError).startswith("Attempting to broadcast a dimension of length 4")


def test_soft_margin_loss_target_does_not_broadcast_past_input():
    def f(T):
        return _F(T).soft_margin_loss(_t(T, [[0.5], [-1.0]]), _t(T, [1.0, -1.0, 1.0]))

    msg = same_error(f, RuntimeError)
    assert msg == "output with shape [2, 1] doesn't match the broadcast shape [2, 3]"


@pytest.mark.parametrize(
    "dtypes", [("float32", "float64"), ("float64", "float32"), ("float16", "float32")]
)
@pytest.mark.parametrize("which", [0, 1])
def test_huber_loss_of_two_dtypes(dtypes, which):
    rs = np.random.RandomState(6)
    x, y = rs.randn(4) * 2, rs.randn(4)

    def fwd(T):
        a, b = _t(T, x, dtypes[0], which == 0), _t(T, y, dtypes[1], which == 1)
        return a, b, _F(T).huber_loss(a, b, reduction="none")

    for (*_, want), (*_, got) in results_or_same_error(lambda T: [fwd(T)]):
        assert_same(got, want, atol=1e-3, rtol=1e-3)

    def back(T):
        a, b, out = fwd(T)
        return T.autograd.grad(out.sum(), (a, b)[which])

    same_error(back, RuntimeError)


@pytest.mark.parametrize("fn", ["l1_loss", "mse_loss", "smooth_l1_loss"])
def test_elementwise_loss_of_0d_input_promotes_with_target(fn):
    def f(T):
        a = _t(T, 1.5, "float16", True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = getattr(_F(T), fn)(a, _t(T, [1.0, 0.25], "bfloat16"), reduction="none")
        return out, T.autograd.grad(out, a, _up(T, out).to(out.dtype))[0]

    for want, got in results_or_same_error(f):
        assert_same(got, want, atol=1e-2, rtol=1e-2)


def test_unbatched_ctc_target_keeps_its_form():
    rs = np.random.RandomState(7)
    a = rs.randn(5, 3)
    a = a - np.log(np.exp(a).sum(1, keepdims=True))

    def run(T, tg, tl):
        x = _t(T, a, rg=True)
        out = _F(T).ctc_loss(x, _t(T, tg, "int64"), T.tensor(5), T.tensor(tl), reduction="none")
        return [out, *T.autograd.grad(out, x, _up(T, out))]

    # a 1-d target is the concatenated form: its size must be the target length
    msg = same_error(lambda T: run(T, [1, 2, 1, 2], 2), RuntimeError)
    assert msg.startswith("Expected tensor to have size 2 at dimension 0, but got size 4")
    _both(lambda T: run(T, [[1, 2, 1, 2]], 2))  # (1, S): padded
    _both(lambda T: run(T, [1, 2], 2))
    for tg in (1, [[[1, 2]]]):
        msg = same_error(lambda T, tg=tg: run(T, tg, 1), RuntimeError)
        assert msg.startswith("Expected 1 to 2 dimensions, but got")


def test_poisson_nll_full_target_grad():
    def f(T):
        x = _t(T, [0.5, -1.0, 2.0, 0.3, 1.0], rg=True)
        y = _t(T, [0.5, 0.0, -1.0, 3.0, 1.0], rg=True)
        out = _F(T).poisson_nll_loss(x, y, full=True, reduction="none")
        return [out, *T.autograd.grad(out, (x, y), _up(T, out))]

    got = _both(f)
    assert np.isnan(got[2][1]) and np.isnan(got[2][2]) and got[2][0] == -0.5


# ------------------------------------------------------------------ seeded mini-fuzz
def _case(seed):
    """One random loss call: (name, fn(T) -> [loss, grads...])."""
    r, s = random.Random(seed), np.random.RandomState(seed)
    red = r.choice(["none", "mean", "sum"])
    name = r.choice(
        ["l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss",
         "poisson_nll_loss", "kl_div", "bce", "bce_logits", "cross_entropy", "nll_loss",
         "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
         "gaussian_nll_loss", "cosine_embedding_loss", "triplet_margin_loss", "ctc_loss"]
    )  # fmt: skip
    N, C = r.randint(1, 4), r.randint(1, 5)
    sh = (N, C) if r.random() < 0.7 else (N, C, r.randint(1, 3))
    x, y = s.randn(*sh), s.randn(*sh)
    kw = {"reduction": red}
    extra = []
    if name in ("l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "kl_div"):
        if name == "smooth_l1_loss":
            kw["beta"] = r.choice([0.0, 0.5, 1.0])
        if name == "huber_loss":
            kw["delta"] = r.choice([0.5, 2.0])
        if name == "kl_div":
            kw["log_target"] = r.random() < 0.5
            kw["reduction"] = r.choice(["none", "sum", "batchmean"])
    elif name == "soft_margin_loss":
        y = np.where(y > 0, 1.0, -1.0)
    elif name == "poisson_nll_loss":
        y = np.abs(y) * 2
        kw.update(log_input=r.random() < 0.5, full=r.random() < 0.5)
        x = x if kw["log_input"] else np.abs(x) + 0.1
    elif name in ("bce", "bce_logits"):
        y = s.rand(*sh) if r.random() < 0.5 else s.randint(0, 2, sh).astype(float)
        x = 1 / (1 + np.exp(-x)) if name == "bce" else x * r.choice([1, 50])
        if r.random() < 0.5:
            kw["weight"] = ("w", s.rand(*sh[1:]) + 0.5)
        if name == "bce_logits" and r.random() < 0.5:
            kw["pos_weight"] = ("w", s.rand(*sh[1:2] + (1,) * (len(sh) - 2)) * 3)
        name = "binary_cross_entropy" + ("_with_logits" if name == "bce_logits" else "")
    elif name in ("cross_entropy", "nll_loss"):
        y = ("i", s.randint(0, C, sh[:1] + sh[2:]))
        if r.random() < 0.4:
            kw["ignore_index"] = r.choice([-100, 0, C - 1])
        if r.random() < 0.4:
            kw["weight"] = ("w", s.rand(C) + 0.5)
        if name == "cross_entropy" and r.random() < 0.4:
            kw["label_smoothing"] = 0.2
    elif name in ("multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss"):
        x = s.randn(N, C)
        if name == "multi_margin_loss":
            y = ("i", s.randint(0, C, N))
            kw.update(p=r.choice([1, 2]), margin=r.choice([0.5, 1.0]))
        elif name == "multilabel_margin_loss":
            y = ("i", s.randint(-1, C, (N, C)))
        else:
            y = s.randint(0, 2, (N, C)).astype(float)
    elif name == "gaussian_nll_loss":
        extra = [("w", s.rand(*sh[:-1], 1) + 0.1)]
        kw.update(full=r.random() < 0.5)
    elif name == "cosine_embedding_loss":
        x, y = s.randn(N, C), s.randn(N, C)
        extra = [("w", np.where(s.randn(N) > 0, 1.0, -1.0))]
    elif name == "triplet_margin_loss":
        x, y = s.randn(N, C), s.randn(N, C)
        extra = [s.randn(N, C)]
        kw.update(p=r.choice([1, 2]), swap=r.random() < 0.5)
    else:  # ctc_loss
        T_, C = r.randint(3, 6), r.randint(2, 4)
        x = s.randn(T_, N, C)
        x = x - np.log(np.exp(x).sum(-1, keepdims=True))
        tl = s.randint(0, 3, N)
        y = ("i", s.randint(1, C, (N, 2)))
        extra = [("i", np.full(N, T_)), ("i", tl)]
        kw["zero_infinity"] = r.random() < 0.5

    def mk(T, a, rg):
        if isinstance(a, tuple):
            return T.tensor(a[1]) if a[0] == "i" else _t(T, a[1])
        return _t(T, a, rg=rg)

    def fn(T):
        # (soft_margin_loss refuses a target that requires grad, as torch)
        args = [mk(T, x, True), mk(T, y, name != "soft_margin_loss")]
        args += [mk(T, a, True) for a in extra]
        k = {n: mk(T, v, False) if isinstance(v, tuple) else v for n, v in kw.items()}
        f = getattr(_F(T), name)
        out = f(*args, **k)
        leaves = [a for a in args if a.requires_grad]
        return [out, *T.autograd.grad(out, leaves, _up(T, out), allow_unused=True)]

    return name, fn


@pytest.mark.parametrize("chunk", range(5))
def test_seeded_loss_fuzz(chunk):
    for seed in range(chunk * 30, chunk * 30 + 30):
        name, fn = _case(seed)
        for want, got in results_or_same_error(fn):
            if want is None:
                assert got is None, (seed, name)
                continue
            assert_same(got, want, atol=1e-8, rtol=1e-7, what=f"seed {seed} {name}")
