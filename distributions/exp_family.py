"""ExponentialFamily: the base class of distributions whose density has the form
``p_F(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``."""

from __future__ import annotations

import ember

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    r"""ExponentialFamily is the abstract base class for probability distributions belonging to
    an exponential family, whose probability mass/density function has the form

    .. math::

        p_{F}(x; \theta) = \exp(\langle t(x), \theta\rangle - F(\theta) + k(x))

    where :math:`\theta` denotes the natural parameters, :math:`t(x)` the sufficient statistic,
    :math:`F(\theta)` the log normalizer function for a given family and :math:`k(x)` the
    carrier measure.

    Subclasses implement ``_natural_params``, ``_log_normalizer`` and
    ``_mean_carrier_measure``; from them the class computes the entropy and KL divergence
    (between two members of one family) as Bregman divergences of the log normalizer
    (Nielsen & Garcia, 2009).
    """

    @property
    def _natural_params(self) -> tuple:
        """The natural parameters of the distribution, a tuple of Tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params) -> ember.Tensor:
        """The log normalizing constant as a function of the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """The expected value of the carrier measure (needed for the entropy)."""
        raise NotImplementedError

    def entropy(self) -> ember.Tensor:
        """The entropy, by the Bregman divergence of the log normalizer:
        ``F(theta) - <theta, grad F(theta)> - E[k(x)]``."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = ember.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
