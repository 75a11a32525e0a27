"""Indexing: __getitem__/__setitem__ (views, advanced indexing, autograd) and gather, scatter,
index_select, masked_*, take, take_along_dim, nonzero — parity with torch, gradchecks, errors."""

import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def I(*shape, low=0, high=2, seed=0):
    return A(*shape, dtype="int64", low=low, high=high, grad=False, seed=seed)


def M(*shape, seed=0):  # a bool mask input
    return A(*shape, dtype="bool", grad=False, seed=seed)


def _set(y, key, v):
    y[key] = v
    return y


class T:
    """An index given as a tensor (made with the module under test)."""

    def __init__(self, v):
        self.v = v


def _mkey(m, key):
    if isinstance(key, tuple):
        return tuple(_mkey(m, k) for k in key)
    if isinstance(key, T):
        return m.tensor(key.v)
    return key


def G(name, key, shape=(3, 4, 5)):
    return Case(f"getitem_{name}", lambda m, x: x[_mkey(m, key)], [A(*shape)])


GETITEM = [
    G("int", 1),
    G("neg_int", -1),
    G("slice", slice(1, 3)),
    G("slice_step", (slice(None), slice(0, None, 2))),
    G("col", (slice(None), 1)),
    G("ellipsis", (Ellipsis, 2)),
    G("none", (None, 0, Ellipsis, None)),
    G("full_int", (0, 1, 2)),
    G("mixed_basic", (-1, slice(None, None, 3), None, 4)),
    G("tensor0d", T(2), shape=(3, 4)),
    G("list", [0, 2, 0]),
    G("list_neg_dups", [-1, 0, -1, -3]),
    G("two_lists", ([0, 1, 2], [3, 3, 0])),
    G("adv_adjacent", (slice(None), [1, 1, 0], [4, 0, 4])),
    G("adv_separated", ([0, 2], slice(None), [1, 4])),
    G("int_slice_adv", (0, slice(None), [1, 2, 2])),
    G("adv_int_adv", ([2, 0], 1, [3, 3])),
    G("tensor2d", T([[0, 1], [2, 2]])),
    G("adv_none", (None, [0, 1], slice(None), [4, 3])),
    G("adv_ellipsis", (Ellipsis, [0, 4, 4])),
    G("bool_list", [True, False, True]),
    G("py_true", True),
    G("empty_list", []),
    G("seq_as_tuple", [[0, 1], [2, 3]]),
    G("float_list", [1.7, 0.2]),
    G("uint8_mask", T(np.array([1, 0, 1], dtype=np.uint8))),
    G("bool_0d_tensor", (T(True), 1)),
    G("numpy_mask", np.array([True, False, True])),
    G("slice_oob", (slice(1, 100), slice(-100, 2))),
    Case("getitem_index_tensor_dups", lambda m, x, i: x[i], [A(4, 3), I(6, high=3)]),
    Case("getitem_index_tensor_col", lambda m, x, i: x[:, i], [A(4, 3), I(2, 2, high=2)]),
    Case("getitem_mask_full", lambda m, x, k: x[k], [A(3, 4), M(3, 4)]),
    Case("getitem_mask_rows", lambda m, x, k: x[k], [A(3, 4, 2), M(3, 4)]),
    Case("getitem_mask_dim1", lambda m, x, k: x[:, k], [A(3, 4), M(4)]),
    Case("getitem_mask_int", lambda m, x, k: x[1, k], [A(3, 4), M(4)]),
    Case(
        "getitem_mask_and_index",
        lambda m, x, k: (
            x[k, m.tensor([0, 2, 2])]
            if int(k.sum()) == 3
            else x[m.tensor([0, 1, 2]), m.tensor([0, 2, 2])]
        ),
        [A(5, 4), M(5, seed=3)],
    ),
    Case("getitem_int32_index", lambda m, x: x[m.tensor([2, 0], dtype=m.int32)], [A(3, 2)]),
    Case("getitem_numpy_index", lambda m, x: x[np.array([1, 1, 0])], [A(3, 2)]),
    Case("getitem_chain", lambda m, x: x[1:][:, [0, 0]][0], [A(3, 4)]),
    Case("getitem_int_tensor", lambda m, x: x[1:, 0], [A(3, 4, dtype="int64", grad=False)]),
]


def _view_write(m, x, v):
    y = x * 1
    y[1][1:] = v * 3  # through a view of a non-leaf
    y[:, 0][0] = v[0]
    return y


