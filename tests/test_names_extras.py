"""ember's named-tensor extensions (names spec 4.5-4.8): the reshape/view rule, named indexing
(dict indices, index tensors' names), contraction by name (dot(dim=), einsum with names) and
opt-in broadcasting by name. Names are checked against the spec; values against torch on the same
data without names.
"""

from __future__ import annotations

import re
import threading

import ember
import numpy as np
import pytest

try:
    import torch
except ImportError:  # values are then checked against numpy only
    torch = None


def _a(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def _t(*shape, names=None, seed=0, grad=False):
    return ember.tensor(_a(*shape, seed=seed), names=names, requires_grad=grad)


# ---------------------------------------------------------------------- 4.5 reshape / view
RESHAPES = [
    # (shape, names, new shape, expected names)
    ((2, 3, 4), ("A", "B", "C"), (2, 3, 4), ("A", "B", "C")),
    ((2, 3, 4), ("A", "B", "C"), (2, 12), ("A", None)),
    ((2, 3, 4), ("A", "B", "C"), (6, 4), (None, "C")),
    ((2, 3, 4), ("A", "B", "C"), (2, -1), ("A", None)),
    ((2, 3, 4), ("A", "B", "C"), (24,), (None,)),
    ((2, 3, 4), ("A", "B", "C"), (4, 3, 2), (None, None, None)),  # B is in no unchanged run
    ((2, 3, 4), ("A", "B", "C"), (2, 1, 3, 4), ("A", None, "B", "C")),
    ((2, 3, 4), ("A", "B", "C"), (2, 3, 2, 2), ("A", "B", None, None)),
    ((2, 3, 4), ("A", "B", "C"), (1, 2, 3, 4), (None, "A", "B", "C")),
    ((2, 3, 4), ("A", "B", "C"), (2, 3, 4, 1), ("A", "B", "C", None)),
    ((2, 2), ("A", "B"), (4,), (None,)),
    ((2, 2), ("A", None), (2, 1, 2), ("A", None, None)),
    ((4,), ("A",), (2, 2), (None, None)),
    ((1, 3), ("A", "B"), (3,), ("B",)),
]


@pytest.mark.parametrize("shape,names,new,expected", RESHAPES)
@pytest.mark.parametrize("how", ["reshape", "view"])
def test_reshape_view_rule(shape, names, new, expected, how):
    x = ember.tensor(_a(*shape), names=names)
    r = getattr(x, how)(*new)
    assert r.names == expected
    np.testing.assert_array_equal(r.numpy(), _a(*shape).reshape(new))


def test_reshape_argument_forms():
    x = ember.tensor(_a(2, 3, 4), names=("A", "B", "C"))
    assert x.view((2, 12)).names == ("A", None)
    assert x.view(ember.Size([2, 12])).names == ("A", None)
    assert x.reshape([6, 4]).names == (None, "C")
    assert x.reshape(shape=(2, 12)).names == ("A", None)
    assert ember.reshape(x, (2, 3, 2, 2)).names == ("A", "B", None, None)
    assert x.flatten(1).names == ("A", None)  # positional flatten: the same rule
    assert x.view(ember.int64).names == ("A", "B", "C")  # same itemsize: the shape is kept


def test_reshape_noncontiguous_and_grad():
    x = _t(3, 2, 4, names=("A", "B", "C"), grad=True)
    y = x.transpose("A", "B")  # (2, 3, 4)[B, A, C], not contiguous: reshape copies
    r = y.reshape(2, 12)
    assert r.names == ("B", None)
    r.backward(ember.ones(2, 12, names=("B", None)))
    assert x.grad.names == ("A", "B", "C")
    if torch is not None:
        tx = torch.tensor(_a(3, 2, 4))
        np.testing.assert_array_equal(r.detach().numpy(), tx.transpose(0, 1).reshape(2, 12))


# ---------------------------------------------------------------------- 4.6 indexing
X_NCH = ((2, 3, 4), ("N", "C", "H"))


@pytest.mark.parametrize(
    "index,expected",
    [
        ((0,), ("C", "H")),
        ((slice(None), 1), ("N", "H")),
        ((slice(0, 1),), ("N", "C", "H")),
        ((None,), (None, "N", "C", "H")),
        ((Ellipsis, None), ("N", "C", "H", None)),
        ((0, Ellipsis, 1), ("C",)),
        ((slice(None), None, 0), ("N", None, "H")),
    ],
)
def test_basic_indexing_names(index, expected):
    x = ember.tensor(_a(2, 3, 4), names=X_NCH[1])
    r = x[index]
    assert r.names == expected
    np.testing.assert_array_equal(r.numpy(), _a(2, 3, 4)[index])


K = ("K",)


@pytest.mark.parametrize(
    "make,expected,np_index",
    [
        (lambda k: k, ("K", "C", "H"), lambda a, i: a[i]),
        (lambda k: (slice(None), k), ("N", "K", "H"), lambda a, i: a[:, i]),
        (lambda k: (0, slice(None), k), ("C", "K"), lambda a, i: a[0][:, i]),  # int: a select
        (lambda k: (k, slice(None), k), ("K", "C"), lambda a, i: a[i, :, i]),
        (lambda k: (Ellipsis, k), ("N", "C", "K"), lambda a, i: a[..., i]),
    ],
)
def test_index_tensor_contributes_its_names(make, expected, np_index):
    x = ember.tensor(_a(2, 3, 4), names=X_NCH[1])
    idx = [1, 0, 1, 1]
    r = x[make(ember.tensor(idx, names=K))]
    assert r.names == expected
    np.testing.assert_array_equal(r.numpy(), np_index(_a(2, 3, 4), np.array(idx)))


def test_index_tensor_names_broadcast_and_unnamed_base():
    x = ember.tensor(_a(2, 3, 4), names=X_NCH[1])
    i = ember.tensor([[0, 1], [1, 0]], names=("P", "Q"))
    j = ember.tensor([2, 0], names=("Q",))
    assert x[:, i, j].names == ("N", "P", "Q")
    assert x[:, i].names == ("N", "P", "Q", "H")
    u = ember.tensor(_a(2, 3))
    assert u[ember.tensor([1, 0], names=K)].names == ("K", None)
    assert u[ember.tensor([1, 0])]._names is None
    # an unnamed index tensor (or a mask) leaves the indexed dims unnamed
    assert x[ember.tensor([1, 0])].names == (None, "C", "H")
    mask = ember.tensor([True, False], names=("N",))
    assert x[mask].names == (None, "C", "H")


def test_index_tensor_name_clash():
    x = ember.tensor(_a(2, 3), names=("N", "C"))
    with pytest.raises(RuntimeError, match=re.escape("index: the index tensor's names ['C']")):
        x[ember.tensor([0], names=("C",))]


def test_index_tensor_names_gradient():
    x = _t(3, 4, names=("N", "C"), grad=True)
    r = x[ember.tensor([2, 0, 2], names=K)]
    assert r.names == ("K", "C")
    r.backward(ember.ones(3, 4, names=("K", "C")))
    assert x.grad.names == ("N", "C")
    np.testing.assert_array_equal(x.grad.numpy()[:, 0], [1.0, 0.0, 2.0])


@pytest.mark.parametrize(
    "index,np_index,expected",
    [
        ({"C": 0}, (slice(None), 0), ("N", "H")),
        ({"C": slice(1, 3)}, (slice(None), slice(1, 3)), ("N", "C", "H")),
        ({"H": 1, "N": 0}, (0, slice(None), 1), ("C",)),
        ({"H": slice(None, None, 2)}, (Ellipsis, slice(None, None, 2)), ("N", "C", "H")),
        ({"N": -1, 2: 3}, (-1, slice(None), 3), ("C",)),
        ({"C": [2, 0]}, (slice(None), [2, 0]), ("N", None, "H")),
        ({}, (), ("N", "C", "H")),
    ],
)
def test_dict_index_selects_by_name(index, np_index, expected):
    x = ember.tensor(_a(2, 3, 4), names=X_NCH[1])
    r = x[index]
    assert r.names == expected
    np.testing.assert_array_equal(r.numpy(), _a(2, 3, 4)[np_index])


def test_dict_index_view_tensor_setitem_and_grad():
    x = ember.zeros(2, 3, 4, names=X_NCH[1])
    v = x[{"C": 1}]
    assert v._base is x  # basic dict indices give views
    x[{"C": 1}] = 5.0
    x[{"H": ember.tensor([0, 3])}] += 1.0
    ref = np.zeros((2, 3, 4))
    ref[:, 1] = 5.0
    ref[..., [0, 3]] += 1.0
    np.testing.assert_array_equal(x.numpy(), ref)
    assert x.names == X_NCH[1]
    assert x[{"C": ember.tensor([2, 0], names=K)}].names == ("N", "K", "H")
    w = _t(2, 3, names=("N", "C"), grad=True)
    w[{"C": slice(0, 2)}].exp().sum().backward()
    assert w.grad.names == ("N", "C")
    np.testing.assert_allclose(w.grad.numpy()[:, :2], np.exp(_a(2, 3))[:, :2])
    np.testing.assert_array_equal(w.grad.numpy()[:, 2], [0.0, 0.0])


def test_dict_index_errors():
    x = ember.tensor(_a(2, 3, 4), names=X_NCH[1])
    with pytest.raises(
        RuntimeError, match=re.escape("Name 'Z' not found in Tensor['N', 'C', 'H']")
    ):
        x[{"Z": 0}]
    with pytest.raises(IndexError, match="indexed more than once"):
        x[{"C": 0, 1: 0}]
    with pytest.raises(IndexError, match="a dict index selects within existing dims"):
        x[{"C": None}]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 3"):
        x[{"C": 5}]
    with pytest.raises(RuntimeError, match=re.escape("Name 'C' not found in Tensor[None, None]")):
        ember.zeros(2, 3)[{"C": 0}]


def test_dims_by_name_in_indexing_ops():
    x = ember.tensor(_a(2, 3, 4), names=X_NCH[1])
    idx = ember.tensor([2, 0])
    assert x.index_select("C", idx).names == X_NCH[1]
    np.testing.assert_array_equal(x.index_select("C", idx).numpy(), _a(2, 3, 4)[:, [2, 0]])
    g = ember.zeros(2, 1, 4, dtype=ember.int64)
    assert x.gather("C", g).names == X_NCH[1]
    assert x.scatter("C", g, 1.0).names == X_NCH[1]
    assert x.scatter_add("C", g, ember.ones(2, 1, 4, dtype=x.dtype)).names == X_NCH[1]
    assert x.unsqueeze("H").names == ("N", "C", None, "H")
    assert ember.stack([x, x], "C").names == ("N", None, "C", "H")
    assert x.permute("H", "N", "C").names == ("H", "N", "C")
    np.testing.assert_array_equal(x.permute("H", "N", "C").numpy(), _a(2, 3, 4).transpose(2, 0, 1))
    cond = ember.tensor(_a(3, 4) > 0, names=("C", "H"))
    assert ember.where(cond, x, 0.0).names == X_NCH[1]
    s = x.sort("H")
    assert s.values.names == X_NCH[1] and s.indices.names == X_NCH[1]
    np.testing.assert_array_equal(s.values.numpy(), np.sort(_a(2, 3, 4), axis=2))
    assert x.argsort("C").names == X_NCH[1]
    tk = x.topk(2, "H")
    assert tk.values.names == X_NCH[1]
    assert tk.values.shape == (2, 3, 2)


# ---------------------------------------------------------------------- 4.7 contraction by name
def _pair(seed=0):
    x = _t(2, 3, 4, names=("N", "H", "W"), seed=seed, grad=True)
    y = _t(4, 3, names=("W", "H"), seed=seed + 1, grad=True)
    return x, y


@pytest.mark.parametrize(
    "dim,expected,eq",
    [
        ("H", ("N", "W"), "nhw,wh->nw"),
        (["H"], ("N", "W"), "nhw,wh->nw"),
        (["H", "W"], ("N",), "nhw,wh->n"),
        (None, ("N",), "nhw,wh->n"),  # all shared names
        ("W", ("N", "H"), "nhw,wh->nh"),  # the other shared name is a batch dim
    ],
)
def test_dot_by_name(dim, expected, eq):
    x, y = _pair()
    r = ember.dot(x, y, dim=dim) if dim is not None else x.dot(y)
    assert r.names == expected
    up = _a(*r.shape, seed=7) + 2
    r.backward(ember.tensor(up, names=r.names))
    assert x.grad.names == ("N", "H", "W") and y.grad.names == ("W", "H")
    if torch is not None:
        tx = torch.tensor(_a(2, 3, 4), requires_grad=True)
        ty = torch.tensor(_a(4, 3, seed=1), requires_grad=True)
        tr = torch.einsum(eq, tx, ty)
        tr.backward(torch.tensor(up))
        np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-6)


