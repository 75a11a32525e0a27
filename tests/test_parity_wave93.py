"""Parity regressions of the ninety-third wave: recurrent layers and cells, the rnn utilities
and scaled_dot_product_attention fuzzed against torch (errors: type and text; results: values
and float64 gradients). It found:

* cells: a 1-D hidden state beside a 2-D input failing with Python's "tuple index out of
  range" (torch: size(1)'s IndexError); LSTMCell given a lone tensor for (h, c), or one state,
  failing on the names check's indexing before torch's TypeError / RuntimeError; RNNCell and
  LSTMCell multiplying the input before the state (torch multiplies the state first, so a
  mixed-dtype call names the state's dtype);
* layers: an empty sequence checked after the dtypes (torch: "Expected sequence length to be
  larger than 0 in RNN" first); a mismatched-dtype h0 of a bias-free RNN/GRU (and of a float64
  or projected LSTM, which torch runs natively) reported with addmm's text (torch: mm's);
* pack_padded_sequence(enforce_sorted=False) checking the lengths before torch's gather of
  the sorted batch: index_select's errors, and fewer lengths than sequences (torch packs the
  ones named); pad_sequence broadcasting a size-1 dim against a 0 one as 1 in its error;
  unpad_sequence taking lists of lengths (torch reads ``lengths.device``), not transposing the
  caller's tensor in place (a leaf that requires grad: torch's in-place error), and ignoring a
  2-D lengths tensor (torch's mask errors);
* scaled_dot_product_attention: the q/k/v dtype check after the rank check, the mask dtype
  check after the integer-input check, a float32 mask refused beside a float64 query (torch
  takes bool, float32 or the query's dtype), masks with more dims than the scores broadcast
  (torch adds them in place: "output with shape ... doesn't match the broadcast shape"), the
  flash-kernel choice ignoring the mask's shape (a 3-D mask, or a 4-D one of other batch/heads,
  runs torch's math path: is_causal with it is refused there), negative dropout_p (torch's
  flash kernel refuses it), enable_gqa with 2-D inputs (torch: size(-3)'s IndexError), and
  2-D inputs of mismatched sizes (torch: mm's "shapes cannot be multiplied").

Continued (second session), fuzzing the layers' arguments, the rnn utilities,
scaled_dot_product_attention, MultiheadAttention and the Transformer layers:

* layers: a c0 of another dtype than a native LSTM's (float64, float16, or projected) refused
  (torch promotes it in f * c: one it promotes to the layer's dtype runs, a wider one fails in
  the next product with mm's / addmm's text); float16 LSTMs' h0 errors given ember's own text
  (torch runs them natively: addmm's / mm's); an unbatched LSTM refusing (h, c, extra) (torch
  unsqueezes hx[0] and hx[1]); RNN(3, True) built (torch's empty() refuses the bool size);
* pack_padded_sequence: a 0-d lengths tensor with enforce_sorted=False failing on numpy
  indexing, and a meta lengths tensor on its copy (torch: the "1D CPU int64 tensor" error);
  pad_sequence: non-tensor elements, padding_value / batch_first types and a non-iterable
  (torch's binding errors, before its empty-list and padding_side checks), 0-d sequences
  (torch: ArrayRef's error for the first, size(0)'s for the others); pack_sequence of 0-d or
  non-tensor sequences; pad_packed_sequence reading ``data`` before ``batch_sizes``, and taking
  any total_length / padding_value (torch's binding TypeErrors);
* scaled_dot_product_attention: the binding's TypeErrors for dropout_p / is_causal / scale /
  enable_gqa; no query rows or no value entries (torch returns zeros tied to q, k and v,
  reading no mask); integer inputs (a bool mask fails converting -inf, the error comes last:
  "expected scalar type Float" or mm's text for a 2-D value) and complex ones (softmax's
  NotImplementedError); torch's math-path order: grouped heads, the q/k batch broadcast before
  the size check, the mask, softmax, dropout's range, then the value's batch and size (a 2-D
  value: mm's text with the folded rows);
* MultiheadAttention: the masks' dtypes checked after the ranks (the module checks them
  first); batch_first messages naming the caller's layout (torch's functional form sees the
  transposed one); the key padding mask's size checked first (torch: after the projections,
  sized like the padded keys); a key of another batch size failing before the attn_mask's
  shape check, and without bias_k's cat error; a batch_first mixed-dtype projection reported
  with addmm's text (torch's transposed input: mm's); the key's rows in the in-projection
  error; F.multi_head_attention_forward: a missing in_proj_weight or lone bias_k / bias_v
  (torch's own assertions), a static_k / static_v of another length (numpy's ValueError; torch:
  bmm's error, or its view's without weights), and an attn_mask the causal hint drops checked
  anyway (torch reads it only when it is used);
* TransformerEncoderLayer in inference (torch's fused kernel): its errors (mask views,
  embed_dim, the q/k/v projection's dtype, a padding mask's shape) and its ignoring is_causal
  (ember raised "Need attn_mask" or used the causal hint instead of the mask).

Left: hx dtype errors of float32 / bfloat16 LSTMs (torch's oneDNN path, cpu-dependent texts),
a one-step float16 / float64 LSTM with a wider c0 (torch returns the wider dtype), lengths
longer than the padded input in pack_padded_sequence (torch builds an inconsistent
PackedSequence; ember raises), torch's flash kernel taking a value of another sequence length
than the key's, num_layers=True (torch's forward TypeError), the position torch's binding
names for an sdpa argument passed positionally, string dtypes in the constructors (ember's
factories take them), and torch's flash kernel's NaNs with a negative scale and is_causal.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember


def _outcome(lib, fn):
    """('ok', list of numpy arrays) or (exception type name, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return (type(e).__name__, str(e).replace("ember.", "torch."))
    return ("ok", [np.asarray(o.detach().double().numpy()) for o in out])


def _same(fn, rtol=1e-10, atol=1e-12):
    a, b = _outcome(torch, fn), _outcome(ember, fn)
    assert a[0] == b[0], (a, b)
    if a[0] != "ok":
        assert a == b
        return
    assert len(a[1]) == len(b[1])
    for x, y in zip(a[1], b[1]):
        np.testing.assert_allclose(y, x, rtol=rtol, atol=atol)


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _weights(lib, m, seed=1):
    r = np.random.default_rng(seed)
    with lib.no_grad():
        for _, p in m.named_parameters():
            p.copy_(lib.tensor(r.uniform(-0.5, 0.5, tuple(p.shape))))
    return m


def _grads(lib, outs, ins):
    loss = sum(
        (o * lib.arange(1.0, o.numel() + 1, dtype=o.dtype).reshape(o.shape)).sum() for o in outs
    )
    loss.backward()
    return [*outs, *(t.grad for t in ins)]


# ---------------------------------------------------------------------- cells
@pytest.mark.parametrize("cls", ["RNNCell", "GRUCell", "LSTMCell"])
def test_cell_one_d_state_beside_batched_input(cls):
    def fn(lib):
        m = getattr(lib.nn, cls)(4, 2)
        h = lib.zeros(2)
        return [m(lib.zeros(2, 4), (h, h) if cls == "LSTMCell" else h)[0]]

    _same(fn)


@pytest.mark.parametrize("batch", [0, 1])
def test_lstm_cell_lone_tensor_state(batch):
    _same(lambda lib: lib.nn.LSTMCell(3, 2)(lib.zeros(batch, 3), lib.zeros(batch, 2)))


def test_lstm_cell_one_state():
    _same(lambda lib: lib.nn.LSTMCell(3, 2)(lib.zeros(2, 3), (lib.zeros(2, 2),)))


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cell_multiplies_the_state_first(cls, bias):
    def fn(lib):
        m = getattr(lib.nn, cls)(3, 2, bias=bias)
        x, h = lib.zeros(4, 3, dtype=lib.int64), lib.zeros(4, 2, dtype=lib.float64)
        return [m(x, (h, h) if cls == "LSTMCell" else h)[0]]

    _same(fn)


# ---------------------------------------------------------------------- layers
@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
def test_empty_sequence_before_state_dtype(cls):
    def fn(lib):
        m = getattr(lib.nn, cls)(3, 2)
        h = lib.zeros(1, 2, 2, dtype=lib.float16)
        return [m(lib.zeros(0, 2, 3), (h, h) if cls == "LSTM" else h)[0]]

    _same(fn)


@pytest.mark.parametrize(
    "cls, kw",
    [
        ("RNN", {"bias": False}),
        ("GRU", {"bias": False}),
        ("LSTM", {"bias": False, "dtype": "float64"}),
        ("LSTM", {"dtype": "float64"}),
        ("LSTM", {"bias": False, "proj_size": 1}),
    ],
)
def test_state_dtype_mismatch(cls, kw):
    def fn(lib):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(lib, k["dtype"])
        m = getattr(lib.nn, cls)(3, 2, **k)
        dt = k.get("dtype", lib.float32)
        x = lib.zeros(4, 2, 3, dtype=dt)
        hs = m.proj_size or 2
        h = lib.zeros(1, 2, hs, dtype=lib.float16)
        c = lib.zeros(1, 2, 2, dtype=dt)
        return [m(x, (h, c) if cls == "LSTM" else h)[0]]

    _same(fn)


# ---------------------------------------------------------------------- rnn utilities
@pytest.mark.parametrize(
    "shape, lengths, batch_first",
    [
        ((4, 3, 2), [3, 1, 2], True),  # fewer lengths than sequences: those are packed
        ((3, 4, 2), [2, 3, 1], False),
        ((1, 1, 2), [1, 1], True),  # more: index_select's error
        ((1, 1), [1, 1], False),
        ((3,), [[3, 2, 1]], False),  # a 1-D input, 2-D lengths: the dim error first
        ((2, 3), [[1, 2]], True),  # 2-D lengths: index_select's vector error
    ],
)
def test_pack_padded_unsorted_gathers_first(shape, lengths, batch_first):
    def fn(lib):
        x = lib.tensor(_arr(*shape), requires_grad=True)
        p = lib.nn.utils.rnn.pack_padded_sequence(
            x, lib.tensor(lengths), batch_first=batch_first, enforce_sorted=False
        )
        out, lens = lib.nn.utils.rnn.pad_packed_sequence(p, batch_first=batch_first)
        return [*_grads(lib, [out], [x]), lens, p.sorted_indices]

    _same(fn)


def test_pad_sequence_zero_broadcast_error():
    _same(lambda lib: [lib.nn.utils.rnn.pad_sequence([lib.zeros(2, 3, 1), lib.zeros(0)])])


@pytest.mark.parametrize("lengths", [[2, 1], (2, 1)])
def test_unpad_sequence_lengths_must_be_a_tensor(lengths):
    _same(lambda lib: lib.nn.utils.rnn.unpad_sequence(lib.zeros(3, 2), lengths))


def test_unpad_sequence_transposes_in_place():
    def fn(lib):
        x = lib.tensor(_arr(3, 2, 2))
        outs = lib.nn.utils.rnn.unpad_sequence(x, lib.tensor([3, 1]))
        return [*outs, x, lib.tensor(list(x.shape))]

    _same(fn)


def test_unpad_sequence_leaf_in_place_error():
    def fn(lib):
        x = lib.zeros(3, 2, requires_grad=True)
        return lib.nn.utils.rnn.unpad_sequence(x, lib.tensor([3, 1]))

    _same(fn)


@pytest.mark.parametrize("shape", [(2, 5), (2, 3), (3, 1, 2)])
def test_unpad_sequence_two_d_lengths(shape):
    def fn(lib):
        x = lib.tensor(_arr(*shape))
        return lib.nn.utils.rnn.unpad_sequence(x, lib.tensor([[1, 2]]), batch_first=True)

    _same(fn)


# ---------------------------------------------------------------------- sdpa
def _sdpa(qs, ks, vs, dts=("float64",) * 3, mask=None, grad=True, **kw):
    def fn(lib):
        q, k, v = (
            lib.tensor(_arr(*s, seed=i)).to(getattr(lib, d))
            for i, (s, d) in enumerate(zip((qs, ks, vs), dts))
        )
        if grad:
            for t in (q, k, v):
                t.requires_grad_()
        m = None
        if mask is not None:
            shape, dt = mask
            m = lib.tensor(_arr(*shape, seed=5) > -0.5)
            if dt != "bool":
                m = m.to(getattr(lib, dt))
        o = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)
        return _grads(lib, [o], (q, k, v)) if grad else [o]

    return fn


