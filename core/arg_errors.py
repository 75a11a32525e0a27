"""torch's TypeErrors for arguments of the wrong type, built only on the failure path (and its
refusal of an argument requiring grad that a kernel has no derivative for).

Dependency-light (dtype, device and layout only) so that the op registry, the op modules and the
Python-level wrappers (nn.functional, linalg, fft) share one text for each kind of error.
"""

from __future__ import annotations

import functools
import linecache
import sys

import numpy as _np

from ..autograd.grad_mode import _state as _grad_state
from . import dtype as _dt
from .device import device as _device
from .layout import memory_format


def no_derivative(fn: str, arg: str, t) -> None:
    """torch's error for an argument its kernel ``fn`` has no derivative for (a class or element
    weight, a target, batch norm's running statistics), raised when it requires grad under grad
    mode, whatever the input."""
    if t is not None and t.requires_grad and _grad_state.enabled:
        raise RuntimeError(
            f"The function '{fn}' is not differentiable with respect to argument '{arg}'. This "
            "input cannot have requires_grad True."
        )


def type_name(a) -> str:
    """The name torch prints for the type of argument ``a`` (``torch.dtype`` for a dtype,
    CPython's tp_name otherwise: ``numpy.ndarray`` for a static type outside builtins)."""
    for cls, name in ((_dt.dtype, "dtype"), (_device, "device"), (memory_format, "memory_format")):
        if isinstance(a, cls):
            return f"torch.{name}"
    t = type(a)
    if t.__name__ == "Generator" and t.__module__.endswith("core.random"):
        return "torch._C.Generator"  # torch's generator is a C type
    if t.__flags__ & _HEAPTYPE or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


_HEAPTYPE = 1 << 9


def invalid_arguments(fname: str, args, kwargs, signatures) -> TypeError:
    """torch's TypeError for a call that matches none of ``fname``'s ``signatures``: what was
    passed (positional types, then keyword=type) and the signatures it accepts."""
    pos = [type_name(a) for a in args]
    if len(signatures) == 1:
        # torch names a lone signature inline and reports keywords it has no room for alone;
        # one argument more than it has parameters (where torch's hidden overload, one longer,
        # was tried) marks the arguments the signature does not take (!str!)
        params = signature_params(signatures[0])
        index = {p[1]: i for i, p in enumerate(params)}
        unknown = [k for k in kwargs if index.get(k, -1) < len(args)]
        if unknown:
            return TypeError(
                f"{fname}() received an invalid combination of arguments - got unrecognized "
                "keyword arguments: " + ", ".join(unknown)
            )
        for i, a in enumerate(args if len(args) + len(kwargs) == len(params) + 1 else ()):
            if i >= len(params) or params[i][3] or not _accepts(params[i][0], a, params[i][2]):
                pos[i] = f"!{pos[i]}!"
    kw = [f"{k}={type_name(v)}" for k, v in sorted(kwargs.items())]
    got = ", ".join(pos + kw) if pos else "".join(k + ", " for k in kw)
    expected = (
        signatures[0]
        if len(signatures) == 1
        else "one of:\n" + "".join(f" * {sig}\n{_why_not(sig, args, kwargs)}" for sig in signatures)
    )
    return TypeError(
        f"{fname}() received an invalid combination of arguments - got ({got}), but expected "
        + expected
    )


