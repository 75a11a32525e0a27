"""ember.load of checkpoints written by real torch.save (torch's zip format): values, dtypes,
views sharing storage, Parameters, state_dicts, map_location, and the weights_only guard."""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile

import ember
import numpy as np
import pytest
from ember import nn

torch = pytest.importorskip("torch")


def _save(obj, tmp_path, name="ckpt.pt"):
    p = tmp_path / name
    torch.save(obj, p)
    return p


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _same(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    if t.dtype == torch.bfloat16:
        np.testing.assert_array_equal(_np(e.float()), t.float().numpy())
    else:
        np.testing.assert_array_equal(_np(e), t.numpy())


def test_every_dtype(tmp_path):
    src = {
        "f32": torch.randn(3, 4),
        "f64": torch.randn(5, dtype=torch.float64),
        "f16": torch.randn(2, 3).half(),
        "bf16": torch.randn(4, 2).bfloat16(),
        "i64": torch.arange(-5, 5),
        "i32": torch.arange(6, dtype=torch.int32).reshape(2, 3),
        "i16": torch.arange(4, dtype=torch.int16),
        "i8": torch.tensor([-128, 0, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 200, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "c64": torch.randn(3, dtype=torch.complex64),
        "c128": torch.randn(2, dtype=torch.complex128),
        "u16": torch.tensor([1, 65535], dtype=torch.uint16),  # _rebuild_tensor_v3
        "scalar": torch.tensor(3.5),
        "empty": torch.zeros(0, 3),
    }
    out = ember.load(_save(src, tmp_path))
    assert set(out) == set(src)
    for k, t in src.items():
        _same(out[k], t)
        assert isinstance(out[k], ember.Tensor) and not out[k].requires_grad


def test_views_share_storage_and_strides(tmp_path):
    base = torch.arange(24.0)
    src = {
        "base": base,
        "mid": base[4:16].view(3, 4),
        "t": base[4:16].view(3, 4).t(),  # non-contiguous
        "step": base[::3],
        "tup": (base[1:3], [base[5]]),
    }
    out = ember.load(_save(src, tmp_path))
    for k in ("base", "mid", "t", "step"):
        _same(out[k], src[k])
        isz = out[k].element_size()
        assert tuple(s // isz for s in out[k]._data.strides) == src[k].stride()
    assert not out["t"].is_contiguous()
    for k in ("mid", "t", "step"):
        assert np.shares_memory(out[k]._data, out["base"]._data)
    out["base"].mul_(2)  # a write through one tensor is seen by its views
    np.testing.assert_array_equal(_np(out["mid"]), (base[4:16].view(3, 4) * 2).numpy())
    assert isinstance(out["tup"], tuple) and isinstance(out["tup"][1], list)
    assert float(out["tup"][1][0]) == 10.0


def test_parameter_and_requires_grad(tmp_path):
    src = {
        "p": torch.nn.Parameter(torch.randn(2, 3)),
        "frozen": torch.nn.Parameter(torch.randn(2), requires_grad=False),
        "rg": torch.ones(3, requires_grad=True),
        "bf": torch.nn.Parameter(torch.randn(2).bfloat16()),
    }
    out = ember.load(_save(src, tmp_path))
    assert isinstance(out["p"], nn.Parameter) and out["p"].requires_grad
    assert isinstance(out["frozen"], nn.Parameter) and not out["frozen"].requires_grad
    assert type(out["rg"]) is ember.Tensor and out["rg"].requires_grad
    assert isinstance(out["bf"], nn.Parameter) and out["bf"].dtype == ember.bfloat16
    for k, t in src.items():
        _same(out[k], t.detach())
    single = ember.load(_save(torch.nn.Parameter(torch.ones(2)), tmp_path, "one.pt"))
    assert isinstance(single, nn.Parameter)


def _models():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 3))
    em = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
    return tm, em


def test_model_state_dict_into_ember_model(tmp_path):
    tm, em = _models()
    tm.train()
    tm(torch.randn(16, 4))  # move the BatchNorm running stats
    tm.eval()
    sd = ember.load(_save(tm.state_dict(), tmp_path))
    assert isinstance(sd, collections.OrderedDict)
    assert list(sd) == list(tm.state_dict())
    assert sd["1.num_batches_tracked"].dtype == ember.int64
    assert hasattr(sd, "_metadata")
    em.load_state_dict(sd)
    em.eval()
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    want = tm(torch.from_numpy(x)).detach().numpy()
    got = _np(em(ember.tensor(x)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_optimizer_state_dict(tmp_path):
    tm, em = _models()
    opt = torch.optim.Adam(tm.parameters(), lr=0.01)
    tm(torch.randn(8, 4)).sum().backward()
    opt.step()
    src = opt.state_dict()
    out = ember.load(_save(src, tmp_path))
    assert out["param_groups"][0]["lr"] == 0.01
    assert out["param_groups"][0]["betas"] == src["param_groups"][0]["betas"]
    assert out["param_groups"][0]["params"] == src["param_groups"][0]["params"]
    assert set(out["state"]) == set(src["state"])
    for i, st in src["state"].items():
        for k, v in st.items():
            _same(out["state"][i][k], v)
    eopt = ember.optim.Adam(em.parameters(), lr=0.01)
    eopt.load_state_dict(out)  # the ember optimizer accepts it


def test_map_location_and_file_objects(tmp_path):
    p = _save({"x": torch.arange(4.0)}, tmp_path)
    seen = []

    def loc(t, where):
        seen.append(where)  # None: keep the default placement

    for ml in (None, "cpu", ember.device("cpu"), {"cpu": "cpu"}, loc):
        out = ember.load(p, map_location=ml)
        assert out["x"].device.type == "cpu"
        np.testing.assert_array_equal(_np(out["x"]), [0, 1, 2, 3])
    assert seen == ["cpu"]
    with open(p, "rb") as fh:
        np.testing.assert_array_equal(_np(ember.load(fh)["x"]), [0, 1, 2, 3])
    bio = io.BytesIO(p.read_bytes())
    np.testing.assert_array_equal(_np(ember.load(bio)["x"]), [0, 1, 2, 3])
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
        ember.load(bio, mmap=True)  # as torch: only a path can be mapped


def test_plain_values_devices_dtypes(tmp_path):
    src = {
        "dev": torch.device("cpu"),
        "dt": torch.float16,
        "size": torch.Size([2, 3]),
        "n": 3,
        "s": "hi",
        "f": 1.5,
        "none": None,
        "set": {1, 2},
    }
    out = ember.load(_save(src, tmp_path))
    assert out["dev"] == ember.device("cpu")
    assert out["dt"] is ember.float16
    assert tuple(out["size"]) == (2, 3)
    assert {k: out[k] for k in ("n", "s", "f", "none", "set")} == {
        "n": 3,
        "s": "hi",
        "f": 1.5,
        "none": None,
        "set": {1, 2},
    }


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch PWNED_BY_CHECKPOINT",))


def _with_pickle(tmp_path, payload: bytes, name="evil.pt", src=None):
    good = _save({"x": torch.ones(2)} if src is None else src, tmp_path, "good_" + name)
    p = tmp_path / name
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = payload if info.filename.endswith("data.pkl") else zin.read(info)
            zout.writestr(info.filename, data)
    return p


def test_malicious_pickle_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = _with_pickle(tmp_path, pickle.dumps({"x": _Evil()}, protocol=2))
    with pytest.raises(
        pickle.UnpicklingError, match=r"(?s)Weights only load failed.*GLOBAL posix.system"
    ):
        ember.load(p)
    with pytest.raises(pickle.UnpicklingError, match="whose module posix is blocked"):
        ember.load(p, weights_only=None)
    assert not (tmp_path / "PWNED_BY_CHECKPOINT").exists()
    # torch globals ember has no counterpart for are refused, even with weights_only=False
    p2 = _with_pickle(tmp_path, b"\x80\x02ctorch._C\n_get_tracing_state\nq\x00.", "evil2.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only"):
        ember.load(p2)
    with pytest.raises(pickle.UnpicklingError, match="has no counterpart"):
        ember.load(p2, weights_only=False)


def test_weights_only_false_allows_plain_objects(tmp_path):
    src = {"x": torch.arange(3.0), "od": collections.Counter("aab")}
    p = _save(src, tmp_path)
    out = ember.load(p, weights_only=False)
    np.testing.assert_array_equal(_np(out["x"]), [0, 1, 2])
    assert out["od"] == collections.Counter("aab")


def test_out_of_bounds_view_refused(tmp_path):
    src = torch.arange(4.0)
    good = _save(src, tmp_path)
    with zipfile.ZipFile(good) as z:
        blob = z.read("ckpt/data.pkl")
    # claim 1000 elements over a 4-element storage
    bad = blob.replace(b"K\x04\x85", b"M\xe8\x03\x85", 1)
    assert bad != blob
    p = _with_pickle(tmp_path, bad, "oob.pt", src)
    with pytest.raises(RuntimeError, match="reaches past its storage"):
        ember.load(p)


def test_truncated_and_corrupt(tmp_path):
    p = _save({"x": torch.randn(100)}, tmp_path)
    raw = p.read_bytes()
    for i, data in enumerate((raw[: len(raw) // 2], raw[:-30], b"PK\x03\x04" + b"\0" * 40)):
        q = tmp_path / f"bad{i}.pt"
        q.write_bytes(data)
        with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading zip archive"):
            ember.load(q)
    q = tmp_path / "nopkl.pt"
    with zipfile.ZipFile(q, "w") as z:
        z.writestr("archive/version", "3\n")
    with pytest.raises(RuntimeError, match="failed locating file data.pkl"):
        ember.load(q)
