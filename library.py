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

import contextlib
import enum
import importlib
import importlib.machinery
import inspect
import sys
import types as _pytypes
import typing
import weakref
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from .autograd.function import Function
from .autograd.grad_mode import _state
from .core import dtype as _dt
from .core.device import device as _device
from .core.tensor import Tensor

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

_NO_DEFAULT = inspect.Parameter.empty


# ----------------------------------------------------------------------------- schemas
class _Arg:
    """One argument of a schema: ``Tensor(a0!)? name=default``."""

    __slots__ = ("alias", "default", "kwarg_only", "name", "type")

    def __init__(self, name, type_, default=_NO_DEFAULT, kwarg_only=False, alias=None):
        self.name = name
        self.type = type_  # "Tensor", "SymInt[]", "Tensor?", ...
        self.default = default
        self.kwarg_only = kwarg_only
        self.alias = alias  # "a0!" for a mutated tensor

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.endswith("!")

    def format(self, python_defaults: bool) -> str:
        t = self.type
        if self.alias is not None:
            base = t.rstrip("?[]")
            t = f"{base}({self.alias}){t[len(base) :]}"
        s = f"{t} {self.name}"
        if self.default is not _NO_DEFAULT:
            s += "=" + _format_default(self.default, python_defaults)
        return s


def _format_default(value, python_defaults: bool) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, _dt.dtype):
        return repr(value).rpartition(".")[2]
    if isinstance(value, _device):
        return f'"{value}"'
    if isinstance(value, float) and not python_defaults and value.is_integer():
        return f"{int(value)}."  # the C++ printer of a declaration writes 2.0 as "2."
    return str(value)


class FunctionSchema:
    """An operator's signature: ``ns::name.overload(Tensor x, *, float s=1.) -> Tensor``."""

    def __init__(self, name: str, overload_name: str, arguments: list, returns: list) -> None:
        self.name = name
        self.overload_name = overload_name
        self.arguments = arguments
        self.returns = returns  # type strings ("Tensor", "SymInt", "Tensor[]", ...)

    def _format(self, python_defaults: bool) -> str:
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(a.format(python_defaults))
        rets = self.returns
        ret = rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
        head = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return f"{head}({', '.join(parts)}) -> {ret}"

    def __str__(self) -> str:
        return self._format(python_defaults=False)

    __repr__ = __str__


_SCALAR_TYPES = {int: "SymInt", float: "float", bool: "bool"}


def _ember_types() -> dict:
    """Annotation -> schema type of every supported parameter annotation (torch's table)."""
    T = Tensor
    opt = typing.Optional
    table = {T: "Tensor", opt[T]: "Tensor?"}
    seqs = (typing.Sequence, typing.List, Sequence, list)  # noqa: UP006 - all are accepted
    for s in seqs:
        table[s[T]] = "Tensor[]"
    for s in seqs:
        table[s[opt[T]]] = "Tensor?[]"
    scalar = int | float | bool
    for py, name in _SCALAR_TYPES.items():
        table[py] = name
        table[opt[py]] = name + "?"
        for s in seqs:
            table[s[py]] = name + "[]"
        for s in seqs:
            table[opt[s[py]]] = name + "[]?"
    table[str] = "str"
    table[opt[str]] = "str?"
    table[scalar] = "Scalar"
    table[opt[scalar]] = "Scalar?"
    for s in seqs:
        table[s[scalar]] = "Scalar[]"
    table[_dt.dtype] = "ScalarType"
    table[opt[_dt.dtype]] = "ScalarType?"
    table[_device] = "Device"
    table[opt[_device]] = "Device?"
    return table


_PARAM_TYPES = _ember_types()
_RETURN_TYPES = {
    Tensor: "Tensor",
    typing.List[Tensor]: "Tensor[]",  # noqa: UP006 - both spellings are accepted
    list[Tensor]: "Tensor[]",
    int: "SymInt",
    float: "float",
    bool: "bool",
    int | float | bool: "Scalar",
}


def _public(text: str) -> str:
    # types print with their defining module: show ember's public spellings
    return (
        text.replace("ember.core.tensor.Tensor", "ember.Tensor")
        .replace("ember.core.dtype.dtype", "ember.dtype")
        .replace("ember.core.device.device", "ember.device")
    )


def _resolve(annotation, fn, fail):
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, fn.__globals__)  # what typing.get_type_hints does
    except Exception as e:  # noqa: BLE001 - reported as torch does
        fail(
            f"Unsupported type annotation {annotation}. It is not a type. ({e}). If you are "
            "using 'from __future__ import annotations', note that annotations are evaluated "
            "lazily as strings; make sure all types referenced in annotations are importable "
            "at module scope, not only inside a local function."
        )


