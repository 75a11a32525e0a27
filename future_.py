"""torch.__future__: switches for behaviour torch plans to change (module parameter conversion).
ember.__future__ is this file, named future_.py so that it never shadows Python's __future__.

ember's ``Module._apply`` (``to()``, ``float()``, ``cuda()``...) keeps each parameter object and
replaces its contents, which is also what swapping does; with overwriting on (and swapping off)
it assigns new Parameter objects instead and leaves the old ones, and their gradients, as they
were."""

from __future__ import annotations

__all__ = [
    "get_overwrite_module_params_on_conversion",
    "get_swap_module_params_on_conversion",
    "set_overwrite_module_params_on_conversion",
    "set_swap_module_params_on_conversion",
]

_FLAGS = {"overwrite": False, "swap": False}


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether converting a module assigns new parameters instead of updating them in place."""
    _FLAGS["overwrite"] = value


def get_overwrite_module_params_on_conversion() -> bool:
    """The flag set by :func:`set_overwrite_module_params_on_conversion` (default False)."""
    return _FLAGS["overwrite"]


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether converting a module (and load_state_dict) swaps parameter contents with
    ``ember.utils.swap_tensors``."""
    _FLAGS["swap"] = value


def get_swap_module_params_on_conversion() -> bool:
    """The flag set by :func:`set_swap_module_params_on_conversion` (default False)."""
    return _FLAGS["swap"]
