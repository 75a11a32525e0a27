"""LSTM benchmarks: ember vs torch in one process, printed as ember/torch time ratios.

1. The LSTM training step of issue 7: LSTM(64 -> 256), batch 32 x 50 steps, batch_first, a Linear
   head on the last step's output (10 classes), cross-entropy, SGD (target: ember/torch <= 1.0).
2. The same with a 2-layer bidirectional LSTM, and a GRU and an RNN(tanh) layer of the same size
   (same head), to show the fused layer ops of the other modes.
3. Inference: the step-1 LSTM forward under no_grad.

Both frameworks start from the same weights (torch's init, copied). Times are the median of
``--repeat`` steps after warm-up. Peak memory of one training step: ember's numpy allocations by
tracemalloc (numpy reports its buffers to it; torch's CPU allocator does not, so tracemalloc
cannot see torch), and for both frameworks the growth of the process's peak resident set (VmHWM,
reset through /proc/self/clear_refs) over the RSS before the step (a coarse, page-level number:
memory the allocator already holds from earlier steps is not counted again).

Run: python bench/bench_lstm.py [--repeat N] [--only lstm] [--threads N] [--cpu-time]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import ember
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/_timing.py
from _timing import median_time, rss_peak_delta, set_threads, tracemalloc_peak

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs the oracle to print ratios
    torch = None

BATCH, STEPS, IN, HID, CLASSES = 32, 50, 64, 256, 10


CLOCK = time.perf_counter  # --cpu-time: time.process_time (this process's CPU seconds)


class _Net:
    """rnn + Linear head on the last step (built in either framework)."""

    def __init__(self, m, kind: str, **kw) -> None:
        ctor = {"lstm": m.nn.LSTM, "gru": m.nn.GRU, "rnn": m.nn.RNN}[kind]
        self.rnn = ctor(IN, HID, batch_first=True, **kw)
        d = 2 if kw.get("bidirectional") else 1
        self.head = m.nn.Linear(HID * d, CLASSES)
        self.params = list(self.rnn.parameters()) + list(self.head.parameters())

    def __call__(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def _copy(tnet: _Net, enet: _Net) -> None:
    for te, ee in ((tnet.rnn, enet.rnn), (tnet.head, enet.head)):
        ee.load_state_dict(
            {k: ember.tensor(v.detach().cpu().numpy()) for k, v in te.state_dict().items()}
        )


def workload(m, net, x_np, y_np):
    x = m.tensor(x_np)
    y = m.tensor(y_np)
    opt = m.optim.SGD(net.params, lr=0.01)
    loss_fn = m.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def inference(m, net, x_np):
    x = m.tensor(x_np)

    def step():
        with m.no_grad():
            return net(x)

    return step


# ---------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", choices=("lstm",), default=None)
    ap.add_argument("--threads", type=int, default=None, help="threads for both frameworks")
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with process CPU seconds (steadier on a shared machine; use with --threads 1)",
    )
    args = ap.parse_args()
    if torch is None:
        raise SystemExit("bench needs torch installed (pip install -e '.[test]') to print ratios")
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time
    note = set_threads(torch, args.threads) if args.threads else ""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((BATCH, STEPS, IN)).astype(np.float32)
    y_np = rng.integers(0, CLASSES, BATCH)
    jobs = [("LSTM(64->256) step (issue 7), 32x50", "lstm", {})]
    if args.only is None:
        jobs += [
            (
                "LSTM 2-layer bidirectional step, 32x50",
                "lstm",
                {"num_layers": 2, "bidirectional": True},
            ),
            ("GRU(64->256) step, 32x50", "gru", {}),
            ("RNN tanh (64->256) step, 32x50", "rnn", {}),
        ]
    rows, mem = [], []
    for name, kind, kw in jobs:
        tnet = _Net(torch, kind, **kw)
        enet = _Net(ember, kind, **kw)
        _copy(tnet, enet)
        steps = {m: workload(m, n, x_np, y_np) for m, n in ((ember, enet), (torch, tnet))}
        # same start, same data: the first losses agree (a sanity check of the comparison)
        le, lt = float(steps[ember]().item()), float(steps[torch]().item())
        assert abs(le - lt) < 1e-4 * max(1.0, abs(lt)), (name, le, lt)
        e = median_time(steps[ember], args.repeat, clock=CLOCK)
        t = median_time(steps[torch], args.repeat, clock=CLOCK)
        rows.append((name, e, t))
        tm = tracemalloc_peak(steps[ember])
        mem.append(
            (
                name,
                tm,
                rss_peak_delta(steps[ember]),
                rss_peak_delta(steps[torch]),
            )
        )
        if kind == "lstm" and not kw:
            fe = median_time(inference(ember, enet, x_np), args.repeat, clock=CLOCK)
            ft = median_time(inference(torch, tnet, x_np), args.repeat, clock=CLOCK)
            rows.append(("  its forward under no_grad", fe, ft))
    print(f"{'workload':42s} {'ember':>10s} {'torch':>10s} {'ember/torch':>12s}")
    for name, e, t in rows:
        print(f"{name:42s} {e * 1e3:8.2f}ms {t * 1e3:8.2f}ms {e / t:12.2f}")
    print("\npeak memory of one training step (MiB):")
    print(f"{'workload':42s} {'ember tracemalloc':>18s} {'ember RSS':>10s} {'torch RSS':>10s}")
    for name, tm, er, tr in mem:
        f = lambda b: "n/a" if b is None else f"{b / 2**20:.1f}"
        print(f"{name:42s} {f(tm):>18s} {f(er):>10s} {f(tr):>10s}")
    clock = "process CPU time" if args.cpu_time else "wall time"
    print(
        f"(torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__}; "
        f"{clock}{'; ' + note if note else ''})"
    )


if __name__ == "__main__":
    main()
