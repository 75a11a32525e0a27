"""Recurrent layers as fused ops: one op runs a whole (layer, direction) over the sequence.

``_rnn_layer`` is the forward of one LSTM / GRU / RNN(tanh|relu) layer in one direction, for a
padded (T, B, I) input or the flat data of a PackedSequence (with ``batch_sizes``). The input
projection of every time step is one GEMM; each step then does only ``h @ W_hh^T`` and the gate
math (BLAS on (B, 4H) blocks). What the backward needs (activated gates, previous states, tanh of
the cell) is kept in ``ws`` (a list the caller passes, torch's "reserve"), so nothing is
recomputed. The derivative is a second registered op, ``_rnn_layer_backward``: it loops over time
for the recurrence only, collects the gate gradients of all steps and does one GEMM per weight
gradient. ``_rnn_layer_backward`` itself has no derivative (differentiating it raises, like
torch's cuDNN path); under ``create_graph=True`` the modules' layers (which pass a ``Reserve``)
instead differentiate a recomputation with the composite cells, so their double backward works
as torch's cpu layers' does (gradient penalties, MAML) and only that backward pays for it.
On a GPU (real cupy) the LSTM's and GRU's gate math of a step is one hand-written kernel each
way (core/kernels/fused_rnn.py, where ``step_kernels`` is not None); the array ops below are the
generic path, which the host always takes.

The composite cells ``lstm_cell``, ``gru_cell``, ``rnn_tanh_cell`` and ``rnn_relu_cell`` (torch's
functions of the same names) are plain ember ops, so they are twice differentiable.

Names (spec 4.3): the time and batch dims keep their names; the features dim keeps the input's
name while the weights are unnamed (``weight_hh`` named (gates, hidden) names it ``hidden``).
An initial state's batch name must match the input's (an unnamed input batch dim takes it).
"""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import _state as _grad_state
from .. import dtype as _dt
from ..autocast import entry as _autocast_entry
from ..kernels.fused_rnn import step_kernels
from ..registry import OPS, broadcast_error, op
from ..runtime import onednn_bf16, onednn_fp16
from ..tensor import Tensor
from .linalg import _same_dtype_mm
from .shape import cat as _cat

_BF16 = _dt.bfloat16.np

__all__ = ["gru_cell", "lstm_cell", "rnn_relu_cell", "rnn_tanh_cell"]

_MODES = ("LSTM", "GRU", "RNN_TANH", "RNN_RELU")


# ---------------------------------------------------------------------- names
def _rnn_layer_names(ins, mode="LSTM", has_bias=True, has_proj=False, *args, **kwargs):
    """(output, h_n[, c_n]) names: time/batch dims of the input kept, features as the layer rule."""
    x = ins[0]
    nst = 2 if mode == "LSTM" else 1
    wi, wh = ins[1 + nst]._names, ins[2 + nst]._names
    wr = ins[-1]._names if has_proj else None
    xn = x._names
    feat = xn[-1] if xn is not None else None
    if wi is not None and wi[1] is not None and feat is not None and wi[1] != feat:
        raise RuntimeError(
            f"{mode.lower()}: the input's features dim {feat!r} does not match weight_ih's input "
            f"dim {wi[1]!r} (names {list(xn)} and {list(wi)}); use rename or refine_names"
        )
    if wi is None and wh is None and wr is None:
        out_f = cell_f = feat  # unnamed weights: the features dim keeps its name (spec 4.3)
    elif has_proj:
        out_f = wr[0] if wr is not None else (wh[1] if wh is not None else None)
        cell_f = wr[1] if wr is not None else None
    else:
        out_f = cell_f = wh[1] if wh is not None else None
    batch = xn[1] if xn is not None and len(xn) == 3 else None
    for label, st in zip(("hx", "cx"), ins[1 : 1 + nst]):
        # each initial state (batch, hidden) must agree with the input's batch name; an unnamed
        # input batch dim takes the state's name (the unify rule's wildcard)
        sb = st._names[0] if st._names is not None and x.ndim == 3 else None
        if sb is None:
            continue
        if batch is not None and sb != batch:
            raise RuntimeError(
                f"{mode.lower()}: the input's batch dim {batch!r} does not match {label}'s batch "
                f"dim {sb!r} (names {list(xn)} and {list(st._names)}); use rename or refine_names"
            )
        batch = sb
    lead = tuple(xn[:-1]) if xn is not None else (None,) * (x.ndim - 1)
    if batch is not None and x.ndim == 3:
        lead = (lead[0], batch)
    names = [lead + (out_f,), (batch, out_f), (batch, cell_f)]
    return names[: nst + 1]


