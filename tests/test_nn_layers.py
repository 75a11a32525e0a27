"""Layer modules (linear, flatten, activation, dropout, sparse, distance) vs torch: parity with
copied state (outputs and parameter gradients, float32 and float64), default initialisations,
train/eval, repr, names rules (spec 4.3) and errors."""

import math
import re

import ember
import numpy as np
import pytest
from harness import A, needs_torch, raises_like_torch
from nn_harness import check_module

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

IDX = A(3, 4, dtype="int64", low=0, high=9, grad=False)

LAYERS = [
    ("ELU", lambda m: m.nn.ELU(0.7), [A(3, 5)]),
    ("Hardshrink", lambda m: m.nn.Hardshrink(0.3), [A(3, 5)]),
    ("Hardsigmoid", lambda m: m.nn.Hardsigmoid(), [A(3, 5, low=-5, high=5)]),
    ("Hardtanh", lambda m: m.nn.Hardtanh(-0.5, 1.5), [A(3, 5)]),
    ("Hardswish", lambda m: m.nn.Hardswish(), [A(3, 5, low=-5, high=5)]),
    ("LeakyReLU", lambda m: m.nn.LeakyReLU(0.2), [A(3, 5)]),
    ("LogSigmoid", lambda m: m.nn.LogSigmoid(), [A(3, 5)]),
    ("PReLU", lambda m: m.nn.PReLU(), [A(2, 3, 4)]),
    ("PReLU_c", lambda m: m.nn.PReLU(3, 0.1), [A(2, 3, 4)]),
    ("ReLU", lambda m: m.nn.ReLU(), [A(3, 5)]),
    ("ReLU6", lambda m: m.nn.ReLU6(), [A(3, 5, low=-3, high=9)]),
    ("RReLU_eval", lambda m: m.nn.RReLU(0.1, 0.4).eval(), [A(3, 5)]),
    ("SELU", lambda m: m.nn.SELU(), [A(3, 5)]),
    ("CELU", lambda m: m.nn.CELU(0.8), [A(3, 5)]),
    ("GELU", lambda m: m.nn.GELU(), [A(3, 5, low=-4, high=4)]),
    ("GELU_tanh", lambda m: m.nn.GELU("tanh"), [A(3, 5, low=-4, high=4)]),
    ("Sigmoid", lambda m: m.nn.Sigmoid(), [A(3, 5)]),
    ("SiLU", lambda m: m.nn.SiLU(), [A(3, 5)]),
    ("Mish", lambda m: m.nn.Mish(), [A(3, 5)]),
    ("Softplus", lambda m: m.nn.Softplus(2.0, 3.0), [A(3, 5)]),
    ("Softshrink", lambda m: m.nn.Softshrink(0.3), [A(3, 5)]),
    ("Softsign", lambda m: m.nn.Softsign(), [A(3, 5)]),
    ("Tanh", lambda m: m.nn.Tanh(), [A(3, 5)]),
    ("Tanhshrink", lambda m: m.nn.Tanhshrink(), [A(3, 5)]),
    ("Threshold", lambda m: m.nn.Threshold(0.2, -1.0), [A(3, 5)]),
    ("GLU", lambda m: m.nn.GLU(1), [A(3, 6)]),
    ("Softmin", lambda m: m.nn.Softmin(1), [A(3, 5)]),
    ("Softmax", lambda m: m.nn.Softmax(-1), [A(3, 5)]),
    ("Softmax2d", lambda m: m.nn.Softmax2d(), [A(2, 3, 2, 2)]),
    ("LogSoftmax", lambda m: m.nn.LogSoftmax(0), [A(3, 5)]),
    ("Identity", lambda m: m.nn.Identity(3, k=1), [A(3, 5)]),
    ("Linear", lambda m: m.nn.Linear(5, 4), [A(3, 5)]),
    ("Linear_3d", lambda m: m.nn.Linear(5, 4), [A(2, 3, 5)]),
    ("Linear_nobias", lambda m: m.nn.Linear(5, 4, bias=False), [A(3, 5)]),
    ("Bilinear", lambda m: m.nn.Bilinear(3, 2, 4), [A(5, 3), A(5, 2)]),
    ("Bilinear_nobias", lambda m: m.nn.Bilinear(3, 2, 4, bias=False), [A(5, 3), A(5, 2)]),
    ("Flatten", lambda m: m.nn.Flatten(), [A(2, 3, 4)]),
    ("Flatten_0", lambda m: m.nn.Flatten(0, 1), [A(2, 3, 4)]),
    ("Unflatten", lambda m: m.nn.Unflatten(1, (2, 3)), [A(2, 6)]),
    ("Dropout_eval", lambda m: m.nn.Dropout(0.4).eval(), [A(3, 5)]),
    ("Dropout2d_eval", lambda m: m.nn.Dropout2d(0.4).eval(), [A(2, 3, 2, 2)]),
    ("AlphaDropout_eval", lambda m: m.nn.AlphaDropout(0.4).eval(), [A(3, 5)]),
    ("Dropout_p0", lambda m: m.nn.Dropout(0.0), [A(3, 5)]),
    ("Embedding", lambda m: m.nn.Embedding(10, 3), [IDX]),
    ("Embedding_pad", lambda m: m.nn.Embedding(10, 3, padding_idx=2), [IDX]),
    ("Embedding_freq", lambda m: m.nn.Embedding(10, 3, scale_grad_by_freq=True), [IDX]),
    ("EmbeddingBag", lambda m: m.nn.EmbeddingBag(10, 3), [IDX]),
    ("EmbeddingBag_sum", lambda m: m.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=1), [IDX]),
    (
        "EmbeddingBag_max",
        lambda m: m.nn.EmbeddingBag(10, 3, mode="max"),
        [A(3, 4, dtype="int64", low=0, high=9, grad=False, seed=5)],
    ),
    ("CosineSimilarity", lambda m: m.nn.CosineSimilarity(), [A(4, 5), A(4, 5)]),
    ("PairwiseDistance", lambda m: m.nn.PairwiseDistance(1.5), [A(4, 5), A(4, 5)]),
]


