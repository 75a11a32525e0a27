"""DistributedDataParallel in a single-process group, DistributedSampler and a DataLoader with
worker processes: the skeleton of a multi-GPU training script, run with world_size 1."""
# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use

import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    store = os.path.join(tempfile.mkdtemp(), "store")
    dist.init_process_group("gloo", init_method="file://" + store, world_size=1, rank=0)
    torch.manual_seed(0)
    x = torch.randn(256, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.05 * torch.randn(256, 1)
    ds = TensorDataset(x, y)
    sampler = DistributedSampler(ds, shuffle=True, seed=0)
    loader = DataLoader(ds, batch_size=32, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(4):
        sampler.set_epoch(epoch)
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        print(f"epoch {epoch} rank {dist.get_rank()} loss: {total / len(ds):.4f}")
    print("keys", list(model.state_dict()))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
