"""Parity regressions of the ninetieth wave, the loss functions fuzzed against torch (first
error: type and full text; warnings; results: dtype, shape and values; float64 gradients under
a non-uniform upstream). It found:

* l1/mse/huber/smooth_l1 reading the reduction before the broadcast (torch broadcasts first:
  a bad reduction with unbroadcastable shapes is the size error), and with a per-element
  weight reading it at all (torch's weighted path: the weight's size, then "Invalid reduction
  mode: ... Expected one of ...", 'elementwise_mean' refused);
* mse/smooth_l1 of a bool input and a floating target refused (torch's kernel runs in the
  promoted type); soft_margin_loss of a bool input with a cast error (torch: the negation's);
  of a complex input requiring grad accepted (torch refuses its derivative);
* multilabel_soft_margin_loss reading the reduction first and leaking "tuple index out of
  range" on a 0-d input; poisson_nll_loss(reduction=None) a ValueError (torch: TypeError);
* gaussian_nll_loss checking var's size before its sign and refusing a var broadcast along
  one size-1 dim of the input's rank ((1, 4) for (3, 4); torch accepts it);
* cross_entropy refusing a negative label_smoothing (torch: no smoothing); its weight error
  with probability targets without torch's "cross_entropy: " prefix; K-dim nll/cross_entropy
  with a Byte target refused before the weight's checks, and on an empty batch;
* multi_margin_loss of an empty batch with a float target and a weight leaking numpy's
  IndexError; hinge_embedding_loss of an integer input in float (torch: the input's dtype,
  so 'mean' refuses it) and of a bool input with the wrong subtraction text.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import upstream as _up

_R = np.random.default_rng(90)


def _a(*shape, lo=None):
    """A float64 array (in (0.05, 0.95) when ``lo``)."""
    if lo:
        return _R.uniform(0.05, 0.95, shape)
    return _R.standard_normal(shape)


_X34 = _a(3, 4)
_Y34 = _a(3, 4)
_P34 = _a(3, 4, lo=True)
_W4 = _a(4, lo=True)
_X345 = _a(3, 4, 5)
_V315 = _a(3, 1, 5, lo=True)
_W5 = _a(5, lo=True)
_B35 = _R.integers(0, 4, (3, 5))


def _t(T, arr, dtype="float64", rg=False):
    t = T.tensor(arr, dtype=getattr(T, dtype))
    return t.requires_grad_() if rg else t


def _outcome(call, T):
    """(error type, full text) or ("ok", dtype, shape, values) of ``call(T)``, with the
    warnings it gave (category, text)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = call(T)
        except Exception as e:  # noqa: BLE001 - the type is compared
            out = type(e).__name__, str(e)
        else:
            vals = r.detach().to(T.float64).numpy() if r.dtype != T.bool else r.numpy()
            vals = np.round(np.nan_to_num(vals, nan=-0.125), 10).tolist()  # (nan != nan)
            out = ("ok", str(r.dtype).split(".")[-1], tuple(r.shape), vals)
    return out, sorted({(x.category.__name__, str(x.message)) for x in w})


def _F(T):
    return T.nn.functional


