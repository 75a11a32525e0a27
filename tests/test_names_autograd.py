"""Names through gradients (names spec 4.1, rows P134, P135).

Every leaf's gradient is named like the leaf, through each op family; the gradient values match
torch's, computed on the same data without names (torch 2.x has no named tensors: the spec is the
oracle for names, torch for values).
"""

from __future__ import annotations

import re
import warnings

import ember
import numpy as np
import pytest

try:
    import torch
except ImportError:  # values are then checked against finite differences only
    torch = None

NC = ((2, 3), ("N", "C"))
NCH = ((2, 3, 4), ("N", "C", "H"))


def _arrays(specs, seed=0):
    r = np.random.default_rng(seed)
    return [r.uniform(-1, 1, shape).astype(np.float64) for shape, _ in specs]


def _run(efn, specs, tfn=None, upstream="named", seed=0):
    """Run ``efn`` on named leaves, backward with a non-uniform upstream gradient, and check the
    leaves' gradient names (== the leaves' names) and values (== torch's on unnamed tensors)."""
    arrs = _arrays(specs, seed)
    xs = [ember.tensor(a, names=n, requires_grad=True) for a, (_, n) in zip(arrs, specs)]
    out = efn(ember, *xs)
    if isinstance(out, tuple):
        out = out[0]
    up = np.random.default_rng(seed + 1).uniform(0.5, 1.5, tuple(out.shape))
    g = ember.tensor(up, names=out.names if upstream == "named" and out.has_names() else None)
    out.backward(g)
    for x in xs:
        assert x.grad is not None
        assert x.grad.names == x.names, (x.grad.names, x.names)
        assert x.grad.shape == x.shape
    if torch is not None:
        ts = [torch.tensor(a, requires_grad=True) for a in arrs]
        tout = (tfn or efn)(torch, *ts)
        if isinstance(tout, tuple):
            tout = tout[0]
        tout.backward(torch.tensor(up))
        for x, t in zip(xs, ts):
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-8)
    return out, xs


# one table per op family: (id, ember fn, torch fn or None (same), input specs)
POINTWISE = [
    ("exp", lambda m, x: m.exp(x), None, [NC]),
    ("tanh_sigmoid", lambda m, x: m.tanh(x) * m.sigmoid(x), None, [NC]),
    ("mul_broadcast", lambda m, x, y: x * y, None, [NC, ((3,), ("C",))]),
    ("add_wildcards", lambda m, x, y: x + y, None, [((2, 3), ("N", None)), ((2, 3), (None, "C"))]),
    ("sub_unnamed", lambda m, x, y: x - y, None, [NC, ((2, 3), None)]),
    ("div", lambda m, x, y: x / (y + 3), None, [NC, ((1, 3), (None, "C"))]),
    ("pow", lambda m, x, y: (x.abs() + 1) ** y, None, [NC, ((3,), ("C",))]),
    ("where", lambda m, x, y: m.where(x > 0, x, y), None, [NC, ((3,), ("C",))]),
    ("maximum", lambda m, x, y: m.maximum(x, y), None, [NC, ((3,), ("C",))]),
    ("clamp", lambda m, x: x.clamp(-0.5, 0.5) * x, None, [NC]),
    ("inplace_chain", lambda m, x: (x * 1).mul_(2).add_(x), None, [NC]),
]

REDUCTIONS = [
    ("sum_name", lambda m, x: x.sum("C"), lambda m, x: x.sum(1), [NCH]),
    ("sum_names", lambda m, x: x.sum(["N", "H"]), lambda m, x: x.sum((0, 2)), [NCH]),
    ("sum_keepdim", lambda m, x: x.sum("C", keepdim=True), lambda m, x: x.sum(1, True), [NCH]),
    ("mean_all", lambda m, x: x.mean(), None, [NCH]),
    ("var", lambda m, x: x.var("H"), lambda m, x: x.var(2), [NCH]),
    ("std", lambda m, x: x.std(0), None, [NCH]),
    ("prod", lambda m, x: x.prod("C"), lambda m, x: x.prod(1), [NC]),
    ("max_dim", lambda m, x: x.max("C")[0], lambda m, x: x.max(1)[0], [NC]),
    ("amax", lambda m, x: x.amax(1), None, [NC]),
    ("logsumexp", lambda m, x: x.logsumexp("H"), lambda m, x: x.logsumexp(2), [NCH]),
    ("norm", lambda m, x: x.norm(), None, [NC]),
    ("cumsum", lambda m, x: x.cumsum("C"), lambda m, x: x.cumsum(1), [NC]),
    ("cumprod", lambda m, x: x.cumprod(1), None, [NC]),
    ("median", lambda m, x: x.median(1)[0], None, [NC]),
]

