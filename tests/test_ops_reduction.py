"""Reductions and softmax: parity with torch (values, dtypes, gradients), float64 gradcheck and
gradgradcheck, int/bool dtype rules, named-tuple results, names, and torch's errors."""

import math

import ember
import numpy as np
import pytest
from harness import (
    A,
    Case,
    assert_same,
    needs_torch,
    run_case,
    run_gradcheck,
    same_error,
    values_only,
)

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


INF = math.inf
ZMASK = np.array([[1, 0, 1, 1], [1, 1, 1, 1], [0, 1, 0, 1]], dtype=np.float32)


def _z(m, x):
    """x with exact zeros at ZMASK's zeros (still differentiable everywhere)."""
    return x * m.tensor(ZMASK.astype(np.float32 if x.dtype == m.float32 else np.float64))


POS = {"low": 0.5, "high": 1.5}

# differentiable ops: each row gets parity AND gradcheck(gradgrad=True)
DIFF = [
    Case("sum_all", lambda m, x: x.sum(), [A(3, 4)]),
    Case("sum_dim", lambda m, x: m.sum(x, 1), [A(3, 4)]),
    Case("sum_neg_keep", lambda m, x: x.sum(-1, keepdim=True), [A(2, 3, 4)]),
    Case("sum_list", lambda m, x: x.sum([0, 2]), [A(2, 3, 4)]),
    Case("sum_empty_list", lambda m, x: x.sum([]), [A(2, 3)]),
    Case("sum_empty_list_keep", lambda m, x: x.sum([], keepdim=True), [A(2, 3)]),
    Case("sum_dtype", lambda m, x: x.sum(1, dtype=m.float64), [A(3, 4)]),
    Case("sum_scalar_dim", lambda m, x: x.sum().sum(0), [A(3)]),
    Case("nansum", lambda m, x: m.nansum(x, 0), [A(3, 4)]),
    Case("mean_all", lambda m, x: x.mean(), [A(3, 4)]),
    Case("mean_tuple_keep", lambda m, x: x.mean((0, 2), keepdim=True), [A(2, 3, 4)]),
    Case("mean_dtype", lambda m, x: x.mean(1, dtype=m.float64), [A(3, 4)]),
    Case("nanmean", lambda m, x: m.nanmean(x, 1), [A(3, 4)]),
    Case("prod_all", lambda m, x: x.prod(), [A(3, 4, **POS)]),
    Case("prod_dim", lambda m, x: m.prod(x, 1), [A(3, 4)]),
    Case("prod_keep", lambda m, x: x.prod(0, keepdim=True), [A(3, 4)]),
    Case("prod_zeros_dim", lambda m, x: _z(m, x).prod(1), [A(3, 4)]),
    Case("prod_zeros_dim0", lambda m, x: _z(m, x).prod(0), [A(3, 4)]),
    Case("prod_zeros_all", lambda m, x: _z(m, x).prod(), [A(3, 4)]),
    Case("max_all", lambda m, x: x.max(), [A(3, 4)]),
    Case("max_dim", lambda m, x: m.max(x, 1), [A(3, 4)]),
    Case("max_dim_keep", lambda m, x: x.max(0, keepdim=True), [A(3, 4)]),
    Case("min_all", lambda m, x: m.min(x), [A(3, 4)]),
    Case("min_dim", lambda m, x: x.min(dim=-1), [A(2, 3, 4)]),
    Case("amax", lambda m, x: x.amax(1), [A(3, 4)]),
    Case("amax_tuple", lambda m, x: m.amax(x, (0, 2), keepdim=True), [A(2, 3, 4)]),
    Case("amin_all", lambda m, x: x.amin(), [A(3, 4)]),
    Case("aminmax", lambda m, x: m.aminmax(x, dim=1), [A(3, 4)]),
    Case("aminmax_all", lambda m, x: x.aminmax(), [A(3, 4)]),
    Case("median_all", lambda m, x: x.median(), [A(3, 4)]),
    Case("median_dim", lambda m, x: m.median(x, 1), [A(3, 4)]),
    Case("median_dim_keep", lambda m, x: x.median(0, keepdim=True), [A(3, 5)]),
    Case("std_all", lambda m, x: x.std(), [A(3, 4)]),
    Case("std_dim", lambda m, x: m.std(x, 1), [A(3, 4)]),
    Case("std_correction0", lambda m, x: x.std(0, correction=0, keepdim=True), [A(3, 4)]),
    Case("std_unbiased_legacy", lambda m, x: x.std(1, False, True), [A(3, 4)]),
    Case("std_bool_only", lambda m, x: x.std(False), [A(3, 4)]),
    Case("var_all", lambda m, x: x.var(), [A(3, 4)]),
    Case("var_dims", lambda m, x: m.var(x, (0, 2), correction=2), [A(3, 2, 4)]),
    Case("var_mean", lambda m, x: m.var_mean(x, 1), [A(3, 4)]),
    Case("std_mean", lambda m, x: m.std_mean(x, (0, 1), keepdim=True), [A(3, 4)]),
    Case("logsumexp", lambda m, x: m.logsumexp(x, 1), [A(3, 4)]),
    Case("logsumexp_tuple", lambda m, x: x.logsumexp((0, 1), keepdim=True), [A(3, 4)]),
    Case("norm_default", lambda m, x: x.norm(), [A(3, 4)]),
    Case("norm_fro_dim", lambda m, x: m.norm(x, "fro", 1), [A(3, 4)]),
    Case("norm_p1", lambda m, x: x.norm(1, dim=0, keepdim=True), [A(3, 4)]),
    Case("norm_p3", lambda m, x: x.norm(3, 1), [A(3, 4)]),
    Case("norm_p1_5", lambda m, x: x.norm(1.5), [A(3, 4)]),
    Case("norm_inf", lambda m, x: x.norm(INF, 1), [A(3, 4)]),
    Case("norm_ninf", lambda m, x: x.norm(-INF), [A(3, 4)]),
    Case("norm_dims", lambda m, x: m.norm(x, dim=(0, 1)), [A(3, 4)]),
    Case("norm_dtype", lambda m, x: m.norm(x, 2, 1, dtype=m.float64), [A(3, 4)]),
    Case("cumsum", lambda m, x: x.cumsum(1), [A(3, 4)]),
    Case("cumsum_dim0", lambda m, x: m.cumsum(x, dim=0), [A(3, 4)]),
    Case("cumsum_dtype", lambda m, x: x.cumsum(-1, dtype=m.float64), [A(3, 4)]),
    Case("cumprod", lambda m, x: x.cumprod(1), [A(3, 4)]),
    Case("cumprod_dim0", lambda m, x: m.cumprod(x, 0), [A(3, 4)]),
    Case("cumprod_zeros", lambda m, x: _z(m, x).cumprod(1), [A(3, 4)]),
    Case("cumprod_zeros_dim0", lambda m, x: _z(m, x).cumprod(0), [A(3, 4)]),
    Case("mode", lambda m, x: m.mode(x, 1), [A(3, 4)]),
    Case("softmax", lambda m, x: m.softmax(x, 1), [A(3, 4)]),
    Case("softmax_dim0", lambda m, x: x.softmax(0), [A(3, 4)]),
    Case("softmax_3d", lambda m, x: x.softmax(-2), [A(2, 3, 4)]),
    Case("softmax_dtype", lambda m, x: m.softmax(x, 1, dtype=m.float64), [A(3, 4)]),
    Case("softmax_large", lambda m, x: (x * 1000).softmax(1), [A(3, 4)], gradcheck=False),
    Case("log_softmax", lambda m, x: m.log_softmax(x, 1), [A(3, 4)]),
    Case("log_softmax_dim0", lambda m, x: x.log_softmax(0), [A(3, 4)]),
    Case("log_softmax_dtype", lambda m, x: x.log_softmax(-1, dtype=m.float64), [A(2, 3)]),
    Case(
        "log_softmax_large",
        lambda m, x: (x * 1000).log_softmax(1),
        [A(3, 4)],
        gradcheck=False,
        atol=1e-3,
    ),
    Case("softmax_scalar", lambda m, x: x.sum().softmax(0), [A(3)]),
    Case("log_softmax_scalar", lambda m, x: x.sum().log_softmax(-1), [A(3)]),
]

