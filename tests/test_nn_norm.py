"""Normalization layers and functionals (issue 6): batch/instance/layer/group/RMS/local-response
norm against torch (outputs, input/weight/bias gradients, running statistics), float64 gradcheck
and gradgradcheck, torch's errors, names, and dispatch under the strict fake-cupy backend."""

from __future__ import annotations

import copy
import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, raises_like_torch, run_case, run_gradcheck
from nn_harness import check_module, copy_state, to_ember

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # tiny tensors: torch's thread pool only adds barrier stalls on a loaded machine
    if torch is None:
        yield
        return
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _F(m):
    return m.nn.functional


def _A(*shape, dtype="float32", **kw):
    return A(*shape, dtype=dtype, **kw)


# ---------------------------------------------------------------------- functional table
def _bn_fn(training, stats, affine):
    """F.batch_norm with fresh running stats (built inside, so each module gets its own)."""

    def fn(m, x, w, b):
        c = x.shape[1]
        rm = m.linspace(-0.5, 0.5, c, dtype=x.dtype) if stats else None
        rv = m.linspace(0.5, 1.5, c, dtype=x.dtype) if stats else None
        out = _F(m).batch_norm(
            x, rm, rv, w if affine else None, b if affine else None, training, 0.3, 1e-3
        )
        return (out, rm, rv) if stats and training else out

    return fn


def _cases(dt):
    a = lambda *s, **kw: _A(*s, dtype=dt, **kw)
    return [
        Case(f"layer_norm_last_{dt}", lambda m, x, w, b: _F(m).layer_norm(x, (5,), w, b),
             [a(3, 4, 5), a(5, seed=1), a(5, seed=2)]),
        Case(f"layer_norm_2d_{dt}", lambda m, x, w, b: _F(m).layer_norm(x, [4, 5], w, b, 1e-3),
             [a(2, 3, 4, 5), a(4, 5, seed=1), a(4, 5, seed=2)]),
        Case(f"layer_norm_plain_{dt}", lambda m, x: _F(m).layer_norm(x, (3, 4)), [a(2, 3, 4)]),
        Case(f"layer_norm_w_only_{dt}", lambda m, x, w: _F(m).layer_norm(x, (4,), w),
             [a(6, 4), a(4, seed=1)]),
        Case(f"layer_norm_b_only_{dt}", lambda m, x, b: _F(m).layer_norm(x, (4,), None, b),
             [a(6, 4), a(4, seed=1)]),
        Case(f"layer_norm_1d_{dt}", lambda m, x, w, b: _F(m).layer_norm(x, (7,), w, b),
             [a(7), a(7, seed=1), a(7, seed=2)]),
        Case(f"torch_layer_norm_{dt}", lambda m, x, w, b: m.layer_norm(x, (5,), w, b, 1e-4),
             [a(3, 5), a(5, seed=1), a(5, seed=2)]),
        Case(f"native_layer_norm_{dt}",
             lambda m, x, w, b: m.native_layer_norm(x, (5,), w, b, 1e-5)[0],
             [a(3, 2, 5), a(5, seed=1), a(5, seed=2)]),
        Case(f"batch_norm_train_{dt}", _bn_fn(True, True, True),
             [a(4, 3, 5), a(3, seed=1), a(3, seed=2)]),
        Case(f"batch_norm_train_2d_{dt}", _bn_fn(True, False, True),
             [a(6, 3), a(3, seed=1), a(3, seed=2)]),
        Case(f"batch_norm_train_4d_noaffine_{dt}", _bn_fn(True, True, False),
             [a(3, 2, 3, 4), a(2, seed=1), a(2, seed=2)]),
        Case(f"batch_norm_eval_{dt}", _bn_fn(False, True, True),
             [a(3, 4, 2, 2), a(4, seed=1), a(4, seed=2)]),
        Case(f"batch_norm_eval_noaffine_{dt}", _bn_fn(False, True, False),
             [a(3, 4, 2), a(4, seed=1), a(4, seed=2)]),
        Case(f"batch_norm_5d_{dt}", _bn_fn(True, True, True),
             [a(2, 3, 2, 2, 3), a(3, seed=1), a(3, seed=2)]),
        Case(f"torch_batch_norm_{dt}",
             lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
             [a(4, 3, 2), a(3, seed=1), a(3, seed=2)]),
        Case(f"native_batch_norm_{dt}",
             lambda m, x, w, b: m.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0],
             [a(4, 3, 2), a(3, seed=1), a(3, seed=2)]),
        Case(f"group_norm_{dt}", lambda m, x, w, b: _F(m).group_norm(x, 2, w, b),
             [a(3, 4, 5), a(4, seed=1), a(4, seed=2)]),
        Case(f"group_norm_4d_{dt}", lambda m, x, w, b: _F(m).group_norm(x, 3, w, b, 1e-3),
             [a(2, 6, 2, 3), a(6, seed=1), a(6, seed=2)]),
        Case(f"group_norm_plain_{dt}", lambda m, x: _F(m).group_norm(x, 1), [a(2, 4, 3)]),
        Case(f"group_norm_2d_{dt}", lambda m, x, w: _F(m).group_norm(x, 2, w),
             [a(3, 4), a(4, seed=1)]),
        Case(f"torch_group_norm_{dt}", lambda m, x, w, b: m.group_norm(x, 2, w, b, 1e-5, False),
             [a(2, 4, 3), a(4, seed=1), a(4, seed=2)]),
        Case(f"native_group_norm_{dt}",
             lambda m, x, w, b: m.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5)[0],
             [a(2, 4, 3), a(4, seed=1), a(4, seed=2)]),
        Case(f"instance_norm_{dt}", lambda m, x, w, b: _F(m).instance_norm(x, weight=w, bias=b),
             [a(2, 3, 5), a(3, seed=1), a(3, seed=2)]),
        Case(f"instance_norm_plain_{dt}", lambda m, x: _F(m).instance_norm(x), [a(2, 3, 2, 3)]),
        Case(f"instance_norm_eval_{dt}",
             lambda m, x, w, b: _F(m).instance_norm(
                 x, m.linspace(-1, 1, 3, dtype=x.dtype), m.linspace(0.5, 2, 3, dtype=x.dtype),
                 w, b, use_input_stats=False),
             [a(2, 3, 4), a(3, seed=1), a(3, seed=2)]),
        Case(f"torch_instance_norm_{dt}",
             lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
             [a(2, 3, 4), a(3, seed=1), a(3, seed=2)]),
        Case(f"rms_norm_{dt}", lambda m, x, w: _F(m).rms_norm(x, (5,), w),
             [a(3, 4, 5), a(5, seed=1)]),
        Case(f"rms_norm_2d_eps_{dt}", lambda m, x, w: _F(m).rms_norm(x, [4, 5], w, 1e-2),
             [a(3, 4, 5), a(4, 5, seed=1)]),
        Case(f"rms_norm_plain_{dt}", lambda m, x: _F(m).rms_norm(x, [3]), [a(4, 3)]),
        Case(f"torch_rms_norm_{dt}", lambda m, x, w: m.rms_norm(x, [3], w, 1e-6),
             [a(4, 3), a(3, seed=1)]),
        Case(f"local_response_norm_{dt}",
             lambda m, x: _F(m).local_response_norm(x, 3, 1e-2, 0.75, 2.0), [a(2, 5, 3)]),
        Case(f"local_response_norm_even_{dt}",
             lambda m, x: _F(m).local_response_norm(x, 4, 0.1, 0.5, 1.0), [a(2, 6, 2, 2)]),
        Case(f"local_response_norm_5d_{dt}",
             lambda m, x: _F(m).local_response_norm(x, 2), [a(1, 3, 2, 2, 2)]),
        Case(f"normalize_{dt}", lambda m, x: _F(m).normalize(x, 2.0, 1), [a(3, 4)]),
    ]  # fmt: skip


