"""Transformer, TransformerEncoder/Decoder and their layers (torch.nn.modules.transformer).

Submodule and parameter names follow torch's, so state dicts load across. Boolean masks stay
boolean (True = not allowed) all the way down to the attention op, and ``is_causal`` (given, or
detected from a mask equal to ``generate_square_subsequent_mask``) runs the causal attention
without reading a mask. Feed-forward linears run on (rows, features) views: one GEMM each.

Names (spec 4.3): batch and time names are kept through every layer.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable

from ...autograd.grad_mode import _state as _grad_state
from ...core import dtype as _dt
from ...core.autocast import state as _autocast_state
from ...core.ops.creation import arange as _arange
from ...core.ops.creation import full
from ...core.ops.linalg import _same_dtype_mm
from ...core.tensor import Tensor
from .. import functional as F
from .. import init
from .._attention import _as_float, _check_mask
from ._multihead import MultiheadAttention, fast_path_nan
from .activation import GELU, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """A float (sz, sz) mask: 0 on and below the diagonal, -inf above (future positions)."""
    from ...core import dtype as _dt

    dt = _dt.get_default_dtype() if dtype is None else dtype  # torch: the default dtype
    return full((sz, sz), float("-inf"), dtype=dt, device=device).triu(1)


def _get_activation_fn(activation: str) -> Callable:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_seq_len(src: Tensor, batch_first: bool) -> int | None:
    s = src.shape
    if len(s) == 2:  # unbatched: (S, E)
        return s[0]
    return s[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None, size=None) -> bool:
    """``is_causal`` if given; else whether ``mask`` is the square subsequent mask (float -inf
    above the diagonal, or boolean True above it)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size else mask.shape[-2]
        if tuple(mask.shape) != (sz, sz):
            return False
        a = mask._data
        from ...core.device import array_module

        xp = array_module(a)
        upper = xp.triu(xp.ones((sz, sz), dtype=bool), 1)
        if a.dtype.kind == "b":
            make_causal = bool((a == upper).all())
        else:
            make_causal = bool(((a == float("-inf")) == upper).all() and (a[~upper] == 0).all())
    return make_causal


def _ff(x: Tensor, lin1: Linear, act, drop: Dropout, lin2: Linear) -> Tensor:
    """linear2(dropout(act(linear1(x)))) on a (rows, features) view: one GEMM per linear."""
    if x._names is not None or x.dim() <= 2:
        return lin2(drop(act(lin1(x))))
    lead = x.shape[:-1]
    h = lin1(x.reshape(-1, x.shape[-1]))
    h = lin2(drop(act(h)))
    return h.reshape(*lead, h.shape[-1])


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: one attention block per name in ``_attns``
    and a feed-forward block, each with its norm and dropout (torch's submodule names, in
    torch's order: the attentions, linear1, dropout, linear2, norm1.., dropout1..)."""

    _init_per_layer = True  # torch writes this __init__ in each layer

    __constants__ = ("norm_first",)
    _attns: tuple = ()
    _flags_activation = False  # sets ``activation_relu_or_gelu`` (the encoder layer, like torch)

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        for name in self._attns:
            mha = MultiheadAttention(
                d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **fk
            )
            setattr(self, name, mha)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        blocks = range(1, len(self._attns) + 2)
        for i in blocks:
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        for i in blocks:
            setattr(self, f"dropout{i}", Dropout(dropout))
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if self._flags_activation:
            if activation is F.relu or isinstance(activation, ReLU):
                self.activation_relu_or_gelu = 1
            elif activation is F.gelu or isinstance(activation, GELU):
                self.activation_relu_or_gelu = 2
            else:
                self.activation_relu_or_gelu = 0
        self.activation = activation

    def _attend(self, attn, drop, x, mem, attn_mask, key_padding_mask, is_causal) -> Tensor:
        x = attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return drop(x)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False) -> Tensor:
        return self._attend(
            self.self_attn, self.dropout1, x, x, attn_mask, key_padding_mask, is_causal
        )

    def _ff_block(self, x: Tensor) -> Tensor:
        drop = getattr(self, f"dropout{len(self._attns) + 1}")
        return drop(_ff(x, self.linear1, self.activation, self.dropout, self.linear2))


