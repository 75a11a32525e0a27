"""Parity guards of the hundred-and-first wave, which cut per-call time of common functional
calls without changing behaviour. Each fast path it added skips work in the common case only,
so these cases drive every call both ways and compare ember with torch (first error: type and
full text; else dtype, shape, contiguity and values):

* layer_norm: a check-free path when the input is unnamed and floating and the parameters have
  normalized_shape and the input's dtype (every other call runs torch's checks in its order:
  empty or mismatched shapes, parameter shapes and dtypes, integer inputs, non-tensors);
  (C,) shapes taken as they are; the affine step untiled on small inputs and tiled by one
  broadcast copy on large ones (forward and backward);
* softmax / log_softmax: an int dim of a float input resolved in place (out-of-range dims,
  0-d inputs, bool dims, integer inputs and dtype= still take the checked path);
* relu: zeros from calloc for a C-contiguous float input (transposed, channels_last and
  expanded inputs keep torch's layouts); gelu: its relu step as max(0, x) (-0.0, NaN, inf);
* lerp (number weight) and addcmul: the result built in the difference's / product's buffer
  (broadcast operands on either side, promotion, integer and complex values, in-place forms).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly

_R = np.random.default_rng(101)
_X46 = _R.standard_normal((4, 6))
_X423 = _R.standard_normal((4, 2, 3))
_W6 = _R.standard_normal(6)
_B6 = _R.standard_normal(6)
_Y46 = _R.standard_normal((4, 6))
_X6 = _R.standard_normal(6)
_SPECIAL = np.array([[-0.0, 0.0, np.nan, np.inf, -np.inf, -1.5], [0.5, -3.0, 2.0, 7.0, -9.0, 1e-3]])
_SPECIAL_GELU = np.where(_SPECIAL == np.inf, 30.0, _SPECIAL)  # (+inf: torch's AVX-512 NaN)
_X2345 = _R.standard_normal((2, 3, 4, 5))


def _t(T, arr, dtype="float32", rg=False):
    t = T.tensor(arr, dtype=getattr(T, dtype))
    return t.requires_grad_() if rg else t


def _F(T):
    return T.nn.functional


def _outcome(call, T):
    """(error type, full text) or ("ok", dtype, shape, contiguous, values) of ``call(T)``."""
    e, r = run_quietly(call, T)
    if e is not None:
        return (type(e).__name__, str(e)), None
    vals = r.detach().to(T.complex128 if r.dtype.is_complex else T.float64).numpy()
    return ("ok", str(r.dtype).split(".")[-1], tuple(r.shape), r.is_contiguous()), vals


def _same(call):
    (te, tv), (ee, ev) = _outcome(call, torch), _outcome(call, ember)
    assert ee == te
    if tv is not None:
        tol = 2e-3 if te[1] in ("float16", "bfloat16") else 1e-5
        np.testing.assert_allclose(ev, tv, rtol=tol, atol=tol, equal_nan=True)


def _ln(T, x, ns, w=None, b=None, **kw):
    return _F(T).layer_norm(x, ns, w, b, **kw)


LAYER_NORM = {
    # ---- the common calls (the check-free path)
    "f32_affine": lambda T: _ln(T, _t(T, _X46), (6,), _t(T, _W6), _t(T, _B6)),
    "f32_list_shape": lambda T: _ln(T, _t(T, _X46), [6], _t(T, _W6), _t(T, _B6)),
    "f32_int_shape": lambda T: _ln(T, _t(T, _X46), 6, _t(T, _W6)),
    "f32_size_shape": lambda T: _ln(T, _t(T, _X46), _t(T, _X46).shape[1:], None, _t(T, _B6)),
    "f32_two_dims": lambda T: _ln(
        T, _t(T, _X423), (2, 3), _t(T, _W6.reshape(2, 3)), _t(T, _B6.reshape(2, 3))
    ),
    "f32_no_affine": lambda T: _ln(T, _t(T, _X46), (6,)),
    "f64_affine": lambda T: _ln(T, _t(T, _X46, "float64"), (6,), _t(T, _W6, "float64")),
    "f16_affine": lambda T: _ln(T, _t(T, _X46, "float16"), (6,), _t(T, _W6, "float16")),
    "bf16_affine": lambda T: _ln(T, _t(T, _X46, "bfloat16"), (6,), _t(T, _W6, "bfloat16")),
    "f16_input_f32_params": lambda T: _ln(T, _t(T, _X46, "float16"), (6,), _t(T, _W6), _t(T, _B6)),
    "transposed_input": lambda T: _ln(T, _t(T, _X46).t(), (4,)),
    "eps_tensor_0d": lambda T: _ln(T, _t(T, _X46), (6,), eps=_t(T, 0.5)),
    "torch_layer_norm": lambda T: T.layer_norm(_t(T, _X46), (6,), _t(T, _W6), _t(T, _B6)),
    "torch_layer_norm_list_shape": lambda T: T.layer_norm(_t(T, _X46), [2, 3][1:] * 2, None),
    # ---- every other call keeps torch's checks, in its order
    "empty_shape": lambda T: _ln(T, _t(T, _X46), ()),
    "weight_shape": lambda T: _ln(T, _t(T, _X46), (6,), _t(T, _W6[:5])),
    "bias_shape": lambda T: _ln(T, _t(T, _X46), (6,), _t(T, _W6), _t(T, _B6[:5])),
    "weight_shape_before_input_shape": lambda T: _ln(T, _t(T, _X46), (5,), _t(T, _W6)),
    "input_shape": lambda T: _ln(T, _t(T, _X46), (5,)),
    "input_rank": lambda T: _ln(T, _t(T, _X46), (3, 4, 6)),
    "int_input": lambda T: _ln(T, _t(T, _X46, "int64"), (6,)),
    "bool_input": lambda T: _ln(T, _t(T, _X46 > 0, "bool"), (6,)),
    "f64_weight_f32_input": lambda T: _ln(T, _t(T, _X46), (6,), _t(T, _W6, "float64")),
    "f64_bias_f32_weight": lambda T: _ln(T, _t(T, _X46), (6,), _t(T, _W6), _t(T, _B6, "float64")),
    "f32_bias_f64_input": lambda T: _ln(T, _t(T, _X46, "float64"), (6,), None, _t(T, _B6)),
    "f16_input_f64_params": lambda T: _ln(T, _t(T, _X46, "float16"), (6,), _t(T, _W6, "float64")),
    "list_input": lambda T: _ln(T, _X46.tolist(), (6,)),
    "list_weight": lambda T: _ln(T, _t(T, _X46), (6,), _W6.tolist()),
    "str_shape": lambda T: _ln(T, _t(T, _X46), "6"),
}


@pytest.mark.parametrize("name", list(LAYER_NORM))
def test_layer_norm(name):
    _same(LAYER_NORM[name])


@pytest.mark.parametrize("shape", [(4, 6), (3, 8, 16), (2, 3, 2), (600, 64), (2, 40, 6)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_grads(shape, affine):
    """Forward and float64 gradients under a non-uniform upstream, small inputs (untiled) and
    large ones (tiled)."""
    x = _R.standard_normal(shape)
    w, b = _R.standard_normal(shape[-1]), _R.standard_normal(shape[-1])
    up = np.arange(1.0, x.size + 1).reshape(shape) / x.size
    res = []
    for T in (torch, ember):
        xt = _t(T, x, "float64", rg=True)
        wt, bt = (
            (_t(T, w, "float64", rg=True), _t(T, b, "float64", rg=True))
            if affine
            else (
                None,
                None,
            )
        )
        y = _F(T).layer_norm(xt, shape[-1:], wt, bt)
        y.backward(_t(T, up, "float64"))
        leaves = [xt, wt, bt] if affine else [xt]
        res.append([y.detach().numpy()] + [t.grad.numpy() for t in leaves])
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-10)


def _sm(fn, dim, arr=_X46, dtype="float32", **kw):
    return lambda T: getattr(_F(T), fn)(_t(T, arr, dtype), dim, **kw)


SOFTMAX = {
    **{
        f"{fn}_{k}": case
        for fn in ("softmax", "log_softmax")
        for k, case in {
            "dim_last": _sm(fn, -1),
            "dim_first": _sm(fn, 0),
            "dim_1": _sm(fn, 1),
            "dim_minus_2": _sm(fn, -2),
            "dim_out_of_range": _sm(fn, 2),
            "dim_out_of_range_negative": _sm(fn, -3),
            "zero_dim_0": _sm(fn, 0, 1.5),
            "zero_dim_minus_1": _sm(fn, -1, 1.5),
            "zero_dim_1": _sm(fn, 1, 1.5),
            "one_dim": _sm(fn, 0, _X6),
            "bool_dim": _sm(fn, True),
            "float_dim": _sm(fn, 1.0),
            "int_input": _sm(fn, 1, _X46, "int64"),
            "f16_input": _sm(fn, 1, _X46, "float16"),
            "f64_dtype": lambda T, fn=fn: getattr(_F(T), fn)(_t(T, _X46), 1, dtype=T.float64),
            "int_input_f32_dtype": lambda T, fn=fn: getattr(_F(T), fn)(
                _t(T, _X46, "int64"), 1, dtype=T.float32
            ),
            "special_values": _sm(fn, 1, _SPECIAL),
            "transposed": lambda T, fn=fn: getattr(_F(T), fn)(_t(T, _X46).t(), 1),
            "transposed_dim0": lambda T, fn=fn: getattr(_F(T), fn)(_t(T, _X46).t(), 0),
        }.items()
    }
}


@pytest.mark.parametrize("name", list(SOFTMAX))
def test_softmax(name):
    _same(SOFTMAX[name])


def _layouts(T, dtype, special):
    """The inputs whose layouts relu/gelu must keep: contiguous, transposed, channels_last,
    expanded, 0-d, and the special values."""
    return {
        "contiguous": _t(T, _X46, dtype),
        "transposed": _t(T, _X46, dtype).t(),
        "channels_last": _t(T, _X2345, dtype).to(memory_format=T.channels_last),
        "expanded": _t(T, _X46[:1], dtype).expand(4, 6),
        "zero_dim": _t(T, -0.75, dtype),
        "special": _t(T, special, dtype),
    }


_LAYOUTS = ["contiguous", "transposed", "channels_last", "expanded", "zero_dim", "special"]
_RELU = {
    "F.relu": lambda T, x: _F(T).relu(x),
    "torch.relu": lambda T, x: T.relu(x),
    "Tensor.relu": lambda T, x: x.relu(),
}
_GELU = {
    "F.gelu": lambda T, x: _F(T).gelu(x),
    "F.gelu_tanh": lambda T, x: _F(T).gelu(x, approximate="tanh"),
}


def _layout_case(fn, dtype, layout, special):
    def call(T):
        return fn(T, _layouts(T, dtype, special)[layout])

    _same(call)
    strides = [call(T).stride() for T in (torch, ember)]
    assert strides[0] == strides[1]


@pytest.mark.parametrize("layout", _LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("fn", list(_RELU))
def test_relu_layouts(fn, dtype, layout):
    _layout_case(_RELU[fn], dtype, layout, _SPECIAL)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_relu_keeps_negative_zero(dtype, layout):
    """relu(-0.0) is -0.0 in torch (max(0, x) gives x on a tie); values compare equal to +0.0,
    so the sign bits are compared."""

    def signs(T):
        x = {"contiguous": _t(T, [[-0.0, 0.0, -1.0]] * 2, dtype)}
        x["transposed"] = x["contiguous"].t()
        x["expanded"] = _t(T, [[-0.0, 0.0, -1.0]], dtype).expand(2, 3)
        return _F(T).relu(x[layout]).signbit().tolist()

    assert signs(ember) == signs(torch)


# (a transposed input, and tanh's float16 expanded one: torch keeps their layouts, ember's gelu
# returns them contiguous, as it did before this wave)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "zero_dim", "special"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("fn", list(_GELU))
def test_gelu_layouts(fn, dtype, layout):
    _layout_case(_GELU[fn], dtype, layout, _SPECIAL_GELU)


def test_gelu_signed_zero_and_blocks():
    """gelu keeps -0.0 (torch's x * Phi(x)); a large input runs block by block."""
    for T in (torch, ember):
        assert bool(_F(T).gelu(_t(T, [-0.0, 0.0])).signbit()[0])
    big = _R.standard_normal(140_000) * 4
    big[::997] = -0.0
    r = [_F(T).gelu(_t(T, big)).numpy() for T in (torch, ember)]
    np.testing.assert_allclose(r[1], r[0], rtol=1e-5, atol=1e-6)
    zeros = big == 0  # (an underflowing tail's zero is +0.0 in ember, -0.0 in torch)
    assert np.array_equal(np.signbit(r[1][zeros]), np.signbit(r[0][zeros]))


def _lerp(a, b, w, dtype="float32", wdt=None):
    def call(T):
        wt = _t(T, w, wdt or dtype) if isinstance(w, np.ndarray) else w
        return T.lerp(_t(T, a, dtype), _t(T, b, dtype), wt)

    return call


LERP = {
    **{
        f"weight_{k}": _lerp(_X46, _Y46, w)
        for k, w in {
            "0.3": 0.3,
            "0.7": 0.7,
            "0": 0,
            "1": 1,
            "neg": -2.5,
            "true": True,
            "nan": float("nan"),
            "inf": float("inf"),
            "big_int": 2**70,
        }.items()
    },
    "broadcast_input": _lerp(_X6, _Y46, 0.3),
    "broadcast_end": _lerp(_X46, _X6, 0.7),
    "broadcast_end_low_weight": _lerp(_X46, _X6, 0.2),
    "zero_dim": _lerp(0.5, 2.0, 0.7),
    "zero_dim_low_weight": _lerp(0.5, 2.0, 0.2),
    "zero_dim_input_matrix_end": _lerp(0.5, _Y46, 0.7),
    "f64": _lerp(_X46, _Y46, 0.7, "float64"),
    "f16": _lerp(_X46, _Y46, 0.7, "float16"),
    "bf16": _lerp(_X46, _Y46, 0.3, "bfloat16"),
    "complex_weight": _lerp(_X46, _Y46, 0.5 + 0.5j, "complex64"),
    "complex_weight_real_input": _lerp(_X46, _Y46, 0.5 + 0.5j),
    "int_input": _lerp(_X46, _Y46, 0.5, "int64"),
    "end_dtype": lambda T: T.lerp(_t(T, _X46), _t(T, _Y46, "float64"), 0.5),
    "tensor_weight": _lerp(_X46, _Y46, _X6),
    "special_values": _lerp(_SPECIAL, _SPECIAL[::-1], 0.7),
    "method": lambda T: _t(T, _X46).lerp(_t(T, _Y46), 0.8),
    "method_inplace": lambda T: _t(T, _X46).lerp_(_t(T, _X6), 0.8),
    "method_inplace_low_weight": lambda T: _t(T, _X46).lerp_(_t(T, _Y46), 0.1),
    "inplace_broadcast_self": lambda T: _t(T, _X6).lerp_(_t(T, _Y46), 0.8),
}


@pytest.mark.parametrize("name", list(LERP))
def test_lerp(name):
    _same(LERP[name])


def _addcmul(a, b, c, dtype="float32", **kw):
    def call(T):
        return T.addcmul(_t(T, a, dtype), _t(T, b, dtype), _t(T, c, dtype), **kw)

    return call


def _aliased_addcmul_(x):
    return x.addcmul_(x, x, value=0.5)


ADDCMUL = {
    **{
        f"value_{k}": _addcmul(_X46, _Y46, _X46, value=v)
        for k, v in {
            "default": 1,
            "half": 0.5,
            "two": 2,
            "true": True,
            "false": False,
            "neg": -3,
            "complex_real": 2 + 0j,
            "complex": 2 + 1j,
        }.items()
    },
    "broadcast_input": _addcmul(_X6, _Y46, _X46, value=0.5),
    "broadcast_tensors": _addcmul(_X46, _X6, _X6, value=0.5),
    "broadcast_one_tensor": _addcmul(_X46, _X6, _Y46, value=2),
    "zero_dim": _addcmul(1.5, 2.0, -0.5, value=0.5),
    "f64": _addcmul(_X46, _Y46, _X46, "float64", value=0.25),
    "f16": _addcmul(_X46, _Y46, _X46, "float16", value=0.25),
    "complex": _addcmul(_X46, _Y46, _X46, "complex64", value=0.5 + 1j),
    "int_value_int": _addcmul(_X46 * 4, _Y46 * 4, _X46 * 4, "int64", value=3),
    "int_value_float": _addcmul(_X46 * 4, _Y46 * 4, _X46 * 4, "int64", value=0.5),
    "int32_overflowing": _addcmul(_X46 * 4e4, _Y46 * 4e4, _X46 * 4e4, "int32", value=1),
    "bool_input": _addcmul(_X46 > 0, _Y46 > 0, _X46 > 0, "bool"),
    "promoted": lambda T: T.addcmul(_t(T, _X46), _t(T, _Y46, "float64"), _t(T, _X46), value=0.5),
    "promoted_zero_dim": lambda T: T.addcmul(
        _t(T, _X46), _t(T, 2.0, "float64"), _t(T, _X46), value=0.5
    ),
    "special_values": _addcmul(_SPECIAL, _SPECIAL, _SPECIAL[::-1], value=0.5),
    "method": lambda T: _t(T, _X46).addcmul(_t(T, _Y46), _t(T, _Y46), value=0.5),
    "method_inplace": lambda T: _t(T, _X46).addcmul_(_t(T, _X6), _t(T, _Y46), value=0.5),
    "inplace_aliased": lambda T: _aliased_addcmul_(_t(T, _X46)),
    "inplace_broadcast_self": lambda T: _t(T, _X6).addcmul_(_t(T, _Y46), _t(T, _Y46)),
}


@pytest.mark.parametrize("name", list(ADDCMUL))
def test_addcmul(name):
    _same(ADDCMUL[name])


@pytest.mark.parametrize("op", ["lerp", "addcmul"])
def test_grads(op):
    """float64 gradients of the in-buffer results under a non-uniform upstream."""
    up = np.arange(1.0, 25.0).reshape(4, 6) / 24
    res = []
    for T in (torch, ember):
        a, b = _t(T, _X6, "float64", rg=True), _t(T, _Y46, "float64", rg=True)
        y = T.lerp(a, b, 0.7) if op == "lerp" else T.addcmul(a, b, b, value=0.5)
        y.backward(_t(T, up, "float64"))
        res.append([y.detach().numpy(), a.grad.numpy(), b.grad.numpy()])
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)
