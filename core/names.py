"""Name-inference rules as pure functions on name tuples (see ../shared/spec/named_tensors.md).

A rule is called only when some input is named; it returns the output's names (a tuple, or None
for unnamed). Ops name their rule in ``@op(names=...)``.
"""

from __future__ import annotations


def names_of(t) -> tuple:
    n = t._names
    return (None,) * t._data.ndim if n is None else n


def _fmt(names) -> str:
    return "[" + ", ".join("None" if n is None else repr(n) for n in names) + "]"


def unify(a: tuple, b: tuple) -> tuple:
    """Unify two name lists from the right (None is a wildcard), with PyTorch's errors."""
    if a is None:
        return b
    if b is None:
        return a
    la, lb = len(a), len(b)
    out = list(a if la >= lb else b)
    for k in range(1, min(la, lb) + 1):
        x, y = a[-k], b[-k]
        if x is not None and y is not None and x != y:
            raise RuntimeError(
                f"Error when attempting to broadcast dims {_fmt(a)} and dims {_fmt(b)}: dim '{x}' "
                f"and dim '{y}' are at the same position from the right but do not match."
            )
        out[-k] = x if x is not None else y
    # a name may appear only once, and at the same position from the right in both lists
    for name in {n for n in out if n is not None}:
        pa = [la - i for i, n in enumerate(a) if n == name]
        pb = [lb - i for i, n in enumerate(b) if n == name]
        if pa and pb and pa != pb:
            short, long_ = (a, b) if la <= lb else (b, a)
            raise RuntimeError(
                f"Misaligned dims when attempting to broadcast dims {_fmt(short)} and dims "
                f"{_fmt(long_)}: dim '{name}' appears in a different position from the right "
                "across both lists."
            )
    return tuple(out)


def _clean(names):
    return None if names is None or all(n is None for n in names) else tuple(names)


# ------------------------------------------------------------------ rules
def keep(ins, *args, **kwargs):
    """Keeps input names (unary pointwise ops, softmax, cumsum, ...)."""
    return ins[0]._names


def unify_inputs(ins, *args, **kwargs):
    """Unifies names from inputs (binary pointwise ops)."""
    out = None
    for t in ins:
        n = getattr(t, "_names", None)
        if n is not None:
            out = n if out is None else unify(out, n)
        elif out is not None and hasattr(t, "_data") and t._data.ndim > len(out):
            out = unify(out, (None,) * t._data.ndim)
    if out is not None:
        for t in ins:
            if (
                getattr(t, "_names", None) is None
                and hasattr(t, "_data")
                and t._data.ndim > len(out)
            ):
                out = (None,) * (t._data.ndim - len(out)) + out
    return _clean(out)


def remove_dims(names: tuple, dims) -> tuple | None:
    """The names with positions ``dims`` removed (reductions, select, squeeze)."""
    drop = set(dims)
    return _clean(tuple(n for i, n in enumerate(names) if i not in drop))


def check_out_names(out, names):
    """out= semantics: an unnamed out takes the computed names; a named one must match exactly."""
    if out._names is None or all(n is None for n in out._names):
        return names
    if tuple(out._names) != tuple(names_of_len(names, len(out._names))):
        raise RuntimeError(
            f"Name mismatch: the out= tensor has names {_fmt(out._names)} but the "
            f"computed output names are {_fmt(names_of_len(names, len(out._names)))}"
        )
    return out._names


def names_of_len(names, n) -> tuple:
    return (None,) * n if names is None else tuple(names)


def check_names(names, ndim: int) -> tuple | None:
    """Validate a ``names=`` argument: one per dim, identifiers or None, no duplicates."""
    if names is None:
        return None
    names = tuple(names)
    if len(names) != ndim:
        raise RuntimeError(
            f"Number of names ({len(names)}) and number of dimensions in tensor "
            f"({ndim}) do not match. Attempted to create a tensor with names "
            f"{_fmt(names)}"
        )
    seen = set()
    for n in names:
        if n is None:
            continue
        if not isinstance(n, str) or not n.isidentifier() or n == "...":
            raise RuntimeError(
                f"Invalid name: a valid identifier contains only digits, alphabetical "
                f"characters and/or underscore and starts with a non-digit. got: "
                f"'{n}'."
            )
        if n in seen:
            raise RuntimeError(
                f"Cannot construct a tensor with duplicate names. Got names: {_fmt(names)}."
            )
        seen.add(n)
    return _clean(names)
