"""Containers parity with torch: Sequential, ModuleList, ModuleDict, ParameterList,
ParameterDict (indexing, mutation, state_dict keys, repr, errors)."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import ember
import pytest
from test_nn_module import _norm, raises_same, same

torch = pytest.importorskip("torch")


def blocks(m):
    """Small distinct modules written against framework ``m``."""
    nn = m.nn

    class Scale(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k
            self.w = nn.Parameter(m.full((2,), float(k)))

        def forward(self, x):
            return x * self.w

        def extra_repr(self):
            return f"k={self.k}"

    class Plain(nn.Module):
        def forward(self, x):
            return x + 1

    return Scale, Plain


def seq(m, n=3):
    Scale, _ = blocks(m)
    return m.nn.Sequential(*[Scale(i + 1) for i in range(n)])


def ks(container):
    return [getattr(c, "k", type(c).__name__) for c in container]


# ---------------------------------------------------------------------------- Sequential
def test_sequential_forward_and_keys():
    def sc(m):
        s = seq(m)
        return [s(m.ones(2)), list(s.state_dict().keys()), len(s), repr(s)]

    same(sc)


def test_sequential_ordered_dict():
    def sc(m):
        Scale, Plain = blocks(m)
        s = m.nn.Sequential(OrderedDict([("first", Scale(2)), ("act", Plain())]))
        return [list(s.state_dict().keys()), repr(s), s(m.ones(2)), type(s.first).__name__]

    same(sc)


def test_sequential_indexing_and_slicing():
    def sc(m):
        s = seq(m, 5)
        return [
            s[0].k,
            s[-1].k,
            ks(s[1:3]),
            type(s[1:3]).__name__,
            list(s[::2]._modules),
            ks(s[::-1]),
        ]

    same(sc)


def test_sequential_mutation():
    def sc(m):
        Scale, Plain = blocks(m)
        s = seq(m, 4)
        r = []
        s[1] = Plain()
        r.append(ks(s))
        del s[0]
        r.append([ks(s), list(s._modules)])
        del s[1:]
        r.append([ks(s), list(s._modules)])
        s.append(Scale(7))
        s.insert(0, Scale(8))
        s.insert(-1, Scale(9))
        r.append([ks(s), list(s._modules)])
        s.extend([Scale(10), Scale(11)])
        r.append(ks(s))
        p = s.pop(1)
        r.append([type(p).__name__, ks(s), list(s._modules)])
        r.append(ks(s.pop(slice(0, 2))))
        r.append(list(s.state_dict().keys()))
        return r

    same(sc)


def test_sequential_add_mul():
    def sc(m):
        a, b = seq(m, 2), seq(m, 1)
        c = a + b
        r = [ks(c), list(c._modules), type(c).__name__]
        a += b
        r.append(ks(a))
        d = b * 3
        r.append([ks(d), list(d._modules), d[0] is d[1]])
        r.append(ks(2 * b))
        b *= 2
        r.append(ks(b))
        return r

    same(sc)


@pytest.mark.parametrize(
    "action",
    ["index_oob", "index_oob_neg", "add_list", "iadd_list", "mul_float", "mul_zero", "imul_neg"],
)
def test_sequential_errors(action):
    def sc(m):
        s = seq(m, 2)
        if action == "index_oob":
            s[2]
        elif action == "index_oob_neg":
            s[-3]
        elif action == "add_list":
            s + [1]
        elif action == "iadd_list":
            s += [1]
        elif action == "mul_float":
            s * 1.5
        elif action == "mul_zero":
            s * 0
        elif action == "imul_neg":
            s *= -1

    raises_same(sc)


def test_sequential_insert_errors():
    raises_same(lambda m: seq(m, 2).insert(5, m.nn.Module()), IndexError)
    raises_same(lambda m: seq(m, 2).insert(0, 3), AssertionError)


def test_sequential_dir_and_iter():
    def sc(m):
        s = seq(m, 2)
        return [any(k.isdigit() for k in dir(s)), [type(x).__name__ for x in iter(s)]]

    same(sc)


def test_sequential_nested_repr_and_keys():
    def sc(m):
        Scale, Plain = blocks(m)
        s = m.nn.Sequential(seq(m, 2), Plain(), m.nn.Sequential(Scale(5), m.nn.Sequential()))
        return [repr(s), list(s.state_dict().keys()), [k for k, _ in s.named_modules()]]

    same(sc)


# ---------------------------------------------------------------------------- ModuleList
def test_module_list():
    def sc(m):
        Scale, Plain = blocks(m)
        ml = m.nn.ModuleList([Scale(1), Scale(2)])
        r = [len(ml), ml[0].k, ml[-1].k, type(ml[:1]).__name__, ks(ml[::-1])]
        ml.append(Plain())
        ml.extend([Scale(3), Scale(4)])
        ml.insert(1, Scale(9))
        r.append(ks(ml))
        ml[0] = Scale(0)
        del ml[2]
        r.append([ks(ml), list(ml._modules)])
        del ml[::2]
        r.append([ks(ml), list(ml._modules)])
        r.append(type(ml.pop(0)).__name__)
        ml += [Scale(5)]
        r.append(ks(ml))
        both = ml + m.nn.ModuleList([Plain()])
        r.append([type(both).__name__, ks(both)])
        r.append(list(ml.state_dict().keys()))
        r.append([k for k, _ in ml.named_parameters()])
        return r

    same(sc)


def test_module_list_repr_compresses_repeats():
    def sc(m):
        Scale, Plain = blocks(m)
        ml = m.nn.ModuleList([Scale(1), Scale(1), Scale(1), Plain(), Scale(2), Scale(2)])
        outer = m.nn.Sequential(ml, m.nn.ModuleList())
        return [repr(ml), repr(m.nn.ModuleList()), repr(outer)]

    same(sc)


def test_module_list_errors():
    raises_same(lambda m: m.nn.ModuleList()[0], IndexError)
    raises_same(lambda m: m.nn.ModuleList().extend(3), TypeError)
    raises_same(lambda m: m.nn.ModuleList([3]), TypeError)
    raises_same(lambda m: m.nn.ModuleList()(1), NotImplementedError)


# ---------------------------------------------------------------------------- ModuleDict
def test_module_dict():
    def sc(m):
        Scale, Plain = blocks(m)
        md = m.nn.ModuleDict({"b": Scale(1), "a": Plain()})
        r = [list(md.keys()), len(md), "a" in md, list(iter(md))]
        md["c"] = Scale(3)
        md.update([("d", Scale(4))])
        md.update(OrderedDict([("e", Plain())]))
        md.update(m.nn.ModuleDict({"f": Scale(6)}))
        r.append(list(md.keys()))
        del md["a"]
        r.append(type(md.pop("b")).__name__)
        r.append([k for k, _ in md.items()])
        r.append([type(v).__name__ for v in md.values()])
        r.append(list(md.state_dict().keys()))
        r.append(repr(md))
        md.clear()
        r.append(len(md))
        return r

    same(sc)


def test_module_dict_errors():
    raises_same(lambda m: m.nn.ModuleDict().update(3), TypeError)
    raises_same(lambda m: m.nn.ModuleDict().update([3]), TypeError)
    raises_same(lambda m: m.nn.ModuleDict().update([("a",)]), ValueError)
    raises_same(lambda m: m.nn.ModuleDict()["x"], KeyError)


# ---------------------------------------------------------------------------- ParameterList
def test_parameter_list():
    def sc(m):
        pl = m.nn.ParameterList([m.ones(2), m.nn.Parameter(m.zeros(3))])
        r = [len(pl), [type(p).__name__ for p in pl], pl[0].requires_grad]
        pl.append(m.ones(1, 2, dtype=m.float64))
        pl.append("not a tensor")
        pl.extend([m.zeros(4)])
        r.append([type(p).__name__ for p in pl])
        r.append([k for k, _ in pl.named_parameters()])
        r.append(list(pl.state_dict().keys()))
        r.append(repr(pl))
        pl[0] = m.full((2,), 5.0)
        r.append(pl[0])
        r.append([len(pl[1:3]), type(pl[1:3]).__name__, len(pl[::-1])])
        pl += [m.ones(1)]
        r.append(len(pl))
        return r

    same(sc)


def test_parameter_list_errors():
    raises_same(lambda m: m.nn.ParameterList()[0], IndexError)
    raises_same(lambda m: m.nn.ParameterList().extend(m.ones(2)), TypeError)
    raises_same(lambda m: m.nn.ParameterList()(1), RuntimeError)


def test_parameter_list_in_module_trains():
    def sc(m):
        class M(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.ps = m.nn.ParameterList([m.ones(2), m.full((2,), 2.0)])

            def forward(self, x):
                for p in self.ps:
                    x = x * p
                return x

        mod = M().double()
        mod(m.ones(2, dtype=m.float64)).sum().backward()
        return [
            list(mod.state_dict().keys()),
            [p.grad for p in mod.parameters()],
            str(mod.ps[0].dtype),
        ]

    same(sc)


# ---------------------------------------------------------------------------- ParameterDict
def test_parameter_dict():
    def sc(m):
        pd = m.nn.ParameterDict({"b": m.ones(2), "a": m.nn.Parameter(m.zeros(3))})
        r = [list(pd.keys()), len(pd), "a" in pd, type(pd["b"]).__name__]
        pd["c"] = m.ones(1, dtype=m.float64)
        pd["obj"] = 3
        pd.update([("d", m.ones(2))])
        pd.update(OrderedDict([("z", m.ones(1)), ("y", m.ones(1))]))
        r.append(list(pd.keys()))
        r.append(list(reversed(pd)))
        r.append(repr(pd))
        r.append([k for k, _ in pd.named_parameters()])
        r.append(list(pd.state_dict().keys()))
        r.append(pd.get("nope", "dflt"))
        r.append(pd.setdefault("e", m.zeros(1)).tolist())
        r.append(type(pd.pop("obj")).__name__)
        k, v = pd.popitem()
        r.append([k, type(v).__name__])
        cp = pd.copy()
        r.append([type(cp).__name__, cp["a"] is pd["a"], list(cp.keys())])
        r.append(list(pd.fromkeys(["x", "w"], m.ones(1)).keys()))
        u = pd | m.nn.ParameterDict({"q": m.ones(1)})
        r.append(list(u.keys()))
        pd |= m.nn.ParameterDict({"r": m.ones(1)})
        r.append(list(pd.keys()))
        r.append([type(v).__name__ for v in pd.values()])
        del pd["a"]
        pd.clear()
        r.append(len(pd))
        return r

    same(sc)


def test_parameter_dict_errors():
    raises_same(lambda m: m.nn.ParameterDict()[1], TypeError)
    raises_same(lambda m: m.nn.ParameterDict().update(3), TypeError)
    raises_same(lambda m: m.nn.ParameterDict().update([3]), TypeError)
    raises_same(lambda m: m.nn.ParameterDict().update([("a",)]), ValueError)
    raises_same(lambda m: m.nn.ParameterDict()(1), RuntimeError)
    raises_same(lambda m: m.nn.ParameterDict()(), TypeError)
    raises_same(lambda m: m.nn.ParameterDict()["x"], AttributeError)


# ---------------------------------------------------------------------------- copies
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_containers_copy(how):
    s = ember.nn.Sequential(
        ember.nn.ModuleList([ember.nn.Module()]),
        ember.nn.ModuleDict({"a": ember.nn.Module()}),
        ember.nn.ParameterList([ember.ones(2)]),
        ember.nn.ParameterDict({"p": ember.ones(3)}),
    )
    c = copy.deepcopy(s) if how == "deepcopy" else pickle.loads(pickle.dumps(s))
    assert list(c.state_dict().keys()) == list(s.state_dict().keys()) == ["2.0", "3.p"]
    assert c[2][0] is not s[2][0]
    assert type(c[2][0]).__name__ == "Parameter"
    assert _norm(repr(c)) == _norm(repr(s))


def test_containers_to_double_keeps_identity():
    def sc(m):
        pl = m.nn.ParameterList([m.ones(2)])
        pd = m.nn.ParameterDict({"a": m.ones(2)})
        s = m.nn.Sequential(m.nn.Sequential(), m.nn.Module())
        s.add_module("pl", pl)
        s.add_module("pd", pd)
        p0, pa = pl[0], pd["a"]
        s.double()
        return [
            pl[0] is p0,
            pd["a"] is pa,
            str(pl[0].dtype),
            str(pd["a"].dtype),
            list(s.state_dict()),
        ]

    same(sc)
