"""Named dimensions in whole programs (names spec, /work/shared/spec/named_tensors.md).

Regression tests for what end-to-end named programs found (wave 12): an image classifier, a
sequence model with attention written by hand, named math inside user code the autograd engine
runs (a custom Function's backward, tensor hooks, checkpoint recomputation), the order of the name
and size checks of a failing op, composite linear algebra (householder_product) on named
inputs, and layers given axis names by naming their weights (Embedding, EmbeddingBag, Bilinear,
Linear's bias; spec 4.3). Saved-tensor unpack hooks are user code too. Each test checks names
against the spec and values/gradients against torch.
"""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import nn
from ember.utils.checkpoint import checkpoint

torch = pytest.importorskip("torch")


def _a(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ------------------------------------------------------------- names are checked before sizes
@pytest.mark.parametrize(
    ("fn", "other"),
    [
        (lambda a, b: a + b, ((3, 2), ("C", "N"))),  # a transposed operand
        (lambda a, b: a * b, ((2,), ("N",))),  # a per-batch scale not aligned with align_as
        (lambda a, b: ember.maximum(a, b), ((3, 2), ("C", "N"))),
        (lambda a, b: a.clone().add_(b), ((3, 2), ("C", "N"))),
    ],
)
def test_misnamed_operands_of_other_sizes_report_the_names(fn, other):
    # torch checks names before shapes: (N, C) + (C, N) of sizes (2, 3) and (3, 2) is a name
    # error naming both lists, not a size mismatch
    a = ember.tensor(_a(2, 3), names=("N", "C"))
    shape, names = other
    b = ember.tensor(_a(*shape, seed=1), names=names)
    with pytest.raises(RuntimeError, match=r"dims \['N', 'C'\] and dims .*do not match"):
        fn(a, b)


def test_masked_fill_with_a_misnamed_mask_reports_the_names():
    a = ember.tensor(_a(2, 3), names=("N", "C"))
    mask = ember.tensor([True, False], names=("N",))
    with pytest.raises(RuntimeError, match="masked_fill.*do not match"):
        a.masked_fill(mask, 0.0)
    # the unnamed call still reports the sizes, as torch
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        a.rename(None).masked_fill(mask.rename(None), 0.0)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        torch.zeros(2, 3).masked_fill(torch.tensor([True, False]), 0.0)


def test_unnamed_size_mismatch_keeps_the_size_error():
    a = ember.tensor(_a(2, 3), names=("N", "C"))
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        a + ember.ones(3, 2)  # no name clashes: the size error stands
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        torch.ones(2, 3) + torch.ones(3, 2)


# ------------------------------------------------------------- user code inside the engine
class _SumC(ember.autograd.Function):
    """sum over 'C' whose backward looks dims up by name, as user code does."""

    @staticmethod
    def forward(ctx, a):
        ctx.size_c = a.size("C")
        return a.sum("C")

    @staticmethod
    def backward(ctx, g):
        assert g.names == ("N",)
        u = g.align_to("N", "C")  # (N, 1), named
        return u.expand(-1, ctx.size_c) * ember.ones_like(u).softmax("C")


def test_custom_function_backward_sees_names():
    x = ember.tensor(_a(3, 4), names=("N", "C"), requires_grad=True)
    up = _a(3, seed=2)
    _SumC.apply(x).backward(ember.tensor(up, names=("N",)))
    assert x.grad.names == ("N", "C")
    np.testing.assert_allclose(x.grad.numpy(), np.repeat(up[:, None], 4, axis=1))
    xx = ember.tensor(_a(3, 4), names=("N", "C"), requires_grad=True)
    assert ember.autograd.gradcheck(_SumC.apply, (xx,))


def test_tensor_hook_sees_names():
    x = ember.tensor(_a(3, 4), names=("N", "C"), requires_grad=True)

    def center(g):  # a hook that centres the gradient over 'C', by name
        return g - g.mean("C", keepdim=True).align_as(g)

    x.register_hook(center)
    w = _a(3, 4, seed=3)
    (x * ember.tensor(w)).sum().backward()
    assert x.grad.names == ("N", "C")
    tx = torch.tensor(_a(3, 4), requires_grad=True)
    tx.register_hook(lambda g: g - g.mean(1, keepdim=True))
    (tx * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_post_accumulate_and_module_backward_hooks_see_names():
    p = nn.Parameter(ember.tensor(_a(4), names=("C",)))
    got = []
    p.register_post_accumulate_grad_hook(lambda t: got.append(t.grad.unsqueeze(0).names))
    lin = nn.Linear(4, 2).double()
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].sum("C").names))
    x = ember.tensor(_a(3, 4), names=("N", "C"))
    lin(x * p).sum().backward()
    assert got == [(None, "C")]
    assert seen == [("N",)]


