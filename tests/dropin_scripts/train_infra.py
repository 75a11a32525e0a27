"""Training infrastructure: bfloat16 autocast with a (disabled) GradScaler, gradient accumulation,
clipping, warmup + cosine via SequentialLR, OneCycleLR, ReduceLROnPlateau, checkpoint resume,
activation checkpointing, hooks, SWA + update_bn, a hand-written EMA, weight/spectral norm and
pruning."""

# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use
import copy
import io

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune
from torch.optim.lr_scheduler import (
    CosineAnnealingLR,
    LambdaLR,
    OneCycleLR,
    ReduceLROnPlateau,
    SequentialLR,
)
from torch.optim.swa_utils import AveragedModel, update_bn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
rs = np.random.RandomState(3)
X = torch.from_numpy(rs.normal(size=(64, 8)).astype(np.float32))
Y = (X[:, :4].sum(1, keepdim=True) > 0).float()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        h = checkpoint(lambda t: F.gelu(self.bn(self.fc1(t))), x, use_reentrant=False)
        return self.fc2(h)


def seeded(model):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rs.uniform(-0.3, 0.3, tuple(p.shape)).astype(np.float32)))
    return model


model = seeded(Net())
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)
opt = torch.optim.AdamW(model.parameters(), lr=5e-2)
warm = LambdaLR(opt, lr_lambda=lambda s: (s + 1) / 3)
cos = CosineAnnealingLR(opt, T_max=30, eta_min=1e-4)
sched = SequentialLR(opt, schedulers=[warm, cos], milestones=[3])
scaler = torch.amp.GradScaler("cpu", enabled=False)
scaler2 = torch.amp.GradScaler("cpu")
print("scaler", scaler.is_enabled(), scaler2.is_enabled(), scaler2.get_scale())
feats = []
h1 = model.fc2.register_forward_hook(lambda m, i, o: feats.append(o.detach().shape))
grads = []
h2 = model.fc1.register_full_backward_hook(lambda m, gi, go: grads.append(go[0].shape))
accum = 4
for epoch in range(8):
    total = 0.0
    for i, (xb, yb) in enumerate(zip(X.split(4), Y.split(4))):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(xb)
            loss = F.binary_cross_entropy_with_logits(out.float(), yb) / accum
        scaler.scale(loss).backward()
        total += loss.item()
        if (i + 1) % accum == 0:
            scaler.unscale_(opt)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            with torch.no_grad():
                d = 0.9
                for p_ema, p in zip(ema.parameters(), model.parameters()):
                    p_ema.mul_(d).add_(p, alpha=1 - d)
            sched.step()
    print(f"epoch {epoch} loss: {total / 4:.4f} lr {sched.get_last_lr()[0]:.5f} norm {norm:.3f}")
h1.remove()
h2.remove()
print("hooks", len(feats), feats[0], len(grads), grads[0])
print("autocast dtype", torch.get_autocast_dtype("cpu"), torch.is_autocast_enabled())

buf = io.BytesIO()
torch.save(
    {
        "model": model.state_dict(),
        "optim": opt.state_dict(),
        "sched": sched.state_dict(),
        "epoch": 6,
    },
    buf,
)
buf.seek(0)
ck = torch.load(buf, weights_only=True)
model2 = Net()
res = model2.load_state_dict({k: v for k, v in ck["model"].items() if "fc2" not in k}, strict=False)
print("missing", res.missing_keys, "unexpected", res.unexpected_keys)
ck["model"]["extra.weight"] = torch.zeros(1)
print(model2.load_state_dict(ck["model"], strict=False))
model.eval()
model2.eval()
with torch.no_grad():
    print("same outputs", torch.equal(model(X[:4]), model2(X[:4])))
model.train()
opt2 = torch.optim.AdamW(model2.parameters(), lr=1e-2)
opt2.load_state_dict(ck["optim"])
print("opt step", opt2.state_dict()["state"][0]["step"], "epoch", ck["epoch"])
buf.seek(0)
print("weights_only=False", sorted(torch.load(buf, weights_only=False).keys()))

oc_opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
oc = OneCycleLR(oc_opt, max_lr=0.1, total_steps=10)
lrs = []
for _ in range(10):
    oc_opt.step()
    oc.step()
    lrs.append(round(oc.get_last_lr()[0], 5))
print("onecycle", lrs, round(oc_opt.param_groups[0]["momentum"], 4))
plat_opt = torch.optim.SGD(model.parameters(), lr=0.1)
plat = ReduceLROnPlateau(plat_opt, mode="min", factor=0.5, patience=1)
for val in [1.0, 0.9, 0.95, 0.96, 0.97, 0.8, 0.85, 0.86]:
    plat.step(val)
print("plateau lr", plat_opt.param_groups[0]["lr"], plat.num_bad_epochs)

swa = AveragedModel(model)
for _ in range(3):
    swa.update_parameters(model)
update_bn(((xb,) for xb in X.split(16)), swa)
print(
    "swa n_averaged",
    swa.n_averaged.item(),
    "bn mean",
    round(swa.module.bn.running_mean[0].item(), 4),
)
print(
    "ema diff",
    round(sum((a - b).abs().sum().item() for a, b in zip(ema.parameters(), model.parameters())), 4),
)

wn = nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))
sn = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3))
print("weight_norm", sorted(n for n, _ in wn.named_parameters()))
print("spectral_norm", sorted(n for n, _ in sn.named_parameters()), tuple(sn.weight.shape))
lin = seeded(nn.Linear(6, 4))
torch.nn.utils.prune.l1_unstructured(lin, name="weight", amount=0.5)
print("pruned", int((lin.weight == 0).sum()), sorted(n for n, _ in lin.named_buffers()))
torch.nn.utils.prune.remove(lin, "weight")
print("after remove", sorted(n for n, _ in lin.named_parameters()), int((lin.weight == 0).sum()))
