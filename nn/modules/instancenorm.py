"""Instance normalization modules (torch.nn.modules.instancenorm): InstanceNorm1d/2d/3d and
their Lazy forms. Each (sample, channel) is normalized over its spatial dims; an unbatched input
(no N dim) is accepted. Norm layers keep every name (spec 4.3)."""

from __future__ import annotations

import warnings

from ...core.tensor import Tensor
from .. import functional as F
from .batchnorm import _dim_check, _LazyNormBase, _NormBase

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class _InstanceNorm(_NormBase):
    """Instance normalization; no affine and no running statistics by default."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def _get_no_batch_dim(self) -> int:
        raise NotImplementedError

    def _handle_no_batch_input(self, input: Tensor) -> Tensor:
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            # checkpoints from before 0.4 stored running stats this layer does not track
            found = []
            for name in ("running_mean", "running_var"):
                key = prefix + name
                if key in state_dict:
                    found.append(key)
            if found:
                klass = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with "
                    "track_running_stats=False. If state_dict is a checkpoint saved before 0.4.0, "
                    "this may be expected because {klass} does not track running stats by "
                    "default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True in "
                    "{klass} to enable them. See the documentation of {klass} for details.".format(
                        names=" and ".join(f'"{k}"' for k in found), klass=klass
                    )
                )
                for key in found:
                    state_dict.pop(key)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of a (N, C, L) or unbatched (C, L) input."""

    _check_input_dim = _dim_check(2, 3)

    def _get_no_batch_dim(self) -> int:
        return 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of a (N, C, H, W) or unbatched (C, H, W) input."""

    _check_input_dim = _dim_check(3, 4)

    def _get_no_batch_dim(self) -> int:
        return 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of a (N, C, D, H, W) or unbatched (C, D, H, W) input."""

    _check_input_dim = _dim_check(4, 5)

    def _get_no_batch_dim(self) -> int:
        return 4


class _LazyInstanceNorm(_LazyNormBase, _InstanceNorm):
    def _features_dim(self, input: Tensor) -> int:
        return input.dim() - self._get_no_batch_dim()


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """An InstanceNorm1d whose ``num_features`` is inferred from the input's channel dim."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """An InstanceNorm2d whose ``num_features`` is inferred from the input's channel dim."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """An InstanceNorm3d whose ``num_features`` is inferred from the input's channel dim."""

    cls_to_become = InstanceNorm3d
