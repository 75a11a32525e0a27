"""Variable-length sequences for the recurrent layers (torch.nn.utils.rnn).

A PackedSequence holds the steps of B sequences sorted by decreasing length, time-major:
``data`` (sum of lengths, *) and ``batch_sizes[t]`` = how many sequences are still running at
step t. Packing, padding and unpacking are each ONE gather (``index_select`` with an index built
on the host from the lengths), so they are differentiable and cost one op whatever the length.
"""

from __future__ import annotations

import numbers
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from ...autograd.node import as_torch_node as _as_torch_node
from ...core import dtype as _dt
from ...core.ops.creation import arange
from ...core.ops.creation import tensor as _tensor
from ...core.ops.shape import cat
from ...core.registry import broadcast_error
from ...core.tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

_SORT_MSG = (
    "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
    "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
    "requirement if you do not need ONNX exportability."
)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    if permutation is None:
        return None
    return permutation.argsort()


def _host_ints(t) -> np.ndarray:
    if isinstance(t, Tensor):
        return np.asarray(t.detach().cpu()._data).astype(np.int64).reshape(-1)
    return np.asarray(list(t), dtype=np.float64).astype(np.int64).reshape(-1)


def _long(a: np.ndarray, device=None) -> Tensor:
    return _tensor(np.ascontiguousarray(a, dtype=np.int64), device=device)


_PackedSequenceBase = namedtuple(
    "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"]
)


def _cast_method(name: str, dtype: str):
    """The PackedSequence method ``name`` (``.double()``, ...): ``self.to(dtype=<dtype>)``."""

    def cast(self) -> PackedSequence:
        return self._cast(getattr(_dt, dtype))

    cast.__name__ = name
    cast.__qualname__ = f"PackedSequence.{name}"
    return cast


