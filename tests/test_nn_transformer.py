"""Transformer layers (issue 7): TransformerEncoderLayer/DecoderLayer, TransformerEncoder/Decoder
and Transformer against torch (outputs, input and every parameter gradient, float32/float64),
state_dict layout and loading, masks and is_causal, errors, warnings and names (spec 4.3)."""

import warnings

import ember
import numpy as np
import pytest
from harness import A, needs_torch, raises_like_torch
from nn_harness import check_module, copy_state

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None


D, H, FF = 8, 2, 16
_R = np.random.default_rng(11)
_KPM = _R.random((2, 5)) > 0.7
_KPM[:, 0] = False
_BOOL_MASK = np.triu(np.ones((5, 5), bool), 1)
_FLOAT_MASK = _R.standard_normal((5, 5))


def _masks(m, x, spec):
    """Forward kwargs from a spec of numpy masks (float masks take x's dtype)."""
    out = {}
    for k, v in spec.items():
        if isinstance(v, np.ndarray):
            t = m.tensor(v)
            out[k] = t.to(x.dtype) if t.is_floating_point() else t
        elif v == "causal":
            out[k] = m.nn.Transformer.generate_square_subsequent_mask(5).to(x.dtype)
        else:
            out[k] = v
    return out


ENCODER_ROWS = [
    # name, layer kwargs, forward mask spec, batch_first
    ("post_norm", {}, {}, False),
    ("pre_norm", {"norm_first": True}, {}, False),
    ("batch_first_gelu", {"activation": "gelu"}, {}, True),
    ("pre_norm_gelu_bf", {"activation": "gelu", "norm_first": True}, {}, True),
    ("callable_activation", {"activation": "tanh"}, {}, True),
    ("causal_float_mask", {}, {"src_mask": "causal"}, True),
    ("causal_hint", {"norm_first": True}, {"src_mask": "causal", "is_causal": True}, True),
    ("bool_mask", {}, {"src_mask": _BOOL_MASK}, False),
    ("float_mask", {}, {"src_mask": _FLOAT_MASK}, True),
    ("key_padding", {}, {"src_key_padding_mask": _KPM}, True),
    ("mask_and_padding", {"norm_first": True},
     {"src_mask": _BOOL_MASK, "src_key_padding_mask": _KPM}, True),
    ("no_bias_eps", {"bias": False, "layer_norm_eps": 1e-3}, {}, True),
]  # fmt: skip


def _act(m, kw):
    kw = dict(kw)
    if kw.get("activation") == "tanh":  # a callable
        kw["activation"] = m.tanh
    return kw


@needs_torch
@pytest.mark.parametrize("row", ENCODER_ROWS, ids=lambda r: r[0])
def test_encoder_layer_parity(row):
    _, kw, spec, bf = row
    shape = (2, 5, D) if bf else (5, 2, D)

    def ctor(m):
        return m.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=bf, **_act(m, kw))

    def call(mod, x):
        m = ember if isinstance(mod, ember.nn.Module) else torch
        return mod(x, **_masks(m, x, spec))

    check_module(ctor, [A(*shape)], call=call)


@needs_torch
def test_encoder_layer_unbatched():
    check_module(
        lambda m: m.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, norm_first=True),
        [A(5, D)],
    )


DECODER_ROWS = [
    ("post_norm", {}, {}, False),
    ("pre_norm_bf", {"norm_first": True}, {}, True),
    ("tgt_causal", {}, {"tgt_mask": "causal", "tgt_is_causal": True}, True),
    ("all_masks", {"activation": "gelu"},
     {"tgt_mask": _BOOL_MASK, "memory_mask": _FLOAT_MASK[:, :4],
      "tgt_key_padding_mask": _KPM, "memory_key_padding_mask": _KPM[:, :4]}, True),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("row", DECODER_ROWS, ids=lambda r: r[0])
def test_decoder_layer_parity(row):
    _, kw, spec, bf = row
    shapes = [(2, 5, D), (2, 4, D)] if bf else [(5, 2, D), (4, 2, D)]

    def ctor(m):
        return m.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=bf, **kw)

    def call(mod, tgt, mem):
        m = ember if isinstance(mod, ember.nn.Module) else torch
        return mod(tgt, mem, **_masks(m, tgt, spec))

    check_module(ctor, [A(*shapes[0]), A(*shapes[1], seed=1)], call=call)


