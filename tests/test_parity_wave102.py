"""Parity checks of the hundred-and-second wave: the losses' per-call cost. The common calls
now take fast paths, each compared here against torch on the cases that leave it:

* cross_entropy / nll_loss with class-index targets: an (N, C) float32/float64 input with int64
  targets all in range (none ignored) and no weight or a plain per-class one skips the mask,
  the per-target checks and numpy's take_along_axis (one uint64 max tells the targets are in
  range; label smoothing's nll term takes it too); the other calls (targets out of range,
  negative, ignored, all ignored, Byte/int32, unbatched, (N, C, d...) inputs, half types, an
  ignore_index inside the classes, a weight of another dtype or shape) keep the checked path;
* log_softmax's backward works on the arrays when no graph is recorded;
* mse_loss and binary_cross_entropy_with_logits of same-shape, same-dtype float32/float64
  operands of one or more dims are one node (MseLossBackward0 /
  BinaryCrossEntropyWithLogitsBackward0 straight onto the inputs, as torch's graph); it saves
  the input and the target, as torch's, so an in-place change of mse_loss's target before
  backward is now torch's error; other dtypes, broadcasting, 0-d operands, weights and
  pos_weight keep the composite.

Every case compares ember with torch in the same test: the error (type and text), or the
values, dtype, shape, node name and gradients under a non-uniform upstream gradient; the new
derivatives are gradchecked in float64 (twice differentiable too).
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
    """fn(lib) with warnings silenced: ("ok", result) or (error type name, text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(lib)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e)


def _outcome(fn, tol=(1e-5, 1e-4)):
    """fn(lib) -> (loss, [inputs wanting grads]) in both libraries: the same error, or the same
    loss (value, dtype, shape, node name) and gradients under a non-uniform upstream."""
    (kt, t), (ke, e) = _run(torch, fn), _run(ember, fn)
    assert ke == kt, (e, t)
    if kt != "ok":
        assert e == t
        return
    (tl, tins), (el, eins) = t, e
    atol, rtol = tol
    _same(el, tl, atol, rtol, "loss")
    assert (el.grad_fn is None) == (tl.grad_fn is None)
    if tl.grad_fn is None:
        return
    assert el.grad_fn.name() == tl.grad_fn.name()
    up = np.linspace(0.5, 2.0, tl.numel()).reshape(tuple(tl.shape))
    dt = str(tl.dtype).split(".")[-1]
    (kg, tg), (keg, eg) = (
        _run(lib, lambda m, lo=lo, ins=ins: m.autograd.grad(lo, ins, m.tensor(up).to(lo.dtype)))
        for lib, lo, ins in ((torch, tl, tins), (ember, el, eins))
    )
    assert keg == kg, (eg, tg)
    if kg != "ok":
        assert eg == tg
        return
    for a, b in zip(eg, tg):
        _same(a, b, atol, rtol, f"grad ({dt})")


