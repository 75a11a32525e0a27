"""Sorting, selection, sets and search: sort, argsort, msort, topk, kthvalue, unique,
unique_consecutive, isin, searchsorted, bucketize. Parity with torch (values, dtypes, shapes,
indices on tie-free inputs, gradients), float64 gradcheck/gradgradcheck, stable ties, NaN order,
named-tuple results, names, and torch's errors."""

import ember
import numpy as np
import pytest
from harness import (
    A,
    Case,
    assert_same,
    needs_torch,
    raises_like_torch,
    run_case,
    run_gradcheck,
    values_only,
)

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


I64 = {"dtype": "int64", "low": -9, "high": 9}

# differentiable ops: each row gets parity AND gradcheck(gradgrad=True)
DIFF = [
    Case("sort", lambda m, x: m.sort(x), [A(3, 5)]),
    Case("sort_dim0_desc", lambda m, x: x.sort(0, True), [A(4, 3)]),
    Case("sort_stable_kw", lambda m, x: m.sort(x, stable=True, dim=1, descending=True), [A(3, 4)]),
    Case("sort_3d_mid", lambda m, x: x.sort(dim=-2), [A(2, 4, 3)]),
    Case("sort_scalar", lambda m, x: x.sum().sort(0), [A(3)]),
    Case("msort", lambda m, x: m.msort(x), [A(4, 3)]),
    Case("msort_method", lambda m, x: x.msort(), [A(5)]),
    Case("topk", lambda m, x: m.topk(x, 2), [A(3, 5)]),
    Case("topk_smallest_dim0", lambda m, x: x.topk(3, 0, largest=False), [A(4, 3)]),
    Case("topk_all", lambda m, x: x.topk(4, dim=1), [A(2, 4)]),
    Case("topk_kw", lambda m, x: m.topk(x, k=1, dim=-1, largest=True, sorted=True), [A(2, 3, 4)]),
    Case("topk_partial", lambda m, x: x.topk(3), [A(3, 40)]),
    Case("topk_partial_smallest", lambda m, x: x.topk(2, 0, largest=False), [A(30, 2)]),
    Case("kthvalue", lambda m, x: m.kthvalue(x, 2), [A(3, 5)]),
    Case("kthvalue_long", lambda m, x: m.kthvalue(x, 17), [A(2, 40)]),
    Case("kthvalue_dim0_keep", lambda m, x: x.kthvalue(3, 0, True), [A(4, 3)]),
    Case("kthvalue_kw", lambda m, x: x.kthvalue(k=1, dim=1), [A(2, 3, 4)]),
]

