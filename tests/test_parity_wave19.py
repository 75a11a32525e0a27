"""Parity regressions found by the nineteenth wave, a sweep of what a training script touches
around the model (torch.utils.data's datasets, samplers, collation and worker processes;
torch.save/torch.load of containers, views, dtypes, state_dicts and optimizer state under
weights_only; clip_grad_*, parameters_to_vector, parametrizations; utils.checkpoint; the random
state; module and tensor hooks; torch is the oracle): utils.checkpoint's torch 2.x surface
(``early_stop`` and ``set_checkpoint_early_stop`` ending the recomputation at the last tensor the
backward needs, ``determinism_check``'s validation and its shape/dtype/device comparison raising
``CheckpointError``, ``context_fn``/``debug`` refused by the reentrant variant,
``noop_context_fn``, ``set_checkpoint_debug_enabled``, the reentrant node named
``CheckpointFunctionBackward``, checkpoint_sequential's own deprecation text);
``torch.manual_seed`` taking anything ``int()`` takes while ``Generator.manual_seed`` refuses a
bool; torch.load's ``weights_only`` default following ``pickle_module`` (and the refusal of both
together), ``mmap`` refused for a file object, a missing file's plain ``open`` error, torch's
advice when a checkpoint is mapped onto a GPU the machine lacks, the weights_only allowlist
(torch's ``bytearray`` and protocol-2 ``bytes`` in, ``slice`` out); tensors that view one base
(a tensor and its slices) saved once and loaded as views sharing memory, with torch's strides and
storage offsets (both the safe and the pickle format), and ``as_strided``/``untyped_storage`` of a
tensor made by as_strided or read from a file seeing the whole buffer;
``serialization.get_unsafe_globals_in_checkpoint`` and ``DEFAULT_PROTOCOL``;
``torch.utils.data.distributed`` as an attribute; ``WorkerInfo`` as torch 2.13's frozen
dataclass; the FutureWarnings of a deprecated (non-full) module backward hook whose module
torch's old semantics misdescribe (and no full-hook UserWarning for it); and the wording of the
load_state_dict post-hook assertion."""

from __future__ import annotations

import collections
import dataclasses
import io
import pickle
import warnings

import ember
import numpy as np
import pytest
from ember.utils import checkpoint as eck

torch = pytest.importorskip("torch")
tck = torch.utils.checkpoint


def _both(fn):
    """fn(module) for ember and torch: (ember's result, torch's)."""
    return fn(ember), fn(torch)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the error itself is what is compared)
        return type(e).__name__, str(e)
    return None


# ------------------------------------------------------------------------ utils.checkpoint
def _more_saves(m, early_stop):
    """A function whose recomputation saves one tensor more than its forward did, after the one
    the backward needs: torch's early stop never reaches it."""
    calls, trail = [], []

    def f(t):
        calls.append(1)
        a = t.exp()
        trail.append("after the last save")
        return a if len(calls) == 1 else a.exp()

    x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = m.utils.checkpoint.checkpoint(f, x, use_reentrant=False, early_stop=early_stop)
    y.backward(m.tensor([1.0, 2.0, 3.0]))
    return trail, x.grad.numpy()


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_checkpoint_early_stop_ends_the_recomputation():
    (te, ge), (tt, gt) = _both(lambda m: _more_saves(m, True))
    assert te == tt == ["after the last save"]  # the recomputation stopped before the 2nd exp
    np.testing.assert_allclose(ge, gt, rtol=1e-6)


def test_checkpoint_without_early_stop_refuses_extra_saves():
    e, t = _both(lambda m: _err(lambda: _more_saves(m, False)))
    assert e[0] == t[0] == "CheckpointError"
    first = "trying to save more tensors during recomputation than during the original forward"
    assert first in e[1] and first in t[1]
    assert issubclass(eck.CheckpointError, RuntimeError)


def test_set_checkpoint_early_stop_overrides_the_argument():
    def run(m):
        with m.utils.checkpoint.set_checkpoint_early_stop(False):
            return _err(lambda: _more_saves(m, True))

    e, t = _both(run)
    assert e[0] == t[0] == "CheckpointError"
    # read when the forward runs: outside the block the argument decides again
    assert _more_saves(ember, True)[0] == ["after the last save"]


