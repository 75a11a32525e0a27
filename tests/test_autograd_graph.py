"""ember.autograd.graph against torch.autograd.graph: saved-tensor hooks, save_on_cpu,
disable_saved_tensors_hooks, increment_version and the Node type."""

import gc
import weakref

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = np.linspace(-1, 1, 12).reshape(3, 4)
W = np.linspace(0.5, -0.5, 8).reshape(2, 4)


def _counting(m, log):
    def pack(t):
        log.append("pack")
        return t

    def unpack(t):
        log.append("unpack")
        return t

    return m.autograd.graph.saved_tensors_hooks(pack, unpack)


def test_hooks_run_where_torch_runs_them():
    logs = []
    for m in (ember, torch):
        log = []
        x = m.tensor(X, requires_grad=True)
        with _counting(m, log):
            y = (x * x).exp().sum()
        n_pack = len(log)
        y.backward()
        logs.append((n_pack, log.count("unpack"), x.grad.numpy()))
    assert logs[0][:2] == logs[1][:2] == (3, 3)  # x twice for mul, exp's result once
    np.testing.assert_allclose(logs[0][2], logs[1][2])


def _mlp(m, x, w):
    h = m.nn.functional.linear(x, w).relu()
    h = m.nn.functional.layer_norm(h, (2,))
    return (h.softmax(-1) * m.arange(1.0, 3.0, dtype=m.float64)).sum()


def test_gradients_through_packed_tensors_match_torch():
    grads = []
    for m in (ember, torch):
        store = {}

        def pack(t, store=store):  # a key into an outside store: the graph keeps no tensor
            store[len(store)] = t.detach().clone()
            return len(store) - 1

        def unpack(k, store=store):
            return store[k]

        x = m.tensor(X, requires_grad=True)
        w = m.tensor(W, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = _mlp(m, x, w)
        y.backward()
        assert store  # the hooks ran
        grads.append((x.grad.numpy(), w.grad.numpy()))
    for e, t in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-10)


def test_the_graph_keeps_only_what_pack_returned():
    x = ember.tensor(X, requires_grad=True)
    a = x * 2
    ref = weakref.ref(a)
    with ember.autograd.graph.saved_tensors_hooks(
        lambda t: t.detach().numpy().copy(), ember.tensor
    ):
        b = a.sin().sum()
    del a
    gc.collect()
    assert ref() is None  # without hooks the sin node would keep a alive
    b.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(2 * X))


def test_without_hooks_the_node_keeps_its_input():
    x = ember.tensor(X, requires_grad=True)
    a = x * 2
    ref = weakref.ref(a)
    b = a.sin().sum()
    del a
    gc.collect()
    assert ref() is not None
    b.backward()


@pytest.mark.parametrize("copy", [True, False])
def test_inplace_changes_of_packed_tensors_are_not_checked_like_torch(copy):
    grads = []
    for m in (ember, torch):
        x = m.tensor(X, requires_grad=True)
        a = x * 2
        pack = (lambda t: t.detach().clone()) if copy else (lambda t: t)
        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            b = a.sin().sum()
        a.add_(1)
        b.backward()  # the saved copy (or the changed tensor itself) is used, no error
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], 2 * np.cos(2 * X + (0 if copy else 1)))


def test_unpack_runs_at_each_backward_and_double_backward_works():
    for m in (ember, torch):
        log = []
        x = m.tensor(X, requires_grad=True)
        with _counting(m, log):
            y = (x**3).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 6 * X)
        assert log.count("pack") >= 1 and log.count("unpack") >= 1


def test_custom_function_saved_tensors_are_packed():
    results = []
    for m in (ember, torch):

        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g

        log = []
        x = m.tensor(X, requires_grad=True)
        with _counting(m, log):
            y = Cube.apply(x)
        y.sum().backward()
        results.append((log.count("pack"), log.count("unpack"), x.grad.numpy()))
    assert results[0][:2] == results[1][:2] == (1, 1)
    np.testing.assert_allclose(results[0][2], results[1][2])


def test_nested_hooks_the_innermost_packs():
    outer, inner = [], []
    x = ember.tensor(X, requires_grad=True)
    with _counting(ember, outer), _counting(ember, inner):
        y = x.exp().sum()
    y.backward()
    assert outer == [] and inner == ["pack", "unpack"]


def test_save_on_cpu_gives_torchs_gradients():
    grads = []
    for m in (ember, torch):
        x = m.tensor(X, requires_grad=True)
        w = m.tensor(W, requires_grad=True)
        with m.autograd.graph.save_on_cpu():
            y = _mlp(m, x, w)
        y.backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_errors_match_torch():
    for m in (ember, torch):
        graph = m.autograd.graph

        def hooks(graph=graph):
            return graph.saved_tensors_hooks(lambda t: t, lambda t: t)

        def disable(graph=graph):
            return graph.disable_saved_tensors_hooks("no hooks here")

        with pytest.raises(RuntimeError, match="no hooks here"), disable(), hooks():
            pass
        with pytest.raises(RuntimeError, match="no hooks here"), hooks(), disable():
            pass
        x = m.tensor(X, requires_grad=True)
        with graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = (x * x).sum()
        msg = (
            "Output of saved tensor unpack_hook expected to be a Tensor but got result of type int"
        )
        with pytest.raises(TypeError, match=msg):
            y.backward()


