"""Parity regressions found by the twenty-fourth wave, an op-by-op sweep of reductions,
indexing, scatter/gather and sorting (dtypes, keepdim, dim tuples, empty and 0-dim inputs,
NaN, ties, duplicate indices, every reduce mode, error types and messages, gradients with a
non-uniform upstream gradient and grad_fn names; torch is the oracle): quantile's gradient for a
row holding NaN (torch sends all of it to the row's last NaN, and none to ``q``); nanmedian(dim)'s
node name; unique's and unique_consecutive's ``dim`` on a 0-dim tensor and on a tensor with
another empty dim; ``x[index] = value`` through index_put_ (advanced keys), which refuses a value
of another dtype (only a view's copy_ and a one-element masked fill convert), after its
mask-shape and value-shape checks, and torch's shape message for a value of too many dims under a
mask; copy_'s complex-to-real warning for a setitem; the overload names of masked_fill,
index_fill and scatter with a tensor value or a ``reduce`` (torch's NotImplemented node),
index_reduce's, narrow_copy's, msort's, nanmean's and norm(p='nuc')'s nodes; bool index_add /
accumulating index_put (a logical or, where ember raised numpy's error), index_add's alpha
converted to an integer self's type, and the bool ``mean`` of scatter_reduce and index_reduce
(torch's NotImplementedError); searchsorted's sorter range check, its results with NaN (torch's
own bisection, where numpy orders NaN last) and its bool refusal; roll of a 0-dim tensor along a
dim; narrow's tensor ``start`` check and narrow_copy's own errors; the out= tensors of another
dtype that torch's kernels refuse in their own words, where ember cast (max/min/argmax/argmin/
aminmax/norm/sort/topk/msort/gather, median/nanmedian/kthvalue/mode/cummax, all/any,
index_select/masked_select/take/nonzero, quantile, histc); and cumsum/cumprod with a bool dtype
or out= (torch has no bool scan kernel; ember returned int64); empty inputs: a boolean mask with
no elements but the wrong shape (numpy does not check it: ember indexed silently), an index into
an empty dim, index_select and take from nothing, bincount of no values with weights (torch's
int64 zeros), and std/var's degrees-of-freedom warning for an empty input; the argument errors of gather,
scatter_add, scatter_reduce, index_select/add/copy/fill, take_along_dim and where (ember named
its private ops, ``_gather()``, with their positions) and of topk's and kthvalue's float ``k``;
and torch's memory-overlap refusal for in-place index ops reading what they write (index_add_/
copy_/reduce_, scatter_/scatter_add_/scatter_reduce_, index_put_ and setitem, a partial overlap
in a setitem's copy, gather/index_select with an out= inside their input), where ember wrote a
result; index_put_'s accumulate (never a masked fill: another dtype is refused), its list
indices (torch's TypeError) and an accumulated value broadcast along the indexed rows; histogram's
non-finite ranges (given or the data's) and bins tensors of fewer than two edges, histc's float
``bins`` and its printing of a given NaN range, and bincount's float ``minlength``."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

NAN = np.nan


def _both(fn):
    """``fn(torch)`` and ``fn(ember)``, as numpy arrays (tuples elementwise)."""
    out = []
    for m in (torch, ember):
        r = fn(m)
        out.append(tuple(np.asarray(x.detach().numpy()) for x in r) if isinstance(r, tuple) else r)
    return out


def _same_error(fn, exc=None):
    """``fn`` raises the same error type and message under torch and ember."""
    same_error(fn, exc or Exception)


def _grads(fn, *arrays):
    """The input gradients of ``fn(m, *inputs)`` under a non-uniform upstream gradient, and the
    result's grad_fn name, for torch and for ember."""
    res = []
    for m in (torch, ember):
        ts = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
        y = fn(m, *ts)
        g = np.arange(1, y.numel() + 1, dtype=np.float64).reshape(tuple(y.shape)) / 7
        y.backward(m.tensor(g))
        res.append(([t.grad.numpy() for t in ts], y.grad_fn.name()))
    return res


