"""Parity regressions of the ninety-eighth wave: checkpoint safety of save / load against torch
(files that are no checkpoint, bad save targets, views of one memory as two dtypes, unknown
devices in map_location, weights_only refusals, atomic saves), then save / load round trips
fuzzed (nested containers, OrderedDict, namedtuples, Parameters, tensors requiring grad, every
dtype, 0-d / empty / non-contiguous tensors, ``_use_new_zipfile_serialization=False``,
``pickle_module``, ``mmap``). It found:

* an empty file's EOFError said ember's words (torch: '' with weights_only, else 'Ran out of
  input'); a file of random bytes or of text, or one too short for a header, was ember's
  RuntimeError "header claims ..." (torch reads it as a legacy pickle: the unpickler's
  UnpicklingError, wrapped in "Weights only load failed..." under weights_only; a file that does
  unpickle: "Invalid magic number; corrupt file?"); a truncated torch zip and a zip that is no
  checkpoint were ember's RuntimeError texts (torch: "PytorchStreamReader failed ...", its
  "file in archive is not in a subdirectory" / hasRecord("version") texts); an empty zip
  (no local header) was read as a torch zip;
* saving to a folder was IsADirectoryError, to '' or a name ending in '/' another error (torch's
  zip writer: RuntimeError "[enforce fail ...]"); with ``_use_new_zipfile_serialization=False``
  a bad path was ember's "Parent directory ..." (torch: open()'s own OSError); a text-mode file
  or StringIO said "not bytes" (torch writes memoryviews: "not memoryview");
* x and x.view(int32) (any views of one memory as different dtypes) saved and loaded unshared
  (torch: "Cannot save multiple tensors or storages that view the same data as different
  types");
* map_location 'mps...', 'xpu[:n]', 'hpu...', 'mtia[:n]' said ember has no such device (torch:
  its texts for each backend missing from a cpu build, or "Invalid device string");
* weights_only refusing a global of the os / posix / nt / sys modules gave the allowlist advice
  (torch: "... whose module posix is blocked.");
* a pickle_module without ``__name__`` / ``Unpickler`` was ignored by load (torch: the
  AttributeError, before anything else), and save read ``Pickler`` before ``__name__``;
* a file saved with ``_use_new_zipfile_serialization=False`` loaded with mmap=True (torch:
  "mmap can only be used with files saved with ...").

Not copied: torch's weights_only unpickler's own texts for garbage (its "Unsupported operand"
is copied for a bad first opcode only; other bytes give CPython's unpickler's text in torch's
frame), a text-mode load's UnicodeDecodeError position (ember's files start differently), the
TypeError text of a latin-1 text-mode load; ember's truncated or corrupt own files keep their
RuntimeError texts (torch cannot write them); without weights_only a garbage file naming a
global is refused (torch imports and calls it); and a failed save keeps the old file whole with
no temp file left (torch's leaves a partial file: ember's guarantee, tested below).
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import random
import types
import zipfile

import pytest

torch = pytest.importorskip("torch")
import ember
from harness import outcome, same_outcome

Pt = collections.namedtuple("Pt", "x y")


_same = same_outcome


def _saved(lib, obj, writer=None, **kw):
    """``obj`` saved by ``writer`` (default: ``lib``) into a buffer, rewound."""
    b = io.BytesIO()
    (writer or lib).save(obj, b, **kw)
    b.seek(0)
    return b


# ------------------------------------------------------------------------ files of no checkpoint
def _torch_zip_bytes():
    return _saved(torch, {"a": torch.arange(100.0)}).getvalue()


def _zip(*names):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        for n in names:
            z.writestr(n, "3\n")
    return b.getvalue()


_rng = random.Random(98)
_GARBAGE = {
    "empty": b"",
    "random": bytes([0xC5]) + bytes(_rng.randrange(256) for _ in range(999)),
    "text": b"hello world\n" * 3,
    "short": b"\x01\x02\x03",
    "pickled-int": pickle.dumps(5, protocol=2),
    "pickled-list-p4": pickle.dumps([1, 2], protocol=4),
    "letters": b"x" * 20,
    "pk-short": b"PK\x03",
    "empty-zip": _zip(),
    "zip-top-level-file": _zip("hello.txt"),
    "zip-no-version": _zip("a/x.txt", "b/version"),
    "zip-no-data.pkl": _zip("archive/version", "archive/x"),
    "zip-header-only": b"PK\x03\x04" + b"\0" * 40,
    "zip-cut-10": _torch_zip_bytes()[:10],
    "zip-cut-half": _torch_zip_bytes()[: len(_torch_zip_bytes()) // 2],
    "zip-cut-end": _torch_zip_bytes()[:-1],
    "os-system": b"\x80\x02cos\nsystem\nq\x00(X\x04\x00\x00\x00truetR.",
    "allowed-global": b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01.",
}
# torch's weights_only unpickler words these its own way; type and lead are compared
_OWN_WORDS = {"pk-short", "empty-zip"}


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("name", list(_GARBAGE))
@pytest.mark.parametrize("how", ["path", "buffer"])
def test_files_of_no_checkpoint(name, weights_only, how, tmp_path):
    if name == "os-system" and not weights_only:
        return  # torch would call os.system here; ember refuses (the next test)
    data = _GARBAGE[name]
    p = tmp_path / "bad.pt"
    p.write_bytes(data)

    def fn(lib):
        return lib.load(p if how == "path" else io.BytesIO(data), weights_only=weights_only)

    want = outcome(fn, torch)
    got = outcome(fn, ember)
    if weights_only and name in _OWN_WORDS:
        assert got[0] == want[0] == "UnpicklingError"
        assert got[1].split(".")[0] == want[1].split(".")[0] == "Weights only load failed"
    else:
        assert got == want


def test_garbage_naming_a_global_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    evil = b"\x80\x02cos\nsystem\nq\x00(X\x10\x00\x00\x00touch PWNED_W98qtR."
    p = tmp_path / "evil.pt"
    p.write_bytes(evil)
    with pytest.raises(pickle.UnpicklingError, match="whose module os is blocked"):
        ember.load(p)
    with pytest.raises(pickle.UnpicklingError, match="not a checkpoint"):
        ember.load(p, weights_only=False)
    assert not (tmp_path / "PWNED_W98").exists()


# ------------------------------------------------------------------------ where save writes
@pytest.mark.parametrize("zipped", [True, False])
@pytest.mark.parametrize(
    "target", ["folder", "folder/", "missing/", "missing/x.pt", "file/x.pt", "", "ok.pt"]
)
def test_save_targets(target, zipped, tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_bytes(b"")

    def fn(lib):
        path = "" if target == "" else os.path.join(tmp_path, target)
        lib.save(lib.ones(2), path, _use_new_zipfile_serialization=zipped)
        return lib.load(path).tolist()

    _same(fn)


@pytest.mark.parametrize("kind", ["text", "stringio", "read-only", "latin-1 text"])
def test_save_to_file_objects_of_the_wrong_kind(kind, tmp_path):
    def fn(lib):
        p = tmp_path / f"{kind}-{lib.__name__}"
        p.write_bytes(b"old")
        if kind == "stringio":
            return lib.save(lib.ones(2), io.StringIO())
        mode = "rb" if kind == "read-only" else "w"
        enc = "latin-1" if kind.startswith("latin") else None
        with open(p, mode, encoding=enc) as fh:
            return lib.save({"a": lib.ones(2)}, fh)

    kind_, _ = _same(fn)
    assert kind_ != "ok"


def test_load_from_a_text_mode_file(tmp_path):
    def fn(lib):
        p = tmp_path / f"t-{lib.__name__}"
        lib.save({"a": lib.ones(2)}, p)
        with open(p, encoding="utf-8") as fh:
            return lib.load(fh)

    want, got = outcome(fn, torch), outcome(fn, ember)
    assert got[0] == want[0] == "UnicodeDecodeError"  # the position differs: see the docstring


# ------------------------------------------------------------------------ views of one memory
@pytest.mark.parametrize(
    "make",
    [
        lambda L, x: [x, x.view(L.int32)],
        lambda L, x: [x.view(L.int32), x],
        lambda L, x: {"a": x[2:6].view(L.int16), "b": x},
        lambda L, x: [x[:2], x[4:].view(L.int32)],
        lambda L, x: [x.view(L.uint8), x.view(L.int32)],
        lambda L, x: [x.reshape(2, 4), x.view(L.int32)[1:]],
        lambda L, x: (x.detach(), x.view(L.int32), "pickled", L.Size([1])),
    ],
)
@pytest.mark.parametrize("zipped", [True, False])
def test_views_as_other_dtypes_refused(make, zipped):
    def fn(lib):
        x = lib.arange(8, dtype=lib.float32)
        obj = make(lib, x)
        if isinstance(obj, tuple):
            obj = {"t": obj, "ns": types.SimpleNamespace(a=1)}  # the pickle format
        return lib.save(obj, io.BytesIO(), _use_new_zipfile_serialization=zipped)

    assert _same(fn)[0] == "RuntimeError"


def test_refused_views_keep_the_old_file(tmp_path):
    p = tmp_path / "ckpt.pt"
    ember.save({"a": ember.ones(2)}, p)
    before = p.read_bytes()
    x = ember.arange(4.0)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        ember.save([x, x.view(ember.int32)], p)
    assert p.read_bytes() == before and [q.name for q in tmp_path.iterdir()] == ["ckpt.pt"]


@pytest.mark.parametrize("writer", ["same", "torch"])
def test_views_of_one_dtype_share_after_load(writer):
    def fn(lib):
        w = torch if writer == "torch" else lib
        x = w.arange(12, dtype=w.float32)
        out = lib.load(_saved(lib, {"x": x[1:], "v": x[2:8].view(2, 3), "w": x[::2]}, w))
        out["x"][3] = 100.0
        return [(tuple(t.shape), t.stride(), t.storage_offset(), t.tolist()) for t in out.values()]

    assert _same(fn)[0] == "ok"


# ------------------------------------------------------------------------ map_location
_BACKENDS = ["mps", "mps:0", "mpsx", "xpu", "xpu:1", "xpu7", "xpu:", "hpu", "hpu:3", "hpux"]
_BACKENDS += ["mtia", "mtia:0", "foo:0", "foo"]


@pytest.mark.parametrize("writer", ["same", "torch"])
@pytest.mark.parametrize("ml", _BACKENDS)
@pytest.mark.parametrize("as_dict", [False, True])
def test_map_location_unknown_devices(ml, writer, as_dict):
    def fn(lib):
        w = torch if writer == "torch" else lib
        m = {"cpu": ml} if as_dict else ml
        return lib.load(_saved(lib, {"a": w.ones(2)}, w), map_location=m)

    assert _same(fn)[0] == "RuntimeError"


# ------------------------------------------------------------------------ weights_only
class _Evil:
    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def __reduce__(self):
        return (self.fn, (self.arg,))


@pytest.mark.parametrize(
    "fn", [os.system, os.getenv, print, eval, collections.namedtuple, types.SimpleNamespace]
)
@pytest.mark.parametrize("writer", ["same", "torch"])
def test_weights_only_refusals(fn, writer, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    arg = "touch RAN_W98" if fn is os.system else "RAN_W98"

    def load(lib):
        w = torch if writer == "torch" else lib
        return lib.load(_saved(lib, {"x": w.ones(1), "e": _Evil(fn, arg)}, w))

    kind, text = _same(load)
    assert kind == "UnpicklingError" and text.startswith("Weights only load failed.")
    assert not (tmp_path / "RAN_W98").exists()


# ------------------------------------------------------------------------ atomic saves
@pytest.mark.parametrize(
    "bad",
    [
        lambda L: {"a": L.ones(2), "f": lambda: 1},
        lambda L: [L.ones(2), {"deep": (lambda: 2,)}],
        lambda L: {"gen": (i for i in range(2))},
        lambda L: {"lock": __import__("threading").Lock()},
    ],
)
@pytest.mark.parametrize("zipped", [True, False])
def test_failed_save_keeps_the_old_file(bad, zipped, tmp_path):
    def fn(lib):
        return lib.save(bad(lib), io.BytesIO(), _use_new_zipfile_serialization=zipped)

    kind, _ = _same(fn)  # the same error as torch...
    assert kind != "ok"
    p = tmp_path / "ckpt.pt"
    ember.save({"w": ember.arange(3.0)}, p)
    before = p.read_bytes()
    with pytest.raises(Exception, match=".") as info:
        ember.save(bad(ember), p, _use_new_zipfile_serialization=zipped)
    assert type(info.value).__name__ == kind
    # ...but the old checkpoint is whole and no temp file is left (torch's is half written)
    assert p.read_bytes() == before and [q.name for q in tmp_path.iterdir()] == ["ckpt.pt"]
    assert ember.load(p)["w"].tolist() == [0.0, 1.0, 2.0]


# ------------------------------------------------------------------------ round trips
def _desc(o):
    """What a loaded object is: containers' types and items, tensors' class, layout, dtype,
    autograd flags and values."""
    if isinstance(o, (torch.Tensor, ember.Tensor)):
        lib = torch if isinstance(o, torch.Tensor) else ember
        t = o.detach()
        vals = t.to(lib.float64).tolist() if t.dtype in (lib.bfloat16, lib.float16) else t.tolist()
        if t.is_complex():
            vals = [str(v) for v in t.reshape(-1).tolist()]
        return (
            type(o).__name__,
            tuple(o.shape),
            o.stride(),
            o.storage_offset(),
            str(o.dtype).split(".")[-1],
            o.requires_grad,
            o.is_leaf,
            vals,
        )
    if isinstance(o, dict):
        return (type(o).__name__, [(_desc(k), _desc(v)) for k, v in o.items()])
    if isinstance(o, (list, tuple)):
        return (type(o).__name__, [_desc(v) for v in o])
    return (type(o).__name__, repr(o))


def _fuzz(lib):
    x = lib.arange(12, dtype=lib.float32).reshape(3, 4)
    w = lib.ones(2, requires_grad=True)
    return {
        "nested": {"a": [x, (x[1], {"b": x.t()})], "c": None, 1: 2.5, "s": "str"},
        "od": collections.OrderedDict([("z", lib.zeros(2)), ("a", lib.ones(1))]),
        "param": lib.nn.Parameter(lib.ones(2)),
        "param_frozen": lib.nn.Parameter(lib.ones(2), requires_grad=False),
        "non_leaf": w * 2,
        "leaf_rg": w,
        "c64": lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex64),
        "c128": lib.tensor([1 + 2j], dtype=lib.complex128),
        "bool": lib.tensor([True, False]),
        "bf16": lib.tensor([1.5, -2.25], dtype=lib.bfloat16),
        "f16": lib.tensor([1.5, 65504.0], dtype=lib.float16),
        "zero_d": lib.tensor(3.5),
        "zero_d_int": lib.tensor(7),
        "empty": lib.empty(0, 3),
        "strided": x[:, ::2],
        "transposed": x.t(),
        "expanded": lib.ones(1, 3).expand(4, 3),
        "ints": [lib.tensor([-1, 2], dtype=lib.int8), lib.tensor([255], dtype=lib.uint8)],
    }


_ROUND_TRIPS = {
    "default": ({}, {}),
    "weights_only=False": ({}, {"weights_only": False}),
    "mmap": ({}, {"mmap": True}),
    "legacy": ({"_use_new_zipfile_serialization": False}, {}),
    "pickle_module": ({"pickle_module": pickle}, {"pickle_module": pickle}),
    # (torch's weights_only load refuses its own protocol 4 files: wave 95's leftover)
    "protocol 4": ({"pickle_protocol": 4}, {"weights_only": False}),
    "map_location cpu": ({}, {"map_location": "cpu"}),
}


@pytest.mark.parametrize("what", ["dict", "namedtuple"])
@pytest.mark.parametrize("case", list(_ROUND_TRIPS))
def test_round_trips(case, what, tmp_path):
    save_kw, load_kw = _ROUND_TRIPS[case]

    def fn(lib):
        p = tmp_path / f"{lib.__name__}.pt"
        obj = _fuzz(lib) if what == "dict" else Pt(lib.ones(2, requires_grad=True), 3)
        lib.save(obj, p, **save_kw)
        return _desc(lib.load(p, **load_kw))

    _same(fn)


@pytest.mark.parametrize("case", ["default", "weights_only=False", "mmap", "pickle_module"])
@pytest.mark.parametrize("legacy", [False, True])
def test_torch_written_round_trips(case, legacy, tmp_path):
    p = tmp_path / "t.pt"
    torch.save(_fuzz(torch), p, _use_new_zipfile_serialization=not legacy)
    load_kw = _ROUND_TRIPS[case][1]
    _same(lambda lib: _desc(lib.load(p, **load_kw)))


@pytest.mark.parametrize("obj", ["safe", "pickled"])
@pytest.mark.parametrize("zipped", [True, False, 0])
def test_mmap_refuses_legacy_saves(obj, zipped, tmp_path):
    def fn(lib):
        p = str(tmp_path / "ckpt.pt")
        o = {"a": lib.ones(2)} if obj == "safe" else types.SimpleNamespace(a=lib.ones(2))
        lib.save(o, p, _use_new_zipfile_serialization=zipped)
        out = lib.load(p, mmap=True, weights_only=False)
        return _desc(out if obj == "safe" else out.a)

    _same(fn)


_NS = types.SimpleNamespace()
_FAKE = types.ModuleType("fake")


@pytest.mark.parametrize(
    "call",
    [
        lambda L, p: L.save(L.ones(1), io.BytesIO(), pickle_module=_NS),
        lambda L, p: L.save(L.ones(1), None, pickle_module=_NS),
        lambda L, p: L.save(L.ones(1), io.BytesIO(), pickle_module=_FAKE),
        lambda L, p: L.save(L.ones(1), os.path.join(p, "a", "b"), pickle_module=_FAKE),
        lambda L, p: L.load(os.path.join(p, "c.pt"), pickle_module=_FAKE),
        lambda L, p: L.load(os.path.join(p, "c.pt"), pickle_module=_NS, weights_only=False),
        lambda L, p: L.load(os.path.join(p, "c.pt"), pickle_module=_NS, weights_only=True),
        lambda L, p: L.load(io.BytesIO(b""), pickle_module=_FAKE, weights_only=False),
        lambda L, p: L.load(None, pickle_module=_NS, weights_only=False),
        lambda L, p: L.load(os.path.join(p, "c.pt"), pickle_module=_NS, foo=1),
        lambda L, p: L.load(os.path.join(p, "nope"), pickle_module=_NS),
    ],
)
def test_pickle_module_checked_first(call, tmp_path):
    def fn(lib):
        lib.save({"a": lib.ones(2)}, tmp_path / "c.pt")
        return call(lib, str(tmp_path))

    assert _same(fn)[0] != "ok"
