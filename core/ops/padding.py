"""Padding: constant (negative amounts crop), reflect, replicate and circular.

``constant_pad_nd`` is torch's op: its derivative is the same op with the amounts negated (padding
and cropping are adjoint), so every order of derivative is one op. The other modes gather along
each padded dim with an index vector (``_pad_index``); their derivative folds the gradient back
with slice adds (``_pad_index_backward``: each index vector is a few runs of step +1, -1 or 0, so
no scatter is needed), and the two ops are each other's derivative, so double backward works.
``pad`` holds F.pad's argument checks and dispatch (nn.functional.pad calls it).
"""

from __future__ import annotations

import functools

from .. import layout as _layout
from ..arg_errors import int_list, int_list_error
from ..names import keep
from ..registry import op
from ..tensor import Tensor

__all__: list = []

_MODES = ("constant", "reflect", "replicate", "circular")


# ---------------------------------------------------------------------- argument checks
def _check_pad_arg(pad, fname="pad", mode="constant"):
    """``pad`` as a tuple of ints; an unknown ``mode`` is refused between torch's parsing of
    ``pad`` and its length check."""
    if type(pad) is tuple and all(type(p) is int for p in pad):  # the common case, fast
        if len(pad) % 2 or mode not in _MODES:
            _check_parity(pad, mode)
        return pad
    if isinstance(pad, Tensor) or not isinstance(pad, (tuple, list)):
        raise int_list_error(fname, "pad", 2, pad)
    out = int_list(fname, "pad", 2, pad)
    _check_parity(out, mode)
    return out


def _check_parity(pad, mode) -> None:
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")


