"""CNN benchmarks: ember vs torch in one process, printed as ember/torch time ratios.

1. The CNN training step of issue 6: Conv2d(1,32,3,p=1)-ReLU-MaxPool2d(2)-Conv2d(32,64,3,p=1)-
   ReLU-MaxPool2d(2)-Flatten-Linear(3136,128)-ReLU-Linear(128,10), batch 64 of 1x28x28,
   cross-entropy, SGD with momentum (target: ember/torch <= 1.0).
2. A ResNet-style stack: a 3x3 stem, then basic blocks (two 3x3 convs + BatchNorm2d + ReLU, an
   identity or a stride-2 1x1-conv + BatchNorm shortcut), global average pooling, Linear; 32x32
   RGB inputs, batch 32, cross-entropy, SGD with momentum.
3. A MobileNet-style stack: a 3x3 stem, then depthwise-separable blocks (3x3 depthwise conv,
   two of them stride 2, + BatchNorm2d + ReLU, 1x1 conv + BatchNorm2d + ReLU), global average
   pooling, Linear; 32x32 RGB inputs, batch 32.

Both frameworks start from the same weights (torch's init, copied). Times are the medians of
``--repeat`` steps after warm-up, ember and torch steps alternating. Peak memory of one training step (see ``peak_memory``):
ember's allocations during one step by tracemalloc (numpy reports its buffers to it), and for
both frameworks the growth of the peak resident set (VmHWM, reset through /proc/self/clear_refs)
over two training steps in a fresh process, which counts every allocation alike.

Run: python bench/bench_cnn.py [--repeat N] [--only cnn|resnet|mobilenet] [--threads N]
(On a loaded machine, ``--threads 1`` gives steadier ratios: multi-threaded BLAS suffers most
from oversubscription.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import ember
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/_timing.py
from _timing import median_time, rss_peak_delta, set_threads, tracemalloc_peak

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs the oracle to print ratios
    torch = None


# ---------------------------------------------------------------------- models
def cnn(m):
    nn = m.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(3136, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )


def resnet(m):
    nn = m.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.short = None
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + (x if self.short is None else self.short(x)))

    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        Block(32, 32, 1),
        Block(32, 64, 2),
        Block(64, 64, 1),
        Block(64, 128, 2),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(128, 10),
    )


def mobilenet(m):
    """Depthwise-separable blocks (3x3 depthwise conv + BN + ReLU, 1x1 conv + BN + ReLU)."""
    nn = m.nn

    def block(cin, cout, stride):
        return [
            nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False),
            nn.BatchNorm2d(cin),
            nn.ReLU(),
            nn.Conv2d(cin, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(),
        ]

    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        *block(32, 64, 1),
        *block(64, 128, 2),
        *block(128, 128, 1),
        *block(128, 256, 2),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(256, 10),
    )


def workload(m, build, tmodel, x, y):
    """A training step of ``build(m)`` holding ``tmodel``'s weights (SGD momentum 0.9)."""
    model = build(m)
    if m is not torch:
        model.load_state_dict(
            {k: m.tensor(v.detach().cpu().numpy()) for k, v in tmodel.state_dict().items()}
        )
        x, y = m.tensor(x.cpu().numpy()), m.tensor(y.cpu().numpy())
    else:
        model.load_state_dict(tmodel.state_dict())
    model.train()
    opt = m.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    F = m.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


# ---------------------------------------------------------------------- memory
def _mem_child(framework: str, job: str) -> None:
    """In a fresh process: build the model, then print how far two training steps raise the
    peak RSS (VmHWM) above the RSS before them (bytes)."""
    build, x, n = JOBS[job][1:]
    torch.manual_seed(0)
    y = torch.randint(0, 10, (n,))
    tmodel = build(torch)
    step = workload(ember if framework == "ember" else torch, build, tmodel, x, y)
    del tmodel
    print(rss_peak_delta(lambda: (step(), step())))


def rss_peak(framework: str, job: str) -> float | None:
    """Peak-RSS growth of two training steps in a fresh process (both frameworks alike: this
    counts every allocation, numpy's, torch's allocator's and Python's), or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    r = subprocess.run(
        [sys.executable, __file__, "--mem-child", framework, job],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return float(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


# ---------------------------------------------------------------------- main
JOBS = {
    "cnn": ("CNN step (issue 6), batch 64 1x28x28", cnn, None, 64),
    "resnet": ("ResNet-style stack, batch 32 3x32x32", resnet, None, 32),
    "mobilenet": ("MobileNet-style stack, batch 32 3x32x32", mobilenet, None, 32),
}


def _inputs() -> None:
    torch.manual_seed(0)
    JOBS["cnn"] = JOBS["cnn"][:2] + (torch.randn(64, 1, 28, 28), 64)
    JOBS["resnet"] = JOBS["resnet"][:2] + (torch.randn(32, 3, 32, 32), 32)
    JOBS["mobilenet"] = JOBS["mobilenet"][:2] + (torch.randn(32, 3, 32, 32), 32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", choices=tuple(JOBS), default=None)
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads for torch and for numpy's BLAS (threadpoolctl); default: leave as is",
    )
    ap.add_argument("--mem-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if torch is None:
        raise SystemExit("bench needs torch installed (pip install -e '.[test]') to print ratios")
    if args.threads:
        print(set_threads(torch, args.threads))
    _inputs()
    if args.mem_child:
        _mem_child(*args.mem_child)
        return
    rows, mem = [], []
    for job in JOBS if args.only is None else (args.only,):
        name, build, x, n = JOBS[job]
        torch.manual_seed(1)
        y = torch.randint(0, 10, (n,))
        tmodel = build(torch)
        steps = {m: workload(m, build, tmodel, x, y) for m in (ember, torch)}
        e = median_time(steps[ember], args.repeat)
        t = median_time(steps[torch], args.repeat)
        rows.append((name, e, t))
        mem.append(
            (name, tracemalloc_peak(steps[ember]), rss_peak("ember", job), rss_peak("torch", job))
        )
    print(f"{'workload':40s} {'ember':>10s} {'torch':>10s} {'ember/torch':>12s}")
    for name, e, t in rows:
        print(f"{name:40s} {e * 1e3:8.2f}ms {t * 1e3:8.2f}ms {e / t:12.2f}")
    print("\npeak memory (MiB): ember's traced allocations during one step (tracemalloc), and the")
    print("peak-RSS growth of two steps in a fresh process, for each framework")
    print(f"{'workload':40s} {'ember tracemalloc':>18s} {'ember RSS':>10s} {'torch RSS':>10s}")
    for name, tm, er, tr in mem:
        f = lambda b: "n/a" if b is None else f"{b / 2**20:.1f}"
        print(f"{name:40s} {f(tm):>18s} {f(er):>10s} {f(tr):>10s}")
    print(f"(torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__})")


if __name__ == "__main__":
    main()
