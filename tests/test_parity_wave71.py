"""Parity regressions found by the seventy-first wave, a seeded random fuzz of autograd through
views and in-place ops against torch (small programs mixing views: strided slices, select,
transpose, view/reshape, unsqueeze, expand, diagonal, split/chunk/unbind outputs, unfold,
as_strided, narrow, real/imag, detach; in-place ops on views and bases: arithmetic, clamp_, relu_,
sigmoid_, exp_, copy_, fill_, zero_, masked_fill_, index_add_, scatter_, setitem with slices,
bools and index tensors, t_/transpose_/unsqueeze_; ops saving their input or output; no_grad,
inference_mode and set_grad_enabled sections; retain_grad, hooks, detach_ and requires_grad_ on
views; backward twice and autograd.grad; values, errors, grad_fn names, versions, is_leaf,
requires_grad, _base and leaf gradients compared, torch is the oracle): a leaf made not to
require grad after the graph was built (``detach_()``, ``requires_grad_(False)``) still got a
``.grad`` (torch's AccumulateGrad skips it); ``y.copy_(src)`` on a non-leaf sent nothing to
``y``'s old history (torch's CopyBackwards sends zeros: its leaves get a zero ``.grad``); the
changed-saved-tensor error named a complex or bool tensor ``torch.ComplexDoubleTensor`` (torch:
``CPUComplexDoubleType``); ``x[:] = v`` / ``x[..., 0:n] = v`` on a leaf named a view of a leaf
(torch writes into the leaf itself for slices it skips) while ``x[True] = v`` and
``x[mask, 0:2] = v`` named the leaf; an in-place op on a view of a leaf whose base was
detach_()'d since (or on a view given requires_grad_()) was allowed or named the leaf (torch
refuses it as a view of a leaf, its base need not require grad now), also for the metadata ops
(unsqueeze_, t_, transpose_; as_strided_ and set_ checked only for a leaf), which also skipped
the split-output (as_strided_/set_ also the no_grad-view) refusal, and whose node on a square
view (``v.t_()``) or from a squeeze_ removing nothing was replaced by a replay from the base;
after an in-place op on a view the view kept the op's node, so its gradient bypassed the base's
new history (the base's retained grad and hooks missed it; torch regenerates the view's node from
the base, ``AsStridedBackward0``), and a view's retained grad stayed on its stale node when its
base changed in place; a view made under no_grad, inference_mode or set_grad_enabled(False) of a
tensor requiring grad did not require grad (torch's does, as a leaf no gradient reaches: ops on
it record nodes with an empty edge, and backward through them runs), nor refused its grad_fn,
is_leaf and recorded ops once its base changed in place; ``is_leaf`` of a split output whose
base changed in place did not raise torch's error. Left alone: such a view's ``requires_grad``
is torch's live reading of its base's (ember's is fixed when the view is made: a later
``detach_()`` of the base or ``requires_grad_(False)`` of the view differs); ``_base`` of a view
of a ``detach()``-ed tensor (torch: the detached tensor; ember: the storage's root) and of views
of inference tensors; max(dim)/min(dim) keeping their values output and input for backward
(torch keeps only the indices: an in-place change of either is a false error); hooks on a view's
old node still running after an in-place op on the view (torch's CopySlices bypasses it); and
writes through overlapping views (expand, unfold) in grad mode, whose values and nodes follow
torch's memory order."""

from __future__ import annotations

import random
import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import raises_like_torch, same_error
from harness import same_grads_or_error as _both
from harness import upstream as _up

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_MSG = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


def _x(T, shape=(3, 4), rg=True):
    a = np.arange(1.0, 1.0 + int(np.prod(shape))).reshape(shape) / 7.0
    return T.tensor(a, requires_grad=rg)


# ---------------------------------------------------------------------- AccumulateGrad
@pytest.mark.parametrize("how", ["detach_", "requires_grad_"])
def test_leaf_that_stopped_requiring_grad_gets_no_grad(how):
    def f(T):
        x = _x(T)
        y = x.clone() * 2
        x.detach_() if how == "detach_" else x.requires_grad_(False)
        (y * _up(T, y)).sum().backward()
        return [x.grad]

    assert _both(f) == [None]


@pytest.mark.parametrize("src_rg", [False, True])
def test_copy_into_nonleaf_sends_zeros_to_old_history(src_rg):
    """torch's CopyBackwards keeps self's old history, which gets zeros (not nothing)."""

    def f(T):
        x = _x(T)
        s = _x(T, (4,), rg=src_rg)
        y = x * 1.5
        y.copy_(s * 2)
        (y * _up(T, y)).sum().backward()
        return [x.grad, s.grad]

    assert not _both(f)[0].any()


@pytest.mark.parametrize("dtype", ["complex128", "float64", "bool"])
def test_changed_saved_tensor_named_by_torch_type(dtype):
    """The version error names a tensor with no legacy class by its backend type."""

    def f(T):
        x = _x(T, (3,)).to(getattr(T, dtype)) if dtype != "bool" else _x(T, (3,))
        y = x.exp() if dtype != "bool" else (x > 1)
        z = (y * 2).sum() if dtype != "bool" else x.where(y, x * 2).sum()
        (y.mul_(2) if dtype != "bool" else y.logical_not_())
        z.abs().backward()

    same_error(f, RuntimeError)


# ---------------------------------------------------------------------- leaf write messages
@pytest.mark.parametrize(
    "key, view",
    [
        (slice(None), False),
        (slice(0, 100), False),
        ((Ellipsis, slice(0, 5)), False),
        ((Ellipsis, slice(0, 4)), True),
        ((slice(None), Ellipsis), False),
        (slice(1, None), True),
        (slice(-3, None), True),  # (torch skips a slice that starts at 0 as written only)
        (True, True),
        ((slice(None), True), True),
        ("mask", True),  # x[mask, 0:2]: the mask covers two dims, the slice the third
    ],
)
def test_setitem_on_a_leaf_names_view_or_leaf(key, view):
    def f(T):
        x = _x(T, (3, 4, 5))
        k = (T.ones(3, 4, dtype=T.bool), slice(0, 2)) if key == "mask" else key
        x[k] = 1.0

    assert same_error(f, RuntimeError) == (VIEW_LEAF_MSG if view else LEAF_MSG)


@pytest.mark.parametrize(
    "op", ["mul_", "setitem", "unsqueeze_", "t_", "transpose_", "as_strided_", "set_"]
)
@pytest.mark.parametrize("how", ["", "detach_", "requires_grad_(False)", "view requires_grad_"])
def test_inplace_on_view_of_leaf_that_no_longer_requires_grad(op, how):
    def f(T):
        if how == "view requires_grad_":
            v = _x(T, rg=False)[1:]
            v.requires_grad_()
        else:
            x = _x(T)
            v = x[1:]
            if how:
                x.detach_() if how == "detach_" else x.requires_grad_(False)
        if op == "setitem":
            v[:] = 2.0
        elif op == "as_strided_":
            v.as_strided_((2,), (1,))
        elif op == "set_":
            v.set_(T.zeros(2, dtype=T.float64))
        else:
            getattr(v, op)(*{"mul_": (2.0,), "unsqueeze_": (0,), "transpose_": (0, 1)}.get(op, ()))

    raises_like_torch(f, RuntimeError, VIEW_LEAF_MSG)


_META_OPS = {
    "t_": lambda T, v: v.t_(),
    "transpose_": lambda T, v: v.transpose_(0, 1),
    "unsqueeze_": lambda T, v: v.unsqueeze_(0),
    "as_strided_": lambda T, v: v.as_strided_((2,), (1,)),
    "set_": lambda T, v: v.set_(T.zeros(2, dtype=T.float64)),
}


@pytest.mark.parametrize("op", list(_META_OPS))
def test_metadata_inplace_on_split_output_refused_as_multi_view(op):
    def f(T):
        _META_OPS[op](T, (_x(T, (4, 4)) * 1).split(2)[0])

    assert same_error(f, RuntimeError).startswith("Output 0 of Split is a view")


@pytest.mark.parametrize("op", ["t_", "squeeze_", "transpose_"])
def test_metadata_inplace_on_view_keeps_its_node(op):
    """A square view's t_() (or a squeeze_() that removes nothing) keeps torch's node: the
    view is not replayed from its base as if its values had changed."""

    def f(T):
        x = _x(T, (4, 4))
        v = (x * 1)[1:3, 1:3]
        getattr(v, op)(*{"transpose_": (0, 1)}.get(op, ()))
        names.append(type(v.grad_fn).__name__)
        (v * _up(T, v)).sum().backward()
        return [x.grad]

    names = []
    _both(f)
    assert names[0] == names[1]


@pytest.mark.parametrize("op", ["as_strided_", "set_"])
def test_metadata_inplace_on_view_made_without_grad_refused(op):
    def f(T):
        x = _x(T)
        with T.no_grad():
            v = x[1:]
        _META_OPS[op](T, v)

    assert same_error(f, RuntimeError).startswith("A view was created in no_grad mode")


# ---------------------------------------------------------------------- in-place on a view
@pytest.mark.parametrize("view", ["slice", "select", "t"])
@pytest.mark.parametrize("op", ["mul_", "copy_", "setitem"])
def test_inplace_on_view_flows_through_base(view, op):
    """The view's node is regenerated from the base (torch's name), and its gradient passes
    through the base's new node: the base's retained grad sees it."""

    def f(T):
        x = _x(T)
        y = x * 1.5
        v = {"slice": lambda: y[1:], "select": lambda: y[1], "t": lambda: y.t()}[view]()
        if op == "mul_":
            v.mul_(2.0)
        elif op == "copy_":
            v.copy_(_x(T, tuple(v.shape)).exp())
        else:
            v[0] = 3.0
        y.retain_grad()
        names.append(type(v.grad_fn).__name__)
        (v * _up(T, v)).sum().backward()
        return [y.grad, x.grad]

    names = []
    _both(f)
    assert names[0] == names[1] == "AsStridedBackward0"


@pytest.mark.parametrize("where", ["base", "view"])
def test_view_retained_grad_follows_regenerated_node(where):
    def f(T):
        x = _x(T)
        y = x * 1.5
        v = y[1:]
        v.retain_grad()
        (y if where == "base" else v).mul_(2.0)
        loss = (v * _up(T, v)).sum() + (y * _up(T, y).flip(0)).sum()
        loss.backward()
        return [v.grad, x.grad]

    _both(f)


def test_is_leaf_of_split_output_after_base_changed_raises():
    def f(T):
        y = _x(T, (4, 3)) * 1
        s = y.split(2)[1]
        y.mul_(2)
        return s.is_leaf

    assert same_error(f, RuntimeError).startswith("Output 1 of Split is a view and its base")


# ---------------------------------------------------------------------- views made without grad
_MODES = {
    "no_grad": lambda T: T.no_grad(),
    "inference_mode": lambda T: T.inference_mode(),
    "set_grad_enabled": lambda T: T.set_grad_enabled(False),
}
_VIEWS = {
    "transpose": lambda x: x.transpose(0, 1),
    "getitem": lambda x: x[1],
    "slice": lambda x: x[:, 1:],
    "unbind": lambda x: x.unbind(1)[2],
    "view": lambda x: x.view(-1),
}


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize("view", list(_VIEWS))
def test_view_made_without_grad_requires_grad_with_no_edge(mode, view):
    """torch: such a view requires grad (as its base does) and is a leaf; ops on it record a
    node whose edge to it is empty, so backward runs and no gradient reaches the base."""

    def f(T):
        x = _x(T)
        with _MODES[mode](T):
            v = _VIEWS[view](x)
        flags.append((v.requires_grad, v.is_leaf, v.grad_fn is None))
        z = v.exp() * 2
        flags.append((z.requires_grad, type(z.grad_fn).__name__))
        (z * _up(T, z)).sum().backward()
        try:  # (but it is no root of its own)
            v.backward(_up(T, v))
        except RuntimeError as e:
            flags.append(str(e))
        return [x.grad, v.grad]

    flags = []
    assert _both(f) == [None, None]
    assert flags[:3] == flags[3:]


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("use", ["grad_fn", "is_leaf", "op"])
def test_view_made_without_grad_refused_once_its_base_changed(mode, use):
    def f(T):
        y = _x(T) * 1
        with _MODES[mode](T):
            v = y.unbind(0)[1]
        y.mul_(2)
        return {"grad_fn": lambda: v.grad_fn, "is_leaf": lambda: v.is_leaf, "op": lambda: v * 2}[
            use
        ]()

    assert "its base or another view of its base has been modified" in same_error(f)


# ---------------------------------------------------------------------- a seeded mini-fuzz
_VIEW_STEPS = {  # (t, dim, start, size of dim, rng)
    "unsqueeze": lambda t, d, a, n, rng: t.unsqueeze(0),
    "reshape": lambda t, d, a, n, rng: t.reshape(-1),
    "detach": lambda t, d, a, n, rng: t.detach(),
    "slice": lambda t, d, a, n, rng: t[(slice(None),) * d + (slice(a, None, rng.choice([1, 2])),)],
    "select": lambda t, d, a, n, rng: t.select(d, a),
    "narrow": lambda t, d, a, n, rng: t.narrow(d, a, n - a),
    "split": lambda t, d, a, n, rng: t.split(2, d)[0],
    "unbind": lambda t, d, a, n, rng: t.unbind(d)[-1],
    "transpose": lambda t, d, a, n, rng: t.transpose(0, 1),
    "diagonal": lambda t, d, a, n, rng: t.diagonal(0, 0, 1),
}
_OP_STEPS = {
    "exp": lambda t: t.exp(),
    "sigmoid": lambda t: t.sigmoid(),
    "tanh": lambda t: t.tanh(),
    "sum": lambda t: t.sum(),
    "pow": lambda t: t.pow(2),
    "mul": lambda t: t * t,
    "cumsum": lambda t: t.cumsum(0 if t.dim() else -1),
    "sort": lambda t: t.sort(-1)[0],
}


