"""Statistics: nanmedian, quantile, nanquantile, bincount, histc, histogram, dist, cov, corrcoef.
Parity with torch (values, dtypes, shapes, gradients with a non-uniform upstream gradient), float64
gradcheck/gradgradcheck, NaN handling, named-tuple results, names, and torch's errors."""

import math

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


Q = {"low": 0.05, "high": 0.95}  # q values (tensor q rows)
W = {"low": 0.5, "high": 2.0}  # positive weights
FW = {"dtype": "int64", "low": 1, "high": 3}  # frequency weights

# differentiable ops: each row gets parity AND gradcheck(gradgrad=True)
DIFF = [
    Case("nanmedian_all", lambda m, x: m.nanmedian(x), [A(3, 5)]),
    Case("nanmedian_dim", lambda m, x: x.nanmedian(1), [A(3, 5)]),
    Case("nanmedian_dim0_keep", lambda m, x: m.nanmedian(x, 0, keepdim=True), [A(4, 3)]),
    Case("nanmedian_even", lambda m, x: x.nanmedian(-1), [A(2, 3, 4)]),
    Case("quantile_scalar", lambda m, x: m.quantile(x, 0.3), [A(3, 5)]),
    Case("quantile_dim", lambda m, x: x.quantile(0.7, dim=1), [A(3, 5)]),
    Case("quantile_dim0_keep", lambda m, x: m.quantile(x, 0.25, 0, True), [A(5, 3)]),
    Case(
        "quantile_q0_q1",
        lambda m, x: m.quantile(x, m.tensor([0.0, 1.0], dtype=x.dtype), dim=1),
        [A(3, 4)],
    ),
    Case("quantile_tensor_q", lambda m, x, q: m.quantile(x, q, dim=1), [A(3, 5), A(3, **Q)]),
    Case("quantile_tensor_q_all", lambda m, x, q: x.quantile(q), [A(3, 4), A(2, **Q)]),
    Case(
        "quantile_tensor_q_keep",
        lambda m, x, q: m.quantile(x, q, dim=0, keepdim=True),
        [A(5, 2), A(2, **Q)],
    ),
    Case(
        "quantile_none_keep", lambda m, x, q: m.quantile(x, q, keepdim=True), [A(3, 4), A(2, **Q)]
    ),
    Case(
        "quantile_0d_q", lambda m, x, q: m.quantile(x, q.sum() / 2, dim=-1), [A(2, 3, 5), A(2, **Q)]
    ),
    Case(
        "quantile_lower",
        lambda m, x, q: m.quantile(x, q, 1, interpolation="lower"),
        [A(3, 5), A(3, **Q)],
    ),
    Case(
        "quantile_higher",
        lambda m, x, q: m.quantile(x, q, 1, interpolation="higher"),
        [A(3, 5), A(3, **Q)],
    ),
    Case(
        "quantile_midpoint",
        lambda m, x, q: m.quantile(x, q, 1, interpolation="midpoint"),
        [A(3, 5), A(3, **Q)],
    ),
    Case(
        "quantile_nearest", lambda m, x: m.quantile(x, 0.4, 0, interpolation="nearest"), [A(6, 3)]
    ),
    Case("nanquantile", lambda m, x: m.nanquantile(x, 0.6, dim=1), [A(3, 5)]),
    Case("nanquantile_q", lambda m, x, q: x.nanquantile(q, 0, True), [A(4, 3), A(2, **Q)]),
    Case("dist", lambda m, x, y: m.dist(x, y), [A(3, 4), A(3, 4)]),
    Case("dist_broadcast_p1", lambda m, x, y: x.dist(y, 1), [A(3, 4), A(4)]),
    Case("dist_p3", lambda m, x, y: m.dist(x, y, 3), [A(5), A(5)]),
    Case("dist_p1_5", lambda m, x, y: m.dist(x, y, p=1.5), [A(2, 3), A(2, 3)]),
    Case("dist_inf", lambda m, x, y: m.dist(x, y, math.inf), [A(2, 3), A(2, 3)]),
    Case("dist_ninf", lambda m, x, y: m.dist(x, y, -math.inf), [A(2, 3), A(2, 3)]),
    Case("dist_p0", lambda m, x, y: m.dist(x, y, 0), [A(2, 3), A(2, 3)], grad=False),
    Case("cov", lambda m, x: m.cov(x), [A(3, 6)]),
    Case("cov_1d", lambda m, x: x.cov(), [A(6)]),
    Case("cov_correction0", lambda m, x: m.cov(x, correction=0), [A(2, 5)]),
    Case("cov_correction2", lambda m, x: m.cov(x, correction=2), [A(2, 5)]),
    Case("cov_fweights", lambda m, x, f: m.cov(x, fweights=f), [A(3, 5), A(5, **FW)]),
    Case("cov_aweights", lambda m, x, a: m.cov(x, aweights=a), [A(3, 5), A(5, **W)]),
    Case(
        "cov_both",
        lambda m, x, f, a: m.cov(x, fweights=f, aweights=a, correction=2),
        [A(2, 6), A(6, **FW), A(6, **W)],
    ),
    Case(
        "cov_aweights_c0", lambda m, x, a: m.cov(x, aweights=a, correction=0), [A(2, 4), A(4, **W)]
    ),
    Case("corrcoef", lambda m, x: m.corrcoef(x), [A(3, 6)]),
    Case("corrcoef_method", lambda m, x: x.corrcoef(), [A(2, 5)]),
]

