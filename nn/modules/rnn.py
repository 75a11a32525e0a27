"""Recurrent layers (torch.nn.modules.rnn): RNNBase, RNN, LSTM, GRU and their cells.

Parameters, their names (weight_ih_l{k}[_reverse], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k},
weight_hr_l{k}), shapes, order and default initialisation (U(-1/sqrt(hidden), 1/sqrt(hidden))) are
torch's, so torch state_dicts load. Each (layer, direction) runs as ONE fused op over the whole
sequence (core/ops/recurrent.py); the cells are compositions of ember ops (twice differentiable).

Names (spec 4.3): the time and batch dims keep their names; the features dim keeps its name while
the weights are unnamed; h_n's layer dim is created, so unnamed.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ...autograd.grad_mode import _state
from ...core.autocast import is_any_enabled as _any_autocast
from ...core.ops.creation import empty, zeros
from ...core.ops.recurrent import (
    Reserve,
    _rnn_layer,
    gru_cell,
    lstm_cell,
    lstm_cell_state,
    lstm_cell_states,
    rnn_relu_cell,
    rnn_tanh_cell,
)
from ...core.ops.shape import cat, stack
from ...core.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _with_dim_names
from .module import Module

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _any_grad(x, states, weights) -> bool:
    """Whether the fused layer's backward can run (else it saves nothing)."""
    if x.requires_grad:
        return True
    for t in states:
        if t.requires_grad:
            return True
    for t in weights:
        if t.requires_grad:
            return True
    return False


def run_layers(
    x, states, weights, mode, num_layers, bidirectional, has_bias, has_proj, dropout, batch_sizes
):
    """The stacked layers of a recurrent network: one fused op per (layer, direction).

    x: (T, B, I) time-major or packed data; states: [h0 (L*D, B, H)] or [h0, c0]; weights: the
    flat list in torch's order (w_ih, w_hh, (b_ih, b_hh), (w_hr) per layer and direction);
    ``dropout``: the probability between layers (0 outside training). Returns (output,
    [h_n, (c_n)]). The modules and the functional torch.lstm / torch.gru / torch.rnn_* share it."""
    D = 2 if bidirectional else 1
    per = len(weights) // (num_layers * D)
    grad_on = _state.enabled
    outs_h = [[] for _ in states]
    for layer in range(num_layers):
        ys = []
        for d in range(D):
            k = layer * D + d
            ws = weights[k * per : (k + 1) * per]
            st = [s[k] for s in states]
            ins = [x, *st, *ws]
            grad = grad_on and _any_grad(x, st, ws)
            layer_args = {
                "mode": mode,
                "has_bias": has_bias,
                "has_proj": has_proj,
                "batch_sizes": batch_sizes,
                "reverse": d == 1,
            }
            try:
                r = _rnn_layer(ins, ws=Reserve(ins) if grad else None, **layer_args)
            except RuntimeError:
                c = None
                if mode == "LSTM" and st[1].dtype != x.dtype:  # torch promotes c in f * c
                    w_hr = ws[-1] if has_proj else None
                    c = lstm_cell_state(x, st[1], ws[1], w_hr, has_bias, batch_sizes)
                if c is None:
                    raise
                ins = [x, st[0], c, *ws]
                r = _rnn_layer(ins, ws=Reserve(ins) if grad else None, **layer_args)
            ys.append(r[0])
            for j in range(len(states)):
                outs_h[j].append(r[1 + j])
        x = ys[0] if D == 1 else cat(ys, -1)
        if dropout > 0 and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, [stack(h, 0) for h in outs_h]


