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

__all__ = ["checkpoint", "data", "tensorboard"]
