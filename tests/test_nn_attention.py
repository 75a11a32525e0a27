"""Attention (issue 7): F.scaled_dot_product_attention, nn.attention (SDPBackend, sdpa_kernel,
causal biases), F.multi_head_attention_forward and nn.MultiheadAttention.

Parity with torch (outputs, attention weights, input and parameter gradients with a non-uniform
upstream gradient, float32 and float64), float64 gradcheck/gradgradcheck, torch's errors, dropout
statistics, names (spec 4.3) and the dispatch discipline of the registered attention ops.
"""

import re
import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, raises_like_torch, run_case, run_gradcheck
from nn_harness import check_module
from strict_backend import StrictArray, strict_cuda

try:
    import torch
    import torch.nn.attention.bias
except ImportError:  # the oracle is optional: parity checks skip, gradchecks still run
    torch = None


def _sdpa(m, *args, **kw):
    return m.nn.functional.scaled_dot_product_attention(*args, **kw)


def _const(m, arr, like):
    """A tensor of ``arr`` in framework ``m``; float arrays take the dtype of ``like``."""
    t = m.tensor(arr)
    return t.to(like.dtype) if t.is_floating_point() else t


_R = np.random.default_rng(3)
_BOOL_45 = _R.random((4, 5)) > 0.4
_BOOL_45[:, 0] = True  # every query sees a key
_ROW_MASKED = _BOOL_45.copy()
_ROW_MASKED[2] = False  # a fully masked query row: zeros (safe softmax), like torch
_FLOAT_345 = _R.standard_normal((3, 4, 5))
_BOOL_2145 = _R.random((2, 1, 4, 5)) > 0.3


def _sdpa_case(name, inputs, mask=None, **kw):
    """A Case running SDPA on (q, k, v, *rest) with keywords ``kw``; ``mask(m, q, *rest)``
    builds ``attn_mask`` in framework ``m``."""

    def fn(m, q, k, v, *rest):
        extra = {} if mask is None else {"attn_mask": mask(m, q, *rest)}
        return _sdpa(m, q, k, v, **kw, **extra)

    return Case(name, fn, inputs)


def _sdpa_cases(dt):
    def qkv(*shapes):  # specs of shape q, k, v (seeds 0, 1, 2)
        return [A(*s, dtype=dt, seed=i) for i, s in enumerate(shapes)]

    base = qkv((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6))
    causal = {"is_causal": True}
    rows = [
        ("sdpa_4d", base, {}),
        ("sdpa_3d", qkv((2, 4, 8), (2, 5, 8), (2, 5, 3)), {}),
        ("sdpa_2d", qkv((4, 8), (5, 8), (5, 3)), {}),
        ("sdpa_causal_L<S", base, causal),
        ("sdpa_causal_square", qkv((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 4)), causal),
        ("sdpa_causal_L>S", qkv((2, 6, 4), (2, 3, 4), (2, 3, 4)), causal),
        ("sdpa_bool_mask", base, {"mask": lambda m, q: m.tensor(_BOOL_45)}),
        ("sdpa_bool_mask_broadcast", base, {"mask": lambda m, q: m.tensor(_BOOL_2145)}),
        ("sdpa_bool_mask_masked_row", base, {"mask": lambda m, q: m.tensor(_ROW_MASKED)}),
        ("sdpa_float_mask", base, {"mask": lambda m, q: _const(m, _FLOAT_345, q)}),
        ("sdpa_float_mask_grad", [*base, A(3, 4, 5, dtype=dt, seed=3)],
         {"mask": lambda m, q, mask: mask}),
        ("sdpa_scale", base, {"scale": 0.3}),
        ("sdpa_dropout0", base, {"dropout_p": 0.0, "is_causal": True}),
        ("sdpa_gqa", qkv((2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 6)), {"enable_gqa": True}),
        ("sdpa_kv_broadcast", [base[0], *qkv((1, 3, 5, 8), (1, 3, 5, 8), (3, 5, 6))[1:]], {}),
        ("sdpa_causal_lower_right", base,
         {"mask": lambda m, q: m.nn.attention.bias.causal_lower_right(4, 5)}),
        ("sdpa_causal_upper_left", base,
         {"mask": lambda m, q: m.nn.attention.bias.causal_upper_left(4, 5)}),
    ]  # fmt: skip
    return [_sdpa_case(f"{name}[{dt}]", ins, **kw) for name, ins, kw in rows]


