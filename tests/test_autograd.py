"""The autograd engine: backward/grad options, higher-order gradients, grad modes, hooks, leaf and
.grad semantics, long graphs, anomaly detection and torch's error messages (torch is the oracle)."""

import threading
import time
import warnings

import ember
import numpy as np
import pytest
from ember import autograd
from harness import same_error

torch = pytest.importorskip("torch")


def _arr(*shape, seed=0, low=-1.5, high=1.5):
    return np.random.default_rng(seed).uniform(low, high, shape)


def _leaf(a, mod=ember):
    return mod.tensor(a, requires_grad=True)


def _np(t):
    if isinstance(t, ember.Tensor):
        return np.asarray(t.detach()._data)
    return t.detach().numpy()


def _close(e, t, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(e), _np(t), atol=atol, rtol=1e-6)


def both(fn, *arrays):
    """Run ``fn(module, *leaves)`` in ember and torch on float64 leaves; return both leaf lists."""
    e = [_leaf(a) for a in arrays]
    t = [_leaf(a, torch) for a in arrays]
    return fn(ember, *e), fn(torch, *t), e, t


# ----------------------------------------------------------------------- backward / grad options
def test_backward_with_gradient():
    a, b = _arr(3, 4), _arr(4, 2, seed=1)
    g = _arr(3, 2, seed=2)

    def f(m, x, y):
        return (x @ y) * x.sum(1, keepdim=True)

    eo, to, e, t = both(f, a, b)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    for x, y in zip(e, t):
        _close(x.grad, y.grad)


def test_backward_retain_graph_and_freed_graph_error():
    x = _leaf(_arr(3))
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()  # allowed: the first call retained the graph
    tx = _leaf(_arr(3), torch)
    ty = (tx * tx).sum()
    ty.backward(retain_graph=True)
    ty.backward()
    _close(x.grad, tx.grad)
    with pytest.raises(
        RuntimeError,
        match=r"^Trying to backward through the graph a second time "
        r"\(or directly access saved tensors after they have "
        r"already been freed\)",
    ):
        y.backward()


def test_autograd_grad_freed_graph():
    x = _leaf(_arr(3))
    y = (x * x).sum()
    autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="Specify retain_graph=True if you need to backward"):
        autograd.grad(y, x)


