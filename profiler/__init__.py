"""torch.profiler: profile a training loop step by step (schedule, on_trace_ready, traces).

Built on ember.autograd.profiler's recorder: CPU time of every op, backward step and
``record_function`` range. Device activities are accepted; their kernels are not timed.
"""

from __future__ import annotations

import enum
import os
import time
import warnings
from collections.abc import Callable, Iterable

from ..autograd.profiler import profile as _legacy_profile
from ..autograd.profiler import record_function
from ..autograd.profiler_util import EventList

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


_WARNINGS_SHOWN: set = set()


def _warn_once(msg: str) -> None:
    """Warn with ``msg`` the first time only, in this process (torch's profiler notices)."""
    if msg not in _WARNINGS_SHOWN:
        _WARNINGS_SHOWN.add(msg)
        warnings.warn(msg, stacklevel=4)


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during a step (the value a ``schedule`` returns)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def supported_activities() -> set:
    """The activities ember's profiler measures: CPU (device kernels are not timed)."""
    return {ProfilerActivity.CPU}


def schedule(
    *, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:  # fmt: skip
    """The action of each step: skip ``skip_first`` steps, then cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last one saves: ``on_trace_ready`` runs),
    ``repeat`` cycles (0: forever). ``skip_first_wait=1`` drops the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str, worker_name: str | None = None, use_gzip: bool = False
) -> Callable:
    """An ``on_trace_ready`` that writes each saved cycle as a Chrome trace file into
    ``dir_name`` (``<worker>.<time in ns>.pt.trace.json[.gz]``), as TensorBoard's plugin reads."""

    def handler(prof) -> None:
        import gzip
        import socket

        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json"
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
                g.write(f.read())
            os.remove(path)

    return handler


class profile(_legacy_profile):
    """Profile a block, optionally step by step (torch.profiler.profile).

    Args:
        activities: ProfilerActivity values; CPU is measured, device kernels are not timed.
        schedule: a function of the step number giving a ProfilerAction (see ``schedule``);
            without one, every step is recorded.
        on_trace_ready: called with the profiler when a recorded cycle ends (and at ``stop()``
            when it was recording).
        record_shapes, profile_memory, with_stack, with_flops: as in
            ember.autograd.profiler.profile.
        acc_events: keep the events of every cycle (default: the last cycle's only).

    Call ``prof.step()`` at the end of each training step.
    """

    def __init__(
        self,
        *,
        activities: Iterable | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback=None,
    ):
        super().__init__(
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            acc_events=acc_events,
        )
        acts = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        if acts - {ProfilerActivity.CPU}:
            warnings.warn(
                "ember's profiler measures CPU time only: device kernels are not timed",
                stacklevel=2,
            )
        self.activities = acts
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._step_range: record_function | None = None

    def start(self) -> None:
        if self.current_action in _RECORDING:
            self._begin()

    def stop(self) -> None:
        if self._recorder is not None:
            self._end(save=True)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def step(self) -> None:
        """Signal the end of a training step: the schedule decides what the next one does."""
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        recording = self._recorder is not None
        if recording and (
            prev is ProfilerAction.RECORD_AND_SAVE or self.current_action not in _RECORDING
        ):
            self._end(save=True)
            recording = False
        if self.current_action in _RECORDING:
            if recording:
                self._next_step_range()
            else:
                self._begin()

    def _begin(self) -> None:
        if self.function_events is not None and not self.acc_events:
            _warn_once(
                "Warning: Profiler clears events at the end of each cycle. Only events from the "
                "current cycle will be reported. To keep events across cycles, set "
                "acc_events=True."
            )
        self._start_recording()
        if self.record_steps:
            self._next_step_range()

    def _next_step_range(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
        self._step_range = record_function(f"ProfilerStep#{self.step_num}")
        self._step_range.__enter__()

    def _end(self, save: bool) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None
        self._stop_recording()
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _require_started(self, doing: str) -> None:
        # torch.profiler's own check (the legacy profiler's is a RuntimeError, kept below)
        if self.function_events is None and self._recorder is None:
            raise AssertionError(f"Profiler must be initialized before {doing}")

    def events(self) -> EventList:
        self._require_started("accessing events")
        return self._events()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, **kw):
        self._require_started("getting key averages")
        return super().key_averages(group_by_input_shape, group_by_stack_n, **kw)

    def export_chrome_trace(self, path: str) -> None:
        self._require_started("exporting chrome trace")
        super().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        self._require_started("exporting stacks")
        super().export_stacks(path, metric)
