"""torch.nn.parallel on one device: DataParallel, DistributedDataParallel (a single-process
group), data_parallel. ember computes on one device per process, so these wrap and forward."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