def _apply_permutation(t: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return t.index_select(dim, permutation)


class RNNBase(Module):
    """The common machinery of RNN, LSTM and GRU (``mode``: 'LSTM', 'GRU', 'RNN_TANH',
    'RNN_RELU')."""

    __constants__ = (
        "mode",
        "input_size",
        "hidden_size",
        "num_layers",
        "bias",
        "batch_first",
        "dropout",
        "bidirectional",
        "proj_size",
    )

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        float(dropout)  # torch converts first: a string or None fails with float()'s own error
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        for arg, flag in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(flag, bool):
                raise TypeError(f"{arg} should be of type bool, got: {type(flag).__name__}")
        # each size is type-checked, then range-checked, input_size first (torch's order)
        for arg, size in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(size, int):
                raise TypeError(f"{arg} should be of type int, got: {type(size).__name__}")
            if size <= 0:
                raise ValueError(f"{arg} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        # torch's RNN takes hidden_size as it is (a bool then fails in empty(), as there)
        gate_size = _GATES[mode] * hidden_size if _GATES[mode] > 1 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        fk = {"device": device, "dtype": dtype}
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden = proj_size if proj_size > 0 else hidden_size
                layer_in = input_size if layer == 0 else real_hidden * num_directions
                params = [
                    Parameter(empty((gate_size, layer_in), **fk)),
                    Parameter(empty((gate_size, real_hidden), **fk)),
                ]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [
                        Parameter(empty(gate_size, **fk)),
                        Parameter(empty(gate_size, **fk)),
                    ]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(Parameter(empty((proj_size, hidden_size), **fk)))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for n, p in zip(names, params):
                    setattr(self, n, p)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    def flatten_parameters(self) -> None:
        """Accepted for compatibility: ember's weights need no flat (cuDNN) buffer."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list:
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ------------------------------------------------------------------ checks (torch's)
    def check_input(self, input: Tensor, batch_sizes) -> None:
        w = self._flat_weights[0]
        if input.dtype != w.dtype and not _any_autocast():  # autocast casts them (torch's rule)
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}"
            )
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. "
                f"Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, h)

    def check_hidden_size(
        self, hx: Tensor, expected_hidden_size, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    # ------------------------------------------------------------------ the layers
    def _prepare(self, input, hx):
        """Unpack / unsqueeze the input; returns (input, batch_sizes, sorted, unsorted,
        is_batched, batch_dim, max_batch)."""
        if isinstance(input, PackedSequence):
            data, _batch_sizes, sorted_indices, unsorted_indices = input
            bs = input._batch_sizes_tuple()
            return data, bs, sorted_indices, unsorted_indices, True, None, bs[0]
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        if input.dim() not in (2, 3):
            tail = " tensor" if name == "RNN" else ""
            raise ValueError(
                f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail} instead"
            )
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        max_batch = input.size(0) if self.batch_first else input.size(1)
        return input, None, None, None, is_batched, batch_dim, max_batch

    def _run_layers(self, x, states, batch_sizes):
        """x: (T, B, I) time-major or packed data; states: [h0 (L*D, B, H)] or [h0, c0].
        Returns (output, [h_n, (c_n)])."""
        weights = [getattr(self, n) for n in self._flat_weights_names]
        return run_layers(
            x, states, weights, self.mode, self.num_layers, self.bidirectional, bool(self.bias),
            self.proj_size > 0, self.dropout if self.training else 0.0, batch_sizes,
        )  # fmt: skip

    def _forward_impl(self, input, hx):
        orig = input
        packed = isinstance(orig, PackedSequence)
        x, batch_sizes, sorted_i, unsorted_i, is_batched, batch_dim, B = self._prepare(input, hx)
        lstm = self.mode == "LSTM"
        D = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            L = self.num_layers * D
            states = [zeros((L, B, real_hidden), dtype=x.dtype, device=x.device)]
            if lstm:
                states.append(zeros((L, B, self.hidden_size), dtype=x.dtype, device=x.device))
        else:
            # indexed like torch, so that a lone tensor for (h, c) fails as it does there
            states = [hx[0], hx[1]] if lstm else [hx]
            if not packed:
                want = 3 if is_batched else 2
                kind = f"{'batched' if is_batched else 'unbatched'} {want}-D input"
                if lstm and (states[0].dim() != want or states[1].dim() != want):
                    raise RuntimeError(
                        f"For {kind}, hx and cx should also be {want}-D but got "
                        f"({states[0].dim()}-D, {states[1].dim()}-D) tensors"
                    )
                if not lstm and states[0].dim() != want:
                    raise RuntimeError(
                        f"For {kind}, hx should also be {want}-D but got {states[0].dim()}-D tensor"
                    )
                if not is_batched:
                    states = [s.unsqueeze(1) for s in states]
        # torch's checks (input dtype/dims/size, then the hidden sizes)
        self.check_forward_args(x, (states[0], states[1]) if lstm else states[0], batch_sizes)
        # an unbatched call rebuilds (h, c) from hx[0] and hx[1] first, as torch's does
        if lstm and is_batched and isinstance(hx, (tuple, list)) and len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        if hx is not None and sorted_i is not None:
            states = [self.permute_hidden(s, sorted_i) for s in states]
        if not packed and self.batch_first:
            x = x.transpose(0, 1)
        batch_name = None
        if packed and (
            orig._dim_names is not None
            or (hx is not None and any(s._names is not None for s in states))
        ):
            batch_name = _packed_batch_name(self.mode, orig._dim_names, states)
        out, hidden = self._run_layers(x, states, batch_sizes)
        if packed:
            output = _with_dim_names(
                PackedSequence(out, orig.batch_sizes, sorted_i, unsorted_i), orig._dim_names
            )
            hidden = [self.permute_hidden(h, unsorted_i) for h in hidden]
            if batch_name is not None:
                hidden = [h.rename(*_with_batch(h, batch_name)) for h in hidden]
        else:
            if self.batch_first:
                out = out.transpose(0, 1)
                if not lstm and out._grad_fn is not None:
                    # torch's GRU/RNN transpose their output in place (transpose_): its node
                    out._grad_fn.bname = "TransposeBackward1"
            output = out
            if not is_batched:
                output = output.squeeze(batch_dim)
                hidden = [h.squeeze(1) for h in hidden]
        return output, (tuple(hidden) if lstm else hidden[0])

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)``"""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o), with an optional projection of h (proj_size).

    ``forward(input, (h_0, c_0))`` returns ``output, (h_n, c_n)``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes) -> tuple:
        e = self.get_expected_hidden_size(input, batch_sizes)
        return (e[0], e[1], self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: tuple, batch_sizes) -> None:
        """torch's checks of an LSTM call: the input, then h (hidden[0]) and c (hidden[1])."""
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hidden[0], expected, "Expected hidden[0] size {}, got {}")
        cell = self.get_expected_cell_size(input, batch_sizes)
        self.check_hidden_size(hidden[1], cell, "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(_apply_permutation(h, permutation) for h in hx)
        return _apply_permutation(hx, permutation)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn)))."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