@pytest.mark.parametrize(
    "args, kw",
    [
        # the dtypes before the ranks, the mask's dtype before the integer-input check
        (((2,), (2, 5, 2), (2, 5, 2), ("float64", "float16", "float64")), {}),
        (
            ((2, 3, 3, 2), (2, 3, 1, 2), (2, 3, 1, 2), ("int64",) * 3, ((2, 3, 3, 1), "float64")),
            {"scale": 0},
        ),
        # a float32 mask beside float64 inputs
        (((2, 4, 3), (2, 5, 3), (2, 5, 3), ("float64",) * 3, ((4, 5), "float32")), {}),
        # masks with more dims than the scores
        (((3, 4), (3, 4), (3, 3), ("float64",) * 3, ((1, 3, 3), "bool")), {}),
        (((2, 1, 4), (2, 1, 4), (2, 1, 4), ("float64",) * 3, ((1, 2), "float64")), {}),
        # a 3-D mask runs the math path, which refuses is_causal beside it
        (
            ((1, 2, 1, 2), (1, 2, 5, 2), (1, 2, 5, 2), ("float64",) * 3, ((1, 1, 5), "bool")),
            {"is_causal": True},
        ),
        (
            ((2, 3, 4), (2, 1, 4), (2, 2, 4), ("float64",) * 3, ((1, 1), "bool")),
            {"is_causal": True},
        ),
        # a 1-D mask reaches the flash check's size(-2) before the head sizes are compared
        (
            ((1, 2, 3, 4), (1, 2, 1, 4), (1, 2, 1, 3), ("float64",) * 3, ((1,), "bool")),
            {"is_causal": True},
        ),
        # negative dropout: torch's flash kernel refuses it
        (((1, 2, 4, 3), (1, 2, 5, 3), (1, 2, 5, 3)), {"dropout_p": -0.1}),
        # enable_gqa with 2-D inputs, and 2-D inputs of mismatched sizes
        (((4, 2), (1, 2), (1, 2), ("float64",) * 3, ((4, 1), "float64")), {"enable_gqa": True}),
        (((3, 2), (3, 3), (3, 3)), {}),
        (((3, 2), (3, 2), (4, 3)), {}),
    ],
)
def test_sdpa_checks(args, kw):
    _same(_sdpa(*args, **kw))