@needs_torch
@pytest.mark.parametrize("norm", [False, True], ids=["no_norm", "final_norm"])
def test_encoder_stack_parity(norm):
    def ctor(m):
        layer = m.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True)
        n = m.nn.LayerNorm(D) if norm else None
        return m.nn.TransformerEncoder(layer, 2, norm=n, enable_nested_tensor=False)

    def call(mod, x):
        m = ember if isinstance(mod, ember.nn.Module) else torch
        return mod(x, mask=m.nn.Transformer.generate_square_subsequent_mask(5).to(x.dtype),
                   src_key_padding_mask=m.tensor(_KPM))  # fmt: skip

    check_module(ctor, [A(2, 5, D)], call=call if norm else None)


@needs_torch
def test_decoder_stack_parity():
    def ctor(m):
        layer = m.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, norm_first=True)
        return m.nn.TransformerDecoder(layer, 2, norm=m.nn.LayerNorm(D))

    def call(mod, tgt, mem):
        m = ember if isinstance(mod, ember.nn.Module) else torch
        mask = m.nn.Transformer.generate_square_subsequent_mask(5).to(tgt.dtype)
        return mod(tgt, mem, tgt_mask=mask, memory_key_padding_mask=m.tensor(_KPM[:, :4]))

    check_module(ctor, [A(5, 2, D), A(4, 2, D, seed=1)], call=call)


@needs_torch
@pytest.mark.parametrize("bf", [False, True], ids=["seq_first", "batch_first"])
def test_transformer_parity(bf):
    def ctor(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the nested-tensor notice
            return m.nn.Transformer(D, H, 1, 1, FF, dropout=0.0, batch_first=bf)

    def call(mod, src, tgt):
        m = ember if isinstance(mod, ember.nn.Module) else torch
        mask = m.nn.Transformer.generate_square_subsequent_mask(5).to(src.dtype)
        return mod(src, tgt, tgt_mask=mask, src_key_padding_mask=m.tensor(_KPM[:, :4]))

    s, t = ((2, 4, D), (2, 5, D)) if bf else ((4, 2, D), (5, 2, D))
    check_module(ctor, [A(*s), A(*t, seed=1)], call=call)


# ---------------------------------------------------------------------- state dicts, init
@needs_torch
def test_state_dict_keys_and_loading_gives_identical_outputs():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.nn.Transformer(16, 4, 2, 2, 32, dropout=0.1, norm_first=True).eval()
        e = ember.nn.Transformer(16, 4, 2, 2, 32, dropout=0.1, norm_first=True).eval()
    assert [(k, tuple(v.shape)) for k, v in e.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in t.state_dict().items()
    ]
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    r = np.random.default_rng(0)
    src = r.standard_normal((6, 3, 16)).astype(np.float32)
    tgt = r.standard_normal((5, 3, 16)).astype(np.float32)
    tm = torch.nn.Transformer.generate_square_subsequent_mask(5)
    with torch.no_grad():
        want = t(torch.tensor(src), torch.tensor(tgt), tgt_mask=tm).numpy()
    got = e(ember.tensor(src), ember.tensor(tgt), tgt_mask=ember.tensor(tm.numpy()))
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-4, atol=1e-5)


