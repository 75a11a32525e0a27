"""Custom autograd Functions (ember.autograd.Function) against torch.autograd.Function."""

import warnings

import ember
import numpy as np
import pytest
from ember import autograd

torch = pytest.importorskip("torch")


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, shape)


def _close(e, t, atol=1e-8):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(e.detach()._data), t.detach().numpy(), atol=atol)


def make(m):
    """The same custom Functions, defined against module m (ember or torch)."""
    F = m.autograd.Function
    ns = {}

    class MulAdd(F):  # classic ctx style; a scalar option; saves inputs; grads written in m ops
        @staticmethod
        def forward(ctx, x, y, alpha=2.0):
            ctx.save_for_backward(x, y)
            ctx.alpha = alpha
            return x * y + x * alpha

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            gx = g * (y + ctx.alpha) if ctx.needs_input_grad[0] else None
            gy = g * x if ctx.needs_input_grad[1] else None
            return gx, gy, None

    class Cube(F):  # setup_context style, saves input, differentiable backward
        @staticmethod
        def forward(x):
            return x**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    class Split(F):  # two outputs
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * x

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 0  # g2 is a materialized zero when the 2nd output is unused

    class NoMaterialize(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ns["got"] = (g1 is None, g2 is None)
            (x,) = ctx.saved_tensors
            out = x * 0
            if g1 is not None:
                out = out + g1 * 2
            if g2 is not None:
                out = out + g2 * 3
            return out

    class NonDiff(F):
        @staticmethod
        def forward(ctx, x):
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(a)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            ns["ga_zero"] = not bool((ga != 0).any()) if hasattr(ga, "any") else None
            return gb * 3

    class Double_(F):  # in-place: doubles its input
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Identity(F):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Broadcast(F):  # backward returns a gradient of a broadcast shape
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).expand(4, *g.shape)

    class SaveOut(F):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * 2 * y**0.5

    ns.update(
        MulAdd=MulAdd,
        Cube=Cube,
        Split=Split,
        NoMaterialize=NoMaterialize,
        NonDiff=NonDiff,
        Double_=Double_,
        Identity=Identity,
        Broadcast=Broadcast,
        SaveOut=SaveOut,
    )
    return ns


E, T = make(ember), make(torch)


def both(fn, *arrays):
    e = [ember.tensor(a, requires_grad=True) for a in arrays]
    t = [torch.tensor(a, requires_grad=True) for a in arrays]
    return fn(E, ember, *e), fn(T, torch, *t), e, t


def _backward_parity(fn, *arrays, seed=9):
    eo, to, e, t = both(fn, *arrays)
    eo = eo if isinstance(eo, tuple) else (eo,)
    to = to if isinstance(to, tuple) else (to,)
    for a, b in zip(eo, to):
        _close(a, b)
    ups = [
        np.random.default_rng(seed + k).uniform(0.5, 1.5, tuple(b.shape)) for k, b in enumerate(to)
    ]
    autograd.backward(
        [a for a in eo if a.requires_grad],
        [ember.tensor(u) for a, u in zip(eo, ups) if a.requires_grad],
    )
    torch.autograd.backward(
        [b for b in to if b.requires_grad],
        [torch.tensor(u) for b, u in zip(to, ups) if b.requires_grad],
    )
    for a, b in zip(e, t):
        if b.grad is None:
            assert a.grad is None
        else:
            _close(a.grad, b.grad)
    return eo, to


PARITY = [
    ("muladd", lambda F, m, x, y: F["MulAdd"].apply(x, y), [(3, 4), (3, 4)]),
    ("muladd_alpha", lambda F, m, x, y: F["MulAdd"].apply(x * 1.5, y, 0.5), [(3,), (3,)]),
    (
        "muladd_in_graph",
        lambda F, m, x, y: (F["MulAdd"].apply(x * x, y) * y).sum(),
        [(2, 3), (2, 3)],
    ),
    ("cube_setup_context", lambda F, m, x: F["Cube"].apply(x), [(5,)]),
    ("split_both", lambda F, m, x: F["Split"].apply(x), [(3,)]),
    ("split_first_only", lambda F, m, x: F["Split"].apply(x)[0], [(3,)]),
    ("split_second_only", lambda F, m, x: F["Split"].apply(x)[1] * 1, [(3,)]),
    ("broadcast_grad", lambda F, m, x: F["Broadcast"].apply(x), [(3,)]),
    ("identity", lambda F, m, x: F["Identity"].apply(x) * 2, [(3,)]),
    ("save_output", lambda F, m, x: F["SaveOut"].apply(x * 1), [(3,)]),
]


