"""An MLP classifier: TensorDataset + DataLoader, Adam, StepLR, save/load of state_dicts."""
# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use

import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

# two interleaved spirals-ish blobs: learnable, not trivially separable by a line
n = 512
x = torch.randn(n, 2)
y = ((x[:, 0] * x[:, 1]) > 0).long()
dataset = TensorDataset(x, y)
loader = DataLoader(dataset, batch_size=64, shuffle=True)


class MLP(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.out(x)


model = MLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = StepLR(opt, step_size=4, gamma=0.5)

for epoch in range(8):
    total, count = 0.0, 0
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * len(xb)
        count += len(xb)
    sched.step()
    print(f"epoch {epoch} lr {sched.get_last_lr()[0]:.4f} loss: {total / count:.4f}")

with torch.no_grad():
    acc = (model(x).argmax(dim=1) == y).float().mean().item()
print(f"accuracy {acc:.3f}")

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "ckpt.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 8}, path)
    ckpt = torch.load(path)
    model2 = MLP()
    model2.load_state_dict(ckpt["model"])
    opt2 = torch.optim.Adam(model2.parameters(), lr=1e-2)
    opt2.load_state_dict(ckpt["opt"])
    with torch.no_grad():
        same = torch.allclose(model(x), model2(x))
    print(f"reloaded epoch {ckpt['epoch']} same outputs {same}")
    assert same
