"""The Tensor protocol: attributes, Size, conversions, dunders, pickling/copying, subclassing,
the legacy constructor and legacy type strings, checked against torch where it is the oracle."""

import copy
import pickle

import ember
import harness
import numpy as np
import pytest

torch = pytest.importorskip("torch")

DTYPES = harness.DTYPES


def outcome(fn):
    """repr of the result, or 'Type: message' of the error (torch. spelled ember.)."""
    try:
        return repr(fn()).replace("torch.", "ember.")
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return f"{type(e).__name__}: {e}".replace("torch.", "ember.")


def both(fn):
    return outcome(lambda: fn(ember)), outcome(lambda: fn(torch))


# ---------------------------------------------------------------------------------- Size
def test_size_protocol():
    s = ember.ones(2, 3, 4).shape
    assert type(s) is ember.Size and repr(s) == "ember.Size([2, 3, 4])" == str(s)
    assert s == (2, 3, 4) and s != [2, 3, 4] and s.numel() == 24 and ember.Size().numel() == 1
    assert type(s[1:]) is ember.Size and s[1:] == (3, 4) and type(s[0]) is int
    assert type(s + (5,)) is ember.Size and s + (5,) == (2, 3, 4, 5)
    assert type((1,) + s) is ember.Size and (1,) + s == (1, 2, 3, 4)
    assert type(s * 2) is ember.Size and len(2 * s) == 6
    assert ember.Size([ember.tensor(3), np.int64(2)]) == (3, 2)
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is ember.Size
    assert hash(s) == hash((2, 3, 4))


@pytest.mark.parametrize("bad", [[2.5], [True, 2], ["a"]])
def test_size_rejects_non_ints(bad):
    e, t = both(lambda m: m.Size(bad))
    assert e == t


# ---------------------------------------------------------------------------------- attributes
@pytest.mark.parametrize("dt", DTYPES)
def test_attributes_match_torch(dt):
    def attrs(m):
        x = m.ones(2, 3, dtype=getattr(m, dt))
        return (
            tuple(x.shape),
            x.size(),
            x.size(1),
            x.size(-1),
            x.dim(),
            x.ndim,
            x.ndimension(),
            x.numel(),
            x.nelement(),
            x.element_size(),
            x.itemsize,
            x.nbytes,
            x.stride(),
            x.stride(0),
            x.storage_offset(),
            x.is_floating_point(),
            x.is_complex(),
            x.is_signed(),
            x.is_leaf,
            x.requires_grad,
            x.is_cuda,
            x.get_device(),
        )

    e, t = both(attrs)
    assert e == t


@pytest.mark.parametrize("fn", [lambda x: x.size(2), lambda x: x.size(-3), lambda x: x.stride(2)])
def test_dim_errors(fn):
    e, t = both(lambda m: fn(m.ones(2, 3)))
    assert e == t


def test_strides_offsets_and_pointers():
    x = ember.ones(2, 3)
    assert x.data_ptr() == x.numpy().__array_interface__["data"][0]
    assert x.detach().data_ptr() == x.data_ptr() == x.data.data_ptr()
    tx = torch.ones(2, 3)
    for f in (
        lambda a: a[1],
        lambda a: a[:, 1],
        lambda a: a[1][1:],
        lambda a: a[:, 1:],
        lambda a: a.transpose(0, 1),
        lambda a: a[1:].detach(),
    ):
        v, tv = f(x), f(tx)
        assert v.stride() == tv.stride()
        assert v.storage_offset() == tv.storage_offset()
        assert v.data_ptr() - x.data_ptr() == tv.data_ptr() - tx.data_ptr()
    assert ember.zeros(0).numel() == 0 and ember.tensor(3.0).stride() == ()


def test_empty_and_scalar_shapes():
    assert (
        both(lambda m: (m.zeros(0, 3).shape, m.tensor(2.0).shape, m.zeros(0).dim()))[0]
        == both(lambda m: (m.zeros(0, 3).shape, m.tensor(2.0).shape, m.zeros(0).dim()))[1]
    )


