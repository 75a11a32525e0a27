"""Sparse tensors (COO, CSR, CSC, BSR, BSC): factories, conversions, accessors, coalesce, math,
autograd, printing and errors, compared with torch (the oracle) where it is installed."""

from __future__ import annotations

import copy
import pickle
import re
import warnings

import ember
import numpy as np
import pytest
from harness import needs_torch

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

warnings.filterwarnings("ignore", message=".*[Ss]parse.*")
pytestmark = pytest.mark.filterwarnings("ignore:.*[Ss]parse")

LAYOUTS = ["sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]


# ------------------------------------------------------------------------------ helpers
def _np(t):
    if t is None:
        return None
    t = t.detach()
    if torch is not None and isinstance(t, torch.Tensor):
        return t.cpu().numpy()
    return t.numpy()


def _arr(shape, dtype="float32", seed=0, density=0.5):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, shape)
    a[rng.random(shape) > density] = 0
    if dtype == "int64":
        a = np.round(a * 3)
    return a.astype(dtype)


def _parts(s):
    """Every array a sparse tensor is made of, with its structural facts."""
    lay = str(s.layout).split(".")[-1]
    nnz = s._nnz() if lay == "sparse_coo" else s.values().shape[0]
    out = {"layout": lay, "shape": tuple(s.shape), "nnz": nnz, "dtype": str(s.dtype)[6:]}
    out["sparse_dim"], out["dense_dim"] = s.sparse_dim(), s.dense_dim()
    if lay == "sparse_coo":
        out["indices"] = _np(s._indices())
        out["coalesced"] = s.is_coalesced()
    elif lay in ("sparse_csr", "sparse_bsr"):
        out["crow"], out["col"] = _np(s.crow_indices()), _np(s.col_indices())
    else:
        out["ccol"], out["row"] = _np(s.ccol_indices()), _np(s.row_indices())
    out["values"] = _np(s._values() if lay == "sparse_coo" else s.values())
    out["dense"] = _np(s.to_dense())
    return out


def assert_same_sparse(e, t, atol=1e-5, check_coalesced=True):
    pe, pt = _parts(e), _parts(t)
    if not check_coalesced:
        pe.pop("coalesced", None)
        pt.pop("coalesced", None)
    assert pe.keys() == pt.keys()
    for k in pe:
        if isinstance(pe[k], np.ndarray):
            assert pe[k].shape == pt[k].shape, k
            np.testing.assert_allclose(pe[k], pt[k], atol=atol, rtol=1e-4, err_msg=k)
            assert pe[k].dtype == pt[k].dtype, k
        else:
            assert pe[k] == pt[k], k


def both(fn):
    """(fn(ember), fn(torch))."""
    return fn(ember), fn(torch)


def _dense(m, a, requires_grad=False):
    return m.tensor(a, requires_grad=requires_grad)


# ------------------------------------------------------------------------------ layouts
def test_layout_objects():
    for name in LAYOUTS:
        lay = getattr(ember, name)
        assert isinstance(lay, ember.layout)
        assert repr(lay) == f"ember.{name}"
        assert pickle.loads(pickle.dumps(lay)) is lay


# ------------------------------------------------------------------------------ factories
COO_CASES = [
    # (indices, values shape or list, size)
    ([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3)),
    ([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], None),
    ([[1, 0, 1, 0], [2, 0, 2, 2]], [3.0, 4.0, 5.0, 1.0], (3, 4)),  # duplicates, unsorted
    ([[0, 3, 1]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], (5, 2)),  # hybrid
    ([[0, 2], [1, 0], [0, 1]], [1, 2], (3, 2, 2)),  # int64 values, 3 sparse dims
    ([[2]], [7.0], (4,)),
]


@needs_torch
@pytest.mark.parametrize("case", range(len(COO_CASES)))
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_coo_factory(case, dtype):
    i, v, size = COO_CASES[case]

    def f(m):
        dt = None if dtype is None else getattr(m, dtype)
        args = (m.tensor(i), m.tensor(v)) + (() if size is None else (size,))
        return m.sparse_coo_tensor(*args, dtype=dt)

    e, t = both(f)
    assert_same_sparse(e, t)
    assert e.is_sparse and not e.is_sparse_csr and e.layout is ember.sparse_coo
    assert e.dim() == t.dim() and e.ndim == t.ndim and e.numel() == t.numel()
    assert e.size() == tuple(t.size()) and e.size(-1) == t.size(-1)


@needs_torch
def test_coo_factory_lists_and_empty():
    for fn in (
        lambda m: m.sparse_coo_tensor([[0, 3]], [1, 2.0]),
        lambda m: m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.int64), m.zeros(0), (2, 3)),
        lambda m: m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.int64), m.zeros(0)),
        lambda m: m.sparse_coo_tensor(m.zeros(0, 1, dtype=m.int64), m.tensor([2.0]), ()),
        lambda m: m.sparse_coo_tensor([[3, 0]], [1.0, 2.0], (5,), is_coalesced=True),
        lambda m: m.sparse_coo_tensor([[1]], [1.0], (3,)),
    ):
        assert_same_sparse(*both(fn))


COMPRESSED_CASES = {
    "sparse_csr": ([0, 1, 3], [2, 0, 2], [3.0, 4.0, 5.0], (2, 3)),
    "sparse_csc": ([0, 1, 1, 3], [1, 0, 1], [3.0, 4.0, 5.0], (2, 3)),
    "sparse_bsr": ([0, 1, 2], [0, 1], np.arange(8.0).reshape(2, 2, 2), (4, 4)),
    "sparse_bsc": ([0, 1, 2], [0, 1], np.arange(12.0).reshape(2, 2, 3), (4, 6)),
}


