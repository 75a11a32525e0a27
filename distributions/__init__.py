r"""ember.distributions: parameterizable probability distributions and sampling functions
(torch.distributions).

Distributions are written in ember ops, so :meth:`~Distribution.log_prob`,
:meth:`~Distribution.entropy`, :func:`kl_divergence` and reparameterized samples
(:meth:`~Distribution.rsample`) are differentiable with respect to the parameters. The
score-function (REINFORCE) estimator uses ``sample`` and ``log_prob``::

    probs = policy_network(state)
    m = Categorical(probs)
    action = m.sample()
    next_state, reward = env.step(action)
    loss = -m.log_prob(action) * reward
    loss.backward()

and the pathwise derivative estimator uses ``rsample``::

    params = policy_network(state)
    m = Normal(*params)
    action = m.rsample()
    next_state, reward = env.step(action)
    loss = -reward
    loss.backward()
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import AffineTransform, ExpTransform, SigmoidTransform, Transform
from .uniform import Uniform

__all__ = [
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "Gamma",
    "Independent",
    "Laplace",
    "LogNormal",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Poisson",
    "SigmoidTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "kl_divergence",
    "register_kl",
    "transforms",
]
