"""torch.nn.attention.flex_attention in ember: flex_attention, BlockMask, create_block_mask,
create_mask, and_masks/or_masks/noop_mask.

Forward values (output and logsumexp) against torch's flex_attention; gradients (q, k, v and
captured tables, non-uniform upstream gradients, through the output and the logsumexp) against
torch's own eager math implementation under torch autograd (torch's flex_attention refuses
backward on CPU). Block tables against torch's, element for element. float64 gradcheck, torch's
errors and warnings, names (spec 4.3), and the device path on the strict backend.
"""

import math
import warnings

import ember
import ember.nn.attention.flex_attention as EF
import numpy as np
import pytest
from harness import raises_like_torch
from strict_backend import StrictArray, strict_cuda

torch = pytest.importorskip("torch")
import torch.nn.attention.flex_attention as TF
from torch._higher_order_ops.flex_attention import math_attention

pytestmark = pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")

_NEG_INF = float("-inf")


@pytest.fixture(autouse=True)
def _torch_uncompiled(monkeypatch):
    """torch's flex_attention without its dynamo pass (the same eager math, 20x faster to call)."""
    monkeypatch.setattr(TF, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


# ---------------------------------------------------------------------- mods (both frameworks)
def _score_mod(kind, P, M):
    """A score_mod over the captured tensors ``P`` of framework ``M``."""
    if kind == "rel":  # learned relative-position bias: one entry per (q_idx - kv_idx)
        return lambda s, b, h, qi, ki: s + P["rel"][qi - ki + P["off"]]
    if kind == "alibi":
        return lambda s, b, h, qi, ki: s + P["slopes"][h] * (ki - qi)
    if kind == "softcap":
        return lambda s, b, h, qi, ki: 2.0 * M.tanh(s / 2.0) + P["bias"][b, h]
    if kind == "neg_inf":  # masking from the score_mod itself
        return lambda s, b, h, qi, ki: M.where(ki <= qi + 1, s, _NEG_INF)
    return None


def _mask_mod(kind, P):
    if kind == "causal":
        return lambda b, h, qi, ki: qi >= ki
    if kind == "sliding":
        return lambda b, h, qi, ki: (qi >= ki) & (qi - ki <= 3)
    if kind == "document":  # jagged documents per batch, causal inside each
        return lambda b, h, qi, ki: (P["doc"][b, qi] == P["doc"][b, ki]) & (qi >= ki)
    if kind == "row":  # query 2 sees no key
        return lambda b, h, qi, ki: (qi != 2) & (ki <= qi + 2)
    if kind == "head":
        return lambda b, h, qi, ki: (ki <= qi + h) | (b == 1)
    return None


# name -> (B, Bkv, Hq, Hkv, L, S, E, Ev, score, mask, extra flex keywords)
CASES = {
    "plain": (2, 2, 2, 2, 5, 7, 4, 3, None, None, {}),
    "causal": (2, 2, 2, 2, 6, 6, 4, 5, None, "causal", {}),
    "rel_bias": (2, 2, 2, 2, 6, 6, 4, 4, "rel", None, {}),
    "alibi_causal": (1, 1, 4, 4, 6, 6, 8, 4, "alibi", "causal", {}),
    "softcap": (2, 2, 2, 2, 5, 7, 4, 3, "softcap", None, {}),
    "sliding": (1, 1, 2, 2, 12, 12, 4, 4, "rel", "sliding", {}),
    "document": (2, 2, 2, 2, 9, 9, 4, 3, None, "document", {}),
    "gqa": (2, 2, 4, 2, 5, 5, 4, 3, "alibi", "causal", {"enable_gqa": True}),
    "scale": (1, 1, 2, 2, 5, 7, 4, 3, "rel", None, {"scale": 0.3}),
    "l_ne_s": (1, 1, 2, 2, 4, 9, 4, 3, None, "causal", {}),
    "masked_row": (2, 2, 2, 2, 5, 7, 4, 3, "rel", "row", {}),
    "masked_row_plain": (2, 2, 2, 2, 5, 7, 4, 3, None, "row", {}),
    "score_neg_inf": (1, 1, 2, 2, 5, 5, 4, 3, "neg_inf", None, {}),
    "kv_batch_1": (2, 1, 2, 2, 9, 9, 4, 3, None, "document", {}),
    "head_mask": (2, 2, 3, 3, 5, 6, 4, 3, None, "head", {}),
}


def _arrays(name, dtype):
    B, Bkv, Hq, Hkv, L, S, E, Ev = CASES[name][:8]
    r = np.random.default_rng(sum(map(ord, name)))
    docs = np.sort(r.integers(0, 3, (B, max(L, S))), axis=1)
    return {
        "q": r.standard_normal((B, Hq, L, E)).astype(dtype),
        "k": r.standard_normal((Bkv, Hkv, S, E)).astype(dtype),
        "v": r.standard_normal((Bkv, Hkv, S, Ev)).astype(dtype),
        "rel": r.standard_normal(L + S - 1).astype(dtype),
        "slopes": r.uniform(0.1, 1.0, Hq).astype(dtype),
        "bias": r.standard_normal((B, Hq)).astype(dtype),
        "doc": docs,
        "g": r.uniform(0.5, 1.5, (B, Hq, L, Ev)).astype(dtype),
        "gl": r.uniform(0.5, 1.5, (B, Hq, L)).astype(dtype),
    }


_LEARNED = ("rel", "slopes", "bias")


def _setup(M, F, name, arrs, grad, bm=None):
    """q, k, v, captured tensors, score_mod and BlockMask (``bm`` if given) of case ``name`` in
    framework ``M``."""
    B, _, Hq, _, L, S, *_, score, mask, kw = CASES[name]
    P = {n: M.tensor(arrs[n], requires_grad=grad and n in _LEARNED) for n in (*_LEARNED, "doc")}
    P["off"] = S - 1
    q, k, v = (M.tensor(arrs[n], requires_grad=grad) for n in "qkv")
    mm = _mask_mod(mask, P)
    if bm is None and mm is not None:
        bm = F.create_block_mask(mm, B, Hq, L, S, device="cpu", BLOCK_SIZE=4)
    return q, k, v, P, _score_mod(score, P, M), bm, kw


def _loss(M, out, lse, arrs):
    loss = (out * M.tensor(arrs["g"])).sum()
    if lse is not None:  # finite entries only: a fully masked row's lse is -inf
        loss = loss + (M.where(M.isinf(lse), 0.0, lse) * M.tensor(arrs["gl"])).sum()
    return loss


def _grads(q, k, v, P):
    return [t.grad.numpy() for t in (q, k, v, *(P[n] for n in _LEARNED)) if t.grad is not None]


def _torch_reference(name, arrs):
    """torch's forward (flex_attention) and gradients (its eager math implementation) of the
    output alone and of the output and logsumexp."""
    q, k, v, P, sm, bm, kw = _setup(torch, TF, name, arrs, False)
    out, aux = TF.flex_attention(q, k, v, sm, bm, return_aux=TF.AuxRequest(lse=True), **kw)
    q, k, v, P, sm, bm, kw = _setup(torch, TF, name, arrs, True, bm)
    bm_tuple = (bm or TF._create_empty_block_mask(q, k)).as_tuple()
    scale = kw.get("scale", 1 / math.sqrt(q.shape[-1]))
    o, lse2, _ = math_attention(q, k, v, sm or (lambda s, b, h, qi, ki: s), bm_tuple, scale, {})
    leaves = [t for t in (q, k, v, *(P[n] for n in _LEARNED)) if t.requires_grad]
    grads = []
    for lse in (None, lse2 * math.log(2)):
        loss = _loss(torch, o, lse, arrs)
        got = torch.autograd.grad(loss, leaves, retain_graph=True, allow_unused=True)
        grads.append([g.numpy() for g in got if g is not None])
    return out.numpy(), aux.lse.numpy(), grads


def _close(a, b, dtype):
    tol = {"rtol": 1e-4, "atol": 2e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-11}
    np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_flex_attention_parity(name, dtype):
    arrs = _arrays(name, dtype)
    t_out, t_lse, (t_grads, t_grads_lse) = _torch_reference(name, arrs)

    # the output alone (the fused SDPA path when there is no score_mod)
    q, k, v, P, sm, bm, kw = _setup(ember, EF, name, arrs, True)
    out = EF.flex_attention(q, k, v, sm, bm, **kw)
    assert out.dtype == getattr(ember, dtype) and out.shape == t_out.shape
    _close(out.detach().numpy(), t_out, dtype)
    _loss(ember, out, None, arrs).backward()
    for e, t in zip(_grads(q, k, v, P), t_grads, strict=True):
        _close(e, t, dtype)

    # with the logsumexp (natural log, -inf on fully masked rows), differentiated too
    q, k, v, P, sm, bm, kw = _setup(ember, EF, name, arrs, True)
    out, aux = EF.flex_attention(q, k, v, sm, bm, return_aux=EF.AuxRequest(lse=True), **kw)
    assert aux.max_scores is None and aux.lse.dtype == out.dtype
    _close(out.detach().numpy(), t_out, dtype)
    _close(aux.lse.detach().numpy(), t_lse, dtype)
    _loss(ember, out, aux.lse, arrs).backward()
    for e, t in zip(_grads(q, k, v, P), t_grads_lse, strict=True):
        _close(e, t, dtype)


def test_fully_masked_row_is_zero_and_lse_minus_inf():
    arrs = _arrays("masked_row", "float32")
    q, k, v, _, _, bm, _ = _setup(ember, EF, "masked_row", arrs, False)
    out, aux = EF.flex_attention(q, k, v, block_mask=bm, return_aux=EF.AuxRequest(lse=True))
    tq, tk, tv, _, _, tbm, _ = _setup(torch, TF, "masked_row", arrs, False)
    t_out, t_aux = TF.flex_attention(tq, tk, tv, block_mask=tbm, return_aux=TF.AuxRequest(True))
    np.testing.assert_array_equal(out[:, :, 2].numpy(), t_out[:, :, 2].numpy())
    assert np.all(out[:, :, 2].numpy() == 0)
    np.testing.assert_array_equal(aux.lse[:, :, 2].numpy(), t_aux.lse[:, :, 2].numpy())


def test_return_lse_deprecated_form():
    arrs = _arrays("rel_bias", "float32")
    res = {}
    for M, F in ((ember, EF), (torch, TF)):
        q, k, v, _, sm, _, _ = _setup(M, F, "rel_bias", arrs, False)
        F._WARNINGS_SHOWN.discard("deprecated_return_lse")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            res[M] = F.flex_attention(q, k, v, sm, return_lse=True)
            F.flex_attention(q, k, v, sm, return_lse=True)  # the warning comes once
        msgs = [(x.category, str(x.message)) for x in w if x.category is FutureWarning]
        assert msgs == [
            (
                FutureWarning,
                "return_lse is deprecated and will be removed in v2.10. Please use "
                + "return_aux=AuxRequest(lse=True) instead.",
            )
        ]
    (e_out, e_lse), (t_out, t_lse) = res[ember], res[torch]
    _close(e_out.numpy(), t_out.numpy(), "float32")
    _close(e_lse.numpy(), t_lse.numpy(), "float32")


def test_mod_argument_dtypes():
    seen = {}
    for M in (ember, torch):

        def mod(s, b, h, qi, ki, M=M):
            seen[M] = [str(t.dtype).split(".")[-1] for t in (s, b, h, qi, ki)]
            return s

        _flex(M, *_QKV, score_mod=mod)
    assert seen[ember] == seen[torch] == ["float32", "int64", "int64", "int64", "int64"]


def test_mixed_dtypes_and_half():
    r = np.random.default_rng(0)
    q, k, v = (r.standard_normal((1, 2, 4, 8)) for _ in range(3))
    for dq, dk, dv in (("float32", "float64", "float16"), ("float64", "float32", "float32")):
        ins = [(q.astype(dq), k.astype(dk), v.astype(dv))]
        e = EF.flex_attention(*(ember.tensor(a) for a in ins[0]))
        t = TF.flex_attention(*(torch.tensor(a) for a in ins[0]))
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    eh = [ember.tensor(a.astype("float16")) for a in (q, k, v)]
    th = [torch.tensor(a.astype("float16")) for a in (q, k, v)]
    e_out, e_aux = EF.flex_attention(*eh, return_aux=EF.AuxRequest(lse=True))
    t_out, t_aux = TF.flex_attention(*th, return_aux=TF.AuxRequest(lse=True))
    assert e_out.dtype == ember.float16 and e_aux.lse.dtype == ember.float32
    assert t_aux.lse.dtype == torch.float32
    np.testing.assert_allclose(e_out.float().numpy(), t_out.float().numpy(), atol=2e-3)
    np.testing.assert_allclose(e_aux.lse.numpy(), t_aux.lse.numpy(), rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------------- gradcheck
@pytest.mark.parametrize("name", ["masked_row", "softcap", "causal", "gqa"])
def test_flex_attention_gradcheck(name):
    arrs = {
        n: a.astype("float64") if a.dtype.kind == "f" else a
        for n, a in _arrays(name, "float64").items()
    }
    q, k, v, P, sm, bm, kw = _setup(ember, EF, name, arrs, True)
    learned = [P[n] for n in _LEARNED]

    def fn(q, k, v, *tables):
        P.update(zip(_LEARNED, tables))
        out, aux = EF.flex_attention(q, k, v, sm, bm, return_aux=EF.AuxRequest(lse=True), **kw)
        return out, ember.where(ember.isinf(aux.lse), 0.0, aux.lse)

    assert ember.autograd.gradcheck(fn, [q, k, v, *learned], atol=1e-6, rtol=1e-4)


def test_flex_attention_gradgradcheck():
    # double backward through both paths: the score_mod composite and the fused mask-only ops
    arrs = _arrays("masked_row", "float64")
    q, k, v, P, sm, bm, _ = _setup(ember, EF, "masked_row", arrs, True)
    q, k, v = (t[:1, :1, :4, :2].detach().requires_grad_() for t in (q, k, v))
    bm = EF.create_block_mask(_mask_mod("row", P), 1, 1, 4, 4, device="cpu")
    P["off"] = 3

    def fn(q, k, v, rel):
        P["rel"] = rel
        return EF.flex_attention(q, k, v, sm, bm), EF.flex_attention(q, k, v, block_mask=bm)

    rel = P["rel"][:7].detach().requires_grad_()
    assert ember.autograd.gradgradcheck(fn, [q, k, v, rel], atol=1e-5, rtol=1e-3)


# ---------------------------------------------------------------------- block masks
def _doc_mask(M):
    doc = M.tensor([[0, 0, 0, 1, 1, 2, 2, 2, 2, 2] * 13, [0] * 60 + [1] * 70])
    return lambda b, h, qi, ki: (doc[b, qi] == doc[b, ki]) & (qi >= ki)


def _causal(M):
    return lambda b, h, q, k: q >= k


# name -> (mask_mod factory, B, H, Q_LEN, KV_LEN, extra create_block_mask keywords)
BLOCK_CASES = {
    "causal_256": (_causal, 1, 1, 256, 256, {}),
    "causal_ragged": (_causal, None, None, 300, 200, {}),
    "sliding_16": (
        lambda M: lambda b, h, q, k: (q >= k) & (q - k < 24),
        None,
        2,
        100,
        130,
        {"BLOCK_SIZE": 16},
    ),
    "document": (_doc_mask, 2, None, 130, 130, {"BLOCK_SIZE": 16}),
    "head_tuple": (
        lambda M: lambda b, h, q, k: (k <= q + 8 * h) | (q > 40),
        2,
        3,
        50,
        70,
        {"BLOCK_SIZE": (16, 32)},
    ),
    "no_full": (_causal, 1, 2, 64, 48, {"BLOCK_SIZE": 16, "separate_full_blocks": False}),
    "noop": (
        lambda M: M.nn.attention.flex_attention.noop_mask,
        None,
        None,
        40,
        40,
        {"BLOCK_SIZE": 16},
    ),
}

_FIELDS = [
    "kv_num_blocks",
    "kv_indices",
    "full_kv_num_blocks",
    "full_kv_indices",
    "q_num_blocks",
    "q_indices",
    "full_q_num_blocks",
    "full_q_indices",
]


def _same_tables(e, t):
    for f in _FIELDS:
        a, b = getattr(e, f), getattr(t, f)
        assert (a is None) == (b is None), f
        if a is not None:
            assert a.dtype == ember.int32 and b.dtype == torch.int32, f
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=f)
    assert e.shape == t.shape and e.seq_lengths == t.seq_lengths
    assert e.BLOCK_SIZE == t.BLOCK_SIZE


def _blocks(M, name):
    mod, B, H, L, S, kw = BLOCK_CASES[name]
    return M.nn.attention.flex_attention.create_block_mask(mod(M), B, H, L, S, "cpu", **kw)


@pytest.mark.parametrize("name", list(BLOCK_CASES))
def test_create_block_mask_matches_torch(name):
    e, t = _blocks(ember, name), _blocks(torch, name)
    _same_tables(e, t)
    assert e.sparsity() == pytest.approx(t.sparsity())
    assert e.numel() == t.numel()
    np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())
    assert e.to_dense().dtype == ember.int32
    assert str(e) == str(t)
    assert repr(e) == repr(t).replace("torch.Size", "ember.Size")
    for kw in ({"grid_size": 3, "limit": 2}, {"grid_size": (2, 5)}, {"grid_size": -1}):
        assert e.to_string(**kw) == t.to_string(**kw)
    assert len(e.as_tuple()) == len(t.as_tuple()) == 17
    assert len(e.as_tuple(flatten=False)) == len(t.as_tuple(flatten=False)) == 15


