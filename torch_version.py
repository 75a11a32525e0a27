"""ember.torch_version (torch.torch_version): ``TorchVersion``, the str ``__version__`` is.

A ``TorchVersion`` is a plain string that also compares with version strings and tuples the way
version numbers do (``ember.__version__ >= (0, 1)``, ``ember.__version__ < "1.10"``), so the
version checks of scripts written for torch compare numbers, not characters.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TorchVersion"]


def _version(v: Any):
    """``v`` (a version string, a tuple/list of parts or a packaging Version) as a comparable
    ``packaging`` Version; None for any other type (which orders with nothing)."""
    from packaging.version import Version

    if isinstance(v, Version):
        return v
    if isinstance(v, (tuple, list)):
        v = ".".join(str(p) for p in v)
    return Version(v) if isinstance(v, str) else None


class TorchVersion(str):
    """A version string comparable with strings, tuples and packaging Versions by value."""

    def _cmp(self, other: Any, op: str) -> bool:
        from packaging.version import InvalidVersion

        try:
            a, b = _version(str(self)), _version(other)
        except InvalidVersion:
            # not a version on both sides: compare as the strings they are
            return getattr(str(self), op)(other)
        if b is None:  # Python's own answer: False for ==, a TypeError for an ordering
            return NotImplemented
        return getattr(a, op)(b)

    def __lt__(self, other: Any) -> bool:
        return self._cmp(other, "__lt__")

    def __le__(self, other: Any) -> bool:
        return self._cmp(other, "__le__")

    def __gt__(self, other: Any) -> bool:
        return self._cmp(other, "__gt__")

    def __ge__(self, other: Any) -> bool:
        return self._cmp(other, "__ge__")

    def __eq__(self, other: object) -> bool:
        return self._cmp(other, "__eq__")

    # no __ne__: torch's TorchVersion keeps str's, so "2.13.0" != "2.13" (as strings) holds
    # though == compares them as versions; scripts see the same answers here

    __hash__ = str.__hash__