@needs_torch
@pytest.mark.parametrize("layout", LAYOUTS[1:])
@pytest.mark.parametrize("with_size", [True, False])
def test_compressed_factories(layout, with_size):
    c, p, v, size = COMPRESSED_CASES[layout]

    def f(m):
        fn = getattr(m, layout + "_tensor")
        args = (m.tensor(c), m.tensor(p), m.tensor(v)) + ((size,) if with_size else ())
        return fn(*args)

    e, t = both(f)
    assert_same_sparse(e, t)
    assert e.is_sparse_csr == t.is_sparse_csr and not e.is_sparse
    g = ember.sparse_compressed_tensor(
        ember.tensor(c), ember.tensor(p), ember.tensor(v), size, layout=getattr(ember, layout)
    )
    assert_same_sparse(g, t)


@needs_torch
def test_compressed_int32_indices_and_dense_dims():
    def f(m):
        i32 = m.int32
        return m.sparse_csr_tensor(
            m.tensor([0, 1, 3], dtype=i32), m.tensor([2, 0, 2], dtype=i32), m.ones(3, 2), (2, 3, 2)
        )

    e, t = both(f)
    assert_same_sparse(e, t)
    assert e.crow_indices().dtype is ember.int32


FACTORY_ERRORS = [
    (
        lambda m: m.sparse_coo_tensor(
            m.tensor([[0, 5]]), m.tensor([1.0, 2.0]), (3,), check_invariants=True
        ),
        "size is inconsistent with indices: for dim 0, size is 3 but found index 5",
    ),
    (
        lambda m: m.sparse_coo_tensor(
            m.tensor([[0, -1]]), m.tensor([1.0, 2.0]), (3,), check_invariants=True
        ),
        "found negative index -1 for dim 0",
    ),
    (
        lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.tensor([1.0, 2.0, 3.0]), (3,)),
        "indices and values must have same nnz, but got nnz from indices: 2, nnz from values: 3",
    ),
    (
        lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.tensor([1.0, 2.0]), (3, 4)),
        (
            "'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = 2, sparse_dim = 1, "
            "dense_dim = 0"
        ),
    ),
    (
        lambda m: m.sparse_coo_tensor(m.tensor([0, 1]), m.tensor([1.0, 2.0]), (3,)),
        "'len(size) == sparse_dim + dense_dim' is not satisfied",
    ),
    (
        lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(2, 2), (3, 3)),
        "values has incorrect size, expected [2, 3], got [2, 2]",
    ),
    (
        lambda m: m.sparse_coo_tensor(
            m.tensor([[3, 0]]), m.tensor([1, 2]), (5,), requires_grad=True
        ),
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    (
        lambda m: m.sparse_csr_tensor(
            m.tensor([0, 1, 3]), m.tensor([2, 0, 5]), m.ones(3), (2, 3), check_invariants=True
        ),
        "`0 <= col_indices < ncols` is not satisfied.",
    ),
    (
        lambda m: m.sparse_csr_tensor(
            m.tensor([1, 1, 3]), m.tensor([2, 0, 2]), m.ones(3), (2, 3), check_invariants=True
        ),
        "`crow_indices[..., 0] == 0` is not satisfied.",
    ),
    (
        lambda m: m.sparse_csr_tensor(
            m.tensor([0, 1, 2]), m.tensor([2, 0, 2]), m.ones(3), (2, 3), check_invariants=True
        ),
        "`crow_indices[..., -1] == nnz` is not satisfied.",
    ),
    (
        lambda m: m.sparse_csr_tensor(
            m.tensor([0, 1, 3]), m.tensor([2, 2, 0]), m.ones(3), (2, 3), check_invariants=True
        ),
        (
            "`col_indices[..., crow_indices[..., i - 1]:crow_indices[..., i]] for all i = 1, ..., "
            "nrows are sorted and distinct along the last dimension values` is not satisfied."
        ),
    ),
    (
        lambda m: m.sparse_csc_tensor(
            m.tensor([0, 1, 3]), m.tensor([0, 4, 1]), m.ones(3), (3, 2), check_invariants=True
        ),
        "`0 <= row_indices < nrows` is not satisfied.",
    ),
]


@needs_torch
@pytest.mark.parametrize("k", range(len(FACTORY_ERRORS)))
def test_factory_errors_like_torch(k):
    fn, msg = FACTORY_ERRORS[k]
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            fn(m)


def test_factory_errors_ember_only():
    # torch accepts these without check_invariants; ember always checks bounds (no bad tensor)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        ember.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match=re.escape("`0 <= col_indices < ncols`")):
        ember.sparse_csr_tensor([0, 1, 3], [2, 0, 5], [1.0, 2, 3], (2, 3))
    with pytest.raises(RuntimeError, match="negative dimension"):
        ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (-3,))
    with pytest.raises(RuntimeError, match="must be divisible by the blocksize"):
        ember.sparse_bsr_tensor([0, 1, 2], [0, 1], ember.ones(2, 2, 2), (4, 5))
    with pytest.raises(RuntimeError, match="no batch dims"):
        ember.sparse_csr_tensor([[0, 1, 3]], [[2, 0, 2]], [[1.0, 2, 3]], (1, 2, 3))
    with pytest.raises(RuntimeError, match="must be equal to nrows"):
        ember.sparse_csr_tensor([0, 1, 3], [2, 0, 2], [1.0, 2, 3], (3, 3))
    with pytest.raises(RuntimeError, match="integer dtype"):
        ember.sparse_csr_tensor([0.0, 1, 3], [2, 0, 2], [1.0, 2, 3], (2, 3))


def test_named_inputs_give_unnamed_sparse_tensors():
    # names spec 4.2: no op refuses a named tensor; sparse tensors carry no names
    v = ember.tensor([1.0, 2.0], names=("N",), requires_grad=True)
    named = ember.sparse_coo_tensor([[0, 1]], v, (3,))
    assert named.names == (None,) and named.to_dense().tolist() == [1.0, 2.0, 0.0]
    named.to_dense().sum().backward()
    assert v.grad.tolist() == [1.0, 1.0] and v.grad.names == ("N",)
    s = ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,))
    assert s.names == (None,) and not s.has_names()
    with pytest.raises(RuntimeError, match="cannot have dimension names"):
        s.names = ("a",)


