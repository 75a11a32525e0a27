"""Resampling and shuffles: F.interpolate (every mode, align_corners, size / scale_factor,
recompute_scale_factor, antialias), the deprecated upsample functions, F.grid_sample,
F.affine_grid, pixel_shuffle / pixel_unshuffle / channel_shuffle, their modules, and the
data-parallel wrappers. Parity with torch (values, dtypes, gradients), float64 gradcheck and
gradgradcheck, torch's errors and warnings, names, and dispatch on a strict device backend."""

import itertools
import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, raises_like_torch, run_case, run_gradcheck
from nn_harness import check_module

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None


def _interp(**kw):
    def fn(m, x):
        return m.nn.functional.interpolate(x, **kw)

    return fn


SHAPES = {3: (2, 3, 7), 4: (2, 2, 5, 7), 5: (1, 2, 3, 5, 4)}
MODES = {
    3: ["nearest", "nearest-exact", "linear", "area"],
    4: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
    5: ["nearest", "nearest-exact", "trilinear", "area"],
}
# odd sizes and non-integer scale factors, up and down
SPECS = [
    {"size": 3},
    {"size": 11},
    {"scale_factor": 2},
    {"scale_factor": 0.5},
    {"scale_factor": 1.7},
    {"scale_factor": 0.37},
    {"scale_factor": 2.3, "recompute_scale_factor": True},
    {"size": 1},
]


def _interp_cases():
    cases = []
    for nd, modes in MODES.items():
        for mode in modes:
            for spec in SPECS:
                acs = (
                    [None]
                    if mode in ("nearest", "nearest-exact", "area", "lanczos")
                    else [False, True]
                )
                for ac in acs:
                    kw = dict(spec, mode=mode)
                    if ac is not None:
                        kw["align_corners"] = ac
                    name = f"{nd}d-{mode}-" + "-".join(f"{k}={v}" for k, v in spec.items())
                    name += "" if ac is None else f"-ac={ac}"
                    cases.append(Case(name, _interp(**kw), [A(*SHAPES[nd])]))
    cases.append(Case("2d-tuple-size", _interp(size=(3, 9), mode="bilinear"), [A(2, 2, 5, 7)]))
    cases.append(
        Case("2d-tuple-scale", _interp(scale_factor=(0.6, 2.5), mode="bicubic"), [A(1, 2, 5, 7)])
    )
    cases.append(
        Case("3d-tuple-scale", _interp(scale_factor=(2, 0.5, 1.5), mode="nearest"),
             [A(1, 2, 3, 4, 5)])
    )  # fmt: skip
    for mode in ("bilinear", "bicubic"):
        for spec in [{"size": (3, 4)}, {"scale_factor": 0.4}, {"size": (11, 13)}]:
            for ac in (False, True):
                cases.append(
                    Case(
                        f"aa-{mode}-{spec}-ac={ac}",
                        _interp(mode=mode, antialias=True, align_corners=ac, **spec),
                        [A(2, 2, 9, 10)],
                    )
                )
    cases.append(Case("lanczos", _interp(size=(4, 13), mode="lanczos", antialias=True),
                      [A(1, 2, 9, 10)]))  # fmt: skip
    cases.append(Case("f64-bicubic", _interp(size=(7, 4), mode="bicubic"),
                      [A(1, 2, 5, 7, dtype="float64")]))  # fmt: skip
    cases.append(Case("f64-area", _interp(size=(3, 4), mode="area"),
                      [A(1, 2, 5, 7, dtype="float64")]))  # fmt: skip
    return cases


INTERP = _interp_cases()


@needs_torch
@pytest.mark.parametrize("case", INTERP, ids=str)
def test_interpolate_parity(case):
    run_case(case)


@needs_torch
@pytest.mark.parametrize("n_in", [1, 3, 5, 13, 17])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear", "area"])
def test_interpolate_odd_sizes(n_in, mode):
    # every (n_in, n_out) pair picks exactly torch's source indices
    for n_out in (1, 2, 4, 9, 31):
        run_case(Case(f"{n_in}->{n_out}", _interp(size=n_out, mode=mode), [A(1, 2, n_in)]))


GRAD_INTERP = [
    Case("nearest", _interp(size=(3, 7), mode="nearest"), [A(1, 2, 4, 5)]),
    Case("nearest-exact", _interp(scale_factor=1.5, mode="nearest-exact"), [A(1, 2, 4, 3)]),
    Case("linear", _interp(size=7, mode="linear"), [A(2, 2, 4)]),
    Case("bilinear", _interp(size=(3, 7), mode="bilinear"), [A(1, 2, 4, 5)]),
    Case("bilinear-ac", _interp(size=(5, 3), mode="bilinear", align_corners=True),
         [A(1, 1, 4, 5)]),
    Case("bicubic", _interp(size=(3, 7), mode="bicubic"), [A(1, 2, 4, 5)]),
    Case("trilinear", _interp(scale_factor=1.5, mode="trilinear"), [A(1, 1, 2, 3, 4)]),
    Case("area", _interp(size=(3, 2), mode="area"), [A(1, 2, 5, 4)]),
    Case("aa-bilinear", _interp(size=(2, 3), mode="bilinear", antialias=True), [A(1, 1, 5, 7)]),
    Case("aa-bicubic", _interp(size=(2, 9), mode="bicubic", antialias=True), [A(1, 1, 5, 7)]),
]  # fmt: skip