def _schema_of(fn: Callable, mutates_args, op_name: str | None = None) -> FunctionSchema:
    """The schema of an annotated function (infer_schema's work, as an object)."""
    sig = inspect.signature(fn)

    def fail(what: str):
        raise ValueError(_public(f"infer_schema(func): {what} Got func with signature {sig})"))

    if mutates_args != "unknown":
        if isinstance(mutates_args, str) or not isinstance(mutates_args, Iterable):
            raise ValueError(
                "mutates_args must either be a sequence of the names of the arguments that are "
                "mutated or the string 'unknown'. "
            )
        mutates_args = set(mutates_args)
    arguments, seen = [], set()
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            fail("We do not support positional-only args, varargs, or varkwargs.")
        if p.annotation is p.empty:
            fail(f"Parameter {name} must have a type annotation.")
        ann = _resolve(p.annotation, fn, fail)
        type_ = _PARAM_TYPES.get(ann)
        if type_ is None:
            fail(
                f"Parameter {name} has unsupported type {ann}. The valid types are: "
                f"{_PARAM_TYPES.keys()}."
            )
        default = p.default
        if default is not p.empty and not (
            default is None or isinstance(default, (int, float, str, _dt.dtype, _device))
        ):
            fail(
                f"Parameter {name} has an unsupported default value type {type(default)}. "
                "Please file an issue on GitHub so we can prioritize this."
            )
        alias = None
        if mutates_args == "unknown" and type_.startswith("Tensor"):
            alias = f"a{idx}!"
        elif mutates_args != "unknown" and name in mutates_args:
            if not type_.startswith("Tensor"):
                fail(
                    f"Parameter {name} is in mutable_args but only Tensors or collections of "
                    "Tensors can be mutated"
                )
            alias = f"a{idx}!"
        seen.add(name)
        arguments.append(_Arg(name, type_, default, p.kind == p.KEYWORD_ONLY, alias))
    if mutates_args != "unknown" and mutates_args - seen:
        fail(
            f"{mutates_args - seen} in mutates_args were not found in the custom op's "
            "signature. mutates_args should contain the names of all args that the custom op "
            "mutates, or just the string 'unknown' if you don't know."
        )
    ret = sig.return_annotation
    if ret is sig.empty:
        fail("No return type annotation was provided. Please add one.")
    ret = _resolve(ret, fn, fail)
    if ret is None or ret is type(None):
        returns = []
    elif typing.get_origin(ret) is tuple:
        items = typing.get_args(ret)
        if items == ((),):  # tuple[()]
            items = ()
        returns = [_RETURN_TYPES.get(t) for t in items]
        if None in returns:
            fail(f"Return has unsupported type {ret}. The valid types are: {_RETURN_TYPES}.")
    else:
        r = _RETURN_TYPES.get(ret)
        if r is None:
            fail(f"Return has unsupported type {ret}. The valid types are: {_RETURN_TYPES}.")
        returns = [r]
    name, _, overload = (op_name or "").partition(".")
    return FunctionSchema(name, overload, arguments, returns)


def infer_schema(
    prototype_function: Callable, /, *, mutates_args, op_name: str | None = None
) -> str:
    """The schema string of a type-annotated function, e.g. ``"(Tensor x, SymInt n) -> Tensor"``.

    ``mutates_args``: the names of the Tensor arguments the function writes to (``Tensor(a0!)``),
    or ``"unknown"`` (every Tensor argument). ``op_name`` prefixes the schema with a name.
    """
    return _schema_of(prototype_function, mutates_args, op_name)._format(python_defaults=True)


def _parse_default(text: str):
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text[:1] in "\"'":
        return text[1:-1]
    if text.startswith("["):
        return [_parse_default(t.strip()) for t in text[1:-1].split(",") if t.strip()]
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    dt = getattr(_dt, text, None)
    return dt if isinstance(dt, _dt.dtype) else text


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _parse_type(text: str) -> tuple[str, str | None]:
    """``Tensor(a!)?`` -> ("Tensor?", "a!")."""
    if "(" in text:
        base, _, rest = text.partition("(")
        alias, _, suffix = rest.partition(")")
        return base + suffix, alias
    return text, None


def _parse_schema(schema: str, name: str = "") -> FunctionSchema:
    """A schema string (``"(Tensor x) -> Tensor"``, with or without a leading name)."""
    head, sep, ret = schema.partition("->")
    head = head.strip()
    lp = head.find("(")
    if not sep or lp < 0 or not head.endswith(")"):
        raise RuntimeError(f"could not parse the operator schema: {schema}")
    declared = head[:lp].strip()
    full, _, overload = (declared or name).partition(".")
    arguments, kwarg_only = [], False
    for part in _split_top(head[lp + 1 : -1]):
        if part == "*":
            kwarg_only = True
            continue
        decl, eq, default = part.partition("=")
        bits = decl.split()
        if len(bits) != 2:
            raise RuntimeError(f"could not parse the operator schema: {schema}")
        type_, alias = _parse_type(bits[0])
        dflt = _parse_default(default.strip()) if eq else _NO_DEFAULT
        arguments.append(_Arg(bits[1], type_, dflt, kwarg_only, alias))
    ret = ret.strip()
    if ret.startswith("(") and ret.endswith(")"):
        returns = _split_top(ret[1:-1])
    else:
        returns = [ret]
    returns = [r.split()[0] for r in returns]  # drop return names
    return FunctionSchema(full, overload, arguments, returns)