def test_dot_unnamed_and_1d_unchanged():
    a, b = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])
    assert ember.dot(a, b).item() == 11.0 and a.dot(b)._names is None
    # 1-D named vectors: PyTorch's dot (contracted names unchecked, spec 4.4)
    na, nb = a.rename("A"), b.rename("B")
    assert ember.dot(na, nb).item() == 11.0
    assert ember.dot(a.rename("C"), b.rename("C"), dim="C").item() == 11.0
    o = ember.empty(())
    ember.dot(a, b, out=o)
    assert o.item() == 11.0
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        ember.dot(ember.ones(2, 3), ember.ones(3))
    if torch is not None:
        with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
            torch.dot(torch.ones(2, 3), torch.ones(3))


def test_dot_by_name_unnamed_dims_and_out():
    x = ember.tensor(_a(2, 3), names=(None, "H"))
    y = ember.tensor(_a(3, 5, seed=1), names=("H", None))
    r = ember.dot(x, y, dim="H")
    assert r.names == (None, None) and r.shape == (2, 5)
    np.testing.assert_allclose(r.numpy(), _a(2, 3) @ _a(3, 5, seed=1))
    o = ember.empty(0, dtype=r.dtype)  # dot's out= takes no other dtype (torch's rule)
    ember.dot(x, y, dim="H", out=o)
    np.testing.assert_allclose(o.numpy(), r.numpy())


