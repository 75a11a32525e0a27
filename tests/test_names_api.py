"""The named-tensor API (names spec sections 1, 4.9, 4.10 and the section-5 rows P02-P35,
P60-P71, P132, P137, P141): names= on factories, Tensor.names, has_names, rename/rename_,
refine_names, align_to/align_as, size/stride by name, equal, repr, pickle/deepcopy.

PyTorch 2.x has no named tensors, so the spec is the oracle for names; torch is the oracle for
values (align_to's data is a permute + reshape in torch) and for gradients.
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # values vs torch skip; names checks still run
    torch = None


def raises(exc, text):
    """pytest.raises with a case-insensitive substring match (the spec's "ERR text")."""
    return pytest.raises(exc, match=re.compile(re.escape(text), re.IGNORECASE))


def arange(*shape, names=None, dtype=np.float32):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return ember.tensor(a, names=names)


# ---------------------------------------------------------------------- factories (P02-P12)
def test_P02_factory_without_names():
    assert ember.empty(1, 2, 3).names == (None, None, None)
    assert ember.empty(1, 2, 3, names=None).names == (None, None, None)
    assert not ember.empty(1, 2, 3, names=None).has_names()


def test_P03_factory_names():
    x = ember.empty(1, 2, 3, names=("N", "T", "D"))
    assert x.names == ("N", "T", "D")
    assert x.shape == (1, 2, 3)


def test_P05_factory_identifier_names():
    names = ("_1", "batch9", "BATCH_5")
    assert ember.empty(1, 2, 3, names=names).names == names


@pytest.mark.parametrize("bad", ["1", "?", "a b", ""])
def test_P06_factory_invalid_identifier(bad):
    with raises(RuntimeError, "a valid identifier contains only"):
        ember.empty(2, names=(bad,))


def test_P06_factory_invalid_identifier_in_setter_and_rename():
    x = ember.empty(2)
    with raises(RuntimeError, "a valid identifier contains only"):
        x.names = ("1",)
    with raises(RuntimeError, "a valid identifier contains only"):
        x.rename("?")


def test_P08_factory_names_str_is_type_error():
    with pytest.raises(TypeError, match="names must be a tuple or list"):
        ember.empty(2, 1, names="N")
    with pytest.raises(TypeError, match="names must be a tuple or list"):
        ember.empty(2, names="N")  # a one-letter str would otherwise pass as ('N',)
    with pytest.raises(TypeError, match="a name must be a str or None"):
        ember.empty(2, names=(1,))


def test_P09_factory_duplicate_names():
    with raises(RuntimeError, "construct a tensor with duplicate names"):
        ember.empty(2, 1, 1, names=("N", "C", "N"))


FACTORIES = {
    "ones": lambda m, **kw: m.ones(1, 2, 3, **kw),
    "zeros": lambda m, **kw: m.zeros(1, 2, 3, **kw),
    "rand": lambda m, **kw: m.rand(1, 2, 3, **kw),
    "randn": lambda m, **kw: m.randn(1, 2, 3, **kw),
    "full": lambda m, **kw: m.full([1, 2, 3], 2.0, **kw),
    "empty_shape": lambda m, **kw: m.empty(1, 2, 3, **kw),
    "tensor": lambda m, **kw: m.tensor(np.ones((1, 2, 3), np.float32), **kw),
    "randint": lambda m, **kw: m.randint(0, 5, (1, 2, 3), **kw),
}


@pytest.mark.parametrize("name", list(FACTORIES), ids=lambda n: f"P11-{n}")
def test_P11_factory_coverage(name):
    make = FACTORIES[name]
    names = ("N", "T", "D")
    ember.manual_seed(0)
    named = make(ember, names=names)
    ember.manual_seed(0)
    plain = make(ember).rename_(*names)
    assert named.names == names == plain.names
    assert named.shape == (1, 2, 3)
    if name != "empty_shape":
        np.testing.assert_array_equal(named.numpy(), plain.numpy())


@needs_torch
@pytest.mark.parametrize("name", ["ones", "zeros", "full"], ids=lambda n: f"P11-{n}-values")
def test_P11_factory_values_vs_torch(name):
    e = FACTORIES[name](ember, names=("N", "T", "D"))
    t = FACTORIES[name](torch)
    assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_P11_factory_out_takes_names():
    out = ember.empty(1, 2, 3)
    ember.zeros(1, 2, 3, names=("N", "T", "D"), out=out)
    assert out.names == ("N", "T", "D")


def test_P12_tensor_from_lists():
    assert ember.tensor([[1]], names=("N", "C")).names == ("N", "C")
    assert ember.tensor([1], names=("N",)).names == ("N",)
    with raises(RuntimeError, "Number of names"):
        ember.tensor([1], names=("N", "C"))


def test_P12_tensor_from_tensor_keeps_or_sets_names():
    x = ember.zeros(2, 3, names=("N", "C"))
    assert ember.tensor(x).names == ("N", "C")
    assert ember.tensor(x, names=("A", "B")).names == ("A", "B")


LIKES = {
    "zeros_like": lambda x, **kw: ember.zeros_like(x, **kw),
    "ones_like": lambda x, **kw: ember.ones_like(x, **kw),
    "empty_like": lambda x, **kw: ember.empty_like(x, **kw),
    "full_like": lambda x, **kw: ember.full_like(x, 7.0, **kw),
    "rand_like": lambda x, **kw: ember.rand_like(x, **kw),
    "randn_like": lambda x, **kw: ember.randn_like(x, **kw),
    "randint_like": lambda x, **kw: ember.randint_like(x, 5, **kw),
}


@pytest.mark.parametrize("name", list(LIKES))
def test_like_factories_keep_names(name):
    x = ember.zeros(2, 3, names=("N", "C"))
    r = LIKES[name](x)
    assert r.names == ("N", "C") and r.shape == (2, 3)
    assert LIKES[name](x, names=("A", None)).names == ("A", None)
    assert not LIKES[name](ember.zeros(2, 3)).has_names()
    with raises(RuntimeError, "Number of names"):
        LIKES[name](x, names=("A",))


# ---------------------------------------------------------------------- has_names, names, repr
def test_P14_has_names():
    assert not ember.empty(2, 3).has_names()
    assert not ember.empty(2, 3, names=(None, None)).has_names()
    assert ember.empty(2, 3, names=("N", None)).has_names()
    assert ember.empty(2, 3, names=("N", "C")).has_names()


def test_names_setter():
    x = ember.zeros(2, 3)
    x.names = ["N", "C"]
    assert x.names == ("N", "C")
    x.names = ("N", None)
    assert x.names == ("N", None)
    x.names = None
    assert x.names == (None, None) and not x.has_names()
    x.names = (None, None)
    assert not x.has_names()
    with raises(RuntimeError, "Number of names"):
        x.names = ("N",)
    with raises(RuntimeError, "duplicate names"):
        x.names = ("N", "N")
    with pytest.raises(TypeError, match="names must be a tuple or list"):
        x.names = "NC"
    with pytest.raises(TypeError, match="a name must be a str or None"):
        x.names = ("N", 3)
    assert x.names == (None, None)  # a failed assignment changes nothing


def test_names_setter_renames_grad():
    w = ember.ones(2, 3, requires_grad=True)
    (w * 2).sum().backward()
    w.names = ("H", "C")
    assert w.grad.names == ("H", "C")
    w.rename_("A", None)
    assert w.grad.names == ("A", None)
    (w * 2).sum().backward()  # accumulates without a name clash
    assert w.grad.names == ("A", None)
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 3), 4.0, np.float32))


