"""torch's deprecated namespace functions (frobenius_norm, nuclear_norm: values, gradients,
warnings), the functions it removed (a call raises torch's error naming the replacement) and the
torch.GradScaler alias, against torch."""

import warnings

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")

# full rank: the nuclear norm's gradient at a singular matrix depends on its SVD routine
X = np.linspace(-1.0, 2.0, 12).reshape(3, 4) + np.eye(3, 4)
G = np.linspace(0.5, 1.5, 12).reshape(3, 4)


def _norms(m):
    out = []
    calls = [
        lambda x: m.frobenius_norm(x, (0, 1)),
        lambda x: m.frobenius_norm(x, 1, True),
        lambda x: m.nuclear_norm(x),
        lambda x: m.nuclear_norm(x, True),
        lambda x: m.nuclear_norm(x.reshape(1, 3, 4), (1, 2), True),
    ]
    for f in calls:
        x = m.tensor(X, requires_grad=True)
        y = f(x)
        (y * m.tensor(G).sum()).sum().backward()
        out.append((y.grad_fn.name(), tuple(y.shape), y.detach().numpy(), x.grad.numpy()))
    return out


def test_frobenius_and_nuclear_norms_match_torch():
    for (ne, se, ye, ge), (nt, st, yt, gt) in zip(_norms(ember), _norms(torch)):
        assert (ne, se) == (nt, st)
        np.testing.assert_allclose(ye, yt, rtol=1e-12)
        np.testing.assert_allclose(ge, gt, rtol=1e-10, atol=1e-12)


def test_deprecated_norms_warn_once_as_torch():
    ember.core.runtime._WARNED_ONCE.discard("frobenius_norm")
    ember.core.runtime._WARNED_ONCE.discard("nuclear_norm")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(2):
            ember.frobenius_norm(ember.ones(2, 2), (0, 1))
            ember.nuclear_norm(ember.ones(2, 2))
    msgs = [str(x.message) for x in w]
    assert len(msgs) == 2 and all(x.filename == __file__ for x in w)
    assert msgs[0].startswith("at::frobenius_norm is deprecated and it is just left for JIT")
    assert "`linalg.matrix_norm(A, 'nuc', dim, keepdim)`" in msgs[1]


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.frobenius_norm(m.ones(2, 2, 2), (0, 1, 2)),
        lambda m: m.nuclear_norm(m.ones(3)),
    ],
    ids=["three-dims", "vector"],
)
def test_deprecated_norm_errors(call):
    same_error(call, RuntimeError)


@pytest.mark.parametrize(
    "name, args",
    [("solve", 2), ("lstsq", 2), ("symeig", 1), ("eig", 1), ("matrix_rank", 1)],
)
def test_removed_functions_raise_torchs_migration_error(name, args):
    a = [np.eye(3)] * args
    msg = same_error(lambda m: getattr(m, name)(*map(m.tensor, a)), RuntimeError)
    assert "is now removed" in msg


@pytest.mark.parametrize("name, args", [("solve", 1), ("lstsq", 1), ("symeig", 0), ("eig", 0)])
def test_removed_tensor_methods_raise_torchs_migration_error(name, args):
    same_error(lambda m: getattr(m.eye(3), name)(*[m.eye(3)] * args), RuntimeError)


def test_grad_scaler_alias():
    assert ember.GradScaler is ember.amp.GradScaler
    assert torch.GradScaler is torch.amp.GradScaler
