"""F.linear_cross_entropy, nn.LinearCrossEntropyLoss and LinearCrossEntropyOptions (torch 2.13)
against torch: values and gradients of the reference and the chunked forms, the module's
parameters and buffers, and every argument error."""

from __future__ import annotations

import re
import warnings

import ember
import ember.nn.functional as F
import numpy as np
import pytest

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(a, dtype=np.float32, grad=False):
    return (
        ember.tensor(a.astype(dtype), requires_grad=grad),
        torch.tensor(a.astype(dtype), requires_grad=grad),
    )


def _setup(n=7, d=6, c=5, out=(), bias=True, seed=0, cw=False):
    rng = np.random.default_rng(seed)
    x = _pair(rng.standard_normal((n, d)), grad=True)
    w = _pair(rng.standard_normal((c, *out, d)), grad=True)
    b = _pair(rng.standard_normal((c, *out)), grad=True) if bias else (None, None)
    t = rng.integers(0, c, (n, *out))
    t.flat[1] = -100
    t = (ember.tensor(t), torch.tensor(t))
    wt = _pair(rng.random(c) + 0.5) if cw else (None, None)
    return x, w, b, t, wt


def _check(e, tt, leaves, go_seed=3, tol=2e-5):
    np.testing.assert_allclose(e.detach().numpy(), tt.detach().numpy(), rtol=tol, atol=tol)
    go = np.random.default_rng(go_seed).standard_normal(tuple(tt.shape)).astype(np.float32) + 1.5
    e.backward(ember.tensor(go))
    tt.backward(torch.tensor(go))
    for el, tl in leaves:
        if el is not None:
            np.testing.assert_allclose(el.grad.numpy(), tl.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [None, 1, 3, 100])
@pytest.mark.parametrize("cw", [False, True])
def test_reference_and_chunked_match_torch(reduction, chunk, cw):
    x, w, b, t, wt = _setup(cw=cw)
    kw = {"linear_bias": b[0], "weight": wt[0], "reduction": reduction, "ignore_index": -100}
    opts = None if chunk is None else ember.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk)
    e = F.linear_cross_entropy(x[0], w[0], t[0], options=opts, **kw)
    tt = TF.linear_cross_entropy(
        x[1], w[1], t[1], linear_bias=b[1], weight=wt[1], reduction=reduction, ignore_index=-100
    )
    _check(e, tt, [x, w, b])


def test_k_dimensional_and_probabilities_and_smoothing():
    x, w, b, t, _ = _setup(out=(3,), seed=1)
    e = F.linear_cross_entropy(x[0], w[0], t[0], linear_bias=b[0], label_smoothing=0.1)
    tt = TF.linear_cross_entropy(x[1], w[1], t[1], linear_bias=b[1], label_smoothing=0.1)
    _check(e, tt, [x, w, b])
    x, w, b, _, _ = _setup(seed=2)
    p = np.random.default_rng(5).random((7, 5))
    p /= p.sum(1, keepdims=True)
    pe, pt = _pair(p)
    _check(F.linear_cross_entropy(x[0], w[0], pe), TF.linear_cross_entropy(x[1], w[1], pt), [x, w])


def test_unbatched_input_and_ignore_index_none():
    x, w, _b, _, _ = _setup(bias=False, seed=4)
    xe, xt = x[0][2].detach(), x[1][2].detach()
    for opts in (None, ember.nn.LinearCrossEntropyOptions()):
        e = F.linear_cross_entropy(xe, w[0], ember.tensor(3), reduction="none", options=opts)
        tt = TF.linear_cross_entropy(xt, w[1], torch.tensor(3), reduction="none")
        assert tuple(e.shape) == tuple(tt.shape) == ()
        np.testing.assert_allclose(e.detach().numpy(), tt.detach().numpy(), rtol=1e-5)
    t = np.array([0, -100, 2, 4, 1, 1, 0])
    e = F.linear_cross_entropy(x[0], w[0], ember.tensor(t))  # None: -100 still ignored
    tt = TF.linear_cross_entropy(x[1], w[1], torch.tensor(t))
    np.testing.assert_allclose(e.detach().numpy(), tt.detach().numpy(), rtol=1e-5)


def test_chunked_backward_runs_again_with_retain_graph():
    x, w, b, t, _ = _setup(seed=6)
    opts = ember.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    loss = F.linear_cross_entropy(x[0], w[0], t[0], linear_bias=b[0], options=opts)
    loss.backward(retain_graph=True)
    first = w[0].grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(w[0].grad.numpy(), 2 * first, rtol=1e-6)


