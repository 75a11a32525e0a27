"""Inference tensors (is_inference, their autograd and in-place errors), grad() with
is_grads_batched, and the grad-API errors torch raises: each checked against torch."""

from __future__ import annotations

import ember
import pytest
from harness import assert_same, needs_torch, raises_like_torch, torch


# ---------------------------------------------------------------------- inference mode
def _flags(m):
    n = m.ones(3)
    with m.inference_mode():
        a = m.ones(2)
        v = a[:1]
        made = m.tensor([1.0, 2.0])
        nv, nm = n[:2], n * 2
        parts = a.split(1)
        n.add_(1)  # a normal tensor stays normal
        with m.inference_mode(False):
            off = m.ones(2)
            grad_on = m.is_grad_enabled()
    tensors = [a, v, made, nv, nm, parts[0], n, a.detach(), a.clone(), off]
    return [t.is_inference() for t in tensors] + [grad_on]


@pytest.mark.parametrize("decorator", [False, True])
def test_is_inference_like_torch(decorator):
    if not decorator:
        e, t = _flags(ember), _flags(torch) if torch is not None else None
        if t is not None:
            assert e == t
        assert e[:3] == [True, True, True]
        return

    def run(m):
        @m.inference_mode()
        def f(x):
            return x * 2

        return f(m.ones(2)).is_inference()

    assert run(ember) is True
    if torch is not None:
        assert run(torch) is True


def _made_in_inference(m):
    with m.inference_mode():
        return m.ones(2)


SAVE = "Inference tensors cannot be saved for backward."
INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed."


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _made_in_inference(m) * m.ones(2, requires_grad=True),
        lambda m: _made_in_inference(m)[:1] * m.ones(1, requires_grad=True),
    ],
)
def test_inference_tensor_saved_for_backward_errors(fn):
    raises_like_torch(fn, RuntimeError, SAVE)


@needs_torch
def test_inference_tensor_in_autograd_without_saving_works():
    def fn(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        (_made_in_inference(m) + w).sum().backward()
        return w.grad

    assert_same(fn(ember), fn(torch))


def _inplace(op, no_grad):
    def fn(m):
        a = _made_in_inference(m)
        if no_grad:
            with m.no_grad():
                op(m, a)
        else:
            op(m, a)

    return fn


@pytest.mark.parametrize("no_grad", [False, True])
@pytest.mark.parametrize(
    "op",
    [lambda m, a: a.add_(1), lambda m, a: a.mul_(m.ones(2)), lambda m, a: a[:1].add_(1)],
)
def test_inplace_on_inference_tensor_outside_inference_mode_errors(op, no_grad):
    raises_like_torch(_inplace(op, no_grad), RuntimeError, INPLACE)


def test_inplace_on_inference_tensor_inside_inference_mode_works():
    for m in (ember, torch) if torch is not None else (ember,):
        with m.inference_mode():
            a = m.ones(2)
            a.add_(1)
        assert a.tolist() == [2.0, 2.0]


def test_inference_tensor_requires_grad_and_version_errors():
    raises_like_torch(
        lambda m: _made_in_inference(m).requires_grad_(),
        RuntimeError,
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
    )
    raises_like_torch(
        lambda m: _made_in_inference(m)._version,
        RuntimeError,
        "Inference tensors do not track version counter.",
    )


# ---------------------------------------------------------------------- is_grads_batched
def _batched(m, **kw):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    u = m.tensor([1.0, 1.0], requires_grad=True)
    y = x**2
    z = (x**3).sum()
    out = []
    out += m.autograd.grad(y, x, m.eye(3), retain_graph=True, is_grads_batched=True)
    out += m.autograd.grad(y, x, m.eye(3)[:2], retain_graph=True, is_grads_batched=True)
    out += m.autograd.grad(z, x, m.tensor([1.0, 2.0]), retain_graph=True, is_grads_batched=True)
    out += m.autograd.grad(
        [y, z],
        [x, u],
        [m.eye(3), m.tensor([1.0, 2.0, 3.0])],
        retain_graph=True,
        is_grads_batched=True,
        materialize_grads=True,
    )
    (g,) = m.autograd.grad(y, x, m.eye(3), is_grads_batched=True, create_graph=True)
    g.sum().backward()
    return [*out, g, x.grad]


@needs_torch
def test_grad_is_grads_batched_like_torch():
    e, t = _batched(ember), _batched(torch)
    assert len(e) == len(t)
    for k, (a, b) in enumerate(zip(e, t)):
        assert_same(a, b.detach(), what=f"result {k}")


def _batched_call(go):
    def fn(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x**2
        if isinstance(go, list):
            m.autograd.grad([y, y.sum()], x, [m.eye(3), m.ones(2)], is_grads_batched=True)
        else:
            m.autograd.grad(y, x, m.ones(*go), is_grads_batched=True)

    return fn


@pytest.mark.parametrize(
    "go, exc, msg",
    [
        (
            (3, 4),
            RuntimeError,
            (
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                "detected: grad_output[0] has a shape of "
            ),
        ),
        ((3,), RuntimeError, "output[0] has a shape of "),
        ((0, 3), IndexError, "index 0 is out of bounds for dimension 0 with size 0"),
        (
            [],
            ValueError,
            (
                "vmap: Expected all tensors to have the same size in the mapped dimension, got "
                "sizes [3, 2] for the mapped dimension"
            ),
        ),
    ],
)
def test_grad_is_grads_batched_errors_like_torch(go, exc, msg):
    raises_like_torch(_batched_call(go), exc, msg)


# ---------------------------------------------------------------------- missing errors
def test_set_grad_enabled_takes_only_a_bool():
    raises_like_torch(
        lambda m: m.set_grad_enabled(1),
        TypeError,
        "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not int",
    )
    assert ember.is_grad_enabled()


def test_grad_with_no_inputs_errors():
    raises_like_torch(
        lambda m: m.autograd.grad((m.ones(2, requires_grad=True) * 2).sum(), []),
        RuntimeError,
        "`inputs` argument to `grad()` cannot be empty.",
    )


def test_implicit_backward_of_complex_scalar_errors():
    raises_like_torch(
        lambda m: (m.ones(2, dtype=m.complex64, requires_grad=True) * 2).sum().backward(),
        RuntimeError,
        "grad can be implicitly created only for real scalar outputs but got torch.complex64",
    )


def test_requires_grad_false_on_non_leaf_errors():
    raises_like_torch(
        lambda m: (m.ones(2, requires_grad=True) * 2).requires_grad_(False),
        RuntimeError,
        "you can only change requires_grad flags of leaf variables.",
    )


def _inference_ones(m):
    with m.inference_mode():
        return m.ones(3)


@pytest.mark.parametrize(
    "write",
    [
        lambda x: x.zero_(),
        lambda x: x.fill_(2.0),
        lambda x: x.__setitem__(0, 5.0),
        lambda x: x.masked_fill_(x > 0, 1.0),
    ],
)
def test_direct_writes_to_inference_tensors_raise(write):
    # these in-place writes bypass the registry's apply_inplace: each checks on its own
    raises_like_torch(
        lambda m: write(_inference_ones(m)),
        RuntimeError,
        "Inplace update to inference tensor outside InferenceMode is not allowed",
    )
