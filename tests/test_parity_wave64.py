"""Parity regressions found by the sixty-fourth wave, false errors torch does not raise: products
that kept an operand no computed gradient reads (``x @ w`` with only ``x`` requiring grad kept
``w``, so an optimizer-style ``w.mul_(...)`` before backward was refused as a changed saved tensor;
likewise mm, bmm, every rank case of matmul that runs one product, mv, dot, vdot, inner, outer,
F.linear's frozen-input and frozen-weight cases, two-operand einsum, tensordot and cross; the
right operand's own gradient reads only its layout), ``grad_fn._saved_<name>`` under torch's
names for matmul (``tensor``/``vec``/``mat2``), outer and einsum, and in-place ops on views of an
expanded tensor made through ``unsqueeze``, ``diagonal`` or an expand of a non-contiguous tensor
(``x.unsqueeze(0)[0, 0].add_(1)``; numpy's as_strided built those arrays so that no view of them
could be made writable again, and they were refused as overlapping writes where torch writes).
kron is now one product node as torch's (``UnsafeViewBackward0``, was ``ViewBackward0``)."""

from __future__ import annotations

import itertools

import ember
import ember.nn.functional as EF
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import same_grads_or_error as _both
from harness import saved_flags
from harness import upstream as _up

TF = torch.nn.functional

LIBS = [torch, ember]


def _F(T):
    return TF if T is torch else EF


def _r(T, shape, seed, rg=False):
    if shape and shape[0] == "i":  # an index tensor (embedding)
        return T.tensor(np.random.RandomState(seed).randint(0, 5, size=shape[1]))
    a = np.random.RandomState(seed).rand(*shape) + 0.5  # float64, away from zero
    return T.tensor(a, requires_grad=rg)


# ---------------------------------------------------------------------- what products save
_PRODUCTS = {
    "mm": ([(2, 3), (3, 4)], lambda T, a, b: T.mm(a, b)),
    "mm_t": ([(2, 3), (4, 3)], lambda T, a, b: T.mm(a, b.t())),
    "bmm": ([(2, 2, 3), (2, 3, 4)], lambda T, a, b: T.bmm(a, b)),
    "matmul_1_1": ([(3,), (3,)], lambda T, a, b: a @ b),
    "matmul_2_1": ([(2, 3), (3,)], lambda T, a, b: a @ b),
    "matmul_1_2": ([(3,), (3, 4)], lambda T, a, b: a @ b),
    "matmul_2_2": ([(2, 3), (3, 4)], lambda T, a, b: a @ b),
    "matmul_3_1": ([(2, 2, 3), (3,)], lambda T, a, b: a @ b),
    "matmul_3_2": ([(2, 2, 3), (3, 4)], lambda T, a, b: a @ b),
    "matmul_3_3": ([(2, 2, 3), (2, 3, 4)], lambda T, a, b: a @ b),
    "mv": ([(2, 3), (3,)], lambda T, a, b: T.mv(a, b)),
    "dot": ([(3,), (3,)], lambda T, a, b: T.dot(a, b)),
    "vdot": ([(3,), (3,)], lambda T, a, b: T.vdot(a, b)),
    "inner_1": ([(3,), (3,)], lambda T, a, b: T.inner(a, b)),
    "inner_2": ([(2, 3), (4, 3)], lambda T, a, b: T.inner(a, b)),
    "outer": ([(2,), (3,)], lambda T, a, b: T.outer(a, b)),
    "linear": ([(2, 3), (4, 3)], lambda T, a, b: _F(T).linear(a, b)),
    "linear_3d": ([(2, 2, 3), (4, 3)], lambda T, a, b: _F(T).linear(a, b)),
    "linear_bias": ([(2, 3), (4, 3), (4,)], lambda T, a, b, c: _F(T).linear(a, b, c)),
    "linear_bias_1d": ([(3,), (4, 3), (4,)], lambda T, a, b, c: _F(T).linear(a, b, c)),
    "linear_bias_3d": ([(2, 2, 3), (4, 3), (4,)], lambda T, a, b, c: _F(T).linear(a, b, c)),
    "einsum_mm": ([(2, 3), (3, 4)], lambda T, a, b: T.einsum("ij,jk->ik", a, b)),
    "einsum_bmm": ([(2, 2, 3), (2, 3, 4)], lambda T, a, b: T.einsum("bij,bjk->bik", a, b)),
    "einsum_mul": ([(3,), (3,)], lambda T, a, b: T.einsum("i,i->i", a, b)),
    "einsum_outer": ([(2,), (3,)], lambda T, a, b: T.einsum("i,j->ij", a, b)),
    "tensordot_2": ([(2, 3, 4), (3, 4, 2)], lambda T, a, b: T.tensordot(a, b, 2)),
    "tensordot_1": ([(2, 3), (3, 4)], lambda T, a, b: T.tensordot(a, b, 1)),
    "mul": ([(2, 3), (3,)], lambda T, a, b: a * b),
    "div": ([(2, 3), (2, 3)], lambda T, a, b: a / b),
    "conv1d": ([(1, 2, 5), (3, 2, 2), (3,)], lambda T, a, b, c: _F(T).conv1d(a, b, c)),
    "conv2d": ([(1, 2, 4, 4), (3, 2, 2, 2)], lambda T, a, b: _F(T).conv2d(a, b)),
    "embedding": ([("i", (2, 3)), (6, 4)], lambda T, a, b: _F(T).embedding(a, b)),
    "cross": ([(2, 3), (2, 3)], lambda T, a, b: T.cross(a, b, dim=1)),
    "linalg_cross": ([(2, 3), (1, 3)], lambda T, a, b: T.linalg.cross(a, b)),
}


