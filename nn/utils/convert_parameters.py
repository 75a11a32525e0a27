"""Flatten parameters into one vector and back (parameters_to_vector / vector_to_parameters)."""

from __future__ import annotations

from collections.abc import Iterable

from ...core.ops.joining import cat
from ...core.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param, old):
    dev = param.device
    if old is None:
        return dev
    if dev != old:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return old


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter's values, flattened and concatenated in order."""
    dev = None
    vec = []
    for p in parameters:
        dev = _check_device(p, dev)
        # the vector's one dim is new (unnamed, spec 4.3): parameters' names neither name it nor
        # have to agree with each other
        vec.append((p if p._names is None else p.rename(None)).view(-1))
    return cat(vec)


def _typename(o) -> str:
    t = type(o)
    mod = t.__module__
    return t.__qualname__ if mod in (None, "builtins") else f"{mod}.{t.__qualname__}"


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of the 1-D ``vec`` into ``parameters`` (their ``.data`` becomes views of it)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    dev = None
    pointer = 0
    for p in parameters:
        dev = _check_device(p, dev)
        n = p.numel()
        d = vec[pointer : pointer + n].view_as(p).data
        if p._names is not None:  # a parameter keeps its dims' names (spec 4.3, 4.9)
            d = d.rename(*p._names)
        p.data = d
        pointer += n
