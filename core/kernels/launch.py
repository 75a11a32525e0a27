"""Building and calling the fused ``ElementwiseKernel``s (the fused_*.py modules of this
package)."""

from __future__ import annotations

import numpy as np

_NP_DICT = vars(np)

# the modules holding fused kernel bodies (each with a PARAMS table): the host harness, the
# NVRTC check and the launch census go through them all
FUSED_MODULES = (
    "fused_im2col",
    "fused_norm",
    "fused_optim",
    "fused_pool",
    "fused_rnn",
    "fused_softmax",
)


def fused_modules() -> list:
    """The modules of ``FUSED_MODULES``, imported."""
    import importlib

    return [importlib.import_module(f"{__package__}.{name}") for name in FUSED_MODULES]


class KernelSet:
    """Fused kernels compiled for the array module ``xp``, in the order of their bodies (a fused
    module's kernel class adds the methods that allocate outputs and launch them)."""

    def __init__(self, xp, *kernels) -> None:
        self.xp = xp
        self._kernels = kernels


def kernel_set(xp, dtype, cache: dict, cls, bodies: dict, params: dict):
    """``cls(xp, *kernels)`` with one kernel per ``name -> body`` of ``bodies`` (in order),
    compiled once per array module into ``cache``; None where the generic paths run: an array
    module without ``ElementwiseKernel`` (numpy, the strict test backend) or a dtype other than
    float32/float64."""
    # numpy first: hasattr on the numpy module goes through its __getattr__ (~3 us a miss, paid
    # by every conv, norm and pool call on the cpu); its dict still sees a test's monkeypatch
    if xp is np and "ElementwiseKernel" not in _NP_DICT:
        return None
    if dtype.char not in "fd" or not hasattr(xp, "ElementwiseKernel"):
        return None
    k = cache.get(xp)
    if k is None:
        kernels = (xp.ElementwiseKernel(*params[b], b, name) for name, b in bodies.items())
        k = cache[xp] = cls(xp, *kernels)
    return k


def launch(kernel, args, size: int) -> None:
    """Run ``kernel`` over ``size`` indices. Arrays go in as flat views (they must be
    C-contiguous, so outputs are written through): a raw array's linear index then costs the
    kernel no unravelling over its shape. Numbers go in as Python numbers (a numpy scalar would
    go in as an array). Over zero indices there is nothing to launch."""
    if size == 0:
        return
    kernel(*(_arg(a) for a in args), size=size)


def _arg(a):
    if isinstance(a, (int, float)):
        return a
    if isinstance(a, np.number):
        return a.item()
    return a.reshape(-1)
