"""The named-tensor API (names spec, section 1): rename, rename_, refine_names, align_to, align_as.

``rename`` and ``refine_names`` return a view sharing storage: a registered view op whose
derivative is the identity. ``align_to`` (and ``align_as``) is a registered view op that permutes
and inserts size-1 dims; its derivative squeezes them and permutes back. The engine stamps each
input's names on its gradient, so names flow through backward, double backward included.

The methods here compute the new names (globbing ``'...'``, checking, with error messages that
show both name lists) and then call the ops; ``Tensor.names = ...`` and ``rename_`` only change
the tensor's names (and its ``.grad``'s, so that ``t.grad.names == t.names`` keeps holding).
"""

from __future__ import annotations

from ..names import check_names
from ..registry import op
from ..tensor import Tensor

__all__: list = []  # Tensor methods only: torch has no torch.rename / torch.align_to


def _is_ellipsis(n) -> bool:
    return n is Ellipsis or (type(n) is str and n == "...")


def _show(names) -> str:
    """A name list as the error messages print it: ['N', None, '...']."""
    parts = []
    for n in names:
        if n is None:
            parts.append("None")
        elif _is_ellipsis(n):
            parts.append("'...'")
        else:
            parts.append(repr(n))
    return "[" + ", ".join(parts) + "]"


def _as_list(names: tuple) -> tuple:
    # rename(['N', 'C']) reads like rename('N', 'C'): a name is never a list
    if len(names) == 1 and isinstance(names[0], (list, tuple)):
        return tuple(names[0])
    return names


def _ellipsis_index(names, fn: str):
    idx = None
    for i, n in enumerate(names):
        if _is_ellipsis(n):
            if idx is not None:
                raise RuntimeError(
                    f"{fn}: More than one Ellipsis ('...') found in names {_show(names)}. "
                    "This function supports up to one Ellipsis."
                )
            idx = i
    return idx


def _resolve_ellipsis(names, current: tuple, fn: str) -> tuple:
    """Replace '...' in ``names`` by the names of the dims it globs (those not listed)."""
    idx = _ellipsis_index(names, fn)
    if idx is None:
        return tuple(names)
    n_glob = max(0, len(current) - (len(names) - 1))
    return tuple(names[:idx]) + tuple(current[idx : idx + n_glob]) + tuple(names[idx + 1 :])


def _new_names(t: Tensor, names: tuple, rename_map: dict, fn: str):
    """The names rename/rename_ give ``t`` (validated; None when all are None)."""
    if names and rename_map:
        raise RuntimeError(
            f"{fn}: either positional args or keyword args are allowed, but not both. Use "
            f"tensor.{fn}(*names) to name dims and tensor.{fn}(**rename_map) to rename dims."
        )
    ndim = t._data.ndim
    if rename_map:
        orig = t.names
        cur = list(orig)
        # positions come from the original names, so rename(N='C', C='N') swaps
        pos = {n: i for i, n in enumerate(orig) if n is not None}
        for old, new in rename_map.items():
            i = pos.get(old)
            if i is None:
                raise RuntimeError(
                    f"{fn}: Tried to rename dim '{old}' to dim {new!r} in Tensor{_show(orig)} "
                    f"but dim '{old}' does not exist"
                )
            cur[i] = new
        return check_names(cur, ndim)
    if len(names) == 1 and names[0] is None:
        return None
    names = _as_list(names)
    return check_names(_resolve_ellipsis(names, t.names, fn), ndim)


def _set_names(t: Tensor, names) -> None:
    """Rename ``t`` in place; its ``.grad`` follows, keeping ``t.grad.names == t.names``."""
    t._names = names
    g = t._grad
    if g is not None and g._data.shape == t._data.shape:
        g._names = names


# ---------------------------------------------------------------------- the ops
def _given_names(ins, names=None):
    return names


@op(name="_rename", names=_given_names, view=True, names_always=True, method=False)
def _rename(xp, input, names=None):
    """A view of ``input`` named ``names`` (rename / refine_names)."""
    return input.view()


@_rename.vjp
def _(grad):
    return grad  # the engine stamps the input's names


def _aligned_names(ins, perm=(), axes=(), names=None, src=None):
    return names


@op(name="_align_to", names=_aligned_names, view=True, names_always=True, method=False)
def _align_to(xp, input, perm=(), axes=(), names=None, src=None):
    """``input`` permuted by ``perm`` with size-1 dims inserted at ``axes``, named ``names``."""
    r = xp.transpose(input, perm)
    return xp.expand_dims(r, axes) if axes else r


@_align_to.vjp
def _(grad, perm, axes, names, src):
    return _unalign(grad, perm, axes, src, names)


@op(name="_unalign", names=_aligned_names, view=True, names_always=True, method=False)
def _unalign(xp, input, perm=(), axes=(), names=None, src=None):
    """The inverse of _align_to: squeeze ``axes``, then undo ``perm``; named ``names``."""
    r = xp.squeeze(input, axis=axes) if axes else input
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return xp.transpose(r, inv)


