"""nn.functional: activations, linear, dropout, embedding, distances vs torch; gradcheck."""

import math
import re

import ember
import ember.nn.functional as EF
import numpy as np
import pytest
from harness import (
    A,
    Case,
    assert_same,
    needs_torch,
    raises_like_torch,
    run_case,
    run_gradcheck,
)

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = TF = None


def _F(m):
    return EF if m is ember else TF


def f(name, *args, **kw):
    return lambda m, *xs: getattr(_F(m), name)(*xs, *args, **kw)


X = A(3, 5)
XB = A(3, 5, low=-6, high=6)
CASES = [
    Case("threshold", f("threshold", 0.3, -2.0), [X]),
    Case("relu", f("relu"), [X]),
    Case("hardtanh", f("hardtanh", -0.5, 0.7), [X]),
    Case("relu6", f("relu6"), [A(3, 5, low=-3, high=9)]),
    Case("hardsigmoid", f("hardsigmoid"), [XB]),
    Case("hardswish", f("hardswish"), [XB]),
    Case("elu", f("elu"), [X]),
    Case("elu_alpha", f("elu", 0.7), [X]),
    Case("selu", f("selu"), [X]),
    Case("celu", f("celu", 1.3), [X]),
    Case("leaky_relu", f("leaky_relu", 0.2), [X]),
    Case("prelu_1", lambda m, x, w: _F(m).prelu(x, w), [A(2, 3, 4), A(1)]),
    Case("prelu_c", lambda m, x, w: _F(m).prelu(x, w), [A(2, 3, 4), A(3)]),
    Case("rrelu_eval", f("rrelu", 0.1, 0.3), [X]),
    Case("glu", f("glu"), [A(3, 6)]),
    Case("glu_dim0", f("glu", 0), [A(4, 3)]),
    Case("gelu", f("gelu"), [XB]),
    Case("gelu_tanh", f("gelu", approximate="tanh"), [XB]),
    Case("logsigmoid", f("logsigmoid"), [A(3, 5, low=-30, high=30)]),
    Case("hardshrink", f("hardshrink", 0.4), [X]),
    Case("softshrink", f("softshrink", 0.4), [X]),
    Case("tanhshrink", f("tanhshrink"), [X]),
    Case("softsign", f("softsign"), [X]),
    Case("softplus", f("softplus"), [A(3, 5, low=-30, high=30)]),
    Case("softplus_beta", f("softplus", 2.0, 5.0), [A(3, 5, low=-5, high=5)]),
    Case("softmin", f("softmin", 1), [X]),
    Case("softmax", f("softmax", 0), [X]),
    Case("softmax_dtype", f("softmax", 1, dtype=None), [X]),
    Case("log_softmax", f("log_softmax", 1), [X]),
    Case("tanh", f("tanh"), [X]),
    Case("sigmoid", f("sigmoid"), [X]),
    Case("silu", f("silu"), [X]),
    Case("mish", f("mish"), [XB]),
    Case("linear", lambda m, x, w, b: _F(m).linear(x, w, b), [A(4, 3), A(5, 3), A(5)]),
    Case("linear_nobias", lambda m, x, w: _F(m).linear(x, w), [A(2, 4, 3), A(5, 3)]),
    Case("linear_3d_bias", lambda m, x, w, b: _F(m).linear(x, w, b), [A(2, 4, 3), A(5, 3), A(5)]),
    Case("linear_1d", lambda m, x, w, b: _F(m).linear(x, w, b), [A(3), A(5, 3), A(5)]),
    Case(
        "bilinear",
        lambda m, x1, x2, w, b: _F(m).bilinear(x1, x2, w, b),
        [A(4, 3), A(4, 2), A(5, 3, 2), A(5)],
    ),
    Case(
        "bilinear_3d",
        lambda m, x1, x2, w: _F(m).bilinear(x1, x2, w),
        [A(2, 4, 3), A(2, 4, 2), A(5, 3, 2)],
    ),
    Case("pairwise_distance", f("pairwise_distance"), [A(4, 5), A(4, 5, seed=1)]),
    Case(
        "pairwise_distance_p1",
        f("pairwise_distance", 1.0, keepdim=True),
        [A(4, 5), A(4, 5, seed=1)],
    ),
    Case("cosine_similarity", f("cosine_similarity"), [A(4, 5), A(4, 5, seed=1)]),
    Case("cosine_similarity_bc", f("cosine_similarity", -1), [A(4, 5), A(1, 5, seed=1)]),
    Case("pdist", f("pdist"), [A(5, 3)]),
    Case("pdist_p3", f("pdist", 3.0), [A(5, 3)]),
    Case("normalize", f("normalize"), [A(4, 5)]),
    Case("normalize_p1", f("normalize", 1.0, 0), [A(4, 5)]),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity_float64(case):
    import copy
    import dataclasses

    ins = [copy.copy(s) for s in case.inputs]
    for s in ins:
        if isinstance(s, A):
            s.dtype = "float64"
    run_case(dataclasses.replace(case, inputs=ins, atol=1e-9, rtol=1e-7))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case, gradgrad=case.name not in ("relu6", "hardtanh", "threshold", "relu"))


# ---------------------------------------------------------------------- in-place variants
INPLACE = [
    ("relu", (), {}),
    ("relu_", (), {}),
    ("threshold_", (0.1, 2.0), {}),
    ("hardtanh_", (-0.3, 0.4), {}),
    ("elu_", (0.8,), {}),
    ("selu_", (), {}),
    ("celu_", (1.5,), {}),
    ("leaky_relu_", (0.3,), {}),
    ("rrelu_", (0.2, 0.2), {}),
    ("elu", (), {"inplace": True}),
    ("hardswish", (), {"inplace": True}),
    ("hardsigmoid", (), {"inplace": True}),
    ("silu", (), {"inplace": True}),
    ("mish", (), {"inplace": True}),
    ("relu6", (), {"inplace": True}),
    ("leaky_relu", (0.1,), {"inplace": True}),
    ("selu", (), {"inplace": True}),
    ("celu", (0.5,), {"inplace": True}),
    ("threshold", (0.0, -1.0), {"inplace": True}),
]


@needs_torch
@pytest.mark.parametrize("name,args,kw", INPLACE, ids=[i[0] + str(i[2]) for i in INPLACE])
def test_inplace(name, args, kw):
    a = np.random.default_rng(0).uniform(-4, 4, (3, 5)).astype("float32")
    g = np.random.default_rng(1).uniform(0.5, 1.5, (3, 5)).astype("float32")
    res = []
    for m in (ember, torch):
        leaf = m.tensor(a, requires_grad=True)
        x = leaf * 1.0
        y = getattr(_F(m), name)(x, *args, **kw)
        if name.endswith("_") or kw.get("inplace"):
            assert y is x
        (y * m.tensor(g)).sum().backward()
        res.append(
            (y.detach().numpy().copy() if m is torch else y.detach().numpy(), leaf.grad.numpy())
        )
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)


def test_inplace_leaf_error():
    raises_like_torch(
        lambda m: _F(m).elu_(m.ones(3, requires_grad=True)),
        RuntimeError,
        "a leaf Variable that requires grad is being used in an in-place operation.",
    )


@needs_torch
def test_softplus_stable():
    x = ember.tensor([-200.0, -30.0, 0.0, 30.0, 200.0, 1e4], requires_grad=True)
    y = EF.softplus(x)
    y.sum().backward()
    t = torch.tensor(x.detach().numpy(), requires_grad=True)
    TF.softplus(t).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), TF.softplus(t).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)
    assert np.isfinite(x.grad.numpy()).all()


def test_log_softmax_stable():
    x = ember.tensor([[1000.0, 0.0, -1000.0]])
    assert np.isfinite(EF.log_softmax(x, 1).numpy()).all()


@needs_torch
def test_implicit_softmax_dim_warns():
    x = np.random.default_rng(0).random((2, 3)).astype("float32")
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        e = EF.softmax(ember.tensor(x))
    with pytest.warns(UserWarning):
        t = TF.softmax(torch.tensor(x))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


def test_rrelu_training_slopes():
    ember.manual_seed(0)
    x = -ember.ones(10000)
    y = EF.rrelu(x, 0.1, 0.3, training=True)
    s = -y.numpy()
    assert s.min() >= 0.1 and s.max() <= 0.3
    assert abs(s.mean() - 0.2) < 0.005
    assert EF.rrelu(ember.ones(5), training=True).numpy().tolist() == [1.0] * 5


def test_gumbel_softmax():
    ember.manual_seed(0)
    logits = ember.tensor(np.log(np.array([[0.1, 0.6, 0.3]] * 4000, "float32")), requires_grad=True)
    y = EF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.detach().numpy().sum(1), 1.0, rtol=1e-5)
    h = EF.gumbel_softmax(logits, hard=True)
    hv = h.detach().numpy()
    assert set(np.unique(hv)) <= {0.0, 1.0} and (hv.sum(1) == 1).all()
    freq = hv.mean(0)
    np.testing.assert_allclose(freq, [0.1, 0.6, 0.3], atol=0.03)
    h.sum().backward()  # straight-through: the gradient is the soft sample's
    assert logits.grad is not None and logits.grad.shape == logits.shape


# ---------------------------------------------------------------------- dropout
def test_dropout_statistics():
    ember.manual_seed(0)
    x = ember.ones(200, 100, requires_grad=True)
    y = EF.dropout(x, 0.3)
    v = y.detach().numpy()
    assert np.isclose(v, 0).sum() + np.isclose(v, 1 / 0.7).sum() == v.size
    assert abs((v == 0).mean() - 0.3) < 0.01
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), v)  # gradient follows the mask


def test_dropout_eval_and_edges():
    x = ember.randn(4, 5)
    assert EF.dropout(x, 0.5, training=False) is x
    assert EF.dropout(x, 0.0) is x
    assert (EF.dropout(x, 1.0).numpy() == 0).all()
    assert EF.alpha_dropout(x, 0.5) is x  # training defaults to False
    assert EF.dropout(x.double(), 0.5).dtype == ember.float64


def test_dropout_rng_reproducible():
    ember.manual_seed(3)
    a = EF.dropout(ember.ones(50), 0.5).numpy()
    ember.manual_seed(3)
    b = EF.dropout(ember.ones(50), 0.5).numpy()
    np.testing.assert_array_equal(a, b)


def test_dropout_inplace():
    ember.manual_seed(0)
    x = ember.ones(100)
    y = EF.dropout(x, 0.5, inplace=True)
    assert y is x and (x.numpy() == 0).any()


@pytest.mark.parametrize(
    "fn,shape",
    [
        ("dropout1d", (8, 50, 7)),
        ("dropout2d", (8, 50, 3, 4)),
        ("dropout3d", (8, 50, 2, 3, 2)),
        ("dropout1d", (50, 7)),
    ],
)
def test_feature_dropout_channels(fn, shape):
    ember.manual_seed(0)
    y = getattr(EF, fn)(ember.ones(*shape), 0.4).numpy()
    k = len(shape) - (
        len(shape) - 2
        if len(shape) in (3, 4, 5) and fn != "dropout1d" or len(shape) == 3
        else len(shape) - 1
    )
    flat = y.reshape(int(np.prod(shape[:k])), -1)
    # every channel is all zero or all 1/(1-p)
    assert ((flat == 0).all(1) | np.isclose(flat, 1 / 0.6).all(1)).all()
    assert 0.2 < (flat == 0).all(1).mean() < 0.6


def test_alpha_dropout_statistics():
    ember.manual_seed(0)
    x = ember.randn(400, 500)
    for fn in (EF.alpha_dropout, EF.feature_alpha_dropout):
        y = fn(x, 0.2, training=True).numpy()
        assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    y = EF.alpha_dropout(x, 0.2, training=True).numpy()
    # dropped units all take one value: a * (-alpha) + b
    a = 1 / math.sqrt((1.7580993408473766**2 * 0.2 + 1) * 0.8)
    sat = -1.7580993408473766 * a + 1.7580993408473766 * a * 0.2
    assert abs(np.isclose(y, sat, atol=1e-6).mean() - 0.2) < 0.01


def test_dropout_errors():
    raises_like_torch(
        lambda m: m.nn.functional.dropout(m.ones(3), 1.5),
        ValueError,
        "dropout probability has to be between 0 and 1, but got 1.5",
    )
    raises_like_torch(
        lambda m: m.nn.functional.alpha_dropout(m.ones(3), -0.1),
        ValueError,
        "dropout probability has to be between 0 and 1, but got -0.1",
    )
    raises_like_torch(
        lambda m: m.nn.functional.dropout1d(m.ones(2, 3, 4, 5)),
        RuntimeError,
        "dropout1d: Expected 2D or 3D input, but received a 4D input.",
    )
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        EF.dropout2d(ember.ones(2, 3))


# ---------------------------------------------------------------------- embedding
def _emb_pair(shape=(6, 4), seed=0):
    w = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    return (ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True))


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"padding_idx": 2},
        {"padding_idx": -1},
        {"scale_grad_by_freq": True},
        {"padding_idx": 0, "scale_grad_by_freq": True},
    ],
)
@needs_torch
def test_embedding(kw):
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    we, wt = _emb_pair()
    ye = EF.embedding(ember.tensor(idx), we, **kw)
    yt = TF.embedding(torch.tensor(idx), wt, **kw)
    g = np.random.default_rng(2).uniform(0.5, 1.5, (2, 3, 4)).astype("float32")
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy())
    np.testing.assert_allclose(we.grad.numpy(), wt.grad.numpy(), rtol=1e-6)