@pytest.mark.parametrize("case", GRAD_INTERP, ids=str)
def test_interpolate_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


# the (mode, antialias, align_corners) combinations torch accepts for uint8 input
UINT8_CASES = [
    (mode, antialias, align_corners)
    for mode in ["nearest", "nearest-exact", "bilinear", "bicubic", "lanczos"]
    for antialias in [False, True]
    for align_corners in [None, True]
    if not (antialias != (mode == "lanczos") and mode in ("nearest", "nearest-exact", "lanczos"))
    and not (align_corners and (antialias or mode in ("nearest", "nearest-exact")))
]


@needs_torch
@pytest.mark.parametrize("mode,antialias,align_corners", UINT8_CASES)
def test_interpolate_uint8(mode, antialias, align_corners):
    """Exact: torch resamples uint8 in int16 fixed point, a pass per dim, rounding half up."""
    r = np.random.default_rng(0)
    for C, shape, size in [(3, (5, 7), (8, 4)), (1, (4, 4), (6, 6)), (5, (9, 6), (3, 13)),
                           (2, (7, 9), (7, 4)), (4, (6, 8), (2, 8)), (3, (8, 9), (3, 2))]:  # fmt: skip
        a = r.integers(0, 256, (2, C) + shape).astype(np.uint8)
        kw = {"size": size, "mode": mode, "antialias": antialias, "align_corners": align_corners}
        e = ember.nn.functional.interpolate(ember.tensor(a), **kw)
        t = torch.nn.functional.interpolate(torch.tensor(a), **kw)
        assert e.dtype == ember.uint8
        np.testing.assert_array_equal(e.numpy(), t.numpy(), err_msg=f"{C} {shape}->{size}")
    # a scale_factor that leaves one dim's size unchanged: that dim is copied
    a = r.integers(0, 256, (1, 3, 4, 5)).astype(np.uint8)
    if mode != "lanczos":
        kw = {"scale_factor": (1.2, 1.5), "mode": mode, "align_corners": align_corners}
        e = ember.nn.functional.interpolate(ember.tensor(a), antialias=antialias, **kw)
        t = torch.nn.functional.interpolate(torch.tensor(a), antialias=antialias, **kw)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


SCALE_MODES = {
    1: ["nearest", "nearest-exact", "linear", "area"],
    2: ["nearest", "nearest-exact", "bilinear", "bicubic", "lanczos", "area"],
    3: ["nearest", "nearest-exact", "trilinear", "area"],
}


@needs_torch
@pytest.mark.parametrize("d", [1, 2, 3])
def test_interpolate_scale_factor_sweep(d):
    """scale_factor given: torch indexes with 1/scale, except where a dim's size does not change
    (4 * 1.2 -> 4) or doubles: values and gradients both (torch's backward does not always
    mirror its forward there)."""
    scales = [(1.2,) * d, (2.1,) * d, (1.1, 2.0, 0.7)[:d], (0.7, 1.25, 1.2)[:d]]
    for mode in SCALE_MODES[d]:
        acs = [None] if mode in ("nearest", "nearest-exact", "area", "lanczos") else [False, True]
        aas = {"bilinear": [False, True], "bicubic": [False, True], "lanczos": [True]}.get(
            mode, [False]
        )
        for n, sc, ac, rsf, aa in itertools.product(
            (3, 4, 9), scales, acs, (None, False, True), aas
        ):
            kw = {
                "scale_factor": sc,
                "mode": mode,
                "align_corners": ac,
                "recompute_scale_factor": rsf,
            }
            run_case(
                Case(
                    f"{mode} {n} {sc} {ac} {rsf} {aa}",
                    _interp(antialias=aa, **kw),
                    [A(1, 2, *(n,) * d)],
                )
            )


@needs_torch
def test_interpolate_float16():
    run_case(Case("half", _interp(size=(3, 9), mode="bilinear"), [A(1, 2, 5, 7, dtype="float16")],
                  atol=1e-2, rtol=1e-2))  # fmt: skip


def _f(m):
    return m.nn.functional


