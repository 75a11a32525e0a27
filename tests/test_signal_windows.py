"""torch.signal.windows against torch: every window, symmetric and periodic, float32/float64,
lengths 0..16, the parameters (std, tau, center, beta, alpha, a) and every argument error."""

from __future__ import annotations

import ember
import ember.signal.windows as ew
import numpy as np
import pytest

torch = pytest.importorskip("torch")
tw = pytest.importorskip("torch.signal.windows")

WINDOWS = [
    ("bartlett", {}),
    ("blackman", {}),
    ("cosine", {}),
    ("exponential", {"tau": 2.5}),
    ("gaussian", {"std": 1.7}),
    ("general_cosine", {"a": [0.46, 0.33, 0.21]}),
    ("general_hamming", {"alpha": 0.6}),
    ("hamming", {}),
    ("hann", {}),
    ("kaiser", {"beta": 5.0}),
    ("nuttall", {}),
]


@pytest.mark.parametrize("name, kw", WINDOWS)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_match_torch(name, kw, sym, dtype):
    for M in (0, 1, 2, 3, 8, 16):
        want = getattr(tw, name)(M, sym=sym, dtype=getattr(torch, dtype), **kw)
        got = getattr(ew, name)(M, sym=sym, dtype=getattr(ember, dtype), **kw)
        assert got.dtype == getattr(ember, dtype) and tuple(got.shape) == tuple(want.shape)
        tol = 1e-6 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)


def test_defaults_namespace_and_requires_grad():
    assert ember.signal.windows is ew
    assert ew.hann(4).dtype == ember.float32
    np.testing.assert_allclose(
        ew.exponential(6, center=1.0, sym=False).numpy(),
        tw.exponential(6, center=1.0, sym=False).numpy(),
        rtol=1e-6,
    )
    w = ew.hamming(5, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    prev = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert ew.blackman(3).dtype == ember.float64
    finally:
        ember.set_default_dtype(prev)


@pytest.mark.parametrize("name, kw", WINDOWS)
@pytest.mark.parametrize("bad", ["length", "dtype", "layout"])
def test_argument_errors_match_torch(name, kw, bad):
    def call(m, w):
        args = {
            "length": {"M": -1},
            "dtype": {"M": 5, "dtype": m.int32},
            "layout": {"M": 5, "layout": m.sparse_coo},
        }[bad]
        with pytest.raises(ValueError) as e:
            getattr(w, name)(**args, **kw)
        return str(e.value).replace("torch.", "ember.")

    assert call(ember, ew) == call(torch, tw)


@pytest.mark.parametrize(
    "name, kw",
    [
        ("gaussian", {"std": 0.0}),
        ("exponential", {"tau": 0.0}),
        ("exponential", {"center": 1.0}),
        ("kaiser", {"beta": -1.0}),
        ("general_cosine", {"a": []}),
    ],
)
def test_parameter_errors_match_torch(name, kw):
    with pytest.raises(ValueError) as want:
        getattr(tw, name)(5, **kw)
    with pytest.raises(ValueError) as got:
        getattr(ew, name)(5, **kw)
    assert str(got.value) == str(want.value)
