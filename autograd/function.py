"""Custom differentiable functions: ``class MyFn(ember.autograd.Function)`` with static
``forward``/``backward`` (torch's API), recorded on the tape as a node named ``MyFnBackward``."""

from __future__ import annotations

import functools
import inspect
import warnings
import weakref

import numpy as np

from ..core import tensor as _tm
from ..core.device import array_module
from ..core.names import unify
from ..core.vmap import TRANSFORMS
from .grad_mode import _state, names_on
from .node import Node
from .saved_hooks import HOOKS as _SAVED_HOOKS
from .saved_hooks import pack_node

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "InplaceFunction",
    "NestedIOFunction",
    "once_differentiable",
]

_Tensor = _tm.Tensor
_FLOAT_KINDS = "fcV"


class FunctionCtx:
    """What a ``ctx`` can be told in ``forward``/``setup_context``: tensors to save for
    backward (:meth:`save_for_backward`) or for a jvp (:meth:`save_for_forward`), inputs
    modified in place, outputs not differentiable, whether missing gradients materialize.

    The ctx ``apply`` hands over is one of these that also reads back ``saved_tensors`` and
    knows ``needs_input_grad``; a FunctionCtx made directly has neither (as torch's)."""

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (or None) for backward; read them back with ``ctx.saved_tensors``.

        Anything else is refused once the call is recorded (as torch checks: only when an
        input requires grad)."""
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Save tensors for ``jvp``, where ``ctx.saved_tensors`` reads them back."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that ``forward`` modified in place (they are returned as outputs)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that are not differentiable (they will not require grad)."""
        self.non_differentiable = tensors

    def mark_shared_storage(self, *pairs) -> None:
        pass  # not needed: views share storage and version counters already

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zero tensors (True, the default) or None for outputs that got
        no gradient."""
        if type(value) is not bool:  # torch's binding: a bool only (numpy's too is refused)
            raise TypeError(
                "set_materialize_grads received an invalid combination of arguments - got (), "
                "but expected (bool)"
            )
        self.materialize_grads = value


class _Ctx(FunctionCtx):
    """The ctx of one ``apply``: what forward told it, ``needs_input_grad`` and, once the call
    is recorded, the saved tensors (version-checked, through the node)."""

    def __init__(self):
        self.to_save = None
        self.dirty_tensors = None
        self.non_differentiable = None
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._node = None  # weakref to the node, once recorded

    @property
    def saved_tensors(self) -> tuple:
        if self.__dict__.get("_in_jvp"):  # a jvp reads what forward saved for it
            return tuple(self.__dict__.get("saved_for_forward", ()))
        node = self._node() if self._node is not None else None
        if node is None:
            # in forward/setup_context, or a call not recorded: nothing is saved yet (torch)
            return ()
        from .engine import _saved_args

        return tuple(_saved_args(node))

    @property
    def saved_variables(self) -> tuple:
        """Deprecated name of ``saved_tensors``."""
        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2
        )
        return self.saved_tensors


class _FunctionOp:
    """The op-like object a custom Function's nodes point at (one per Function class)."""

    __slots__ = ("__weakref__", "backward_name", "cls", "n_diff_out", "name")

    def __init__(self, cls):
        self.cls = cls
        self.name = cls.__name__
        self.backward_name = cls.__name__ + "Backward"
        self.n_diff_out = 1 << 30

    def vjp(self, node, grads):
        ctx = node.ctx
        if type(grads) is not list:  # the engine's pre-joined form (one output)
            grads = list(grads) if type(grads) is tuple else [grads]
        metas = node.meta
        if ctx.materialize_grads:
            like = next((g for g in grads if g is not None), None)
            for k, g in enumerate(grads):
                m = metas[k]
                if g is None and m is not None:
                    xp = array_module(like._data) if like is not None else np
                    grads[k] = _tm._wrap(xp.zeros(m[0], m[1]), m[2])
        cls = self.cls
        user = _user_backward(cls)
        with names_on():  # a user's backward may look dims up by name, as its forward does
            if user is not cls.backward:
                out = user(ctx, *grads)  # torch takes either name for the backward formula
            elif JVP_TRICK[0] and cls.jvp is not Function.jvp:  # forward mode: the user's jvp
                got = _JvpTranspose.apply(node, *grads)  # one per tensor input
                got = iter(got if type(got) is tuple else (got,))
                out = tuple(None if s is None else next(got) for s in ctx._in_shapes)
            elif (
                JVP_TRICK[0] and cls.jvp is Function.jvp and not cls.__module__.startswith("ember.")
            ):
                cls.jvp(ctx, *grads)  # forward-mode AD needs the user's jvp: torch's error
            else:
                out = user(ctx, *grads)
        if type(out) is not tuple:
            out = (out,)
        n_in = len(ctx._in_shapes)
        if len(out) != n_in:
            if len(out) > n_in and all(o is None for o in out[n_in:]):
                out = out[:n_in]
            else:
                raise RuntimeError(
                    f"function {self.backward_name} returned an incorrect number of "
                    f"gradients (expected {n_in}, got {len(out)})"
                )
        shapes = ctx._in_shapes
        for k, g in enumerate(out):
            if g is None:
                continue
            s = shapes[k]
            if s is None:
                raise RuntimeError(
                    f"function {self.backward_name} returned a gradient different than None at "
                    f"position {k + 1}, but the corresponding forward input was not a Variable"
                )
            if not isinstance(g, _Tensor):
                t = type(g)
                name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
                raise RuntimeError(f"expected Variable or None (got {name})")  # noqa: TRY004
            gs = g._data.shape
            if gs != s and not _expandable(s, gs):
                raise RuntimeError(
                    f"Function {self.backward_name} returned an invalid gradient at index {k} - "
                    f"got {list(gs)} but expected shape compatible with {list(s)}"
                )
            if g._data.dtype.kind not in "fV":  # a complex grad for a real input, or the reverse
                _check_grad_complexity(node.edges[k], g)
            if g._names is not None:
                _check_grad_names(self.backward_name, k, node.edges[k], g)
        return out


