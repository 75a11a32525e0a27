"""Attention: F.scaled_dot_product_attention and F.multi_head_attention_forward.

The hot part is one registered op, ``_attention_probs`` (and ``_attention_probs_masked``):
softmax(scale * q @ k^T [+ mask]) computed in place on one scores buffer (the causal mask is a
cached boolean block, never a float mask per call). Its derivative is the softmax backward and two
batched matmuls done on raw arrays when no graph is wanted; under ``create_graph=True`` it is the
same formula in ember ops, so double backward works. The product with ``value`` is a second op,
``_attention_values``, so the attention weights are a real tensor (MultiheadAttention returns
them, dropout applies to them). Their per-head products are numpy's stacked matmul, BLAS choosing
its threads (forcing one thread made them 1.5x slower on the idle machine). Projections run as one
2-D GEMM each on (rows, features) views; heads are split and merged by strided views, with one
copy where the heads are merged.

Fully masked query rows give zeros in SDPA (torch's safe softmax) and NaN in
MultiheadAttention's ``need_weights=True`` path, like torch.

Names (spec 4.3): attention keeps the query's names; the feature dims of query, key and value
must agree by name (an error names both lists) where one projection weight serves all three;
with separate projections (``kdim``/``vdim``) each input is checked against its own weight.
MultiheadAttention's weights are named (batch, target, source) (see ``_mha_names``).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..autograd.grad_mode import _state
from ..autograd.node import as_torch_node as _as_torch_node
from ..core import dtype as _dt
from ..core.arg_errors import type_name
from ..core.autocast import entry as _autocast_entry
from ..core.autocast import is_any_enabled as _any_autocast
from ..core.autocast import state as _autocast_state
from ..core.device import array_module
from ..core.dtype import C_NAMES, scalar_name
from ..core.kernels.fused_softmax import attention_softmax_kernels
from ..core.names import check_weight_dims, names_of, unify
from ..core.ops.creation import zeros as _zeros
from ..core.ops.linalg import _same_dtype_mm
from ..core.registry import broadcast_error, op
from ..core.tensor import Tensor, _wrap
from ._args import arg_type_error
from .attention.bias import CausalBias, CausalVariant

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")


def _cname(t: Tensor) -> str:
    """torch's C++ scalar-type name of ``t``'s dtype, as its SDPA messages spell it."""
    s = str(t.dtype).rsplit(".", 1)[-1]
    return C_NAMES.get(s, s)


# ---------------------------------------------------------------------- the registered ops
_CAUSAL: dict = {}  # (L, S, xp, device) -> boolean block, True above the diagonal (masked)


def _causal_block(xp, a, L: int, S: int):
    key = (L, S, id(xp), str(getattr(a, "device", "")))
    m = _CAUSAL.get(key)
    if m is None:
        if len(_CAUSAL) > 64:
            _CAUSAL.clear()
        m = _CAUSAL[key] = xp.triu(xp.ones((L, S), dtype=bool), 1)
    return m


def _probs_names(ins, *args, **kwargs):
    # (..., L, E) x (..., S, E) -> (..., L, S): the query's dims but its features keep their
    # names; the key dim is new (unnamed)
    q, k = ins[0], ins[1]
    nq = names_of(q)
    if k._data.ndim > q._data.ndim:
        return None
    out = tuple(nq[:-1]) + (None,)
    return None if all(n is None for n in out) else out


def _scores(xp, query, key, scale):
    s = xp.matmul(query, xp.swapaxes(key, -1, -2))
    if scale != 1.0:
        s *= scale  # a Python float: float32 stays float32 (NEP 50)
    return s


def _softmax_(xp, s, safe: bool, round_to=None):
    """softmax over the last dim, in place on ``s``. ``safe``: rows that are all -inf give 0.
    ``round_to``: a half dtype the exponentials are rounded to before they are divided by their
    (unrounded) sum, as torch's cpu flash kernel feeds them to its half-precision GEMM."""
    if s.shape[-1] == 0:  # no keys: nothing to normalize (the output is zeros)
        return s
    m = s.max(axis=-1, keepdims=True)
    if safe:
        m = xp.where(xp.isneginf(m), 0, m)
    s -= m
    xp.exp(s, out=s)
    d = s.sum(axis=-1, keepdims=True)
    if safe:
        d = xp.where(d == 0, 1, d)
    if round_to is not None:
        s = s.astype(round_to).astype(s.dtype)
    s /= d
    return s


def _lowp(query):
    return query.dtype.itemsize == 2 and query.dtype.kind in "fV"


# How half-precision (float16/bfloat16) probabilities come back (``lowp``), computed in float32:
# _LOWP_ROUND rounded to the input's dtype (MultiheadAttention's weights, flex_attention);
# _LOWP_FLOAT float32 (torch's math path: the product with value is rounded once, at the end);
# _LOWP_FLASH float32 quotients of exponentials rounded to the half dtype (torch's cpu flash
# kernel: out = half(half(exp(s - max)) @ value / sum)). SDPA's output then matches torch's in
# all but a few last-place roundings; rounding the normalized probabilities put about 40% of
# its elements one unit off.
_LOWP_ROUND, _LOWP_FLOAT, _LOWP_FLASH = 0, 1, 2


def _lowp_result(s, dt, lowp):
    return s if dt is None or lowp != _LOWP_ROUND else s.astype(dt)


