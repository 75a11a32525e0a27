"""A character-level LSTM language model with truncated BPTT and perplexity."""
# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use

import math

import torch
import torch.nn as nn

torch.manual_seed(0)

text = "hello world, hello ember, hello torch. " * 30
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text])
vocab, bptt, batch = len(chars), 20, 8

# (batch, time) stream, as in the classic word_language_model example
n = (len(data) - 1) // batch
inputs = data[: n * batch].view(batch, n)
targets = data[1 : n * batch + 1].view(batch, n)


class LM(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        y, state = self.lstm(self.embed(x), state)
        return self.out(y), state


model = LM()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
crit = nn.CrossEntropyLoss()

for epoch in range(4):
    model.train()
    state = None
    total, count = 0.0, 0
    for t in range(0, n - 1, bptt):
        x = inputs[:, t : t + bptt]
        y = targets[:, t : t + bptt]
        if state is not None:
            state = tuple(s.detach() for s in state)  # truncated BPTT
        logits, state = model(x, state)
        loss = crit(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        total += loss.item() * y.numel()
        count += y.numel()
    avg = total / count
    print(f"epoch {epoch} ppl {math.exp(avg):.2f} loss: {avg:.4f}")