# ---------------------------------------------------------------------------------- data
def test_data_get_and_set():
    x = ember.ones(3, requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf and d.data_ptr() == x.data_ptr()
    d.add_(1)  # shares storage ...
    assert x.tolist() == [2.0, 2.0, 2.0]
    assert x._version == 0  # ... but not the version counter (torch: .data in-place is untracked)
    det = x.detach()
    det.mul_(1)
    assert x._version == 1  # detach() shares it
    x.data = ember.zeros(2, dtype=ember.float64)  # like torch: shape and dtype may change
    assert x.shape == (2,) and x.dtype == ember.float64 and x.requires_grad
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        x.data = [1.0, 2.0]  # torch's message


# ---------------------------------------------------------------------------------- len / iter
def test_len_and_iter():
    x = ember.arange(6.0).reshape(2, 3)
    assert len(x) == 2 and [r.tolist() for r in x] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    g = ember.arange(6.0).reshape(2, 3).requires_grad_()
    rows = list(g)
    assert rows[0].grad_fn is not None  # iteration is differentiable (unbind)
    sum(r.sum() for r in rows).backward()
    assert g.grad.tolist() == [[1.0] * 3] * 2
    for f in (len, iter):
        e, t = both(lambda m, f=f: f(m.tensor(1.0)))
        assert e == t


# ---------------------------------------------------------------------------------- Python numbers
SCALAR_INPUTS = {
    "f0": lambda m: m.tensor(1.5),
    "i1": lambda m: m.tensor([2]),
    "i2": lambda m: m.tensor([1, 2]),
    "b0": lambda m: m.tensor(True),
    "e": lambda m: m.tensor([]),
    "c1": lambda m: m.tensor([1 + 2j]),
    "i0": lambda m: m.tensor(-3),
    "f1": lambda m: m.tensor([[2.5]]),
    "u8": lambda m: m.tensor(7, dtype=m.uint8),
    "g": lambda m: m.tensor(2.0, requires_grad=True),
    "bf": lambda m: m.tensor(1.5, dtype=m.bfloat16),
    "nan": lambda m: m.tensor(float("nan")),
}
CONVERSIONS = {
    "bool": bool,
    "int": int,
    "float": float,
    "complex": complex,
    "index": lambda t: t.__index__(),
    "list_index": lambda t: [10, 20, 30, 40][t],
    "slice": lambda t: list(range(6))[t:],
    "hex": hex,
    "item": lambda t: t.item(),
    "tolist": lambda t: t.tolist(),
}


@pytest.mark.parametrize("conv", CONVERSIONS, ids=str)
def test_python_number_protocol(conv):
    f = CONVERSIONS[conv]
    for k, make in SCALAR_INPUTS.items():
        e, t = both(lambda m, make=make: f(make(m)))
        assert e == t, k


def test_bool_messages():
    with pytest.raises(
        RuntimeError, match="^Boolean value of Tensor with more than one value is ambiguous$"
    ):
        bool(ember.ones(2))
    with pytest.raises(RuntimeError, match="^Boolean value of Tensor with no values is ambiguous$"):
        bool(ember.ones(0))
    assert ember.tensor([0.0]) or True
    assert not ember.tensor(0)


def test_format():
    loss = ember.tensor(0.123456)
    assert f"{loss:.4f}" == f"{torch.tensor(0.123456):.4f}" == "0.1235"
    assert f"{loss}" == f"{torch.tensor(0.123456)}"
    assert f"{ember.tensor(7):>4}" == "   7"
    v = ember.tensor([1.5, 2.0])
    assert f"{v}" == str(v) == "tensor([1.5000, 2.0000])"
    e, t = both(lambda m: f"{m.tensor([2.5]):.3f}")
    assert e == t and e.startswith("TypeError: unsupported format string")


def test_hash_is_identity_and_tensors_are_dict_keys():
    a, b = ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0])
    assert hash(a) == id(a) and hash(a) != hash(b)
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b" and a in {a} and b not in {a}
    assert isinstance(a == b, ember.Tensor)  # __eq__ is elementwise, __hash__ still by identity
    assert type(ember.Tensor.__hash__(a)) is int


# ---------------------------------------------------------------------------------- numpy & co
def test_numpy_shares_memory_and_errors():
    x = ember.zeros(3)
    a = x.numpy()
    a[1] = 5
    assert x.tolist() == [0.0, 5.0, 0.0] and np.shares_memory(a, x.numpy())
    g = ember.zeros(2, requires_grad=True)
    e, t = both(lambda m: m.zeros(2, requires_grad=True).numpy())
    assert e == t
    assert g.numpy(force=True).tolist() == [0.0, 0.0]
    assert x.numpy().dtype == np.float32 and ember.tensor([1, 2]).numpy().dtype == np.int64


def test_array_protocol():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])  # (one requiring grad is refused, as in torch)
    a = np.asarray(x)
    assert a.dtype == np.float32 and a.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.array(x, copy=True) is not x._data


