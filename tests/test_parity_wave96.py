"""Parity regressions of the ninety-sixth wave: the argument handling of the pointwise,
arithmetic and comparison ops fuzzed against torch (numbers, None, str, lists, numpy arrays and
scalars, 0-d and 1-d tensors where torch wants a Tensor, a Number, a float, an int or a bool;
function, method, in-place and operator forms). It found:

* eq/ne/lt/le/gt/ge, rsub, fmod, copysign and lerp taking a number as their first argument
  (torch has no (Number self) overload: its "invalid combination" listing);
* the functions and methods taking a numpy array as a tensor (torch's parser refuses it; only
  the operators x + a, x == a, x ** a take one);
* add/sub/mul/div/floor_divide (multiply, subtract, divide, true_divide) of two numbers
  refused (torch takes the first as a 0-d tensor: ``torch.add(1, 2)`` is ``tensor(3)``), and
  every other op's numbers-only call naming ember's own error;
* addcmul/addcdiv's ``value``, nan_to_num's nan/posinf/neginf and add/sub/rsub's ``alpha``
  taking None, str and lists into the kernel (torch: "argument 'value' must be Number, not
  str"; rsub lists its overloads), a 0-d tensor alpha building a broken tensor; addcdiv with
  ``value=True`` refused; a complex value with no imaginary part refused, with one on an
  integer tensor named by numpy's C type (torch: int64_t), a numpy complex64 value taken as
  complex (torch: its real part); nan_to_num(nan=None) leaving NaN (torch: 0);
* special.xlogy reported as xlogy; floor_divide and the shifts without torch's overloads;
* clamp with a complex bound on a floating input refused as complex (torch: "value cannot be
  converted to type double", 1+0j taken), a bound past float16/bfloat16/float32's range
  silently inf, a tensor bound with dims next to a number accepted, x.clamp_("a") naming
  clamp_min_; clamp_min/clamp_max without torch's overloads;
* where(c, None, None) answering as where(c); Tensor.where's errors without its signatures;
* div's non-str rounding_mode compared as a string (torch: its overloads; divide lists one
  more); round's non-int decimals without torch's listing (a numpy integer or 0-d integer
  tensor is taken), a decimals past int64 accepted;
* isclose/allclose taking a None/str rtol into the comparison, a 0-d tensor rtol building a
  broken tensor, equal_nan=1 accepted, a NaN rtol accepted, -1.0 printed as "-1.0";
  isclose(2, x) leaking AttributeError; x.allclose(1) counting self;
* ldexp's out= error for a complex result naming ldexp (torch: the mul's "result type").

Left: the operators with a numpy array follow numpy where torch's Tensor.__add__ returns
NotImplemented (x + int64 array is float64 in torch, requires_grad then fails, x < a and
a + x raise); positional alpha (torch.add(x, 2, 3), the deprecated add(x, 2, x)); a scalar
in-place operand with a bad alpha (x.sub_(1, alpha="s") names 'other'); the position of
keyword-or-positional float options (isclose(x, x, None), nan_to_num(x, "a"): torch adds
"(position 3)"); clamp(x, min="a") printed as positional; round(x, 1) and x.round(1) (torch's
own texts); complex32 (where/pow/div with a float16 tensor and a complex number); float_power
of 0 ** 0j; ldexp of a float16 exponent (torch computes 2 ** e in float16); x.divide_(2,
rounding_mode=1) listing div_'s overloads (inplace_signatures has no divide_).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly


def _x(T, dtype="float32"):
    return T.tensor([[1.5, -2.0, 0.0], [3.0, 4.5, -1.0]], dtype=getattr(T, dtype))


def _xi(T, dtype="int64"):
    return T.tensor([[1, -2, 0], [3, 4, -1]], dtype=getattr(T, dtype))


def _nan(T):
    return T.tensor([float("nan"), float("inf"), -float("inf"), 1.0])


_A = np.array([[1.0, 2.0, 3.0], [0.5, 1.0, 2.0]], dtype=np.float32)
_A1 = np.array([0.5, 1.0, 2.0])


def _res(r, T):
    """A comparable form of a result: a tensor's dtype, shape and values; tuples item by item."""
    if isinstance(r, (tuple, list)):
        return tuple(_res(v, T) for v in r)
    if not isinstance(r, T.Tensor):
        return ("value", type(r).__name__, r)
    v = r.detach()
    if v.dtype == T.bool:
        vals = v.numpy().tolist()
    else:
        v = v.to(T.complex128 if v.is_complex() else T.float64).numpy()
        vals = np.round(np.nan_to_num(v, nan=-0.125), 6).tolist()  # (nan != nan)
    return ("ok", str(r.dtype).split(".")[-1], tuple(r.shape), vals)


