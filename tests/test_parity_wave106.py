"""Parity regressions of the hundred-and-sixth wave: sequence / NLP training programs run under
``import ember as torch`` (seq2seq with packed bidirectional GRU and attention, beam search,
Transformer classifier and LM, EmbeddingBag text classifier, word2vec with SparseAdam, CTC
acoustic model, char-RNN classifier) and probes of the APIs they lean on. It found:

* ctc_loss checking its arguments in another order than torch 2.13 (the dtype, the targets'
  dims, blank, the lengths' sizes, each target length, the targets' size, each input length),
  taking negative target / input lengths silently (an inf loss; torch: "Expected
  target_lengths to have value at least 0, but got value -1 ..."), padded targets with a wrong
  batch size leaking a broadcast error, log-probabilities of other ranks with ember's own
  text (torch unsqueezes as if unbatched: "Expected 3-dimensional tensor, but got
  5-dimensional tensor for argument #1 'log_probs' ...", an IndexError on a 0-d input), and
  half / bfloat16 log-probabilities accepted (torch's kernel: float32 and float64 only);
* a packed LSTM under cpu autocast running in bfloat16 (torch's ``lstm.data`` overload is not
  an autocast op: the packed output stays float32; the padded one runs in the lower dtype);
* the anomaly-mode forward traceback of a script run by ``ember run`` listing the runner's
  frames (runpy, ember's __main__, dropin) before the script's own;
* MultiheadAttention (self-attention, boolean masks, need_weights=False) and
  TransformerEncoderLayer in torch's inference fast path giving numbers for a query whose
  every key is masked (an all-padding sequence, a fully masked attn_mask row); torch's fused
  kernels give NaN there (the composite path and the nested-tensor encoder give numbers);
* TransformerEncoder's inference path over a padding mask (torch's nested tensors) without
  torch's once-a-process warning that the nested-tensor API is a prototype;
* a sparse gradient (Embedding(sparse=True)) accumulated into a sparse .grad as a new
  tensor (torch adds it in place: a held .grad sees the sum);
* the grad_fn of pack_padded_sequence's data (torch: PackPaddedSequenceBackward0), of
  pad_sequence's and pad_packed_sequence's results (torch: CopySlices, TransposeBackward0 with
  batch_first, IndexSelectBackward0 when unsorting) named after ember's gathers and views.

Left: topk's order among tied values (torch's partial sort picks other indices), the RNG
streams (randperm / rand / multinomial draw other numbers for the same seed), a sparse
nn.Parameter (SparseAdam's "requires dense parameter tensors" check is never reached),
clip_grad_norm_ of a sparse gradient (ember's NonStridedError text), the nnz and index order
of an accumulated sparse gradient (torch concatenates, ember merges), fp16 autocast of an
LSTM (torch's oneDNN error), torch.jit.script returning the module itself, checkpoints written by
ember.save read by torch.load (ember writes safetensors / its own pickle, not torch's zip).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly

_R = np.random.default_rng(106)
_LP = np.log(_R.dirichlet(np.ones(5), size=(10, 3)))  # (T, N, C) log-probabilities
_TG = np.array([[1, 2, 2], [3, 1, 0], [4, 0, 0]])


def _outcome(fn):
    """fn(torch) and fn(ember) end alike: the same error (type and text), or equal results."""
    (te, tr), (ee, er) = run_quietly(fn, torch), run_quietly(fn, ember)
    assert (type(ee).__name__, str(ee)) == (type(te).__name__, str(te))
    return tr, er


def _ctc(m, lp=None, tg=None, il=(10, 8, 6), tl=(3, 2, 1), dtype="float32", **kw):
    lp = m.tensor(_LP if lp is None else lp, dtype=getattr(m, dtype))
    tg = m.tensor(_TG if tg is None else tg)
    il = m.tensor(il) if isinstance(il, tuple) else il
    tl = m.tensor(tl) if isinstance(tl, tuple) else tl
    return m.nn.functional.ctc_loss(lp, tg, il, tl, **kw)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: _ctc(m, tl=(-1, 2, 1)),
        lambda m: _ctc(m, tl=(3, 2, -2)),
        lambda m: _ctc(m, tg=[1, 2], tl=(-1, 2, 1)),  # concatenated targets
        lambda m: _ctc(m, il=(10, -1, 6)),
        lambda m: _ctc(m, il=(11, -1, 6)),  # the first bad length, in batch order
        lambda m: _ctc(m, il=(11, 1, 6), tl=(-1, 2, 1)),  # the target lengths first
        lambda m: _ctc(m, il=[10, -8, 6], tl=[1, 2, 1]),  # int lists
        lambda m: _ctc(m, tl=(-1, 5, 1)),  # a negative length before the targets' size
        lambda m: _ctc(m, tg=_TG[:2]),  # padded targets of another batch size
        lambda m: _ctc(m, tg=_TG[:2], tl=(1, -1, 1)),
        lambda m: _ctc(m, lp=_LP[None]),  # 4-d
        lambda m: _ctc(m, lp=_LP[:, 0, 0]),  # 1-d
        lambda m: _ctc(m, lp=_LP[0, 0, 0], il=[1], tl=[1]),  # 0-d
        lambda m: _ctc(m, lp=_LP[None], il=m.tensor([10.0, 8, 6])),  # the lengths' dtype first
        lambda m: _ctc(m, lp=_LP[None], blank=7),
        lambda m: _ctc(m, lp=_LP[None], dtype="int64"),  # the dtype before the rank
        lambda m: _ctc(m, tg=_TG.reshape(3, 3, 1), blank=7),  # the targets' dims before blank
        lambda m: _ctc(m, tg=_TG.reshape(3, 3, 1), il=(10, 8)),
        lambda m: _ctc(m, dtype="int64", il=(10, 8)),
        lambda m: _ctc(m, lp=_LP[:, 0], tg=_TG[0], il=[-1], tl=[3]),  # unbatched
        lambda m: _ctc(m, lp=_LP[:, 0], tg=_TG[0], il=[10], tl=[-3]),
        lambda m: _ctc(m, dtype="float16"),
        lambda m: _ctc(m, dtype="bfloat16"),
        lambda m: _ctc(m, dtype="float64", reduction="none"),
        lambda m: _ctc(m, tg=[1, 2, 2, 3, 1, 4], reduction="sum"),
    ],
)
def test_ctc_loss_argument_checks(call):
    tr, er = _outcome(call)
    if tr is not None:
        assert er.dtype == getattr(ember, str(tr.dtype).split(".")[1])
        np.testing.assert_allclose(er.detach().numpy(), tr.detach().numpy(), rtol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("packed", [False, True])
def test_recurrent_layer_dtype_under_cpu_autocast(mode, packed):
    x = _R.standard_normal((4, 2, 8))

    def run(m):
        m.manual_seed(0)
        layer = getattr(m.nn, mode)(8, 4)
        inp = m.tensor(x, dtype=m.float32)
        if packed:
            inp = m.nn.utils.rnn.pack_padded_sequence(inp, m.tensor([4, 2]))
        with m.autocast("cpu", dtype=m.bfloat16):
            out, h = layer(inp)
        h = h[0] if isinstance(h, tuple) else h
        return str((out.data if packed else out).dtype), str(h.dtype)

    tr, er = _outcome(run)
    assert er == tuple(s.replace("torch.", "ember.") for s in tr)


def _grad_fn_names(m):
    rnn = m.nn.utils.rnn
    x = m.tensor(_R.standard_normal((3, 2, 4)), requires_grad=True)
    xb = m.tensor(_R.standard_normal((2, 3, 4)), requires_grad=True)
    p = rnn.pack_padded_sequence(x, m.tensor([3, 2]))
    pu = rnn.pack_padded_sequence(x, m.tensor([2, 3]), enforce_sorted=False)
    outs = [
        p.data,
        rnn.pack_padded_sequence(xb, m.tensor([3, 2]), batch_first=True).data,
        pu.data,
        rnn.pack_sequence([x[:, 0], x[:2, 1]]).data,
        rnn.pad_packed_sequence(p)[0],
        rnn.pad_packed_sequence(p, batch_first=True)[0],
        rnn.pad_packed_sequence(p, total_length=5)[0],
        rnn.pad_packed_sequence(pu)[0],
        rnn.pad_packed_sequence(pu, batch_first=True)[0],
        rnn.pad_sequence([x[0], x[1]]),
        rnn.pad_sequence([x[0], x[1][:1]], batch_first=True, padding_side="left"),
        rnn.pad_sequence([x[0].detach(), x[1]]),
        *rnn.unpack_sequence(pu),
    ]
    return [type(t.grad_fn).__name__ for t in outs]


def test_packing_grad_fn_names():
    assert _grad_fn_names(ember) == _grad_fn_names(torch)


def test_packing_gradients_unchanged():
    # the renamed nodes still carry the gathers' gradients
    def run(m):
        rnn = m.nn.utils.rnn
        x = m.tensor(_R.standard_normal((3, 2, 4)), requires_grad=True)
        pu = rnn.pack_padded_sequence(x, m.tensor([2, 3]), enforce_sorted=False)
        out = rnn.pad_packed_sequence(pu, batch_first=True)[0]
        seq = rnn.pad_sequence([x[0], x[1, :1]], padding_side="left")
        loss = (out * m.arange(24.0, dtype=m.float64).reshape(2, 3, 4)).sum() + seq.pow(2).sum()
        (g,) = m.autograd.grad(loss, x)
        return g.numpy()

    state = _R.bit_generator.state
    want = run(torch)
    _R.bit_generator.state = state
    np.testing.assert_allclose(run(ember), want, rtol=1e-12)


_ANOMALY_SCRIPT = """\
import warnings

