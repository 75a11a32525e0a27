"""hash_tensor: an xor reduction of the elements' 64-bit patterns (torch.hash_tensor)."""

from __future__ import annotations

import numpy as np

from ..layout import row_major
from ..registry import op
from .reduction import _axes, _nonempty, _reduced_names

__all__ = ["hash_tensor"]


@op(names=_reduced_names)
def hash_tensor(xp, input, dim=(), *, keepdim=False, mode=0):
    """Hash of the elements over ``dim`` (all dims when ``()`` or None): each element is widened
    to 64 bits (float64 / int64 / uint64), its bits read as uint64, and the results xor-ed.

    The result is uint64 and is not differentiable."""
    if mode != 0:
        raise RuntimeError(f"hash_tensor: Only mode=0 (xor_reduction) is supported, got {mode}")
    k = input.dtype.kind
    if k == "c":
        raise RuntimeError("hash_tensor: complex inputs are not supported")
    wide = xp.float64 if k in "fV" else (xp.uint64 if k in "bu" else xp.int64)
    bits = input.astype(wide).view(xp.uint64)
    ax = _axes(None if dim == () else dim, input.ndim)
    axes = tuple(range(input.ndim)) if ax is None else ax
    _nonempty("hash_tensor", input, ax, who="hash_tensor")
    if not axes:
        out = bits.copy()
    elif xp is np:
        out = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim)
    else:  # cupy has no bitwise_xor.reduce
        out = xor_fold(xp, bits, tuple(a % input.ndim for a in axes), keepdim)
    out = xp.asarray(out, dtype=xp.uint64)
    # a reduction: row-major whatever the input's order, as torch's (see layout.row_major)
    return row_major(xp, out) if out.ndim > 1 else out


def xor_fold(xp, bits, axes: tuple, keepdim: bool):
    """The xor of ``bits`` over ``axes`` (non-negative) by folding halves: the reduced dims are
    moved last and flattened, then xor-ed pairwise, log2(n) elementwise steps."""
    keep = [i for i in range(bits.ndim) if i not in axes]
    a = xp.transpose(bits, keep + list(axes)).reshape(tuple(bits.shape[i] for i in keep) + (-1,))
    n = a.shape[-1]
    while n > 1:
        h = n // 2
        b = xp.bitwise_xor(a[..., :h], a[..., h : 2 * h])
        if n % 2:  # the odd last element joins the first
            b[..., :1] ^= a[..., 2 * h :]
        a, n = b, h
    out = a[..., 0]
    if keepdim:
        out = out.reshape(tuple(1 if i in axes else d for i, d in enumerate(bits.shape)))
    return out
