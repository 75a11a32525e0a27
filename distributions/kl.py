"""KL divergence: ``kl_divergence(p, q)`` dispatching on the pair of types, and ``register_kl``."""

from __future__ import annotations

import math
import warnings

import ember
import ember.nn.functional as F

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> fn
_KL_MEMOIZE: dict = {}  # (type_p, type_q) -> the most specific registered fn, or NotImplemented


def register_kl(type_p: type, type_q: type):
    """Decorator to register a pairwise function with :meth:`kl_divergence`.

    Usage::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q):
            # insert implementation here

    Lookup returns the most specific (type, type) match ordered by subclass. If the match is
    ambiguous, a ``RuntimeWarning`` is raised.

    Args:
        type_p (type): a subclass of :class:`~ember.distributions.Distribution`.
        type_q (type): a subclass of :class:`~ember.distributions.Distribution`.
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


def _distance(sub: type, sup: type) -> int:
    return sub.__mro__.index(sup)


def _dispatch_kl(type_p: type, type_q: type):
    """The registered function for the most specific registered pair above (type_p, type_q)."""
    matches = [
        (sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)
    ]
    if not matches:
        return NotImplemented
    # lexicographic on (p distance, q distance) and on (q distance, p distance): two orderings
    left = min(matches, key=lambda m: (_distance(type_p, m[0]), _distance(type_q, m[1])))
    right = min(matches, key=lambda m: (_distance(type_q, m[1]), _distance(type_p, m[0])))
    left_fun, right_fun = _KL_REGISTRY[left], _KL_REGISTRY[right]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl("
            f"{left[0].__name__}, {right[1].__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> ember.Tensor:
    r"""The Kullback-Leibler divergence :math:`KL(p \| q)` between two distributions:

    .. math::

        KL(p \| q) = \int p(x) \log\frac {p(x)} {q(x)} \,dx

    Args:
        p (Distribution): a :class:`~ember.distributions.Distribution` object.
        q (Distribution): a :class:`~ember.distributions.Distribution` object.

    Returns:
        Tensor: a batch of KL divergences of shape ``batch_shape``.

    Raises:
        NotImplementedError: if the distribution types have not been registered via
            :meth:`register_kl`.
    """
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(type(p), type(q))
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
            f"{q.__class__.__name__}"
        )
    return fun(p, q)


def _masked(t: ember.Tensor, mask: ember.Tensor, fill: float) -> ember.Tensor:
    return ember.where(mask, ember.full_like(t, fill), t)


# ------------------------------------------------------------------------ same-family pairs
@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = _masked(t1, q.probs == 0, math.inf)
    t1 = _masked(t1, p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = _masked(t2, q.probs == 1, math.inf)
    t2 = _masked(t2, p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_params_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_params_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * ember.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ember.digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * ember.digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _masked(kl, p.total_count > q.total_count, math.inf)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _masked(t, q.probs == 0, math.inf)
    t = _masked(t, p.probs == 0, 0.0)
    return t.sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = sum_p_concentration.lgamma() - sum_q_concentration.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p_concentration.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    t1 = -rate_ratio.log()
    return t1 + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * ember.log(p.rate / q.rate)
    t2 = ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ember.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * ember.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_KL_LOWRANK_MSG.format(""))  # torch's message, its gap included
    pL, qL = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = qL.diagonal(dim1=-2, dim2=-1).log().sum(-1) - pL.diagonal(
        dim1=-2, dim2=-1
    ).log().sum(-1)
    combined_batch_shape = ember.broadcast_shapes(tuple(qL.shape[:-2]), tuple(pL.shape[:-2]))
    n = p.event_shape[0]
    q_scale_tril = qL.expand(tuple(combined_batch_shape) + (n, n))
    p_scale_tril = pL.expand(tuple(combined_batch_shape) + (n, n))
    # tr(Sigma_q^-1 Sigma_p) = ||L_q^-1 L_p||_F^2
    term2 = (
        ember.linalg.solve_triangular(q_scale_tril, p_scale_tril, upper=False).pow(2).sum((-2, -1))
    )
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _masked(result, (q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


# ------------------------------------------------------------------------ mixed pairs
@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = ember.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * ember.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * ember.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = (common_term).pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ember.log(ratio)
    return (
        t1
        + ratio
        + q.concentration.lgamma()
        + q.concentration * 0.57721566490153286060
        - (1 + 0.57721566490153286060)
    )


# ------------------------------------------------------------------------ newer families
@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # closed form (Chyzak & Nielsen, 2019)
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ember.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ember.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # E_p[x] = 1/p - 1, so -E_p[log q(x)] = -log(1 - q)/p - logit(q)
    return -p.entropy() - ember.log1p(-q.probs) / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = ember.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    return 0.5 * (var_ratio - 1 - var_ratio.log())


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return _masked(result, p.scale < q.scale, math.inf)


def _mvn_half_logdet(d) -> ember.Tensor:
    if isinstance(d, LowRankMultivariateNormal):
        return 0.5 * _batch_lowrank_logdet(
            d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril
        )
    return d._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _kl_gaussian_gaussian(p, q, msg: str):
    r"""KL between two full-rank Gaussians (MultivariateNormal or LowRankMultivariateNormal):
    ``log|Sq|/2 - log|Sp|/2 + (tr(Sq^-1 Sp) + mahalanobis_q(mq - mp) - n) / 2``."""
    if p.event_shape != q.event_shape:
        raise ValueError(msg)
    n = p.event_shape[0]
    diff = q.loc - p.loc
    if isinstance(q, LowRankMultivariateNormal):
        W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
        mahalanobis = _batch_lowrank_mahalanobis(W, D, diff, q._capacitance_tril)
        # tr(Sq^-1 Sp) with Sq^-1 by Woodbury
        trace = (q.precision_matrix * p.covariance_matrix).sum((-2, -1))
    else:
        qL = q._unbroadcasted_scale_tril
        mahalanobis = _batch_mahalanobis(qL, diff)
        pL = p.scale_tril
        batch = ember.broadcast_shapes(tuple(qL.shape[:-2]), tuple(pL.shape[:-2]))
        sol = ember.linalg.solve_triangular(
            qL.expand(tuple(batch) + (n, n)), pL.expand(tuple(batch) + (n, n)), upper=False
        )
        trace = sol.pow(2).sum((-2, -1))
    return _mvn_half_logdet(q) - _mvn_half_logdet(p) + 0.5 * (trace + mahalanobis - n)


# torch's message, including the run of spaces its line continuation leaves in it
_KL_LOWRANK_MSG = (
    "KL-divergence between two {}Multivariate Normals with" + " " * 26 + "different event "
    "shapes cannot be computed"
)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    return _kl_gaussian_gaussian(p, q, _KL_LOWRANK_MSG.format("Low Rank "))


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    return _kl_gaussian_gaussian(p, q, _KL_LOWRANK_MSG.format("(Low Rank) "))


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    return _kl_gaussian_gaussian(p, q, _KL_LOWRANK_MSG.format("(Low Rank) "))


# ------------------------------------------------------------------------ mixed, by moments
def _kl_to_normal(p, q):
    # -H(p) - E_p[log q(x)], with E_p[(x - mu)^2] = Var_p + (E_p[x] - mu)^2
    return (
        -p.entropy()
        + (math.sqrt(2 * math.pi) * q.scale).log()
        + (p.variance + (p.mean - q.loc).pow(2)) / (2 * q.scale.pow(2))
    )


def _kl_to_exponential(p, q):
    # nonnegative support: -H(p) - log(rate) + rate * E_p[x]
    return -p.entropy() - q.rate.log() + q.rate * p.mean


def _kl_real_support_to_positive(p, q):
    # p puts mass on negative numbers, where q has none
    return ember.full(
        tuple(ember.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))),
        math.inf,
        dtype=p.mean.dtype,
        device=p.mean.device,
    )


for _p in (Beta, ContinuousBernoulli, Exponential, Gamma, Gumbel, Laplace):
    register_kl(_p, Normal)(_kl_to_normal)
for _p in (Beta, ContinuousBernoulli, Gamma):
    register_kl(_p, Exponential)(_kl_to_exponential)
for _p in (Gumbel, Laplace, Normal):
    register_kl(_p, Exponential)(_kl_real_support_to_positive)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _masked(result, p.low < 0, math.inf)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return (1 - p.probs) * (ember.log1p(-p.probs) + q.rate) + p.probs * (
        p.probs.log() + q.rate - q.rate.log()
    )


# ------------------------------------------------------------------------ more mixed pairs
def _inf_like(t: ember.Tensor) -> ember.Tensor:
    return ember.full_like(t, math.inf)


def _infinite(param: str):
    """KL(p || q) = inf for every p: q has no mass where p has (support mismatch). The result
    has the shape of p's parameter ``param``, like torch's."""

    def kl(p, q):
        return _inf_like(getattr(p, param))

    return kl


for _p, _param, _qs in (
    (Beta, "concentration1", (Pareto,)),
    (ContinuousBernoulli, "probs", (Pareto,)),
    (Exponential, "rate", (Beta, ContinuousBernoulli, Pareto, Uniform)),
    (Gamma, "concentration", (Beta, ContinuousBernoulli, Pareto, Uniform)),
    (Gumbel, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (Laplace, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (Normal, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (Pareto, "scale", (Beta, ContinuousBernoulli, Uniform)),
):
    for _q in _qs:
        register_kl(_p, _q)(_infinite(_param))


def _e_log_q_gamma(q, mean, mean_log):
    # E_p[log q(x)] for q = Gamma(a, b), from E_p[x] and E_p[log x]
    a, b = q.concentration, q.rate
    return a * b.log() + (a - 1) * mean_log - b * mean - a.lgamma()


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    mean_log = p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()
    return -p.entropy() - _e_log_q_gamma(q, p.mean, mean_log)


def _pareto_safe(p, min_alpha: float):
    """(finite mask, Pareto moments with alpha replaced where alpha <= min_alpha): the KL is
    infinite there, and the substitution keeps inf/NaN out of the gradients."""
    finite = p.alpha > min_alpha
    a = ember.where(finite, p.alpha, ember.full_like(p.alpha, min_alpha + 1.0))
    s = p.scale
    entropy = (s / a).log() + (1 + a.reciprocal())
    mean = a * s / (a - 1)
    return finite, a, entropy, mean


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    finite, a, entropy, mean = _pareto_safe(p, 1.0)
    mean_log = p.scale.log() + a.reciprocal()
    result = -entropy - _e_log_q_gamma(q, mean, mean_log)
    return _masked(result, ~finite, math.inf)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    finite, _, entropy, mean = _pareto_safe(p, 1.0)
    result = -entropy - q.rate.log() + q.rate * mean
    return _masked(result, ~finite, math.inf)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    finite, a, entropy, mean = _pareto_safe(p, 2.0)
    variance = p.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))
    result = (
        -entropy
        + (math.sqrt(2 * math.pi) * q.scale).log()
        + (variance + (mean - q.loc).pow(2)) / (2 * q.scale.pow(2))
    )
    return _masked(result, ~finite, math.inf)


def _e_log_q_cont_bern(q, mean):
    # log q(x) = x log(q) + (1 - x) log(1 - q) + log C(q)
    return mean * q.logits + ember.log1p(-q.probs) + q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - _e_log_q_cont_bern(q, p.mean)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _masked(result, (q.low > 0) | (q.high < 1), math.inf)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _masked(result, (q.low > 0) | (q.high < 1), math.inf)


def _kl_to_gumbel(p, q, mean, mgf_neg):
    # log q(x) = -log s + z - exp(z), z = (loc - x) / s; E_p[exp(z)] = exp(loc / s) E_p[e^(-x/s)]
    e_z = (q.loc - mean) / q.scale
    e_exp_z = (q.loc / q.scale).exp() * mgf_neg
    return -p.entropy() + q.scale.log() - e_z + e_exp_z


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    mgf = p.rate / (p.rate + q.scale.reciprocal())
    return _kl_to_gumbel(p, q, p.mean, mgf)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    mgf = (p.rate / (p.rate + q.scale.reciprocal())).pow(p.concentration)
    return _kl_to_gumbel(p, q, p.mean, mgf)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mgf = (-p.loc / q.scale + 0.5 * (p.scale / q.scale).pow(2)).exp()
    return _kl_to_gumbel(p, q, p.loc, mgf)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    s = q.scale
    mgf = s * ((-p.low / s).exp() - (-p.high / s).exp()) / (p.high - p.low)
    return _kl_to_gumbel(p, q, p.mean, mgf)


def _uniform_mean_xlogx(p, x_low, x_high):
    # E[log y] for y = x uniform on (x_low, x_high): (h log h - l log l) / (h - l) - 1
    return (ember.xlogy(x_high, x_high) - ember.xlogy(x_low, x_low)) / (x_high - x_low) - 1


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    mean_log = _uniform_mean_xlogx(p, p.low, p.high)
    mean_log1m = _uniform_mean_xlogx(p, 1 - p.high, 1 - p.low)
    a, b = q.concentration1, q.concentration0
    log_beta = a.lgamma() + b.lgamma() - (a + b).lgamma()
    result = -p.entropy() - ((a - 1) * mean_log + (b - 1) * mean_log1m - log_beta)
    return _masked(result, (p.high > 1) | (p.low < 0), math.inf)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - _e_log_q_cont_bern(q, p.mean)
    return _masked(result, (p.high > 1) | (p.low < 0), math.inf)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    mean_log = _uniform_mean_xlogx(p, p.low, p.high)
    result = -p.entropy() - _e_log_q_gamma(q, p.mean, mean_log)
    return _masked(result, p.low < 0, math.inf)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    # log q(x) = log(alpha) + alpha log(scale) - (alpha + 1) log x on x >= scale
    mean_log = _uniform_mean_xlogx(p, p.low, p.high)
    e_log_q = q.alpha.log() + q.alpha * q.scale.log() - (q.alpha + 1) * mean_log
    result = -p.entropy() - e_log_q
    return _masked(result, p.low < q.scale, math.inf)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _inf_like(p.rate)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # Bregman divergence of the log normalizer: F(tq) - F(tp) - <tq - tp, grad F(tp)>
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot"
            + " " * 29
            + "be computed using Bregman divergences"
        )
    p_nparams = list(p._natural_params)
    q_nparams = q._natural_params
    with ember.enable_grad():
        # differentiate at p's own natural parameters (not detached copies, unlike torch), so
        # the divergence also has gradients with respect to p's parameters
        leaves = [t if t.requires_grad else t.detach().requires_grad_() for t in p_nparams]
        lg_normal = p._log_normalizer(*leaves)
        gradients = ember.autograd.grad(lg_normal.sum(), leaves, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    batch_shape = tuple(result.shape)
    for pnp, qnp, g in zip(leaves, q_nparams, gradients):
        # <tq - tp, grad F(tp)>: sum each parameter over its own (non-batch) dims
        term = (qnp - pnp) * g
        result = result - term.reshape(batch_shape + (-1,)).sum(-1)
    return result