@pytest.mark.parametrize("name,fn,shapes", PARITY, ids=[p[0] for p in PARITY])
def test_parity(name, fn, shapes):
    _backward_parity(fn, *[_arr(*s, seed=i) for i, s in enumerate(shapes)])


def test_kwargs_with_setup_context():
    class Scale(ember.autograd.Function):
        @staticmethod
        def forward(x, factor=3.0):
            return x * factor

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.factor = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor, None

    x = ember.tensor(_arr(3), requires_grad=True)
    Scale.apply(x, factor=5.0).sum().backward()
    np.testing.assert_allclose(x.grad._data, 5.0)
    x.grad = None
    Scale.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad._data, 3.0)


@pytest.mark.parametrize("name", ["MulAdd", "Cube", "SaveOut"])
def test_gradcheck_and_gradgradcheck(name):
    x = ember.tensor(_arr(3) + (3 if name == "SaveOut" else 0), requires_grad=True)
    y = ember.tensor(_arr(3, seed=1), requires_grad=True)
    if name == "MulAdd":
        fn, ins = (lambda a, b: E["MulAdd"].apply(a, b)), (x, y)
    else:
        fn, ins = (lambda a: E[name].apply(a)), (x,)
    assert autograd.gradcheck(fn, ins)
    assert autograd.gradgradcheck(fn, ins)