# ------------------------------------------------------------ quantile: a row holding NaN
QA = np.array([[1.0, NAN, 2, NAN, 3], [NAN] * 5, [1, 2, 3, 4, 5]])


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize(
    "kw", [{"dim": 1}, {"dim": 0, "keepdim": True}, {}], ids=["dim1", "dim0kd", "all"]
)
def test_quantile_grad_of_nan_rows(interp, kw):
    def f(m, x):
        q = m.tensor([0.25, 0.6], dtype=m.float64)
        return m.quantile(x, q, interpolation=interp, **kw)

    (gt, nt), (ge, ne) = _grads(f, QA)
    np.testing.assert_allclose(ge[0], gt[0])
    assert ne == nt


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_q_grad_with_nan_rows(fn):
    a = np.array([[1.0, NAN, 2, NAN, 3], [1, 2, 3, 4, 5]])
    out = []
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        q = m.tensor([0.25, 0.6], dtype=m.float64, requires_grad=True)
        r = getattr(m, fn)(x, q, dim=1)
        r.backward(m.tensor([[1.0, 2], [3, 4]], dtype=m.float64))
        out.append((r.detach().numpy(), x.grad.numpy(), q.grad.numpy()))
    for t, e in zip(*out):
        np.testing.assert_allclose(e, t)


# ------------------------------------------------------------ nanmedian's node
def test_nanmedian_node_names():
    for m in (torch, ember):
        x = m.tensor([[1.0, NAN, 3], [2, 2, 0]], requires_grad=True)
        assert m.nanmedian(x).grad_fn.name() == "NanmedianBackward0"
        assert m.nanmedian(x, 1)[0].grad_fn.name() == "NanmedianBackward1"


# ------------------------------------------------------------ unique's dim
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.unique(m.tensor(3), dim=0),
        lambda m: m.unique(m.tensor(3.0), dim=-1, return_inverse=True),
        lambda m: m.unique_consecutive(m.tensor(5), dim=0),
        lambda m: m.unique_consecutive(m.tensor(5), dim=2),
        lambda m: m.unique(m.zeros(2, 0), dim=0, return_inverse=True, return_counts=True),
        lambda m: m.unique(m.zeros(0, 3), dim=1),
        lambda m: m.unique(m.zeros(2, 0, 3), dim=2),
        lambda m: m.unique_consecutive(m.zeros(2, 0), dim=0, return_counts=True),
        lambda m: m.unique(m.tensor([5]), dim=2),
    ],
)
def test_unique_dim_errors(fn):
    _same_error(fn)


def test_unique_dim_selected_empty_is_fine():
    t, e = _both(lambda m: m.unique(m.zeros(2, 0, 3), dim=1))
    assert t.shape == e.shape == (2, 0, 3)


# ------------------------------------------------------------ setitem through index_put_
X34 = np.arange(12, dtype=np.float32).reshape(3, 4)


def _set(key, value):
    def fn(m):
        x = m.tensor(X34)
        x[key(m)] = value(m)
        return x

    return fn


REFUSED = [  # (key, value): index_put_ wants the value in x's dtype
    (lambda m: m.tensor([0, 2]), lambda m: m.arange(4)),
    (lambda m: m.tensor([0, 2]), lambda m: m.tensor(1)),
    (lambda m: [0, 2], lambda m: m.tensor([1.0], dtype=m.float64)),
    (lambda m: (slice(None), m.tensor([0, 1])), lambda m: m.tensor(1.0, dtype=m.float64)),
    (lambda m: (True,), lambda m: m.tensor([1.0], dtype=m.float64)),
    (lambda m: (0, True), lambda m: m.tensor([1.0], dtype=m.float64)),
    (lambda m: m.tensor(True), lambda m: m.tensor(True)),
    (lambda m: m.tensor([True, False, True]), lambda m: m.arange(4)),  # a mask, 4 values
    (lambda m: m.tensor([3]), lambda m: m.tensor(1)),  # refused before the range check
    (lambda m: m.tensor([0, 2]), lambda m: m.zeros(4, dtype=m.float16)),
]


@pytest.mark.parametrize("key,value", REFUSED)
def test_setitem_index_put_refuses_other_dtype(key, value):
    _same_error(_set(key, value), RuntimeError)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
        _set(key, value)(ember)


CONVERTED = [  # a view's copy_, a 0-dim int index, or a one-element masked fill convert
    (lambda m: 0, lambda m: m.arange(4)),
    (lambda m: (slice(None), 1), lambda m: m.arange(3)),
    (lambda m: ..., lambda m: m.zeros(4, dtype=m.float16)),
    (lambda m: True, lambda m: m.tensor([1.0], dtype=m.float64)),
    (lambda m: m.tensor(1), lambda m: m.zeros(4, dtype=m.float16)),
    (lambda m: m.tensor([True, False, True]), lambda m: m.tensor([1.0], dtype=m.float64)),
    (lambda m: (None, m.tensor([[True] * 4] * 3)), lambda m: m.tensor([7], dtype=m.int64)),
    (lambda m: (m.tensor([True] * 3), 1), lambda m: m.tensor(2.0, dtype=m.float64)),
    (lambda m: [True, False, True], lambda m: m.tensor(True)),
    (lambda m: m.tensor([0, 2]), lambda m: 2),
]