def test_P15_repr():
    x = ember.zeros(2, 3).rename_("N", "C")
    assert repr(x) == "tensor([[0., 0., 0.],\n        [0., 0., 0.]], names=('N', 'C'))"
    x.rename_(None, None)
    assert repr(x) == "tensor([[0., 0., 0.],\n        [0., 0., 0.]])"
    y = ember.zeros(1, 2, 3).rename(None, None, "N")
    assert repr(y).endswith("names=(None, None, 'N'))")


# ---------------------------------------------------------------------- size / stride (P17, P18)
def test_P17_size_by_name():
    x = ember.empty(2, 3, 5, names=("N", None, "C"))
    assert x.size("N") == 2
    assert x.size("C") == 5
    assert x.size() == (2, 3, 5)
    with raises(RuntimeError, "Please look up dimensions by name"):
        x.size(None)
    with raises(RuntimeError, "Name 'channels' not found in"):
        x.size("channels")
    with raises(RuntimeError, "Name 'N' not found in"):
        ember.empty(2, 3, 4).size("N")


def test_P18_stride_by_name():
    x = ember.empty(2, 3, 5, names=("N", None, "C"))
    assert x.stride("N") == 15
    assert x.stride("C") == 1
    assert x.stride() == (15, 5, 1)
    with raises(RuntimeError, "Please look up dimensions by name"):
        x.stride(None)
    with raises(RuntimeError, "Name 'channels' not found in"):
        x.stride("channels")
    with raises(RuntimeError, "Name 'N' not found in"):
        ember.empty(2, 3, 4).stride("N")


