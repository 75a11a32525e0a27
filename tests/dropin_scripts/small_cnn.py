"""A small CNN (Conv2d, BatchNorm2d, MaxPool2d) telling horizontal from vertical bars."""
# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_data(n):
    x = torch.randn(n, 1, 12, 12) * 0.3
    y = torch.randint(0, 2, (n,))
    for i in range(n):
        k = int(torch.randint(2, 10, (1,)))
        if y[i] == 0:
            x[i, 0, k, :] += 1.5
        else:
            x[i, 0, :, k] += 1.5
    return x, y


x, y = make_data(256)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 3 * 3, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(6):
    model.train()
    perm = torch.randperm(len(x))
    total = 0.0
    for i in range(0, len(x), 32):
        idx = perm[i : i + 32]
        opt.zero_grad()
        loss = F.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
    print(f"epoch {epoch} loss: {total / len(x):.4f}")

model.eval()
with torch.no_grad():
    acc = (model(x).argmax(1) == y).float().mean().item()
print(f"train accuracy {acc:.3f} running_mean[0] {model.bn1.running_mean[0].item():.4f}")
