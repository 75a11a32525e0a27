"""TransformedDistribution and LogNormal (a Normal pushed through exp)."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .independent import Independent
from .normal import Normal
from .transforms import AbsTransform, ComposeTransform, ExpTransform, Transform
from .utils import _forwarded, _sum_rightmost

__all__ = ["LogNormal", "TransformedDistribution"]


class TransformedDistribution(Distribution):
    r"""Extension of the Distribution class which applies a sequence of Transforms to a base
    distribution. Let f be the composition of transforms applied::

        X ~ BaseDistribution
        Y = f(X) ~ TransformedDistribution(BaseDistribution, f)
        log p(Y) = log p(X) + log |det (dX/dY)|

    Args:
        base_distribution (Distribution): the base distribution.
        transforms (Transform or list of Transform): the transforms, applied in order.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {}

    def __init__(
        self, base_distribution: Distribution, transforms, validate_args: bool | None = None
    ) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(  # noqa: TRY004  (torch raises ValueError)
                f"transforms must be a Transform or list, but was {transforms}"
            )
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(
                f"base_distribution needs to have shape with size at least "
                f"{transform.domain.event_dim}, but got {base_shape}."
            )
        forward_shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(forward_shape)
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[: len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        # the event dim grows by what the transforms add, and is at least the codomain's
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> TransformedDistribution:
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = ember.Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch_shape = shape[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        super(TransformedDistribution, new).__init__(
            batch_shape, self.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    def _expand_transformed(self, cls, batch_shape, _instance, names: tuple = ()):
        """The ``expand`` of a subclass ``cls``: a checked instance whose attributes ``names``
        are expanded to ``batch_shape``, then expanded as a TransformedDistribution."""
        new = self._get_checked_instance(cls, _instance)
        for n in names:
            setattr(new, n, getattr(self, n).expand(batch_shape))
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()) -> ember.Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=()) -> ember.Tensor:
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(
                transform.log_abs_det_jacobian(x, y), event_dim - transform.domain.event_dim
            )
            y = x
        log_prob = log_prob + _sum_rightmost(
            self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape)
        )
        return log_prob

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value


class LogNormal(TransformedDistribution):
    r"""A log-normal distribution parameterized by ``loc`` and ``scale``::

        X ~ Normal(loc, scale)
        Y = exp(X) ~ LogNormal(loc, scale)

    Args:
        loc (float or Tensor): mean of log of distribution.
        scale (float or Tensor): standard deviation of log of the distribution.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LogNormal:
        return self._expand_transformed(LogNormal, batch_shape, _instance)

    loc = _forwarded("base_dist.loc", "Mean of the log of the distribution.")
    scale = _forwarded("base_dist.scale", "Standard deviation of the log of the distribution.")

    @property
    def mean(self) -> ember.Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> ember.Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> ember.Tensor:
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self) -> ember.Tensor:
        return self.base_dist.entropy() + self.loc


class _HalfDistribution(TransformedDistribution):
    r"""``|X|`` for ``X ~ _base(0, scale)``: the shared body of :class:`HalfNormal` and
    :class:`HalfCauchy` (the density, cdf and entropy of a symmetric law folded at 0)."""

    arg_constraints: ClassVar[dict] = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base: type  # the full (symmetric, loc-scale) distribution

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    scale = _forwarded("base_dist.scale", "Scale of the full distribution.")

    @property
    def mode(self) -> ember.Tensor:
        return ember.zeros_like(self.scale)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, log_prob, ember.full_like(log_prob, -math.inf))

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: ember.Tensor) -> ember.Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> ember.Tensor:
        return self.base_dist.entropy() - math.log(2)