def _unnamed(ins, *args, **kwargs):
    """Gradients of the fused layer: unnamed (the engine stamps each input's names)."""


# ---------------------------------------------------------------------- helpers
def _transposed(xp, w):
    """A contiguous copy of w.T (the per-step GEMMs read it many times)."""
    return xp.ascontiguousarray(w.T)


def _steps(T, B, batch_sizes, reverse):
    """[(row offset, active batch)] in processing order."""
    if batch_sizes is None:
        steps = [(t * B, B) for t in range(T)]
    else:
        steps = []
        s = 0
        for bs in batch_sizes:
            steps.append((s, bs))
            s += bs
    if reverse:
        steps.reverse()
    return steps


# ---------------------------------------------------------------------- LSTM
def _scaled_gates(xp, x2, w_ih, b, w_hh, sc):
    """The input's gate pre-activations ``x2 @ w_ih.T + b`` of every step and the recurrent
    weights ``w_hh``, their rows scaled by ``sc`` (the sigmoid gates' 0.5)."""
    G = xp.empty((x2.shape[0], w_ih.shape[0]), x2.dtype)
    xp.matmul(x2, (w_ih * sc[:, None]).T, out=G)
    if b is not None:
        G += b * sc
    whs = xp.empty(w_hh.shape, x2.dtype)
    xp.multiply(w_hh, sc[:, None], out=whs)
    return G, whs


def _lstm_forward(xp, x2, h0, c0, w_ih, w_hh, b, w_hr, steps, save):
    N = x2.shape[0]
    H4 = w_ih.shape[0]
    H = H4 // 4
    P = h0.shape[-1]
    dt = x2.dtype
    # fold 0.5 into the sigmoid gates' rows (i, f and o): one tanh covers all four gates
    sc = xp.ones((H4,), dt)
    sc[: 2 * H] = 0.5
    sc[3 * H :] = 0.5
    off = xp.zeros((H4,), dt)
    off[: 2 * H] = 0.5
    off[3 * H :] = 0.5
    G, whs = _scaled_gates(xp, x2, w_ih, b, w_hh, sc)
    wrT = w_hr.T if w_hr is not None else None
    hs = h0.copy()
    cs = c0.copy()
    y = xp.empty((N, P), dt)
    if save:
        hprev = xp.empty((N, P), dt)
        cprev = xp.empty((N, H), dt)
        tca = xp.empty((N, H), dt)
        hfa = xp.empty((N, H), dt) if w_hr is not None else None
    tmp = xp.empty((hs.shape[0], H), dt)
    fused = step_kernels(xp, dt, "lstm") if w_hr is None else None
    if fused is not None and not save:  # stand-ins for the copies the kernel then skips
        spare = xp.empty((2,) + tmp.shape, dt)
    for s, bs in steps:
        e = s + bs
        g = G[s:e]
        hp = hs[:bs]
        cp = cs[:bs]
        if fused is not None:  # a GPU: the gate math of the step in one kernel
            tc = tca[s:e] if save else tmp[:bs]
            hv, cv = (hprev[s:e], cprev[s:e]) if save else (spare[0, :bs], spare[1, :bs])
            fused.forward(whs @ hp.T, H, bs, int(save), g, cp, hp, tc, y[s:e], hv, cv, size=bs * H)
            continue
        if save:
            hprev[s:e] = hp
            cprev[s:e] = cp
        g += (whs @ hp.T).T  # (4H, B) product: the faster GEMM layout for small B
        xp.tanh(g, out=g)
        g *= sc
        g += off
        i = g[:, :H]
        cn = tmp[:bs]
        xp.multiply(i, g[:, 2 * H : 3 * H], out=cn)
        cp *= g[:, H : 2 * H]
        cp += cn
        tc = tca[s:e] if save else cn
        xp.tanh(cp, out=tc)
        if w_hr is None:
            yr = y[s:e]
            xp.multiply(g[:, 3 * H :], tc, out=yr)
        else:
            hf = hfa[s:e] if save else tmp[:bs]
            xp.multiply(g[:, 3 * H :], tc, out=hf)
            yr = y[s:e]
            xp.matmul(hf, wrT, out=yr)
        hp[...] = yr
    if save:
        return y, (hs, cs), (G, hprev, cprev, tca, hfa)
    return y, (hs, cs), None


