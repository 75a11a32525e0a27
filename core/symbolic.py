"""torch's symbolic-shape helpers (sym_*) and structured control flow (cond), eagerly.

ember runs eagerly and has no symbolic shapes, so the ``sym_*`` helpers are the plain Python
operations with torch's result types, and ``cond`` is an if-statement on the predicate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from .tensor import Tensor

__all__ = [
    "SymBool",
    "SymFloat",
    "SymInt",
    "cond",
    "sym_float",
    "sym_int",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sum",
]


# torch's symbolic scalar types, for annotations and isinstance checks: eager ember never makes
# one, so no value is an instance (as in eager torch)
class SymInt:
    """A symbolic int (never produced by eager ember)."""


class SymFloat:
    """A symbolic float (never produced by eager ember)."""


class SymBool:
    """A symbolic bool (never produced by eager ember)."""


_NUMBER = (int, float)


def _number(a):
    if isinstance(a, Tensor):
        return a.item()
    if hasattr(a, "item") and not isinstance(a, _NUMBER):  # numpy scalars
        return a.item()
    return a


def sym_int(a: Any) -> int:
    """``int(a)``; floats truncate toward zero."""
    a = _number(a)
    return math.trunc(a) if isinstance(a, float) else int(a)


def sym_float(a: Any) -> float:
    """``float(a)``."""
    return float(_number(a))


def _check_numbers(fname: str, a, b) -> None:
    for v in (a, b):
        if not isinstance(v, _NUMBER):
            raise TypeError(f"{fname}: expected int or float arguments, got {type(v)}")


def sym_max(a: Any, b: Any):
    """``max(a, b)``, a float if either argument is a float."""
    a, b = _number(a), _number(b)
    _check_numbers("sym_max", a, b)
    m = max(a, b)
    return float(m) if isinstance(a, float) or isinstance(b, float) else int(m)


def sym_min(a: Any, b: Any):
    """``min(a, b)``, a float if either argument is a float."""
    a, b = _number(a), _number(b)
    _check_numbers("sym_min", a, b)
    m = min(a, b)
    return float(m) if isinstance(a, float) or isinstance(b, float) else int(m)


def sym_not(a: Any) -> bool:
    """Logical negation."""
    return not _number(a)


def sym_sum(args: Iterable | Any, *rest: Any):
    """N-ary sum: ``sym_sum([a, b, c])`` or ``sym_sum(a, b, c)``."""
    items = (args, *rest) if rest or not isinstance(args, (list, tuple)) else args
    total = 0
    for v in items:
        total = total + v
    return total


def cond(pred: bool | Tensor, true_fn: Callable, false_fn: Callable, operands: Any = ()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    Args:
        pred: a bool, or a tensor with one element.
        true_fn, false_fn: callables taking the operands.
        operands: a tuple or list of inputs to the chosen branch.
    """
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(
                f"Expected pred to be bool or single-element tensor, but got {pred!r}."
            )
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")  # noqa: TRY004
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(  # noqa: TRY004 - torch's error type
            f"Expected operands to be a tuple or list, but got {type(operands)}."
        )
    return true_fn(*operands) if pred else false_fn(*operands)