import torch

warnings.simplefilter("always")


def forward(x):
    return torch.sqrt(x - 2).sum()


with torch.autograd.detect_anomaly():
    try:
        forward(torch.ones(2, requires_grad=True)).backward()
    except RuntimeError:
        pass
"""


def _forward_frames(stderr: str) -> list[str]:
    """The 'File ..., line ..., in ...' lines of the anomaly warning's forward traceback."""
    lines = stderr.split("Traceback of forward call that caused the error:\n", 1)[1].splitlines()
    return [ln.strip() for ln in lines if ln.startswith('  File "')]


def _run_both(tmp_path, text: str) -> list:
    """``text`` run as a script under torch (``python``) and under ember (``ember run``)."""
    script = tmp_path / "script.py"
    script.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    runs = [
        subprocess.run(
            cmd, check=False, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
        )
        for cmd in (
            [sys.executable, str(script)],
            [sys.executable, "-m", "ember", "run", str(script)],
        )
    ]
    assert [r.returncode for r in runs] == [0, 0], [r.stderr[-2000:] for r in runs]
    return runs


def test_anomaly_trace_under_dropin_starts_at_the_script(tmp_path):
    # `ember run script.py`: the forward traceback shows the script's frames, as under
    # `python script.py`, not the drop-in runner's
    want, got = (_forward_frames(r.stderr) for r in _run_both(tmp_path, _ANOMALY_SCRIPT))
    assert want and got == want