SDPA_CASES = _sdpa_cases("float32") + _sdpa_cases("float64")


@needs_torch
@pytest.mark.parametrize("case", SDPA_CASES, ids=str)
def test_sdpa_parity(case):
    run_case(case)


def _tiny(case):
    """The case on tiny float64 shapes for gradcheck."""
    ins = [A(*s.shape[:-2], min(s.shape[-2], 3), min(s.shape[-1], 3), dtype="float64", seed=s.seed)
           if isinstance(s, A) else s for s in case.inputs]  # fmt: skip
    return Case(case.name, case.fn, ins)


GRADCHECK = [
    c
    for c in _sdpa_cases("float64")
    if not any(s in c.name for s in ("mask", "lower_right", "upper_left", "gqa"))
]
_GC_QKV = [A(2, 3, 4, dtype="float64", seed=i) for i in range(2)] + [
    A(2, 3, 2, dtype="float64", seed=2)
]
GRADCHECK += [
    _sdpa_case("sdpa_float_mask_grad", [*_GC_QKV, A(3, 3, dtype="float64", seed=3)],
               mask=lambda m, q, mask: mask),
    _sdpa_case("sdpa_bool_mask", _GC_QKV, mask=lambda m, q: m.tensor(_BOOL_45[:3, :3])),
    _sdpa_case("sdpa_gqa", [A(1, 4, 2, 3, dtype="float64"), A(1, 2, 3, 3, dtype="float64", seed=1),
                            A(1, 2, 3, 2, dtype="float64", seed=2)], enable_gqa=True),
]  # fmt: skip


@pytest.mark.parametrize("case", GRADCHECK, ids=str)
def test_sdpa_gradcheck(case):
    c = case if "mask" in case.name or "gqa" in case.name else _tiny(case)
    run_gradcheck(c, gradgrad=True)


# ---------------------------------------------------------------------- errors
def _qkv(m, q=(2, 3, 4, 8), k=(2, 3, 5, 8), v=(2, 3, 5, 6), dtype=None):
    return [m.zeros(*s) if dtype is None else m.zeros(*s, dtype=dtype) for s in (q, k, v)]