def _why_not(sig: str, args, kwargs) -> str:
    """torch's note under one of several overloads that the call has as many arguments as (its
    ``*`` counts, an ``out`` not given does not): the keywords it does not name, else the
    arguments as given with the mistyped ones marked (``(int, !str!, value=Tensor)``); ""
    for an overload of another length."""
    params = signature_params(sig)
    n = len(params) + (" *," in sig or sig.startswith("(*"))
    if any(p[1] == "out" for p in params) and "out" not in kwargs:
        n -= 1
    if len(args) + len(kwargs) != n:
        return ""
    names = [p[1] for p in params]
    wrong = [k for k in kwargs if k not in names]
    if wrong:
        return (
            f"      didn't match because some of the keywords were incorrect: {', '.join(wrong)}\n"
        )
    items = []
    for i in range(len(args) + len(kwargs)):
        if i < len(args):
            v, label = args[i], ""
        elif i < len(params) and params[i][1] in kwargs:
            v, label = kwargs[params[i][1]], params[i][1] + "="
        else:
            return ""  # (torch's own text fails here)
        desc = type_name(v)
        if isinstance(v, (tuple, list)):
            inner = ", ".join(type_name(e) for e in v)
            desc += f" of ({inner})" if isinstance(v, tuple) else f" of [{inner}]"
        # (torch's note knows no Number type: a number is marked there too; an int takes no bool)
        typ = params[i][0] if i < len(params) else "Number"
        ok = (
            typ != "Number"
            and not (typ == "int" and isinstance(v, bool))
            # (an int[] by keyword is a sequence: one int only loose, by position)
            and not (label and typ == "tuple of ints" and not isinstance(v, (tuple, list)))
            and _accepts(typ, v, None)
        )
        items.append(f"{label}{desc}" if ok else f"!{label}{desc}!")
    got = ", ".join(items) if args else "".join(x + ", " for x in items)
    return f"      didn't match because some of the arguments have invalid types: ({got})\n"


def signature_params(sig: str) -> list:
    """The parameters of one of torch's signature lines, ``(Tensor other, *, Number alpha = 1)``:
    ``(type, name, default or None, keyword_only)`` each (a default is its text, "None" too)."""
    out = []
    kwonly = False
    for p in sig[1:-1].split(", ") if sig != "()" else ():
        if p == "*":
            kwonly = True
            continue
        decl, eq, default = p.partition(" = ")
        typ, name = decl.rsplit(" ", 1)
        out.append((typ, name, default if eq else None, kwonly))
    return out


def _accepts(typ: str, v, default) -> bool:
    """Whether torch's parser takes ``v`` for a parameter of type ``typ`` (the types the in-place
    signatures use; any other is taken as matching, so no error is invented)."""
    from .tensor import Tensor

    if v is None:
        return default == "None"
    if typ == "Tensor":
        return isinstance(v, Tensor)
    if typ == "str":
        return isinstance(v, str)
    if typ == "bool":
        return isinstance(v, (bool, _np.bool_))
    if typ in ("Number", "float", "int"):
        if isinstance(v, Tensor):
            return v.ndim == 0
        if typ == "int":
            return isinstance(v, (int, _np.integer))
        return isinstance(v, (int, float, _np.number, _np.bool_)) and (
            typ == "Number" or not isinstance(v, (complex, _np.complexfloating))
        )
    if typ == "tuple of ints":
        return is_ints(v)
    if typ == "torch.dtype":
        return isinstance(v, (_dt.dtype, type))
    return True


# the in-place methods whose Tensor parameter torch's parser also fills with a Python number
# (x.sub_(1, alpha="s") is alpha's error, x.mul_(1, foo=1) the unknown keyword's)
_NUMBERS_AS_TENSORS = frozenset(("add_", "sub_", "mul_"))


def _parse_error(fname: str, params: list, args: tuple, kwargs: dict) -> TypeError | None:
    """torch's parser error for ``args``/``kwargs`` against one signature's ``params`` (the only
    plausible one): too many positionals, a missing or mistyped argument, an unknown keyword;
    None when the call matches it."""
    n_pos = sum(not kw for *_, kw in params)
    if len(args) > n_pos:
        least = sum(d is None and not kw for _, _, d, kw in params)
        takes = (
            f"{n_pos} positional argument{'s' if n_pos != 1 else ''}"
            if least == n_pos
            else f"from {least} to {n_pos} positional arguments"
        )
        return TypeError(f"{fname}() takes {takes} but {len(args)} were given")
    rest = dict(kwargs)
    for i, (typ, name, default, kw) in enumerate(params):
        if not kw and i < len(args):
            v, where = args[i], f" (position {i + 1})"
        elif name in rest:
            v, where = rest.pop(name), ""
        elif default is not None:
            continue
        else:
            # torch lists every required argument not given (its plural is the other way round)
            missing = [p[1] for p in params[i:] if p[2] is None and p[1] not in rest]
            return TypeError(
                f"{fname}() missing {len(missing)} required positional argument"
                f"{'s' if len(missing) == 1 else ''}: " + ", ".join(f'"{m}"' for m in missing)
            )
        if not _accepts(typ, v, default) and not (
            typ == "Tensor"
            and fname in _NUMBERS_AS_TENSORS
            and isinstance(v, (int, float, complex, _np.number, _np.bool_))
        ):
            return TypeError(
                f"{fname}(): argument '{name}'{where} must be {typ}, not {type_name(v)}"
            )
    if rest:
        return TypeError(f"{fname}() got an unexpected keyword argument '{next(iter(rest))}'")
    return None