@needs_torch
def test_check_sparse_tensor_invariants_flag():
    inv = ember.sparse.check_sparse_tensor_invariants
    assert not inv.is_enabled()
    with inv():
        assert inv.is_enabled()
        with pytest.raises(RuntimeError, match="sorted and distinct"):
            ember.sparse_csr_tensor([0, 1, 3], [2, 2, 0], [1.0, 2, 3], (2, 3))
    assert not inv.is_enabled()
    ember.sparse_csr_tensor([0, 1, 3], [2, 2, 0], [1.0, 2, 3], (2, 3))  # unchecked: accepted

    @inv()
    def make():
        return inv.is_enabled()

    assert make() and not inv.is_enabled()


# ------------------------------------------------------------------------------ conversions
SHAPES = [(4, 6), (6, 4), (2, 2)]
DTYPES = ["float32", "float64", "int64"]


@needs_torch
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_to_sparse_all_layouts(shape, dtype):
    a = _arr(shape, dtype, seed=hash((shape, dtype)) % 1000)

    def conv(m):
        d = m.tensor(a)
        out = [
            d.to_sparse(),
            d.to_sparse(1),
            d.to_sparse_coo(),
            d.to_sparse_csr(),
            d.to_sparse_csc(),
            d.to_sparse(layout=m.sparse_csr),
            d.to_sparse(layout=m.sparse_csc),
        ]
        for bs in ((1, 1), (2, 2), (2, 1)):
            out += [
                d.to_sparse_bsr(bs),
                d.to_sparse_bsc(bs),
                d.to_sparse(layout=m.sparse_bsr, blocksize=bs),
            ]
        return out

    for e, t in zip(*both(conv)):
        assert_same_sparse(e, t)


@needs_torch
@pytest.mark.parametrize("dtype", ["bool", "float16"])
def test_other_dtypes_round_trip(dtype):
    a = _arr((3, 4), seed=4) != 0 if dtype == "bool" else _arr((3, 4), "float16", seed=4)

    def conv(m):
        d = m.tensor(a)
        return [d.to_sparse(), d.to_sparse_csr(), d.to_sparse_bsc((1, 2))]

    for e, t in zip(*both(conv)):
        assert_same_sparse(e, t)


@needs_torch
def test_dense_to_sparse_hybrid_and_3d():
    a = _arr((3, 4, 2), seed=3)

    def conv(m):
        d = m.tensor(a)
        return [
            d.to_sparse(),
            d.to_sparse(2),
            d.to_sparse(1),
            d.to_sparse(layout=m.sparse_coo, dense_dim=1),
            d.to_sparse_csr(dense_dim=1),
            d.to_sparse_csc(dense_dim=1),
            d[:2].to_sparse_bsr((1, 2), dense_dim=1),
        ]

    for e, t in zip(*both(conv)):
        assert_same_sparse(e, t)


@needs_torch
@pytest.mark.parametrize("src", LAYOUTS)
@pytest.mark.parametrize("dst", LAYOUTS)
def test_sparse_to_sparse(src, dst):
    a = _arr((4, 6), seed=7)

    def make(m, lay):
        d = m.tensor(a)
        if lay in ("sparse_bsr", "sparse_bsc"):
            return d.to_sparse(layout=getattr(m, lay), blocksize=(2, 3))
        return d.to_sparse(layout=getattr(m, lay))

    def conv(m):
        s = make(m, src)
        if dst in ("sparse_bsr", "sparse_bsc"):
            return getattr(s, "to_" + dst)((2, 3))
        return getattr(s, "to_" + dst if dst != "sparse_coo" else "to_sparse")()

    try:
        t = conv(torch)
    except RuntimeError as err:  # torch refuses (bsr -> csr ...): ember refuses alike
        with pytest.raises(RuntimeError, match=re.escape(str(err).split("\n")[0])):
            conv(ember)
        return
    assert_same_sparse(conv(ember), t)


CONVERSION_ERRORS = [
    (
        lambda m: m.ones(4, 4).to_sparse(layout=m.sparse_bsr),
        (
            "dense_to_sparse: conversion from Strided to SparseBsr without blocksize argument given "
            "is not supported"
        ),
    ),
    (
        lambda m: m.ones(4, 4).to_sparse_bsr((3, 3)),
        "dense_to_sparse_bsr: tensor sparse size (4,4) must be divisible by given blocksize (3,3)",
    ),
    (
        lambda m: m.ones(4, 4).to_sparse(layout=m.sparse_csr, dense_dim=1),
        "dense_to_sparse: dense_dim argument must be in [0,0] range, but 1 is given",
    ),
    (
        lambda m: m.ones(4, 4).to_sparse(0),
        "dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0",
    ),
    (
        lambda m: m.ones(4, 4).to_sparse(3),
        "dense_to_sparse: sparse_dim argument must be in [0,2] range, but 3 is given",
    ),
    (
        lambda m: m.ones(4, 4).to_sparse_bsr((2, 2)).to_sparse_bsr((1, 1)),
        (
            "to_sparse_bsr: conversion from SparseBsr to SparseBsr with blocksize changed from [2, 2] "
            "to [1, 1] is not supported"
        ),
    ),
    (
        lambda m: m.ones(4, 4).to_sparse_bsr((2, 2)).to_sparse_csc(),
        "sparse_compressed_to_sparse_csc: expected SparseCsr or SparseCsc layout but got SparseBsr",
    ),
    (
        lambda m: m.ones(4, 4).to_sparse(1).to_sparse_csr(),
        (
            "coo_to_sparse_csr: conversion from Sparse to SparseCsr for input tensors with "
            "sparse_dim()!=2 is not supported"
        ),
    ),
    (
        lambda m: m.ones(4, 4).to_sparse().to_sparse(1),
        (
            "to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self.sparse_dim() "
            "is not supported"
        ),
    ),
    (
        lambda m: m.ones(4, 4).to_sparse_csr().to_sparse_csr(1),
        (
            "to_sparse_csr: conversion from SparseCsr to SparseCsr with dense_dim argument "
            "given is not supported"
        ),
    ),
    (
        lambda m: m.ones(2, 3).to_sparse().to_dense(m.float64),
        "dtype argument is not supported by sparse_to_dense",
    ),
]


