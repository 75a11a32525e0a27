"""What a running :func:`ember.vmap` knows about the values it maps, shared with the tensor and
the op registry (this module imports nothing of ember's when it loads, so both can read it
without an import cycle).

ember's vmap calls the function once per batch element, so a per-element value is an ordinary
tensor. To raise torch's errors where torch sees a batched tensor (``.item()``, data-dependent
control flow, writing a per-element value into a tensor shared by all elements), the tensors
handed to each call are marked as per-element, and so are the results of every op that reads
a marked tensor. Marks are weak and dropped when the outermost vmap returns.
"""

from __future__ import annotations

import functools
import os
import sys
import weakref

# per active vmap call (innermost last): the ids of the per-element tensors it hands ``func``
SLICES: list[set] = []
# per active vmap call: its batch size
SIZES: list[int] = []
# per active vmap call: its ``randomness`` mode
RANDOMNESS: list[str] = []
# torch.func transforms evaluating their function now: [all of them, those that map it (vmap;
# jacfwd, which torch runs as a vmap of jvp), those in forward mode (jvp, jacfwd)]. A user's
# custom autograd.Function must then have the form torch's transforms require (checked in
# autograd/function.py), and ``requires_grad_`` is refused.
TRANSFORMS = [0, 0, 0]
# per running transform, innermost last: whether it is a vmap (torch words its refusals of a
# per-element value's single value differently when another transform runs inside the vmap)
KINDS: list[bool] = []
# id -> tensor for the per-element tensors of the running vmap calls
BATCHED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_NONE = object()  # what a lookup of an unmarked object gives (None may be looked up)
# id -> the vmap levels (bit k: the k-th active vmap, outermost 0) a marked tensor is a
# per-element value of: a value shared by an inner vmap's elements may not take one of theirs
LEVELS: dict[int, int] = {}

ITEM_MSG = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
    "calling .item() on a Tensor, please try to rewrite what you're doing with other "
    "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
    "report."
)
CONTROL_FLOW_MSG = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues ."
)
INNER_MSG = (
    "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to use "
    "a Tensor in some data-dependent control flow or (3) encountering this error in PyTorch "
    "internals. For (1): we don't support vmap over calling .item() on a Tensor, please try to "
    "rewrite what you're doing with other operations. For (2): we don't support data-dependent "
    "control flow in vmap yet, please file an issue at https://github.com/pytorch/pytorch/issues "
    ". For (3): please file an issue."
)
STORAGE_MSG = "Cannot access data pointer of Tensor that doesn't have storage"
DATA_MSG = "accessing `data` under vmap transform is not allowed"
SET_DATA_MSG = "mutating directly with `.data` under vmap transform is not allowed."
REQUIRES_GRAD_MSG = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using "
    "torch.autograd.functional.* APIs) inside of a function being transformed by a functorch "
    "transform. This is unsupported, please attempt to use the functorch transforms (e.g. grad, "
    "vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function being "
    "transformed instead."
)

_DISPATCH = {
    "registry.py",
    "autocast.py",
    "vmap_state.py",
    "tensor.py",
    "conversion.py",
    "indexing.py",
}


def is_batched(t) -> bool:
    """Whether ``t`` holds a per-element value of a running vmap."""
    return BATCHED.get(id(t), _NONE) is t


def mark(tensors) -> None:
    """Mark ``tensors`` as per-element values of the running (innermost) vmap."""
    bit = 1 << (len(SLICES) - 1)
    for t in tensors:
        LEVELS[id(t)] = _levels(t) | bit
        BATCHED[id(t)] = t


def _levels(t) -> int:
    """The vmap levels ``t`` is a per-element value of (0: none)."""
    return LEVELS[id(t)] if BATCHED.get(id(t), _NONE) is t else 0


def like(factory):
    """Decorate a factory whose first argument is a source tensor (``zeros_like``,
    ``Tensor.new_zeros``): under vmap its result is per-element when the source is, as torch's
    factories batch like their source."""

    @functools.wraps(factory)
    def made_like(src, *args, **kwargs):
        r = factory(src, *args, **kwargs)
        if SLICES and BATCHED.get(id(src), _NONE) is src:
            LEVELS[id(r)] = LEVELS[id(src)]
            BATCHED[id(r)] = r
        return r

    return made_like


def mark_results(ins, outs, op: str | None = None) -> None:
    """The results of an op are per-element when one of its inputs is. ``op``: the op's name,
    for torch's refusal of the ops whose result's shape depends on the values, and of random
    ops with per-element parameters under randomness='same'."""
    levels = 0  # the results are per-element values of every level an input is one of
    for t in ins:
        levels |= _levels(t)
    if not levels:
        return
    if op in _DYNAMIC and _from_user():  # ember's own functions may use them
        raise RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. "
            f"Attempted to vmap over {_DYNAMIC[op]}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature."
        )
    if op == "masked_select" and len(ins) > 1 and is_batched(ins[1]) and _from_user():
        raise RuntimeError(
            "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We "
            "cannot support this because for each batch this would return a "
            "differently shaped Tensor. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature."
        )
    if op in _SAME_REFUSED:
        _refuse_random(levels, "same", True)
    for r in outs:
        LEVELS[id(r)] = levels
        BATCHED[id(r)] = r


def refuse_inplace_random(self) -> None:
    """torch's error for an in-place sampler (``normal_``) writing into ``self`` under a vmap
    with randomness='different' that does not map ``self``: its elements would all see the same
    draw."""
    _refuse_random(_levels(self), "different", False)


