"""torch.vmap: map a function over a dimension of its inputs.

ember has no batching rules: ``vmap(func)`` calls ``func`` once per index of the mapped dimension
and stacks the results. For functions without side effects on their inputs the result equals
torch's (values, gradients: every step is recorded on the tape); the cost is one call per batch
element, so it is a convenience, not a speed-up. Randomness follows torch's three modes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .tensor import Tensor

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")

# per active vmap call (innermost last): the ids of the per-element tensors it hands ``func``
SLICES: list[set] = []

# torch.func transforms evaluating their function now: [all of them, those that map it (vmap;
# jacfwd, which torch runs as a vmap of jvp), those in forward mode (jvp, jacfwd)]. A user's
# custom autograd.Function must then have the form torch's transforms require (checked in
# autograd/function.py).
TRANSFORMS = [0, 0, 0]

_BN_MSG = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will "
    "be updated in place, were not batched.\nIf you are using a module and do not need eval "
    "mode, please set `track_running_stats` to be False.If you are using a prebuilt module and "
    "do not need eval mode, please see the functorch website for resources on how to patch your "
    "module to work with vmap"
)


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
    return getattr(func, "__name__", repr(func))


def _leaves(tree, spec, where: str, out: list) -> None:
    """Collect (tensor, dim) pairs of ``tree`` mapped by ``spec`` (an int/None or a structure
    matching ``tree``), raising torch's errors for structure mismatches and bad dims."""
    if spec is None or isinstance(spec, int):
        if isinstance(tree, (tuple, list)):
            for t in tree:
                _leaves(t, spec, where, out)
        elif isinstance(tree, dict):
            for t in tree.values():
                _leaves(t, spec, where, out)
        elif spec is not None:
            if not isinstance(tree, Tensor):
                raise ValueError(  # noqa: TRY004 - torch's error type
                    f"{where}: Got in_dim={spec} for an input but the input is of type "
                    f"{type(tree)}. We cannot vmap over non-Tensor arguments, please use None "
                    "as the respective in_dim"
                )
            nd = tree.dim()
            if not -nd <= spec < nd:
                raise ValueError(
                    f"{where}: Got in_dim={spec} for some input, but that input is a Tensor of "
                    f"dimensionality {nd} so expected in_dim to satisfy -{nd} <= in_dim < {nd}."
                )
            out.append((tree, spec))
        return
    same = (
        isinstance(spec, (tuple, list))
        and isinstance(tree, (tuple, list))
        and len(spec) == len(tree)
    ) or (isinstance(spec, dict) and isinstance(tree, dict) and spec.keys() == tree.keys())
    if not same:
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {_structure(spec)} but inputs has structure {_structure(tree)}."
        )
    items = spec.items() if isinstance(spec, dict) else enumerate(spec)
    for k, s in items:
        _leaves(tree[k], s, where, out)


def _structure(tree) -> str:
    if isinstance(tree, (tuple, list)):
        return f"{type(tree).__name__}({', '.join(_structure(t) for t in tree)})"
    if isinstance(tree, dict):
        return "dict(" + ", ".join(f"{k}: {_structure(v)}" for k, v in tree.items()) + ")"
    return "*"


def _select(tree, spec, i: int | None):
    """``tree`` with every mapped tensor indexed at ``i`` along its mapped dim (``i`` None: zeros
    of an element's shape, to run ``func`` once over an empty batch)."""
    if spec is None:
        return tree
    if isinstance(spec, int):
        if isinstance(tree, Tensor):
            if i is None:
                d = spec % tree.dim()
                return tree.new_zeros(tree.shape[:d] + tree.shape[d + 1 :])
            return tree.select(spec, i)
        if isinstance(tree, (tuple, list)):
            return type(tree)(_select(t, spec, i) for t in tree)
        if isinstance(tree, dict):
            return {k: _select(v, spec, i) for k, v in tree.items()}
        return tree
    items = spec.items() if isinstance(spec, dict) else enumerate(spec)
    picked = {k: _select(tree[k], s, i) for k, s in items}
    return picked if isinstance(tree, dict) else type(tree)(picked[k] for k in range(len(tree)))


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


def _stack(
    results: list,
    out_dims,
    where: str,
    fname: str,
    empty: bool = False,
    name: str | None = None,
):
    """Stack the per-element results along ``out_dims`` (``empty``: the one result of a run
    over an empty batch, which gives size-0 outputs); ``name``: the mapped dim's name, given to
    each stacked dim unless the output already uses it."""
    from .ops.joining import stack

    first = results[0]
    single = not isinstance(first, tuple)
    outs = [(r,) for r in results] if single else results
    n_out = len(outs[0])
    dims = (out_dims,) * n_out if not isinstance(out_dims, (tuple, list)) else tuple(out_dims)
    if len(dims) != n_out:
        raise ValueError(
            f"{where}: out_dims is not compatible with the structure of `outputs`. out_dims has "
            f"{len(dims)} entries but outputs has {n_out}."
        )
    stacked = []
    for k, d in enumerate(dims):
        pieces = [o[k] for o in outs]
        if d is None:
            stacked.append(pieces[0])
            continue
        if not isinstance(pieces[0], Tensor):
            raise ValueError(  # noqa: TRY004 - torch's error type
                f"vmap({fname}, ...): `{fname}` must only return Tensors, got type "
                f"{type(pieces[0])}. Did you mean to set out_dims= to None for output?"
            )
        st = stack(pieces, d)
        if name is not None and (st._names is None or name not in st._names):
            nn = list(st.names)
            nn[d % st.dim()] = name
            st = st.rename(*nn)
        stacked.append(st.narrow(d, 0, 0) if empty else st)
    return stacked[0] if single else tuple(stacked)


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
        func: the function to map; it takes and returns tensors (or tuples of them).
        in_dims: an int (the same dim of every tensor input), or a (nested) tuple matching the
            positional inputs with an int or None per input (None: not mapped).
        out_dims: an int, or a tuple with one entry per output (None: the output of the first
            call, for outputs that do not depend on the mapped inputs).
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
        if not (isinstance(in_dims, (int, tuple)) and not isinstance(in_dims, bool)):
            raise ValueError(  # noqa: TRY004 - torch's error type
                f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching "
                f"the structure of inputs, got: {type(in_dims)}."
            )
        if not args:
            raise ValueError(
                f"vmap({fname})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                "are trying to vmap over a function with no inputs. The latter is unsupported."
            )
        mapped: list = []
        _leaves(args, in_dims, where, mapped)
        if not mapped:
            raise ValueError(
                f"{where}: at least one input must be a Tensor mapped over (in_dim not None)"
            )
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
        given = _tensor_ids(args, set())
        empty = sizes[0] == 0  # one run on zeros gives the outputs' shapes and dtypes
        for i in [None] if empty else range(sizes[0]):
            if randomness == "same":
                _random.set_rng_state(start)
            sel = _select(args, in_dims, i)
            SLICES.append(_tensor_ids(sel, set()) - given)
            TRANSFORMS[0] += 1
            TRANSFORMS[1] += 1
            try:
                results.append(func(*sel, **kwargs))
            finally:
                SLICES.pop()
                TRANSFORMS[0] -= 1
                TRANSFORMS[1] -= 1
            if (
                randomness == "error"
                and i in (0, None)
                and not _random.get_rng_state().equal(start)
            ):
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap"
                )
        if isinstance(results[0], list):
            results = [tuple(r) for r in results]
        return _stack(results, out_dims, where, fname, empty, name)

    return wrapped
