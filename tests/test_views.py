"""Views share memory and the version counter like torch's; strides, storage offsets, memory
formats (channels_last) and layouts match torch; names flow through shape ops."""

import pickle
from collections import OrderedDict

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _pair(*shape):
    a = np.arange(float(np.prod(shape)), dtype=np.float32).reshape(shape)
    return ember.tensor(a), torch.tensor(a)


# fn(module, x) -> a view of x (or a tuple of views); the first element is written through
VIEWS = [
    ("view", (3, 4), lambda m, x: x.view(2, 6)),
    (
        "view_as",
        (3, 4),
        lambda m, x: x.view_as(x.new_zeros(6, 2)) if m is torch else x.view_as(ember.zeros(6, 2)),
    ),
    ("reshape_contig", (3, 4), lambda m, x: x.reshape(12)),
    ("flatten", (2, 3, 4), lambda m, x: x.flatten(1)),
    ("unflatten", (3, 4), lambda m, x: x.unflatten(1, (2, 2))),
    ("transpose", (2, 3, 4), lambda m, x: x.transpose(0, 2)),
    ("t", (3, 4), lambda m, x: x.t()),
    ("T", (2, 3, 4), lambda m, x: x.T),
    ("mT", (2, 3, 4), lambda m, x: x.mT),
    ("permute", (2, 3, 4), lambda m, x: x.permute(1, 2, 0)),
    ("movedim", (2, 3, 4), lambda m, x: x.movedim(0, -1)),
    ("unsqueeze", (3, 4), lambda m, x: x.unsqueeze(1)),
    ("unsqueeze_noncontig", (2, 3, 4), lambda m, x: x.transpose(0, 2).unsqueeze(3)),
    ("unsqueeze_noncontig_mid", (2, 3, 4), lambda m, x: x.narrow(2, 1, 2).unsqueeze(2)),
    ("squeeze", (3, 1, 4), lambda m, x: x.squeeze(1)),
    ("narrow", (3, 4), lambda m, x: x.narrow(1, 1, 2)),
    ("select", (3, 4), lambda m, x: x.select(0, 1)),
    ("select_last", (3, 4), lambda m, x: x.select(1, -1)),
    ("diagonal", (3, 4), lambda m, x: x.diagonal(1)),
    ("diagonal_neg", (2, 3, 4), lambda m, x: x.diagonal(-1, 1, 2)),
    ("unbind", (3, 4), lambda m, x: x.unbind(1)),
    ("split", (5, 4), lambda m, x: x.split(2)),
    ("split_sizes", (5, 4), lambda m, x: x.split([1, 3], 1)),
    ("chunk", (6, 4), lambda m, x: x.chunk(3)),
    ("tensor_split", (7, 4), lambda m, x: x.tensor_split(3)),
    ("view_chain", (3, 4), lambda m, x: x.t().narrow(0, 1, 2).unsqueeze(0)),
    ("detach", (3, 4), lambda m, x: x.detach()),
]


def _first(v):
    return v[-1] if isinstance(v, tuple) else v


@pytest.mark.parametrize("name,shape,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_view_shares_memory_like_torch(name, shape, fn):
    e, t = _pair(*shape)
    ev, tv = fn(ember, e), fn(torch, t)
    evs = ev if isinstance(ev, tuple) else (ev,)
    tvs = tv if isinstance(tv, tuple) else (tv,)
    assert len(evs) == len(tvs)
    for a, b in zip(evs, tvs):
        assert tuple(a.shape) == tuple(b.shape)
        assert a.stride() == b.stride(), f"{name}: stride {a.stride()} != {b.stride()}"
        assert a.storage_offset() == b.storage_offset()
        assert a.data_ptr() - e.data_ptr() == b.data_ptr() - t.data_ptr()
        assert a.is_contiguous() == b.is_contiguous()
        assert (a._base is e) == (b._base is t)  # detach() shares memory but is no view
    # writing through the view changes the base, and bumps the shared version counter
    ew, tw = _first(ev), _first(tv)
    ew.mul_(-1)
    tw.mul_(-1)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert e._version == t._version == ew._version == 1


@pytest.mark.parametrize(
    "name,fn",
    [
        ("flip", lambda m, x: x.flip(0)),
        ("roll", lambda m, x: x.roll(1, 0)),
        ("repeat", lambda m, x: x.repeat(2, 1)),
        ("tril", lambda m, x: x.tril()),
        ("reshape_copy", lambda m, x: x.t().reshape(12)),
        ("flatten_copy", lambda m, x: x.t().flatten()),
        ("contiguous_copy", lambda m, x: x.t().contiguous()),
        ("cat", lambda m, x: m.cat([x, x])),
        ("stack", lambda m, x: m.stack([x])),
    ],
)
def test_copies_do_not_share(name, fn):
    e, t = _pair(3, 4)
    ec, tc = fn(ember, e), fn(torch, t)
    assert tc._base is None and ec._base is None
    assert ec.stride() == tc.stride()
    ec.add_(1)
    np.testing.assert_array_equal(e.numpy(), np.arange(12.0).reshape(3, 4))
    assert e._version == 0


def test_identity_results_like_torch():
    e, t = _pair(2, 3)
    assert (e.flatten(1, 1) is e) == (t.flatten(1, 1) is t)
    assert (e.contiguous() is e) == (t.contiguous() is t)
    c = t.to(memory_format=torch.channels_last) if t.dim() == 4 else None
    assert c is None


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.expand(2, 3, 4),
        lambda m, x: x.expand(3, -1),
        lambda m, x: x.unsqueeze(0).expand(2, 3, 4),
        lambda m, x: x.expand(1, 3, 1),
        lambda m, x: x.t().expand(2, 1, 3),
        lambda m, x: m.broadcast_to(x, (5, 3, 1)),
    ],
)
def test_expand_strides(fn):
    e, t = _pair(3, 1)
    ev, tv = fn(ember, e), fn(torch, t)
    assert tuple(ev.shape) == tuple(tv.shape)
    assert ev.stride() == tv.stride()
    assert ev.data_ptr() == e.data_ptr()
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())


def test_version_counter_shared_across_views():
    x = ember.zeros(3, 4)
    v = x.view(12)
    w = x.t().narrow(0, 1, 2)
    parts = x.unbind(0)
    assert x._version == v._version == 0
    w.add_(1)
    assert x._version == v._version == w._version == parts[1]._version == 1
    x.mul_(2)
    assert v._version == 2 and parts[0]._version == 2
    np.testing.assert_array_equal(v.numpy().reshape(3, 4)[:, 1:3], 2.0)


def test_modified_view_detected_in_backward():
    x = ember.ones(3, 4, requires_grad=True)
    y = x * 1
    z = y.view(12)
    out = (z * z).sum()
    y.add_(1)  # z is saved by the product; modifying its base invalidates it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_gradient_through_views_and_multi_output():
    a = np.random.default_rng(0).standard_normal((4, 6))
    e = ember.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    for m, x in ((ember, e), (torch, t)):
        p, _q, r = x.split([1, 2, 3], 1)
        u = x.unbind(0)
        (p.sum() * 2 + (r * r).sum() + u[2].sum() + x.chunk(2)[1].mean()).backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_double_backward_multi_output():
    x = ember.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    a, b = x.unbind(0)
    y = (a * a * b).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    xt = torch.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    at, bt = xt.unbind(0)
    (gt,) = torch.autograd.grad((at * at * bt).sum(), xt, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy())
    np.testing.assert_allclose(gg.numpy(), ggt.numpy())


# ---------------------------------------------------------------------- layouts / memory formats
def test_layout_objects():
    assert repr(ember.strided) == "ember.strided"
    assert repr(ember.channels_last) == "ember.channels_last"
    assert repr(ember.channels_last_3d) == "ember.channels_last_3d"
    assert repr(ember.contiguous_format) == "ember.contiguous_format"
    assert repr(ember.preserve_format) == "ember.preserve_format"
    assert ember.zeros(2).layout is ember.strided
    assert isinstance(ember.strided, ember.layout)
    assert isinstance(ember.channels_last, ember.memory_format)
    for obj in (ember.strided, ember.channels_last, ember.preserve_format):
        assert pickle.loads(pickle.dumps(obj)) is obj


