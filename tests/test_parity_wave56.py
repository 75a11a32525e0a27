"""Named dimensions through whole programs (wave 56): what running realistic programs with named
inputs end to end found (an MLP, a CNN, a transformer block, LSTM/GRU with packed sequences, a
text model, a VAE with distributions, losses, optimizers, data loading, torch.func, checkpoints,
pruning), checking every intermediate's names, the values against torch on the same data without
names, and the gradients' names. torch 2.x has no named tensors: the spec
(/work/shared/spec/named_tensors.md) is the oracle for names, torch for values, gradients and the
errors of unnamed calls.

Covered:

1. Spec 4.3 / 4.10: ``cosine_embedding_loss`` and ``triplet_margin_loss`` (and
   ``triplet_margin_with_distance_loss`` with its default distance) compare their inputs feature
   by feature, so a clashing feature dim is the unify error naming the loss (only the batch dims
   were checked: a clash went through silently).
2. Spec 4.9: Adafactor's factored moments (``row_var``, ``col_var``) are named like their
   parameter (they were unnamed, unlike every other optimizer's state); optimizer state loaded
   from an unnamed checkpoint (torch's, or saved before the axes were named) is named like its
   parameter, as Module.load_state_dict keeps the layer's names (it stayed unnamed).
3. Spec 4.2 for distributions: the constant moments (Cauchy's and HalfCauchy's mean and variance,
   Categorical's NaN mean and variance) are named like the batch; OneHotCategorical's mode names
   its events dim as its samples do; MultivariateNormal's variance, stddev, entropy and perplexity
   take ``loc``'s names (they were unnamed); LowRankMultivariateNormal's ``scale_tril`` (and so
   ``kl_divergence`` to a MultivariateNormal), and everything when ``cov_factor`` is named,
   refused named parameters (a Gram product repeated the event name); ``StackTransform``
   restacks its slices along the dim it sliced, which keeps its name (stack's new dim was
   unnamed); ``enumerate_support`` (Bernoulli, Binomial, Categorical, OneHotCategorical) names
   the batch (and events) dims like the parameters, the support dim being new (all unnamed).
4. Spec 4.3 for packed sequences: ``pack_padded_sequence`` remembers the time and batch names its
   data merges; ``pad_packed_sequence`` gives them back, and an RNN run on the packed sequence
   names h_n's (and c_n's) batch dim as it does for the padded input, checking a named initial
   state's batch name against it (both were lost: a clash went through).
5. Spec 4.8: inside ``broadcast_by_name()``, masked_fill aligns a named mask to its input by
   name, as the binary ops do (a mask naming a subset of the dims raised the positional error).
6. Spec 1 ("every dim argument accepts a name"): ``prune.ln_structured`` and
   ``prune.random_structured`` take a dim name (Python's TypeError before).
7. Spec 4.2: ``multinomial`` of a batch of weight rows keeps the batch name (the draws dim is
   new, unnamed); the samples of Categorical and its families stay named.
8. Spec 1: ``vmap``'s ``in_dims`` take a dim name of a named input (torch's ValueError for a str
   stands when the inputs are unnamed).
9. Spec 4.2 for the one-sided transforms (rfft, irfft, hfft, ihfft and their n-d forms, so
   stft/istft of a batch of signals): only the dim whose length changes is unnamed; the batch
   dims keep their names (every name was dropped).
10. Spec 4.10: a name clash in ``linalg.multi_dot`` and ``chain_matmul`` names them (it named
    their inner ``matmul``/``mm``).
11. A wrong name: ``cov``/``corrcoef`` of a (variables, observations) input name the rows of
    the (variables, variables) result by the variables, once; the generic fallback named a
    square input's result by its observations dim too (and a non-square one not at all).
12. Spec 4.1: a custom ``autograd.Function`` whose backward returns a gradient whose names clash
    with its input's is an error naming both lists, as a hook's replacement is (the engine
    renamed it silently); unnamed or agreeing gradients are named like the input.
"""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember import distributions as D
from ember import nn
from ember.nn import functional as F
from ember.nn.utils import prune
from ember.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence

torch = pytest.importorskip("torch")

NC = ("N", "C")
_CLASH = "Error when attempting to broadcast dims"