@needs_torch
def test_size_stride_none_on_unnamed_like_torch():
    # PyTorch 2.x: size(None)/stride(None) on a plain tensor give the whole size/stride
    e, t = ember.empty(2, 3), torch.empty(2, 3)
    assert tuple(e.size(None)) == tuple(t.size(None))
    assert tuple(e.stride(None)) == tuple(t.stride(None))


# ---------------------------------------------------------------------- equal (P20)
def test_P20_equal():
    t = ember.randn(2, 3)
    other = t.clone()
    assert ember.equal(t.rename("N", "C"), other.rename("N", "C"))
    assert not ember.equal(t.rename("M", "C"), other.rename("N", "C"))
    assert not ember.equal(t.rename(None, "C"), other.rename("N", "C"))
    assert ember.equal(t, other)
    assert not ember.equal(t.rename("N", "C"), (other + 1).rename("N", "C"))


# ---------------------------------------------------------------------- refine_names (P21-P26)
def test_P21_refine_names():
    x = ember.empty(1, 2, 3, names=(None, None, None))
    r = x.refine_names("N", "C", "H")
    assert r.names == ("N", "C", "H")
    assert x.names == (None, None, None)  # not in place


def test_P23_refine_names_keeps_none():
    x = ember.empty(1, 2, 3, names=(None, "C", None))
    assert x.refine_names(None, "C", "H").names == (None, "C", "H")


def test_P24_refine_names_wrong_number_of_dims():
    with raises(RuntimeError, "different number of dims"):
        ember.empty(2, 3, names=(None, None)).refine_names("N", "C", "H")


def test_P26_refine_names_ellipsis():
    x = ember.empty(1, 1, 2, 3)
    assert x.refine_names("...", "C", "H").names == (None, None, "C", "H")
    y = ember.empty(2, 3, 5, 7)
    assert y.refine_names("N", ..., "C").names == ("N", None, None, "C")
    assert y.refine_names("N", "...", "C").names == ("N", None, None, "C")
    z = ember.empty(2, 3, 5, 7, names=("N", None, "H", None))
    assert z.refine_names(..., "W").names == ("N", None, "H", "W")
    with raises(RuntimeError, "More than one Ellipsis"):
        y.refine_names("...", "N", "...")


def test_refine_names_errors_and_view():
    x = ember.zeros(2, 3, names=("N", None))
    with raises(RuntimeError, "'N' is more specific than None"):
        x.refine_names(None, "C")
    with raises(RuntimeError, "duplicate names"):
        x.refine_names("N", "N")
    r = x.refine_names("N", "C")
    r.add_(1)  # a view: shares storage with x
    assert float(x.sum()) == 6.0
    assert r._base is x
    assert x.refine_names(["N", "C"]).names == ("N", "C")  # a list reads like *names


def test_P132_refine_names_different_name():
    x = ember.empty(3, 1, 1, 2, names=("N", "C", "H", "W"))
    with raises(RuntimeError, "is different from") as e:
        x.refine_names("N", "C", "H", "width")
    # both name lists are in the message
    assert "['N', 'C', 'H', 'W']" in str(e.value)
    assert "['N', 'C', 'H', 'width']" in str(e.value)


# ---------------------------------------------------------------------- rename / rename_ (P27-P33)
def test_P27_rename_():
    x = ember.empty(1, 1, names=("N", "C"))
    assert x.rename_(None) is x
    assert x.names == (None, None)
    x.rename_("H", "W")
    assert x.names == ("H", "W")
    with raises(RuntimeError, "Number of names"):
        x.rename_("N", "C", "W")
    with raises(RuntimeError, "duplicate names"):
        x.rename_("N", "N")
    assert x.names == ("H", "W")  # failed renames change nothing


