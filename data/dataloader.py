"""DataLoader: batches from a dataset, in the main process or in worker processes.

With ``num_workers > 0`` each worker is a real process (fork where the platform has it) with its
own index queue; all workers share one result queue. The main process keeps up to
``prefetch_factor * num_workers`` batches in flight, hands out batches in sampler order (or as
they arrive with ``in_order=False``), re-raises worker exceptions, notices dead workers while it
waits, and shuts workers down when the epoch ends or the iterator is dropped.
"""

from __future__ import annotations

import functools
import itertools
import math
import multiprocessing
import queue
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Generic

from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset, _T_co
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import (
    MP_STATUS_CHECK_INTERVAL,
    ExceptionWrapper,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
    create_fetcher,
)

__all__ = ["DataLoader"]

# How often (seconds) the main process checks that its workers are alive while it waits for data:
# short, so a killed worker is reported at once rather than after a long silent wait.
_LIVENESS_INTERVAL = 0.1


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: the data decides when the epoch ends."""

    def __iter__(self):
        while True:
            yield None


def _default_context():
    # fork is fast and needs nothing picklable; macOS's fork is unsafe, so keep Python's default
    if sys.platform != "darwin" and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class DataLoader(Generic[_T_co]):
    """Combines a dataset and a sampler, and iterates over batches of the dataset.

    Args follow ``torch.utils.data.DataLoader``. ``batch_dim_name`` (ember only) names the batch
    dim that the default collate function creates; the samples' own dim names stay behind it.
    """

    _DataLoader__initialized = False

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
        batch_dim_name: str | None = None,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory  # pinned host memory only matters for cuda copies: a no-op
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self.batch_dim_name = batch_dim_name

        if isinstance(dataset, IterableDataset):
            self._is_iterable = True
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._is_iterable = False

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        auto = batch_sampler is not None
        if batch_dim_name is not None and (collate_fn is not None or not auto):
            raise ValueError(
                "batch_dim_name names the batch dim made by the default collate_fn; it needs "
                "automatic batching and no custom collate_fn"
            )
        if collate_fn is None:
            if not auto:
                collate_fn = default_convert
            elif batch_dim_name is not None:
                collate_fn = functools.partial(default_collate, batch_dim_name=batch_dim_name)
            else:
                collate_fn = default_collate
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._IterableDataset_len_called = None
        self._iterator = None
        self.__initialized = True
        self.check_worker_number_rationality(stacklevel=3)

    # ----------------------------------------------------------------------------- properties
    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid = multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start "
                            f"method in {valid!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}"
                        )
                    multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
                if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}"
                    )
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # what the iterator draws from: batches of indices with auto-collation, else indices
        return self.batch_sampler if self._auto_collation else self.sampler

    # ------------------------------------------------------------------------------ iteration
    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def check_worker_number_rationality(self, stacklevel: int = 4) -> None:
        """torch's warning when there are more workers than CPUs this process may use."""
        import os

        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:
            cpus = os.cpu_count()
        if cpus is not None and self.num_workers > cpus:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"Our suggested max number of worker in current system is {cpus}, which is "
                "smaller than what this DataLoader is going to create. Please be aware that "
                "excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=stacklevel,
            )

    def __iter__(self):
        # persistent workers: one worker iterator for the loader's lifetime, reset each epoch
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._is_iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


def _accelerator_available() -> bool:
    from ..accelerator import is_available

    return is_available()


