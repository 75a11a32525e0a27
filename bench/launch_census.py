"""How many device-array calls (each one kernel launch on cupy) one training step of bench_gpu's
workloads makes, counted without a GPU.

The step runs on the strict fake-cupy backend of tests/strict_backend.py (numpy arrays that
pretend to live on a device, and refuse to mix with host arrays), which sees every ufunc call,
numpy function and item assignment a kernel makes on device arrays. On a GPU, where these steps
are bound by launches and Python (bench/README.md), the count is the cost to cut. The strict
backend has no ``ElementwiseKernel``, so the recurrent layers take their generic gate math here
(on cupy one fused kernel per time step and direction, forward and backward, replaces it).

Run: python bench/launch_census.py [--top N]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))  # the strict backend

import bench_gpu
import ember
from strict_backend import StrictArray, strict_cuda


def census(step) -> collections.Counter:
    """The device-array calls of one ``step()`` (after one warm-up step), by function name."""
    counts: collections.Counter = collections.Counter()
    ufunc, function, setitem = (
        StrictArray.__array_ufunc__,
        StrictArray.__array_function__,
        StrictArray.__setitem__,
    )

    def count_ufunc(self, uf, method, *args, **kwargs):
        counts[uf.__name__ if method == "__call__" else f"{uf.__name__}.{method}"] += 1
        return ufunc(self, uf, method, *args, **kwargs)

    def count_function(self, func, types_, args, kwargs):
        counts[func.__name__] += 1
        return function(self, func, types_, args, kwargs)

    def count_setitem(self, key, value):
        counts["__setitem__"] += 1
        return setitem(self, key, value)

    step()
    StrictArray.__array_ufunc__ = count_ufunc
    StrictArray.__array_function__ = count_function
    StrictArray.__setitem__ = count_setitem
    try:
        step()
    finally:
        StrictArray.__array_ufunc__ = ufunc
        StrictArray.__array_function__ = function
        StrictArray.__setitem__ = setitem
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=8, help="the most frequent calls to list")
    args = ap.parse_args()
    if bench_gpu.torch is None:
        raise SystemExit("the workloads copy torch's initial weights: install torch")
    for label, build, _gflop, variant in bench_gpu._jobs():
        if variant is not bench_gpu.contextlib.nullcontext:
            continue  # the same step again
        build(bench_gpu.torch)  # ember's workloads copy the weights of torch's
        with strict_cuda():
            ember.set_default_device("cuda")
            try:
                counts = census(build(ember))
            finally:
                ember.set_default_device(None)
        top = ", ".join(f"{k} {v}" for k, v in counts.most_common(args.top))
        print(f"{label:42s} {sum(counts.values()):6d} calls   ({top})")


if __name__ == "__main__":
    main()