def test_block_mask_indexing_adjust_and_from_kv_blocks():
    e, t = _blocks(ember, "head_tuple"), _blocks(torch, "head_tuple")
    for ix in (0, -1, (1, 2), (slice(0, 1), slice(1, 3)), (-1, slice(1, 3), "idx")):
        ix_e, ix_t = (
            tuple(M.tensor([1, 0], dtype=M.int32) if i == "idx" else i for i in ix)
            if isinstance(ix, tuple)
            else ix
            for M in (ember, torch)
        )
        _same_tables(e[ix_e], t[ix_t])
        assert str(e[ix_e]) == str(t[ix_t])
    _same_tables(e._adjust(40, 33), t._adjust(40, 33))
    # from torch's tables (no full blocks, default seq_lengths and mask_mod)
    kv = (t.kv_num_blocks, t.kv_indices)
    fe = EF.BlockMask.from_kv_blocks(*(ember.tensor(x.numpy()) for x in kv), BLOCK_SIZE=8)
    ft = TF.BlockMask.from_kv_blocks(*kv, BLOCK_SIZE=8)
    _same_tables(fe, ft)
    assert fe.mask_mod is EF.noop_mask and fe.full_kv_num_blocks is None
    fe = EF.BlockMask.from_kv_blocks(*(ember.tensor(x.numpy()) for x in kv), compute_q_blocks=False)
    assert fe.q_num_blocks is None and fe.q_indices is None
    _same_tables(e.to("cpu"), t)