# non-differentiable results: parity only
NONDIFF = [
    Case("sum_int", lambda m, x: x.sum(1), [A(3, 4, dtype="int32", low=-5, high=5)]),
    Case("sum_uint8", lambda m, x: x.sum(), [A(3, 4, dtype="uint8", low=0, high=200)]),
    Case("sum_bool", lambda m, x: x.sum(0), [A(3, 4, dtype="bool")]),
    Case("sum_int_dtype", lambda m, x: x.sum(dtype=m.float32), [A(3, 4, dtype="int64")]),
    Case("mean_int_dtype", lambda m, x: x.mean(1, dtype=m.float64), [A(3, 4, dtype="int32")]),
    Case("nansum_int", lambda m, x: m.nansum(x), [A(3, 4, dtype="int16", low=-5, high=5)]),
    Case("prod_int", lambda m, x: x.prod(1), [A(3, 4, dtype="int32", low=-3, high=3)]),
    Case("prod_bool", lambda m, x: x.prod(), [A(3, 4, dtype="bool")]),
    Case("max_int", lambda m, x: x.max(1), [A(3, 4, dtype="int64", low=-9, high=9, seed=3)]),
    Case("max_bool", lambda m, x: x.max(), [A(3, 4, dtype="bool")]),
    Case("amin_int", lambda m, x: x.amin(0), [A(3, 4, dtype="int8", low=-9, high=9)]),
    Case("argmax", lambda m, x: x.argmax(), [A(3, 4)]),
    Case("argmax_dim", lambda m, x: m.argmax(x, 1), [A(3, 4)]),
    Case("argmax_keep", lambda m, x: x.argmax(0, keepdim=True), [A(3, 4)]),
    Case("argmax_none_keep", lambda m, x: x.argmax(keepdim=True), [A(3, 4)]),
    Case("argmin", lambda m, x: m.argmin(x, -1), [A(2, 3, 4)]),
    Case("all", lambda m, x: x.all(), [A(3, 4, dtype="bool")]),
    Case(
        "all_dim",
        lambda m, x: (x > 0).all(1) if hasattr(m.Tensor, "__gt__") else x.all(1),
        [A(3, 4, dtype="int32", low=0, high=2)],
    ),
    Case("any_dim", lambda m, x: m.any(x, 0, keepdim=True), [A(3, 4, dtype="bool")]),
    Case("any_float", lambda m, x: x.any(1), [A(3, 4)]),
    Case("all_tuple", lambda m, x: x.all((0, 1)), [A(3, 4, dtype="int32", low=0, high=3)]),
    Case("all_uint8", lambda m, x: x.all(1), [A(3, 4, dtype="uint8", low=0, high=2)]),
    Case("count_nonzero", lambda m, x: m.count_nonzero(x), [A(3, 4, dtype="int32", low=0, high=2)]),
    Case(
        "count_nonzero_dim",
        lambda m, x: x.count_nonzero(1),
        [A(3, 4, dtype="int32", low=0, high=2)],
    ),
    Case("count_nonzero_dims", lambda m, x: x.count_nonzero((0, 1)), [A(3, 4, dtype="bool")]),
    Case("cumsum_int", lambda m, x: x.cumsum(1), [A(3, 4, dtype="int32", low=-5, high=5)]),
    Case("cumsum_bool", lambda m, x: x.cumsum(0), [A(3, 4, dtype="bool")]),
    Case("cumprod_int", lambda m, x: x.cumprod(1), [A(3, 4, dtype="int8", low=-3, high=3)]),
    Case("median_int", lambda m, x: x.median(1), [A(3, 5, dtype="int64", low=-9, high=9)]),
    Case("mode_int", lambda m, x: x.mode(1), [A(3, 8, dtype="int64", low=0, high=3)]),
    Case("logsumexp_int", lambda m, x: m.logsumexp(x, 1), [A(3, 4, dtype="int32", low=-3, high=3)]),
]