@pytest.mark.parametrize(
    "shape", [(2, 3, 4, 5), (2, 1, 4, 5), (2, 1, 1, 1), (2, 3, 1, 1), (1, 3, 4, 1), (0, 3, 2, 2)]
)
def test_channels_last(shape):
    e, t = _pair(*shape)
    ec = e.to(memory_format=ember.channels_last)
    tc = t.to(memory_format=torch.channels_last)
    assert ec.stride() == tc.stride()
    for fmt in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        assert ec.is_contiguous(memory_format=getattr(ember, fmt)) == tc.is_contiguous(
            memory_format=getattr(torch, fmt)
        ), fmt
        assert e.is_contiguous(memory_format=getattr(ember, fmt)) == t.is_contiguous(
            memory_format=getattr(torch, fmt)
        ), fmt
    np.testing.assert_array_equal(ec.numpy(), tc.numpy())
    assert (ec.to(memory_format=ember.channels_last) is ec) == (
        tc.to(memory_format=torch.channels_last) is tc
    )
    back = ec.contiguous()
    assert back.stride() == tc.contiguous().stride()
    cl = e.contiguous(memory_format=ember.channels_last)
    assert cl.stride() == t.contiguous(memory_format=torch.channels_last).stride()
    # a permuted NHWC tensor is channels_last-contiguous
    assert e.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).is_contiguous(
        memory_format=ember.channels_last
    ) == t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).is_contiguous(
        memory_format=torch.channels_last
    )


def test_channels_last_3d_and_grad():
    e, t = _pair(2, 3, 4, 5, 6)
    ec = e.contiguous(memory_format=ember.channels_last_3d)
    tc = t.contiguous(memory_format=torch.channels_last_3d)
    assert ec.stride() == tc.stride()
    assert ec.is_contiguous(memory_format=ember.channels_last_3d)
    x = ember.ones(2, 3, 4, 5, requires_grad=True)
    y = x.to(memory_format=ember.channels_last) * 2
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2.0)


@pytest.mark.parametrize(
    "fn,exc,msg",
    [
        (
            lambda m: m.zeros(2, 3).contiguous(memory_format=m.channels_last),
            RuntimeError,
            "required rank 4 tensor to use channels_last format",
        ),
        (
            lambda m: m.zeros(2, 3).to(memory_format=m.channels_last),
            RuntimeError,
            "required rank 4 tensor to use channels_last format",
        ),
        (
            lambda m: m.zeros(2, 3, 4, 5).contiguous(memory_format=m.channels_last_3d),
            RuntimeError,
            "required rank 5 tensor to use channels_last_3d format",
        ),
        (
            # a row-major tensor passes as itself (torch's is_contiguous check comes first)
            lambda m: m.zeros(2, 3).t().contiguous(memory_format=m.preserve_format),
            RuntimeError,
            "preserve memory format is unsupported by the contiguous operator",
        ),
    ],
)
def test_layout_errors(fn, exc, msg):
    for m in (ember, torch):
        with pytest.raises(exc, match=msg):
            fn(m)


# ---------------------------------------------------------------------- names
def _named(*shape, names):
    return ember.zeros(*shape, names=names)


def _names(t):
    return tuple(t._names) if t._names is not None else (None,) * t.dim()


def test_names_permuting_ops():
    x = _named(2, 3, 5, 7, names=("N", "C", "H", "W"))
    assert _names(x.transpose("N", "C")) == ("C", "N", "H", "W")
    assert _names(x.transpose(1, 3)) == ("N", "W", "H", "C")
    assert _names(x.permute(3, 0, 1, 2)) == ("W", "N", "C", "H")
    assert _names(x.permute("W", "N", "C", "H")) == ("W", "N", "C", "H")
    assert _names(x.movedim("C", -1)) == ("N", "H", "W", "C")
    assert _names(x.mT) == ("N", "C", "W", "H")
    assert _names(x.T) == ("W", "H", "C", "N")
    assert _names(_named(2, 3, names=("N", "C")).t()) == ("C", "N")