@pytest.mark.parametrize("key,value", CONVERTED)
def test_setitem_converting_keys(key, value):
    t, e = _both(_set(key, value))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert e.dtype is ember.float32


@pytest.mark.parametrize(
    "key,value",
    [
        # the value's shape is checked first
        (lambda m: (m.tensor([0, 2]), slice(None)), lambda m: m.arange(5)),
        (lambda m: (m.tensor([0, 2]), m.tensor([1, 3])), lambda m: m.ones(3, dtype=m.float64)),
        # and a mask's shape before that
        (lambda m: (None, m.tensor([[True] * 4] * 2)), lambda m: m.arange(5)),
        # numpy's words for a value of more dims than a mask's result
        (lambda m: m.tensor(X34 > 3), lambda m: m.ones(4, 1)),
    ],
)
def test_setitem_checks_before_dtype(key, value):
    _same_error(_set(key, value))


def test_index_put_same_refusal():
    def fn(m):
        return m.tensor(X34).index_put_((m.tensor([0, 2]),), m.tensor(1.0, dtype=m.float64))

    _same_error(fn, RuntimeError)


@pytest.mark.parametrize(
    "key,value", [(0, 1 + 2j), (slice(0, 2), [1 + 2j, 3j])], ids=["fill", "copy"]
)
def test_setitem_complex_into_real_warns_like_copy(key, value):
    # torch warns once per process (its C++ warning), ember each time: compare the text only
    x = ember.zeros(3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x[key] = ember.tensor(value)
    assert [(c.category, str(c.message)) for c in w] == [
        (UserWarning, "Casting complex values to real discards the imaginary part")
    ]
    y = torch.zeros(3)
    y[key] = torch.tensor(value)
    assert x.tolist() == y.tolist()


# ------------------------------------------------------------ grad_fn names
NODE_CASES = {
    "masked_fill": lambda m, x: m.masked_fill(x, x > 0, m.tensor(1.0)),
    "masked_fill_": lambda m, x: (x * 1).masked_fill_(x > 0, m.tensor(1.0)),
    "masked_fill number": lambda m, x: m.masked_fill(x, x > 0, 1.0),
    "index_fill": lambda m, x: x.index_fill(1, m.tensor([0]), m.tensor(1.0)),
    "index_fill_": lambda m, x: (x * 1).index_fill_(1, m.tensor([0]), m.tensor(1.0)),
    "index_fill number": lambda m, x: x.index_fill(1, m.tensor([0]), 1.0),
    "scatter src": lambda m, x: x.scatter(1, m.tensor([[0, 1, 0]]), x),
    "scatter value": lambda m, x: x.scatter(1, m.tensor([[0, 1, 0]]), 2.0),
    "scatter_ value": lambda m, x: (x * 1).scatter_(1, m.tensor([[0, 1, 0]]), 2.0),
    "scatter reduce": lambda m, x: x.scatter(1, m.tensor([[0, 1, 0]]), 2.0, reduce="add"),
    "index_reduce": lambda m, x: x.index_reduce(0, m.tensor([0, 0]), x, "amax"),
    "index_reduce prod": lambda m, x: x.index_reduce(0, m.tensor([0, 0]), x, "prod"),
    "index_reduce_": lambda m, x: (x * 1).index_reduce_(0, m.tensor([0, 0]), x, "mean"),
    "narrow_copy": lambda m, x: m.narrow_copy(x, 1, 0, 2),
    "msort": lambda m, x: m.msort(x),
    "nanmean": lambda m, x: m.nanmean(x),
    "norm nuc": lambda m, x: m.norm(x, "nuc"),
    "norm fro": lambda m, x: m.norm(x, "fro"),
}


@pytest.mark.parametrize("name", list(NODE_CASES))
def test_node_names(name):
    fn = NODE_CASES[name]
    names = []
    for m in (torch, ember):
        x = m.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], requires_grad=True)
        names.append(fn(m, x).grad_fn.name())
    assert names[1] == names[0]