NONDIFF = [
    Case("nanmedian_int", lambda m, x: x.nanmedian(1), [A(3, 5, dtype="int64", low=-99, high=99)]),
    Case("nanmedian_int_all", lambda m, x: x.nanmedian(), [A(4, 5, dtype="int32")]),
    Case("quantile_float64", lambda m, x: m.quantile(x, 0.5, 0), [A(4, 3, dtype="float64")]),
    Case("cov_int", lambda m, x: m.cov(x), [A(2, 5, dtype="int64", low=-5, high=5)]),
    Case("corrcoef_int", lambda m, x: m.corrcoef(x), [A(3, 5, dtype="int32", low=-5, high=5)]),
    Case(
        "cov_aweights64",
        lambda m, x, a: m.cov(x, aweights=a),
        [A(2, 5, grad=False), A(5, dtype="float64", grad=False, **W)],
    ),
    Case("bincount", lambda m, x: m.bincount(x), [A(20, dtype="int64", low=0, high=7)]),
    Case(
        "bincount_minlength",
        lambda m, x: x.bincount(minlength=12),
        [A(20, dtype="int32", low=0, high=7)],
    ),
    Case(
        "bincount_short_minlength",
        lambda m, x: x.bincount(None, 2),
        [A(9, dtype="uint8", low=0, high=4)],
    ),
    Case(
        "bincount_w32",
        lambda m, x, w: m.bincount(x, w),
        [A(9, dtype="int64", low=0, high=4), A(9, grad=False)],
    ),
    Case(
        "bincount_w64",
        lambda m, x, w: m.bincount(x, weights=w, minlength=7),
        [A(9, dtype="int64", low=0, high=4), A(9, dtype="float64", grad=False)],
    ),
    Case(
        "bincount_wint",
        lambda m, x, w: x.bincount(w),
        [A(9, dtype="int64", low=0, high=4), A(9, dtype="int32")],
    ),
    Case("histc", lambda m, x: m.histc(x), [A(50)]),
    Case("histc_bins", lambda m, x: x.histc(bins=7), [A(3, 20, grad=False)]),
    Case("histc_range", lambda m, x: m.histc(x, 5, -1, 1), [A(40, grad=False)]),
    Case(
        "histc_range_kw",
        lambda m, x: m.histc(x, bins=4, min=0, max=3),
        [A(30, dtype="float64", low=-1, high=4)],
    ),
    Case("histc_edges", lambda m, x: m.histc(x.round(), 8, 0, 8), [A(40, low=0, high=8)]),
    Case("histogram", lambda m, x: m.histogram(x, 6), [A(40, grad=False)]),
    Case("histogram_method", lambda m, x: x.histogram(bins=3), [A(3, 7, grad=False)]),
    Case(
        "histogram_range_density",
        lambda m, x: m.histogram(x, 5, range=(-1.0, 1.0), density=True),
        [A(40, grad=False)],
    ),
    Case(
        "histogram_weight",
        lambda m, x, w: m.histogram(x, 4, weight=w),
        [A(30, grad=False), A(30, grad=False, **W)],
    ),
    Case(
        "histogram_weight_density",
        lambda m, x, w: m.histogram(x, 4, weight=w, density=True),
        [A(30, dtype="float64", grad=False), A(30, dtype="float64", grad=False, **W)],
    ),
    Case(
        "histogram_edges",
        lambda m, x: m.histogram(x, m.tensor([-1.0, -0.25, 0.5, 1.5])),
        [A(30, grad=False)],
    ),
    Case(
        "histogram_edges_density",
        lambda m, x: m.histogram(x, bins=m.tensor([-2.0, 0.0, 0.5, 2.0]), density=True),
        [A(30, grad=False)],
    ),
    Case(
        "histogram_on_edges",
        lambda m, x: m.histogram(x.round(), 8, range=(0.0, 8.0)),
        [A(40, low=0, high=8, grad=False)],
    ),
]


