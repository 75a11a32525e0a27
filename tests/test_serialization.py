"""ember.save / ember.load / ember.serialization: round trips, safetensors interop with torch,
atomic writes, bad input, map_location, mmap memory bound, names."""

from __future__ import annotations

import argparse
import collections
import io
import json
import math
import os
import pickle
import stat
import struct
import subprocess
import sys
import threading

import ember
import numpy as np
import pytest
from ember import nn
from ember.serialization import load_safetensors, save_safetensors

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
try:
    import safetensors.torch as st_torch
except ImportError:  # pragma: no cover
    st_torch = None

needs_torch = pytest.mark.skipif(torch is None or st_torch is None, reason="torch not installed")

DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
]


def _rand(dtype, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 10
    if dtype == "bool":
        return ember.tensor(a > 0)
    return ember.tensor(a.astype(np.float64)).to(getattr(ember, dtype))


def _same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, ember.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.names == b.names
        assert a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(
            a.detach().float().numpy() if a.dtype == ember.bfloat16 else a.detach().numpy(),
            b.detach().float().numpy() if b.dtype == ember.bfloat16 else b.detach().numpy(),
        )
    elif isinstance(a, dict):
        assert list(a.keys()) == list(b.keys())
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def _is_safetensors(path):
    with open(path, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        return isinstance(json.loads(fh.read(n)), dict)


# ------------------------------------------------------------------------------ round trips
ROUND_TRIPS = {
    "tensor": lambda: _rand("float32"),
    "scalar_tensor": lambda: ember.tensor(3.5),
    "empty_tensor": lambda: ember.zeros(0, 3),
    "noncontig": lambda: _rand("float64", (4, 5)).t(),
    "requires_grad": lambda: ember.ones(2, 3, requires_grad=True),
    "named": lambda: ember.ones(2, 3, names=("N", "C")),
    "partially_named": lambda: ember.ones(2, 3, names=(None, "C")),
    "every_dtype": lambda: {d: _rand(d, seed=i) for i, d in enumerate(DTYPES)},
    "complex": lambda: ember.tensor([1 + 2j, 3 - 1j]),
    "nested": lambda: {
        "a": [ember.ones(2), (1, 2.5, "x", None, True)],
        "b": collections.OrderedDict(c=ember.arange(5), d={"e": float("nan"), "f": -0.0}),
        3: [float("inf"), 10**30],
        "empty": {},
        "tup": (),
    },
    "scalars": lambda: [1, 2.0, "s", None, False],
    "state_dict": lambda: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).state_dict(),
    "params": lambda: list(nn.Linear(2, 2).parameters()),
}


@pytest.mark.parametrize("kind", list(ROUND_TRIPS))
def test_round_trip_safe(tmp_path, kind):
    obj = ROUND_TRIPS[kind]()
    p = tmp_path / "ckpt.pt"
    ember.save(obj, p)
    assert _is_safetensors(p)  # the safe format: no pickle involved
    _same(obj, ember.load(p))
    # file objects work as well
    bio = io.BytesIO()
    ember.save(obj, bio)
    bio.seek(0)
    _same(obj, ember.load(bio))


def test_state_dict_metadata_and_shared_tensors(tmp_path):
    sd = nn.Linear(3, 4).state_dict()
    t = ember.ones(3)
    ember.save({"sd": sd, "x": t, "y": t}, tmp_path / "a.pt")
    out = ember.load(tmp_path / "a.pt")
    assert out["sd"]._metadata == sd._metadata
    assert out["x"] is out["y"]  # one tensor saved once, loaded once
    m = nn.Linear(3, 4)
    m.load_state_dict(out["sd"])
    _same(m.weight.detach(), sd["weight"])


def test_parameter_type_round_trips(tmp_path):
    m = nn.Linear(2, 2)
    ember.save([m.weight], tmp_path / "p.pt")
    (w,) = ember.load(tmp_path / "p.pt")
    assert isinstance(w, nn.Parameter) and w.requires_grad


def test_names_round_trip_and_in_metadata(tmp_path):
    x = ember.randn(2, 3, names=("N", "C"))
    ember.save({"x": x}, tmp_path / "n.pt")
    assert ember.load(tmp_path / "n.pt")["x"].names == ("N", "C")
    save_safetensors({"x": x, "y": ember.ones(2)}, tmp_path / "n.safetensors")
    d = load_safetensors(tmp_path / "n.safetensors")
    assert d["x"].names == ("N", "C") and d["y"].names == (None,)


# ------------------------------------------------------------------------------ pickle path
class _Obj:
    def __init__(self):
        self.t = ember.arange(6.0).reshape(2, 3)


def test_pickle_objects_need_weights_only_false(tmp_path):
    ns = argparse.Namespace(lr=0.1, w=ember.ones(3, names=("C",)))
    p = tmp_path / "ns.pt"
    ember.save(ns, p)
    assert not _is_safetensors_or_none(p)
    with pytest.raises(
        pickle.UnpicklingError,
        match=r"(?s)Weights only load failed.*`weights_only` set to `False`.*"
        r"argparse\.Namespace.*add_safe_globals\(\[argparse\.Namespace\]\)",
    ):
        ember.load(p)
    out = ember.load(p, weights_only=False)
    assert out.lr == 0.1 and out.w.names == ("C",)
    np.testing.assert_array_equal(out.w.numpy(), np.ones(3, np.float32))
    with ember.serialization.safe_globals([argparse.Namespace]):
        assert ember.load(p).lr == 0.1
    with pytest.raises(pickle.UnpicklingError):
        ember.load(p)  # the context manager's allow-list ended with the block
    ember.serialization.add_safe_globals([argparse.Namespace])
    try:
        assert argparse.Namespace in ember.serialization.get_safe_globals()
        assert ember.load(p).lr == 0.1
    finally:
        ember.serialization.clear_safe_globals()


def _is_safetensors_or_none(path):
    with open(path, "rb") as fh:
        return fh.read(8) != b"EMBERPK1"


def test_pickle_module_and_numpy(tmp_path):
    m = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    arr = np.arange(5)
    p = tmp_path / "m.pt"
    ember.save({"model": m, "arr": arr, "big": ember.zeros(1000, 100)}, p)
    # tensors are raw bytes, not Python lists: the file is about the data's size
    assert 400_000 < os.path.getsize(p) < 500_000
    out = ember.load(p, weights_only=False)
    x = ember.randn(4, 3)
    _same(out["model"](x).detach(), m(x).detach())
    np.testing.assert_array_equal(out["arr"], arr)
    assert isinstance(out["model"][0].weight, nn.Parameter)


def test_weights_only_true_loads_plain_pickle_of_tensors(tmp_path):
    # a set is not a safe-format container, so this goes through pickle; its globals are allowed
    p = tmp_path / "s.pt"
    ember.save({"s": {1, 2}, "t": ember.ones(2)}, p)
    out = ember.load(p)
    assert out["s"] == {1, 2}
    _same(out["t"], ember.ones(2))


# ------------------------------------------------------------------------------ torch interop
@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_ember_written_loads_in_torch(tmp_path, dtype):
    t = _rand(dtype, (2, 3, 4), seed=1)
    p = tmp_path / "e.safetensors"
    save_safetensors({"w": t, "v": t[0]}, p, metadata={"k": "v"})
    d = st_torch.load_file(str(p))
    tt = d["w"]
    assert str(tt.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(
        tt.float().numpy() if dtype == "bfloat16" else tt.numpy(),
        t.float().numpy() if dtype == "bfloat16" else t.numpy(),
    )
    # ember.save of a state_dict is also a safetensors file torch reads
    ember.save({"w": t}, tmp_path / "s.pt")
    assert torch.equal(st_torch.load_file(str(tmp_path / "s.pt"))["w"], tt)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_written_loads_in_ember(tmp_path, dtype):
    g = torch.Generator().manual_seed(0)
    tt = (torch.randn(3, 5, generator=g) * 10).to(getattr(torch, dtype))
    p = tmp_path / "t.safetensors"
    st_torch.save_file({"a": tt, "b": tt[1].clone()}, str(p))
    for d in (load_safetensors(p), ember.load(p), ember.load(p, mmap=True)):
        assert d["a"].dtype == getattr(ember, dtype) and d["a"].names == (None, None)
        want = tt.float().numpy() if dtype == "bfloat16" else tt.numpy()
        got = d["a"].float().numpy() if dtype == "bfloat16" else d["a"].numpy()
        np.testing.assert_array_equal(got, want)


@needs_torch
def test_torch_checkpoint_into_ember_model(tmp_path):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    p = tmp_path / "model.safetensors"
    st_torch.save_file(tm.state_dict(), str(p))
    em = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    em.load_state_dict(ember.load(p))
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(
        em(ember.tensor(x)).detach().numpy(),
        tm(torch.tensor(x)).detach().numpy(),
        rtol=1e-6,
        atol=1e-6,
    )
    # and back: an ember state_dict loads into the torch model
    save_safetensors(em.state_dict(), tmp_path / "back.safetensors")
    tm2 = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    tm2.load_state_dict(st_torch.load_file(str(tmp_path / "back.safetensors")))
    for a, b in zip(tm.parameters(), tm2.parameters()):
        assert torch.equal(a, b)


# ------------------------------------------------------------------------------ map_location
def test_map_location_forms(tmp_path):
    p = tmp_path / "m.pt"
    ember.save({"x": ember.ones(2)}, p)
    for ml in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, None):
        assert ember.load(p, map_location=ml)["x"].device == ember.device("cpu")
    seen = []

    def fn(t, loc):
        seen.append(loc)
        return t * 2

    np.testing.assert_array_equal(ember.load(p, map_location=fn)["x"].numpy(), [2.0, 2.0])
    assert seen == ["cpu"]
    assert ember.load(p, map_location=lambda t, loc: None)["x"].device.type == "cpu"
    with pytest.raises(TypeError, match="'float' object is not callable"):  # torch's: called
        ember.load(p, map_location=3.5)


@pytest.mark.skipif(
    ember.cuda.is_available() if hasattr(ember, "cuda") else False,
    reason="checks the error without a GPU",
)
def test_map_location_cuda_without_gpu(tmp_path):
    p = tmp_path / "m.pt"
    ember.save({"x": ember.ones(2)}, p)
    # torch's words, with its advice (map_location=torch.device('cpu'))
    msg = r"Attempting to deserialize object on a CUDA device but torch.cuda.is_available\(\)"
    with pytest.raises(RuntimeError, match=msg):
        ember.load(p, map_location="cuda")
    with pytest.raises(RuntimeError, match=msg):
        ember.load(p, map_location={"cpu": "cuda:0"})


# ------------------------------------------------------------------------------ atomicity
class _Boom:
    def __reduce__(self):
        raise RuntimeError("boom during serialization")


def test_exception_mid_save_keeps_old_file(tmp_path):
    p = tmp_path / "ckpt.pt"
    ember.save({"x": ember.ones(3)}, p)
    before = p.read_bytes()
    with pytest.raises(RuntimeError, match="boom"):
        ember.save({"x": ember.zeros(10**5), "bad": _Boom()}, p)
    assert p.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # no temp file left behind
    with pytest.raises(RuntimeError, match="boom"):
        ember.save([_Boom()], tmp_path / "new.pt")
    assert not (tmp_path / "new.pt").exists()


_SLOW_WRITER = """
import sys, time, ember
import ember.core.serialization as s
orig = s._write_safetensors
def slow(out, entries, meta):
    class Slow:
        def write(self, b):
            out.write(b)
            out.flush()
            print("wrote", flush=True)
            time.sleep(0.05)
    orig(Slow(), entries, meta)
s._write_safetensors = slow
ember.save({f"t{i}": ember.full((50000,), float(i)) for i in range(200)}, sys.argv[1])
"""


def test_killed_writer_leaves_old_or_complete_file(tmp_path):
    p = tmp_path / "ckpt.pt"
    ember.save({"old": ember.ones(2)}, p)
    before = p.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITER, str(p)], stdout=subprocess.PIPE, text=True
    )
    for _ in range(5):  # let it write a few chunks of the new file, then kill it
        assert proc.stdout.readline().startswith("wrote")
    proc.kill()
    proc.wait()
    proc.stdout.close()
    assert p.read_bytes() == before
    assert ember.load(p)["old"].tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------------ bad input
