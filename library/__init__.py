"""torch.library: custom operators in Python, and the ``torch.ops`` namespace (``ember.ops``).

``custom_op("mylib::op", mutates_args=())`` turns an annotated Python function into an operator
with a schema (``infer_schema``), reachable as ``ember.ops.mylib.op``, with optional fake, autograd,
per-device and autocast registrations, and checked by ``opcheck``. ``Library(ns, kind)`` with
``define``/``impl`` is the older, schema-string API. ``ember.ops.aten.<name>`` resolves to ember's
own function of that name (every overload attribute is that same function).

ember runs everything eagerly on real tensors: a "fake" implementation is only ever called by
``opcheck`` (on the real inputs) to compare its output's metadata with the real one.

Names: a custom op's outputs are what its function returns, except that an unnamed output with
the shape of a named tensor input takes that input's names (the generic rule of ember's named
tensors: an op that keeps the shape keeps the names), so a kernel that goes through numpy keeps
``x.names``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence

from ..core import dtype as _dt
from ..core.device import device as _device
from ._opcheck import OpCheckError, opcheck
from ._operators import (
    _DEF_LIBS,
    _DISPATCH_KEYS,
    _KINDS,
    _REGISTRY,
    CustomOpDef,
    FakeImplCtx,
    OpOverload,
    OpOverloadPacket,
    Tag,
    _device_keys,
    _find,
    _no_attribute,
    _no_operator,
    _OpDef,
    _parse_qualname,
    _register,
    _site,
    get_ctx,
)
from ._ops import ops
from ._schema import FunctionSchema, _parse_schema, _schema_of, infer_schema

__all__ = [
    "CustomOpDef",
    "Library",
    "OpCheckError",
    "Tag",
    "custom_op",
    "define",
    "get_ctx",
    "impl",
    "infer_schema",
    "opcheck",
    "ops",
    "register_autocast",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "register_vmap",
]


# ----------------------------------------------------------------------------- public API
def custom_op(
    name: str,
    fn: Callable | None = None,
    /,
    *,
    mutates_args: str | Iterable[str],
    device_types: str | Sequence[str] | None = None,
    schema: str | None = None,
    tags=None,
):
    """Wrap ``fn`` (type-annotated) into the custom operator ``name`` ("namespace::name").

    ``mutates_args``: the names of the Tensor arguments ``fn`` writes to (their version counters
    are bumped after each call), or ``"unknown"``. ``device_types``: the devices ``fn`` is the
    kernel of (None: all). ``schema``: given explicitly instead of inferred from annotations.
    The op is reachable as ``ember.ops.<namespace>.<name>``; defining a name again replaces it.
    Outputs must not alias inputs. Without :meth:`CustomOpDef.register_autograd`, backward
    through an output raises an error. Names: see the module docstring.
    """

    def inner(fn: Callable) -> CustomOpDef:
        s = _schema_of(fn, mutates_args) if schema is None else _parse_schema(schema)
        ns, opname = _parse_qualname(name)
        op = CustomOpDef(ns, opname, s, fn.__name__)
        for key in _device_keys(device_types):
            op._kernels[key] = fn
        _register(op, replace=True)
        return op

    return inner if fn is None else inner(fn)


def register_fake(
    op, func: Callable | None = None, /, *, lib=None, _stacklevel: int = 1, allow_override=True
):
    """Register the fake implementation of ``op`` (a custom op or its "namespace::name")."""
    target = _find(op, _no_operator)
    return target.register_fake if func is None else target.register_fake(func)


def register_autograd(
    op, backward: Callable, /, *, setup_context: Callable | None = None, lib=None
) -> None:
    """Register ``backward``/``setup_context`` for ``op`` (see CustomOpDef.register_autograd)."""
    _find(op, _no_attribute).register_autograd(backward, setup_context=setup_context)


def register_kernel(
    op, device_types: str | Sequence[str] | None, func: Callable | None = None, /, *, lib=None
):
    """Register ``func`` as the kernel of ``op`` for ``device_types`` (None: every device)."""
    return _find(op, _no_operator).register_kernel(device_types, func)


def register_autocast(op, device_type: str, cast_inputs: _dt.dtype, /, *, lib=None) -> None:
    """Under autocast on ``device_type``, ``op`` casts its floating inputs to ``cast_inputs``."""
    _find(op, _no_operator).register_autocast(device_type, cast_inputs)


def register_vmap(op, func: Callable | None = None, /, *, lib=None):
    """Accepted and stored: ember's vmap calls the op once per batch element."""
    return _find(op, _no_operator).register_vmap(func)