NONDIFF = [
    Case("sort_int", lambda m, x: x.sort(dim=1, stable=True), [A(3, 20, **I64)]),
    Case(
        "sort_int_desc",
        lambda m, x: m.sort(x, dim=0, descending=True, stable=True),
        [A(20, 3, **I64)],
    ),
    Case("sort_bool", lambda m, x: x.sort(dim=0, stable=True), [A(9, dtype="bool")]),
    Case(
        "sort_uint8_desc",
        lambda m, x: x.sort(descending=True, stable=True),
        [A(12, dtype="uint8", low=0, high=5)],
    ),
    Case("sort_float64", lambda m, x: x.sort(), [A(3, 4, dtype="float64")]),
    Case("argsort", lambda m, x: m.argsort(x), [A(3, 5)]),
    Case("argsort_desc", lambda m, x: x.argsort(0, True), [A(4, 3)]),
    Case("argsort_stable", lambda m, x: x.argsort(stable=True, dim=1), [A(3, 20, **I64)]),
    Case(
        "argsort_stable_desc",
        lambda m, x: m.argsort(x, stable=True, descending=True),
        [A(30, **I64)],
    ),
    Case("msort_int", lambda m, x: x.msort(), [A(5, 3, **I64)]),
    Case("topk_int", lambda m, x: x.topk(2, 1), [A(3, 5, dtype="int32", low=-99, high=99)]),
    Case("kthvalue_int", lambda m, x: x.kthvalue(2, 1), [A(3, 5, dtype="int64", low=-99, high=99)]),
    Case("unique", lambda m, x: m.unique(x), [A(4, 5, **I64)]),
    Case(
        "unique_method", lambda m, x: x.unique(sorted=True), [A(20, dtype="int32", low=0, high=6)]
    ),
    Case(
        "unique_all",
        lambda m, x: m.unique(x, return_inverse=True, return_counts=True),
        [A(4, 5, **I64)],
    ),
    Case(
        "unique_unsorted",
        lambda m, x: x.unique(sorted=False, return_inverse=True),
        [A(12, dtype="int64", low=0, high=20)],
    ),
    Case("unique_inverse", lambda m, x: x.unique(return_inverse=True), [A(3, 4, dtype="int16")]),
    Case("unique_counts", lambda m, x: x.unique(return_counts=True), [A(12, dtype="bool")]),
    Case("unique_float", lambda m, x: m.unique(x.round()), [A(4, 5, grad=False)]),
    Case(
        "unique_dim0",
        lambda m, x: m.unique(x, dim=0, return_inverse=True, return_counts=True),
        [A(8, 2, dtype="int64", low=0, high=1)],
    ),
    Case(
        "unique_dim1",
        lambda m, x: x.unique(dim=1, return_counts=True),
        [A(2, 9, dtype="int64", low=0, high=1)],
    ),
    Case(
        "unique_dim_neg", lambda m, x: x.unique(dim=-1), [A(2, 3, 6, dtype="int8", low=0, high=1)]
    ),
    Case("unique_scalar", lambda m, x: x.sum().unique(), [A(3, **I64)]),
    Case(
        "unique_consecutive",
        lambda m, x: m.unique_consecutive(x),
        [A(20, dtype="int64", low=0, high=2)],
    ),
    Case(
        "unique_consecutive_all",
        lambda m, x: x.unique_consecutive(return_inverse=True, return_counts=True),
        [A(4, 6, dtype="int64", low=0, high=1)],
    ),
    Case(
        "unique_consecutive_dim0",
        lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True, dim=0),
        [A(10, 2, dtype="int64", low=0, high=1)],
    ),
    Case(
        "unique_consecutive_dim1",
        lambda m, x: x.unique_consecutive(dim=1),
        [A(1, 12, dtype="int64", low=0, high=1)],
    ),
    Case("isin", lambda m, x, y: m.isin(x, y), [A(4, 5, **I64), A(6, **I64)]),
    Case(
        "isin_invert", lambda m, x, y: m.isin(x, y, invert=True), [A(4, 5, **I64), A(2, 3, **I64)]
    ),
    Case("isin_scalar_test", lambda m, x: m.isin(x, 3), [A(4, 5, **I64)]),
    Case("isin_scalar_elem", lambda m, y: m.isin(2, y), [A(6, **I64)]),
    Case(
        "isin_unique", lambda m, x: m.isin(x, m.tensor([1, 3]), assume_unique=True), [A(7, **I64)]
    ),
    Case(
        "isin_mixed",
        lambda m, x, y: m.isin(x, y.round()),
        [A(9, **I64), A(4, low=-9, high=9, grad=False)],
    ),
    Case(
        "searchsorted",
        lambda m, s, v: m.searchsorted(s.sort().values, v),
        [A(6, grad=False), A(3, 4, grad=False)],
    ),
    Case(
        "searchsorted_right",
        lambda m, s, v: m.searchsorted(s.sort().values, v, right=True),
        [A(6, **I64), A(9, **I64)],
    ),
    Case(
        "searchsorted_side",
        lambda m, s, v: m.searchsorted(s.sort().values, v, side="right"),
        [A(6, **I64), A(2, 5, **I64)],
    ),
    Case(
        "searchsorted_batched",
        lambda m, s, v: m.searchsorted(s.sort(-1).values, v),
        [A(2, 3, 6, grad=False), A(2, 3, 4, grad=False)],
    ),
    Case(
        "searchsorted_batched_right",
        lambda m, s, v: m.searchsorted(s.sort(-1).values, v, right=True, out_int32=True),
        [A(3, 7, **I64), A(3, 5, **I64)],
    ),
    Case(
        "searchsorted_sorter",
        lambda m, s, v: m.searchsorted(s, v, sorter=s.argsort()),
        [A(7, grad=False), A(5, grad=False)],
    ),
    Case(
        "searchsorted_scalar", lambda m, s: m.searchsorted(s.sort().values, 0.5), [A(6, grad=False)]
    ),
    Case(
        "searchsorted_int32",
        lambda m, s, v: m.searchsorted(s.sort().values, v, out_int32=True),
        [A(6, grad=False), A(4, grad=False)],
    ),
    Case(
        "bucketize",
        lambda m, x, b: m.bucketize(x, b.sort().values),
        [A(3, 4, grad=False), A(5, grad=False)],
    ),
    Case(
        "bucketize_right",
        lambda m, x, b: m.bucketize(x, b.sort().values, right=True),
        [A(3, 8, **I64), A(5, **I64)],
    ),
    Case(
        "bucketize_int32",
        lambda m, x, b: m.bucketize(x, b.sort().values, out_int32=True),
        [A(7, grad=False), A(5, grad=False)],
    ),
    Case("bucketize_scalar", lambda m, b: m.bucketize(0.25, b.sort().values), [A(5, grad=False)]),
]