CASES = _cases("float32") + _cases("float64")
GRADCHECK = [c for c in _cases("float64") if "normalize" not in c.name]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_functional_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", GRADCHECK, ids=str)
def test_functional_gradcheck(case):
    def first(m, *xs):
        out = case.fn(m, *xs)
        return out[0] if isinstance(out, tuple) else out

    run_gradcheck(Case(case.name, first, case.inputs), gradgrad=True)


# ---------------------------------------------------------------------- module parity
MODULES = [
    ("BatchNorm1d_2d", lambda m: m.nn.BatchNorm1d(3), [A(5, 3)]),
    ("BatchNorm1d_3d", lambda m: m.nn.BatchNorm1d(3, momentum=None), [A(4, 3, 2)]),
    ("BatchNorm1d_noaffine", lambda m: m.nn.BatchNorm1d(3, affine=False), [A(4, 3, 2)]),
    ("BatchNorm1d_nobias", lambda m: m.nn.BatchNorm1d(3, bias=False), [A(4, 3)]),
    ("BatchNorm2d", lambda m: m.nn.BatchNorm2d(4, eps=1e-3, momentum=0.2), [A(3, 4, 3, 2)]),
    ("BatchNorm2d_notrack", lambda m: m.nn.BatchNorm2d(2, track_running_stats=False),
     [A(2, 2, 3, 3)]),
    ("BatchNorm3d", lambda m: m.nn.BatchNorm3d(2), [A(2, 2, 2, 3, 2)]),
    ("SyncBatchNorm", lambda m: m.nn.SyncBatchNorm(3), [A(2, 3, 2, 2)]),
    ("InstanceNorm1d", lambda m: m.nn.InstanceNorm1d(3), [A(2, 3, 5)]),
    ("InstanceNorm1d_unbatched", lambda m: m.nn.InstanceNorm1d(3, affine=True), [A(3, 5)]),
    ("InstanceNorm2d_affine_track",
     lambda m: m.nn.InstanceNorm2d(3, affine=True, track_running_stats=True), [A(2, 3, 2, 3)]),
    ("InstanceNorm3d", lambda m: m.nn.InstanceNorm3d(2, affine=True), [A(2, 2, 2, 2, 3)]),
    ("LayerNorm", lambda m: m.nn.LayerNorm(5), [A(2, 3, 5)]),
    ("LayerNorm_shape", lambda m: m.nn.LayerNorm([3, 5], eps=1e-3), [A(2, 3, 5)]),
    ("LayerNorm_nobias", lambda m: m.nn.LayerNorm(5, bias=False), [A(4, 5)]),
    ("LayerNorm_noaffine", lambda m: m.nn.LayerNorm(5, elementwise_affine=False), [A(4, 5)]),
    ("GroupNorm", lambda m: m.nn.GroupNorm(2, 4), [A(3, 4, 5)]),
    ("GroupNorm_noaffine", lambda m: m.nn.GroupNorm(4, 4, affine=False), [A(2, 4, 2, 2)]),
    ("GroupNorm_nobias", lambda m: m.nn.GroupNorm(1, 4, bias=False), [A(2, 4, 3)]),
    ("RMSNorm", lambda m: m.nn.RMSNorm(5), [A(2, 3, 5)]),
    ("RMSNorm_eps", lambda m: m.nn.RMSNorm([3, 5], eps=1e-3, elementwise_affine=False),
     [A(2, 3, 5)]),
    ("LocalResponseNorm", lambda m: m.nn.LocalResponseNorm(3, 1e-2, 0.5, 2.0), [A(2, 5, 3, 2)]),
]  # fmt: skip


