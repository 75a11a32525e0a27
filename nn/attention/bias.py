"""torch.nn.attention.bias: causal masks that SDPA understands without a float mask.

A ``CausalBias`` is a boolean tensor (True = the query may attend to the key) of shape
(seq_len_q, seq_len_kv); ``F.scaled_dot_product_attention`` runs the upper-left variant as
``is_causal=True`` (no mask is read) and the lower-right one as a boolean mask.
"""

from __future__ import annotations

import warnings
from enum import IntEnum

from ...core.tensor import Tensor
from ...core.torch_function import _disabled_torch_function_impl

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class _TorchIntEnum(IntEnum):
    """An IntEnum that prints like torch's: ``<Name.MEMBER: value>`` and ``Name.MEMBER``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class CausalVariant(_TorchIntEnum):
    """Where the causal diagonal starts when seq_len_q != seq_len_kv.

    UPPER_LEFT: query i attends to keys j <= i. LOWER_RIGHT: the diagonal ends at the bottom-right
    corner, query i attends to keys j <= i + (seq_len_kv - seq_len_q)."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


def _materialize(variant, q: int, kv: int, device=None):
    from ...core.ops.creation import ones

    m = ones((q, kv), dtype="bool", device=device)
    diag = 0 if variant == CausalVariant.UPPER_LEFT else kv - q
    return m.tril(diag)


class CausalBias(Tensor):
    """A causal attention mask of shape (seq_len_q, seq_len_kv) (see :class:`CausalVariant`)."""

    # ops on it give plain Tensors (never dispatched: a cached per-type check)
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, variant: CausalVariant, seq_len_q: int, seq_len_kv: int):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(  # noqa: TRY004  (torch's error type)
                f"variant must be a CausalVariant, got {type(variant).__name__}"
            )
        t = Tensor._make_subclass(cls, _materialize(variant, seq_len_q, seq_len_kv))
        t.variant = variant
        t.seq_len_q = seq_len_q
        t.seq_len_kv = seq_len_kv
        return t

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        pass

    def _materialize(self, device=None) -> Tensor:
        """The mask as a plain boolean tensor (True = attend)."""
        return _materialize(self.variant, self.seq_len_q, self.seq_len_kv, device)

    def __repr__(self) -> str:
        return repr(self._materialize())


def causal_upper_left(*size: int) -> CausalBias:
    """A causal bias whose diagonal starts at the top-left corner: ``causal_upper_left(q, kv)``."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size: int) -> CausalBias:
    """A causal bias whose diagonal ends at the bottom-right corner."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    q, kv = size
    if q > kv:
        warnings.warn(
            "Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
            stacklevel=2,
        )
    return CausalBias(CausalVariant.LOWER_RIGHT, q, kv)
