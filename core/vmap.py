"""torch.vmap: map a function over a dimension of its inputs.

ember has no batching rules: ``vmap(func)`` calls ``func`` once per index of the mapped dimension
and stacks the results. For functions without side effects on their inputs the result equals
torch's (values, gradients: every step is recorded on the tape); the cost is one call per batch
element, so it is a convenience, not a speed-up. Randomness follows torch's three modes. The
per-element values are marked (core/vmap_state.py), so what torch refuses for its batched tensors
(``.item()``, data-dependent control flow, writing one into a tensor shared by all elements, ops
of a value-dependent shape) is refused here too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import vmap_state as _state
from .dims import normalize_dim
from .tensor import Tensor
from .vmap_state import SLICES, TRANSFORMS

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")

_BN_MSG = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will "
    "be updated in place, were not batched.\nIf you are using a module and do not need eval "
    "mode, please set `track_running_stats` to be False.If you are using a prebuilt module and "
    "do not need eval mode, please see the functorch website for resources on how to patch your "
    "module to work with vmap"
)


RANDOM_MSG = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out of "
    "vmap"
)


def drew_random(start) -> bool:
    """Whether the default generator moved on from the state ``start``: a random op ran. ember
    checks after the call, also when the call raised (torch would have stopped at the random op,
    before whatever failed later), to give torch's error for random ops in 'error' mode."""
    from . import random as _random

    return not _random.get_rng_state().equal(start)


def refuse_unbatched_stats(running_mean, running_var) -> None:
    """torch's error for a training batch norm under vmap whose running statistics, updated in
    place, are not mapped (a module's own buffers): per-element calls would each update them.
    Statistics handed in mapped (``functional_call`` with stacked buffers) are fine."""
    if SLICES:
        ids = SLICES[-1]
        if any(t is not None and id(t) not in ids for t in (running_mean, running_var)):
            raise RuntimeError(_BN_MSG)


def _tensor_ids(tree, out: set) -> set:
    if isinstance(tree, Tensor):
        out.add(id(tree))
    elif isinstance(tree, (tuple, list)):
        for t in tree:
            _tensor_ids(t, out)
    elif isinstance(tree, dict):
        for t in tree.values():
            _tensor_ids(t, out)
    return out


def _fname(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_fname(func.func)}, ...)"
    return repr(func)


def _broadcast(prefix, spec) -> list | None:
    """One entry of ``prefix`` per leaf of the pytree ``spec`` describes: ``prefix`` is a pytree
    whose structure is a prefix of ``spec``'s (an int or None at a node covers every leaf under
    it; containers must match in type, length and keys). None when it is not such a prefix."""
    from ..utils import _pytree

    out: list = []

    def cover(d, sub) -> None:
        out.extend([d] * _pytree.tree_structure(sub).num_leaves)

    try:
        _pytree.tree_map_(cover, prefix, spec.unflatten([0] * spec.num_leaves))
    except ValueError:
        return None
    return out


def _flat_inputs(args: tuple, in_dims, where: str) -> tuple[list, list, Any]:
    """The leaves of ``args``, their mapped dims (None: not mapped; negative dims wrapped) and
    the inputs' TreeSpec, with torch's errors for a bad ``in_dims``."""
    from ..utils import _pytree

    flat, spec = _pytree.tree_flatten(args)
    dims = _broadcast(in_dims, spec)
    if dims is None:
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {_pytree.tree_structure(in_dims)} but inputs has structure {spec}."
        )
    for k, (a, d) in enumerate(zip(flat, dims, strict=True)):
        if d is None:
            continue
        if not isinstance(d, int):
            if isinstance(d, str) and isinstance(a, Tensor) and a._names is not None:
                # names spec 1: a dim argument accepts a name (looked up in that input)
                dims[k] = normalize_dim(a, d)
                continue
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but in_dim must be either an integer "
                "dimension or None."
            )
        if not isinstance(a, Tensor):
            raise ValueError(  # noqa: TRY004 - torch's error type
                f"{where}: Got in_dim={d} for an input but the input is of type {type(a)}. We "
                "cannot vmap over non-Tensor arguments, please use None as the respective in_dim"
            )
        nd = a.dim()
        if not -nd <= d < nd:
            raise ValueError(
                f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {nd} so expected in_dim to satisfy -{nd} <= in_dim < {nd}."
            )
        dims[k] = d % nd
    return flat, dims, spec