def test_backward_create_graph_builds_graph():
    x = _leaf(_arr(3))
    tx = _leaf(_arr(3), torch)
    for m, v in ((ember, x), (torch, tx)):
        (v**3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    (g,) = autograd.grad(x.grad.sum(), x)
    (tg,) = torch.autograd.grad(tx.grad.sum(), tx)
    _close(g, tg)


def test_backward_inputs_restricts_accumulation():
    a, b = _arr(3), _arr(3, seed=1)

    def f(m, x, y):
        h = x * y
        return h, (h * x).sum()

    (eh, eo), (th, to), e, t = both(f, a, b)
    eo.backward(inputs=[e[0]], retain_graph=True)
    to.backward(inputs=[t[0]], retain_graph=True)
    assert e[1].grad is None and t[1].grad is None
    _close(e[0].grad, t[0].grad)
    # a non-leaf in inputs= gets its .grad like a leaf
    eo.backward(inputs=[eh])
    to.backward(inputs=[th])
    _close(eh.grad, th.grad)
    assert e[1].grad is None


def test_backward_inputs_empty_error():
    x = _leaf(_arr(3))
    with pytest.raises(
        RuntimeError, match="^`inputs` argument to `backward\\(\\)` cannot be empty.$"
    ):
        (x * 2).sum().backward(inputs=[])


def test_autograd_backward_function_multiple_roots():
    a = _arr(3)

    def f(m, x):
        return x * x, (x * 3).sum()

    (e1, e2), (t1, t2), e, t = both(f, a)
    g = _arr(3, seed=4)
    autograd.backward([e1, e2], [ember.tensor(g), None])
    torch.autograd.backward([t1, t2], [torch.tensor(g), None])
    _close(e[0].grad, t[0].grad)


def test_grad_grad_outputs_and_not_accumulated():
    a, b = _arr(2, 3), _arr(3, seed=1)
    go = _arr(2, seed=5)

    def f(m, x, y):
        return x @ y

    eo, to, e, t = both(f, a, b)
    ge = autograd.grad(eo, e, grad_outputs=ember.tensor(go))
    gt = torch.autograd.grad(to, t, grad_outputs=torch.tensor(go))
    for x, y in zip(ge, gt):
        _close(x, y)
    assert e[0].grad is None and e[1].grad is None
    assert not ge[0].requires_grad


def test_grad_allow_unused_and_materialize():
    x, y = _leaf(_arr(3)), _leaf(_arr(2))
    out = (x * 2).sum()
    with pytest.raises(
        RuntimeError,
        match="^The differentiated Tensor at index 1 appears to not "
        "have been used in the graph. Set allow_unused=True if "
        "this is the desired behavior.$",
    ):
        autograd.grad(out, [x, y], retain_graph=True)
    gx, gy = autograd.grad(out, [x, y], allow_unused=True, retain_graph=True)
    assert gy is None
    np.testing.assert_allclose(gx._data, 2.0)
    gx, gy = autograd.grad(out, [x, y], materialize_grads=True)
    assert gy.shape == y.shape and not gy._data.any()


def test_grad_input_not_requiring_grad():
    x = _leaf(_arr(3))
    with pytest.raises(
        RuntimeError, match="^One of the differentiated Tensors does not require grad$"
    ):
        autograd.grad((x * 2).sum(), [x, ember.ones(2)])


def test_grad_retain_graph():
    x = _leaf(_arr(3))
    y = (x**2).sum()
    (g1,) = autograd.grad(y, x, retain_graph=True)
    (g2,) = autograd.grad(y, x)
    np.testing.assert_allclose(g1._data, g2._data)


# ----------------------------------------------------------------------- higher order
def test_hessian_vector_product():
    a, v = _arr(4), _arr(4, seed=3)

    def f(m, x):
        return (x**3).sum() + (x * x).sum() * x.sum()

    eo, to, e, t = both(f, a)
    (ge,) = autograd.grad(eo, e, create_graph=True)
    (gt,) = torch.autograd.grad(to, t, create_graph=True)
    (he,) = autograd.grad(ge, e, grad_outputs=ember.tensor(v))
    (ht,) = torch.autograd.grad(gt, t, grad_outputs=torch.tensor(v))
    _close(he, ht)
    # the same through a dot product with v (a scalar second backward)
    eo, to, e, t = both(f, a)
    (ge,) = autograd.grad(eo, e, create_graph=True)
    (ge * ember.tensor(v)).sum().backward()
    _close(e[0].grad, ht)


def test_gradient_penalty():
    w, x = _arr(4, 3), _arr(5, 4, seed=1)

    def f(m, w, x):
        xi = x * 1.0
        out = ((xi @ w) ** 2).sum()
        (g,) = (ember if m is ember else torch).autograd.grad(out, xi, create_graph=True)
        norm = ((g**2).sum(1) + 1e-12) ** 0.5
        return ((norm - 1) ** 2).mean()

    eo, to, e, t = both(f, w, x)
    _close(eo, to)
    eo.backward()
    to.backward()
    for a, b in zip(e, t):
        _close(a.grad, b.grad)


def test_third_derivative():
    a = _arr(5)
    x = _leaf(a)
    y = (x**4).sum()
    (g1,) = autograd.grad(y, x, create_graph=True)
    (g2,) = autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(g1._data, 4 * a**3)
    np.testing.assert_allclose(g2._data, 12 * a**2)
    np.testing.assert_allclose(g3._data, 24 * a)


def test_double_backward_accumulates_into_grad():
    x = _leaf(np.array([1.5, -2.0]))
    y = (x**3).sum()
    y.backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(x.grad._data, 6 * np.array([1.5, -2.0]))


# ----------------------------------------------------------------------- grad modes
def test_no_grad_context_and_decorator():
    x = _leaf(_arr(3))
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        y = x * 2
    assert ember.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None

    @ember.no_grad()
    def f(v):
        return v * 2, ember.is_grad_enabled()

    z, flag = f(x)
    assert not flag and not z.requires_grad and ember.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = _leaf(_arr(3))
    with ember.no_grad():
        with ember.enable_grad():
            y = x * 2
        z = x * 2

    @ember.enable_grad()
    def f(v):
        return v * 3

    with ember.no_grad():
        w = f(x)
    assert y.requires_grad and not z.requires_grad and w.requires_grad


def test_set_grad_enabled_function_and_context():
    x = _leaf(_arr(3))
    try:
        ember.set_grad_enabled(False)
        assert not ember.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        ember.set_grad_enabled(True)
    assert ember.is_grad_enabled()
    with ember.set_grad_enabled(False):
        assert not ember.is_grad_enabled()
        with ember.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()


def test_inference_mode():
    x = _leaf(_arr(3))
    assert not ember.is_inference_mode_enabled()
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled() and not ember.is_grad_enabled()
        y = x * 2
    assert not y.requires_grad
    assert not ember.is_inference_mode_enabled() and ember.is_grad_enabled()

    @ember.inference_mode()
    def f(v):
        return v * 2

    assert not f(x).requires_grad
    with ember.inference_mode(False):
        assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    seen = []
    with ember.no_grad():
        th = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
        th.start()
        th.join()
        assert not ember.is_grad_enabled()
    assert seen == [True]


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError), ember.no_grad():
        raise ValueError
    assert ember.is_grad_enabled()


def test_grad_modes_exported_from_autograd():
    for n in (
        "no_grad",
        "enable_grad",
        "set_grad_enabled",
        "inference_mode",
        "is_grad_enabled",
        "is_inference_mode_enabled",
    ):
        assert getattr(autograd, n) is getattr(ember, n)


# ----------------------------------------------------------------------- leaves, detach, grad_fn
def test_requires_grad_and_is_leaf():
    x = ember.tensor(_arr(3))
    assert not x.requires_grad and x.is_leaf
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    with pytest.raises(
        RuntimeError,
        match="^you can only change requires_grad flags of leaf "
        "variables. If you want to use a computed variable in a "
        "subgraph that doesn't require differentiation use "
        r"var_no_grad = var.detach\(\).$",
    ):
        y.requires_grad_(False)
    with pytest.raises(
        RuntimeError, match="^only Tensors of floating point dtype can require gradients$"
    ):
        ember.tensor([1, 2]).requires_grad_()
    x.requires_grad_(False)
    assert not x.requires_grad


def test_detach_and_detach_():
    x = _leaf(_arr(3))
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.add_(1)  # shares storage and version counter with y
    np.testing.assert_allclose(y._data, d._data)
    assert y._version == d._version == 1
    z = x * 3
    assert z.detach_() is z
    assert not z.requires_grad and z.grad_fn is None and z.is_leaf


def test_grad_fn_name_and_next_functions():
    x = _leaf(_arr(3))
    c = ember.tensor(_arr(3))
    y = x * c
    z = y.sum()
    assert y.grad_fn.name() == "MulBackward0"
    assert z.grad_fn.name() == "SumBackward0"
    ty = _leaf(_arr(3), torch) * torch.tensor(_arr(3))
    assert ty.grad_fn.name() == "MulBackward0"
    assert z.grad_fn.next_functions == ((y.grad_fn, 0),)
    (acc, k), (none, k2) = y.grad_fn.next_functions
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x and k == 0
    assert none is None and k2 == 0
    assert x.grad_fn is None


def test_retain_grad():
    a = _arr(3)

    def f(m, x):
        h = x * x
        h.retain_grad()
        return h, (h * 3).sum()

    (eh, eo), (th, to), _e, _t = both(f, a)
    assert eh.retains_grad
    eo.backward()
    to.backward()
    _close(eh.grad, th.grad)
    x = _leaf(a)
    x.retain_grad()  # a leaf: a no-op
    with pytest.raises(
        RuntimeError, match="^can't retain_grad on Tensor that has requires_grad=False$"
    ):
        ember.ones(2).retain_grad()


