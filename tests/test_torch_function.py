"""The ``__torch_function__`` protocol (core/torch_function.py), with torch as the oracle.

Each scenario is one function of the library (``ember`` or ``torch``) that returns plain Python
values (type names, lists, messages); the two answers must be equal.
"""

from __future__ import annotations

import functools
import io
import pickle
from typing import ClassVar

import ember
import numpy as np
import pytest
from ember.core.torch_function import PLAIN, _disabled_torch_function_impl

torch = pytest.importorskip("torch")


def _name(x) -> str:
    return type(x).__name__


def _both(scenario):
    got, want = scenario(ember), scenario(torch)
    assert got == want
    return got


def _subclass(lib):
    class M(lib.Tensor):
        pass

    return M


# ---------------------------------------------------------------------- the default protocol
def test_subclass_results_keep_the_subclass():
    def scenario(lib):
        M = _subclass(lib)
        a = lib.tensor([[1.0, 5.0], [3.0, -2.0]]).as_subclass(M)
        p = lib.tensor([[0.5, 1.0], [2.0, 4.0]])
        r = lib.max(a, 1)
        results = [
            a + 1, 1 + a, a * p, p * a, 2 - a, a**2, -a, a @ p, p @ a, lib.add(a, p),
            a.sum(), a.sum(0, keepdim=True), lib.relu(a), a.exp(), a.clone(), a.view(4),
            a.transpose(0, 1), a.unsqueeze(0), lib.cat([p, a]), lib.stack([a, p]),
            a > 0, lib.where(a > 0, a, p), a.masked_fill(a > 2, 0.0), a.softmax(-1),
        ]  # fmt: skip
        out = [(_name(t), np.round(t.detach().numpy().astype(float), 5).tolist()) for t in results]
        out.append((_name(r), _name(r.values), _name(r.indices), r.values.tolist()))
        parts = lib.split(a, 1)
        out.append((_name(parts), [_name(q) for q in parts]))
        out.append((_name(a.chunk(2)[1]), _name(a.shape), a.sum().item()))
        return out

    _both(scenario)


def test_default_torch_function_classmethod():
    def scenario(lib):
        M = _subclass(lib)
        a = lib.ones(2).as_subclass(M)
        tf = lib.Tensor.__torch_function__
        return [
            _name(M.__torch_function__(lib.add, (M,), (a, 1), {})),
            _name(M.__torch_function__(lib.add, (M,), (a, 1))),
            _name(tf(lib.add, (M,), (a, 1), {})),  # cls Tensor: results stay as they are
            M.__torch_function__(lib.add, (lib.Tensor, int), (a, 1), {}) is NotImplemented,
            M.__torch_function__.__name__,
        ]

    _both(scenario)


def test_parameter_and_internal_subclasses_never_dispatch():
    def scenario(lib):
        M = _subclass(lib)
        p = lib.nn.Parameter(lib.ones(2))
        a = lib.ones(2).as_subclass(M)
        return [
            lib.nn.Parameter.__torch_function__ is lib._C._disabled_torch_function_impl,
            _name(p * 2), _name(p.exp()), _name(lib.add(p, a)), _name(a * p), _name(p + a),
            lib.overrides.has_torch_function((p,)),
        ]  # fmt: skip

    _both(scenario)
    from ember.core.quantized import QuantizedTensor
    from ember.core.sparse import SparseTensor
    from ember.nn.attention.bias import CausalBias, causal_lower_right

    for cls in (SparseTensor, QuantizedTensor, CausalBias):
        assert cls.__torch_function__ is _disabled_torch_function_impl
    # ember's CausalBias is the materialised mask: ops on it give plain Tensors (torch's result
    # would be a CausalBias that lacks its attributes, see the report)
    b = causal_lower_right(2, 3)
    assert type(b.logical_not()) is ember.Tensor
    assert CausalBias in PLAIN
    s = ember.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    ts = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    got = ember.mm(s, ember.ones(2, 2))
    assert type(got) is ember.Tensor
    np.testing.assert_allclose(got.numpy(), torch.mm(ts, torch.ones(2, 2)).numpy())
    q = ember.quantize_per_tensor(ember.tensor([0.5, 1.0]), 0.1, 0, ember.quint8)
    assert type(q.dequantize()) is ember.Tensor