_NESTED_SCRIPT = """import warnings

import torch
import torch.nn as nn

layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
enc = nn.TransformerEncoder(layer, 2).eval()
src = torch.zeros(2, 4, 8)
kpm = torch.tensor([[False] * 4, [False, False, True, True]])
for _ in range(3):
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        enc(src, src_key_padding_mask=kpm)
    print([(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught])
"""


def test_nested_tensor_warning_once_a_process(tmp_path):
    # the encoder's inference path over a padding mask builds a nested tensor: torch warns
    # that their API is a prototype, once a process
    want, got = (r.stdout for r in _run_both(tmp_path, _NESTED_SCRIPT))
    assert "prototype stage" in want and got == want


_SRC = _R.standard_normal((2, 4, 8))
_ALL_PAD = [[False] * 4, [True] * 4]
_ROW2 = [[False] * 4, [False] * 4, [True] * 4, [False] * 4]  # query 2 sees no key


def _attention_module(m, kind, batch_first=True, heads=2, bias=True):
    rng = np.random.default_rng(7)
    if kind == "mha":
        mod = m.nn.MultiheadAttention(8, heads, batch_first=batch_first, bias=bias)
    else:
        mod = m.nn.TransformerEncoderLayer(8, heads, 16, dropout=0.0, batch_first=batch_first)
    for p in mod.parameters():
        p.data.copy_(m.tensor(rng.normal(0, 0.3, tuple(p.shape)), dtype=m.float32))
    return mod.eval()