def _with_perturbed_params(ctor):
    """The module with non-trivial weight/bias (ones/zeros would hide affine mistakes)."""

    def make(m):
        mod = ctor(m)
        if m is torch:
            g = torch.Generator().manual_seed(3)
            with torch.no_grad():
                for p in mod.parameters():
                    p.copy_(torch.rand(p.shape, generator=g) + 0.5)
        return mod

    return make


@needs_torch
@pytest.mark.parametrize("item", MODULES, ids=lambda it: it[0])
def test_module_parity_train(item):
    _, ctor, inputs = item
    check_module(_with_perturbed_params(ctor), inputs)


@needs_torch
@pytest.mark.parametrize("item", MODULES, ids=lambda it: it[0])
def test_module_parity_eval(item):
    _, ctor, inputs = item

    def warmed(m):
        # a couple of training steps first, so eval uses non-trivial running statistics
        mod = _with_perturbed_params(ctor)(m)
        if m is torch:
            g = torch.Generator().manual_seed(5)
            for _ in range(2):
                shape = tuple(inputs[0].shape)
                with torch.no_grad():
                    mod(torch.rand(shape, generator=g) * 3 - 1)
        return mod

    check_module(warmed, inputs, train=False)


def test_crossmaplrn2d_forward_and_gradcheck():
    # torch's CrossMapLRN2d keeps the legacy running-window recurrence (uneven windows at the
    # ends); its backward is a separate legacy formula that is not the derivative of that
    # forward (and fails for size 1), so ember differentiates its forward exactly instead
    x = np.random.default_rng(0).standard_normal((2, 6, 3, 2))
    for size in (1, 2, 3, 4, 7):
        e = ember.nn.CrossMapLRN2d(size, 1e-2, 0.75, 2)(ember.tensor(x))
        if torch is not None:
            t = torch.nn.CrossMapLRN2d(size, 1e-2, 0.75, 2)(torch.tensor(x))
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)
    xe = ember.tensor(x[:1, :, :2, :1], requires_grad=True)
    f = lambda t: ember.nn.CrossMapLRN2d(3, 0.1, 0.75, 2)(t)
    assert ember.autograd.gradcheck(f, (xe,))
    assert ember.autograd.gradgradcheck(f, (xe,))


