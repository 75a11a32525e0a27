"""ember.utils (torch.utils): ``data`` (the same module as ember.data), ``checkpoint`` and
``tensorboard`` (SummaryWriter writing scalars to CSV)."""

import sys as _sys

from .. import data
from ..dropin import AliasFinder as _AliasFinder

# `ember.utils.data` IS ember.data; its submodules too (ember.utils.data.dataloader is
# ember.data.dataloader, never a second copy of the file)
_sys.modules[__name__ + ".data"] = data
if not any(getattr(f, "alias", None) == __name__ + ".data" for f in _sys.meta_path):
    _sys.meta_path.insert(
        0, _AliasFinder(__name__ + ".data", "ember.data", guard=False, torch_like=False)
    )

from . import checkpoint, tensorboard

__all__ = ["checkpoint", "data", "swap_tensors", "tensorboard"]


def swap_tensors(t1, t2) -> None:
    """Swaps the contents of tensors ``t1`` and ``t2`` in place, keeping each object's identity:
    afterwards ``t1`` holds what ``t2`` held (data, dtype, autograd state, Python attributes and
    class) and the other way round. Refused while a weak reference points at either of them."""
    import weakref

    from ..core.tensor import Tensor

    for name, t in (("t1", t1), ("t2", t2)):
        if weakref.getweakrefcount(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    for t in (t1, t2):
        if not isinstance(t, Tensor):
            raise TypeError(f"swap_tensors expects two Tensors, got {type(t).__name__}")
    c1, c2 = type(t1), type(t2)
    if c1 is not c2 and ("__dict__" in dir(c1)) != ("__dict__" in dir(c2)):
        # a Python class swap needs the same instance layout
        raise RuntimeError(
            f"Cannot swap a {c1.__name__} with a {c2.__name__}: ember cannot exchange the "
            "classes of tensors with different instance layouts"
        )
    for slot in Tensor.__slots__:
        if slot == "__weakref__":
            continue
        a, b = getattr(t1, slot), getattr(t2, slot)
        setattr(t1, slot, b)
        setattr(t2, slot, a)
    if c1 is not c2:
        t1.__class__, t2.__class__ = c2, c1
    if hasattr(t1, "__dict__") and hasattr(t2, "__dict__"):
        d1 = dict(t1.__dict__)
        t1.__dict__.clear()
        t1.__dict__.update(t2.__dict__)
        t2.__dict__.clear()
        t2.__dict__.update(d1)