@op(names=_probs_names, method=False)
def _attention_probs(xp, query, key, scale=1.0, is_causal=False, safe=True, lowp=_LOWP_ROUND):
    """softmax(scale * query @ key^T) over the keys; ``is_causal``: query i sees keys j <= i."""
    dt = None
    if _lowp(query):  # half precision: compute in float32, like torch's accumulation
        dt, query, key = query.dtype, query.astype("float32"), key.astype("float32")
    fused = attention_softmax_kernels(xp, query.dtype)
    if fused is not None:  # cupy: scale, mask and softmax as one kernel (fused_softmax.py)
        s = xp.ascontiguousarray(_scores(xp, query, key, 1.0))
        if s.size:
            s = fused.forward(s, scale, is_causal, safe)
        return _lowp_result(s, dt, lowp)
    s = _scores(xp, query, key, scale)
    if is_causal:
        xp.copyto(s, _NEG_INF, where=_causal_block(xp, s, s.shape[-2], s.shape[-1]))
    s = _softmax_(xp, s, safe, dt if lowp == _LOWP_FLASH else None)
    return _lowp_result(s, dt, lowp)


@op(names=_probs_names, method=False)
def _attention_probs_masked(xp, query, key, mask, scale=1.0, safe=True, lowp=_LOWP_ROUND):
    """softmax(scale * query @ key^T + mask); a boolean ``mask`` keeps the True positions."""
    dt = None
    if _lowp(query):
        dt, query, key = query.dtype, query.astype("float32"), key.astype("float32")
        if mask.dtype.kind != "b":
            mask = mask.astype("float32")
    s = _scores(xp, query, key, scale)
    if mask.ndim > s.ndim or any(a > b for a, b in zip(mask.shape[::-1], s.shape[::-1])):
        s = s + xp.zeros(mask.shape, dtype=s.dtype)  # the mask widens the batch dims
    if mask.dtype.kind == "b":
        xp.copyto(s, _NEG_INF, where=~mask)
    else:
        s += mask
    s = _softmax_(xp, s, safe, dt if lowp == _LOWP_FLASH else None)
    return _lowp_result(s, dt, lowp)


def _probs_grad(grad, query, key, p, scale, needs, want_mask):
    """Gradients of softmax(scale * q k^T + m) for q, k (and m) given dL/dp."""
    if _state.enabled:  # create_graph: the same formula in ember ops (differentiable again)
        gy = grad * p
        gs = gy - p * gy.sum(-1, keepdim=True)
        gm = gs if want_mask else None
        if scale != 1.0:
            gs = gs * scale
        gq = gs @ key if needs[0] else None
        gk = gs.transpose(-1, -2) @ query if needs[1] else None
        return gq, gk, gm
    g = grad._data
    pa = p._data
    qa, ka = query._data, key._data
    if _lowp(g) or _lowp(qa):  # half precision: float32 math (the engine casts the grads back)
        g, pa, qa, ka = (a.astype("float32") for a in (g, pa, qa, ka))
    xp = array_module(g)
    fused = None if want_mask else attention_softmax_kernels(xp, g.dtype)
    if fused is not None and g.size:
        gs = fused.backward(xp.ascontiguousarray(g), xp.ascontiguousarray(pa), scale)
        gq = _wrap(xp.matmul(gs, ka)) if needs[0] else None
        gk = _wrap(xp.matmul(xp.swapaxes(gs, -1, -2), qa)) if needs[1] else None
        return gq, gk, None
    r = xp.einsum("...ij,...ij->...i", g, pa)[..., None]  # rowwise sum(g * p), no temporary
    gs = g - r
    gs *= pa  # p * (g - sum(g * p)): the softmax backward, two passes over the buffer
    gm = _wrap(gs.copy() if scale != 1.0 else gs) if want_mask else None
    if scale != 1.0:
        gs *= scale
    gq = _wrap(xp.matmul(gs, ka)) if needs[0] else None
    gk = _wrap(xp.matmul(xp.swapaxes(gs, -1, -2), qa)) if needs[1] else None
    return gq, gk, gm


@_attention_probs.vjp
def _(grad, query, key, result, scale, needs):
    gq, gk, _ = _probs_grad(grad, query, key, result, scale, needs, False)
    return gq, gk


@_attention_probs_masked.vjp
def _(grad, query, key, result, scale, needs):
    return _probs_grad(grad, query, key, result, scale, needs, needs[2])


def _values_names(ins, *args, **kwargs):
    p, v = ins[0], ins[1]
    if v._data.ndim > p._data.ndim:
        return None
    out = tuple(names_of(p)[:-1]) + (names_of(v)[-1],)
    return None if all(n is None for n in out) else out


@op(names=_values_names, method=False)
def _attention_values(xp, probs, value):
    """probs @ value over the last two dims (batch dims broadcast), one BLAS thread per matrix."""
    if _lowp(probs) or _lowp(value):  # numpy has no half-precision BLAS: float32, rounded back
        return xp.matmul(probs.astype("float32"), value.astype("float32")).astype(value.dtype)
    return xp.matmul(probs, value)


@_attention_values.vjp
def _(grad, probs, value, needs):
    if _state.enabled:  # create_graph: ember ops (differentiable again)
        gp = grad @ value.transpose(-1, -2) if needs[0] else None
        gv = probs.transpose(-1, -2) @ grad if needs[1] else None
        return gp, gv
    g, pa, va = grad._data, probs._data, value._data
    if _lowp(g) or _lowp(pa):
        g, pa, va = (a.astype("float32") for a in (g, pa, va))
    xp = array_module(g)
    gp = _wrap(xp.matmul(g, xp.swapaxes(va, -1, -2))) if needs[0] else None
    gv = _wrap(xp.matmul(xp.swapaxes(pa, -1, -2), g)) if needs[1] else None
    return gp, gv


_probs = _attention_probs
_probs_masked = _attention_probs_masked


# ---------------------------------------------------------------------- helpers
def _unname(t):
    return t if t is None or t._names is None else t.rename(None)


def _check_feature_names(what: str, pairs) -> None:
    """q/k/v must agree on the name of their feature (last) dim (spec 4.3)."""
    seen = None
    for label, t in pairs:
        if t is None or t._names is None:
            continue
        n = t._names[-1]
        if n is None:
            continue
        if seen is None:
            seen = (label, n, t._names)
        elif seen[1] != n:
            raise RuntimeError(
                f"{what}: the feature dims of {seen[0]} and {label} must have the same name, but "
                f"{seen[0]} is named {list(seen[2])} and {label} is named {list(t._names)}; "
                "rename one of them (rename/refine_names)"
            )