def _np(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _pair(*shape, names=None, seed=0, grad=False):
    """The same data as an ember tensor named ``names`` and an unnamed torch tensor."""
    a = _np(*shape, seed=seed)
    return ember.tensor(a, names=names, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def _close(e, t, tol=1e-5):
    np.testing.assert_allclose(
        e.detach().rename(None).numpy(), t.detach().numpy(), rtol=tol, atol=tol
    )


# ------------------------------------------------------------------ 1. compared inputs
_COMPARED = {
    "cosine_embedding_loss": (
        lambda lib, a, b: lib.nn.functional.cosine_embedding_loss(
            a, b, lib.tensor([1.0, -1.0, 1.0]), reduction="none"
        )
    ),
    "triplet_margin_loss": (
        lambda lib, a, b: lib.nn.functional.triplet_margin_loss(a, b, a * 0.5, reduction="none")
    ),
    "triplet_margin_with_distance_loss": (
        lambda lib, a, b: lib.nn.functional.triplet_margin_with_distance_loss(
            a * 0.5, a, b, reduction="none"
        )
    ),
    "TripletMarginLoss": lambda lib, a, b: lib.nn.TripletMarginLoss(reduction="none")(a, a, b),
    "CosineEmbeddingLoss": (
        lambda lib, a, b: lib.nn.CosineEmbeddingLoss(reduction="none")(a, b, lib.ones(3))
    ),
}


@pytest.mark.parametrize("loss", sorted(_COMPARED))
def test_losses_comparing_inputs_refuse_a_clashing_feature_dim(loss):
    fname = {"TripletMarginLoss": "triplet_margin_loss"}.get(loss, loss)
    fname = {"CosineEmbeddingLoss": "cosine_embedding_loss"}.get(fname, fname)
    a = ember.tensor(_np(3, 4), names=NC)
    b = ember.tensor(_np(3, 4, seed=1), names=("N", "D"))
    with pytest.raises(RuntimeError, match=rf"^{fname}: {_CLASH} \['N', 'C'\] and dims"):
        _COMPARED[loss](ember, a, b)


@pytest.mark.parametrize("loss", sorted(_COMPARED))
def test_losses_comparing_inputs_keep_values_grads_and_batch_names(loss):
    a, ta = _pair(3, 4, names=NC, grad=True)
    b, tb = _pair(3, 4, names=(None, "C"), seed=1, grad=True)
    r = _COMPARED[loss](ember, a, b)
    tr = _COMPARED[loss](torch, ta, tb)
    assert r.names == ("N",)
    _close(r, tr)
    g = _np(3, seed=2)
    r.backward(ember.tensor(g))
    tr.backward(torch.tensor(g))
    assert a.grad.names == NC and b.grad.names == (None, "C")
    _close(a.grad, ta.grad)
    _close(b.grad, tb.grad)


def test_triplet_with_a_custom_distance_decides_for_itself():
    a = ember.tensor(_np(3, 4), names=NC)
    b = ember.tensor(_np(3, 4, seed=1), names=("N", "D"))

    def dist(x, y):
        return (x.rename(None) - y.rename(None)).norm(dim=-1)

    r = F.triplet_margin_with_distance_loss(a, b, b, distance_function=dist, reduction="none")
    assert r.names == ("N",)


# ------------------------------------------------------------------ 2. Adafactor state
@pytest.mark.parametrize("foreach", [False, True])
def test_adafactor_factored_state_is_named_like_the_parameter(foreach):
    w0 = _np(3, 4)
    ew = nn.Parameter(ember.tensor(w0, names=("O", "I")))
    tw = torch.nn.Parameter(torch.tensor(w0))
    eo = ember.optim.Adafactor([ew], lr=0.05, foreach=foreach)
    to = torch.optim.Adafactor([tw], lr=0.05, foreach=foreach)
    x, tx = _pair(5, 4, names=("N", "I"), seed=1)
    for _ in range(2):
        eo.zero_grad()
        to.zero_grad()
        (x @ ew.mT).pow(2).sum().backward()
        (tx @ tw.mT).pow(2).sum().backward()
        eo.step()
        to.step()
    st, tst = eo.state[ew], to.state[tw]
    for k in ("row_var", "col_var"):
        assert st[k].names == ("O", "I")
        _close(st[k], tst[k])
    assert ew.names == ("O", "I")
    _close(ew, tw)
    eo2 = ember.optim.Adafactor([ew], lr=0.05, foreach=foreach)
    eo2.load_state_dict(eo.state_dict())
    assert eo2.state[ew]["row_var"].names == ("O", "I")


@pytest.mark.parametrize("opt", ["Adam", "SGD", "Adafactor", "RMSprop"])
def test_optimizer_state_from_an_unnamed_checkpoint_is_named_like_the_parameter(opt):
    kw = {"SGD": {"lr": 0.1, "momentum": 0.9}}.get(opt, {})
    tl = torch.nn.Linear(3, 2)
    to = getattr(torch.optim, opt)(tl.parameters(), **kw)
    tx = torch.tensor(_np(4, 3))

    def closure():
        to.zero_grad()
        loss = tl(tx).pow(2).sum()
        loss.backward()
        return loss

    to.step(closure)
    el = nn.Linear(3, 2)
    with ember.no_grad():
        el.weight.rename_("O", "I")
    el.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    eo = getattr(ember.optim, opt)(el.parameters(), **kw)
    sd = to.state_dict()
    eo.load_state_dict(
        {
            "param_groups": sd["param_groups"],
            "state": {
                i: {k: ember.tensor(v.numpy()) if torch.is_tensor(v) else v for k, v in st.items()}
                for i, st in sd["state"].items()
            },
        }
    )
    st = eo.state[el.weight]
    for k, v in st.items():
        if isinstance(v, ember.Tensor) and v.dim() == 2:
            assert v.names == ("O", "I"), k
            _close(v, sd["state"][0][k])
        elif isinstance(v, ember.Tensor):
            assert v._names is None, k  # the step counters
    assert all(v._names is None for v in eo.state[el.bias].values() if isinstance(v, ember.Tensor))
    x = ember.tensor(tx.numpy(), names=("N", "I"))

    def eclosure():
        eo.zero_grad()
        loss = el(x).pow(2).sum()
        loss.backward()
        return loss

    eo.step(eclosure)
    to.step(closure)
    assert el.weight.names == ("O", "I")
    _close(el.weight, tl.weight, tol=1e-4)


# ------------------------------------------------------------------ 3. distributions
def _params(seed=0):
    """loc, a positive scale and probabilities (4, 3), named (N, C), with torch twins."""
    rng = np.random.default_rng(seed)
    loc = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (4, 3)).astype(np.float32)
    probs = rng.uniform(0.1, 0.9, (4, 3)).astype(np.float32)
    e = [ember.tensor(a, names=NC) for a in (loc, scale, probs)]
    t = [torch.tensor(a) for a in (loc, scale, probs)]
    return e, t


_MOMENTS = {
    "Cauchy": (lambda lib, p: lib.distributions.Cauchy(p[0], p[1]), NC),
    "HalfCauchy": (lambda lib, p: lib.distributions.HalfCauchy(p[1]), NC),
    "Categorical": (lambda lib, p: lib.distributions.Categorical(p[2]), ("N",)),
    "MultivariateNormal": (
        lambda lib, p: lib.distributions.MultivariateNormal(p[0], scale_tril=lib.eye(3) * 0.5),
        NC,
    ),
}


@pytest.mark.parametrize("dist", sorted(_MOMENTS))
@pytest.mark.parametrize("prop", ["mean", "variance", "stddev"])
def test_distribution_moments_are_named_like_the_batch(dist, prop):
    make, names = _MOMENTS[dist]
    ep, tp = _params()
    r = getattr(make(ember, ep), prop)
    assert r.names == names
    np.testing.assert_array_equal(
        np.isnan(r.rename(None).numpy()), np.isnan(getattr(make(torch, tp), prop).numpy())
    )
    _close(r, getattr(make(torch, tp), prop))


def test_mvn_entropy_and_perplexity_take_the_batch_names():
    ep, tp = _params()
    e = _MOMENTS["MultivariateNormal"][0](ember, ep)
    t = _MOMENTS["MultivariateNormal"][0](torch, tp)
    for prop in ("entropy", "perplexity"):
        r = getattr(e, prop)()
        assert r.names == ("N",)
        _close(r, getattr(t, prop)())
    # a batch of one distribution: no batch dims, nothing to name
    assert D.MultivariateNormal(ep[0][0], scale_tril=ember.eye(3)).entropy().names == ()


def test_one_hot_categorical_mode_names_the_events_dim():
    ep, tp = _params()
    e = D.OneHotCategorical(ep[2])
    assert e.mode.names == NC == e.sample().names
    _close(e.mode, torch.distributions.OneHotCategorical(tp[2]).mode)


@pytest.mark.parametrize("factor_names", [None, ("N", "C", "K")])
def test_lowrank_mvn_accepts_named_parameters(factor_names):
    ep, tp = _params()
    f = _np(4, 3, 2, seed=3)
    e = D.LowRankMultivariateNormal(ep[0], ember.tensor(f, names=factor_names), ep[1])
    t = torch.distributions.LowRankMultivariateNormal(tp[0], torch.tensor(f), tp[1])
    for prop in ("scale_tril", "covariance_matrix", "precision_matrix", "variance"):
        _close(getattr(e, prop), getattr(t, prop), tol=1e-4)
    assert e.scale_tril.names == ("N", "C", None)  # rows: the event dim; columns: new
    for fn in ("entropy", "log_prob"):
        args = (ep[0],) if fn == "log_prob" else ()
        targs = (tp[0],) if fn == "log_prob" else ()
        r = getattr(e, fn)(*args)
        assert r.names == ("N",)
        _close(r, getattr(t, fn)(*targs), tol=1e-4)
    m = D.MultivariateNormal(ep[1], scale_tril=ember.eye(3))
    tm = torch.distributions.MultivariateNormal(tp[1], scale_tril=torch.eye(3))
    assert D.kl_divergence(e, m).names == D.kl_divergence(m, e).names == ("N",)
    _close(D.kl_divergence(e, m), torch.distributions.kl_divergence(t, tm), tol=1e-4)
    _close(D.kl_divergence(m, e), torch.distributions.kl_divergence(tm, t), tol=1e-4)


@pytest.mark.parametrize("dim", [1, -1, 0])
def test_stack_transform_keeps_the_sliced_dims_name(dim):
    T, TT = D.transforms, torch.distributions.transforms
    x, tx = _pair(3, 3, names=NC, grad=True)
    e = T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0), T.SigmoidTransform()], dim)
    t = TT.StackTransform(
        [TT.ExpTransform(), TT.AffineTransform(1.0, 2.0), TT.SigmoidTransform()], dim
    )
    y, ty = e(x), t(tx)
    assert y.names == e.inv(y).names == e.log_abs_det_jacobian(x, y).names == NC
    _close(y, ty)
    _close(e.inv(y), t.inv(ty))
    _close(e.log_abs_det_jacobian(x, y), t.log_abs_det_jacobian(tx, ty))
    g = _np(3, 3, seed=1)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    assert x.grad.names == NC
    _close(x.grad, tx.grad)
    assert e(x.detach().rename(None))._names is None


