"""torch.* functions that are a Tensor method under another spelling, or a copy of a view.

``ember.neg_(x)`` is ``x.neg_()``; ``ember.permute_copy(x, dims)`` is ``x.permute(dims)`` as a
new tensor (``clone`` of the view, so gradients flow the same way). Defined from the method at
call time, so a method is still written once (in its op's file).
"""

from __future__ import annotations

import warnings

from ..dims import normalize_dim
from ..layout import contiguous_format
from ..tensor import Tensor

# torch.<name>(tensor, *args) == tensor.<name>(*args)
_METHODS = (
    "addmv_",
    "as_strided_",
    "ccol_indices",
    "clamp_max_",
    "clamp_min_",
    "col_indices",
    "crow_indices",
    "detach_",
    "fill_",
    "gcd_",
    "index_put_",
    "indices",
    "is_inference",
    "lcm_",
    "ldexp_",
    "neg_",
    "negative_",
    "nonzero_static",
    "put",
    "resize_as_",
    "row_indices",
    "split_with_sizes",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "values",
    "xlogy_",
    "zero_",
)
# torch.<view>_copy(tensor, *args) == tensor.<view>(*args) as a new tensor
_VIEWS = (
    "as_strided",
    "ccol_indices",
    "col_indices",
    "crow_indices",
    "detach",
    "diagonal",
    "expand",
    "indices",
    "permute",
    "row_indices",
    "select",
    "squeeze",
    "t",
    "transpose",
    "unfold",
    "unsqueeze",
    "values",
    "view",
    "view_as_complex",
    "view_as_real",
)
_SEQ_VIEWS = ("split", "split_with_sizes", "unbind")  # their _copy returns a tuple of copies


def _method(name: str):
    def fn(input: Tensor, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``ember.{name}(input, ...)`` is ``input.{name}(...)``."
    return fn


def _copy(name: str, seq: bool = False):
    def fn(input: Tensor, *args, **kwargs):
        import ember

        view = getattr(ember, name, None) or getattr(Tensor, name)
        r = view(input, *args, **kwargs)
        # torch's *_copy results are contiguous whatever the view's layout
        if seq:
            return tuple(t.clone(memory_format=contiguous_format) for t in r)
        return r.clone(memory_format=contiguous_format)

    fn.__name__ = fn.__qualname__ = name + "_copy"
    fn.__doc__ = f"``{name}`` as a new tensor (no storage shared with ``input``)."
    return fn


def slice_copy(input: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """``input`` sliced along ``dim`` (``start:end:step``), as a new tensor."""
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if dim is None and input._names is None:
        raise TypeError("slice_copy(): argument 'dim' (position 2) must be int, not NoneType")
    key = (slice(None),) * normalize_dim(input, dim) + (slice(start, end, step),)
    return input[key].clone(memory_format=contiguous_format)


def alias_copy(input: Tensor) -> Tensor:
    """A contiguous copy of ``input`` (torch's alias, copied)."""
    return input.clone(memory_format=contiguous_format)


def fill(input: Tensor, value) -> Tensor:
    """A tensor like ``input`` filled with ``value`` (out of place ``fill_``)."""
    return input.clone().fill_(value)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def typename(obj) -> str:
    """A tensor's legacy type name (``torch.FloatTensor``); for a class or function its own
    qualified name (``ember.nn.modules.linear.Linear``), for any other object its class's."""
    if isinstance(obj, Tensor):
        return obj.type()
    # classes and functions name themselves; instances (which carry no __qualname__) name their
    # class, also when a C type (OrderedDict) gives them no __module__ either
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def set_default_tensor_type(t) -> None:
    """Deprecated torch API: ``FloatTensor``/``DoubleTensor`` (or their names) set the default
    float dtype; a ``cuda`` type also makes cuda the default device."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    import ember

    from ..legacy_types import CPU_TYPES, CUDA_TYPES

    if isinstance(t, str):
        cuda = ".cuda." in t
        t = (CUDA_TYPES if cuda else CPU_TYPES).get(t.rsplit(".", 1)[-1])
    dtype = getattr(t, "dtype", None)
    if dtype is None or not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    ember.set_default_dtype(dtype)
    ember.set_default_device("cuda" if t.is_cuda else "cpu")


_generated = {n: _method(n) for n in _METHODS}
_generated.update({n + "_copy": _copy(n) for n in _VIEWS})
_generated.update({n + "_copy": _copy(n, seq=True) for n in _SEQ_VIEWS})
globals().update(_generated)

__all__ = [
    "alias_copy",
    "fill",
    "is_same_size",
    "set_default_tensor_type",
    "slice_copy",
    "typename",
]
__all__ += list(_generated)
