"""nn.Module parity with torch: registration, iteration, state dicts, conversion, repr, hooks,
pickling, lazy modules and named parameters.

Each scenario is a function of the framework module ``m`` (ember or torch) returning plain
Python data; the test runs it on both and compares (``torch`` spelled ``ember`` in strings)."""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from collections import OrderedDict

import ember
import numpy as np
import pytest
from nn_harness import compare_modules, copy_state

torch = pytest.importorskip("torch")


# ---------------------------------------------------------------------------- helpers
def _norm(x):
    """Plain, comparable data: tensors become (dtype name, shape, values); strings lose the
    framework's name."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        a = x.detach().cpu()
        a = a.numpy() if isinstance(a, torch.Tensor) else np.asarray(a._data)
        return ("T", str(x.dtype).split(".")[-1], tuple(x.shape), np.round(a, 5).tolist())
    if isinstance(x, str):
        return x.replace("torch", "ember")
    if isinstance(x, dict):
        return {_norm(k): _norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_norm(v) for v in x) if type(x) in (list, tuple) else tuple(map(_norm, x))
    if isinstance(x, type):
        return x.__name__
    return x


def same(scenario):
    """Run ``scenario(m)`` with ember and torch; both results must agree."""
    e, t = scenario(ember), scenario(torch)
    assert _norm(e) == _norm(t), f"\nember: {_norm(e)}\ntorch: {_norm(t)}"
    return e


def raises_same(scenario, exc=Exception):
    """``scenario(m)`` raises the same exception type and (normalized) message in both."""
    with pytest.raises(exc) as ee:
        scenario(ember)
    with pytest.raises(exc) as te:
        scenario(torch)
    assert type(ee.value) is type(te.value)
    assert _norm(str(ee.value)) == _norm(str(te.value)), f"\nember: {ee.value}\ntorch: {te.value}"
    return str(ee.value)


def classes(m):
    """The same small module classes written against framework ``m``."""
    nn = m.nn

    class Lin(nn.Module):
        def __init__(self, i, o, bias=True):
            super().__init__()
            self.in_features, self.out_features = i, o
            self.weight = nn.Parameter(m.arange(i * o, dtype=m.float32).reshape(o, i) / 10 - 0.3)
            if bias:
                self.bias = nn.Parameter(m.linspace(-0.5, 0.5, o))
            else:
                self.register_parameter("bias", None)

        def forward(self, x):
            y = x @ self.weight.t()
            return y if self.bias is None else y + self.bias

        def extra_repr(self):
            return (
                f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}"
            )

    class Norm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = nn.Parameter(m.ones(n))
            self.register_buffer("running_mean", m.zeros(n))
            self.register_buffer("num_batches", m.tensor(0))
            self.register_buffer("scratch", m.ones(n), persistent=False)

        def forward(self, x):
            return (x - self.running_mean) * self.weight

    class Act(nn.Module):
        def forward(self, x):
            return x * 0.5

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = Lin(3, 4)
            self.norm = Norm(4)
            self.act = Act()
            self.fc2 = Lin(4, 2, bias=False)
            self.register_buffer("step", m.zeros(1))

        def forward(self, x):
            return self.fc2(self.act(self.norm(self.fc1(x))))

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = Lin(3, 3)
            self.dec = Lin(3, 3)
            self.dec.weight = self.enc.weight
            self.shared = self.enc

        def forward(self, x):
            return self.dec(self.enc(x))

    return Lin, Norm, Act, Net, Tied


def net(m):
    return classes(m)[3]()


# module-level copies of the classes, so that instances pickle
for _m in (ember, torch):
    for _c in classes(_m):
        _c.__qualname__ = _c.__name__ = f"_{_m.__name__}_{_c.__name__}"
        _c.__module__ = __name__
        globals()[_c.__name__] = _c


def pclasses(m):
    """The classes of ``classes(m)`` that pickle (defined at module level)."""
    return [globals()[f"_{m.__name__}_{n}"] for n in ("Lin", "Norm", "Act", "Net", "Tied")]


# ---------------------------------------------------------------------------- Parameter/Buffer
def test_parameter_basics():
    def sc(m):
        t = m.ones(2, 3)
        p = m.nn.Parameter(t)
        q = m.nn.Parameter(t, requires_grad=False)
        e = m.nn.Parameter()
        with m.no_grad():
            p.add_(1)
        return [
            repr(p),
            str(q),
            p.requires_grad,
            q.requires_grad,
            t.requires_grad,
            type(p).__name__,
            isinstance(p, m.Tensor),
            t.tolist(),  # shares storage
            tuple(e.shape),
            p.is_leaf,
            repr(m.nn.Parameter(m.tensor([1.0, 2.0], dtype=m.float64))),
            repr(m.nn.Parameter(m.ones(2, dtype=m.bfloat16))),
            repr(pickle.loads(pickle.dumps(p))),
            repr(copy.deepcopy(p)),
        ]

    same(sc)


def test_parameter_errors():
    raises_same(lambda m: m.nn.Parameter([1.0, 2.0]), AttributeError)
    raises_same(lambda m: m.nn.Parameter(m.ones(2, dtype=m.int64)), RuntimeError)
    same(lambda m: repr(m.nn.Parameter(m.ones(2, dtype=m.int64), requires_grad=False)))


def test_real_layers_state_dict_and_parity():
    if not all(hasattr(ember.nn, n) for n in ("Linear", "ReLU", "Dropout")):
        pytest.skip("layers not available")

    def build(m):
        m.manual_seed(0)
        return m.nn.Sequential(
            m.nn.Linear(3, 4),
            m.nn.ReLU(),
            m.nn.ModuleDict({"proj": m.nn.Linear(4, 4), "drop": m.nn.Dropout(0.1)}),
            m.nn.ModuleList([m.nn.Linear(4, 2, bias=False)]),
        )

    same(lambda m: [list(build(m).state_dict().keys()), repr(build(m))])

    t, e = build(torch), build(ember)
    t.eval()
    e.eval()
    copy_state(t, e)

    def call(mod, x):
        h = mod[1](mod[0](x))
        h = mod[2]["drop"](mod[2]["proj"](h))
        return mod[3][0](h)

    compare_modules(t, e, [ember_A(5, 3)], call=call)


def test_buffer_basics():
    def sc(m):
        b = m.nn.Buffer(m.ones(2))
        n = m.nn.Buffer(m.zeros(3), persistent=False)
        mod = m.nn.Module()
        mod.a = b
        mod.n = n
        mod.plain = m.ones(1)  # a plain tensor attribute is not a buffer
        return [
            isinstance(b, m.nn.Buffer),
            isinstance(m.ones(1), m.nn.Buffer),
            type(b).__name__,
            list(mod.state_dict().keys()),
            [k for k, _ in mod.named_buffers()],
            "plain" in mod.__dict__,
        ]

    same(sc)


def test_uninitialized_parameter():
    def sc(m):
        p = m.nn.UninitializedParameter()
        b = m.nn.UninitializedBuffer()
        r = [repr(p), repr(b), m.nn.parameter.is_lazy(p), p.requires_grad, b.requires_grad]
        p.materialize((2, 3))
        b.materialize(4, dtype=m.float64)
        r += [type(p).__name__, tuple(p.shape), type(b).__name__, tuple(b.shape), str(b.dtype)]
        r += [m.nn.parameter.is_lazy(p), p.requires_grad]
        return r

    same(sc)


def test_uninitialized_shape_error():
    raises_same(lambda m: m.nn.UninitializedParameter().shape, RuntimeError)


# ---------------------------------------------------------------------------- registration
def test_state_dict_keys_and_order():
    same(lambda m: list(net(m).state_dict().keys()))
    same(lambda m: list(net(m).state_dict(prefix="model.").keys()))
    same(lambda m: list(classes(m)[4]().state_dict().keys()))
    same(lambda m: list(net(m).state_dict()._metadata.items()))


def test_state_dict_positional_args_deprecated():
    def sc(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            dest = OrderedDict()
            out = net(m).state_dict(dest, "p.")
        return [out is dest, list(dest.keys()), [type(x.message).__name__ for x in w]]

    same(sc)


def test_state_dict_values_detached_and_keep_vars():
    def sc(m):
        n = net(m)
        sd = n.state_dict()
        kv = n.state_dict(keep_vars=True)
        return [
            sd["fc1.weight"].requires_grad,
            kv["fc1.weight"].requires_grad,
            kv["fc1.weight"] is n.fc1.weight,
            type(sd["fc1.weight"]).__name__,
            sd["fc1.weight"].data_ptr() == n.fc1.weight.data_ptr(),
            sd["fc1.weight"],
        ]

    same(sc)


def test_named_members():
    def sc(m):
        t = classes(m)[4]()
        n = net(m)
        return [
            [k for k, _ in t.named_parameters()],
            [k for k, _ in t.named_parameters(remove_duplicate=False)],
            [k for k, _ in t.named_parameters(prefix="p", recurse=False)],
            [k for k, _ in n.named_parameters(prefix="x")],
            len(list(t.parameters())),
            [k for k, _ in n.named_buffers()],
            [k for k, _ in n.named_buffers(recurse=False)],
            len(list(n.buffers())),
            [k for k, _ in n.named_children()],
            [type(c).__name__ for c in n.children()],
            [k for k, _ in t.named_modules()],
            [k for k, _ in t.named_modules(remove_duplicate=False)],
            [k for k, _ in t.named_modules(prefix="root")],
            [type(c).__name__ for c in t.modules()],
            [k for k, _ in t.named_children()],
        ]

    same(sc)


def test_setattr_routing():
    def sc(m):
        mod = m.nn.Module()
        mod.x = m.nn.Parameter(m.ones(1))
        r = [list(mod._parameters)]
        mod.x = None  # a parameter slot takes None
        r.append(list(mod._parameters.items()))
        mod.register_buffer("b", m.ones(1))
        mod.b = m.zeros(2)  # a buffer slot takes a plain tensor
        r.append([list(mod._buffers), mod.b.tolist()])
        mod.b = None
        r.append(list(mod._buffers.items()))
        mod.sub = m.nn.Module()
        mod.sub = None
        r.append(list(mod._modules.items()))
        # a Parameter replaces a plain attribute, a module replaces a parameter
        mod.y = 3
        mod.y = m.nn.Parameter(m.ones(1))
        r.append(["y" in mod.__dict__, "y" in mod._parameters])
        del mod.y
        mod.y = m.nn.Module()
        r.append(["y" in mod._parameters, "y" in mod._modules])
        del mod.y
        r.append(["y" in mod._modules, hasattr(mod, "y")])
        mod.register_buffer("nb", m.ones(1), persistent=False)
        del mod.nb
        r.append(sorted(mod._non_persistent_buffers_set))
        return r

    same(sc)


@pytest.mark.parametrize(
    "action",
    [
        "param_slot_tensor",
        "module_slot_int",
        "buffer_slot_int",
        "reg_param_dot",
        "reg_param_empty",
        "reg_param_exists",
        "reg_param_tensor",
        "reg_param_nonleaf",
        "reg_param_name_int",
        "reg_buf_dot",
        "reg_buf_empty",
        "reg_buf_exists",
        "reg_buf_list",
        "reg_buf_name_int",
        "add_module_int",
        "add_module_dot",
        "add_module_empty",
        "add_module_exists",
        "add_module_name_int",
        "getattr_missing",
        "init_kwargs",
        "init_args",
        "train_not_bool",
        "buffer_over_attr",
        "buffer_over_param",
        "buffer_over_module",
    ],
)
def test_registration_errors(action):
    def sc(m):
        mod = m.nn.Module()
        mod.p = m.nn.Parameter(m.ones(1))
        mod.c = m.nn.Module()
        mod.register_buffer("b", m.ones(1))
        mod.attr = 1
        if action == "param_slot_tensor":
            mod.p = m.ones(1)
        elif action == "module_slot_int":
            mod.c = 3
        elif action == "buffer_slot_int":
            mod.b = 3
        elif action == "reg_param_dot":
            mod.register_parameter("a.b", None)
        elif action == "reg_param_empty":
            mod.register_parameter("", None)
        elif action == "reg_param_exists":
            mod.register_parameter("attr", None)
        elif action == "reg_param_tensor":
            mod.register_parameter("q", m.ones(1))
        elif action == "reg_param_nonleaf":
            x = m.ones(1, requires_grad=True)
            mod.register_parameter("q", m.nn.Parameter(x) * 2)
        elif action == "reg_param_name_int":
            mod.register_parameter(1, None)
        elif action == "reg_buf_dot":
            mod.register_buffer("a.b", None)
        elif action == "reg_buf_empty":
            mod.register_buffer("", None)
        elif action == "reg_buf_exists":
            mod.register_buffer("attr", None)
        elif action == "reg_buf_list":
            mod.register_buffer("q", [1])
        elif action == "reg_buf_name_int":
            mod.register_buffer(1, None)
        elif action == "add_module_int":
            mod.add_module("q", 3)
        elif action == "add_module_dot":
            mod.add_module("a.b", m.nn.Module())
        elif action == "add_module_empty":
            mod.add_module("", m.nn.Module())
        elif action == "add_module_exists":
            mod.add_module("attr", m.nn.Module())
        elif action == "add_module_name_int":
            mod.add_module(1, m.nn.Module())
        elif action == "getattr_missing":
            mod.nothing  # noqa: B018
        elif action == "init_kwargs":
            m.nn.Module(foo=1)
        elif action == "init_args":
            m.nn.Module(1)
        elif action == "train_not_bool":
            mod.train(1)
        elif action == "buffer_over_attr":
            mod.attr = m.nn.Buffer(m.ones(1))
        elif action == "buffer_over_param":
            mod.p = m.nn.Buffer(m.ones(1))
        elif action == "buffer_over_module":
            mod.c = m.nn.Buffer(m.ones(1))

    raises_same(sc)


def test_assign_before_init():
    def sc(kind):
        def f(m):
            class Bad(m.nn.Module):
                def __init__(self):
                    if kind == "param":
                        self.p = m.nn.Parameter(m.ones(1))
                    elif kind == "module":
                        self.c = m.nn.Module()
                    else:
                        self.register_buffer("b", m.ones(1))
                    super().__init__()

            Bad()

        return f

    for kind in ("param", "module", "buffer"):
        raises_same(sc(kind), AttributeError)


def test_get_submodule_parameter_buffer():
    def sc(m):
        n = net(m)
        return [
            type(n.get_submodule("fc1")).__name__,
            n.get_submodule("") is n,
            n.get_parameter("fc1.weight") is n.fc1.weight,
            n.get_buffer("norm.running_mean") is n.norm.running_mean,
            n.get_buffer("step") is n.step,
            n.get_parameter("norm.weight") is n.norm.weight,
        ]

    same(sc)


@pytest.mark.parametrize(
    "target",
    [
        ("get_submodule", "nope"),
        ("get_submodule", "fc1.weight"),
        ("get_submodule", "fc1.nope.x"),
        ("get_parameter", "fc1.nope"),
        ("get_parameter", "norm.running_mean"),
        ("get_parameter", "x.weight"),
        ("get_buffer", "norm.weight"),
        ("get_buffer", "norm.nope"),
        ("get_buffer", "norm.training"),
    ],
)
def test_get_errors(target):
    fn, t = target
    raises_same(lambda m: getattr(net(m), fn)(t), AttributeError)


def test_set_submodule():
    def sc(m):
        n = net(m)
        n.set_submodule("norm", m.nn.Module())
        n.set_submodule("fc1.inner", m.nn.Module())
        return [type(n.norm).__name__, list(n.fc1._modules)]

    same(sc)


# ---------------------------------------------------------------------------- modes and grads
def test_train_eval_requires_grad_zero_grad():
    def sc(m):
        n = net(m)
        r = [n.training, n.fc1.training]
        assert n.eval() is n
        r += [n.training, n.fc1.training, n.norm.training]
        n.train()
        r += [n.norm.training]
        n.requires_grad_(False)
        r += [[p.requires_grad for p in n.parameters()]]
        n.requires_grad_()
        out = n(m.ones(2, 3)).sum()
        out.backward()
        r += [n.fc1.weight.grad]
        n.zero_grad(set_to_none=False)
        r += [n.fc1.weight.grad, n.fc1.weight.grad.requires_grad]
        n.zero_grad()
        r += [n.fc1.weight.grad is None]
        return r

    same(sc)


def test_apply_order():
    def sc(m):
        seen = []
        n = classes(m)[4]()
        n.apply(lambda mod: seen.append(type(mod).__name__))
        return seen

    same(sc)


# ---------------------------------------------------------------------------- conversion
def test_to_and_casts_keep_parameter_identity():
    def sc(m):
        n = net(m)
        w = n.fc1.weight
        n(m.ones(1, 3)).sum().backward()
        r = []
        for conv in (
            lambda x: x.double(),
            lambda x: x.float(),
            lambda x: x.half(),
            lambda x: x.bfloat16(),
            lambda x: x.to(m.float64),
            lambda x: x.to(dtype=m.float32),
            lambda x: x.to("cpu"),
            lambda x: x.to("cpu", m.float64),
            lambda x: x.to(m.ones(1, dtype=m.float32)),
            lambda x: x.type(m.float64),
            lambda x: x.cpu(),
        ):
            assert conv(n) is n
            r.append(
                [
                    n.fc1.weight is w,
                    type(n.fc1.weight).__name__,
                    str(n.fc1.weight.dtype),
                    str(n.fc1.weight.grad.dtype),
                    str(n.norm.num_batches.dtype),
                    str(n.norm.running_mean.dtype),
                    str(n.norm.scratch.dtype),
                    n.fc1.weight.requires_grad,
                    n.fc1.weight.is_leaf,
                ]
            )
        return r

    same(sc)


def test_to_rejects_integral_dtype():
    raises_same(lambda m: net(m).to(m.int64), TypeError)


def test_to_empty():
    def sc(m):
        n = net(m).to_empty(device="cpu")
        return [list(n.state_dict().keys()), str(n.fc1.weight.dtype), type(n.fc1.weight).__name__]

    same(sc)


# ---------------------------------------------------------------------------- load_state_dict
def test_load_state_dict_roundtrip():
    def sc(m):
        a, b = net(m), net(m)
        with m.no_grad():
            for p in a.parameters():
                p.mul_(-2)
            a.norm.running_mean.fill_(3)
        w = b.fc1.weight
        res = b.load_state_dict(a.state_dict())
        return [
            repr(res),
            str(res),
            res.missing_keys,
            res.unexpected_keys,
            b.fc1.weight is w,
            b.fc1.weight,
            b.norm.running_mean,
            b.norm.scratch,
        ]

    same(sc)


def test_load_state_dict_strict_errors():
    def missing(m):
        sd = net(m).state_dict()
        del sd["fc1.bias"], sd["norm.num_batches"]
        sd["fc3.weight"] = m.ones(1)
        sd["extra"] = m.ones(1)
        sd["norm.other"] = m.ones(1)
        net(m).load_state_dict(sd)

    msg = raises_same(missing, RuntimeError)
    assert msg.startswith("Error(s) in loading state_dict for Net:\n\tMissing key(s)")

    def mismatch(m):
        sd = net(m).state_dict()
        sd["fc1.weight"] = m.ones(5, 3)
        sd["norm.running_mean"] = m.ones(2)
        net(m).load_state_dict(sd)

    msg = raises_same(mismatch, RuntimeError)
    assert "size mismatch for fc1.weight: copying a param with shape" in msg

    def not_tensor(m):
        sd = net(m).state_dict()
        sd["fc1.weight"] = [1.0]
        net(m).load_state_dict(sd)

    raises_same(not_tensor, RuntimeError)
    raises_same(lambda m: net(m).load_state_dict([1, 2]), TypeError)


def test_load_state_dict_non_strict():
    def sc(m):
        sd = net(m).state_dict()
        del sd["fc1.bias"]
        sd["zzz"] = m.ones(1)
        sd["fc1.extra"] = m.ones(1)
        res = net(m).load_state_dict(sd, strict=False)
        return [repr(res), res.missing_keys, res.unexpected_keys, type(res).__name__]

    same(sc)

    def bad_shape(m):  # a shape mismatch is an error even when not strict
        sd = net(m).state_dict()
        sd["fc1.weight"] = m.ones(3)
        net(m).load_state_dict(sd, strict=False)

    raises_same(bad_shape, RuntimeError)


def test_load_state_dict_assign():
    def sc(m):
        a, b = net(m), net(m)
        b.fc2.weight.requires_grad_(False)
        sd = {k: v.clone() * 3 for k, v in a.state_dict().items()}
        old = b.fc1.weight
        b.load_state_dict(sd, assign=True)
        return [
            b.fc1.weight is old,
            type(b.fc1.weight).__name__,
            b.fc1.weight.requires_grad,
            b.fc2.weight.requires_grad,
            b.fc1.weight,
            b.norm.running_mean,
            b.norm.running_mean is sd["norm.running_mean"],
            [k for k, _ in b.named_parameters()],
        ]

    same(sc)


def test_load_scalar_from_vector():
    def sc(m):
        mod = m.nn.Module()
        mod.register_buffer("s", m.tensor(1.0))
        mod.load_state_dict({"s": m.tensor([5.0])})
        return mod.s

    same(sc)


def test_load_from_torch_checkpoint():
    tn, en = net(torch), net(ember)
    with torch.no_grad():
        for p in tn.parameters():
            p.uniform_(-1, 1)
    copy_state(tn, en)
    compare_modules(tn, en, [ember_A(2, 3)])


def ember_A(*shape):
    from harness import A

    return A(*shape)


def test_extra_state():
    def sc(m):
        class WithState(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = m.nn.Parameter(m.ones(1))
                self.counter = 0

            def get_extra_state(self):
                return {"counter": self.counter}

            def set_extra_state(self, state):
                self.counter = state["counter"]

        a = WithState()
        a.counter = 7
        outer = m.nn.Module()
        outer.inner = a
        sd = outer.state_dict()
        b = m.nn.Module()
        b.inner = WithState()
        b.load_state_dict(sd)
        r = [list(sd.keys()), b.inner.counter]
        del sd["inner._extra_state"]
        r.append(repr(b.load_state_dict(sd, strict=False)))
        return r

    same(sc)

    def unexpected(m):
        n = m.nn.Module()
        n.register_buffer("x", m.ones(1))
        n.load_state_dict({"x": m.ones(1), "_extra_state": 1})

    raises_same(unexpected, RuntimeError)


# ---------------------------------------------------------------------------- repr
def test_repr_nested():
    def sc(m):
        Lin, _Norm, _Act, Net, Tied = classes(m)
        outer = m.nn.Module()
        outer.net = Net()
        outer.empty = None
        return [repr(Net()), repr(Tied()), repr(m.nn.Module()), repr(outer), repr(Lin(2, 2))]

    same(sc)


def test_dir_lists_members():
    def sc(m):
        d = dir(net(m))
        return [x in d for x in ("fc1", "norm", "step", "forward", "training", "state_dict")]

    same(sc)


def test_forward_unimplemented():
    raises_same(lambda m: m.nn.Module()(1), NotImplementedError)


# ---------------------------------------------------------------------------- forward hooks
def test_forward_hooks_order_and_arguments():
    def sc(m):
        log = []
        n = classes(m)[0](3, 2)

        def pre1(mod, args):
            log.append(("pre1", type(mod).__name__, len(args)))

        def pre2(mod, args):
            log.append(("pre2",))
            return (args[0] * 2,)  # a new args tuple

        def pre3(mod, args, kwargs):
            log.append(("pre3", sorted(kwargs)))

        def pre_single(mod, args):
            log.append(("pre_single",))
            return args[0] + 1  # a single value is wrapped in a tuple

        def fwd1(mod, args, out):
            log.append(("fwd1", args[0].tolist(), out.shape[-1]))

        def fwd2(mod, args, kwargs, out):
            log.append(("fwd2", sorted(kwargs)))
            return out * 10

        def fwd_first(mod, args, out):
            log.append(("fwd_first",))

        h1 = n.register_forward_pre_hook(pre1)
        n.register_forward_pre_hook(pre2)
        n.register_forward_pre_hook(pre3, with_kwargs=True)
        n.register_forward_pre_hook(pre_single, prepend=True)
        n.register_forward_hook(fwd1)
        h2 = n.register_forward_hook(fwd2, with_kwargs=True)
        n.register_forward_hook(fwd_first, prepend=True)
        out1 = n(m.ones(1, 3))
        h1.remove()
        h2.remove()
        h2.remove()  # removing twice is harmless
        out2 = n(m.ones(1, 3))
        return [log, out1, out2]

    same(sc)


def test_forward_pre_hook_with_kwargs_replaces_both():
    def sc(m):
        class K(m.nn.Module):
            def forward(self, x, *, scale=1.0):
                return x * scale

        k = K()
        k.register_forward_pre_hook(
            lambda mod, a, kw: ((a[0] + 1,), {"scale": 3.0}), with_kwargs=True
        )
        return k(m.ones(2))

    same(sc)

    def bad(m):
        k = m.nn.Module()
        k.forward = lambda x: x
        k.register_forward_pre_hook(lambda mod, a, kw: 5, with_kwargs=True)
        k(m.ones(1))

    raises_same(bad, RuntimeError)


def test_forward_hook_always_call():
    def sc(m):
        log = []

        class Boom(m.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        b = Boom()
        b.register_forward_hook(lambda mod, a, out: log.append(("always", out)), always_call=True)
        b.register_forward_hook(lambda mod, a, out: log.append(("normal",)))
        with pytest.raises(ValueError, match="boom"):
            b(m.ones(1))
        return log

    same(sc)


def test_handle_context_manager():
    def sc(m):
        log = []
        n = m.nn.Module()
        n.forward = lambda x: x
        with n.register_forward_hook(lambda *a: log.append(1)):
            n(1)
        n(1)
        return [log, len(n._forward_hooks), len(n._forward_hooks_with_kwargs)]

    same(sc)


def test_global_forward_hooks():
    def sc(m):
        log = []
        mm = m.nn.modules.module
        n = classes(m)[0](3, 2)
        n.register_forward_pre_hook(lambda mod, a: log.append("local_pre"))
        n.register_forward_hook(lambda mod, a, o: log.append("local_fwd"))
        handles = [
            mm.register_module_forward_pre_hook(lambda mod, a: log.append("global_pre")),
            mm.register_module_forward_hook(lambda mod, a, o: log.append("global_fwd")),
            mm.register_module_forward_hook(
                lambda mod, a, kw, o: log.append(("global_kw", sorted(kw))), with_kwargs=True
            ),
        ]
        try:
            n(m.ones(1, 3))
        finally:
            for h in handles:
                h.remove()
        n(m.ones(1, 3))
        return log

    same(sc)


def test_global_registration_hooks():
    def sc(m):
        log = []
        mm = m.nn.modules.module
        hs = [
            mm.register_module_parameter_registration_hook(
                lambda mod, name, p: log.append(("param", name))
            ),
            mm.register_module_buffer_registration_hook(
                lambda mod, name, b: log.append(("buffer", name))
            ),
            mm.register_module_module_registration_hook(
                lambda mod, name, c: log.append(("module", name))
            ),
        ]
        try:
            classes(m)[1](2)
            x = m.nn.Module()
            x.sub = m.nn.Module()
            x.add_module("other", m.nn.Module())
        finally:
            for h in hs:
                h.remove()
        m.nn.Module().w = m.nn.Parameter(m.ones(1))
        return log

    same(sc)


def test_call_without_hooks_skips_hook_machinery(monkeypatch):
    n = net(ember)

    def fail(*a, **k):
        raise AssertionError("hook path taken")

    monkeypatch.setattr(ember.nn.Module, "_call_with_hooks", fail)
    n(ember.ones(1, 3))


# ---------------------------------------------------------------------------- backward hooks
def _bw_scenario(m, *, modify=False, pre_modify=False, input_grad=True):
    log = []
    Lin = classes(m)[0]
    lin = Lin(3, 2)

    def hook(mod, gin, gout):
        log.append(("hook", type(mod).__name__, [g is None for g in gin], gin, gout))
        if modify:
            return tuple(None if g is None else g * 2 for g in gin)

    def pre(mod, gout):
        log.append(("pre", gout))
        if pre_modify:
            return (gout[0] * 3,)

    lin.register_full_backward_hook(hook)
    lin.register_full_backward_pre_hook(pre)
    x = (m.arange(6.0).reshape(2, 3) / 5).requires_grad_(input_grad)
    y = lin(x)
    up = m.tensor([[1.0, 2.0], [3.0, 4.0]])
    y.backward(up)
    return [log, x.grad, lin.weight.grad, lin.bias.grad, y.grad_fn.name()]


@pytest.mark.parametrize(
    "kw",
    [{}, {"modify": True}, {"pre_modify": True}, {"input_grad": False}],
    ids=["plain", "modify_grad_input", "pre_modify_grad_output", "input_no_grad"],
)
def test_full_backward_hooks(kw):
    same(lambda m: _bw_scenario(m, **kw))


def test_full_backward_hook_multiple_inputs_outputs():
    def sc(m):
        log = []

        class Two(m.nn.Module):
            def forward(self, a, flag, b):
                return a * b, a + b, 3

        t = Two()
        t.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
        a = m.ones(2, requires_grad=True)
        b = m.full((2,), 2.0)
        out = t(a, True, b)
        (out[0].sum() * 2).backward()
        return [log, a.grad]

    same(sc)


def test_global_backward_hooks():
    def sc(m):
        log = []
        mm = m.nn.modules.module
        lin = classes(m)[0](3, 2)
        hs = [
            mm.register_module_full_backward_pre_hook(lambda mod, go: log.append(("gpre", go))),
            mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(("g", gi))),
        ]
        try:
            lin(m.ones(1, 3, requires_grad=True)).sum().backward()
        finally:
            for h in hs:
                h.remove()
        return log

    same(sc)


def test_backward_hook_bad_return():
    def sc(m):
        lin = classes(m)[0](3, 2)
        lin.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        lin(m.ones(1, 3, requires_grad=True)).sum().backward()

    raises_same(sc, RuntimeError)

    def sc2(m):
        lin = classes(m)[0](3, 2)
        lin.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        lin(m.ones(1, 3, requires_grad=True)).sum().backward()

    raises_same(sc2, RuntimeError)


def test_mixing_backward_hook_kinds_errors():
    def sc(m):
        lin = classes(m)[0](3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lin.register_backward_hook(lambda *a: None)
        lin.register_full_backward_hook(lambda *a: None)

    raises_same(sc, RuntimeError)


# ---------------------------------------------------------------------------- state-dict hooks
def test_state_dict_hooks():
    def sc(m):
        log = []
        n = net(m)
        n.fc1.register_state_dict_pre_hook(lambda mod, prefix, kv: log.append(("pre", prefix, kv)))

        def post(mod, sd, prefix, meta):
            log.append(("post", prefix, sorted(sd), meta))

        n.fc1.register_state_dict_post_hook(post)

        def private(mod, sd, prefix, meta):
            sd[prefix + "added"] = m.zeros(1)

        h = n.norm._register_state_dict_hook(private)
        keys1 = list(n.state_dict().keys())
        h.remove()
        keys2 = list(n.state_dict(keep_vars=True).keys())
        return [log, keys1, keys2]

    same(sc)

    def bad_post(m):
        n = net(m)
        n.register_state_dict_post_hook(lambda mod, sd, prefix, meta: {})
        n.state_dict()

    raises_same(bad_post, RuntimeError)


def test_load_state_dict_hooks():
    def sc(m):
        log = []
        n = net(m)

        def pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            log.append(("pre", type(mod).__name__, prefix, sorted(sd), strict))
            sd[prefix + "bias"] = sd[prefix + "bias"] * 0 + 7  # rewrite the incoming values

        def post(mod, keys):
            log.append(("post", type(mod).__name__, list(keys.missing_keys)))
            keys.unexpected_keys.clear()  # post hooks may edit the key lists in place

        n.fc1.register_load_state_dict_pre_hook(pre)
        n.fc1.register_load_state_dict_post_hook(post)
        sd = n.state_dict()
        sd["fc1.junk"] = m.ones(1)
        res = n.load_state_dict(sd)
        return [log, n.fc1.bias, repr(res)]

    same(sc)


# ---------------------------------------------------------------------------- pickle/deepcopy
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copy_and_pickle(how):
    def sc(m):
        t = pclasses(m)[4]()
        n = pclasses(m)[3]()
        n.fc1.weight.grad = m.ones(4, 3)
        t2 = copy.deepcopy(t) if how == "deepcopy" else pickle.loads(pickle.dumps(t))
        n2 = copy.deepcopy(n) if how == "deepcopy" else pickle.loads(pickle.dumps(n))
        return [
            t2.dec.weight is t2.enc.weight,
            t2.shared is t2.enc,
            t2.enc.weight is t.enc.weight,
            type(t2.enc.weight).__name__,
            t2.enc.weight.requires_grad,
            list(n2.state_dict().keys()),
            n2.fc1.weight,
            sorted(n2.norm._non_persistent_buffers_set),
            n2.fc1.weight.grad if how == "deepcopy" else None,
            repr(n2),
        ]

    same(sc)


def test_deepcopy_keeps_hooks_working():
    n = classes(ember)[0](3, 2)
    log = []
    n.register_forward_hook(lambda mod, a, o: log.append(mod))
    n2 = copy.deepcopy(n)
    n2(ember.ones(1, 3))
    assert log == [n2]


# ---------------------------------------------------------------------------- lazy modules
def lazy_classes(m):
    nn = m.nn

    class Dense(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.weight = nn.Parameter(m.empty(o, i))
            self.register_buffer("count", m.zeros(o))

        def forward(self, x):
            return x @ self.weight.t() + self.count

    class LazyDense(nn.modules.lazy.LazyModuleMixin, Dense):
        cls_to_become = Dense

        def __init__(self, o):
            super().__init__(0, 0)
            self.o = o
            self.weight = nn.UninitializedParameter()
            self.count = nn.UninitializedBuffer()

        def initialize_parameters(self, x):
            if self.has_uninitialized_params():
                with m.no_grad():
                    self.weight.materialize((self.o, x.shape[-1]))
                    self.count.materialize((self.o,))
                    self.weight.fill_(0.5)
                    self.count.fill_(1.0)

    return Dense, LazyDense


def test_lazy_module_infers_shape():
    def sc(m):
        _Dense, LazyDense = lazy_classes(m)
        lz = LazyDense(2)
        r = [type(lz).__name__, lz.has_uninitialized_params(), repr(lz.weight)]
        r.append(list(lz.state_dict().keys()))
        out = lz(m.ones(4, 3))
        r += [type(lz).__name__, tuple(lz.weight.shape), type(lz.weight).__name__, out]
        r += [type(lz.count).__name__, len(lz._forward_pre_hooks), hasattr(lz, "_load_hook")]
        return r

    same(sc)


def test_lazy_module_load_state_dict_materializes():
    def sc(m):
        Dense, LazyDense = lazy_classes(m)
        src = Dense(3, 2)
        with m.no_grad():
            src.weight.fill_(2.0)
        src.count.fill_(0.0)
        lz = LazyDense(2)
        lz.load_state_dict(src.state_dict())
        r = [tuple(lz.weight.shape), type(lz.weight).__name__, lz.has_uninitialized_params()]
        r.append(type(lz).__name__)
        r.append(lz(m.ones(1, 3)))
        r.append(type(lz).__name__)
        return r

    same(sc)


def test_lazy_not_fully_initialized():
    def sc(m):
        _, LazyDense = lazy_classes(m)

        class Half(LazyDense):
            def initialize_parameters(self, x):
                pass

        Half(2)(m.ones(1, 3))

    raises_same(sc, RuntimeError)


# ---------------------------------------------------------------------------- named parameters
def test_named_parameter_survives_state_dict_to_and_copy():
    Lin = pclasses(ember)[0]
    lin = Lin(3, 2)
    lin.weight.rename_("H", "C")
    w = lin.weight
    sd = lin.state_dict()
    assert sd["weight"].names == ("H", "C")
    fresh = Lin(3, 2)
    fresh.load_state_dict(sd)
    assert fresh.weight.names == ("H", "C")
    # a checkpoint without names (written by PyTorch) leaves the model's names alone
    named = Lin(3, 2)
    named.weight = ember.nn.Parameter(ember.zeros(2, 3, names=("H", "C")))
    named.load_state_dict({k: v.rename(None) for k, v in sd.items()})
    assert named.weight.names == ("H", "C")
    np.testing.assert_allclose(
        named.weight.rename(None).detach().numpy(), Lin(3, 2).weight.detach().numpy()
    )
    lin.double()
    assert lin.weight is w and lin.weight.names == ("H", "C") and lin.weight.dtype == ember.float64
    lin.to(ember.float32)
    assert lin.weight.names == ("H", "C")
    assert copy.deepcopy(lin).weight.names == ("H", "C")
    assert pickle.loads(pickle.dumps(lin)).weight.names == ("H", "C")
    lin.load_state_dict(lin.state_dict(), assign=True)
    assert lin.weight.names == ("H", "C")


def test_assign_load_keeps_layer_names():
    Lin = classes(ember)[0]
    lin = Lin(3, 2)
    lin.weight = ember.nn.Parameter(ember.zeros(2, 3, names=("H", "C")))
    lin.load_state_dict({"weight": ember.ones(2, 3), "bias": ember.ones(2)}, assign=True)
    assert lin.weight.names == ("H", "C") and type(lin.weight).__name__ == "Parameter"
    assert lin.weight.rename(None).tolist() == [[1.0] * 3] * 2
    lin(ember.ones(4, 3, names=("N", "C"))).sum().backward()
    assert lin.weight.grad.names == ("H", "C")
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad.names == ("H", "C")


def test_missing_super_init():
    def sc(m):
        class NoInit(m.nn.Module):
            def __init__(self):
                self.a = 1

            def forward(self, x):
                return x

        NoInit()(1)

    raises_same(sc, AttributeError)


def test_named_parameter_assignment():
    mod = ember.nn.Module()
    mod.weight = ember.nn.Parameter(ember.ones(2, 3, names=("O", "I")))
    assert mod.weight.names == ("O", "I")
    assert mod.state_dict()["weight"].names == ("O", "I")
    assert dict(mod.named_parameters())["weight"].names == ("O", "I")


# ---------------------------------------------------------------------------- misc
def test_incompatible_keys_tuple():
    def sc(m):
        mod = m.nn.Module()
        res = mod.load_state_dict({})
        a, b = res
        return [repr(res), a, b, res._fields]

    same(sc)


def test_module_paths_exist():
    import ember.nn.modules.container as c
    import ember.nn.modules.lazy as lz
    import ember.nn.modules.module as mm
    import ember.nn.parameter as p

    assert mm.Module is ember.nn.Module and c.Sequential is ember.nn.Sequential
    assert lz.LazyModuleMixin is ember.nn.modules.LazyModuleMixin
    assert p.Parameter is ember.nn.Parameter and p.Buffer is ember.nn.Buffer
    from collections import OrderedDict

    assert re.match(r"<.*>", repr(mm.RemovableHandle(OrderedDict())))


def test_lazy_linear_with_mixin():
    if not hasattr(ember.nn, "LazyLinear"):
        pytest.skip("LazyLinear not available")

    def sc(m):
        lz = m.nn.LazyLinear(3).double()
        r = [str(lz.weight.dtype), repr(lz.weight)]
        lz(m.ones(2, 4, dtype=m.float64))
        r += [str(lz.weight.dtype), type(lz).__name__, list(lz.state_dict())]
        l2 = m.nn.LazyLinear(3)
        sd = l2.state_dict()
        r += [list(sd), repr(sd["weight"])]
        l2.load_state_dict(lz.state_dict())
        r += [type(l2).__name__, tuple(l2.weight.shape), str(l2.weight.dtype)]
        return r

    same(sc)
