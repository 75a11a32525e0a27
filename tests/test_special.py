"""ember.special (core/special.py, core/ops/special_fns.py): parity with torch.special (values,
dtypes, gradients), float64 gradcheck, which functions are differentiable, errors."""

import ember
import numpy as np
import pytest
from harness import A, Case, assert_same, needs_torch, raises_like_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def _u(name, low, high, gradgrad=True, **kw):
    return Case(name, lambda m, x: getattr(m.special, name)(x), [A(3, 4, low=low, high=high)],
                **kw), gradgrad  # fmt: skip


# (case, gradgrad): differentiable unary functions, in-domain ranges
DIFF = [
    _u("erfcx", -2.0, 3.0),
    _u("i0e", 0.2, 3.0),
    _u("i0e", -3.0, -0.2),
    _u("i1", -3.0, 3.0),
    _u("i1e", -3.0, 3.0),
    _u("ndtr", -3.0, 3.0),
    _u("ndtri", 0.05, 0.95),
    _u("log_ndtr", -3.0, 3.0),
    _u("entr", 0.1, 3.0),
    _u("digamma", 0.3, 3.0),
    _u("psi", 0.3, 3.0),
    _u("erf", -2.0, 2.0),
    _u("erfc", -2.0, 2.0),
    _u("erfinv", -0.9, 0.9),
    _u("exp2", -2.0, 2.0),
    _u("expit", -4.0, 4.0),
    _u("expm1", -2.0, 2.0),
    _u("gammaln", 0.3, 3.0),
    _u("i0", -3.0, 3.0),
    _u("log1p", -0.9, 3.0),
    _u("logit", 0.05, 0.95),
    _u("sinc", -2.0, 2.0),
]
OTHER = [
    (Case("round", lambda m, x: m.special.round(x), [A(3, 4, low=-3, high=3)]), True),
    (Case("polygamma", lambda m, x: m.special.polygamma(2, x), [A(3, 4, low=0.5, high=3)]), True),
    (
        Case("multigammaln", lambda m, x: m.special.multigammaln(x, 3), [A(3, 4, low=1.5, high=4)]),
        True,
    ),
    (Case("softmax", lambda m, x: m.special.softmax(x, 1), [A(3, 4)]), True),
    (Case("log_softmax", lambda m, x: m.special.log_softmax(x, 0), [A(3, 4)]), True),
    (Case("logsumexp", lambda m, x: m.special.logsumexp(x, 1, keepdim=True), [A(3, 4)]), True),
    (Case("xlogy", lambda m, x, y: m.special.xlogy(x, y), [A(3, 4), A(4, low=0.2, high=3)]), True),
    (
        Case("xlog1py", lambda m, x, y: m.special.xlog1py(x, y), [A(3, 4), A(4, low=-0.5, high=3)]),
        True,
    ),
    (Case("xlog1py_scalar", lambda m, x: m.special.xlog1py(x, 2.5), [A(3, 4)]), True),
    (
        Case(
            "zeta_q",
            lambda m, q: m.special.zeta(m.tensor(3.5, dtype=q.dtype), q),
            [A(3, 4, low=0.5, high=3)],
        ),
        True,
    ),
    (
        Case(
            "gammaincc_nograd_x",
            lambda m, a, x: m.special.gammaincc(a, x),
            [A(3, 4, low=0.5, high=3, grad=False), A(3, 4, low=0.5, high=3)],
        ),
        False,
    ),
]
CASES = DIFF + OTHER


