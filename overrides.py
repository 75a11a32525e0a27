"""ember.overrides (torch.overrides): the ``__torch_function__`` protocol.

ember's registry ops (``ember.add``, ``Tensor.sum``, the operators ...) consult
``__torch_function__`` as torch's operators do: a Tensor subclass's ops return the subclass
(``Tensor.__torch_function__``, the default, converts results) unless the subclass overrides the
method (logging, unwrapping subclasses) or disables it (``nn.Parameter``:
``torch._C._disabled_torch_function_impl``); a non-Tensor type defining it (the
``HANDLED_FUNCTIONS`` tables of torch's docs) takes every registry op it is passed to. Python-level
composites (most of nn.functional, linalg/fft wrappers, indexing, ``detach``, factories like
``zeros_like``) do not dispatch themselves: their inner registry ops do (see
core/torch_function.py). ``has_torch_function*``, ``handle_torch_function``, ``is_tensor_like``
and ``resolve_name`` work as in torch for libraries that dispatch from their own functions.
``TorchFunctionMode`` is refused when entered (a mode would need a check on every op call,
which ember's hot path does not make), and torch's op tables (``get_ignored_functions``,
``get_overridable_functions``, ``get_testing_overrides``) are absent.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .core.tensor import Tensor
from .core.torch_function import OFF as _OFF
from .core.torch_function import _disabled_torch_function_impl

__all__ = [
    "TorchFunctionMode",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "resolve_name",
]


def _overloads(arg: Any) -> bool:
    # a plain Tensor and a type with the disabled impl (Parameter) never dispatch, and nothing
    # does inside DisableTorchFunction*
    tp = type(arg)
    if tp is Tensor or _OFF[0]:
        return False
    fn = getattr(tp, "__torch_function__", None)
    return fn is not None and fn is not _disabled_torch_function_impl


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
    result = _dispatch(public_api, overloaded, args, kwargs)
    if result is not NotImplemented:
        return result
    name = resolve_name(public_api) or f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{[type(a) for a in overloaded]}"
    )


def _dispatch(public_api: Callable, overloaded: list, args: tuple, kwargs: dict | None) -> Any:
    """The first answer other than NotImplemented of the ``__torch_function__`` of the
    ``overloaded`` arguments (in dispatch order), else NotImplemented."""
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
    return NotImplemented


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


class TorchFunctionMode:
    """torch's base class of torch function modes. ember does not run modes: entering one raises
    (a mode sees every op call, so ember's ops would have to check for one on every call, a
    cost its hot path does not take). Subclassing and constructing it work."""

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Callable, types: Any, args: Any = (), kwargs=None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> None:
        raise NotImplementedError(
            "torch.overrides.TorchFunctionMode is not supported by ember: its ops do not check "
            "for an active torch function mode (a per-call cost); override __torch_function__ "
            "on a Tensor subclass instead"
        )

    def __exit__(self, *exc: object) -> None:
        pass
