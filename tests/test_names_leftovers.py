"""Named dimensions: the gaps real programs found after wave 16 (names spec,
/work/shared/spec/named_tensors.md). torch is the oracle for values, dtypes and gradients of the
same programs run unnamed; the spec decides the names.

Covered:

1. Attention with ``kdim``/``vdim`` != ``embed_dim`` (``nn.MultiheadAttention`` and
   ``F.multi_head_attention_forward`` with separate projection weights): each input projection is
   a Linear (spec 4.3), so key and value features are their own dims, checked only against their
   own projection weight's input name; one packed ``in_proj_weight`` still makes q/k/v agree. A
   named ``out_proj`` weight names the output's features, as Linear's weight does.
2. MultiheadAttention's attention weights are named. The spec says attention keeps the query's
   names and is silent on the weights, so they follow the query's and key's names as the output
   does: (batch, target, source) = (the batch name query and key agree on, the query's sequence
   name, the key's sequence name); per-head weights have an unnamed head dim; unbatched ones are
   (target, source). A dim name may appear once, so when the key's sequence name repeats the
   query's (self-attention on one tensor) the source dim is unnamed. Query and key batch names
   that differ are an error naming both lists.
3. ``nn.utils.rnn.pad_sequence`` keeps the sequences' names, their time name included; the batch
   dim it creates is unnamed. ``pack_sequence``/``pad_packed_sequence`` keep the feature names;
   the packed data merges time and batch, so the padded result's time and batch dims are unnamed.
4. ``broadcast_tensors`` (and so ``distributions.utils.broadcast_all``) unify names from the right
   like binary ops, every result carrying the unified names; clashes raise the spec's error.
5. ``to_sparse()`` and the other layout conversions keep the dense tensor's names, and
   ``to_dense()`` gives them back (other sparse ops still give unnamed results).
6. BatchNorm/InstanceNorm/GroupNorm check the input's channel dim (dim 1), LayerNorm/RMSNorm the
   normalized (trailing) dims, against a named weight, bias or running statistic, with the
   message Linear and Conv use (the shared ``core.names.check_weight_dims``).
7. RNN/LSTM/GRU check h0's (and c0's) batch name against the input's; an unnamed input batch dim
   takes the state's name.
8. ``vmap`` (ember.vmap and torch.func.vmap): the spec has no vmap entry, but ``func`` leaves the
   mapped dim alone, so (spec 4.2/4.3) it keeps its name: the stacked dim at ``out_dims`` carries
   the mapped dim's name (unnamed when an output already uses that name); inputs naming the
   mapped dim differently are an error.

Each group also checks that the unnamed path is unchanged (values against torch).
"""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import nn

torch = pytest.importorskip("torch")


