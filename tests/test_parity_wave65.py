"""Parity regressions found by the sixty-fifth wave, which ran more public programs unchanged
(a ViT from scratch with a norm-first TransformerEncoder and label smoothing; milesial's U-Net with
BCE-with-logits plus Dice; a RealNVP and a Glow-style flow (ActNorm, LU-parametrized 1x1
convolutions, slogdet); a toy DDPM with GroupNorm, SiLU, a cosine schedule and an EMA by
``torch._foreach_lerp_``; a neural ODE with hand-written RK4; the PyTorch tutorial's DQN; MAML by
``autograd.grad(create_graph=True)`` and ``functional_call``; a mixture density network with
MixtureSameFamily; knowledge distillation with KLDivLoss; word2vec skip-gram with sparse
embeddings and SparseAdam; a BiLSTM CTC model; the tutorial's nn.Transformer translation model
with padding masks and a Noam LambdaLR; a tabular model with OneCycleLR; SimCLR's NT-Xent; locuslab's
TCN with both weight norms; VQ-VAE with an EMA codebook and a PixelCNN prior; DETR's Hungarian
matcher and GIoU losses; cleanrl's PPO; NeRF's rendering and ``sample_pdf``; Swin's shifted window
attention and a ConvNeXt block; MoCo, Barlow Twins with LARS and DINO; StyleGAN2's modulated
convolutions and path-length penalty; pytorch/examples' forward-forward) on seeded data, losses,
parameters, outputs and warnings compared step by step with torch (the oracle).

What differed: ``nll_loss`` (and so ``cross_entropy``) gave nan where a target is ignored and the
input holds -inf at class 0 (a decoder that masks its padding token's logit to -inf and ignores
that same padding index, as seq2seq code does): the ignored element was computed as ``0 * -inf``,
where torch's kernel skips it; cross_entropy's label-smoothing term multiplied the ignored rows by
a 0/1 mask (nan for a row with a -inf logit) where torch fills them with 0, and its two scalings
are now torch's ``MulBackward1`` nodes (after a ``MaskedFillBackward0``); ``ctc_loss`` failed
on a shape error when every target of the batch is empty (silent utterances: the extended label
sequence is a lone blank), where torch scores the all-blank path; and ``torch.utils.data._utils``
(``torch.utils.data._utils.collate.default_collate``) was there only after an explicit import,
where ``import torch`` provides it. A padded GRU decoder that masks its padding logit is kept
below as an end-to-end regression."""

from __future__ import annotations

import subprocess
import sys

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import same_grads_or_error as _both
from harness import upstream as _up

NINF = float("-inf")


def _logits(T, kept_inf=NINF):
    # row 0 is ignored and its class-0 logit is -inf (a masked padding token); row 2 is kept with
    # a -inf logit off its target (finite for nll, not for the smoothing term: pass a number)
    x = [[NINF, 0.0, 1.0], [-1.0, -2.0, 0.5], [0.3, kept_inf, 0.1], [2.0, 1.0, -1.0]]
    return T.tensor(x, dtype=T.float64, requires_grad=True)


_TARGET = [-100, 1, 2, 0]


# ------------------------------------------------------- ignored targets beside a -inf input
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
def test_ignored_target_beside_an_inf_input_adds_nothing(fn, weighted, reduction):
    def loss(T):
        x = _logits(T)
        inp = x if fn == "cross_entropy" else x.log_softmax(1)
        kw = {"weight": T.tensor([1.0, 2.0, 0.5], dtype=T.float64)} if weighted else {}
        out = getattr(T.nn.functional, fn)(inp, T.tensor(_TARGET), reduction=reduction, **kw)
        return x, out

    (_, want), (_, got) = loss(torch), loss(ember)
    assert np.isfinite(want.detach().numpy()).all()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)

    def grads(T):
        x, out = loss(T)
        return T.autograd.grad(out, x, _up(T, out))

    _both(grads)