def test_scatter_reduce_has_no_derivative():
    x = ember.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    y = x.scatter(1, ember.tensor([[0, 1, 0]]), 2.0, reduce="add")
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()


# ------------------------------------------------------------ bool accumulation, alpha
B = [[True, False, False], [False, False, True]]
S = [[True, True, False], [False, True, True]]


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.tensor(B).index_add(0, m.tensor([0, 0]), m.tensor(S)),
        lambda m: m.tensor(B).index_add(0, m.tensor([1, 0]), m.tensor(S), alpha=2),
        lambda m: m.tensor(B).index_add(0, m.tensor([0, 0]), m.tensor(S), alpha=False),
        lambda m: m.tensor(B).index_put((m.tensor([0, 0]),), m.tensor(S), accumulate=True),
        lambda m: m.tensor(B).index_put_(
            (m.tensor([1, 1]), m.tensor([0, 0])), m.tensor(True), accumulate=True
        ),
        lambda m: m.tensor(B).scatter_add(0, m.tensor([[0, 0, 0], [0, 0, 0]]), m.tensor(S)),
        lambda m: m.tensor([1, 2, 3]).index_add(0, m.tensor([0, 0]), m.tensor([1, 3]), alpha=0.5),
        lambda m: m.tensor([1, 2, 3]).index_add(0, m.tensor([0, 2]), m.tensor([1, 3]), alpha=-1.5),
        lambda m: m.tensor([1, 2], dtype=m.uint8).index_add(
            0, m.tensor([0, 0]), m.tensor([255, 3], dtype=m.uint8)
        ),
    ],
)
def test_accumulate_bool_and_integer_alpha(fn):
    t, e = _both(fn)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.tensor(B).scatter_reduce(
            0, m.tensor([[0, 0, 0], [0, 0, 0]]), m.tensor(S), "mean"
        ),
        lambda m: m.tensor(B).index_reduce(0, m.tensor([0, 0]), m.tensor(S), "mean"),
    ],
)
def test_bool_mean_reductions_not_implemented(fn):
    _same_error(fn, NotImplementedError)


# ------------------------------------------------------------ searchsorted
def test_searchsorted_sorter_out_of_range():
    def fn(m):
        return m.searchsorted(m.tensor([5.0, 1, 3]), m.tensor([2.0, 4]), sorter=m.tensor([1, 2, 5]))

    _same_error(fn, RuntimeError)


@pytest.mark.parametrize(
    "seq,vals",
    [
        ([1.0, 2, NAN], [NAN, 1.5, 5.0, 2.0]),
        ([0.0, 1, NAN, NAN], [NAN, 0.0, 3.0]),
        ([0.0, 1, 2, 3, 4, 5], [NAN, 2.0, -1.0]),
        ([[1.0, NAN, NAN], [0.0, 2.0, 3.0]], [[NAN, 1.0], [2.0, NAN]]),
    ],
)
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_with_nan(seq, vals, right):
    t, e = _both(lambda m: m.searchsorted(m.tensor(seq), m.tensor(vals), right=right))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    if np.ndim(seq) == 1:
        t, e = _both(lambda m: m.bucketize(m.tensor(vals), m.tensor(seq), right=right))
        np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.searchsorted(m.tensor([False, True]), m.tensor([True])),
        lambda m: m.bucketize(m.tensor([True]), m.tensor([False, True])),
    ],
)
def test_searchsorted_bool_not_implemented(fn):
    _same_error(fn, NotImplementedError)


# ------------------------------------------------------------ roll, narrow, narrow_copy
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.tensor(1.0).roll(1, 0),
        lambda m: m.tensor(1.0).roll(1, -1),
        lambda m: m.tensor(1.0).roll((1, 1), (5, 0)),
        lambda m: m.tensor(1.0).roll((1, 2), (0,)),
    ],
)
def test_roll_zero_dim_with_dims(fn):
    _same_error(fn)


def test_roll_zero_dim_without_dims():
    t, e = _both(lambda m: m.tensor(1.0).roll(1))
    assert e.item() == t.item()


X23 = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.narrow(m.tensor(X23), 1, m.tensor(1.0), 2),
        lambda m: m.narrow(m.tensor(X23), 1, m.tensor([1]), 2),
        lambda m: m.narrow(m.tensor(X23), 1, m.tensor(True), 2),
        lambda m: m.narrow_copy(m.tensor(X23), 2, 0, 1),
        lambda m: m.narrow_copy(m.tensor(X23), 1, 0, -1),
        lambda m: m.narrow_copy(m.tensor(X23), 1, -1, -1),
        lambda m: m.narrow_copy(m.tensor(X23), -3, 0, 1),
        lambda m: m.narrow_copy(m.tensor(X23), 1, 5, 0),
        lambda m: m.narrow_copy(m.tensor(1.0), 0, 0, 1),
    ],
)
def test_narrow_errors(fn):
    _same_error(fn)


