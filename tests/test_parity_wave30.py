"""Parity regressions found by the thirtieth wave, a class-by-class sweep of
torch.optim.lr_scheduler and torch.optim.swa_utils (every scheduler and constructor option:
learning-rate, momentum and beta1 trajectories over many steps with several param groups,
``last_epoch`` resuming, ``step(epoch)``, the calling-order warnings, state_dict round trips and
ember.save/load of them, tensor learning rates, argument errors; AveragedModel, the averaging
functions, SWALR and update_bn; torch is the oracle): ``get_last_lr()`` and ``base_lrs`` aliased
a group's tensor learning rate (torch keeps copies, so an earlier ``get_last_lr()`` kept
changing), a tensor ``base_lr``/``swa_lr`` given once was shared by every group (CyclicLR then
wrote every group's lr into one tensor), a param group added after the scheduler was silently
left alone where torch's strict zips raise ValueError, ``gamma=None`` was taken as "no scaling"
(torch's TypeError), a step method patched onto the optimizer instance was dropped when a
scheduler wrapped ``optimizer.step``, what is not an Optimizer was accepted (torch's TypeError),
MultiplicativeLR's non-callable lambdas (torch's TypeError), ``_LRScheduler`` is a subclass with
its own name, ``SequentialLR.recursive_undo``, the schedulers' containers kept as given, the hooks
torch's subclasses override (``ReduceLROnPlateau._is_better``, ``OneCycleLR._annealing_cos``,
``CyclicLR._triangular_scale_fn``), SWALR's get_lr warning charged to its caller; in swa_utils:
the EMA functions' ``decay`` check, the averaging functions run without recording a graph,
integer tensors in the multi-tensor SWA average refused as torch's foreach kernels refuse them,
AveragedModel's default SWA average on the CPU (torch's per-tensor ``a + (c - a) / (n + 1)``, not
lerp: the roundings differ), a model with other buffers refused, and SWALR's ``anneal_func`` (kept
out of its state_dict, rebuilt by load_state_dict)."""

from __future__ import annotations

import types
import warnings

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")


def _opt(m, kind="sgd", tensor_lr=False):
    """Two param groups (the first at the default lr, a tensor when ``tensor_lr``)."""
    p1 = m.nn.Parameter(m.ones(3))
    p2 = m.nn.Parameter(m.ones(2))
    lr = m.tensor(0.1) if tensor_lr else 0.1
    groups = [{"params": [p1]}, {"params": [p2], "lr": 0.05}]
    if kind == "adam":
        return m.optim.Adam(groups, lr=lr, betas=(0.9, 0.99))
    return m.optim.SGD(groups, lr=lr, momentum=0.9)


def _f(x):
    return float(x)


# ------------------------------------------------------ get_last_lr copies tensor learning rates
_TENSOR_LR = {
    "lambda": lambda L, W, o: L.LambdaLR(o, lambda e: 0.9**e),
    "multiplicative": lambda L, W, o: L.MultiplicativeLR(o, lambda e: 0.9),
    "step": lambda L, W, o: L.StepLR(o, 2),
    "multistep": lambda L, W, o: L.MultiStepLR(o, [1, 3]),
    "constant": lambda L, W, o: L.ConstantLR(o, 0.5, 3),
    "linear": lambda L, W, o: L.LinearLR(o, 0.5, total_iters=4),
    "exponential": lambda L, W, o: L.ExponentialLR(o, 0.8),
    "poly": lambda L, W, o: L.PolynomialLR(o, 6),
    "cosine": lambda L, W, o: L.CosineAnnealingLR(o, 4),
    "warm_restarts": lambda L, W, o: L.CosineAnnealingWarmRestarts(o, 3),
    "cyclic": lambda L, W, o: L.CyclicLR(o, 0.01, 0.1, 2),
    "plateau": lambda L, W, o: L.ReduceLROnPlateau(o, patience=0),
    "sequential": lambda L, W, o: L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)], [2]
    ),
    "chained": lambda L, W, o: L.ChainedScheduler([L.StepLR(o, 2), L.ExponentialLR(o, 0.9)]),
    "swalr": lambda L, W, o: W.SWALR(o, 0.05, anneal_epochs=3),
}


