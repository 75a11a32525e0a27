"""``ember.named``: ember's named-tensor extensions beyond PyTorch 1.11 (names spec, section 4).

``broadcast_by_name()`` (spec 4.8) is an opt-in context in which binary ops (add, mul, where,
comparisons, ... every op whose rule is "unifies names from inputs") align their named operands by
name, the union of names in order of first appearance, instead of positionally from the right::

    x = ember.randn(2, 3, names=('N', 'C'))
    b = ember.randn(3, 2, names=('C', 'N'))
    with ember.named.broadcast_by_name():
        y = x + b            # b is aligned to ('N', 'C') first
        z = x * ember.randn(5, names=('H',))   # ('N', 'C', 'H'), shape (2, 3, 5)

Outside the block PyTorch's positional rule and its errors stand. The registry calls
:func:`_align_call` only for named inputs, so unnamed code pays nothing. Gradients flow back
through the alignment (a permute and a reshape) to the operands, named like them.
"""

from __future__ import annotations

import functools
import threading

__all__ = ["broadcast_by_name", "is_broadcast_by_name_enabled"]


class _ByName(threading.local):
    on = False  # thread-local, like grad mode


_by_name = _ByName()

# ops with the unify rule whose operands do not broadcast elementwise (the source of
# masked_scatter is read in order, whatever its shape): never aligned
_UNALIGNED = frozenset({"_masked_scatter"})


class broadcast_by_name:
    """Context manager (and decorator): binary ops align named operands by name inside it.

    Every dim of a named operand must be named; unnamed operands (and Python scalars) still
    broadcast by position against the aligned result. Nesting restores the previous state.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = bool(enabled)

    def __enter__(self):
        self._prev = _by_name.on
        _by_name.on = self.enabled
        return self

    def __exit__(self, *exc) -> None:
        _by_name.on = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with broadcast_by_name(self.enabled):
                return fn(*args, **kwargs)

        return wrapper


def is_broadcast_by_name_enabled() -> bool:
    """True inside ``broadcast_by_name()``."""
    return _by_name.on


def _fmt(names) -> str:
    return "[" + ", ".join("None" if n is None else repr(n) for n in names) + "]"


def _align_call(od, ins, opts, kw, out):
    """Run ``od`` on its named operands aligned by name; None when they already are aligned.

    Called by the registry (core/registry.py, the op's public function) before the kernel, only
    when some input is named, the flag is on and the op's rule unifies names from inputs.
    """
    from .tensor import Tensor

    union: list = []
    seen: set = set()
    named = []
    for t in ins:
        if isinstance(t, Tensor) and t._names is not None:
            names = t._names
            if None in names:
                raise RuntimeError(
                    f"{od.name}: broadcasting by name needs every dim of a named operand to be "
                    f"named, but got dims {_fmt(names)}. Name the dims first (refine_names(...) "
                    "or rename(...)), or broadcast by position outside broadcast_by_name()."
                )
            named.append(names)
            for n in names:
                if n not in seen:
                    seen.add(n)
                    union.append(n)
    target = tuple(union)
    if all(n == target for n in named):
        return None  # already aligned: the positional path gives the by-name result
    new = [_align(t, target) if isinstance(t, Tensor) and t._names is not None else t for t in ins]
    if out is not None:
        kw = dict(kw, out=out)
    return od.public(*new, *opts, **kw)


def _align(t, target: tuple):
    """``t`` permuted into ``target``'s order with size-1 dims for the names it lacks (ember ops,
    so gradients flow back to ``t`` with its names)."""
    names = t._names
    sizes = dict(zip(names, t._data.shape))
    pos = {n: i for i, n in enumerate(target)}
    perm = sorted(range(len(names)), key=lambda i: pos[names[i]])
    if perm != list(range(len(names))):
        t = t.permute(perm)
    shape = tuple(sizes.get(n, 1) for n in target)
    if shape != t._data.shape:
        t = t.reshape(shape)
    return t.rename(*target)