@needs_torch
@pytest.mark.parametrize("k", range(len(CONVERSION_ERRORS)))
def test_conversion_errors_like_torch(k):
    fn, msg = CONVERSION_ERRORS[k]
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            fn(m)


# ------------------------------------------------------------------------------ accessors
ACCESSOR_ERRORS = [
    ("indices", "indices expected sparse coordinate tensor layout but got {}"),
    ("values", "values expected sparse tensor layout but got Strided"),
    ("coalesce", "coalesce expected sparse coordinate tensor layout but got {}"),
    ("is_coalesced", "is_coalesced expected sparse coordinate tensor layout but got {}"),
    ("crow_indices", "crow_indices expected sparse row compressed tensor layout but got {}"),
    ("col_indices", "col_indices expected sparse row compressed tensor layout but got {}"),
    ("ccol_indices", "ccol_indices expected sparse column compressed tensor layout but got {}"),
    ("row_indices", "row_indices expected sparse column compressed tensor layout but got {}"),
]


@needs_torch
@pytest.mark.parametrize("name,msg", ACCESSOR_ERRORS)
@pytest.mark.parametrize("src", ["dense", "sparse_coo", "sparse_csr", "sparse_csc"])
def test_accessor_errors_like_torch(name, msg, src):
    def get(m):
        d = m.ones(2, 2)
        x = d if src == "dense" else d.to_sparse(layout=getattr(m, src))
        return getattr(x, name)()

    try:
        get(torch)
    except RuntimeError as err:
        if "Strided" in msg and src != "dense":
            return
        with pytest.raises(RuntimeError, match=re.escape(str(err))):
            get(ember)
        return
    get(ember)  # torch allows it: so does ember


@needs_torch
def test_accessors_and_uncoalesced_errors():
    def f(m):
        return m.sparse_coo_tensor(m.tensor([[1, 0, 1]]), m.tensor([1.0, 2.0, 3.0]), (2,))

    e, t = both(f)
    for name in ("indices", "values"):
        with pytest.raises(RuntimeError) as err:
            getattr(t, name)()
        with pytest.raises(RuntimeError, match=re.escape(str(err.value))):
            getattr(e, name)()
    assert e._nnz() == t._nnz() == 3
    np.testing.assert_array_equal(_np(e._indices()), _np(t._indices()))
    np.testing.assert_array_equal(_np(e._values()), _np(t._values()))
    c = e.coalesce()
    assert c.coalesce() is c and c.is_coalesced()
    np.testing.assert_array_equal(_np(c.indices()), [[0, 1]])
    np.testing.assert_array_equal(_np(c.values()), [2.0, 4.0])


@needs_torch
@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_coalesce(hybrid, dtype):
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 3, (2, 12))
    vals = rng.uniform(-2, 2, (12, 2) if hybrid else (12,))
    if dtype == "int64":
        vals = np.round(vals * 3)
    vals = vals.astype(dtype)
    size = (3, 3, 2) if hybrid else (3, 3)

    def f(m):
        return m.sparse_coo_tensor(m.tensor(idx), m.tensor(vals), size).coalesce()

    assert_same_sparse(*both(f))


@needs_torch
def test_dims_and_properties():
    e, t = both(lambda m: m.tensor(_arr((3, 4, 2))).to_sparse(2))
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim()) == (2, 1)
    assert e.dtype is ember.float32 and e.device == ember.device("cpu") and e.is_cpu
    assert not e.requires_grad and e.is_leaf and e.grad is None and e.grad_fn is None
    assert len(e) == 3 and e.shape == ember.Size([3, 4, 2])
    assert e.type() == t.type()
    d = ember.ones(2, 2)
    assert d.sparse_dim() == 0 and d.dense_dim() == 2 and d.to_dense() is d


# ------------------------------------------------------------------------------ printing
@needs_torch
@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.sparse_coo_tensor(
            m.tensor([[0, 1, 1], [2, 0, 2]]), m.tensor([3.0, 4, 5]), (2, 3)
        ),
        lambda m: m.sparse_coo_tensor(m.tensor([[0, 3]]), m.tensor([1, 2]), (4,)),
        lambda m: m.zeros(2, 3).to_sparse(),
        lambda m: m.zeros(3, 2, 2).to_sparse(1),
        lambda m: m.tensor(_arr((3, 4), "float64")).to_sparse(),
        lambda m: m.tensor(_arr((3, 4), "float64")).to_sparse().requires_grad_(),
        lambda m: m.tensor(_arr((4, 4))).to_sparse_csr(),
        lambda m: m.tensor(_arr((4, 4), "float64")).to_sparse_csc().requires_grad_(),
        lambda m: m.tensor(_arr((4, 4))).to_sparse_bsr((2, 2)),
        lambda m: m.zeros(4, 4).to_sparse_bsc((2, 2)),
    ],
)
def test_repr_like_torch(make):
    e, t = both(make)
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert str(e) == repr(e) and f"{e}" == repr(e)


@needs_torch
def test_repr_grad_fn():
    e = ember.tensor([1.0, 2.0], requires_grad=True)
    s = ember.sparse_coo_tensor([[0, 2]], e * 2, (3,))
    assert "grad_fn=<" in repr(s) and not s.is_leaf


