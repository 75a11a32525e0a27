"""Independent: reinterpret batch dims of a distribution as event dims."""

from __future__ import annotations

from typing import ClassVar

import ember

from . import constraints
from .distribution import Distribution
from .utils import _sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    r"""Reinterprets some of the batch dims of a distribution as event dims.

    This is mainly useful for changing the shape of the result of :meth:`log_prob`. For example,
    to create a diagonal Normal distribution with the same shape as a Multivariate Normal
    distribution (so they are interchangeable)::

        >>> loc = ember.zeros(3)
        >>> scale = ember.ones(3)
        >>> normal = Normal(loc, scale)
        >>> [normal.batch_shape, normal.event_shape]
        [ember.Size([3]), ember.Size([])]
        >>> diagn = Independent(normal, 1)
        >>> [diagn.batch_shape, diagn.event_shape]
        [ember.Size([]), ember.Size([3])]

    Args:
        base_distribution (Distribution): a base distribution.
        reinterpreted_batch_ndims (int): the number of batch dims to reinterpret as event dims.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {}

    def __init__(
        self,
        base_distribution: Distribution,
        reinterpreted_batch_ndims: int,
        validate_args: bool | None = None,
    ) -> None:
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}"
            )
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        batch_shape = shape[: len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim :]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Independent:
        new = self._get_checked_instance(Independent, _instance)
        new.base_dist = self.base_dist.expand(
            ember.Size(batch_shape) + self.event_shape[: self.reinterpreted_batch_ndims]
        )
        return self._expand_params(
            Independent, batch_shape, new, copy=("reinterpreted_batch_ndims",)
        )

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self) -> ember.Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> ember.Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> ember.Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape=()) -> ember.Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        log_prob = self.base_dist.log_prob(value)
        return _sum_rightmost(log_prob, self.reinterpreted_batch_ndims)

    def entropy(self) -> ember.Tensor:
        entropy = self.base_dist.entropy()
        return _sum_rightmost(entropy, self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> ember.Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return self.__class__.__name__ + f"({self.base_dist}, {self.reinterpreted_batch_ndims})"