def _view_write_zeros(m, v):
    out = m.zeros(2, 3, dtype=v.dtype)
    out[0][::2] = v  # through a view of a tensor that did not require grad
    row = out[1]
    row[m.tensor([0, 2])] = v * v
    return out * 2


def _inplace_on_views(m, x, v):
    y = x * 1
    y[0] += v  # getitem view, in-place add, setitem back
    y[:, 1].mul_(3)  # any in-place op on a view reaches the base (CopySlices)
    z = m.zeros(2, 3, dtype=v.dtype)
    z[1].add_(v * v)
    return y + z


def S(name, key, vshape, shape=(3, 4, 5), value=None):
    ins = [A(*shape)] + ([A(*vshape, seed=5)] if value is None else [])
    if value is None:
        fn = lambda m, x, v: _set(x * 1, _mkey(m, key), v)
    else:
        fn = lambda m, x: _set(x * 1, _mkey(m, key), value)
    return Case(f"setitem_{name}", fn, ins)


SETITEM = [
    S("int", 1, (4, 5)),
    S("int_broadcast", 1, (5,)),
    S("col_scalar", (slice(None), 1), None, value=2.5),
    S("slice_step", (slice(None), slice(0, None, 2)), (3, 1, 5)),
    S("full_int_0d", (0, 1, 2), ()),
    S("extra_lead_ones", (0, 1), (1, 1, 5)),
    S("ellipsis_none", (Ellipsis, None, 2), (3, 4, 1)),
    S("list", [0, 2], (2, 4, 5)),
    S("list_broadcast", [2, 0], (1, 5)),
    S("two_lists", ([0, 1, 2], [3, 1, 0]), (3, 5)),
    S("adv_separated", ([0, 2], slice(None), [1, 4]), (2, 4)),
    S("int_slice_adv", (0, slice(None), [1, 2]), (4, 2)),
    S("tensor0d_index", T(2), (4, 5)),
    S("neg", (-1, -2), (5,)),
    Case("setitem_mask_0d_value", lambda m, x, k, v: _set(x * 1, k, v), [A(3, 4), M(3, 4), A()]),
    Case("setitem_mask_rows", lambda m, x, k, v: _set(x * 1, k, v), [A(3, 4), M(3), A(4)]),
    Case("setitem_mask_scalar", lambda m, x, k: _set(x * 1, k, -1.0), [A(3, 4), M(3, 4)]),
    Case(
        "setitem_value_into_zeros",
        lambda m, v: _set(m.zeros(3, 4, dtype=v.dtype), (slice(None), 1), v),
        [A(3)],
    ),
    Case(
        "setitem_value_twice",
        lambda m, v: _set(_set(m.zeros(3, 4, dtype=v.dtype), 0, v), [1, 2], v * 2),
        [A(4)],
    ),
    Case("setitem_through_view", _view_write, [A(2, 3), A(2)]),
    Case("setitem_through_view_of_zeros", _view_write_zeros, [A(2)]),
    Case("inplace_ops_on_views", _inplace_on_views, [A(2, 3), A(3)]),
    Case(
        "setitem_int_tensor",
        lambda m, x: _set(x.clone(), [0, 2], 7),
        [A(3, 2, dtype="int64", grad=False)],
    ),
    Case("setitem_cast_value", lambda m, x, v: _set(x * 1, 0, v.to(m.float64)), [A(3, 4), A(4)]),
]


def C(name, fn, ins, **kw):
    return Case(name, fn, ins, **kw)


UNIQ = [[0, 2], [1, 3], [3, 0]]  # scatter rows without duplicates (torch leaves dups unspecified)