SHAPE = [
    (
        "transpose_names",
        lambda m, x: x.transpose("N", "H") * 2,
        lambda m, x: x.transpose(0, 2) * 2,
        [NCH],
    ),
    ("permute", lambda m, x: x.permute(2, 0, 1).exp(), None, [NCH]),
    (
        "align_to",
        lambda m, x: x.align_to("H", "N", "C").exp(),
        lambda m, x: x.permute(2, 0, 1).exp(),
        [NCH],
    ),
    (
        "align_to_new_dim",
        lambda m, x: x.align_to("N", "K", "C").exp() * 3,
        lambda m, x: x.unsqueeze(1).exp() * 3,
        [NC],
    ),
    ("squeeze", lambda m, x: x.squeeze(1).exp(), None, [((2, 1, 4), ("N", "C", "H"))]),
    ("unsqueeze", lambda m, x: x.unsqueeze(1).exp(), None, [NC]),
    ("reshape", lambda m, x: x.reshape(2, 12).exp(), None, [NCH]),
    ("view", lambda m, x: x.view(6, 4).exp(), None, [NCH]),
    (
        "flatten_named",
        lambda m, x: x.flatten(["C", "H"], "CH").exp(),
        lambda m, x: x.flatten(1).exp(),
        [NCH],
    ),
    (
        "unflatten_named",
        lambda m, x: x.unflatten("C", (("A", 2), ("B", 2))).exp(),
        lambda m, x: x.unflatten(1, (2, 2)).exp(),
        [((3, 4), ("N", "C"))],
    ),
    ("expand", lambda m, x: x.expand(5, 2, 3).exp(), None, [NC]),
    ("cat", lambda m, x, y: m.cat([x, y], 0).exp(), None, [NC, NC]),
    ("stack", lambda m, x, y: m.stack([x, y], 1).exp(), None, [NC, NC]),
    ("split", lambda m, x: x.split(1, 1)[1].exp(), None, [NC]),
    ("chunk", lambda m, x: x.chunk(3, 1)[2].exp(), None, [NC]),
    ("unbind", lambda m, x: x.unbind(1)[2].exp(), None, [NC]),
    ("narrow", lambda m, x: x.narrow(1, 1, 2).exp(), None, [NC]),
    ("flip_roll", lambda m, x: x.flip(1).roll(1, 0).exp(), None, [NC]),
    ("repeat", lambda m, x: x.repeat(2, 1).exp(), None, [NC]),
]

MATMUL = [
    ("mm", lambda m, x, y: x.mm(y), None, [NC, ((3, 4), ("C", "O"))]),
    (
        "matmul_broadcast",
        lambda m, x, y: x @ y,
        None,
        [((5, 2, 3), ("B", "N", "C")), ((3, 4), ("C", "O"))],
    ),
    (
        "matmul_batch",
        lambda m, x, y: x @ y,
        None,
        [((5, 2, 3), ("B", "N", "C")), ((5, 3, 4), ("B", "C", "O"))],
    ),
    ("matmul_vec", lambda m, x, y: x @ y, None, [NC, ((3,), ("C",))]),
    (
        "bmm",
        lambda m, x, y: x.bmm(y),
        None,
        [((5, 2, 3), ("B", "N", "C")), ((5, 3, 4), ("B", "C", "O"))],
    ),
    ("mv", lambda m, x, y: x.mv(y), None, [NC, ((3,), ("C",))]),
    ("dot", lambda m, x, y: x.dot(y), None, [((3,), ("C",)), ((3,), ("C",))]),
    (
        "addmm",
        lambda m, b, x, y: m.addmm(b, x, y),
        None,
        [((2, 4), ("N", "O")), NC, ((3, 4), ("C", "O"))],
    ),
    ("outer", lambda m, x, y: m.outer(x, y), None, [((3,), ("A",)), ((4,), ("B",))]),
    (
        "einsum_letters",
        lambda m, x, y: m.einsum("nc,co->no", x, y),
        None,
        [NC, ((3, 4), ("C", "O"))],
    ),
]

