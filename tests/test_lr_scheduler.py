"""ember.optim.lr_scheduler and ember.optim.swa_utils against torch: 50-step learning-rate
sequences, state_dict round trips, warnings and errors, AveragedModel averages."""

from __future__ import annotations

import copy
import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

N_STEPS = 50


def _opt(m, kind="sgd"):
    """Two param groups with different learning rates (identical setup in both libraries)."""
    p1 = m.nn.Parameter(m.ones(3))
    p2 = m.nn.Parameter(m.ones(2))
    groups = [{"params": [p1]}, {"params": [p2], "lr": 0.05}]
    if kind == "sgd":
        return m.optim.SGD(groups, lr=0.1, momentum=0.9)
    if kind == "adam":
        return m.optim.Adam(groups, lr=0.1, betas=(0.9, 0.99))
    return m.optim.Adagrad(groups, lr=0.1)


def _metric(i):
    # plateaus and improvements mixed, so that ReduceLROnPlateau both waits and reduces
    return [1.0, 0.9, 0.95, 0.9, 0.9, 0.8, 0.85, 0.9, 0.79999, 0.8][i % 10] + (i // 10) * 0.01


def _snapshot(opt, sched):
    rows = []
    for g in opt.param_groups:
        rows.append(float(g["lr"]))
        if "momentum" in g:
            rows.append(float(g["momentum"]))
        if "betas" in g:
            rows.append(float(g["betas"][0]))
    rows.extend(float(x) for x in sched.get_last_lr())
    return rows


def _step(opt, sched, i):
    opt.step()
    if sched.__class__.__name__ == "ReduceLROnPlateau":
        sched.step(_metric(i))
    else:
        sched.step()


def _run(m, case, n=N_STEPS, start=0, state=None):
    opt = _opt(m, case.kind)
    sched = case.build(m.optim.lr_scheduler, m.optim.swa_utils, opt)
    if state is not None:
        opt_groups, sched_state = state
        for g, saved in zip(opt.param_groups, opt_groups):
            g.update(saved)
        sched.load_state_dict(sched_state)
    seq = [_snapshot(opt, sched)] if state is None else []
    for i in range(start, start + n):
        _step(opt, sched, i)
        seq.append(_snapshot(opt, sched))
    return opt, sched, seq


class S:
    def __init__(self, name, build, kind="sgd"):
        self.name, self.build, self.kind = name, build, kind

    def __repr__(self):
        return self.name


def _warm_cos(L, o):
    return L.SequentialLR(
        o,
        [L.LinearLR(o, 0.1, total_iters=5), L.ConstantLR(o, 0.5, 3),
         L.CosineAnnealingLR(o, T_max=20, eta_min=0.001)],
        milestones=[5, 12],
    )  # fmt: skip


class _Scale:
    """A callable object: its __dict__ goes into the state_dict."""

    def __init__(self):
        self.k = 0.97

    def __call__(self, x):
        return self.k**x


CASES = [
    S("lambda", lambda L, W, o: L.LambdaLR(o, lambda e: 0.95**e)),
    S("lambda_list", lambda L, W, o: L.LambdaLR(o, [lambda e: 0.95**e, lambda e: 1 / (e + 1)])),
    S("multiplicative", lambda L, W, o: L.MultiplicativeLR(o, lambda e: 0.9)),
    S("step", lambda L, W, o: L.StepLR(o, step_size=7, gamma=0.5)),
    S("step_default", lambda L, W, o: L.StepLR(o, 10)),
    S("multistep", lambda L, W, o: L.MultiStepLR(o, [5, 5, 20, 33], gamma=0.3)),
    S("constant", lambda L, W, o: L.ConstantLR(o)),
    S("constant_f", lambda L, W, o: L.ConstantLR(o, factor=0.5, total_iters=10)),
    S("linear", lambda L, W, o: L.LinearLR(o)),
    S("linear_f", lambda L, W, o: L.LinearLR(o, 0.2, 0.9, total_iters=30)),
    S("exponential", lambda L, W, o: L.ExponentialLR(o, 0.93)),
    S("poly", lambda L, W, o: L.PolynomialLR(o)),
    S("poly_pow", lambda L, W, o: L.PolynomialLR(o, total_iters=30, power=2.0)),
    S("cosine", lambda L, W, o: L.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    S("cosine_long", lambda L, W, o: L.CosineAnnealingLR(o, T_max=50)),
    S("cosine_short", lambda L, W, o: L.CosineAnnealingLR(o, T_max=3, eta_min=0.01)),
    S("warm_restarts", lambda L, W, o: L.CosineAnnealingWarmRestarts(o, T_0=7)),
    S("warm_restarts_mult",
      lambda L, W, o: L.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01)),
    S("cyclic", lambda L, W, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4)),
    S("cyclic_tri2",
      lambda L, W, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=6,
                                 mode="triangular2")),
    S("cyclic_exp",
      lambda L, W, o: L.CyclicLR(o, [0.01, 0.02], [0.1, 0.2], step_size_up=5,
                                 mode="exp_range", gamma=0.95, base_momentum=0.7)),
    S("cyclic_nomom", lambda L, W, o: L.CyclicLR(o, 0.01, 0.1, 4, cycle_momentum=False),
      "adagrad"),
    S("cyclic_adam", lambda L, W, o: L.CyclicLR(o, 0.001, 0.01, step_size_up=6), "adam"),
    S("cyclic_scale_fn",
      lambda L, W, o: L.CyclicLR(o, 0.01, 0.1, 4, scale_fn=_Scale(), scale_mode="iterations")),
    S("onecycle", lambda L, W, o: L.OneCycleLR(o, 0.5, total_steps=N_STEPS)),
    S("onecycle_linear",
      lambda L, W, o: L.OneCycleLR(o, [0.5, 0.2], epochs=10, steps_per_epoch=6,
                                   anneal_strategy="linear", pct_start=0.25)),
    S("onecycle_three",
      lambda L, W, o: L.OneCycleLR(o, 0.5, total_steps=60, three_phase=True,
                                   base_momentum=0.8, max_momentum=0.9)),
    S("onecycle_adam", lambda L, W, o: L.OneCycleLR(o, 0.01, total_steps=55), "adam"),
    S("onecycle_nomom",
      lambda L, W, o: L.OneCycleLR(o, 0.5, total_steps=N_STEPS, cycle_momentum=False,
                                   div_factor=10.0, final_div_factor=100.0), "adagrad"),
    S("plateau", lambda L, W, o: L.ReduceLROnPlateau(o, patience=2)),
    S("plateau_max_abs",
      lambda L, W, o: L.ReduceLROnPlateau(o, "max", factor=0.5, patience=1, threshold=0.01,
                                          threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.02])),
    S("plateau_min_abs",
      lambda L, W, o: L.ReduceLROnPlateau(o, factor=0.3, patience=0, threshold=0.05,
                                          threshold_mode="abs", min_lr=0.004, eps=1e-3)),
    S("plateau_max_rel", lambda L, W, o: L.ReduceLROnPlateau(o, "max", patience=1, cooldown=1)),
    S("sequential",
      lambda L, W, o: L.SequentialLR(o, [L.ConstantLR(o, 0.1, 2), L.ExponentialLR(o, 0.9)], [2])),
    S("sequential_3", lambda L, W, o: _warm_cos(L, o)),
    S("sequential_step",
      lambda L, W, o: L.SequentialLR(o, [L.StepLR(o, 3), L.MultiStepLR(o, [4, 9])], [10])),
    S("chained",
      lambda L, W, o: L.ChainedScheduler([L.ConstantLR(o, 0.1, 2), L.ExponentialLR(o, 0.9)])),
    S("chained_opt",
      lambda L, W, o: L.ChainedScheduler([L.StepLR(o, 4), L.LinearLR(o, 0.5, total_iters=8)],
                                         optimizer=o)),
    S("swalr", lambda L, W, o: W.SWALR(o, swa_lr=0.05)),
    S("swalr_linear", lambda L, W, o: W.SWALR(o, [0.2, 0.01], anneal_epochs=7,
                                              anneal_strategy="linear")),
    S("swalr_zero", lambda L, W, o: W.SWALR(o, 0.02, anneal_epochs=0)),
]  # fmt: skip


