"""ember.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against torch's."""

import ember
import numpy as np
import pytest
from ember.autograd import functional as EF

torch = pytest.importorskip("torch")
TF = torch.autograd.functional


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, shape)


def _pair(*shape, seed=0):
    a = _arr(*shape, seed=seed)
    return ember.tensor(a), torch.tensor(a)


def _same(e, t, atol=1e-9):
    if isinstance(t, (tuple, list)):
        assert isinstance(e, tuple) and len(e) == len(t), (type(e), e, t)
        for a, b in zip(e, t):
            _same(a, b, atol)
        return
    assert isinstance(e, ember.Tensor), type(e)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(
        np.asarray(e.detach()._data), t.detach().numpy(), atol=atol, rtol=1e-7
    )


# functions written once, run with m = ember or torch
def f_square(m, x):
    return x**2 * 3


def f_cubic_scalar(m, x):
    return (x**3).sum() + (x * x).mean()


def f_two_in(m, x, y):
    return (x @ y) * 2


def f_two_out(m, x):
    return x * x, (x**3).sum()


def f_two_in_two_out(m, x, y):
    return x * y, (x**2).sum() + y.sum() * 3


def f_scalar_two_in(m, x, y):
    return ((x @ y) ** 2).sum() + (x**3).sum()


def f_unused(m, x, y):
    return x * 2


def f_transcendental(m, x, y):
    return x.exp() * y.sin() + (x * y).tanh(), (x.cos() * y).sum()


def f_scalar_transcendental(m, x, y):
    return (x.exp() * y.sin()).sum() + (x * y).tanh().sum()


JAC = [
    ("square", f_square, [(3,)], False),
    ("square_2d", f_square, [(2, 3)], False),
    ("scalar_out", f_cubic_scalar, [(4,)], False),
    ("two_in_tuple", f_two_in, [(2, 3), (3, 2)], True),
    ("two_out", f_two_out, [(3,)], False),
    ("two_in_two_out", f_two_in_two_out, [(3,), (3,)], True),
    ("single_in_as_tuple", f_square, [(3,)], True),
    ("transcendental", f_transcendental, [(3,), (3,)], True),
]


@pytest.mark.parametrize("name,fn,shapes,as_tuple", JAC, ids=[j[0] for j in JAC])
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian(name, fn, shapes, as_tuple, create_graph):
    pairs = [_pair(*s, seed=i) for i, s in enumerate(shapes)]
    e_in = tuple(p[0] for p in pairs)
    t_in = tuple(p[1] for p in pairs)
    if not as_tuple:
        e_in, t_in = e_in[0], t_in[0]
    e = EF.jacobian(lambda *a: fn(ember, *a), e_in, create_graph=create_graph)
    t = TF.jacobian(lambda *a: fn(torch, *a), t_in, create_graph=create_graph)
    _same(e, t)


def test_jacobian_unused_input_zero_and_strict():
    x, tx = _pair(3)
    y, ty = _pair(2, seed=1)
    e = EF.jacobian(lambda a, b: f_unused(ember, a, b), (x, y))
    t = TF.jacobian(lambda a, b: f_unused(torch, a, b), (tx, ty))
    _same(e, t)
    with pytest.raises(
        RuntimeError,
        match="Output 0 of the user-provided function is independent "
        "of input 1. This is not allowed in strict mode.",
    ):
        EF.jacobian(lambda a, b: f_unused(ember, a, b), (x, y), strict=True)


def test_jacobian_create_graph_is_differentiable():
    a = _arr(3)
    x = ember.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    j = EF.jacobian(lambda v: v**3, x, create_graph=True)
    tj = TF.jacobian(lambda v: v**3, tx, create_graph=True)
    assert j.requires_grad
    j.sum().backward()
    tj.sum().backward()
    _same(x.grad, tx.grad)


def test_jacobian_vectorize_accepted_and_no_graph():
    x, tx = _pair(3)
    e = EF.jacobian(lambda v: v * v, x, vectorize=True)
    assert not e.requires_grad
    _same(e, TF.jacobian(lambda v: v * v, tx, vectorize=True))


def test_jacobian_bad_input_type():
    with pytest.raises(
        TypeError,
        match="The inputs given to jacobian must be either a Tensor or a tuple of Tensors",
    ):
        EF.jacobian(lambda v: v, 3.0)


HESS = [
    ("one_in", f_cubic_scalar, [(4,)], False),
    ("two_in", f_scalar_two_in, [(2, 3), (3, 2)], True),
    ("one_in_tuple", f_cubic_scalar, [(3,)], True),
    ("transcendental", f_scalar_transcendental, [(3,), (3,)], True),
]


@pytest.mark.parametrize("name,fn,shapes,as_tuple", HESS, ids=[h[0] for h in HESS])
def test_hessian(name, fn, shapes, as_tuple):
    pairs = [_pair(*s, seed=i) for i, s in enumerate(shapes)]
    e_in = tuple(p[0] for p in pairs)
    t_in = tuple(p[1] for p in pairs)
    if not as_tuple:
        e_in, t_in = e_in[0], t_in[0]
    _same(EF.hessian(lambda *a: fn(ember, *a), e_in), TF.hessian(lambda *a: fn(torch, *a), t_in))


