"""Parity regressions found by the forty-third wave, a sweep of the model-level patterns of
PyTorch's torch.func tutorials (torch is the oracle): per-sample gradients through
``functional_call`` (dropout under the three ``randomness`` modes, batch norm with and without
``replace_all_batch_norm_modules_``), model ensembling with ``stack_module_state`` and a
``base_model`` on the meta device, empirical neural tangent kernels (einsum of ``jacrev``
Jacobians and the ``vjp``/``jvp`` variant), Jacobians and Hessians of small networks,
``linearize`` and ``jvp`` on modules, ``vmap`` over the common layers, MAML-style
``vmap(grad)`` inner loops, and torch.autograd.functional's modes. Fixed:
``stack_module_state`` refuses models whose parameters (or buffers) disagree on
``requires_grad`` (one stacked leaf cannot be partly trainable); ``functionalize`` refuses a
``remove`` other than torch's two options; ``linearize``'s output stays part of the caller's
graph (closed-over parameters, a primal that requires grad) as torch's does; ``backward()``
inside any transform is refused with torch's message; forward AD inside ``grad``/``jacrev``
no longer trips the refusal of ``requires_grad_`` meant for autograd.functional; the reverse-mode
transforms (grad, grad_and_value, vjp, jacrev, hessian) refuse saved-tensor hooks set around or
inside them, so the non-reentrant checkpoint is refused there, and the reentrant checkpoint (an
old-style autograd.Function in torch) is refused by every transform; and mixing a meta tensor
with a cpu one (calling an ensemble's meta ``base_model`` on data) words the error as torch's
meta kernels do, whichever side the meta tensor is on; a random op in vmap's (or jacfwd's)
'error' mode followed by another failure in the same call reports the random op, where torch
stops (a layer built inside the vmapped function, say)."""

from __future__ import annotations

import copy

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")

_X = np.random.RandomState(43).randn(5, 4).astype(np.float32)
_Y = np.array([0, 2, 1, 1, 0])


def _mlp(m, seed: int = 0):
    """A small MLP with the same weights in either framework."""
    rs = np.random.RandomState(seed)
    model = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.Tanh(), m.nn.Linear(8, 3))
    with m.no_grad():
        for p in model.parameters():
            p.copy_(m.tensor(rs.randn(*p.shape).astype(np.float32)))
    return model


def _close(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ stack_module_state: requires_grad
@pytest.mark.parametrize("frozen", [(1,), (0,), (0, 2)])
def test_stack_module_state_refuses_mixed_requires_grad(frozen):
    def call(m):
        models = [_mlp(m, s) for s in range(3)]
        for k in frozen:
            models[k][2].weight.requires_grad_(False)
        return m.func.stack_module_state(models)

    msg = same_error(call, RuntimeError)
    assert msg == "Expected 2.weight from each model to have the same .requires_grad"


def test_stack_module_state_mixed_buffer_requires_grad():
    def call(m):
        models = [m.nn.BatchNorm1d(3) for _ in range(2)]
        models[0].running_mean.requires_grad_()
        return m.func.stack_module_state(models)

    same_error(call, RuntimeError)


def test_stack_module_state_all_frozen_and_ensemble():
    got = {}
    for m in (torch, ember):
        models = [_mlp(m, s) for s in range(3)]
        for mod in models:
            mod[0].weight.requires_grad_(False)
        params, buffers = m.func.stack_module_state(models)
        flags = {k: (v.requires_grad, v.is_leaf) for k, v in params.items()}
        base = copy.deepcopy(models[0]).to("meta")

        def f(p, b, x, m=m, base=base):
            return m.func.functional_call(base, (p, b), (x,))

        out = m.vmap(f, in_dims=(0, 0, None))(params, buffers, m.tensor(_X))
        gup = m.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape))
        out.backward(gup)
        got[m.__name__] = (flags, out, {k: v.grad for k, v in params.items()})
    (fe, oe, ge), (ft, ot, gt) = got["ember"], got["torch"]
    assert fe == ft
    assert fe["0.weight"] == (False, True) and fe["0.bias"] == (True, True)
    _close(oe, ot)
    assert list(ge) == list(gt)
    for k in gt:
        assert (ge[k] is None) == (gt[k] is None)
        if gt[k] is not None:
            _close(ge[k], gt[k])


