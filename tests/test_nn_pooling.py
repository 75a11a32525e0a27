"""Pooling (issue 6): max / avg / LP / adaptive / fractional pooling and unpooling, functional and
modules. Parity with torch over a grid of kernel/stride/padding/dilation/ceil_mode in 1d/2d/3d
(values, dtypes, indices, gradients with a non-uniform upstream gradient), torch's tie rule,
float64 gradcheck and gradgradcheck, module reprs, torch's error messages, names (spec P129)
and the dispatch discipline on the strict fake-cupy backend."""

import itertools

import ember
import ember.nn as enn
import ember.nn.functional as EF
import numpy as np
import pytest
from harness import A, Case, assert_same, needs_torch, raises_like_torch, run_case, run_gradcheck
from nn_harness import check_module

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the oracle is optional: parity rows skip
    torch = TF = None


def F(m):
    """The functional namespace of module ``m`` (ember or torch)."""
    return EF if m is ember else TF


# ---------------------------------------------------------------------- parity grids
SHAPES = {1: [(2, 3, 9), (3, 8)], 2: [(2, 3, 7, 8), (3, 6, 5)], 3: [(2, 2, 5, 6, 4), (2, 5, 4, 6)]}


_THIN = {1: 2, 2: 1, 3: 4}  # keep every 2-d config; 1 in 2 (1-d), 1 in 4 (3-d): same code


