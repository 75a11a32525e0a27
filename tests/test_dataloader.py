"""DataLoader: batches and order against torch's (same index lists), worker processes,
reproducibility, worker faults (exceptions, kills, timeouts), clean shutdown, persistent workers,
IterableDataset sharding, len, and torch's argument errors.

Every test that starts workers keeps datasets tiny so it ends in well under a few seconds, and
checks that no child process outlives it.
"""

import multiprocessing as mp
import os
import signal
import time

import ember
import numpy as np
import pytest
from ember.data import DataLoader, IterableDataset, TensorDataset, get_worker_info
from harness import needs_torch

try:
    import torch
    import torch.utils.data as tud
except ImportError:  # pragma: no cover
    torch = None
    tud = None


@pytest.fixture(autouse=True)
def _no_leaked_workers():
    before = set(mp.active_children())
    yield
    # every loader of the test is gone: its workers must be too
    deadline = time.monotonic() + 2.0
    while set(mp.active_children()) - before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert set(mp.active_children()) - before == set()


# ------------------------------------------------------------------------------ datasets
class Squares:
    """Map-style: sample i is (float32 vector filled with i, i*i, {"id": i})."""

    def __init__(self, n=23):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.full(3, i, dtype=np.float32), i * i, {"id": i}


class Failing(Squares):
    def __init__(self, bad, exc=ValueError):
        super().__init__()
        self.bad, self.exc = bad, exc

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc(f"bad sample {i}")
        return super().__getitem__(i)


class Killing(Squares):
    def __getitem__(self, i):
        if i == 6:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__getitem__(i)


class Slow(Squares):
    def __getitem__(self, i):
        time.sleep(1.0)
        return super().__getitem__(i)


class Pid(Squares):
    def __getitem__(self, i):
        return i, os.getpid()


class Noisy(Squares):
    """Samples drawn from the worker's global RNGs (numpy's and the framework's)."""

    def __init__(self, m):
        super().__init__(12)
        self.m = m

    def __getitem__(self, i):
        return np.random.rand(2), float(self.m.rand(1).item())


def _make_range_iterable(info_fn, base):
    class RangeIterable(base):
        """Yields start..end-1, split between workers through get_worker_info (torch's recipe)."""

        def __init__(self, start, end):
            self.start, self.end = start, end

        def __iter__(self):
            info = info_fn()
            if info is None:
                lo, hi = self.start, self.end
            else:
                per = -(-(self.end - self.start) // info.num_workers)
                lo = self.start + info.id * per
                hi = min(lo + per, self.end)
            return iter(range(lo, hi))

        def __len__(self):
            return self.end - self.start

    return RangeIterable


ERange = _make_range_iterable(get_worker_info, IterableDataset)


def _flat(batch):
    """A collated batch as plain nested lists (tensors -> lists) to compare frameworks."""
    if isinstance(batch, (list, tuple)):
        return [_flat(b) for b in batch]
    if isinstance(batch, dict):
        return {k: _flat(v) for k, v in batch.items()}
    if hasattr(batch, "tolist"):
        return [str(batch.dtype).split(".")[-1], batch.tolist()]
    return batch


# ------------------------------------------------------------------- parity with torch
SAMPLER = [5, 3, 1, 22, 0, 7, 9, 11, 2, 14, 8]


@needs_torch
@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize(
    "kw",
    [
        {"batch_size": 4, "sampler": SAMPLER},
        {"batch_size": 4, "sampler": SAMPLER, "drop_last": True},
        {"batch_size": None, "sampler": SAMPLER},
        {"batch_sampler": [[3, 1], [0], [22, 5, 7]]},
        {"batch_size": 5},
    ],
    ids=["batch4", "drop_last", "no_batching", "batch_sampler", "sequential"],
)
def test_batches_match_torch(num_workers, kw):
    got = [_flat(b) for b in DataLoader(Squares(), num_workers=num_workers, **kw)]
    want = [_flat(b) for b in tud.DataLoader(Squares(), num_workers=num_workers, **kw)]
    assert got == want
    assert len(DataLoader(Squares(), **kw)) == len(tud.DataLoader(Squares(), **kw))


@needs_torch
@pytest.mark.parametrize("num_workers", [0, 2])
def test_iterable_sharding_matches_torch(num_workers):
    TRange = _make_range_iterable(tud.get_worker_info, tud.IterableDataset)
    got = [b.tolist() for b in DataLoader(ERange(3, 20), batch_size=4, num_workers=num_workers)]
    want = [
        b.tolist() for b in tud.DataLoader(TRange(3, 20), batch_size=4, num_workers=num_workers)
    ]
    assert got == want
    assert sorted(x for b in got for x in b) == list(range(3, 20))  # each sample exactly once


def test_in_order_false_yields_every_batch():
    dl = DataLoader(Squares(), batch_size=3, num_workers=2, in_order=False)
    ids = sorted(x for b in dl for x in b[2]["id"].tolist())
    assert ids == list(range(23))


def test_spawn_context():
    ds = TensorDataset(ember.arange(10.0), ember.arange(10))
    dl = DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context="spawn")
    xs = [b[1].tolist() for b in dl]
    assert xs == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


