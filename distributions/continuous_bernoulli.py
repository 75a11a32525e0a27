"""Continuous Bernoulli distribution."""

from __future__ import annotations

import math
from typing import ClassVar

import ember
import ember.nn.functional as F

from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _ProbsOrLogitsParam, broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_ProbsOrLogitsParam, ExponentialFamily):
    r"""A continuous Bernoulli distribution parameterized by :attr:`probs` or :attr:`logits`
    (but not both), supported on [0, 1] (Loaiza-Ganem and Cunningham, 2019).

    The distribution is parameterized by :attr:`probs` in (0, 1) and is not the mean of the
    distribution. Near ``probs == 0.5`` (inside ``lims``) the normalizing constant and moments
    are evaluated by Taylor expansions, where the closed forms are numerically unstable.

    Example::

        >>> m = ContinuousBernoulli(ember.tensor([0.3]))
        >>> m.sample()
        tensor([ 0.2538])

    Args:
        probs (Number, Tensor): (0,1) valued parameters.
        logits (Number, Tensor): real valued parameters whose sigmoid matches 'probs'.
        lims (tuple): the interval around 0.5 where the Taylor expansions are used.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(
        self, probs=None, logits=None, lims=(0.499, 0.501), validate_args: bool | None = None
    ) -> None:
        batch_shape = self._set_probs_or_logits(probs, logits).size()
        if probs is not None:
            # validate before clamping: the clamped probs always satisfy the constraint
            if validate_args is not None and not bool(
                self.arg_constraints["probs"].check(self.probs).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> ContinuousBernoulli:
        return self._expand_probs_or_logits(
            ContinuousBernoulli, batch_shape, _instance, copy=("_lims",)
        )

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return ember.where(
            self._outside_unstable_region(),
            self.probs,
            self._lims[0] * ember.ones_like(self.probs),
        )

    def _cont_bern_log_norm(self):
        """The log normalizing constant, as a function of probs."""
        cut_probs = self._cut_probs()
        below = cut_probs <= 0.5
        cut_probs_below_half = ember.where(below, cut_probs, ember.zeros_like(cut_probs))
        cut_probs_above_half = ember.where(cut_probs >= 0.5, cut_probs, ember.ones_like(cut_probs))
        log_norm = ember.log(
            ember.abs(ember.log1p(-cut_probs) - ember.log(cut_probs))
        ) - ember.where(
            below,
            ember.log1p(-2.0 * cut_probs_below_half),
            ember.log(2.0 * cut_probs_above_half - 1.0),
        )
        x = ember.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> ember.Tensor:
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (
            ember.log1p(-cut_probs) - ember.log(cut_probs)
        )
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * ember.pow(x, 2)) * x
        return ember.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> ember.Tensor:
        return ember.sqrt(self.variance)

    @property
    def variance(self) -> ember.Tensor:
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / ember.pow(
            1.0 - 2.0 * cut_probs, 2
        ) + 1.0 / ember.pow(ember.log1p(-cut_probs) - ember.log(cut_probs), 2)
        x = ember.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def probs(self) -> ember.Tensor:
        """(0, 1)-valued parameters."""
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (
            -F.binary_cross_entropy_with_logits(logits, value, reduction="none")
            + self._cont_bern_log_norm()
        )

    def cdf(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (
            ember.pow(cut_probs, value) * ember.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0
        ) / (2.0 * cut_probs - 1.0)
        unbounded_cdfs = ember.where(self._outside_unstable_region(), cdfs, value)
        return ember.where(
            value <= 0.0,
            ember.zeros_like(value),
            ember.where(value >= 1.0, ember.ones_like(value), unbounded_cdfs),
        )

    def icdf(self, value: ember.Tensor) -> ember.Tensor:
        cut_probs = self._cut_probs()
        return ember.where(
            self._outside_unstable_region(),
            (ember.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - ember.log1p(-cut_probs))
            / (ember.log(cut_probs) - ember.log1p(-cut_probs)),
            value,
        )

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x):
        # log((e^x - 1) / x), with its Taylor expansion near x = 0 (probs near 1/2)
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = ember.where(out_unst_reg, x, (self._lims[0] - 0.5) * ember.ones_like(x))
        log_norm = ember.log(ember.abs(ember.exp(cut) - 1.0)) - ember.log(ember.abs(cut))
        taylor = 0.5 * x + ember.pow(x, 2) / 24.0 - ember.pow(x, 4) / 2880.0
        return ember.where(out_unst_reg, log_norm, taylor)

    def entropy(self) -> ember.Tensor:
        log_probs0 = ember.log1p(-self.probs)
        log_probs1 = ember.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0
