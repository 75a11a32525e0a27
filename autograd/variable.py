"""torch.autograd.Variable: the deprecated wrapper. Every tensor is a Variable; calling it
returns a detached alias of the data (requiring grad when asked)."""

from __future__ import annotations

import warnings

from ..core.tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: ``data`` detached, as torch returns it."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                stacklevel=2,
            )
        if data is None:
            from ..core.ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            if not (t.is_floating_point() or t.is_complex()):
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            t.requires_grad_(True)
        return t