X4 = lambda m: m.zeros(1, 2, 5, 7)
INTERP_ERRORS = [
    ("both", lambda m: _f(m).interpolate(X4(m), size=3, scale_factor=2), ValueError,
     "only one of size or scale_factor should be defined"),
    ("neither", lambda m: _f(m).interpolate(X4(m)), ValueError,
     "either size or scale_factor should be defined"),
    ("size_len", lambda m: _f(m).interpolate(X4(m), size=(3, 4, 5)), ValueError,
     ("Input and output must have the same number of spatial dimensions, but got input with "
     "spatial dimensions of [5, 7] and output size of (3, 4, 5). Please provide input tensor in "
     "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")),
    ("scale_len", lambda m: _f(m).interpolate(X4(m), scale_factor=[2]), ValueError,
     ("Input and scale_factor must have the same number of spatial dimensions, but got input "
     "with spatial dimensions of [5, 7] and scale_factor of shape [2]. Please provide input "
     "tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")),
    ("recompute_size", lambda m: _f(m).interpolate(X4(m), size=3, recompute_scale_factor=True),
     ValueError, "recompute_scale_factor is not meaningful with an explicit size."),
    ("align_nearest", lambda m: _f(m).interpolate(X4(m), size=3, align_corners=True),
     ValueError, ("align_corners option can only be set with the interpolating modes: linear | "
     "bilinear | bicubic | trilinear")),
    ("linear_4d", lambda m: _f(m).interpolate(X4(m), size=3, mode="linear"),
     NotImplementedError, "Got 4D input, but linear mode needs 3D input"),
    ("trilinear_4d", lambda m: _f(m).interpolate(X4(m), size=3, mode="trilinear"),
     NotImplementedError, "Got 4D input, but trilinear mode needs 5D input"),
    ("bilinear_3d", lambda m: _f(m).interpolate(m.zeros(1, 2, 5), size=3, mode="bilinear"),
     NotImplementedError, "Got 3D input, but bilinear mode needs 4D input"),
    ("bicubic_3d", lambda m: _f(m).interpolate(m.zeros(1, 2, 5), size=3, mode="bicubic"),
     NotImplementedError, ("Input Error: Only 3D, 4D and 5D input Tensors supported (got 3D) for "
     "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
     "nearest-exact (got bicubic)")),
    ("bad_mode", lambda m: _f(m).interpolate(X4(m), size=3, mode="bogus"), NotImplementedError,
     ("(got 4D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area "
     "| nearest-exact (got bogus)")),
    ("2d_input", lambda m: _f(m).interpolate(m.zeros(2, 5), size=3), NotImplementedError,
     "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D)"),
    ("antialias_mode", lambda m: _f(m).interpolate(m.zeros(1, 2, 5), size=3, mode="linear",
     antialias=True), ValueError, ("Anti-alias option is restricted to bilinear, bicubic, and "
     "lanczos modes and requires a 4-D tensor as input")),
    ("lanczos_align_corners", lambda m: _f(m).interpolate(X4(m), size=3, mode="lanczos",
     align_corners=True), ValueError, "Lanczos mode does not support align_corners=True"),
    ("lanczos_no_aa", lambda m: _f(m).interpolate(X4(m), size=3, mode="lanczos"), ValueError,
     "Lanczos mode requires antialias=True"),
    ("zero_size", lambda m: _f(m).interpolate(X4(m), size=0), RuntimeError,
     ("Input and output sizes should be greater than 0, but got input (H: 5, W: 7) output "
     "(H: 0, W: 0)")),
    ("zero_size_1d", lambda m: _f(m).interpolate(m.zeros(1, 2, 7), size=0), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (W: 7) and output (W: 0)"),
    ("negative_scale", lambda m: _f(m).interpolate(X4(m), scale_factor=-1.0), RuntimeError,
     "output (H: -5, W: -7)"),
    ("size_types", lambda m: _f(m).interpolate(X4(m), size=(3, 2.5)), TypeError,
     ("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
     "but got size with types [<class 'int'>, <class 'float'>]")),
    ("empty_channels", lambda m: _f(m).interpolate(m.zeros(1, 0, 3, 3), scale_factor=2),
     RuntimeError, "Non-empty 4D data tensor expected but got a tensor with sizes [1, 0, 3, 3]"),
    ("long_linear", lambda m: _f(m).interpolate(m.zeros(1, 2, 5, dtype=m.int64), size=3,
     mode="linear"), NotImplementedError, "not implemented for 'Long'"),
    ("uint8_linear", lambda m: _f(m).interpolate(m.zeros(1, 2, 5, dtype=m.uint8), size=3,
     mode="linear"), NotImplementedError, "\"compute_indices_weights_linear\" not implemented for 'Byte'"),
    ("uint8_trilinear", lambda m: _f(m).interpolate(m.zeros(1, 1, 2, 2, 2, dtype=m.uint8), size=3,
     mode="trilinear"), NotImplementedError, "not implemented for 'Byte'"),
    ("long_area", lambda m: _f(m).interpolate(m.zeros(1, 2, 5, 5, dtype=m.int64), size=3,
     mode="area"), NotImplementedError, "\"adaptive_avg_pool2d\" not implemented for 'Long'"),
]  # fmt: skip


@pytest.mark.parametrize("row", INTERP_ERRORS, ids=[r[0] for r in INTERP_ERRORS])
def test_interpolate_errors(row):
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


@needs_torch
def test_interpolate_empty_batch_and_area_zero():
    for m in (ember, torch):
        assert tuple(m.nn.functional.interpolate(m.zeros(0, 2, 3, 3), scale_factor=2).shape) == (
            0, 2, 6, 6)  # fmt: skip
        assert tuple(_f(m).interpolate(m.zeros(1, 2, 5, 7), size=0, mode="area").shape) == (
            1, 2, 0, 0)  # fmt: skip


@needs_torch
@pytest.mark.parametrize(
    "name,kw",
    [
        ("upsample", {"scale_factor": 2}),
        ("upsample", {"size": (3, 9), "mode": "bilinear", "align_corners": True}),
        ("upsample_nearest", {"scale_factor": 1.5}),
        ("upsample_bilinear", {"size": (4, 9)}),
    ],
)
def test_deprecated_upsample(name, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_case(Case(name, lambda m, x: getattr(_f(m), name)(x, **kw), [A(1, 2, 3, 5)]))
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated. Use "
                      "`nn.functional.interpolate` instead."):  # fmt: skip
        getattr(ember.nn.functional, name)(ember.zeros(1, 2, 3, 5), **kw)


# ---------------------------------------------------------------------- upsampling modules
UPSAMPLE = [
    ("Upsample", {"scale_factor": 2}, A(2, 3, 4, 5)),
    ("Upsample", {"size": 7, "mode": "linear"}, A(2, 3, 4)),
    ("Upsample", {"size": (3, 7), "mode": "bilinear", "align_corners": True}, A(2, 3, 4, 5)),
    ("Upsample", {"scale_factor": (1.5, 2.0), "mode": "bicubic"}, A(1, 2, 4, 5)),
    ("Upsample", {"scale_factor": 1.5, "mode": "trilinear"}, A(1, 2, 2, 3, 4)),
    ("Upsample", {"scale_factor": 0.5, "mode": "area"}, A(1, 2, 6, 4)),
    ("Upsample", {"scale_factor": 2.5, "mode": "nearest-exact", "recompute_scale_factor": True},
     A(1, 2, 3, 4)),
    ("UpsamplingNearest2d", {"scale_factor": 2}, A(2, 3, 4, 5)),
    ("UpsamplingNearest2d", {"size": (3, 8)}, A(2, 3, 4, 5)),
    ("UpsamplingBilinear2d", {"scale_factor": 2}, A(2, 3, 4, 5)),
    ("UpsamplingBilinear2d", {"size": (3, 8)}, A(2, 3, 4, 5)),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("row", UPSAMPLE, ids=[f"{r[0]}{r[1]}" for r in UPSAMPLE])
def test_upsample_modules(row):
    name, kw, inp = row
    check_module(lambda m: getattr(m.nn, name)(**kw), [inp])
    assert repr(getattr(ember.nn, name)(**kw)) == repr(getattr(torch.nn, name)(**kw))


# ---------------------------------------------------------------------- shuffles
SHUFFLE = [
    Case("pixel_shuffle", lambda m, x: m.nn.functional.pixel_shuffle(x, 2), [A(2, 8, 3, 4)]),
    Case("pixel_shuffle3", lambda m, x: m.pixel_shuffle(x, 3), [A(18, 2, 3)]),
    Case("pixel_shuffle5d", lambda m, x: m.pixel_shuffle(x, 2), [A(2, 2, 4, 2, 3)]),
    Case("pixel_unshuffle", lambda m, x: m.nn.functional.pixel_unshuffle(x, 2), [A(2, 3, 4, 6)]),
    Case("pixel_unshuffle3d", lambda m, x: m.pixel_unshuffle(x, 3), [A(2, 6, 3)]),
    Case("channel_shuffle", lambda m, x: m.nn.functional.channel_shuffle(x, 3), [A(2, 6, 3, 2)]),
    Case("channel_shuffle3d", lambda m, x: m.channel_shuffle(x, 2), [A(2, 8, 3)]),
    Case("native_channel_shuffle", lambda m, x: m.nn.functional.native_channel_shuffle(x, 4),
         [A(1, 8, 2, 2)], grad=False),  # torch has no derivative for it
    Case("shuffle_f64", lambda m, x: m.pixel_shuffle(x, 2), [A(1, 4, 2, 3, dtype="float64")]),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("case", SHUFFLE, ids=str)
def test_shuffle_parity(case):
    run_case(case)


@pytest.mark.parametrize("case", SHUFFLE[:-1], ids=str)
def test_shuffle_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


@needs_torch
def test_shuffle_integer_dtype():
    a = np.arange(2 * 8 * 2 * 2).reshape(2, 8, 2, 2)
    for name, arg in [("pixel_shuffle", 2), ("pixel_unshuffle", 2), ("channel_shuffle", 4)]:
        e = getattr(ember, name)(ember.tensor(a), arg)
        t = getattr(torch, name)(torch.tensor(a), arg)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


SHUFFLE_ERRORS = [
    ("ps_channels", lambda m: m.pixel_shuffle(m.zeros(2, 8, 3), 2), RuntimeError,
     ("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
     "upscale_factor, but input.size(-3)=2 is not divisible by 4")),
    ("ps_zero", lambda m: m.pixel_shuffle(m.zeros(2, 8, 3, 3), 0), RuntimeError,
     "pixel_shuffle expects a positive upscale_factor, but got 0"),
    ("ps_float", lambda m: m.nn.functional.pixel_shuffle(m.zeros(2, 8, 3, 3), 2.0), TypeError,
     "pixel_shuffle(): argument 'upscale_factor' (position 2) must be int, not float"),
    ("pu_height", lambda m: m.pixel_unshuffle(m.zeros(2, 8, 3, 4), 2), RuntimeError,
     ("pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=3 "
     "is not divisible by 2")),
    ("pu_width", lambda m: m.pixel_unshuffle(m.zeros(2, 8, 4, 3), 2), RuntimeError,
     ("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=3 "
     "is not divisible by 2")),
    ("pu_dims", lambda m: m.pixel_unshuffle(m.zeros(8, 4), 2), RuntimeError,
     ("pixel_unshuffle expects input to have at least 3 dimensions, but got input with 2 "
     "dimension(s)")),
    ("pu_zero", lambda m: m.pixel_unshuffle(m.zeros(2, 8, 4, 4), 0), RuntimeError,
     "pixel_unshuffle expects a positive downscale_factor, but got 0"),
    ("cs_groups", lambda m: m.channel_shuffle(m.zeros(2, 8, 3, 3), 3), RuntimeError,
     "Number of channels must be divisible by groups. Got 8 channels and 3 groups."),
    ("cs_zero", lambda m: m.channel_shuffle(m.zeros(2, 8, 3, 3), 0), RuntimeError,
     "Number of groups to divide channels in must be positive. Value of groups:0"),
    ("cs_dims", lambda m: m.channel_shuffle(m.zeros(2, 8), 2), RuntimeError,
     "channel_shuffle expects input with > 2 dims, but got input with sizes [2, 8]"),
]  # fmt: skip


@pytest.mark.parametrize("row", SHUFFLE_ERRORS, ids=[r[0] for r in SHUFFLE_ERRORS])
def test_shuffle_errors(row):
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


SHUFFLE_MODULES = [
    ("PixelShuffle", (2,), A(2, 8, 3, 4)),
    ("PixelUnshuffle", (3,), A(2, 2, 6, 3)),
    ("ChannelShuffle", (2,), A(2, 4, 3, 3)),
]


@needs_torch
@pytest.mark.parametrize("row", SHUFFLE_MODULES, ids=[r[0] for r in SHUFFLE_MODULES])
def test_shuffle_modules(row):
    name, args, inp = row
    check_module(lambda m: getattr(m.nn, name)(*args), [inp])
    assert repr(getattr(ember.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


# ---------------------------------------------------------------------- grid_sample
def _gs(mode, pm, ac):
    def fn(m, x, g):
        return m.nn.functional.grid_sample(x, g, mode=mode, padding_mode=pm, align_corners=ac)

    return fn


def _gs_cases():
    cases = []
    for mode in ("bilinear", "nearest", "bicubic"):
        for pm in ("zeros", "border", "reflection"):
            for ac in (False, True):
                # grid points reach outside [-1, 1] so every padding mode matters
                g = A(2, 4, 3, 2, low=-1.4, high=1.4)
                cases.append(Case(f"2d-{mode}-{pm}-{ac}", _gs(mode, pm, ac), [A(2, 3, 5, 6), g]))
                if mode != "bicubic":
                    g3 = A(2, 2, 3, 2, 3, low=-1.4, high=1.4)
                    cases.append(
                        Case(f"3d-{mode}-{pm}-{ac}", _gs(mode, pm, ac), [A(2, 2, 3, 4, 5), g3])
                    )
    cases.append(
        Case("f64", _gs("bicubic", "reflection", False),
             [A(1, 2, 4, 5, dtype="float64"), A(1, 3, 2, 2, dtype="float64", low=-1.2, high=1.2)])
    )  # fmt: skip
    return cases


GS = _gs_cases()


@needs_torch
@pytest.mark.parametrize("case", GS, ids=str)
def test_grid_sample_parity(case):
    case.atol, case.rtol = 1e-5, 1e-4
    run_case(case)


GS_GRAD = [
    Case(f"{mode}-{pm}", _gs(mode, pm, ac), [A(1, 2, 3, 4), A(1, 2, 3, 2, low=-1.2, high=1.2)])
    for mode, pm, ac in [
        ("bilinear", "zeros", False),
        ("bilinear", "reflection", True),
        ("bicubic", "border", False),
        ("bicubic", "reflection", False),
        ("nearest", "zeros", True),
    ]
] + [Case("3d", _gs("bilinear", "border", False),
          [A(1, 1, 2, 3, 3), A(1, 2, 2, 1, 3, low=-1.2, high=1.2)])]  # fmt: skip


@pytest.mark.parametrize("case", GS_GRAD, ids=str)
def test_grid_sample_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


@needs_torch
def test_grid_sample_torch_namespace():
    run_case(Case("grid_sampler", lambda m, x, g: m.grid_sampler(x, g, 2, 1, False),
                  [A(1, 2, 4, 5), A(1, 3, 2, 2)]))  # fmt: skip


@needs_torch
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_non_finite_grid(mode):
    # NaN and infinite grid points: no crash; zeros padding matches torch (NaN or 0)
    g = np.array([[[[np.nan, 0.1], [0.2, np.inf]], [[-np.inf, 0.3], [0.5, 0.5]]]], np.float32)
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 3)).astype(np.float32)
    kw = {"mode": mode, "padding_mode": "zeros", "align_corners": False}
    e = ember.nn.functional.grid_sample(ember.tensor(x), ember.tensor(g), **kw)
    t = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), **kw)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-6, equal_nan=True)