def _close(a, b):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_sequence_matches_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the right calling order emits no warning in either
        _, _, got = _run(ember, case)
        _, _, want = _run(torch, case)
    _close(got, want)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_state_dict_round_trip(case):
    k = 20
    opt, sched, first = _run(ember, case, n=k)
    groups = [{key: v for key, v in g.items() if key != "params"} for g in opt.param_groups]
    state = copy.deepcopy(sched.state_dict())
    assert "optimizer" not in state
    _, _, rest = _run(ember, case, n=N_STEPS - k, start=k, state=(groups, state))
    _, _, want = _run(torch, case)
    _close(first + rest, want)


def test_resume_with_last_epoch():
    def run(m):
        opt = _opt(m)
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
        seq = []
        for s in (m.optim.lr_scheduler.StepLR(opt, 3, last_epoch=4),
                  m.optim.lr_scheduler.CosineAnnealingLR(opt, 10, last_epoch=4)):  # fmt: skip
            for _ in range(12):
                opt.step()
                s.step()
                seq.append(s.get_last_lr() + [s.last_epoch])
        return seq

    _close(run(ember), run(torch))


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in rec]


@pytest.mark.parametrize(
    "scenario", ["before_opt", "epoch_arg", "get_lr", "overridden", "plateau_epoch", "closed_form"]
)
def test_warnings_match_torch(scenario):
    def go(m):
        L = m.optim.lr_scheduler
        opt = _opt(m)
        s = L.ReduceLROnPlateau(opt) if scenario == "plateau_epoch" else L.StepLR(opt, 2)
        out = []

        def body():
            if scenario == "before_opt":
                s.step()
                s.step()
            elif scenario == "epoch_arg":
                opt.step()
                s.step(5)
            elif scenario == "get_lr":
                out.append(s.get_lr())
            elif scenario == "overridden":
                opt.step = lambda: None
                s.step()
            elif scenario == "plateau_epoch":
                s.step(1.0, 3)
            else:
                opt.step()
                for e in (4, 1, 6):
                    s.step(e)
                    out.append(s.get_last_lr())

        return _warnings_of(body), out

    got, got_out = go(ember)
    want, want_out = go(torch)
    assert got == want and len(want) > 0
    if scenario == "closed_form":
        _close(got_out, want_out)