@needs_torch
@pytest.mark.parametrize("case", DIFF + NONDIFF, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", [values_only(c) for c in DIFF if c.gradcheck], ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


# ---------------------------------------------------------------------- ties and NaN
TIES = np.array([[2.0, 1.0, 2.0, 0.0, 1.0, 2.0], [5.0, 5.0, 5.0, 5.0, 3.0, 3.0]], np.float32)


@needs_torch
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_stable_sort_ties(descending, dim):
    e = ember.tensor(TIES, requires_grad=True)
    t = torch.tensor(TIES, requires_grad=True)
    ev, ei = ember.sort(e, dim=dim, descending=descending, stable=True)
    tv, ti = torch.sort(t, dim=dim, descending=descending, stable=True)
    assert_same(ev, tv)
    assert_same(ei, ti)
    assert_same(
        ember.argsort(e, dim=dim, descending=descending, stable=True),
        torch.argsort(t, dim=dim, descending=descending, stable=True),
    )
    # the gradient follows the (stable) indices: each element gets its own upstream value
    up = np.arange(1, TIES.size + 1, dtype=np.float32).reshape(TIES.shape)
    ev.backward(ember.tensor(up))
    tv.backward(torch.tensor(up))
    assert_same(e.grad, t.grad)


NANS = np.array([[3.0, np.nan, 1.0, -2.0, 0.5], [np.nan, 2.0, np.nan, -1.0, 4.0]], np.float32)


@needs_torch
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.sort(1),
        lambda m, x: x.sort(1, descending=True),
        lambda m, x: x.sort(dim=0, stable=True),
        lambda m, x: x.argsort(1, descending=True),
        lambda m, x: x.msort(),
        lambda m, x: x.topk(2, 1),
        lambda m, x: x.topk(2, 1, largest=False),
        lambda m, x: x.kthvalue(4, 1),
        lambda m, x: x.kthvalue(1, 1),
    ],
    ids=[
        "sort",
        "sort_desc",
        "sort0",
        "argsort_desc",
        "msort",
        "topk",
        "topk_small",
        "kth4",
        "kth1",
    ],
)
def test_nan_order(fn):
    e, t = fn(ember, ember.tensor(NANS)), fn(torch, torch.tensor(NANS))
    for a, b in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
        assert_same(a, b)


