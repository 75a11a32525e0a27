"""torch.nn.attention.flex_attention: attention with a user ``score_mod`` and ``mask_mod`` (eager).

``flex_attention`` computes ``softmax(score_mod(scale * q @ k^T) masked by mask_mod) @ v``.
torch's eager CPU path materializes the full score matrix and applies the mods to every element
(by vmap); ember calls each mod ONCE on broadcast index tensors instead -- ``b`` (B, 1, 1, 1),
``h`` (1, H, 1, 1), ``q_idx`` (1, 1, L, 1), ``kv_idx`` (1, 1, 1, S), int64 like torch's -- so
``where(q_idx >= kv_idx, ...)``, ``score + bias[h]`` or ``rel[q_idx - kv_idx]`` are a handful of
array ops, differentiable through ember's autograd (captured tensors that require grad get their
gradients too). A mod that needs one element at a time (a Python ``if`` on a tensor) is an error
that says so.

Like torch's eager path, only a BlockMask's ``mask_mod`` decides what is masked; its block tables
(``kv_num_blocks``, ``kv_indices`` ...) are metadata for fused kernels, built exactly as torch
builds them. A mask-only call (no ``score_mod``, no logsumexp) runs on SDPA's fused attention ops.

Names (spec 4.3): the output keeps the query's names (the logsumexp keeps all but the last); the
feature dims of query, key and value must agree by name, as in ``scaled_dot_product_attention``.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import operator
import warnings
from collections.abc import Callable
from typing import Any, ClassVar, Literal, NamedTuple, TypedDict

from ...accelerator import current_accelerator
from ...core import dtype as _dt
from ...core.device import array_module
from ...core.ops.comparison import isneginf, where
from ...core.ops.creation import arange, zeros
from ...core.tensor import Tensor, _wrap
from .._attention import (
    _attention_values,
    _check_feature_names,
    _probs,
    _probs_masked,
    _unname,
)

__all__ = [
    "AuxOutput",
    "AuxRequest",
    "BlockMask",
    "FlexKernelOptions",
    "and_masks",
    "create_block_mask",
    "create_mask",
    "flex_attention",
    "noop_mask",
    "or_masks",
]

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30  # the block size of the "no mask" BlockMask
_BACKENDS = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")
_NEG_INF = float("-inf")

# Debug switch torch offers to run mods uncompiled; ember never compiles them, so it changes nothing.
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False
_WARNINGS_SHOWN: set[str] = set()


class FlexKernelOptions(TypedDict, total=False):
    """Options for torch's fused FlexAttention kernels (``fwd_``/``bwd_`` prefixes allowed).

    ember validates ``BACKEND`` like torch and otherwise ignores them: its eager implementation
    has no kernel to tune.
    """

    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    BLOCK_M1: int
    BLOCK_N1: int
    BLOCK_M2: int
    BLOCK_N2: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: Literal["AUTO", "TRITON", "FLASH", "TRITON_DECODE"]


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention`` should return (``return_aux=``)."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs of ``flex_attention``; a field is None when it was not requested."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


# ---------------------------------------------------------------------- mods
def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """A mask_mod that masks nothing (a 0-dim True)."""
    return batch.new_ones(size=(), dtype=_dt.bool_)


def _sliced_mask_mod_error(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor):
    """The mask_mod of a sliced BlockMask: slicing cannot know what the original mod becomes."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the "
        "mask_mod attribute is reset. You must set it from the original BlockMask's mask_mod."
        "\n\nIncorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(sliced_mask.mask_mod, offset)  # WRONG!"
        "\n\nCorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(base_mask.mask_mod, offset)  # Use base_mask!"
    )


def _check_callables(mask_mods: tuple) -> None:
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")


def or_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """A mask_mod keeping what any of ``mask_mods`` keeps (none given: masks everything)."""
    _check_callables(mask_mods)

    def or_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        out = b.new_zeros((), dtype=_dt.bool_)
        for m in mask_mods:
            out = out | m(b, h, q_idx, kv_idx)
        return out

    return or_mask


