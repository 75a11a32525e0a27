"""torch names ember lacked until now, against torch: F.conv_tbc / torch.conv_tbc (time-batch-
channel 1-D convolution) and the deprecated nn.NLLLoss2d alias."""

from __future__ import annotations

import re

import ember
import ember.nn.functional as F
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_values_and_grads(pad):
    rng = np.random.default_rng(pad + 5)
    arrs = [rng.standard_normal(s) for s in ((6, 2, 3), (3, 3, 4), (4,))]
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]
    es = [ember.tensor(a, requires_grad=True) for a in arrs]
    want = torch.conv_tbc(*ts, pad)
    got = ember.conv_tbc(*es, pad)
    assert F.conv_tbc is ember.conv_tbc
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    go = rng.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(go))
    got.backward(ember.tensor(go))
    for e, t in zip(es, ts):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert ember.autograd.gradcheck(lambda *a: F.conv_tbc(*a, pad), es)


@pytest.mark.parametrize(
    "shapes",
    [
        ((6, 2, 3), (3, 3, 4), (3,)),
        ((2, 3), (3, 3, 4), (4,)),
        ((6, 2, 3), (3, 4), (4,)),
        ((6, 2, 3), (3, 2, 4), (4,)),
        ((6, 2, 3), (3, 3, 4), (1, 4)),
    ],
)
def test_conv_tbc_errors_match_torch(shapes):
    with pytest.raises(RuntimeError) as want:
        torch.conv_tbc(*[torch.zeros(s) for s in shapes], 0)
    with pytest.raises(RuntimeError, match=re.escape(str(want.value))):
        ember.conv_tbc(*[ember.zeros(s) for s in shapes], 0)


def test_nllloss2d_is_a_deprecated_nllloss():
    msg = "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead"
    with pytest.warns(FutureWarning, match=re.escape(msg)):
        t = torch.nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning, match=re.escape(msg)):
        e = ember.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(e, ember.nn.NLLLoss) and repr(e) == repr(t)
    logp = np.log(np.random.default_rng(0).dirichlet(np.ones(3), (2, 4, 4)).transpose(0, 3, 1, 2))
    tgt = np.random.default_rng(1).integers(0, 3, (2, 4, 4))
    want = t(torch.tensor(logp), torch.tensor(tgt))
    got = e(ember.tensor(logp), ember.tensor(tgt))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("kind", ["mps", "xla", "xpu"])
def test_torch_only_device_types_are_refused_clearly(kind):
    with pytest.raises(RuntimeError, match=f"ember has no '{kind}' device: it computes on cpu"):
        ember.device(kind)
    with pytest.raises(RuntimeError, match=f"ember has no '{kind}' device"):
        ember.zeros(2, device=f"{kind}:0")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, ipu, "):
        ember.device("nonsense")
