"""torch.func transforms and tensors the function closes over: a captured parameter that requires
grad stays differentiable in the transform's results (MAML-style outer gradients), as in torch."""

from __future__ import annotations

import ember
import ember.func as EF
import numpy as np
import pytest

torch = pytest.importorskip("torch")
TF = pytest.importorskip("torch.func")


def _cases(m, F):
    w = m.tensor([1.0, -2.0, 0.5], dtype=m.float64, requires_grad=True)
    x = m.tensor([0.3, 0.7, -1.2], dtype=m.float64)
    out = {
        "jacrev": F.jacrev(lambda a: a.sin() * w)(x),
        "jacfwd": F.jacfwd(lambda a: a.sin() * w)(x),
        "hessian": F.hessian(lambda a: (a.sin() * w).sum() ** 2)(x),
        "grad": F.grad(lambda a: (a.exp() * w).sum())(x),
        "vjp": F.vjp(lambda a: a.cos() * w, x)[1](m.ones(3, dtype=m.float64))[0],
        "jvp": F.jvp(lambda a: a.tanh() * w, (x,), (m.ones(3, dtype=m.float64),))[1],
        "constant": F.grad(lambda a: (a.exp() * 2).sum())(x),
    }
    return w, out


def test_captured_parameters_stay_differentiable_like_torch():
    ew, eres = _cases(ember, EF)
    tw, tres = _cases(torch, TF)
    for k, t in tres.items():
        e = eres[k]
        assert e.requires_grad == t.requires_grad, k
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        if t.requires_grad:
            up = np.linspace(0.5, 2.0, t.numel()).reshape(tuple(t.shape))
            (gt,) = torch.autograd.grad(t, tw, torch.tensor(up), retain_graph=True)
            (ge,) = ember.autograd.grad(e, ew, ember.tensor(up), retain_graph=True)
            np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-10, err_msg=k)


def test_maml_outer_gradient_through_an_inner_step():
    def run(m, F):
        w = m.tensor([1.0, -2.0, 0.5], dtype=m.float64, requires_grad=True)
        x = m.tensor([0.3, 0.7, -1.2], dtype=m.float64)

        def inner(w_, x_):
            return ((w_ * x_).sum() - 1.0) ** 2

        w2 = w - 0.1 * F.grad(inner)(w, x)
        inner(w2, x * 2).backward()
        return w.grad.numpy()

    np.testing.assert_allclose(run(ember, EF), run(torch, TF), rtol=1e-12)
