"""ember.data (= ember.utils.data): datasets, samplers and collate against torch.utils.data."""

import collections
import math

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tud = torch.utils.data
from ember import data as ed

P = collections.namedtuple("P", "x y")


def _eq(e, t):
    """Compare ember output ``e`` with torch output ``t`` recursively (types, values, dtypes)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), type(e)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t)
        for k in t:
            _eq(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t):
            _eq(a, b)
    else:
        assert type(e) is type(t) and e == t


# ------------------------------------------------------------------ import paths
def test_import_paths():
    import ember.utils.data as m
    from ember.utils.data import TensorDataset

    assert m is ed and ember.utils.data is ember.data and TensorDataset is ed.TensorDataset


# ------------------------------------------------------------------ datasets
def test_tensor_dataset():
    x, y = np.arange(12.0).reshape(4, 3), np.arange(4)
    e = ed.TensorDataset(ember.tensor(x), ember.tensor(y))
    t = tud.TensorDataset(torch.tensor(x), torch.tensor(y))
    assert len(e) == len(t) == 4
    for i in (0, 3, -1):
        _eq(e[i], t[i])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        ed.TensorDataset(ember.ones(2), ember.ones(3))


def test_stack_dataset():
    e = ed.StackDataset(range(3), "abc")
    assert len(e) == 3 and e[1] == tud.StackDataset(range(3), "abc")[1]
    e = ed.StackDataset(a=range(3), b="abc")
    assert e[2] == tud.StackDataset(a=range(3), b="abc")[2]
    assert e.__getitems__([0, 2]) == [{"a": 0, "b": "a"}, {"a": 2, "b": "c"}]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        ed.StackDataset(range(2), range(3))
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        ed.StackDataset()
    with pytest.raises(ValueError, match="but both types are given"):
        ed.StackDataset(range(2), b=range(2))


def test_concat_subset_chain():
    parts = [list(range(3)), list(range(10, 14))]
    e, t = ed.ConcatDataset(parts), tud.ConcatDataset(parts)
    assert len(e) == len(t) and [e[i] for i in range(-7, 7)] == [t[i] for i in range(-7, 7)]
    assert e.cumulative_sizes == t.cumulative_sizes
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        e[-8]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ed.ConcatDataset([])

    class It(ed.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ed.ConcatDataset([It(2)])
    ch = It(2) + It(3)
    assert isinstance(ch, ed.ChainDataset) and list(ch) == [0, 1, 0, 1, 2] and len(ch) == 5
    sub = ed.Subset(list(range(10, 20)), [5, 1, 7])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [15, 11, 17]
    assert sub.__getitems__([0, 2]) == [15, 17]
    assert isinstance(ed.Subset(parts[0], [0]) + ed.Subset(parts[1], [1]), ed.ConcatDataset)
    with pytest.raises(NotImplementedError):
        ed.Dataset()[0]


@pytest.mark.parametrize(
    "n,lengths", [(10, [3, 7]), (10, [0.3, 0.3, 0.4]), (11, [0.3, 0.3, 0.4]), (5, [1.0])]
)
def test_random_split(n, lengths):
    e = ed.random_split(range(n), lengths, generator=ember.Generator().manual_seed(3))
    t = tud.random_split(range(n), lengths, generator=torch.Generator().manual_seed(3))
    assert [len(s) for s in e] == [len(s) for s in t]
    allidx = sorted(i for s in e for i in s.indices)
    assert allidx == list(range(n))
    again = ed.random_split(range(n), lengths, generator=ember.Generator().manual_seed(3))
    assert [s.indices for s in again] == [s.indices for s in e]


def test_random_split_errors():
    for lengths in ([3, 3], [0.5, 0.6]):
        with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
            ed.random_split(range(5), lengths)
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        ed.random_split(range(5), [1.2, -0.2])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        ed.random_split(range(1), [0.5, 0.5])


# ------------------------------------------------------------------ samplers
def test_sequential_and_batch_sampler():
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False)]:
        e = ed.BatchSampler(ed.SequentialSampler(range(n)), bs, drop)
        t = tud.BatchSampler(tud.SequentialSampler(range(n)), bs, drop)
        assert list(e) == list(t) and len(e) == len(t)
    # a fixed (seeded) index list fed to both: same batches, same order
    idx = np.random.default_rng(0).permutation(23).tolist()
    assert list(ed.BatchSampler(idx, 4, False)) == list(tud.BatchSampler(idx, 4, False))
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        ed.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        ed.BatchSampler(range(3), 2, 1)


def test_random_sampler():
    def run(**kw):
        return list(ed.RandomSampler(range(7), generator=ember.Generator().manual_seed(5), **kw))

    a = run()
    assert sorted(a) == list(range(7)) and a == run()
    b = run(num_samples=17)
    assert len(b) == 17 and b == run(num_samples=17)
    assert sorted(b[:14]) == sorted(list(range(7)) * 2)  # whole permutations first
    c = run(replacement=True, num_samples=40)
    assert (
        len(c) == 40 and all(0 <= i < 7 for i in c) and c == run(replacement=True, num_samples=40)
    )
    assert len(ed.RandomSampler(range(7))) == len(tud.RandomSampler(range(7))) == 7
    ember.manual_seed(0)
    d = list(ed.RandomSampler(range(7)))
    ember.manual_seed(0)
    assert d == list(ed.RandomSampler(range(7)))
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        ed.RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        ed.RandomSampler(range(3), num_samples=0)


def test_subset_random_and_weighted_sampler():
    idx = [4, 9, 2, 7]
    s = list(ed.SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(1)))
    assert sorted(s) == sorted(idx)
    assert s == list(ed.SubsetRandomSampler(idx, generator=ember.Generator().manual_seed(1)))
    w = [0.0, 1.0, 0.0, 3.0]
    ws = list(ed.WeightedRandomSampler(w, 50, generator=ember.Generator().manual_seed(2)))
    assert len(ws) == 50 and set(ws) <= {1, 3}
    nr = list(ed.WeightedRandomSampler([1, 1, 1], 3, replacement=False))
    assert sorted(nr) == [0, 1, 2]
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        ed.WeightedRandomSampler([1, 2], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        ed.WeightedRandomSampler([1, 2], 2, replacement=1)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence .* shape \(1, 2\)"):
        ed.WeightedRandomSampler([[1, 2]], 2)


@pytest.mark.parametrize("n", [10, 11, 3, 1])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler(n, replicas, drop_last):
    kw = {"num_replicas": replicas, "shuffle": False, "drop_last": drop_last}
    e = [list(ed.DistributedSampler(range(n), rank=r, **kw)) for r in range(replicas)]
    t = [list(tud.DistributedSampler(range(n), rank=r, **kw)) for r in range(replicas)]
    assert e == t  # unshuffled: identical padding / dropping semantics
    assert [len(ed.DistributedSampler(range(n), rank=0, **kw))] * replicas == [len(x) for x in t]
    # shuffled: same structure, and every index exactly once (or dropped/padded like torch)
    sh = [
        ed.DistributedSampler(range(n), rank=r, num_replicas=replicas, seed=7, drop_last=drop_last)
        for r in range(replicas)
    ]
    parts = [list(s) for s in sh]
    flat = [i for p in parts for i in p]
    if not drop_last:
        assert set(flat) == set(range(n))
        assert len(flat) == math.ceil(n / replicas) * replicas
        if n % replicas == 0:
            assert sorted(flat) == list(range(n))
    else:
        assert len(flat) == len(set(flat)) == (n // replicas) * replicas
    for s in sh:
        s.set_epoch(1)
    parts1 = [list(s) for s in sh]
    assert [list(s) for s in sh] == parts1  # deterministic given seed + epoch
    if n >= 10 and replicas == 1:
        assert parts1 != parts


def test_distributed_sampler_errors():
    with pytest.raises(
        ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"
    ):
        ed.DistributedSampler(range(3), 2, 2)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        ed.DistributedSampler(range(3), 2, -1)


def test_distributed_sampler_asks_the_process_group():
    # like torch: without num_replicas/rank the default group supplies them, or its error says
    # that no group was initialized
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        ed.DistributedSampler(range(4))
    ember.distributed.init_process_group("gloo", world_size=1, rank=0)
    try:
        assert list(ed.DistributedSampler(range(4), shuffle=False)) == [0, 1, 2, 3]
    finally:
        ember.distributed.destroy_process_group()


# ------------------------------------------------------------------ collate
def _samples(mod, i):
    """Build one sample of each supported structure using module ``mod`` (ember or torch)."""
    t = mod.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) + i)
    return [
        t,
        np.arange(3, dtype=np.int32) + i,
        np.float32(i) + 0.5,
        np.int64(i),
        np.array(2.5 + i),
        1.5 * i,
        i,
        bool(i % 2),
        f"s{i}",
        b"b",
        {"a": t, "b": [i, (f"x{i}", 2.0 * i)], "c": {"d": np.ones(2) * i}},
        (t, i),
        [i, 2 * i],
        P(x=i, y=t),
        collections.OrderedDict(k=i, j=np.int16(i)),
    ]


def test_default_collate_structures():
    es = [_samples(ember, i) for i in range(3)]
    ts = [_samples(torch, i) for i in range(3)]
    for k in range(len(es[0])):
        _eq(ed.default_collate([s[k] for s in es]), tud.default_collate([s[k] for s in ts]))
    _eq(ed.default_collate(es), tud.default_collate(ts))


def test_default_collate_errors():
    msg = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists"
    with pytest.raises(TypeError, match=msg + "; found <class 'object'>"):
        ed.default_collate([object()])
    with pytest.raises(TypeError, match=msg + "; found <U1"):
        ed.default_collate([np.array(["a"])])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        ed.default_collate([[1, 2], [1]])


def test_default_convert():
    for e_in, t_in in [
        (np.arange(3), np.arange(3)),
        (np.float64(2.0), np.float64(2.0)),
        ((np.ones(2), "a", 3), (np.ones(2), "a", 3)),
        ({"a": [np.zeros(2)], "b": P(1, np.ones(1))}, {"a": [np.zeros(2)], "b": P(1, np.ones(1))}),
        ("str", "str"),
    ]:
        _eq(ed.default_convert(e_in), tud.default_convert(t_in))
    a = np.array(["a"])
    assert ed.default_convert(a) is a
    x = ember.ones(2)
    assert ed.default_convert(x) is x


def test_collate_batch_dim_name():
    a = ember.ones(2, 3)
    a.names = ("H", "W")
    out = ed.default_collate([{"img": a, "y": 1, "z": ember.zeros(2)}] * 2, batch_dim_name="N")
    assert out["img"].names == ("N", "H", "W") and tuple(out["img"].shape) == (2, 2, 3)
    assert out["y"].names == ("N",)
    assert out["z"].names == ("N", None)
    assert ed.default_collate([a, a]).names == (None, "H", "W")
    assert not ed.default_collate([ember.ones(2)] * 2).has_names()


def test_collate_fn_map():
    def fn(batch, *, collate_fn_map=None):
        return "custom"

    assert ed.collate([1, 2], collate_fn_map={int: fn}) == "custom"
    assert ed.collate([True], collate_fn_map={int: fn}) == "custom"  # isinstance fallback


def test_distributed_submodule_path():
    # `from torch.utils.data.distributed import DistributedSampler`, under ember's names
    import ember.utils.data as eud
    from ember.utils.data.distributed import DistributedSampler
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    assert DistributedSampler is ed.DistributedSampler is eud.distributed.DistributedSampler
    got = list(DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False))
    assert got == list(TorchSampler(range(10), num_replicas=3, rank=1, shuffle=False))