def test_block_tables_are_ignored_by_eager_attention():
    # like torch's eager path: only mask_mod masks; these tables would keep two diagonal blocks
    num = [[[1, 1]]]
    idx = [[[[0, 1], [1, 0]]]]
    r = np.random.default_rng(1)
    arrs = [r.standard_normal((1, 1, 256, 4)).astype("float32") for _ in range(3)]
    outs = []
    for M, F in ((ember, EF), (torch, TF)):
        bm = F.BlockMask.from_kv_blocks(M.tensor(num, dtype=M.int32), M.tensor(idx, dtype=M.int32))
        outs.append(F.flex_attention(*(M.tensor(a) for a in arrs), block_mask=bm).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "mod",
    [
        lambda M, P: lambda b, h, q, k: q >= k,
        lambda M, P: lambda b, h, q, k: (q - k).abs() <= h,
        lambda M, P: M.nn.attention.flex_attention.noop_mask,
        lambda M, P: M.nn.attention.flex_attention.and_masks(),
        lambda M, P: M.nn.attention.flex_attention.or_masks(),
        lambda M, P: M.nn.attention.flex_attention.and_masks(
            lambda b, h, q, k: q >= k, lambda b, h, q, k: k % 2 == b
        ),
        lambda M, P: M.nn.attention.flex_attention.or_masks(
            lambda b, h, q, k: q == k, lambda b, h, q, k: P[h] > k
        ),
        lambda M, P: lambda s, b, h, q, k: M.where(q >= k, s, _NEG_INF),
        lambda M, P: lambda s, b, h, q, k: s + P[h],
    ],
)
def test_create_mask_matches_torch(mod):
    for B, H in ((2, 3), (None, None)):
        e = EF.create_mask(mod(ember, ember.tensor([1, 2, 3])), B, H, 4, 5, "cpu")
        t = TF.create_mask(mod(torch, torch.tensor([1, 2, 3])), B, H, 4, 5, "cpu")
        assert e.dtype == ember.bool and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_mask_combinators_names():
    assert EF.and_masks().__name__ == TF.and_masks().__name__ == "and_mask"
    assert EF.or_masks().__name__ == TF.or_masks().__name__ == "or_mask"


