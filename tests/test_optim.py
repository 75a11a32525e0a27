"""ember.optim optimizers against torch.optim: 20-step trajectories from identical weights,
state_dict layout and round trip, hooks, and torch's errors."""

from __future__ import annotations

import re

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

STEPS = 20
_rng = np.random.default_rng(0)
W0 = _rng.standard_normal((4, 3)).astype(np.float32)
B0 = _rng.standard_normal(4).astype(np.float32)
DATA = [
    (
        _rng.standard_normal((8, 3)).astype(np.float32),
        _rng.standard_normal((8, 4)).astype(np.float32),
    )
    for _ in range(STEPS)
]

# (optimizer name, kwargs); a representative grid of every optimizer's options
GRID = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    ("SGD", {"lr": "tensor", "momentum": 0.9}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "maximize": True, "foreach": False}),
    ("Adam", {"lr": "tensor", "decoupled_weight_decay": True, "weight_decay": 0.2}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.3}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5},
    ),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "weight_decay": 0.1, "momentum": 0.9}),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.02, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.1), "maximize": True}),
    ("ASGD", {"lr": 0.05}),
    ("ASGD", {"lr": 0.05, "t0": 5, "lambd": 1e-2, "weight_decay": 0.1}),
    ("SparseAdam", {"lr": 0.05}),
    ("Adafactor", {"lr": 0.05}),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "d": 1.5, "beta2_decay": -0.5}),
]


def _params(m, w=W0, b=B0):
    return [m.tensor(w.copy(), requires_grad=True), m.tensor(b.copy(), requires_grad=True)]


def _kwargs(m, kw):
    kw = dict(kw)
    if kw.get("lr") == "tensor":
        kw["lr"] = m.tensor(0.05)
    return kw


def _loss_step(m, opt, ps, i, sparse):
    x, y = DATA[i]
    x = x.copy()
    if sparse:
        x[:, 1] = 0  # a zero column: those gradient entries are absent from the sparse gradient
    opt.zero_grad()
    loss = ((m.tensor(x) @ ps[0].T + ps[1] - m.tensor(y)) ** 2).mean()
    loss.backward()
    if sparse:
        for p in ps:
            p.grad = p.grad.to_sparse()
    opt.step()


def _run(m, name, kw, start=0, stop=STEPS, ps=None, sd=None):
    ps = ps if ps is not None else _params(m)
    opt = getattr(m.optim, name)(ps, **_kwargs(m, kw))
    if sd is not None:
        opt.load_state_dict(sd)
    traj = []
    for i in range(start, stop):
        _loss_step(m, opt, ps, i, name == "SparseAdam")
        traj.append([p.detach().numpy().copy() for p in ps])
    return opt, ps, traj


def _np(v):
    return v.detach().numpy() if hasattr(v, "detach") else v


