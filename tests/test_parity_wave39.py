"""Parity regressions found by the thirty-ninth wave, a sweep of the checkpoints a training script
writes and reads between ember and torch (state_dicts of every module kind, every optimizer's
and scheduler's state, GradScaler, RNG states, tensors of every dtype and layout, views,
Parameters, containers, sparse tensors, the safe-globals allowlist, the legacy format, file
objects, paths and the errors; torch is the oracle): tensors of a torch checkpoint that view one
storage loaded with torch's storage offsets (ember rebased every view to offset 0) and the
``map_location`` callable called once per storage, ``as_strided`` of a dtype view
(``t.view(int32)``: ember read the root's elements and dtype), sparse tensors torch saved
(``_rebuild_sparse_tensor`` and its layouts, refused before) and tensors carrying Python
attributes (``_rebuild_from_type_v2``), ``mmap=True`` refused for the legacy format with torch's
message, ``add_safe_globals`` keeping its items as given and checking them only when a load
needs them (torch's errors then), torch's AttributeErrors for loading from something unseekable
and saving to something unwritable, the ``pickle_load_args`` torch's unpicklers refuse (and its
warning that a weights_only load ignores them), an expanded tensor saved alone keeping its zero
strides (and only its base's elements), a frozenset refused by a weights_only load of ember's
pickle format as torch refuses it, ``set_default_load_endianness``/``LoadEndianness`` for torch
files without a byteorder record, ``SourceChangeWarning``, and the torch objects ember cannot
rebuild (float8/complex32 dtypes, quantized tensors) refused as unsupported, not as unsafe
globals to allow-list."""

from __future__ import annotations

import collections
import io
import pathlib
import pickle
import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return type(e).__name__, str(e).replace("ember", "torch")
    return None


def _torch_file(tmp_path, obj, legacy=False, name="t.pt"):
    p = tmp_path / name
    torch.save(obj, p, _use_new_zipfile_serialization=not legacy)
    return p


def _layout(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.tolist()


# ---------------------------------------------------------------- views of one torch storage
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("wo", [True, False])
def test_torch_views_keep_storage_offsets_and_share_memory(tmp_path, legacy, wo):
    base = torch.arange(24.0).reshape(4, 6)
    obj = {"base": base, "sl": base[1:3, ::2], "row": base[2], "t": base.t(), "alone": None}
    obj["alone"] = torch.arange(10.0)[3:7]  # a lone slice: torch writes its whole storage
    p = _torch_file(tmp_path, obj, legacy)
    want = torch.load(p, weights_only=wo)
    got = ember.load(p, weights_only=wo)
    for k in obj:
        assert _layout(got[k]) == _layout(want[k]), k
        assert got[k]._base is None and want[k]._base is None  # no autograd views
    got["base"][2, 0] = -1.0  # one memory, as torch's storages
    assert got["row"][0].item() == got["sl"][1, 0].item() == got["t"][0, 2].item() == -1.0


def test_torch_views_of_every_dtype(tmp_path):
    dts = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
    dts += ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
    obj = {d: (torch.arange(12) % 3).to(getattr(torch, d)).reshape(3, 4)[1:, ::2] for d in dts}
    p = _torch_file(tmp_path, obj)
    want, got = torch.load(p), ember.load(p)
    for d in dts:
        assert str(got[d].dtype) == f"ember.{d}"
        w, g = want[d], got[d]
        assert (tuple(g.shape), g.stride(), g.storage_offset()) == (
            tuple(w.shape),
            w.stride(),
            w.storage_offset(),
        )
        np.testing.assert_array_equal(g.float().numpy(), w.float().numpy())


def test_map_location_callable_sees_each_storage_once(tmp_path):
    base = torch.arange(6.0)
    p = _torch_file(tmp_path, [base[:2], base[2:], torch.ones(3)])
    seen = {"torch": [], "ember": []}

    def fn(key):
        def place(storage, loc):
            seen[key].append(loc)
            return storage

        return place

    want = torch.load(p, map_location=fn("torch"))
    got = ember.load(p, map_location=fn("ember"))
    assert seen["ember"] == seen["torch"] == ["cpu", "cpu"]
    assert [_layout(t) for t in got] == [_layout(t) for t in want]


@pytest.mark.parametrize(
    "src,dst,size,stride,off",
    [
        ("float32", "int32", (2,), (1,), 1),
        ("float32", "uint8", (3,), (2,), 1),
        ("uint8", "int16", (2,), (1,), 0),
        ("float64", "float32", (2, 2), (1, 2), 1),
    ],
)
def test_as_strided_of_a_dtype_view(src, dst, size, stride, off):
    def run(m):
        x = m.arange(8).to(getattr(m, src)).view(getattr(m, dst))
        y = x.as_strided(size, stride, off)
        return str(y.dtype).split(".")[-1], y.tolist(), y.storage_offset()

    assert run(ember) == run(torch)


# ------------------------------------------------------------------------ sparse / attributes
@pytest.mark.parametrize("wo", [True, False])
def test_torch_sparse_tensors_load(tmp_path, wo):
    coo = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 1]], [1.0, 2.0, 3.0], (2, 3))
    obj = {
        "coo": coo,
        "coalesced": coo.coalesce(),
        "csr": coo.to_sparse_csr(),
        "csc": coo.to_sparse_csc(),
        "bsr": coo.to_dense().to_sparse_bsr((1, 1)),
    }
    p = _torch_file(tmp_path, obj)
    want, got = torch.load(p, weights_only=wo), ember.load(p, weights_only=wo)
    for k in obj:
        assert str(got[k].layout).split(".")[-1] == str(want[k].layout).split(".")[-1]
        assert got[k].to_dense().tolist() == want[k].to_dense().tolist()
    assert got["coalesced"].is_coalesced() and not got["coo"].is_coalesced()


