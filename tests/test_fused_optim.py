"""The fused SGD and Adam/AdamW updates (core/kernels/fused_optim.py) checked on the host: numpy
is given an ``ElementwiseKernel`` that builds each body with the machine's C++ compiler
(tests/host_kernels.py), so the optimizers take their fused path on numpy arrays. Parameters and
optimizer state after a few steps must match the generic path's for every option. Only cupy's own
compilation of the same text waits for a GPU (tests/test_device_training.py runs the optimizers
there)."""

import collections

import ember
import numpy as np
import pytest
from ember import nn, optim
from ember.core.kernels import fused_optim
from host_kernels import CXX, kernel_sets

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler to build the host harness")


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """{(body, dtype): host-compiled kernel} for both update bodies."""
    out = {}
    for body in (fused_optim.SGD_STEP, fused_optim.ADAM_STEP):
        sets = kernel_sets(
            [body], fused_optim.PARAMS, tmp_path_factory.mktemp("optim"), lambda k: k
        )
        out.update({(body, dt): k for dt, k in sets.items()})
    return out


@pytest.fixture
def numpy_with_kernels(host_kernels, monkeypatch):
    """numpy given cupy's ElementwiseKernel (host-compiled bodies); counts the launches."""
    launches = collections.Counter()

    def elementwise_kernel(in_params, out_params, body, name):
        assert (in_params, out_params) == fused_optim.PARAMS[body]

        def launch(*args, size):
            dtype = args[-1].dtype  # the last out param is a parameter-sized array
            launches[name] += 1
            return host_kernels[body, dtype](*args, size=size)

        return launch

    monkeypatch.setattr(np, "ElementwiseKernel", elementwise_kernel, raising=False)
    monkeypatch.setattr(fused_optim, "_CACHE", {})
    return launches


def _train(name, kwargs, dtype, steps=3, transposed=False):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).to(getattr(ember, dtype))
    params = list(model.parameters())
    if transposed:  # a parameter whose data is not one C-contiguous block takes the generic path
        with ember.no_grad():
            params[0] = nn.Parameter(params[0].detach().t().contiguous().t())
    opt = getattr(optim, name)(params, **kwargs)
    x = ember.tensor(np.random.default_rng(1).uniform(-1, 1, (5, 4)), dtype=params[0].dtype)
    w = ember.linspace(0.5, 2.0, 15, dtype=params[0].dtype).reshape(5, 3)
    for _ in range(steps):
        opt.zero_grad()
        h = (x @ params[0].t() + params[1]).tanh()
        ((h @ params[2].t() + params[3]) ** 2 * w).sum().backward()
        opt.step()
    state = [v.numpy() for s in opt.state.values() for k, v in s.items() if k != "step"]
    return [p.detach().numpy() for p in params] + state


CONFIGS = {
    "sgd": ("SGD", {"lr": 0.1}),
    "sgd-momentum": ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    "sgd-nesterov-wd": (
        "SGD",
        {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
    ),
    "sgd-maximize": ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    "adam": ("Adam", {"lr": 0.05}),
    "adam-amsgrad-l2": ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    "adamw": ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "betas": (0.8, 0.9)}),
    "adamw-maximize": ("AdamW", {"lr": 0.05, "maximize": True}),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_fused_update_matches_the_generic_path(numpy_with_kernels, config, dtype, monkeypatch):
    name, kwargs = CONFIGS[config]
    with monkeypatch.context() as m:
        m.delattr(np, "ElementwiseKernel")
        expected = _train(name, kwargs, dtype)
    assert not numpy_with_kernels, "the generic run used the fused kernels"
    got = _train(name, kwargs, dtype)
    kernel = "ember_sgd_step" if name == "SGD" else "ember_adam_step"
    assert numpy_with_kernels[kernel] == 3 * 4, "one launch per parameter and step"
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"array {k}")


def test_non_contiguous_parameter_takes_the_generic_update(numpy_with_kernels, monkeypatch):
    with monkeypatch.context() as m:
        m.delattr(np, "ElementwiseKernel")
        expected = _train("Adam", {"lr": 0.05}, "float64", transposed=True)
    got = _train("Adam", {"lr": 0.05}, "float64", transposed=True)
    assert numpy_with_kernels["ember_adam_step"] == 3 * 3  # the transposed weight: generic
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_fused_updates_only_for_cupy_float_arrays():
    # numpy (and the strict test backend, which has no ElementwiseKernel) keep the generic path
    d = np.zeros(3, np.float32)
    assert not fused_optim.sgd_step(np, d, d, None, 0.1, 0, 0, 0, False, None)

    class FakeCupy:
        def ElementwiseKernel(self, in_params, out_params, body, name):
            return body

    fake, h = FakeCupy(), np.zeros(3, np.float16)
    assert fused_optim._kernel(fake, fused_optim.SGD_STEP, h, h) is None
    assert fused_optim._kernel(fake, fused_optim.SGD_STEP, d, d.astype(np.float64)) is None
    assert fused_optim._kernel(fake, fused_optim.ADAM_STEP, d, d) == fused_optim.ADAM_STEP
    fused_optim._CACHE.clear()


def test_launch_skips_an_empty_range():
    from ember.core.kernels.launch import launch

    def kernel(*args, size):
        raise AssertionError("a kernel launched over zero indices")

    launch(kernel, (np.empty(0), 1.5, 2), 0)
    seen = []
    launch(lambda *args, size: seen.append((args, size)), (np.zeros((2, 3)), 1.5, np.int64(4)), 6)
    (flat, number, count), size = seen[0]
    assert size == 6 and flat.shape == (6,) and number == 1.5
    assert type(count) is int and count == 4  # a numpy scalar goes in as a Python number


def test_every_fused_module_is_listed():
    # the NVRTC check and the launch census reach the kernels through FUSED_MODULES
    import pathlib

    from ember.core.kernels import launch

    files = pathlib.Path(launch.__file__).parent.glob("fused_*.py")
    assert sorted(p.stem for p in files) == sorted(launch.FUSED_MODULES)
    assert all(m.PARAMS for m in launch.fused_modules())
