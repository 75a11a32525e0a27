"""Parity regressions found by the sixty-second wave, a sweep of the optimizer and scheduler API
around the updates (state_dict/load_state_dict round trips, torch-saved state loaded into ember,
add_param_group, zero_grad, user-mutated param_groups, the step/state_dict/load_state_dict hooks
and their handles, __repr__, pickling and deepcopy, step(closure) return values, sparse gradients,
tensor learning rates, and the LR schedulers' state round trips; torch is the oracle):
load_state_dict did not run the optimizer's ``__setstate__``, so a group saved without an option
(an older checkpoint, or one edited by hand) was not given the option's default (Adam's
``amsgrad``, SGD's ``nesterov``, ...), an AdamW loading an Adam's groups kept
``decoupled_weight_decay=False``, and counters saved as Python numbers (``step``, ASGD's
``eta``/``mu``, NAdam's ``mu_product``) stayed numbers and broke the next step; the step hooks'
``args`` lacked the optimizer (torch passes the step's positional arguments with ``self`` first,
and a pre-hook's new args replace them all), and a bad pre-hook return was blamed on the hook
instead of the step function; ``state_dict()`` dropped state kept under keys that are not
parameters; load_state_dict dropped the current groups' ``param_names`` when the saved groups had
none; named and unnamed parameters mixed in one group were accepted (torch's ValueError); saved
integer state was not cast to a floating-point parameter's dtype; ``zero_grad(set_to_none=False)``
left a leaf gradient requiring grad and replaced a gradient with a graph by a detached copy
(torch detaches and zeroes the same tensor); the hooks' handles had no ``id``."""

from __future__ import annotations

import pickle
import re

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")


def _params(m):
    return [m.nn.Parameter(m.arange(1.0, 5.0)), m.nn.Parameter(m.arange(1.0, 9.0))]


def _grads(m, ps):
    for p in ps:
        p.grad = m.ones_like(p) * 0.5


def _np(t):
    return np.asarray(t.detach().numpy()) if hasattr(t, "detach") else t


def _state(sd):
    """A comparable form of an optimizer state_dict: keys in order, tensors as (dtype, values)."""

    def r(v):
        if hasattr(v, "dtype") and hasattr(v, "shape"):
            return (str(v.dtype).split(".")[-1], _np(v).tolist())
        if isinstance(v, dict):
            return [(k, r(x)) for k, x in v.items()]
        if isinstance(v, (list, tuple)):
            return [r(x) for x in v]
        return v

    return r(sd)


def _assert_close(got, want):
    """``_state`` forms equal up to float rounding (the update math is wave 15's)."""
    if isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-9)
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _assert_close(g, w)
    else:
        assert got == want


_OPTS = {
    "SGD": ({"lr": 0.1, "momentum": 0.9}, ["nesterov", "maximize", "foreach", "fused"]),
    "Adam": ({"lr": 0.01}, ["amsgrad", "maximize", "capturable", "decoupled_weight_decay"]),
    "AdamW": ({"lr": 0.01}, ["amsgrad", "foreach", "differentiable"]),
    "Adagrad": ({"lr": 0.01}, ["foreach", "maximize", "fused"]),
    "Adadelta": ({}, ["foreach", "maximize", "capturable"]),
    "Adamax": ({}, ["maximize", "differentiable", "capturable"]),
    "ASGD": ({}, ["foreach", "maximize", "capturable"]),
    "NAdam": ({}, ["maximize", "capturable", "decoupled_weight_decay"]),
    "RAdam": ({}, ["foreach", "decoupled_weight_decay", "capturable"]),
    "RMSprop": ({}, ["momentum", "centered", "maximize", "capturable"]),
    "Rprop": ({}, ["foreach", "maximize", "capturable"]),
    "Adafactor": ({}, ["foreach"]),
}


