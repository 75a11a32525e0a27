"""Parity regressions found by the twenty-sixth wave, a method-by-method sweep of the nn.Module
API and the containers (attribute rules, registration checks, get/set_submodule, the named_*
iterators, state_dict and load_state_dict, conversions, repr, copying; Sequential, ModuleList,
ModuleDict, ParameterList, ParameterDict, Identity/Flatten/Unflatten; torch is the oracle):
``Tensor.requires_grad_`` and so ``Module.requires_grad_`` taking any truthy value (torch's
binding takes only a bool: a TypeError), ``Module.to_empty()`` without its keyword-only
``device`` (torch's TypeError, where ember moved nothing), ``Module.share_memory()`` (a no-op
here; torch moves parameters, gradients and buffers into shared memory, and refuses a meta
tensor, as ``Tensor.share_memory_`` does), ``Module.__getstate__`` (ember handed out the live
``__dict__``, so a subclass dropping entries from the state deleted them from the module; torch
returns a copy), ``torch.typename`` of a class, a function or an instance of a C type (torch
names the object itself, or an instance's class with its module: ``collections.OrderedDict``, so
"... is not a Module subclass" said ``OrderedDict``), and ``torch.__future__.set_overwrite_module_params_on_conversion(True)``
(ignored: ember kept each Parameter object, torch assigns new ones and leaves the old ones, with
their gradients, unconverted)."""

from __future__ import annotations

import collections

import ember
import pytest

torch = pytest.importorskip("torch")

LIBS = [torch, ember]


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the oracle's type and text are compared)
        return type(e), str(e)
    return None


# ------------------------------------------------------------ requires_grad_ takes only a bool
@pytest.mark.parametrize("value", [1, 0, None, 1.0, "yes"])
def test_tensor_requires_grad_rejects_non_bool(value):
    got = [_err(lambda T=T: T.ones(2).requires_grad_(value)) for T in LIBS]
    assert got[0] is not None and got[0][0] is TypeError
    assert got[1] == got[0]


@pytest.mark.parametrize("value", [1, None])
def test_module_requires_grad_rejects_non_bool(value):
    got = [_err(lambda T=T: T.nn.Linear(2, 2).requires_grad_(value)) for T in LIBS]
    assert got[0] is not None and got[1] == got[0]


def test_requires_grad_bool_still_works():
    for T in LIBS:
        m = T.nn.Linear(2, 2).requires_grad_(False)
        assert [p.requires_grad for p in m.parameters()] == [False, False]
        assert T.ones(2).requires_grad_().requires_grad is True


# ------------------------------------------------------------ to_empty: device is required
def test_to_empty_requires_device():
    got = [_err(lambda T=T: T.nn.Linear(2, 2).to_empty()) for T in LIBS]
    assert got[0][0] is TypeError and got[1][0] is TypeError
    assert "to_empty() missing 1 required keyword-only argument: 'device'" in got[1][1]
    m = ember.nn.Linear(2, 3)
    assert m.to_empty(device="cpu") is m and tuple(m.weight.shape) == (3, 2)


# ------------------------------------------------------------ share_memory moves into shared memory
def test_share_memory_shares_params_grads_buffers():
    res = []
    for T in LIBS:
        m = T.nn.BatchNorm1d(3)
        m(T.randn(4, 3)).pow(2).sum().backward()
        w = m.weight
        assert m.share_memory() is m
        assert m.weight is w  # the same Parameter, its data moved
        tensors = [*m.parameters(), *m.buffers(), m.weight.grad, m.bias.grad]
        res.append([t.is_shared() for t in tensors])
    assert res[0] == res[1] == [True] * 7


def test_share_memory_keeps_values():
    m = ember.nn.Linear(3, 2)
    before = m.weight.detach().clone()
    m.share_memory()
    assert ember.equal(m.weight.detach(), before)
    m.weight.data.mul_(2)
    assert ember.allclose(m.weight.detach(), before * 2)


# ------------------------------------------------------------ typename
class _Outer:
    class Inner:
        pass


