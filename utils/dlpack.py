"""torch.utils.dlpack: exchange tensors with other array libraries through DLPack."""

from __future__ import annotations

from ..core.ops.creation import from_dlpack
from ..core.tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor: Tensor):
    """A DLPack capsule sharing ``tensor``'s memory (consumed once, by ``from_dlpack``).

    The legacy interface (also ``torch.to_dlpack``): ``from_dlpack(tensor)`` on the tensor
    itself is the idiomatic exchange."""
    if not isinstance(tensor, Tensor):
        raise TypeError(
            "_to_dlpack(): argument 'data' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    # unlike ``__dlpack__``, torch's legacy export takes a tensor that requires grad (as data)
    return tensor._data.__dlpack__()
