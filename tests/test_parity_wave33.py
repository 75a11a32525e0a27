"""Parity regressions found by the thirty-third wave, an op-by-dtype matrix (torch is the oracle):
torch's pointwise, reduction, comparison, shape and indexing functions, their Tensor methods and
in-place forms, called with inputs of every dtype (bool, the unsigned and signed integers,
float16, bfloat16, float32, float64, complex64, complex128; NaN/inf/-0 inputs for the float and
complex ones) and, for the binary ops, with every pair of dtypes (tensor-tensor, tensor-Python
scalar both ways, a 0-d tensor beside an n-d one), comparing success, result dtype, values and
error types and messages. Found: ``cumsum``/``cumprod`` with a ``dtype=`` narrower than int64
(numpy scans small integers in int64: ember answered in int64/uint64 and did not wrap, where
torch keeps and wraps in the asked dtype); bfloat16 NaN ordered first by sort, argsort, msort,
unique, kthvalue, searchsorted/bucketize (numpy's sort of ml_dtypes' type) and missed by
median/nanmedian; the median of no elements (torch: NaN cast to an integer or bool input's
dtype, where ember answered float32 NaN; nanmedian also of an empty bool or complex input);
``nanmean(dtype=<integer>)`` (torch's refusal) and ``nansum`` of an integer input into a complex
``dtype=`` (torch sums; ember refused); bfloat16 ``x ** 0.5`` at -inf and -0 (ml_dtypes' power
lacks numpy's sqrt path); complex ``z ** -1`` at the infinities (torch's reciprocal: 0, numpy's
power: NaN); the in-place ops' order of checks (torch refuses a result type that cannot be cast
to self before it looks for a kernel: ``bool_t.atan2_(complex_t)`` is a cast error, not a missing
kernel); the ops that take only tensors (atan2, hypot, logaddexp/logaddexp2, ldexp, nextafter,
maximum/minimum/fmax/fmin, igamma/igammac, heaviside) with a bfloat16 tensor and a Python
scalar (ember computed; torch's TypeError); cov/corrcoef and trapezoid/cumulative_trapezoid of
bool inputs, isin of bool inputs (torch's errors); searchsorted/bucketize of bool beside a
number (torch promotes and searches); the C++ type names of uint16/uint32/uint64 in dtype
messages (ember raised KeyError); special.zeta/xlog1py with a complex Python scalar (numpy's
ufunc TypeError leaked) and mvlgamma at -inf (scipy's gammaln sign); histogram/histogramdd of
float16 and histc's kernel names, logaddexp2 of complex (torch has no kernels); a Python float
stored into an integer tensor (fill_, full, masked_fill, index_fill, scatter, x[i] = v: torch
checks the float itself against the type's range, so uint8 takes no -0.5 or 255.5; index_fill and
scatter had no check at all: 300 wrapped, -250.0 and NaN leaked numpy's errors) and x[i] = 1e40
or 1j into a float32 tensor; a complex tensor assigned into a bool one (the truth of both parts,
not of the real part); linalg's dtype checks (int16/uint16 are not 'low precision'; solve checks
A is floating before the dtype match); bmm/baddbmm's missing bool kernel named before a dtype
mismatch; out= of clamp with number bounds and of where (torch writes only the result dtype);
bfloat16 mode (wrong values and index -1 whenever the mode exceeded 1), bfloat16 NaN in the
gradients of max/min/median/nanmedian and cummax/cummin, polygamma at the infinities, and
segment_reduce (torch reduces bfloat16, refuses complex)."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import results_or_same_error

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

INTS = ["uint8", "int8", "int16", "int32"]
NAN, INF = float("nan"), float("inf")


def _np(t):
    """A torch or ember tensor's values as a numpy array (bfloat16 widened, exactly)."""
    if isinstance(t, torch.Tensor):
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    return (t.float() if t.dtype == ember.bfloat16 else t).numpy()  # (numpy() refuses bf16)


def _as(mod, values, dtype: str):
    return mod.tensor(values, dtype=getattr(mod, dtype))


