"""Dim arguments: ints (negative wrap) or names, normalised with torch's errors."""

from __future__ import annotations


class DimTypeError(TypeError):
    """A dim that is neither an int nor a name (``value``: what was given). The op registry
    turns it into torch's ``fn(): argument 'dim' (position k) must be int, not float``."""

    def __init__(self, value):
        super().__init__(f"dim must be an int or a name, got {type(value).__name__}")
        self.value = value


def int_dim(dim) -> int:
    """An int-like dim (numpy integer, 0-d integer tensor) as an int. bool has ``__index__`` but
    torch's argument parser refuses it for an int dim, as it refuses non-integers: DimTypeError.
    Callers take plain ints on their fast path and call this for anything else."""
    if dim.__class__ is bool:
        raise DimTypeError(dim)
    try:
        return dim.__index__()
    except AttributeError:
        raise DimTypeError(dim) from None


def normalize_dim(t, dim, ndim: int | None = None) -> int:
    """``dim`` (int or name) of tensor ``t`` as a non-negative index."""
    n = t._data.ndim if ndim is None else ndim
    if isinstance(dim, str):
        names = t._names
        if names is None or dim not in names:
            shown = list(names) if names is not None else [None] * n
            raise RuntimeError(f"Name '{dim}' not found in Tensor{shown}.")
        return names.index(dim)
    if dim is None:
        raise RuntimeError("Please look up dimensions by name, got: name = None.")
    d = dim if type(dim) is int else int_dim(dim)
    lo, hi = (-1, 0) if n == 0 else (-n, n - 1)
    if d < lo or d > hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})"
        )
    return d + n if d < 0 else (d if n else 0)


def by_name(t, dim):
    """``dim`` as an index when it is a name, or None on a named tensor (a name lookup that
    fails with the spec's error); any other ``dim`` is returned unchanged for the caller's checks.
    For ops where None is not a dim (None meaning all dims is the caller's own case)."""
    if isinstance(dim, str) or (dim is None and t._names is not None):
        return normalize_dim(t, dim)
    return dim


def normalize_dims(t, dims, ndim: int | None = None) -> tuple:
    """A dim, a list of dims, or None (all dims) -> a sorted tuple of distinct indices."""
    n = t._data.ndim if ndim is None else ndim
    if dims is None:
        return tuple(range(n))
    if isinstance(dims, (list, tuple)):
        out = tuple(normalize_dim(t, d, n) for d in dims)
        if len(set(out)) != len(out):
            raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
        return tuple(sorted(out))
    return (normalize_dim(t, dims, n),)
