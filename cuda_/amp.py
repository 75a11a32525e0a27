"""torch.cuda.amp: the older spellings of GradScaler and autocast with device 'cuda'."""

from __future__ import annotations

import warnings

from ..amp import autocast_mode as _amp
from ..amp.deprecated import device_amp_classes
from ..core import dtype as _dt

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


GradScaler, autocast = device_amp_classes("cuda", _dt.float16, __name__)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.amp.custom_fwd(args..., device_type='cuda')`` under its deprecated name."""
    _deprecated("custom_fwd")
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``torch.amp.custom_bwd(args..., device_type='cuda')`` under its deprecated name."""
    _deprecated("custom_bwd")
    return _amp.custom_bwd(bwd, device_type="cuda")


def _deprecated(what: str) -> None:
    warnings.warn(
        f"`torch.cuda.amp.{what}(args...)` is deprecated. Please use "
        f"`torch.amp.{what}(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=3,
    )
