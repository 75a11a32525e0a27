"""The backward engine: iterative, dependency-counted, frees what it consumed.

The engine (not each op) reduces broadcast gradients to the input's shape, casts them to the
input's dtype and stamps the input's names on them, so ``w.grad.names == w.names`` always.
"""

from __future__ import annotations

import operator
import warnings
import weakref

from ..core import dtype as _dtm
from ..core import names as _nm
from ..core import tensor as _tm
from ..core.device import array_module
from ..core.named import _by_name
from ..core.registry import NonStridedError
from ..core.sparse import SparseTensor as _SparseTensor
from ..core.torch_function import OFF as _TF_OFF
from ..core.vmap_state import TRANSFORMS as _TRANSFORMS
from .grad_mode import _state, names_on
from .node import RESULT, AccumulateGrad, GradientEdge, Node, RemovableHandle
from .saved_hooks import Packed
from .views import _multi_error as _multi_view_error
from .views import fresh as _fresh_view

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def _check_versions(node: Node) -> None:
    for t, v in node.vers:
        if t._ver[0] != v:
            ex = t._extra
            nr = ex.get("nr", 0) if ex else 0
            # a saved output names the node that made it; a saved input its current grad_fn
            fn = node if node.res and any(t._data is r for r in node.res) else t._grad_fn
            short = _short_name(fn) if fn is not None else None
            if fn is not node and fn is not None and ex and ex.get("base") is not None:
                if ex.get("cm"):  # torch refuses to regenerate such a view first
                    raise RuntimeError(_multi_view_error(t))
                if not ex.get("detached"):
                    short = "AsStrided"  # torch regenerates a changed view's grad_fn so
            where = f", which is output {nr} of {short}," if fn is not None else ""
            hint = (
                "Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere "
                "later. Good luck!"
                if _state.anomaly
                else "Hint: enable anomaly detection to find the operation that failed to compute "
                "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
            )
            kind = _dtm.cpu_type_name(t.dtype)
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{kind} {list(t._data.shape)}]{where} is at "
                f"version {t._ver[0]}; expected version {v} instead. {hint}"
            )


def _short_name(fn) -> str:
    """torch names the node without its 'Backward' here, and without a 0 after it (``output 0
    of Mul`` for MulBackward0, ``of Pow1`` for PowBackward1)."""
    name = fn.name()
    i = name.rfind("Backward")
    rest = name[i + 8 :]
    if i > 0 and (rest.isdigit() or not rest):
        return name[:i] + ("" if rest in ("", "0") else rest)
    return name


def _saved_args(node: Node) -> list:
    saved = node.saved
    if saved is None:
        raise RuntimeError(_FREED_MSG)
    if node.vers:
        _check_versions(node)
    if node.res is None:
        return saved
    args = []
    for s in saved:
        if s is RESULT:
            # the output, rebuilt around its saved array with this node as its grad_fn
            a = node.res[0]
            r = _tm._wrap(a.get()._data if type(a) is Packed else a, node.meta[0][2])
            r._grad_fn = node
            r.requires_grad = True
            s = r
        elif type(s) is Packed:  # saved under saved_tensors_hooks: what unpack gives back
            s = s.get()
        args.append(s)
    return args


def _conform(g, meta):
    """Reduce a broadcast gradient to the input's shape, cast it to its dtype, stamp its names."""
    shape, npd, names = meta
    if g._data.shape != shape:
        g = g.sum_to_size(shape)
    if g._data.dtype is not npd:
        if g._data.dtype.kind == "c" and npd.kind != "c":
            g = g.real  # a complex gradient reaching a real input keeps its real part, like torch
        g = g.to(_dtm._FROM_NP[npd])
    if g._names != names:
        g = g.rename(*names) if names is not None else g.rename(None)
    return g


def _call_hooks(hooks, g):
    for h in list(hooks):
        with names_on():  # user code: names flow in it (g.sum('C')), unlike the derivative math
            r = h(g)
        if r is not None:
            _check_hook_result(h, g, r)
            if r._names is not g._names and r._names != g._names:
                r = _hook_names(h, g, r)
            g = r
    return g


def _call_hooks_none(hooks) -> None:
    for h in list(hooks):
        with names_on():
            r = h(None)
        if r is not None:
            _check_hook_result(h, None, r)  # refused: nothing to replace


def _hook_name(h) -> str:
    return getattr(h, "__name__", "<unknown>")


def _type_str(t) -> str:
    return _dtm.device_type_name(t.dtype, t.device.type)


def _check_hook_result(h, old, new) -> None:
    """A hook may replace a gradient, not change its type or size (torch's messages)."""
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, _tm.Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new._data.dtype is not old._data.dtype or new.device != old.device:
        raise RuntimeError(
            f"hook '{_hook_name(h)}' has changed the type of value "
            f"(was {_type_str(old)} got {_type_str(new)})"
        )
    if new._data.shape != old._data.shape:
        raise RuntimeError(f"hook '{_hook_name(h)}' has changed the size of value")