# ---------------------------------------------------------------------- running statistics
@needs_torch
@pytest.mark.parametrize("momentum", [0.1, 0.35, None])
@pytest.mark.parametrize(
    "cls,shape",
    [("BatchNorm1d", (6, 3)), ("BatchNorm2d", (4, 3, 3, 2)), ("BatchNorm3d", (2, 3, 2, 2, 2))],
)
def test_running_stats_follow_torch(cls, shape, momentum):
    t = getattr(torch.nn, cls)(3, momentum=momentum)
    e = getattr(ember.nn, cls)(3, momentum=momentum)
    r = np.random.default_rng(1)
    for step in range(4):
        x = (r.standard_normal(shape) * (step + 1) + step).astype(np.float32)
        t(torch.tensor(x))
        e(ember.tensor(x))
    for k, v in t.state_dict().items():
        ev = e.state_dict()[k]
        assert ev.dtype == to_ember(v).dtype, k
        np.testing.assert_allclose(ev.numpy(), v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    assert int(e.num_batches_tracked) == 4
    t.eval()
    e.eval()
    x = r.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(
        e(ember.tensor(x)).detach().numpy(),
        t(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-5,
    )


@needs_torch
def test_instance_norm_running_stats_follow_torch():
    t = torch.nn.InstanceNorm1d(3, track_running_stats=True, momentum=0.2)
    e = ember.nn.InstanceNorm1d(3, track_running_stats=True, momentum=0.2)
    r = np.random.default_rng(2)
    for _ in range(3):
        x = (r.standard_normal((2, 3, 4)) * 2 + 1).astype(np.float32)
        t(torch.tensor(x))
        e(ember.tensor(x))
    for k in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(
            e.state_dict()[k].numpy(), t.state_dict()[k].numpy(), rtol=1e-5, atol=1e-6
        )
    t.eval()
    e.eval()
    x = r.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        e(ember.tensor(x)).detach().numpy(),
        t(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-5,
    )


def test_batchnorm_eval_without_running_stats_uses_batch_stats():
    m = ember.nn.BatchNorm1d(2, track_running_stats=False).eval()
    x = ember.tensor([[1.0, 2.0], [3.0, 6.0]])
    np.testing.assert_allclose(m(x).detach().numpy(), [[-1, -1], [1, 1]], atol=1e-4)
    assert m.running_mean is None and m.num_batches_tracked is None


def test_functional_running_update_bumps_version_and_needs_no_grad():
    rm, rv = ember.zeros(3), ember.ones(3)
    v0 = rm._version
    x = ember.randn(4, 3, requires_grad=True)
    ember.nn.functional.batch_norm(x, rm, rv, training=True).sum().backward()
    assert rm._version == v0 + 1 and not rm.requires_grad and rm.grad_fn is None
    np.testing.assert_allclose(rm.numpy(), 0.1 * x.detach().numpy().mean(0), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------------- module API
@needs_torch
def test_reprs_state_dict_keys_and_init():
    ctors = [
        lambda m: m.nn.BatchNorm2d(3),
        lambda m: m.nn.BatchNorm1d(3, momentum=None, affine=False, track_running_stats=False),
        lambda m: m.nn.BatchNorm3d(3, bias=False),
        lambda m: m.nn.SyncBatchNorm(3),
        lambda m: m.nn.InstanceNorm2d(3),
        lambda m: m.nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
        lambda m: m.nn.LazyBatchNorm2d(),
        lambda m: m.nn.LazyInstanceNorm3d(),
        lambda m: m.nn.LayerNorm([3, 4], elementwise_affine=False),
        lambda m: m.nn.LayerNorm(3, bias=False),
        lambda m: m.nn.GroupNorm(2, 4),
        lambda m: m.nn.GroupNorm(2, 4, affine=False),
        lambda m: m.nn.RMSNorm(3),
        lambda m: m.nn.RMSNorm([3, 4], eps=1e-3, elementwise_affine=False),
        lambda m: m.nn.LocalResponseNorm(2),
        lambda m: m.nn.CrossMapLRN2d(3),
    ]
    for ctor in ctors:
        t, e = ctor(torch), ctor(ember)
        assert repr(e) == repr(t)
        tsd, esd = t.state_dict(), e.state_dict()
        assert list(esd) == list(tsd)
        if any(isinstance(p, torch.nn.parameter.UninitializedParameter) for p in t.parameters()):
            continue
        for k, v in tsd.items():
            assert esd[k].dtype == to_ember(v).dtype, k
            np.testing.assert_array_equal(esd[k].numpy(), v.numpy(), err_msg=k)
        assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]


def test_class_hierarchy():
    from ember.nn.modules.batchnorm import _BatchNorm, _NormBase
    from ember.nn.modules.instancenorm import _InstanceNorm

    for cls in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"):
        assert issubclass(getattr(ember.nn, cls), _BatchNorm)
    assert issubclass(ember.nn.InstanceNorm2d, _InstanceNorm)
    assert issubclass(_InstanceNorm, _NormBase) and not issubclass(_InstanceNorm, _BatchNorm)
    assert ember.nn.modules.normalization.RMSNorm is ember.nn.RMSNorm


def test_reset_and_load_old_state_dict():
    m = ember.nn.BatchNorm1d(2)
    m(ember.randn(4, 2) * 3 + 1)
    assert int(m.num_batches_tracked) == 1
    m.reset_running_stats()
    assert m.running_mean.tolist() == [0, 0] and m.running_var.tolist() == [1, 1]
    assert int(m.num_batches_tracked) == 0
    # a checkpoint from before num_batches_tracked (version 1 metadata) still loads strictly
    sd = m.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""]["version"] = 1
    m2 = ember.nn.BatchNorm1d(2)
    m2.load_state_dict(sd)
    assert int(m2.num_batches_tracked) == 0
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        sd2 = ember.nn.BatchNorm1d(2).state_dict()
        del sd2["num_batches_tracked"]
        ember.nn.BatchNorm1d(2).load_state_dict(sd2)


@needs_torch
def test_lazy_modules_materialize():
    for lazy, full, shape in (
        ("LazyBatchNorm1d", "BatchNorm1d", (4, 3)),
        ("LazyBatchNorm2d", "BatchNorm2d", (2, 3, 2, 2)),
        ("LazyBatchNorm3d", "BatchNorm3d", (2, 3, 2, 2, 1)),
        ("LazyInstanceNorm1d", "InstanceNorm1d", (2, 3, 4)),
        ("LazyInstanceNorm2d", "InstanceNorm2d", (2, 3, 4, 5)),
        ("LazyInstanceNorm3d", "InstanceNorm3d", (2, 3, 2, 2, 2)),
    ):
        e = getattr(ember.nn, lazy)()
        t = getattr(torch.nn, lazy)()
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        eo, to = e(ember.tensor(x)), t(torch.tensor(x))
        assert type(e) is getattr(ember.nn, full) and repr(e) == repr(t)
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=1e-5)
        for k, v in t.state_dict().items():
            np.testing.assert_allclose(e.state_dict()[k].numpy(), v.numpy(), atol=1e-6)
    # cast before materializing: the running stats stay uninitialized buffers and take the dtype
    for mod in (ember, torch):
        m = mod.nn.LazyBatchNorm1d(track_running_stats=True).double()
        assert type(m.running_mean).__name__ == "UninitializedBuffer"
        m(mod.ones(4, 3, dtype=mod.float64))
        assert m.running_mean.shape == (3,) and m.running_var.dtype == mod.float64
    # an unbatched input: ember takes the channel dim (torch 2.13 takes dim 1 and then refuses
    # its own input, "expected input's size at dim=0 to match num_features (4), but got: 3")
    e = ember.nn.LazyInstanceNorm2d()
    assert e(ember.randn(3, 4, 5)).shape == (3, 4, 5) and e.num_features == 3


def test_convert_sync_batchnorm():
    net = ember.nn.Sequential(
        ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Sequential(ember.nn.BatchNorm1d(4))
    )
    net[1](ember.randn(5, 4))
    w = net[1].weight
    out = ember.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(out[1]) is ember.nn.SyncBatchNorm and type(out[2][0]) is ember.nn.SyncBatchNorm
    assert out[1].weight is w and int(out[1].num_batches_tracked) == 1
    bn = ember.nn.BatchNorm2d(2).eval()
    sbn = ember.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert isinstance(sbn, ember.nn.SyncBatchNorm) and not sbn.training
    x = ember.randn(2, 2, 3, 3)
    np.testing.assert_allclose(sbn(x).detach().numpy(), bn(x).detach().numpy())


