"""torch.autograd.forward_ad: dual tensors (``make_dual``), their tangents (``unpack_dual``).

ember computes forward-mode derivatives with its reverse-mode engine: a dual tensor is recorded
like any tensor that requires grad, and ``unpack_dual(y)`` gives the Jacobian-vector product
``J t`` as the derivative, with respect to a dummy cotangent ``u``, of ``sum_i t_i . (J_i^T u)``
(``autograd.functional.double_backward_jvp``, also behind ``jvp``). The tangent is computed when
asked for, so code that never unpacks pays only for recording the graph.

Difference from torch: a dual tensor made from a tensor that does not require grad reports
``requires_grad=True`` (the engine records through it).
"""

from __future__ import annotations

from typing import NamedTuple

from ..core.names import named_like
from ..core.tensor import Tensor
from .grad_mode import enable_grad

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

_LEVEL: list = []  # the open level's duals: [(dual tensor, tangent)]; empty list = no level


class UnpackedDualTensor(NamedTuple):
    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Open the dual level (one at a time, as in torch); returns its index (0)."""
    if _LEVEL:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _LEVEL.append([])
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: its dual tensors lose their tangents."""
    current = len(_LEVEL) - 1  # torch numbers the (only) level 0, and -1 when none is open
    if level is None:
        level = current
    if level != current:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _LEVEL.pop()


class dual_level:
    """``with dual_level():`` the region in which dual tensors carry tangents."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor equal to ``tensor`` whose forward derivative is ``tangent`` (same shape)."""
    if level is None:
        level = len(_LEVEL) - 1
    if level < 0:  # (a str level: Python's own TypeError, as in torch)
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: torch.{tensor.dtype.name}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: torch.{tangent.dtype.name}"
        )
    _level_arg("_make_dual", level)
    if level != 0:  # torch has one level, 0
        raise RuntimeError("Invalid level given to _make_dual")
    if not _LEVEL:
        raise RuntimeError(
            "Trying to access a forward AD level with an invalid index. This index was either not "
            "created or is already deleted."
        )
    if any(d is tensor for d, _ in _LEVEL[-1]):
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            "same level 0 is not supported."
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if tangent._names is not tensor._names and tangent._names != tensor._names:
        tangent = _named_tangent(tensor, tangent)
    with enable_grad():
        dual = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach()
    if not dual.requires_grad:
        dual.requires_grad_(True)
    _LEVEL[-1].append((dual, tangent))
    return dual


def _level_arg(fname: str, level) -> None:
    """The binding's ``level``: an int (a bool or a float is refused)."""
    if type(level) is not int and (isinstance(level, bool) or not hasattr(level, "__index__")):
        raise TypeError(f"{fname}(): argument 'level' must be int, not {type(level).__name__}")


def _named_tangent(tensor: Tensor, tangent: Tensor) -> Tensor:
    """The tangent is named like its primal, as a gradient is (spec 4.1): unnamed dims take the
    primal's names; names that do not unify with them are an error naming both lists."""
    return named_like(
        tangent,
        tensor._names,
        lambda got, want: (
            f"make_dual: the tangent's names {got} do not match the primal's names {want}"
        ),
    )


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: its value and its forward derivative along the
    level's dual tensors (None when it does not depend on any)."""
    from .function import JVP_TRICK
    from .functional import double_backward_jvp

    if level is None:
        level = len(_LEVEL) - 1
    if level < 0:  # no level: anything comes back as it is
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        from ..core.arg_errors import type_name

        raise TypeError(
            f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {type_name(tensor)}"
        )
    _level_arg("_unpack_dual", level)
    duals = _LEVEL[-1] if _LEVEL and level == 0 else []
    if level != 0 and _LEVEL and any(d is tensor for d, _ in _LEVEL[-1]):
        raise RuntimeError("Invalid level given to _fw_primal")  # only level 0 holds tangents
    keep = any(d._grad_fn is not None for d, _ in duals)  # a primal requires grad: stay in graph
    primal = tensor if keep else tensor.detach()
    for d, t in duals:
        if d is tensor:
            return UnpackedDualTensor(primal, t)
    if not duals or tensor._grad_fn is None:
        return UnpackedDualTensor(primal, None)
    JVP_TRICK[0] += 1  # a custom Function with only a jvp may serve as its vjp here
    try:
        with enable_grad():
            (tangent,) = double_backward_jvp(
                (tensor,), [d for d, _ in duals], [t for _, t in duals], keep
            )
    finally:
        JVP_TRICK[0] -= 1
    return UnpackedDualTensor(primal, tangent)
