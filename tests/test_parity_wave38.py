"""Parity regressions found by the thirty-eighth wave, a sweep of double backward across the op
set (gradgradcheck of every differentiable op in float64, and torch's Hessian-vector products:
the gradient of ``(w * grad).sum()`` with respect to the inputs and to a non-uniform
grad_output, with the first-order gradients taken under ``create_graph=True``; torch is the
oracle, also where it refuses a double backward): the recurrent modules (``nn.LSTM``,
``nn.GRU``, ``nn.RNN``: padded or packed, bidirectional, stacked, projected, with initial states)
refused any double backward, where torch's cpu layers (compositions of differentiable ops)
give gradient penalties and MAML through them; ``ctc_loss``'s first derivative treated the
posterior as a constant, so a second derivative came back silently wrong where torch raises
"derivative for aten::_ctc_loss_backward is not implemented"; a reparameterized Gamma draw
(Gamma, Chi2, StudentT, and ember's Dirichlet/Beta built on it) treated ``dx/dalpha`` as a
constant in alpha, a silently wrong second derivative where torch raises "the derivative for
'_standard_gamma_grad' is not implemented."; and ``heaviside`` and ``floor_divide`` (``//``),
which torch records in the graph with no derivative (a backward through them raises), were left
off the graph (heaviside) or handed back zero gradients (floor_divide)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.core.ops.recurrent import Reserve, _rnn_layer

torch = pytest.importorskip("torch")


# ------------------------------------------------------------ the fused recurrent layer op
def _layer_inputs(mode, proj, packed, seed=0):
    """Tiny float64 inputs of ``_rnn_layer``: [x, h0, (c0), w_ih, w_hh, b_ih, b_hh, (w_hr)]."""
    r = np.random.default_rng(seed)
    g = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    n_in, hid, out = 2, 2, (1 if proj else 2)
    bs = (2, 2, 1) if packed else None
    arrs = [r.uniform(-1, 1, (5, n_in) if packed else (3, 2, n_in)), r.uniform(-1, 1, (2, out))]
    if mode == "LSTM":
        arrs.append(r.uniform(-1, 1, (2, hid)))
    arrs += [r.uniform(-1, 1, (g * hid, n_in)), r.uniform(-1, 1, (g * hid, out))]
    arrs += [r.uniform(-1, 1, (g * hid,)), r.uniform(-1, 1, (g * hid,))]
    if proj:
        arrs.append(r.uniform(-1, 1, (out, hid)))
    return [ember.tensor(a, requires_grad=True) for a in arrs], bs


LAYERS = [
    (mode, proj, packed, rev)
    for mode in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU")
    for proj in ((False, True) if mode == "LSTM" else (False,))
    for packed, rev in ((False, False), (True, False), (True, True))
]


@pytest.mark.parametrize("mode,proj,packed,rev", LAYERS)
def test_rnn_layer_gradgradcheck(mode, proj, packed, rev):
    ins, bs = _layer_inputs(mode, proj, packed)

    def f(*ts):
        return _rnn_layer(
            list(ts),
            mode=mode,
            has_proj=proj,
            batch_sizes=bs,
            reverse=rev,
            ws=Reserve(list(ts)),
        )

    assert ember.autograd.gradgradcheck(f, ins, atol=1e-5, rtol=1e-3)


# ------------------------------------------------------------ the modules against torch
RNN_MODULES = [
    ("LSTM", {}, None, False, True),
    ("LSTM", {"num_layers": 2}, None, True, False),
    ("LSTM", {"proj_size": 2}, None, True, True),
    ("LSTM", {"bidirectional": True, "num_layers": 2}, [4, 2, 3], True, True),
    ("LSTM", {"bidirectional": True, "proj_size": 2}, [2, 4, 1], True, True),
    ("GRU", {"bidirectional": True}, None, True, True),
    ("GRU", {"bidirectional": True}, [1, 4, 2], True, True),
    ("RNN", {"nonlinearity": "relu"}, None, True, True),
    ("RNN", {"bias": False}, [3, 1, 2], False, True),
]


def _penalty_run(mod, m, x0, cls, kw, lengths, h0, batch_first):
    """First-order gradients (create_graph) of every output with a non-uniform upstream
    gradient, then the gradients of a penalty on them (a Hessian-vector product)."""
    x = mod.tensor(x0, requires_grad=True)
    extra, states = [], []
    if h0:
        d = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
        b = x0.shape[0] if batch_first else x0.shape[1]
        r = np.random.default_rng(5)
        states = [mod.tensor(r.uniform(-1, 1, (d, b, kw.get("proj_size") or 3)))]
        if cls == "LSTM":
            states.append(mod.tensor(r.uniform(-1, 1, (d, b, 3))))
        for s in states:
            s.requires_grad_(True)
        extra = [tuple(states) if cls == "LSTM" else states[0]]
    inp = x
    if lengths is not None:
        inp = mod.nn.utils.rnn.pack_padded_sequence(
            x, lengths, batch_first=batch_first, enforce_sorted=False
        )
    out, hn = m(inp, *extra)
    if lengths is not None:
        out = mod.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)[0]
    outs = [out, *(hn if isinstance(hn, tuple) else (hn,))]
    r = np.random.default_rng(1)
    ups = [mod.tensor(r.uniform(0.5, 1.5, tuple(o.shape))) for o in outs]
    wrt = [x, *states, *m.parameters()]
    plain = mod.autograd.grad(outs, wrt, ups, retain_graph=True)
    first = mod.autograd.grad(outs, wrt, ups, create_graph=True)
    sum(((g * g).sum() * 0.3 + (g**3).sum()) for g in first).backward()
    return plain, first, [t.grad for t in wrt]


@pytest.mark.parametrize("cls,kw,lengths,h0,batch_first", RNN_MODULES)
def test_rnn_module_double_backward_matches_torch(cls, kw, lengths, h0, batch_first):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(4, 3, batch_first=batch_first, **kw).double()
    em = getattr(ember.nn, cls)(4, 3, batch_first=batch_first, **kw).double()
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    shape = (3, 4, 4) if lengths is not None else ((2, 3, 4) if batch_first else (3, 2, 4))
    x0 = np.random.default_rng(0).uniform(-1, 1, shape)
    args = (cls, kw, lengths, h0, batch_first)
    e_plain, e_first, e_second = _penalty_run(ember, em, x0, *args)
    t_plain, t_first, t_second = _penalty_run(torch, tm, x0, *args)
    for ep, ef, tp, tf in zip(e_plain, e_first, t_plain, t_first):
        # create_graph does not change the first-order values
        np.testing.assert_allclose(ef.detach().numpy(), ep.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ef.detach().numpy(), tf.detach().numpy(), rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(ep.numpy(), tp.numpy(), rtol=1e-9, atol=1e-10)
    for k, (e, t) in enumerate(zip(e_second, t_second)):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-8, atol=1e-9, err_msg=str(k))


def test_lstm_gradient_penalty_wrt_parameters_matches_torch():
    """WGAN-GP through an LSTM critic: the penalty on d out / d x reaches the weights."""
    torch.manual_seed(0)
    tm = torch.nn.LSTM(3, 2, batch_first=True).double()
    em = ember.nn.LSTM(3, 2, batch_first=True).double()
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x0 = np.random.default_rng(2).uniform(-1, 1, (2, 4, 3))
    grads = []
    for mod, m in ((torch, tm), (ember, em)):
        x = mod.tensor(x0, requires_grad=True)
        score = m(x)[0][:, -1].sum()
        (g,) = mod.autograd.grad(score, x, create_graph=True)
        ((g.flatten(1).norm(dim=1) - 1) ** 2).mean().backward()
        grads.append([p.grad.numpy() for p in m.parameters()])
    for t, e in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-12)


def test_rnn_first_order_backward_unchanged_without_create_graph():
    """Without create_graph the fused backward runs (no graph on the gradient)."""
    m = ember.nn.GRU(2, 3).double()
    x = ember.randn(4, 2, 2, dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(m(x)[0].sum(), x)
    assert g.grad_fn is None and not g.requires_grad


# ------------------------------------------------------------ ctc_loss
def _ctc(mod, reduction):
    r = np.random.default_rng(3)
    lp = mod.tensor(r.standard_normal((5, 2, 4))).log_softmax(2).detach().requires_grad_(True)
    loss = mod.nn.functional.ctc_loss(
        lp, mod.tensor([[1, 2], [3, 3]]), [5, 4], [2, 2], reduction=reduction
    )
    return lp, loss


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_double_backward_raises_like_torch(reduction):
    msgs = []
    for mod in (torch, ember):
        lp, loss = _ctc(mod, reduction)
        up = mod.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape)))
        up.requires_grad_(True)
        plain = mod.autograd.grad(loss, lp, up.detach(), retain_graph=True)[0]
        (g,) = mod.autograd.grad(loss, lp, up, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), plain.numpy(), rtol=1e-12)
        assert g.requires_grad
        for wrt in (lp, up):
            with pytest.raises(RuntimeError) as ei:
                mod.autograd.grad((g * g).sum(), wrt, retain_graph=True)
            msgs.append(str(ei.value))
    assert msgs[:2] == msgs[2:]
    assert msgs[0] == "derivative for aten::_ctc_loss_backward is not implemented"


def test_ctc_first_order_gradient_matches_torch():
    grads = []
    for mod in (torch, ember):
        lp, loss = _ctc(mod, "none")
        loss.backward(mod.tensor([0.7, 1.3]))
        grads.append(lp.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------ heaviside
@pytest.mark.parametrize("how", ["function", "method", "inplace"])
def test_heaviside_is_recorded_and_its_backward_raises_like_torch(how):
    out = []
    for mod in (torch, ember):
        x = mod.tensor([1.5, -2.0, 0.0], dtype=mod.float64, requires_grad=True)
        v = mod.tensor([0.5, 0.5, 0.5], dtype=mod.float64)
        if how == "function":
            y = mod.heaviside(x, v)
        elif how == "method":
            y = x.heaviside(v)
        else:
            y = (x * 1).heaviside_(v)
        assert y.requires_grad
        with pytest.raises(RuntimeError) as ei:
            (y * mod.tensor([1.0, 2.0, 3.0], dtype=mod.float64)).sum().backward()
        out.append((y.detach().numpy(), str(ei.value)))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    # (torch names the in-place overload, aten::heaviside_; ember's one derivative says heaviside)
    assert out[1][1] == out[0][1].replace("heaviside_", "heaviside")
    assert out[1][1] == "derivative for aten::heaviside is not implemented"


def test_heaviside_without_grad_stays_off_the_graph():
    y = ember.heaviside(ember.tensor([1.0, 0.0]), ember.tensor([0.5, 0.5]))
    assert not y.requires_grad and y.grad_fn is None


# ------------------------------------------------------------ Gamma's reparameterized draws
GAMMA_FAMILY = {
    "Gamma": lambda D, a, b: D.Gamma(a, b),
    "Chi2": lambda D, a, b: D.Chi2(a),
    "StudentT": lambda D, a, b: D.StudentT(a, b, b),
    "Dirichlet": lambda D, a, b: D.Dirichlet(a),
    "Beta": lambda D, a, b: D.Beta(a, b),
}


@pytest.mark.parametrize("name", sorted(GAMMA_FAMILY))
def test_gamma_draw_double_backward_raises(name):
    # d x / d alpha of a Gamma draw has no derivative (torch's _standard_gamma_grad); ember had
    # treated it as a constant in alpha, a silently wrong second derivative
    D = ember.distributions
    ember.manual_seed(0)
    a = ember.tensor([1.5, 2.5], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([0.7, 1.2], dtype=ember.float64, requires_grad=True)
    s = GAMMA_FAMILY[name](D, a, b).rsample()
    first = ember.autograd.grad((s**2).sum(), [a, b], retain_graph=True, allow_unused=True)
    g = ember.autograd.grad((s**2).sum(), [a, b], create_graph=True, allow_unused=True)
    for p, c in zip(first, g):
        if p is not None:  # create_graph does not change the first-order values
            np.testing.assert_allclose(c.detach().numpy(), p.numpy(), rtol=1e-12)
    penalty = sum((x**2).sum() for x in g if x is not None)
    with pytest.raises(NotImplementedError) as ei:
        ember.autograd.grad(penalty, a, retain_graph=True)
    assert str(ei.value) == "the derivative for '_standard_gamma_grad' is not implemented."


@pytest.mark.parametrize("name", ["Gamma", "Chi2", "StudentT"])
def test_gamma_draw_double_backward_error_matches_torch(name):
    msgs = []
    for mod in (torch, ember):
        mod.manual_seed(0)
        a = mod.tensor([1.5, 2.5], dtype=mod.float64, requires_grad=True)
        b = mod.tensor([0.7, 1.2], dtype=mod.float64, requires_grad=True)
        s = GAMMA_FAMILY[name](mod.distributions, a, b).rsample()
        g = mod.autograd.grad((s**2).sum(), [a, b], create_graph=True, allow_unused=True)
        with pytest.raises(NotImplementedError) as ei:
            sum((x**2).sum() for x in g if x is not None).backward()
        msgs.append(str(ei.value))
    assert msgs[1] == msgs[0]


def test_gamma_draw_second_derivative_in_the_rate_only():
    """With a constant concentration the draw is x / rate, twice differentiable in the rate:
    d2/drate2 of sum((x / rate)^2) is 6 x^2 / rate^4 (x the standard draw), and no error."""
    ember.manual_seed(0)
    a = ember.tensor([1.5, 2.5], dtype=ember.float64)
    b = ember.tensor([0.7, 1.2], dtype=ember.float64, requires_grad=True)
    s = ember.distributions.Gamma(a, b).rsample()
    (g,) = ember.autograd.grad((s**2).sum(), b, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), b)
    x = (s * b).detach().numpy()
    np.testing.assert_allclose(h.numpy(), 6 * x**2 / b.detach().numpy() ** 4, rtol=1e-10)


# ------------------------------------------------------------ floor_divide
FLOOR_DIVIDES = {
    "function": lambda m, x, y: m.floor_divide(x, y),
    "operator": lambda m, x, y: x // y,
    "scalar": lambda m, x, y: x // 0.4,
    "reflected": lambda m, x, y: 3.0 // x,
    "method": lambda m, x, y: x.floor_divide(y),
    "inplace": lambda m, x, y: (x * 1).floor_divide_(y),
}


@pytest.mark.parametrize("how", sorted(FLOOR_DIVIDES))
def test_floor_divide_backward_raises_like_torch(how):
    # torch 2.13 records floor_divide but has no derivative for it; ember handed back zeros
    out = []
    for mod in (torch, ember):
        x = mod.tensor([1.5, -2.5, 0.9], dtype=mod.float64, requires_grad=True)
        y = mod.tensor([0.7, 0.3, -0.4], dtype=mod.float64, requires_grad=True)
        q = FLOOR_DIVIDES[how](mod, x, y)
        assert q.requires_grad
        with pytest.raises(RuntimeError) as ei:
            q.sum().backward()
        out.append((q.detach().numpy(), str(ei.value)))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    # (torch names the in-place overload, aten::floor_divide_; ember's one derivative does not)
    assert out[1][1] == out[0][1].replace("floor_divide_", "floor_divide")