def _same(e, t, atol, rtol, what):
    """assert_same, bfloat16 compared as float32 (torch's numpy() refuses it) after the dtype."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    assert_same(e.detach().float(), t.detach().float(), atol=atol, rtol=rtol, what=what)


def _tol(dtype):
    return {"float16": (2e-3, 2e-2), "bfloat16": (2e-2, 5e-2)}.get(dtype, (1e-5, 1e-4))


# ------------------------------------------------------------------ class-index losses
def _targets(kind, tshape, C, rng):
    t = rng.integers(0, C, tshape)
    flat = t.reshape(-1)
    if kind == "ignored":
        flat[0] = -100
    elif kind == "all_ignored":
        flat[:] = -100
    elif kind == "negative":
        flat[-1] = -3
    elif kind == "minus_one":
        flat[0] = -1
    elif kind == "too_big":
        flat[-1] = C
    elif kind == "class_one":  # hits ignore_index=1 below
        flat[0] = 1
    return t


_CLASS_LOSSES = {
    "ce": lambda F, x, t, w, r: F.cross_entropy(x, t, reduction=r),
    "ce_weight": lambda F, x, t, w, r: F.cross_entropy(x, t, w, reduction=r),
    "ce_smooth": lambda F, x, t, w, r: F.cross_entropy(x, t, reduction=r, label_smoothing=0.2),
    "ce_smooth_weight": lambda F, x, t, w, r: F.cross_entropy(
        x, t, w, reduction=r, label_smoothing=0.2
    ),
    "ce_ignore_1": lambda F, x, t, w, r: F.cross_entropy(x, t, reduction=r, ignore_index=1),
    "ce_ignore_-1": lambda F, x, t, w, r: F.cross_entropy(x, t, w, reduction=r, ignore_index=-1),
    "nll": lambda F, x, t, w, r: F.nll_loss(x.log_softmax(-1 if x.ndim < 2 else 1), t, reduction=r),
    "nll_weight": lambda F, x, t, w, r: F.nll_loss(x, t, w, reduction=r),
}


def _class_case(loss, kind, shape, reduction, dtype, tdtype="int64"):
    rng = np.random.default_rng(abs(hash((loss, kind, shape, reduction))) % 2**32)
    C = shape[1] if len(shape) > 1 else shape[0]
    tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    xa = rng.standard_normal(shape) * 2
    ta = _targets(kind, tshape, C, rng)
    wa = rng.random(C) + 0.5

    def fn(m):
        x = m.tensor(xa, dtype=getattr(m, dtype), requires_grad=True)
        t = m.tensor(ta).to(getattr(m, tdtype))
        w = m.tensor(wa, dtype=getattr(m, dtype))
        return _CLASS_LOSSES[loss](m.nn.functional, x, t, w, reduction), [x]

    return fn


_KINDS = ("in_range", "ignored", "all_ignored", "negative", "minus_one", "too_big", "class_one")


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("shape", [(6, 4), (4,), (3, 4, 2, 2), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize("loss", list(_CLASS_LOSSES))
def test_class_losses(loss, kind, shape, reduction):
    for dtype in ("float32", "float64"):
        _outcome(_class_case(loss, kind, shape, reduction, dtype))


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("tdtype", ["uint8", "int32"])
@pytest.mark.parametrize("loss", ["ce", "ce_weight", "nll_weight"])
def test_class_losses_other_target_dtypes(loss, tdtype, reduction):
    _outcome(_class_case(loss, "in_range", (5, 3), reduction, "float32", tdtype))


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("kind", ["in_range", "ignored"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("loss", ["ce", "ce_weight", "nll"])
def test_class_losses_half(loss, dtype, kind, reduction):
    _outcome(_class_case(loss, kind, (16, 5), reduction, dtype), tol=_tol(dtype))


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x, t, w: F.cross_entropy(x, t, w.double()),  # weight of another dtype
        lambda F, x, t, w: F.cross_entropy(x, t, w[:2]),  # too few classes
        lambda F, x, t, w: F.cross_entropy(x, t, w.reshape(1, -1)),  # 2-d weight
        lambda F, x, t, w: F.cross_entropy(x, t, w.requires_grad_()),  # weight wanting grad
        lambda F, x, t, w: F.cross_entropy(x, t[:3]),  # batch sizes differ
        lambda F, x, t, w: F.cross_entropy(x, t.reshape(2, 3)),  # multi-target
        lambda F, x, t, w: F.cross_entropy(x, t, ignore_index=2),  # an ignore_index in range
        lambda F, x, t, w: F.cross_entropy(x, t.float()),  # float targets of another shape
        lambda F, x, t, w: F.nll_loss(x.int(), t),  # integer log-probabilities
        lambda F, x, t, w: F.cross_entropy(x[:0], t[:0]),  # an empty batch: nan
        lambda F, x, t, w: F.cross_entropy(x[:0], t[:0], w, reduction="sum"),
        lambda F, x, t, w: F.cross_entropy(x[:, :0], t),  # no classes
        lambda F, x, t, w: F.cross_entropy(x.t().contiguous().t(), t),  # a column-major input
        lambda F, x, t, w: F.cross_entropy(x, t.flip(0)),  # a negatively strided target
        lambda F, x, t, w: F.cross_entropy(x, t, nn_weight(w)),  # a Parameter weight
    ],
)
def test_fast_path_edges(call):
    rng = np.random.default_rng(3)
    xa, ta, wa = rng.standard_normal((6, 4)), rng.integers(0, 4, 6), rng.random(4)

    def fn(m):
        x = m.tensor(xa, dtype=m.float32, requires_grad=True)
        w = m.tensor(wa, dtype=m.float32)
        return call(m.nn.functional, x, m.tensor(ta), w), [x]

    _outcome(fn)


def nn_weight(w):
    lib = torch if isinstance(w, torch.Tensor) else ember
    return lib.nn.Parameter(w, requires_grad=False)


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("module", ["CrossEntropyLoss", "NLLLoss"])
def test_class_loss_modules(module, reduction):
    rng = np.random.default_rng(5)
    xa, ta, wa = rng.standard_normal((7, 5)), rng.integers(0, 5, 7), rng.random(5) + 0.5
    for weighted in (False, True):

        def fn(m, weighted=weighted):
            x = m.tensor(xa, requires_grad=True)
            w = m.tensor(wa) if weighted else None
            crit = getattr(m.nn, module)(weight=w, reduction=reduction)
            inp = x if module == "CrossEntropyLoss" else x.log_softmax(1)
            return crit(inp, m.tensor(ta)), [x]

        _outcome(fn)


def test_ce_double_backward():
    """create_graph through the fast nll node: the second derivative as torch's."""
    rng = np.random.default_rng(9)
    xa, ta, wa = rng.standard_normal((5, 4)), rng.integers(0, 4, 5), rng.random(4) + 0.5
    for weighted in (False, True):
        for reduction in _RED:

            def fn(m, weighted=weighted, reduction=reduction):
                x = m.tensor(xa, requires_grad=True)
                w = m.tensor(wa) if weighted else None
                loss = m.nn.functional.cross_entropy(x, m.tensor(ta), w, reduction=reduction)
                up = m.linspace(0.5, 1.5, loss.numel(), dtype=m.float64).reshape(loss.shape)
                (g,) = m.autograd.grad(loss, x, up, create_graph=True)
                return (g * g.cos()).sum(), [x]

            _outcome(fn)


