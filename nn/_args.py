"""torch's TypeError for a non-Tensor argument, built only on the failure path: the functions
here run their bodies unchecked and call this once an AttributeError escaped (a list or a numpy
array has no ``_data``/``_names``/``relu``), so a correct call pays nothing."""

from __future__ import annotations

import functools

from ..core.tensor import Tensor


def arg_type_error(fn: str, exc: Exception, names: tuple, args: tuple) -> Exception:
    """``fn(): argument 'x' (position k) must be Tensor, not list`` for the first of ``args``
    (named ``names``, in signature order; None is an absent optional) that is not a Tensor, or
    ``exc`` itself when every one is a Tensor (the AttributeError is a real bug then)."""
    for i, (name, a) in enumerate(zip(names, args)):
        if a is not None and not isinstance(a, Tensor):
            return TypeError(
                f"{fn}(): argument '{name}' (position {i + 1}) must be Tensor, not {_tp_name(a)}"
            )
    return exc


def tensor_input(fn: str):
    """Decorator: a call whose body failed (AttributeError, TypeError) on a non-Tensor first
    argument ``input`` raises torch's ``fn(): argument 'input' (position 1) must be Tensor, not
    list`` instead (None included: the input is never optional)."""

    def deco(f):
        @functools.wraps(f)
        def wrapper(input, *args, **kwargs):
            try:
                return f(input, *args, **kwargs)
            except (AttributeError, TypeError):
                if isinstance(input, Tensor):
                    raise
                raise TypeError(
                    f"{fn}(): argument 'input' (position 1) must be Tensor, not {_tp_name(input)}"
                ) from None

        return wrapper

    return deco


def _tp_name(a) -> str:
    # CPython's tp_name: a static (C) type outside builtins carries its module (numpy.ndarray)
    t = type(a)
    if t.__flags__ & _HEAPTYPE or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


_HEAPTYPE = 1 << 9
