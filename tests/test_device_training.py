"""The training path on a cuda device: every optimizer (state on the device), GradScaler, SWA,
checkpoints saved from cuda and loaded anywhere, the DataLoader's batches, Module.cuda().

Each check runs on the strict fake-cupy backend everywhere (tests/strict_backend.py) and on a real
GPU when cupy has one, and compares with the same steps on the cpu.
"""

from __future__ import annotations

import copy
import inspect

import ember
import numpy as np
import pytest
from ember import nn, optim
from ember.core import device as devmod
from ember.utils.data import DataLoader, TensorDataset
from strict_backend import StrictArray, strict_cuda

HAS_GPU = devmod.is_cuda_available()
BACKENDS = [
    "strict",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not HAS_GPU, reason="no GPU with cupy: strict stands in")
    ),
]


@pytest.fixture(params=BACKENDS)
def device_array(request):
    """The backend's array type, with 'cuda' pointing at the backend for the test's duration."""
    if request.param == "strict":
        with strict_cuda():
            yield StrictArray
    else:
        import cupy

        yield cupy.ndarray


def _on_device(t, device_array):
    assert t.device.type == "cuda", t.device
    assert type(t._data) is device_array, type(t._data).__name__


def _host(t):
    return np.asarray(t.detach().cpu()._data)


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).double()


X = np.random.default_rng(1).uniform(-1, 1, (5, 4))
W = np.linspace(0.5, 2.0, 15).reshape(5, 3)


def _loss(model, device):
    out = model(ember.tensor(X, device=device))
    return (out * out * ember.tensor(W, device=device)).sum()


