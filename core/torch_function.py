"""The ``__torch_function__`` protocol: how a call reaches a Tensor subclass or tensor-like.

A registry op's public function (core/registry.py) treats a plain ``Tensor`` as before, at no
extra cost. A Tensor subclass whose ``__torch_function__`` is ``_disabled_torch_function_impl``
(nn.Parameter, ember's sparse, quantized and causal-bias tensors) joins ``PLAIN`` when its class
is created and is computed like a Tensor (one set lookup per input); any other subclass, and a
non-Tensor object defining ``__torch_function__`` (met where the op would refuse its input),
takes the call through :func:`overloaded_call`. ``Tensor.__torch_function__`` (the default)
runs the op with dispatch off and views Tensor results as the subclass.

Tensor methods written in Python (``__getitem__``, ``detach``, ``reshape``, ``to``, ``new_*``
...: ``_METHODS``) are given a dispatching wrapper on each dispatching subclass when it is
created, so plain Tensors keep calling them directly. Private registry ops behind a public
function (``_cat`` behind ``cat``) are dispatched as that function (``_PUBLIC_OF``).

``OFF[0]`` is set inside ``DisableTorchFunctionSubclass`` / ``DisableTorchFunction`` (and during
backward: derivative formulas see plain Tensors, as torch's): subclasses are then computed as
plain Tensors and tensor-likes are refused, as in torch.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from .tensor import Tensor

# Tensor subclasses that never dispatch (their __torch_function__ is the disabled impl)
PLAIN: set[type] = set()
# [True] while torch function handling is disabled (DisableTorchFunction*)
OFF = [False]
# overloaded_call's answer when no argument overloads the call (the op's own error follows)
NOT_OVERLOADED = object()


def _disabled_torch_function_impl(func: Callable, types: Any, args: Any = (), kwargs=None) -> Any:
    """The ``__torch_function__`` of a type whose calls are never dispatched (``nn.Parameter``):
    ``func`` runs as on plain Tensors and its results stay plain."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


class DisableTorchFunctionSubclass:
    """Context manager: Tensor subclasses' ``__torch_function__`` is not consulted inside (they
    are computed as plain Tensors, results are plain), nor that of other tensor-likes."""

    __slots__ = ("_prev",)

    def __enter__(self) -> None:
        self._prev = OFF[0]
        OFF[0] = True

    def __exit__(self, *exc: object) -> None:
        OFF[0] = self._prev


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """Context manager: no ``__torch_function__`` is consulted inside (ember has no torch
    function modes, so this is :class:`DisableTorchFunctionSubclass`)."""

    __slots__ = ()


def _convert(ret: Any, cls: type) -> Any:
    """``ret`` with its plain Tensors (also inside tuples and lists) viewed as ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor):
        return ret if isinstance(ret, cls) else ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        tp = type(ret)
        make = getattr(tp, "_make", None)  # a named tuple (ember.return_types) takes fields
        return make(items) if make is not None else tp(items)
    return ret


def tensor_torch_function(cls: type, func: Callable, types: Any, args: Any = (), kwargs=None):
    """``Tensor.__torch_function__``: run ``func`` with subclass dispatch off and return its
    Tensor results as instances of ``cls``; NotImplemented when some overloading type is not a
    base of ``cls`` (that type gets its turn)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        return _convert(func(*args, **kwargs), cls)


tensor_torch_function.__name__ = tensor_torch_function.__qualname__ = "__torch_function__"


def _relevant(args: tuple, kw: dict) -> list:
    """The arguments that may overload a call: each positional and keyword value, and the
    items of a list or tuple among them (cat's tensors)."""
    out = []
    for a in (*args, *kw.values()):
        if isinstance(a, (list, tuple)):
            out.extend(a)
        else:
            out.append(a)
    return out


