"""Parity regressions found by the thirty-first wave, an option-by-option sweep of the recurrent
and attention modules against torch (RNN/LSTM/GRU with every constructor option, given or absent
h0/c0, unbatched and PackedSequence inputs, the cells, MultiheadAttention with every mask kind
and flag, the Transformer encoder/decoder stacks and their nested-tensor inference path, and the
errors; outputs, states, every parameter gradient and the input gradients under a non-uniform
upstream gradient, float32 and float64): MultiheadAttention silently cast a float mask of
another dtype where torch raises (its baddbmm error on the weights path, its SDPA error on the
``need_weights=False`` path; inside autocast a non-float64 mask is first cast to the region's
dtype), warned once where torch warns twice about masks whose dtypes still differ once a boolean
one is made a float mask of the query's dtype, and failed with its own reshape messages on a key
whose batch or embedding size disagrees (torch's view and mat1/mat2 errors);
TransformerEncoder's nested-tensor inference path zeroed the padded positions after the final
norm (torch pads before it: they come out as norm(0)), checked the padding mask's shape only
later with MultiheadAttention's message (torch's "Mask size should match input size" / "Padding
mask should be 2D"), looked at every layer's parameters instead of the first layer's (and did
not raise torch's AssertionError when a later layer's attention must record gradients), honoured
a mask that is not left aligned under ``mask_check=False`` (torch keeps each sequence's first
(number of kept positions) steps), and its odd-heads warning lacked torch's wording; the
recurrent layers accepted an empty sequence (torch: "Expected sequence length to be larger than
0 in RNN"), the cells checked the hidden size before the batch size and read the last dim rather
than dim 1 (a 3-D hidden state of an unbatched call failed with unpacking errors or broadcast
silently), LSTMCell took a lone tensor for ``(h, c)`` (torch's TypeError; a two-row tensor was
unpacked by rows), and RNN/GRU named a hidden state of the wrong dtype with ember's own message
instead of torch's mat1/mat2 one (and LSTM lacked torch's check_forward_args for its (h, c)
pair); in nn.utils.rnn, pad_sequence promoted mixed dtypes (torch copies into the first
sequence's dtype) and refused a sequence that broadcasts into its slot (torch's copy_ semantics,
and its copy_ errors otherwise), pack_padded_sequence checked in another order (torch: empty
input, count, the last length, then the order) and unpad_sequence ignored a length count that
does not match the batch (torch's zip(strict=True) ValueError)."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")


def _copy(tm, em) -> None:
    """torch's weights into ember's module (numpy copies through load_state_dict)."""
    em.load_state_dict(
        {k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    )


def _np(t) -> np.ndarray:
    return t.detach().numpy()


def _close(e, t, tol) -> None:
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=tol, atol=tol)


def _mha(m, *a, **k):
    m.manual_seed(0)
    return m.nn.MultiheadAttention(*a, **k)


# ------------------------------------------------------------ MHA: a float mask of another dtype
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize(
    ("am", "kpm"),
    [
        ("float64", None),
        (None, "float64"),
        ("bool", "float64"),
        ("float64", "bool"),
        ("float16", None),
    ],
)
def test_mha_float_mask_of_another_dtype_raises(need_weights, am, kpm):
    def run(m):
        mod = _mha(m, 8, 2)
        q, k = m.randn(4, 3, 8), m.randn(5, 3, 8)
        amask = None if am is None else m.zeros(4, 5, dtype=getattr(m, am))
        kmask = None if kpm is None else m.zeros(3, 5, dtype=getattr(m, kpm))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the mismatched-types deprecation warning
            return mod(q, k, k, attn_mask=amask, key_padding_mask=kmask, need_weights=need_weights)

    msg = same_error(run, RuntimeError)
    assert ("Input dtypes" if need_weights else "Expected attn_mask dtype") in msg


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_float32_mask_with_float64_model(need_weights):
    """The SDPA path takes a float32 mask with any query dtype; the weights path does not."""
    rng = np.random.default_rng(0)
    mask = (-np.abs(rng.standard_normal((4, 5)))).astype("float32")
    q_np, k_np = rng.standard_normal((4, 3, 8)), rng.standard_normal((5, 3, 8))
    up = np.linspace(-1.0, 2.0, 4 * 3 * 8).reshape(4, 3, 8)
    tm = _mha(torch, 8, 2).double()
    em = _mha(ember, 8, 2).double()
    _copy(tm, em)
    res = []
    for m, mod in ((torch, tm), (ember, em)):
        q = m.tensor(q_np, requires_grad=True)
        k = m.tensor(k_np)
        if need_weights:
            with pytest.raises(RuntimeError, match="input float, batch1: double, batch2: double"):
                mod(q, k, k, attn_mask=m.tensor(mask), need_weights=True)
            continue
        out = mod(q, k, k, attn_mask=m.tensor(mask), need_weights=False)[0]
        (out * m.tensor(up)).sum().backward()
        res.append((q, out))
    if need_weights:
        return
    (tq, to), (eq, eo) = res
    _close(eo, to, 1e-10)
    _close(eq.grad, tq.grad, 1e-10)
    _close(em.in_proj_weight.grad, tm.in_proj_weight.grad, 1e-10)
    _close(em.out_proj.weight.grad, tm.out_proj.weight.grad, 1e-10)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask_dtype", ["float32", "float16", "float64"])
def test_mha_float_mask_inside_autocast(need_weights, mask_dtype):
    """Autocast casts a float32/float16 mask to bfloat16 with the query; float64 is left alone."""

    def run(m, model_dtype="float32"):
        mod = _mha(m, 8, 2).to(getattr(m, model_dtype))
        q = m.randn(4, 3, 8, dtype=getattr(m, model_dtype))
        mask = m.zeros(4, 5, dtype=getattr(m, mask_dtype))
        with m.autocast("cpu"):
            k = m.randn(5, 3, 8, dtype=getattr(m, model_dtype))
            return mod(q, k, k, attn_mask=mask, need_weights=need_weights)[0]

    if mask_dtype == "float64":
        same_error(run, RuntimeError)
    else:
        assert run(ember).dtype == ember.bfloat16 and run(torch).dtype == torch.bfloat16
        # a float64 model keeps float64 queries: the bfloat16-cast mask no longer matches
        msg = same_error(lambda m: run(m, "float64"), RuntimeError)
        assert "c10::BFloat16" in msg


def _mismatch_warnings(run) -> list:
    """The warnings ``run`` emits, sorted (their texts name the masks)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            run()
        except RuntimeError:
            pass  # some combinations then fail on the mask's dtype: the warnings came first
    return sorted(str(w.message) for w in rec)


