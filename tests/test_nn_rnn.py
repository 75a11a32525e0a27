"""nn.RNN / LSTM / GRU and their cells vs torch: outputs, hidden states, every parameter gradient
(non-uniform upstream gradient) across the options; gradcheck of the fused layer op; torch
state_dicts; default init; names; torch's errors; the dispatch check on the strict backend."""

import math
import re
import warnings

import ember
import numpy as np
import pytest
from ember.core.ops.recurrent import _rnn_layer
from harness import A, Case, needs_torch, raises_like_torch, run_case, run_gradcheck
from nn_harness import check_module, copy_state

try:
    import torch
except ImportError:  # pragma: no cover - parity checks skip without the oracle
    torch = None

T, B, I, H = 5, 3, 4, 6


def _fw(m):
    """ember or torch, from a module instance or tensor of either."""
    return torch if torch is not None and isinstance(m, (torch.nn.Module, torch.Tensor)) else ember


def _flat_call(mod, *inputs):
    """Run a recurrent module; flatten (output, h_n) / (output, (h_n, c_n)) into a tuple."""
    out, hid = mod(*inputs)
    hid = tuple(hid) if isinstance(hid, tuple) else (hid,)
    return (out, *hid)


def _lstm_states(mod, x, h0, c0):
    return _flat_call(mod, x, (h0, c0))


def _packed_call(lengths, batch_first=False, states=None):
    def call(mod, x, *hs):
        fw = _fw(mod)
        p = fw.nn.utils.rnn.pack_padded_sequence(
            x, lengths, batch_first=batch_first, enforce_sorted=False
        )
        if states == "lstm":
            out, hid = mod(p, (hs[0], hs[1]))
        elif states == "h":
            out, hid = mod(p, hs[0])
        else:
            out, hid = mod(p)
        pad, _lens = fw.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)
        hid = tuple(hid) if isinstance(hid, tuple) else (hid,)
        return (pad, *hid)

    return call


def _ctor(kind, **kw):
    def make(m):
        if kind == "LSTM":
            return m.nn.LSTM(I, H, **kw)
        if kind == "GRU":
            return m.nn.GRU(I, H, **kw)
        return m.nn.RNN(I, H, nonlinearity=kind, **kw)

    return make


KINDS = ["LSTM", "GRU", "tanh", "relu"]
OPTIONS = {
    "default": {},
    "layers2": {"num_layers": 2},
    "bidir": {"bidirectional": True},
    "batch_first": {"batch_first": True},
    "nobias": {"bias": False},
    "deep_bidir_bf": {"num_layers": 2, "bidirectional": True, "batch_first": True},
    "dropout_eval": {"num_layers": 2, "dropout": 0.3},
}


def _x(kw):
    return A(B, T, I) if kw.get("batch_first") else A(T, B, I)