@needs_torch
@pytest.mark.parametrize("case", DIFF + NONDIFF, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", [values_only(c) for c in DIFF if c.gradcheck], ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


# ---------------------------------------------------------------------- ties, NaN, zeros
def _grad_parity(fn, arr, atol=1e-6):
    e = ember.tensor(arr, requires_grad=True)
    t = torch.tensor(arr, requires_grad=True)
    eo, to = fn(ember, e), fn(torch, t)
    eo = eo[0] if isinstance(eo, tuple) else eo
    to = to[0] if isinstance(to, tuple) else to
    assert_same(eo, to, atol=atol)
    up = np.linspace(0.5, 1.5, max(1, to.numel())).reshape(tuple(to.shape)).astype(arr.dtype)
    eo.backward(ember.tensor(up))
    to.backward(torch.tensor(up))
    assert_same(e.grad, t.grad, atol=atol)


TIES = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 5.0, 4.0, 5.0]], np.float32)


@needs_torch
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.max(),
        lambda m, x: x.min(),
        lambda m, x: x.amax(1),
        lambda m, x: x.amin(0),
        lambda m, x: x.amax(),
        lambda m, x: x.max(1),
        lambda m, x: x.min(1, keepdim=True),
        lambda m, x: x.norm(INF, 1),
        lambda m, x: x.median(),
        lambda m, x: x.median(1),
        lambda m, x: x.aminmax(dim=1),
        lambda m, x: x.argmax(1),
        lambda m, x: x.argmin(),
        lambda m, x: x.mode(1),
    ],
    ids=[
        "max",
        "min",
        "amax1",
        "amin0",
        "amax",
        "max1",
        "min1k",
        "norm_inf",
        "median",
        "median1",
        "aminmax",
        "argmax1",
        "argmin",
        "mode1",
    ],
)
def test_ties(fn):
    e = fn(ember, ember.tensor(TIES))
    t = fn(torch, torch.tensor(TIES))
    for a, b in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
        assert_same(a, b)
    if (t[0] if isinstance(t, tuple) else t).dtype.is_floating_point:
        _grad_parity(fn, TIES)