def test_grads_accumulate_across_backward_calls():
    a = _arr(3)
    x, tx = _leaf(a), _leaf(a, torch)
    for _ in range(3):
        (x**2 * 2).sum().backward()
        (tx**2 * 2).sum().backward()
    _close(x.grad, tx.grad)
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad._data, 12 * a + 1)


def test_seed_gradient_not_aliased_into_grad():
    x = _leaf(_arr(3))
    g = ember.ones(3, dtype=ember.float64)
    x.backward(g)
    x.grad.add_(1)
    np.testing.assert_allclose(g._data, 1.0)


# ----------------------------------------------------------------------- hooks
def test_hook_on_leaf_modifies_grad_and_removes():
    a = _arr(3)
    x, tx = _leaf(a), _leaf(a, torch)
    he = x.register_hook(lambda g: g * 2)
    ht = tx.register_hook(lambda g: g * 2)
    (x * x).sum().backward()
    (tx * tx).sum().backward()
    _close(x.grad, tx.grad)
    he.remove()
    ht.remove()
    x.grad = tx.grad = None
    (x * x).sum().backward()
    (tx * tx).sum().backward()
    _close(x.grad, tx.grad)


def test_hook_on_non_leaf():
    a = _arr(3)
    seen = []

    def f(m, x):
        h = x * 3
        handle = h.register_hook(lambda g: (seen.append(1), g * 10)[1])
        return h, handle, (h * h).sum()

    (eh, handle, eo), (_th, _, to), e, t = both(f, a)
    eo.backward(retain_graph=True)
    to.backward()
    _close(e[0].grad, t[0].grad)
    assert eh.grad is None and seen == [1, 1]
    handle.remove()
    e[0].grad = None
    eo.backward()
    np.testing.assert_allclose(e[0].grad._data, 18 * a)  # no hook: 2*h*3


def test_hook_returning_none_observes():
    x = _leaf(_arr(3))
    got = []
    x.register_hook(lambda g: got.append(g.shape))
    (x * 2).sum().backward()
    assert got == [ember.Size([3])]
    np.testing.assert_allclose(x.grad._data, 2.0)


def test_hook_errors():
    with pytest.raises(
        RuntimeError, match="^cannot register a hook on a tensor that doesn't require gradient$"
    ):
        ember.ones(2).register_hook(lambda g: g)


# ----------------------------------------------------------------------- .grad assignment
def test_grad_assignment():
    x = _leaf(_arr(3))
    x.grad = ember.ones(3, dtype=ember.float64)
    np.testing.assert_allclose(x.grad._data, 1.0)
    x.grad = None
    assert x.grad is None
    x.grad = ember.zeros(3, dtype=ember.float64)
    del x.grad
    assert x.grad is None


@pytest.mark.parametrize(
    "shape,dtype",
    [
        ((4,), "float32"),
        ((2, 3), "float32"),
        ((3,), "float64"),
        ((3,), "float16"),
        ((3,), "int64"),
        ((3,), "bool"),
        ((4,), "float64"),
    ],
)
def test_grad_assignment_errors(shape, dtype):
    x = ember.ones(3, requires_grad=True)
    tx = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as te:
        tx.grad = torch.zeros(shape, dtype=getattr(torch, dtype))
    with pytest.raises(RuntimeError) as ee:
        x.grad = ember.zeros(shape, dtype=getattr(ember, dtype))
    assert str(ee.value) == str(te.value)


def test_grad_assignment_type_error():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(
        TypeError, match="^assigned grad expected to be a Tensor or None but got grad of type int$"
    ):
        x.grad = 3