INDEXING = [
    ("int", lambda m, x: x[0].exp(), None, [NC]),
    ("slice", lambda m, x: x[:, 1:].exp(), None, [NC]),
    ("none_int", lambda m, x: x[None, :, 1].exp(), None, [NC]),
    ("tensor", lambda m, x: x[m.tensor([1, 0, 1])].exp(), None, [NC]),
    ("tensor_dim1", lambda m, x: x[:, m.tensor([1, 0, 1, 2])].exp(), None, [NC]),
    ("mask", lambda m, x: x[x > 0].exp(), None, [NC]),
    ("dict", lambda m, x: x[{"C": slice(1, 3)}].exp(), lambda m, x: x[:, 1:3].exp(), [NC]),
    (
        "index_select",
        lambda m, x: x.index_select("C", m.tensor([2, 0])).exp(),
        lambda m, x: x.index_select(1, m.tensor([2, 0])).exp(),
        [NC],
    ),
    ("gather", lambda m, x: x.gather(1, m.tensor([[2, 0], [1, 1]])).exp(), None, [NC]),
    (
        "scatter",
        lambda m, x, y: x.scatter(1, m.tensor([[2, 0], [1, 1]]), y).exp(),
        None,
        [NC, ((2, 2), ("N", "C"))],
    ),
    ("masked_fill", lambda m, x: x.masked_fill(x > 0, 0.0).exp(), None, [NC]),
    ("take", lambda m, x: x.take(m.tensor([0, 5])).exp(), None, [NC]),
]

SOFTMAX = [
    ("softmax_name", lambda m, x: x.softmax("C"), lambda m, x: x.softmax(1), [NC]),
    ("log_softmax", lambda m, x: x.log_softmax(0), None, [NC]),
    ("softmax_3d", lambda m, x: m.softmax(x, dim="H") * x, lambda m, x: m.softmax(x, 2) * x, [NCH]),
]


def _params(table):
    return [pytest.param(e, t, s, id=i) for i, e, t, s in table]


@pytest.mark.parametrize("efn,tfn,specs", _params(POINTWISE))
def test_pointwise(efn, tfn, specs):
    _run(efn, specs, tfn)


@pytest.mark.parametrize("efn,tfn,specs", _params(REDUCTIONS))
def test_reductions(efn, tfn, specs):
    _run(efn, specs, tfn)


@pytest.mark.parametrize("efn,tfn,specs", _params(SHAPE))
def test_shape_ops(efn, tfn, specs):
    _run(efn, specs, tfn)


@pytest.mark.parametrize("efn,tfn,specs", _params(MATMUL))
def test_matmul_family(efn, tfn, specs):
    _run(efn, specs, tfn)


@pytest.mark.parametrize("efn,tfn,specs", _params(INDEXING))
def test_indexing(efn, tfn, specs):
    _run(efn, specs, tfn)


@pytest.mark.parametrize("efn,tfn,specs", _params(SOFTMAX))
def test_softmax(efn, tfn, specs):
    _run(efn, specs, tfn)


@pytest.mark.parametrize("upstream", ["named", "unnamed"])
def test_upstream_gradient_named_or_not(upstream):
    _run(lambda m, x, y: (x * y).exp(), [NC, ((3,), ("C",))], upstream=upstream)


