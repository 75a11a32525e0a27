"""Parity regressions found by the twentieth wave, a function-by-function sweep of torch.func and
torch.autograd.functional (torch is the oracle): vmap's ``in_dims``/``out_dims`` read as pytree
prefixes of the inputs and outputs (a list is not a tuple, dicts and nested containers of
out_dims, torch's TreeSpec wording, out_dims of a wrong type refused before the call, a lone
output with ``out_dims=(d,)``, a batched output with ``out_dims=None`` refused, torch.Size a
container of ints); torch's refusals of what a BatchedTensor cannot do, now raised by ember's
loop-based vmap, which marks the per-element tensors (``.item()``/``float``/``int``/``bool``,
``tolist``/``numpy``/``data_ptr``/``.data``, the one message under an inner transform, ops of a
value-dependent shape: nonzero, unique, masked_select, boolean-mask indexing, and writing a
per-element value in place into a tensor all the elements share: ``add_``'s broadcast error,
the "inplace arithmetic" ones, ``fill_``'s, ``index_add_``'s and the fallback's), while buffers
made like a per-element value (``new_zeros``, ``zeros_like``, ...) and ember's own functions
stay free to do so; ``requires_grad_`` inside a transform (also through autograd.functional);
torch.func's refusals of integer primals in ``jvp``/``jacfwd``, integer or complex outputs,
empty outputs or primals, non-tensor aux outputs, jacfwd's ``randomness`` (checked, random ops
refused in 'error' mode) and its blocks in the outputs' dtypes, jvp's structure error in
TreeSpec words with tangents checked by structure only, ``linearize``'s tangent checks; and
torch.autograd.functional's ``v`` errors for a lone tensor, hvp's own name in its errors,
vhp/hvp's strict-mode errors, strict mode refused with ``vectorize`` or forward mode, and
integer inputs refused."""

from __future__ import annotations

import ember
import ember.autograd.functional as EF
import ember.func as ef
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.autograd.functional as TF
import torch.func as tf

_RS = np.random.RandomState(20)


def _pair(*shape):
    a = _RS.randn(*shape).astype(np.float32)
    return ember.tensor(a), torch.tensor(a)


def _same(e, t):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor)
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
    elif isinstance(t, (tuple, list)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t, strict=True):
            _same(a, b)
    elif isinstance(t, dict):
        assert isinstance(e, dict) and list(e) == list(t)
        for k in t:
            _same(e[k], t[k])
    else:
        assert e == t


def _raises_like(fe, ft):
    """Both calls fail with the same error type and message (ember's spelling of dtypes and
    sizes aside)."""
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert ee.type.__name__ == te.type.__name__, (ee.value, te.value)
    assert str(ee.value).replace("ember.", "torch.") == str(te.value)


# ------------------------------------------------------------------ vmap: in_dims as pytrees
def test_vmap_in_dims_nested_list_and_dict():
    (xe, xt), (ye, yt) = _pair(2, 3), _pair(3, 2)
    _same(
        ember.vmap(lambda ls: ls[0] + ls[1], in_dims=([0, 1],))([xe, ye]),
        torch.vmap(lambda ls: ls[0] + ls[1], in_dims=([0, 1],))([xt, yt]),
    )
    _same(
        ember.vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 0, "b": 1},))({"a": xe, "b": ye}),
        torch.vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 0, "b": 1},))({"a": xt, "b": yt}),
    )
    _same(
        ember.vmap(lambda a, b: a * b, in_dims=(-1, 0))(ye, xe),
        torch.vmap(lambda a, b: a * b, in_dims=(-1, 0))(yt, xt),
    )


@pytest.mark.parametrize(
    ("in_dims", "wrap"),
    [
        (((0, 1),), list),  # a tuple of dims for a list input
        (([0, 1],), tuple),  # a list of dims for a tuple input
        ((0,), None),  # one entry for two inputs
        ((0, 0, 0), None),
    ],
)
def test_vmap_in_dims_structure_error(in_dims, wrap):
    (xe, xt), (ye, yt) = _pair(2, 3), _pair(2, 3)

    def call(vmap, x, y):
        if wrap is None:
            return vmap(lambda a, b: a + b, in_dims=in_dims)(x, y)
        return vmap(lambda s: s[0] + s[1], in_dims=in_dims)(wrap([x, y]))

    _raises_like(lambda: call(ember.vmap, xe, ye), lambda: call(torch.vmap, xt, yt))


