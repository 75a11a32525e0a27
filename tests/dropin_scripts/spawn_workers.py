"""torch.multiprocessing.spawn: each worker computes on its own rank's slice; a failing worker's
exception reaches the parent."""

import sys

import torch
import torch.multiprocessing as mp


def work(rank, n, queue):
    x = torch.arange(n, dtype=torch.float32) * (rank + 1)
    queue.put((rank, torch.__name__ == "torch", x.sum().item()))


def fail(rank):
    raise ValueError(f"worker {rank + 1} failed on purpose")


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    mp.spawn(work, args=(4, q), nprocs=2)
    results = sorted(q.get() for _ in range(2))
    print("results", results)
    try:
        mp.spawn(fail, nprocs=1)
    except mp.ProcessRaisedException as e:
        print("child error:", "worker 1 failed on purpose" in str(e))
    sys.exit(0)