def _f():
    pass


def _objects(T):
    return [
        3,
        "s",
        None,
        [1],
        collections.OrderedDict(),
        T.nn.Linear,
        T.nn.Linear(1, 1),
        _Outer.Inner,
        _Outer.Inner(),
        _f,
        len,
        int,
        T.ones(1, dtype=T.float64),
        T.nn.Parameter(T.ones(1)),
    ]


def test_typename_matches_torch():
    want = [torch.typename(o).replace("torch.nn", "ember.nn") for o in _objects(torch)]
    assert [ember.typename(o) for o in _objects(ember)] == want


def test_not_a_module_subclass_names_the_qualified_type():
    def mk(T):
        return lambda: T.nn.Sequential(collections.OrderedDict(), T.nn.ReLU())

    got = [_err(mk(T)) for T in LIBS]
    assert got[0] == (TypeError, "collections.OrderedDict is not a Module subclass")
    assert got[1] == got[0]


# ------------------------------------------------------------ overwrite_module_params_on_conversion
@pytest.fixture
def overwrite():
    for T in LIBS:
        T.__future__.set_overwrite_module_params_on_conversion(True)
    yield
    for T in LIBS:
        T.__future__.set_overwrite_module_params_on_conversion(False)


def _convert(T):
    m = T.nn.Linear(2, 2)
    m(T.ones(1, 2)).sum().backward()
    w, g = m.weight, m.weight.grad
    m.double()
    return (
        m.weight is w,
        type(m.weight).__name__,
        str(m.weight.dtype).split(".")[-1],
        str(w.dtype).split(".")[-1],
        m.weight.requires_grad,
        m.weight.grad is g,
        str(m.weight.grad.dtype).split(".")[-1],
        str(w.grad.dtype).split(".")[-1],
    )


def test_overwrite_on_conversion_assigns_new_parameters(overwrite):
    got = [_convert(T) for T in LIBS]
    assert got[0] == (False, "Parameter", "float64", "float32", True, False, "float64", "float32")
    assert got[1] == got[0]


def test_overwrite_on_conversion_noop_and_flags(overwrite):
    res = []
    for T in LIBS:
        m = T.nn.Linear(2, 2)
        m(T.ones(1, 2)).sum().backward()
        w, g = m.weight, m.weight.grad
        m.bias.requires_grad_(False)
        m.float()  # no dtype change: still new Parameter objects over the same memory
        res.append(
            (
                m.weight is w,
                m.weight.data_ptr() == w.data_ptr(),
                m.weight.grad is g,
                m.bias.requires_grad,
                type(m.bias).__name__,
            )
        )
    assert res[0] == (False, True, True, False, "Parameter")
    assert res[1] == res[0]


def test_overwrite_off_keeps_parameter_objects():
    res = []
    for T in LIBS:
        m = T.nn.Linear(2, 2)
        w = m.weight
        m.double()
        res.append((m.weight is w, str(w.dtype).split(".")[-1]))
    assert res[0] == res[1] == (True, "float64")


# ------------------------------------------------------------ __getstate__ is a copy
def test_getstate_is_a_shallow_copy():
    for T in LIBS:

        class Cached(T.nn.Linear):
            def __getstate__(self):
                state = super().__getstate__()
                del state["cache"]  # not pickled
                return state

        m = Cached(2, 2)
        m.cache = [1]
        st = m.__getstate__()
        assert st is not m.__dict__ and st["_parameters"] is m._parameters
        assert m.cache == [1]  # the live module keeps it
        assert "cache" not in st


def test_share_memory_of_meta_refused():
    def mk(T, module):
        if module:
            return lambda: T.nn.Linear(2, 2, device="meta").share_memory()
        return lambda: T.ones(2, device="meta").share_memory_()

    for module in (False, True):
        got = [_err(mk(T, module)) for T in LIBS]
        assert got[0] == (RuntimeError, "_share_fd_: only available on CPU")
        assert got[1] == got[0]
