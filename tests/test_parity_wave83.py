"""Parity regressions of the eighty-third wave, the real differences left over by waves 76-79,
each checked against torch in the same process. It found layer_norm, rms_norm, group_norm and
instance_norm over an empty normalized shape dividing by zero (torch: an empty result, and for
instance norm zero parameter gradients with the running statistics untouched), std / var /
std_mean / var_mean of constant rows giving a tiny nonzero variance from a rounded mean (and std
a huge gradient where torch's is 0, as its std is exactly 0), GRUCell with an unbatched input and
an (H, H) hidden state failing deep inside ("not enough values to unpack", torch: its gate sum's
broadcast error), global adaptive average pooling keeping its input for backward (torch takes a
mean, which keeps the shape only: changing the input in place afterwards is fine), and batch norm
differentiating running_mean / running_var, which torch refuses in training and eval mode alike.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import assert_same, same_error
from harness import upstream as _up


def _t(T, shape, seed, rg=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    t = T.tensor(a)
    return t.requires_grad_() if rg else t


def _norm_run(T, f, shape, wshape):
    x = _t(T, shape, 0)
    w = _t(T, wshape, 1)
    b = _t(T, wshape, 2)
    y = f(T.nn.functional, x, w, b)
    y.backward(_up(T, y))
    return y, x.grad, w.grad, b.grad


NORMS = [
    ("layer_norm", lambda F, x, w, b: F.layer_norm(x, (0,), w, b), (3, 0), (0,)),
    ("layer_norm_2d", lambda F, x, w, b: F.layer_norm(x, (0, 3), w, b), (2, 0, 3), (0, 3)),
    ("layer_norm_plain", lambda F, x, w, b: F.layer_norm(x * w.sum(), (3, 0)), (2, 3, 0), (1,)),
    ("rms_norm", lambda F, x, w, b: F.rms_norm(x, (0,), w) + b.sum(), (3, 0), (0,)),
    ("group_norm_empty_group", lambda F, x, w, b: F.group_norm(x, 1, w, b), (2, 0, 3), (0,)),
    ("group_norm_empty_plane", lambda F, x, w, b: F.group_norm(x, 2, w, b), (2, 4, 0), (4,)),
    ("instance_norm", lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b), (2, 3, 0), (3,)),
]


@pytest.mark.parametrize("name,f,shape,wshape", NORMS, ids=[c[0] for c in NORMS])
def test_norms_of_empty_normalized_shape(name, f, shape, wshape):
    # the group norm weight's gradient is NaN in torch (0 times its NaN 1/std), and here too
    for e, t in zip(_norm_run(ember, f, shape, wshape), _norm_run(torch, f, shape, wshape)):
        if t is None:  # an unused parameter
            assert e is None
        else:
            assert_same(e, t, what=name)


def test_empty_instance_norm_leaves_running_stats():
    for T in (torch, ember):
        rm, rv = T.zeros(3), T.ones(3)
        T.nn.functional.instance_norm(T.zeros(2, 3, 0), rm, rv, use_input_stats=True)
        assert rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3, T.__name__


def test_native_layer_norm_stats_of_empty_rows():
    got = ember.native_layer_norm(ember.zeros(3, 0), (0,), None, None, 1e-5)
    want = torch.native_layer_norm(torch.zeros(3, 0), (0,), None, None, 1e-5)
    for e, t in zip(got, want):
        assert_same(e, t)


# ---------------------------------------------------------------------- std / var
_ROWS = [[0.1], [1e5 + 0.3], [-7.7], [3.3e-3]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["std", "var", "std_mean", "var_mean"])
def test_constant_rows_have_exactly_zero_variance(fn, dtype):
    out = {}
    for T in (torch, ember):
        base = T.tensor(np.array(_ROWS)).to(getattr(T, dtype))
        x = base.expand(4, 7).clone().requires_grad_()
        r = getattr(T, fn)(x, 1)
        v = r[0] if isinstance(r, tuple) else r
        v.backward(_up(T, v).to(v.dtype))
        out[T] = (r, x.grad)
    (er, eg), (tr, tg) = out[ember], out[torch]
    assert np.array_equal(
        er[0].detach().numpy() if fn.endswith("mean") else er.detach().numpy(), np.zeros(4)
    )
    for e, t in zip(er if isinstance(er, tuple) else (er,), tr if isinstance(tr, tuple) else (tr,)):
        assert_same(e.detach(), t.detach(), atol=0, rtol=0)  # exact: the mean too
    assert_same(eg, tg, atol=1e-12, rtol=1e-6)  # std: 0 where the std is 0, not ~1/eps


def test_constant_and_varying_rows():
    a = np.array([[1e5 + 0.3] * 7, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0]], dtype=np.float32)
    for T in (torch, ember):
        x = T.tensor(a)
        v, m = T.var_mean(x, 1, correction=0)
        assert v.tolist()[0] == 0.0 and m.tolist()[0] == a[0, 0], T.__name__


# ---------------------------------------------------------------------- GRUCell
def test_gru_cell_unbatched_input_with_square_hidden_state():
    def f(T):
        T.manual_seed(0)
        return T.nn.GRUCell(3, 4)(T.randn(3), T.randn(4, 4))

    msg = same_error(f, RuntimeError)
    assert "must match the size of tensor b (4) at non-singleton dimension 2" in msg


# ---------------------------------------------------------------------- global adaptive avg pool
GLOBAL = [(1, 1), (2, 1), (2, (1, 1)), (3, [1, 1, 1])]


@pytest.mark.parametrize("nd,osz", GLOBAL)
def test_global_adaptive_avg_pool_saves_no_input(nd, osz):
    res = {}
    for T in (torch, ember):
        x = _t(T, (2, 3) + (4,) * nd, 5)
        y = getattr(T.nn.functional, f"adaptive_avg_pool{nd}d")(x, osz)
        with T.no_grad():
            x.mul_(2.0)  # torch's mean kept only the shape: no version error
        y.backward(_up(T, y))
        res[T] = (type(y.grad_fn).__name__, y, x.grad)
    assert res[ember][0] == res[torch][0]
    for e, t in zip(res[ember][1:], res[torch][1:]):
        assert_same(e, t, atol=1e-12, rtol=1e-12)


def test_adaptive_avg_pool_to_more_than_one_still_saves_input():
    def f(T):
        x = _t(T, (2, 3, 4, 4), 6)
        y = T.nn.functional.adaptive_avg_pool2d(x, (2, 1))
        with T.no_grad():
            x.add_(1)
        y.sum().backward()

    assert "modified by an inplace operation" in same_error(f, RuntimeError)


def test_global_adaptive_avg_pool_gradcheck():
    x = _t(ember, (2, 3, 3, 2), 7)
    fn = lambda x: ember.nn.functional.adaptive_avg_pool2d(x, 1) ** 2
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


# ---------------------------------------------------------------------- batch norm running stats
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("stat", ["running_mean", "running_var"])
@pytest.mark.parametrize("form", ["batch_norm", "instance_norm", "torch.batch_norm"])
def test_batch_norm_refuses_running_stats_requiring_grad(form, stat, training):
    def f(T):
        x = _t(T, (4, 3, 5), 8)
        kw = {"running_mean": T.zeros(3), "running_var": T.ones(3)}
        kw[stat].requires_grad_()
        F = T.nn.functional
        if form == "batch_norm":
            return F.batch_norm(x, training=training, **kw)
        if form == "instance_norm":
            return F.instance_norm(x, use_input_stats=training, **kw)
        return T.batch_norm(
            x, None, None, kw["running_mean"], kw["running_var"], training, 0.1, 1e-5, False
        )

    msg = same_error(f, RuntimeError)
    assert f"not differentiable with respect to argument '{stat}'" in msg


def test_batch_norm_running_stats_requiring_grad_fine_without_grad_mode_or_input():
    for T in (torch, ember):
        rm = T.zeros(3).requires_grad_()
        with T.no_grad():
            assert tuple(T.nn.functional.batch_norm(T.ones(4, 3), rm, T.ones(3)).shape) == (4, 3)
        # an empty input takes torch's other path, which does not check
        assert tuple(
            T.nn.functional.batch_norm(T.ones(0, 3), rm, T.ones(3), training=True).shape
        ) == (0, 3)
