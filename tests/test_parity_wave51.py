"""Parity regressions found by the fifty-first wave, a sweep of custom ``autograd.Function``s
(old and new style, ``save_for_backward``, ``mark_dirty``, ``mark_non_differentiable``,
``set_materialize_grads``, ``once_differentiable``, bad gradients from backward, ``jvp`` under
forward AD, ``vmap`` rules, the nodes of their outputs) and of the backward API around them
(``autograd.grad``/``backward`` with their options, saved-tensor hooks, multi-grad hooks,
anomaly mode); torch is the oracle: a ``forward`` that marked a view dirty left its base's
history without the Function (silently wrong gradients, torch records CopySlices), and one that
marked a view of a leaf requiring grad, or a tensor it did not return, was not refused; a
``save_for_backward`` of a non-tensor failed on the tensors' ``==`` ("Boolean value of Tensor
...") instead of torch's TypeError, and refused also where torch records nothing; a view
output of a Function, once its base changed in place, was used with its stale grad_fn where
torch refuses; an input returned as-is by a call recording nothing came back as the same
object (torch: a new view); ``apply`` with keywords of an old-style ``forward`` left those
inputs off the graph; a complex gradient for a real input was accepted; the backward node of a
Function lacked torch's ``BackwardCFunction`` type and its ``apply``, torch's C++ nodes could
not be called, and a Function defining both ``backward`` and ``vjp`` was not refused; the
once_differentiable node was named ``DelayedError`` (torch: ``torch::autograd::Error``);
``ctx.saved_tensors`` in a ``jvp`` gave the backward's tensors (torch: those of
``save_for_forward``) and a wrongly shaped tangent raised a message about ember's internals;
a Function with both ``generate_vmap_rule=True`` and a ``vmap`` staticmethod was mapped;
``autograd.grad``/``backward`` with fewer grad_outputs than outputs asked for implicit
gradients instead of torch's "got 2 tensors and 1 gradients"; ``NestedIOFunction`` was
missing. Later in the sweep: a tensor hook on an output its node's pass gives no gradient was
never called (torch calls it with None; ``register_multi_grad_hook`` over a Function's outputs
then never fired); the gradient accumulator of ``next_functions`` was a new object per access,
with no ``metadata`` or ``register_hook``; once_differentiable's outputs reached the graph
before them (torch: one Error node over detached stand-ins, so ``grad(..., allow_unused=True)``
gives None); a non-differentiable dirty output or input returned as-is stayed in the graph
(torch: an alias off it); a dirty output's retained gradient stayed with the old value;
``saved_tensors`` read in ``forward`` gave the tensors (torch: none yet); a new-style forward
with keyword-only parameters silently dropped the keywords; a directly made ``FunctionCtx``
had ``saved_tensors`` and ``needs_input_grad``."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")

UP = np.array([1.0, 10.0, 100.0], dtype=np.float32)


def _l(t):
    return None if t is None else t.detach().numpy().tolist()


def _mul2_(mod):
    class Mul2_(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Mul2_


# ------------------------------------------------------------ mark_dirty
@pytest.mark.parametrize("use", ["base", "output"])
def test_dirty_view_reaches_its_base_history(use):
    def run(mod):
        a = mod.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 1
        o = _mul2_(mod).apply(b[1:])
        name = type(b.grad_fn).__name__
        if use == "base":
            (b * mod.tensor(UP)).sum().backward()
        else:
            (o * mod.tensor(UP[1:])).sum().backward()
        return _l(b), name, _l(a.grad)

    assert run(ember) == run(torch)


def test_dirty_view_of_base_not_requiring_grad():
    def run(mod):
        class AddY_(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                x.add_(y)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g, g * 3

        base = mod.zeros(3)
        y = mod.tensor([1.0, 2.0], requires_grad=True)
        AddY_.apply(base[:2], y)
        got = (base.requires_grad, type(base.grad_fn).__name__, _l(base))
        (base * mod.tensor(UP)).sum().backward()
        return got, _l(y.grad)

    assert run(ember) == run(torch)


def test_dirty_view_of_leaf_refused():
    def run(mod):
        a = mod.ones(3, requires_grad=True)
        _mul2_(mod).apply(a[:2])

    msg = same_error(run, RuntimeError)
    assert msg.startswith("a view of a leaf Variable")


@pytest.mark.parametrize("grad", [True, False])
def test_dirty_not_returned_refused(grad):
    def run(mod):
        class Dirty(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        a = mod.ones(2, requires_grad=grad)
        Dirty.apply(a * 1 if grad else a)

    assert "not returned as output" in same_error(run, RuntimeError)


def test_dirty_output_retained_grad_follows_the_new_value():
    def run(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        b = x * 1
        b.retain_grad()
        o = _mul2_(mod).apply(b)
        (o * mod.tensor([1.0, 3.0])).sum().backward()
        return _l(b.grad), _l(x.grad)

    assert run(ember) == run(torch)


@pytest.mark.parametrize("view", [False, True])
def test_dirty_non_differentiable_output_is_an_alias_off_the_graph(view):
    def run(mod):
        class DN(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                ctx.mark_non_differentiable(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        b = mod.ones(3, requires_grad=True) * 1
        i = b[:2] if view else b
        o = DN.apply(i)
        res = [o is i, o._is_view(), o.requires_grad, i.requires_grad, o._version]
        o.add_(1)  # an alias: the write reaches b
        return res, _l(b)

    assert run(ember) == run(torch)


# ------------------------------------------------------------ save_for_backward
def _save(mod, *extra):
    class Save(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, *extra)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    return Save


@pytest.mark.parametrize("extra", [3, "s", [None]])
def test_save_for_backward_non_tensor_refused(extra):
    def run(mod):
        _save(mod, None, extra).apply(mod.ones(2, requires_grad=True))

    msg = same_error(run, TypeError)
    assert msg.endswith(f"argument 2 is of type {type(extra).__name__}")


def test_save_for_backward_non_tensor_unchecked_when_not_recorded():
    def run(mod):
        x = mod.ones(2, requires_grad=True)
        with mod.no_grad():
            a = _save(mod, [x]).apply(x)
        return _l(a), _l(_save(mod, 5).apply(mod.ones(2)))

    assert run(ember) == run(torch)


@pytest.mark.parametrize("grad", [True, False])
def test_saved_tensors_read_in_forward_are_empty(grad):
    def run(mod):
        seen = []

        class S(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                seen.append(len(ctx.saved_tensors))
                return x * 2

            @staticmethod
            def backward(ctx, g):
                seen.append(len(ctx.saved_tensors))
                return g

        o = S.apply(mod.ones(2, requires_grad=grad))
        if grad:
            o.sum().backward()
        return seen

    assert run(ember) == run(torch)


# ------------------------------------------------------------ view outputs, inputs returned
def _views(mod, multi):
    class Views(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return (x[0], x[1]) if multi else x.view(-1)[:2]

        @staticmethod
        def backward(ctx, *gs):
            return mod.stack(gs) if multi else mod.cat([gs[0], mod.zeros(2)]).view(2, 2)

    return Views


@pytest.mark.parametrize("multi", [True, False])
@pytest.mark.parametrize("where", ["backward", "grad_fn", "op"])
def test_view_output_used_after_base_changed_refused(multi, where):
    def run(mod):
        y = mod.ones(2, 2, requires_grad=True) * 1
        out = _views(mod, multi).apply(y)
        v = out[0] if multi else out
        y.add_(1)
        if where == "backward":
            v.sum().backward()
        elif where == "grad_fn":
            return v.grad_fn
        else:
            return v * 2

    msg = same_error(run, RuntimeError)
    assert "its base or another view of its base has been modified inplace" in msg


def test_view_output_unchanged_base_still_differentiable():
    def run(mod):
        x = mod.ones(2, 2, requires_grad=True)
        o = _views(mod, False).apply(x * 1)
        (o * mod.tensor([3.0, 5.0])).sum().backward()
        return _l(x.grad)

    assert run(ember) == run(torch)


def _ident(mod):
    class Ident(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    return Ident


def test_input_returned_unrecorded_is_a_new_view():
    def run(mod):
        x = mod.tensor([1.0, 2.0])
        o = _ident(mod).apply(x)
        res = [o is x, o._base is x, o._is_view()]
        o.add_(1)
        xr = mod.tensor([1.0, 2.0], requires_grad=True)
        with mod.no_grad():
            p = _ident(mod).apply(xr)
            res += [p is xr, p._is_view(), p.requires_grad]
            p.add_(1)
        return res, _l(x), xr._version, _l(xr)

    assert run(ember) == run(torch)


# ------------------------------------------------------------ apply's keywords (old style)
def _kw(mod):
    class Kw(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, s=2.0, t=None):
            ctx.nig = ctx.needs_input_grad
            return x * y * s

        @staticmethod
        def backward(ctx, g):
            return (g * 2, g * 3) + (None,) * (len(ctx.nig) - 2)

    return Kw


def test_old_style_keywords_take_their_positions():
    def run(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = mod.tensor([3.0, 4.0], requires_grad=True)
        o = _kw(mod).apply(x, y=y, s=3.0)
        o.backward(mod.tensor([1.0, 5.0]))
        return _l(o), o.grad_fn.nig, _l(x.grad), _l(y.grad)

    assert run(ember) == run(torch)


@pytest.mark.parametrize("kw", [{"t": 1.0}, {"u": 1}, {"x": 1}], ids=["gap", "unknown", "twice"])
def test_old_style_keyword_errors(kw):
    def run(mod):
        x = mod.ones(2, requires_grad=True)
        _kw(mod).apply(x, x, **kw) if "x" not in kw else _kw(mod).apply(x, **kw)

    same_error(run, TypeError)


@pytest.mark.parametrize("pass_k", [True, False])
def test_new_style_keyword_only_forward_refused(pass_k):
    def run(mod):
        class KwOnly(mod.autograd.Function):
            @staticmethod
            def forward(x, *, k=2.0):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g

        x = mod.ones(2, requires_grad=True)
        KwOnly.apply(x, k=3.0) if pass_k else KwOnly.apply(x)

    assert same_error(run, TypeError) == "forward() got an unexpected keyword argument 'k'"


# ------------------------------------------------------------ gradients from backward
def test_complex_grad_for_real_input_refused():
    def run(mod):
        class C(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.to(mod.complex64)

        C.apply(mod.ones(2, 3, requires_grad=True)).sum().backward()

    assert "input_is_complex == grad_is_complex" in same_error(run, RuntimeError)


def test_backward_and_vjp_both_refused():
    def run(mod):
        class Both(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 3

        Both.apply(mod.ones(2, requires_grad=True)).sum().backward()

    assert "both 'backward' and 'vjp'" in same_error(run, RuntimeError)


def test_vjp_alone_is_the_backward():
    def run(mod):
        class V(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 3

        x = mod.ones(2, requires_grad=True)
        V.apply(x).backward(mod.tensor([1.0, 2.0]))
        return _l(x.grad)

    assert run(ember) == run(torch) == [3.0, 6.0]


# ------------------------------------------------------------ the nodes
def _tanh(mod):
    class Tanh(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.tanh()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * (1 - y * y)

    return Tanh


def test_custom_node_type_and_apply():
    def run(mod):
        x = mod.tensor([0.3, -0.7], requires_grad=True)
        gf = _tanh(mod).apply(x * 2).grad_fn
        base = mod.autograd.function.BackwardCFunction
        got = gf.apply(mod.tensor([1.0, 3.0]))  # backward's own result, one tensor
        return isinstance(gf, base), type(gf).__mro__[1].__name__, np.round(_l(got), 5).tolist()

    assert run(ember) == run(torch)


def test_custom_node_not_callable():
    def run(mod):
        _tanh(mod).apply(mod.ones(2, requires_grad=True)).grad_fn(mod.ones(2))

    assert same_error(run, TypeError) == "'TanhBackward' object is not callable"


def test_builtin_node_call():
    def run(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        w = mod.tensor([2.0, 5.0], requires_grad=True)
        a = (x * 3).grad_fn(mod.tensor([1.0, 4.0]))
        b = (x * w).grad_fn(mod.tensor([1.0, 4.0]))
        return [_l(t) for t in a], [_l(t) for t in b]

    assert run(ember) == run(torch)

    def bad(mod):
        (mod.ones(2, requires_grad=True) * 3).grad_fn(mod.ones(2), mod.ones(2))

    assert same_error(bad, TypeError) == "expected 1 arguments, got 2 instead"


def test_once_differentiable_node_name():
    def run(mod):
        class Cube(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            @mod.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x**2 * g

        x = mod.tensor([1.0, 2.0], requires_grad=True)
        o = Cube.apply(x)
        (gx,) = mod.autograd.grad((o * o).sum(), x, create_graph=True)
        return _l(gx), gx.grad_fn.name(), type(gx.grad_fn).__name__

    assert run(ember) == run(torch)


def test_nested_io_function_importable():
    for mod in (torch, ember):
        cls = mod.autograd.function.NestedIOFunction
        assert issubclass(cls, mod.autograd.Function)
        with pytest.raises(NotImplementedError):
            cls.forward_extended(None)


# ------------------------------------------------------------ forward AD
def _jvp_fn(mod, shape_bug=False):
    class J(mod.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])
            ctx.save_for_backward(inputs[0] * 5)

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            ctx.seen = len(ctx.saved_tensors)
            (x,) = ctx.saved_tensors
            return t[:2] if shape_bug else t * x.exp()

    return J


def _dual(mod, fn):
    fw = mod.autograd.forward_ad
    with fw.dual_level():
        x = mod.tensor([0.0, 1.0, 2.0])
        d = fw.make_dual(x, mod.tensor([1.0, 0.5, 0.25]))
        o = fn.apply(d)
        return np.round(_l(fw.unpack_dual(o).tangent), 4).tolist()


def test_jvp_reads_save_for_forward_tensors():
    assert _dual(ember, _jvp_fn(ember)) == _dual(torch, _jvp_fn(torch))


def test_jvp_tangent_of_wrong_shape_refused():
    msg = same_error(lambda mod: _dual(mod, _jvp_fn(mod, True)), RuntimeError)
    assert msg.startswith("Trying to set a forward gradient that has a different size")


@pytest.mark.parametrize("n", [1, 2])
def test_jvp_tangent_count(n):
    def run(mod):
        class NT(mod.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2, 5

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g, h):
                return g

            @staticmethod
            def jvp(ctx, t):
                return (t * 2, None)[:n] if n > 1 else t * 2

        fw = mod.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(mod.ones(2), mod.tensor([1.0, 3.0]))
            return _l(fw.unpack_dual(NT.apply(d)[0]).tangent)

    if n == 1:
        assert "invalid number of forward gradients" in same_error(run, RuntimeError)
    else:
        assert run(ember) == run(torch) == [2.0, 6.0]


def test_vmap_rule_and_generate_vmap_rule_refused():
    def run(mod):
        class BothV(mod.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x):
                return x**2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vmap(info, in_dims, x):
                return x**2, 0

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.func's jit deprecation noise
            mod.func.vmap(BothV.apply)(mod.ones(2, 2))

    assert "both generate_vmap_rule=True" in same_error(run, RuntimeError)


# ------------------------------------------------------------ grad_outputs count
@pytest.mark.parametrize("api", ["grad", "backward", "grad_none"])
def test_fewer_grad_outputs_than_outputs_refused(api):
    def run(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        outs = [x * 2, x * 3]
        if api == "grad":
            mod.autograd.grad(outs, [x], [mod.ones(2)])
        elif api == "grad_none":
            mod.autograd.grad(outs, [x], [])
        else:
            mod.autograd.backward(outs, [mod.ones(2)])

    assert "tensors and" in same_error(run, RuntimeError)


def test_more_grad_outputs_than_outputs_ignored():
    def run(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        (g,) = mod.autograd.grad([x * 2], [x], [mod.tensor([1.0, 3.0]), mod.ones(2)])
        return _l(g)

    assert run(ember) == run(torch)


def test_non_differentiable_input_returned_as_is():
    def run(mod):
        class NDIn(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_non_differentiable(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        o = NDIn.apply(y)
        res = [o.requires_grad, o is y, o.grad_fn is None, o._is_view()]
        o.add_(1)  # an alias: y sees the write and its version moves
        return res, y._version, _l(y)

    assert run(ember) == run(torch)


def _two(mod):
    class Two(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * 2, x * k

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3, None

    return Two


def test_custom_node_next_functions_skip_non_tensor_inputs():
    def run(mod):
        class F(mod.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b):
                return a * k + b

            @staticmethod
            def backward(ctx, g):
                return g, None, g

        o = F.apply(mod.ones(2, requires_grad=True), 3, mod.ones(2))
        return [(None if f is None else f.name(), n) for f, n in o.grad_fn.next_functions]

    assert run(ember) == run(torch)


def test_custom_node_missing_attribute_names_the_node():
    def run(mod):
        return _tanh(mod).apply(mod.ones(2, requires_grad=True)).grad_fn.nonexistent

    assert same_error(run, AttributeError) == (
        "'TanhBackward' object has no attribute 'nonexistent'"
    )


def test_saved_variables_deprecated():
    for mod in (torch, ember):
        gf = _tanh(mod).apply(mod.ones(2, requires_grad=True)).grad_fn
        with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated"):
            assert len(gf.saved_variables) == 1


def test_function_vmap_base_refuses():
    def run(mod):
        mod.autograd.Function.vmap(None, None)

    assert "override the vmap staticmethod" in same_error(run, NotImplementedError)


# ------------------------------------------------------------ hooks of outputs given no grad
def test_tensor_hook_of_output_given_no_grad_sees_none():
    def run(mod):
        seen = []
        x = mod.ones(2, requires_grad=True)
        p, q = _two(mod).apply(x, 3.0)
        q.register_hook(lambda g: seen.append(g))
        q.retain_grad()
        (p * mod.tensor([1.0, 5.0])).sum().backward()
        return seen, q.grad, _l(x.grad)

    assert run(ember) == run(torch)


def test_tensor_hook_cannot_replace_a_none_grad():
    def run(mod):
        x = mod.ones(2, requires_grad=True)
        p, q = (x * 2).unbind(0)
        q.register_hook(lambda g: mod.ones(()))
        (p * 3).backward()

    same_error(run, RuntimeError)


@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook_on_custom_outputs(mode):
    def run(mod):
        seen = []

        def fn(g):
            seen.append([_l(t) for t in g] if mode == "all" else _l(g))

        x = mod.ones(2, requires_grad=True)
        p, q = _two(mod).apply(x, 3.0)
        mod.autograd.graph.register_multi_grad_hook((p, q), fn, mode=mode)
        p.sum().backward(retain_graph=True)
        (q.sum() * 2).backward(retain_graph=True)
        (p.sum() + q.sum()).backward()
        return seen

    assert run(ember) == run(torch)


def test_multi_grad_hook_not_fired_when_the_root_is_hooked():
    def run(mod):
        seen = []
        x = mod.ones(2, requires_grad=True)
        p, q = (x * 2).unbind(0)
        mod.autograd.graph.register_multi_grad_hook((p, q), lambda g: seen.append(len(g)))
        p.backward(retain_graph=True)
        (p * 1).backward()
        return seen

    assert run(ember) == run(torch)


# ------------------------------------------------------------ the gradient accumulator node
def test_accumulate_grad_node_identity_and_metadata():
    def run(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        acc = _tanh(mod).apply(x).grad_fn.next_functions[0][0]
        acc.metadata["k"] = 1
        again = (x * 2).grad_fn.next_functions[0][0]
        edge = mod.autograd.graph.get_gradient_edge(x).node
        return again is acc, edge is acc, again.metadata, acc.variable is x

    assert run(ember) == run(torch)


def test_accumulate_grad_post_hook():
    def run(mod):
        seen = []
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        o = _tanh(mod).apply(x * 2)
        acc = o.grad_fn.next_functions[0][0].next_functions[0][0]
        h = acc.register_hook(lambda gi, go: seen.append((len(gi), np.round(_l(go[0]), 5))))
        o.backward(mod.tensor([1.0, 3.0]), retain_graph=True)
        h.remove()
        o.backward(mod.tensor([1.0, 3.0]))
        return [(n, g.tolist()) for n, g in seen], np.round(_l(x.grad), 5).tolist()

    assert run(ember) == run(torch)

    def bad(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        acc = (x * 2).grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: (mod.ones(2),))
        (x * 2).sum().backward()

    assert "(got 1, but expected 0)" in same_error(bad, RuntimeError)


def test_function_ctx_made_directly():
    def run(mod):
        ctx = mod.autograd.function.FunctionCtx()
        ctx.save_for_backward(mod.ones(2))
        ctx.save_for_forward(mod.ones(1))
        ctx.set_materialize_grads(False)
        got = [hasattr(ctx, a) for a in ("saved_tensors", "needs_input_grad", "dirty_tensors")]
        return got, len(ctx.saved_for_forward), ctx.materialize_grads

    assert run(ember) == run(torch)


def _once(mod):
    class Two(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        @mod.autograd.function.once_differentiable
        def backward(ctx, g):
            return g * 2, g * 3

    return Two


def test_once_differentiable_one_error_node_over_stand_in_leaves():
    def run(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = mod.tensor([1.0, 2.0], requires_grad=True)
        o = _once(mod).apply(x, y)
        gx, gy = mod.autograd.grad((o * o).sum(), (x, y), create_graph=True)
        nf = gx.grad_fn.next_functions
        return (
            gx.grad_fn is gy.grad_fn,
            (gx.output_nr, gy.output_nr),
            [type(f).__name__ for f, _ in nf],
            [f.variable is x for f, _ in nf],
            mod.autograd.grad(gx.sum(), x, allow_unused=True),
        )

    assert run(ember) == run(torch)

    def again(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        o = _once(mod).apply(x, x * 1)
        (gx,) = mod.autograd.grad((o * o).sum(), x, create_graph=True)
        gx.sum().backward()

    assert "marked with @once_differentiable" in same_error(again, RuntimeError)