# ------------------------------------------------------------------------------ dense ops fail
LOUD = [
    # a compressed tensor plus a dense one of its shape is dense (torch); not with an alpha
    ("ember.add(sparse, dense)", lambda s: ember.add(s, ember.ones(2, 3), alpha=2)),
    ("ember.exp", lambda s: ember.exp(s)),
    ("s + 1", lambda s: s + 1),
    ("s + dense", lambda s: s + ember.ones(3)),
    ("slice", lambda s: s[0:1]),  # an int index selects (torch too); a slice has no kernel
    ("ember.cat", lambda s: ember.cat([s, ember.ones(2, 3)])),
    ("s.exp()", lambda s: s.exp()),
    ("s.cos()", lambda s: s.cos()),  # cos(0) is 1: torch has no sparse cos (relu it has)
    ("s.view", lambda s: s.view(6)),
    ("s.numpy()", lambda s: s.numpy()),
    ("ember.sigmoid", lambda s: ember.sigmoid(s)),
    ("bool", lambda s: bool(s)),
    ("backward", lambda s: s.backward()),
]


@pytest.mark.parametrize("layout", LAYOUTS[:3])
@pytest.mark.parametrize("name,fn", LOUD, ids=[n for n, _ in LOUD])
def test_dense_ops_on_sparse_fail_loudly(layout, name, fn):
    s = ember.ones(2, 3).to_sparse(layout=getattr(ember, layout))
    with pytest.raises(RuntimeError, match=r"sparse|add\(sparse, dense\)"):
        fn(s)


# the functional forms torch accepts with a sparse operand (the registry hands them to
# core/sparse_ops.py): values, layout and the gradient of the dense operand
FUNCTIONAL = [
    ("mm(s, d)", lambda m, s, d: m.mm(s, d.t())),
    ("mm(d, s)", lambda m, s, d: m.mm(d.t(), s)),
    ("matmul(d, s)", lambda m, s, d: m.matmul(d.t(), s)),
    ("addmm(d, s, d)", lambda m, s, d: m.addmm(d[:, :4] * 0 + 1, s, d.t(), beta=0.5, alpha=2)),
    ("add(d, s)", lambda m, s, d: m.add(d, s, alpha=2)),
    ("sub(d, s)", lambda m, s, d: m.sub(d, s, alpha=3)),
    ("mul(d, s)", lambda m, s, d: m.mul(d, s)),
    ("mul(s, 2)", lambda m, s, d: m.mul(s, 2) * d.sum()),
    ("neg(s)", lambda m, s, d: m.neg(s) * d.sum()),
    ("sum(s)", lambda m, s, d: m.sum(s) * d.sum()),
]
_COO_ONLY = ("sub(d, s)", "mul(d, s)", "mul(s, 2)", "neg(s)", "sum(s)")  # no csr kernel in torch


@needs_torch
@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr"])
@pytest.mark.parametrize("name,fn", FUNCTIONAL, ids=[n for n, _ in FUNCTIONAL])
def test_functional_forms_like_torch(layout, name, fn):
    if layout == "sparse_csr" and name in _COO_ONLY:
        return
    sa, da = _arr((4, 5), seed=1), _arr((4, 5), seed=2, density=1.0)
    res = []
    for m in (ember, torch):
        s = m.tensor(sa).to_sparse(layout=getattr(m, layout))
        d = m.tensor(da, requires_grad=True)
        r = fn(m, s, d)
        dense = r.to_dense() if r.layout != m.strided else r
        up = m.tensor(np.arange(dense.numel(), dtype=np.float32).reshape(dense.shape) / 7)
        (dense * up).sum().backward()
        g = d.grad if d.grad.layout == m.strided else d.grad.to_dense()  # torch: sparse for mul
        res.append((str(r.layout).split(".")[-1], _np(dense), _np(g)))
    (le, ve, ge), (lt, vt, gt) = res
    assert le == lt
    np.testing.assert_allclose(ve, vt, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ge, gt, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------ autograd
@needs_torch
@pytest.mark.parametrize("layout", LAYOUTS)
def test_to_dense_grad_reaches_values(layout):
    base = _arr((4, 6), seed=11)
    gout = np.random.default_rng(1).uniform(-1, 1, (4, 6)).astype("float32")

    def run(m):
        d = m.tensor(base)
        kw = {"blocksize": (2, 3)} if layout in ("sparse_bsr", "sparse_bsc") else {}
        s0 = d.to_sparse(layout=getattr(m, layout), **kw)
        v = (s0._values() if layout == "sparse_coo" else s0.values()).detach().clone()
        v.requires_grad_()
        if layout == "sparse_coo":
            s = m.sparse_coo_tensor(s0._indices(), v * 2, s0.shape)
        else:
            c = s0.crow_indices() if layout in ("sparse_csr", "sparse_bsr") else s0.ccol_indices()
            p = s0.col_indices() if layout in ("sparse_csr", "sparse_bsr") else s0.row_indices()
            s = getattr(m, layout + "_tensor")(c, p, v * 2, s0.shape)
        out = s.to_dense()
        out.backward(m.tensor(gout))
        return out, v.grad

    (eo, eg), (to, tg) = both(run)
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-6)
    np.testing.assert_allclose(_np(eg), _np(tg), rtol=1e-6)


@needs_torch
def test_sparse_leaf_grad_is_sparse():
    gout = np.arange(6.0, dtype="float32").reshape(2, 3)

    def run(m):
        s = m.sparse_coo_tensor(
            m.tensor([[0, 1, 1], [2, 0, 2]]), m.tensor([3.0, 4, 5]), (2, 3), requires_grad=True
        )
        assert s.is_leaf and s.requires_grad and s.grad_fn is None
        s.to_dense().backward(m.tensor(gout))
        return s.grad

    e, t = both(run)
    assert_same_sparse(e, t, check_coalesced=False)


@needs_torch
@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr"])
def test_dense_to_sparse_grad(layout):
    base = _arr((4, 4), seed=2)
    gout = np.random.default_rng(2).uniform(-1, 1, (4, 4)).astype("float32")

    def run(m):
        d = m.tensor(base, requires_grad=True)
        kw = {"blocksize": (2, 2)} if layout == "sparse_bsr" else {}
        s = d.to_sparse(layout=getattr(m, layout), **kw)
        (s.to_dense() * m.tensor(gout)).sum().backward()
        return d.grad

    e, t = both(run)
    np.testing.assert_allclose(_np(e), _np(t), rtol=1e-6)


