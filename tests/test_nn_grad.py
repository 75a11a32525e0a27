"""torch.nn.grad (also reachable as nn.functional.grad): a convolution's gradients with respect
to its input and its weight, against torch, against ember's own conv backward, and gradchecked."""

from __future__ import annotations

import re

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember.autograd import gradcheck
from ember.nn import grad as G

torch = pytest.importorskip("torch")

# (stride, padding, dilation, groups): the transposed conv needs output padding in some of them
CASES = [(1, 0, 1, 1), (2, 1, 1, 2), (3, 2, 2, 1), (2, 0, 1, 2)]


def _data(nd, s, p, d, g, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 4) + (9,) * nd)
    w = rng.standard_normal((6, 4 // g) + (3,) * nd)
    y = F.conv1d if nd == 1 else F.conv2d if nd == 2 else F.conv3d
    out = y(ember.tensor(x), ember.tensor(w), None, s, p, d, g)
    go = rng.standard_normal(tuple(out.shape))
    return x, w, go


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("s, p, d, g", CASES)
def test_matches_torch(nd, s, p, d, g):
    x, w, go = _data(nd, s, p, d, g)
    tg = torch.nn.grad
    f32 = [torch.tensor(a, dtype=torch.float32) for a in (x, w, go)]
    e32 = [ember.tensor(a, dtype=ember.float32) for a in (x, w, go)]
    want_i = getattr(tg, f"conv{nd}d_input")(x.shape, f32[1], f32[2], s, p, d, g)
    want_w = getattr(tg, f"conv{nd}d_weight")(f32[0], w.shape, f32[2], s, p, d, g)
    got_i = getattr(G, f"conv{nd}d_input")(x.shape, e32[1], e32[2], s, p, d, g)
    got_w = getattr(G, f"conv{nd}d_weight")(e32[0], w.shape, e32[2], s, p, d, g)
    assert got_i.dtype == ember.float32 and got_w.dtype == ember.float32
    np.testing.assert_allclose(got_i.numpy(), want_i.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_w.numpy(), want_w.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("s, p, d, g", CASES)
def test_equals_the_conv_backward_in_float64(s, p, d, g):
    x, w, go = _data(2, s, p, d, g, seed=1)
    xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    F.conv2d(xt, wt, None, s, p, d, g).backward(ember.tensor(go))
    gi = G.conv2d_input(x.shape, ember.tensor(w), ember.tensor(go), s, p, d, g)
    gw = G.conv2d_weight(ember.tensor(x), w.shape, ember.tensor(go), s, p, d, g)
    np.testing.assert_allclose(gi.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), wt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_functional_grad_is_the_same_module():
    assert F.grad is G
    assert ember.nn.grad is G


def test_differentiable_gradcheck():
    s, p, d, g = 2, 1, 1, 2
    x, w, go = _data(2, s, p, d, g, seed=2)
    w_t = ember.tensor(w, requires_grad=True)
    go_t = ember.tensor(go, requires_grad=True)
    x_t = ember.tensor(x, requires_grad=True)
    assert gradcheck(lambda a, b: G.conv2d_input(x.shape, a, b, s, p, d, g), (w_t, go_t))
    assert gradcheck(lambda a, b: G.conv2d_weight(a, w.shape, b, s, p, d, g), (x_t, go_t))


def test_bad_sizes_raise_clear_errors():
    x, w, go = _data(2, 2, 1, 1, 2)
    msg = "conv2d_input: a convolution of an input of size [2, 4, 12, 12] gives outputs of spatial"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        G.conv2d_input((2, 4, 12, 12), ember.tensor(w), ember.tensor(go), 2, 1, 1, 2)
    with pytest.raises(RuntimeError, match=re.escape("conv2d_input: expected a 4-d input_size")):
        G.conv2d_input((4, 9, 9), ember.tensor(w), ember.tensor(go), 2, 1, 1, 2)
    with pytest.raises(RuntimeError, match=re.escape("conv2d_weight: a convolution of input")):
        G.conv2d_weight(ember.tensor(x), w.shape, ember.tensor(go), 1, 1, 1, 2)
    with pytest.raises(ValueError, match="stride must be an int or a sequence of 2 ints"):
        G.conv2d_input(x.shape, ember.tensor(w), ember.tensor(go), (2, 2, 2), 1, 1, 2)