# ---------------------------------------------------------------------- P134, P135
def test_p134_grads_of_named_leaves():
    x = ember.randn(3, 3, requires_grad=True)
    y = ember.randn(3, 3, names=("N", "C"), requires_grad=True)
    (x * y).sum().backward()
    assert y.grad.names == ("N", "C")  # EMBER≠ PyTorch (which leaves it unnamed)
    assert x.grad.names == (None, None)
    assert not x.grad.has_names()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    np.testing.assert_allclose(y.grad.numpy(), x.detach().numpy())


def test_p135_named_upstream_gradient_no_warning():
    base = ember.randn(3, 3, names=("N", "C"), requires_grad=True)
    grad = ember.rand(3, 3, names=("N", "C"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # EMBER≠ PyTorch: no "Autograd was passed a named grad"
        base.clone().backward(grad)
    assert base.grad.names == ("N", "C")
    np.testing.assert_allclose(base.grad.numpy(), grad.numpy())


def test_p135_upstream_names_checked():
    base = ember.randn(3, 3, names=("N", "C"), requires_grad=True)
    bad = ember.ones(3, 3, names=("A", "C"))
    msg = "the gradient's names ['A', 'C'] (grad_tensors[0]) do not match the output's names " + (
        "['N', 'C']"
    )
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        base.clone().backward(bad)
    with pytest.raises(RuntimeError, match=re.escape("dim 'A' and dim 'N'")):
        base.clone().backward(bad)
    with pytest.raises(RuntimeError, match=re.escape("grad: the gradient's names ['A', 'C']")):
        ember.autograd.grad(base.clone(), base, bad)
    half = ember.randn(3, 3, names=("N", None), requires_grad=True)
    with pytest.raises(RuntimeError, match="Misaligned"):
        half.clone().backward(ember.ones(3, 3, names=(None, "N")))
    assert base.grad is None and half.grad is None


def test_upstream_gradient_takes_the_output_names():
    # a partially named gradient unifies with the output's names; the graph sees the output's
    base = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    seen = []
    out = base * 2
    out.register_hook(lambda g: seen.append(g.names))
    out.backward(ember.ones(2, 3, names=(None, "C")))
    assert seen == [("N", "C")]
    assert base.grad.names == ("N", "C")
    # an unnamed output: a named gradient is stamped unnamed
    u = ember.randn(2, 3, requires_grad=True)
    u2 = u * 2
    u2.backward(ember.ones(2, 3, names=("A", "B")))
    assert not u.grad.has_names()


def test_root_leaf_backward_named_gradient():
    x = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    g = ember.ones(2, 3)
    x.backward(g)
    assert x.grad.names == ("N", "C")
    g.add_(1)  # the caller's tensor is not stored as the grad
    np.testing.assert_allclose(x.grad.numpy(), np.ones((2, 3)))
    assert not g.has_names()


# ---------------------------------------------------------------------- accumulation, grad()
def test_accumulation_over_several_backward_calls():
    x = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    w = ember.randn(3, names=("C",), requires_grad=True)
    for k in range(3):
        ((x * w) * (k + 1)).sum().backward()
    assert x.grad.names == ("N", "C") and w.grad.names == ("C",)
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.broadcast_to(w.detach().numpy(), (2, 3)))
    np.testing.assert_allclose(w.grad.numpy(), 6 * x.detach().numpy().sum(0), rtol=1e-6)


def test_accumulation_after_rename():
    x = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    (x * 2).sum().backward()
    x.rename_("B", "D")
    (x * 3).sum().backward()
    assert x.grad.names == ("B", "D")
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 5.0))


def test_autograd_grad_named():
    x = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    w = ember.randn(3, names=("C",), requires_grad=True)
    gx, gw = ember.autograd.grad((x * w).sum(), (x, w))
    assert gx.names == ("N", "C") and gw.names == ("C",)
    assert x.grad is None


