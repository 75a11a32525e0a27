"""torch.autograd.profiler: time every op a block of code runs (``profile``, ``record_function``).

The recorder hooks Python's profiling callback (``sys.setprofile``) only while a profile is
active, so ops pay nothing when no one profiles. It records a call of an op's public function
(``ember::add``), of its in-place variant (``ember::add_``), of a Python API function of
ember's namespaces (``ember::conv2d``), of a derivative in backward (``MulBackward0``) and of a
``record_function`` range, with the start and end times of each, nested as they ran. Only CPU
time of the calling thread is measured; device kernels are not timed.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import tracemalloc
import types

from ..core.autocast import unwrap as _unwrap_autocast
from .profiler_util import EventList, FunctionEvent

_PREFIX = "ember::"
# functions of ember's namespaces that are not ops: not recorded (torch records only ops)
_NOT_OPS = ("is_", "get_", "set_", "use_", "manual_seed", "seed", "initial_seed", "typename")
_CODES: dict | None = None  # code object -> event name, or a callable(frame) -> name


def _op_name(frame) -> str:
    loc = frame.f_locals
    od = loc.get("od")
    return _PREFIX + (od.name if od is not None else loc.get("name", frame.f_code.co_name))


def _inplace_name(frame) -> str:
    return _PREFIX + frame.f_locals["od"].name + "_"


def _backward_name(frame) -> str | None:
    node = frame.f_back.f_locals.get("node") if frame.f_back is not None else None
    return None if node is None else node.op.backward_name


def _closure_ids(fn) -> tuple:
    try:
        return tuple(id(c.cell_contents) for c in fn.__closure__ or ())
    except ValueError:  # an empty cell
        return ()


class _ClosureNames:
    """The name of a call of a shared code object, told by its free variables' values."""

    def __init__(self, code, names: dict):
        self.free = code.co_freevars
        self.names = names

    def __call__(self, frame):
        loc = frame.f_locals
        return self.names.get(tuple(id(loc.get(v)) for v in self.free))


def _codes() -> dict:
    """What to record, by code object: built once, at the first profile."""
    global _CODES
    if _CODES is not None:
        return _CODES
    import ember

    from ..core import registry
    from .function import _FunctionOp

    # several functions may share one code object (made by one factory, e.g. zeros/ones/empty):
    # the values of their closure's free variables tell them apart
    by_code: dict = {}
    for ns in (ember, ember.nn.functional, ember.linalg, ember.fft, ember.special):
        space = vars(ns)
        public = getattr(ns, "__all__", space)  # a module's helpers imported from core: not ops
        for key in public:
            fn = _unwrap_autocast(space.get(key))  # the wrapped op's frames are its calls
            if (
                isinstance(fn, types.FunctionType)
                and not key.startswith(("_",) + _NOT_OPS)
                and (fn.__module__ or "").startswith("ember")
            ):
                name = fn.__name__ if space.get(fn.__name__) is fn else key  # clip -> clamp
                by_code.setdefault(fn.__code__, {}).setdefault(_closure_ids(fn), _PREFIX + name)
    codes: dict = {
        code: next(iter(names.values())) if len(names) == 1 else _ClosureNames(code, names)
        for code, names in by_code.items()
    }
    for od in registry.OPS.values():
        public = _unwrap_autocast(od.public)
        if getattr(public, "__code__", None) is not None:
            codes[public.__code__] = _op_name
        inplace = getattr(ember.Tensor, od.name + "_", None)
        if getattr(inplace, "__name__", None) == "inplace_fn" or (
            inplace is not None and inplace.__code__.co_name == "inplace_fn"
        ):
            codes[inplace.__code__] = _inplace_name
        if od.vjp is not None:
            codes[od.vjp.__code__] = _backward_name
    codes[_FunctionOp.vjp.__code__] = _backward_name
    _CODES = codes
    return codes


def _shape_of(v):
    shape = getattr(v, "shape", None)
    if shape is not None and not isinstance(v, type):
        return list(shape)
    if isinstance(v, (list, tuple)) and v and all(hasattr(x, "shape") for x in v):
        return [list(x.shape) for x in v]
    return []