def and_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """A mask_mod keeping what all of ``mask_mods`` keep (none given: keeps everything)."""
    _check_callables(mask_mods)

    def and_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        out = b.new_ones((), dtype=_dt.bool_)
        for m in mask_mods:
            out = out & m(b, h, q_idx, kv_idx)
        return out

    return and_mask


def _positional_args(fn: Callable) -> int:
    """How many positional parameters without a default ``fn`` has (5: score_mod, 4: mask_mod)."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        n = code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        params = inspect.signature(fn).parameters.values()
        n = sum(1 for p in params if p.default is inspect.Parameter.empty)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return n


def _index_grid(B: int, H: int, L: int, S: int, device) -> tuple[Tensor, ...]:
    """The (b, h, q_idx, kv_idx) index tensors, each along its own dim of (B, H, L, S)."""
    shapes = ((B, 1, 1, 1), (1, H, 1, 1), (1, 1, L, 1), (1, 1, 1, S))
    return tuple(arange(n, device=device).reshape(s) for n, s in zip((B, H, L, S), shapes))


# Messages of a tensor with many elements used as one Python value (bool/int/float/index/item).
_SCALAR_USE = ("ambiguous", "converted to Scalar", "to Python scalars", "converted to an index")


def _call_mod(fn: Callable, args: tuple, what: str, full: tuple) -> Tensor:
    """``fn(*args)`` on the broadcast index tensors; its result must broadcast to ``full``."""
    try:
        out = fn(*args)
    except (RuntimeError, ValueError, TypeError) as e:
        if not any(s in str(e) for s in _SCALAR_USE):
            raise
        raise RuntimeError(
            f"flex_attention: ember calls {what} once on broadcast index tensors (b of shape "
            "(B, 1, 1, 1), h (1, H, 1, 1), q_idx (1, 1, L, 1), kv_idx (1, 1, 1, S)), not once per "
            f"element, so {what} cannot use a tensor as a Python value (if/and/or, int(), "
            ".item()); write it with tensor ops, e.g. torch.where(q_idx >= kv_idx, score, "
            f"-float('inf')) or (q_idx >= kv_idx) & (kv_idx > 0). The error was: {e}"
        ) from e
    if not isinstance(out, Tensor):
        raise ValueError(  # noqa: TRY004  (torch: a ValueError from vmap)
            f"flex_attention: {what} must return a Tensor, got type {type(out)}"
        )
    shape = tuple(out.shape)
    if len(shape) > 4 or any(a not in (1, b) for a, b in zip(shape[::-1], full[::-1])):
        raise RuntimeError(
            f"flex_attention: {what} must return one value per (b, h, q_idx, kv_idx): a tensor "
            f"that broadcasts to {list(full)}, but it returned shape {list(shape)}"
        )
    return out


def _default_device(device):
    return device if device is not None else (current_accelerator() or "cpu")


def create_mask(
    mod_fn: _score_mod_signature | _mask_mod_signature,
    B: int | None,
    H: int | None,
    Q_LEN: int,
    KV_LEN: int,
    device: Any = None,
) -> Tensor:
    """The dense (B, H, Q_LEN, KV_LEN) mask of a mask_mod, or of a score_mod (True where the
    score_mod leaves a zero score finite). ``B``/``H`` None mean 1; ``device`` defaults to the
    current accelerator, else cpu."""
    device = _default_device(device)
    B = 1 if B is None else B
    H = 1 if H is None else H
    full = (B, H, Q_LEN, KV_LEN)
    grid = _index_grid(B, H, Q_LEN, KV_LEN, device)
    if _positional_args(mod_fn) == 5:
        score = zeros(full, device=device)
        out = ~isneginf(_call_mod(mod_fn, (score, *grid), "score_mod", full).detach())
    else:
        out = _call_mod(mod_fn, grid, "mask_mod", full).detach()
    a = out._data
    xp = array_module(a)
    return _wrap(xp.ascontiguousarray(xp.broadcast_to(a, full)))


# ---------------------------------------------------------------------- block tables
def _ordered_to_dense(num_blocks, indices, num_cols: int):
    """Dense 0/1 int32 block grid (..., rows, num_cols) from per-row counts and column lists."""
    xp = array_module(indices)
    valid = xp.arange(indices.shape[-1]) < num_blocks[..., None]
    hit = (indices[..., None] == xp.arange(num_cols)) & valid[..., None]
    return hit.any(axis=-2).astype("int32")


def _dense_to_ordered(dense):
    """Per-row counts and column lists (the kept columns first, each group ascending) of a 0/1
    block grid, int32 like torch's stable descending argsort."""
    xp = array_module(dense)
    n = dense.shape[-1]
    key = (dense == 0) * n + xp.arange(n)  # unique keys: any sort gives the stable order
    return dense.sum(axis=-1).astype("int32"), xp.argsort(key, axis=-1).astype("int32")