def test_swa_update_bn():
    from ember.optim.swa_utils import update_bn

    model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3, momentum=0.5))
    data = [ember.randn(8, 2) * 2 + 1 for _ in range(3)]
    update_bn(data, model)
    bn = model[1]
    assert bn.momentum == 0.5  # restored
    with ember.no_grad():
        feats = ember.cat([model[0](d) for d in data])
    # update_bn computes the cumulative average of the batch statistics over the loader
    means = np.stack([model[0](d).detach().numpy().mean(0) for d in data]).mean(0)
    np.testing.assert_allclose(bn.running_mean.numpy(), means, rtol=1e-5, atol=1e-6)
    assert int(bn.num_batches_tracked) == 3 and feats.shape == (24, 3)


@needs_torch
def test_fuse_linear_bn_eval():
    from ember.nn.utils.fusion import fuse_linear_bn_eval

    torch.manual_seed(0)
    tl, tb = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)
    tb(torch.randn(6, 3) @ torch.ones(3, 4))  # non-trivial running statistics
    el, eb = ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4)
    copy_state(tl, el)
    copy_state(tb, eb)
    el.eval()
    eb.eval()
    fused = fuse_linear_bn_eval(el, eb)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    ref = tb.eval()(tl.eval()(torch.tensor(x))).detach().numpy()
    np.testing.assert_allclose(fused(ember.tensor(x)).detach().numpy(), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(eb(el(ember.tensor(x))).detach().numpy(), ref, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------- dtypes, double backward
def test_float32_stays_float32_and_half_inputs():
    for fn in (
        lambda x: ember.nn.functional.layer_norm(x, (4,)),
        lambda x: ember.nn.functional.batch_norm(x, None, None, training=True),
        lambda x: ember.nn.functional.group_norm(x, 2),
        lambda x: ember.nn.functional.rms_norm(x, (4,)),
    ):
        assert fn(ember.randn(3, 4)).dtype == ember.float32
        h = ember.randn(3, 4).half()
        out = fn(h)
        assert out.dtype == ember.float16
        ref = fn(h.float())
        np.testing.assert_allclose(out.float().numpy(), ref.numpy(), atol=2e-2)


@needs_torch
def test_gradient_penalty_matches_torch():
    # create_graph=True through BatchNorm, LayerNorm and GroupNorm: a second-order quantity
    x = np.random.default_rng(3).standard_normal((4, 3, 2)).astype(np.float64)
    w = np.linspace(0.5, 1.5, 3)
    res = []
    for m in (torch, ember):
        xt = m.tensor(x, requires_grad=True)
        wt = m.tensor(w, requires_grad=True)
        F = m.nn.functional
        y = F.batch_norm(xt, None, None, wt, None, True)
        y = F.layer_norm(y.tanh(), (2,)) + F.group_norm(xt, 3, wt)
        (g,) = m.autograd.grad((y * y.detach().sin()).sum(), xt, create_graph=True)
        (g * g).sum().backward()
        res.append((xt.grad.detach().numpy(), wt.grad.detach().numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-9, atol=1e-10)


def test_backward_survives_inplace_relu_on_output():
    # ResNet's bn -> ReLU(inplace=True): the derivative must not need the (overwritten) output
    bn = ember.nn.BatchNorm2d(3)
    x = ember.randn(2, 3, 2, 2, requires_grad=True)
    y = ember.nn.ReLU(inplace=True)(bn(x) * 1)
    y.sum().backward()
    x2 = ember.randn(2, 3, 2, 2, requires_grad=True)
    ember.nn.functional.relu(bn(x2), inplace=True).sum().backward()
    assert x2.grad is not None


# ---------------------------------------------------------------------- names (spec 4.3)
def test_norm_layers_keep_names_and_grads_named_like_params():
    x = ember.randn(4, 3, 2, 5, names=("N", "C", "H", "W"), requires_grad=True)
    mods = [
        ember.nn.BatchNorm2d(3),
        ember.nn.InstanceNorm2d(3, affine=True),
        ember.nn.GroupNorm(3, 3),
        ember.nn.LayerNorm(5),
        ember.nn.LayerNorm([2, 5]),
        ember.nn.RMSNorm(5),
        ember.nn.LocalResponseNorm(2),
        ember.nn.CrossMapLRN2d(2),
    ]
    for mod in mods:
        for train in (True, False):
            mod.train(train)
            y = mod(x)
            assert y.names == ("N", "C", "H", "W"), type(mod).__name__
            y.sum().backward()
            assert x.grad.names == x.names
            for p in mod.parameters():
                assert p.grad is not None and p.grad.names == p.names
            x.grad = None
            mod.zero_grad()
    named_w = ember.nn.LayerNorm(5)
    named_w.weight.data = named_w.weight.data.rename("W")
    y = named_w(x)
    y.sum().backward()
    assert y.names == x.names and named_w.weight.grad.names == ("W",)


# ---------------------------------------------------------------------- errors
ERRORS = [
    (lambda m: _F(m).layer_norm(m.ones(2, 3, 4), (3,)), RuntimeError,
     ("Given normalized_shape=[3], expected input with shape [*, 3], but got input of "
     "size[2, 3, 4]")),
    (lambda m: _F(m).layer_norm(m.ones(2, 3, 4), (4,), m.ones(3)), RuntimeError,
     ("Expected weight to be of same shape as normalized_shape, but got weight of shape [3] "
     "and normalized_shape = [4]")),
    (lambda m: _F(m).layer_norm(m.ones(2, 4), (4,), None, m.ones(3)), RuntimeError,
     ("Expected bias to be of same shape as normalized_shape, but got bias of shape [3] and "
     "normalized_shape = [4]")),
    (lambda m: _F(m).layer_norm(m.ones(2, 4), ()), RuntimeError,
     "Expected normalized_shape to be at least 1-dimensional"),
    (lambda m: _F(m).layer_norm(m.ones(2, 4), 4), TypeError,
     "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int"),
    (lambda m: _F(m).layer_norm(m.ones(2, 4).long(), (4,)), NotImplementedError,
     "\"LayerNormKernelImpl\" not implemented for 'Long'"),
    (lambda m: _F(m).layer_norm(m.ones(2, 4), (4,), m.ones(4).double()), RuntimeError,
     "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    (lambda m: m.nn.LayerNorm(4)(m.ones(2, 5)), RuntimeError,
     "Given normalized_shape=[4], expected input with shape [*, 4]"),
    (lambda m: _F(m).batch_norm(m.ones(1, 3), None, None, training=True), ValueError,
     "Expected more than 1 value per channel when training, got input size torch.Size([1, 3])"),
    (lambda m: _F(m).batch_norm(m.ones(1, 3, 1), None, None, training=True), ValueError,
     ("Expected more than 1 value per channel when training, got input size "
     "torch.Size([1, 3, 1])")),
    (lambda m: _F(m).batch_norm(m.ones(2, 3), m.zeros(4), m.ones(4), training=True),
     RuntimeError, "running_mean should contain 3 elements not 4"),
    (lambda m: _F(m).batch_norm(m.ones(2, 3), None, None, m.ones(2), training=True),
     RuntimeError, "weight should contain 3 elements not 2"),
    (lambda m: _F(m).batch_norm(m.ones(2, 3), None, None), RuntimeError,
     "running_mean must be defined in evaluation mode"),
    (lambda m: _F(m).batch_norm(m.ones(4), None, None, training=True), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda m: _F(m).batch_norm(m.ones(2, 3).long(), None, None, training=True),
     NotImplementedError, "\"batch_norm\" not implemented for 'Long'"),
    (lambda m: _F(m).batch_norm(m.ones(2, 3), m.zeros(3), m.ones(3), training=True,
                                momentum=None), TypeError,
     "batch_norm(): argument 'momentum' (position 7) must be float, not NoneType"),
    (lambda m: m.nn.BatchNorm2d(3)(m.ones(2, 3, 4)), ValueError,
     "expected 4D input (got 3D input)"),
    (lambda m: m.nn.BatchNorm1d(3)(m.ones(2, 3, 4, 5)), ValueError,
     "expected 2D or 3D input (got 4D input)"),
    (lambda m: m.nn.BatchNorm1d(3)(m.ones(3)), ValueError,
     "expected 2D or 3D input (got 1D input)"),
    (lambda m: m.nn.BatchNorm3d(3)(m.ones(2, 3, 4)), ValueError,
     "expected 5D input (got 3D input)"),
    (lambda m: m.nn.BatchNorm1d(3)(m.ones(1, 3)), ValueError,
     "Expected more than 1 value per channel when training, got input size torch.Size([1, 3])"),
    (lambda m: m.nn.SyncBatchNorm(3)(m.ones(3)), ValueError,
     "expected at least 2D input (got 1D input)"),
    (lambda m: _F(m).instance_norm(m.ones(2, 3, 1)), ValueError,
     "Expected more than 1 spatial element when training, got input size torch.Size([2, 3, 1])"),
    (lambda m: _F(m).instance_norm(m.ones(2, 3, 4), weight=m.ones(4)), RuntimeError,
     "weight should contain 6 elements not 8"),
    (lambda m: _F(m).instance_norm(m.ones(2, 3, 4), use_input_stats=False), RuntimeError,
     "Expected running_mean and running_var to be defined when use_input_stats is false"),
    (lambda m: m.nn.InstanceNorm1d(3)(m.ones(2, 3, 4, 5)), ValueError,
     "expected 2D or 3D input (got 4D input)"),
    (lambda m: m.nn.InstanceNorm2d(3, affine=True)(m.ones(2, 4, 5, 5)), ValueError,
     "expected input's size at dim=1 to match num_features (3), but got: 4."),
    (lambda m: _F(m).group_norm(m.ones(2, 3, 4), 2), RuntimeError,
     ("Expected number of channels in input to be divisible by num_groups, but got input of "
     "shape [2, 3, 4] and num_groups=2")),
    (lambda m: _F(m).group_norm(m.ones(2, 3, 4), 3, m.ones(4)), RuntimeError,
     ("Expected weight to be a vector of size equal to the number of channels in input, but got "
     "weight of shape [4] and input of shape [2, 3, 4]")),
    (lambda m: _F(m).group_norm(m.ones(3), 1), RuntimeError,
     "Expected at least 2 dimensions for input tensor but received 1"),
    (lambda m: m.nn.GroupNorm(2, 3), ValueError,
     "num_channels (3) must be divisible by num_groups (2)"),
    (lambda m: _F(m).rms_norm(m.ones(2, 3, 4), (3,)), RuntimeError,
     "Given normalized_shape=[3], expected input with shape [*3], but got input of size[2, 3, 4]"),
    (lambda m: _F(m).rms_norm(m.ones(2, 4), (4,), m.ones(3)), RuntimeError,
     ("Expected weight to be of same shape as normalized_shape, but got weight of shape [3] and "
     "normalized_shape = [4]")),
    (lambda m: _F(m).rms_norm(m.ones(2, 4).long(), [4]), NotImplementedError,
     "\"rms_norm\" not implemented for 'Long'"),
    (lambda m: _F(m).local_response_norm(m.ones(2, 3), 2), ValueError,
     "Expected 3D or higher dimensionality"),
    (lambda m: m.nn.CrossMapLRN2d(3)(m.ones(2, 3, 4)), ValueError,
     "CrossMapLRN2d: Expected input to be 4D, got 3D instead."),
]  # fmt: skip


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_like_torch(k):
    fn, exc, msg = ERRORS[k]
    raises_like_torch(fn, exc, msg)


def test_instance_norm_mismatch_warns_without_affine():
    with pytest.warns(UserWarning, match="does not match num_features"):
        ember.nn.InstanceNorm1d(3)(ember.randn(2, 4, 5))


# ---------------------------------------------------------------------- dispatch (fake cupy)
DISPATCH = [
    lambda x, w, b: ember.nn.functional.layer_norm(x, (4,), w, b),
    lambda x, w, b: ember.nn.functional.batch_norm(
        x,
        ember.zeros(3, device=x.device, dtype=x.dtype),
        ember.ones(3, device=x.device, dtype=x.dtype),
        w[:3],
        b[:3],
        True,
    ),
    lambda x, w, b: ember.nn.functional.batch_norm(
        x,
        ember.zeros(3, device=x.device, dtype=x.dtype),
        ember.ones(3, device=x.device, dtype=x.dtype),
        w[:3],
        b[:3],
    ),
    lambda x, w, b: ember.nn.functional.group_norm(x.reshape(2, 6, 2), 3, w.repeat(2)[:6]),
    lambda x, w, b: ember.nn.functional.instance_norm(x.reshape(2, 3, 4), weight=w[:3]),
    lambda x, w, b: ember.nn.functional.rms_norm(x, (4,), w),
    lambda x, w, b: ember.nn.functional.local_response_norm(x.reshape(2, 3, 4), 2),
    lambda x, w, b: ember.nn.CrossMapLRN2d(2)(x.reshape(1, 3, 2, 4)),
]


@pytest.mark.parametrize("k", range(len(DISPATCH)))
def test_dispatch_under_strict_cuda(k):
    from strict_backend import StrictArray, strict_cuda

    fn = DISPATCH[k]
    r = np.random.default_rng(k)
    arrays = [r.standard_normal(s) for s in ((2, 3, 4), (4,), (4,))]

    def run(device):
        ins = [ember.tensor(a, device=device, requires_grad=True) for a in arrays]
        out = fn(*ins)
        g = ember.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(out.shape), device=device)
        out.backward(g)
        return out, [t.grad for t in ins if t.grad is not None]

    ref, ref_grads = run(None)
    with strict_cuda():
        out, grads = run("cuda")
        assert type(out._data) is StrictArray
        assert all(type(g._data) is StrictArray for g in grads)
        assert len(grads) == len(ref_grads)
        np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-10)
        for g, rg in zip(grads, ref_grads):
            np.testing.assert_allclose(g.cpu().numpy(), rg.numpy(), rtol=1e-9, atol=1e-12)


def test_deepcopy_and_double():
    m = ember.nn.BatchNorm1d(3)
    m(ember.randn(4, 3))
    c = copy.deepcopy(m).double()
    assert c.running_mean.dtype == ember.float64 and c.num_batches_tracked.dtype == ember.int64
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c(ember.randn(4, 3, dtype=ember.float64))


def test_eval_batch_norm_gradcheck_through_running_stats():
    # torch refuses gradients for running_mean/var ("not differentiable with respect to argument
    # 'running_mean'"), in training and evaluation mode alike, and so does ember; the other
    # arguments' derivatives (eval mode) are exact: checked against finite differences
    r = np.random.default_rng(4)
    x = ember.tensor(r.standard_normal((3, 2, 2)), requires_grad=True)
    rm = ember.tensor(r.standard_normal(2))
    rv = ember.tensor(r.uniform(0.5, 1.5, 2))
    w = ember.tensor(r.standard_normal(2), requires_grad=True)
    b = ember.tensor(r.standard_normal(2), requires_grad=True)
    fn = lambda x, w, b: ember.nn.functional.batch_norm(x, rm, rv, w, b, False)
    assert ember.autograd.gradcheck(fn, (x, w, b))
    assert ember.autograd.gradgradcheck(fn, (x, w, b))
    for training in (False, True):
        for stat in ("running_mean", "running_var"):
            kw = {"running_mean": rm, "running_var": rv}
            kw[stat] = kw[stat].detach().requires_grad_()
            with pytest.raises(RuntimeError, match=f"with respect to argument '{stat}'"):
                ember.nn.functional.batch_norm(x, training=training, **kw)


DTYPE_COMBOS = [
    ("float32", "float64", None),
    ("float32", None, "float64"),
    ("float32", "float32", "float64"),
    ("float64", "float32", None),
    ("float64", None, "float32"),
    ("float16", "float32", "float32"),
    ("float16", "float64", None),
    ("float16", "float16", "float32"),
    ("float16", "float32", "float16"),
    ("float32", "float16", "float16"),
    ("bfloat16", "float32", None),
]


@needs_torch
@pytest.mark.parametrize("fn", ["layer_norm", "group_norm", "batch_norm", "instance_norm"])
def test_parameter_dtype_rules_like_torch(fn):
    # parameters share the input's dtype, or are float32 beside a half input (mixed precision)
    def outcome(m, di, dw, db):
        F = m.nn.functional
        x = m.ones(2, 3, 2, dtype=getattr(m, di))
        w = None if dw is None else m.ones(3, dtype=getattr(m, dw))
        b = None if db is None else m.ones(3, dtype=getattr(m, db))
        try:
            if fn == "layer_norm":
                out = F.layer_norm(
                    x, (2,), None if w is None else w[:2], None if b is None else b[:2]
                )
            elif fn == "group_norm":
                out = F.group_norm(x, 3, w, b)
            elif fn == "batch_norm":
                out = F.batch_norm(x, None, None, w, b, True)
            else:
                out = F.instance_norm(x, None, None, w, b)
            return str(out.dtype).split(".")[-1]
        except RuntimeError as e:
            return str(e)

    for combo in DTYPE_COMBOS:
        assert outcome(ember, *combo) == outcome(torch, *combo), combo


def test_more_errors_like_torch():
    raises_like_torch(
        lambda m: m.nn.functional.group_norm(m.ones(1, 2), 2),
        ValueError,
        "Expected more than 1 value per channel when training, got input size [1, 2]",
    )
    # torch checks the batch size before the argument types
    raises_like_torch(
        lambda m: m.nn.functional.batch_norm(
            m.ones(1, 3), None, None, training=True, momentum=None
        ),
        ValueError,
        "Expected more than 1 value per channel when training",
    )
    raises_like_torch(
        lambda m: m.nn.functional.batch_norm(
            m.ones(2, 3), None, None, training=True, momentum=None
        ),
        TypeError,
        "batch_norm(): argument 'momentum' (position 7) must be float, not NoneType",
    )


@needs_torch
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_precision_close_to_torch(dt):
    # statistics in float32 like torch: outputs within a couple of half ulps
    x = np.random.default_rng(0).standard_normal((4, 6, 5)).astype(np.float32)
    fns = [
        lambda m, t: m.nn.functional.layer_norm(t, (5,)),
        lambda m, t: m.nn.functional.group_norm(t, 3),
        lambda m, t: m.nn.functional.batch_norm(t, None, None, training=True),
        lambda m, t: m.nn.functional.instance_norm(t),
    ]
    tol = 2e-3 if dt == "float16" else 2e-2
    for f in fns:
        e = ember.tensor(x).to(getattr(ember, dt)).requires_grad_()
        t = torch.tensor(x).to(getattr(torch, dt)).requires_grad_()
        a, b = f(ember, e), f(torch, t)
        assert a.dtype == getattr(ember, dt)
        g = np.linspace(0.5, 1.5, a.numel()).reshape(tuple(a.shape)).astype(np.float32)
        a.backward(ember.tensor(g).to(a.dtype))
        b.backward(torch.tensor(g).to(b.dtype))
        np.testing.assert_allclose(a.float().detach().numpy(), b.float().detach().numpy(), atol=tol)
        np.testing.assert_allclose(e.grad.float().numpy(), t.grad.float().numpy(), atol=5 * tol)


@needs_torch
@pytest.mark.parametrize("offset", [0.0, 3.0, 300.0])
def test_large_means_stay_accurate(offset):
    # the kernels skip the centred copy only where mean^2 <= 2 var; elsewhere they centre first
    # (forward and backward), so a large offset costs no more accuracy than in torch
    r = np.random.default_rng(5)
    x = (r.standard_normal((8, 4, 6)) + offset * r.uniform(0.5, 1.5, (1, 4, 1))).astype(np.float32)
    g = r.standard_normal((8, 4, 6)).astype(np.float32)
    w = r.uniform(0.5, 1.5, 4).astype(np.float32)
    fns = [
        lambda m, t, w: m.nn.functional.batch_norm(t, None, None, w, None, True),
        lambda m, t, w: m.nn.functional.group_norm(t, 2, w),
        lambda m, t, w: m.nn.functional.instance_norm(t, weight=w),
        lambda m, t, w: m.nn.functional.layer_norm(t.transpose(1, 2), (4,), w),
    ]
    for f in fns:
        ref = torch.tensor(x.astype(np.float64), requires_grad=True)
        rw = torch.tensor(w.astype(np.float64), requires_grad=True)
        ry = f(torch, ref, rw)
        ry.backward(torch.tensor(g.astype(np.float64)).reshape(ry.shape))
        xe = ember.tensor(x, requires_grad=True)
        we = ember.tensor(w, requires_grad=True)
        ye = f(ember, xe, we)
        ye.backward(ember.tensor(g).reshape(ye.shape))
        tol = 2e-5 * (1 + offset)
        np.testing.assert_allclose(ye.detach().numpy(), ry.detach().numpy(), atol=tol)
        scale = np.abs(ref.grad.numpy()).max()
        np.testing.assert_allclose(xe.grad.numpy(), ref.grad.numpy(), atol=tol * scale)
        np.testing.assert_allclose(we.grad.numpy(), rw.grad.numpy(), rtol=tol, atol=tol)


def test_fuse_conv_bn_eval():
    if not hasattr(ember.nn, "Conv2d"):
        pytest.skip("Conv2d is not available")
    from ember.nn.utils.fusion import fuse_conv_bn_eval

    conv = ember.nn.Conv2d(3, 4, 3, padding=1).eval()
    bn = ember.nn.BatchNorm2d(4)
    bn(ember.randn(5, 4, 6, 6) * 2 + 1)  # non-trivial running statistics
    bn.eval()
    x = ember.randn(2, 3, 6, 6)
    fused = fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(
        fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-5, atol=1e-5
    )


def test_names_survive_double_backward():
    x = ember.randn(3, 4, 5, names=("N", "C", "L"), requires_grad=True)
    w = ember.randn(5, requires_grad=True)
    F = ember.nn.functional
    for f in (
        lambda x: F.layer_norm(x, (5,), w),
        lambda x: F.batch_norm(x, None, None, w[:4], None, True),
        lambda x: F.group_norm(x, 2, w[:4]),
        lambda x: F.rms_norm(x, (5,), w),
    ):
        y = f(x)
        (g,) = ember.autograd.grad((y * y.detach().sin()).sum(), x, create_graph=True)
        assert y.names == g.names == ("N", "C", "L")
        (g * g).sum().backward()
        assert x.grad.names == x.names and w.grad is not None and w.grad.names == (None,)
        x.grad = w.grad = None
