"""Wishart distribution over positive-definite matrices."""

from __future__ import annotations

import math
from numbers import Number

import ember

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _expand_matrices, _scale_tril_of
from .utils import _standard_normal, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: ember.Tensor, p: int) -> ember.Tensor:
    """The multivariate digamma ``sum_{i < p} digamma(x - i / 2)`` (derivative of mvlgamma)."""
    offsets = ember.arange(p, dtype=x.dtype, device=x.device) / 2
    return ember.digamma(x.unsqueeze(-1) - offsets).sum(-1)


class Wishart(ExponentialFamily):
    r"""A Wishart distribution parameterized by a symmetric positive definite matrix
    :math:`\Sigma`, or its Cholesky decomposition :math:`\Sigma = LL^\top`, or its precision
    :math:`\Sigma^{-1}` (exactly one of them), and the degrees of freedom ``df``.

    Example::

        >>> m = Wishart(ember.tensor([2.0]), covariance_matrix=ember.eye(2))
        >>> m.sample()  # Wishart distributed with mean=`df * I` and
        >>> # variance(x_ij)=`df` for i != j and variance(x_ij)=`2 * df` for i == j

    Samples use the Bartlett decomposition; like torch's, they may be singular (and then fail
    the support check) for small ``df``.

    Args:
        df (float or Tensor): real-valued parameter larger than the (dimension of the square
            matrix) - 1.
        covariance_matrix (Tensor): positive-definite covariance matrix.
        precision_matrix (Tensor): positive-definite precision matrix.
        scale_tril (Tensor): lower-triangular factor of covariance, with positive diagonal.
        validate_args (bool, optional): whether to validate arguments.
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(
        self,
        df,
        covariance_matrix: ember.Tensor | None = None,
        precision_matrix: ember.Tensor | None = None,
        scale_tril: ember.Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (
            precision_matrix is not None
        ) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            # (torch names scale_tril whichever matrix was given)
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if isinstance(df, Number):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = ember.Size(
                ember.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            )
            self.df = df.expand(tuple(batch_shape))
        event_shape = ember.Size(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            shown = df.item() if isinstance(df, ember.Tensor) and df.numel() == 1 else df
            raise ValueError(f"Value of df={shown} expected to be greater than ndim - 1 = {p - 1}.")
        full = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        self._df_constraint = constraints.greater_than(p - 1)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

        self._unbroadcasted_scale_tril = _scale_tril_of(
            covariance_matrix, precision_matrix, scale_tril
        )
        self._init_chi2()

    def _init_chi2(self) -> None:
        # Bartlett decomposition: the i-th diagonal entry of A is sqrt(Chi2(df - i))
        p = self._event_shape[-1]
        steps = ember.arange(p, dtype=self.df.dtype, device=self.df.device)
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1) - steps)

    @property
    def arg_constraints(self) -> dict:  # type: ignore[override]
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": getattr(self, "_df_constraint", constraints.greater_than(0)),
        }

    def expand(self, batch_shape, _instance=None) -> Wishart:
        # df first, as torch: a bad batch_shape is reported against df's sizes
        new = self._expand_params(Wishart, batch_shape, _instance, ("df",), ("_df_constraint",))
        cov_shape = tuple(new._batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        _expand_matrices(self, new, cov_shape)
        new._init_chi2()
        return new

    def __repr__(self) -> str:
        shown = [
            k for k in ("covariance_matrix", "precision_matrix", "scale_tril") if k in self.__dict__
        ]
        parts = [f"{k}: {self.__dict__[k].size()}" for k in shown]
        df = self.df
        parts.append(f"df: {df.item() if df.numel() == 1 else df.size()}")
        return f"Wishart({', '.join(parts)})"

    @lazy_property
    def scale_tril(self) -> ember.Tensor:
        """Lower-triangular factor of the scale matrix."""
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def covariance_matrix(self) -> ember.Tensor:
        """The scale matrix (``Sigma``)."""
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def precision_matrix(self) -> ember.Tensor:
        """The inverse of the scale matrix."""
        L = self._unbroadcasted_scale_tril
        eye = ember.eye(self._event_shape[-1], dtype=L.dtype, device=L.device)  # as torch's
        return ember.cholesky_solve(eye, L).expand(tuple(self._batch_shape + self._event_shape))

    @property
    def mean(self) -> ember.Tensor:
        return self.df.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self) -> ember.Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor <= 0, ember.full_like(factor, math.nan), factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> ember.Tensor:
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.reshape(tuple(self._batch_shape) + (1, 1)) * (
            V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2)
        )

    def rsample(self, sample_shape=()) -> ember.Tensor:
        sample_shape = ember.Size(sample_shape)
        shape = tuple(self._extended_shape(sample_shape))
        p = self._event_shape[-1]
        # A: sqrt(Chi2(df - i)) on the diagonal, standard normals below it
        noise = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device).tril(-1)
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        eye = ember.eye(p, dtype=self.df.dtype, device=self.df.device)
        A = noise + diag.unsqueeze(-1) * eye
        LA = self._unbroadcasted_scale_tril @ A
        return LA @ LA.mT

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det_sigma = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(Sigma^-1 X) through the Cholesky factor of Sigma
        trace = ember.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)
        log_det_x = ember.linalg.slogdet(value)[1]
        return (
            -nu * (p * _LOG_2 / 2 + half_log_det_sigma)
            - ember.mvlgamma(nu / 2, p=p)
            + (nu - p - 1) / 2 * log_det_x
            - trace / 2
        )

    @property
    def _natural_params(self) -> tuple:
        # t(X) = (X, log|X|): theta = (-Sigma^-1 / 2, (df - p - 1) / 2)
        p = self._event_shape[-1]
        return -0.5 * self.precision_matrix, 0.5 * (self.df - p - 1)

    def _log_normalizer(self, x, y):
        # with df = 2 y + p + 1 and Sigma = (-2 x)^-1:
        # F = df / 2 (p log 2 + log|Sigma|) + mvlgamma(df / 2, p)
        p = self._event_shape[-1]
        half_df = y + (p + 1) / 2
        log_det_sigma = -ember.linalg.slogdet(-2 * x)[1]
        return half_df * (p * _LOG_2 + log_det_sigma) + ember.mvlgamma(half_df, p=p)

    def entropy(self) -> ember.Tensor:
        nu = self.df
        p = self._event_shape[-1]
        half_log_det_sigma = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            (p + 1) * half_log_det_sigma
            + p * (p + 1) * _LOG_2 / 2
            + ember.mvlgamma(nu / 2, p=p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )
