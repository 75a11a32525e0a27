"""Wave 85: reductions, sorting and statistics against torch (argument fuzz findings).

var_mean/std_mean's unused output no longer poisons the other's gradient; dims are checked
before dtypes (as torch does); a 0-dim tensor's repeated dims; cummax's scalar dim message; an
empty input's nansum/nanmean into complex and its half histogram.
"""

import warnings

import ember
import numpy as np
import pytest
from harness import run_quietly

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    e, r = run_quietly(fn, lib)
    if e is not None:
        return ("E", type(e).__name__, str(e).split("\n")[0])
    rs = r if isinstance(r, tuple) else (r,)
    out = []
    for t in rs:
        v = t.detach()
        if v.dtype in (lib.float16, lib.bfloat16):
            v = v.to(lib.float32)
        out.append((str(t.dtype).split(".")[-1], tuple(t.shape), np.array(v.tolist())))
    return ("R", out)


def _same(fn):
    e, t = _outcome(ember, fn), _outcome(torch, fn)
    assert e[0] == t[0], (e, t)
    if e[0] == "E":
        assert e == t
        return
    assert len(e[1]) == len(t[1])
    for (ed, es, ev), (td, ts, tv) in zip(e[1], t[1]):
        assert (ed, es) == (td, ts)
        np.testing.assert_allclose(ev, tv, rtol=1e-6, atol=1e-6, equal_nan=True)


# ---------------------------------------------------------------- var_mean / std_mean grads
_VM_CASES = [
    ((3,), {"correction": 3}),
    ((3,), {"correction": 5}),
    ((1, 3), {"dim": 0}),
    ((2, 1, 3), {"dim": 1, "keepdim": True}),
    ((2, 3), {"dim": [0, 1], "correction": 6}),
    ((1,), {}),
    ((2, 3), {"dim": 1}),  # a plain call: unchanged
]