def _hook_names(h, old, new):
    """A hook's replacement gradient is named like the gradient it replaces (spec 4.1: a gradient
    is named like its tensor): unnamed dims take those names, a clash is an error naming both."""
    return _nm.named_like(
        new,
        old._names,
        lambda got, want: (
            f"hook '{_hook_name(h)}' returned a gradient named {got}, which does "
            f"not match the gradient's names {want}"
        ),
    )


def _check_hook_results(h, old, new) -> list:
    """A node hook's replacement tuple: one value (or None) per gradient."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(
            f"hook '{_hook_name(h)}' has returned an incorrect number of values "
            f"(got {len(new)}, but expected {len(old)})"
        )
    for o, n in zip(old, new):
        if n is not None:
            _check_hook_result(h, o, n)
    return list(new)


def _post_hooks(node, in_grads, grad_outputs, handed):
    """fn(grad_inputs, grad_outputs) after the node's backward; a returned tuple replaces the
    grad_inputs. They are conformed first, so hooks see each input's shape, as in torch."""
    in_grads = list(in_grads)
    for j, e in enumerate(node.edges):
        g = in_grads[j] if j < len(in_grads) else None
        if g is not None and e is not None:
            target, nr = e
            in_grads[j] = _conform(
                g, target.meta[nr] if isinstance(target, Node) else _leaf_meta(target)
            )
    for h in node.post_hooks:
        with names_on():
            r = h(tuple(in_grads), grad_outputs)
        if r is not None:
            in_grads = _check_hook_results(h, in_grads, r)
    for g in in_grads:  # a hook may keep what it saw
        if g is not None:
            _hand(handed, g._data)
    return tuple(in_grads)


def _hand(handed: set, a) -> None:
    """Mark array ``a`` (and the array it views) as held by others: a .grad gets a copy."""
    handed.add(id(a))
    b = a.base
    if b is not None:
        handed.add(id(b))


def _has_leaf_hooks(t) -> bool:
    ex = t._extra
    return bool(ex and (ex.get("hooks") or ex.get("post_acc_hooks")))


def _count_leaf(pend, t):
    if pend is None:
        pend = {}
    p = pend.get(id(t))
    if p is None:
        pend[id(t)] = [1, None]
    else:
        p[0] += 1
    return pend


def _pend_leaf(pend, t, g):
    """Add one contribution to a hooked leaf's sum; the sum once the last one arrived, else None."""
    p = pend[id(t)]
    if g is not None:
        p[1] = g if p[1] is None else _named_sum(p[1], g)
    p[0] -= 1
    if p[0]:
        return None
    g, p[1] = p[1], None
    return g


def _zeros(like, meta):
    """A zero gradient for an output that received none (on ``like``'s device)."""
    shape, npd, names = meta
    return _tm._wrap(array_module(like._data).zeros(shape, npd), names)


def _leaf_meta(t):
    a = t._data
    return (a.shape, a.dtype, t._names)


def run_backward(roots, root_grads, retain_graph, create_graph, capture=None, only=None):
    """:func:`_run_backward` with ``__torch_function__`` dispatch off: derivative formulas see
    Tensor subclasses as plain Tensors (as torch's C++ formulas do), so gradients are plain."""
    # (the flag itself, not DisableTorchFunctionSubclass: its with-block cost ~2 us a backward)
    off = _TF_OFF[0]
    _TF_OFF[0] = True
    try:
        return _run_backward(roots, root_grads, retain_graph, create_graph, capture, only)
    finally:
        _TF_OFF[0] = off