GS_ERRORS = [
    ("mode", lambda m: _f(m).grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 2), mode="bogus",
     align_corners=False), ValueError, ("nn.functional.grid_sample(): expected mode to be "
     "'bilinear', 'nearest' or 'bicubic', but got: 'bogus'")),
    ("padding", lambda m: _f(m).grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 2),
     padding_mode="bogus", align_corners=False), ValueError, ("nn.functional.grid_sample(): "
     "expected padding_mode to be 'zeros', 'border', or 'reflection', but got: 'bogus'")),
    ("batch", lambda m: _f(m).grid_sample(m.zeros(2, 1, 2, 2), m.zeros(1, 1, 1, 2),
     align_corners=False), RuntimeError, ("grid_sampler(): expected grid and input to have same "
     "batch size, but got input with sizes [2, 1, 2, 2] and grid with sizes [1, 1, 1, 2]")),
    ("last_dim", lambda m: _f(m).grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 3),
     align_corners=False), RuntimeError, ("grid_sampler(): expected grid to have size 2 in last "
     "dimension, but got grid with sizes [1, 1, 1, 3]")),
    ("empty", lambda m: _f(m).grid_sample(m.zeros(1, 1, 0, 2), m.zeros(1, 1, 1, 2),
     align_corners=False), RuntimeError, ("grid_sampler(): expected input to have non-empty "
     "spatial dimensions, but input has sizes [1, 1, 0, 2] with dimension 2 being empty")),
    ("bicubic_5d", lambda m: _f(m).grid_sample(m.zeros(1, 1, 2, 2, 2), m.zeros(1, 1, 1, 1, 3),
     mode="bicubic", align_corners=False), RuntimeError,
     "grid_sampler(): bicubic interpolation only supports 4D input"),
    ("dtype", lambda m: _f(m).grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 2,
     dtype=m.float64), align_corners=False), RuntimeError,
     "expected scalar type Float but found Double"),
]  # fmt: skip