@pytest.mark.parametrize("name", sorted(_TENSOR_LR))
def test_get_last_lr_does_not_alias_a_tensor_lr(name):
    def run(m):
        o = _opt(m, tensor_lr=True)
        s = _TENSOR_LR[name](m.optim.lr_scheduler, m.optim.swa_utils, o)
        first = s.get_last_lr()
        lr0 = o.param_groups[0]["lr"]  # the tensor (the second group's lr is a float)
        aliased = first[0] is lr0
        base_aliased = any(b is lr0 for b in getattr(s, "base_lrs", []))
        for i in range(5):
            o.step()
            if name == "plateau":
                s.step(1.0 + i)
            else:
                s.step()
        # the list taken before the steps still holds the values of that time
        return [_f(x) for x in first], [_f(x) for x in s.get_last_lr()], aliased, base_aliased

    got, want = run(ember), run(torch)
    assert got[2] is want[2] is False and got[3] is want[3] is False
    np.testing.assert_allclose(got[0], want[0], rtol=1e-7)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


# -------------------------------------------- a tensor hyper-parameter given once is copied per group
@pytest.mark.parametrize(
    "build",
    [
        lambda m, o: m.optim.lr_scheduler.CyclicLR(o, m.tensor(0.01), [0.1, 0.4], 2),
        lambda m, o: m.optim.swa_utils.SWALR(o, m.tensor(0.05), anneal_epochs=2),
    ],
    ids=["cyclic_base_lr", "swalr_swa_lr"],
)
def test_tensor_param_given_once_is_not_shared_by_groups(build):
    def run(m):
        o = _opt(m)
        s = build(m, o)
        seq = []
        for _ in range(4):
            o.step()
            s.step()
            seq.append([_f(g["lr"]) for g in o.param_groups])
        g0, g1 = o.param_groups
        keys = [k for k in ("lr", "swa_lr") if k in g0 and not isinstance(g0[k], float)]
        shared = any(g0[k] is g1[k] for k in keys)
        return seq, shared

    (got, got_shared), (want, want_shared) = run(ember), run(torch)
    assert got_shared is want_shared is False
    np.testing.assert_allclose(got, want, rtol=1e-6)


# ------------------------------------------- a param group added after the scheduler: torch's error
_ADDED_GROUP = {
    "lambda": lambda L, o: L.LambdaLR(o, lambda e: 0.9**e),
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9),
    "cosine": lambda L, o: L.CosineAnnealingLR(o, 2),
    "warm_restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, 3),
    "cyclic": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 2),
    "cyclic_no_momentum": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 2, cycle_momentum=False),
    "step_closed_form": lambda L, o: L.StepLR(o, 2),
    "sequential": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.5, total_iters=2), L.ExponentialLR(o, 0.9)], [2]
    ),
    # these scale every group's current lr, so the new group simply follows
    "step": lambda L, o: L.StepLR(o, 2),
    "exponential": lambda L, o: L.ExponentialLR(o, 0.9),
}


@pytest.mark.parametrize("name", sorted(_ADDED_GROUP))
def test_param_group_added_after_the_scheduler(name):
    def run(m):
        o = _opt(m)
        s = _ADDED_GROUP[name](m.optim.lr_scheduler, o)
        o.add_param_group({"params": [m.nn.Parameter(m.ones(1))], "lr": 0.3})
        seq = []
        for i in range(6):
            o.step()
            if name == "step_closed_form":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # step(epoch)'s deprecation
                    s.step(i + 1)
            else:
                s.step()
            seq.append([float(g["lr"]) for g in o.param_groups])
        return seq

    try:
        want = run(torch)
    except ValueError:
        same_error(run, ValueError)
    else:
        np.testing.assert_allclose(run(ember), want, rtol=1e-12)


# ------------------------------------------------------------ a None factor fails in the product
@pytest.mark.parametrize(
    "build",
    [
        lambda L, o: L.ExponentialLR(o, None),
        lambda L, o: L.StepLR(o, 2, None),
        lambda L, o: L.PolynomialLR(o, 3, None),
    ],
    ids=["exponential", "step", "poly"],
)
def test_none_gamma_is_not_taken_as_no_scaling(build):
    def fn(m):
        o = _opt(m)
        s = build(m.optim.lr_scheduler, o)
        for _ in range(3):
            o.step()
            s.step()

    same_error(fn, TypeError)


