"""ember.version, ember.testing, ember.func, ember.jit and ember.cpu.amp against torch's."""

from __future__ import annotations

import math
import subprocess
import sys
import types
import warnings

import ember
import numpy as np
import pytest
from harness import assert_same, needs_torch, raises_like_torch, torch

# ------------------------------------------------------------------ version


def test_version_attributes():
    v = ember.version
    assert v.__version__ == ember.__version__
    assert isinstance(v.git_version, str) and v.debug is False and v.hip is None
    assert v.cuda is None or isinstance(v.cuda, str)


def test_version_matches_pyproject():
    import pathlib

    import tomllib

    root = pathlib.Path(ember.__file__).parent
    meta = tomllib.loads((root / "pyproject.toml").read_text())
    assert ember.__version__ == meta["project"]["version"]


def test_version_cuda_is_lazy_and_spelled_like_torch(monkeypatch):
    out = subprocess.run(
        [sys.executable, "-c", ("import sys, ember; ember.version.debug; "
         "print('cupy' in sys.modules)")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.strip() == "False"  # importing ember (and ember.version) leaves cupy alone
    fake = types.SimpleNamespace(
        cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(runtimeGetVersion=lambda: 13000))
    )
    monkeypatch.setattr(ember.core.device, "is_cuda_available", lambda: True)
    monkeypatch.setattr(ember.core.device, "cupy", lambda: fake)
    monkeypatch.setattr(ember.version, "_cuda", ember.version._UNSET)
    assert ember.version.cuda == "13.0"
    monkeypatch.setattr(ember.version, "_cuda", ember.version._UNSET)
    fake.cuda.runtime.runtimeGetVersion = lambda: 12040
    assert ember.version.cuda == "12.4"
    monkeypatch.setattr(ember.core.device, "is_cuda_available", lambda: False)
    monkeypatch.setattr(ember.version, "_cuda", ember.version._UNSET)
    assert ember.version.cuda is None


# ------------------------------------------------------------------ testing.assert_close


def _t(m, v, **kw):
    return m.tensor(v, **kw)


def _ac(*args, **kw):
    return lambda m: m.testing.assert_close(*(a(m) if callable(a) else a for a in args), **kw)


NAN, INF = math.nan, math.inf
CLOSE = {
    "f32 exact": _ac(lambda m: _t(m, [1.0, 2.0, 3.0]), lambda m: _t(m, [1.0, 2.0, 3.0])),
    "f32 within": _ac(lambda m: _t(m, [1.0, 2.0, 3.0]), lambda m: _t(m, [1.0, 2.000001, 3.0])),
    "f32 off": _ac(lambda m: _t(m, [1.0, 2.0, 3.0]), lambda m: _t(m, [1.0, 2.1, 3.0])),
    "f32 boundary in": _ac(lambda m: _t(m, [100.0]), lambda m: _t(m, [100.0 + 1.3e-4])),
    "f32 boundary out": _ac(lambda m: _t(m, [100.0]), lambda m: _t(m, [100.0 + 1.6e-4 + 1e-5])),
    "f64 in": _ac(lambda m: _t(m, [1.0], dtype=m.float64), lambda m: _t(m, [1.0 + 1.5e-7], dtype=m.float64)),
    "f64 out": _ac(lambda m: _t(m, [1.0], dtype=m.float64), lambda m: _t(m, [1.0 + 3e-7], dtype=m.float64)),
    "f16 in": _ac(lambda m: _t(m, [1.0, 2.0], dtype=m.float16), lambda m: _t(m, [1.0, 2.001], dtype=m.float16)),
    "f16 out": _ac(lambda m: _t(m, [1.0, 2.0], dtype=m.float16), lambda m: _t(m, [1.0, 2.01], dtype=m.float16)),
    "bf16 in": _ac(lambda m: _t(m, [1.0, 2.0], dtype=m.bfloat16), lambda m: _t(m, [1.0, 2.02], dtype=m.bfloat16)),
    "bf16 out": _ac(lambda m: _t(m, [1.0, 2.0], dtype=m.bfloat16), lambda m: _t(m, [1.0, 2.1], dtype=m.bfloat16)),
    "2d": _ac(lambda m: _t(m, [[1.0, 2.0], [3.0, 4.0]]), lambda m: _t(m, [[1.0, 2.0], [3.0, 5.0]])),
    "zero expected": _ac(lambda m: _t(m, [0.0, 1.0]), lambda m: _t(m, [1.0, 0.0])),
    "0-d": _ac(lambda m: _t(m, 1.0), lambda m: _t(m, 2.0)),
    "0-d int": _ac(lambda m: _t(m, 3), lambda m: _t(m, 4)),
    "int": _ac(lambda m: _t(m, [1, 2, 3]), lambda m: _t(m, [1, 5, 3])),
    "int tol in": _ac(lambda m: _t(m, [1, 2, 3]), lambda m: _t(m, [1, 3, 3]), rtol=0, atol=1),
    "int tol out": _ac(lambda m: _t(m, [1, 2, 3]), lambda m: _t(m, [1, 4, 0]), rtol=0.1, atol=1),
    "uint8": _ac(lambda m: _t(m, [1, 200], dtype=m.uint8), lambda m: _t(m, [2, 3], dtype=m.uint8)),
    "bool": _ac(lambda m: _t(m, [True, False]), lambda m: _t(m, [True, True])),
    "complex": _ac(lambda m: _t(m, [1 + 1j, 2 + 0j]), lambda m: _t(m, [1 + 1j, 2 + 1e-3j])),
    "nan": _ac(lambda m: _t(m, [1.0, NAN]), lambda m: _t(m, [1.0, NAN])),
    "nan equal_nan": _ac(lambda m: _t(m, [1.0, NAN]), lambda m: _t(m, [1.0, NAN]), equal_nan=True),
    "nan vs number": _ac(lambda m: _t(m, [1.0, NAN, 3.0]), lambda m: _t(m, [2.0, 1.0, 3.0])),
    "inf": _ac(lambda m: _t(m, [INF]), lambda m: _t(m, [INF])),
    "inf -inf": _ac(lambda m: _t(m, [INF, 1.0]), lambda m: _t(m, [-INF, 1.0])),
    "dtype": _ac(lambda m: _t(m, [1.0]), lambda m: _t(m, [1.0], dtype=m.float64)),
    "dtype unchecked": _ac(lambda m: _t(m, [1.0]), lambda m: _t(m, [1.0], dtype=m.float64), check_dtype=False),
    "promoted mismatch": _ac(lambda m: _t(m, [1, 2]), lambda m: _t(m, [1.0, 2.5]), check_dtype=False),
    "shape": _ac(lambda m: _t(m, [1.0]), lambda m: _t(m, [1.0, 2.0])),
    "stride": _ac(lambda m: _t(m, [[1.0, 2.0], [3.0, 4.0]]).t().contiguous(),
                  lambda m: _t(m, [[1.0, 2.0], [3.0, 4.0]]).t(), check_stride=True),
    "explicit tol in": _ac(lambda m: _t(m, [1.0, 2.0]), lambda m: _t(m, [1.0, 2.2]), rtol=0.1, atol=0),
    "explicit zero tol": _ac(lambda m: _t(m, [1.0, 2.0]), lambda m: _t(m, [1.0, 2.2]), rtol=0, atol=0),
    "only rtol": _ac(lambda m: _t(m, [1.0]), lambda m: _t(m, [1.0]), rtol=1e-3),
    "float scalars in": _ac(1.0, 1.0 + 1e-8),
    "float scalars out": _ac(1.0, 1.1),
    "int vs float": _ac(1, 1.0),
    "ints": _ac(1, 2),
    "bools": _ac(True, False),
    "none": _ac(None, 1),
    "numpy arrays": _ac(np.array([1.0, 2.0]), np.array([1.0, 2.5])),
    "numpy scalars": _ac(np.float32(1.0), np.float32(1.0)),
    "nested": _ac(lambda m: [_t(m, [1.0]), {"a": _t(m, [2.0]), "b": 3}],
                  lambda m: [_t(m, [1.0]), {"a": _t(m, [2.5]), "b": 3}]),
    "tuple vs list": _ac(lambda m: (_t(m, [1.0]),), lambda m: [_t(m, [1.0])]),
    "dict keys": _ac({"a": 1}, {"b": 1}),
    "lengths": _ac([1, 2], [1]),
    "tensor vs list": _ac(lambda m: _t(m, [1.0]), [1.0]),
    "msg str": _ac(lambda m: _t(m, [1.0]), lambda m: _t(m, [2.0]), msg="boom"),
    "msg callable": _ac(lambda m: [_t(m, [1.0]), _t(m, [1.0, 2.0])],
                        lambda m: [_t(m, [1.0]), _t(m, [3.0, 2.0])], msg=lambda s: "H\n" + s),
}  # fmt: skip


def _outcome(m, case):
    try:
        case(m)
    except (AssertionError, TypeError, ValueError) as e:
        return type(e).__name__, str(e).replace("torch.", "ember.")
    return ("passed",)


@needs_torch
@pytest.mark.parametrize("name", list(CLOSE))
def test_assert_close_like_torch(name):
    assert _outcome(ember, CLOSE[name]) == _outcome(torch, CLOSE[name])


def test_assert_close_message_format():
    with pytest.raises(AssertionError) as info:
        ember.testing.assert_close(ember.tensor([1.0, 2.0, 3.0]), ember.tensor([1.0, 3.0, 3.0]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.3333333432674408 at index (1,) (up to 1.3e-06 allowed)"
    )


def test_assert_allclose_deprecated():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        ember.testing.assert_allclose(ember.tensor([1.0, NAN]), [1.00001, NAN])
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="not close"):
        ember.testing.assert_allclose(ember.tensor([1.0]), [1.1])


# ------------------------------------------------------------------ testing.make_tensor

RANGES = [("bool", 0, 1), ("uint8", 0, 9), ("int8", -9, 9), ("int64", -9, 9),
          ("float32", -9, 9), ("float64", -9, 9), ("float16", -9, 9), ("bfloat16", -9, 9)]  # fmt: skip


@pytest.mark.parametrize("name,lo,hi", RANGES)
def test_make_tensor_default_ranges(name, lo, hi):
    ember.manual_seed(0)
    t = ember.testing.make_tensor(400, dtype=getattr(ember, name), device="cpu")
    v = t.to(ember.float64).numpy()
    assert t.dtype == getattr(ember, name) and tuple(t.shape) == (400,)
    assert v.min() >= lo and v.max() <= hi and len(np.unique(v)) > 1


def test_make_tensor_options():
    mt = ember.testing.make_tensor
    t = mt((3, 4), dtype=ember.float32, device="cpu", low=2, high=3, requires_grad=True)
    assert t.requires_grad and t.is_leaf and tuple(t.shape) == (3, 4)
    assert 2 <= t.detach().numpy().min() and t.detach().numpy().max() < 3
    nc = mt(3, 4, dtype=ember.int32, device="cpu", noncontiguous=True)
    assert not nc.is_contiguous() and tuple(nc.shape) == (3, 4)
    z = mt(200, dtype=ember.int8, device="cpu", low=-1, high=2, exclude_zero=True)
    assert (z.numpy() != 0).all()
    c = mt(50, dtype=ember.complex64, device="cpu")
    assert c.dtype == ember.complex64 and np.abs(c.numpy().imag).max() > 0


@needs_torch
@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"dtype": "int32", "requires_grad": True}, "`requires_grad=True` is not supported"),
        (
            {"dtype": "float32", "low": 3, "high": 1},
            "`low` must be less than `high`, but got 3 >= 1",
        ),
        ({"dtype": "float32", "low": math.nan}, "`low` and `high` cannot be NaN"),
        ({"dtype": "uint8", "low": -20, "high": -10}, "The value interval specified by `low`"),
    ],
)
def test_make_tensor_errors(kw, msg):
    def call(m):
        k = dict(kw, dtype=getattr(m, kw["dtype"]))
        return m.testing.make_tensor(2, device="cpu", **k)

    raises_like_torch(call, ValueError, msg)


