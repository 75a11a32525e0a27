"""DataLoader worker processes: the worker loop, ``get_worker_info`` and per-worker seeding.

A worker receives ``(idx, indices)`` tasks on its own index queue, fetches and collates the samples,
and puts ``(idx, batch)`` on the loader's shared result queue. Errors travel back as an
``ExceptionWrapper`` (the original exception type, the traceback text and the worker id), which the
loader re-raises in the main process.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import random
import sys
import traceback

__all__ = ["WorkerInfo", "get_worker_info"]

# How often (seconds) a waiting worker checks that its parent is still alive.
MP_STATUS_CHECK_INTERVAL = 5.0

_worker_info = None


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What a worker knows about itself: ``id``, ``num_workers``, ``seed`` and ``dataset`` (its
    copy of the dataset), plus torch's ``rng`` (None) and ``worker_method``. Read-only, like
    torch's: assigning a field raises ``dataclasses.FrozenInstanceError``."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str | None = "multiprocessing"


def get_worker_info() -> WorkerInfo | None:
    """Information about the current DataLoader worker; ``None`` in the main process.

    In a worker it returns a ``WorkerInfo`` with ``id`` (0 .. num_workers - 1), ``num_workers``,
    ``seed`` (the seed of this worker's RNGs) and ``dataset`` (this worker's copy of the dataset),
    which an ``IterableDataset`` uses to split its stream between workers.
    """
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback text, re-raisable in the parent."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError repr()s its message: wrap it so the traceback text stays readable
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001
            # an exception type whose constructor takes other arguments
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back as an ack."""


# ------------------------------------------------------------------------------------ fetchers
class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems is not None:
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[i] for i in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if is_iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# ------------------------------------------------------------------------------------ seeding
def _numpy_seed(base_seed: int, worker_id: int):
    """A 128-bit numpy legacy seed mixed from (base_seed, worker_id): nearby seeds stay apart."""
    import numpy as np

    return np.random.SeedSequence([worker_id, base_seed & ((1 << 64) - 1)]).generate_state(4)


def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed Python's, ember's and numpy's global RNGs for worker ``worker_id``; return its seed."""
    import numpy as np

    from ..core.random import manual_seed

    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_numpy_seed(base_seed, worker_id))
    return seed


# ------------------------------------------------------------------------------------ the loop
def _worker_loop(
    is_iterable,
    dataset,
    index_queue,
    data_queue,
    done_event,
    auto_collation,
    collate_fn,
    drop_last,
    base_seed,
    init_fn,
    worker_id,
    num_workers,
    persistent_workers,
):
    """Body of a worker process (a target for multiprocessing.Process)."""
    global _worker_info
    import signal

    # Ctrl-C goes to the whole process group: the parent handles it and shuts workers down
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_pid = os.getppid()
    try:
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001 - any error is reported to the parent
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    break  # orphaned: the loader's process is gone
                continue
            if r is None:
                break  # shutdown requested
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if init_exception is None:
                    # a fresh iterator over the dataset for the new epoch
                    fetcher = create_fetcher(
                        is_iterable, dataset, auto_collation, collate_fn, drop_last
                    )
                continue
            if done_event.is_set() or iteration_end:
                continue  # wait for the shutdown (or resume) message
            idx, index = r
            if init_exception is not None:
                data = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:  # noqa: BLE001 - any error is reported to the parent
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # the parent is shutting down and may not read the rest: do not block on flushing it
        data_queue.cancel_join_thread()
        data_queue.close()