def test_create_block_mask_compile_flag_warns(monkeypatch):
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)  # the warning, not inductor
    bms = []
    for M in (ember, torch):
        with pytest.warns(DeprecationWarning, match="_compile flag on create_block_mask"):
            bms.append(
                M.nn.attention.flex_attention.create_block_mask(
                    lambda b, h, q, k: q >= k, 1, 1, 32, 48, "cpu", 16, _compile=True
                )
            )
    _same_tables(*bms)


# ---------------------------------------------------------------------- errors
def _r(M, *shape):
    return M.ones(*shape)


def _flex(M, *shapes, **kw):
    return M.nn.attention.flex_attention.flex_attention(*(_r(M, *s) for s in shapes), **kw)


def _cbm(M, mod, *args, **kw):
    return M.nn.attention.flex_attention.create_block_mask(mod, *args, **kw)


def _bm(M, B, L, S):
    return _cbm(M, lambda b, h, q, k: q >= k, B, None, L, S, "cpu")


def _aux(M, **kw):
    return M.nn.attention.flex_attention.AuxRequest(**kw)


def _int_mask(M):
    bm = _bm(M, 1, 7, 7)
    bm.mask_mod = lambda b, h, q, k: q - k
    return bm


_QKV = ((1, 1, 7, 4), (1, 1, 7, 4), (1, 1, 7, 4))
_SMALLER = "As the block mask was created for a smaller length than you're using it for"
_LARGER = "As the block mask was created for a larger length than you're using it for, you can"
ERRORS = [
    (
        lambda M: _flex(M, (4,), (2, 4), (2, 4)),
        ValueError,
        "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1, "
        + "key.dim: 2 and value.dim: 2 instead.",
    ),
    (
        lambda M: _flex(M, (1, 1, 2, 4), (1, 1, 2, 5), (1, 1, 2, 4)),
        ValueError,
        "Expect query and key/value to have the same embedding dimension but got E=4 and E=5.",
    ),
    (
        lambda M: _flex(M, (1, 2, 4), (1, 2, 4), (1, 2, 4)),
        NotImplementedError,
        "NYI: query, key, and value must be 4D tensors",
    ),
    (
        lambda M: _flex(M, (1, 4, 2, 4), (1, 2, 2, 4), (1, 2, 2, 4)),
        ValueError,
        "Expect query and key/value to have the same number of heads but got Hq=4 and Hkv=2. "
        + "Try setting enable_gqa=True for GQA.",
    ),
    (
        lambda M: _flex(M, (1, 4, 2, 4), (1, 3, 2, 4), (1, 3, 2, 4), enable_gqa=True),
        ValueError,
        "Expect number of query heads to be a multiple of kv heads for GQA but got Hq=4 and Hkv=3.",
    ),
    (
        lambda M: _flex(M, (2, 1, 5, 4), (3, 1, 7, 4), (3, 1, 7, 4)),
        ValueError,
        "Expect query and key/value to have the same batch size, or non-none block_mask, but got "
        + "block_mask=None, Bq=2, and Bkv=3.",
    ),
    (
        lambda M: _flex(M, (2, 1, 5, 4), (3, 1, 7, 4), (3, 1, 7, 4), block_mask=_bm(M, 3, 5, 7)),
        ValueError,
        "Expect query and key/value to have the same batch size, or block_mask and query to have "
        + "the same batch size, but got Bq=2, Bkv=3, B_block_mask=3.",
    ),
    (
        lambda M: _flex(M, (3, 1, 5, 4), (2, 1, 7, 4), (2, 1, 7, 4), block_mask=_bm(M, 3, 5, 7)),
        RuntimeError,
        "Bq and Bkv must broadcast. Got Bq=3 and Bkv=2",
    ),
    (
        lambda M: _flex(M, (1, 1, 9, 4), (1, 1, 8, 4), (1, 1, 8, 4), block_mask=_bm(M, 1, 8, 8)),
        ValueError,
        "block_mask was created for block_mask.shape=(1, 1, 8, 8) but got q_len=9 and kv_len=8. "
        + _SMALLER
        + ", you likely need to create a new block mask.",
    ),
    (
        lambda M: _flex(M, (1, 1, 7, 4), (1, 1, 8, 4), (1, 1, 8, 4), block_mask=_bm(M, 1, 8, 8)),
        ValueError,
        "got q_len=7 and kv_len=8. "
        + _LARGER
        + " either 1. create a new block mask with the correct length, or 2. 'adjust' the "
        + "existing block mask to the correct length by calling block_mask._adjust(q_len, "
        + "kv_len). This essentially 'crops' the block mask to the upper left corner, which does "
        + "not work for all mask_mods!",
    ),
    (
        lambda M: _flex(M, (1, 1, 3, 4), (1, 1, 0, 4), (1, 1, 0, 4)),
        IndexError,
        "max(): Expected reduction dim 3 to have non-zero size.",
    ),
    (
        lambda M: _flex(M, *_QKV, block_mask=_bm(M, 2, 7, 7)[0]),
        RuntimeError,
        "Cannot use mask_mod from a sliced BlockMask",
    ),
    (
        lambda M: _flex(M, *_QKV, return_lse=True, return_aux=_aux(M, lse=True)),
        ValueError,
        "Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
        + "return_aux=AuxRequest(lse=True) instead.",
    ),
    (
        lambda M: _flex(M, *_QKV, kernel_options={"BACKEND": "X"}),
        ValueError,
        "Invalid BACKEND value 'X'. Must be one of ('AUTO', 'TRITON', 'FLASH', 'TRITON_DECODE')",
    ),
    (
        lambda M: _flex(
            M, *_QKV, kernel_options={"BACKEND": "AUTO", "FORCE_USE_FLEX_ATTENTION": 1}
        ),
        RuntimeError,
        "BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND supersedes the "
        + "legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only specify the desired BACKEND.",
    ),
    (
        lambda M: _flex(M, *_QKV, kernel_options={"OUTPUT_LOGSUMEXP": True}),
        AssertionError,
        "OUTPUT_LOGSUMEXP must not be in kernel_options",
    ),
    (
        lambda M: _flex(M, *_QKV, kernel_options={"OUTPUT_MAX": True}),
        AssertionError,
        "OUTPUT_MAX must not be in kernel_options",
    ),
    (
        lambda M: _flex(M, *_QKV, return_aux=_aux(M, max_scores=True)),
        NotImplementedError,
        "Returning max scores is not supported on CPU/MPS.",
    ),
    (
        lambda M: _flex(
            M, *_QKV, return_aux=_aux(M, max_scores=True), kernel_options={"BACKEND": "FLASH"}
        ),
        NotImplementedError,
        "Returning max scores is not supported with BACKEND='FLASH'. Use "
        + "return_aux=AuxRequest(lse=True) or omit max_scores.",
    ),
    (
        lambda M: _flex(M, *_QKV, block_mask=_int_mask(M)),
        RuntimeError,
        "where expected condition to be a boolean tensor, but got a tensor with dtype Long",
    ),
    (
        lambda M: _cbm(M, lambda b, h, q, k: q - k, 1, 1, 7, 7, "cpu"),
        AssertionError,
        "mask.dtype must be ",
    ),
    (
        lambda M: _cbm(M, lambda b, h, q: q, 1, 1, 4, 4, "cpu"),
        AssertionError,
        "Expected 4 or 5 positional args, got 3",
    ),
    (
        lambda M: M.nn.attention.flex_attention.create_mask(lambda b, h, q, k, s, t: q, 1, 1, 4, 4),
        AssertionError,
        "Expected 4 or 5 positional args, got 6",
    ),
    (
        lambda M: _cbm(M, lambda s, b, h, q, k: s, 1, 1, 4, 4, "cpu"),
        AssertionError,
        "create-block_mask requires a mask_mod function! Got <function",
    ),
    (
        lambda M: _cbm(M, lambda b, h, q, k: q >= k, 1, 1, 4, 4, "cpu", dq_kv_order=1),
        ValueError,
        "dq_kv_order must be a bool when using create_block_mask",
    ),
    (
        lambda M: M.nn.attention.flex_attention.and_masks(lambda b, h, q, k: q, 1),
        RuntimeError,
        "All inputs should be callable mask_mods: (",
    ),
    (
        lambda M: M.nn.attention.flex_attention.or_masks(None),
        RuntimeError,
        "All inputs should be callable mask_mods: (None,)",
    ),
    (
        lambda M: M.nn.attention.flex_attention.BlockMask.from_kv_blocks(
            M.ones(1, dtype=M.int32), M.zeros(1, dtype=M.int32)
        ),
        RuntimeError,
        "BlockMask must have at least 2 dimensions",
    ),
    (
        lambda M: M.nn.attention.flex_attention.BlockMask.from_kv_blocks(
            M.ones(1, 1, dtype=M.int32),
            M.zeros(1, 1, 1, dtype=M.int32),
            M.ones(1, 1, dtype=M.int32),
        ),
        AssertionError,
        "full_kv_num_blocks and full_kv_indices must be both provided or omitted",
    ),
    (
        lambda M: _bm(M, 2, 7, 7)[0].mask_mod(*(M.arange(2),) * 4),
        RuntimeError,
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the "
        + "mask_mod attribute is reset. You must set it from the original BlockMask's mask_mod.",
    ),
]