def _lstm_backward(xp, dy, dhn, dcn, saved, w_hh, w_hr, steps):
    G, _hprev, cprev, tca, _hfa = saved
    _N, H4 = G.shape
    H = H4 // 4
    dG = xp.empty(G.shape, G.dtype)
    fused = step_kernels(xp, G.dtype, "lstm") if w_hr is None else None
    whT = _transposed(xp, w_hh) if fused is None else None
    dh = dhn.copy()
    dc = dcn.copy()
    dhp = xp.empty(dy.shape, dy.dtype) if w_hr is not None else None
    for s, bs in reversed(steps):
        e = s + bs
        dht = dh[:bs]
        if fused is not None:  # a GPU: the gate math of the step in one kernel
            d = dG[s:e]
            fused.backward(G[s:e], tca[s:e], cprev[s:e], dht, dy[s:e], H, d, dc[:bs], size=bs * H)
            xp.matmul(d, w_hh, out=dht)
            continue
        dht += dy[s:e]
        if w_hr is not None:
            dhp[s:e] = dht
            dhf = dht @ w_hr
        else:
            dhf = dht
        g = G[s:e]
        i, f, gg, o = g[:, :H], g[:, H : 2 * H], g[:, 2 * H : 3 * H], g[:, 3 * H :]
        tc = tca[s:e]
        d = dG[s:e]
        do = d[:, 3 * H :]
        xp.multiply(dhf, tc, out=do)  # d o
        dct = dc[:bs]
        t2 = tc * tc
        xp.subtract(1, t2, out=t2)
        t2 *= o
        t2 *= dhf
        dct += t2  # dc_t
        do *= o
        do *= 1 - o
        di = d[:, :H]
        xp.multiply(dct, gg, out=di)
        di *= i
        di *= 1 - i
        df = d[:, H : 2 * H]
        xp.multiply(dct, cprev[s:e], out=df)
        df *= f
        df *= 1 - f
        dg = d[:, 2 * H : 3 * H]
        xp.multiply(dct, i, out=dg)
        dg *= 1 - gg * gg
        dct *= f
        dht[...] = (whT @ d.T).T
    return dG, dh, dc, dhp


# ---------------------------------------------------------------------- GRU
def _gru_forward(xp, x2, h0, w_ih, w_hh, b_ih, b_hh, steps, save):
    N = x2.shape[0]
    H3 = w_ih.shape[0]
    H = H3 // 3
    dt = x2.dtype
    sc = xp.ones((H3,), dt)
    sc[: 2 * H] = 0.5
    G, whs = _scaled_gates(xp, x2, w_ih, b_ih, w_hh, sc)
    bh = b_hh * sc if b_hh is not None else None
    hs = h0.copy()
    y = xp.empty((N, H), dt)
    if save:
        hprev = xp.empty((N, H), dt)
        hna = xp.empty((N, H), dt)
    fused = step_kernels(xp, dt, "gru")
    if fused is not None:
        bf = bh if bh is not None else xp.zeros((H3,), dt)
        if not save:  # stand-ins for the copies the kernel then skips
            spare = xp.empty((2,) + hs.shape, dt)
    for s, bs in steps:
        e = s + bs
        hp = hs[:bs]
        if fused is not None:  # a GPU: the gate math of the step in one kernel
            hv, nv = (hprev[s:e], hna[s:e]) if save else (spare[0, :bs], spare[1, :bs])
            fused.forward(whs @ hp.T, bf, H, bs, int(save), G[s:e], hp, y[s:e], hv, nv, size=bs * H)
            continue
        if save:
            hprev[s:e] = hp
        hh = (whs @ hp.T).T
        if bh is not None:
            hh += bh
        rz = G[s:e, : 2 * H]
        rz += hh[:, : 2 * H]
        xp.tanh(rz, out=rz)
        rz *= 0.5
        rz += 0.5
        hn = hh[:, 2 * H :]
        if save:
            hna[s:e] = hn
        n = G[s:e, 2 * H :]
        hn *= rz[:, :H]
        n += hn
        xp.tanh(n, out=n)
        yr = y[s:e]
        xp.subtract(hp, n, out=yr)
        yr *= rz[:, H:]
        yr += n
        hp[...] = yr
    if save:
        return y, (hs,), (G, hprev, hna)
    return y, (hs,), None


