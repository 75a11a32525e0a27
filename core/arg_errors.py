"""torch's TypeErrors for arguments of the wrong type, built only on the failure path.

Dependency-light (dtype, device and layout only) so that the op registry, the op modules and the
Python-level wrappers (nn.functional, linalg, fft) share one text for each kind of error.
"""

from __future__ import annotations

import functools

from . import dtype as _dt
from .device import device as _device
from .layout import memory_format


def type_name(a) -> str:
    """The name torch prints for the type of argument ``a`` (``torch.dtype`` for a dtype,
    CPython's tp_name otherwise: ``numpy.ndarray`` for a static type outside builtins)."""
    for cls, name in ((_dt.dtype, "dtype"), (_device, "device"), (memory_format, "memory_format")):
        if isinstance(a, cls):
            return f"torch.{name}"
    t = type(a)
    if t.__flags__ & _HEAPTYPE or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


_HEAPTYPE = 1 << 9


def invalid_arguments(fname: str, args, kwargs, signatures) -> TypeError:
    """torch's TypeError for a call that matches none of ``fname``'s ``signatures``: what was
    passed (positional types, then keyword=type) and the signatures it accepts."""
    pos = [type_name(a) for a in args]
    kw = [f"{k}={type_name(v)}" for k, v in sorted(kwargs.items())]
    got = ", ".join(pos + kw) if pos else "".join(k + ", " for k in kw)
    return TypeError(
        f"{fname}() received an invalid combination of arguments - got ({got}), but expected "
        "one of:\n" + "".join(f" * {sig}\n" for sig in signatures)
    )


def must_be_tensor(fname: str, names: tuple, args: tuple, optional: tuple = ()) -> TypeError | None:
    """``fname(): argument 'x' (position k) must be Tensor, not str`` for the first of ``args``
    (named ``names``, in torch's signature order) that is not a Tensor; None when all are.
    An argument named in ``optional`` may be None."""
    from .tensor import Tensor

    for i, (name, a) in enumerate(zip(names, args)):
        if not isinstance(a, Tensor) and not (a is None and name in optional):
            return TypeError(
                f"{fname}(): argument '{name}' (position {i + 1}) must be Tensor, "
                f"not {type_name(a)}"
            )
    return None


def tensor_input(fn: str, *names: str):
    """Decorator: a call whose body failed (AttributeError, TypeError) on a non-Tensor among
    its leading arguments ``names`` (default: ``input``) raises torch's ``fn(): argument 'input'
    (position 1) must be Tensor, not list`` instead (None included: these are never optional).
    A correct call pays one frame; any other failure is re-raised as it was."""
    names = names or ("input",)

    def deco(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            try:
                return f(*args, **kwargs)
            except (AttributeError, TypeError):
                err = _leading_type_error(fn, names, args, kwargs)
                if err is None:
                    raise
                raise err from None

        return wrapper

    return deco


def _leading_type_error(fn: str, names: tuple, args: tuple, kwargs: dict) -> TypeError | None:
    from .tensor import Tensor

    for i, name in enumerate(names):
        if i < len(args):
            a = args[i]
        elif name in kwargs:
            a = kwargs[name]
        else:
            continue  # not passed: the call's own error stands
        if not isinstance(a, Tensor):
            return TypeError(
                f"{fn}(): argument '{name}' (position {i + 1}) must be Tensor, not {type_name(a)}"
            )
    return None


def sequence_error(items) -> TypeError | None:
    """torch's ``expected Tensor as element i in argument 0, but got str`` for the first of
    ``items`` (a function's ``*tensors``) that is not a Tensor; None when all are."""
    from .tensor import Tensor

    for i, a in enumerate(items):
        if not isinstance(a, Tensor):
            return TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type_name(a)}"
            )
    return None


def tensor_sequence(unpack: bool = False):
    """Decorator for ``fn(*tensors)``: a call whose body failed (AttributeError, TypeError) on
    a non-Tensor element raises :func:`sequence_error` instead. ``unpack``: a single list or
    tuple argument holds the tensors (as torch's meshgrid takes them)."""

    def deco(f):
        @functools.wraps(f)
        def wrapper(*tensors, **kwargs):
            try:
                return f(*tensors, **kwargs)
            except (AttributeError, TypeError):
                items = tensors
                if unpack and len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
                    items = tensors[0]
                err = sequence_error(items)
                if err is None:
                    raise
                raise err from None

        return wrapper

    return deco


def overloaded(fn: str, signatures: tuple, valid):
    """Decorator: a call whose body failed (AttributeError, TypeError, ValueError) on arguments
    that ``valid(args, kwargs)`` rejects raises torch's "invalid combination of arguments" error
    for ``fn``'s ``signatures``; any other failure is re-raised as it was."""

    def deco(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            try:
                return f(*args, **kwargs)
            except (AttributeError, TypeError, ValueError):
                if valid(args, kwargs):
                    raise
                raise invalid_arguments(fn, args, kwargs, signatures) from None

        return wrapper

    return deco


def is_ints(v) -> bool:
    """An int, or a tuple or list of ints (torch's ``int`` / ``tuple of ints`` parameters)."""
    if isinstance(v, (tuple, list)):
        return all(type(x) is int for x in v)
    return type(v) is int