def test_names_removing_and_inserting_ops():
    x = _named(2, 3, 4, 5, names=("N", "C", "H", "W"))
    assert _names(x.select(1, 1)) == ("N", "H", "W")
    assert _names(x.select("C", 1)) == ("N", "H", "W")
    with pytest.raises(RuntimeError, match="Please look up dimensions by name"):
        x.select(None, 1)
    assert _names(x.unsqueeze(1)) == ("N", None, "C", "H", "W")
    y = _named(1, 3, 1, names=("N", "C", "H"))
    assert _names(y.squeeze("N")) == ("C", "H")
    assert _names(y.squeeze()) == ("C",)
    assert [_names(u) for u in x.unbind("C")] == [("N", "H", "W")] * 3
    assert _names(x.diagonal(0, 2, 3)) == ("N", "C", None)
    assert _names(x.expand(6, 2, 3, 4, 5)) == (None, "N", "C", "H", "W")


def test_names_keeping_ops():
    x = _named(2, 2, names=("N", "D"))
    assert _names(x.narrow(0, 0, 1)) == ("N", "D")
    for parts in (x.split(1, 0), x.split([1, 1], 1), x.chunk(2, 0)):
        assert all(_names(p) == ("N", "D") for p in parts)
    for y in (x.flip(0), x.roll(1, "D"), x.tril(), x.contiguous()):
        assert _names(y) == ("N", "D")


def test_names_cat_stack():
    a = _named(2, 3, names=("N", "C"))
    assert _names(ember.cat([a, a])) == ("N", "C")
    assert _names(ember.cat([a, ember.zeros(2, 3)], "C")) == ("N", "C")
    out = ember.zeros(4, 3)
    ember.cat([a, a], out=out)
    assert _names(out) == ("N", "C")
    with pytest.raises(RuntimeError, match="zero-dim"):
        ember.cat([ember.zeros((), names=()), ember.zeros((), names=())])
    with pytest.raises(RuntimeError, match="do not match"):
        ember.cat([a, _named(3, 2, names=("C", "N"))])
    with pytest.raises(RuntimeError, match="must have same number of dimensions"):
        ember.cat([a, _named(3, names=("C",))])
    assert _names(ember.stack([a, a])) == (None, "N", "C")
    assert _names(ember.stack([a, a], 2)) == ("N", "C", None)


def test_names_flatten():
    x = _named(2, 3, 5, 7, 11, names=("N", "C", "D", "H", "W"))
    for y in (
        x.flatten("D", "W", "features"),
        x.flatten(2, 4, "features"),
        x.flatten(["D", "H", "W"], "features"),
    ):
        assert _names(y) == ("N", "C", "features")
        np.testing.assert_array_equal(y.rename(None).numpy(), x.rename(None).view(2, 3, -1).numpy())
    z = _named(2, 3, 5, 7, names=("N", "T", "H", "D")).transpose("T", "H")
    assert _names(z.flatten("N", "H", "N_H")) == ("N_H", "T", "D")
    w = _named(4, 3, 8, 8, names=("N", "C", "H", "W")).flatten(["C", "H", "W"], "features")
    assert _names(w) == ("N", "features") and tuple(w.shape) == (4, 192)
    assert _names(x.flatten(1)) == ("N", None)
    with pytest.raises(RuntimeError, match="consecutive"):
        x.flatten(["C", "H"], "f")


