"""Parity regressions found by the eighty-second wave, a seeded random fuzz of torch.optim and its
lr schedulers against torch (every optimizer with random constructor flags, several param groups
with their own options, float16/bfloat16/float32/float64 parameters, 0-d, empty and
non-contiguous ones, parameters without gradients in some steps, zero_grad both ways,
add_param_group and state_dict round trips mid-run, also into a fresh optimizer, LBFGS with
closures and strong Wolfe, invalid options; every scheduler chained and sequential over epochs).
It found Adam's tensor betas used as Python floats (torch computes the bias corrections, 1 - beta2
and the step size as 0-d tensors of the betas' dtype), the foreach Adam's refusal of a group's own
tensor lr or betas missing, ASGD's next eta and mu stored without torch's rounding (a Python float
goes through a float32 tensor; a tensor lr computes in its dtype, also in the single-tensor path,
whose tensor lr was ignored), LBFGS over empty parameters failing in numpy instead of with torch's
max() error, SparseAdam taking lr=0, and Adafactor's default eps1 failing on a bfloat16 parameter
(numpy's finfo)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import same_error


def _run(m, name, steps, dtype="float64", n=3, seed=0, sd_at=None, **kw):
    """``steps`` steps of optimizer ``name`` (options ``kw``, each ``m``-made) on one parameter,
    the same gradients in both frameworks (a state_dict round trip after step ``sd_at``);
    returns (parameter, state) as numpy."""
    rs = np.random.default_rng(seed)
    dt = getattr(m, dtype)
    p = m.tensor(rs.standard_normal(n)).to(dt).requires_grad_()
    opt = getattr(m.optim, name)([p], **{k: v(m) if callable(v) else v for k, v in kw.items()})
    for i in range(steps):
        p.grad = m.tensor(rs.standard_normal(n) * 10).to(dt)
        opt.step()
        if i == sd_at:
            opt.load_state_dict(opt.state_dict())
    state = {k: (v.dtype, v.detach().numpy()) for k, v in opt.state[p].items()}
    return p.detach().numpy(), state


def _same_state(a, b):
    assert [str(v[0]).split(".")[1] for v in a.values()] == [
        str(v[0]).split(".")[1] for v in b.values()
    ]
    for k in a:  # the counters exactly (array state: torch's fused multiply-adds round once)
        if a[k][1].ndim:
            np.testing.assert_allclose(b[k][1], a[k][1], rtol=1e-14, err_msg=k)
        else:
            np.testing.assert_array_equal(b[k][1], a[k][1], err_msg=k)


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_tensor_betas_round_like_torch(name, amsgrad):
    # float32 betas: 1 - beta1 (the bias correction) and the step size are float32 in torch;
    # Python floats differed by ~1e-10 (beta2 = 15/16 keeps the bias correction's square root
    # exact: torch's float32 sqrt is off by an ulp on some builds)
    betas = lambda m: (m.tensor(0.1), m.tensor(0.9375))
    kw = {"lr": 0.01, "betas": betas, "amsgrad": amsgrad, "n": 50}
    want, _ = _run(torch, name, 1, **kw)
    got, _ = _run(ember, name, 1, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("what", ["lr", "betas"])
def test_adam_foreach_refuses_group_tensor_options_at_step(what):
    def f(m):
        p, q = m.zeros(2, requires_grad=True), m.zeros(2, requires_grad=True)
        own = {"lr": m.tensor(0.1)} if what == "lr" else {"betas": (m.tensor(0.9), m.tensor(0.9))}
        opt = m.optim.Adam([{"params": [p]}, {"params": [q], **own}], lr=0.1, foreach=True)
        p.grad, q.grad = m.ones(2), m.ones(2)
        opt.step()

    exc = RuntimeError if what == "lr" else ValueError
    assert "foreach=True" in same_error(f, exc)


def test_adam_foreach_group_tensor_lr_without_grads_steps():
    for m in (torch, ember):  # no gradient in the group: nothing refused
        p, q = m.zeros(2, requires_grad=True), m.zeros(2, requires_grad=True)
        opt = m.optim.Adam([{"params": [p]}, {"params": [q], "lr": m.tensor(0.1)}], foreach=True)
        p.grad = m.ones(2)
        opt.step()


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("lr_dtype", [None, "float32", "float64"])
def test_asgd_eta_mu_round_like_torch(foreach, lr_dtype):
    # after a state_dict round trip eta and mu are float64 (the parameter's dtype): a Python
    # float stored into them went through a float32 tensor in torch; a tensor lr computes in
    # its dtype (the single-tensor path ignored a tensor lr's dtype)
    lr = 0.5 if lr_dtype is None else (lambda m: m.tensor(0.5, dtype=getattr(m, lr_dtype)))
    kw = {"lr": lr, "lambd": 0.1, "alpha": 0.75, "t0": 0, "foreach": foreach, "sd_at": 0}
    pw, want = _run(torch, "ASGD", 4, **kw)
    pg, got = _run(ember, "ASGD", 4, **kw)
    _same_state(want, got)
    np.testing.assert_allclose(pg, pw, rtol=1e-14)


def test_lbfgs_empty_parameters_error():
    def f(m):
        p = m.zeros(0, requires_grad=True)
        opt = m.optim.LBFGS([p])

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        opt.step(closure)

    assert "Expected reduction dim" in same_error(f, RuntimeError)


@pytest.mark.parametrize("lr", [0, 0.0, "tensor"])
def test_sparse_adam_refuses_zero_lr(lr):
    def f(m):
        v = m.tensor(0.0) if lr == "tensor" else lr
        m.optim.SparseAdam([m.zeros(2, requires_grad=True)], lr=v)

    assert same_error(f, ValueError).startswith("Invalid learning rate: 0")


def test_adafactor_bfloat16_default_eps1():
    dtype = "bfloat16"
    # eps=(None, ...) takes the parameter dtype's machine epsilon (numpy's finfo has no bfloat16)
    out = []
    for m in (torch, ember):
        p = m.tensor([1.0, -2.0, 0.5]).to(getattr(m, dtype)).requires_grad_()
        opt = m.optim.Adafactor([p], lr=0.01, eps=(None, 1e-3))
        p.grad = m.tensor([0.25, 1.0, -0.5]).to(getattr(m, dtype))
        opt.step()
        out.append(p.detach().float().numpy())
    np.testing.assert_array_equal(out[1], out[0])