@needs_torch
@pytest.mark.parametrize("opt", OPTIONS, ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_module_parity(kind, opt):
    kw = OPTIONS[opt]
    train = "dropout" not in kw  # dropout > 0 in eval mode equals dropout 0
    check_module(_ctor(kind, **kw), [_x(kw)], call=_flat_call, train=train)


@needs_torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bidir", [False, True])
def test_initial_states(kind, bidir):
    D = 2 if bidir else 1
    kw = {"num_layers": 2, "bidirectional": bidir}
    if kind == "LSTM":
        ins = [A(T, B, I), A(2 * D, B, H, seed=1), A(2 * D, B, H, seed=2)]
        check_module(_ctor(kind, **kw), ins, call=_lstm_states)
    else:
        check_module(_ctor(kind, **kw), [A(T, B, I), A(2 * D, B, H, seed=1)], call=_flat_call)


@needs_torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("with_h", [False, True])
def test_unbatched(kind, with_h):
    kw = {"bidirectional": True}
    ins = [A(T, I)]
    call = _flat_call
    if with_h:
        ins.append(A(2, H, seed=1))
        if kind == "LSTM":
            ins.append(A(2, H, seed=2))
            call = _lstm_states
    check_module(_ctor(kind, **kw), ins, call=call)


@needs_torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bf", [False, True])
def test_packed_input(kind, bf):
    lengths = [3, 5, 1]  # unsorted: exercises sorted_indices / unsorted_indices
    kw = {"num_layers": 2, "bidirectional": True, "batch_first": bf}
    x = A(B, T, I) if bf else A(T, B, I)
    if kind == "LSTM":
        ins, st = [x, A(4, B, H, seed=1), A(4, B, H, seed=2)], "lstm"
    else:
        ins, st = [x, A(4, B, H, seed=1)], "h"
    check_module(_ctor(kind, **kw), ins, call=_packed_call(lengths, bf, st))


@needs_torch
def test_packed_without_states_and_output_type():
    check_module(_ctor("GRU"), [A(T, B, I)], call=_packed_call([5, 4, 2]))
    m = ember.nn.LSTM(I, H)
    p = ember.nn.utils.rnn.pack_sequence([ember.randn(4, I), ember.randn(2, I)])
    out, (h, _c) = m(p)
    assert isinstance(out, ember.nn.utils.rnn.PackedSequence)
    assert out.data.shape == (6, H) and out.batch_sizes.tolist() == [2, 2, 1, 1]
    assert h.shape == (1, 2, H)


@needs_torch
@pytest.mark.parametrize(
    "kw",
    [
        {"proj_size": 3},
        {"proj_size": 2, "num_layers": 2, "bidirectional": True, "batch_first": True},
    ],
    ids=["proj", "proj_deep_bidir"],
)
def test_lstm_proj(kw):
    check_module(_ctor("LSTM", **kw), [_x(kw)], call=_flat_call)
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1) * D
    ins = [_x(kw), A(L, B, kw["proj_size"], seed=1), A(L, B, H, seed=2)]
    check_module(_ctor("LSTM", **kw), ins, call=_lstm_states, dtypes=("float64",))


@needs_torch
def test_lstm_proj_packed():
    kw = {"proj_size": 2, "bidirectional": True}
    check_module(_ctor("LSTM", **kw), [A(T, B, I)], call=_packed_call([2, 5, 3]))


@needs_torch
def test_dropout_train_changes_output_and_eval_does_not():
    ember.manual_seed(0)
    m = ember.nn.LSTM(I, H, num_layers=2, dropout=0.5)
    x = ember.randn(T, B, I)
    a = m(x)[0]
    b = m(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())


# ---------------------------------------------------------------------- cells
CELLS = {
    "RNNCell": lambda m, **kw: m.nn.RNNCell(I, H, **kw),
    "RNNCell_relu": lambda m, **kw: m.nn.RNNCell(I, H, nonlinearity="relu", **kw),
    "LSTMCell": lambda m, **kw: m.nn.LSTMCell(I, H, **kw),
    "GRUCell": lambda m, **kw: m.nn.GRUCell(I, H, **kw),
}


def _cell_call(mod, *ins):
    out = mod(*ins) if len(ins) < 3 else mod(ins[0], (ins[1], ins[2]))
    return tuple(out) if isinstance(out, tuple) else out


@needs_torch
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("name", CELLS)
def test_cell_parity(name, bias):
    ctor = lambda m: CELLS[name](m, bias=bias)
    check_module(ctor, [A(B, I)], call=_cell_call)
    if name == "LSTMCell":
        check_module(ctor, [A(B, I), A(B, H, seed=1), A(B, H, seed=2)], call=_cell_call)
        check_module(ctor, [A(I), A(H, seed=1), A(H, seed=2)], call=_cell_call)
    else:
        check_module(ctor, [A(B, I), A(B, H, seed=1)], call=_cell_call)
        check_module(ctor, [A(I), A(H, seed=1)], call=_cell_call)
    check_module(ctor, [A(I)], call=_cell_call, dtypes=("float32",))