def test_narrow_integral_tensor_start():
    t, e = _both(lambda m: m.narrow(m.tensor(X23), 1, m.tensor(1, dtype=m.int32), 2))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    (gt, nt), (ge, ne) = _grads(lambda m, x: m.narrow_copy(x, 1, 1, 2), X23)
    np.testing.assert_allclose(ge[0], gt[0])
    assert ne == nt == "NarrowCopyBackward0"


# ------------------------------------------------------------ out= of another dtype
XO = [[0.5, 1.5, -2.0], [3.0, 0.0, 1.0]]


def _e(m, *shape, dtype):
    return m.empty(*shape, dtype=getattr(m, dtype))


OUT_REFUSED = {
    "max values": lambda m: m.max(m.tensor(XO), 1, out=(_e(m, 2, dtype="float64"),
                                                        _e(m, 2, dtype="int64"))),
    "max indices": lambda m: m.max(m.tensor(XO), 1, out=(_e(m, 2, dtype="float32"),
                                                         _e(m, 2, dtype="int32"))),
    "min values": lambda m: m.min(m.tensor(XO), 1, out=(_e(m, 2, dtype="float64"),
                                                        _e(m, 2, dtype="int64"))),
    "argmax": lambda m: m.argmax(m.tensor(XO), 1, out=_e(m, 2, dtype="float32")),
    "argmin": lambda m: m.argmin(m.tensor(XO), 1, out=_e(m, 2, dtype="int32")),
    "aminmax": lambda m: m.aminmax(m.tensor(XO), dim=1, out=(_e(m, 2, dtype="float64"),
                                                             _e(m, 2, dtype="float32"))),
    "norm": lambda m: m.norm(m.tensor(XO), 2, 1, out=_e(m, 2, dtype="float64")),
    "sort": lambda m: m.sort(m.tensor(XO), 1, out=(_e(m, 2, 3, dtype="float64"),
                                                   _e(m, 2, 3, dtype="int64"))),
    "sort indices": lambda m: m.sort(m.tensor(XO), 1, out=(_e(m, 2, 3, dtype="float32"),
                                                           _e(m, 2, 3, dtype="int32"))),
    "topk": lambda m: m.topk(m.tensor(XO), 1, out=(_e(m, 2, 1, dtype="float64"),
                                                   _e(m, 2, 1, dtype="int64"))),
    "msort": lambda m: m.msort(m.tensor(XO), out=_e(m, 2, 3, dtype="float64")),
    "median values": lambda m: m.median(m.tensor(XO), 1, out=(_e(m, 2, dtype="float64"),
                                                              _e(m, 2, dtype="int64"))),
    "median indices": lambda m: m.median(m.tensor(XO), 1, out=(_e(m, 2, dtype="float32"),
                                                               _e(m, 2, dtype="int32"))),
    "nanmedian values": lambda m: m.nanmedian(m.tensor(XO), 1, out=(_e(m, 2, dtype="float64"),
                                                                    _e(m, 2, dtype="int64"))),
    "kthvalue values": lambda m: m.kthvalue(m.tensor(XO), 1, 1, out=(_e(m, 2, dtype="float64"),
                                                                     _e(m, 2, dtype="int64"))),
    "kthvalue indices": lambda m: m.kthvalue(m.tensor(XO), 1, 1, out=(_e(m, 2, dtype="float32"),
                                                                      _e(m, 2, dtype="int32"))),
    "mode values": lambda m: m.mode(m.tensor(XO), 1, out=(_e(m, 2, dtype="float64"),
                                                          _e(m, 2, dtype="int64"))),
    "mode indices": lambda m: m.mode(m.tensor(XO), 1, out=(_e(m, 2, dtype="float32"),
                                                           _e(m, 2, dtype="int32"))),
    "cummax": lambda m: m.cummax(m.tensor(XO), 1, out=(_e(m, 2, 3, dtype="float64"),
                                                       _e(m, 2, 3, dtype="int64"))),
    "cummin indices": lambda m: m.cummin(m.tensor(XO), 1, out=(_e(m, 2, 3, dtype="float32"),
                                                               _e(m, 2, 3, dtype="int32"))),
    "any": lambda m: m.any(m.tensor(XO), 1, out=_e(m, 2, dtype="float32")),
    "all": lambda m: m.all(m.tensor(XO), out=_e(m, (), dtype="int64")),
    "gather": lambda m: m.gather(m.tensor(XO), 1, m.tensor([[0], [1]]),
                                 out=_e(m, 2, 1, dtype="float64")),
    "index_select": lambda m: m.index_select(m.tensor(XO), 1, m.tensor([0]),
                                             out=_e(m, 2, 1, dtype="float64")),
    "masked_select": lambda m: m.masked_select(m.tensor(XO), m.tensor(XO) > 0,
                                               out=_e(m, 0, dtype="float64")),
    "take": lambda m: m.take(m.tensor(XO), m.tensor([0]), out=_e(m, 1, dtype="float64")),
    "nonzero": lambda m: m.nonzero(m.tensor(XO), out=_e(m, 0, dtype="int32")),
    "quantile": lambda m: m.quantile(m.tensor(XO), 0.5, 1, out=_e(m, 2, dtype="float64")),
    "histc": lambda m: m.histc(m.tensor(XO), 4, out=_e(m, 4, dtype="float64")),
    "cumsum bool": lambda m: m.cumsum(m.tensor([True]), 0, out=_e(m, 1, dtype="bool")),
}  # fmt: skip


