"""Parity regressions found by the eleventh wave of realistic PyTorch programs (generative models
and scientific machine learning; torch is the oracle): torch.distributions' ``__all__``
(``from torch.distributions import *`` in a VAE script binds ``Laplace``, not the submodules), the gradients of cat's inputs
as narrows of the incoming gradient (SliceBackward0 under create_graph, as in a PINN's
``net(torch.cat([x, t], 1))`` differentiated twice), the class name of linalg's errors
(``_LinAlgError``, printed by a GP fit's ``type(e).__name__``), and autograd.grad freeing only the
nodes it runs (forward AD's ``unpack_dual`` asked twice, grad through a double-backward graph and then
through the first-order graph it did not need), the nodes torch's composite trapezoid,
cumulative_trapezoid and special.ndtr end on (a scalar DivBackward1/MulBackward1; an empty
trapezoid outside the graph), autograd.grad's deprecated ``only_inputs=False`` (a FutureWarning)
and ``is_grads_batched=True`` with an implicit 0-d grad_output (vmap's in_dim error), and a
one-operand einsum that sums nothing (a DiT's ``einsum('nhwpqc->nchpwq', x)`` unpatchify, a
transpose or a diagonal) as a view sharing the operand's memory, whose reshape copies
(UnsafeViewBackward0); and enable_grad/set_grad_enabled inside inference mode (a Langevin sampler
under an outer ``inference_mode``): grad mode reads on but nothing is recorded, while torch.func's
transforms still differentiate and autograd.functional gives zeros; and torch's refusals of a
custom autograd.Function (an adjoint ODE step) in torch.func: the old ``forward(ctx, ...)`` form
in any transform, no vmap rule under vmap/jacfwd/hessian, no jvp under forward mode (func.jvp,
jacfwd, forward_ad), while autograd.functional.jvp and jacrev still work; take_along_dim
without a dim taking gather's index dtypes (an int32 timestep index into a noise schedule), and
distributions.utils.broadcast_all's message, kl_divergence's message for two full-rank
MultivariateNormals of different event shapes, and the pair its ambiguity warning suggests
registering; and binary_cross_entropy_with_logits adding its softplus term last, like torch
(a Bernoulli's log_prob at a confident logit or a clamped probability of 1 keeps its tiny
value instead of cancelling to 0); linalg.solve's one LinalgSolveExBackward0 node (a vector
right-hand side, ``left=False``) and its refusal of a vector right-hand side with ``left=False``;
autograd.functional refusing a list of inputs (a tuple only) and hessian's strict-mode error
about a jacobian independent of the input (a Laplace approximation of a linear model);
binary_cross_entropy refusing a NaN input or target (a VAE decoder that diverged); and vmap
over an empty batch (size-0 outputs), with no inputs (torch's error), returning a non-tensor
with ``out_dims=None``, and jacrev's ``chunk_size`` check; quantile's and nanquantile's node
(torch's composite ends on SqueezeBackward4: a diffusion sampler's dynamic thresholding)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


# ------------------------------------------------------------------- distributions' star import
def test_distributions_all_lists_laplace():
    import ember.distributions as ed
    import torch.distributions as td

    assert "Laplace" in ed.__all__
    assert sorted(ed.__all__) == sorted(td.__all__)  # no constraints/transforms submodules


# ------------------------------------------------------------------- cat's input gradients
@pytest.mark.parametrize(
    "build",
    [
        lambda m, a, b: m.cat([a, b]),
        lambda m, a, b: m.cat([a]),
        lambda m, a, b: m.hstack([a, b]),
        lambda m, a, b: m.cat([a[None], a[None] * 2], 1),
    ],
)
def test_cat_input_gradients_are_slices(build):
    res = []
    for m in (torch, ember):
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = m.tensor([4.0, 5.0], requires_grad=True)
        z = build(m, a, b)
        w = m.arange(1.0, z.numel() + 1).reshape(z.shape)
        gs = m.autograd.grad((z**3 * w).sum(), [a, b], create_graph=True, allow_unused=True)
        res.append([None if g is None else (g.grad_fn.name(), g.tolist()) for g in gs])
    assert res[1] == res[0]


def test_cat_legacy_empty_input_gets_an_empty_gradient():
    a = ember.ones(2, 3, requires_grad=True)
    e = ember.zeros(0, dtype=ember.float64, requires_grad=True)
    z = ember.cat([a, e, a * 2], 0)
    g = ember.autograd.grad((z * ember.arange(12.0).reshape(4, 3)).sum(), [a, e], allow_unused=True)
    ta = torch.ones(2, 3, requires_grad=True)
    te = torch.zeros(0, dtype=torch.float64, requires_grad=True)
    tz = torch.cat([ta, te, ta * 2], 0)
    tg = torch.autograd.grad(
        (tz * torch.arange(12.0).reshape(4, 3)).sum(), [ta, te], allow_unused=True
    )
    assert g[0].tolist() == tg[0].tolist()
    assert (g[1].shape, g[1].dtype) == (tuple(tg[1].shape), ember.float64)
    ember.cat([a, e]).sum().backward()
    assert e.grad.shape == (0,) and e.grad.dtype == ember.float64


def test_cat_gradcheck():
    a = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(2, 1, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, y: ember.cat([x, y, x], 1), (a, b))
    assert ember.autograd.gradgradcheck(lambda x, y: ember.cat([x, y], 1) ** 2, (a, b))


# ------------------------------------------------------------------- LinAlgError's name
def test_linalg_error_class_name_and_pickle():
    import pickle

    with pytest.raises(torch.linalg.LinAlgError) as t:
        torch.linalg.cholesky(torch.ones(3, 3))
    with pytest.raises(ember.linalg.LinAlgError) as e:
        ember.linalg.cholesky(ember.ones(3, 3))
    assert type(e.value).__name__ == type(t.value).__name__ == "_LinAlgError"
    assert str(e.value) == str(t.value)
    assert isinstance(e.value, RuntimeError)
    assert pickle.loads(pickle.dumps(ember.linalg.LinAlgError)) is ember.linalg.LinAlgError


# ------------------------------------------------------------------- a pass frees only what it runs
def _double_backward_then_first_order(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = m.tanh(x) * x.exp()
    u = m.zeros(2, requires_grad=True)
    (g,) = m.autograd.grad(y, x, u, create_graph=True)
    (a,) = m.autograd.grad(g, u, m.tensor([1.0, -2.0]))
    (b,) = m.autograd.grad(y, x, m.tensor([0.5, 3.0]))
    return a.tolist(), b.tolist()


def test_grad_frees_only_the_nodes_it_runs():
    e = _double_backward_then_first_order(ember)
    t = _double_backward_then_first_order(torch)
    np.testing.assert_allclose(e, t, rtol=1e-6)


def test_grad_still_frees_the_nodes_it_runs():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    ember.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        ember.autograd.grad(y, x)


def _unpack_twice(m):
    import importlib

    fw = importlib.import_module(m.__name__ + ".autograd.forward_ad")
    with fw.dual_level():
        d = fw.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 0.5]))
        o = m.tanh(d) * d.exp()
        first = fw.unpack_dual(o).tangent.tolist()
        second = fw.unpack_dual(o).tangent.tolist()
        third = fw.unpack_dual(o * 2).tangent.tolist()
    return first, second, third


def test_unpack_dual_twice():
    e, t = _unpack_twice(ember), _unpack_twice(torch)
    for a, b in zip(e, t):
        np.testing.assert_allclose(a, b, rtol=1e-6)


# ------------------------------------------------------------------- trapezoid / ndtr nodes
_TRAPZ = [
    lambda m, y, x: m.trapezoid(y),
    lambda m, y, x: m.trapezoid(y, dx=2.5),
    lambda m, y, x: m.trapezoid(y, x),
    lambda m, y, x: m.trapz(y, x),
    lambda m, y, x: m.trapezoid(y.reshape(2, 3), x.reshape(2, 3)),
    lambda m, y, x: m.trapezoid(y.reshape(2, 3), dim=0),
    lambda m, y, x: m.trapezoid(y[:1], x[:1]),
    lambda m, y, x: m.trapezoid(y[:0]),
    lambda m, y, x: m.trapezoid(y[:0], x[:0]),
    lambda m, y, x: m.cumulative_trapezoid(y),
    lambda m, y, x: m.cumulative_trapezoid(y, dx=3.0),
    lambda m, y, x: m.cumulative_trapezoid(y, x),
    lambda m, y, x: m.cumulative_trapezoid(y.reshape(2, 3), x.reshape(2, 3), dim=0),
]


@pytest.mark.parametrize("call", _TRAPZ)
def test_trapezoid_nodes_values_and_gradients(call):
    res = []
    for m in (torch, ember):
        y = m.tensor([0.5, 1.0, -2.0, 3.0, 0.25, 1.5], dtype=m.float64, requires_grad=True)
        x = m.tensor([0.0, 0.5, 1.5, 1.75, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        r = call(m, y, x)
        name = r.grad_fn.name() if r.grad_fn is not None else None
        grads = None
        if r.requires_grad and r.numel():
            w = m.arange(1.0, r.numel() + 1, dtype=m.float64).reshape(r.shape)
            grads = [
                None if g is None else g.tolist()
                for g in m.autograd.grad((r * w).sum(), [y, x], allow_unused=True)
            ]
        res.append((name, tuple(r.shape), r.requires_grad, r.tolist(), grads))
    t, e = res
    assert e[:3] == t[:3]
    np.testing.assert_allclose(e[3], t[3], rtol=1e-12)
    assert (e[4] is None) == (t[4] is None)
    if t[4] is not None:
        for a, b in zip(e[4], t[4]):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-12)


def test_trapezoid_gradcheck():
    y = ember.randn(5, dtype=ember.float64, requires_grad=True)
    x = ember.tensor([0.0, 0.3, 1.0, 1.2, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.trapezoid, (y, x))
    assert ember.autograd.gradcheck(ember.cumulative_trapezoid, (y, x))


def test_ndtr_node_name_and_gradient():
    z = [0.3, -1.0, 2.5]
    t = torch.tensor(z, dtype=torch.float64, requires_grad=True)
    e = ember.tensor(z, dtype=ember.float64, requires_grad=True)
    rt, re_ = torch.special.ndtr(t), ember.special.ndtr(e)
    assert re_.grad_fn.name() == rt.grad_fn.name() == "MulBackward1"
    rt.backward(torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))
    re_.backward(ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64))
    np.testing.assert_allclose(e.grad.tolist(), t.grad.tolist(), rtol=1e-12)


# ------------------------------------------------------------------- autograd.grad's arguments
def _call(f):
    try:
        return "ok", f()
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)


def test_grad_only_inputs_false_warns():
    for m in (torch, ember):
        x = m.ones(3, requires_grad=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated") as rec:
            (g,) = m.autograd.grad((x * x).sum(), x, only_inputs=False)
        assert g.tolist() == [2.0, 2.0, 2.0]
        assert rec[0].filename == __file__


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.autograd.grad([x.sum()], x, [None], is_grads_batched=True),
        lambda m, x: m.autograd.grad(x.sum(), x, is_grads_batched=True),
        lambda m, x: m.autograd.grad(
            [x.sum(), x * 2], x, [None, m.ones(2, 3)], is_grads_batched=True
        ),
        lambda m, x: m.autograd.grad([x * 2], x, [None], is_grads_batched=True),
    ],
)
def test_grad_batched_implicit_grad_output(call):
    t = _call(lambda: call(torch, torch.ones(3, requires_grad=True)))
    e = _call(lambda: call(ember, ember.ones(3, requires_grad=True)))
    assert e == t


def test_grad_batched_still_maps():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = ember.autograd.grad([x**2], x, [ember.eye(3)], is_grads_batched=True)
    assert g.tolist() == [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 6.0]]


# ------------------------------------------------------------------- einsum as a view
_VIEW_EQS = [
    ("ij->ij", (2, 3)),
    ("ij->ji", (2, 3)),
    ("ji", (2, 3)),
    ("ii->i", (3, 3)),
    ("iij->ji", (2, 2, 3)),
    ("iji->ij", (2, 3, 2)),
    ("iii->i", (2, 2, 2)),
    ("ijij->ji", (2, 3, 2, 3)),
    ("...ij->...ji", (2, 2, 3)),
    ("nhwpqc->nchpwq", (2, 2, 2, 2, 2, 1)),
    ("->", ()),
]


@pytest.mark.parametrize("eq,shape", _VIEW_EQS)
def test_einsum_without_sum_is_a_view(eq, shape):
    res = []
    for m in (torch, ember):
        n = 1
        for s_ in shape:
            n *= s_
        a = m.arange(float(n)).reshape(shape).requires_grad_()
        r = m.einsum(eq, a)
        w = m.arange(1.0, r.numel() + 1).reshape(r.shape)
        (g,) = m.autograd.grad((r * w).sum(), a)
        res.append((r.grad_fn.name(), tuple(r.stride()), r.tolist(), g.tolist()))
        with m.no_grad():
            base = m.zeros(shape)
            m.einsum(eq, base).add_(1)
            res[-1] += (base.tolist(),)
    assert res[1] == res[0]


def test_einsum_view_reshape_copies():
    for m in (torch, ember):
        x = m.ones(2, 2, 2, 2, 2, 1, requires_grad=True) * 1
        r = m.einsum("nhwpqc->nchpwq", x)
        assert not r.is_contiguous()
        assert r.reshape(2, 1, 4, 4).grad_fn.name() == "UnsafeViewBackward0"
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            r.view(-1)


def test_einsum_view_dtypes_and_names():
    assert ember.einsum("ij->ji", ember.ones(2, 3, dtype=ember.int32)).dtype == ember.int32
    assert ember.einsum("ii->i", ember.eye(2, dtype=ember.bool)).tolist() == [True, True]
    assert ember.einsum("ij->ji", ember.ones(2, 3, dtype=ember.float16)).dtype == ember.float16
    x = ember.ones(2, 3, names=("a", "b"))
    assert ember.einsum("ij->ji", x).names == ("b", "a")
    assert ember.einsum("iij->ji", ember.ones(2, 2, 3, device="meta")).shape == (3, 2)


def test_einsum_view_gradcheck():
    a = ember.randn(3, 3, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.einsum("iij->ji", t), (a,))
    assert ember.autograd.gradgradcheck(lambda t: ember.einsum("ijk->kji", t) ** 2, (a,))


# ------------------------------------------------------------------- grad mode inside inference mode
def _modes(m):
    x = m.ones(2, requires_grad=True)
    out = []
    with m.inference_mode():
        out.append(m.is_grad_enabled())
        with m.enable_grad():
            out += [m.is_grad_enabled(), (x * 2).requires_grad]
            with m.no_grad():
                out.append(m.is_grad_enabled())
            with m.inference_mode(False):
                out += [m.is_grad_enabled(), (x * 2).requires_grad]
            out.append(m.is_grad_enabled())
        with m.set_grad_enabled(True):
            out += [m.is_grad_enabled(), (x * 2).requires_grad]
        out.append(m.is_grad_enabled())
    out += [m.is_grad_enabled(), (x * 2).requires_grad]
    with m.no_grad(), m.inference_mode(), m.enable_grad():
        out.append(m.is_grad_enabled())
    out.append(m.is_grad_enabled())

    @m.enable_grad()
    def f():
        return m.is_grad_enabled(), (x * 2).requires_grad

    with m.inference_mode():
        out.append(f())
    out.append(f())
    return out


def test_enable_grad_inside_inference_mode():
    assert _modes(ember) == _modes(torch)


def _langevin_step(m):
    with m.inference_mode():
        y = m.tensor([[0.5, -1.0]])
        with m.enable_grad():
            y.requires_grad_(True)
            return _call(lambda: m.autograd.grad((y**2).sum(), y))


def test_langevin_under_inference_mode_records_nothing():
    assert _langevin_step(ember) == _langevin_step(torch)


def _transforms_in_inference(m):
    res = []
    for ctx in (m.no_grad, m.inference_mode):
        with ctx():
            res.append(m.func.grad(lambda x: (x**3).sum())(m.tensor([1.0, 2.0])).tolist())
            res.append(m.func.jacrev(lambda x: x**2)(m.tensor([1.0, 2.0])).tolist())
            res.append(m.func.jvp(lambda x: x**2, (m.ones(2),), (m.ones(2),))[1].tolist())
            f = m.autograd.functional
            res.append(f.jacobian(lambda x: x**2, m.tensor([1.0, 3.0])).tolist())
            res.append(f.vjp(lambda x: x**2, m.tensor([1.0, 3.0]), m.ones(2))[1].tolist())
    return res


def test_transforms_inside_inference_mode():
    assert _transforms_in_inference(ember) == _transforms_in_inference(torch)


# ------------------------------------------------------------------- custom Functions in torch.func
def _function_classes(m):
    class Old(m.autograd.Function):
        @staticmethod
        def forward(ctx, y):
            ctx.save_for_backward(y)
            return y.sin()

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y.cos()

    class New(m.autograd.Function):
        @staticmethod
        def forward(y):
            return y.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y.cos()

    class Mapped(New):
        generate_vmap_rule = True

    class WithJvp(Mapped):
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.y = inputs[0]

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.y.cos()

    return Old, New, Mapped, WithJvp


def _function_transforms(m):
    import importlib

    fw = importlib.import_module(m.__name__ + ".autograd.forward_ad")
    x = m.tensor([0.3, 1.2])
    out = []
    for F in _function_classes(m):

        def dual(F=F):
            with fw.dual_level():
                d = fw.make_dual(x, m.ones(2))
                return fw.unpack_dual(F.apply(d)).tangent

        calls = [
            lambda F=F: m.func.grad(lambda a: F.apply(a).sum())(x),
            lambda F=F: m.func.jvp(F.apply, (x,), (m.ones(2),))[1],
            lambda F=F: m.func.jacfwd(F.apply)(x),
            lambda F=F: m.func.jacrev(F.apply)(x),
            lambda F=F: m.func.hessian(lambda a: F.apply(a).sum())(x),
            lambda F=F: m.vmap(F.apply)(m.ones(3, 2)),
            lambda F=F: m.autograd.functional.jvp(F.apply, x, m.ones(2))[1],
            dual,
            lambda F=F: m.autograd.grad(F.apply(x.requires_grad_()).sum(), x)[0],
        ]
        for c in calls:
            r = _call(c)
            out.append((r[0], r[1] if r[0] != "ok" else np.round(r[1].tolist(), 5).tolist()))
    return out


def test_custom_function_under_transforms():
    e, t = _function_transforms(ember), _function_transforms(torch)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert a == b


# ------------------------------------------------------------------- take_along_dim's index dtypes
@pytest.mark.parametrize("dt", ["int32", "int16", "uint8", "int64", "float32", "bool"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_take_along_dim_index_dtypes(dt, dim):
    res = []
    for m in (torch, ember):
        a = m.arange(6.0).reshape(2, 3).requires_grad_()
        i = m.tensor([[1, 0, 1]], dtype=getattr(m, dt))

        def run(m=m, a=a, i=i):
            r = m.take_along_dim(a, i) if dim is None else m.take_along_dim(a, i, dim=dim)
            (g,) = m.autograd.grad((r * m.arange(1.0, r.numel() + 1).reshape(r.shape)).sum(), a)
            return r.tolist(), g.tolist()

        res.append(_call(run))
    assert res[1] == res[0]


# ------------------------------------------------------------------- broadcast_all's message
def test_broadcast_all_message():
    from ember.distributions.utils import broadcast_all as eb
    from torch.distributions.utils import broadcast_all as tb

    t = _call(lambda: tb("a", 1.0))
    assert t[0] == "ValueError"
    assert _call(lambda: eb("a", 1.0)) == t


# ------------------------------------------------------------------- kl_divergence's messages
def _mvn_kl_errors(m):
    D = m.distributions

    def mvn(n):
        return D.MultivariateNormal(m.zeros(n), m.eye(n))

    def low(n):
        return D.LowRankMultivariateNormal(m.zeros(n), m.zeros(n, 1), m.ones(n))

    return [
        _call(lambda a=a, b=b: D.kl_divergence(a, b))
        for a, b in [(mvn(2), mvn(3)), (low(2), low(3)), (low(2), mvn(3)), (mvn(2), low(3))]
    ]


def test_kl_mvn_event_shape_messages():
    assert _mvn_kl_errors(ember) == _mvn_kl_errors(torch)


def _ambiguous_kl(m):
    import importlib

    D = m.distributions
    kl = importlib.import_module(m.__name__ + ".distributions.kl")

    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    kl.register_kl(A, D.Normal)(lambda p, q: m.tensor(1.0))
    kl.register_kl(D.Normal, B)(lambda p, q: m.tensor(2.0))
    try:
        with pytest.warns(RuntimeWarning) as rec:
            v = D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    finally:
        del kl._KL_REGISTRY[A, D.Normal], kl._KL_REGISTRY[D.Normal, B]
        kl._KL_MEMOIZE.clear()
    return v.item(), str(rec[0].message)


def test_kl_ambiguity_warning_names_the_pair_to_register():
    e, t = _ambiguous_kl(ember), _ambiguous_kl(torch)
    assert e == t
    assert t[1].endswith("Please register_kl(A, B)")


# ------------------------------------------------------------------- BCE with logits' small terms
def test_bce_with_logits_keeps_small_terms():
    x = [100.0, 15.942385, 30.0, -30.0, 0.5, -100.0]
    y = [1.0, 1.0, 1.0, 0.0, 0.3, 0.0]
    t = torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor(x), torch.tensor(y), reduction="none"
    )
    e = ember.nn.functional.binary_cross_entropy_with_logits(
        ember.tensor(x), ember.tensor(y), reduction="none"
    )
    # exp(-100) is a float32 subnormal: its last bits vary between libms
    np.testing.assert_allclose(e.tolist(), t.tolist(), rtol=1e-6, atol=1e-43)
    assert e.tolist()[0] > 0 and e.tolist()[2] > 0  # exp(-30): not cancelled away


def test_bernoulli_log_prob_at_the_edges():
    for probs in ([1.0, 1.0], [0.0, 1.0]):
        t = torch.distributions.Bernoulli(probs=torch.tensor(probs))
        e = ember.distributions.Bernoulli(probs=ember.tensor(probs))
        v = [1.0, 0.0]
        np.testing.assert_allclose(
            e.log_prob(ember.tensor(v)).tolist(), t.log_prob(torch.tensor(v)).tolist(), rtol=1e-6
        )
    t = torch.distributions.Bernoulli(logits=torch.tensor([100.0, 20.0]))
    e = ember.distributions.Bernoulli(logits=ember.tensor([100.0, 20.0]))
    np.testing.assert_allclose(
        e.log_prob(ember.ones(2)).tolist(),
        t.log_prob(torch.ones(2)).tolist(),
        rtol=1e-5,
        atol=1e-43,
    )
    assert e.log_prob(ember.ones(2)).tolist()[0] < 0


def test_bce_with_logits_gradients():
    x = ember.tensor([3.0, -2.0, 0.5], dtype=ember.float64, requires_grad=True)
    y = ember.tensor([1.0, 0.2, 0.0], dtype=ember.float64, requires_grad=True)
    f = ember.nn.functional.binary_cross_entropy_with_logits
    assert ember.autograd.gradcheck(lambda a, b: f(a, b, reduction="none"), (x, y))


# ------------------------------------------------------------------- linalg.solve
_SOLVES = [
    lambda m, A, b, B: m.linalg.solve(A, b),
    lambda m, A, b, B: m.linalg.solve(A, B),
    lambda m, A, b, B: m.linalg.solve(A, B.mT, left=False),
    lambda m, A, b, B: m.linalg.solve_ex(A, B.mT, left=False)[0],
    lambda m, A, b, B: m.linalg.solve(A[None].expand(2, 3, 3), b),
    lambda m, A, b, B: m.linalg.solve(A[None].expand(2, 3, 3), B.mT[None], left=False),
    lambda m, A, b, B: m.linalg.solve(A, b, left=False),
    lambda m, A, b, B: m.linalg.solve(A[None].expand(2, 3, 3), b.expand(2, 3), left=False),
    lambda m, A, b, B: m.linalg.solve(A[:1, :1], b[:1], left=False),
    lambda m, A, b, B: m.linalg.solve(A, m.zeros(4, dtype=m.float64), left=False),
]


@pytest.mark.parametrize("call", _SOLVES)
def test_linalg_solve_nodes_and_vector_rhs(call):
    res = []
    for m in (torch, ember):
        A = (m.eye(3, dtype=m.float64) * 2 + 0.1).requires_grad_()
        b = m.tensor([1.0, -2.0, 0.5], dtype=m.float64, requires_grad=True)
        B = m.arange(6.0, dtype=m.float64).reshape(3, 2).requires_grad_()

        def run(m=m, A=A, b=b, B=B):
            r = call(m, A, b, B)
            w = m.arange(1.0, r.numel() + 1, dtype=m.float64).reshape(r.shape)
            gs = m.autograd.grad((r * w).sum(), [A, b, B], allow_unused=True)
            return r.grad_fn.name(), r.tolist(), [None if g is None else g.tolist() for g in gs]

        res.append(_call(run))
    t, e = res
    assert e[0] == t[0]
    if t[0] != "ok":
        assert e == t
        return
    assert e[1][0] == t[1][0]
    np.testing.assert_allclose(e[1][1], t[1][1], rtol=1e-10)
    for a, b in zip(e[1][2], t[1][2]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------- autograd.functional's checks
_AF = [
    lambda m: m.autograd.functional.jacobian(lambda a: a, [m.ones(2)]),
    lambda m: m.autograd.functional.jacobian(lambda a: [a, a], m.ones(2)),
    lambda m: m.autograd.functional.vjp(lambda a: a * 2, m.ones(2), [m.ones(2)]),
    lambda m: m.autograd.functional.hessian(lambda a: a.sum(), m.ones(2), strict=True),
    lambda m: m.autograd.functional.hessian(
        lambda a: (a * 0).sum().detach(), m.ones(2), strict=True
    ),
    lambda m: m.autograd.functional.hessian(lambda a: (a**2).sum(), m.ones(2), strict=True),
    lambda m: m.autograd.functional.hessian(lambda a, b: (a * b).sum(), (m.ones(2), m.ones(2))),
    lambda m: m.autograd.functional.hessian(lambda a: a.sum(), m.ones(2)),
]


@pytest.mark.parametrize("call", _AF)
def test_autograd_functional_argument_checks(call):
    def norm(r):
        if isinstance(r, (tuple, list)):
            return [norm(x) for x in r]
        return r.tolist() if hasattr(r, "tolist") else r

    t = _call(lambda: norm(call(torch)))
    e = _call(lambda: norm(call(ember)))
    assert e == t


# ------------------------------------------------------------------- BCE's range checks and NaN
@pytest.mark.parametrize(
    "x,y",
    [
        ([float("nan")], [1.0]),
        ([0.5], [float("nan")]),
        ([1.5], [1.0]),
        ([0.5], [-0.5]),
        ([0.0, 1.0], [1.0, 0.0]),
        ([], []),
    ],
)
def test_bce_range_checks(x, y):
    def run(m):
        return m.nn.functional.binary_cross_entropy(m.tensor(x), m.tensor(y)).item()

    t, e = _call(lambda: run(torch)), _call(lambda: run(ember))
    assert e[0] == t[0]
    if t[0] == "ok":
        np.testing.assert_allclose(e[1], t[1], rtol=1e-6)
    else:
        assert e == t


# ------------------------------------------------------------------- vmap's edge cases
_VMAPS = [
    lambda m: m.func.vmap(lambda a: a * 2)(m.ones(0, 2)),
    lambda m: m.func.vmap(lambda a: (a.sum(), a[None]))(m.ones(0, 3)),
    lambda m: m.vmap(lambda a: a.sum(), in_dims=1)(m.ones(2, 0)),
    lambda m: m.func.vmap(lambda a, b: a + b, in_dims=(0, None))(m.ones(0, 2), m.ones(2)),
    lambda m: m.func.vmap(lambda a: a)(),
    lambda m: m.vmap(lambda a: a)(),
    lambda m: m.func.vmap(lambda a: (a, 1.5), out_dims=(0, None))(m.ones(3, 2)),
    lambda m: m.func.vmap(lambda a: (a, 1.5))(m.ones(3, 2)),
    lambda m: m.func.vmap(lambda a: {"x": m.ones(2), "n": 2}, out_dims=None)(m.ones(3, 2)),
    lambda m: m.func.jacrev(lambda a: a**2, chunk_size=0),
    lambda m: m.func.jacrev(lambda a: a**2, chunk_size=2)(m.tensor([1.0, 2.0])),
]


@pytest.mark.parametrize("call", _VMAPS)
def test_vmap_edge_cases(call):
    def norm(r):
        if isinstance(r, dict):
            return {k: norm(v) for k, v in r.items()}
        if isinstance(r, (tuple, list)):
            return [norm(x) for x in r]
        if hasattr(r, "tolist"):
            return (tuple(r.shape), str(r.dtype).split(".")[-1], r.tolist())
        return r if not callable(r) else "fn"

    t = _call(lambda: norm(call(torch)))
    e = _call(lambda: norm(call(ember)))
    assert e == t


# ------------------------------------------------------------------- quantile's node
_QUANTILES = [
    lambda m, x: m.quantile(x, 0.5),
    lambda m, x: m.quantile(x, 0.75, dim=1),
    lambda m, x: m.quantile(x, 0.5, dim=1, keepdim=True),
    lambda m, x: m.quantile(x, m.tensor([0.2, 0.7], dtype=m.float64), dim=1),
    lambda m, x: m.quantile(x, 0.3, dim=0, interpolation="midpoint"),
    lambda m, x: m.nanquantile(x, 0.5, dim=1),
    lambda m, x: m.nanquantile(x, 0.4),
]


@pytest.mark.parametrize("call", _QUANTILES)
def test_quantile_node_and_gradient(call):
    res = []
    for m in (torch, ember):
        x = m.tensor([[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0]], dtype=m.float64)
        x.requires_grad_()
        r = call(m, x)
        w = m.arange(1.0, r.numel() + 1, dtype=m.float64).reshape(r.shape)
        (g,) = m.autograd.grad((r * w).sum(), x)
        res.append((r.grad_fn.name(), tuple(r.shape), r.tolist(), g.tolist()))
    assert res[1] == res[0]