def test_dot_by_name_errors():
    x, y = _pair()
    with pytest.raises(
        RuntimeError, match=re.escape("Name 'Z' not found in Tensor['N', 'H', 'W']")
    ):
        ember.dot(x, y, dim="Z")
    with pytest.raises(RuntimeError, match=re.escape("Name 'N' not found in Tensor['W', 'H']")):
        ember.dot(x, y, dim="N")
    with pytest.raises(RuntimeError, match="share no dim names to contract"):
        ember.dot(x, ember.ones(3, names=("C",)))
    with pytest.raises(
        RuntimeError, match=re.escape("dim 'H' has size 3 in Tensor['N', 'H', 'W']")
    ):
        ember.dot(x, ember.ones(5, names=("H",)), dim="H")
    with pytest.raises(TypeError, match="dim= takes a dim name"):
        ember.dot(x, y, dim=1)
    with pytest.raises(RuntimeError, match="more than once"):
        ember.dot(x, y, dim=["H", "H"])
    with pytest.raises(RuntimeError, match=re.escape("Name 'H' not found in Tensor[None]")):
        ember.dot(ember.ones(3), ember.ones(3), dim="H")


@pytest.mark.parametrize(
    "eq,shapes,names,letters,expected",
    [
        ("N C, C O -> N O", [(2, 3), (3, 4)], [("N", "C"), ("C", "O")], "ab,bc->ac", ("N", "O")),
        ("N C, C O", [(2, 3), (3, 4)], [("N", "C"), ("C", "O")], "ab,bc->ac", ("N", "O")),
        (
            "batch C, C out -> out batch",
            [(2, 3), (3, 4)],
            [None, None],
            "ab,bc->ca",
            ("out", "batch"),
        ),
        ("N C, C O -> N O", [(2, 3), (3, 4)], [(None, "C"), None], "ab,bc->ac", ("N", "O")),
        (
            "B N C, B C O -> B N O",
            [(5, 2, 3), (5, 3, 4)],
            [("B", "N", "C"), ("B", "C", "O")],
            "abc,acd->abd",
            ("B", "N", "O"),
        ),
        (
            "... C, C O -> ... O",
            [(5, 2, 3), (3, 4)],
            [(None, "N", "C"), ("C", "O")],
            "...b,bc->...c",
            (None, "N", "O"),  # the ellipsis dims keep their names (spec 4.4)
        ),
        ("row row -> row", [(3, 3)], [None], "aa->a", ("row",)),
        ("N C ->", [(2, 3)], [("N", "C")], "ab->", ()),
        ("time, time ->", [(3,), (3,)], [("time",), ("time",)], "a,a->", ()),
        (
            "N C, C D, D O -> N O",
            [(2, 3), (3, 4), (4, 5)],
            [("N", "C"), None, None],
            "ab,bc,cd->ad",
            ("N", "O"),
        ),
    ],
)
def test_einsum_with_names(eq, shapes, names, letters, expected):
    arrs = [_a(*s, seed=k) for k, s in enumerate(shapes)]
    xs = [ember.tensor(a, names=n, requires_grad=True) for a, n in zip(arrs, names)]
    r = ember.einsum(eq, *xs)
    assert r.names == expected
    np.testing.assert_allclose(r.detach().numpy(), np.einsum(letters, *arrs), rtol=1e-6)
    r.sum().backward()
    for x in xs:
        assert x.grad.names == x.names
    if torch is not None:
        ts = [torch.tensor(a, requires_grad=True) for a in arrs]
        torch.einsum(letters, *ts).sum().backward()
        for x, t in zip(xs, ts):
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_einsum_letters_unchanged():
    a, b = ember.tensor(_a(2, 3)), ember.tensor(_a(3, 4, seed=1))
    assert ember.einsum("ij,jk->ik", a, b)._names is None
    assert ember.einsum("i j, j k -> i k", a, b)._names is None  # torch's spaced letters
    na = a.rename("N", "C")
    assert ember.einsum("ij,jk->ik", na, b).names == ("N", None)  # by letter, unchecked
    np.testing.assert_allclose(
        ember.einsum("ij,jk->ik", a, b).numpy(), _a(2, 3) @ _a(3, 4, seed=1), rtol=1e-6
    )