def test_as_subclass_of_a_leaf_passes_gradients_to_it():
    def scenario(lib):
        M = _subclass(lib)
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.as_subclass(M)
        (y * lib.tensor([1.0, -2.0, 0.5])).sum().backward()
        with lib.no_grad():
            z = x.as_subclass(M)
        return [_name(y), y.requires_grad, y.is_leaf, x.grad.tolist(), z.requires_grad, z.is_leaf]

    _both(scenario)
    with pytest.raises(TypeError, match="as_subclass"):
        ember.ones(1).as_subclass(int)


def test_autograd_through_subclass_results():
    def scenario(lib):
        M = _subclass(lib)
        w = lib.tensor([1.0, 2.0, 3.0]).as_subclass(M).requires_grad_()
        out = (w * w).sin()
        out.backward(lib.tensor([1.0, -2.0, 0.5]))
        return [
            _name(out), out.requires_grad, out.grad_fn is not None, w.is_leaf,
            _name(w.grad), np.round(w.grad.numpy(), 5).tolist(), np.round(out.detach().numpy(), 5).tolist(),
        ]  # fmt: skip

    _both(scenario)


def test_named_subclass_keeps_names():
    # torch 2.13 has no named tensors: ember's own rule (names flow as for a Tensor)
    class M(ember.Tensor):
        pass

    a = ember.ones(2, 3, names=("N", "C")).as_subclass(M)
    s = a.sum("C")
    assert type(s) is M and s.names == ("N",)
    assert (a * 2).names == ("N", "C") and type(a * 2) is M
    assert a.refine_names("N", "C").names == ("N", "C")


def test_pickle_and_save_keep_the_subclass():
    def scenario(lib):
        M = _subclass(lib)
        globals()["_PickledM"] = M  # picklable by reference, as a module-level class
        M.__qualname__ = M.__name__ = "_PickledM"
        m = lib.tensor([1.0, 2.0]).as_subclass(M)
        again = pickle.loads(pickle.dumps(m))
        buf = io.BytesIO()
        lib.save(m, buf)
        buf.seek(0)
        loaded = lib.load(buf, weights_only=False)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            lib.load(buf)  # weights_only: a subclass is not an allowed global
        return [_name(again), again.tolist(), _name(loaded), loaded.tolist()]

    _both(scenario)


# ---------------------------------------------------------------------- overriding subclasses
def _logging(lib):
    class LoggingTensor(lib.Tensor):
        calls: ClassVar[list] = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    return LoggingTensor


def test_logging_subclass_sees_each_call():
    def scenario(lib):
        L = _logging(lib)
        x = lib.arange(6.0).reshape(2, 3).as_subclass(L)
        out = []
        for f in (
            lambda t: lib.sum(lib.relu(t) * 2, 1),
            lambda t: t.abs().mean(),
            lambda t: lib.matmul(t, t.transpose(0, 1)),
            lambda t: t.masked_fill(t > 2, 1.0).softmax(-1),
            lambda t: -t.clone().unsqueeze(0).permute(1, 0, 2),
            lambda t: t.max(1),
        ):
            L.calls.clear()
            r = f(x)
            out.append((_name(r), list(L.calls)))
        return out

    _both(scenario)


def test_logging_subclass_model_forward():
    # ember's nn.Linear is addmm and mse_loss a composite of sub/mul/mean: a subclass sees those
    # registry ops where torch reports linear and mse_loss (result types match)
    def run(lib):
        lib.manual_seed(0)
        L = _logging(lib)
        model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))
        x = lib.randn(5, 4).as_subclass(L)
        L.calls.clear()
        y = model(x)
        calls = list(L.calls)
        loss = lib.nn.functional.mse_loss(y, lib.zeros(5, 2))
        loss.backward()
        return _name(y), _name(loss), _name(model[0].weight.grad), calls

    got, want = run(ember), run(torch)
    assert got[:3] == want[:3] == ("LoggingTensor", "LoggingTensor", "Tensor")
    assert want[3] == ["linear", "relu", "linear"]
    assert got[3] == ["addmm", "relu", "addmm"]