def _check_sdpa_names(query, key, value, attn_mask) -> None:
    """matmul's rule (spec 4.4) for the scores query @ key^T and their product with value: the
    batch dims unify (an error names both lists); a named mask unifies with the scores' names
    (batch, the query's sequence name, the key's sequence name unless it repeats the query's)."""
    qn, kn, vn = names_of(query), names_of(key), names_of(value)
    try:
        batch = unify(unify(qn[:-2], kn[:-2]), vn[:-2])
        if attn_mask is not None and attn_mask._names is not None:
            src = kn[-2] if kn[-2] != qn[-2] else None
            unify(batch + (qn[-2], src), attn_mask._names)
    except RuntimeError as e:
        raise RuntimeError(f"scaled_dot_product_attention: {e}") from None


def _check_mha_masks(key, batch_first, wt_names, key_padding_mask, attn_mask) -> None:
    """Named masks unify with the names of what they mask (the spec is silent on masks; they
    are added to the scores, so add's rule applies): ``key_padding_mask`` (N, S) with (batch,
    the key's sequence name), ``attn_mask`` (L, S) or (N * heads, L, S) with the attention
    weights' (target, source). An error names both lists."""
    batch, tgt, src = wt_names
    kn = names_of(key)
    ks = kn[(1 if batch_first else 0) if len(kn) == 3 else 0] if kn else None
    try:
        if key_padding_mask is not None and key_padding_mask._names is not None:
            unify((batch, ks)[2 - key_padding_mask.dim() :], key_padding_mask._names)
        if attn_mask is not None and attn_mask._names is not None:
            unify((tgt, src), attn_mask._names)
    except RuntimeError as e:
        raise RuntimeError(f"multi_head_attention_forward: {e}") from None


def _mha_names(query, key, value, batch_first, sep, in_w, q_w, k_w, v_w, out_w):
    """Names of multi_head_attention_forward's results (spec 4.3), checked on the inputs.

    Each input projection is a Linear: with one packed ``in_proj_weight`` query, key and value
    share its input (features) dim, so their feature names must agree; with separate projection
    weights (``kdim``/``vdim``) each input's features are its own dim, checked only against its
    own weight's input name. The output keeps the query's names (its features take a named
    ``out_proj`` weight's output name). The attention weights are (batch, target, source): the
    batch name of query and key (they must agree), the query's sequence name and the key's
    sequence name (unnamed when it repeats the query's, as in self-attention); a head dim is
    unnamed. Returns (output names, (batch, target, source))."""
    fname = "multi_head_attention_forward"
    if sep:
        for x, w in ((query, q_w), (key, k_w), (value, v_w)):
            if x._names is not None and w is not None and w._names is not None:
                check_weight_dims(fname, "features", x._names, (-1,), w._names, (1,))
    else:
        _check_feature_names(fname, (("query", query), ("key", key), ("value", value)))
        if in_w is not None and in_w._names is not None:
            for x in (query, key, value):
                if x._names is not None:
                    check_weight_dims(fname, "features", x._names, (-1,), in_w._names, (1,))
    qn, kn = names_of(query), names_of(key)
    out = list(qn)
    if out_w is not None and out_w._names is not None and out_w._names[0] is not None:
        out[-1] = out_w._names[0]
    if len(qn) == 3:
        bd, sd = (0, 1) if batch_first else (1, 0)
        batch, qb, kb = qn[bd], qn[bd], kn[bd] if len(kn) == 3 else None
        if qb is not None and kb is not None and qb != kb:
            raise RuntimeError(
                f"{fname}: the batch dims of query and key must have the same name, but query "
                f"is named {list(qn)} and key is named {list(kn)}; rename one of them "
                "(rename/refine_names)"
            )
        batch = qb if qb is not None else kb
        tgt, src = qn[sd], kn[sd] if len(kn) == 3 else None
    else:
        batch, tgt, src = None, qn[0], kn[0] if len(kn) == 2 else None
    if src is not None and src in (tgt, batch):
        src = None  # a dim name appears once: self-attention's key dim stays unnamed
    return tuple(out), (batch, tgt, src)


def _bshape(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b))


# ---------------------------------------------------------------------- F.scaled_dot_product_attention
def _sdpa_type_error(e: Exception, query, key, value, attn_mask) -> Exception:
    names = ("query", "key", "value", "attn_mask")
    args = (query, key, value, attn_mask)
    return arg_type_error("scaled_dot_product_attention", e, names, args, required=3)


def _sdpa_arg_types(query, key, value, attn_mask, *flags) -> None:
    """The TypeErrors of torch's sdpa binding, in its argument order: the tensors, then
    dropout_p and scale as floats (a number or a 0-d tensor), is_causal and enable_gqa as bools
    (named as keywords, the way they are passed)."""
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        raise _sdpa_type_error(TypeError(), query, key, value, attn_mask)
    for name, v in zip(("dropout_p", "is_causal", "scale", "enable_gqa"), flags):
        if name in ("is_causal", "enable_gqa"):
            want, ok = "bool", type(v) is bool
        else:
            want = "float"
            ok = (v is None and name == "scale") or isinstance(v, numbers.Real)
            ok = ok or (isinstance(v, Tensor) and v.dim() == 0)
        if not ok:
            raise TypeError(
                f"scaled_dot_product_attention(): argument '{name}' must be {want}, not "
                f"{type_name(v)}"
            )


def _sdpa_empty(query: Tensor, key: Tensor, value: Tensor) -> Tensor:
    """torch's answer when there is no query row or no value entry: zeros of the output's
    shape, tied to q, k and v through their sums times 0 (zero gradients; the mask is never
    read, so neither its shape nor is_causal beside it is checked)."""
    shape = tuple(query.shape[:-1]) + (value.shape[-1],)
    return (
        _zeros(shape, dtype=query.dtype, device=query.device)
        + (query.sum() + key.sum() + value.sum()) * 0
    )