def test_einsum_name_errors():
    a = ember.ones(2, 3, names=("N", "C"))
    b = ember.ones(3, 4, names=("C", "O"))
    msg = "einsum(): operand 0 is labelled ['N', 'D'] but its dims are named ['N', 'C']"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        ember.einsum("N D, D O -> N O", a, b)
    with pytest.raises(RuntimeError, match="number of subscripts in the equation \\(3\\)"):
        ember.einsum("N C X, C O -> N O", a, b)
    with pytest.raises(RuntimeError, match="output label 'Z' does not appear"):
        ember.einsum("N C, C O -> N Z", a, b)
    with pytest.raises(RuntimeError, match="more operands were provided"):
        ember.einsum("N C -> N", a, b)
    with pytest.raises(RuntimeError, match="invalid label '1x'"):
        ember.einsum("N 1x, C O -> N O", a, b)


# ---------------------------------------------------------------------- 4.8 broadcast by name
bbn = ember.named.broadcast_by_name


@pytest.mark.parametrize(
    "op",
    [
        lambda m, a, b: a + b,
        lambda m, a, b: a - b,
        lambda m, a, b: a * b,
        lambda m, a, b: a / (b.abs() + 1),
        lambda m, a, b: (a.abs() + 1) ** b,
        lambda m, a, b: m.maximum(a, b),
        lambda m, a, b: m.atan2(a, b),
        lambda m, a, b: m.where(a > b, a, b),
    ],
    ids=["add", "sub", "mul", "div", "pow", "maximum", "atan2", "where"],
)
def test_broadcast_by_name_binary_ops(op):
    # x (2,3)[N,C] with y (3,2)[C,N] and z (5)[H]: aligned by name, union in first-appearance order
    ax, ay, az = _a(2, 3), _a(3, 2, seed=1), _a(5, seed=2)
    x = ember.tensor(ax, names=("N", "C"), requires_grad=True)
    y = ember.tensor(ay, names=("C", "N"), requires_grad=True)
    z = ember.tensor(az, names=("H",), requires_grad=True)
    with bbn():
        r1 = op(ember, x, y)
        r2 = op(ember, z, x)
    assert r1.names == ("N", "C") and r1.shape == (2, 3)
    assert r2.names == ("H", "N", "C") and r2.shape == (5, 2, 3)
    (r1.sum() + r2.sum()).backward()
    assert x.grad.names == ("N", "C") and y.grad.names == ("C", "N") and z.grad.names == ("H",)
    if torch is not None:
        tx, ty, tz = (torch.tensor(a, requires_grad=True) for a in (ax, ay, az))
        t1 = op(torch, tx, ty.t())
        t2 = op(torch, tz[:, None, None], tx)
        (t1.sum() + t2.sum()).backward()
        np.testing.assert_allclose(r1.detach().numpy(), t1.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(r2.detach().numpy(), t2.detach().numpy(), rtol=1e-6)
        for e, t in ((x, tx), (y, ty), (z, tz)):
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-9)


