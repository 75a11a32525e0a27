"""torch.utils.benchmark: Timer, Measurement, Compare for timing ember code.

``Timer(stmt, setup, globals=..., num_threads=...)`` times a Python statement with ``timeit``,
running ember on ``num_threads`` threads meanwhile (default 1, as in torch). ``blocked_autorange``
picks a run count per block and repeats blocks for ``min_run_time``; ``adaptive_autorange`` keeps
measuring until the interquartile range is within ``threshold`` of the median. Measurements print
like torch's. C++ statements (``language='c++'``) and callgrind are not available.
"""

from __future__ import annotations

import enum
import textwrap
import timeit as _timeit
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.runtime import get_num_threads, set_num_threads

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit"]

_UNITS = (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0))
_ENGLISH = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}


def select_unit(t: float) -> tuple[str, float]:
    """The largest time unit in which ``t`` (seconds) is at least 1."""
    for unit, scale in reversed(_UNITS):
        if t >= scale:
            return unit, scale
    return _UNITS[0]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class TaskSpec:
    """What a Measurement measured: the statement, its setup, and its labels."""

    def __init__(
        self,
        stmt: str,
        setup: str,
        global_setup: str = "",
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
    ) -> None:
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" in self.stmt:
            return "stmt:\n" + textwrap.indent(self.stmt, "  ") + "\n"
        return self.stmt + (f": {self.sub_label}" if self.sub_label else "")

    def _key(self) -> tuple:
        return tuple(vars(self).values())


class Measurement:
    """The times of ``number_per_run`` runs each (``raw_times``, seconds) of one task."""

    def __init__(
        self,
        number_per_run: int,
        raw_times: list[float],
        task_spec: TaskSpec,
        metadata: dict | None = None,
    ) -> None:
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name: str) -> Any:  # stmt, label, ... of the task spec
        if name != "task_spec" and name in vars(self.task_spec):
            return getattr(self.task_spec, name)
        raise AttributeError(name)

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        return float(np.median(self.times))

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))

    @property
    def iqr(self) -> float:
        q25, q75 = np.percentile(self.times, [25, 75])
        return float(q75 - q25)

    @property
    def title(self) -> str:
        return self.task_spec.title

    def meets_confidence(self, threshold: float = 0.1) -> bool:
        """Whether the interquartile range is under ``threshold`` of the median."""
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self) -> bool:
        return not self.meets_confidence(0.1)

    @property
    def significant_figures(self) -> int:
        """Digits of the median the spread supports (1 to 4)."""
        rel = self.iqr / self.median
        return 4 if rel == 0 else int(min(4, max(1, np.floor(-np.log10(rel)))))

    @staticmethod
    def merge(measurements: list[Measurement]) -> list[Measurement]:
        """One Measurement per task (same spec and runs per measurement), times pooled."""
        groups: dict[tuple, list[Measurement]] = {}
        for m in measurements:
            groups.setdefault((m.task_spec._key(), m.number_per_run), []).append(m)
        return [
            Measurement(ms[0].number_per_run, [t for m in ms for t in m.raw_times], ms[0].task_spec)
            for ms in groups.values()
        ]

    def __repr__(self) -> str:
        unit, scale = select_unit(self.median)
        n, runs = len(self.times), self.number_per_run
        threads = self.task_spec.num_threads
        thread_s = f"{threads} thread" + ("s" if threads != 1 else "")
        lines = [object.__repr__(self), self.title]
        if self.task_spec.description:
            lines.append(self.task_spec.description)
        if n == 1:
            lines += [
                f"  {self.median / scale:.2f} {unit}",
                f"  1 measurement, {runs} runs , {thread_s}",
            ]
        else:
            lines.append(f"  Median: {self.median / scale:.2f} {unit}")
            if n >= 4:
                q25, q75 = np.percentile(self.times, [25, 75])
                lines.append(
                    f"  IQR:    {self.iqr / scale:.2f} {unit} ({q25 / scale:.2f} to "
                    f"{q75 / scale:.2f})"
                )
            lines.append(f"  {n} measurements, {runs} runs per measurement, {thread_s}")
            rel = self.iqr / self.median
            if rel >= 0.1:
                why = (
                    "suggests significant environmental influence"
                    if rel >= 0.25
                    else "could indicate system fluctuation"
                )
                lines += [
                    (
                        f"  WARNING: Interquartile range is {rel * 100:.1f}% of the median "
                        "measurement."
                    ),
                    f"           This {why}.",
                ]
        return "\n".join(lines)


