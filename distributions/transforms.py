"""Transforms between spaces, used by :class:`TransformedDistribution`
(torch.distributions.transforms): each has a forward map, an inverse, a log absolute Jacobian
determinant, a domain and a codomain constraint, and (for shape-changing transforms) the shape
maps ``forward_shape`` / ``inverse_shape``."""

from __future__ import annotations

import math
from numbers import Number

import ember
import ember.nn.functional as F

from . import constraints
from .utils import _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix
from .utils import broadcast_all as _broadcast_all

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
]


class Transform:
    r"""Abstract class for invertible transformations with computable log det jacobians.

    Subclasses implement ``_call`` (forward), ``_inverse`` and ``log_abs_det_jacobian``; the
    ``domain`` and ``codomain`` constraints say where inputs and outputs live.

    Args:
        cache_size (int): 0 (no caching) or 1 (cache the latest single value).
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)

    @property
    def event_dim(self) -> int:
        """The number of rightmost dims forming an event (when domain and codomain agree)."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (``t.inv(t(x)) == x``)."""
        return _InverseTransform(self)

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def forward_shape(self, shape):
        """The output shape for an input of shape ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The input shape for an output of shape ``shape``."""
        return shape

    @property
    def sign(self) -> int:
        """The sign of the Jacobian determinant, where it is constant."""
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: ember.Tensor) -> ember.Tensor:
        """Compute the transform ``x => y``."""
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: ember.Tensor) -> ember.Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: ember.Tensor, y: ember.Tensor) -> ember.Tensor:
        """The log det jacobian ``log |dy/dx|`` given input and output."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform (``t.inv``)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self):  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> int:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __eq__(self, other) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self._inv.with_cache(cache_size).inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class _ParameterlessTransform(Transform):
    """A transform without parameters: all instances of its family compare equal."""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if _ParameterlessTransform in cls.__bases__:
            cls._family = cls  # subclasses of a family compare equal to it too

    def __eq__(self, other) -> bool:
        return isinstance(other, self._family)

    __hash__ = object.__hash__


class ExpTransform(_ParameterlessTransform):
    r"""Transform via the mapping :math:`y = \exp(x)`."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(_ParameterlessTransform):
    r"""Transform via the mapping :math:`y = \frac{1}{1 + \exp(-x)}` and :math:`x = \text{logit}(y)`."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        finfo = ember.finfo(x.dtype)
        return ember.clamp(ember.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y):
        finfo = ember.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class AffineTransform(Transform):
    r"""Transform via the pointwise affine mapping :math:`y = \text{loc} + \text{scale} \times x`.

    Args:
        loc (Tensor or float): location parameter.
        scale (Tensor or float): scale parameter.
        event_dim (int): optional size of ``event_shape`` (0 for univariate random variables).
        cache_size (int): 0 or 1.
    """

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def forward_shape(self, shape):
        return _broadcast_shape(shape, self.loc, self.scale)

    def inverse_shape(self, shape):
        return _broadcast_shape(shape, self.loc, self.scale)

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self):  # type: ignore[override]
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    @property
    def codomain(self):  # type: ignore[override]
        return self.domain

    def __eq__(self, other) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Number) and isinstance(b, Number):
                if a != b:
                    return False
            elif not bool((ember.as_tensor(a) == ember.as_tensor(b)).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if isinstance(scale, Number):
            result = ember.full_like(x, math.log(abs(scale)))
        else:
            result = ember.abs(scale).log()
        if self._event_dim:
            result_size = tuple(result.size()[: result.dim() - self._event_dim]) + (-1,)
            result = result.view(result_size).sum(-1)
            shape = shape[: len(shape) - self._event_dim]
        return result.expand(tuple(shape))


def _broadcast_shape(shape, *params):
    shapes = [tuple(shape)] + [tuple(p.shape) for p in params if isinstance(p, ember.Tensor)]
    return ember.Size(ember.broadcast_shapes(*shapes))


class ComposeTransform(Transform):
    r"""Composes multiple transforms in a chain (``parts[0]`` first). The composition is
    responsible for caching.

    Args:
        parts (list of :class:`Transform`): the transforms to compose.
        cache_size (int): 0 or 1.
    """

    def __init__(self, parts: list, cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other) -> bool:
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # adjust the event_dim to be the maximum over what the later parts need
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        return ComposeTransform([p.inv for p in reversed(self.parts)])

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return ember.zeros_like(x)
        # compute the intermediates (with caching, the parts return the cached ones)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(
                _sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim)
            )
            event_dim += part.codomain.event_dim - part.domain.event_dim
        result = terms[0]
        for t in terms[1:]:
            result = result + t
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        fmt_string = self.__class__.__name__ + "(\n    "
        fmt_string += ",\n    ".join([p.__repr__() for p in self.parts])
        fmt_string += "\n)"
        return fmt_string


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    r"""Wraps a transform to treat ``reinterpreted_batch_ndims`` extra rightmost dims as
    dependent: the log abs det jacobian is summed over them.

    Args:
        base_transform (Transform): a base transform.
        reinterpreted_batch_ndims (int): the number of extra rightmost dims to treat as
            dependent.
        cache_size (int): 0 or 1.
    """

    def __init__(
        self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"
        )

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    r"""Unit-Jacobian transform reshaping the rightmost part of a tensor: ``in_shape`` and
    ``out_shape`` must have the same number of elements.

    Args:
        in_shape (ember.Size): the input event shape.
        out_shape (ember.Size): the output event shape.
        cache_size (int): 0 or 1.
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = ember.Size(in_shape)
        self.out_shape = ember.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[: y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.new_zeros(batch_shape)

    def forward_shape(self, shape):
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.in_shape}")
        return ember.Size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.out_shape}")
        return ember.Size(tuple(shape[:cut]) + tuple(self.in_shape))