def _needs(name):
    shapes = _PRODUCTS[name][0]
    diff = [s[0] != "i" for s in shapes]
    for rgs in itertools.product([False, True], repeat=len(shapes)):
        if any(rgs) and all(d or not r for d, r in zip(diff, rgs)):
            yield rgs


_CASES = [
    (name, rgs, ch)
    for name in _PRODUCTS
    for rgs in _needs(name)
    for ch in range(len(_PRODUCTS[name][0]))
]


@pytest.mark.parametrize(("name", "rgs", "changed"), _CASES)
def test_products_save_only_what_a_gradient_reads(name, rgs, changed):
    shapes, fn = _PRODUCTS[name]

    def f(T):
        ts = [_r(T, s, i, r) for i, (s, r) in enumerate(zip(shapes, rgs))]
        y = fn(T, *ts)
        with T.no_grad():
            if ts[changed].is_floating_point():
                ts[changed].mul_(2)  # an optimizer-style update of an operand before backward
            else:
                ts[changed].add_(1)
        y.backward(_up(T, y))
        return [t.grad for t in ts]

    _both(f)


@pytest.mark.parametrize("name", ["mm", "bmm", "matmul_3_3", "mv", "dot", "cross", "einsum_mm"])
def test_products_still_refuse_a_changed_operand_a_gradient_reads(name):
    shapes, fn = _PRODUCTS[name]

    def f(T):
        a, b = (_r(T, s, i, rg=i == 0) for i, s in enumerate(shapes))
        y = fn(T, a, b)
        b.add_(1)  # a's gradient reads b
        y.backward(_up(T, y))
        return [a.grad]

    assert _both(f).startswith("one of the variables needed for gradient computation")


_SAVED = ["mm", "bmm", "matmul_1_1", "matmul_2_1", "matmul_2_2", "mv", "dot", "vdot"]
_SAVED += ["outer", "linear", "einsum_mul", "einsum_outer", "cross", "mul", "div", "conv2d"]


