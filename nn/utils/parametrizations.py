"""Ready-made parametrizations: orthogonal, weight_norm, spectral_norm (torch's
nn.utils.parametrizations), registered with :func:`parametrize.register_parametrization`."""

# ruff: noqa: TRY004  (torch raises ValueError for a missing tensor)
from __future__ import annotations

from enum import Enum, auto

from ...autograd.grad_mode import no_grad
from ...core import linalg as _linalg
from ...core.ops.creation import eye, zeros, zeros_like
from ...core.ops.joining import cat
from ...core.ops.random import randn
from ...core.tensor import Tensor
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _is_conv_transpose
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _normalize(x: Tensor, eps: float) -> Tensor:
    return x / _linalg.vector_norm(x, 2).clamp(min=eps)


def _is_orthogonal(q: Tensor, eps=None) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    ident = eye(k, dtype=q.dtype, device=q.device)
    # a generous tolerance: the product accumulates n rounding errors per entry
    eps = 10.0 * n * _finfo_eps(q.dtype)
    return bool((q.mH @ q).sub(ident).abs().le(eps).all())


def _finfo_eps(dtype) -> float:
    from ...core.dtype import finfo

    return finfo(dtype).eps


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of A's QR factorization with R's diagonal made positive (unique, continuous)."""
    q, r = _linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(
        self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True
    ) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        """The orthogonal matrix X parametrizes, named like X: the map is algebra on the whole
        matrix, whose intermediate products (X^H X) would repeat a name (spec 4.3: the weight
        keeps its names; only what it does inside is unnamed)."""
        if X._names is None:
            return self._orthogonal(X)
        return self._orthogonal(X.rename(None)).rename(*X._names)

    def _orthogonal(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # from here X is n x k with n >= k
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                pad = zeros(n, n - k, dtype=X.dtype, device=X.device)
                X = cat([X, pad.expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _linalg.matrix_exp(A)
            else:
                ident = eye(n, dtype=A.dtype, device=A.device)
                Q = _linalg.solve(ident - 0.5 * A, ident + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            # the Householder reflectors below the diagonal; tau makes each one orthogonal
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _linalg.householder_product(A, tau)
            # the diagonal of X only chooses signs (column flips), as torch does
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        """An original whose forward() is Q, named like Q (see forward)."""
        if Q._names is None:
            return self._right_inverse(Q)
        return self._right_inverse(Q.rename(None)).rename(*Q._names)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {self.shape}. "
                    f"Got a tensor of shape {Q.shape}."
                )
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                # Householder without trivialization: the reflectors of Q's QR (LAPACK-style),
                # with the diagonal holding the signs forward() multiplies by
                A, tau = _householder_qr(Q)
                d = A.diagonal(dim1=-2, dim2=-1)
                d.copy_(d.sign())
                d.copy_(d.masked_fill(tau == 0.0, 0.0) - d.masked_fill(tau != 0.0, 0.0))
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                # complete the n x k frame to an n x n orthogonal base
                N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            # forward(-Id) = base: -Id is the point the trivialization maps to the base
            neg_id = zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def _householder_qr(a: Tensor):
    """LAPACK's geqrf in Householder form: reflectors v_i (unit diagonal implied, stored below
    the diagonal) and tau_i with Q = prod(I - tau_i v_i v_i^H) and R on/above the diagonal."""
    import numpy as np

    arr = np.asarray(a.detach().cpu()._data)
    out = arr.astype(arr.dtype, copy=True)
    batch = out.reshape(-1, *out.shape[-2:])
    taus = np.zeros(batch.shape[:-2] + (min(batch.shape[-2:]),), dtype=arr.dtype)
    for b in range(batch.shape[0]):
        m = batch[b]
        rows, cols = m.shape
        for j in range(min(rows, cols)):
            x = m[j:, j].copy()
            alpha = x[0]
            xnorm = np.linalg.norm(x[1:])
            if xnorm == 0 and np.imag(alpha) == 0:
                taus[b, j] = 0
                continue
            beta = -np.copysign(np.hypot(np.abs(alpha), xnorm), np.real(alpha))
            tau = (beta - alpha) / beta
            v = x / (alpha - beta)
            v[0] = 1
            # apply H = I - tau v v^H to the trailing columns
            sub = m[j:, j:]
            sub -= tau * np.outer(v, v.conj() @ sub)
            m[j + 1 :, j] = v[1:]
            m[j, j] = beta
            taus[b, j] = tau
    from ...core.ops.creation import tensor

    shape = arr.shape[:-2] + (taus.shape[-1],)
    return (
        tensor(batch.reshape(arr.shape), device=a.device),
        tensor(taus.reshape(shape), device=a.device),
    )


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.<name>`` to (semi-)orthogonal matrices via ``orthogonal_map``
    ("matrix_exp" or "cayley" of a skew matrix, or "householder" reflectors)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = (
        getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    )
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor):
        weight_g = _norm_except_dim(weight, 2, self.dim)
        return weight_g, weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Parametrize ``module.<name>`` as ``g * v / ||v||``: ``original0`` is g (the magnitude),
    ``original1`` is v (the direction). Old ``name_g``/``name_v`` checkpoints still load."""
    wn = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, wn, unsafe=True)

    def _compat_hook(
        state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            with no_grad():
                u = _normalize(mat.new_empty(h).normal_(0, 1), eps)
                v = _normalize(mat.new_empty(w).normal_(0, 1), eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            # start from a good estimate of the top singular vectors
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                # the buffers change in place, so the estimate carries over between calls
                self._u.copy_(_normalize(weight_mat.mv(self._v), self.eps))
                self._v.copy_(_normalize(weight_mat.mH.mv(self._u), self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return weight / _linalg.vector_norm(weight, 2).clamp(min=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        # clones: the in-place updates of the next call must not touch tensors saved for backward
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        # any value is its own preimage (up to scale): store it as it is
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Parametrize ``module.<name>`` as ``W / sigma(W)`` (sigma: the largest singular value,
    estimated by power iteration; the estimate is refined in training mode only)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