def _keep(idx, nd):
    # the kept rows mix all option values: stepping by (idx + idx // 2) avoids keeping only
    # the configs of one parity (the last option alternates)
    return (idx + idx // 2) % _THIN[nd] == 0


def _max_rows():
    rows = []
    grid = list(itertools.product([1, 2, 3], [None, 1, 2], [0, 1], [1, 2], [False, True]))
    for nd, shapes in SHAPES.items():
        valid = [
            g
            for g in grid
            if g[2] <= ((g[0] - 1) * g[3] + 1) // 2 and (nd > 1 or g[2] <= g[0] // 2)
        ]
        for idx, (k, s, p, d, c) in enumerate(valid):
            shape = shapes[(idx // 5) % 2]
            if not _keep(idx, nd) or min(shape[-nd:]) + 2 * p < (k - 1) * d + 1:
                continue
            dt = "float64" if (idx // 3) % 2 else "float32"
            rows.append(
                Case(
                    f"max_pool{nd}d-{shape}-k{k}s{s}p{p}d{d}c{int(c)}-{dt}",
                    lambda m, x, nd=nd, a=(k, s, p, d, c): getattr(F(m), f"max_pool{nd}d")(
                        x, *a, return_indices=True
                    ),
                    [A(*shape, dtype=dt)],
                )
            )
    return rows


def _avg_rows():
    rows = []
    grid = list(itertools.product([1, 2, 3], [None, 1, 2], [0, 1], [False, True], [False, True]))
    for nd, shapes in SHAPES.items():
        valid = [g for g in grid if g[2] <= g[0] // 2]
        for idx, (k, s, p, c, cip) in enumerate(valid):
            if not _keep(idx, nd):
                continue
            shape = shapes[(idx // 5) % 2]
            div = (None, 5)[(idx // 7) % 2] if nd > 1 else None
            args = (k, s, p, c, cip) + ((div,) if nd > 1 else ())
            dt = "float64" if (idx // 3) % 2 else "float32"
            rows.append(
                Case(
                    f"avg_pool{nd}d-{shape}-k{k}s{s}p{p}c{int(c)}cip{int(cip)}div{div}-{dt}",
                    lambda m, x, nd=nd, a=args: getattr(F(m), f"avg_pool{nd}d")(x, *a),
                    [A(*shape, dtype=dt)],
                )
            )
    return rows


def _adaptive_rows():
    rows = []
    for nd, shapes in SHAPES.items():
        for shape in shapes:
            outs = [1, 2, 3, 4, 7] if nd == 1 else [1, 3, (2, None, 3)[:nd], (4,) * nd]
            for o in outs:
                for kind in ("avg", "max"):
                    extra = (True,) if kind == "max" else ()
                    rows.append(
                        Case(
                            f"adaptive_{kind}_pool{nd}d-{shape}-{o}",
                            lambda m, x, nd=nd, o=o, kind=kind, e=extra: getattr(
                                F(m), f"adaptive_{kind}_pool{nd}d"
                            )(x, o, *e),
                            [A(*shape)],
                        )
                    )
    return rows


MAX_ROWS = _max_rows()
AVG_ROWS = _avg_rows()
ADAPTIVE_ROWS = _adaptive_rows()


@needs_torch
@pytest.mark.parametrize("case", MAX_ROWS, ids=str)
def test_max_pool_parity(case):
    run_case(case)


@needs_torch
@pytest.mark.parametrize("case", AVG_ROWS, ids=str)
def test_avg_pool_parity(case):
    run_case(case)


@needs_torch
@pytest.mark.parametrize("case", ADAPTIVE_ROWS, ids=str)
def test_adaptive_pool_parity(case):
    run_case(case)


def _smp(n, c, nd, dt):
    """Fractional pooling's random samples, fixed: (batch, channels, nd) in [0, 1)."""
    return np.random.default_rng(3).random((n, c, nd)).astype(dt)


def _samples(shape, nd, dt):
    """Samples for an input of ``shape`` (batched or not)."""
    return _smp(shape[0] if len(shape) == nd + 2 else 1, shape[-nd - 1], nd, dt)


FRACTIONAL_ROWS = [
    Case(
        f"fractional_max_pool{nd}d-{shape}-k{k}-{o}-{dt}",
        lambda m, x, nd=nd, k=k, o=o, shape=shape, dt=dt: getattr(
            F(m), f"fractional_max_pool{nd}d"
        )(x, k, o, None, True, m.tensor(_samples(shape, nd, dt))),
        [A(*shape, dtype=dt)],
    )
    for nd, shape, k, o, dt in [
        (2, (2, 3, 7, 8), 2, 3, "float32"),
        (2, (2, 3, 7, 8), 3, (4, 5), "float64"),
        (2, (3, 9, 6), 2, (4, 5), "float32"),
        (2, (2, 3, 7, 8), 1, 1, "float32"),
        (2, (2, 3, 7, 8), (2, 3), (6, 6), "float64"),
        (3, (2, 2, 7, 6, 7), 2, 3, "float32"),
        (3, (2, 2, 7, 6, 7), (2, 3, 1), (4, 3, 5), "float64"),
        (3, (2, 6, 5, 7), 2, 2, "float32"),
    ]
] + [
    Case(
        f"fractional_max_pool{nd}d-ratio",
        lambda m, x, nd=nd: getattr(F(m), f"fractional_max_pool{nd}d")(
            x, 2, None, (0.5, 0.7, 0.6)[:nd], True, m.tensor(_smp(2, 3, nd, "float32"))
        ),
        [A(*((2, 3) + (7, 8, 6)[:nd]))],
    )
    for nd in (2, 3)
]


@needs_torch
@pytest.mark.parametrize("case", FRACTIONAL_ROWS, ids=str)
def test_fractional_max_pool_parity(case):
    run_case(case)


def _unpool_case(nd, shape, k, s, p, osz):
    def fn(m, x):
        y, i = getattr(F(m), f"max_pool{nd}d")(x, k, s, p, return_indices=True)
        return getattr(F(m), f"max_unpool{nd}d")(y * 2, i, k, s, p, osz)

    return Case(f"max_unpool{nd}d-{shape}-k{k}s{s}p{p}-{osz}", fn, [A(*shape)])


UNPOOL_ROWS = [
    _unpool_case(1, (2, 3, 8), 2, None, 0, None),
    _unpool_case(1, (3, 9), 3, 2, 1, None),
    _unpool_case(1, (2, 3, 9), 2, None, 0, (2, 3, 9)),
    _unpool_case(2, (2, 3, 6, 8), 2, None, 0, None),
    _unpool_case(2, (2, 3, 7, 7), 2, None, 0, (7, 7)),
    _unpool_case(2, (3, 7, 7), 3, 2, 1, None),
    _unpool_case(3, (2, 2, 4, 6, 4), 2, None, 0, (5, 7, 4)),
    _unpool_case(3, (2, 5, 4, 6), 2, 1, 1, None),
]


@needs_torch
@pytest.mark.parametrize("case", UNPOOL_ROWS, ids=str)
def test_max_unpool_parity(case):
    run_case(case)


LP_ROWS = [
    Case(
        f"lp_pool{nd}d-p{nt}-k{k}s{s}c{int(c)}",
        lambda m, x, nd=nd, a=(nt, k, s, c): getattr(F(m), f"lp_pool{nd}d")(x, *a),
        [A(*shape, low=0.2, high=2.0)],
    )
    for nd, shape in [(1, (2, 3, 9)), (2, (2, 3, 7, 8)), (3, (2, 2, 5, 6, 4))]
    for nt, k, s, c in [(2, 2, None, False), (3, 3, 2, True), (1.5, 2, 1, False)]
] + [
    Case(
        f"lp_pool{nd}d-inf",
        lambda m, x, nd=nd: getattr(F(m), f"lp_pool{nd}d")(x, float("inf"), 2, None, True),
        [A(*shape)],
    )
    for nd, shape in [(1, (2, 3, 9)), (2, (2, 3, 7, 8)), (3, (2, 2, 5, 6, 4))]
]


@needs_torch
@pytest.mark.parametrize("case", LP_ROWS, ids=str)
def test_lp_pool_parity(case):
    run_case(case)


# ---------------------------------------------------------------------- ties, NaN, infinities
_TIES = np.random.default_rng(0).integers(0, 2, (2, 3, 8, 8)).astype("float32")
_NAN = np.array([[[np.nan, 1, np.nan, 0, 5, -np.inf, -np.inf, np.nan, 2]]], "float32")


def _const_case(name, arr, fn, grad=True):
    """``fn(m, x)`` on the constant array ``arr`` times a differentiable ones tensor."""
    return Case(name, lambda m, one: fn(m, m.tensor(arr) * one), [A(1, low=1, high=1)], grad=grad)


TIE_ROWS = (
    [
        _const_case(
            f"ties-max_pool2d-k{k}s{s}p{p}",
            _TIES,
            lambda m, x, a=(k, s, p): F(m).max_pool2d(x, *a, return_indices=True),
        )
        for k, s, p in [(2, 2, 0), (3, 1, 1), (3, 2, 1), (2, 3, 1)]
    ]
    + [
        Case(
            "ties-relu-max_pool2d",
            lambda m, x: F(m).max_pool2d(F(m).relu(x), 2, return_indices=True),
            [A(2, 3, 8, 8)],
        ),
        _const_case("ties-max_pool3d", _TIES[None], lambda m, x: F(m).max_pool3d(x, 2, 1, 1)),
        _const_case(
            "ties-adaptive_max_pool2d", _TIES, lambda m, x: F(m).adaptive_max_pool2d(x, 3, True)
        ),
        _const_case(
            "ties-fractional_max_pool2d",
            _TIES,
            lambda m, x: F(m).fractional_max_pool2d(
                x, 2, 4, None, True, m.tensor(_samples(_TIES.shape, 2, "float32"))
            ),
        ),
    ]
    + [
        _const_case(
            f"nan-max_pool1d-k{k}s{s}p{p}",
            _NAN,
            lambda m, x, a=(k, s, p): F(m).max_pool1d(x, *a, return_indices=True),
        )
        for k, s, p in [(2, 2, 0), (3, 1, 1), (4, 2, 2)]
    ]
    + [
        _const_case(
            "nan-adaptive_max_pool1d", _NAN, lambda m, x: F(m).adaptive_max_pool1d(x, 3, True)
        ),
        _const_case(
            "neg-inf-padding",
            np.full((1, 1, 5), -np.inf, "float32"),
            lambda m, x: F(m).max_pool1d(x, 3, 1, 1, return_indices=True),
            grad=False,
        ),
    ]
)


@needs_torch
@pytest.mark.parametrize("case", TIE_ROWS, ids=str)
def test_max_pool_ties_and_nan(case):
    # torch's argmax: the first maximum of a window; with NaNs, the last NaN
    run_case(case)


# ---------------------------------------------------------------------- dtypes
DTYPE_ROWS = (
    [
        Case(
            f"max_pool2d-{dt}",
            lambda m, x: F(m).max_pool2d(x, 2, 1, 1, return_indices=True),
            [A(2, 3, 5, 6, dtype=dt, low=-5, high=5)],
            grad=False,
        )
        for dt in ["int64", "int32", "int16", "uint8", "float16"]
    ]
    + [
        Case(
            f"max_pool3d-{dt}",
            lambda m, x: F(m).max_pool3d(x, 2, return_indices=True),
            [A(2, 4, 5, 6, dtype=dt, low=-5, high=5)],
            grad=False,
        )
        for dt in ["int64", "int8"]
    ]
    + [
        Case(
            f"avg_pool{nd}d-int64-{args}",
            lambda m, x, nd=nd, a=args: getattr(F(m), f"avg_pool{nd}d")(x, *a),
            [A(*shape, dtype="int64", low=-9, high=9)],
            grad=False,
        )
        for nd, shape in [(1, (2, 3, 9)), (2, (2, 3, 7, 8)), (3, (2, 2, 5, 6, 4))]
        for args in [(2,), (3, 2, 1), (3, 2, 1, True, False)]
    ]
    + [
        Case(
            "max_pool1d_with_indices-int64",
            lambda m, x: F(m).max_pool1d(x, 3, 2, 1, return_indices=True),
            [A(2, 3, 9, dtype="int64", low=-5, high=5)],
            grad=False,
        ),
        Case(
            "window-all-padding",  # with dilation a window may hold no input: torch's index rule
            lambda m, x: F(m).max_pool2d(x, (2, 2), (3, 2), (1, 0), (2, 1), True, True),
            [A(2, 1, 2)],
            grad=False,
        ),
        Case(
            "avg_pool2d-float16",
            lambda m, x: F(m).avg_pool2d(x, 2),
            [A(2, 3, 4, 4, dtype="float16")],
            grad=False,
            atol=1e-3,
            rtol=1e-3,
        ),
        Case(
            "empty-batch-max",
            lambda m, x: F(m).max_pool2d(x, 2, return_indices=True),
            [A(0, 2, 5, 5)],
        ),
        Case("empty-batch-avg", lambda m, x: F(m).avg_pool3d(x, 2), [A(0, 2, 4, 5, 5)]),
        Case(
            "empty-batch-adaptive",
            lambda m, x: F(m).adaptive_max_pool2d(x, 2, True),
            [A(0, 2, 5, 5)],
        ),
        Case(
            "zero-output-adaptive",
            lambda m, x: F(m).adaptive_avg_pool2d(x, (0, 2)),
            [A(1, 2, 5, 5)],
            grad=False,
        ),
        Case(
            "zero-output-fractional",
            lambda m, x: F(m).fractional_max_pool2d(x, 2, 0, return_indices=True),
            [A(2, 3, 5, 5)],
        ),
    ]
)


@needs_torch
@pytest.mark.parametrize("case", DTYPE_ROWS, ids=str)
def test_pool_dtypes_and_empty(case):
    run_case(case)


@needs_torch
@pytest.mark.parametrize("dt", ["bfloat16", "half"])
def test_low_precision_floats(dt):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype("float32")
    for fn in (lambda F, t: F.avg_pool2d(t, 3, 1, 1), lambda F, t: F.max_pool2d(t, 3, 2, 1)):
        e = fn(EF, getattr(ember.tensor(x), dt)())
        t = fn(TF, getattr(torch.tensor(x), dt)())
        assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


# ---------------------------------------------------------------------- torch-namespace ops
NAMESPACE_ROWS = [
    Case("max_pool1d", lambda m, x: m.max_pool1d(x, 3, 2, 1, 1, True), [A(2, 3, 9)]),
    Case("max_pool2d", lambda m, x: m.max_pool2d(x, kernel_size=2, stride=1), [A(2, 3, 5, 6)]),
    Case("max_pool3d", lambda m, x: m.max_pool3d(x, (1, 2, 2)), [A(2, 3, 4, 5, 6)]),
    Case("max_pool1d_with_indices", lambda m, x: m.max_pool1d_with_indices(x, 2), [A(3, 8)]),
    Case("avg_pool1d", lambda m, x: m.avg_pool1d(x, 3, 2, 1, True, False), [A(2, 3, 9)]),
    Case("adaptive_avg_pool1d", lambda m, x: m.adaptive_avg_pool1d(x, 4), [A(2, 3, 9)]),
    Case("adaptive_max_pool1d", lambda m, x: m.adaptive_max_pool1d(x, 4), [A(2, 3, 9)]),
    Case(
        "F.max_pool2d_with_indices",
        lambda m, x: F(m).max_pool2d_with_indices(x, 3, 2, 1),
        [A(2, 3, 7, 6)],
    ),
    Case(
        "F.max_pool3d_with_indices",
        lambda m, x: F(m).max_pool3d_with_indices(x, 2),
        [A(2, 4, 5, 6)],
    ),
    Case(
        "F.adaptive_max_pool2d_with_indices",
        lambda m, x: F(m).adaptive_max_pool2d_with_indices(x, (3, None)),
        [A(2, 3, 7, 6)],
    ),
    Case(
        "F.adaptive_max_pool3d_with_indices",
        lambda m, x: F(m).adaptive_max_pool3d_with_indices(x, 2),
        [A(2, 4, 5, 6)],
    ),
    Case(
        "F.fractional_max_pool3d_with_indices",
        lambda m, x: F(m).fractional_max_pool3d_with_indices(
            x, 2, 3, _random_samples=m.tensor(_samples((4, 5, 6, 7), 3, "float32"))
        ),
        [A(4, 5, 6, 7)],
    ),
]


@needs_torch
@pytest.mark.parametrize("case", NAMESPACE_ROWS, ids=str)
def test_namespace_ops_parity(case):
    run_case(case)


def test_namespace_ops_exist():
    for name in [
        "max_pool1d",
        "max_pool2d",
        "max_pool3d",
        "avg_pool1d",
        "adaptive_avg_pool1d",
        "adaptive_max_pool1d",
        "max_pool1d_with_indices",
    ]:
        assert callable(getattr(ember, name)), name
        if torch is not None:
            assert hasattr(torch, name)


# ---------------------------------------------------------------------- gradcheck / gradgradcheck
# distinct positions of a 6x6 plane, as max_pool2d(2) would give
_UNPOOL_IDX = np.arange(3)[:, None] * 12 + np.arange(3)[None, :] * 2 + np.array([[0], [7], [6]])
_UNPOOL_IDX = np.broadcast_to(_UNPOOL_IDX, (2, 2, 3, 3)).astype("int64")
GRADCHECK_ROWS = (
    [
        Case(
            f"max_pool{nd}d-k3s2p1c",
            lambda m, x, nd=nd: getattr(F(m), f"max_pool{nd}d")(x, 3, 2, 1, 1, True),
            [A(*shape)],
        )
        for nd, shape in [(1, (2, 2, 7)), (2, (2, 2, 5, 6)), (3, (1, 2, 4, 5, 3))]
    ]
    + [
        Case(
            f"max_pool{nd}d-k2s1p1d2",
            lambda m, x, nd=nd: getattr(F(m), f"max_pool{nd}d")(x, 2, 1, 1, 2),
            [A(*shape)],
        )
        for nd, shape in [(1, (2, 2, 7)), (2, (2, 5, 6)), (3, (1, 2, 4, 5, 3))]
    ]
    + [
        Case(
            f"avg_pool{nd}d",
            lambda m, x, nd=nd, a=args: getattr(F(m), f"avg_pool{nd}d")(x, *a),
            [A(*shape)],
        )
        for nd, shape, args in [
            (1, (2, 2, 7), (3, 2, 1, True, False)),
            (2, (2, 2, 5, 6), (3, 2, 1, True, True, 5)),
            (2, (2, 5, 6), (2, 1, 1, False, False)),
            (3, (1, 2, 4, 5, 3), (2, 2, 1, True, False)),
        ]
    ]
    + [
        Case(
            f"adaptive_{kind}_pool{nd}d",
            lambda m, x, nd=nd, k=kind: getattr(F(m), f"adaptive_{k}_pool{nd}d")(x, 3),
            [A(*shape)],
        )
        for nd, shape in [(1, (2, 2, 7)), (2, (2, 2, 5, 4)), (3, (1, 2, 4, 5, 3))]
        for kind in ("avg", "max")
    ]
    + [
        Case(
            f"lp_pool{nd}d",
            lambda m, x, nd=nd: getattr(F(m), f"lp_pool{nd}d")(x, 2, 2),
            [A(*shape, low=0.5, high=2.0)],
        )
        for nd, shape in [(1, (2, 2, 6)), (2, (2, 2, 4, 4)), (3, (1, 2, 4, 4, 2))]
    ]
    + [
        Case(
            "fractional_max_pool2d",
            lambda m, x: F(m).fractional_max_pool2d(
                x, 2, 3, _random_samples=m.tensor(_smp(2, 2, 2, "float64"))
            ),
            [A(2, 2, 6, 5)],
        ),
        Case(
            "fractional_max_pool3d",
            lambda m, x: F(m).fractional_max_pool3d(
                x, 2, 2, _random_samples=m.tensor(_smp(1, 2, 3, "float64"))
            ),
            [A(1, 2, 4, 5, 4)],
        ),
        Case(
            "max_unpool2d",
            lambda m, x: F(m).max_unpool2d(x, m.tensor(_UNPOOL_IDX), 2),
            [A(2, 2, 3, 3)],
        ),
    ]
)


@pytest.mark.parametrize("case", GRADCHECK_ROWS, ids=str)
def test_pool_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


# ---------------------------------------------------------------------- modules
MODULES = [
    (lambda m: m.nn.MaxPool1d(3, 2, 1, 2, True, True), [A(2, 3, 9)]),
    (lambda m: m.nn.MaxPool2d(2), [A(2, 3, 6, 8)]),
    (lambda m: m.nn.MaxPool2d((2, 3), (1, 2), (1, 1), ceil_mode=True), [A(3, 6, 8)]),
    (lambda m: m.nn.MaxPool3d(2, return_indices=True), [A(2, 2, 4, 4, 6)]),
    (lambda m: m.nn.AvgPool1d(3, 2, 1, True, False), [A(2, 3, 9)]),
    (lambda m: m.nn.AvgPool2d(3, 2, 1, divisor_override=4), [A(2, 3, 6, 8)]),
    (lambda m: m.nn.AvgPool3d((1, 2, 2)), [A(2, 4, 4, 6)]),
    (lambda m: m.nn.LPPool1d(2, 3), [A(2, 3, 9)]),
    (lambda m: m.nn.LPPool2d(3, (2, 3), 2, True), [A(2, 3, 6, 8, low=0.1)]),
    (lambda m: m.nn.LPPool3d(2, 2), [A(2, 2, 4, 4, 6)]),
    (lambda m: m.nn.AdaptiveAvgPool1d(4), [A(2, 3, 9)]),
    (lambda m: m.nn.AdaptiveAvgPool2d((None, 3)), [A(2, 3, 6, 8)]),
    (lambda m: m.nn.AdaptiveAvgPool3d(2), [A(2, 2, 4, 5, 6)]),
    (lambda m: m.nn.AdaptiveMaxPool1d(4, True), [A(2, 3, 9)]),
    (lambda m: m.nn.AdaptiveMaxPool2d((3, None)), [A(2, 3, 6, 8)]),
    (lambda m: m.nn.AdaptiveMaxPool3d(2, True), [A(2, 2, 4, 5, 6)]),
    (
        lambda m: m.nn.FractionalMaxPool2d(
            2, output_size=3, _random_samples=m.tensor(_smp(2, 3, 2, "float32"))
        ),
        [A(2, 3, 6, 8)],
    ),
    (
        lambda m: m.nn.FractionalMaxPool3d(
            2,
            output_ratio=0.5,
            return_indices=True,
            _random_samples=m.tensor(_smp(2, 2, 3, "float32")),
        ),
        [A(2, 2, 6, 6, 8)],
    ),
]


@needs_torch
@pytest.mark.parametrize("row", range(len(MODULES)))
def test_module_parity(row):
    ctor, inputs = MODULES[row]
    check_module(ctor, inputs, dtypes=("float32",))
    assert repr(ctor(ember)) == repr(ctor(torch))


@needs_torch
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_unpool_modules(nd):
    shape = (2, 3) + (6, 8, 4)[:nd]
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    outs = []
    for m in (ember, torch):
        pool = getattr(m.nn, f"MaxPool{nd}d")(2, return_indices=True)
        unpool = getattr(m.nn, f"MaxUnpool{nd}d")(2)
        assert repr(unpool) == repr(getattr(torch.nn, f"MaxUnpool{nd}d")(2))
        y, i = pool(m.tensor(x))
        outs.append(unpool(y, i, output_size=list(shape)).numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


@needs_torch
def test_module_reprs():
    ctors = [
        lambda m: m.nn.MaxPool1d(3, 2, 1, 2, True, True),
        lambda m: m.nn.AvgPool2d(2),
        lambda m: m.nn.AvgPool3d(2, divisor_override=2),
        lambda m: m.nn.MaxUnpool3d(2, 1, 0),
        lambda m: m.nn.LPPool2d(2, 3),
        lambda m: m.nn.AdaptiveMaxPool2d(3, True),
        lambda m: m.nn.FractionalMaxPool2d(2, output_ratio=0.5),
    ]
    for c in ctors:
        assert repr(c(ember)) == repr(c(torch))
    a, b = (
        enn.FractionalMaxPool2d(2, output_ratio=0.5),
        torch.nn.FractionalMaxPool2d(2, output_ratio=0.5),
    )
    assert (a.kernel_size, a.output_size, a.output_ratio) == (
        b.kernel_size,
        b.output_size,
        b.output_ratio,
    )
    assert isinstance(enn.modules.pooling.MaxPool2d(2), enn.Module)


def test_fractional_draws_from_global_generator():
    x = ember.randn(2, 3, 9, 9)
    ember.manual_seed(5)
    a = EF.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    ember.manual_seed(5)
    b = EF.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    c = EF.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    assert a[0].shape == (2, 3, 4, 4)
    assert ember.equal(a[1], b[1]) and not ember.equal(b[1], c[1])


# ---------------------------------------------------------------------- errors (torch's messages)
X1, X2, X3 = (2, 3, 5), (2, 3, 5, 5), (2, 3, 5, 5, 5)
ERRORS = [
    # max_pool2d / 3d
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 3, padding=2),
        RuntimeError,
        (
            "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and "
            "dilation=1"
        ),
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 3, dilation=2, padding=3),
        RuntimeError,
        "pad should be at most half of effective kernel size, but got pad=3",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 7),
        RuntimeError,
        "Given input size: (3x5x5). Calculated output size: (3x0x0). Output size is too small",
    ),
    (lambda m: F(m).max_pool2d(m.ones(*X2), 0), RuntimeError, "stride should not be zero"),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), -1),
        RuntimeError,
        "kernel size should be greater than zero, but got kH: -1 kW: -1",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 2, stride=-1),
        RuntimeError,
        "stride should be greater than zero, but got dH: -1 dW: -1",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 2, dilation=0),
        RuntimeError,
        "dilation should be greater than zero, but got dilationH: 0 dilationW: 0",
    ),
    (
        lambda m: F(m).max_pool3d(m.ones(*X3), 2, dilation=0),
        RuntimeError,
        "dilation should be greater than zero, but got dilationT: 0 dilationH: 0 dilationW: 0",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 2, padding=-1),
        RuntimeError,
        "pad must be non-negative, but got pad: -1",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), (2, 2, 2)),
        RuntimeError,
        "max_pool2d: kernel_size must either be a single int, or a tuple of two ints",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 2, (2, 2, 2)),
        RuntimeError,
        "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints",
    ),
    (
        lambda m: F(m).max_pool3d(m.ones(*X3), 2, 2, (1, 1)),
        RuntimeError,
        "max_pool3d: padding must either be a single int, or a tuple of three ints",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 2, dilation=(1, 1, 1)),
        RuntimeError,
        "max_pool2d: dilation must be either a single int, or a tuple of two ints",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(5, 5), 2),
        RuntimeError,
        "non-empty 3D or 4D (batch mode) tensor expected for input",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(2, 3, 0, 5), 2),
        RuntimeError,
        (
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
            "got:[2, 3, 0, 5]"
        ),
    ),
    (
        lambda m: F(m).max_pool3d(m.ones(2, 0, 5, 5, 5), 2),
        RuntimeError,
        (
            "Expected input's non-batch dimensions to have positive length, but input has a shape of "
            "[2, 0, 5, 5, 5] and non-batch dimension 0 has length zero!"
        ),
    ),
    (
        lambda m: F(m).max_pool3d(m.ones(*X3), 7),
        RuntimeError,
        "Given input size: (3x5x5x5). Calculated output size: (3x0x0x0). Output size is too small",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2).bool(), 2),
        NotImplementedError,
        "\"max_pool2d\" not implemented for 'Bool'",
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(*X2), 2.0),
        TypeError,
        "argument 'kernel_size' (position 2) must be tuple of ints, not float",
    ),
    (
        lambda m: F(m).avg_pool2d(m.ones(5), 2),
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got -3)",
    ),
    (
        lambda m: F(m).avg_pool2d(m.ones(2, 2, 2, 5, 5), 2),
        RuntimeError,
        (
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
            "got:[2, 2, 2, 5, 5]"
        ),
    ),
    (
        lambda m: F(m).max_pool2d(m.ones(1, 1, 4, 4), (3, 1), padding=(2, 0), dilation=2),
        RuntimeError,
        (
            "pad should be smaller than or equal to half of kernel size, but got padW = 0, padH = 2, "
            "kW = 1, kH = 3"
        ),
    ),
    (
        lambda m: F(m).max_pool3d(m.ones(1, 1, 4, 7, 4), (1, 3, 2), padding=(0, 2, 0), dilation=2),
        RuntimeError,
        (
            "pad should be smaller than or equal to half of kernel size, but got kT: 1 kW: 2 kH: 3 "
            "padT: 0 padW: 0 padH: 2"
        ),
    ),
    (
        lambda m: F(m).avg_pool3d(m.ones(1, 1, 6, 2, 6), (1, 3, 1), padding=(0, 1, 0)),
        RuntimeError,
        "input image (T: 6 H: 2 W: 6) smaller than kernel size (kT: 1 kH: 3 kW: 1)",
    ),
    # max_pool1d with indices: torch runs it as a 2-d pool of height 1
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 7, return_indices=True),
        RuntimeError,
        "Given input size: (3x1x5). Calculated output size: (3x1x0). Output size is too small",
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), (2, 2), return_indices=True),
        RuntimeError,
        "max_pool1d() argument 'kernel_size' should contain one int (got 2)",
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(5), (2, 2), return_indices=True),
        RuntimeError,
        (
            "Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 'self' (while "
            "checking arguments for max_pool1d)"
        ),
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 2, dilation=0, return_indices=True),
        RuntimeError,
        "dilation should be greater than zero, but got dilationH: 1 dilationW: 0",
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(2, 0, 5), 2, return_indices=True),
        RuntimeError,
        (
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
            "got:[2, 0, 1, 5]"
        ),
    ),
    # max_pool1d
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 3, padding=2),
        RuntimeError,
        (
            "max_pool1d() padding should be at most half of kernel size, but got padding=2 and "
            "kernel_size=3"
        ),
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 7),
        RuntimeError,
        "max_pool1d() Invalid computed output size: 0",
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 0),
        RuntimeError,
        "max_pool1d() kernel_size must be greater than zero, but got 0",
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 2, -1),
        RuntimeError,
        "max_pool1d() stride must be greater than zero, but got -1",
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 2, padding=-1),
        RuntimeError,
        "max_pool1d() padding must be non-negative, but got -1",
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 2, dilation=0),
        RuntimeError,
        "max_pool1d() dilation must be greater than zero, but got 0",
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), (2, 2)),
        RuntimeError,
        (
            "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got "
            "size 2"
        ),
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1), 2, (2, 2)),
        RuntimeError,
        (
            "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got "
            "size 2"
        ),
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(5), 2),
        RuntimeError,
        (
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
            "input, but got:[5]"
        ),
    ),
    (
        lambda m: F(m).max_pool1d(m.ones(*X1).long(), 2),
        NotImplementedError,
        "\"max_pool1d_impl\" not implemented for 'Long'",
    ),
    # avg pooling
    (
        lambda m: F(m).avg_pool2d(m.ones(*X2), 2, padding=2),
        RuntimeError,
        (
            "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
            "dilation=1"
        ),
    ),
    (
        lambda m: F(m).avg_pool1d(m.ones(*X1), 7),
        RuntimeError,
        "Given input size: (3x1x5). Calculated output size: (3x1x0). Output size is too small",
    ),
    (
        lambda m: F(m).avg_pool1d(m.ones(*X1), (2, 2)),
        RuntimeError,
        "avg_pool1d() argument 'kernel_size' should contain one int (got 2)",
    ),
    (
        lambda m: F(m).avg_pool1d(m.ones(5), 2),
        RuntimeError,
        (
            "Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 'self' (while "
            "checking arguments for avg_pool1d)"
        ),
    ),
    (
        lambda m: F(m).avg_pool3d(m.ones(*X3), 7),
        RuntimeError,
        "input image (T: 5 H: 5 W: 5) smaller than kernel size (kT: 7 kH: 7 kW: 7)",
    ),
    (
        lambda m: F(m).avg_pool3d(m.ones(*X3), (2, 2)),
        RuntimeError,
        "avg_pool3d: kernel_size must be a single int, or a tuple of three ints",
    ),
    (
        lambda m: F(m).avg_pool2d(m.ones(*X2), 2, divisor_override=0),
        RuntimeError,
        "divisor must be not zero",
    ),
    (
        lambda m: F(m).avg_pool2d(m.ones(*X2).int(), 2),
        NotImplementedError,
        "\"avg_pool2d\" not implemented for 'Int'",
    ),
    (
        lambda m: F(m).avg_pool3d(m.ones(*X3).half(), 2),
        NotImplementedError,
        "\"avg_pool3d_out_frame\" not implemented for 'Half'",
    ),
    # adaptive pooling
    (
        lambda m: F(m).adaptive_avg_pool2d(m.ones(*X2), (2, 2, 2)),
        RuntimeError,
        "adaptive_avg_pool2d: output_size must be 2",
    ),
    (
        lambda m: F(m).adaptive_avg_pool2d(m.ones(*X2), (-1, 2)),
        RuntimeError,
        (
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
            "received {-1, 2}"
        ),
    ),
    (
        lambda m: F(m).adaptive_max_pool2d(m.ones(*X2), (2, 2, 2)),
        RuntimeError,
        "adaptive_max_pool2d(): internal error: output_size.size() must be 2",
    ),
    (
        lambda m: F(m).adaptive_max_pool1d(m.ones(*X1), (2, 2)),
        RuntimeError,
        "adaptive_max_pool1d() argument 'output_size' should contain one int (got 2)",
    ),
    (
        lambda m: F(m).adaptive_avg_pool2d(m.ones(2, 3, 0, 4), 2),
        RuntimeError,
        (
            "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but "
            "input has sizes [2, 3, 0, 4] with dimension 2 being empty"
        ),
    ),
    (
        lambda m: F(m).adaptive_max_pool2d(m.ones(2, 0, 4, 4), 2),
        RuntimeError,
        (
            "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but "
            "input has sizes [2, 0, 4, 4] with dimension 1 being empty"
        ),
    ),
    (
        lambda m: F(m).adaptive_avg_pool3d(m.ones(4, 5), 2),
        RuntimeError,
        "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [4, 5]",
    ),
    (
        lambda m: F(m).adaptive_max_pool2d(m.ones(5), 2),
        RuntimeError,
        "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [5]",
    ),
    (
        lambda m: F(m).adaptive_avg_pool1d(m.ones(2, 3, 4, 5), 2),
        RuntimeError,
        (
            "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while "
            "checking arguments for adaptive_avg_pool1d)"
        ),
    ),
    (
        lambda m: F(m).adaptive_max_pool2d(m.ones(*X2).long(), 2),
        NotImplementedError,
        "\"adaptive_max_pool2d\" not implemented for 'Long'",
    ),
    # fractional
    (
        lambda m: F(m).fractional_max_pool2d(m.ones(2, 3, 6, 6), 3, output_size=5),
        RuntimeError,
        "fractional_max_pool2d(): pool height 3 too large relative to input height 6",
    ),
    (
        lambda m: F(m).fractional_max_pool3d(m.ones(2, 3, 6, 6, 6), 3, output_size=5),
        RuntimeError,
        "fractional_max_pool3d_out(): pool time 3 too large relative to input time 6",
    ),
    (
        lambda m: F(m).fractional_max_pool2d(m.ones(*X2), 2),
        ValueError,
        "fractional_max_pool2d requires specifying either an output_size or an output_ratio",
    ),
    (
        lambda m: F(m).fractional_max_pool2d(m.ones(*X2), 2, output_ratio=(0.5,) * 3),
        ValueError,
        "fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.",
    ),
    (
        lambda m: F(m).fractional_max_pool2d(m.ones(*X2), 2, (2, 2, 2)),
        RuntimeError,
        "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints",
    ),
    (
        lambda m: F(m).fractional_max_pool3d(m.ones(*X3), 2, (2, 2)),
        RuntimeError,
        "fractional_max_pool3d: output_size must either be a single Int or tuple of three Ints",
    ),
    (
        lambda m: F(m).fractional_max_pool2d(m.ones(*X2), 2, 2, _random_samples=m.rand(2, 3, 3)),
        RuntimeError,
        "Expect _random_samples.size(2) equals to 2; got 3.",
    ),
    (
        lambda m: F(m).fractional_max_pool2d(m.ones(*X2), 2, 2, _random_samples=m.rand(1, 3, 2)),
        RuntimeError,
        "Expect _random_samples.size(0) no less then input batch size.",
    ),
    (
        lambda m: F(m).fractional_max_pool2d(m.ones(*X3), 2, 2),
        RuntimeError,
        "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: [2, 3, 5, 5, 5]",
    ),
    (
        lambda m: m.nn.FractionalMaxPool2d(2),
        ValueError,
        "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio",
    ),
    (
        lambda m: m.nn.FractionalMaxPool2d(2, output_ratio=1.5),
        ValueError,
        "output_ratio must be between 0 and 1 (got 1.5)",
    ),
    (
        lambda m: m.nn.FractionalMaxPool3d(2, 2, 0.5),
        ValueError,
        "only one of output_size and output_ratio may be specified",
    ),
    # unpooling
    (
        lambda m: F(m).max_unpool2d(
            m.ones(2, 3, 3, 3), m.zeros(2, 3, 3, 3).long(), 2, output_size=(9, 9)
        ),
        ValueError,
        'invalid output_size "(9, 9)" (dim 0 must be between 4 and 8)',
    ),
    (
        lambda m: F(m).max_unpool2d(
            m.ones(2, 3, 3, 3), m.zeros(2, 3, 3, 3).long(), 2, output_size=(1, 2, 3, 6, 6)
        ),
        ValueError,
        "output_size should be a sequence containing 2 or 4 elements, but it has a length of '5'",
    ),
    (
        lambda m: F(m).max_unpool2d(m.ones(2, 3, 3, 3), m.full((2, 3, 3, 3), 40).long(), 2),
        RuntimeError,
        "Found an invalid max index: 40 (output volumes are of size 6x6)",
    ),
    (
        lambda m: F(m).max_unpool1d(m.ones(2, 3, 3), m.full((2, 3, 3), 40).long(), 2),
        RuntimeError,
        "Found an invalid max index: 40 (output volumes are of size 6x1)",
    ),
    (
        lambda m: F(m).max_unpool2d(m.ones(2, 3, 3, 3), m.zeros(2, 3, 2, 3).long(), 2),
        RuntimeError,
        (
            "Expected shape of indices to be same as that of the input tensor "
            "([2, 3, 3, 3]) but got indices tensor with shape: [2, 3, 2, 3]"
        ),
    ),
    (
        lambda m: F(m).max_unpool2d(m.ones(2, 3, 3, 3), m.zeros(2, 3, 3, 3).int(), 2),
        RuntimeError,
        "elements in indices should be type int64 but got: Int",
    ),
    (
        lambda m: F(m).max_unpool3d(m.ones(3, 3, 3), m.zeros(3, 3, 3).long(), 2),
        RuntimeError,
        "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3 dimensions.",
    ),
    (
        lambda m: F(m).max_unpool2d(m.ones(2, 3, 3, 3).long(), m.zeros(2, 3, 3, 3).long(), 2),
        NotImplementedError,
        "\"max_unpool2d\" not implemented for 'Long'",
    ),
]