def _coo64(seed=0, shape=(4, 5), nnz=9, hybrid=()):
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, s, nnz) for s in shape])
    vals = ember.tensor(rng.uniform(-1, 1, (nnz, *hybrid)), dtype=ember.float64, requires_grad=True)
    return ember.tensor(idx), vals, shape + hybrid


@pytest.mark.parametrize("hybrid", [(), (2,)])
def test_gradcheck_factory_coalesce_to_dense(hybrid):
    i, v, size = _coo64(hybrid=hybrid)

    def f(v):
        return ember.sparse_coo_tensor(i, v, size).coalesce().to_dense()

    assert ember.autograd.gradcheck(f, (v,))
    assert ember.autograd.gradgradcheck(f, (v,))


@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr", "sparse_csc"])
def test_gradcheck_mm(layout):
    i, v, size = _coo64(seed=1)
    d = ember.tensor(np.random.default_rng(3).uniform(-1, 1, (5, 3)), requires_grad=True)

    def f(v, d):
        s = ember.sparse_coo_tensor(i, v, size)
        if layout != "sparse_coo":
            s = s.to_sparse(layout=getattr(ember, layout))
        return ember.sparse.mm(s, d)

    assert ember.autograd.gradcheck(f, (v, d))
    assert ember.autograd.gradgradcheck(f, (v, d))


def test_gradcheck_addmm_sum_softmax():
    i, v, size = _coo64(seed=4)
    d = ember.tensor(np.random.default_rng(5).uniform(-1, 1, (5, 2)), requires_grad=True)
    mat = ember.tensor(np.random.default_rng(6).uniform(-1, 1, (4, 2)), requires_grad=True)

    def addmm(v, d, mat):
        s = ember.sparse_coo_tensor(i, v, size)
        return ember.sparse.addmm(mat, s, d, beta=0.5, alpha=2.0)

    assert ember.autograd.gradcheck(addmm, (v, d, mat))
    for fn in (
        lambda v: ember.sparse.sum(ember.sparse_coo_tensor(i, v, size)),
        lambda v: ember.sparse.sum(ember.sparse_coo_tensor(i, v, size), 0).to_dense(),
        lambda v: ember.sparse.softmax(ember.sparse_coo_tensor(i, v, size), 1).to_dense(),
        lambda v: ember.sparse.log_softmax(ember.sparse_coo_tensor(i, v, size), 0).to_dense(),
    ):
        assert ember.autograd.gradcheck(fn, (v,))
        assert ember.autograd.gradgradcheck(fn, (v,))


@pytest.mark.parametrize(
    "name", ["smm", "sspaddmm", "Tensor.sum dim", "log_softmax -1", "softmax -2"]
)
def test_gradcheck_values_only(name):
    i, v, size = _coo64(seed=2)
    d = ember.tensor(np.random.default_rng(3).uniform(-1, 1, (5, 3)), requires_grad=True)
    base = ember.sparse_coo_tensor([[0, 3], [1, 2]], [1.0, 2.0], (4, 3), dtype=ember.float64)
    fns = {
        "smm": lambda s, d: ember.smm(s, d),
        "sspaddmm": lambda s, d: ember.sspaddmm(base, s, d, beta=2, alpha=3),
        "Tensor.sum dim": lambda s, d: s.sum(1) * d.sum(),
        "log_softmax -1": lambda s, d: ember.sparse.log_softmax(s, -1) * d.sum(),
        "softmax -2": lambda s, d: ember.sparse.softmax(s, -2) * d.sum(),
    }

    def f(v, d):
        out = fns[name](ember.sparse_coo_tensor(i, v, size), d)
        return out.to_dense()

    assert ember.autograd.gradcheck(f, (v, d))


# ------------------------------------------------------------------------------ math
def _coo_pair(m, seed=0, shape=(4, 5), nnz=8, hybrid=(), dtype="float32"):
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, s, nnz) for s in shape])
    vals = rng.uniform(-1, 1, (nnz, *hybrid)).astype(dtype)
    v = m.tensor(vals, requires_grad=dtype != "int64")
    return m.sparse_coo_tensor(m.tensor(idx), v, shape + hybrid), v


def _grad_run(m, fn, shape_out_seed=9, grad=True):
    s, v = _coo_pair(m)
    d = m.tensor(
        np.random.default_rng(8).uniform(-1, 1, (5, 3)).astype("float32"), requires_grad=True
    )
    out = fn(m, s, d)
    dense = out.to_dense() if out.layout != m.strided else out
    if not grad:
        return dense, None, None
    g = np.random.default_rng(shape_out_seed).uniform(-1, 1, tuple(dense.shape)).astype("float32")
    dense.backward(m.tensor(g))
    return dense, v.grad, d.grad


