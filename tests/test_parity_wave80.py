"""Parity regressions found by the eightieth wave, a seeded random fuzz of the pointwise math and
torch.special functions against torch (every unary and binary pointwise function of torch.* and
torch.special, their Tensor methods, in-place forms and out=; every dtype, 0-3 dims with
broadcasting, NaN/inf/-0/subnormal/huge/pole/domain-edge values, Python scalars in either slot;
result dtype, shape, values with NaN positions exact and per-dtype tolerances, error types and
texts, float64 gradients under a random upstream gradient). It found the orthogonal polynomials
running their recurrence in float64 (a float32 P_n that overflows is inf - inf = NaN in torch,
ember answered inf) and refusing a NaN or infinite Python scalar n (ValueError/OverflowError:
torch casts n to int64, where both become negative and the polynomial 0); a unary op's out= of a
dtype the result cannot be cast to reported the missing kernel instead of torch's cast error
(entr/logit/erf/digamma/i0e/bessel_* of complex or half inputs; frac/round/floor of a bool input
into another dtype: torch's "Found dtype" first, while the argument refusals of
floor/ceil/trunc/sign/signbit for complex inputs and the composites ndtr and mvlgamma keep theirs
first); isnan/isinf/isfinite/isreal taking out= (torch's signatures have none) and
isposinf/isneginf writing into a non-bool out=; logit(eps=) clamping with bounds not rounded to a
16-bit input's dtype (float16 1 - 1e-6 is 1: torch answers inf) and a negative eps giving a 0
gradient outside [0, 1] (torch: NaN, as without eps); zeta's derivative in x refused with
RuntimeError (torch: NotImplementedError); mvlgamma of a complex input with p < 1 reporting the
missing kernel before the p check; arctan2's errors printed atan2 (it was no declared alias);
ldexp scaled exactly for integral values of a floating exponent (torch does so only for an integer
exponent dtype: ldexp(0., 1000.) is NaN, ldexp(0.1, 128.) inf in float32), took a bool exponent
of a floating input (torch: no kernel), and its complex gradients lacked the conjugate."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import results_or_same_error, same_error

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

NAN, INF = float("nan"), float("inf")

POLYS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]


def _same(want, got):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    w, g = want.detach().numpy(), got.detach().numpy()
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_allclose(g, w, rtol=1e-5, atol=0)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "hermite_polynomial_h"])
def test_float32_polynomial_recurrence_overflows_to_nan(name):
    # torch runs the recurrence in float32: P_n and P_{n-1} overflow, and inf - inf is NaN
    def f(T):
        x = T.tensor([3.0, -3.0, 0.5, 2.0], dtype=T.float32)
        return getattr(T.special, name)(x, T.tensor([200, 200, 3, 2]))

    for want, got in results_or_same_error(f):
        _same(want, got)
        assert np.isnan(got.numpy()[:2]).all()


@pytest.mark.parametrize("n", [NAN, INF, -INF])
@pytest.mark.parametrize("name", POLYS)
def test_polynomial_of_a_non_finite_scalar_degree_is_zero(name, n):
    def f(T):
        return getattr(T.special, name)(T.tensor([0.3, 2.0, 1.0]), n)

    for want, got in results_or_same_error(f):
        _same(want, got)


@pytest.mark.parametrize(
    "fn",
    [
        lambda T, x, o: T.special.entr(x, out=o),
        lambda T, x, o: T.logit(x, out=o),
        lambda T, x, o: T.special.erfcx(x, out=o),
        lambda T, x, o: T.digamma(x, out=o),
        lambda T, x, o: T.special.i0e(x, out=o),
        lambda T, x, o: T.special.bessel_y1(x, out=o),
        lambda T, x, o: T.special.modified_bessel_i1(x, out=o),
        lambda T, x, o: T.special.spherical_bessel_j0(x, out=o),
    ],
    ids=["entr", "logit", "erfcx", "digamma", "i0e", "bessel_y1", "modified_bessel_i1", "sbj0"],
)
@pytest.mark.parametrize(
    "dtype,out", [("complex64", "float32"), ("complex128", "int64"), ("float16", "bool")]
)
def test_unary_out_cast_is_checked_before_the_missing_kernel(fn, dtype, out):
    def f(T):
        x = T.ones(2, dtype=getattr(T, dtype))
        return fn(T, x, T.empty(0, dtype=getattr(T, out)))

    # whichever error torch gives (a cast error where the result cannot be cast), the same
    results_or_same_error(f)


def test_unary_out_cast_error_text():
    msg = same_error(
        lambda T: T.special.entr(T.ones(2, dtype=T.complex128), out=T.empty(0)), RuntimeError
    )
    assert msg == "result type ComplexDouble can't be cast to the desired output type Float"


@pytest.mark.parametrize("name", ["frac", "round", "floor", "trunc", "sign", "signbit", "ceil"])
@pytest.mark.parametrize(
    "dtype,out", [("bool", "int64"), ("int32", "bool"), ("complex64", "int64"), ("float16", "bool")]
)
def test_unary_out_checks_and_argument_refusals_keep_torchs_order(name, dtype, out):
    # the exact-dtype out= ops say "Found dtype" before a missing kernel; floor/trunc/sign of a
    # complex input refuse it before looking at out=; ndtr and mvlgamma compute first
    def f(T):
        x = T.ones(2, dtype=getattr(T, dtype))
        return getattr(T, name)(x, out=T.empty(0, dtype=getattr(T, out)))

    results_or_same_error(f)


@pytest.mark.parametrize(
    "fn",
    [lambda T, x, o: T.special.ndtr(x, out=o), lambda T, x, o: T.mvlgamma(x, 2, out=o)],
    ids=["ndtr", "mvlgamma"],
)
def test_composite_unary_ops_refuse_before_the_out_cast(fn):
    def f(T):
        return fn(T, T.ones(2, dtype=T.complex64), T.empty(0, dtype=T.float64))

    assert same_error(f, NotImplementedError)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "isreal"])
def test_classifiers_take_no_out(name):
    def f(T):
        return getattr(T, name)(T.tensor([1.0, NAN]), out=T.empty(0, dtype=T.bool))

    assert same_error(f, TypeError) == f"{name}() got an unexpected keyword argument 'out'"


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_isposinf_isneginf_refuse_non_bool_out(name):
    def f(T, dtype):
        return getattr(T, name)(T.tensor([1.0, INF, -INF]), out=T.empty(0, dtype=dtype(T)))

    msg = same_error(lambda T: f(T, lambda T: T.float32), RuntimeError)
    assert msg == f"{name} does not support non-boolean outputs."
    for want, got in results_or_same_error(lambda T: f(T, lambda T: T.bool)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("eps", [1e-6, 0.6, 1e-3])
def test_logit_eps_bounds_are_rounded_to_the_input_dtype(dtype, eps):
    def f(T):
        x = T.tensor([1.7, 0.0, -0.2, 1.0], dtype=getattr(T, dtype))
        return T.logit(x, eps)

    for want, got in results_or_same_error(f):
        w, g = want.float().numpy(), got.float().numpy()
        np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
        np.testing.assert_allclose(g, w, rtol=2e-2)  # (torch computes in 16 bits)


def test_logit_negative_eps_gradient_is_nan_outside_the_unit_interval():
    def f(T):
        x = T.tensor([-0.8, 0.05, 0.5, 1.7], dtype=T.float64, requires_grad=True)
        y = T.logit(x, -0.1)
        return T.autograd.grad(y, x, T.tensor([1.0, -2.0, 3.0, 0.5], dtype=T.float64))[0]

    for want, got in results_or_same_error(f):
        _same(want, got)
        assert np.isnan(got.numpy()[[0, 3]]).all()


def test_zeta_derivative_in_x_is_not_implemented_error():
    def f(T):
        x = T.tensor([2.0, 3.0], dtype=T.float64, requires_grad=True)
        y = T.special.zeta(x, T.tensor([1.0, 2.0], dtype=T.float64))
        return T.autograd.grad(y, x, T.ones(2, dtype=T.float64))

    msg = same_error(f, NotImplementedError)
    assert msg == "the derivative for 'zeta' is not implemented."


@pytest.mark.parametrize("fn", ["mvlgamma", "multigammaln"])
def test_mvlgamma_checks_p_before_the_complex_kernel(fn):
    def f(T):
        g = T.mvlgamma if fn == "mvlgamma" else T.special.multigammaln
        return g(T.ones(2, dtype=T.complex64), 0)

    assert same_error(f, RuntimeError) == "p has to be greater than or equal to 1"


def test_wave80_fixes_keep_ordinary_values():
    # the float32 recurrence, the rounded logit bounds and the classifiers on ordinary inputs
    rng = np.random.RandomState(80)
    a = rng.uniform(-1.5, 1.5, (3, 4)).astype(np.float32)
    n = rng.randint(0, 9, (4,))

    def f(T):
        x = T.tensor(a)
        out = [getattr(T.special, p)(x, T.tensor(n)) for p in POLYS]
        out.append(T.logit(x.abs().clamp(max=1), 1e-3))
        out.append(T.isposinf(x, out=T.empty(0, dtype=T.bool)))
        return out

    for want, got in results_or_same_error(f):
        w, g = want.numpy().astype(np.float64), got.numpy().astype(np.float64)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_arctan2_errors_name_the_alias():
    # arctan2 was atan2 itself, not a declared alias: its errors printed atan2
    msg = same_error(lambda T: T.arctan2(T.ones(2), 1), TypeError)
    assert msg == "arctan2(): argument 'other' (position 2) must be Tensor, not int"
    msg = same_error(lambda T: T.atan2(T.ones(2), 1), TypeError)
    assert msg == "atan2(): argument 'other' (position 2) must be Tensor, not int"


def test_ldexp_scales_exactly_only_for_integer_exponent_dtypes():
    # torch's exact scaling is a kernel for integer exponents; a floating exponent (integral
    # or not) multiplies by 2 ** other, which over- or underflows: 0 * inf is NaN
    def f(T, edt):
        x = T.tensor([0.1, 0.0, 0.1, 0.0, 1.5])
        return T.ldexp(x, T.tensor([128, 1000, -150, -150, 3], dtype=getattr(T, edt)))

    for edt in ["float32", "float64", "int64", "int16"]:
        for want, got in results_or_same_error(lambda T, edt=edt: f(T, edt)):
            _same(want, got)


def test_ldexp_bool_exponent_of_a_floating_input_is_refused():
    def f(T):
        return T.ldexp(T.tensor([1.5, 2.0]), T.tensor([True, False]))

    assert same_error(f, NotImplementedError) == "\"ldexp_cpu_exp\" not implemented for 'Bool'"
    for want, got in results_or_same_error(
        lambda T: T.ldexp(T.tensor([1, 2]), T.tensor([True, False]))
    ):
        _same(want, got)


def test_ldexp_complex_gradients_are_conjugated():
    def f(T):
        x = T.tensor([100 + 0.135j, 1 + 2j], dtype=T.complex128, requires_grad=True)
        e = T.tensor([0.3 - 0.7j, 2 + 1j], dtype=T.complex128, requires_grad=True)
        y = T.ldexp(x, e)
        return T.autograd.grad(y, (x, e), T.tensor([1 - 2j, 0.5 + 1j], dtype=T.complex128))

    for want, got in results_or_same_error(f):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_ldexp_gradcheck():
    x = ember.tensor([0.5, -2.0, 3.0], dtype=ember.float64, requires_grad=True)
    e = ember.tensor([1.0, -3.0, 2.5], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.ldexp, (x, e))
    z = ember.tensor([1 + 2j, -0.5j], dtype=ember.complex128, requires_grad=True)
    w = ember.tensor([0.5 - 1j, 2.0 + 0j], dtype=ember.complex128, requires_grad=True)
    assert ember.autograd.gradcheck(ember.ldexp, (z, w))
