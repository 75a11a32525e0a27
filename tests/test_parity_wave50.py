"""Parity regressions found by the fiftieth wave, a sweep of gradients at singular and tie points
(for each op, in float64 and float32: forward values and ``x.grad`` under a non-uniform upstream
gradient, at the points where the function is not differentiable or its formula divides by
zero: 0 for abs/sign/relu family/clamp/sqrt/pow/log, xlogy/xlog1py, atan2/hypot at the origin,
norms, distances and normalize at zero vectors, std/var without degrees of freedom, the
softmax/logsumexp family with infinite entries, ties for max/min/amax/pooling/median/sort/
cummax, where/masked_fill with NaN in the unselected branch, linalg at singular inputs; torch is
the oracle): torch's ``xlog1py`` derivative is 0 where the input is 0 and ``other <= -1``
(ember's was -inf/NaN there, and a Python-number ``other <= -1`` raised "math domain error");
torch takes float32/64 ``x ** -0.5`` as rsqrt (-inf at -0, NaN at -inf, where C's pow gives inf
and 0), which also sets the derivative of ``x ** 0.5`` at -0; a full-reduction ``var``/``std``
whose correction leaves no degrees of freedom has torch's gradient ``inf`` (NaN where the
deviation is 0; std: NaN throughout), where ember's followed the signs of the deviations;
``prod``'s derivative with zeros in the tensor built its table as ``x * (1 - eye) + eye``, so an
infinite entry turned into NaN; the inf-norms (``vector_norm``, ``dist``) gave NaN for a row
whose norm is NaN (torch: 0), and the 1-norm NaN at a NaN entry (torch's sgn(NaN) is 0); the
derivative of a 1x1 ``det`` at 0 was 0 (torch: 1, the entry's own derivative); ``polar``'s
derivative in ``abs`` was e^(i angle) where torch's is sgn(result): 0 at abs == 0, negated for a
negative abs, NaN where the result is not finite; ``logaddexp``/``logaddexp2`` were NaN at
(inf, -inf) (torch: 1 and 0); ``huber_loss``/``smooth_l1_loss`` had a NaN gradient at an
infinite difference (the where's zero for the quadratic branch times inf; torch: +-delta).
Found on the way: bfloat16 ``x ** -0.5`` is rsqrt in torch too, ``soft_margin_loss`` refuses a
target that requires grad (torch has no derivative for it) and ``F.batch_norm`` refuses an
``eps`` of 0 in training (negative in evaluation), as torch does."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan
DTYPES = ("float64", "float32")


def _grads(lib, fn, arrays, dtype, create_graph=False):
    """fn's outputs and the gradients of sum(out * w) (w non-uniform) for every input."""
    xs = [lib.tensor(np.asarray(a), dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    w = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
    gs = lib.autograd.grad((out * w).sum(), xs, create_graph=create_graph)
    return out, gs


def _same(t, e):
    a, b = t.detach().numpy(), e.detach().numpy()
    assert a.shape == b.shape and str(t.dtype)[6:] == str(e.dtype)[6:]
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7, equal_nan=True)
    # infinities and NaN in the same places, signs included
    np.testing.assert_array_equal(np.isnan(b), np.isnan(a))
    np.testing.assert_array_equal(np.where(np.isinf(b), b, 0), np.where(np.isinf(a), a, 0))


def _check(fn, *arrays, dtypes=DTYPES):
    for dt in dtypes:
        tout, tg = _grads(torch, fn, arrays, dt)
        eout, eg = _grads(ember, fn, arrays, dt)
        _same(tout, eout)
        for a, b in zip(tg, eg):
            _same(a, b)


# ---------------------------------------------------------------------- xlog1py
def test_xlog1py_grad_zero_input_other_at_or_below_minus_one():
    x = [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0]
    y = [-1.0, -2.0, 0.5, NAN, -1.0, 3.0, 0.0]
    _check(lambda L, x, y: L.special.xlog1py(x, y), x, y)


@pytest.mark.parametrize("other", [-1.0, -2.0, 0.5, -0.5])
def test_xlog1py_grad_python_number_other(other):
    # ember raised "math domain error" for other <= -1
    _check(lambda L, x: L.special.xlog1py(x, other), [0.0, 1.0, -2.0])


# ---------------------------------------------------------------------- pow
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_pow_minus_half_is_rsqrt(dtype):
    # float16 is the exception: torch's kernel takes C's pow there (inf at -0, 0 at -inf)
    x = [-0.0, 0.0, 4.0, -INF, INF, -1.0, 0.25, 3.0]
    for f in (lambda v: v**-0.5, lambda v: v.pow(-0.5), lambda v: v.pow(v.new_tensor(-0.5))):
        t = f(torch.tensor(x, dtype=getattr(torch, dtype)))
        e = f(ember.tensor(x, dtype=getattr(ember, dtype)))
        assert str(e.dtype) == "ember." + dtype
        _same(t.float(), e.float())
        a, b = t.float().numpy(), e.float().numpy()
        ok = ~np.isnan(a)  # the sign of a zero or an infinity (a NaN's sign bit means nothing)
        np.testing.assert_array_equal(np.signbit(b[ok]), np.signbit(a[ok]))


def test_pow_half_grad_at_negative_zero():
    _check(lambda L, x: L.pow(x, 0.5), [-0.0, 0.0, 4.0, -1.0])
    _check(lambda L, x: x**-0.5, [-0.0, 0.0, 4.0, INF])


# ---------------------------------------------------------------------- var / std
@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("extra", [0, 2])  # correction == numel, and above it
def test_var_std_full_reduction_without_dof(fn, extra):
    for x in ([3.0, 1.0, 3.0], [[3.0, 1.0, 3.0], [2, 2, 2]], [2.0, 2.0, 2.0]):
        c = np.size(x) + extra
        with pytest.warns(UserWarning, match="degrees of freedom"):
            _check(lambda L, x, c=c: getattr(L, fn)(x, correction=c).reshape(1), x)


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
def test_var_std_mean_full_reduction_without_dof(fn):
    def f(L, x):
        v, m = getattr(L, fn)(x, correction=4)
        return L.stack([v, m * 2])

    with pytest.warns(UserWarning, match="degrees of freedom"):
        _check(f, [3.0, 1.0, 3.0])
    with pytest.warns(UserWarning, match="degrees of freedom"):
        _check(f, [2.0, 2.0, 2.0])


def test_var_dim_reduction_without_dof_unchanged():
    # over a dim, torch keeps 2 (x - mean) / (n - c) (signed infinities at n == c)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        _check(lambda L, x: L.var(x, dim=1, correction=3), [[3.0, 1.0, 3.0], [2, 2, 2]])
    with pytest.warns(UserWarning, match="degrees of freedom"):
        _check(lambda L, x: L.var(x, dim=1, correction=5), [[3.0, 1.0, 3.0], [2, 2, 2]])


# ---------------------------------------------------------------------- prod
def test_prod_grad_infinities_with_zeros():
    r = [[-INF, -INF, -INF], [0.0, -INF, 1.0], [INF, 0.0, 1.0], [INF, INF, 0.0], [2.0, 0.0, 3.0]]
    _check(lambda L, x: L.prod(x, 1), r)
    _check(lambda L, x: L.prod(x, 0), r)
    _check(lambda L, x: L.prod(x), [INF, 0.0, 2.0])


# ---------------------------------------------------------------------- norms
ROWS = [[1.0, NAN, -3.0, NAN], [2.0, -2.0, 2.0, 2.0], [-INF, -INF, 0.0, 0.0], [0.0, 0, 0, 0]]


@pytest.mark.parametrize("p", [INF, -INF, 1.0, 2.0, 3.0])
def test_vector_norm_grad_with_nan_rows(p):
    _check(lambda L, x: L.linalg.vector_norm(x, p, dim=1), ROWS)
    _check(lambda L, x: L.linalg.vector_norm(x, p), ROWS[:1])
    _check(lambda L, x: L.linalg.vector_norm(x, p).reshape(1), ROWS[1:2])


@pytest.mark.parametrize("p", [INF, 1.0])
def test_dist_norm_grad_with_nan(p):
    _check(lambda L, x: L.dist(x, L.zeros_like(x), p).reshape(1), ROWS[:2])
    _check(lambda L, x: x.norm(p, dim=1), ROWS)


# ---------------------------------------------------------------------- det
def test_det_1x1_grad_at_zero():
    _check(lambda L, x: L.linalg.det(x), [[[0.0]], [[-0.0]], [[0.1]], [[3.0]]])
    _check(lambda L, x: L.det(x).reshape(1), [[0.0]])


def test_det_1x1_double_backward():
    for lib in (torch, ember):
        x = lib.tensor([[[0.0]], [[2.0]]], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((lib.linalg.det(x) ** 2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        if lib is torch:
            want = g.detach().numpy(), gg.numpy()
        else:
            np.testing.assert_allclose(g.detach().numpy(), want[0])
            np.testing.assert_allclose(gg.numpy(), want[1])


# ---------------------------------------------------------------------- polar
def test_polar_grad_at_zero_and_negative_abs():
    def f(L, a, b):
        return L.view_as_real(L.polar(a, b))

    _check(f, [0.0, -1.0, 2.0, -0.0], [0.3, 0.3, 0.3, 1.0])
    _check(f, [NAN, INF, 1.0], [0.3, 0.0, INF])


def test_polar_gradcheck():
    a = ember.tensor([1.5, 0.5], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([0.3, 2.0], dtype=ember.float64, requires_grad=True)
    f = lambda a, b: ember.view_as_real(ember.polar(a, b))
    assert ember.autograd.gradcheck(f, (a, b))
    assert ember.autograd.gradgradcheck(f, (a, b))


# ---------------------------------------------------------------------- logaddexp
@pytest.mark.parametrize("fn", ["logaddexp", "logaddexp2"])
def test_logaddexp_grad_opposite_infinities(fn):
    x = [INF, -INF, INF, -INF, 1.0, 1000.0, -3.0]
    y = [-INF, INF, INF, -INF, 1.0, -1000.0, 2.0]
    _check(lambda L, x, y: getattr(L, fn)(x, y), x, y)


# ---------------------------------------------------------------------- huber / smooth_l1
LOSS_X = [NAN, INF, -INF, 0.0, 1.0, -1.0, 0.5, 3.0, 1.0, 2.0, -0.3]
LOSS_Y = [0.5, -1.0, 1.0, 0.0, -INF, INF, NAN, 1.0, 1.0, 0.0, 0.4]


@pytest.mark.parametrize(
    "name, kw",
    [
        ("huber_loss", {}),
        ("huber_loss", {"delta": 2.0}),
        ("smooth_l1_loss", {}),
        ("smooth_l1_loss", {"beta": 0.5}),
        ("smooth_l1_loss", {"beta": 0.0}),
    ],
)
def test_huber_smooth_l1_grad_at_infinite_difference(name, kw):
    # the gradient is bounded (+-delta) where the difference is infinite, NaN where it is NaN
    _check(
        lambda L, x, y: getattr(L.nn.functional, name)(x, y, reduction="none", **kw), LOSS_X, LOSS_Y
    )
    _check(lambda L, x, y: getattr(L.nn.functional, name)(x, y, **kw).reshape(1), LOSS_X, LOSS_Y)


@pytest.mark.parametrize("name", ["huber_loss", "smooth_l1_loss"])
def test_huber_smooth_l1_double_backward(name):
    x0, y0 = [0.3, -2.0, 1.5, 0.9], [0.0, 0.5, -1.0, 0.4]
    res = []
    for lib in (torch, ember):
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(y0, dtype=lib.float64)
        loss = getattr(lib.nn.functional, name)(x, y, reduction="sum")
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor([1.0, 2, 3, 4], dtype=lib.float64)).sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0])
    np.testing.assert_allclose(res[1][1], res[0][1])


def test_huber_no_grad_forward_unchanged():
    for name in ("huber_loss", "smooth_l1_loss"):
        t = getattr(torch.nn.functional, name)(
            torch.tensor(LOSS_X), torch.tensor(LOSS_Y), reduction="none"
        )
        e = getattr(ember.nn.functional, name)(
            ember.tensor(LOSS_X), ember.tensor(LOSS_Y), reduction="none"
        )
        _same(t, e)


def test_soft_margin_loss_refuses_target_requiring_grad():
    for lib in (torch, ember):
        x = lib.tensor([[0.5, -1.0]], requires_grad=True)
        t = lib.tensor([[1.0, -1.0]], requires_grad=True)
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
            lib.nn.functional.soft_margin_loss(x, t)
        with pytest.raises(RuntimeError, match="'soft_margin_loss' is not differentiable"):
            lib.nn.SoftMarginLoss()(x.detach(), t)
        with lib.no_grad():  # no graph, nothing to refuse
            v = lib.nn.functional.soft_margin_loss(x, t)
        assert v.item() == pytest.approx(float(np.log1p(np.exp(-0.5)) + np.log1p(np.exp(-1))) / 2)


# ---------------------------------------------------------------------- batch_norm eps
@pytest.mark.parametrize(
    "training, eps", [(True, 0.0), (True, -1.0), (False, -1e-3), (False, 0.0), (True, 1e-5)]
)
def test_batch_norm_refuses_eps_without_a_floor(training, eps):
    res = []
    for lib in (torch, ember):
        x = lib.ones(4, 3)
        try:
            r = lib.nn.functional.batch_norm(
                x, lib.zeros(3), lib.ones(3), training=training, eps=eps
            )
            res.append(("ok", r.numpy().tolist()))
        except ValueError as e:
            res.append(("ValueError", str(e)))
    assert res[1] == res[0]
    if training and eps <= 0:
        with pytest.raises(ValueError, match="eps must be positive during training"):
            ember.nn.BatchNorm1d(3, eps=eps)(ember.ones(4, 3))