@_autocast_entry
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two dims.

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev). ``attn_mask``: a
    boolean mask (True takes part) or a float mask added to the scores, broadcastable to
    (..., L, S). ``is_causal``: query i attends to keys j <= i (top-left aligned).
    ``scale`` defaults to 1/sqrt(E). ``enable_gqa``: key/value heads (dim -3) are shared by
    groups of query heads.
    """
    try:
        qn = query._names
        named = qn is not None or key._names is not None or value._names is not None
    except AttributeError as e:
        raise _sdpa_type_error(e, query, key, value, attn_mask) from None
    if (
        type(dropout_p) is not float
        or type(is_causal) is not bool
        or (scale is not None and type(scale) is not float)
        or type(enable_gqa) is not bool
    ):
        _sdpa_arg_types(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if named:
        _check_feature_names(
            "scaled_dot_product_attention", (("query", query), ("key", key), ("value", value))
        )
        if query.dim() >= 2 and key.dim() >= 2 and value.dim() >= 2:  # else torch's error below
            _check_sdpa_names(query, key, value, attn_mask)
        out = scaled_dot_product_attention(
            _unname(query),
            _unname(key),
            _unname(value),
            _unname(attn_mask),
            dropout_p,
            is_causal,
            scale,
            enable_gqa,
        )
        if qn is not None and out.dim() == len(qn):
            out = out.rename(*qn)
        return out
    if (
        isinstance(attn_mask, CausalBias)
        and attn_mask.variant == CausalVariant.UPPER_LEFT
        and not is_causal
    ):
        attn_mask, is_causal = None, True  # no mask to read
    qd, kd, vd = query._data, key._data, value._data
    # torch's input checks, in its order: the dtypes, the ranks, the mask's dtype
    if qd.dtype != kd.dtype or qd.dtype != vd.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(query)} key.dtype: {_cname(key)} and value.dtype: {_cname(value)} instead."
        )
    if qd.ndim < 2 or kd.ndim < 2 or vd.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{qd.ndim} key.dim: {kd.ndim} and value.dim: {vd.ndim} instead."
        )
    md = None
    if attn_mask is not None:
        try:
            md = attn_mask._data
        except AttributeError as e:
            raise _sdpa_type_error(e, query, key, value, attn_mask) from None
        if md.dtype.kind != "b" and md.dtype != qd.dtype and md.dtype != "float32":
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_cname(attn_mask)} and  query.dtype: {_cname(query)} "
                "instead."
            )
    if qd.shape[-2] == 0 or vd.size == 0:
        return _sdpa_empty(query, key, value)
    floating = qd.dtype.kind in "fV"
    if md is not None and md.dtype.kind == "b" and qd.dtype.kind in "iu":
        # torch turns a bool mask into one of the query's dtype, filled with -inf
        ctype = "int" if qd.dtype.name == "int32" else qd.dtype.name + "_t"
        raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
    flash = _sdpa_flash(qd.shape, kd.shape, vd.shape, attn_mask, dropout_p, enable_gqa)
    if flash and md is not None and md.ndim < 2:  # torch's kernel choice reads size(-2)
        raise IndexError(
            "Dimension out of range (expected to be in range of [-1, 0], but got -2)"
            if md.ndim
            else "Dimension specified as -2 but tensor has no dimensions"
        )
    flash = flash and floating  # (the kernel's dtype check comes after the mask's)
    if flash and dropout_p != 0.0:  # torch picks its flash kernel for any p <= 0
        raise RuntimeError(
            "scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0"
        )
    # torch's math path, in its order: the mask beside is_causal, the grouped heads, q @ k^T
    # (batch, then size), the mask added to the scores, softmax, dropout, then @ v
    if is_causal and md is not None and not flash:  # only torch's flash kernel takes both
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    if enable_gqa and not flash:
        for t in (query, key, value):
            t.size(-3)  # torch's math path reads the heads first: its IndexError for 2-D inputs
    if enable_gqa and qd.ndim >= 3 and kd.ndim >= 3:
        hq, hk, hv = qd.shape[-3], kd.shape[-3], vd.shape[-3]
        if hq != hk or hq != hv:
            if hq % hk or hq % hv:
                raise RuntimeError(
                    "Number of heads in key and value must divide the number of heads in "
                )
            if hk != hq:
                key = key.repeat_interleave(hq // hk, dim=-3)
            if hv != hq:
                value = value.repeat_interleave(hq // hv, dim=-3)
    qb, kb, vb = qd.shape[:-2], key._data.shape[:-2], value._data.shape[:-2]
    if qb != kb:  # matmul broadcasts the batch dims before it compares the sizes
        err = broadcast_error((qb, kb))
        if err is not None:
            raise err
    E = qd.shape[-1]
    mm = qd.ndim == kd.ndim == 2  # torch's matmul: a plain mm, whose message names the shapes
    if kd.shape[-1] != E and mm:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({qd.shape[0]}x{E} and "
            f"{kd.shape[1]}x{kd.shape[0]})"
        )
    if kd.shape[-1] != E:
        b = math.prod(_bshape(qb, kb))
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b}, {E}] but got: [{b}, {kd.shape[-1]}]."
        )
    S = kd.shape[-2]
    if md is not None:
        sshape = _bshape(qb, kb) + (qd.shape[-2], S)
        if md.shape != sshape[len(sshape) - md.ndim :]:
            try:
                full = tuple(np.broadcast_shapes(sshape, md.shape))
            except ValueError:
                raise broadcast_error((sshape, md.shape)) from None
            if full != sshape:  # torch's math path adds the mask into the scores in place
                raise RuntimeError(
                    f"output with shape {list(sshape)} doesn't match the broadcast shape "
                    f"{list(full)}"
                )
    if qd.dtype.kind == "c":
        raise NotImplementedError(
            f"\"softmax_lastdim_kernel_impl\" not implemented for '{scalar_name(query.dtype)}'"
        )
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if vb != qb or vb != kb:
        err = broadcast_error((_bshape(qb, kb), vb))
        if err is not None:
            raise err
    if vd.shape[-2] != S and vd.ndim == 2:  # matmul folds the probabilities' rows: mm's text
        rows = math.prod(_bshape(qb, kb)) * qd.shape[-2]
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{S} and "
            f"{vd.shape[0]}x{vd.shape[1]})"
        )
    if vd.shape[-2] != S:
        b = math.prod(_bshape(_bshape(qb, kb), vb))
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b}, {S}] but got: [{b}, {vd.shape[-2]}]."
        )
    if not floating:  # the (float) probabilities meet the integer values in the last product
        if vd.ndim == 2:  # matmul folds the probabilities onto a 2-D value: mm's message
            raise RuntimeError(
                f"expected m1 and m2 to have the same dtype, but got: float != {_cname(value)}"
            )
        raise RuntimeError(f"expected scalar type Float but found {scalar_name(query.dtype)}")
    sc = 1.0 / math.sqrt(E) if scale is None else float(scale)
    lowp = _LOWP_ROUND
    if _lowp(qd):
        lowp = _LOWP_FLASH if flash else _LOWP_FLOAT
    if attn_mask is None:
        p = _probs(query, key, sc, bool(is_causal), True, lowp)
    else:
        if is_causal:  # torch's flash kernel applies both: the mask and the upper-left block
            xp = array_module(md)
            causal = _causal_block(xp, md, qd.shape[-2], S)
            if md.dtype.kind == "b":
                attn_mask = _wrap(xp.logical_and(md, ~causal))
            else:
                attn_mask = _wrap(md + xp.where(causal, _NEG_INF, 0).astype(md.dtype))
        p = _probs_masked(query, key, attn_mask, sc, True, lowp)
    if dropout_p > 0.0:
        from .functional import dropout

        p = dropout(p, dropout_p)
    out = _attention_values(p, value)
    o = out._data
    if (flash and not qd.flags.c_contiguous) or not o.flags.c_contiguous:
        xp = array_module(o)
        if flash and qd.strides[-1] == qd.itemsize and 0 not in qd.strides:
            # torch's flash kernel lays its output out in the query's dim order (a (B, L, H, E)
            # query: ``out.transpose(1, 2).view(B, L, H * E)`` works, as in the SDPA tutorial)
            order = sorted(range(4), key=lambda d: -qd.strides[d])
            back = [order.index(d) for d in range(4)]
            out._data = xp.ascontiguousarray(o.transpose(order)).transpose(back)
        else:
            # a query whose last dim is strided (or that is expanded) is copied first (flash),
            # and the math path's products are contiguous: a row-major result either way
            out._data = xp.ascontiguousarray(o)
    if out._grad_fn is None:
        return out
    # the grad_fn torch's cpu dispatch gives: its flash kernel's, or its math path's matmul
    if flash:
        name = "ScaledDotProductFlashAttentionForCpuBackward0"
    else:
        name = "MmBackward0" if qd.ndim == kd.ndim == vd.ndim == 2 else "UnsafeViewBackward0"
    return _as_torch_node(out, name)


def _sdpa_flash(qs, ks, vs, attn_mask, dropout_p, enable_gqa) -> bool:
    """Whether torch's cpu dispatch runs its flash kernel: 4-D inputs with one batch size, one
    head size, matching (or grouped) heads, no dropout (p <= 0) and no mask that needs a
    gradient or has a shape the kernel does not broadcast: a 2-D (L or 1, S or 1) one, or a 4-D
    one with a batch and heads of 1 or the query's (a 0-d or 1-D mask passes, for the kernel's
    IndexError)."""
    if not (
        dropout_p <= 0.0
        and len(qs) == len(ks) == len(vs) == 4
        and qs[0] == ks[0] == vs[0]
        and ks[1] == vs[1]
        and (qs[1] == ks[1] or (enable_gqa and ks[1] > 0 and qs[1] % ks[1] == 0))
    ):
        return False
    if attn_mask is not None:  # torch checks the mask before the head sizes
        ms = attn_mask.shape
        if attn_mask.requires_grad:
            return False
        if len(ms) < 2:
            return True
        if len(ms) == 3 or len(ms) > 4:
            return False
        if ms[-2] not in (qs[2], 1) or ms[-1] not in (ks[2], 1):
            return False
        if len(ms) == 4 and (ms[0] not in (1, qs[0]) or ms[1] not in (1, qs[1])):
            return False
    return qs[3] == ks[3] == vs[3]


# ---------------------------------------------------------------------- multi-head attention
def _bool_to_float(mask: Tensor, dtype) -> Tensor:
    """A boolean 'masked' tensor (True = not allowed) as an additive float mask."""
    xp = array_module(mask._data)
    z = xp.zeros(mask._data.shape, dtype=dtype.np if hasattr(dtype, "np") else dtype)
    xp.copyto(z, _NEG_INF, where=mask._data)
    return _wrap(z, mask._names)  # the same dims: the same names (spec 4.2)


def _check_mask(
    mask: Tensor | None, name: str, other: Tensor | None, other_name: str, stacklevel: int = 3
) -> None:
    """torch's mask checks (bool or float, like ``other``'s dtype); masks are kept as they are."""
    other_type = None if other is None else other.dtype
    _check_mask_type(mask, name, other_type, other_name, stacklevel + 1)


def _check_mask_type(
    mask: Tensor | None, name: str, other_type, other_name: str, stacklevel: int
) -> None:
    """``_check_mask`` against the dtype ``other_type`` of the other mask (None: no other)."""
    if mask is None:
        return
    k = mask._data.dtype.kind
    if k != "b" and k not in "fV":
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other_type is not None and other_type != mask.dtype:
        warnings.warn(
            f"Support for mismatched {name} and {other_name} is deprecated. Use same type for "
            "both instead.",
            stacklevel=stacklevel,
        )


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type,
    other_name: str,
    target_type,
    check_other: bool = True,
) -> Tensor | None:
    """torch.nn.functional's private mask normalizer, which attention code copied from torch
    calls: checks ``mask`` (bool or float; warns when its dtype is not ``other_type``) and turns a
    boolean one (True = masked) into an additive float mask of ``target_type``; a float mask is
    returned as it is."""
    if mask is None:
        return None
    _check_mask_type(mask, mask_name, other_type if check_other else None, other_name, 3)
    return _bool_to_float(mask, target_type) if mask._data.dtype.kind == "b" else mask


def _none_or_dtype(input: Tensor | None):
    """The dtype of ``input``, or None for None (torch.nn.functional's private helper)."""
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _in_projection_packed(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """The query/key/value input projections of multi-head attention from the packed weight
    ``w`` (3E x E) and bias ``b`` (3E) (torch.nn.functional's private helper). Self-attention
    (``q is k is v``) takes one matrix product, as torch does."""
    from .functional import linear

    E = q.shape[-1]
    if q is k and k is v:
        return tuple(linear(q, w, b).unflatten(-1, (3, E)).unbind(-2))
    ws = w.split(E)
    bs = (None, None, None) if b is None else b.split(E)
    return tuple(linear(x, wi, bi) for x, wi, bi in zip((q, k, v), ws, bs, strict=False))


def _check_converted_masks(query: Tensor, kpm: Tensor | None, attn_mask: Tensor | None) -> None:
    """torch's MultiheadAttention turns boolean masks into float masks of the query's dtype
    before its functional form checks them again: masks whose dtypes still differ are warned
    about a second time (float masks of two dtypes, or a boolean one beside a float one of
    another dtype than the query's)."""
    if kpm is None or attn_mask is None:
        return
    kd, ad = kpm._data.dtype.kind, attn_mask._data.dtype.kind
    if kd not in "bfV" or ad not in "bfV":
        return  # the functional form rejects it first
    kt = query.dtype if kd == "b" else kpm.dtype
    at = query.dtype if ad == "b" else attn_mask.dtype
    if kt != at:
        warnings.warn(
            "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type "
            "for both instead.",
            stacklevel=4,
        )


def _shape_check(query, key, value, kpm, attn_mask, num_heads) -> bool:
    """torch's input-rank checks for multi-head attention; True when the input is batched."""
    qd = query.dim()
    if qd not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {qd}-D query tensor"
        )
    who = "For batched (3-D) `query`" if qd == 3 else "For unbatched (2-D) `query`"
    if key.dim() != qd or value.dim() != qd:
        raise AssertionError(
            f"{who}, expected `key` and `value` to be {qd}-D but found {key.dim()}-D and "
            f"{value.dim()}-D tensors respectively"
        )
    if kpm is not None and kpm.dim() != qd - 1:
        raise AssertionError(
            f"{who}, expected `key_padding_mask` to be `None` or {qd - 1}-D but found "
            f"{kpm.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"{who}, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead"
            )
        if qd == 2 and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                )
    return qd == 3