# private registry ops behind a public Python function whose leading positional parameters are
# the op's arguments in order: __torch_function__ is handed the public function (torch.cat, not
# ember's _cat), so HANDLED_FUNCTIONS tables and logs see torch's names
_PUBLIC_OF = {
    "_cast": ("ember", "Tensor.to"),  # (input, dtype): .float(), .double(), type_as ...
    "_cat": ("ember", "cat"),
    "_stack": ("ember", "stack"),
    "_where": ("ember", "where"),
    "_pow_tensor": ("ember", "pow"),
    "_pow_scalar": ("ember", "pow"),
    "_clamp": ("ember", "clamp"),
    "_clamp_lo": ("ember", "clamp"),
    "_fill": ("ember", "fill"),
    "_conj": ("ember", "conj"),
    "_real": ("ember", "real"),
    "_exp": ("ember", "exp"),
    "_masked_scatter": ("ember", "masked_scatter"),
    "_cholesky_solve": ("ember", "cholesky_solve"),
    "_ormqr": ("ember", "ormqr"),
    "_embedding": ("ember", "embedding"),
    "_gelu": ("ember.nn.functional", "gelu"),
    "_silu": ("ember.nn.functional", "silu"),
    "_leaky_relu": ("ember.nn.functional", "leaky_relu"),
    "_hardtanh": ("ember.nn.functional", "hardtanh"),
    "_softshrink": ("ember.nn.functional", "softshrink"),
    "_softplus": ("ember.nn.functional", "softplus"),
    "_hardsigmoid": ("ember.nn.functional", "hardsigmoid"),
    "_hardswish": ("ember.nn.functional", "hardswish"),
    "_avg_pool2d": ("ember.nn.functional", "avg_pool2d"),
    "_avg_pool3d": ("ember.nn.functional", "avg_pool3d"),
    "_adaptive_avg_pool2d": ("ember.nn.functional", "adaptive_avg_pool2d"),
    "_adaptive_avg_pool3d": ("ember.nn.functional", "adaptive_avg_pool3d"),
}


def _public_of(func: Callable) -> Callable:
    """The public function a private registry op ``func`` stands for (``_PUBLIC_OF``)."""
    where = _PUBLIC_OF.get(getattr(func, "__name__", ""))
    if where is None:
        return func
    obj = sys.modules[where[0]]
    for attr in where[1].split("."):
        obj = getattr(obj, attr)
    return obj


def overloaded_call(
    func: Callable, rerun: Callable, args: tuple, kw: dict, out: Any, dunder: bool = False
) -> Any:
    """The call ``func(*args, **kw, out=out)`` handed to the ``__torch_function__`` of its
    overloaded arguments, or ``NOT_OVERLOADED`` when none is. When every handler answers
    NotImplemented an operator dunder answers NotImplemented too (Python tries the other
    operand), anything else raises torch's TypeError.

    A Tensor subclass met for the first time whose ``__torch_function__`` is the disabled impl
    joins ``PLAIN``, and the op runs again through ``rerun`` (its public function), which now
    computes it as a Tensor.
    """
    from ..overrides import _dispatch, _overloaded_args

    if out is not None:
        kw = {**kw, "out": out}
    relevant = _relevant(args, kw)
    fresh = False
    for a in relevant:
        tp = type(a)
        if (
            tp is not Tensor
            and isinstance(a, Tensor)
            and tp not in PLAIN
            and getattr(tp, "__torch_function__", None) is _disabled_torch_function_impl
        ):
            PLAIN.add(tp)
            fresh = True
    if fresh:
        return rerun(*args, **kw)
    overloaded = _overloaded_args(relevant)
    if not overloaded:
        return NOT_OVERLOADED
    func = _public_of(func)
    r = _dispatch(func, overloaded, args, kw or None)  # torch hands None for no kwargs
    if r is not NotImplemented or dunder:
        return r
    raise _dispatch_failed(func, overloaded)