@pytest.mark.parametrize("row", range(len(ERRORS)))
def test_errors(row):
    fn, exc, msg = ERRORS[row]
    raises_like_torch(fn, exc, msg)


def test_value_length_mismatch():
    raises_like_torch(
        lambda M: _flex(M, (1, 1, 3, 4), (1, 1, 7, 4), (1, 1, 6, 4)),
        RuntimeError,
        "Expected size for first two dimensions of batch2 tensor to be: [1, 7] but got: [1, 6].",
    )


@pytest.mark.parametrize(
    "mod",
    [
        lambda s, b, h, q, k: s if q >= k else s * 0,
        lambda s, b, h, q, k: s * int(q),
        lambda s, b, h, q, k: s + (q - k).item(),
    ],
)
def test_mod_using_a_tensor_as_python_value(mod):
    # torch fails too (a RuntimeError from dynamo/vmap); ember says what to write instead
    with pytest.raises(RuntimeError):
        _flex(torch, *_QKV, score_mod=mod)
    with pytest.raises(
        RuntimeError, match=r"cannot use a tensor as a Python value .* torch\.where"
    ):
        _flex(ember, *_QKV, score_mod=mod)
    with pytest.raises(RuntimeError, match="calls mask_mod once on broadcast index tensors"):
        _cbm(ember, lambda b, h, q, k: q >= k if q > 2 else q < k, 1, 1, 4, 4, "cpu")