def test_warm_restarts_fractional_epochs():
    def run(m):
        opt = _opt(m)
        s = m.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        seq = []
        for e in [0.5, 1.25, 2.9, 3.0, 4.7, 9.0, 10.5, 21.0, 30.2, 2.0]:
            opt.step()
            s.step(e)
            seq.append(s.get_last_lr() + [s.T_cur, s.T_i, s.last_epoch])
        return seq

    _close(run(ember), run(torch))


def _err_cases():
    def two_opts(m, make):
        return make(m.optim.lr_scheduler, _opt(m), _opt(m))

    return {
        "constant_factor": lambda m: m.optim.lr_scheduler.ConstantLR(_opt(m), factor=2.0),
        "linear_start": lambda m: m.optim.lr_scheduler.LinearLR(_opt(m), start_factor=0),
        "linear_end": lambda m: m.optim.lr_scheduler.LinearLR(_opt(m), end_factor=1.5),
        "warm_T0": lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(m), 0),
        "warm_Tmult": lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(m), 2, 0),
        "warm_eta": lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(
            _opt(m), 2, eta_min="x"
        ),
        "warm_neg_epoch": lambda m: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(
            _opt(m), 2
        ).step(-1),
        "lambda_len": lambda m: m.optim.lr_scheduler.LambdaLR(_opt(m), [lambda e: 1.0]),
        "cyclic_mode": lambda m: m.optim.lr_scheduler.CyclicLR(_opt(m), 0.1, 1, mode="x"),
        "cyclic_no_momentum": lambda m: m.optim.lr_scheduler.CyclicLR(_opt(m, "adagrad"), 0.1, 1),
        "cyclic_len": lambda m: m.optim.lr_scheduler.CyclicLR(_opt(m), [0.1], 1),
        "onecycle_none": lambda m: m.optim.lr_scheduler.OneCycleLR(_opt(m), 0.1),
        "onecycle_total": lambda m: m.optim.lr_scheduler.OneCycleLR(_opt(m), 0.1, total_steps=0),
        "onecycle_epochs": lambda m: m.optim.lr_scheduler.OneCycleLR(
            _opt(m), 0.1, epochs=0, steps_per_epoch=2
        ),
        "onecycle_spe": lambda m: m.optim.lr_scheduler.OneCycleLR(
            _opt(m), 0.1, epochs=2, steps_per_epoch=-1
        ),
        "onecycle_pct": lambda m: m.optim.lr_scheduler.OneCycleLR(
            _opt(m), 0.1, total_steps=5, pct_start=1.5
        ),
        "onecycle_anneal": lambda m: m.optim.lr_scheduler.OneCycleLR(
            _opt(m), 0.1, total_steps=5, anneal_strategy="x"
        ),
        "onecycle_no_momentum": lambda m: m.optim.lr_scheduler.OneCycleLR(
            _opt(m, "adagrad"), 0.1, total_steps=5
        ),
        "onecycle_too_many": _onecycle_overstep,
        "plateau_factor": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(_opt(m), factor=1.0),
        "plateau_mode": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(_opt(m), mode="x"),
        "plateau_tmode": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(
            _opt(m), threshold_mode="x"
        ),
        "plateau_min_lr": lambda m: m.optim.lr_scheduler.ReduceLROnPlateau(_opt(m), min_lr=[0.1]),
        "plateau_groups": _plateau_groups,
        "resume_no_initial": lambda m: m.optim.lr_scheduler.StepLR(_opt(m), 2, last_epoch=3),
        "sequential_empty": lambda m: m.optim.lr_scheduler.SequentialLR(_opt(m), [], []),
        "sequential_milestones": lambda m: _seq_milestones(m),
        "sequential_plateau": lambda m: _with_plateau(m, "SequentialLR"),
        "chained_empty": lambda m: m.optim.lr_scheduler.ChainedScheduler([]),
        "chained_plateau": lambda m: _with_plateau(m, "ChainedScheduler"),
        "swalr_anneal": lambda m: m.optim.swa_utils.SWALR(_opt(m), 0.1, anneal_strategy="x"),
        "swalr_epochs": lambda m: m.optim.swa_utils.SWALR(_opt(m), 0.1, anneal_epochs=-1),
        "swalr_len": lambda m: m.optim.swa_utils.SWALR(_opt(m), [0.1, 0.2, 0.3]),
        "sequential_other_opt": lambda m: two_opts(
            m, lambda L, a, b: L.SequentialLR(a, [L.StepLR(a, 2), L.StepLR(b, 2)], [3])
        ),
        "chained_other_opt": lambda m: two_opts(
            m, lambda L, a, b: L.ChainedScheduler([L.StepLR(a, 2), L.StepLR(b, 2)])
        ),
    }