SDPA_ERRORS = [
    ("dims", lambda m: _sdpa(m, *_qkv(m, q=(8,))), RuntimeError,
     ("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1 "
     "key.dim: 4 and value.dim: 4 instead.")),
    ("dtypes", lambda m: _sdpa(m, m.zeros(2, 4, 8, dtype=m.float64), m.zeros(2, 5, 8),
                              m.zeros(2, 5, 6)), RuntimeError,
     ("Expected query, key, and value to have the same dtype, but got query.dtype: double "
     "key.dtype: float and value.dtype: float instead.")),
    ("mask_dtype", lambda m: _sdpa(m, *_qkv(m), attn_mask=m.zeros(4, 5, dtype=m.int64)),
     RuntimeError, ("Expected attn_mask dtype to be bool or float or to match query dtype, but "
     "got attn_mask.dtype: long int and  query.dtype: float instead.")),
    ("mask_float_dtype", lambda m: _sdpa(m, *_qkv(m), attn_mask=m.zeros(4, 5, dtype=m.float64)),
     RuntimeError, "attn_mask.dtype: double and  query.dtype: float instead."),
    ("key_features", lambda m: _sdpa(m, *_qkv(m, k=(2, 3, 5, 7))), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [6, 8] but got: [6, 7]."),
    ("value_length", lambda m: _sdpa(m, *_qkv(m, v=(2, 3, 4, 6))), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [6, 5] but got: [6, 4]."),
    ("mask_shape", lambda m: _sdpa(m, *_qkv(m), attn_mask=m.zeros(3, 5)), RuntimeError,
     "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 2"),
    ("gqa_heads", lambda m: _sdpa(m, *_qkv(m, k=(2, 2, 5, 8), v=(2, 2, 5, 6)), enable_gqa=True),
     RuntimeError, "Number of heads in key and value must divide the number of heads in"),
    ("dropout_p", lambda m: _sdpa(m, *_qkv(m), dropout_p=1.5), RuntimeError,
     "dropout probability has to be between 0 and 1, but got 1.5"),
]  # fmt: skip


# ---------------------------------------------------------------------- dropout, kernels, bias
def test_sdpa_dropout_statistics():
    # uniform attention over S keys of value 1: every output is 1 without dropout; with dropout
    # each output is a mean of S kept/(1-p) weights: mean 1, a spread that shrinks with S
    ember.manual_seed(0)
    q = ember.zeros(2, 4, 64, 8)
    k = ember.zeros(2, 4, 512, 8)
    v = ember.ones(2, 4, 512, 4)
    out = _sdpa(ember, q, k, v, dropout_p=0.3).numpy()
    assert abs(out.mean() - 1.0) < 0.01
    assert out.std() > 0.005  # something was dropped
    assert not np.allclose(out, _sdpa(ember, q, k, v, dropout_p=0.3).numpy())  # fresh masks
    np.testing.assert_allclose(_sdpa(ember, q, k, v, dropout_p=0.0).numpy(), 1.0, rtol=1e-6)
    # gradients flow through the dropped weights
    qq = ember.randn(2, 2, 8, 4, requires_grad=True)
    _sdpa(
        ember, qq, ember.randn(2, 2, 8, 4), ember.randn(2, 2, 8, 4), dropout_p=0.5
    ).sum().backward()
    assert qq.grad is not None and np.isfinite(qq.grad.numpy()).all()


@needs_torch
def test_sdpa_kernel_and_backends():
    att = ember.nn.attention
    assert [b.name for b in att.SDPBackend] == [
        b.name for b in torch.nn.attention.SDPBackend.__members__.values()
    ]
    assert [int(b) for b in att.SDPBackend] == [
        b.value for b in torch.nn.attention.SDPBackend.__members__.values()
    ]
    assert repr(att.SDPBackend.MATH) == repr(torch.nn.attention.SDPBackend.MATH)
    q, k, v = (ember.randn(2, 3, 4) for _ in range(3))
    ref = _sdpa(ember, q, k, v)
    with att.sdpa_kernel(att.SDPBackend.MATH):
        assert att._cur_sdpa_kernel_backends() == [att.SDPBackend.MATH]
        np.testing.assert_allclose(_sdpa(ember, q, k, v).numpy(), ref.numpy())
    with att.sdpa_kernel([att.SDPBackend.FLASH_ATTENTION, att.SDPBackend.MATH]):
        pass
    assert len(att._cur_sdpa_kernel_backends()) == 5
    msg = "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got int"
    for m in (ember, torch):
        with pytest.raises(AssertionError, match=re.escape(msg)), m.nn.attention.sdpa_kernel(3):
            pass


@needs_torch
def test_causal_bias():
    b = ember.nn.attention.bias
    tb = torch.nn.attention.bias
    assert [(v.name, int(v)) for v in b.CausalVariant] == [
        (v.name, int(v)) for v in tb.CausalVariant
    ]
    for q, kv in [(3, 5), (4, 4)]:
        for fn in ("causal_upper_left", "causal_lower_right"):
            e, t = getattr(b, fn)(q, kv), getattr(tb, fn)(q, kv)
            np.testing.assert_array_equal(e._materialize().numpy(), t._materialize().numpy())
            assert (e.seq_len_q, e.seq_len_kv, int(e.variant)) == (
                t.seq_len_q,
                t.seq_len_kv,
                int(t.variant),
            )
            assert isinstance(e, ember.Tensor) and tuple(e.shape) == (q, kv)
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        b.causal_lower_right(5, 3)
    with pytest.raises(AssertionError, match="variant must be a CausalVariant, got int"):
        b.CausalBias(3, 5, 5)


# ---------------------------------------------------------------------- names (spec 4.3)
def test_sdpa_names():
    q = ember.randn(2, 4, 8, names=("N", "T", "E"), requires_grad=True)
    k = ember.randn(2, 5, 8, names=("N", "S", "E"))
    v = ember.randn(2, 5, 8, names=("N", "S", "E"))
    out = _sdpa(ember, q, k, v, is_causal=False)
    assert out.names == ("N", "T", "E")
    out.sum().backward()
    assert q.grad.names == ("N", "T", "E")
    unnamed = _sdpa(ember, q.rename(None), k.rename(None), v.rename(None))
    np.testing.assert_allclose(out.detach().rename(None).numpy(), unnamed.detach().numpy())
    with pytest.raises(RuntimeError, match=r"query.*\['N', 'T', 'E'\].*key.*\['N', 'S', 'F'\]"):
        _sdpa(ember, q, k.rename("N", "S", "F"), v)
    # an unnamed feature dim is a wildcard
    assert _sdpa(ember, q, k.rename(None), v).names == ("N", "T", "E")


# ---------------------------------------------------------------------- dispatch discipline
@pytest.mark.parametrize("masked", [False, True], ids=["plain", "masked"])
def test_attention_ops_dispatch(masked):
    """The registered attention ops (forward and both backward paths) compute on the device."""
    from ember.nn._attention import _attention_probs, _attention_probs_masked, _attention_values

    r = np.random.default_rng(0)
    arrs = [r.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (3, 5))]

    def run(cuda):
        dev = "cuda" if cuda else None
        q = ember.tensor(arrs[0], device=dev, requires_grad=True)
        k = ember.tensor(arrs[1], device=dev, requires_grad=True)
        if masked:
            mb = ember.tensor(arrs[2] > 0, device=dev)
            mf = ember.tensor(arrs[2], device=dev, requires_grad=True)
            p = _attention_probs_masked(q, k, mb, 0.5) + _attention_probs_masked(q, k, mf, 0.5)
            leaves = [q, k, mf]
        else:
            p = _attention_probs(q, k, 0.5, True)
            leaves = [q, k]
        w = ember.tensor(np.linspace(0.5, 1.5, p.numel()).reshape(p.shape), device=dev)
        gs = ember.autograd.grad((p * w).sum(), leaves, create_graph=True)
        gg = ember.autograd.grad(sum((g * g).sum() for g in gs), leaves[:2])
        return [p, *gs, *gg]

    ref = run(False)
    with strict_cuda():
        outs = run(True)
        for o, e in zip(outs, ref):
            assert type(o._data) is StrictArray
            np.testing.assert_allclose(
                o.detach().cpu()._data, e.detach()._data, rtol=1e-7, atol=1e-9
            )
    # and the fast (no create_graph) backward on the device
    with strict_cuda():
        q = ember.tensor(arrs[0], device="cuda", requires_grad=True)
        k = ember.tensor(arrs[1], device="cuda", requires_grad=True)
        mf = ember.tensor(arrs[2], device="cuda", requires_grad=True)
        v = ember.tensor(arrs[1], device="cuda", requires_grad=True)
        p = _attention_probs(q, k, 0.5, True) + _attention_probs_masked(q, k, mf, 0.5)
        _attention_values(p, v).sum().backward()
        for t in (q, k, mf, v):
            assert type(t.grad._data) is StrictArray


# ---------------------------------------------------------------------- MultiheadAttention
def _mha_call(fkw):
    def call(mod, q, k, v):
        m = ember if isinstance(mod, ember.nn.Module) else torch
        kw = {n: (_const(m, a, q) if isinstance(a, np.ndarray) else a) for n, a in fkw.items()}
        out, w = mod(q, k, v, **kw)
        return (out, w) if w is not None else out

    return call


_KPM = _R.random((2, 5)) > 0.7
_KPM[:, 0] = False
_AM = _R.random((4, 5)) > 0.8
_AM[:, 0] = False
MHA_ROWS = [
    # name, ctor kwargs, forward kwargs, batch_first, shapes (query, key, value)
    ("default", {}, {}, False, [(4, 2, 8)]),
    ("batch_first", {}, {}, True, [(2, 4, 8)]),
    ("cross_attention", {}, {}, True, [(2, 4, 8), (2, 5, 8), (2, 5, 8)]),
    ("need_weights_false", {}, {"need_weights": False}, True, [(2, 4, 8)]),
    ("per_head_weights", {}, {"average_attn_weights": False}, False, [(4, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ("kdim_vdim", {"kdim": 5, "vdim": 3}, {}, True, [(2, 4, 8), (2, 5, 5), (2, 5, 3)]),
    ("add_bias_kv", {"add_bias_kv": True}, {}, False, [(4, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ("add_zero_attn", {"add_zero_attn": True}, {}, False, [(4, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ("bias_kv_zero_attn_masks", {"add_zero_attn": True, "add_bias_kv": True},
     {"key_padding_mask": _KPM, "attn_mask": _AM}, False, [(4, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ("bool_kpm", {}, {"key_padding_mask": _KPM}, True, [(2, 4, 8), (2, 5, 8), (2, 5, 8)]),
    ("bool_kpm_no_weights", {}, {"key_padding_mask": _KPM, "need_weights": False}, True,
     [(2, 4, 8), (2, 5, 8), (2, 5, 8)]),
    ("float_kpm", {}, {"key_padding_mask": _R.standard_normal((2, 5))}, True,
     [(2, 4, 8), (2, 5, 8), (2, 5, 8)]),
    ("attn_mask_2d_bool", {}, {"attn_mask": _AM}, True, [(2, 4, 8), (2, 5, 8), (2, 5, 8)]),
    ("attn_mask_3d_float", {}, {"attn_mask": _R.standard_normal((4, 4, 5))}, True,
     [(2, 4, 8), (2, 5, 8), (2, 5, 8)]),
    ("float_masks_both", {}, {"attn_mask": _R.standard_normal((4, 5)),
                              "key_padding_mask": _R.standard_normal((2, 5))}, False,
     [(4, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ("bool_masks_both_no_weights", {}, {"attn_mask": _AM, "key_padding_mask": _KPM,
                                        "need_weights": False}, False,
     [(4, 2, 8), (5, 2, 8), (5, 2, 8)]),
    ("causal_hint", {}, {"attn_mask": np.triu(np.ones((4, 4), bool), 1), "is_causal": True,
                         "need_weights": False}, True, [(2, 4, 8)]),
    ("causal_hint_weights", {}, {"attn_mask": np.triu(np.ones((4, 4), bool), 1),
                                 "is_causal": True}, True, [(2, 4, 8)]),
    ("unbatched", {}, {}, False, [(4, 8), (5, 8), (5, 8)]),
    ("unbatched_batch_first_masks", {}, {"key_padding_mask": _KPM[0],
                                         "attn_mask": _R.standard_normal((2, 4, 5))}, True,
     [(4, 8), (5, 8), (5, 8)]),
    ("no_bias", {"bias": False}, {}, True, [(2, 4, 8), (2, 5, 8), (2, 5, 8)]),
    ("key_is_value", {}, {}, True, [(2, 4, 8), (2, 5, 8)]),
    ("key_is_value_seq_first", {"add_bias_kv": True}, {}, False, [(4, 2, 8), (5, 2, 8)]),
    ("fully_padded_no_weights", {}, {"key_padding_mask": np.array([[True] * 5, [False] * 5]),
                                     "need_weights": False}, True, [(2, 4, 8), (2, 5, 8)]),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("row", MHA_ROWS, ids=lambda r: r[0])
def test_mha_parity(row):
    _, ckw, fkw, bf, shapes = row
    inner = _mha_call(fkw)
    if len(shapes) == 1:  # self-attention: one tensor passed three times
        ins = [A(*shapes[0])]

        def call(mod, x):
            return inner(mod, x, x, x)
    elif len(shapes) == 2:  # key is value
        ins = [A(*shapes[0]), A(*shapes[1], seed=1)]

        def call(mod, q, kv):
            return inner(mod, q, kv, kv)
    else:
        ins = [A(*s, seed=i) for i, s in enumerate(shapes)]
        call = _mha_call(fkw)
    check_module(lambda m: m.nn.MultiheadAttention(8, 2, batch_first=bf, **ckw), ins, call=call)


@needs_torch
def test_mha_state_dict_layout_and_init():
    for kw in ({}, {"kdim": 5, "vdim": 3, "add_bias_kv": True}, {"bias": False}):
        e, t = ember.nn.MultiheadAttention(8, 2, **kw), torch.nn.MultiheadAttention(8, 2, **kw)
        assert [(k, tuple(v.shape)) for k, v in e.state_dict().items()] == [
            (k, tuple(v.shape)) for k, v in t.state_dict().items()
        ]
        assert [k for k, _ in e.named_parameters()] == [k for k, _ in t.named_parameters()]
    e = ember.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    assert type(e.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(e.out_proj, ember.nn.Linear)
    assert ember.nn.modules.activation.MultiheadAttention is ember.nn.MultiheadAttention
    assert not e.in_proj_bias.detach().numpy().any() and not e.out_proj.bias.detach().numpy().any()
    bound = np.sqrt(6 / (64 + 192))  # xavier_uniform of (3E, E)
    w = e.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.1 * bound
    assert e.bias_k.shape == (1, 1, 64) and e.bias_k.detach().numpy().std() > 0
    assert (e.head_dim, e._qkv_same_embed_dim, e.batch_first) == (16, True, False)
    assert repr(e) == repr(torch.nn.MultiheadAttention(64, 4, add_bias_kv=True)).replace(
        "torch.", ""
    )


@needs_torch
def test_mha_load_torch_state_dict_same_outputs():
    torch.manual_seed(1)
    t = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    e = ember.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 6, 16)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(6)
    with torch.no_grad():
        to, tw = t(*(torch.tensor(x),) * 3, attn_mask=mask)
    eo, ew = e(*(ember.tensor(x),) * 3, attn_mask=ember.tensor(mask.numpy()))
    np.testing.assert_allclose(eo.detach().numpy(), to.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ew.detach().numpy(), tw.numpy(), rtol=1e-5, atol=1e-6)


def test_mha_dropout_train_and_eval():
    ember.manual_seed(0)
    m = ember.nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    x = ember.randn(2, 16, 8)
    a, _ = m(x, x, x)
    b, _ = m(x, x, x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    m.eval()
    a, _ = m(x, x, x)
    b, _ = m(x, x, x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_mha_gradcheck():
    ember.manual_seed(0)
    m = ember.nn.MultiheadAttention(4, 2, add_bias_kv=True, batch_first=True).double()
    mask = ember.tensor(np.array([[False, True, False], [False, False, True]]))
    params = list(m.parameters())

    def fn(x, *ps):
        return m(x, x, x, key_padding_mask=mask)[0]

    x = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(fn, [x, *params], atol=1e-5, rtol=1e-3)
    assert ember.autograd.gradgradcheck(lambda x: m(x, x, x)[0], [x], atol=1e-4, rtol=1e-3)


def _mha_mod(m, **kw):
    return m.nn.MultiheadAttention(8, 2, **kw)


MHA_ERRORS = [
    ("not_divisible", lambda m: m.nn.MultiheadAttention(8, 3), AssertionError,
     "embed_dim must be divisible by num_heads"),
    ("zero_heads", lambda m: m.nn.MultiheadAttention(8, 0), ValueError,
     "embed_dim and num_heads must be greater than 0, got embed_dim=8 and num_heads=0 instead"),
    ("attn_mask_2d", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 8),) * 3, attn_mask=m.zeros(3, 4)),
     RuntimeError, "The shape of the 2D attn_mask is "),
    ("attn_mask_3d", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 8),) * 3, attn_mask=m.zeros(2, 4, 4)),
     RuntimeError, "The shape of the 3D attn_mask is "),
    ("attn_mask_4d", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 8),) * 3,
                                           attn_mask=m.zeros(1, 2, 4, 4)), AssertionError,
     ("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found 4-D "
     "tensor instead")),
    ("kpm_shape", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 8),) * 3,
                                        key_padding_mask=m.zeros(2, 3, dtype=m.bool)),
     AssertionError, "Expected key_padded_mask.shape[1] to be 4, but got 3"),
    ("kpm_batch", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 8),) * 3,
                                        key_padding_mask=m.zeros(3, 4, dtype=m.bool)),
     AssertionError, "Expected key_padded_mask.shape[0] to be 2, but got 3"),
    ("kpm_dims", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 8),) * 3,
                                       key_padding_mask=m.zeros(2, 4, 1, dtype=m.bool)),
     AssertionError, ("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
     "but found 3-D tensor instead")),
    ("key_dims", lambda m: _mha_mod(m)(m.zeros(4, 2, 8), m.zeros(4, 8), m.zeros(4, 8)),
     AssertionError, ("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
     "2-D and 2-D tensors respectively")),
    ("query_dims", lambda m: _mha_mod(m)(*(m.zeros(8),) * 3), AssertionError,
     "query should be unbatched 2D or batched 3D tensor but received 1-D query tensor"),
    ("unbatched_kpm", lambda m: _mha_mod(m)(*(m.zeros(4, 8),) * 3,
                                            key_padding_mask=m.zeros(2, 4, dtype=m.bool)),
     AssertionError, ("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or "
     "1-D but found 2-D tensor instead")),
    ("unbatched_mask3d", lambda m: _mha_mod(m)(*(m.zeros(4, 8),) * 3,
                                               attn_mask=m.zeros(3, 4, 4)), AssertionError,
     "Expected `attn_mask` shape to be (2, 4, 4) but got "),
    ("embed_dim", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 6),) * 3), AssertionError,
     "was expecting embedding dimension of 8, but got 6"),
    ("key_value_shape", lambda m: _mha_mod(m)(m.zeros(4, 2, 8), m.zeros(5, 2, 8),
                                              m.zeros(6, 2, 8)), AssertionError,
     "key shape "),
    ("causal_needs_mask", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 8),) * 3, is_causal=True),
     RuntimeError, ("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
     "module method `generate_square_subsequent_mask` to create this mask.")),
    ("mask_int", lambda m: _mha_mod(m)(*(m.zeros(4, 2, 8),) * 3,
                                       attn_mask=m.zeros(4, 4, dtype=m.int64)), AssertionError,
     "only bool and floating types of attn_mask are supported"),
]  # fmt: skip


