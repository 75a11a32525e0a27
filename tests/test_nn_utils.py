"""nn.utils: clipping, parameter vectors, weight/spectral norm, parametrize, prune, functional_call,
fusion, skip_init: parity with torch and torch's errors."""

import warnings

import ember
import ember.nn.utils
import numpy as np
import pytest
from harness import A, assert_same, needs_torch, raises_like_torch

try:
    import torch
    import torch.func
    import torch.nn.utils
    import torch.nn.utils.prune
except ImportError:  # pragma: no cover
    torch = None

U = ember.nn.utils


def _grads(mod, shapes, dtypes=None, seed=0, nonfinite=None):
    r = np.random.default_rng(seed)
    ps = []
    for i, s in enumerate(shapes):
        dt = (dtypes or ["float32"] * len(shapes))[i]
        p = mod.zeros(s, dtype=getattr(mod, dt), requires_grad=True)
        g = r.uniform(-2, 2, s).astype(dt)
        if nonfinite is not None and i == 0:
            g.flat[0] = nonfinite
        p.grad = mod.tensor(g)
        ps.append(p)
    return ps


SHAPES = [(3, 4), (5,), (2, 2, 3), ()]


# ------------------------------------------------------------------ clip_grad
@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, float("inf"), "inf", 0, -float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    e, t = _grads(ember, SHAPES), _grads(torch, SHAPES)
    ne = U.clip_grad_norm_(e, max_norm, norm_type=norm_type)
    nt = torch.nn.utils.clip_grad_norm_(t, max_norm, norm_type=norm_type)
    assert_same(ne, nt, what="total norm")
    for a, b in zip(e, t):
        assert_same(a.grad, b.grad, what="clipped grad")


@needs_torch
@pytest.mark.parametrize("dtypes", [["float64"] * 4, ["float32", "float64", "float32", "float32"]])
def test_get_total_norm_dtypes(dtypes):
    e, t = _grads(ember, SHAPES, dtypes), _grads(torch, SHAPES, dtypes)
    ne = U.get_total_norm([p.grad for p in e])
    nt = torch.nn.utils.get_total_norm([p.grad for p in t])
    assert_same(ne, nt, atol=1e-6)
    assert_same(U.get_total_norm(e[0].grad, 1), torch.nn.utils.get_total_norm(t[0].grad, 1))