def _linear2d(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """x (..., in) @ w^T + b on the rows as one GEMM (numpy's stacked matmul is slower)."""
    from .functional import linear

    if x.dim() == 2:
        return linear(x, w, b)
    lead = x.shape[:-1]
    return linear(x.reshape(-1, x.shape[-1]), w, b).reshape(*lead, w.shape[0])


def _heads(x2d: Tensor, seq_first: bool, L: int, N: int, H: int, D: int, n: int = 1) -> tuple:
    """Projected rows (L*N or N*L, n*H*D) -> n tensors (N, H, L, D), strided views (no copy)."""
    perm = (1, 2, 0, 3) if seq_first else (0, 2, 1, 3)
    lead = (L, N) if seq_first else (N, L)
    if n == 1:
        return (x2d.reshape(*lead, H, D).permute(*perm),)
    return tuple(t.permute(*perm) for t in x2d.reshape(*lead, n, H, D).unbind(2))


def _mha(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training,
    key_padding_mask,
    need_weights,
    attn_mask,
    use_separate_proj_weight,
    q_proj_weight,
    k_proj_weight,
    v_proj_weight,
    static_k,
    static_v,
    average_attn_weights,
    is_causal,
    batch_first,
):
    """Multi-head attention on (L, N, E) inputs, or (N, L, E) ones when ``batch_first`` (the
    module passes its layout through so that no transposed copy is made)."""
    named = query._names is not None or key._names is not None or value._names is not None
    masks_named = (key_padding_mask is not None and key_padding_mask._names is not None) or (
        attn_mask is not None and attn_mask._names is not None
    )
    if named or masks_named:
        out_names, wt_names = _mha_names(
            query,
            key,
            value,
            batch_first,
            use_separate_proj_weight,
            in_proj_weight,
            q_proj_weight,
            k_proj_weight,
            v_proj_weight,
            out_proj_weight,
        )
        if masks_named:
            _check_mha_masks(key, batch_first, wt_names, key_padding_mask, attn_mask)
        query, key, value = _unname(query), _unname(key), _unname(value)
        key_padding_mask, attn_mask = _unname(key_padding_mask), _unname(attn_mask)
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
        batch_first = False
    if batch_first:
        bsz, tgt_len, embed_dim = query.shape
        src_len = key.shape[1]
    else:
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
    _check_mask(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask", stacklevel=4)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask."
        )
    causal = False
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint replaces the mask: no mask is read (nor checked) at all
        causal = True
    else:
        _check_mask(attn_mask, "attn_mask", None, "")
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    H = num_heads
    head_dim = embed_dim // H
    if head_dim * H != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {H}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            ks, vs = _seq_first_shape(key, batch_first), _seq_first_shape(value, batch_first)
            raise AssertionError(
                f"key's sequence and batch dims {ks[:2]} do not match value's {vs[:2]}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        ks, vs = _seq_first_shape(key, batch_first), _seq_first_shape(value, batch_first)
        raise AssertionError(f"key shape {ks} does not match value shape {vs}")
    seq_first = not batch_first
    E = embed_dim
    key_bsz = key.shape[1] if seq_first else key.shape[0]
    # ---- input projections (one GEMM for self-attention)

    def proj(x, w, b, L, n=1, cols=E):  # rows of x @ w^T + b -> n tensors (N, H, L, D)
        try:
            y = _linear2d(x.reshape(-1, cols), w, b)
        except RuntimeError:
            if batch_first and x.dtype != w.dtype:  # torch's transposed input: matmul's mm
                _same_dtype_mm(x._data, w._data)
            raise
        return _heads(y, seq_first, L, bsz, H, head_dim, n)

    if use_separate_proj_weight:
        for c, w in zip("qkv", (q_proj_weight, k_proj_weight, v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {c}_proj_weight is None"
                )
        ein = (E, key.shape[-1], value.shape[-1])
        for nm, w, e in zip(
            ("query", "key", "value"), (q_proj_weight, k_proj_weight, v_proj_weight), ein
        ):
            if tuple(w.shape) != (E, e):
                raise AssertionError(f"expecting {nm} weights shape of {(E, e)}, but got {w.shape}")
        bq = bk = bv = None
        if in_proj_bias is not None:
            bq, bk, bv = in_proj_bias.chunk(3)
        (q,) = proj(query, q_proj_weight, bq, tgt_len)
        if key_bsz != bsz:
            _mha_key_batch_error(attn_mask, tgt_len, src_len, bsz, key_bsz, H, E, bias_k, bias_v)
        (k,) = proj(key, k_proj_weight, bk, src_len, cols=key.shape[-1])
        (v,) = proj(value, v_proj_weight, bv, src_len, cols=value.shape[-1])
    elif in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    elif query is key and key is value:
        q, k, v = proj(query, in_proj_weight, in_proj_bias, tgt_len, 3)
    else:
        wq, wk, wv = in_proj_weight.chunk(3)
        bq = bk = bv = None
        if in_proj_bias is not None:
            bq, bk, bv = in_proj_bias.chunk(3)
        (q,) = proj(query, wq, bq, tgt_len)
        if key.shape[-1] != E:  # torch's linear of the key rows with (W_k or W_kv)^T fails
            cols, rows = 2 * E if key is value else E, key.shape[0] * key.shape[1]
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({rows}x{key.shape[-1]} and {E}x{cols})"
            )
        if key_bsz != bsz:
            _mha_key_batch_error(attn_mask, tgt_len, src_len, bsz, key_bsz, H, E, bias_k, bias_v)
        if key is value:
            k, v = proj(key, in_proj_weight[E:], _slice(in_proj_bias, E), src_len, 2)
        else:
            (k,) = proj(key, wk, bk, src_len)
            (v,) = proj(value, wv, bv, src_len)
    # ---- masks: checked on the caller's shapes, then padded for the extra key columns
    if attn_mask is not None:
        _mha_attn_mask_shape(attn_mask, tgt_len, src_len, bsz, H)
        if attn_mask.dim() == 3:
            attn_mask = attn_mask.reshape(bsz, H, tgt_len, src_len)
    extra = 0
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        from ..core.ops.shape import cat

        bk_ = bias_k.reshape(1, H, 1, head_dim).expand(bsz, H, 1, head_dim)
        bv_ = bias_v.reshape(1, H, 1, head_dim).expand(bsz, H, 1, head_dim)
        k = cat([k, bk_], 2)
        v = cat([v, bv_], 2)
        extra += 1
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    k = _static(static_k, "static_k", k, bsz, H, head_dim)
    v = _static(static_v, "static_v", v, bsz, H, head_dim)
    if add_zero_attn:
        from ..core.ops.shape import cat

        z = _zeros((bsz, H, 1, head_dim), dtype=k.dtype, device=k.device)
        k = cat([k, z], 2)
        v = cat([v, z], 2)
        extra += 1
    S = k.shape[2]
    if extra:
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask, extra)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask, extra)
    if key_padding_mask is not None:
        for d, want in ((0, bsz), (1, S)):  # torch checks it here, padded like the keys
            if key_padding_mask.shape[d] != want:
                raise AssertionError(
                    f"Expected key_padded_mask.shape[{d}] to be {want}, but got "
                    f"{key_padding_mask.shape[d]}"
                )
        kpm = key_padding_mask.reshape(bsz, 1, 1, S)
    if v.shape[2] != S:  # a static_k / static_v of another length: torch's bmm, or its view
        if need_weights:
            raise RuntimeError(
                "Expected size for first two dimensions of batch2 tensor to be: "
                f"[{bsz * H}, {S}] but got: [{bsz * H}, {v.shape[2]}]."
            )
        raise RuntimeError(
            f"shape '[{bsz}, {H}, {S}, {head_dim}]' is invalid for input of size {v.numel()}"
        )
    if key_padding_mask is not None:
        if attn_mask is None:
            attn_mask = kpm
        elif attn_mask.dtype == kpm.dtype and kpm._data.dtype.kind == "b":
            attn_mask = attn_mask.logical_or(kpm)
        else:
            attn_mask = _as_float(attn_mask, q.dtype) + _as_float(kpm, q.dtype)
    if not training:
        dropout_p = 0.0
    scale = 1.0 / math.sqrt(head_dim)
    safe = not need_weights  # torch: NaN rows in the weights path, zeros through SDPA
    if attn_mask is None:
        p = _probs(q, k, scale, causal, safe)
    else:
        if attn_mask._data.dtype.kind == "b":
            m = attn_mask.logical_not()  # MHA's True = masked; the op's True = kept
        else:
            m = attn_mask
            if m.dtype != q.dtype:
                _check_float_mask(m, q, need_weights)
                m = m.to(q.dtype)
        p = _probs_masked(q, k, m, scale, safe)
    if dropout_p > 0.0:
        from .functional import dropout

        p = dropout(p, dropout_p)
    a = _attention_values(p, v)  # (N, H, L, D)
    a = a.permute(2, 0, 1, 3) if seq_first else a.permute(0, 2, 1, 3)
    out = _linear2d(a.reshape(-1, E), out_proj_weight, out_proj_bias)
    if seq_first:
        out = out.reshape(tgt_len, bsz, E)
    else:  # torch computes (L, N, E) and hands back its transpose
        out = _as_torch_node(out.reshape(bsz, tgt_len, E), "TransposeBackward0")
    weights = None
    if need_weights:
        # torch's per-head weights are a view of its (N * H, L, S) batch
        weights = p.mean(1) if average_attn_weights else _as_torch_node(p, "ViewBackward0")
    if not batched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    if named:
        if any(n is not None for n in out_names):
            out = out.rename(*out_names)
        if weights is not None:
            b, tgt, src = wt_names
            wn = ((b,) if batched else ()) + (() if average_attn_weights else (None,))
            wn += (tgt, src)
            if any(n is not None for n in wn):
                weights = weights.rename(*wn)
    return out, weights


