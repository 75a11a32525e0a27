"""Parity regressions of the ninety-first wave: optimizers, lr schedulers and the data
utilities fuzzed against torch (constructor checks: first error's type and full text; steps'
values; samplers). It found:

* SGD refusing a NaN lr / momentum / weight_decay (torch's checks are ``x < 0.0``, NaN
  passes) and naming ``<=`` in the TypeError of a non-number lr; SparseAdam's lr TypeError
  naming ``<=`` too (torch: ``not 0.0 < lr``);
* a differentiable foreach step refused by the in-place-leaf error instead of torch's
  AssertionError "_foreach ops don't support autograd" (SGD's foreach path takes it), and a
  capturable cpu step checked after that leaf error (torch: the device first; Adam checks
  the device before the foreach refusal); Adam(fused=True, capturable=True) refused on the
  cpu (torch's fused step checks no device);
* a one-element tensor beta in Adamax / NAdam / RAdam, a tensor weight_decay in every
  optimizer and a tensor momentum in SGD / RMSprop silently leaving the parameters at zero
  or raising numpy's errors (torch steps with the tensor's value);
* Muon taking ns_coefficients of the wrong length / ns_steps >= 100 with numpy's texts;
* multinomial of an empty distribution leaking numpy's reshape error (torch: aminmax's text,
  or the sum's), and of a (0, 0) input with replacement an IndexError (torch: an empty
  result); WeightedRandomSampler([]) showed it.

Not copied: foreach float16 RAdam's NaN where exp_avg_sq underflows (torch divides by
-0.0), foreach tensor-beta crashes of torch's Adamax/NAdam/RAdam.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember


def _outcome(lib, fn):
    """('ok', value) or (exception type name, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn(lib))
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return (type(e).__name__, str(e))


def _same(fn):
    a, b = _outcome(torch, fn), _outcome(ember, fn)
    assert a == b


def _ctor(name, p_shape=(3,), **kw):
    def fn(lib):
        p = lib.zeros(*p_shape, requires_grad=True)
        getattr(lib.optim, name)([p], **kw)

    return fn


@pytest.mark.parametrize(
    "kw",
    [
        {"lr": float("nan")},
        {"momentum": float("nan")},
        {"weight_decay": float("nan")},
        {"lr": "0.1"},
        {"lr": None},
        {"lr": 0.1, "nesterov": True, "weight_decay": float("nan")},
    ],
)
def test_sgd_checks(kw):
    _same(_ctor("SGD", **kw))


@pytest.mark.parametrize("lr", ["0.1", None, [0.1]])
def test_sparse_adam_lr_type_error(lr):
    _same(_ctor("SparseAdam", lr=lr))


def _step_outcome(name, **kw):
    def fn(lib):
        p = lib.zeros(3, requires_grad=True)
        o = getattr(lib.optim, name)([p], **kw)
        p.grad = lib.ones(3)
        o.step()
        return np.round(p.detach().numpy(), 6).tolist()

    return fn


_CAPTURABLE = ["Adam", "AdamW", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop"]
_CAPTURABLE += ["Rprop"]
_FLAG_CASES = (
    [(n, {"foreach": True, "differentiable": True}) for n in [*_CAPTURABLE, "Adagrad"]]
    + [(n, {"foreach": True, "differentiable": True, "capturable": True}) for n in _CAPTURABLE]
    + [(n, {"foreach": False, "differentiable": True, "capturable": True}) for n in _CAPTURABLE]
    + [(n, {"fused": True, "capturable": True}) for n in ["Adam", "AdamW"]]
)


@pytest.mark.parametrize("name,flags", _FLAG_CASES)
def test_step_flag_errors(name, flags):
    _same(_step_outcome(name, **flags))


def _steps(name, kw_of, n=6, seed=0):
    """Parameter values after ``n`` steps with options ``kw_of(lib)``, ember and torch."""
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal((4, 3))
    gs = [rng.standard_normal((4, 3)) for _ in range(n)]
    out = []
    for lib in (torch, ember):
        p = lib.tensor(p0, dtype=lib.float32).requires_grad_()
        o = getattr(lib.optim, name)([p], **kw_of(lib))
        for g in gs:
            p.grad = lib.tensor(g, dtype=lib.float32)
            o.step()
        out.append(p.detach().numpy().astype(np.float64))
    return out


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam"])
def test_tensor_betas(name):
    t, e = _steps(name, lambda lib: {"betas": (lib.tensor(0.8), lib.tensor(0.95))})
    np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "name",
    ["SGD", "Adam", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop"],
)
def test_tensor_weight_decay(name):
    t, e = _steps(name, lambda lib: {"weight_decay": lib.tensor(0.1)})
    np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "RMSprop"])
def test_tensor_momentum(name):
    t, e = _steps(name, lambda lib: {"lr": 0.01, "momentum": lib.tensor(0.9)})
    np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


def test_muon_tensor_weight_decay():
    t, e = _steps("Muon", lambda lib: {"weight_decay": lib.tensor(0.1)})
    np.testing.assert_allclose(e, t, rtol=1e-2, atol=1e-3)  # bfloat16 Newton-Schulz


@pytest.mark.parametrize("kw", [{"ns_coefficients": (1.0, 2.0)}, {"ns_steps": 100}])
def test_muon_step_checks(kw):
    def fn(lib):
        p = lib.zeros(3, 2, requires_grad=True)
        o = lib.optim.Muon([p], **kw)
        p.grad = lib.ones(3, 2)
        o.step()

    _same(fn)


@pytest.mark.parametrize("shape", [(0,), (1, 0), (2, 0), (0, 0)])
@pytest.mark.parametrize("n", [1, 2])
def test_multinomial_empty_with_replacement(shape, n):
    def fn(lib):
        w = lib.ones(shape, dtype=lib.float64)
        return tuple(lib.multinomial(w, n, True).shape)

    _same(fn)


def test_weighted_random_sampler_empty():
    def fn(lib):
        mod = torch.utils.data if lib is torch else ember.data
        return list(mod.WeightedRandomSampler([], num_samples=1))

    _same(fn)