@needs_torch
def test_clip_grad_norm_variants():
    # generator input, single tensor, foreach flags, params without grad, empty list
    e, t = _grads(ember, SHAPES), _grads(torch, SHAPES)
    e.append(ember.zeros(3, requires_grad=True))
    t.append(torch.zeros(3, requires_grad=True))
    ne = U.clip_grad_norm_((p for p in e), 1.0, foreach=True)
    nt = torch.nn.utils.clip_grad_norm_((p for p in t), 1.0, foreach=True)
    assert_same(ne, nt)
    assert e[-1].grad is None
    assert_same(U.clip_grad_norm_(e[0], 0.1, foreach=False),
                torch.nn.utils.clip_grad_norm_(t[0], 0.1, foreach=False))  # fmt: skip
    assert_same(e[0].grad, t[0].grad)
    assert_same(U.clip_grad_norm_([], 1.0), torch.nn.utils.clip_grad_norm_([], 1.0))
    with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated"):
        ne = U.clip_grad_norm(e, 0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nt = torch.nn.utils.clip_grad_norm(t, 0.01)
    assert_same(ne, nt)
    for a, b in zip(e, t):
        if a.grad is not None:
            assert_same(a.grad, b.grad)


@needs_torch
def test_get_total_norm_and_clip_with_norm():
    e, t = _grads(ember, SHAPES, seed=3), _grads(torch, SHAPES, seed=3)
    ne = U.get_total_norm([p.grad for p in e], norm_type=3.0)
    nt = torch.nn.utils.get_total_norm([p.grad for p in t], norm_type=3.0)
    assert_same(ne, nt)
    assert U.clip_grads_with_norm_(e, 1.0, ne) is None
    torch.nn.utils.clip_grads_with_norm_(t, 1.0, nt)
    for a, b in zip(e, t):
        assert_same(a.grad, b.grad)
    assert_same(U.get_total_norm([]), torch.nn.utils.get_total_norm([]))


@needs_torch
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_clip_grad_norm_nonfinite(bad):
    msg = ("The total norm of order 2.0 for gradients from `parameters` is non-finite, so it "
           "cannot be clipped. To disable this error and scale the gradients by the non-finite "
           "norm anyway, set `error_if_nonfinite=False`")  # fmt: skip
    raises_like_torch(
        lambda m: m.nn.utils.clip_grad_norm_(_grads(m, SHAPES, nonfinite=bad), 1.0,
                                             error_if_nonfinite=True),
        RuntimeError, msg)  # fmt: skip
    e, t = _grads(ember, SHAPES, nonfinite=bad), _grads(torch, SHAPES, nonfinite=bad)
    assert_same(U.clip_grad_norm_(e, 1.0), torch.nn.utils.clip_grad_norm_(t, 1.0))
    for a, b in zip(e, t):
        assert_same(a.grad, b.grad)


@needs_torch
@pytest.mark.parametrize("clip", [0.1, 1, 5.0])
def test_clip_grad_value(clip):
    e, t = _grads(ember, SHAPES), _grads(torch, SHAPES)
    e.append(ember.zeros(2, requires_grad=True))
    assert U.clip_grad_value_(e, clip, foreach=None) is None
    torch.nn.utils.clip_grad_value_(t, clip)
    for a, b in zip(e, t):
        assert_same(a.grad, b.grad)
    U.clip_grad_value_(e[0], 0.01)
    assert float(e[0].grad.abs().max()) <= 0.01 + 1e-7


def test_clip_int_grad_norm_error():
    raises_like_torch(
        lambda m: m.nn.utils.get_total_norm([m.ones(2, dtype=m.int64)]),
        RuntimeError,
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
    )


# ------------------------------------------------------------------ parameters <-> vector
@needs_torch
def test_parameters_to_vector_roundtrip():
    r = np.random.default_rng(0)
    arrs = [r.standard_normal(s).astype("float32") for s in [(2, 3), (4,), (1, 2, 2)]]
    e = [ember.tensor(a, requires_grad=True) for a in arrs]
    t = [torch.tensor(a, requires_grad=True) for a in arrs]
    ve, vt = U.parameters_to_vector(e), torch.nn.utils.parameters_to_vector(t)
    assert_same(ve, vt)
    # differentiable like torch's (a cat of views)
    w = r.standard_normal(ve.shape[0]).astype("float32")
    (ve * ember.tensor(w)).sum().backward()
    (vt * torch.tensor(w)).sum().backward()
    for a, b in zip(e, t):
        assert_same(a.grad, b.grad)
    new = np.arange(14, dtype="float32")
    with ember.no_grad():
        U.vector_to_parameters(ember.tensor(new), e)
    with torch.no_grad():
        torch.nn.utils.vector_to_parameters(torch.tensor(new), t)
    for a, b in zip(e, t):
        assert_same(a, b)
        assert a.requires_grad and a.is_leaf
    assert_same(U.parameters_to_vector(e), torch.tensor(new))
    # a longer vector: the leading elements are used
    U.vector_to_parameters(ember.arange(20.0), e)
    np.testing.assert_array_equal(np.asarray(U.parameters_to_vector(e).detach()._data),
                                  np.arange(14.0))  # fmt: skip


def test_vector_to_parameters_errors():
    raises_like_torch(
        lambda m: m.nn.utils.vector_to_parameters([1], [m.ones(2, 2)]),
        TypeError,
        "expected torch.Tensor, but got: list",
    )
    raises_like_torch(
        lambda m: m.nn.utils.vector_to_parameters(m.arange(3.0), [m.ones(2, 2)]),
        RuntimeError,
        "shape '[2, 2]' is invalid for input of size 3",
    )


# ------------------------------------------------------------------ helpers for module tests
def _np_(t):
    return np.asarray(t.detach()._data)


def _copy(tm, em, strict=True):
    from nn_harness import copy_state

    copy_state(tm, em, strict=strict)


def _perturb(mod, m, *names, scale=0.3, seed=5):
    """Add fixed noise to the named tensors (same noise in ember and torch)."""
    r = np.random.default_rng(seed)
    with mod.no_grad():
        for n in names:
            t = m.get_parameter(n) if n in dict(m.named_parameters()) else m.get_buffer(n)
            t.add_(mod.tensor(r.standard_normal(tuple(t.shape)).astype(str(t.dtype).split(".")[-1])
                              * scale))  # fmt: skip


# ------------------------------------------------------------------ weight_norm (hook API)
@needs_torch
@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_hooks(dim):
    from nn_harness import check_module

    def ctor(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return m.nn.utils.weight_norm(m.nn.Linear(5, 4), dim=dim)

    check_module(ctor, [A(3, 5)])
    e, t = ctor(ember), ctor(torch)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert tuple(e.weight_g.shape) == tuple(t.weight_g.shape)
    _copy(t, e)
    U.remove_weight_norm(e)
    torch.nn.utils.remove_weight_norm(t)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert isinstance(e.weight, ember.nn.Parameter)
    assert_same(e.weight, t.weight)
    assert len(e._forward_pre_hooks) == 0


def test_weight_norm_warns_and_errors():
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
        m = U.weight_norm(ember.nn.Linear(3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        raises_like_torch(
            lambda md: md.nn.utils.weight_norm(md.nn.utils.weight_norm(md.nn.Linear(3, 4))),
            RuntimeError,
            "Cannot register two weight_norm hooks on the same parameter weight",
        )
        raises_like_torch(
            lambda md: md.nn.utils.remove_weight_norm(md.nn.Linear(3, 4)),
            ValueError,
            "weight_norm of 'weight' not found in Linear(in_features=3, out_features=4, bias=True)",
        )
    # the weight is recomputed from g and v on every call
    with ember.no_grad():
        m.weight_g.mul_(2.0)
    m(ember.ones(1, 3))
    w = _np_(m.weight_v)
    np.testing.assert_allclose(
        _np_(m.weight), w / np.linalg.norm(w, axis=1, keepdims=True) * _np_(m.weight_g), rtol=1e-5
    )


# ------------------------------------------------------------------ spectral_norm (hook API)
@needs_torch
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("n_iter,dim", [(1, 0), (3, 1)])
def test_spectral_norm_hooks(train, n_iter, dim):
    from nn_harness import compare_modules

    for dt in ("float32", "float64"):
        t = torch.nn.utils.spectral_norm(torch.nn.Linear(5, 4), n_power_iterations=n_iter, dim=dim)
        e = U.spectral_norm(ember.nn.Linear(5, 4), n_power_iterations=n_iter, dim=dim)
        t, e = (t.double(), e.double()) if dt == "float64" else (t, e)
        t.train(train)
        e.train(train)
        assert list(e.state_dict()) == list(t.state_dict())
        assert list(e.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
        _copy(t, e)
        tol = 1e-5 if dt == "float32" else 1e-9
        compare_modules(t, e, [A(3, 5)], dtype=dt, atol=tol, rtol=tol * 10)
        # the power-iteration state (updated in place in training mode) matches too
        assert_same(e.weight_u, t.weight_u, atol=tol)
        assert_same(e.weight_v, t.weight_v, atol=tol)
        assert e.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    U.remove_spectral_norm(e)
    torch.nn.utils.remove_spectral_norm(t)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert_same(e.weight, t.weight, atol=1e-9)
    assert not e._state_dict_hooks


@needs_torch
def test_spectral_norm_sigma():
    # after many training calls the weight's largest singular value is 1
    ember.manual_seed(0)
    e = U.spectral_norm(ember.nn.Linear(6, 5), n_power_iterations=5)
    for _ in range(5):
        e(ember.ones(1, 6))
    s = np.linalg.svd(_np_(e.weight), compute_uv=False)
    np.testing.assert_allclose(s[0], 1.0, rtol=1e-4)


def test_spectral_norm_errors():
    raises_like_torch(
        lambda m: m.nn.utils.spectral_norm(m.nn.utils.spectral_norm(m.nn.Linear(3, 4))),
        RuntimeError,
        "Cannot register two spectral_norm hooks on the same parameter weight",
    )
    raises_like_torch(
        lambda m: m.nn.utils.spectral_norm(m.nn.Linear(3, 4), n_power_iterations=0),
        ValueError,
        "Expected n_power_iterations to be positive, but got n_power_iterations=0",
    )
    raises_like_torch(
        lambda m: m.nn.utils.remove_spectral_norm(m.nn.Linear(3, 4), "bias"),
        ValueError,
        "spectral_norm of 'bias' not found in Linear(in_features=3, out_features=4, bias=True)",
    )


# ------------------------------------------------------------------ parametrize
def _sym_cls(mod):
    class Symmetric(mod.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    return Symmetric


def _scale_cls(mod):
    class Scale(mod.nn.Module):
        def forward(self, X):
            return 2.0 * X

        def right_inverse(self, A):
            return A / 2.0

    return Scale


@needs_torch
def test_register_parametrization_parity():
    from nn_harness import check_module

    def ctor(m):
        lin = m.nn.Linear(4, 4)
        m.nn.utils.parametrize.register_parametrization(lin, "weight", _sym_cls(m)())
        m.nn.utils.parametrize.register_parametrization(lin, "weight", _scale_cls(m)())
        return lin

    check_module(ctor, [A(3, 4)])
    e, t = ctor(ember), ctor(torch)
    assert type(e).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert isinstance(e, ember.nn.Linear)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert repr(e) == repr(t).replace("torch.", "ember.")
    P = ember.nn.utils.parametrize
    assert P.is_parametrized(e) and P.is_parametrized(e, "weight")
    assert not P.is_parametrized(e, "bias") and not P.is_parametrized(ember.nn.Linear(2, 2))
    assert P.type_before_parametrizations(e) is ember.nn.Linear
    assert isinstance(e.parametrizations.weight, P.ParametrizationList)


@needs_torch
def test_parametrization_assign_and_remove():
    P, TP = ember.nn.utils.parametrize, torch.nn.utils.parametrize
    e, t = ember.nn.Linear(3, 3), torch.nn.Linear(3, 3)
    P.register_parametrization(e, "weight", _sym_cls(ember)())
    TP.register_parametrization(t, "weight", _sym_cls(torch)())
    _copy(t, e)
    orig_obj = e.parametrizations.weight.original
    val = np.arange(9, dtype="float32").reshape(3, 3)
    e.weight = ember.tensor(val)  # stored through right_inverse
    t.weight = torch.tensor(val)
    assert e.parametrizations.weight.original is orig_obj  # updated in place
    assert_same(e.parametrizations.weight.original, t.parametrizations.weight.original)
    assert_same(e.weight, t.weight)
    with P.cached():
        assert e.weight is e.weight
    assert e.weight is not e.weight
    P.remove_parametrizations(e, "weight", leave_parametrized=True)
    TP.remove_parametrizations(t, "weight", leave_parametrized=True)
    assert type(e) is ember.nn.Linear and not hasattr(e, "parametrizations")
    assert isinstance(e.weight, ember.nn.Parameter) and e.weight is orig_obj
    assert_same(e.weight, t.weight)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    # leave_parametrized=False keeps the original (right_inverse) values
    P.register_parametrization(e, "weight", _scale_cls(ember)())
    TP.register_parametrization(t, "weight", _scale_cls(torch)())
    _copy(t, e)
    P.remove_parametrizations(e, "weight", leave_parametrized=False)
    TP.remove_parametrizations(t, "weight", leave_parametrized=False)
    assert_same(e.weight, t.weight)


def test_parametrize_buffer_and_pickle():
    import copy
    import pickle

    P = ember.nn.utils.parametrize
    m = ember.nn.Linear(3, 3)
    m.register_buffer("buf", ember.ones(3, 3))
    P.register_parametrization(m, "buf", _scale_cls(ember)())
    assert list(m.state_dict()) == ["weight", "bias", "parametrizations.buf.original"]
    # right_inverse stored ones / 2; forward doubles it back
    np.testing.assert_array_equal(_np_(m.parametrizations.buf.original), np.full((3, 3), 0.5))
    np.testing.assert_array_equal(_np_(m.buf), np.ones((3, 3)))
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only"):
        pickle.dumps(m)
    c = copy.deepcopy(m)
    assert type(c) is type(m) and c.buf is not m.buf
    np.testing.assert_array_equal(_np_(c.buf), _np_(m.buf))
    other = ember.nn.Linear(3, 3)  # the property lives on m's own class only
    assert not hasattr(other, "buf")


def _bad_param(mod, kind):
    class Bad(mod.nn.Module):
        def forward(self, X):
            if kind == "shape":
                return X[0]
            if kind == "dtype":
                return X.double()
            return 1

    return Bad()


PARAM_ERRORS = [
    (lambda m: m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(3, 3), "weight", _bad_param(m, "shape")), ValueError,
     ("Registering a parametrization may not change the shape of the tensor, unless `unsafe` flag "
     "is enabled.\nunparametrized shape: ")),
    (lambda m: m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(3, 3), "weight", _bad_param(m, "dtype")), ValueError,
     ("Registering a parametrization may not change the dtype of the tensor, unless `unsafe` flag "
     "is enabled.\nunparametrized dtype: ")),
    (lambda m: m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(3, 3), "weight", _bad_param(m, "int")), ValueError,
     "A parametrization must return a tensor. Got int."),
    (lambda m: m.nn.utils.parametrize.register_parametrization(
        m.nn.utils.parametrize.register_parametrization(m.nn.Linear(3, 3), "weight",
                                                        _sym_cls(m)()),
        "weight", _bad_param(m, "shape")), ValueError,
     ("Registering a parametrization may not change the shape of the tensor, unless the `unsafe` "
     "flag is enabled.\nmodule.weight.shape: ")),
    (lambda m: m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(3, 3), "foo", _sym_cls(m)()), ValueError,
     ("Module 'Linear(in_features=3, out_features=3, bias=True)' does not have a parameter, a "
     "buffer, or a parametrized element with name 'foo'")),
    (lambda m: m.nn.utils.parametrize.remove_parametrizations(m.nn.Linear(3, 3), "weight"),
     ValueError,
     ("Module Linear(in_features=3, out_features=3, bias=True) does not have a parametrization on "
     "weight")),
    (lambda m: setattr(m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(3, 3), "weight", _bad_param(m, "none_") if False else m.nn.Identity()),
        "weight", m.ones(3, 3)), RuntimeError,
     "parametrization Identity does not implement right_inverse."),
    (lambda m: m.nn.utils.parametrize.remove_parametrizations(
        m.nn.utils.parametrizations.weight_norm(m.nn.Linear(3, 3)), "weight",
        leave_parametrized=False), ValueError,
     ("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in "
     "terms of a sequence of tensors.")),
]  # fmt: skip


@pytest.mark.parametrize("fn,exc,msg", PARAM_ERRORS, ids=[e[2][:30] for e in PARAM_ERRORS])
def test_parametrize_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


# ------------------------------------------------------------------ parametrizations
@needs_torch
@pytest.mark.parametrize("kind", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("out_f,in_f", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_parity(kind, out_f, in_f):
    from nn_harness import check_module

    def ctor(m):
        lin = m.nn.utils.parametrizations.orthogonal(m.nn.Linear(in_f, out_f), orthogonal_map=kind)
        _perturb(m, lin, "parametrizations.weight.original", scale=0.2)
        if kind == "householder":  # its diagonal only holds signs (truncated to int): keep -1
            with m.no_grad():
                lin.parametrizations.weight.original.diagonal().fill_(-1.0)
        return lin

    check_module(ctor, [A(2, in_f)], atol=1e-4, rtol=1e-3)
    e = ctor(ember)
    w = _np_(e.weight).astype(np.float64)
    g = w @ w.T if out_f <= in_f else w.T @ w
    np.testing.assert_allclose(g, np.eye(min(out_f, in_f)), atol=1e-5)


@needs_torch
@pytest.mark.parametrize("kind,triv", [("matrix_exp", True), ("cayley", True),
                                       ("householder", True), ("householder", False)])  # fmt: skip
def test_orthogonal_assign(kind, triv):
    PZ = ember.nn.utils.parametrizations
    m = PZ.orthogonal(ember.nn.Linear(3, 5), orthogonal_map=kind, use_trivialization=triv)
    q = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 3)))[0].astype("float32")
    m.weight = ember.tensor(q)
    np.testing.assert_allclose(_np_(m.weight), q, atol=1e-5)
    assert list(m.state_dict())[:2] == ["bias", "parametrizations.weight.original"]
    assert ("parametrizations.weight.0.base" in m.state_dict()) == triv