# ------------------------------------------------------------ functionalize: remove
@pytest.mark.parametrize("remove", ["x", None, "Mutations", "views"])
def test_functionalize_refuses_unknown_remove(remove):
    msg = same_error(lambda m: m.func.functionalize(lambda x: x, remove=remove), RuntimeError)
    assert msg.startswith("functionalize(f, remove='mutations'): received invalid argument")


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_functionalize_valid_remove_runs_the_mutations(remove):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x, m):
        y = x.clone()
        y.add_(1)
        y[0] = 5.0
        y.view(-1).mul_(2)
        x.mul_(3)  # a mutation of the input reaches the caller
        return y

    outs = []
    for m in (torch, ember):
        x = m.tensor(a)
        out = m.func.functionalize(lambda x, m=m: f(x, m), remove=remove)(x)
        outs.append((out, x))
    _close(outs[1][0], outs[0][0])
    _close(outs[1][1], outs[0][1])


# ------------------------------------------------------------ linearize: the output's graph
def test_linearize_output_stays_differentiable_wrt_closed_over_params():
    got = []
    for m in (torch, ember):
        model = _mlp(m)
        out, jvp_fn = m.func.linearize(model, m.tensor(_X))
        flags = (out.requires_grad, out.grad_fn is not None)
        tangent = jvp_fn(m.tensor(_X[::-1].copy()))
        gup = m.tensor(np.linspace(-2, 1, out.numel(), dtype=np.float32).reshape(out.shape))
        out.backward(gup)
        got.append((flags, out, tangent, [p.grad for p in model.parameters()]))
    (fe, oe, te, ge), (ft, ot, tt, gt) = got
    assert fe == ft == (True, True)
    _close(oe, ot)
    _close(te, tt)
    for a, b in zip(ge, gt, strict=True):
        _close(a, b)


def test_linearize_output_differentiable_wrt_a_primal_that_requires_grad():
    a = _X[0]
    got = []
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        out, jvp_fn = m.func.linearize(lambda x, m=m: x.sin() * x, x)
        out.backward(m.tensor(np.linspace(-1, 2, 4, dtype=np.float32)))
        got.append((out.requires_grad, out, x.grad, jvp_fn(m.ones(4))))
    assert got[0][0] == got[1][0] is True
    for e, t in zip(got[1][1:], got[0][1:], strict=True):
        _close(e, t)


def test_linearize_under_no_grad_output_is_detached():
    for m in (torch, ember):
        model = _mlp(m)
        with m.no_grad():
            out, jvp_fn = m.func.linearize(model, m.tensor(_X))
            tangent = jvp_fn(m.tensor(_X))
        assert not out.requires_grad and out.grad_fn is None
        assert not tangent.requires_grad


# ------------------------------------------------------------ backward() inside a transform
def _backward_inside(kind: str):
    def call(m):
        def f(x):
            y = (x * x).sum()
            if kind == "nonscalar":
                (x * 2).backward()  # refused before the non-scalar root is looked at
            elif kind == "function":
                m.autograd.backward(y, retain_graph=True)
            else:
                y.backward(retain_graph=True)
            return y

        return f

    return call


@pytest.mark.parametrize("kind", ["method", "function", "nonscalar"])
@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "jacrev", "vmap"])
def test_backward_inside_a_transform_is_refused(kind, transform):
    make = _backward_inside(kind)

    def call(m):
        f = make(m)
        x = m.ones(2, 3) if transform == "vmap" else m.ones(3)
        if transform == "grad":
            return m.func.grad(f)(x)
        if transform == "vjp":
            return m.func.vjp(f, x)
        if transform == "jvp":
            return m.func.jvp(f, (x,), (x,))
        if transform == "jacrev":
            return m.func.jacrev(f)(x)
        return m.vmap(f)(x)

    msg = same_error(call, RuntimeError)
    assert msg.startswith("backward() called inside a functorch transform.")


def test_autograd_grad_inside_grad_still_runs():
    a = np.array([0.5, -1.2, 2.0], np.float32)
    outs = []
    for m in (torch, ember):

        def f(x, m=m):
            (g,) = m.autograd.grad(x.sin().sum(), x, create_graph=True)
            return (g * g * m.tensor([1.0, 2.0, 3.0])).sum()

        outs.append(m.func.grad(f)(m.tensor(a)))
    _close(outs[1], outs[0])