@pytest.mark.parametrize("rgs", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("name", _SAVED)
def test_products_saved_attributes(name, rgs):
    # grad_fn._saved_<input> under torch's names: None where torch keeps nothing
    shapes, fn = _PRODUCTS[name]
    ys = [fn(T, *(_r(T, s, i, r) for i, (s, r) in enumerate(zip(shapes, rgs)))) for T in LIBS]
    want = saved_flags(ys[0].grad_fn)
    assert want
    assert ys[1].grad_fn.name() == ys[0].grad_fn.name()
    got = {a: getattr(ys[1].grad_fn, a) is None for a in want}
    assert got == want


@pytest.mark.parametrize("bias", [False, True])
def test_linear_weight_gradient_keeps_its_layout(bias):
    # only the weight needs a gradient: of the weight only its layout is kept, and its
    # gradient comes out row-major like it (torch's layout contract)
    grads = []
    for T in LIBS:
        w = _r(T, (4, 3), 0, rg=True)
        x = _r(T, (2, 3), 1)
        y = _F(T).linear(x, w, _r(T, (4,), 2) if bias else None)
        y.backward(_up(T, y))
        grads.append(w.grad)
    np.testing.assert_allclose(grads[1].detach().numpy(), grads[0].detach().numpy(), rtol=1e-12)
    assert grads[1].stride() == grads[0].stride()


def test_linear_frozen_input_change_still_refused():
    def f(T):
        w = _r(T, (4, 3), 0, rg=True)
        x = _r(T, (2, 3), 1)
        y = _F(T).linear(x, w)
        x.mul_(2)  # the weight's gradient reads the input
        y.backward(_up(T, y))
        return [w.grad]

    assert _both(f).startswith("one of the variables needed for gradient computation")


@pytest.mark.parametrize("name", ["mm", "bmm", "matmul_1_2", "matmul_3_2", "mv", "dot", "vdot"])
def test_products_gradcheck(name):
    shapes, fn = _PRODUCTS[name]
    ins = [_r(ember, s, i, rg=True) for i, s in enumerate(shapes)]
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), ins)
    assert ember.autograd.gradgradcheck(lambda *a: fn(ember, *a), ins)


@pytest.mark.parametrize("name", ["outer", "einsum_mm", "einsum_outer", "cross", "tensordot_1"])
def test_products_gradcheck_more(name):
    shapes, fn = _PRODUCTS[name]
    ins = [_r(ember, s, i, rg=True) for i, s in enumerate(shapes)]
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), ins)
    assert ember.autograd.gradgradcheck(lambda *a: fn(ember, *a), ins)


@pytest.mark.parametrize(
    ("sa", "sb"), [((2, 2), (2, 3)), ((3,), (2, 2)), ((), (3,)), ((2, 1, 3), (2, 2))]
)
@pytest.mark.parametrize("rgs", [(True, False), (False, True), (True, True)])
def test_kron_one_node_and_gradients(sa, sb, rgs):
    # torch's kron is one product node (UnsafeViewBackward0), not views around a multiply
    names = []

    def f(T):
        a, b = _r(T, sa, 0, rgs[0]), _r(T, sb, 1, rgs[1])
        y = T.kron(a, b)
        names.append(y.grad_fn.name())
        y.backward(_up(T, y))
        return [y, a.grad, b.grad]

    _both(f)
    assert names[0] == names[1]


def test_kron_gradcheck_and_mixed_dtypes():
    a, b = _r(ember, (2, 3), 0, True), _r(ember, (3, 2), 1, True)
    assert ember.autograd.gradcheck(ember.kron, (a, b))
    assert ember.autograd.gradgradcheck(ember.kron, (a, b))
    for T in LIBS:
        r = T.kron(T.tensor([1, 2]), T.tensor([1.5]))
        assert r.dtype == T.float32 and r.tolist() == [1.5, 3.0]
        assert T.kron(T.tensor([True, False]), T.tensor([True])).tolist() == [True, False]


