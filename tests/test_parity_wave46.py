"""Parity regressions found by the forty-sixth wave, a sweep of the platform modules scripts and
libraries probe at start-up, under ``ember run`` (torch is the oracle, its CPU build on a machine
with no GPU, MPS or XPU): ``torch.cuda.nvtx`` (profiling ranges: torch's CPU build raises "NVTX
functions not installed"; ember now does the same without a GPU and calls cupy's NVTX with one),
``torch.mps`` and ``torch.xpu`` (availability False, 0 devices, torch's no-op seeding and memory
counters, and torch's RuntimeError/AssertionError for what needs the device), ``torch.overrides``
(the ``__torch_function__`` helpers libraries call from their own functions: has_torch_function*,
handle_torch_function's dispatch order and TypeError, is_tensor_like, resolve_name) and
``torch.utils.cpp_extension`` (load/load_inline/CppExtension refuse clearly: ember has no C++
ABI). All five were missing, so ``import torch.mps`` and friends failed under ``ember run``; the
classic device-selection snippet now runs and prints what it prints under torch."""

from __future__ import annotations

import subprocess
import sys
import warnings

import ember
import ember.cuda.nvtx as envtx
import ember.mps as emps
import ember.overrides as eov
import ember.utils.cpp_extension as ecpp
import ember.xpu as expu
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.cuda.nvtx as tnvtx
import torch.mps as tmps
import torch.overrides as tov
import torch.xpu as txpu


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return (type(e).__name__, str(e))


# ---------------------------------------------------------------------------------- torch.mps
@pytest.mark.parametrize(
    "name,args",
    [
        ("is_available", ()),
        ("device_count", ()),
        ("synchronize", ()),
        ("empty_cache", ()),
        ("current_allocated_memory", ()),
        ("driver_allocated_memory", ()),
        ("recommended_max_memory", ()),
        ("manual_seed", (0,)),
        ("seed", ()),
        ("get_rng_state", ()),
        ("set_per_process_memory_fraction", (0.5,)),
        ("set_per_process_memory_fraction", (1,)),
    ],
)
def test_mps_answers_like_torch_without_mps(name, args):
    assert _outcome(getattr(emps, name), *args) == _outcome(getattr(tmps, name), *args)


def test_mps_set_rng_state_like_torch():
    got = _outcome(emps.set_rng_state, ember.zeros(3, dtype=ember.uint8))
    want = _outcome(tmps.set_rng_state, torch.zeros(3, dtype=torch.uint8))
    assert got == want


# ---------------------------------------------------------------------------------- torch.xpu
@pytest.mark.parametrize(
    "name,args",
    [
        ("is_available", ()),
        ("device_count", ()),
        ("is_initialized", ()),
        ("is_bf16_supported", ()),
        ("get_arch_list", ()),
        ("empty_cache", ()),
        ("memory_allocated", ()),
        ("memory_reserved", ()),
        ("max_memory_allocated", ()),
        ("max_memory_reserved", ()),
        ("manual_seed", (0,)),
        ("manual_seed_all", (0,)),
        ("seed", ()),
        ("seed_all", ()),
        ("init", ()),
        ("synchronize", ()),
        ("current_device", ()),
        ("set_device", (0,)),
        ("get_device_name", ()),
        ("get_device_properties", ()),
        ("get_device_capability", ()),
        ("mem_get_info", ()),
        ("initial_seed", ()),
        ("get_rng_state", ()),
    ],
)
def test_xpu_answers_like_torch_without_xpu(name, args):
    assert _outcome(getattr(expu, name), *args) == _outcome(getattr(txpu, name), *args)


def test_xpu_set_rng_state_is_deferred_like_torch():
    got = _outcome(expu.set_rng_state, ember.zeros(3, dtype=ember.uint8))
    assert got == _outcome(txpu.set_rng_state, torch.zeros(3, dtype=torch.uint8))


# -------------------------------------------------------------------------------- torch.cuda.nvtx
def _nvtx_calls(nvtx):
    out = [_outcome(nvtx.range_push, "step"), _outcome(nvtx.range_pop), _outcome(nvtx.mark, "m")]

    def ranged():
        with nvtx.range("epoch {}", 3):
            return "inside"

    return [*out, _outcome(ranged)]


def test_nvtx_like_torch():
    got = _nvtx_calls(envtx)
    if ember.cuda.is_available():
        # with a GPU the ranges reach cupy's NVTX: depths as torch's CUDA build reports them
        assert got == [("ok", 0), ("ok", 0), ("ok", None), ("ok", "inside")]
    else:
        assert got == _nvtx_calls(tnvtx)
        assert got[0] == ("RuntimeError", envtx._NOT_INSTALLED)