OPS = [
    C("gather_dim1", lambda m, x, i: m.gather(x, 1, i), [A(3, 4), I(3, 5, high=3)]),
    C("gather_dim0_small", lambda m, x, i: x.gather(0, i), [A(3, 4), I(2, 3, high=2)]),
    C("gather_negdim", lambda m, x, i: x.gather(-1, i), [A(2, 3, 4), I(2, 2, 6, high=3)]),
    C("scatter_src", lambda m, x, s: x.scatter(1, m.tensor(UNIQ), s), [A(3, 4), A(3, 2)]),
    # torch's own backward rejects a src larger than index (its bug): gradcheck only
    C(
        "scatter_src_big",
        lambda m, x, s: m.scatter(x, 1, m.tensor(UNIQ), s),
        [A(3, 4), A(4, 3)],
        grad=False,
    ),
    C("scatter_value", lambda m, x: x.scatter(1, m.tensor(UNIQ), 1.5), [A(3, 4)]),
    C("scatter_value_kw", lambda m, x: x.scatter(1, m.tensor(UNIQ), value=-2.0), [A(3, 4)]),
    C(
        "scatter_reduce_arg",
        lambda m, x, s: x.scatter(0, m.tensor([[0, 0, 1, 1]]), s, reduce="add"),
        [A(3, 4), A(1, 4)],
        grad=False,
        gradcheck=False,
    ),
    C(
        "scatter_reduce_mul",
        lambda m, x, s: x.scatter(1, m.tensor([[0, 0]]), s, reduce="multiply"),
        [A(3, 4), A(1, 2)],
        grad=False,
        gradcheck=False,
    ),
    C("scatter_", lambda m, x, s: (x * 1).scatter_(1, m.tensor(UNIQ), s), [A(3, 4), A(3, 2)]),
    C(
        "scatter_add_dups",
        lambda m, x, i, s: x.scatter_add(0, i, s),
        [A(3, 4), I(5, 4, high=2), A(5, 4)],
    ),
    C(
        "scatter_add_fn",
        lambda m, x, i, s: m.scatter_add(x, 1, i, s),
        [A(3, 4), I(2, 3, high=3), A(3, 5)],
        grad=False,
    ),  # torch's backward rejects big src
    C(
        "scatter_add_fn_grad",
        lambda m, x, i, s: m.scatter_add(x, 1, i, s),
        [A(3, 4), I(3, 5, high=3), A(3, 5)],
    ),
    C(
        "scatter_add_",
        lambda m, x, i, s: (x * 1).scatter_add_(0, i, s),
        [A(3, 4), I(5, 4, high=2), A(5, 4)],
    ),
    C(
        "scatter_reduce_sum",
        lambda m, x, i, s: x.scatter_reduce(0, i, s, "sum"),
        [A(3, 4), I(5, 4, high=2), A(5, 4)],
    ),
    C(
        "scatter_reduce_sum_noself",
        lambda m, x, i, s: x.scatter_reduce(0, i, s, "sum", include_self=False),
        [A(3, 4), I(5, 4, high=1), A(5, 4)],
    ),
    C(
        "scatter_reduce_amax",
        lambda m, x, i, s: x.scatter_reduce(0, i, s, "amax"),
        [A(3, 4), I(5, 4, high=2), A(5, 4)],
    ),
    C(
        "scatter_reduce_amin_noself",
        lambda m, x, i, s: x.scatter_reduce(1, i, s, "amin", include_self=False),
        [A(3, 4), I(3, 5, high=3), A(3, 5)],
    ),
    # ties (self and src rows repeated) share the gradient: parity only (not differentiable there)
    C(
        "scatter_reduce_amax_ties",
        lambda m, s, i: s[:3].scatter_reduce(0, i, s.repeat(2, 1), "amax"),
        [A(3, 4), I(6, 4, high=2)],
        gradcheck=False,
    ),
    C(
        "scatter_reduce_mean",
        lambda m, x, i, s: x.scatter_reduce(0, i, s, "mean"),
        [A(3, 4), I(5, 4, high=2), A(5, 4)],
    ),
    C(
        "scatter_reduce_mean_noself",
        lambda m, x, i, s: x.scatter_reduce(-1, i, s, "mean", include_self=False),
        [A(3, 4), I(3, 5, high=2), A(3, 5)],
    ),
    C(
        "scatter_reduce_prod",
        lambda m, x, i, s: x.scatter_reduce(0, i, s, "prod", include_self=False),
        [A(3, 4), I(5, 4, high=2), A(5, 4)],
        grad=False,
        gradcheck=False,
    ),
    C("index_select", lambda m, x, i: x.index_select(1, i), [A(3, 4), I(6, high=3)]),
    C("index_select_fn_dim0", lambda m, x, i: m.index_select(x, 0, i), [A(3, 4), I(5, high=2)]),
    C("index_select_0d_index", lambda m, x: x.index_select(-1, m.tensor(2)), [A(3, 4)]),
    C("index_add", lambda m, x, i, s: x.index_add(1, i, s), [A(3, 4), I(5, high=3), A(3, 5)]),
    C(
        "index_add_alpha",
        lambda m, x, i, s: m.index_add(x, 0, i, s, alpha=2.0),
        [A(3, 4), I(4, high=2), A(4, 4)],
    ),
    C(
        "index_add_",
        lambda m, x, i, s: (x * 1).index_add_(0, i, s),
        [A(3, 4), I(4, high=2), A(4, 4)],
    ),
    C("index_fill", lambda m, x: x.index_fill(1, m.tensor([0, 2, 0]), -1.0), [A(3, 4)]),
    C("index_fill_tensor", lambda m, x, v: x.index_fill(0, m.tensor([1]), v), [A(3, 4), A()]),
    C("index_fill_", lambda m, x: (x * 1).index_fill_(1, m.tensor([3]), 2.0), [A(3, 4)]),
    C(
        "index_put",
        lambda m, x, v: x.index_put((m.tensor([0, 2]), m.tensor([1, 3])), v),
        [A(3, 4), A(2)],
    ),
    C(
        "index_put_accumulate",
        lambda m, x, v: m.index_put(x, (m.tensor([0, 0, 2]),), v, accumulate=True),
        [A(3, 4), A(4)],
    ),
    C(
        "index_put_bcast_acc",
        lambda m, x, v: (x * 1).index_put_(
            (m.tensor([[0], [2]]), m.tensor([1, 1])), v, accumulate=True
        ),
        [A(3, 4), A(2)],
    ),
    C(
        "index_put_mask",
        lambda m, x, k: (x * 1).index_put_((k,), m.tensor(2.0)),
        [A(3, 4), M(3, 4)],
    ),
    C("masked_fill", lambda m, x, k: x.masked_fill(k, 0.5), [A(3, 4), M(3, 4)]),
    C("masked_fill_bcast", lambda m, x, k: m.masked_fill(x, k, -1), [A(3, 4), M(4)]),
    C("masked_fill_bigmask", lambda m, x, k: x.masked_fill(k, 2.0), [A(4), M(3, 4)]),
    C("masked_fill_tensor_value", lambda m, x, k, v: x.masked_fill(k, v), [A(3, 4), M(3, 4), A()]),
    C(
        "masked_fill_int",
        lambda m, x, k: x.masked_fill(k, 2.7),
        [A(3, 4, dtype="int64", grad=False), M(3, 4)],
    ),
    C("masked_fill_", lambda m, x, k: (x * 1).masked_fill_(k, 3.0), [A(3, 4), M(3, 1)]),
    C(
        "masked_fill__tensor",
        lambda m, x, k, v: (x * 1).masked_fill_(k, v),
        [A(3, 4), M(3, 4), A()],
    ),
    C("masked_select", lambda m, x, k: x.masked_select(k), [A(3, 4), M(3, 4)]),
    C("masked_select_bcast", lambda m, x, k: m.masked_select(x, k), [A(4), M(3, 4)]),
    C("masked_scatter", lambda m, x, k, s: x.masked_scatter(k, s), [A(3, 4), M(3, 4), A(13)]),
    C(
        "masked_scatter_bcast",
        lambda m, x, k, s: m.masked_scatter(x, k, s),
        [A(3, 4), M(4), A(3, 5)],
    ),
    C("take", lambda m, x, i: x.take(i), [A(3, 4), I(2, 5, low=-12, high=11)]),
    C("take_fn", lambda m, x, i: m.take(x, i), [A(3, 4), I(7, high=3)]),
    C("take_along_dim_none", lambda m, x, i: m.take_along_dim(x, i), [A(3, 4), I(5, high=11)]),
    C("take_along_dim_1", lambda m, x, i: x.take_along_dim(i, 1), [A(3, 4), I(3, 2, high=3)]),
    C(
        "take_along_dim_bcast",
        lambda m, x, i: m.take_along_dim(x, i, dim=0),
        [A(3, 4), I(2, 1, high=2)],
    ),
    C(
        "take_along_dim_bcast_x",
        lambda m, x, i: m.take_along_dim(x, i, dim=1),
        [A(1, 4), I(3, 2, high=3)],
    ),
    C(
        "nonzero",
        lambda m, x: m.nonzero(x),
        [A(3, 4, dtype="int64", low=0, high=1, grad=False)],
        grad=False,
        gradcheck=False,
    ),
    C(
        "nonzero_tuple",
        lambda m, x: x.nonzero(as_tuple=True),
        [A(2, 3, 4, dtype="int64", low=0, high=1, grad=False)],
        grad=False,
        gradcheck=False,
    ),
    C(
        "nonzero_0d",
        lambda m, x: (x.nonzero(), m.nonzero(x, as_tuple=True)),
        [A(dtype="int64", low=1, high=1, grad=False)],
        grad=False,
        gradcheck=False,
    ),
    C("nonzero_bool", lambda m, x: x.nonzero(), [M(5)], grad=False, gradcheck=False),
    C(
        "argwhere",
        lambda m, x: m.argwhere(x),
        [A(3, 4, dtype="int64", low=0, high=1, grad=False)],
        grad=False,
        gradcheck=False,
    ),
]