def _dtype_changes(m, **kw):
    calls = []

    def f(t):
        calls.append(1)
        return t.exp() if len(calls) == 1 else t.double().exp()

    x = m.tensor([0.5, -1.0], requires_grad=True)
    m.utils.checkpoint.checkpoint(f, x, use_reentrant=False, **kw).sum().backward()
    return x.grad.dtype


def test_checkpoint_determinism_check_compares_metadata():
    e, t = _both(lambda m: _err(lambda: _dtype_changes(m)))
    assert e[0] == t[0] == "CheckpointError"
    head = (
        "torch.utils.checkpoint: Recomputed values for the following tensors have different "
        "metadata than during the forward pass.\ntensor at position 0:\nsaved metadata: "
    )
    assert e[1].startswith(head) and t[1].startswith(head)
    assert "'dtype': ember.float64" in e[1] and "'dtype': torch.float64" in t[1]
    # "none": not compared; the graph takes what the recomputation gave
    e, t = _both(lambda m: str(_dtype_changes(m, determinism_check="none")))
    assert e.split(".")[-1] == t.split(".")[-1] == "float32"


def test_checkpoint_determinism_check_validated():
    def run(m, reentrant):
        x = m.ones(2, requires_grad=True)
        ck = m.utils.checkpoint.checkpoint
        return _err(lambda: ck(lambda t: t * 2, x, use_reentrant=reentrant, determinism_check="x"))

    e, t = _both(lambda m: run(m, False))
    assert (
        e
        == t
        == (
            "ValueError",
            "determinism_check should be one of ['default', 'none'], but got x",
        )
    )
    assert _both(lambda m: run(m, True)) == (None, None)  # the reentrant variant ignores it


@pytest.mark.parametrize(
    "kw", [{"debug": True}, {"context_fn": lambda: (_null(), _null())}], ids=["debug", "ctx"]
)
def test_reentrant_checkpoint_refuses_context_fn_and_debug(kw):
    def run(m):
        x = m.ones(2, requires_grad=True)
        return _err(
            lambda: m.utils.checkpoint.checkpoint(lambda t: t * 2, x, use_reentrant=True, **kw)
        )

    e, t = _both(run)
    assert (
        e
        == t
        == (
            "ValueError",
            "Passing `context_fn` or `debug` is only supported when use_reentrant=False.",
        )
    )


def test_checkpoint_debug_and_early_stop_arguments_accepted():
    def run(m):
        x = m.tensor([0.3, 0.7], requires_grad=True)
        ck = m.utils.checkpoint
        with ck.set_checkpoint_debug_enabled(True):
            y = ck.checkpoint(lambda t: t.sin() * t, x, use_reentrant=False, debug=True)
        z = ck.checkpoint(lambda t: t.cos(), x, use_reentrant=True, early_stop=False)
        (y.sum() + z.sum()).backward()
        return x.grad.numpy()

    e, t = _both(run)
    np.testing.assert_allclose(e, t, rtol=1e-6)


def test_noop_context_fn_and_reentrant_node_name():
    a, b = eck.noop_context_fn()
    with a, b:
        pass
    x = ember.ones(2, requires_grad=True)
    y = eck.checkpoint(lambda t: t * 2, x, use_reentrant=True)
    assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
    xt = torch.ones(2, requires_grad=True)
    assert type(tck.checkpoint(lambda t: t * 2, xt, use_reentrant=True).grad_fn).__name__ == (
        "CheckpointFunctionBackward"
    )


def test_checkpoint_sequential_deprecation_text():
    def run(m):
        nn = m.nn
        seq = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 2))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.utils.checkpoint.checkpoint_sequential(seq, 2, m.ones(1, 2, requires_grad=True))
        return [(x.category, str(x.message)) for x in w]

    e, t = _both(run)
    assert e == t and len(e) == 1
    assert e[0][1].startswith("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant")


# ------------------------------------------------------------------------------ random seed
@pytest.mark.parametrize("seed", [1.5, "7", True, 3.0])
def test_manual_seed_takes_what_int_takes(seed):
    assert ember.manual_seed(seed).initial_seed() == torch.manual_seed(seed).initial_seed()
    assert ember.random.manual_seed(seed).initial_seed() == int(seed)


@pytest.mark.parametrize("seed", [1.5, True])
def test_generator_manual_seed_refuses_float_and_bool(seed):
    e = _err(lambda: ember.Generator().manual_seed(seed))
    t = _err(lambda: torch.Generator().manual_seed(seed))
    assert e == t == ("RuntimeError", f"manual_seed expected a long, but got {type(seed).__name__}")