def test_orthogonal_errors():
    raises_like_torch(
        lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(5, 3), name="bias"),
        ValueError, "Expected a matrix or batch of matrices. Got a tensor of 1 dimensions.")  # fmt: skip
    raises_like_torch(
        lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(5, 3), name="foo"),
        ValueError, "Module 'Linear(in_features=5, out_features=3, bias=True)' has no parameter "
        "or buffer with name 'foo'")  # fmt: skip
    raises_like_torch(
        lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(5, 3), orthogonal_map="x"),
        ValueError, 'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
        "Got: x")  # fmt: skip
    raises_like_torch(
        lambda m: setattr(m.nn.utils.parametrizations.orthogonal(
            m.nn.Linear(5, 3), use_trivialization=False, orthogonal_map="cayley"), "weight",
            m.ones(3, 5)),
        NotImplementedError, "It is not possible to assign to the matrix exponential or the "
        "Cayley parametrizations when use_trivialization=False.")  # fmt: skip
    raises_like_torch(
        lambda m: setattr(m.nn.utils.parametrizations.orthogonal(m.nn.Linear(5, 3)), "weight",
                          m.ones(5, 3)),
        ValueError, "Expected a matrix or batch of matrices of shape ")  # fmt: skip


@needs_torch
@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm(dim):
    from nn_harness import check_module

    def ctor(m):
        return m.nn.utils.parametrizations.weight_norm(m.nn.Linear(5, 4), dim=dim)

    check_module(ctor, [A(3, 5)])
    e, t = ctor(ember), ctor(torch)
    keys = ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert list(e.state_dict()) == list(t.state_dict()) == keys
    # a checkpoint of the old hook API (weight_g / weight_v) loads through the compat hook
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(5, 4), dim=dim)
    from nn_harness import to_ember

    e.load_state_dict({k: to_ember(v, False) for k, v in old.state_dict().items()})
    x = np.ones((2, 5), "float32")
    assert_same(e(ember.tensor(x)), old(torch.tensor(x)))
    e.weight = ember.ones(4, 5)  # right_inverse: g = ||w||, v = w
    np.testing.assert_allclose(_np_(e.weight), np.ones((4, 5)), rtol=1e-6)