# optimizer -> constructor keywords (options that take each one's other code paths)
OPTIMIZERS = {
    "ASGD": {"lr": 0.05, "t0": 1.0, "weight_decay": 0.01},
    "Adadelta": {"weight_decay": 0.01},
    "Adafactor": {"lr": 0.05},
    "Adagrad": {"lr": 0.1, "lr_decay": 0.01},
    "Adam": {"lr": 0.05, "amsgrad": True, "weight_decay": 0.01},
    "AdamW": {"lr": 0.05, "foreach": True},
    "Adamax": {"lr": 0.05},
    "LBFGS": {"lr": 0.5, "max_iter": 4, "line_search_fn": "strong_wolfe"},
    "Muon": {"lr": 0.05},
    "NAdam": {"lr": 0.05, "decoupled_weight_decay": True, "weight_decay": 0.01},
    "RAdam": {"lr": 0.05},
    "RMSprop": {"lr": 0.05, "centered": True, "momentum": 0.5},
    "Rprop": {"lr": 0.05},
    "SGD": {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
    "SparseAdam": {"lr": 0.05},
}


def _params_for(name, model):
    if name == "Muon":  # matrices only (torch's rule)
        return [p for p in model.parameters() if p.ndim == 2]
    return model.parameters()


def _train(name, model, device, steps=3):
    """A few optimizer steps on `device`; returns the optimizer."""
    model = model.to(device)
    opt = getattr(optim, name)(_params_for(name, model), **OPTIMIZERS[name])

    def closure():
        opt.zero_grad()
        loss = _loss(model, device)
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    return opt


def _state_tensors(opt):
    return [v for s in opt.state.values() for v in s.values() if isinstance(v, ember.Tensor)]


def test_every_optimizer_has_a_row():
    names = {
        n
        for n, c in vars(optim).items()
        if inspect.isclass(c) and issubclass(c, optim.Optimizer) and c is not optim.Optimizer
    }
    assert names == set(OPTIMIZERS)


@pytest.mark.parametrize("name", sorted(set(OPTIMIZERS) - {"SparseAdam"}))
def test_optimizer_on_device_matches_cpu(name, device_array):
    ref_model, model = _model(), _model()
    ref = _train(name, ref_model, "cpu")
    opt = _train(name, model, "cuda")
    for p, q in zip(model.parameters(), ref_model.parameters()):
        _on_device(p, device_array)
        np.testing.assert_allclose(_host(p), _host(q), rtol=1e-7, atol=1e-12)
    state, ref_state = _state_tensors(opt), _state_tensors(ref)
    assert len(state) == len(ref_state) > 0
    for s, r in zip(state, ref_state):
        # per-parameter state lives with its parameter; torch keeps some step counts on the cpu
        assert s.device == r.device or s.device.type == "cuda"
        if s.device.type == "cuda":
            _on_device(s, device_array)
        np.testing.assert_allclose(_host(s), _host(r), rtol=1e-7, atol=1e-12)


def test_sparse_adam_on_device_matches_cpu(device_array):
    def run(device):
        ember.manual_seed(0)
        emb = nn.Embedding(7, 3, sparse=True).double().to(device)
        opt = optim.SparseAdam(emb.parameters(), lr=0.1)
        idx = ember.tensor([[0, 2, 2], [5, 1, 0]], device=device)
        for _ in range(3):
            opt.zero_grad()
            (emb(idx) ** 2 * ember.arange(3.0, device=device)).sum().backward()
            opt.step()
        return emb.weight, _state_tensors(opt)

    (w, state), (rw, rstate) = run("cuda"), run("cpu")
    _on_device(w, device_array)
    np.testing.assert_allclose(_host(w), _host(rw), rtol=1e-7)
    for s, r in zip(state, rstate):
        np.testing.assert_allclose(_host(s), _host(r), rtol=1e-7)


def test_optimizer_state_loads_onto_the_parameters_device(device_array):
    # a checkpoint of cpu state loaded into an optimizer of cuda parameters: the per-parameter
    # state moves to the parameters' device (torch's load_state_dict rule) and training goes on
    ref_model = _model()
    ref = _train("Adam", ref_model, "cpu", steps=2)
    model = copy.deepcopy(ref_model).cuda()
    opt = optim.Adam(model.parameters(), **OPTIMIZERS["Adam"])
    opt.load_state_dict(ref.state_dict())
    for s in _state_tensors(opt):
        if s.ndim:
            _on_device(s, device_array)
    for o, m, dev in ((opt, model, "cuda"), (ref, ref_model, "cpu")):
        o.zero_grad()
        _loss(m, dev).backward()
        o.step()
    for p, q in zip(model.parameters(), ref_model.parameters()):
        np.testing.assert_allclose(_host(p), _host(q), rtol=1e-7, atol=1e-12)


def test_grad_scaler_and_lr_scheduler_on_device(device_array):
    def run(device):
        model = _model().to(device)
        opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        sched = optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5)
        scaler = ember.amp.GradScaler(device, init_scale=2.0**10)
        losses = []
        for step in range(3):
            opt.zero_grad()
            loss = _loss(model, device)
            if step == 1:  # an overflowing step is skipped and lowers the scale
                loss = loss * float("inf")
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step(loss.detach())
            losses.append(loss)
        return model, scaler, losses

    (model, scaler, losses), (ref_model, ref_scaler, ref_losses) = run("cuda"), run("cpu")
    assert scaler.get_scale() == ref_scaler.get_scale() == 2.0**9
    for loss, ref_loss in zip(losses, ref_losses):
        _on_device(loss, device_array)
        np.testing.assert_allclose(_host(loss), _host(ref_loss), rtol=1e-7)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        _on_device(p, device_array)
        np.testing.assert_allclose(_host(p), _host(q), rtol=1e-7, atol=1e-12)


