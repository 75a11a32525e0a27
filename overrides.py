"""ember.overrides (torch.overrides): the ``__torch_function__`` protocol's helpers.

Libraries that define tensor-like types call ``has_torch_function*`` and
``handle_torch_function`` from their own public functions so that such types can take over the
call; those helpers work here exactly as in torch. ember's own operators do not consult
``__torch_function__`` (ember.Tensor does not define it, so a Tensor subclass is not an
"overloaded" argument), and torch's op tables (``get_ignored_functions``,
``get_overridable_functions``, ``get_testing_overrides``) and ``TorchFunctionMode`` are absent:
looking them up fails with an error that names the torch API.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .core.tensor import Tensor

__all__ = [
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "resolve_name",
]


def _overloads(arg: Any) -> bool:
    return getattr(type(arg), "__torch_function__", None) is not None


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of ``relevant_args`` has a type that defines ``__torch_function__``."""
    return any(_overloads(a) for a in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    """``has_torch_function((arg,))`` for a single argument."""
    return _overloads(arg)


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)`` without building the tuple at the call site."""
    return any(_overloads(a) for a in args)


def _overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    """One argument per overloading type, a subclass before its base (torch's dispatch order)."""
    seen: list[type] = []
    out: list[Any] = []
    for arg in relevant_args:
        t = type(arg)
        if not _overloads(arg) or t in seen:
            continue
        # a subclass gets the first say over its parent class, whatever the argument order
        at = next((i for i, s in enumerate(seen) if issubclass(t, s)), len(seen))
        seen.insert(at, t)
        out.insert(at, arg)
    return out


def handle_torch_function(
    public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``public_api`` through the ``__torch_function__`` of the overloaded ``relevant_args``.

    Each overloaded type's ``__torch_function__(public_api, types, args, kwargs)`` is tried in
    dispatch order (subclasses first); the first result that is not ``NotImplemented`` is returned.
    Raises ``TypeError`` when every one of them returns ``NotImplemented``.
    """
    overloaded = _overloaded_args(relevant_args)
    kinds = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        fn = type(arg).__torch_function__
        if not isinstance(fn, types.MethodType):  # a plain method, not a classmethod
            warnings.warn(
                "Defining your `__torch_function__ as a plain method is deprecated and will be "
                "an error in future, please define it as a classmethod.",
                DeprecationWarning,
                stacklevel=2,
            )
            fn = arg.__torch_function__
        result = fn(public_api, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    name = resolve_name(public_api) or f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{list(kinds)}"
    )


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is a Tensor or implements ``__torch_function__`` (type or instance)."""
    if isinstance(inp, Tensor) or (isinstance(inp, type) and issubclass(inp, Tensor)):
        return True
    return hasattr(inp, "__torch_function__")


# torch namespaces whose public functions resolve_name names, as (torch path, ember module,
# class inside it), searched in this order
_NAMESPACES = (
    ("torch.nn.functional", "ember.nn.functional", None),
    ("torch.linalg", "ember.core.linalg", None),
    ("torch.fft", "ember.core.fft", None),
    ("torch.special", "ember.core.special", None),
    ("torch", "ember", None),
    # last: ember binds many Tensor methods and torch functions to one object (ember.add is
    # ember.Tensor.add), which names the function
    ("torch.Tensor", "ember.core.tensor", "Tensor"),
)


def resolve_name(f: Callable) -> str | None:
    """The torch-style qualified name of a function ember provides (``'torch.add'``), else None."""
    name = getattr(f, "__name__", None)
    if not isinstance(name, str):
        return None
    for torch_path, mod_name, cls in _NAMESPACES:
        ns = sys.modules.get(mod_name)
        if ns is not None and cls is not None:
            ns = getattr(ns, cls)
        if ns is not None and getattr(ns, name, None) is f:
            return f"{torch_path}.{name}"
    return None