def test_ignored_padding_token_of_a_sequence_batch():
    # (N, C, L) logits as a seq2seq decoder gives them, the padding index 0 masked to -inf
    def loss(T):
        rs = np.random.RandomState(0)
        x = T.tensor(rs.randn(2, 4, 3), requires_grad=True)
        logits = x.masked_fill(T.tensor([True, False, False, False]).view(1, 4, 1), NINF)
        tgt = T.tensor([[1, 3, 0], [2, 0, 0]])
        out = T.nn.functional.cross_entropy(logits, tgt, ignore_index=0)
        return x, out

    (_, want), (_, got) = loss(torch), loss(ember)
    assert np.isfinite(want.item())
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)

    def grads(T):
        x, out = loss(T)
        out.backward(T.tensor(0.75, dtype=T.float64))
        return [x.grad]

    _both(grads)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_label_smoothing_ignored_row_with_an_inf_logit(weighted, reduction):
    def loss(T):
        x = _logits(T, -3.0)
        kw = {"weight": T.tensor([1.0, 2.0, 0.5], dtype=T.float64)} if weighted else {}
        out = T.nn.functional.cross_entropy(
            x, T.tensor(_TARGET), label_smoothing=0.1, reduction=reduction, **kw
        )
        return x, out

    (_, want), (_, got) = loss(torch), loss(ember)
    assert np.isfinite(want.detach().numpy()).all()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)

    def grads(T):
        x, out = loss(T)
        return T.autograd.grad(out, x, _up(T, out))

    _both(grads)


def _nodes(t, depth=3):
    """grad_fn names breadth first, ``depth`` levels down."""
    level, out = [t.grad_fn], []
    for _ in range(depth):
        out.append([type(n).__name__ for n in level])
        level = [m for n in level for m, _ in n.next_functions if m is not None]
    return out


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_label_smoothing_nodes(reduction):
    def nodes(T):
        out = T.nn.functional.cross_entropy(
            _logits(T, -3.0), T.tensor(_TARGET), label_smoothing=0.2, reduction=reduction
        )
        return _nodes(out, 4)

    assert nodes(ember) == nodes(torch)


# ------------------------------------------------------------ torch.utils.data._utils
def test_utils_data_private_utils_after_import_torch():
    # a fresh interpreter: any earlier import of the private package would hide the bug
    want = torch.utils.data._utils.collate.default_collate is torch.utils.data.default_collate
    src = (
        "import ember\n"
        "u = ember.utils.data._utils\n"
        "print(u.collate.default_collate is ember.utils.data.default_collate)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", src], check=False, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(want)]


# ------------------------------------------------------------ CTC with only empty targets
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("targets", [(2, 0), (0,), "unbatched"])
def test_ctc_loss_when_every_target_is_empty(targets, reduction):
    # a batch of silent utterances: only the all-blank path remains (ember failed on a shape)
    def loss(T):
        x = T.tensor(np.random.RandomState(0).randn(4, 2, 3), requires_grad=True)
        if targets == "unbatched":
            lp, tg, il, tl = (
                x[:, 0].log_softmax(1),
                T.zeros(0, dtype=T.long),
                T.tensor(4),
                T.tensor(0),
            )
        else:
            lp, tg = x.log_softmax(2), T.zeros(targets, dtype=T.long)
            il, tl = T.tensor([4, 3]), T.tensor([0, 0])
        out = T.nn.functional.ctc_loss(lp, tg, il, tl, reduction=reduction)
        return x, out

    (_, want), (_, got) = loss(torch), loss(ember)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)

    def grads(T):
        x, out = loss(T)
        return T.autograd.grad(out, x, _up(T, out))

    _both(grads)


# ------------------------------------------------------------ end to end: a padded decoder
def _decoder_losses(T, steps=4):
    """A GRU decoder over padded batches (PAD = 0) whose padding logit is masked to -inf,
    trained with ``ignore_index=PAD`` (as translation code does)."""
    nn = T.nn
    rs = np.random.RandomState(0)
    V, E, H, PAD = 7, 5, 6, 0
    emb, rnn, out = (
        nn.Embedding(V, E, padding_idx=PAD),
        nn.GRU(E, H, batch_first=True),
        nn.Linear(H, V),
    )
    model = nn.ModuleList([emb, rnn, out])
    with T.no_grad():
        for p in model.parameters():
            p.copy_(T.tensor(rs.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
    seqs = rs.randint(1, V, (4, 6))
    seqs[0, 4:] = PAD
    seqs[2, 2:] = PAD
    src = T.tensor(seqs)
    opt = T.optim.Adam(model.parameters(), lr=1e-2)
    crit = nn.CrossEntropyLoss(ignore_index=PAD)
    losses = []
    for _ in range(steps):
        h, _ = rnn(emb(src[:, :-1]))
        logits = out(h)
        logits[..., PAD] = float("-inf")  # never predict padding
        loss = crit(logits.reshape(-1, V), src[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_padded_decoder_with_a_masked_padding_logit_trains_like_torch():
    (want, wp), (got, gp) = _decoder_losses(torch), _decoder_losses(ember)
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for a, b in zip(gp, wp):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
