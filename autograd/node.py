"""A recorded op on the tape. Nodes hold edges to their inputs and what the derivative needs."""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

RESULT = object()  # placeholder in Node.saved for the op's own output


class SavedOutput:
    """What a node keeps of an output it saved, for the in-place check: the output's version
    counter and array, never the tensor (whose grad_fn is the node: a reference cycle that would
    keep the graph alive until Python's cyclic collector runs)."""

    __slots__ = ("_data", "_extra", "_ver")
    grad_fn = None

    def __init__(self, ver: list, data, nr: int) -> None:
        self._ver = ver
        self._data = data
        self._extra = {"nr": nr} if nr else None

    @property
    def dtype(self):
        from ..core.dtype import _FROM_NP

        return _FROM_NP[self._data.dtype]


# torch's names of what a node saved -> the vjp parameter names of ember's ops
_TORCH_SAVED_NAMES = {"self": "input"}


class Node:
    """One backward step (``grad_fn``): the op, the edges to its inputs, what its vjp saved.

    edges: per input, ``(node, output_index)`` for a non-leaf, ``(leaf_tensor, 0)`` for a leaf that
    requires grad, or None. meta: per output, ``(shape, numpy dtype, names)``.
    """

    # the hot attributes are slots set on every node; the rare ones default at class level and
    # live in the instance __dict__ only when set
    __slots__ = ("__dict__", "__weakref__", "edges", "meta", "op", "saved", "vers")
    res = None  # the output arrays, when the vjp saves `result`
    hooks = None  # {output index: [fn(grad) -> grad | None]}; -1: prehooks; -2: backward(inputs=)
    post_hooks = None
    freed = False
    trace = None  # the forward stack, under detect_anomaly
    ctx = None  # a custom Function's ctx
    bname = None  # the name its op's name rule gave, kept when the engine frees ``saved``

    def __init__(self, op, edges, saved, vers, meta):
        self.op = op
        self.edges = edges
        self.saved = saved
        self.vers = vers
        self.meta = meta

    def name(self) -> str:
        if self.bname is not None:
            return self.bname
        rule = getattr(self.op, "name_rule", None)
        # torch names some backward nodes by overload (SumBackward0/1), by the kernel a call ran
        # (matmul: MmBackward0, MvBackward0...) or by index kind: decided here, from what the
        # node saved, so that recording pays nothing for it
        return self.op.backward_name if rule is None else rule(self)

    @property
    def metadata(self) -> dict:
        """A dict of the user's own data about this node (torch's ``Node.metadata``); empty
        until something is stored in it."""
        md = self.__dict__.get("_metadata")
        if md is None:
            md = self.__dict__["_metadata"] = {}
        return md

    def saved_arg(self, param: str):
        """The value saved for the op's vjp parameter ``param`` (an input, an option, or
        ``<input>_shape``)."""
        return self.saved[self.op.saved_names.index(param)]

    def _torch_saved(self, name: str):
        """``grad_fn._saved_<name>``: what the node saved, by torch's name for it (``self``
        for the input, ``other``, ``result``, ``exponent``...); torch's error once backward
        freed it, or once the saved tensor was modified in place."""
        names = getattr(self.op, "saved_names", ())
        key = _TORCH_SAVED_NAMES.get(name, name)
        if key not in names:
            # an op whose vjp names an input otherwise than torch's node does (matmul's ``other``
            # is DotBackward0's ``tensor``, MvBackward0's ``vec``, MmBackward0's ``mat2``)
            key = getattr(self.op, "torch_saved", {}).get(name, key)
        if key not in names:
            raise AttributeError(f"'{self.name()}' object has no attribute '_saved_{name}'")
        from .engine import _saved_args

        return _saved_args(self)[names.index(key)]

    def __getattr__(self, attr):
        # only reached for missing attributes: a custom Function's node exposes its ctx's
        # (saved_tensors, needs_input_grad, user attributes), like torch's FnBackward objects
        ctx = object.__getattribute__(self, "ctx")
        if ctx is None and attr.startswith("_saved_"):
            return self._torch_saved(attr[7:])
        if ctx is None or attr.startswith("__"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")
        try:
            return getattr(ctx, attr)
        except AttributeError:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '{attr}'"
            ) from None

    def _type_name(self) -> str:
        """The node's name as torch prints it (``grad_fn=<CopySlices>``): its type's name, which
        for torch's C++ nodes is ``name()`` without the ``torch::autograd::`` namespace."""
        return self.name().rpartition("::")[2]

    def __repr__(self) -> str:
        # torch's nodes of custom Functions are Python classes of torch.autograd.function and
        # print with that module; its C++ nodes print bare
        where = "torch.autograd.function." if self.ctx is not None else ""
        return f"<{where}{self._type_name()} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        out = []
        edges = self.edges
        if self.ctx is not None:  # a custom Function's node: its tensor inputs only (torch's)
            edges = [e for e, s in zip(edges, self.ctx._in_shapes) if s is not None]
        for e in edges:
            if e is None:
                out.append((None, 0))
            elif isinstance(e[0], Node):
                node = e[0]
                if node.__class__ is Node:
                    node.__class__ = typed(node)
                out.append(e)
            else:
                out.append((AccumulateGrad(e[0]), 0))
        return tuple(out)

    def __call__(self, *grads):
        """Run this node's backward on ``grads`` (one per output): one gradient per entry of
        ``next_functions``, None where that input takes none."""
        from .engine import _call_vjp

        if len(grads) != len(self.meta):
            raise TypeError(f"expected {len(self.meta)} arguments, got {len(grads)} instead")
        out = _call_vjp(self, list(grads))
        return tuple(None if e is None else g for e, g in zip(self.edges, out))

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node's backward; returns a handle."""
        if self.post_hooks is None:
            self.post_hooks = []
        self.post_hooks.append(fn)
        return RemovableHandle(self.post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node's backward; may return new grad_outputs."""
        return self._add_hook(-1, fn)

    def _add_hook(self, idx: int, fn):
        if self.hooks is None:
            self.hooks = {}
        lst = self.hooks.setdefault(idx, [])
        lst.append(fn)
        return RemovableHandle(lst, fn)


# one Node subclass per backward name (torch's node types: MulBackward0, CopySlices...)
_TYPES: dict = {}


def typed(node: Node) -> type:
    """The Node subclass named like ``node``'s torch type: what a node becomes when user code
    first sees it (``Tensor.grad_fn``, ``next_functions``), so that ``type(y.grad_fn).__name__``
    is torch's. Recording makes plain Nodes: naming them costs nothing until looked at."""
    name = node._type_name()
    custom = node.ctx is not None
    cls = _TYPES.get((name, custom))
    if cls is None:
        # torch's C++ nodes live in no module; its custom Functions' in torch.autograd.function
        module = "ember.autograd.function" if custom else "builtins"
        if custom:
            from .function import BackwardCFunction as base
        else:
            base = Node
        cls = type(name, (base,), {"__slots__": (), "__module__": module, "__qualname__": name})
        _TYPES[(name, custom)] = cls
    return cls


def as_torch_node(t, name: str):
    """``t`` with its grad_fn named ``name``: torch runs some composites (attention, a folded
    linear) as kernels whose node the result carries, ember as a few ops. Only for a ``t`` whose
    last node was recorded for this call alone (never an input returned unchanged)."""
    node = t._grad_fn
    if node is not None:
        node.bname = name
    return t


class GradientEdge(NamedTuple):
    """An edge of the graph: the gradient flowing into ``node``'s ``output_nr``-th output
    (torch.autograd.graph.GradientEdge). ``autograd.grad`` takes one in place of a tensor."""

    node: Any
    output_nr: int
    ownership_token: Any = None


class AccumulateGrad:
    """The grad_fn-like object standing for a leaf in ``next_functions``: one per leaf while
    anything holds it (torch's gradient accumulator), so its metadata and hooks stay put."""

    __slots__ = ("__weakref__", "_metadata", "variable")

    def __new__(cls, variable):
        ex = variable._extra
        ref = ex.get("acc") if ex else None
        acc = ref() if ref is not None else None
        if acc is None or acc.variable is not variable:
            acc = object.__new__(cls)
            acc.variable = variable
            acc._metadata = None
            variable._extra = dict(ex or {}, acc=weakref.ref(acc))
        return acc

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    next_functions = ()

    @property
    def metadata(self) -> dict:
        """A dict of the user's own data about this node (torch's ``Node.metadata``)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after the leaf's gradient was accumulated, with
        no grad_inputs (an accumulator feeds nothing) and the accumulated gradient; returns a
        handle."""
        v = self.variable
        if v._extra is None:
            v._extra = {}
        hooks = v._extra.setdefault("acc_post", [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before the leaf's gradient is accumulated and may return new
        grad_outputs (a one-tuple); returns a handle. It is a hook of the leaf's gradient."""

        def hook(g):
            from .engine import _check_hook_results

            r = fn((g,))
            return None if r is None else _check_hook_results(fn, (g,), r)[0]

        return self.variable.register_hook(hook)

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


class RemovableHandle:
    """Returned by register_hook: ``handle.remove()`` unregisters the hook."""

    __slots__ = ("_fn", "_lst")

    def __init__(self, lst: list, fn):
        self._lst = lst
        self._fn = fn

    def remove(self) -> None:
        try:
            self._lst.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