def _a(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _np(t):
    return t.detach().rename(None).numpy() if t._names is not None else t.detach().numpy()


def _close(e, t, tol=1e-10):
    np.testing.assert_allclose(_np(e), t.detach().numpy(), rtol=tol, atol=tol)


# ====================================================================== 1-2 attention
def _mha_pair(E=8, H=2, kdim=None, vdim=None, batch_first=True):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(
        E, H, kdim=kdim, vdim=vdim, batch_first=batch_first, dtype=torch.float64
    )
    em = nn.MultiheadAttention(
        E, H, kdim=kdim, vdim=vdim, batch_first=batch_first, dtype=ember.float64
    )
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return em, tm


def test_mha_kdim_vdim_names_follow_each_projection():
    em, tm = _mha_pair(kdim=5, vdim=3)
    q, k, v = _a(2, 4, 8), _a(2, 6, 5, seed=1), _a(2, 6, 3, seed=2)
    gq = ember.tensor(q, names=("N", "T", "D"), requires_grad=True)
    gk = ember.tensor(k, names=("N", "S", "K"), requires_grad=True)
    gv = ember.tensor(v, names=("N", "S", "V"), requires_grad=True)
    out, w = em(gq, gk, gv)
    assert out.names == ("N", "T", "D")
    assert w.names == ("N", "T", "S")
    tq, tk, tv = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
    tout, tw = tm(tq, tk, tv)
    _close(out, tout)
    _close(w, tw)
    up = _a(2, 4, 8, seed=3)  # a non-uniform upstream gradient
    out.backward(ember.tensor(up, names=("N", "T", "D")))
    tout.backward(torch.tensor(up))
    for g, t, n in ((gq, tq, "TD"), (gk, tk, "SK"), (gv, tv, "SV")):
        assert g.grad.names == ("N", *n)
        _close(g.grad, t.grad)


def test_mha_kdim_checks_each_input_against_its_own_weight():
    em, _ = _mha_pair(kdim=5, vdim=3)
    q = ember.tensor(_a(2, 4, 8), names=("N", "T", "D"))
    k = ember.tensor(_a(2, 6, 5), names=("N", "S", "K"))
    v = ember.tensor(_a(2, 6, 3), names=("N", "S", "V"))
    em.k_proj_weight.rename_("D", "K")
    em.v_proj_weight.rename_("D", "V")
    assert em(q, k, v)[0].names == ("N", "T", "D")  # agreeing names pass
    em.k_proj_weight.rename_("D", "key_features")
    with pytest.raises(
        RuntimeError,
        match=r"multi_head_attention_forward: the input's features dim is named 'K' \(input "
        r"names \['N', 'S', 'K'\]\), but the weight expects 'key_features'",
    ):
        em(q, k, v)


def test_mha_packed_projection_still_needs_one_feature_name():
    em, _ = _mha_pair()
    q = ember.tensor(_a(2, 4, 8), names=("N", "T", "D"))
    k = ember.tensor(_a(2, 6, 8), names=("N", "S", "E"))
    with pytest.raises(RuntimeError, match="feature dims of query and key must have the same name"):
        em(q, k, k)
    em.in_proj_weight.rename_("P", "F")
    with pytest.raises(RuntimeError, match="features dim is named 'D'.*expects 'F'"):
        em(q, q, q)


def test_mha_named_out_proj_names_the_output_features():
    em, tm = _mha_pair()
    em.out_proj.weight.rename_("O", None)
    q = _a(2, 4, 8)
    out, _ = em(ember.tensor(q, names=("N", "T", "D")), *[ember.tensor(q)] * 2)
    assert out.names == ("N", "T", "O")
    _close(out, tm(*[torch.tensor(q)] * 3)[0])


@pytest.mark.parametrize("batch_first", [True, False], ids=["batch_first", "seq_first"])
@pytest.mark.parametrize("average", [True, False], ids=["avg", "per_head"])
def test_mha_weights_are_batch_target_source(batch_first, average):
    em, tm = _mha_pair(batch_first=batch_first)
    q, k = _a(2, 4, 8), _a(2, 6, 8, seed=1)
    if not batch_first:
        q, k = q.transpose(1, 0, 2).copy(), k.transpose(1, 0, 2).copy()
    qn = ("N", "T", "D") if batch_first else ("T", "N", "D")
    kn = ("N", "S", "D") if batch_first else ("S", "N", "D")
    gq, gk = ember.tensor(q, names=qn), ember.tensor(k, names=kn)
    out, w = em(gq, gk, gk, average_attn_weights=average)
    assert out.names == qn
    assert w.names == (("N", "T", "S") if average else ("N", None, "T", "S"))
    tout, tw = tm(torch.tensor(q), torch.tensor(k), torch.tensor(k), average_attn_weights=average)
    _close(w, tw)
    _close(out, tout)
    # self-attention on one tensor: the source dim would repeat 'T', so it is unnamed
    _, w = em(gq, gq, gq, average_attn_weights=average)
    assert w.names == (("N", "T", None) if average else ("N", None, "T", None))


def test_mha_weights_unbatched_and_batch_name_clash():
    em, tm = _mha_pair()
    q, k = _a(4, 8), _a(6, 8, seed=1)
    out, w = em(ember.tensor(q, names=("T", "D")), *[ember.tensor(k, names=("S", "D"))] * 2)
    assert (out.names, w.names) == (("T", "D"), ("T", "S"))
    _close(w, tm(torch.tensor(q), torch.tensor(k), torch.tensor(k))[1])
    # the key alone named: the weights take its names
    gq = ember.tensor(_a(2, 4, 8))
    gk = ember.tensor(_a(2, 6, 8, seed=1), names=("N", "S", None))
    assert em(gq, gk, gk)[1].names == ("N", None, "S")
    with pytest.raises(
        RuntimeError, match=r"batch dims of query and key must have the same name.*\['B', 'T'"
    ):
        em(ember.tensor(_a(2, 4, 8), names=("B", "T", None)), gk, gk)


def test_mha_functional_separate_weights_matches_torch():
    E, H, kd, vd = 6, 3, 4, 5
    r = [_a(*s, seed=i) for i, s in enumerate([(E, E), (E, kd), (E, vd), (3 * E,), (E, E), (E,)])]
    q, k, v = _a(4, 2, E, seed=7), _a(5, 2, kd, seed=8), _a(5, 2, vd, seed=9)

    def run(m, q, k, v):
        wq, wk, wv, b, wo, bo = (m.tensor(x) for x in r)
        return m.nn.functional.multi_head_attention_forward(
            q, k, v, E, H, None, b, None, None, False, 0.0, wo, bo,
            use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk, v_proj_weight=wv,
        )  # fmt: skip

    out, w = run(
        ember,
        ember.tensor(q, names=("T", "N", "D")),
        ember.tensor(k, names=("S", "N", "K")),
        ember.tensor(v, names=("S", "N", "V")),
    )
    assert (out.names, w.names) == (("T", "N", "D"), ("N", "T", "S"))
    tout, tw = run(torch, torch.tensor(q), torch.tensor(k), torch.tensor(v))
    _close(out, tout)
    _close(w, tw)
    # unnamed: unchanged, unnamed weights
    out, w = run(ember, ember.tensor(q), ember.tensor(k), ember.tensor(v))
    assert out._names is None and w._names is None
    _close(out, tout)
    _close(w, tw)


def test_mha_unnamed_path_unchanged():
    em, tm = _mha_pair(kdim=5, vdim=3)
    q, k, v = _a(2, 4, 8), _a(2, 6, 5, seed=1), _a(2, 6, 3, seed=2)
    out, w = em(ember.tensor(q), ember.tensor(k), ember.tensor(v))
    assert out._names is None and w._names is None
    tout, tw = tm(torch.tensor(q), torch.tensor(k), torch.tensor(v))
    _close(out, tout)
    _close(w, tw)


# ====================================================================== 3 pad_sequence
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_keeps_the_time_name(batch_first, side):
    xs = [_a(3, 2), _a(5, 2, seed=1), _a(1, 2, seed=2)]
    seqs = [ember.tensor(x, names=("T", "D"), requires_grad=True) for x in xs]
    out = nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_side=side)
    assert out.names == ((None, "T", "D") if batch_first else ("T", None, "D"))
    ts = [torch.tensor(x, requires_grad=True) for x in xs]
    tout = torch.nn.utils.rnn.pad_sequence(ts, batch_first=batch_first, padding_side=side)
    _close(out, tout)
    up = _a(*tout.shape, seed=5)
    out.backward(ember.tensor(up))
    tout.backward(torch.tensor(up))
    for s, t in zip(seqs, ts):
        assert s.grad.names == ("T", "D")
        _close(s.grad, t.grad)
    # unnamed: unchanged
    plain = nn.utils.rnn.pad_sequence(
        [ember.tensor(x) for x in xs], batch_first=batch_first, padding_side=side
    )
    assert plain._names is None
    _close(plain, tout)


def test_pad_sequence_names_unify_and_clash():
    a = ember.tensor(_a(3, 2), names=("T", None))
    b = ember.tensor(_a(2, 2), names=(None, "D"))
    assert nn.utils.rnn.pad_sequence([a, b]).names == ("T", None, "D")
    with pytest.raises(RuntimeError, match="cat.*dims \\['T', 'D'\\] and dims \\['S', 'D'\\]"):
        nn.utils.rnn.pad_sequence(
            [ember.tensor(_a(3, 2), names=("T", "D")), ember.tensor(_a(2, 2), names=("S", "D"))]
        )


def test_pack_and_pad_packed_keep_the_feature_names():
    xs = [_a(5, 2), _a(3, 2, seed=1)]
    packed = nn.utils.rnn.pack_sequence([ember.tensor(x, names=("T", "D")) for x in xs])
    assert packed.data.names == (None, "D")  # packed rows merge time and batch
    out, lens = nn.utils.rnn.pad_packed_sequence(packed)
    # the packing remembers the merged dims' names: pad_sequence's (T, None, D) comes back
    assert out.names == ("T", None, "D")
    tout, tlens = torch.nn.utils.rnn.pad_packed_sequence(
        torch.nn.utils.rnn.pack_sequence([torch.tensor(x) for x in xs])
    )
    _close(out, tout)
    assert lens.tolist() == tlens.tolist()


