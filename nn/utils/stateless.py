"""functional_call: run a module with some parameters/buffers swapped for given tensors
(torch.nn.utils.stateless / torch.func.functional_call)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping
from typing import Any

from ...core.tensor import Tensor

__all__ = ["functional_call"]


def _untie_named_tensors_map(module, parameters_and_buffers: dict) -> dict:
    """Extend the mapping to every alias of a tied tensor that was given under one name."""
    # every name (duplicates included) under which each tensor object appears
    aliases: dict[int, list[str]] = {}
    for name, t in module.named_parameters(remove_duplicate=False):
        aliases.setdefault(id(t), []).append(name)
    for name, t in module.named_buffers(remove_duplicate=False):
        aliases.setdefault(id(t), []).append(name)
    tied = {k: v for k, v in aliases.items() if len(v) > 1}
    out = dict(parameters_and_buffers)
    for names in tied.values():
        given = [n for n in names if n in parameters_and_buffers]
        if not given:
            continue
        vals = {id(parameters_and_buffers[n]) for n in given}
        if len(vals) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                "Consider using tie_weights=False"
            )
        v = parameters_and_buffers[given[0]]
        for n in names:
            out[n] = v
    return out


def _resolve(module, name: str):
    """(owner module, attribute name) for a dotted ``name``."""
    *path, attr = name.split(".")
    owner = module
    for part in path:
        sub = owner._modules.get(part) if hasattr(owner, "_modules") else None
        if sub is None:
            sub = getattr(owner, part, None)
            if sub is None:
                raise AttributeError(f"{type(owner).__name__} has no attribute `{part}`")
        owner = sub
    return owner, attr


@contextlib.contextmanager
def _reparametrize_module(
    module, parameters_and_buffers: Mapping, *, tie_weights: bool = False, strict: bool = False
):
    from .parametrize import is_parametrized

    if tie_weights:
        mapping = _untie_named_tensors_map(module, dict(parameters_and_buffers))
    else:
        mapping = dict(parameters_and_buffers)
    if strict:
        keys = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        keys |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(keys - set(mapping))
        unexpected = sorted(set(mapping) - keys)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs)
            )

    undo: list = []  # (kind, owner, attr, old value), undone in reverse order
    prop_swaps: dict = {}  # owner -> {attr: tensor}: parametrized tensors (class properties)
    try:
        for name, t in mapping.items():
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"{t} is not an instance of torch.Tensor")
            owner, attr = _resolve(module, name)
            if attr in owner._parameters:
                undo.append(("p", owner, attr, owner._parameters[attr]))
                owner._parameters[attr] = t
            elif attr in owner._buffers:
                undo.append(("b", owner, attr, owner._buffers[attr]))
                owner._buffers[attr] = t
            elif is_parametrized(owner, attr):
                prop_swaps.setdefault(owner, {})[attr] = t
            else:
                # a plain attribute may be set (or added), but never one holding a submodule
                # or other non-tensor: torch's TypeError
                old = getattr(owner, attr, _MISSING)
                if old is not _MISSING and old is not None and not isinstance(old, Tensor):
                    raise TypeError(f"attribute `{attr}`: {old} is not an instance of torch.Tensor")
                had = attr in owner.__dict__
                undo.append(("a", owner, attr, owner.__dict__.get(attr) if had else _MISSING))
                object.__setattr__(owner, attr, t)
        for owner, values in prop_swaps.items():
            cls = owner.__class__
            props = {a: property(lambda self, _t=t: _t) for a, t in values.items()}
            undo.append(("c", owner, None, cls))
            owner.__class__ = type(cls.__name__, (cls,), props)
        yield
    finally:
        for kind, owner, attr, old in reversed(undo):
            if kind == "p":
                owner._parameters[attr] = old
            elif kind == "b":
                owner._buffers[attr] = old
            elif kind == "c":
                owner.__class__ = old
            elif old is _MISSING:
                owner.__dict__.pop(attr, None)
            else:
                object.__setattr__(owner, attr, old)


_MISSING = object()


def _functional_call(
    module,
    parameter_and_buffer_dicts,
    args: Any = None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        seen: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                seen[k] = seen.get(k, 0) + 1
        repeated = [k for k, c in seen.items() if c > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(  # noqa: TRY004  (torch's type)
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, merged, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(
    module,
    parameters_and_buffers,
    args: Any = None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the tensors of
    ``parameters_and_buffers`` (a dict keyed like ``named_parameters``, or a tuple of dicts).
    The module is unchanged afterwards. Tied weights follow a value given for one alias
    (``tie_weights=True``); ``strict=True`` requires exactly the module's keys."""
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
        "removed in a future version of PyTorch. Please use `torch.func.functional_call` instead "
        "which is a drop-in replacement.",
        FutureWarning,
        stacklevel=2,
    )
    return _functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
