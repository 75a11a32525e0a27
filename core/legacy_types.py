"""torch's legacy tensor types (``torch.FloatTensor``, ``torch.cuda.LongTensor``, ...), which old
scripts still use as constructors, in ``isinstance`` checks and in ``x.type(torch.LongTensor)``.

Each is a class whose instances are plain ember tensors: ``FloatTensor(2, 3)`` makes a float32
tensor of that shape, ``LongTensor([1, 2])`` one holding that data; ``isinstance(x, FloatTensor)``
asks for float32 on the cpu (``cuda.FloatTensor``: on a GPU).
"""

from __future__ import annotations

import warnings

from . import dtype as _dt
from .tensor import Size, Tensor


class _LegacyMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return (
            isinstance(obj, Tensor)
            and obj.dtype is cls.dtype
            and obj.is_cuda == cls.is_cuda
            and obj.is_sparse == cls.is_sparse
        )

    def __repr__(cls) -> str:
        return f"<class '{cls._legacy_name}'>"


class _LegacyTensorType(metaclass=_LegacyMeta):
    dtype: _dt.dtype
    is_cuda: bool
    is_sparse = False
    _legacy_name: str

    def __new__(cls, *args, device=None):
        from .ops.creation import _tensor, zeros

        device = device if device is not None else ("cuda" if cls.is_cuda else "cpu")
        if cls.is_sparse:
            return _sparse_new(cls, args, device)
        if len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], Size):
            return _tensor(args[0], dtype=cls.dtype, device=device)
        shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
        if not all(isinstance(s, int) for s in shape):
            raise TypeError(f"{cls._legacy_name}(): expected sizes (ints) or data, got {args!r}")
        return zeros(shape if shape else (0,), dtype=cls.dtype, device=device)


def _sparse_new(cls, args, device):
    """torch.sparse.FloatTensor(indices, values, size) or (*sizes): a COO tensor (deprecated in
    torch, with its warning)."""
    from .sparse_factories import sparse_coo_tensor

    what = "indices, values, shape" if args and isinstance(args[0], Tensor) else "shape"
    warnings.warn(
        f"torch.sparse.SparseTensor({what}, *, device=) is deprecated.  Please use "
        f"torch.sparse_coo_tensor({what}, dtype=, device=).",
        UserWarning,
        stacklevel=3,
    )
    if args and isinstance(args[0], Tensor):
        indices, values, *size = args
        values = values.to(cls.dtype)
        return sparse_coo_tensor(indices, values, *size, device=device)
    from .ops.creation import zeros

    size = tuple(args[0]) if len(args) == 1 and not isinstance(args[0], int) else args
    indices = zeros((len(size), 0), dtype=_dt.int64)
    return sparse_coo_tensor(indices, zeros((0,), dtype=cls.dtype), size, device=device)


def _types(cuda: bool, sparse: bool = False) -> dict:
    prefix = "torch." + ("cuda." if cuda else "") + ("sparse." if sparse else "")
    out = {}
    for d in _dt.ALL:
        name = _dt.legacy_type_name(d)
        attrs = {
            "dtype": d,
            "is_cuda": cuda,
            "is_sparse": sparse,
            "_legacy_name": prefix + name,
            "__module__": prefix[:-1],
        }
        out[name] = _LegacyMeta(name, (_LegacyTensorType,), attrs)
    return out


CPU_TYPES = _types(cuda=False)
CUDA_TYPES = _types(cuda=True)
SPARSE_TYPES = _types(cuda=False, sparse=True)