def test_backward_after_a_transform_reaches_closed_over_params():
    outs = []
    for m in (torch, ember):
        model = _mlp(m)
        g = m.func.grad(lambda x, model=model: model(x).pow(2).sum())(m.tensor(_X[0]))
        g.backward(m.tensor([1.0, -2.0, 0.5, 3.0]))
        outs.append([g] + [p.grad for p in model.parameters()])
    for e, t in zip(outs[1], outs[0], strict=True):
        _close(e, t)


# ------------------------------------------------------------ forward AD inside a transform
@pytest.mark.parametrize("transform", ["grad", "jacrev"])
def test_forward_ad_inside_a_transform(transform):
    """forward_ad's tangents are ember's double-backward jvp, whose dummy cotangents must not
    trip the refusal of ``requires_grad_`` meant for autograd.functional's inputs."""
    a = np.array([0.5, -1.2, 2.0], np.float32)
    outs = []
    for m in (torch, ember):
        fw = m.autograd.forward_ad

        def f(x, m=m, fw=fw):
            with fw.dual_level():
                d = fw.make_dual(x, m.ones_like(x) * 0.5)
                t = fw.unpack_dual((d.sin() * d).exp()).tangent
            return t.sum() if transform == "grad" else t

        x = m.tensor(a)
        outs.append(m.func.grad(f)(x) if transform == "grad" else m.func.jacrev(f)(x))
    _close(outs[1], outs[0])


# ------------------------------------------------------------ the meta device's mixed-device error
@pytest.mark.parametrize(
    "case",
    [
        lambda m, c, mt: c + mt,  # a cpu tensor first: the meta one is the stray
        lambda m, c, mt: mt + c,
        lambda m, c, mt: m.mul(c, mt),
        lambda m, c, mt: m.sub(mt, c),
        lambda m, c, mt: m.cat([c, mt]),
        lambda m, c, mt: m.where(c > 0, mt, c),
    ],
)
def test_meta_and_cpu_mixed_error_names_the_first_device(case):
    """Calling an ensemble's ``base_model`` (moved to the meta device) on real data, or mixing a
    meta tensor into any op: torch's meta-device wording, whichever side the meta tensor is on."""
    msg = same_error(lambda m: case(m, m.ones(2, 4), m.ones(2, 4, device="meta")), RuntimeError)
    assert msg.startswith("Tensor on device ")


# ------------------------------------------------------------ saved-tensor hooks, checkpointing
def _hooks(m):
    return m.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t)


def _hooked(m, enter_only: bool = False):
    def f(x):
        with _hooks(m):
            y = (x.sin() * x).sum()
        return x.sin().sum() if enter_only else y

    return f


_REVERSE = {
    "grad": lambda m, f, x: m.func.grad(f)(x),
    "grad_and_value": lambda m, f, x: m.func.grad_and_value(f)(x),
    "vjp": lambda m, f, x: m.func.vjp(f, x),
    "jacrev": lambda m, f, x: m.func.jacrev(f)(x),
    "hessian": lambda m, f, x: m.func.hessian(f)(x),
    "vmap_grad": lambda m, f, x: m.vmap(m.func.grad(f))(m.stack([x, x * 2])),
}
_FORWARD = {
    "jvp": lambda m, f, x: m.func.jvp(f, (x,), (x * 0.5,))[1],
    "jacfwd": lambda m, f, x: m.func.jacfwd(f)(x),
    "vmap": lambda m, f, x: m.vmap(f)(m.stack([x, x * 2])),
    "linearize": lambda m, f, x: m.func.linearize(f, x)[1](x * 0.5),
}
_A3 = np.array([0.5, -1.2, 2.0], np.float32)


@pytest.mark.parametrize("enter_only", [False, True])
@pytest.mark.parametrize("name", list(_REVERSE))
def test_saved_tensor_hooks_refused_inside_reverse_transforms(name, enter_only):
    msg = same_error(
        lambda m: _REVERSE[name](m, _hooked(m, enter_only), m.tensor(_A3)), RuntimeError
    )
    assert msg.startswith("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved")


@pytest.mark.parametrize("name", ["grad", "vjp", "jacrev"])
def test_reverse_transform_refused_under_saved_tensor_hooks(name):
    def call(m):
        with _hooks(m):
            return _REVERSE[name](m, lambda x, m=m: x.sin().sum(), m.tensor(_A3))

    same_error(call, RuntimeError)


