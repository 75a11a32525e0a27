"""The operators: one ``_OpDef`` per overload (schema, kernels, fake/autograd/autocast
registrations, the call with its checks) and the registry they live in."""

from __future__ import annotations

import contextlib
import enum
import inspect
import os
import sys
from collections.abc import Callable, Sequence

from ..autograd.function import Function
from ..autograd.grad_mode import _state
from ..core import dtype as _dt
from ..core.device import device as _device
from ..core.tensor import Tensor
from ._schema import FunctionSchema, _Arg

_NO_DEFAULT = inspect.Parameter.empty


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
                    mod = sys.modules[__package__]  # ember.library, as torch names its module
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
            from ..amp.autocast_mode import _cast, is_autocast_enabled

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


_HERE = os.path.dirname(__file__)


def _site() -> str:
    """``file:line`` of the user's call (the first frame outside this package)."""
    f = sys._getframe(1)
    while f is not None and os.path.dirname(f.f_code.co_filename) == _HERE:
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
        from ._ops import ops  # the namespace module imports this one

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


class FakeImplCtx:
    """The context of a fake implementation (what :func:`get_ctx` returns inside one)."""

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None):
        """Not available: ember has no symbolic sizes (fake implementations see real tensors)."""
        from ..dropin import unsupported

        raise unsupported(
            "torch.library.get_ctx().new_dynamic_size",
            "ember has no symbolic sizes; fake implementations run on real tensors",
        )


_FAKE_CTX: list[FakeImplCtx] = []


def get_ctx() -> FakeImplCtx | None:
    """The context of the running fake implementation (None outside one)."""
    return _FAKE_CTX[-1] if _FAKE_CTX else None


_KINDS = ("IMPL", "DEF", "FRAGMENT")
