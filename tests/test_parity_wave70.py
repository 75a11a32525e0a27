"""Parity regressions found by the seventieth wave, a seeded random fuzz of reductions, scans and
sorts against torch (inputs of every dtype with 0-5 dims, size-0 and size-1 dims, transposed,
step-sliced and expanded starts, values with NaN, inf, -0.0 and ties; sum/mean/prod and their
nan forms, the scans, logsumexp, amax/amin/max/min/argmax/argmin/aminmax, std/var and their
_mean forms, the norms, all/any/count_nonzero, median/nanmedian/mode, quantile/nanquantile,
kthvalue/topk, sort/argsort/msort, unique/unique_consecutive, searchsorted/bucketize,
histc/histogram/bincount, diff and the trapezoid rules, with dim, keepdim, dtype= and out=
knobs, and gradients of ``(op(x) * w).sum()``): ``x.sum(dtype=torch.int32)`` (likewise nansum,
prod, cumsum, cumprod) of an ``x`` that requires grad is refused as torch's autograd refuses it,
and with an integer out= it is the out= refusal; a negative-order vector norm over an empty dim
is refused like the inf norms (naming the dim as given); trapezoid keeps an integer ``y`` in its
dtype until the halving (its pair sums wrap as torch's, an integer ``y`` with half sample
points is half) and uses torch's constant-spacing form (an infinite end gives NaN), an empty
``y`` gives zeros of its dtype, and cumulative_trapezoid's empty result takes the sample points'
type and refuses an empty bool ``y``; ``diff(x, 0, prepend=...)`` leaves prepend/append out;
quantile, topk, kthvalue, histc and histogram check their arguments in torch's order (the dtype
last), amax/amin name an empty dim as given, cummax/cummin return an empty input before looking
at dim or dtype, and histogram bins float16 and bfloat16 inputs over a given range or edges. Left
alone: the strides of sort/unique/diff results of non-contiguous inputs (torch keeps the input's
layout), kthvalue's and topk's choice among ties, and torch's own answers for stride-0 inputs to
median/nanmedian and for var/std's gradient with ``dim=()``."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import assert_same, results_or_same_error, same_error
from harness import same_grads_or_error as _both
from harness import upstream as _up


def _pairs(fn):
    for want, got in results_or_same_error(fn):
        if want.dtype == torch.bfloat16:  # torch has no numpy bfloat16: compare as float32
            assert got.dtype == ember.bfloat16
            want, got = want.float(), got.float()
        assert_same(got, want)


# ------------------------------------------------------------------ dtype= leaving the floats
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.sum(dtype=m.int32),
        lambda m, x: m.nansum(x, 1, dtype=m.int64),
        lambda m, x: x.prod(dtype=m.bool),
        lambda m, x: x.cumsum(0, dtype=m.int16),
        lambda m, x: m.cumprod(x, 1, dtype=m.uint8),
    ],
)
def test_integer_dtype_of_a_tensor_requiring_grad_is_refused(call):
    same_error(lambda m: call(m, m.ones(2, 3, requires_grad=True)), RuntimeError)


def test_integer_out_of_a_tensor_requiring_grad_is_the_out_refusal():
    msg = same_error(
        lambda m: m.sum(m.ones(2, 3, requires_grad=True), 0, out=m.empty(0, dtype=m.int64)),
        RuntimeError,
    )
    assert "out=" in msg
    for m in (torch, ember):  # without grad, and to a float dtype, it still runs
        with m.no_grad():
            assert m.ones(2, 3, requires_grad=True).sum(dtype=m.int32).item() == 6
        assert m.ones(2, 3, requires_grad=True).sum(dtype=m.complex64).requires_grad


# ------------------------------------------------------------------ norms without an identity
@pytest.mark.parametrize("ord_", [-1, -0.5, -2, float("-inf")])
@pytest.mark.parametrize("dim", [None, (-2, -1), (2, 1), 1])
def test_negative_order_norm_over_an_empty_dim_is_refused(ord_, dim):
    def f(m):
        return m.linalg.vector_norm(m.ones(1, 0, 2), ord_, dim=dim)

    same_error(f, RuntimeError)
    # the orders with an identity still run
    _pairs(lambda m: m.linalg.vector_norm(m.ones(1, 0, 2), -ord_, dim=dim))


# ------------------------------------------------------------------ trapezoid
def test_trapezoid_integer_y_stays_integer_until_the_halving():
    y = [[100, 100, 100]]
    x = [0.0, 1.0, 3.0]
    for f in (
        lambda m: m.trapezoid(m.tensor(y, dtype=m.int8), m.tensor(x, dtype=m.float16)),
        lambda m: m.cumulative_trapezoid(m.tensor(y, dtype=m.int8), m.tensor(x, dtype=m.float16)),
        lambda m: m.trapezoid(m.tensor(y, dtype=m.int8), m.tensor([0, 1, 3])),
        lambda m: m.trapezoid(m.tensor(y, dtype=m.int8), dx=1.5),
        lambda m: m.cumulative_trapezoid(m.tensor(y, dtype=m.int8)),
    ):
        _pairs(f)


def test_trapezoid_constant_spacing_with_an_infinite_end_is_nan():
    _pairs(lambda m: m.trapezoid(m.tensor([float("inf"), 1.0, 2.0])))
    _pairs(lambda m: m.trapezoid(m.tensor([1.0, float("inf"), 2.0]), dx=2))

    def f(m):  # the form's gradient and node
        y = m.tensor([[1.0, 2, 3, 5], [4, 5, 7, 6]], dtype=m.float64, requires_grad=True)
        out = m.trapezoid(y, dx=0.5, dim=1)
        assert type(out.grad_fn).__name__ == "MulBackward1"
        out.backward(_up(m, out))
        return [y.grad]

    _both(f)


@pytest.mark.parametrize("dt", ["int8", "bool", "float16", "int64"])
def test_trapezoid_of_an_empty_y_keeps_its_dtype(dt):
    _pairs(lambda m: m.trapezoid(m.ones(2, 0, dtype=getattr(m, dt))))
    _pairs(lambda m: m.trapezoid(m.ones(2, 0, dtype=getattr(m, dt)), m.arange(0.0)))


@pytest.mark.parametrize("dt", ["int8", "bfloat16", "float16", "bool"])
def test_cumulative_trapezoid_of_an_empty_y_takes_the_sample_points_type(dt):
    for x in ("float64", "float16", "int64"):
        _pairs(
            lambda m, x=x: m.cumulative_trapezoid(
                m.ones(2, 0, dtype=getattr(m, dt)), m.arange(0, dtype=getattr(m, x))
            )
        )
    _pairs(lambda m: m.cumulative_trapezoid(m.ones(2, 0, dtype=getattr(m, dt)), dx=2))


def test_trapezoid_rules_check_in_torchs_order():
    for f in (
        lambda m: m.trapezoid(m.tensor(1.0), m.ones(1)),
        lambda m: m.trapezoid(m.tensor(1.0), m.ones(2, 2), dim=2),
        lambda m: m.cumulative_trapezoid(m.tensor(1.0), m.ones(1)),
        lambda m: m.cumulative_trapezoid(m.tensor(True)),
        lambda m: m.cumulative_trapezoid(m.ones(3, dtype=m.bool), m.ones(3), dim=1),
        lambda m: m.trapezoid(m.ones(3, dtype=m.bool), m.ones(2)),
    ):
        same_error(f)
    _pairs(lambda m: m.trapezoid(m.ones(0, dtype=m.bool), m.ones(2)))  # empty: zeros first


def test_diff_of_order_zero_leaves_prepend_and_append_out():
    _pairs(lambda m: m.diff(m.ones(2, 3), 0, 1, prepend=m.zeros(2, 1), append=m.zeros(2, 2)))
    same_error(lambda m: m.diff(m.ones(2, 3), 0, prepend=m.ones(5, 2)), RuntimeError)


# ------------------------------------------------------------------ argument-check order
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.quantile(m.ones(3, dtype=m.int32), 0.5, interpolation="bogus"),
        lambda m: m.quantile(m.ones(3, dtype=m.int32), 1.5),
        lambda m: m.nanquantile(m.ones(0, dtype=m.int32), m.tensor([0.5])),
        lambda m: m.quantile(m.ones(3, dtype=m.int32), m.ones(1, 1)),
        lambda m: m.quantile(m.ones(3), m.tensor([0.5], dtype=m.float64), 5),
        lambda m: m.quantile(m.ones(3), m.tensor([1.5]), 5),
    ],
)
def test_quantile_checks_in_torchs_order(call):
    same_error(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.topk(m.ones(3, dtype=m.bool), 4),
        lambda m: m.topk(m.ones(4, 1, dtype=m.complex64), 1, 3),
        lambda m: m.kthvalue(m.ones(3, dtype=m.complex64), 4),
        lambda m: m.kthvalue(m.ones(3, dtype=m.bool), 1, 2),
    ],
)
def test_topk_and_kthvalue_check_dim_and_k_before_the_dtype(call):
    same_error(call)


def test_kthvalue_of_a_0d_complex_tensor():
    _pairs(lambda m: m.kthvalue(m.ones((), dtype=m.complex64), 1))


@pytest.mark.parametrize("dim", [-2, (-2, 0), (2, 1), [0, -2]])
def test_amax_and_amin_name_the_empty_dim_as_given(dim):
    same_error(lambda m: m.amax(m.ones(2, 0, 3), dim), IndexError)
    same_error(lambda m: m.amin(m.ones(2, 0, 3), dim), IndexError)


@pytest.mark.parametrize("dt", ["bool", "complex64", "float32"])
def test_cummax_of_an_empty_input_skips_the_dim_and_dtype_checks(dt):
    _pairs(lambda m: m.cummax(m.ones(0, 2, dtype=getattr(m, dt)), 5))
    _pairs(lambda m: m.cummin(m.ones(0, 2, dtype=getattr(m, dt)), 1))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.histc(m.ones(3, dtype=m.uint8), 0),
        lambda m: m.histc(m.ones(3, dtype=m.uint8), 2, 3, 0),
        lambda m: m.histc(m.ones(3, dtype=m.uint8), 2, -1, 3),
        lambda m: m.histc(m.ones(3, dtype=m.int32), 2, 0, 3),
        lambda m: m.histc(m.ones(3, dtype=m.complex64), 2, 0, 3),
        lambda m: m.histc(m.ones(3, dtype=m.complex64), 2),
        lambda m: m.histc(m.ones(3, dtype=m.float16), 2, 0, 1e10),
        lambda m: m.histogram(m.ones(3, dtype=m.int64), 0),
        lambda m: m.histogram(m.ones(3, dtype=m.uint8), 2, range=(-1.0, 3.0)),
        lambda m: m.histogram(m.ones(3, dtype=m.int8), 2, range=(-1.0, 3.0)),
        lambda m: m.histogram(m.ones(3, dtype=m.bool), 2, range=(0.0, 1.0)),
        lambda m: m.histogram(m.ones(3, dtype=m.bool), m.tensor([0.0, 1.0])),
        lambda m: m.histogram(m.ones(3, dtype=m.int32), m.tensor([0.0, 1.0])),
        lambda m: m.histogram(m.ones(3, dtype=m.float16), 2),
    ],
)
def test_histc_and_histogram_check_the_dtype_last(call):
    same_error(call)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_histogram_bins_half_types_over_a_range_or_edges(dt):
    def x(m):
        return m.tensor([1.0, 2, 3, 2.5, 0.5]).to(getattr(m, dt))

    _pairs(lambda m: tuple(m.histogram(x(m), 2, range=(0.0, 4.0))))
    _pairs(lambda m: tuple(m.histogram(x(m), m.tensor([0.0, 1, 2.5]).to(getattr(m, dt)))))


# ------------------------------------------------------------------ a seeded mini-fuzz
_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64"]


def _input(rng):
    dt = _DTYPES[int(rng.integers(len(_DTYPES)))]
    nd = int(rng.integers(0, 4))
    shape = tuple(int(rng.choice([0, 1, 2, 3], p=[0.1, 0.2, 0.4, 0.3])) for _ in range(nd))
    n = math.prod(shape)
    if dt == "bool":
        a = rng.integers(0, 2, n).astype(bool)
    elif dt[0] in "iu":
        a = rng.integers(0 if dt[0] == "u" else -3, 4, n)
    else:
        # small integers (exact sums in every order, ties) with some NaN and inf
        a = rng.integers(-3, 4, n).astype(np.float64)
        if n and rng.random() < 0.3:
            a[rng.integers(0, n)] = rng.choice([np.nan, np.inf, -np.inf])
    return dt, a.reshape(shape), bool(nd >= 2 and rng.random() < 0.3)


def _dim(rng, nd):
    return int(rng.integers(-max(nd, 1), max(nd, 1)))


def _case(rng):
    """One fuzz case: (a function of the module and an input tensor, the input's dtype, its
    values, whether it is transposed, whether its gradients are compared)."""
    dt, a, t = _input(rng)
    nd = a.ndim
    d = _dim(rng, nd)
    kd = bool(rng.random() < 0.5)
    k = int(rng.integers(0, 3))
    calls = [
        lambda m, x: x.sum(d, kd),
        lambda m, x: m.nansum(x, d, kd),
        lambda m, x: x.prod(d, kd),
        lambda m, x: m.cumsum(x, d),
        lambda m, x: m.cummax(x, d),
        lambda m, x: m.logsumexp(x, d, kd),
        lambda m, x: m.amax(x, d, kd),
        lambda m, x: x.max(d, kd),
        lambda m, x: m.argmin(x, d, kd),
        lambda m, x: m.aminmax(x, dim=d, keepdim=kd),
        lambda m, x: m.var_mean(x, d, correction=k, keepdim=kd),
        lambda m, x: m.linalg.vector_norm(x, [-1, 0, 1, 2, math.inf][k + 2], dim=d),
        lambda m, x: m.any(x, d, kd),
        lambda m, x: m.count_nonzero(x, d),
        lambda m, x: m.median(x, d, kd),
        lambda m, x: m.mode(x, d, kd),
        lambda m, x: m.quantile(x, [0.0, 0.5, 1.0][k], d, kd),
        lambda m, x: m.topk(x, k, d).values,
        lambda m, x: m.sort(x, stable=True, dim=d, descending=kd),
        lambda m, x: m.histc(x, k + 1, -2, 2),
        lambda m, x: m.diff(x, k, d),
        lambda m, x: m.trapezoid(x, dx=0.5, dim=d),
        lambda m, x: m.cumulative_trapezoid(x, dim=d),
        # last: torch's result requires grad with a derivative that raises, ember's does not
        lambda m, x: m.unique(x, return_inverse=True, return_counts=kd),
    ]
    i = int(rng.integers(len(calls)))
    return calls[i], dt, a, t, i < len(calls) - 1


def _make(m, dt, a, t, grad=False):
    x = m.tensor(a, dtype=getattr(m, dt), requires_grad=grad)
    return x, (x.transpose(0, -1) if t else x)


def _check(call, dt, a, t, diff):
    pairs = results_or_same_error(lambda m: call(m, _make(m, dt, a, t)[1]))
    for want, got in pairs:
        assert_same(got, want)
    if pairs and diff and dt in ("float32", "float64"):  # (no error forward)

        def grads(m):
            leaf, x = _make(m, dt, a, t, grad=True)
            y = call(m, x)
            y = y[0] if isinstance(y, tuple) else y
            if not y.requires_grad:
                return [None]
            (y * _up(m, y)).sum().backward()
            return [leaf.grad]

        _both(grads)


def test_seeded_mini_fuzz():
    rng = np.random.default_rng(70)
    for _ in range(200):
        _check(*_case(rng))