@pytest.mark.parametrize("name,ctor,inputs", LAYERS, ids=[x[0] for x in LAYERS])
def test_layer_parity(name, ctor, inputs):
    check_module(ctor, inputs, train=not name.endswith("_eval"))


@needs_torch
def test_embedding_bag_offsets_module():
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9])
    off = np.array([0, 4, 4])
    w = np.random.default_rng(0).standard_normal((10, 3)).astype("float32")
    outs = []
    for m in (ember, torch):
        bag = m.nn.EmbeddingBag.from_pretrained(m.tensor(w), freeze=False, mode="sum")
        y = bag(m.tensor(idx), m.tensor(off))
        y.backward(m.tensor(np.arange(9.0, dtype="float32").reshape(3, 3)))
        outs.append((y.detach().numpy(), bag.weight.grad.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-6)


def test_lazy_linear():
    lin = ember.nn.LazyLinear(4)
    assert repr(lin) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    y = lin(ember.randn(2, 7))
    assert type(lin) is ember.nn.Linear and lin.in_features == 7
    assert tuple(lin.weight.shape) == (4, 7) and tuple(y.shape) == (2, 4)
    assert type(lin.weight) is ember.nn.Parameter
    assert list(lin.state_dict()) == ["weight", "bias"]
    bound = 1 / math.sqrt(7)
    assert np.abs(lin.weight.detach().numpy()).max() <= bound
    loaded = ember.nn.LazyLinear(4)
    src = ember.nn.Linear(3, 4)
    loaded.load_state_dict(src.state_dict())
    loaded(ember.ones(2, 3))
    assert type(loaded) is ember.nn.Linear and loaded.in_features == 3
    np.testing.assert_array_equal(loaded.weight.detach().numpy(), src.weight.detach().numpy())
    nb = ember.nn.LazyLinear(3, bias=False)
    nb(ember.randn(2, 5))
    assert nb.bias is None and tuple(nb.weight.shape) == (3, 5)


# ---------------------------------------------------------------------- default initialisation
def test_linear_init_distribution():
    ember.manual_seed(0)
    lin = ember.nn.Linear(400, 300)
    w = lin.weight.detach().numpy()
    b = lin.bias.detach().numpy()
    bound = 1 / math.sqrt(400)
    assert w.dtype == np.float32 and np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.mean()) < 0.02 * bound
    np.testing.assert_allclose(w.var(), bound**2 / 3, rtol=0.02)  # U(-b, b) variance
    assert np.abs(b).max() > 0.9 * bound
    assert lin.weight.requires_grad and lin.bias.requires_grad


