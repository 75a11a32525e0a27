"""Tensor, node and leaf hooks, in-place .grad accumulation, grad modes on generators: each
checked against torch (the oracle)."""

from __future__ import annotations

import ember
import pytest
from harness import assert_same, needs_torch, raises_like_torch, torch


def both(fn):
    """fn(module) in ember and torch: the results, to compare."""
    return fn(ember), fn(torch)


def _same_lists(e, t):
    assert len(e) == len(t)
    for a, b in zip(e, t):
        if isinstance(a, list):
            _same_lists(a, b)
        else:
            assert_same(a, b)


# ---------------------------------------------------------------- leaf hooks: once on the sum


@needs_torch
def test_leaf_hook_runs_once_on_summed_grad():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        calls = []
        x.register_hook(lambda g: (calls.append(g.clone()), g.clamp(max=1.0))[1])
        (x * x).sum().backward()
        return [x.grad, *calls]

    _same_lists(*both(run))


@needs_torch
def test_leaf_hook_adds_once_over_several_uses():
    def run(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x.register_hook(lambda g: g + 1)
        (x.sin() + x.cos() + x * x).sum().backward()
        return [x.grad]

    _same_lists(*both(run))


@needs_torch
def test_leaf_hook_once_in_autograd_grad():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        calls = []
        x.register_hook(lambda g: (calls.append(g.clone()), g.clamp(max=1.0))[1])
        (g,) = T.autograd.grad((x * x).sum(), x)
        return [g, *calls]

    _same_lists(*both(run))


@needs_torch
def test_leaf_hook_once_when_leaf_is_also_a_root():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        calls = []
        x.register_hook(lambda g: (calls.append(g.clone()), g * 2)[1])
        T.autograd.backward([x, x * 3], [T.ones(2), T.tensor([1.0, 0.5])])
        return [x.grad, *calls]

    _same_lists(*both(run))


@needs_torch
def test_post_accumulate_grad_hook_sees_the_full_grad():
    def run(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen = []
        x.register_hook(lambda g: g * 2)
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (x * x + x).sum().backward()
        return [x.grad, *seen]

    _same_lists(*both(run))


# ---------------------------------------------------------------- hooks must keep size and type


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "nonleaf"])
def test_hook_changing_size_raises(leaf):
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x if leaf else x * 2
        y.register_hook(lambda g: T.ones(3))
        (y * 1).sum().backward()

    raises_like_torch(run, RuntimeError, "hook '<lambda>' has changed the size of value")


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "nonleaf"])
def test_hook_changing_dtype_raises(leaf):
    def cast(g):
        return g.double()

    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x if leaf else x * 2
        y.register_hook(cast)
        (y * 1).sum().backward()

    raises_like_torch(
        run,
        RuntimeError,
        "hook 'cast' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)",
    )


# ---------------------------------------------------------------- node post hooks


@needs_torch
def test_node_post_hook_return_replaces_grad_inputs():
    def run(T):
        x = T.tensor([0.0, 1.0], requires_grad=True)
        y = x.exp()
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10,))
        y.sum().backward()
        return [x.grad]

    _same_lists(*both(run))


@needs_torch
def test_node_post_hook_sees_input_shapes_and_none_drops_a_grad():
    def run(T):
        a = T.ones(3, requires_grad=True)
        b = T.tensor(2.0, requires_grad=True)
        c = T.tensor(5.0, requires_grad=True)
        y = a * b
        shapes = []

        def hook(gi, go):
            shapes.append([list(g.shape) for g in gi])
            return (gi[0] * 10, None)

        y.grad_fn.register_hook(hook)
        (y * c).sum().backward()
        return shapes, [a.grad], b.grad

    (es, eg, eb), (ts, tg, tb) = both(run)
    assert es == ts
    _same_lists(eg, tg)
    assert eb is None and tb is None


def test_node_post_hook_wrong_count_raises():
    def run(T):
        a = T.ones(3, requires_grad=True)
        b = T.tensor(2.0, requires_grad=True)
        y = a * b
        y.grad_fn.register_hook(lambda gi, go: (gi[0],))
        y.sum().backward()

    raises_like_torch(
        run,
        RuntimeError,
        "hook '<lambda>' has returned an incorrect number of values (got 1, but expected 2)",
    )


# ---------------------------------------------------------------- .grad accumulates in place


@needs_torch
def test_grad_accumulates_in_place():
    def run(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * 2).sum().backward()
        g = x.grad
        v = g._version
        (x * x).sum().backward()
        return g is x.grad, g._version > v, g

    (ei, ev, eg), (ti, tv, tg) = both(run)
    assert (ei, ev) == (ti, tv) == (True, True)
    assert_same(eg, tg)


@needs_torch
def test_grad_out_of_place_under_create_graph():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward(create_graph=True)
        g = x.grad
        (x * x).sum().backward(create_graph=True)
        return g is x.grad, g.detach(), x.grad.detach()

    (ei, eg, ex), (ti, tg, tx) = both(run)
    assert ei == ti
    assert_same(eg, tg)
    assert_same(ex, tx)


