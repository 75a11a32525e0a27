"""ember.amp (torch.amp): GradScaler and autocast (see their modules for what ember does)."""

from . import autocast_mode, grad_scaler
from .autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)
from .grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
]