# ----------------------------------------------------------------------------- operators
def _parse_qualname(qualname: str) -> tuple[str, str]:
    ns, name = qualname.split("::")  # torch's own unpacking errors for a malformed name
    for part in (ns, name):
        if not part.replace("_", "a").replace(".", "a").isalnum() or part[0].isdigit():
            raise RuntimeError(f"expected a valid identifier in the operator name: {qualname}")
    return ns, name


def _qualname_of(op) -> str:
    if isinstance(op, str):
        if "::" not in op:
            raise ValueError(
                f'Expected `qualname` to be of the form "namespace::name", but got {op}. The '
                "qualname passed to the ember.library APIs must consist of a namespace and a "
                "name, e.g. aten::sin"
            )
        return op
    if isinstance(op, (_OpDef, OpOverload, OpOverloadPacket)):
        return op._qualname
    raise TypeError(f"expected an operator or its 'namespace::name', got {type(op).__name__}")


def _tensors_in(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            if isinstance(v, Tensor):
                yield v


def _root(arr):
    while getattr(arr, "base", None) is not None:
        arr = arr.base
    return arr


_DISPATCH_KEYS = {
    "CPU": "cpu",
    "CUDA": "cuda",
    "Meta": "meta",
    "": None,
    "CompositeImplicitAutograd": None,
    "CompositeExplicitAutograd": None,
    "Autograd": None,
    "AutogradCPU": "cpu",
    "AutogradCUDA": "cuda",
}


class _OpDef:
    """The registry entry of one operator overload: schema, kernels and registrations."""

    def __init__(self, ns: str, name: str, schema: FunctionSchema, fn_name: str) -> None:
        self._namespace = ns
        self._name = name
        self._qualname = f"{ns}::{name}"
        base, _, overload = name.partition(".")
        schema.name, schema.overload_name = f"{ns}::{base}", overload
        self._schema = schema
        self._fn_name = fn_name
        self._kernels: dict = {}  # device type (None: every device) -> kernel
        self._overrides: dict = {}  # register_kernel's kernels, same keys
        self._disabled: set = set()
        self._fake = None
        self._backward = None
        self._setup_context = None
        self._autocast: dict = {}
        self._vmap = None
        self._composite = False  # Library ops: the kernel runs under autograd (no Function)
        self._positional = [a.name for a in schema.arguments if not a.kwarg_only]
        self._autograd_fn = type(
            f"GeneratedBackwardFor_{ns}_{base}_{overload or 'default'}",
            (_GeneratedFunction,),
            {},
        )
        self._opoverload = OpOverload(ns, base, overload or "default", self, self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}({self._qualname})>"

    # ---- argument binding (torch's messages)
    def _bind(self, args: tuple, kwargs: dict) -> list:
        s = self._schema
        params = s.arguments
        n = len(args) + len(kwargs)
        if n > len(params):
            raise RuntimeError(
                f"{s.name}() expected at most {len(params)} argument(s) but received {n} "
                f"argument(s). Declaration: {s}"
            )
        npos = len(self._positional)
        if len(args) > npos:
            raise RuntimeError(
                f"{s.name}() takes {npos} positional argument(s) but {len(args)} was/were "
                f"given.  Declaration: {s}"
            )
        values, used = [], 0
        for i, a in enumerate(params):
            if i < len(args):
                v = args[i]
            elif a.name in kwargs:
                v = kwargs[a.name]
                used += 1
            elif a.default is not _NO_DEFAULT:
                v = a.default
            else:
                raise RuntimeError(
                    f"{s.name}() is missing value for argument '{a.name}'. Declaration: {s}"
                )
            _check_type(s, i, a, v)
            values.append(v)
        if used != len(kwargs):
            extra = next(k for k in kwargs if k not in {a.name for a in params})
            raise RuntimeError(
                f"Unknown keyword argument '{extra}' for operator '{s.name}'. Schema: {s}"
            )
        return values

    def _split(self, values: list) -> tuple[tuple, dict]:
        npos = len(self._positional)
        names = [a.name for a in self._schema.arguments[npos:]]
        return tuple(values[:npos]), dict(zip(names, values[npos:]))

    # ---- calling
    def _kernel(self, values: list):
        dev = next((t.device.type for v in values for t in _tensors_in(v)), "cpu")
        for table, key in ((self._overrides, dev), (self._overrides, None)):
            if key in table and key not in self._disabled:
                return table[key]
        for key in (dev, None):
            if key in self._kernels:
                return self._kernels[key]
        raise NotImplementedError(
            f"Could not run '{self._schema.name}' with arguments from the '{dev.upper()}' "
            "backend. This could be because the operator doesn't exist for this backend, or was "
            "omitted during the selective/custom build process (if using custom build)."
        )

    def _run(self, kernel, values: list):
        """Run ``kernel`` on bound arguments: aliasing check, version bumps, names."""
        args, kwargs = self._split(values)
        out = kernel(*args, **kwargs)
        if self._composite:
            return out
        outs = list(_tensors_in(out))
        if outs:
            ins = [t for v in values for t in _tensors_in(v)]
            roots = {id(_root(t._data)) for t in ins}
            seen = set()
            for t in outs:
                r = id(_root(t._data))
                if r in roots or r in seen:
                    mod = sys.modules[__name__]
                    raise RuntimeError(
                        f"{self._fn_name} (with implementation in {mod}): The output of this "
                        "custom operator (1) must not also be an input to this custom operator "
                        "and (2) may not alias any inputs to this custom operator or other "
                        "returns. The most common way to trigger this error is if we have y = "
                        "custom_op(x) and y and x are the same Tensor. Please instead return a "
                        "clone of the offending output tensor(s) (e.g. return x.clone()) or "
                        "refactor the custom operator to not return y."
                    )
                seen.add(r)
            named = [t for t in ins if t._names is not None]
            for t in outs if named else ():
                if t._names is None:
                    like = next((i for i in named if i._data.shape == t._data.shape), None)
                    if like is not None:
                        t._names = like._names
        for a, v in zip(self._schema.arguments, values):
            if a.is_write:  # torch bumps every declared-mutated input once per call
                for t in _tensors_in(v):
                    t._ver[0] += 1
        return out

    def __call__(self, *args, **kwargs):
        values = self._bind(args, kwargs)
        kernel = self._kernel(values)
        if self._autocast:
            from .amp.autocast_mode import _cast, is_autocast_enabled

            dev = next((t.device.type for v in values for t in _tensors_in(v)), "cpu")
            dtype = self._autocast.get(dev)
            if dtype is not None and is_autocast_enabled(dev):
                values = [_cast(v, dev, dtype) for v in values]
        if self._composite and self._backward is None:
            return kernel(*args, **kwargs)  # as given: torch fills no defaults for these
        grad = _state.enabled and any(t.requires_grad for v in values for t in _tensors_in(v))
        if not grad:
            return self._run(kernel, values)
        # list-of-tensor arguments are spread so that each tensor gets its gradient; keyword-only
        # arguments travel in the info object (backward returns gradients for positionals only)
        args, kwargs = self._split(values)
        flat, layout = [], []
        for v in args:
            if isinstance(v, (list, tuple)) and any(isinstance(t, Tensor) for t in v):
                flat.extend(v)
                layout.append(len(v))
            else:
                flat.append(v)
                layout.append(None)
        out = self._autograd_fn.apply(*flat, _CallInfo(self, kernel, layout, kwargs))
        return list(out) if self._schema.returns == ["Tensor[]"] else out

    # ---- registrations
    def register_fake(self, fn: Callable, /) -> Callable:
        """Register the op's fake (meta) implementation: given the inputs, return outputs of the
        right shape, dtype and device. ember runs ops eagerly; ``opcheck`` compares the two."""
        self._fake = fn
        return fn

    def register_autograd(
        self, backward: Callable, /, *, setup_context: Callable | None = None
    ) -> None:
        """Make the op differentiable: ``setup_context(ctx, inputs, output)`` saves what
        ``backward(ctx, *grads)`` needs; backward returns one gradient per positional input
        (None for non-tensors). Ops with keyword-only arguments also pass
        ``keyword_only_inputs`` (a dict) to ``setup_context``."""
        self._backward = backward
        self._setup_context = setup_context

    def register_kernel(
        self, device_types: str | Sequence[str] | None, fn: Callable | None = None, /
    ) -> Callable:
        """Register ``fn`` as the op's kernel for ``device_types`` (None: every device)."""

        def inner(fn):
            for key in _device_keys(device_types):
                self._overrides[key] = fn
            return fn

        return inner if fn is None else inner(fn)

    def register_autocast(self, device_type: str, cast_inputs: _dt.dtype) -> None:
        """Under autocast on ``device_type``, cast floating inputs to ``cast_inputs`` first."""
        self._autocast[_device_keys(device_type)[0]] = cast_inputs

    def register_vmap(self, func: Callable | None = None, /):
        """Accepted and stored: ember's vmap calls the op once per batch element anyway."""

        def inner(fn):
            self._vmap = fn
            return fn

        return inner if func is None else inner(func)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type: str, enabled: bool = True):
        """Within the block, enable or disable the kernel ``register_kernel`` gave
        ``device_type`` (a disabled one falls back to the op's own function)."""
        key = _device_keys(device_type)[0]
        was = key in self._disabled
        if enabled:
            self._disabled.discard(key)
        else:
            self._disabled.add(key)
        try:
            yield
        finally:
            if was:
                self._disabled.add(key)
            else:
                self._disabled.discard(key)


