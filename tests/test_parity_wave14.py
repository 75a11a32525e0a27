"""Parity regressions found by the fourteenth wave, a systematic sweep of the long tail of
torch.Tensor methods and torch.* functions (each called with typical and edge inputs: 0-d,
empty, integer/bool dtypes, out=, in-place variants; torch is the oracle): igamma/igammac on
integer or bool operands (torch has no kernel and refuses them instead of computing in float),
heaviside refusing operands of different dtypes (no promotion, even for a 0-d ``values``),
masked_scatter_'s mask errors (the scalar-type name ``Long``, and the deprecation warning before
a uint8 mask is refused), tril_indices/triu_indices' checks (negative sizes, non-int32/int64
dtypes), aminmax's empty-input messages, var_mean/std_mean naming themselves when refusing an
integer input, ``Tensor.new_tensor(tensor)`` taking self's dtype, flip of a 0-d tensor,
tensor_split's checks (0-d input, a float or 2-D tensor of indices), index_select on a 0-d input
(one index only, torch's out-of-range message), nextafter's gradient (identity in input, zero in
other), the addmm family (addmm, addmv, baddbmm, addbmm) taking ``beta``/``alpha`` in an integer
input's type (0.5 truncates to 0; a negative float is refused for uint8), out= of a
(values, indices)-style op returning torch's named tuple, the out= dtype checks torch makes
instead of casting (frexp, signbit, float_power, searchsorted/bucketize, amax/amin,
logcumsumexp, renorm), and ``out=`` on diff and renorm, which ember lacked; ``list @ tensor``
(Python's TypeError: torch's ``__rmatmul__`` takes only a tensor), spherical_bessel_j0 (0) and
polygamma (nan where torch's kernels give nan) at the infinities, ``detach_()`` refusing every
view with torch's full message, renorm printing a negative maxnorm as C++ does, and
unique_consecutive and index_fill refusing complex inputs/values like torch."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _both(fn):
    """Run ``fn(T)`` for T = torch and ember: (result, exception) for each."""
    res = []
    for T in (torch, ember):
        try:
            res.append((fn(T), None))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            res.append((None, e))
    return res


def _same_error(fn):
    (_, et), (_, ee) = _both(fn)
    assert et is not None and ee is not None, (et, ee)
    assert type(ee) is type(et)
    assert str(ee) == str(et).split("\n")[0]


def _same_value(fn):
    (rt, et), (re_, ee) = _both(fn)
    assert et is None and ee is None, (et, ee)
    assert str(re_.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
    assert tuple(re_.shape) == tuple(rt.shape)
    np.testing.assert_allclose(re_.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------- igamma, heaviside
@pytest.mark.parametrize("name", ["igamma", "igammac"])
@pytest.mark.parametrize(
    "a, b", [([1, 2], [1, 2]), ([True], [True]), ([1, 2], [True, False])], ids=str
)
def test_igamma_refuses_integer_operands(name, a, b):
    _same_error(lambda T: getattr(T, name)(T.tensor(a), T.tensor(b)))


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_mixed_int_float_still_computes(name):
    _same_value(lambda T: getattr(T, name)(T.tensor([1.0, 2.5]), T.tensor([1, 2])))
    _same_value(lambda T: getattr(T, name)(T.tensor([1, 2]), T.tensor([0.5, 2.5])))


@pytest.mark.parametrize(
    "x, v",
    [
        (lambda T: T.tensor([-1, 0, 2]), lambda T: T.tensor([0.5])),
        (lambda T: T.tensor([-1.0, 0, 2]), lambda T: T.tensor(0.5, dtype=T.float64)),
        (lambda T: T.tensor([-1.0, 0, 2]), lambda T: T.tensor([1])),
    ],
)
def test_heaviside_refuses_different_dtypes(x, v):
    _same_error(lambda T: T.heaviside(x(T), v(T)))
    _same_error(lambda T: x(T).heaviside_(v(T)))


def test_heaviside_same_dtype():
    _same_value(lambda T: T.heaviside(T.tensor([-1.0, 0.0, 2.0]), T.tensor(0.5)))
    _same_value(lambda T: T.heaviside(T.tensor([-1, 0, 2]), T.tensor([7])))


# ------------------------------------------------------------------- masked_scatter_'s mask
@pytest.mark.parametrize("dt", ["int64", "int32", "float32"])
def test_masked_scatter_mask_dtype_message(dt):
    _same_error(lambda T: T.ones(3).masked_scatter(T.ones(3, dtype=getattr(T, dt)), T.ones(3)))


def test_masked_scatter_uint8_mask_warns_then_refuses():
    msgs = []
    for T in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="dtype Byte$"):
                T.ones(3).masked_scatter_(T.ones(3, dtype=T.uint8), T.ones(3))
        msgs.append([str(x.message).split(" (Triggered")[0] for x in w])
    assert msgs[1] == msgs[0] and len(msgs[0]) == 1


# ------------------------------------------------------------------- tril/triu_indices
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(-1, 3), (3, -2), (-1, -1)])
def test_tri_indices_negative_sizes(name, args):
    _same_error(lambda T: getattr(T, name)(*args))


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("dt", ["float32", "bool", "int8", "int16", "uint8", "complex64"])
def test_tri_indices_refuse_dtypes(name, dt):
    _same_error(lambda T: getattr(T, name)(3, 2, dtype=getattr(T, dt)))


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_tri_indices_int_dtypes(name, dt):
    _same_value(lambda T: getattr(T, name)(3, 4, -1, dtype=getattr(T, dt)))


# ------------------------------------------------------------------- reductions' messages
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0)])
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_aminmax_empty_messages(shape, dim):
    def call(T):
        x = T.ones(*shape)
        return T.aminmax(x) if dim is None else T.aminmax(x, dim=dim)

    (rt, et), (re_, ee) = _both(call)
    if et is None:
        assert ee is None and tuple(re_.min.shape) == tuple(rt.min.shape)
    else:
        _same_error(call)


@pytest.mark.parametrize("name", ["var_mean", "std_mean", "var", "std"])
def test_var_family_integer_message(name):
    _same_error(lambda T: getattr(T, name)(T.tensor([1, 2])))


# ------------------------------------------------------------------- new_tensor, flip, splits
def test_new_tensor_from_tensor_takes_self_dtype():
    for T in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert T.ones(2).new_tensor(T.tensor([1, 2])).dtype == T.float32
            assert T.ones(2).double().new_tensor(T.tensor([1.5])).dtype == T.float64
            assert T.tensor([1]).new_tensor(T.tensor([1.5])).tolist() == [1]
            assert T.ones(2).new_tensor(T.tensor([1]), dtype=T.int32).dtype == T.int32


@pytest.mark.parametrize("dims", [(0,), (-1,), ()])
def test_flip_0d(dims):
    _same_value(lambda T: T.tensor(1.5).flip(dims))
    _same_value(lambda T: T.flip(T.tensor(2), dims))


@pytest.mark.parametrize("dims", [(0, 0), (1,)])
def test_flip_0d_errors(dims):
    _same_error(lambda T: T.tensor(1.5).flip(dims))


@pytest.mark.parametrize(
    "idx",
    [
        lambda T: T.tensor([1.0]),
        lambda T: T.tensor([True]),
        lambda T: T.tensor(2.0),
        lambda T: T.tensor([[1]]),
        lambda T: T.tensor([1], dtype=T.int32),
    ],
)
def test_tensor_split_index_tensor_checks(idx):
    _same_error(lambda T: T.tensor_split(T.arange(5), idx(T)))


def test_tensor_split_0d():
    _same_error(lambda T: T.tensor_split(T.tensor(1), [1]))
    _same_error(lambda T: T.tensor_split(T.tensor(1), 1))
    t = torch.tensor_split(torch.arange(7), torch.tensor([1, 5]))
    e = ember.tensor_split(ember.arange(7), ember.tensor([1, 5]))
    assert [x.tolist() for x in e] == [x.tolist() for x in t]


@pytest.mark.parametrize("idx", [[], [0, 0], [1], [-1], [[0]]])
def test_index_select_0d_errors(idx):
    _same_error(lambda T: T.index_select(T.tensor(5.0), 0, T.tensor(idx, dtype=T.long)))


def test_index_select_0d_value():
    _same_value(lambda T: T.tensor(5.0).index_select(-1, T.tensor([0])))
    _same_value(lambda T: T.tensor(5.0).index_select(0, T.tensor(0)))


# ------------------------------------------------------------------- nextafter's gradient
def test_nextafter_gradient():
    g = np.array([0.5, 2.0, -1.5, 4.0, 3.0])
    grads = []
    for T in (torch, ember):
        x = T.tensor([1.0, 2.0, -3.0, 0.0, float("nan")], requires_grad=True)
        o = T.tensor([3.0, 0.0, -3.0, -0.0, float("nan")], requires_grad=True)
        y = T.nextafter(x, o)
        assert y.grad_fn.name() == "NextafterBackward0"
        grads.append([a.numpy() for a in T.autograd.grad(y, (x, o), T.tensor(g).float())])
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_nextafter_inplace_gradient():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    y.nextafter_(ember.tensor([3.0, 0.0]))
    assert y.grad_fn.name() == "NextafterBackward0"
    y.backward(ember.tensor([0.5, 3.0]))
    assert x.grad.tolist() == [0.5, 3.0]


# ------------------------------------------------------------------- addmm family, int scalars
_MM = {
    "addmm": lambda T, dt, **k: T.addmm(
        T.ones(2, 2, dtype=dt), T.ones(2, 2, dtype=dt), T.ones(2, 2, dtype=dt), **k
    ),
    "addmv": lambda T, dt, **k: T.addmv(
        T.ones(2, dtype=dt), T.ones(2, 2, dtype=dt), T.ones(2, dtype=dt), **k
    ),
    "baddbmm": lambda T, dt, **k: T.baddbmm(
        T.ones(2, 2, dtype=dt), T.ones(3, 2, 2, dtype=dt), T.ones(3, 2, 2, dtype=dt), **k
    ),
    "addbmm": lambda T, dt, **k: T.addbmm(
        T.ones(2, 2, dtype=dt), T.ones(3, 2, 2, dtype=dt), T.ones(3, 2, 2, dtype=dt), **k
    ),
    "addmm_": lambda T, dt, **k: T.ones(2, 2, dtype=dt).addmm_(
        T.ones(2, 2, dtype=dt), T.ones(2, 2, dtype=dt), **k
    ),
}


@pytest.mark.parametrize("name", list(_MM))
@pytest.mark.parametrize("dt", ["int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize(
    "alpha, beta", [(0.5, 1), (1, 0.5), (1.7, 2.6), (-1, 1), (1, -1), (-1.5, 2), (2, 3)]
)
def test_addmm_family_integer_scalars(name, dt, alpha, beta):
    def call(T):
        return _MM[name](T, getattr(T, dt), alpha=alpha, beta=beta)

    (_, et), _ = _both(call)
    if et is None:
        _same_value(call)
    else:
        _same_error(call)


@pytest.mark.parametrize("alpha, beta", [(300, 1), (1, -0.2), (255.5, 1), (1e30, 1)])
def test_addmm_integer_scalar_overflow(alpha, beta):
    _same_error(lambda T: _MM["addmm"](T, T.uint8, alpha=alpha, beta=beta))


def test_addmm_float_scalars_unchanged():
    _same_value(lambda T: _MM["addmm"](T, T.float32, alpha=0.5, beta=-1.5))


# ------------------------------------------------------------------- out=
@pytest.mark.parametrize(
    "call, cls",
    [
        (lambda T, x: T.sort(x, out=(T.empty(0), T.empty(0, dtype=T.long))), "sort"),
        (lambda T, x: T.max(x, 1, out=(T.empty(0), T.empty(0, dtype=T.long))), "max"),
        (lambda T, x: T.aminmax(x, dim=0, out=(T.empty(0), T.empty(0))), "aminmax"),
        (lambda T, x: T.cummax(x, 0, out=(T.empty(0), T.empty(0, dtype=T.long))), "cummax"),
        (lambda T, x: T.frexp(x, out=(T.empty(0), T.empty(0, dtype=T.int32))), "frexp"),
        (lambda T, x: T.kthvalue(x, 1, out=(T.empty(0), T.empty(0, dtype=T.long))), "kthvalue"),
    ],
)
def test_out_returns_named_tuple(call, cls):
    x = [[1.5, -2.0, 0.0], [3.25, 0.5, -7.0]]
    t = call(torch, torch.tensor(x))
    e = call(ember, ember.tensor(x))
    assert type(t).__name__ == cls + "_out" and type(e).__name__ in (cls, cls + "_out")
    for f in e._fields:  # torch's structseq has the same attribute names
        assert getattr(e, f).tolist() == getattr(t, f).tolist()
    for a, b in zip(t, e):
        assert a.tolist() == b.tolist()
    e_out = (ember.empty(0), ember.empty(0, dtype=ember.long))
    r = ember.sort(ember.tensor(x), out=e_out)
    assert r.values is e_out[0] and r.indices is e_out[1]


@pytest.mark.parametrize("m", ["float32", "float64", "int32", "int64", "int16"])
@pytest.mark.parametrize("e", ["float32", "float64", "int32", "int64"])
def test_frexp_out_dtypes(m, e):
    def call(T):
        outs = (T.empty(0, dtype=getattr(T, m)), T.empty(0, dtype=getattr(T, e)))
        return T.frexp(T.tensor([1.5, -2.0]), out=outs)[0]

    (_, et), _ = _both(call)
    _same_value(call) if et is None else _same_error(call)


@pytest.mark.parametrize("dt", ["float32", "int64", "uint8", "float64"])
def test_signbit_float_power_out_dtypes(dt):
    _same_error(lambda T: T.signbit(T.tensor([1.5, -2.0]), out=T.empty(0, dtype=getattr(T, dt))))
    if dt != "float64":
        _same_error(
            lambda T: T.float_power(T.tensor([1.5]), 2, out=T.empty(0, dtype=getattr(T, dt)))
        )
    _same_value(lambda T: T.float_power(T.tensor([1.5]), 2, out=T.empty(0, dtype=T.float64)))


@pytest.mark.parametrize("dt", ["float32", "int32", "int64"])
@pytest.mark.parametrize("out_int32", [False, True])
def test_search_out_dtypes(dt, out_int32):
    for call in (
        lambda T: T.searchsorted(
            T.tensor([0.0, 1.0]),
            T.tensor([0.5, 2.0]),
            out_int32=out_int32,
            out=T.empty(0, dtype=getattr(T, dt)),
        ),
        lambda T: T.bucketize(
            T.tensor([0.5, 2.0]),
            T.tensor([0.0, 1.0]),
            out_int32=out_int32,
            out=T.empty(0, dtype=getattr(T, dt)),
        ),
    ):
        (_, et), _ = _both(call)
        _same_value(call) if et is None else _same_error(call)


@pytest.mark.parametrize("name", ["amax", "amin", "logcumsumexp"])
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "complex64"])
def test_no_cast_out_dtypes(name, dt):
    def call(T):
        return getattr(T, name)(T.tensor([1.5, -2.0]), 0, out=T.empty(0, dtype=getattr(T, dt)))

    (_, et), _ = _both(call)
    _same_value(call) if et is None else _same_error(call)


@pytest.mark.parametrize("dt", ["float32", "float64", "int64"])
def test_diff_and_renorm_out(dt):
    x = [[1.5, -2.0, 4.0], [0.5, 3.0, -1.0]]

    def d(T):
        return T.diff(T.tensor(x), n=2, prepend=T.tensor(x), out=T.empty(0, dtype=getattr(T, dt)))

    def r(T):
        return T.renorm(T.tensor(x), 2, 0, 1.0, out=T.empty(0, dtype=getattr(T, dt)))

    for call in (d, r):
        (_, et), _ = _both(call)
        _same_value(call) if et is None else _same_error(call)
    out = ember.empty(0)
    assert ember.diff(ember.tensor(x), out=out) is out


def test_diff_out_refuses_grad():
    _same_error(lambda T: T.diff(T.ones(3, requires_grad=True), out=T.empty(0)))


def test_nextafter_gradcheck():
    x = ember.tensor([1.0, -2.5, 0.3], dtype=ember.float64, requires_grad=True)
    o = ember.tensor([3.0, -4.0, 0.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.nextafter, (x, o))


@pytest.mark.parametrize("left", [[1.0, 2.0], np.ones(2), 2])
def test_rmatmul_takes_only_tensors(left):
    _same_error(lambda T: left @ T.tensor([3.0, 4.0]))


def test_rmatmul_tensor():
    _same_value(lambda T: T.Tensor.__rmatmul__(T.tensor([3.0, 4.0]), T.tensor([[1.0, 2.0]])))


# ------------------------------------------------------------------- special values at inf
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_spherical_bessel_j0_at_infinity(dt):
    _same_value(
        lambda T: T.special.spherical_bessel_j0(
            T.tensor([float("inf"), -float("inf"), 1e30, 0.0, 0.5], dtype=getattr(T, dt))
        )
    )


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_polygamma_at_infinity(n, dt):
    _same_value(
        lambda T: T.polygamma(
            n, T.tensor([float("inf"), -float("inf"), 1e30, 0.0, -0.0, 3.5], dtype=getattr(T, dt))
        )
    )


# ------------------------------------------------------------------- detach_, renorm's message
_VIEWS = {
    "slice": lambda T: T.ones(3)[0:2],
    "view": lambda T: T.ones(3).view(3),
    "t": lambda T: T.ones(2, 3).t(),
    "select": lambda T: T.ones(2, 3)[0],
    "expand": lambda T: T.ones(1).expand(3),
    "grad_slice": lambda T: (T.ones(3, requires_grad=True) * 2)[1:],
}
_NOT_VIEWS = {
    "mul": lambda T: T.ones(3, requires_grad=True) * 2,
    "detached_view": lambda T: T.ones(3)[1:].detach(),
    "clone": lambda T: T.ones(3)[1:].clone(),
    "leaf": lambda T: T.ones(3, requires_grad=True),
}


@pytest.mark.parametrize("name", list(_VIEWS))
def test_detach__refuses_every_view(name):
    _same_error(lambda T: _VIEWS[name](T).detach_())


@pytest.mark.parametrize("name", list(_NOT_VIEWS))
def test_detach__non_views(name):
    for T in (torch, ember):
        r = _NOT_VIEWS[name](T).detach_()
        assert r.requires_grad is False and r.grad_fn is None


@pytest.mark.parametrize("m", [-1.0, -1, -0.5, -1e-7])
def test_renorm_negative_maxnorm_message(m):
    _same_error(lambda T: T.renorm(T.ones(2, 2), 2, 0, m))


@pytest.mark.parametrize("kw", [{}, {"dim": 0}, {"dim": -1}, {"return_counts": True}])
@pytest.mark.parametrize("data", [[[1j, 1j]], [1j, 2], 1j], ids=str)
def test_unique_consecutive_refuses_complex(kw, data):
    _same_error(lambda T: T.unique_consecutive(T.tensor(data), **kw))
    _same_error(lambda T: T.tensor(data, dtype=T.cdouble).unique_consecutive(**kw))


@pytest.mark.parametrize("dt", ["float32", "long", "bool"])
@pytest.mark.parametrize("value", [lambda T: 1j, lambda T: T.tensor(1j)])
def test_index_fill_refuses_complex_value(dt, value):
    _same_error(lambda T: T.ones(2, dtype=getattr(T, dt)).index_fill(0, T.tensor([0]), value(T)))
    _same_error(lambda T: T.ones(2, dtype=getattr(T, dt)).index_fill_(0, T.tensor([0]), value(T)))


def test_index_fill_complex_into_complex():
    _same_value(lambda T: T.ones(2, dtype=T.cfloat).index_fill(0, T.tensor([0]), 1j))