@needs_torch
def test_embedding_max_norm():
    idx = np.array([0, 3, 3, 5])
    w = np.random.default_rng(0).standard_normal((6, 4)).astype("float32") * 3
    we, wt = ember.tensor(w.copy()), torch.tensor(w.copy())
    ye = EF.embedding(ember.tensor(idx), we, max_norm=1.5)
    yt = TF.embedding(torch.tensor(idx), wt, max_norm=1.5)
    np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-5)
    np.testing.assert_allclose(we.numpy(), wt.numpy(), rtol=1e-5)  # rows renormed in place


def test_embedding_gradcheck():
    idx = ember.tensor([[0, 2], [2, 1]])
    w = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    # padding_idx and scale_grad_by_freq change the gradient on purpose (not the derivative):
    # those are checked against torch above
    fn = lambda w: EF.embedding(idx, w)
    assert ember.autograd.gradcheck(fn, (w,))
    assert ember.autograd.gradgradcheck(fn, (w,))


def test_embedding_errors():
    raises_like_torch(
        lambda m: m.nn.functional.embedding(m.tensor([1.0, 2.0]), m.randn(5, 3)),
        RuntimeError,
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
        "Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)",
    )
    raises_like_torch(
        lambda m: m.nn.functional.embedding(m.tensor([1, 7]), m.randn(5, 3)),
        IndexError,
        "index out of range in self",
    )
    raises_like_torch(
        lambda m: m.nn.functional.embedding(m.tensor([1]), m.randn(5, 3), padding_idx=7),
        AssertionError,
        "Padding_idx must be within num_embeddings",
    )


BAGS = [
    ("sum_2d", np.array([[0, 2, 5], [2, 2, 1]]), None, {"mode": "sum"}),
    ("mean_2d", np.array([[0, 2, 5], [2, 2, 1]]), None, {"mode": "mean"}),
    ("max_2d", np.array([[0, 2, 5], [3, 4, 1]]), None, {"mode": "max"}),
    ("sum_off", np.array([0, 2, 5, 2, 2, 1, 4]), [0, 3, 3, 5], {"mode": "sum"}),
    ("mean_off", np.array([0, 2, 5, 2, 2, 1, 4]), [0, 3, 3, 5], {"mode": "mean"}),
    ("max_off", np.array([0, 2, 5, 3, 4, 1]), [0, 2, 2, 4], {"mode": "max"}),
    (
        "last_off",
        np.array([0, 2, 5, 2, 2, 1, 4]),
        [0, 3, 5, 7],
        {"mode": "sum", "include_last_offset": True},
    ),
    ("mean_pad", np.array([0, 2, 5, 2, 2, 1, 4]), [0, 3, 5], {"mode": "mean", "padding_idx": 2}),
    ("sum_pad", np.array([[0, 2, 5], [2, 2, 1]]), None, {"mode": "sum", "padding_idx": 2}),
    ("psw", np.array([0, 2, 5, 2, 2, 1, 4]), [0, 3, 5], {"mode": "sum", "psw": True}),
]