class Tag(enum.Enum):
    """torch.Tag: the operator tags ``custom_op(tags=...)`` and ``define(tags=...)`` accept (ember
    records them; no compiler reads them here)."""

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19


class CustomOpDef(_OpDef):
    """A custom operator made by :func:`custom_op`: call it like its function."""

    def __call__(self, *args, **kwargs):
        # like torch, a call goes to the operator now registered under the name (a later
        # custom_op of the same name replaces this one)
        return _OpDef.__call__(_lookup(self._qualname) or self, *args, **kwargs)


def _device_keys(device_types) -> list:
    if device_types is None:
        return [None]
    if isinstance(device_types, str):
        device_types = [device_types]
    return [_device(d).type for d in device_types]


def _check_type(s: FunctionSchema, i: int, a: _Arg, v) -> None:
    t = a.type
    if t == "Tensor" and not isinstance(v, Tensor):
        expected, detail = "Tensor", f"Unable to cast {v!r} to Tensor"
    elif t == "SymInt" and not isinstance(v, int):
        expected = "int"
        detail = (
            f"Unable to cast Python instance of type {type(v)} to C++ type '?' (#define "
            "PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)"
        )
    else:
        return
    raise RuntimeError(
        f"{s.name}() Expected a value of type '{expected}' for argument '{a.name}' but instead "
        f"found type '{type(v).__name__}'.\nPosition: {i}\nValue: {v!r}\nDeclaration: {s}\n"
        f"Cast error details: {detail}"
    )


