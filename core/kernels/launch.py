"""Calling a fused ``ElementwiseKernel`` (the fused_*.py modules of this package)."""

from __future__ import annotations

import numpy as np


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
