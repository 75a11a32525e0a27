"""Timing and memory helpers shared by the benchmarks: each framework timed in its own run.

Each framework runs its steps alone (ember's, then torch's), never alternating: right after a
step, torch's OpenMP threads and OpenBLAS's threads keep spinning for a while, and an
alternating loop charges that spinning to the other framework (measured here: torch's CNN step
12 ms alone, 25 ms alternated with ember's), which would flatter whichever framework suffers less.
"""

from __future__ import annotations

import gc
import time
import tracemalloc

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


# ---------------------------------------------------------------------- memory
def vm_bytes(field: str) -> int:
    """A ``/proc/self/status`` field such as ``"VmRSS:"`` in bytes (0 where it is missing)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def rss_peak_delta(step) -> float | None:
    """Growth of the peak RSS during one ``step()`` over the RSS before it (bytes), or None
    where /proc/self/clear_refs cannot reset the peak."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
    except OSError:
        return None
    before = vm_bytes("VmRSS:")
    step()
    return vm_bytes("VmHWM:") - before


def tracemalloc_peak(step) -> int:
    """Peak of traced allocations during one ``step()`` (ember: numpy buffers, Python objects)."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base