def test_manual_seed_unparsable_string():
    assert _err(lambda: ember.manual_seed("x"))[0] == _err(lambda: torch.manual_seed("x"))[0]


# ----------------------------------------------------------------------------- torch.load
class _Custom:
    def __init__(self):
        self.v = 3


def _saved(m, obj, **kw):
    b = io.BytesIO()
    m.save(obj, b, **kw)
    b.seek(0)
    return b


def test_pickle_module_turns_weights_only_off():
    for m in (ember, torch):
        out = m.load(_saved(m, _Custom()), pickle_module=pickle)
        assert type(out) is _Custom and out.v == 3
        # without it the default stays weights_only=True
        assert _err(lambda m=m: m.load(_saved(m, _Custom())))[0] == "UnpicklingError"


def test_pickle_module_with_weights_only_refused():
    e, t = _both(
        lambda m: _err(lambda: m.load(_saved(m, [1]), pickle_module=pickle, weights_only=True))
    )
    assert (
        e
        == t
        == (
            "RuntimeError",
            "Can not safely load weights when explicit pickle_module is specified",
        )
    )


def test_mmap_needs_a_path(tmp_path):
    e, t = _both(lambda m: _err(lambda: m.load(_saved(m, {"x": m.ones(2)}), mmap=True)))
    assert e == t == ("ValueError", "f must be a file path in order to use the mmap argument")
    p = tmp_path / "x.pt"
    ember.save({"x": ember.arange(3.0)}, p)
    np.testing.assert_array_equal(ember.load(p, mmap=True)["x"].numpy(), [0.0, 1.0, 2.0])


def test_missing_file_and_folder_errors(tmp_path):
    for path in (tmp_path / "missing.pt", tmp_path):
        e, t = _both(lambda m, path=path: _err(lambda: m.load(path)))
        assert e == t


@pytest.mark.parametrize(
    "obj",
    [b"xy", bytearray(b"ab"), {"k": b"\x00\xff"}],
    ids=["bytes", "bytearray", "nested-bytes"],
)
def test_torch_saved_bytes_load_weights_only(tmp_path, obj):
    p = tmp_path / "b.pt"
    torch.save(obj, p)  # a protocol-2 pickle: bytes are `_codecs.encode` calls
    assert ember.load(p) == torch.load(p) == obj


def test_slice_is_not_a_weights_only_global(tmp_path):
    p = tmp_path / "s.pt"
    torch.save(slice(1, 2), p)
    for m in (ember, torch):
        assert _err(lambda m=m: m.load(p))[0] == "UnpicklingError"
        assert m.load(p, weights_only=False) == slice(1, 2)
    e = _err(lambda: ember.load(_saved(ember, [slice(1, 2)])))
    assert e[0] == "UnpicklingError" and "GLOBAL slice was not an allowed global" in e[1]


# --------------------------------------------------------------------------------- workers
def test_worker_info_is_torchs_frozen_dataclass():
    from ember.data.worker import WorkerInfo as E
    from torch.utils.data._utils.worker import WorkerInfo as T

    kw = {"id": 1, "num_workers": 2, "seed": 5, "dataset": None}
    e, t = E(**kw), T(**kw)
    assert repr(e) == repr(t)
    assert [f.name for f in dataclasses.fields(e)] == [f.name for f in dataclasses.fields(t)]
    assert (e.rng, e.worker_method) == (t.rng, t.worker_method) == (None, "multiprocessing")
    for info in (e, t):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'id'"):
            info.id = 3
    assert _err(lambda: E(foo=1, **kw))[0] == _err(lambda: T(foo=1, **kw))[0] == "TypeError"


def _worker_fields(_):
    info = ember.utils.data.get_worker_info()
    return info.id, info.num_workers, info.worker_method, type(info).__name__


def test_worker_info_in_a_worker():
    dl = ember.utils.data.DataLoader(
        range(2), batch_size=None, num_workers=2, collate_fn=_worker_fields
    )
    assert list(dl) == [
        (0, 2, "multiprocessing", "WorkerInfo"),
        (1, 2, "multiprocessing", "WorkerInfo"),
    ]


# ----------------------------------------------------------------------------- module hooks
def test_load_state_dict_post_hook_returning_a_value():
    def run(m):
        lin = m.nn.Linear(2, 2)
        lin.register_load_state_dict_post_hook(lambda mod, keys: 1)
        return _err(lambda: lin.load_state_dict(lin.state_dict()))

    e, t = _both(run)
    assert e == t and e[0] == "AssertionError"
    assert "are not expected to return new values" in e[1] and "modified, it should" in e[1]