def test_names_unflatten():
    a = _named(4, names=("A",))
    for sizes in ((("A", 2), ("B", 2)), [("A", 2), ("B", 2)], [["A", 2], ["B", 2]]):
        y = a.unflatten("A", sizes)
        assert _names(y) == ("A", "B") and tuple(y.shape) == (2, 2)
    b = _named(2, 360, names=("A", "B"))
    y = b.unflatten("B", (["B1", 3], ["B2", 4], ["B3", -1], ["B4", 6]))
    assert tuple(y.shape) == (2, 3, 4, 5, 6) and _names(y) == ("A", "B1", "B2", "B3", "B4")
    c = _named(2, 0, names=("A", "B"))
    y = c.unflatten("B", (["B1", 3], ["B2", -1], ["B3", 4]))
    assert tuple(y.shape) == (2, 3, 0, 4) and _names(y) == ("A", "B1", "B2", "B3")
    d = _named(7, 30, 11, names=("N", "D", "K"))
    y = d.unflatten("D", OrderedDict(C=2, H=3, W=5))
    assert _names(y) == ("N", "C", "H", "W", "K") and tuple(y.shape) == (7, 2, 3, 5, 11)
    y = d.unflatten("N", (("N", 7), ("H", 1)))
    assert _names(y) == ("N", "H", "D", "K") and tuple(y.shape) == (7, 1, 30, 11)
    y = d.unflatten("K", (("K", 11), ("H", 1)))
    assert _names(y) == ("N", "D", "K", "H") and tuple(y.shape) == (7, 30, 11, 1)
    with pytest.raises(
        TypeError, match="unflatten\\(\\): argument 'dim' \\(position 1\\) must be int, not str"
    ):
        _named(1, names=("A",)).unflatten("A", (1, 1))
    with pytest.raises(
        RuntimeError,
        match=r"Provided sizes \[3, -1\] don't multiply up to the "
        r"size of dim 1 \('B': 4\) in Tensor\['A', 'B'\]",
    ):
        _named(2, 4, names=("A", "B")).unflatten("B", (("B1", 3), ("B2", -1)))
    with pytest.raises(
        RuntimeError, match="the unspecified dimension size -1 can be any value and is ambiguous"
    ):
        c.unflatten("B", (("B1", 0), ("B2", -1)))
    f = _named(4, 3 * 8 * 8, names=("N", "features"))
    assert _names(f.unflatten("features", [("C", 3), ("H", 8), ("W", 8)])) == ("N", "C", "H", "W")


def test_names_gradients():
    x = ember.ones(2, 3, 4, names=("N", "C", "L"), requires_grad=True)
    y = x.flatten(["C", "L"], "F").unflatten("F", (("C", 3), ("L", 4))).transpose("N", "L")
    (y.select("C", 0).sum() + ember.cat([x, x], "L").sum()).backward()
    assert _names(x.grad) == ("N", "C", "L")
    expect = np.full((2, 3, 4), 2.0)
    expect[:, 0, :] += 1
    np.testing.assert_array_equal(x.grad.rename(None).numpy(), expect)


def test_unnamed_results_stay_unnamed():
    x = ember.zeros(2, 3, 4)
    for y in (
        x.flatten(),
        x.unflatten(1, (3, 1)),
        x.permute(2, 0, 1),
        ember.cat([x, x]),
        ember.stack([x, x]),
        x.select(0, 0),
        x.unbind(1)[0],
    ):
        assert y._names is None


@pytest.mark.parametrize("fmt", [None, "contiguous_format", "channels_last", "preserve_format"])
def test_clone_memory_format_strides_match_torch(fmt):
    if torch is None:
        pytest.skip("torch is not installed (the parity oracle)")
    strides = []
    for m in (ember, torch):
        x = m.zeros(2, 3, 4, 5).contiguous(memory_format=m.channels_last)
        y = x.clone() if fmt is None else x.clone(memory_format=getattr(m, fmt))
        strides.append(tuple(y.stride()))
    assert strides[0] == strides[1]


@pytest.mark.parametrize("op", ["add_", "mul_", "exp_"])
def test_inplace_on_expanded_view_errors_like_torch(op):
    msgs = []
    for m in (ember, torch):
        x = m.zeros(3).expand(2, 3)
        args = {"add_": (1,), "mul_": (m.ones(2, 3),), "exp_": ()}[op]
        with pytest.raises(RuntimeError, match="more than one element of the written-to") as e:
            getattr(x, op)(*args)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_detach_is_not_a_view_for_autograd():
    # torch: detach() shares storage and version counter but has no _base, so detach_() works
    # on it; a view of a tensor that requires grad refuses detach_()
    for m in (ember, torch):
        a = m.ones(3, requires_grad=True)
        d = a.detach()
        assert d._base is None and d.detach_() is d
        assert d[1:].storage_offset() == 1 and d._version == a._version
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            a[0:2].detach_()
