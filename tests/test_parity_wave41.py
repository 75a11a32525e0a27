"""Parity regressions found by the forty-first wave, a sweep of piecewise-linear ops in
higher-order gradients (for each op: ``x.grad`` after a double backward, ``autograd.grad`` of
the first derivative with and without ``allow_unused``/``materialize_grads``, that derivative's
``requires_grad`` and grad_fn name, and the realistic uses: a WGAN-GP gradient penalty with
respect to the inputs and to the parameters, Hessian-vector products of ReLU networks,
``func.hessian``/``jacrev`` and a strict ``autograd.functional.hessian`` of them; torch is the
oracle): torch computes the derivative of relu, threshold, leaky_relu (and rrelu in eval),
hardtanh (relu6), hardshrink, softshrink, prelu, nll_loss and of the p = 1 and p = inf vector
norms (``norm``, ``linalg.vector_norm``, ``dist``) with a function of the input whose own
derivative is a zero tensor, so under ``create_graph`` that derivative stays connected to the
input: a second derivative there is zeros. Ember's did not depend on the input, so ``x.grad``
stayed None after ``g.sum().backward()``, ``autograd.grad`` raised "One of the differentiated
Tensors appears to not have been used in the graph" (None with ``allow_unused``), a strict
hessian raised, and for most of them the first derivative did not even require grad where
torch's has a grad_fn (``LeakyReluBackwardBackward0``, ...). Found on the way:
``Tensor.hardshrink`` turned NaN into 0, and ``Tensor.prelu`` had slope 1 at 0 (torch's kernel:
the weight), a ``WhereBackward0`` node and no dtype check."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = np.array([[-1.5, 0.3, 2.0], [0.7, -0.2, 1.1]])
W = np.linspace(0.5, 1.5, 6).reshape(2, 3)  # a non-uniform weight on the first derivative


def _f(lib):
    return lib.nn.functional


OPS = {
    "relu": lambda L, x: L.relu(x),
    "relu_method": lambda L, x: x.relu(),
    "F.relu": lambda L, x: _f(L).relu(x),
    "relu_inplace": lambda L, x: _f(L).relu(x * 1, inplace=True),
    "hinge": lambda L, x: (1 - x).relu(),
    "threshold": lambda L, x: _f(L).threshold(x, 0.5, 2.0),
    "threshold_": lambda L, x: _f(L).threshold(x * 1, 0.5, 2.0, inplace=True),
    "leaky_relu": lambda L, x: _f(L).leaky_relu(x, 0.1),
    "leaky_relu_": lambda L, x: _f(L).leaky_relu(x * 1, 0.1, inplace=True),
    "rrelu_eval": lambda L, x: _f(L).rrelu(x, training=False),
    "hardtanh": lambda L, x: _f(L).hardtanh(x),
    "hardtanh_": lambda L, x: _f(L).hardtanh(x * 1, inplace=True),
    "relu6": lambda L, x: _f(L).relu6(x),
    "hardshrink": lambda L, x: _f(L).hardshrink(x, 0.5),
    "hardshrink_method": lambda L, x: x.hardshrink(0.5),
    "softshrink": lambda L, x: _f(L).softshrink(x, 0.5),
    "prelu": lambda L, x: _f(L).prelu(x, L.tensor([0.25, 0.5, 2.0], dtype=x.dtype)),
    "prelu_method": lambda L, x: x.prelu(L.tensor([0.3], dtype=x.dtype)),
    "nll_loss": lambda L, x: _f(L).nll_loss(x, L.tensor([0, 2])),
    "nll_loss_none": lambda L, x: _f(L).nll_loss(x, L.tensor([1, 2]), reduction="none"),
    "nll_loss_4d": lambda L, x: _f(L).nll_loss(x.reshape(1, 2, 3, 1), L.tensor([[[1], [0], [1]]])),
    "norm1": lambda L, x: x.norm(1),
    "norm_inf": lambda L, x: x.norm(float("inf")),
    "norm_ninf": lambda L, x: x.norm(float("-inf")),
    "vector_norm1": lambda L, x: L.linalg.vector_norm(x, 1),
    "vector_norm_inf_dim": lambda L, x: L.linalg.vector_norm(x, float("inf"), dim=1),
    "matrix_norm1": lambda L, x: L.linalg.matrix_norm(x, 1),
    "dist1": lambda L, x: L.dist(x, L.zeros_like(x), 1),
    "dist_inf": lambda L, x: L.dist(x, L.zeros_like(x), float("inf")),
    "pairwise_distance1": lambda L, x: _f(L).pairwise_distance(x, x.flip(0), 1),
    "l1_loss": lambda L, x: _f(L).l1_loss(x, L.zeros_like(x)),
    "abs": lambda L, x: x.abs(),
    # torch leaves these off the graph (a boolean mask): ember must too
    "clamp": lambda L, x: x.clamp(-1, 1),
    "max": lambda L, x: x.max(),
    "max_dim": lambda L, x: x.max(1).values,
    "maximum": lambda L, x: L.maximum(x, L.zeros_like(x)),
    "sort": lambda L, x: x.sort(1).values,
}
# where torch's first derivative does not depend on the input
DETACHED = {"clamp", "max", "max_dim", "maximum", "sort"}


def _first(lib, name, dtype="float64"):
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    y = OPS[name](lib, x)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    return x, g


def _dense(t):
    return np.array((t.detach() + 0.0).tolist())  # + 0: torch's zero tensors have no storage


@pytest.mark.parametrize("name", sorted(OPS))
def test_first_derivative_graph(name):
    (_, tg), (_, eg) = _first(torch, name), _first(ember, name)
    assert eg.requires_grad == tg.requires_grad
    assert (eg.grad_fn is None) == (tg.grad_fn is None)
    np.testing.assert_allclose(_dense(eg), _dense(tg))


@pytest.mark.parametrize("name", sorted(set(OPS) - DETACHED))
def test_double_backward_leaves_zero_grad(name):
    # a gradient penalty's backward: x.grad is zeros, not None
    for lib in (torch, ember):
        x, g = _first(lib, name)
        (g * lib.tensor(W)).sum().backward()
        assert x.grad is not None, lib.__name__
        np.testing.assert_array_equal(_dense(x.grad), np.zeros_like(X))
        assert x.grad.dtype == lib.float64


@pytest.mark.parametrize("name", sorted(set(OPS) - DETACHED))
@pytest.mark.parametrize("kw", [{}, {"allow_unused": True}, {"materialize_grads": True}])
def test_grad_of_grad_is_zeros(name, kw):
    if "materialize_grads" in kw:
        kw = {"allow_unused": True, **kw}
    for lib in (torch, ember):
        x, g = _first(lib, name)
        (h,) = lib.autograd.grad((g * lib.tensor(W)).sum(), x, **kw)
        assert h is not None
        np.testing.assert_array_equal(_dense(h), np.zeros_like(X))


@pytest.mark.parametrize("name", sorted(DETACHED))
def test_detached_derivatives_stay_detached(name):
    _, eg = _first(ember, name)
    _, tg = _first(torch, name)
    assert not eg.requires_grad and not tg.requires_grad


@pytest.mark.parametrize(
    "name,node",
    [
        ("relu", "ThresholdBackwardBackward0"),
        ("F.relu", "ThresholdBackwardBackward0"),
        ("threshold", "ThresholdBackwardBackward0"),
        ("leaky_relu", "LeakyReluBackwardBackward0"),
        ("hardtanh", "HardtanhBackwardBackward0"),
        ("relu6", "HardtanhBackwardBackward0"),
        ("hardshrink", "HardshrinkBackwardBackward0"),
        ("softshrink", "SoftshrinkBackwardBackward0"),
        ("prelu", "PreluKernelBackwardBackward0"),
        ("prelu_method", "PreluKernelBackwardBackward0"),
        ("nll_loss", "NllLossBackwardBackward0"),
        ("nll_loss_4d", "ViewBackward0"),
        ("norm1", "MulBackward0"),
        ("vector_norm_inf_dim", "MulBackward0"),
        ("dist1", "MulBackward0"),
    ],
)
def test_first_derivative_grad_fn_name(name, node):
    _, tg = _first(torch, name)
    _, eg = _first(ember, name)
    assert type(tg.grad_fn).__name__ == node
    assert eg.grad_fn.name() == node


@pytest.mark.parametrize(
    "name", ["relu", "leaky_relu", "hardtanh", "threshold", "hardshrink", "softshrink"]
)
def test_float32_and_0d(name):
    for lib in (torch, ember):
        x = lib.tensor(0.7, dtype=lib.float32, requires_grad=True)
        (g,) = lib.autograd.grad(OPS[name](lib, x), x, create_graph=True)
        (h,) = lib.autograd.grad(g, x)
        assert h.dtype == lib.float32 and tuple(h.shape) == ()
        assert h.item() == 0.0


SHRINK = [
    ("F.hardshrink", lambda L, x: _f(L).hardshrink(x, 0.5)),
    ("Tensor.hardshrink", lambda L, x: x.hardshrink(0.5)),
    ("F.softshrink", lambda L, x: _f(L).softshrink(x, 0.5)),
]
# 64 elements: torch's vectorized kernels (its scalar tail differs at NaN and in a zero's sign)
EDGES = np.resize(
    [float("nan"), 0.3, -2.0, float("inf"), 0.5, -0.5, -0.3, 1e-30, -0.0, 0.0, -float("inf")], 64
).tolist()


@pytest.mark.parametrize("name,fn", SHRINK)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_shrink_edges(name, fn, dtype):
    # NaN stays NaN (ember's Tensor.hardshrink zeroed it) with a zero gradient
    res = []
    for lib in (torch, ember):
        x = lib.tensor(EDGES, dtype=getattr(lib, dtype), requires_grad=True)
        y = fn(lib, x)
        y.backward(lib.arange(1.0, len(EDGES) + 1).to(x.dtype))
        assert y.dtype == x.grad.dtype == getattr(lib, dtype)
        yv = np.array(y.detach().float().tolist())
        res.append((yv, np.signbit(yv) & ~np.isnan(yv), x.grad.float().tolist()))
    np.testing.assert_array_equal(res[1][0], res[0][0])
    np.testing.assert_array_equal(res[1][1], res[0][1])
    assert res[1][2] == res[0][2]


def test_prelu_method_matches_kernel():
    # Tensor.prelu was where(x >= 0, x, w * x): slope 1 at 0 (torch's kernel: w), a WhereBackward0
    # node, and no dtype check
    res = []
    for lib in (torch, ember):
        x = lib.tensor([[0.0, -1.0, 2.0], [3.0, 0.0, -0.5]], requires_grad=True)
        w = lib.tensor([0.25, 0.5, 2.0], requires_grad=True)
        y = x.prelu(w)
        y.backward(lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        name = y.grad_fn.name() if lib is ember else type(y.grad_fn).__name__
        res.append((y.tolist(), x.grad.tolist(), w.grad.tolist(), name))
    assert res[0] == res[1]
    for lib in (torch, ember):
        with pytest.raises(
            RuntimeError, match="prelu: Type promoting not supported. Got Double and Float"
        ):
            lib.ones(2, 3, dtype=lib.float64).prelu(lib.ones(1))


PRELU_X = np.random.default_rng(0).normal(size=(2, 3, 4))
PRELU_X[0, 0, :2] = np.inf, np.nan
PRELU_X[1, 1, :3] = 0.0, -np.inf, -0.0


@pytest.mark.parametrize(
    "ws", [[0.25], [1.5], [-0.5], [0.0], [1.0], [np.inf], [np.nan], [0.2, 1.0, 3.0], [0.5, 0.0, 1]]
)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_prelu_forward_edges(ws, dtype):
    # prelu is one op now (its first derivative keeps the input): values, infinities, NaN and
    # the sign of zeros as torch's kernel, for any slope
    out = []
    for lib in (torch, ember):
        dt = getattr(lib, dtype)
        x, w = lib.tensor(PRELU_X, dtype=dt), lib.tensor(ws, dtype=dt)
        for y in (_f(lib).prelu(x, w), x.prelu(w)):
            assert y.dtype == dt
            out.append(np.array(y.float().tolist()))
    for a, b in zip(out[2:], out[:2]):
        np.testing.assert_array_equal(a, b)
        keep = ~np.isnan(b)
        np.testing.assert_array_equal(np.signbit(a)[keep], np.signbit(b)[keep])


@pytest.mark.parametrize("n", [1, 3])
def test_prelu_double_backward(n):
    r = np.random.default_rng(1)
    xs, ws = r.normal(size=(2, 3, 4)), r.uniform(0.1, 0.5, n)
    res = []
    for lib in (torch, ember):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        gx, gw = lib.autograd.grad(_f(lib).prelu(x, w).pow(2).sum(), (x, w), create_graph=True)
        hx, hw = lib.autograd.grad((gx * 0.5).sum() + (gw * 2).sum(), (x, w))
        res.append([t.detach().numpy() for t in (gx, gw, hx, hw)])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    x = ember.tensor(xs + 0.01, requires_grad=True)
    w = ember.tensor(ws, requires_grad=True)
    assert ember.autograd.gradcheck(_f(ember).prelu, (x, w))
    assert ember.autograd.gradgradcheck(_f(ember).prelu, (x, w))


def test_named_input_keeps_names():
    x = ember.tensor(X, names=("N", "C"), requires_grad=True)
    (g,) = ember.autograd.grad(_f(ember).leaky_relu(x, 0.2).sum(), x, create_graph=True)
    assert g.names == ("N", "C")
    g.sum().backward()
    assert x.grad.names == ("N", "C")
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros_like(X))


def test_grad_output_branch_unchanged():
    # the derivative with respect to the upstream gradient is still the mask
    for lib in (torch, ember):
        x = lib.tensor([-1.0, 2.0, 0.5], requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        (g,) = lib.autograd.grad(lib.relu(x), x, v, create_graph=True)
        a, b = lib.autograd.grad((g * lib.tensor([1.0, 2, 3])).sum(), (x, v))
        assert a.tolist() == [0.0, 0.0, 0.0] and b.tolist() == [0.0, 2.0, 3.0]


def test_relu_gradgradcheck():
    x = ember.tensor(X + 0.05, requires_grad=True)  # away from the kink
    assert ember.autograd.gradgradcheck(ember.relu, (x,))
    assert ember.autograd.gradgradcheck(lambda t: _f(ember).leaky_relu(t, 0.1), (x,))
    assert ember.autograd.gradgradcheck(_f(ember).hardtanh, (x,))
    assert ember.autograd.gradcheck(_f(ember).softshrink, (x,))
    assert ember.autograd.gradgradcheck(_f(ember).softshrink, (x,))
    assert ember.autograd.gradgradcheck(_f(ember).hardshrink, (x,))


# ------------------------------------------------------------ the realistic uses
def _net(lib, weights=None):
    lib.manual_seed(0)
    nn = lib.nn
    m = nn.Sequential(
        nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1)
    ).double()
    if weights is not None:
        with lib.no_grad():
            for p, w in zip(m.parameters(), weights):
                p.copy_(lib.tensor(w))
    return m


@pytest.fixture(scope="module")
def nets():
    tm = _net(torch)
    em = _net(ember, [p.detach().numpy().copy() for p in tm.parameters()])
    return tm, em


XS = np.random.default_rng(0).normal(size=(6, 3))


def _gp(lib, m):
    x = lib.tensor(XS, requires_grad=True)
    (g,) = lib.autograd.grad(m(x).sum(), x, create_graph=True)
    pen = ((g.norm(2, dim=1) - 1) ** 2).mean()
    m.zero_grad()
    pen.backward()
    return x, [p.grad for p in m.parameters()]


def test_gradient_penalty_inputs_and_params(nets):
    tm, em = nets
    tx, tps = _gp(torch, tm)
    ex, eps = _gp(ember, em)
    assert ex.grad is not None
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())
    for a, b in zip(eps, tps):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_gradient_penalty_prelu_shrink_net():
    # a critic of PReLU, Hardtanh and Softshrink layers: the penalty's parameter gradients,
    # and the inputs' zero gradient
    res = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        nn = lib.nn
        m = nn.Sequential(
            nn.Linear(3, 4),
            nn.PReLU(4),
            nn.Linear(4, 4),
            nn.Hardtanh(),
            nn.Softshrink(0.1),
            nn.Linear(4, 1),
        ).double()
        if res:
            with lib.no_grad():
                for p, w in zip(m.parameters(), res[0][2]):
                    p.copy_(lib.tensor(w))
        x, grads = _gp(lib, m)
        res.append(
            (
                x.grad.numpy(),
                [None if g is None else g.numpy() for g in grads],
                [p.detach().numpy().copy() for p in m.parameters()],
            )
        )
    np.testing.assert_array_equal(res[1][0], res[0][0])
    for a, b in zip(res[1][1], res[0][1]):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_relu_net_input_hvp(nets):
    for lib, m in zip((torch, ember), nets):
        x = lib.tensor(XS, requires_grad=True)
        (g,) = lib.autograd.grad(m(x).sum(), x, create_graph=True)
        assert g.requires_grad
        (hv,) = lib.autograd.grad((g * lib.tensor(np.linspace(-1, 1, 18).reshape(6, 3))).sum(), x)
        np.testing.assert_array_equal(hv.numpy(), np.zeros((6, 3)))


def test_relu_net_hessians(nets):
    res = []
    for lib, m in zip((torch, ember), nets):

        def f(v, m=m):
            return m(v[None])[0, 0]

        v = lib.tensor(XS[0])
        res.append(
            [
                lib.func.hessian(f)(v).detach().numpy(),
                lib.func.jacrev(lib.func.jacrev(f))(v).detach().numpy(),
                lib.autograd.functional.hessian(f, v).detach().numpy(),
            ]
        )
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_param_hvp(nets):
    res = []
    for lib, m in zip((torch, ember), nets):
        ps = list(m.parameters())
        gp = lib.autograd.grad(m(lib.tensor(XS)).pow(2).sum(), ps, create_graph=True)
        hv = lib.autograd.grad(sum((a * 0.5).sum() for a in gp), ps, allow_unused=True)
        res.append([h.detach().numpy() for h in hv])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "hardtanh", "norm1", "clamp"])
def test_strict_hessian(name):
    # strict=True refuses a jacobian independent of the input: torch's relu one depends on it
    out = []
    for lib in (torch, ember):
        x = lib.tensor(X, requires_grad=False)
        try:
            h = lib.autograd.functional.hessian(
                lambda v, lib=lib: OPS[name](lib, v).sum(), x, strict=True
            )
            out.append(("ok", tuple(h.shape), float((h + 0.0).abs().sum())))
        except RuntimeError as e:
            out.append(("err", str(e)))
    assert out[0] == out[1]