@pytest.mark.parametrize("wo", [True, False])
def test_torch_tensor_with_attributes_loads(tmp_path, wo):
    t = torch.arange(3.0)[1:]
    t.note = "kept by torch"  # pickled through torch._tensor._rebuild_from_type_v2
    p = _torch_file(tmp_path, {"t": t})
    want, got = torch.load(p, weights_only=wo)["t"], ember.load(p, weights_only=wo)["t"]
    assert type(got) is ember.Tensor and _layout(got) == _layout(want)


# ------------------------------------------------------------------------ legacy format + mmap
@pytest.mark.parametrize("as_path", [False, True])
def test_mmap_of_a_legacy_checkpoint_refused(tmp_path, as_path):
    p = _torch_file(tmp_path, {"w": torch.ones(2)}, legacy=True)
    f = p if as_path else str(p)
    assert _err(lambda: ember.load(f, mmap=True)) == _err(lambda: torch.load(f, mmap=True))
    assert ember.load(f, mmap=False)["w"].tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------ safe globals
class _Cfg:
    def __init__(self):
        self.lr = 0.1


def test_get_safe_globals_returns_items_as_given():
    for m in (ember, torch):
        s = m.serialization
        s.clear_safe_globals()
        try:
            s.add_safe_globals([(_Cfg, "my.Cfg")])
            s.add_safe_globals([(_Cfg, "my.Cfg"), 3])  # stored once; not checked yet
            got = s.get_safe_globals()
            assert len(got) == 2 and (_Cfg, "my.Cfg") in got and 3 in got
            with s.safe_globals([_Cfg]):
                assert _Cfg in s.get_safe_globals()
            assert _Cfg not in s.get_safe_globals()
        finally:
            s.clear_safe_globals()


@pytest.mark.parametrize("item", [3, (int, 3), (int, "a", "b")])
def test_bad_safe_globals_fail_when_a_load_needs_them(tmp_path, item):
    plain = _torch_file(tmp_path, {"a": torch.ones(1)}, name="plain.pt")
    obj = _torch_file(tmp_path, {"c": _Cfg()}, name="obj.pt")
    res = []
    for m in (ember, torch):
        m.serialization.clear_safe_globals()
        try:
            m.serialization.add_safe_globals([item])
            res.append((m.load(plain)["a"].tolist(), _err(lambda m=m: m.load(obj))))
        finally:
            m.serialization.clear_safe_globals()
    assert res[0] == res[1]
    assert res[0][1][0] in ("AttributeError", "TypeError", "ValueError")


def test_safe_global_class_loads(tmp_path):
    p = _torch_file(tmp_path, {"c": _Cfg()})
    for m in (ember, torch):
        with m.serialization.safe_globals([_Cfg]):
            assert m.load(p)["c"].lr == 0.1


# ------------------------------------------------------------------------ bad files / arguments
@pytest.mark.parametrize("f", [3, None, b"PK\x03\x04"], ids=["int", "None", "bytes"])
def test_load_from_something_unseekable(f):
    assert _err(lambda: ember.load(f)) == _err(lambda: torch.load(f))


@pytest.mark.parametrize("f", [3, None, b""], ids=["int", "None", "bytes"])
def test_save_to_something_unwritable(f):
    e = _err(lambda: ember.save({"a": ember.ones(1)}, f))
    assert e == _err(lambda: torch.save({"a": torch.ones(1)}, f))
    assert e[0] == "AttributeError"