MATH = {
    "sparse.mm": lambda m, s, d: m.sparse.mm(s, d),
    "sparse.mm csr": lambda m, s, d: m.sparse.mm(s.coalesce().to_sparse_csr(), d),
    "sparse.mm csc": lambda m, s, d: m.sparse.mm(s.coalesce().to_sparse_csc(), d),
    "s @ d": lambda m, s, d: s @ d,
    "s.mm": lambda m, s, d: s.mm(d),
    "sparse.addmm": lambda m, s, d: m.sparse.addmm(m.ones(4, 3), s, d, beta=2.0, alpha=0.5),
    "smm": lambda m, s, d: m.smm(s, d),
    "Tensor.smm": lambda m, s, d: s.smm(d),
    "sspaddmm": lambda m, s, d: m.sspaddmm(
        s.coalesce().transpose(0, 1)[:0]
        if False
        else m.sparse_coo_tensor([[0, 3], [1, 2]], [1.0, 2.0], (4, 3)),
        s,
        d,
        beta=2,
        alpha=3,
    ),
    "sum all": lambda m, s, d: m.sparse.sum(s),
    "sum dim0": lambda m, s, d: m.sparse.sum(s, 0),
    "sum dim-1": lambda m, s, d: m.sparse.sum(s, -1),
    "sum both": lambda m, s, d: m.sparse.sum(s, (0, 1)),
    "Tensor.sum": lambda m, s, d: s.sum(),
    "Tensor.sum dim": lambda m, s, d: s.sum(1),
    "softmax 1": lambda m, s, d: m.sparse.softmax(s, 1),
    "softmax 0": lambda m, s, d: m.sparse.softmax(s, 0),
    "log_softmax 1": lambda m, s, d: m.sparse.log_softmax(s, 1),
    "log_softmax 0": lambda m, s, d: m.sparse.log_softmax(s, 0),
    "mul scalar": lambda m, s, d: s * 2.5,
    "rmul scalar": lambda m, s, d: 3 * s,
    "div scalar": lambda m, s, d: s / 4,
    "neg": lambda m, s, d: -s,
    "s + s": lambda m, s, d: s + s * 2,
    "s - s": lambda m, s, d: s - s * 3,
    "dense + s": lambda m, s, d: m.ones(4, 5) + s,
    "dense - s": lambda m, s, d: m.ones(4, 5) - s,
    "s * dense": lambda m, s, d: s * m.arange(20.0).reshape(4, 5),
    "t": lambda m, s, d: s.t(),
    "transpose": lambda m, s, d: s.transpose(0, 1),
    "sparse_mask": lambda m, s, d: (s.to_dense() * 2).sparse_mask(s.coalesce()),
    "csr * scalar": lambda m, s, d: s.coalesce().to_sparse_csr() * 2,
    "csr + csr": lambda m, s, d: s.coalesce().to_sparse_csr() + s.coalesce().to_sparse_csr(),
    "double": lambda m, s, d: s.double(),
    "to float64": lambda m, s, d: s.to(m.float64),
    "clone": lambda m, s, d: s.clone(),
}


# torch has no derivative for these (sspaddmm, CSC mm, sum(dim) of a sparse tensor): values are
# compared with torch, gradients with finite differences (test_gradcheck_values_only)
VALUES_ONLY = {"sparse.mm csc", "smm", "Tensor.smm", "sspaddmm", "Tensor.sum dim"}


@needs_torch
@pytest.mark.parametrize("name", list(MATH))
def test_math_values_and_grads(name):
    fn = MATH[name]
    g = name not in VALUES_ONLY
    (eo, ev, ed), (to, tv, td) = both(lambda m: _grad_run(m, fn, grad=g))
    np.testing.assert_allclose(_np(eo), _np(to), rtol=1e-4, atol=1e-5)
    assert str(eo.dtype)[6:] == str(to.dtype)[6:]
    for a, b in ((ev, tv), (ed, td)):
        assert (a is None) == (b is None), name
        if a is not None:
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-5)


@needs_torch
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, s: m.sparse.sum(s, 2),
        lambda m, s: m.sparse.sum(s, (0, 1)),
        lambda m, s: m.sparse.sum(s, (0, 2)),
        lambda m, s: m.sparse.sum(s, dtype=m.float64),
        lambda m, s: m.sparse.softmax(s, 2),
        lambda m, s: m.sparse.softmax(s, 0),
        lambda m, s: m.sparse.log_softmax(s, 1, dtype=m.float64),
    ],
)
def test_math_hybrid_structure(fn):
    def run(m):
        s, _ = _coo_pair(m, seed=3, shape=(3, 4), nnz=7, hybrid=(2,))
        return fn(m, s)

    e, t = both(run)
    if t.layout == torch.strided:
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-5)
        assert str(e.dtype)[6:] == str(t.dtype)[6:]
    else:
        assert_same_sparse(e, t)


@needs_torch
def test_math_structure_like_torch():
    def run(m):
        s, _ = _coo_pair(m, seed=2)
        d = m.ones(5, 3)
        return [
            m.sparse.sum(s, 0),
            m.sparse.softmax(s, 1),
            m.smm(s, d),
            s.t(),
            s * 2,
            s.sparse_mask(s.coalesce()) if False else m.ones(4, 5).sparse_mask(s.coalesce()),
        ]

    for e, t in zip(*both(run)):
        assert_same_sparse(e, t, check_coalesced=False)