@needs_torch
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.max(),
        lambda m, x: x.max(1),
        lambda m, x: x.argmax(1),
        lambda m, x: x.argmin(),
        lambda m, x: x.median(),
        lambda m, x: x.median(1),
        lambda m, x: m.nansum(x, 1),
        lambda m, x: m.nanmean(x),
        lambda m, x: x.sum(0),
    ],
    ids=["max", "max1", "argmax1", "argmin", "median", "median1", "nansum", "nanmean", "sum"],
)
def test_nan(fn):
    arr = np.array([[1.0, np.nan, 2.0], [0.5, 3.0, -1.0]], np.float32)
    e, t = fn(ember, ember.tensor(arr)), fn(torch, torch.tensor(arr))
    for a, b in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
        assert_same(a, b)


@needs_torch
@pytest.mark.parametrize(
    "arr",
    [
        np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]]),
        np.array([[0.0, 2.0, 3.0, 0.5]]),
    ],
)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.prod(1),
        lambda m, x: x.prod(),
        lambda m, x: x.cumprod(1),
        lambda m, x: x.prod(0, keepdim=True),
        lambda m, x: x.norm(),
        lambda m, x: x.norm(1, 1),
        lambda m, x: x.std(0) if x.shape[0] > 1 else x.std(1),
    ],
    ids=["prod1", "prod", "cumprod", "prod0", "norm", "norm1", "std"],
)
def test_zeros_grad(fn, arr):
    # exact zeros: derivatives that would divide by the input (or by a zero result) stay finite
    _grad_parity(fn, arr)
    _grad_parity(fn, np.zeros_like(arr) + (arr[:1] * 0))


def test_prod_zeros_gradgrad():
    x = ember.tensor(
        np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.5, 2.0, 0.5]]), requires_grad=True
    )
    assert ember.autograd.gradcheck(lambda a: a.prod(1), [x])
    assert ember.autograd.gradgradcheck(lambda a: a.prod(1), [x])
    assert ember.autograd.gradgradcheck(lambda a: a.cumprod(1), [x])