def test_vmap_in_dim_of_a_wrong_type_inside_a_tuple():
    (xe, xt) = _pair(2, 3)
    _raises_like(
        lambda: ember.vmap(lambda a: a, in_dims=("a",))(xe),
        lambda: torch.vmap(lambda a: a, in_dims=("a",))(xt),
    )


def test_vmap_no_mapped_input_message():
    (xe, xt) = _pair(2, 3)
    _raises_like(
        lambda: ember.vmap(lambda a: a, in_dims=(None,))(xe),
        lambda: torch.vmap(lambda a: a, in_dims=(None,))(xt),
    )


# ------------------------------------------------------------------ vmap: out_dims as pytrees
@pytest.mark.parametrize(
    ("fn", "out_dims"),
    [
        (lambda a: {"u": a, "v": a.sum()}, {"u": 1, "v": 0}),
        (lambda a: {"u": a, "v": a.sum()}, 1 - 1),
        (lambda a: [a, (a, a.sum())], [0, (1, 0)]),
        (lambda a: [a, (a, a.sum())], [1, 0]),  # an int covers the whole subtree
        (lambda a: (a, a.sum()), (1, 0)),
        (lambda a: a * 2, (1,)),  # torch's special case: (d,) for a lone tensor
        (lambda a: (a, 3), (0, None)),
    ],
)
def test_vmap_out_dims_pytrees(fn, out_dims):
    xe, xt = _pair(2, 3)
    _same(ember.vmap(fn, out_dims=out_dims)(xe), torch.vmap(fn, out_dims=out_dims)(xt))
    _same(ef.vmap(fn, out_dims=out_dims)(xe), tf.vmap(fn, out_dims=out_dims)(xt))


@pytest.mark.parametrize(
    ("fn", "out_dims"),
    [
        (lambda a: (a, a.sum()), [1, 0]),  # a list for a tuple of outputs
        (lambda a: (a, a.sum()), (0,)),
        (lambda a: (a, a), (0, 1, 2)),
        (lambda a: a, (0, 1)),
        (lambda a: {"u": a}, {"w": 0}),
        (lambda a: a, "a"),  # refused before anything runs
        (lambda a: a, 0.5),
        (lambda a: (a, a), (0, "x")),
        (lambda a: (a, 3), 0),  # not a tensor: out_dim must be None
        (lambda a: a, None),  # a batched output cannot be returned unstacked
        (lambda a: (a.sum(), a * 2), (0, None)),
    ],
)
def test_vmap_out_dims_errors(fn, out_dims):
    xe, xt = _pair(2, 3)
    _raises_like(
        lambda: ember.vmap(fn, out_dims=out_dims)(xe),
        lambda: torch.vmap(fn, out_dims=out_dims)(xt),
    )


def test_vmap_out_dims_none_for_an_unbatched_output():
    (xe, xt), (we, wt) = _pair(2, 3), _pair(4)
    _same(
        ember.vmap(lambda a: (a.sum(), we * 2), out_dims=(0, None))(xe),
        torch.vmap(lambda a: (a.sum(), wt * 2), out_dims=(0, None))(xt),
    )
    _same(
        ember.vmap(lambda a: we.sum(), out_dims=None)(xe),
        torch.vmap(lambda a: wt.sum(), out_dims=None)(xt),
    )


def test_func_vmap_is_vmap_with_pytrees_and_gradients():
    # per-sample gradients through the dict output of grad, and nested vmaps
    (xe, xt), (ye, yt) = _pair(4, 3), _pair(3)

    def lossf(p, x):
        return ((x * p["w"]).sum().tanh() + p["b"] ** 2).sum()

    pe = {"w": ye, "b": ember.tensor([0.5])}
    pt = {"w": yt, "b": torch.tensor([0.5])}
    _same(
        ef.vmap(ef.grad(lossf), in_dims=(None, 0))(pe, xe),
        tf.vmap(tf.grad(lossf), in_dims=(None, 0))(pt, xt),
    )
    (ae, at) = _pair(2, 3, 4)
    _same(
        ember.vmap(ember.vmap(lambda a: {"s": a.sum(), "m": [a.max()]}))(ae),
        torch.vmap(torch.vmap(lambda a: {"s": a.sum(), "m": [a.max()]}))(at),
    )