# ---------------------------------------------------------------------- second session: layers
def _lstm(lib, dt, **kw):
    return _weights(lib, lib.nn.LSTM(3, 2, dtype=getattr(lib, dt), **kw))


@pytest.mark.parametrize(
    "dt, cdt, kw, steps",
    [
        ("float64", "float32", {}, 3),  # c0 promoted to the layer's dtype: it runs
        ("float64", "float16", {"num_layers": 2, "bidirectional": True}, 3),
        ("float64", "int64", {"bias": False}, 3),
        ("float64", "float32", {"proj_size": 1}, 3),
        ("float32", "float16", {"proj_size": 1}, 3),
        ("float32", "float64", {"proj_size": 1}, 3),  # wider: the projection's mm fails
        ("float32", "float64", {"proj_size": 1, "bias": False}, 1),
        ("float16", "float32", {}, 2),  # wider: the next step's addmm / mm fails
        ("float16", "float32", {"bias": False}, 2),
        ("float16", "int64", {}, 2),
    ],
)
def test_lstm_c0_of_another_dtype(dt, cdt, kw, steps):
    def fn(lib):
        m = _lstm(lib, dt, **kw)
        L = m.num_layers * (2 if m.bidirectional else 1)
        x = lib.tensor(_arr(steps, 2, 3)).to(getattr(lib, dt)).requires_grad_()
        h = lib.tensor(_arr(L, 2, m.proj_size or 2, seed=1)).to(getattr(lib, dt))
        c = lib.tensor(_arr(L, 2, 2, seed=2)).to(getattr(lib, cdt))
        if c.is_floating_point():
            c.requires_grad_()
        out, (hn, cn) = m(x, (h, c))
        if dt == "float16":  # compared by dtype and shape (half rounding differs)
            return [lib.tensor([out.dtype == getattr(lib, dt), cn.dtype == getattr(lib, dt)])]
        outs = _grads(lib, [out, hn, cn], [x] + ([c] if c.requires_grad else []))
        return outs + [lib.tensor([float(o.dtype.itemsize) for o in outs])]

    _same(fn, *((1e-5, 1e-6) if dt == "float32" else ()))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("hdt", ["float32", "float64", "int64"])