# ---------------------------------------------------------------------- dtypes and results
@needs_torch
def test_dtypes_match_torch():
    arr = np.arange(12).reshape(3, 4)
    for dt in ("int8", "int16", "int32", "int64", "uint8", "bool"):
        for f in (
            lambda m, x: x.sum(),
            lambda m, x: x.prod(1),
            lambda m, x: x.cumsum(0),
            lambda m, x: x.max(),
            lambda m, x: x.all(),
            lambda m, x: x.any(1),
            lambda m, x: x.count_nonzero(),
            lambda m, x: m.nansum(x),
        ):
            a = arr.astype(dt)
            e, t = f(ember, ember.tensor(a)), f(torch, torch.tensor(a))
            assert_same(e, t, what=dt)


def test_float32_stays_float32():
    x = ember.ones(3, 4, dtype=ember.float32)
    for r in (
        x.sum(),
        x.mean(1),
        x.std(),
        x.norm(),
        x.logsumexp(1),
        x.softmax(1),
        x.log_softmax(0),
        x.prod(),
        x.cumprod(1),
        x.var_mean(1)[1],
        x.max(1).values,
    ):
        assert r.dtype == ember.float32


def test_named_tuple_results():
    x = ember.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    r = x.max(1)
    assert isinstance(r, tuple) and type(r).__name__ == "max"
    assert r.values.tolist() == [5.0, 7.0] and r.indices.tolist() == [1, 0]
    assert r[0] is r.values and r.indices.dtype == ember.int64
    v, i = x.min(dim=0, keepdim=True)
    assert v.shape == (1, 3) and i.tolist() == [[0, 1, 0]]
    assert repr(r).startswith("ember.return_types.max(\nvalues=tensor(")
    assert "\nindices=tensor([1, 0]))" in repr(r)
    assert ember.return_types.max is type(r)
    assert type(x.median(1)).__name__ == "median" and x.aminmax().max.item() == 7.0
    assert x.max().item() == 7.0 and ember.min(x).item() == 0.0


def test_max_binary_form():
    a = ember.tensor([1.0, 5.0])
    b = ember.tensor([3.0, 2.0])
    if "maximum" not in ember.core.registry.OPS:
        with pytest.raises(NotImplementedError, match="maximum"):
            ember.max(a, b)
        return
    assert ember.max(a, b).tolist() == [3.0, 5.0]
    assert a.min(b).tolist() == [1.0, 2.0]
    assert ember.max(a, other=b).tolist() == [3.0, 5.0]


def test_scalar_tensor_dims():
    s = ember.tensor(3.0)
    assert s.sum(0).item() == 3.0 and s.sum(-1).shape == ()
    v, i = s.max(0)
    assert v.item() == 3.0 and i.item() == 0
    assert s.cumsum(0).item() == 3.0 and s.argmax(0).item() == 0
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        s.sum(1)


def test_names():
    x = ember.ones(2, 3, 4, names=("N", "C", "L"))
    assert x.sum("C")._names == ("N", "L")
    assert x.sum(("N", "L"))._names == ("C",)
    assert x.mean("L", keepdim=True)._names == ("N", "C", "L")
    assert x.max("C").values._names == ("N", "L")
    assert x.max("C").indices._names == ("N", "L")
    assert x.std("N")._names == ("C", "L")
    assert x.softmax("C")._names == ("N", "C", "L")
    assert x.log_softmax(-1)._names == ("N", "C", "L")
    assert x.cumsum("L")._names == ("N", "C", "L")
    assert x.norm(dim="L")._names == ("N", "C")
    assert x.sum()._names is None
    y = ember.ones(2, 3, 4, names=("N", "C", "L"), requires_grad=True)
    y.softmax("C").sum().backward()
    assert y.grad._names == ("N", "C", "L")


def test_softmax_stable_and_rows_sum_to_one():
    x = ember.tensor([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]])
    s = x.softmax(1)
    assert np.isfinite(s.numpy()).all()
    np.testing.assert_allclose(s.sum(1).numpy(), [1.0, 1.0], rtol=1e-6)
    assert np.isfinite(x.log_softmax(1).numpy()).all()