def test_rename_is_a_view_and_not_in_place():
    x = ember.zeros(2, 3, names=("N", "C"))
    y = x.rename("A", "B")
    assert x.names == ("N", "C") and y.names == ("A", "B")
    y.add_(2.0)
    np.testing.assert_array_equal(x.numpy(), np.full((2, 3), 2.0, np.float32))
    assert y._base is x
    assert y._version == x._version
    assert x.rename(["A", "B"]).names == ("A", "B")
    assert x.rename(None).names == (None, None)
    assert x.rename(None, "B").names == (None, "B")


def test_P29_rename_positional_and_keyword():
    x = ember.empty(1, 1, names=("N", "C"))
    with raises(RuntimeError, "either positional args or keyword args"):
        x.rename(None, N="batch")
    with raises(RuntimeError, "either positional args or keyword args"):
        x.rename_("A", N="batch")


def test_P30_rename_globber_scalar():
    s = ember.randn([])
    assert s.rename(None).names == ()
    assert s.rename("...").names == ()
    assert s.rename().names == ()


P32 = [
    (("...", "width"), ("N", "C", "H", "width")),
    (("batch", "channels", "...", "width"), ("batch", "channels", "H", "width")),
    (("batch", "..."), ("batch", "C", "H", "W")),
    (("N", "C", "H", "...", "W"), ("N", "C", "H", "W")),
    ((..., "W"), ("N", "C", "H", "W")),
]


@pytest.mark.parametrize("args,expected", P32, ids=[f"P32-{i}" for i in range(len(P32))])
def test_P32_rename_globber(args, expected):
    x = ember.empty(1, 1, 1, 1, names=("N", "C", "H", "W"))
    assert x.rename(*args).names == expected
    assert x.clone().rename_(*args).names == expected


def test_P32_rename_globber_two_ellipses():
    x = ember.empty(1, 1, 1, 1, names=("N", "C", "H", "W"))
    with raises(RuntimeError, "More than one "):
        x.rename("...", "channels", "...")
    with raises(RuntimeError, "Number of names"):
        x.rename("a", "b", "...", "c", "d", "e")  # more names than dims


def test_P33_rename_map_errors():
    for x in (ember.randn([]), ember.empty(1, 1, 1, 1)):
        with raises(RuntimeError, "dim 'N' does not exist"):
            x.rename(N="batch")
    x = ember.empty(1, 1, 1, 1, names=("N", "C", "H", "W"))
    with raises(RuntimeError, "dim 'B' does not exist"):
        x.rename(B="batch")
    with raises(RuntimeError, "dim 'B' does not exist") as e:
        x.rename(H="height", B="batch")
    assert "['N', 'C', 'H', 'W']" in str(e.value)  # the tensor's names as they were
    with raises(RuntimeError, "dim 'B' does not exist"):
        x.rename_(B="batch")
    assert x.names == ("N", "C", "H", "W")


def test_P33_rename_map():
    x = ember.zeros(1, 1, 1, 1, names=("N", "C", "H", "W"))
    y = x.rename(N="batch")
    assert y.names == ("batch", "C", "H", "W")
    y.add_(3.0)  # shares storage
    assert float(x.sum()) == 3.0
    assert x.rename(N="batch", H="height").names == ("batch", "C", "height", "W")
    assert x.rename(N="C", C="N").names == ("C", "N", "H", "W")  # a swap
    assert x.rename(N=None).names == (None, "C", "H", "W")
    with raises(RuntimeError, "duplicate names"):
        x.rename(N="C")
    x.rename_(W="width")
    assert x.names == ("N", "C", "H", "width")


def test_P35_squeeze_name_on_unnamed():
    # PyTorch said "squeeze: You passed a dimname"; ember (EMBER≠) looks the name up
    x = ember.zeros(3, 3)
    with raises(RuntimeError, "Name 'N' not found"):
        x.squeeze_("N")
    with raises(RuntimeError, "Name 'N' not found"):
        x.squeeze("N")