@needs_torch
def test_unique_nan_and_empty():
    arr = np.array([1.0, np.nan, 2.0, np.nan, 1.0], np.float32)
    for kw in ({}, {"return_counts": True}, {"return_inverse": True}):
        e, t = ember.unique(ember.tensor(arr), **kw), torch.unique(torch.tensor(arr), **kw)
        for a, b in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
            assert_same(a, b)
    z = np.zeros((0,), np.int64)
    e = ember.unique(ember.tensor(z), return_inverse=True, return_counts=True)
    t = torch.unique(torch.tensor(z), return_inverse=True, return_counts=True)
    for a, b in zip(e, t):
        assert_same(a, b)
    z2 = np.zeros((0, 3), np.float32)
    for f in (
        lambda m, x: m.unique(x, dim=0, return_inverse=True, return_counts=True),
        lambda m, x: m.unique_consecutive(x, dim=0, return_counts=True),
        lambda m, x: x.sort(0),
        lambda m, x: x.topk(0, 0),
    ):
        for a, b in zip(f(ember, ember.tensor(z2)), f(torch, torch.tensor(z2))):
            assert_same(a, b)
    e = ember.unique_consecutive(ember.tensor(z), return_counts=True)
    t = torch.unique_consecutive(torch.tensor(z), return_counts=True)
    for a, b in zip(e, t):
        assert_same(a, b)


@needs_torch
def test_topk_k0_and_scalars():
    x = np.array([[0.5, -1.0, 2.0]], np.float32)
    for f in (
        lambda m, x: m.topk(x, 0),
        lambda m, x: m.topk(x[0, 0], 1),
        lambda m, x: m.kthvalue(x[0, 0], 1),
        lambda m, x: m.sort(x[0, 0]),
        lambda m, x: m.argsort(x[0, 0]),
        lambda m, x: m.msort(x[0, 0]),
    ):
        e, t = f(ember, ember.tensor(x)), f(torch, torch.tensor(x))
        for a, b in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
            assert_same(a, b)


def test_topk_unsorted_values():
    x = ember.tensor([[4.0, 1.0, 3.0, 2.0]])
    v, i = x.topk(2, sorted=False)
    assert sorted(v.tolist()[0]) == [3.0, 4.0] and sorted(i.tolist()[0]) == [0, 2]


def test_sort_double_backward_through_indices():
    x = ember.tensor(np.array([[0.3, -1.2, 2.5], [1.0, 0.1, -0.4]]), requires_grad=True)
    for f in (lambda a: a.sort(1).values * a, lambda a: a.topk(2, 0).values.pow(3)):
        assert ember.autograd.gradgradcheck(f, [x])


# ---------------------------------------------------------------------- results and names
def test_named_tuple_results():
    x = ember.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    for name, r in (("sort", x.sort(1)), ("topk", x.topk(2)), ("kthvalue", x.kthvalue(1))):
        assert type(r).__name__ == name and type(r) is getattr(ember.return_types, name)
        assert r[0] is r.values and r[1] is r.indices and r.indices.dtype == ember.int64
        assert repr(r).startswith(f"ember.return_types.{name}(\nvalues=tensor(")
    v, i = x.sort(1, descending=True)
    assert v.tolist() == [[5.0, 2.0, 1.0], [7.0, 3.0, 0.0]] and i.tolist() == [[1, 2, 0], [0, 2, 1]]


def test_out_int32_and_dtypes():
    b = ember.tensor([1, 3, 5])
    assert ember.searchsorted(b, ember.tensor([2, 6]), out_int32=True).dtype == ember.int32
    assert ember.bucketize(ember.tensor([2, 6]), b).dtype == ember.int64
    assert ember.sort(ember.ones(3, dtype=ember.float32)).values.dtype == ember.float32
    assert ember.topk(ember.ones(3, dtype=ember.float64), 2).values.dtype == ember.float64


def test_names():
    x = ember.randn(2, 3, 4, names=("N", "C", "L"))
    assert x.sort("L").values.names == ("N", "C", "L")
    assert x.sort("L").indices.names == ("N", "C", "L")
    assert x.argsort("C").names == ("N", "C", "L")
    assert x.topk(2, "L").values.names == ("N", "C", "L")
    assert x.kthvalue(1, "C").values.names == ("N", "L")
    assert x.kthvalue(1, "C", keepdim=True).indices.names == ("N", "C", "L")
    assert x.msort().names == ("N", "C", "L")
    assert ember.isin(x, ember.tensor([0.0])).names == ("N", "C", "L")
    assert ember.bucketize(x, ember.tensor([0.0])).names == ("N", "C", "L")
    assert x.unique()._names is None
    v, _i = x.sort("C")
    assert ember.allclose(v, x.sort(1).values.rename(None).refine_names("N", "C", "L"))
    y = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    y.sort("C").values.sum().backward()
    assert y.grad.names == ("N", "C")


