"""torch.types: the type aliases of torch's annotations (bound as ``ember.types``; the file's
underscore keeps it from shadowing Python's own ``types`` module when the repo root is on
sys.path)."""

from __future__ import annotations

import os
import sys as _sys
from collections.abc import Sequence
from typing import IO, Union

from .core.device import device as _device
from .core.dtype import dtype as _dtype  # noqa: F401 - torch.types._dtype
from .core.layout import layout as _layout  # noqa: F401 - torch.types._layout
from .core.storage import UntypedStorage as Storage
from .core.symbolic import SymBool, SymFloat, SymInt
from .core.tensor import Size, Tensor

__all__ = [
    "BoolLikeType",
    "Device",
    "FileLike",
    "FloatLikeType",
    "IntLikeType",
    "Number",
    "Size",
    "Storage",
    "SymBool",
    "SymFloat",
    "SymInt",
    "Tensor",
]

Number = int | float | bool
Device = _device | str | int | None
FileLike = Union[str, os.PathLike, IO[bytes]]  # noqa: UP007 - IO is not a type in a `|` union
IntLikeType = int | SymInt
FloatLikeType = float | SymFloat
BoolLikeType = bool | SymBool
py_sym_types = (SymInt, SymFloat, SymBool)
_size = Size | list[int] | tuple[int, ...]
_TensorOrTensors = Tensor | Sequence[Tensor]
_bool, _int, _float, _complex = bool, int, float, complex

_sys.modules[__name__[:-1]] = _sys.modules[__name__]  # `import ember.types`