def test_float16_lstm_state_dtype(bias, hdt):
    def fn(lib):
        m = _lstm(lib, "float16", bias=bias)
        x = lib.zeros(2, 2, 3, dtype=lib.float16)
        h, c = lib.zeros(1, 2, 2, dtype=getattr(lib, hdt)), lib.zeros(1, 2, 2, dtype=lib.float16)
        return [m(x, (h, c))[0]]

    _same(fn)


def test_unbatched_lstm_takes_the_first_two_states():
    def fn(lib):
        m = _lstm(lib, "float64")
        h = lib.tensor(_arr(1, 2, seed=1))
        out, (hn, cn) = m(lib.tensor(_arr(4, 3)), (h, h * 2, h * 3))
        return [out, hn, cn]

    _same(fn)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM", "RNNCell"])
def test_bool_hidden_size(cls):
    def fn(lib):
        m = getattr(lib.nn, cls)(3, True)
        return [lib.tensor(list(p.shape)) for p in m.parameters()]

    _same(fn)


# ---------------------------------------------------------------------- second session: utils
def _rnnu(lib):
    return lib.nn.utils.rnn


@pytest.mark.parametrize(
    "lengths, enforce_sorted",
    [("0d", False), ("0d", True), ("meta", True), ("meta2d", True), ("meta", False)],
)
def test_pack_padded_lengths_tensors(lengths, enforce_sorted):
    def fn(lib):
        if lengths == "0d":
            n = lib.tensor(3)
        else:
            n = lib.tensor([[3, 2, 1]] if lengths == "meta2d" else [3, 2, 1]).to("meta")
        x = lib.tensor(_arr(3, 3, 2))
        p = _rnnu(lib).pack_padded_sequence(x, n, enforce_sorted=enforce_sorted)
        return [p.data]

    _same(fn)