def _canon(mask: Tensor | None, like: Tensor) -> Tensor | None:
    """A boolean mask (True = masked) as an additive float mask of ``like``'s dtype."""
    return None if mask is None else _as_float(mask, like.dtype)


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention + feed-forward block (post-norm, or pre-norm with ``norm_first``)."""

    _attns = ("self_attn",)
    _flags_activation = True

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """src (S, N, E) / (N, S, E) with ``batch_first`` / unbatched (S, E)."""
        _check_mask(src_key_padding_mask, "src_key_padding_mask", src_mask, "src_mask")
        _check_mask(src_mask, "src_mask", None, "")
        # like torch, boolean masks become additive float masks here (so attention checks,
        # and warns about, mismatched mask types once)
        src_key_padding_mask = _canon(src_key_padding_mask, src)
        src_mask = _canon(src_mask, src)
        # torch's fused inference kernel adds each residual into the block's output in place:
        # in a cpu autocast region (which its fast-path check does not see) that output, and so
        # the layer's, has the region's dtype
        add = _add_into if _autocast_state.enabled.get("cpu") and self._fused(src) else _add
        if is_causal and self._fused(src):
            is_causal = False  # torch's fused inference kernel ignores the hint (it reads the mask)
        try:
            out = self._layer(src, src_mask, src_key_padding_mask, is_causal, add)
        except (RuntimeError, AssertionError):
            if self._fused(src):  # that kernel meets the inputs first: its own errors
                self._fused_checks(src, src_mask, src_key_padding_mask)
            raise
        if (src_mask is not None or src_key_padding_mask is not None) and self._fused(src):
            # torch's fused kernel: NaN rows for queries that see no key at all
            out = fast_path_nan(out, src_key_padding_mask, src_mask, self.self_attn.num_heads)
        return out

    def _layer(self, src, src_mask, src_key_padding_mask, is_causal, add) -> Tensor:
        x = src
        if self.norm_first:
            x = add(self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal), x)
            x = add(self._ff_block(self.norm2(x)), x)
        else:
            x = self.norm1(add(self._sa_block(x, src_mask, src_key_padding_mask, is_causal), x))
            x = self.norm2(add(self._ff_block(x), x))
        return x

    def _fused_checks(self, src: Tensor, src_mask, src_key_padding_mask) -> None:
        """The errors of torch's fused encoder layer, in its order: merging the masks (views of
        them), then its kernel's: the first norm (norm_first), the embedding size, the q/k/v
        projection's dtypes, a padding mask's shape."""
        mask, kind = self.self_attn.merge_masks(src_mask, src_key_padding_mask, src)
        if self.norm_first:  # the kernel's first step
            self.norm1(src)
        E = self.self_attn.embed_dim
        if src.shape[2] != E:
            raise RuntimeError(
                f"passed-in embed_dim {E} didn't match last dim of query {src.shape[2]}"
            )
        w = self.self_attn.in_proj_weight
        if src.dtype != w.dtype:  # its q/k/v projection comes next
            _same_dtype_mm(src._data, w._data)
        if kind == 1 and tuple(mask.shape) != tuple(src.shape[:2]):
            raise RuntimeError("For mask_type == 1 mask shape should be (B, L)")

    def _fused(self, src: Tensor) -> bool:
        """Whether torch runs this call through torch._transformer_encoder_layer_fwd (its
        inference fast path; checked as torch does, in its order)."""
        attn = self.self_attn
        if (
            src.dim() != 3
            or self.training
            or not attn.batch_first
            or attn.in_proj_bias is None
            or not attn._qkv_same_embed_dim
            or not self.activation_relu_or_gelu
            or self.norm1.eps != self.norm2.eps
            or attn.num_heads % 2 == 1
            or _autocast_state.enabled.get("cuda", False)  # torch.is_autocast_enabled()
            or any(m._forward_hooks or m._forward_pre_hooks for m in self.modules())
        ):
            return False
        args = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight)
        args += (attn.out_proj.bias, self.norm1.weight, self.norm1.bias, self.norm2.weight)
        args += (self.norm2.bias, self.linear1.weight, self.linear1.bias, self.linear2.weight)
        args += (self.linear2.bias,)
        return not (_grad_state.enabled and any(a is not None and a.requires_grad for a in args))


def _add(out: Tensor, residual: Tensor) -> Tensor:
    return residual + out


def _add_into(out: Tensor, residual: Tensor) -> Tensor:
    """``out.add_(residual)`` as torch's fused layer does it: the sum in ``out``'s dtype."""
    r = residual + out
    return r if r.dtype is out.dtype else r.to(out.dtype)


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention + cross-attention over ``memory`` + feed-forward block."""

    _attns = ("self_attn", "multihead_attn")

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """tgt (T, N, E) and memory (S, N, E) (batch first with ``batch_first``)."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x
                + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False) -> Tensor:
        return self._attend(
            self.multihead_attn, self.dropout2, x, mem, attn_mask, key_padding_mask, is_causal
        )


def _nested_reason(layer) -> str:
    """Why torch would not use nested tensors for this layer ('' when it would)."""
    p = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{p} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{p}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (
            f"{p}.self_attn.batch_first was not True"
            "(use batch_first for better inference performance)"
        )
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{p}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{p}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{p}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{p}.norm1.eps was not equal to {p}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{p}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of ``encoder_layer`` (then ``norm`` if given).

    ``enable_nested_tensor`` is accepted (ember has no nested tensors; results are the same)."""

    __constants__ = ("norm",)

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        if enable_nested_tensor:
            why = _nested_reason(encoder_layer)
            if why:
                warnings.warn(
                    f"enable_nested_tensor is True, but self.use_nested_tensor is False because "
                    f"{why}",
                    stacklevel=2,
                )
                self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Run every layer on ``src``; ``is_causal`` None: detected from ``mask``."""
        _check_mask(src_key_padding_mask, "src_key_padding_mask", mask, "mask")
        _check_mask(mask, "mask", None, "")
        first = self.layers[0] if len(self.layers) else None
        bf = first.self_attn.batch_first if isinstance(first, TransformerEncoderLayer) else False
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        if padded is not None:
            _warn_nested_once()
            if not self.mask_check:
                src_key_padding_mask = padded  # the positions torch's nested tensors hold
        kpm, mask = _canon(src_key_padding_mask, src), _canon(mask, src)  # torch's, see above
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, bf))
        out = src
        for mod in self.layers:
            out = mod(out, src_mask=mask, is_causal=is_causal, src_key_padding_mask=kpm)
        if padded is not None:
            # torch's nested-tensor inference path pads its output with zeros before the final
            # norm, so padded positions come out as norm(0)
            out = out.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            out = self.norm(out)
        return out

    def _nested_padding(self, src, mask, kpm):
        """The padded positions (True) when torch would run this call on nested tensors
        (inference with a left-aligned ``src_key_padding_mask`` and no ``mask``), else None.
        Checked in torch's order, so that a mask of the wrong shape fails as it does there."""
        first = self.layers[0] if len(self.layers) else None
        if not self.use_nested_tensor or first is None or first.training:
            return None
        if src.dim() != 3 or kpm is None:
            return None
        padded = kpm if kpm.dtype is _dt.bool_ else kpm.ne(0)
        if self.mask_check:
            if padded.dim() != 2:
                raise RuntimeError("Padding mask should be 2D")
            if tuple(padded.shape) != tuple(src.shape[:2]):
                raise RuntimeError("Mask size should match input size")
            if padded.shape[1] > 1 and bool((padded[:, :-1] > padded[:, 1:]).any()):
                return None  # not left aligned: torch does not take the nested path
        if mask is not None or _autocast_state.enabled.get("cuda", False):
            return None  # torch.is_autocast_enabled() asks about cuda regions only
        if _grad_state.enabled:
            if src.requires_grad or any(p.requires_grad for p in first.parameters()):
                return None
            # the nested tensor then meets a later layer's attention that has to record grads
            for layer in self.layers[1:]:
                if any(p.requires_grad for p in layer.self_attn.parameters()):
                    raise AssertionError(
                        "MultiheadAttention does not support NestedTensor outside of its fast "
                        "path. The fast path was not hit because grad is enabled and at least "
                        "one of query or the input/output projection weights or biases "
                        "requires_grad"
                    )
        if not self.mask_check:
            # torch trusts the mask to be left aligned: each sequence is its first
            # (number of kept positions) steps, whatever the mask says about which
            kept = padded.logical_not().sum(1, keepdim=True)
            padded = _arange(padded.shape[1], device=padded.device) >= kept
        return padded