class _CallInfo:
    """What one autograd call of an op carries besides its tensors (torch's "Metadata")."""

    __slots__ = ("kernel", "kwargs", "layout", "op")

    def __init__(self, op: _OpDef, kernel, layout: list, kwargs: dict) -> None:
        self.op = op
        self.kernel = kernel
        self.layout = layout  # per positional argument: None, or the length of a tensor list
        self.kwargs = kwargs


def _unflatten(flat, layout: list) -> list:
    values, i = [], 0
    for n in layout:
        if n is None:
            values.append(flat[i])
            i += 1
        else:
            values.append(list(flat[i : i + n]))
            i += n
    return values


class _GeneratedFunction(Function):
    """The autograd.Function behind a custom op (one subclass per op, named like torch's node:
    ``GeneratedBackwardFor_<ns>_<name>_default``)."""

    @staticmethod
    def forward(*args):
        info = args[-1]
        values = _unflatten(args[:-1], info.layout) + list(info.kwargs.values())
        out = info.op._run(info.kernel, values)
        return tuple(out) if isinstance(out, list) else out

    @staticmethod
    def setup_context(ctx, inputs, output):
        info = inputs[-1]
        ctx._ember_info = info
        op = info.op
        if op._setup_context is None:
            return
        args = tuple(_unflatten(inputs[:-1], info.layout))
        if op._schema.returns == ["Tensor[]"]:
            output = list(output)
        if info.kwargs:
            op._setup_context(ctx=ctx, inputs=args, output=output, keyword_only_inputs=info.kwargs)
        else:
            op._setup_context(ctx=ctx, inputs=args, output=output)

    @staticmethod
    def backward(ctx, *grads):
        info = ctx._ember_info
        op = info.op
        if op._backward is None:
            raise RuntimeError(
                f"Trying to backward through {op._namespace}.{op._name}.default but no autograd "
                "formula was registered. Please use register_autograd to add one."
            )
        res = op._backward(ctx, *grads)
        layout = info.layout
        if not isinstance(res, tuple) or (len(layout) == 1 and layout[0] is not None):
            res = (res,)
        if len(res) != len(layout):
            return (*res, None)  # Function reports the count, as torch does (info included)
        flat = []
        for g, n in zip(res, layout):
            if n is None:
                flat.append(g)
            else:
                flat.extend([None] * n if g is None else g)
        return (*flat, None)


# ----------------------------------------------------------------------------- the registry
_REGISTRY: dict[tuple[str, str], dict[str, _OpDef]] = {}
_DEF_LIBS: dict[str, str] = {}  # namespace -> where Library(ns, "DEF") was made


