"""ember.jit (torch.jit): accepted, not compiled.

ember has no TorchScript compiler. Like :func:`ember.compile`, ``script(obj)`` and
``trace(func, example_inputs)`` return what they were given, to run eagerly as it is (every torch
keyword argument is accepted); the decorators ``ignore``, ``unused``, ``export`` and
``interface`` return their argument; ``is_scripting()`` and ``is_tracing()`` are False. A
TorchScript archive cannot be written or read: ``save`` and ``load`` raise NotImplementedError
(save a ``state_dict`` with :func:`ember.save` instead).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar

__all__ = [
    "Attribute",
    "Final",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "enable_onednn_fusion",
    "export",
    "fork",
    "freeze",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "isinstance",
    "load",
    "onednn_fusion_enabled",
    "optimize_for_inference",
    "optimized_execution",
    "save",
    "script",
    "script_if_tracing",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

_T = TypeVar("_T")
_builtin_isinstance = isinstance


class ScriptModule:
    """torch.jit.ScriptModule's name, for ``isinstance`` checks (ember never makes one)."""


class ScriptFunction:
    """torch.jit.ScriptFunction's name, for ``isinstance`` checks (ember never makes one)."""


def script(
    obj: _T,
    optimize: Any = None,
    _frames_up: int = 0,
    _rcb: Any = None,
    example_inputs: Any = None,
) -> _T:
    """torch.jit.script: returns ``obj`` (a function, nn.Module or class) unchanged; ember runs
    it eagerly."""
    return obj


def trace(
    func: _T,
    example_inputs: Any = None,
    optimize: Any = None,
    check_trace: bool = True,
    check_inputs: Any = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    _force_outplace: bool = False,
    _module_class: Any = None,
    _compilation_unit: Any = None,
    example_kwarg_inputs: dict | None = None,
    _store_inputs: bool = True,
) -> _T:
    """torch.jit.trace: returns ``func`` unchanged (ember records no trace; the example inputs
    are not run)."""
    return func


def trace_module(mod: _T, inputs: Any = None, *args: Any, **kwargs: Any) -> _T:
    """torch.jit.trace_module: returns ``mod`` unchanged."""
    return mod


def script_if_tracing(fn: _T) -> _T:
    """Returns ``fn``: ember never traces."""
    return fn


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Decorator leaving a function to Python (everything is Python in ember): identity.

    Works as ``@ignore`` and ``@ignore(drop=True)``.
    """
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: _T) -> _T:
    """Decorator marking a function the compiler should skip: identity."""
    return fn


def export(fn: _T) -> _T:
    """Decorator marking a method as a compilation entry point: identity."""
    return fn


def interface(obj: _T) -> _T:
    """Decorator declaring a TorchScript interface: identity."""
    return obj


def is_scripting() -> bool:
    """False: ember never compiles TorchScript."""
    return False


def is_tracing() -> bool:
    """False: ember never traces."""
    return False


def annotate(the_type: Any, the_value: _T) -> _T:
    """Returns ``the_value`` (a type hint for the TorchScript compiler)."""
    return the_value


def isinstance(obj: Any, target_type: Any) -> bool:
    """torch.jit.isinstance: Python's isinstance, extended to ``List[int]``-style containers."""
    import typing

    origin = typing.get_origin(target_type)
    if origin is None:
        return _builtin_isinstance(obj, target_type)
    args = typing.get_args(target_type)
    if origin is typing.Union:
        return any(isinstance(obj, a) for a in args)
    if not _builtin_isinstance(obj, origin):
        return False
    if origin in (list, set, frozenset) and args:
        return all(isinstance(v, args[0]) for v in obj)
    if origin is tuple and args:
        if len(args) == 2 and args[1] is Ellipsis:
            return all(isinstance(v, args[0]) for v in obj)
        return len(obj) == len(args) and all(isinstance(v, a) for v, a in zip(obj, args))
    if origin is dict and args:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    return True


class Attribute:
    """torch.jit.Attribute(value, type): evaluates to ``value`` in ember."""

    def __new__(cls, value: Any, type: Any = None) -> Any:
        return value


class _Future:
    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        return self._value


def fork(func: Callable, *args: Any, **kwargs: Any) -> _Future:
    """torch.jit.fork: runs ``func`` now and returns a future holding its result."""
    return _Future(func(*args, **kwargs))


def wait(future: _Future) -> Any:
    """torch.jit.wait: the result of a :func:`fork`."""
    return future.wait()


def freeze(mod: _T, preserved_attrs: Any = None, optimize_numerics: bool = True) -> _T:
    """torch.jit.freeze: returns ``mod`` unchanged."""
    return mod


def optimize_for_inference(mod: _T, other_methods: Any = None) -> _T:
    """torch.jit.optimize_for_inference: returns ``mod`` unchanged."""
    return mod


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """Context manager toggling TorchScript optimisation: nothing to toggle in ember."""
    yield


_ONEDNN = [False]


def enable_onednn_fusion(enabled: bool) -> None:
    """Accepted for compatibility: ember fuses nothing through oneDNN."""
    _ONEDNN[0] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """The flag set by :func:`enable_onednn_fusion`."""
    return _ONEDNN[0]


def _no_archive(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.jit.{what}: ember has no TorchScript, so it cannot {what} a TorchScript archive; "
        "save and load the model's state_dict with ember.save / ember.load instead"
    )


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Raises NotImplementedError: there is no TorchScript archive; use :func:`ember.save` on a
    ``state_dict``."""
    raise _no_archive("save")


def load(f: Any, map_location: Any = None, _extra_files: Any = None, _restore_shapes: bool = False):
    """Raises NotImplementedError: there is no TorchScript archive; use :func:`ember.load`."""
    raise _no_archive("load")
