"""The matmul family: matmul, mm, bmm, mv, dot, addmm, einsum (BLAS does the work)."""

from __future__ import annotations

from ..registry import op


__all__ = []


def _matmul_names(ins, *a, **k):
    from ..names import names_of, unify

    x, y = ins
    nx, ny = names_of(x), names_of(y)
    if x._data.ndim == 1 and y._data.ndim == 1:
        return None
    if y._data.ndim == 1:
        return _clean(nx[:-1])
    if x._data.ndim == 1:
        return _clean(ny[:-2] + ny[-1:])
    batch = unify(nx[:-2], ny[:-2]) if (nx[:-2] or ny[:-2]) else ()
    return _clean(tuple(batch) + (nx[-2], ny[-1]))


def _clean(n):
    return None if all(v is None for v in n) else tuple(n)


@op(names=_matmul_names, promote=True, dunders=("__matmul__",))
def matmul(xp, input, other):
    """Matrix product with torch's broadcasting rules (1-D operands are promoted and squeezed)."""
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{input.ndim}D and {other.ndim}D")
    return xp.matmul(input, other)


@matmul.vjp
def _(grad, input, other):
    gi = go = None
    xi, xo = input.ndim, other.ndim
    if xi == 1 and xo == 1:
        return grad * other, grad * input
    if xo == 1:
        gi = grad.unsqueeze(-1) * other if input.requires_grad else None
        go = (input.mT @ grad.unsqueeze(-1)).squeeze(-1) if other.requires_grad else None
        return gi, go
    if xi == 1:
        gi = (grad.unsqueeze(-2) @ other.mT).squeeze(-2) if input.requires_grad else None
        go = input.unsqueeze(-1) * grad.unsqueeze(-2) if other.requires_grad else None
        return gi, go
    gi = grad @ other.mT if input.requires_grad else None
    go = input.mT @ grad if other.requires_grad else None
    return gi, go