def _packed_batch_name(mode: str, dim_names: tuple | None, states: list) -> str | None:
    """The batch name of a PackedSequence input (remembered from its padded input) unified
    with the initial states' (dim 1), checked as the unpacked input's batch dim is checked:
    packed data's first dim merges time and batch, so the layer op cannot see it (spec 4.3)."""
    batch = dim_names[1] if dim_names is not None else None
    for label, st in zip(("hx", "cx"), states):
        sb = st._names[1] if st._names is not None and st.dim() == 3 else None
        if sb is None:
            continue
        if batch is not None and sb != batch:
            raise RuntimeError(
                f"{mode.lower()}: the packed input's batch dim {batch!r} does not match "
                f"{label}'s batch dim {sb!r} (names {list(st._names)}); use rename or "
                "refine_names"
            )
        batch = sb
    return batch


def _with_batch(h: Tensor, batch: str) -> tuple:
    """``h``'s names (L*D, batch, hidden) with the batch dim named ``batch``."""
    n = h._names if h._names is not None else (None,) * h.dim()
    return (n[0], batch, *n[2:])


def _cell_names(name: str, input: Tensor, w_ih: Tensor, w_hh: Tensor, outs: tuple) -> tuple:
    """Names of a cell's outputs, as the fused layers name theirs (spec 4.3,
    core/ops/recurrent.py): the batch dim keeps its name; the features dim keeps the input's name
    while the weights are unnamed, else takes weight_hh's input (hidden) name. (The composite's
    matmuls against the weights would drop it.) Called only when something is named."""
    xn, wi, wh = input._names, w_ih._names, w_hh._names
    feat = xn[-1] if xn is not None else None
    if wi is not None and wi[1] is not None and feat is not None and wi[1] != feat:
        raise RuntimeError(
            f"{name}: the input's features dim {feat!r} does not match weight_ih's input dim "
            f"{wi[1]!r} (names {list(xn)} and {list(wi)}); use rename or refine_names"
        )
    out_f = feat if wi is None and wh is None else (wh[1] if wh is not None else None)
    return tuple(o.rename(*(o._names or (None,) * o.dim())[:-1], out_f) for o in outs)