def _gru_backward(xp, dy, dhn, saved, w_hh, steps):
    G, hprev, hna = saved
    N, H3 = G.shape
    H = H3 // 3
    dGh = xp.empty(G.shape, G.dtype)  # [dr, dz, d(W_hn h + b_hn)]: the W_hh / b_hh side
    dXn = xp.empty((N, H), G.dtype)  # d(W_in x + b_in): the W_ih side of the n gate
    fused = step_kernels(xp, G.dtype, "gru")
    whT = _transposed(xp, w_hh) if fused is None else None
    dh = dhn.copy()
    for s, bs in reversed(steps):
        e = s + bs
        dht = dh[:bs]
        if fused is not None:  # a GPU: the gate math of the step in one kernel
            d = dGh[s:e]
            fused.backward(G[s:e], hprev[s:e], hna[s:e], dy[s:e], H, d, dXn[s:e], dht, size=bs * H)
            dht += d @ w_hh
            continue
        dht += dy[s:e]
        r, z, n = G[s:e, :H], G[s:e, H : 2 * H], G[s:e, 2 * H :]
        hp = hprev[s:e]
        d = dGh[s:e]
        dn = dXn[s:e]
        xp.subtract(1, z, out=dn)
        dn *= dht
        dn *= 1 - n * n  # d pre-activation of n
        dz = d[:, H : 2 * H]
        xp.subtract(hp, n, out=dz)
        dz *= dht
        dz *= z
        dz *= 1 - z
        dr = d[:, :H]
        xp.multiply(dn, hna[s:e], out=dr)
        dr *= r
        dr *= 1 - r
        xp.multiply(dn, r, out=d[:, 2 * H :])
        dht *= z
        dht += (whT @ d.T).T
    return dGh, dXn, dh


# ---------------------------------------------------------------------- RNN
def _rnn_forward(xp, x2, h0, w_ih, w_hh, b, steps, save, relu):
    N = x2.shape[0]
    H = w_ih.shape[0]
    G = xp.empty((N, H), x2.dtype)
    xp.matmul(x2, w_ih.T, out=G)
    if b is not None:
        G += b
    hs = h0.copy()
    if save:
        hprev = xp.empty((N, H), x2.dtype)
    for s, bs in steps:
        e = s + bs
        hp = hs[:bs]
        if save:
            hprev[s:e] = hp
        g = G[s:e]
        g += (w_hh @ hp.T).T
        if relu:
            xp.maximum(g, 0, out=g)
        else:
            xp.tanh(g, out=g)
        hp[...] = g
    y = G.copy() if save else G
    if save:
        return y, (hs,), (G, hprev)
    return y, (hs,), None


def _rnn_backward(xp, dy, dhn, saved, w_hh, steps, relu):
    G, _hprev = saved
    dG = xp.empty(G.shape, G.dtype)
    whT = _transposed(xp, w_hh)
    dh = dhn.copy()
    for s, bs in reversed(steps):
        e = s + bs
        dht = dh[:bs]
        dht += dy[s:e]
        a = G[s:e]
        d = dG[s:e]
        if relu:
            xp.multiply(dht, a > 0, out=d)
        else:
            xp.multiply(a, a, out=d)
            xp.subtract(1, d, out=d)
            d *= dht
        dht[...] = (whT @ d.T).T
    return dG, dh


# ---------------------------------------------------------------------- the fused ops
def _unpack(tensors, mode, has_bias, has_proj):
    k = 0
    x = tensors[k]
    h0 = tensors[1]
    if mode == "LSTM":
        c0 = tensors[2]
        k = 3
    else:
        c0 = None
        k = 2
    w_ih, w_hh = tensors[k], tensors[k + 1]
    k += 2
    b_ih = b_hh = w_hr = None
    if has_bias:
        b_ih, b_hh = tensors[k], tensors[k + 1]
        k += 2
    if has_proj:
        w_hr = tensors[k]
    return x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr


def _native_lstm(dt, has_proj) -> bool:
    """Whether torch runs an LSTM of this dtype natively: float32 goes to oneDNN unless
    projected, bfloat16 too on cpus with AVX-512 BW/VL/DQ, and float16 on cpus with AVX512-FP16
    when grad mode is off."""
    if has_proj or dt == "float64":
        return True
    if dt == "float16":
        return _grad_state.enabled or not onednn_fp16()
    return dt == _BF16 and not onednn_bf16()


