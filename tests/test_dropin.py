"""Drop-in mode (`ember run script.py`) and the platform modules PyTorch scripts touch: cuda, amp,
backends, distributed, multiprocessing, onnx, accelerator, compile, utils.tensorboard.

The PyTorch-style scripts in tests/dropin_scripts/ run unchanged under real torch
(`python script.py`) and under ember (`python -m ember run script.py`); each prints `loss: <value>`
lines and the losses must fall under both. The torch side of a run is cached in pytest's cache,
keyed by the script's text and torch's version (torch's output for an unchanged script does not
change), so that only the first run pays for torch's start-up.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import ember
import numpy as np
import pytest
from ember import dropin

torch = pytest.importorskip("torch")

SCRIPTS = Path(__file__).parent / "dropin_scripts"
ROOT = Path(ember.__file__).parent
LOSS = re.compile(r"loss: (\S+)")
_CONCURRENT = 6  # processes at once: a torch process holds ~0.4 GB, and there are 2 cores
TRAINING = [
    "mlp_dataloader.py",
    "char_gpt.py",
    "lstm_lm.py",
    "small_cnn.py",
    "custom_function.py",
    "tensor_idioms.py",
    "platform_apis.py",
    "ddp_workers.py",
    "train_infra.py",
    "func_idioms.py",
    "seq2seq_attention.py",
    "graph_nets.py",
    "model_utils.py",
    "vision_resnet.py",
    "rl_optim_zoo.py",
]


def _env() -> dict:
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"  # the machine is shared: one BLAS thread per process
    env["PYTHONWARNINGS"] = "ignore"
    env.pop("PYTHONPATH", None)
    return env


def _popen(cmd, cwd) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _run_ok(cmd, cwd) -> subprocess.CompletedProcess:
    """Run ``cmd`` to its end (output captured as text), asserting that it succeeded."""
    r = subprocess.run(
        cmd, cwd=cwd, env=_env(), capture_output=True, text=True, check=False, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return r


def _ember_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "ember", *args]


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """Every training script under ember and (unless cached) under torch, at most
    ``_CONCURRENT`` processes at a time (each torch process holds ~0.4 GB)."""
    cache = getattr(request.config, "cache", None)  # None under `-p no:cacheprovider`
    tb_dir = tmp_path_factory.mktemp("tb")
    jobs, results = [], {}
    for name in TRAINING:
        script = SCRIPTS / name
        args = [str(tb_dir / "run")] if name == "platform_apis.py" else []
        cwd = tmp_path_factory.mktemp(name.replace(".py", ""))
        jobs.append((("ember", name), _ember_cmd("run", str(script), *args), cwd))
        digest = hashlib.sha256(script.read_bytes()).hexdigest()[:16]
        key = f"ember_dropin/torch/{name}"
        hit = cache.get(key, None) if cache is not None else None
        if hit and hit.get("digest") == digest and hit.get("torch") == torch.__version__:
            results[("torch", name)] = (hit["rc"], hit["out"], hit["err"])
        else:
            jobs.append((("torch", name), [sys.executable, str(script), *args], cwd))
    running: list = []
    while jobs or running:
        while jobs and len(running) < _CONCURRENT:
            key, cmd, cwd = jobs.pop(0)
            running.append((key, _popen(cmd, cwd)))
        (kind, name), p = running.pop(0)
        out, err = p.communicate(timeout=600)
        results[(kind, name)] = (p.returncode, out, err)
        if kind == "torch" and p.returncode == 0 and cache is not None:
            digest = hashlib.sha256((SCRIPTS / name).read_bytes()).hexdigest()[:16]
            cache.set(
                f"ember_dropin/torch/{name}",
                {"digest": digest, "torch": torch.__version__, "rc": 0, "out": out, "err": err},
            )
    results["tb_dir"] = tb_dir / "run"
    return results


def _losses(out: str) -> list[float]:
    return [float(v) for v in LOSS.findall(out)]


def _check_falls(kind: str, rc: int, out: str, err: str) -> list[float]:
    assert rc == 0, f"{kind} run failed (exit {rc}):\n{out}\n{err[-3000:]}"
    losses = _losses(out)
    assert len(losses) >= 3, f"{kind}: no loss lines in\n{out}"
    assert all(math.isfinite(v) for v in losses), losses
    assert losses[-1] < 0.7 * losses[0], f"{kind}: loss did not fall: {losses}"
    return losses


@pytest.mark.parametrize("name", TRAINING)
def test_script_trains_under_torch_and_ember(runs, name):
    t_rc, t_out, t_err = runs[("torch", name)]
    e_rc, e_out, e_err = runs[("ember", name)]
    _check_falls("torch", t_rc, t_out, t_err)
    _check_falls("ember", e_rc, e_out, e_err)
    # the scripts' own checks print the same verdicts under both
    for marker in (
        "same outputs True",
        "matches autograd True",
        "gradcheck True",
        "train accuracy 1.000",
        "sample:",
        "scaler enabled False state {}",
        "initialized after destroy False",
        "keys ['module.weight', 'module.bias']",
    ):
        if marker.startswith("scaler") and ember.cuda.is_available():
            continue  # torch (cpu build) turns amp off; ember on a GPU turns it on
        if marker in t_out:
            assert marker in e_out, f"{marker!r} missing from ember's output:\n{e_out}"


def test_platform_script_writes_scalars_csv(runs):
    rc, out, err = runs[("ember", "platform_apis.py")]
    assert rc == 0, err
    rows = (runs["tb_dir"] / "scalars.csv").read_text().splitlines()
    assert rows[0] == "step,tag,value,wall_time"
    loss_rows = [r.split(",") for r in rows[1:] if ",train/loss," in r]
    assert [int(r[0]) for r in loss_rows] == list(range(30))
    assert float(loss_rows[-1][2]) < float(loss_rows[0][2])
    assert any(r.startswith("30,stats/scale,1.0,") for r in rows)
    assert "rank 0 world 1" in out and f"cuda_available {ember.cuda.is_available()}" in out


def test_spawn_workers_under_ember(tmp_path):
    # children started with 'spawn' re-import the script: `import torch` must find ember there too
    r = _run_ok(_ember_cmd("run", str(SCRIPTS / "spawn_workers.py")), tmp_path)
    assert "results [(0, False, 6.0), (1, False, 12.0)]" in r.stdout
    assert "child error: True" in r.stdout


# ----------------------------------------------------------------------------- the alias finder
@pytest.fixture
def alias(ember_alias):
    """ember under an alias name (the pytest process has real torch imported already)."""
    return ember_alias("tortch")


def test_alias_identity_and_submodules(alias):
    import tortch
    import tortch.nn.functional as F
    import tortch.optim.lr_scheduler as sched
    from tortch import nn
    from tortch.autograd import Function
    from tortch.nn.utils import rnn
    from tortch.utils import data
    from tortch.utils.data import dataloader
    from tortch.utils.data.distributed import DistributedSampler

    assert tortch is ember
    assert nn is ember.nn and F is ember.nn.functional
    assert rnn is sys.modules["ember.nn.utils.rnn"]
    assert sched is ember.optim.lr_scheduler
    assert data is ember.data and dataloader is ember.data.dataloader
    assert Function is ember.autograd.Function
    assert issubclass(DistributedSampler, ember.data.DistributedSampler)
    ember.distributed.init_process_group("gloo", world_size=1, rank=0)
    try:  # replicas and rank come from the process group, as in torch
        s = DistributedSampler(list(range(10)), shuffle=False)
    finally:
        ember.distributed.destroy_process_group()
    assert (s.num_replicas, s.rank, list(s)) == (1, 0, list(range(10)))
    assert pickle.loads(pickle.dumps(s)).num_replicas == 1
    import tortch.autograd.anomaly_mode as am
    import tortch.cuda.amp as camp
    import tortch.multiprocessing as mp
    import tortch.serialization as ser
    import tortch.utils.tensorboard as tb
    from tortch import linalg
    from tortch.backends import cudnn

    assert am is sys.modules["ember.autograd.anomaly"]
    assert cudnn is ember.backends.cudnn and camp is ember.cuda.amp
    assert linalg is ember.linalg and ser is ember.serialization
    assert mp is ember.multiprocessing and tb is ember.utils.tensorboard
    # the ember modules keep their own identity for pickling and relative imports
    assert ember.nn.__name__ == "ember.nn" and ember.nn.__spec__.name == "ember.nn"


def test_alias_unsupported_module_and_attribute(alias):
    import tortch

    assert not hasattr(tortch, "definitely_not_an_api")
    with pytest.raises(AttributeError, match=r"^torch\.definitely_not_an_api is not implemented"):
        tortch.definitely_not_an_api  # noqa: B018
    with pytest.raises(NotImplementedError, match=r"torch\.nn\.Nope is not implemented by ember"):
        tortch.nn.Nope  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match=r"^torch\.fx is not implemented by ember"):
        import tortch.fx
    try:
        import tortch.nn.no_such_module
    except ImportError as e:  # `try: import x except ImportError` keeps working
        assert e.name == "torch.nn.no_such_module"
        assert isinstance(e, dropin.NotImplementedByEmber)
    else:
        pytest.fail("no ImportError")
    # an unsupported attribute stays an AttributeError for getattr with a default
    assert getattr(tortch.cuda, "no_such_thing", 7) == 7


def test_uninstall_restores_modules():
    dropin.install("tortch")
    dropin.uninstall("tortch")
    assert "tortch" not in sys.modules
    assert "__getattr__" not in ember.__dict__ and "__ember_torch_name__" not in ember.nn.__dict__
    with pytest.raises(AttributeError, match="has no attribute"):
        ember.definitely_not_an_api  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        import tortch  # noqa: F401


def test_ember_utils_data_is_ember_data():
    import ember.utils.data
    import ember.utils.data.sampler

    assert ember.utils.data is ember.data
    assert ember.utils.data.sampler is sys.modules["ember.data.sampler"]
    from ember.utils.data import DataLoader

    assert DataLoader is ember.data.DataLoader


# ----------------------------------------------------------------------------- `ember run`
# One subprocess (a fresh interpreter, where `torch` can be aliased) runs every CLI scenario
# through ember.__main__.main and reports its exit status, stdout and stderr; a few more tests
# check the real process exit status and the installed console command.
DRIVER = r"""
import contextlib, io, json, sys
from ember.__main__ import main

