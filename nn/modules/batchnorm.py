"""Batch normalization modules (torch.nn.modules.batchnorm): _NormBase, _BatchNorm,
BatchNorm1d/2d/3d, LazyBatchNorm1d/2d/3d and SyncBatchNorm (one process: a BatchNorm).

Running statistics follow torch: ``momentum`` is the weight of the new batch statistic;
``momentum=None`` makes it a cumulative moving average (1 / num_batches_tracked); the running
variance is updated with the unbiased batch variance. Norm layers keep every name (spec 4.3).
"""

from __future__ import annotations

from typing import Any

from ...autograd.grad_mode import no_grad
from ...core import dtype as _dt
from ...core.ops.creation import ones, tensor, zeros
from ...core.tensor import Tensor
from .. import functional as F
from ..parameter import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module, _name_init
from .normalization import _register_affine, _reset_affine

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "SyncBatchNorm",
]


class _NormBase(Module):
    """Common base of _BatchNorm and _InstanceNorm: affine parameters and running statistics."""

    _version = 2
    __constants__ = ("track_running_stats", "momentum", "eps", "num_features", "affine")
    num_features: int
    eps: float
    momentum: float | None
    affine: bool
    track_running_stats: bool

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _register_affine(self, affine, bias, num_features, device, dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self, self.affine)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed: start it at 0
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                nbt = self.num_batches_tracked
                state_dict[key] = (
                    nbt
                    if nbt is not None and not isinstance(nbt, UninitializedBuffer)
                    else tensor(0, dtype=_dt.int64)
                )
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    """Batch normalization (_NormBase's constructor); subclasses check the input's dims."""

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        momentum = self.momentum
        factor = 0.0 if momentum is None else momentum
        if self.training and self.track_running_stats:
            nbt = self.num_batches_tracked
            if nbt is not None:
                nbt._data += 1  # in place, without a graph (torch's add_(1) under no_grad)
                nbt._ver[0] += 1
                factor = 1.0 / float(nbt._data) if momentum is None else momentum
        # in training the batch statistics are used; in eval the running ones if there are any
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_running else None,
            self.running_var if use_running else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


_name_init(_BatchNorm)  # torch's BatchNorm1d/2d/3d name _BatchNorm in argument errors


def _dim_check(*dims: int):
    """A ``_check_input_dim`` accepting inputs of ``dims`` dims, with torch's message."""
    expected = " or ".join(f"{d}D" for d in dims)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in dims:
            raise ValueError(f"expected {expected} input (got {input.dim()}D input)")

    return _check_input_dim


class BatchNorm1d(_BatchNorm):
    """Batch normalization of a 2D (N, C) or 3D (N, C, L) input."""

    _check_input_dim = _dim_check(2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of a 4D (N, C, H, W) input."""

    _check_input_dim = _dim_check(4)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of a 5D (N, C, D, H, W) input."""

    _check_input_dim = _dim_check(5)


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A norm layer whose ``num_features`` is inferred from the first input (dim 1)."""

    weight: UninitializedParameter
    bias: UninitializedParameter

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        # a 0-feature layer without parameters or buffers, then uninitialized ones
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=_dt.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def _features_dim(self, input: Tensor) -> int:
        return 1

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[self._features_dim(input)]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose ``num_features`` is inferred from ``input.size(1)``."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose ``num_features`` is inferred from ``input.size(1)``."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose ``num_features`` is inferred from ``input.size(1)``."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class SyncBatchNorm(_BatchNorm):
    """Batch normalization synchronised across processes; ember runs one process, where it is
    exactly a BatchNorm over the local batch (any input of 2 or more dims)."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any | None = None,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any | None = None) -> Module:
        """Replace every BatchNorm*D layer of ``module`` by a SyncBatchNorm sharing its
        parameters and buffers (the module itself when it is one); returns the result."""
        out = module
        if isinstance(module, _BatchNorm):
            out = SyncBatchNorm(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out