def dispatches_on_input(func: Callable) -> Callable:
    """A Python-level public function torch dispatches on its ``input`` (the ``*_like``
    factories): a dispatching subclass or tensor-like takes the call through its
    ``__torch_function__`` (so ``zeros_like(sub)`` is a ``sub``'s type); a plain Tensor pays one
    type check."""

    @functools.wraps(func)
    def call(input, *args, **kwargs):
        tp = type(input)
        if (
            tp is not Tensor
            and tp not in PLAIN
            and not OFF[0]
            and hasattr(tp, "__torch_function__")
        ):
            r = overloaded_call(call, call, (input, *args), kwargs, None)
            if r is not NOT_OVERLOADED:
                return r
        return func(input, *args, **kwargs)

    return call


def _dispatch_failed(func: Callable, overloaded: list) -> TypeError:
    """torch's error when every ``__torch_function__`` of ``overloaded`` declined ``func``."""
    from ..overrides import resolve_name

    lines = "".join(f"  - tensor subclass {type(a)}\n" for a in overloaded)
    name = resolve_name(func) or func.__name__
    return TypeError(
        f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned "
        f"NotImplemented:\n\n{lines}\nFor more information, try re-running with "
        "TORCH_LOGS=not_implemented"
    )


# Tensor methods written in Python (not registry ops) that torch dispatches: a subclass that
# dispatches gets a wrapper of each at class creation (Tensor.__init_subclass__), so plain
# Tensors and Parameters call the methods themselves, at no extra cost
_METHODS = (
    "__getitem__", "__setitem__", "detach", "reshape", "reshape_as", "view_as", "expand_as",
    "flatten", "unflatten", "contiguous", "float", "double", "half", "int", "long", "bool",
    "type_as", "cpu", "cuda", "to", "new_zeros", "new_ones", "new_empty", "new_full",
    "new_tensor", "tolist", "item", "zero_", "fill_", "copy_", "requires_grad_", "__repr__",
    "__str__", "__format__",
)  # fmt: skip
_WRAPPERS: dict[str, Callable] = {}
# the keyword arguments torch's Python-level methods hand __torch_function__ (its C++ methods
# hand None when there are none)
_PY_KWARGS = {"__repr__": {"tensor_contents": None}, "__str__": {"tensor_contents": None}}
_PY_KWARGS["__format__"] = {}


def _method_wrapper(name: str) -> Callable:
    """Tensor's method ``name`` dispatched through ``__torch_function__`` (one per name)."""
    base = getattr(Tensor, name)  # (__str__ is __repr__, as torch dispatches it)
    py_kwargs = _PY_KWARGS.get(name)

    def method(self, *args, **kwargs):
        if OFF[0]:
            return base(self, *args, **kwargs)
        from ..overrides import _dispatch, _overloaded_args

        call = (self, *args)
        overloaded = _overloaded_args(_relevant(call, kwargs))
        if not overloaded:
            return base(self, *args, **kwargs)
        kw = kwargs or None if py_kwargs is None else {**py_kwargs, **kwargs}
        r = _dispatch(base, overloaded, call, kw)
        if r is NotImplemented:
            raise _dispatch_failed(base, overloaded)
        return r

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = base.__doc__
    return method


def _init_subclass(cls: type, **kwargs: Any) -> None:
    """A new Tensor subclass that never dispatches joins ``PLAIN``; one that dispatches gets the
    ``_METHODS`` wrappers it does not define itself (nor inherit from a class between it and
    Tensor)."""
    super(Tensor, cls).__init_subclass__(**kwargs)
    if getattr(cls, "__torch_function__", None) is _disabled_torch_function_impl:
        PLAIN.add(cls)  # its ops are computed as a Tensor's from the first call
        return
    own = cls.__mro__[: cls.__mro__.index(Tensor)]
    for name in _METHODS:
        if any(name in k.__dict__ for k in own):
            continue
        w = _WRAPPERS.get(name)
        if w is None:
            w = _WRAPPERS[name] = _method_wrapper(name)
        setattr(cls, name, w)


Tensor.__torch_function__ = classmethod(tensor_torch_function)
Tensor.__init_subclass__ = classmethod(_init_subclass)