def test_bilinear_init_distribution():
    ember.manual_seed(0)
    bl = ember.nn.Bilinear(50, 30, 40)
    bound = 1 / math.sqrt(50)
    w = bl.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(bl.bias.detach().numpy()).max() <= bound
    np.testing.assert_allclose(w.var(), bound**2 / 3, rtol=0.03)


def test_embedding_init_distribution():
    ember.manual_seed(0)
    e = ember.nn.Embedding(1000, 64, padding_idx=3)
    w = e.weight.detach().numpy()
    assert (w[3] == 0).all()
    rest = np.delete(w, 3, 0)
    assert abs(rest.mean()) < 0.01 and abs(rest.std() - 1) < 0.01
    eb = ember.nn.EmbeddingBag(1000, 64)
    assert abs(eb.weight.detach().numpy().std() - 1) < 0.01


def test_prelu_init_and_dtype():
    p = ember.nn.PReLU(3, init=0.1, dtype=ember.float64)
    assert p.weight.dtype == ember.float64
    np.testing.assert_allclose(p.weight.detach().numpy(), [0.1] * 3)
    lin = ember.nn.Linear(2, 3, dtype=ember.float64)
    assert lin.weight.dtype == ember.float64 and lin.bias.dtype == ember.float64


def test_from_pretrained():
    w = ember.randn(4, 3)
    e = ember.nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and e.weight.data_ptr() == w.data_ptr()
    assert ember.nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    eb = ember.nn.EmbeddingBag.from_pretrained(w, mode="max")
    assert not eb.weight.requires_grad and eb.mode == "max"
    raises_like_torch(
        lambda m: m.nn.Embedding.from_pretrained(m.ones(3)),
        AssertionError,
        "Embeddings parameter is expected to be 2-dimensional",
    )


@needs_torch
def test_state_dict_keys():
    for ctor in (
        lambda m: m.nn.Linear(3, 2),
        lambda m: m.nn.Bilinear(3, 2, 4),
        lambda m: m.nn.Embedding(5, 2),
        lambda m: m.nn.EmbeddingBag(5, 2),
        lambda m: m.nn.PReLU(),
        lambda m: m.nn.Linear(3, 2, bias=False),
    ):
        assert list(ctor(ember).state_dict()) == list(ctor(torch).state_dict())


