"""DataLoader throughput: ember vs torch in one process, printed as ember/torch time ratios.

The dataset's ``__getitem__`` does ~1 ms of numpy work (elementwise, single-threaded) and returns a
3x32x32 float32 image and an int label; batches of 64 are collated by each framework's default
collate_fn, with num_workers 0 and 2 (fork). One epoch of ``--batches`` batches is timed, best of
``--repeat``; worker start-up is part of every epoch (no persistent workers), as in a plain loop.

Run: python bench/bench_data.py [--repeat N] [--batches N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from ember.data import DataLoader

try:
    import torch
    from torch.utils.data import DataLoader as TorchDataLoader
except ImportError:  # pragma: no cover - the benchmark needs the oracle to print ratios
    torch = None


class NumpyWork:
    """Map-style dataset: each sample costs ~1 ms of numpy work."""

    def __init__(self, n: int, work: int) -> None:
        self.n = n
        self.work = np.linspace(0, 1, work, dtype=np.float32)
        self.images = np.random.default_rng(0).random((16, 3, 32, 32), dtype=np.float32)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        s = float(np.sin(self.work * (i % 7 + 1)).sum())  # the ~1 ms of work
        return self.images[i % 16] + np.float32(s * 1e-9), i % 10


def calibrate(target_s: float = 1e-3) -> int:
    """Array length whose __getitem__ takes ~target_s on this machine."""
    work = 50_000
    for _ in range(3):
        ds = NumpyWork(64, work)
        t = time.perf_counter()
        for i in range(64):
            ds[i]
        per = (time.perf_counter() - t) / 64
        work = max(1000, int(work * target_s / per))
    return work


def epoch_time(loader_cls, ds, num_workers: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        n = 0
        for x, y in loader_cls(ds, batch_size=64, num_workers=num_workers):
            n += x.shape[0]
        best = min(best, time.perf_counter() - t)
    assert n == len(ds)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--batches", type=int, default=20)
    args = p.parse_args()

    work = calibrate()
    ds = NumpyWork(64 * args.batches, work)
    t = time.perf_counter()
    for i in range(256):
        ds[i]
    per_item = (time.perf_counter() - t) / 256
    print(f"__getitem__: {per_item * 1e3:.2f} ms; epoch: {len(ds)} samples in batches of 64")
    print(f"{'workload':<28}{'ember':>10}{'torch':>10}{'ember/torch':>14}")
    for nw in (0, 2):
        te = epoch_time(DataLoader, ds, nw, args.repeat)
        if torch is None:
            print(f"{f'num_workers={nw} (s/epoch)':<28}{te:>10.3f}")
            continue
        tt = epoch_time(TorchDataLoader, ds, nw, args.repeat)
        print(f"{f'num_workers={nw} (s/epoch)':<28}{te:>10.3f}{tt:>10.3f}{te / tt:>14.3f}")


if __name__ == "__main__":
    main()
