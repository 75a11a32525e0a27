"""Parity regressions found by the seventy-eighth wave, a seeded random fuzz of the nn layers the
sixty-eighth (convolution, pooling, upsampling) left out, against torch: BatchNorm1d-3d,
InstanceNorm1d-3d, LayerNorm, GroupNorm, RMSNorm and LocalResponseNorm with their flags and the
functional forms with running statistics given or absent; every activation module with random
arguments, in place on leaves, views and non-leaves; RNN/LSTM/GRU and their cells (layers,
directions, batch_first, proj_size, unbatched and packed inputs); MultiheadAttention and the
Transformer layers (masks, kdim/vdim, bias_kv, zero_attn, norm_first, activations); Embedding,
EmbeddingBag, Linear, Bilinear, Flatten/Unflatten, Fold/Unfold, PixelShuffle, ChannelShuffle,
dropout in eval, CosineSimilarity and PairwiseDistance (values, parameter and input gradients
with a random upstream gradient, running statistics after several steps, float32/float64, and
the errors of invalid configurations). It found glu taking an out-of-range dim (a bare tuple
IndexError, or the wrong half for a too-negative dim), rrelu crashing on a 0-dim input in
training, celu(alpha=0, inplace=True) on a leaf reporting the alpha before torch's leaf check,
instance_norm taking half a pair of running statistics and meeting running statistics of the
wrong size in eval mode with a numpy broadcast error, cosine_similarity of inputs of two shapes
normalizing each before broadcasting (torch broadcasts first: dim and the norms count in the
common shape), Linear with 0 in_features and Bilinear with 0 out_features failing on batched
input (a -1 reshape of 0 elements), Bilinear(0, ...) dividing by zero, and embedding /
embedding_bag with max_norm reporting an out-of-range index with the lookup's message instead of
embedding_renorm_'s select() message and scaling rows by a float32 scale where torch rounds a
double one to the row's dtype (a row of norm 2 became exactly 1, not 0.99999994, so max-mode bags
broke ties differently); and the norms' mixed-dtype errors out of torch's order
(torch checks that every parameter is float32 before it asks for a half / bfloat16 input, and
layer_norm / group_norm run that check before their float-only one, the same-dtype one after)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import same_error
from harness import same_grads_or_error as _both
from harness import upstream as _up


def _t(T, shape, seed, dtype="float64", rg=True):
    t = T.tensor(np.random.RandomState(seed).standard_normal(shape)).to(getattr(T, dtype))
    return t.requires_grad_(rg)


@pytest.mark.parametrize("dim", [3, -4, 7])
def test_glu_dim_out_of_range(dim):
    def f(T):
        return T.nn.GLU(dim)(T.zeros(2, 2, 2))

    assert same_error(f, IndexError).startswith("Dimension out of range")


@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_training_on_0dim_input(inplace):
    def f(T):
        x = T.tensor(-2.0, dtype=T.float64, requires_grad=True)
        out = T.nn.functional.rrelu(x * 1, 0.1, 0.3, True, inplace)
        (g,) = T.autograd.grad(out, x)
        return out, g

    want, got = f(torch), f(ember)
    assert got[0].shape == want[0].shape == ()
    assert type(got[0].grad_fn).__name__ == type(want[0].grad_fn).__name__
    # the slope is random (the generators differ): in range, and the gradient is that slope
    slope = float(got[0]) / -2.0
    assert 0.1 <= slope <= 0.3
    assert float(got[1]) == pytest.approx(slope)
    ember.manual_seed(3)
    a = f(ember)[0]
    ember.manual_seed(3)
    assert float(f(ember)[0]) == float(a)


def test_celu_alpha_0_inplace_on_leaf_is_the_leaf_error():
    def f(T):
        return T.nn.functional.celu(T.ones(2, requires_grad=True), 0.0, True)

    assert same_error(f, RuntimeError).startswith("a leaf Variable that requires grad")
    assert "alpha cannot be 0" in same_error(lambda T: T.nn.functional.celu(T.ones(2), 0.0))


@pytest.mark.parametrize("which", ["mean", "var"])
def test_instance_norm_half_pair_of_running_stats(which):
    def f(T):
        rs = T.zeros(3) if which == "mean" else None
        rv = T.ones(3) if which == "var" else None
        return T.nn.functional.instance_norm(_t(T, (2, 3, 4), 0, "float32"), rs, rv)

    msg = same_error(f, ValueError)
    assert msg == "running_mean and running_var must either both be None or neither be None"


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_instance_norm_eval_running_stats_of_wrong_size(dims):
    def f(T):
        m = getattr(T.nn, f"InstanceNorm{dims}d")(3, track_running_stats=True).eval()
        return m(T.zeros((2, 4) + (2,) * dims))

    assert same_error(f, RuntimeError) == "running_mean should contain 8 elements not 6"


@pytest.mark.parametrize(
    "s1, s2, dim",
    [((2, 1, 1), (1, 1), 0), ((2, 2), (2,), -2), ((3, 3, 1), (3, 1), 2), ((2, 3), (1, 3), 0)],
)
def test_cosine_similarity_broadcasts_before_normalizing(s1, s2, dim):
    def f(T):
        x1, x2 = _t(T, s1, 0), _t(T, s2, 1)
        out = T.nn.CosineSimilarity(dim)(x1, x2)
        return [out, *T.autograd.grad(out, (x1, x2), _up(T, out))]

    _both(f)


def test_cosine_similarity_unbroadcastable_shapes():
    def f(T):
        return T.nn.functional.cosine_similarity(T.zeros(2, 3), T.zeros(3, 2), 0)

    assert same_error(f, RuntimeError).startswith("The size of tensor a (3) must match")


@pytest.mark.parametrize("bias", [True, False])
def test_linear_with_no_in_features_on_batched_input(bias):
    def f(T):
        m = T.nn.Linear(0, 3, bias=bias).double()
        x = T.zeros(2, 1, 0, dtype=T.float64, requires_grad=True)
        out = m(x)
        grads = T.autograd.grad(out, [x, *m.parameters()], _up(T, out))
        return [out, *grads]

    _both(f)


def test_bilinear_with_no_out_features():
    def f(T):
        m = T.nn.Bilinear(2, 3, 0).double()
        x1, x2 = _t(T, (2, 1, 2), 0), _t(T, (2, 1, 3), 1)
        out = m(x1, x2)
        grads = T.autograd.grad(out.sum() + (x1 * x1).sum(), [x1, x2, m.weight])
        return [out, *grads]

    _both(f)


def test_bilinear_with_no_in1_features():
    assert same_error(lambda T: T.nn.Bilinear(0, 2, 3), ValueError) == (
        "in1_features must be > 0, but got (in1_features=0)"
    )


@pytest.mark.parametrize("idx", [[4, 2], [-5], [5, 0, -1], [9, 7]])
@pytest.mark.parametrize("bag", [False, True])
def test_max_norm_index_out_of_range_is_renorms_error(idx, bag):
    def f(T):
        w = _t(T, (4, 2), 0, rg=False)
        i = T.tensor(idx)
        if bag:
            return T.nn.functional.embedding_bag(i, w, T.tensor([0]), max_norm=0.5)
        return T.nn.functional.embedding(i, w, max_norm=0.5)

    assert same_error(f, IndexError).startswith("select(): index ")


def test_max_norm_negative_index_in_range_renorms_then_fails_lookup():
    def f(T):
        return T.nn.functional.embedding(T.tensor([-1]), _t(T, (4, 2), 0, rg=False), max_norm=0.5)

    assert same_error(f, IndexError) == "index out of range in self"


def test_cosine_similarity_broadcast_gradcheck():
    x1 = _t(ember, (2, 1, 3), 0)
    x2 = _t(ember, (4, 1), 1)
    assert ember.autograd.gradcheck(
        lambda a, b: ember.nn.functional.cosine_similarity(a, b, 1), (x1, x2)
    )


_NORMS = {
    "layer_norm": lambda F, x, w, b: F.layer_norm(x, (3,), w, b),
    "group_norm": lambda F, x, w, b: F.group_norm(x, 1, w, b),
    "batch_norm": lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    "instance_norm": lambda F, x, w, b: F.instance_norm(x, None, None, w, b),
}


@pytest.mark.parametrize("fn", list(_NORMS))
@pytest.mark.parametrize(
    "xd, wd, bd",
    [
        ("int64", "float32", None),
        ("int64", "int32", "float32"),
        ("float64", "int64", "int64"),
        ("int64", "int64", "int32"),  # not mixed: the float-only check comes first
    ],
)
def test_norm_mixed_dtype_errors(fn, xd, wd, bd):
    def f(T):
        w = None if wd is None else T.ones(3, dtype=getattr(T, wd))
        b = None if bd is None else T.zeros(3, dtype=getattr(T, bd))
        x = T.ones(2, 3, 3, dtype=getattr(T, xd))
        return _NORMS[fn](T.nn.functional, x, w, b)

    same_error(f)


# (float32 norms of several values may differ in their last bit: one value per row there)
@pytest.mark.parametrize(
    "dim, dtype", [(1, "float32"), (1, "float64"), (3, "float16"), (3, "bfloat16")]
)
def test_max_norm_scale_rounding(dim, dtype):
    # torch scales a row by max_norm / (norm + 1e-7) computed as a double and rounded to the
    # row's dtype: a float32 row of norm 2 becomes 0.99999994, not 1
    w0 = np.random.RandomState(0).standard_normal((40, dim)) * 2
    w0[0] = 2.0

    def f(T):
        w = T.tensor(w0).to(getattr(T, dtype))
        T.nn.functional.embedding(T.arange(40), w, max_norm=1.0)
        return w.float().numpy()

    np.testing.assert_array_equal(f(ember), f(torch))


def test_max_norm_then_max_bag_picks_torchs_row():
    # the renormalised rows 1 and 4 tie only when rounded as torch does
    w0 = np.array([[0.3], [2.0], [-0.5], [0.7], [3.0], [0.2]], dtype=np.float32)

    def f(T):
        w = T.tensor(w0).requires_grad_()
        out = T.nn.functional.embedding_bag(
            T.tensor([[4, 1, 0], [1, 4, 0]]), w, mode="max", max_norm=1.0
        )
        return [out, *T.autograd.grad(out, w, _up(T, out).float())]

    _both(f)