CELL_FNS = [
    Case(
        "lstm_cell",
        lambda m, x, h, c, wi, wh, bi, bh: m.lstm_cell(x, (h, c), wi, wh, bi, bh),
        [A(2, 3), A(2, 4, seed=1), A(2, 4, seed=2), A(16, 3), A(16, 4), A(16), A(16)],
    ),
    Case(
        "gru_cell",
        lambda m, x, h, wi, wh, bi, bh: m.gru_cell(x, h, wi, wh, bi, bh),
        [A(2, 3), A(2, 4, seed=1), A(12, 3), A(12, 4), A(12), A(12)],
    ),
    Case(
        "gru_cell_nobias",
        lambda m, x, h, wi, wh: m.gru_cell(x, h, wi, wh),
        [A(2, 3), A(2, 4, seed=1), A(12, 3), A(12, 4)],
    ),
    *(
        Case(
            name,
            lambda m, x, h, wi, wh, bi, bh, name=name: getattr(m, name)(x, h, wi, wh, bi, bh),
            [A(2, 3), A(2, 4, seed=1), A(4, 3), A(4, 4), A(4), A(4)],
        )
        for name in ("rnn_tanh_cell", "rnn_relu_cell")
    ),
]


@needs_torch
@pytest.mark.parametrize("case", CELL_FNS, ids=str)
def test_cell_functions_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", CELL_FNS, ids=str)
def test_cell_functions_gradgradcheck(case):
    run_gradcheck(case, gradgrad=True)


# ---------------------------------------------------------------------- the fused op
def _layer_inputs(mode, proj, packed, seed=0):
    r = np.random.default_rng(seed)
    g = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    Hh, P, Tn, Bn, In = 3, (2 if proj else 3), 3, 2, 2
    bs = (2, 2, 1) if packed else None
    x = r.uniform(-1, 1, (sum(bs), In) if packed else (Tn, Bn, In))
    arrs = [x, r.uniform(-1, 1, (Bn, P))]
    if mode == "LSTM":
        arrs.append(r.uniform(-1, 1, (Bn, Hh)))
    arrs += [r.uniform(-1, 1, (g * Hh, In)), r.uniform(-1, 1, (g * Hh, P))]
    arrs += [r.uniform(-1, 1, (g * Hh,)), r.uniform(-1, 1, (g * Hh,))]
    if proj:
        arrs.append(r.uniform(-1, 1, (P, Hh)))
    return [ember.tensor(a, requires_grad=True) for a in arrs], bs


LAYER_CASES = [
    (mode, proj, packed, rev)
    for mode in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU")
    for proj in ((False, True) if mode == "LSTM" else (False,))
    for packed in (False, True)
    for rev in (False, True)
]


@pytest.mark.parametrize("mode,proj,packed,rev", LAYER_CASES)
def test_fused_layer_gradcheck(mode, proj, packed, rev):
    ins, bs = _layer_inputs(mode, proj, packed)

    def f(*ts):
        return _rnn_layer(list(ts), mode=mode, has_proj=proj, batch_sizes=bs, reverse=rev, ws=[])

    assert ember.autograd.gradcheck(f, ins, atol=1e-6, rtol=1e-4)


def test_fused_layer_double_backward_raises():
    # the bare op with a plain workspace list has no double backward; the modules pass a
    # Reserve, whose create_graph backward is differentiable (test_parity_wave38.py)
    ins, _bs = _layer_inputs("LSTM", False, False)
    out = _rnn_layer(ins, mode="LSTM", ws=[])
    (g,) = ember.autograd.grad(out[0].sum(), ins[0], create_graph=True)
    with pytest.raises(RuntimeError, match="double backward through a fused LSTM layer"):
        g.sum().backward()
    # first-order gradients with create_graph=True are still right
    out2 = _rnn_layer(ins, mode="LSTM", ws=[])
    (g1,) = ember.autograd.grad(out2[0].sum(), ins[0])
    np.testing.assert_allclose(g.detach().numpy(), g1.numpy())


def test_fused_layer_without_workspace_has_no_backward():
    ins, _bs = _layer_inputs("GRU", False, False)
    out = _rnn_layer(ins, mode="GRU")
    with pytest.raises(RuntimeError, match="saved state is missing"):
        out[0].sum().backward()