_SEQS = {
    "ok": lambda lib: [lib.ones(3, 2), lib.ones(1, 2) * 2],
    "empty": lambda lib: [],
    "list_elem": lambda lib: [lib.ones(3), [1.0]],
    "int_elem": lambda lib: [5],
    "not_iterable": lambda lib: 5,
    "tensor": lambda lib: lib.ones(3, 2),
    "0d_first": lambda lib: [lib.tensor(1.0), lib.ones(3)],
    "0d_later": lambda lib: [lib.ones(3, 2), lib.tensor(1.0)],
    "generator": lambda lib: (t for t in [lib.ones(2, 2), lib.ones(3, 2)]),
}


@pytest.mark.parametrize("seqs", list(_SEQS))
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"padding_side": "middle"},
        {"padding_value": "a", "padding_side": "middle"},
        {"padding_value": None},
        {"padding_value": 1 + 2j},
        {"padding_value": True},
        {"padding_value": "t0"},
        {"padding_value": "t1"},
        {"batch_first": None},
    ],
)
def test_pad_sequence_arguments(seqs, kw):
    def fn(lib):
        k = dict(kw)
        if k.get("padding_value") in ("t0", "t1"):
            k["padding_value"] = lib.tensor(2.0) if k["padding_value"] == "t0" else lib.ones(1)
        return [_rnnu(lib).pad_sequence(_SEQS[seqs](lib), **k)]

    _same(fn)


@pytest.mark.parametrize("seqs", ["ok", "0d_later", "list_elem", "0d_first"])
def test_pack_sequence_arguments(seqs):
    _same(lambda lib: [_rnnu(lib).pack_sequence(_SEQS[seqs](lib), enforce_sorted=False).data])


@pytest.mark.parametrize(
    "kw",
    [
        {"total_length": 3.5},
        {"total_length": 4.0},
        {"total_length": "t4"},
        {"total_length": True},
        {"total_length": "5"},
        {"total_length": np.int64(4)},
        {"padding_value": "a"},
        {"padding_value": None},
        {"padding_value": "t2"},
        {"padding_value": 2},
    ],
)
def test_pad_packed_sequence_arguments(kw):
    def fn(lib):
        k = {
            a: (lib.tensor(int(v[1:])) if isinstance(v, str) and v[0] == "t" else v)
            for a, v in kw.items()
        }
        p = _rnnu(lib).pack_sequence([lib.ones(3, 2), lib.ones(2, 2)])
        return list(_rnnu(lib).pad_packed_sequence(p, **k))

    _same(fn)


def test_pad_packed_sequence_of_a_tuple():
    _same(lambda lib: _rnnu(lib).pad_packed_sequence((lib.ones(3, 2), lib.tensor([2, 1]))))


