"""Timing shared by the benchmarks: each framework timed in its own run of steps.

Each framework runs its steps alone (ember's, then torch's), never alternating: right after a
step, torch's OpenMP threads and OpenBLAS's threads keep spinning for a while, and an
alternating loop charges that spinning to the other framework (measured here: torch's CNN step
12 ms alone, 25 ms alternated with ember's), which would flatter whichever framework suffers less.
"""

from __future__ import annotations

import time

import numpy as np

CLOCK = time.perf_counter


def median_time(fn, repeat: int, warmup: int = 3, clock=None) -> float:
    """The median of ``repeat`` timings of ``fn()``, in seconds, after ``warmup`` calls."""
    clock = clock or CLOCK
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t = clock()
        fn()
        ts.append(clock() - t)
    return float(np.median(ts))


def set_threads(torch, n: int) -> str:
    """Both frameworks on ``n`` threads (numpy's BLAS through threadpoolctl, where installed)."""
    torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return "numpy BLAS threads unchanged (install threadpoolctl, or set OPENBLAS_NUM_THREADS)"
    threadpool_limits(n, user_api="blas")
    return f"numpy BLAS on {n} threads"