def test_no_grad_forward_matches():
    m = ember.nn.GRU(I, H, num_layers=2, bidirectional=True)
    x = ember.randn(T, B, I)
    a = m(x)[0]
    with ember.no_grad():
        b = m(x)[0]
    np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    assert not b.requires_grad


# ---------------------------------------------------------------------- state dicts and init
@needs_torch
@pytest.mark.parametrize("kind", KINDS)
def test_torch_state_dict_loads(kind):
    kw = {"num_layers": 2, "bidirectional": True, "batch_first": True}
    if kind == "LSTM":
        kw["proj_size"] = 4
    torch.manual_seed(3)
    tm = _ctor(kind, **kw)(torch)
    em = _ctor(kind, **kw)(ember)
    sd = {k: v.detach().numpy() for k, v in tm.state_dict().items()}
    assert list(em.state_dict()) == list(sd)
    em.load_state_dict({k: ember.tensor(v) for k, v in sd.items()})
    x = np.random.default_rng(0).standard_normal((B, T, I)).astype(np.float32)
    to, th = tm(torch.tensor(x))
    eo, eh = em(ember.tensor(x))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    th = th if isinstance(th, tuple) else (th,)
    eh = eh if isinstance(eh, tuple) else (eh,)
    for a, b in zip(eh, th):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    # and back: ember's state_dict loads into torch
    tm2 = _ctor(kind, **kw)(torch)
    tm2.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in em.state_dict().items()})
    np.testing.assert_allclose(tm2(torch.tensor(x))[0].detach().numpy(), to.detach().numpy())


