"""Parity regressions found by the twenty-fifth wave, a sweep of autograd's semantics (views,
in-place ops and version counters, the backward API, hooks, grad modes; torch is the oracle):
``Tensor._is_view()`` (missing), an in-place write to a view made under no_grad or inference mode
while grad mode records it (torch's refusals and texts, where ember went on), an in-place op whose
derivative keeps its result changed again in place (sigmoid_() then mul_(): torch refuses in
backward, ember kept a private copy and went on), in-place ops on an ``as_strided``
view of a non-leaf (ember's node saved the input itself, so backward refused; torch keeps only
its layout), the saved-tensor error naming a changed view ``AsStrided`` (torch regenerates its
grad_fn) and refusing a changed unbind/split output with the multi-view error, ``zero_``'s node
(ZeroBackward0), ``x[i] = v`` on a leaf (torch's "a view of a leaf" text), ``out=`` into a tensor
that requires grad (torch refuses), ``retain_grad()`` then an in-place op (``.grad`` is the
gradient of the new value), the layout of an accumulated ``.grad`` (a contiguous leaf gets a
contiguous gradient whatever the derivative's strides), the "Mismatch in shape" text
(``torch.Size``), ``backward(inputs=...)`` of a tensor that does not require grad and
``autograd.grad`` of a non-tensor input (torch's errors, where ember went on or raised an
AttributeError), ``backward(create_graph=True)``'s reference-cycle warning, a post-accumulate
hook that returns a value (refused), ``AccumulateGrad.register_prehook``, grad-mode decorators
on a class (torch's FutureWarning, not a TypeError), ``nn.Parameter`` of an inference tensor
(refused outside inference mode) and ``torch.autograd.graph.allow_mutation_on_saved_tensors``
(missing), and ``fill_``/``zero_`` of an expanded tensor (torch fills its memory, ember
refused it as an overlapping write)."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

LIBS = [torch, ember]


def _r(T, *shape, rg=False, seed=0):
    a = np.random.RandomState(seed).randn(*shape).astype("float32")
    return T.tensor(a, requires_grad=rg)


def _err(fn, T):
    with pytest.raises(Exception) as e:  # the type is compared by the caller
        fn(T)
    return type(e.value), str(e.value)


def _same_error(fn):
    te, tm = _err(fn, torch)
    ee, em = _err(fn, ember)
    assert ee is te
    assert em == tm
    return tm


# ------------------------------------------------------------------------- _is_view
@pytest.mark.parametrize(
    "make",
    [
        lambda T, a: a.view(12),
        lambda T, a: a.t(),
        lambda T, a: a[1],
        lambda T, a: a.diagonal(),
        lambda T, a: a.unfold(1, 2, 1),
        lambda T, a: a.as_strided((2, 2), (1, 1)),
        lambda T, a: a.detach(),
        lambda T, a: a.data,
        lambda T, a: a.clone(),
        lambda T, a: a[[0, 1]],
        lambda T, a: a.mT,
    ],
)
def test_is_view(make):
    got = []
    for T in LIBS:
        a = _r(T, 3, 4, rg=True)
        v = make(T, a)
        got.append((v._is_view(), v._base is a))
    assert got[0] == got[1]


# ------------------------------------------------------------------------- views made in no_grad
def _nograd_view_copy(T):
    x = _r(T, 3, 4, rg=True)
    b = T.zeros(3, 4)
    with T.no_grad():
        v = b[1]
    v.copy_(x[0])


def _nograd_view_mul(T):
    x = _r(T, 4, rg=True)
    b = T.zeros(4)
    with T.no_grad():
        v = b.view(2, 2)
    v.mul_(x.view(2, 2))


def _nograd_split_copy(T):
    x = _r(T, 2, rg=True)
    b = T.zeros(4)
    with T.no_grad():
        v, _ = b.split(2)
    v.copy_(x)


def _nograd_view_of_grad_tensor_mul(T):
    b = _r(T, 3, 4, rg=True) * 1
    with T.no_grad():
        v = b[1]
    v.mul_(2)  # nothing else requires grad: torch's view of b requires grad itself


@pytest.mark.parametrize(
    "fn",
    [_nograd_view_copy, _nograd_view_mul, _nograd_split_copy, _nograd_view_of_grad_tensor_mul],
)
def test_inplace_on_view_made_in_no_grad(fn):
    assert _same_error(fn).startswith("A view was created in no_grad mode")


def test_view_made_in_no_grad_written_without_grad():
    for T in LIBS:
        b = T.zeros(4)
        with T.no_grad():
            v = b[1:]
        v.add_(1)  # nothing requires grad: no refusal
        x = _r(T, 3, rg=True)
        with T.no_grad():
            v.copy_(x)  # nothing recorded
        assert b.tolist()[0] == 0.0
        a = _r(T, 4, rg=True)
        with T.no_grad():
            d = a.detach()[1:]  # a view of a tensor that does not require grad
        d.mul_(2)
        assert d._version == 1


# ------------------------------------------------------------------------- as_strided + in-place
def _as_strided_inplace(T):
    a = _r(T, 3, 4, rg=True)
    b = a * 1
    c = b.as_strided((2, 2), (4, 1), 1)
    c.mul_(_r(T, 2, 2, seed=3))
    (b * _r(T, 3, 4, seed=2)).sum().backward()
    return a.grad, b.detach()


def test_as_strided_view_inplace_backward():
    (tg, tb), (eg, eb) = _as_strided_inplace(torch), _as_strided_inplace(ember)
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-6)
    np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=1e-6)


def test_as_strided_gradcheck():
    a = ember.randn(12, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: (x * 1).as_strided((3, 3), (2, 1), 1), (a,))
    assert ember.autograd.gradgradcheck(lambda x: (x * 1).as_strided((2, 3), (1, 2), 2), (a,))


# ------------------------------------------------------------------------- saved-tensor errors
def _base_changed_under_view(T):
    a = _r(T, 3, 4, rg=True)
    b = a * 1
    c = b[1].sin()
    b.add_(1)
    c.sum().backward()


def _view_changed(T):
    a = _r(T, 3, 4, rg=True)
    v = (a * 1)[1]
    c = v.sin()
    v.add_(1)
    c.sum().backward()


def _leaf_changed_under_view(T):
    a = _r(T, 3, 4, rg=True)
    c = a[0].sin()
    with T.no_grad():
        a.add_(1)
    c.sum().backward()


def _unbind_output_changed(T):
    b = _r(T, 2, 3, rg=True) * 1
    x, _ = b.unbind()
    c = x.sin()
    b.add_(1)
    c.sum().backward()


def _zeroed(T):
    b = _r(T, 3, 4, rg=True) * 1
    c = b.pow(2)
    b.zero_()
    c.sum().backward()


@pytest.mark.parametrize(
    "fn",
    [
        _base_changed_under_view,
        _view_changed,
        _leaf_changed_under_view,
        _unbind_output_changed,
        _zeroed,
    ],
)
def test_saved_tensor_modified_error(fn):
    _same_error(fn)


def test_zero_node_name():
    for T in LIBS:
        b = _r(T, 3, rg=True) * 1
        b.zero_()
        assert b.grad_fn.name() == "ZeroBackward0"


# ------------------------------------------------------------------------- setitem / out=
@pytest.mark.parametrize("key", [0, slice(0, 2), Ellipsis, [0]])
def test_setitem_on_leaf_error(key):
    def fn(T):
        a = _r(T, 4, rg=True)
        a[key] = 1.0

    _same_error(fn)


def test_out_requiring_grad_refused():
    def fn(T):
        o = _r(T, 3, rg=True) * 1
        T.add(T.ones(3), 1, out=o)

    def leaf(T):
        T.mul(T.ones(3), 2, out=_r(T, 3, rg=True))

    _same_error(fn)
    _same_error(leaf)
    for T in LIBS:
        o = _r(T, 3, rg=True)
        with T.no_grad():
            T.add(T.ones(3), 1, out=o)  # no graph recorded: allowed
        assert o.tolist() == [2.0, 2.0, 2.0]


# ------------------------------------------------------------------------- retain_grad + in-place
def test_retain_grad_follows_inplace():
    got = []
    for T in LIBS:
        a = _r(T, 4, rg=True)
        b = a * 2
        b.retain_grad()
        b.mul_(3)
        (b * T.arange(4.0)).sum().backward()
        got.append((b.grad.tolist(), a.grad.tolist()))
    assert got[0] == got[1]


# ------------------------------------------------------------------------- accumulated .grad layout
def test_accumulated_grad_keeps_contiguous_leaf_layout():
    got = []
    for T in LIBS:
        w = _r(T, 3, 4, rg=True)
        (w.t() @ _r(T, 3, 2, seed=1)).sum().backward()
        got.append((w.grad.stride(), w.grad.tolist()))
    assert got[0][0] == got[1][0] == (4, 1)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)


def test_accumulated_grad_noncontiguous_leaf_layout():
    got = []
    for T in LIBS:
        a = _r(T, 4, 3).t().requires_grad_()
        (a * _r(T, 3, 4, seed=2)).sum().backward()
        got.append((a.grad.stride(), a.grad.tolist()))
    assert got[0] == got[1]


# ------------------------------------------------------------------------- backward API
def test_grad_output_shape_mismatch_text():
    def fn(T):
        a = _r(T, 3, rg=True)
        T.autograd.grad(a * 2, a, T.ones(2, 2))

    assert "torch.Size([2, 2])" in _same_error(fn)


def test_backward_create_graph_warns(monkeypatch):
    from ember.autograd import engine

    monkeypatch.setattr(engine, "_CYCLE_WARNED", [False])  # torch warns once per process
    a = ember.ones(3, requires_grad=True)
    with pytest.warns(UserWarning, match="will create a reference cycle between the parameter"):
        (a * a).sum().backward(create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (a * a).sum().backward(create_graph=True)  # once only
        ember.autograd.grad((a * a).sum(), a, create_graph=True)


# ------------------------------------------------------------------------- hooks
def test_post_accumulate_hook_must_return_none():
    def fn(T):
        a = _r(T, 3, rg=True)
        a.register_post_accumulate_grad_hook(lambda p: p * 2)
        (a * 2).sum().backward()

    _same_error(fn)


def test_accumulate_grad_prehook():
    got = []
    for T in LIBS:
        a = _r(T, 3, rg=True)
        b = a * 3
        acc = b.grad_fn.next_functions[0][0]
        log = []
        h = acc.register_prehook(lambda go, log=log: log.append(go[0].tolist()) or (go[0] * 2,))
        (b * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        first = a.grad.tolist()
        h.remove()
        a.grad = None
        (a * 3).sum().backward()
        got.append((log, first, a.grad.tolist()))
    assert got[0] == got[1]

    def bad(T):
        a = _r(T, 3, rg=True)
        b = a * 3
        b.grad_fn.next_functions[0][0].register_prehook(lambda go: (go[0], go[0]))
        b.sum().backward()

    _same_error(bad)


# ------------------------------------------------------------------------- grad modes
@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_mode_decorating_a_class_warns(mode):
    got = []
    for T in LIBS:
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated") as w:

            @getattr(T, mode)()
            class A:
                def __init__(self, lib=T):
                    self.g = lib.is_grad_enabled()

        obj = A()
        got.append((str(w[0].message), obj.g, T.is_grad_enabled(), type(obj).__name__))
    assert got[0] == got[1]


def test_parameter_of_inference_tensor():
    def fn(T):
        with T.inference_mode():
            a = T.ones(3)
        T.nn.Parameter(a)

    _same_error(fn)
    for T in LIBS:
        with T.inference_mode():
            a = T.ones(3)
        assert T.nn.Parameter(a, requires_grad=False).is_inference()


# ------------------------------------------------------------------------- allow_mutation
def _mutate_saved(T):
    with T.autograd.graph.allow_mutation_on_saved_tensors():
        a = _r(T, 3, rg=True)
        b = a.sin()
        c = b * b * T.tensor([1.0, 2.0, 3.0])
        b.add_(1)
        d = (b * a).sum()
        c.sum().backward(retain_graph=True)
        d.backward()
    return a.grad.tolist(), b.tolist()


def _mutate_leaf(T):
    a = _r(T, 3, rg=True)
    with T.autograd.graph.allow_mutation_on_saved_tensors():
        c = (a * a * T.tensor([1.0, 2.0, 3.0])).sum()
        with T.no_grad():
            a.mul_(2)
        c.backward()
    return a.grad.tolist()


@pytest.mark.parametrize("fn", [_mutate_saved, _mutate_leaf])
def test_allow_mutation_on_saved_tensors(fn):
    np.testing.assert_allclose(fn(ember), fn(torch), rtol=1e-6)


def test_allow_mutation_on_saved_tensors_errors():
    def outside(T):
        with T.autograd.graph.allow_mutation_on_saved_tensors():
            a = _r(T, 3, rg=True)
            y = (a * a).sum()
        y.backward()

    def nested(T):
        g = T.autograd.graph
        with g.allow_mutation_on_saved_tensors(), g.allow_mutation_on_saved_tensors():
            pass

    _same_error(outside)
    _same_error(nested)


def test_allow_mutation_double_backward():
    got = []
    for T in LIBS:
        with T.autograd.graph.allow_mutation_on_saved_tensors():
            a = _r(T, 3, rg=True)
            (g,) = T.autograd.grad((a**3).sum(), a, create_graph=True)
            (g * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        got.append(a.grad.tolist())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-6)


def test_backward_inputs_not_requiring_grad():
    def fn(T):
        a = _r(T, 3, rg=True)
        (a * 2).sum().backward(inputs=[_r(T, 3)])

    _same_error(fn)


def test_grad_input_not_a_tensor():
    def fn(T):
        a = _r(T, 3, rg=True)
        T.autograd.grad((a * 2).sum(), [a, 1])

    _same_error(fn)


# ------------------------------------------------------------------------- in-place ops' results
@pytest.mark.parametrize(
    "first",
    [
        lambda T, b: b.sigmoid_(),
        lambda T, b: b.tanh_(),
        lambda T, b: b.exp_(),
        lambda T, b: b.relu_(),
        lambda T, b: T.nn.functional.relu(b, inplace=True),
        lambda T, b: b.reciprocal_(),
        lambda T, b: b.tan_(),
        lambda T, b: b.pow_(T.full((3,), 2.0)),
        lambda T, b: b.pow_(2),
        lambda T, b: b.mul_(0.1).erfinv_(),
        lambda T, b: b.cumprod_(0),
    ],
)
def test_inplace_result_changed_again(first):
    """An in-place op whose derivative keeps its result (sigmoid_, exp_...) then another
    in-place op: torch refuses in backward, naming the first node; pow_(2) and erfinv_ keep
    their input, so backward runs."""
    got = []
    for T in LIBS:
        a = T.tensor([0.3, 0.5, 0.7], requires_grad=True)
        b = a * 1
        first(T, b)
        b.mul_(2)
        try:
            (b * T.tensor([1.0, 2.0, 3.0])).sum().backward()
            got.append(("ok", np.round(a.grad.numpy(), 5).tolist()))
        except RuntimeError as e:
            got.append(("err", str(e)))
    assert got[0] == got[1]


def test_inplace_on_view_made_in_inference_mode():
    def fn(T):
        b = T.zeros(4)
        with T.inference_mode():
            v = b[:]
        v.copy_(_r(T, 4, rg=True))

    assert _same_error(fn).startswith("A view was created in inference mode")


# ------------------------------------------------------------------------- expanded tensors
@pytest.mark.parametrize("op", ["fill", "zero"])
def test_fill_expanded_tensor(op):
    got = []
    for T in LIBS:
        b = T.arange(6.0).view(2, 3)
        e = b[:, 1:2].expand(2, 4)
        e.fill_(7.0) if op == "fill" else e.zero_()
        got.append((b.tolist(), e._version, b._version))
    assert got[0] == got[1]


def test_overlapping_write_still_refused():
    def fn(T):
        T.zeros(2, 1).expand(2, 3).add_(1)

    def copy(T):
        T.zeros(2, 1).expand(2, 3).copy_(T.ones(2, 3))

    _same_error(fn)
    _same_error(copy)