_SUPPORT = {
    "Bernoulli": (lambda lib, p: lib.distributions.Bernoulli(p), (None, "N", "C")),
    "Binomial": (lambda lib, p: lib.distributions.Binomial(3, p), (None, "N", "C")),
    "Categorical": (lambda lib, p: lib.distributions.Categorical(p), (None, "N")),
    "OneHotCategorical": (
        lambda lib, p: lib.distributions.OneHotCategorical(p),
        (None, "N", "C"),
    ),
}


@pytest.mark.parametrize("dist", sorted(_SUPPORT))
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support_names_the_batch_dims(dist, expand):
    make, names = _SUPPORT[dist]
    ep, tp = _params()
    e, t = make(ember, ep[2]), make(torch, tp[2])
    v, tv = e.enumerate_support(expand), t.enumerate_support(expand)
    assert v.names == names
    _close(v.float(), tv.float())
    lp = e.log_prob(v)
    assert lp.names == (None, "N", "C")[: lp.dim()]
    _close(lp, t.log_prob(tv))
    assert make(ember, ep[2].rename(None)).enumerate_support(expand)._names is None


# ------------------------------------------------------------------ 4. packed sequences
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_packed_sequences_give_back_the_time_and_batch_names(mode, batch_first):
    names = ("N", "T", "C") if batch_first else ("T", "N", "C")
    shape = (3, 5, 4) if batch_first else (5, 3, 4)
    x, tx = _pair(*shape, names=names, grad=True)
    lengths = [2, 5, 3]
    torch.manual_seed(0)
    tm = getattr(torch.nn, mode)(4, 6, batch_first=batch_first, bidirectional=True)
    em = getattr(nn, mode)(4, 6, batch_first=batch_first, bidirectional=True)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    pk = pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=False)
    tpk = torch.nn.utils.rnn.pack_padded_sequence(
        tx, lengths, batch_first=batch_first, enforce_sorted=False
    )
    assert pk.data.names == (None, "C")  # the packed rows merge time and batch
    assert pk.double()._dim_names == ("T", "N")
    out, h = em(pk)
    tout, th = tm(tpk)
    pad, lens = pad_packed_sequence(out, batch_first=batch_first)
    tpad, tlens = torch.nn.utils.rnn.pad_packed_sequence(tout, batch_first=batch_first)
    assert pad.names == names
    _close(pad, tpad, tol=1e-5)
    assert lens.tolist() == tlens.tolist()
    hs = h if mode == "LSTM" else (h,)
    ths = th if mode == "LSTM" else (th,)
    for a, b in zip(hs, ths):
        assert a.names == (None, "N", "C")
        _close(a, b, tol=1e-5)
    g = _np(*tpad.shape, seed=4)
    pad.backward(ember.tensor(g))
    tpad.backward(torch.tensor(g))
    assert x.grad.names == names
    _close(x.grad, tx.grad, tol=1e-5)


