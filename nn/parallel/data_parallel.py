"""DataParallel and data_parallel on one device.

torch replicates the module onto every listed GPU and splits the batch; ember runs on one
device, where that is exactly "run the module". Without a GPU, like torch, ``device_ids`` is
``[]`` and the module runs as it is. With one, ``device_ids`` may only name that device.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core import device as _devmod
from ...core.tensor import Tensor
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _index(d) -> int:
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    dev = _devmod.device(d)
    if dev.type == "cpu":
        return -1
    return 0 if dev.index is None else dev.index


def _one_device(device_ids, output_device) -> tuple[list, int]:
    """The checked (device_ids, output_device) indices: all must name the single device."""
    ids = [0] if device_ids is None else [_index(d) for d in device_ids]
    if not ids:
        raise RuntimeError("no available devices were found")
    out = ids[0] if output_device is None else _index(output_device)
    if any(i != ids[0] for i in ids) or out != ids[0] or ids[0] != 0:
        raise RuntimeError(
            "ember's DataParallel runs on one device (cuda:0), but got device_ids="
            f"{list(device_ids)} and output_device={output_device}"
        )
    return ids, out


def _to(obj, dev):
    if isinstance(obj, Tensor):
        return obj.to(dev)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to(o, dev) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(o, dev) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, dev) for k, v in obj.items()}
    return obj


class DataParallel(Module):
    """Wraps ``module`` (``.module``; state_dict keys get the ``module.`` prefix) and runs it on
    the one device ember computes on."""

    def __init__(
        self,
        module: Module,
        device_ids: Sequence | None = None,
        output_device=None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        if not _devmod.is_cuda_available():
            self.module = module
            self.device_ids = []
            return
        ids, out = _one_device(device_ids, output_device)
        self.dim = dim
        self.module = module
        self.device_ids = ids
        self.output_device = out
        self.src_device_obj = _devmod.device("cuda", ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        src = self.src_device_obj
        for t in _chain(self.module.parameters(), self.module.buffers()):
            if t.device != src:
                raise RuntimeError(
                    "module must have its parameters and buffers on device "
                    f"{src} (device_ids[0]) but found one of them on device: {t.device}"
                )
        return self.module(*_to(inputs, src), **_to(kwargs, src))


def _chain(*its):
    for it in its:
        yield from it


def data_parallel(
    module: Module,
    inputs,
    device_ids: Sequence | None = None,
    output_device=None,
    dim: int = 0,
    module_kwargs: dict | None = None,
):
    """Evaluates ``module(*inputs, **module_kwargs)`` (on the one device when there is a GPU)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    kwargs = module_kwargs or {}
    if not _devmod.is_cuda_available():
        return module(*inputs, **kwargs)
    ids, _ = _one_device(device_ids, output_device)
    src = _devmod.device("cuda", ids[0])
    return module(*_to(inputs, src), **_to(kwargs, src))
