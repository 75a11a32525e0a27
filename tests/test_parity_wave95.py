"""Parity regressions of the ninety-fifth wave: saving, loading and state dicts fuzzed against
torch (save/load argument checks, weights_only, map_location, mmap, torch-written files, every
dtype, views, Module.state_dict / load_state_dict, optimizer state dicts through a file). It
found:

* map_location read eagerly as an ember device: a tensor-free checkpoint failed on a map_location
  torch never looks at; tags torch refuses ('cpu:0', 'CPU', 'bogus', '', a device('cpu:0'))
  loaded or gave the device parser's error instead of torch's "don't know how to restore data
  location ..."; a map_location of another type (3, a list, True) was a ValueError where torch
  calls it ("'int' object is not callable"); a dict value that is no tag (3, None) went to
  cuda:3 or read as a corrupt file (torch: re.match's TypeError); an error raised by a callable
  map_location came back as "not a valid checkpoint: corrupt structure metadata";
* pickle_protocol never checked: 6, '2' and 2.0 saved (torch: the pickler's ValueError /
  TypeError; ember raises before writing, so the old file stays whole where torch's is lost);
* a list or dict saved twice in one object (or holding itself) loaded as copies, or recursed
  forever (RecursionError); torch's load gives back one shared object.

Not copied here: the EOFError / corrupt-file texts, saving to a folder and torch's refusal to
save two views of one storage as different dtypes (all three copied since, in wave 98); torch's
weights_only failures on its own files pickled with a protocol other than 2 (ember's formats
load); a callable map_location returning a non-tensor.
"""

from __future__ import annotations

import io

import pytest

torch = pytest.importorskip("torch")
import ember
from harness import same_outcome

_same = same_outcome


def _saved(lib, obj, writer=None):
    """``obj`` saved by ``writer`` (default: ``lib``) into a buffer, rewound."""
    b = io.BytesIO()
    (writer or lib).save(obj, b)
    b.seek(0)
    return b


def _summary(out):
    """What a load gave: each tensor's dtype, shape, device and values."""
    return {
        k: (str(v.dtype)[6:], tuple(v.shape), v.device.type, v.tolist()) for k, v in out.items()
    }


@pytest.mark.parametrize("writer", ["same", "torch"])
@pytest.mark.parametrize(
    "ml",
    ["cpu:0", "cpu:1", "CPU", "bogus", "cudax", "", "cpu ", "dev:cpu:0", {"cpu": "cpu:0"}],
    ids=repr,
)
def test_location_tags_torch_refuses(ml, writer):
    def fn(lib):
        w = torch if writer == "torch" else lib
        m = lib.device(ml[4:]) if isinstance(ml, str) and ml.startswith("dev:") else ml
        return _summary(lib.load(_saved(lib, {"a": w.arange(3.0)}, w), map_location=m))

    kind, text = _same(fn)
    assert kind == "RuntimeError" and "don't know how to restore data location" in text


@pytest.mark.parametrize("ml", ["bogus", "", 3, ["cpu"], True, "mps", "xpu"], ids=repr)
def test_map_location_unused_without_tensors(ml):
    # torch reads map_location only to place a storage: a checkpoint of plain values loads
    fn = lambda lib: lib.load(_saved(lib, {"a": 1, "b": [2.0, "x"]}), map_location=ml)
    assert _same(fn) == ("ok", {"a": 1, "b": [2.0, "x"]})


@pytest.mark.parametrize("writer", ["same", "torch"])
@pytest.mark.parametrize("ml", [3, 2.5, ["cpu"], ("cpu",), True], ids=repr)
def test_map_location_of_another_type_is_called(ml, writer):
    def fn(lib):
        w = torch if writer == "torch" else lib
        return lib.load(_saved(lib, {"a": w.ones(2)}, w), map_location=ml)

    assert _same(fn)[0] == "TypeError"


@pytest.mark.parametrize("writer", ["same", "torch"])
@pytest.mark.parametrize("dst", [3, None, 1.5], ids=repr)
def test_map_location_dict_value_not_a_tag(dst, writer):
    def fn(lib):
        w = torch if writer == "torch" else lib
        return lib.load(_saved(lib, {"a": w.ones(2)}, w), map_location={"cpu": dst})

    assert _same(fn)[0] == "TypeError"


@pytest.mark.parametrize("exc", [KeyError, ValueError, TypeError, AttributeError])
def test_callable_map_location_errors_are_its_own(exc):
    def place(storage, location):
        raise exc("from the callable")

    _same(
        lambda lib: lib.load(
            _saved(lib, {"a": lib.ones(2), "b": [lib.zeros(1)]}), map_location=place
        )
    )


@pytest.mark.parametrize("proto", [6, 7, "2", 2.0, [2]], ids=repr)
def test_pickle_protocol_checked(proto):
    kind, _ = _same(lambda lib: lib.save({"a": lib.ones(2)}, io.BytesIO(), pickle_protocol=proto))
    assert kind in ("ValueError", "TypeError")


def test_bad_pickle_protocol_keeps_the_old_file(tmp_path):
    p = tmp_path / "ckpt.pt"
    ember.save({"a": ember.ones(2)}, p)
    before = p.read_bytes()
    with pytest.raises(ValueError, match="pickle protocol must be <= 5"):
        ember.save({"a": ember.zeros(3)}, p, pickle_protocol=6)
    assert p.read_bytes() == before and [q.name for q in tmp_path.iterdir()] == ["ckpt.pt"]


def _shared(lib):
    x, d = [lib.ones(1)], {"k": lib.zeros(2)}
    out = lib.load(_saved(lib, {"a": x, "b": x, "c": d, "e": [d, 1]}))
    out["a"].append(5)
    out["c"]["n"] = 1
    return (out["a"] is out["b"], out["c"] is out["e"][0], len(out["b"]), sorted(out["e"][0]))


def test_shared_containers_load_shared():
    assert _same(_shared) == ("ok", (True, True, 2, ["k", "n"]))


@pytest.mark.parametrize("kind", ["list", "dict", "nested"])
def test_containers_holding_themselves(kind):
    def fn(lib):
        if kind == "list":
            obj = [lib.ones(1)]
            obj.append(obj)
            out = lib.load(_saved(lib, obj))
            return out[1] is out, out[0].tolist()
        if kind == "dict":
            obj = {"t": lib.ones(1)}
            obj["self"] = obj
            out = lib.load(_saved(lib, obj))
            return out["self"] is out, out["t"].tolist()
        inner: list = []
        obj = {"a": (inner, lib.ones(2))}
        inner.append(obj)
        out = lib.load(_saved(lib, obj))
        return out["a"][0][0] is out, out["a"][1].tolist()

    assert _same(fn)[0] == "ok"
