"""Model utilities around a training loop, the way PyTorch scripts use them: an IterableDataset
sharded over 2 worker processes, meta-device init + to_empty, freezing, param groups with
add_param_group, a checkpoint (model + optimizer + a transposed weight view) through BytesIO
and resuming, torch.compile, checkpointing activations, assert_close and get/set_rng_state."""

import io
import math

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Points(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(start, self.n, step):
            x = torch.tensor([math.sin(i * 0.37), math.cos(i * 0.11)])
            yield {"x": x, "y": (x[0] * 0.5 - x[1] * 0.25).unsqueeze(0), "i": i}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(2, 16)
        self.body = nn.Sequential(nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.head = nn.Linear(16, 1)
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64), persistent=False)

    def forward(self, x):
        self.calls += 1
        h = checkpoint(self.body, self.stem(x), use_reentrant=False)
        return self.head(h)


def init(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)


def main():
    torch.manual_seed(0)
    with torch.device("meta"):
        model = Net()
    model = model.to_empty(device="cpu").apply(init)
    print("keys", sorted(model.state_dict()))
    model.stem.requires_grad_(False)
    print("trainable", sum(p.numel() for p in model.parameters() if p.requires_grad))
    opt = torch.optim.SGD([{"params": model.body.parameters()}], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": model.head.parameters(), "lr": 0.05})
    cmodel = torch.compile(model)
    loader = DataLoader(Points(64), batch_size=16, num_workers=2, persistent_workers=True)
    for epoch in range(6):
        total, seen = 0.0, []
        for batch in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(cmodel(batch["x"]), batch["y"])
            loss.backward()
            opt.step()
            total += loss.item()
            seen += batch["i"].tolist()
        print(f"epoch {epoch} loss: {total / 4:.6f} seen {sorted(seen) == list(range(64))}")
        if epoch == 2:
            buf = io.BytesIO()
            w = model.head.weight
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "wt": w.t()}, buf)
            buf.seek(0)
            ck = torch.load(buf, weights_only=True)
            print("wt stride", ck["wt"].stride(), ck["wt"].shape)
            fresh = Net()
            fresh.load_state_dict(ck["model"])
            opt2 = torch.optim.SGD([{"params": fresh.body.parameters()}], lr=0.1, momentum=0.9)
            opt2.add_param_group({"params": fresh.head.parameters(), "lr": 0.05})
            opt2.load_state_dict(ck["opt"])
            x = torch.ones(3, 2)
            torch.testing.assert_close(fresh(x), model(x))
            print("same outputs True")
    state = torch.get_rng_state()
    a = torch.rand(3)
    torch.set_rng_state(state)
    print("rng round trip", torch.equal(a, torch.rand(3)), "calls", int(model.calls) > 0)


if __name__ == "__main__":
    main()
