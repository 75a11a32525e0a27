"""``default_collate`` / ``default_convert``: turn samples into batches (torch's semantics)."""

from __future__ import annotations

import copy
import re
from collections import abc

import numpy as np

__all__ = ["collate", "default_collate", "default_collate_err_msg_format", "default_convert"]

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)
_np_str_obj = re.compile(r"[SaUO]")


def _tensor_type():
    from ..core.tensor import Tensor

    return Tensor


def _named(t, elem_names, batch_dim_name):
    # the new batch dim gets ``batch_dim_name``; the samples' own names stay behind it
    if batch_dim_name is not None:
        rest = elem_names if elem_names is not None else (None,) * (t.dim() - 1)
        t.names = (batch_dim_name, *rest)
    return t


def _is_np_scalar_or_array(elem) -> bool:
    return type(elem).__module__ == "numpy" and not isinstance(elem, (np.str_, np.bytes_))


def default_convert(data):
    """Convert numpy arrays / scalars (also inside dicts, lists, tuples) to tensors."""
    from ..core.ops.creation import as_tensor

    Tensor = _tensor_type()
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if _is_np_scalar_or_array(data):
        if isinstance(data, np.ndarray) and _np_str_obj.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, abc.Mapping):
        try:
            if isinstance(data, abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return elem_type({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map: dict | None = None, batch_dim_name: str | None = None):
    """Collate a list of samples; ``collate_fn_map`` maps types to per-type collate functions
    (called as ``fn(batch, collate_fn_map=...)``)."""
    from ..core.dtype import float64
    from ..core.ops.creation import as_tensor, tensor
    from ..core.ops.joining import stack

    Tensor = _tensor_type()
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for t in collate_fn_map:
            if isinstance(elem, t):
                return collate_fn_map[t](batch, collate_fn_map=collate_fn_map)

    def rec(samples):
        return collate(samples, collate_fn_map=collate_fn_map, batch_dim_name=batch_dim_name)

    if isinstance(elem, Tensor):
        return _named(stack(batch, 0), elem._names, batch_dim_name)
    if _is_np_scalar_or_array(elem):
        if isinstance(elem, (np.ndarray, np.memmap)):
            if _np_str_obj.search(elem.dtype.str) is not None:
                raise TypeError(default_collate_err_msg_format.format(elem.dtype))
            return rec([as_tensor(b) for b in batch])
        if elem.shape == ():
            return _named(as_tensor(np.array(batch)), None, batch_dim_name)
    elif isinstance(elem, float):
        return _named(tensor(batch, dtype=float64), None, batch_dim_name)
    elif isinstance(elem, int):
        return _named(tensor(batch), None, batch_dim_name)
    elif isinstance(elem, (str, bytes)):
        return batch
    elif isinstance(elem, abc.Mapping):
        try:
            if isinstance(elem, abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: rec([d[k] for d in batch]) for k in elem})
                return clone
            return elem_type({k: rec([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: rec([d[k] for d in batch]) for k in elem}
    elif isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(rec(s) for s in zip(*batch)))
    elif isinstance(elem, abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))  # tuples, as torch (a str field comes back as one)
        if isinstance(elem, tuple):
            return [rec(s) for s in transposed]
        try:
            if isinstance(elem, abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = rec(s)
                return clone
            return elem_type([rec(s) for s in transposed])
        except TypeError:
            return [rec(s) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def default_collate(batch, *, batch_dim_name: str | None = None):
    """Stack a list of samples into a batch: tensors/arrays/numbers gain a leading batch dim
    (named ``batch_dim_name`` when given), containers are collated field by field."""
    return collate(batch, batch_dim_name=batch_dim_name)