# -------------------------------------------------------------------------------- torch.overrides
def _kinds(m):
    class Plain:
        pass

    class Lib:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("Lib", func.__name__, [t.__name__ for t in types], len(args), kwargs)

    class Sub(Lib):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("Sub", [t.__name__ for t in types])

    class Refuses:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    class Method:  # a plain method: deprecated in torch, still dispatched
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return "method"

    return Plain, Lib, Sub, Refuses, Method


def test_has_torch_function_like_torch():
    for m, ov in ((ember, eov), (torch, tov)):
        Plain, Lib, *_ = _kinds(m)
        t = m.ones(2)
        assert ov.has_torch_function((t, Plain(), 1)) is False
        assert ov.has_torch_function([t, Lib()]) is True
        assert ov.has_torch_function_unary(t) is False
        assert ov.has_torch_function_unary(Lib()) is True
        assert ov.has_torch_function_variadic(t, 1, None) is False
        assert ov.has_torch_function_variadic(1, Lib()) is True


def _dispatch(m, ov):
    _plain, Lib, Sub, Refuses, Method = _kinds(m)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = [
            ov.handle_torch_function(m.add, (Lib(),), Lib(), 1, alpha=2),
            # the subclass is asked first even when it comes second; both types are passed
            ov.handle_torch_function(m.add, (Lib(), Sub()), Lib(), Sub()),
            ov.handle_torch_function(m.add, (Refuses(), Lib()), Refuses(), Lib()),
            ov.handle_torch_function(m.add, (Method(),), Method()),
        ]
    res.append(_outcome(lambda: ov.handle_torch_function(m.add, (Refuses(),), Refuses())))
    res.append([(x.category.__name__, str(x.message)) for x in w])
    return res


def test_handle_torch_function_like_torch():
    got, want = _dispatch(ember, eov), _dispatch(torch, tov)
    # the TypeError lists the types, which are distinct classes per run: compare the prefix
    assert got[:4] == want[:4] and got[5] == want[5]
    assert got[4][0] == want[4][0] == "TypeError"
    prefix = "no implementation found for 'torch.add' on types that implement __torch_function__"
    assert got[4][1].startswith(prefix) and want[4][1].startswith(prefix)
    assert got[4][1].endswith("Refuses'>]")


def test_is_tensor_like_and_resolve_name_like_torch():
    for m, ov in ((ember, eov), (torch, tov)):
        Plain, Lib, *_ = _kinds(m)
        checks = [m.ones(1), m.nn.Parameter(m.ones(1)), m.Tensor, Lib(), Lib, Plain(), 1, [1]]
        assert [ov.is_tensor_like(x) for x in checks] == [
            True, True, True, True, True, False, False, False,
        ]  # fmt: skip
        names = [m.add, m.nn.functional.relu, m.linalg.norm, m.fft.fft, lambda x: x]
        assert [ov.resolve_name(f) for f in names] == [
            "torch.add", "torch.nn.functional.relu", "torch.linalg.norm", "torch.fft.fft", None,
        ]  # fmt: skip


# ------------------------------------------------------------------------ torch.utils.cpp_extension
@pytest.mark.parametrize(
    "call",
    [
        lambda: ecpp.load("ext", sources=["ext.cpp"]),
        lambda: ecpp.load_inline("ext", cpp_sources="int f() { return 1; }", functions=["f"]),
        lambda: ecpp.CppExtension("ext", ["ext.cpp"]),
        lambda: ecpp.CUDAExtension("ext", ["ext.cu"]),
        lambda: ecpp.BuildExtension.with_options(use_ninja=False),
        lambda: ecpp.BuildExtension(),
    ],
)
def test_cpp_extension_refuses_clearly(call):
    with pytest.raises(NotImplementedError, match="is not implemented by ember .ember has no C"):
        call()
    assert ecpp.CUDA_HOME is None and ecpp.ROCM_HOME is None


# ------------------------------------------------------------------- the start-up probes, as a script
SCRIPT = """\
import torch
import torch.cuda.nvtx as nvtx
from torch.overrides import has_torch_function_unary, is_tensor_like

if torch.cuda.is_available():
    device = torch.device("cuda")
elif torch.backends.mps.is_available():
    device = torch.device("mps")
elif hasattr(torch, "xpu") and torch.xpu.is_available():
    device = torch.device("xpu")
else:
    device = torch.device("cpu")
print("device:", device)
print("mps:", torch.mps.is_available(), torch.mps.device_count(), torch.mps.manual_seed(0))
print("xpu:", torch.xpu.is_available(), torch.xpu.device_count(), torch.xpu.memory_allocated())
if not torch.cuda.is_available():
    try:
        nvtx.range_push("forward")
    except RuntimeError as e:
        print("nvtx:", e)
x = torch.ones(2, device=device)
print("overrides:", has_torch_function_unary(x), is_tensor_like(x))
try:
    torch.mps.synchronize()
except RuntimeError as e:
    print("mps sync:", e)
try:
    torch.xpu.synchronize()
except AssertionError as e:
    print("xpu sync:", e)
"""