MATH_ERRORS = [
    (
        lambda m, s: m.sparse.mm(s, m.ones(4, 4)),
        "addmm: Argument #3 (dense): Expected dim 0 size 5, got 4",
    ),
    (
        lambda m, s: m.sparse.mm(s, m.ones(5, 2, dtype=m.float64)),
        "expected scalar type Float but found Double",
    ),
    (
        lambda m, s: m.sparse.mm(m.sparse_coo_tensor([[0, 1]], m.ones(2, 2), (2, 2)), m.ones(2, 2)),
        "addmm: matrices expected, got 1D tensor",
    ),
    (
        lambda m, s: m.sparse.sum(s, 2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        lambda m, s: m.sparse.softmax(s, 3),
        "Dimension out of range (expected to be in range of [-2, 1], but got 3)",
    ),
    (
        lambda m, s: s + m.ones(4, 5),
        "add(sparse, dense) is not supported. Use add(dense, sparse) instead.",
    ),
    (
        lambda m, s: m.ones(2, 2).sspaddmm(m.ones(2, 2), m.ones(2, 2)),
        "tensor.sspaddmm(...) can only be called on sparse tensors",
    ),
    (
        lambda m, s: m.ones(2, 2).smm(m.ones(2, 2)),
        "tensor.sspaddmm(...) can only be called on sparse tensors",
    ),
    (
        lambda m, s: m.sparse.spdiags(m.ones(3, 3), m.tensor([0, 0, 1]), (3, 3)),
        "Offset tensor contains duplicate values",
    ),
    (
        lambda m, s: m.sparse.spdiags(m.ones(3, 3), m.tensor([0, 1]), (3, 3)),
        "Number of diagonals (3) does not match the number of offsets (2)",
    ),
    (
        lambda m, s: s.coalesce().sparse_resize_((1, 5), 2, 0),
        (
            "shrinking the size of sparse dimensions (from [4, 5] to [1, 5]) on a non-empty sparse "
            "tensor is not supported."
        ),
    ),
    (
        lambda m, s: s.coalesce().sparse_resize_((4, 5), 1, 1),
        (
            "changing the number of sparse dimensions (from 2 to 1) on a non-empty sparse tensor is "
            "not supported."
        ),
    ),
]


@needs_torch
@pytest.mark.parametrize("k", range(len(MATH_ERRORS)))
def test_math_errors_like_torch(k):
    fn, msg = MATH_ERRORS[k]
    exc = IndexError if msg.startswith("Dimension out of range") else RuntimeError
    for m in (ember, torch):
        s, _ = _coo_pair(m)
        with pytest.raises(exc, match=re.escape(msg)):
            fn(m, s.detach())


def test_sparse_resize_dense_errors():
    d = ember.ones(2, 3)
    with pytest.raises(NotImplementedError, match="aten::sparse_resize_"):
        d.sparse_resize_((2, 3), 2, 0)
    with pytest.raises(NotImplementedError, match="aten::sparse_resize_and_clear_"):
        d.sparse_resize_and_clear_((2, 3), 2, 0)
    with pytest.raises(RuntimeError, match="resize_as_sparse_"):
        d.resize_as_sparse_(d.to_sparse())
    with pytest.raises(RuntimeError, match="expected mask to be a sparse tensor"):
        d.sparse_mask(d)


@needs_torch
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, s: s.sparse_resize_((5, 7), 2, 0),
        lambda m, s: s.sparse_resize_and_clear_((1, 5), 1, 1),
        lambda m, s: s.resize_as_sparse_(m.zeros(6, 6).to_sparse()),
        lambda m, s: m.zeros(3, 3).to_sparse().sparse_resize_((2, 2, 2), 1, 2),
    ],
)
def test_sparse_resize(fn):
    def run(m):
        s, _ = _coo_pair(m)
        s = s.detach().coalesce()
        r = fn(m, s)
        return r

    assert_same_sparse(*both(run))


@needs_torch
@pytest.mark.parametrize(
    "args",
    [
        ((3, 3), [0, -1, 1], (3, 3), None),
        ((3, 3), [0, -1, 2], (4, 5), "sparse_csr"),
        ((3, 4), [1, -2, 0], (5, 4), "sparse_csc"),
        ((9,), [0], (3, 3), None),
        ((1, 2), [0], (3, 3), None),
    ],
)
def test_spdiags(args):
    dshape, offs, shape, lay = args

    def run(m):
        diags = m.arange(1.0, 1 + int(np.prod(dshape))).reshape(dshape)
        kw = {} if lay is None else {"layout": getattr(m, lay)}
        return m.sparse.spdiags(diags, m.tensor(offs), shape, **kw)

    assert_same_sparse(*both(run), check_coalesced=False)


# ------------------------------------------------------------------------------ copies
def test_pickle_deepcopy_save_load(tmp_path):
    s = ember.tensor(_arr((3, 4))).to_sparse_csr()
    for c in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert c.layout is ember.sparse_csr
        np.testing.assert_array_equal(_np(c.to_dense()), _np(s.to_dense()))
    r = ember.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,), requires_grad=True)
    c = pickle.loads(pickle.dumps(r))
    assert not c.requires_grad and c.is_leaf  # torch's COO rebuild drops requires_grad
    p = tmp_path / "s.pt"
    ember.save({"s": s}, p)
    back = ember.load(p, weights_only=False)["s"]
    np.testing.assert_array_equal(_np(back.to_dense()), _np(s.to_dense()))
    # the safe (weights-only) loader rebuilds sparse tensors too, as torch's does
    coo = ember.tensor(_arr((3, 4, 2))).to_sparse(2)  # hybrid: one dense dim
    ember.save({"s": s, "coo": coo}, p)
    safe = ember.load(p)
    assert safe["s"].layout is ember.sparse_csr and safe["coo"].dense_dim() == 1
    for k, v in (("s", s), ("coo", coo)):
        np.testing.assert_array_equal(_np(safe[k].to_dense()), _np(v.to_dense()))


def test_detach_clone_to_share_indices():
    s = ember.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,), requires_grad=True)
    d = s.detach()
    assert not d.requires_grad and s.requires_grad
    c = s.clone()
    assert c.requires_grad and not c.is_leaf
    assert s.to(ember.float32) is s and s.to(ember.float64).dtype is ember.float64
    assert s.double().dtype is ember.float64 and s.detach().long().dtype is ember.int64


# ------------------------------------------------------------------------------ device dispatch
def test_strict_cuda_dispatch():
    # every kernel runs on the array module of its inputs: on the strict fake-cupy backend a
    # numpy call on device data would raise; results stay on the device and equal the cpu's
    from strict_backend import StrictArray, strict_cuda

    a = _arr((3, 4), seed=3)
    cpu = ember.tensor(a)
    ones = np.ones((4, 2), np.float32)
    runs = [
        lambda t, o: t.to_sparse().to_dense(),
        lambda t, o: t.to_sparse_csr().to_dense(),
        lambda t, o: t.to_sparse_csc().to_dense(),
        lambda t, o: ember.mm(t.to_sparse(), o),
        lambda t, o: ember.mm(t.to_sparse_csr(), o),
        lambda t, o: ember.sparse.sum(t.to_sparse(), 0).to_dense(),
        lambda t, o: ember.sparse.softmax(t.to_sparse(), 1).to_dense(),
        lambda t, o: (t.to_sparse() + t.to_sparse()).coalesce().values(),
    ]
    with strict_cuda():
        dev = ember.tensor(a, device="cuda")
        odev = ember.tensor(ones, device="cuda")
        for f in runs:
            r = f(dev, odev)
            assert r.device.type == "cuda" and isinstance(r._data, StrictArray)
            np.testing.assert_allclose(
                np.asarray(r._data), f(cpu, ember.tensor(ones)).numpy(), rtol=1e-6, atol=1e-6
            )