class PowerTransform(Transform):
    r"""Transform via the mapping :math:`y = x^{\text{exponent}}` (on positive numbers).

    Args:
        exponent (Tensor or float): the exponent.
        cache_size (int): 0 or 1.
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all().item())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _broadcast_shape(shape, self.exponent)

    def inverse_shape(self, shape):
        return _broadcast_shape(shape, self.exponent)


class TanhTransform(_ParameterlessTransform):
    r"""Transform via the mapping :math:`y = \tanh(x)`. The inverse (``atanh``) is not clamped
    at the boundary: use ``cache_size=1`` to get the exact inverse of a forward value."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return ember.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written stably: 2 (log 2 - x - softplus(-2x))
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(_ParameterlessTransform):
    r"""Transform via the mapping :math:`y = |x|` (not bijective: the inverse is the identity)."""

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class SoftplusTransform(_ParameterlessTransform):
    r"""Transform via the mapping :math:`y = \log(1 + \exp(x))`; the inverse is
    :math:`x = \log(\exp(y) - 1)`."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class SoftmaxTransform(_ParameterlessTransform):
    r"""Transform from unconstrained space to the simplex via :math:`y = \exp(x)` then
    normalizing. Not bijective (so not usable for HMC); it is useful for algorithms that work
    coordinate-wise."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(_ParameterlessTransform):
    r"""Transform from unconstrained space to the simplex of one more dimension via a
    stick-breaking process: a bijection, so usable in HMC (unlike :class:`SoftmaxTransform`)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    @staticmethod
    def _offset(n: int, like):
        # log(n), log(n-1), ..., log(1): centers the k-th logit so x = 0 maps to the uniform point
        k = ember.arange(n, dtype=like.dtype, device=like.device)
        return (n - k).log()

    def _call(self, x):
        n = x.shape[-1]
        z = ember.sigmoid(x - self._offset(n, x))
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        n = y_crop.shape[-1]
        sf = 1 - y_crop.cumsum(-1)
        # remaining stick lengths: clamp like torch so the last steps stay finite
        sf = ember.clamp(sf, min=ember.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + self._offset(n, y)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x.shape[-1], x)
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)  # the caller's type, tuple or Size, as torch

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(_ParameterlessTransform):
    r"""Transform from unconstrained matrices to lower-triangular matrices with nonnegative
    diagonal entries (exp of the diagonal, strict lower part kept)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_ParameterlessTransform):
    r"""Transform from unconstrained matrices to positive-definite matrices (``L L^T`` of the
    :class:`LowerCholeskyTransform`)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        y = ember.linalg.cholesky(y)
        return LowerCholeskyTransform().inv(y)


class CorrCholeskyTransform(_ParameterlessTransform):
    r"""Transform an unconstrained vector of length ``D*(D-1)/2`` into the Cholesky factor of a
    D-dimensional correlation matrix (lower triangular, positive diagonal, unit-norm rows), by
    filling the strict lower triangle with ``tanh`` of the input row by row and applying
    stick-breaking to the squared norms of each row."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    @staticmethod
    def _size(m: int, msg: str = "Incorrect size of unconstrained vector") -> int:
        n = round((0.25 + 2 * m) ** 0.5 + 0.5)
        if n * (n - 1) // 2 != m:
            raise ValueError(msg)
        return n

    def _call(self, x):
        eps = ember.finfo(x.dtype).eps
        x = x.tanh().clamp(min=-1 + eps, max=1 - eps)
        n = self._size(x.shape[-1])
        r = vec_to_tril_matrix(x, -1)
        # stick breaking on the squared row entries: z_ij = r_ij * sqrt(1 - sum_{k<j} z_ik^2)
        z = r.pow(2)
        one_minus_cum = (1 - z).sqrt().cumprod(-1)
        eye = ember.eye(n, dtype=x.dtype, device=x.device)
        w = r + eye
        shifted = F.pad(one_minus_cum[..., :-1], [1, 0], value=1)
        return w * shifted

    def _inverse(self, y):
        # the sum of squares of y_ij (j < i) left of the diagonal gives the stick lengths
        y_cumsum = 1 - ember.cumsum(y * y, dim=-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, -1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, -1)
        t = y_vec / y_cumsum_vec.sqrt()
        return ((1 + t) / (1 - t)).log() / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        # by the stick-breaking structure, only the strict lower entries' stick lengths count
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, -2)
        stick_breaking_logdet = 0.5 * (y1m_cumsum_tril).log().sum(-1)
        tanh_logdet = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = self._size(shape[-1], "Input is not a flattened lower-diagonal number")
        # slicing keeps the caller's type, as torch: a tuple stays a tuple, a Size a Size
        return shape[:-1] + (n, n)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return shape[:-2] + (n * (n - 1) // 2,)


def _check_tseq(tseq) -> list:
    tseq = list(tseq)
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")
    return tseq


def _check_split(value, dim: int, name: str, where: str, label: str, expected: int) -> None:
    # Cat/StackTransform's shape checks, with torch's AssertionError and wording
    if not -value.dim() <= dim < value.dim():
        raise AssertionError(f"dim {dim} out of range for {where} with {value.dim()} dimensions")
    size = value.size(dim)
    if size != expected:
        raise AssertionError(f"{name}.size({dim}) = {size} must equal {label} {expected}")


class CatTransform(Transform):
    r"""Applies a sequence of transforms ``tseq`` to consecutive chunks (of sizes ``lengths``)
    of dim ``dim``, compatibly with :func:`ember.cat`.

    Args:
        tseq (list of Transform): the transforms.
        dim (int): the dim to split.
        lengths (list of int): the chunk sizes (default: 1 each).
        cache_size (int): 0 or 1.
    """

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        tseq = _check_tseq(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})"
            )
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _chunks(self, x):
        start = 0
        for t, length in zip(self.transforms, self.lengths):
            yield t, x.narrow(self.dim, start, length)
            start += length

    def _check(self, value, name: str, where: str = "tensor") -> None:
        _check_split(value, self.dim, name, where, "length", self.length)

    def _call(self, x):
        self._check(x, "x")
        return ember.cat([t(xs) for t, xs in self._chunks(x)], dim=self.dim)

    def _inverse(self, y):
        self._check(y, "y")
        return ember.cat([t.inv(ys) for t, ys in self._chunks(y)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        logdets, start = [], 0
        for t, length in zip(self.transforms, self.lengths):
            xs, ys = x.narrow(self.dim, start, length), y.narrow(self.dim, start, length)
            logdet = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                logdet = _sum_rightmost(logdet, self.event_dim - t.event_dim)
            logdets.append(logdet)
            start += length
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return ember.cat(logdets, dim=dim)
        return sum(logdets)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    r"""Applies a sequence of transforms ``tseq`` to the slices of dim ``dim`` (one transform
    per slice), compatibly with :func:`ember.stack`.

    Args:
        tseq (list of Transform): the transforms.
        dim (int): the dim to slice.
        cache_size (int): 0 or 1.
    """

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        tseq = _check_tseq(tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, value, name: str, where: str = "tensor") -> None:
        _check_split(value, self.dim, name, where, "len(transforms)", len(self.transforms))

    def _restack(self, parts: list, like) -> ember.Tensor:
        """The slices' results stacked back along ``dim``: the dim that was sliced, so it keeps
        ``like``'s name there (stack creates an unnamed dim; spec 4.2: names are not lost)."""
        r = ember.stack(parts, dim=self.dim)
        n = like._names
        if n is None or r.dim() != like.dim():
            return r
        d = self.dim % r.dim()
        rn = r._names if r._names is not None else (None,) * r.dim()
        return r.rename(*rn[:d], n[d], *rn[d + 1 :])

    def _call(self, x):
        self._check(x, "x")
        return self._restack([t(v) for v, t in zip(self._slice(x), self.transforms)], x)

    def _inverse(self, y):
        self._check(y, "y")
        return self._restack([t.inv(v) for v, t in zip(self._slice(y), self.transforms)], y)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        parts = [
            t.log_abs_det_jacobian(xs, ys)
            for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)
        ]
        return self._restack(parts, x)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    r"""Transform via the cumulative distribution function of a probability distribution
    (``y = distribution.cdf(x)``, onto the unit interval).

    Args:
        distribution (Distribution): the distribution whose cdf is the transform.
        cache_size (int): 0 or 1.
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):  # type: ignore[override]
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)