@pytest.mark.parametrize(
    "kw", [{"bogus": 1}, {"errors": "strict"}, {"fix_imports": True}, {"encoding": "latin1"}]
)
@pytest.mark.parametrize("wo", [True, False])
def test_pickle_load_args(tmp_path, kw, wo):
    p = _torch_file(tmp_path, {"a": torch.ones(1)})

    def run(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = _err(lambda: m.load(p, weights_only=wo, **kw))
        return r, [(x.category.__name__, str(x.message)) for x in w]

    assert run(ember) == run(torch)


def test_pickle_load_args_with_a_pickle_module(tmp_path):
    import pickle

    p = _torch_file(tmp_path, collections.OrderedDict(a=torch.ones(1)))
    for m in (ember, torch):
        assert m.load(p, pickle_module=pickle, errors="strict")["a"].tolist() == [1.0]


def test_file_objects_and_paths_still_load(tmp_path):
    b = io.BytesIO()
    torch.save({"w": torch.arange(4.0)[1:]}, b)
    got = ember.load(io.BytesIO(b.getvalue()))["w"]
    assert _layout(got) == _layout(torch.load(io.BytesIO(b.getvalue()))["w"])
    assert got.storage_offset() == 1
    p = _torch_file(tmp_path, {"w": torch.ones(2)})
    assert ember.load(pathlib.Path(p), mmap=True)["w"].tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------ ember's own files
@pytest.mark.parametrize("pickled", [False, True], ids=["safe", "pickle"])
def test_expanded_tensor_round_trips_with_its_strides(tmp_path, pickled):
    def run(m):
        obj = {"e": m.arange(3.0)[:, None].expand(3, 500), "z": m.tensor(2.0).expand(4)}
        if pickled:
            obj["s"] = {1}  # not a safe-format value: the pickle path
        p = tmp_path / f"{m.__name__}.pt"
        m.save(obj, p)
        out = m.load(p, weights_only=not pickled)
        return [_layout(out[k]) for k in ("e", "z")], p.stat().st_size

    (e, e_size), (t, _) = run(ember), run(torch)
    assert e == t
    assert e_size < 3 * 500 * 4  # the 3 base elements are stored, not the 1500 shown


def test_frozenset_refused_under_weights_only(tmp_path):
    def run(m, allow):
        p = tmp_path / f"{m.__name__}.pt"
        m.save({"s": frozenset({1}), "b": b"\x91", "t": m.ones(1)}, p)
        with m.serialization.safe_globals([frozenset] if allow else []):
            r = _err(lambda: m.load(p))
            return r if r else sorted(m.load(p)["s"])

    assert run(ember, False) == run(torch, False)
    assert run(ember, False)[0] == "UnpicklingError"
    assert run(ember, True) == run(torch, True) == [1]
    assert ember.load(tmp_path / "ember.pt", weights_only=False)["s"] == frozenset({1})


# ------------------------------------------------------------------------ serialization API
def _without_byteorder(tmp_path):
    import zipfile

    b = io.BytesIO()
    torch.save({"a": torch.tensor([1.0, 2.0]), "i": torch.tensor([1, 256], dtype=torch.int16)}, b)
    p = tmp_path / "old.pt"
    with zipfile.ZipFile(io.BytesIO(b.getvalue())) as zin, zipfile.ZipFile(p, "w") as zout:
        for n in zin.namelist():
            if not n.endswith("/byteorder"):  # as torch wrote files before it recorded it
                zout.writestr(n, zin.read(n))
    return p


@pytest.mark.parametrize("order", [None, "NATIVE", "LITTLE", "BIG"])
def test_default_load_endianness(tmp_path, order):
    p = _without_byteorder(tmp_path)
    res = []
    for m in (ember, torch):
        s = m.serialization
        e = None if order is None else getattr(s.LoadEndianness, order)
        s.set_default_load_endianness(e)
        try:
            out = m.load(p)
            res.append((out["a"].tolist(), out["i"].tolist(), s.get_default_load_endianness()))
        finally:
            s.set_default_load_endianness(None)
    assert res[0][:2] == res[1][:2]
    assert str(res[0][2]) == str(res[1][2])


def test_set_default_load_endianness_type_error():
    for m in (ember, torch):
        e = _err(lambda m=m: m.serialization.set_default_load_endianness("big"))
        assert e == ("TypeError", "Invalid argument type in function set_default_load_endianness")


def test_source_change_warning_is_a_warning():
    assert issubclass(ember.serialization.SourceChangeWarning, Warning)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=ember.serialization.SourceChangeWarning)


@pytest.mark.parametrize("kind", ["float8", "complex32", "quantized", "dtype"])
@pytest.mark.parametrize("wo", [True, False])
def test_torch_objects_ember_lacks_refused_as_unsupported(tmp_path, kind, wo):
    # torch's weights_only load allows them: "not an allowed global" would be wrong advice
    obj = {
        "float8": lambda: torch.ones(2).to(torch.float8_e4m3fn),
        "complex32": lambda: torch.ones(2, dtype=torch.complex32),
        "quantized": lambda: torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8),
        "dtype": lambda: torch.float8_e5m2,
    }[kind]()
    p = _torch_file(tmp_path, {"x": obj})
    assert torch.load(p, weights_only=wo)["x"] is not None
    with pytest.raises(pickle.UnpicklingError, match="is a torch object ember has no counterpart"):
        ember.load(p, weights_only=wo)