def _onecycle_overstep(m):
    opt = _opt(m)
    s = m.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=2)
    for _ in range(4):
        opt.step()
        s.step()


def _plateau_groups(m):
    opt = _opt(m)
    s = m.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0, 0.0])
    opt.add_param_group({"params": [m.nn.Parameter(m.ones(1))]})
    for v in (1.0, 2.0, 3.0):
        s.step(v)


def _seq_milestones(m):
    L = m.optim.lr_scheduler
    o = _opt(m)
    return L.SequentialLR(o, [L.StepLR(o, 2), L.StepLR(o, 3)], [2, 3])


def _with_plateau(m, name):
    L = m.optim.lr_scheduler
    o = _opt(m)
    scheds = [L.StepLR(o, 2), L.ReduceLROnPlateau(o)]
    if name == "SequentialLR":
        return L.SequentialLR(o, scheds, [3])
    return L.ChainedScheduler(scheds)


ERRS = _err_cases()


@pytest.mark.parametrize("name", list(ERRS))
def test_errors_match_torch(name):
    fn = ERRS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as want:
            fn(torch)
        with pytest.raises(type(want.value)) as got:
            fn(ember)
    if "other_opt" in name:  # the message embeds the optimizer's repr: compare the stable part
        assert str(got.value).split(" has ")[0] == str(want.value).split(" has ")[0]
    else:
        assert str(got.value) == str(want.value)


