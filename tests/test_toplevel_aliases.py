"""torch.* spellings of Tensor methods, view copies and nn functions, against torch."""

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = np.linspace(-2, 3, 12).reshape(3, 4)


def _both(fn):
    """fn(module, tensor) run on ember and on torch: the two results as numpy."""
    out = []
    for m in (ember, torch):
        r = fn(m, m.tensor(X.copy()))
        out.append(r)
    return out


def _np(r):
    if isinstance(r, (tuple, list)):
        return [_np(x) for x in r]
    return r.detach().numpy() if hasattr(r, "detach") else r


METHOD_CASES = {
    "neg_": lambda m, x: m.neg_(x),
    "negative_": lambda m, x: m.negative_(x),
    "zero_": lambda m, x: m.zero_(x),
    "fill_": lambda m, x: m.fill_(x, 2.5),
    "clamp_min_": lambda m, x: m.clamp_min_(x, 0.5),
    "clamp_max_": lambda m, x: m.clamp_max_(x, 0.5),
    "xlogy_": lambda m, x: m.xlogy_(x, x.abs() + 1),
    "ldexp_": lambda m, x: m.ldexp_(x, m.ones(3, 4)),
    "addmv_": lambda m, x: m.addmv_(x[0], x[:, :4].t(), x[:, 0]),
    "split_with_sizes": lambda m, x: m.split_with_sizes(x, [1, 2]),
    "unsafe_chunk": lambda m, x: m.unsafe_chunk(x, 2, 1),
    "unsafe_split": lambda m, x: m.unsafe_split(x, 2),
    "unsafe_split_with_sizes": lambda m, x: m.unsafe_split_with_sizes(x, [3, 1], 1),
    "is_inference": lambda m, x: m.is_inference(x),
    "put": lambda m, x: m.put(x, m.tensor([0, 5]), m.tensor([9.0, 8.0]).double()),
    "index_put_": lambda m, x: m.index_put_(x, (m.tensor([0, 2]),), m.tensor(7.0).double()),
    "fill": lambda m, x: m.fill(x, -1.0),
    "is_same_size": lambda m, x: m.is_same_size(x, x.t()),
}


@pytest.mark.parametrize("name", sorted(METHOD_CASES))
def test_method_aliases_match_torch(name):
    e, t = _both(METHOD_CASES[name])
    if isinstance(t, bool):
        assert e is t
        return
    e, t = _np(e), _np(t)
    if isinstance(t, list):
        assert len(e) == len(t)
    for a, b in zip(e if isinstance(e, list) else [e], t if isinstance(t, list) else [t]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_inplace_aliases_return_their_input():
    x = ember.ones(2)
    assert ember.neg_(x) is x and ember.zero_(x) is x


COPY_CASES = {
    "view_copy": lambda m, x: m.view_copy(x, (2, 6)),
    "permute_copy": lambda m, x: m.permute_copy(x, (1, 0)),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 0, 1),
    "t_copy": lambda m, x: m.t_copy(x),
    "expand_copy": lambda m, x: m.expand_copy(x[:1], (3, 4)),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[:1], 0),
    "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, 1),
    "select_copy": lambda m, x: m.select_copy(x, 1, 2),
    "slice_copy": lambda m, x: m.slice_copy(x, 1, 1, 4, 2),
    "diagonal_copy": lambda m, x: m.diagonal_copy(x, 1),
    "detach_copy": lambda m, x: m.detach_copy(x),
    "alias_copy": lambda m, x: m.alias_copy(x),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 1, 2, 1),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2)),
    "unbind_copy": lambda m, x: m.unbind_copy(x, 1),
    "split_copy": lambda m, x: m.split_copy(x, 2, 1),
    "split_with_sizes_copy": lambda m, x: m.split_with_sizes_copy(x, [1, 2]),
}


@pytest.mark.parametrize("name", sorted(COPY_CASES))
def test_view_copies_match_torch_and_own_their_memory(name):
    x = ember.tensor(X.copy())
    e = COPY_CASES[name](ember, x)
    t = COPY_CASES[name](torch, torch.tensor(X.copy()))
    for a, b in zip(e if isinstance(e, tuple) else [e], t if isinstance(t, tuple) else [t]):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy())
        a.fill_(100.0)
    np.testing.assert_array_equal(x.numpy(), X)  # the copies share nothing with x


def test_view_copy_gradients_match_torch():
    up = np.arange(12.0).reshape(4, 3)
    grads = []
    for m in (ember, torch):
        x = m.tensor(X.copy(), requires_grad=True)
        m.permute_copy(x, (1, 0)).backward(m.tensor(up))
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(*grads)


def test_typename_matches_torch():
    for m in (ember, torch):
        assert m.typename(m.ones(2)) == "torch.FloatTensor" or m is ember
    assert ember.typename(3) == torch.typename(3) == "int"
    assert ember.typename(ember.nn.Linear(2, 2)).endswith("Linear")
    with ember.no_grad():
        assert ember.typename(ember.ones(2, dtype=ember.int64)) == "torch.LongTensor"


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.tensor(1.0).dtype is ember.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ember.set_default_tensor_type("torch.FloatTensor")
            assert ember.tensor(1.0).dtype is ember.float32
            with pytest.raises(TypeError, match="only floating-point types are supported"):
                ember.set_default_tensor_type(ember.LongTensor)
    finally:
        ember.set_default_dtype(ember.float32)
        ember.set_default_device("cpu")


