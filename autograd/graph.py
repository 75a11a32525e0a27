"""torch.autograd.graph: the graph's node type and hooks on the tensors it saves.

``saved_tensors_hooks(pack, unpack)`` decides what the graph keeps of each tensor saved for
backward (see autograd/saved_hooks.py), ``save_on_cpu()`` keeps them on the cpu,
``disable_saved_tensors_hooks`` forbids such hooks in a region,
``allow_mutation_on_saved_tensors`` lets in-place ops change saved tensors, ``increment_version``
marks a tensor as changed in place, and ``Node`` is the type every ``grad_fn`` is an instance of.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from ..core.tensor import Tensor
from . import engine as _engine
from . import grad_mode as _grad_mode
from . import saved_hooks as _sh
from .node import AccumulateGrad as _AccumulateGrad
from .node import GradientEdge
from .node import Node as _Node

__all__ = [
    "GradientEdge",
    "Node",
    "allow_mutation_on_saved_tensors",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]


class Node(abc.ABC):
    """The type of autograd graph nodes: every ``grad_fn`` (and the ``AccumulateGrad`` entries of
    ``next_functions``) is an instance (``isinstance(y.grad_fn, Node)``)."""


Node.register(_Node)


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The graph edge of ``tensor``'s gradient: its grad_fn and output number, or its gradient
    accumulator for a leaf; ``autograd.grad(outputs, edge)`` computes that gradient even once
    ``tensor`` itself is gone or changed."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    fn = tensor.grad_fn
    if fn is None:
        return GradientEdge(_AccumulateGrad(tensor), 0)
    ex = tensor._extra
    return GradientEdge(fn, ex.get("nr", 0) if ex else 0)


Node.register(_AccumulateGrad)


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> Any`` runs when an op saves a tensor for
    backward, and the graph keeps its result; ``unpack_hook(packed) -> Tensor`` gives the tensor
    back when backward needs it (at each use). Hooks nest: the innermost pair packs. Inside a
    pack hook no hook runs (its own ops save plain tensors).

    ember packs the inputs an op saves, the output its derivative reuses, and the tensors of
    ``ctx.save_for_backward``.
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if not (callable(self.pack_hook) and callable(self.unpack_hook)):
            raise TypeError(  # torch's pybind binding, before its own checks
                "_push_saved_tensors_default_hooks(): incompatible function arguments. The "
                "following argument types are supported:\n    1. (arg0: collections.abc.Callable, "
                "arg1: collections.abc.Callable) -> None\n\nInvoked with: "
                f"{self.pack_hook!r}, {self.unpack_hook!r}"
            )
        if _sh.DISABLED:
            raise RuntimeError(_sh.DISABLED[-1])
        _sh.HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        _sh.HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the cpu and moved back to their device in backward (frees
    device memory between forward and backward). ``pin_memory`` is accepted (numpy memory is
    not pinned)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor):
            return t.device, t.cpu()

        def unpack(packed) -> Tensor:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class _AllowMutationOnSavedContext:
    """What ``allow_mutation_on_saved_tensors()`` yields; open while the context is."""

    def __init__(self) -> None:
        self.open = True


_MUTATION_CTX: list = []  # the open allow_mutation_on_saved_tensors context, if any


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which tensors saved for backward may be modified in place: backward
    uses their values as they were when saved, where it would otherwise refuse to run. The graph
    must be differentiated inside the context.

    ember keeps a copy of each tensor saved inside the context (torch copies a saved tensor when
    it is first modified); a tensor left unmodified is used itself, so double backward through it
    works as usual."""
    if _MUTATION_CTX:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def pack(t: Tensor):
        with _grad_mode.no_grad():
            return t, t._ver[0], t.clone()

    def unpack(packed) -> Tensor:
        if not ctx.open:
            # torch's text, its missing space included
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                "in which the graph was originally recorded."
            )
        t, ver, copy = packed
        return t if t._ver[0] == ver else copy

    _MUTATION_CTX.append(ctx)
    try:
        with saved_tensors_hooks(pack, unpack):
            yield ctx
    finally:
        ctx.open = False
        _MUTATION_CTX.pop()


class disable_saved_tensors_hooks:
    """Context manager in which entering ``saved_tensors_hooks`` raises RuntimeError with
    ``error_message`` (for code that must not have its saved tensors packed)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self):
        if _sh.HOOKS and _sh.HOOKS[-1] is not None:
            raise RuntimeError(self.error_message)
        _sh.DISABLED.append(self.error_message)
        return self

    def __exit__(self, *exc) -> None:
        _sh.DISABLED.pop()


class _MultiHandle:
    """Removes every tensor hook of one register_multi_grad_hook call."""

    def __init__(self, handles: list) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors, fn: Callable, *, mode: str = "all") -> _MultiHandle:
    """Call ``fn`` once per backward pass over several tensors: ``mode="all"``: when the
    gradients of all of them that the pass computes are there, with the tuple of gradients
    (None for those it does not compute); ``mode="any"``: at the first one, with that gradient.
    Returns a handle whose ``remove()`` unregisters it."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "all" and not all(t.requires_grad for t in tensors):
        raise AssertionError("Expected gradient function to be set")
    state: dict = {"run": None}

    def hook_for(i: int):
        def hook(grad):
            run = _engine.RUNS[-1] if _engine.RUNS else None
            if state["run"] is not run or run is None:  # a new backward pass
                state.update(run=run, grads=[None] * len(tensors), fired=False)
                state["left"] = (
                    sum(t.requires_grad and run.computes(t) for t in tensors) if run else 1
                )
            if mode == "any":
                if not state["fired"]:
                    state["fired"] = True
                    fn(grad)
                return
            state["grads"][i] = grad
            state["left"] -= 1
            if state["left"] == 0:
                fn(tuple(state["grads"]))

        return hook

    return _MultiHandle(
        [t.register_hook(hook_for(i)) for i, t in enumerate(tensors) if t.requires_grad]
    )


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter, as an in-place op would (a derivative that saved the tensor
    then refuses to run)."""
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    elif not isinstance(tensor, Iterable):
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input")  # noqa: TRY004
    tensors = list(tensor)
    if not all(isinstance(t, Tensor) for t in tensors):
        raise RuntimeError("increment_version expects each element of the iterable to be a tensor")
    for t in tensors:
        t._ver[0] += 1