def _input_values(frame) -> list:
    """The arguments of the call running in ``frame``, in order."""
    code = frame.f_code
    loc = frame.f_locals
    n = code.co_argcount + code.co_kwonlyargcount
    values = [loc.get(name) for name in code.co_varnames[:n]]
    if code.co_flags & 0x04:  # *args: the registry's public functions take their inputs so
        values.extend(loc.get(code.co_varnames[n], ()))
    return values


def _input_shapes(frame) -> list:
    return [_shape_of(v) for v in _input_values(frame)]


def _user_stack(frame) -> list:
    out = []
    f = frame.f_back
    while f is not None and len(out) < 32:
        file = f.f_code.co_filename
        if not file.startswith(_EMBER_DIR) or file.startswith(_USER_DIRS):
            out.append(f"{file}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return out


_EMBER_DIR = __file__.rsplit("/", 2)[0] + "/"
# ember's own scripts and tests are user code to the profiler: their frames are kept
_USER_DIRS = tuple(_EMBER_DIR + d for d in ("tests/", "examples/", "bench/"))


def _flops(name: str, shapes: list, result) -> int:
    """Multiply-adds x 2 of the matrix products and convolutions (torch's with_flops ops)."""
    op = name[len(_PREFIX) :]
    try:
        if op in ("mm", "matmul", "bmm", "addmm", "baddbmm"):
            a, b = (shapes[1], shapes[2]) if op in ("addmm", "baddbmm") else (shapes[0], shapes[1])
            out = list(getattr(result, "shape", ()))
            k = a[-1] if a else 1
            n_out = 1
            for s in out:
                n_out *= s
            return 2 * n_out * k if a and b else 0
        if op == "linear":
            n_out = 1
            for s in getattr(result, "shape", ()):
                n_out *= s
            return 2 * n_out * shapes[1][-1]
        if op in ("conv1d", "conv2d", "conv3d"):
            w = shapes[1]
            per_out = 1
            for s in w[1:]:
                per_out *= s
            n_out = 1
            for s in getattr(result, "shape", ()):
                n_out *= s
            return 2 * n_out * per_out
    except (IndexError, TypeError):
        return 0
    return 0


class _Recorder:
    """Collects FunctionEvents between ``start()`` and ``stop()`` through sys.setprofile."""

    def __init__(
        self, record_shapes=False, profile_memory=False, with_stack=False, with_flops=False
    ):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.events: list[FunctionEvent] = []
        self.open: list = []  # (frame or None, event)
        self._prev = None
        self._own_tracemalloc = False
        self._t0 = 0
        self._epoch_us = 0.0

    def _now(self) -> float:
        return self._epoch_us + (time.perf_counter_ns() - self._t0) / 1e3

    def start(self) -> None:
        self.codes = _codes()
        self._t0 = time.perf_counter_ns()
        self._epoch_us = time.time_ns() / 1e3
        self.thread = threading.get_ident()
        if self.profile_memory and not tracemalloc.is_tracing():
            tracemalloc.start()
            self._own_tracemalloc = True
        self._prev = sys.getprofile()
        sys.setprofile(self._hook)

    def stop(self) -> None:
        sys.setprofile(self._prev)
        while self.open:  # ranges still open (an exception unwound through them)
            self._close(None)
        if self._own_tracemalloc:
            tracemalloc.stop()
            self._own_tracemalloc = False

    def _hook(self, frame, event, arg):
        if event == "call":
            name = self.codes.get(frame.f_code)
            if name is None:
                return
            if type(name) is not str:
                name = name(frame)
                if name is None:
                    return
            if self.open and self.open[-1][1].name == name:
                return  # F.relu calling the relu op: one event, as torch shows one
            shapes = _input_shapes(frame) if self.record_shapes or self.with_flops else None
            self._open(frame, name, shapes, self._user_frames(frame))
        elif event == "return" and self.open and self.open[-1][0] is frame:
            ev = self._close(arg)
            if self.with_flops:
                ev.flops = _flops(ev.name, ev.input_shapes, arg)
                if not self.record_shapes:
                    ev.input_shapes = []

    def _user_frames(self, frame):
        return _user_stack(frame) if self.with_stack else None

    def _open(self, frame, name, shapes, stack, user=False) -> FunctionEvent:
        ev = FunctionEvent(len(self.events), name, self.thread, self._now(), shapes, stack, user)
        if self.open:
            parent = self.open[-1][1]
            ev.cpu_parent = parent
            parent.cpu_children.append(ev)
        if self.profile_memory:
            ev.cpu_memory_usage = tracemalloc.get_traced_memory()[0]
        self.events.append(ev)
        self.open.append((frame, ev))
        return ev

    def _close(self, result) -> FunctionEvent:
        _, ev = self.open.pop()
        ev.end_us = self._now()
        if self.profile_memory:
            ev.cpu_memory_usage = tracemalloc.get_traced_memory()[0] - ev.cpu_memory_usage
        return ev

    def push_range(self, name: str) -> FunctionEvent:
        return self._open(None, name, [], self._user_frames(sys._getframe(2)), True)

    def pop_range(self, ev: FunctionEvent) -> None:
        # close what the range still holds open (a user range left by an exception) first
        while self.open:
            if self._close(None) is ev:
                break


_ACTIVE: list[_Recorder] = []  # the recorders running now (record_function marks them all)


def _forget_in_child() -> None:
    """A forked process (a DataLoader worker) does not profile: it drops the inherited hook."""
    if _ACTIVE:
        sys.setprofile(None)
        _ACTIVE.clear()


os.register_at_fork(after_in_child=_forget_in_child)


class profile:
    """Profile the ops a block runs (torch.autograd.profiler.profile).

    Args:
        enabled: record at all (False: the block runs unprofiled).
        record_shapes: keep the input shapes of each call (``key_averages(group_by_input_shape=
            True)`` groups by them).
        profile_memory: the bytes each call left allocated (tracemalloc: numpy reports its
            buffers to it), with and without its children.
        with_stack: the user's Python frames of each call (``group_by_stack_n``, ``export_stacks``).
        with_flops: the floating-point operations of matrix products and convolutions.
        use_cuda / use_device: accepted; device kernels are not timed (CPU time only).

    After the block, ``function_events`` holds one event per call; ``key_averages()`` sums them
    per op and ``table()`` prints torch's table.
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device=None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config=None,
        acc_events: bool = False,
        custom_trace_id_callback=None,
    ):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.acc_events = acc_events
        self.function_events: EventList | None = None
        self._recorder: _Recorder | None = None
        self._kept: list = []  # events of the earlier cycles, when acc_events

    def _start_recording(self) -> None:
        if self._recorder is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        self._recorder = _Recorder(
            self.record_shapes, self.profile_memory, self.with_stack, self.with_flops
        )
        _ACTIVE.append(self._recorder)
        self._recorder.start()

    def _stop_recording(self) -> None:
        rec = self._recorder
        if rec is None:
            return
        rec.stop()
        _ACTIVE.remove(rec)
        self._recorder = None
        events = self._kept + rec.events if self.acc_events else rec.events
        if self.acc_events:
            self._kept = events
        self.function_events = EventList(
            events, profile_memory=self.profile_memory, with_flops=self.with_flops
        )

    def __enter__(self):
        if self.enabled:
            self._start_recording()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop_recording()
        return False

    def _events(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False) -> str:  # fmt: skip
        return self._events().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
        )

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, **_):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        return self._events().total_average()

    def export_chrome_trace(self, path: str) -> None:
        self._events().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self._events().export_stacks(path, metric)

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def __str__(self) -> str:
        return self.table()


class record_function:
    """Label a block (or a decorated function) as one range in the active profiles' events.

    Args:
        name: the range's name in the table and the trace.
        args: accepted (torch attaches it to the trace event).
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._events: list = []

    def __enter__(self):
        self._events = [(rec, rec.push_range(self.name)) for rec in _ACTIVE]
        return self

    def __exit__(self, *exc):
        for rec, ev in self._events:
            if rec in _ACTIVE:
                rec.pop_range(ev)
        self._events = []
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


__all__ = ["EventList", "FunctionEvent", "profile", "record_function"]
