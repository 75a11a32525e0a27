"""Parity regressions of the ninety-second wave: activations, the softmax family, norms, dropout
and embedding fuzzed against torch for their argument checks (first error: type and full text;
warnings; results: dtype, shape and values). It found:

* F.softmax / softmin / log_softmax not going through the Tensor method as torch does (a bad
  ``dim`` is argument 1 in the error; a list input an AttributeError), reading ``dtype``
  before ``dim``, taking a non-dtype ``dtype``, casting complex to real with numpy's
  ComplexWarning (torch: its own UserWarning), refusing an empty integer input (torch runs no
  kernel), and ignoring ``_stacklevel`` for the implicit-dim warning; gumbel_softmax's dim
  error counted as the function's;
* layer_norm taking a non-number ``eps``, group_norm a non-int ``num_groups``; rms_norm
  checking the input's shape before ``normalized_shape`` and the weight's, a too-small rank
  as a RuntimeError (torch: ValueError);
* local_response_norm: a size of 0 or below passing or leaking a shape error (torch: its
  padding crops, then average pooling's kernel-size or padding check), a float or bool size
  taken, non-number alpha / beta / k with Python's texts (torch: the Tensor methods'), and an
  integer input's window averaged in floats (torch's integer pooling truncates);
* elu_/celu_/leaky_relu_/rrelu_ (``inplace=True``) naming the out-of-place function in their
  parser errors, rrelu not checking lower/upper as numbers; the F.*_ bindings (hardtanh_,
  elu_, celu_, leaky_relu_, rrelu_, selu_, threshold_) naming a keyword argument with its
  position, hardtanh_ refusing min_val > max_val (torch's binding clamps), elu_ without its
  scale / input_scale arguments;
* scalar arguments not converted to the input's type with torch's checks: hardtanh / relu6 /
  threshold limits out of an integer or half type's range, NaN / inf for an integer type, a
  negative limit for uint8 ("cannot do hardtanh on an unsigned type with negative limits"),
  complex scalars ("value cannot be converted to type ... without overflow", in the kernel's
  compute type or as a double, per function); elu with alpha=inf giving NaN for positives;
* gelu(approximate=non-str) a RuntimeError (torch: TypeError); hardshrink / softshrink /
  softplus not checking their numbers, softshrink taking a lambd above the dtype's max;
* gumbel_softmax ignoring a non-default ``eps`` (torch: a deprecation warning) and taking a
  complex input;
* dropout reading ``p``'s type before its range (torch compares it first), dropout / feature /
  alpha dropout touching an empty input (torch hands it back as it is), a non-bool
  ``training`` taken and a non-tensor input handed back in eval mode (torch's bindings refuse
  both);
* embedding / embedding_bag taking a float or bool padding_idx and non-bool sparse /
  scale_grad_by_freq, renorm taking non-float max_norm / norm_type, norm_type 0 dividing by
  zero, an integer weight renormed (torch: norm's dtype error), a complex weight warning;
  embedding_bag's padding range error, offsets[0] text, per_sample_weights size text
  (``ember.Size``) and list-input AttributeError;
* normalize clamping with clamp (torch: the method clamp_min, whose errors differ);
* batch_norm taking non-bool training / non-float momentum, comparing eps with <= first out of
  training, a 2-d running statistic, empty inputs checked (torch returns early, selecting
  weight[0] / bias[0]) and 0-d / 1-d inputs with the wrong error; instance_norm the same
  (scalars, 0-d / 1-d inputs, empty inputs: the folded running statistics' view and copy).

Left: a str ``dim`` on an unnamed tensor is ember's name lookup error (torch 2.13 has no named
tensors: its parser's TypeError); Tensor.norm's own dim / complex-ord errors (F.normalize
goes through it); embedding_bag with decreasing offsets (torch's internal assert).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember

_R = np.random.default_rng(92)
_X34 = _R.standard_normal((3, 4))
_X2345 = _R.standard_normal((2, 3, 4, 5))
_X234 = _R.standard_normal((2, 3, 4))
_NAN, _INF = float("nan"), float("inf")


def _t(T, arr, dtype="float64", rg=False):
    t = T.tensor(arr, dtype=getattr(T, dtype))
    return t.requires_grad_() if rg else t


def _outcome(call, T):
    """(error type, full text) or ("ok", dtype, shape) of ``call(T)``, with the warnings it gave
    (category, text without torch's C++ source line), and the values as a float64 array."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        vals = None
        try:
            r = call(T)
        except Exception as e:  # noqa: BLE001 - the type is compared
            out = type(e).__name__, str(e)
        else:
            if not isinstance(r, T.Tensor):  # (a shape, for random results)
                out = ("ok", tuple(r))
            else:
                out = ("ok", str(r.dtype).split(".")[-1], tuple(r.shape))
                if r.dtype.is_complex:
                    r = T.view_as_real(r)
                vals = np.nan_to_num(r.detach().to(T.float64).numpy(), nan=-0.125)
    said = sorted(
        {(x.category.__name__, str(x.message).split(" (Triggered internally")[0]) for x in w}
    )
    return out, said, vals


def _same(call):
    was = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # (torch gives some warnings once per process)
    try:
        *want, want_vals = _outcome(call, torch)
    finally:
        torch.set_warn_always(was)
    *got, got_vals = _outcome(call, ember)
    assert got == want
    if want_vals is not None:
        np.testing.assert_allclose(got_vals, want_vals, rtol=1e-5, atol=1e-6)


def _idx(T):
    return T.tensor([[0, 2], [4, 1]])


def _w(T, dtype="float32"):
    return T.arange(20.0).reshape(5, 4).to(getattr(T, dtype))


def _stat(T, value, n=3):
    return T.full((n,), float(value), dtype=T.float64)


def _F(T):
    return T.nn.functional


def _x(T, dtype="float64"):
    return _t(T, _X34, dtype)


_SOFTMAX = ("softmax", "softmin", "log_softmax")
# each in-place binding's second argument given as None by keyword
_FIRST_KW = {
    "hardtanh_": {"min_val": None},
    "elu_": {"alpha": None},
    "celu_": {"alpha": None},
    "leaky_relu_": {"negative_slope": None},
    "rrelu_": {"lower": None},
    "threshold_": {"threshold": None, "value": 1},
}

CASES = {
    # ---- the softmax family, through the Tensor method
    **{
        f"{n}_{k}": (lambda T, n=n, c=c: c(getattr(_F(T), n), T))
        for n in _SOFTMAX
        for k, c in {
            "dim_str_list": lambda f, T: f(_x(T), [1]),
            "dim_float": lambda f, T: f(_x(T), 1.5),
            "dim_float_kw": lambda f, T: f(_x(T), dim=1.5),
            "dim_out_of_range": lambda f, T: f(_x(T), 2),
            "dim_before_dtype": lambda f, T: f(_x(T), 1.5, dtype="float"),
            "dtype_str": lambda f, T: f(_x(T), 1, dtype="float32"),
            "dtype_int": lambda f, T: f(_x(T), 1, dtype=3),
            "dtype_float32": lambda f, T: f(_x(T), 1, dtype=T.float32),
            "dtype_int64": lambda f, T: f(_x(T), 1, dtype=T.int64),
            "complex_to_real": lambda f, T: f(_x(T, "complex64"), 0, dtype=T.float32),
            "complex": lambda f, T: f(_x(T, "complex128"), 1),
            "int_input": lambda f, T: f(_x(T, "int64"), 1),
            "int_input_dim0": lambda f, T: f(_x(T, "int64"), 0),
            "bool_input": lambda f, T: f(_x(T, "bool"), 1),
            "empty_int": lambda f, T: f(T.zeros(0, 3, dtype=T.int64), 1),
            "empty_float": lambda f, T: f(T.zeros(0, 3), 0),
            "list_input": lambda f, T: f([1.0, 2.0], 0),
            "implicit_dim": lambda f, T: f(_x(T)),
            "implicit_dim_stacklevel": lambda f, T: f(_x(T), _stacklevel=2),
            "scalar": lambda f, T: f(T.tensor(2.0), 0),
        }.items()
    },
    # ---- norms
    "layer_norm_eps_str": lambda T: _F(T).layer_norm(_x(T), (4,), eps="a"),
    "layer_norm_eps_none": lambda T: _F(T).layer_norm(_x(T), (4,), eps=None),
    "layer_norm_eps_int": lambda T: _F(T).layer_norm(_x(T), (4,), eps=1),
    "layer_norm_empty_shape": lambda T: _F(T).layer_norm(_x(T), ()),
    "layer_norm_bad_weight": lambda T: _F(T).layer_norm(_x(T), (4,), T.ones(3, dtype=T.float64)),
    "group_norm_groups_float": lambda T: _F(T).group_norm(_t(T, _X2345), 1.5),
    "group_norm_groups_str": lambda T: _F(T).group_norm(_t(T, _X2345), "3"),
    "group_norm_groups_none": lambda T: _F(T).group_norm(_t(T, _X2345), None),
    "group_norm_groups_bad": lambda T: _F(T).group_norm(_t(T, _X2345), 2),
    "group_norm_ok": lambda T: _F(T).group_norm(_t(T, _X2345), 3),
    "rms_norm_empty_shape": lambda T: _F(T).rms_norm(_x(T), ()),
    "rms_norm_rank_too_small": lambda T: _F(T).rms_norm(_x(T), (2, 3, 4)),
    "rms_norm_shape_mismatch": lambda T: _F(T).rms_norm(_x(T), (3,)),
    "rms_norm_weight_before_input": lambda T: _F(T).rms_norm(
        _x(T), (2, 3, 4), T.ones(5, dtype=T.float64)
    ),
    "rms_norm_weight_before_shape": lambda T: _F(T).rms_norm(
        _x(T), (3,), T.ones(5, dtype=T.float64)
    ),
    "rms_norm_int": lambda T: _F(T).rms_norm(_x(T, "int64"), (4,)),
    "rms_norm_empty_int": lambda T: _F(T).rms_norm(T.zeros(0, 4, dtype=T.int64), (4,)),
    "rms_norm_ok": lambda T: _F(T).rms_norm(_x(T), (4,), T.ones(4, dtype=T.float64)),
    "lrn_size0_3d": lambda T: _F(T).local_response_norm(_t(T, _X234), 0),
    "lrn_size0_4d": lambda T: _F(T).local_response_norm(_t(T, _X2345), 0),
    "lrn_size_neg": lambda T: _F(T).local_response_norm(_t(T, _X234), -1),
    "lrn_ok": lambda T: _F(T).local_response_norm(_t(T, _X2345), 2),
    **{
        f"lrn_{dt}_{nd}d_size{s}_c{c}": (
            lambda T, dt=dt, nd=nd, s=s, c=c: _F(T).local_response_norm(
                T.ones(2, c, *(4,) * (nd - 2), dtype=getattr(T, dt)), s
            )
        )
        for dt in ("float32", "int64", "int32", "bool")
        for nd in (3, 4)
        for s in (-4, -3, -2, -1, 0, 2)
        for c in (1, 3, 6)
    },
    **{
        f"lrn_size_{s!r}_{nd}d": (
            lambda T, s=s, nd=nd: _F(T).local_response_norm(_t(T, _X2345[..., : nd - 2]), s)
        )
        for s in (2.0, 3.5, "a", None, True, False)
        for nd in (3, 4)
    },
    **{
        f"lrn_{a}_{v!r}": (lambda T, a=a, v=v: _F(T).local_response_norm(_t(T, _X234), 2, **{a: v}))
        for a in ("alpha", "beta", "k")
        for v in ("a", None, [1.0], 2)
    },
    # ---- activations: in-place names, numbers
    **{
        f"{n}_{a}_{v!r}_inplace{ip}": (
            lambda T, n=n, a=a, v=v, ip=ip: getattr(_F(T), n)(_x(T), **{a: v}, inplace=ip)
        )
        for n, a in (
            ("elu", "alpha"),
            ("celu", "alpha"),
            ("leaky_relu", "negative_slope"),
            ("rrelu", "lower"),
            ("rrelu", "upper"),
        )
        for v in ("a", None, [1.0])
        for ip in (False, True)
    },
    "rrelu_lower_above_upper": lambda T: _F(T).rrelu(_x(T), 0.5, 0.1),
    "rrelu_eval": lambda T: _F(T).rrelu(_x(T), 0.1, 0.3, training=False),
    "gelu_approximate_int": lambda T: _F(T).gelu(_x(T), approximate=1),
    "gelu_approximate_none": lambda T: _F(T).gelu(_x(T), approximate=None),
    "gelu_approximate_bad": lambda T: _F(T).gelu(_x(T), approximate="x"),
    "gelu_tanh": lambda T: _F(T).gelu(_x(T), approximate="tanh"),
    **{
        f"{n}_{a}_{v!r}_{'kw' if kw else 'pos'}": (
            lambda T, n=n, a=a, v=v, kw=kw, pos=pos: (
                getattr(_F(T), n)(_x(T), **{a: v})
                if kw
                else getattr(_F(T), n)(_x(T), *([1.0] * (pos - 2)), v)
            )
        )
        for n, a, pos in (
            ("hardshrink", "lambd", 2),
            ("softshrink", "lambd", 2),
            ("softplus", "beta", 2),
            ("softplus", "threshold", 3),
        )
        for v in ("a", None, [1.0])
        for kw in (False, True)
    },
    "softshrink_negative": lambda T: _F(T).softshrink(_x(T), -0.5),
    "softshrink_above_max": lambda T: _F(T).softshrink(_x(T, "float32"), 1e39),
    "softshrink_inf": lambda T: _F(T).softshrink(_x(T), float("inf")),
    "hardshrink_int": lambda T: _F(T).hardshrink(_x(T, "int64"), 1),
    "softplus_int": lambda T: _F(T).softplus(_x(T, "int64")),
    "softplus_values": lambda T: _F(T).softplus(_x(T), 2, 0.5),
    # ---- scalar arguments converted to the input's type, with torch's overflow errors
    **{
        f"hardtanh_{dt}_{lo}_{hi}_inplace{ip}": (
            lambda T, dt=dt, lo=lo, hi=hi, ip=ip: _F(T).hardtanh(
                T.tensor([0, 5, 100], dtype=getattr(T, dt)), lo, hi, ip
            )
        )
        for dt in ("uint8", "int8", "int64", "float16", "bfloat16", "float32", "float64")
        for lo, hi in (
            (-1, 1),
            (-0.5, 1),
            (-1.5, 1),
            (-300, 300),
            (0, 1e10),
            (-1e40, 0),
            (0, _INF),
            (_NAN, 1),
            (-0.9, -0.1),
            (0.5, 3.5),
        )
        for ip in (False, True)
    },
    **{
        f"threshold_{dt}_{th}_{v}": (
            lambda T, dt=dt, th=th, v=v: _F(T).threshold(
                T.tensor([0, 1, 2, 5, 100], dtype=getattr(T, dt)), th, v
            )
        )
        for dt in ("uint8", "int8", "int64", "float16", "bfloat16", "float32", "float64")
        for th, v in (
            (300, 1),
            (1, 300),
            (1.5, 2.5),
            (-1, 1e10),
            (1e40, 1),
            (_NAN, 1),
            (1, _INF),
            (1 + 2j, 1),
            (1, 1 + 2j),
            (0.5 + 0j, 1),
        )
    },
    "threshold_list": lambda T: _F(T).threshold([1.0], 0.5, 1),
    **{
        f"{n}_{a}_{dt}_inplace{ip}": (
            lambda T, n=n, a=a, dt=dt, ip=ip: getattr(_F(T), n)(
                T.tensor([-1.0, 0.5, 2.0], dtype=getattr(T, dt)),
                *a,
                **({"inplace": True} if ip else {}),
            )
        )
        for n, a in (
            ("elu", (1 + 2j,)),
            ("elu", (1e40,)),
            ("elu", (0.5 + 0j,)),
            ("elu", (_NAN,)),
            ("celu", (1 + 2j,)),
            ("celu", (1e40,)),
            ("celu", (_INF,)),
            ("leaky_relu", (1 + 2j,)),
            ("leaky_relu", (1e40,)),
            ("leaky_relu", (_INF,)),
            ("rrelu", (1 + 2j,)),
            ("rrelu", (0.5 + 0j,)),
            ("hardshrink", (1 + 2j,)),
            ("hardshrink", (1e40,)),
            ("hardshrink", (0.5 + 0j,)),
            ("softshrink", (1 + 2j,)),
            ("softshrink", (1e39,)),
            ("softplus", (1 + 2j,)),
            ("softplus", (1, 1 + 2j)),
            ("softplus", (1e40,)),
            ("softplus", (2 + 0j, 1e40)),
        )
        for dt in ("int64", "float32", "float64", "float16", "bfloat16")
        for ip in (False, True)
        if not ip or n not in ("hardshrink", "softshrink", "softplus")
    },
    # ---- the in-place bindings: their own names, keywords without a position, no min > max
    **{
        f"{n}_{k}": (lambda T, n=n, c=c: c(getattr(_F(T), n), T))
        for n in ("hardtanh_", "elu_", "celu_", "leaky_relu_", "rrelu_", "selu_", "threshold_")
        for k, c in {
            "list": lambda f, T: f([1.0], *((0.5, 1) if f.__name__ == "threshold_" else ())),
            "int": lambda f, T: f(
                _x(T, "int64"), *((0.5, 1) if f.__name__ == "threshold_" else ())
            ),
            "pos_str": lambda f, T: f(_x(T), "a", *((1,) if f.__name__ == "threshold_" else ())),
            "pos_complex": lambda f, T: f(_x(T), 1 + 2j, 2),
            "pos_big": lambda f, T: f(_x(T, "float32"), 1e40, 2),
            "kw_none": lambda f, T: f(_x(T), **_FIRST_KW[f.__name__]),
        }.items()
        if n != "selu_" or k in ("list", "int")
    },
    "hardtanh__min_above_max": lambda T: _F(T).hardtanh_(_x(T), 1.0, -1.0),
    "hardtanh__complex_int": lambda T: _F(T).hardtanh_(_x(T, "int64"), 1 + 2j, 2),
    "hardtanh__complex_real": lambda T: _F(T).hardtanh_(_x(T), 0.5 + 0j, 2),
    "elu__scales": lambda T: _F(T).elu_(_x(T), 2, 3, 4),
    "elu__scale_str": lambda T: _F(T).elu_(_x(T), 2, "a"),
    "elu__input_scale_kw": lambda T: _F(T).elu_(_x(T), 2, input_scale=None),
    "elu__scale_big": lambda T: _F(T).elu_(_x(T, "float32"), 2, 1e40),
    # ---- embedding / embedding_bag: their bindings' argument types, renorm, padding
    **{
        f"embedding_{k}_{v!r}": (lambda T, k=k, v=v: _F(T).embedding(_idx(T), _w(T), **{k: v}))
        for k, vs in (
            ("padding_idx", (1.5, True, -1.5, 4, -5)),
            ("sparse", (1, None, "a", 0.0)),
            ("scale_grad_by_freq", (1, None, "a")),
        )
        for v in vs
    },
    **{
        f"embedding_bag_{k}_{v!r}": (
            lambda T, k=k, v=v: _F(T).embedding_bag(_idx(T), _w(T), **{k: v})
        )
        for k, vs in (
            ("padding_idx", (1.5, True, 5, -6, 100, -1, 4)),
            ("sparse", (1, None, "a")),
            ("scale_grad_by_freq", (1, None, "a")),
        )
        for v in vs
    },
    **{
        f"embedding{b}_renorm_{k}_{v!r}": (
            lambda T, b=b, k=k, v=v: getattr(_F(T), "embedding" + b)(
                _idx(T), _w(T), **({"max_norm": 3.0} | {k: v})
            )
        )
        for b in ("", "_bag")
        for k, vs in (
            ("max_norm", ("a", 1 + 2j, -3.0)),
            ("norm_type", ("a", None, 1j, 0, -1, 0.5)),
        )
        for v in vs
    },
    "embedding_renorm_0d_tensor": lambda T: _F(T).embedding(_idx(T), _w(T), max_norm=T.tensor(3.0)),
    "embedding_renorm_half": lambda T: _F(T).embedding(
        _idx(T), _w(T, "float16"), max_norm=3.0, norm_type=0
    ),
    **{
        f"embedding_renorm_{dt}": (
            lambda T, dt=dt: _F(T).embedding(_idx(T), _w(T, dt), max_norm=1.0, padding_idx=1.5)
        )
        for dt in ("int64", "bool", "complex64")
    },
    "embedding_renorm_int_no_rows": lambda T: _F(T).embedding(
        T.zeros(0, dtype=T.int64), _w(T, "int64"), max_norm=1.0
    ),
    **{
        f"embedding_bag_offsets0_{dt}": (
            lambda T, dt=dt: _F(T).embedding_bag(
                T.tensor([0, 1, 2], dtype=getattr(T, dt)),
                _w(T),
                T.tensor([1, 2], dtype=getattr(T, dt)),
            )
        )
        for dt in ("int32", "int64")
    },
    "embedding_bag_per_sample_weights_shape": lambda T: _F(T).embedding_bag(
        _idx(T), _w(T), per_sample_weights=T.ones(4)
    ),
    "embedding_bag_per_sample_weights_list": lambda T: _F(T).embedding_bag(
        _idx(T), _w(T), per_sample_weights=[1.0]
    ),
    "embedding_bag_list": lambda T: _F(T).embedding_bag([0, 1], _w(T)),
    # ---- normalize: torch clamps with the method clamp_min
    **{
        f"normalize_eps_{e!r}": (lambda T, e=e: _F(T).normalize(_x(T), eps=e))
        for e in ("a", None, 1 + 1j, 0, -1)
    },
    # ---- batch_norm: the binding's scalar types, eps in torch's order, 0-d/1-d/empty inputs
    **{
        f"batch_norm_{k}_{v!r}_training{tr}": (
            lambda T, k=k, v=v, tr=tr: _F(T).batch_norm(
                _t(T, _X234), _stat(T, 0), _stat(T, 1), training=tr, **{k: v}
            )
        )
        for k, vs in (("momentum", ("a", 1, None)), ("eps", ("a", None, 0.0, -1.0)))
        for v in vs
        for tr in (False, True)
    },
    **{
        f"batch_norm_training_{v!r}": (
            lambda T, v=v: _F(T).batch_norm(_t(T, _X234), _stat(T, 0), _stat(T, 1), training=v)
        )
        for v in ("a", 1, None)
    },
    "batch_norm_running_mean_2d": lambda T: _F(T).batch_norm(
        _t(T, _X234), _stat(T, 0).reshape(1, 3), _stat(T, 1)
    ),
    "batch_norm_running_var_2d_training": lambda T: _F(T).batch_norm(
        _t(T, _X234), _stat(T, 0), _stat(T, 1).reshape(3, 1), training=True
    ),
    **{
        f"batch_norm_{shape}_training{tr}_stats{st}_weight{w}": (
            lambda T, shape=shape, tr=tr, st=st, w=w: _F(T).batch_norm(
                T.ones(shape, dtype=T.float64),
                None if st is None else _stat(T, 0, st),
                None if st is None else _stat(T, 1, st),
                None if w is None else _stat(T, 1, w),
                training=tr,
            )
        )
        for shape in ((3,), (), (1,), (0,), (0, 3), (2, 0), (0, 3, 4))
        for tr in (False, True)
        for st in (None, 3, 0, 1)
        for w in (None, 3, 0)
    },
    "batch_norm_empty_bias0": lambda T: _F(T).batch_norm(
        T.zeros(0, 3), _stat(T, 0), _stat(T, 1), None, _stat(T, 0, 0)
    ),
    "batch_norm_empty_int": lambda T: _F(T).batch_norm(
        T.zeros(0, 3, dtype=T.int64), _stat(T, 0), _stat(T, 1), _stat(T, 1)
    ),
    # ---- instance_norm: the same, with its batch folded into the channels
    **{
        f"instance_norm_{k}_{v!r}": (
            lambda T, k=k, v=v: _F(T).instance_norm(_t(T, _X234), **{k: v})
        )
        for k, vs in (
            ("eps", ("a", None)),
            ("momentum", ("a", None)),
            ("use_input_stats", ("a", 1)),
        )
        for v in vs
    },
    "instance_norm_list": lambda T: _F(T).instance_norm([1.0]),
    **{
        f"instance_norm_{shape}_stats{st}_weight{w}_uis{u}": (
            lambda T, shape=shape, st=st, w=w, u=u: _F(T).instance_norm(
                T.ones(shape, dtype=T.float64),
                None if st is None else _stat(T, 0, st),
                None if st is None else _stat(T, 1, st),
                None if w is None else _stat(T, 1, w),
                use_input_stats=u,
            )
        )
        for shape in ((3,), (), (1,), (0,), (0, 3, 4), (2, 0, 4), (2, 3, 0))
        for st in (None, 3, 5)
        for w in (None, 3)
        for u in (False, True)
    },
    # ---- dropout bindings: the input and train arguments, in eval mode too
    **{
        f"{n}_{what}_training{tr}_inplace{ip}": (
            lambda T, n=n, what=what, tr=tr, ip=ip: getattr(_F(T), n)(
                [1.0] if what == "list" else _t(T, _X2345),
                0.5,
                "a" if what == "train_str" else tr,
                ip,
            )
        )
        for n in (
            "dropout",
            "dropout2d",
            "dropout3d",
            "alpha_dropout",
            "feature_alpha_dropout",
        )
        for what in ("list", "train_str")
        for tr in (False, True)
        for ip in (False, True)
    },
    "gumbel_dim_float": lambda T: _F(T).gumbel_softmax(_x(T), dim=1.5),
    # ---- gumbel_softmax (values are random: only the errors and warnings are compared)
    "gumbel_eps": lambda T: _F(T).gumbel_softmax(_x(T), eps=1e-5).shape,
    "gumbel_complex": lambda T: _F(T).gumbel_softmax(_x(T, "complex64")),
    "gumbel_int": lambda T: _F(T).gumbel_softmax(_x(T, "int64")),
    # ---- dropout: p's range before its type; empty inputs
    **{
        f"{n}_p_{p!r}": (lambda T, n=n, p=p: getattr(_F(T), n)(_t(T, _X2345), p))
        for n in (
            "dropout",
            "dropout1d",
            "dropout2d",
            "dropout3d",
            "alpha_dropout",
            "feature_alpha_dropout",
        )
        for p in ("a", None, 1.5, -0.1, [0.5])
    },
    **{
        f"{n}_empty_{dt}": (
            lambda T, n=n, dt=dt: getattr(_F(T), n)(
                T.zeros(0, 3, 4, 5, dtype=getattr(T, dt)), 0.5, True
            )
        )
        for n in (
            "dropout",
            "dropout2d",
            "dropout3d",
            "alpha_dropout",
            "feature_alpha_dropout",
        )
        for dt in ("float32", "int64", "bool")
    },
    "dropout_p1": lambda T: _F(T).dropout(_x(T), 1.0),
    "dropout_eval_int": lambda T: _F(T).dropout(_x(T, "int64"), 0.5, False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name):
    _same(CASES[name])
