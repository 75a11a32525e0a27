"""Convolutions (N-d, transposed, grouped) as im2col + one GEMM, and unfold/fold.

Forward: ``_im2col`` (kernels/im2col.py: a loop over the kernel offsets copying strided slices)
makes the columns (C, *k, N, *out) ONCE, outside the graph, and ``_conv_cols(input, cols, w)``
multiplies them by the weight in one GEMM per group, writing the NCHW output (bias fused into
that copy). Its derivative reuses the saved columns for the weight gradient
(``_conv_mm_dw`` = g @ cols^T) and sends the input gradient straight to the input through
``_conv_input_grad`` (w^T @ g, then col2im; for stride 1 the gradient is laid on a grid as wide
as the padded input so each kernel offset adds ONE contiguous run per image and channel). Under
``create_graph`` the weight gradient re-derives the columns from the input through the graph, so
mixed second derivatives are exact. 1x1 stride-1 convolutions skip im2col (the columns are a
view of the input) and use ``_conv_mm(cols, w)``, whose column gradient is ``_conv_mm_dx``.

On the cpu, 3x3 stride-1 2-D convolutions of enough channels and tiles (``_use_winograd``) take
Winograd F(2x2, 3x3) instead (kernels/winograd.py: 16 GEMMs per 4x4 tile transform, 2.25x fewer
flops):
``_wino_input`` makes the input transform V outside the graph (like the columns), and
``_conv_wino(input, V, w)``'s derivative is the non-differentiable ``_conv_wino_grad`` (the
Winograd backward, reusing V), or, under ``create_graph``, the im2col ops below.

On the cpu, 2-D depthwise convolutions (groups == in == out channels, large enough:
``_use_depthwise``) take direct multiply-adds instead (kernels/depthwise.py: ``_conv_dw``, whose
derivative is the non-differentiable ``_conv_dw_grad`` or, under ``create_graph``, the im2col
ops), and convolutions with few columns per output (stems: ``_SMALL_K``) multiply per sample on
the NCHW layout, skipping the transposing copies.

Every derivative is again one of these ops (``_im2col`` <-> ``_col2im``, ``_conv_mm``,
``_conv_mm_dx``, ``_conv_mm_dw``, ``_conv_input_grad``), so double backward works. A transposed
convolution is the input gradient of a convolution: ``_conv_input_grad(x, w)``.

The public functions (conv1d ... conv_transpose3d, convolution, unfold, fold) check arguments with
torch's messages and handle names (spec 4.3): batch and spatial names are kept; the channel dim
keeps its name for an unnamed weight; a weight named (out, in, ...) (for transposed convs the
weight's layout: (in, out, ...)) checks the input's channel name and names the output's.
"""

from __future__ import annotations

import math
import operator
from itertools import product

from ...autograd.grad_mode import _state as _grad_state
from ...autograd.node import as_torch_node
from .. import layout as _layout
from ..arg_errors import (
    as_int,
    int_list,
    int_list_error,
    invalid_arguments,
    keyword_numbering,
    must_be_tensor,
    overloaded,
    type_name,
)
from ..autocast import entry as _autocast_entry
from ..device import array_module
from ..dims import normalize_dim
from ..dtype import C_NAMES, can_cast, promote_types, scalar_name
from ..kernels.depthwise import dw_backward, dw_forward
from ..kernels.fused_im2col import im2col_kernels
from ..kernels.im2col import col2im, conv_out_size, im2col
from ..kernels.winograd import (
    wino_backward,
    wino_forward,
    wino_input_transform,
    wino_out_size,
)
from ..names import check_weight_dims
from ..registry import _cast_error, backward_names, op
from ..runtime import onednn_bf16, onednn_fp16
from ..tensor import Tensor
from .arithmetic import _cj

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "convolution",
]


def _unnamed(ins, *args, **kwargs):
    """Name rule of the private conv ops: the public functions strip names and restore them."""
    return


# ---------------------------------------------------------------------- private ops
@op(names=_unnamed, method=False)
def _im2col(xp, input, kernel_size=(), stride=(), padding=(), dilation=(), out_spatial=None):
    """Columns (C, *kernel, N, *out_spatial) of input (N, C, *spatial)."""
    return im2col(xp, input, kernel_size, stride, padding, dilation, out_spatial)


@_im2col.vjp
def _(grad, input_shape, stride, padding, dilation):
    return _col2im(grad, tuple(input_shape[2:]), stride, padding, dilation)


@op(names=_unnamed, method=False)
def _col2im(xp, input, spatial=(), stride=(), padding=(), dilation=(), unbatched=False):
    """Sum of columns (C, *kernel, N, *out_spatial) into (N, C, *spatial) (adjoint of im2col);
    ``unbatched``: N is 1 and dropped (F.fold of a 2-D input is one node, as in torch)."""
    out = col2im(xp, input, spatial, stride, padding, dilation)
    return out[0] if unbatched else out


@_col2im.vjp
def _(grad, input_shape, stride, padding, dilation, unbatched):
    nd = len(stride)
    kernel = tuple(input_shape[1 : 1 + nd])
    if unbatched:
        grad = grad.unsqueeze(0)
    return _im2col(grad, kernel, stride, padding, dilation, tuple(input_shape[2 + nd :]))


@op(names=_unnamed, method=False)
def _unfold_layout(xp, cols, unbatched=False):
    """F.unfold's (N, C*kh*kw, L) layout of im2col's columns (C, kh, kw, N, oh, ow); one node
    (torch's Im2ColBackward0), with N dropped when ``unbatched``."""
    c, kh, kw, n, oh, ow = cols.shape
    out = xp.ascontiguousarray(cols.reshape(c * kh * kw, n, oh * ow).transpose(1, 0, 2))
    return out[0] if unbatched else out


@_unfold_layout.vjp
def _(grad, cols_shape):
    c, kh, kw, n, oh, ow = cols_shape
    return grad.reshape(n, c, kh, kw, oh, ow).permute(1, 2, 3, 0, 4, 5)


def _is_half(d) -> bool:
    return d.kind == "V" or d.itemsize == 2 and d.kind == "f"


def _matmul(xp, a, b, rounded=True):
    # half types: numpy has no BLAS for them (and gives float32 for bfloat16): multiply in
    # float32 (as torch accumulates) and round once (``rounded=False``: the float32 product,
    # for a bias to be added before that rounding)
    d = a.dtype
    if _is_half(d):
        r = xp.matmul(a.astype(xp.float32), b.astype(xp.float32))
        return r.astype(d) if rounded else r
    return xp.matmul(a, b)


# up to this many columns per output (C/groups * prod(kernel)), the products run per sample on
# the NCHW layout, skipping the transposing copies (CNN step's 1-channel stem, batch 64: forward
# 0.48 -> 0.34 ms, weight gradient 0.68 -> 0.57 ms on one thread). The weight gradient of a stem
# whose input needs none gains up to more columns (ResNet stem, 3 channels, batch 32 at 32x32:
# backward 1.1 -> 0.85 ms on one thread, 1.2 -> 0.9 on two), its forward only on one thread.
_SMALL_K = 16
_SMALL_K_GRAD = 32