def test_packed_sequence_checks_a_named_initial_state():
    x = ember.tensor(_np(5, 3, 4), names=("T", "N", "C"))
    pk = pack_padded_sequence(x, [5, 3, 2])
    h0 = ember.zeros(1, 3, 6, names=(None, "M", "C"))
    with pytest.raises(RuntimeError, match=r"^gru: the packed input's batch dim 'N' does not"):
        nn.GRU(4, 6)(pk, h0)
    with pytest.raises(RuntimeError, match=r"^lstm: the packed input's batch dim 'N' does not"):
        nn.LSTM(4, 6)(pk, (h0, h0))
    # an unnamed packing takes the state's batch name, as the padded input's unnamed dim does
    _, h = nn.GRU(4, 6)(pack_padded_sequence(x.rename(None), [5, 3, 2]), h0)
    assert h.names[1] == "M"


def test_pack_sequence_round_trips_pad_sequence_names():
    seqs = [ember.tensor(_np(n, 2, seed=n), names=("T", "D")) for n in (4, 2)]
    out, _ = pad_packed_sequence(pack_sequence(seqs))
    assert out.names == ("T", None, "D") == nn.utils.rnn.pad_sequence(seqs).names


# ------------------------------------------------------------------ 5. masked_fill by name
def test_masked_fill_aligns_the_mask_by_name_inside_broadcast_by_name():
    x, tx = _pair(2, 3, names=NC, grad=True)
    m = np.array([True, False])
    mask = ember.tensor(m, names=("N",))
    with ember.named.broadcast_by_name():
        r = x.masked_fill(mask, 0.5)
        r2 = x.detach().clone().masked_fill_(mask, 0.5)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            x.detach().clone().masked_fill_(ember.ones(4, dtype=ember.bool, names=("H",)), 0.0)
    tr = tx.masked_fill(torch.tensor(m)[:, None], 0.5)
    assert r.names == r2.names == NC
    _close(r, tr)
    _close(r2, tr)
    g = _np(2, 3, seed=1)
    r.backward(ember.tensor(g))
    tr.backward(torch.tensor(g))
    assert x.grad.names == NC
    _close(x.grad, tx.grad)
    # outside the block the positional rule and its error stand
    with pytest.raises(RuntimeError, match=rf"^masked_fill: {_CLASH}"):
        x.masked_fill(mask, 0.5)