# ------------------------------------------------------------------ vmap: BatchedTensor refusals
@pytest.mark.parametrize(
    "fn",
    [
        lambda a: a.sum().item(),
        lambda a: float(a.sum()),
        lambda a: int(a[0]),
        lambda a: complex(a[0]),
        lambda a: a.detach()[0].item(),
        lambda a: a.reshape(3, 1)[0, 0].item(),
        lambda a: bool(a.sum() > 0),
        lambda a: a if a.sum() > 0 else -a,  # data-dependent control flow
        lambda a: a.any().item(),
        lambda a: a.tolist(),
        lambda a: a.numpy(),
        lambda a: a.data_ptr(),
        lambda a: a.clamp(min=a.min().item()),
        lambda a: a.data * 2,
        lambda a: _set_data(a, a.new_ones(3)),
        lambda a: _set_data(a.new_zeros(3), a),
    ],
)
def test_vmap_refuses_what_a_batched_tensor_cannot_do(fn):
    xe, xt = _pair(2, 3)
    _raises_like(lambda: ember.vmap(fn)(xe), lambda: torch.vmap(fn)(xt))


def test_vmap_item_of_an_unbatched_tensor_is_fine():
    xe, xt = _pair(2, 3)
    we, wt = _pair(3)
    _same(
        ember.vmap(lambda a: a * we.sum().item() + len(a))(xe),
        torch.vmap(lambda a: a * wt.sum().item() + len(a))(xt),
    )
    # an unbatched tensor indexed by None (an input that is None) is not per-element
    _same(
        ember.vmap(lambda a: a * we[None].sum().item())(xe),
        torch.vmap(lambda a: a * wt[None].sum().item())(xt),
    )
    # the marks end with the vmap: the same values convert outside it
    out = ember.vmap(lambda a: a * 2)(xe)
    assert out.sum().item() == pytest.approx(float(xt.sum() * 2), rel=1e-5)


def _set_data(t, value):
    t.data = value
    return t


def _captured_add(a, y):
    y.add_(a)
    return y


def _fresh(op):
    def f(a, y):
        z = y.clone()
        op(z, a)
        return z

    return f


def _setitem(z, a):
    z[0] = a[0]


def _setall(z, a):
    z[:] = a


@pytest.mark.parametrize(
    "fn",
    [
        _captured_add,  # add_: torch's broadcast error
        _fresh(lambda z, a: z.add_(a)),
        _fresh(lambda z, a: z.__iadd__(a)),
        _fresh(lambda z, a: z.sub_(a)),  # the "inplace arithmetic" ones
        _fresh(lambda z, a: z.mul_(a)),
        _fresh(lambda z, a: z.div_(a)),
        _fresh(lambda z, a: z.copy_(a)),
        _fresh(lambda z, a: z.clamp_min_(a)),
        _fresh(lambda z, a: z.masked_fill_(a > 0, 1.0)),
        _fresh(_setitem),
        _fresh(_setall),
        _fresh(lambda z, a: z.fill_(a[0])),  # fill_ and index_add_: their own names
        _fresh(lambda z, a: z.index_add_(0, torch_or_ember_index(z), a[:1])),
        _fresh(lambda z, a: z.index_copy_(0, torch_or_ember_index(z), a[:1])),  # the fallback
    ],
)
def test_vmap_refuses_writing_a_batched_value_into_a_shared_tensor(fn):
    (xe, xt), (ye, yt) = _pair(2, 3), _pair(3)
    _raises_like(
        lambda: ember.vmap(fn, in_dims=(0, None))(xe, ye),
        lambda: torch.vmap(fn, in_dims=(0, None))(xt, yt),
    )
    np.testing.assert_array_equal(ye.numpy(), yt.numpy())  # the captured tensor is untouched


def torch_or_ember_index(z):
    return (torch if isinstance(z, torch.Tensor) else ember).tensor([0])


def test_vmap_in_place_on_the_batched_value_itself_is_fine():
    def f(a, b):
        a = a.clone()
        a.add_(b)
        a[0] = b[1]
        a.mul_(2)
        return a

    (xe, xt), (ye, yt) = _pair(2, 3), _pair(3)
    _same(ember.vmap(f, in_dims=(0, None))(xe, ye), torch.vmap(f, in_dims=(0, None))(xt, yt))
    # ember's own functions may fill fresh buffers with per-element values (torch's kernels do
    # the same without an in-place op): not refused
    _same(
        ember.vmap(lambda a: ember.nn.functional.pad(a, (1, 1)).cumsum(0))(xe),
        torch.vmap(lambda a: torch.nn.functional.pad(a, (1, 1)).cumsum(0))(xt),
    )


