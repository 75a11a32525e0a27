"""Parity regressions of the ninety-fourth wave: the autograd API's argument checks and edge
behaviour fuzzed against torch (342 cases: backward / autograd.grad / hooks / .grad / grad
modes / autograd.functional / forward_ad / checkpoint / anomaly / graph hooks). It found:

* a non-tensor output given to backward / autograd.grad raising ember's own TypeError (torch:
  AssertionError "Expected output to be a torch.Tensor", checked pair by pair as zip pairs
  outputs and gradients, before the count and requires-grad checks);
* an upstream gradient on another device taken silently (torch: "invalid gradient at index
  i - expected device ... but got ...");
* ``t.grad = t`` accepted (torch: "can't assign Variable as its own grad");
* ``ember.Size`` / ``ember.int64`` in texts torch spells ``torch.Size`` / ``torch.int64``
  (autograd.functional's v-size errors, is_grads_batched's shape error, make_dual's dtypes);
* exit_dual_level with no level open, or naming another level, passing silently;
* jacobian(strict=True, create_graph=True) of a linear function not refused;
* a hook changing a gradient to a type with no legacy class named ``torch.ComplexDoubleTensor``
  (torch: ``CPUComplexDoubleType``); a post-accumulate-grad hook returning a non-tensor
  (torch: TypeError "expected Variable, but hook returned 'int'");
* backward(inputs=[3]) leaking an AttributeError and backward(inputs=GradientEdge) failing
  (torch: "all inputs have to be Tensors or GradientEdges", an edge accumulates its leaf);
* detect_anomaly / set_detect_anomaly taking non-bool arguments (torch's binding: TypeError);
* set_grad_enabled's TypeError naming ``ember.Tensor`` / ``fractions.Fraction`` (CPython's
  tp_name: a Python class by its bare name);
* inference_mode(None / 1 / a tensor) used as a mode (torch takes a non-bool for the function
  being decorated).

Left: ``t.requires_grad = True`` on an integer tensor or ``= False`` on a non-leaf is accepted
(requires_grad is a plain slot the whole library writes; a checking property would tax every
op), factories taking ``requires_grad=1``, backward's retain_graph/create_graph non-bool
TypeErrors, checkpoint_sequential's segments 0 / > len (torch's own ZeroDivision/ValueError),
make_dual(level=N), jacobian of an empty output (torch's stack error), pack hooks modifying
their input in place.
"""

from __future__ import annotations

import fractions

import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly


def _same(fn):
    (te, tr), (ee, er) = run_quietly(fn, torch), run_quietly(fn, ember)
    assert (type(ee).__name__, str(ee)) == (type(te).__name__, str(te))
    return tr, er


def _x(m, n=3, rg=True):
    return m.linspace(0.5, 2.0, n, dtype=m.float64).requires_grad_(rg)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, y: m.autograd.backward([y, 3]),
        lambda m, y: m.autograd.backward([3, y], [None]),
        lambda m, y: m.autograd.backward([y, 3], [None]),  # the count first: zip stops at y
        lambda m, y: m.autograd.backward([y, 3], [m.ones((), dtype=m.float64), None]),
        lambda m, y: m.autograd.grad([y, "a"], y),
        lambda m, y: m.autograd.grad([3], y),
    ],
)
def test_non_tensor_outputs(call):
    _same(lambda m: call(m, (_x(m) * 2).sum()))


def test_gradient_on_another_device():
    _same(lambda m: (_x(m) * 2).backward(m.ones(3, dtype=m.float64, device="meta")))


def test_grad_assigned_itself():
    def fn(m):
        x = _x(m)
        x.grad = x

    _same(fn)


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp"])
def test_functional_v_size_text(name):
    f = (lambda x: x**2) if name != "hvp" else (lambda x: (x**3).sum())
    _same(lambda m: getattr(m.autograd.functional, name)(f, _x(m), m.ones(4, dtype=m.float64)))


def test_batched_grad_shape_text():
    _same(lambda m: m.autograd.grad(_x(m) * 2, _x(m), m.ones(3), is_grads_batched=True))


@pytest.mark.parametrize("which", ["primal", "tangent"])
def test_make_dual_dtype_text(which):
    def fn(m):
        fa = m.autograd.forward_ad
        p = m.ones(3, dtype=m.int64) if which == "primal" else _x(m, rg=False)
        with fa.dual_level():
            fa.make_dual(p, m.ones(3, dtype=m.int64))

    _same(fn)


@pytest.mark.parametrize("opened, level", [(False, None), (False, 0), (True, 3), (True, -1)])
def test_exit_dual_level(opened, level):
    def fn(m):
        fa = m.autograd.forward_ad
        if not opened:
            return fa.exit_dual_level(level=level)
        fa.enter_dual_level()
        try:
            fa.exit_dual_level(level=level)
        finally:
            fa.exit_dual_level()

    _same(fn)


@pytest.mark.parametrize("two_inputs", [False, True])
def test_jacobian_strict_create_graph(two_inputs):
    def fn(m):
        if two_inputs:
            return m.autograd.functional.jacobian(
                lambda a, b: a * a + b, (_x(m), _x(m)), strict=True, create_graph=True
            )
        return m.autograd.functional.jacobian(
            lambda a: a * 2, _x(m), strict=True, create_graph=True
        )

    _same(fn)


@pytest.mark.parametrize("to", ["complex128", "complex64"])
def test_hook_changed_type_text(to):
    def fn(m):
        x = _x(m)
        z = x * 2
        z.register_hook(lambda g: g.to(getattr(m, to)))
        (z * z).sum().backward()

    _same(fn)


@pytest.mark.parametrize("ret", [3, "g"])
def test_post_accumulate_hook_return(ret):
    def fn(m):
        x = _x(m)
        x.register_post_accumulate_grad_hook(lambda p: ret)
        (x * x).sum().backward()

    _same(fn)


@pytest.mark.parametrize("bad", [[3], ["x"]])
def test_backward_inputs_not_tensors(bad):
    _same(lambda m: (_x(m) ** 2).sum().backward(inputs=[_x(m), *bad]))


@pytest.mark.parametrize("leaf", [True, False])
def test_backward_inputs_gradient_edge(leaf):
    def fn(m):
        x = _x(m)
        z = x if leaf else x * 2
        (z * z).sum().backward(inputs=m.autograd.graph.get_gradient_edge(z))
        return x.grad

    t, e = _same(fn)
    assert (t is None) == (e is None)
    if t is not None:
        assert e.tolist() == pytest.approx(t.tolist())


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.autograd.set_detect_anomaly("x"),
        lambda m: m.autograd.set_detect_anomaly(True, check_nan=1),
        lambda m: m.autograd.detect_anomaly(check_nan=None).__enter__(),
        lambda m: m.set_anomaly_enabled(1),
    ],
)
def test_anomaly_bool_args(call):
    try:
        _same(call)
        assert ember.is_anomaly_enabled() == torch.is_anomaly_enabled()
    finally:
        torch.set_anomaly_enabled(False)
        ember.set_anomaly_enabled(False)


@pytest.mark.parametrize("make", [lambda m: m.tensor(False), lambda m: fractions.Fraction(1)])
def test_set_grad_enabled_type_name(make):
    _same(lambda m: m.set_grad_enabled(make(m)))


@pytest.mark.parametrize("arg", [None, 1, 0, "x"])
def test_inference_mode_non_bool_is_decorated(arg):
    def fn(m):
        with m.inference_mode(arg):
            pass

    _same(fn)