def _mm_forward(xp, cols, weight, groups, bias):
    o = weight.shape[0]
    nd = weight.ndim - 2
    n = cols.shape[1 + nd]
    osp = cols.shape[2 + nd :]
    p = math.prod(osp)
    kk = math.prod(weight.shape[1:])  # C/groups * prod(kernel)
    # half types: the bias joins the float32 product, one rounding for both (as torch)
    dt = cols.dtype
    late = bias is not None and _is_half(dt)
    if groups == 1 and kk <= _SMALL_K and im2col_kernels(xp, dt, nd) is None:
        # a stem (1-3 input channels): one product per sample writes the NCHW output directly;
        # with so few columns the transposing copy below costs as much as the product (on the
        # cpu; a GPU keeps one large product: fewer launches)
        out = _matmul(xp, weight.reshape(o, kk), cols.reshape(kk, n, p).swapaxes(0, 1), not late)
        if bias is not None:
            out += bias.reshape(o, 1)
        return (out.astype(dt) if late else out).reshape((n, o) + osp)
    if groups == 1:
        r = _matmul(xp, weight.reshape(o, kk), cols.reshape(kk, n * p), not late)
    else:
        g = groups
        r = _matmul(xp, weight.reshape(g, o // g, kk), cols.reshape(g, kk, n * p), not late)
    # (O, N, P) -> (N, O, P): one copy, the bias added on the way
    r = r.reshape(o, n, p).swapaxes(0, 1)
    out = xp.empty((n, o, p), dt)
    if bias is None:
        out[...] = r
    elif late:
        out[...] = r + bias.reshape(o, 1).astype(r.dtype)
    else:
        xp.add(r, bias.reshape(o, 1), out=out)
    return out.reshape((n, o) + osp)


@op(names=_unnamed, method=False)
def _conv_mm(xp, cols, weight, groups=1):
    """out (N, O, *sp) = weight (O, C/g, *k) x columns (C, *k, N, *sp), per group."""
    return _mm_forward(xp, cols, weight, groups, None)


@op(names=_unnamed, method=False)
def _conv_mm_bias(xp, cols, weight, bias, groups=1):
    """_conv_mm plus a per-channel bias (fused into the output copy)."""
    return _mm_forward(xp, cols, weight, groups, bias)


def _channels_first(grad):
    # (N, O, *sp) -> contiguous (O, N, *sp): the layout the backward GEMMs read directly
    return grad.transpose(0, 1).contiguous()


@_conv_mm.vjp
@_conv_mm_bias.vjp
def _(grad, cols, weight, groups, needs):
    # needs has a third entry (the bias) for _conv_mm_bias
    g = _channels_first(grad)
    gb = (_bias_grad(g, needs[2]),) if len(needs) > 2 else ()
    # these products are bilinear: torch's complex gradient pairs the output gradient with the
    # conjugate of the other factor (_cj leaves real tensors alone), here and in the vjps below
    return (
        _conv_mm_dx(g, _cj(weight), groups) if needs[0] else None,
        _conv_mm_dw(g, _cj(cols), groups) if needs[1] else None,
        *gb,
    )


def _bias_grad(g, need: bool):
    """The bias gradient from the channels-first output gradient g (O, N, *sp)."""
    return g.flatten(1).sum(1) if need else None


@op(names=_unnamed, method=False)
def _conv_mm_dx(xp, grad_t, weight, groups=1):
    """Column gradient (C, *k, N, *sp) = weight^T x grad_t (O, N, *sp), per group."""
    return _dx_kernel(xp, grad_t, weight, groups)


def _dx_kernel(xp, grad_t, weight, groups):
    o = weight.shape[0]
    c = weight.shape[1] * groups
    k = weight.shape[2:]
    np_ = math.prod(grad_t.shape[1:])
    kk = math.prod(weight.shape[1:])
    if groups == 1:
        r = _matmul(xp, weight.reshape(o, kk).T, grad_t.reshape(o, np_))
    else:
        g = groups
        w = weight.reshape(g, o // g, kk).swapaxes(1, 2)
        r = _matmul(xp, w, grad_t.reshape(g, o // g, np_))
    return r.reshape((c,) + k + grad_t.shape[1:])


@_conv_mm_dx.vjp
def _(grad, grad_t, weight, groups, needs):
    return (
        _channels_first(_conv_mm(grad, _cj(weight), groups)) if needs[0] else None,
        _conv_mm_dw(_cj(grad_t), grad, groups) if needs[1] else None,
    )


@op(names=_unnamed, method=False)
def _conv_mm_dw(xp, grad_t, cols, groups=1):
    """Weight gradient (O, C/g, *k) = grad_t (O, N, *sp) x columns^T, per group."""
    nd = (cols.ndim - 2) // 2
    o = grad_t.shape[0]
    c = cols.shape[0]
    k = cols.shape[1 : 1 + nd]
    np_ = math.prod(grad_t.shape[1:])
    kk = math.prod(cols.shape[: 1 + nd]) // groups
    if groups == 1:
        r = _matmul(xp, grad_t.reshape(o, np_), cols.reshape(kk, np_).T)
    else:
        g = groups
        r = _matmul(xp, grad_t.reshape(g, o // g, np_), cols.reshape(g, kk, np_).swapaxes(1, 2))
    return r.reshape((o, c // groups) + k)


@_conv_mm_dw.vjp
def _(grad, grad_t, cols, groups, needs):
    return (
        _channels_first(_conv_mm(_cj(cols), grad, groups)) if needs[0] else None,
        _conv_mm_dx(_cj(grad_t), grad, groups) if needs[1] else None,
    )


@op(names=_unnamed, method=False)
def _conv_cols(xp, input, cols, weight, groups=1, stride=(), padding=(), dilation=()):
    """A convolution from its precomputed columns (``cols`` = im2col of ``input``, made outside
    the graph): the input gradient is ``_conv_input_grad`` straight from the output gradient (no
    full column gradient), the weight gradient reuses the columns."""
    return _mm_forward(xp, cols, weight, groups, None)


@op(names=_unnamed, method=False)
def _conv_cols_bias(xp, input, cols, weight, bias, groups=1, stride=(), padding=(), dilation=()):
    """_conv_cols plus a per-channel bias."""
    return _mm_forward(xp, cols, weight, groups, bias)


@op(names=_unnamed, method=False)
def _conv_small_k_grads(xp, grad, cols, weight_shape=(), need_bias=False):
    """(weight gradient, bias gradient if asked) of a small-K convolution (``_SMALL_K_GRAD``)
    from the NCHW output gradient: a product per sample, summed, with no channels-first copy.
    Not differentiable (the first-order path only)."""
    n, o = grad.shape[:2]
    kk = math.prod(weight_shape[1:])
    g3 = grad.reshape(n, o, -1)
    gw = _matmul(xp, g3, cols.reshape(kk, n, -1).transpose(1, 2, 0)).sum(0)
    gw = gw.reshape(weight_shape)
    if need_bias:
        return gw, (g3 @ xp.ones(g3.shape[2], g3.dtype)).sum(0)
    return (gw,)


def _conv_cols_vjp(grad, input, cols, weight, groups, stride, padding, dilation, needs):
    if (
        not needs[0]
        and needs[2]
        and groups == 1
        and not _grad_state.enabled
        and math.prod(weight.shape[1:]) <= _SMALL_K_GRAD
        and grad._data.dtype.char in "fd"  # half types: one float32 product, rounded once
        and im2col_kernels(array_module(grad._data), grad._data.dtype, 2) is None  # the cpu
    ):
        # a stem's weight (and bias) gradient straight from the NCHW gradient
        need_b = len(needs) > 3 and needs[3]
        res = _conv_small_k_grads(grad, cols, tuple(weight.shape), need_b)
        gw = _layout.follow_format(res[0], _layout.cl_format(input, weight))
        return None, None, gw, res[1] if need_b else None
    g = _channels_first(grad)
    gx = gw = None
    if needs[0]:
        gx = _conv_input_grad(
            g, _cj(weight), tuple(input.shape[2:]), groups, stride, padding, dilation
        )
    if needs[2]:
        if _grad_state.enabled and input.requires_grad:
            # double backward: the weight gradient must see the input through the graph
            cols = _im2col(input, tuple(weight.shape[2:]), stride, padding, dilation)
        gw = _conv_mm_dw(g, _cj(cols), groups)
    fmt = _layout.cl_format(input, weight)
    if fmt is not None:  # channels_last in, channels_last gradients out (torch's backend format)
        gx, gw = _layout.follow_format(gx, fmt), _layout.follow_format(gw, fmt)
    return gx, g, gw, None


@_conv_cols.vjp
def _(grad, input, cols, weight, groups, stride, padding, dilation, needs):
    gx, _g, gw, _gb = _conv_cols_vjp(
        grad, input, cols, weight, groups, stride, padding, dilation, needs
    )
    return gx, None, gw


@_conv_cols_bias.vjp
def _(grad, input, cols, weight, groups, stride, padding, dilation, needs):
    gx, g, gw, gb = _conv_cols_vjp(
        grad, input, cols, weight, groups, stride, padding, dilation, needs
    )
    return gx, None, gw, (_bias_grad(g, needs[3]) if g is not None else gb)


def _input_grad_flat(xp, grad_t, weight, spatial, groups, padding, dilation):
    """Input gradient of a stride-1 convolution without short-row adds: the output gradient is
    laid on a grid as wide as the padded input (zeros beyond the outputs), so that each kernel
    offset's column gradient lands on the padded input plane as ONE contiguous run per image and
    channel (a flat shift); the zero columns make the wrapped-around entries add nothing."""
    o, n = grad_t.shape[:2]
    osp = grad_t.shape[2:]
    c = weight.shape[1] * groups
    kernel = weight.shape[2:]
    padded = tuple(sz + 2 * p for sz, p in zip(spatial, padding))
    wide = (osp[0],) + padded[1:]
    if wide != osp:
        g = xp.zeros((o, n) + wide, grad_t.dtype)
        g[(slice(None), slice(None)) + tuple(slice(0, m) for m in osp)] = grad_t
    else:
        g = grad_t
    length = math.prod(wide)
    dcols = _dx_kernel(xp, g, weight, groups).reshape(c, math.prod(kernel), n, length)
    rest = math.prod(padded[1:])
    plane = (padded[0] + (1 if len(padded) > 1 else 0)) * rest  # one spare row: the last shifts
    acc = xp.zeros((n, c, plane), grad_t.dtype)
    dst = acc.swapaxes(0, 1)
    flat = [math.prod(padded[i + 1 :]) for i in range(len(padded))]
    for idx, off in enumerate(product(*(range(k) for k in kernel))):
        start = sum(q * d * f for q, d, f in zip(off, dilation, flat))
        dst[:, :, start : start + length] += dcols[:, idx]
    out = acc[:, :, : padded[0] * rest].reshape((n, c) + padded)
    inner = (slice(None), slice(None)) + tuple(slice(p, p + sz) for p, sz in zip(padding, spatial))
    return xp.ascontiguousarray(out[inner])


@op(names=_unnamed, method=False)
def _conv_input_grad(xp, grad_t, weight, spatial=(), groups=1, stride=(), padding=(), dilation=()):
    """Input gradient (N, C, *spatial) of a convolution from grad_t (O, N, *out_spatial): a
    transposed convolution (col2im of weight^T x grad_t)."""
    dt = grad_t.dtype
    if dt.kind == "V" and onednn_bf16():  # bfloat16: oneDNN sums in float32, rounds once
        f32 = xp.float32
        return _input_grad_kernel(
            xp, grad_t.astype(f32), weight.astype(f32), spatial, groups, stride, padding, dilation
        ).astype(dt)
    return _input_grad_kernel(xp, grad_t, weight, spatial, groups, stride, padding, dilation)


def _input_grad_kernel(xp, grad_t, weight, spatial, groups, stride, padding, dilation):
    if all(s == 1 for s in stride) and im2col_kernels(xp, grad_t.dtype, len(stride)) is None:
        return _input_grad_flat(xp, grad_t, weight, spatial, groups, padding, dilation)
    return col2im(xp, _dx_kernel(xp, grad_t, weight, groups), spatial, stride, padding, dilation)


@_conv_input_grad.vjp
def _(grad, grad_t, weight, groups, stride, padding, dilation, needs):
    cols = _im2col(
        grad, tuple(weight.shape[2:]), stride, padding, dilation, tuple(grad_t.shape[2:])
    )
    return (
        _channels_first(_conv_mm(cols, _cj(weight), groups)) if needs[0] else None,
        _conv_mm_dw(_cj(grad_t), cols, groups) if needs[1] else None,
    )


# ---------------------------------------------------------------------- depthwise
@op(names=_unnamed, method=False)
def _conv_dw(xp, input, weight, stride=(), padding=(), dilation=(), cache=None):
    """A depthwise 2-D convolution (groups == in == out channels) by direct multiply-adds
    (kernels/depthwise.py); the input's padded phase planes (one copy of the input) go into the
    list ``cache`` for the weight gradient, saved by the node like batch norm's statistics."""
    return dw_forward(xp, input, weight, stride, padding, dilation, keep=cache)


@op(names=_unnamed, method=False)
def _conv_dw_bias(xp, input, weight, bias, stride=(), padding=(), dilation=(), cache=None):
    """_conv_dw plus a per-channel bias."""
    return dw_forward(xp, input, weight, stride, padding, dilation, bias, cache)


@op(names=_unnamed, method=False)
def _conv_dw_grad(
    xp,
    grad,
    input,
    weight,
    stride=(),
    padding=(),
    dilation=(),
    need_input=True,
    need_weight=True,
    need_bias=False,
    cache=None,
):
    """The gradients (input, weight, bias: those asked for, in that order) of _conv_dw (``cache``:
    the forward's). Not differentiable: under ``create_graph`` the derivative of _conv_dw takes
    the im2col ops."""
    planes = cache[0] if cache else None
    return dw_backward(
        xp,
        grad,
        input,
        weight,
        stride,
        padding,
        dilation,
        need_input,
        need_weight,
        need_bias,
        planes,
    )


def _conv_dw_vjp(grad, input, weight, stride, padding, dilation, cache, needs):
    """(input, weight, bias) gradients of _conv_dw(_bias)."""
    need_b = len(needs) > 2 and needs[2]
    if _grad_state.enabled:
        # double backward: the differentiable im2col ops of the grouped convolution
        g = _channels_first(grad)
        groups = weight.shape[0]
        gx = gw = None
        if needs[0]:
            spatial = tuple(input.shape[2:])
            gx = _conv_input_grad(g, weight, spatial, groups, stride, padding, dilation)
        if needs[1]:
            cols = _im2col(input, tuple(weight.shape[2:]), stride, padding, dilation)
            gw = _conv_mm_dw(g, cols, groups)
        return (*_follow_grads(input, weight, gx, gw), _bias_grad(g, need_b))
    res = iter(
        _conv_dw_grad(
            grad, input, weight, stride, padding, dilation, needs[0], needs[1], need_b, cache
        )
    )
    gx = next(res) if needs[0] else None
    gw = next(res) if needs[1] else None
    return (*_follow_grads(input, weight, gx, gw), next(res) if need_b else None)


@_conv_dw.vjp
def _(grad, input, weight, stride, padding, dilation, cache, needs):
    return _conv_dw_vjp(grad, input, weight, stride, padding, dilation, cache, needs)[:2]


@_conv_dw_bias.vjp
def _(grad, input, weight, stride, padding, dilation, cache, needs):
    return _conv_dw_vjp(grad, input, weight, stride, padding, dilation, cache, needs)


# below this many input values the direct path's ~3 numpy calls per kernel offset cost more than
# im2col's few larger ones (measured forward + backward, 3x3: 1K values 158 vs 130 us, 8K values
# 217 vs 251 us, 64K values 0.55 vs 1.26 ms)
_DW_MIN_SIZE = 4096


def _use_depthwise(x, weight, groups) -> bool:
    """A 2-D depthwise convolution with one output channel per input channel (the input's
    channel count is checked against groups before), float32/float64, large enough, on the cpu:
    there im2col makes 9x columns for GEMMs with K = 9 (~10x slower than torch); on cupy im2col
    is one fused kernel and the direct path would cost two launches per kernel offset."""
    ws = weight._data.shape
    if groups == 1 or ws[1] != 1 or ws[0] != groups:
        return False
    a = x._data
    return (
        a.size >= _DW_MIN_SIZE
        and a.dtype.char in "fd"
        and im2col_kernels(array_module(a), a.dtype, 2) is None
    )


def _conv_dw_call(x, weight, bias, stride, padding, dilation):
    # the phase planes are kept only where the weight gradient will use them
    cache = [] if weight.requires_grad and _grad_state.enabled else None
    if bias is None:
        return _conv_dw(x, weight, stride, padding, dilation, cache)
    return _conv_dw_bias(x, weight, bias, stride, padding, dilation, cache)


# ---------------------------------------------------------------------- Winograd F(2x2, 3x3)
@op(names=_unnamed, method=False)
def _wino_input(xp, input, padding=()):
    """Winograd input transform (16, C, T) of input (N, C, H, W) (kernels/winograd.py), made
    outside the graph like the im2col columns."""
    return wino_input_transform(xp, input, padding)


@op(names=_unnamed, method=False)
def _conv_wino(xp, input, v, weight, padding=()):
    """A 3x3 stride-1 convolution from the Winograd input transform ``v`` of ``input``: 16 GEMMs
    (O, C) x (C, T); the backward reuses ``v`` for the weight gradient."""
    ho, wo, _, _ = wino_out_size(input.shape[2:], padding)
    return wino_forward(xp, v, weight, input.shape[0], ho, wo)


@op(names=_unnamed, method=False)
def _conv_wino_bias(xp, input, v, weight, bias, padding=()):
    """_conv_wino plus a per-channel bias (fused into the output copy)."""
    ho, wo, _, _ = wino_out_size(input.shape[2:], padding)
    return wino_forward(xp, v, weight, input.shape[0], ho, wo, bias)


@op(names=_unnamed, method=False)
def _conv_wino_grad(
    xp, grad, v, weight, spatial=(), padding=(), need_input=True, need_weight=True, need_bias=False
):
    """The gradients (input, weight, bias: those asked for, in that order) of _conv_wino from
    its output gradient, by the Winograd backward. Not differentiable: under ``create_graph``
    the derivative of _conv_wino takes the im2col ops instead."""
    return wino_backward(xp, grad, v, weight, spatial, padding, need_input, need_weight, need_bias)


def _conv_wino_vjp(grad, input, v, weight, padding, needs):
    """(input, weight, bias) gradients of _conv_wino(_bias)."""
    need_b = len(needs) > 3 and needs[3]
    if _grad_state.enabled or not _all_finite(grad):
        # double backward: differentiable im2col ops (the Winograd backward op has no vjp); an
        # inf/NaN gradient too (Winograd's transforms would turn inf into NaN, see below)
        g = _channels_first(grad)
        ones = (1,) * len(padding)
        gx = gw = None
        if needs[0]:
            gx = _conv_input_grad(g, weight, tuple(input.shape[2:]), 1, ones, padding, ones)
        if needs[2]:
            gw = _conv_mm_dw(g, _im2col(input, tuple(weight.shape[2:]), ones, padding, ones), 1)
        return (*_follow_grads(input, weight, gx, gw), _bias_grad(g, need_b))
    res = iter(
        _conv_wino_grad(
            grad, v, weight, tuple(input.shape[2:]), padding, needs[0], needs[2], need_b
        )
    )
    gx = next(res) if needs[0] else None
    gw = next(res) if needs[2] else None
    return (*_follow_grads(input, weight, gx, gw), next(res) if need_b else None)


def _follow_grads(input, weight, gx, gw):
    """(gx, gw) relaid out as channels_last when the input or weight is (torch's backend format)."""
    fmt = _layout.cl_format(input, weight)
    if fmt is None:
        return gx, gw
    return _layout.follow_format(gx, fmt), _layout.follow_format(gw, fmt)


@_conv_wino.vjp
def _(grad, input, v, weight, padding, needs):
    gx, gw, _gb = _conv_wino_vjp(grad, input, v, weight, padding, needs)
    return gx, None, gw


@_conv_wino_bias.vjp
def _(grad, input, v, weight, padding, needs):
    gx, gw, gb = _conv_wino_vjp(grad, input, v, weight, padding, needs)
    return gx, None, gw, gb


# Winograd pays off when its 2.25x fewer GEMM flops outweigh its transforms (measured per layer,
# forward + backward, against im2col): the input-side transforms are cheap next to im2col's
# 9x columns, the output-side ones are not, so it needs at least as many input channels as
# output channels (or 32 of them), and enough tiles for the 16 GEMMs to amortize the weight
# transforms (1-3 channel stems, 1x1-sized batches and 2x2 feature maps of wide layers stay on
# im2col)
_WINO_MIN_IN = 4
_WINO_WIDE_IN = 32
_WINO_MIN_TILES = 64


def _use_winograd(x, weight, stride, padding, dilation, groups) -> bool:
    """Whether a 2-D convolution takes the Winograd route: where it fits (``_winograd_fits``),
    and not on cupy. There im2col is one gather kernel (fused_im2col.py) and the GEMM's extra
    flops cost the GPU little, while Winograd's transforms are ~30 launches and three host syncs
    per convolution (bench/'s CNN step: 136 device-array calls with Winograd, 75 without)."""
    a = x._data
    if im2col_kernels(array_module(a), a.dtype, 2) is not None:
        return False
    return _winograd_fits(x, weight, stride, padding, dilation, groups)


def _winograd_fits(x, weight, stride, padding, dilation, groups) -> bool:
    """Whether Winograd applies and pays on the cpu: 3x3, stride 1, dilation 1, ungrouped,
    float32/float64, at least 2x2 outputs, and the shape where it is faster (see above)."""
    o, c, kh, kw = weight._data.shape
    if kh != 3 or kw != 3 or groups != 1 or stride != (1, 1) or dilation != (1, 1):
        return False
    if c < _WINO_MIN_IN or (o > c and c < _WINO_WIDE_IN) or x._data.dtype.char not in "fd":
        return False
    n, _, h, w = x._data.shape
    ho = h + 2 * padding[0] - 2
    wo = w + 2 * padding[1] - 2
    if ho < 2 or wo < 2 or n * ((ho + 1) // 2) * ((wo + 3) // 2) < _WINO_MIN_TILES:
        return False
    # the transforms subtract neighbouring values: an inf would make NaN even in outputs whose
    # window does not hold it, so non-finite inputs and weights take im2col (one sum each)
    return _all_finite(x) and _all_finite(weight)


def _all_finite(t) -> bool:
    """No inf or NaN in ``t`` (or so large a sum that it overflows: then im2col, to be safe)."""
    a = t._data
    xp = array_module(a)
    if a.size >= 16384 and a.flags.c_contiguous and a.dtype.char in "fd":
        # row sums by a BLAS matrix-vector product (threaded, ~4x numpy's sum of a large float
        # array); an inf or NaN still reaches the total
        m = a.reshape(a.shape[0], -1)
        return bool(xp.isfinite((m @ xp.ones(m.shape[1], a.dtype)).sum()))
    return bool(xp.isfinite(a.sum()))


# ---------------------------------------------------------------------- argument checks
_POSITIONS = {"stride": 4, "padding": 5, "output_padding": 6, "dilation": 6}


def _tuple(v, nd: int, what: str, fn: str | None = None):
    fn = fn or f"conv{nd}d"
    if type(v) is int:
        return (v,) * nd
    if not isinstance(v, (tuple, list)):
        x = as_int(v, True)  # a numpy integer or an integer tensor is one size, as an int
        if x is not None:
            return (x,) * nd
    # numbered as passed by position (conv_transpose{n}d's keyword_numbering rewords a keyword's)
    pos = 8 if what == "dilation" and fn.startswith("conv_transpose") else _POSITIONS[what]
    if not isinstance(v, (tuple, list)):
        raise int_list_error(fn, what, pos, v)
    t = int_list(fn, what, pos, v)
    if len(t) == 1:
        return t * nd
    if len(t) != nd:
        raise RuntimeError(
            f"expected {what} to be a single integer value or a list of {nd} values to match "
            f"the convolution dimensions, but got {what}={list(t)}"
        )
    return t


def _type_name(t: Tensor) -> str:
    from ..dtype import legacy_type_name

    if t.dtype.name in ("bfloat16", "bool") or t.dtype.is_complex:  # no legacy class name
        return f"CPU{scalar_name(t.dtype)}Type"
    return "torch." + legacy_type_name(t.dtype)


_CONV_SIGS = (
    (
        "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of "
        "ints padding = 0, tuple of ints dilation = 1, int groups = 1)"
    ),
    (
        "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding "
        '= "valid", tuple of ints dilation = 1, int groups = 1)'
    ),
)


def _int_like(v) -> bool:
    """An int as torch's parser takes one (a numpy integer, an integer tensor; no bool)."""
    return type(v) is int or as_int(v, True) is not None


def _conv_args_parse(args, kwargs) -> bool:
    """Whether torch's parser takes conv{n}d's arguments (one overload or the other): only a
    call it refuses gets its "invalid combination of arguments" error."""
    names = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
    if len(args) > len(names) or any(k not in names for k in kwargs):
        return False
    bound = dict(zip(names, args), **kwargs)

    def ints(v):  # the parser matches a list by its first item (a later one fails to unpack)
        return _int_like(v) or (isinstance(v, (tuple, list)) and all(map(_int_like, v[:1])))

    return (
        isinstance(bound.get("input"), Tensor)
        and isinstance(bound.get("weight"), Tensor)
        and isinstance(bound.get("bias"), (Tensor, type(None)))
        and all(ints(bound.get(k, 1)) for k in ("stride", "dilation"))
        and (isinstance(bound.get("padding", 0), str) or ints(bound.get("padding", 0)))
        and _int_like(bound.get("groups", 1))
    )


def _conv_type_error(fname, input, weight, bias, **kw) -> TypeError:
    """torch's TypeError for a convolution given a non-Tensor input, weight or bias (or a
    non-int ``groups=`` in ``kw``): conv{n}d has two overloads, conv_transpose{n}d one."""
    if not fname.startswith("conv_transpose"):
        args = (input, weight) if bias is None else (input, weight, bias)
        return invalid_arguments(fname, args, kw, _CONV_SIGS)
    names = ("input", "weight", "bias")
    err = must_be_tensor(fname, names, (input, weight, bias), optional=("bias",))
    if err is None:
        err = TypeError(f"{fname}(): argument 'groups' must be int, not {type_name(kw['groups'])}")
    return err


def _rank_error(input, weight) -> RuntimeError:
    """torch's input-shape check of a 1-d convolution given a weight of more dims."""
    shape = list(input.shape) if input.dim() == 3 else [1, *input.shape]
    w = weight.dim()
    return RuntimeError(
        f"Expected {w}-dimensional input for {w}-dimensional weight {list(weight.shape)}, but "
        f"got 3-dimensional input of size {shape} instead"
    )


def _check_common(input, weight, bias, stride, padding, dilation, groups, nd, fname):
    """The checks torch makes before it picks a backend, in its order: a (non-transposed) bias's
    dtype, the input's rank, a complex input's weight and bias dtypes, then the arguments. The
    weight's dtype waits for the backend (_check_types)."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise _conv_type_error(fname, input, weight, bias)
    if not isinstance(groups, int) or isinstance(groups, bool):
        raise _conv_type_error(fname, input, weight, bias, groups=groups)
    if bias is not None and not isinstance(bias, Tensor):
        raise _conv_type_error(fname, input, weight, bias)
    transposed = fname.startswith("conv_transpose")
    if not transposed and bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({_short(input.dtype)}) and bias type ({_short(bias.dtype)}) should "
            "be the same"
        )
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fname}, but got "
            f"input of size: {list(input.shape)}"
        )
    if input.dtype.is_complex:  # torch's complex convolution checks the types itself
        for what, t in (("weight", weight), ("bias", bias if transposed else None)):
            if isinstance(t, Tensor) and t.dtype != input.dtype:
                raise RuntimeError(
                    f"Input type ({_type_name(input)}) and {what} type ({_type_name(t)}) should "
                    "be the same"
                )
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.dim() != nd + 2 and len(_tuple(stride, nd, "stride")) != 1:
        # torch reports the dimension mismatch through the stride argument (a one-element
        # stride stretches to the weight's dims: _rank_error, later)
        raise RuntimeError(
            f"expected stride to be a single integer value or a list of {weight.dim() - 2} "
            "values to match the convolution dimensions, but got stride="
            f"{list(_tuple(stride, nd, 'stride'))}"
        )
    stride = _tuple(stride, nd, "stride", fname)
    dilation = _tuple(dilation, nd, "dilation", fname)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    return stride, dilation


def _check_signs(padding: tuple, stride: tuple, dilation: tuple, output_padding=()) -> None:
    # torch's generic checks, in its order; a zero dilation reaches the backend
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")


def _backend_errors(
    x, input, weight, bias, groups, nd, stride, padding, dilation, out_sp=None, op=None
) -> None:
    """Raise torch's error for a call its backend refuses (a transposed one gives its output
    size ``out_sp`` and ``op``, its output padding), in that backend's order. oneDNN checks the
    weight's (and a transposed bias's) dtype, then the geometry: zero dilation, empty kernel,
    output size. The native kernels check the geometry (the output padding too, which keeps a
    call off oneDNN), then their dispatch (narrow integers) and meet a wrong dtype last, when
    they read the data. Returns quietly for a call that runs."""
    transposed = out_sp is not None
    kernel = tuple(weight.shape[2:])
    big_op = transposed and any(p >= s and p >= d for p, s, d in zip(op, stride, dilation))
    # an output padding of a stride or more keeps a call off oneDNN
    dnn = not (transposed and any(map(operator.ge, op, stride))) and _uses_onednn(
        input, weight, groups, nd
    )
    wrong_b = transposed and bias is not None and bias.dtype != input.dtype
    if dnn and (input.dtype != weight.dtype or wrong_b):
        what, t = ("weight", weight) if input.dtype != weight.dtype else ("bias", bias)
        raise RuntimeError(
            f"Input type ({_type_name(input)}) and {what} type ({_type_name(t)}) should be the "
            f"same or input should be a MKLDNN tensor and {what} is a dense tensor"
        )
    # 1-d convolutions run as 2-d ones of height 1 in torch's kernels
    show_k, show_d = ((1, *kernel), (1, *dilation)) if nd == 1 else (kernel, dilation)
    group_w = [weight.shape[0] // groups, *weight.shape[1:]]  # one group's weight
    # oneDNN's 1-d and 2-d transposed kernels ignore the dilation of a size-1 kernel axis
    free_d = dnn and transposed and nd < 3
    bad = {
        "kernel": (
            0 in kernel,
            lambda: _empty_kernel(transposed, nd, dnn, show_k, show_d, group_w),
        ),
        "dilation": (
            any(d == 0 and (k > 1 or not free_d) for d, k in zip(dilation, kernel)),
            lambda: _zero_dilation(transposed, nd, dnn, show_k, show_d, group_w),
        ),
        # oneDNN makes an empty output of a zero size
        "size": (
            transposed and min(out_sp) < (0 if dnn else 1),
            lambda: _output_too_small(x, nd, dnn, out_sp),
        ),
        "output_padding": (big_op, lambda: _big_output_padding(nd, op, stride, show_d)),
    }
    if dnn:
        order = ("size", "dilation", "kernel")
    elif transposed and nd == 3:
        order = ("dilation", "output_padding", "kernel", "size")
    else:
        order = ("kernel", "dilation", "output_padding", "size")
    for key in order:
        if bad[key][0]:
            raise bad[key][1]()
    if x.dtype.name in _NARROW_INTS:
        _narrow_int_check(x, nd, transposed, stride, padding, dilation, kernel, groups)
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_name(input.dtype)} but found {scalar_name(weight.dtype)}"
        )
    if wrong_b and nd == 3:  # the native 3-d kernel checks it; the others add it in place (cast)
        raise RuntimeError(
            f"expected scalar type {scalar_name(input.dtype)} but found {scalar_name(bias.dtype)}"
        )
    if wrong_b and not can_cast(res := promote_types(input.dtype, bias.dtype), input.dtype):
        raise _cast_error(res, input.dtype)


def _big_output_padding(nd: int, op: tuple, stride: tuple, show_d: tuple) -> RuntimeError:
    show_op, show_s = ((0, *op), (1, *stride)) if nd == 1 else (op, stride)
    axes = ("depth", "height", "width")[3 - len(show_d) :]
    parts = [f"output_padding_{a}: {v}" for a, v in zip(axes, show_op)]
    parts += [f"stride_{a}: {v}" for a, v in zip(axes, show_s)]
    parts += [f"dilation_{a}: {v}" for a, v in zip(axes, show_d)]
    return RuntimeError(
        "output padding must be smaller than either stride or dilation, but got " + " ".join(parts)
    )


def _output_too_small(x, nd: int, dnn: bool, out_sp: tuple) -> RuntimeError:
    if dnn:
        return RuntimeError("could not construct a memory descriptor using a format tag")
    in_sp = tuple(x.shape[2:])
    if nd == 1:
        in_sp, out_sp = (1, *in_sp), (1, *out_sp)
    return RuntimeError(
        f"Given input size per channel: ({' x '.join(map(str, in_sp))}). Calculated output "
        f"size per channel: ({' x '.join(map(str, out_sp))}). Output size is too small"
    )


def _empty_kernel(transposed: bool, nd: int, dnn: bool, kernel: tuple, dilation: tuple, group_w):
    if dnn:
        kind = "deconvolution" if transposed else "convolution"
        return RuntimeError(
            f"could not create a primitive descriptor for the {kind} forward propagation "
            "primitive. Run workload with environment variable ONEDNN_VERBOSE=all to get "
            "additional diagnostic information."
        )
    if not transposed and any(d != 1 for d in dilation):  # the dilated kernel
        return RuntimeError(f"kernel size should be greater than zero, but got {list(kernel)}")
    if nd < 3:
        return RuntimeError(
            "kernel size should be greater than zero, but got kernel_height: "
            f"{kernel[0]} kernel_width: {kernel[1]}"
        )
    if transposed:  # torch's slow kernel runs group by group: it shows one group's weight
        return RuntimeError(
            "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x "
            f"kernel_width) tensor expected for weight, but got: {group_w}"
        )
    return RuntimeError(
        f"kernel size should be greater than zero, but got: {' x '.join(map(str, kernel))} (TxHxW)"
    )


def _zero_dilation(transposed: bool, nd: int, dnn: bool, kernel: tuple, dilation: tuple, group_w):
    if dnn:
        if not transposed:
            return RuntimeError("non-positive dilation is not supported")
        if nd == 3:
            return RuntimeError("dimensions are invalid")
        return _empty_kernel(transposed, nd, dnn, kernel, dilation, group_w)
    if not transposed:
        return RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    axes = ("depth", "height", "width")[3 - len(dilation) :]
    got = ", ".join(f"dilation_{a}: {v}" for a, v in zip(axes, dilation))
    return RuntimeError(f"dilation should be greater than zero, but got {got}")


def _uses_onednn(input, weight, groups: int, nd: int) -> bool:
    """Whether torch's cpu convolution runs ``input`` through oneDNN: for bfloat16 on a cpu with
    AVX-512 (BW, VL, DQ), for float16 on one with AVX-512 FP16, for float32 when grouped, with
    kernels over 3x3, a batch over 1 or a large input (its heuristic, with 1-d convolutions
    viewed as 2-d)."""
    if input.dtype.name == "bfloat16":
        return onednn_bf16()
    if input.dtype.name == "float16":
        return onednn_fp16()
    if input.dtype.name not in ("float32", "complex64"):  # complex: three real convolutions
        return False
    shape = tuple(input.shape) if input.dim() == nd + 2 else (1, *input.shape)
    if nd == 1:
        shape = (*shape[:2], 1, shape[2])
    k = tuple(weight.shape[2:]) if nd > 1 else (1, weight.shape[-1])
    return groups > 1 or (k[-1] > 3 and k[-2] > 3) or shape[0] > 1 or math.prod(shape[:4]) > 20480


def _short(dt) -> str:
    # torch's C++ scalar names in the bias message: float, double, c10::Half, long int ...
    return C_NAMES.get(dt.name, dt.name)


_SAME_WARNED = [False]  # padding='same' with an even kernel: warned already
_NARROW_INTS = ("int32", "int16", "int8", "uint8", "bool")


def _narrow_int_check(x, nd, transposed, stride, padding, dilation, kernel, groups) -> None:
    """torch's cpu convolutions of integers below int64 and of bool: only the plain (neither
    dilated nor transposed) kernels take the integers, none takes bool; the error names the
    kernel the call would have run."""
    if transposed:
        name = f"slow_conv_transpose{max(nd, 2)}d_out_cpu"
    elif any(d != 1 for d in dilation):
        name = "slow_conv_dilated<>"
    elif x.dtype.name != "bool":
        return
    elif nd < 3:
        name = "slow_conv2d_cpu"
    elif groups == 1 and all(k == 1 for k in kernel + stride) and not any(padding):
        name = "slow_conv3d_cpu"  # an ungrouped 1x1x1 kernel skips the columns
    else:
        name = "compute_columns3d"
    raise NotImplementedError(f"\"{name}\" not implemented for '{scalar_name(x.dtype)}'")


def _check_bias(weight, bias, out_channels, transposed: bool = False):
    if bias is not None and bias._data.shape != (out_channels,):
        raise RuntimeError(
            f"Given {'transposed=1, ' if transposed else ''}weight of size {list(weight.shape)}, "
            "expected bias to be 1-dimensional with "
            f"{out_channels} elements, but got bias of size {list(bias.shape)} instead"
        )


def _check_groups_weight(weight, groups):
    if weight._data.shape[0] < groups:  # torch's first check (its message, single brackets)
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
            f"but got weight of size {list(weight.shape)} instead"
        )
    if weight._data.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead"
        )


def _check_kernel_fits(spatial, padding, weight, dilation, out_padding_lo=None):
    padded = [n + 2 * p for n, p in zip(spatial, padding)]
    if out_padding_lo is not None:
        padded = [n + e for n, e in zip(padded, out_padding_lo)]
    ker = [d * (k - 1) + 1 for k, d in zip(weight._data.shape[2:], dilation)]
    if any(k > n for k, n in zip(ker, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, ker))}). Kernel size can't be greater than "
            "actual input size"
        )


# ---------------------------------------------------------------------- names (spec 4.3)
def _out_names(input, weight, bias, transposed: bool, fname: str):
    xn = input.names
    wn = weight.names
    w_out, w_in = (wn[1], wn[0]) if transposed else (wn[0], wn[1])
    c = 1 if input.dim() == weight.dim() else 0
    check_weight_dims(fname, "channel", xn, (c,), wn, (0 if transposed else 1,))
    out = list(xn)
    if w_out is not None or w_in is not None:
        out[c] = w_out
        if bias is not None and bias._names is not None and bias._names[0] is not None:
            # as Linear's: a named weight names the output channels and the bias must agree
            # (it names them when the weight's output dim is unnamed: addmm's rule)
            if w_out is not None and w_out != bias._names[0]:
                raise RuntimeError(
                    f"{fname}: the bias is named {list(bias._names)}, but the weight names the "
                    f"output channels '{w_out}' (weight names {list(wn)}); rename the bias or "
                    "the weight (rename/refine_names)"
                )
            out[c] = bias._names[0]
    return tuple(out)


def _named_call(fn, input, weight, bias, transposed, fname, *args):
    names = _out_names(input, weight, bias, transposed, fname)
    out = fn(
        input.rename(None),
        weight.rename(None),
        None if bias is None else bias.rename(None),
        *args,
    )
    return out.rename(*names) if any(n is not None for n in names) else out


def _any_named(input, weight, bias) -> bool:
    return (
        input._names is not None
        or weight._names is not None
        or (bias is not None and getattr(bias, "_names", None) is not None)  # a bad bias: the
        # type check after this reports it
    )


# ---------------------------------------------------------------------- convolution
def _same_padding(weight, dilation, nd):
    lo, hi = [], []
    for k, d in zip(weight.shape[2:], dilation):
        total = d * (k - 1)
        lo.append(total // 2)
        hi.append(total - total // 2)
    return tuple(lo), tuple(hi)


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):
    fname = f"conv{nd}d"
    if isinstance(input, Tensor) and isinstance(weight, Tensor) and _any_named(input, weight, bias):
        return _named_call(
            _conv_fn(nd), input, weight, bias, False, fname, stride, padding, dilation, groups
        )
    stride, dilation = _check_common(
        input, weight, bias, stride, padding, dilation, groups, nd, fname
    )
    pad_hi = None
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            padding, pad_hi = _same_padding(weight, dilation, nd)
            if padding == pad_hi:
                pad_hi = None
            elif any(d % 2 for d in dilation) and not _SAME_WARNED[0]:
                from .conversion import warn_user

                _SAME_WARNED[0] = True  # torch warns once per process (TORCH_WARN_ONCE)
                warn_user(
                    "Using padding='same' with even kernel lengths and odd dilation may require "
                    "a zero-padded copy of the input be created"
                )
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _tuple(padding, nd, "padding")
    _check_signs(padding, stride, dilation)
    if weight.dim() != nd + 2:
        raise _rank_error(input, weight)
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    # raw shapes (plain tuples): Tensor.shape is a Size, slower to index and slice
    xshape, wshape = x._data.shape, weight._data.shape
    if xshape[1] != wshape[1] * groups:
        _check_groups_weight(weight, groups)
        shown = list(xshape)
        if pad_hi is not None:  # torch pads asymmetric 'same' input before this check
            shown[2:] = [n + hi - lo for n, lo, hi in zip(shown[2:], padding, pad_hi)]
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{shown} to have {weight.shape[1] * groups} channels, but got "
            f"{x.shape[1]} channels instead"
        )
    _check_groups_weight(weight, groups)
    _check_bias(weight, bias, wshape[0])
    if pad_hi is not None:
        # asymmetric 'same' padding: the extra zero goes after (torch's choice)
        from .padding import constant_pad_nd

        extra = []
        for lo, hi in zip(reversed(padding), reversed(pad_hi)):
            extra += [0, hi - lo]
        x = constant_pad_nd(x, tuple(extra))
        xshape = x._data.shape
    spatial = xshape[2:]
    _check_kernel_fits(spatial, padding, weight, dilation)
    kernel = wshape[2:]
    # (an empty window would make an output of zeros: torch refuses it)
    if input.dtype != weight.dtype or 0 in kernel or 0 in dilation or x.dtype.name in _NARROW_INTS:
        _backend_errors(x, input, weight, bias, groups, nd, stride, padding, dilation)
    # a channels_last input or weight gives a channels_last output (torch's rule); the relayout
    # is one copy of the output, paid only then (the contiguous path: two flags checks)
    fmt = _layout.cl_format(x, weight)
    if fmt is not None:
        out = _conv_cl(x, weight, bias, stride, padding, dilation, groups, nd, kernel)
        return _layout.follow_format(out, fmt) if batched else out.squeeze(0)
    if all(k == 1 for k in kernel) and not any(padding) and all(s == 1 for s in stride):
        # 1x1 convolution: the columns are the input itself (a plain GEMM)
        n, c = xshape[:2]
        cols = x.transpose(0, 1).reshape((c,) + kernel + (n,) + spatial)
        out = (
            _conv_mm(cols, weight, groups)
            if bias is None
            else _conv_mm_bias(cols, weight, bias, groups)
        )
        return out if batched else out.squeeze(0)
    if nd == 2 and groups > 1 and _use_depthwise(x, weight, groups):
        out = _conv_dw_call(x, weight, bias, stride, padding, dilation)
        return out if batched else out.squeeze(0)
    if nd == 2 and _use_winograd(x, weight, stride, padding, dilation, groups):
        v = _wino_input(x.detach() if x.requires_grad else x, padding)
        if bias is None:
            out = _conv_wino(x, v, weight, padding)
        else:
            out = _conv_wino_bias(x, v, weight, bias, padding)
        return out if batched else out.squeeze(0)
    # the columns are made outside the graph: _conv_cols's derivative goes to the input directly
    cols = _im2col(x.detach() if x.requires_grad else x, kernel, stride, padding, dilation)
    if bias is None:
        out = _conv_cols(x, cols, weight, groups, stride, padding, dilation)
    else:
        out = _conv_cols_bias(x, cols, weight, bias, groups, stride, padding, dilation)
    return out if batched else out.squeeze(0)


def _conv_cl(x, weight, bias, stride, padding, dilation, groups, nd, kernel):
    # the winograd or im2col path (the 1x1 shortcut's gradient would reach x through views, not
    # through a vjp that knows x's layout); same GEMMs on the same columns: the same values
    if nd == 2 and groups > 1 and _use_depthwise(x, weight, groups):
        return _conv_dw_call(x, weight, bias, stride, padding, dilation)
    if nd == 2 and _use_winograd(x, weight, stride, padding, dilation, groups):
        v = _wino_input(x.detach() if x.requires_grad else x, padding)
        if bias is None:
            return _conv_wino(x, v, weight, padding)
        return _conv_wino_bias(x, v, weight, bias, padding)
    cols = _im2col(x.detach() if x.requires_grad else x, kernel, stride, padding, dilation)
    if bias is None:
        return _conv_cols(x, cols, weight, groups, stride, padding, dilation)
    return _conv_cols_bias(x, cols, weight, bias, groups, stride, padding, dilation)


def _conv_fn(nd):
    return (conv1d, conv2d, conv3d)[nd - 1]


@_autocast_entry
@overloaded("conv1d", _CONV_SIGS, _conv_args_parse)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-D convolution over input (N, C, L) or (C, L) with weight (O, C/groups, k)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@_autocast_entry
@overloaded("conv2d", _CONV_SIGS, _conv_args_parse)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-D convolution over input (N, C, H, W) or (C, H, W) with weight (O, C/groups, kh, kw)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


@_autocast_entry
@overloaded("conv3d", _CONV_SIGS, _conv_args_parse)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-D convolution over input (N, C, D, H, W) or (C, D, H, W)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


# ---------------------------------------------------------------------- transposed
def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd):
    fname = f"conv_transpose{nd}d"
    if isinstance(input, Tensor) and isinstance(weight, Tensor) and _any_named(input, weight, bias):
        return _named_call(
            _convt_fn(nd),
            input,
            weight,
            bias,
            True,
            fname,
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        )
    stride, dilation = _check_common(
        input, weight, bias, stride, padding, dilation, groups, nd, fname
    )
    if isinstance(padding, str):
        raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
    padding = _tuple(padding, nd, "padding", fname)
    output_padding = _tuple(output_padding, nd, "output_padding", fname)
    _check_signs(padding, stride, dilation, output_padding)
    if weight.dim() != nd + 2:
        raise _rank_error(input, weight)
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    _check_groups_weight(weight, groups)
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {weight.shape[0]} channels, but got {x.shape[1]} channels "
            "instead"
        )
    cout = weight.shape[1] * groups
    _check_bias(weight, bias, cout, transposed=True)
    kernel = weight._data.shape[2:]
    out_sp = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + op + 1
        for n, s, p, d, k, op in zip(x.shape[2:], stride, padding, dilation, kernel, output_padding)
    )
    if (
        input.dtype != weight.dtype
        or (bias is not None and bias.dtype != input.dtype)
        or 0 in kernel
        or 0 in dilation
        or min(out_sp) <= 0
        or any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation))
        or x.dtype.name in _NARROW_INTS
    ):
        _backend_errors(
            x, input, weight, bias, groups, nd, stride, padding, dilation, out_sp, output_padding
        )
    if x.dtype.name == "bfloat16" and onednn_bf16():
        return _convt_f32(x, weight, bias, out_sp, groups, stride, padding, dilation, batched)
    out = _conv_input_grad(_channels_first(x), weight, out_sp, groups, stride, padding, dilation)
    if bias is not None:
        if bias.dtype != out.dtype:  # torch casts a transposed conv's bias to the input's dtype
            bias = bias.to(out.dtype)
        # one node in torch (the bias is added inside its kernel)
        out = out + bias.reshape((cout,) + (1,) * nd)
    if not batched:
        return as_torch_node(out, "ConvolutionBackward0").squeeze(0)
    # one node in torch: the bias add and the channels-last copy happen inside its kernel
    out = _layout.follow_format(out, _layout.cl_format(x, weight))
    return as_torch_node(out, "ConvolutionBackward0")


def _convt_f32(x, weight, bias, out_sp, groups, stride, padding, dilation, batched):
    """A bfloat16 transposed convolution as oneDNN runs it: products, overlapping sums and bias
    all in float32, rounded once (ember's col2im would round each partial sum)."""
    out = _conv_input_grad(
        _channels_first(x.float()), weight.float(), out_sp, groups, stride, padding, dilation
    )
    if bias is not None:
        out = out + bias.float().reshape((out.shape[1],) + (1,) * len(out_sp))
    out = out.to(x.dtype)
    if not batched:
        return as_torch_node(out, "ConvolutionBackward0").squeeze(0)
    out = _layout.follow_format(out, _layout.cl_format(x, weight))
    return as_torch_node(out, "ConvolutionBackward0")


def _convt_fn(nd):
    return (conv_transpose1d, conv_transpose2d, conv_transpose3d)[nd - 1]


@_autocast_entry
@keyword_numbering
def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
) -> Tensor:
    """1-D transposed convolution ("deconvolution"); weight (C_in, C_out/groups, k)."""
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 1
    )


@_autocast_entry
@keyword_numbering
def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
) -> Tensor:
    """2-D transposed convolution; weight (C_in, C_out/groups, kh, kw)."""
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 2
    )


@_autocast_entry
@keyword_numbering
def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
) -> Tensor:
    """3-D transposed convolution; weight (C_in, C_out/groups, kd, kh, kw)."""
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 3
    )


def convolution(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
) -> Tensor:
    """torch.convolution: the N-d (transposed) convolution, N from the weight's rank."""
    nd = weight.dim() - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D to 5-D weight, got {weight.dim()}-D")
    if transposed:
        return _conv_transpose(
            input, weight, bias, stride, padding, output_padding, groups, dilation, nd
        )
    return _conv(input, weight, bias, stride, padding, dilation, groups, nd)


# ---------------------------------------------------------------------- unfold / fold
# the kernels under unfold and fold, and their int-list arguments in signature order (from 2)
_BLOCK_OPS = {
    "unfold": ("im2col", ("kernel_size", "dilation", "padding", "stride")),
    "fold": ("col2im", ("output_size", "kernel_size", "dilation", "padding", "stride")),
}


def _block_input(input, kernel: str) -> None:
    # torch's parser meets the input first, before any size argument
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{kernel}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )


def _pair(v, what, fname):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v, v)
    items = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    for i, x in enumerate(items):  # torch's argument parser: ints only (int() would truncate)
        if isinstance(x, bool) or not hasattr(x, "__index__"):
            kernel, args = _BLOCK_OPS[fname]
            tn = type(x).__name__
            if i:
                raise TypeError(
                    f"{kernel}(): argument '{what}' failed to unpack the object at pos {i + 1} "
                    f'with error "type must be tuple of ints,but got {tn}"'
                )
            raise TypeError(
                f"{kernel}(): argument '{what}' (position {args.index(what) + 2}) must be tuple "
                f"of ints, but found element of type {tn} at pos 0"
            )
    t = tuple(int(x) for x in items)
    if len(t) != 2:
        raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(t)}")
    return t