_P = collections.namedtuple("_P", "a b")


def test_odict_and_namedtuple_still_round_trip():
    obj = collections.OrderedDict(a=ember.ones(2), p=[1, 2.5, None])
    out = ember.load(_saved(ember, obj))
    assert type(out) is collections.OrderedDict and out["p"] == [1, 2.5, None]
    nt = ember.load(_saved(ember, _P(1, ember.ones(1))), weights_only=False)
    assert type(nt) is _P and nt.a == 1


# ------------------------------------------------------------------- views sharing storage
def _views_obj(m, extra=False):
    base = m.arange(12.0)
    obj = {
        "a": base,
        "v": base[2:8].view(2, 3),
        "t": base.view(3, 4).t(),
        "z": m.tensor(3.5),
        "e": m.empty(0, 3),
        "p": [base[1:3], base[1:3]],
    }
    if extra:
        obj["s"] = {1, 2}  # not a safe-format value: the pickle path
    return obj


def _layout(out):
    return {
        k: (tuple(v.shape), tuple(v.stride()), v.storage_offset(), v.is_contiguous(), v.tolist())
        for k, v in out.items()
        if k not in ("s", "p")
    }


@pytest.mark.parametrize("pickled", [False, True], ids=["safe", "pickle"])
def test_views_of_one_base_load_sharing_memory(pickled):
    wo = not pickled

    def run(m):
        out = m.load(_saved(m, _views_obj(m, pickled)), weights_only=wo)
        layout = _layout({k: v for k, v in out.items() if k != "e"})
        out["a"][3] = 100.0  # a write through the base is seen by every view of it
        p0, p1 = out["p"]
        p0[0] = -5.0
        return layout, out["v"].tolist(), out["t"][3].tolist(), out["a"][1].item(), p0 is p1

    e, t = _both(run)
    assert e == t
    assert e[1] == [[2.0, 100.0, 4.0], [5.0, 6.0, 7.0]] and e[3] == -5.0


@pytest.mark.parametrize("pickled", [False, True], ids=["safe", "pickle"])
def test_overlapping_slices_without_their_base(pickled):
    def run(m):
        base = m.arange(10.0)
        obj = {"x": base[:4], "y": base[2:6].view(2, 2)}
        if pickled:
            obj["s"] = {0}
        out = m.load(_saved(m, obj), weights_only=not pickled)
        out["x"][3] = -1.0
        return out["y"].tolist(), out["y"].storage_offset(), out["x"].storage_offset()

    e, t = _both(run)
    assert e == t == ([[2.0, -1.0], [4.0, 5.0]], 2, 0)


def test_state_dict_and_params_still_one_entry_each():
    # a parameter and the detached copy a state_dict holds are one memory: saved once
    lin = ember.nn.Linear(3, 2)
    b = _saved(ember, {"sd": lin.state_dict(), "w": lin.weight})
    out = ember.load(b)
    assert type(out["w"]) is ember.nn.Parameter and out["w"].requires_grad
    out["w"].data[0, 0] = 55.0
    assert out["sd"]["weight"][0, 0].item() == 55.0
    assert not out["sd"]["weight"].requires_grad


def test_a_slice_saved_alone_keeps_only_its_elements():
    # ember's deliberate deviation: torch writes the whole storage of a lone view
    small = len(_saved(ember, {"s": ember.arange(1000.0)[:2]}).getvalue())
    assert small < 1000


def test_as_strided_of_as_strided_and_of_loaded_tensors():
    # the storage is the whole buffer: numpy's as_strided helper object and a file's
    # memoryview base no longer hide it
    for m in (ember, torch):
        a = m.arange(12.0)
        s = a.as_strided((2,), (1,), 2)
        assert s.as_strided((3,), (1,), 0).tolist() == [0.0, 1.0, 2.0]
        assert s.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    out = ember.load(_saved(ember, {"a": ember.arange(6.0)}))
    assert out["a"].as_strided((2,), (2,), 1).tolist() == [1.0, 3.0]


# ------------------------------------------------------- torch.serialization's helpers
class _Unsafe:
    pass