def _check_float_mask(mask: Tensor, q: Tensor, need_weights: bool) -> None:
    """A float mask whose dtype is not the projected query's: torch's weights path adds it with
    baddbmm (one dtype for all), its SDPA path takes a float32 mask or the query's dtype. Inside
    an autocast region both are listed ops, which first cast a mask that is not float64 to the
    region's dtype. Raises torch's errors; returns when torch runs."""
    md = mask.dtype
    dev = mask.device.type
    if _any_autocast() and _autocast_state.enabled.get(dev, False) and md is not _dt.float64:
        md = _autocast_state.dtype[dev]
    if md is q.dtype or (md is _dt.float32 and not need_weights):
        return
    mn, qn = C_NAMES.get(md.name, md.name), _cname(q)
    if need_weights:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {mn}, batch1: {qn}, batch2: {qn}"
        )
    raise RuntimeError(
        "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
        f"attn_mask.dtype: {mn} and  query.dtype: {qn} instead."
    )


def _seq_first_shape(t: Tensor, batch_first: bool):
    """``t``'s shape as torch's functional form sees it: the module transposes a batch_first
    input to (L, N, E) first."""
    s = t.shape
    return type(s)((s[1], s[0], *s[2:])) if batch_first else s


def _mha_attn_mask_shape(attn_mask: Tensor, tgt_len: int, src_len: int, bsz: int, H: int):
    nd = attn_mask.dim()
    want = {2: (tgt_len, src_len), 3: (bsz * H, tgt_len, src_len)}.get(nd)
    if want is None:
        raise RuntimeError(f"attn_mask's dimension {nd} is not supported")
    if tuple(attn_mask.shape) != want:
        raise RuntimeError(
            f"The shape of the {nd}D attn_mask is {attn_mask.shape}, but should be {want}."
        )