# ------------------------------------------------------- a step patched onto the instance survives
def test_patched_optimizer_step_is_kept():
    def run(m):
        o = _opt(m)
        calls = []
        cls_step = type(o).step

        def my_step(self, *a, **k):
            calls.append(1)
            return cls_step(self, *a, **k)

        o.step = types.MethodType(my_step, o)
        s = m.optim.lr_scheduler.StepLR(o, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the right order: no warning
            for _ in range(3):
                o.step()
                s.step()
        return len(calls), o._opt_called, o.step.__name__

    assert run(ember) == run(torch) == (3, True, "my_step")


def test_plain_function_step_is_refused_like_torch():
    def fn(m):
        o = _opt(m)
        o.step = lambda: None
        m.optim.lr_scheduler.StepLR(o, 2)

    same_error(fn, AttributeError)


# --------------------------------------------------------------- what is not an Optimizer is refused
class _NotAnOptimizer:
    """Looks like an optimizer (param_groups, defaults, step) without being one."""

    def __init__(self):
        self.param_groups = [{"params": [], "lr": 0.1}]
        self.defaults = {"momentum": 0.9}

    def step(self):
        pass


_BUILDERS = {
    "LambdaLR": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0),
    "MultiplicativeLR": lambda m, o: m.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 1.0),
    "StepLR": lambda m, o: m.optim.lr_scheduler.StepLR(o, 2),
    "CosineAnnealingWarmRestarts": lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, 2
    ),
    "CyclicLR": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0),
    "OneCycleLR": lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, 1.0, 10),
    "ReduceLROnPlateau": lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o),
    "SWALR": lambda m, o: m.optim.swa_utils.SWALR(o, 0.1),
}


@pytest.mark.parametrize("name", sorted(_BUILDERS))
def test_not_an_optimizer_is_refused(name):
    msg = same_error(lambda m: _BUILDERS[name](m, _NotAnOptimizer()), TypeError)
    assert msg == "_NotAnOptimizer is not an Optimizer"


# ------------------------------------------------------------------- MultiplicativeLR's lambdas
@pytest.mark.parametrize(
    "lam",
    [lambda m: 0.9, lambda m: [lambda e: 0.9, 3], lambda m: (m.tensor(0.9), lambda e: 1.0)],
    ids=["float", "int_in_list", "tensor_in_tuple"],
)
def test_multiplicative_lambdas_must_be_callable(lam):
    same_error(lambda m: m.optim.lr_scheduler.MultiplicativeLR(_opt(m), lam(m)), TypeError)


def test_multiplicative_length_checked_before_callables():
    same_error(lambda m: m.optim.lr_scheduler.MultiplicativeLR(_opt(m), [3]), ValueError)


def test_lambda_lr_does_not_check_callables():
    for m in (ember, torch):
        m.optim.lr_scheduler.LambdaLR(_opt(m), [lambda e: 1.0, lambda e: 0.5])  # builds


# ----------------------------------------------------------------------- scheduler class layout
def test_old_lr_scheduler_name_is_a_subclass():
    for m in (ember, torch):
        L = m.optim.lr_scheduler
        assert L._LRScheduler.__name__ == "_LRScheduler"
        assert issubclass(L._LRScheduler, L.LRScheduler) and L._LRScheduler is not L.LRScheduler

    def run(m):
        class Half(m.optim.lr_scheduler._LRScheduler):
            def get_lr(self):
                return [b * 0.5**self.last_epoch for b in self.base_lrs]

        o = _opt(m)
        s = Half(o)
        out = []
        for _ in range(3):
            o.step()
            s.step()
            out.append(s.get_last_lr())
        return out

    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-12)


def test_sequential_recursive_undo_and_containers():
    def run(m):
        L = m.optim.lr_scheduler
        o = _opt(m)
        inner = L.ChainedScheduler((L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)))
        s = L.SequentialLR(o, (inner, L.StepLR(o, 2)), (3,))
        before = [c.last_epoch for c in inner._schedulers]
        s.recursive_undo()  # public in torch: takes one epoch back from each sub-scheduler
        after = [c.last_epoch for c in inner._schedulers]
        return (
            type(inner._schedulers).__name__,
            type(s._schedulers).__name__,
            type(s._milestones).__name__,
            before,
            after,
        )

    assert run(ember) == run(torch)


