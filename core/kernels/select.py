"""Masked selection: ``where`` without numpy's per-element branches (ember.where, threshold, the
gradient masks of relu and friends)."""

from __future__ import annotations

import numpy as np

_UINT_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SELECT_MIN = 1 << 14  # below this many elements numpy's where is as fast


def select(xp, mask, a, b):
    """``xp.where(mask, a, b)``; on cpu, for large real arrays of one dtype, branch-free.

    numpy's where branches per element: on a mask with no pattern (signs of random data) it runs
    ~10x slower than a few integer passes (2M floats: 8 ms vs 0.8 ms). Here the mask becomes a
    word of all ones or zeros per element and the result is (a & w) | (b & ~w) on the bits, so
    every value (NaN and inf included) is copied exactly. ``b`` (or ``a``) may be a scalar of
    that dtype's kind; a zero scalar costs no pass (relu's backward: the gradient where the input
    was positive, else exactly 0, also where the gradient is inf or NaN).
    """
    if xp is np and mask.dtype == np.bool_ and mask.size >= _SELECT_MIN:
        if not hasattr(a, "dtype"):  # a Python number beside an array: the array's dtype
            a = _weak(a, b)
        elif not hasattr(b, "dtype"):
            b = _weak(b, a)
        a, b = np.asarray(a), np.asarray(b)
        d = a.dtype if a.ndim else b.dtype
        ut = _UINT_OF.get(d.itemsize)
        if (
            ut is not None
            and d.kind in "fiub"
            and a.dtype == b.dtype
            and np.broadcast_shapes(mask.shape, a.shape, b.shape) == mask.shape
        ):
            w = mask.astype(ut)
            np.negative(w, out=w)  # True -> all ones, False -> 0
            if not b.ndim and not b.view(ut):  # zero bits where the mask fails: a & w alone
                return np.bitwise_and(a.view(ut), w, out=w).view(d)
            out = None if not a.ndim and not a.view(ut) else np.bitwise_and(a.view(ut), w)
            np.invert(w, out=w)
            np.bitwise_and(b.view(ut), w, out=w)
            if out is None:  # zero bits where the mask holds: b & ~w alone
                return w.view(d)
            out |= w
            return out.view(d)
    return xp.where(mask, a, b)


def _weak(v, other):
    """A Python number in ``other``'s dtype where numpy would give that dtype anyway (a float
    beside float32 stays float32): np.asarray(0.0) would be float64 and miss the fast path."""
    k = getattr(other, "dtype", np.dtype(object)).kind
    t = type(v)
    if (t is float and k == "f") or (t is int and k in "fiu") or (t is bool and k == "b"):
        return np.asarray(v, other.dtype)
    return v