@pytest.mark.parametrize("name", list(_OPTS))
def test_load_state_dict_fills_options_saved_groups_lack(name):
    kw, dropped = _OPTS[name]

    def run(m):
        ps = _params(m)
        opt = getattr(m.optim, name)(ps, **kw)
        _grads(m, ps)
        opt.step()
        sd = opt.state_dict()
        for k in dropped:
            del sd["param_groups"][0][k]
        sd["param_groups"][0]["extra"] = 3
        ps2 = _params(m)
        opt2 = getattr(m.optim, name)(ps2, **kw)
        opt2.load_state_dict(sd)
        _grads(m, ps2)
        opt2.step()
        return list(opt2.param_groups[0].items()), _np(ps2[1])

    (tg, tp), (eg, ep) = run(torch), run(ember)
    assert [k for k, _ in eg] == [k for k, _ in tg]
    assert [v for k, v in eg if k != "params"] == [v for k, v in tg if k != "params"]
    np.testing.assert_allclose(ep, tp, rtol=1e-6)


@pytest.mark.parametrize("name", [n for n in _OPTS if n != "SGD"])
def test_load_state_dict_makes_number_counters_tensors(name):
    kw = _OPTS[name][0]

    def run(m):
        ps = _params(m)
        opt = getattr(m.optim, name)(ps, **kw)
        _grads(m, ps)
        opt.step()
        sd = opt.state_dict()
        for st in sd["state"].values():
            for k in ("step", "eta", "mu", "mu_product"):
                if k in st:
                    st[k] = float(st[k])  # as checkpoints of older versions hold them
        ps2 = _params(m)
        opt2 = getattr(m.optim, name)(ps2, **kw)
        opt2.load_state_dict(sd)
        loaded = _state(opt2.state_dict())
        _grads(m, ps2)
        opt2.step()
        return loaded, _state(opt2.state_dict()), _np(ps2[0])

    (tl, ts, tp), (el, es, ep) = run(torch), run(ember)
    assert el == tl
    _assert_close(es, ts)
    np.testing.assert_allclose(ep, tp, rtol=1e-6)


def test_setstate_fills_group_options():
    # unpickling a checkpoint of an older version: __setstate__ adds what the groups lack
    def run(m):
        opt = m.optim.SGD(_params(m), lr=0.1)
        state = opt.__getstate__()
        del state["param_groups"][0]["nesterov"], state["defaults"]["differentiable"]
        opt.__setstate__(state)
        return sorted(opt.param_groups[0]), opt.defaults["differentiable"]

    assert run(ember) == run(torch)


def test_adamw_load_state_dict_keeps_decoupled_weight_decay():
    def run(m):
        sd = m.optim.Adam(_params(m), lr=0.01).state_dict()
        opt = m.optim.AdamW(_params(m), lr=0.01)
        opt.load_state_dict(sd)
        return opt.param_groups[0]["decoupled_weight_decay"]

    assert run(ember) is run(torch) is True


def test_pickled_optimizer_round_trip():
    def run(m):
        ps = _params(m)
        opt = m.optim.Adam(ps, lr=0.01)
        _grads(m, ps)
        opt.step()
        return _state(pickle.loads(pickle.dumps(opt)).state_dict())

    assert run(ember) == run(torch)


# ------------------------------------------------------------------ step hooks
def test_step_hooks_get_the_optimizer_in_args():
    def run(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1)
        log = []
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), a[0] is o, k)))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), a[0] is o, k)))
        _grads(m, ps)
        opt.step()
        opt.step(None)
        opt.step(closure=None)
        return log

    assert run(ember) == run(torch)


def test_step_pre_hook_replaces_all_args():
    def run(m):
        ps = _params(m)
        opt = m.optim.Adam(ps, lr=0.1)
        # the new args carry the optimizer first, as the args the hook was given
        opt.register_step_pre_hook(lambda o, a, k: ((a[0], lambda: 2.5), {}))
        _grads(m, ps)
        return opt.step(), _np(ps[0]).tolist()

    assert run(ember) == run(torch)


def test_step_pre_hook_bad_return_names_the_step():
    def run(m):
        opt = m.optim.Adam(_params(m), lr=0.1)
        opt.register_step_pre_hook(lambda o, a, k: 5)
        opt.step()

    with pytest.raises(RuntimeError) as te:
        run(torch)
    with pytest.raises(RuntimeError) as ee:
        run(ember)

    def addr(e):
        return re.sub(r"0x[0-9a-f]+", "0x", str(e.value))

    assert addr(ee) == addr(te)


