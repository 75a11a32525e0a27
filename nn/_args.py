"""torch's TypeError for a non-Tensor argument, built only on the failure path: the functions
here run their bodies unchecked and call this once an AttributeError escaped (a list or a numpy
array has no ``_data``/``_names``/``relu``), so a correct call pays nothing."""

from __future__ import annotations

from ..core.arg_errors import (
    must_be_tensor,
    tensor_input,  # noqa: F401 (re-exported for nn.functional)
)


def arg_type_error(
    fn: str, exc: Exception, names: tuple, args: tuple, required: int = 1
) -> Exception:
    """``fn(): argument 'x' (position k) must be Tensor, not list`` for the first of ``args``
    (named ``names``, in signature order) that is not a Tensor, or ``exc`` itself when every one
    is a Tensor (the AttributeError is a real bug then). None is an absent optional, except
    for the first ``required`` arguments (the input is never optional)."""
    return must_be_tensor(fn, names, args, optional=names[required:]) or exc
