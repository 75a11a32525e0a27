"""``ember.ops``: ``ember.ops.<namespace>.<op>`` packets and overloads of registered custom
ops, and ``ember.ops.aten.<name>`` resolving to ember's own functions."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types as _pytypes

from ..core.tensor import Tensor
from ._operators import _REGISTRY, OpOverloadPacket


# ----------------------------------------------------------------------------- ember.ops
def _aten(name: str):
    """ember's function for the aten op ``name`` (a function, Tensor method or F function)."""
    import ember

    from ..core.registry import OPS
    from ..nn import functional

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
        from ..dropin import unsupported

        raise unsupported("torch.ops.load_library", "ember cannot load C++ operator libraries")

    def import_module(self, module: str) -> None:
        importlib.import_module(module)


ops = _Ops()
sys.modules[ops.__name__] = ops  # `import ember.ops` (and `import torch.ops` in drop-in mode)