# ---------------------------------------------------------------------- align_to (P60-P71)
def _check_align(x, order, names, shape, perm):
    """x.align_to(*order): names, shape, and data == permute(perm).reshape(shape) (numpy)."""
    r = x.align_to(*order)
    assert r.names == names
    assert r.shape == shape
    np.testing.assert_array_equal(r.numpy(), x.numpy().transpose(perm).reshape(shape))
    assert r._base is x  # a view sharing storage
    return r


def test_P60_align_to_same():
    x = arange(3, names=("N",))
    _check_align(x, ("N",), ("N",), (3,), (0,))


def test_P62_align_to_permute():
    x = arange(3, 2, names=("N", "C"))
    _check_align(x, ("C", "N"), ("C", "N"), (2, 3), (1, 0))


def test_P63_align_to_new_dims():
    x = arange(2, 3, 5, names=("C", "N", "H"))
    _check_align(x, ("N", "H", "W", "C"), ("N", "H", "W", "C"), (3, 5, 1, 2), (1, 2, 0))


def test_P65_align_to_missing_dim():
    x = ember.empty(2, 3, names=("N", "C"))
    with raises(RuntimeError, "Cannot find dim 'N'") as e:
        x.align_to("C")
    assert "['N', 'C']" in str(e.value) and "['C']" in str(e.value)
    with raises(RuntimeError, "Cannot find dim 'C'"):
        x.align_to("D", "N")


def test_align_to_unnamed_dims_need_ellipsis():
    x = ember.empty(2, 3, names=("N", None))
    with raises(RuntimeError, "All input dims must be named"):
        x.align_to("N", "C")
    assert x.align_to("...", "N").names == (None, "N")
    u = arange(2, 3)
    r = u.align_to("...", "K")
    assert r.names == (None, None, "K") and r.shape == (2, 3, 1)
    assert u.align_to("...").names == (None, None)


P66 = [
    (("...",), ("N", "H", "W", "C"), (7, 3, 5, 2), (0, 1, 2, 3)),
    (("...", "W", "N"), ("H", "C", "W", "N"), (3, 2, 5, 7), (1, 3, 2, 0)),
    (("H", "C", "..."), ("H", "C", "N", "W"), (3, 2, 7, 5), (1, 3, 0, 2)),
    (("W", "...", "N"), ("W", "H", "C", "N"), (5, 3, 2, 7), (2, 1, 3, 0)),
    (("N", "...", "C", "D", "H", "W"), ("N", "C", "D", "H", "W"), (7, 2, 1, 3, 5), (0, 3, 1, 2)),
    ((..., "W", "N"), ("H", "C", "W", "N"), (3, 2, 5, 7), (1, 3, 2, 0)),
]


@pytest.mark.parametrize("order,names,shape,perm", P66, ids=[f"P66-{i}" for i in range(len(P66))])
def test_P66_align_to_ellipsis(order, names, shape, perm):
    x = arange(7, 3, 5, 2, names=("N", "H", "W", "C"))
    _check_align(x, order, names, shape, perm)


def test_P68_align_to_errors():
    x = ember.empty(7, 3, 5, 2, names=("N", "H", "W", "C"))
    with raises(RuntimeError, "cannot contain a None name"):
        x.align_to("...", "N", None)
    with raises(RuntimeError, "duplicate names"):
        x.align_to("...", "N", "N")
    with raises(RuntimeError, "duplicate names"):
        x.align_to("N", "H", "W", "C", "N")
    with raises(RuntimeError, "More than one Ellipsis"):
        x.align_to("...", "N", "...")
    with raises(RuntimeError, "a valid identifier"):
        x.align_to("...", "1x")
    with pytest.raises(TypeError, match="must be str or None"):
        x.align_to("...", 3)


def test_P69_align_as():
    x = arange(2, 3, 5, names=("C", "N", "H"))
    other = ember.empty(1, 1, 1, 1, names=("N", "H", "W", "C"))
    r = x.align_as(other)
    assert r.names == ("N", "H", "W", "C")
    assert r.shape == (3, 5, 1, 2)
    np.testing.assert_array_equal(r.numpy(), x.numpy().transpose(1, 2, 0).reshape(3, 5, 1, 2))
    with pytest.raises(TypeError, match="must be Tensor"):
        x.align_as(("N", "H", "W", "C"))


