"""Fake quantization: quantize then dequantize in float, on dense tensors (torch's QAT ops).

Pointwise and differentiable: the gradient is straight-through where the quantized value
``zero_point + round_half_even(x / scale)`` lies in ``[quant_min, quant_max]``, and 0 outside (the
mask is decided on the rounded value, as torch does). Arithmetic follows torch's CPU kernels:
both round ``x * (1/scale)`` in the input's precision (float32 for half types) with ``1/scale``
in float32; the per-tensor op dequantizes in float32, the per-channel op in the input's precision.
"""

from __future__ import annotations

import numpy as np

from ..names import keep
from ..registry import op
from ..tensor import Tensor, _wrap

__all__: list = []

_RANGE = "`quant_min` should be less than or         equal to `quant_max`."
_ZP_RANGE = "`zero_point` must be between `quant_min` and `quant_max`."


def _float_only(kernel: str, a) -> None:
    if a.dtype.kind != "f" and a.dtype.kind != "V":
        from ..dtype import _FROM_NP, SCALAR_NAMES

        name = SCALAR_NAMES[_FROM_NP[a.dtype].name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _missing(*vals) -> None:
    if any(v is None for v in vals):
        raise TypeError(
            "fake_quantize_per_tensor_affine() received an invalid combination of arguments: "
            "expected (Tensor input, float scale, int zero_point, int quant_min, int quant_max) "
            "or (Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max)"
        )


def _per_tensor_params(scale, zero_point, quant_min, quant_max):
    """(scale, zero_point) as numbers, with torch's checks of both overloads."""
    _missing(scale, zero_point, quant_min, quant_max)
    if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
        if not (isinstance(scale, Tensor) and isinstance(zero_point, Tensor)):
            raise TypeError(
                "fake_quantize_per_tensor_affine(): 'scale' and 'zero_point' must both be "
                "Tensors or both be numbers"
            )
        if scale.requires_grad or zero_point.requires_grad:
            which = "scale" if scale.requires_grad else "zero_point"
            raise RuntimeError(
                "The function '_fake_quantize_per_tensor_affine_cachemask_tensor_qparams' is not "
                f"differentiable with respect to argument '{which}'. This input cannot have "
                "requires_grad True."
            )
        s, z = float(scale.item()), int(float(zero_point.item()))
        if quant_min > quant_max:
            raise RuntimeError(_RANGE)
        return s, z
    if isinstance(zero_point, float) or not isinstance(zero_point, (int, np.integer)):
        raise TypeError(
            "fake_quantize_per_tensor_affine(): argument 'zero_point' must be int, not "
            f"{type(zero_point).__name__}"
        )
    if quant_min > quant_max:
        raise RuntimeError(_RANGE)
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError(_ZP_RANGE)
    return float(scale), int(zero_point)


def _per_tensor(xp, x, scale, zero_point, quant_min, quant_max):
    """(fake-quantized values in x's dtype, in-range mask)."""
    s = np.float32(scale)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = np.float32(1.0) / s
        # the product in the input's precision (float32 for half types); the result in float32
        ct = np.float64 if x.dtype == np.float64 else np.float32
        q = xp.rint(x.astype(ct, copy=False) * ct(inv)) + ct(zero_point)
        mask = (q >= quant_min) & (q <= quant_max)
        out = (xp.clip(q, quant_min, quant_max) - ct(zero_point)).astype(np.float32) * s
    return out.astype(x.dtype, copy=False), mask


@op(names=keep, method=False)
def fake_quantize_per_tensor_affine(
    xp, input, scale=None, zero_point=None, quant_min=None, quant_max=None
):
    """Quantize ``input`` with ``scale``/``zero_point`` (numbers, or one-element tensors) clamped
    to ``[quant_min, quant_max]``, then dequantize: same dtype as ``input``."""
    _float_only("fake_quantize_tensor_cachemask_kernel_type_handling", input)
    s, z = _per_tensor_params(scale, zero_point, quant_min, quant_max)
    return _per_tensor(xp, input, s, z, quant_min, quant_max)[0]


@fake_quantize_per_tensor_affine.vjp
def _(grad, input, scale, zero_point, quant_min, quant_max):
    from ..device import array_module

    a = input._data
    s, z = _per_tensor_params(scale, zero_point, quant_min, quant_max)
    mask = _per_tensor(array_module(a), a, s, z, quant_min, quant_max)[1]
    return grad * _wrap(mask.astype(a.dtype))


def _per_channel_params(input_shape, scale, zero_point, axis, quant_min, quant_max):
    """Checks of fake_quantize_per_channel_affine, in torch's order; returns the positive axis."""
    for name, pos, v in (("scale", 2, scale), ("zero_point", 3, zero_point)):
        if not isinstance(v, Tensor):
            raise TypeError(
                f"fake_quantize_per_channel_affine(): argument '{name}' (position {pos}) must be "
                f"Tensor, not {type(v).__name__}"
            )
    if scale.dtype.name not in ("float32", "bfloat16"):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {scale.dtype.scalar_type}")
    if zero_point.dtype.name not in ("int32", "float32", "float16"):
        raise RuntimeError(
            f"Zero-point must be Int32, Float or Half, found {zero_point.dtype.scalar_type}"
        )
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    n = len(input_shape)
    if n == 0:
        raise IndexError(f"Dimension specified as {axis} but tensor has no dimensions")
    if not -n <= axis < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {axis})"
        )
    if scale.numel() != input_shape[axis]:
        raise RuntimeError(
            "dimensions of scale and zero-point are not consistent with input tensor"
        )
    if quant_min > quant_max:
        raise RuntimeError(_RANGE)
    z = zero_point.detach()._data
    if z.size and (z.min() < quant_min or z.max() > quant_max):
        raise RuntimeError(_ZP_RANGE)
    if not 0 <= axis < n:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    return axis