def test_class_gradcheck():
    x = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0, 3, 1, 1, 2])
    w = ember.rand(4, dtype=ember.float64) + 0.5
    F = ember.nn.functional
    for red in _RED:
        for fn in (
            lambda a, red=red: F.cross_entropy(a, t, reduction=red),
            lambda a, red=red: F.cross_entropy(a, t, w, reduction=red),
            lambda a, red=red: F.nll_loss(a, t, reduction=red),
            lambda a: F.log_softmax(a, 0),
        ):
            assert ember.autograd.gradcheck(fn, (x,))
            assert ember.autograd.gradgradcheck(fn, (x,))


# ------------------------------------------------------------------ log_softmax backward
@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_log_softmax_backward(dtype, dim):
    rng = np.random.default_rng(11)
    xa, ga = rng.standard_normal((6, 5)) * 3, rng.standard_normal((6, 5))

    def fn(m):
        x = m.tensor(xa, dtype=getattr(m, dtype), requires_grad=True)
        return m.nn.functional.log_softmax(x, dim), [x]

    _outcome(fn, tol=_tol(dtype))

    def expanded(m):  # an upstream gradient with zero strides, and one of -inf logits
        x = m.tensor(xa, dtype=getattr(m, dtype), requires_grad=True)
        y = x.masked_fill(m.tensor(xa > 2), float("-inf")).log_softmax(dim)
        (g,) = m.autograd.grad(y, x, m.tensor(ga[:1], dtype=getattr(m, dtype)).expand(6, 5))
        return g, []

    (_, t), (_, e) = _run(torch, expanded), _run(ember, expanded)
    _same(e[0], t[0], *_tol(dtype), "grad")


# ------------------------------------------------------------------ mse / BCE with logits
_ELEMENTWISE = {
    "mse": lambda F, x, y, r: F.mse_loss(x, y, reduction=r),
    "bce_logits": lambda F, x, y, r: F.binary_cross_entropy_with_logits(x, y, reduction=r),
    "bce_logits_weight": lambda F, x, y, r: F.binary_cross_entropy_with_logits(
        x, y, y.detach() + 0.5, reduction=r
    ),
    "bce_logits_pos_weight": lambda F, x, y, r: F.binary_cross_entropy_with_logits(
        x, y, reduction=r, pos_weight=y.detach()[0] + 1
    ),
}


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("grads", ["input", "both", "target"])
@pytest.mark.parametrize(
    "dtypes",
    ["float32", "float64", "float16", "bfloat16", "float32/float64", "float64/float32"],
)
@pytest.mark.parametrize("shapes", [((5, 3), (5, 3)), ((0, 3), (0, 3)), ((), ()), ((2, 3), (3,))])
@pytest.mark.parametrize("loss", list(_ELEMENTWISE))
def test_elementwise_losses(loss, shapes, dtypes, grads, reduction):
    rng = np.random.default_rng(13)
    xs, ys = shapes
    xa, ya = rng.standard_normal(xs) * 2, rng.random(ys)
    dx, dy = (dtypes.split("/") * 2)[:2]

    def fn(m):
        x = m.tensor(xa, dtype=getattr(m, dx), requires_grad=grads != "target")
        y = m.tensor(ya, dtype=getattr(m, dy), requires_grad=grads != "input")
        return _ELEMENTWISE[loss](m.nn.functional, x, y, reduction), [
            t for t in (x, y) if t.requires_grad
        ]

    _outcome(fn, tol=_tol(dx) if dx == dy else _tol("float16"))


