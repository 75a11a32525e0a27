"""Parity regressions found by the thirty-second wave, a module-by-module sweep of the
convolution, pooling, upsampling and embedding layers (Conv/ConvTranspose 1-3d with every padding
mode and geometry, the Lazy variants, Max/Avg/LP/Adaptive/Fractional pooling and MaxUnpool,
Upsample and F.interpolate, Pixel/ChannelShuffle, Fold/Unfold, Embedding and EmbeddingBag; torch
is the oracle, weights copied from torch's module, float32 and float64, batched and unbatched):

- convolutions: an empty kernel made an output of zeros where torch refuses it; a zero or
  negative dilation's message, and a transposed convolution's too-small output (the backend's
  words: oneDNN, or the native kernels that show 1-d as 2-d); numpy-integer and integer-tensor
  stride/padding/dilation (ember refused them);
- pooling: MaxUnpool's invalid-index message (torch reports the last bad index), LPPool with
  ``norm_type=-inf`` (ember returned ones) and LPPool1d's sequence kernel (torch's TypeError),
  the 3-d pools' zero-length message, MaxPool2d(2)'s fast path (an input without channels, float
  or bool sizes equal to 2 and 1, numpy integers it compared into an ambiguous array), float
  sizes that ember truncated (pool kernels and strides, MaxUnpool's output size, Fractional and
  adaptive output sizes, Fold/Unfold: torch's argument-parser TypeErrors), the average pools'
  names in their argument errors, FractionalMaxPool's ``None`` in output_size, its samples'
  dtype and its integer/bool/complex inputs, and adaptive pooling's backward of an empty output;
- NaN and infinities: adaptive average pooling and the resampling GEMMs of F.interpolate spread
  one over the whole plane or row (0 * inf is NaN), antialiasing's padding taps read pixels
  outside the window and its window ends were rounded in float64, and torch's linear kernels
  copy a dim whose size is unchanged;
- Unfold/Fold: an empty non-batch dimension, a non-Tensor input;
- shuffles: a 0-d integer tensor factor (torch takes it);
- EmbeddingBag: a 2-D input with per_sample_weights (ember failed inside index_add), empty
  offsets, include_last_offset with no offsets, 2-D rows of length 0, float offsets, non-float
  weights, per_sample_weights of another dtype, mode='max' with scale_grad_by_freq, the
  per_sample_weights shape message, the renormalisation torch does before refusing
  per_sample_weights, max bags with nothing gathered (ember's output left the graph), the old
  (weight, input) argument order, ``_fill_padding_idx_with_zero``; and the backend type names
  (CPUBFloat16Type, CPUComplexFloatType, CPUUInt16Type) in the embedding index checks."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from harness import same_error
from nn_harness import A, check_module

torch = pytest.importorskip("torch")


def _zeros(m, shape, dtype="float32"):
    return m.zeros(shape, dtype=getattr(m, dtype))


# ------------------------------------------------------------ convolution: empty kernels, dilation
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("groups", [1, 2])
def test_conv_empty_kernel_and_zero_dilation(nd, batch, dtype, groups):
    x = (batch, 4) + (5,) * nd
    empty = (4, 4 // groups) + (3,) * (nd - 1) + (0,)
    full = (4, 4 // groups) + (3,) * nd

    def conv(m, w, **kw):
        F = m.nn.functional
        return getattr(F, f"conv{nd}d")(
            _zeros(m, x, dtype), _zeros(m, w, dtype), groups=groups, **kw
        )

    def convt(m, w, **kw):
        F = m.nn.functional
        fn = getattr(F, f"conv_transpose{nd}d")
        return fn(_zeros(m, x, dtype), _zeros(m, w, dtype), groups=groups, **kw)

    same_error(lambda m: conv(m, empty), RuntimeError)
    same_error(lambda m: convt(m, empty), RuntimeError)
    same_error(lambda m: conv(m, full, dilation=0), RuntimeError)
    same_error(lambda m: conv(m, full, dilation=(0,) * (nd - 1) + (-1,)), RuntimeError)
    if groups == 1 and not (batch == 2 and dtype == "float32"):  # oneDNN's texts differ per dim
        same_error(lambda m: convt(m, full, dilation=(1,) * (nd - 1) + (0,)), RuntimeError)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_module_empty_kernel(nd):
    # an int kernel_size of 0 built a module whose forward returned a tensor of zeros
    x = (1, 4) + (5,) * nd
    msg = same_error(lambda m: getattr(m.nn, f"Conv{nd}d")(4, 6, 0)(_zeros(m, x)), RuntimeError)
    assert "kernel size should be greater than zero" in msg
    same_error(
        lambda m: getattr(m.nn, f"Conv{nd}d")(4, 6, 3, dilation=0)(_zeros(m, x)), RuntimeError
    )


def test_conv_negative_dilation_message():
    msg = same_error(
        lambda m: m.nn.functional.conv2d(
            _zeros(m, (2, 3, 5, 5)), _zeros(m, (4, 3, 3, 3)), dilation=-1
        ),
        RuntimeError,
    )
    assert msg == "dilation should be greater than zero"


# ------------------------------------------------------------ MaxUnpool: the reported bad index
@pytest.mark.parametrize("nd", [2, 3])
def test_max_unpool_reports_last_invalid_index(nd):
    # one plane (torch's kernel runs a plane on one thread), two different bad indices
    shape = (1, 1) + (5, 7) if nd == 2 else (1, 1, 5, 6, 7)
    arr = np.random.default_rng(0).standard_normal(shape).astype("float32")

    def fn(m):
        pool = getattr(m.nn, f"MaxPool{nd}d")(2, return_indices=True)
        y, i = pool(m.tensor(arr))
        return getattr(m.nn, f"MaxUnpool{nd}d")(2)(y, i)

    msg = same_error(fn, RuntimeError)
    assert msg.startswith("Found an invalid max index")


# ------------------------------------------------------------ LPPool
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("p", [float("-inf"), float("inf")])
def test_lp_pool_infinite_norm(nd, p):
    shape = (2, 3) + (6, 5, 4)[:nd]
    check_module(
        lambda m: getattr(m.nn, f"LPPool{nd}d")(p, 2, stride=1),
        [A(*shape)],
    )


@pytest.mark.parametrize("kernel", [(2,), [2]])
def test_lp_pool1d_sequence_kernel_is_a_type_error(kernel):
    msg = same_error(lambda m: m.nn.LPPool1d(2, kernel)(_zeros(m, (2, 3, 6))), TypeError)
    assert msg.startswith("mul(): argument 'other' (position 1) must be Tensor")
    # the infinite norms take the max-pool path, which takes a sequence
    check_module(lambda m: m.nn.LPPool1d(float("inf"), kernel), [A(2, 3, 6)])


# ------------------------------------------------------------ pooling: empty inputs
@pytest.mark.parametrize(
    "shape", [(1, 2, 0, 0, 0), (1, 2, 3, 0, 3), (1, 2, 3, 3, 0), (2, 0, 3, 3), (2, 3, 0, 3)]
)
@pytest.mark.parametrize("fn", ["max_pool3d", "avg_pool3d"])
def test_pool3d_zero_length_message(shape, fn):
    msg = same_error(lambda m: getattr(m.nn.functional, fn)(_zeros(m, shape), 1), RuntimeError)
    assert msg.endswith("non-batch dimension 0 has length zero!")


@pytest.mark.parametrize("shape", [(1, 0, 6, 6), (0, 6, 6), (3, 0, 4, 4)])
def test_max_pool2x2_without_channels_raises(shape):
    same_error(lambda m: m.nn.MaxPool2d(2)(_zeros(m, shape)), RuntimeError)
    # an empty batch stays fine
    check_module(lambda m: m.nn.MaxPool2d(2), [A(0, 3, 4, 4)])


# ------------------------------------------------------------ fractional max pooling
@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_output_size_none_is_a_type_error(nd):
    cls = f"FractionalMaxPool{nd}d"
    x = (2, 3) + (9, 8, 8)[:nd]
    for osz in [(5, None, 3)[:nd], (None, 3, 3)[:nd]]:
        same_error(
            lambda m, osz=osz: getattr(m.nn, cls)(2, output_size=osz)(_zeros(m, x)), TypeError
        )


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("sdtype", ["float64", "int64", "float16"])
def test_fractional_random_samples_dtype(nd, sdtype):
    x = (2, 3) + (9, 8, 8)[:nd]
    msg = same_error(
        lambda m: getattr(m.nn, f"FractionalMaxPool{nd}d")(
            2, output_size=3, _random_samples=_zeros(m, (2, 3, nd), sdtype)
        )(_zeros(m, x)),
        RuntimeError,
    )
    assert msg == "Expect _random_samples to have the same dtype as input"


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_with_samples_matches(nd, dtype):
    rs = np.random.default_rng(3).uniform(0, 1, (2, 3, nd)).astype(dtype)
    shape = (2, 3) + (9, 8, 7)[:nd]
    check_module(
        lambda m: getattr(m.nn, f"FractionalMaxPool{nd}d")(
            2, output_size=(5, 4, 3)[:nd], _random_samples=m.tensor(rs)
        ),
        [A(*shape)],
        dtypes=(dtype,),
    )


# ------------------------------------------------------------ Fold / Unfold: empty dimensions
@pytest.mark.parametrize(
    "shape", [(0, 4, 5), (1, 0, 4, 5), (1, 2, 0, 5), (1, 2, 4, 0), (2, 0, 5), (0, 0, 4, 5)]
)
def test_unfold_empty_non_batch_dim(shape):
    same_error(lambda m: m.nn.Unfold(2)(_zeros(m, shape)), RuntimeError)


@pytest.mark.parametrize("shape", [(0, 12), (8, 0), (1, 0, 12), (1, 8, 0), (0, 0, 12)])
def test_fold_empty_non_batch_dim(shape):
    same_error(lambda m: m.nn.Fold((4, 5), 2)(_zeros(m, shape)), RuntimeError)


def test_fold_unfold_empty_batch_still_work():
    check_module(lambda m: m.nn.Unfold(2), [A(0, 2, 4, 5)])
    check_module(lambda m: m.nn.Fold((4, 5), 2), [A(0, 8, 12)])


# ------------------------------------------------------------ EmbeddingBag
def _idx(m, v, dtype="int64"):
    return m.tensor(v, dtype=getattr(m, dtype))


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_2d_per_sample_weights(padding_idx):
    rows = [[1, 2, 2], [4, 2, 9], [0, 0, 0]]
    check_module(
        lambda m: m.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=padding_idx),
        [A(3, 3)],
        call=lambda mod, w: mod(
            _idx(torch if isinstance(w, torch.Tensor) else ember, rows), per_sample_weights=w
        ),
    )


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_include_last_offset(mode):
    def call(mod, psw):
        m = torch if isinstance(psw, torch.Tensor) else ember
        return mod(_idx(m, [1, 2, 4, 5, 4, 3, 2, 9]), _idx(m, [0, 2, 2, 5, 8]))

    check_module(
        lambda m: m.nn.EmbeddingBag(10, 3, mode=mode, include_last_offset=True),
        [A(1, grad=False)],
        call=call,
    )


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_empty_offsets(mode):
    def fn(m):
        w = m.tensor(np.arange(30.0, dtype="float32").reshape(10, 3))
        out = m.nn.functional.embedding_bag(_idx(m, [1, 2]), w, _idx(m, []), mode=mode)
        return tuple(out.shape), str(out.dtype).split(".")[-1]

    assert fn(ember) == fn(torch) == ((0, 3), "float32")


@pytest.mark.parametrize(
    "call",
    [
        # include_last_offset needs one offset at least
        lambda m, w: m.nn.functional.embedding_bag(
            _idx(m, [1, 2]), w, _idx(m, []), include_last_offset=True
        ),
        # a 2-D input makes its offsets with arange(0, numel, row length)
        lambda m, w: m.nn.functional.embedding_bag(_idx(m, [[], []]), w),
        # float offsets promote the indices to float
        lambda m, w: m.nn.functional.embedding_bag(_idx(m, [1, 2]), w, _idx(m, [0, 1], "float32")),
        lambda m, w: m.nn.functional.embedding_bag(
            _idx(m, [1, 2], "int32"), w, _idx(m, [0, 1], "float64")
        ),
        # the weight must be floating
        lambda m, w: m.nn.functional.embedding_bag(_idx(m, [1, 2]), w.long(), _idx(m, [0, 1])),
        lambda m, w: m.nn.functional.embedding_bag(
            _idx(m, [1, 2]), w.int(), _idx(m, [0, 1]), mode="max"
        ),
        lambda m, w: m.nn.functional.embedding_bag(_idx(m, [1, 2]), w.bool(), _idx(m, [0, 1])),
        lambda m, w: m.nn.functional.embedding_bag(
            _idx(m, [1, 2]), w.to(m.complex64), _idx(m, [0, 1])
        ),
        # per_sample_weights of the weight's dtype only
        lambda m, w: m.nn.functional.embedding_bag(
            _idx(m, [1, 2]), w, _idx(m, [0, 1]), mode="sum", per_sample_weights=m.ones(2).double()
        ),
        lambda m, w: m.nn.functional.embedding_bag(
            _idx(m, [1, 2]), w.double(), _idx(m, [0, 1]), mode="sum", per_sample_weights=m.ones(2)
        ),
        lambda m, w: m.nn.functional.embedding_bag(
            _idx(m, [[1, 2]]), w, mode="sum", per_sample_weights=m.ones(1, 2).long()
        ),
    ],
)
def test_embedding_bag_argument_errors(call):
    w = np.arange(30.0, dtype="float32").reshape(10, 3)
    same_error(lambda m: call(m, m.tensor(w)), RuntimeError)


def test_embedding_bag_max_mode_refuses_scale_grad_by_freq():
    same_error(
        lambda m: m.nn.EmbeddingBag(10, 3, mode="max", scale_grad_by_freq=True)(
            _idx(m, [1, 2]), _idx(m, [0])
        ),
        ValueError,
    )


def test_embedding_bag_per_sample_weights_shape_message():
    def fn(m):
        return m.nn.EmbeddingBag(10, 3, mode="sum")(_idx(m, [1, 2, 3]), _idx(m, [0]), m.ones(4))

    with pytest.raises(ValueError) as te:
        fn(torch)
    with pytest.raises(ValueError) as ee:
        fn(ember)
    assert str(ee.value) == str(te.value)  # (torch's text: torch.Size, as wave 94 settled)


def test_embedding_bag_renorms_before_refusing_per_sample_weights():
    w0 = (np.arange(30.0, dtype="float32").reshape(10, 3) - 10) / 3

    def fn(m):
        w = m.tensor(w0)
        with pytest.raises(NotImplementedError):
            m.nn.functional.embedding_bag(
                _idx(m, [1, 2, 7]), w, _idx(m, [0]), max_norm=1.0, mode="mean",
                per_sample_weights=m.ones(3),
            )  # fmt: skip
        return w.numpy()

    np.testing.assert_allclose(fn(ember), fn(torch), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "complex64", "uint16", "float16", "bool"])
def test_embedding_index_type_names(dtype):
    msg = same_error(
        lambda m: m.nn.functional.embedding(_idx(m, [1], dtype), m.zeros(3, 2)), RuntimeError
    )
    assert "Long, Int" in msg


# ------------------------------------------------------------ int-list arguments: no floats
_X2 = (1, 2, 6, 6)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.nn.AvgPool1d(2.5)(_zeros(m, (1, 4, 6))),  # the module makes it (2.5,)
        lambda m: m.nn.functional.avg_pool1d(_zeros(m, (1, 4, 6)), (2,), (1.0,)),
        lambda m: m.nn.functional.max_pool1d(_zeros(m, (1, 2, 6)), (2.5,)),
        lambda m: m.nn.functional.max_pool2d(_zeros(m, _X2), (2, 2.5)),
        lambda m: m.nn.functional.avg_pool2d(_zeros(m, _X2), (2, 2.0)),
        lambda m: m.nn.functional.max_pool3d(_zeros(m, (1, 2, 6, 6, 6)), (2, 2, 2.0)),
        lambda m: m.nn.functional.avg_pool3d(_zeros(m, (1, 2, 6, 6, 6)), (2.0, 2, 2)),
        lambda m: m.nn.functional.max_pool2d(_zeros(m, _X2), ("a", 2)),
        # (2, 2.0) == (2, 2): the 2x2 fast path must not take these
        lambda m: m.nn.functional.max_pool2d(_zeros(m, _X2), (2, 2.0)),
        lambda m: m.nn.functional.max_pool2d(_zeros(m, _X2), 2, stride=(2, 2.0)),
        lambda m: m.nn.functional.max_pool2d(_zeros(m, _X2), 2, dilation=(1, 1.0)),
        lambda m: m.nn.functional.max_pool2d(_zeros(m, _X2), 2, dilation=True),
        lambda m: m.nn.functional.max_pool2d(_zeros(m, _X2), 2, padding=False),
        lambda m: m.nn.functional.max_pool2d(_zeros(m, _X2), (True, 2)),
        # a float kernel makes MaxUnpool's default output size float
        lambda m: m.nn.MaxUnpool2d(2.5)(_zeros(m, (1, 1, 2, 2)), _zeros(m, (1, 1, 2, 2), "int64")),
        lambda m: m.nn.FractionalMaxPool2d(2.5, output_size=3)(_zeros(m, _X2)),
        lambda m: m.nn.FractionalMaxPool3d((2, 2, 2.0), output_size=3)(_zeros(m, (1, 2, 6, 6, 6))),
        # adaptive pools: the 1-d ones parse output_size, the others take its len() first
        lambda m: m.nn.AdaptiveAvgPool2d(2.5)(_zeros(m, _X2)),
        lambda m: m.nn.AdaptiveMaxPool2d(2.5)(_zeros(m, _X2)),
        lambda m: m.nn.AdaptiveAvgPool1d(2.5)(_zeros(m, (1, 2, 6))),
        lambda m: m.nn.AdaptiveMaxPool1d((2.0,))(_zeros(m, (1, 2, 6))),
        lambda m: m.nn.AdaptiveAvgPool2d((None, 2.0))(_zeros(m, _X2)),
        lambda m: m.nn.AdaptiveAvgPool2d((2.0,))(_zeros(m, _X2)),
        lambda m: m.nn.AdaptiveAvgPool2d(True)(_zeros(m, _X2)),
        lambda m: m.nn.AdaptiveAvgPool3d("a")(_zeros(m, (1, 2, 6, 6, 6))),
        lambda m: m.nn.AdaptiveMaxPool3d((2, 2.0, 2))(_zeros(m, (1, 2, 6, 6, 6))),
        # fold / unfold: their kernels' (im2col, col2im) argument parser
        lambda m: m.nn.Unfold(2.0)(_zeros(m, (1, 2, 4, 5))),
        lambda m: m.nn.Unfold((2, 2.0))(_zeros(m, (1, 2, 4, 5))),
        lambda m: m.nn.Unfold(2, padding=(0, 1.0))(_zeros(m, (1, 2, 4, 5))),
        lambda m: m.nn.Unfold(True)(_zeros(m, (1, 2, 4, 5))),
        lambda m: m.nn.Fold((4, 5.0), 2)(_zeros(m, (1, 8, 12))),
        lambda m: m.nn.Fold(4.0, 2)(_zeros(m, (1, 8, 12))),
        lambda m: m.nn.Fold((4, 5), 2, stride=1.0)(_zeros(m, (1, 8, 12))),
        lambda m: m.nn.functional.unfold([1, 2], 2.5),
        lambda m: m.nn.functional.fold(None, (4, 5), 2),
        # the average pools' own names
        lambda m: m.nn.functional.avg_pool2d([1, 2], 2),
        lambda m: m.nn.functional.avg_pool3d([1, 2], 2),
    ],
)
def test_int_list_argument_errors(call):
    same_error(call, TypeError)


def test_int_like_sizes_still_work():
    check_module(lambda m: m.nn.MaxPool2d((np.int64(2), 2)), [A(2, 3, 6, 6)])
    check_module(lambda m: m.nn.AdaptiveAvgPool2d((None, np.int64(3))), [A(2, 3, 6, 6)])
    check_module(lambda m: m.nn.Unfold([2, np.int32(3)]), [A(2, 3, 6, 6)])
    check_module(lambda m: m.nn.Fold([4, 5], 2), [A(2, 8, 12)])


# ------------------------------------------------------------ NaN and infinities stay local
def _nan_input(inf: bool = False, dtype: str = "float32") -> np.ndarray:
    a = np.random.default_rng(0).standard_normal((2, 3, 6, 7))
    a[0, 0, 1, 1] = a[1, 0, 0, 0] = a[1, 2, 5, 6] = a[0, 2, 3, 0] = np.nan
    if inf:
        a[0, 1, 2, 3] = a[1, 0, 0, 1] = np.inf
        a[1, 2, 4, 4] = -np.inf
    return a.astype(dtype)


def _same_values(fn, a) -> None:
    t = fn(torch, torch.tensor(a)).numpy()
    e = fn(ember, ember.tensor(a)).numpy()
    assert t.shape == e.shape
    tol = 1e-4 if a.dtype == np.float32 else 1e-7
    np.testing.assert_allclose(e, t, rtol=tol, atol=tol / 10, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("output_size", [3, (4, 5, 2), (None, 3, 1), 10])
def test_adaptive_avg_pool_keeps_nan_and_inf_in_their_windows(dtype, nd, output_size):
    # ember's pooling GEMMs spread a NaN over the whole plane (0 * inf is NaN)
    a = _nan_input(inf=True, dtype=dtype)
    if nd == 1:
        a = a.reshape(2, 3, -1)
    elif nd == 3:
        a = np.repeat(a[..., None], 3, axis=-1)
    osz = output_size if isinstance(output_size, int) else output_size[:nd]
    if nd == 1 and not isinstance(osz, int):
        osz = osz[0] or 4
    _same_values(lambda m, x: getattr(m.nn.functional, f"adaptive_avg_pool{nd}d")(x, osz), a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "mode, kw",
    [
        ("nearest", {}),
        ("nearest-exact", {}),
        ("area", {}),
        ("bilinear", {}),
        ("bilinear", {"align_corners": True}),
        ("bicubic", {}),
        ("bilinear", {"antialias": True}),
        ("bicubic", {"antialias": True}),
        ("bicubic", {"antialias": True, "align_corners": True}),
    ],
)
@pytest.mark.parametrize("size", [(4, 3), (9, 11), (3, 12), (6, 7), (6, 12), (17, 23), (1, 1)])
def test_interpolate_keeps_nan_in_its_taps(dtype, mode, kw, size):
    # the resampling GEMMs spread a NaN along whole rows, antialiasing's padding taps read
    # pixels outside the window, its window ends were rounded in float64 (one tap too many),
    # and the linear kernels' unchanged dims are copies in torch
    _same_values(
        lambda m, x: m.nn.functional.interpolate(x, size=size, mode=mode, **kw),
        _nan_input(dtype=dtype),
    )


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size", [(9, 11), (3, 12), (17, 23), (5, 4)])
def test_interpolate_antialias_window_ends(mode, size):
    # finite values: the window ends in float32 change which taps a window has
    check_module(
        lambda m: m.nn.Upsample(size=size, mode=mode),
        [A(2, 3, 6, 7)],
        call=lambda mod, x: (
            ember.nn.functional.interpolate(x, size=size, mode=mode, antialias=True)
            if isinstance(x, ember.Tensor)
            else torch.nn.functional.interpolate(x, size=size, mode=mode, antialias=True)
        ),
    )


def test_embedding_bag_old_argument_order():
    # torch swaps (weight, input) given in the old order, with a UserWarning
    def fn(m):
        w = m.arange(30.0).reshape(10, 3)
        with pytest.warns(UserWarning, match="Argument order of nn.functional.embedding_bag"):
            return m.nn.functional.embedding_bag(w, m.tensor([1, 2, 3]), m.tensor([0, 1])).numpy()

    np.testing.assert_array_equal(fn(ember), fn(torch))


# ------------------------------------------------------------ int-like arguments torch takes
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.nn.functional.conv2d(
            x, m.ones(4, 3, 3, 3, dtype=x.dtype), stride=np.int64(2)
        ),
        lambda m, x: m.nn.functional.conv2d(
            x, m.ones(4, 3, 3, 3, dtype=x.dtype), stride=m.tensor(2)
        ),
        lambda m, x: m.nn.functional.conv2d(
            x, m.ones(4, 3, 3, 3, dtype=x.dtype), padding=np.int64(1)
        ),
        lambda m, x: m.nn.functional.conv2d(
            x, m.ones(4, 3, 3, 3, dtype=x.dtype), dilation=np.int32(2)
        ),
        lambda m, x: m.nn.functional.conv_transpose2d(
            x, m.ones(3, 4, 3, 3, dtype=x.dtype), stride=np.int64(2), output_padding=np.int64(1)
        ),
        # a numpy integer compared with the 2x2 fast path's tuples made an ambiguous array
        lambda m, x: m.nn.functional.max_pool2d(x, np.int64(2), np.int64(1)),
        lambda m, x: m.nn.functional.max_pool2d(x, np.int64(2)),
        lambda m, x: m.nn.functional.max_pool2d(x, 2, padding=np.int64(0)),
        lambda m, x: m.nn.functional.pixel_shuffle(m.cat([x, x[:, :1]], 1), m.tensor(2)),
        lambda m, x: m.nn.functional.pixel_unshuffle(x, m.tensor(2)),
        lambda m, x: m.nn.functional.channel_shuffle(x, m.tensor(3)),
    ],
)
def test_int_like_arguments(call):
    a = np.random.default_rng(1).standard_normal((2, 3, 6, 6))
    for dtype in ("float32", "float64"):
        x = a.astype(dtype)
        xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
        t, e = call(torch, xt), call(ember, xe)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
        g = np.random.default_rng(2).uniform(0.5, 1.5, tuple(t.shape)).astype(dtype)
        t.backward(torch.tensor(g))
        e.backward(ember.tensor(g))
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("factor", [2.0, [2], True])
def test_shuffle_factor_rejects_non_int_tensors(factor):
    same_error(
        lambda m: m.nn.functional.pixel_shuffle(_zeros(m, (1, 8, 3, 3)), m.tensor(factor)),
        TypeError,
    )


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", ["int64", "bool", "complex64"])
@pytest.mark.parametrize("given", [False, True])
def test_fractional_max_pool_dtypes(nd, dtype, given):
    # ember pooled integers and bools given as samples, and failed in numpy on complex input
    x = (1, 2) + (6,) * nd

    def fn(m):
        samples = _zeros(m, (1, 2, nd), dtype) if given else None
        pool = getattr(m.nn, f"FractionalMaxPool{nd}d")(2, output_size=3, _random_samples=samples)
        return pool(_zeros(m, x, dtype))

    same_error(fn, (RuntimeError, NotImplementedError))


def test_embedding_bag_fill_padding_idx_with_zero():
    def fn(m):
        bag = m.nn.EmbeddingBag(5, 2, padding_idx=-2)
        with m.no_grad():
            bag.weight.fill_(1.0)
        bag._fill_padding_idx_with_zero()
        return bag.weight.detach().numpy()

    np.testing.assert_array_equal(fn(ember), fn(torch))


@pytest.mark.parametrize(
    "shape", [(1, 4), (1, 1, 4), (1, 1, 3), (2, 1, 3), (2, 1, 3, 3), (1, 1, 3, 3), (2, 1, 3, 3, 3)]
)
def test_conv_transpose_output_too_small(shape):
    # the native kernels show a 1-d convolution as 2-d; oneDNN has its own words
    nd = {2: 1, 3: 1, 4: 2, 5: 3}[len(shape)]
    pad = 2 if shape[-1] == 4 else 3
    same_error(
        lambda m: getattr(m.nn.functional, f"conv_transpose{nd}d")(
            _zeros(m, shape), _zeros(m, (1, 1) + (1,) * nd), padding=pad
        ),
        RuntimeError,
    )


# ------------------------------------------------------------ empty outputs' gradients
@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("case", ["zero-size", "unbatched", "empty batch"])
def test_adaptive_pool_backward_of_an_empty_output(kind, nd, case):
    # ember failed in numpy (reshape) or returned zeros where torch refuses the gradient
    shape, osz = {
        "zero-size": ((2, 3) + (4,) * nd, (0,) + (2,) * (nd - 1)),
        "unbatched": ((3,) + (4,) * nd, (2,) * (nd - 1) + (0,)),
        "empty batch": ((0, 3) + (4,) * nd, (2,) * nd),
    }[case]
    osz = osz[0] if nd == 1 else osz

    def fn(m):
        x = m.ones(shape, requires_grad=True)
        getattr(m.nn.functional, f"adaptive_{kind}_pool{nd}d")(x, osz).sum().backward()
        return tuple(x.grad.shape)

    if case == "empty batch":
        assert fn(ember) == fn(torch) == shape
    else:
        same_error(fn, RuntimeError)


@pytest.mark.parametrize(
    "shape, scale", [((2, 3, 1), 0.651), ((2, 3, 8, 1), (1.897, 0.62)), ((2, 3, 9, 1, 4), 0.403)]
)
def test_area_interpolation_backward_of_an_empty_output(shape, scale):
    def fn(m):
        x = m.ones(shape, requires_grad=True)
        m.nn.functional.interpolate(x, scale_factor=scale, mode="area").sum().backward()

    same_error(fn, RuntimeError)


@pytest.mark.parametrize("indices, padding_idx", [([], None), ([2, 2], 2)])
def test_embedding_bag_max_of_empty_bags_is_in_the_graph(indices, padding_idx):
    # nothing gathered (no indices, or padding only): ember's output left the weight's graph
    def call(mod, w):
        m = torch if isinstance(w, torch.Tensor) else ember
        return mod(m.tensor(indices, dtype=m.int64), m.tensor([0, 0]))

    check_module(
        lambda m: m.nn.EmbeddingBag(10, 3, mode="max", padding_idx=padding_idx),
        [A(1, grad=False)],
        call=call,
    )
