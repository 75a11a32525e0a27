"""Vision functionals (torch.nn.functional): pad, interpolate/upsample, grid_sample, affine_grid,
pixel_shuffle/unshuffle and channel_shuffle.

The kernels live in core/ops/padding.py (padding) and core/ops/vision.py (resampling, shuffles);
these are torch's F signatures and argument checks over them. Every one keeps the input's dim
names (spec 4.3: padding and upsampling keep all names; the shuffles keep each dim's role).
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings

import numpy as np

from ..core import layout as _layout
from ..core.autocast import entry as _autocast_entry
from ..core.device import array_module
from ..core.dtype import scalar_name
from ..core.names import as_op_error, keep
from ..core.ops import padding as _padding
from ..core.ops import pooling as _pool
from ..core.ops import vision as _vision
from ..core.registry import op
from ..core.tensor import Tensor, _wrap

__all__ = [
    "affine_grid",
    "channel_shuffle",
    "grid_sample",
    "interpolate",
    "native_channel_shuffle",
    "pad",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

pixel_shuffle = _vision.pixel_shuffle
pixel_unshuffle = _vision.pixel_unshuffle
channel_shuffle = _vision.channel_shuffle
native_channel_shuffle = _vision.channel_shuffle


@_autocast_entry
def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pads the last ``len(pad) // 2`` dims of ``input`` (negative amounts crop).

    ``pad`` is ``(left, right, top, bottom, front, back)`` from the last dim backwards; ``mode``
    is 'constant' (with ``value``), 'reflect', 'replicate' or 'circular'.
    """
    return _padding.pad(input, pad, mode, value)


# ---------------------------------------------------------------------- interpolate
_KERNEL_MODE = {
    "nearest": "nearest",
    "nearest-exact": "nearest-exact",
    "linear": "linear",
    "bilinear": "linear",
    "trilinear": "linear",
    "bicubic": "cubic",
    "area": "area",
    "lanczos": "lanczos",
}
_NEEDS_DIM = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5, "lanczos": 4}
_MODES_MSG = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_AXES = ("D", "H", "W")


def _is_int(x) -> bool:
    if type(x) is int:
        return True
    return isinstance(x, numbers.Integral) or (
        isinstance(x, Tensor) and x.ndim == 0 and not x.dtype.is_floating_point
    )


