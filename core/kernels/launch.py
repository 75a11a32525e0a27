"""Calling a fused ``ElementwiseKernel`` (the fused_*.py modules of this package)."""

from __future__ import annotations


def launch(kernel, args, size: int) -> None:
    """Run ``kernel`` over ``size`` indices. Arrays go in as flat views (they must be
    C-contiguous, so outputs are written through): a raw array's linear index then costs the
    kernel no unravelling over its shape. Numbers go in as they are. Over zero indices there
    is nothing to launch."""
    if size == 0:
        return
    kernel(*(a if isinstance(a, (int, float)) else a.reshape(-1) for a in args), size=size)
