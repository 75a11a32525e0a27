"""torch.cpu.amp and torch.cuda.amp: the older, deprecated spellings of ``GradScaler`` and
``autocast`` bound to one device (``ember.cpu.amp``, ``ember.cuda.amp`` hold them)."""

from __future__ import annotations

import warnings

from ..core import dtype as _dt
from . import autocast_mode as _ac
from . import grad_scaler as _gs


def device_amp_classes(device: str, autocast_dtype: _dt.dtype, module: str) -> tuple:
    """``(GradScaler, autocast)`` for ``torch.<device>.amp``: torch's own classes with the device
    fixed, warning like torch's that the spelling is deprecated."""

    class GradScaler(_gs.GradScaler):
        __doc__ = f"``torch.amp.GradScaler('{device}', ...)`` under its deprecated name."

        def __init__(
            self,
            init_scale: float = 2.0**16,
            growth_factor: float = 2.0,
            backoff_factor: float = 0.5,
            growth_interval: int = 2000,
            enabled: bool = True,
        ) -> None:
            _deprecated(device, "GradScaler")
            super().__init__(
                device, init_scale, growth_factor, backoff_factor, growth_interval, enabled
            )

    class autocast(_ac.autocast):
        __doc__ = f"``torch.autocast('{device}', ...)`` under its deprecated name."

        def __init__(
            self, enabled: bool = True, dtype=autocast_dtype, cache_enabled: bool = True
        ) -> None:
            _deprecated(device, "autocast")
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    for cls in (GradScaler, autocast):
        cls.__module__ = module
        cls.__qualname__ = cls.__name__
    return GradScaler, autocast


def _deprecated(device: str, what: str) -> None:
    warnings.warn(
        f"`torch.{device}.amp.{what}(args...)` is deprecated. Please use "
        f"`torch.amp.{what}('{device}', args...)` instead.",
        FutureWarning,
        stacklevel=3,
    )