def test_broadcast_by_name_comparisons_and_options():
    x = ember.tensor(_a(2, 3), names=("N", "C"))
    n = ember.tensor(_a(2, seed=1), names=("N",))
    ref = _a(2, 3) > _a(2, seed=1)[:, None]
    with bbn():
        for r in (x > n, ember.gt(x, n), x.gt(n)):
            assert r.names == ("N", "C") and r.dtype is ember.bool
            np.testing.assert_array_equal(r.numpy(), ref)
        assert (x == n).names == ("N", "C")
        r = ember.add(x, n, alpha=2)
        np.testing.assert_allclose(r.numpy(), _a(2, 3) + 2 * _a(2, seed=1)[:, None])
        assert (x + 1).names == ("N", "C")  # scalars as usual
        u = x + ember.tensor(_a(3, seed=3))  # unnamed operands broadcast by position
        assert u.names == ("N", "C")


def test_broadcast_by_name_only_inside_the_block():
    x = ember.ones(2, 3, names=("N", "C"))
    n = ember.ones(2, names=("N",))
    # names are checked before sizes (torch's TensorIterator does so): the names error
    with pytest.raises(RuntimeError, match="do not match"):
        x + n
    with bbn():
        assert (x + n).names == ("N", "C")
        with bbn(False), pytest.raises(RuntimeError, match="do not match"):
            x + n
        assert ember.named.is_broadcast_by_name_enabled()
    assert not ember.named.is_broadcast_by_name_enabled()
    x3 = ember.ones(3, 3, names=("N", "C"))
    n3 = ember.ones(3, names=("N",))
    with pytest.raises(RuntimeError, match="do not match"):  # PyTorch's positional rule stands
        x3 + n3

    @bbn()
    def f(a, b):
        return a + b

    assert f(x, n).names == ("N", "C")
    assert not ember.named.is_broadcast_by_name_enabled()


