"""``default_collate`` / ``default_convert``: turn samples into batches (torch's semantics)."""

from __future__ import annotations

import copy
import re
from collections import abc

import numpy as np

from ..core.tensor import Tensor as _Tensor

__all__ = [
    "collate",
    "collate_float_fn",
    "collate_int_fn",
    "collate_numpy_array_fn",
    "collate_numpy_scalar_fn",
    "collate_str_fn",
    "collate_tensor_fn",
    "default_collate",
    "default_collate_err_msg_format",
    "default_collate_fn_map",
    "default_convert",
]

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)
np_str_obj_array_pattern = re.compile(r"[SaUO]")


def _is_np_scalar_or_array(elem) -> bool:
    return type(elem).__module__ == "numpy" and not isinstance(elem, (np.str_, np.bytes_))


def default_convert(data):
    """Convert numpy arrays / scalars (also inside dicts, lists, tuples) to tensors."""
    from ..core.ops.creation import as_tensor

    elem_type = type(data)
    if isinstance(data, _Tensor):
        return data
    if _is_np_scalar_or_array(data):
        if (
            isinstance(data, np.ndarray)
            and np_str_obj_array_pattern.search(data.dtype.str) is not None
        ):
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
    """Collate a list of samples as torch does: a sample's type found in ``collate_fn_map`` (first
    exactly, then by isinstance in insertion order) is handled by its function, called as
    ``fn(batch, collate_fn_map=...)``; mappings, namedtuples and sequences are collated field by
    field; anything else raises. A tensor a function returns gets ``batch_dim_name`` on dim 0."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        fn = collate_fn_map.get(elem_type)
        if fn is None:
            fn = next((f for t, f in collate_fn_map.items() if isinstance(elem, t)), None)
        if fn is not None:
            out = fn(batch, collate_fn_map=collate_fn_map)
            if batch_dim_name is not None and isinstance(out, _Tensor):
                out.names = (batch_dim_name, *out.names[1:])
            return out

    def rec(samples):
        return collate(samples, collate_fn_map=collate_fn_map, batch_dim_name=batch_dim_name)

    if isinstance(elem, abc.Mapping):
        try:
            if isinstance(elem, abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: rec([d[k] for d in batch]) for k in elem})
                return clone
            return elem_type({k: rec([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: rec([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(rec(s) for s in zip(*batch)))
    if isinstance(elem, abc.Sequence):
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


def collate_tensor_fn(batch, *, collate_fn_map: dict | None = None):
    from ..core.ops.joining import stack

    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map: dict | None = None):
    from ..core.ops.creation import as_tensor

    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict | None = None):
    from ..core.ops.creation import as_tensor

    return as_tensor(np.array(batch))


def collate_float_fn(batch, *, collate_fn_map: dict | None = None):
    from ..core.dtype import float64
    from ..core.ops.creation import tensor

    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map: dict | None = None):
    from ..core.ops.creation import tensor

    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map: dict | None = None):
    return batch


# torch's default table, which users extend (``default_collate_fn_map.update(...)``) or copy
default_collate_fn_map: dict = {
    _Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch, *, batch_dim_name: str | None = None):
    """Stack a list of samples into a batch: tensors/arrays/numbers gain a leading batch dim
    (named ``batch_dim_name`` when given), containers are collated field by field."""
    return collate(batch, collate_fn_map=default_collate_fn_map, batch_dim_name=batch_dim_name)