def test_transformer_init_is_xavier():
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ember.nn.Transformer(32, 4, 1, 1, 64)
    w = t.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6 / (32 + 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert t.d_model == 32 and t.nhead == 4 and t.batch_first is False
    layers = t.encoder.layers
    assert layers[0] is not None and len(layers) == 1


@needs_torch
def test_generate_square_subsequent_mask():
    for sz in (1, 4):
        e = ember.nn.Transformer.generate_square_subsequent_mask(sz)
        t = torch.nn.Transformer.generate_square_subsequent_mask(sz)
        assert e.dtype == ember.float32
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    e = ember.nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
    assert e.dtype == ember.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inst = ember.nn.Transformer(8, 2, 1, 1, 16)
    np.testing.assert_array_equal(inst.generate_square_subsequent_mask(3).numpy(), e.numpy())


def test_causal_mask_detection():
    from ember.nn.modules.transformer import _detect_is_causal_mask

    f = ember.nn.Transformer.generate_square_subsequent_mask(4)
    assert _detect_is_causal_mask(f) is True
    assert _detect_is_causal_mask(ember.tensor(np.triu(np.ones((4, 4), bool), 1))) is True
    assert _detect_is_causal_mask(ember.zeros(4, 4)) is False
    assert _detect_is_causal_mask(f, size=3) is False
    assert _detect_is_causal_mask(ember.zeros(4, 4), is_causal=True) is True
    assert _detect_is_causal_mask(None) is False
    # a detected causal mask gives the same result as reading it
    ember.manual_seed(0)
    layer = ember.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True)
    enc = ember.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    x = ember.randn(2, 4, D)
    a = enc(x, mask=f)  # detected: runs as is_causal
    b = enc(x, mask=f, is_causal=False)  # reads the mask
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------- errors and warnings
def _layer(m, **kw):
    return m.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, **kw)


def _tr(m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return m.nn.Transformer(D, H, 1, 1, FF, dropout=0.0)


ERRORS = [
    ("activation", lambda m: _layer(m, activation="tanh"), RuntimeError,
     "activation should be relu/gelu, not tanh"),
    ("batch_number", lambda m: _tr(m)(m.zeros(4, 2, D), m.zeros(5, 3, D)), RuntimeError,
     "the batch number of src and tgt must be equal"),
    ("feature_number", lambda m: _tr(m)(m.zeros(4, 2, D), m.zeros(5, 2, D + 1)), RuntimeError,
     "the feature number of src and tgt must be equal to d_model"),
    ("heads", lambda m: m.nn.TransformerEncoderLayer(D, 3), AssertionError,
     "embed_dim must be divisible by num_heads"),
    ("mask_shape", lambda m: _layer(m)(m.zeros(4, 2, D), src_mask=m.zeros(3, 4)), RuntimeError,
     "The shape of the 2D attn_mask is "),
    ("padding_type", lambda m: _layer(m)(m.zeros(4, 2, D),
                                         src_key_padding_mask=m.zeros(2, 4, dtype=m.int64)),
     AssertionError, "only bool and floating types of src_key_padding_mask are supported"),
    ("encoder_mask_type", lambda m: m.nn.TransformerEncoder(_layer(m), 1,
                                                            enable_nested_tensor=False)(
        m.zeros(4, 2, D), mask=m.zeros(4, 4, dtype=m.int64)), AssertionError,
     "only bool and floating types of mask are supported"),
    ("causal_without_mask", lambda m: _layer(m)(m.zeros(4, 2, D), is_causal=True), RuntimeError,
     "Need attn_mask if specifying the is_causal hint."),
]  # fmt: skip


@pytest.mark.parametrize("row", ERRORS, ids=lambda r: r[0])
def test_errors(row):
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


def _nested_warnings(m, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.nn.TransformerEncoder(_layer(m, **kw), 1)
    return [str(x.message) for x in w if "nested" in str(x.message)]


@needs_torch
@pytest.mark.parametrize(
    "kw",
    [{}, {"batch_first": True}, {"batch_first": True, "norm_first": True},
     {"batch_first": True, "bias": False}, {"batch_first": True, "activation": "gelu"}],
    ids=str,
)  # fmt: skip
def test_nested_tensor_warning_like_torch(kw):
    assert _nested_warnings(ember, **kw) == _nested_warnings(torch, **kw)


# ---------------------------------------------------------------------- gradcheck, names
def test_encoder_layer_gradcheck():
    ember.manual_seed(0)
    for norm_first in (False, True):
        layer = ember.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, batch_first=True,
                                                 norm_first=norm_first).double()  # fmt: skip
        mask = ember.nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
        x = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
        params = list(layer.parameters())

        def fn(x, *ps, layer=layer, mask=mask):
            return layer(x, src_mask=mask, is_causal=True)

        assert ember.autograd.gradcheck(fn, [x, *params], atol=1e-5, rtol=1e-3)


def test_decoder_layer_gradcheck():
    ember.manual_seed(0)
    layer = ember.nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0).double()
    tgt = ember.randn(3, 2, 4, dtype=ember.float64, requires_grad=True)
    mem = ember.randn(2, 2, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t, m: layer(t, m), [tgt, mem], atol=1e-5, rtol=1e-3)