def _sizes_msg(in_sp, out_sp) -> str:
    names = _AXES[3 - len(in_sp) :]
    i = ", ".join(f"{n}: {s}" for n, s in zip(names, in_sp))
    o = ", ".join(f"{n}: {s}" for n, s in zip(names, out_sp))
    sep = " and output" if len(in_sp) == 1 else " output"
    return f"Input and output sizes should be greater than 0, but got input ({i}){sep} ({o})"


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resamples the spatial dims of an (N, C, *spatial) tensor to ``size`` or by
    ``scale_factor``, with torch's index and weight formulas for every ``mode``."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    in_sp = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {in_sp} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format."
                )
            if not all(_is_int(s) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    "Tuple[int, int, int], but got size with types "
                    f"{[type(s) for s in size]}"
                )
            out_size = [int(s) for s in size]
        else:
            if not _is_int(size) or isinstance(size, bool):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(size)] * max(dim, 1)}"
                )
            out_size = [int(size)] * dim
    elif scale_factor is not None:
        out_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {in_sp} and scale_factor of shape "
                    f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and scale_factor in (s1, s2, ...,sK) format."
                )
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        out_size = [math.floor(float(n) * s) for n, s in zip(in_sp, scales)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if mode == "lanczos" and align_corners:
        raise ValueError("Lanczos mode does not support align_corners=True")
    if mode == "lanczos" and not antialias:
        raise ValueError("Lanczos mode requires antialias=True")
    need = _NEEDS_DIM.get(mode)
    if (
        mode not in _KERNEL_MODE
        or input.ndim not in (3, 4, 5)
        or (mode in ("bicubic", "lanczos") and input.ndim != 4)
    ):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: {_MODES_MSG} (got {mode})"
        )
    if need is not None and input.ndim != need:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {need}D input")
    if out_size is None:
        out_size = [int(float(n) * s) for n, s in zip(in_sp, scales)]
    kmode = _KERNEL_MODE[mode]
    if kmode == "area":  # adaptive average pooling: its checks
        _pool._adaptive_avg_checks(dim, tuple(input.shape), input._data.dtype, out_size)
    else:  # the sizes, then the dtype
        if any(n <= 0 for n in in_sp) or any(s <= 0 for s in out_size):
            raise RuntimeError(_sizes_msg(in_sp, out_size))
        if input.numel() == 0 and input.shape[0] != 0:
            raise RuntimeError(
                f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
                f"{list(input.shape)}"
            )
        _check_dtype(input, kmode, dim, bool(antialias))
    if input.dtype.name == "uint8" and kmode in _U8_SUPPORT:
        return _resample_u8(input, out_size, scales, kmode, align_corners, antialias)
    wdt = "float64" if input.dtype.name == "float64" else "float32"  # torch's opmath type
    kind = _backward_name(mode, dim, antialias, out_size)

    def plan_of(scs):
        return tuple(
            _vision.axis_plan(
                kmode,
                n,
                o,
                None if scs is None else scs[j],
                bool(align_corners),
                bool(antialias),
                wdt,
            )
            for j, (n, o) in enumerate(zip(in_sp, out_size))
        )

    if scales is not None and kmode in ("linear", "cubic", "lanczos"):
        # a dim whose size is unchanged: torch's linear kernels copy it whatever the scale,
        # forward and backward; antialiased ones copy it forward but resample with 1/scale
        # backward; plain bicubic's backward copies only when no size changes
        same = [None if n == o else sc for n, o, sc in zip(in_sp, out_size, scales)]
        if same != scales:
            if antialias:
                return _resample_asym(input, plan_of(same), plan_of(scales), kind)
            if kmode != "cubic":
                scales = same
            elif in_sp == out_size:
                return _resample_asym(input, plan_of(scales), plan_of(same), kind)
    plans = plan_of(scales)
    if (
        kmode == "nearest"
        and dim != 2
        and scales is not None
        and any(o in (n, 2 * n) for n, o in zip(in_sp, out_size))
    ):
        return _nearest_scaled(input, plans, in_sp, out_size, scales, kind)
    out = _vision._resample(input, plans, 2, kind)  # uint8 nearest is a gather
    if kmode == "area" and dim == 3:
        # torch's 'area' is adaptive average pooling, whose 3-d kernel has no channels_last_3d
        # version: its result is contiguous
        out = out.contiguous()
    return out


def _backward_name(mode: str, dim: int, antialias: bool, out_size) -> str:
    """The grad_fn name of torch's kernel for ``mode`` on ``dim`` spatial dims: 'area' is
    adaptive average pooling (1-d through a 2-d pool and a squeeze, a mean to 1x1), the others
    upsample_*."""
    if mode == "area":
        if dim == 1:
            return "SqueezeBackward1"
        if all(o == 1 for o in out_size):
            return "MeanBackward1"
        return f"AdaptiveAvgPool{dim}DBackward0"
    base = "".join(w.capitalize() for w in mode.split("-"))
    return f"Upsample{base}{dim}D{'Aa' if antialias else ''}Backward0"


def _nearest_scaled(input, plans, in_sp, out_size, scales, kind):
    """1-d and 3-d 'nearest' with a scale_factor that keeps or doubles a size: torch's forward
    indexes with floor(o / scale) (float32) there, but its backward keeps the copy (o) or
    halved (o >> 1) index of ``plans``."""
    fwd = list(plans)
    for j, (n, o) in enumerate(zip(in_sp, out_size)):
        if o in (n, 2 * n):
            s = np.float32(1.0 / scales[j]) if scales[j] > 0 else np.float32(n / o)
            i = np.minimum((np.arange(o, dtype=np.float32) * s).astype(np.int64), n - 1)
            fwd[j] = _vision._AxisPlan(i[:, None], np.ones((o, 1)), n)
    return _resample_asym(input, tuple(fwd), plans, kind)


