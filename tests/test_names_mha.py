"""Spec row P131: the named-tensor tutorial's multi-head attention, written with ember's names API.

The same computation on unnamed torch tensors is the oracle for the values; the names are the
spec's.
"""

import math

import ember
import numpy as np
import pytest

try:
    import torch
except ImportError:
    torch = None

N_HEADS = 3


def _weights(dim):
    r = np.random.default_rng(0)
    return [r.standard_normal((dim, dim)).astype(np.float32) / math.sqrt(dim) for _ in range(4)]


def named_mha(query, mask, weights):
    """The tutorial's MultiHeadAttention forward, self-attention, with names."""
    wq, wk, wv, wo = (ember.tensor(w) for w in weights)
    query = query.refine_names(..., "T", "D")
    dim = query.size("D")
    dim_per_head = dim // N_HEADS

    def linear(x, w):
        return (x @ w).refine_names(..., "T", "D")  # contracted dims vanish; name the new one

    def prepare_head(t):
        # (N, T, D) -> (N, H, T, D_head)
        return t.unflatten("D", [("H", N_HEADS), ("D_head", dim_per_head)]).align_to(
            ..., "H", "T", "D_head"
        )

    q = prepare_head(linear(query, wq))
    k = prepare_head(linear(query, wk))
    v = prepare_head(linear(query, wv))
    q = q / math.sqrt(dim_per_head)
    dot_prod = q @ k.align_to(..., "D_head", "T").rename(T="T_key")
    attn_mask = (mask == 0).rename(T="T_key").align_as(dot_prod)
    dot_prod = dot_prod.masked_fill(attn_mask, -1e20)
    attn_weights = dot_prod.softmax(dim="T_key")
    attention = (attn_weights @ v).align_to(..., "T", "H", "D_head").flatten(["H", "D_head"], "D")
    return linear(attention, wo)


def plain_mha(m, query, mask, weights):
    """The same computation by position (the oracle runs this in torch)."""
    wq, wk, wv, wo = (m.tensor(w) for w in weights)
    dim = query.shape[-1]
    dph = dim // N_HEADS

    def heads(t):  # (..., T, D) -> (..., H, T, D_head)
        return t.reshape(*t.shape[:-1], N_HEADS, dph).transpose(-3, -2)

    q, k, v = heads(query @ wq) / math.sqrt(dph), heads(query @ wk), heads(query @ wv)
    s = q @ k.transpose(-1, -2)
    s = s.masked_fill((mask == 0).unsqueeze(-2).unsqueeze(-3), -1e20)
    a = s.softmax(-1) @ v
    a = a.transpose(-3, -2).reshape(*query.shape)
    return a @ wo


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_p131_multihead_attention(batched):
    r = np.random.default_rng(1)
    shape, mshape = ((7, 5, 6), (7, 5)) if batched else ((5, 6), (5,))
    q = r.standard_normal(shape).astype(np.float32)
    m = (r.random(mshape) > 0.3).astype(np.float32)
    m[..., 0] = 1  # every query sees at least one key
    weights = _weights(6)
    names = ("N", "T", "D") if batched else ("T", "D")
    query = ember.tensor(q, names=names, requires_grad=True)
    mask = ember.tensor(m, names=names[:-1])
    out = named_mha(query, mask, weights)
    assert out.names == names
    assert tuple(out.shape) == shape
    out.sum().backward()
    assert query.grad.names == names
    if torch is None:
        return
    tq = torch.tensor(q, requires_grad=True)
    expect = plain_mha(torch, tq, torch.tensor(m), weights)
    np.testing.assert_allclose(
        out.detach().rename(None).numpy(), expect.detach().numpy(), rtol=1e-4, atol=1e-5
    )
    expect.sum().backward()
    np.testing.assert_allclose(
        query.grad.rename(None).numpy(), tq.grad.numpy(), rtol=1e-4, atol=1e-5
    )