results = {}
for name, argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    saved = list(sys.path), list(sys.argv)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, (int, type(None))):
                print(e.code, file=sys.stderr)
    sys.path[:], sys.argv[:] = saved
    results[name] = [rc, out.getvalue(), err.getvalue()]
print(json.dumps(results))
"""

SCRIPTS_SRC = {
    "main.py": (
        "import sys, os, torch, torch.nn as nn, ember\n"
        "import helper_mod\n"
        "print(__name__, sys.argv, os.path.basename(__file__), helper_mod.VALUE)\n"
        "print(torch is ember, nn is ember.nn, sys.path[0] == os.path.dirname(__file__))\n"
        "print(torch.cuda.is_available(), torch.distributed.is_initialized())\n"
        "try:\n    import torch.nn.no_such_mod\nexcept ImportError as e:\n    print('IE', e)\n"
        "print(hasattr(torch, 'no_such_api'), hasattr(torch.nn, 'no_such_api'))\n"
        "try:\n    torch.nn.functional.no_such_fn\nexcept AttributeError as e:\n"
        "    print('AE', e)\n"
    ),
    "helper_mod.py": "VALUE = 42\n",
    "exit3.py": "import sys\nsys.exit(3)\n",
    "exit0.py": "raise SystemExit(0)\n",
    "bye.py": "raise SystemExit('bye')\n",
    "attr.py": "import torch\n\ndef f(x):\n    return x.frobnicate()\n\nf(torch.ones(2))\n",
    "imp.py": "from torch.nn import NoSuchLayer\n",
    "syntax.py": "x = (\n",
    "mymod.py": (
        "import sys, torch, ember\n"
        "print(__name__, sys.argv[1:], torch.zeros(3).shape)\n"
        "print(str(torch.zeros(1, dtype=torch.float64).dtype) == 'torch.float64', torch.strided)\n"
        "print(repr(torch.ones(2).max(0)).split('(')[0])\n"
    ),
}
SCENARIOS = [
    ("main", ["run", "main.py", "--lr", "0.1"]),
    ("exit3", ["run", "exit3.py"]),
    ("exit0", ["run", "exit0.py"]),
    ("bye", ["run", "bye.py"]),
    ("attr", ["run", "attr.py"]),
    ("imp", ["run", "imp.py"]),
    ("syntax", ["run", "syntax.py"]),
    ("missing", ["run", "missing.py"]),
    ("module", ["run", "-m", "mymod", "a"]),
    ("no_module", ["run", "-m", "no_such_mod_xyz"]),
    ("usage", []),
    ("run_usage", ["run"]),
    ("unknown", ["walk"]),
    ("version", ["--version"]),
    ("help", ["--help"]),
]


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    import json

    d = tmp_path_factory.mktemp("cli")
    for name, src in SCRIPTS_SRC.items():
        (d / name).write_text(src)
    r = _run_ok([sys.executable, "-c", DRIVER, json.dumps(SCENARIOS)], d)
    results = json.loads(r.stdout.splitlines()[-1])
    results["dir"] = d
    return results


def test_run_sets_main_argv_path_and_identity(cli):
    rc, out, err = cli["main"]
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "__main__ ['main.py', '--lr', '0.1'] main.py 42"
    assert lines[1] == "True True True"
    assert lines[2] == "False False"
    assert lines[3] == "IE torch.nn.no_such_mod is not implemented by ember"
    assert lines[4] == "False False"
    assert lines[5] == "AE torch.nn.functional.no_such_fn is not implemented by ember"


def test_run_exit_codes(cli):
    assert cli["exit3"][0] == 3
    assert cli["exit0"][0] == 0
    assert cli["bye"][0] == 1 and cli["bye"][2].strip() == "bye"


def test_run_exit_code_of_the_process(tmp_path):
    (tmp_path / "s.py").write_text("import sys, torch\nsys.exit(int(torch.tensor(5).item()))\n")
    r = subprocess.run(_ember_cmd("run", "s.py"), cwd=tmp_path, env=_env(), timeout=60, check=False)
    assert r.returncode == 5


def test_run_traceback_looks_like_python(cli):
    rc, _out, err = cli["attr"]
    assert rc == 1
    assert err.startswith("Traceback (most recent call last):\n")
    frames = re.findall(r'File "([^"]+)", line (\d+)', err)
    path = str(cli["dir"] / "attr.py")
    assert frames == [(path, "6"), (path, "4")], err  # the script's frames only, as python shows
    assert "AttributeError: 'Tensor' object has no attribute 'frobnicate'" in err
    assert "torch.Tensor.frobnicate is not implemented by ember" in err


def test_run_import_error_names_torch_api(cli):
    rc, _out, err = cli["imp"]
    assert rc == 1
    assert "ImportError: cannot import name 'NoSuchLayer'" in err
    assert "torch.nn.NoSuchLayer is not implemented by ember" in err


def test_run_syntax_error(cli):
    rc, _out, err = cli["syntax"]
    assert rc == 1
    assert "SyntaxError: '(' was never closed" in err and "Traceback" not in err


def test_run_missing_script_like_python(cli):
    rc, _out, err = cli["missing"]
    p = subprocess.run(
        [sys.executable, "missing.py"],
        cwd=cli["dir"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert rc == p.returncode == 2
    # python: "<exe>: can't open file '/abs/missing.py': [Errno 2] No such file or directory"
    assert err.split(": ", 1)[1] == p.stderr.split(": ", 1)[1]
    assert err.startswith("ember run: can't open file ")


def test_run_module_mode(cli):
    rc, out, err = cli["module"]
    assert rc == 0, err
    # under the torch alias, reprs spell torch's module (scripts compare str(x.dtype))
    assert out.strip() == (
        "__main__ ['a'] torch.Size([3])\nTrue torch.strided\ntorch.return_types.max"
    )
    rc, out, err = cli["no_module"]
    assert rc == 1 and "No module named no_such_mod_xyz" in err


def test_run_usage_errors_and_version(cli):
    assert cli["usage"][0] == 2 and "usage: ember run SCRIPT" in cli["usage"][2]
    assert cli["run_usage"][0] == 2 and "required: SCRIPT" in cli["run_usage"][2]
    assert cli["unknown"][0] == 2 and "unknown command 'walk'" in cli["unknown"][2]
    assert cli["version"][0] == 0 and cli["version"][1].strip() == f"ember {ember.__version__}"
    assert cli["help"][0] == 0 and "ember run SCRIPT" in cli["help"][1]


def test_console_entry_point(tmp_path):
    from importlib.metadata import entry_points

    eps = entry_points(group="console_scripts", name="ember")
    assert [e.value for e in eps] == ["ember.__main__:main"]
    exe = shutil.which("ember")
    assert exe is not None, "the `ember` command is missing: run `pip install -e .`"
    (tmp_path / "s.py").write_text("import sys, torch\nsys.exit(int(torch.tensor(4).item()))\n")
    r = subprocess.run([exe, "run", "s.py"], cwd=tmp_path, env=_env(), timeout=60, check=False)
    assert r.returncode == 4


def test_main_function_in_process(capsys):
    from ember.__main__ import main

    assert main(["--help"]) == 0
    assert "ember run SCRIPT" in capsys.readouterr().out
    assert main(["run", "/no/such/file.py"]) == 2
    assert "can't open file '/no/such/file.py'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- cuda, accelerator
def _gpu_usable() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no cupy, no driver, no device
        return False


def test_cuda_is_truthful():
    has = _gpu_usable()
    assert ember.cuda.is_available() is has
    assert ember.accelerator.is_available() is has
    assert (ember.cuda.device_count() > 0) is has
    if has:
        assert ember.accelerator.current_accelerator() == ember.device("cuda")
        assert isinstance(ember.cuda.get_device_name(), str)
        return
    assert ember.cuda.device_count() == torch.cuda.device_count() == 0
    assert ember.accelerator.current_accelerator() is None
    assert ember.cuda.memory_allocated() == ember.cuda.max_memory_allocated() == 0
    assert ember.cuda.memory_reserved() == 0
    assert ember.cuda.is_initialized() is False
    assert ember.cuda.is_bf16_supported() is False
    ember.cuda.manual_seed(0)  # no-ops without a GPU, as in torch
    ember.cuda.manual_seed_all(0)
    ember.cuda.empty_cache()
    for fn in (
        ember.cuda.current_device,
        ember.cuda.synchronize,
        ember.cuda.get_device_name,
        ember.cuda.Event,
        ember.cuda.Stream,
        ember.cuda.current_stream,
    ):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            fn()


@pytest.mark.skipif(not _gpu_usable(), reason="no GPU with cupy")
def test_cuda_api_on_a_gpu():
    # the same questions asked of torch.cuda on the same machine
    cuda = ember.cuda
    assert cuda.device_count() == torch.cuda.device_count()
    assert cuda.get_device_name() == torch.cuda.get_device_name()
    assert cuda.get_device_capability() == torch.cuda.get_device_capability()
    assert (
        cuda.get_device_properties(0).total_memory
        == torch.cuda.get_device_properties(0).total_memory
    )
    assert cuda.is_bf16_supported() is torch.cuda.is_bf16_supported()
    cuda.set_device(0)
    assert cuda.current_device() == 0 and cuda.is_initialized()
    free, total = cuda.mem_get_info()
    assert 0 < free <= total
    # memory: cupy's pool, in bytes of the tensors alive
    cuda.synchronize()
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    before = cuda.memory_allocated()
    x = ember.ones(1 << 20, device="cuda")  # 4 MiB
    assert cuda.memory_allocated() - before >= 4 << 20
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    del x
    assert cuda.memory_allocated() == before
    assert cuda.max_memory_allocated() >= before + (4 << 20)
    cuda.empty_cache()
    assert cuda.memory_reserved() <= cuda.max_memory_reserved()
    # streams and events: work queued on a side stream, timed and waited for
    a = ember.randn(512, 512, device="cuda")
    side = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        assert cuda.current_stream() == side
        start.record()
        b = a @ a
        end.record()
    assert cuda.current_stream() != side  # the block restored the previous stream
    end.wait()  # the current stream waits for the side stream's product
    end.synchronize()
    assert end.query() and side.query()
    assert start.elapsed_time(end) >= 0.0
    np.testing.assert_allclose(b.cpu().numpy(), a.cpu().numpy() @ a.cpu().numpy(), rtol=1e-4)
    # seeding: manual_seed_all reproduces the device's draws
    cuda.manual_seed_all(3)
    r = ember.rand(5, device="cuda").cpu().numpy()
    cuda.manual_seed_all(3)
    np.testing.assert_array_equal(ember.rand(5, device="cuda").cpu().numpy(), r)
    state = cuda.get_rng_state()
    r2 = ember.rand(5, device="cuda").cpu().numpy()
    cuda.set_rng_state(state)
    np.testing.assert_array_equal(ember.rand(5, device="cuda").cpu().numpy(), r2)


def test_backends_flags_match_torch_defaults():
    b = ember.backends
    tb = torch.backends
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(b.cudnn, name) == getattr(tb.cudnn, name), name
    assert b.cuda.matmul.allow_tf32 == tb.cuda.matmul.allow_tf32
    assert b.mps.is_available() is tb.mps.is_available() is False
    assert b.cudnn.is_available() is False  # ember never uses cuDNN
    assert b.cuda.flash_sdp_enabled() is True
    with b.cudnn.flags(enabled=True, benchmark=True, deterministic=True):
        assert b.cudnn.benchmark is True and b.cudnn.deterministic is True
    assert b.cudnn.benchmark is False and b.cudnn.deterministic is False
    b.cudnn.benchmark = True
    b.cudnn.benchmark = False
    assert isinstance(b.mkldnn.enabled, bool) and b.openmp.is_available() is False


# ----------------------------------------------------------------------------- amp
class _CountingOptimizer:
    def __init__(self, params):
        self.param_groups = [{"params": list(params)}]
        self.steps = 0

    def step(self, closure=None):
        self.steps += 1
        return "stepped"


class _PlainSGD:
    def __init__(self, mod, params, lr=0.1):
        self.mod = mod
        self.param_groups = [{"params": params}]
        self.lr = lr

    def zero_grad(self):
        for p in self.param_groups[0]["params"]:
            p.grad = None

    def step(self):
        with self.mod.no_grad():
            for p in self.param_groups[0]["params"]:
                p -= self.lr * p.grad


def test_grad_scaler_disabled_passes_through():
    s = ember.amp.GradScaler(enabled=False)
    loss = ember.tensor(2.0, requires_grad=True)
    assert s.scale(loss) is loss
    opt = _CountingOptimizer([loss])
    assert s.step(opt) == "stepped" and opt.steps == 1
    s.update()
    s.unscale_(opt)
    assert s.state_dict() == torch.amp.GradScaler(enabled=False).state_dict() == {}
    assert s.get_scale() == 1.0 and s.is_enabled() is False
    s.load_state_dict({})


def test_grad_scaler_cuda_without_gpu_disables_like_torch():
    if _gpu_usable():
        pytest.skip("a GPU is present: the scaler stays enabled")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = ember.cuda.amp.GradScaler()
        t = torch.cuda.amp.GradScaler()
    assert s.is_enabled() is t.is_enabled() is False
    msgs = [str(x.message) for x in w]
    assert any("CUDA is not available.  Disabling." in m for m in msgs)
    assert any("torch.cuda.amp.GradScaler(args...)` is deprecated" in m for m in msgs)


def test_grad_scaler_enabled_matches_torch():
    def run(mod):
        mod.manual_seed(0)
        w = mod.nn.Parameter(mod.tensor([1.0, -2.0, 3.0]))
        opt = _PlainSGD(mod, [w])  # (torch.optim's first step costs seconds of imports)
        s = mod.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
        trace = []
        for i in range(5):
            opt.zero_grad()
            loss = (w * w).sum()
            if i == 2:
                loss = loss * float("inf")  # an overflowing step is skipped, the scale backs off
            scaled = s.scale(loss)
            trace.append(scaled.item())
            scaled.backward()
            if i == 3:
                s.unscale_(opt)
                trace.append(w.grad.tolist())
            s.step(opt)
            s.update()
            trace.append((s.get_scale(), w.tolist()))
        return trace, s.state_dict()

    e_trace, e_state = run(ember)
    t_trace, t_state = run(torch)
    assert e_trace == t_trace
    assert e_state == t_state
    s = ember.amp.GradScaler("cpu")
    s.load_state_dict(t_state)
    assert s.state_dict() == t_state
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        s.load_state_dict({})


def test_grad_scaler_stage_errors():
    w = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.1)
    s = ember.amp.GradScaler("cpu")
    s.scale(w.sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        ember.amp.GradScaler("cpu").step(opt, closure=lambda: 0)
    with pytest.raises(AssertionError, match="Attempted update but _scale is None"):
        ember.amp.GradScaler("cpu").update()  # torch's scale is made by the first scale()
    s = ember.amp.GradScaler("cpu")
    s.scale(w.sum())
    with pytest.raises(AssertionError, match="No inf checks were recorded"):
        s.update()


def test_autocast_context_and_decorator():
    assert ember.is_autocast_enabled("cpu") is torch.is_autocast_enabled("cpu") is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a real region: nothing to warn about
        with ember.autocast("cpu", dtype=ember.bfloat16):
            assert ember.is_autocast_enabled("cpu")
            assert ember.get_autocast_dtype("cpu") == ember.bfloat16
            with ember.autocast("cpu", enabled=False):
                assert not ember.is_autocast_enabled("cpu")
            assert ember.is_autocast_enabled("cpu")
        assert not ember.is_autocast_enabled("cpu")

        @ember.amp.autocast("cpu")
        def f(x):
            return x * 2, ember.is_autocast_enabled("cpu")

        y, on = f(ember.ones(2))
    assert on and y.dtype == ember.float32  # mul is on no autocast list: its own dtype
    for bad in (1, "foo"):
        with pytest.raises(Exception) as te:
            torch.autocast(bad)
        with pytest.raises(type(te.value), match="device.type"):
            ember.autocast(bad)
    assert ember.autocast("cuda:0", enabled=False).device == "cuda"
    with ember.cuda.amp.autocast(enabled=False):
        assert not ember.is_autocast_enabled()
    if not _gpu_usable():  # torch and ember both switch a cuda region off without a GPU
        with pytest.warns(UserWarning, match="CUDA is not available"), ember.autocast("cuda"):
            assert not ember.is_autocast_enabled("cuda")


# ----------------------------------------------------------------------------- compile
def test_compile_module_and_function():
    m = ember.nn.Linear(3, 2)
    cm = ember.compile(m)
    x = ember.randn(4, 3)
    assert ember.equal(cm(x), m(x))
    assert type(cm).__name__ == "OptimizedModule" and cm._orig_mod is m
    tm = torch.compile(torch.nn.Linear(3, 2), backend="eager")
    assert list(cm.state_dict()) == list(tm.state_dict())  # '_orig_mod.weight', ...
    assert cm.in_features == 3 and cm.weight is m.weight
    cm.eval()
    assert not m.training

    @ember.compile
    def f(x):
        return x + 1

    @ember.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def g(x):
        return x * 3

    assert f(ember.ones(2)).tolist() == [2.0, 2.0] and g(ember.ones(2)).tolist() == [3.0, 3.0]
    assert f.__name__ == "f"
    assert ember.compile(m, backend="eager", options={"x": 1}, disable=True)(x).shape == (4, 2)
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        ember.compile(m, mode="default", options={})
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        ember.compile(m, mode="fast")
    assert ember.compiler.is_compiling() is False


# ----------------------------------------------------------------------------- distributed
def test_distributed_single_process():
    d = ember.distributed
    assert d.is_available() and not d.is_initialized()
    with pytest.raises(ValueError) as ee:
        d.get_rank()
    with pytest.raises(ValueError) as te:
        torch.distributed.get_rank()
    assert str(ee.value) == str(te.value)
    with pytest.raises(NotImplementedError, match="world_size > 1 is not implemented by ember"):
        d.init_process_group("gloo", world_size=2, rank=0)
    d.init_process_group("nccl", world_size=1, rank=0)
    try:
        assert d.is_initialized() and d.get_rank() == 0 and d.get_world_size() == 1
        assert d.get_backend() == "nccl"
        t = ember.tensor([1.0, 2.0])
        assert d.all_reduce(t) is None and t.tolist() == [1.0, 2.0]
        assert d.all_reduce(t, op=d.ReduceOp.MAX, async_op=True).wait()
        out = [ember.zeros(2)]
        d.all_gather(out, t)
        assert out[0].tolist() == [1.0, 2.0]
        objs = [None]
        d.all_gather_object(objs, {"a": 1})
        assert objs == [{"a": 1}]
        d.barrier()
        d.broadcast(t, src=0)
        with pytest.raises(ValueError, match="twice"):
            d.init_process_group("gloo", world_size=1, rank=0)
    finally:
        d.destroy_process_group()
    assert not d.is_initialized()


# ----------------------------------------------------------------------------- multiprocessing
def test_multiprocessing_reexports():
    import multiprocessing

    mp = ember.multiprocessing
    for name in ("get_context", "set_start_method", "Process", "Queue", "Pool", "cpu_count"):
        assert getattr(mp, name) is getattr(multiprocessing, name), name
        assert hasattr(torch.multiprocessing, name)
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert callable(mp.spawn) and callable(mp.start_processes)
    assert issubclass(mp.ProcessRaisedException, Exception)


# ----------------------------------------------------------------------------- onnx, utils
def test_onnx_export_names_the_api():
    with pytest.raises(NotImplementedError, match=r"^torch\.onnx\.export is not implemented"):
        ember.onnx.export(ember.nn.Linear(2, 2), ember.ones(1, 2), "model.onnx")
    assert ember.onnx.is_in_onnx_export() is False


def test_summary_writer_csv(tmp_path, monkeypatch):
    from ember.utils.tensorboard import SummaryWriter

    with SummaryWriter(log_dir=tmp_path / "run") as w:
        assert w.get_logdir() == str(tmp_path / "run")
        w.add_scalar("loss", ember.tensor(0.5), 0, walltime=10.0)
        w.add_scalar("loss", 0.25, global_step=1, walltime=11.0)
        w.add_scalars("acc", {"train": 0.75, "val": 0.5}, 2, walltime=12.0)
        w.flush()
        with pytest.raises(NotImplementedError, match=r"SummaryWriter\.add_histogram is not"):
            w.add_histogram("h", ember.ones(3), 0)
        with pytest.raises(NotImplementedError, match=r"SummaryWriter\.add_image is not"):
            w.add_image("i", ember.ones(3, 2, 2), 0)
    rows = (tmp_path / "run" / "scalars.csv").read_text().splitlines()
    assert rows == [
        "step,tag,value,wall_time",
        "0,loss,0.5,10.0",
        "1,loss,0.25,11.0",
        "2,acc/train,0.75,12.0",
        "2,acc/val,0.5,12.0",
    ]
    w2 = SummaryWriter(str(tmp_path / "run"))  # reopening appends, without a second header
    w2.add_scalar("loss", 0.125, 3, walltime=13.0)
    w2.close()
    rows = (tmp_path / "run" / "scalars.csv").read_text().splitlines()
    assert rows[-1] == "3,loss,0.125,13.0" and rows.count("step,tag,value,wall_time") == 1
    monkeypatch.chdir(tmp_path)
    w3 = SummaryWriter(comment="_x")
    w3.close()
    assert Path(w3.log_dir).parent.name == "runs" and w3.log_dir.endswith("_x")


def test_no_root_folder_shadows_an_installed_package():
    # the checkout is the package: a folder `cuda` in it would shadow NVIDIA's `cuda` namespace
    # (cupy imports cuda.pathfinder) in any process with the checkout on sys.path, `distributed`
    # and `onnx` the PyPI packages, `multiprocessing` the stdlib. They live in `<name>_` folders
    # and register themselves under ember.<name>.
    for name in ("cuda", "distributed", "onnx", "multiprocessing"):
        assert not (ROOT / name).exists(), name
        assert not (ROOT / f"{name}.py").exists(), name
        assert sys.modules[f"ember.{name}"] is getattr(ember, name)
    import importlib

    assert importlib.import_module("ember.cuda.amp") is sys.modules["ember.cuda_.amp"]