@pytest.mark.parametrize(
    "case",
    [
        "mha_bool_f32_f64",
        "mha_f64_f32",
        "mha_bool_f32",
        "encoder_layer",
        "encoder",
        "decoder_layer",
    ],
)
def test_mismatched_mask_warnings_counted_like_torch(case):
    """torch's MultiheadAttention checks the masks again after turning a boolean one into the
    query's dtype: masks that still differ are warned about once more."""

    def run(m):
        f64 = m.float64
        x = m.randn(5, 3, 8, dtype=f64)
        bool_mask, kpm32 = m.zeros(5, 5, dtype=m.bool), m.zeros(3, 5)
        m.manual_seed(0)
        if case == "mha_bool_f32_f64":
            return m.nn.MultiheadAttention(8, 2).double()(
                x, x, x, attn_mask=bool_mask, key_padding_mask=kpm32
            )
        if case == "mha_f64_f32":
            y = m.randn(5, 3, 8)
            mha = m.nn.MultiheadAttention(8, 2)
            return mha(y, y, y, attn_mask=m.zeros(5, 5, dtype=f64), key_padding_mask=kpm32)
        if case == "mha_bool_f32":  # same dtypes once converted: one warning
            y = m.randn(5, 3, 8)
            return m.nn.MultiheadAttention(8, 2)(
                y, y, y, attn_mask=bool_mask, key_padding_mask=kpm32
            )
        if case == "encoder_layer":
            layer = m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0).double()
            return layer(x, src_mask=bool_mask, src_key_padding_mask=kpm32)
        if case == "encoder":
            layer = m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
            enc = m.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).double()
            return enc(x, mask=bool_mask, src_key_padding_mask=kpm32)
        layer = m.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0).double()
        return layer(x, x, tgt_mask=bool_mask, tgt_key_padding_mask=kpm32)

    want = _mismatch_warnings(lambda: run(torch))
    assert want and all("Support for mismatched" in w for w in want)
    assert _mismatch_warnings(lambda: run(ember)) == want