def test_names_kept_through_layers():
    ember.manual_seed(0)
    layer = ember.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True)
    enc = ember.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    x = ember.randn(2, 5, D, names=("N", "T", "E"), requires_grad=True)
    mask = ember.nn.Transformer.generate_square_subsequent_mask(5)
    out = enc(x, mask=mask)
    assert out.names == ("N", "T", "E")
    unnamed = enc(x.detach().rename(None), mask=mask)
    np.testing.assert_allclose(out.detach().rename(None).numpy(), unnamed.detach().numpy(),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    out.sum().backward()
    assert x.grad.names == ("N", "T", "E")
    for _, p in enc.named_parameters():
        assert p.grad is not None and p.grad.names == p.names
    dec = ember.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0)
    tgt = ember.randn(5, 2, D, names=("T", "N", "E"))
    mem = ember.randn(4, 2, D, names=("S", "N", "E"))
    assert dec(tgt, mem).names == ("T", "N", "E")


@needs_torch
def test_copy_state_roundtrip_through_harness():
    # the shared harness's copy_state accepts the layout (same keys, same order)
    t = torch.nn.TransformerDecoderLayer(D, H, FF)
    e = ember.nn.TransformerDecoderLayer(D, H, FF)
    copy_state(t, e)
    for k, v in t.state_dict().items():
        np.testing.assert_array_equal(e.state_dict()[k].numpy(), v.numpy())


@needs_torch
@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_encoder_inference_padding_like_torch(grad):
    # torch runs eval + no-grad calls with a right-padded key padding mask on nested tensors:
    # padded positions come out as 0 (with grad enabled, or when training, they are computed)
    torch.manual_seed(0)
    t = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True), 2
    ).eval()
    e = ember.nn.TransformerEncoder(
        ember.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True), 2
    ).eval()
    copy_state(t, e)
    x = np.random.default_rng(0).standard_normal((2, 5, D)).astype(np.float32)
    kpm = np.zeros((2, 5), bool)
    kpm[0, 3:] = True
    with torch.set_grad_enabled(grad):
        want = t(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm)).detach().numpy()
    with ember.set_grad_enabled(grad):
        got = e(ember.tensor(x), src_key_padding_mask=ember.tensor(kpm)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert (np.abs(got[0, 3:]).max() == 0) == (not grad)


@needs_torch
def test_reprs_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ctor in (
            lambda m: m.nn.TransformerDecoderLayer(D, H, FF),
            lambda m: m.nn.TransformerEncoder(m.nn.TransformerEncoderLayer(D, H, FF), 2),
            lambda m: m.nn.Transformer(D, H, 1, 1, FF, batch_first=True),
        ):
            assert repr(ctor(ember)) == repr(ctor(torch))
