"""Torch-parity leftovers (torch is the oracle): out= dtype refusals of the matmul family and the
resize warning of out=, linalg.ldl_factor/ldl_solve, small op edge cases, warnings, index_add_'s
error type, differentiable optimizers on leaves, cholesky_solve's factor gradient, grad_fn names,
weights_only load errors and in-place writes on hooked module outputs and split views."""

from __future__ import annotations

import re
import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _outcome(fn, m):
    """(exception type name, message) of fn(m), or ('ok', None)."""
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return "ok", None


def _same_error(fn) -> None:
    got, want = _outcome(fn, ember), _outcome(fn, torch)
    assert want[0] != "ok", "torch raised nothing: the case is wrong"
    assert got == want


def _warnings(fn, m):
    """The (category, message, file, line) of the warnings fn(m) emits, torch's internal-location
    suffix dropped."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn(m)
    return [
        (w.category, str(w.message).split(" (Triggered internally")[0], w.filename, w.lineno)
        for w in rec
    ]


# ---------------------------------------------------------------------- 1. out= dtype refusals
def _f32(m, *shape):
    return m.ones(*shape)


def _f64(m, *shape):
    return m.empty(*shape, dtype=m.float64)


OUT_DTYPE_CASES = {
    "mm": lambda m: m.mm(_f32(m, 2, 3), _f32(m, 3, 4), out=_f64(m, 2, 4)),
    "mm_half": lambda m: m.mm(_f32(m, 2, 3), _f32(m, 3, 4), out=m.empty(2, 4, dtype=m.float16)),
    "mm_long": lambda m: m.mm(_f32(m, 2, 3), _f32(m, 3, 4), out=m.empty(2, 4, dtype=m.int64)),
    "mm_f64_in": lambda m: m.mm(_f32(m, 2, 3).double(), _f32(m, 3, 4).double(), out=m.empty(2, 4)),
    "mm_complex": lambda m: m.mm(
        _f32(m, 2, 3), _f32(m, 3, 4), out=m.empty(2, 4, dtype=m.complex64)
    ),
    "bmm": lambda m: m.bmm(_f32(m, 1, 2, 3), _f32(m, 1, 3, 4), out=_f64(m, 1, 2, 4)),
    "matmul_2d": lambda m: m.matmul(_f32(m, 2, 3), _f32(m, 3, 4), out=_f64(m, 2, 4)),
    "matmul_mv": lambda m: m.matmul(_f32(m, 2, 3), _f32(m, 3), out=_f64(m, 2)),
    "matmul_batched_mv": lambda m: m.matmul(_f32(m, 4, 2, 3), _f32(m, 3), out=_f64(m, 4, 2)),
    "matmul_vm": lambda m: m.matmul(_f32(m, 3), _f32(m, 3, 2), out=_f64(m, 2)),
    "matmul_dot": lambda m: m.matmul(_f32(m, 3), _f32(m, 3), out=_f64(m)),
    "matmul_batched": lambda m: m.matmul(_f32(m, 4, 2, 3), _f32(m, 3, 2), out=_f64(m, 4, 2, 2)),
    "addmm": lambda m: m.addmm(_f32(m, 2, 4), _f32(m, 2, 3), _f32(m, 3, 4), out=_f64(m, 2, 4)),
    "baddbmm": lambda m: m.baddbmm(
        _f32(m, 1, 2, 4), _f32(m, 1, 2, 3), _f32(m, 1, 3, 4), out=_f64(m, 1, 2, 4)
    ),
    "addbmm": lambda m: m.addbmm(
        _f32(m, 2, 4), _f32(m, 1, 2, 3), _f32(m, 1, 3, 4), out=_f64(m, 2, 4)
    ),
    "mv": lambda m: m.mv(_f32(m, 2, 3), _f32(m, 3), out=_f64(m, 2)),
    "mv_half": lambda m: m.mv(_f32(m, 2, 3), _f32(m, 3), out=m.empty(2, dtype=m.float16)),
    "addmv": lambda m: m.addmv(_f32(m, 2), _f32(m, 2, 3), _f32(m, 3), out=_f64(m, 2)),
    "dot": lambda m: m.dot(_f32(m, 3), _f32(m, 3), out=_f64(m)),
    "vdot": lambda m: m.vdot(_f32(m, 3), _f32(m, 3), out=_f64(m)),
    "tensordot": lambda m: m.tensordot(_f32(m, 2, 3), _f32(m, 3, 4), 1, out=_f64(m, 2, 4)),
    "inner": lambda m: m.inner(_f32(m, 3), _f32(m, 3), out=_f64(m)),
    "inner_2d": lambda m: m.inner(_f32(m, 2, 3), _f32(m, 4, 3), out=_f64(m, 2, 4)),
}


@pytest.mark.parametrize("case", sorted(OUT_DTYPE_CASES))
def test_matmul_family_refuses_out_of_another_dtype(case):
    _same_error(OUT_DTYPE_CASES[case])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.add(_f32(m, 2), 1, out=_f64(m, 2)),
        lambda m: m.outer(_f32(m, 2), _f32(m, 3), out=_f64(m, 2, 3)),
        lambda m: m.kron(_f32(m, 2), _f32(m, 3), out=_f64(m, 6)),
    ],
    ids=["add", "outer", "kron"],
)
def test_out_of_another_dtype_still_casts_where_torch_casts(fn):
    e, t = fn(ember), fn(torch)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1] == "float64"
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_tensordot_out_keeps_out_dtype_and_bumps_version():
    out = ember.empty(2, 4)
    v = out._version
    r = ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), 1, out=out)
    assert r is out and out.dtype is ember.float32 and out._version > v
    np.testing.assert_array_equal(out.numpy(), np.full((2, 4), 3.0, np.float32))


# ---------------------------------------------------------------------- 2. out= resize warning
RESIZE_CASES = {
    "add": lambda m: m.add(m.ones(3), 1, out=m.empty(3, 1)),
    "sum": lambda m: m.sum(m.ones(3, 2), 0, out=m.empty(3)),
    "max_pair": lambda m: m.max(m.ones(3, 2), 0, out=(m.empty(3), m.empty(3, dtype=m.int64))),
    "mm": lambda m: m.mm(m.ones(2, 2), m.ones(2, 2), out=m.empty(3)),
    "dot": lambda m: m.dot(m.ones(2), m.ones(2), out=m.empty(3)),
    "kron": lambda m: m.kron(m.ones(2), m.ones(2), out=m.empty(3)),
    "cat": lambda m: m.cat([m.ones(2), m.ones(2)], out=m.empty(3)),
    "empty_out": lambda m: m.add(m.ones(3), 1, out=m.empty(0)),
    "right_shape": lambda m: m.add(m.ones(3), 1, out=m.empty(3)),
    "factory": lambda m: m.zeros(3, out=m.empty(5)),
}


@pytest.mark.parametrize("case", sorted(RESIZE_CASES))
def test_out_resize_warns_like_torch_at_the_callers_line(case):
    fn = RESIZE_CASES[case]
    got = _warnings(fn, ember)
    assert got == _warnings(fn, torch)
    assert all(w[2] == __file__ for w in got)  # the user's line, not ember's


def test_out_resize_warning_text():
    (w,) = _warnings(RESIZE_CASES["add"], ember)
    assert w[1] == (
        "An output with one or more elements was resized since it had shape [3, 1], which "
        "does not match the required output shape [3]. This behavior is deprecated, and in a "
        "future PyTorch release outputs will not be resized unless they have zero elements. "
        "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
        "with t.resize_(0)."
    )


# ---------------------------------------------------------------------- 3. linalg.ldl_*
def _sym_batch(n, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((3, n, n))
    if n > 1:
        a[0] -= np.diag(np.diag(a[0]))  # a zero diagonal forces 2x2 pivot blocks
    return a.astype(dtype)


@pytest.mark.parametrize("n", [1, 3, 8, 70])  # 70: LAPACK's blocked algorithm (as torch runs it)
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_and_solve_match_torch(n, dtype, hermitian):
    a = _sym_batch(n, dtype, n)
    b = np.random.default_rng(1).standard_normal((3, n, 2)).astype(dtype)
    t = torch.linalg.ldl_factor(torch.from_numpy(a), hermitian=hermitian)
    e = ember.linalg.ldl_factor(ember.tensor(a), hermitian=hermitian)
    assert type(e).__name__ == "linalg_ldl_factor" and e._fields == ("LD", "pivots")
    assert e.pivots.dtype is ember.int32 and e.LD.dtype is getattr(ember, dtype)
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(e.LD.numpy(), t.LD.numpy(), rtol=tol, atol=tol)
    xt = torch.linalg.ldl_solve(t.LD, t.pivots, torch.from_numpy(b), hermitian=hermitian)
    xe = ember.linalg.ldl_solve(e.LD, e.pivots, ember.tensor(b), hermitian=hermitian)
    np.testing.assert_allclose(xe.numpy(), xt.numpy(), rtol=100 * tol, atol=100 * tol)


def test_ldl_factor_ex_info_and_batch_broadcast():
    singular = [[1.0, 2, 0], [2, 4, 0], [0, 0, 1]]
    pivoting = [[0.0, 1, 2], [1, 0, 3], [2, 3, 0]]  # a 2x2 pivot block
    a = np.stack([np.eye(3), np.zeros((3, 3)), singular, pivoting])
    t = torch.linalg.ldl_factor_ex(torch.from_numpy(a))
    e = ember.linalg.ldl_factor_ex(ember.tensor(a))
    assert type(e).__name__ == "linalg_ldl_factor_ex" and e._fields == ("LD", "pivots", "info")
    for k in range(3):
        np.testing.assert_allclose(e[k].numpy(), t[k].numpy(), rtol=1e-12)
    b = np.arange(6.0).reshape(3, 2)  # one right-hand side for the whole batch
    tl = torch.linalg.ldl_factor(torch.from_numpy(a[[0, 3, 0]]))
    el = ember.linalg.ldl_factor(ember.tensor(a[[0, 3, 0]]))
    xt = torch.linalg.ldl_solve(tl.LD, tl.pivots, torch.from_numpy(b))
    xe = ember.linalg.ldl_solve(el.LD, el.pivots, ember.tensor(b))
    assert tuple(xe.shape) == tuple(xt.shape) == (3, 3, 2)
    np.testing.assert_allclose(xe.numpy(), xt.numpy(), rtol=1e-12)


def test_ldl_is_not_differentiable_like_torch():
    a = _sym_batch(3, "float64", 0)[1]
    b = np.ones((3, 2))
    for m in (ember, torch):
        A = m.tensor(a, requires_grad=True)
        LD, piv = m.linalg.ldl_factor(A)
        assert LD.requires_grad and not piv.requires_grad
        assert LD.grad_fn.name() == "torch::autograd::NotImplemented"
    for fn in (
        lambda m, A: m.linalg.ldl_factor(A).LD.sum().backward(),
        lambda m, A: (
            m.linalg.ldl_solve(*m.linalg.ldl_factor(A.detach()), m.tensor(b, requires_grad=True))
            .sum()
            .backward()
        ),
    ):
        _same_error(lambda m, fn=fn: fn(m, m.tensor(a, requires_grad=True)))


def _ld(m):
    return m.linalg.ldl_factor(m.eye(3))


LDL_ERRORS = {
    "factor_1d": lambda m: m.linalg.ldl_factor(m.ones(3)),
    "factor_wide": lambda m: m.linalg.ldl_factor(m.ones(2, 3)),
    "factor_long": lambda m: m.linalg.ldl_factor(m.ones(2, 2, dtype=m.int64)),
    "factor_half": lambda m: m.linalg.ldl_factor(m.ones(2, 2, dtype=m.float16)),
    "solve_b_1d": lambda m: m.linalg.ldl_solve(*_ld(m), m.ones(3)),
    "solve_b_rows": lambda m: m.linalg.ldl_solve(*_ld(m), m.ones(2, 2)),
    "solve_b_dtype": lambda m: m.linalg.ldl_solve(*_ld(m), m.ones(3, 2, dtype=m.float64)),
    "solve_float_pivots": lambda m: m.linalg.ldl_solve(
        _ld(m).LD, _ld(m).pivots.float(), m.ones(3, 2)
    ),
    "solve_pivots_shape": lambda m: m.linalg.ldl_solve(_ld(m).LD, _ld(m).pivots[:2], m.ones(3, 2)),
    "solve_wide_ld": lambda m: m.linalg.ldl_solve(_ld(m).LD[:, :2], _ld(m).pivots, m.ones(3, 2)),
}


@pytest.mark.parametrize("case", sorted(LDL_ERRORS))
def test_ldl_errors_match_torch(case):
    _same_error(LDL_ERRORS[case])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.linalg.ldl_factor(m.zeros(2, 2)),
        lambda m: m.linalg.ldl_factor_ex(m.zeros(3, 2, 2), check_errors=True),
    ],
)
def test_ldl_singular_d_raises_torchs_error_code(fn):
    # torch wraps this message in an internal-assert prefix naming its C++ source line
    (et, em), (tt, tm) = _outcome(fn, ember), _outcome(fn, torch)
    assert et == tt == "RuntimeError" and tm.endswith(em) and "Unknown error code: 1." in em


# ---------------------------------------------------------------------- 4. small op edge cases
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.logical_xor(m.tensor([True, False]), 1),
        lambda m: m.logical_xor(m.tensor([True, False]), True),
        lambda m: m.logical_and(m.tensor([True, False]), 1),
        lambda m: m.logical_or(m.tensor([1, 0]), 1.5),
        lambda m: m.logical_xor(1, m.tensor([True, False])),
    ],
)
def test_logical_ops_refuse_python_scalars(fn):
    _same_error(fn)


def test_logical_ops_still_take_tensors():
    a, b = [True, False, True], [True, True, False]
    for name in ("logical_and", "logical_or", "logical_xor"):
        e = getattr(ember, name)(ember.tensor(a), ember.tensor(b))
        t = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        np.testing.assert_array_equal(e.numpy(), t.numpy())


EINSUM_INT = [
    ("ij->", [(2, 3)], "bool"),
    ("ii->", [(2, 2)], "bool"),
    ("ii", [(2, 2)], "bool"),
    ("ii->i", [(2, 2)], "bool"),
    ("ij->ji", [(2, 3)], "bool"),
    ("ij,k->i", [(2, 3), (3,)], "bool"),
    ("ij,jk->ijk", [(2, 2), (2, 3)], "bool"),
    ("i,j,k->ijk", [(2,), (2,), (2,)], "bool"),
    ("i,j,k->i", [(2,), (3,), (2,)], "bool"),
    ("ij,kl->", [(2, 2), (2, 3)], "bool"),
    ("ij,jk->ik", [(2, 1), (1, 2)], "bool"),  # size-1 label: a broadcast product, no bmm
    ("ij,jk->ik", [(2, 0), (0, 2)], "bool"),  # torch's zero-size fast path
    ("ij->", [(2, 3)], "uint8"),
    ("ij->", [(2, 3)], "int32"),
    ("ij,jk->ik", [(2, 2), (2, 2)], "uint8"),
    ("ij,jk->ik", [(2, 2), (2, 2)], "int16"),
    ("ijx,jk->ik", [(2, 2, 3), (2, 2)], "int64"),
]


@pytest.mark.parametrize("eq,shapes,dtype", EINSUM_INT)
def test_einsum_integer_and_bool_dtypes_match_torch(eq, shapes, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.integers(0, 3, s).astype(dtype) for s in shapes]
    e = ember.einsum(eq, *[ember.tensor(a) for a in arrays])
    t = torch.einsum(eq, *[torch.from_numpy(a) for a in arrays])
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


EINSUM_INT_ERRORS = [
    ("ij,jk->ik", [(2, 2), (2, 2)], "bool"),
    ("ij,ij->i", [(2, 2), (2, 2)], "bool"),
    ("i,i", [(2,), (2,)], "bool"),
    ("ij,jk,kl->il", [(2, 2), (2, 2), (2, 2)], "bool"),
    ("bij,bjk->bik", [(1, 2, 2), (1, 2, 2)], "bool"),
    ("ik,j,j->i", [(2, 2), (2,), (2,)], "bool"),  # int64 (summed) against bool in bmm
    ("ijx,jk->ik", [(2, 2, 2), (2, 2)], "int32"),
    ("ijx,jk->ik", [(2, 2, 2), (2, 2)], "uint8"),
]


@pytest.mark.parametrize("eq,shapes,dtype", EINSUM_INT_ERRORS)
def test_einsum_bool_contractions_raise_like_torch(eq, shapes, dtype):
    _same_error(lambda m: m.einsum(eq, *[m.ones(*s, dtype=getattr(m, dtype)) for s in shapes]))


# ---------------------------------------------------------------------- 5. once-per-process warnings
ONCE_WARNINGS = {
    "index_reduce": lambda m: m.ones(3, 2).index_reduce(0, m.tensor([0, 2]), m.ones(2, 2), "prod"),
    "index_reduce_": lambda m: m.ones(3, 2).index_reduce_(
        0, m.tensor([0, 2]), m.ones(2, 2), "amax"
    ),
    "quantize_per_tensor": lambda m: m.quantize_per_tensor(m.ones(3), 0.1, 0, m.quint8),
    "quantize_per_channel": lambda m: m.quantize_per_channel(
        m.ones(3, 2), m.tensor([0.1, 0.2, 0.3]), m.tensor([0, 0, 0]), 0, m.quint8
    ),
}


@pytest.fixture
def fresh_once_warnings(monkeypatch):
    """A process that has not warned yet (ember), and torch's warn-always mode so that torch,
    which has warned earlier in this process, warns again."""
    from ember.core import runtime

    monkeypatch.setattr(runtime, "_WARNED_ONCE", set())
    torch.set_warn_always(True)
    yield
    torch.set_warn_always(False)


@pytest.mark.parametrize("case", sorted(ONCE_WARNINGS))
def test_beta_and_deprecation_warnings_match_torch(case, fresh_once_warnings):
    fn = ONCE_WARNINGS[case]
    got = _warnings(fn, ember)
    assert got == _warnings(fn, torch)
    assert len(got) == 1 and got[0][2] == __file__


def test_once_warnings_warn_once_unless_warn_always(fresh_once_warnings):
    fn = ONCE_WARNINGS["index_reduce"]
    assert len(_warnings(fn, ember)) == 1
    assert _warnings(fn, ember) == []  # once per process, like TORCH_WARN_ONCE
    assert _warnings(ONCE_WARNINGS["quantize_per_tensor"], ember) != []  # its own key
    ember.set_warn_always(True)
    try:
        assert len(_warnings(fn, ember)) == 1
    finally:
        ember.set_warn_always(False)


# ---------------------------------------------------------------------- 6. index_add bounds
def _index_add_case(shape, dim, alpha, inplace, idx_dtype="int64"):
    def fn(m):
        x = m.zeros(*shape)
        n = 2 if shape else 1
        idx = m.tensor([0, (shape[dim] if shape else 1) + 2][:n], dtype=getattr(m, idx_dtype))
        src_shape = list(shape)
        if shape:
            src_shape[dim] = n
        src = m.ones(*src_shape)
        f = x.index_add_ if inplace else x.index_add
        return f(dim, idx, src, alpha=alpha)

    return fn


@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize(
    "shape,dim,alpha,idx_dtype",
    [
        ((3, 2), 0, 1, "int64"),  # torch: RuntimeError naming the index
        ((3, 2, 2), 2, 1.0, "int64"),
        ((3, 2), 0, 2, "int64"),  # the per-index kernels: IndexError
        ((3, 2), 1, 2, "int64"),
        ((3, 2), 0, 1, "int32"),
        ((3,), 0, 1, "int64"),
        ((), 0, 1, "int64"),
    ],
)
def test_index_add_out_of_range_errors_match_torch(shape, dim, alpha, idx_dtype, inplace):
    _same_error(_index_add_case(shape, dim, alpha, inplace, idx_dtype))


# ---------------------------------------------------------------------- 7. differentiable optimizers
OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam"]
OPTIMIZERS += ["RAdam", "ASGD", "Rprop"]


def _diff_step(name, requires_grad):
    def fn(m):
        p = m.ones(3, requires_grad=requires_grad)
        p.grad = m.tensor([1.0, -2.0, 0.5])
        kw = {"momentum": 0.9} if name == "SGD" else {}
        getattr(m.optim, name)([p], lr=0.1, differentiable=True, **kw).step()
        return p

    return fn


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_differentiable_step_refuses_leaf_params_like_torch(name):
    _same_error(_diff_step(name, True))


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_differentiable_step_on_a_tensor_without_grad_still_updates(name):
    fn = _diff_step(name, False)
    np.testing.assert_allclose(fn(ember).numpy(), fn(torch).numpy(), rtol=1e-6)


# ---------------------------------------------------------------------- 8. cholesky_solve's factor gradient
def _chol_case(dtype="float64", batch=()):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((*batch, 3, 3))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((*batch, 3, 3))
    A = a @ np.conj(np.swapaxes(a, -1, -2)) + 3 * np.eye(3)
    return np.linalg.cholesky(A).astype(dtype), rng.standard_normal((3, 2)).astype(dtype)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype,batch", [("float64", ()), ("float32", (2,)), ("complex128", ())])
def test_cholesky_solve_gradients_match_torch(upper, dtype, batch):
    L, b = _chol_case(dtype, batch)
    F = np.conj(np.swapaxes(L, -1, -2)).copy() if upper else L
    g = np.random.default_rng(4).standard_normal((*batch, 3, 2)).astype(dtype)
    grads = []
    for m in (ember, torch):
        Ft, bt = m.tensor(F, requires_grad=True), m.tensor(b, requires_grad=True)
        m.cholesky_solve(bt, Ft, upper).backward(m.tensor(g))
        grads.append((Ft.grad.numpy(), bt.grad.numpy()))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for e, t in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)
    assert np.abs(np.triu(grads[0][0][..., :, :], 1)).max() > 0.01  # both triangles filled


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_gradcheck(upper):
    L, b = _chol_case()
    F = L.T.copy() if upper else L

    def fn(bb, f):  # the factor's triangle (the solve reads only that one)
        return ember.cholesky_solve(bb, f.triu() if upper else f.tril(), upper)

    args = (ember.tensor(b, requires_grad=True), ember.tensor(F, requires_grad=True))
    assert ember.autograd.gradcheck(fn, args)
    assert ember.autograd.gradgradcheck(fn, args)


def test_cholesky_solve_errors_match_torch():
    eye = lambda m: m.eye(3)
    for fn in (
        lambda m: m.cholesky_solve(m.ones(3, 2, dtype=m.float64), eye(m)),
        lambda m: m.cholesky_solve(m.ones(2, 2), eye(m)),
        lambda m: m.cholesky_solve(m.ones(3), eye(m)),
        lambda m: m.cholesky_solve(m.ones(3, 2), m.ones(3)),
        lambda m: m.cholesky_solve(m.ones(3, 2), m.ones(3, 2)),
        lambda m: m.cholesky_solve(m.ones(2, 3, 2), m.ones(3, 3, 3)),
        lambda m: m.cholesky_solve(m.ones(3, 2, dtype=m.int64), eye(m).long()),
        lambda m: m.cholesky_solve(m.ones(3, 2, dtype=m.float16), eye(m).half()),
    ):
        _same_error(fn)


# ---------------------------------------------------------------------- 9. grad_fn names
def _leaves(m):
    g = np.random.default_rng(5)
    mk = lambda *s: m.tensor(g.standard_normal(s).astype("float32"), requires_grad=True)
    return mk(3, 4), mk(4), mk(2, 3, 4), mk(4, 5), mk()


NAME_CASES = {
    "x[0]": lambda x, v, b, w, s, m: x[0],
    "x[:,1]": lambda x, v, b, w, s, m: x[:, 1],
    "x[1:]": lambda x, v, b, w, s, m: x[1:],
    "x[:]": lambda x, v, b, w, s, m: x[:],
    "x[...]": lambda x, v, b, w, s, m: x[...],
    "x[None]": lambda x, v, b, w, s, m: x[None],
    "x[0,None]": lambda x, v, b, w, s, m: x[0, None],
    "x[1:,0]": lambda x, v, b, w, s, m: x[1:, 0],
    "x[0,1:]": lambda x, v, b, w, s, m: x[0, 1:],
    "x[:,:10]": lambda x, v, b, w, s, m: x[:, :10],
    "x[::2]": lambda x, v, b, w, s, m: x[::2],
    "sum()": lambda x, v, b, w, s, m: x.sum(),
    "sum(0)": lambda x, v, b, w, s, m: x.sum(0),
    "sum((0,1))": lambda x, v, b, w, s, m: x.sum((0, 1)),
    "mean(1,keepdim)": lambda x, v, b, w, s, m: x.mean(1, keepdim=True),
    "max()": lambda x, v, b, w, s, m: x.max(),
    "max(0)": lambda x, v, b, w, s, m: x.max(0)[0],
    "min()": lambda x, v, b, w, s, m: x.min(),
    "prod(0)": lambda x, v, b, w, s, m: x.prod(0),
    "median(0)": lambda x, v, b, w, s, m: x.median(0)[0],
    "t()": lambda x, v, b, w, s, m: x.t(),
    "v.t()": lambda x, v, b, w, s, m: v.t(),
    "s.t()": lambda x, v, b, w, s, m: s.t(),
    "clamp(a,b)": lambda x, v, b, w, s, m: x.clamp(-1, 1),
    "clamp(min)": lambda x, v, b, w, s, m: x.clamp(min=0),
    "clamp(max)": lambda x, v, b, w, s, m: x.clamp(max=0.5),
    "clamp(t,t)": lambda x, v, b, w, s, m: x.clamp(m.zeros(4), m.ones(4)),
    "clamp_min(0)": lambda x, v, b, w, s, m: x.clamp_min(0),
    "clamp_min(t)": lambda x, v, b, w, s, m: x.clamp_min(m.zeros(4)),
    "clip": lambda x, v, b, w, s, m: x.clip(-1, 1),
    "x@w": lambda x, v, b, w, s, m: x @ w,
    "x@v": lambda x, v, b, w, s, m: x @ v,
    "v@w": lambda x, v, b, w, s, m: v @ w,
    "v@v": lambda x, v, b, w, s, m: v @ v,
    "b@w": lambda x, v, b, w, s, m: b @ w,
    "b@v": lambda x, v, b, w, s, m: b @ v,
    "v@b.mT": lambda x, v, b, w, s, m: m.ones(3) @ b,
    "frozen@w": lambda x, v, b, w, s, m: m.ones(2, 4) @ w,
    "x@frozen": lambda x, v, b, w, s, m: x @ m.ones(4, 2),
    "linear": lambda x, v, b, w, s, m: m.nn.functional.linear(x, w.t()),
    "mm": lambda x, v, b, w, s, m: m.mm(x, w),
    "bmm": lambda x, v, b, w, s, m: m.bmm(b, b.mT),
}


@pytest.mark.parametrize("case", sorted(NAME_CASES))
def test_grad_fn_names_match_torch_before_and_after_backward(case):
    names = []
    for m in (torch, ember):
        y = NAME_CASES[case](*_leaves(m), m)
        before = y.grad_fn.name()
        y.backward(m.ones_like(y))
        names.append((before, y.grad_fn.name()))
    assert names[1] == names[0]
    assert repr(y.grad_fn).startswith(f"<{names[0][0]} object")  # ember's node


def test_t_is_a_view_like_torch():
    for m in (ember, torch):
        v = m.ones(4, requires_grad=True)
        tv = v.t()
        assert tv is not v and tv._base is v and not tv.is_leaf
        x = m.zeros(2, 3)
        x.t()[0, 1] = 5.0
        assert x[1, 0].item() == 5.0
    _same_error(lambda m: m.ones(2, 3, 4).t())


# ---------------------------------------------------------------------- 10. weights_only load errors
class _NotAllowlisted:
    def __init__(self):
        self.a = 1


@pytest.mark.parametrize("obj", [_NotAllowlisted(), print], ids=["class", "builtin"])
@pytest.mark.parametrize("writer", [torch, ember], ids=["torch_file", "ember_file"])
def test_weights_only_refusal_message_matches_torch(tmp_path, obj, writer):
    # ember loads a file written by torch.save or by ember.save; torch loads its own
    torch.save({"x": torch.ones(2), "obj": obj}, tmp_path / "t.pt")
    writer.save({"x": writer.ones(2), "obj": obj}, tmp_path / "w.pt")
    got = _outcome(lambda m: m.load(tmp_path / "w.pt", weights_only=True), ember)
    want = _outcome(lambda m: m.load(tmp_path / "t.pt", weights_only=True), torch)
    assert want[0] == "UnpicklingError"
    assert got == want


# ---------------------------------------------------------------------- 11. in-place on special views
def _hooked_out(m, x):
    lin = m.nn.Linear(3, 3)
    with m.no_grad():
        lin.weight.fill_(0.5)
        lin.bias.fill_(0.1)
    lin.register_full_backward_hook(lambda mod, gi, go: None)
    return lin(x)


def _split_part(m):
    b = m.ones(4, 3, requires_grad=True) * 1
    return b.split(2)[0]


class _AsIs:
    """A custom Function returning its input as-is (or views of it)."""

    @staticmethod
    def make(m, n_out=1):
        class AsIs(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x if n_out == 1 else (x[0], x * 2)

            @staticmethod
            def backward(ctx, *g):
                return g[0] if n_out == 1 else g[1] * 2

        return AsIs


INPLACE_VIEW_ERRORS = {
    "hook_add_": lambda m: _hooked_out(m, m.ones(2, 3, requires_grad=True)).add_(1),
    "hook_relu_": lambda m: _hooked_out(m, m.ones(2, 3, requires_grad=True)).relu_(),
    "hook_setitem": lambda m: _hooked_out(m, m.ones(2, 3, requires_grad=True)).__setitem__(0, 1.0),
    "hook_view_add_": lambda m: _hooked_out(m, m.ones(2, 3, requires_grad=True)).view(6).add_(1),
    "hook_input_no_grad": lambda m: _hooked_out(m, m.ones(2, 3)).add_(1),
    "split_add_": lambda m: _split_part(m).add_(1),
    "split_select_add_": lambda m: _split_part(m)[0].add_(1),
    "split_view_mul_": lambda m: _split_part(m).view(6).mul_(2),
    "split_t_add_": lambda m: _split_part(m).t().add_(1),
    "split_setitem": lambda m: _split_part(m).__setitem__(0, 5.0),
    "split_view_setitem": lambda m: _split_part(m)[1:].__setitem__(0, 5.0),
    "split_sizes_zero_": lambda m: (
        (m.ones(4, 3, requires_grad=True) * 1).split([1, 3])[1][0].zero_()
    ),
    "chunk_select_add_": lambda m: (m.ones(4, 3, requires_grad=True) * 1).chunk(2)[0][0].add_(1),
    "unbind_slice_add_": lambda m: (m.ones(4, 3, requires_grad=True) * 1).unbind()[0][0:1].add_(1),
    "custom_as_is": lambda m: _AsIs.make(m).apply(m.ones(3, requires_grad=True)).add_(1),
    "custom_as_is_view": lambda m: _AsIs.make(m).apply(m.ones(3, requires_grad=True))[0].add_(1),
    "custom_multi_view": lambda m: _AsIs.make(m, 2).apply(m.ones(3, requires_grad=True))[0].add_(1),
}


@pytest.mark.parametrize("case", sorted(INPLACE_VIEW_ERRORS))
def test_inplace_on_multi_and_custom_views_raises_like_torch(case):
    _same_error(INPLACE_VIEW_ERRORS[case])


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _AsIs.make(m, 2).apply(m.ones(3, requires_grad=True))[1].add_(1),  # not a view
        lambda m: _split_part(m).clone()[0].add_(1),
        lambda m: _split_part(m).detach()[0].add_(1),
        lambda m: _hooked_out(m, m.ones(2, 3, requires_grad=True)).clone().add_(1),
    ],
)
def test_inplace_still_allowed_where_torch_allows(fn):
    e, t = fn(ember), fn(torch)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy())


def test_inplace_on_split_views_under_no_grad_is_allowed():
    for m in (ember, torch):
        part = _split_part(m)
        with m.no_grad():
            part[0].add_(1)
            assert part[0, 0].item() == 2.0


# ---------------------------------------------------------------------- 16-bit gaps (autocast probe)
@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("ord", ["fro", 1, -1, float("inf"), -float("inf"), "nuc", 2])
def test_matrix_norm_16_bit_like_torch(dt, ord):
    a = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    try:
        want = torch.linalg.matrix_norm(torch.tensor(a).to(getattr(torch, dt)), ord)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            ember.linalg.matrix_norm(ember.tensor(a).to(getattr(ember, dt)), ord)
        return
    got = ember.linalg.matrix_norm(ember.tensor(a).to(getattr(ember, dt)), ord)
    assert got.dtype == getattr(ember, dt)
    assert float(got) == float(want)


@pytest.mark.parametrize("kw", [{}, {"bins": 7, "min": -1, "max": 1}, {"bins": 13, "min": -2.3}])
def test_histc_bfloat16_like_torch(kw):
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32) * 3
    want = torch.histc(torch.tensor(x).bfloat16(), **kw)
    got = ember.histc(ember.tensor(x).bfloat16(), **kw)
    assert got.dtype == ember.bfloat16
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


# ---------------------------------------------------------------------- grad_fn names of split ops
def _r(m, *s):
    return m.ones(*s, requires_grad=True)


SPLIT_NAME_CASES = {
    "conv1d": lambda m: m.nn.functional.conv1d(_r(m, 1, 2, 8), m.ones(3, 2, 3)),
    "conv2d": lambda m: m.nn.functional.conv2d(_r(m, 1, 2, 8, 8), m.ones(3, 2, 3, 3), m.ones(3)),
    "conv2d_1x1": lambda m: m.nn.functional.conv2d(_r(m, 1, 2, 8, 8), m.ones(3, 2, 1, 1)),
    "conv2d_dw": lambda m: m.nn.functional.conv2d(_r(m, 1, 4, 8, 8), m.ones(4, 1, 3, 3), groups=4),
    "conv2d_3x3": lambda m: m.nn.functional.conv2d(
        _r(m, 8, 32, 16, 16), m.ones(32, 32, 3, 3), padding=1
    ),
    "conv_transpose2d": lambda m: m.nn.functional.conv_transpose2d(
        _r(m, 1, 2, 5, 5), m.ones(2, 3, 3, 3)
    ),
    "max_pool2d": lambda m: m.nn.functional.max_pool2d(_r(m, 1, 2, 8, 8), 2),
    "max_pool2d_3": lambda m: m.nn.functional.max_pool2d(_r(m, 1, 2, 9, 9), 3),
    "max_pool3d": lambda m: m.nn.functional.max_pool3d(_r(m, 1, 2, 4, 4, 4), 2),
    "avg_pool2d": lambda m: m.nn.functional.avg_pool2d(_r(m, 1, 2, 8, 8), 2),
    "adaptive_avg_pool2d": lambda m: m.nn.functional.adaptive_avg_pool2d(_r(m, 1, 2, 8, 8), 3),
    "adaptive_max_pool2d": lambda m: m.nn.functional.adaptive_max_pool2d(_r(m, 1, 2, 8, 8), 3),
    "batch_norm": lambda m: m.nn.functional.batch_norm(_r(m, 2, 3), None, None, training=True),
    "batch_norm_eval": lambda m: m.nn.functional.batch_norm(
        _r(m, 2, 3), m.zeros(3), m.ones(3), training=False
    ),
    "layer_norm": lambda m: m.nn.functional.layer_norm(_r(m, 3, 4), (4,)),
    "group_norm": lambda m: m.nn.functional.group_norm(_r(m, 2, 4, 3), 2),
    "contiguous": lambda m: _r(m, 3, 4).t().contiguous(),
    "number ** tensor": lambda m: 2 ** _r(m, 3),
    "number / tensor": lambda m: 2 / _r(m, 3),
    "number - tensor": lambda m: 1 - _r(m, 3),
    "rsub(tensor, tensor)": lambda m: m.rsub(_r(m, 3), _r(m, 3)),
    "tensor / number": lambda m: _r(m, 3) / 2,
    "tensor / tensor": lambda m: _r(m, 3) / _r(m, 3),
}


@pytest.mark.parametrize("case", sorted(SPLIT_NAME_CASES))
def test_backward_names_of_ops_ember_splits_differently(case):
    names = []
    for m in (torch, ember):
        y = SPLIT_NAME_CASES[case](m)
        before = y.grad_fn.name()
        y.sum().backward()
        names.append((before, y.grad_fn.name()))
    assert names[1] == names[0]


@pytest.mark.parametrize(
    "kw", [{}, {"dim": 1}, {"dim": (0, 1)}, {"dim": 0, "keepdim": True}], ids=str
)
def test_norm_p_none_is_the_two_norm(kw):
    """torch.norm(x, None) spells out the default: the 2-norm (Frobenius over two dims); ember
    refused None as an order. Values and gradients (non-uniform upstream) against torch."""
    a = np.random.default_rng(3).standard_normal((3, 4))
    t = torch.tensor(a, requires_grad=True)
    e = ember.tensor(a, requires_grad=True)
    rt, re_ = torch.norm(t, None, **kw), ember.norm(e, None, **kw)
    np.testing.assert_allclose(re_.detach().numpy(), rt.detach().numpy(), rtol=1e-12)
    up = np.arange(1.0, rt.numel() + 1).reshape(tuple(rt.shape))
    rt.backward(torch.tensor(up))
    re_.backward(ember.tensor(up))
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert e.norm(p=None).item() == pytest.approx(t.norm(p=None).item(), rel=1e-12)


@pytest.mark.parametrize("fn", ["amax", "amin"])
def test_amax_amin_none_dim_on_named_tensors(fn):
    """amax/amin take dim=None as all dims (torch 2.x); on a named tensor ember took the None
    for a dim name to look up (spec 1) and raised."""
    a = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    x = ember.tensor(a, names=("a", "b"))
    want = getattr(torch, fn)(torch.tensor(a), None).item()
    assert getattr(ember, fn)(x, None).item() == want
    kept = getattr(ember, fn)(x, None, keepdim=True)
    assert kept.names == ("a", "b") and tuple(kept.shape) == (1, 1)


_ROW_MAJOR_OPS = {
    "sum": lambda x: x.sum(-1),
    "sum_keepdim": lambda x: x.sum(0, keepdim=True),
    "mean": lambda x: x.mean(-1),
    "amax": lambda x: x.amax(-1),
    "max_values": lambda x: x.max(-1)[0],
    "max_indices": lambda x: x.max(-1)[1],
    "var": lambda x: x.var(-1),
    "std": lambda x: x.std(1),
    "logsumexp": lambda x: x.logsumexp(-1),
    "softmax": lambda x: x.softmax(-1),
    "log_softmax": lambda x: x.log_softmax(0),
    "cumsum": lambda x: x.cumsum(-1),
    "cumprod": lambda x: x.cumprod(0),
    "masked_fill": lambda x: x.masked_fill(x > 0, 0.0),
    "exp": lambda x: x.exp(),  # element-wise: keeps the input's layout, in both
}


@pytest.mark.parametrize("name", list(_ROW_MAJOR_OPS))
@pytest.mark.parametrize(
    "shape,perm", [((2, 3, 4, 5), (0, 2, 1, 3)), ((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1))], ids=str
)
def test_result_layout_of_permuted_inputs(name, shape, perm):
    """torch's reductions along a dim, scans, softmax and masked_fill return contiguous results
    whatever the input's strides (numpy kept a permuted input's order, so ``.view`` of the result
    raised where torch's worked); element-wise ops keep the layout in both."""
    a = np.random.default_rng(5).standard_normal(shape)
    fn = _ROW_MAJOR_OPS[name]
    r = fn(ember.tensor(a).permute(*perm))
    want = fn(torch.tensor(a).permute(*perm))
    assert r.is_contiguous() == want.is_contiguous()
    np.testing.assert_allclose(r.numpy(), want.numpy(), rtol=1e-12)
    if want.is_contiguous():
        assert tuple(r.view(-1).shape) == tuple(want.view(-1).shape)
