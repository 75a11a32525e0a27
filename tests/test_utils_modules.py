"""torch.utils._pytree, torch.utils.hooks, torch.utils.dlpack, torch.types, torch.storage and
torch._dynamo as ember provides them, against torch."""

from __future__ import annotations

import collections
import warnings

import ember
import ember._dynamo as edyn
import ember.utils._pytree as ep
import pytest
from ember.utils import dlpack as edl
from ember.utils import hooks as eh

torch = pytest.importorskip("torch")
tp = pytest.importorskip("torch.utils._pytree")

P = collections.namedtuple("P", "x y")
TREES = [
    5,
    None,
    [],
    {},
    [1, 2],
    (1, [2, (3, 4)]),
    {"b": [1, (2, 3)], "a": None, "c": collections.OrderedDict(x=4, y=[5])},
    P(1, [2, 3]),
    collections.defaultdict(list, {"k": 1, "j": [2]}),
    collections.deque([1, [2]], maxlen=4),
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_unflatten_match_torch(tree):
    el, es = ep.tree_flatten(tree)
    tl, ts = tp.tree_flatten(tree)
    assert el == tl
    assert repr(es) == repr(ts)
    assert es.num_leaves == ts.num_leaves and es.num_nodes == ts.num_nodes
    new = list(range(100, 100 + len(el)))
    assert ep.tree_unflatten(new, es) == tp.tree_unflatten(new, ts)
    assert ep.tree_map(lambda v: (v, 0), tree) == tp.tree_map(lambda v: (v, 0), tree)


def test_map_with_rests_only_any_all_is_leaf():
    a, b = [1, [2, 3]], [10, [20, 30]]
    assert ep.tree_map(lambda x, y: x + y, a, b) == tp.tree_map(lambda x, y: x + y, a, b)
    c = [1, 2]
    d = [[3], (4,)]  # a leaf of the first tree matches a subtree of the others
    assert ep.tree_map(lambda x, y: (x, y), c, d) == tp.tree_map(lambda x, y: (x, y), c, d)
    t = [1, "s", 2.0, [3]]
    for fn in ("tree_map_only",):
        for kind in (int, (int, float), int | float, lambda v: v == 1):
            f = lambda v: -1
            assert getattr(ep, fn)(kind, f, t) == getattr(tp, fn)(kind, f, t)
    assert ep.tree_all(lambda v: v != 0, t) == tp.tree_all(lambda v: v != 0, t)
    assert ep.tree_any_only(int, lambda v: v > 2, t) == tp.tree_any_only(int, lambda v: v > 2, t)
    assert ep.tree_all_only(int, lambda v: v > 2, t) == tp.tree_all_only(int, lambda v: v > 2, t)
    leafy = lambda v: isinstance(v, list) and len(v) == 1
    assert ep.tree_leaves(t, is_leaf=leafy) == tp.tree_leaves(t, is_leaf=leafy)
    assert ep.tree_structure((1, [2])) == ep.tree_structure((5, [6]))
    assert ep.tree_structure((1, [2])) != ep.tree_structure((1, [2, 3]))


@pytest.mark.parametrize(
    "args",
    [
        ([1, 2], [3, 4, 5]),
        ([1, 2], (3, 4)),
        ({"a": 1}, {"b": 2}),
    ],
)
def test_mismatch_errors_match_torch(args):
    with pytest.raises(ValueError) as want:
        tp.tree_map(lambda *v: v, *args)
    with pytest.raises(ValueError) as got:
        ep.tree_map(lambda *v: v, *args)
    assert str(got.value) == str(want.value)


def test_unflatten_length_error_and_registration():
    with pytest.raises(ValueError) as want:
        tp.tree_unflatten([1], tp.tree_structure([1, 2]))
    with pytest.raises(ValueError) as got:
        ep.tree_unflatten([1], ep.tree_structure([1, 2]))
    assert str(got.value) == str(want.value)

    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    ep.register_pytree_node(Box, lambda x: ([x.a, x.b], None), lambda v, _: Box(*v))
    leaves, spec = ep.tree_flatten(Box(1, [2, 3]))
    assert leaves == [1, 2, 3]
    assert repr(spec) == "TreeSpec(Box, None, [*,\n  TreeSpec(list, None, [*,\n    *])])"
    back = ep.tree_unflatten([7, 8, 9], spec)
    assert (back.a, back.b) == (7, [8, 9])
    with pytest.raises(ValueError, match="is already registered as pytree node"):
        ep.register_pytree_node(Box, lambda x: ([], None), lambda v, _: Box(0, 0))


def test_hooks_module():
    assert eh.RemovableHandle is ember.nn.modules.module.RemovableHandle
    x = ember.ones(2, requires_grad=True)

    @eh.unserializable_hook
    def quiet(g):
        return g

    x.register_hook(quiet)
    y = (ember.ones(2, requires_grad=True) * 2).requires_grad_()
    y.register_hook(lambda g: g)
    y.retain_grad()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        eh.warn_if_has_hooks(x)
        eh.warn_if_has_hooks(y)
    assert len(got) == 1
    assert "on tensor will not be serialized.  If this is expected" in str(got[0].message)


def test_dlpack_round_trips_share_memory():
    x = ember.arange(6.0).reshape(2, 3)
    y = edl.from_dlpack(edl.to_dlpack(x))
    t = torch.utils.dlpack.from_dlpack(edl.to_dlpack(x))
    z = edl.from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(2, dtype=torch.float64)))
    x[0, 0] = 100.0
    assert float(y[0, 0]) == 100.0 and float(t[0, 0]) == 100.0
    assert z.dtype == ember.float64 and z.tolist() == [1.0, 1.0]
    cap = edl.to_dlpack(x)
    edl.from_dlpack(cap)
    msg = "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed"
    with pytest.raises(RuntimeError, match=msg):
        edl.from_dlpack(cap)