def _run_backward(roots, root_grads, retain_graph, create_graph, capture=None, only=None):
    """The engine. roots: output tensors; root_grads: one gradient tensor per root.

    capture: tensors whose gradients are returned (autograd.grad) instead of accumulated.
    only: the tensors that backward(inputs=...) restricts accumulation to.
    """
    # 1. discover the graph and count each node's consumers
    deps: dict = {}
    stack = []
    for t in roots:
        fn = t._grad_fn
        if fn is not None and fn not in deps:
            deps[fn] = 0
            stack.append(fn)
    root_nodes = list(stack)
    # leaves with hooks, like torch's AccumulateGrad: id -> [contributions to come, their sum];
    # their hooks run once, on the summed gradient
    pend = None
    for t in roots:
        if t._grad_fn is None and _has_leaf_hooks(t):
            pend = _count_leaf(pend, t)
    order = []
    while stack:
        n = stack.pop()
        order.append(n)
        for e in n.edges:
            if e is not None:
                m = e[0]
                if isinstance(m, Node):
                    if m in deps:
                        deps[m] += 1
                    else:
                        deps[m] = 1
                        stack.append(m)
                elif m._extra is not None and _has_leaf_hooks(m):
                    pend = _count_leaf(pend, m)
    # where gradients are captured (autograd.grad) or restricted to (backward(inputs=...))
    cap_nodes = {}  # (node, output index) -> capture index, or -1 for backward(inputs=[non_leaf])
    cap_leaves = {}  # id(leaf) -> capture index
    results = None
    targets = capture if capture is not None else only
    if targets is not None:
        results = [None] * len(targets)
        for i, t in enumerate(targets):
            if type(t) is GradientEdge:  # autograd.grad's input given as a graph edge
                if isinstance(t.node, AccumulateGrad):
                    cap_leaves[id(t.node.variable)] = i
                else:
                    cap_nodes[(t.node, t.output_nr)] = i
            elif t._grad_fn is not None:
                ex = t._extra
                cap_nodes[(t._grad_fn, ex.get("nr", 0) if ex else 0)] = (
                    i if capture is not None else -1
                )
            else:
                cap_leaves[id(t)] = i
    needed = _needed_nodes(order, cap_nodes, cap_leaves) if targets is not None else None
    # ids of arrays others may hold (the caller's gradients, arrays a hook saw, .grads already
    # set): never stored as a .grad as-is, since .grad is later accumulated in place
    handed: set = set()
    for g in root_grads:
        _hand(handed, g._data)

    # 2. seed the root gradients
    buffers: dict = {}
    for t, g in zip(roots, root_grads):
        fn = t._grad_fn
        if fn is None:
            if g._names is not t._names and g._names != t._names:
                g = _conform(g, _leaf_meta(t))  # a view: still the caller's, never stored as-is
            if pend is not None and id(t) in pend:
                g = _pend_leaf(pend, t, g)
                if g is None:
                    continue
            _deliver_leaf(t, g, capture, results, cap_leaves, create_graph, handed)
            continue
        ex = t._extra
        nr = ex.get("nr", 0) if ex else 0
        buf = buffers.get(fn)
        if buf is None:
            buf = buffers[fn] = [None] * len(fn.meta)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    ready = [n for n in root_nodes if deps[n] == 0]

    # 3. run the nodes in dependency order
    anomaly = _state.anomaly
    prev = _state.enabled
    _state.enabled = create_graph
    by_name = _by_name.on
    _by_name.on = False  # derivatives broadcast by position, as they were recorded
    names_off = _state.names_off
    _state.names_off = True
    RUNS.append(_Run(order, needed, targets, root_nodes))
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            in_grads = None
            if grads is not None:
                if node.hooks:
                    grads = _node_hooks(node, grads, create_graph, handed)
                if cap_nodes:
                    for k, g in enumerate(grads):
                        i = cap_nodes.get((node, k))
                        if i is not None and g is not None and i >= 0:
                            results[i] = g
                if needed is None or node in needed:
                    saved = node.saved
                    if (
                        node.res is None
                        and node.ctx is None
                        and len(grads) == 1
                        and saved is not None
                        and not anomaly
                    ):
                        # the common case, inlined: one output, saved values used as they are
                        vers = node.vers
                        if vers:
                            for t, v in vers:
                                if t._ver[0] != v:
                                    _check_versions(node)  # raises, naming the tensor
                        in_grads = node.op.vjp(grads[0], *saved)
                        if type(in_grads) is not tuple:
                            in_grads = (in_grads,)
                    else:
                        in_grads = _run_node(node, grads)
                        if node.ctx is not None:  # the user's backward may keep what it returns
                            for g in in_grads:
                                if g is not None:
                                    _hand(handed, g._data)
                    if node.post_hooks:
                        in_grads = _post_hooks(node, in_grads, tuple(grads), handed)
            # like torch, a pass frees only the nodes it runs: grad(g, u) through a double-
            # backward graph leaves the first-order graph it does not need usable
            if not retain_graph and node.vers is not None and (needed is None or node in needed):
                if getattr(node.op, "name_rule", None) is not None:
                    node.bname = node.name()  # the name reads what is freed here
                node.saved = None
                node.res = None
                node.vers = None  # releases the saved outputs' arrays
            for j, e in enumerate(node.edges):
                if e is None:
                    continue
                target, nr = e
                g = in_grads[j] if in_grads is not None else None
                if isinstance(target, Node):
                    if g is not None:
                        meta = target.meta[nr]
                        try:
                            gd = g._data
                        except NonStridedError:  # a sparse gradient goes on dense through ops
                            g = g.to_dense()
                            gd = g._data
                        if (
                            gd.shape != meta[0]
                            or gd.dtype is not meta[1]
                            or g._names is not meta[2]
                        ):
                            g = _conform(g, meta)
                        buf = buffers.get(target)
                        if buf is None:
                            buf = buffers[target] = [None] * len(target.meta)
                        old = buf[nr]
                        buf[nr] = g if old is None else _named_sum(old, g)
                    c = deps[target] - 1
                    deps[target] = c
                    if c == 0:
                        ready.append(target)
                else:
                    if g is not None:
                        a = target._data
                        try:
                            gd = g._data
                        except NonStridedError:  # a sparse gradient (embedding(sparse=True))
                            gd = None  # is a leaf's as it is
                        if gd is not None and (
                            a.shape != gd.shape
                            or a.dtype is not gd.dtype
                            or g._names is not target._names
                        ):
                            g = _conform(g, _leaf_meta(target))
                    if pend is not None and id(target) in pend:
                        g = _pend_leaf(pend, target, g)
                    if g is None:
                        continue
                    _deliver_leaf(
                        target,
                        g,
                        capture,
                        results,
                        cap_leaves,
                        create_graph,
                        handed,
                        only is not None,
                    )
    finally:
        _state.enabled = prev
        _by_name.on = by_name
        _state.names_off = names_off
        RUNS.pop()
    return results


