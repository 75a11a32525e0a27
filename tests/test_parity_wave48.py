"""Parity regressions found by the forty-eighth wave, Adam and AdamW on float16 and bfloat16
parameters (torch is the oracle, compared bit for bit over eight steps; single-tensor, foreach
and fused): their 16-bit path, older than the other optimizers' (wave 36), rounded ``lerp_`` and
``addcmul_`` after a separate float32 multiply where torch fuses the multiply-add, kept eps in
float32 where ``add_(eps)`` rounds it to the parameter's dtype (a visible eps such as 0.3 put
parameters one unit off), and used the single-tensor rounding in the foreach path, whose
``_foreach_mul_`` rounds its multiplier (beta2, AdamW's decay factor) to the dtype (about 7% of
float16 second moments were one unit off). torch's fused cpu kernel rounds each tensor once when
it stores it but fuses its lerp and its second-moment multiply-add too, and scales AdamW's
parameter by (1 - lr * weight_decay) rather than subtracting lr * weight_decay times it. Sizes are
multiples of 64: torch's vectorized loop covers every element."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import optimizer_steps

RNG = np.random.default_rng(48)

_FLAGS = {
    "single": {"foreach": False},
    "foreach": {"foreach": True},
    "fused": {"fused": True},
}

_KW = [
    {},
    {"amsgrad": True},
    {"weight_decay": 0.1},
    {"maximize": True},
    {"eps": 0.3},
    {"amsgrad": True, "weight_decay": 0.1, "maximize": True},
]


def _np(t) -> np.ndarray:
    return t.detach().float().numpy()


def _run(name, dtype, flags, kw, n=512, steps=8):
    return optimizer_steps(name, dtype, RNG, n, steps, lr=0.01, **flags, **kw)


def _check(name, dtype, flags, kw, n=512, steps=8):
    (tp, ts), (ep, es) = _run(name, dtype, flags, kw, n, steps)
    assert str(ep.dtype).split(".")[-1] == dtype
    # NaN where a float16 second moment underflowed with eps rounded to 0 (torch's too):
    # assert_array_equal counts NaN at the same place as equal
    np.testing.assert_array_equal(_np(ep), _np(tp))
    assert set(es) == set(ts)
    for k, tv in ts.items():
        if k != "step":
            assert es[k].dtype == getattr(ember, dtype), k
            np.testing.assert_array_equal(_np(es[k]), _np(tv), err_msg=k)


@pytest.mark.parametrize("kw", _KW)
@pytest.mark.parametrize("flags", list(_FLAGS))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_on_16_bit_parameters_is_torch_exact(name, dtype, flags, kw):
    _check(name, dtype, _FLAGS[flags], kw)


@pytest.mark.parametrize("n", [64, 192])
@pytest.mark.parametrize("flags", list(_FLAGS))
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_16_bit_updates_at_other_sizes(name, flags, n):
    _check(name, "bfloat16", _FLAGS[flags], {"weight_decay": 0.1}, n)
    _check(name, "float16", _FLAGS[flags], {"amsgrad": True, "eps": 1e-3}, n)


@pytest.mark.parametrize("flags", list(_FLAGS))
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_float32_updates_unchanged(name, flags):
    # the float32 path keeps its own arithmetic: torch's values to float32 rounding
    (tp, _), (ep, _) = _run(name, "float32", _FLAGS[flags], {"weight_decay": 0.01})
    np.testing.assert_allclose(_np(ep), _np(tp), rtol=1e-6, atol=1e-7)