@needs_torch
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("dim,n_iter", [(None, 1), (1, 2)])
def test_parametrized_spectral_norm(train, dim, n_iter):
    from nn_harness import check_module

    def ctor(m):
        return m.nn.utils.parametrizations.spectral_norm(
            m.nn.Linear(5, 4), dim=dim, n_power_iterations=n_iter
        )

    check_module(ctor, [A(3, 5)], train=train)
    e, t = ctor(ember), ctor(torch)
    keys = ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
            "parametrizations.weight.0._v"]  # fmt: skip
    assert list(e.state_dict()) == list(t.state_dict()) == keys
    # the 15 initial power iterations give a fair sigma estimate already
    ember.manual_seed(0)
    e = ctor(ember)
    s = np.linalg.svd(_np_(e.weight), compute_uv=False)
    np.testing.assert_allclose(s[0], 1.0, rtol=2e-2)


@needs_torch
def test_parametrized_spectral_norm_vector():
    e = ember.nn.utils.parametrizations.spectral_norm(ember.nn.Linear(5, 4), name="bias")
    b = _np_(e.parametrizations.bias.original)
    np.testing.assert_allclose(_np_(e.bias), b / np.linalg.norm(b), rtol=1e-6)


def test_parametrized_spectral_norm_errors():
    raises_like_torch(
        lambda m: m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(5, 3), dim=3),
        IndexError, "Dimension out of range (expected to be in range of [-2, 1] but got 3)")  # fmt: skip
    raises_like_torch(
        lambda m: m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(5, 3),
                                                            n_power_iterations=0),
        ValueError, "Expected n_power_iterations to be positive, but got n_power_iterations=0")  # fmt: skip
    raises_like_torch(
        lambda m: m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(5, 3), name="foo"),
        ValueError, "Module 'Linear(in_features=5, out_features=3, bias=True)' has no parameter "
        "or buffer with name 'foo'")  # fmt: skip