def test_double_backward_through_function():
    a = _arr(4)
    x, tx = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (g,) = autograd.grad(E["Cube"].apply(x).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(T["Cube"].apply(tx).sum(), tx, create_graph=True)
    _close(g, tg)
    (g2,) = autograd.grad(g.sum(), x)
    (tg2,) = torch.autograd.grad(tg.sum(), tx)
    _close(g2, tg2)


# ----------------------------------------------------------------------- the node and ctx
def test_grad_fn_name_next_functions_and_ctx_attributes():
    x = ember.tensor(_arr(3), requires_grad=True)
    y = ember.tensor(_arr(3, seed=1))
    out = E["MulAdd"].apply(x, y * 1, 0.5)
    tout = T["MulAdd"].apply(torch.ones(3, requires_grad=True), torch.ones(3), 0.5)
    assert out.grad_fn.name() == tout.grad_fn.name() == "MulAddBackward"
    assert "MulAddBackward" in repr(out.grad_fn)
    # one entry per tensor input (the float 0.5 has none), as torch's
    (acc, _), (none, _) = out.grad_fn.next_functions
    assert len(tout.grad_fn.next_functions) == 2
    assert acc.variable is x and none is None
    assert out.grad_fn.alpha == 0.5
    assert out.grad_fn.needs_input_grad == (True, False, False)
    sx, sy = out.grad_fn.saved_tensors
    assert sx is x and sy._data is not None
    assert out.requires_grad and not out.is_leaf


def test_forward_runs_without_grad_and_sees_needs_input_grad():
    seen = {}

    class Probe(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            seen["grad"] = ember.is_grad_enabled()
            seen["needs"] = ctx.needs_input_grad
            z = x * y
            seen["z_rg"] = z.requires_grad
            return z

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = ember.tensor(_arr(3), requires_grad=True)
    Probe.apply(x, ember.ones(3, dtype=ember.float64))
    assert seen == {"grad": False, "needs": (True, False), "z_rg": False}


def test_no_input_requires_grad_or_no_grad_mode():
    x = ember.tensor(_arr(3))
    assert not E["Cube"].apply(x).requires_grad
    xr = ember.tensor(_arr(3), requires_grad=True)
    with ember.no_grad():
        out = E["Cube"].apply(xr)
    assert not out.requires_grad and out.grad_fn is None


def test_identity_output_is_a_new_tensor():
    x = ember.tensor(_arr(3), requires_grad=True)
    y = E["Identity"].apply(x)
    assert y is not x and y.grad_fn.name() == "IdentityBackward" and x.is_leaf


def test_non_tensor_and_integer_outputs():
    class WithIndex(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, ember.tensor(3), "tag"

        @staticmethod
        def backward(ctx, g, gi, gs):
            assert gs is None
            return g * 2

    x = ember.tensor(_arr(3), requires_grad=True)
    y, i, s = WithIndex.apply(x)
    assert y.requires_grad and not i.requires_grad and s == "tag"
    y.sum().backward()
    np.testing.assert_allclose(x.grad._data, 2.0)


def test_set_materialize_grads_false():
    for F, m in ((E, ember), (T, torch)):
        x = m.tensor(_arr(3), requires_grad=True)
        _a, b = F["NoMaterialize"].apply(x)
        b.sum().backward()
        assert F["got"] == (True, False)
        np.testing.assert_allclose(np.asarray(x.grad.detach()), 3.0)


def test_mark_non_differentiable():
    x = ember.tensor(_arr(3), requires_grad=True)
    a, b = E["NonDiff"].apply(x)
    assert not a.requires_grad and b.requires_grad
    b.sum().backward()
    assert E["ga_zero"] is True
    np.testing.assert_allclose(x.grad._data, 3.0)


def test_mark_dirty_inplace():
    a = _arr(3)
    for F, m in ((E, ember), (T, torch)):
        x = m.tensor(a, requires_grad=True)
        h = x * 1
        v = h._version
        out = F["Double_"].apply(h)
        assert out is h and h._version == v + 2  # the op's own bump, then mark_dirty's
        assert h.grad_fn.name() == "Double_Backward"
        (h * h).sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad.detach()), 8 * a)


def test_mark_dirty_leaf_error():
    x = ember.tensor(_arr(3), requires_grad=True)
    tx = torch.tensor(_arr(3), requires_grad=True)
    with pytest.raises(RuntimeError) as te:
        T["Double_"].apply(tx)
    with pytest.raises(
        RuntimeError,
        match="^a leaf Variable that requires grad has been used in an in-place operation.$",
    ) as ee:
        E["Double_"].apply(x)
    assert str(ee.value) == str(te.value)


# ----------------------------------------------------------------------- errors like torch's
def _bad(m, grads, n_in=2):
    class Bad(m.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            return args[0] * 2

        @staticmethod
        def backward(ctx, g):
            return grads(g)

    return Bad


@pytest.mark.parametrize("case", ["too_many", "too_few", "non_tensor_input", "bad_shape"])
def test_backward_result_errors(case):
    grads = {
        "too_many": lambda g: (g, g, g),
        "too_few": lambda g: (g,),
        "non_tensor_input": lambda g: (g, g),
        "bad_shape": lambda g: (g.sum(), None),
    }[case]
    msgs = []
    for m in (torch, ember):
        x = m.tensor(_arr(3), requires_grad=True)
        second = 2.0 if case == "non_tensor_input" else m.ones(3)
        out = _bad(m, grads).apply(x, second)
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        msgs.append(str(e.value).replace("torch.", "").replace("ember.", ""))
    assert msgs[0] == msgs[1]


def test_too_many_grads_message():
    x = ember.tensor(_arr(3), requires_grad=True)

    class F(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    with pytest.raises(
        RuntimeError,
        match=r"^function FBackward returned an incorrect number of "
        r"gradients \(expected 2, got 3\)$",
    ):
        F.apply(x, x).sum().backward()


def test_extra_none_grads_allowed():
    x = ember.tensor(_arr(3), requires_grad=True)
    _bad(ember, lambda g: (g, None, None)).apply(x).sum().backward()
    np.testing.assert_allclose(x.grad._data, 1.0)


def test_saved_tensors_freed_and_modified():
    x = ember.tensor(_arr(3), requires_grad=True)
    tx = torch.tensor(_arr(3), requires_grad=True)
    out, tout = E["MulAdd"].apply(x, x * 1), T["MulAdd"].apply(tx, tx * 1)
    out.sum().backward()
    tout.sum().backward()
    for o in (out, tout):
        with pytest.raises(
            RuntimeError, match="^Trying to backward through the graph a second time"
        ):
            o.sum().backward()
        with pytest.raises(
            RuntimeError, match="^Trying to backward through the graph a second time"
        ):
            o.grad_fn.saved_tensors  # noqa: B018
    msgs = []
    for F, m in ((T, torch), (E, ember)):
        x = m.tensor(_arr(3), requires_grad=True)
        h = x * 1
        out = F["MulAdd"].apply(h, x)
        h.add_(1)
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_retain_graph_with_function():
    x = ember.tensor(_arr(3), requires_grad=True)
    y = E["Cube"].apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad._data, 6 * _arr(3) ** 2)


def test_legacy_instance_call_error():
    with pytest.raises(
        RuntimeError,
        match="^Legacy autograd function with non-static forward method is deprecated.",
    ):
        E["Cube"]()(ember.ones(2))


# ----------------------------------------------------------------------- once_differentiable
def _once(m):
    from_mod = m.autograd.function

    class Sq(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a**2

        @staticmethod
        @from_mod.once_differentiable
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            Sq.grad_mode = m.is_grad_enabled()
            return g * 2 * a

    return Sq


def test_once_differentiable():
    a = _arr(3)
    for m in (torch, ember):
        Sq = _once(m)
        x = m.tensor(a, requires_grad=True)
        v = m.ones(3, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(Sq.apply(x), x, v, create_graph=True)
        assert Sq.grad_mode is False
        np.testing.assert_allclose(np.asarray(g.detach()), 2 * a)
        assert g.requires_grad
        with pytest.raises(
            RuntimeError,
            match="^trying to differentiate twice a function that was "
            "marked with @once_differentiable$",
        ):
            g.sum().backward()
        # a plain first-order backward is fine
        x.grad = None
        Sq.apply(x).sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad.detach()), 2 * a)


# ----------------------------------------------------------------------- anomaly + hooks
def test_anomaly_nan_in_custom_backward():
    class NanBack(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = ember.tensor(_arr(3), requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with autograd.detect_anomaly():
            y = NanBack.apply(x)  # NANBACK-FORWARD
            with pytest.raises(
                RuntimeError,
                match="^Function 'NanBackBackward' returned nan values in its 0th output.$",
            ):
                y.sum().backward()
    msg = [str(m.message) for m in w if "Error detected in NanBackBackward" in str(m.message)]
    assert msg and "NANBACK-FORWARD" in msg[0]


def test_hooks_on_function_outputs():
    x = ember.tensor(_arr(3), requires_grad=True)
    y = E["Cube"].apply(x)
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(x.grad._data, 30 * _arr(3) ** 2)


def test_jacfwd_of_a_jvp_only_function():
    # ember's jacfwd runs in reverse mode, where a Function known only by its jvp has no rows
    # (they came out as zeros): such graphs are differentiated by columns, in forward mode
    class Sin(ember.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(y):
            return y.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.y = inputs[0]

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.y.cos()

    x = ember.tensor([[0.3, 1.2], [-0.7, 2.0]], dtype=ember.float64)
    jac = ember.func.jacfwd(lambda a, b: (Sin.apply(a) * b).sum(0), argnums=(0, 1))(x, x)
    c, s = np.cos(x.numpy()), np.sin(x.numpy())
    want_a = np.zeros((2, 2, 2))
    want_b = np.zeros((2, 2, 2))
    for i in range(2):
        for j in range(2):
            want_a[j, i, j] = c[i, j] * x.numpy()[i, j]
            want_b[j, i, j] = s[i, j]
    np.testing.assert_allclose(jac[0].numpy(), want_a, rtol=1e-12)
    np.testing.assert_allclose(jac[1].numpy(), want_b, rtol=1e-12)
    t = ember.func.jvp(Sin.apply, (x,), (ember.ones(2, 2, dtype=ember.float64),))[1]
    np.testing.assert_allclose(t.numpy(), c, rtol=1e-12)