# ------------------------------------------------------------------ 6. pruning by dim name
@pytest.mark.parametrize(
    "how",
    [
        lambda m, d: prune.ln_structured(m, "weight", amount=0.5, n=2, dim=d),
        lambda m, d: prune.ln_structured(m, "weight", amount=1, n=1, dim=d),
    ],
)
@pytest.mark.parametrize("dim", [("O", 0), ("I", 1)])
def test_structured_pruning_takes_a_dim_name(how, dim):
    w = _np(4, 3)
    named, plain = nn.Linear(3, 4), nn.Linear(3, 4)
    with ember.no_grad():
        named.weight.copy_(ember.tensor(w))
        named.weight.rename_("O", "I")
        plain.weight.copy_(ember.tensor(w))
    how(named, dim[0])
    how(plain, dim[1])
    assert named.weight_mask.names == named.weight.names == ("O", "I")
    np.testing.assert_array_equal(named.weight_mask.rename(None).numpy(), plain.weight_mask.numpy())
    prune.remove(named, "weight")
    assert named.weight.names == ("O", "I")


def test_random_structured_pruning_takes_a_dim_name():
    m = nn.Linear(3, 4)
    with ember.no_grad():
        m.weight.rename_("O", "I")
    prune.random_structured(m, "weight", amount=2, dim="O")
    assert m.weight_mask.names == ("O", "I")
    assert m.weight_mask.sum("I").eq(0).sum().item() == 2  # two whole output rows pruned
    with pytest.raises(RuntimeError, match=r"Name 'H' not found in Tensor\['O', 'I'\]"):
        prune.ln_structured(m, "weight", amount=1, n=2, dim="H")