def test_align_as_partly_unnamed_other():
    # a None in other's names is a new unnamed size-1 dim (no '...', so None is allowed)
    x = arange(3, names=("C",))
    r = x.align_as(ember.empty(2, 4, 3, names=("N", None, "C")))
    assert r.names == ("N", None, "C") and r.shape == (1, 1, 3)


@needs_torch
@pytest.mark.parametrize(
    "shape,names",
    [
        ((3, 3, 3, 3), ("N", "H", "W", "C")),
        ((3, 3, 3, 3), ("N", "C", "H", "W")),
        ((3, 3, 3, 3, 3), ("N", "C", "H", "W", "D")),
    ],
    ids=["P70-NHWC", "P70-NCHW", "P70-NCHWD"],
)
def test_P70_scale_channels(shape, names):
    rng = np.random.default_rng(0)
    inp = rng.standard_normal(shape).astype(np.float32)
    scale = rng.standard_normal(3).astype(np.float32)
    e = ember.tensor(inp, names=names) * ember.tensor(scale).refine_names("C").align_as(
        ember.tensor(inp, names=names)
    )
    assert e.names == names
    c = names.index("C")
    view = [1] * len(shape)
    view[c] = 3
    t = torch.tensor(inp) * torch.tensor(scale).view(*view)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@needs_torch
def test_P71_align_to_leading_names_then_ellipsis():
    names = ("A", "B", "C", "D", "E", "F")
    a = np.random.default_rng(1).standard_normal((2,) * 6).astype(np.float32)
    r = ember.tensor(a, names=names).align_to("F", "E", ...)
    assert r.names == ("F", "E", "A", "B", "C", "D")
    np.testing.assert_array_equal(r.numpy(), torch.tensor(a).permute(5, 4, 0, 1, 2, 3).numpy())


# ---------------------------------------------------------------------- autograd through the API
def _aligned(m, x):
    # ember: the named way; torch: the same data movement by position
    if m is ember:
        return x.refine_names("A", "B", "C").align_to("C", "X", "...", "Y")
    return x.permute(2, 0, 1).unsqueeze(1).unsqueeze(-1)


def _aligned_as(m, x, y):
    if m is ember:  # x (3,4)[H,W] aligned to [W,None,H] is x.T[:, None]
        return x.refine_names("H", "W").align_as(y.refine_names("W", None, "H")) * y
    return x.T[:, None] * y


def _renamed(m, x):
    if m is ember:
        return x.rename("A", "B").rename(A="Z").refine_names("Z", "B") * x.rename(None)
    return x * x


GRAD_CASES = [
    Case("align_to", _aligned, [A(2, 3, 4)]),
    Case("align_as", _aligned_as, [A(3, 4), A(4, 1, 3)]),
    Case("rename", _renamed, [A(3, 4)]),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_api_parity_with_torch(case):
    run_case(case)


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_api_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_align_to_gradient_names():
    x = ember.randn(2, 3, 4, names=("A", "B", "C"), requires_grad=True)
    y = x.align_to("C", "X", "A", "B")
    assert y.grad_fn is not None
    g = ember.randn(4, 1, 2, 3)
    y.backward(g)
    assert x.grad.names == ("A", "B", "C")
    np.testing.assert_array_equal(x.grad.numpy(), g.numpy()[:, 0].transpose(1, 2, 0))


def test_align_to_double_backward_names():
    x = ember.randn(2, 3, names=("A", "B"), requires_grad=True)
    y = (x.align_to("B", "K", "A") ** 2).sum()
    (gx,) = ember.autograd.grad(y, x, create_graph=True)
    assert gx.names == ("A", "B")
    gx.sum().backward()
    assert x.grad.names == ("A", "B")
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 2.0), rtol=1e-6)


def test_rename_and_refine_gradient_names():
    x = ember.randn(2, 3, requires_grad=True)
    x.rename("N", "C").sum().backward()
    assert x.grad.names == (None, None)
    w = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    (w.rename(None) * 2).sum().backward()
    assert w.grad.names == ("N", "C")
    v = ember.randn(2, 3, names=("N", None), requires_grad=True)
    v.refine_names("N", "C").sum().backward()
    assert v.grad.names == ("N", None)


