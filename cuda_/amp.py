"""torch.cuda.amp: the older spellings of GradScaler and autocast with device 'cuda'."""

from __future__ import annotations

import functools
import warnings

from ..amp import autocast_mode as _ac
from ..amp import grad_scaler as _gs
from ..core import dtype as _dt

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class GradScaler(_gs.GradScaler):
    """``torch.amp.GradScaler('cuda', ...)`` (disabled, with a warning, when there is no GPU)."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


class autocast(_ac.autocast):
    """``torch.autocast('cuda', ...)``."""

    def __init__(self, enabled: bool = True, dtype=_dt.float16, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.amp.custom_fwd(device_type='cuda')``."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None):
    """``torch.amp.custom_bwd(device_type='cuda')``."""
    return bwd