@pytest.mark.parametrize("row", GS_ERRORS, ids=[r[0] for r in GS_ERRORS])
def test_grid_sample_errors(row):
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


def test_align_corners_warning():
    msg = "Default grid_sample and affine_grid behavior has changed to align_corners=False"
    with pytest.warns(UserWarning, match=msg):
        ember.nn.functional.grid_sample(ember.zeros(1, 1, 2, 2), ember.zeros(1, 1, 1, 2))
    with pytest.warns(UserWarning, match=msg):
        ember.nn.functional.affine_grid(ember.zeros(1, 2, 3), (1, 1, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.nn.functional.affine_grid(ember.zeros(1, 2, 3), (1, 1, 2, 2), align_corners=False)


# ---------------------------------------------------------------------- affine_grid
AFFINE = [
    Case(f"{size}-{ac}", lambda m, t, size=size, ac=ac: m.nn.functional.affine_grid(
        t, size, align_corners=ac), [A(*th)])
    for size, th in [((2, 3, 4, 5), (2, 2, 3)), ((2, 3, 4, 5, 6), (2, 3, 4)),
                     ((1, 1, 1, 3), (1, 2, 3)), ((2, 1, 3, 1, 2), (2, 3, 4))]
    for ac in (False, True)
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("case", AFFINE, ids=str)
def test_affine_grid_parity(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unit-size grid warning (tested below)
        run_case(case)


@pytest.mark.parametrize("case", AFFINE[:2] + AFFINE[2:4], ids=str)
def test_affine_grid_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


@needs_torch
def test_affine_grid_generator_and_unit_warning():
    run_case(Case("gen", lambda m, t: m.affine_grid_generator(t, (2, 1, 3, 4), False),
                  [A(2, 2, 3)]))  # fmt: skip
    with pytest.warns(UserWarning, match="affine_grid behavior has changed for unit-size grids"):
        ember.nn.functional.affine_grid(ember.zeros(1, 2, 3), (1, 1, 1, 3), align_corners=True)


AFFINE_ERRORS = [
    ("int", lambda m: _f(m).affine_grid(m.zeros(2, 2, 3, dtype=m.int64), (2, 3, 4, 5),
     align_corners=False), ValueError, "Expected theta to have floating point type, but got "),
    ("shape2d", lambda m: _f(m).affine_grid(m.zeros(2, 3, 4), (2, 3, 4, 5), align_corners=False),
     ValueError, ("Expected a batch of 2D affine matrices of shape Nx2x3 for size (2, 3, 4, 5). "
     "Got ")),
    ("shape3d", lambda m: _f(m).affine_grid(m.zeros(2, 2, 3), (2, 3, 4, 5, 6),
     align_corners=False), ValueError, ("Expected a batch of 3D affine matrices of shape Nx3x4 "
     "for size (2, 3, 4, 5, 6). Got ")),
    ("size_len", lambda m: _f(m).affine_grid(m.zeros(2, 2, 3), (2, 3, 4), align_corners=False),
     NotImplementedError, ("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
     "transforms, respectively. Got size (2, 3, 4).")),
    ("zero", lambda m: _f(m).affine_grid(m.zeros(2, 2, 3), (2, 3, 0, 5), align_corners=False),
     ValueError, "Expected non-zero, positive output size. Got (2, 3, 0, 5)"),
    ("batch", lambda m: _f(m).affine_grid(m.zeros(2, 2, 3), (3, 3, 4, 5), align_corners=False),
     RuntimeError, ("Expected size for first two dimensions of batch2 tensor to be: [3, 3] but "
     "got: [2, 3].")),
]  # fmt: skip


@pytest.mark.parametrize("row", AFFINE_ERRORS, ids=[r[0] for r in AFFINE_ERRORS])
def test_affine_grid_errors(row):
    _, fn, exc, msg = row
    raises_like_torch(fn, exc, msg)


@needs_torch
def test_spatial_transformer_pipeline():
    # affine_grid -> grid_sample, differentiated with respect to theta (the STN pattern)
    def fn(m, x, t):
        g = m.nn.functional.affine_grid(t, (2, 3, 4, 5), align_corners=False)
        return m.nn.functional.grid_sample(x, g, align_corners=False)

    run_case(Case("stn", fn, [A(2, 3, 6, 7), A(2, 2, 3, low=-0.8, high=0.8)]))


# ---------------------------------------------------------------------- names
NAMES = ("N", "C", "H", "W")


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: ember.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
        lambda x: ember.nn.functional.interpolate(x, size=(3, 2), mode="area"),
        lambda x: ember.nn.functional.interpolate(x, size=(5, 3), mode="bicubic", antialias=True),
        lambda x: ember.nn.Upsample(scale_factor=2)(x),
        lambda x: ember.pixel_shuffle(x, 2),
        lambda x: ember.pixel_unshuffle(x, 2),
        lambda x: ember.nn.ChannelShuffle(2)(x),
    ],
    ids=["bilinear", "area", "aa", "Upsample", "pixel_shuffle", "pixel_unshuffle", "channel"],
)
def test_names_kept(fn):
    # upsampling keeps every name; the shuffles keep each dim's role (batch, channel, H, W)
    x = ember.randn(2, 4, 4, 6, names=NAMES, requires_grad=True)
    y = fn(x)
    assert y.names == NAMES
    y.sum().backward()
    assert x.grad.names == NAMES


def test_grid_sample_and_affine_grid_names():
    x = ember.randn(2, 3, 4, 5, names=NAMES, requires_grad=True)
    g = (ember.rand(2, 3, 2, 2) * 2 - 1).rename("N", "Ho", "Wo", None).requires_grad_(True)
    y = ember.nn.functional.grid_sample(x, g, align_corners=False)
    assert y.names == ("N", "C", "Ho", "Wo")  # batch and channel of input, space of the grid
    y.sum().backward()
    assert x.grad.names == NAMES and g.grad.names == ("N", "Ho", "Wo", None)
    t = ember.randn(2, 2, 3).rename("N", None, None)
    assert ember.nn.functional.affine_grid(t, (2, 1, 3, 4), align_corners=False).names == (
        "N", None, None, None)  # fmt: skip


# ---------------------------------------------------------------------- data parallel
@needs_torch
def test_data_parallel_wraps_like_torch():
    m = ember.nn.Linear(3, 2)
    dp = ember.nn.DataParallel(m)
    tdp = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert dp.module is m
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp).replace("ember", "torch") == repr(tdp)
    x = ember.randn(4, 3)
    np.testing.assert_allclose(dp(x).detach().numpy(), m(x).detach().numpy())
    dp(x).sum().backward()
    assert m.weight.grad is not None
    assert ember.nn.parallel.DataParallel is ember.nn.DataParallel
    dp2 = ember.nn.DataParallel(ember.nn.Linear(3, 2), device_ids=[0], output_device=0)
    dp2.load_state_dict(dp.state_dict())
    np.testing.assert_allclose(dp2(x).detach().numpy(), m(x).detach().numpy())


def test_data_parallel_function():
    m = ember.nn.Linear(3, 2)
    x = ember.randn(4, 3)
    out = ember.nn.parallel.data_parallel(m, x)
    np.testing.assert_allclose(out.detach().numpy(), m(x).detach().numpy())
    out = ember.nn.parallel.data_parallel(ember.nn.Bilinear(3, 3, 2), (x, x), module_kwargs={})
    assert tuple(out.shape) == (4, 2)


def test_data_parallel_on_one_gpu():
    # with a (strict, cupy-like) GPU backend: the module moves to cuda:0, inputs follow it
    from strict_backend import StrictArray, strict_cuda

    with strict_cuda():
        m = ember.nn.Linear(3, 2)
        dp = ember.nn.DataParallel(m, device_ids=[ember.device("cuda:0")])
        assert (dp.device_ids, dp.output_device, str(dp.src_device_obj)) == ([0], 0, "cuda:0")
        assert m.weight.device == ember.device("cuda:0")
        y = dp(ember.randn(4, 3))
        assert type(y._data) is StrictArray
        y = ember.nn.parallel.data_parallel(m, ember.randn(4, 3), device_ids=[0])
        assert type(y._data) is StrictArray
        with pytest.raises(RuntimeError, match="runs on one device"):
            ember.nn.DataParallel(m, device_ids=[0, 1])
        m.to("cpu")
        with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on "
                           r"device cuda:0 \(device_ids\[0\]\) but found one of them on "
                           r"device: cpu"):  # fmt: skip
            dp(ember.randn(4, 3))


