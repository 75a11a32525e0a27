"""LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    r"""LKJ distribution for the lower Cholesky factor ``L`` of correlation matrices, with
    density :math:`\propto \det(L L^\top)^{\eta - 1} = \prod_{i=2}^{D} L_{ii}^{2(\eta - 1)}`
    over correlation matrices, i.e.
    :math:`\prod_{i=2}^{D} L_{ii}^{D - i + 2(\eta - 1)}` over their Cholesky factors
    (Lewandowski, Kurowicka and Joe, 2009). Samples are drawn by the onion method.

    Example::

        >>> l = LKJCholesky(3, 0.5)
        >>> l.sample()  # l @ l.T is a sample of a correlation 3x3 matrix

    Args:
        dim (int): dimension of the matrices.
        concentration (float or Tensor): concentration/shape parameter of the distribution
            (often referred to as eta).
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = ember.Size((dim, dim))
        self._init_beta()
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def _init_beta(self) -> None:
        # onion method: row k (k = 1..D-1, k entries left of the diagonal) has squared norm
        # y_k ~ Beta(k / 2, eta + (D - 2) / 2 - (k - 1) / 2); row 0 is a placeholder
        c = self.concentration
        k = ember.arange(self.dim, dtype=c.dtype, device=c.device).clamp(min=1)
        conc1 = k / 2
        conc0 = (c + (self.dim - 2) / 2).unsqueeze(-1) - (k - 1) / 2
        conc1, conc0 = ember.broadcast_tensors(conc1, conc0)
        self._beta = Beta(conc1, conc0, validate_args=False)

    def expand(self, batch_shape, _instance=None) -> LKJCholesky:
        new = self._expand_params(LKJCholesky, batch_shape, _instance, ("concentration",), ("dim",))
        new._init_beta()
        return new

    def sample(self, sample_shape=()) -> ember.Tensor:
        with no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            c = self.concentration
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            # a uniform direction for each row's strictly-lower part
            u = ember.randn(shape, dtype=c.dtype, device=c.device).tril(-1)
            norm = u.pow(2).sum(-1, keepdim=True).sqrt()
            first_row = ember.arange(self.dim, device=c.device).reshape(-1, 1) == 0
            u = ember.where(
                first_row,
                ember.zeros_like(u),
                u / ember.where(norm > 0, norm, ember.ones_like(norm)),
            )
            w = y.sqrt() * u
            tiny = ember.finfo(w.dtype).tiny
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + ember.diag_embed(diag)

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        D = self.dim
        eta = self.concentration
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        # exponent of L_ii for i = 2..D (1-indexed): D - i + 2 (eta - 1)
        i = ember.arange(2, D + 1, dtype=value.dtype, device=value.device)
        exponents = 2 * (eta - 1).unsqueeze(-1) + D - i
        unnormalized = (exponents * diag.log()).sum(-1)
        # log normalizer: (D-1)/2 log(pi) + mvlgamma(a - 1/2, D-1) - (D-1) lgamma(a),
        # a = eta + (D - 1) / 2
        a = eta + 0.5 * (D - 1)
        log_norm = (
            0.5 * (D - 1) * math.log(math.pi)
            + ember.mvlgamma(a - 0.5, p=D - 1)
            - (D - 1) * ember.lgamma(a)
        )
        return unnormalized - log_norm