# ====================================================================== 4 broadcast_tensors
def test_broadcast_tensors_unify_names():
    a, b, c = _a(2, 3), _a(3, seed=1), _a(1, 3, seed=2)
    ga = ember.tensor(a, names=("N", None), requires_grad=True)
    gb = ember.tensor(b, names=("C",), requires_grad=True)
    gc = ember.tensor(c, requires_grad=True)
    outs = ember.broadcast_tensors(ga, gb, gc)
    assert [o.names for o in outs] == [("N", "C")] * 3
    ta, tb, tc = (torch.tensor(x, requires_grad=True) for x in (a, b, c))
    touts = torch.broadcast_tensors(ta, tb, tc)
    for o, t in zip(outs, touts):
        assert tuple(o.shape) == tuple(t.shape) and o.dtype == ember.float64
        _close(o, t)
    ups = [_a(2, 3, seed=10 + i) for i in range(3)]
    sum((o * ember.tensor(u)).sum() for o, u in zip(outs, ups)).backward()
    sum((t * torch.tensor(u)).sum() for t, u in zip(touts, ups)).backward()
    for g, t, n in ((ga, ta, ("N", None)), (gb, tb, ("C",)), (gc, tc, None)):
        assert g.grad._names == n
        _close(g.grad, t.grad)
    # unnamed: unchanged
    plain = ember.broadcast_tensors(ember.tensor(a), ember.tensor(b))
    assert all(o._names is None for o in plain)
    _close(plain[1], torch.broadcast_tensors(torch.tensor(a), torch.tensor(b))[1])


def test_broadcast_tensors_name_errors_come_first():
    a = ember.tensor(_a(2, 3), names=("N", "C"))
    with pytest.raises(
        RuntimeError,
        match=r"broadcast_tensors: Error when attempting to broadcast dims \['N', 'C'\] and dims "
        r"\['D'\]: dim 'C' and dim 'D' are at the same position from the right",
    ):
        ember.broadcast_tensors(a, ember.tensor(_a(4), names=("D",)))  # sizes clash too
    with pytest.raises(RuntimeError, match="Misaligned dims"):
        ember.broadcast_tensors(
            ember.tensor(_a(3, 3), names=("N", None)), ember.ones(3, names=("N",))
        )
    # the unnamed size error is torch's
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        torch.broadcast_tensors(torch.ones(2, 3), torch.ones(4))
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        ember.broadcast_tensors(ember.ones(2, 3), ember.ones(4))


def test_broadcast_all_unifies_names():
    from ember.distributions.utils import broadcast_all

    loc = ember.tensor(_a(2, 3), names=("N", "C"))
    outs = broadcast_all(loc, ember.tensor(_a(3), names=("C",)), 1.5)
    assert [o.names for o in outs] == [("N", "C")] * 3
    assert outs[2].tolist() == [[1.5] * 3] * 2
    d = ember.distributions.Normal(loc, ember.ones(3))
    assert d.loc.names == d.scale.names == ("N", "C")


# ====================================================================== 5 sparse conversions
@pytest.mark.parametrize(
    "convert",
    [
        lambda t: t.to_sparse(),
        lambda t: t.to_sparse(1),
        lambda t: t.to_sparse_coo(),
        lambda t: t.to_sparse_csr(),
        lambda t: t.to_sparse_csc(),
        lambda t: t.to_sparse_bsr((1, 1)),
        lambda t: t.to_sparse().to_sparse_csr(),
        lambda t: t.to_sparse_csr().to_sparse_coo().coalesce(),
    ],
    ids=["coo", "sparse_dim", "to_coo", "csr", "csc", "bsr", "coo_csr", "csr_coo"],
)
def test_to_sparse_and_back_keep_names(convert):
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]])
    s = convert(ember.tensor(x, names=("N", "C")))
    assert s.names == ("N", "C") and s.has_names()
    d = s.to_dense()
    assert d.names == ("N", "C")
    _close(d, convert(torch.tensor(x)).to_dense())
    s.names = None  # names can be cleared (not set: other sparse ops would drop them)
    assert s.names == (None, None) and s.to_dense()._names is None
    # unnamed: unchanged
    u = convert(ember.tensor(x))
    assert u.names == (None, None) and not u.has_names() and u.to_dense()._names is None