# ------------------------------------------------------------------ 7. multinomial
def test_multinomial_keeps_the_batch_name():
    p = ember.rand(3, 4, names=NC)
    assert ember.multinomial(p, 2).names == ("N", None)
    assert p.multinomial(6, True).names == ("N", None)
    assert ember.multinomial(p[0], 2)._names is None  # 1-D weights: every draw is new
    assert ember.multinomial(p.rename(None), 2)._names is None
    out = ember.empty(3, 2, dtype=ember.long)
    ember.multinomial(p, 2, out=out)
    assert out.names == ("N", None)
    ember.manual_seed(0)
    a = ember.multinomial(p, 3)
    ember.manual_seed(0)
    b = ember.multinomial(p.rename(None), 3)
    np.testing.assert_array_equal(a.rename(None).numpy(), b.numpy())
    assert D.Categorical(p).sample((2,)).names == (None, "N")


# ------------------------------------------------------------------ 8. vmap over a dim name
def test_vmap_in_dims_take_a_dim_name_of_a_named_input():
    x, tx = _pair(4, 3, names=NC)
    w, tw = _pair(3, names=("C",), seed=1)
    r = ember.func.vmap(lambda v: v.sin().sum(), in_dims="C")(x)
    assert r.names == ("C",)
    _close(r, torch.func.vmap(lambda v: v.sin().sum(), in_dims=1)(tx))
    r = ember.func.vmap(lambda v, u: v * u, in_dims=("N", None))(x, w)
    assert r.names == NC
    _close(r, torch.func.vmap(lambda v, u: v * u, in_dims=(0, None))(tx, tw))
    with pytest.raises(RuntimeError, match=r"Name 'X' not found in Tensor\['N', 'C'\]"):
        ember.func.vmap(lambda v: v, in_dims="X")(x)


@pytest.mark.parametrize("in_dims", ["N", ("N",)])
def test_vmap_a_name_on_unnamed_inputs_keeps_torchs_error(in_dims):
    x, tx = _pair(4, 3)
    with pytest.raises(ValueError) as te:
        torch.func.vmap(lambda v: v, in_dims=in_dims)(tx)
    with pytest.raises(ValueError) as ee:
        ember.func.vmap(lambda v: v, in_dims=in_dims)(x)
    assert str(ee.value) == str(te.value)


# ------------------------------------------------------------------ 9. one-sided transforms
_ONE_SIDED = {
    "rfft": (lambda lib, x: lib.fft.rfft(x, dim=-1), ("N", "C", None)),
    "rfft C": (lambda lib, x: lib.fft.rfft(x, dim=1), ("N", None, "T")),
    "rfftn": (lambda lib, x: lib.fft.rfftn(x, dim=(1, 2)), ("N", "C", None)),
    "irfft": (lambda lib, x: lib.fft.irfft(lib.fft.rfft(x), n=8), ("N", "C", None)),
    "irfft2": (lambda lib, x: lib.fft.irfft2(lib.fft.rfft2(x), s=(3, 8)), ("N", "C", None)),
    "ihfft": (lambda lib, x: lib.fft.ihfft(x).abs(), ("N", "C", None)),
    "hfft": (lambda lib, x: lib.fft.hfft(lib.fft.ihfft(x), n=8), ("N", "C", None)),
}


@pytest.mark.parametrize("case", sorted(_ONE_SIDED))
def test_one_sided_transforms_keep_the_untouched_dims_names(case):
    f, names = _ONE_SIDED[case]
    x, tx = _pair(2, 3, 8, names=("N", "C", "T"), grad=True)
    r, tr = f(ember, x), f(torch, tx)
    assert r.names == names
    _close(r, tr, tol=1e-4)
    g = _np(*tr.shape, seed=1)
    gr = ember.tensor(g).to(r.dtype) if r.is_complex() else ember.tensor(g)
    r.backward(gr)
    tr.backward(torch.tensor(g).to(tr.dtype))
    assert x.grad.names == ("N", "C", "T")
    _close(x.grad, tx.grad, tol=1e-4)