def _nan_rows(out):
    return np.isnan(out.detach().numpy()).any(-1).tolist()


@pytest.mark.parametrize(
    "case",
    [
        "kpm",
        "attn",
        "attn3d",
        "both",
        "need_weights",
        "float_kpm",
        "not_self",
        "train",
        "grad",
        "odd_heads",
        "no_bias",
        "layer_kpm",
        "layer_attn",
        "layer_both",
        "layer_train",
        "encoder_nested",
        "encoder_plain",
    ],
)
def test_fused_inference_attention_nan_rows(case):
    # torch's inference fast paths (native MHA, the fused encoder layer) leave NaN in the rows
    # of queries whose every key is masked; the composite path (sdpa) gives numbers
    def run(m):
        src = m.tensor(_SRC, dtype=m.float32)
        kpm, row2 = m.tensor(_ALL_PAD), m.tensor(_ROW2)
        am3 = m.zeros(4, 4, 4, dtype=m.bool)
        am3[1, 3] = True  # batch 0, head 1, query 3
        kind = "layer" if case.startswith(("layer", "encoder")) else "mha"
        mod = _attention_module(
            m, kind, heads=1 if case == "odd_heads" else 2, bias=case != "no_bias"
        )
        if case.endswith("train"):
            mod.train()
        if kind == "mha":
            kw = {"need_weights": case == "need_weights"}
            kw.update(
                {
                    "attn": {"attn_mask": row2},
                    "attn3d": {"attn_mask": am3},
                    "both": {"attn_mask": row2, "key_padding_mask": kpm},
                    "float_kpm": {"key_padding_mask": m.zeros(2, 4).masked_fill(kpm, -np.inf)},
                }.get(case, {"key_padding_mask": kpm})
            )
            kv = src.clone() if case == "not_self" else src
            if case == "grad":
                return _nan_rows(mod(src, src, src, **kw)[0])
            with m.no_grad():
                return _nan_rows(mod(src, kv, kv, **kw)[0])
        if case.startswith("encoder"):
            mod = m.nn.TransformerEncoder(
                mod, 2, enable_nested_tensor=case == "encoder_nested"
            ).eval()
        kw = {
            "layer_attn": {"src_mask": row2},
            "layer_both": {"src_mask": row2, "src_key_padding_mask": kpm},
        }.get(case, {"src_key_padding_mask": kpm})
        if case.startswith("encoder"):
            kw = {"src_key_padding_mask": kpm}
        with m.no_grad():
            return _nan_rows(mod(src, **kw))

    tr, er = _outcome(run)
    assert er == tr


def test_sparse_grad_accumulates_in_place():
    # word2vec-style gradient accumulation over two backward calls: torch adds the second
    # sparse gradient into the held sparse .grad (the same object)
    def run(m):
        m.manual_seed(0)
        e = m.nn.Embedding(5, 2, sparse=True)
        with m.no_grad():
            e.weight.copy_(m.tensor(_R.standard_normal((5, 2)), dtype=m.float32))
        e(m.tensor([1])).sum().backward()
        held = e.weight.grad
        (e(m.tensor([1, 3])) * 2).sum().backward()
        return e.weight.grad is held, held.to_dense().tolist(), e.weight.grad.is_sparse

    state = _R.bit_generator.state
    want = run(torch)
    _R.bit_generator.state = state
    assert run(ember) == want