@needs_torch
@pytest.mark.parametrize("case", DIFF + NONDIFF, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", [values_only(c) for c in DIFF if c.gradcheck], ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


# ---------------------------------------------------------------------- NaN
NANS = np.array(
    [[3.0, np.nan, 1.0, -2.0, 0.5], [np.nan, 2.0, np.nan, -1.0, 4.0], [1.0, 2.0, 3.0, 4.0, 0.0]],
    np.float32,
)


@needs_torch
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.nanmedian(),
        lambda m, x: x.nanmedian(1),
        lambda m, x: x.nanmedian(0, keepdim=True),
        lambda m, x: x.quantile(0.3, 1),
        lambda m, x: x.quantile(0.3),
        lambda m, x: x.nanquantile(0.3, 1),
        lambda m, x: x.nanquantile(m.tensor([0.2, 0.9]), 1, interpolation="nearest"),
        lambda m, x: x.nanquantile(0.5),
        lambda m, x: x.nanquantile(0.5, 0, interpolation="midpoint"),
    ],
    ids=[
        "nanmedian",
        "nanmedian1",
        "nanmedian0",
        "quantile1",
        "quantile",
        "nanquantile1",
        "nanquantile_nearest",
        "nanquantile",
        "nanquantile_mid",
    ],
)
def test_nan(fn):
    e, t = fn(ember, ember.tensor(NANS)), fn(torch, torch.tensor(NANS))
    for a, b in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
        assert_same(a, b)


@needs_torch
def test_nan_gradients():
    # gradients go to the selected non-NaN elements only
    for fn in (
        lambda m, x: x.nanmedian(1).values,
        lambda m, x: x.nanquantile(0.4, 1),
        lambda m, x: x.nanmedian(),
    ):
        e = ember.tensor(NANS, requires_grad=True)
        t = torch.tensor(NANS, requires_grad=True)
        eo, to = fn(ember, e), fn(torch, t)
        up = np.linspace(0.5, 1.5, max(1, to.numel())).reshape(tuple(to.shape)).astype(np.float32)
        eo.backward(ember.tensor(up))
        to.backward(torch.tensor(up))
        assert_same(e.grad, t.grad)


def test_nanmedian_all_nan_row():
    r = ember.tensor([[math.nan, math.nan], [1.0, math.nan]]).nanmedian(1)
    assert math.isnan(r.values[0].item()) and r.values[1].item() == 1.0 and r.indices[1] == 0
    assert math.isnan(ember.nanmedian(ember.tensor([])).item())


