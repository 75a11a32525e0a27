"""ember.func (torch.func): function transforms over ember's tape autograd.

ember has no functorch levels: ``grad``, ``vjp``, ``jacrev``, ... run the function with fresh
differentiable copies of the chosen inputs and ask :func:`ember.autograd.grad` for the
derivatives. Inside another transform (``grad(grad(f))``, ``jacrev(jacrev(f))``, ``hessian``) and
when an input already requires grad, the derivatives are taken with ``create_graph=True``, so
the transforms compose by nesting. ``jacrev``/``jacfwd`` build a Jacobian one backward pass per
output element (reverse mode for both); ``jvp`` is computed as the derivative of a vjp (the
"double-vjp" trick). ``vmap`` is :func:`ember.vmap` (one call per element, inputs and outputs
pytrees of tensors), so the per-sample-gradient recipe
``vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)`` works. A tensor the function closes
over that requires grad (a parameter) stays differentiable in the results, as in torch.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .autograd.engine import grad as _autograd_grad
from .autograd.function import JVP_TRICK
from .autograd.grad_mode import _recording, is_grad_enabled
from .autograd.graph import disable_saved_tensors_hooks
from .core import vmap_state as _vmap_state
from .core.tensor import Tensor
from .core.vmap import RANDOM_MSG, TRANSFORMS, drew_random
from .core.vmap import vmap as _vmap
from .nn.utils.stateless import _functional_call

__all__ = [
    "debug_unwrap",
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]


class _Depth(threading.local):
    def __init__(self) -> None:
        self.n = 0


_depth = _Depth()  # how many transforms are evaluating their function right now


# ------------------------------------------------------------------ pytrees (tuple/list/dict)


def _flatten(tree) -> tuple[list, Any]:
    """The leaves of ``tree`` (tuples, lists and dicts are nodes) and its structure."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for t in tree:
            lv, sp = _flatten(t)
            leaves += lv
            specs.append(sp)
        return leaves, (type(tree), None, specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for t in tree.values():
            lv, sp = _flatten(t)
            leaves += lv
            specs.append(sp)
        return leaves, (dict, list(tree.keys()), specs)
    return [tree], None


def _unflatten(spec, leaves: list):
    it = iter(leaves)

    def build(sp):
        if sp is None:
            return next(it)
        kind, keys, children = sp
        vals = [build(c) for c in children]
        if kind is dict:
            return dict(zip(keys, vals, strict=True))
        if kind is tuple or kind is list:
            return kind(vals)
        return kind(*vals)  # a namedtuple

    return build(spec)


def _spec_str(spec) -> str:
    if spec is None:
        return "*"
    kind, keys, children = spec
    inner = ", ".join(_spec_str(c) for c in children)
    if kind is dict:
        inner = ", ".join(f"{k!r}: {_spec_str(c)}" for k, c in zip(keys, children, strict=True))
        return "{" + inner + "}"
    return f"[{inner}]" if kind is list else f"({inner}{',' if len(children) == 1 else ''})"


# ------------------------------------------------------------------ shared machinery


def _check_argnums(argnums, nargs: int) -> tuple[int, ...]:
    if isinstance(argnums, int):
        if not -nargs <= argnums < nargs or isinstance(argnums, bool):
            raise RuntimeError(f"Got argnum={argnums}, but only {nargs} positional inputs")
        return (argnums % nargs,)
    if isinstance(argnums, tuple) and all(
        isinstance(a, int) and not isinstance(a, bool) for a in argnums
    ):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        for a in argnums:
            _check_argnums(a, nargs)
        return tuple(a % nargs for a in argnums)
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _differentiable(tree) -> tuple[Any, list[Tensor], bool]:
    """``tree`` with every tensor replaced by a fresh input of this transform: an alias of it
    when it already requires grad (still connected to an enclosing transform's graph), else a
    detached copy that requires grad. Also the new leaves, and whether any input required grad."""
    leaves, spec = _flatten(tree)
    new, tracked = [], False
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(  # noqa: TRY004 - torch's error type
                f"Thing passed to transform API must be Tensor, got {type(x)}"
            )
        if x.requires_grad:
            tracked = True
            new.append(x.view_as(x))
        else:
            new.append(x.detach().requires_grad_())
    return _unflatten(spec, new), new, tracked


_HOOKS_MSG = (
    "torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open "
    "an issue with your use case."
)


def _call(
    func: Callable,
    args: tuple,
    kwargs: dict,
    maps: bool = False,
    fwd: bool = False,
    reverse: bool = False,
):
    """``func(*args, **kwargs)`` recorded, as a transform evaluates it (for the custom-Function
    checks, ``maps``: one that torch runs as a vmap; ``fwd``: one in forward mode). ``reverse``:
    a reverse-mode transform (grad, vjp, jacrev), which torch runs with saved-tensor hooks
    refused: hooks set around it or inside ``func`` raise its error."""
    if reverse:
        with disable_saved_tensors_hooks(_HOOKS_MSG):
            return _call(func, args, kwargs, maps, fwd)
    with _recording():
        _depth.n += 1
        TRANSFORMS[0] += 1
        TRANSFORMS[1] += maps
        TRANSFORMS[2] += fwd
        _vmap_state.KINDS.append(False)
        try:
            return func(*args, **kwargs)
        finally:
            _vmap_state.KINDS.pop()
            _depth.n -= 1
            TRANSFORMS[0] -= 1
            TRANSFORMS[1] -= maps
            TRANSFORMS[2] -= fwd


def _wants_graph(tracked: bool) -> bool:
    """Keep the derivatives differentiable: inside another transform, or when an input was
    already part of a graph the caller may differentiate."""
    return _depth.n > 0 or (tracked and is_grad_enabled())


def _reaches_outer(outputs: list, inputs: list) -> bool:
    """Whether the outputs' graph reaches a leaf that requires grad other than this transform's
    own inputs (a parameter the function closes over): torch's results then stay differentiable
    with respect to it, so the derivatives are taken with ``create_graph=True``."""
    from .autograd.node import Node

    if not is_grad_enabled():
        return False
    mine = {id(x) for x in inputs}
    seen: set[int] = set()
    todo = [o._grad_fn for o in outputs if isinstance(o, Tensor) and o._grad_fn is not None]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for e in node.edges:
            if e is None:
                continue
            if isinstance(e[0], Node):
                todo.append(e[0])
            elif id(e[0]) not in mine:
                return True
    return False


def _grads(outputs: list, inputs: list, grad_outputs: list, create_graph: bool) -> list:
    """d(outputs . grad_outputs)/d(inputs); zeros where an input is unused."""
    from .core.ops.creation import zeros_like

    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o.requires_grad]
    if pairs:
        with _recording():
            got = _autograd_grad(
                [o for o, _ in pairs],
                inputs,
                grad_outputs=[g for _, g in pairs],
                retain_graph=True,
                create_graph=create_graph,
                allow_unused=True,
            )
    else:
        got = [None] * len(inputs)
    return [zeros_like(x) if g is None else g for g, x in zip(got, inputs, strict=True)]


