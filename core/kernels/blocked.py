"""Run a chain of numpy passes block by block, so that its temporaries stay in cache."""

from __future__ import annotations

import numpy as np


def blocked(fn, x, block: int, dtype):
    """``fn(x)`` (an elementwise chain of host numpy passes) computed on ``block``-element slices
    of a C-contiguous ``x``, written into one ``dtype`` result of ``x``'s shape; small or
    non-contiguous arrays go in one call (ufuncs keep their layout)."""
    if x.size <= 2 * block or not x.flags.c_contiguous:
        return fn(x)
    flat = x.reshape(-1)
    out = np.empty(flat.shape, dtype)
    for i in range(0, flat.size, block):
        out[i : i + block] = fn(flat[i : i + block])
    return out.reshape(x.shape)
