"""The platform calls real training scripts make: device selection, cudnn flags, AMP GradScaler
and autocast, torch.compile, a single-process distributed group, a TensorBoard writer."""
# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use

import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn

try:
    from torch.utils.tensorboard import SummaryWriter
except ImportError:  # real torch needs the tensorboard package for this
    SummaryWriter = None

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
print(
    f"device {device} cuda_available {torch.cuda.is_available()} count {torch.cuda.device_count()}"
)
torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
if torch.cuda.is_available():
    torch.cuda.manual_seed_all(0)

tmp = tempfile.mkdtemp()
if not dist.is_initialized():
    dist.init_process_group(
        "gloo", init_method="file://" + os.path.join(tmp, "store"), world_size=1, rank=0
    )
print(f"rank {dist.get_rank()} world {dist.get_world_size()}")

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
model = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.05)
use_amp = device == "cuda"
scaler = torch.amp.GradScaler(enabled=use_amp)
writer = SummaryWriter(log_dir=sys.argv[1]) if (SummaryWriter and len(sys.argv) > 1) else None

x = torch.randn(128, 4, device=device)
y = (x[:, :1] * 2 - x[:, 1:2]).to(device)
for step in range(30):
    opt.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=use_amp):
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    reduced = loss.detach().clone()
    dist.all_reduce(reduced)
    if writer is not None:
        writer.add_scalar("train/loss", reduced.item(), step)
    if step % 5 == 0 or step == 29:
        print(f"step {step} loss: {reduced.item():.4f}")
dist.barrier()
if writer is not None:
    writer.add_scalars("stats", {"scale": scaler.get_scale(), "lr": 0.05}, 30)
    writer.close()
print(f"scaler enabled {scaler.is_enabled()} state {scaler.state_dict()}")
dist.destroy_process_group()
print(f"initialized after destroy {dist.is_initialized()}")
