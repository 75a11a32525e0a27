"""torch.sparse: functions on sparse tensors (``ember.sparse.mm``, ``sum``, ``softmax`` ...).

The tensors themselves (ember.sparse_coo_tensor, Tensor.to_sparse, ...) live in core/sparse.py.
"""

from .core.legacy_types import SPARSE_TYPES as _legacy_types
from .core.sparse_ops import (
    addmm,
    check_sparse_tensor_invariants,
    log_softmax,
    mm,
    softmax,
    spdiags,
    sum,
)

globals().update(_legacy_types)  # torch.sparse.FloatTensor, ... (deprecated constructors)

__all__ = [
    "addmm",
    "check_sparse_tensor_invariants",
    "log_softmax",
    "mm",
    "softmax",
    "spdiags",
    "sum",
]
