"""Operator schemas: inferred from annotated functions (``infer_schema``) or parsed from
torch's schema strings, and printed the way torch prints them."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Sequence

from ..core import dtype as _dt
from ..core.device import device as _device
from ..core.tensor import Tensor

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
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

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