@pytest.mark.parametrize("reduction", _RED)
@pytest.mark.parametrize("loss", ["mse", "bce_logits"])
def test_elementwise_graph_and_saved_target(loss, reduction):
    """One node straight onto the inputs, as torch's, which saves the target: changing it in
    place before backward is torch's error."""

    def nodes(m):
        x, y = m.randn(4, 3, requires_grad=True), m.rand(4, 3, requires_grad=True)
        out = _ELEMENTWISE[loss](m.nn.functional, x, y, reduction)
        return [out.grad_fn.name()] + [n.name() for n, _ in out.grad_fn.next_functions]

    assert nodes(ember) == nodes(torch)

    def changed(m):
        x, y = m.randn(4, 3, requires_grad=True), m.rand(4, 3)
        out = _ELEMENTWISE[loss](m.nn.functional, x, y, reduction)
        y.add_(1)
        out.sum().backward()

    same_error(changed, RuntimeError)


@pytest.mark.parametrize("module", ["MSELoss", "BCEWithLogitsLoss"])
def test_elementwise_modules(module):
    rng = np.random.default_rng(17)
    xa, ya = rng.standard_normal((6, 2)), rng.random((6, 2))
    for reduction in _RED:

        def fn(m, reduction=reduction):
            x = m.tensor(xa, dtype=m.float32, requires_grad=True)
            return getattr(m.nn, module)(reduction=reduction)(x, m.tensor(ya, dtype=m.float32)), [x]

        _outcome(fn)


def test_elementwise_special_values():
    xa = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30, 3.0])
    ya = np.array([1.0, np.inf, 0.5, 0.0, -0.0, 1.0, 0.0, 3.0])
    for loss in ("mse", "bce_logits"):
        for reduction in _RED:

            def fn(m, loss=loss, reduction=reduction):
                x = m.tensor(xa, dtype=m.float32, requires_grad=True)
                y = m.tensor(ya, dtype=m.float32, requires_grad=True)
                return _ELEMENTWISE[loss](m.nn.functional, x, y, reduction), [x, y]

            _outcome(fn)


def test_elementwise_double_backward_and_gradcheck():
    rng = np.random.default_rng(19)
    xa, ya = rng.standard_normal((4, 3)), rng.random((4, 3))
    for loss in ("mse", "bce_logits"):
        for reduction in _RED:

            def fn(m, loss=loss, reduction=reduction):
                x = m.tensor(xa, requires_grad=True)
                y = m.tensor(ya, requires_grad=True)
                out = _ELEMENTWISE[loss](m.nn.functional, x, y, reduction)
                up = m.linspace(0.5, 1.5, out.numel(), dtype=m.float64).reshape(out.shape)
                gx, gy = m.autograd.grad(out, (x, y), up, create_graph=True)
                return (gx * gx.sin()).sum() + (gy * gy).sum() * 0.5, [x, y]

            _outcome(fn)
            x = ember.tensor(xa, requires_grad=True)
            y = ember.tensor(ya, requires_grad=True)

            def f(a, b, loss=loss, reduction=reduction):
                return _ELEMENTWISE[loss](ember.nn.functional, a, b, reduction)

            assert ember.autograd.gradcheck(f, (x, y))
            assert ember.autograd.gradgradcheck(f, (x, y))


@pytest.mark.parametrize("loss", ["mse", "bce_logits"])
def test_elementwise_saved_tensors(loss):
    """The one node saves the input and the target, as torch's (a saved-tensors hook sees them)."""

    def packed(m):
        seen = []
        x, y = m.randn(4, 3, requires_grad=True), m.rand(4, 3)
        with m.autograd.graph.saved_tensors_hooks(lambda a: seen.append(a) or a, lambda a: a):
            _ELEMENTWISE[loss](m.nn.functional, x, y, "mean")
        return [(tuple(a.shape), a is x, a is y) for a in seen]

    assert packed(ember) == packed(torch)
