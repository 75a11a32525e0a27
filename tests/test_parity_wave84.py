"""Pooling, resampling, unpooling and padding calls with several faults at once, checked against
torch on this machine: the first error (type and text) follows torch's order (its argument
parser over every option, its Python wrapper, then its kernel's checks, the dtype last and
skipped where no kernel runs), and the unusual calls torch lets through give its results and
gradients."""

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _x(m, shape, dtype="float32"):
    """A deterministic tensor (values 0, 1, 2, ... cycling through 7) of ``dtype``."""
    a = (np.arange(int(np.prod(shape))) % 7).reshape(shape)
    if dtype == "bool":
        a = a > 3
    return m.tensor(a).to(getattr(m, dtype))


def _idx(m, shape, hi, dtype="int64"):
    a = (np.arange(int(np.prod(shape))) * 5 % hi).reshape(shape)
    return m.tensor(a).to(getattr(m, dtype))


def _run(m, call):
    try:
        out = call(m, m.nn.functional)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__, str(e).replace("ember.", "torch.")
    outs = out if isinstance(out, tuple) else (out,)
    return "ok", [
        (
            str(o.dtype).split(".")[-1],
            tuple(o.shape),
            np.asarray((o if o.dtype.is_complex else o.to(m.float64)).numpy()),
        )
        for o in outs
    ]