def test_unwrapping_subclass():
    def scenario(lib):
        class Unwrapping(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                with lib._C.DisableTorchFunctionSubclass():
                    out = func(*args, **(kwargs or {}))
                    if func is lib.Tensor.clone:
                        return out.as_subclass(cls)
                return out

        u = lib.ones(3).as_subclass(Unwrapping)
        return [_name(u + 1), _name(u.clone()), _name(lib.exp(u)), (u * 3).tolist()]

    _both(scenario)


def test_dispatch_order_and_failure():
    def scenario(lib):
        A = _subclass(lib)

        class B(A):
            pass

        class C(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        a, b, c = (lib.ones(2).as_subclass(k) for k in (A, B, C))
        out = [_name(a + b), _name(b + a), _name(lib.add(a, b)), _name(lib.cat([a, b]))]
        for f in (lambda: lib.add(a, c), lambda: lib.mul(c, 2.0)):
            with pytest.raises(TypeError) as e:
                f()
            out.append(str(e.value))
        return out

    _both(scenario)
    # known difference: torch's reflected dunder answers NotImplemented too ("unsupported
    # operand type(s) for +"); ember's __radd__ raises the dispatch error
    C = type("C", (ember.Tensor,), {"__torch_function__": classmethod(lambda *a: NotImplemented)})
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.add'"):
        ember.ones(1).as_subclass(C) + ember.ones(1).as_subclass(_subclass(ember))


# ---------------------------------------------------------------------- non-Tensor tensor-likes
def _scalar_tensor(lib):
    """The ScalarTensor of torch's "Extending torch with a Tensor-like type"."""
    handled = {}

    class ScalarTensor:
        def __init__(self, n, value):
            self._N = n
            self._value = value

        def __repr__(self):
            return f"ScalarTensor(N={self._N}, value={self._value})"

        def tensor(self):
            return self._value * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if func not in handled or not all(
                issubclass(t, (lib.Tensor, ScalarTensor)) for t in types
            ):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def implements(torch_function):
        def decorator(func):
            functools.update_wrapper(func, torch_function)
            handled[torch_function] = func
            return func

        return decorator

    @implements(lib.mean)
    def mean(input):
        return float(input._value) / input._N

    def ensure_tensor(data):
        return data.tensor() if isinstance(data, ScalarTensor) else lib.as_tensor(data)

    @implements(lib.add)
    def add(input, other):
        try:
            if input._N == other._N:
                return ScalarTensor(input._N, input._value + other._value)
            raise ValueError("Shape mismatch!")
        except AttributeError:
            return lib.add(ensure_tensor(input), ensure_tensor(other))

    return ScalarTensor


def test_scalar_tensor_docs_example():
    def scenario(lib):
        st = _scalar_tensor(lib)
        d, s = st(5, 2), st(2, 2)
        t = lib.tensor([[1, 1], [1, 1]])
        out = [lib.mean(d), repr(lib.add(s, s)), lib.add(s, t).tolist(), lib.add(t, s).tolist()]
        out += [lib.overrides.has_torch_function((s,)), lib.overrides.has_torch_function((t,))]
        for f in (lambda: lib.mul(s, 3), lambda: lib.mul(t, s), lambda: t + s):
            with pytest.raises(TypeError) as e:
                f()
            out.append(str(e.value))
        with lib._C.DisableTorchFunctionSubclass():
            out.append(lib.overrides.has_torch_function((s,)))
            with pytest.raises(TypeError) as e:
                lib.mean(d)
            out.append(str(e.value))
        return out

    _both(scenario)


def test_tensor_like_sees_args_and_kwargs():
    def scenario(lib):
        seen = []

        class Diagonal:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(
                    ([_name(a) for a in args], sorted(kwargs or {}), [k.__name__ for k in types])
                )
                return "handled"

        d = Diagonal()
        one = lib.ones(2)
        out = [lib.sum(d), lib.sum(d, dim=0), one * d, lib.mul(one, d), lib.sub(one, d, alpha=2)]
        return out, seen

    _both(scenario)


def test_like_factories_dispatch_on_their_input():
    # torch dispatches zeros_like & co on the input: a subclass gets its own type back, a
    # logging subclass sees the factory with its arguments, a tensor-like takes the call
    def scenario(lib):
        M = _subclass(lib)
        seen = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append((func.__name__, len(args), sorted(kwargs or {})))
                return super().__torch_function__(func, types, args, kwargs or {})

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("handled", func.__name__, len(args))

        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]]).as_subclass(M)
        made = [
            lib.zeros_like(a), lib.ones_like(a, dtype=lib.float64), lib.empty_like(a),
            lib.full_like(a, 7.0), lib.rand_like(a), lib.randn_like(a), lib.randint_like(a, 3),
            lib.randint_like(a, 2, 5),
        ]  # fmt: skip
        out = [(_name(t), t.dtype == lib.float64, tuple(t.shape)) for t in made]
        out.append(lib.full_like(a, 7.0).tolist())
        g = lib.tensor([1.0, 2.0]).as_subclass(Logged)
        lib.zeros_like(g, dtype=lib.float64)
        lib.full_like(g, 1.0)
        lib.randint_like(g, 0, 4)
        p = lib.nn.Parameter(lib.ones(2))
        out += [seen, lib.zeros_like(Like()), lib.rand_like(Like()), _name(lib.zeros_like(p))]
        return out

    _both(scenario)