class PackedSequence(_PackedSequenceBase):
    """The packed steps of a batch of variable-length sequences (see the module docstring).

    Build it with :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand."""

    # Names (spec 4.3): ``data``'s first dim merges the time and batch dims, so it cannot carry
    # their names; a sequence packed from a named input keeps them here, as (time, batch), and
    # pad_packed_sequence (and an RNN's h_n) give them back. None: packed from unnamed dims.
    _dim_names: tuple | None = None

    def __new__(
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
                )
        else:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _batch_sizes_tuple(self) -> tuple:
        return tuple(int(v) for v in _host_ints(self.batch_sizes))

    def pin_memory(self) -> PackedSequence:
        return self

    def is_pinned(self) -> bool:
        return False

    def to(self, *args, **kwargs) -> PackedSequence:
        """Like Tensor.to on ``data``; the indices follow the data's device, batch_sizes stays."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        si = self.sorted_indices.to(dev) if self.sorted_indices is not None else None
        ui = self.unsorted_indices.to(dev) if self.unsorted_indices is not None else None
        return _with_dim_names(type(self)(data, self.batch_sizes, si, ui), self._dim_names)

    def cuda(self, *args, **kwargs) -> PackedSequence:
        ex = self.data.new_empty(0).cuda(*args, **kwargs)
        return self.to(device=ex.device)

    def cpu(self, *args, **kwargs) -> PackedSequence:
        return self.to(device="cpu")

    def _cast(self, dtype) -> PackedSequence:
        return self.to(dtype=dtype)

    double = _cast_method("double", "float64")
    float = _cast_method("float", "float32")
    half = _cast_method("half", "float16")
    long = _cast_method("long", "int64")
    int = _cast_method("int", "int32")
    short = _cast_method("short", "int16")
    char = _cast_method("char", "int8")
    byte = _cast_method("byte", "uint8")

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def _with_dim_names(seq: PackedSequence, dim_names: tuple | None) -> PackedSequence:
    """``seq`` remembering the (time, batch) names of the dims its data merges (None: none)."""
    if dim_names is not None and any(n is not None for n in dim_names):
        seq._dim_names = dim_names
    return seq


def _pack_index(lengths: np.ndarray, T: int, B: int, batch_first: bool):
    """batch_sizes and the row of the flat (T*B or B*T) padded input for each packed row."""
    t_idx = np.arange(T)
    batch_sizes = (lengths[None, :] > t_idx[:, None]).sum(1)
    rows = []
    for t in range(int(lengths[0]) if lengths.size else 0):
        b = np.arange(batch_sizes[t])
        rows.append(b * T + t if batch_first else t * B + b)
    idx = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    return batch_sizes[: int(lengths[0])], idx


def _lengths_error(lengths, nd: int) -> RuntimeError:
    dev = lengths.device.type if isinstance(lengths, Tensor) else "cpu"
    return RuntimeError(
        f"'lengths' argument should be a 1D CPU int64 tensor, but got {nd}D {dev} Long tensor"
    )


def pack_padded_sequence(
    input: Tensor, lengths, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of ``lengths``.

    With ``enforce_sorted=False`` the sequences may come in any order (they are sorted here and
    ``unsorted_indices`` restores the order)."""
    nd = lengths.dim() if isinstance(lengths, Tensor) else np.ndim(lengths)
    bdim = 0 if batch_first else 1
    sorted_indices = order = None
    if not enforce_sorted:
        shape = tuple(lengths.shape) if isinstance(lengths, Tensor) else np.shape(lengths)
        lens = _host_ints(lengths).reshape(shape)
        order = np.argsort(-lens, axis=-1, kind="stable") if nd else np.zeros((), np.int64)
        sorted_indices = _long(order, input.device)
        if nd != 1 or lens.size != input.size(bdim):
            # torch gathers the sorted batch before its checks: index_select's errors, or
            # (fewer lengths than sequences) only the sequences the lengths name
            input = input.index_select(bdim, sorted_indices)
            lens, order = lens[order] if nd else lens, None
    if nd != 1:  # torch converts to a cpu int64 tensor, then checks its rank
        raise _lengths_error(lengths, nd)
    if order is not None:
        lens = lens[order]
    elif enforce_sorted:
        try:
            lens = _host_ints(lengths)
        except NotImplementedError:  # a meta tensor: torch's conversion keeps it there
            raise _lengths_error(lengths, nd) from None
    B = input.size(bdim)  # torch's IndexError for a 1-D input
    T = input.size(1 - bdim)
    # torch's checks, in its order: it reads only the last length (the shortest once sorted)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lens.size != B:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
            f"(batch_size={B})"
        )
    if lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if enforce_sorted and np.any(lens[1:] > lens[:-1]):
        raise RuntimeError(_SORT_MSG)
    if lens.size and lens[0] > T:
        # torch reads past the padded input here (no check); a clear error beats numpy's
        raise RuntimeError(
            f"Expected every length to be at most the padded sequence length {T}, but found "
            f"a length of {int(lens[0])}"
        )
    batch_sizes, idx = _pack_index(lens, T, B, batch_first)
    if order is not None:
        # the packed rows read the unsorted input directly: map sorted batch slots to originals
        b_of = idx // T if batch_first else idx % B
        t_of = idx % T if batch_first else idx // B
        ob = order[b_of]
        idx = ob * T + t_of if batch_first else t_of * B + ob
    flat = input.reshape((T * B,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _long(idx, input.device))
    data = _as_torch_node(data, "PackPaddedSequenceBackward0")  # torch's node for the gather
    out = PackedSequence(data, _long(batch_sizes), sorted_indices, None)
    n = input._names
    if n is not None:
        out = _with_dim_names(out, (n[1 - bdim], n[bdim]))
    return out


def _pad_packed_int(n) -> int:
    """total_length as torch's binding takes an int[]-style int: a 0-d integer tensor too."""
    if isinstance(n, Tensor) and n.dim() == 0 and not n.is_floating_point():
        return int(n)
    if isinstance(n, numbers.Integral):
        return int(n)
    raise TypeError(
        "_pad_packed_sequence(): argument 'total_length' (position 5) must be int, not "
        f"{type(n).__name__}"
    )


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo pack_padded_sequence: (padded batch, lengths), in the original batch order."""
    bs = _host_ints(sequence.batch_sizes)  # torch reads the batch sizes first
    data = sequence.data
    T = len(bs)
    B = int(bs[0]) if T else 0
    if total_length is not None:
        if total_length < T:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being {T}"
            )
        if type(total_length) is not int:
            total_length = _pad_packed_int(total_length)
        T_out = total_length
    else:
        T_out = T
    if type(padding_value) not in (float, int):
        pv = padding_value
        if not isinstance(pv, numbers.Number) and not (isinstance(pv, Tensor) and pv.dim() == 0):
            raise TypeError(
                "_pad_packed_sequence(): argument 'padding_value' (position 4) must be Number, "
                f"not {type(pv).__name__}"
            )
    lens_sorted = (bs[None, :] > np.arange(B)[:, None]).sum(1)  # per sorted batch slot
    offsets = np.concatenate([[0], np.cumsum(bs)[:-1]]).astype(np.int64)
    N = int(bs.sum())
    if sequence.unsorted_indices is not None:
        uns = _host_ints(sequence.unsorted_indices)
    else:
        uns = np.arange(B)
    # for each output (t, i): the packed row of sorted slot j = uns[i] at step t, or N (padding)
    t = np.arange(T_out)[:, None]
    j = uns[None, :]
    valid = t < lens_sorted[j]
    rows = np.where(valid, offsets[np.minimum(t, T - 1)] + j, N)  # (T_out, B)
    if batch_first:
        rows = rows.T
    pad = data.new_full((1,) + tuple(data.shape[1:]), padding_value)
    ext = cat([data, pad], 0)
    out = ext.index_select(0, _long(rows.reshape(-1), data.device))
    out = out.reshape(tuple(rows.shape) + tuple(data.shape[1:]))
    # torch's last node: the unsorting gather, else the batch_first transpose, else the copy
    # into the padded buffer
    if sequence.unsorted_indices is not None:
        out = _as_torch_node(out, "IndexSelectBackward0")
    else:
        out = _as_torch_node(out, "TransposeBackward0" if batch_first else "CopySlices")
    dn = sequence._dim_names
    if dn is not None:
        # the time and batch dims the packing merged get their names back (spec 4.3); the
        # other dims kept theirs through the gather, which the reshape keeps
        t_name, b_name = dn
        rest = out._names[2:] if out._names is not None else (None,) * (out.dim() - 2)
        out = out.rename(*((b_name, t_name) if batch_first else (t_name, b_name)), *rest)
    return out, _long(lens_sorted[uns])


def _copy_shaped(s: Tensor, slot: tuple) -> Tensor:
    """``s`` as torch's ``copy_`` writes it into a padded ``slot`` of another shape: broadcast
    to it (a 1-D sequence fills each step of a (len, n) slot), else torch's copy_ errors."""
    err = broadcast_error((slot, tuple(s.shape)))
    if err is not None:
        raise err
    n = max(len(slot), s.dim())
    full = tuple(  # a size-1 dim takes the other's size, 0 included
        b if a == 1 else a
        for a, b in zip((1,) * (n - len(slot)) + slot, (1,) * (n - s.dim()) + tuple(s.shape))
    )
    if full != slot:
        raise RuntimeError(
            f"output with shape {list(slot)} doesn't match the broadcast shape {list(full)}"
        )
    return s.expand(*slot)


def _pad_sequence_args(seqs: list, batch_first, padding_value) -> None:
    """The TypeErrors of torch's pad_sequence binding, in its argument order."""
    for i, s in enumerate(seqs):
        if not isinstance(s, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(s).__name__}"
            )
    if not isinstance(batch_first, bool):
        raise TypeError(
            "pad_sequence(): argument 'batch_first' (position 2) must be bool, not "
            f"{type(batch_first).__name__}"
        )
    pv = padding_value
    if not isinstance(pv, numbers.Real) and not (isinstance(pv, Tensor) and pv.dim() == 0):
        raise TypeError(
            "pad_sequence(): argument 'padding_value' (position 3) must be float, not "
            f"{type(pv).__name__}"
        )