def test_mod_returning_a_wrong_shape_or_no_tensor():
    with pytest.raises(RuntimeError, match=r"broadcasts to \[1, 1, 7, 7\], but it returned"):
        _flex(ember, *_QKV, score_mod=lambda s, b, h, q, k: s.repeat(1, 1, 1, 2))
    with pytest.raises(ValueError, match="score_mod must return a Tensor, got type"):
        _flex(ember, *_QKV, score_mod=lambda s, b, h, q, k: None)
    with pytest.raises(ValueError):
        _flex(torch, *_QKV, score_mod=lambda s, b, h, q, k: None)


def test_kernel_options_are_accepted():
    opts = {"BLOCK_M": 16, "PRESCALE_QK": True, "BACKEND": "TRITON"}
    e = _flex(ember, *_QKV, kernel_options=opts)
    t = _flex(torch, *_QKV, kernel_options=opts)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


def test_signatures_match_torch():
    import inspect

    for n in ("flex_attention", "create_block_mask", "create_mask", "noop_mask"):
        e, t = inspect.signature(getattr(EF, n)), inspect.signature(getattr(TF, n))
        assert list(e.parameters) == list(t.parameters), n
        assert [p.default for p in e.parameters.values()] == [
            p.default for p in t.parameters.values()
        ], n
    for n in ("from_kv_blocks", "__init__", "to_string", "as_tuple"):
        e, t = (inspect.signature(getattr(m.BlockMask, n)) for m in (EF, TF))
        assert list(e.parameters) == list(t.parameters), n
    assert sorted(EF.__all__) == sorted(TF.__all__)
    assert EF.AuxRequest._fields == TF.AuxRequest._fields
    assert EF.AuxOutput._fields == TF.AuxOutput._fields
    assert set(EF.FlexKernelOptions.__annotations__) == set(TF.FlexKernelOptions.__annotations__)