class Library:
    """torch.library.Library: define operators from schema strings (``kind="DEF"`` or
    ``"FRAGMENT"``) and give them implementations (``impl``). Its ops run their kernel under
    autograd (gradients flow through the ember ops it uses) unless ``register_autograd`` gives
    them a formula. Definitions last as long as the Library object."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF":
            if ns in _DEF_LIBS:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If "
                    "you were trying to specify implementations, consider using "
                    "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to "
                    "define operators for a single namespace in a distributed way, you can use "
                    "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous registration "
                    f"of TORCH_LIBRARY was registered at {_DEF_LIBS[ns]}; latest registration "
                    f"was registered at {_site()}"
                )
            _DEF_LIBS[ns] = _site()
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined: list[_OpDef] = []
        weakref.finalize(self, _destroy, ns, kind, self._defined)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define an operator of this namespace from ``"name(Tensor x) -> Tensor"``; returns
        its name."""
        s = _parse_schema(schema)
        name = s.name + (f".{s.overload_name}" if s.overload_name else "")
        _parse_qualname(f"{self.ns}::{name}")
        op = _OpDef(self.ns, name, s, name)
        op._composite = True
        _register(op, replace=False)
        self._defined.append(op)
        return name.partition(".")[0]

    def impl(self, op_name, fn: Callable, dispatch_key: str = "", *, with_keyset=False,
             allow_override=True) -> None:  # fmt: skip
        """Give operator ``op_name`` (of this namespace) the kernel ``fn`` for ``dispatch_key``
        ("CPU", "CUDA", "Meta": the fake, "CompositeImplicitAutograd" or "": every device)."""
        key = dispatch_key or self.dispatch_key
        if key not in _DISPATCH_KEYS:
            raise RuntimeError(f"could not parse dispatch key: {key}")
        q = op_name if not isinstance(op_name, str) else f"{self.ns}::{op_name}"
        _impl(_find(q, _no_operator), _DISPATCH_KEYS[key], fn)


def _destroy(ns: str, kind: str, defined: list) -> None:
    if kind == "DEF":
        _DEF_LIBS.pop(ns, None)
    for op in defined:
        base, _, overload = op._name.partition(".")
        overloads = _REGISTRY.get((ns, base), {})
        if overloads.get(overload or "default") is op:
            del overloads[overload or "default"]


def _impl(op: _OpDef, device_type: str | None, fn: Callable) -> None:
    if device_type == "meta":
        op._fake = fn
    else:
        op._kernels[device_type] = fn


def define(qualname: str, schema: str, *, lib=None, tags=()) -> None:
    """Define the operator ``qualname`` ("namespace::name") from ``schema``
    (``"(Tensor x) -> Tensor"``)."""
    ns, name = _parse_qualname(qualname)
    s = _parse_schema(schema, name)
    op = _OpDef(ns, name, s, name)
    op._composite = True
    _register(op, replace=False)


def impl(qualname: str, types: str | Sequence[str], func: Callable | None = None, *, lib=None):
    """Register ``func`` as the kernel of ``qualname`` for device ``types`` ("cpu", "cuda", or
    a dispatch key such as "CompositeImplicitAutograd")."""
    op = _find(qualname, _no_operator)
    keys = [types] if isinstance(types, str) else list(types)

    def inner(fn):
        for k in keys:
            _impl(op, _DISPATCH_KEYS[k] if k in _DISPATCH_KEYS else _device(k).type, fn)
        return fn

    if func is None:
        return inner
    inner(func)
    return None