def _site() -> str:
    """``file:line`` of the user's call (the first frame outside this module)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"


def _register(op: _OpDef, *, replace: bool) -> None:
    base, _, overload = op._name.partition(".")
    overloads = _REGISTRY.setdefault((op._namespace, base), {})
    key = overload or "default"
    old = overloads.get(key)
    op._site = _site()
    if old is not None and not replace:
        raise RuntimeError(
            f"Tried to register an operator ({op._schema}) with the same name and overload "
            "name multiple times. Each overload's schema should only be registered with a "
            f"single call to def(). Duplicate registration: registered at {op._site}. Original "
            f"registration: registered at {old._site}"
        )
    overloads[key] = op


def _lookup(qualname: str) -> _OpDef | None:
    ns, _, name = qualname.partition("::")
    base, _, overload = name.partition(".")
    return _REGISTRY.get((ns, base), {}).get(overload or "default")


def _find(op, missing) -> _OpDef:
    if isinstance(op, _OpDef):
        return op
    qualname = _qualname_of(op)
    found = _lookup(qualname)
    if found is None:
        ns, _, name = qualname.partition("::")
        raise missing(qualname, ns, name)
    return found


def _no_operator(qualname: str, ns: str, name: str) -> RuntimeError:
    return RuntimeError(f"operator {qualname} does not exist")


def _no_attribute(qualname: str, ns: str, name: str) -> AttributeError:
    return AttributeError(f"'_OpNamespace' '{ns}' object has no attribute '{name}'")


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


class FakeImplCtx:
    """The context of a fake implementation (what :func:`get_ctx` returns inside one)."""

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None):
        """Not available: ember has no symbolic sizes (fake implementations see real tensors)."""
        from .dropin import unsupported

        raise unsupported(
            "torch.library.get_ctx().new_dynamic_size",
            "ember has no symbolic sizes; fake implementations run on real tensors",
        )


_FAKE_CTX: list[FakeImplCtx] = []


def get_ctx() -> FakeImplCtx | None:
    """The context of the running fake implementation (None outside one)."""
    return _FAKE_CTX[-1] if _FAKE_CTX else None


_KINDS = ("IMPL", "DEF", "FRAGMENT")


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


# ----------------------------------------------------------------------------- ember.ops
class OpOverload:
    """One overload of an operator (``ember.ops.mylib.foo.default``): call it like the op."""

    def __init__(self, ns: str, name: str, overload: str, fn: Callable, opdef=None) -> None:
        self._ns = ns
        self._opname = name
        self._overloadname = overload
        self._fn = fn
        self._opdef = opdef  # the _OpDef of a custom op; None for ember's own (aten) functions
        self._qualname = f"{ns}::{name}" + ("" if overload == "default" else f".{overload}")

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    @property
    def _schema(self):
        if self._opdef is None:
            raise AttributeError(f"ember does not keep the schema of {self}")
        return self._opdef._schema

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        return getattr(getattr(ops, self._ns), self._opname)

    def name(self) -> str:
        return self._qualname

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._ns}.{self._opname}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self._ns}.{self._opname}.{self._overloadname}"


class OpOverloadPacket:
    """An operator with all its overloads (``ember.ops.mylib.foo``): calling it calls
    ``.default``; each overload is an attribute. For ``aten``, every overload name is ember's
    one function of that name."""

    def __init__(self, ns: str, name: str, overloads: dict | None, fn=None) -> None:
        self._ns = ns
        self._opname = name
        self._qualname = f"{ns}::{name}"
        self._overloads = overloads
        self._aten_fn = fn

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        if self._aten_fn is not None and not overload.startswith("_"):
            return OpOverload(self._ns, self._opname, overload, self._aten_fn)
        op = self._overloads.get(overload) if self._overloads else None
        if op is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{overload}'")
        return op._opoverload

    def __call__(self, *args, **kwargs):
        return self.default(*args, **kwargs)

    def overloads(self) -> list[str]:
        return ["default"] if self._overloads is None else list(self._overloads)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self}')>"

    def __str__(self) -> str:
        return f"{self._ns}.{self._opname}"


def _aten(name: str):
    """ember's function for the aten op ``name`` (a function, Tensor method or F function)."""
    import ember

    from .core.registry import OPS
    from .nn import functional

    found = OPS.get(name)
    candidates = (
        found.public if found is not None else None,
        vars(ember).get(name),
        getattr(Tensor, name, None),
        vars(functional).get(name),
    )
    for fn in candidates:
        if callable(fn) and not isinstance(fn, (type, _pytypes.ModuleType)):
            return fn
    return None