def test_broadcast_by_name_is_thread_local():
    x = ember.ones(2, 3, names=("N", "C"))
    n = ember.ones(2, names=("N",))
    seen = []

    def other():
        seen.append(ember.named.is_broadcast_by_name_enabled())

    with bbn():
        th = threading.Thread(target=other)
        th.start()
        th.join()
        assert (x * n).shape == (2, 3)
    assert seen == [False]


def test_broadcast_by_name_inplace_and_out():
    x = ember.tensor(_a(2, 3), names=("N", "C"))
    n = ember.tensor(_a(2, seed=1), names=("N",))
    h = ember.ones(4, names=("H",))
    with bbn():
        y = x.clone()
        y += n
        np.testing.assert_allclose(y.numpy(), _a(2, 3) + _a(2, seed=1)[:, None])
        assert y.names == ("N", "C")
        y.mul_(x.t())  # (3,2)[C,N] aligned to y's order
        assert y.names == ("N", "C")
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            x.clone().add_(h)
        o = ember.empty(0)
        ember.add(x, h, out=o)
        assert o.names == ("N", "C", "H") and o.shape == (2, 3, 4)


def test_broadcast_by_name_partial_names_error():
    x = ember.ones(2, 3, names=("N", "C"))
    with bbn():
        msg = "add: broadcasting by name needs every dim of a named operand to be named, but got"
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            x + ember.ones(2, 3, names=(None, "C"))


def test_broadcast_by_name_backward_inside_block_and_double_backward():
    ax, an = _a(2, 3), _a(2, seed=1)
    x = ember.tensor(ax, names=("N", "C"), requires_grad=True)
    n = ember.tensor(an, names=("N",), requires_grad=True)
    with bbn():
        r = (x * n).exp() + n
        r.backward(ember.ones(2, 3, names=("N", "C")))
        (gx,) = ember.autograd.grad((x * n * n).sum(), x, create_graph=True)
        (gn,) = ember.autograd.grad(gx.sum(), n)
    assert x.grad.names == ("N", "C") and n.grad.names == ("N",)
    np.testing.assert_allclose(x.grad.numpy(), np.exp(ax * an[:, None]) * an[:, None])
    np.testing.assert_allclose(
        n.grad.numpy(), (np.exp(ax * an[:, None]) * ax).sum(1) + 3, rtol=1e-6
    )
    assert gx.names == ("N", "C") and gn.names == ("N",)
    np.testing.assert_allclose(gn.numpy(), 2 * an * 3, rtol=1e-6)