Y = np.linspace(1, 2, 12).reshape(3, 4)
T = np.array([1.0, -1.0, 1.0])

NN_CASES = {
    "dropout_eval": lambda m, x, y: m.dropout(x, 0.5, False),
    "alpha_dropout_eval": lambda m, x, y: m.alpha_dropout(x, 0.5, False),
    "feature_dropout_eval": lambda m, x, y: m.feature_dropout(x, 0.5, False),
    "embedding": lambda m, x, y: m.embedding(x, m.tensor([[0, 2], [1, 1]])),
    "embedding_pad": lambda m, x, y: m.embedding(x, m.tensor([0, 2, 1]), 2),
    "bilinear": lambda m, x, y: m.bilinear(x, y, m.ones(2, 4, 4).double() * 0.1, None),
    "bce_logits": lambda m, x, y: m.binary_cross_entropy_with_logits(x, y / 2, None, None, 2),
    "kl_div": lambda m, x, y: m.kl_div(x.log_softmax(1), y.softmax(1), 0),
    "kl_div_log_target": lambda m, x, y: m.kl_div(x, y, 2, log_target=True),
    "margin_ranking": lambda m, x, y: m.margin_ranking_loss(x[:, 0], y[:, 0], m.tensor(T), 0.2, 1),
    "hinge": lambda m, x, y: m.hinge_embedding_loss(x, x.sign(), 1.5, 0),
    "cosine_emb": lambda m, x, y: m.cosine_embedding_loss(x, y, m.tensor(T), 0.1, 2),
    "triplet": lambda m, x, y: m.triplet_margin_loss(x, y, x.flip(0), 1.0, 2, 1e-6, True, 1),
    "poisson": lambda m, x, y: m.poisson_nll_loss(x, y, True, True, 1e-8, 1),
}


@pytest.mark.parametrize("name", sorted(NN_CASES))
def test_nn_functions_at_top_level_match_torch(name):
    out, grads = [], []
    for m in (ember, torch):
        x = m.tensor(X.copy(), requires_grad=True)
        r = NN_CASES[name](m, x, m.tensor(Y))
        (r * m.tensor(np.arange(1.0, r.numel() + 1).reshape(r.shape))).sum().backward()
        out.append(r.detach().numpy())
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-12)


def test_ctc_loss_at_top_level_matches_torch():
    rs = np.random.RandomState(0)
    lp = rs.randn(6, 2, 4)
    outs = []
    for m in (ember, torch):
        logp = m.tensor(lp).log_softmax(2)
        targets = m.tensor([[1, 2], [3, 3]])
        outs.append(m.ctc_loss(logp, targets, [6, 5], [2, 2], 0, 2, False).item())
    assert outs[0] == pytest.approx(outs[1], rel=1e-6)


def test_feature_dropout_drops_whole_channels():
    ember.manual_seed(0)
    y = ember.feature_dropout(ember.ones(8, 16, 5), 0.5, True)
    per_channel = y.numpy()
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(axis=2) == per_channel.max(axis=2)).all()
    assert 0 < (per_channel[:, :, 0] == 0).mean() < 1


def test_integer_reduction_errors():
    x = ember.ones(3)
    with pytest.raises(TypeError, match="argument 'reduction' must be int, not str"):
        ember.kl_div(x, x, "mean")
    with pytest.raises(ValueError, match="5 is not a valid value for reduction"):
        ember.kl_div(x, x, 5)
    with pytest.raises(TypeError):
        ember.dropout(x, 0.5)  # train is required, as in torch
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        ember.feature_dropout(x, 1.5, True)


def test_index_put_wants_the_same_dtype_like_torch():
    for m in (ember, torch):
        x = m.zeros(3)
        for v in (m.tensor(7.0, dtype=m.float64), m.tensor(7)):
            with pytest.raises(RuntimeError, match="Index put requires the source and destin"):
                m.index_put(x, (m.tensor([0]),), v)
        with pytest.raises(RuntimeError, match="Index put requires the source and destin"):
            m.index_put(x, (x > -1,), m.ones(3, dtype=m.float64))
        m.index_put_(x, (m.tensor([True, False, False]),), m.tensor(7))  # a masked fill
        x[m.tensor([False, True, False])] = m.tensor([8.0], dtype=m.float64)
        assert x.tolist() == [7.0, 8.0, 0.0]


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x, d: m.index_add(x, 0, m.tensor([0]), d),
        lambda m, x, d: x.index_add_(0, m.tensor([0]), d.long()),
        lambda m, x, d: m.masked_scatter(x, x > -1, d.expand(3)),
        lambda m, x, d: m.put(x, m.tensor([0]), d),
        lambda m, x, d: x.put_(m.tensor([0]), d),
    ],
)
def test_writes_of_another_dtype_are_refused_like_torch(fn):
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            fn(m, m.zeros(3), m.ones(1, dtype=m.float64))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("split", ["unsafe_chunk", "unsafe_split"])
def test_unsafe_split_outputs_may_be_written_in_place_like_torch(split):
    grads = []
    for m in (ember, torch):
        x = m.tensor(X.copy(), requires_grad=True)
        y = x * 1
        a, b = getattr(m, split)(y, 2)
        assert a._base is None and a.data_ptr() == y.data_ptr()
        a.mul_(3)
        assert y._version == 0  # not a tracked view: the input's version does not move
        (a.sum() + (b * 2).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view"):
        ember.tensor(X.copy(), requires_grad=True).mul(1).chunk(2)[0].mul_(2)
