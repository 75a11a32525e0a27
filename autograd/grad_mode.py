"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode. Thread-local, like torch's."""

from __future__ import annotations

import functools
import inspect
import sys
import threading
import warnings


class _State(threading.local):
    enabled = True  # whether ops record a graph
    inference = False
    # grad mode as set (enable_grad, set_grad_enabled) inside inference mode, where nothing is
    # recorded whatever it says (torch's inference mode bypasses autograd); is_grad_enabled reads it
    inference_grad = False
    anomaly = False
    anomaly_check_nan = True
    # set while the engine runs derivatives: intermediate gradient math is done unnamed (the
    # engine stamps each input's names on its gradient), so name rules cannot reject it
    names_off = False


_state = _State()


class names_on:  # a context manager named like a function, as no_grad
    """Name inference on again inside the engine, for user code it calls (tensor and module
    hooks, a custom Function's backward, checkpoint recomputation): only the engine's own
    derivative math runs unnamed; user code may look dims up by name (``g.sum('C')``)."""

    __slots__ = ("prev",)

    def __enter__(self) -> None:
        self.prev = _state.names_off
        _state.names_off = False

    def __exit__(self, *exc) -> None:
        _state.names_off = self.prev


# inference_mode blocks open now, in any thread. The op registry tags new tensors as inference
# tensors only while this is non-zero (then checking the thread's own _state.inference), so the
# normal path pays one list read, not a thread-local lookup.
_INFERENCE_OPEN = [0]
# whether inference mode was ever on: until then no tensor is an inference tensor, and the
# checks where autograd saves a tensor or an in-place op runs are skipped
_INFERENCE_USED = [False]
_inference_lock = threading.Lock()


def is_grad_enabled() -> bool:
    return _state.enabled or (_state.inference and _state.inference_grad)


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _Mode:
    """Base of the grad-mode managers: context manager and decorator, restores the previous state."""

    def __new__(cls, *args, **kwargs):
        # bare decorator use (``@no_grad``, ``@inference_mode``), like torch
        if len(args) == 1 and not kwargs and callable(args[0]) and cls is not set_grad_enabled:
            return cls()(args[0])
        return super().__new__(cls)

    def __call__(self, fn):
        if isinstance(fn, type):
            # torch still allows it (a function constructing the class under the mode), warning
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=2,
            )
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)

        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self._clone, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper

    def _clone(self):
        return type(self)()

    def __enter__(self):
        self._prev = (_state.enabled, _state.inference, _state.inference_grad)
        self._apply()
        return self

    def __exit__(self, *exc) -> None:
        _state.enabled, _state.inference, _state.inference_grad = self._prev


def _wrap_generator(make_ctx, fn):
    """A decorated generator runs each resumption under the mode (torch's _wrap_generator);
    the caller's mode is back in force between resumptions."""

    @functools.wraps(fn)
    def generator_context(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with make_ctx():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_ctx():
                        gen.close()
                    raise
                except BaseException:  # noqa: BLE001 (thrown into the generator, as torch does)
                    with make_ctx():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_ctx():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator_context


class no_grad(_Mode):
    """Disables gradient recording inside the block (or the decorated function)."""

    def _apply(self) -> None:
        _state.enabled = False
        _state.inference_grad = False


def _set_grad(mode: bool) -> None:
    """Grad mode on or off; inside inference mode only remembered (nothing records there)."""
    if _state.inference:
        _state.inference_grad = mode
    else:
        _state.enabled = mode


class enable_grad(_Mode):
    """Enables gradient recording inside the block, even within no_grad."""

    def _apply(self) -> None:
        _set_grad(True)


class _recording(_Mode):
    """Record a graph even inside inference mode: torch.func's transforms differentiate there
    (functorch does not go through the autograd that inference mode turns off)."""

    def _apply(self) -> None:
        _state.enabled = True


class set_grad_enabled(_Mode):
    """Sets grad mode to ``mode``. Takes effect at once when called, and as a context manager
    restores the previous mode on exit."""

    def __init__(self, mode: bool):
        if type(mode) is not bool:
            raise TypeError(
                "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                f"{_type_name(mode)}"
            )
        self.mode = mode
        self._prev = (_state.enabled, _state.inference, _state.inference_grad)
        _set_grad(mode)

    def _clone(self):
        return set_grad_enabled(self.mode)

    def __call__(self, fn):
        # used as a decorator: the mode applies inside fn only, not from decoration on
        _state.enabled, _state.inference, _state.inference_grad = self._prev
        return super().__call__(fn)

    def __enter__(self):
        return self

    def _apply(self) -> None:
        _set_grad(self.mode)


_MULTITHREADING = [True]  # process-wide, as torch's engine flag is


def is_multithreading_enabled() -> bool:
    """Whether the engine may run backward on worker threads (a recorded flag: ember's engine
    always runs on the calling thread)."""
    return _MULTITHREADING[0]


class set_multithreading_enabled:
    """Sets the engine's multithreading flag at once; as a context manager, restores the value
    it found on exit; as a decorator, sets it around each call."""

    def __init__(self, mode: bool) -> None:
        if type(mode) is not bool:
            raise TypeError(
                "set_multithreading_enabled(): argument 'enabled' (position 1) must be bool, not "
                f"{_type_name(mode)}"
            )
        self.mode = mode
        self.prev = _MULTITHREADING[0]
        _MULTITHREADING[0] = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _MULTITHREADING[0] = self.prev

    def clone(self) -> set_multithreading_enabled:
        return type(self)(self.mode)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper


def _type_name(v) -> str:
    """A type as CPython's tp_name spells it: a class written in Python (a heap type: Tensor,
    Fraction) by its bare name, a C type outside builtins by its module too (numpy.ndarray)."""
    t = type(v)
    if t.__module__ == "builtins" or t.__flags__ & _HEAPTYPE:
        return t.__name__
    return f"{t.__module__}.{t.__qualname__}"


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


class inference_mode(_Mode):
    """Like no_grad, for inference: no graph is recorded inside the block, and tensors made in it
    are inference tensors (``is_inference()``). ``mode=False`` turns it off (grad on), like torch."""

    def __new__(cls, mode=True):
        # as torch: only a bool is a mode; anything else (None, 1, a tensor) is taken for the
        # function being decorated
        if isinstance(mode, bool):
            return object.__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True):
        self.mode = mode

    def _clone(self):
        return inference_mode(self.mode)

    def __enter__(self):
        if self.mode:
            _INFERENCE_USED[0] = True
        with _inference_lock:
            _INFERENCE_OPEN[0] += 1
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        with _inference_lock:
            _INFERENCE_OPEN[0] -= 1

    def _apply(self) -> None:
        _state.enabled = not self.mode
        _state.inference = self.mode
        _state.inference_grad = False


def _inference_tensor(t) -> bool:
    """Whether ``t`` was made in inference mode (a view: whether its base was)."""
    ex = t._extra
    if ex is None:
        return False
    if ex.get("inf"):
        return True
    b = ex.get("base")
    return b is not None and b._extra is not None and bool(b._extra.get("inf"))


INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a clone "
    "to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
INFERENCE_INPLACE_MSG = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


def check_inference_inplace(t) -> None:
    """torch's error for an in-place write to an inference tensor outside inference mode. For
    in-place ops that bypass the registry's apply_inplace (zero_, fill_, __setitem__, init_)."""
    if _INFERENCE_USED[0] and not _state.inference and _inference_tensor(t):
        raise RuntimeError(INFERENCE_INPLACE_MSG)