def _any_named(args: tuple) -> bool:
    """Whether a positional input is a named tensor (a name as ``in_dims`` needs one; for
    unnamed inputs torch's type error stands)."""
    return any(isinstance(a, Tensor) and a._names is not None for a in args)


def _select(flat: list, dims: list, spec, i: int | None):
    """The inputs of one call: every mapped tensor indexed at ``i`` along its mapped dim (``i``
    None: zeros of an element's shape, to run ``func`` once over an empty batch)."""
    picked = []
    for a, d in zip(flat, dims, strict=True):
        if d is None:
            picked.append(a)
        elif i is None:
            picked.append(a.new_zeros(a.shape[:d] + a.shape[d + 1 :]))
        else:
            picked.append(a.select(d, i))
    return spec.unflatten(picked), picked


def _check_out_dims(out_dims, fname: str) -> None:
    """torch's check, before anything runs: ``out_dims`` holds only ints and Nones."""
    from ..utils import _pytree

    if isinstance(out_dims, int):
        return
    for d in _pytree.tree_leaves(out_dims):
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({fname}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                "python collection of ints representing where in the outputs the vmapped "
                "dimension should appear."
            )


def _mapped_name(mapped: list) -> str | None:
    """The name of the mapped dim: the one the named inputs give it (names spec 4.3: ``func``
    leaves the mapped dim alone, so it keeps its name), None when no input names it; inputs that
    name it differently are an error naming both."""
    name = None
    for t, d in mapped:
        if t._names is None or t._names[d] is None:
            continue
        if name is None:
            name, first = t._names[d], t._names
        elif t._names[d] != name:
            raise RuntimeError(
                f"vmap: the mapped dims of the inputs are named '{name}' (input names "
                f"{list(first)}) and '{t._names[d]}' (input names {list(t._names)}); rename one "
                "of them (rename/refine_names)"
            )
    return name


def _same_values(a: Tensor, b: Tensor) -> bool:
    if a is b:
        return True
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    both_nan = a.isnan() & b.isnan() if a.is_floating_point() or a.is_complex() else False
    return bool(((a == b) | both_nan).all())