def lstm_cell_state(x: Tensor, c0: Tensor, w_hh: Tensor, w_hr, has_bias: bool, batch_sizes):
    """A c0 of another dtype than a native LSTM's (the failure path of ``_rnn_layer``): torch
    meets it only in f * c, which promotes. One it promotes to the layer's dtype is cast to it
    (its gradient comes back in its own dtype); a wider one widens h, whose next product (the
    projection, else the next step's h @ W_hh^T) raises mm's / addmm's dtype error. Returns
    None where ember keeps its own error (oneDNN layers, or one step of a wider c)."""
    dt = x.dtype
    if w_hh.dtype != dt or c0.is_complex() or not _native_lstm(dt.np, w_hr is not None):
        return None
    p = _dt.promote_types(dt, c0.dtype)
    if p == dt:
        return c0.to(dt)
    if w_hr is None and (x.shape[0] if batch_sizes is None else len(batch_sizes)) < 2:
        return None
    h, w = np.empty((0, 0), p.np), np.empty((0, 0), dt.np)
    if w_hr is None and has_bias:
        raise RuntimeError(
            "mat1 and mat2 must have the same dtype, but got "
            f"{_dt.array_scalar_name(h)} and {_dt.array_scalar_name(w)}"
        )
    _same_dtype_mm(h, w)
    return None


@op(names=_rnn_layer_names, seq=True, method=False, n_diff_out=3)
def _rnn_layer(
    xp,
    tensors,
    mode="LSTM",
    has_bias=True,
    has_proj=False,
    batch_sizes=None,
    reverse=False,
    ws=None,
):
    """One recurrent layer in one direction over a whole sequence.

    tensors: [input, h0, (c0 for LSTM), w_ih, w_hh, (b_ih, b_hh), (w_hr)]; input (T, B, I), or the
    (N, I) data of a PackedSequence with ``batch_sizes`` (a tuple of ints). Returns (output, h_n)
    or (output, h_n, c_n) for LSTM. ``ws``: a list that receives what the backward needs (pass
    one when a gradient is wanted)."""
    if mode not in _MODES:
        raise ValueError(f"Unknown mode '{mode}'")
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = _unpack(tensors, mode, has_bias, has_proj)
    if batch_sizes is None and x.shape[0] == 0:  # torch checks the length before any dtype
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    dt = x.dtype
    for a in tensors:
        if a.dtype != dt:
            if a is h0 and w_hh.dtype == dt and (mode != "LSTM" or _native_lstm(dt, has_proj)):
                # torch's native layers (all but an LSTM it hands to oneDNN, whose errors depend
                # on the cpu) meet a mismatched hidden state in the h @ W_hh^T of at::linear:
                # addmm's check with a bias, mm's without
                if not has_bias:
                    _same_dtype_mm(h0, w_hh)
                raise RuntimeError(
                    "mat1 and mat2 must have the same dtype, but got "
                    f"{_dt.array_scalar_name(h0)} and {_dt.array_scalar_name(w_hh)}"
                )
            raise RuntimeError(
                f"{mode.lower()}: expected all tensors to have the same dtype, got {dt} and "
                f"{a.dtype}"
            )
    if dt.kind != "f" and dt != _BF16:
        raise RuntimeError(f"{mode.lower()}: expected a floating point input, got {dt}")
    if dt == _BF16:  # no bfloat16 BLAS: compute in float32 and round the results once
        r = _rnn_layer.op.kernel(
            xp,
            [a.astype("float32") for a in tensors],
            mode,
            has_bias,
            has_proj,
            batch_sizes,
            reverse,
            ws,
        )
        return tuple(a.astype(dt) for a in r)
    if batch_sizes is None:
        T, B = x.shape[0], x.shape[1]
    else:
        T, B = len(batch_sizes), batch_sizes[0]
    steps = _steps(T, B, batch_sizes, reverse)
    x2 = x.reshape(-1, x.shape[-1])
    save = ws is not None
    if mode == "LSTM":
        b = (b_ih + b_hh) if has_bias else None
        y, states, saved = _lstm_forward(xp, x2, h0, c0, w_ih, w_hh, b, w_hr, steps, save)
    elif mode == "GRU":
        y, states, saved = _gru_forward(xp, x2, h0, w_ih, w_hh, b_ih, b_hh, steps, save)
    else:
        b = (b_ih + b_hh) if has_bias else None
        relu = mode == "RNN_RELU"
        y, states, saved = _rnn_forward(xp, x2, h0, w_ih, w_hh, b, steps, save, relu)
    if save:
        ws[:] = [saved, x2, x.shape, w_ih, w_hh, w_hr, steps]
    y = y.reshape(x.shape[:-1] + (y.shape[-1],))
    return (y,) + states