@pytest.mark.parametrize("name", list(OUT_REFUSED))
def test_out_of_another_dtype_refused(name):
    _same_error(OUT_REFUSED[name])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.max(m.tensor(XO), m.tensor(XO), out=_e(m, 2, 3, dtype="float64")),
        lambda m: m.all(m.tensor(XO), 1, out=_e(m, 2, dtype="bool")),
        lambda m: m.cumsum(m.tensor([True, True]), 0, out=_e(m, 2, dtype="float32")),
        lambda m: m.sum(m.tensor(XO), 1, out=_e(m, 2, dtype="float64")),
    ],
)
def test_out_casts_where_torch_does(fn):
    t, e = _both(fn)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.numpy(), t.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.cumsum(m.tensor(XO) > 0, 1, dtype=m.bool),
        lambda m: m.cumprod(m.tensor([True]), 0, dtype=m.bool),
        lambda m: m.cumsum(m.tensor(XO), 1, dtype=m.bool),
    ],
)
def test_bool_scans_not_implemented(fn):
    _same_error(fn, NotImplementedError)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.cumsum(m.tensor(1.0), 0, dtype=m.bool),
        lambda m: m.cumsum(m.zeros(0), 0, dtype=m.bool),
        lambda m: m.cumprod(m.zeros(2, 0), 1, dtype=m.bool),
    ],
)
def test_bool_scans_of_nothing(fn):
    t, e = _both(fn)
    assert e.dtype is ember.bool and t.dtype is torch.bool
    assert e.shape == t.shape


# ------------------------------------------------------------ empty inputs
XE = np.arange(6, dtype=np.float32).reshape(2, 3)


def _empty_set(key):
    def fn(m):
        x = m.tensor(XE)
        x[key(m)] = 5.0
        return x

    return fn


EMPTY_KEYS = [
    lambda m: m.zeros(0, 3, dtype=m.bool),
    lambda m: m.zeros(0, dtype=m.bool),
    lambda m: (slice(None), m.zeros(0, dtype=m.bool)),
    lambda m: (0, m.zeros(0, dtype=m.bool)),
]


@pytest.mark.parametrize("key", EMPTY_KEYS)
def test_empty_mask_of_the_wrong_shape(key):
    _same_error(lambda m: m.tensor(XE)[key(m)], IndexError)
    _same_error(_empty_set(key), IndexError)


def test_empty_mask_of_the_right_shape():
    t, e = _both(lambda m: m.zeros(0, 3)[m.zeros(0, 3, dtype=m.bool)])
    assert tuple(e.shape) == tuple(t.shape) == (0,)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(0, 3)[m.tensor([[0]]), m.tensor([[0, 1, 2]])],
        lambda m: m.zeros(2, 0)[:, m.tensor([0])],
        lambda m: m.zeros(0, 3).index_select(0, m.tensor([0])),
        lambda m: m.zeros(0, 3).take(m.tensor([0])),
    ],
)
def test_indexing_into_nothing(fn):
    _same_error(fn)


