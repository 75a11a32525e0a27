"""torch.utils.tensorboard: ``SummaryWriter`` writing scalars to ``scalars.csv`` in its log dir."""

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