# ------------------------------------------------------------------ torch.func transforms
@pytest.mark.parametrize(
    "call",
    [
        lambda f, m, x, i: f.jvp(m.sin, (i,), (x,)),  # an integer primal
        lambda f, m, x, i: f.jvp(m.sin, (x,), (i.float().int(),)),  # an integer tangent
        lambda f, m, x, i: f.jacfwd(m.sin)(i),
        lambda f, m, x, i: f.vjp(lambda a: a.int(), x),  # integer outputs
        lambda f, m, x, i: f.jacrev(lambda a: (a, a.int()))(x),
        lambda f, m, x, i: f.jacfwd(m.sin, randomness="bogus")(x),
        lambda f, m, x, i: f.jacfwd(lambda a: a + m.rand(3))(x),
        lambda f, m, x, i: f.hessian(lambda a: (a * m.rand(3)).sum())(x),
        lambda f, m, x, i: f.jvp(m.sin, (x,), [x]),  # tangents are checked by structure
        lambda f, m, x, i: f.jvp(m.sin, (x,), ({"a": x},)),
        lambda f, m, x, i: f.linearize(m.sin, x)[1](m.ones(4)),
        lambda f, m, x, i: f.linearize(m.sin, x)[1](m.ones(3, dtype=m.float64)),
        lambda f, m, x, i: f.linearize(m.sin, x)[1](x, x),
        lambda f, m, x, i: f.linearize(m.sin, x)[1]([x]),
    ],
)
def test_func_transform_errors(call):
    xe, xt = _pair(3)
    _raises_like(
        lambda: call(ef, ember, xe, ember.tensor([1, 2, 3])),
        lambda: call(tf, torch, xt, torch.tensor([1, 2, 3])),
    )


def test_func_jacfwd_randomness_same_and_different_allowed():
    xe = _pair(3)[0]
    for r in ("same", "different"):
        j = ef.jacfwd(lambda a: a * 2 + ember.rand(3), randomness=r)(xe)
        np.testing.assert_allclose(j.numpy(), 2 * np.eye(3, dtype=np.float32))


def test_func_linearize_values():
    (xe, xt), (ve, vt) = _pair(3), _pair(3)
    oe, fe = ef.linearize(lambda a: a.sin() * a, xe)
    ot, ft = tf.linearize(lambda a: a.sin() * a, xt)
    _same(oe, ot)
    _same(fe(ve), ft(vt))


# ------------------------------------------------------------------ autograd.functional
@pytest.mark.parametrize(
    "call",
    [
        lambda F, m, x, v, w: F.vjp(lambda a: a * 2, x, w),  # a lone output: no "Entry 0 in"
        lambda F, m, x, v, w: F.vjp(lambda a: (a, a), x, (v, w)),
        lambda F, m, x, v, w: F.vjp(lambda a: (a, a), x, (v,)),
        lambda F, m, x, v, w: F.jvp(lambda a: a * 2, x, w),
        lambda F, m, x, v, w: F.jvp(lambda a: a * 2, x, (v, v)),
        lambda F, m, x, v, w: F.jvp(lambda a, b: a * b, (x, x), (v,)),
        lambda F, m, x, v, w: F.hvp(lambda a: (a**3).sum(), x, w),
        lambda F, m, x, v, w: F.vhp(lambda a: (a**3).sum(), x, w),
        lambda F, m, x, v, w: F.hvp(lambda a, b: (a * b).sum(), (x, x), (v, w)),
        lambda F, m, x, v, w: F.hvp(lambda a: a**3, x, v),  # hvp's own name
        lambda F, m, x, v, w: F.hvp(lambda a: (a, a), x, v),
        lambda F, m, x, v, w: F.hvp(lambda a: a.sum(), x, v, strict=True),  # linear
        lambda F, m, x, v, w: F.vhp(lambda a: a.sum(), x, v, strict=True),
        lambda F, m, x, v, w: F.vhp(lambda a: m.ones(()), x, v, strict=True),
        lambda F, m, x, v, w: F.vhp(lambda a, b: (a**3).sum(), (x, x), (v, v), strict=True),
        lambda F, m, x, v, w: F.jacobian(lambda a: a * 2, m.tensor([1, 2])),  # integers
        lambda F, m, x, v, w: F.hessian(lambda a: (a * a).sum(), m.tensor([1, 2])),
        lambda F, m, x, v, w: F.vjp(lambda a: a * 2, m.tensor([1, 2]), m.tensor([1, 2])),
        # strict mode with vmap-style or forward-mode jacobians
        lambda F, m, x, v, w: F.jacobian(lambda a: a.sin(), x, strict=True, vectorize=True),
        lambda F, m, x, v, w: F.jacobian(lambda a: m.ones(3), x, strict=True, vectorize=True),
        lambda F, m, x, v, w: F.jacobian(m.sin, x, strict=True, strategy="forward-mode"),
        lambda F, m, x, v, w: F.jacobian(
            m.sin, x, strict=True, vectorize=True, strategy="forward-mode"
        ),
        lambda F, m, x, v, w: F.hessian(lambda a: (a**3).sum(), x, strict=True, vectorize=True),
    ],
)
def test_autograd_functional_errors(call):
    (xe, xt), (ve, vt), (we, wt) = _pair(3), _pair(3), _pair(4)
    _raises_like(lambda: call(EF, ember, xe, ve, we), lambda: call(TF, torch, xt, vt, wt))