def test_float64_gradcheck_of_the_chunked_form():
    rng = np.random.default_rng(7)
    x = ember.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(3), requires_grad=True)
    t = ember.tensor(np.array([0, 2, 1, -100, 2]))
    opts = ember.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    for red in ("mean", "none"):
        assert ember.autograd.gradcheck(
            lambda a, m, c, r=red: F.linear_cross_entropy(
                a, m, t, linear_bias=c, reduction=r, options=opts
            ),
            (x, w, b),
        )


def test_options_fall_back_with_torch_warning():
    x, w, _, t, _ = _setup(out=(3,), bias=False, seed=8)
    opts = ember.nn.LinearCrossEntropyOptions()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        e = F.linear_cross_entropy(x[0], w[0], t[0], options=opts)
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        tt = TF.linear_cross_entropy(x[1], w[1], t[1], options=torch.nn.LinearCrossEntropyOptions())
    assert [str(m.message) for m in got] == [
        str(m.message).replace("torch.", "ember.") for m in want
    ]
    assert got[0].filename == __file__
    np.testing.assert_allclose(e.detach().numpy(), tt.detach().numpy(), rtol=1e-5)


def test_module_matches_torch():
    te = torch.nn.LinearCrossEntropyLoss(6, 5, out_features=(2,), bias=True, label_smoothing=0.05)
    em = ember.nn.LinearCrossEntropyLoss(6, 5, out_features=(2,), bias=True, label_smoothing=0.05)
    assert list(em.state_dict()) == list(te.state_dict()) == ["linear.weight", "linear.bias"]
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in te.state_dict().items()})
    assert repr(em) == repr(te)
    rng = np.random.default_rng(9)
    x = _pair(rng.standard_normal((4, 6)), grad=True)
    t = rng.integers(0, 5, (4, 2))
    _check(em(x[0], ember.tensor(t)), te(x[1], torch.tensor(t)), [x])
    np.testing.assert_allclose(
        em.linear.weight.grad.numpy(), te.linear.weight.grad.numpy(), rtol=2e-5, atol=2e-5
    )
    cw = ember.nn.LinearCrossEntropyLoss(3, 4, weight=ember.ones(4))
    assert list(cw.state_dict()) == ["weight", "linear.weight"]
    assert ember.nn.LinearCrossEntropyLoss(3, 4).weight is None


E_CASES = [
    (lambda m, x, w, t: m(x.reshape(1, 7, 6), w, t), "expected input with dimensionality 1 or 2"),
    (lambda m, x, w, t: m(x, w[0], t), "expected linear_weight with dimensionality at least 2"),
    (lambda m, x, w, t: m(x, w[:, :5], t), "expected equal input and linear_weight last dim"),
    (lambda m, x, w, t: m(x, w, t, linear_bias=w[0, :4]), "expected linear_bias shape (5,)"),
    (lambda m, x, w, t: m(x[0], w.reshape(5, 1, 6), t[0]), "K-dimensional loss defined by"),
    (lambda m, x, w, t: m(x, w, t, reduction="bad"), "bad is not a valid value for reduction"),
]


@pytest.mark.parametrize("call, text", E_CASES)
def test_errors_match_torch(call, text):
    x, w, _, t, _ = _setup(bias=False)
    errs = []
    for m, xx, ww, tt in ((F, x[0], w[0], t[0]), (TF, x[1], w[1], t[1])):
        with pytest.raises((RuntimeError, ValueError), match=re.escape(text)) as e:
            call(m.linear_cross_entropy, xx.detach(), ww.detach(), tt)
        errs.append((type(e.value), str(e.value)))
    assert errs[0] == errs[1]


def test_probabilities_refuse_ignore_index_and_options_validate():
    x, w, _, _, _ = _setup(bias=False)
    p = ember.ones(7, 5) / 5
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified when target"):
        F.linear_cross_entropy(x[0], w[0], p, ignore_index=-1)
    O, TO = ember.nn.LinearCrossEntropyOptions, torch.nn.LinearCrossEntropyOptions
    for kw in (
        {"batch_chunk_size": 0},
        {"batch_chunk_size": 2.0},
        {"chunking_method": "aspect_ratio:0"},
        {"chunking_method": "fixed"},
        {"acc_policy": "fast"},
        {"acc_dtype": "x"},
    ):
        with pytest.raises(ValueError) as want:
            TO(**kw)
        with pytest.raises(ValueError) as got:
            O(**kw)
        assert str(got.value) == str(want.value)
    assert O(chunking_method="aspect_ratio:3").rows(4) == 12
    assert O(acc_policy="balanced", acc_dtype=ember.bfloat16).rows(4) == 4