# ---------------------------------------------------------------------- errors
def _e(*shape, dtype=ember.float32):
    return ember.zeros(*shape, dtype=dtype)


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (
            lambda: _e(2, 3, dtype=ember.int32).mean(),
            RuntimeError,
            (
                r"mean\(\): could not infer output dtype. Input dtype must be either a floating point or "
                r"complex dtype. Got: Int"
            ),
        ),
        (
            lambda: _e(2, 3).sum(2),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
        ),
        (
            lambda: _e(2, 3).mean(-3),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-2, 1\], but got -3\)",
        ),
        (
            lambda: _e(2, 3).softmax(2),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
        ),
        (lambda: _e(2, 3).max(5), IndexError, r"expected to be in range of \[-2, 1\], but got 5"),
        (
            lambda: _e(2, 3).sum((0, 0)),
            RuntimeError,
            "dim 0 appears multiple times in the list of dims",
        ),
        (
            lambda: _e(0).max(),
            RuntimeError,
            (
                r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0. Specify the "
                r"reduction dim with the 'dim' argument."
            ),
        ),
        (lambda: _e(0).min(), RuntimeError, r"min\(\): Expected reduction dim to be specified"),
        (lambda: _e(0).amax(), RuntimeError, r"amax\(\): Expected reduction dim to be specified"),
        (
            lambda: _e(0, 3).max(0),
            IndexError,
            (
                r"max\(\): Expected reduction dim 0 to have non-zero "
                r"size."
            ),
        ),
        (
            lambda: _e(0, 3).amin(0),
            IndexError,
            r"amin\(\): Expected reduction dim 0 to have non-zero",
        ),
        (
            lambda: _e(0).argmax(),
            IndexError,
            (
                r"argmax\(\): Expected reduction dim to be specified for "
                r"input.numel\(\) == 0."
            ),
        ),
        (
            lambda: _e(2, 3, dtype=ember.int64).std(),
            RuntimeError,
            "std and var only support floating point and complex dtypes",
        ),
        (
            lambda: _e(2, 3, dtype=ember.int64).var(1),
            RuntimeError,
            "std and var only support floating point and complex dtypes",
        ),
        (
            lambda: _e(2, 3, dtype=ember.int32).nanmean(),
            RuntimeError,
            "nanmean\\(\\): expected input to have floating point or complex dtype but got Int",
        ),
        (
            lambda: _e(2, 3, dtype=ember.int32).norm(),
            RuntimeError,
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Int",
        ),
        (
            lambda: _e(2, 3).norm("abc"),
            RuntimeError,
            "linalg.matrix_norm: Order abc not supported.",
        ),
        (
            lambda: _e(2, 3, dtype=ember.int64).softmax(0),
            NotImplementedError,
            "\"softmax_kernel_impl\" not implemented for 'Long'",
        ),
        (
            lambda: _e(2, 3, dtype=ember.int32).log_softmax(1),
            NotImplementedError,
            "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Int'",
        ),
        (lambda: ember.softmax(_e(2, 3)), TypeError, "softmax\\(\\) missing 1 required positional"),
        (lambda: _e(2, 3).cumsum(), TypeError, "cumsum\\(\\) missing 1 required positional"),
        (lambda: ember.logsumexp(_e(2, 3)), TypeError, "logsumexp\\(\\) missing 1 required"),
        (lambda: _e(2, 3).prod((0, 1)), TypeError, "prod\\(\\) received an invalid combination"),
        (lambda: _e(2, 3).sum("C"), RuntimeError, "Name 'C' not found in Tensor"),
    ],
)
def test_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn()


@needs_torch
def test_error_messages_match_torch():
    # the same messages as torch, checked against the oracle itself
    for f in (
        lambda m: m.zeros(2, 3, dtype=m.int32).mean(),
        lambda m: m.zeros(2, 3).sum(2),
        lambda m: m.zeros(0).max(),
        lambda m: m.zeros(0, 3).max(0),
        lambda m: m.zeros(2, 3, dtype=m.int64).std(),
        lambda m: m.zeros(2, 3).sum((0, 0)),
    ):
        with pytest.raises(Exception) as te:
            f(torch)
        with pytest.raises(type(te.value)) as ee:
            f(ember)
        assert str(ee.value) == str(te.value)