# ----------------------------------------------------------------------- long graphs
def test_long_chain_no_recursion():
    x = ember.tensor([1.0], requires_grad=True)
    y = x
    n = 100_000
    t0 = time.perf_counter()
    for _ in range(n):
        y = y * 1.0
    y.sum().backward()
    dt = time.perf_counter() - t0
    np.testing.assert_allclose(x.grad._data, [1.0])
    assert dt < 20, f"100k-op chain took {dt:.1f}s"
    del y  # dropping a deep graph must not recurse either


def test_long_chain_double_backward_and_grad():
    x = ember.tensor([2.0], requires_grad=True)
    y = x
    for _ in range(2000):
        y = y + x * 0.001
    (g,) = autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g._data, [1 + 2000 * 0.001], rtol=1e-4)


def test_diamond_graph_gradients_summed():
    a = _arr(3)

    def f(m, x):
        h = x * 2
        return (h * h + h * 3 + h).sum()

    eo, to, e, t = both(f, a)
    eo.backward()
    to.backward()
    _close(e[0].grad, t[0].grad)


def test_broadcast_gradients_reduced():
    a, b = _arr(3, 4), _arr(4, seed=1)

    def f(m, x, y):
        return ((x * y + y) ** 2).sum()

    eo, to, e, t = both(f, a, b)
    eo.backward()
    to.backward()
    for x, y in zip(e, t):
        _close(x.grad, y.grad)


def test_float32_grads_stay_float32():
    x = ember.tensor(_arr(3).astype(np.float32), requires_grad=True)
    (x * 2.5).sum().backward()
    assert x.grad.dtype == ember.float32


# ----------------------------------------------------------------------- errors
def test_inplace_on_leaf_error():
    x = _leaf(_arr(3))
    with pytest.raises(
        RuntimeError,
        match="^a leaf Variable that requires grad is being used in an in-place operation.$",
    ):
        x.add_(1)
    with ember.no_grad():
        x.add_(1)  # allowed under no_grad


@pytest.mark.parametrize("case", ["input", "leaf"])
def test_saved_tensor_modified_inplace_error(case):
    def f(m, x):
        if case == "input":  # y is saved by y * y, then changed (its grad_fn becomes Add)
            y = x * 2
            z = y * y
            y.add_(1)
        else:  # a leaf saved by mul, changed under no_grad
            z = x * x
            with m.no_grad():
                x.add_(1)
        return z.sum()

    eo, to, _, _ = both(f, _arr(3))
    with pytest.raises(RuntimeError) as te:
        to.backward()
    with pytest.raises(RuntimeError) as ee:
        eo.backward()
    assert str(ee.value) == str(te.value)


def test_nonscalar_backward_error():
    x = _leaf(_arr(3))
    with pytest.raises(
        RuntimeError, match="^grad can be implicitly created only for scalar outputs$"
    ):
        (x * 2).backward()


def test_backward_not_requiring_grad_error():
    with pytest.raises(
        RuntimeError,
        match="^element 0 of tensors does not require grad and does not have a grad_fn$",
    ):
        ember.ones(2).sum().backward()


def test_backward_gradient_shape_mismatch():
    x = _leaf(_arr(3))
    with pytest.raises(RuntimeError, match=r"^Mismatch in shape: grad_output\[0\] has a shape of "):
        (x * 2).backward(ember.ones(4, dtype=ember.float64))


# ----------------------------------------------------------------------- anomaly detection
def test_anomaly_nan_names_op_and_forward_trace():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with autograd.detect_anomaly():
            assert autograd.is_anomaly_enabled()
            y = x.pow(0.5)  # FORWARD-LINE-MARKER
            with pytest.raises(
                RuntimeError,
                match="^Function 'PowBackward0' returned nan values in its 0th output.$",
            ):
                (y * ember.tensor([0.0, 1.0])).sum().backward()
    assert not autograd.is_anomaly_enabled()
    msgs = [str(m.message) for m in w]
    assert any("Anomaly Detection has been enabled" in m for m in msgs)
    trace = [
        m
        for m in msgs
        if m.startswith(
            "Error detected in PowBackward0. Traceback of forward call that caused the error:"
        )
    ]
    assert trace and "FORWARD-LINE-MARKER" in trace[0] and "test_autograd.py" in trace[0]