@needs_torch
def test_quantile_interpolations_exact():
    x = np.array([[1.0, 2.0, 3.0, 4.0], [10.0, -2.0, 0.0, 7.0]], np.float32)
    q = np.array([0.0, 0.1, 0.25, 0.5, 1 / 3, 0.5 + 1 / 6, 0.75, 1.0], np.float32)
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        e = ember.quantile(ember.tensor(x), ember.tensor(q), 1, interpolation=interp)
        t = torch.quantile(torch.tensor(x), torch.tensor(q), 1, interpolation=interp)
        assert_same(e, t, atol=0, rtol=1e-6, what=interp)


@needs_torch
def test_histc_degenerate_ranges():
    for arr, kw in (
        (np.array([1.0, 1.0], np.float32), {"bins": 3}),
        (np.array([1.0, 2.0, 5.0], np.float32), {"bins": 4, "min": 1, "max": 1}),
        (np.zeros(0, np.float32), {"bins": 2}),
    ):
        assert_same(ember.histc(ember.tensor(arr), **kw), torch.histc(torch.tensor(arr), **kw))
    for arr in (np.array([1.0, 1.0], np.float32), np.zeros(0, np.float32)):
        e, t = ember.histogram(ember.tensor(arr), 4), torch.histogram(torch.tensor(arr), 4)
        assert_same(e.hist, t.hist)
        assert_same(e.bin_edges, t.bin_edges)


@needs_torch
def test_histogram_edges_match_torch_linspace():
    # bin edges are computed in the input's dtype like torch's linspace (bit-exact)
    r = np.random.default_rng(3)
    for bins in (3, 7, 10, 33):
        x = r.uniform(-3.7, 11.3, 100).astype(np.float32)
        e, t = ember.histogram(ember.tensor(x), bins), torch.histogram(torch.tensor(x), bins)
        np.testing.assert_array_equal(e.bin_edges.numpy(), t.bin_edges.numpy())
        np.testing.assert_array_equal(e.hist.numpy(), t.hist.numpy())
        eh = ember.histc(ember.tensor(x), bins, -3, 11).numpy()
        np.testing.assert_array_equal(eh, torch.histc(torch.tensor(x), bins, -3, 11).numpy())


@needs_torch
@pytest.mark.parametrize(
    "kw",
    [
        {"bins": 3},
        {"bins": [2, 4]},
        {"bins": [3, 2], "range": [-1.0, 1.0, 0.0, 2.0]},
        {"bins": 4, "density": True},
        {"bins": [2, 3], "weight": True},
        {"bins": [2, 3], "weight": True, "density": True},
        {"bins": "tensors"},
    ],
    ids=["int", "list", "range", "density", "weight", "weight_density", "edges"],
)
def test_histogramdd(kw):
    r = np.random.default_rng(5)
    x = r.uniform(-2, 2, (3, 10, 2)).astype(np.float32)
    w = r.uniform(0.5, 2, (3, 10)).astype(np.float32)

    def call(m):
        k = dict(kw)
        if k.get("weight"):
            k["weight"] = m.tensor(w)
        if k["bins"] == "tensors":
            k["bins"] = [m.tensor([-2.0, 0.0, 0.5, 2.0]), m.tensor([-1.0, 1.0])]
        return m.histogramdd(m.tensor(x), **k)

    e, t = call(ember), call(torch)
    assert type(e) is ember.return_types.histogramdd and e[0] is e.hist
    assert_same(e.hist, t.hist)
    assert len(e.bin_edges) == len(t.bin_edges) == 2
    for a, b in zip(e.bin_edges, t.bin_edges):
        assert_same(a, b, atol=0, rtol=0)