def test_tolist_and_item():
    for dt in DTYPES:
        e, t = both(
            lambda m, dt=dt: (
                m.tensor([[1, 0], [2, 3]], dtype=getattr(m, dt)).tolist(),
                m.tensor([3], dtype=getattr(m, dt)).item(),
            )
        )
        assert e == t, dt
    e, t = both(lambda m: m.tensor([1, 2]).item())
    assert e == t == "RuntimeError: a Tensor with 2 elements cannot be converted to Scalar"


def test_dlpack():
    x = ember.tensor([1.0, 2.0, 3.0])
    a = np.from_dlpack(x)
    a[0] = 9
    assert x.tolist() == [9.0, 2.0, 3.0]
    assert (
        tuple(x.__dlpack_device__())
        == (1, 0)
        == tuple(int(v) for v in torch.ones(1).__dlpack_device__())
    )
    assert ember.from_dlpack(torch.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert torch.from_dlpack(x).tolist() == [9.0, 2.0, 3.0]
    e, t = both(lambda m: m.ones(2, requires_grad=True).__dlpack__())
    assert e == t


# ---------------------------------------------------------------------------------- pickle / copy
def _roundtrips(x):
    return [pickle.loads(pickle.dumps(x)), copy.deepcopy(x)]


@pytest.mark.parametrize("dt", DTYPES)
def test_pickle_and_deepcopy_keep_values_and_dtype(dt):
    x = ember.tensor([[1, 0], [2, 3]], dtype=getattr(ember, dt))
    for y in _roundtrips(x):
        assert y.dtype == x.dtype and y.tolist() == x.tolist() and y.data_ptr() != x.data_ptr()


def test_pickle_and_deepcopy_keep_names_grad_and_flags():
    x = ember.ones(2, 3).rename("N", "C").requires_grad_()
    x.grad = ember.full((2, 3), 3.0)
    for y in _roundtrips(x):
        assert y._names == ("N", "C") and y.requires_grad and y.is_leaf
    d = copy.deepcopy(x)
    assert d.grad.tolist() == [[3.0] * 3] * 2 and d.grad.data_ptr() != x.grad.data_ptr()
    y = ember.tensor([1.0, 2.0], requires_grad=True) * 2  # a non-leaf pickles as a leaf (torch too)
    p = pickle.loads(pickle.dumps(y))
    assert p.requires_grad and p.is_leaf and p.tolist() == [2.0, 4.0]
    e, t = both(lambda m: copy.deepcopy(m.tensor([1.0, 2.0], requires_grad=True) * 2))
    assert e == t
    shared = ember.ones(2)
    c1, c2 = copy.deepcopy([shared, shared])
    assert c1 is c2  # the memo keeps identity, like any deepcopy


# ---------------------------------------------------------------------------------- subclasses
class MyT(ember.Tensor):
    pass


class Param(ember.Tensor):
    """The nn.Parameter pattern: __new__ builds through Tensor._make_subclass."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ember.empty(0)
        return ember.Tensor._make_subclass(cls, data, requires_grad)


def test_subclass_construction_and_repr():
    a = MyT([1.0, 2.0])
    assert type(a) is MyT and repr(a) == "MyT([1., 2.])"
    p = Param(ember.ones(2))
    assert type(p) is Param and p.requires_grad and p.is_leaf
    q = type(p)(ember.zeros(3), requires_grad=False)  # type(self)(...) keeps working
    assert type(q) is Param and not q.requires_grad
    # ops keep the subclass, as torch's default __torch_function__ does (nn.Parameter opts out)
    assert type(p * 2) is Param
    (p * 2).sum().backward()
    assert p.grad.tolist() == [2.0, 2.0]
    s = ember.ones(2).as_subclass(MyT)
    assert type(s) is MyT


def test_subclass_pickle_and_deepcopy_keep_type_and_attributes():
    p = Param(ember.ones(2))
    p.tag = "w"
    for y in _roundtrips(p):
        assert type(y) is Param and y.tag == "w" and y.requires_grad and y.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------------- legacy ctor
LEGACY = {
    "sizes": lambda m: (m.Tensor(2, 3).shape, m.Tensor(2, 3).dtype),
    "empty": lambda m: m.Tensor(),
    "list": lambda m: m.Tensor([1, 2]),
    "nested": lambda m: m.Tensor([[1, 2], [3, 4]]),
    "tuple": lambda m: m.Tensor((1.5, 2)),
    "ndarray": lambda m: m.Tensor(np.array([1, 2])),
    "size_obj": lambda m: m.Tensor(m.Size([2, 3])).shape,
    "tensor_alias": lambda m: m.Tensor(m.tensor([1, 2])),
    "float": lambda m: m.Tensor(2.5),
    "str": lambda m: m.Tensor("a"),
}


@pytest.mark.parametrize("case", LEGACY, ids=str)
def test_legacy_constructor(case):
    e, t = both(LEGACY[case])
    assert e == t


def test_legacy_constructor_follows_default_dtype():
    ember.set_default_dtype(ember.float64)
    assert ember.Tensor(2).dtype == ember.float64 and ember.Tensor([1]).dtype == ember.float64


# ---------------------------------------------------------------------------------- requires_grad
def test_requires_grad_rules():
    for dt in ("int64", "bool", "uint8"):
        e, t = both(lambda m, dt=dt: m.ones(2, dtype=getattr(m, dt)).requires_grad_())
        assert e == t
    assert ember.ones(2, dtype=ember.complex64).requires_grad_().requires_grad
    assert ember.ones(2, dtype=ember.bfloat16).requires_grad_().requires_grad
    e, t = both(lambda m: (m.ones(2, requires_grad=True) * 2).requires_grad_(False))
    assert e == t
    assert ember.tensor([1]).requires_grad_(False).requires_grad is False


# ---------------------------------------------------------------------------------- type()
@pytest.mark.parametrize("dt", DTYPES + ["uint16", "uint32", "uint64"])
def test_type_strings_are_torch_spelled(dt):
    # deliberate: 'torch.FloatTensor' (not 'ember.FloatTensor'), so ported code comparing it works
    x = ember.zeros(2, dtype=getattr(ember, dt))
    assert x.type() == torch.zeros(2, dtype=getattr(torch, dt)).type()


@pytest.mark.parametrize(
    "arg",
    [
        "torch.IntTensor",
        "torch.DoubleTensor",
        "torch.BoolTensor",
        "torch.Foo",
        "float",
        "DoubleTensor",
    ],
)
def test_type_cast_by_string(arg):
    e, t = both(lambda m: m.tensor([1.5, 2.0]).type(arg))
    assert e == t


def test_type_cast_by_dtype_and_errors():
    x = ember.tensor([1.5, 2.0])
    assert (
        x.type(ember.int32).dtype == ember.int32 and x.type("ember.LongTensor").dtype == ember.int64
    )
    assert x.type(ember.float32) is x  # nothing to do: the same tensor, like to()
    e, t = both(lambda m: m.tensor([1.5]).type(np.float64))
    assert e == t
    e, t = both(lambda m: m.tensor([1.5]).type(5))
    assert e == t


@pytest.mark.parametrize("fn", ["numel", "is_signed", "get_device", "is_tensor"])
def test_function_forms_match_torch(fn):
    for dt in ("float32", "int64", "uint8"):
        e = ember.ones(2, 3, dtype=getattr(ember, dt))
        t = torch.ones(2, 3, dtype=getattr(torch, dt))
        assert getattr(ember, fn)(e) == getattr(torch, fn)(t)


def test_detach_function_shares_storage():
    x = ember.ones(3, requires_grad=True)
    d = ember.detach(x)
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    assert ember.ones(2).is_sparse_csr is torch.ones(2).is_sparse_csr


def test_complex_to_real_cast_warns_like_torch_and_differentiates():
    # torch warns once per process: an earlier test's cast would silence it here
    was = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        for m in (ember, torch):
            with pytest.warns(UserWarning, match="Casting complex values to real discards"):
                m.tensor([1 + 2j]).to(m.float32)
    finally:
        torch.set_warn_always(was)
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x * ember.tensor([1 + 2j, 3 - 1j])).real
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [1.0, 3.0]


def test_namespaces_import_as_submodules():
    import importlib

    for name in ("linalg", "fft", "special"):
        assert importlib.import_module(f"ember.{name}") is getattr(ember, name)


def test_constants_and_more_function_forms_match_torch():
    for name in ("inf", "pi", "e", "newaxis"):
        assert getattr(ember, name) == getattr(torch, name)
    assert ember.nan != ember.nan
    for m in (ember, torch):
        assert m.is_nonzero(m.tensor([1.5])) and not m.is_nonzero(m.tensor([0]))
        assert m.is_conj(m.tensor([1j])) is False


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
def test_cumulative_in_place_matches_torch(op):
    vals = []
    for m in (ember, torch):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        assert getattr(x, op)(1) is x
        vals.append(x.tolist())
    assert vals[0] == vals[1]