def _same(fn) -> None:
    """``fn(torch)`` and ``fn(ember)``: the same error (type and message), or tensors (or tuples
    of them) of one dtype and shape with the same values: exact for integers and bools, NaN,
    infinities and the sign of zeros in place, float16/bfloat16 to their precision."""
    for w, g in results_or_same_error(fn):
        assert str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1]
        assert tuple(g.shape) == tuple(w.shape)
        a, b = _np(w), _np(g)
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(b, a)
        else:
            tol = 1e-2 if w.dtype in (torch.float16, torch.bfloat16) else 1e-6
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True)
            if a.dtype.kind == "f":  # the sign of zeros and infinities (a NaN's is noise)
                num = ~np.isnan(a)
                np.testing.assert_array_equal(np.signbit(b)[num], np.signbit(a)[num])


# ------------------------------------------------------------ cumsum/cumprod into a narrow dtype
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("src", ["bool", "int8", "int64", "uint8"])
@pytest.mark.parametrize("dtype", INTS)
def test_scan_keeps_and_wraps_the_asked_dtype(op, src, dtype):
    vals = [[1, 0, 1, 1], [0, 1, 1, 1]] if src == "bool" else [[100, 3, 7, 120], [-3, 90, 5, 2]]
    if src == "uint8":
        vals = [[abs(v) for v in r] for r in vals]
    _same(lambda m: getattr(m, op)(_as(m, vals, src), 1, dtype=getattr(m, dtype)))
    _same(lambda m: getattr(_as(m, vals, src), op)(1, dtype=getattr(m, dtype)))


@pytest.mark.parametrize("dtype", INTS)
def test_scan_of_small_ints_keeps_their_dtype_in_place(dtype):
    _same(lambda m: _as(m, [[100, 3, 70], [2, 90, 5]], dtype).cumsum_(1))
    _same(lambda m: _as(m, [[10, 3, 7], [2, 9, 5]], dtype).cumprod_(0))


# ------------------------------------------------------------ bfloat16 NaN ordering
SPECIAL = [[NAN, INF, -INF, 0.0, 2.0, -1.0], [1.0, NAN, -0.0, 3.0, -INF, 0.5]]


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.sort(x, 1),
        lambda m, x: m.sort(x, 1, descending=True),
        lambda m, x: m.argsort(x, dim=1, stable=True),
        lambda m, x: m.msort(x.t()),
        lambda m, x: m.unique(x),
        lambda m, x: m.kthvalue(x, 6, 1),
        lambda m, x: m.topk(x, 2, 1),
        lambda m, x: m.median(x),
        lambda m, x: m.median(x, 1),
        lambda m, x: m.nanmedian(x),
        lambda m, x: m.nanmedian(x, 1),
        lambda m, x: m.searchsorted(m.sort(x, 1)[0], x),
        lambda m, x: m.bucketize(x, m.sort(x[0])[0]),
    ],
)
def test_bfloat16_orders_nan_last(fn):
    _same(lambda m: fn(m, _as(m, SPECIAL, "bfloat16")))