@needs_torch
@pytest.mark.parametrize(
    "fn, msg",
    [
        (
            lambda m: m.histogramdd(m.ones(4, 2), bins=[2]),
            "histogramdd: The size of bins must be equal to the innermost dimension of the input.",
        ),
        (
            lambda m: m.histogramdd(m.ones(4, 2), bins=2, range=[0.0, 1.0]),
            (
                "torch.histogramdd: for a 2-dimensional histogram range should have 4 elements, but "
                "got 2"
            ),
        ),
        (
            lambda m: m.histogramdd(m.ones(3), bins=2),
            "torch.histogramdd: input tensor should have at least 2 dimensions",
        ),
        (
            lambda m: m.histogramdd(m.ones(4, 2), bins=2, weight=m.ones(3)),
            (
                "torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                "input tensor excluding its innermost dimension, but got input with shape [4, 2] and "
                "weight with shape [3]"
            ),
        ),
        (
            lambda m: m.histogramdd(m.ones(4, 2), bins=[2, 0]),
            "torch.histogram(): bins must be > 0, but got 0 for dimension 1",
        ),
        (
            lambda m: m.histogramdd(m.ones(4, 2), bins=2, range=[0.0, 1.0, 2.0, 1.0]),
            "torch.histogramdd: min should not exceed max, but got min 2 max 1 for dimension 1",
        ),
    ],
)
def test_histogramdd_errors(fn, msg):
    raises_like_torch(fn, RuntimeError, msg)
    raises_like_torch(
        lambda m: m.histogramdd(m.ones(4, 2, dtype=m.int32), bins=2),
        NotImplementedError,
        "\"histogramdd\" not implemented for 'Int'",
    )


# ---------------------------------------------------------------------- results and names
def test_named_tuple_results():
    x = ember.tensor([[1.0, 5.0, 2.0], [7.0, math.nan, 3.0]])
    r = x.nanmedian(1)
    assert type(r) is ember.return_types.nanmedian and r.indices.tolist() == [2, 2]
    assert repr(r).startswith("ember.return_types.nanmedian(\nvalues=tensor(")
    h = ember.histogram(ember.tensor([1.0, 2.0, 2.0]), 2)
    assert type(h) is ember.return_types.histogram and h[0] is h.hist and h[1] is h.bin_edges
    assert h.hist.tolist() == [1.0, 2.0] and h.bin_edges.tolist() == [1.0, 1.5, 2.0]
    assert repr(h).startswith("ember.return_types.histogram(\nhist=tensor(")


def test_dtypes():
    x = ember.ones(3, 4, dtype=ember.float32)
    assert x.quantile(0.5, 1).dtype == ember.float32
    assert x.cov().dtype == ember.float32 and x.corrcoef().dtype == ember.float32
    assert ember.histc(x).dtype == ember.float32 and ember.dist(x, x).dtype == ember.float32
    assert ember.bincount(ember.tensor([1, 2])).dtype == ember.int64


def test_names():
    x = ember.randn(2, 3, 4, names=("N", "C", "L"))
    assert x.nanmedian("C").values.names == ("N", "L")
    assert x.nanmedian("C").indices.names == ("N", "L")
    assert x.nanmedian("C", keepdim=True).values.names == ("N", "C", "L")
    assert x.quantile(0.5, "L").names == ("N", "C")
    assert x.quantile(ember.tensor([0.5, 0.7]), "L").names == (None, "N", "C")
    assert x.nanquantile(0.5, 1, keepdim=True).names == ("N", "C", "L")
    assert x.quantile(0.5)._names is None and x.nanmedian()._names is None
    assert ember.histc(x)._names is None
    y = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    y.quantile(0.3, "C").sum().backward()
    assert y.grad.names == ("N", "C")


def test_cov_degrees_of_freedom_warning():
    x = ember.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]])
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        c = ember.cov(x, correction=3)
    assert np.isinf(c.numpy()).all()


# ---------------------------------------------------------------------- errors
M2 = [[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]]