_ERRORS = {
    # grid_sample: torch's shape checks (batch, grid's last dim, ...) first, then the kernel's
    # dtype dispatch, then the grid's dtype; an empty 2-d output never reaches the dtypes
    "grid_batch_before_dtypes": lambda m, F: F.grid_sample(
        _x(m, (2, 1, 4, 3), "int8"), _x(m, (3, 3, 3, 2), "float64"), align_corners=False
    ),
    "grid_batch_before_rank": lambda m, F: F.grid_sample(
        _x(m, (3, 5, 3, 5)), _x(m, (2, 1, 1, 1, 1)), align_corners=False
    ),
    "grid_dispatch_before_grid_dtype": lambda m, F: F.grid_sample(
        _x(m, (1, 2, 4, 4), "int32"), _x(m, (1, 3, 3, 2), "float64"), align_corners=False
    ),
    "grid_3d_dispatch_before_empty": lambda m, F: F.grid_sample(
        _x(m, (1, 2, 4, 4, 4), "complex64"), _x(m, (1, 0, 3, 3, 3), "float64"), align_corners=False
    ),
    "grid_bicubic_5d_after_shapes": lambda m, F: F.grid_sample(
        _x(m, (2, 3, 4, 4, 4)), _x(m, (2, 3, 3, 3, 3), "float64"), "bicubic", align_corners=False
    ),
    "affine_grid_half_unit_axis": lambda m, F: F.affine_grid(
        _x(m, (2, 2, 3), "bfloat16"), [1, 2, 1, 3], align_corners=False
    ),
    # pad: the mode between the parser and the length's parity; the length before the value
    "pad_mode_before_parity": lambda m, F: F.pad(_x(m, (1, 1, 7, 7)), (2, 1, -1), mode="bogus"),
    "pad_length_before_value": lambda m, F: F.pad(
        _x(m, (2, 3, 8)), (1, 5, 0, 2, -2, 2, 1, 2), mode="reflect", value=2
    ),
    "pad_unbatched_empty_channels": lambda m, F: F.pad(
        _x(m, (0, 2, 5)), (0, 1, 1, 3), mode="replicate"
    ),
    "pad_circular_wrap_before_negative": lambda m, F: F.pad(
        _x(m, (1, 3, 0), "int64"), (-2, 1), mode="circular"
    ),
    # interpolate: the sizes before the dtype; no half-precision antialiasing; 'area' is
    # adaptive average pooling (a mean when pooling to one value)
    "interp_sizes_before_dtype": lambda m, F: F.interpolate(
        _x(m, (1, 2, 7, 4), "complex64"), size=0, mode="bicubic"
    ),
    "interp_antialias_half": lambda m, F: F.interpolate(
        _x(m, (1, 1, 8, 8), "float16"), scale_factor=0.5, mode="bicubic", antialias=True
    ),
    "interp_area_mean_of_ints": lambda m, F: F.interpolate(
        _x(m, (2, 2, 4), "int32"), size=(1,), mode="area"
    ),
    # adaptive pooling: Python's list check, the parser, the sizes' count, rank, negatives, dtype
    "amax_none_before_dtype": lambda m, F: F.adaptive_max_pool2d(_x(m, (3, 3, 5), "int32"), None),
    "amax_python_length": lambda m, F: F.adaptive_max_pool2d(_x(m, (8, 3), "int64"), (-1, 2)),
    "amax_count_before_dtype": lambda m, F: F.adaptive_max_pool3d(
        _x(m, (1, 3, 8, 4, 7), "int64"), (3, -1)
    ),
    "amax_negative_before_dtype": lambda m, F: F.adaptive_max_pool2d(
        _x(m, (0, 2, 4, 4), "int32"), (None, -1)
    ),
    "aavg1d_parser_before_rank": lambda m, F: F.adaptive_avg_pool1d(_x(m, (2, 2, 3, 7)), None),
    "aavg_mean_of_bool": lambda m, F: F.adaptive_avg_pool2d(_x(m, (3, 4), "bool"), 1),
    "aavg_negative_before_rank": lambda m, F: F.adaptive_avg_pool2d(_x(m, (5, 8), "int8"), -1),
    "max2d_rank_before_values": lambda m, F: F.max_pool2d(
        _x(m, (2, 2, 1, 5, 8), "bool"), 3, (0, 1), 0, ceil_mode=True
    ),
    "max3d_with_indices_parser_name": lambda m, F: F.max_pool3d(
        _x(m, (1, 3, 7, 4, 4)), -1, (None, 3, 2), return_indices=True
    ),
    "max3d_parser_before_lengths": lambda m, F: F.max_pool3d(
        _x(m, (1, 2, 3, 3, 7), "bool"), (2, 2), (2, None, 1), dilation=2
    ),
    "max1d_parser_before_input": lambda m, F: F.max_pool1d(_x(m, (2, 2, 1, 4)), (3,), (None,)),
    "max2d_parser_right_to_left": lambda m, F: F.max_pool2d(
        _x(m, (2, 2, 4, 8)), (1, None), (1, None), 0, (1, 1.5), return_indices=True
    ),
    "avg2d_divisor_type_first": lambda m, F: F.avg_pool2d(
        _x(m, (1, 7, 7), "float64"), 0, 3, 0, False, False, divisor_override=2.5
    ),
    "avg2d_divisor_before_values": lambda m, F: F.avg_pool2d(
        _x(m, (3, 3, 8), "bool"), 3, None, -1, True, False, 0
    ),
    "avg3d_rank_before_divisor": lambda m, F: F.avg_pool3d(
        _x(m, (2, 2, 4, 8, 3, 3)), 1, 0, 0, False, True, 0
    ),
    "avg2d_plane_dim_before_values": lambda m, F: F.avg_pool2d(_x(m, (8, 4)), 3, (2, 0)),
    "lp2d_plane_dim_before_values": lambda m, F: F.lp_pool2d(_x(m, (8, 4)), 3, 3, (2, 0), True),
    "lp3d_rank_before_kernel": lambda m, F: F.lp_pool3d(_x(m, (4, 5, 5), "int32"), 3, 0, 2),
    "lp1d_parser_before_lengths": lambda m, F: F.lp_pool1d(
        _x(m, (0, 1, 4), "float64"), 1, (3, 2, 0), (None,), True
    ),
    # fractional max pooling: torch draws samples in the input's dtype; its kernel checks the
    # lengths, the input, the windows, then the samples (dims, dtype, batch, channels, count)
    "frac_int_samples_drawn": lambda m, F: F.fractional_max_pool2d(
        _x(m, (2, 3, 8, 8), "int64"), (2, 2, 2, 1), output_size=2
    ),
    "frac_lengths_before_windows": lambda m, F: F.fractional_max_pool2d(
        _x(m, (1, 3, 7, 7)), (3,), output_size=1, _random_samples=_x(m, (3, 3, 2))
    ),
    "frac_batch_before_count": lambda m, F: F.fractional_max_pool2d(
        _x(m, (2, 2, 4, 7)), 1, output_size=2, _random_samples=_x(m, (1, 2, 1))
    ),
    "frac2d_float_ratio": lambda m, F: F.fractional_max_pool2d(
        _x(m, (0, 1, 4, 7)), (2, 2, 2, 2), output_ratio=1.0
    ),
    # max unpooling: torch's Python sizes (IndexError past a short stride, negative sizes),
    # then its kernel (indices dtype, rank and count, indices shape, empties, strides, dtype)
    "unpool2d_short_stride": lambda m, F: F.max_unpool2d(
        _x(m, (1, 7, 4)), _idx(m, (1, 7, 4), 4, "int32"), (2, 0), (1,)
    ),
    "unpool2d_negative_size": lambda m, F: F.max_unpool2d(
        _x(m, (1, 3, 2, 3), "int8"), _idx(m, (1, 3, 2, 3), 9), 0, padding=(0, 1)
    ),
    "unpool3d_strides": lambda m, F: F.max_unpool3d(
        _x(m, (1, 1, 8, 4, 5), "float16"), _idx(m, (1, 1, 8, 4, 5), 4), 3, (2, 0, 1)
    ),
    "unpool3d_indices_dtype_first": lambda m, F: F.max_unpool3d(
        _x(m, (2, 2, 3, 2, 8, 3), "int32"), _idx(m, (2, 2, 3, 2, 8, 3), 20, "int32"), 1, 1
    ),
    "unpool3d_padding_count": lambda m, F: F.max_unpool3d(
        _x(m, (2, 3, 7, 3, 7), "float64"), _idx(m, (2, 3, 7, 3, 7), 4), 2, (1, 1, 2), (0, 1, 0, 0)
    ),
    "unpool1d_empty_input": lambda m, F: F.max_unpool1d(
        _x(m, (2, 3, 0)), _idx(m, (2, 3, 0), 20), 3, 2
    ),
    "unpool2d_count": lambda m, F: F.max_unpool2d(
        _x(m, (2, 2, 7, 4), "bool"), _idx(m, (2, 2, 7, 4), 20), (3,)
    ),
    # fold: the blocks' count first (two negative sizes can match it), then their signs
    "fold_blocks_too_small": lambda m, F: F.fold(_x(m, (2, 18, 4), "int32"), 0, 3, 2, 0, 2),
    "fold_output_size_positive": lambda m, F: F.fold(_x(m, (2, 9, 1)), (-1, -1), 1, padding=1),
    "fold_empty_output": lambda m, F: F.fold(_x(m, (0, 1, 1), "float16"), (0, 0), 1, 1, 1, 2),
}

