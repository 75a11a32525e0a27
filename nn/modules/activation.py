"""Activation modules (torch.nn.modules.activation): thin wrappers over nn.functional.

Every activation keeps all of its input's names (spec 4.3). MultiheadAttention lives with the
sequence models.
"""

from __future__ import annotations

import warnings

from ...core.tensor import Tensor
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "SELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "PReLU",
    "RReLU",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
]


def _inplace_str(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class _InplaceActivation(Module):
    """An activation whose only option is ``inplace``: forward is ``_fn(input, inplace)``."""

    _init_per_layer = True  # torch writes this __init__ in each layer

    __constants__ = ("inplace",)
    _fn = None  # the functional form, a staticmethod set by each subclass
    _repr_inplace = True  # whether extra_repr shows "inplace=True"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace) if self._repr_inplace else ""


class Threshold(Module):
    """``value`` where input <= ``threshold``, else input."""

    __constants__ = ("threshold", "value", "inplace")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        s = f"threshold={self.threshold}, value={self.value}"
        return s + (", inplace=True" if self.inplace else "")


class ReLU(_InplaceActivation):
    """max(x, 0)."""

    _fn = staticmethod(F.relu)


class RReLU(Module):
    """Randomized leaky ReLU: random slopes in U(lower, upper) in training, their mean in eval."""

    __constants__ = ("lower", "upper", "inplace")

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        s = f"lower={self.lower}, upper={self.upper}"
        return s + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    """x clamped into [min_val, max_val]."""

    __constants__ = ("min_val", "max_val", "inplace")

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        # the deprecated spellings, accepted with torch's FutureWarning
        for old, new, value in (
            ("min_value", "min_val", min_value),
            ("max_value", "max_val", max_value),
        ):
            if value is not None:
                warnings.warn(
                    f"keyword argument `{old}` is deprecated and renamed to `{new}`",
                    FutureWarning,
                    stacklevel=2,
                )
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:  # torch's test (a NaN bound passes)
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"
            )

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        s = f"min_val={self.min_val}, max_val={self.max_val}"
        return s + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class Hardsigmoid(_InplaceActivation):
    """relu6(x + 3) / 6."""

    _fn = staticmethod(F.hardsigmoid)
    _repr_inplace = False  # torch prints no options for it


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class SiLU(_InplaceActivation):
    """x * sigmoid(x) (swish)."""

    _fn = staticmethod(F.silu)


class Mish(_InplaceActivation):
    """x * tanh(softplus(x))."""

    _fn = staticmethod(F.mish)


class Hardswish(_InplaceActivation):
    """x * relu6(x + 3) / 6."""

    _fn = staticmethod(F.hardswish)
    _repr_inplace = False  # torch prints no options for it


class _AlphaActivation(Module):
    """An activation with options ``alpha`` and ``inplace``: forward is
    ``_fn(input, alpha, inplace)``."""

    _init_per_layer = True  # torch writes this __init__ in each layer

    __constants__ = ("alpha", "inplace")
    _fn = None  # the functional form, a staticmethod set by each subclass

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class ELU(_AlphaActivation):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    _fn = staticmethod(F.elu)


class CELU(_AlphaActivation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    _fn = staticmethod(F.celu)


class SELU(_InplaceActivation):
    """Scaled ELU with the self-normalizing constants."""

    _fn = staticmethod(F.selu)


class GLU(Module):
    """a * sigmoid(b), the halves of the input along ``dim``."""

    __constants__ = ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x); ``approximate='tanh'`` uses the tanh approximation."""

    __constants__ = ("approximate",)

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class _Shrink(Module):
    """A shrink activation whose only option is ``lambd``: forward is ``_fn(input, lambd)``."""

    _init_per_layer = True  # torch writes this __init__ in each layer

    __constants__ = ("lambd",)
    _fn = None  # the functional form, a staticmethod set by each subclass

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0."""

    _fn = staticmethod(F.hardshrink)


class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    __constants__ = ("inplace", "negative_slope")

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        s = f"negative_slope={self.negative_slope}"
        return s + (", inplace=True" if self.inplace else "")


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold``."""

    __constants__ = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(_Shrink):
    """x - lambd for x > lambd, x + lambd for x < -lambd, else 0."""

    _fn = staticmethod(F.softshrink)


class PReLU(Module):
    """leaky ReLU with a learned slope (one, or one per channel), initialised to ``init``."""

    __constants__ = ("num_parameters",)

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None
    ) -> None:
        from ...core.ops.creation import empty

        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        from ...autograd.grad_mode import no_grad

        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class _SoftmaxBase(Module):
    _init_per_layer = True  # torch writes this __init__ in each layer

    __constants__ = ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    """softmax(-x) along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxBase):
    """exp(x) / sum(exp(x)) along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) along ``dim``, computed stably."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)


from ._multihead import MultiheadAttention  # noqa: F401  (torch keeps it in this module)