@pytest.mark.parametrize("row", SDPA_ERRORS + MHA_ERRORS, ids=lambda r: r[0])
def test_errors(row):
    """SDPA's and multi-head attention's errors: torch's exception types and messages."""
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


@needs_torch
def test_mha_mismatched_mask_types_warn():
    for m in (ember, torch):
        mod = _mha_mod(m)
        x = m.zeros(4, 2, 8)
        with pytest.warns(
            UserWarning, match="Support for mismatched key_padding_mask and attn_mask"
        ):
            mod(x, x, x, key_padding_mask=m.zeros(2, 4, dtype=m.bool), attn_mask=m.zeros(4, 4))


@needs_torch
def test_functional_mha_parity():
    r = np.random.default_rng(5)
    E, H = 8, 2
    arrs = {n: r.standard_normal(s).astype(np.float64) for n, s in
            [("q", (4, 2, E)), ("k", (5, 2, E)), ("w", (3 * E, E)), ("b", (3 * E,)),
             ("ow", (E, E)), ("ob", (E,)), ("sk", (2 * H, 5, E // H))]}  # fmt: skip

    def run(m):
        t = {n: m.tensor(a, requires_grad=True) for n, a in arrs.items()}
        out, w = m.nn.functional.multi_head_attention_forward(
            t["q"], t["k"], t["k"], E, H, t["w"], t["b"], None, None, False, 0.0, t["ow"],
            t["ob"], training=True, static_k=t["sk"], average_attn_weights=False,
        )  # fmt: skip
        (out.sum() + (w * w).sum()).backward()
        return [out, w] + [t[n].grad for n in arrs]

    for e, t in zip(run(ember), run(torch)):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_mha_names():
    m = ember.nn.MultiheadAttention(8, 2, batch_first=True)
    x = ember.randn(2, 4, 8, names=("N", "T", "E"), requires_grad=True)
    out, _w = m(x, x, x)
    assert out.names == ("N", "T", "E")
    out.sum().backward()
    assert x.grad.names == ("N", "T", "E")
    assert m.in_proj_weight.grad.names == m.in_proj_weight.names
    with pytest.raises(RuntimeError, match=r"feature dims of query and key"):
        m(x, x.rename("N", "T", "F"), x.rename("N", "T", "F"))
    unb = ember.nn.MultiheadAttention(8, 2)
    xu = ember.randn(4, 8, names=("T", "E"))
    assert unb(xu, xu, xu)[0].names == ("T", "E")


def test_warnings_are_not_raised_for_plain_use():
    m = ember.nn.MultiheadAttention(8, 2, batch_first=True)
    x = ember.randn(2, 4, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(x, x, x, attn_mask=ember.nn.Transformer.generate_square_subsequent_mask(4))


@needs_torch
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_sdpa_half_precision(dt):
    # computed in float32 inside, rounded back like torch: values and grads within the dtype's eps
    tol = 2e-2 if dt == "bfloat16" else 3e-3
    r = np.random.default_rng(0)
    arrs = [r.standard_normal((2, 3, 4, 8)).astype(np.float32) for _ in range(3)]
    mask = r.random((4, 4)) > 0.3
    mask[:, 0] = True
    for kw in ({"is_causal": True}, {"attn_mask": mask}):
        outs = []
        for m in (ember, torch):
            ins = [m.tensor(a).to(getattr(m, dt)).requires_grad_() for a in arrs]
            mk = {k: (m.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
            out = _sdpa(m, *ins, **mk)
            out.backward(m.ones_like(out))
            assert str(out.dtype).endswith(dt) and str(ins[0].grad.dtype).endswith(dt)
            outs.append([out.detach().float().numpy()] + [t.grad.float().numpy() for t in ins])
        for e, t in zip(*outs):
            np.testing.assert_allclose(e, t, atol=tol, rtol=tol)


@needs_torch
def test_mha_merge_masks_like_torch():
    r = np.random.default_rng(0)
    am, kpm = r.random((4, 4)) > 0.5, r.random((2, 4)) > 0.5
    fam, fk = r.random((4, 4, 4)).astype(np.float32), r.random((2, 4)).astype(np.float32)
    q = np.zeros((2, 4, 8), np.float32)
    for a, k in [(am, None), (None, kpm), (am, kpm), (fam, None), (fam, fk), (None, None)]:
        res = []
        for m in (ember, torch):
            mod = m.nn.MultiheadAttention(8, 2, batch_first=True)
            res.append(
                mod.merge_masks(
                    None if a is None else m.tensor(a),
                    None if k is None else m.tensor(k),
                    m.tensor(q),
                )
            )
        (em, et), (tm, tt) = res
        assert et == tt
        if tm is None:
            assert em is None
        else:
            assert str(em.dtype).split(".")[-1] == str(tm.dtype).split(".")[-1]
            np.testing.assert_array_equal(em.numpy(), tm.numpy())


def test_blas_threads_restored():
    # the per-head products run with one BLAS thread; the process setting is restored after
    before = ember.get_num_threads()
    q = ember.randn(2, 4, 16, 8, requires_grad=True)
    _sdpa(ember, q, q, q, is_causal=True).sum().backward()
    assert ember.get_num_threads() == before