class Reserve(list):
    """The ``ws`` list a module passes to ``_rnn_layer``: the kernel fills it with raw arrays
    for the fused backward; ``tensors`` keeps the layer's input tensors (the node saves only the
    first), which a backward with create_graph differentiates through again."""

    __slots__ = ("tensors",)

    def __init__(self, tensors: list) -> None:
        super().__init__()
        self.tensors = tensors


def _no_double_backward(grad, mode):
    raise RuntimeError(
        f"double backward through a fused {mode} layer (nn.{mode.split('_')[0]}) is not "
        "supported (like torch's cuDNN RNNs); use the cell modules (nn.LSTMCell, nn.GRUCell, "
        "nn.RNNCell) in a loop when you need higher-order gradients"
    )


@op(names=_unnamed, seq=True, method=False, n_diff_out=1 << 30)
def _rnn_layer_backward(xp, grads, mode="LSTM", has_bias=True, has_proj=False, ws=None, needs=()):
    """Gradients of ``_rnn_layer`` for the inputs marked in ``needs`` (in input order).

    grads: [d output, d h_n, (d c_n), output] (the output only anchors the graph)."""
    if not ws:
        raise RuntimeError(
            f"{mode.lower()}: the fused layer's saved state is missing (it was called without a "
            "workspace, or the graph was already freed)"
        )
    saved, x2, xshape, w_ih, w_hh, w_hr, steps = ws
    if grads[0].dtype == _BF16:  # a bfloat16 layer keeps its float32 workspace (see _rnn_layer)
        gs = _rnn_layer_backward.op.kernel(
            xp, [g.astype("float32") for g in grads], mode, has_bias, has_proj, ws, needs
        )
        return tuple(g.astype(_BF16) for g in gs)
    g0 = grads[0]
    if g0.flags.c_contiguous:
        dy = g0.reshape(-1, g0.shape[-1])
    else:  # e.g. the gradient of a batch_first output: copy it into one contiguous buffer
        dy = xp.empty((g0.size // g0.shape[-1], g0.shape[-1]), g0.dtype)
        dy.reshape(g0.shape)[...] = g0
    dhn = grads[1]
    nst = 2 if mode == "LSTM" else 1
    # gradient of the pre-activations of all steps -> one GEMM per weight gradient
    if mode == "LSTM":
        dG, dh0, dc0, dhp = _lstm_backward(xp, dy, dhn, grads[2], saved, w_hh, w_hr, steps)
        hprev = saved[1]
        d_state = (dh0, dc0)
        dGx = dGh = dG
    elif mode == "GRU":
        dGh, dXn, dh0 = _gru_backward(xp, dy, dhn, saved, w_hh, steps)
        hprev = saved[1]
        d_state = (dh0,)
        dGx = None
    else:
        dG, dh0 = _rnn_backward(xp, dy, dhn, saved, w_hh, steps, mode == "RNN_RELU")
        hprev = saved[1]
        d_state = (dh0,)
        dGx = dGh = dG
    out = []
    if needs[0]:
        if dGx is not None:
            dx = dGx @ w_ih
        else:
            H2 = 2 * (w_ih.shape[0] // 3)
            dx = dGh[:, :H2] @ w_ih[:H2]
            dx += dXn @ w_ih[H2:]
        out.append(dx.reshape(xshape))
    for k in range(nst):
        if needs[1 + k]:
            out.append(d_state[k])
    k = 1 + nst
    if needs[k]:  # w_ih
        if dGx is not None:
            out.append(dGx.T @ x2)
        else:
            H2 = 2 * (w_ih.shape[0] // 3)
            dw = xp.empty_like(w_ih)
            xp.matmul(dGh[:, :H2].T, x2, out=dw[:H2])
            xp.matmul(dXn.T, x2, out=dw[H2:])
            out.append(dw)
    if needs[k + 1]:  # w_hh
        out.append(dGh.T @ hprev)
    k += 2
    if has_bias:
        if needs[k]:
            if dGx is not None:
                out.append(dGx.sum(0))
            else:
                H2 = 2 * (w_ih.shape[0] // 3)
                db = xp.empty((w_ih.shape[0],), w_ih.dtype)
                db[:H2] = dGh[:, :H2].sum(0)
                db[H2:] = dXn.sum(0)
                out.append(db)
        if needs[k + 1]:
            # LSTM / RNN: both biases get the same gradient (a copy: two leaves, two arrays)
            same = dGx is dGh and needs[k]
            out.append(out[-1].copy() if same else dGh.sum(0))
        k += 2
    if has_proj and needs[k]:
        out.append(dhp.T @ saved[4])
    return tuple(out)


@_rnn_layer_backward.vjp
def _(grad, mode):
    _no_double_backward(grad, mode)


def _rnn_layer_node_name(node) -> str:
    """The grad_fn name of the layer's output as torch's cpu kernels name it: a packed sequence
    concatenates its steps (CatBackward0); an LSTM without projections in float32 (or in
    bfloat16 on a cpu where torch's oneDNN takes it) runs as oneDNN's layer
    (MkldnnRnnLayerBackward0); the rest stack their steps."""
    shape, dt, _names = node.meta[0]
    if len(shape) == 2:
        return "CatBackward0"
    lstm = node.saved_arg("mode") == "LSTM" and not node.saved_arg("has_proj")
    if lstm and (dt == _dt.float32.np or dt == _BF16 and onednn_bf16()):
        return "MkldnnRnnLayerBackward0"
    return "StackBackward0"


_rnn_layer.op.name_rule = _rnn_layer_node_name


def _rnn_layer_composite(tensors, mode, has_bias, has_proj, batch_sizes, reverse):
    """``_rnn_layer`` recomputed with the composite cells (ember ops, so twice differentiable):
    the same steps, padded or packed, in either direction. Returns (output, h_n[, c_n])."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = _unpack(tensors, mode, has_bias, has_proj)
    if batch_sizes is None:
        T, B = x.shape[0], x.shape[1]
    else:
        T, B = len(batch_sizes), batch_sizes[0]
    x2 = x.reshape(-1, x.shape[-1])
    lstm = mode == "LSTM"
    cell = {"GRU": gru_cell, "RNN_TANH": rnn_tanh_cell, "RNN_RELU": rnn_relu_cell}.get(mode)
    h, c = h0[:0], (c0[:0] if lstm else None)
    done_h, done_c, ys = [], [], []
    for off, bs in _steps(T, B, batch_sizes, reverse):
        cur = h.shape[0]
        if bs < cur:  # packed, forward: the longest sequences go on, the others end here
            done_h.append(h[bs:])
            h = h[:bs]
            if lstm:
                done_c.append(c[bs:])
                c = c[:bs]
        elif bs > cur:  # the first step, or packed in reverse: sequences start from h0
            h = _cat([h, h0[cur:bs]]) if cur else h0[:bs]
            if lstm:
                c = _cat([c, c0[cur:bs]]) if cur else c0[:bs]
        xt = x2[off : off + bs]
        if lstm:
            h, c = _lstm_step(xt, h, c, w_ih, w_hh, b_ih, b_hh)
            if w_hr is not None:
                h = h.matmul(w_hr.t())
        else:
            h = cell(xt, h, w_ih, w_hh, b_ih, b_hh)
        ys.append((off, h))
    ys.sort(key=lambda p: p[0])  # reverse direction: back into time (row) order
    y = _cat([p[1] for p in ys]).reshape(x.shape[:-1] + (h.shape[-1],))
    hn = _cat([h] + done_h[::-1]) if done_h else h  # ended rows have the higher indices
    if not lstm:
        return y, hn
    return y, hn, (_cat([c] + done_c[::-1]) if done_c else c)


def _rnn_layer_grads_graph(grads, tensors, mode, has_bias, has_proj, batch_sizes, reverse, needs):
    """The layer's gradients under create_graph: the fused backward has no derivative, so the
    layer is recomputed with the composite cells and differentiated with a graph (torch's cpu
    layers are compositions too, so their double backward works). Only this path pays for it."""
    from ...autograd import grad as _grad

    outs = _rnn_layer_composite(tensors, mode, has_bias, has_proj, batch_sizes, reverse)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
    want = [t for t, n in zip(tensors, needs) if n]
    gs = _grad(
        [o for o, _ in pairs],
        want,
        [g for _, g in pairs],
        retain_graph=True,
        create_graph=True,
        allow_unused=True,
    )
    it = iter(gs)
    out = []
    for t, n in zip(tensors, needs):
        g = next(it) if n else None
        out.append(t.new_zeros(t.shape) if n and g is None else g)
    return tuple(out)


@_rnn_layer.vjp
def _(grad, result, tensors, mode, has_bias, has_proj, batch_sizes, reverse, ws, needs):
    # `tensors` saves the layer's input (the first tensor) with its version: modifying it in
    # place before backward is torch's error, not a silently wrong gradient
    grads = list(grad) if type(grad) is tuple else [grad]
    if _grad_state.enabled and type(ws) is Reserve:
        # create_graph: a first derivative that is itself differentiable
        return _rnn_layer_grads_graph(
            grads, ws.tensors, mode, has_bias, has_proj, batch_sizes, reverse, needs
        )
    # the layer's output joins the inputs: under create_graph it ties the gradients to the
    # forward graph, so a second backward reaches _rnn_layer_backward's vjp (which raises)
    # instead of silently treating the first derivative as a constant
    gs = _rnn_layer_backward(grads + [result], mode, has_bias, has_proj, ws, needs)
    it = iter(gs)
    return tuple(next(it) if n else None for n in needs)


# ---------------------------------------------------------------------- cells (composites)
def _cell_checks(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, k: int) -> None:
    """torch's cell checks, in its order: the input's size(1), then the hidden state's batch
    (size(0)) and size(1) (a 3-D hidden state fails on its size(1), as there)."""
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.shape[1]} expected {w_ih.shape[1]}"
        )
    if input.shape[0] != hx.shape[0]:
        raise RuntimeError(
            f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size {hx.shape[0]}"
        )
    if hx.size(1) != w_hh.shape[1]:  # size(): a 1-D state fails with torch's IndexError
        raise RuntimeError(
            f"hidden{k} has inconsistent hidden_size: got {hx.shape[1]}, expected {w_hh.shape[1]}"
        )


def _affine(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    # at::linear's addmm when there is a bias: its dtype checks (mat1/mat2, then self) and its
    # messages are the ones a mixed-dtype hidden state meets in torch's cells
    if b is not None and x.dim() == 2:
        return OPS["addmm"].public(b, x, w.t())
    y = x.matmul(w.t())
    return y if b is None else y + b


# torch's cells are built on at::linear, which autocast lists: their gates (biases included)
# run in the lower precision, and the float32 states they meet promote back
_affine = _autocast_entry(_affine, "linear")


def lstm_cell_states(hx) -> tuple:
    """lstm_cell's (h, c) out of ``hx``, with torch's checks of it (LSTMCell runs them before
    reading the states' names)."""
    if isinstance(hx, Tensor):  # a lone tensor would unpack along its rows
        raise TypeError(
            "lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not Tensor"
        )
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    return tuple(hx)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: returns (h', c') (torch.lstm_cell; gates i, f, g, o)."""
    h, c = lstm_cell_states(hx)
    _cell_checks(input, h, w_ih, w_hh, 0)
    _cell_checks(input, c, w_ih, w_hh, 1)
    return _lstm_step(input, h, c, w_ih, w_hh, b_ih, b_hh)


def _lstm_step(input, h, c, w_ih, w_hh, b_ih, b_hh):
    """lstm_cell without its checks (a projected layer's h and c differ in size)."""
    gh = _affine(h, w_hh, b_hh)  # torch's LSTM and RNN cells multiply the state first
    gates = _affine(input, w_ih, b_ih) + gh
    i, f, g, o = gates.chunk(4, 1)
    c1 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h1 = o.sigmoid() * c1.tanh()
    return h1, c1


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: returns h' (torch.gru_cell; gates r, z, n)."""
    _cell_checks(input, hx, w_ih, w_hh, 0)
    if hx._data.ndim == 3:  # (H, H) beside an unbatched input: torch's first gate sum, the
        # hidden gates (N, ceil(H / 3), 3 H) plus the input's (N, H), fails to broadcast
        raise broadcast_error(
            (tuple(hx.shape[:2]) + (w_hh.shape[0],), (input.shape[0], hx.shape[1]))
        )
    gi = _affine(input, w_ih, b_ih)
    gh = _affine(hx, w_hh, b_hh)
    ir, iz, i_n = gi.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (i_n + r * hn).tanh()
    return (hx - n) * z + n  # torch's operand order (the node order of its graph)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with tanh: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    _cell_checks(input, hx, w_ih, w_hh, 0)
    gh = _affine(hx, w_hh, b_hh)  # the state's product first (torch's dtype errors)
    return (_affine(input, w_ih, b_ih) + gh).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with relu: h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    _cell_checks(input, hx, w_ih, w_hh, 0)
    gh = _affine(hx, w_hh, b_hh)  # the state's product first (torch's dtype errors)
    return (_affine(input, w_ih, b_ih) + gh).relu()