def _mha_key_batch_error(attn_mask, tgt_len, src_len, bsz, key_bsz, H, E, bias_k, bias_v):
    """A key of another batch size than the query's: torch fails after its attn_mask check,
    appending bias_k (cat's error) or viewing the key as (S, N * heads, head_dim)."""
    if attn_mask is not None:
        _mha_attn_mask_shape(attn_mask, tgt_len, src_len, bsz, H)
    if bias_k is not None and bias_v is not None:
        raise RuntimeError(
            "Sizes of tensors must match except in dimension 0. Expected size "
            f"{key_bsz} but got size {bsz} for tensor number 1 in the list."
        )
    raise RuntimeError(
        f"shape '[{src_len}, {bsz * H}, {E // H}]' is invalid for input of size "
        f"{src_len * key_bsz * E}"
    )


def _static(t: Tensor | None, name: str, default: Tensor, N: int, H: int, D: int) -> Tensor:
    """A ``static_k``/``static_v`` (N*H, S, D) checked and viewed as (N, H, S, D); else default."""
    if t is None:
        return default
    for d, want in ((0, N * H), (2, D)):
        if t.shape[d] != want:
            raise AssertionError(f"expecting {name}.size({d}) of {want}, but got {t.shape[d]}")
    return t.reshape(N, H, t.shape[1], D)


def _slice(b, start):
    return None if b is None else b[start:]


def _pad_last(mask: Tensor, n: int) -> Tensor:
    """Append ``n`` columns that mask nothing (False / 0.0) to the last dim."""
    from ..core.ops.shape import cat

    z = _zeros((*mask.shape[:-1], n), dtype=mask.dtype, device=mask.device)
    return cat([mask, z], -1)


def _as_float(mask: Tensor, dtype) -> Tensor:
    if mask._data.dtype.kind == "b":
        return _bool_to_float(mask, mask_dtype(dtype))
    return mask


def mask_dtype(dtype):
    return _dt.to_dtype(dtype).np


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on (L, N, E) query and (S, N, E) key/value (or unbatched (L, E)).

    Returns (attn_output, attn_output_weights); the weights are averaged over heads when
    ``average_attn_weights`` and None unless ``need_weights``. Masks: ``key_padding_mask``
    (N, S) and ``attn_mask`` (L, S) or (N*num_heads, L, S), boolean (True = not allowed) or
    float (added to the scores).
    """
    return _mha(**locals(), batch_first=False)  # the arguments as given, in torch's layout
