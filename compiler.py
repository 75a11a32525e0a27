"""ember.compile and ember.compiler (torch.compile / torch.compiler).

ember has no graph compiler: ``compile(model)`` returns a callable that runs the model as it is
(for an nn.Module, an ``OptimizedModule`` wrapping it as ``_orig_mod``, like torch's, so state_dict
keys and attribute access behave the same). Every torch.compile option is accepted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .nn.modules.module import Module

__all__ = [
    "OptimizedModule",
    "allow_in_graph",
    "assume_constant_result",
    "compile",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "list_backends",
    "reset",
]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# torch's registered backend names (torch._dynamo.list_backends(exclude_tags=()) plus debug ones)
_BACKENDS = frozenset(
    {
        "aot_eager",
        "aot_eager_decomp_partition",
        "aot_eager_decomp_partition_crossref",
        "aot_eager_decomp_partition_with_mode",
        "aot_eager_default_partitioner",
        "aot_ts",
        "cudagraphs",
        "dynamo_accuracy_minifier_backend",
        "dynamo_minifier_backend",
        "eager",
        "eager_debug",
        "eager_noexcept",
        "inductor",
        "invoke_subgraph",
        "openxla",
        "openxla_eval",
        "pre_dispatch_eager",
        "ts",
        "tvm",
        "onnxrt",
    }
)


class InvalidBackend(RuntimeError):
    """torch._dynamo.exc.InvalidBackend: an unknown ``backend=`` name."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available "
            "backends."
        )


class OptimizedModule(Module):
    """A compiled module: calls the original module (``_orig_mod``), as torch's does."""

    def __init__(self, mod: Module) -> None:
        super().__init__()
        self._orig_mod = mod
        self.training = mod.training

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod":
                raise
            return getattr(self._modules["_orig_mod"], name)


def _check(mode, options, backend) -> None:
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not (isinstance(backend, str) or callable(backend)):
        raise TypeError(f"backend must be a str or a callable, not {type(backend).__name__}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise InvalidBackend(backend)


def compile(
    model: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
) -> Any:
    """torch.compile: returns a callable that runs ``model`` (ember runs it eagerly).

    Works as ``compile(model, ...)``, ``@compile`` and ``@compile(mode=...)``.
    """
    _check(mode, options, backend)
    if model is None:
        return functools.partial(
            compile,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if not callable(model):
        raise RuntimeError(  # noqa: TRY004 - torch raises RuntimeError here
            "torch.compile: the model must be a callable (an nn.Module or function)"
        )
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        return model(*args, **kwargs)

    compiled._torchdynamo_orig_callable = model
    return compiled


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None):
    """Mark ``fn`` as not to be compiled (ember compiles nothing: returns ``fn``)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    return fn


def allow_in_graph(fn: Callable) -> Callable:
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    return fn


def is_compiling() -> bool:
    """False: ember never traces."""
    return False


def is_dynamo_compiling() -> bool:
    return False


def reset() -> None:
    """Clear compilation caches (ember has none)."""


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The names ``compile(..., backend=name)`` accepts (torch.compiler.list_backends; ember
    runs every backend eagerly)."""
    from ._dynamo import list_backends as dynamo_list_backends

    return dynamo_list_backends(exclude_tags)


def cudagraph_mark_step_begin() -> None:
    """Mark a CUDA-graph step boundary (ember records no CUDA graphs)."""