def test_anomaly_same_error_as_torch():
    tx = torch.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(), pytest.raises(RuntimeError) as te:
            (tx.pow(0.5) * torch.tensor([0.0, 1.0])).sum().backward()
        x = ember.tensor([0.0, 1.0], requires_grad=True)
        with autograd.detect_anomaly(), pytest.raises(RuntimeError) as ee:
            (x.pow(0.5) * ember.tensor([0.0, 1.0])).sum().backward()
    assert str(ee.value) == str(te.value)


def test_anomaly_log_backward_like_torch():
    msgs = []
    for m in (torch, ember):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                y = x.log()
                with pytest.raises(RuntimeError) as e:
                    (y * 0).sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "Function 'LogBackward0' returned nan values in its 0th output."


def test_anomaly_check_nan_off_and_set_detect_anomaly():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly(check_nan=False):
            (x.pow(0.5) * ember.tensor([0.0, 1.0])).sum().backward()
    assert np.isnan(x.grad._data[0])
    autograd.set_detect_anomaly(True)
    try:
        assert autograd.is_anomaly_enabled()
    finally:
        autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()
    with autograd.set_detect_anomaly(True):
        assert autograd.is_anomaly_enabled()
    assert not autograd.is_anomaly_enabled()


def test_anomaly_decorator_and_no_forward_info():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    y = x.pow(0.5)  # recorded outside anomaly mode: no forward trace

    @autograd.detect_anomaly()
    def run():
        (y * ember.tensor([0.0, 1.0])).sum().backward()

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="returned nan values"):
            run()
    assert any("No forward pass information available" in str(m.message) for m in w)