ALL = GETITEM + SETITEM + OPS
GRADCHECK = [
    c
    for c in ALL
    if c.gradcheck
    and any(isinstance(s, A) and s.grad and s.dtype.startswith("float") for s in c.inputs)
]


@pytest.mark.parametrize("case", ALL, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", GRADCHECK, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


# ---------------------------------------------------------------------- views and versions
def test_basic_index_is_view():
    x = ember.zeros(3, 4)
    for key in (1, (slice(None), 2), (Ellipsis, 0), (0, 1), (None, 1), ember.tensor(2)):
        v = x[key]
        assert v._base is x
        assert v._ver is x._ver
    v = x[1]
    assert v[2:]._base is x and v[2]._base is x  # a view of a view keeps the root base
    v[2] = 5.0
    assert x[1, 2].item() == 5.0
    s = x[0, 3]  # a 0-d view, not a copy
    s.fill_(7.0) if hasattr(s, "fill_") else s.__setitem__((), 7.0)
    assert x._data[0, 3] == 7.0
    w = x[:, ::2]
    w[...] = 1.0
    np.testing.assert_array_equal(x._data[:, ::2], np.ones((3, 2)))


def test_advanced_index_is_copy():
    x = ember.zeros(3, 4)
    for key in ([0, 1], ember.tensor([1]), x > 0, True):
        v = x[key]
        assert v._base is None
        v[...] = 3.0
    assert not x._data.any()


def test_setitem_bumps_version():
    x = ember.zeros(3, 4)
    v = x[0]
    before = x._version
    x[1] = 2.0
    assert x._version == before + 1
    assert v._version == x._version  # views share the counter
    x[[0, 2], 1] = ember.tensor([1.0, 2.0])
    assert x._version == before + 2
    v[0] = 1.0
    assert x._version == before + 3


def test_setitem_modifies_saved_tensor():
    a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 2
    c = b * b  # saves b
    b[0] = 10.0
    with pytest.raises(
        RuntimeError,
        match="one of the variables needed for gradient computation "
        "has been modified by an inplace operation",
    ):
        c.sum().backward()


def test_setitem_leaf_errors():
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation.",
    ):
        w[0] = 2.0
    with pytest.raises(
        RuntimeError,
        match="a view of a leaf Variable that requires grad is being "
        "used in an in-place operation.",
    ):
        w[0:2][0] = 2.0
    with ember.no_grad():
        w[0] = 5.0
    assert w._data[0] == 5.0
    assert w.grad_fn is None


