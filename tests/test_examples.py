"""The demo and the benchmark workloads run end to end (no timing here: bench/ measures speed)."""

import importlib.util
import pathlib

import ember
import numpy as np
import pytest
from ember.examples import mlp_demo

try:
    import torch
except ImportError:
    torch = None

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _bench_module(name="bench_core"):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mlp_demo_loss_falls(capsys):
    losses = mlp_demo.main(epochs=30)
    assert len(losses) == 30
    assert losses[-1] < 0.5 * losses[0]
    assert "accuracy" in capsys.readouterr().out


def test_bench_mlp_step_matches_torch():
    # the benchmarked MLP step is the same computation in both frameworks: same losses
    if torch is None:
        pytest.skip("torch is not installed (the parity oracle)")
    bench = _bench_module()
    e_step, t_step = bench.mlp_workload(ember), bench.mlp_workload(torch)
    for _ in range(3):
        le, lt = e_step().item(), t_step().item()
        np.testing.assert_allclose(le, lt, rtol=1e-4)


def test_bench_small_step_matches_torch():
    # bench_mlp_step.py's Module + CrossEntropyLoss + Adam step is the same computation in both
    # frameworks: from torch's initial weights, the same weights after three steps
    if torch is None:
        pytest.skip("torch is not installed (the parity oracle)")
    bench = _bench_module("bench_mlp_step")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((bench.BATCH, bench.IN)).astype(np.float32)
    y = rng.integers(0, bench.CLASSES, bench.BATCH)
    tmodel, emodel = bench._mlp(torch), bench._mlp(ember)
    emodel.load_state_dict(
        {k: ember.tensor(v.detach().numpy()) for k, v in tmodel.state_dict().items()}
    )
    bench.workload(ember, emodel, x, y, 3)()
    bench.workload(torch, tmodel, x, y, 3)()
    for (k, e), t in zip(emodel.state_dict().items(), tmodel.state_dict().values()):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-4, atol=1e-6, err_msg=k)


def test_bench_overhead_chain_runs():
    bench = _bench_module()
    bench.overhead_workload(ember)()


def test_bench_cnn_floor_step_matches_torch():
    # cnn_floor.py's hand-written numpy step is the CNN of bench_cnn.py: two SGD-momentum steps
    # (the second uses the momentum buffers) give torch's losses and weights
    if torch is None:
        pytest.skip("torch is not installed (the parity oracle)")
    floor = _bench_module("cnn_floor")
    torch.manual_seed(0)
    x, y = torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))
    tmodel = _bench_module("bench_cnn").cnn(torch)
    step = floor.NumpyCNN(tmodel, x.numpy(), y.numpy())
    opt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(tmodel(x), y)
        loss.backward()
        opt.step()
        np.testing.assert_allclose(step.step(lr=0.1)[0], loss.item(), rtol=1e-5)
    for mine, p in zip(step.params, tmodel.parameters()):
        np.testing.assert_allclose(mine.reshape(p.shape), p.detach().numpy(), atol=1e-5)


def test_launch_census_counts_device_array_calls():
    # bench/launch_census.py counts what one step does to device arrays (a launch each on cupy)
    from strict_backend import strict_cuda

    census = _bench_module("launch_census").census
    with strict_cuda():
        x = ember.ones(4, device="cuda")
        counts = census(lambda: x * 2.0 + 1.0)
    assert counts["multiply"] == 1 and counts["add"] == 1


def test_launch_census_counts_fused_kernels():
    # with the host-compiled bodies standing in for cupy's, a layer norm step is three launches
    from host_kernels import CXX
    from strict_backend import strict_cuda

    if CXX is None:
        pytest.skip("no C++ compiler to build the fused kernels' bodies")
    mod = _bench_module("launch_census")
    with strict_cuda(), mod.host_fused_kernels():
        x = ember.ones(4, 8, device="cuda", requires_grad=True)
        norm = ember.nn.LayerNorm(8).to("cuda")
        counts = mod.census(lambda: norm(x).sum().backward())
        assert norm.weight.grad.device.type == "cuda"
    launches = {k: v for k, v in counts.items() if k.startswith("ember_")}
    assert launches == {
        "ember_layer_norm": 1,
        "ember_layer_norm_backward": 1,
        "ember_layer_norm_params": 1,
    }