def _refuse_random(levels: int, mode: str, mapped: bool) -> None:
    """Raise torch's error for a random op whose tensor (mapped by the vmap levels ``levels``)
    is ``mapped`` or not at a vmap of randomness ``mode``: a parameter of the draw mapped under
    'same' (one draw cannot serve elements whose parameters differ), the target of an in-place
    draw unmapped under 'different'. torch works from the innermost vmap out and stops at one in
    'error' mode (which refuses the random op itself); a 'same' vmap that maps an in-place
    draw's target draws once into a buffer that the vmaps outside it see unmapped. The error is
    flagged so that an outer vmap in 'error' mode lets it through."""
    for k in range(len(RANDOMNESS) - 1, -1, -1):
        batched = bool(levels >> k & 1)
        if RANDOMNESS[k] == "error":
            return
        if RANDOMNESS[k] == mode and batched == mapped:
            err = RuntimeError(_RANDOM_MSGS[mode])
            err.vmap_randomness = True
            raise err
        if RANDOMNESS[k] == "same" and batched:
            levels = 0


_RANDOM_MSGS = {
    "same": (
        "Vmap does not currently support same randomness with a batched tensor input. Please "
        "file an issue with functorch"
    ),
    "different": (
        "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
        "appear like same randomness. If this is necessary for your usage, please file an issue "
        "with functorch."
    ),
}


def refuse_mask_index(index) -> None:
    """torch's error for indexing with a per-element boolean mask (a per-element shape)."""
    if BATCHED.get(id(index), _NONE) is index and index._data.dtype.kind == "b" and _from_user():
        raise RuntimeError(
            "vmap: We do not support batching operators that can support dynamic shape. "
            "Attempting to batch over indexing with a boolean mask."
        )


# random ops whose parameters are tensors: torch refuses a per-element one under randomness='same'
_SAME_REFUSED = {"bernoulli", "_normal", "poisson", "binomial", "multinomial"}

# ember's ops whose result's shape depends on the values, and torch's names for them
_DYNAMIC = {
    "nonzero": "aten::nonzero",
    "unique": "aten::_unique2",
    "unique_consecutive": "aten::unique_consecutive",
}


def refuse_value(t, msg: str) -> None:
    """:func:`refuse` for ``.item()`` and ``bool``: under a transform that runs inside the vmap
    (``vmap(grad(f))``) torch gives one message for both."""
    refuse(t, msg if not KINDS or KINDS[-1] else INNER_MSG)


def refuse(t, msg: str) -> None:
    """Raise torch's error ``msg`` when the user's code asks ``t``, a per-element value (what
    torch calls a BatchedTensor), for its single value or storage (ember's own functions may
    read a per-element value where torch's batched kernels need not)."""
    if BATCHED.get(id(t), _NONE) is t and _from_user():
        raise RuntimeError(msg)


def _from_user() -> bool:
    """Whether the running op was called by the user's code rather than by one of ember's own
    functions (which may fill a fresh buffer with per-element values or pick values by a mask,
    where torch's kernels do the same inside one op)."""
    from .ops.conversion import _PKG_ROOT, _USER_DIRS  # ember's folder; its callers' folders

    f = sys._getframe(2)
    while f is not None:
        path, fn = f.f_code.co_filename, f.f_code.co_name
        # the dispatch machinery and the in-place methods themselves (``index_copy_``) are
        # skipped: the code that called them decides
        if not (
            path.startswith(_PKG_ROOT) and (os.path.basename(path) in _DISPATCH or fn[-1] == "_")
        ):
            return not path.startswith(_PKG_ROOT) or path.startswith(_USER_DIRS)
        f = f.f_back
    return True


def refuse_inplace(name: str, self, others) -> None:
    """torch's error for writing a per-element value into ``self``, a tensor all the elements
    share (one captured from outside the vmapped function, or created inside it): under vmap
    ``self`` would need the batch dim it lacks. ``name``: the in-place op's name."""
    own = _levels(self)
    # ``other`` is per-element at a level (an inner vmap's, say) where ``self`` is shared
    other = next((o for o in others if _levels(o) & ~own), None)
    if other is None or not _from_user():
        return
    level = (_levels(other) & ~own).bit_length() - 1
    if name == "add_":
        shape = [SIZES[level], *_broadcast_shape(self.shape, other.shape)]
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {shape}"
        )
    if name in _ARITHMETIC:
        name, where = "inplace arithmetic", "in a vmap"
    elif name in ("fill_", "index_add_"):
        where = "in a vmap"
    else:
        name, where = f"aten::{name}", f"at level {level + 1}"
    raise RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
        "`other` in extra_args that has more elements than `self`. This happened due to `other` "
        f"being vmapped over but `self` not being vmapped over {where}. Please try to use "
        f"out-of-place operators instead of {name}. If said operator is being called inside "
        "the PyTorch framework, please file a bug report instead."
    )


# in-place ops torch batches with its binary in-place rule (their error reads "inplace
# arithmetic"); add_ has its own rule, which fails on the shapes
_ARITHMETIC = {
    "sub_",
    "mul_",
    "div_",
    "true_divide_",
    "copy_",
    "clamp_min_",
    "clamp_max_",
    "masked_fill_",
    "__setitem__",
}


def _broadcast_shape(a, b) -> list[int]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return [x if y == 1 else y for x, y in zip(a, b, strict=True)]


def refuse_requires_grad() -> None:
    """torch's error for ``requires_grad_()`` inside a function a torch.func transform is
    evaluating, when the user's code (or autograd.functional, which torch names in the error)
    calls it; ember's transforms make their own inputs differentiable that way, and its modules
    their parameters."""
    from .ops.conversion import _PKG_ROOT, _USER_DIRS

    path = sys._getframe(2).f_code.co_filename
    functional = os.path.join(_PKG_ROOT, "autograd", "functional.py")
    if path.startswith(_PKG_ROOT) and not path.startswith(_USER_DIRS) and path != functional:
        return
    raise RuntimeError(REQUIRES_GRAD_MSG)