# ---------------------------------------------------------------------- second session: sdpa
@pytest.mark.parametrize(
    "kw",
    [
        {"dropout_p": "a"},
        {"dropout_p": None},
        {"dropout_p": "t1"},  # a 1-element tensor is not a float there
        {"dropout_p": "t0"},
        {"dropout_p": True},
        {"is_causal": None},
        {"is_causal": 1},
        {"is_causal": np.bool_(True)},
        {"scale": "a"},
        {"scale": 1 + 0j},
        {"scale": "t0"},
        {"scale": True},
        {"enable_gqa": None},
        {"enable_gqa": 0},
        {"is_causal": None, "scale": "a"},  # the binding's order
    ],
)
def test_sdpa_argument_types(kw):
    def fn(lib):
        tensors = {"t0": lib.tensor(0.0), "t1": lib.zeros(1)}
        k = {a: tensors.get(v, v) if isinstance(v, str) else v for a, v in kw.items()}
        q = lib.tensor(_arr(2, 3, 4, 5))
        return [lib.nn.functional.scaled_dot_product_attention(q, q, q, **k)]

    _same(fn)


@pytest.mark.parametrize(
    "qs, ks, vs, mask, kw",
    [
        # no query rows, or no value entries: zeros tied to q, k, v; the mask is not read
        ((2, 3, 0, 5), (2, 3, 6, 5), (2, 3, 6, 5), (4, 6), {}),
        ((2, 3, 0, 5), (2, 3, 6, 5), (2, 3, 6, 5), (4, 6), {"is_causal": True}),
        ((2, 3, 0, 5), (2, 3, 6, 4), (2, 3, 6, 5), None, {"dropout_p": 2.0}),
        ((2, 3, 4, 5), (2, 3, 0, 5), (2, 3, 0, 5), (4, 6), {}),
        ((3, 4, 5), (3, 6, 5), (2, 6, 0), (4, 7), {}),
        ((0, 5), (6, 4), (6, 7), None, {}),
        ((2, 3, 4, 0), (2, 3, 6, 0), (2, 3, 6, 3), (4, 7), {}),  # E = 0 is computed
    ],
)
def test_sdpa_empty(qs, ks, vs, mask, kw):
    def fn(lib):
        q, k, v = (
            lib.tensor(_arr(*s, seed=i), requires_grad=True) for i, s in enumerate((qs, ks, vs))
        )
        m = None if mask is None else lib.tensor(_arr(*mask, seed=5) > 0)
        o = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)
        return _grads(lib, [o], (q, k, v))

    _same(fn)


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8", "uint8", "bool", "complex64"])
@pytest.mark.parametrize(
    "shapes, mask, kw",
    [
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), None, {}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), ((4, 6), "bool"), {"is_causal": True}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), ((4, 6), "float32"), {}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), ((4, 7), "bool"), {}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), ((4,), "float32"), {"is_causal": True}),
        (((2, 3, 4, 5), (2, 3, 6, 4), (2, 3, 6, 5)), None, {}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 7, 5)), None, {}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), None, {"dropout_p": 1.5}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), None, {"dropout_p": -0.5}),
        (((4, 5), (6, 5), (6, 5)), None, {}),
        (((2, 3, 4, 5), (3, 6, 5), (6, 5)), None, {}),
    ],
)
def test_sdpa_non_float_inputs(dt, shapes, mask, kw):
    _same(_sdpa(*shapes, (dt,) * 3, mask, grad=False, **kw))


@pytest.mark.parametrize(
    "shapes, mask, kw",
    [
        # the q/k batch broadcast before the size check
        (((2, 3, 4, 5), (2, 2, 6, 4), (2, 3, 6, 5)), None, {}),
        (((3, 4, 5), (2, 6, 4), (3, 6, 5)), None, {}),
        # the mask and dropout's range before the value's batch and size
        (((2, 3, 4, 5), (2, 2, 6, 5), (2, 3, 7, 5)), ((4, 7), "bool"), {}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 2, 7, 5)), ((4, 7), "bool"), {}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 2, 7, 5)), ((4, 6), "bool"), {}),
        (((3, 4, 5), (3, 6, 5), (3, 7, 5)), None, {"dropout_p": 1.5}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 2, 6, 5)), None, {"dropout_p": 1.5}),
        (((3, 4, 5), (3, 6, 7), (3, 6, 5)), ((1, 1, 4, 6), "float64"), {"dropout_p": 1.5}),
        (((2, 4, 4, 5), (2, 2, 6, 5), (2, 2, 6, 5)), ((4, 6), "bool"), {"dropout_p": 1.5}),
        # the grouped heads first
        (((2, 4, 4, 5), (2, 3, 6, 5), (2, 2, 7, 5)), None, {"enable_gqa": True, "dropout_p": 1.5}),
        (((2, 4, 4, 5), (2, 2, 6, 4), (2, 3, 6, 5)), None, {"enable_gqa": True}),
        # a 2-D value: matmul folds the probabilities' rows (mm's text)
        (((2, 3, 4, 5), (3, 6, 5), (7, 5)), None, {}),
        (((4, 5), (3, 6, 5), (7, 5)), None, {}),
    ],
)
def test_sdpa_math_path_order(shapes, mask, kw):
    _same(_sdpa(*shapes, ("float64",) * 3, mask, **kw))