def _cell_state_names(name: str, input: Tensor, states) -> bool:
    """Check the states' batch names against the input's, before the step (as the layers check
    h0 and c0; the step's own sum would fail with add's message): True when any is named."""
    xn = input._names
    b = xn[0] if xn is not None else None
    named = xn is not None
    for label, h in states:
        hn = h._names
        if hn is None:
            continue
        named = True
        if b is not None and hn[0] is not None and hn[0] != b:
            raise RuntimeError(
                f"{name}: the input's batch dim {b!r} does not match {label}'s batch dim "
                f"{hn[0]!r} (names {list(xn)} and {list(hn)}); use rename or refine_names"
            )
    return named


# ---------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """weight_ih (chunks*hidden, input), weight_hh (chunks*hidden, hidden), optional biases."""

    __constants__ = ("input_size", "hidden_size", "bias")

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **fk))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **fk))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **fk))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **fk))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batch(self, name: str, input: Tensor, hx, hx_label: str = "hidden"):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected {hx_label} to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    __constants__ = ("input_size", "hidden_size", "bias", "nonlinearity")

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, is_batched = self._batch("RNNCell", input, hx)
        if self.nonlinearity == "tanh":
            fn = rnn_tanh_cell
        elif self.nonlinearity == "relu":
            fn = rnn_relu_cell
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        wi, wh = self.weight_ih, self.weight_hh
        named = _cell_state_names("RNNCell", input, (("hx", hx),))
        ret = fn(input, hx, wi, wh, self.bias_ih, self.bias_hh)
        if named or wi._names is not None or wh._names is not None:
            (ret,) = _cell_names("RNNCell", input, wi, wh, (ret,))
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead"
                    )
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (z, z)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        else:
            hx = lstm_cell_states(hx)
        wi, wh = self.weight_ih, self.weight_hh
        named = _cell_state_names("LSTMCell", input, (("hx", hx[0]), ("cx", hx[1])))
        h, c = lstm_cell(input, hx, wi, wh, self.bias_ih, self.bias_hh)
        if named or wi._names is not None or wh._names is not None:
            h, c = _cell_names("LSTMCell", input, wi, wh, (h, c))
        if not is_batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step: returns h'."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, is_batched = self._batch("GRUCell", input, hx)
        wi, wh = self.weight_ih, self.weight_hh
        named = _cell_state_names("GRUCell", input, (("hx", hx),))
        ret = gru_cell(input, hx, wi, wh, self.bias_ih, self.bias_hh)
        if named or wi._names is not None or wh._names is not None:
            (ret,) = _cell_names("GRUCell", input, wi, wh, (ret,))
        return ret if is_batched else ret.squeeze(0)