def test_not_imported_by_the_package():
    # like torch.nn.attention, ember.nn.attention does not import flex_attention eagerly
    import ember.nn.attention as A

    assert "flex_attention" not in A.__all__ and "flex_attention" not in torch.nn.attention.__all__


# ---------------------------------------------------------------------- names (spec 4.3)
def test_names():
    r = np.random.default_rng(2)
    arrs = [r.standard_normal((1, 2, 4, 3)).astype("float32") for _ in range(3)]
    names = ("N", "H", "T", "E")
    q = ember.tensor(arrs[0], names=names, requires_grad=True)
    k = ember.tensor(arrs[1], names=("N", "H", "S", "E"))
    v = ember.tensor(arrs[2], names=("N", "H", "S", None))
    out, aux = EF.flex_attention(
        q, k, v, lambda s, b, h, qi, ki: s * 0.5, return_aux=EF.AuxRequest(lse=True)
    )
    assert out.names == names and aux.lse.names == names[:-1]
    (out.sum() + aux.lse.sum()).backward()
    assert q.grad.names == names
    plain = EF.flex_attention(*(ember.tensor(a) for a in arrs), lambda s, b, h, qi, ki: s * 0.5)
    np.testing.assert_allclose(out.detach().rename(None).numpy(), plain.numpy())
    with pytest.raises(RuntimeError, match="feature dims of query and key must have the same name"):
        EF.flex_attention(q, k.rename("N", "H", "S", "F"), v)


