"""Foundation benchmarks: ember vs torch in one process, printed as ember/torch time ratios.

1. per-op overhead: 100 multiplies and 100 adds on a 16-element tensor that requires grad,
   forward + backward (the Python cost of the tape, per op).
2. an MLP training step written with raw ops: 784-512-512-10, batch 128, float32, cross-entropy,
   plain SGD (where BLAS does the work).

Run: python bench/bench_core.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time

import ember
import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs the oracle to print ratios
    torch = None


def best_of(fn, repeat: int, inner: int = 1) -> float:
    """The fastest of ``repeat`` timings of ``inner`` calls, in seconds per call."""
    fn()  # warm up
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t) / inner)
    return best


def overhead_workload(m):
    x = m.ones(16, requires_grad=True)

    def step():
        y = x
        for _ in range(100):
            y = y * 1.0001
            y = y + 0.5
        y.sum().backward()

    return step


def mlp_workload(m, seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = [(784, 512), (512, 512), (512, 10)]
    params = []
    for fan_in, fan_out in sizes:
        bound = 1 / np.sqrt(fan_in)
        params.append(
            m.tensor(
                rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32), requires_grad=True
            )
        )
        params.append(
            m.tensor(rng.uniform(-bound, bound, (fan_out,)).astype(np.float32), requires_grad=True)
        )
    x = m.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    y = m.tensor(rng.integers(0, 10, (128, 1)))
    lr = 0.01

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h = (x @ w1 + b1).relu()
        h = (h @ w2 + b2).relu()
        logits = h @ w3 + b3
        loss = -logits.log_softmax(1).gather(1, y).mean()
        loss.backward()
        with m.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
        return loss

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    if torch is None:
        raise SystemExit("bench needs torch installed (pip install -e '.[test]') to print ratios")
    rows = []
    e = best_of(overhead_workload(ember), args.repeat, 5)
    t = best_of(overhead_workload(torch), args.repeat, 5)
    rows.append(("per-op overhead (200 ops fwd+bwd, 16 elems)", e / 200, t / 200))
    e = best_of(mlp_workload(ember), args.repeat)
    t = best_of(mlp_workload(torch), args.repeat)
    rows.append(("MLP step 784-512-512-10, batch 128", e, t))
    print(f"{'workload':48s} {'ember':>10s} {'torch':>10s} {'ember/torch':>12s}")
    for name, e, t in rows:
        print(f"{name:48s} {e * 1e6:8.1f}us {t * 1e6:8.1f}us {e / t:12.2f}")
    print(f"(torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__})")


if __name__ == "__main__":
    main()
