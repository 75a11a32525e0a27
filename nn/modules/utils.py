"""torch.nn.modules.utils: the argument normalisers custom layers import from torch
(``from torch.nn.modules.utils import _pair`` in deformable convolutions, pooling variants, ...)."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A function that turns one value into an ``n``-tuple of it and any iterable into a tuple
    (of whatever length it has: torch does not check it)."""

    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``t`` reversed with each element repeated ``n`` times: a module's (h, w) padding as F.pad's
    (w_left, w_right, h_top, h_bottom)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults) -> list:
    """An adaptive pooling output size with its None entries taken from the input's trailing
    sizes ``defaults``; an int passes through."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    tail = defaults[-len(out_size) :]
    return [d if v is None else v for v, d in zip(out_size, tail)]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place: a
    DistributedDataParallel / DataParallel checkpoint's ``module.`` loaded into a bare model.
    A renamed key moves to the end, as in torch."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix) :]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    root = prefix.replace(".", "")  # the wrapped module's own entry becomes the root's
    for key in list(metadata.keys()):
        if not key:
            continue
        if key == root:
            new = ""
        elif key.startswith(prefix):
            new = key[len(prefix) :]
        else:
            continue
        metadata[new] = metadata.pop(key)
