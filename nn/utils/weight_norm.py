"""Weight normalization, the hook-based API: weight = g * v / ||v|| (torch.nn.utils.weight_norm)."""

from __future__ import annotations

import warnings
from typing import Any

from ...autograd.grad_mode import no_grad
from ...autograd.node import as_torch_node
from ...core import linalg as _linalg
from ...core.dims import normalize_dim
from ...core.tensor import Tensor
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept, size 1 elsewhere);
    ``dim=-1`` means the norm of the whole tensor (a 0-dim tensor), as torch.norm_except_dim."""
    if dim == -1:
        return _linalg.vector_norm(v, pow)
    nd = v.dim()
    d = normalize_dim(v, dim)  # torch's IndexError for a dim out of range
    if not nd:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    others = [i for i in range(nd) if i != d]
    if not others:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return _linalg.vector_norm(v, pow, dim=others, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)`` with the norm taken over every dim but ``dim`` (differentiable)."""
    w = v * (g / _norm_except_dim(v, 2, dim))
    if dim == 0 or dim == v.dim() - 1:  # torch's fused kernel covers the first and last dims
        return as_torch_node(w, "WeightNormInterfaceBackward0")
    return w


class WeightNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_g`` and ``name_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            # torch's deprecation points at the caller of apply (weight_norm itself), so the
            # default filter shows it once per process, not once per user line
            stacklevel=2,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(  # noqa: TRY004  (torch's type)
                "The module passed to `WeightNorm` can't have uninitialized parameters. Make sure "
                "to run the dummy forward before applying weight normalization"
            )
        # the weight parameter is replaced by its magnitude g and direction v
        del module._parameters[name]
        with no_grad():
            g = _norm_except_dim(weight, 2, dim)
        module.register_parameter(name + "_g", Parameter(g.data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over all dims but ``dim``;
    ``dim=None`` normalizes the whole tensor). A forward pre-hook recomputes it each call."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo :func:`weight_norm`: ``name`` becomes a plain Parameter again."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