def parse_error(fname: str, signature: str, args: tuple, kwargs: dict) -> TypeError | None:
    """torch's TypeError for a call of a function with one ``signature`` (no hidden overloads):
    that signature explains any failure; None when the call matches it."""
    return _parse_error(fname, signature_params(signature), args, kwargs)


def parser_error(fname: str, signatures, args: tuple, kwargs: dict) -> TypeError | None:
    """torch's TypeError for a call ``fname(*args, **kwargs)`` of a function with several
    overloads (``signatures``, the ones torch lists): the one overload the argument count fits
    explains the failure, else the "invalid combination" listing; None when some overload
    takes the call (its failure is not the parser's)."""
    n = len(args) + len(kwargs)
    plausible = []
    for sig in signatures:
        params = signature_params(sig)
        if sum(p[2] is None for p in params) <= n <= len(params):
            plausible.append(params)
    if len(plausible) == 1:
        return _parse_error(fname, plausible[0], args, kwargs)
    if any(_parse_error(fname, p, args, kwargs) is None for p in plausible):
        return None
    return invalid_arguments(fname, args, kwargs, signatures)


def no_arguments(fname: str, args: tuple, kwargs: dict) -> TypeError:
    """torch's TypeError for a method that takes no arguments (``x.exp_(1)``)."""
    if kwargs:
        return TypeError(f"{fname}() takes no keyword arguments")
    return TypeError(f"{fname}() takes no arguments ({len(args)} given)")


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