# ------------------------------------------------------------------ prune
def _lin(mod, out_f=4, in_f=6):
    """A Linear with distinct-magnitude weights (no ties in l1/ln choices) and a fixed bias."""
    m = mod.nn.Linear(in_f, out_f)
    r = np.random.default_rng(0)
    w = (r.permutation(out_f * in_f) - (out_f * in_f) / 2 + 0.3).reshape(out_f, in_f) / 10
    with mod.no_grad():
        m.weight.copy_(mod.tensor(w.astype("float32")))
        m.bias.copy_(mod.tensor(np.arange(out_f, dtype="float32") - 1.5))
    return m


PRUNES = [
    ("l1_frac", lambda P, m: P.l1_unstructured(m, "weight", amount=0.3)),
    ("l1_count", lambda P, m: P.l1_unstructured(m, "weight", amount=5)),
    ("l1_zero", lambda P, m: P.l1_unstructured(m, "weight", amount=0)),
    ("l1_bias", lambda P, m: P.l1_unstructured(m, "bias", amount=2)),
    ("ln2_dim0", lambda P, m: P.ln_structured(m, "weight", amount=0.5, n=2, dim=0)),
    ("ln1_dim1", lambda P, m: P.ln_structured(m, "weight", amount=2, n=1, dim=1)),
    ("lninf_dim-1", lambda P, m: P.ln_structured(m, "weight", amount=0.34, n=float("inf"), dim=-1)),
    ("lnfro", lambda P, m: P.ln_structured(m, "weight", amount=1, n="fro", dim=0)),
    ("identity", lambda P, m: P.identity(m, "weight")),
    ("custom", lambda P, m: P.custom_from_mask(
        m, "weight", mask=m.weight.new_tensor(np.eye(4, 6, dtype="float32")) if hasattr(
            m.weight, "new_tensor") else None)),
    ("chain", lambda P, m: (P.l1_unstructured(m, "weight", amount=0.25),
                            P.ln_structured(m, "weight", amount=1, n=2, dim=0),
                            P.l1_unstructured(m, "weight", amount=3))),
    ("importance", lambda P, m: P.l1_unstructured(
        m, "weight", amount=6, importance_scores=m.weight.detach().flip(0))),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("name,fn", PRUNES, ids=[p[0] for p in PRUNES])
def test_prune_parity(name, fn):
    from nn_harness import compare_modules

    e, t = _lin(ember), _lin(torch)
    fn(ember.nn.utils.prune, e)
    fn(torch.nn.utils.prune, t)
    assert list(e.state_dict()) == list(t.state_dict())
    pname = "bias" if name == "l1_bias" else "weight"
    np.testing.assert_array_equal(_np_(getattr(e, pname + "_mask")),
                                  getattr(t, pname + "_mask").numpy())  # fmt: skip
    assert ember.nn.utils.prune.is_pruned(e) and torch.nn.utils.prune.is_pruned(t)
    hook_e = [h for h in e._forward_pre_hooks.values()]
    hook_t = [h for h in t._forward_pre_hooks.values()]
    assert [type(h).__name__ for h in hook_e] == [type(h).__name__ for h in hook_t]
    compare_modules(t, e, [A(3, 6)])  # forward and the grad of weight_orig (masked)
    assert_same(getattr(e, pname), getattr(t, pname))
    ember.nn.utils.prune.remove(e, pname)
    torch.nn.utils.prune.remove(t, pname)
    assert list(e.state_dict()) == list(t.state_dict())
    assert isinstance(getattr(e, pname), ember.nn.Parameter)
    assert_same(getattr(e, pname), getattr(t, pname))
    assert not ember.nn.utils.prune.is_pruned(e)


@needs_torch
def test_prune_global_unstructured():
    P, TP = ember.nn.utils.prune, torch.nn.utils.prune

    def build(mod, p):
        a, b = _lin(mod, 4, 6), _lin(mod, 3, 4)
        with mod.no_grad():
            b.weight.mul_(0.7)
        p.l1_unstructured(a, "bias", amount=1)  # an existing mask is respected
        params = [(a, "weight"), (b, "weight"), (a, "bias")]
        p.global_unstructured(params, pruning_method=p.L1Unstructured, amount=0.4)
        return a, b

    (ea, eb), (ta, tb) = build(ember, P), build(torch, TP)
    for e, t in ((ea, ta), (eb, tb)):
        np.testing.assert_array_equal(_np_(e.weight_mask), t.weight_mask.numpy())
        assert_same(e.weight, t.weight)
    np.testing.assert_array_equal(_np_(ea.bias_mask), ta.bias_mask.numpy())
    assert type(ea._forward_pre_hooks[next(iter(ea._forward_pre_hooks))]).__name__ in (
        "CustomFromMask",
        "PruningContainer",
    )


def test_prune_random():
    ember.manual_seed(0)
    P = ember.nn.utils.prune
    m = P.random_unstructured(ember.nn.Linear(10, 8), "weight", amount=0.25)
    mask = _np_(m.weight_mask)
    assert mask.sum() == 80 - 20 and set(np.unique(mask)) == {0.0, 1.0}
    np.testing.assert_array_equal(_np_(m.weight), _np_(m.weight_orig) * mask)
    m = P.random_structured(ember.nn.Linear(10, 8), "weight", amount=3, dim=0)
    mask = _np_(m.weight_mask)
    assert (mask.sum(1) == 0).sum() == 3 and ((mask.sum(1) == 10).sum() == 5)
    # the methods alone (no module)
    t = ember.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_array_equal(_np_(P.L1Unstructured(amount=2).prune(t)),
                                  [[0, 0, 3], [4, 5, 6]])  # fmt: skip
    ident = P.Identity()
    ident._tensor_name = "weight"
    c = P.PruningContainer(ident)
    assert len(c) == 1 and isinstance(c[0], P.Identity) and list(c) == [ident]
    other = P.Identity()
    other._tensor_name = "bias"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter "
                       "named 'weight' to PruningContainer"):  # fmt: skip
        c.add_pruning_method(other)
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)


