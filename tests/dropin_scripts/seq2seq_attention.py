"""Seq2seq with attention: a bidirectional GRU encoder over packed, unsorted sequences
(pack_padded_sequence(enforce_sorted=False) / pad_packed_sequence), a Bahdanau attention decoder
(masked_fill with -inf, softmax, bmm), teacher forcing by random.random(), greedy decoding by
topk and a beam search (topk over flattened scores, index_select of the beams' states)."""
# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use

import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

random.seed(0)
torch.manual_seed(0)
rng = np.random.default_rng(0)
PAD, SOS, EOS = 0, 1, 2
V, E, H = 12, 16, 24


def make_batch(n):
    """Reverse a sequence of tokens 3..V-1, then EOS."""
    lens = rng.integers(3, 7, size=n)
    src = np.zeros((n, lens.max()), dtype=np.int64)
    tgt = np.zeros((n, lens.max() + 1), dtype=np.int64)
    for i, L in enumerate(lens):
        s = rng.integers(3, V, size=L)
        src[i, :L] = s
        tgt[i, :L] = s[::-1]
        tgt[i, L] = EOS
    return torch.from_numpy(src), torch.tensor(lens.tolist()), torch.from_numpy(tgt)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E, padding_idx=PAD)
        self.rnn = nn.GRU(E, H, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * H, H)

    def forward(self, src, lens):
        packed = pack_padded_sequence(self.emb(src), lens, batch_first=True, enforce_sorted=False)
        out, h = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        return out, torch.tanh(self.fc(torch.cat((h[-2], h[-1]), dim=1)))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Linear(3 * H, H)
        self.v = nn.Linear(H, 1, bias=False)

    def forward(self, hidden, enc_out, mask):
        hid = hidden.unsqueeze(1).repeat(1, enc_out.shape[1], 1)
        scores = self.v(torch.tanh(self.W(torch.cat((hid, enc_out), dim=2)))).squeeze(2)
        return F.softmax(scores.masked_fill(mask == 0, float("-inf")), dim=1)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.attn = Attention()
        self.rnn = nn.GRU(2 * H + E, H)
        self.out = nn.Linear(3 * H + E, V)

    def forward(self, tok, hidden, enc_out, mask):
        e = self.emb(tok).unsqueeze(0)
        a = self.attn(hidden, enc_out, mask)
        ctx = torch.bmm(a.unsqueeze(1), enc_out).permute(1, 0, 2)
        out, h = self.rnn(torch.cat((e, ctx), dim=2), hidden.unsqueeze(0))
        logits = self.out(torch.cat((out.squeeze(0), ctx.squeeze(0), e.squeeze(0)), dim=1))
        return logits, h.squeeze(0), a


enc, dec = Encoder(), Decoder()
params = list(enc.parameters()) + list(dec.parameters())
for p in params:  # the same start under both frameworks
    p.data.copy_(torch.from_numpy(rng.normal(0, 0.1, size=tuple(p.shape)).astype(np.float32)))
opt = torch.optim.Adam(params, lr=1e-2)
crit = nn.CrossEntropyLoss(ignore_index=PAD)

for step in range(60):
    src, lens, tgt = make_batch(16)
    enc_out, h = enc(src, lens)
    mask = (src != PAD).long()
    tok = torch.full((src.size(0),), SOS, dtype=torch.long)
    teacher_forcing = random.random() < 0.5
    outs = []
    for t in range(tgt.size(1)):
        logits, h, _ = dec(tok, h, enc_out, mask)
        outs.append(logits)
        tok = tgt[:, t] if teacher_forcing else logits.argmax(1)
    loss = crit(torch.stack(outs, dim=1).reshape(-1, V), tgt.reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    if step % 10 == 0 or step == 59:
        print(f"step {step} loss: {loss.item():.4f}")

enc.eval()
dec.eval()
with torch.no_grad():
    src, lens, tgt = make_batch(4)
    enc_out, h = enc(src, lens)
    mask = (src != PAD).long()
    tok = torch.full((4,), SOS, dtype=torch.long)
    greedy = []
    for _ in range(tgt.size(1)):
        logits, h, a = dec(tok, h, enc_out, mask)
        tok = logits.topk(1, dim=1)[1].squeeze(1)
        greedy.append(tok)
    print("greedy acc", round((torch.stack(greedy, 1) == tgt).float().mean().item(), 3))
    print("attention sums to one", torch.allclose(a.sum(1), torch.ones(4)))

    # beam search over the first source
    K = 3
    eo, hh = enc(src[:1], lens[:1])
    beams, scores, hist, back = torch.full((1,), SOS, dtype=torch.long), torch.zeros(1), [], []
    for _ in range(tgt.size(1)):
        n = beams.size(0)
        logits, hh, _ = dec(beams, hh, eo.expand(n, -1, -1), mask[:1].expand(n, -1))
        scores, flat = (F.log_softmax(logits, dim=-1) + scores.unsqueeze(1)).view(-1).topk(K)
        origin = torch.div(flat, V, rounding_mode="floor")
        beams = flat % V
        hh = hh.index_select(0, origin)
        hist.append(beams)
        back.append(origin)
    seq, k = [], 0
    for t in reversed(range(len(hist))):
        seq.append(hist[t][k].item())
        k = back[t][k].item()
    print("beam", seq[::-1], "target", tgt[0].tolist(), "histories", tuple(torch.stack(hist).shape))
