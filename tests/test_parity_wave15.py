"""Parity regressions found by the fifteenth wave, a systematic sweep of torch.optim (every
optimizer with each constructor flag that changes its update, float32 and float64, state_dict
layout and load_state_dict round trips, every lr_scheduler, swa_utils; torch is the oracle):
the constructor errors of ``fused=True`` combined with ``foreach=True`` or ``differentiable=True``
(SGD, Adam, AdamW, Adagrad), Adam's checks of a tensor ``lr`` or tensor ``betas`` under
``foreach=True`` and of ``betas`` that are not two floats or two tensors, the
AssertionError of a ``capturable=True`` step of a cpu parameter (each optimizer's message),
Adagrad's state for a parameter of a group added after construction (was a KeyError), its
accumulator's start (the constructor's initial_accumulator_value, v + vj when complex),
add_param_group's message for a non-dict, foreach ASGD's float32 eta and update order, and
Adam's float32 arithmetic of a tensor lr (step size, decoupled weight decay)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _raises(fn_t, fn_e):
    """Both calls raise: the same exception type and message."""
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ee:
        fn_e()
    assert type(ee.value).__name__ == type(et.value).__name__
    assert str(ee.value) == str(et.value)


def _param(lib):
    return lib.nn.Parameter(lib.ones(2, 3))


# ------------------------------------------------------------------ fused constructor errors
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
@pytest.mark.parametrize("kw", [{"foreach": True}, {"differentiable": True}])
def test_fused_constructor_errors(name, kw):
    _raises(
        lambda: getattr(torch.optim, name)([_param(torch)], lr=0.1, fused=True, **kw),
        lambda: getattr(ember.optim, name)([_param(ember)], lr=0.1, fused=True, **kw),
    )


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_false_with_foreach_is_accepted(name):
    o = getattr(ember.optim, name)([_param(ember)], lr=0.1, fused=False, foreach=True)
    t = getattr(torch.optim, name)([_param(torch)], lr=0.1, fused=False, foreach=True)
    assert o.param_groups[0]["fused"] is t.param_groups[0]["fused"] is False


# ------------------------------------------------------------------ Adam's tensor lr / betas
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize(
    "kw",
    [
        {"lr": "t", "foreach": True},
        {"betas": ("t", 0.99)},
        {"betas": (0.9, "t")},
        {"betas": (0, 0.999)},
        {"betas": ("t", "t"), "foreach": True},
        {"betas": ("t2", "t")},
        {"betas": ("t", "t2")},
    ],
)
def test_adam_tensor_hyperparameter_errors(name, kw):
    def make(lib):
        vals = {"t": lambda: lib.tensor(0.9), "t2": lambda: lib.tensor([0.9, 0.8])}

        def conv(v):
            return vals[v]() if isinstance(v, str) else v

        args = {k: tuple(map(conv, v)) if isinstance(v, tuple) else conv(v) for k, v in kw.items()}
        return lambda: getattr(lib.optim, name)([_param(lib)], **args)

    _raises(make(torch), make(ember))


@pytest.mark.parametrize("capturable", [True, False])
def test_adam_tensor_betas_accepted(capturable):
    """Two tensor betas are accepted (with foreach only when capturable) and step like floats."""
    res = []
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
        betas = (lib.tensor(0.8), lib.tensor(0.95))
        kw = {"foreach": True, "capturable": True} if capturable else {}
        o = lib.optim.Adam([p], lr=0.1, betas=betas, **kw)
        p.grad = lib.tensor([0.5, -1.0, 2.0])
        if not capturable:  # a capturable step needs a cuda parameter
            o.step()
        res.append(p.detach().numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6)


def test_adam_tensor_lr_with_foreach_and_capturable_is_accepted():
    for lib in (torch, ember):
        o = lib.optim.Adam([_param(lib)], lr=lib.tensor(0.1), foreach=True, capturable=True)
        assert o.param_groups[0]["capturable"] is True


# ------------------------------------------------------------------ capturable on the cpu
CAPTURABLE = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adadelta", "RMSprop", "Rprop", "ASGD"]


@pytest.mark.parametrize("name", CAPTURABLE)
@pytest.mark.parametrize("foreach", [False, True])
def test_capturable_step_on_cpu_raises(name, foreach):
    def make(lib):
        p = _param(lib)
        o = getattr(lib.optim, name)([p], capturable=True, foreach=foreach)
        o.step()  # no gradient yet: nothing is checked
        p.grad = lib.full((2, 3), 0.5)
        return o.step

    _raises(make(torch), make(ember))


def test_capturable_group_only_checks_its_own_params():
    """A capturable group fails the step; a group without it, stepped alone, does not."""
    for lib in (torch, ember):
        p, q = _param(lib), _param(lib)
        o = lib.optim.Adam([{"params": [p]}, {"params": [q], "capturable": True}], lr=0.1)
        p.grad = lib.full((2, 3), 0.5)
        o.step()  # q has no gradient
        assert abs(float(p[0, 0]) - 0.9) < 1e-6
        q.grad = lib.full((2, 3), 0.5)
        with pytest.raises(AssertionError, match="If capturable=True"):
            o.step()


# ------------------------------------------------------------------ Adagrad's state
def _adagrad_run(lib):
    p, q = _param(lib), _param(lib)
    c = lib.nn.Parameter(lib.tensor([1 + 2j, 3 - 1j]))
    groups = [{"params": [p], "initial_accumulator_value": 0.5}, {"params": [c]}]
    o = lib.optim.Adagrad(groups, lr=0.1, initial_accumulator_value=0.1)
    o.add_param_group({"params": [q], "initial_accumulator_value": 2.0})
    for i in range(3):
        for t in (p, q):
            t.grad = lib.tensor(np.linspace(-1, 2, 6).reshape(2, 3) * (i + 1), dtype=lib.float32)
        c.grad = lib.tensor([1 - 1j, 2 + 0.5j * i])
        o.step()
    sums = [o.state[t]["sum"].detach().numpy() for t in (p, q, c)]
    steps = [float(o.state[t]["step"]) for t in (p, q, c)]
    return [t.detach().numpy() for t in (p, q, c)], sums, steps


def test_adagrad_state_of_added_group_and_initial_accumulator():
    """A parameter of a group added after construction gets its state at its first step (was a
    KeyError); the accumulator starts at the constructor's initial_accumulator_value whatever
    the group says, and at v + vj for a complex parameter."""
    t_vals, t_sums, t_steps = _adagrad_run(torch)
    e_vals, e_sums, e_steps = _adagrad_run(ember)
    assert e_steps == t_steps
    for a, b in zip(e_vals + e_sums, t_vals + t_sums):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_add_param_group_not_a_dict_message():
    _raises(
        lambda: torch.optim.SGD([_param(torch)], lr=0.1).add_param_group([_param(torch)]),
        lambda: ember.optim.SGD([_param(ember)], lr=0.1).add_param_group([_param(ember)]),
    )


# ------------------------------------------------------------------ ASGD foreach=True
@pytest.mark.parametrize(
    "kw", [{}, {"weight_decay": 0.1, "maximize": True}, {"lambd": 1e-3, "t0": 2.0}]
)
def test_asgd_foreach_float64_steps(kw):
    """torch's foreach ASGD computes eta in float32 from its step counter and updates as
    param - eta * (grad + lambd * param): float64 parameters differed by ~1e-9 in 5 steps."""
    res = []
    for lib in (torch, ember):
        rng = np.random.default_rng(0)
        ps = [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 4), ())]
        o = lib.optim.ASGD(ps, lr=0.01, foreach=True, **kw)
        for _ in range(5):
            for p in ps:
                p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)))
            o.step()
        st = o.state[ps[0]]
        res.append([p.detach().numpy() for p in ps] + [st["eta"].numpy(), st["ax"].numpy()])
    for a, b in zip(res[1], res[0]):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)


# ------------------------------------------------------------------ Adam's tensor lr
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize(
    "kw", [{}, {"amsgrad": True, "weight_decay": 0.1, "maximize": True}, {"weight_decay": 0.3}]
)
def test_adam_tensor_lr_float64_params(name, kw):
    """A float32 tensor lr makes torch compute lr / bias_correction and 1 - lr * weight_decay
    in float32: float64 parameters moved by ~1e-7 differently with a float lr's arithmetic."""
    res = []
    for lib in (torch, ember):
        rng = np.random.default_rng(1)
        ps = [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 4), ())]
        o = getattr(lib.optim, name)(ps, lr=lib.tensor(0.01), **kw)
        for _ in range(5):
            for p in ps:
                p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)))
            o.step()
        res.append([p.detach().numpy() for p in ps])
    for a, b in zip(res[1], res[0]):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)
