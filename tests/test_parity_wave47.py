"""Parity regressions found by the forty-seventh wave, the optimizers other than Adam/AdamW and
SGD on float16 and bfloat16 parameters (torch is the oracle, compared bit for bit over five
steps, eight for RAdam): RMSprop, Adagrad, NAdam, Adamax, RAdam, Adadelta and ASGD updated in
16-bit numpy arithmetic, which rounds every temporary, so many elements ended one unit off
torch's. torch computes each op of its update in float32 and rounds its result once to the
parameter's dtype, with an add's alpha (and scalar operand: eps) rounded to that dtype first;
``addcmul_`` and ``lerp_`` fuse their multiply-add (one float32 rounding), a number over a tensor
is the tensor's reciprocal times the number, and the foreach path rounds ``_foreach_mul_``
multipliers too and orders a few ops differently (Adagrad scales the gradient before dividing,
NAdam divides the rounded square root by sqrt(bias_correction2), RAdam folds its step into one
factor, which makes float16 parameters whose second moment underflowed NaN before the
rectification starts). Sizes are multiples of 64: torch's vectorized loop covers every element
(its scalar tail rounds an alpha-scaled add differently)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import optimizer_steps

RNG = np.random.default_rng(47)


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


def _np(t):
    return t.detach().float().numpy()


def _run(name, dtype, foreach, kw, n=512, steps=5):
    return optimizer_steps(name, dtype, RNG, n, steps, foreach=foreach, **kw)


def _check(name, dtype, foreach, kw, n=512, steps=5):
    (tp, ts), (ep, es) = _run(name, dtype, foreach, kw, n, steps)
    assert _name(ep.dtype) == dtype
    want, got = _np(tp), _np(ep)
    keep = np.ones(want.shape, bool)
    if name == "RAdam" and foreach:
        # torch's foreach RAdam makes NaN where a float16 second moment underflowed before the
        # rectification starts (a torch bug, not copied): no NaN in ember, and equal wherever
        # torch's parameter stayed a number (its state follows the NaN there)
        assert not np.isnan(got).any()
        keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep], want[keep])
    for k, tv in ts.items():
        if k == "step":
            continue
        # moments keep the parameter's dtype (NAdam's mu_product, ASGD's eta and mu: float32)
        assert _name(es[k].dtype) == _name(tv.dtype), k
        e_k, t_k = _np(es[k]), _np(tv)
        if e_k.shape == keep.shape:
            e_k, t_k = e_k[keep], t_k[keep]
        np.testing.assert_array_equal(e_k, t_k, err_msg=k)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"maximize": True},
        {"weight_decay": 0.01},
        {"momentum": 0.9},
        {"centered": True},
        {"centered": True, "momentum": 0.9, "weight_decay": 0.1},
    ],
)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_rmsprop_on_16_bit_parameters_is_torch_exact(dtype, kw, foreach):
    _check("RMSprop", dtype, foreach, kw)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"maximize": True},
        {"weight_decay": 0.01},
        {"lr_decay": 0.01},
        {"initial_accumulator_value": 0.1},
    ],
)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_adagrad_on_16_bit_parameters_is_torch_exact(dtype, kw, foreach):
    _check("Adagrad", dtype, foreach, kw)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"maximize": True},
        {"weight_decay": 0.01},
        {"weight_decay": 0.01, "decoupled_weight_decay": True},
    ],
)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_nadam_on_16_bit_parameters_is_torch_exact(dtype, kw, foreach):
    _check("NAdam", dtype, foreach, kw)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("kw", [{}, {"maximize": True}, {"weight_decay": 0.01}])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_adamax_on_16_bit_parameters_is_torch_exact(dtype, kw, foreach):
    _check("Adamax", dtype, foreach, kw)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"maximize": True},
        {"weight_decay": 0.01},
        {"weight_decay": 0.01, "decoupled_weight_decay": True},
    ],
)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_radam_on_16_bit_parameters_is_torch_exact(dtype, kw, foreach):
    # eight steps: the rectified update starts at the sixth (rho_t > 5)
    _check("RAdam", dtype, foreach, kw, steps=8)


def test_radam_foreach_float16_no_nan_where_the_second_moment_underflows():
    # torch's foreach path divides sqrt(v) + eps by -0.0 before the rectification starts: where
    # a small gradient's square underflowed (and eps rounds to 0 in float16) that is 0 / -0.0,
    # a NaN parameter (a torch bug, not copied: the adaptive term is 0 before rectification, so
    # ember takes the plain step there and matches torch everywhere else)
    p0, g = np.array([1.0, 2.0] * 32, np.float32), np.array([1e-3, 1.0] * 32, np.float32)
    out = []
    for m in (torch, ember):
        p = m.tensor(p0).to(m.float16).requires_grad_()
        opt = m.optim.RAdam([p], foreach=True)
        p.grad = m.tensor(g).to(m.float16)
        opt.step()
        out.append(_np(p))
    assert np.isnan(out[0][0]) and not np.isnan(out[0][1])
    assert not np.isnan(out[1]).any()
    np.testing.assert_array_equal(out[1][1::2], out[0][1::2])
    # the underflowed elements take the unrectified step, as the single-tensor path does
    single = ember.tensor(p0).to(ember.float16).requires_grad_()
    opt = ember.optim.RAdam([single], foreach=False)
    single.grad = ember.tensor(g).to(ember.float16)
    opt.step()
    np.testing.assert_array_equal(out[1][0::2], _np(single)[0::2])


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(
    "kw", [{}, {"maximize": True}, {"weight_decay": 0.01}, {"lr": 0.5, "rho": 0.5, "eps": 1e-3}]
)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_adadelta_on_16_bit_parameters_is_torch_exact(dtype, kw, foreach):
    _check("Adadelta", dtype, foreach, kw)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(
    "kw",
    [{}, {"maximize": True}, {"weight_decay": 0.01}, {"t0": 2, "lr": 0.1, "lambd": 0.01}],
)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_asgd_on_16_bit_parameters_is_torch_exact(dtype, kw, foreach):
    # t0=2: the average moves with mu < 1 from the third step
    _check("ASGD", dtype, foreach, kw)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("eps", [1e-3, 0.3])
@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "NAdam", "Adamax", "RAdam"])
def test_eps_is_rounded_to_the_parameter_dtype(name, eps, foreach):
    # ``tensor.add_(eps)`` rounds its scalar to bfloat16 first (a visible eps shows it)
    _check(name, "bfloat16", foreach, {"eps": eps}, steps=8 if name == "RAdam" else 5)


@pytest.mark.parametrize("n", [64, 192])
@pytest.mark.parametrize(
    "name", ["RMSprop", "Adagrad", "NAdam", "Adamax", "RAdam", "Adadelta", "ASGD"]
)
def test_16_bit_updates_at_other_sizes(name, n):
    _check(name, "bfloat16", False, {"weight_decay": 0.1}, n)
    _check(name, "float16", True, {"weight_decay": 0.1}, n)


@pytest.mark.parametrize(
    "name", ["RMSprop", "Adagrad", "NAdam", "Adamax", "RAdam", "Adadelta", "ASGD"]
)
def test_float32_updates_unchanged(name):
    # the float32 path keeps its own arithmetic: torch's values to float32 rounding
    (tp, _), (ep, _) = _run(name, "float32", False, {"weight_decay": 0.01})
    np.testing.assert_allclose(_np(ep), _np(tp), rtol=1e-6, atol=1e-7)