# ----------------------------------------------------------------------- reproducibility
def _shuffled(num_workers, seed):
    g = ember.Generator().manual_seed(seed)
    dl = DataLoader(Squares(), batch_size=5, shuffle=True, generator=g, num_workers=num_workers)
    return [b[1].tolist() for b in dl]


def test_same_seed_same_batches_any_num_workers():
    a = _shuffled(0, 7)
    assert a == _shuffled(2, 7) == _shuffled(1, 7)
    assert sorted(x for b in a for x in b) == sorted(i * i for i in range(23))
    assert a != _shuffled(0, 8)


def test_global_seed_same_batches_any_num_workers():
    def run(num_workers):
        ember.manual_seed(5)
        dl = DataLoader(Squares(), batch_size=4, shuffle=True, num_workers=num_workers)
        return [b[1].tolist() for b in dl]

    assert run(0) == run(2)


def test_worker_rngs_are_seeded_per_worker():
    def run(seed):
        g = ember.Generator().manual_seed(seed)
        dl = DataLoader(Noisy(ember), batch_size=3, num_workers=2, generator=g)
        return [(b[0].numpy().round(12).tolist(), b[1].tolist()) for b in dl]

    a, b = run(3), run(3)
    assert a == b  # same generator seed: same worker seeds, same random samples
    assert a != run(4)
    # batch 0 comes from worker 0, batch 1 from worker 1: their RNG streams differ
    assert a[0] != a[1]


def _record_info(worker_id):
    info = get_worker_info()
    np.save(os.path.join(os.environ["EMBER_DL_TMP"], f"w{worker_id}.npy"), [info.id, info.seed])


def test_get_worker_info(tmp_path, monkeypatch):
    assert get_worker_info() is None  # main process
    monkeypatch.setenv("EMBER_DL_TMP", str(tmp_path))
    g = ember.Generator().manual_seed(11)
    base = int(ember.empty((), dtype=ember.int64).random_(generator=g).item())
    g.manual_seed(11)
    dl = DataLoader(Squares(4), num_workers=2, worker_init_fn=_record_info, generator=g)
    assert len(list(dl)) == 4
    for wid in (0, 1):
        assert np.load(tmp_path / f"w{wid}.npy").tolist() == [wid, base + wid]


def test_worker_info_is_read_only():
    from ember.data.worker import WorkerInfo

    info = WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)
    # torch 2.13's WorkerInfo is a frozen dataclass (FrozenInstanceError is an AttributeError)
    with pytest.raises(AttributeError, match="cannot assign to field 'id'"):
        info.id = 2


# --------------------------------------------------------------------------------- faults
@pytest.mark.parametrize("exc", [ValueError, KeyError, IndexError])
def test_worker_exception_is_reraised(exc):
    dl = DataLoader(Failing(5, exc), batch_size=2, num_workers=2)
    with pytest.raises(exc) as info:
        list(dl)
    msg = str(info.value)
    # batch [4, 5] is the third batch: worker 0 (round robin over 2 workers)
    assert "Caught " + exc.__name__ + " in DataLoader worker process 0" in msg
    assert "Traceback (most recent call last)" in msg and "bad sample 5" in msg
    assert "__getitem__" in msg


def test_worker_init_fn_error_is_reraised():
    def init(worker_id):
        raise ZeroDivisionError("init failed")

    with pytest.raises(ZeroDivisionError, match="in DataLoader worker process 0"):
        list(DataLoader(Squares(4), num_workers=1, worker_init_fn=init))


def test_killed_worker_raises_instead_of_hanging():
    dl = DataLoader(Killing(), batch_size=2, num_workers=2)
    t = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed by signal: "):
        list(dl)
    assert time.monotonic() - t < 5


def test_timeout():
    it = iter(DataLoader(Slow(2), num_workers=1, timeout=0.2))
    t = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.2 seconds"):
        next(it)
    assert time.monotonic() - t < 0.9  # raised before the sample was ready
    del it


# --------------------------------------------------------------------------- lifecycle
def _new_children(before):
    return set(mp.active_children()) - before


def test_early_break_shuts_workers_down():
    before = set(mp.active_children())
    dl = DataLoader(Squares(), batch_size=2, num_workers=2)
    for i, _ in enumerate(dl):
        if i == 1:
            break
    # the iterator is gone: its workers were told to stop and joined
    assert _new_children(before) == set()

    it = iter(dl)
    next(it)
    assert len(_new_children(before)) == 2
    del it
    assert _new_children(before) == set()


