"""torch.utils.checkpoint: activation checkpointing.

- ``use_reentrant=True`` (torch's default when it is not given, with its warning): the wrapped
  function runs under no_grad in the forward; its backward runs it again (with the random state
  of the forward) and backpropagates through that recomputation, accumulating into the
  parameters' ``.grad``, as torch's. ``autograd.grad`` / ``backward(inputs=...)`` are refused.
- ``use_reentrant=False``: torch's design. The function runs with its graph, under saved-tensor
  hooks that keep, of each tensor an op saves for backward, only its position in the run; the
  first backward use of one of them runs the function again under hooks that collect the
  recomputed tensors, and the graph reads them from there. The graph reaches every tensor the
  function uses (captured parameters too), so ``autograd.grad`` and double backward work.

Values and gradients are those of an ordinary run.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

from ..autograd import engine as _engine
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import saved_tensors_hooks
from ..core import random as _random
from ..core.tensor import Tensor
from ..nn.modules.container import Sequential
from ..nn.modules.module import Module

__all__ = ["checkpoint", "checkpoint_sequential"]


_PARTIAL_MSG = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)


def _use_reentrant(use_reentrant) -> bool:
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            UserWarning,
            stacklevel=3,
        )
        return True
    return bool(use_reentrant)


@contextlib.contextmanager
def _replayed(rng):
    """The random state of the forward, for the recomputation (then the current one back)."""
    with _random.fork_rng(enabled=rng is not None):
        if rng is not None:
            _random.set_rng_state(rng)
        yield


class _Checkpoint(Function):
    """forward(ctx, function, kwargs, rng, rec_ctx, *args): the function's output, computed
    without a graph (the reentrant variant)."""

    @staticmethod
    def forward(ctx, function, kwargs, rng, rec_ctx, *args):
        ctx.function, ctx.kwargs, ctx.rng, ctx.rec_ctx = function, kwargs, rng, rec_ctx
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_at])
        return function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        if _engine.PARTIAL[0]:
            raise RuntimeError(_PARTIAL_MSG)
        args = list(ctx.others)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        with _replayed(ctx.rng), ctx.rec_ctx or contextlib.nullcontext(), enable_grad():
            out = ctx.function(*args, **ctx.kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [
            (o, g)
            for o, g in zip(outs, grads)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        if pairs:  # the parameters' .grad are accumulated right here, as torch's reentrant way
            outs_, grads_ = zip(*pairs)
            _engine.backward(outs_, grads_)
        in_grads = [None] * len(args)
        for i in ctx.tensor_at:
            if args[i].requires_grad:
                in_grads[i] = args[i].grad
        return (None,) * 4 + tuple(in_grads)


class _Recomputation:
    """One non-reentrant checkpointed call: what its graph saved is kept as positions, filled by
    running the call again at the first backward use."""

    def __init__(self, function, args, kwargs, rng, rec_ctx):
        self.run = (function, args, kwargs, rng, rec_ctx)
        self.count = 0
        self.values: list | None = None

    def pack(self, t: Tensor) -> int:
        self.count += 1
        return self.count - 1

    def unpack(self, k: int) -> Tensor:
        if self.values is None:
            self.values = self._recompute()
        return self.values[k]

    def _recompute(self) -> list:
        function, args, kwargs, rng, rec_ctx = self.run
        values: list = []

        def keep(t: Tensor) -> Tensor:
            values.append(t)
            return t

        hooks = saved_tensors_hooks(keep, lambda t: t)
        with _replayed(rng), rec_ctx or contextlib.nullcontext(), enable_grad(), hooks:
            function(*args, **kwargs)
        if len(values) != self.count:
            raise RuntimeError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{self.count}\nNumber of tensors saved during recomputation: {len(values)}."
            )
        return values


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable | None = None,
    determinism_check: str = "default",
    debug: bool = False,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations; the backward recomputes
    them (see the module docstring for the two variants). ``context_fn`` returns two context
    managers: the first wraps the forward run, the second the recomputation."""
    reentrant = _use_reentrant(use_reentrant)
    if reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    fwd_ctx, rec_ctx = context_fn() if context_fn is not None else (None, None)
    rng = _random.get_rng_state() if preserve_rng_state else None
    if not reentrant:
        rec = _Recomputation(function, args, kwargs, rng, rec_ctx)
        with fwd_ctx or contextlib.nullcontext(), saved_tensors_hooks(rec.pack, rec.unpack):
            return function(*args, **kwargs)
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None",
            UserWarning,
            stacklevel=2,
        )
    with fwd_ctx or contextlib.nullcontext():
        return _Checkpoint.apply(function, kwargs, rng, rec_ctx, *args)


def checkpoint_sequential(
    functions, segments: int, input, use_reentrant: bool | None = None, **kwargs: Any
):
    """Run a Sequential (or a list of modules/functions) on ``input`` in ``segments`` chunks;
    every chunk but the last is checkpointed."""
    reentrant = _use_reentrant(use_reentrant)
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    n = len(functions)
    size = max(n // segments, 1) if segments else n
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        chunk = functions[start : end + 1]
        if all(isinstance(f, Module) for f in chunk):
            run = Sequential(*chunk)
        else:

            def run(x, chunk=chunk):
                for f in chunk:
                    x = f(x)
                return x

        input = checkpoint(run, input, use_reentrant=reentrant, **kwargs)
    for f in functions[end + 1 :]:
        input = f(input)
    return input