@op(names=keep, method=False)
def _resample_asym(xp, input, plans=(), grad_plans=(), kind=""):
    """Resampling by ``plans`` whose gradient is the adjoint of ``grad_plans`` instead
    (``kind``: the grad_fn name, as for ``_resample``)."""
    x = input
    low = x.dtype.itemsize < 4 and x.dtype.kind in "fV"  # half computes in float32 (opmath)
    if low:
        x = x.astype(xp.float32)
    x = _vision.apply_plans(xp, x, plans, 2)
    if low:
        x = x.astype(input.dtype)
    elif x is input:
        x = input.copy()
    # channels_last(_3d) in, channels_last(_3d) out, as torch's upsample kernels
    return _layout.follow_array(xp, x, input)


@_resample_asym.vjp
def _(grad, grad_plans, kind):  # kind: saved for the node's name only
    return _vision._resample(grad, tuple(p.T for p in grad_plans), 2)


_resample_asym.op.name_rule = lambda node: node.saved_arg("kind") or "ResampleBackward0"


def _check_dtype(input: Tensor, kmode: str, dim: int, antialias: bool) -> None:
    """torch's refusal of the dtypes its cpu resampling kernels lack (all but floating point
    and uint8; half precision antialiased), naming the kernel that refused: that of the
    index/weight setup or the channels-last 2-d nearest/bilinear kernels ('area': pooling's)."""
    d = input.dtype
    if d.is_floating_point and not (antialias and d.itemsize == 2):
        return  # (torch's antialiased weights have no half-precision kernel)
    if d.name == "uint8" and kmode != "area" and (kmode != "linear" or dim == 2):
        return  # uint8 kernels: nearest of any rank, bilinear/bicubic (antialiased too)
    if antialias:
        what = "compute_index_ranges_weights"
    elif dim == 2 and kmode != "cubic":
        what = f"upsample_{'bilinear' if kmode == 'linear' else 'nearest'}2d_channels_last"
    else:
        what = "compute_indices_weights_" + ("nearest" if kmode.startswith("nearest") else kmode)
    raise NotImplementedError(f"\"{what}\" not implemented for '{scalar_name(d)}'")


def _filter_linear(x):
    return np.maximum(1.0 - np.abs(x), 0.0)


def _filter_cubic_aa(x):
    a, x = -0.5, np.abs(x)
    return np.where(
        x < 1.0,
        ((a + 2.0) * x - (a + 3.0)) * x * x + 1,
        np.where(x < 2.0, (((x - 5) * x + 8) * x - 4) * a, 0.0),
    )


def _filter_lanczos(x):
    return np.where(np.abs(x) < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)


_U8_SUPPORT = {"linear": 1.0, "cubic": 2.0, "lanczos": 3.0}
_U8_FILTER = {"linear": _filter_linear, "cubic": _filter_cubic_aa, "lanczos": _filter_lanczos}


def _u8_cubic(n_in, n_out, s, align_corners):
    """Plain bicubic (a = -0.75) taps i0 - 1 .. i0 + 2, those outside the image folded onto
    the border pixel (torch's _compute_indices_min_size_weights_bicubic)."""
    o = np.arange(n_out)
    src = s * o if align_corners else s * (o + 0.5) - 0.5
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    a = -0.75

    def c1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def c2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    taps = np.stack([c2(t + 1), c1(t), c1(1 - t), c2(2 - t)], 1)
    dense = np.zeros((n_out, n_in))
    np.add.at(dense, (o[:, None], np.clip(i0[:, None] + np.arange(-1, 3), 0, n_in - 1)), taps)
    lo = np.clip(i0 - 1, 0, max(n_in - 4, 0))
    idx = np.minimum(lo[:, None] + np.arange(min(4, n_in)), n_in - 1)
    return idx, np.take_along_axis(dense, idx, 1)


