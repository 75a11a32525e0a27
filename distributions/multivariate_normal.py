"""Multivariate normal distribution."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from ..core.names import unify
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: ember.Tensor, bvec: ember.Tensor) -> ember.Tensor:
    """Matrix-vector product of broadcastable batches of matrices and vectors."""
    return ember.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: ember.Tensor, bx: ember.Tensor) -> ember.Tensor:
    r"""The squared Mahalanobis distance :math:`x^T (L L^T)^{-1} x` for a lower-triangular
    factor ``bL`` and vectors ``bx`` (batch shapes broadcast)."""
    n = bx.size(-1)
    batch = ember.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    L = bL.expand(tuple(batch) + (n, n))
    x = bx.expand(tuple(batch) + (n,))
    sol = ember.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return sol.pow(2).sum(-1)


def _named_by_loc(loc: ember.Tensor, t: ember.Tensor, event: bool) -> ember.Tensor:
    """``t``, computed from the (usually unnamed) covariance factor and expanded to the batch
    shape (plus the event dim when ``event``), named like ``loc``: the batch and event names
    live on ``loc`` (spec 4.2), and the batch dims of a named factor unify with them."""
    n = loc._names
    if n is None:
        return t
    n = n if event else n[:-1]
    return t.rename(*(n if t._names is None else unify(t._names, n)))


def _precision_to_scale_tril(P: ember.Tensor) -> ember.Tensor:
    """The lower Cholesky factor of ``P^-1`` without forming the inverse."""
    Lf = ember.linalg.cholesky(ember.flip(P, (-2, -1)))
    L_inv = ember.transpose(ember.flip(Lf, (-2, -1)), -2, -1)
    Id = ember.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return ember.linalg.solve_triangular(L_inv, Id, upper=False)


def _scale_tril_of(covariance_matrix, precision_matrix, scale_tril) -> ember.Tensor:
    """The (unbroadcast) Cholesky factor of whichever one of the three matrices is given."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return ember.linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


def _expand_matrices(old, new, shape) -> None:
    """Give ``new`` whichever of the covariance/precision/scale_tril matrices ``old`` holds
    (given or cached), expanded to ``shape``."""
    for n in ("covariance_matrix", "scale_tril", "precision_matrix"):
        if n in old.__dict__:
            setattr(new, n, old.__dict__[n].expand(shape))


class MultivariateNormal(Distribution):
    r"""A multivariate normal (Gaussian) distribution parameterized by a mean vector and a
    covariance matrix.

    It can be parameterized by a positive definite covariance matrix :math:`\Sigma`, a positive
    definite precision matrix :math:`\Sigma^{-1}`, or a lower-triangular matrix :math:`L` with
    positive diagonal entries such that :math:`\Sigma = LL^\top` (exactly one of them).

    Example::

        >>> m = MultivariateNormal(ember.zeros(2), ember.eye(2))
        >>> m.sample()  # normally distributed with mean=`[0,0]` and covariance_matrix=`I`
        tensor([-0.2102, -0.5429])

    Args:
        loc (Tensor): mean of the distribution.
        covariance_matrix (Tensor): positive-definite covariance matrix.
        precision_matrix (Tensor): positive-definite precision matrix.
        scale_tril (Tensor): lower-triangular factor of covariance, with positive diagonal.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: ember.Tensor,
        covariance_matrix: ember.Tensor | None = None,
        precision_matrix: ember.Tensor | None = None,
        scale_tril: ember.Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (
            precision_matrix is not None
        ) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError(
                    "scale_tril matrix must be at least two-dimensional, with optional "
                    "leading batch dimensions"
                )
            batch_shape = ember.broadcast_shapes(scale_tril.shape[:-2], loc.shape[:-1])
            self.scale_tril = scale_tril.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError(
                    "covariance_matrix must be at least two-dimensional, with optional "
                    "leading batch dimensions"
                )
            batch_shape = ember.broadcast_shapes(covariance_matrix.shape[:-2], loc.shape[:-1])
            self.covariance_matrix = covariance_matrix.expand(tuple(batch_shape) + (-1, -1))
        else:
            if precision_matrix.dim() < 2:
                raise ValueError(
                    "precision_matrix must be at least two-dimensional, with optional "
                    "leading batch dimensions"
                )
            batch_shape = ember.broadcast_shapes(precision_matrix.shape[:-2], loc.shape[:-1])
            self.precision_matrix = precision_matrix.expand(tuple(batch_shape) + (-1, -1))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))

        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

        self._unbroadcasted_scale_tril = _scale_tril_of(
            covariance_matrix, precision_matrix, scale_tril
        )

    def expand(self, batch_shape, _instance=None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(tuple(batch_shape + self.event_shape))
        _expand_matrices(self, new, tuple(batch_shape + self.event_shape + self.event_shape))
        return self._expand_params(
            MultivariateNormal, batch_shape, new, copy=("_unbroadcasted_scale_tril",)
        )

    @lazy_property
    def scale_tril(self) -> ember.Tensor:
        """Lower-triangular factor of the covariance."""
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape + self._event_shape + self._event_shape)
        )

    @lazy_property
    def covariance_matrix(self) -> ember.Tensor:
        """The covariance matrix."""
        L = self._unbroadcasted_scale_tril
        return ember.matmul(L, L.mT).expand(
            tuple(self._batch_shape + self._event_shape + self._event_shape)
        )

    @lazy_property
    def precision_matrix(self) -> ember.Tensor:
        """The precision (inverse covariance) matrix."""
        return ember.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape + self._event_shape + self._event_shape)
        )

    @property
    def mean(self) -> ember.Tensor:
        return self.loc

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @property
    def variance(self) -> ember.Tensor:
        v = (
            self._unbroadcasted_scale_tril.pow(2)
            .sum(-1)
            .expand(tuple(self._batch_shape + self._event_shape))
        )
        return _named_by_loc(self.loc, v, event=True)

    def rsample(self, sample_shape=()) -> ember.Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self) -> ember.Tensor:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return _named_by_loc(self.loc, H.expand(tuple(self._batch_shape)), event=False)