@_unalign.vjp
def _(grad, perm, axes, names, src):
    return _align_to(grad, perm, axes, src, names)


# ---------------------------------------------------------------------- Tensor methods
def rename(self: Tensor, *names, **rename_map) -> Tensor:
    """A view sharing storage with new names.

    ``rename('N', 'C')`` names every dim; ``'...'`` keeps the names of the dims it globs
    (``rename('batch', '...')``); ``rename(N='batch')`` renames dims by name; ``rename(None)``
    drops all names.
    """
    return _rename(self, _new_names(self, names, rename_map, "rename"))


def rename_(self: Tensor, *names, **rename_map) -> Tensor:
    """In-place :meth:`rename`: changes this tensor's names (not its data) and returns it."""
    _set_names(self, _new_names(self, names, rename_map, "rename_"))
    return self


def refine_names(self: Tensor, *names) -> Tensor:
    """A view whose unnamed dims take the given names; named dims must keep theirs.

    ``'...'`` globs the dims not mentioned: ``refine_names('N', ..., 'C')``.
    """
    cur = self.names
    new = _resolve_ellipsis(_as_list(names), cur, "refine_names")
    if len(new) != len(cur):
        raise RuntimeError(
            f"refine_names: cannot coerce Tensor{_show(cur)} to Tensor{_show(new)} because "
            f"they have a different number of dims ({len(cur)} and {len(new)} respectively)."
        )
    checked = check_names(new, len(cur))
    for i, (a, b) in enumerate(zip(cur, new)):
        if a is None or a == b:
            continue
        why = f"'{a}' is more specific than None" if b is None else f"'{a}' is different from '{b}'"
        raise RuntimeError(
            f"refine_names: cannot coerce Tensor{_show(cur)} to Tensor{_show(new)} because "
            f"{why} at index {i}. A named dim can only be renamed with rename()."
        )
    return _rename(self, checked)


def align_to(self: Tensor, *names) -> Tensor:
    """A view with the dims permuted to ``names``; names not in the tensor become size-1 dims.

    ``'...'`` (once) stands for the dims not mentioned, in their current order:
    ``align_to('F', 'E', ...)``. Without it every dim must be named and listed.
    """
    names = _as_list(names)
    cur = self.names
    idx = _ellipsis_index(names, "align_to")
    order = names if idx is None else tuple(n for n in names if not _is_ellipsis(n))
    seen = set()
    for n in order:
        if n is None:
            if idx is not None:
                raise RuntimeError(
                    f"align_to: the desired order of dimensions cannot contain a None name "
                    f"when '...' is used, got {_show(names)} for Tensor{_show(cur)}"
                )
            continue
        if not isinstance(n, str):
            raise TypeError(f"align_to(): names must be str or None, but got {type(n).__name__}")
        if n in seen:
            raise RuntimeError(
                f"align_to: cannot align Tensor{_show(cur)} to {_show(names)}: the desired "
                f"order contains duplicate names ('{n}')"
            )
        seen.add(n)
    where = {n: i for i, n in enumerate(cur) if n is not None}
    if idx is None:
        for i, n in enumerate(cur):
            if n is None:
                raise RuntimeError(
                    f"align_to: All input dims must be named. Found unnamed dim at index {i} "
                    f"of Tensor{_show(cur)}. Name it with refine_names(), or use '...' to "
                    "keep unnamed dims."
                )
            if n not in seen:
                raise RuntimeError(
                    f"align_to: Cannot find dim '{n}' from Tensor{_show(cur)} in desired "
                    f"alignment {_show(names)}. Add it to the order, or use '...'."
                )
    # the output: for each position, an input dim (int) or a new size-1 dim (its name)
    out = [where.get(n, n) if n is not None else None for n in order]
    out = [(o, True) if type(o) is int else (o, False) for o in out]
    if idx is not None:
        mentioned = {o for o, is_dim in out if is_dim}
        globbed = [(i, True) for i in range(len(cur)) if i not in mentioned]
        out = out[:idx] + globbed + out[idx:]
    perm = tuple(o for o, is_dim in out if is_dim)
    axes = tuple(k for k, (_, is_dim) in enumerate(out) if not is_dim)
    new = tuple(cur[o] if is_dim else o for o, is_dim in out)
    new = check_names(new, len(new))
    return _align_to(self, perm, axes, new, self._names)


def align_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.align_to(*other.names)``: permuted and unsqueezed to broadcast with ``other``."""
    if not isinstance(other, Tensor):
        raise TypeError(
            f"align_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}"
        )
    return align_to(self, *other.names)


Tensor.rename = rename
Tensor.rename_ = rename_
Tensor.refine_names = refine_names
Tensor.align_to = align_to
Tensor.align_as = align_as
