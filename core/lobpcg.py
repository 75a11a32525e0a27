"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric (generalized) eigenproblem.

ember's tensors are dense, so instead of iterating LOBPCG it solves the dense problem exactly with
``linalg.eigh`` (after a Cholesky reduction when ``B`` is given) and keeps ``k`` pairs: the pairs
LOBPCG converges to, to working precision. The iteration controls (X as a start, niter, tol,
method, tracker, ortho_*) are accepted and checked like torch's but change nothing. Being made of
differentiable ops, the result has gradients with respect to A and B.
"""

from __future__ import annotations

from typing import Any

from .tensor import Tensor

__all__ = ["lobpcg"]


def lobpcg(
    A: Tensor,
    k: int | None = None,
    B: Tensor | None = None,
    X: Tensor | None = None,
    n: int | None = None,
    iK: Tensor | None = None,
    niter: int | None = None,
    tol: float | None = None,
    largest: bool | None = None,
    method: str | None = None,
    tracker: Any = None,
    ortho_iparams: dict | None = None,
    ortho_fparams: dict | None = None,
    ortho_bparams: dict | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (``largest=False``: smallest) eigenvalues E and eigenvectors X of
    ``A x = lambda B x`` for symmetric A (..., m, m) and symmetric positive-definite B.

    Returns (E (..., k), X (..., m, k)); largest first when ``largest``, else smallest first.
    Names: the results are unnamed.
    """
    from . import linalg

    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and B.shape != A.shape:
        raise AssertionError(f"A and B must have the same shapes, got {A.shape} and {B.shape}")
    m = A.shape[-1]
    if k is None:
        k = 1 if X is None else X.shape[-1]
    if n is None:
        n = k if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})"
        )
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")
    largest = True if largest is None else largest
    if B is None:
        evals, evecs = linalg.eigh(A)
    else:
        # A x = l B x  <=>  (L^-1 A L^-T) y = l y with B = L L^T, x = L^-T y
        L = linalg.cholesky(B)
        Li = linalg.solve_triangular(L, _eye_like(L), upper=False)
        evals, y = linalg.eigh(Li @ A @ Li.mT)
        evecs = Li.mT @ y
    if largest:
        return evals[..., m - k :].flip(-1), evecs[..., m - k :].flip(-1)
    return evals[..., :k], evecs[..., :k]


def _eye_like(t: Tensor) -> Tensor:
    from .ops.creation import eye

    return eye(t.shape[-1], dtype=t.dtype, device=t.device).expand(t.shape)
