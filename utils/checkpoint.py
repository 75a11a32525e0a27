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
from ..core import autocast as _autocast
from ..core import random as _random
from ..core.tensor import Tensor
from ..nn.modules.container import Sequential
from ..nn.modules.module import Module

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "get_device_states",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
    "set_device_states",
]


class CheckpointError(RuntimeError):
    """The recomputation of a non-reentrant checkpoint did not reproduce its forward (a different
    number of saved tensors, or ones of another shape, dtype or device)."""


def detach_variable(inputs: tuple) -> tuple:
    """``inputs`` with every tensor detached into a new leaf that requires grad as it did (the
    helper hand-written checkpoints use to run a function on fresh leaves)."""
    if not isinstance(inputs, tuple):  # torch's type and words
        raise RuntimeError(  # noqa: TRY004
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for v in inputs:
        if isinstance(v, Tensor):
            d = v.detach()
            d.requires_grad = v.requires_grad
            v = d
        out.append(v)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """Warn (as torch) when no tensor of ``inputs`` requires grad: a checkpoint of them would
    give no gradients."""
    if not any(isinstance(v, Tensor) and v.requires_grad for v in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")


def get_device_states(*args) -> tuple[list[int], list[Tensor]]:
    """The GPUs the tensors among ``args`` live on (first seen first) and their random states."""
    devices = []
    for a in args:
        if isinstance(a, Tensor) and a.device.type == "cuda" and a.get_device() not in devices:
            devices.append(a.get_device())
    if not devices:
        return [], []
    from .. import cuda

    return devices, [cuda.get_rng_state(d) for d in devices]


def set_device_states(devices, states, *, device_type=None) -> None:
    """Set the random states of GPUs ``devices`` to ``states`` (get_device_states' result)."""
    if device_type not in (None, "cuda"):
        raise RuntimeError(f"set_device_states: ember has no '{device_type}' devices")
    if not devices:
        return
    from .. import cuda

    for d, state in zip(devices, states):
        cuda.set_rng_state(state, d)


def noop_context_fn() -> tuple:
    """The default ``context_fn`` of :func:`checkpoint`: no context around either run."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# Set by the context managers below; None: each checkpoint call's own argument decides.
_EARLY_STOP: list = [None]
_DEBUG: list = [None]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Within the block, non-reentrant checkpoints stop recomputing once every saved tensor the
    backward needs is back (``enable=True``) or always rerun the whole function, overriding their
    ``early_stop`` argument."""
    prev = _EARLY_STOP[0]
    _EARLY_STOP[0] = enable
    try:
        yield
    finally:
        _EARLY_STOP[0] = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Within the block, checkpoints run as if ``debug=enabled`` had been passed (None: each
    call's own argument). ember's recomputation errors say the same with or without it."""
    prev = _DEBUG[0]
    _DEBUG[0] = enabled
    try:
        yield
    finally:
        _DEBUG[0] = prev


_DETERMINISM_CHECKS = ["default", "none"]
_TIP = (
    "\n\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint-debug mode globally."
)


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every needed tensor is back (early stop)."""


_PARTIAL_MSG = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)


def _use_reentrant(use_reentrant, sequential: bool = False) -> bool:
    if use_reentrant is None:
        # torch words the two callers' deprecation differently
        if sequential:
            who = "torch.utils.checkpoint.checkpoint_sequential"
            when = "In version 2.9 we will raise an exception if use_reentrant is not passed."
        else:
            who = "torch.utils.checkpoint"
            when = (
                "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise "
                "an exception."
            )
        warnings.warn(
            f"{who}: the use_reentrant parameter should be passed explicitly. {when} "
            "use_reentrant=False is recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
            "differences between the two variants.",
            UserWarning,
            stacklevel=3,
        )
        return True
    return bool(use_reentrant)


def _autocast_state() -> tuple:
    """The autocast state of each device type now, (device, enabled, dtype, cache_enabled):
    torch recomputes a checkpointed call under its forward's autocast state (the backward runs
    outside the forward's ``with torch.autocast`` block; recomputed in float32, the saved
    tensors had the wrong dtype)."""
    st = _autocast.state
    return tuple(
        (dev, on, st.dtype[dev], st.cache_enabled) for dev, on in sorted(st.enabled.items())
    )


@contextlib.contextmanager
def _autocast_as(saved: tuple):
    """The autocast state ``saved`` by :func:`_autocast_state`, for the recomputation."""
    from ..amp.autocast_mode import autocast

    with contextlib.ExitStack() as stack:
        for dev, on, dtype, cache in saved:
            stack.enter_context(autocast(dev, dtype=dtype, enabled=on, cache_enabled=cache))
        yield


@contextlib.contextmanager
def _replayed(rng):
    """The random state of the forward, for the recomputation (then the current one back)."""
    with _random.fork_rng(enabled=rng is not None):
        if rng is not None:
            _random.set_rng_state(rng)
        yield


class CheckpointFunction(Function):
    """forward(ctx, function, kwargs, rng, *args): the function's output, computed without a
    graph (the reentrant variant)."""

    # torch's CheckpointFunction has no setup_context, so torch.func transforms refuse it
    _as_torch_old_style = True

    @staticmethod
    def forward(ctx, function, kwargs, rng, *args):
        ctx.function, ctx.kwargs, ctx.rng = function, kwargs, rng
        ctx.autocast = _autocast_state()
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
        with _replayed(ctx.rng), _autocast_as(ctx.autocast), enable_grad():
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
        return (None,) * 3 + tuple(in_grads)


class _Recomputation:
    """One non-reentrant checkpointed call: what its graph saved is kept as positions (and the
    metadata the determinism check compares), filled by running the call again at the first
    backward use."""

    def __init__(self, function, args, kwargs, rng, rec_ctx, early_stop, check):
        self.run = (function, args, kwargs, rng, rec_ctx)
        self.autocast = _autocast_state()
        self.early_stop, self.check = early_stop, check
        self.meta: list = []
        self.values: list | None = None

    @staticmethod
    def _meta(t: Tensor) -> dict:
        return {"shape": t.shape, "dtype": t.dtype, "device": t.device}

    def pack(self, t: Tensor) -> int:
        self.meta.append(self._meta(t))
        return len(self.meta) - 1

    def unpack(self, k: int) -> Tensor:
        if self.values is None:
            self.values = self._recompute()
        return self.values[k]

    def _recompute(self) -> list:
        function, args, kwargs, rng, rec_ctx = self.run
        count = len(self.meta)
        values: list = []

        def keep(t: Tensor) -> Tensor:
            if len(values) == count:  # reached only without early stop
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    "than during the original forward pass." + _TIP
                )
            values.append(t)
            if self.early_stop and len(values) == count:
                raise _StopRecomputation  # the rest of the function is not needed
            return t

        hooks = saved_tensors_hooks(keep, lambda t: t)
        try:
            with _replayed(rng), _autocast_as(self.autocast), rec_ctx, enable_grad(), hooks:
                function(*args, **kwargs)
        except _StopRecomputation:
            pass
        if len(values) != count:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{count}\nNumber of tensors saved during recomputation: {len(values)}." + _TIP
            )
        if self.check == "default":
            bad = [
                f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed metadata: {r}\n"
                for i, (m, v) in enumerate(zip(self.meta, values))
                if (r := self._meta(v)) != m
            ]
            if bad:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    "different metadata than during the forward pass.\n" + "".join(bad) + "." + _TIP
                )
        return values


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations; the backward recomputes
    them (see the module docstring for the two variants).

    Only the non-reentrant variant takes ``context_fn`` (two context managers: the first wraps the
    forward run, the second the recomputation), ``debug``, ``determinism_check`` ("default":
    the recomputed saved tensors must have the shapes, dtypes and devices of the forward's, else
    :class:`CheckpointError`; "none": unchecked) and ``early_stop`` (stop the recomputation once
    every saved tensor is back; :func:`set_checkpoint_early_stop` overrides it)."""
    reentrant = _use_reentrant(use_reentrant)
    if reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    elif determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {_DETERMINISM_CHECKS}, but got {determinism_check}"
        )
    rng = _random.get_rng_state() if preserve_rng_state else None
    if not reentrant:
        fwd_ctx, rec_ctx = context_fn()
        stop = early_stop if _EARLY_STOP[0] is None else _EARLY_STOP[0]
        rec = _Recomputation(function, args, kwargs, rng, rec_ctx, stop, determinism_check)
        with fwd_ctx, saved_tensors_hooks(rec.pack, rec.unpack):
            return function(*args, **kwargs)
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None",
            UserWarning,
            stacklevel=2,
        )
    return CheckpointFunction.apply(function, kwargs, rng, *args)


def checkpoint_sequential(
    functions, segments: int, input, use_reentrant: bool | None = None, **kwargs: Any
):
    """Run a Sequential (or a list of modules/functions) on ``input`` in ``segments`` chunks;
    every chunk but the last is checkpointed."""
    reentrant = _use_reentrant(use_reentrant, sequential=True)
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:  # torch takes no other checkpoint option here
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    # torch's arithmetic: 0 segments divide by zero, more segments than functions make a zero
    # step (range's ValueError), a negative count checkpoints nothing
    size = len(functions) // segments
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

        input = checkpoint(run, input, use_reentrant=reentrant, preserve_rng_state=preserve)
    for f in functions[end + 1 :]:
        input = f(input)
    return input
