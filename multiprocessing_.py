"""ember.multiprocessing (torch.multiprocessing): Python's multiprocessing API, plus ``spawn`` /
``start_processes`` that run ``fn(i, *args)`` in ``nprocs`` processes and report a child's
exception in the parent, and the tensor-sharing strategy switches (ember's tensors are pickled by
value: the strategy is recorded only).

The file is named ``multiprocessing_.py`` because a folder named ``multiprocessing`` in the repo
root would shadow Python's own module for anything run from the checkout; the package registers
this module as ``ember.multiprocessing``.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import sys
import traceback
from multiprocessing import *

__all__ = [*multiprocessing.__all__]  # noqa: PLE0604 - Python's own list of names
__all__ += [
    "ProcessContext",
    "ProcessExitedException",
    "ProcessRaisedException",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "spawn",
    "start_processes",
]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor"]


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies torch knows (ember records the choice only)."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy


def _register_tensor_reducers() -> None:
    # as torch.multiprocessing does: tensors sent to a child process (Process args under spawn,
    # queues) pickle with multiprocessing's own pickler, which here sends a shared tensor as a
    # reference to its memory (core/shared_memory.py) and any other tensor by value
    from multiprocessing.reduction import ForkingPickler

    from .core.shared_memory import reduce_for_process
    from .core.tensor import Tensor
    from .nn.parameter import Parameter

    for cls in (Tensor, Parameter):  # the pickler's table is keyed by exact type
        ForkingPickler.register(cls, reduce_for_process)


_register_tensor_reducers()


class ProcessException(Exception):
    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or by a signal."""

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i: int, args: tuple, error_queue) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - sent to the parent, which raises it
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes started by ``start_processes``; ``join()`` waits and raises a child's
    error."""

    def __init__(self, processes: list, error_queues: list) -> None:
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait for the processes; True once all are done. Raises if one failed."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for s in ready:
            i = self.sentinels.pop(s)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        p = self.processes[failed]
        q = self.error_queues[failed]
        if not q.empty():
            tb = q.get()
            msg = f"\n\n-- Process {failed} terminated with the following error:\n{tb}"
            raise ProcessRaisedException(msg, failed, p.pid)
        code = p.exitcode
        if code < 0:
            import signal

            name = signal.Signals(-code).name
            raise ProcessExitedException(
                f"process {failed} terminated with signal {name}", failed, p.pid, code, name
            )
        raise ProcessExitedException(
            f"process {failed} terminated with exit code {code}", failed, p.pid, code
        )


def start_processes(
    fn,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """Run ``fn(i, *args)`` for i in range(nprocs), each in its own process."""
    ctx = multiprocessing.get_context(start_method)
    queues, processes = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        queues.append(q)
        processes.append(p)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(
    fn,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
):
    """``start_processes`` with the 'spawn' start method (torch.multiprocessing.spawn)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)


sys.modules[__name__.rpartition(".")[0] + ".multiprocessing"] = sys.modules[__name__]
