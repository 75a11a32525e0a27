"""How many device-array calls (each one kernel launch on cupy) one training step of bench_gpu's
workloads makes, counted without a GPU.

The step runs on the strict fake-cupy backend of tests/strict_backend.py (numpy arrays that
pretend to live on a device, and refuse to mix with host arrays), which sees every ufunc call,
numpy function and item assignment a kernel makes on device arrays. On a GPU, where these steps
are bound by launches and Python (bench/README.md), the count is the cost to cut. The strict
backend has no ``ElementwiseKernel``, so the generic paths run there; the second count gives it
one that serves the fused cupy kernels of core/kernels/ (the recurrent step, layer norm,
attention's softmax, 2x2 max pooling, im2col/col2im, the SGD/Adam updates) compiled by the
host's C++ compiler (tests/host_kernels.py), as cupy's would run them, each launch counted under
the kernel's name.

Run: python bench/launch_census.py [--top N]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import pathlib
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))  # the strict backend

import bench_gpu
import ember
import numpy as np
from strict_backend import StrictArray, strict_cuda, strict_xp

_counting: list = [None]  # the Counter of the census in progress (fused launches count there)


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
    _counting[0] = counts
    try:
        step()
    finally:
        StrictArray.__array_ufunc__ = ufunc
        StrictArray.__array_function__ = function
        StrictArray.__setitem__ = setitem
        _counting[0] = None
    return counts


@contextlib.contextmanager
def host_fused_kernels():
    """The strict backend with cupy's ``ElementwiseKernel``: the fused kernels of core/kernels/
    run as their bodies compiled by the host's C++ compiler (one counted launch each)."""
    from ember.core.kernels.launch import fused_modules
    from host_kernels import compile_bodies

    modules = fused_modules()
    params = {body: decl for m in modules for body, decl in m.PARAMS.items()}
    names = {f"k{n}": body for n, body in enumerate(params)}
    with tempfile.TemporaryDirectory() as tmp:
        host = compile_bodies(names, params, pathlib.Path(tmp))
        by_body = {(names[n], dt): k for (n, dt), k in host.items()}

        def elementwise_kernel(in_params, out_params, body, name):
            def launch(*args, size):
                if _counting[0] is not None:
                    _counting[0][name] += 1
                dtype = next(a.dtype for a in args if isinstance(a, np.ndarray))
                by_body[body, dtype](*args, size=size)

            return launch

        strict_xp.ElementwiseKernel = elementwise_kernel
        try:
            yield
        finally:
            del strict_xp.ElementwiseKernel
            for m in modules:
                m._CACHE.clear()


def _count(build, fused: bool) -> collections.Counter:
    with strict_cuda(), host_fused_kernels() if fused else contextlib.nullcontext():
        ember.set_default_device("cuda")
        try:
            return census(build(ember))
        finally:
            ember.set_default_device(None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=8, help="the most frequent calls to list")
    args = ap.parse_args()
    if bench_gpu.torch is None:
        raise SystemExit("the workloads copy torch's initial weights: install torch")
    from host_kernels import CXX

    for label, build, _gflop, variant in bench_gpu._jobs():
        if variant is not bench_gpu.contextlib.nullcontext:
            continue  # the same step again
        build(bench_gpu.torch)  # ember's workloads copy the weights of torch's
        for fused in (False, True) if CXX else (False,):
            counts = _count(build, fused)
            top = ", ".join(f"{k} {v}" for k, v in counts.most_common(args.top))
            kind = "fused kernels" if fused else "generic paths"
            print(f"{label:42s} {kind:13s} {sum(counts.values()):5d} calls   ({top})")
    if not CXX:
        print("(no C++ compiler: the fused kernels' counts need one to build their bodies)")


if __name__ == "__main__":
    main()
