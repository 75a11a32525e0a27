"""Shape and view ops: view, reshape, expand, transpose, permute, squeeze/unsqueeze, ..."""

from __future__ import annotations

from ..registry import op


__all__ = []


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(int(s) for s in shape)


def _reshape_names(ins, *shape):
    # the longest unchanged leading and trailing runs of dims keep their names
    t = ins[0]
    old, names = t._data.shape, t._names
    new = _shape_arg(shape)
    if -1 in new:
        known = 1
        for s in new:
            if s != -1:
                known *= s
        new = tuple(t._data.size // known if s == -1 and known else s for s in new)
    out = [None] * len(new)
    i = 0
    while i < min(len(old), len(new)) and old[i] == new[i]:
        out[i] = names[i]
        i += 1
    j = 1
    while j <= min(len(old), len(new)) - i and old[-j] == new[-j]:
        out[-j] = names[-j]
        j += 1
    return None if all(n is None for n in out) else tuple(out)


@op(names=_reshape_names, view=True)
def view(xp, input, *shape):
    """A view with a new shape (must be compatible with the strides; -1 infers one size)."""
    shp = _shape_arg(shape)
    out = input.view()
    try:
        out.shape = shp
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least "
                           "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                           "instead.") from None
    except ValueError:
        raise RuntimeError(f"shape '{list(shp)}' is invalid for input of size {input.size}") from None
    return out


@view.vjp
def _(grad, input_shape):
    return grad.reshape(input_shape)


@op(names=_reshape_names)
def reshape(xp, input, *shape):
    """A tensor with a new shape: a view when the strides allow, else a copy."""
    shp = _shape_arg(shape)
    try:
        return input.reshape(shp)
    except ValueError:
        raise RuntimeError(f"shape '{list(shp)}' is invalid for input of size {input.size}") from None


@reshape.vjp
def _(grad, input_shape):
    return grad.reshape(input_shape)


def _expand_names(ins, *sizes):
    t = ins[0]
    n = len(_shape_arg(sizes))
    return (None,) * (n - t._data.ndim) + t._names


@op(names=_expand_names, view=True)
def expand(xp, input, *sizes):
    """A broadcast view: size -1 keeps a dim, size-1 dims stretch, new leading dims are added."""
    shp = list(_shape_arg(sizes))
    lead = len(shp) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(input.shape)}}}, size={shp}): the number "
                           "of sizes provided ({len(shp)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({input.ndim})")
    for i in range(input.ndim):
        if shp[lead + i] == -1:
            shp[lead + i] = input.shape[i]
    try:
        return xp.broadcast_to(input, tuple(shp))
    except ValueError:
        for i in range(input.ndim):
            if input.shape[i] != 1 and input.shape[i] != shp[lead + i]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({shp[lead + i]}) must match the existing size "
                    f"({input.shape[i]}) at non-singleton dimension {lead + i}.  Target sizes: {shp}. "
                    f" Tensor sizes: {list(input.shape)}") from None
        raise


@expand.vjp
def _(grad, input_shape):
    return grad.sum_to_size(input_shape)


def _transpose_names(ins, dim0, dim1):
    n = list(ins[0]._names)
    n[dim0], n[dim1] = n[dim1], n[dim0]
    return tuple(n)


@op(names=_transpose_names, view=True)
def transpose(xp, input, dim0, dim1):
    """Swap two dims (ints or names): a view."""
    return xp.swapaxes(input, dim0, dim1)


@transpose.vjp
def _(grad, dim0, dim1):
    return grad.transpose(dim0, dim1)


swapaxes = swapdims = transpose


def _unsqueeze_names(ins, dim):
    n = list(ins[0]._names)
    n.insert(dim % (len(n) + 1), None)
    return tuple(n)


@op(names=_unsqueeze_names, view=True)
def unsqueeze(xp, input, dim):
    """Insert a size-1 dim at ``dim`` (-ndim-1 <= dim <= ndim): a view."""
    n = input.ndim
    if not -n - 1 <= dim <= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n - 1}, {n}], but "
                         f"got {dim})")
    return xp.expand_dims(input, dim)


@unsqueeze.vjp
def _(grad, dim):
    return grad.squeeze(dim)


def _squeeze_axes(shape, dim):
    if dim is None:
        return tuple(i for i, s in enumerate(shape) if s == 1)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    n = len(shape)
    out = []
    for d in dims:
        if n == 0 and d in (0, -1):
            continue
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                             f"but got {d})")
        if shape[d % n] == 1:
            out.append(d % n)
    return tuple(out)


def _squeeze_names(ins, dim=None):
    from ..names import remove_dims

    t = ins[0]
    return remove_dims(t._names, _squeeze_axes(t._data.shape, dim))


@op(names=_squeeze_names, view=True)
def squeeze(xp, input, dim=None):
    """Remove size-1 dims (all of them, or those in ``dim``): a view."""
    return xp.squeeze(input, axis=_squeeze_axes(input.shape, dim))


@squeeze.vjp
def _(grad, input_shape):
    return grad.reshape(input_shape)


def _t(self):
    n = self.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return self if n < 2 else transpose(self, 0, 1)


def _mT(self):
    if self.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _T(self):
    n = self.ndim
    return self if n < 2 else self.permute(*range(n - 1, -1, -1))


def _install():
    from ..tensor import Tensor

    Tensor.t = _t
    Tensor.mT = property(_mT)
    Tensor.T = property(_T)


_install()