def _vm_grad(lib, fname, shape, kw, use):
    base = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float64).reshape(shape) ** 1.5
    x = lib.tensor(base, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v, m = getattr(lib, fname)(x, **kw)
    w = lib.tensor(np.linspace(0.5, 2.0, max(m.numel(), 1)).reshape(m.shape))
    if use == "mean":
        loss = (m * w).sum()
    elif use == "var":
        loss = (v * w).sum()
    else:
        loss = (v * w).sum() + (m * w * 3).sum()
    (g,) = lib.autograd.grad(loss, x)
    return np.array(g.tolist())


@pytest.mark.parametrize("fname", ["var_mean", "std_mean"])
@pytest.mark.parametrize("shape,kw", _VM_CASES)
@pytest.mark.parametrize("use", ["mean", "var", "both"])
def test_var_mean_one_output_grad(fname, shape, kw, use):
    e = _vm_grad(ember, fname, shape, kw, use)
    t = _vm_grad(torch, fname, shape, kw, use)
    np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("fname", ["var_mean", "std_mean"])
def test_var_mean_mean_only_double_backward(fname):
    x = ember.tensor([[1.0, 2.0, 4.0]], dtype=ember.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, m = getattr(ember, fname)(x, dim=0)
    (g,) = ember.autograd.grad((m * ember.tensor([1.0, 2.0, 3.0])).sum(), x, create_graph=True)
    assert np.isfinite(np.array(g.tolist())).all()
    tx = torch.tensor([[1.0, 2.0, 4.0]], dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, tm = getattr(torch, fname)(tx, dim=0)
    (tg,) = torch.autograd.grad((tm * torch.tensor([1.0, 2.0, 3.0])).sum(), tx)
    np.testing.assert_allclose(np.array(g.tolist()), tg.numpy())


@pytest.mark.parametrize("fname", ["var_mean", "std_mean"])
def test_var_mean_gradcheck(fname):
    rng = np.random.default_rng(85)
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)

    def f(a):
        v, m = getattr(ember, fname)(a, dim=1, correction=2)
        return v * 2 + m

    def f_mean(a):
        return getattr(ember, fname)(a, dim=0)[1]

    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradcheck(f_mean, (x,))


# ---------------------------------------------------------------- 0-dim repeated dims
@pytest.mark.parametrize(
    "fname", ["any", "all", "nansum", "nanmean", "logsumexp", "var_mean", "std", "amax"]
)
@pytest.mark.parametrize("dims", [[0, 0], [0, -1], (-1, -1)])
def test_scalar_repeated_dims(fname, dims):
    _same(lambda L: getattr(L, fname)(L.tensor(1.5), dims))


def test_scalar_single_dim_list_still_reduces():
    _same(lambda L: L.nansum(L.tensor(1.5), [0], keepdim=True))
    _same(lambda L: L.any(L.tensor(2), (-1,)))


# ---------------------------------------------------------------- dims before dtypes
_ORDER = [
    lambda L: L.nanmedian(L.ones(2, 3, dtype=L.bool), 5),
    lambda L: L.nanmedian(L.ones(2, 0, dtype=L.bool), 1),
    lambda L: L.nanmedian(L.ones(2, 0, dtype=L.complex64), -1, keepdim=True),
    lambda L: L.nanmedian(L.ones(2, 3, dtype=L.complex64), 1),
    lambda L: L.sort(L.ones(2, 3, dtype=L.complex64), 5),
    lambda L: L.sort(L.ones(2, 3, dtype=L.complex64), -3, descending=True),
    lambda L: L.argsort(L.ones(2, 3, dtype=L.complex64), 5, True),
    lambda L: L.sort(L.ones(2, 3, dtype=L.complex64), 1),
    lambda L: L.max(L.ones(2, 3, dtype=L.complex64), 5),
    lambda L: L.min(L.ones(2, 3, dtype=L.complex64), -3, keepdim=True),
    lambda L: L.max(L.ones(2, 0, dtype=L.complex64), 1),
    lambda L: L.min(L.ones(0, dtype=L.complex64), 0),
    lambda L: L.max(L.tensor(1j), 0),
    lambda L: L.max(L.ones(2, 3, dtype=L.complex64), 1),
    lambda L: L.argmax(L.ones(2, 3, dtype=L.complex64), 1),
    lambda L: L.nansum(L.ones(2, 3, dtype=L.complex64), 5),
    lambda L: L.nansum(L.ones(2, 3, dtype=L.complex64), [1, 1]),
    lambda L: L.nanmean(L.ones(2, 3, dtype=L.complex64), -3),
    lambda L: L.nanmean(L.ones(2, 3, dtype=L.complex64), 1),
    lambda L: L.logcumsumexp(L.ones(2, 3, dtype=L.bool), 5),
    lambda L: L.logcumsumexp(L.ones(2, 3, dtype=L.int64), -3),
    lambda L: L.logcumsumexp(L.ones(2, 3, dtype=L.int64), 1),
]


@pytest.mark.parametrize("k", range(len(_ORDER)))
def test_dim_checked_before_dtype(k):
    _same(_ORDER[k])


@pytest.mark.parametrize("fname", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [1, -2, 3, 0, -1])
def test_cum_ext_scalar_dim(fname, dim):
    _same(lambda L: getattr(L, fname)(L.tensor(2.5), dim))


# ---------------------------------------------------------------- empty inputs
@pytest.mark.parametrize("fname", ["nansum", "nanmean"])
@pytest.mark.parametrize("shape,dim", [((2, 0), 1), ((0,), None), ((0, 3), 0)])
def test_empty_nan_reduction_into_complex(fname, shape, dim):
    kw = {} if dim is None else {"dim": dim}
    _same(lambda L: getattr(L, fname)(L.ones(shape), dtype=L.complex64, **kw))
    _same(lambda L: getattr(L, fname)(L.ones(2, 3), dtype=L.complex64, **kw))


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "int32", "bool", "float32"])
@pytest.mark.parametrize("shape", [(0,), (0, 2)])
@pytest.mark.parametrize("density", [False, True])
def test_empty_histogram_dtypes(dt, shape, density):
    _same(lambda L: L.histogram(L.ones(shape, dtype=getattr(L, dt)), 3, density=density))
    _same(lambda L: L.histogram(L.ones(3, dtype=getattr(L, dt)), 3, density=density))


# ---------------------------------------------------------------- bfloat16 NaN, empty amax dims
@pytest.mark.parametrize("fname", ["nansum", "nanmean"])
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": ()}, {"dim": 0, "keepdim": True}])
@pytest.mark.parametrize("dt", [None, "float32", "float64"])
def test_nan_reductions_bfloat16_nan(fname, kw, dt):
    extra = {} if dt is None else {"dtype": dt}

    def f(L):
        x = L.tensor([[1.0, 2.0, float("nan")], [float("nan"), 0.5, 4.0]]).to(L.bfloat16)
        k = dict(kw, **{n: getattr(L, v) for n, v in extra.items()})
        return getattr(L, fname)(x, **k)

    _same(f)


@pytest.mark.parametrize("fname", ["amax", "amin"])
@pytest.mark.parametrize("dims", [(1, -1), [-1, -1], (0, 1, 1), (5, 1), (1, 5), (0, 0)])
def test_aext_empty_dim_before_repeated(fname, dims):
    _same(lambda L: getattr(L, fname)(L.ones(3, 0), dims))
    _same(lambda L: getattr(L, fname)(L.ones(3, 2), dims))