@pytest.mark.parametrize("row", range(len(ERRORS)))
def test_errors_like_torch(row):
    fn, exc, msg = ERRORS[row]
    raises_like_torch(fn, exc, msg)


@needs_torch
def test_output_changed_in_place_keeps_backward():
    # like torch (which saves input and indices), max pooling's backward does not need its output
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 6)).astype("float32")
    grads = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        y = F(m).max_pool2d(t * 1, 2)
        F(m).relu(y, inplace=True)
        (y * m.arange(9.0).reshape(3, 3)).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


@needs_torch
@pytest.mark.parametrize("args", [(2,), (3, 1, 1), (2, 2, 1)])
def test_max_pool_non_finite_upstream_grad(args):
    # inf / NaN in the upstream gradient reach only the argmax positions (never inf * 0 = NaN)
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype("float32")
    res = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        y = F(m).max_pool2d(t, *args)
        g = np.ones(tuple(y.shape), "float32")
        g.flat[0], g.flat[5] = np.inf, np.nan
        y.backward(m.tensor(g))
        res.append(t.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], equal_nan=True)


@needs_torch
def test_max_pool_double_backward_like_torch():
    x = np.random.default_rng(4).standard_normal((2, 2, 5, 6))
    w = np.random.default_rng(5).standard_normal((2, 2, 3, 4))
    res = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        y = F(m).max_pool2d(t, 3, 2, 1, ceil_mode=True)
        u = m.tensor(w, requires_grad=True)
        (g,) = m.autograd.grad((y * u).sum(), [t], create_graph=True)
        (g * m.tensor(x)).sum().backward()
        res.append((g.detach().numpy(), u.grad.numpy()))
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(a, b, 1e-12, 1e-12)