# ---------------------------------------------------------------------- second session: MHA
def _mask(lib, spec, seed=9):
    if spec is None:
        return None
    shape, dt = spec
    m = lib.tensor(_arr(*shape, seed=seed))
    return m > 0.3 if dt == "bool" else m.to(getattr(lib, dt))


_Q, _K = (5, 3, 8), (6, 3, 8)
_BF, _KV45 = {"batch_first": True}, {"kdim": 4, "vdim": 5}


def _kpm(*shape, dt="bool"):
    return {"key_padding_mask": (shape, dt)}


def _am(*shape, dt="bool"):
    return {"attn_mask": (shape, dt)}


@pytest.mark.parametrize(
    "shapes, mkw, masks, fkw",
    [
        # the module checks the masks' dtypes before the ranks
        ((_Q, (6, 8), (6, 8)), {}, _am(5, 6, dt="int64"), {}),
        ((_Q, (6, 8), (6, 8)), {}, _kpm(3, 6, dt="int64"), {}),
        (((5, 3, 9), _K, _K), {}, _kpm(3, 6, dt="int32"), {}),
        # batch_first: torch's functional form names the transposed shapes
        ((_Q, (6, 3, 9), _K), _BF, {}, {}),
        ((_Q, _K, (7, 3, 8)), _BF, {}, {}),
        ((_Q, (6, 3, 4), (7, 3, 5)), {**_BF, **_KV45}, {}, {}),
        # the padding mask is checked after the projections, sized like the padded keys
        ((_Q, _K, _K), _BF, _kpm(3, 6), {}),
        ((_Q, _K, _K), _BF, _kpm(3, 6), {"is_causal": True}),
        (((5, 3, 9), _K, _K), {}, _kpm(4, 6), {}),
        ((_Q, _K, _K), {"add_bias_kv": True, "add_zero_attn": True}, _kpm(3, 7), {}),
        ((_Q, (6, 3, 4), (7, 3, 5)), _KV45, _kpm(3, 7), {}),
        # a key of another batch size: the attn_mask's shape first, then bias_k's cat or the view
        ((_Q, (6, 2, 8), (6, 2, 8)), {}, _am(5, 7), {}),
        ((_Q, (6, 2, 8), (6, 2, 8)), {}, _am(4, 5, 6), {}),
        ((_Q, (6, 2, 8), (6, 2, 8)), {"add_bias_kv": True}, {}, {}),
        ((_Q, (6, 2, 4), (6, 2, 5)), {"add_bias_kv": True, **_KV45}, {}, {}),
        ((_Q, (6, 2, 8), (6, 2, 8)), _BF, _am(5, 6), {}),
        # the key's rows in the in-projection's error
        (((4, 3, 8), (5, 3, 9), (5, 3, 9)), _BF, {}, {}),
    ],
)
def test_mha_checks(shapes, mkw, masks, fkw):
    def fn(lib):
        m = _weights(lib, lib.nn.MultiheadAttention(8, 2, dtype=lib.float64, **mkw))
        q, k, v = (lib.tensor(_arr(*s, seed=i)) for i, s in enumerate(shapes))
        k, v = (k, k) if shapes[1] == shapes[2] and "kdim" not in mkw else (k, v)
        kw = {n: _mask(lib, spec) for n, spec in masks.items()}
        o, w = m(q, k, v, **kw, **fkw)
        return [o] + ([] if w is None else [w])

    _same(fn)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("cls", ["MultiheadAttention", "TransformerEncoderLayer"])
def test_mixed_dtype_projection(batch_first, cls):
    def fn(lib):
        if cls == "MultiheadAttention":
            m = lib.nn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=lib.float64)
            x = lib.zeros(5, 3, 8)
            return [m(x, x, x)[0]]
        m = lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=batch_first, dtype=lib.float64)
        return [m(lib.zeros(5, 3, 8))]

    _same(fn)