class Timer:
    """Time ``stmt`` (after ``setup``) in ``globals``, with ember on ``num_threads`` threads."""

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = _timeit.default_timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if isinstance(language, str):
            if language.lower() in ("py", "python"):
                language = Language.PYTHON
            elif language.lower() in ("cpp", "c++"):
                language = Language.CPP
            else:
                raise ValueError(f"Invalid language `{language}`.")
        if language is Language.CPP:
            raise NotImplementedError("ember's Timer times Python statements only")
        self._task_spec = TaskSpec(
            stmt, setup, global_setup, label, sub_label, description, env, num_threads
        )
        setup = f"{global_setup}\n{setup}" if global_setup else setup
        self._timer = _timeit.Timer(stmt, setup, timer, dict(globals or {}))

    def _run(self, number: int) -> float:
        prev = get_num_threads()
        set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            set_num_threads(prev)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One measurement of ``number`` runs (after one warm-up run)."""
        self._run(max(number // 100, 2))
        return Measurement(number, [self._run(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self) -> int:
        """Runs per block: a block should take at least a millisecond."""
        number = 1
        while self._run(number) < 1e-3 and number < 10**9:
            number *= 10
        return number

    def blocked_autorange(
        self, callback: Callable[[int, float], None] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of a fixed run count until ``min_run_time`` seconds were spent."""
        number = self._block_size()
        times: list[float] = []
        while sum(times) < min_run_time:
            t = self._run(number)
            times.append(t)
            if callback is not None:
                callback(number, t)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], None] | None = None,
    ) -> Measurement:
        """Blocks until the spread is within ``threshold`` of the median (at least
        ``min_run_time``, at most ``max_run_time`` seconds)."""
        number = self._block_size()
        times: list[float] = []
        while True:
            t = self._run(number)
            times.append(t)
            if callback is not None:
                callback(number, t)
            spent = sum(times)
            m = Measurement(number, times, self._task_spec)
            done = spent >= min_run_time and len(times) > 3 and m.meets_confidence(threshold)
            if done or spent >= max_run_time:
                return m


class Compare:
    """A table of medians: one table per label, a row per sub-label (or statement), a column
    per description, in one time unit."""

    def __init__(self, results: list[Measurement]) -> None:
        self._results = Measurement.merge(list(results))

    def __str__(self) -> str:
        if not self._results:
            return ""
        unit, scale = select_unit(min(m.median for m in self._results))
        out = []
        labels = dict.fromkeys(m.task_spec.label or "" for m in self._results)
        for label in labels:
            ms = [m for m in self._results if (m.task_spec.label or "") == label]
            cols = list(dict.fromkeys(m.task_spec.description or "" for m in ms))
            rows = list(dict.fromkeys(m.task_spec.sub_label or m.task_spec.stmt for m in ms))
            cells = {
                (m.task_spec.sub_label or m.task_spec.stmt, m.task_spec.description or ""): m
                for m in ms
            }
            width = max(len(r) for r in rows) + 2
            table = [f"[{f' {label} ':-^{width + 4 + 10 * len(cols)}}]"]
            table.append(" " * width + " |" + "|".join(f"{c:^10}" for c in cols))
            for r in rows:
                vals = [cells.get((r, c)) for c in cols]
                shown = [f"{v.median / scale:^10.1f}" if v else " " * 10 for v in vals]
                table.append(f"{r:>{width}} |" + "|".join(shown))
            out.append("\n".join(table))
        out.append(f"\nTimes are in {_ENGLISH[unit]} ({unit}).")
        return "\n\n".join(out[:-1]) + "\n" + out[-1] + "\n"

    def print(self) -> None:
        print(str(self))