def pad_sequence(
    sequences,
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of different lengths (L_i, *) into (max L, B, *) (or (B, max L, *)),
    padding on the right (or the left) with ``padding_value``. Named sequences keep their
    names (their time name included); the new batch dim is unnamed."""
    try:
        seqs = list(sequences)
    except TypeError:
        if not isinstance(sequences, Iterable):
            raise RuntimeError(  # noqa: TRY004 - torch's error type
                "pad_sequence: Expected iterable for input sequences, but got arg of type: "
                f"{type(sequences)}"
            ) from None
        raise
    if type(batch_first) is not bool or type(padding_value) not in (float, int):
        _pad_sequence_args(seqs, batch_first, padding_value)
    # torch's order: its binding's argument types, the empty list, the side, the sizes
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        _pad_sequence_args(seqs, batch_first, padding_value)
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    try:
        trail = tuple(seqs[0].shape[1:])
        lens = np.array([s.shape[0] for s in seqs], np.int64)
    except (AttributeError, IndexError):
        _pad_sequence_args(seqs, batch_first, padding_value)
        if seqs[0].dim() == 0:
            raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0") from None
        for s in seqs:
            s.size(0)  # torch's IndexError for a 0-d sequence
        raise
    dt = seqs[0].dtype
    for i in range(1, len(seqs)):
        s = seqs[i]
        if s.dtype is not dt:  # torch copies every sequence into a tensor of the first's dtype
            seqs[i] = s = s.to(dt)
        if tuple(s.shape[1:]) != trail:
            seqs[i] = _copy_shaped(s, (s.shape[0],) + trail)
    B = len(seqs)
    T = int(lens.max())
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    N = int(lens.sum())
    t = np.arange(T)[:, None]
    if padding_side == "right":
        k = t - np.zeros((1, B), np.int64)
    else:
        k = t - (T - lens)[None, :]
    valid = (k >= 0) & (k < lens[None, :])
    rows = np.where(valid, starts[None, :] + k, N)  # (T, B)
    if batch_first:
        rows = rows.T
    first = seqs[0]
    pad = first.new_full((1,) + trail, padding_value)
    ext = cat(seqs + [pad], 0)
    out = ext.index_select(0, _long(rows.reshape(-1), first.device))
    out = _as_torch_node(out.reshape(tuple(rows.shape) + trail), "CopySlices")  # torch copies
    if ext._names is not None:
        # names (spec 4.3): the sequences' dims keep their names (cat unified them), the time
        # dim too; the batch dim is created, so unnamed
        t_name, rest = ext._names[0], tuple(ext._names[1:])
        out = out.rename(*((None, t_name) if batch_first else (t_name, None)), *rest)
    return out


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """Split a padded batch back into a list of sequences of ``lengths``."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)  # torch's: the caller's tensor is transposed in place
    # lengths must be a tensor (torch reads its device); each sequence keeps the steps its
    # length masks in, one length per sequence (else zip's own ValueError), a length of any
    # shape broadcasting as torch's comparison does
    steps = arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[steps < n] for seq, n in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *) (decreasing lengths unless ``enforce_sorted=False``)."""
    seqs = list(sequences)
    lengths = [s.size(0) for s in seqs]  # torch's errors for a 0-d or non-tensor sequence
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences a PackedSequence holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