def _release(tree, keep: bool):
    """Outputs handed back to the caller: detached unless an enclosing graph needs them."""
    if keep:
        return tree
    leaves, spec = _flatten(tree)
    return _unflatten(spec, [x.detach() if isinstance(x, Tensor) else x for x in leaves])


def _split_aux(out, has_aux: bool, where: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{where}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    for x in _flatten(out[1])[0]:  # torch unwraps the aux output, tensors only
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")  # noqa: TRY004
    return out


# ------------------------------------------------------------------ the transforms


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the tensors
    of ``parameter_and_buffer_dicts`` (a dict keyed like ``named_parameters``, or a sequence of
    dicts). The module is unchanged afterwards. Tied weights follow a value given for one alias
    (``tie_weights=True``); ``strict=True`` requires exactly the module's keys."""
    if isinstance(parameter_and_buffer_dicts, list):
        parameter_and_buffer_dicts = tuple(parameter_and_buffer_dicts)
    return _functional_call(
        module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict
    )


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """torch.func.vmap: :func:`ember.vmap` (the same function in torch): ``func`` may take and
    return pytrees (tuples, lists, dicts) of tensors, stacked leaf by leaf; ``in_dims`` and
    ``out_dims`` are pytrees matching a prefix of the inputs' and outputs' structures."""
    return _vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False):
    """Returns a function computing ``(gradient, value)`` of ``func``: the gradient of its scalar
    output with respect to the positional arguments ``argnums`` (each a tensor or a tuple/list/
    dict of tensors; the gradient has the same structure), and the output itself. With
    ``has_aux=True`` ``func`` returns ``(output, aux)`` and the value is ``(output, aux)``."""
    where = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any):
        nums = _check_argnums(argnums, len(args))
        args, inputs, tracked = _track(args, nums)
        out = _call(func, tuple(args), kwargs, reverse=True)
        out, aux = _split_aux(out, has_aux, where)
        if not isinstance(out, Tensor):
            raise RuntimeError(  # noqa: TRY004 - torch's error type
                f"{where}: Expected f(*args) to return a Tensor, got {type(out)}"
            )
        if out.dim() != 0:
            raise RuntimeError(
                f"{where}: Expected f(*args) to return a scalar Tensor, got tensor with "
                f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
            )
        if out.is_complex():
            raise RuntimeError(
                f"grad can be implicitly created only for real scalar outputs but got {out.dtype}"
            )
        flat = [x for group in inputs for x in group]
        keep = _wants_graph(tracked) or _reaches_outer([out], flat)
        grads = iter(_grads([out], flat, [_ones_like(out)], keep))
        per_arg = []
        for n, group in zip(nums, inputs, strict=True):
            _, spec = _flatten(args[n])
            per_arg.append(_unflatten(spec, [next(grads) for _ in group]))
        g = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        value = _release(out, keep)
        if has_aux:
            return g, (value, _release(aux, keep))
        return g, value

    return wrapper