# ------------------------------------------------------------ median of no elements
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16"])
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_empty_median_keeps_the_dtype(op, dtype):
    _same(lambda m: getattr(m, op)(m.zeros(0, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("dtype", ["bool", "complex64"])
def test_empty_nanmedian_before_its_dtype_check(dtype):
    _same(lambda m: m.nanmedian(m.zeros(0, 2, dtype=getattr(m, dtype))))
    _same(lambda m: m.nanmedian(m.zeros(2, dtype=getattr(m, dtype))))


# ------------------------------------------------------------ nanmean / nansum dtype=
@pytest.mark.parametrize("src", ["float16", "float32", "complex64"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
def test_nanmean_refuses_an_integer_dtype(src, dtype):
    _same(lambda m: m.nanmean(m.ones(2, 3, dtype=getattr(m, src)), dtype=getattr(m, dtype)))


@pytest.mark.parametrize("src", ["bool", "uint8", "int32", "float32"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_nansum_of_integers_into_complex(src, dtype):
    _same(lambda m: m.nansum(_as(m, [[1, 0, 1], [1, 1, 0]], src), dtype=getattr(m, dtype)))
    _same(lambda m: m.nansum(_as(m, [[1, 0, 1], [1, 1, 0]], src), 1, dtype=getattr(m, dtype)))


# ------------------------------------------------------------ powers at the special values
@pytest.mark.parametrize("e", [0.5, 2, -1, 1.5, 3.0])
def test_bfloat16_pow_special_values(e):
    vals = [-INF, -0.0, -1.0, 0.0, 4.0, INF, NAN, 3.0]
    _same(lambda m: _as(m, vals, "bfloat16") ** e)
    _same(lambda m: m.pow(_as(m, vals, "bfloat16"), e))
    _same(lambda m: _as(m, vals, "bfloat16").pow_(e))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("e", [-1, -1.0])
def test_complex_pow_minus_one_is_the_reciprocal(dtype, e):
    vals = [complex(INF, 0), complex(-INF, 0), complex(0, -2), complex(1, 0.5), complex(2, -1)]
    _same(lambda m: _as(m, vals, dtype) ** e)
    _same(lambda m: m.pow(_as(m, vals, dtype), e))


# ------------------------------------------------------------ in-place: cast check first
@pytest.mark.parametrize(
    "self_dtype, other_dtype, op",
    [
        ("bool", "complex64", "atan2_"),
        ("bool", "complex64", "remainder_"),
        ("bool", "complex128", "xlogy_"),
        ("uint8", "complex64", "copysign_"),
        ("bool", "float16", "bitwise_and_"),
        ("bool", "float32", "bitwise_left_shift_"),
        ("int32", "float64", "lcm_"),
        ("bool", "uint8", "igamma_"),
        ("bool", "int8", "nextafter_"),
        ("bool", "int16", "hypot_"),
    ],
)
def test_inplace_cast_error_before_missing_kernel(self_dtype, other_dtype, op):
    def f(m):
        x = m.ones(2, 3, dtype=getattr(m, self_dtype))
        return getattr(x, op)(m.ones(2, 3, dtype=getattr(m, other_dtype)))

    _same(f)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_inplace_half_with_complex_scalar_is_a_cast_error(dtype):
    def f(m):
        return m.ones(3, dtype=getattr(m, dtype)).bitwise_and_(1j)

    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        f(torch)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        f(ember)


@pytest.mark.parametrize("op", ["ge_", "lt_", "eq_"])
def test_inplace_comparison_keeps_its_kernel_error(op):
    # a comparison's result is bool whatever the operands: the kernel's error stands
    _same(lambda m: getattr(m.ones(3, dtype=m.bool), op)(m.ones(3, dtype=m.complex64)))


# ------------------------------------------------------------ tensor-only ops and Python scalars
TENSOR_ONLY = ["atan2", "hypot", "logaddexp", "logaddexp2", "ldexp", "nextafter", "maximum",
               "minimum", "fmax", "fmin", "igamma", "igammac", "heaviside", "gcd",
               "lcm"]  # fmt: skip


@pytest.mark.parametrize("op", TENSOR_ONLY)
@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "int64"])
@pytest.mark.parametrize("s", [2, 1.5, True])
def test_tensor_only_ops_refuse_python_scalars(op, dtype, s):
    _same(lambda m: getattr(m, op)(m.ones(3, dtype=getattr(m, dtype)), s))
    _same(lambda m: getattr(m, op)(s, m.ones(3, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("op", ["atan2_", "hypot_", "ldexp_", "heaviside_", "igamma_", "gcd_"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "int32"])
@pytest.mark.parametrize("s", [2, 0.5, False])
def test_tensor_only_inplace_names_the_method(op, dtype, s):
    _same(lambda m: getattr(m.ones(3, dtype=getattr(m, dtype)), op)(s))


@pytest.mark.parametrize("op", ["atan2", "hypot", "maximum", "fmin", "logaddexp", "heaviside"])
def test_tensor_only_ops_still_compute_bfloat16(op):
    a, b = [[-2.5, 1.0, 0.0], [3.0, -1.0, 0.5]], [[1.0, -2.0, 0.0], [0.5, 4.0, -3.0]]
    _same(lambda m: getattr(m, op)(_as(m, a, "bfloat16"), _as(m, b, "bfloat16")))
    _same(lambda m: getattr(m, op)(_as(m, a, "bfloat16"), m.tensor(1.5, dtype=m.bfloat16)))


# ------------------------------------------------------------ bool inputs refused
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.cov(m.ones(2, 3, dtype=m.bool)),
        lambda m: m.corrcoef(m.ones(2, 3, dtype=m.bool)),
        lambda m: m.ones(2, 3, dtype=m.bool).cov(),
        lambda m: m.trapezoid(m.ones(3, dtype=m.bool)),
        lambda m: m.trapezoid(m.ones(3, dtype=m.bool), dx=2),
        lambda m: m.trapezoid(m.ones(3), m.ones(3, dtype=m.bool)),
        lambda m: m.cumulative_trapezoid(m.ones(2, 3, dtype=m.bool)),
        lambda m: m.cumulative_trapezoid(m.ones(3, dtype=m.bool), m.ones(3)),
        lambda m: m.isin(m.ones(3, dtype=m.bool), m.ones(2)),
        lambda m: m.isin(m.ones(3), m.ones(2, dtype=m.bool)),
        lambda m: m.isin(m.ones(3), True),
        lambda m: m.isin(m.ones(3, dtype=m.complex64), m.ones(2, dtype=m.bool)),
        lambda m: m.isin(m.ones(3, dtype=m.bool), m.ones(2, dtype=m.complex64)),
        lambda m: m.isin(m.ones(3), m.ones(2, dtype=m.complex128)),
        lambda m: m.isin(m.ones(3, dtype=m.complex64), m.ones(2, dtype=m.complex128)),
        lambda m: m.isin(m.ones(3, dtype=m.float64), m.ones(2, dtype=m.complex64)),
    ],
)
def test_bool_inputs_refused(fn):
    _same(fn)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_integer_inputs_still_promote(dtype):
    x = [[1, 4, 9], [2, 3, 5]]
    _same(lambda m: m.cov(_as(m, x, dtype)))
    _same(lambda m: m.trapezoid(_as(m, x, dtype)))
    _same(lambda m: m.cumulative_trapezoid(_as(m, x, dtype), dx=0.5))
    _same(lambda m: m.isin(_as(m, x, dtype), _as(m, [2, 9], dtype)))


# ------------------------------------------------------------ searchsorted with bool
@pytest.mark.parametrize("dtype", ["uint8", "int32", "float32"])
def test_searchsorted_bool_beside_a_number(dtype):
    seq = [False, True, True]
    _same(lambda m: m.searchsorted(_as(m, seq, "bool"), _as(m, [0, 1, 2], dtype)))
    _same(lambda m: m.searchsorted(_as(m, [0, 1, 2], dtype), _as(m, seq, "bool")))
    _same(lambda m: m.bucketize(_as(m, [0, 1, 2], dtype), _as(m, seq, "bool")))
    _same(lambda m: m.searchsorted(_as(m, [seq, seq], "bool"), _as(m, [[0, 1], [2, 0]], dtype)))
    _same(lambda m: m.searchsorted(_as(m, seq, "bool"), _as(m, seq, "bool")))


# ------------------------------------------------------------ the wide unsigned C++ type names
@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, d: m.argmax(m.ones(2, 3), 1, out=m.empty(2, dtype=d)),
        lambda m, d: m.gather(
            m.ones(2, 3), 1, m.zeros(2, 3, dtype=m.int64), out=m.empty(2, 3, dtype=d)
        ),
        lambda m, d: m.lerp(m.ones(3, dtype=m.uint8), m.ones(3, dtype=d), 0.5),
        lambda m, d: m.mm(m.ones(2, 2, dtype=m.uint8), m.ones(2, 2, dtype=d)),
    ],
)
def test_wide_unsigned_type_names(fn, dtype):
    _same(lambda m: fn(m, getattr(m, dtype)))


# ------------------------------------------------------------ special functions
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["zeta", "xlog1py"])
def test_special_binary_with_complex_scalar(op, dtype):
    _same(lambda m: getattr(m.special, op)(m.ones(2, dtype=getattr(m, dtype)), 1 - 0.5j))
    _same(lambda m: getattr(m.special, op)(1j, m.ones(2, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_mvlgamma_at_the_special_values(p, dtype):
    _same(lambda m: m.mvlgamma(_as(m, [-INF, INF, 1e-40, 2.5, 7.0], dtype), p))


def test_mvlgamma_gradient_unchanged():
    x = ember.tensor([2.5, 3.0, 4.2], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.mvlgamma(t, 2), (x,))
    g = [0.5, -1.0, 2.0]
    xt = torch.tensor([2.5, 3.0, 4.2], dtype=torch.float64, requires_grad=True)
    torch.mvlgamma(xt, 2).backward(torch.tensor(g, dtype=torch.float64))
    ember.mvlgamma(x, 2).backward(ember.tensor(g, dtype=ember.float64))
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    assert math.isinf(ember.mvlgamma(ember.tensor([-INF]), 1).item())


# ------------------------------------------------------------ histograms, logaddexp2: kernels
def _flat(r):
    return (r[0], *r[1])  # histogramdd's (hist, (edges, ...))


@pytest.mark.parametrize(
    "dtype", ["float16", "bfloat16", "int32", "bool", "complex64", "uint8", "uint16", "float32"]
)
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, d: m.histogram(_as(m, [0.5, 1.0, 2.0], d), 3),
        lambda m, d: _flat(m.histogramdd(_as(m, [[0.5, 1.0], [2.0, 0.0]], d), 2)),
        lambda m, d: m.histc(_as(m, [0.5, 1.0, 2.0], d), 3),
    ],
)
def test_histogram_kernels_by_dtype(fn, dtype):
    _same(lambda m: fn(m, dtype))


@pytest.mark.parametrize("a, b", [("complex64", "complex64"), ("float32", "complex128")])
def test_logaddexp2_has_no_complex_kernel(a, b):
    _same(lambda m: m.logaddexp2(m.ones(2, dtype=getattr(m, a)), m.ones(2, dtype=getattr(m, b))))
    # logaddexp has one
    _same(lambda m: m.logaddexp(_as(m, [1 + 1j, 0.5], "complex64"), m.ones(2) * (0.5 - 2j)))


# ------------------------------------------------------------ Python values stored in integers
def _setitem(m, x, v):
    x[0] = v
    return x


FILLS = [
    lambda m, x, v: x.fill_(v),
    lambda m, x, v: m.full((3,), v, dtype=x.dtype),
    lambda m, x, v: x.masked_fill(m.tensor([True, False, True]), v),
    lambda m, x, v: x.index_fill(0, m.tensor([0, 2]), v),
    lambda m, x, v: x.index_fill_(0, m.tensor([1]), v),
    lambda m, x, v: x.scatter(0, m.tensor([0, 1]), v),
    lambda m, x, v: x.scatter(0, m.tensor([0, 1]), v, reduce="add"),
    lambda m, x, v: x.scatter_(0, m.tensor([2]), v),
    _setitem,
]


@pytest.mark.parametrize("fn", FILLS)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32"])
@pytest.mark.parametrize("v", [-0.5, -1.0, -250.0, 3.7, -3.7, 127.5, 255.5, 300, -1, -250, NAN])
def test_python_value_into_integers_range_checked(fn, dtype, v):
    _same(lambda m: fn(m, m.zeros(3, dtype=getattr(m, dtype)), v))


@pytest.mark.parametrize("fn", FILLS[3:])
@pytest.mark.parametrize("dtype", ["bool", "float32", "uint8"])
@pytest.mark.parametrize("v", [1j, 2 + 0j, True, 1e40])
def test_python_value_index_fill_scatter_checked(fn, dtype, v):
    _same(lambda m: fn(m, m.zeros(3, dtype=getattr(m, dtype)), v))


@pytest.mark.parametrize(
    "key", [Ellipsis, slice(0, 2), 1, (slice(None), slice(0, 1))], ids=["all", "slice", "int", "2d"]
)
@pytest.mark.parametrize("src", ["complex64", "complex128"])
def test_setitem_complex_into_bool_keeps_the_imaginary_truth(key, src):
    def f(m):
        y = m.zeros(2, 3, dtype=m.bool)
        v = m.tensor([[-2j, 0j, 1 + 0j], [0.5j, 0j, 0j]], dtype=getattr(m, src))
        y[key] = v[key]
        return y

    _same(f)


# ------------------------------------------------------------ linalg: the dtype checks' order
@pytest.mark.parametrize("dtype", ["int16", "uint16", "int8", "bool", "bfloat16", "float16"])
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, d: m.linalg.matrix_norm(m.ones(2, 2, dtype=d)),
        lambda m, d: m.linalg.inv(m.ones(2, 2, dtype=d)),
        lambda m, d: m.linalg.det(m.ones(2, 2, dtype=d)),
        lambda m, d: m.linalg.svd(m.ones(2, 2, dtype=d)),
    ],
)
def test_linalg_two_byte_integers_are_not_low_precision_floats(fn, dtype):
    _same(lambda m: fn(m, getattr(m, dtype)))


@pytest.mark.parametrize(
    "a, b",
    [
        ("bool", "uint8"),
        ("int32", "float32"),
        ("float32", "int32"),
        ("float16", "float32"),
        ("int32", "int32"),
        ("bfloat16", "float64"),
    ],
)
def test_linalg_solve_checks_a_floating_first(a, b):
    _same(
        lambda m: m.linalg.solve(m.eye(2, dtype=getattr(m, a)), m.ones(2, 1, dtype=getattr(m, b)))
    )


@pytest.mark.parametrize("a", ["bool", "uint16", "uint32", "uint8", "float32"])
@pytest.mark.parametrize("b", ["bool", "uint8", "float64"])
def test_bmm_kernel_check_before_the_dtype_match(a, b):
    def x(m, d):
        return m.ones(1, 2, 2, dtype=getattr(m, d))

    _same(lambda m: m.bmm(x(m, a), x(m, b)))
    _same(lambda m: m.baddbmm(x(m, a), x(m, a), x(m, b)))


# ------------------------------------------------------------ out= of clamp (number bounds), where
@pytest.mark.parametrize("src", ["float32", "int32", "bool"])
@pytest.mark.parametrize("dst", ["float64", "float16", "int64", "float32"])
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x, o: m.clamp(x, 0, 1, out=o),
        lambda m, x, o: m.clamp(x, min=0, out=o),
        lambda m, x, o: m.clamp(x, max=0.5, out=o),
        lambda m, x, o: m.clip(x, -1, 1, out=o),
        lambda m, x, o: m.clamp_min(x, 0, out=o),
        lambda m, x, o: m.clamp_max(x, 1, out=o),
        lambda m, x, o: m.clamp(x, m.zeros(3), m.ones(3), out=o),  # tensor bounds: cast
        lambda m, x, o: m.clamp_min(x, m.zeros(3), out=o),
        lambda m, x, o: m.where(m.tensor([True, False, True]), x, x.flip(0), out=o),
    ],
)
def test_out_dtype_of_clamp_and_where(fn, src, dst):
    _same(lambda m: fn(m, _as(m, [-2, 0, 3], src), m.empty(3, dtype=getattr(m, dst))))