def _per_channel(xp, x, scale, zero_point, axis, quant_min, quant_max):
    shape = [1] * x.ndim
    shape[axis] = -1
    ct = np.float64 if x.dtype == np.float64 else np.float32  # compute type
    s32 = scale.detach()._data.astype(np.float32).reshape(shape)
    z = zero_point.detach()._data.reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = (np.float32(1.0) / s32).astype(ct)
        xs = x.astype(ct, copy=False) * inv
        if z.dtype.kind == "f":  # a float zero point is added before rounding
            zf = z.astype(ct)
            q = xp.rint(xs + zf)
        else:
            zf = z.astype(ct)
            q = xp.rint(xs) + zf
        mask = (q >= quant_min) & (q <= quant_max)
        out = (xp.clip(q, quant_min, quant_max) - zf) * s32.astype(ct)
    return out.astype(x.dtype, copy=False), mask


@op(names=keep, method=False)
def fake_quantize_per_channel_affine(
    xp, input, scale=None, zero_point=None, axis=None, quant_min=None, quant_max=None
):
    """Fake quantization with one ``scale``/``zero_point`` (1-d tensors) per slice of ``input``
    along ``axis``: same dtype as ``input``."""
    if scale is None or zero_point is None or axis is None or quant_min is None:
        raise TypeError(
            "fake_quantize_per_channel_affine() missing required arguments: expected (Tensor "
            "input, Tensor scale, Tensor zero_point, int axis, int quant_min, int quant_max)"
        )
    if quant_max is None:
        raise TypeError("fake_quantize_per_channel_affine() missing required argument 'quant_max'")
    axis = _per_channel_params(input.shape, scale, zero_point, axis, quant_min, quant_max)
    _float_only("fake_quantize_channel_cachemask_cpu_type_handling", input)
    return _per_channel(xp, input, scale, zero_point, axis, quant_min, quant_max)[0]


@fake_quantize_per_channel_affine.vjp
def _(grad, input, scale, zero_point, axis, quant_min, quant_max):
    from ..device import array_module

    a = input._data
    mask = _per_channel(array_module(a), a, scale, zero_point, axis % a.ndim, quant_min, quant_max)[
        1
    ]
    return grad * _wrap(mask.astype(a.dtype))