def test_hook_handles_have_ids():
    def run(m):
        opt = m.optim.SGD(_params(m), lr=0.1)
        hs = [
            opt.register_step_pre_hook(lambda *a: None),
            opt.register_step_post_hook(lambda *a: None),
            opt.register_state_dict_pre_hook(lambda *a: None),
            opt.register_load_state_dict_post_hook(lambda *a: None),
        ]
        ids = [h.id for h in hs]
        for h in hs:
            h.remove()
            h.remove()
        return len(set(ids)), len(opt._optimizer_step_pre_hooks)

    assert run(ember) == run(torch) == (4, 0)


# ------------------------------------------------------------------ state_dict contents
def test_state_dict_keeps_state_under_other_keys():
    def run(m):
        ps = _params(m)
        opt = m.optim.Adam(ps, lr=0.01)
        _grads(m, ps)
        opt.step()
        sd = opt.state_dict()
        sd["state"][7] = {"x": 1}
        sd["state"]["foo"] = 2
        opt2 = m.optim.Adam(_params(m), lr=0.01)
        opt2.load_state_dict(sd)
        return _state(opt2.state_dict())

    assert run(ember) == run(torch)


def test_load_state_dict_keeps_current_param_names():
    def run(m):
        ps = _params(m)
        sd = m.optim.Adam(ps, lr=0.01).state_dict()
        opt = m.optim.Adam([("a", ps[0]), ("b", ps[1])], lr=0.01)
        opt.load_state_dict(sd)
        return _state(opt.state_dict())

    assert run(ember) == run(torch)


def test_named_and_unnamed_params_mixed():
    same_error(lambda m: m.optim.Adam([("a", _params(m)[0]), _params(m)[1]], lr=0.1), ValueError)


def test_load_state_dict_casts_integer_state_to_param_dtype():
    def run(m):
        ps = _params(m)
        opt = m.optim.Adam(ps, lr=0.01)
        _grads(m, ps)
        opt.step()
        sd = opt.state_dict()
        sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].mul(100).long()
        opt2 = m.optim.Adam([m.nn.Parameter(p.detach().double()) for p in _params(m)], lr=0.01)
        opt2.load_state_dict(sd)
        return _state(opt2.state_dict())

    assert run(ember) == run(torch)


# ------------------------------------------------------------------ zero_grad
def test_zero_grad_in_place_leaf_grad_requiring_grad():
    def run(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1)
        g = m.ones(4, requires_grad=True)
        ps[0].grad = g
        opt.zero_grad(set_to_none=False)
        return ps[0].grad is g, g.requires_grad, _np(g).tolist()

    assert run(ember) == run(torch)


def test_zero_grad_in_place_grad_with_graph():
    def run(m):
        ps = _params(m)
        opt = m.optim.SGD(ps, lr=0.1)
        (g,) = m.autograd.grad((ps[0] ** 2).sum(), ps[0], create_graph=True)
        ps[0].grad = g
        opt.zero_grad(set_to_none=False)
        return ps[0].grad is g, g.grad_fn is None, g.requires_grad, _np(g).tolist()

    assert run(ember) == run(torch)


@pytest.mark.parametrize("flag", ["fused", "capturable", None])
def test_load_state_dict_step_dtype_of_fused_and_capturable_groups(flag):
    # a fused or capturable group's float64 step counter loads as float32, others as saved
    def run(m):
        ps = _params(m)
        opt = m.optim.Adam(ps)
        _grads(m, ps)
        opt.step()
        sd = opt.state_dict()
        for st in sd["state"].values():
            st["step"] = st["step"].double()
        if flag:
            sd["param_groups"][0][flag] = True
        opt2 = m.optim.Adam(_params(m))
        opt2.load_state_dict(sd)
        return [str(st["step"].dtype).split(".")[-1] for st in opt2.state.values()]

    assert run(ember) == run(torch)