def _base_seed(generator) -> int:
    # one int64 draw from the loader's generator (or the global one), as torch draws it
    from .. import empty, int64

    return int(empty((), dtype=int64).random_(generator=generator).item())


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=2,
            )
        if loader.pin_memory and not _accelerator_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                stacklevel=2,
            )
        self._pin_memory = loader.pin_memory
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _base_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{self.__class__.__name__}.__next__"

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            self._reset(None)
        data = self._next_data()
        self._num_yielded += 1
        if (
            self._is_iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset "
                    "for examples."
                )
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = create_fetcher(
            self._is_iterable,
            self._dataset,
            self._auto_collation,
            self._collate_fn,
            self._drop_last,
        )

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._fetcher.fetch(index)  # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Worker processes fed round-robin through per-worker index queues."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = _default_context()
        self._shutdown = False
        self._workers = []
        self._index_queues = []
        self._data_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._workers_status = [True] * self._num_workers
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                # never block interpreter exit on indices that no worker will read
                index_queue.cancel_join_thread()
                w = ctx.Process(
                    target=_worker_loop,
                    args=(
                        self._is_iterable,
                        self._dataset,
                        index_queue,
                        self._data_queue,
                        self._workers_done_event,
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        self._base_seed,
                        loader.worker_init_fn,
                        i,
                        self._num_workers,
                        self._persistent_workers,
                    ),
                    daemon=True,
                )
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # index of the next task to send
        self._rcvd_idx = 0  # index of the next task to hand out (in order)
        # task idx -> (worker_id,) while in flight, (worker_id, data) once arrived out of order
        self._task_info = {}
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # a new epoch on persistent workers: each worker acks once it has dropped the old
            # epoch; whatever the old epoch left in the result queue arrives before the ack
            for q in self._index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # --------------------------------------------------------------------------- receiving
    def _check_workers(self) -> None:
        """Raise if a worker that should be running has died."""
        for worker_id, w in enumerate(self._workers):
            if not self._workers_status[worker_id] or w.exitcode is None:
                continue
            code = w.exitcode
            self._mark_worker_as_unavailable(worker_id)
            self._shutdown_workers()
            if code < 0:
                try:
                    name = signal.strsignal(-code) or f"signal {-code}"
                except ValueError:
                    name = f"signal {-code}"
                raise RuntimeError(f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. ")
            if code > 0:
                raise RuntimeError(
                    f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}. "
                    "Details are lost due to multiprocessing. Rerunning with num_workers=0 may "
                    "give better error trace."
                )
            raise RuntimeError(f"DataLoader worker (pid(s) {w.pid}) exited unexpectedly")

    def _get_data(self):
        """The next (idx, data) from any worker; raises on a dead worker or on ``timeout``."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _LIVENESS_INTERVAL
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
            try:
                return self._data_queue.get(timeout=max(wait, 0.0))
            except queue.Empty:
                pass
            self._check_workers()
            if deadline is not None and time.monotonic() >= deadline:
                # like torch, the workers stay up: the caller may retry or drop the iterator
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # skip tasks of workers that ended (IterableDataset) or were handed out of order
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(info[1], info[0])

            if self._shutdown:
                raise RuntimeError("DataLoader iterator was used after its workers shut down")
            idx, data = self._get_data()
            if isinstance(idx, _ResumeIteration):
                continue
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._task_info.pop(idx, None)
                self._try_put_index()
                continue
            worker_id = self._task_info[idx][0]
            if idx != self._rcvd_idx and self._in_order:
                self._task_info[idx] = (worker_id, data)  # early: keep until its turn
                continue
            del self._task_info[idx]
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            return self._process_data(data, worker_id)

    def _process_data(self, data, worker_id: int):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        return data

    # ----------------------------------------------------------------------------- sending
    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        active = sum(self._workers_status)
        if not active:
            return
        for _ in range(self._num_workers):
            w = next(self._worker_queue_idx_cycle)
            if self._workers_status[w] and (
                self._in_order or self._workers_num_tasks[w] < max(max_tasks // active, 1)
            ):
                break
        else:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        self._index_queues[w].put((self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._workers_num_tasks[w] += 1
        self._send_idx += 1

    # ---------------------------------------------------------------------------- shutdown
    def _mark_worker_as_unavailable(self, worker_id: int, shutdown: bool = False) -> None:
        q = self._index_queues[worker_id]
        try:
            q.put(None)  # the worker exits when it reads this
        except (ValueError, OSError):
            pass  # queue already closed
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            deadline = time.monotonic() + MP_STATUS_CHECK_INTERVAL
            for w in self._workers:
                w.join(timeout=max(deadline - time.monotonic(), 0.0))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=1.0)
            self._data_queue.cancel_join_thread()
            self._data_queue.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001, S110
            pass  # interpreter shutdown: modules may already be gone