CASES = {
    # ---- torch broadcasts before it reads the reduction
    **{
        f"{n}_bad_reduction_after_broadcast": (
            lambda T, n=n: getattr(_F(T), n)(_t(T, _X34), _t(T, _W5), reduction="bad")
        )
        for n in ("l1_loss", "mse_loss", "huber_loss", "smooth_l1_loss")
    },
    # ---- the weighted path reads the reduction itself, after the weight's size
    **{
        f"{n}_weighted_{r}": (
            lambda T, n=n, r=r: getattr(_F(T), n)(
                _t(T, _X34), _t(T, _Y34), reduction=r, weight=_t(T, _P34)
            )
        )
        for n in ("l1_loss", "mse_loss", "huber_loss")
        for r in ("bad", "elementwise_mean")
    },
    "mse_weighted_bad_weight_size_first": lambda T: _F(T).mse_loss(
        _t(T, _X34), _t(T, _Y34), reduction="bad", weight=_t(T, _W4)
    ),
    # ---- a bool input against a floating target
    "mse_bool_input": lambda T: _F(T).mse_loss(_t(T, _X34 > 0, "bool"), _t(T, _Y34)),
    "mse_bool_input_broadcast": lambda T: _F(T).mse_loss(
        _t(T, _X34[0] > 0, "bool"), _t(T, _Y34, "float32"), reduction="none"
    ),
    "smooth_l1_bool_input": lambda T: _F(T).smooth_l1_loss(
        _t(T, _X34 > 0, "bool"), _t(T, _Y34), reduction="sum"
    ),
    "soft_margin_bool_input": lambda T: _F(T).soft_margin_loss(
        _t(T, _X34 > 0, "bool"), _t(T, _Y34)
    ),
    "soft_margin_complex_grad": lambda T: _F(T).soft_margin_loss(
        _t(T, _X34, "complex128", rg=True), _t(T, _Y34)
    ),
    # ---- Python-reduced losses
    "multilabel_soft_margin_0d": lambda T: _F(T).multilabel_soft_margin_loss(
        _t(T, 0.5), _t(T, 1.0)
    ),
    "multilabel_soft_margin_0d_bad_reduction": lambda T: _F(T).multilabel_soft_margin_loss(
        _t(T, 0.5), _t(T, 1.0), reduction="bad"
    ),
    "poisson_nll_reduction_none_value": lambda T: _F(T).poisson_nll_loss(
        _t(T, _X34), _t(T, _P34), reduction=None
    ),
    # ---- gaussian_nll: the sign before the size; a var broadcast along one size-1 dim
    "gaussian_nll_negative_var_bad_size": lambda T: _F(T).gaussian_nll_loss(
        _t(T, _X34), _t(T, _Y34), _t(T, -_W4[:2])
    ),
    "gaussian_nll_var_row": lambda T: _F(T).gaussian_nll_loss(
        _t(T, _X34), _t(T, _Y34), _t(T, _W4[None]), reduction="none"
    ),
    "gaussian_nll_var_3d": lambda T: _F(T).gaussian_nll_loss(
        _t(T, _X345), _t(T, _X345[::-1].copy()), _t(T, _V315), full=True
    ),
    # ---- cross_entropy / nll_loss
    **{
        f"cross_entropy_negative_smoothing_{k}": (
            lambda T, k=k: _F(T).cross_entropy(
                _t(T, _X34),
                _t(T, [0, 3, 1], "int64") if k == "indices" else _t(T, _P34),
                weight=_t(T, _W4),
                label_smoothing=-0.25,
            )
        )
        for k in ("indices", "probs")
    },
    "cross_entropy_probs_weight_size": lambda T: _F(T).cross_entropy(
        _t(T, _X34), _t(T, _P34), weight=_t(T, _W5)
    ),
    "nll_kdim_byte_weight_size_first": lambda T: _F(T).nll_loss(
        _t(T, _X345), _t(T, _B35, "uint8"), weight=_t(T, _W5)
    ),
    "nll_kdim_byte_weight_dtype_first": lambda T: _F(T).nll_loss(
        _t(T, _X345), _t(T, _B35, "uint8"), weight=_t(T, _W4, "float32")
    ),
    "cross_entropy_kdim_byte_empty": lambda T: _F(T).cross_entropy(
        _t(T, _X345[:0]), _t(T, np.zeros((0, 5)), "uint8")
    ),
    # ---- multi_margin / hinge
    "multi_margin_empty_float_target_weight": lambda T: _F(T).multi_margin_loss(
        _t(T, _X34[:0]), _t(T, np.zeros(0)), weight=_t(T, _W4), reduction="sum"
    ),
    **{
        f"hinge_int_input_{r}": (
            lambda T, r=r: _F(T).hinge_embedding_loss(
                _t(T, np.round(_X34 * 3), "int64"),
                _t(T, np.sign(_Y34)),
                margin=2.5,
                reduction=r,
            )
        )
        for r in ("none", "sum", "mean")
    },
    "hinge_bool_input": lambda T: _F(T).hinge_embedding_loss(
        _t(T, _X34 > 0, "bool"), _t(T, _Y34 > 0, "bool")
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name):
    call = CASES[name]
    assert _outcome(call, ember) == _outcome(call, torch)


def _grads(T, fn, *arrs, reduction):
    ins = [_t(T, a, rg=True) for a in arrs]
    y = fn(T, *ins, reduction=reduction)
    return [g.numpy() for g in T.autograd.grad(y, ins, _up(T, y))]


GRAD_CASES = {
    "gaussian_nll_var_row": (
        lambda T, x, t, v, **k: _F(T).gaussian_nll_loss(x, t, v, **k),
        (_X34, _Y34, _W4[None]),
    ),
    "gaussian_nll_var_3d": (
        lambda T, x, t, v, **k: _F(T).gaussian_nll_loss(x, t, v, full=True, **k),
        (_X345, _X345[::-1].copy(), _V315),
    ),
    "mse_bool_input": (
        lambda T, t, **k: _F(T).mse_loss(_t(T, _X34 > 0, "bool"), t, **k),
        (_Y34,),
    ),
    "smooth_l1_bool_input": (
        lambda T, t, **k: _F(T).smooth_l1_loss(_t(T, _X34 > 0, "bool"), t, beta=0.7, **k),
        (_Y34 * 0.5,),
    ),
    "cross_entropy_negative_smoothing": (
        lambda T, x, **k: _F(T).cross_entropy(
            x, _t(T, [0, 3, 1], "int64"), weight=_t(T, _W4), label_smoothing=-0.25, **k
        ),
        (_X34,),
    ),
}


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grads_like_torch(name, reduction):
    fn, arrs = GRAD_CASES[name]
    got = _grads(ember, fn, *arrs, reduction=reduction)
    want = _grads(torch, fn, *arrs, reduction=reduction)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["gaussian_nll_var_row", "gaussian_nll_var_3d", "mse_bool_input"])
def test_gradcheck(name):
    fn, arrs = GRAD_CASES[name]
    ins = tuple(_t(ember, a, rg=True) for a in arrs)
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a, reduction="none"), ins)
