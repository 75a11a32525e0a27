"""Mixture of distributions of one family (components batched in the last batch dim)."""

from __future__ import annotations

from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    r"""A mixture distribution where all components are from different parameterizations of
    the same distribution type. It is parameterized by a :class:`Categorical` "selecting
    distribution" (over ``k`` components) and a component distribution, i.e., a
    :class:`Distribution` with a rightmost batch shape (equal to ``[k]``) which indexes each
    (batch of) component.

    Examples::

        >>> # a mixture of 5 bivariate normals with diagonal covariances
        >>> mix = D.Categorical(ember.ones(5))
        >>> comp = D.Independent(D.Normal(ember.randn(5, 2), ember.rand(5, 2)), 1)
        >>> gmm = MixtureSameFamily(mix, comp)

    Args:
        mixture_distribution (Categorical): the mixing weights of the components; its
            rightmost batch dims must be compatible with ``component_distribution.batch_shape[:-1]``.
        component_distribution (Distribution): the components, batched in the rightmost batch
            dim.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {}
    has_rsample = False

    def __init__(
        self,
        mixture_distribution: Categorical,
        component_distribution: Distribution,
        validate_args: bool | None = None,
    ) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution

        if not isinstance(self._mixture_distribution, Categorical):
            raise ValueError(  # noqa: TRY004  (torch raises ValueError)
                " The Mixture distribution needs to be an  instance of "
                "torch.distributions.Categorical"
            )
        if not isinstance(self._component_distribution, Distribution):
            raise ValueError(  # noqa: TRY004  (torch raises ValueError)
                "The Component distribution needs to be an instance of "
                "torch.distributions.Distribution"
            )

        # check that the batch shapes broadcast
        mdbs = self._mixture_distribution.batch_shape
        cdbs = self._component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                    "compatible with `component_distribution."
                    f"batch_shape`({cdbs})"
                )

        # check that the number of mixture components matches
        km = self._mixture_distribution.logits.shape[-1]
        kc = self._component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not"
                " equal `component_distribution.batch_shape[-1]`"
                f" ({kc})"
            )
        self._num_component = km

        event_shape = self._component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> MixtureSameFamily:
        batch_shape_comp = ember.Size(batch_shape) + (self._num_component,)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        # the components' event shape, so this mixture's, is kept by the expansion
        new._component_distribution = self._component_distribution.expand(batch_shape_comp)
        return self._expand_params(
            MixtureSameFamily,
            batch_shape,
            new,
            names=("_mixture_distribution",),
            copy=("_num_component", "_event_ndims"),
        )

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        """The Categorical over the components."""
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        """The (batched) component distribution."""
        return self._component_distribution

    @property
    def mean(self) -> ember.Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return ember.sum(probs * self.component_distribution.mean, dim=-1 - self._event_ndims)

    @property
    def variance(self) -> ember.Tensor:
        # law of total variance: Var(Y) = E[Var(Y|X)] + Var(E[Y|X])
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = ember.sum(probs * self.component_distribution.variance, dim=dim)
        var_cond_mean = ember.sum(
            probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0), dim=dim
        )
        return mean_cond_var + var_cond_mean

    def cdf(self, x: ember.Tensor) -> ember.Tensor:
        x = self._pad(x)
        cdf_x = self.component_distribution.cdf(x)
        mix_prob = self.mixture_distribution.probs
        return ember.sum(cdf_x * mix_prob, dim=-1)

    def log_prob(self, x: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self.component_distribution.log_prob(x)  # [S, B, k]
        log_mix_prob = ember.log_softmax(self.mixture_distribution.logits, dim=-1)  # [B, k]
        return ember.logsumexp(log_prob_x + log_mix_prob, dim=-1)  # [S, B]

    def sample(self, sample_shape=()) -> ember.Tensor:
        with no_grad():
            sample_shape = ember.Size(sample_shape)
            sample_len = len(sample_shape)
            batch_len = len(self.batch_shape)
            gather_dim = sample_len + batch_len
            es = self.event_shape

            # mixture samples [n, B] and component samples [n, B, k, E]
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)

            # gather along the k dimension
            mix_sample_r = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            mix_sample_r = mix_sample_r.expand(mix_shape + (1,) + tuple(es))
            # the component batch may broadcast the mixture's batch: match its shape
            target = tuple(comp_samples.shape[:gather_dim]) + (1,) + tuple(es)
            mix_sample_r = mix_sample_r.expand(target)
            samples = ember.gather(comp_samples, gather_dim, mix_sample_r)
            return samples.squeeze(gather_dim)

    def _pad(self, x: ember.Tensor) -> ember.Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: ember.Tensor) -> ember.Tensor:
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    def __repr__(self) -> str:
        args_string = f"\n  {self.mixture_distribution},\n  {self.component_distribution}"
        return "MixtureSameFamily" + "(" + args_string + ")"