def test_setitem_detached_view_leaves_base_alone():
    x = ember.ones(3, requires_grad=True)
    d = x.detach()
    v = ember.tensor(2.0, requires_grad=True)
    d[0] = v
    assert x.grad_fn is None and d.grad_fn is not None
    assert x._data[0] == 2.0  # storage is shared
    d.sum().backward()
    assert v.grad.item() == 1.0


def test_setitem_grad_history():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    v = ember.tensor([5.0, 6.0], requires_grad=True)
    y = x * 1
    y[0] = v * 2
    assert y.grad_fn is not None
    (y * ember.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    np.testing.assert_allclose(x.grad._data, [[0, 0], [3, 4]])
    np.testing.assert_allclose(v.grad._data, [2, 4])


def test_getitem_grad_duplicates_accumulate():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    np.testing.assert_array_equal(x.grad._data, [3.0, 0.0, 1.0])
    x.grad = None
    x[ember.tensor([[1, 1], [1, 2]])].sum().backward()
    np.testing.assert_array_equal(x.grad._data, [0.0, 3.0, 1.0])


def test_double_backward_through_index():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x[[0, 0, 1]] ** 2).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g._data, [4.0, 4.0, 0.0])
    (h,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h._data, [4.0, 2.0, 0.0])


def test_float32_stays():
    x = ember.zeros(3, 4)
    x[0] = 1.5
    x[x > 0] = ember.tensor(2.0, dtype=ember.float64)
    assert x.dtype is ember.float32
    assert x[[0, 1]].dtype is ember.float32
    assert x.masked_fill(x > 0, 3.0).dtype is ember.float32


def test_masked_fill_inplace_no_grad_writes_storage():
    x = ember.zeros(2, 3)
    v = x[0]
    ver = x._version
    r = x.masked_fill_(ember.tensor([True, False, True]), 1.0)
    assert r is x
    assert x._version == ver + 1
    np.testing.assert_array_equal(v._data, [1.0, 0.0, 1.0])


