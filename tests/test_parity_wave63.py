"""Parity regressions found by the sixty-third wave, a second pass over sparse tensors as graph
and recommender code uses them (torch.sparse.mm/mm/@/spmm/addmm with gradients, sparse.sum,
sparse (log_)softmax, to_dense gradients, sparse_mask, elementwise ops, transposes,
index_select/narrow_copy, hspmm/smm, CSR, sparse embeddings with SparseAdam/SGD, EmbeddingBag, a
GCN layer trained for a few steps, save/load, printing, accessors, hybrid tensors and errors;
torch is the oracle): the gradient of an uncoalesced sparse leaf (torch lists each position once,
so the gradient's dense form is the gradient of the dense tensor; ember gave every duplicate its
own entry, a multiple of it), ``sparse * sparse`` (torch multiplies at the positions both store,
COO and CSR, and refuses the other layouts and mismatched sparse shapes; ember refused it),
``narrow_copy`` of a COO tensor (method and function, sparse and dense dims, torch's errors;
ember refused it), ``torch.hspmm`` (a hybrid result with one sparse dim; ember lacked it),
``index_select`` of a COO tensor (torch keeps every stored entry, duplicates and explicit zeros
included; ember went through the dense tensor and dropped them), ``cat``/``stack`` of COO tensors
(torch joins the entries; ember refused cat and stacked through the dense tensor), the in-place
``add_``/``sub_``/``mul_``/``div_`` (ember refused them) with torch's dtype errors, torch's words
for ``s + scalar``, ``t()``/``transpose`` of hybrid tensors, ``sparse.addmm`` with a sparse input
and ``requires_grad`` on integer sparse tensors, a pickled or saved COO tensor dropping
``requires_grad`` (a compressed one keeps it), ``_values()`` aliasing the values outside
autograd (ember's tracked gradients), sparse @ sparse (torch: CSR for two compressed operands,
its error for a COO one with a compressed one, and its shape error; ember gave COO and an addmm
message) and ``smm``'s result flagged uncoalesced."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

IDX = [[0, 1, 1, 0, 2], [2, 0, 0, 2, 3]]  # duplicates at (0, 2) and (1, 0): uncoalesced
VALS = [1.0, 2.0, 3.0, -4.0, 0.5]
UP = np.linspace(0.3, -2.0, 12).reshape(3, 4).astype("float32")  # a non-uniform upstream grad
UP2 = np.linspace(0.3, -2.0, 6).reshape(3, 2).astype("float32")
D = np.arange(8.0, dtype="float32").reshape(4, 2)


def _close(e, t):
    ed = e.to_dense() if e.layout is not ember.strided else e
    td = t.to_dense() if t.layout is not torch.strided else t
    np.testing.assert_allclose(ed.detach().numpy(), td.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.layout.name == str(t.layout).split(".")[1]


def _leaf(m):
    return m.sparse_coo_tensor(IDX, VALS, (3, 4), requires_grad=True)


# ------------------------------------------------------------ gradients of uncoalesced leaves
@pytest.mark.parametrize(
    "f",
    [
        lambda m, s: s.to_dense().backward(m.tensor(UP)),
        lambda m, s: m.sparse.mm(s, m.tensor(D)).backward(m.tensor(UP2)),
        lambda m, s: (s * m.tensor(UP)).to_dense().sum().backward(),
        lambda m, s: (s * 2).to_dense().backward(m.tensor(UP)),
    ],
    ids=["to_dense", "sparse.mm", "mul_dense", "mul_scalar"],
)
def test_uncoalesced_leaf_grad_lists_each_position_once(f):
    e, t = _leaf(ember), _leaf(torch)
    f(ember, e)
    f(torch, t)
    _close(e.grad, t.grad)
    assert e.grad._nnz() == t.grad._nnz() == 3
    assert e.grad.is_coalesced() == t.grad.is_coalesced()
    np.testing.assert_array_equal(e.grad._indices().numpy(), t.grad._indices().numpy())


def test_coalesced_leaf_grad_unchanged():
    e = ember.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce().requires_grad_()
    t = torch.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce().requires_grad_()
    e.to_dense().backward(ember.tensor(UP))
    t.to_dense().backward(torch.tensor(UP))
    _close(e.grad, t.grad)


# ------------------------------------------------------------ sparse * sparse
B_IDX, B_VALS = [[0, 2, 1], [2, 3, 1]], [2.0, 3.0, 4.0]


@pytest.mark.parametrize("how", ["op", "mul", "functional"])
def test_sparse_times_sparse(how):
    def run(m):
        a = m.sparse_coo_tensor(IDX, VALS, (3, 4))
        b = m.sparse_coo_tensor(B_IDX, B_VALS, (3, 4))
        return {"op": lambda: a * b, "mul": lambda: a.mul(b), "functional": lambda: m.mul(a, b)}[
            how
        ]()

    _close(run(ember), run(torch))


def test_sparse_times_sparse_grad_and_hybrid():
    def run(m):
        a = m.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce().requires_grad_()
        b = m.sparse_coo_tensor(B_IDX, B_VALS, (3, 4)).coalesce().requires_grad_()
        (a * b).to_dense().backward(m.tensor(UP))
        h = m.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (3, 2))
        return a.grad, b.grad, h * h

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)


def test_csr_times_csr_and_int_operand():
    def run(m):
        a = m.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce()
        c = a.to_sparse_csr()
        return c * c, a * m.sparse_coo_tensor(B_IDX, [2, 3, 4], (3, 4))

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)


@pytest.mark.parametrize(("shape", "sidx"), [((3,), [[0]]), ((3, 5), B_IDX)])
def test_sparse_times_sparse_shape_error(shape, sidx):
    msg = "expects sparse inputs with equal dimensionality, number of sparse dimensions"
    for m in (torch, ember):
        a = m.sparse_coo_tensor(IDX, VALS, (3, 4))
        b = m.sparse_coo_tensor(sidx, [1.0] * len(sidx[0]), shape)
        with pytest.raises(RuntimeError, match=msg):
            a * b


# ------------------------------------------------------------ narrow_copy
@pytest.mark.parametrize(
    ("coalesce", "dim", "start", "length"),
    [(False, 1, 1, 2), (False, 0, 1, 2), (True, 0, 1, 2), (True, 1, 2, 2), (False, 1, 4, 0)],
)
def test_narrow_copy_coo(coalesce, dim, start, length):
    def run(m):
        s = m.sparse_coo_tensor(IDX, VALS, (3, 4))
        s = s.coalesce() if coalesce else s
        return s.narrow_copy(dim, start, length), m.narrow_copy(s, dim, start, length)

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)
        assert e.is_coalesced() == t.is_coalesced()


def test_narrow_copy_hybrid_dense_dim():
    def run(m):
        h = m.sparse_coo_tensor([[0, 2]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], (3, 3))
        return h.narrow_copy(1, 1, 2), h.narrow_copy(0, 1, 2)

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)
        assert e.is_coalesced() == t.is_coalesced()


@pytest.mark.parametrize(
    ("args", "msg"),
    [
        ((1, 3, 2), r"must be a subset of range\(0, 4\)"),
        ((1, -3, 2), r"must be a subset of range\(0, 4\)"),
        ((1, 1, -1), r"narrow\(\): length must be non-negative\."),
        ((-1, 1, 2), r"Dimension -1 out of range\. Expecting 0 <= dim < 2\."),
        ((2, 0, 1), r"Dimension 2 out of range\. Expecting 0 <= dim < 2\."),
    ],
)
def test_narrow_copy_errors(args, msg):
    for m in (torch, ember):
        s = m.sparse_coo_tensor(IDX, VALS, (3, 4))
        with pytest.raises(RuntimeError, match=msg):
            s.narrow_copy(*args)


def test_narrow_copy_gradcheck():
    # torch has no sparse narrow_copy derivative; ember's follows the stored values
    i = ember.tensor([[0, 2, 2], [1, 0, 3]])

    def f(v):
        s = ember.sparse_coo_tensor(i, v, (3, 4, 2))
        return s.narrow_copy(1, 1, 3).to_dense() + s.narrow_copy(2, 1, 1).to_dense().sum()

    v = ember.tensor(np.linspace(-1, 1, 6).reshape(3, 2), requires_grad=True)
    assert ember.autograd.gradcheck(f, (v,))


# ------------------------------------------------------------ hspmm
def test_hspmm():
    def run(m):
        s = m.sparse_coo_tensor(IDX, VALS, (3, 4))
        d = m.tensor(D)
        out = m.hspmm(s, d)
        return out, out.sparse_dim(), out.dense_dim(), out.is_coalesced(), hasattr(s, "hspmm")

    res_e, res_t = run(ember), run(torch)
    _close(res_e[0], res_t[0])
    assert res_e[1:] == res_t[1:] == (1, 1, False, False)
    np.testing.assert_array_equal(res_e[0]._indices().numpy(), res_t[0]._indices().numpy())


def test_hspmm_gradcheck():
    # torch has no hspmm derivative; ember's reaches the sparse values and the dense operand
    i = ember.tensor([[0, 2, 2], [1, 0, 3]])
    d = ember.tensor(D.astype("float64"), requires_grad=True)
    v = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64, requires_grad=True)

    def f(v, d):
        return ember.hspmm(ember.sparse_coo_tensor(i, v, (3, 4)), d).to_dense()

    assert ember.autograd.gradcheck(f, (v, d))


_LAYOUTS = {
    "coo": lambda s: s,
    "csr": lambda s: s.to_sparse_csr(),
    "csc": lambda s: s.to_sparse_csc(),
    "bsr": lambda s: s.to_sparse_bsr((1, 1)),
    "bsc": lambda s: s.to_sparse_bsc((1, 1)),
}


@pytest.mark.parametrize("la", list(_LAYOUTS))
@pytest.mark.parametrize("lb", list(_LAYOUTS))
def test_sparse_times_sparse_layouts(la, lb):
    def run(m):
        a = m.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce()
        b = m.sparse_coo_tensor(B_IDX, B_VALS, (3, 4)).coalesce()
        try:
            return _LAYOUTS[la](a) * _LAYOUTS[lb](b)
        except RuntimeError as err:
            return str(err)

    e, t = run(ember), run(torch)
    if isinstance(t, str):
        assert e == t
    else:
        _close(e, t)


# ------------------------------------------------------------ index_select
ZVALS = [1.0, 2.0, 3.0, -1.0, 0.0]  # (0, 2) sums to 0 and (2, 3) stores an explicit zero


@pytest.mark.parametrize(
    ("coalesce", "dim", "index"),
    [
        (False, 0, [2, 0, 0]),
        (True, 0, [2, 0, 0]),
        (False, 1, [3, 2]),
        (False, 0, [1]),
        (True, 0, [0, 2]),
        (False, 1, [-1, 0]),
        (False, -1, [1]),
        (False, 0, []),
        (False, 0, [2]),
    ],
)
def test_index_select_keeps_stored_entries(coalesce, dim, index):
    def run(m):
        s = m.sparse_coo_tensor(IDX, ZVALS, (3, 4))
        s = s.coalesce() if coalesce else s
        i = m.tensor(index, dtype=m.int64)
        return s.index_select(dim, i), m.index_select(s, dim, i)

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)
        assert e._nnz() == t._nnz()
        assert e.is_coalesced() == t.is_coalesced()
        np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
        np.testing.assert_array_equal(e._values().numpy(), t._values().numpy())


def test_index_select_hybrid_dense_dim():
    def run(m):
        h = m.sparse_coo_tensor([[0, 2]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], (3, 3))
        return h.index_select(1, m.tensor([2, 0, 2])), h.index_select(0, m.tensor([2, 2]))

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)
        assert e._nnz() == t._nnz()


@pytest.mark.parametrize(
    ("dim", "index", "msg"),
    [
        (0, [3], r"index contains 3 that is out of range for tensor of size \[3, 4\] at dim"),
        (0, [[0]], r"argument index must be 1-D strided \(non-sparse\) long-tensor\."),
        (0, [0.0], r"argument index must be 1-D strided \(non-sparse\) long-tensor\."),
        (2, [0], r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    ],
)
def test_index_select_errors(dim, index, msg):
    for m in (torch, ember):
        s = m.sparse_coo_tensor(IDX, ZVALS, (3, 4))
        with pytest.raises(IndexError, match=msg):
            s.index_select(dim, m.tensor(index))


def test_index_select_gradcheck():
    # torch has no sparse index_select derivative; ember's reaches the stored values
    def f(v):
        s = ember.sparse_coo_tensor(IDX, v, (3, 4))
        return s.index_select(0, ember.tensor([2, 0, 0, 1])).to_dense()

    v = ember.tensor(np.linspace(-1, 1, 5), requires_grad=True)
    assert ember.autograd.gradcheck(f, (v,))


# ------------------------------------------------------------ cat / stack
def _pair(m):
    s = m.sparse_coo_tensor(IDX, ZVALS, (3, 4))
    return s, m.sparse_coo_tensor([[0], [1]], [7.0], (3, 4))


@pytest.mark.parametrize(
    "f",
    [
        lambda m, a, b: m.stack([a, b]),
        lambda m, a, b: m.stack([a.coalesce(), a.coalesce()]),
        lambda m, a, b: m.stack([a, b], 1),
        lambda m, a, b: m.stack([a, b], 2),
        lambda m, a, b: m.stack([a, b], -1),
        lambda m, a, b: m.cat([a, b]),
        lambda m, a, b: m.cat([a.coalesce(), b], 1),
        lambda m, a, b: m.cat([a, b], -1),
        lambda m, a, b: m.cat([a, m.sparse_coo_tensor([[0], [1]], [7.0], (3, 5))], 1),
        lambda m, a, b: m.cat([a.coalesce(), b.to(m.float64)]),
        lambda m, a, b: m.cat((a,)),
    ],
)
def test_cat_stack_coo_join_entries(f):
    e, t = f(ember, *_pair(ember)), f(torch, *_pair(torch))
    _close(e, t)
    assert e._nnz() == t._nnz()
    assert e.is_coalesced() == t.is_coalesced()
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    np.testing.assert_array_equal(e._values().numpy(), t._values().numpy())


@pytest.mark.parametrize(
    ("f", "exc", "msg"),
    [
        (lambda m, a, b: m.cat([a, m.ones(3, 4)]), RuntimeError, "dense tensor was found at"),
        (lambda m, a, b: m.stack([a, m.ones(3, 4)]), RuntimeError, "dense tensor was found at"),
        (
            lambda m, a, b: m.cat([a, m.sparse_coo_tensor([[0]], [1.0], (3,))]),
            RuntimeError,
            r"but found shape: \[3\] at position 1\.",
        ),
        (
            lambda m, a, b: m.stack([a, m.sparse_coo_tensor([[0], [1]], [7.0], (3, 5))]),
            RuntimeError,
            r"equal size, but got \[3, 4\] at entry 0 and \[3, 5\] at entry 1",
        ),
        (lambda m, a, b: m.stack([a, b], 3), IndexError, r"range of \[-3, 2\], but got 3"),
        (lambda m, a, b: m.cat([a, b], 2), IndexError, r"range of \[-2, 1\], but got 2"),
    ],
)
def test_cat_stack_coo_errors(f, exc, msg):
    for m in (torch, ember):
        with pytest.raises(exc, match=msg):
            f(m, *_pair(m))


def test_cat_stack_gradcheck():
    # torch's sparse cat/stack have derivatives too; ember's reach each operand's values
    def f(v, w):
        a = ember.sparse_coo_tensor(IDX, v, (3, 4))
        b = ember.sparse_coo_tensor([[0, 2], [1, 1]], w, (3, 4))
        return ember.cat([a, b], 1).to_dense() + ember.stack([b, a], 2).to_dense().sum()

    v = ember.tensor(np.linspace(-1, 1, 5), requires_grad=True)
    w = ember.tensor([0.5, -2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(f, (v, w))


# ------------------------------------------------------------ in-place arithmetic
@pytest.mark.parametrize(
    "f",
    [
        lambda m, s: s.mul_(2),
        lambda m, s: s.mul_(m.tensor(2.0)),
        lambda m, s: s.mul_(m.tensor(UP)),
        lambda m, s: s.div_(4),
        lambda m, s: s.div_(2, rounding_mode="floor"),
        lambda m, s: s.mul_(m.ones(4)),
    ],
)
def test_inplace_scalar_and_dense(f):
    e, t = ember.sparse_coo_tensor(IDX, VALS, (3, 4)), torch.sparse_coo_tensor(IDX, VALS, (3, 4))
    assert f(ember, e) is e
    assert f(torch, t) is t
    _close(e, t)
    assert e._nnz() == t._nnz()
    assert e.is_coalesced() == t.is_coalesced()


@pytest.mark.parametrize(
    "f",
    [
        lambda m, s: s.sub_(s),
        lambda m, s: s.add_(s, alpha=2),
        lambda m, s: s.sub_(m.sparse_coo_tensor([[0], [0]], [1.0], (3, 4))),
        lambda m, s: s.mul_(s),
        lambda m, s: s.mul_(m.sparse_coo_tensor([[0], [2]], [3.0], (3, 4))),
    ],
)
def test_inplace_sparse_operand_values(f):
    # the values match torch's; the stored entries may differ (ember coalesces, torch may not)
    e, t = ember.sparse_coo_tensor(IDX, VALS, (3, 4)), torch.sparse_coo_tensor(IDX, VALS, (3, 4))
    assert f(ember, e) is e
    assert f(torch, t) is t
    _close(e, t)


@pytest.mark.parametrize(
    ("f", "msg"),
    [
        (lambda m, s: s.add_(m.ones(3, 4)), r"add\(sparse, dense\) is not supported\."),
        (lambda m, s: s.add_(1), r"add\(sparse, dense\) is not supported\."),
        (lambda m, s: s + 1, r"add\(sparse, dense\) is not supported\."),
        (lambda m, s: s.div_(m.ones(3, 4)), r"requires a scalar or zero-dim dense tensor divisor"),
        (
            lambda m, s: s.add_(m.sparse_coo_tensor([[0]], [1.0], (3,))),
            r"expected sizes of 'self' and 'other' to match, but \[3, 4\] != \[3\]",
        ),
        (
            lambda m, s: s.long().mul_(2.5),
            r"dtype of values \(Float\) must match dtype of sparse tensor \(Long\)",
        ),
        (
            lambda m, s: s.long().mul_(s),
            r"^Can't convert result type Float to output Long$",
        ),
        (
            lambda m, s: s.long().div_(2),
            r"result type Float can't be cast to the desired output type Long",
        ),
        (
            lambda m, s: s.long().add_(s),
            r"Can't convert result type Float to output Long in add operation",
        ),
        (
            lambda m, s: s.requires_grad_().mul_(2),
            r"a leaf Variable that requires grad is being used in an in-place operation\.",
        ),
    ],
)
def test_inplace_errors(f, msg):
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=msg):
            f(m, m.sparse_coo_tensor(IDX, VALS, (3, 4)))


# ------------------------------------------------------------ errors torch words its own way
def _hybrid(m):
    return m.sparse_coo_tensor([[0, 2, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], (3, 2))


@pytest.mark.parametrize(
    ("f", "msg"),
    [
        (
            lambda m: _hybrid(m).t(),
            r"<= 2 sparse and 0 dense dimensions, but got 1 sparse and 1 dense dimensions",
        ),
        (
            lambda m: m.sparse_coo_tensor([[0, 1], [1, 2], [0, 0]], [1.0, 2.0], (2, 3, 2)).t(),
            r"but got 3 sparse and 0 dense dimensions",
        ),
        (
            lambda m: _hybrid(m).transpose(0, 1),
            r"transposed dimensions must be sparse Got sparse_dim: 1, d0: 0, d1: 1",
        ),
        (
            lambda m: _hybrid(m).transpose(1, 0),
            r"must be sparse Got sparse_dim: 1, d0: 1, d1: 0",
        ),
        (
            lambda m: m.sparse_coo_tensor(IDX, [1, 2, 3, 4, 5], (3, 4)).requires_grad_(),
            r"^only Tensors of floating point dtype can require gradients$",
        ),
        (
            lambda m: setattr(
                m.sparse_coo_tensor(IDX, [1, 2, 3, 4, 5], (3, 4)), "requires_grad", True
            ),
            r"^only Tensors of floating point and complex dtype can require gradients$",
        ),
        (
            lambda m: m.sparse_coo_tensor(IDX, [1, 2, 3, 4, 5], (3, 4), requires_grad=True),
            r"^Only Tensors of floating point and complex dtype can require gradients$",
        ),
    ],
)
def test_sparse_errors_in_torch_words(f, msg):
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=msg):
            f(m)


def test_sparse_addmm_sparse_input_error():
    msg = r"addmm_sparse_dense: expected strided result tensor, got tensor with layout Sparse"
    for m in (torch, ember):
        c = m.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce()
        with pytest.raises(RuntimeError, match=msg):
            m.sparse.addmm(c, c, m.ones(4, 4))


# ------------------------------------------------------------ save / load
@pytest.mark.parametrize("how", ["save", "pickle"])
@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_saved_sparse_requires_grad(how, layout):
    import io
    import pickle

    def run(m):
        s = m.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce()
        s = (s if layout == "coo" else s.to_sparse_csr()).requires_grad_()
        out = []
        for t in (s, s * 2):
            if how == "pickle":
                back = pickle.loads(pickle.dumps(t.detach() if t.grad_fn else t))
            else:
                buf = io.BytesIO()
                m.save({"t": t}, buf)
                buf.seek(0)
                back = m.load(buf)["t"]
            out.append((back.requires_grad, str(back.layout).split(".")[1]))
        return out

    assert run(ember) == run(torch)


# ------------------------------------------------------------ raw values
def test_raw_values_alias_outside_autograd():
    def run(m):
        leaf = m.sparse_coo_tensor(IDX, VALS, (3, 4), requires_grad=True)
        v = m.tensor(VALS, requires_grad=True)
        nonleaf = m.sparse_coo_tensor(IDX, v * 1, (3, 4))
        out = []
        for s in (leaf, nonleaf):
            x = s._values()
            out.append((x.requires_grad, x.is_leaf, x.grad_fn is None))
        leaf._values().mul_(2)  # an alias: the sparse tensor sees the change
        c = leaf.coalesce()
        out.append(leaf._values().tolist())
        out.append((c.values().requires_grad, leaf.coalesce().requires_grad))
        return out

    assert run(ember) == run(torch)


# ------------------------------------------------------------ sparse @ sparse, smm
_MM_LAYOUTS = {
    "coo": lambda s: s,
    "csr": lambda s: s.to_sparse_csr(),
    "csc": lambda s: s.to_sparse_csc(),
}


@pytest.mark.parametrize("la", list(_MM_LAYOUTS))
@pytest.mark.parametrize("lb", list(_MM_LAYOUTS))
def test_sparse_matmul_sparse_layouts(la, lb):
    def run(m):
        a = m.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce()
        b = m.sparse_coo_tensor([[0, 2, 3], [1, 0, 1]], [2.0, 3.0, 4.0], (4, 2)).coalesce()
        try:
            return _MM_LAYOUTS[la](a) @ _MM_LAYOUTS[lb](b)
        except RuntimeError as err:
            return str(err)

    e, t = run(ember), run(torch)
    if isinstance(t, str):
        assert e == t
    else:
        _close(e, t)


@pytest.mark.parametrize("f", [lambda m, a: m.sparse.mm(a, a), lambda m, a: m.mm(a, a), "csr"])
def test_sparse_matmul_sparse_shape_error(f):
    msg = r"^mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x4\)$"
    for m in (torch, ember):
        a = m.sparse_coo_tensor(IDX, VALS, (3, 4)).coalesce()
        with pytest.raises(RuntimeError, match=msg):
            if f == "csr":
                m.sparse.mm(a.to_sparse_csr(), a.to_sparse_csr())
            else:
                f(m, a)


def test_smm_flags_uncoalesced():
    def run(m):
        r = m.smm(m.sparse_coo_tensor(IDX, VALS, (3, 4)), m.tensor(D))
        return r, r.is_coalesced(), r._nnz()

    (e, *fe), (t, *ft) = run(ember), run(torch)
    _close(e, t)
    assert fe == ft
