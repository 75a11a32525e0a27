"""Calling a fused ``ElementwiseKernel`` (fused_rnn.py, fused_norm.py, fused_optim.py)."""

from __future__ import annotations


def launch(kernel, args, size: int) -> None:
    """Run ``kernel`` over ``size`` indices. Arrays go in as flat views (they must be
    C-contiguous, so outputs are written through): a raw array's linear index then costs the
    kernel no unravelling over its shape. Numbers go in as they are."""
    kernel(*(a if isinstance(a, (int, float)) else a.reshape(-1) for a in args), size=size)
