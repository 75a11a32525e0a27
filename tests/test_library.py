"""torch.library (custom ops, infer_schema, opcheck, Library) and torch.ops, against torch."""

import typing
from typing import Optional

import ember
import numpy as np
import pytest
from ember.autograd.gradcheck import GradcheckError
from ember.library import OpCheckError

torch = pytest.importorskip("torch")


def _err(fn):
    """(type name, message) of the exception ``fn()`` raises."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test compares what was raised
        return type(e).__name__, str(e)
    raise AssertionError("no error raised")


def _same_err(t_fn, e_fn):
    te, ee = _err(t_fn), _err(e_fn)
    assert ee == (te[0], te[1].replace("torch.", "ember.")), (te, ee)


def _both(define):
    """Run ``define(lib)`` with lib = torch, then ember: the op it returns, for each."""
    return define(torch), define(ember)


# ----------------------------------------------------------------------------- the snippet
def _numpy_sin(lib, ns):
    @lib.library.custom_op(f"{ns}::numpy_sin", mutates_args=())
    def numpy_sin(x: lib.Tensor) -> lib.Tensor:
        return lib.from_numpy(np.sin(x.numpy(force=True)))

    @numpy_sin.register_fake
    def _(x):
        return lib.empty_like(x)

    return numpy_sin


def _with_autograd(op):
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()

    op.register_autograd(backward, setup_context=setup_context)
    return op


X = np.array([0.3, -1.2, 2.0, 0.7])
G = np.array([1.0, -2.0, 0.5, 3.0])


def test_custom_op_values_gradients_and_ops_namespace():
    tsin, esin = _both(lambda lib: _with_autograd(_numpy_sin(lib, "emtest")))
    tx = torch.tensor(X, requires_grad=True)
    ex = ember.tensor(X, requires_grad=True)
    for ty, ey in (
        (tsin(tx), esin(ex)),
        (torch.ops.emtest.numpy_sin(tx), ember.ops.emtest.numpy_sin(ex)),
        (torch.ops.emtest.numpy_sin.default(tx), ember.ops.emtest.numpy_sin.default(ex)),
    ):
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy())
        assert ey.grad_fn.name() == type(ty.grad_fn).__name__
        tx.grad = ex.grad = None
        ty.backward(torch.tensor(G))
        ey.backward(ember.tensor(G))
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())
    with ember.no_grad():
        assert not esin(ex).requires_grad
    assert repr(esin) == repr(tsin) == "<CustomOpDef(emtest::numpy_sin)>"
    tp, ep = torch.ops.emtest.numpy_sin, ember.ops.emtest.numpy_sin
    assert (repr(ep), str(ep.default), repr(ep.default)) == (
        repr(tp),
        str(tp.default),
        repr(tp.default),
    )
    assert ep.overloads() == tp.overloads() == ["default"]
    assert ep.default.name() == tp.default.name() == "emtest::numpy_sin"
    assert str(ep.default._schema) == str(tp.default._schema)
    assert ember.library.opcheck(esin, (ex,)) == torch.library.opcheck(tsin, (tx,))


def test_backward_without_autograd_formula_raises_at_backward():
    tsin, esin = _both(lambda lib: _numpy_sin(lib, "emtest_noad"))
    ty = tsin(torch.tensor(X, requires_grad=True))
    ey = esin(ember.tensor(X, requires_grad=True))
    assert ey.requires_grad and ty.requires_grad
    _same_err(lambda: ty.sum().backward(), lambda: ey.sum().backward())


def test_snippet_in_drop_in_mode(ember_alias):
    ember_alias("torch_lib")
    import torch_lib
    import torch_lib.ops

    assert torch_lib.ops is ember.ops and torch_lib.library is ember.library
    numpy_sin = _with_autograd(_numpy_sin(torch_lib, "emtest_dropin"))
    x = torch_lib.tensor(X, requires_grad=True)
    y = torch_lib.ops.emtest_dropin.numpy_sin(x)
    y.backward(torch_lib.tensor(G))
    np.testing.assert_allclose(x.grad.numpy(), G * np.cos(X))
    res = torch_lib.library.opcheck(numpy_sin, (x,))
    assert set(res.values()) == {"SUCCESS"}
    assert torch_lib.ops.aten.relu(torch_lib.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


# ----------------------------------------------------------------------------- infer_schema
def _sig_fns(lib):
    T = lib.Tensor

    def a(
        x: T,
        n: int,
        f: float,
        b: bool,
        o: Optional[T],  # noqa: UP045 - the typing spelling is under test
        ts: list[T],
        s: str,
        d: lib.dtype,
        dev: lib.device,
        li: list[int],
        lf: typing.List[float],  # noqa: UP006
        on: int | None,
        sc: int | float | bool,  # noqa: PYI041 - torch's spelling of Scalar
        lb: typing.Sequence[bool],
        lo: list[Optional[T]],  # noqa: UP045
    ) -> tuple[T, T]: ...

    def defaults(
        x: T,
        n: int = -1,
        f: float = 2.5,
        q: float = 1e-5,
        inf: float = float("inf"),
        b: bool = True,
        o: Optional[T] = None,  # noqa: UP045
        s: str = "hi",
        d: lib.dtype = lib.float32,
        od: Optional[lib.dtype] = lib.int64,  # noqa: UP045
        dev: lib.device = lib.device("cpu"),  # noqa: B008 - a default under test
        ol: Optional[list[int]] = None,  # noqa: UP045
    ) -> T: ...

    def kwonly(x: T, *, y: T, k: int = 1) -> None: ...

    def mixed(x: T) -> tuple[T, int]: ...

    def lst(x: list[T]) -> list[T]: ...

    def opt(x: Optional[T], y: T) -> float: ...  # noqa: UP045

    def self_(self: T) -> bool: ...

    def empty(x: T) -> tuple[()]: ...

    def strings(x: T) -> tuple[T, T]: ...

    # string annotations are evaluated in the function's module (this one)
    t = f"{lib.__name__}.Tensor"
    strings.__annotations__ = {"x": t, "return": f"tuple[{t}, {t}]"}
    return [a, defaults, kwonly, mixed, lst, opt, self_, empty, strings]


CASES = [
    (0, ()),
    (1, ()),
    (1, ("x", "o")),
    (1, "unknown"),
    (2, ("y",)),
    (3, ()),
    (4, ["x"]),
    (5, {"x"}),
    (6, ()),
    (7, ()),
    (8, ()),
]


@pytest.mark.parametrize(("i", "mutates"), CASES)
def test_infer_schema(i, mutates):
    tf, ef = _sig_fns(torch)[i], _sig_fns(ember)[i]
    s = torch.library.infer_schema(tf, mutates_args=mutates)
    assert ember.library.infer_schema(ef, mutates_args=mutates) == s
    assert ember.library.infer_schema(ef, mutates_args=mutates, op_name="foo") == "foo" + s


def test_infer_schema_examples():
    T = ember.Tensor

    def f(x: T, y: T, n: int = 3) -> T: ...

    assert ember.library.infer_schema(f, mutates_args=("y",)) == (
        "(Tensor x, Tensor(a1!) y, SymInt n=3) -> Tensor"
    )


def _bad_fns(lib):
    T = lib.Tensor

    def untyped(x): ...

    def noret(x: T): ...

    def varargs(x: T, *args) -> T: ...

    def posonly(x: T, /, y: T) -> T: ...

    def badparam(x: np.ndarray) -> T: ...

    def badret(x: T) -> np.ndarray: ...

    def badret2(x: T) -> list[int]: ...

    def baddefault(x: T, y: list[int] = [1, 2]) -> T: ...  # noqa: B006

    def mutint(x: T, n: int) -> T: ...

    def unresolved(x: T) -> "Foo": ...  # noqa: F821 - the error under test

    return {
        "untyped": (untyped, ()),
        "noret": (noret, ()),
        "varargs": (varargs, ()),
        "posonly": (posonly, ()),
        "badparam": (badparam, ()),
        "badret": (badret, ()),
        "badret2": (badret2, ()),
        "baddefault": (baddefault, ()),
        "mutint": (mutint, ("n",)),
        "missing": (mutint, ("z",)),
        "mutstr": (mutint, "x"),
        "unresolved": (unresolved, ()),
    }


@pytest.mark.parametrize("case", list(_bad_fns(ember)))
def test_infer_schema_errors(case):
    tf, tm = _bad_fns(torch)[case]
    ef, em = _bad_fns(ember)[case]
    te = _err(lambda: torch.library.infer_schema(tf, mutates_args=tm))
    ee = _err(lambda: ember.library.infer_schema(ef, mutates_args=em))
    want = te[1].replace("torch.", "ember.")
    assert ee[0] == te[0] == "ValueError"
    if "The valid types are:" in want:
        # the list of valid types names torch-only classes (GroupName): compare around it
        head, tail = want.split("The valid types are:")[0], want.rpartition(" Got func")[2]
        assert ee[1].startswith(head) and ee[1].endswith(tail), (te, ee)
    else:
        assert ee[1] == want


def test_defining_a_name_again_replaces_the_op():
    def define(lib, k):
        @lib.library.custom_op("emtest::again", mutates_args=())
        def again(x: lib.Tensor) -> lib.Tensor:
            return x + k

        return again

    t1, e1 = _both(lambda lib: define(lib, 1))
    t2, e2 = _both(lambda lib: define(lib, 2))
    for lib, first, second in ((torch, t1, t2), (ember, e1, e2)):
        assert first(lib.zeros(1)).tolist() == second(lib.zeros(1)).tolist() == [2.0]
        assert lib.ops.emtest.again(lib.zeros(1)).tolist() == [2.0]


def test_custom_op_definition_errors():
    def f(x):
        return x

    def typed(lib):
        def g(x: lib.Tensor) -> lib.Tensor:
            return x.clone()

        return g

    for name in ("nonamespace", "a::b::c"):
        _same_err(
            lambda name=name: torch.library.custom_op(name, typed(torch), mutates_args=()),
            lambda name=name: ember.library.custom_op(name, typed(ember), mutates_args=()),
        )
    _same_err(
        lambda: torch.library.custom_op("emtest::f1", f),
        lambda: ember.library.custom_op("emtest::f1", f),
    )
    _same_err(
        lambda: torch.library.custom_op("emtest::f2", f, mutates_args=()),
        lambda: ember.library.custom_op("emtest::f2", f, mutates_args=()),
    )


# ----------------------------------------------------------------------------- calling
def _kop(lib):
    @lib.library.custom_op("emtest::k", mutates_args=())
    def k(x: lib.Tensor, n: int, *, scale: float = 2.0) -> lib.Tensor:
        return x * n * scale

    return k


CALLS = [
    lambda lib, k: k(),
    lambda lib, k: k(lib.ones(2), 3, 4.0),
    lambda lib, k: k(lib.ones(2), 3, scale=1.0, z=1),
    lambda lib, k: k(lib.ones(2), 3, bogus=1),
    lambda lib, k: k(lib.ones(2), n=3, bogus=1),
    lambda lib, k: k(3, 3),
    lambda lib, k: k([1.0], 3),
    lambda lib, k: k(lib.ones(2), 3.5),
    lambda lib, k: k(lib.ones(2), "a"),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_call_errors(i):
    tk, ek = _both(_kop)
    _same_err(lambda: CALLS[i](torch, tk), lambda: CALLS[i](ember, ek))


def test_call_values_and_keyword_only_setup_context():
    tk, ek = _both(_kop)

    def setup_context(ctx, inputs, output, keyword_only_inputs):
        ctx.scale = inputs[1] * keyword_only_inputs["scale"]

    for k in (tk, ek):
        k.register_autograd(lambda ctx, g: (g * ctx.scale, None), setup_context=setup_context)
    tx, ex = torch.tensor(X, requires_grad=True), ember.tensor(X, requires_grad=True)
    ty, ey = tk(tx, 3, scale=0.5), ek(ex, 3, scale=0.5)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy())
    ty.backward(torch.tensor(G))
    ey.backward(ember.tensor(G))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(
        ember.ops.emtest.k(ember.ones(2), n=2).numpy(), torch.ops.emtest.k(torch.ones(2), n=2)
    )


def test_alias_output_error():
    def define(lib):
        @lib.library.custom_op("emtest::same", mutates_args=())
        def same(x: lib.Tensor) -> lib.Tensor:
            return x.view(-1)

        return same

    ts, es = _both(define)
    te, ee = _err(lambda: ts(torch.ones(2, 2))), _err(lambda: es(ember.ones(2, 2)))
    assert ee[0] == te[0] == "RuntimeError"
    # the middle names the module holding the implementation: ember.library vs torch's own
    assert ee[1].startswith("same (with implementation in <module 'ember.library'")
    assert ee[1].partition(">): ")[2] == te[1].partition(">): ")[2]


def _mutators(lib):
    T = lib.Tensor

    @lib.library.custom_op("emtest::addin", mutates_args=("x",))
    def addin(x: T, y: T) -> None:
        x.add_(y)

    @lib.library.custom_op("emtest::addin_np", mutates_args=("x",))
    def addin_np(x: T, y: T) -> None:
        x.numpy()[:] += y.numpy()

    @lib.library.custom_op("emtest::declared", mutates_args=("x",))
    def declared(x: T, y: T) -> T:
        return x + y

    @lib.library.custom_op("emtest::unknown", mutates_args="unknown")
    def unknown(x: T, y: T) -> T:
        return x + y

    return addin, addin_np, declared, unknown


def test_mutated_args_bump_versions_like_torch():
    for top, eop in zip(*_both(_mutators)):
        ta, tb = torch.zeros(3), torch.ones(3)
        ea, eb = ember.zeros(3), ember.ones(3)
        top(ta, tb)
        eop(ea, eb)
        assert (ea._version, eb._version) == (ta._version, tb._version)
        np.testing.assert_array_equal(ea.numpy(), ta.numpy())
    assert str(ember.ops.emtest.unknown.default._schema) == str(
        torch.ops.emtest.unknown.default._schema
    )


def test_list_input_tuple_output_gradients():
    def define(lib):
        T = lib.Tensor

        @lib.library.custom_op("emtest::wsum", mutates_args=())
        def wsum(xs: list[T], w: float) -> tuple[T, T]:
            return xs[0] * w + xs[1], xs[0] * xs[1]

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs[0])
            ctx.w = inputs[1]

        def backward(ctx, g1, g2):
            a, b = ctx.saved_tensors
            return [g1 * ctx.w + g2 * b, g1 + g2 * a], None

        wsum.register_autograd(backward, setup_context=setup_context)
        return wsum

    top, eop = _both(define)
    ta, tb = torch.tensor(X, requires_grad=True), torch.tensor(G, requires_grad=True)
    ea, eb = ember.tensor(X, requires_grad=True), ember.tensor(G, requires_grad=True)
    (t1, t2), (e1, e2) = top([ta, tb], 1.5), eop([ea, eb], 1.5)
    (t1 * 2 + t2 * torch.tensor(G)).sum().backward()
    (e1 * 2 + e2 * ember.tensor(G)).sum().backward()
    for e, t in ((ea, ta), (eb, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())
    # only the first output used: the other's gradient arrives as zeros
    ta.grad = ea.grad = None
    top([ta, tb], 1.5)[0].sum().backward()
    eop([ea, eb], 1.5)[0].sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy())


BAD_BACKWARDS = [
    lambda ctx, g: (g, g),  # a gradient for the int input
    lambda ctx, g: (g, 1),
    lambda ctx, g: g,  # one gradient for two positional inputs
]


@pytest.mark.parametrize("i", range(len(BAD_BACKWARDS)))
def test_backward_gradient_errors(i):
    def define(lib):
        @lib.library.custom_op("emtest::scale", mutates_args=())
        def scale(x: lib.Tensor, n: int) -> lib.Tensor:
            return x * n

        scale.register_autograd(BAD_BACKWARDS[i])
        return scale

    top, eop = _both(define)
    _same_err(
        lambda: top(torch.ones(2, requires_grad=True), 3).sum().backward(),
        lambda: eop(ember.ones(2, requires_grad=True), 3).sum().backward(),
    )


def test_register_kernel_set_kernel_enabled_and_autocast():
    def define(lib):
        @lib.library.custom_op("emtest::kern", mutates_args=())
        def kern(x: lib.Tensor) -> lib.Tensor:
            return x + 1

        return kern

    top, eop = _both(define)
    for lib, op in ((torch, top), (ember, eop)):
        z = lib.zeros(2)
        assert op(z).tolist() == [1.0, 1.0]
        assert op.register_kernel("cpu", lambda x: x + 2)(z).tolist() == [2.0, 2.0]
        assert op(z).tolist() == [2.0, 2.0]
        with op.set_kernel_enabled("cpu", False):
            assert op(z).tolist() == [1.0, 1.0]
        assert op(z).tolist() == [2.0, 2.0]
        lib.library.register_kernel(f"emtest::kern", "cpu", lambda x: x + 3)  # noqa: F541
        assert lib.ops.emtest.kern(z).tolist() == [3.0, 3.0]
        op.register_autocast("cpu", lib.bfloat16)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            assert op(lib.ones(2)).dtype == lib.bfloat16
            assert op(lib.ones(2, dtype=lib.float64)).dtype == lib.float64
    # the device list in the message is each library's own
    te, ee = (
        _err(lambda: top.register_kernel("tpu", lambda x: x)),
        _err(lambda: eop.register_kernel("tpu", lambda x: x)),
    )
    assert ee[0] == te[0] and ee[1].endswith(" device type at start of device string: tpu")
    ex = ember.arange(6.0).reshape(2, 3)
    tx = torch.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(ember.vmap(eop)(ex).numpy(), torch.vmap(top)(tx).numpy())


def test_module_level_registration_errors():
    for call in (
        lambda lib: lib.library.register_fake("emtest::nope", lambda x: x),
        lambda lib: lib.library.register_fake("nonamespace", lambda x: x),
        lambda lib: lib.library.register_autograd("emtest::nope", lambda ctx, g: g),
    ):
        _same_err(lambda call=call: call(torch), lambda call=call: call(ember))


def test_get_ctx():
    assert ember.library.get_ctx() is None and torch.library.get_ctx() is None
    seen = []

    @ember.library.custom_op("emtest::ctx", mutates_args=())
    def op(x: ember.Tensor) -> ember.Tensor:
        return x.clone()

    @op.register_fake
    def _(x):
        seen.append(ember.library.get_ctx())
        return ember.empty_like(x)

    ember.library.opcheck(op, (ember.ones(2),), test_utils="test_faketensor")
    assert isinstance(seen[0], ember.library.FakeImplCtx)


# ----------------------------------------------------------------------------- opcheck
def _faulty(lib):
    T = lib.Tensor

    @lib.library.custom_op("emtest::bad_shape", mutates_args=())
    def bad_shape(x: T) -> T:
        return x.sin()

    bad_shape.register_fake(lambda x: x.new_empty(x.shape[0] + 1))

    @lib.library.custom_op("emtest::bad_dtype", mutates_args=())
    def bad_dtype(x: T) -> T:
        return x.sin()

    bad_dtype.register_fake(lambda x: x.new_empty(x.shape, dtype=lib.float32))

    @lib.library.custom_op("emtest::mutates", mutates_args=())
    def mutates(x: T) -> T:
        x.numpy(force=True)[:] += 1
        return x.sin()

    mutates.register_fake(lambda x: lib.empty_like(x))

    @lib.library.custom_op("emtest::nofake", mutates_args=())
    def nofake(x: T) -> T:
        return x.sin()

    return {"shape": bad_shape, "dtype": bad_dtype, "mutates": mutates, "nofake": nofake}


@pytest.mark.parametrize("case", ["shape", "dtype", "mutates", "nofake"])
def test_opcheck_faulty_ops(case):
    top, eop = _faulty(torch)[case], _faulty(ember)[case]
    _same_err(
        lambda: torch.library.opcheck(top, (torch.tensor(X),)),
        lambda: ember.library.opcheck(eop, (ember.tensor(X),)),
    )
    tr = torch.library.opcheck(top, (torch.tensor(X),), raise_exception=False)
    er = ember.library.opcheck(eop, (ember.tensor(X),), raise_exception=False)
    assert list(er) == list(tr)
    for k, v in tr.items():
        if v == "SUCCESS":
            assert er[k] == "SUCCESS"
        else:
            assert str(er[k]) == str(v).replace("torch.", "ember."), k


def test_opcheck_wrong_backward_fails_gradcheck():
    # ember goes further than torch here: float64 inputs -> gradients vs finite differences
    op = _numpy_sin(ember, "emtest_wrongbw")
    op.register_autograd(lambda ctx, g: g * 2)
    x = ember.tensor(X, requires_grad=True)
    with pytest.raises(OpCheckError, match="test_aot_dispatch_dynamic failed with Jacobian") as e:
        ember.library.opcheck(op, (x,))
    assert isinstance(e.value.__cause__, GradcheckError)
    res = ember.library.opcheck(op, (x,), raise_exception=False)
    assert isinstance(res["test_aot_dispatch_dynamic"], GradcheckError)
    assert res["test_schema"] == res["test_faketensor"] == "SUCCESS"
    # float32 inputs: backward runs, no finite differences
    assert ember.library.opcheck(op, (x.float().detach().requires_grad_(),))[
        "test_aot_dispatch_dynamic"
    ] == ("SUCCESS")


def test_opcheck_arguments():
    tsin, esin = _both(lambda lib: _numpy_sin(lib, "emtest_args"))
    tx, ex = torch.tensor(X), ember.tensor(X)
    for kw in ({"test_utils": "test_schema"}, {"test_utils": ("test_schema", "test_faketensor")}):
        assert ember.library.opcheck(esin, (ex,), **kw) == torch.library.opcheck(tsin, (tx,), **kw)
    for call in (
        lambda lib, op, x: lib.library.opcheck(op, (x,), test_utils="foo"),
        lambda lib, op, x: lib.library.opcheck(op, (x,), atol=1e-3),
        lambda lib, op, x: lib.library.opcheck(lambda x: x, (x,)),
        lambda lib, op, x: lib.library.opcheck(op, x),
    ):
        _same_err(lambda call=call: call(torch, tsin, tx), lambda call=call: call(ember, esin, ex))
    assert ember.library.opcheck(ember.ops.emtest_args.numpy_sin, (ex,), test_utils="test_schema")
    assert ember.library.opcheck(ember.ops.aten.sin.default, (ex,)) == torch.library.opcheck(
        torch.ops.aten.sin.default, (tx,)
    )


# ----------------------------------------------------------------------------- ember.ops
def test_aten_spellings():
    a, b = ember.tensor([[1.0, -2.0], [3.0, 4.0]]), ember.tensor([[0.5, 1.0], [-1.0, 2.0]])
    ta, tb = torch.tensor(a.tolist()), torch.tensor(b.tolist())
    for name, args in (
        ("add.Tensor", (0, 1)),
        ("add", (0, 1)),
        ("relu", (0,)),
        ("relu.default", (0,)),
        ("mm.default", (0, 1)),
        ("mul.Tensor", (0, 1)),
        ("sum.default", (0,)),
        ("t.default", (0,)),
    ):
        ef, tf = ember.ops.aten, torch.ops.aten
        for part in name.split("."):
            ef, tf = getattr(ef, part), getattr(tf, part)
        got = ef(*[(a, b)[i] for i in args])
        want = tf(*[(ta, tb)[i] for i in args])
        np.testing.assert_allclose(got.numpy(), want.numpy(), err_msg=name)
    assert ember.ops.aten.add.Tensor._fn is ember.add
    assert ember.ops.aten.view.default(a, 4).shape == (4,)
    assert ember.ops.aten.add.Tensor(a, b, alpha=2).tolist() == [[2.0, 0.0], [1.0, 8.0]]


def test_ops_errors():
    _same_err(lambda: torch.ops.aten.no_such_op, lambda: ember.ops.aten.no_such_op)
    _same_err(lambda: torch.ops.emtest_none.foo, lambda: ember.ops.emtest_none.foo)
    _both(lambda lib: _numpy_sin(lib, "emtest_ov"))
    _same_err(lambda: torch.ops.emtest_ov.numpy_sin.Foo, lambda: ember.ops.emtest_ov.numpy_sin.Foo)
    import ember.ops as eops

    assert eops is ember.ops


# ----------------------------------------------------------------------------- Library
def test_library_define_impl_and_errors():
    tlib, elib = (
        torch.library.Library("emtest_old", "DEF"),
        ember.library.Library("emtest_old", "DEF"),
    )
    assert repr(elib) == repr(tlib)
    for lib, L in ((torch, tlib), (ember, elib)):
        assert L.define("foo(Tensor x, int n=2) -> Tensor") == "foo"
        L.impl("foo", lambda x, n=2: x * n, "CompositeImplicitAutograd")
        assert lib.ops.emtest_old.foo(lib.ones(2)).tolist() == [2.0, 2.0]
        x = lib.ones(2, requires_grad=True)
        lib.ops.emtest_old.foo(x, 3).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]
        lib.library.define("emtest_old::bar", "(Tensor x) -> Tensor")
        lib.library.impl("emtest_old::bar", "cpu", lambda x: x + 10)
        assert lib.ops.emtest_old.bar(lib.ones(1)).tolist() == [11.0]
    for call in (
        lambda lib, L: L.define("foo(Tensor x, int n=2) -> Tensor"),
        lambda lib, L: lib.library.define("emtest_old::bar", "(Tensor x) -> Tensor"),
    ):
        te, ee = (
            _err(lambda call=call: call(torch, tlib)),
            _err(lambda call=call: call(ember, elib)),
        )
        head = te[1].partition("Duplicate registration:")[0]
        assert ee[0] == te[0] and ee[1].startswith(head) and head, (te, ee)
    te = _err(lambda: torch.library.Library("emtest_old", "DEF"))
    ee = _err(lambda: ember.library.Library("emtest_old", "DEF"))
    assert (
        ee[0] == te[0]
        and ee[1].split(" was registered at")[0] == te[1].split(" was registered at")[0]
    )
    for call in (
        lambda lib, L: lib.library.Library("emtest_old2", "BOGUS"),
        lambda lib, L: L.impl("foo", lambda x, n: x, "Bogus"),
    ):
        _same_err(lambda call=call: call(torch, tlib), lambda call=call: call(ember, elib))
    frags = [lib.library.Library("emtest_old", "FRAGMENT") for lib in (torch, ember)]
    for f in frags:
        f.define("nokernel(Tensor x) -> Tensor")
    te = _err(lambda: torch.ops.emtest_old.nokernel(torch.ones(1)))
    ee = _err(lambda: ember.ops.emtest_old.nokernel(ember.ones(1)))
    # torch goes on with its list of dispatch keys: ember stops after the first sentences
    assert ee[0] == te[0] == "NotImplementedError" and te[1].startswith(ee[1]), (te, ee)


# ----------------------------------------------------------------------------- names
def test_named_tensors_follow_the_generic_rule():
    @ember.library.custom_op("emtest::names", mutates_args=())
    def through_numpy(x: ember.Tensor) -> tuple[ember.Tensor, ember.Tensor, ember.Tensor]:
        a = x.numpy(force=True)
        return ember.from_numpy(np.sin(a)), ember.from_numpy(a.T.copy()), x.sum(0)

    x = ember.ones(2, 3, names=("N", "C"))
    same, transposed, reduced = through_numpy(x)
    assert same.names == ("N", "C")  # unnamed output of an input's shape: its names
    assert transposed.names == (None, None)  # other shapes stay unnamed
    assert reduced.names == ("C",)  # names the function produced itself are kept


def test_tags_match_torch():
    want = {t: getattr(torch.Tag, t).value for t in torch.Tag.__members__}
    got = {t: ember.Tag[t].value for t in ember.Tag.__members__}
    assert got == want
    assert repr(ember.Tag.pt2_compliant_tag) == repr(torch.Tag.pt2_compliant_tag)

    def twice(x: ember.Tensor) -> ember.Tensor:
        return x * 2

    op = ember.library.custom_op(
        "tagtest::twice", twice, mutates_args=(), tags=ember.Tag.pt2_compliant_tag
    )
    assert op(ember.ones(2)).tolist() == [2.0, 2.0]
