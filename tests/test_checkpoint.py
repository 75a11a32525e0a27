"""utils.checkpoint against torch.utils.checkpoint: the recomputed backward gives torch's values
and gradients (both variants, autograd.grad, dropout's replayed random state, sequential
segments), keeps no activations, and refuses what torch refuses."""

import warnings

import ember
import numpy as np
import pytest
from harness import assert_same, needs_torch, raises_like_torch, torch

X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


def _ck(m):
    return ember.utils.checkpoint if m is ember else torch.utils.checkpoint


def _net(m, train=False):
    nn = m.nn
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 3))
    r = np.random.default_rng(1)
    with m.no_grad():
        for p in net.parameters():
            p.copy_(m.tensor(r.standard_normal(tuple(p.shape)).astype(np.float32)))
    return net.train(train)


def _run(m, reentrant, x_grad):
    net = _net(m)
    x = m.tensor(X, requires_grad=x_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = _ck(m).checkpoint(net, x, use_reentrant=reentrant)
    out = [y.detach(), m.tensor(y.requires_grad)]
    if y.requires_grad:
        (y * m.arange(15.0).reshape(5, 3)).sum().backward()
        out += [p.grad for p in net.parameters()] + ([x.grad] if x_grad else [])
    return out


@needs_torch
@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("x_grad", [True, False])
def test_checkpoint_like_torch(reentrant, x_grad):
    e, t = _run(ember, reentrant, x_grad), _run(torch, reentrant, x_grad)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert_same(a, b)


def _grad_through(m):
    net = _net(m)
    x = m.tensor(X, requires_grad=True)
    y = _ck(m).checkpoint(net, x, use_reentrant=False)
    return m.autograd.grad((y * y).sum(), [x, *net.parameters()])


@needs_torch
def test_autograd_grad_through_a_module_checkpoint():
    for a, b in zip(_grad_through(ember), _grad_through(torch)):
        assert_same(a, b)


def _dropout_replay(m):
    net = _net(m, train=True)
    x = m.tensor(X, requires_grad=True)
    m.manual_seed(5)
    y = _ck(m).checkpoint(net, x, use_reentrant=False)
    y.sum().backward()
    net2 = _net(m, train=True)
    x2 = m.tensor(X, requires_grad=True)
    m.manual_seed(5)
    net2(x2).sum().backward()
    return x.grad, x2.grad


def test_recomputation_replays_the_random_state():
    a, b = _dropout_replay(ember)
    assert ember.equal(a, b)


def _sequential(m):
    net = _net(m)
    x = m.tensor(X, requires_grad=True)
    y = _ck(m).checkpoint_sequential(net, 2, x, use_reentrant=False)
    y.sum().backward()
    return [y.detach(), x.grad, *[p.grad for p in net.parameters()]]


@needs_torch
def test_checkpoint_sequential_like_torch():
    for a, b in zip(_sequential(ember), _sequential(torch)):
        assert_same(a, b)


def test_no_activation_is_kept():
    import gc
    import weakref

    refs = []

    def block(a):
        h = (a * 2).sin()
        refs.append(weakref.ref(h))
        return h.exp()

    x = ember.tensor(X, requires_grad=True)
    y = ember.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    gc.collect()
    assert refs[0]() is None  # the graph kept no activation of the block
    y.sum().backward()
    x2 = ember.tensor(X, requires_grad=True)
    block(x2).sum().backward()
    assert_same(x.grad, x2.grad)


def _reentrant_grad(m):
    x = m.tensor(X, requires_grad=True)
    y = _ck(m).checkpoint(_net(m), x, use_reentrant=True)
    m.autograd.grad(y.sum(), x)


def test_reentrant_refuses_autograd_grad():
    raises_like_torch(
        _reentrant_grad, RuntimeError, "When use_reentrant=True, torch.utils.checkpoint is "
        "incompatible with .grad()"
    )  # fmt: skip


def test_reentrant_warns_when_no_input_needs_grad():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = ember.utils.checkpoint.checkpoint(_net(ember), ember.tensor(X), use_reentrant=True)
    assert not y.requires_grad
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed"):
        ember.utils.checkpoint.checkpoint(_net(ember), ember.tensor(X, requires_grad=True))


def _plain_function(m):
    lin = _net(m)[0]
    x = m.tensor(X, requires_grad=True)
    y = _ck(m).checkpoint(lambda a: lin(a).tanh() * 2, x, use_reentrant=False)
    gx, gw = m.autograd.grad((y * y).sum(), (x, lin.weight), create_graph=True)
    (gg,) = m.autograd.grad(gx.sum(), lin.bias)
    return gx, gw, gg


@needs_torch
def test_plain_function_autograd_grad_and_double_backward_like_torch():
    # the closure's parameters are reached through the graph, as in torch
    for a, b in zip(_plain_function(ember), _plain_function(torch)):
        assert_same(a, b)


def test_recomputation_saving_other_tensors_is_refused():
    calls = []

    def fn(a):
        calls.append(1)
        return a.exp() if len(calls) == 1 else a.exp().sin()

    # torch's early stop (the default) ends the recomputation at the last tensor needed, so
    # the extra saves are never reached; without it they are refused
    y = ember.utils.checkpoint.checkpoint(fn, ember.tensor(X, requires_grad=True),
                                          use_reentrant=False, early_stop=False)  # fmt: skip
    with pytest.raises(RuntimeError, match="trying to save more tensors during recomputation"):
        y.sum().backward()


@needs_torch
def test_hand_written_checkpoint_helpers_match_torch():
    # detach_variable / check_backward_validity / get_device_states: what custom checkpoint
    # code (older Megatron-style) imports from torch.utils.checkpoint
    def run(m):
        x = m.ones(2, requires_grad=True)
        y = m.ones(2)
        d, n, z = m.utils.checkpoint.detach_variable((x, 3, y))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.utils.checkpoint.check_backward_validity((y, 1))
            m.utils.checkpoint.check_backward_validity((x,))
        with pytest.raises(RuntimeError) as e:
            m.utils.checkpoint.detach_variable([x])
        devices = m.utils.checkpoint.get_device_states(x, y, 3)
        m.utils.checkpoint.set_device_states([], [])
        return (
            d is not x and d.requires_grad and d.is_leaf and d.data_ptr() == x.data_ptr(),
            n,
            z.requires_grad,
            [str(i.message) for i in w],
            str(e.value),
            devices,
        )

    assert run(ember) == run(torch)