_RESULTS = {
    "grid_empty_grid_any_dtype": lambda m, F: F.grid_sample(
        _x(m, (1, 2, 3, 5), "complex64"), _x(m, (1, 0, 0, 2), "float64"), align_corners=False
    ),
    "grid_empty_batch_uint8": lambda m, F: F.grid_sample(
        _x(m, (0, 2, 8, 3), "uint8"), _x(m, (0, 3, 3, 2), "uint8"), "nearest", align_corners=True
    ),
    "interp_area_empty_uint8": lambda m, F: F.interpolate(
        _x(m, (0, 1, 5), "uint8"), scale_factor=0.5, mode="area"
    ),
    "interp_area_empty_int64": lambda m, F: F.interpolate(
        _x(m, (0, 1, 7, 7), "int64"), scale_factor=1.5, mode="area"
    ),
    "aavg1d_empty_bool": lambda m, F: F.adaptive_avg_pool1d(_x(m, (0, 2, 3), "bool"), (2,)),
    "aavg2d_empty_output_int8": lambda m, F: F.adaptive_avg_pool2d(_x(m, (1, 2, 4, 7), "int8"), 0),
    "aavg2d_mean_empty_batch": lambda m, F: F.adaptive_avg_pool2d(
        _x(m, (0, 1, 8, 8), "complex64"), 1
    ),
    "aavg3d_mean_rank6": lambda m, F: F.adaptive_avg_pool3d(_x(m, (2, 2, 1, 4, 4, 8)), 1),
    "aavg2d_mean_rank2": lambda m, F: F.adaptive_avg_pool2d(_x(m, (3, 4)), 1),
    "frac3d_long_ratio": lambda m, F: F.fractional_max_pool3d(
        _x(m, (1, 1, 7, 3, 5)),
        1,
        output_ratio=(0.5, 0.5, 0.7, 1.5),
        return_indices=True,
        _random_samples=_x(m, (1, 1, 3)) / 7,
    ),
    "frac_empty_batch": lambda m, F: F.fractional_max_pool2d(
        _x(m, (0, 3, 4, 7)), 1, output_size=3, return_indices=True
    ),
    "frac_empty_output_int": lambda m, F: F.fractional_max_pool3d(
        _x(m, (2, 1, 4, 4, 4), "int32"),
        2,
        output_size=(0, 1, 1),
        _random_samples=_x(m, (2, 1, 3), "int32"),
    ),
    "unpool2d_empty_batch_int": lambda m, F: F.max_unpool2d(
        _x(m, (0, 2, 8, 3), "int32"), _idx(m, (0, 2, 8, 3), 20), (3, 1), (1, 2)
    ),
    "unpool1d_empty_output": lambda m, F: F.max_unpool1d(
        _x(m, (3, 7), "bfloat16"), _idx(m, (3, 7), 200), 0
    ),
    "unpool2d_empty_output_complex": lambda m, F: F.max_unpool1d(
        _x(m, (2, 2, 8), "complex64"), _idx(m, (2, 2, 8), 20), 0
    ),
}


