"""ember.autograd.forward_ad against torch.autograd.forward_ad: tangents of dual tensors."""

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = np.linspace(-1.5, 2.0, 6).reshape(2, 3)
T = np.linspace(0.5, -0.5, 6).reshape(2, 3)
W = np.linspace(-1, 1, 12).reshape(3, 4)


def _fns(m):
    F = m.nn.functional
    return {
        "sin_sq": lambda d, w: (d * d).sin(),
        "mlp": lambda d, w: F.gelu(d @ w).softmax(-1),
        "reduce": lambda d, w: (d.exp() * 2).sum(dim=1),
        "norm": lambda d, w: F.layer_norm(d, (3,)),
        "index": lambda d, w: d[:, 1:].cumsum(1) / d.abs().max(),
    }


@pytest.mark.parametrize("name", sorted(_fns(ember)))
def test_tangents_match_torch(name):
    out = []
    for m in (ember, torch):
        fwad = m.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(m.tensor(X), m.tensor(T))
            y = _fns(m)[name](d, m.tensor(W))
            primal, tangent = fwad.unpack_dual(y)
        out.append((primal.detach().numpy(), tangent.detach().numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-8, atol=1e-12)


def test_two_duals_and_a_tangent_that_reverse_mode_differentiates():
    res = []
    for m in (ember, torch):
        fwad = m.autograd.forward_ad
        x = m.tensor(X, requires_grad=True)
        with fwad.dual_level():
            a = fwad.make_dual(x, m.tensor(T))
            b = fwad.make_dual(m.tensor(W), m.ones(3, 4, dtype=m.float64))
            p, tan = fwad.unpack_dual((a @ b).tanh())
            assert fwad.unpack_dual(a).tangent is not None
            assert fwad.unpack_dual(m.tensor(X)).tangent is None  # no dual in it
            (tan * p).sum().backward()
        res.append((tan.detach().numpy(), x.grad.numpy()))
    for e, t in zip(*res):
        np.testing.assert_allclose(e, t, rtol=1e-8)


def test_errors_match_torch():
    for m in (ember, torch):
        fwad = m.autograd.forward_ad
        with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
            fwad.make_dual(m.ones(3), m.ones(3))
        with fwad.dual_level():
            with pytest.raises(RuntimeError, match="Tensor is of size \\[3\\] while the given"):
                fwad.make_dual(m.ones(3), m.ones(2))
            with pytest.raises(ValueError, match="Expected primal to be floating point"):
                fwad.make_dual(m.tensor([1, 2]), m.tensor([1, 2]))
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
                fwad.enter_dual_level()