class _Run:
    """A backward pass while it runs: which tensors it computes a gradient for (asked by
    graph.register_multi_grad_hook; worked out only then)."""

    def __init__(self, order, needed, targets, roots=()):
        self.order, self.needed, self.targets, self.roots = order, needed, targets, roots
        self._nodes = self._leaves = None

    def computes(self, t) -> bool:
        fn = t._grad_fn
        if fn is not None:
            if self._nodes is None:
                # torch does not count the nodes of the pass's own outputs as ones it runs
                nodes = set(self.order) if self.needed is None else set(self.needed)
                self._nodes = nodes.difference(self.roots)
            return fn in self._nodes
        if self.targets is not None and not any(x is t for x in self.targets):
            return False
        if self._leaves is None:
            self._leaves = {
                id(e[0])
                for n in self.order
                for e in n.edges
                if e is not None and not isinstance(e[0], Node)
            }
        return id(t) in self._leaves


RUNS: list = []  # the backward passes running now, innermost last


def _sparse_sum(old, g, create_graph: bool):
    """A leaf's .grad when a sparse gradient is involved, as torch accumulates: sparse + sparse
    stays sparse, a dense .grad takes a sparse gradient in place, else the sum is dense."""
    if old is None:
        return g
    if type(old) is not _SparseTensor and not create_graph and old._grad_fn is None:
        from ..core.ops.indexing import _add_at

        a = old._data
        _add_at(array_module(a), a, tuple(g._ci._data), g._vals._data.astype(a.dtype))
        old._ver[0] += 1
        return old
    if type(g) is not _SparseTensor:
        return g + old
    s = old + g
    if type(old) is type(s) is _SparseTensor and not create_graph and old._grad_fn is None:
        # torch adds a sparse gradient into a sparse .grad in place: a held .grad sees the sum
        for k in _SparseTensor.__slots__:
            setattr(old, k, getattr(s, k))
        return old
    return s


def _named_sum(a, b):
    """a + b for two gradients of one tensor (same names): the engine runs with name inference
    off, so the sum gets the names back here."""
    s = a + b
    s._names = b._names
    return s


def _deliver_leaf(t, g, capture, results, cap_leaves, create_graph, handed, restricted=False):
    if capture is not None:
        i = cap_leaves.get(id(t))
        if i is not None:
            g = _leaf_hooks(t, g)
            results[i] = g if results[i] is None else _named_sum(results[i], g)
    elif not restricted or id(t) in cap_leaves:
        _accumulate(t, g, create_graph, handed)


def _node_hooks(node, grads, create_graph, handed):
    hooks = node.hooks
    for k, hs in hooks.items():
        if k >= 0 and hs:
            if grads[k] is not None:
                grads[k] = _call_hooks(hs, grads[k])
            else:  # an output the pass gives no gradient: torch's tensor hooks see None
                _call_hooks_none(hs)
    for h in hooks.get(-1, ()):
        with names_on():
            r = h(tuple(grads))
        if r is not None:
            grads = _check_hook_results(h, grads, r)
    for g in grads:  # a hook may keep what it saw: never stored as a .grad as-is
        if g is not None:
            _hand(handed, g._data)
    for ref in hooks.get(-2, ()):  # backward(inputs=[non_leaf]): accumulate like a leaf
        t = ref()
        if t is not None:
            ex = t._extra
            g = grads[ex.get("nr", 0) if ex else 0]
            if g is not None:
                _accumulate(t, g, create_graph, handed)
    return grads


def _needed_nodes(order, cap_nodes, cap_leaves):
    """Nodes from which a capture target is reachable (the others need not run)."""
    holders = {n for n, _ in cap_nodes}
    needed = set()
    changed = True
    while changed:  # order is a DFS pre-order from the roots: reversed, this settles quickly
        changed = False
        for n in reversed(order):
            if n in needed:
                continue
            hit = n in holders
            if not hit:
                for e in n.edges:
                    if e is not None and (
                        e[0] in needed if isinstance(e[0], Node) else id(e[0]) in cap_leaves
                    ):
                        hit = True
                        break
            if hit:
                needed.add(n)
                changed = True
    return needed