@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_first_error_is_torchs(case):
    got, want = _run(ember, _ERRORS[case]), _run(torch, _ERRORS[case])
    assert want[0] != "ok"
    assert got == want


@pytest.mark.parametrize("case", sorted(_RESULTS))
def test_unusual_calls_give_torchs_result(case):
    got, want = _run(ember, _RESULTS[case]), _run(torch, _RESULTS[case])
    assert want[0] == "ok", want
    assert got[0] == "ok", got
    assert [(d, s) for d, s, _ in got[1]] == [(d, s) for d, s, _ in want[1]]
    for (_, _, a), (_, _, b) in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_fractional_zero_kernel_is_refused():
    # torch pools a zero-sized window to -inf and reports indices past the plane: refused here
    x = _x(ember, (1, 1, 4, 4))
    s = ember.full((1, 1, 2), 0.5)
    with pytest.raises(RuntimeError, match="kernel_size must be greater than zero"):
        ember.nn.functional.fractional_max_pool2d(x, (0, 2), output_size=2, _random_samples=s)


_GRADS = {
    "aavg2d_mean_rank2": (lambda m, F, t: F.adaptive_avg_pool2d(t, 1), (5, 5)),
    "aavg3d_mean_rank6": (lambda m, F, t: F.adaptive_avg_pool3d(t, 1), (2, 1, 2, 3, 3, 3)),
    "area_empty_batch": (
        lambda m, F, t: F.interpolate(t, scale_factor=0.5, mode="area"),
        (0, 2, 6, 6),
    ),
    "grid_empty_grid": (
        lambda m, F, t: F.grid_sample(t, m.zeros(1, 0, 3, 2, dtype=m.float64), align_corners=False),
        (1, 2, 4, 4),
    ),
    "avg_ceil_window_in_padding_divisor": (
        lambda m, F, t: F.avg_pool2d(t, 3, 2, 1, True, False, -3),
        (1, 2, 6, 7),
    ),
    "max_ceil_window_in_padding": (
        lambda m, F, t: F.max_pool2d(t, 2, 3, 1, 2, ceil_mode=True),
        (1, 2, 7, 6),
    ),
    "circular_crop_and_wrap": (
        lambda m, F, t: F.pad(t, (-1, 2, 2, -1), mode="circular"),
        (1, 2, 4, 5),
    ),
}


@pytest.mark.parametrize("case", sorted(_GRADS))
def test_gradients_match_torch(case):
    fn, shape = _GRADS[case]
    rng = np.random.RandomState(0)
    x = rng.standard_normal(shape)
    res = []
    for m in (torch, ember):
        t = m.tensor(x, dtype=m.float64, requires_grad=True)
        y = fn(m, m.nn.functional, t)
        g = np.random.RandomState(1).standard_normal(tuple(y.shape))  # non-uniform upstream
        y.backward(m.tensor(g, dtype=m.float64))
        res.append((np.asarray(y.detach().numpy()), np.asarray(t.grad.numpy())))
    for a, b in zip(res[1], res[0]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 2, 3, 3)])
def test_gradcheck_mean_pooling_of_any_rank(shape):
    # adaptive average pooling to one value per plane is a mean over the last dims of any rank
    x = ember.randn(*shape, dtype=ember.float64, generator=ember.Generator().manual_seed(0))
    x.requires_grad_(True)
    assert ember.autograd.gradcheck(lambda t: ember.nn.functional.adaptive_avg_pool2d(t, 1), (x,))
