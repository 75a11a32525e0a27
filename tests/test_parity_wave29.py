"""Parity regressions found by the twenty-ninth wave, a short sweep of sparse tensors
(construction, coalescing, conversions between layouts, accessors, torch.sparse.mm/addmm/sum/
softmax/spdiags, arithmetic, gradients, sparse embeddings with their optimizers, printing and
errors; torch is the oracle): a COO tensor whose size is inferred from negative indices (torch's
"found negative index" error; ember built a tensor of size 0), the zero-preserving elementwise ops
on sparse tensors (abs, sqrt, sin, tanh, sign, ..., ``sparse ** scalar`` and its zeroth-power
error: torch coalesces and maps the stored values; ember refused them), floor division and
``div(rounding_mode=...)`` (and torch's divisor-shape error), ``sparse @ vector``,
``sparse * dense`` with a dense operand that broadcasts to the sparse shape, CSR * dense (a CSR
result), CSR/CSC +
dense (a dense result) and CSR - dense's error, the transpose of the compressed layouts (CSR <->
CSC, BSR <-> BSC), unsqueeze/permute of COO tensors, ``torch.sparse.mm`` with a dense first matrix
and with ``reduce='mean'/'amax'/'amin'`` (values and gradients), the dtype errors of sparse
(log_)softmax, repeated dims in ``sparse.sum``, spdiags' layout error, ``torch.equal`` on sparse
tensors (torch raises; ember answered False even for a tensor and itself), and ``zeros``/
``empty``/``zeros_like``/``empty_like`` with a sparse layout or input (torch returns a sparse
tensor with no specified elements; ember returned a dense one or refused)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

IDX = [[0, 1, 1, 0, 2], [2, 0, 0, 2, 3]]  # duplicates at (0, 2) and (1, 0): uncoalesced
VALS = [1.0, 2.0, 3.0, -4.0, 0.5]
UP = np.linspace(0.3, -2.0, 12).reshape(3, 4).astype("float32")  # a non-uniform upstream grad


def _both(m, vals=VALS, **kw):
    return m.sparse_coo_tensor(IDX, vals, (3, 4), **kw)


def _close(e, t):
    ed = e.to_dense() if e.layout is not ember.strided else e
    td = t.to_dense() if t.layout is not torch.strided else t
    np.testing.assert_allclose(ed.detach().numpy(), td.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.layout.name == str(t.layout).split(".")[1]


# ------------------------------------------------------------ construction
@pytest.mark.parametrize(
    ("idx", "msg"),
    [([[-1]], "found negative index -1 for dim 0"), ([[0, 1], [-1, 0]], "for dim 1")],
)
def test_coo_inferred_size_rejects_negative_indices(idx, msg):
    vals = [1.0] * len(idx[0])
    with pytest.raises(RuntimeError, match=msg):
        torch.sparse_coo_tensor(idx, vals)
    with pytest.raises(RuntimeError, match=msg):
        ember.sparse_coo_tensor(idx, vals)


# ------------------------------------------------------------ zero-preserving elementwise ops
UNARY = [
    "abs",
    "sqrt",
    "sin",
    "sinh",
    "tan",
    "tanh",
    "asinh",
    "atan",
    "square",
    "sign",
    "sgn",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "expm1",
    "log1p",
    "erf",
    "deg2rad",
    "rad2deg",
    "relu",
    "signbit",
    "isnan",
    "isinf",
    "isposinf",
    "isneginf",
    "nan_to_num",
]


@pytest.mark.parametrize("name", UNARY)
def test_zero_preserving_unary_on_coo(name):
    t = getattr(_both(torch), name)()
    e = getattr(_both(ember), name)()
    _close(e, t)
    assert e.is_coalesced() == t.is_coalesced()  # coalesced first, as torch does
    assert e._nnz() == t._nnz()
    _close(getattr(ember, name)(_both(ember)), getattr(torch, name)(_both(torch)))


@pytest.mark.parametrize("name", ["abs", "sin", "sqrt", "neg"])
def test_zero_preserving_unary_on_csr(name):
    d = [[0.0, -1.5], [2.0, 0.0]]
    t = getattr(torch.tensor(d).to_sparse_csr(), name)()
    e = getattr(ember.tensor(d).to_sparse_csr(), name)()
    _close(e, t)


def test_unary_not_zero_preserving_still_refused():
    with pytest.raises(RuntimeError):
        torch.exp(_both(torch))
    with pytest.raises(RuntimeError):
        ember.exp(_both(ember))


@pytest.mark.parametrize("p", [2, 3.0, 0.5, -1])
def test_pow_scalar(p):
    _close(_both(ember) ** p, _both(torch) ** p)
    assert (_both(ember) ** p).is_coalesced() == (_both(torch) ** p).is_coalesced()


def test_pow_zero_error():
    msg = "pow: cannot raise to zeroth power on sparse tensor; it would make the result"
    with pytest.raises(RuntimeError, match=msg):
        _both(torch) ** 0
    with pytest.raises(RuntimeError, match=msg):
        _both(ember) ** 0


@pytest.mark.parametrize("op", ["abs_sin", "pow3"])
def test_unary_gradients(op):
    def run(m):
        v = m.tensor(VALS, requires_grad=True)
        s = m.sparse_coo_tensor(IDX, v, (3, 4))
        r = s.abs().sin() if op == "abs_sin" else s**3
        return r, v

    e, ev = run(ember)
    (e.to_dense() * ember.tensor(UP)).sum().backward()
    if op == "pow3":  # torch differentiates pow on sparse values (not sin: no sparse cos)
        t, tv = run(torch)
        (t.to_dense() * torch.tensor(UP)).sum().backward()
        np.testing.assert_allclose(ev.grad.numpy(), tv.grad.numpy(), rtol=1e-6)
    v = ember.tensor(VALS, dtype=ember.float64, requires_grad=True)

    def f(v):
        s = ember.sparse_coo_tensor(IDX, v, (3, 4))
        return (s.abs().sin() if op == "abs_sin" else s**3).to_dense()

    assert ember.autograd.gradcheck(f, (v,))


# ------------------------------------------------------------ matrix products
def test_sparse_matmul_vector_and_gradient():
    def run(m):
        v = m.tensor(VALS, requires_grad=True)
        x = m.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True)
        r = m.sparse_coo_tensor(IDX, v, (3, 4)) @ x
        (r * m.tensor([0.3, -1.0, 2.0])).sum().backward()
        return r, v.grad, x.grad

    for a, b in zip(run(ember), run(torch)):
        _close(a, b)
    _close(ember.matmul(_both(ember), ember.ones(4)), torch.matmul(_both(torch), torch.ones(4)))
    c = [[0.0, 1.0], [2.0, 0.0]]
    _close(
        ember.tensor(c).to_sparse_csr() @ ember.tensor([1.0, 3.0]),
        torch.tensor(c).to_sparse_csr() @ torch.tensor([1.0, 3.0]),
    )


@pytest.mark.parametrize("second", ["dense", "sparse"])
def test_sparse_mm_dense_first(second):
    a = [[1.0, 2.0], [3.0, -4.0]]
    b = [[0.0, 1.5], [2.0, 0.0]]
    tb, eb = torch.tensor(b), ember.tensor(b)
    if second == "sparse":
        tb, eb = tb.to_sparse(), eb.to_sparse()
    _close(ember.sparse.mm(ember.tensor(a), eb), torch.sparse.mm(torch.tensor(a), tb))


# ------------------------------------------------------------ sparse * broadcast dense
@pytest.mark.parametrize("shape", [(3, 1), (4,), (1, 4)])
def test_mul_broadcast_dense_and_gradient(shape):
    w0 = np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape).astype("float32")

    def run(m, dense_ref=False):
        v = m.tensor(VALS, requires_grad=True)
        w = m.tensor(w0, requires_grad=True)
        s = m.sparse_coo_tensor(IDX, v, (3, 4))
        # torch cannot differentiate every broadcast of sparse * dense: its reference gradient
        # is the dense product's (the unspecified zeros contribute nothing)
        r = s.to_dense() * w if dense_ref else s * w
        (r.to_dense() * m.tensor(UP)).sum().backward()
        return r, v.grad, w.grad

    (er, ev, ew), (tr, tv, tw) = run(ember), run(torch, dense_ref=True)
    _close(er.to_dense(), tr)
    assert er.layout is ember.sparse_coo
    t = _both(torch) * torch.tensor(w0)
    assert er._nnz() == t._nnz() and er.is_coalesced() == t.is_coalesced()
    _close(er, t)
    _close(ev, tv)
    np.testing.assert_allclose(ew.numpy(), tw.numpy(), rtol=1e-6)


def test_mul_non_broadcastable_dense_errors():
    with pytest.raises(RuntimeError):
        _both(torch) * torch.ones(3, 5)
    with pytest.raises(RuntimeError):
        _both(ember) * ember.ones(3, 5)


# ------------------------------------------------------------ equal
@pytest.mark.parametrize("which", ["both", "first", "second"])
def test_equal_on_sparse_raises(which):
    for m in (torch, ember):
        s = _both(m)
        a, b = {"both": (s, s), "first": (s, s.to_dense()), "second": (s.to_dense(), s)}[which]
        with pytest.raises((RuntimeError, NotImplementedError)):
            m.equal(a, b)


def test_equal_quantized_unchanged():
    q = ember.quantize_per_tensor(ember.ones(2), 0.1, 0, ember.quint8)
    assert ember.equal(q, q)
    assert not ember.equal(q, ember.ones(2))
    assert not ember.equal(ember.ones(2), q)


# ------------------------------------------------------------ zeros/empty with a sparse layout
@pytest.mark.parametrize("name", ["zeros", "empty"])
@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr", "sparse_csc"])
@pytest.mark.parametrize("shape", [(2, 3), (4,)])
def test_factory_sparse_layout(name, layout, shape):
    def run(m):
        return getattr(m, name)(shape, layout=getattr(m, layout), dtype=m.float64)

    if layout != "sparse_coo" and len(shape) == 1:
        msg = "Only batched sparse compressed \\(non-block\\) tensors are supported, but got size"
        with pytest.raises(RuntimeError, match=msg):
            run(torch)
        with pytest.raises(RuntimeError, match=msg):
            run(ember)
        return
    t, e = run(torch), run(ember)
    _close(e, t)
    assert e._nnz() == t._nnz() == 0
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    if layout == "sparse_coo":
        assert e.is_coalesced() and t.is_coalesced()
        assert e.indices().shape == t.indices().shape


def test_factory_sparse_layout_requires_grad_and_errors():
    e = ember.zeros(2, 3, layout=ember.sparse_coo, requires_grad=True)
    assert e.requires_grad and e.is_leaf
    msg = "full\\(...\\) is not implemented for sparse layout"
    with pytest.raises(RuntimeError, match=msg):
        torch.ones(2, 3, layout=torch.sparse_coo)
    with pytest.raises(RuntimeError, match=msg):
        ember.ones(2, 3, layout=ember.sparse_coo)
    msg = "zeros_sparse_compressed expected sparse compressed \\(non-block\\) tensor layout"
    with pytest.raises(RuntimeError, match=msg):
        torch.zeros(2, 4, layout=torch.sparse_bsr)
    with pytest.raises(RuntimeError, match=msg):
        ember.zeros(2, 4, layout=ember.sparse_bsr)
    assert ember.zeros(2, 3, layout=ember.strided).layout is ember.strided


# ------------------------------------------------------------ *_like of sparse tensors
@pytest.mark.parametrize("name", ["zeros_like", "empty_like"])
@pytest.mark.parametrize("kind", ["coo", "hybrid", "csr", "to_strided", "from_dense"])
def test_like_factories_keep_sparse_layout(name, kind):
    def run(m):
        s = m.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (3, 2))
        f = getattr(m, name)
        if kind == "coo":
            return f(_both(m), dtype=m.float64)
        if kind == "hybrid":
            return f(s)
        if kind == "csr":
            return f(_both(m).to_sparse_csr())
        if kind == "to_strided":
            return f(s, layout=m.strided)
        return f(m.ones(2, 3), layout=m.sparse_coo)

    if kind == "from_dense" and name == "empty_like":
        # torch's empty_like has no sparse kernel for a dense input (its zeros_like has);
        # ember gives the same empty sparse tensor for both
        e = run(ember)
        assert e.layout is ember.sparse_coo and e._nnz() == 0 and tuple(e.shape) == (2, 3)
        return
    t, e = run(torch), run(ember)
    if name == "zeros_like":  # empty_like's values are undefined (torch's csr keeps a pattern)
        _close(e, t)
    assert e.layout.name == str(t.layout).split(".")[1] and tuple(e.shape) == tuple(t.shape)
    if t.layout is torch.sparse_coo:
        assert e._nnz() == t._nnz() == 0 and e.is_coalesced()
        assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim())
        assert tuple(e.values().shape) == tuple(t.values().shape)


def test_like_factories_sparse_requires_grad_and_ones_error():
    assert ember.zeros_like(_both(ember), requires_grad=True).requires_grad
    with pytest.raises(NotImplementedError, match="Could not run 'aten::fill_.Scalar'"):
        torch.ones_like(_both(torch))
    with pytest.raises(NotImplementedError, match="Could not run 'aten::fill_.Scalar'"):
        ember.ones_like(_both(ember))
    _close(
        ember.ones_like(_both(ember), layout=ember.strided),
        torch.ones_like(_both(torch), layout=torch.strided),
    )


# ------------------------------------------------------------ transposing compressed layouts
DM = np.arange(1.0, 13.0, dtype="float32").reshape(3, 4)
DM[0, 1] = DM[2, 2] = 0.0


@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("dims", [None, (0, 1), (1, 0), (-1, 0), (0, 0)])
def test_compressed_transpose(layout, dims):
    def run(m):
        s = getattr(m.tensor(DM), "to_sparse_" + layout)()
        return s.t() if dims is None else s.transpose(*dims)

    t, e = run(torch), run(ember)
    _close(e, t)
    ti = (t.crow_indices(), t.col_indices()) if t.layout is torch.sparse_csr else None
    ti = ti or (t.ccol_indices(), t.row_indices())
    ei = (e.crow_indices(), e.col_indices()) if e.layout is ember.sparse_csr else None
    ei = ei or (e.ccol_indices(), e.row_indices())
    for a, b in zip(ei, ti):
        assert a.tolist() == b.tolist()
    assert e.values().tolist() == t.values().tolist()


def test_block_transpose_and_gradient():
    def run(m):
        b = m.arange(1.0, 17.0).reshape(4, 4).to_sparse_bsr((2, 2))
        return b.t(), b.t().t()

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)
        assert e.values().tolist() == t.values().tolist()

    def grad(m):
        v = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = m.sparse_csr_tensor(m.tensor([0, 1, 3]), m.tensor([1, 0, 2]), v, (2, 3))
        (c.t().to_dense() * m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]])).sum().backward()
        return v.grad

    _close(grad(ember), grad(torch))


def test_hybrid_compressed_transpose_error():
    msg = "transpose\\(\\): hybrid sparse compressed tensors with dense dimensions are not"
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=msg):
            m.ones(2, 2, 3).to_sparse_csr(dense_dim=1).transpose(0, 1)
        with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
            m.ones(2, 2, 3).to_sparse_csr(dense_dim=1).t()


# ------------------------------------------------------------ rounding division
@pytest.mark.parametrize("divisor", [2, -2, 0.5, "tensor"])
@pytest.mark.parametrize("how", ["//", "floor_divide", "floor", "trunc"])
def test_sparse_rounding_division(divisor, how):
    def run(m):
        s = m.sparse_coo_tensor([[0, 1, 1], [2, 0, 0]], [1.0, -2.0, 3.5], (2, 3))
        d = m.tensor(-2.0) if divisor == "tensor" else divisor
        if how == "//":
            return s // d
        if how == "floor_divide":
            return m.floor_divide(s, d)
        return m.div(s, d, rounding_mode=how)

    t, e = run(torch), run(ember)
    _close(e, t)
    assert e.is_coalesced() == t.is_coalesced() and e._nnz() == t._nnz()


def test_sparse_division_by_tensor_errors():
    cases = [
        ("floor division", lambda m, s: m.floor_divide(s, m.ones(2, 3))),
        ("division", lambda m, s: s / m.ones(2, 3)),
        ("division", lambda m, s: m.div(s, m.ones(2, 3))),
    ]
    for what, f in cases:
        msg = f"Sparse {what} requires a scalar or zero-dim dense tensor divisor \\(got shape"
        for m in (torch, ember):
            s = m.sparse_coo_tensor([[0, 1], [2, 0]], [1.0, 2.0], (2, 3))
            with pytest.raises(RuntimeError, match=msg):
                f(m, s)
    # plain division is linear: duplicates stay (torch does not coalesce it)
    s = ember.sparse_coo_tensor([[0, 0]], [1.0, 2.0], (2,)) / 2
    assert not s.is_coalesced() and s._nnz() == 2


# ------------------------------------------------------------ compressed + dense
@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("form", ["+", "add", "method", "dense+"])
def test_compressed_plus_dense_is_dense(layout, form):
    up = np.linspace(-1.0, 1.0, 12).reshape(3, 4).astype("float32")

    def run(m):
        v = m.tensor(VALS, requires_grad=True)
        s = getattr(m.sparse_coo_tensor(IDX, v, (3, 4)), "to_sparse_" + layout)()
        d = m.tensor(DM, requires_grad=True)
        r = {"+": lambda: s + d, "add": lambda: m.add(s, d), "method": lambda: s.add(d)}.get(
            form, lambda: d + s
        )()
        (r * m.tensor(up)).sum().backward()
        return r, v.grad, d.grad

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)


def test_compressed_plus_dense_errors():
    def check(f, msg):
        for m in (torch, ember):
            c = _both(m).to_sparse_csr()
            with pytest.raises(RuntimeError, match=msg):
                f(m, c)

    check(lambda m, c: c + m.ones(4), "add: expected 'self' and 'other' to have same size, but")
    check(lambda m, c: c - m.ones(3, 4), "unsupported tensor layout: SparseCsr")
    check(lambda m, c: m.sub(c, m.ones(3, 4)), "unsupported tensor layout: SparseCsr")
    check(lambda m, c: _both(m) + m.ones(3, 4), "add\\(sparse, dense\\) is not supported")


# ------------------------------------------------------------ sparse.mm with reduce
CSR = ([0, 1, 4, 4], [1, 0, 2, 3], [1.0, 2.0, 3.0, -1.0], (3, 4))  # the last row is empty
X = [[1.0, -2.0], [3.0, 4.0], [-5.0, 6.0], [7.0, 8.0]]


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "max", "min"])
def test_sparse_mm_reduce_values_and_gradients(reduce):
    def run(m):
        v = m.tensor(CSR[2], requires_grad=True)
        c = m.sparse_csr_tensor(m.tensor(CSR[0]), m.tensor(CSR[1]), v, CSR[3])
        x = m.tensor(X, requires_grad=True)
        o = m.sparse.mm(c, x, reduce)
        (o * m.tensor([[1.0, 2.0], [3.0, -4.0], [5.0, 6.0]])).sum().backward()
        return o, v.grad, x.grad

    for e, t in zip(run(ember), run(torch)):
        _close(e, t)

    def f(v, x):
        c = ember.sparse_csr_tensor(ember.tensor(CSR[0]), ember.tensor(CSR[1]), v, CSR[3])
        return ember.sparse.mm(c, x, reduce)

    v = ember.tensor(CSR[2], dtype=ember.float64, requires_grad=True)
    x = ember.tensor(X, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(f, (v, x))


def test_sparse_mm_reduce_unknown():
    msg = "sparse_mm_reduce: reduce type of prod has not been enabled."
    for m in (torch, ember):
        c = m.sparse_csr_tensor(m.tensor(CSR[0]), m.tensor(CSR[1]), m.tensor(CSR[2]), CSR[3])
        with pytest.raises(RuntimeError, match=msg):
            m.sparse.mm(c, m.tensor(X), "prod")


# ------------------------------------------------------------ CSR * dense keeps the pattern
def test_csr_times_dense_and_gradient():
    o = [[3.0, 4.0, -1.0], [5.0, 6.0, 7.0]]

    def run(m, v):
        return m.sparse_csr_tensor(m.tensor([0, 1, 3]), m.tensor([1, 0, 2]), v, (2, 3))

    t = run(torch, torch.tensor([1.0, 2.0, 3.0])) * torch.tensor(o)
    v = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = ember.tensor(o, requires_grad=True)
    e = run(ember, v) * w
    _close(e, t)
    for a, b in ((e.crow_indices(), t.crow_indices()), (e.col_indices(), t.col_indices())):
        assert a.tolist() == b.tolist()
    # torch cannot differentiate this product; the gradient is the dense product's
    up = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (e.to_dense() * up).sum().backward()
    assert v.grad.tolist() == [8.0, 20.0, 42.0]
    assert w.grad.tolist() == [[0.0, 2.0, 0.0], [8.0, 0.0, 18.0]]


# ------------------------------------------------------------ softmax / sum / spdiags errors
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["int64", "float16", "bfloat16"])
def test_sparse_softmax_dtype_errors(fn, dtype):
    for m in (torch, ember):
        s = m.tensor([[0, 1], [2, 0]]).to(getattr(m, dtype)).to_sparse()
        with pytest.raises(NotImplementedError, match=f'"{fn}" not implemented for '):
            getattr(m.sparse, fn)(s, 0)
    # a float dtype argument makes it computable, as in torch
    _close(
        getattr(ember.sparse, fn)(
            ember.tensor([[0, 1], [2, 0]]).to_sparse(), 0, dtype=ember.float32
        ),
        getattr(torch.sparse, fn)(
            torch.tensor([[0, 1], [2, 0]]).to_sparse(), 0, dtype=torch.float32
        ),
    )


@pytest.mark.parametrize("dims", [(0, 0), (0, -2), (1, -1, 0)])
def test_sparse_sum_repeated_dim(dims):
    msg = "dim . appears multiple times in the list of dims"
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match=msg):
            m.sparse.sum(m.ones(2, 2).to_sparse(), dims)


@pytest.mark.parametrize("layout", ["strided", "sparse_bsr", "sparse_bsc"])
def test_spdiags_layout_error(layout):
    msg = "Only output layouts \\(Sparse, SparseCsc, SparseCsr\\) are supported, got "
    for m in (torch, ember):
        with pytest.raises(
            RuntimeError, match=msg + ("Strided" if layout == "strided" else "Sparse")
        ):
            m.sparse.spdiags(
                m.tensor([[1.0, 2.0, 3.0]]), m.tensor([1]), (3, 3), layout=getattr(m, layout)
            )


# ------------------------------------------------------------ unsqueeze / permute of COO
def _hyb(m, coalesce, v=None):
    v = m.tensor([[1.0, 2.0], [3.0, 4.0]]) if v is None else v
    h = m.sparse_coo_tensor([[0, 2], [1, 0]], v, (3, 2, 2))
    return h.coalesce() if coalesce else h


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("dim", [0, 1, 2, 3, -1, -4])
def test_coo_unsqueeze(coalesce, dim):
    t, e = _hyb(torch, coalesce).unsqueeze(dim), _hyb(ember, coalesce).unsqueeze(dim)
    _close(e, t)
    assert (e.sparse_dim(), e.dense_dim(), e.is_coalesced()) == (
        t.sparse_dim(),
        t.dense_dim(),
        t.is_coalesced(),
    )
    assert e._indices().tolist() == t._indices().tolist()


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("perm", [(1, 0, 2), (0, 1, 2), (-2, -3, -1)])
def test_coo_permute_and_gradient(coalesce, perm):
    def run(m):
        v = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        r = _hyb(m, coalesce, v).permute(*perm)
        up = m.tensor(np.linspace(-1.0, 2.0, 12).reshape(r.shape).astype("float32"))
        (r.to_dense() * up).sum().backward()
        return r, v.grad

    (e, ev), (t, tv) = run(ember), run(torch)
    _close(e, t)
    assert e.is_coalesced() == t.is_coalesced() and e._indices().tolist() == t._indices().tolist()
    _close(ev, tv)
    _close(ember.permute(_hyb(ember, coalesce), perm), torch.permute(_hyb(torch, coalesce), perm))


@pytest.mark.parametrize(
    ("perm", "exc", "msg"),
    [
        ((2, 0, 1), RuntimeError, "transpositions between sparse and dense dimensions"),
        ((0, 0, 1), RuntimeError, "permute\\(\\): duplicate dims are not allowed."),
        ((0, 1), RuntimeError, "input.dim\\(\\) = 3 is not equal to len\\(dims\\) = 2"),
        ((0, 1, 5), IndexError, "Dimension out of range"),
    ],
)
def test_coo_permute_errors(perm, exc, msg):
    for m in (torch, ember):
        with pytest.raises(exc, match=msg):
            _hyb(m, False).permute(*perm)
