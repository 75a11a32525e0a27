"""Sparse gradients: nn.Embedding/EmbeddingBag(sparse=True), their accumulation, and the
optimizers that take them (SGD, Adagrad, SparseAdam) against torch."""

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

IDX = [[1, 2, 2], [4, 1, 0]]
UP = np.linspace(-1.5, 2.0, 2 * 3 * 3).reshape(2, 3, 3)  # a non-uniform upstream gradient


def _pair(dtype="float32", **kw):
    t = torch.nn.Embedding(7, 3, sparse=True, **kw).to(getattr(torch, dtype))
    e = ember.nn.Embedding(7, 3, sparse=True, **kw).to(getattr(ember, dtype))
    with ember.no_grad():
        e.weight.copy_(ember.tensor(t.weight.detach().numpy()))
    return e, t


def _coalesced(g):
    c = g.coalesce()
    return c.indices().numpy(), c.values().detach().numpy()


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"padding_idx": -3}])
def test_embedding_sparse_grad_matches_torch(kw):
    e, t = _pair("float64", **kw)
    e(ember.tensor(IDX)).backward(ember.tensor(UP))
    t(torch.tensor(IDX)).backward(torch.tensor(UP))
    ge, gt = e.weight.grad, t.weight.grad
    assert ge.is_sparse and gt.is_sparse and ge.layout is ember.sparse_coo
    assert ge.shape == tuple(gt.shape) and ge.dtype is ember.float64
    assert ge._nnz() == gt._nnz()  # uncoalesced, one row per looked-up index (padding left out)
    ie, ve = _coalesced(ge)
    it, vt = _coalesced(gt)
    np.testing.assert_array_equal(ie, it)
    np.testing.assert_allclose(ve, vt, rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_sparse_grad_matches_torch(mode):
    t = torch.nn.EmbeddingBag(7, 3, mode=mode, sparse=True).double()
    e = ember.nn.EmbeddingBag(7, 3, mode=mode, sparse=True).double()
    with ember.no_grad():
        e.weight.copy_(ember.tensor(t.weight.detach().numpy()))
    up = np.arange(6.0).reshape(2, 3) - 2
    e(ember.tensor(IDX)).backward(ember.tensor(up))
    t(torch.tensor(IDX)).backward(torch.tensor(up))
    assert e.weight.grad.is_sparse
    for a, b in zip(_coalesced(e.weight.grad), _coalesced(t.weight.grad)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_sparse_embedding_errors_match_torch():
    e, t = _pair(scale_grad_by_freq=True)
    msg = "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
    with pytest.raises(RuntimeError, match=msg):
        t(torch.tensor(IDX)).sum().backward()
    with pytest.raises(RuntimeError, match=msg):
        e(ember.tensor(IDX)).sum().backward()
    for m in (torch, ember):
        bag = m.nn.EmbeddingBag(7, 3, mode="max", sparse=True)
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            bag(m.tensor(IDX))


def test_accumulation_sparse_and_dense_match_torch():
    e, t = _pair("float64")
    for m, emb in ((ember, e), (torch, t)):
        for _ in range(2):  # sparse + sparse stays sparse
            emb(m.tensor(IDX)).backward(m.tensor(UP))
    assert e.weight.grad.is_sparse and t.weight.grad.is_sparse
    np.testing.assert_allclose(
        e.weight.grad.to_dense().numpy(), t.weight.grad.to_dense().numpy(), rtol=1e-12
    )
    # a weight also used densely: its gradient is dense, the sum of both
    outs = []
    for m, emb in ((ember, e), (torch, t)):
        emb.weight.grad = None
        w = emb.weight
        (m.nn.functional.embedding(m.tensor(IDX), w, sparse=True).sum() + (w * w).sum()).backward()
        outs.append(w.grad)
    assert not outs[0].is_sparse and not outs[1].is_sparse
    np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-12)
    # a dense .grad first, then a sparse gradient: added in place (references stay current)
    e.weight.grad = None
    (e.weight * 2).sum().backward()
    ref = e.weight.grad
    e(ember.tensor(IDX)).backward(ember.tensor(UP))
    assert e.weight.grad is ref and not ref.is_sparse
    t.weight.grad = None
    (t.weight * 2).sum().backward()
    t(torch.tensor(IDX)).backward(torch.tensor(UP))
    np.testing.assert_allclose(ref.numpy(), t.weight.grad.numpy(), rtol=1e-12)


def test_autograd_grad_returns_the_sparse_gradient():
    e, t = _pair("float64")
    (ge,) = ember.autograd.grad(e(ember.tensor(IDX)), e.weight, ember.tensor(UP))
    (gt,) = torch.autograd.grad(t(torch.tensor(IDX)), t.weight, torch.tensor(UP))
    assert ge.is_sparse and gt.is_sparse and ge._nnz() == gt._nnz()
    np.testing.assert_allclose(ge.to_dense().numpy(), gt.to_dense().numpy(), rtol=1e-12)
    assert e.weight.grad is None


def test_zero_grad_keeps_an_empty_sparse_gradient():
    for m, emb in zip((ember, torch), _pair()):
        emb(m.tensor(IDX)).sum().backward()
        opt = m.optim.SGD(emb.parameters(), lr=0.1)
        opt.zero_grad(set_to_none=False)
        assert emb.weight.grad.is_sparse and emb.weight.grad._nnz() == 0


OPTIMS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.1, "maximize": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
    ("SparseAdam", {"lr": 0.1}),
    ("SparseAdam", {"lr": 0.05, "betas": (0.8, 0.9), "maximize": True}),
]


@pytest.mark.parametrize("name,kw", OPTIMS)
def test_optimizer_trajectories_with_sparse_gradients_match_torch(name, kw):
    e, t = _pair("float64")
    batches = [IDX, [[0, 0, 3], [6, 5, 3]], [[2, 2, 2], [1, 1, 1]]]
    for m, emb in ((ember, e), (torch, t)):
        opt = getattr(m.optim, name)(emb.parameters(), **kw)
        for b in batches:
            opt.zero_grad()
            (emb(m.tensor(b)) ** 2 * m.tensor(UP)).sum().backward()
            opt.step()
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
        ("Adagrad", {"lr": 0.1, "weight_decay": 0.1}),
        ("Adam", {}),
        ("AdamW", {}),
        ("RMSprop", {}),
        ("Adadelta", {}),
        ("Adamax", {}),
        ("NAdam", {}),
        ("RAdam", {}),
        ("ASGD", {}),
        ("Rprop", {}),
    ],
)
def test_optimizers_refusing_sparse_gradients_say_what_torch_says(name, kw):
    msgs = []
    for m, emb in zip((ember, torch), _pair()):
        opt = getattr(m.optim, name)(emb.parameters(), **kw)
        emb(m.tensor(IDX)).sum().backward()
        with pytest.raises(RuntimeError) as info:
            opt.step()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_sparse_adam_refuses_dense_gradients_like_torch():
    for m in (ember, torch):
        w = m.nn.Parameter(m.ones(3, 2))
        opt = m.optim.SparseAdam([w])
        (w * 2).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            opt.step()


def test_grad_assignment_takes_coo_and_refuses_other_layouts_like_torch():
    for m in (ember, torch):
        w = m.nn.Parameter(m.ones(3, 2))
        w.grad = m.ones(3, 2).to_sparse()
        assert w.grad.is_sparse
        with pytest.raises(RuntimeError, match="gradient of size '\\[2, 3\\]'"):
            w.grad = m.ones(2, 3).to_sparse()
    w = ember.nn.Parameter(ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="data of a different type"):
        w.grad = ember.ones(3, 2).to_sparse_csr()