def test_stft_and_istft_keep_the_batch_name():
    x, tx = _pair(2, 64, names=("N", "T"), grad=True)
    w, tw = ember.hann_window(16), torch.hann_window(16)
    s = ember.stft(x, 16, window=w, return_complex=True)
    ts = torch.stft(tx, 16, window=tw, return_complex=True)
    assert s.names == ("N", None, None)
    _close(s.abs(), ts.abs(), tol=1e-4)
    y = ember.istft(s, 16, window=w, length=64)
    ty = torch.istft(ts, 16, window=tw, length=64)
    assert y.names == ("N", None)
    _close(y, ty, tol=1e-4)
    g = _np(2, 64, seed=2)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    assert x.grad.names == ("N", "T")
    _close(x.grad, tx.grad, tol=1e-4)


# ------------------------------------------------------------------ 10. chained products
def test_chained_products_name_themselves_in_a_name_clash():
    x = ember.tensor(_np(5, 3), names=("P", "C"))
    with pytest.raises(RuntimeError, match=r"^linalg\.multi_dot: Matrix multiplying"):
        ember.linalg.multi_dot([x, x.t()])
    with (
        warnings.catch_warnings(),  # (its deprecation warning comes once per process)
        pytest.raises(RuntimeError, match=r"^chain_matmul: Matrix multiplying"),
    ):
        warnings.simplefilter("ignore")
        ember.chain_matmul(x, x.t())
    y, ty = _pair(3, 5, seed=1)
    z, tz = _pair(5, 2, seed=2)
    r = ember.linalg.multi_dot([x, y.rename("C", "Q"), z.rename("Q", "S")])
    assert r.names == ("P", "S")
    _close(r, torch.linalg.multi_dot([torch.tensor(_np(5, 3)), ty, tz]), tol=1e-4)


# ------------------------------------------------------------------ 11. cov / corrcoef
@pytest.mark.parametrize("shape", [(3, 3), (3, 5)])
@pytest.mark.parametrize("fn", ["cov", "corrcoef"])
def test_cov_names_the_variables_once(fn, shape):
    x, tx = _pair(*shape, names=("V", "O"), grad=True)
    r, tr = getattr(ember, fn)(x), getattr(torch, fn)(tx)
    assert r.names == ("V", None)
    _close(r, tr, tol=1e-4)
    g = _np(shape[0], shape[0], seed=3)
    r.backward(ember.tensor(g))
    tr.backward(torch.tensor(g))
    assert x.grad.names == ("V", "O")
    _close(x.grad, tx.grad, tol=1e-4)
    assert getattr(ember, fn)(x.detach().rename(None))._names is None
    assert getattr(ember, fn)(x.detach().rename(None, "O")).names == (None, None)


# ------------------------------------------------------------------ 12. custom Functions
class _Triple(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, names):
        ctx.names = names
        return x * 3

    @staticmethod
    def backward(ctx, g):
        g = (g * 3).rename(None)
        return (g if ctx.names is None else g.refine_names(*ctx.names)), None


@pytest.mark.parametrize("leaf", [True, False])
def test_custom_function_gradient_names_are_checked(leaf):
    x = ember.tensor(_np(3, 4), names=NC, requires_grad=True)
    inp = x if leaf else x * 1
    with pytest.raises(
        RuntimeError,
        match=r"^function _TripleBackward returned a gradient named \['A', 'B'\] at index 0, "
        r"which does not match the input's names \['N', 'C'\]",
    ):
        _Triple.apply(inp, ("A", "B")).sum().backward()
    for names in (None, ("N", None)):
        x.grad = None
        inp = x if leaf else x * 1
        g = _np(3, 4, seed=1)
        _Triple.apply(inp, names).backward(ember.tensor(g))
        assert x.grad.names == NC
        np.testing.assert_allclose(x.grad.rename(None).numpy(), 3 * g, rtol=1e-6)
    y = ember.tensor(_np(3, 4), requires_grad=True)  # an unnamed input takes no names
    _Triple.apply(y, ("A", "B")).sum().backward()
    assert y.grad._names is None