# ------------------------------------------------------------------ func

_R = np.random.default_rng(0)
X3 = _R.normal(size=(3,)).astype("float32")
W23 = _R.normal(size=(2, 3)).astype("float32")


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    return [tree]


def _vjp_case(m):
    out, fn = m.func.vjp(lambda a: a.exp() * a, m.tensor(W23))
    return out, fn(m.tensor(W23) + 1)


FUNC = {
    "grad": lambda m: m.func.grad(lambda v: (v.sin() * v).sum())(m.tensor(X3)),
    "grad(grad)": lambda m: m.func.grad(m.func.grad(lambda u: u.sin() * u**2))(m.tensor(X3)[0]),
    "grad of grad.sum": lambda m: m.func.grad(
        lambda v: m.func.grad(lambda u: (u**3).sum())(v).sum())(m.tensor(X3)),
    "grad argnums": lambda m: m.func.grad(lambda a, b: (a @ b).sin().sum(), argnums=(0, 1))(
        m.tensor(W23), m.tensor(X3)),
    "grad dict": lambda m: m.func.grad(lambda p: (p["w"] @ p["b"]).exp().sum())(
        {"w": m.tensor(W23), "b": m.tensor(X3)}),
    "grad_and_value aux": lambda m: m.func.grad_and_value(
        lambda v: ((v**2).sum(), v * 2), has_aux=True)(m.tensor(X3)),
    "vjp": lambda m: _vjp_case(m),
    "vjp tuple out": lambda m: m.func.vjp(lambda a, b: (a * b, a + b), m.tensor(X3),
                                          m.tensor(X3) * 2)[1]((m.ones(3), m.tensor(X3))),
    "jacrev": lambda m: m.func.jacrev(lambda a: a.sin() * a.sum())(m.tensor(X3)),
    "jacrev argnums": lambda m: m.func.jacrev(lambda a, b: (a @ b).tanh(), argnums=(0, 1))(
        m.tensor(W23), m.tensor(X3)),
    "jacfwd dict out": lambda m: m.func.jacfwd(lambda a: (a.exp(), {"s": a.sum()}))(m.tensor(X3)),
    "hessian": lambda m: m.func.hessian(lambda a: (a.sin() * a).sum())(m.tensor(X3)),
    "hessian 2d": lambda m: m.func.hessian(lambda a: (a.tanh() ** 2).sum())(m.tensor(W23)),
    "jacrev(grad)": lambda m: m.func.jacrev(m.func.grad(lambda a: (a**3).sum()))(m.tensor(X3)),
    "jvp": lambda m: m.func.jvp(lambda a: a.sin() * a, (m.tensor(X3),), (m.ones(3),)),
    "jvp two": lambda m: m.func.jvp(lambda a, b: (a * b).sum(), (m.tensor(X3), m.tensor(X3)),
                                    (m.ones(3), m.tensor(X3))),
    "jvp relu": lambda m: m.func.jvp(lambda a: m.nn.functional.relu(a) ** 2, (m.tensor(X3),),
                                     (m.tensor(X3) + 1,)),
    "grad(jvp)": lambda m: m.func.grad(lambda a: m.func.jvp(
        lambda u: (u**3).sum(), (a,), (m.ones(3),))[1])(m.tensor(X3)),
    "linearize": lambda m: m.func.linearize(lambda a: a.sin(), m.tensor(X3))[1](m.ones(3)),
    "vmap dict out": lambda m: m.func.vmap(lambda a: {"a": a * 2, "b": [a.sum()]})(m.tensor(W23)),
    "vmap out_dims": lambda m: m.func.vmap(lambda a: (a * 2, a.sum()), out_dims=(1, 0))(
        m.tensor(W23)),
}  # fmt: skip


