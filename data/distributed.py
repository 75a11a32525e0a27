"""torch.utils.data.distributed: DistributedSampler (defined with the other samplers)."""

from .sampler import DistributedSampler

__all__ = ["DistributedSampler"]
