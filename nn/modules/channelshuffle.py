"""ChannelShuffle (torch.nn.modules.channelshuffle)."""

from __future__ import annotations

from ...core.ops.vision import channel_shuffle
from ...core.tensor import Tensor
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Splits the channels into ``groups`` and interleaves them (ShuffleNet)."""

    __constants__ = ("groups",)

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
