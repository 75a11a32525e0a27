"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy caching."""

from __future__ import annotations

from numbers import Number
from operator import attrgetter

import ember

from ..autograd.grad_mode import enable_grad

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values) -> tuple:
    r"""Broadcast the given values (Tensors or numbers) against each other.

    Numbers become tensors with the dtype and device of the first tensor argument (or the default
    dtype when all are numbers).

    Args:
        values: Tensors, or objects with ``__torch_function__``, or Python numbers.

    Raises:
        ValueError: if a value is neither a Tensor nor a number.
    """
    if not all(isinstance(v, (ember.Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, ember.Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, ember.Tensor)), None)
        kw = (
            {"dtype": ember.get_default_dtype()}
            if ref is None
            else {"dtype": ref.dtype, "device": ref.device}
        )
        values = [v if isinstance(v, ember.Tensor) else ember.tensor(v, **kw) for v in values]
    return tuple(ember.broadcast_tensors(*values))


def _name_support(values: ember.Tensor, param: ember.Tensor, event: bool = False) -> ember.Tensor:
    """``enumerate_support``'s ``values`` (support, *batch[, events]) named like the parameter
    ``param`` (batch[, events]) they enumerate for: the support dim is new (unnamed), the batch
    dims (size 1 when not expanded, like a keepdim reduction's) and the events dim keep the
    parameter's names (spec 4.2). ``values`` itself when the parameter is unnamed."""
    pn = param._names
    if pn is None:
        return values
    names = (None,) + tuple(pn[: values.dim() - 1])
    return values if all(n is None for n in names) else values.rename(*names)


def _standard_normal(shape, dtype, device) -> ember.Tensor:
    return ember.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value: ember.Tensor, dim: int) -> ember.Tensor:
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: ember.Tensor, is_binary: bool = False) -> ember.Tensor:
    r"""Convert logits to probabilities: a sigmoid when ``is_binary``, else a softmax over the
    last dimension."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def clamp_probs(probs: ember.Tensor) -> ember.Tensor:
    r"""Clamp probabilities to the open interval ``(eps, 1 - eps)`` of their dtype."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: ember.Tensor, is_binary: bool = False) -> ember.Tensor:
    r"""Convert probabilities to logits: log-odds when ``is_binary``, else log-probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(ps_clamped) - ember.log1p(-ps_clamped)
    return ember.log(ps_clamped)


def _tril_flat_index(n: int, diag: int, device) -> ember.Tensor:
    # flat (row-major) positions of the entries on or below diagonal ``diag`` of an n x n
    # matrix, in row order: entry (r, c) is kept when c <= r + diag
    flat = [r * n + c for r in range(n) for c in range(min(r + diag, n - 1) + 1)]
    return ember.tensor(flat, dtype=ember.long, device=device)


def tril_matrix_to_vec(mat: ember.Tensor, diag: int = 0) -> ember.Tensor:
    r"""Flatten the lower triangle of a (batch of) ``D x D`` matrix into a vector, row by row.

    Args:
        mat (Tensor): matrices of shape ``(*, D, D)``.
        diag (int): the diagonal that bounds the triangle (0: main diagonal, -1: strictly
            below it, ...), in ``[-D, D - 1]``.

    Returns:
        Tensor of shape ``(*, M)`` with ``M`` the number of kept entries.
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * mat.shape[-2],))
    return flat.index_select(-1, _tril_flat_index(n, diag, mat.device))


def vec_to_tril_matrix(vec: ember.Tensor, diag: int = 0) -> ember.Tensor:
    r"""Inverse of :func:`tril_matrix_to_vec`: place a (batch of) vector(s) row by row into the
    lower triangle (bounded by diagonal ``diag``) of zero ``D x D`` matrices.

    Args:
        vec (Tensor): vectors of shape ``(*, M)``; ``M`` must be the size of such a triangle.
        diag (int): the diagonal that bounds the triangle.

    Returns:
        Tensor of shape ``(*, D, D)``.

    Raises:
        ValueError: if no square matrix has a triangle of ``M`` entries.
    """
    m = vec.shape[-1]
    # D solves D**2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 M = 0 (its positive root)
    b = 1 + 2 * diag
    n = (-b + (b**2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    # one-sided like torch's check: a size whose root rounds down fails later, in the scatter
    if round(n) - n > ember.finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as the lower "
            "triangular part of a square D x D matrix."
        )
    n = round(n)
    batch = tuple(vec.shape[:-1])
    index = _tril_flat_index(n, diag, vec.device).expand(batch + (m,))
    out = vec.new_zeros(batch + (n * n,)).scatter(-1, index, vec)
    return out.reshape(batch + (n, n))


class lazy_property:
    r"""A property computed on first access and then cached in the instance's ``__dict__``.

    The computation runs with gradients enabled, so a cached value stays connected to the graph.
    """

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _forwarded(path: str, doc: str | None = None) -> property:
    """A read-only property returning the attribute at the dotted ``path`` (``"base_dist.scale"``):
    the parameters a wrapping distribution takes from the distribution it wraps."""
    return property(attrgetter(path), doc=doc)


def _check_probs_or_logits(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


_NO_COUNT = object()


class _ProbsOrLogits:
    r"""Mixin of the families parameterized by exactly one of ``probs`` and ``logits``: the one
    given is stored (and is ``_param``), the other is computed lazily from it: log-odds and
    sigmoid when ``_is_binary``, else normalized log probabilities and softmax."""

    _is_binary = True

    def _set_probs_or_logits(self, probs, logits, total_count=_NO_COUNT) -> ember.Tensor:
        """Store whichever of ``probs``/``logits`` is given (exactly one must be), broadcast
        (against ``total_count`` when given, which is then stored cast to its dtype); return
        it."""
        _check_probs_or_logits(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        if total_count is _NO_COUNT:
            (param,) = broadcast_all(value)
        else:
            count, param = broadcast_all(total_count, value)
            self.total_count = count.type_as(param)
        setattr(self, name, param)
        self._param = param
        return param

    def _expand_probs_or_logits(self, cls, batch_shape, _instance, names=(), copy=()):
        """``expand`` (see ``Distribution._expand_params``) that also gives the new instance
        whichever of probs/logits this one holds, expanded (the other stays lazy)."""
        new = self._get_checked_instance(cls, _instance)
        param_shape = ember.Size(
            tuple(batch_shape) + tuple(self._param.shape[len(self._batch_shape) :])
        )
        for n in ("probs", "logits"):
            if n in self.__dict__:
                setattr(new, n, self.__dict__[n].expand(param_shape))
                new._param = new.__dict__[n]
        return self._expand_params(cls, batch_shape, new, names, copy)

    @lazy_property
    def logits(self) -> ember.Tensor:
        """Log-odds (binary families) or normalized log probabilities."""
        return probs_to_logits(self.probs, is_binary=self._is_binary)

    @lazy_property
    def probs(self) -> ember.Tensor:
        """Probabilities (binary families: of sampling ``1``), normalized."""
        return logits_to_probs(self.logits, is_binary=self._is_binary)


class _ProbsOrLogitsParam(_ProbsOrLogits):
    """:class:`_ProbsOrLogits` that also shows its parameter tensor (``param_shape``, ``_new``)."""

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def param_shape(self) -> ember.Size:
        """The shape of the parameter tensor."""
        return self._param.size()