def test_torch_function_mode_is_refused():
    class Mode(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with pytest.raises(NotImplementedError, match="TorchFunctionMode is not supported"), Mode():
        pass


def test_disable_torch_function_contexts():
    def scenario(lib):
        M = _subclass(lib)
        a = lib.ones(2).as_subclass(M)
        out = []
        for ctx in (lib._C.DisableTorchFunctionSubclass, lib._C.DisableTorchFunction):
            with ctx():
                out.append(
                    (_name(a + 1), _name(lib.exp(a)), lib.overrides.has_torch_function((a,)))
                )
            out.append(_name(a + 1))
        out.append(lib.overrides.has_torch_function((a,)))
        out.append(lib.overrides.has_torch_function((lib.ones(1),)))
        return out

    _both(scenario)


def test_python_level_methods_dispatch_on_subclasses():
    # Tensor methods written in Python get a dispatching wrapper on a dispatching subclass
    # (plain Tensors keep calling them directly)
    def scenario(lib):
        L = _logging(lib)
        x = lib.arange(6.0).reshape(2, 3).as_subclass(L)
        out = []
        for f in (
            lambda t: t[0],
            lambda t: t.detach(),
            lambda t: t.reshape(6),
            lambda t: t.flatten(),
            lambda t: t.to(lib.float64),
            lambda t: t.new_zeros(2),
            lambda t: t.contiguous(),
            lambda t: t.view_as(t),
            lambda t: t.type_as(t),
            lambda t: t.tolist(),
            lambda t: t.sum().item(),
            lambda t: t.clone().zero_(),
        ):
            L.calls.clear()
            r = f(x)
            out.append((_name(r), list(L.calls)))
        y = x.clone()
        L.calls.clear()
        y[0] = 5.0
        out.append((_name(y), y.tolist()))
        return out

    got = scenario(ember)
    want = scenario(torch)
    # ember's Tensor.__getitem__ is a function named _getitem (the same object as
    # ember.Tensor.__getitem__, so tables keyed on it match)
    assert got[0] == ("LoggingTensor", ["_getitem"]) and want[0] == (
        "LoggingTensor",
        ["__getitem__"],
    )
    assert got[1:] == want[1:]
    assert ember.nn.Parameter.__getitem__ is ember.Tensor.__getitem__  # no wrapper there


def test_handled_functions_reach_public_wrappers():
    # a private registry op behind a public function is dispatched as that function
    def scenario(lib):
        seen = []

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(func)
                return func.__name__

        d = Like()
        one = lib.ones(2)
        got = [lib.cat([one, d]), lib.where(one > 0, one, d)]
        return got, [f is g for f, g in zip(seen, (lib.cat, lib.where))]

    assert _both(scenario) == (["cat", "where"], [True, True])


def test_docs_logging_tensor_repr_and_kwargs():
    # the LoggingTensor of torch's "Subclassing torch.Tensor": it logs args' reprs, and skips
    # Tensor.__repr__ itself (which dispatches too) to avoid recursing
    def scenario(lib):
        calls = []

        class LoggingTensor(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func is not lib.Tensor.__repr__:
                    calls.append(f"func: {func.__name__}, args: {args!r}, kwargs: {kwargs!r}")
                else:
                    calls.append(("repr", kwargs))
                if kwargs is None:
                    kwargs = {}
                return super().__torch_function__(func, types, args, kwargs)

        x = lib.tensor([1.5, -2.0]).as_subclass(LoggingTensor)
        y = x * 2
        shown = [repr(y), str(y), f"{y}", lib.add(x, 1, alpha=2).tolist()]
        return shown, calls

    _both(scenario)