class _OpNamespace:
    """``ember.ops.<ns>``: the operators of one namespace, as attributes."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        overloads = _REGISTRY.get((self.name, op_name))
        if overloads:
            return OpOverloadPacket(self.name, op_name, overloads)
        fn = _aten(op_name) if self.name == "aten" else None
        if fn is None:
            raise AttributeError(
                f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'"
            )
        packet = OpOverloadPacket(self.name, op_name, None, fn)
        setattr(self, op_name, packet)  # ember's own functions do not change: cache
        return packet

    def __repr__(self) -> str:
        return f"<module 'ember.ops.{self.name}' from 'ember.ops'>"


class _Ops(_pytypes.ModuleType):
    """``ember.ops`` (torch.ops): ``ember.ops.<namespace>.<op>``; any namespace name is valid."""

    def __init__(self) -> None:
        super().__init__("ember.ops", __doc__)
        # a spec of its own: drop-in's `import torch.ops` gives it back (repr, pickling)
        self.__spec__ = importlib.machinery.ModuleSpec("ember.ops", None)
        self.loaded_libraries: set = set()

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(name)
        ns = _OpNamespace(name)
        setattr(self, name, ns)
        return ns

    def load_library(self, path) -> None:
        from .dropin import unsupported

        raise unsupported("torch.ops.load_library", "ember cannot load C++ operator libraries")

    def import_module(self, module: str) -> None:
        importlib.import_module(module)


ops = _Ops()
sys.modules[ops.__name__] = ops  # `import ember.ops` (and `import torch.ops` in drop-in mode)


# ----------------------------------------------------------------------------- opcheck
class OpCheckError(Exception):
    """A check of :func:`opcheck` failed (the cause is chained)."""


class MetadataMismatchError(Exception):
    """The fake implementation's output metadata differ from the real output's."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __repr__(self) -> str:
        return f"MetadataMismatchError(reason={self.reason!r})"


_ALL_TESTS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_static",
    "test_aot_dispatch_dynamic",
)
DEFAULT_TEST_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_dynamic",
)


def _clone(v):
    if isinstance(v, Tensor):
        c = v.detach().clone()
        return c.requires_grad_() if v.requires_grad else c
    if isinstance(v, (list, tuple)):
        return type(v)(_clone(x) for x in v)
    if isinstance(v, dict):
        return {k: _clone(x) for k, x in v.items()}
    return v