def test_hessian_needs_scalar():
    x, _ = _pair(3)
    with pytest.raises(
        RuntimeError,
        match="The Tensor returned by the function given to hessian "
        "should contain a single element",
    ):
        EF.hessian(lambda v: v * 2, x)
    with pytest.raises(
        RuntimeError, match="The function given to hessian should return a single Tensor"
    ):
        EF.hessian(lambda v: (v.sum(), v.sum()), x)


@pytest.mark.parametrize("which", ["vjp", "jvp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp_single(which, create_graph):
    x, tx = _pair(2, 3)
    w, tw = _pair(3, 3, seed=6)
    # vjp: f: (2,3) -> (2,3); v has the output's shape. jvp: v has the input's shape.
    v, tv = _pair(2, 3, seed=5)
    e = getattr(EF, which)(lambda a: (a @ w) ** 2, x, v, create_graph=create_graph)
    t = getattr(TF, which)(lambda a: (a @ tw) ** 2, tx, tv, create_graph=create_graph)
    _same(e, t)


@pytest.mark.parametrize("which", ["vjp", "jvp"])
def test_vjp_jvp_multi(which):
    x, tx = _pair(3)
    y, ty = _pair(3, seed=1)
    if which == "vjp":
        v = (_pair(3, seed=2), _pair(seed=3))
    else:
        v = (_pair(3, seed=2), _pair(3, seed=3))
    ev = tuple(p[0] for p in v)
    tv = tuple(p[1] for p in v)
    e = getattr(EF, which)(lambda a, b: f_two_in_two_out(ember, a, b), (x, y), ev)
    t = getattr(TF, which)(lambda a, b: f_two_in_two_out(torch, a, b), (tx, ty), tv)
    _same(e, t)


def test_vjp_v_none_scalar():
    x, tx = _pair(4)
    _same(EF.vjp(lambda a: (a**3).sum(), x), TF.vjp(lambda a: (a**3).sum(), tx))
    with pytest.raises(
        RuntimeError,
        match="The vector v can only be None if the user-provided "
        "function returns a single Tensor with a single element.",
    ):
        EF.vjp(lambda a: a * 2, x)


def test_vjp_unused_input_zero_and_strict():
    x, tx = _pair(3)
    y, ty = _pair(3, seed=1)
    v, tv = _pair(3, seed=2)
    _same(EF.vjp(lambda a, b: a * 2, (x, y), v), TF.vjp(lambda a, b: a * 2, (tx, ty), tv))
    with pytest.raises(
        RuntimeError,
        match="The output of the user-provided function is "
        "independent of input 1. This is not allowed in strict "
        "mode.",
    ):
        EF.vjp(lambda a, b: a * 2, (x, y), v, strict=True)


def test_vjp_bad_v_shape():
    x, _ = _pair(3)
    v, _ = _pair(4)
    # a lone output: torch names no entry (wave 20); a tuple of outputs: "Entry 0 in v ..."
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be "):
        EF.vjp(lambda a: a * 2, x, v)
    with pytest.raises(RuntimeError, match=r"^Entry 0 in v has invalid size: should be "):
        EF.vjp(lambda a: (a * 2,), x, (v,))


@pytest.mark.parametrize("which", ["hvp", "vhp"])
@pytest.mark.parametrize("multi", [False, True])
def test_hvp_vhp(which, multi):
    if multi:
        ins = [_pair(2, 3), _pair(3, 2, seed=1)]
        vs = [_pair(2, 3, seed=2), _pair(3, 2, seed=3)]
        e_in, t_in = tuple(p[0] for p in ins), tuple(p[1] for p in ins)
        e_v, t_v = tuple(p[0] for p in vs), tuple(p[1] for p in vs)
    else:
        (e_in, t_in), (e_v, t_v) = _pair(4), _pair(4, seed=2)
    fn = f_scalar_two_in if multi else f_cubic_scalar
    e = getattr(EF, which)(lambda *a: fn(ember, *a), e_in, e_v)
    t = getattr(TF, which)(lambda *a: fn(torch, *a), t_in, t_v)
    _same(e, t)


def test_hvp_matches_hessian_times_v():
    x, _ = _pair(4)
    v, _ = _pair(4, seed=3)
    h = EF.hessian(lambda a: f_cubic_scalar(ember, a), x)
    _, hv = EF.hvp(lambda a: f_cubic_scalar(ember, a), x, v)
    np.testing.assert_allclose(hv._data, h._data @ v._data, atol=1e-10)


def test_functional_works_under_no_grad():
    x, tx = _pair(3)
    with ember.no_grad():
        e = EF.jacobian(lambda v: v**2, x)
    _same(e, TF.jacobian(lambda v: v**2, tx))
