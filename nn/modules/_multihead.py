"""MultiheadAttention (torch.nn.MultiheadAttention), with torch's parameter layout.

Parameters: ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E) when key/value dims equal
``embed_dim``; otherwise ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim),
``v_proj_weight`` (E, vdim). ``out_proj`` is a Linear; ``bias_k``/``bias_v`` (1, 1, E) with
``add_bias_kv``. State dicts load across with torch.

Names (spec 4.3): the output keeps the query's names; q/k/v must agree on the feature-dim name
when they share ``in_proj_weight``; with ``kdim``/``vdim`` each input's features are checked
against its own projection weight only. The attention weights are named (batch, target, source)
from the query's and key's names (nn/_attention.py ``_mha_names``).
"""

from __future__ import annotations

from ...autograd.grad_mode import _state as _grad_state
from ...core import dtype as _dt
from ...core.autocast import state as _autocast_state
from ...core.ops.creation import empty
from ...core.tensor import Tensor
from .. import init
from .._attention import _check_converted_masks, _check_mask_type, _mha
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


def fast_path_nan(out: Tensor, key_padding_mask, attn_mask, num_heads: int) -> Tensor:
    """``out`` (N, L, E) as torch's fused inference attention (native multi-head attention, the
    fused encoder layer) leaves it: NaN for a query whose every key is masked in some head (a
    softmax over nothing but -inf), where the composite path's attention gives numbers. Masks:
    boolean (True: masked) or additive float (-inf: masked)."""

    def masked(m):
        return m if m.dtype is _dt.bool_ else m == float("-inf")

    N, L = out.shape[0], out.shape[1]
    merged = None
    if attn_mask is not None:
        am = masked(attn_mask)
        merged = am.reshape(1, 1, L, -1) if am.dim() == 2 else am.reshape(N, num_heads, L, -1)
    if key_padding_mask is not None:
        km = masked(key_padding_mask).reshape(N, 1, 1, -1)
        merged = km if merged is None else merged.logical_or(km)
    dead = merged.all(-1).any(1)  # (N or 1, L or 1): a query with no key left in some head
    if not bool(dead.any()):
        return out
    return out.masked_fill(dead.unsqueeze(-1), float("nan"))


class MultiheadAttention(Module):
    """Multi-head attention: concat(head_1..head_h) W_o, head_i = attn(Q W_q_i, K W_k_i, V W_v_i).

    Inputs are (L, N, E) (or (N, L, E) with ``batch_first``) or unbatched (L, E). Returns
    ``(attn_output, attn_output_weights)``; the weights are None unless ``need_weights``.
    """

    __constants__ = ("batch_first",)

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        fk = {"device": device, "dtype": dtype}
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **fk))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **fk))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **fk))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **fk))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **fk))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **fk))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``; see the class docstring for shapes.

        ``key_padding_mask`` (N, S): True (or -inf) marks padding keys. ``attn_mask`` (L, S) or
        (N*num_heads, L, S): True (or -inf) forbids a pair. ``is_causal``: a hint that
        ``attn_mask`` is the causal mask (then it need not be read)."""
        if key_padding_mask is not None or attn_mask is not None:
            # torch's module checks both masks' dtypes before anything else
            _check_mask_type(key_padding_mask, "key_padding_mask", None, "", 2)
            _check_mask_type(attn_mask, "attn_mask", None, "", 2)
            _check_converted_masks(query, key_padding_mask, attn_mask)
        sep = not self._qkv_same_embed_dim
        out = _mha(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            self.training,
            key_padding_mask,
            need_weights,
            attn_mask,
            sep,
            self.q_proj_weight if sep else None,
            self.k_proj_weight if sep else None,
            self.v_proj_weight if sep else None,
            None,
            None,
            average_attn_weights,
            is_causal,
            self.batch_first,
        )
        if need_weights or (key_padding_mask is None and attn_mask is None):
            return out
        if self._native_fast_path(query, key, value, key_padding_mask, attn_mask):
            out = (fast_path_nan(out[0], key_padding_mask, attn_mask, self.num_heads), None)
        return out

    def _native_fast_path(self, query, key, value, key_padding_mask, attn_mask) -> bool:
        """Whether torch runs this call through torch._native_multi_head_attention (its
        inference fast path; checked as torch does). Only asked about a masked call."""
        if any(m is not None and m.is_floating_point() for m in (key_padding_mask, attn_mask)):
            return False
        w, b = self.in_proj_weight, self.in_proj_bias
        if (
            query.dim() != 3
            or query is not key
            or key is not value
            or w is None
            or b is None
            or query.dtype != b.dtype
            or query.dtype != w.dtype
            or self.training
            or self.num_heads % 2 == 1
            or not self.batch_first
            or self.bias_k is not None
            or self.bias_v is not None
            or self.add_zero_attn
            or not self._qkv_same_embed_dim
            or _autocast_state.enabled.get("cuda", False)  # torch.is_autocast_enabled()
        ):
            return False
        args = (query, w, b, self.out_proj.weight, self.out_proj.bias)
        return not (_grad_state.enabled and any(a is not None and a.requires_grad for a in args))

    def merge_masks(
        self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, query: Tensor
    ) -> tuple[Tensor | None, int | None]:
        """Combine the masks the way torch's fused path takes them: (mask, mask_type) with
        mask_type 1 for ``key_padding_mask`` alone (returned as is) and 2 for an ``attn_mask``
        expanded to (N, num_heads, L, L), plus the padding mask when both are given."""
        if attn_mask is None and key_padding_mask is None:
            return None, None
        if attn_mask is None:
            return key_padding_mask, 1
        bsz, L = query.shape[0], query.shape[1]  # (N, L, E), as torch's fused path assumes
        H = self.num_heads
        if attn_mask.dim() == 2:
            merged = attn_mask.reshape(1, 1, L, L).expand(bsz, H, L, L)
        else:
            merged = attn_mask.reshape(bsz, -1, L, L)  # torch's view: its error shows the -1
        if key_padding_mask is not None:
            kpm = key_padding_mask.reshape(bsz, 1, 1, L).expand(bsz, H, L, L)
            if merged.dtype == kpm.dtype and kpm._data.dtype.kind == "b":
                merged = merged.logical_or(kpm)  # torch adds booleans as a logical or
            else:
                merged = merged + kpm
        return merged, 2