@needs_torch
@pytest.mark.parametrize("name,idx,off,kw", BAGS, ids=[b[0] for b in BAGS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_bag(name, idx, off, kw, dtype):
    kw = dict(kw)
    psw = kw.pop("psw", False)
    w = np.random.default_rng(0).standard_normal((6, 4)).astype(dtype)
    pw = np.random.default_rng(1).uniform(0.5, 2, idx.shape).astype(dtype)
    outs = []
    for m in (ember, torch):
        wt = m.tensor(w, requires_grad=True)
        p = m.tensor(pw, requires_grad=True) if psw else None
        o = None if off is None else m.tensor(off)
        y = m.nn.functional.embedding_bag(m.tensor(idx), wt, o, per_sample_weights=p, **kw)
        g = np.random.default_rng(2).uniform(0.5, 1.5, tuple(y.shape)).astype(dtype)
        y.backward(m.tensor(g))
        outs.append([y.detach().numpy(), wt.grad.numpy()] + ([p.grad.numpy()] if psw else []))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_embedding_bag_errors():
    raises_like_torch(
        lambda m: m.nn.functional.embedding_bag(m.tensor([[1, 2]]), m.randn(5, 3), m.tensor([0])),
        ValueError,
        "if input is 2D, then offsets has to be None",
    )
    raises_like_torch(
        lambda m: m.nn.functional.embedding_bag(
            m.tensor([1, 2]), m.randn(5, 3), m.tensor([0]), mode="foo"
        ),
        ValueError,
        "mode has to be one of sum, mean or max",
    )
    raises_like_torch(
        lambda m: m.nn.functional.embedding_bag(m.tensor([1, 2]), m.randn(5, 3)),
        ValueError,
        "offsets has to be a 1D Tensor but got None",
    )
    raises_like_torch(
        lambda m: m.nn.functional.embedding_bag(
            m.tensor([1, 2]), m.randn(5, 3), m.tensor([0]), per_sample_weights=m.ones(2)
        ),
        NotImplementedError,
        "per_sample_weights is only supported for mode='sum' (got mode='mean')",
    )
    raises_like_torch(
        lambda m: m.nn.functional.embedding_bag(m.tensor([1, 2]), m.randn(5, 3), m.tensor([1])),
        RuntimeError,
        "offsets[0] has to be 0",
    )


@needs_torch
def test_one_hot():
    for idx, n in (([0, 3, 1], -1), ([[0, 2], [1, 1]], 5)):
        e = EF.one_hot(ember.tensor(idx), n)
        t = TF.one_hot(torch.tensor(idx), n)
        assert e.dtype == ember.int64
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    raises_like_torch(
        lambda m: m.nn.functional.one_hot(m.tensor([1.0])),
        RuntimeError,
        "one_hot is only applicable to index tensor of type LongTensor.",
    )
    raises_like_torch(
        lambda m: m.nn.functional.one_hot(m.tensor([1, -2])),
        RuntimeError,
        "Class values must be non-negative.",
    )
    raises_like_torch(
        lambda m: m.nn.functional.one_hot(m.tensor([1, 5]), 3),
        RuntimeError,
        "Class values must be smaller than num_classes.",
    )


# ---------------------------------------------------------------------- errors
ERRORS = [
    (
        lambda m: m.nn.functional.hardtanh(m.ones(2), 2.0, 1.0),
        ValueError,
        "min_val cannot be greater than max_val",
    ),
    (
        lambda m: m.nn.functional.glu(m.ones(3, 3)),
        RuntimeError,
        "Halving dimension must be even, but dimension 1 is size 3",
    ),
    (
        lambda m: m.nn.functional.glu(m.tensor(1.0)),
        RuntimeError,
        "glu does not support scalars because halving size must be even",
    ),
    (
        lambda m: m.nn.functional.gelu(m.ones(2), approximate="foo"),
        RuntimeError,
        "approximate argument must be either none or tanh.",
    ),
    (
        lambda m: m.nn.functional.softshrink(m.ones(2), -1.0),
        RuntimeError,
        "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -1",
    ),
    (
        lambda m: m.nn.functional.prelu(m.ones(2, 4, 5), m.ones(3)),
        RuntimeError,
        (
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 "
            "and channel size = 4."
        ),
    ),
    (
        lambda m: m.nn.functional.celu(m.ones(2), 0.0),
        RuntimeError,
        "ZeroDivisionError: alpha cannot be 0 for CELU",
    ),
    (
        lambda m: m.nn.functional.rrelu(m.ones(2), 0.5, 0.1),
        RuntimeError,
        "Lower bound should be less than or equal to the upper bound",
    ),
    (
        lambda m: m.nn.functional.linear(m.ones(3, 4), m.ones(5, 3)),
        RuntimeError,
        "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x5)",
    ),
    (
        lambda m: m.nn.functional.linear(m.ones(2, 3, 4), m.ones(5, 3)),
        RuntimeError,
        "mat1 and mat2 shapes cannot be multiplied (6x4 and 3x5)",
    ),
    (
        lambda m: m.nn.functional.bilinear(m.ones(3, 4), m.ones(3, 5), m.ones(2, 4, 6)),
        RuntimeError,
        "bilinear(): input2 size does not match weight size: got 5 but expected 6",
    ),
    (
        lambda m: m.nn.functional.pdist(m.ones(2, 3, 4)),
        RuntimeError,
        "pdist only supports 2D tensors, got: 3D",
    ),
    (
        lambda m: m.nn.functional.cosine_similarity(m.ones(3, 4), m.ones(2, 4)),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
    ),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, msg = ERRORS[i]
    raises_like_torch(fn, exc, msg)


def _f(name, *args, **kw):
    return lambda m, x: getattr(m.nn.functional, name)(x, *args, **kw)


# kernels torch has only for floating types: (call, torch's kernel name in the message)
FLOAT_ONLY = [
    (_f("gelu"), "GeluKernelImpl"),
    (_f("gelu", approximate="tanh"), "GeluKernelImpl"),
    (_f("softplus"), "softplus_cpu"),
    (_f("logsigmoid"), "log_sigmoid_cpu"),
    (_f("mish"), "mish_cpu"),
    (_f("mish", inplace=True), "mish_cpu"),
    (_f("hardsigmoid"), "hardsigmoid_cpu"),
    (_f("hardswish"), "hardswish_cpu"),
    (_f("silu"), "silu_cpu"),
    (_f("silu", inplace=True), "silu_cpu"),
    (_f("elu"), "elu_cpu"),
    (_f("elu_"), "elu_cpu"),
    (_f("celu"), "elu_cpu"),
    (_f("selu"), "elu_cpu"),
    (_f("glu", 0), "glu_cpu"),
    (_f("softshrink"), "softshrink_check"),
    (_f("softshrink", -1.0), "softshrink_check"),
    (_f("hardshrink"), "hardshrink_cpu"),
    (_f("leaky_relu"), "leaky_relu_cpu"),
    (_f("leaky_relu", inplace=True), "leaky_relu_cpu"),
    (_f("rrelu"), "leaky_relu_cpu"),
    (_f("rrelu", training=True), "rrelu_with_noise_out_cpu"),
    (lambda m, x: m.nn.functional.prelu(x, x[:1]), "prelu_cpu"),
]


@needs_torch
@pytest.mark.parametrize(
    "i,dtype",
    [
        (i, dtype)
        for i in range(len(FLOAT_ONLY))
        for dtype in ["int64", "uint8", "bool"]
        if not (dtype == "bool" and "glu" in FLOAT_ONLY[i][1])  # glu splits before it checks
    ],
)
def test_float_only_activations(i, dtype):
    fn, kernel = FLOAT_ONLY[i]
    names = {"int64": "Long", "uint8": "Byte", "bool": "Bool"}
    raises_like_torch(
        lambda m: fn(m, m.tensor([-2, -1, 0, 1, 2, 3]).to(getattr(m, dtype))),
        NotImplementedError,
        f"\"{kernel}\" not implemented for '{names[dtype]}'",
    )


@needs_torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_dropout_and_friends(dtype):
    name = {"int64": "Long", "int32": "Int", "bool": "Bool"}[dtype]

    def x(m):
        return m.tensor([[-2, -1, 0, 1, 2, 3]]).to(getattr(m, dtype))

    for fn in (
        lambda m: m.nn.functional.dropout(x(m), 0.5),
        lambda m: m.nn.functional.dropout(x(m), 0.5, inplace=True),
        lambda m: m.nn.functional.dropout1d(x(m), 0.5),
    ):
        raises_like_torch(
            fn, RuntimeError, f"result type Float can't be cast to the desired output type {name}"
        )
    raises_like_torch(
        lambda m: m.nn.functional.alpha_dropout(x(m), 0.5, training=True),
        RuntimeError,
        "result type Float can't be cast to the desired output type "
        + ("Long" if dtype == "bool" else name),
    )
    # p = 1 multiplies by zeros of the input's dtype; eval mode passes the input through
    for fn in (
        lambda m: m.nn.functional.dropout(x(m), 1.0),
        lambda m: m.nn.functional.alpha_dropout(x(m), 1.0, training=True),
        lambda m: m.nn.functional.dropout(x(m), 0.5, training=False),
    ):
        assert_same(fn(ember), fn(torch))
    raises_like_torch(
        lambda m: m.nn.functional.gumbel_softmax(x(m)),
        RuntimeError,
        "Exponential distribution is a continuous probability distribution. dtype must be a "
        f"floating point but you specified {name}",
    )
    raises_like_torch(
        lambda m: m.nn.functional.prelu(x(m), m.tensor([0.25])),
        RuntimeError,
        f"prelu: Type promoting not supported. Got {name} and Float",
    )
    if dtype == "bool":
        raises_like_torch(
            lambda m: m.nn.functional.hardtanh(x(m)), RuntimeError,
            "Bool inputs not supported for hardtanh",
        )  # fmt: skip
        raises_like_torch(
            lambda m: m.nn.functional.relu6(x(m)), RuntimeError,
            "Bool inputs not supported for hardtanh",
        )  # fmt: skip
        raises_like_torch(
            lambda m: m.nn.functional.threshold(x(m), 0, 1), NotImplementedError,
            "\"threshold_cpu\" not implemented for 'Bool'",
        )  # fmt: skip


@needs_torch
def test_prelu_channels():
    """A 1-d input is one channel (so a per-channel weight of size > 1 is refused); a 0-d input
    takes only a single weight."""
    msg = "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 "
    raises_like_torch(
        lambda m: m.nn.PReLU(3)(m.randn(3)), RuntimeError, msg + "and channel size = 1."
    )
    raises_like_torch(
        lambda m: m.nn.functional.prelu(m.tensor(1.0), m.ones(2)),
        RuntimeError,
        "Not allow zero-dim input tensor.",
    )
    raises_like_torch(
        lambda m: m.nn.functional.prelu(m.ones(2, 3), m.ones(3, dtype=m.float64)),
        RuntimeError,
        "prelu: Type promoting not supported. Got Float and Double",
    )
    for shape, w in (((3,), [0.25]), ((), 0.25), ((2, 3, 4), [0.1, 0.2, 0.3])):
        run_case(
            Case(
                f"prelu{shape}",
                lambda m, x, w=w: m.nn.functional.prelu(x, m.tensor(w)),
                [A(*shape)],
            )
        )


# ---------------------------------------------------------------------- names (spec 4.3)
def test_names_activations_keep():
    x = ember.randn(2, 6, names=("N", "C"))
    for fn in (
        EF.relu,
        EF.gelu,
        EF.silu,
        EF.elu,
        EF.softplus,
        EF.mish,
        EF.hardswish,
        EF.logsigmoid,
        EF.leaky_relu,
        lambda t: EF.softmax(t, "C"),
        lambda t: EF.dropout(t, 0.5),
        lambda t: EF.alpha_dropout(t, 0.5, True),
    ):
        assert fn(x).names == ("N", "C")
    assert EF.glu(x, "C").names == ("N", "C")


def test_names_linear():
    x = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    w = ember.randn(4, 3, requires_grad=True)
    y = EF.linear(x, w, ember.zeros(4))
    assert y.names == ("N", "C")
    y.sum().backward()
    assert x.grad.names == ("N", "C")
    wn = ember.randn(4, 3).rename("H", "C")
    assert EF.linear(x, wn).names == ("N", "H")
    assert EF.linear(ember.randn(2, 3, names=("N", None)), wn).names == ("N", "H")
    with pytest.raises(RuntimeError, match=re.escape("'D'") + ".*" + re.escape("'C'")):
        EF.linear(ember.randn(2, 3, names=("N", "D")), wn)


def test_names_embedding_and_bilinear():
    idx = ember.tensor([[0, 1], [2, 1]]).rename("N", "T")
    assert EF.embedding(idx, ember.randn(4, 3)).names == ("N", "T", None)
    assert EF.one_hot(idx, 3).names == ("N", "T", None)
    x1 = ember.randn(2, 3, names=("N", "C"))
    assert EF.bilinear(x1, ember.randn(2, 4), ember.randn(5, 3, 4)).names == ("N", None)


# ---------------------------------------------------------------------- kinks and extremes
KINK_VALUES = [-20.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 20.0, 30.0]
KINKS = [
    ("relu", ()),
    ("relu6", ()),
    ("hardtanh", ()),
    ("leaky_relu", (0.1,)),
    ("elu", ()),
    ("selu", ()),
    ("celu", ()),
    ("softplus", ()),
    ("hardsigmoid", ()),
    ("hardswish", ()),
    ("threshold", (0.5, 2.0)),
    ("logsigmoid", ()),
    ("softshrink", ()),
    ("hardshrink", ()),
    ("mish", ()),
    ("gelu", ()),
    ("silu", ()),
    ("rrelu", ()),
    ("softsign", ()),
    ("tanhshrink", ()),
]


@needs_torch
@pytest.mark.parametrize("name,args", KINKS, ids=[k[0] for k in KINKS])
def test_kinks_match_torch(name, args):
    # values and derivatives at the breakpoints (0, +-1, +-3, 6, threshold) follow torch
    out = []
    for m in (ember, torch):
        x = m.tensor(KINK_VALUES, requires_grad=True)
        y = getattr(_F(m), name)(x, *args)
        y.sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], atol=1e-6, rtol=1e-6)
    np.testing.assert_allclose(out[0][1], out[1][1], atol=1e-6, rtol=1e-6)


HALF_FNS = ["gelu", "elu", "selu", "celu", "softplus", "leaky_relu", "hardswish", "hardsigmoid"]
HALF_FNS += ["hardtanh", "relu6", "silu", "mish", "logsigmoid"]


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes_stay(dtype):
    a = np.random.default_rng(0).uniform(-4, 4, (50,)).astype("float32")
    for name in HALF_FNS:
        out = []
        for m in (ember, torch):
            x = m.tensor(a).to(getattr(m, dtype)).requires_grad_()
            y = getattr(_F(m), name)(x)
            y.sum().backward()
            assert str(y.dtype).split(".")[-1] == dtype, name
            assert str(x.grad.dtype).split(".")[-1] == dtype, name
            out.append((y.detach().float().numpy(), x.grad.float().numpy()))
        np.testing.assert_allclose(out[0][0], out[1][0], atol=2e-2, rtol=2e-2, err_msg=name)
        np.testing.assert_allclose(out[0][1], out[1][1], atol=3e-2, rtol=3e-2, err_msg=name)


def test_gelu_float32_cdf_accuracy():
    # float32 GELU computes the normal CDF with float32 vector ops (core/ops/activation.py
    # _phi_f32) instead of scipy's scalar loop: within 2e-7 of the float64 value everywhere,
    # relative 2e-5 in the left tail, NaN/inf as the CDF's limits
    scipy_special = pytest.importorskip("scipy.special")
    from ember.core.ops.activation import _phi_f32

    x = np.linspace(-14, 14, 200001).astype(np.float32)
    ref = scipy_special.ndtr(x.astype(np.float64))
    got = _phi_f32(x)
    assert got.dtype == np.float32
    assert np.abs(got - ref).max() < 2e-7
    tail = (x < 0) & (ref > 1e-30)
    assert np.max(np.abs(got - ref)[tail] / ref[tail]) < 2e-5
    special = _phi_f32(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32))
    assert np.isnan(special[0]) and special[1:].tolist() == [1.0, 0.0, 0.5, 0.5]
    # and GELU itself (values and gradient) against float64
    xe = ember.tensor(x[::50], requires_grad=True)
    EF.gelu(xe).sum().backward()
    xd = x[::50].astype(np.float64)
    cdf = scipy_special.ndtr(xd)
    np.testing.assert_allclose(EF.gelu(xe).detach().numpy(), xd * cdf, rtol=1e-6, atol=3e-6)
    want = cdf + xd * np.exp(-0.5 * xd * xd) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(xe.grad.numpy(), want, rtol=1e-6, atol=3e-6)


