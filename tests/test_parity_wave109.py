"""Parity checks of the hundred-and-ninth wave: smooth_l1_loss, huber_loss and
binary_cross_entropy of same-shape, same-dtype float32/float64 operands of one or more dims are
one node each (SmoothL1LossBackward0 / HuberLossBackward0 / BinaryCrossEntropyBackward0 straight
onto the inputs, as torch's graph), with torch's backward kernels (smooth_l1's inner gradient
norm (d / beta) g, huber's norm d g, +-norm g (delta) from the ties |d| == beta on; BCE's
elementwise gradient of the expanded grad, then / n for the mean). The other calls (beta=0,
which is torch's l1 graph; other dtypes; broadcasting, with torch's warning; 0-d and empty
operands; a weight; legacy size_average/reduce) keep the composite path, compared here too.

Every case compares ember with torch in the same test: the error (type and text), or the
values, dtype, shape, node name and gradients (w.r.t. input and target) under a non-uniform
upstream gradient; the fast paths' derivatives are gradchecked in float64 (twice
differentiable too; torch's double-backward nodes differ, so values only there).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import assert_same, same_error

_RED = ("mean", "sum", "none")


def _run(lib, fn):
    """fn(lib) with warnings recorded: ("ok", result, warnings) or (error type, text, [])."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e), []
    return "ok", out, sorted(str(w.message) for w in seen if w.category is UserWarning)


def _tol(dtype):
    return {"float16": (2e-3, 2e-2), "bfloat16": (2e-2, 5e-2)}.get(dtype, (1e-6, 1e-5))