def tensor_input(fn: str, *names: str, binding: bool = False):
    """Decorator: a call whose body failed (AttributeError, TypeError) on a non-Tensor among
    its leading arguments ``names`` (default: ``input``) raises torch's ``fn(): argument 'input'
    (position 1) must be Tensor, not list`` instead (None included: these are never optional).
    ``binding``: torch's function is a C binding, whose parser names an argument passed by
    keyword without its position. A correct call pays one frame; any other failure is
    re-raised as it was."""
    names = names or ("input",)

    def deco(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            try:
                return f(*args, **kwargs)
            except (AttributeError, TypeError) as e:
                err = _leading_type_error(fn, names, args, kwargs)
                if err is None:
                    if binding and kwargs:
                        _unnumber_keyword(e, kwargs)
                    raise
                raise err from None

        return wrapper

    return deco


def keyword_numbering(f):
    """Decorator for a function whose checks number every argument as if passed by position:
    an error about one passed by keyword is worded as torch's parser words it."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except TypeError as e:
            if kwargs:
                _unnumber_keyword(e, kwargs)
            raise

    return wrapper


def _unnumber_keyword(e: Exception, kwargs: dict) -> None:
    """Drop `` (position k)`` from a parser error ``e`` about an argument passed by keyword (an
    ``int[]`` one whose first element is no int is then blamed as a whole, see
    :func:`int_list_error`)."""
    text = str(e)
    for name, value in kwargs.items():
        head = f"argument '{name}' (position "
        at = text.find(head)
        if at >= 0:
            rest = text[text.index(")", at + len(head)) + 1 :]
            if rest.startswith(" must be tuple of ints, but found element"):
                rest = f" must be tuple of ints, not {type_name(value)}"
            e.args = (f"{text[:at]}argument '{name}'{rest}",)
            return


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
                method = tensor_method(fn) if args and hasattr(args[0], "_data") else None
                if method is not None:
                    raise invalid_method_arguments(method, args, kwargs, signatures) from None
                raise invalid_arguments(fn, args, kwargs, signatures) from None

        return wrapper

    return deco


def is_ints(v) -> bool:
    """An int, or a tuple or list of ints (torch's ``int`` / ``tuple of ints`` parameters)."""
    if isinstance(v, (tuple, list)):
        return all(type(x) is int for x in v)
    return type(v) is int


def int_list_error(fname: str, name: str, pos: int | None, v, i: int | None = None) -> TypeError:
    """torch's parser error for an ``int[]`` argument ``name`` given as ``v``, at ``pos``
    (counting from 1; None: by keyword, which torch names without a position). ``i`` None:
    ``v`` is neither an int nor a sequence; ``i`` 0: its first element is no int (the overload
    check, which for a keyword blames the sequence itself); ``i`` > 0: a later element is none
    (the unpack, which counts from 1 and takes a bool)."""
    if i:
        return TypeError(
            f"{fname}(): argument '{name}' failed to unpack the object at pos {i + 1} with "
            f'error "type must be tuple of ints,but got {type_name(v[i])}"'
        )
    where = "" if pos is None else f" (position {pos})"
    if i is None or pos is None:
        what = f"not {type_name(v)}"
    else:
        what = f"but found element of type {type_name(v[0])} at pos 0"
    return TypeError(f"{fname}(): argument '{name}'{where} must be tuple of ints, {what}")


def int_list(fname: str, name: str, pos: int | None, v) -> tuple:
    """``v`` (an int or a sequence of them; a numpy integer or 0-d integer tensor counts) as a
    tuple of ints, or :func:`int_list_error` (``pos`` as there). Plain ints cost one check."""
    if type(v) is int:
        return (v,)
    if not isinstance(v, (tuple, list)):
        x = as_int(v, True)
        if x is None:
            raise int_list_error(fname, name, pos, v)
        return (x,)
    out = list(v)
    for i, x in enumerate(out):
        if type(x) is not int:
            x = as_int(x, i == 0)
            if x is None:
                raise int_list_error(fname, name, pos, v, i)
            out[i] = x
    return tuple(out)


def varargs_error(fname: str, name: str, sizes: tuple) -> TypeError | None:
    """torch's parser error for sizes given as several arguments (``x.repeat(2, 1.5)``), or
    None when all are ints: a first one that is no int leaves only the one-sequence form."""
    for i, v in enumerate(sizes):
        if type(v) is not int and as_int(v, i == 0) is None:
            if i == 0:
                n = 1 if tensor_method(fname) else 2
                return TypeError(
                    f"{fname}() takes {n} positional argument{'s' * (n > 1)} but "
                    f"{len(sizes) + n - 1} were given"
                )
            return int_list_error(fname, name, None, sizes, i)
    return None


def int_varargs(fname: str, name: str, sizes: tuple) -> tuple:
    """An ``int[]`` argument ``name`` that torch's parser takes loose or as one sequence
    (``x.resize_(2, 3)``, ``x.resize_((2, 3))``; the first of ``fname``'s positional
    arguments) as a tuple of ints, or the parser's TypeError. For a call whose sizes are not
    all plain ints (failure path)."""
    if len(sizes) == 1:
        return int_list(fname, name, 1, sizes[0])
    err = varargs_error(fname, name, sizes)
    if err is not None:
        raise err
    return tuple(x if type(x) is int else as_int(x, i == 0) for i, x in enumerate(sizes))


def as_int(x, first: bool) -> int | None:
    """``x`` as an int when torch's parser takes it in an ``int[]`` (a bool only after the
    first element, which picks the overload), else None."""
    if isinstance(x, (float, _np.floating)) or (first and isinstance(x, (bool, _np.bool_))):
        return None
    try:
        return x.__index__()
    except (AttributeError, TypeError, ValueError, RuntimeError):
        return None


def _entry_frame():
    """The first frame outside ember, out from the caller's caller (the call into ember)."""
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__", "").partition(".")[0] == "ember":
        f = f.f_back
    return f


def called_as() -> str | None:
    """The callee, as the caller's source spells it (``torch.arccos``, ``x.greater_``), of the
    call that entered ember: the first frame outside ember, at the call it is running. For error
    texts only (an alias shares its op's function, so only the call site tells them apart);
    None without source (an interactive line) or when the callee is not a plain name."""
    f = _entry_frame()
    if f is None:
        return None
    try:  # (co_positions: Python 3.11+; on 3.10 the op's own name is printed)
        line, _, col, _ = list(f.f_code.co_positions())[f.f_lasti // 2]
    except (AttributeError, IndexError, ValueError):
        return None
    if line is None or col is None:
        return None
    callee = linecache.getline(f.f_code.co_filename, line)[col:].partition("(")[0].strip()
    return callee if callee.replace(".", "").replace("_", "").isalnum() else None


def tensor_method(name: str) -> str | None:
    """The method the call that entered ember spelled, ``name`` or its in-place ``name_``, when
    it was called on a Tensor (``x.index_add(...)``, ``self.w.scatter_(...)``), else None: torch
    counts a method's arguments after self and names the in-place one. Error path only."""
    from .tensor import Tensor

    if not hasattr(Tensor, name):  # a function only (conv2d): never a method call
        return None
    callee = called_as()
    f = _entry_frame()
    path, _, method = (callee or "").rpartition(".")
    if method not in (name, name + "_"):
        # no source, or a receiver computed in place (``f(x).index_put``): read the bytecode
        return _method_from_bytecode(f, name) if f is not None else None
    if not path:
        return None
    head, *attrs = path.split(".")
    obj = f.f_locals.get(head, f.f_globals.get(head))
    for a in attrs:
        obj = getattr(obj, a, None)
    return method if isinstance(obj, Tensor) else None


def _method_from_bytecode(f, name: str) -> str | None:
    """:func:`tensor_method` for a call its source does not spell plainly: the attribute load
    nearest before the call names the method; its receiver, when a plain name, says whether
    a Tensor's (a computed receiver, ``f(x).index_put``, is taken for one)."""
    import dis

    from .tensor import Tensor

    ins = [i for i in dis.get_instructions(f.f_code) if i.offset <= f.f_lasti]
    for j in range(len(ins) - 1, 0, -1):
        if ins[j].opname in ("LOAD_METHOD", "LOAD_ATTR") and ins[j].argval in (name, name + "_"):
            prev = ins[j - 1]
            if prev.opname in ("LOAD_NAME", "LOAD_GLOBAL", "LOAD_FAST", "LOAD_DEREF"):
                obj = f.f_locals.get(prev.argval, f.f_globals.get(prev.argval))
                if not isinstance(obj, Tensor):
                    return None
            elif prev.opname in ("LOAD_ATTR", "LOAD_METHOD", "IMPORT_NAME"):
                return None  # (a dotted receiver has source-less spellings only: rare)
            return ins[j].argval
    return None


def method_signatures(sigs: tuple) -> tuple:
    """A function's signature lines as its Tensor method lists them: no input, no out."""
    return tuple(
        "("
        + (s.partition(", ")[2] or ")")  # (a lone input: no arguments)
        .replace(", *, Tensor out = None", "")
        .replace(", Tensor out = None", "")
        for s in sigs
    )


def invalid_method_arguments(method: str, args, kwargs, signatures) -> TypeError:
    """:func:`invalid_arguments` of a call spelled as the Tensor method ``method``: its arguments
    after self, the signatures that take an input, listed as the method's."""
    sigs = tuple(s for s in signatures if s.startswith("(Tensor input"))
    return invalid_arguments(method, args[1:], kwargs, method_signatures(sigs))


def plain_call() -> bool:
    """Whether the call that entered ember is a plain call, ``x.exp_(1)`` (Python calls a
    method so spelled unbound, and its errors name the defining class, where ``x.exp_(*a)``
    binds it first and names the instance's)."""
    import dis

    f = _entry_frame()
    cache = dis.opmap.get("CACHE")  # (Python 3.11+: on 3.10 the bound form's text is printed)
    if f is None or cache is None:
        return False
    code, i = f.f_code.co_code, f.f_lasti
    while i > 0 and code[i] == cache:  # a running call stands on its caches
        i -= 2
    return code[i] == dis.opmap.get("CALL")