def test_device_selection_snippet_under_ember_run(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    got = subprocess.run(
        [sys.executable, "-m", "ember", "run", str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr
    want = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=False, timeout=120
    )
    assert want.returncode == 0, want.stderr
    if ember.cuda.is_available() == torch.cuda.is_available():
        assert got.stdout == want.stdout
    assert "device: " in got.stdout and "mps: False 0 None" in got.stdout


# ------------------------------------------- F's private attention helpers copied MHA code calls
def _canon(m, mask, **kw):
    F = m.nn.functional
    args = {"mask_name": "key_padding_mask", "other_type": None, "other_name": "attn_mask"}
    args.update(kw)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = _outcome(lambda: F._canonical_mask(mask=mask, **args))
    if out[0] == "ok" and out[1] is not None:
        out = ("ok", out[1] is mask, str(out[1].dtype).split(".")[1], out[1].tolist())
    return out, [(x.category.__name__, str(x.message)) for x in w]


@pytest.mark.parametrize(
    "mask,kw",
    [
        ([[True, False], [False, True]], {"other_type": "bool"}),
        ([[True, False], [False, True]], {"other_type": "float32"}),
        ([[True, False], [False, True]], {"other_type": "float32", "check_other": False}),
        ([[0.0, -1.5]], {"other_type": "bool"}),
        ([[0.0, -1.5]], {"dtype": "float64", "other_type": "float64"}),
        ([[1, 0]], {"other_type": "bool"}),
        (None, {}),
    ],
)
@pytest.mark.parametrize("target", ["float32", "float64"])
def test_canonical_mask_like_torch(mask, kw, target):
    res = []
    for m in (ember, torch):
        k = dict(kw)
        dt = k.pop("dtype", None)
        t = None if mask is None else m.tensor(mask, dtype=dt and getattr(m, dt))
        if isinstance(k.get("other_type"), str):
            k["other_type"] = getattr(m, k["other_type"])
        res.append(_canon(m, t, target_type=getattr(m, target), **k))
    assert res[0] == res[1]


def test_none_or_dtype_like_torch():
    F, tF = ember.nn.functional, torch.nn.functional
    assert F._none_or_dtype(None) is None
    assert F._none_or_dtype(ember.ones(1, dtype=ember.float64)) is ember.float64
    assert _outcome(F._none_or_dtype, 1) == _outcome(tF._none_or_dtype, 1)


@pytest.mark.parametrize("share", ["self", "kv", "none"])
@pytest.mark.parametrize("bias", [True, False])
def test_in_projection_packed_like_torch(share, bias):
    rng = np.random.default_rng(46)
    E = 4
    arrays = [
        rng.standard_normal(s) for s in ((3, 2, E), (5, 2, E), (5, 2, E), (3 * E, E), (3 * E,))
    ]
    grads = [rng.standard_normal(s) for s in ((3, 2, E), (5, 2, E), (5, 2, E))]
    res = []
    for m in (ember, torch):
        q, k, v, w, b = (m.tensor(a, requires_grad=True) for a in arrays)
        qkv = {"self": (q, q, q), "kv": (q, k, k), "none": (q, k, v)}[share]
        outs = m.nn.functional._in_projection_packed(*qkv, w, b if bias else None)
        if share == "self":
            grads_used = [m.tensor(g[:, :, :]) for g in (grads[0],) * 3]
        else:
            n = 3 if share == "none" else 2
            grads_used = [m.tensor(g) for g in grads[:n]] + ([m.tensor(grads[1])] if n == 2 else [])
        m.autograd.backward(list(outs), grads_used)
        leaves = [q, w] + ([k] if share != "self" else []) + ([v] if share == "none" else [])
        res.append(
            (
                [o.detach().numpy() for o in outs],
                [x.grad.numpy() for x in leaves],
                None if not bias else b.grad.numpy(),
            )
        )
    (eo, eg, eb), (to, tg, tb) = res
    for a, c in zip(eo + eg, to + tg, strict=True):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)
    if bias:
        np.testing.assert_allclose(eb, tb, rtol=1e-12, atol=1e-12)


def test_in_projection_packed_gradcheck():
    rng = np.random.default_rng(7)
    q, k, w, b = (
        ember.tensor(rng.standard_normal(s), requires_grad=True)
        for s in ((2, 3), (4, 3), (9, 3), (9,))
    )
    F = ember.nn.functional
    assert ember.autograd.gradcheck(
        lambda q, w, b: F._in_projection_packed(q, q, q, w, b), (q, w, b)
    )
    assert ember.autograd.gradcheck(lambda q, k, w: F._in_projection_packed(q, k, k, w), (q, k, w))