PRUNE_ERRORS = [
    (lambda m: m.nn.utils.prune.l1_unstructured(m.nn.Linear(3, 2), "weight", amount=1.5),
     ValueError, ("amount=1.5 should either be a float in the range [0, 1] or a non-negative "
     "integer")),
    (lambda m: m.nn.utils.prune.l1_unstructured(m.nn.Linear(3, 2), "weight", amount=-1),
     ValueError, ("amount=-1 should either be a float in the range [0, 1] or a non-negative "
     "integer")),
    (lambda m: m.nn.utils.prune.l1_unstructured(m.nn.Linear(3, 2), "weight", amount="a"),
     TypeError, "Invalid type for amount: a. Must be int or float."),
    (lambda m: m.nn.utils.prune.l1_unstructured(m.nn.Linear(3, 2), "weight", amount=7),
     ValueError, "amount=7 should be smaller than the number of parameters to prune=6"),
    (lambda m: m.nn.utils.prune.ln_structured(m.nn.Linear(3, 2), "bias", amount=1, n=2, dim=0),
     ValueError, ("Structured pruning can only be applied to multidimensional tensors. Found "
     "tensor of shape ")),
    (lambda m: m.nn.utils.prune.ln_structured(m.nn.Linear(3, 2), "weight", 1, n=2, dim=2),
     IndexError, "Invalid index 2 for tensor of size "),
    (lambda m: m.nn.utils.prune.remove(m.nn.Linear(3, 2), "weight"),
     ValueError, ("Parameter 'weight' of module Linear(in_features=3, out_features=2, bias=True) "
     "has to be pruned before pruning can be removed")),
    (lambda m: m.nn.utils.prune.global_unstructured(
        [(m.nn.Linear(3, 2), "weight")], m.nn.utils.prune.RandomStructured, amount=1), TypeError,
     'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '),
    (lambda m: m.nn.utils.prune.global_unstructured(3, m.nn.utils.prune.L1Unstructured,
                                                    amount=1), TypeError,
     "global_unstructured(): parameters is not an Iterable"),
    (lambda m: m.nn.utils.prune.global_unstructured(
        [(m.nn.Linear(3, 2), "weight")], m.nn.utils.prune.L1Unstructured, importance_scores=[],
        amount=1), TypeError, "global_unstructured(): importance_scores must be of type dict"),
]  # fmt: skip


@pytest.mark.parametrize("fn,exc,msg", PRUNE_ERRORS, ids=[e[2][:30] for e in PRUNE_ERRORS])
def test_prune_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


def test_prune_failed_apply_restores():
    m = ember.nn.Linear(3, 2)
    w = m.weight
    with pytest.raises(ValueError):
        ember.nn.utils.prune.l1_unstructured(m, "weight", amount=7)
    assert m.weight is w and list(m.state_dict()) == ["bias", "weight"]  # as torch


