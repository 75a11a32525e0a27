"""Flatten and Unflatten (torch.nn.modules.flatten)."""

from __future__ import annotations

from ...core.tensor import Tensor
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims ``start_dim`` .. ``end_dim`` into one (the batch dim stays by default)."""

    __constants__ = ("start_dim", "end_dim")

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size``; a named ``dim`` takes a named shape
    (((name, size), ...))."""

    __constants__ = ("dim", "unflattened_size")

    def __init__(self, dim, unflattened_size) -> None:
        super().__init__()
        # a named dim takes a named shape (ember keeps named tensors); any other dim is not
        # checked here, as in torch: only the sizes are
        if isinstance(dim, str):
            self._require_tuple_tuple(unflattened_size)
        else:
            self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_tuple(self, input) -> None:
        if isinstance(input, tuple):
            for idx, elem in enumerate(input):
                if not isinstance(elem, tuple):
                    raise TypeError(
                        "unflattened_size must be tuple of tuples, "
                        f"but found element of type {type(elem).__name__} at pos {idx}"
                    )
            return
        raise TypeError(
            f"unflattened_size must be a tuple of tuples, but found type {type(input).__name__}"
        )

    def _require_tuple_int(self, input) -> None:
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError(
                        "unflattened_size must be tuple of ints, "
                        f"but found element of type {type(elem).__name__} at pos {idx}"
                    )
            return
        raise TypeError(
            f"unflattened_size must be a tuple of ints, but found type {type(input).__name__}"
        )

    def forward(self, input: Tensor) -> Tensor:
        # a named shape (((name, size), ...)) goes to unflatten as is: it names the new dims
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