_NESTED_WARNED = []


def _warn_nested_once() -> None:
    """torch's warning (once a process) on building the nested tensor of its inference path."""
    if not _NESTED_WARNED:
        _NESTED_WARNED.append(True)
        warnings.warn(
            "The PyTorch API of nested tensors is in prototype stage and will change in the near "
            "future. We recommend specifying layout=torch.jagged when constructing a nested "
            "tensor, as this layout receives active development, has better operator coverage, "
            "and works with torch.compile.",
            stacklevel=3,
        )


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of ``decoder_layer`` (then ``norm`` if given)."""

    __constants__ = ("norm",)

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Run every layer on ``tgt`` attending to ``memory``; ``tgt_is_causal`` None: detected."""
        first = self.layers[0] if len(self.layers) else None
        bf = first.self_attn.batch_first if first is not None else False
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, _get_seq_len(tgt, bf))
        out = tgt
        for mod in self.layers:
            out = mod(
                out,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            out = self.norm(out)
        return out


class Transformer(Module):
    """The encoder-decoder Transformer ("Attention Is All You Need"), torch's layout."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = F.relu,
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        stacks = (
            ("encoder", custom_encoder, TransformerEncoderLayer, TransformerEncoder, num_encoder_layers),
            ("decoder", custom_decoder, TransformerDecoderLayer, TransformerDecoder, num_decoder_layers),
        )  # fmt: skip
        for name, custom, layer_cls, stack_cls, num_layers in stacks:
            if custom is None:
                layer = layer_cls(
                    d_model,
                    nhead,
                    dim_feedforward,
                    dropout,
                    activation,
                    layer_norm_eps,
                    batch_first,
                    norm_first,
                    bias,
                    **fk,
                )
                norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
                custom = stack_cls(layer, num_layers, norm)
            setattr(self, name, custom)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Encode ``src``, then decode ``tgt`` against it."""
        batched = src.dim() == 3
        if batched:
            if not self.batch_first and src.shape[1] != tgt.shape[1]:
                raise RuntimeError("the batch number of src and tgt must be equal")
            if self.batch_first and src.shape[0] != tgt.shape[0]:
                raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float (sz, sz) mask with -inf above the diagonal and 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