def test_indexing_nothing_out_of_nothing():
    for fn in (
        lambda m: m.zeros(0, 3).index_select(0, m.tensor([], dtype=m.int64)),
        lambda m: m.zeros(0, 3).take(m.tensor([], dtype=m.int64)),
    ):
        t, e = _both(fn)
        assert tuple(e.shape) == tuple(t.shape)


@pytest.mark.parametrize("minlength", [0, 3])
@pytest.mark.parametrize("wdtype", ["float32", "float64"])
def test_bincount_of_nothing_with_weights(minlength, wdtype):
    def fn(m):
        w = m.zeros(0, dtype=getattr(m, wdtype))
        return m.bincount(m.zeros(0, dtype=m.int64), w, minlength=minlength)

    t, e = _both(fn)
    assert e.dtype is ember.int64 and t.dtype is torch.int64
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(0, 3).std(1),
        lambda m: m.zeros(0, 3).var(1, correction=0),
        lambda m: m.zeros(2, 0).var(1, correction=0),
        lambda m: m.var_mean(m.zeros(0, 3), 1)[0],
    ],
)
def test_dof_warning_of_empty_inputs(fn):
    got = []
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn(m)
        got.append(([str(c.message).split(" (Triggered")[0] for c in w], tuple(r.shape)))
    assert got[1] == got[0]
    assert got[1][0] and "degrees of freedom is <= 0" in got[1][0][0]


# ------------------------------------------------------------ argument errors
_X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
ARG_ERRORS = [
    lambda m: m.index_select(m.tensor(_X), 0, [0]),
    lambda m: m.index_select([1.0], 0, m.tensor([0])),
    lambda m: m.index_select(m.tensor(_X), 1.5, m.tensor([0])),
    lambda m: m.gather(m.tensor(_X), 1, [[0]]),
    lambda m: m.gather(m.tensor(_X), 1.5, m.tensor([[0]])),
    lambda m: m.scatter_add(m.tensor(_X), 1, [[0]], m.tensor(_X)),
    lambda m: m.scatter_add(m.tensor(_X), 1, m.tensor([[0]]), [[1.0]]),
    lambda m: m.scatter_reduce(m.tensor(_X), 1, [[0]], m.tensor(_X), "sum"),
    lambda m: m.index_add(m.tensor(_X), 0, [0], m.tensor(_X)),
    lambda m: m.index_add(m.tensor(_X), 0, m.tensor([0]), [[1.0, 2, 3]]),
    lambda m: m.index_copy(m.tensor(_X), 0, [0], m.tensor(_X)),
    lambda m: m.take_along_dim(m.tensor(_X), [[0]], 1),
    lambda m: m.topk(m.tensor(_X), 1.5),
    lambda m: m.kthvalue(m.tensor(_X), 1.5),
]


@pytest.mark.parametrize("fn", ARG_ERRORS)
def test_argument_errors(fn):
    _same_error(fn, TypeError)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.where([True], m.tensor(_X), m.tensor(_X)),
        lambda m: m.scatter(m.tensor(_X), 1, [[0]], 1.0),
        lambda m: m.index_fill(m.tensor(_X), 0, [0], 1.0),
    ],
)
def test_argument_errors_name_the_public_op(fn):
    # torch lists its overloads here (ember as well since wave 35, without torch's
    # per-overload "didn't match" explanations)
    with pytest.raises(TypeError) as ee:
        fn(ember)
    with pytest.raises(TypeError) as te:
        fn(torch)
    assert not str(ee.value).startswith("_")
    assert str(ee.value).split("\n")[0] == str(te.value).split("\n")[0]


# ------------------------------------------------------------ memory overlap
def _x34(m):
    return m.arange(12.0).reshape(3, 4)


OVERLAPPING = [
    lambda m, x: x[:2].index_copy_(0, m.tensor([1, 0]), x[1:]),
    lambda m, x: x.index_add_(0, m.tensor([0]), x[:1]),
    lambda m, x: x.index_reduce_(0, m.tensor([0]), x[:1], "amax"),
    lambda m, x: x.scatter_(1, m.tensor([[0]]), x[:1, :1]),
    lambda m, x: x.scatter_add_(1, m.tensor([[2, 1, 0, 3]]), x[:1]),
    lambda m, x: x.scatter_reduce_(1, m.tensor([[0]]), x[:1, :1], "sum"),
    lambda m, x: x.index_put_((m.tensor([1, 0, 2]),), x),
    lambda m, x: x.__setitem__(m.tensor([0]), x[:1]),
    lambda m, x: x.__setitem__((m.tensor([0]), m.tensor([0])), x[0, 0]),
    lambda m, x: x.__setitem__(slice(0, 2), x[1:]),
    lambda m, x: m.gather(x, 1, m.tensor([[0]]), out=x[2:, :1]),
    lambda m, x: m.index_select(x, 0, m.tensor([0]), out=x[2:]),
    lambda m, x: x.view(-1).index_copy_(0, x.view(-1)[:1].long(), x.view(-1)[1:2]),
    lambda m, x: _index_from_self(m),
]