# ---------------------------------------------------------------------- views of expanded
def _expanded_cases():
    def unsqueeze_row(T):
        x = T.arange(3.0).expand(2, 3)
        x.unsqueeze(0)[0, 0].add_(1)
        return [x]

    def unsqueeze_element(T):
        x = T.arange(3.0).expand(2, 3)
        x.unsqueeze(0)[0, 1, 2].add_(1)
        return [x]

    def unsqueeze_middle(T):
        x = T.arange(3.0).expand(2, 3)
        x.unsqueeze(1)[1, 0].mul_(2)
        return [x]

    def unsqueeze_last(T):
        x = T.arange(3.0).expand(2, 3).unsqueeze(-1)
        x[0].add_(1)
        return [x]

    def unsqueeze_copy(T):
        x = T.arange(3.0).expand(2, 3)
        x.unsqueeze(0)[0, 1].copy_(T.tensor([7.0, 8, 9]))
        return [x]

    def expand_of_strided(T):
        b = T.arange(6.0).reshape(3, 2)[:, 0]
        b.expand(2, 3)[1].add_(1)
        return [b]

    def expand_of_strided_element(T):
        b = T.arange(6.0).reshape(3, 2)[:, 0]
        x = b.expand(2, 3)
        x[1, 2] += 5
        return [b]

    def expand_of_expanded(T):
        x = T.arange(3.0).expand(2, 3).unsqueeze(0).expand(4, 2, 3)
        x[0, 0].add_(1)
        return [x]

    def diagonal(T):
        x = T.arange(3.0).expand(3, 3)
        x.diagonal().add_(1)
        return [x]

    def unsqueeze_diagonal(T):
        x = T.arange(3.0).expand(3, 3)
        x.unsqueeze(0).diagonal(0, 1, 2).mul_(2)
        return [x]

    def unsqueeze_refused(T):
        x = T.arange(3.0).expand(2, 3)
        x.unsqueeze(0)[0].add_(1)
        return [x]

    def expand_of_strided_refused(T):
        b = T.arange(6.0).reshape(3, 2)[:, 0]
        b.expand(2, 3)[:, 1].add_(1)
        return [b]

    def diagonal_refused(T):
        x = T.arange(3.0).expand(2, 3, 3)
        x.diagonal(0, 1, 2).add_(1)
        return [x]

    return [v for k, v in locals().items()]


@pytest.mark.parametrize("case", _expanded_cases(), ids=lambda f: f.__name__)
def test_inplace_on_views_of_expanded(case):
    _both(case)


@pytest.mark.parametrize("k", range(3))
def test_inplace_on_views_of_expanded_gradients(k):
    def f(T):
        b = T.tensor([[1.0, 2], [3, 4], [5, 6]], dtype=T.float64, requires_grad=True)
        if k == 0:
            x = (b * 1)[:, 0].expand(2, 3)
            x[0].mul_(3)
        elif k == 1:
            x = (b[:, 1] * 1).expand(2, 3)
            x.unsqueeze(0)[0, 1].mul_(b[:, 0].detach())
        else:
            x = (b * 1)[:, 1].expand(2, 3)
            x.unsqueeze(-1)[1, 2].pow_(2)
        (x * T.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=T.float64)).sum().backward()
        return [x.detach(), b.grad]

    _both(f)


def test_unsqueeze_of_expanded_keeps_strides_and_storage():
    got = []
    for T in LIBS:
        x = T.arange(3.0).expand(2, 3)
        u = x.unsqueeze(1)
        v = T.arange(6.0).reshape(3, 2)[:, 0].expand(2, 3)
        got.append((u.stride(), u.storage_offset(), v.stride(), v.storage_offset()))
        u[1, 0].add_(1)
        assert u.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert got[0] == got[1]


@pytest.mark.parametrize(
    "f",
    [
        lambda T, a, b: T.div(a, b, rounding_mode="trunc"),
        lambda T, a, b: T.div(a, 2.0, rounding_mode="floor"),
        lambda T, a, b: T.div(b, a, rounding_mode="floor"),
        lambda T, a, b: a / b,
        lambda T, a, b: 2 / a,
    ],
)
def test_div_node_names(f):
    # a rounding division is torch's div.Tensor_mode overload: DivBackward2
    got = []
    for T in LIBS:
        a, b = _r(T, (3,), 0, True), _r(T, (3,), 1)
        got.append(f(T, a, b).grad_fn.name())
    assert got[0] == got[1]