def _batch_unnamed(input, batched_dim: int):
    """(names, the input unnamed with a batch dim, whether it had one) for unfold/fold."""
    names = input._names
    x = input.rename(None) if names is not None else input
    batched = x.dim() == batched_dim
    return names, (x if batched else x.unsqueeze(0)), batched


def _batch_renamed(out, names, batched: bool):
    """unfold/fold's result (its kernel already dropped an added batch dim): the batch dim
    given back its name."""
    if batched and names is not None and names[0] is not None:
        out = out.rename(names[0], *(None,) * (out.dim() - 1))
    return out


def _int_kernel_check(x, kernel: str) -> None:
    """torch's im2col/col2im cpu kernels take floating, complex and bool tensors, no integers."""
    if x.dtype.is_floating_point or x.dtype.is_complex or x.dtype.name == "bool":
        return
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(x.dtype)}'")


_BLOCK_CHECKS = {
    "kernel": ("kernel size should be greater than zero", "kernel", 1),
    "dilation": ("dilation should be greater than zero", "dilation", 1),
    "padding": ("padding should be non-negative", "pad", 0),
    "stride": ("stride should be greater than zero", "stride", 1),
}


def _block_checks(**pairs) -> None:
    """im2col/col2im's argument checks, in the order given (each function has its own), before
    any check of the input."""
    for what, (h, w) in pairs.items():
        msg, label, least = _BLOCK_CHECKS[what]
        if h < least or w < least:
            raise RuntimeError(f"{msg}, but got {label}_height: {h} {label}_width: {w}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding local blocks: (N, C, H, W) -> (N, C*kh*kw, L) (im2col)."""
    _block_input(input, "im2col")
    k = _pair(kernel_size, "kernel_size", "unfold")
    d = _pair(dilation, "dilation", "unfold")
    p = _pair(padding, "padding", "unfold")
    s = _pair(stride, "stride", "unfold")
    _block_checks(kernel=k, dilation=d, padding=p, stride=s)
    if input.dim() < 3:
        normalize_dim(input, input.dim())  # torch's im2col reads dim ndim first: IndexError
    if input.dim() not in (3, 4) or 0 in input._data.shape[-3:]:  # only the batch may be empty
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {list(input.shape)}"
        )
    names, x, batched = _batch_unnamed(input, 4)
    osp = tuple(conv_out_size(n, *a) for n, *a in zip(x.shape[2:], k, s, p, d))
    if any(o < 1 for o in osp):
        raise RuntimeError(
            f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size={k}, "
            f"dilation={d}, padding={p}, calculated shape of the array of sliding blocks as "
            f"{osp}, but its components must be at least one."
        )
    _int_kernel_check(x, "im2col_out_cpu")
    out = _unfold_layout(_im2col(x, k, s, p, d), not batched)
    return _batch_renamed(out, names, batched)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combines sliding local blocks (N, C*kh*kw, L) into (N, C, *output_size) (col2im)."""
    _block_input(input, "col2im")
    o = _pair(output_size, "output_size", "fold")
    k = _pair(kernel_size, "kernel_size", "fold")
    d = _pair(dilation, "dilation", "fold")
    p = _pair(padding, "padding", "fold")
    s = _pair(stride, "stride", "fold")
    _block_checks(kernel=k, stride=s, dilation=d, padding=p)
    if input.dim() not in (2, 3) or 0 in input._data.shape[-2:]:  # only the batch may be empty
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    names, x, batched = _batch_unnamed(input, 3)
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={x.shape[1]} and kernel_size={k}."
        )
    osp = tuple(conv_out_size(n, *a) for n, *a in zip(o, k, s, p, d))
    if osp[0] * osp[1] != x.shape[2]:
        raise RuntimeError(
            f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
            "expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {osp[0]} * {osp[1]} = {osp[0] * osp[1]}, but got input.size(2)={x.shape[2]}."
        )
    if min(osp) < 1:  # (two negative counts can match the blocks' count)
        raise RuntimeError(
            f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
            f"calculated shape of the array of sliding blocks as {osp}, which is too small "
            "(non-positive)"
        )
    if min(o) < 1:
        raise RuntimeError(
            f"Expected output spatial size to be positive, but got: output_size={o}."
        )
    _int_kernel_check(x, "col2im_out_cpu")
    n, c = x.shape[0], x.shape[1] // kk
    cols = x.transpose(0, 1).reshape((c, *k, n, *osp))
    out = _col2im(cols, o, s, p, d, not batched)
    return _batch_renamed(out, names, batched)


backward_names(
    dict.fromkeys(
        [
            "_conv_cols",
            "_conv_cols_bias",
            "_conv_mm",
            "_conv_mm_bias",
            "_conv_wino",
            "_conv_wino_bias",
            "_conv_dw",
            "_conv_dw_bias",
            "_conv_input_grad",
        ],
        "ConvolutionBackward0",
    )
)
backward_names({"_col2im": "Col2ImBackward0", "_unfold_layout": "Im2ColBackward0"})