def _stack(results: list, out_dims, fname: str, empty: bool = False, name: str | None = None):
    """Stack the per-element results (pytrees of the same structure) leaf by leaf along
    ``out_dims`` (a prefix of the outputs' structure, as torch reads it). ``empty``: the one
    result of a run over an empty batch, which gives size-0 outputs; ``name``: the mapped dim's
    name, given to each stacked dim unless the output already uses it."""
    from ..utils import _pytree
    from .ops.joining import stack

    flat = [_pytree.tree_flatten(r) for r in results]
    spec = flat[0][1]
    if isinstance(results[0], Tensor):  # torch's special case: (d,) also fits a lone tensor
        if out_dims is None or isinstance(out_dims, int):
            dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            dims = [out_dims[0]]
        else:
            dims = None
    else:
        dims = _broadcast(out_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({fname}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
            f"with the structure of `outputs`. out_dims has structure "
            f"{_pytree.tree_structure(out_dims)} but outputs has structure {spec}."
        )
    outs = []
    for k, d in enumerate(dims):
        pieces = [leaves[k] for leaves, _ in flat]
        first = pieces[0]
        if d is None:
            # torch refuses to return a batched tensor unstacked; ember cannot tell a batched
            # tensor, but one that differs across the elements surely is one
            if isinstance(first, Tensor) and not all(
                isinstance(p, Tensor) and _same_values(p, first) for p in pieces[1:]
            ):
                raise ValueError(
                    f"vmap({fname}, ...): `{fname}` can not return a BatchedTensor when out_dim "
                    "is None"
                )
            outs.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(  # noqa: TRY004 - torch's error type
                f"vmap({fname}, ...): `{fname}` must only return Tensors, got type "
                f"{type(first)}. Did you mean to set out_dims= to None for output?"
            )
        st = stack(pieces, d)
        if name is not None and (st._names is None or name not in st._names):
            nn = list(st.names)
            nn[d % st.dim()] = name
            st = st.rename(*nn)
        outs.append(st.narrow(d, 0, 0) if empty else st)
    return spec.unflatten(outs)


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """Return ``func`` mapped over dimension ``in_dims`` of its inputs, the results stacked
    along ``out_dims``.

    Args:
        func: the function to map; it takes tensors (or pytrees of them: tuples, lists,
            dicts) and returns a tensor or a pytree of tensors.
        in_dims: an int or a dim name (the same dim of every tensor input), or a tuple with
            one entry per positional input, each an int, a dim name, None (not mapped) or a
            pytree matching that input's structure (containers of the same type, length and
            keys).
        out_dims: an int, None, or a pytree matching the outputs' structure the same way (an
            int or None at a node covers every output under it). None returns an output that
            does not depend on the mapped inputs (or is not a tensor) as is.
        randomness: ``'error'`` (random ops raise), ``'different'`` (each element draws its own
            numbers) or ``'same'`` (every element sees the same random numbers).
        chunk_size: accepted for compatibility (ember runs one element at a time anyway).

    Names: the mapped dim's name is dropped inside ``func`` (it sees one element); the stacked
    outputs carry it at ``out_dims`` (``func`` leaves the mapped dim alone, so it keeps its name,
    names spec 4.3), unless an output already has a dim of that name (then the stacked dim is
    unnamed). Mapped inputs that name the mapped dim differently are an error.
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    fname = _fname(func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        where = f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>)"
        _check_out_dims(out_dims, fname)
        if not (
            (isinstance(in_dims, (int, tuple)) and not isinstance(in_dims, bool))
            or (isinstance(in_dims, str) and _any_named(args))  # a dim name (names spec 1)
        ):
            raise ValueError(
                f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching "
                f"the structure of inputs, got: {type(in_dims)}."
            )
        if not args:
            raise ValueError(
                f"vmap({fname})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                "are trying to vmap over a function with no inputs. The latter is unsupported."
            )
        flat, dims, spec = _flat_inputs(args, in_dims, where)
        mapped = [(t, d) for t, d in zip(flat, dims, strict=True) if d is not None]
        if not mapped:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        sizes = [t.shape[d] for t, d in mapped]
        name = _mapped_name(mapped) if any(t._names is not None for t, _ in mapped) else None
        if len(set(sizes)) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, "
                f"got sizes {sizes} for the mapped dimension"
            )
        from . import random as _random

        results = []
        start = _random.get_rng_state()
        given = _tensor_ids(flat, set())
        empty = sizes[0] == 0  # one run on zeros gives the outputs' shapes and dtypes
        for i in [None] if empty else range(sizes[0]):
            if randomness == "same":
                _random.set_rng_state(start)
            sel, picked = _select(flat, dims, spec, i)
            SLICES.append(_tensor_ids(picked, set()) - given)
            _state.SIZES.append(sizes[0])
            _state.RANDOMNESS.append(randomness)
            _state.KINDS.append(True)
            _state.mark(p for p, d in zip(picked, dims, strict=True) if d is not None)
            TRANSFORMS[0] += 1
            TRANSFORMS[1] += 1
            try:
                results.append(func(*sel, **kwargs))
            except Exception as e:
                # a vmap inside this one refused the random op before it got here
                inner = getattr(e, "vmap_randomness", False)
                if randomness == "error" and i in (0, None) and not inner and drew_random(start):
                    raise RuntimeError(RANDOM_MSG) from None
                raise
            finally:
                SLICES.pop()
                _state.SIZES.pop()
                _state.RANDOMNESS.pop()
                _state.KINDS.pop()
                if not SLICES:
                    _state.BATCHED.clear()
                    _state.LEVELS.clear()
                TRANSFORMS[0] -= 1
                TRANSFORMS[1] -= 1
            if randomness == "error" and i in (0, None) and drew_random(start):
                raise RuntimeError(RANDOM_MSG)
        return _stack(results, out_dims, fname, empty, name)

    return wrapped