@needs_torch
@pytest.mark.parametrize("case", [c for c, _ in CASES], ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case, gg", CASES, ids=[c.name for c, _ in CASES])
def test_gradcheck(case, gg):
    run_gradcheck(case, gradgrad=gg)


# functions torch gives no derivative: their results do not require grad
NO_GRAD = {
    "airy_ai": (-3.0, 3.0),
    "bessel_j0": (-5.0, 5.0),
    "bessel_j1": (-5.0, 5.0),
    "bessel_y0": (0.2, 5.0),
    "bessel_y1": (0.2, 5.0),
    "modified_bessel_i0": (-3.0, 3.0),
    "modified_bessel_i1": (-3.0, 3.0),
    "modified_bessel_k0": (0.2, 3.0),
    "modified_bessel_k1": (0.2, 3.0),
    "scaled_modified_bessel_k0": (0.2, 3.0),
    "scaled_modified_bessel_k1": (0.2, 3.0),
    "spherical_bessel_j0": (-5.0, 5.0),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(NO_GRAD))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_no_grad_functions(name, dtype):
    lo, hi = NO_GRAD[name]
    x = A(3, 4, low=lo, high=hi, dtype=dtype, grad=False).make(0)
    if dtype == "int64":
        x = np.abs(x) + 1
    e_in = ember.tensor(x, requires_grad=dtype != "int64")
    t_in = torch.tensor(x, requires_grad=dtype != "int64")
    e = getattr(ember.special, name)(e_in)
    t = getattr(torch.special, name)(t_in)
    assert_same(e, t, atol=1e-6, rtol=1e-5)
    assert e.requires_grad == t.requires_grad


POLYS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("name", POLYS)
def test_polynomials(name):
    x = A(6, 1, low=-1.2, high=1.2).make(0)
    n = np.arange(-1, 8).reshape(1, 9)
    f, g = getattr(ember.special, name), getattr(torch.special, name)
    assert_same(f(ember.tensor(x), ember.tensor(n)), g(torch.tensor(x), torch.tensor(n)))
    assert_same(f(ember.tensor(x), 3), g(torch.tensor(x), 3))
    assert_same(f(ember.tensor(x), 2.5), g(torch.tensor(x), 2.5))
    x64 = x.astype(np.float64)
    assert_same(f(ember.tensor(x64), 4), g(torch.tensor(x64), 4), atol=1e-12)


@needs_torch
@pytest.mark.parametrize("name", ["xlog1py", "zeta"])
def test_binary_dtypes(name):
    f, g = getattr(ember.special, name), getattr(torch.special, name)
    x = A(5, low=1.5, high=3, grad=False).make(0)
    q = A(5, low=0.5, high=2, grad=False).make(1)
    assert_same(f(ember.tensor(x), ember.tensor(q)), g(torch.tensor(x), torch.tensor(q)))
    assert_same(f(ember.tensor(x.astype(np.float64)), 2), g(torch.tensor(x.astype(np.float64)), 2))
    assert_same(f(ember.tensor([2, 3]), 2), g(torch.tensor([2, 3]), 2))


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32", "bool"])
@pytest.mark.parametrize("name", ["i0e", "i1", "i1e", "ndtr", "entr"])
def test_half_and_int_dtypes(name, dtype):
    x = A(5, low=0.2, high=2, dtype="float32", grad=False).make(0)
    if dtype in ("int32", "bool"):
        x = x.astype(dtype)
    e = getattr(ember.special, name)(ember.tensor(x).to(getattr(ember, dtype)))
    t = getattr(torch.special, name)(torch.tensor(x).to(getattr(torch, dtype)))
    assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
    assert_same(e.float(), t.float(), atol=1e-2, rtol=1e-2)


def test_special_values():
    # entr: 0 at 0, -inf below; i1'(0) = 1/2 (the removable singularity of i0 - i1/x)
    e = ember.special.entr(ember.tensor([0.0, -1.0, 1.0]))
    assert e.tolist() == [0.0, float("-inf"), 0.0]
    x = ember.tensor([0.0, 0.0], requires_grad=True)
    (ember.special.i1(x) + ember.special.i1e(x)).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_zeta_self_gradient_not_implemented():
    x = ember.tensor([3.0], requires_grad=True)
    y = ember.special.zeta(x, ember.tensor([1.5]))
    with pytest.raises(RuntimeError, match="the derivative for 'zeta' is not implemented."):
        y.sum().backward()


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (lambda m: m.special.erfcx(m.ones(2, dtype=m.complex64)), NotImplementedError,
         "\"erfcx_cpu\" not implemented for 'ComplexFloat'"),
        (lambda m: m.special.bessel_j0(m.ones(2, dtype=m.float16)), NotImplementedError,
         "\"bessel_j0_cpu\" not implemented for 'Half'"),
        (lambda m: m.special.airy_ai(m.ones(2, dtype=m.bfloat16)), NotImplementedError,
         "\"airy_ai_cpu\" not implemented for 'BFloat16'"),
        (lambda m: m.special.ndtri(m.ones(2, dtype=m.complex64)), NotImplementedError,
         "\"ndtri_cpu\" not implemented for 'ComplexFloat'"),
        (lambda m: m.special.zeta(m.ones(2, dtype=m.complex64), m.ones(2)), NotImplementedError,
         "\"zeta_cpu\" not implemented for 'ComplexFloat'"),
        (lambda m: m.special.chebyshev_polynomial_t(m.ones(2, dtype=m.complex64), 2),
         NotImplementedError, "\"chebyshev_polynomial_t_cpu\" not implemented for 'ComplexFloat'"),
    ],
)  # fmt: skip
def test_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


@needs_torch
def test_aliases_match_torch_semantics():
    x = ember.tensor([0.5, 1.5])
    assert ember.special.expit is ember.sigmoid
    assert ember.special.gammaln is ember.lgamma
    assert_same(ember.special.psi(x), torch.special.psi(torch.tensor([0.5, 1.5])))