def test_autograd_functional_vhp_hvp_strict_values():
    (xe, xt), (ve, vt) = _pair(3), _pair(3)
    for name in ("vhp", "hvp"):
        re = getattr(EF, name)(lambda a: (a**3).sum(), xe, ve, strict=True)
        rt = getattr(TF, name)(lambda a: (a**3).sum(), xt, vt, strict=True)
        _same(re, rt)


# ------------------------------------------------------------------ requires_grad_ in transforms
@pytest.mark.parametrize(
    "call",
    [
        lambda f, m, x, w: f.vmap(lambda a: a.requires_grad_())(x),
        lambda f, m, x, w: f.vmap(lambda a: m.zeros(3).requires_grad_() + a)(x),
        lambda f, m, x, w: f.vmap(lambda a: (a * 2).requires_grad_(False))(x),
        lambda f, m, x, w: f.vmap(lambda a: m.tensor([1, 2]).requires_grad_())(x),
        lambda f, m, x, w: f.grad(lambda a: a.requires_grad_().sum())(w),
        lambda f, m, x, w: f.jacrev(lambda a: m.ones(3).requires_grad_() * a)(w),
        # autograd.functional makes its inputs differentiable so: refused as well
        lambda f, m, x, w: f.vmap(lambda a: m.autograd.functional.jacobian(m.sin, a))(x),
        lambda f, m, x, w: f.grad(lambda a: m.autograd.functional.jacobian(m.sin, a).sum())(w),
    ],
)
def test_requires_grad_inside_a_transform_is_refused(call):
    (xe, xt), (we, wt) = _pair(2, 3), _pair(3)
    _raises_like(lambda: call(ef, ember, xe, we), lambda: call(tf, torch, xt, wt))


def test_transforms_still_nest_and_build_modules():
    # ember's transforms make their inputs differentiable with requires_grad_, and modules made
    # inside a transform create parameters: neither is the user's call
    xe, xt = _pair(3)
    _same(ef.hessian(lambda a: (a**3).sum())(xe), tf.hessian(lambda a: (a**3).sum())(xt))
    _same(
        ef.vmap(ef.jacrev(ef.grad(lambda a: (a.sin() ** 2).sum())))(xe.reshape(3, 1)),
        tf.vmap(tf.jacrev(tf.grad(lambda a: (a.sin() ** 2).sum())))(xt.reshape(3, 1)),
    )
    out = ef.vmap(lambda a: ember.nn.Parameter(ember.zeros(3)) * a)(xe.reshape(1, 3))
    assert tuple(out.shape) == (1, 3)