def test_sum_to_size_unchanged():
    x = ember.ones(2, 3, 4)
    assert x.sum_to_size(3, 1).shape == (3, 1)
    assert x.sum_to_size((1, 3, 4)).tolist() == (ember.ones(1, 3, 4) * 2).tolist()
    with pytest.raises(RuntimeError, match="is not expandable to size"):
        ember.ones(3).sum_to_size(2, 3)


@needs_torch
def test_var_std_correction_takes_a_zero_dim_tensor():
    # torch reads a 0-d tensor as the correction number; values and gradients match
    a = np.random.default_rng(0).standard_normal((3, 5))
    res = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        out = x.std(dim=1, correction=m.tensor(0)) + x.var(0, correction=m.tensor(2)).sum()
        (out * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        res.append((out.detach().numpy(), x.grad.numpy()))
    for e, t in zip(*res):
        np.testing.assert_allclose(e, t, rtol=1e-12)


@needs_torch
def test_zero_norm_gradient_is_undefined_like_torch():
    # an L0 "norm" counts non-zeros: torch gives it no gradient (the input reads as unused)
    import torch

    def run(m):
        x = m.tensor([[1.0, 0.0], [2.0, 3.0]], requires_grad=True)
        m.linalg.vector_norm(x, 0).backward()
        try:
            m.autograd.grad(m.linalg.vector_norm(x, 0, dim=1).sum(), x)
            err = None
        except RuntimeError as e:
            err = str(e)
        (g,) = m.autograd.grad(m.norm(x, 0) + x.sum(), x)
        return x.grad, err, g.tolist()

    assert run(ember) == run(torch)


_OUT_DTYPE_CALLS = {
    "sum-f32-into-i64": lambda m, x: m.sum(x, 0, out=m.empty(2, dtype=m.int64)),
    "cumsum-f32-into-i32": lambda m, x: m.cumsum(x, 0, out=m.empty(2, 2, dtype=m.int32)),
    "nansum-into-f64": lambda m, x: m.nansum(x, 0, out=m.empty(2, dtype=m.float64)),
    "prod-into-f64": lambda m, x: m.prod(x, 0, out=m.empty(2, dtype=m.float64)),
    "cumprod-into-f64": lambda m, x: m.cumprod(x, 0, out=m.empty(2, 2, dtype=m.float64)),
    "sum-int-into-f32": lambda m, x: m.sum(x.int(), 0, out=m.empty(2, dtype=m.float32)),
    "mean-keeps-the-cast-rule": lambda m, x: m.mean(x, 0, out=m.empty(2, dtype=m.int32)),
}


@pytest.mark.parametrize("name", sorted(_OUT_DTYPE_CALLS))
def test_out_dtype_is_the_computation_dtype_of_sum_like_ops(name):
    # torch's sum/prod/cumsum/cumprod/nansum compute in out='s dtype when dtype= is not given
    # (float64 out: float64 sums; int out: the input cast first); mean keeps the cast check
    import torch

    call = _OUT_DTYPE_CALLS[name]
    x = np.array([[1.5, 2.7], [-0.5, 3.9]], dtype=np.float32)
    try:
        want = call(torch, torch.tensor(x))
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=str(e)):
            call(ember, ember.tensor(x))
        return
    got = call(ember, ember.tensor(x))
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.sum(m.ones(2), 0, dtype=m.float64, out=m.empty(())),
        lambda m: m.cumsum(m.ones(2), 0, dtype=m.float64, out=m.empty(2)),
        lambda m: m.cumprod(m.ones(2), 0, dtype=m.int64, out=m.empty(2, dtype=m.int32)),
        lambda m: m.sum(m.ones(2), 0, dtype=m.int64, out=m.empty((), dtype=m.bfloat16)),
    ],
)
def test_out_dtype_must_be_the_given_dtype(call):
    same_error(call, RuntimeError)