def _run_node(node: Node, grads: list):
    try:
        out = _call_vjp(node, grads)
    except Exception:
        if _state.anomaly:  # torch warns with the node's forward traceback, then re-raises
            from .anomaly import report

            report(node)
        raise
    if _state.anomaly:
        from .anomaly import check_nan

        check_nan(node, out)
    return out


def _call_vjp(node: Node, grads: list):
    op = node.op
    if node.freed:
        raise RuntimeError(_FREED_MSG)
    if node.ctx is not None:  # a custom Function: it materializes missing grads itself, and
        return op.vjp(node, list(grads))  # reads (and checks) its saved tensors through ctx
    args = _saved_args(node)
    if len(grads) == 1:
        g = grads[0]
    else:
        like = next(x for x in grads if x is not None)
        g = tuple(
            grads[k] if grads[k] is not None or op.none_grads else _zeros(like, node.meta[k])
            for k in range(min(op.n_diff_out, len(grads)))
        )
        if len(g) == 1:
            g = g[0]
    out = op.vjp(g, *args)
    if type(out) is not tuple:
        out = (out,)
    return out


def _leaf_hooks(leaf, g, handed=None):
    ex = leaf._extra
    if ex and ex.get("hooks"):
        g = _call_hooks(ex["hooks"], g)
        if handed is not None:
            _hand(handed, g._data)  # the hooks saw g and may keep it
    return g


def _like_leaf(la, g):
    """``g`` copied into the strides of the leaf's array ``la`` when those are dense (numpy's
    empty_like keeps a dense array's strides), else ``g`` in row-major order."""
    xp = array_module(la)
    out = xp.empty_like(la, dtype=g._data.dtype)
    if out.strides != la.strides:
        # la overlaps or has gaps (a slice with steps, an expanded view): no layout to follow,
        # and torch's layout contract then asks for a contiguous .grad
        a = g._data
        return g if a.flags.c_contiguous else _tm._wrap(xp.ascontiguousarray(a), g._names)
    out[...] = g._data
    return _tm._wrap(out, g._names)


def _accumulate(leaf, g, create_graph: bool, handed: set) -> None:
    g = _leaf_hooks(leaf, g, handed)
    if not leaf.requires_grad:
        return  # detach_() or requires_grad_(False) after the graph was built: torch skips it
    if not create_graph and g._grad_fn is not None:
        g = g.detach()
    old = leaf._grad
    if type(g) is _SparseTensor or type(old) is _SparseTensor:
        leaf._grad = _sparse_sum(old, g, create_graph)
    elif old is None:
        a = g._data
        flags = a.flags
        b = a.base
        if (
            id(a) in handed
            or (b is not None and id(b) in handed)
            or not getattr(flags, "writeable", True)
            or not (flags.c_contiguous or flags.f_contiguous)
        ):
            # others may hold g's memory (the caller, a hook, another .grad), or g is a
            # broadcast/strided view: .grad gets its own copy (named like g), as torch's does,
            # since later backwards accumulate into it in place
            c = g.detach().clone() if not create_graph else g.clone()
            c._names = g._names
            g = c
        la = leaf._data
        ga = g._data
        if (
            ga.strides != la.strides
            and not create_graph
            and not (la.flags.c_contiguous and ga.flags.c_contiguous)  # size-1 dims' strides
        ):
            # torch's layout contract: .grad has its leaf's strides (a channels_last leaf's
            # grad is channels_last, a contiguous leaf's is contiguous whatever g's layout)
            g = _like_leaf(la, g)
        _hand(handed, g._data)
        leaf._grad = g
    elif old._names is not g._names and old._names != g._names:
        old = old.rename(*_nm.names_of(g))  # the leaf was renamed since: its grad follows
        leaf._grad = _named_sum(old, g)
    elif (
        create_graph or old._grad_fn is not None or not getattr(old._data.flags, "writeable", True)
    ):
        leaf._grad = _named_sum(old, g)  # out of place, like torch under create_graph
    else:
        # in place, like torch: references to .grad (an optimizer's, the user's) stay current
        old._data += g._data
        old._ver[0] += 1
    ex = leaf._extra
    if ex:
        if ex.get("post_acc_hooks"):
            for h in ex["post_acc_hooks"]:
                with names_on():
                    r = h(leaf)
                if r is not None:
                    if not isinstance(r, _tm.Tensor):  # torch's binding refuses it first
                        raise TypeError(
                            f"expected Variable, but hook returned '{type(r).__name__}'"
                        )
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        if ex.get("acc_post"):  # AccumulateGrad.register_hook: (grad_inputs=(), (g,))
            for h in list(ex["acc_post"]):
                with names_on():
                    r = h((), (g,))
                if r is not None:
                    _check_hook_results(h, (), r)


