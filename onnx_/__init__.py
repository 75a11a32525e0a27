"""ember.onnx (torch.onnx): ONNX export is not supported by ember."""

from __future__ import annotations

import sys as _sys

from ..dropin import NotImplementedByEmber

__all__ = ["export", "is_in_onnx_export"]


def export(*args, **kwargs):
    """Not supported: raises an error naming torch.onnx.export."""
    raise NotImplementedByEmber(
        "torch.onnx.export", "ember cannot export ONNX graphs; save a state_dict instead"
    )


def dynamo_export(*args, **kwargs):
    """Not supported: raises an error naming torch.onnx.dynamo_export."""
    raise NotImplementedByEmber("torch.onnx.dynamo_export", "ember cannot export ONNX graphs")


def is_in_onnx_export() -> bool:
    """False: ember never exports ONNX."""
    return False


# a folder named `onnx` in the checkout would shadow the PyPI package `onnx` for any
# process with the checkout on sys.path: the folder is onnx_, registered as ember.onnx
_sys.modules[__name__[:-1]] = _sys.modules[__name__]