# ------------------------------------------------------------ MHA: key batch / embedding errors
@pytest.mark.parametrize(
    "case",
    [
        "batch",
        "batch_first_batch",
        "kdim_batch",
        "embed_kv_same",
        "embed_kv_distinct",
        "embed_batch_first",
        "embed_unbatched",
    ],
)
def test_mha_key_size_errors(case):
    def run(m):
        if case == "batch":
            k = m.randn(5, 2, 8)
            return _mha(m, 8, 2)(m.randn(4, 3, 8), k, k)
        if case == "batch_first_batch":
            k = m.randn(2, 5, 8)
            return _mha(m, 8, 2, batch_first=True)(m.randn(3, 4, 8), k, k)
        if case == "kdim_batch":
            return _mha(m, 8, 2, kdim=6, vdim=5)(
                m.randn(4, 3, 8), m.randn(5, 2, 6), m.randn(5, 2, 5)
            )
        if case == "embed_kv_same":
            k = m.randn(5, 3, 6)
            return _mha(m, 8, 2)(m.randn(4, 3, 8), k, k)
        if case == "embed_kv_distinct":
            return _mha(m, 8, 2)(m.randn(4, 3, 8), m.randn(5, 3, 6), m.randn(5, 3, 6))
        if case == "embed_batch_first":
            k = m.randn(3, 5, 6)
            return _mha(m, 8, 2, batch_first=True)(m.randn(3, 4, 8), k, k)
        k = m.randn(5, 6)
        return _mha(m, 8, 2)(m.randn(4, 8), k, k)

    same_error(run, RuntimeError)


def test_transformer_decoder_layer_memory_of_wrong_width():
    def run(m):
        m.manual_seed(0)
        layer = m.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
        return layer(m.randn(4, 3, 8), m.randn(5, 3, 6))

    assert "mat1 and mat2" in same_error(run, RuntimeError)