def test_epoch_end_shuts_workers_down():
    before = set(mp.active_children())
    it = iter(DataLoader(Squares(4), batch_size=2, num_workers=2))
    assert len(list(it)) == 2
    assert _new_children(before) == set()


def test_persistent_workers_across_epochs():
    before = set(mp.active_children())
    dl = DataLoader(Pid(10), batch_size=3, num_workers=2, persistent_workers=True)
    first = [b for b in dl]
    pids = {p for b in first for p in b[1].tolist()}
    assert len(pids) == 2 and len(_new_children(before)) == 2  # still alive between epochs
    # an epoch broken early leaves batches in flight: the next epoch must not see them
    for _ in dl:
        break
    second = [b for b in dl]
    assert [b[0].tolist() for b in second] == [b[0].tolist() for b in first]
    assert {p for b in second for p in b[1].tolist()} == pids  # the same processes
    del dl  # the loader owns the workers


def test_persistent_workers_iterable_dataset():
    dl = DataLoader(ERange(0, 9), batch_size=2, num_workers=2, persistent_workers=True)
    for _ in range(2):
        assert sorted(x for b in dl for x in b.tolist()) == list(range(9))
    del dl


# -------------------------------------------------------------------------------- len etc
@needs_torch
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"batch_size": 4},
        {"batch_size": 4, "drop_last": True},
        {"batch_size": None},
        {"batch_sampler": [[1, 2], [3]]},
        {"batch_size": 3, "shuffle": True},
    ],
)
def test_len_matches_torch(kw):
    assert len(DataLoader(Squares(), **kw)) == len(tud.DataLoader(Squares(), **kw))


@needs_torch
@pytest.mark.parametrize("kw", [{"batch_size": 4}, {"batch_size": 4, "drop_last": True}])
def test_len_iterable_matches_torch(kw):
    TRange = _make_range_iterable(tud.get_worker_info, tud.IterableDataset)
    assert len(DataLoader(ERange(0, 10), **kw)) == len(tud.DataLoader(TRange(0, 10), **kw))


def test_pin_memory_is_accepted():
    dl = DataLoader(Squares(4), batch_size=2, pin_memory=True)
    assert [b[1].tolist() for b in dl] == [[0, 1], [4, 9]]


def test_batch_dim_name():
    x = ember.zeros(5, 3, names=("C", "W"))
    dl = DataLoader(TensorDataset(x), batch_size=2, batch_dim_name="N")
    (batch,) = next(iter(dl))
    assert batch.names == ("N", "W")  # a sample x[i] keeps its own name "W"
    with pytest.raises(ValueError, match="batch_dim_name"):
        DataLoader(Squares(), collate_fn=list, batch_dim_name="N")


# ------------------------------------------------------------------------ argument errors
class _It(IterableDataset):
    def __iter__(self):
        return iter(range(3))


ARG_ERRORS = [
    ({"num_workers": -1}, ValueError, "num_workers option should be non-negative"),
    ({"timeout": -1}, ValueError, "timeout option should be non-negative"),
    ({"prefetch_factor": 2}, ValueError, "prefetch_factor option could only be specified"),
    ({"num_workers": 1, "prefetch_factor": -1}, ValueError, "prefetch_factor option should be"),
    ({"persistent_workers": True}, ValueError, "persistent_workers option needs num_workers"),
    ({"sampler": [1], "shuffle": True}, ValueError, "sampler option is mutually exclusive"),
    ({"batch_sampler": [[1]], "batch_size": 2}, ValueError, "batch_sampler option is mutually"),
    ({"batch_size": None, "drop_last": True}, ValueError, "batch_size=None option disables"),
    ({"multiprocessing_context": "fork"}, ValueError, "multiprocessing_context can only"),
    ({"num_workers": 1, "multiprocessing_context": "bogus"}, ValueError, "valid start method"),
    ({"num_workers": 1, "multiprocessing_context": 3}, TypeError, "valid context object"),
]


@pytest.mark.parametrize("kw,exc,msg", ARG_ERRORS)
def test_argument_errors(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        DataLoader(list(range(10)), **kw)
    if tud is not None:  # the same error in torch
        with pytest.raises(exc, match=msg):
            tud.DataLoader(list(range(10)), **kw)


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"shuffle": True}, "expected unspecified shuffle option, but got shuffle=True"),
        ({"sampler": [1]}, r"expected unspecified sampler option, but got sampler=\[1\]"),
        ({"batch_sampler": [[1]]}, "expected unspecified batch_sampler option"),
    ],
)
def test_iterable_dataset_argument_errors(kw, msg):
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: " + msg):
        DataLoader(_It(), **kw)


def test_attributes_frozen_after_init():
    dl = DataLoader(list(range(4)))
    with pytest.raises(
        ValueError, match="batch_size attribute should not be set after DataLoader is initialized"
    ):
        dl.batch_size = 3
    dl.num_workers = 0  # others stay settable, as in torch