_DOUBLE_POOLS = {
    "avg_pool1d": ((2, 3, 9), lambda F, x: F.avg_pool1d(x, 3, 2, 1)),
    "avg_pool2d": ((2, 2, 6, 7), lambda F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
    "avg_pool2d_div": ((1, 2, 6, 6), lambda F, x: F.avg_pool2d(x, 2, divisor_override=3)),
    "avg_pool3d": ((1, 2, 4, 5, 4), lambda F, x: F.avg_pool3d(x, 2, ceil_mode=True)),
    "adaptive_avg_pool1d": ((2, 3, 7), lambda F, x: F.adaptive_avg_pool1d(x, 4)),
    "adaptive_avg_pool2d": ((2, 2, 7, 6), lambda F, x: F.adaptive_avg_pool2d(x, (4, 3))),
    "adaptive_avg_pool3d": ((1, 2, 5, 4, 6), lambda F, x: F.adaptive_avg_pool3d(x, 3)),
    "max_pool1d": ((2, 3, 9), lambda F, x: F.max_pool1d(x, 3, 2)),
    "max_pool2d": ((2, 2, 6, 7), lambda F, x: F.max_pool2d(x, 3, 2, 1)),
    "max_pool2d_2x2": ((2, 2, 6, 8), lambda F, x: F.max_pool2d(x, 2)),
    "max_pool3d": ((1, 2, 4, 5, 4), lambda F, x: F.max_pool3d(x, 2)),
    "adaptive_max_pool2d": ((2, 2, 7, 6), lambda F, x: F.adaptive_max_pool2d(x, (4, 4))),
    "adaptive_max_pool2d_even": ((2, 2, 6, 6), lambda F, x: F.adaptive_max_pool2d(x, 3)),
    "adaptive_max_pool1d": ((2, 3, 7), lambda F, x: F.adaptive_max_pool1d(x, 3)),
    "fractional_max_pool2d": (
        (2, 1, 7, 7),
        lambda F, x: F.fractional_max_pool2d(
            x, 2, output_size=3, _random_samples=x.new_tensor([[[0.3, 0.6]], [[0.8, 0.1]]])
        ),
    ),
}


@needs_torch
@pytest.mark.parametrize("upstream_grad", [False, True])
@pytest.mark.parametrize("name", list(_DOUBLE_POOLS))
def test_pool_double_backward_input_gets_zeros_like_torch(name, upstream_grad):
    # the backward ops take the pooled input as an operand (torch's self, derivative zeros): the
    # first-order gradient has a graph even when the upstream gradient needs none, and x.grad
    # after the second backward is zeros, not None
    shape, fn = _DOUBLE_POOLS[name]
    x = np.random.default_rng(7).standard_normal(shape)
    res = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        y = fn(F(m), t)
        up = np.random.default_rng(9).standard_normal(tuple(y.shape))
        u = m.tensor(up, requires_grad=upstream_grad)
        (g,) = m.autograd.grad(y, [t], u, create_graph=True)
        assert g.requires_grad and g.grad_fn is not None
        w = m.tensor(np.random.default_rng(8).standard_normal(shape))
        (g * w).sum().backward()
        res.append((g.detach(), t.grad, u.grad))
    (eg, ex, eu), (tg, tx, tu) = res
    assert_same(eg, tg, 1e-12, 1e-12)
    assert ex is not None and tx is not None
    assert_same(ex, tx, 0, 0, "x.grad")  # zeros in both
    assert (eu is None) == (tu is None)
    if tu is not None:
        assert_same(eu, tu, 1e-12, 1e-12, "grad_output.grad")


# ---------------------------------------------------------------------- names (spec P129)
@pytest.mark.parametrize(
    "shape,names",
    [
        ((2, 3, 5), ("A", "B", "C")),
        ((2, 3, 5, 7), ("A", "B", "C", "D")),
        ((2, 3, 5, 7, 9), ("A", "B", "C", "D", "E")),
    ],
)
def test_max_pooling(shape, names):
    nd = len(shape) - 2
    x = ember.randn(*shape, names=names, requires_grad=True)
    y = getattr(EF, f"max_pool{nd}d")(x, 2)
    assert y.names == names
    v, i = getattr(EF, f"max_pool{nd}d_with_indices")(x, 2)
    assert v.names == names and i.names == names
    v, i = getattr(EF, f"max_pool{nd}d")(x, 2, return_indices=True)
    assert v.names == names and i.names == names
    (v * 1.0).sum().backward()
    assert x.grad.names == names
    # every pooling layer keeps all names (spec 4.3)
    for out in [
        getattr(EF, f"avg_pool{nd}d")(x, 2),
        getattr(EF, f"adaptive_avg_pool{nd}d")(x, 2),
        *getattr(EF, f"adaptive_max_pool{nd}d")(x, 2, True),
        getattr(EF, f"lp_pool{nd}d")(x.abs(), 2, 2),
        getattr(EF, f"max_unpool{nd}d")(v, i, 2, output_size=shape[2:]),
    ]:
        assert out.names == names
    if nd > 1:
        for out in getattr(EF, f"fractional_max_pool{nd}d")(x, 2, 2, return_indices=True):
            assert out.names == names
    unbatched = x.rename(None)[0].refine_names(*names[1:])
    assert getattr(EF, f"max_pool{nd}d")(unbatched, 2).names == names[1:]
    assert getattr(enn, f"MaxPool{nd}d")(2)(x).names == names


# ---------------------------------------------------------------------- dispatch discipline
def test_pooling_dispatch_on_strict_backend():
    from strict_backend import StrictArray, strict_cuda

    rng = np.random.default_rng(0)
    x2 = rng.standard_normal((2, 3, 6, 7))
    x3 = rng.standard_normal((1, 2, 4, 5, 6))
    smp = rng.random((2, 3, 2))

    def run(dev):
        a = ember.tensor(x2, device=dev, requires_grad=True)
        b = ember.tensor(x3, device=dev, requires_grad=True)
        s = ember.tensor(smp, device=dev)
        v, i = EF.max_pool2d(a, 3, 2, 1, return_indices=True, ceil_mode=True)
        outs = [
            v,
            i,
            EF.max_pool1d(a[0], 2),
            EF.max_pool3d(b, 2, 1, 1, 2),
            EF.avg_pool2d(a, 3, 2, 1, True, False),
            EF.avg_pool3d(b, 2, divisor_override=3),
            EF.avg_pool1d(a[0], 3, 2, 1),
            EF.adaptive_avg_pool2d(a, (4, 3)),
            *EF.adaptive_max_pool3d(b, 3, True),
            *EF.adaptive_max_pool2d(a, (3, 7), True),
            *EF.fractional_max_pool2d(a, 2, 3, None, True, s),
            EF.max_unpool2d(v, i, 3, 2, 1, output_size=(6, 7)),
            EF.lp_pool2d(a.abs(), 2, 2),
        ]
        loss = sum((o * o).sum() for o in outs if o.dtype.is_floating_point)
        ga, gb = ember.autograd.grad(loss, [a, b], create_graph=True)
        gga = ember.autograd.grad((ga * ga).sum() + (gb * gb).sum(), [a])[0]
        return outs + [ga, gb, gga]

    ref = run(None)
    with strict_cuda():
        got = run("cuda")
        for k, (g, r) in enumerate(zip(got, ref)):
            assert type(g._data) is StrictArray, f"result {k} computed on the host"
            np.testing.assert_allclose(g.detach().cpu().numpy(), r.detach().numpy(), 1e-7, 1e-9)


# ---------------------------------------------------------------------- MaxPool2d(2): the 2x2 op
def _pool2_run(m, a, g=None, **kw):
    x = m.tensor(a, requires_grad=True)
    y = m.nn.functional.max_pool2d(x, 2, **kw)
    up = np.arange(y.numel(), dtype=a.dtype).reshape(tuple(y.shape)) / 7 if g is None else g
    y.backward(m.tensor(up))
    return y.detach().numpy(), x.grad.numpy(), y


@needs_torch
@pytest.mark.parametrize("case", ["ties", "nan", "inf_grad", "neg_inf", "unbatched", "float64"])
def test_max_pool2x2_like_torch(case):
    # F.max_pool2d(x, 2) on even planes takes _max_pool2x2 (argmax masks kept from forward):
    # the first maximum of a window gets the gradient (ties after a relu are everywhere), a NaN
    # window and an inf gradient take the general backward
    rng = np.random.default_rng(4)
    shape = (3, 6, 4) if case == "unbatched" else (2, 3, 6, 8)
    dt = np.float64 if case == "float64" else np.float32
    a = np.maximum(rng.standard_normal(shape), 0).astype(dt)
    a[..., 0, 0] = a[..., 1, 1] = 0.5  # an exact tie inside one window
    g = None
    if case == "nan":
        a[..., 2, 3] = np.nan
    if case == "neg_inf":
        a[..., 4:, 4:] = -np.inf
    if case == "inf_grad":
        g = np.ones((2, 3, 3, 4), dt)
        g[0, 1, 1, 2] = np.inf
    ye, ge, y = _pool2_run(ember, a, g)
    yt, gt, _ = _pool2_run(torch, a, g)
    assert y.grad_fn.op.name == "_max_pool2x2"
    np.testing.assert_array_equal(ye, yt)
    np.testing.assert_array_equal(ge, gt)


def test_max_pool2x2_route_and_double_backward():
    x = ember.randn(2, 3, 4, 6, dtype=ember.float64, requires_grad=True)
    assert EF.max_pool2d(x, 2).grad_fn.op.name == "_max_pool2x2"
    assert EF.max_pool2d(x, (2, 2), stride=2).grad_fn.op.name == "_max_pool2x2"
    # odd sides, other strides, indices, half types: the general op
    assert EF.max_pool2d(x[..., :5], 2).grad_fn.op.name != "_max_pool2x2"
    assert EF.max_pool2d(x, 2, stride=1).grad_fn.op.name != "_max_pool2x2"
    assert EF.max_pool2d(x, 2, return_indices=True)[0].grad_fn.op.name != "_max_pool2x2"
    assert ember.autograd.gradcheck(lambda t: EF.max_pool2d(t, 2), (x,))
    assert ember.autograd.gradgradcheck(lambda t: EF.max_pool2d(t, 2), (x,))
    with ember.no_grad():  # no masks kept without a graph
        assert EF.max_pool2d(x, 2).grad_fn is None