def _make_root_grads(roots, grads, who: str):
    Tensor = _tm.Tensor
    out = []
    # torch's order: each (output, gradient) pair is checked as zip pairs them, then the count
    # (more gradients are ignored), then whether each output requires grad and, for a given
    # gradient, its device
    for i, t in enumerate(roots):
        if grads is None:
            g = None
        elif i < len(grads):
            g = grads[i]
        else:
            raise RuntimeError(f"got {len(roots)} tensors and {len(grads)} gradients")
        if not isinstance(t, Tensor):
            raise AssertionError("Expected output to be a torch.Tensor")  # noqa: TRY004 (torch's)
        _fresh_view(t)
        if g is None:
            if not t.requires_grad:
                out.append(None)  # refused below
                continue
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._data.dtype.kind not in "fV":  # complex too: d(complex)/dx needs a chosen grad
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"torch.{t.dtype.name}"
                )
            g = _tm._wrap(array_module(t._data).ones(t._data.shape, t._data.dtype), t._names)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(
                    f"gradients can be either Tensors or None, but got {type(g).__name__}"
                )
            if g._data.shape != t._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size("
                    f"{list(g.shape)}) and output[{i}] has a shape of torch.Size({list(t.shape)})."
                )
            if g.dtype is not t.dtype:
                if (g._data.dtype.kind == "c") != (t._data.dtype.kind == "c"):
                    raise RuntimeError(
                        "For complex Tensors, both grad_output and output are required to have "
                        f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                        f"torch.{g.dtype.name} and output[{i}] has a dtype of torch.{t.dtype.name}."
                    )
                g = g.to(t.dtype)  # torch casts an upstream gradient to its output's dtype
            if g._names is not t._names and g._names != t._names:
                g = _named_root_grad(g, t, i, who)
        out.append(g)
    for i, t in enumerate(roots):
        ex = t._extra
        if not t.requires_grad or (t._grad_fn is None and ex and "ngr" in ex):
            # (a view made under no_grad requires grad as its base does, but is no root)
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if grads is not None and out[i].device != t.device:
            raise RuntimeError(
                f"invalid gradient at index {i} - expected device {t.device} but got "
                f"{out[i].device}"
            )
    return out


_GRAD_ARG = {"backward": "grad_tensors", "grad": "grad_outputs"}


def _named_root_grad(g, t, i: int, who: str):
    """An upstream gradient must unify with its output's names (a mismatch is an error naming
    both lists); it then carries the output's names, so every gradient below is named alike."""
    if g._names is not None and t._names is not None:
        try:
            _nm.unify(g._names, t._names)
        except RuntimeError as e:
            raise RuntimeError(
                f"{who}: the gradient's names {list(g._names)} ({_GRAD_ARG[who]}[{i}]) do not match "
                f"the output's names {list(t._names)}: {e}"
            ) from None
    return g.rename(*t._names) if t._names is not None else g.rename(None)


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, (_tm.Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _capture_key(t):
    """What identifies a gradient autograd.grad is asked for (a tensor or a graph edge): a
    leaf, or a node's output (so a tensor and its edge share one capture slot)."""
    if type(t) is GradientEdge:
        node = t.node
        return id(node.variable) if isinstance(node, AccumulateGrad) else (id(node), t.output_nr)
    fn = t._grad_fn
    if fn is None:
        return id(t)
    ex = t._extra
    return id(fn), ex.get("nr", 0) if ex else 0


# > 0 while a backward computes only some gradients (autograd.grad, backward(inputs=...)):
# utils.checkpoint's recomputation accumulates into .grad and must refuse to run then
PARTIAL = [0]


_CYCLE_WARNED = [False]  # backward(create_graph=True)'s reference-cycle warning, given once


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """ember.autograd.backward: accumulate gradients of ``tensors`` into the leaves' ``.grad``."""
    if _TRANSFORMS[0]:  # torch refuses it before looking at the arguments
        raise RuntimeError(
            "backward() called inside a functorch transform. This is not supported, please use "
            "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
            "transforms."
        )
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    only = None
    if inputs is not None:
        only = _as_tuple(inputs)
        if not only:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in only:
            if type(t) is GradientEdge:
                continue
            if not isinstance(t, _tm.Tensor):
                raise RuntimeError(  # noqa: TRY004  (torch's error type)
                    f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}"
                )
            _fresh_view(t)
            if not t.requires_grad:  # torch's text: it retains the inputs' gradients
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            if t._grad_fn is not None:
                _register_nonleaf_target(t)
    grads = _make_root_grads(tensors, grad_tensors, "backward")
    if type(retain_graph) is not bool or type(create_graph) is not bool:
        _engine_flags(retain_graph, create_graph)
    if create_graph and not _CYCLE_WARNED[0]:
        _CYCLE_WARNED[0] = True  # torch warns once per process
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.",
            UserWarning,
            stacklevel=3,
        )
    if only is None:
        run_backward(tensors, grads, retain_graph, create_graph)
        return
    PARTIAL[0] += 1
    try:
        run_backward(tensors, grads, retain_graph, create_graph, only=only)
    finally:
        PARTIAL[0] -= 1