ZERO_DIM_ARGS = [
    ("dropout", (), {"p": 1.0}),
    ("dropout2d", (), {"p": 0.0}),
    ("dropout3d", (), {"p": 1.0}),
    ("alpha_dropout", (), {"p": 0.0, "training": True}),
    ("feature_alpha_dropout", (), {"p": 0.0, "training": True}),
    ("glu", (), {"dim": 1}),
    ("softplus", (), {"beta": 2.0, "threshold": 1.0}),
    ("threshold", (0.1, 20.0), {}),
    ("elu", (), {"alpha": 0.5}),
    ("celu", (), {"alpha": 0.5}),
    ("leaky_relu", (), {"negative_slope": 0.2}),
    ("hardtanh", (-0.5, 0.5), {}),
    ("hardshrink", (0.6,), {}),
]


@needs_torch
@pytest.mark.parametrize("name,args,kw", ZERO_DIM_ARGS, ids=[c[0] for c in ZERO_DIM_ARGS])
def test_number_arguments_take_zero_dim_tensors(name, args, kw):
    # torch reads a 0-d tensor where a number goes (its Scalar arguments)
    x = np.random.default_rng(0).uniform(-0.9, 0.9, (2, 4, 4, 4)).astype("float32")
    outs = []
    for m in (ember, torch):
        a = tuple(m.tensor(v) for v in args)
        k = {q: v if isinstance(v, bool) else m.tensor(v) for q, v in kw.items()}
        outs.append(getattr(_F(m), name)(m.tensor(x), *a, **k))
    np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-6, atol=1e-7)


@needs_torch
@pytest.mark.parametrize(
    "name,call",
    [
        ("elu", lambda m, x: _F(m).elu(x, alpha=m.ones(2))),
        ("celu", lambda m, x: _F(m).celu(x, alpha=m.ones(1))),
        ("softplus", lambda m, x: _F(m).softplus(x, beta=m.ones(2))),
        ("threshold", lambda m, x: _F(m).threshold(x, m.ones(2), 0.0)),
        ("glu", lambda m, x: _F(m).glu(x, dim=m.ones(2, dtype=m.long))),
        ("dropout", lambda m, x: _F(m).dropout(x, p=m.ones(2))),
        ("std", lambda m, x: x.std(dim=1, correction=m.ones(2))),
    ],
)
def test_number_arguments_refuse_other_tensors(name, call):
    # only a 0-d tensor stands for a number: torch's error types (and messages but std's)
    errors = []
    for m in (ember, torch):
        with pytest.raises((TypeError, RuntimeError)) as e:
            call(m, m.ones(2, 4))
        errors.append(e)
    assert errors[0].type is errors[1].type
    if name != "std":  # torch lists std's overloads
        assert str(errors[0].value) == str(errors[1].value)