def _same_layout(esd, tsd):
    assert set(esd) == set(tsd) == {"state", "param_groups"}
    assert len(esd["param_groups"]) == len(tsd["param_groups"])
    for eg, tg in zip(esd["param_groups"], tsd["param_groups"]):
        assert set(eg) == set(tg)
        assert eg["params"] == tg["params"]
    assert set(esd["state"]) == set(tsd["state"])
    for k, ts in tsd["state"].items():
        es = esd["state"][k]
        assert set(es) == set(ts), (es.keys(), ts.keys())
        for key, tv in ts.items():
            ev = es[key]
            assert isinstance(ev, ember.Tensor) == isinstance(tv, torch.Tensor), key
            np.testing.assert_allclose(_np(ev), _np(tv), rtol=1e-4, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("name,kw", GRID, ids=[f"{n}-{i}" for i, (n, _) in enumerate(GRID)])
def test_trajectory_and_state_dict(name, kw):
    topt, _tps, ttraj = _run(torch, name, kw)
    # ember: first half, then a fresh optimizer resumed from the state_dict
    eopt, eps_, etraj = _run(ember, name, kw, stop=STEPS // 2)
    tmid, _, _ = _run(torch, name, kw, stop=STEPS // 2)
    _same_layout(eopt.state_dict(), tmid.state_dict())
    sd = eopt.state_dict()
    ps2 = _params(ember, *[p.detach().numpy() for p in eps_])
    eopt2, _, etraj2 = _run(ember, name, kw, start=STEPS // 2, ps=ps2, sd=sd)
    assert len(etraj) + len(etraj2) == len(ttraj) == STEPS
    for i, (e, t) in enumerate(zip(etraj + etraj2, ttraj)):
        for ep, tp in zip(e, t):
            np.testing.assert_allclose(ep, tp, rtol=1e-5, atol=1e-5, err_msg=f"step {i}")
    _same_layout(eopt2.state_dict(), topt.state_dict())


def test_state_names_and_dtype():
    w = ember.zeros(3, 2, names=("out", "in"), requires_grad=True)
    opt = ember.optim.Adam([w], lr=0.1)
    (w * 2).sum().backward()
    opt.step()
    st = opt.state[w]
    assert st["exp_avg"].names == ("out", "in") and st["exp_avg"].dtype == ember.float32
    assert st["step"].dtype == ember.float32 and st["step"].item() == 1.0


def test_param_groups_per_group_options():
    def run(m):
        ps = _params(m)
        opt = m.optim.SGD(
            [{"params": [ps[0]], "lr": 0.2}, {"params": [ps[1]]}], lr=0.05, momentum=0.9
        )
        for i in range(5):
            _loss_step(m, opt, ps, i, False)
        opt.add_param_group({"params": [m.zeros(2, requires_grad=True)], "momentum": 0.1})
        return opt, [p.detach().numpy() for p in ps]

    eo, ev = run(ember)
    to, tv = run(torch)
    for a, b in zip(ev, tv):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert [g["lr"] for g in eo.param_groups] == [g["lr"] for g in to.param_groups]
    assert [g["momentum"] for g in eo.param_groups] == [0.9, 0.9, 0.1]
    _same_layout(eo.state_dict(), to.state_dict())


def test_zero_grad_and_closure_and_hooks():
    ps = _params(ember)
    opt = ember.optim.SGD(ps, lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    hg = ember.optim.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("gpre"))

    def closure():
        opt.zero_grad()
        loss = (ps[0] ** 2).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert calls == ["gpre", "pre", "post"]
    assert float(loss) == pytest.approx(float((ember.tensor(W0) ** 2).sum()))
    h1.remove()
    h2.remove()
    hg.remove()
    opt.step(closure)
    assert calls == ["gpre", "pre", "post"]
    opt.zero_grad(set_to_none=False)
    assert ps[0].grad is not None and float(ps[0].grad.abs().sum()) == 0
    opt.zero_grad()
    assert ps[0].grad is None


def _raises(fn, exc, msg):
    for m in (ember, torch):
        with pytest.raises(exc, match=re.escape(msg)):
            fn(m)


def test_errors():
    _raises(
        lambda m: m.optim.SGD(_params(m), lr=0.1, foo=1),
        TypeError,
        "got an unexpected keyword argument 'foo'",
    )
    _raises(lambda m: m.optim.Adam(_params(m), lr=-0.1), ValueError, "Invalid learning rate: -0.1")
    _raises(lambda m: m.optim.SGD(_params(m), lr=-0.1), ValueError, "Invalid learning rate: -0.1")
    _raises(
        lambda m: m.optim.SGD(m.zeros(3), lr=0.1),
        TypeError,
        "params argument given to the optimizer should be an iterable of Tensors or dicts, "
        "but got torch.FloatTensor",
    )
    _raises(lambda m: m.optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list")
    _raises(
        lambda m: m.optim.SGD([1.0], lr=0.1),
        TypeError,
        "optimizer can only optimize Tensors, but one of the params is float",
    )
    _raises(
        lambda m: m.optim.SGD(_params(m), lr=0.1, momentum=-1),
        ValueError,
        "Invalid momentum value: -1",
    )
    _raises(
        lambda m: m.optim.SGD(_params(m), lr=0.1, nesterov=True),
        ValueError,
        "Nesterov momentum requires a momentum and zero dampening",
    )
    _raises(
        lambda m: m.optim.Adam(_params(m), betas=(1.0, 0.9)),
        ValueError,
        "Invalid beta parameter at index 0: 1.0",
    )

    def dup(m):
        p = _params(m)
        m.optim.SGD([{"params": p}, {"params": p[:1]}], lr=0.1)

    _raises(dup, ValueError, "some parameters appear in more than one parameter group")

    def groups(m):
        ps = _params(m)
        sd = m.optim.SGD(ps, lr=0.1).state_dict()
        m.optim.SGD([{"params": ps[:1]}, {"params": ps[1:]}], lr=0.1).load_state_dict(sd)

    _raises(groups, ValueError, "loaded state dict has a different number of parameter groups")

    def size(m):
        ps = _params(m)
        sd = m.optim.SGD(ps, lr=0.1).state_dict()
        m.optim.SGD(ps[:1], lr=0.1).load_state_dict(sd)

    _raises(
        size,
        ValueError,
        "loaded state dict contains a parameter group that doesn't match the size of "
        "optimizer's group",
    )


@pytest.mark.parametrize(
    "kw",
    [
        {"lr": 0.5, "max_iter": 5},
        {"lr": 1, "max_iter": 6, "history_size": 3},
        {"lr": 1, "max_iter": 8, "line_search_fn": "strong_wolfe"},
    ],
)
def test_lbfgs(kw):
    def run(m, steps=4, ps=None, sd=None):
        ps = ps if ps is not None else _params(m)
        opt = m.optim.LBFGS(ps, **kw)
        if sd is not None:
            opt.load_state_dict(sd)
        x, y = m.tensor(DATA[0][0]), m.tensor(DATA[0][1])

        def closure():
            opt.zero_grad()
            loss = ((x @ ps[0].T + ps[1] - y) ** 2).mean() + (ps[0] ** 4).sum() * 0.01
            loss.backward()
            return loss

        out = []
        for _ in range(steps):
            loss = opt.step(closure)
            out.append((float(loss.detach()), [p.detach().numpy().copy() for p in ps]))
        return opt, ps, out

    topt, _, tout = run(torch)
    eopt, eps_, eout = run(ember, 2)
    tsd, esd = topt.state_dict(), eopt.state_dict()
    assert set(esd["state"][0]) <= set(tsd["state"][0]) | {"al"}
    ps2 = _params(ember, *[p.detach().numpy() for p in eps_])
    eopt2, _, eout2 = run(ember, 2, ps2, eopt.state_dict())
    for (el, ep), (tl, tp) in zip(eout + eout2, tout):
        assert el == pytest.approx(tl, rel=1e-3, abs=1e-5)
        for a, b in zip(ep, tp):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=5e-4)
    # iteration counts near convergence hinge on 1e-9 loss changes (rounding), so not compared
    assert eopt2.state[eopt2.param_groups[0]["params"][0]]["n_iter"] > 0


def test_lbfgs_checkpoint_loads_weights_only(tmp_path):
    # the state holds tensors (H_diag, ro, al), not numpy scalars, so ember.load (weights-only)
    # reads it back, and the resumed optimizer goes on like torch's
    kw = {"lr": 1, "max_iter": 6, "history_size": 3}

    def run(m, path):
        ps = _params(m)
        x, y = m.tensor(DATA[0][0]), m.tensor(DATA[0][1])

        def closure():
            for p in ps:
                p.grad = None
            loss = ((x @ ps[0].T + ps[1] - y) ** 2).mean() + (ps[0] ** 4).sum() * 0.01
            loss.backward()
            return loss

        opt = m.optim.LBFGS(ps, **kw)
        opt.step(closure)
        m.save(opt.state_dict(), path)
        sd = m.load(path)
        st = sd["state"][0]
        types = {k: type(v).__name__ for k, v in st.items() if k != "al"}
        types["ro"] = sorted({type(v).__name__ for v in st["ro"]})
        types["al"] = sorted({type(v).__name__ for v in st["al"] if v is not None})
        opt2 = m.optim.LBFGS(ps, **kw)
        opt2.load_state_dict(sd)
        opt2.step(closure)
        return types, [p.detach().numpy().copy() for p in ps]

    et, ep = run(ember, tmp_path / "e.pt")
    tt, tp = run(torch, tmp_path / "t.pt")
    assert et == tt
    for a, b in zip(ep, tp):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=5e-4)


def test_lbfgs_errors():
    _raises(
        lambda m: m.optim.LBFGS([{"params": _params(m)[:1]}, {"params": _params(m)[1:]}]),
        ValueError,
        "LBFGS doesn't support per-parameter options (parameter groups)",
    )


@pytest.mark.parametrize(
    "kw",
    [
        {"lr": 0.05},
        {"lr": 0.05, "nesterov": False, "weight_decay": 0.2, "adjust_lr_fn": "match_rms_adamw"},
    ],
)
def test_muon(kw):
    def run(m):
        w = m.tensor(W0.copy(), requires_grad=True)
        opt = m.optim.Muon([w], **kw)
        out = []
        for i in range(STEPS):
            opt.zero_grad()
            ((m.tensor(DATA[i][0]) @ w.T - m.tensor(DATA[i][1])) ** 2).mean().backward()
            opt.step()
            out.append(w.detach().numpy().copy())
        return opt, out

    eo, ev = run(ember)
    to, tv = run(torch)
    for a, b in zip(ev, tv):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    _same_layout(eo.state_dict(), to.state_dict())
    _raises(
        lambda m: m.optim.Muon([m.zeros(3, requires_grad=True)]),
        ValueError,
        "Muon only supports 2D parameters",
    )


def test_named_parameters():
    def make(m):
        ps = _params(m)
        return m.optim.Adam([("weight", ps[0]), ("bias", ps[1])], lr=0.05), ps

    (eo, eps_), (to, tps) = make(ember), make(torch)
    for i in range(3):
        _loss_step(ember, eo, eps_, i, False)
        _loss_step(torch, to, tps, i, False)
    _same_layout(eo.state_dict(), to.state_dict())
    assert eo.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]

    def mixed(m, first_named):
        ps = _params(m)
        a = [("w", ps[0])] if first_named else [ps[0]]
        b = [ps[1]] if first_named else [("b", ps[1])]
        m.optim.SGD([{"params": a}, {"params": b}], lr=0.1)

    for first_named, kind in ((True, "without"), (False, "with")):
        _raises(
            lambda m, f=first_named: mixed(m, f),
            ValueError,
            "all optimizer param groups should be with/without names. "
            f"cannot add param group {kind} names to the optimizer",
        )


def test_subclass_step_hooks_once():
    class MySGD(ember.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p = ember.ones(2, requires_grad=True)
    opt = MySGD([p], lr=0.5)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append(1))
    p.sum().backward()
    opt.step()
    assert calls == [1]
    np.testing.assert_allclose(p.detach().numpy(), [0.5, 0.5])