@needs_torch
@pytest.mark.parametrize("name", list(FUNC))
def test_func_like_torch(name):
    e, t = _leaves(FUNC[name](ember)), _leaves(FUNC[name](torch))
    assert len(e) == len(t)
    for a, b in zip(e, t, strict=True):
        assert_same(a, b, what=name)


def _per_sample_grads(m):
    model = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Tanh(), m.nn.Linear(4, 2))
    with m.no_grad():
        for i, p in enumerate(model.parameters()):
            r = np.random.default_rng(i).normal(size=tuple(p.shape)).astype("float32")
            p.copy_(m.tensor(r))
    params = {k: v.detach() for k, v in model.named_parameters()}
    xs = m.tensor(np.random.default_rng(9).normal(size=(5, 3)).astype("float32"))
    ys = m.tensor([0, 1, 1, 0, 1])

    def loss_fn(p, x, y):
        out = m.func.functional_call(model, p, (x.unsqueeze(0),))
        return m.nn.functional.cross_entropy(out, y.unsqueeze(0))

    return m.func.vmap(m.func.grad(loss_fn), in_dims=(None, 0, 0))(params, xs, ys)


@needs_torch
def test_per_sample_gradients_recipe():
    e, t = _per_sample_grads(ember), _per_sample_grads(torch)
    assert sorted(e) == sorted(t)
    for k in t:
        assert tuple(e[k].shape) == (5, *tuple(t[k].shape[1:]))
        assert_same(e[k], t[k], what=k)