@needs_torch
def test_in_place_accumulation_leaves_the_callers_grad_alone():
    # the first backward's gradient is a view of the caller's `up`: torch stores that view as
    # x.grad and the second backward then doubles `up` too; ember copies, so `up` stays as given
    def run(T):
        x = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        up = T.tensor([[1.0, 2.0], [3.0, 4.0]])
        x.reshape(2, 2).backward(up)
        x.reshape(2, 2).backward(up)
        return x.grad, up

    (eg, eup), (tg, _) = both(run)
    assert_same(eg, tg)
    assert eup.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@needs_torch
def test_in_place_accumulation_keeps_leaves_apart():
    # one gradient array reaches two leaves (directly, and as a view)
    def run(T):
        w = T.zeros(2, 2, requires_grad=True)
        x = T.zeros(4, requires_grad=True)
        for _ in range(2):
            (w + x.reshape(2, 2)).backward(T.tensor([[1.0, 2.0], [3.0, 4.0]]))
        return [w.grad, x.grad]

    _same_lists(*both(run))


@needs_torch
def test_in_place_accumulation_keeps_retained_grad_apart():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x + 0
        y.retain_grad()
        y.sum().backward(retain_graph=True)
        yg = y.grad
        (x * 3).sum().backward()
        return [x.grad, yg]

    _same_lists(*both(run))


@needs_torch
def test_in_place_accumulation_leaves_hook_seen_grads_alone():
    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        return [x.grad, *seen]

    _same_lists(*both(run))


@needs_torch
def test_in_place_accumulation_leaves_custom_function_grads_alone():
    def run(T):
        keep = T.tensor([1.0, 1.0])

        class Fn(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return keep

        x = T.tensor([1.0, 2.0], requires_grad=True)
        Fn.apply(x).sum().backward()
        Fn.apply(x).sum().backward()
        return [x.grad, keep]

    _same_lists(*both(run))


@needs_torch
def test_zero_grad_keeps_the_grad_object():
    def run(T):
        w = T.nn.Parameter(T.tensor([1.0, 2.0]))
        opt = T.optim.SGD([w], lr=0.1)
        (w * 2).sum().backward()
        g = w.grad
        opt.zero_grad(set_to_none=False)
        (w * w).sum().backward()
        return g is w.grad, g

    (ei, eg), (ti, tg) = both(run)
    assert ei == ti
    assert_same(eg, tg)


# ---------------------------------------------------------------- grad modes on generators


@needs_torch
@pytest.mark.parametrize(
    "mode,outer",
    [
        ("no_grad", True),
        ("enable_grad", False),
        ("inference_mode", True),
        ("set_grad_enabled_false", True),
    ],
)
def test_grad_mode_decorates_generators(mode, outer):
    def run(T):
        deco = {
            "no_grad": lambda: T.no_grad(),
            "enable_grad": lambda: T.enable_grad(),
            "inference_mode": lambda: T.inference_mode(),
            "set_grad_enabled_false": lambda: T.set_grad_enabled(False),
        }[mode]()

        @deco
        def gen(x):
            got = yield x * 2
            yield (x * got).requires_grad
            return "done"

        x = T.ones(2, requires_grad=True)
        out = []
        with T.set_grad_enabled(outer):
            g = gen(x)
            out.append(next(g).requires_grad)
            out.append(g.send(3.0))
            out.append((x * 2).requires_grad)  # the caller's mode between resumptions
            with pytest.raises(StopIteration) as e:
                next(g)
            out.append(e.value.value)
        return out

    assert run(ember) == run(torch)


def test_grad_mode_generator_restores_mode():
    @ember.no_grad()
    def gen():
        yield ember.is_grad_enabled()

    g = gen()
    assert next(g) is False
    assert ember.is_grad_enabled() is True
    g.close()


# ---------------------------------------------------------------- gradcheck inputs, Variable


@needs_torch
@pytest.mark.parametrize("kw", [{"raise_exception": False}, {"eps": 1e-2, "atol": 1e-2}])
def test_gradcheck_float32_warns_and_runs(kw):
    import warnings

    def run(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            ok = T.autograd.gradcheck(lambda t: t * 2, (x,), **kw)
        return ok, [(w.category, str(w.message)) for w in ws]

    assert run(ember) == run(torch)


@pytest.mark.parametrize("fn", ["gradcheck", "gradgradcheck"])
def test_gradcheck_needs_an_input_requiring_grad(fn):
    raises_like_torch(
        lambda T: getattr(T.autograd, fn)(lambda t: t * 2, (T.ones(2, dtype=T.float64),)),
        ValueError,
        "gradcheck expects at least one input tensor to require gradient, but none of them "
        "have requires_grad=True.",
    )


@needs_torch
def test_variable_is_a_detached_alias():
    def run(T):
        from_ = T.autograd.Variable
        x = T.ones(2, requires_grad=True)
        y = x * 2
        v = from_(y)
        w = from_(T.ones(2), requires_grad=True)
        return (
            v is y, v.requires_grad, v.grad_fn is None, w.requires_grad, w.is_leaf,
            isinstance(T.ones(1), from_), tuple(from_().shape),
        )  # fmt: skip

    assert run(ember) == run(torch)


def test_variable_errors():
    raises_like_torch(
        lambda T: T.autograd.Variable([1.0]),
        TypeError,
        "Variable data has to be a tensor, but got list",
    )
    raises_like_torch(
        lambda T: T.autograd.Variable(T.ones(2, dtype=T.int64), requires_grad=True),
        RuntimeError,
        "Only Tensors of floating point and complex dtype can require gradients",
    )
