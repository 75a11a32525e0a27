"""The named-tensor API: rename, refine_names, align_to, ... (see the names spec)."""

from __future__ import annotations

from ..names import check_names
from ..registry import op


def _rename_names(ins, *names, **rename_map):
    t = ins[0]
    if names and rename_map:
        raise RuntimeError(
            "rename: either positional args or keyword args are allowed, but not both"
        )
    if rename_map:
        cur = list(t._names or (None,) * t._data.ndim)
        for old, new in rename_map.items():
            if old not in cur:
                raise RuntimeError(
                    f"Tried to rename dim '{old}' to dim {new} in Tensor[{cur}] but "
                    f"dim '{old}' does not exist"
                )
            cur[cur.index(old)] = new
        return check_names(cur, t._data.ndim)
    if len(names) == 1 and names[0] is None:
        return None
    return check_names(names, t._data.ndim)


@op(names=_rename_names, view=True, names_always=True)
def rename(xp, input, *names, **rename_map):
    """A view with new names: ``rename('N', 'C')``, ``rename(N='batch')``, ``rename(None)``."""
    return input.view()


@rename.vjp
def _(grad):
    return grad
