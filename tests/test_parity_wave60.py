"""Parity regressions found by the sixtieth wave, false errors torch does not raise: fused ops
that kept inputs no computed gradient reads (``p.addcdiv(buf, d)`` with only ``p`` requiring
grad saved ``buf``, so an optimizer-style ``buf.mul_(...)`` before backward was refused as a
changed saved tensor; likewise addcmul, lerp's operands, and the addmm/addmv/baddbmm/addbmm/addr
family, which also kept ``input`` and, for addmm, ``mat2`` when only mat2 needed a gradient),
``x[i] = v`` into an expanded tensor under grad mode with a value or tensor that requires grad
(numpy's read-only ``ValueError``; torch writes, and the gradient of every element sharing a
written position is the value's), and in-place ops and ``out=`` on a view of an expanded tensor
whose own elements are distinct (``x.expand(2, 3)[0].add_(1)``, ``x[0] -= 1``, ``narrow``;
refused as an overlapping write where torch writes)."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import same_grads_or_error as _both
from harness import upstream as _up

LIBS = [torch, ember]


def _r(T, *shape, rg=False, seed=0):
    a = np.random.RandomState(seed).rand(*shape) + 0.5  # float64, away from zero
    return T.tensor(a, requires_grad=rg)


# ---------------------------------------------------------------------- saved inputs
_TERNARY = {
    "addcmul": [(3,), (3,), (3,)],
    "addcdiv": [(3,), (3,), (3,)],
    "lerp": [(3,), (3,), (3,)],
    "addmm": [(2, 4), (2, 3), (3, 4)],
    "addmv": [(2,), (2, 3), (3,)],
    "baddbmm": [(2, 2, 4), (2, 2, 3), (2, 3, 4)],
    "addbmm": [(2, 4), (2, 2, 3), (2, 3, 4)],
    "addr": [(2, 3), (2,), (3,)],
}
_NEEDS = [(True, False, False), (False, True, False), (False, False, True), (False, True, True)]


def _ternary_case(name, rgs, changed, inplace):
    def f(T):
        ts = [_r(T, *s, rg=r, seed=i) for i, (s, r) in enumerate(zip(_TERNARY[name], rgs))]
        args = [ts[0].clone() if inplace else ts[0], *ts[1:]]
        y = getattr(args[0], name + ("_" if inplace else ""))(*args[1:])
        with T.no_grad():
            ts[changed].mul_(2)  # an optimizer-style update of an operand before backward
        y.backward(_up(T, y))
        return [t.grad for t in ts]

    return f


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("changed", [0, 1, 2])
@pytest.mark.parametrize("rgs", _NEEDS)
@pytest.mark.parametrize("name", sorted(_TERNARY))
def test_fused_ops_save_only_what_a_gradient_reads(name, rgs, changed, inplace):
    _both(_ternary_case(name, rgs, changed, inplace))


def test_addcdiv_optimizer_step_then_backward():
    # the case that hit users: p.addcdiv(buf, denom) with only p requiring grad, then buf changes
    def f(T):
        p = _r(T, 4, rg=True)
        buf, denom = _r(T, 4, seed=1), _r(T, 4, seed=2)
        y = p.addcdiv(buf, denom, value=-0.1)
        buf.mul_(0.9)
        y.backward(_up(T, y))
        return [p.grad]

    assert _both(f)[0] is not None


@pytest.mark.parametrize("name", ["addcdiv", "lerp"])
def test_fused_ops_still_refuse_a_changed_saved_input(name):
    # torch keeps addcdiv's tensor2 and lerp's tensor weight whatever needs a gradient
    msg = _both(_ternary_case(name, (True, False, False), 2, False))
    assert msg.startswith("one of the variables needed for gradient computation")


def test_addmm_mat2_gradient_keeps_its_layout():
    # mat2's own gradient reads only its layout (a transposed weight gets a row-major gradient)
    w = ember.tensor(np.random.RandomState(0).rand(4, 3), requires_grad=True)
    m1 = ember.tensor(np.random.RandomState(1).rand(2, 3))
    y = ember.addmm(ember.zeros(2, 4, dtype=ember.float64), m1, w.t())
    y.backward(ember.arange(8.0, dtype=ember.float64).reshape(2, 4))
    tw = torch.tensor(np.random.RandomState(0).rand(4, 3), requires_grad=True)
    tm1 = torch.tensor(np.random.RandomState(1).rand(2, 3))
    ty = torch.addmm(torch.zeros(2, 4, dtype=torch.float64), tm1, tw.t())
    ty.backward(torch.arange(8.0, dtype=torch.float64).reshape(2, 4))
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())
    assert w.grad.stride() == tw.grad.stride()


# ---------------------------------------------------------------------- setitem into expanded
def _w(T):
    return T.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=T.float64)


def _setitem_cases():
    def row_value(T):
        b = T.tensor([1.0, 2, 3], dtype=T.float64, requires_grad=True)
        t = T.zeros(3, dtype=T.float64).expand(2, 3)
        t[0] = b * 2
        (t * _w(T)).sum().backward()
        return [t.detach(), b.grad]

    def elem_into_nonleaf(T):
        b = T.tensor([1.0, 2, 3], dtype=T.float64, requires_grad=True)
        t = (b * 1).expand(2, 3)
        t[0, 1] = 7.0
        (t * _w(T)).sum().backward()
        return [t.detach(), b.grad]

    def view_of_expanded(T):
        b = T.tensor([1.0, 2, 3], dtype=T.float64, requires_grad=True)
        t = T.zeros(3, dtype=T.float64).expand(2, 3)
        v = t[:, 1]
        v[0] = b[1] * 3
        (v * T.tensor([2.0, 5], dtype=T.float64)).sum().backward()
        return [t.detach(), b.grad]

    def one_element(T):
        b = T.tensor(2.0, dtype=T.float64, requires_grad=True)
        t = T.zeros(1, dtype=T.float64).expand(2)
        t[0] = b
        (t * T.tensor([3.0, 4], dtype=T.float64)).sum().backward()
        return [t.detach(), b.grad]

    def no_grad_value(T):
        t = (T.zeros(3, dtype=T.float64, requires_grad=True) * 1).expand(2, 3)
        t[1] = 5.0
        return [t.detach()]

    return [row_value, elem_into_nonleaf, view_of_expanded, one_element, no_grad_value]


@pytest.mark.parametrize("case", _setitem_cases(), ids=lambda f: f.__name__)
def test_setitem_into_expanded_under_grad(case):
    _both(case)


def test_setitem_into_expanded_overlap_still_refused():
    def f(T):
        t = T.zeros(3, dtype=T.float64).expand(2, 3)
        t[:, 0] = T.ones(2, dtype=T.float64, requires_grad=True)
        return [t]

    assert _both(f).startswith("unsupported operation: more than one element")


# ---------------------------------------------------------------------- in-place on its views
def _inplace_cases():
    def isub_element(T):
        x = T.tensor([5.0]).expand(2)
        x[0] -= 1
        return [x]

    def iadd_row(T):
        x = T.arange(3.0).expand(2, 3)
        x[0] += 1
        return [x]

    def narrow_mul(T):
        x = T.arange(3.0).expand(2, 3)
        x.narrow(0, 0, 1).mul_(2)
        return [x]

    def transposed_column(T):
        x = T.arange(3.0).expand(2, 3)
        x.t()[:, 0].add_(1)
        return [x]

    def row_div_tensor(T):
        x = T.arange(3.0).expand(2, 3)
        x[1].div_(T.tensor([1.0, 2, 4]))
        return [x]

    def row_copy(T):
        x = T.arange(3.0).expand(2, 3)
        x[1].copy_(T.tensor([7.0, 8, 9]))
        return [x]

    def out_row(T):
        x = T.arange(3.0).expand(2, 3)
        T.add(T.tensor([1.0, 2, 3]), 1, out=x[0])
        return [x]

    def column_refused(T):
        x = T.arange(3.0).expand(2, 3)
        x[:, 0].add_(1)
        return [x]

    def whole_refused(T):
        x = T.arange(3.0).expand(2, 3)
        x[:].mul_(2)
        return [x]

    return [
        isub_element,
        iadd_row,
        narrow_mul,
        transposed_column,
        row_div_tensor,
        row_copy,
        out_row,
        column_refused,
        whole_refused,
    ]


@pytest.mark.parametrize("case", _inplace_cases(), ids=lambda f: f.__name__)
def test_inplace_on_view_of_expanded(case):
    _both(case)


@pytest.mark.parametrize("k", range(4))
def test_inplace_on_view_of_expanded_gradients(k):
    def f(T):
        b = T.tensor([1.0, 2, 3], dtype=T.float64, requires_grad=True)
        x = (b * 1).expand(2, 3)
        if k == 0:
            x[0].mul_(b.detach() + 1)
        elif k == 1:
            x[1] *= 3
        elif k == 2:
            x.narrow(0, 1, 1).pow_(2)
        else:
            x[0, 1:].mul_(2)
        (x * _w(T)).sum().backward()
        return [x.detach(), b.grad]

    _both(f)


def test_inplace_on_expanded_refusal_text():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for T in LIBS:
            x = T.arange(3.0).expand(2, 3)
            with pytest.raises(RuntimeError, match="more than one element of the written-to"):
                x.add_(1)


@pytest.mark.parametrize(
    ("name", "shapes", "rgs", "attrs"),
    [
        ("addcmul", [(3,), (3,), (3,)], (True, False, False), ["tensor1", "tensor2", "value"]),
        ("addcdiv", [(3,), (3,), (3,)], (True, False, False), ["tensor1", "tensor2", "value"]),
        ("lerp", [(3,), (3,), (3,)], (True, False, False), ["self", "end", "weight"]),
        ("addmm", [(2, 4), (2, 3), (3, 4)], (True, False, False), ["mat1", "mat2", "alpha"]),
        ("addmm", [(2, 4), (2, 3), (3, 4)], (False, False, True), ["mat1", "mat2", "alpha"]),
        ("addmv", [(2,), (2, 3), (3,)], (True, False, False), ["mat", "vec"]),
        ("addr", [(2, 3), (2,), (3,)], (True, False, False), ["vec1", "vec2"]),
    ],
)
def test_fused_ops_saved_attributes(name, shapes, rgs, attrs):
    # grad_fn._saved_<input>: None where torch keeps nothing for the gradients computed
    got = []
    for T in LIBS:
        ts = [T.ones(*s, requires_grad=r) for s, r in zip(shapes, rgs)]
        fn = getattr(ts[0], name)(*ts[1:]).grad_fn
        saved = [getattr(fn, "_saved_" + a) for a in attrs]
        got.append([tuple(v.shape) if hasattr(v, "shape") else v for v in saved])
    assert got[0] == got[1]
