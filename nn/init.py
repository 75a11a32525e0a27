"""nn.init: in-place parameter initializers (torch.nn.init).

Every initializer runs under no_grad, fills its tensor in place and returns it, so it may be called
on a Parameter that requires grad. ``generator=`` is accepted where torch accepts it.
"""

from __future__ import annotations

import math
import warnings

from ..autograd.grad_mode import no_grad
from ..core import linalg as _linalg
from ..core.dtype import float32 as _float32
from ..core.tensor import Tensor

__all__ = [
    "calculate_gain",
    "constant",
    "constant_",
    "dirac",
    "dirac_",
    "eye",
    "eye_",
    "kaiming_normal",
    "kaiming_normal_",
    "kaiming_uniform",
    "kaiming_uniform_",
    "normal",
    "normal_",
    "ones_",
    "orthogonal",
    "orthogonal_",
    "sparse",
    "sparse_",
    "trunc_normal_",
    "uniform",
    "uniform_",
    "xavier_normal",
    "xavier_normal_",
    "xavier_uniform",
    "xavier_uniform_",
    "zeros_",
]

_LINEAR_FNS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (``param``: leaky_relu's negative slope)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        # SELU's self-normalisation wants 3/4 (torch's choice, kept for parity)
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    shape = tensor.shape
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` with samples of U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator=None,
) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std^2) truncated to [a, b].

    Rejection sampling, so the tails are exact (an inverse-CDF draw loses them to rounding and
    piles values on the bounds): plain normal draws redrawn where they fall outside when [a, b]
    holds most of the mass, otherwise uniform proposals on [a, b] accepted by the density ratio.
    """
    if tensor.is_meta:  # no storage, nothing to sample
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with no_grad():
        mass = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
        if mass > 0.3:
            # the bounds as the tensor's dtype stores them, so a draw rounded onto a bound stays
            lo = tensor.new_tensor(a).item()
            hi = tensor.new_tensor(b).item()
            tensor.normal_(mean, std, generator=generator)
            while True:
                outside = (tensor < lo) | (tensor > hi)
                n = int(outside.sum())
                if not n:
                    return tensor
                tensor[outside] = tensor.new_empty((n,)).normal_(mean, std, generator=generator)
        # narrow or far-tail window: accept x ~ U(a, b) with probability pdf(x) / pdf(mode)
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def rejected(x):
            log_ratio = ((x - mean) / std).pow_(2).mul_(-0.5).sub_(log_peak)
            return x.new_empty(x.shape).uniform_(generator=generator).log_() > log_ratio

        tensor.uniform_(a, b, generator=generator)
        pending = rejected(tensor)
        while n := int(pending.sum()):
            proposal = tensor.new_empty((n,)).uniform_(a, b, generator=generator)
            tensor[pending] = proposal
            pending[pending] = rejected(proposal)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones."""
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill the 2-D ``tensor`` with the identity (ones on the main diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.zero_()
        n = min(tensor.shape)
        if n:
            tensor.diagonal().fill_(1)
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3/4/5-D conv weight with the Dirac delta (identity convolution), per group."""
    nd = tensor.dim()
    if nd not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    n = min(per_group, sizes[1])
    center = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(n):
                tensor[(g * per_group + d, d) + center] = 1
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    with no_grad():
        return tensor.uniform_(-a, a, generator=generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    with no_grad():
        return tensor.normal_(0.0, std, generator=generator)


def _kaiming_(tensor, a, mode, nonlinearity, fill) -> Tensor:
    # ``fill(std)`` samples in place under no_grad; a zero-element tensor warns (at the caller
    # of the public kaiming_*_) and is returned as is
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    with no_grad():
        return fill(std)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan_mode)."""

    def fill(std):
        bound = math.sqrt(3.0) * std
        return tensor.uniform_(-bound, bound, generator=generator)

    return _kaiming_(tensor, a, mode, nonlinearity, fill)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """He normal: N(0, std^2), std = gain / sqrt(fan_mode)."""
    return _kaiming_(
        tensor, a, mode, nonlinearity, lambda std: tensor.normal_(0, std, generator=generator)
    )


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (trailing dims flattened), scaled by ``gain``."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:  # (meta: nothing to fill, no QR to pay for)
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if rows < cols:
            flat = flat.t()
        q, r = _linalg.qr(flat)
        # sign-correct Q by R's diagonal so Q is Haar-distributed (Mezzadri 2007)
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill the 2-D ``tensor`` from N(0, std^2) with ceil(sparsity * rows) zeros per column."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        if num_zeros and rows and cols:
            # a random permutation of the rows per column: argsort of uniform keys (vectorised)
            keys = tensor.new_empty((rows, cols), dtype=_float32).uniform_(generator=generator)
            idx = keys.argsort(dim=0)[:num_zeros]
            tensor.scatter_(0, idx, 0.0)
    return tensor


def _deprecated(new):
    old = new.__name__[:-1]

    def fn(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = old
    fn.__doc__ = f"Deprecated alias of :func:`{new.__name__}`."
    return fn


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