@pytest.mark.parametrize(
    "make",
    [
        lambda m: {"a": m.ones(2), "n": [1, 2.5], "b": b"x", "s": {1}, "c": 1 + 2j},
        lambda m: _Unsafe(),
        lambda m: [_Unsafe(), collections.OrderedDict(k=m.ones(1)), slice(1, 2)],
        lambda m: m.nn.Linear(2, 1),
    ],
    ids=["safe", "class", "mixed", "module"],
)
def test_get_unsafe_globals_in_checkpoint(tmp_path, make):
    def names(m, f):
        return sorted(m.serialization.get_unsafe_globals_in_checkpoint(f))

    e = names(ember, _saved(ember, make(ember)))
    t = names(torch, _saved(torch, make(torch)))
    assert e == [n.replace("torch.", "ember.", 1) for n in t]  # a module: ember's own class
    # a torch checkpoint read by ember's helper: the same names as torch's own
    p = tmp_path / "t.pt"
    torch.save(make(torch), p)
    assert names(ember, p) == t


def test_get_unsafe_globals_respects_add_safe_globals():
    b = _saved(ember, _Unsafe())
    assert ember.serialization.get_unsafe_globals_in_checkpoint(b) == [f"{__name__}._Unsafe"]
    with ember.serialization.safe_globals([_Unsafe]):
        b.seek(0)
        assert ember.serialization.get_unsafe_globals_in_checkpoint(b) == []
        b.seek(0)
        assert type(ember.load(b)) is _Unsafe


def test_get_unsafe_globals_of_a_non_checkpoint():
    e, t = _both(
        lambda m: _err(lambda: m.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(b"abc")))
    )
    assert e == t == ("ValueError", "Expected input to be a checkpoint returned by torch.save")


def test_serialization_default_protocol_and_data_distributed():
    assert ember.serialization.DEFAULT_PROTOCOL == torch.serialization.DEFAULT_PROTOCOL == 2
    import ember.utils.data as D  # the submodule is an attribute, as torch.utils.data.distributed

    assert D.distributed.DistributedSampler is ember.utils.data.DistributedSampler


@pytest.mark.skipif(ember.cuda.is_available(), reason="the error of a machine without a GPU")
@pytest.mark.parametrize("ml", ["cuda", "cuda:0", {"cpu": "cuda:0"}], ids=str)
def test_loading_onto_a_missing_gpu_gives_torchs_advice(tmp_path, ml):
    p = tmp_path / "t.pt"
    torch.save({"x": torch.ones(2)}, p)
    e = _err(lambda: ember.load(p, map_location=ml))
    t = _err(lambda: torch.load(p, map_location=ml))
    assert e == t and e[0] == "RuntimeError" and "map_location=torch.device('cpu')" in e[1]
    q = tmp_path / "e.pt"
    ember.save({"x": ember.ones(2)}, q)
    assert _err(lambda: ember.load(q, map_location=ml)) == e


# ------------------------------------------------------------- deprecated backward hooks
def _non_full_cases(m):
    nn = m.nn

    class Two(nn.Module):
        def forward(self, x):
            return x * 2, x.exp()

    class Dict(nn.Module):
        def forward(self, x):
            return {"a": x * 2}

    class Scale(nn.Module):
        def forward(self, x, s):
            return x * s

    class Mul(nn.Module):
        def forward(self, x, y):
            return x * y

    a = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = m.tensor([1.5, 2.0, -0.5], requires_grad=True)
    return {
        "linear": (nn.Linear(3, 2), (m.ones(1, 3, requires_grad=True),)),
        "relu-leaf": (nn.ReLU(), (m.ones(3, requires_grad=True),)),
        "relu-nonleaf": (nn.ReLU(), (a * 1,)),
        "two-outputs": (Two(), (a * 1,)),
        "dict-output": (Dict(), (a * 1,)),
        "non-tensor-input": (Scale(), (a * 1, 2.0)),
        "two-inputs": (Mul(), (a * 1, b * 1)),
        "one-input-without-grad": (Mul(), (a * 1, m.ones(3))),
        "sequential": (nn.Sequential(nn.ReLU(), nn.Tanh()), (a * 1,)),
        "no-grad-input": (nn.ReLU(), (m.ones(3),)),
    }


@pytest.mark.parametrize("case", list(_non_full_cases(ember)))
def test_non_full_backward_hook_warnings(case):
    def run(m):
        mod, args = _non_full_cases(m)[case]
        mod.register_backward_hook(lambda *a: None)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            mod(*args)
        return [(x.category.__name__, str(x.message)) for x in w]

    e, t = _both(run)
    assert e == t