def _engine_flags(*flags) -> None:
    """torch's engine binding reads its flags (retain_graph, create_graph, allow_unused) as C
    unsigned bytes: anything with ``__index__`` in 0..255, else CPython's own errors."""
    for v in flags:
        if type(v) is bool:
            continue
        i = operator.index(v)  # "'str' object cannot be interpreted as an integer"
        if i < 0:
            raise OverflowError("unsigned byte integer is less than minimum")
        if i > 255:
            raise OverflowError("unsigned byte integer is greater than maximum")


def _register_nonleaf_target(t) -> None:
    node = t._grad_fn
    if node.hooks is None:
        node.hooks = {}
    refs = node.hooks.setdefault(-2, [])
    if not any(r() is t for r in refs):
        refs.append(weakref.ref(t))


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """ember.autograd.grad: the gradients of ``outputs`` with respect to ``inputs`` (not accumulated)."""
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if not allow_unused and materialize_grads:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in inputs:
        if type(t) is GradientEdge:
            continue
        if not isinstance(t, _tm.Tensor):
            raise RuntimeError(  # noqa: TRY004  (torch's error type)
                f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}"
            )
        _fresh_view(t)
    if retain_graph is None:
        retain_graph = create_graph
    grad_outputs = _as_tuple(grad_outputs)
    # the binding's flag errors come after the gradients' checks, before the engine's own
    flagged = not (type(retain_graph) is type(create_graph) is type(allow_unused) is bool)
    if is_grads_batched:
        if flagged:
            _engine_flags(retain_graph, create_graph, allow_unused)
        _check_differentiated(inputs)
        return _grad_batched(
            outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
            materialize_grads,
        )  # fmt: skip
    grads = _make_root_grads(outputs, grad_outputs, "grad")
    if flagged:
        _engine_flags(retain_graph, create_graph, allow_unused)
    _check_differentiated(inputs)  # after the outputs' checks, as in torch
    # the same tensor (or edge) twice: one capture slot
    uniq = list({_capture_key(t): t for t in inputs}.values())
    PARTIAL[0] += 1
    try:
        res = run_backward(outputs, grads, retain_graph, create_graph, capture=uniq)
    finally:
        PARTIAL[0] -= 1
    if len(uniq) != len(inputs):
        slot = {_capture_key(t): k for k, t in enumerate(uniq)}
        res = [res[slot[_capture_key(t)]] for t in inputs]
    for i, r in enumerate(res):
        if r is None:
            if materialize_grads and type(inputs[i]) is GradientEdge:
                raise RuntimeError(  # an edge has no tensor to take zeros like
                    "materialize_grads cannot be used when the given input is a GradientEdge"
                )
            if materialize_grads:
                from ..core.ops.creation import zeros_like

                res[i] = zeros_like(inputs[i], requires_grad=bool(create_graph))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have "
                    "been used in the graph. Set allow_unused=True if this is the "
                    "desired behavior."
                )
        elif not create_graph and r._grad_fn is not None:
            res[i] = r.detach()
    return tuple(res)


def _check_differentiated(inputs) -> None:
    for t in inputs:
        if type(t) is not GradientEdge and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, mat):
    """``grad(..., is_grads_batched=True)``: dim 0 of each grad_output is a batch. torch vmaps
    the backward; here it runs once per batch entry (the graph kept until the last) and the
    gradients are stacked, which gives the same values, shapes and graph."""
    from ..core.ops.creation import zeros_like
    from ..core.ops.shape import stack

    given = tuple(grad_outputs or ())
    missing = [o for i, o in enumerate(outputs) if i >= len(given) or given[i] is None]
    # torch makes the implicit ones (refusing non-scalar outputs), then maps over their dim 0
    # too: a 0-d one cannot be mapped
    if missing and any(g._data.ndim == 0 for g in _make_root_grads(missing, None, "grad")):
        raise ValueError(
            "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that "
            "input is a Tensor of dimensionality 0 so expected in_dim to satisfy "
            "0 <= in_dim < 0."
        )
    sizes = []
    for i, (out, g) in enumerate(zip(outputs, given)):
        if not isinstance(g, _tm.Tensor):
            continue
        first = g[0]
        if first._data.shape != out._data.shape:
            # torch's message shows first.shape[1:] (it slices the batch dim off twice)
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of torch.Size({list(first.shape[1:])}) "
                f"and output[{i}] has a shape of torch.Size({list(out.shape)}). If you only want "
                "some tensors in `grad_output` to be considered batched, consider using vmap."
            )
        sizes.append(g._data.shape[0])
    if not sizes:  # no batched grad_output: nothing to map over (torch's implicit-grad errors)
        return grad(outputs, inputs, grad_outputs, retain_graph, create_graph, True, allow_unused)
    if len(set(sizes)) > 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    n = sizes[0]
    per = []
    for b in range(n):
        gos = [g[b] if isinstance(g, _tm.Tensor) else g for g in grad_outputs]
        keep = retain_graph if b == n - 1 else True
        per.append(grad(outputs, inputs, gos, keep, create_graph, True, allow_unused))
    res = []
    for i, t in enumerate(inputs):
        col = [r[i] for r in per]
        if not col or col[0] is None:
            res.append(zeros_like(t) if mat else None)
        else:
            res.append(stack(col))
    return tuple(res)