# ------------------------------------------------------------ mode of bfloat16
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_mode_bfloat16(dim):
    vals = [[2.0, 3.0, 2.0, 5.0], [4.0, 4.0, 0.5, 7.0], [-3.0, -3.0, 8.0, 8.0]]
    _same(lambda m: tuple(m.mode(_as(m, vals, "bfloat16"), dim)))
    _same(lambda m: tuple(m.mode(_as(m, vals, "bfloat16"), dim, keepdim=True)))

    def grad(m):
        x = _as(m, vals, "bfloat16").requires_grad_()
        v = m.mode(x, dim).values
        v.backward(m.arange(1.0, v.numel() + 1).reshape(v.shape).to(m.bfloat16))
        return x.grad

    _same(grad)


# ------------------------------------------------------------ bfloat16 NaN in gradients and kernels
def _bf16_grad(op):
    def f(m):
        x = _as(m, [[1.0, NAN, 3.0, 0.0], [2.0, 5.0, NAN, 1.0]], "bfloat16").requires_grad_()
        y = op(m, x)
        y.backward(m.ones_like(y))
        return x.grad

    return f


@pytest.mark.parametrize(
    "op",
    [
        lambda m, x: m.max(x),
        lambda m, x: m.min(x),
        lambda m, x: m.median(x),
        lambda m, x: m.nanmedian(x),
        lambda m, x: m.cummax(x, 1).values,
        lambda m, x: m.cummin(x, 1).values,
    ],
)
def test_bfloat16_nan_gradients(op):
    _same(_bf16_grad(op))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_bfloat16_at_the_infinities(n):
    _same(lambda m: m.polygamma(n, _as(m, [-INF, INF, 2.0, 0.5], "bfloat16")))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "complex64", "int32"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_segment_reduce_dtypes(dtype, reduce):
    _same(lambda m: m.segment_reduce(_as(m, [1, 2, 3, 7], dtype), reduce, lengths=m.tensor([1, 3])))
