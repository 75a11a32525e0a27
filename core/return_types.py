"""``ember.return_types``: the named tuples that multi-output ops return (like torch.return_types)."""

from __future__ import annotations

import collections


class _ReturnType(tuple):
    """Base of the (values, indices)-style results, printed like torch.return_types."""

    __slots__ = ()

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"ember.return_types.{type(self).__name__}(\n{body})"


def _return_type(name: str, fields: tuple = ("values", "indices")):
    base = collections.namedtuple(name, fields)
    cls = type(name, (_ReturnType, base), {"__slots__": (), "__repr__": _ReturnType.__repr__})
    cls.__module__ = "ember.return_types"
    return cls


class _ReturnTypes:
    """The named tuple classes, as attributes (``ember.return_types.max``)."""

    max = _return_type("max")
    min = _return_type("min")
    median = _return_type("median")
    mode = _return_type("mode")
    aminmax = _return_type("aminmax", ("min", "max"))
    frexp = _return_type("frexp", ("mantissa", "exponent"))


return_types = _ReturnTypes()