# torch's names of dtypes in the grad-assignment error (C++ type, ScalarType)
_C_TYPE = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}
_SCALAR_TYPE = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def check_grad_assignment(t, g):
    """``t.grad = g``: same shape, dtype and device; names unify (an unnamed g takes t's names)."""
    if not isinstance(g, _tm.Tensor):
        from ..core.arg_errors import type_name  # CPython's tp_name: numpy.ndarray

        raise TypeError(
            f"assigned grad expected to be a Tensor or None but got grad of type {type_name(g)}"
        )
    if g is t:
        raise RuntimeError("can't assign Variable as its own grad")
    if g.dtype is not t.dtype:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{_C_TYPE.get(g.dtype.name, g.dtype.name)}'"
            f" to a tensor with grad_dtype '{_SCALAR_TYPE.get(t.dtype.name, t.dtype.name)}'. The "
            "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
            "set the tensor's grad_dtype attribute with a specific dtype, or None to allow any "
            "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
            "may break downstream systems that assume they match."
        )
    if g.device != t.device:
        raise RuntimeError(
            f"attempting to assign a gradient with device type '{g.device.type}' to "
            f"a tensor with device type '{t.device.type}'. Please ensure that the "
            "gradient and the tensor are on the same device"
        )
    if tuple(g.shape) != t._data.shape:
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(g.shape)}' to a "
            f"tensor of size '{list(t._data.shape)}'. Please ensure that the "
            "gradient and the tensor are the same size"
        )
    if type(g) is _SparseTensor:  # a dense tensor takes a sparse COO gradient, as in torch
        if not g.is_sparse:
            raise RuntimeError(
                "attempting to assign a gradient to a tensor that has data of a different type"
            )
        return g
    if g._names is t._names or g._names == t._names:
        return g
    return _nm.named_like(
        g,
        t._names,
        lambda got, want: f"assigned grad's names {got} do not match the tensor's names {want}",
    )


def register_tensor_hook(t, hook):
    _fresh_view(t)
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._grad_fn is None:
        if t._extra is None:
            t._extra = {}
        hooks = t._extra.setdefault("hooks", [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)
    ex = t._extra
    nr = ex.get("nr", 0) if ex else 0
    handle = t._grad_fn._add_hook(nr, hook)
    keep = ex.get("retain_hook") if ex else None
    if keep is not None:  # like torch, .grad retains the gradient after every hook
        lst = t._grad_fn.hooks[nr]
        if keep in lst:
            lst.remove(keep)
            lst.append(keep)
    return handle


def register_post_accumulate_grad_hook(t, hook):
    """hook(tensor) runs after a leaf's .grad was accumulated by backward."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if t._extra is None:
        t._extra = {}
    hooks = t._extra.setdefault("post_acc_hooks", [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def retain_grad(t) -> None:
    _fresh_view(t)
    if not t.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t._grad_fn is None:
        return
    if t._extra is None:
        t._extra = {}
    if t._extra.get("retains_grad"):
        return
    t._extra["retains_grad"] = True
    ref = weakref.ref(t)

    def keep(g):
        x = ref()
        if x is not None and g is not None:
            # a copy, like torch's: g may become a leaf's .grad, which is updated in place
            if x._grad is None:
                c = g.detach().clone()
                c._names = g._names
                x._grad = c
            else:
                x._grad = x._grad + g.detach()

    # runs after the user's hooks on this tensor: append to the same list (kept last)
    ex = t._extra
    ex["retain_hook"] = keep
    ex["retain_at"] = t._grad_fn._add_hook(ex.get("nr", 0), keep)


def move_retain_hook(t) -> None:
    """An in-place op gave ``t`` a new grad_fn: its retained gradient follows it (torch keeps
    the gradient of the tensor's current value), the old node's hook is dropped."""
    ex = t._extra
    ex["retain_at"].remove()
    ex["retain_at"] = t._grad_fn._add_hook(ex.get("nr", 0), ex["retain_hook"])
