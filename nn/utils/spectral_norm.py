"""Spectral normalization, the hook-based API: weight = weight_orig / sigma(weight_orig), sigma
estimated by power iteration (torch.nn.utils.spectral_norm)."""

from __future__ import annotations

from typing import Any

from ...autograd.grad_mode import no_grad
from ...core import linalg as _linalg
from ...core.tensor import Tensor
from ..parameter import Parameter, UninitializedParameter

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


def _normalize(x: Tensor, eps: float) -> Tensor:
    """x / max(||x||_2, eps) for a vector (F.normalize(x, dim=0))."""
    return x / _linalg.vector_norm(x, 2).clamp(min=eps)


def _mv(m: Tensor, v: Tensor) -> Tensor:
    return m.mv(v)


class SpectralNorm:
    """The forward pre-hook that sets ``name`` to ``name_orig / sigma``."""

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        w = weight
        if self.dim != 0:
            w = w.permute(self.dim, *[d for d in range(w.dim()) if d != self.dim])
        return w.reshape(w.shape[0], -1)

    def compute_weight(self, module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # the buffers are updated in place: the estimate carries over between calls
                    v.copy_(_normalize(_mv(mat.t(), u), self.eps))
                    u.copy_(_normalize(_mv(mat, v), self.eps))
                # clones: later in-place updates must not touch tensors saved for backward
                u = u.clone()
                v = v.clone()
        sigma = u.dot(_mv(mat, v))
        return weight / sigma

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma) -> Tensor:
        # v with u = normalize(W v) and u^T W v = target_sigma (pinv(W^T W) W^T u, rescaled)
        v = _linalg.pinv(weight_mat.t().mm(weight_mat)) @ weight_mat.t() @ u.unsqueeze(1)
        v = v.squeeze(1)
        return v.mul_(target_sigma / u.dot(_mv(weight_mat, v)))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if isinstance(weight, UninitializedParameter):
            raise ValueError(  # noqa: TRY004  (torch's type)
                "The module passed to `SpectralNorm` can't have uninitialized parameters. Make "
                "sure to run the dummy forward before applying spectral normalization"
            )
        with no_grad():
            mat = fn.reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = _normalize(weight.new_empty(h).normal_(0, 1), fn.eps)
            v = _normalize(weight.new_empty(w).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain tensor until the first forward recomputes it (weight_orig stays the Parameter)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts checkpoints from before version 1 (which stored ``weight``, not ``weight_v``)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if (
            version is None
            and all(key + s in state_dict for s in ("_orig", "_u", "_v"))
            and key not in state_dict
        ):
            return  # a current checkpoint that merely lacks the metadata
        missing = False
        for s in ("_orig", "", "_u"):
            if key + s not in state_dict:
                missing = True
                if strict:
                    missing_keys.append(key + s)
        if missing:
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            weight = state_dict.pop(key)
            sigma = (weight_orig / weight).mean()
            mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(mat, state_dict[key + "_u"], sigma)


class SpectralNormStateDictHook:
    """Records the spectral-norm format version in the state dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        meta = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in meta:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        meta[key] = self.fn._version


def _is_conv_transpose(module) -> bool:
    try:
        from ..modules import conv
    except ImportError:  # the conv family is another issue's; without it nothing is transposed
        return False
    kinds = tuple(
        getattr(conv, n, None) for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
    )
    kinds = tuple(k for k in kinds if k is not None)
    return bool(kinds) and isinstance(module, kinds)


def spectral_norm(
    module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None
):
    """Divide ``module.<name>`` by its spectral norm (largest singular value), estimated with
    ``n_power_iterations`` power-iteration steps per training forward."""
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Undo :func:`spectral_norm`: ``name`` becomes a plain Parameter (the normalized value)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        h = getattr(hook, "hook", hook)  # Module wraps load pre-hooks
        if isinstance(h, SpectralNormLoadStateDictPreHook) and h.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