def _ones_like(t: Tensor) -> Tensor:
    from .core.ops.creation import ones_like

    return ones_like(t)


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """Returns a function computing the gradient of ``func``'s scalar output with respect to
    its positional arguments ``argnums`` (see :func:`grad_and_value`); with ``has_aux=True``,
    ``(gradient, aux)``. Nests: ``grad(grad(f))(x)`` is the second derivative."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False):
    """Runs ``func(*primals)`` and returns ``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with
    ``has_aux=True``). ``vjp_fn(cotangents)`` (cotangents shaped like the output) returns the
    vector-Jacobian products, a tuple with one entry per primal."""
    diff, flat, tracked = _differentiable(primals)
    out = _call(func, diff, {}, reverse=True)
    out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
    out_leaves, out_spec = _flatten(out)
    _check_outputs(out_leaves, "vjp(f, *primals)", floating=True)
    keep = _wants_graph(tracked) or _reaches_outer(out_leaves, flat)
    _, primal_spec = _flatten(primals)

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None):
        ct_leaves, ct_spec = _flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {_spec_str(ct_spec)}, primal output: "
                f"{_spec_str(out_spec)}"
            )
        cg = keep or _depth.n > 0 or bool(create_graph)
        return _unflatten(primal_spec, _grads(out_leaves, flat, ct_leaves, cg))

    if has_aux:
        return _release(out, keep), vjp_fn, _release(aux, keep)
    return _release(out, keep), vjp_fn


def _check_outputs(outputs: list, api: str, floating: bool = False) -> None:
    """torch's checks of the flattened outputs of a function a transform differentiates: not
    empty, only tensors, and (``floating``: vjp, and jacrev behind it) only floating or complex
    ones."""
    if not outputs or (len(outputs) == 1 and outputs[0] is None):
        raise RuntimeError(
            f"{api}: Expected f to be a function that has non-empty output (got output = {outputs})"
        )
    for o in outputs:
        if not isinstance(o, Tensor):
            raise RuntimeError(  # noqa: TRY004 - torch's error type
                f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(o)}"
            )
        if floating and not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError(
                "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                f"Tensor with dtype {o.dtype}"
            )


_JVP = "jvp(f, primals, tangents)"


def jvp(
    func: Callable,
    primals: tuple,
    tangents: tuple,
    *,
    strict: bool = False,
    has_aux: bool = False,
):
    """Runs ``func(*primals)`` and returns ``(output, jvp_out)``, the Jacobian-vector product
    with ``tangents`` (shaped like ``primals``); ``(output, jvp_out, aux)`` with ``has_aux``.
    Computed in reverse mode, as the derivative of a vjp with respect to its cotangent."""
    where = _JVP
    if not isinstance(primals, tuple):  # torch checks the tangents by structure only
        raise RuntimeError(  # noqa: TRY004 - torch's error type
            f"{where}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    p_leaves, p_spec = _flatten(primals)
    t_leaves, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        from .utils._pytree import tree_structure

        raise RuntimeError(
            f"{where}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {tree_structure(primals)} and tangents with structure "
            f"{tree_structure(tangents)}"
        )
    for what, leaves in (("primals", p_leaves), ("tangents", t_leaves)):
        if not leaves:
            raise RuntimeError(f"{where}: Expected {what} to contain at least one Tensor.")
        for x in leaves:
            if not isinstance(x, Tensor):
                raise RuntimeError(  # noqa: TRY004 - torch's error type
                    f"{where}: Expected {what} to only contain Tensors, got {type(x)}"
                )
    for p, t in zip(p_leaves, t_leaves, strict=True):
        for what, x in (("primal", p), ("tangent", t)):
            if isinstance(x, Tensor) and not (x.is_floating_point() or x.is_complex()):
                raise ValueError(
                    f"Expected {what} to be floating point or complex, but got: {x.dtype}"
                )
        if isinstance(p, Tensor) and isinstance(t, Tensor) and p.shape != t.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{list(p.shape)} while the given forward gradient is of size {list(t.shape)}."
            )
    diff, flat, tracked = _differentiable(primals)
    out = _call(func, diff, {}, fwd=True)
    out, aux = _split_aux(out, has_aux, where)
    out_leaves, out_spec = _flatten(out)
    _check_outputs(out_leaves, where)
    keep = (
        _wants_graph(tracked)
        or any(t.requires_grad for t in t_leaves)
        or _reaches_outer(out_leaves, flat)
    )
    from .core.ops.creation import zeros_like

    dummies = [zeros_like(o).requires_grad_() for o in out_leaves]
    JVP_TRICK[0] += 1  # a custom Function with only a jvp may serve as its vjp here
    try:
        vjps = _grads(out_leaves, flat, dummies, True)  # J^T u, linear in the dummy cotangent u
    finally:
        JVP_TRICK[0] -= 1
    jv = _grads(vjps, dummies, t_leaves, keep)  # d(J^T u . t)/du = J t
    res = (_release(out, keep), _unflatten(out_spec, jv))
    return (*res, _release(aux, keep)) if has_aux else res


def linearize(func: Callable, *primals: Any) -> tuple[Any, Callable]:
    """Returns ``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` is the Jacobian-vector
    product at ``primals`` (each call runs ``func`` again)."""
    from .utils._pytree import tree_flatten

    out = _call(func, primals, {})
    flat_primals, primals_spec = tree_flatten(primals)

    def jvp_fn(*tangents: Any) -> Any:
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(
                f"Expected the tangents {tangents_spec} to have the same argspec as the primals "
                f"{primals_spec}"
            )
        for k, (t, p) in enumerate(zip(flat_tangents, flat_primals, strict=True)):
            for what, a, b in (
                ("shape", t.shape, p.shape),
                ("device", t.device, p.device),
                ("dtype", t.dtype, p.dtype),
            ):
                if a != b:
                    raise RuntimeError(
                        f"tangent:{k} with {what} {a} in flattened pytree doesn't match the "
                        f"{what} {b} of the corresponding primal."
                    )
        return jvp(func, primals, tangents)[1]

    # as torch's, the output stays part of the caller's graph (a closed-over parameter, a
    # primal that requires grad) unless grad mode is off
    return _release(out, _depth.n > 0 or is_grad_enabled()), jvp_fn


def _track(args: tuple, nums) -> tuple:
    """``args`` with the ones at ``nums`` made differentiable: (new args, those inputs, whether
    any of them was already tracked by an enclosing transform)."""
    args = list(args)
    inputs, tracked = [], False
    for n in nums:
        args[n], new, t = _differentiable(args[n])
        inputs.append(new)
        tracked |= t
    return args, inputs, tracked


def _jacobian(
    func: Callable, argnums, has_aux: bool, name: str, randomness: str = "different"
) -> Callable:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any):
        from .core import random as _random
        from .core.vmap import _RANDOMNESS

        fwd = name == "jacfwd"
        nums = _check_argnums(argnums, len(args))
        if fwd:  # torch's jacfwd runs as a vmap of jvp over one-hot tangents
            if randomness not in _RANDOMNESS:
                raise RuntimeError(
                    "Only allowed values for randomness are 'error', 'different', or 'same'. "
                    f"Got {randomness}"
                )
            for n in nums:
                for x in _flatten(args[n])[0]:
                    if isinstance(x, Tensor) and not (x.is_floating_point() or x.is_complex()):
                        raise ValueError(
                            f"Expected primal to be floating point or complex, but got: {x.dtype}"
                        )
        # torch's jacobians are of real functions: a complex argument (any, not only those
        # differentiated) is refused before the call
        for k, x in enumerate(_flatten(tuple(args))[0]):
            if isinstance(x, Tensor) and x.is_complex():
                raise RuntimeError(
                    f"{name}: Expected all inputs to be real but received complex tensor at "
                    f"flattened input idx: {k}"
                )
        args, inputs, tracked = _track(args, nums)
        start = _random.get_rng_state() if randomness == "error" else None
        try:
            out = _call(func, tuple(args), kwargs, maps=fwd, fwd=fwd, reverse=not fwd)
        except Exception:
            if start is not None and drew_random(start):
                raise RuntimeError(RANDOM_MSG) from None
            raise
        if start is not None and drew_random(start):
            raise RuntimeError(RANDOM_MSG)
        out, aux = _split_aux(out, has_aux, f"{name}(f, ...)(*args)")
        out_leaves, out_spec = _flatten(out)
        # torch's jacobians are a vmap of its vjp or jvp, whose checks they report
        _check_outputs(out_leaves, _JVP if fwd else "vjp(f, *primals)", floating=not fwd)
        for k, o in enumerate(out_leaves):
            if o.is_complex():
                raise RuntimeError(
                    f"{name}: Expected all outputs to be real but received complex tensor at "
                    f"flattened input idx: {k}"
                )
        flat = [x for group in inputs for x in group]
        keep = _wants_graph(tracked) or _reaches_outer(out_leaves, flat)
        JVP_TRICK[0] += fwd  # torch's jacfwd is forward mode: a Function needs its jvp
        used = JVP_TRICK[1]
        try:
            jac_leaves = [_jac_rows(o, flat, keep) for o in out_leaves]
        finally:
            JVP_TRICK[0] -= fwd
        if JVP_TRICK[1] != used:  # the graph holds a Function known only by its jvp: its rows
            jac_leaves = _jac_columns(out_leaves, flat, keep)  # are placeholders; go forward
        if fwd:  # torch's tangents flow forward: each block takes its output's dtype
            jac_leaves = [
                [b if b.dtype == o.dtype else b.to(o.dtype) for b in rows]
                for rows, o in zip(jac_leaves, out_leaves, strict=True)
            ]
        per_out = []
        for rows in jac_leaves:  # rows: one Jacobian block per flat input
            it = iter(rows)
            per_arg = []
            for n, group in zip(nums, inputs, strict=True):
                _, spec = _flatten(args[n])
                per_arg.append(_unflatten(spec, [next(it) for _ in group]))
            per_out.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
        jac = _unflatten(out_spec, per_out)
        return (jac, _release(aux, keep)) if has_aux else jac

    return wrapper


def _jac_columns(outs: list[Tensor], inputs: list[Tensor], keep: bool) -> list[list[Tensor]]:
    """Forward mode, for graphs that hold a custom Function known only by its jvp: the columns
    ``J t`` for one-hot tangents ``t``, each the derivative of ``J^T u . t`` with respect to a
    dummy cotangent ``u`` (as :func:`jvp` computes them). Blocks as ``_jac_rows``'s, per output."""
    from .core.ops.creation import zeros, zeros_like
    from .core.ops.joining import stack

    dummies = [zeros_like(o).requires_grad_() for o in outs]
    JVP_TRICK[0] += 1
    try:
        vjps = _grads(outs, inputs, dummies, True)
    finally:
        JVP_TRICK[0] -= 1
    blocks: list[list[Tensor]] = [[] for _ in outs]
    for i, x in enumerate(inputs):
        cols: list[list[Tensor]] = [[] for _ in outs]
        for k in range(x.numel()):
            onehot = zeros(x.numel(), dtype=x.dtype, device=x.device)
            onehot[k] = 1
            ts = [
                onehot.reshape(x.shape) if j == i else zeros_like(y) for j, y in enumerate(inputs)
            ]
            for c, g in zip(cols, _grads(vjps, dummies, ts, keep), strict=True):
                c.append(g)
        for b, c, o in zip(blocks, cols, outs, strict=True):
            b.append(
                stack(c, -1).reshape(*o.shape, *x.shape)
                if c
                else zeros(*o.shape, *x.shape, dtype=x.dtype, device=x.device)
            )
    return blocks


def _jac_rows(out: Tensor, inputs: list[Tensor], keep: bool) -> list[Tensor]:
    """d out / d x for every x in ``inputs``: each of shape ``out.shape + x.shape``."""
    from .core.ops.creation import zeros
    from .core.ops.joining import stack

    n = out.numel()
    rows: list[list[Tensor]] = [[] for _ in inputs]
    for k in range(n):
        onehot = zeros(n, dtype=out.dtype, device=out.device)
        onehot[k] = 1
        for r, g in zip(
            rows, _grads([out], inputs, [onehot.reshape(out.shape)], keep), strict=True
        ):
            r.append(g)
    blocks = []
    for x, r in zip(inputs, rows, strict=True):
        if r:
            blocks.append(stack(r).reshape(*out.shape, *x.shape))
        else:
            blocks.append(zeros(*out.shape, *x.shape, dtype=x.dtype, device=x.device))
    return blocks


def jacrev(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """Returns a function computing the Jacobian of ``func`` with respect to the positional
    arguments ``argnums`` by reverse mode: for an output of shape ``O`` and an input of shape
    ``I``, a tensor of shape ``O + I`` (nested like the outputs, then like ``argnums``).
    ``chunk_size`` is accepted (ember runs one backward pass per output element)."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, "jacrev")


def jacfwd(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """The Jacobian of ``func`` (torch computes it in forward mode; ember in reverse mode, with
    the same result: see :func:`jacrev`). ``randomness`` is vmap's (torch maps ``func`` over
    the tangents): ``'error'`` refuses random ops in ``func``."""
    return _jacobian(func, argnums, has_aux, "jacfwd", randomness)


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """Returns a function computing the Hessian of ``func``'s scalar output with respect to the
    positional arguments ``argnums``: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """Returns ``func``: ember runs mutations eagerly, with the same results.

    ``remove`` must still be one of torch's two options (``'mutations'`` or
    ``'mutations_and_views'``); anything else is refused here, as torch refuses it.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n     remove='mutations': all inplace and out= operators will "
            "be removed from the program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators "
            "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n"
        )
    return func


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """Returns ``tensor``: ember's transforms do not wrap tensors."""
    return tensor


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of ``models`` (same architecture) stacked along a new first
    dim, as two dicts keyed like ``named_parameters`` / ``named_buffers`` (for ensembling with
    :func:`vmap` and :func:`functional_call`). Each stacked tensor is a new leaf that requires
    grad when the originals all do; originals that disagree are an error."""
    from .core.ops.joining import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    ref = type(models[0])
    if not all(type(m) is ref for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def gather(named: str) -> dict[str, Tensor]:
        tables = [dict(getattr(m, named)()) for m in models]
        out = {}
        for name in tables[0]:
            parts = [table[name] for table in tables]
            wants = parts[0].requires_grad
            # one stacked leaf cannot be partly trainable: torch refuses mixed flags
            if any(p.requires_grad != wants for p in parts[1:]):
                raise RuntimeError(
                    f"Expected {name} from each model to have the same .requires_grad"
                )
            t = stack([p.detach() for p in parts])
            out[name] = t.requires_grad_() if wants else t
        return out

    return gather("named_parameters"), gather("named_buffers")


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """In place: make every batch-norm layer of ``root`` stop tracking running statistics (so
    it always normalizes with batch statistics, which vmap needs in torch). Returns ``root``."""
    from .nn.modules.batchnorm import _BatchNorm

    for m in root.modules():
        if isinstance(m, _BatchNorm):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