def _check_grad_names(bname: str, k: int, edge, g) -> None:
    """A named gradient from a custom backward must agree with its input's names (spec 4.1, as
    a hook's replacement gradient must); the engine then names it like the input. A clash is
    an error naming both lists (it was renamed silently)."""
    if edge is None:
        return
    tgt, nr = edge
    want = tgt.meta[nr][2] if isinstance(tgt, Node) else tgt._names
    if want is None:
        return
    try:
        unify(g._names, want)
    except RuntimeError as e:
        raise RuntimeError(
            f"function {bname} returned a gradient named {list(g._names)} at index {k}, which "
            f"does not match the input's names {list(want)}: {e}"
        ) from None


def _check_grad_complexity(edge, g) -> None:
    """torch refuses a gradient that is complex for a real input, or an integer/bool one for
    a complex input (a real floating gradient is cast to any input's dtype)."""
    if edge is None:
        return
    tgt, nr = edge
    dt = tgt.meta[nr][1] if isinstance(tgt, Node) else tgt._data.dtype
    if (dt.kind == "c") != (g._data.dtype.kind == "c"):
        raise RuntimeError(
            "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
            "grad_is_complex) to be true, but got false.  (Could this error message be "
            "improved?  If so, please report an enhancement request to PyTorch.)"
        )


def _user_backward(cls):
    """The Function's backward formula: ``backward`` or ``vjp`` (torch takes either name, not
    both)."""
    bwd, vjp = cls.backward, cls.vjp
    if vjp is Function.vjp:
        return bwd
    if bwd is not Function.backward:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
            "You should only implement one of them."
        )
    return vjp


# > 0 while forward_ad / jvp run their first (transposing) backward: a Function known only by
# its jvp may then stand in for its vjp (see _JvpTranspose); one without a jvp is refused there
JVP_TRICK = [0, 0]  # [depth, uses of _JvpTranspose]

_FUNC_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