def _host(t: Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def _check_schema(op: OpOverload, args, kwargs, atol, rtol) -> None:
    """Inputs not declared mutable must come back unchanged."""
    args, kwargs = _clone(args), _clone(kwargs)
    if op._opdef is not None:
        values = op._opdef._bind(args, kwargs)
        named = [(a.name, v, a.is_write) for a, v in zip(op._opdef._schema.arguments, values)]
    else:  # ember's own functions: the trailing-underscore ones write their first input
        inplace = op._opname.endswith("_")
        named = [(f"{i}", v, inplace and i == 0) for i, v in enumerate(args)]
        named += [(k, v, k == "out") for k, v in kwargs.items()]
    before = [[_host(t).copy() for t in _tensors_in(v)] for _, v, _ in named]
    from .autograd.grad_mode import no_grad

    with no_grad():
        op(*args, **kwargs)
    for (name, v, write), old in zip(named, before):
        if write:
            continue
        for t, o in zip(_tensors_in(v), old):
            if not np.array_equal(_host(t), o, equal_nan=o.dtype.kind in "fc"):
                raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")


def _check_autograd_registration(op: OpOverload, args, kwargs, atol, rtol) -> None:
    """When an input requires grad, every floating output must be part of the graph."""
    args, kwargs = _clone(args), _clone(kwargs)
    ins = [t for v in (*args, *kwargs.values()) for t in _tensors_in(v)]
    if not any(t.requires_grad for t in ins):
        return
    out = op(*args, **kwargs)
    for t in _tensors_in(out):
        if t.is_floating_point() and not t.requires_grad:
            raise RuntimeError(
                f"{op}: an input requires grad but an output does not: the op is not "
                "differentiable. Please use register_autograd to add a formula."
            )


def _require_fake(d: _OpDef) -> None:
    if d._fake is None:
        raise RuntimeError(
            f"There was no fake impl registered for {d!r}. This is necessary for "
            "ember.compile/export/fx tracing to work. Please use "
            f"`{d._fn_name}.register_fake` to add an fake impl."
        )


def _check_fake(op: OpOverload, args, kwargs, atol, rtol) -> None:
    """The fake implementation's outputs have the real outputs' shapes, dtypes and devices."""
    d = op._opdef
    if d is None:
        return  # ember's own functions have no separate fake implementation
    _require_fake(d)
    from .autograd.grad_mode import no_grad

    args, kwargs = _clone(args), _clone(kwargs)
    with no_grad():
        real = op(*args, **kwargs)
        fake_args, fake_kwargs = d._split(d._bind(args, kwargs))
        _FAKE_CTX.append(FakeImplCtx())
        try:
            fake = d._fake(*fake_args, **fake_kwargs)
        finally:
            _FAKE_CTX.pop()
    reals = list(real) if isinstance(real, (list, tuple)) else [real]
    fakes = list(fake) if isinstance(fake, (list, tuple)) else [fake]
    head = (
        f"When comparing the output of {op} on FakeTensor and concrete Tensors, found "
        "mismatched tensor metadata: "
    )
    if len(reals) != len(fakes):
        raise MetadataMismatchError(
            f"{head}the real output has {len(reals)} values, the fake one {len(fakes)}"
        )
    for r, f in zip(reals, fakes):
        if not isinstance(r, Tensor) or not isinstance(f, Tensor):
            if isinstance(r, Tensor) or isinstance(f, Tensor):
                raise MetadataMismatchError(
                    f"{head}types {type(r).__name__} and {type(f).__name__} are not equal!"
                )
            continue
        for what, a, b in (
            ("Shapes", r.shape, f.shape),
            ("Dtypes", r.dtype, f.dtype),
            ("Devices", r.device, f.device),
        ):
            if a != b:
                raise MetadataMismatchError(f"{head}{what} {a!r:s} and {b!r:s} are not equal!")


def _check_backward(op: OpOverload, args, kwargs, atol, rtol) -> None:
    """Backward runs; with float64 inputs, gradients match finite differences (gradcheck).
    Like torch's (which traces the op with fake tensors), it needs a fake implementation."""
    from .autograd import grad
    from .autograd.gradcheck import gradcheck

    if op._opdef is not None:
        _require_fake(op._opdef)
    args, kwargs = _clone(args), _clone(kwargs)
    diff = [t for v in (*args, *kwargs.values()) for t in _tensors_in(v) if t.requires_grad]
    if not diff:
        return
    out = op(*args, **kwargs)
    outs = [t for t in _tensors_in(out) if t.requires_grad]
    if not outs:
        return
    grad(outs, diff, [t.detach() * 0 + 1 for t in outs], allow_unused=True)
    if not all(t.dtype == _dt.float64 for t in diff):
        return

    def swap(v, new: dict):
        if isinstance(v, Tensor):
            return new.get(id(v), v)
        if isinstance(v, (list, tuple)):
            return type(v)(swap(x, new) for x in v)
        return v

    def fn(*ts):
        new = {id(t): n for t, n in zip(diff, ts)}
        res = op(*swap(args, new), **{k: swap(v, new) for k, v in kwargs.items()})
        return tuple(t for t in _tensors_in(res) if t.is_floating_point())

    tol = {} if atol is None else {"atol": atol, "rtol": rtol}
    gradcheck(fn, tuple(t.detach().requires_grad_() for t in diff), **tol)


_CHECKS = {
    "test_schema": _check_schema,
    "test_autograd_registration": _check_autograd_registration,
    "test_faketensor": _check_fake,
    "test_aot_dispatch_static": _check_backward,
    "test_aot_dispatch_dynamic": _check_backward,
}


def opcheck(
    op,
    args: tuple,
    kwargs: dict | None = None,
    *,
    test_utils: str | Sequence[str] = DEFAULT_TEST_UTILS,
    raise_exception: bool = True,
    atol=None,
    rtol=None,
) -> dict:
    """Check a custom op on sample inputs; returns ``{test name: "SUCCESS" or the exception}``.

    ember's checks, all eager: ``test_schema`` (inputs not declared mutated stay unchanged),
    ``test_autograd_registration`` (outputs join the graph when inputs require grad),
    ``test_faketensor`` (the fake implementation's outputs have the real shapes, dtypes and
    devices) and ``test_aot_dispatch_*`` (backward runs, and with float64 inputs requiring grad
    the gradients match finite differences: ``ember.autograd.gradcheck`` with ``atol``/``rtol``).
    """
    if isinstance(op, _OpDef):
        op = op._opoverload
    elif isinstance(op, OpOverloadPacket):
        op = op.default
    if not isinstance(op, OpOverload):
        raise ValueError(  # noqa: TRY004 - torch's type
            "opcheck(op, ...): op must be instance of ember._ops.OpOverload, e.g. "
            f"ember.ops.aten.sin.default, got {type(op)}"
        )
    if (atol is None) != (rtol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    tests = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    if not set(tests) <= set(_ALL_TESTS):
        raise ValueError(
            f"opcheck(op, ..., test_utils={tests}), expected test_utils to be subset of "
            f"{_ALL_TESTS} but it was not"
        )
    kwargs = {} if kwargs is None else kwargs
    results = {}
    for name in tests:
        try:
            _CHECKS[name](op, tuple(args), kwargs, atol, rtol)
        except Exception as e:
            if raise_exception:
                raise OpCheckError(
                    f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)"
                ) from e
            results[name] = e
        else:
            results[name] = "SUCCESS"
    return results