def _outcome(call, T):
    """(error type, full text) or the result's comparable form, of ``call(T)``."""
    e, r = run_quietly(call, T)
    return (type(e).__name__, str(e)) if e is not None else _res(r, T)


CASES = {
    # ---- no (Number self) overload: comparisons, rsub, fmod, copysign, lerp
    **{
        f"{n}_number_first": (lambda T, n=n: getattr(T, n)(2, _x(T)))
        for n in ("eq", "ne", "lt", "le", "gt", "ge", "rsub", "fmod", "copysign")
    },
    "ge_bool_first": lambda T: T.ge(True, _x(T)),
    "lt_float_first": lambda T: T.lt(2.5, _x(T)),
    "lerp_number_input": lambda T: T.lerp(1.0, _x(T), 0.5),
    "lerp_number_end": lambda T: T.lerp(_x(T), 1.0, 0.5),
    "lerp_str_weight": lambda T: T.lerp(_x(T), _x(T), "a"),
    "lerp_none_weight": lambda T: T.lerp(_x(T), _x(T), None),
    "remainder_number_first": lambda T: T.remainder(2, _x(T)),  # (it has one)
    # ---- functions and methods refuse a numpy array; the operators take one
    **{
        f"{n}_ndarray": (lambda T, n=n: getattr(T, n)(_x(T), _A))
        for n in ("add", "eq", "pow", "xlogy", "fmod", "lerp", "maximum", "atan2", "hypot")
        if n != "lerp"
    },
    "mul_ndarray_first": lambda T: T.mul(_A, _x(T)),
    "lerp_ndarray_end": lambda T: T.lerp(_x(T), _A, 0.5),
    "lerp_ndarray_weight": lambda T: T.lerp(_x(T), _x(T), _A),
    "method_add_ndarray": lambda T: _x(T).add(_A),
    "method_eq_ndarray": lambda T: _x(T).eq(_A),
    "method_pow_ndarray": lambda T: _x(T).pow(_A),
    "method_remainder_ndarray": lambda T: _x(T).remainder(_A),
    "method_floor_divide_ndarray": lambda T: _x(T).floor_divide(_A),
    "operator_add_ndarray": lambda T: _x(T) + _A,
    "operator_sub_ndarray": lambda T: _x(T) - _A,
    "operator_mul_ndarray": lambda T: _x(T) * _A,
    "operator_div_ndarray": lambda T: _x(T) / _A,
    "operator_eq_ndarray": lambda T: _x(T) == _A,
    "operator_pow_ndarray": lambda T: _x(T) ** _A,
    # ---- numbers only: add/sub/mul/div take the first as a 0-d tensor, the rest refuse
    "add_numbers": lambda T: T.add(1, 2),
    "add_numbers_float": lambda T: T.add(1, 2.5),
    "add_numbers_alpha": lambda T: T.add(1, 2, alpha=2),
    "add_numbers_complex": lambda T: T.add(1, 2j),
    "add_bools": lambda T: T.add(True, False),
    "add_numpy_float64": lambda T: T.add(np.float64(1), 2.0),  # (a weak float: float32)
    "add_numpy_bool": lambda T: T.add(np.bool_(True), 1),
    "add_number_str": lambda T: T.add(1, "a"),
    "add_numbers_out": lambda T: T.add(1, 2, out=T.empty(())),
    "sub_numbers": lambda T: T.sub(1.5, 2, alpha=2),
    "sub_bools": lambda T: T.sub(True, True),
    "mul_numbers": lambda T: T.mul(True, 2.5),
    "mul_numbers_by_keyword": lambda T: T.mul(input=1, other=2),
    "div_numbers": lambda T: T.div(7, 2),
    "div_numbers_floor": lambda T: T.div(7, 2, rounding_mode="floor"),
    "div_by_zero_numbers": lambda T: T.div(1, 0),
    "true_divide_numbers": lambda T: T.true_divide(7, 2),
    "floor_divide_numbers": lambda T: T.floor_divide(7, 2.0),
    "multiply_numbers": lambda T: T.multiply(3, 2),
    "subtract_numbers": lambda T: T.subtract(3, 2.5),
    "divide_numbers_trunc": lambda T: T.divide(-7.5, 2, rounding_mode="trunc"),
    **{
        f"{n}_numbers": (lambda T, n=n: getattr(T, n)(2, 3))
        for n in ("eq", "remainder", "pow", "xlogy", "atan2", "maximum", "bitwise_and", "hypot")
    },
    "bitwise_left_shift_numbers": lambda T: T.bitwise_left_shift(2.5, 3),
    # ---- the Number arguments refuse non-numbers: addcmul/addcdiv value
    **{
        f"{fn}_value_{k}": (
            lambda T, fn=fn, v=v: getattr(T, fn)(
                _x(T), _x(T), _x(T) + 10, value=v(T) if callable(v) else v
            )
        )
        for fn in ("addcmul", "addcdiv")
        for k, v in {
            "none": None,
            "str": "a",
            "list": [1],
            "bool": True,
            "complex": 1j,
            "real_complex": 1 + 0j,
            "numpy_complex64": np.complex64(2j),  # (its real part)
            "numpy_float": np.float32(2),
            "tensor_0d": lambda T: T.tensor(2.0),
            "tensor_1d": lambda T: T.tensor([2.0]),
        }.items()
    },
    "addcmul__value_str": lambda T: _x(T).addcmul_(_x(T), _x(T), value="a"),
    "addcdiv__value_true": lambda T: _x(T).addcdiv_(_x(T), _x(T) + 10, value=True),
    **{
        f"addcmul_{d}_complex_value": (
            lambda T, d=d: T.addcmul(_xi(T, d), _xi(T, d), _xi(T, d), value=2j)
        )
        for d in ("int64", "int32", "int8", "uint8")
    },
    "addcmul_int_real_complex_value": lambda T: T.addcmul(_xi(T), _xi(T), _xi(T), value=1 + 0j),
    "addcmul_int_complex_tensor_value": lambda T: T.addcmul(
        _xi(T), _xi(T), _xi(T), value=T.tensor(2j)
    ),
    "addcmul_half_complex_value": lambda T: T.addcmul(
        _x(T, "float16"), _x(T, "float16"), _x(T, "float16"), value=2j
    ),
    # ---- nan_to_num's float? options
    **{
        f"nan_to_num_{k}_{n}": (
            lambda T, k=k, v=v: T.nan_to_num(_nan(T), **{k: v(T) if callable(v) else v})
        )
        for k in ("nan", "posinf", "neginf")
        for n, v in {
            "none": None,
            "str": "a",
            "list": [1],
            "complex": 1j,
            "numpy_complex64": np.complex64(3),
            "numpy_int": np.int64(3),
            "bool": True,
            "tensor_0d": lambda T: T.tensor(2.0),
            "tensor_0d_complex": lambda T: T.tensor(2 + 1j),
            "tensor_1d": lambda T: T.tensor([2.0]),
        }.items()
    },
    "nan_to_num_method_str": lambda T: _nan(T).nan_to_num(posinf="a"),
    "nan_to_num_inplace_str": lambda T: _nan(T).nan_to_num_(posinf="a"),
    # ---- alpha
    "add_alpha_none": lambda T: T.add(_x(T), _x(T), alpha=None),
    "add_alpha_str": lambda T: T.add(_x(T), _x(T), alpha="a"),
    "add_alpha_list": lambda T: T.add(_x(T), 1, alpha=[1]),
    "add_alpha_tensor_0d": lambda T: T.add(_x(T), 1, alpha=T.tensor(2.0)),
    "add_alpha_tensor_1d": lambda T: T.add(_x(T), 1, alpha=T.tensor([2.0])),
    "add_alpha_numpy": lambda T: T.add(_x(T), 1, alpha=np.float64(2.0)),
    "add_int_alpha_tensor_float": lambda T: T.add(_xi(T), _xi(T), alpha=T.tensor(2.5)),
    "sub_alpha_none": lambda T: T.sub(_x(T), 1, alpha=None),
    "method_add__alpha_str": lambda T: _x(T).add_(_x(T), alpha="a"),
    "rsub_alpha_str": lambda T: T.rsub(_x(T), 2, alpha="a"),
    "rsub_alpha_none": lambda T: T.rsub(_x(T), _x(T), alpha=None),
    "rsub_alpha_tensor_0d": lambda T: T.rsub(_x(T), 2, alpha=T.tensor(3.0)),
    # ---- overload listings and alias names
    "special_xlogy_str": lambda T: T.special.xlogy(_x(T), "a"),
    "special_xlogy_none_first": lambda T: T.special.xlogy(None, _x(T)),
    "special_xlogy_numbers": lambda T: T.special.xlogy(2, 3),
    "special_xlogy_out": lambda T: T.special.xlogy(_x(T), _x(T).abs(), out=T.empty(2, 3)),
    "xlogy_str": lambda T: T.xlogy(_x(T), "a"),
    "xlogy_str_first": lambda T: T.xlogy("a", _x(T)),
    "method_xlogy_ndarray": lambda T: _x(T).xlogy(_A),
    "pow_str": lambda T: T.pow(_x(T), "a"),
    "pow_str_first": lambda T: T.pow("a", _x(T)),
    "method_pow_str": lambda T: _x(T).pow("a"),
    "float_power_none": lambda T: T.float_power(_x(T), None),
    "floor_divide_str": lambda T: T.floor_divide(_x(T), "a"),
    "floor_divide_str_first": lambda T: T.floor_divide("a", _x(T)),
    "floor_divide_list": lambda T: T.floor_divide(_x(T), [1, 2, 3]),
    "true_divide_none": lambda T: T.true_divide(_x(T), None),
    "bitwise_left_shift_str": lambda T: T.bitwise_left_shift(_xi(T), "a"),
    "bitwise_right_shift_ndarray": lambda T: T.bitwise_right_shift(_xi(T), _A1),
    "bitwise_right_shift_str_first": lambda T: T.bitwise_right_shift("a", _xi(T)),
    # ---- clamp
    "clamp_complex_min": lambda T: T.clamp(_x(T), 1j),
    "clamp_complex_max": lambda T: T.clamp(_x(T), max=1j),
    "clamp_real_complex": lambda T: T.clamp(_x(T), 1 + 0j),
    "clamp_half_complex": lambda T: T.clamp(_x(T, "float16"), 1j),
    "clamp_int_complex": lambda T: T.clamp(_xi(T), 1j),
    "clamp_complex_and_int": lambda T: T.clamp(_x(T), 1j, 1),
    "clamp_min_complex": lambda T: T.clamp_min(_x(T), 1j),
    "clamp_min_real_complex": lambda T: T.clamp_min(_x(T), 1 + 0j),
    "clamp_inplace_complex": lambda T: _x(T).clamp_(1j),
    "clamp_inplace_real_complex": lambda T: _x(T).clamp_(1 + 0j),
    "clamp_half_overflow": lambda T: T.clamp(_x(T, "float16"), 0.1, 1e5),
    "clamp_half_overflow_low": lambda T: T.clamp(_x(T, "float16"), -1e5, 1),
    "clamp_half_inf": lambda T: T.clamp(_x(T, "float16"), float("inf")),
    "clamp_bfloat16_overflow": lambda T: T.clamp(_x(T, "bfloat16"), 1e39),
    "clamp_float32_overflow": lambda T: T.clamp(_x(T), 1e40),
    "clamp_float64_large": lambda T: T.clamp(_x(T, "float64"), 1e300),
    "clamp_int_to_float_overflow": lambda T: T.clamp(_xi(T), 0.5, 1e40),
    "clamp_min_half_overflow": lambda T: T.clamp_min(_x(T, "float16"), 1e5),
    "clamp_max_half_overflow": lambda T: T.clamp_max(_x(T, "float16"), 1e5),
    "clamp_tensor_and_number": lambda T: T.clamp(_x(T), T.tensor([0.0, 1.0, 2.0]), 1),
    "clamp_number_and_tensor": lambda T: T.clamp(_x(T), 0, T.tensor([0.0, 1.0, 2.0])),
    "clamp_number_and_tensor_0d": lambda T: T.clamp(_x(T), 0, T.tensor(1.0)),
    "clip_tensor_and_number": lambda T: T.clip(_x(T), T.tensor([0.0, 1.0, 2.0]), 1),
    "method_clamp_tensor_and_number": lambda T: _x(T).clamp(T.tensor([0.0, 1.0, 2.0]), 1),
    "method_clamp__str": lambda T: _x(T).clamp_("a"),
    "method_clamp__tensor_and_number": lambda T: _x(T).clamp_(T.tensor([0.0, 1.0, 2.0]), 1),
    **{
        f"clamp_{m}_{k}": (lambda T, m=m, v=v: getattr(T, f"clamp_{m}")(_x(T), v))
        for m in ("min", "max")
        for k, v in {"none": None, "str": "a", "list": [1], "ndarray": _A1}.items()
    },
    "method_clamp_min_none": lambda T: _x(T).clamp_min(None),
    "method_clamp_max_str": lambda T: _x(T).clamp_max("a"),
    # ---- where
    "where_none_none": lambda T: T.where(_x(T) > 0, None, None),
    "where_input_none": lambda T: T.where(_x(T) > 0, _x(T), None),
    "where_none_other": lambda T: T.where(_x(T) > 0, None, _x(T)),
    "where_condition_only": lambda T: T.where(_x(T) > 0),
    "where_numbers": lambda T: T.where(_x(T) > 0, 1.5, 2),
    "method_where_none": lambda T: _x(T).where(_x(T) > 0, None),
    "method_where_str": lambda T: _x(T).where(_x(T) > 0, "a"),
    "method_where_condition_only": lambda T: _x(T).where(_x(T) > 0),
    "method_where_number_condition": lambda T: _x(T).where(1, _x(T)),
    "method_where_number": lambda T: _x(T).where(_x(T) > 0, 2),
    # ---- div's rounding_mode
    **{
        f"div_rounding_mode_{k}": (lambda T, v=v: T.div(_x(T), 2, rounding_mode=v))
        for k, v in {"int": 1, "float": 1.5, "nan": float("nan"), "ndarray": _A1}.items()
    },
    "div_tensor_rounding_mode_int": lambda T: T.div(_x(T), _x(T), rounding_mode=1),
    "div_number_first_rounding_mode_int": lambda T: T.div(2, _x(T), rounding_mode=1),
    "div_rounding_mode_bad_str": lambda T: T.div(_x(T), 2, rounding_mode="bad"),
    "divide_rounding_mode_int": lambda T: T.divide(_x(T), 2, rounding_mode=1),
    "method_div_rounding_mode_int": lambda T: _x(T).div(2, rounding_mode=1),
    "method_div__rounding_mode_float": lambda T: _x(T).div_(2, rounding_mode=1.5),
    "method_divide_rounding_mode_int": lambda T: _x(T).divide(_x(T), rounding_mode=1),
    # ---- round's decimals
    **{
        f"round_decimals_{k}": (lambda T, v=v: T.round(_x(T), decimals=v(T) if callable(v) else v))
        for k, v in {
            "none": None,
            "str": "a",
            "float": 1.5,
            "bool": True,
            "nan": float("nan"),
            "tensor_0d_float": lambda T: T.tensor(0.5),
            "tensor_0d_int": lambda T: T.tensor(1),
            "numpy_int": np.int64(1),
            "past_int64": 2**70,
        }.items()
    },
    "round_int_decimals_past_int64": lambda T: T.round(_xi(T), decimals=2**70),
    "method_round_decimals_none": lambda T: _x(T).round(decimals=None),
    "method_round_decimals_numpy_float": lambda T: _x(T).round(decimals=np.float64(1)),
    "method_round_decimals_tensor": lambda T: _x(T).round(decimals=T.tensor(1)),
    "method_round__decimals_float": lambda T: _x(T).round_(decimals=1.5),
    "special_round_decimals_float": lambda T: T.special.round(_x(T), decimals=1.5),
    # ---- ldexp's out= cast errors
    "ldexp_complex_out_float": lambda T: T.ldexp(
        _x(T, "complex64"), _x(T), out=T.empty(2, 3, dtype=T.float64)
    ),
    "ldexp_complex_out_int": lambda T: T.ldexp(
        _x(T, "complex64"), _x(T), out=T.empty(2, 3, dtype=T.int64)
    ),
    "ldexp_float_out_int": lambda T: T.ldexp(_x(T), _x(T), out=T.empty(2, 3, dtype=T.int64)),
    "ldexp_inplace_complex": lambda T: _x(T).ldexp_(_x(T, "complex64")),
    # ---- isclose / allclose
    **{
        f"{fn}_{opt}_{k}": (
            lambda T, fn=fn, opt=opt, v=v: getattr(T, fn)(
                _x(T), _x(T) + 1e-6, **{opt: v(T) if callable(v) else v}
            )
        )
        for fn in ("isclose", "allclose")
        for opt in ("rtol", "atol")
        for k, v in {
            "none": None,
            "str": "a",
            "complex": 1j,
            "list": [1],
            "negative": -1.0,
            "negative_small": -0.001,
            "nan": float("nan"),
            "numpy": np.float32(1),
            "bool": True,
            "tensor_0d": lambda T: T.tensor(0.5),
            "tensor_0d_complex": lambda T: T.tensor(1j),
            "tensor_1d": lambda T: T.tensor([0.5]),
        }.items()
    },
    **{
        f"{fn}_equal_nan_{k}": (
            lambda T, fn=fn, v=v: getattr(T, fn)(
                _nan(T), _nan(T), equal_nan=v(T) if callable(v) else v
            )
        )
        for fn in ("isclose", "allclose")
        for k, v in {
            "int": 1,
            "none": None,
            "numpy_bool": np.bool_(True),
            "tensor": lambda T: T.tensor(True),
            "true": True,
        }.items()
    },
    "isclose_number_input": lambda T: T.isclose(2, _x(T)),
    "isclose_number_other": lambda T: T.isclose(_x(T), 2),
    "method_isclose_number": lambda T: _x(T).isclose(2),
    "method_isclose_rtol_none": lambda T: _x(T).isclose(_x(T), rtol=None),
    "allclose_number_other": lambda T: T.allclose(_x(T), 1),
    "allclose_number_input": lambda T: T.allclose(1, _x(T)),
    "method_allclose_number": lambda T: _x(T).allclose(1),
    "method_allclose_str": lambda T: _x(T).allclose("a"),
    "method_allclose_rtol_none": lambda T: _x(T).allclose(_x(T), rtol=None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name):
    call = CASES[name]
    assert _outcome(call, ember) == _outcome(call, torch)