def _same(e, t, atol, rtol, what):
    """assert_same, bfloat16 compared as float32 (torch's numpy() refuses it) after the dtype."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    assert tuple(e.shape) == tuple(t.shape), what
    assert_same(e.detach().float(), t.detach().float(), atol=atol, rtol=rtol, what=what)


def _outcome(fn, tol=(1e-6, 1e-5)):
    """fn(lib) -> (loss, [inputs wanting grads]) in both libraries: the same error, or the same
    warnings and loss (value, dtype, shape, node name) and gradients under a non-uniform
    upstream."""
    (kt, t, wt), (ke, e, we) = _run(torch, fn), _run(ember, fn)
    assert ke == kt, (e, t)
    if kt != "ok":
        assert e == t
        return
    assert we == wt
    (tl, tins), (el, eins) = t, e
    atol, rtol = tol
    _same(el, tl, atol, rtol, "loss")
    assert (el.grad_fn is None) == (tl.grad_fn is None)
    if tl.grad_fn is None:
        return
    assert el.grad_fn.name() == tl.grad_fn.name()
    up = np.linspace(0.5, 2.0, tl.numel()).reshape(tuple(tl.shape))
    (kg, tg, _), (keg, eg, _) = (
        _run(lib, lambda m, lo=lo, ins=ins: m.autograd.grad(lo, ins, m.tensor(up).to(lo.dtype)))
        for lib, lo, ins in ((torch, tl, tins), (ember, el, eins))
    )
    assert keg == kg, (eg, tg)
    if kg != "ok":
        assert eg == tg
        return
    for a, b in zip(eg, tg):
        _same(a, b, atol, rtol, "grad")


_LOSSES = {
    "smooth_l1": lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r),
    "smooth_l1_beta": lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.3),
    "smooth_l1_beta0": lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.0),
    "smooth_l1_legacy": lambda F, x, y, r: F.smooth_l1_loss(x, y, size_average=r == "mean"),
    "huber": lambda F, x, y, r: F.huber_loss(x, y, reduction=r),
    "huber_delta": lambda F, x, y, r: F.huber_loss(x, y, reduction=r, delta=2.5),
    "huber_weight": lambda F, x, y, r: F.huber_loss(x, y, reduction=r, weight=y.detach() + 1),
    "bce": lambda F, x, y, r: F.binary_cross_entropy(x, y, reduction=r),
    "bce_weight": lambda F, x, y, r: F.binary_cross_entropy(x, y, y.detach() + 0.5, reduction=r),
}
_BCE = ("bce", "bce_weight")


def _data(loss, xs, ys, rng):
    if loss in _BCE:  # probabilities, the bounds included
        xa, ya = rng.random(xs), rng.random(ys)
        if xa.size > 2:
            xa.flat[0], xa.flat[1] = 0.0, 1.0
        return xa, ya
    xa, ya = rng.standard_normal(xs) * 2, rng.standard_normal(ys)
    return xa, ya


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("grads", ["input", "both", "target"])
@pytest.mark.parametrize(
    "dtypes", ["float32", "float64", "float16", "bfloat16", "float32/float64", "float64/float32"]
)
@pytest.mark.parametrize(
    "shapes", [((5, 3), (5, 3)), ((0, 3), (0, 3)), ((), ()), ((2, 3), (3,)), ((3,), (2, 3))]
)
@pytest.mark.parametrize("loss", list(_LOSSES))
def test_losses(loss, shapes, dtypes, grads, reduction):
    rng = np.random.default_rng(109)
    xs, ys = shapes
    xa, ya = _data(loss, xs, ys, rng)
    dx, dy = (dtypes.split("/") * 2)[:2]

    def fn(m):
        x = m.tensor(xa, dtype=getattr(m, dx), requires_grad=grads != "target")
        y = m.tensor(ya, dtype=getattr(m, dy), requires_grad=grads != "input")
        return _LOSSES[loss](m.nn.functional, x, y, reduction), [
            t for t in (x, y) if t.requires_grad
        ]

    _outcome(fn, tol=_tol(dx) if dx == dy else _tol("float16"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("loss", ["smooth_l1", "smooth_l1_beta", "huber", "huber_delta", "bce"])
def test_many_random_inputs(loss, reduction, dtype):
    """Random shapes, ties |x - y| == beta (delta) included; the values to a few ulps (torch's
    scalar tail rounds beta/delta in double, numpy's logs and sums differ from torch's)."""
    rng = np.random.default_rng(1090)
    bound = {"smooth_l1_beta": 0.3, "huber_delta": 2.5}.get(loss, 1.0)
    for _ in range(8):
        shape = (int(rng.integers(1, 40)), int(rng.integers(1, 9)))
        xa, ya = _data(loss, shape, shape, rng)
        if loss not in _BCE:
            ya.flat[0] = xa.flat[0] - bound
            ya.flat[-1] = xa.flat[-1] + bound
            ya.flat[shape[1] // 2] = xa.flat[shape[1] // 2]  # d == 0

        def fn(m, xa=xa, ya=ya):
            x = m.tensor(xa, dtype=getattr(m, dtype), requires_grad=True)
            y = m.tensor(ya, dtype=getattr(m, dtype), requires_grad=True)
            return _LOSSES[loss](m.nn.functional, x, y, reduction), [x, y]

        _outcome(fn, tol=(1e-6, 1e-5) if dtype == "float32" else (1e-12, 1e-11))


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("loss", ["smooth_l1", "smooth_l1_beta", "huber", "huber_delta"])
def test_special_values(loss, reduction):
    xa = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30, 3.0, 1.0, -1.0])
    ya = np.array([1.0, np.inf, 0.5, 0.0, -0.0, 1.0, 0.0, 3.0, 0.0, 0.0])
    for dtype in ("float32", "float64"):

        def fn(m, dtype=dtype):
            x = m.tensor(xa, dtype=getattr(m, dtype), requires_grad=True)
            y = m.tensor(ya, dtype=getattr(m, dtype), requires_grad=True)
            return _LOSSES[loss](m.nn.functional, x, y, reduction), [x, y]

        _outcome(fn)


@pytest.mark.parametrize("reduction", _RED)
def test_bce_bounds_and_errors(reduction):
    """The log clamp at -100, the bounds' finite gradient, and torch's range errors."""
    cases = [
        ([0.0, 1.0, 1e-30, 1 - 1e-7, 0.5], [1.0, 0.0, 1.0, 0.0, 0.5]),
        ([0.2, 1.5], [0.0, 1.0]),
        ([-0.1, 0.5], [0.0, 1.0]),
        ([np.nan, 0.5], [0.0, 1.0]),
        ([0.2, 0.5], [1.5, 1.0]),
        ([0.2, 0.5], [np.nan, 1.0]),
    ]
    for xa, ya in cases:
        for dtype in ("float32", "float64"):

            def fn(m, xa=xa, ya=ya, dtype=dtype):
                x = m.tensor(xa, dtype=getattr(m, dtype), requires_grad=True)
                y = m.tensor(ya, dtype=getattr(m, dtype), requires_grad=True)
                return m.nn.functional.binary_cross_entropy(x, y, reduction=reduction), [x, y]

            _outcome(fn)


def test_bce_weight_broadcast_and_errors():
    rng = np.random.default_rng(7)
    xa, ya = rng.random((4, 3)), rng.random((4, 3))
    for wshape in [(3,), (1, 3), (4, 1), (4, 3), (2,), (5, 4, 3)]:
        wa = rng.random(wshape) + 0.5

        def fn(m, wa=wa):
            x = m.tensor(xa, dtype=m.float32, requires_grad=True)
            y = m.tensor(ya, dtype=m.float32)
            return m.nn.functional.binary_cross_entropy(x, y, m.tensor(wa, dtype=m.float32)), [x]

        _outcome(fn)
    same_error(lambda m: m.nn.functional.binary_cross_entropy(m.rand(4, 3), m.rand(3)), ValueError)
    same_error(
        lambda m: m.nn.functional.binary_cross_entropy(m.rand(3), m.rand(3, dtype=m.float64)),
        RuntimeError,
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.nn.functional.smooth_l1_loss(m.ones(3), m.ones(3), beta=-1.0),
        lambda m: m.nn.functional.huber_loss(m.ones(3), m.ones(3), delta=0.0),
        lambda m: m.nn.functional.huber_loss(m.ones(3), m.ones(3), delta=-2.0),
        lambda m: m.nn.functional.smooth_l1_loss(m.ones(3), m.ones(3), reduction="avg"),
        lambda m: m.nn.functional.huber_loss(m.ones(3), m.ones(3), reduction="avg"),
        lambda m: m.nn.functional.binary_cross_entropy(m.rand(3), m.rand(3), reduction="avg"),
        lambda m: m.nn.functional.smooth_l1_loss(m.ones(3), m.ones(4)),
        lambda m: m.nn.functional.huber_loss(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64)),
        lambda m: m.nn.functional.smooth_l1_loss(
            m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64)
        ),
    ],
)
@pytest.mark.filterwarnings("ignore:Using a target size")
def test_errors(call):
    same_error(call)


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("loss", ["smooth_l1", "huber", "bce"])
def test_graph_and_saved_tensors(loss, reduction):
    """One node straight onto the inputs, as torch's; it saves the input and the target, so an
    in-place change of either before backward is torch's error."""

    def nodes(m):
        x, y = m.rand(4, 3, requires_grad=True), m.rand(4, 3, requires_grad=loss != "bce")
        out = _LOSSES[loss](m.nn.functional, x, y, reduction)
        return [out.grad_fn.name()] + [n and n.name() for n, _ in out.grad_fn.next_functions]

    assert nodes(ember) == nodes(torch)

    def changed(m):
        x, y = m.rand(4, 3, requires_grad=True), m.rand(4, 3)
        out = _LOSSES[loss](m.nn.functional, x, y, reduction)
        y.mul_(0.5)
        out.sum().backward()

    same_error(changed, RuntimeError)