def test_saved_tensor_unpack_hook_sees_names():
    seen = []

    def unpack(t):
        seen.append(t.sum("C").names)  # user code run by the engine: names flow in it
        return t

    x = ember.tensor(_a(3, 4), names=("N", "C"), requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = (x * x).sum()
    y.backward()
    assert seen and all(s == ("N",) for s in seen)
    np.testing.assert_allclose(x.grad.numpy(), 2 * _a(3, 4))
    assert x.grad.names == ("N", "C")


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_recomputes_with_names(reentrant):
    ember.manual_seed(0)
    lin = nn.Linear(4, 4).double()
    weight = ember.arange(4.0, dtype=ember.float64)

    def block(t):
        return lin(t).tanh().softmax("C")  # looks 'C' up: the recomputation must see names

    x = ember.tensor(_a(3, 4), names=("N", "C"), requires_grad=True)
    out = checkpoint(block, x, use_reentrant=reentrant)
    assert out.names == ("N", "C")
    (out * weight).sum().backward()
    assert x.grad.names == ("N", "C")
    assert lin.weight.grad.names == lin.weight.names
    got = x.grad.numpy().copy(), lin.weight.grad.numpy().copy()

    lin.zero_grad()
    x2 = ember.tensor(_a(3, 4), requires_grad=True)
    (lin(x2).tanh().softmax(1) * weight).sum().backward()
    np.testing.assert_allclose(got[0], x2.grad.numpy())
    np.testing.assert_allclose(got[1], lin.weight.grad.numpy())


# ------------------------------------------------------------- composite linear algebra
def test_householder_product_on_named_inputs():
    a, tau = _a(2, 4, 3), np.abs(_a(2, 3, seed=1))
    A = ember.tensor(a, names=("N", "R", "K"), requires_grad=True)
    t = ember.tensor(tau, names=("N", "K"), requires_grad=True)
    q = ember.linalg.householder_product(A, t)
    assert q.names == ("N", "R", "K")  # Q has A's shape: the fallback keeps A's names
    up = _a(2, 4, 3, seed=2)
    q.backward(ember.tensor(up))
    assert A.grad.names == A.names and t.grad.names == t.names

    ta, tt = torch.tensor(a, requires_grad=True), torch.tensor(tau, requires_grad=True)
    tq = torch.linalg.householder_product(ta, tt)
    tq.backward(torch.tensor(up))
    np.testing.assert_allclose(q.detach().rename(None).numpy(), tq.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(A.grad.numpy(), ta.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), atol=1e-10)
    # only tau named: the result is unnamed (the fallback: tau's shape differs)
    assert ember.linalg.householder_product(A.detach().rename(None), t.detach()).names == (
        None,
        None,
        None,
    )


# ------------------------------------------------------------- whole programs
def test_image_classifier_program():
    """(N, C, H, W) through conv/norm/pool/dropout, flatten by name, Linear, cross_entropy with
    a named target: names at every step, values and gradients equal to the unnamed run."""
    x_np, y_np = _a(4, 3, 8, 8, dtype=np.float32), np.array([0, 2, 1, 2])

    def build():
        ember.manual_seed(0)
        return nn.Sequential(
            nn.Conv2d(3, 6, 3, padding=1),
            nn.BatchNorm2d(6),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Dropout2d(0.0),
            nn.Conv2d(6, 4, 3),
            nn.AdaptiveAvgPool2d(2),
        ), nn.Linear(16, 3)

    body, head = build()
    h = ember.tensor(x_np, names=("N", "C", "H", "W"))
    for m in body:
        h = m(h)
        assert h.names == ("N", "C", "H", "W"), type(m).__name__
    logits = head(h.flatten(["C", "H", "W"], "F"))
    assert logits.names == ("N", "F")
    per = F.cross_entropy(logits, ember.tensor(y_np, names=("N",)), reduction="none")
    assert per.names == ("N",)
    per.backward(ember.tensor(_a(4, seed=5, dtype=np.float32)))
    params = list(body.parameters()) + list(head.parameters())
    assert all(p.grad.names == p.names for p in params)

    body2, head2 = build()
    per2 = F.cross_entropy(
        head2(body2(ember.tensor(x_np)).flatten(1)), ember.tensor(y_np), reduction="none"
    )
    per2.backward(ember.tensor(_a(4, seed=5, dtype=np.float32)))
    np.testing.assert_allclose(per.detach().numpy(), per2.detach().numpy(), rtol=1e-6)
    for p, p2 in zip(params, list(body2.parameters()) + list(head2.parameters())):
        np.testing.assert_allclose(p.grad.numpy(), p2.grad.numpy(), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------- named layer weights (spec 4.3)
def test_embedding_with_a_named_weight_names_the_vector_dim():
    w_np = _a(10, 4, dtype=np.float32)
    idx_np = np.array([[1, 2, 3], [4, 5, 1]])
    emb = nn.Embedding(10, 4)
    with ember.no_grad():
        emb.weight.copy_(ember.tensor(w_np))
    emb.weight.rename_("V", "E")
    idx = ember.tensor(idx_np, names=("N", "T"))
    out = emb(idx)
    assert out.names == ("N", "T", "E")
    assert F.embedding(idx.rename(None), emb.weight).names == (None, None, "E")
    up = _a(2, 3, 4, seed=4, dtype=np.float32)
    out.backward(ember.tensor(up))
    assert emb.weight.grad.names == ("V", "E")
    tw = torch.tensor(w_np, requires_grad=True)
    tout = torch.nn.functional.embedding(torch.tensor(idx_np), tw)
    tout.backward(torch.tensor(up))
    np.testing.assert_allclose(out.detach().rename(None).numpy(), tout.detach().numpy())
    np.testing.assert_allclose(emb.weight.grad.numpy(), tw.grad.numpy())
    # an index dim named like the vector dim would give duplicate names
    with pytest.raises(RuntimeError, match="duplicate names"):
        emb(idx.rename("N", "E"))
    # an unnamed weight: the vector dim is created, so unnamed (as before)
    assert nn.Embedding(10, 4)(idx).names == ("N", "T", None)


def test_embedding_bag_with_a_named_weight_names_the_vector_dim():
    bag = nn.EmbeddingBag(10, 4, mode="sum")
    bag.weight.rename_("V", "E")
    idx = ember.tensor([[1, 2, 3], [4, 5, 1]], names=("N", "L"))
    out = bag(idx)
    assert out.names == ("N", "E")
    np.testing.assert_allclose(
        out.detach().rename(None).numpy(),
        bag.weight.detach().rename(None)[idx.rename(None)].sum(1).numpy(),
        rtol=1e-6,
    )
    flat = ember.tensor([1, 2, 3, 4], names=("L",))
    assert bag(flat, ember.tensor([0, 2])).names == (None, "E")


def test_bilinear_with_a_named_weight():
    x1_np, x2_np, w_np, b_np = _a(2, 3), _a(2, 4, seed=1), _a(5, 3, 4, seed=2), _a(5, seed=3)
    w = ember.tensor(w_np, names=("O", "A", "B"), requires_grad=True)
    x1 = ember.tensor(x1_np, names=("N", "A"), requires_grad=True)
    x2 = ember.tensor(x2_np, names=("N", "B"))
    out = F.bilinear(x1, x2, w, ember.tensor(b_np))
    assert out.names == ("N", "O")
    up = _a(2, 5, seed=6)
    out.backward(ember.tensor(up))
    assert w.grad.names == w.names and x1.grad.names == x1.names
    tw, tx1 = torch.tensor(w_np, requires_grad=True), torch.tensor(x1_np, requires_grad=True)
    tout = torch.nn.functional.bilinear(tx1, torch.tensor(x2_np), tw, torch.tensor(b_np))
    tout.backward(torch.tensor(up))
    np.testing.assert_allclose(out.detach().rename(None).numpy(), tout.detach().numpy())
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())
    np.testing.assert_allclose(x1.grad.numpy(), tx1.grad.numpy())
    with pytest.raises(RuntimeError, match="features dim of input2 is named 'C'.*expects 'B'"):
        F.bilinear(x1, x2.rename("N", "C"), w)
    # an unnamed weight: the output features dim is created, so unnamed
    assert F.bilinear(x1, x2, w.detach().rename(None)).names == ("N", None)


def test_linear_bias_name_must_agree_with_a_named_weight():
    lin = nn.Linear(4, 3).double()
    lin.weight.rename_("O", "C")
    lin.bias.rename_("O")
    x = ember.tensor(_a(2, 4), names=("N", "C"))
    assert lin(x).names == ("N", "O")
    lin.bias.rename_("P")
    with pytest.raises(
        RuntimeError, match=r"linear: .*dim 'O' and dim 'P'|linear: .*dim 'P' and dim 'O'"
    ):
        lin(x)
    # a weight with an unnamed output dim: the bias names it (addmm's rule)
    lin.weight.rename_(None, "C")
    assert lin(x).names == ("N", "P")