def _index_from_self(m):
    y = m.arange(5)
    return y.index_copy_(0, y[:1], m.tensor([1]))


@pytest.mark.parametrize("fn", OVERLAPPING)
def test_overlapping_writes_refused(fn):
    _same_error(lambda m: fn(m, _x34(m)), RuntimeError)


NOT_OVERLAPPING = [  # disjoint, strided (torch cannot tell) or the very same elements
    lambda m, x: x[:, :2].index_copy_(0, m.tensor([1, 0, 2]), x[:, 2:]),
    lambda m, x: x[:1].index_copy_(0, m.tensor([0]), x[2:]),
    lambda m, x: x[:, 0].index_copy_(0, m.tensor([1, 0, 2]), x[:, 1]),
    lambda m, x: (x.__setitem__(0, x[1]), x)[1],
    lambda m, x: (x.__setitem__(..., x), x)[1],
    lambda m, x: (x.__setitem__(x > 3, x[x > 3] * 2), x)[1],
    lambda m, x: x.masked_fill_(x > 3, x[0, 0]),
    lambda m, x: x.index_fill_(0, m.tensor([0]), x[1, 1]),
]


@pytest.mark.parametrize("fn", NOT_OVERLAPPING)
def test_writes_torch_allows(fn):
    t, e = _both(lambda m: fn(m, _x34(m)))
    np.testing.assert_array_equal(e.numpy(), t.numpy())


# ------------------------------------------------------------ index_put_
M3 = [True, False, True]


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, 2).index_put_(
            (m.tensor(M3),), m.tensor(1.0, dtype=m.float64), accumulate=True
        ),
        lambda m: m.zeros(3, 2).index_put_(([0, 1],), m.tensor(2.0)),
    ],
)
def test_index_put_refusals(fn):
    _same_error(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, 2).index_put_(
            (m.tensor([0, 0]),), m.tensor([[1.0, 2.0]]), accumulate=True
        ),
        lambda m: m.zeros(3, 2).index_put_(
            (m.tensor([2, 0, 2]),), m.tensor([5.0]), accumulate=True
        ),
        lambda m: m.zeros(3, 2).index_put_((m.tensor(M3),), m.tensor(1.0), accumulate=True),
        lambda m: m.zeros(3, 2).index_put_((m.tensor(M3),), m.tensor([1.0], dtype=m.float64)),
    ],
)
def test_index_put_accumulate_broadcasts(fn):
    t, e = _both(fn)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


# ------------------------------------------------------------ histograms
_H = [0.5, -1.0, 2.0, 0.25, 1.5, -0.5]
NAN_INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.histogram(m.tensor(_H), 3, range=(0.0, NAN_INF[1])),
        lambda m: m.histogram(m.tensor(_H), 3, range=(NAN_INF[0], 1.0)),
        lambda m: m.histogram(m.tensor([1.0, NAN_INF[0]]), 3),
        lambda m: m.histogram(m.tensor([1.0, NAN_INF[1]]), 3),
        lambda m: m.histogram(m.tensor(_H), m.tensor([0.0])),
        lambda m: m.histogram(m.tensor(_H), m.tensor([])),
        lambda m: m.histogramdd(
            m.tensor(_H).reshape(3, 2), [3, 3], range=[0.0, 1.0, 0.0, NAN_INF[1]]
        ),
        lambda m: m.histc(m.tensor(_H), 3.5),
        lambda m: m.histc(m.tensor(_H), 4, min=NAN_INF[0], max=1),
        lambda m: m.histc(m.tensor([NAN_INF[0], 1.0]), 3),
        lambda m: m.histc(m.tensor([NAN_INF[1], 1.0]), 3),
        lambda m: m.bincount(m.tensor([0, 1, 1]), minlength=2.5),
    ],
)
def test_histogram_errors(fn):
    _same_error(fn)