@pytest.mark.parametrize("module", ["SmoothL1Loss", "HuberLoss", "BCELoss"])
def test_modules(module):
    rng = np.random.default_rng(17)
    xa, ya = rng.random((6, 2)), rng.random((6, 2))
    for reduction in _RED:

        def fn(m, reduction=reduction):
            x = m.tensor(xa, dtype=m.float32, requires_grad=True)
            y = m.tensor(ya, dtype=m.float32, requires_grad=module != "BCELoss")
            out = getattr(m.nn, module)(reduction=reduction)(x, y)
            return out, [t for t in (x, y) if t.requires_grad]

        _outcome(fn)


def test_names():
    """Names (ember's own; torch 2.13 has none) unify through the one node and drop once
    reduced: the same as the composite path, which a float16 pair still takes."""

    def run(loss, reduction, dtype, yn=(None, "C")):
        x = ember.rand(4, 3, dtype=dtype).refine_names("N", "C").requires_grad_()
        y = ember.rand(4, 3, dtype=dtype).refine_names(*yn)
        try:
            out = _LOSSES[loss](ember.nn.functional, x, y, reduction)
        except RuntimeError as e:
            return str(e)
        out.backward(ember.ones_like(out))
        return out.names, x.grad.names

    for loss in ("smooth_l1", "huber", "bce"):
        for reduction in _RED:
            fast = run(loss, reduction, ember.float32)
            assert fast == run(loss, reduction, ember.float16)
            assert fast[0] == (("N", "C") if reduction == "none" else ())
            clash = run(loss, reduction, ember.float32, ("N", "D"))
            assert isinstance(clash, str)
            assert clash == run(loss, reduction, ember.float16, ("N", "D"))


def test_double_backward_and_gradcheck():
    rng = np.random.default_rng(19)
    for loss in ("smooth_l1", "smooth_l1_beta", "huber", "huber_delta", "bce"):
        xa, ya = _data(loss, (4, 3), (4, 3), rng)
        if loss in _BCE:
            xa = xa * 0.8 + 0.1  # away from the bounds, where finite differences break
        for reduction in _RED:

            def fn(m, loss=loss, reduction=reduction, xa=xa, ya=ya):
                x = m.tensor(xa, requires_grad=True)
                y = m.tensor(ya, requires_grad=True)
                out = _LOSSES[loss](m.nn.functional, x, y, reduction)
                up = m.linspace(0.5, 1.5, out.numel(), dtype=m.float64).reshape(out.shape)
                gx, gy = m.autograd.grad(out, (x, y), up, create_graph=True)
                return (gx * gx.sin()).sum() + (gy * gy).sum() * 0.5, [x, y]

            # torch's double-backward node names differ: the values are compared
            (kt, t, _), (ke, e, _) = _run(torch, fn), _run(ember, fn)
            assert ke == kt == "ok", (e, t)
            assert_same(e[0].detach(), t[0].detach(), atol=1e-10, rtol=1e-9)
            ge = ember.autograd.grad(e[0], e[1])
            gt = torch.autograd.grad(t[0], t[1])
            for a, b in zip(ge, gt):
                assert_same(a, b, atol=1e-10, rtol=1e-9, what="double backward")

            x = ember.tensor(xa, requires_grad=True)
            y = ember.tensor(ya, requires_grad=True)

            def f(a, b, loss=loss, reduction=reduction):
                return _LOSSES[loss](ember.nn.functional, a, b, reduction)

            assert ember.autograd.gradcheck(f, (x, y))
            assert ember.autograd.gradgradcheck(f, (x, y))