@needs_torch
@pytest.mark.parametrize(
    "ctor",
    [
        lambda m: m.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2),
        lambda m: m.nn.GRU(3, 5, bias=False),
        lambda m: m.nn.RNN(3, 5, 3, "relu"),
        lambda m: m.nn.LSTMCell(3, 5),
        lambda m: m.nn.GRUCell(3, 5, bias=False),
        lambda m: m.nn.RNNCell(3, 5, nonlinearity="relu"),
    ],
)
def test_parameter_names_shapes_order_and_repr(ctor):
    tm, em = ctor(torch), ctor(ember)
    tn = [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    en = [(n, tuple(p.shape)) for n, p in em.named_parameters()]
    assert en == tn
    assert repr(em) == repr(tm)


def test_default_init_distribution():
    ember.manual_seed(0)
    m = ember.nn.LSTM(64, 100, num_layers=2)
    bound = 1 / math.sqrt(100)
    vals = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert vals.min() >= -bound and vals.max() <= bound
    assert abs(vals.std() - bound / math.sqrt(3)) < 0.02 * bound
    c = ember.nn.GRUCell(8, 25)
    assert all(np.abs(p.detach().numpy()).max() <= 0.2 for p in c.parameters())


@needs_torch
def test_all_weights_flatten_parameters_and_flat_names():
    em = ember.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    tm = torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    assert em._flat_weights_names == tm._flat_weights_names
    aw = em.all_weights
    assert len(aw) == 4 and all(len(w) == 5 for w in aw)
    assert aw[1][0] is em.weight_ih_l0_reverse
    assert em.flatten_parameters() is None
    assert [tuple(p.shape) for p in em._flat_weights] == [tuple(p.shape) for p in tm._flat_weights]


def test_dropout_warning_and_rnn_positional_nonlinearity():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ember.nn.LSTM(4, 5, dropout=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.nn.LSTM(4, 5, num_layers=2, dropout=0.5)
    m = ember.nn.RNN(4, 5, 2, "relu")
    assert m.mode == "RNN_RELU" and m.nonlinearity == "relu" and m.num_layers == 2


# ---------------------------------------------------------------------- names (spec 4.3)
def test_names_batch_time_kept_and_grads_named():
    m = ember.nn.LSTM(I, H, batch_first=True, bidirectional=True)
    x = ember.randn(B, T, I).rename("N", "T", "C")
    out, (h, c) = m(x)
    assert out.names == ("N", "T", "C")
    assert h.names == (None, "N", "C") and c.names == (None, "N", "C")
    out.sum().backward()
    assert m.weight_ih_l0.grad.names == (None, None)
    g = ember.nn.GRU(I, H)
    g.weight_ih_l0 = ember.nn.Parameter(g.weight_ih_l0.detach().rename("G", "C"))
    g.weight_hh_l0 = ember.nn.Parameter(g.weight_hh_l0.detach().rename("G", "H"))
    y, hn = g(ember.randn(T, B, I).rename("T", "N", "C"))
    assert y.names == ("T", "N", "H") and hn.names == (None, "N", "H")
    y.sum().backward()
    assert g.weight_ih_l0.grad.names == ("G", "C")
    assert g.weight_hh_l0.grad.names == ("G", "H")
    with pytest.raises(RuntimeError, match="features dim 'D' does not match"):
        g(ember.randn(T, B, I).rename("T", "N", "D"))


# ---------------------------------------------------------------------- errors (torch's)
ERRORS = [
    (lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 3)), RuntimeError, "input.size(-1) must be equal"),
    (lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 4, 1)), ValueError, "LSTM: Expected input to be 2D"),
    (lambda m: m.nn.GRU(4, 5)(m.randn(3, 2, 4, 1)), ValueError, "GRU: Expected input to be 2D"),
    (
        lambda m: m.nn.RNN(4, 5)(m.randn(1, 3, 2, 4, 1)),
        ValueError,
        "RNN: Expected input to be 2D or 3D, got 5D tensor instead",
    ),
    (
        lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 4), (m.randn(1, 3, 5), m.randn(1, 2, 5))),
        RuntimeError,
        "Expected hidden[0] size (1, 2, 5), got [1, 3, 5]",
    ),
    (
        lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 4), (m.randn(1, 2, 5), m.randn(1, 3, 5))),
        RuntimeError,
        "Expected hidden[1] size (1, 2, 5), got [1, 3, 5]",
    ),
    (
        lambda m: m.nn.LSTM(4, 5, proj_size=2)(
            m.randn(3, 2, 4), (m.randn(1, 2, 5), m.randn(1, 2, 5))
        ),
        RuntimeError,
        "Expected hidden[0] size (1, 2, 2), got [1, 2, 5]",
    ),
    (
        lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 4), (m.randn(2, 5), m.randn(1, 2, 5))),
        RuntimeError,
        "For batched 3-D input, hx and cx should also be 3-D but got (2-D, 3-D) tensors",
    ),
    (
        lambda m: m.nn.LSTM(4, 5)(m.randn(3, 4), (m.randn(1, 2, 5), m.randn(1, 2, 5))),
        RuntimeError,
        "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors",
    ),
    (
        lambda m: m.nn.GRU(4, 5)(m.randn(3, 2, 4), m.randn(1, 3, 5)),
        RuntimeError,
        "Expected hidden size (1, 2, 5), got [1, 3, 5]",
    ),
    (
        lambda m: m.nn.GRU(4, 5)(m.randn(3, 2, 4), m.randn(3, 5)),
        RuntimeError,
        "For batched 3-D input, hx should also be 3-D but got 2-D tensor",
    ),
    (
        lambda m: m.nn.RNN(4, 5)(m.randn(3, 4), m.randn(1, 3, 5)),
        RuntimeError,
        "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor",
    ),
    (
        lambda m: m.nn.LSTM(4, 5)(m.randn(3, 2, 4, dtype=m.float64)),
        ValueError,
        "does not match weight dtype",
    ),
    (lambda m: m.nn.RNN(4, 5, nonlinearity="foo"), ValueError, "Unknown nonlinearity 'foo'"),
    (lambda m: m.nn.GRU(4, 5, proj_size=2), ValueError, "proj_size argument is only supported"),
    (lambda m: m.nn.RNN(4, 5, proj_size=2), ValueError, "proj_size argument is only supported"),
    (lambda m: m.nn.LSTM(4, 5, proj_size=5), ValueError, "proj_size has to be smaller"),
    (lambda m: m.nn.LSTM(4, 5, proj_size=-1), ValueError, "proj_size should be a positive"),
    (lambda m: m.nn.LSTM(4, 5.0), TypeError, "hidden_size should be of type int, got: float"),
    (lambda m: m.nn.LSTM(4, 0), ValueError, "hidden_size must be greater than zero"),
    (lambda m: m.nn.LSTM(4, 5, num_layers=0), ValueError, "num_layers must be greater than zero"),
    (lambda m: m.nn.LSTM(4, 5, dropout=2), ValueError, "dropout should be a number in range"),
    (lambda m: m.nn.LSTM(4, 5, dropout=True), ValueError, "dropout should be a number in range"),
    (
        lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 4, 1)),
        ValueError,
        "LSTMCell: Expected input to be 1D or 2D, got 3D instead",
    ),
    (
        lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 3)),
        RuntimeError,
        "input has inconsistent input_size: got 3 expected 4",
    ),
    (
        lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 4), (m.randn(2, 5), m.randn(3, 5))),
        RuntimeError,
        "Input batch size 3 doesn't match hidden0 batch size 2",
    ),
    (
        lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 4), (m.randn(3, 6), m.randn(3, 5))),
        RuntimeError,
        "hidden0 has inconsistent hidden_size: got 6, expected 5",
    ),
    (
        lambda m: m.nn.LSTMCell(4, 5)(m.randn(3, 4), (m.randn(3, 5, 1), m.randn(3, 5))),
        ValueError,
        "LSTMCell: Expected hx[0] to be 1D or 2D, got 3D instead",
    ),
    (
        lambda m: m.nn.GRUCell(4, 5)(m.randn(3, 4), m.randn(3, 5, 1)),
        ValueError,
        "GRUCell: Expected hidden to be 1D or 2D, got 3D instead",
    ),
    (
        lambda m: m.nn.RNNCell(4, 5)(m.randn(3, 4, 1)),
        ValueError,
        "RNNCell: Expected input to be 1D or 2D, got 3D instead",
    ),
    (
        lambda m: m.nn.RNNCell(4, 5, nonlinearity="foo")(m.randn(3, 4)),
        RuntimeError,
        "Unknown nonlinearity: foo",
    ),
    (
        lambda m: m.lstm_cell(m.randn(3, 4), (m.randn(3, 5),), m.randn(20, 4), m.randn(20, 5)),
        RuntimeError,
        "lstm_cell expects two hidden states",
    ),
    (
        lambda m: m.lstm_cell(
            m.randn(3, 4), (m.randn(3, 5), m.randn(3, 6)), m.randn(20, 4), m.randn(20, 5)
        ),
        RuntimeError,
        "hidden1 has inconsistent hidden_size: got 6, expected 5",
    ),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_like_torch(k):
    fn, exc, msg = ERRORS[k]
    if "dtype" in msg:  # torch prints its own dtype names (torch.float64 vs ember.float64)
        with pytest.raises(exc, match=re.escape(msg)):
            fn(ember)
        if torch is not None:
            with pytest.raises(exc, match=re.escape(msg)):
                fn(torch)
        return
    raises_like_torch(fn, exc, msg)