def test_to_sparse_gradient_keeps_names():
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]])
    g = ember.tensor(x, names=("N", "C"), requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    up = _a(2, 3, seed=4)
    g.to_sparse().to_dense().backward(ember.tensor(up, names=("N", "C")))
    t.to_sparse().to_dense().backward(torch.tensor(up))
    assert g.grad.names == ("N", "C")
    _close(g.grad, t.grad)


# ====================================================================== 6 norm weight names
_NORMS = [
    # (module factory, input shape, input names, which dims the weight names)
    (lambda: nn.BatchNorm1d(3, dtype=ember.float64), (4, 3, 5), ("N", "C", "L"), "channel"),
    (lambda: nn.BatchNorm2d(3, dtype=ember.float64), (2, 3, 4, 4), ("N", "C", "H", "W"), "channel"),
    (
        lambda: nn.InstanceNorm1d(3, affine=True, dtype=ember.float64),
        (4, 3, 5),
        ("N", "C", "L"),
        "channel",
    ),
    (lambda: nn.GroupNorm(1, 3, dtype=ember.float64), (4, 3, 5), ("N", "C", "L"), "channel"),
    (lambda: nn.LayerNorm(5, dtype=ember.float64), (4, 3, 5), ("N", "L", "C"), "normalized"),
    (lambda: nn.RMSNorm(5, dtype=ember.float64), (4, 3, 5), ("N", "L", "C"), "normalized"),
]


@pytest.mark.parametrize(("make", "shape", "names", "what"), _NORMS)
def test_norms_check_the_input_against_a_named_weight(make, shape, names, what):
    m = make()
    tm = getattr(torch.nn, type(m).__name__)
    x = _a(*shape)
    gx = ember.tensor(x, names=names, requires_grad=True)
    m.weight.rename_("C")
    out = m(gx)  # the names agree
    assert out.names == names
    m.weight.rename_("K")
    with pytest.raises(
        RuntimeError,
        match=rf"the input's {what} dim is named 'C' \(input names \[.*\]\), but the weight "
        r"expects 'K' \(weight names \['K'\]\); rename",
    ):
        m(gx)
    # an unnamed input, or an unnamed weight, is not checked; values are torch's
    assert m(gx.rename(None))._names is None
    m.weight.rename_(None)
    ref = {
        "BatchNorm1d": lambda: tm(3, dtype=torch.float64),
        "BatchNorm2d": lambda: tm(3, dtype=torch.float64),
        "InstanceNorm1d": lambda: tm(3, affine=True, dtype=torch.float64),
        "GroupNorm": lambda: tm(1, 3, dtype=torch.float64),
        "LayerNorm": lambda: tm(5, dtype=torch.float64),
        "RMSNorm": lambda: tm(5, dtype=torch.float64),
    }[type(m).__name__]()
    tx = torch.tensor(x, requires_grad=True)
    out, tout = m(gx), ref(tx)
    assert out.names == names
    _close(out, tout)
    up = _a(*shape, seed=9)
    out.backward(ember.tensor(up))
    tout.backward(torch.tensor(up))
    assert gx.grad.names == names
    _close(gx.grad, tx.grad, 1e-8)


def test_norm_functional_forms_check_bias_and_running_stats():
    x = ember.tensor(_a(4, 3, 5), names=("N", "C", "L"))
    f8 = ember.float64
    rm, rv = ember.zeros(3, names=("K",), dtype=f8), ember.ones(3, dtype=f8)
    with pytest.raises(RuntimeError, match="batch_norm: the input's channel dim is named 'C'"):
        F.batch_norm(x, rm, rv)
    with pytest.raises(RuntimeError, match="group_norm: .*expects 'K'"):
        F.group_norm(x, 1, None, ember.zeros(3, names=("K",), dtype=f8))
    with pytest.raises(RuntimeError, match="instance_norm: .*expects 'K'"):
        F.instance_norm(x, rm, rv, use_input_stats=False)
    with pytest.raises(RuntimeError, match="layer_norm: the input's normalized dim is named 'C'"):
        F.layer_norm(x, (3, 5), ember.ones(3, 5, names=("K", None), dtype=f8))
    ok = F.layer_norm(x, (3, 5), ember.ones(3, 5, names=("C", "L"), dtype=f8))
    assert ok.names == ("N", "C", "L")
    _close(ok, torch.nn.functional.layer_norm(torch.tensor(_a(4, 3, 5)), (3, 5)))


# ====================================================================== 7 recurrent h0/c0
@pytest.mark.parametrize("mode", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_rnn_initial_state_batch_name_is_checked(mode, batch_first):
    torch.manual_seed(0)
    tm = getattr(torch.nn, mode)(3, 4, num_layers=2, batch_first=batch_first, dtype=torch.float64)
    em = getattr(nn, mode)(3, 4, num_layers=2, batch_first=batch_first, dtype=ember.float64)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = _a(2, 5, 3) if batch_first else _a(5, 2, 3)
    xn = ("N", "T", "C") if batch_first else ("T", "N", "C")
    h0, c0 = _a(2, 2, 4, seed=1), _a(2, 2, 4, seed=2)

    def state(m, names_h=None, names_c=None):
        h = m.tensor(h0) if names_h is None else m.tensor(h0, names=names_h)
        c = m.tensor(c0) if names_c is None else m.tensor(c0, names=names_c)
        return (h, c) if mode == "LSTM" else h

    gx = ember.tensor(x, names=xn)
    out, hn = em(gx, state(ember, (None, "N", None), (None, "N", None)))
    tout, thn = tm(torch.tensor(x), state(torch))
    assert out.names == xn
    _close(out, tout)
    for e, t in zip(hn if mode == "LSTM" else (hn,), thn if mode == "LSTM" else (thn,)):
        assert e.names == (None, "N", "C")
        _close(e, t)
    # a clashing batch name in h0 (or c0)
    with pytest.raises(
        RuntimeError,
        match=rf"rnn_layer: {mode.lower()}\w*: the input's batch dim 'N' does not match hx's "
        "batch dim 'B'",
    ):
        em(gx, state(ember, (None, "B", None)))
    if mode == "LSTM":
        with pytest.raises(RuntimeError, match="does not match cx's batch dim 'B'"):
            em(gx, state(ember, None, (None, "B", None)))
    # an unnamed input takes the state's batch name
    out, hn = em(gx.rename(None), state(ember, (None, "B", None)))
    assert out.names == (("B", None, None) if batch_first else (None, "B", None))
    # unnamed: unchanged
    out, _ = em(ember.tensor(x), state(ember))
    assert out._names is None
    _close(out, tout)


# ====================================================================== 8 vmap
@pytest.mark.parametrize("vmap_e", [ember.vmap, ember.func.vmap], ids=["ember", "func"])
def test_vmap_keeps_the_mapped_dims_name(vmap_e):
    x, y = _a(2, 3), _a(3, 2, seed=1)
    gx = ember.tensor(x, names=("N", "C"), requires_grad=True)
    gy = ember.tensor(y, names=("C", "N"))

    def f(a, b):
        return (a * b).sum(), a * 2

    (s, d) = vmap_e(f, in_dims=(0, 1))(gx, gy)
    assert s.names == ("N",) and d.names == ("N", "C")
    (ts, td) = torch.func.vmap(f, in_dims=(0, 1))(torch.tensor(x), torch.tensor(y))
    _close(s, ts)
    _close(d, td)
    # out_dims place the named dim
    out = vmap_e(lambda a: a * 2, out_dims=1)(gx)
    assert out.names == ("C", "N")
    _close(out, torch.func.vmap(lambda a: a * 2, out_dims=1)(torch.tensor(x)))
    up = _a(3, 2, seed=2)
    out.backward(ember.tensor(up))
    assert gx.grad.names == ("N", "C")
    np.testing.assert_allclose(_np(gx.grad), 2 * up.T)
    # an output that already uses the name: the stacked dim is unnamed
    assert vmap_e(lambda a: a.rename("N"))(gx).names == (None, "N")
    # unnamed: unchanged
    assert vmap_e(lambda a: a * 2)(ember.tensor(x))._names is None


def test_vmap_mapped_names_must_agree():
    a = ember.tensor(_a(2, 3), names=("N", "C"))
    b = ember.tensor(_a(2, 3), names=("B", "C"))
    with pytest.raises(RuntimeError, match=r"vmap: the mapped dims of the inputs are named 'N'"):
        ember.vmap(lambda u, v: u + v)(a, b)
    # one input unnamed on the mapped dim: the other's name stands
    assert ember.vmap(lambda u, v: u + v)(a, b.rename(None)).names == ("N", "C")