# ---------------------------------------------------------------------- device (strict backend)
def test_device_path_and_max_scores():
    arrs = _arrays("masked_row", "float64")

    def run(dev):
        P = {n: ember.tensor(arrs[n], device=dev, requires_grad=n == "rel") for n in ("rel", "doc")}
        P["off"] = 6
        q, k, v = (ember.tensor(arrs[n], device=dev, requires_grad=True) for n in "qkv")
        bm = EF.create_block_mask(_mask_mod("row", P), 2, 2, 5, 7, device=dev, BLOCK_SIZE=2)
        out, aux = EF.flex_attention(
            q, k, v, _score_mod("rel", P, ember), bm, return_aux=EF.AuxRequest(True, dev == "cuda")
        )
        (out.sum() + ember.where(ember.isinf(aux.lse), 0.0, aux.lse).sum()).backward()
        plain = EF.flex_attention(q, k, v, block_mask=bm)
        return [out, aux.lse, plain, q.grad, P["rel"].grad, bm.kv_indices, bm.full_q_indices], (
            aux.max_scores,
            bm,
        )

    ref, _ = run("cpu")
    with strict_cuda():
        outs, (mx, bm) = run("cuda")
        for o, e in zip(outs, ref):
            assert type(o._data) is StrictArray
            np.testing.assert_allclose(o.detach().cpu().numpy(), e.detach().numpy(), rtol=1e-12)
        assert str(bm) == str(_blocks_row_cpu())
        mx = mx.detach().cpu().numpy()
    # the max of the modified scores per query row (torch returns it on CUDA), -inf when masked
    q, k = (torch.tensor(arrs[n]) for n in "qk")
    rel = torch.tensor(arrs["rel"])
    qi, ki = torch.arange(5)[:, None], torch.arange(7)
    s = q @ k.transpose(-1, -2) / 2 + rel[qi - ki + 6]
    s = torch.where((qi != 2) & (ki <= qi + 2), s, _NEG_INF)
    np.testing.assert_allclose(mx, s.amax(-1).numpy(), rtol=1e-12)


def _blocks_row_cpu():
    return TF.create_block_mask(_mask_mod("row", {}), 2, 2, 5, 7, device="cpu", BLOCK_SIZE=2)
