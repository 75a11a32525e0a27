"""torch.utils.dlpack: exchange tensors with other array libraries through DLPack."""

from __future__ import annotations

from ..core.ops.creation import from_dlpack
from ..core.tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor: Tensor):
    """A DLPack capsule sharing ``tensor``'s memory (consumed once, by ``from_dlpack``)."""
    return tensor.__dlpack__()