def test_create_graph_second_order_named():
    arrs = _arrays([NC, ((3,), None)], seed=3)
    x = ember.tensor(arrs[0], names=("N", "C"), requires_grad=True)
    w = ember.tensor(arrs[1], names=("C",), requires_grad=True)
    (gx,) = ember.autograd.grad((x**3 * w).sum(), x, create_graph=True)
    assert gx.names == ("N", "C") and gx.requires_grad
    gxx, gw = ember.autograd.grad((gx * gx).sum(), (x, w))
    assert gxx.names == ("N", "C") and gw.names == ("C",)
    # backward(create_graph=True): the .grad is named and differentiable again
    y = ember.tensor(arrs[0], names=("N", "C"), requires_grad=True)
    (y.exp() * 2).sum().backward(create_graph=True)
    assert y.grad.names == ("N", "C") and y.grad.grad_fn is not None
    (g2,) = ember.autograd.grad(y.grad.sum(), y)
    assert g2.names == ("N", "C")
    if torch is not None:
        tx = torch.tensor(arrs[0], requires_grad=True)
        tw = torch.tensor(arrs[1], requires_grad=True)
        (tgx,) = torch.autograd.grad((tx**3 * tw).sum(), tx, create_graph=True)
        tgxx, tgw = torch.autograd.grad((tgx * tgx).sum(), (tx, tw))
        np.testing.assert_allclose(gxx.numpy(), tgxx.numpy(), rtol=1e-6)
        np.testing.assert_allclose(gw.numpy(), tgw.numpy(), rtol=1e-6)
        np.testing.assert_allclose(g2.numpy(), 2 * np.exp(arrs[0]), rtol=1e-6)


def test_gradcheck_named_inputs():
    x = ember.tensor(_arrays([NC])[0], names=("N", "C"), requires_grad=True)
    w = ember.tensor(_arrays([((3,), None)], 1)[0], names=("C",), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: (a * b).softmax("C").sum("N"), (x, w))
    assert ember.autograd.gradgradcheck(lambda a, b: (a * b).tanh().sum("C"), (x, w))


# ---------------------------------------------------------------------- t.grad = g
def test_grad_assignment_names():
    t = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    t.grad = ember.ones(2, 3)  # an unnamed g takes t's names
    assert t.grad.names == ("N", "C")
    g = ember.ones(2, 3, names=("N", "C"))
    t.grad = g
    assert t.grad is g
    t.grad = ember.ones(2, 3, names=(None, "C"))  # unifies: named like t
    assert t.grad.names == ("N", "C")
    msg = "assigned grad's names ['X', 'C'] do not match the tensor's names ['N', 'C']"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        t.grad = ember.ones(2, 3, names=("X", "C"))
    half = ember.randn(2, 2, names=("N", None), requires_grad=True)
    with pytest.raises(RuntimeError, match="Misaligned"):
        half.grad = ember.ones(2, 2, names=(None, "N"))
    u = ember.randn(2, 3, requires_grad=True)
    u.grad = ember.ones(2, 3, names=("A", "B"))  # named like its (unnamed) tensor
    assert not u.grad.has_names()
    # then backward accumulates into it, still named like t
    t.grad = ember.zeros(2, 3)
    (t * 2).sum().backward()
    assert t.grad.names == ("N", "C")
    np.testing.assert_allclose(t.grad.numpy(), np.full((2, 3), 2.0))


def test_unnamed_graph_stays_unnamed():
    x = ember.randn(2, 3, requires_grad=True)
    ((x * 2).softmax(1) @ ember.randn(3, 4)).sum().backward()
    assert x.grad._names is None


def test_retain_grad_hooks_and_custom_function_named():
    x = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    y = x.transpose("N", "C") * 2
    y.retain_grad()
    seen = []
    x.register_hook(lambda g: seen.append(g.names))

    class Twice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).rename(None)  # an unnamed gradient: the engine names it

    z = Twice.apply(y)
    assert z.names == ("C", "N")
    z.sum().backward()
    assert y.grad.names == ("C", "N")
    assert seen == [("N", "C")]
    assert x.grad.names == ("N", "C")
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 4.0))
    r = x[ember.tensor([1, 1, 0], names=("K",))]
    r.retain_grad()
    r.sum().backward()
    assert r.grad.names == ("K", "C")
