"""A lower bound for ember's training steps: numpy's time for the matrix products alone.

Every product a training step of bench_cnn / bench_lstm / bench_transformer must compute (forward
and backward, with ember's shapes) is timed in numpy alone, nothing else, and compared with torch's
WHOLE step. Where numpy's products alone take longer than torch's step, no arrangement of the
non-GEMM work reaches ember/torch <= 1.0 with numpy's BLAS on this machine: the bound belongs to
the BLAS kernels, not to ember's Python.

Run: python bench/gemm_bound.py [--repeat N]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_time

try:
    import torch
except ImportError:  # pragma: no cover - the bound is compared with torch's step
    torch = None


def _lstm():
    """LSTM(64 -> 256), batch 32 x 50 steps (bench_lstm.py): per step h @ W_hh^T forward and
    dgates @ W_hh backward; the input projection and both weight gradients as one GEMM each."""
    b, t, i, h = 32, 50, 64, 256
    return [
        ((b * t, i), (i, 4 * h), 1),  # input projection of all steps
        ((4 * h, h), (h, b), t),  # recurrent product per step (ember's (4H, B) layout)
        ((h, 4 * h), (4 * h, b), t),  # backward: dh = W_hh^T dgates per step
        ((4 * h, b * t), (b * t, h), 1),  # dW_hh
        ((4 * h, b * t), (b * t, i), 1),  # dW_ih
    ]


def _cnn():
    """bench_cnn.py's CNN, batch 64: the first conv's im2col GEMMs (forward and weight gradient;
    its input needs none), the second conv's 16 Winograd GEMMs each way (forward, input and
    weight gradients; T tiles with one spare per row) and the two Linear layers."""
    n = 64
    p1, t2 = n * 28 * 28, n * 7 * 8
    return [
        ((32, 9), (9, p1), 1),  # conv1 forward
        ((32, p1), (p1, 9), 1),  # conv1 dW
        ((16, 64, 32), (16, 32, t2), 1),  # conv2 forward (Winograd)
        ((16, 64, t2), (16, t2, 32), 1),  # conv2 dU
        ((16, 32, 64), (16, 64, t2), 1),  # conv2 dV
        ((n, 3136), (3136, 128), 1),  # fc1 forward
        ((n, 128), (128, 3136), 1),  # fc1 dX
        ((128, n), (n, 3136), 1),  # fc1 dW
    ]


def _transformer():
    """bench_transformer.py's LM (2 layers, d 256, 4 heads, ff 1024, 16 x 128 tokens): each
    projection forward, dX and dW, and the per-head attention products forward and backward."""
    r, d, ff, v = 16 * 128, 256, 1024, 256
    bh, t, e = 16 * 4, 128, 64
    lin = []
    for fin, fout, k in ((d, 3 * d, 2), (d, d, 2), (d, ff, 2), (ff, d, 2), (d, v, 1)):
        lin += [((r, fin), (fin, fout), k), ((r, fout), (fout, fin), k), ((fout, r), (r, fin), k)]
    att = [
        ((bh, t, e), (bh, e, t), 2),  # q k^T
        ((bh, t, t), (bh, t, e), 2),  # p v
        ((bh, t, e), (bh, e, t), 2),  # dp = do v^T
        ((bh, t, t), (bh, t, e), 6),  # dv = p^T do, dq = ds k, dk = ds^T q
    ]
    return lin + att


def gflop(products) -> float:
    """GFLOP of computing every product of the list once ((a, b, times) rows: a @ b)."""
    return sum(2 * math.prod(a) * b[-1] * k for a, b, k in products) / 1e9


def gemm_time(products, repeat: int) -> tuple[float, float]:
    """(seconds, GFLOP) of numpy computing every product of the list once."""
    rng = np.random.default_rng(0)
    arrays = [
        (rng.standard_normal(a).astype(np.float32), rng.standard_normal(b).astype(np.float32), k)
        for a, b, k in products
    ]

    def run():
        for x, y, k in arrays:
            for _ in range(k):
                np.matmul(x, y)

    return median_time(run, repeat), gflop(products)


def torch_step(kind: str, repeat: int) -> float:
    """torch's whole training step of the benchmark (built by the benchmark's own module)."""
    if kind == "cnn":
        import bench_cnn as b

        x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
        step = b.workload(torch, b.cnn, b.cnn(torch), x, y)
    elif kind == "lstm":
        import bench_lstm as b

        rng = np.random.default_rng(0)
        x = rng.standard_normal((b.BATCH, b.STEPS, b.IN)).astype(np.float32)
        y = rng.integers(0, b.CLASSES, b.BATCH)
        step = b.workload(torch, b._Net(torch, "lstm"), x, y)
    else:
        import bench_transformer as b

        step = b.workload(torch)[0]
    return median_time(step, repeat)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    jobs = (
        ("cnn", "CNN step (issue 6)", _cnn()),
        ("lstm", "LSTM step (issue 7)", _lstm()),
        ("transformer", "Transformer LM step (issue 7)", _transformer()),
    )
    print(
        f"{'workload':32s} {'numpy GEMMs':>12s} {'GFLOP/s':>8s} {'torch step':>11s} {'bound':>6s}"
    )
    for kind, label, products in jobs:
        sec, gflop = gemm_time(products, args.repeat)
        ts = torch_step(kind, args.repeat) if torch is not None else float("nan")
        print(
            f"{label:32s} {sec * 1e3:10.1f}ms {gflop / sec:8.0f} {ts * 1e3:9.1f}ms {sec / ts:6.2f}"
        )
        time.sleep(0.5)  # let the other library's spinning threads settle
    print("bound = numpy's products alone / torch's whole step (> 1: ember/torch <= 1 is out of")
    print(f"reach with this BLAS); numpy {np.__version__}, OPENBLAS_CORETYPE=", end="")
    print(os.environ.get("OPENBLAS_CORETYPE", "(unset)"))


if __name__ == "__main__":
    main()
