"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections import abc as container_abcs
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any

from ...core.tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent, _deprecated_module, _typename

__all__ = ["Container", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


@_deprecated_module(
    "`nn.Container` is deprecated. "
    "All of its functionality is now implemented in `nn.Module`. Subclass that instead."
)
class Container(Module):
    """Deprecated: a Module that adds every keyword argument as a child."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


def _renumber(module: Module) -> None:
    # after a deletion the children are renumbered 0..n-1, keeping their order
    module._modules = OrderedDict((str(i), m) for i, m in enumerate(module._modules.values()))


class Sequential(Module):
    """Modules run one after the other: ``Sequential(m1, m2, ...)`` or
    ``Sequential(OrderedDict(name=module, ...))``."""

    _modules: dict

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            key = self._get_item_by_idx(self._modules.keys(), idx)
            delattr(self, key)
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other) -> Sequential:
        if isinstance(other, Sequential):
            ret = Sequential()
            for layer in self:
                ret.append(layer)
            for layer in other:
                ret.append(layer)
            return ret
        raise ValueError(
            f"add operator supports only objects of Sequential class, but {type(other)!s} is given."
        )

    def pop(self, key):
        """Remove and return the module at index ``key``."""
        v = self[key]
        del self[key]
        return v

    def __iadd__(self, other) -> Sequential:  # noqa: PYI034
        if isinstance(other, Sequential):
            offset = len(self)
            for i, module in enumerate(other):
                self.add_module(str(i + offset), module)
            return self
        raise ValueError(
            f"add operator supports only objects of Sequential class, but {type(other)!s} is given."
        )

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int) -> Sequential:  # noqa: PYI034
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        len_original = len(self)
        offset = len(self)
        for _ in range(other - 1):
            for i in range(len_original):
                self.add_module(str(i + offset), self._modules[str(i)])
            offset += len_original
        return self

    def __dir__(self) -> list:
        return [key for key in super().__dir__() if not key.isdigit()]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")  # noqa: TRY004
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of ``sequential``."""
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


def _compressed_repr(self: Module) -> str:
    """ModuleList's repr: runs of equal children print once as ``(i-j): n x child``."""
    list_of_reprs = [repr(item) for item in self]
    if len(list_of_reprs) == 0:
        return self._get_name() + "()"
    start_end_indices = [[0, 0]]
    repeated_blocks = [list_of_reprs[0]]
    for i, r in enumerate(list_of_reprs[1:], 1):
        if r == repeated_blocks[-1]:
            start_end_indices[-1][1] += 1
            continue
        start_end_indices.append([i, i])
        repeated_blocks.append(r)
    lines = []
    main_str = self._get_name() + "("
    for (start_id, end_id), b in zip(start_end_indices, repeated_blocks):
        local_repr = f"({start_id}): {b}"
        if start_id != end_id:
            n = end_id - start_id + 1
            local_repr = f"({start_id}-{end_id}): {n} x {b}"
        lines.append(_addindent(local_repr, 2))
    main_str += "\n  " + "\n  ".join(lines) + "\n"
    main_str += ")"
    return main_str


class ModuleList(Module):
    """A list of submodules (registered, so their parameters are the list's)."""

    _modules: dict

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx) -> str:
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        idx = self._get_abs_string_index(idx)
        setattr(self, str(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:  # noqa: PYI034
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    __repr__ = _compressed_repr

    def __dir__(self) -> list:
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove and return the module at index ``key``."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of ``modules``."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of submodules (registered)."""

    _modules: dict

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every item."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under ``key``."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """Add the modules of a mapping or of an iterable of ``(key, module)`` pairs."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an "
                "iterable of key/value pairs, but got " + type(modules).__name__
            )
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
        else:
            _set_pairs(self, modules, "ModuleDict")


def _set_pairs(target, pairs, kind: str) -> None:
    """Assign each ``(key, value)`` element of ``pairs`` into ``target`` in order, raising
    (torch's messages) on an element that is not an iterable of length 2."""
    for j, m in enumerate(pairs):
        if not isinstance(m, container_abcs.Iterable):
            raise TypeError(
                f"{kind} update sequence element #{j} should be Iterable; is{type(m).__name__}"
            )
        if not len(m) == 2:
            raise ValueError(
                f"{kind} update sequence element #{j} has length {len(m)}; 2 is required"
            )
        target[m[0]] = m[1]


def _param_line(k, p, type_str) -> str:
    if isinstance(p, Tensor):
        size_str = "x".join(str(size) for size in p.size())
        device_str = f" ({p.device})" if p.device.type == "cuda" else ""
        parastr = "{} containing: [{} of size {}{}]".format(
            "Parameter" if isinstance(p, Parameter) else "Tensor",
            type_str(p),
            size_str,
            device_str,
        )
        return "  (" + str(k) + "): " + parastr
    return "  (" + str(k) + "): Object of type: " + type(p).__name__


class ParameterList(Module):
    """A list of parameters (tensors are wrapped as Parameters; other objects are kept)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    _get_abs_string_index = ModuleList._get_abs_string_index

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(len(self))
            out = self.__class__()
            for i in range(start, stop, step):
                out.append(self[i])
            return out
        idx = self._get_abs_string_index(idx)
        return getattr(self, str(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        idx = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:  # noqa: PYI034
        return self.extend(parameters)

    def __dir__(self) -> list:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a tensor becomes a Parameter)."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every item of ``values``."""
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, lambda t: t.dtype) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (tensors are wrapped as Parameters; a plain dict is added
    in sorted key order, like torch)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is "
                f"not a string (type is '{type(key).__name__}'). Open an issue on "
                "github if you need non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        attr = self._key_to_attr(key)
        return getattr(self, attr)

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        attr = self._key_to_attr(key)
        delattr(self, attr)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def copy(self) -> ParameterDict:
        """A shallow copy (the same Parameter objects)."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        k, _ = self._keys.popitem()
        self._keys[k] = None  # still needed to read and delete the entry
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Add the entries of a mapping or of an iterable of ``(key, value)`` pairs."""
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an "
                "iterable of key/value pairs, but got " + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            _set_pairs(self, parameters, "ParameterDict")

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, _typename) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:  # noqa: PYI034
        self.update(other)
        return self