def _constant_shape(shape, pad):
    nd = len(shape)
    if len(pad) > 2 * nd:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {nd}"
        )
    out = list(shape)
    for k in range(len(pad) // 2):
        d = nd - 1 - k
        n = shape[d] + pad[2 * k] + pad[2 * k + 1]
        if n < 0 or shape[d] + min(pad[2 * k], 0) < 0 or shape[d] + min(pad[2 * k + 1], 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        out[d] = n
    return tuple(out)


# ---------------------------------------------------------------------- constant
def _cast_value(xp, value, dtype):
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        v = int(value)
        info = xp.iinfo(dtype)
        if v < info.min or v > info.max:
            from .. import dtype as _dt

            raise RuntimeError(
                f"value cannot be converted to type {_dt._FROM_NP[dtype].name}_t without overflow"
            )
        return v
    return value


@op(names=keep, method=False)
def constant_pad_nd(xp, input, pad=(), value=0):
    """Pads the last ``len(pad) // 2`` dims with ``value``; negative amounts crop."""
    pad = _check_pad_arg(pad, "constant_pad_nd")
    shape = _constant_shape(input.shape, pad)
    nd = input.ndim
    src = [slice(None)] * nd
    dst = [slice(None)] * nd
    for k in range(len(pad) // 2):
        d = nd - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        n = input.shape[d]
        src[d] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[d] = slice(max(lo, 0), shape[d] - max(hi, 0))
    if all(p <= 0 for p in pad):
        return input[tuple(src)].copy()
    out = xp.full(shape, _cast_value(xp, value, input.dtype), dtype=input.dtype)
    out[tuple(dst)] = input[tuple(src)]
    return _layout.follow_array(xp, out, input)  # channels_last in, channels_last out


@constant_pad_nd.vjp
def _(grad, pad):
    return constant_pad_nd(grad, tuple(-p for p in pad))


# ---------------------------------------------------------------------- reflect/replicate/circular
@functools.lru_cache(maxsize=512)
def _axis_plan(n: int, lo: int, hi: int, mode: str):
    """Index vector (as a tuple) of one padded dim and its runs (out_start, length, in_start, step)."""
    if mode == "circular":
        start = max(-lo, 0)
        m = n - start - max(-hi, 0)  # the cropped extent the padding wraps around
        pl = max(lo, 0)
        idx = tuple(start + (o - pl) % m for o in range(m + max(lo, 0) + max(hi, 0)))
    else:
        idx = []
        for o in range(n + lo + hi):
            i = o - lo
            if mode == "reflect":
                i = -i if i < 0 else (2 * (n - 1) - i if i >= n else i)
            else:
                i = min(max(i, 0), n - 1)
            idx.append(i)
        idx = tuple(idx)
    runs = []
    o = 0
    while o < len(idx):
        step = idx[o + 1] - idx[o] if o + 1 < len(idx) else 1
        if step not in (-1, 0, 1):
            step = 1
        e = o + 1
        while e < len(idx) and idx[e] - idx[e - 1] == step:
            e += 1
        runs.append((o, e - o, idx[o], step))
        o = e
    return idx, tuple(runs)


def _plans(shape, pad, mode):
    nd = len(shape)
    return [
        (nd - 1 - k, _axis_plan(shape[nd - 1 - k], pad[2 * k], pad[2 * k + 1], mode))
        for k in range(len(pad) // 2)
    ]


@op(names=keep, method=False)
def _pad_index(xp, input, pad=(), mode="reflect"):
    """Reflect/replicate/circular padding of the last ``len(pad) // 2`` dims (checked by pad)."""
    out = input
    for d, (idx, runs) in _plans(input.shape, pad, mode):
        if len(runs) == 1 and runs[0][3] == 1 and runs[0][1] == out.shape[d]:
            continue  # an identity dim (no padding)
        out = xp.take(out, xp.asarray(idx, dtype=xp.intp), axis=d)
    if out is input:
        return input.copy()
    # torch's circular padding copies into a fresh contiguous tensor; its other kernels keep a
    # channels_last input's layout
    return xp.ascontiguousarray(out) if mode == "circular" else _layout.follow_array(xp, out, input)


@_pad_index.vjp
def _(grad, input_shape, pad, mode):
    return _pad_index_backward(grad, input_shape, pad, mode)


def _pad_node_name(node) -> str:
    # torch's kernels per mode and padded rank; circular padding is a copy into slices there
    mode = node.saved_arg("mode")
    if mode == "circular":
        return "torch::autograd::CopySlices"
    k = len(node.saved_arg("pad")) // 2
    return f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{k}DBackward0"


_pad_index.op.name_rule = _pad_node_name


@op(names=keep, method=False)
def _pad_index_backward(xp, grad, input_shape=(), pad=(), mode="reflect"):
    """The adjoint of _pad_index: every output element's gradient added to its source."""
    g = grad
    for d, (_idx, runs) in reversed(_plans(tuple(input_shape), pad, mode)):
        n = input_shape[d]
        if len(runs) == 1 and runs[0][3] == 1 and runs[0][1] == n and runs[0][2] == 0:
            continue
        shape = list(g.shape)
        shape[d] = n
        gx = xp.zeros(shape, dtype=g.dtype)
        pre = (slice(None),) * (d % g.ndim)
        for o, ln, i, step in runs:
            src = g[pre + (slice(o, o + ln),)]
            if step == 1:
                gx[pre + (slice(i, i + ln),)] += src
            elif step == -1:
                gx[pre + (slice(i - ln + 1, i + 1),)] += xp.flip(src, axis=d)
            else:
                gx[pre + (slice(i, i + 1),)] += src.sum(axis=d, keepdims=True)
        g = gx
    return g if g is not grad else grad.copy()


@_pad_index_backward.vjp
def _(grad, pad, mode):
    return _pad_index(grad, pad, mode)


# ---------------------------------------------------------------------- F.pad
_SUPPORTED = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def _too_small_check(shape, out_shape, k: int, mode: str) -> None:
    """torch's reflection/replication kernels refuse an output with no element left in any
    padded dim (one that keeps some dim is left to the negative-size check that follows)."""
    sizes, outs = shape[-k:], out_shape[-k:]
    if any(o >= 1 for o in outs):
        return
    if k == 1:
        raise RuntimeError(f"input (W: {sizes[0]}) is too small. Calculated output W: {outs[0]}")
    if k == 2:
        raise RuntimeError(
            f"input (H: {sizes[0]}, W: {sizes[1]}{' ' if mode == 'replicate' else ''}) is too "
            "small. Calculated output "
            f"H: {outs[0]} W: {outs[1]}"
        )
    raise RuntimeError(
        f"input (D: {sizes[0]} H: {sizes[1]}, W: {sizes[2]}) is too small. Calculated output "
        f"D: {outs[0]} H: {outs[1]} W: {outs[2]}"
    )


def _complex_value_error() -> TypeError:
    return TypeError("pad(): argument 'value' (position 4) must be float, not complex")


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """torch.nn.functional.pad: pads (or, with negative amounts, crops) the last dims."""
    if not isinstance(mode, str):
        raise TypeError(
            f"pad(): argument 'mode' (position 3) must be str, not {type(mode).__name__}"
        )
    pad = _check_pad_arg(pad, mode=mode)
    if mode == "constant":
        if value is None:
            value = 0
        elif type(value) is complex:  # F.pad's value is a float (constant_pad_nd takes these)
            raise _complex_value_error()
        return constant_pad_nd(input, pad, value)
    if type(value) is complex:  # torch's parser refuses it before the mode looks at it
        raise _complex_value_error()
    shape = tuple(input.shape)
    nd, k = len(shape), len(pad) // 2
    if len(pad) > 2 * nd:  # torch checks the padding length first
        _constant_shape(shape, pad)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n{_SUPPORTED}"
        )
    out_shape = list(shape)
    for j in range(k):
        out_shape[nd - 1 - j] += pad[2 * j] + pad[2 * j + 1]
    if mode == "circular":
        for j in range(k):
            n = shape[nd - 1 - j]
            lo, hi = pad[2 * j], pad[2 * j + 1]
            kept = n + min(lo, 0) + min(hi, 0)  # the cropped extent the padding wraps around
            if lo > n or hi > n:  # torch checks this first
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if kept < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
            if kept == 0 and max(lo, hi) > 0:
                raise RuntimeError("Padding value causes wrapping around more than once.")
    else:
        if 0 in (shape[1:] if nd == k + 2 else shape):  # only a batch dim may be empty
            raise RuntimeError(
                f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size "
                f"and other non-zero dimensions for input, but got: {list(shape)}"
            )
        for j in range(k):
            d = nd - 1 - j
            lo, hi = pad[2 * j], pad[2 * j + 1]
            if mode == "reflect" and (lo >= shape[d] or hi >= shape[d]):
                raise RuntimeError(
                    f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{list(shape)}"
                )
        _too_small_check(shape, out_shape, k, mode)
        if any(s < 0 for s in out_shape):
            neg = next(s for s in out_shape if s < 0)
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {neg}: {out_shape}"
            )
        if input.dtype.name == "bool":  # torch's reflection/replication kernels take no bool
            kernel = "reflection" if mode == "reflect" else "replication"
            raise NotImplementedError(f"\"{kernel}_pad{k}d\" not implemented for 'Bool'")
    return _pad_index(input, pad, mode)