# ---------------------------------------------------------------- swa_utils.AveragedModel


def _linear(m):
    lin = m.nn.Linear(3, 2)
    with m.no_grad():
        lin.weight.copy_(m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 7))
        lin.bias.copy_(m.tensor(np.array([0.5, -0.25], dtype=np.float32)))
    return lin


AVG_CASES = {
    "swa": lambda W: {},
    "ema_multi": lambda W: {"multi_avg_fn": W.get_ema_multi_avg_fn(0.9)},
    "swa_multi": lambda W: {"multi_avg_fn": W.get_swa_multi_avg_fn()},
    "ema_avg_fn": lambda W: {"avg_fn": W.get_ema_avg_fn(0.8)},
    "swa_avg_fn": lambda W: {"avg_fn": W.get_swa_avg_fn()},
    "custom_avg_fn": lambda W: {"avg_fn": lambda a, c, n: 0.5 * a + 0.5 * c},
    "use_buffers": lambda W: {"use_buffers": True, "multi_avg_fn": W.get_ema_multi_avg_fn()},
}


@pytest.mark.parametrize("name", list(AVG_CASES))
def test_averaged_model_matches_torch(name):
    def run(m):
        W = m.optim.swa_utils
        model = _linear(m)
        avg = W.AveragedModel(model, **AVG_CASES[name](W))
        rng = np.random.default_rng(0)
        for _ in range(6):
            with m.no_grad():
                for p in model.parameters():
                    upd = rng.standard_normal(tuple(p.shape)).astype(np.float32)
                    p.add_(m.tensor(upd))
            avg.update_parameters(model)
        x = m.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
        out = avg(x).detach().numpy()
        params = [p.detach().numpy().copy() for p in avg.parameters()]
        names = [n for n, _ in avg.named_parameters()]
        return params, out, int(avg.n_averaged.item()), names

    gp, go, gn, gnames = run(ember)
    tp, to, tn, tnames = run(torch)
    assert gn == tn == 6 and gnames == tnames
    for a, b in zip(gp, tp):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(go, to, rtol=1e-5, atol=1e-6)


def test_averaged_model_is_a_copy():
    model = _linear(ember)
    avg = ember.optim.swa_utils.AveragedModel(model)
    assert avg.module is not model
    assert [n for n, _ in avg.named_buffers()] == ["n_averaged"]
    assert avg.n_averaged.dtype == ember.int64
    with ember.no_grad():
        model.weight.add_(1.0)
    assert not np.allclose(avg.module.weight.detach().numpy(), model.weight.detach().numpy())


def test_update_bn_without_batchnorm_is_noop():
    class NoIter:
        def __iter__(self):
            raise AssertionError("loader must not be read when the model has no BatchNorm")

    for m in (ember, torch):
        model = _linear(m)
        model.eval()
        before = [p.detach().numpy().copy() for p in model.parameters()]
        m.optim.swa_utils.update_bn(NoIter(), model)
        assert not model.training
        for a, p in zip(before, model.parameters()):
            np.testing.assert_array_equal(a, p.detach().numpy())