# ---------------------------------------------------------------------- dispatch discipline
DEVICE_LAYERS = {
    "lstm-2-layer-bidirectional-proj": lambda: ember.nn.LSTM(
        I, H, num_layers=2, bidirectional=True, proj_size=2
    ),
    # no projection: on a GPU the fused step kernels of core/kernels/fused_rnn.py run
    "lstm-2-layer-bidirectional": lambda: ember.nn.LSTM(I, H, num_layers=2, bidirectional=True),
    "gru": lambda: ember.nn.GRU(I, H, batch_first=True),
    "rnn-relu": lambda: ember.nn.RNN(I, H, nonlinearity="relu"),
}


def test_strict_backend_dispatch():
    from strict_backend import StrictArray, strict_cuda

    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((T, B, I))
    for ctor in DEVICE_LAYERS.values():
        ember.manual_seed(0)
        ref = ctor().double()
        ember.manual_seed(0)
        dev = ctor().double()
        x = ember.tensor(x_np, requires_grad=True)
        out = ref(x)[0]
        out.sum().backward()
        with strict_cuda():
            dev = dev.to("cuda")
            xd = ember.tensor(x_np, device="cuda", requires_grad=True)
            od = dev(xd)[0]
            assert type(od._data) is StrictArray
            od.sum().backward()
            assert type(xd.grad._data) is StrictArray
            for p in dev.parameters():
                assert type(p.grad._data) is StrictArray
            # packed sequences on the device too
            p = ember.nn.utils.rnn.pack_padded_sequence(xd.detach(), [5, 3, 2])
            assert type(dev(p)[0].data._data) is StrictArray
            np.testing.assert_allclose(od.detach().cpu().numpy(), out.detach().numpy())
            gd = [q.grad.cpu().numpy() for q in dev.parameters()]
        for a, q in zip(gd, ref.parameters()):
            np.testing.assert_allclose(a, q.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no GPU with cupy")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layer", sorted(DEVICE_LAYERS))