# ------------------------------------------------------------ TransformerEncoder's nested path
def _encoder(m, norm=True, num_heads=2, d=8):
    m.manual_seed(0)
    layer = m.nn.TransformerEncoderLayer(d, num_heads, 16, dropout=0.0, batch_first=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return m.nn.TransformerEncoder(layer, 2, norm=m.nn.LayerNorm(d) if norm else None)


@pytest.mark.parametrize("norm", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kpm_kind", ["bool", "float"])
def test_encoder_nested_path_pads_before_the_final_norm(norm, dtype, kpm_kind):
    tm = _encoder(torch, norm).to(getattr(torch, dtype)).eval()
    if norm:  # a non-trivial norm: norm(0) is its bias
        torch.nn.init.normal_(tm.norm.weight)
        torch.nn.init.normal_(tm.norm.bias)
    em = _encoder(ember, norm).to(getattr(ember, dtype)).eval()
    _copy(tm, em)
    x = np.random.default_rng(0).standard_normal((3, 5, 8)).astype(dtype)
    pad = np.zeros((3, 5), bool)
    pad[0, 3:] = pad[1, 1:] = True
    if kpm_kind == "float":
        pad = np.where(pad, -np.inf, 0.0).astype(dtype)
    with torch.no_grad():
        to = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
    with ember.no_grad():
        eo = em(ember.tensor(x), src_key_padding_mask=ember.tensor(pad))
    tol = 2e-5 if dtype == "float32" else 1e-10
    _close(eo, to, tol)
    if norm:
        _close(eo[1, 2], tm.norm.bias, tol)


def test_encoder_nested_path_without_mask_check_reads_lengths():
    """``mask_check=False``: torch's nested tensors hold each sequence's first (number of kept
    positions) steps, even for a mask that is not left aligned."""
    tm = _encoder(torch)
    tm.mask_check = False
    tm.eval()
    em = _encoder(ember)
    em.mask_check = False
    em.eval()
    _copy(tm, em)
    x = np.random.default_rng(2).standard_normal((3, 5, 8)).astype("float32")
    pad = np.zeros((3, 5), bool)
    pad[0, 1] = pad[1, 3:] = pad[2, 0] = True
    with torch.no_grad():
        to = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
    with ember.no_grad():
        eo = em(ember.tensor(x), src_key_padding_mask=ember.tensor(pad))
    _close(eo, to, 2e-5)


@pytest.mark.parametrize("shape", [(3, 4), (2, 5), (1, 5), (5,), (3, 5, 1)])
def test_encoder_nested_path_padding_mask_shape_errors(shape):
    def run(m):
        enc = _encoder(m).eval()
        with m.no_grad():
            return enc(m.randn(3, 5, 8), src_key_padding_mask=m.zeros(*shape, dtype=m.bool))

    same_error(run, RuntimeError)


def test_encoder_nested_path_reads_the_first_layers_parameters():
    """torch decides on the first layer's parameters; a later attention that records gradients
    then meets the nested tensor and fails."""
    x = np.random.default_rng(1).standard_normal((3, 5, 8)).astype("float32")
    pad = np.zeros((3, 5), bool)
    pad[:, 3:] = True
    res = {}
    for m in (torch, ember):
        enc = _encoder(m, norm=False).eval()
        for p in enc.parameters():
            p.requires_grad_(False)
        for p in enc.layers[1].linear1.parameters():
            p.requires_grad_(True)
        out = enc(m.tensor(x), src_key_padding_mask=m.tensor(pad))
        res[m] = (out, enc)
        for p in enc.layers[1].self_attn.parameters():
            p.requires_grad_(True)
        with pytest.raises(AssertionError, match="does not support NestedTensor outside"):
            enc(m.tensor(x), src_key_padding_mask=m.tensor(pad))
    (to, _), (eo, _) = res[torch], res[ember]
    assert eo.requires_grad and to.requires_grad
    assert float(eo[:, 3:].abs().sum()) == 0.0 == float(to[:, 3:].abs().sum())


def test_encoder_nested_warning_for_odd_heads():
    for m in (torch, ember):
        layer = m.nn.TransformerEncoderLayer(9, 3, 16, batch_first=True)
        with pytest.warns(UserWarning) as rec:
            m.nn.TransformerEncoder(layer, 2)
        assert str(rec[0].message).endswith("because encoder_layer.self_attn.num_heads is odd"), (
            rec[0].message
        )


# ------------------------------------------------------------ recurrent layers and cells
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("layout", ["seq_first", "batch_first", "unbatched"])
def test_rnn_empty_sequence_raises(kind, layout):
    def run(m):
        m.manual_seed(0)
        mod = getattr(m.nn, kind)(4, 5, batch_first=layout == "batch_first")
        shape = {"seq_first": (0, 2, 4), "batch_first": (2, 0, 4), "unbatched": (0, 4)}[layout]
        return mod(m.randn(*shape))

    assert same_error(run, RuntimeError) == "Expected sequence length to be larger than 0 in RNN"


def _cell_hx(m, kind, *shape):
    h = m.randn(*shape)
    return (h, m.randn(*shape)) if kind == "LSTMCell" else h


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize(
    ("x_shape", "h_shape"),
    [
        ((3, 4), (2, 4)),  # batch and size both wrong: torch names the batch first
        ((4,), (1, 5)),  # unbatched with a 2-D state: a 3-D state's size(1) is 1
        ((3, 4), (3, 4)),
        ((3, 4), (2, 5)),
    ],
)
def test_cell_state_checks(kind, x_shape, h_shape):
    def run(m):
        m.manual_seed(0)
        return getattr(m.nn, kind)(4, 5)(m.randn(*x_shape), _cell_hx(m, kind, *h_shape))

    same_error(run, RuntimeError)


@pytest.mark.parametrize("rows", [2, 3])
def test_lstm_cell_lone_tensor_state(rows):
    def run(m):
        m.manual_seed(0)
        return m.nn.LSTMCell(4, 5)(m.randn(rows, 4), m.randn(rows, 5))

    same_error(run, TypeError)
    same_error(
        lambda m: m.lstm_cell(m.randn(2, 4), m.randn(2, 5), m.randn(20, 4), m.randn(20, 5)),
        TypeError,
    )


@pytest.mark.parametrize("cell_size", [5, 4])
@pytest.mark.parametrize("batch", [3, 2])
def test_lstm_check_forward_args_takes_the_state_pair(cell_size, batch):
    """LSTM's own check_forward_args (torch's override) checks h and c; ember's base one choked
    on the tuple."""

    def run(m):
        lstm = m.nn.LSTM(4, 5)
        state = (m.zeros(1, batch, 5), m.zeros(1, 3, cell_size))
        lstm.check_forward_args(m.randn(2, 3, 4), state, None)
        raise RuntimeError("passed")  # a valid pair: both return None

    same_error(run, RuntimeError)


@pytest.mark.parametrize("kind", ["RNN", "GRU"])
@pytest.mark.parametrize("model_dtype", ["float32", "float64"])
def test_rnn_hidden_state_of_another_dtype(kind, model_dtype):
    other = "float64" if model_dtype == "float32" else "float32"

    def run(m):
        m.manual_seed(0)
        mod = getattr(m.nn, kind)(4, 5).to(getattr(m, model_dtype))
        x = m.randn(3, 2, 4, dtype=getattr(m, model_dtype))
        return mod(x, m.randn(1, 2, 5, dtype=getattr(m, other)))

    assert "mat1 and mat2 must have the same dtype" in same_error(run, RuntimeError)


# ------------------------------------------------------------ nn.utils.rnn
def test_pad_sequence_takes_the_first_sequences_dtype():
    """torch copies every sequence into a tensor of the first one's dtype (no promotion)."""
    up = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
    res = []
    for m in (torch, ember):
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = m.tensor([0.25, 1.5], dtype=m.float64, requires_grad=True)
        out = m.nn.utils.rnn.pad_sequence([a, b])
        (out * m.tensor(up, dtype=m.float32)).sum().backward()
        ints = m.nn.utils.rnn.pad_sequence([m.tensor([1, 2, 3]), m.tensor([1.5, -2.5])])
        res.append((out, a.grad, b.grad, ints))
    for e, t in zip(res[1], res[0]):
        _close(e, t, 1e-7)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_broadcasts_a_sequence_into_its_slot(batch_first):
    """A 1-D sequence beside (len, n) ones fills each of its steps (torch's copy_ broadcasts)."""
    up = np.linspace(-1.0, 1.0, 3 * 2 * 2).reshape((2, 3, 2) if batch_first else (3, 2, 2))
    res = []
    for m in (torch, ember):
        a = m.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        b = m.tensor([7.0, -8.0], requires_grad=True)
        out = m.nn.utils.rnn.pad_sequence([a, b], batch_first=batch_first, padding_value=-1.0)
        (out * m.tensor(up, dtype=m.float32)).sum().backward()
        res.append((out, a.grad, b.grad))
    for e, t in zip(res[1], res[0]):
        _close(e, t, 1e-6)


@pytest.mark.parametrize(
    "shapes",
    [
        ((3, 2), (2, 2, 1)),
        ((3, 2, 1), (2, 2)),
        ((3, 2, 1), (2, 2, 3)),
        ((3,), (2, 2)),
        ((2, 3), (2, 4)),
    ],
)
def test_pad_sequence_shape_errors(shapes):
    same_error(lambda m: m.nn.utils.rnn.pad_sequence([m.randn(*s) for s in shapes]), RuntimeError)


@pytest.mark.parametrize(
    ("shape", "lengths", "kw"),
    [
        ((4, 3, 2), [2, 0, 3], {}),  # unsorted: torch reports the order, not the zero
        ((4, 3, 2), [3, 0, 1], {}),
        ((4, 3, 2), [3, 2, 0], {}),
        ((4, 3, 2), [2, 0, 3], {"enforce_sorted": False}),
        ((0, 3, 2), [1, 1, 1], {}),  # torch: "Cannot pack empty tensors."
        ((4, 3, 0), [4, 3, 1], {}),
        ((4, 0, 2), [1], {}),
        ((4, 0, 2), [], {}),
    ],
)
def test_pack_padded_sequence_checks_in_torchs_order(shape, lengths, kw):
    same_error(
        lambda m: m.nn.utils.rnn.pack_padded_sequence(m.randn(*shape), lengths, **kw), RuntimeError
    )


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_sequence_of_a_1d_input(batch_first):
    same_error(
        lambda m: m.nn.utils.rnn.pack_padded_sequence(m.randn(4), [4], batch_first=batch_first),
        IndexError,
    )


@pytest.mark.parametrize("lengths", [[3, 2], [3, 2, 1, 1]])
def test_unpad_sequence_needs_one_length_per_sequence(lengths):
    same_error(
        lambda m: m.nn.utils.rnn.unpad_sequence(
            m.randn(3, 4, 2), m.tensor(lengths), batch_first=True
        ),
        ValueError,
    )
