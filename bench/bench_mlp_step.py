"""A small-model training step, where the per-op Python cost is most of the time: ember vs
torch in one process, printed as an ember/torch time ratio.

MLP Linear(64,128)-ReLU-Linear(128,128)-ReLU-Linear(128,10), batch 32, CrossEntropyLoss, Adam:
zero_grad, forward, loss, backward, step. Both frameworks start from the same weights (torch's
init, copied) and run on one thread by default (the products are too small for a second one).
Times are the median of ``--repeat`` blocks of ``--steps`` steps after warm-up.

Run: python bench/bench_mlp_step.py [--repeat N] [--steps N] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import sys

import ember
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/_timing.py
from _timing import median_time, set_threads

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs the oracle to print ratios
    torch = None

BATCH, IN, HID, CLASSES = 32, 64, 128, 10


def _mlp(m):
    nn = m.nn
    return nn.Sequential(
        nn.Linear(IN, HID), nn.ReLU(), nn.Linear(HID, HID), nn.ReLU(), nn.Linear(HID, CLASSES)
    )


def workload(m, model, x_np, y_np, steps: int):
    x, y = m.tensor(x_np), m.tensor(y_np)
    opt = m.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = m.nn.CrossEntropyLoss()

    def block():
        for _ in range(steps):
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()

    return block


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if torch is None:
        sys.exit("bench_mlp_step needs torch (the oracle) to print ratios")
    print(set_threads(torch, args.threads))
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((BATCH, IN)).astype(np.float32)
    y_np = rng.integers(0, CLASSES, BATCH)
    torch.manual_seed(0)
    tmodel = _mlp(torch)
    emodel = _mlp(ember)
    emodel.load_state_dict(
        {k: ember.tensor(v.detach().numpy()) for k, v in tmodel.state_dict().items()}
    )
    # each framework alone (see _timing.py: alternating charges one's spinning threads to the other)
    e = median_time(workload(ember, emodel, x_np, y_np, args.steps), args.repeat) / args.steps
    t = median_time(workload(torch, tmodel, x_np, y_np, args.steps), args.repeat) / args.steps
    print(
        f"MLP step (Adam), batch {BATCH}: ember {e * 1e6:.0f} us, torch {t * 1e6:.0f} us, "
        f"ember/torch {e / t:.2f}"
    )


if __name__ == "__main__":
    main()