def test_anomaly_reports_other_backward_errors():
    x = _leaf(_arr(3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with autograd.detect_anomaly():
            y = x * 2
            z = y * y
            y.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                z.sum().backward()
    assert any(str(m.message).startswith("Error detected in MulBackward0") for m in w)


def test_no_anomaly_overhead_state():
    x = _leaf(_arr(3))
    assert (x * 2).grad_fn.trace is None


def test_retain_grad_sees_hooks_registered_later():
    a = _arr(3)
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        h = x * 2
        h.retain_grad()
        h.register_hook(lambda g: g * 10)
        (h * h).sum().backward()
        np.testing.assert_allclose(_np(h.grad), 40 * a)
        np.testing.assert_allclose(_np(x.grad), 80 * a)


def test_grad_duplicate_and_mixed_inputs():
    a = _arr(3)

    def f(m, x):
        h = x * 2
        y = (h * h).sum()
        return m.autograd.grad(y, [h, x, x])

    eo, to, _, _ = both(f, a)
    for e, t in zip(eo, to):
        _close(e, t)


def test_leaf_hooks_run_for_autograd_grad():
    a = _arr(3)
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        x.register_hook(lambda g: g * 3)
        (g,) = m.autograd.grad((x * x).sum(), x)
        np.testing.assert_allclose(_np(g), 6 * a)
        assert x.grad is None


def test_post_accumulate_grad_hook():
    x = _leaf(_arr(3))
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda p: seen.append(_np(p.grad).copy()))
    (x * 2).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], 2.0)
    h.remove()
    (x * 2).sum().backward()
    assert len(seen) == 1
    with pytest.raises(
        RuntimeError, match="^post accumulate grad hooks cannot be registered on non-leaf tensors$"
    ):
        (x * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_backward_on_leaf_and_multiple_roots_sharing_graph():
    a = _arr(3)

    def f(m, x):
        p = x * 2
        q = p * 3
        m.autograd.backward([p.sum(), q.sum()])
        return x.grad

    eo, to, _, _ = both(f, a)
    _close(eo, to)
    x = ember.tensor(3.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def _decorator_forms(m):
    @m.set_grad_enabled(False)
    def f():
        return m.is_grad_enabled()

    assert m.is_grad_enabled()  # decorating does not switch the mode
    assert f() is False and m.is_grad_enabled()

    @m.no_grad
    def g():
        return m.is_grad_enabled()

    @m.inference_mode
    def h():
        return m.is_inference_mode_enabled()

    @m.enable_grad
    def k():
        return m.is_grad_enabled()

    assert g() is False and h() is True
    with m.no_grad():
        assert k() is True
    assert m.is_grad_enabled() and not m.is_inference_mode_enabled()


@pytest.mark.parametrize("mod", ["torch", "ember"])
def test_grad_mode_decorator_forms(mod):
    _decorator_forms(torch if mod == "torch" else ember)


def test_complex_gradient_into_real_input_keeps_real_part_without_warning():
    import warnings

    grads = []
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            (x * m.tensor([1 + 2j, 3 - 1j])).abs().sum().backward()
        grads.append(x.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda w: w.sum(),  # the gradient is a broadcast (read-only, stride-0) view of a scalar
        lambda w: (w * ember.ones(3)).sum(),
        lambda w: w.expand(4, 2, 3).sum(),
    ],
)
def test_leaf_grad_is_writable_in_place(make):
    # torch stores a fresh tensor in .grad: in-place ops on it (zero_, mul_, clipping) work
    w = ember.ones(2, 3, requires_grad=True)
    make(w).backward()
    before = w.grad.numpy().copy()
    w.grad.mul_(2).add_(1)
    np.testing.assert_array_equal(w.grad.numpy(), before * 2 + 1)
    w.grad.zero_()
    assert w.grad.abs().sum().item() == 0.0


# ---------------------------------------------------------------------- gradcheck, complex
_CPLX_GRADCHECK = {
    "complex_in_out": (lambda z: z.exp() * z.sin(), ("c",)),
    "real_in_complex_out": (lambda x: x * (1 + 2j), ("r",)),
    "complex_in_real_out": (lambda z: z.abs(), ("c",)),
    "mixed_inputs": (lambda z, x: (z * x).sum(), ("c", "r")),
    "conj": (lambda z: z * z.conj(), ("c",)),
}


def _gc_inputs(m, kinds):
    rng = np.random.default_rng(3)
    out = []
    for k in kinds:
        a = rng.standard_normal(4) + (1j * rng.standard_normal(4) if k == "c" else 0)
        out.append(m.tensor(a, requires_grad=True))
    return tuple(out)


@pytest.mark.parametrize("name", list(_CPLX_GRADCHECK))
def test_gradcheck_complex_like_torch(name):
    # the imaginary parts count: of the numerical Jacobian (no ComplexWarning) and of the inputs
    fn, kinds = _CPLX_GRADCHECK[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        assert ember.autograd.gradcheck(fn, _gc_inputs(ember, kinds))
    if torch is not None:
        assert torch.autograd.gradcheck(fn, _gc_inputs(torch, kinds))


def test_gradcheck_complex_catches_a_wrong_imaginary_gradient():
    def bad(m):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                return z * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2j  # right modulus, wrong phase

        return Bad.apply

    mods = (ember,) if torch is None else (ember, torch)
    for m in mods:
        z = _gc_inputs(m, ("c",))
        assert not m.autograd.gradcheck(bad(m), z, raise_exception=False)


def test_gradgradcheck_complex_like_torch():
    fn = _CPLX_GRADCHECK["complex_in_out"][0]
    assert ember.autograd.gradgradcheck(fn, _gc_inputs(ember, ("c",)))
    if torch is not None:
        assert torch.autograd.gradgradcheck(fn, _gc_inputs(torch, ("c",)))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, y: y.backward(2.0),
        lambda m, y: y.backward([1.0]),
        lambda m, y: m.autograd.backward(y, 2.0),
        lambda m, y: m.autograd.backward([y], [2.0]),
        lambda m, y: m.autograd.grad(y, y, 2.0),
    ],
)
def test_gradients_must_be_tensors_as_torchs(call):
    # ember turned numbers into gradient tensors; torch refuses them
    same_error(lambda m: call(m, (m.ones(2, requires_grad=True) * 2).sum()), TypeError)
