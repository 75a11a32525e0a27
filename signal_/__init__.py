"""torch.signal (bound as ``ember.signal``; the folder's underscore keeps it from shadowing
Python's own ``signal`` module when the repo root is on sys.path): window functions."""

import sys as _sys

from . import windows

__all__ = ["windows"]

# `import ember.signal.windows` finds this package and its module under their torch names
_sys.modules[__name__[:-1]] = _sys.modules[__name__]
_sys.modules[__name__[:-1] + ".windows"] = windows