@needs_torch
def test_distributed_data_parallel():
    m = ember.nn.Linear(3, 2)
    raises_like_torch(
        lambda mod: mod.nn.parallel.DistributedDataParallel(mod.nn.Linear(3, 2)),
        ValueError,
        "Default process group has not been initialized, please make sure to call "
        "init_process_group.",
    )
    dist = pytest.importorskip("ember.distributed")
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        ddp = ember.nn.parallel.DistributedDataParallel(m)
        assert ddp.module is m and list(ddp.state_dict()) == ["module.weight", "module.bias"]
        x = ember.randn(4, 3)
        with ddp.no_sync():
            assert ddp.require_backward_grad_sync is False
            ddp(x).sum().backward()
        assert ddp.require_backward_grad_sync is True
        np.testing.assert_allclose(ddp(x).detach().numpy(), m(x).detach().numpy())
        with pytest.raises(RuntimeError, match="DistributedDataParallel is not needed"):
            ember.nn.parallel.DistributedDataParallel(ember.nn.ReLU())
    finally:
        dist.destroy_process_group()


# ---------------------------------------------------------------------- device dispatch
STRICT = {
    "nearest": lambda x: ember.nn.functional.interpolate(x, scale_factor=1.5),
    "bilinear": lambda x: ember.nn.functional.interpolate(x, size=(3, 7), mode="bilinear"),
    "bicubic": lambda x: ember.nn.functional.interpolate(x, size=(5, 2), mode="bicubic"),
    "area": lambda x: ember.nn.functional.interpolate(x, size=(3, 2), mode="area"),
    "aa": lambda x: ember.nn.functional.interpolate(x, size=(2, 2), mode="bilinear",
                                                    antialias=True),
    "pixel_shuffle": lambda x: ember.pixel_shuffle(x, 2),
    "pixel_unshuffle": lambda x: ember.pixel_unshuffle(x, 2),
    "channel_shuffle": lambda x: ember.channel_shuffle(x, 2),
    "grid_sample": lambda x: ember.nn.functional.grid_sample(
        x, (x[:, :2].permute(0, 2, 3, 1) * 0.7), mode="bicubic", padding_mode="reflection",
        align_corners=False),
    "grid_sample_bilinear": lambda x: ember.nn.functional.grid_sample(
        x, (x[:, 1:3].permute(0, 2, 3, 1) * 0.9), padding_mode="border", align_corners=True),
    "affine_grid": lambda x: ember.nn.functional.affine_grid(
        x[:, 0, :2, :3], (2, 1, 3, 4), align_corners=False),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(STRICT))