@pytest.mark.parametrize("name", list(_FORWARD))
def test_saved_tensor_hooks_allowed_in_forward_transforms(name):
    outs = [_FORWARD[name](m, _hooked(m), m.tensor(_A3)) for m in (torch, ember)]
    _close(outs[1], outs[0])


def test_disable_saved_tensor_hooks_inside_grad_still_runs():
    outs = []
    for m in (torch, ember):

        def f(x, m=m):
            with m.autograd.graph.disable_saved_tensors_hooks("none here"):
                return (x.sin() * x).sum()

        outs.append(m.func.grad(f)(m.tensor(_A3)))
    _close(outs[1], outs[0])


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("name", ["grad", "vjp", "vmap_grad"])
def test_checkpoint_inside_reverse_transforms(reentrant, name):
    """The reentrant checkpoint is an old-style autograd.Function (refused by every transform),
    the non-reentrant one works through saved-tensor hooks (refused by reverse mode)."""

    def call(m):
        from importlib import import_module

        cp = import_module(m.__name__ + ".utils.checkpoint").checkpoint

        def f(x):
            return cp(lambda q: q.sin() * q, x, use_reentrant=reentrant).sum()

        return _REVERSE[name](m, f, m.tensor(_A3))

    same_error(call, RuntimeError)


def test_reentrant_checkpoint_refused_under_vmap_non_reentrant_runs():
    from importlib import import_module

    def call(m, reentrant):
        cp = import_module(m.__name__ + ".utils.checkpoint").checkpoint
        x = m.tensor(np.stack([_A3, _A3 * 2]))
        return m.vmap(lambda q: cp(lambda z: z.sin() * z, q, use_reentrant=reentrant))(x)

    msg = same_error(lambda m: call(m, True), RuntimeError)
    assert "must override the setup_context staticmethod" in msg
    _close(call(ember, False), call(torch, False))


def test_reentrant_checkpoint_outside_transforms_still_differentiates():
    from importlib import import_module

    grads = []
    for m in (torch, ember):
        cp = import_module(m.__name__ + ".utils.checkpoint").checkpoint
        model = _mlp(m)
        x = m.tensor(_X, requires_grad=True)
        out = cp(model, x, use_reentrant=True)
        out.backward(m.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(5, 3)))
        grads.append([x.grad] + [p.grad for p in model.parameters()])
    for e, t in zip(grads[1], grads[0], strict=True):
        _close(e, t)


# ------------------------------------------------------------ a random op, then another error
def _draw_then_fail(m):
    def f(x):
        noise = m.rand(3)  # torch stops here in 'error' mode
        return m.ones(2, 2) @ (x + noise)  # ... before this shape error

    return f


@pytest.mark.parametrize("transform", ["vmap", "vmap_grad", "jacfwd"])
def test_random_op_before_another_error_reports_the_random_op(transform):
    def call(m):
        f = _draw_then_fail(m)
        x = m.tensor(_A3)
        if transform == "vmap":
            return m.vmap(f)(m.stack([x, x]))
        if transform == "vmap_grad":
            return m.vmap(m.func.grad(lambda x, f=f: f(x).sum()))(m.stack([x, x]))
        return m.func.jacfwd(f)(x)

    msg = same_error(call, RuntimeError)
    assert msg.startswith("vmap: called random operation while in randomness error mode.")


def test_module_built_inside_vmap_draws_random_numbers():
    """A layer initialised inside the vmapped function (a common slip) draws random numbers."""
    same_error(lambda m: m.vmap(lambda x, m=m: m.nn.Linear(3, 1)(x))(m.ones(2, 3)), RuntimeError)


def test_error_without_a_random_op_is_unchanged():
    def boom(x):
        raise ValueError("not a random op")

    for m in (torch, ember):
        with pytest.raises(ValueError, match="not a random op"):
            m.vmap(boom)(m.ones(2, 3))
        with pytest.raises(ValueError, match="not a random op"):
            m.func.jacfwd(boom)(m.ones(3))
        # 'same' and 'different' modes do not refuse the draw either way
        with pytest.raises(ValueError, match="not a random op"):
            m.vmap(lambda x, m=m: boom(x + m.rand(3)), randomness="same")(m.ones(2, 3))