# ---------------------------------------------------------------------- names
def test_names():
    x = ember.zeros(2, 3, 4, names=("N", "C", "W"))
    assert x[0]._names == ("C", "W")
    assert x[:, 1]._names == ("N", "W")
    assert x[1:]._names == ("N", "C", "W")
    assert x[None]._names == (None, "N", "C", "W")
    assert x[..., 0]._names == ("N", "C")
    assert x[0, ..., None]._names == ("C", "W", None)
    assert x[:, [0, 1]]._names == ("N", None, "W")
    assert x[[0, 1], :, [1, 2]]._names == (None, "C")
    assert x.masked_fill(ember.ones(4, dtype=ember.bool), 1.0)._names == ("N", "C", "W")
    assert x.index_select(1, ember.tensor([0, 0]))._names == ("N", "C", "W")
    assert x.gather(2, ember.zeros(2, 3, 1, dtype=ember.int64))._names == ("N", "C", "W")
    y = ember.zeros(2, 3, names=("N", "C"), requires_grad=True)
    y[:, 1].sum().backward()
    assert y.grad._names == ("N", "C")


# ---------------------------------------------------------------------- errors
def _both(fn):
    """The error of fn in torch and in ember: same type and message."""
    out = []
    for m in (torch, ember):
        with pytest.raises(Exception) as ei:
            fn(m)
        out.append(ei)
    t, e = out
    assert type(e.value) is type(t.value), (e.value, t.value)
    assert str(e.value) == str(t.value)
    return e


X = lambda m: m.arange(24.0).reshape(2, 3, 4)