@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_loading_a_state_of_more_sub_schedulers_is_refused(kind):
    def fn(m):
        L = m.optim.lr_scheduler
        o = _opt(m)

        def make(n):
            subs = tuple(L.StepLR(o, k + 2) for k in range(n))
            if kind == "sequential":
                return L.SequentialLR(o, subs, list(range(2, 2 * n, 2)))
            return L.ChainedScheduler(subs)

        make(2).load_state_dict(make(3).state_dict())

    same_error(fn, IndexError)


# ------------------------------------------------- the hooks torch's subclasses override are honoured
def test_subclass_hooks_are_used():
    def run(m):
        L = m.optim.lr_scheduler
        out = []

        class EveryMetricImproves(L.ReduceLROnPlateau):
            def _is_better(self, a, best):
                return True

        o = _opt(m)
        s = EveryMetricImproves(o, patience=0)
        for v in (1.0, 2.0, 3.0):
            s.step(v)
        out.append([float(x) for x in s.get_last_lr()])

        class HalfCos(L.OneCycleLR):
            @staticmethod
            def _annealing_cos(start, end, pct):
                return 0.5 * (start + end)

        o = _opt(m)
        s = HalfCos(o, 1.0, 10)
        for _ in range(3):
            o.step()
            s.step()
        out.append([float(x) for x in s.get_last_lr()])

        class Flat(L.CyclicLR):
            @staticmethod
            def _triangular_scale_fn(x):
                return 0.5

        o = _opt(m)
        s = Flat(o, 0.01, 0.1, 2)
        o.step()
        s.step()
        out.append([float(x) for x in s.get_last_lr()])
        s.load_state_dict(s.state_dict())  # the scale function is rebuilt from the class
        o.step()
        s.step()
        out.append([float(x) for x in s.get_last_lr()])
        return out

    got, want = run(ember), run(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


# ------------------------------------------------------------- which frame a warning is charged to
def _warning_files(m, scenario):
    import os

    L = m.optim.lr_scheduler
    o = _opt(m)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        if scenario == "swalr_get_lr":
            m.optim.swa_utils.SWALR(o, 0.1).get_lr()
        elif scenario == "step_get_lr":
            L.StepLR(o, 2).get_lr()
        elif scenario == "before_optimizer":
            L.ExponentialLR(o, 0.9).step()
        else:
            s = L.ReduceLROnPlateau(o)
            s.step(1.0, 3)
    return [(os.path.basename(w.filename), w.category) for w in rec]


@pytest.mark.parametrize(
    "scenario", ["swalr_get_lr", "step_get_lr", "before_optimizer", "plateau_epoch"]
)
def test_warnings_are_charged_to_torchs_frame(scenario):
    got = _warning_files(ember, scenario)
    want = _warning_files(torch, scenario)
    assert len(want) == 1 and got == want


# ------------------------------------------------------------------ swa_utils: averaging functions
@pytest.mark.parametrize("decay", [-0.1, 1.5, 2])
@pytest.mark.parametrize("fn", ["get_ema_multi_avg_fn", "get_ema_avg_fn"])
def test_ema_decay_checked(fn, decay):
    msg = same_error(lambda m: getattr(m.optim.swa_utils, fn)(decay), ValueError)
    assert "Please provide a value in [0,1] range." in msg


def test_ema_decay_bounds_accepted():
    for m in (ember, torch):
        m.optim.swa_utils.get_ema_multi_avg_fn(0.0)
        m.optim.swa_utils.get_ema_avg_fn(1.0)


@pytest.mark.parametrize(
    "fn",
    ["get_ema_multi_avg_fn", "get_swa_multi_avg_fn"],
)
def test_multi_avg_fns_update_leaf_parameters_without_grad(fn):
    def run(m):
        p = m.nn.Parameter(m.tensor([1.0, 2.0, 3.0]))
        q = m.tensor([2.0, 5.0, -1.0])
        make = getattr(m.optim.swa_utils, fn)
        (make(0.5) if "ema" in fn else make())([p], [q], 2)  # leaf parameters, grad mode on
        return p.detach().numpy().copy(), p.requires_grad

    (got, g_rg), (want, w_rg) = run(ember), run(torch)
    assert g_rg is w_rg is True
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", ["get_ema_avg_fn", "get_swa_avg_fn"])
def test_avg_fns_record_no_graph(fn):
    def run(m):
        a = m.nn.Parameter(m.tensor([1.0, 2.0]))
        c = m.nn.Parameter(m.tensor([3.0, -2.0]))
        r = getattr(m.optim.swa_utils, fn)()(a, c, m.tensor(3))
        return r.detach().numpy().copy(), r.requires_grad, r.grad_fn is None

    (got, g_rg, g_leaf), (want, w_rg, w_leaf) = run(ember), run(torch)
    assert (g_rg, g_leaf) == (w_rg, w_leaf) == (False, True)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", ["tensor", "int"])
def test_swa_multi_avg_fn_refuses_integer_tensors_like_torch(n):
    def fn(m):
        a = m.tensor([1, 5, 9])
        c = m.tensor([4, 4, 4])
        m.optim.swa_utils.get_swa_multi_avg_fn()([a], [c], m.tensor(2) if n == "tensor" else 2)

    same_error(fn, RuntimeError)


def test_ema_multi_avg_fn_on_integer_tensors():
    def run(m):
        a = m.tensor([1, 5, 9])
        m.optim.swa_utils.get_ema_multi_avg_fn(0.5)([a], [m.tensor([4, 4, 4])], 2)
        return a.tolist()

    assert run(ember) == run(torch) == [2, 4, 6]


# ---------------------------------------------------------------- AveragedModel's default average
def _model(m):
    lin1 = m.nn.Linear(3, 4)
    lin2 = m.nn.Linear(4, 2)
    rng = np.random.default_rng(1)
    with m.no_grad():
        for p in (*lin1.parameters(), *lin2.parameters()):
            p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m.nn.Sequential(lin1, m.nn.BatchNorm1d(4), lin2)


@pytest.mark.parametrize("kw", ["default", "use_buffers", "swa_avg_fn"])
def test_averaged_model_default_swa_is_bit_exact_on_cpu(kw):
    def run(m):
        model = _model(m)
        W = m.optim.swa_utils
        extra = {
            "default": {},
            "use_buffers": {"use_buffers": True},
            "swa_avg_fn": {"avg_fn": W.get_swa_avg_fn()},
        }[kw]
        avg = W.AveragedModel(model, **extra)
        rng = np.random.default_rng(5)
        states = []
        for _ in range(7):
            with m.no_grad():
                for p in model.parameters():
                    p.add_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
                for b in model.buffers():
                    if b.is_floating_point():
                        b.add_(m.tensor(rng.random(tuple(b.shape)).astype(np.float32)))
                    else:
                        b.add_(1)
            avg.update_parameters(model)
            states.append([t.detach().numpy().copy() for t in avg.state_dict().values()])
        return states

    got, want = run(ember), run(torch)
    for g_state, w_state in zip(got, want):
        for g, w in zip(g_state, w_state):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_averaged_model_refuses_a_model_with_other_buffers():
    def fn(m):
        avg = m.optim.swa_utils.AveragedModel(
            m.nn.Sequential(m.nn.Linear(2, 2), m.nn.BatchNorm1d(2))
        )
        avg.update_parameters(m.nn.Sequential(m.nn.Linear(2, 2)))

    same_error(fn, ValueError)


# ------------------------------------------------------------------------ SWALR's anneal_func
@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_anneal_func_and_state_dict(strategy):
    def run(m):
        W = m.optim.swa_utils
        o = _opt(m)
        s = W.SWALR(o, [0.02, 0.01], anneal_epochs=4, anneal_strategy=strategy)
        probe = [s.anneal_func(t) for t in (0.0, 0.25, 0.5, 1.0)]
        for _ in range(2):
            o.step()
            s.step()
        sd = s.state_dict()
        o2 = _opt(m)
        other = "linear" if strategy == "cos" else "cos"
        s2 = W.SWALR(o2, 0.5, anneal_strategy=other)
        o2.load_state_dict(o.state_dict())
        s2.load_state_dict(sd)
        lrs = []
        for _ in range(4):
            o2.step()
            s2.step()
            lrs.append(s2.get_last_lr())
        return probe, sorted(sd), s2.anneal_func(0.25), lrs

    got, want = run(ember), run(torch)
    assert "anneal_func" not in got[1]
    assert got[1] == want[1]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-15)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-15)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-12)
