"""torch's legacy tensor types (``torch.FloatTensor``, ``torch.cuda.LongTensor``, ...), which old
scripts still use as constructors, in ``isinstance`` checks and in ``x.type(torch.LongTensor)``.

Each is a class whose instances are plain ember tensors: ``FloatTensor(2, 3)`` makes a float32
tensor of that shape, ``LongTensor([1, 2])`` one holding that data; ``isinstance(x, FloatTensor)``
asks for float32 on the cpu (``cuda.FloatTensor``: on a GPU).
"""

from __future__ import annotations

from . import dtype as _dt
from .tensor import Size, Tensor


class _LegacyMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.is_cuda == cls.is_cuda

    def __repr__(cls) -> str:
        return f"<class '{cls._legacy_name}'>"


class _LegacyTensorType(metaclass=_LegacyMeta):
    dtype: _dt.dtype
    is_cuda: bool
    _legacy_name: str

    def __new__(cls, *args, device=None):
        from .ops.creation import tensor, zeros

        device = device if device is not None else ("cuda" if cls.is_cuda else "cpu")
        if len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], Size):
            return tensor(args[0], dtype=cls.dtype, device=device)
        shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
        if not all(isinstance(s, int) for s in shape):
            raise TypeError(f"{cls._legacy_name}(): expected sizes (ints) or data, got {args!r}")
        return zeros(shape if shape else (0,), dtype=cls.dtype, device=device)


def _types(cuda: bool) -> dict:
    prefix = "torch.cuda." if cuda else "torch."
    out = {}
    for d in _dt.ALL:
        name = _dt.legacy_type_name(d)
        attrs = {"dtype": d, "is_cuda": cuda, "_legacy_name": prefix + name, "__module__": prefix}
        out[name] = _LegacyMeta(name, (_LegacyTensorType,), attrs)
    return out


CPU_TYPES = _types(cuda=False)
CUDA_TYPES = _types(cuda=True)