ERRORS = [
    ("oob_int", lambda m: X(m)[5]),
    ("oob_second", lambda m: X(m)[0, 5]),
    ("oob_neg", lambda m: X(m)[-3]),
    ("oob_after_ellipsis", lambda m: X(m)[..., 6]),
    ("oob_after_none", lambda m: X(m)[None, 0, 6]),
    ("oob_list", lambda m: X(m)[[0, 2]]),
    ("oob_list_dim1", lambda m: X(m)[[0], [5]]),
    ("oob_adv_after_slices", lambda m: X(m)[:, :, m.tensor([7])]),
    ("oob_adv_separated", lambda m: X(m)[[1], :, [7]]),
    ("too_many", lambda m: X(m)[0, 0, 0, 0]),
    ("too_many_ellipsis", lambda m: X(m)[..., 1, 1, 1, 1]),
    ("zero_dim_int", lambda m: m.tensor(3.0)[0]),
    ("zero_dim_list", lambda m: m.tensor(3.0)[[0]]),
    ("float_tensor", lambda m: X(m)[m.tensor([1.0])]),
    ("int16_tensor", lambda m: X(m)[m.tensor([1], dtype=m.int16)]),
    ("python_float", lambda m: X(m)[1.5]),
    ("mask_shape", lambda m: X(m)[m.tensor([True, False, True])]),
    ("mask_shape_dim1", lambda m: X(m)[X(m)[:, 0] > 3]),
    ("mask_after_int", lambda m: X(m)[0, m.ones(2, 4, dtype=m.bool)]),
    ("mask_after_none", lambda m: X(m)[None, m.ones(2, 4, dtype=m.bool)]),
    ("broadcast", lambda m: X(m)[[0, 1], [1, 2, 0]]),
    ("neg_step", lambda m: X(m)[::-1]),
    ("zero_step", lambda m: X(m)[:, ::0]),
    ("slice_float", lambda m: X(m)[1.0:2]),
    ("set_list", lambda m: X(m).__setitem__(0, [1.0, 2.0, 3.0, 4.0])),
    ("set_ndarray", lambda m: X(m).__setitem__(0, np.ones(4))),
    ("set_none", lambda m: X(m).__setitem__(0, None)),
    ("set_oob", lambda m: X(m).__setitem__((1, 3), 0.0)),
    ("set_shape_basic", lambda m: X(m).__setitem__(0, m.ones(3, 5))),
    ("set_shape_basic_ndim", lambda m: X(m).__setitem__(0, m.ones(2, 1, 4))),
    ("set_shape_adv", lambda m: X(m).__setitem__([0, 1], m.ones(3, 3, 4))),
    ("set_shape_mask", lambda m: X(m).__setitem__(X(m) > 5, m.tensor([1.0, 2.0]))),
    ("gather_dtype", lambda m: X(m).gather(1, m.zeros(2, 3, 4))),
    ("gather_ndim", lambda m: X(m).gather(1, m.zeros(2, dtype=m.int64))),
    ("gather_oob", lambda m: X(m)[0].gather(1, m.tensor([[5]]))),
    ("gather_oob_neg", lambda m: X(m)[0].gather(1, m.tensor([[-1]]))),
    ("gather_size", lambda m: X(m)[0].gather(1, m.zeros(4, 1, dtype=m.int64))),
    ("gather_dim", lambda m: X(m)[0].gather(2, m.zeros(1, 1, dtype=m.int64))),
    ("scatter_oob", lambda m: X(m)[0].scatter(1, m.tensor([[5]]), 1.0)),
    ("scatter_src_small", lambda m: X(m)[0].scatter(1, m.zeros(2, 2, dtype=m.int64), m.ones(1, 1))),
    (
        "scatter_dtype",
        lambda m: X(m)[0].scatter(1, m.zeros(2, 2, dtype=m.int64), m.ones(2, 3, dtype=m.float64)),
    ),
    (
        "scatter_add_dtype",
        lambda m: X(m)[0].scatter_add(
            1, m.zeros(2, 2, dtype=m.int64), m.ones(2, 3, dtype=m.float64)
        ),
    ),
    (
        "scatter_reduce_bad",
        lambda m: X(m)[0].scatter(1, m.zeros(1, 1, dtype=m.int64), 2.0, reduce="sum"),
    ),
    (
        "scatter_reduce_name",
        lambda m: X(m)[0].scatter_reduce(1, m.zeros(1, 1, dtype=m.int64), m.ones(1, 1), "add"),
    ),
    ("index_select_2d", lambda m: X(m).index_select(1, m.tensor([[0, 1]]))),
    ("index_select_dtype", lambda m: X(m).index_select(1, m.tensor([1.0]))),
    ("index_select_oob", lambda m: X(m)[0].index_select(1, m.tensor([0, 5]))),
    ("index_add_oob", lambda m: X(m)[0].index_add(1, m.tensor([4]), m.ones(3, 1))),
    ("index_add_neg", lambda m: X(m)[0].index_add(1, m.tensor([-1]), m.ones(3, 1))),
    ("index_fill_oob", lambda m: X(m)[0].index_fill(1, m.tensor([4]), 1.0)),
    ("index_add_count", lambda m: X(m)[0].index_add(1, m.tensor([0, 0]), m.ones(3, 3))),
    ("take_oob", lambda m: X(m).take(m.tensor([24]))),
    ("take_oob_neg", lambda m: X(m).take(m.tensor([-25]))),
    ("take_dtype", lambda m: X(m).take(m.tensor([1], dtype=m.int32))),
    ("take_along_dim_dtype", lambda m: m.take_along_dim(X(m), m.tensor([[[0]]], dtype=m.int32), 1)),
    ("take_along_dim_bcast", lambda m: m.take_along_dim(X(m)[0], m.tensor([[0], [1]]), 1)),
    ("masked_fill_mask_dtype", lambda m: m.ones(3).masked_fill(m.ones(3), 2)),
    ("masked_fill_value_dim", lambda m: m.ones(3).masked_fill(m.ones(3, dtype=m.bool), m.ones(2))),
    ("masked_fill__bigmask", lambda m: m.ones(3).masked_fill_(m.ones(2, 3, dtype=m.bool), 2)),
    ("masked_select_dtype", lambda m: m.ones(3).masked_select(m.ones(3))),
    ("masked_scatter_small", lambda m: X(m).masked_scatter(X(m) > 3, m.arange(2.0))),
]


@pytest.mark.parametrize("fn", [f for _, f in ERRORS], ids=[n for n, _ in ERRORS])
def test_errors_match_torch(fn):
    if torch is None:
        pytest.skip("torch is not installed")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _both(fn)


def test_scatter_reduce_arg_has_no_derivative():
    x = ember.ones(3, 4, requires_grad=True)
    y = x.scatter(1, ember.zeros(3, 1, dtype=ember.int64), 2.0, reduce="add")
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()


