"""A small channels_last ResNet (BasicBlocks with 1x1-conv downsampling, zero-init last BN gamma)
trained with mixup, label smoothing, nesterov SGD and MultiStepLR; flip TTA and top-k accuracy."""
# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use

import torch
import torch.nn as nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, inp, out, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inp != out:
            self.downsample = nn.Sequential(
                nn.Conv2d(inp, out, 1, stride, bias=False), nn.BatchNorm2d(out)
            )

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, num_classes=6):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU()
        )
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        for m in self.modules():
            if isinstance(m, BasicBlock):
                nn.init.constant_(m.bn2.weight, 0)  # each block starts as the identity

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def make_data(n):
    # class c lights up one of 6 (channel, half) patterns; a flip keeps the class
    y = torch.randint(0, 6, (n,))
    x = torch.randn(n, 3, 8, 8) * 0.5
    for i in range(n):
        c = int(y[i])
        rows = slice(0, 4) if c < 3 else slice(4, 8)
        x[i, c % 3, rows, :] += 1.5
    return x, y


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0).item() * 100.0 / target.size(0) for k in topk]


x, y = make_data(128)
model = ResNet().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[6, 9], gamma=0.1)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
beta = torch.distributions.Beta(torch.tensor([0.4]), torch.tensor([0.4]))
for epoch in range(10):
    model.train()
    perm = torch.randperm(len(x))
    total = 0.0
    for i in range(0, len(x), 32):
        idx = perm[i : i + 32]
        xb = x[idx].contiguous(memory_format=torch.channels_last)
        yb = y[idx]
        lam = beta.sample().item() if epoch < 6 else 1.0  # mixup, then plain fine-tuning
        shuffle = torch.randperm(xb.size(0))
        out = model(lam * xb + (1 - lam) * xb[shuffle, :])
        loss = lam * criterion(out, yb) + (1 - lam) * criterion(out, yb[shuffle])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
    sched.step()
    print(f"epoch {epoch} lr {sched.get_last_lr()[0]:.4f} loss: {total / len(x):.4f}")

model.eval()
with torch.no_grad():
    xc = x.contiguous(memory_format=torch.channels_last)
    logits = (model(xc) + model(torch.flip(xc, dims=[3]))) / 2
    top1, top5 = accuracy(logits, y, topk=(1, 5))
    plain = model(x)
    print("same outputs", torch.allclose(plain, model(xc), atol=1e-5))
    print("channels_last", xc.is_contiguous(memory_format=torch.channels_last), xc.stride())
print(f"top1 {top1:.1f} top5 {top5:.1f}")