@functools.lru_cache(maxsize=256)
def _u8_taps(kmode, n_in, n_out, scale, align_corners, antialias):
    """torch's uint8 taps for one dim (compute_index_ranges_int16_weights): the filter's
    weights in double, then scaled to int16 with the most precision bits that keep the
    largest weight in range. Returns (idx, weights, bits)."""
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    if kmode == "cubic" and not antialias:
        idx, w = _u8_cubic(n_in, n_out, s, align_corners)
    else:
        stretch = antialias and s >= 1.0
        support = _U8_SUPPORT[kmode] * (s if stretch else 1.0)
        d = 0.5 if align_corners and not antialias else 0.0
        c = s * (np.arange(n_out) + 0.5 - d)
        lo = np.maximum((c - support + 0.5 + d).astype(np.int64), 0)  # C casts truncate
        hi = np.minimum((c + support + 0.5 + d).astype(np.int64), n_in)
        idx = lo[:, None] + np.arange(max(int((hi - lo).max()), 1))
        filt = _U8_FILTER[kmode]
        w = filt(((idx - c[:, None]) + 0.5 - d) * (1.0 / s if stretch else 1.0))
        w = np.where(idx < hi[:, None], w, 0.0)
        total = np.cumsum(w, axis=1)[:, -1:]  # torch sums in order
        w = np.where(total != 0, w / np.where(total != 0, total, 1.0), w)
        idx = np.minimum(idx, n_in - 1)
    mx = w.max()
    bits = 0
    while bits < 22 and int(0.5 + mx * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    v = w * (1 << bits)
    return idx, np.trunc(np.where(v < 0, v - 0.5, v + 0.5)).astype(np.int32), bits


def _resample_u8(input: Tensor, out_size, scales, kmode, align_corners, antialias) -> Tensor:
    """uint8 bilinear, bicubic and lanczos the way torch computes them: int16 fixed-point
    weights, width then height, each pass rounded (half up) and clamped to uint8; a dim whose
    size is unchanged is skipped."""
    x = input._data
    xp = array_module(x)
    for ax in (3, 2):
        n_in, n_out = x.shape[ax], out_size[ax - 2]
        if n_in == n_out:
            continue
        sc = None if scales is None else scales[ax - 2]
        idx, wq, bits = _u8_taps(kmode, n_in, n_out, sc, bool(align_corners), bool(antialias))
        bshape = (-1, 1) if ax == 2 else (-1,)
        acc = xp.full((), 1 << (bits - 1) if bits else 0, dtype=xp.int32)
        for k in range(idx.shape[1]):
            t = xp.take(x, xp.asarray(idx[:, k]), axis=ax).astype(xp.int32)
            t *= xp.asarray(wq[:, k]).reshape(bshape)
            acc = acc + t
        x = xp.clip(acc >> bits, 0, 255).astype(xp.uint8)
    if x is input._data:
        x = x.copy()
    return _wrap(x, input._names)


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=3,
    )


def upsample(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of interpolate (warns, like torch)."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: interpolate(..., mode='nearest') (warns, like torch)."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True) (warns, like torch)."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------------- grid_sample, affine_grid
_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)
_GS_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GS_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


@_autocast_entry
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Samples ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalized coordinates of
    ``grid`` (N, H', W', 2) or (N, D', H', W', 3); differentiable in input and grid."""
    if mode not in _GS_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _GS_PADDING:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=3)  # 3: past the autocast entry
        align_corners = False
    try:
        return _vision.grid_sampler(
            input, grid, _GS_MODES[mode], _GS_PADDING[padding_mode], bool(align_corners)
        )
    except RuntimeError as e:  # a name clash is grid_sample's (spec 4.10), not the kernel op's
        raise as_op_error(e, "grid_sample", ("grid_sampler",), input, grid) from None


@_autocast_entry
def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the batch of affine matrices
    ``theta`` (N, 2, 3) or (N, 3, 4) for an output of ``size`` (N, C, H, W) or (N, C, D, H, W)."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=3)  # 3: past the autocast entry
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, tuple(size)  # the messages print the size as given (a list, a Size)
    shp = tuple(theta.shape)
    if len(size) == 4:
        if theta.dim() != 3 or shp[-2] != 2 or shp[-1] != 3:
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{given}. Got {theta.shape}."
            )
    elif len(size) == 5:
        if theta.dim() != 3 or shp[-2] != 3 or shp[-1] != 4:
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{given}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {given}."
        )
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    return _vision.affine_grid_generator(theta, size, bool(align_corners))