# ---------------------------------------------------------------------- errors
@needs_torch
@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (
            lambda m: m.sort(m.tensor([1.0, 2.0]), 1),
            IndexError,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        ),
        (
            lambda m: m.sort(m.tensor([1j, 2.0])),
            RuntimeError,
            "Sort does not support complex dtypes on CPU",
        ),
        (
            lambda m: m.argsort(m.ones(2, 3), -3),
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got -3)",
        ),
        (lambda m: m.topk(m.ones(5), 6), RuntimeError, "selected index k out of range"),
        (lambda m: m.topk(m.ones(5), -1), RuntimeError, "selected index k out of range"),
        (
            lambda m: m.topk(m.ones(2, 3), 1, 2),
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            lambda m: m.topk(m.ones(3)),
            TypeError,
            'topk() missing 1 required positional arguments: "k"',
        ),
        (
            lambda m: m.topk(m.tensor([1j]), 1),
            RuntimeError,
            "topk does not support complex dtypes on CPU",
        ),
        (
            lambda m: m.topk(m.tensor([True, False]), 1),
            RuntimeError,
            "topk does not support bool dtypes on CPU",
        ),
        (
            lambda m: m.kthvalue(m.tensor([True, False]), 1),
            NotImplementedError,
            "\"kthvalue_cpu\" not implemented for 'Bool'",
        ),
        (
            lambda m: m.unique(m.tensor([1j, 2.0])),
            NotImplementedError,
            "\"unique\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda m: m.kthvalue(m.ones(5), 0),
            RuntimeError,
            "kthvalue(): selected number k out of range for dimension 0",
        ),
        (
            lambda m: m.kthvalue(m.ones(2, 5), 6, 1),
            RuntimeError,
            "kthvalue(): selected number k out of range for dimension 1",
        ),
        (
            lambda m: m.kthvalue(m.ones(2, 0), 1, 1),
            IndexError,
            "kthvalue(): Expected reduction dim 1 to have non-zero size.",
        ),
        (
            lambda m: m.kthvalue(m.tensor([1j]), 1),
            NotImplementedError,
            "\"kthvalue_cpu\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda m: m.unique(m.ones(2, 3), dim=2),
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            lambda m: m.unique_consecutive(m.ones(3), dim=1),
            IndexError,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        ),
        (
            lambda m: m.bucketize(m.ones(3), m.ones(2, 2)),
            RuntimeError,
            "boundaries tensor must be 1 dimension, but got dim(2)",
        ),
        (
            lambda m: m.searchsorted(m.ones(2, 3), m.ones(1, 2)),
            RuntimeError,
            (
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                "dimensions of boundaries tensor and input value tensor must match, but we got "
                "boundaries tensor [2, 3] and input value tensor [1, 2]"
            ),
        ),
        (
            lambda m: m.searchsorted(m.ones(3), m.ones(2), side="foo"),
            RuntimeError,
            "torch.searchsorted(): side can only be 'left' or 'right' but got foo",
        ),
        (
            lambda m: m.searchsorted(m.ones(3), m.ones(2), side="left", right=True),
            RuntimeError,
            (
                "torch.searchsorted(): side and right can't be set to opposites, got side of left "
                "while right was True"
            ),
        ),
        (
            lambda m: m.searchsorted(m.ones(4), m.ones(2), sorter=m.tensor([1, 2, 0])),
            RuntimeError,
            (
                "torch.searchsorted(): boundary and sorter must have the same size, but "
                "got boundary tensor [4]and got sorter tensor [3]"
            ),
        ),
        (
            lambda m: m.searchsorted(m.ones(3), m.ones(2), sorter=m.tensor([1.0, 2.0, 0.0])),
            RuntimeError,
            "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype Float",
        ),
    ],
)
def test_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)