def test_index_errors_messages():
    x = ember.zeros(3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[5]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        ember.zeros(2, 2)[0, 0, 0]
    with pytest.raises(
        IndexError, match="tensors used as indices must be long, int, byte or bool tensors"
    ):
        x[ember.tensor([0.0])]


# ---------------------------------------------------------------------- random keys vs torch
def _random_key(rng, shape):
    """A random index mixing ints, slices (with steps), None, ..., lists, tensors and masks."""
    items = []
    d = 0
    for _ in range(rng.randrange(1, 4)):
        if d >= len(shape):
            break
        size = shape[d]
        c = rng.randrange(8)
        if c == 0:
            it = rng.randrange(-size, size)
        elif c == 1:
            it = slice(
                rng.choice([None, rng.randrange(-size - 1, size + 1)]),
                rng.choice([None, rng.randrange(-size - 1, size + 1)]),
                rng.choice([None, 1, 2, 3]),
            )
        elif c == 2:
            it = None
        elif c == 3:
            it = [rng.randrange(-size, size) for _ in range(rng.randrange(1, 3))]
        elif c == 4:
            it = T([rng.randrange(-size, size) for _ in range(2)])
        elif c == 5:
            it = T([rng.random() > 0.5 for _ in range(size)])
        elif c == 6:
            it = T(rng.randrange(-size, size))
        else:
            it = slice(None)
        items.append(it)
        if it is not None:
            d += 1
    if rng.random() < 0.2:
        items.insert(rng.randrange(len(items) + 1), Ellipsis)
    return tuple(items)


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - compared between the two libraries
        return e


def test_random_keys_match_torch():
    if torch is None:
        pytest.skip("torch is not installed")
    import random
    import warnings

    rng = random.Random(0)
    shape = (3, 4, 5)
    base = np.arange(60.0).reshape(shape)
    w = np.random.default_rng(0).uniform(0.5, 1.5, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for trial in range(400):
            key = _random_key(rng, shape)
            kt, ke = _mkey(torch, key), _mkey(ember, key)
            xt = torch.tensor(base, requires_grad=True)
            xe = ember.tensor(base, requires_grad=True)
            rt, re_ = _outcome(xt.__getitem__, kt), _outcome(xe.__getitem__, ke)
            if isinstance(rt, Exception) or isinstance(re_, Exception):
                assert type(rt) is type(re_) and str(rt) == str(re_), (key, rt, re_)
                continue
            assert tuple(rt.shape) == tuple(re_.shape), key
            np.testing.assert_array_equal(re_.detach().numpy(), rt.detach().numpy())
            if rt.numel():
                up = w[: rt.numel()].reshape(tuple(rt.shape))
                rt.backward(torch.tensor(up))
                re_.backward(ember.tensor(up))
                np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), err_msg=str(key))
            dup = any(isinstance(k, (list, T)) for k in key)
            if dup:
                continue  # torch leaves the winner among duplicate writes unspecified
            v = np.random.default_rng(trial).standard_normal(tuple(rt.shape))
            yt, ye = torch.tensor(base), ember.tensor(base)
            yt[kt] = torch.tensor(v)
            ye[ke] = ember.tensor(v)
            np.testing.assert_array_equal(ye.numpy(), yt.numpy())


def _byte_cases(m):
    x = m.arange(6.0).reshape(2, 3)
    b = m.tensor([[1, 0, 1], [0, 1, 0]], dtype=m.uint8)

    def put(idx, v):
        def run():
            y = x.clone()
            y[idx] = v
            return y

        return run

    return {
        "get_mask": lambda: x[b],
        "get_cols": lambda: x[:, b[0]],
        "get_bad_rows": lambda: x[b[0], :],
        "set_number": put(b, 5.0),
        "set_0d": put(b, m.tensor(7.0)),
        "set_cols_number": put((slice(None), b[0]), 1.0),
        "set_tensor": put(b, m.tensor([7.0, 8.0, 9.0])),
        "index_put": lambda: x.index_put((b,), m.tensor([1.0, 2.0, 3.0])),
        "index_put_0d": lambda: x.index_put((b,), m.tensor(1.0)),
        "index_put_acc": lambda: x.index_put((b,), m.tensor(1.0), accumulate=True),
        "list_of_lists": lambda: x[[[0, 1], [1, 2]]],
        "list_with_slice": lambda: x[[0, slice(None)]],
        "set_list_of_lists": put([[0, 1], [1, 2]], 9.0),
        "list_of_ints": lambda: x[[0, 1]],
    }


@needs_torch
@pytest.mark.parametrize("case", sorted(_byte_cases(ember)))
def test_byte_masks_and_non_tuple_sequences_like_torch(case):
    # torch's deprecated indexing: byte masks and lists read as tuples warn (at the caller's
    # line); a byte mask with a number goes to masked_fill_, which refuses it
    import torch

    def run(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = ("ok", _byte_cases(m)[case]().tolist())
            except (RuntimeError, IndexError) as e:
                r = (type(e).__name__, str(e))
        # (torch's C++ warnings may end with where they were triggered inside torch)
        return r, [(str(x.message).split(" (Triggered internally")[0], x.filename) for x in w]

    assert run(ember) == run(torch)
