"""The profiler's results: one FunctionEvent per recorded call, averages per key, torch's table.

Times are microseconds (floats), memory bytes, as in ``torch.autograd.profiler_util``. Only CPU
time is measured: ember's profiler does not time device kernels, so the device columns of
torch's events exist and read 0.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes: int) -> str:
    size = abs(nbytes)
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def _format_share(part: float, total: float) -> str:
    return "NaN" if total == 0 else f"{part * 100.0 / total:.2f}%"


class FunctionEvent:
    """One recorded call: an op, a Python API function, a backward step or a user range."""

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_us: float,
        input_shapes=None,
        stack=None,
        is_user_annotation: bool = False,
    ):
        self.id = id
        self.name = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.is_user_annotation = is_user_annotation
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_memory_usage = 0
        self.flops = 0
        self.count = 1
        self.device_type = "CPU"

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.end_us - self.start_us)
    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    # ember times no device kernels: torch's device fields exist and are 0
    device_time_total = self_device_time_total = cuda_time_total = self_cuda_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time)} "
            f"thread={self.thread} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


class FunctionEventAvg:
    """The events of one key summed: totals, call count, and per-call average ``cpu_time``."""

    def __init__(self, key: str, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes = input_shapes
        self.stack = stack
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.flops = 0
        self.is_user_annotation = False
        self.device_type = "CPU"

    device_time_total = self_device_time_total = cuda_time_total = self_cuda_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def add(self, other) -> FunctionEventAvg:
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.flops += other.flops
        self.is_user_annotation = other.is_user_annotation
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)}"
            f" cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


_FLOP_UNITS = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")


class EventList(list):
    """A list of FunctionEvents (or of FunctionEventAvgs, from ``key_averages``)."""

    def __init__(self, events: Iterable = (), *, profile_memory: bool = False, with_flops=False):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0):
        """One FunctionEventAvg per name (and input shapes / top stack frames when asked)."""
        groups: dict = {}
        for e in self:
            key = e.key
            if key.startswith("ProfilerStep#"):  # torch folds the steps into one row
                key = "ProfilerStep*"
            shapes = str(e.input_shapes) if group_by_input_shape else None
            stack = tuple(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else None
            avg = groups.get((key, shapes, stack))
            if avg is None:
                avg = groups[(key, shapes, stack)] = FunctionEventAvg(
                    key,
                    e.input_shapes if group_by_input_shape else None,
                    list(stack) if stack is not None else None,
                )
            avg.add(e)
        return EventList(
            groups.values(), profile_memory=self._profile_memory, with_flops=self._with_flops
        )

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """The events as torch's text table (Self CPU %, CPU total, # of Calls, ...)."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total
        shapes = any(getattr(e, "input_shapes", None) for e in self) and any(
            isinstance(e, FunctionEventAvg) and e.input_shapes is not None for e in self
        )
        stacks = any(isinstance(e, FunctionEventAvg) and e.stack for e in self)
        name_w = min(max((len(e.key) for e in self), default=0) + 4, max_name_column_width)
        cols = [("Name", name_w, lambda e: e.key)]
        cols += [
            ("Self CPU %", 12, lambda e: _format_share(e.self_cpu_time_total, total)),
            ("Self CPU", 12, lambda e: _format_time(e.self_cpu_time_total)),
            ("CPU total %", 12, lambda e: _format_share(e.cpu_time_total, total)),
            ("CPU total", 12, lambda e: _format_time(e.cpu_time_total)),
            ("CPU time avg", 12, lambda e: _format_time(e.cpu_time)),
        ]
        if self._profile_memory:
            cols += [
                ("CPU Mem", 12, lambda e: _format_memory(e.cpu_memory_usage)),
                ("Self CPU Mem", 12, lambda e: _format_memory(e.self_cpu_memory_usage)),
            ]
        cols.append(("# of Calls", 12, lambda e: str(e.count)))
        if shapes:
            shape_w = min(max_shapes_column_width, 35)
            cols.append(("Input Shapes", shape_w, lambda e: str(e.input_shapes)))
        if stacks:
            cols.append(("Source Location", max_src_column_width, lambda e: (e.stack or [""])[0]))
        if self._with_flops:
            peak = max((e.flops for e in self), default=0)
            scale = 0
            while scale < len(_FLOP_UNITS) - 1 and peak >= 1000 ** (scale + 1):
                scale += 1
            div = 1000.0**scale
            cols.append(
                (
                    f"Total {_FLOP_UNITS[scale]}",
                    12,
                    lambda e: f"{e.flops / div:.3f}" if e.flops else "--",
                )
            )

        def cell(text: str, width: int) -> str:
            return text if len(text) <= width else text[: width - 3] + "..."

        line = "".join("-" * w + "  " for _, w, _ in cols)
        out = []
        if header is not None:
            out += ["=" * (len(line) - 2), header]
        out += [line, "".join(cell(h, w).rjust(w) + "  " for h, w, _ in cols), line]
        for e in rows:
            out.append("".join(cell(f(e), w).rjust(w) + "  " for _, w, f in cols))
        out += [line, f"Self CPU time total: {_format_time(total)}", ""]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (chrome://tracing, Perfetto): one "X" event each."""
        pid = os.getpid()
        trace = []
        for e in self:
            trace.append(
                {
                    "ph": "X",
                    "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                    "name": e.name,
                    "pid": pid,
                    "tid": e.thread,
                    "ts": e.start_us,
                    "dur": e.cpu_time_total,
                    "args": {"Input Dims": e.input_shapes, "Ev Idx": e.id},
                }
            )
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write ``outermost;...;innermost;event value`` lines (flame-graph input), for events
        recorded ``with_stack=True``."""
        if metric not in ("self_cpu_time_total", "self_cuda_time_total", "self_device_time_total"):
            raise ValueError(f"metric should be one of self_cpu_time_total, ... got {metric}")
        with open(path, "w") as f:
            for e in self:
                value = getattr(e, metric)
                if e.stack and value > 0:
                    frames = ";".join(reversed(e.stack))
                    f.write(f"{frames};{e.name} {int(value)}\n")
