"""torch.autograd.anomaly_mode: the module path torch gives anomaly detection's context managers
(they live in ember.autograd.anomaly)."""

from __future__ import annotations

from .anomaly import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
