"""A view's grad_fn after its base changed in place (torch's view + in-place handling, forward way).

A view shares its base's version counter. When the registry records a view op, the view keeps in
``_extra`` how to replay it from its base (``"vc"``: a chain of (op, options, kwargs, output index))
and the version at which its grad_fn was set (``"gv"``). An in-place op on the base (or on another
view of it) bumps the shared version, so the view's grad_fn is out of date: where the view is used
with grad on (an op that records a node, backward roots, grad inputs, hooks), ``refresh`` replays
the chain on the base, whose grad_fn is current, and takes the replayed view's grad_fn. This is
torch's regenerated grad_fn (torch replays with as_strided; the gradients are the same).

Nothing here runs on the no-grad path: the chain is written only when a view node is recorded.
"""

from __future__ import annotations

from .grad_mode import _state

# ops returning several views: torch refuses to regenerate their outputs' grad_fn (its names)
_MULTI = {"split": "Split", "chunk": "Split", "unbind": "Unbind", "split_with_sizes": "Split"}


def note_views(od, parent, outs, opts, kw) -> None:
    """Called by the registry after recording a view op's node: ``outs`` (views of ``parent``)
    learn how to be replayed from their base. A parent that is a view with no chain (detached,
    or made without grad) gives no chain: such a view keeps its grad_fn, as before.

    Views of a multi-view op's outputs (split) or of a custom Function's view outputs inherit
    ``"cm"`` (torch's creation meta: "multi" / "custom"): in-place writes to them are refused."""
    pex = parent._extra
    cm = "multi" if od.name in _MULTI else (pex.get("cm") if pex else None)
    if pex and pex.get("base") is not None:
        chain = pex.get("vc")
        if chain is None and cm is None:
            return
    else:
        chain = ()
    for k, t in enumerate(outs):
        if t._grad_fn is not None:
            ex = t._extra
            if chain is not None:
                ex["vc"] = chain + ((od, opts, kw, k),)
                ex["gv"] = t._ver[0]
            if cm is not None:
                ex["cm"] = cm


def fresh(t) -> None:
    """Refresh ``t``'s grad_fn if it is a view whose base changed since (engine entry points)."""
    ex = t._extra
    if ex and "gv" in ex and ex["gv"] != t._ver[0]:
        refresh(t)


def refresh(t):
    """Replay view ``t`` from its base to get a current grad_fn; return it."""
    ex = t._extra
    chain = ex["vc"]
    if ex.get("cm") and not ex.get("unsafe"):
        # a view from a custom Function (or of one): torch refuses to regenerate it
        raise RuntimeError(_multi_error(t))
    for od, _, _, _ in chain:
        if od.name in _MULTI:
            raise RuntimeError(_multi_error(t))
    prev = _state.enabled
    _state.enabled = True  # the replay must record (backward() may be called under no_grad)
    try:
        r = ex["base"]
        for od, opts, kw, k in chain:
            r = od.public(r, *opts, **kw)
            if not hasattr(r, "_data"):  # a multi-output view op: its k-th output
                r = r[k]
    except (RuntimeError, IndexError, ValueError):
        r = None
    finally:
        _state.enabled = prev
    if r is None or r._data.shape != t._data.shape or r._data.dtype != t._data.dtype:
        # the base's geometry changed in place (t_(), squeeze_()): the chain no longer applies
        del ex["vc"], ex["gv"]
        return t._grad_fn
    ex["gv"] = t._ver[0]
    node = r._grad_fn
    if node is not None and node is not ex["base"]._grad_fn:
        node.bname = "AsStridedBackward0"  # torch regenerates a view as one as_strided node
    t._grad_fn = node
    if "retain_hook" in ex:  # the retained gradient is the regenerated node's, as in torch
        from .engine import move_retain_hook

        move_retain_hook(t)
    t.requires_grad = r.requires_grad
    rex = r._extra
    nr = rex.get("nr", 0) if rex else 0
    if nr:
        ex["nr"] = nr
    else:
        ex.pop("nr", None)
    return t._grad_fn


def rebased(t) -> None:
    """An in-place op wrote view ``t``'s new values into its base's history (CopySlices). As in
    torch, the view's grad_fn is then regenerated from the base on its next use, so that its
    gradient flows through the base's new node (the base's hooks and retained grad see it).
    A split or custom Function output (which torch does not regenerate) keeps the op's node."""
    ex = t._extra
    if ex and "vc" in ex:
        ex["gv"] = -1 if "cm" not in ex else t._ver[0]


def forget(t) -> None:
    """The view's in-place history did not reach its base: never replay it from the base."""
    ex = t._extra
    if ex and "vc" in ex:
        del ex["vc"]
        ex.pop("gv", None)


def _multi_error(t) -> str:
    fn = t._grad_fn
    ex = t._extra
    nr = ex.get("nr", 0) if ex else 0
    name = fn.name() if fn is not None else "a view op"
    i = name.rfind("Backward")
    if i > 0:
        name = name[:i]
    name = {"Chunk": "Split"}.get(name, name)
    from ..core.ops.indexing import _VIEW_INPLACE_WHY

    why = _VIEW_INPLACE_WHY["custom" if ex and ex.get("cm") == "custom" else "multi"]
    return (
        f"Output {nr} of {name} is a view and its base or another view of its base has been "
        f"modified inplace. {why}"
    )