# ---------------------------------------------------------------------- pickle, deepcopy (4.9)
def test_pickle_and_deepcopy_keep_names():
    x = ember.randn(2, 3, names=("N", None))
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert y.names == ("N", None)
        np.testing.assert_array_equal(y.numpy(), x.numpy())
    p = ember.randn(2, 3, names=("N", "C"), requires_grad=True)
    q = pickle.loads(pickle.dumps(p))
    assert q.names == ("N", "C") and q.requires_grad
    assert not pickle.loads(pickle.dumps(ember.randn(2))).has_names()


# ---------------------------------------------------------------------- P137, P141
def test_P137_info_smoke():
    t = ember.empty(1, 1, names=("N", "D"))
    _ = t.device
    _ = t.dtype
    t.get_device()
    t.is_complex()
    t.is_floating_point()
    t.is_nonzero()
    _ = t.layout
    t.numel()
    t.dim()
    t.element_size()
    t.is_contiguous()
    _ = t.is_cuda
    _ = t.is_leaf
    t.is_pinned()
    t.is_shared()
    _ = t.is_sparse
    t.ndimension()
    t.nelement()
    t.storage_offset()
    t.data_ptr()
    t.item()
    t.is_signed()
    assert t.shape == (1, 1)
    assert t.size() == (1, 1) and t.size(1) == 1
    assert t.stride() == (1, 1) and t.stride(1) == 1
    assert t.data.names == ("N", "D")
    assert t.ndim == 2
    assert t.type() == "torch.FloatTensor"
    assert ember.is_tensor(t)


@needs_torch
def test_is_nonzero_like_torch():
    assert ember.tensor([0.0]).is_nonzero() is torch.tensor([0.0]).is_nonzero()
    assert ember.tensor([[2]]).is_nonzero() is torch.tensor([[2]]).is_nonzero()
    for shape in ((2,), (0,)):
        with pytest.raises(RuntimeError) as te:
            torch.ones(shape).is_nonzero()
        with raises(RuntimeError, str(te.value)):
            ember.ones(shape).is_nonzero()


def test_P141_no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ember.zeros(2, 3, names=("N", "C"))
        ember.randn(2, 3, names=("N", "C"))
        x.rename("A", "B").refine_names("A", "B").align_to("B", "A", "K")
        x.rename_(None)
        x.names = ("N", "C")
        x.align_as(ember.empty(1, 3, 2, names=("X", "C", "N")))


def test_api_kernels_stay_on_device():
    # the align_to/rename kernels use xp (cupy on cuda): checked with the strict test backend
    from strict_backend import StrictArray, strict_cuda

    with strict_cuda():
        x = ember.tensor(np.arange(24.0).reshape(2, 3, 4), device="cuda", requires_grad=True)
        y = x.refine_names("A", "B", "C").align_to("C", "K", "...").rename(K="k")
        assert type(y._data) is StrictArray and y.names == ("C", "k", "A", "B")
        (gx,) = ember.autograd.grad((y * y).sum(), x, create_graph=True)
        assert type(gx._data) is StrictArray
        (ggx,) = ember.autograd.grad(gx.sum(), x)
        assert type(ggx._data) is StrictArray
        np.testing.assert_allclose(np.asarray(gx.detach().cpu()._data), 2 * x.detach().cpu()._data)
        np.testing.assert_allclose(np.asarray(ggx.cpu()._data), np.full((2, 3, 4), 2.0))


def test_every_api_of_the_operator_table_exists():
    # spec section 2: each listed Tensor method / torch function exists in ember
    import pathlib
    import re

    spec = pathlib.Path(__file__).resolve().parents[2] / "shared" / "spec" / "named_tensors.md"
    if not spec.exists():
        pytest.skip(f"the names spec is not beside the checkout ({spec})")
    text = spec.read_text()
    table = text[text.index("api\trule") :]
    table = table[: table.index("```")]
    missing = []
    for line in table.strip().split("\n")[1:]:
        for part in line.split("\t")[0].split(","):
            m = re.match(r"\s*(Tensor|torch)\.(\w+)", part)
            if m and not hasattr(ember.Tensor if m.group(1) == "Tensor" else ember, m.group(2)):
                missing.append(part.strip())
    assert missing == []