def test_tensor_lr_updated_in_place_like_torch():
    def run(m):
        p = m.nn.Parameter(m.ones(2))
        o = m.optim.Adam([p], lr=m.tensor(0.1))
        lr0 = o.param_groups[0]["lr"]
        s = m.optim.lr_scheduler.CosineAnnealingLR(o, 10)
        seq = []
        for _ in range(12):
            o.step()
            s.step()
            seq.append(float(o.param_groups[0]["lr"]))
        assert o.param_groups[0]["lr"] is lr0
        plateau = m.optim.lr_scheduler.ReduceLROnPlateau(o, patience=0)
        for v in (1.0, 2.0, 3.0):
            plateau.step(m.tensor(v))  # a 0-dim tensor metric is accepted
            seq.append(float(o.param_groups[0]["lr"]))
        return seq

    _close(run(ember), run(torch))


_RESUMABLE = {
    "step": lambda L, o, e: L.StepLR(o, 2, last_epoch=e),
    "multistep": lambda L, o, e: L.MultiStepLR(o, [2, 4, 8], last_epoch=e),
    "constant": lambda L, o, e: L.ConstantLR(o, 0.5, total_iters=4, last_epoch=e),
    "linear": lambda L, o, e: L.LinearLR(o, 0.5, total_iters=4, last_epoch=e),
    "exponential": lambda L, o, e: L.ExponentialLR(o, 0.5, last_epoch=e),
    "poly": lambda L, o, e: L.PolynomialLR(o, total_iters=6, power=2.0, last_epoch=e),
    "cosine": lambda L, o, e: L.CosineAnnealingLR(o, 5, eta_min=0.001, last_epoch=e),
    "lambda": lambda L, o, e: L.LambdaLR(o, lambda k: 1 / (k + 1), last_epoch=e),
    "multiplicative": lambda L, o, e: L.MultiplicativeLR(o, lambda k: 0.9, last_epoch=e),
    "warm_restarts": lambda L, o, e: L.CosineAnnealingWarmRestarts(o, 3, T_mult=2, last_epoch=e),
    "cyclic": lambda L, o, e: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, last_epoch=e),
    "onecycle": lambda L, o, e: L.OneCycleLR(o, 1.0, total_steps=30, last_epoch=e),
    "sequential": lambda L, o, e: L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, total_iters=3), L.ExponentialLR(o, 0.9)], [3], last_epoch=e
    ),
}


@pytest.mark.parametrize("last_epoch", [0, 3, 7])
@pytest.mark.parametrize("name", sorted(_RESUMABLE))
def test_every_scheduler_resumes_like_torch(name, last_epoch):
    def run(m):
        opt = _opt(m)
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"]
            if name == "onecycle":
                g.update(max_lr=1.0, min_lr=1e-5, initial_lr=0.04)
                g.update(max_momentum=0.95, base_momentum=0.85)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = _RESUMABLE[name](m.optim.lr_scheduler, opt, last_epoch)
        seq = [list(s.get_last_lr())]
        for _ in range(10):
            opt.step()
            s.step()
            seq.append(list(s.get_last_lr()))
        return seq

    _close(run(ember), run(torch))


def test_get_lr_called_directly_at_epoch_0():
    def run(m):
        opt = _opt(m)
        s = m.optim.lr_scheduler.StepLR(opt, 1, gamma=0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return s.get_lr()

    _close(run(ember), run(torch))


def test_sequential_milestone_is_not_a_step():
    def run(m):
        L = m.optim.lr_scheduler
        opt = _opt(m)
        s = L.SequentialLR(opt, [L.ConstantLR(opt, 0.5, 3), L.ExponentialLR(opt, 0.9)], [3])
        for _ in range(10):
            opt.step()
            s.step()
        return [(d["_step_count"], d["last_epoch"]) for d in s.state_dict()["_schedulers"]]

    assert run(ember) == run(torch)