def test_real_cuda_matches_cpu(layer, dtype):
    # outputs, states and every gradient of a layer on the GPU (padded and packed input) equal
    # the cpu's, with a non-uniform upstream gradient
    x_np = np.random.default_rng(0).standard_normal((T, B, I)).astype(dtype)
    results = []
    for device in ("cpu", "cuda"):
        ember.manual_seed(0)
        mod = DEVICE_LAYERS[layer]().to(device=device, dtype=getattr(ember, dtype))
        x = ember.tensor(x_np, device=device, requires_grad=True)
        packed = ember.nn.utils.rnn.pack_padded_sequence(x, [5, 3, 2])
        outs = [*_flat_call(mod, x), mod(packed)[0].data]
        rng = np.random.default_rng(1)  # the same upstream gradients on both devices
        w = [ember.tensor(rng.standard_normal(o.shape).astype(dtype), device=device) for o in outs]
        sum((o * k).sum() for o, k in zip(outs, w)).backward()
        grads = [x.grad] + [p.grad for p in mod.parameters()]
        results.append([t.detach().cpu().numpy() for t in outs + grads])
    tol = 1e-4 if dtype == "float32" else 1e-10
    for k, (a, b) in enumerate(zip(*results)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"result {k}")


@needs_torch
def test_cell_loop_equals_layer():
    """An LSTMCell loop with the layer's weights gives the fused layer's output."""
    m = ember.nn.LSTM(I, H).double()
    c = ember.nn.LSTMCell(I, H).double()
    for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        getattr(c, n).data = getattr(m, n + "_l0").data
    x = ember.randn(T, B, I, dtype=ember.float64)
    out, _ = m(x)
    h = cc = ember.zeros(B, H, dtype=ember.float64)
    for t in range(T):
        h, cc = c(x[t], (h, cc))
    np.testing.assert_allclose(out[-1].detach().numpy(), h.detach().numpy(), rtol=1e-12)
    assert copy_state is not None


# ---------------------------------------------------------------------- saved state
def test_inplace_change_of_input_is_detected():
    m = ember.nn.GRU(I, H)
    x = ember.randn(T, B, I)
    out, _ = m(x)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_two_live_graphs_keep_their_own_buffers():
    m = ember.nn.LSTM(I, H).double()
    x1 = ember.randn(T, B, I, dtype=ember.float64)
    x2 = ember.randn(T, B, I, dtype=ember.float64)
    grads = []
    for xs in ([x1], [x2]):
        m.zero_grad()
        m(xs[0])[0].pow(2).sum().backward()
        grads.append([p.grad.clone() for p in m.parameters()])
    m.zero_grad()
    o1 = m(x1)[0]
    o2 = m(x2)[0]  # both graphs alive: their saved gates must not share memory
    (o1.pow(2).sum() + o2.pow(2).sum()).backward()
    for p, a, b in zip(m.parameters(), *grads):
        np.testing.assert_allclose(p.grad.numpy(), (a + b).numpy(), rtol=1e-10)