def test_types_and_storage_names():
    import ember.types as et

    assert ember.types is et
    assert isinstance(3, et.Number) and isinstance("cpu", et.Device)
    assert not isinstance(3, ember.SymInt) and et.Storage is ember.UntypedStorage


@pytest.fixture
def alias(ember_alias):
    return ember_alias("torch_um")


def test_dynamo_and_module_paths_through_the_alias(alias):
    import torch_um._dynamo
    import torch_um._dynamo.config as cfg
    import torch_um.storage
    import torch_um.types
    import torch_um.utils._pytree
    import torch_um.utils.hooks

    assert torch_um._dynamo is edyn and torch_um.utils._pytree is ep
    assert torch_um.storage.UntypedStorage is ember.UntypedStorage
    assert torch_um.types is ember.types
    tc = torch._dynamo.config
    saved = (tc.suppress_errors, tc.cache_size_limit)
    try:
        for c in (cfg, tc):
            c.suppress_errors = True
            c.cache_size_limit = 64
        assert (cfg.suppress_errors, cfg.recompile_limit) == (
            tc.suppress_errors,
            tc.recompile_limit,
        )
    finally:
        tc.suppress_errors, tc.cache_size_limit = saved
        cfg.suppress_errors, cfg.cache_size_limit = False, 8
    msgs = []
    for c in (cfg, tc):
        with pytest.raises(AttributeError) as e:
            c.not_an_option = 1
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    x = ember.ones(3, 4)
    edyn.mark_dynamic(x, 5)  # like torch: dims are not checked when marked
    edyn.reset()
    assert edyn.disable(lambda a: a + 1)(x).sum().item() == 24.0
    assert edyn.optimize("inductor")(lambda a: a * 2)(x).sum().item() == 24.0
    assert edyn.is_compiling() is False
    assert edyn.list_backends() == torch._dynamo.list_backends()
    with pytest.raises(NotImplementedError, match="no graph capture"):
        edyn.explain(lambda a: a)