def _program(T, seed):
    """A random program of views, in-place ops and ops, then a backward; returns its trace."""
    rng = random.Random(seed)
    nrg = np.random.default_rng(seed)
    trace, pool = [], []

    def obs(tag, t):
        if not isinstance(t, (torch.Tensor, ember.Tensor)):
            trace.append((tag, t))
            return
        try:
            gf = t.grad_fn
            gf = None if gf is None else type(gf).__name__
            leaf = t.is_leaf
        except RuntimeError as e:
            gf = leaf = str(e)
        trace.append((tag, tuple(t.shape), gf, t._version, leaf, t.requires_grad, t._base is None))
        trace.append((tag, t.detach().numpy().copy()))

    x = T.tensor(nrg.standard_normal(rng.choice([(4, 6), (3, 4, 5), (6,)])), requires_grad=True)
    pool += [x, x * 1.5]
    no_grad_views = False
    for s in range(rng.randint(3, 8)):
        t = rng.choice(pool)
        sh, nd = tuple(t.shape), t.dim()
        d = rng.randrange(nd) if nd else 0
        kind = rng.choice(
            ["view"] * 4 + ["inplace"] * 4 + ["op", "op", "retain", "detach_", "mode"]
        )
        try:
            if kind == "detach_" and no_grad_views:
                kind = "retain"  # (torch's such views read their base's requires_grad live)
            if kind == "mode":  # a view made without grad
                no_grad_views = True
                m = rng.choice(list(_MODES))
                with _MODES[m](T):
                    r = _VIEW_STEPS[rng.choice(["reshape", "unsqueeze", "detach"])](t, d, 0, 1, rng)
                pool.append(r)
                obs(kind + "." + m, r)
            elif kind == "view":
                opts = ["unsqueeze", "reshape", "detach"]
                if nd and all(sh):
                    opts += ["slice", "select", "narrow", "split", "unbind"]
                if nd >= 2:
                    opts += ["transpose", "diagonal"]
                v = rng.choice(opts)
                kind += "." + v
                n = sh[d] if nd else 1
                a = rng.randrange(n)
                r = _VIEW_STEPS[v](t, d, a, n, rng)
                pool.append(r)
                obs(kind, r)
            elif kind == "inplace":
                opts = ["add_", "mul_", "clamp_", "sigmoid_", "fill_", "copy_", "setitem"]
                if nd:
                    opts += ["setitem_idx", "masked_fill_", "unsqueeze_"]
                if nd == 2:
                    opts += ["t_"]
                v = rng.choice(opts)
                kind += "." + v
                if v == "copy_":
                    src = T.tensor(nrg.standard_normal(sh))
                    t.copy_(src * pool[1].sum() if rng.random() < 0.5 else src)
                elif v == "setitem":
                    t[...] = 0.5
                elif v == "setitem_idx":
                    t[T.tensor([0])] = 2.0
                elif v == "masked_fill_":
                    t.masked_fill_(T.tensor(nrg.random(sh) > 0.5), -1.0)
                else:
                    args = {"add_": (1.0,), "mul_": (2.0,), "clamp_": (-0.5, 0.5), "fill_": (0.25,)}
                    getattr(t, v)(*({"unsqueeze_": (0,)}.get(v) or args.get(v, ())))
                obs(kind, t)
            elif kind == "op":
                v = rng.choice(["exp", "sigmoid", "tanh", "pow", "mul", "sum", "cumsum", "sort"])
                kind += "." + v
                r = _OP_STEPS[v](t)
                pool.append(r)
                obs(kind, r)
            elif kind == "retain":
                t.retain_grad()
                obs(kind, t)
            else:
                t.detach_()
                obs(kind, t)
        except RuntimeError as e:
            trace.append((kind, "error", str(e)))
            if kind.startswith("inplace"):
                return trace  # (torch may have written before it raised)
    roots = [t for t in pool if t.requires_grad]
    if roots:
        t = rng.choice(roots)
        try:
            (t * T.tensor(nrg.standard_normal(tuple(t.shape)) + 2.0)).sum().backward()
            trace += [("grad", None if p.grad is None else p.grad.numpy().copy()) for p in pool]
        except RuntimeError as e:
            trace.append(("backward", "error", str(e).split(": [")[0]))
    return trace


@pytest.mark.parametrize("block", range(5))
def test_mini_fuzz(block):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (.grad of non-leaves)
        for seed in range(30 * block, 30 * block + 30):
            want, got = _program(torch, seed), _program(ember, seed)
            assert len(want) == len(got), seed
            for w, g in zip(want, got):
                if isinstance(w[-1], np.ndarray) or isinstance(g[-1], np.ndarray):
                    assert w[0] == g[0], (seed, w, g)
                    assert (w[-1] is None) == (g[-1] is None), (seed, w, g)
                    np.testing.assert_allclose(g[-1], w[-1], rtol=1e-9, atol=1e-12)
                else:
                    assert w == g, seed
