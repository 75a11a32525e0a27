"""torch.utils.checkpoint: activation checkpointing.

The wrapped function runs under no_grad in the forward, so none of its activations are kept; the
backward runs it again (with the random state of the forward) and backpropagates through that
recomputation. Values and gradients are those of an ordinary run.

- ``use_reentrant=True`` (torch's default when it is not given, with its warning) behaves like
  torch's: the recomputation's backward accumulates into the parameters' ``.grad``, outputs need
  a grad only when an input does, and ``autograd.grad`` / ``backward(inputs=...)`` are refused.
- ``use_reentrant=False``: the parameters of a Module (or of a bound method's Module) are inputs
  of the checkpoint node, so their gradients flow like any other (``autograd.grad`` works). For a
  plain function the recomputation's backward accumulates into ``.grad`` as above, and
  ``autograd.grad`` through it is refused rather than answered without the parameters' share.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

from ..autograd import engine as _engine
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..core import random as _random
from ..core.ops.creation import empty
from ..core.tensor import Tensor
from ..nn.modules.container import Sequential
from ..nn.modules.module import Module

__all__ = ["checkpoint", "checkpoint_sequential"]


_PARTIAL_MSG = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)
_PLAIN_FN_MSG = (
    "ember's checkpoint(use_reentrant=False) of a plain function (not an nn.Module) cannot "
    "give .grad() or backward(inputs=...) its parameters' share: checkpoint the Module itself, "
    "or call .backward() without `inputs`."
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


class _Checkpoint(Function):
    """forward(ctx, function, kwargs, rng, rec_ctx, mode, n_args, *args, *extra): the function's
    output, computed without a graph.

    ``mode``: "reentrant" (torch's reentrant variant), "params" (``extra`` are the function's
    parameters, differentiated like inputs) or "dummy" (``extra`` is one empty tensor requiring
    grad, so that a function whose inputs need no grad still reaches its parameters).
    """

    @staticmethod
    def forward(ctx, function, kwargs, rng, rec_ctx, mode, n_args, *inputs):
        ctx.function, ctx.kwargs, ctx.rng, ctx.rec_ctx = function, kwargs, rng, rec_ctx
        ctx.mode, ctx.n_args, ctx.n_extra = mode, n_args, len(inputs) - n_args
        args = inputs[:n_args]
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_at], *inputs[n_args:])
        return function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        mode = ctx.mode
        if _engine.PARTIAL[0] and mode != "params":
            raise RuntimeError(_PARTIAL_MSG if mode == "reentrant" else _PLAIN_FN_MSG)
        saved = ctx.saved_tensors
        args = list(ctx.others)
        for i, t in zip(ctx.tensor_at, saved):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        with _random.fork_rng(enabled=ctx.rng is not None):
            if ctx.rng is not None:
                _random.set_rng_state(ctx.rng)
            with ctx.rec_ctx or contextlib.nullcontext(), enable_grad():
                out = ctx.function(*args, **ctx.kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [
            (o, g)
            for o, g in zip(outs, grads)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        wrt = [args[i] for i in ctx.tensor_at if args[i].requires_grad]
        if mode == "params":
            wrt += list(saved[len(ctx.tensor_at) :])
            got = [None] * len(wrt)
            if pairs and wrt:
                outs_, grads_ = zip(*pairs)
                got = list(_engine.grad(outs_, wrt, grads_, allow_unused=True))
        else:  # torch's reentrant way: the parameters' .grad are accumulated right here
            if pairs:
                outs_, grads_ = zip(*pairs)
                _engine.backward(outs_, grads_)
            got = [t.grad for t in wrt]
        got = iter(got)
        in_grads = [None] * ctx.n_args
        for i in ctx.tensor_at:
            if args[i].requires_grad:
                in_grads[i] = next(got)
        extra = [next(got) for _ in range(ctx.n_extra)] if mode == "params" else []
        extra += [None] * (ctx.n_extra - len(extra))
        return (None,) * 6 + (*in_grads, *extra)


def _module_params(function) -> list:
    owner = function if hasattr(function, "parameters") else getattr(function, "__self__", None)
    if owner is None or not callable(getattr(owner, "parameters", None)):
        return []
    return [p for p in owner.parameters() if p.requires_grad]


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
    if reentrant:
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None",
                UserWarning,
                stacklevel=2,
            )
        mode, extra = "reentrant", ()
    else:
        params = _module_params(function)
        if params:
            mode, extra = "params", tuple(params)
        else:
            mode, extra = "dummy", (empty(0, requires_grad=True),)
    with fwd_ctx or contextlib.nullcontext():
        return _Checkpoint.apply(function, kwargs, rng, rec_ctx, mode, len(args), *args, *extra)


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
            run = Sequential(*chunk)  # a Module: its parameters are the checkpoint's inputs
        else:

            def run(x, chunk=chunk):
                for f in chunk:
                    x = f(x)
                return x

        input = checkpoint(run, input, use_reentrant=reentrant, **kwargs)
    for f in functions[end + 1 :]:
        input = f(input)
    return input