# ------------------------------------------------------------------ outputs and dtypes
@pytest.mark.parametrize(
    "call",
    [
        lambda f, m, x: f.vjp(lambda a: None, x),  # no output
        lambda f, m, x: f.vjp(lambda a: (), x),
        lambda f, m, x: f.jvp(lambda a: None, (x,), (x,)),
        lambda f, m, x: f.jvp(lambda a: a, (), ()),  # no primals
        lambda f, m, x: f.jvp(lambda a: a, (2.0,), (1.0,)),
        lambda f, m, x: f.jacrev(lambda a: None)(x),
        lambda f, m, x: f.jacfwd(lambda a: ())(x),
        lambda f, m, x: f.grad(lambda a: (a * 1j).sum())(x),  # complex outputs
        lambda f, m, x: f.jacrev(lambda a: a * 1j)(x),
        lambda f, m, x: f.jacfwd(lambda a: (a, a * 1j))(x),
        # an aux output holds tensors only
        lambda f, m, x: f.grad(lambda a: (a.sum(), 3), has_aux=True)(x),
        lambda f, m, x: f.grad(lambda a: (a.sum(), {"n": 3, "t": a}), has_aux=True)(x),
        lambda f, m, x: f.grad_and_value(lambda a: (a.sum(), None), has_aux=True)(x),
        lambda f, m, x: f.vjp(lambda a: (a * 2, "hi"), x, has_aux=True),
        lambda f, m, x: f.jvp(lambda a: (a * 2, 5), (x,), (x,), has_aux=True),
        lambda f, m, x: f.jacrev(lambda a: (a * 2, [a, 1]), has_aux=True)(x),
        lambda f, m, x: f.jacfwd(lambda a: (a * 2, [a, 1]), has_aux=True)(x),
    ],
)
def test_func_output_errors(call):
    xe, xt = _pair(3)
    _raises_like(lambda: call(ef, ember, xe), lambda: call(tf, torch, xt))


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
@pytest.mark.parametrize(
    ("dtype", "fn"),
    [
        ("float32", lambda a: a.double()),
        ("float64", lambda a: a.float()),
        ("float32", lambda a: (a.double(), a * 2)),
        ("float16", lambda a: a.float() * 2),
    ],
)
def test_func_jacobian_dtypes(jac, dtype, fn):
    # jacrev's blocks take the inputs' dtypes, jacfwd's (forward tangents) the outputs'
    a = np.array([1.0, 2.0, 3.0], dtype=dtype)
    _same(getattr(ef, jac)(fn)(ember.tensor(a)), getattr(tf, jac)(fn)(torch.tensor(a)))


def test_func_jacfwd_dtypes_with_several_argnums():
    xe, xt = _pair(3)
    _same(
        ef.jacfwd(lambda a, b: a.double() * b, argnums=(0, 1))(xe, xe.double()),
        tf.jacfwd(lambda a, b: a.double() * b, argnums=(0, 1))(xt, xt.double()),
    )


# ------------------------------------------------------------------ vmap: dynamic shapes
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, a: a.nonzero(),
        lambda m, a: m.nonzero(a),
        lambda m, a: a.unique(),
        lambda m, a: m.unique(a, sorted=False),
        lambda m, a: a.unique_consecutive(),
        lambda m, a: a.masked_select(a > 0),
        lambda m, a: a[a > 0],
    ],
)
def test_vmap_refuses_ops_of_a_per_element_shape(fn):
    xe, xt = _pair(2, 3)
    _raises_like(
        lambda: ember.vmap(lambda a: fn(ember, a))(xe),
        lambda: torch.vmap(lambda a: fn(torch, a))(xt),
    )


def test_vmap_masks_that_are_not_per_element_and_ember_internals_are_fine():
    (xe, xt), (le, lt) = _pair(3, 4), _pair(3, 4)
    mask = np.array([True, False, True, True])
    _same(
        ember.vmap(lambda a: a[ember.tensor(mask)])(xe),
        torch.vmap(lambda a: a[torch.tensor(mask)])(xt),
    )
    _same(
        ember.vmap(lambda a: a.masked_select(ember.tensor(mask)))(xe),
        torch.vmap(lambda a: a.masked_select(torch.tensor(mask)))(xt),
    )
    # a loss whose ember implementation may pick by masks: per element, no refusal
    ye, yt = ember.tensor([0, 1, 3]), torch.tensor([0, 1, 3])
    _same(
        ember.vmap(lambda a, t: ember.nn.functional.cross_entropy(a[None], t[None]))(le, ye),
        torch.vmap(lambda a, t: torch.nn.functional.cross_entropy(a[None], t[None]))(lt, yt),
    )