def test_increment_version_invalidates_saved_tensors_like_torch():
    for m in (ember, torch):
        x = m.tensor(X, requires_grad=True)
        a = x * 2
        b = (a * a).sum()
        m.autograd.graph.increment_version(a)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            b.backward()


def test_node_is_the_type_of_every_grad_fn():
    x = ember.tensor(X, requires_grad=True)
    y = (x * 2).sum()
    assert isinstance(y.grad_fn, ember.autograd.graph.Node)
    leaf_entry = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert isinstance(leaf_entry, ember.autograd.graph.Node)
    assert not isinstance(x, ember.autograd.graph.Node)


def _node_types(m):
    """Type names, modules and identities of the nodes a small graph gives, walked as torchviz
    walks it (``type(fn).__name__`` down ``next_functions``)."""
    x = m.tensor(X, requires_grad=True)

    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = (Twice.apply(x) @ m.tensor(W.T)).relu().sum()
    seen, todo = [], [y.grad_fn]
    while todo:
        fn = todo.pop()
        seen.append(type(fn).__name__)
        todo += [f for f, _ in fn.next_functions if f is not None]
    return (
        seen,
        type(y.grad_fn).__module__,
        type(y.grad_fn) is type((x * 3).sum().grad_fn),
        type(y.grad_fn) is type(x.sum(0).grad_fn),
    )


def test_grad_fn_types_are_named_like_torchs():
    assert _node_types(ember) == _node_types(torch)
    x = ember.tensor(X, requires_grad=True)
    assert issubclass(type(x.exp().grad_fn), ember.autograd.graph.Node)


def test_grad_fn_is_read_only():
    for m, where in ((ember, "ember.Tensor"), (torch, "torch._C.TensorBase")):
        y = m.tensor(X, requires_grad=True) * 2
        with pytest.raises(AttributeError, match=f"attribute 'grad_fn' of '{where}' objects is "):
            y.grad_fn = None


def _stale_view(m):
    a = m.tensor(X, requires_grad=True)
    b = a * 1
    v = b[1:]
    before = type(v.grad_fn).__name__
    b.mul_(2)
    with m.no_grad():
        after = type(v.grad_fn).__name__
    (v * m.tensor(X[1:] + 3)).sum().backward()
    return before, after, a.grad.tolist()


def _stale_split(m):
    b = m.tensor(X, requires_grad=True) * 1
    first = b.split(2)[0]
    b.mul_(2)
    return first


def test_a_stale_views_grad_fn_is_regenerated_when_read():
    assert _stale_view(ember) == _stale_view(torch)
    for m in (ember, torch):
        first = _stale_split(m)
        with pytest.raises(RuntimeError, match="Output 0 of Split is a view and its base"):
            first.grad_fn  # noqa: B018


def _multi(m, mode):
    graph = m.autograd.graph
    a = m.ones(2, requires_grad=True)
    b = m.full((2,), 2.0, requires_grad=True)
    c = a * 3
    log = []

    def fn(g):
        if mode == "any":
            log.append(g.tolist())
        else:
            log.append([None if x is None else x.tolist() for x in g])

    h = graph.register_multi_grad_hook((a, b, c), fn, mode=mode)
    (c * b).sum().backward(retain_graph=True)
    a.sum().backward()
    (c * b).sum().backward(inputs=[b])
    (a * b * 5).sum().backward()
    h.remove()
    (a * b).sum().backward()
    return log


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook_like_torch(mode):
    assert _multi(ember, mode) == _multi(torch, mode)


def test_register_multi_grad_hook_mode_error():
    for m in (ember, torch):
        with pytest.raises(ValueError, match="Expects mode to be one of \\('all', 'any'\\)"):
            m.autograd.graph.register_multi_grad_hook((m.ones(1),), print, mode="x")


def _edges(m):
    get = m.autograd.graph.get_gradient_edge
    x = m.tensor(X[0], requires_grad=True)
    y = x * 2
    z = (y**2).sum()
    e, leaf = get(y), get(x)
    out = [
        (type(e).__name__, e.node.name(), e.output_nr, e.ownership_token),
        (type(leaf.node).__name__, leaf.output_nr),
        get(m.ones(2, requires_grad=True).split(1)[1]).output_nr,
    ]
    out.append(m.autograd.grad(z, e, retain_graph=True)[0].tolist())
    out.append([g.tolist() for g in m.autograd.grad(z, [leaf, y, e, x], retain_graph=True)])
    unused = get(m.ones(2, requires_grad=True) * 3)
    out.append(m.autograd.grad(z, [unused], allow_unused=True, retain_graph=True))
    h = x * 1
    edge = get(h)
    h.mul_(3)  # the edge still names the gradient of h's old value
    out.append(m.autograd.grad((h * 2).sum(), edge)[0].tolist())
    return out


def test_gradient_edges_stand_for_tensors_in_autograd_grad():
    assert _edges(ember) == _edges(torch)


def test_gradient_edge_errors():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="not possible to get the gradient edge for a Te"):
            m.autograd.graph.get_gradient_edge(m.ones(2))
        y = m.ones(2, requires_grad=True) * 2
        unused = m.autograd.graph.get_gradient_edge(m.ones(2, requires_grad=True) * 3)
        with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given"):
            m.autograd.grad(y.sum(), [y, unused], materialize_grads=True)