# ------------------------------------------------------------------ functional_call
def _tied(mod):
    class M(mod.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = mod.nn.Linear(3, 3)
            self.l2 = self.l
            self.register_buffer("b", mod.ones(3))

        def forward(self, x, scale=1.0):
            return self.l2(self.l(x)) * scale + self.b

    return M()


@needs_torch
@pytest.mark.parametrize("tie", [True, False])
def test_functional_call_parity(tie):
    from nn_harness import to_ember

    em, tm = _tied(ember), _tied(torch)
    _copy(tm, em)
    r = np.random.default_rng(0)
    wt = torch.tensor(r.standard_normal((3, 3)).astype("float32"), requires_grad=True)
    bt = torch.tensor(r.standard_normal(3).astype("float32"))
    we, be = to_ember(wt), to_ember(bt)
    x = r.standard_normal((2, 3)).astype("float32")
    w_before = _np_(em.l.weight).copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ye = ember.nn.utils.stateless.functional_call(
            em, {"l.weight": we, "b": be}, (ember.tensor(x),), {"scale": 2.0}, tie_weights=tie
        )
        yt = torch.nn.utils.stateless.functional_call(
            tm, {"l.weight": wt, "b": bt}, (torch.tensor(x),), {"scale": 2.0}, tie_weights=tie)  # fmt: skip
    assert_same(ye, yt)
    ye.sum().backward()
    yt.sum().backward()
    assert_same(we.grad, wt.grad)
    # the module is unchanged (torch 2.13 leaves a tied weight swapped: not copied), and its
    # own parameters got no gradient
    np.testing.assert_array_equal(_np_(em.l.weight), w_before)
    assert em.l2.weight is em.l.weight
    assert em.l.weight.grad is None and isinstance(em.l.weight, ember.nn.Parameter)
    np.testing.assert_array_equal(_np_(em.b), np.ones(3))


@needs_torch
def test_functional_call_variants():
    def pair():
        # fresh modules per call: torch 2.13 leaves a tied weight swapped after the call
        em, tm = _tied(ember), _tied(torch)
        _copy(tm, em)
        return em, tm

    x = np.ones((1, 3), "float32")
    fe = ember.nn.utils.stateless._functional_call
    ft = torch.func.functional_call
    zeros_e, zeros_t = ember.zeros(3), torch.zeros(3)
    em, tm = pair()
    assert_same(fe(em, ({"l.bias": zeros_e}, {"b": zeros_e}), ember.tensor(x)),
                ft(tm, ({"l.bias": zeros_t}, {"b": zeros_t}), torch.tensor(x)))  # fmt: skip
    em, tm = pair()
    assert_same(
        fe(em, {}, kwargs={"x": ember.tensor(x)}), ft(tm, {}, kwargs={"x": torch.tensor(x)})
    )
    # an unknown key is set for the call only (non-strict)
    em, tm = pair()
    assert_same(fe(em, {"foo": ember.ones(1)}, ember.tensor(x)),
                ft(tm, {"foo": torch.ones(1)}, torch.tensor(x)))  # fmt: skip
    assert not hasattr(em, "foo")
    # a parametrized tensor is replaced by the given value, not by its parametrization
    pe = ember.nn.utils.parametrizations.orthogonal(ember.nn.Linear(3, 3))
    out = fe(pe, {"weight": ember.zeros(3, 3)}, ember.tensor(x))
    assert_same(out, torch.tensor(_np_(pe.bias)[None]))
    assert type(pe).__name__ == "ParametrizedLinear"
    np.testing.assert_allclose(_np_(pe.weight) @ _np_(pe.weight).T, np.eye(3), atol=1e-5)


FC_ERRORS = [
    (lambda m: m.func.functional_call(_tied(m), {"l.weight": m.zeros(3, 3),
                                                 "l2.weight": m.ones(3, 3)}, m.ones(1, 3)),
     ValueError, ("functional_call got multiple values for keys ['l.weight', 'l2.weight'], which "
     "are tied. Consider using tie_weights=False")),
    (lambda m: m.func.functional_call(_tied(m), {"l.weight": m.zeros(3, 3), "foo": m.ones(1)},
                                      m.ones(1, 3), strict=True),
     RuntimeError, ("Error(s) in reparametrizing for M:\n\tUnexpected key(s): 'foo'.\n\tMissing "
     "key(s): 'b', 'l.bias', 'l2.bias'.")),
    (lambda m: m.func.functional_call(_tied(m), ({"b": m.ones(3)}, {"b": m.ones(3)}),
                                      m.ones(1, 3)),
     ValueError, ("['b'] appeared in multiple dictionaries; behavior of functional call is "
     "ambiguous")),
    (lambda m: m.func.functional_call(_tied(m), {"x.y": m.ones(3)}, m.ones(1, 3)),
     AttributeError, "M has no attribute `x`"),
    (lambda m: m.func.functional_call(_tied(m), {"b": 3}, m.ones(1, 3)),
     TypeError, "3 is not an instance of torch.Tensor"),
]  # fmt: skip


@pytest.mark.parametrize("fn,exc,msg", FC_ERRORS, ids=[e[2][:30] for e in FC_ERRORS])
def test_functional_call_errors(fn, exc, msg):
    import types

    # ember.func may not exist yet: expose stateless' functional_call the way torch.func does
    fake = types.SimpleNamespace(
        func=types.SimpleNamespace(functional_call=ember.nn.utils.stateless._functional_call),
        nn=ember.nn, zeros=ember.zeros, ones=ember.ones)  # fmt: skip
    with pytest.raises(exc, match=__import__("re").escape(msg)):
        fn(fake)
    if torch is not None:
        with pytest.raises(exc, match=__import__("re").escape(msg)):
            fn(torch)
    m = _tied(ember)
    with pytest.raises(exc):
        fn(fake)
    assert isinstance(m.l.weight, ember.nn.Parameter)


def test_functional_call_warns():
    m = ember.nn.Linear(2, 2)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.stateless.functional_call` is"):
        ember.nn.utils.stateless.functional_call(m, {}, ember.ones(1, 2))


# ------------------------------------------------------------------ fusion
@needs_torch
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_linear_bn_weights(bias):
    r = np.random.default_rng(0)
    arrs = [r.standard_normal(s).astype("float32") for s in [(4, 3), (4,), (4,), (4,), (4,), (4,)]]
    arrs[3] = np.abs(arrs[3]) + 0.5  # running var
    e = [ember.tensor(a) for a in arrs]
    t = [torch.tensor(a) for a in arrs]
    if not bias:
        e[1] = t[1] = None
    we, be = U.fuse_linear_bn_weights(e[0], e[1], e[2], e[3], 1e-5, e[4], e[5])
    wt, bt = torch.nn.utils.fuse_linear_bn_weights(t[0], t[1], t[2], t[3], 1e-5, t[4], t[5])
    assert isinstance(we, ember.nn.Parameter) and isinstance(be, ember.nn.Parameter)
    assert_same(we, wt)
    assert_same(be, bt)


@needs_torch
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("bias,affine", [(True, True), (False, False)])
def test_fuse_conv_bn_weights(transpose, bias, affine):
    r = np.random.default_rng(1)
    w = r.standard_normal((4, 4, 3, 3)).astype("float64")
    vecs = [r.standard_normal(4).astype("float64") for _ in range(4)]
    vecs[2] = np.abs(vecs[2]) + 0.5
    args_e = [ember.tensor(w), ember.tensor(vecs[0]) if bias else None, ember.tensor(vecs[1]),
              ember.tensor(vecs[2]), 1e-3] + ([ember.tensor(vecs[3]), ember.tensor(vecs[0])]
                                              if affine else [None, None])  # fmt: skip
    args_t = [torch.tensor(w), torch.tensor(vecs[0]) if bias else None, torch.tensor(vecs[1]),
              torch.tensor(vecs[2]), 1e-3] + ([torch.tensor(vecs[3]), torch.tensor(vecs[0])]
                                              if affine else [None, None])  # fmt: skip
    for a, b in zip(U.fuse_conv_bn_weights(*args_e, transpose=transpose),
                    torch.nn.utils.fuse_conv_bn_weights(*args_t, transpose=transpose)):  # fmt: skip
        assert_same(a, b)


def _fake_bn(mod, n):
    # a stand-in with BatchNorm's attributes (the norm layers are another issue's)
    class BN(mod.nn.Module):
        def __init__(self):
            super().__init__()
            self.num_features, self.eps = n, 1e-5
            self.weight = mod.nn.Parameter(mod.arange(1.0, n + 1.0))
            self.bias = mod.nn.Parameter(mod.ones(n) * 0.5)
            self.register_buffer("running_mean", mod.arange(float(n)) * 0.1)
            self.register_buffer("running_var", mod.arange(1.0, n + 1.0) * 0.3)

        def forward(self, x):
            return (x - self.running_mean) / (self.running_var + self.eps).sqrt() * self.weight + (
                self.bias
            )

    return BN()


def test_fuse_linear_bn_eval():
    lin, bn = ember.nn.Linear(3, 4), _fake_bn(ember, 4)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        U.fuse_linear_bn_eval(lin, bn)
    lin.eval()
    bn.eval()
    fused = U.fuse_linear_bn_eval(lin, bn)
    assert fused is not lin and isinstance(fused.weight, ember.nn.Parameter)
    x = ember.randn(5, 3)
    np.testing.assert_allclose(_np_(fused(x)), _np_(bn(lin(x))), rtol=1e-5, atol=1e-6)
    fused = U.fuse_conv_bn_eval(lin, bn)  # any weight/bias module: the same algebra
    np.testing.assert_allclose(_np_(fused(x)), _np_(bn(lin(x))), rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
        U.fuse_linear_bn_eval(lin, _fake_bn(ember, 5).eval())


# ------------------------------------------------------------------ skip_init, memory format
def test_skip_init():
    m = U.skip_init(ember.nn.Linear, 3, 4, bias=False)
    assert tuple(m.weight.shape) == (4, 3) and m.bias is None
    assert isinstance(m.weight, ember.nn.Parameter) and m.weight.requires_grad
    assert ember.nn.init.kaiming_uniform_.__name__ == "kaiming_uniform_"  # restored
    raises_like_torch(lambda md: md.nn.utils.skip_init(int), RuntimeError,
                      "Expected a Module; got <class 'int'>")  # fmt: skip
    raises_like_torch(lambda md: md.nn.utils.skip_init(md.nn.Identity), RuntimeError,
                      "Module must support a 'device' arg to skip initialization")  # fmt: skip


def test_convert_weight_memory_format():
    m = ember.nn.Sequential(ember.nn.Linear(2, 2))
    assert U.convert_conv2d_weight_memory_format(m, ember.channels_last) is m
    assert U.convert_conv3d_weight_memory_format(m, ember.channels_last_3d) is m


@needs_torch
def test_spectral_norm_loads_old_checkpoint():
    # a checkpoint from before version 1 stored `weight` (the normalized value) and no `weight_v`
    from collections import OrderedDict

    from nn_harness import to_ember

    t = torch.nn.utils.spectral_norm(torch.nn.Linear(5, 4).double())
    t(torch.ones(1, 5, dtype=torch.float64))
    old = OrderedDict((k, v.clone()) for k, v in t.state_dict().items() if k != "weight_v")
    old["weight"] = t.weight.detach().clone()
    t2 = torch.nn.utils.spectral_norm(torch.nn.Linear(5, 4).double())
    e = U.spectral_norm(ember.nn.Linear(5, 4).double())
    t2.load_state_dict(OrderedDict(old))
    e.load_state_dict(OrderedDict((k, to_ember(v, False)) for k, v in old.items()))
    assert_same(e.weight_v, t2.weight_v, atol=1e-9)
    e.eval()
    t2.eval()
    x = np.ones((1, 5))
    assert_same(e(ember.tensor(x)), t2(torch.tensor(x)), atol=1e-9)
