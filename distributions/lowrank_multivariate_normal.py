"""Multivariate normal with a low-rank-plus-diagonal covariance."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _unnamed_last(t: ember.Tensor) -> ember.Tensor:
    """``t`` with its last dim unnamed: the right operand of a Gram product ``A @ B`` whose two
    dims index the same thing (``W W^T``: both the event dim), which may carry its name once."""
    n = t._names
    return t if n is None else t.rename(*n[:-1], None)


def _batch_capacitance_tril(W: ember.Tensor, D: ember.Tensor) -> ember.Tensor:
    r"""Cholesky of the capacitance matrix :math:`I + W^T D^{-1} W` (batched W, D)."""
    m = W.size(-1)
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = ember.matmul(Wt_Dinv, _unnamed_last(W)) + ember.eye(m, dtype=W.dtype, device=W.device)
    return ember.linalg.cholesky(K)


def _batch_lowrank_logdet(W, D, capacitance_tril) -> ember.Tensor:
    r"""``log det(W W^T + D)`` by the matrix determinant lemma:
    ``log det(C) + log det(D)`` with C the capacitance matrix."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril) -> ember.Tensor:
    r"""The squared Mahalanobis distance :math:`x^T (W W^T + D)^{-1} x` by the Woodbury identity:
    ``x^T D^-1 x - ||L^-1 W^T D^-1 x||^2`` with L the capacitance's Cholesky factor."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x.pow(2) / D).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    r"""A multivariate normal distribution with covariance matrix having a low-rank form
    parameterized by ``cov_factor`` and ``cov_diag``::

        covariance_matrix = cov_factor @ cov_factor.T + cov_diag

    Example::

        >>> m = LowRankMultivariateNormal(
        ...     ember.zeros(2), ember.tensor([[1.0], [0.0]]), ember.ones(2)
        ... )
        >>> m.sample()  # normally distributed with mean=`[0,0]`, cov_factor=`[[1],[0]]`,
        >>> # cov_diag=`[1,1]`
        tensor([-0.2102, -0.5429])

    Args:
        loc (Tensor): mean of the distribution with shape `batch_shape + event_shape`.
        cov_factor (Tensor): factor part of low-rank form of covariance matrix with shape
            `batch_shape + event_shape + (rank,)`.
        cov_diag (Tensor): diagonal part of low-rank form of covariance matrix with shape
            `batch_shape + event_shape`.
        validate_args (bool, optional): whether to validate arguments.

    The determinant and inverse of the covariance are computed in O(rank^3) (plus O(n rank^2))
    by the matrix determinant lemma and the Woodbury identity, via the capacitance matrix
    ``I + cov_factor.T @ inv(cov_diag) @ cov_factor``.
    """

    arg_constraints: ClassVar[dict] = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: ember.Tensor,
        cov_factor: ember.Tensor,
        cov_diag: ember.Tensor,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(
                f"cov_diag must be a batch of vectors with shape {ember.Size(event_shape)}"
            )
        loc_ = loc.unsqueeze(-1)
        cov_diag_ = cov_diag.unsqueeze(-1)
        try:
            loc_, self.cov_factor, cov_diag_ = ember.broadcast_tensors(loc_, cov_factor, cov_diag_)
        except (RuntimeError, ValueError) as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]

        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        loc_shape = tuple(ember.Size(batch_shape) + self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        shared = ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance_tril")
        return self._expand_params(LowRankMultivariateNormal, batch_shape, new, copy=shared)

    @property
    def mean(self) -> ember.Tensor:
        return self.loc

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> ember.Tensor:
        return (
            self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        ).expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self) -> ember.Tensor:
        """Lower Cholesky factor of the covariance: ``D^(1/2) chol(I + D^(-1/2) W W^T
        D^(-1/2))`` (better conditioned than factoring the covariance itself)."""
        n = self._event_shape[0]
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        K = ember.matmul(Dinvsqrt_W, _unnamed_last(Dinvsqrt_W.mT))
        K = K + ember.eye(n, dtype=K.dtype, device=K.device)
        scale_tril = cov_diag_sqrt_unsqueeze * ember.linalg.cholesky(K)
        return scale_tril.expand(tuple(self._batch_shape + self._event_shape + self._event_shape))

    @lazy_property
    def covariance_matrix(self) -> ember.Tensor:
        """The covariance matrix ``W W^T + diag(D)``."""
        W = self._unbroadcasted_cov_factor
        covariance_matrix = ember.matmul(W, _unnamed_last(W.mT)) + ember.diag_embed(
            self._unbroadcasted_cov_diag
        )
        return covariance_matrix.expand(
            tuple(self._batch_shape + self._event_shape + self._event_shape)
        )

    @lazy_property
    def precision_matrix(self) -> ember.Tensor:
        """The precision matrix, by the Woodbury identity."""
        W = self._unbroadcasted_cov_factor
        D = self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        A = ember.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision_matrix = ember.diag_embed(D.reciprocal()) - ember.matmul(A.mT, _unnamed_last(A))
        return precision_matrix.expand(
            tuple(self._batch_shape + self._event_shape + self._event_shape)
        )

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_W = _standard_normal(W_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
            + self._unbroadcasted_cov_diag.sqrt() * eps_D
        )

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            diff,
            self._capacitance_tril,
        )
        log_det = _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self) -> ember.Tensor:
        log_det = _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
