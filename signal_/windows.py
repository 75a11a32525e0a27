"""torch.signal.windows: the window functions of scipy.signal.windows, as ember tensors.

Each takes the window length ``M`` and ``sym`` (True: symmetric, for filter design; False:
periodic, for spectral analysis: the symmetric window of ``M + 1`` points without its last), and
returns a float32 (the default dtype) or float64 tensor. Values are computed in float64 and
rounded once. The formulas are core/ops/spectral.py's (``ember.hann_window`` & co.).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..core import dtype as _dt
from ..core.layout import strided
from ..core.ops.creation import tensor as _tensor
from ..core.ops.spectral import bartlett as _bartlett
from ..core.ops.spectral import cosine_sum, window_values
from ..core.ops.spectral import kaiser as _kaiser
from ..core.tensor import Tensor

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _window(name, M, sym, dtype, layout, device, requires_grad, fn) -> Tensor:
    """Check the arguments as torch does, then build the window ``fn(k, n)`` (core/ops/spectral's
    builder and formulas, shared with ``ember.hann_window`` & co.)."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dtype = _dt.get_default_dtype() if dtype is None else dtype
    if dtype not in (_dt.float32, _dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    arr = window_values(M, not sym, fn, dtype.np)
    return _tensor(arr, dtype=dtype, device=device, requires_grad=requires_grad)


def _cosines(coeffs, M, sym, dtype, layout, device, requires_grad) -> Tensor:
    """The general cosine windows: torch checks them all under general_cosine's name."""
    f = cosine_sum(coeffs)
    return _window("general_cosine", M, sym, dtype, layout, device, requires_grad, f)


def general_cosine(
    M, *, a: Iterable, sym=True, dtype=None, layout=strided, device=None, requires_grad=False
) -> Tensor:
    """sum_k (-1)^k a_k cos(2 pi k n / (N - 1)): the family of hann, hamming, blackman, nuttall."""
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    coeffs = [float(c) for c in a]
    if not coeffs:
        raise ValueError("Coefficients cannot be empty")
    return _cosines(coeffs, M, sym, dtype, layout, device, requires_grad)


def general_hamming(
    M,
    *,
    alpha: float = 0.54,
    sym=True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad=False,
) -> Tensor:
    """alpha - (1 - alpha) cos(2 pi n / (N - 1))."""
    return _cosines((alpha, 1.0 - alpha), M, sym, dtype, layout, device, requires_grad)


def hann(M: int, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hann window: general_hamming with alpha = 0.5."""
    return _cosines((0.5, 0.5), M, sym, dtype, layout, device, requires_grad)


def hamming(M: int, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hamming window: general_hamming with alpha = 0.54."""
    return _cosines((0.54, 1.0 - 0.54), M, sym, dtype, layout, device, requires_grad)


def nuttall(M: int, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window."""
    coeffs = (0.3635819, 0.4891775, 0.1365995, 0.0106411)
    return _cosines(coeffs, M, sym, dtype, layout, device, requires_grad)


def blackman(M: int, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    f = cosine_sum((0.42, 0.5, 0.08))
    return _window("blackman", M, sym, dtype, layout, device, requires_grad, f)


def bartlett(M: int, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The triangular window reaching zero at both ends: 1 - |2 n / (N - 1) - 1|."""
    return _window("bartlett", M, sym, dtype, layout, device, requires_grad, _bartlett)


def cosine(M: int, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """sin(pi (n + 0.5) / N)."""
    return _window(
        "cosine",
        M,
        sym,
        dtype,
        layout,
        device,
        requires_grad,
        lambda n, N: np.sin(math.pi * (n + 0.5) / N),
    )


def gaussian(
    M: int,
    *,
    std: float = 1.0,
    sym=True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad=False,
) -> Tensor:
    """exp(-(n - (N - 1) / 2)^2 / (2 std^2))."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _window(
        "gaussian",
        M,
        sym,
        dtype,
        layout,
        device,
        requires_grad,
        lambda n, N: np.exp(-(((n - (N - 1) / 2) / std) ** 2) / 2),
    )


def exponential(
    M: int,
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym=True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad=False,
) -> Tensor:
    """exp(-|n - center| / tau), centred by default (a given center needs sym=False)."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def values(n, N):
        c = (N - 1) / 2 if center is None else center
        return np.exp(-np.abs(n - c) / tau)

    return _window("exponential", M, sym, dtype, layout, device, requires_grad, values)


def kaiser(
    M: int,
    *,
    beta: float = 12.0,
    sym=True,
    dtype=None,
    layout=strided,
    device=None,
    requires_grad=False,
) -> Tensor:
    """I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", M, sym, dtype, layout, device, requires_grad, _kaiser(beta))