# ---------------------------------------------------------------------- train / eval
def test_dropout_train_eval():
    ember.manual_seed(0)
    d = ember.nn.Dropout(0.25)
    x = ember.ones(100, 100)
    y = d(x).numpy()
    assert abs((y == 0).mean() - 0.25) < 0.02
    np.testing.assert_allclose(y[y != 0], 1 / 0.75, rtol=1e-6)
    d.eval()
    assert d(x) is x
    for cls in ("Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        m = getattr(ember.nn, cls)(0.5).eval()
        z = ember.randn(2, 3, 4, 4, 4) if cls == "Dropout3d" else ember.randn(2, 3, 4)
        if cls == "Dropout2d":
            z = ember.randn(2, 3, 4, 4)
        assert m(z) is z
        m.train()
        assert not np.array_equal(m(z).numpy(), z.numpy())


def test_rrelu_module_train_eval():
    ember.manual_seed(0)
    r = ember.nn.RReLU(0.1, 0.3)
    y = r(-ember.ones(1000)).numpy()
    assert y.std() > 0.01 and -0.3 <= y.min() and y.max() <= -0.1
    r.eval()
    np.testing.assert_allclose(r(-ember.ones(3)).numpy(), -0.2)


@needs_torch
def test_inplace_modules():
    for cls, kw in (
        ("ReLU", {}),
        ("ELU", {}),
        ("LeakyReLU", {}),
        ("Hardtanh", {}),
        ("ReLU6", {}),
        ("SELU", {}),
        ("CELU", {}),
        ("SiLU", {}),
        ("Mish", {}),
        ("Hardswish", {}),
        ("Hardsigmoid", {}),
        ("Dropout", {"p": 0.5}),
    ):
        x = ember.randn(4, 5)
        ref = getattr(torch.nn, cls)(**kw).eval()(torch.tensor(x.numpy()))
        m = getattr(ember.nn, cls)(inplace=True, **kw).eval()
        y = m(x)
        if cls != "Dropout":
            assert y is x, cls
        np.testing.assert_allclose(x.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6, err_msg=cls)
    x = ember.randn(3, 4)
    assert ember.nn.Threshold(0.0, 5.0, inplace=True)(x) is x and (x.numpy() != 0).all()


# ---------------------------------------------------------------------- repr
REPRS = [
    lambda m: m.nn.ELU(0.5, True),
    lambda m: m.nn.Hardshrink(),
    lambda m: m.nn.Hardtanh(),
    lambda m: m.nn.LeakyReLU(0.2, True),
    lambda m: m.nn.PReLU(3),
    lambda m: m.nn.ReLU(True),
    lambda m: m.nn.ReLU6(),
    lambda m: m.nn.RReLU(),
    lambda m: m.nn.SELU(True),
    lambda m: m.nn.CELU(),
    lambda m: m.nn.GELU("tanh"),
    lambda m: m.nn.Softplus(2, 10),
    lambda m: m.nn.Softshrink(),
    lambda m: m.nn.Threshold(0.1, 20),
    lambda m: m.nn.GLU(),
    lambda m: m.nn.Softmin(1),
    lambda m: m.nn.Softmax(),
    lambda m: m.nn.Softmax2d(),
    lambda m: m.nn.LogSoftmax(1),
    lambda m: m.nn.Identity(),
    lambda m: m.nn.Linear(3, 4),
    lambda m: m.nn.Bilinear(2, 3, 4, bias=False),
    lambda m: m.nn.Flatten(),
    lambda m: m.nn.Unflatten(1, (2, 5)),
    lambda m: m.nn.Dropout(),
    lambda m: m.nn.Dropout1d(0.2),
    lambda m: m.nn.AlphaDropout(),
    lambda m: m.nn.FeatureAlphaDropout(),
    lambda m: m.nn.Embedding(5, 3),
    lambda m: m.nn.Embedding(
        5, 3, padding_idx=1, max_norm=1.0, norm_type=3.0, scale_grad_by_freq=True, sparse=True
    ),
    lambda m: m.nn.EmbeddingBag(5, 3),
    lambda m: m.nn.EmbeddingBag(5, 3, mode="sum", padding_idx=0, max_norm=2.0),
    lambda m: m.nn.CosineSimilarity(),
    lambda m: m.nn.PairwiseDistance(),
    lambda m: m.nn.Sigmoid(),
    lambda m: m.nn.Tanh(),
    lambda m: m.nn.Mish(True),
    lambda m: m.nn.Hardswish(),
    lambda m: m.nn.SiLU(),
    lambda m: m.nn.Softsign(),
]


@needs_torch
@pytest.mark.parametrize("i", range(len(REPRS)))
def test_repr(i):
    assert repr(REPRS[i](ember)) == repr(REPRS[i](torch))


def test_module_paths():
    from ember.nn.modules.activation import GELU  # noqa: F401
    from ember.nn.modules.distance import PairwiseDistance  # noqa: F401
    from ember.nn.modules.dropout import Dropout  # noqa: F401
    from ember.nn.modules.flatten import Unflatten  # noqa: F401
    from ember.nn.modules.linear import LazyLinear, Linear  # noqa: F401
    from ember.nn.modules.sparse import EmbeddingBag  # noqa: F401


# ---------------------------------------------------------------------- errors
LAYER_ERRORS = [
    (
        lambda m: m.nn.Linear(3, 4)(m.ones(2, 5)),
        RuntimeError,
        "mat1 and mat2 shapes cannot be multiplied (2x5 and 3x4)",
    ),
    (
        lambda m: m.nn.Dropout(2),
        ValueError,
        "dropout probability has to be between 0 and 1, but got 2",
    ),
    (lambda m: m.nn.Hardtanh(2, 1), AssertionError, "max_val (1) must be greater than min_val (2)"),
    (
        lambda m: m.nn.Embedding(5, 3, padding_idx=9),
        AssertionError,
        "Padding_idx must be within num_embeddings",
    ),
    (
        lambda m: m.nn.Embedding(5, 3, _weight=m.ones(4, 3)),
        AssertionError,
        "Shape of weight does not match num_embeddings and embedding_dim",
    ),
    (
        lambda m: m.nn.Unflatten(1, 3),
        TypeError,
        "unflattened_size must be a tuple of ints, but found type int",
    ),
    (
        lambda m: m.nn.Softmax2d()(m.ones(2, 3)),
        ValueError,
        "Softmax2d: expected input to be 3D or 4D, got 2D instead",
    ),
    (lambda m: m.nn.Embedding(5, 3)(m.tensor([7])), IndexError, "index out of range in self"),
    (
        lambda m: m.nn.PReLU(3)(m.ones(2, 4)),
        RuntimeError,
        "Mismatch of parameter numbers and input channel size.",
    ),
]


@pytest.mark.parametrize("i", range(len(LAYER_ERRORS)))
def test_layer_errors(i):
    fn, exc, msg = LAYER_ERRORS[i]
    raises_like_torch(fn, exc, msg)


# ---------------------------------------------------------------------- names (spec 4.3)
def test_names_linear_module():
    lin = ember.nn.Linear(3, 4)
    x = ember.randn(2, 5, 3, names=("N", "T", "C"), requires_grad=True)
    y = lin(x)
    assert y.names == ("N", "T", "C")
    y.sum().backward()
    assert x.grad.names == ("N", "T", "C")
    assert lin.weight.grad.names == (None, None)
    lin.weight.rename_("H", "C")
    assert lin(x).names == ("N", "T", "H")
    with pytest.raises(RuntimeError, match=re.escape("'D'")):
        lin(ember.randn(2, 3, names=("N", "D")))


def test_names_layers_keep():
    x = ember.randn(2, 3, 4, names=("N", "C", "L"))
    for mod in (
        ember.nn.ReLU(),
        ember.nn.GELU(),
        ember.nn.Dropout(0.3),
        ember.nn.Dropout1d(0.3),
        ember.nn.AlphaDropout(0.2),
        ember.nn.Softmax(1),
        ember.nn.LeakyReLU(),
        ember.nn.PReLU(3),
        ember.nn.Identity(),
        ember.nn.Dropout(0.3).eval(),
    ):
        assert mod(x).names == ("N", "C", "L"), type(mod).__name__


def test_names_embedding_flatten():
    idx = ember.tensor([[1, 2, 3]]).rename("N", "T")
    assert ember.nn.Embedding(5, 4)(idx).names == ("N", "T", None)
    x = ember.randn(2, 3, 4, names=("N", "C", "L"))
    assert ember.nn.Flatten(0, 0)(x).names == ("N", "C", "L")
    y = ember.nn.Unflatten("L", (("A", 2), ("B", 2)))(x)
    assert y.names == ("N", "C", "A", "B")