def test_swa_averaged_model_and_update_bn_on_device(device_array):
    from ember.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn, update_bn

    def run(device):
        ember.manual_seed(0)
        net = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).double().to(device)
        avg = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.9))
        for k in range(3):
            with ember.no_grad():
                for p in net.parameters():
                    p.mul_(1.0 + 0.1 * k)
            avg.update_parameters(net)
        batches = [ember.tensor(X + k, device=device) for k in range(2)]
        update_bn(batches, avg, device=device)
        return avg.state_dict()

    got, want = run("cuda"), run("cpu")
    assert list(got) == list(want)
    for k, g in got.items():
        w = want[k]
        if k == "n_averaged":  # torch keeps the count where AveragedModel's `device` says: cpu
            assert g.device.type == "cpu"
        else:
            _on_device(g, device_array)
        np.testing.assert_allclose(_host(g), _host(w), rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("fmt", ["ember", "safetensors"])
def test_checkpoint_from_cuda_loads_on_cpu_and_back(tmp_path, fmt, device_array):
    model = _model().cuda()
    opt = _train("Adam", model, "cuda", steps=1)
    state = {"model": model.state_dict(), "optim": opt.state_dict()}
    path = tmp_path / "ckpt.pt"
    if fmt == "safetensors":
        from ember.core.serialization import load_safetensors, save_safetensors

        save_safetensors(model.state_dict(), path)
        loaded = load_safetensors(path)
        assert all(type(t._data) is np.ndarray for t in loaded.values())
        back = {k: v.to("cuda") for k, v in loaded.items()}
    else:
        ember.save(state, path)
        same = ember.load(path)  # the saved devices
        on_cpu = ember.load(path, map_location="cpu")
        mapped = ember.load(path, map_location={"cuda:0": "cpu"})
        for t in same["model"].values():
            _on_device(t, device_array)
        for tree in (on_cpu, mapped):
            assert all(type(t._data) is np.ndarray for t in tree["model"].values())
            assert all(
                type(v._data) is np.ndarray
                for s in tree["optim"]["state"].values()
                for v in s.values()
                if isinstance(v, ember.Tensor)
            )
        back = ember.load(path, map_location="cuda")["model"]
    fresh = _model().cuda()
    fresh.load_state_dict(back)
    for (k, p), q in zip(fresh.state_dict().items(), model.state_dict().values()):
        _on_device(p, device_array)
        np.testing.assert_array_equal(_host(p), _host(q), err_msg=k)


def test_dataloader_batches_to_device(device_array):
    data = TensorDataset(ember.tensor(X), ember.arange(5))
    # worker processes make host batches; pin_memory + a non-blocking copy puts them on the device
    loader = DataLoader(data, batch_size=2, num_workers=2, pin_memory=True)
    got = [(x.to("cuda", non_blocking=True), y.cuda()) for x, y in loader]
    assert [len(y) for _, y in got] == [2, 2, 1]
    for x, y in got:
        _on_device(x, device_array)
        _on_device(y, device_array)
    np.testing.assert_array_equal(np.concatenate([_host(x) for x, _ in got]), X)
    # a dataset already on the device, no workers: the default collate keeps the device
    dev = TensorDataset(ember.tensor(X, device="cuda"), ember.arange(5, device="cuda"))
    batches = list(DataLoader(dev, batch_size=4, shuffle=False))
    for x, y in batches:
        _on_device(x, device_array)
        _on_device(y, device_array)
    np.testing.assert_array_equal(_host(batches[0][1]), [0, 1, 2, 3])


def test_module_cuda_and_cpu_keep_parameter_identity(device_array):
    model = _model()
    params = list(model.parameters())
    opt = optim.SGD(params, lr=0.1)
    assert model.cuda() is model and list(model.parameters()) == params
    for p in params:
        _on_device(p, device_array)
    _loss(model, "cuda").backward()
    opt.step()  # the optimizer holds the same Parameter objects, now on the device
    for p in params:
        _on_device(p.grad, device_array)
    model.cpu()
    assert all(type(p._data) is np.ndarray and p.grad.device.type == "cpu" for p in params)


def test_manual_seed_seeds_cpu_and_cuda(device_array):
    draws = []
    for _ in range(2):
        ember.manual_seed(123)
        draws.append((_host(ember.randn(4)), _host(ember.randn(4, device="cuda"))))
    np.testing.assert_array_equal(draws[0][0], draws[1][0])
    np.testing.assert_array_equal(draws[0][1], draws[1][1])
    # ember.cuda.manual_seed_all seeds the device's generator alone
    ember.cuda.manual_seed_all(5)
    a = _host(ember.rand(3, device="cuda"))
    cpu_draw = _host(ember.rand(3))
    ember.cuda.manual_seed_all(5)
    np.testing.assert_array_equal(a, _host(ember.rand(3, device="cuda")))
    assert not np.array_equal(cpu_draw, _host(ember.rand(3)))