def _check_under_transform(cls, new_style: bool) -> None:
    """torch's refusals of a custom Function inside torch.func transforms: the old form
    (``forward(ctx, ...)``) anywhere, under a mapping transform one with no vmap rule, and in
    forward mode one with no jvp."""
    if cls.__module__.startswith("ember.") and not cls.__dict__.get("_as_torch_old_style"):
        # ember's own Functions (hooks, custom ops) work everywhere; those standing for one of
        # torch's old-style Functions (the reentrant checkpoint) are refused as torch's is
        return
    if not new_style:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. " + _FUNC_DOCS
        )
    if TRANSFORMS[1] and cls.generate_vmap_rule and cls.vmap is not Function.vmap:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and "
            "an overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the "
            "overridden vmap staticmethod to avoid ambiguity. " + _FUNC_DOCS
        )
    if TRANSFORMS[1] and cls.vmap is Function.vmap and not cls.generate_vmap_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. "
            + _FUNC_DOCS
        )
    if TRANSFORMS[2] and cls.jvp is Function.jvp:
        cls.jvp(None)  # forward mode needs the user's jvp: torch's NotImplementedError


def _expandable(shape, to) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (so a gradient of shape ``to`` can be summed back)."""
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True


def _op_of(cls) -> _FunctionOp:
    op = cls.__dict__.get("_ember_op")
    if op is None:
        op = _FunctionOp(cls)
        cls._ember_op = op
    return op


def _uses_setup_context(cls) -> bool:
    return getattr(cls.setup_context, "__func__", cls.setup_context) is not _base_setup_context


class Function:
    """Base class of custom autograd functions (torch.autograd.Function).

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` (or
    ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``), then call ``MyFn.apply(...)``.
    ``forward`` runs under no_grad; ``backward`` returns one gradient (or None) per input of
    ``forward`` and is differentiable again when written in ember ops.
    """

    # torch's switch for vmap support without a ``vmap`` staticmethod (ember maps any Function
    # by calling it per element; the switch only lifts torch's refusal under vmap and jacfwd)
    generate_vmap_rule = False

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your "
            "custom autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom "
            "autograd.Function to use it with forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        """The batching rule under ``vmap`` (torch's API: ember maps a Function by calling it
        per element, so a rule only lifts torch's refusal, as ``generate_vmap_rule`` does)."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and, when an input requires grad, record the backward node."""
        new_style = _uses_setup_context(cls)
        if new_style:  # setup_context sees every input, defaults included (like torch)
            sig = cls.__dict__.get("_ember_sig")
            if sig is None:
                sig = inspect.signature(cls.forward)
                cls._ember_sig = sig
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            for key in bound.kwargs:  # torch hands forward positional inputs only
                raise TypeError(f"forward() got an unexpected keyword argument '{key}'")
            args, kwargs = bound.args, {}
        elif kwargs:  # the old form binds keywords to forward's positions (they may need grad)
            args, kwargs = _bind_old_style(cls, args, kwargs), {}
        if TRANSFORMS[0]:
            _check_under_transform(cls, new_style)
        needs = tuple(isinstance(a, _Tensor) and a.requires_grad for a in args)
        recording = _state.enabled and any(needs)
        ctx = _Ctx()
        ctx.needs_input_grad = needs
        edges = None
        if recording:
            edges = []
            for a, n in zip(args, needs):
                if not n:
                    edges.append(None)
                elif a._grad_fn is None:
                    edges.append((a, 0))
                else:
                    ex = a._extra
                    edges.append((a._grad_fn, ex.get("nr", 0) if ex else 0))
        prev = _state.enabled
        _state.enabled = False
        try:
            if new_style:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            _state.enabled = prev
        if not recording:
            if ctx.non_differentiable or ctx.dirty_tensors:
                _check_marked(ctx)
            if ctx.dirty_tensors:
                _check_dirty_returned(ctx, out)
            return _alias_returned_inputs(out, args, ctx)
        return _record(cls, ctx, args, edges, out)


_base_setup_context = Function.__dict__["setup_context"].__func__


def _bind_old_style(cls, args: tuple, kwargs: dict) -> tuple:
    """``apply(x, s=3.0)`` of a ``forward(ctx, x, s=...)``: each keyword takes its parameter's
    position; positions up to the last one given must all be filled (torch's binding: no
    defaults filled in, no keyword-only or ``**kwargs`` parameters)."""
    sig = cls.__dict__.get("_ember_sig")
    if sig is None:
        sig = inspect.signature(cls.forward)
        cls._ember_sig = sig
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in sig.parameters.values() if p.kind in kinds][1:]  # after ctx
    n = len(args)
    last = -1
    for key in kwargs:
        if key not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{key}'")
        i = names.index(key)
        if i < n:
            raise TypeError(f"forward() got multiple values for argument '{key}'")
        last = max(last, i)
    out = list(args)
    for i in range(n, last + 1):
        if names[i] not in kwargs:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
        out.append(kwargs[names[i]])
    return tuple(out)


def _check_marked(ctx) -> None:
    """torch's refusal of a non-tensor given to mark_non_differentiable or mark_dirty (checked in
    that order; its texts end where they would name the argument)."""
    for t in ctx.non_differentiable or ():
        if not isinstance(t, _Tensor):
            raise RuntimeError(  # noqa: TRY004  (torch's error type)
                "mark_non_differentiable only accepts variable arguments, but got "
            )
    for t in ctx.dirty_tensors or ():
        if not isinstance(t, _Tensor):
            raise RuntimeError("mark_dirty can only accept variables, but argument ")  # noqa: TRY004


def _check_dirty_returned(ctx, outs) -> None:
    """torch's refusal of a tensor marked dirty that ``forward`` did not return."""
    outs = outs if isinstance(outs, tuple) else (outs,)
    for d in ctx.dirty_tensors:
        if not any(d is o for o in outs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the Function."
            )


def _output_of_input(t, diff: bool):
    """The new tensor standing for input ``t`` returned as-is by ``forward``: a view of it, but
    an alias sharing its data and version counter, and no view, where ``t`` requires grad and
    the output does not get the Function's node (torch detaches it then)."""
    if t.requires_grad and not diff:
        a = _tm._wrap(t._data, t._names)
        a._ver = t._ver
        return a
    return _tm._view(t, t._data, t._names)


def _alias_returned_inputs(out, args: tuple, ctx):
    """A call that records nothing still returns a new tensor for an input ``forward`` gave back
    unchanged (torch: a view of it; in no_grad, of one requiring grad, an alias sharing its
    data and version counter), so that the result's metadata is its own."""
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dirty = ctx.dirty_tensors or ()
    new = None
    for k, t in enumerate(outs):
        if isinstance(t, _Tensor) and any(t is a for a in args) and not any(t is d for d in dirty):
            if new is None:
                new = list(outs)
            new[k] = _output_of_input(t, False)
    if new is None:
        return out
    return new[0] if single else tuple(new)


class _JvpTranspose(Function):
    """The vjp ``g_k = J_k^T u`` of a custom Function that defines only ``jvp``, as the
    double-backward trick of forward mode uses it: only ``d(sum_k t_k . g_k)/du = J t``, the
    Function's jvp of the input tangents ``t``, is ever read, never the values of ``g`` (zeros).

    forward: (node, *cotangents u) -> one placeholder per tensor input of node's Function;
    backward: the tangents t -> the Function's ``jvp(ctx, *t)``, the gradient of each ``u``."""

    @staticmethod
    def forward(ctx, node, *grads):
        JVP_TRICK[1] += 1  # (counted: reverse-mode jacfwd cannot use this placeholder's values)
        ctx.fn_ctx = node.ctx
        ctx.fn_cls = node.op.cls
        ctx.fn_meta = node.meta
        ctx.tensor_in = [s is not None for s in node.ctx._in_shapes]
        like = next(g for g in grads if g is not None)
        outs = []
        for e, s in zip(node.edges, node.ctx._in_shapes):
            if s is None:
                continue
            dt = like._data.dtype
            if e is not None:
                tgt, nr = e
                dt = tgt.meta[nr][1] if isinstance(tgt, Node) else tgt._data.dtype
            outs.append(_tm._wrap(array_module(like._data).zeros(s, dt), None))
        return tuple(outs)

    @staticmethod
    def backward(ctx, *tangents):
        fn_ctx = ctx.fn_ctx
        # torch runs jvp once, in forward (the tutorial's jvp deletes what it read from ctx);
        # each unpack_dual of the Function's outputs comes here with the same input tangents,
        # so the result is kept for them (a Jacobian's columns bring new ones: jvp runs again)
        key = tuple(None if t is None else (t.shape, t._data.tobytes()) for t in tangents)
        hit = fn_ctx.__dict__.get("_ember_jvp_out")
        if hit is not None and hit[0] == key:
            return (None, *hit[1])
        it = iter(tangents)
        ts = [next(it) if is_t else None for is_t in ctx.tensor_in]
        fn_ctx._in_jvp = True  # ctx.saved_tensors are then those of save_for_forward
        try:
            out = ctx.fn_cls.jvp(fn_ctx, *ts)
        finally:
            del fn_ctx._in_jvp
        out = out if type(out) is tuple else (out,)
        if len(out) != len(ctx.fn_meta):
            raise RuntimeError(
                "Function's jvp returned an invalid number of forward gradients (expected "
                f"{len(ctx.fn_meta)} but got {len(out)})"
            )
        for t, m in zip(out, ctx.fn_meta):
            if isinstance(t, _Tensor) and m is not None and t._data.shape != m[0]:
                raise RuntimeError(
                    "Trying to set a forward gradient that has a different size than that of "
                    "the original Tensor, this is not supported. Tensor is of size "
                    f"{list(m[0])} while the given forward gradient is of size "
                    f"{list(t._data.shape)}."
                )
        fn_ctx._ember_jvp_out = (key, out)
        return (None, *out)


class BackwardCFunction(Node):
    """The type of a custom Function's backward nodes (``MyFnBackward``): what ``grad_fn`` of
    its outputs is. Its attributes not found on the node come from the Function's ctx."""

    __slots__ = ()

    @property
    def _forward_cls(self):
        return self.op.cls

    def apply(self, *grad_outputs):
        """Run the Function's ``backward`` (or ``vjp``) on ``grad_outputs``, unchecked."""
        return _user_backward(self.op.cls)(self.ctx, *grad_outputs)

    def apply_jvp(self, *grad_inputs):
        """Run the Function's ``jvp`` on ``grad_inputs``."""
        return self.op.cls.jvp(self.ctx, *grad_inputs)

    def __call__(self, *args):
        raise TypeError(f"'{type(self).__name__}' object is not callable")


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (torch.autograd.function.InplaceFunction)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """torch's legacy Function over nested inputs and outputs (``forward_extended`` /
    ``backward_extended``). It is kept importable, as torch keeps it; like torch's, it cannot
    be run: write a Function with static ``forward``/``backward`` instead."""

    def forward_extended(self, *input):
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        raise NotImplementedError


def _record(cls, ctx, args, edges, out):
    """Make the node of one Function call and attach it to the outputs."""
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dirty = ctx.dirty_tensors or ()
    nondiff = ctx.non_differentiable or ()
    saved = ctx.to_save
    if saved:
        for i, t in enumerate(saved):
            if t is not None and not isinstance(t, _Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}"
                )
    in_ids = {id(a): a for a in args if isinstance(a, _Tensor)}
    if nondiff or dirty:
        _check_marked(ctx)
        for d in dirty:
            if id(d) not in in_ids:
                warnings.warn(
                    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
                    "that have been mutated should be passed to ctx.mark_dirty().",
                    UserWarning,
                    stacklevel=3,
                )
    node = Node(_op_of(cls), edges, [], None, None)
    node.ctx = ctx
    ctx._node = weakref.ref(node)
    ctx._in_shapes = tuple(a._data.shape if isinstance(a, _Tensor) else None for a in args)
    new_outs = []
    meta = []
    for k, t in enumerate(outs):
        if not isinstance(t, _Tensor):
            new_outs.append(t)
            meta.append(None)
            continue
        is_dirty = any(t is d for d in dirty)
        diff = t._data.dtype.kind in _FLOAT_KINDS and not any(t is o for o in nondiff)
        if is_dirty:
            if t.requires_grad and t._grad_fn is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            t._ver[0] += 1
            if not diff and t.requires_grad:
                # a non-differentiable dirty output: torch returns an alias out of the graph
                # (the input keeps its history)
                t = _output_of_input(t, False)
        elif id(t) in in_ids:
            # an input returned as is: the output is a new tensor (like torch)
            t = _output_of_input(t, diff)
        a = t._data
        if diff:
            ex = t._extra
            if ex and "nr" in ex:
                t._extra = ex = {key: v for key, v in ex.items() if key != "nr"}
            if is_dirty:
                _dirty_output(t, node, k)
            else:
                t.requires_grad = True
                t._grad_fn = node
                if ex is not None and ex.get("base") is not None:
                    # a view output: torch refuses in-place writes to it (and to its views),
                    # and its use once its base changed in place (views.refresh)
                    ex["cm"] = "multi" if len(outs) > 1 else "custom"
                    ex["vc"] = ()
                    ex["gv"] = t._ver[0]
                if k:
                    t._extra = dict(t._extra or {}, nr=k)
        meta.append((a.shape, a.dtype, t._names))
        new_outs.append(t)
    if dirty:
        _check_dirty_returned(ctx, outs)
    node.meta = meta
    if saved:
        # an input saved before forward replaced it (dirty) keeps its new identity: fine
        node.saved = list(saved)
        ctx.to_save = None  # the node keeps them now (and frees them after backward)
        node.vers = [(t, t._ver[0]) for t in saved if t is not None]
        if any(s is o for s in saved for o in new_outs):
            # saved outputs: the version error names this node (engine._check_versions)
            node.res = [o._data for o in new_outs if isinstance(o, _Tensor)]
        if _SAVED_HOOKS:  # saved_tensors_hooks: the node keeps what pack returns
            pack_node(node)
    if _state.anomaly:
        from .anomaly import capture_trace

        node.trace = capture_trace()
    return new_outs[0] if single else tuple(new_outs)


def _dirty_output(t, node, k: int) -> None:
    """An output marked dirty: its new values come from ``node``, as for an in-place op (the
    registry's rebase: a view's base takes them at the view's positions, torch's CopySlices;
    a retained gradient follows the new value)."""
    from ..core.registry import _rebase_history

    r = _tm._wrap(t._data, t._names)
    r.requires_grad = True
    r._grad_fn = node
    if k:
        r._extra = {"nr": k}
    _rebase_history(t, r)


class _DelayedErrorOp:
    """Backward of a once_differentiable backward's outputs: differentiating it again errors."""

    __slots__ = ()
    name = "Error"
    backward_name = "torch::autograd::Error"  # torch's (C++) node, printed Error
    n_diff_out = 1

    @staticmethod
    def vjp(*_):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


_DELAYED = _DelayedErrorOp()


def once_differentiable(fn):
    """Decorate a Function's ``backward`` that is not itself differentiable: it runs under
    no_grad, and differentiating its result (create_graph=True) raises an error."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _state.enabled
        _state.enabled = False
        try:
            outs = fn(ctx, *args)
        finally:
            _state.enabled = prev
        if not prev:
            return outs
        if not any(isinstance(a, _Tensor) and a.requires_grad for a in args):
            return outs
        # like torch: one Error node over the outputs, each fed by a detached stand-in leaf,
        # so differentiating an output raises and nothing recorded before is reachable from it
        single = not isinstance(outs, tuple)
        edges, meta, res = [], [], []
        node = Node(_DELAYED, edges, [], None, meta)
        for o in (outs,) if single else outs:
            if isinstance(o, _Tensor) and o._data.dtype.kind in _FLOAT_KINDS:
                stand_in = _tm._wrap(o._data, o._names)
                stand_in.requires_grad = True
                edges.append((stand_in, 0))
                meta.append((o._data.shape, o._data.dtype, o._names))
                o = _tm._wrap(o._data, o._names)
                o.requires_grad = True
                o._grad_fn = node
                if len(meta) > 1:
                    o._extra = {"nr": len(meta) - 1}
            res.append(o)
        return res[0] if single else tuple(res)

    return wrapper
