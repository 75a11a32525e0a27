"""torch.cuda.amp: the older spellings of GradScaler and autocast with device 'cuda'."""

from __future__ import annotations

import functools

from ..amp.deprecated import device_amp_classes
from ..core import dtype as _dt

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


GradScaler, autocast = device_amp_classes("cuda", _dt.float16, __name__)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.amp.custom_fwd(device_type='cuda')``."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None):
    """``torch.amp.custom_bwd(device_type='cuda')``."""
    return bwd