def test_grad_top_level_is_not_a_graph_but_nested_is():
    g = ember.func.grad(lambda v: (v**2).sum())(ember.tensor(X3))
    assert not g.requires_grad
    w = ember.tensor(X3, requires_grad=True)
    g = ember.func.grad(lambda v: (v**3).sum())(w)  # an input in a graph: the result joins it
    g.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 6 * X3, rtol=1e-5)


def test_functional_call_does_not_warn():
    m = ember.nn.Linear(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ember.func.functional_call(m, {"weight": ember.ones(2, 2)}, (ember.ones(1, 2),))
    np.testing.assert_allclose(out.detach().numpy(), 2 + m.bias.detach().numpy()[None], rtol=1e-6)


FUNC_ERRORS = [
    (lambda m: m.func.grad(lambda x: x)(m.ones(3)), RuntimeError,
     ("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with 1 "
     "dims. Maybe you wanted to use the vjp or jacrev APIs instead?")),
    (lambda m: m.func.grad(lambda x: 1.0)(m.ones(3)), RuntimeError,
     "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>"),
    (lambda m: m.func.grad(lambda x: x.sum(), has_aux=True)(m.ones(3)), RuntimeError,
     "output of function f should be a tuple: (output, aux) if has_aux is True"),
    (lambda m: m.func.grad(lambda x: x.sum(), argnums=2)(m.ones(3)), RuntimeError,
     "Got argnum=2, but only 1 positional inputs"),
    (lambda m: m.func.grad(lambda x: x.sum(), argnums=())(m.ones(3)), RuntimeError,
     "argnums must be non-empty"),
    (lambda m: m.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(m.ones(3), m.ones(3)),
     RuntimeError, "argnums elements must be unique, got (0, 0)"),
    (lambda m: m.func.grad(lambda x: x.sum(), argnums=1.5)(m.ones(3)), RuntimeError,
     "argnums must be int or Tuple[int, ...], got: <class 'float'>"),
    (lambda m: m.func.grad(lambda x: x.sum())(3.0), ValueError,
     "Thing passed to transform API must be Tensor, got <class 'float'>"),
    (lambda m: m.func.jacrev(lambda x: 1.0)(m.ones(3)), RuntimeError,
     ("vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type "
     "<class 'float'>")),
    (lambda m: m.func.jvp(lambda x: 1.0, (m.ones(2),), (m.ones(2),)), RuntimeError,
     "jvp(f, primals, tangents): expected f(*primals) to return only tensors"),
    (lambda m: m.func.vjp(lambda x: (x, x), m.ones(3))[1](m.ones(3)), RuntimeError,
     "Expected pytree structure of cotangents to be the same as pytree structure of outputs"),
    (lambda m: m.func.jvp(lambda x: x, m.ones(3), m.ones(3)), RuntimeError,
     ("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
     "call f(*primals).")),
    (lambda m: m.func.jvp(lambda x: x, (m.ones(3),), (m.ones(2),)), RuntimeError,
     "Tensor is of size [3] while the given forward gradient is of size [2]."),
]  # fmt: skip


@pytest.mark.parametrize("fn,exc,msg", FUNC_ERRORS, ids=[e[2][:40] for e in FUNC_ERRORS])
def test_func_errors_like_torch(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


# ------------------------------------------------------------------ jit


def test_jit_passes_through():
    lin = ember.nn.Linear(2, 2)
    assert ember.jit.script(lin) is lin
    assert ember.jit.trace(lin, ember.ones(1, 2), check_trace=False, strict=False) is lin

    @ember.jit.script
    def f(x):
        return x + 1

    assert f(ember.ones(1)).item() == 2
    for deco in (ember.jit.ignore, ember.jit.unused, ember.jit.export, ember.jit.ignore(drop=True)):
        assert deco(f) is f
    assert ember.jit.is_scripting() is False and ember.jit.is_tracing() is False
    assert ember.jit.annotate(list[int], []) == []
    assert ember.jit.isinstance([1, 2], list[int]) and not ember.jit.isinstance([1.0], list[int])
    assert ember.jit.wait(ember.jit.fork(lambda a: a * 2, 3)) == 6


@needs_torch
def test_jit_names_like_torch():
    for name in ("script", "trace", "ignore", "unused", "export", "is_scripting", "is_tracing",
                 "save", "load", "Final", "annotate", "fork", "wait", "freeze"):  # fmt: skip
        assert hasattr(torch.jit, name) and hasattr(ember.jit, name), name


@pytest.mark.parametrize("call", [lambda j: j.save(object(), "m.pt"), lambda j: j.load("m.pt")])
def test_jit_save_load_say_use_ember_save(call):
    with pytest.raises(NotImplementedError, match="ember.save"):
        call(ember.jit)


# ------------------------------------------------------------------ cpu.amp


def test_cpu_amp_is_a_module():
    assert isinstance(ember.cpu.amp, types.ModuleType)
    assert sys.modules["ember.cpu.amp"] is ember.cpu.amp
    import importlib

    assert importlib.import_module("ember.cpu.amp") is ember.cpu.amp


def test_cpu_amp_autocast_and_grad_scaler():
    with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated"):
        ac = ember.cpu.amp.autocast(dtype=ember.bfloat16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a real region: nothing to warn about
        with ac:
            assert ember.is_autocast_enabled("cpu")
            assert ember.get_autocast_dtype("cpu") == ember.bfloat16
            y = ember.ones(2, 2) @ ember.ones(2, 2)
        assert not ember.is_autocast_enabled("cpu")
    assert y.dtype == ember.bfloat16  # a matmul in a bfloat16 region, as in torch
    with pytest.warns(FutureWarning, match="GradScaler"):
        s = ember.cpu.amp.GradScaler(init_scale=8.0)
    assert isinstance(s, ember.amp.GradScaler) and s.get_scale() == 8.0


@needs_torch
def test_cpu_amp_names_like_torch():
    for name in ("autocast", "GradScaler"):
        assert hasattr(torch.cpu.amp, name) and hasattr(ember.cpu.amp, name)


SCRIPT = """
import warnings
warnings.simplefilter("ignore")
import torch
import torch.func
from torch.cpu.amp import autocast
from torch.func import grad, vmap
from torch.testing import assert_close
import torch.jit

x = torch.tensor([1.0, 2.0])
with autocast():
    g = vmap(grad(lambda v: (v ** 3).sum()))(x[:, None])
assert_close(g, torch.tensor([[3.0], [12.0]]))

@torch.jit.script
def f(v):
    return v * 2

print(f(x).tolist(), torch.version.cuda is None or isinstance(torch.version.cuda, str))
"""


def test_dropin_imports(tmp_path):
    script = tmp_path / "uses_submodules.py"
    script.write_text(SCRIPT)
    out = subprocess.run(
        [sys.executable, "-m", "ember", "run", str(script)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[2.0, 4.0] True"
    if torch is not None:
        ref = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, check=False
        )
        assert ref.returncode == 0, ref.stderr
        assert ref.stdout == out.stdout