@needs_torch
@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (
            lambda m: m.quantile(m.ones(3), 1.5),
            RuntimeError,
            "quantile() q must be in the range [0, 1] but got 1.5",
        ),
        (
            lambda m: m.nanquantile(m.ones(3), -0.5),
            RuntimeError,
            "quantile() q must be in the range [0, 1] but got -0.5",
        ),
        (
            lambda m: m.quantile(m.arange(4), 0.5),
            RuntimeError,
            "quantile() input tensor must be either float or double dtype",
        ),
        (
            lambda m: m.quantile(m.ones(4), m.tensor([0.5], dtype=m.float64)),
            RuntimeError,
            "quantile() q tensor must be same dtype as the input tensor",
        ),
        (
            lambda m: m.quantile(m.ones(4), m.tensor([[0.5]])),
            RuntimeError,
            "quantile() q must be a scalar or 1D tensor",
        ),
        (
            lambda m: m.quantile(m.ones(4), m.tensor([0.5, 1.5])),
            RuntimeError,
            "quantile() q values must be in the range [0, 1]",
        ),
        (
            lambda m: m.quantile(m.ones(4), 0.5, interpolation="foo"),
            RuntimeError,
            (
                "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                "but got foo"
            ),
        ),
        (
            lambda m: m.quantile(m.ones(0), 0.5),
            RuntimeError,
            "quantile() input tensor must be non-empty",
        ),
        (
            lambda m: m.quantile(m.ones(2, 2), 0.5, dim=2),
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            lambda m: m.nanmedian(m.ones(2, 0), 1),
            IndexError,
            "median(): Expected reduction dim 1 to have non-zero size.",
        ),
        (
            lambda m: m.nanmedian(m.ones(2, 3), 2),
            IndexError,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            lambda m: m.nanmedian(m.tensor([True, False])),
            NotImplementedError,
            "\"median_cpu\" not implemented for 'Bool'",
        ),
        (
            lambda m: m.nanmedian(m.tensor([[True, False]]), 1),
            NotImplementedError,
            "\"median_out\" not implemented for 'Bool'",
        ),
        (
            lambda m: m.bincount(m.tensor([1.0, 2.0])),
            NotImplementedError,
            "\"bincount_cpu\" not implemented for 'Float'",
        ),
        (
            lambda m: m.bincount(m.tensor([True])),
            NotImplementedError,
            "\"bincount_cpu\" not implemented for 'Bool'",
        ),
        (
            lambda m: m.bincount(m.tensor([-1, 2])),
            RuntimeError,
            "bincount only supports 1-d non-negative integral inputs.",
        ),
        (
            lambda m: m.bincount(m.tensor([[1, 2]])),
            RuntimeError,
            "bincount only supports 1-d non-negative integral inputs.",
        ),
        (
            lambda m: m.bincount(m.tensor([1, 2]), minlength=-1),
            RuntimeError,
            "minlength should be >= 0",
        ),
        (
            lambda m: m.bincount(m.tensor([1, 2]), m.ones(3)),
            RuntimeError,
            "weights should be 1-d and have the same length as input",
        ),
        (
            lambda m: m.histc(m.tensor([1, 2])),
            NotImplementedError,
            "\"histogram_cpu\" not implemented for 'Long'",
        ),
        (
            lambda m: m.histc(m.ones(2), bins=0),
            RuntimeError,
            "torch.histogram(): bins must be > 0, but got 0 for dimension 0",
        ),
        (
            lambda m: m.histc(m.ones(2), bins=3, min=3, max=1),
            RuntimeError,
            "torch.histc: max must be larger than min",
        ),
        (
            lambda m: m.histc(m.tensor([1.0, math.inf]), bins=3),
            RuntimeError,
            "torch.histc: range of [1, inf] is not finite",
        ),
        (
            lambda m: m.histogram(m.tensor([1, 2]), 4),
            NotImplementedError,
            "\"histogramdd\" not implemented for 'Long'",
        ),
        (
            lambda m: m.histogram(m.ones(2), -1),
            RuntimeError,
            "torch.histogram(): bins must be > 0, but got -1 for dimension 0",
        ),
        (
            lambda m: m.histogram(m.ones(2), 4, range=(3.0, 1.0)),
            RuntimeError,
            "torch.histogramdd: min should not exceed max, but got min 3 max 1 for dimension 0",
        ),
        (
            lambda m: m.histogram(m.ones(2), 4, weight=m.ones(3)),
            RuntimeError,
            (
                "torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                "input tensor excluding its innermost dimension, but got input with shape [2, 1] and "
                "weight with shape [3]"
            ),
        ),
        (
            lambda m: m.histogram(m.ones(2), m.ones(1, 2)),
            RuntimeError,
            (
                "torch.histogramdd: bins tensor should have one dimension, but got 2 dimensions in the "
                "bins tensor for dimension 0"
            ),
        ),
        (
            lambda m: m.histogram(m.ones(3, dtype=m.float64), m.tensor([0.0, 2.0])),
            RuntimeError,
            (
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                "input with dtype double and bins for dimension 0 with dtype float"
            ),
        ),
        (
            lambda m: m.histogram(m.ones(3), 2, weight=m.ones(3, dtype=m.float64)),
            RuntimeError,
            (
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                "should have the same dtype, but got input(float), and weight(double)"
            ),
        ),
        (
            lambda m: m.dist(m.tensor([1, 2]), m.tensor([3, 5])),
            RuntimeError,
            "norm(): input dtype should be either floating point or complex. Got Long instead.",
        ),
        (
            lambda m: m.dist(m.ones(2), 3),
            TypeError,
            "dist(): argument 'other' (position 2) must be Tensor, not int",
        ),
        (
            lambda m: m.dist(m.ones(2), m.ones(2), "fro"),
            TypeError,
            "dist(): argument 'p' (position 3) must be Number, not str",
        ),
        (
            lambda m: m.dist(m.ones(2), m.ones(3)),
            RuntimeError,
            (
                "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
                "dimension 0"
            ),
        ),
        (
            lambda m: m.cov(m.ones(2, 2, 2)),
            RuntimeError,
            (
                "cov(): expected input to have two or fewer dimensions but got an input with 3 "
                "dimensions"
            ),
        ),
        (
            lambda m: m.cov(m.tensor(M2), fweights=m.tensor([1.0, 2, 1])),
            RuntimeError,
            "cov(): expected fweights to have integral dtype but got fweights with Float dtype",
        ),
        (
            lambda m: m.cov(m.tensor(M2), fweights=m.tensor([-1, 2, 1])),
            RuntimeError,
            "cov(): fweights cannot be negative",
        ),
        (
            lambda m: m.cov(m.tensor(M2), aweights=m.tensor([-1.0, 2, 1])),
            RuntimeError,
            "cov(): aweights cannot be negative",
        ),
        (
            lambda m: m.cov(m.tensor(M2), fweights=m.tensor([1, 2])),
            RuntimeError,
            (
                "cov(): expected fweights to have the same numel as there are observations in the "
                "input but got 2 != 3"
            ),
        ),
        (
            lambda m: m.cov(m.tensor(M2), fweights=m.tensor([[1, 2, 1]])),
            RuntimeError,
            (
                "cov(): expected fweights to have one or fewer dimensions but got fweights with 2 "
                "dimensions"
            ),
        ),
        (
            lambda m: m.cov(m.tensor(M2), aweights=m.tensor([1, 2, 1])),
            RuntimeError,
            (
                "cov(): expected aweights to have floating point dtype but got aweights with Long "
                "dtype"
            ),
        ),
        (
            lambda m: m.corrcoef(m.ones(2, 2, 2)),
            RuntimeError,
            (
                "corrcoef(): expected input to have two or fewer dimensions but got an input with 3 "
                "dimensions"
            ),
        ),
    ],
)
def test_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)