# ---------------------------------------------------------------------- second session: fused
@pytest.mark.parametrize(
    "src, masks, kw",
    [
        ((5, 3, 8), {"src_mask": ((5, 5), "bool")}, {}),  # (N, L) = (5, 3): the view fails
        ((5, 3, 8), {"src_mask": ((5, 4), "float64")}, {}),
        ((5, 3, 8), {"src_mask": ((6, 5, 5), "bool")}, {}),
        ((5, 3, 8), {"src_key_padding_mask": ((3, 5), "bool")}, {}),
        ((5, 3, 8), {"src_mask": ((3, 3), "bool"), "src_key_padding_mask": ((5, 4), "bool")}, {}),
        ((5, 3, 9), {}, {}),
        ((5, 3, 9), {"src_key_padding_mask": ((3, 5), "bool")}, {}),
        ((5, 3, 8), {"src_key_padding_mask": ((3, 5), "bool")}, {"dtype": "float32"}),
        # the kernel ignores is_causal: no mask needed, and a given one is what it reads
        ((5, 3, 8), {}, {"is_causal": True}),
        ((5, 3, 8), {"src_mask": ((3, 3), "bool")}, {"is_causal": True}),
        ((5, 3, 8), {"src_mask": ((5, 5), "bool")}, {"is_causal": True}),
        ((5, 3, 8), {"src_key_padding_mask": ((5, 3), "bool")}, {"is_causal": True}),
    ],
)
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_fused_path(src, masks, kw, norm_first):
    def fn(lib):
        m = lib.nn.TransformerEncoderLayer(
            8, 2, 16, batch_first=True, norm_first=norm_first, dtype=lib.float64
        )
        m = _weights(lib, m).eval()
        x = lib.tensor(_arr(*src)).to(getattr(lib, kw.get("dtype", "float64")))
        a = {n: _mask(lib, spec, seed=3 + i) for i, (n, spec) in enumerate(masks.items())}
        with lib.no_grad():
            return [m(x, **a, is_causal=kw.get("is_causal", False))]

    _same(fn)


# ---------------------------------------------------------------------- second session: F.mha
def _t(shape, seed=0, dt=None):
    def make(lib):
        t = lib.tensor(_arr(*shape, seed=seed))
        return t if dt is None else t.to(getattr(lib, dt))

    return make


def _bool(shape, seed=0, dt=None):
    def make(lib):
        m = lib.tensor(_arr(*shape, seed=seed)) > 0
        return m if dt is None else m.to(getattr(lib, dt))

    return make


@pytest.mark.parametrize(
    "over",
    [
        {"in_proj_weight": None},
        {"in_proj_weight": None, "key": _t((6, 3, 9)), "value": _t((6, 3, 9))},
        {"bias_k": _t((1, 1, 8))},
        {"bias_v": _t((1, 1, 8))},
        # static keys / values of another length: the weights path's bmm, else the view
        {"static_k": _t((6, 7, 4))},
        {"static_v": _t((6, 7, 4))},
        {"static_k": _t((6, 7, 4)), "need_weights": False},
        {"static_v": _t((6, 7, 4)), "need_weights": False},
        {"static_k": _t((6, 7, 4)), "static_v": _t((6, 8, 4))},
        # the causal hint drops the mask unread (no padding mask, no weights)
        {"is_causal": True, "attn_mask": _bool((5, 7), dt="int64"), "need_weights": False},
        {"is_causal": True, "attn_mask": _bool((5, 7), dt="int64")},
        {"is_causal": True, "attn_mask": _bool((5, 6)), "need_weights": False},
    ],
)
def test_multi_head_attention_forward_arguments(over):
    def fn(lib):
        a = {
            "query": _t((5, 3, 8))(lib),
            "key": _t((6, 3, 8), 1)(lib),
            "value": _t((6, 3, 8), 2)(lib),
            "embed_dim_to_check": 8,
            "num_heads": 2,
            "in_proj_weight": _t((24, 8), 3)(lib),
            "in_proj_bias": _t((24,), 4)(lib),
            "bias_k": None,
            "bias_v": None,
            "add_zero_attn": False,
            "dropout_p": 0.0,
            "out_proj_weight": _t((8, 8), 5)(lib),
            "out_proj_bias": _t((8,), 6)(lib),
            "training": False,
        }
        a.update({k: v(lib) if callable(v) else v for k, v in over.items()})
        o, w = lib.nn.functional.multi_head_attention_forward(**a)
        return [o] + ([] if w is None else [w])

    _same(fn)
