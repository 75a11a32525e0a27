"""skip_init: build a module without running its parameter initializers."""

from __future__ import annotations

import contextlib
import inspect
import threading

from ..modules.module import Module

__all__ = ["skip_init"]

_lock = threading.Lock()
# the initializers that draw or compute values: skipping them is the point of skip_init
_SKIPPED = (
    "uniform_",
    "normal_",
    "trunc_normal_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "eye_",
    "dirac_",
)


def _identity(tensor, *args, **kwargs):
    return tensor


@contextlib.contextmanager
def _initializers_skipped():
    from .. import init as nn_init

    with _lock:
        saved = {n: getattr(nn_init, n) for n in _SKIPPED}
        try:
            for n in _SKIPPED:
                setattr(nn_init, n, _identity)
            yield
        finally:
            for n, f in saved.items():
                setattr(nn_init, n, f)


def skip_init(module_cls, *args, **kwargs) -> Module:
    """``module_cls(*args, **kwargs)`` with its parameters left uninitialized (their values are
    arbitrary): for modules whose parameters are about to be overwritten anyway. The class must
    accept a ``device`` argument, as torch requires."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")  # noqa: TRY004
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    # ember has no 'meta' device: build on the final device with the initializers disabled
    with _initializers_skipped():
        return module_cls(*args, **kwargs)
