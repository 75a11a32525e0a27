"""Transformer LM training step: ember vs torch in one process, printed as ember/torch ratios.

Workload (issue 7): Embedding(256, 256) + learned positions, 2 pre-norm TransformerEncoderLayers
(d=256, 4 heads, ff 1024, dropout 0, batch_first), causal mask (with is_causal=True), final
LayerNorm, Linear head, batch 16 x 128 tokens, cross-entropy, SGD (lr 0.01). Both frameworks
start from the same weights (torch's initial state_dict copied into ember).

Time: median of ``--repeat`` steps after ``--warmup`` steps, each framework in its own run
(bench/_timing.py says why). Peak memory: ember's with
tracemalloc (numpy registers its buffers there) over one step; torch's CPU tensors are not
seen by tracemalloc, so for torch the figure comes from its profiler's memory records
(profile_memory=True: the allocations and frees of every op, summed in time order). Both count
the memory allocated during the step (parameters and inputs that exist before it are not).

On a busy machine every multi-threaded BLAS call waits for its second thread to be scheduled
(both frameworks slow down several times, and randomly): ``--threads 1`` gives the stable
comparison there.

Run: python bench/bench_transformer.py [--repeat N] [--warmup N] [--threads N] [--profile]
"""

from __future__ import annotations

import argparse
import os
import sys

import ember
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/_timing.py
from _timing import median_time, set_threads, tracemalloc_peak

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs the oracle to print ratios
    torch = None

VOCAB, D, HEADS, FF, LAYERS, BATCH, T = 256, 256, 4, 1024, 2, 16, 128


def build(m):
    """The LM as a module of framework ``m`` (ember or torch)."""
    nn = m.nn

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(VOCAB, D)
            self.pos = nn.Parameter(m.randn(T, D) * 0.02)
            layer = nn.TransformerEncoderLayer(
                D, HEADS, FF, dropout=0.0, batch_first=True, norm_first=True
            )
            self.enc = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(D)
            self.head = nn.Linear(D, VOCAB)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(T))

        def forward(self, x):
            h = self.emb(x) + self.pos[: x.shape[1]]
            h = self.enc(h, mask=self.mask, is_causal=True)
            return self.head(self.norm(h))

    return LM()


def workload(m, state=None, seed: int = 0):
    """One training step of framework ``m`` (a closure), and the model."""
    if m is torch:
        torch.manual_seed(seed)
    model = build(m)
    if state is not None:
        model.load_state_dict({k: ember.tensor(v.detach().cpu().numpy()) for k, v in state.items()})
    opt = m.optim.SGD(model.parameters(), lr=0.01)
    rng = np.random.default_rng(seed)
    x = m.tensor(rng.integers(0, VOCAB, (BATCH, T)))
    y = m.tensor(rng.integers(0, VOCAB, (BATCH * T,)))

    def step():
        opt.zero_grad()
        out = model(x)
        loss = m.nn.functional.cross_entropy(out.reshape(-1, VOCAB), y)
        loss.backward()
        opt.step()
        return loss

    return step, model


def torch_peak(step) -> float:
    """Peak bytes of torch's CPU tensors during one torch step: the profiler's memory records
    (profile_memory=True), each op's own allocations minus frees, summed in time order."""
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts, profile_memory=True) as prof:
        step()
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    cur = peak = 0
    for e in events:
        cur += e.self_cpu_memory_usage
        peak = max(peak, cur)
    return peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="cProfile a few ember steps")
    ap.add_argument(
        "--threads", type=int, default=0, help="BLAS/torch threads for both (0: their defaults)"
    )
    args = ap.parse_args()
    if torch is None:
        raise SystemExit("bench needs torch installed (pip install -e '.[test]') to print ratios")
    if args.threads:
        print(set_threads(torch, args.threads))
    t_step, t_model = workload(torch)
    e_step, _ = workload(ember, t_model.state_dict())
    le, lt = float(e_step().item()), float(t_step().item())
    if abs(le - lt) > 1e-3 * max(1.0, abs(lt)):
        raise SystemExit(f"ember and torch disagree on the first loss: {le} vs {lt}")
    if args.profile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        for _ in range(3):
            e_step()
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
    tp = torch_peak(t_step)
    ep = tracemalloc_peak(e_step)
    em = median_time(e_step, args.repeat, args.warmup)
    tm = median_time(t_step, args.repeat, args.warmup)
    print(f"{'workload':44s} {'ember':>9s} {'torch':>9s} {'ember/torch':>12s}")
    name = f"Transformer LM step ({LAYERS}L d{D} h{HEADS}, {BATCH}x{T})"
    print(f"{name:44s} {em * 1e3:7.1f}ms {tm * 1e3:7.1f}ms {em / tm:12.2f}")
    print(
        f"  peak memory of one step: ember {ep / 2**20:.1f} MiB (tracemalloc), "
        f"torch {tp / 2**20:.1f} MiB (profiler memory records)"
    )
    print(f"(torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__})")


if __name__ == "__main__":
    main()
