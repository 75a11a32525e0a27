"""torch._dynamo: the entry points scripts call around torch.compile.

ember has no graph capture (see ember.compiler): ``optimize`` returns the function unchanged,
``mark_dynamic``/``mark_static`` record nothing, ``reset`` has no
cache to clear, ``explain`` is unavailable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compiler import (
    OptimizedModule,
    allow_in_graph,
    assume_constant_result,
    disable,
    is_compiling,
    reset,
)
from . import config

__all__ = [
    "OptimizedModule",
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "explain",
    "graph_break",
    "is_compiling",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "maybe_mark_dynamic",
    "optimize",
    "reset",
]


def mark_dynamic(t: Any, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Mark dims of ``t`` as dynamic for the compiler (ember records nothing; like torch, the
    dims are not checked here)."""


def maybe_mark_dynamic(t: Any, index) -> None:
    """See mark_dynamic."""


def mark_static(t: Any, index=None) -> None:
    """Mark dims of ``t`` (or a module) as static for the compiler (ember records nothing)."""


def mark_static_address(t: Any, guard: bool = True) -> None:
    """Mark ``t``'s storage address as static for CUDA graphs (ember records none)."""


def graph_break(msg: str = "") -> None:
    """A graph break: nothing to break in eager ember."""


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """torch's default list of compile backends (accepted by ember.compile, which runs eagerly)."""
    return ["cudagraphs", "inductor", "openxla", "tvm"]


def optimize(*args: Any, **kwargs: Any) -> Callable[[Callable], Callable]:
    """``optimize(backend)(fn)``, the old spelling of torch.compile: returns ``fn`` unchanged."""
    return lambda fn: fn


def explain(f: Callable, *extra_args: Any, **extra_kwargs: Any):
    raise NotImplementedError(
        "torch._dynamo.explain: ember has no graph capture to explain (torch.compile runs the "
        "model eagerly)"
    )
