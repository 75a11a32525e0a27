"""A view's gradient after its base (or another view of it) changed in place: the view's grad_fn
is regenerated from the base's current history, as torch does. Each case against torch."""

from __future__ import annotations

import ember
import pytest
from harness import assert_same, needs_torch, raises_like_torch, torch


def _slice_then_base_mul(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    v = y[:2]
    y.mul_(2)
    (v**2).sum().backward()
    return [x.grad, v]


def _transpose_then_base_add(m):
    x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    v = y.t()
    y.add_(y)
    v.sum().backward()
    return [x.grad, v]


def _sibling_view_modified(m):
    x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    a, b = y[:2], y[1:]
    a.mul_(3)
    (b * m.tensor([1.0, 10.0, 100.0])).sum().backward()
    return [x.grad, b]


def _view_of_view(m):
    x = m.arange(6.0).reshape(2, 3).requires_grad_()
    y = x * 1
    v = y[1][1:]
    y.mul_(x.detach() + x)
    (v * m.tensor([1.0, 2.0])).sum().backward()
    return [x.grad, v]


def _no_grad_change_is_invisible(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    v = y[:2]
    with m.no_grad():
        y.mul_(2)
    (v**2).sum().backward()
    return [x.grad, v]


def _view_then_base_modified(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    v = y[:2]
    v.mul_(3)
    y.add_(y)
    (v * m.tensor([1.0, 5.0])).sum().backward()
    return [x.grad, v]


def _view_as_backward_root(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    v = y[1:]
    y.mul_(x.detach() + x)
    v.backward(m.tensor([1.0, 2.0]))
    return [x.grad]


def _autograd_grad_wrt_view(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    v = y[1:]
    y.mul_(2)
    return list(m.autograd.grad((v**3).sum(), [x, v]))


def _setitem_on_base(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = m.tensor([5.0], requires_grad=True)
    y = x * 1
    v = y.view(3)
    y[0] = w[0] * 2
    (v * m.tensor([1.0, 2.0, 3.0])).sum().backward()
    return [x.grad, w.grad]


def _tensor_split_output(m):
    x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x.clone()
    a = y.tensor_split(2)[1]
    y.mul_(2)
    (a * 1).sum().backward()
    return [x.grad]


def _double_backward(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    v = y[1:]
    y.mul_(2)
    (g,) = m.autograd.grad((v**2).sum(), x, create_graph=True)
    g.sum().backward()
    return [g, x.grad]


def _retain_grad_on_view(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    v = y[:2]
    y.mul_(2)
    v.retain_grad()
    (v * v).sum().backward()
    return [v.grad, x.grad]


def _chain_of_view_ops(m):
    x = m.arange(4.0).reshape(2, 2).requires_grad_()
    y = x + 0
    v = y.unsqueeze(0).permute(2, 0, 1).diagonal(dim1=1, dim2=2)
    y.mul_(x)
    (v * m.tensor([[1.0], [7.0]])).sum().backward()
    return [x.grad, v]


def _real_view_of_complex(m):
    x = m.tensor([1.0 + 1j, 2.0 - 1j], requires_grad=True)
    y = x.clone()
    v = y.real
    y.mul_(2j)
    (v * m.tensor([1.0, 3.0])).sum().backward()
    return [x.grad]


def _base_times_other_leaf(m):
    x = m.tensor([1.0, 1.0, 1.0], requires_grad=True)
    w = m.tensor([2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    v = y[::2]
    y.mul_(w)
    (v * m.tensor([1.0, 10.0])).sum().backward()
    return [x.grad, w.grad]


def _detached_view_keeps_history(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    d = y.detach().requires_grad_()
    v = d[:2]
    y.mul_(2)
    (v * 1).sum().backward()
    return [d.grad, x.grad]


CASES = [
    _slice_then_base_mul,
    _transpose_then_base_add,
    _sibling_view_modified,
    _view_of_view,
    _no_grad_change_is_invisible,
    _view_then_base_modified,
    _view_as_backward_root,
    _autograd_grad_wrt_view,
    _setitem_on_base,
    _tensor_split_output,
    _double_backward,
    _retain_grad_on_view,
    _chain_of_view_ops,
    _real_view_of_complex,
    _base_times_other_leaf,
    _detached_view_keeps_history,
]


@needs_torch
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__.strip("_"))
def test_view_gradient_after_base_changed_in_place(fn):
    e, t = fn(ember), fn(torch)
    assert len(e) == len(t)
    for k, (a, b) in enumerate(zip(e, t)):
        if b is None:
            assert a is None
        else:
            assert_same(a, b.detach(), what=f"result {k}")


def test_reading_a_view_after_base_changed_sees_new_values():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    v = y[:2]
    y.mul_(2)
    assert v.tolist() == [2.0, 4.0]
    assert (v * 1).tolist() == [2.0, 4.0]


def _split_output_after_base_changed(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    a, _ = y.split(2)
    y.mul_(2)
    return a * 1


def _unbind_output_after_base_changed(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    a = y.unbind(0)[0]
    y.mul_(2)
    a.backward()


@pytest.mark.parametrize(
    "fn, name",
    [(_split_output_after_base_changed, "Split"), (_unbind_output_after_base_changed, "Unbind")],
)
def test_multi_output_view_after_base_changed_errors_like_torch(fn, name):
    raises_like_torch(
        fn,
        RuntimeError,
        f"Output 0 of {name} is a view and its base or another view of its base has been "
        "modified inplace. This view is the output of a function that returns multiple views.",
    )
