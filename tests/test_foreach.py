"""torch._foreach_* ops (core/ops/foreach.py): parity with torch for every name and its in-place
form, scalar / scalar-list / tensor-list / tensor operands, autograd through the loop, the no-grad
fast path (storage written in place, version bumped), errors."""

import ember
import numpy as np
import pytest
from harness import assert_same, needs_torch, raises_like_torch

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


_R = np.random.default_rng(0)
X = [_R.uniform(0.2, 2, (3,)).astype("float32"), _R.uniform(0.2, 2, (2, 4)).astype("float32")]
Y = [_R.uniform(0.2, 2, a.shape).astype("float32") for a in X]
Z = [_R.uniform(0.2, 2, a.shape).astype("float32") for a in X]


def L(m, arrays, **kw):
    return [m.tensor(a, **kw) for a in arrays]


def compare(fn):
    e, t = fn(ember), fn(torch)
    e = e if isinstance(e, (list, tuple)) else [e]
    t = t if isinstance(t, (list, tuple)) else [t]
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert_same(a, b, atol=1e-6, rtol=1e-5)


UNARY = [
    "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor",
    "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt",
    "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    xs = [a / 2.5 for a in X]  # inside acos/asin's domain
    compare(lambda m: getattr(m, f"_foreach_{name}")(L(m, xs)))

    def inplace(m):
        ts = L(m, xs)
        r = getattr(m, f"_foreach_{name}_")(ts)
        assert r is None or list(r) == ts
        return ts

    compare(inplace)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow"]
OPERANDS = {
    "scalar": lambda m: 1.5,
    "scalars": lambda m: [0.5, 2.0],
    "tensors": lambda m: L(m, Y),
    "tensor": lambda m: m.tensor(0.7),
}


@needs_torch
@pytest.mark.parametrize("kind", sorted(OPERANDS))
@pytest.mark.parametrize("name", BINARY)
def test_binary(name, kind):
    op = OPERANDS[kind]
    compare(lambda m: getattr(m, f"_foreach_{name}")(L(m, X), op(m)))

    def inplace(m):
        ts = L(m, X)
        getattr(m, f"_foreach_{name}_")(ts, op(m))
        return ts

    compare(inplace)


@needs_torch
def test_alpha():
    compare(lambda m: m._foreach_add(L(m, X), L(m, Y), alpha=2))
    compare(lambda m: m._foreach_sub(L(m, X), L(m, Y), alpha=0.5))

    def inplace(m):
        ts = L(m, X)
        m._foreach_sub_(ts, L(m, Y), alpha=0.5)
        m._foreach_add_(ts, L(m, Z), alpha=-3)
        return ts

    compare(inplace)


@needs_torch
def test_scalar_base_pow():
    compare(lambda m: m._foreach_pow(2.0, L(m, X)))


@needs_torch
@pytest.mark.parametrize("value", [1, 0.5, [0.3, 2.0]])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addc(name, value):
    compare(lambda m: getattr(m, f"_foreach_{name}")(L(m, X), L(m, Y), L(m, Z), value))

    def inplace(m):
        ts = L(m, X)
        getattr(m, f"_foreach_{name}_")(ts, L(m, Y), L(m, Z), value)
        return ts

    compare(inplace)


@needs_torch
@pytest.mark.parametrize("weight", [0.3, "tensors"])
def test_lerp(weight):
    def w(m):
        return L(m, Z) if weight == "tensors" else weight

    compare(lambda m: m._foreach_lerp(L(m, X), L(m, Y), w(m)))

    def inplace(m):
        ts = L(m, X)
        m._foreach_lerp_(ts, L(m, Y), w(m))
        return ts

    compare(inplace)


@needs_torch
@pytest.mark.parametrize("ord", [2, 1, 3, 0, float("inf")])
def test_norm(ord):
    compare(lambda m: m._foreach_norm(L(m, X), ord))


@needs_torch
def test_reductions_and_copies():
    compare(lambda m: m._foreach_norm(L(m, X), dtype=m.float64))
    compare(lambda m: m._foreach_max(L(m, X)))
    compare(lambda m: m._foreach_powsum(L(m, X), 3))
    compare(lambda m: m._foreach_clone(L(m, X)))
    compare(lambda m: m._foreach_mm([m.ones(2, 3)], [m.ones(3, 4)]))

    def copy(m):
        ts = L(m, X)
        m._foreach_copy_(ts, L(m, Y))
        return ts

    def zero(m):
        ts = L(m, X)
        m._foreach_zero_(ts)
        return ts

    compare(copy)
    compare(zero)


@needs_torch
def test_autograd_through_the_loop():
    grads = []
    for m in (ember, torch):
        xs = L(m, X, requires_grad=True)
        ys = m._foreach_exp(m._foreach_mul(xs, L(m, Y)))
        ys = m._foreach_addcmul(ys, xs, L(m, Z), value=0.5)
        sum(y.sum() for y in ys).backward()
        grads.append([x.grad for x in xs])
    for a, b in zip(*grads):
        assert_same(a, b, atol=1e-5)


@needs_torch
def test_no_grad_fast_path_updates_storage():
    # an optimizer step: parameters that require grad, updated under no_grad
    res = []
    for m in (ember, torch):
        ps = L(m, X, requires_grad=True)
        with m.no_grad():
            m._foreach_add_(ps, L(m, Y), alpha=-0.1)
            m._foreach_mul_(ps, 0.9)
            m._foreach_addcdiv_(ps, L(m, Y), L(m, Z), value=-0.1)
            m._foreach_lerp_(ps, L(m, Z), 0.25)
            m._foreach_sqrt_(ps)
        assert all(p.requires_grad and p.grad_fn is None for p in ps)
        res.append(ps)
    for a, b in zip(*res):
        assert_same(a, b, atol=1e-6)


def test_fast_path_bumps_version_and_keeps_views():
    p = ember.tensor(X[1].copy())
    v = p[0]
    before = p._version
    ember._foreach_mul_([p], 2.0)
    ember._foreach_exp_([p])
    assert p._version == before + 2
    np.testing.assert_allclose(v.numpy(), np.exp(X[1][0] * 2), rtol=1e-6)


def test_inplace_records_graph_when_needed():
    x = ember.tensor(X[0], requires_grad=True)
    y = x * 1.0
    ember._foreach_mul_([y], 3.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 3.0))


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (lambda m: m._foreach_add([m.ones(2), m.ones(3)], [m.ones(2)]), RuntimeError,
         "Tensor lists must have the same number of tensors, got 2 and 1"),
        (lambda m: m._foreach_add([m.ones(2), m.ones(3)], [1.0]), RuntimeError,
         "Tensor list must have same number of elements as scalar list."),
        (lambda m: m._foreach_add([], 1.0), RuntimeError,
         "Tensor list must have at least one tensor."),
        (lambda m: m._foreach_exp([]), RuntimeError,
         "Tensor list must have at least one tensor."),
    ],
)  # fmt: skip
def test_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


def test_leaf_inplace_error():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember._foreach_add_([ember.ones(2, requires_grad=True)], 1.0)