def _corrupt(tmp_path, data: bytes):
    p = tmp_path / "bad.pt"
    p.write_bytes(data)
    return p


def test_bad_inputs(tmp_path):
    good = tmp_path / "good.pt"
    ember.save({"x": ember.arange(100.0)}, good)
    raw = good.read_bytes()
    with pytest.raises(FileNotFoundError, match="No such file or directory: '.*missing.pt'"):
        ember.load(tmp_path / "missing.pt")
    cases = [
        # (files with no safetensors header, too short or of text, get torch's errors: wave 98)
        (raw[:-10], r"bad\.pt.*truncated"),
        (struct.pack("<Q", 20) + b"{not json!!!" + b"\0" * 50, r"bad\.pt.*corrupt header"),
        (struct.pack("<Q", 2**62) + b"{}", r"bad\.pt.*header claims"),
        (b"PK\x03\x04" + b"\0" * 40, "PytorchStreamReader failed reading zip archive"),
    ]
    big = {"x": {"dtype": "F32", "shape": [10**6, 10**6], "data_offsets": [0, 4 * 10**12]}}
    hb = json.dumps(big).encode()
    cases.append((struct.pack("<Q", len(hb)) + hb + b"\0" * 16, r"bad\.pt.*truncated"))
    mismatch = {"x": {"dtype": "F32", "shape": [10], "data_offsets": [0, 8]}}
    hb = json.dumps(mismatch).encode()
    cases.append((struct.pack("<Q", len(hb)) + hb + b"\0" * 16, r"bad\.pt.*data_offsets span"))
    wrong = {"x": {"dtype": "Q99", "shape": [1], "data_offsets": [0, 4]}}
    hb = json.dumps(wrong).encode()
    cases.append((struct.pack("<Q", len(hb)) + hb + b"\0" * 16, r"bad\.pt.*corrupt header entry"))
    for structure, msg in [
        ('{"dict": [[1]]}', "corrupt structure metadata"),
        ('{"what": 1}', "corrupt structure metadata"),
        ('{"tensor": "nope"}', "missing tensor 'nope'"),
        ("{not json", "corrupt 'ember.structure' metadata"),
    ]:
        hb = json.dumps({"__metadata__": {"ember.structure": structure}}).encode()
        cases.append((struct.pack("<Q", len(hb)) + hb, r"bad\.pt.*" + msg))
    for data, msg in cases:
        p = _corrupt(tmp_path, data)
        for mm in (False, True):
            with pytest.raises(RuntimeError, match=msg):
                ember.load(p, mmap=mm)
    # an empty file: torch's EOFError, its texts (compared with torch's in wave 98)
    p = _corrupt(tmp_path, b"")
    for wo in (True, False):
        with pytest.raises(EOFError, match="^$" if wo else "^Ran out of input$"):
            ember.load(p, weights_only=wo)
    with pytest.raises(EOFError):
        ember.load(io.BytesIO(b""))


