"""torch.amp.GradScaler: loss scaling for mixed-precision training.

Enabled, it scales the loss, unscales the gradients before ``step``, skips steps whose gradients
hold inf/nan and adapts the scale, as torch does. Disabled (``enabled=False``, or device 'cuda'
without a GPU), ``scale`` returns its input, ``step`` calls ``optimizer.step()`` and ``update`` does
nothing, so the same training loop runs either way.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum

import numpy as np

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict:
    return {"stage": OptState.READY, "found_inf": None}


def _f32(x: float) -> float:
    """torch keeps the scale in a float32 tensor: every value it takes is rounded to float32."""
    return float(np.float32(x))


class GradScaler:
    """Dynamic loss scaling (torch.amp.GradScaler)."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = str(device)
        if enabled and self._device.startswith("cuda"):
            from ..core.device import is_cuda_available

            if not is_cuda_available():
                warnings.warn(
                    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                    UserWarning,
                    stacklevel=2,
                )
                enabled = False
        self._enabled = bool(enabled)
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale: float | None = None  # set by the first scale() (torch's lazy init)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer_states: defaultdict = defaultdict(_fresh_state)

    # ------------------------------------------------------------------ the training-loop API
    def scale(self, outputs):
        """Multiply a loss (or a nested list/tuple of them) by the scale factor."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = _f32(self._init_scale)
        from ..core import dtype as _dt
        from ..core.ops.creation import tensor

        s = self._scale

        def apply(v):
            if isinstance(v, (list, tuple)):
                return type(v)(apply(x) for x in v)
            if hasattr(v, "shape"):
                # a 0-dim float32 tensor, as torch's: a 0-dim half loss is promoted to float32
                # (a Python float would keep it half, where a scaled loss overflows to inf)
                return v * tensor(s, dtype=_dt.float32, device=v.device)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (e.g. before clipping)."""
        if not self._enabled:
            return
        self._check_scaled("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from ..autograd.grad_mode import no_grad
        from ..core import dtype as _dt

        grads = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype is _dt.float16:  # checked before any gradient changes, as torch
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grads.append(g)
        inv = _f32(1.0 / self._scale)
        found_inf = False
        with no_grad():
            for g in grads:
                g.mul_(inv)
                if not found_inf and not bool(g.isfinite().all()):
                    found_inf = True
        state["found_inf"] = found_inf
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (if not done yet) and call ``optimizer.step()`` unless a gradient is inf/nan."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scaled("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Adapt the scale: back off after an inf/nan step, grow after ``growth_interval`` clean
        steps (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        self._check_scaled("update")
        if new_scale is not None:
            if hasattr(new_scale, "item"):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a float or a 1-element tensor.")
                new_scale = new_scale.item()
            elif not isinstance(new_scale, float):
                raise AssertionError("new_scale should be a float or a 1-element tensor.")
            self._scale = _f32(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()]
            found = [f for f in found if f is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale = _f32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale = _f32(self._scale * self._growth_factor)
                    self._growth_tracker = 0
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _check_scaled(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script did not "
                "use scaler.scale(loss or outputs) earlier in the iteration."
            )

    # ------------------------------------------------------------------ settings
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled; the initial scale before the first scale())."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        """Whether scaling is on."""
        return self._enabled

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        """scale, growth/backoff factors, growth interval and tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore from ``state_dict()``."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:  # otherwise the first scale() starts from it
            self._scale = _f32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(_fresh_state)