def test_pytree_size_is_a_container_of_ints():
    from ember.utils._pytree import tree_flatten, tree_unflatten
    from torch.utils._pytree import tree_flatten as t_flatten
    from torch.utils._pytree import tree_unflatten as t_unflatten

    le, se = tree_flatten(ember.Size([2, 3]))
    lt, st = t_flatten(torch.Size([2, 3]))
    assert le == lt and repr(se) == repr(st)
    assert type(tree_unflatten(le, se)) is type(t_unflatten(lt, st)) is tuple
    xe, xt = _pair(2, 3)
    _raises_like(
        lambda: ember.vmap(lambda a: a.shape)(xe), lambda: torch.vmap(lambda a: a.shape)(xt)
    )
    _same(
        ember.vmap(lambda a: a.shape, out_dims=None)(xe),
        torch.vmap(lambda a: a.shape, out_dims=None)(xt),
    )


# ember's functions that read per-element values internally (``.item()``, masks, fresh buffers)
# must not trip the BatchedTensor refusals meant for the user's code
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, a: a.clamp(min=a.min()),
        lambda m, a: a.pow(a[0]),
        lambda m, a: m.lerp(a, a * 2, a[1]),
        lambda m, a: a.masked_fill(a > 0, a[0]),
        lambda m, a: a.quantile(0.5),
        lambda m, a: a.histc(3),
        lambda m, a: m.isin(a, a[:1]),
        lambda m, a: m.nn.functional.cross_entropy(a[None], a.softmax(0)[None]),
        lambda m, a: m.nn.functional.nll_loss(a.log_softmax(0)[None], a.argmax()[None]),
        lambda m, a: m.nn.functional.one_hot(a.argmax(), 3),
        lambda m, a: m.nn.functional.interpolate(a[None, None], scale_factor=2)[0, 0],
        lambda m, a: m.nn.functional.pad(a, (1, 1), value=0.5),
        lambda m, a: m.searchsorted(a.sort()[0], a),
        lambda m, a: a.round().mode()[0],
        lambda m, a: m.linalg.solve(m.outer(a, a) + m.eye(3), a),
        lambda m, a: m.linalg.eigvalsh(m.outer(a, a)),
    ],
)
def test_vmap_of_ember_functions_matches_torch(fn):
    xe, xt = _pair(2, 3)
    _same(ember.vmap(lambda a: fn(ember, a))(xe), torch.vmap(lambda a: fn(torch, a))(xt))


@pytest.mark.parametrize(
    "fn",
    [
        lambda f: f.vmap(f.grad(lambda x: x.sum().item() * x.sum())),
        lambda f: f.vmap(f.grad(lambda x: x.sum() if x.sum() > 0 else -x.sum())),
        lambda f: f.vmap(f.jacrev(lambda x: x * x.sum().item())),
        lambda f: f.vmap(lambda x: f.grad(lambda y: (y * x.sum().item()).sum())(x)),
        lambda f: f.grad(lambda x: f.vmap(lambda r: r * r.sum().item())(x).sum()),
    ],
)
def test_vmap_item_under_an_inner_transform(fn):
    # a transform inside the vmap: torch's one message for .item() and control flow
    xe, xt = _pair(2, 3)
    _raises_like(lambda: fn(ef)(xe), lambda: fn(tf)(xt))


@pytest.mark.parametrize(
    "make",
    [
        lambda m, a: a.new_zeros(3),
        lambda m, a: a.new_empty(3),
        lambda m, a: a.new_ones(a.shape),
        lambda m, a: a.new_full((3,), 1.0),
        lambda m, a: m.zeros_like(a),
        lambda m, a: m.empty_like(a),
        lambda m, a: m.ones_like(a),
        lambda m, a: m.full_like(a, 2.0),
        lambda m, a: m.zeros_like(m.rand_like(a)),
        lambda m, a: m.zeros_like(m.randn_like(a)),
        lambda m, a: a.clone(),
    ],
)
def test_vmap_factories_like_a_batched_tensor_are_batched(make):
    # a buffer made like a per-element value is per-element: writing into it is fine
    def f(m, a):
        z = make(m, a)
        z.copy_(a * 2)
        z[0] = a[1]
        z.add_(a)
        return z

    xe, xt = _pair(2, 3)
    _same(
        ember.vmap(lambda a: f(ember, a), randomness="different")(xe),
        torch.vmap(lambda a: f(torch, a), randomness="different")(xt),
    )