def _transpose_ordered(num_blocks: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
    dense = _ordered_to_dense(num_blocks._data, indices._data, indices.shape[-1])
    n, i = _dense_to_ordered(dense.swapaxes(-1, -2))
    return _wrap(n), _wrap(i)


def _adjust_ordered(num_blocks: Tensor, indices: Tensor, rows: int, cols: int):
    """Crop (num_blocks, indices) to the top-left ``rows`` x ``cols`` blocks."""
    idx = indices._data[:, :, :rows, :cols]
    num = num_blocks._data[:, :, :rows]
    xp = array_module(idx)
    num = xp.minimum(num, cols)
    num = (idx < num[..., None]).sum(axis=-1).astype("int32")
    return _wrap(num), _wrap(idx)


class BlockMask:
    """A block-sparse attention mask: which KV blocks each Q block row attends to.

    ``kv_num_blocks`` (B, H, Q_BLOCKS) and ``kv_indices`` (B, H, Q_BLOCKS, KV_BLOCKS) list, for
    each row of query blocks, the partially masked key blocks first; ``full_kv_num_blocks`` /
    ``full_kv_indices`` list the blocks nothing masks (a fused kernel skips ``mask_mod`` there).
    ``q_num_blocks``/``q_indices`` (and ``full_q_*``) are the transposes, for a backward pass.
    ``BLOCK_SIZE`` is (Q_BLOCK_SIZE, KV_BLOCK_SIZE), ``seq_lengths`` (Q_LEN, KV_LEN), and
    ``mask_mod`` the element mask the tables summarize -- the part ember's eager attention uses.
    """

    _TENSOR_ATTRS: ClassVar[list[str]] = [
        "kv_num_blocks",
        "kv_indices",
        "full_kv_num_blocks",
        "full_kv_indices",
        "q_num_blocks",
        "q_indices",
        "full_q_num_blocks",
        "full_q_indices",
        "dq_write_order",
        "dq_write_order_full",
        "dq_kv_order",
    ]
    _CONTEXT_ATTRS: ClassVar[list[str]] = [
        "seq_lengths",
        "BLOCK_SIZE",
        "mask_mod",
        "dq_kv_order_spt",
    ]

    def __init__(
        self,
        seq_lengths: tuple[int, int],
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None,
        full_kv_indices: Tensor | None,
        q_num_blocks: Tensor | None,
        q_indices: Tensor | None,
        full_q_num_blocks: Tensor | None,
        full_q_indices: Tensor | None,
        BLOCK_SIZE: tuple[int, int] = (_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE),
        mask_mod: _mask_mod_signature = noop_mask,
        *,
        dq_write_order: Tensor | None = None,
        dq_write_order_full: Tensor | None = None,
        dq_kv_order: Tensor | None = None,
        dq_kv_order_spt: bool | None = None,
    ) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError(
                "full_q_num_blocks and full_q_indices must be both provided or omitted"
            )
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.dq_write_order = dq_write_order
        self.dq_write_order_full = dq_write_order_full
        self.dq_kv_order = dq_kv_order
        self.dq_kv_order_spt = dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(
        cls,
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None = None,
        full_kv_indices: Tensor | None = None,
        BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
        mask_mod: _mask_mod_signature | None = None,
        seq_lengths: tuple[int, int] | None = None,
        compute_q_blocks: bool = True,
        *,
        dq_write_order: Tensor | None = None,
        dq_write_order_full: Tensor | None = None,
        dq_kv_order: Tensor | bool | None = None,
    ) -> BlockMask:
        """A BlockMask from its KV tables; the Q tables are their transposes (when
        ``compute_q_blocks``). ``seq_lengths`` defaults to the block counts times BLOCK_SIZE."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted"
            )
        q_num = q_idx = full_q_num = full_q_idx = None
        if compute_q_blocks:
            q_num, q_idx = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num, full_q_idx = _transpose_ordered(full_kv_num_blocks, full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (
                kv_indices.shape[-2] * BLOCK_SIZE[0],
                kv_indices.shape[-1] * BLOCK_SIZE[1],
            )
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(
            seq_lengths=seq_lengths,
            kv_num_blocks=kv_num_blocks,
            kv_indices=kv_indices,
            full_kv_num_blocks=full_kv_num_blocks,
            full_kv_indices=full_kv_indices,
            q_num_blocks=q_num,
            q_indices=q_idx,
            full_q_num_blocks=full_q_num,
            full_q_indices=full_q_idx,
            BLOCK_SIZE=BLOCK_SIZE,
            mask_mod=noop_mask if mask_mod is None else mask_mod,
            dq_write_order=dq_write_order,
            dq_write_order_full=dq_write_order_full,
            dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
            dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None,
        )

    def as_tuple(self, flatten: bool = True) -> tuple[Any, ...]:
        """The fields as a tuple; ``flatten`` spreads seq_lengths and BLOCK_SIZE into two ints."""
        lengths = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        block = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        tensors = tuple(getattr(self, a) for a in self._TENSOR_ATTRS)
        return (*lengths, *tensors, self.dq_kv_order_spt, *block, self.mask_mod)

    @property
    def shape(self) -> tuple[int, ...]:
        """(*batch dims of the tables, Q_LEN, KV_LEN)."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def __str__(self) -> str:
        return (
            f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
            f"{self.to_string().strip()}\n)"
        )

    def __repr__(self) -> str:
        def shape(t):
            return None if t is None else t.shape

        mod = getattr(self.mask_mod, "__name__", self.mask_mod)
        fields = [f"    {a}={shape(getattr(self, a))}," for a in self._TENSOR_ATTRS[:8]]
        return "\n".join(
            [
                "BlockMask(",
                *fields,
                f"    BLOCK_SIZE={self.BLOCK_SIZE},",
                f"    shape={self.shape},",
                f"    sparsity={self.sparsity():.2f}%,",
                f"    mask_mod={mod}",
                ")",
            ]
        )

    def __getitem__(self, index) -> BlockMask:
        """The BlockMask of some batches/heads/query-block rows; integer indices keep their dim.

        The result's mask_mod raises: assign one derived from the original mask_mod."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Slicing BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata."
            )
        index = index if isinstance(index, tuple) else (index,)
        index = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple(
            (slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
            if isinstance(i, int)
            else i
            for i, n in zip(index, sizes)
        )
        full = self.full_kv_num_blocks is not None
        out = BlockMask.from_kv_blocks(
            self.kv_num_blocks[index],
            self.kv_indices[index],
            self.full_kv_num_blocks[index] if full else None,
            self.full_kv_indices[index] if full else None,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None,
        )
        out.dq_kv_order_spt = self.dq_kv_order_spt
        return out

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        """This mask cropped to the top-left (new_q_len, new_kv_len) corner."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])
        num, idx = _adjust_ordered(self.kv_num_blocks, self.kv_indices, rows, cols)
        full_num = full_idx = None
        if self.full_kv_num_blocks is not None:
            full_num, full_idx = _adjust_ordered(
                self.full_kv_num_blocks, self.full_kv_indices, rows, cols
            )
        out = self.from_kv_blocks(
            num,
            idx,
            full_num,
            full_idx,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod,
            seq_lengths=(new_q_len, new_kv_len),
            compute_q_blocks=self.q_indices is not None,
        )
        out.dq_kv_order_spt = self.dq_kv_order_spt
        return out

    def numel(self) -> int:
        """The number of elements of the (unblocked) mask."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self) -> float:
        """The percentage of the mask's elements that lie in skipped blocks."""
        blocks = int(self.kv_num_blocks._data.sum())
        if self.full_kv_num_blocks is not None:
            blocks += int(self.full_kv_num_blocks._data.sum())
        return 100 * (1 - blocks * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_dense(self) -> Tensor:
        """The int32 block grid (..., Q_BLOCKS, KV_BLOCKS): 1 where a block is computed."""
        dense = _ordered_to_dense(
            self.kv_num_blocks._data, self.kv_indices._data, self.kv_indices.shape[-1]
        )
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(
                self.full_kv_num_blocks._data,
                self.full_kv_indices._data,
                self.full_kv_indices.shape[-1],
            )
        return _wrap(dense)

    def to_string(self, grid_size: int | tuple[int, int] = (20, 20), limit: int = 4) -> str:
        """A picture of the block grid of each (batch, head), at most ``limit`` of them: each
        cell summarizes a patch of blocks as full, empty or partly computed. ``grid_size`` caps
        the rows and columns drawn (-1: one cell per block)."""
        dense = self.to_dense()._data
        *batch, rows, cols = dense.shape
        max_rows, max_cols = (grid_size, grid_size) if isinstance(grid_size, int) else grid_size
        row_step = max(1, -(-rows // max_rows))
        col_step = max(1, -(-cols // max_cols))
        pictures = []
        for n, idx in enumerate(itertools.product(*(range(b) for b in batch))):
            if n == limit:
                pictures += [
                    "...",
                    "To print out more, set BlockMask.to_string(limit=N)",
                    (
                        "You can also index (BlockMask[batch, head]) to choose a specific batch "
                        "or head"
                    ),
                ]
                break
            grid = dense[idx]
            lines = [f"{idx}"]
            for r in range(0, rows, row_step):
                line = ""
                for c in range(0, cols, col_step):
                    frac = float(grid[r : r + row_step, c : c + col_step].mean())
                    line += ("█" if frac == 1 else " " if frac == 0 else "░") * 2
                lines.append(line)
            pictures.append("\n".join(lines) + "\n")
        return "\n".join(pictures)

    def to(self, device) -> BlockMask:
        """A copy of this BlockMask with its tensors on ``device``."""
        moved = {
            a: None if getattr(self, a) is None else getattr(self, a).to(device)
            for a in self._TENSOR_ATTRS
        }
        return BlockMask(
            seq_lengths=self.seq_lengths,
            **moved,
            BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=self.mask_mod,
            dq_kv_order_spt=self.dq_kv_order_spt,
        )


def _block_tables(mask, q_block: int, kv_block: int, separate_full: bool):
    """Dense 0/1 grids of partially (and fully, if ``separate_full``) kept blocks of a dense
    (B, H, Q, KV) bool mask; the ragged last blocks count the padding as masked."""
    xp = array_module(mask)
    B, H, Q, KV = mask.shape
    nq, nk = -(-Q // q_block), -(-KV // kv_block)
    padded = xp.zeros((B, H, nq * q_block, nk * kv_block), dtype=bool)
    padded[:, :, :Q, :KV] = mask
    counts = padded.reshape(B, H, nq, q_block, nk, kv_block).sum(axis=(3, 5))
    if not separate_full:
        return (counts > 0).astype("int8"), None
    whole = q_block * kv_block
    return ((counts > 0) & (counts < whole)).astype("int8"), (counts == whole).astype("int8")


def create_block_mask(
    mask_mod: _mask_mod_signature,
    B: int | None,
    H: int | None,
    Q_LEN: int,
    KV_LEN: int,
    device: Any = None,
    BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
    _compile: bool = False,
    separate_full_blocks: bool = True,
    compute_dq_write_order: bool = False,
    dq_kv_order: bool = True,
) -> BlockMask:
    """The BlockMask of ``mask_mod(b, h, q_idx, kv_idx) -> bool`` (True: attend).

    ``B``/``H`` None mean 1 (the mask broadcasts over batches/heads); ``BLOCK_SIZE`` is an int or
    (Q_BLOCK_SIZE, KV_BLOCK_SIZE); ``separate_full_blocks`` lists unmasked blocks apart.
    ``compute_dq_write_order`` (metadata for torch's FLASH backward) is not supported.
    """
    device = _default_device(device)
    if _positional_args(mask_mod) != 4:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        warnings.warn(
            "_compile flag on create_block_mask was originally added to work around a "
            "torch.compile limitation. That limitation has since been addressed. So, to compile "
            "create_block_mask, we suggest doing torch.compile(create_block_mask). This still "
            "works for now, but will be removed in the future.",
            DeprecationWarning,
            stacklevel=2,
        )
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")  # noqa: TRY004
    if compute_dq_write_order:
        raise NotImplementedError(
            "create_block_mask: compute_dq_write_order=True builds metadata for torch's "
            "deterministic FLASH backward, which ember does not have"
        )
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    if mask.dtype != _dt.bool_:
        raise AssertionError(f"mask.dtype must be {_dt.bool_}, got {mask.dtype}")
    partial, full = _block_tables(mask._data, q_block, kv_block, separate_full_blocks)
    num, idx = _dense_to_ordered(partial)
    full_num, full_idx = (None, None) if full is None else _dense_to_ordered(full)
    return BlockMask.from_kv_blocks(
        _wrap(num),
        _wrap(idx),
        None if full is None else _wrap(full_num),
        None if full is None else _wrap(full_idx),
        BLOCK_SIZE=(q_block, kv_block),
        mask_mod=mask_mod,
        seq_lengths=(Q_LEN, KV_LEN),
    )


# ---------------------------------------------------------------------- flex_attention
def _warn_once(key: str, message: str, category: type[Warning]) -> None:
    if key not in _WARNINGS_SHOWN:
        _WARNINGS_SHOWN.add(key)
        warnings.warn(message, category, stacklevel=3)


def _check_kernel_options(options, device_type: str, want_max: bool) -> None:
    """torch's checks of ``kernel_options`` (ember has no kernel the rest would tune)."""
    options = options or {}
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError(
            "BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND supersedes "
            "the legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only specify the desired "
            "BACKEND."
        )
    backend = options.get("BACKEND", "AUTO")
    if backend not in _BACKENDS:
        raise ValueError(f"Invalid BACKEND value '{backend}'. Must be one of {_BACKENDS}")
    for internal in ("OUTPUT_LOGSUMEXP", "OUTPUT_MAX"):
        if internal in options:
            raise AssertionError(f"{internal} must not be in kernel_options")
    if want_max and backend == "FLASH":
        raise NotImplementedError(
            "Returning max scores is not supported with BACKEND='FLASH'. "
            "Use return_aux=AuxRequest(lse=True) or omit max_scores."
        )
    if want_max and device_type == "cpu":
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")


def _check_inputs(query, key, value, block_mask, enable_gqa) -> None:
    """torch's argument checks, in torch's order."""
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            "Expected query, key, and value to have the same device type, but got query.device: "
            f"{query.device}, key.device: {key.device}, and value.device: {value.device} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if query.size(-1) != key.size(-1):
        raise ValueError(
            "Expect query and key/value to have the same embedding dimension but got "
            f"E={query.size(-1)} and E={key.size(-1)}."
        )
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    Bq, Hq, Hkv = query.size(0), query.size(1), key.size(1)
    if not enable_gqa and Hq != Hkv:
        raise ValueError(
            "Expect query and key/value to have the same number of heads but got "
            f"Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA."
        )
    if enable_gqa and Hq % Hkv:
        raise ValueError(
            "Expect number of query heads to be a multiple of kv heads for GQA but got "
            f"Hq={Hq} and Hkv={Hkv}."
        )
    Bkv = key.size(0)
    if Bq != Bkv:
        if block_mask is None:
            raise ValueError(
                "Expect query and key/value to have the same batch size, or non-none block_mask, "
                f"but got block_mask=None, Bq={Bq}, and Bkv={Bkv}."
            )
        if block_mask.kv_num_blocks.size(0) != Bq:
            raise ValueError(
                "Expect query and key/value to have the same batch size, or block_mask and query "
                f"to have the same batch size, but got Bq={Bq}, Bkv={Bkv}, "
                f"B_block_mask={block_mask.kv_num_blocks.size(0)}."
            )
    if block_mask is None:
        return
    if block_mask.mask_mod is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    if block_mask.BLOCK_SIZE != (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE):
        (bq, bkv), L, S = block_mask.shape[-2:], query.size(-2), key.size(-2)
        start = (
            f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} "
            f"and kv_len={S}. "
        )
        if L > bq or S > bkv:
            raise ValueError(
                start + "As the block mask was created for a smaller length than you're using "
                "it for, you likely need to create a new block mask."
            )
        if L < bq or S < bkv:
            raise ValueError(
                start + "As the block mask was created for a larger length than you're using it "
                "for, you can either 1. create a new block mask with the correct length, or 2. "
                "'adjust' the existing block mask to the correct length by calling "
                "block_mask._adjust(q_len, kv_len). This essentially 'crops' the block mask to "
                "the upper left corner, which does not work for all mask_mods!"
            )
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(
            "Expect q/k/v and block_mask to be on the same device but got "
            f"{query.device} and {block_mask.kv_num_blocks.device}."
        )


def _safe_softmax(s: Tensor, want_lse: bool, want_max: bool):
    """softmax over the last dim where rows that are all -inf give zeros (and lse/max -inf).

    Such rows are set to 0 before the softmax, so neither pass sees inf - inf."""
    dead = isneginf(s).all(-1, keepdim=True)
    any_dead = bool(dead._data.any())
    if any_dead:
        s = where(dead, 0.0, s)
    p = s.softmax(-1)
    lse = s.logsumexp(-1) if want_lse else None
    mx = s.amax(-1) if want_max else None
    if any_dead:
        p = where(dead, 0.0, p)
        row = dead.squeeze(-1)
        lse = None if lse is None else where(row, _NEG_INF, lse)
        mx = None if mx is None else where(row, _NEG_INF, mx)
    return p, lse, mx


def flex_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    score_mod: _score_mod_signature | None = None,
    block_mask: BlockMask | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    kernel_options: FlexKernelOptions | None = None,
    *,
    return_aux: AuxRequest | None = None,
) -> Tensor | tuple[Tensor, Tensor] | tuple[Tensor, AuxOutput]:
    """Scaled dot-product attention with a score modification and a mask.

    query (B, Hq, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev) -> (B, Hq, L, Ev). The scores
    ``scale * q @ k^T`` (scale defaults to 1/sqrt(E); float64 inputs work in float64, others in
    float32) become ``score_mod(score, b, h, q_idx, kv_idx)``, positions where
    ``block_mask.mask_mod(b, h, q_idx, kv_idx)`` is False are dropped, and a softmax over the
    keys weighs ``value``; a query row with no key left gives zeros. The mods are called once
    with broadcast int64 index tensors (see the module docstring). ``enable_gqa``: Hq may be a
    multiple of Hkv, groups of query heads sharing a key/value head. A key/value batch of 1
    broadcasts over the query batch when a ``block_mask`` of that batch is given.

    ``return_aux=AuxRequest(lse=True)`` also returns ``AuxOutput(lse=...)``, the natural-log
    logsumexp of the modified scores (B, Hq, L) (-inf for fully masked rows); ``return_lse=True``
    is its deprecated form (a FutureWarning, once). ``kernel_options`` are validated, not used.

    Names: the output keeps the query's names; q/k/v must agree on their feature dim's name.
    """
    if query._names is not None or key._names is not None or value._names is not None:
        _check_feature_names("flex_attention", (("query", query), ("key", key), ("value", value)))
        res = flex_attention(
            _unname(query),
            _unname(key),
            _unname(value),
            score_mod,
            block_mask,
            scale,
            enable_gqa,
            return_lse,
            kernel_options,
            return_aux=return_aux,
        )
        return _rename_outputs(res, query._names)
    _check_inputs(query, key, value, block_mask, enable_gqa)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else float(scale)
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
            "return_aux=AuxRequest(lse=True) instead."
        )
    if return_lse:
        _warn_once(
            "deprecated_return_lse",
            "return_lse is deprecated and will be removed in v2.10. Please use "
            "return_aux=AuxRequest(lse=True) instead.",
            FutureWarning,
        )
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    _check_kernel_options(kernel_options, query.device.type, want_max)

    B, Hq, L, _ = query.shape
    Bkv, Hkv, S, _ = key.shape
    if value.size(-2) != S:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{B * Hq}, {S}] but got: [{B * Hq}, {value.size(-2)}]."
        )
    if S == 0:  # torch takes the max over the keys first
        raise IndexError("max(): Expected reduction dim 3 to have non-zero size.")
    if Hq != Hkv:  # GQA: each key/value head serves Hq // Hkv consecutive query heads
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    if Bkv != B:
        if Bkv != 1:
            raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={B} and Bkv={Bkv}")
        key = key.expand(B, *key.shape[1:])
        value = value.expand(B, *value.shape[1:])

    full = (B, Hq, L, S)
    grid = _index_grid(B, Hq, L, S, query.device)
    mask_mod = None if block_mask is None else block_mask.mask_mod
    mask = None
    if mask_mod is not None and mask_mod is not noop_mask:
        mask = _call_mod(mask_mod, grid, "mask_mod", full).detach()

    dtype = query.dtype
    plain = mask is None or mask.dtype == _dt.bool_  # else where() below raises torch's error
    if (
        plain
        and score_mod is None
        and not (want_lse or want_max)
        and key.dtype == value.dtype == dtype
    ):
        # plain or mask-only attention: SDPA's fused ops (one in-place softmax buffer)
        if mask is None:
            p = _probs(query, key, scale, False, True)
        else:
            p = _probs_masked(query, key, mask, scale, True)
        out = _attention_values(p, value)
        return (out, AuxOutput()) if return_aux is not None else out

    work = _dt.float64 if dtype == _dt.float64 else _dt.float32
    s = query.to(work).matmul(key.to(work).transpose(-2, -1)) * scale
    if score_mod is not None:
        s = _call_mod(score_mod, (s, *grid), "score_mod", full)
        if tuple(s.shape) != full:
            s = s.expand(full)
    if mask is not None:
        s = where(mask, s, _NEG_INF)
    p, lse, mx = _safe_softmax(s, want_lse, want_max)
    out = p.to(dtype).matmul(value.to(dtype))
    if return_aux is not None:
        return out, AuxOutput(lse if return_aux.lse else None, mx)
    return (out, lse) if return_lse else out


def _rename_outputs(res, names):
    """Give the output the query's names and a logsumexp/max (B, H, L) all but the last."""
    if names is None:
        return res

    def named(t, n):
        return None if t is None else t.rename(*n)

    if isinstance(res, Tensor):
        return named(res, names)
    out, aux = res
    if isinstance(aux, AuxOutput):
        return named(out, names), AuxOutput(*(named(t, names[:-1]) for t in aux))
    return named(out, names), named(aux, names[:-1])