def test_bad_pickle_checkpoint(tmp_path):
    p = tmp_path / "pk.pt"
    ember.save(argparse.Namespace(w=ember.ones(1000)), p)
    raw = p.read_bytes()
    bad = _corrupt(tmp_path, raw[:-100])
    with pytest.raises(RuntimeError, match=r"bad\.pt.*truncated"):
        ember.load(bad, weights_only=False)
    bad = _corrupt(tmp_path, raw[:8] + struct.pack("<QQ", 2**60, 1) + raw[24:])
    with pytest.raises(RuntimeError, match=r"bad\.pt.*header claims"):
        ember.load(bad, weights_only=False)


# ------------------------------------------------------------------------------ mmap
_RSS = """
import sys, ember, numpy as np
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
base = hwm()
d = ember.load(sys.argv[1], mmap=sys.argv[2] == "1")
assert d["w"].shape == (50, 1000, 1000)
assert float(d["w"][3, 7, 11]) == 3.0
print(hwm() - base)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_mmap_peak_rss_bound(tmp_path):
    p = tmp_path / "big.pt"
    w = ember.tensor(np.repeat(np.arange(50, dtype=np.float32), 10**6).reshape(50, 1000, 1000))
    ember.save({"w": w}, p)  # 200 MB
    del w
    grow = {}
    for mm in ("1", "0"):
        out = subprocess.run(
            [sys.executable, "-c", _RSS, str(p), mm], capture_output=True, text=True, check=True
        )
        grow[mm] = int(out.stdout.split()[-1])
    assert grow["1"] < 30 * 2**20, grow  # the bound stated in ember.load's docstring
    assert 190 * 2**20 < grow["0"] < 300 * 2**20, grow  # a plain read: one copy, never two


# ------------------------------------------------------------------------------ training resume
def _train(steps, ckpt=None, resume=None, save_at=None):
    """Losses of `steps` steps of Adam + StepLR + dropout (uses the RNG); saves a full checkpoint
    after step `save_at`, or starts from checkpoint `resume`."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Tanh(), nn.Linear(8, 1))
    opt = ember.optim.Adam(model.parameters(), lr=0.05)
    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    start = 0
    if resume is not None:
        ck = ember.load(resume)  # weights_only=True: the whole checkpoint is the safe format
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optim"])
        sched.load_state_dict(ck["sched"])
        ember.set_rng_state(ck["rng"])
        start = ck["epoch"] + 1
    losses = []
    for epoch in range(start, steps):
        x = ember.randn(16, 4)
        loss = ((model(x) - x.sum(1, keepdim=True)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if epoch == save_at:
            ember.save(
                {
                    "model": model.state_dict(),
                    "optim": opt.state_dict(),
                    "sched": sched.state_dict(),
                    "rng": ember.get_rng_state(),
                    "epoch": epoch,
                },
                ckpt,
            )
    return losses


def test_training_resume_reproduces_losses(tmp_path):
    ck = tmp_path / "resume.pt"
    full = _train(8, ckpt=ck, save_at=3)
    assert _is_safetensors(ck)
    resumed = _train(8, resume=ck)
    assert len(resumed) == 4
    assert resumed == full[4:]  # exactly, on cpu


def test_save_keeps_a_symlink_and_writes_its_target(tmp_path):
    target, link = tmp_path / "target.pt", tmp_path / "link.pt"
    ember.save(ember.ones(2), target)
    link.symlink_to(target.name)
    ember.save(ember.zeros(3), link)
    assert link.is_symlink()
    assert ember.load(target).tolist() == [0.0, 0.0, 0.0]


def test_save_file_mode_like_open(tmp_path):
    p = tmp_path / "m.pt"
    ember.save(ember.ones(2), p)
    mask = os.umask(0)
    os.umask(mask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600
    p.chmod(0o640)
    ember.save(ember.ones(2), p)
    assert p.stat().st_mode & 0o777 == 0o640  # an overwrite keeps the file's mode


def test_save_into_a_fifo_writes_through_it(tmp_path):
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    ember.save(ember.arange(3.0), fifo)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO, not replaced by a file
    assert ember.load(io.BytesIO(got[0])).tolist() == [0.0, 1.0, 2.0]


def test_weights_only_loads_plain_config_values():
    obj = {
        "dtype": ember.float64,
        "device": ember.device("cpu"),
        "size": ember.Size([2, 3]),
        "layout": ember.strided,
        "format": ember.channels_last,
        "counts": collections.Counter("aab"),
        "w": ember.ones(2),
    }
    b = io.BytesIO()
    ember.save(obj, b)
    b.seek(0)
    back = ember.load(b)  # weights_only=True by default
    assert back["dtype"] is ember.float64 and back["layout"] is ember.strided
    assert back["format"] is ember.channels_last and back["size"] == ember.Size([2, 3])
    assert back["device"] == ember.device("cpu") and back["counts"] == collections.Counter("aab")
    ember.serialization.add_safe_globals([ember.float64, ember.strided])  # instances: no-op