def test_strict_device(name):
    from strict_backend import StrictArray, strict_cuda

    def run(dev):
        x = ember.tensor(np.random.default_rng(3).standard_normal((2, 4, 4, 6)), device=dev)
        x = x.float().requires_grad_(True)
        y = STRICT[name](x)
        (y * y).sum().backward()
        return y, x.grad

    y0, g0 = run("cpu")
    with strict_cuda():
        y, g = run("cuda")
        assert type(y._data) is StrictArray and type(g._data) is StrictArray
        np.testing.assert_allclose(y.detach().cpu().numpy(), y0.detach().numpy(), rtol=1e-5)
        np.testing.assert_allclose(g.cpu().numpy(), g0.numpy(), rtol=1e-4, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("size", [(2, 1, 3, 4), (2, 1, 2, 3, 4)])
def test_affine_grid_reused_by_two_backward_passes(size):
    # torch's grid node saves no tensor: a grid reused by two backward passes works (ember's
    # matmul freed its saved base grid after the first)
    import torch

    k = len(size) - 2
    th = np.random.default_rng(5).standard_normal((2, k, k + 1))
    grads = []
    for m in (ember, torch):
        theta = m.tensor(th, requires_grad=True)
        grid = m.nn.functional.affine_grid(theta, size, align_corners=False)
        w = m.linspace(0.5, 1.5, grid.numel(), dtype=grid.dtype).reshape(grid.shape)
        (grid * w).sum().backward()
        (grid * grid).sum().backward()
        grads.append((grid.grad_fn.name(), theta.grad.numpy()))
    assert grads[0][0] == grads[1][0] == "AffineGridGeneratorBackward0"
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)
