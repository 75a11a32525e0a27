"""Saved-tensor hooks: what a node keeps of a tensor saved for backward, while hooks are set.

With ``saved_tensors_hooks(pack, unpack)`` active, recording a node packs each tensor it saves
(inputs, the output a derivative reuses, ``ctx.save_for_backward``'s tensors): the node keeps
``pack(tensor)`` and backward reads ``unpack(packed)``. The node then holds no reference to the
tensor, which is what lets a hook move activations off the device or compress them; as in
torch, in-place changes of a packed tensor are not checked (what unpack returns is used). The
registry tests one list per recorded op; nothing else runs when no hook is set.
"""

from __future__ import annotations

from .grad_mode import names_on

HOOKS: list = []  # (pack, unpack) pairs; the innermost (last) one packs
DISABLED: list = []  # disable_saved_tensors_hooks messages in force


class Packed:
    """A saved tensor as its pack hook returned it."""

    __slots__ = ("obj", "unpack")

    def __init__(self, obj, unpack) -> None:
        self.obj = obj
        self.unpack = unpack

    def get(self):
        from ..core.tensor import Tensor

        # the engine unpacks with name inference off for its derivative math; the hook is user
        # code (checkpoint's recomputation runs the whole function), so names flow in it
        with names_on():
            t = self.unpack(self.obj)
        if not isinstance(t, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type(t).__name__}"
            )
        return t


def _pack(t, pack, unpack) -> Packed:
    version = t._version
    HOOKS.append(None)  # hooks are off inside a pack hook: the ops it runs save nothing packed
    try:
        packed = Packed(pack(t), unpack)
    finally:
        HOOKS.pop()
    if t._version != version:
        raise RuntimeError(
            "A saved tensor pack hook is modifying its input in place. Tensors provided as input "
            "to pack hook cannot be modified by in-place operations as this can lead to "
            "unexpected side-effects. Please open an issue if you need to perform in-place "
            "operations on the input to a pack hook."
        )
    return packed


def pack_node(node, first_output=None) -> None:
    """Pack what ``node`` saved with the innermost hooks (``first_output``: the output a
    registered derivative reuses as ``result``, when it does)."""
    from ..core.tensor import Tensor

    hooks = HOOKS[-1]
    if hooks is None:  # recording inside a pack hook
        return
    pack, unpack = hooks
    saved = node.saved
    for i, s in enumerate(saved):
        if isinstance(s, Tensor):
            saved[i] = _pack(s, pack, unpack)
    node.vers = []  # as torch: a packed tensor's in-place changes are not checked
    # res: () routes backward through _saved_args, which unpacks; [packed] when the result
    # is reused
    node.res = [_pack(first_output, pack, unpack)] if first_output is not None else ()
