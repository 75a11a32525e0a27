"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode. Thread-local, like torch's."""

from __future__ import annotations

import functools
import inspect
import sys
import threading


class _State(threading.local):
    enabled = True
    inference = False
    anomaly = False
    anomaly_check_nan = True
    # set while the engine runs derivatives: intermediate gradient math is done unnamed (the
    # engine stamps each input's names on its gradient), so name rules cannot reject it
    names_off = False


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


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
            raise TypeError(f"{type(self).__name__} cannot decorate a class")

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
        self._prev = (_state.enabled, _state.inference)
        self._apply()
        return self

    def __exit__(self, *exc) -> None:
        _state.enabled, _state.inference = self._prev


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


class enable_grad(_Mode):
    """Enables gradient recording inside the block, even within no_grad."""

    def _apply(self) -> None:
        _state.enabled = True


class set_grad_enabled(_Mode):
    """Sets grad mode to ``mode``. Takes effect at once when called, and as a context manager
    restores the previous mode on exit."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._prev = (_state.enabled, _state.inference)
        _state.enabled = self.mode

    def _clone(self):
        return set_grad_enabled(self.mode)

    def __call__(self, fn):
        # used as a decorator: the mode applies inside fn only, not from decoration on
        _state.enabled, _state.inference = self._prev
        return super().__call__(fn)

    def __enter__(self):
        return self

    def _apply(self) -> None:
        _state.enabled = self.mode


class inference_mode(_Mode):
    """Like no_grad, for inference: no graph is recorded inside the block (``mode=False`` disables it)."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def _clone(self):
        return inference_mode(self.mode)

    def _apply(self) -> None:
        if self.mode:
            _state.enabled = False
            _state.inference = True
