"""Edge cases where ember once differed from torch: gradients at singular points, empty inputs,
errors that leaked from numpy, numpy's spellings of torch's keywords. Each row runs the same code
under ember and torch and compares values, dtypes and shapes (or the error)."""

import math

import ember
import numpy as np
import pytest
from harness import assert_same, needs_torch, raises_like_torch, torch


def _grad_of(f, *vals, upstream=None):
    """A function of the module: the gradients of ``f(m, *xs)`` at ``vals`` (float64)."""

    def run(m):
        xs = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in vals]
        out = f(m, *xs)
        g = m.ones_like(out) if upstream is None else m.tensor(upstream, dtype=m.float64)
        out.backward(g)
        return [x.grad for x in xs]

    return run


GRADS = {
    # |x|^(p-1) is infinite at 0 for p < 1: torch's gradient there is 0, not nan
    "vector_norm_p_half": _grad_of(lambda m, x: m.linalg.vector_norm(x, 0.5), [0.0, 1.0, 2.0]),
    "vector_norm_p_neg": _grad_of(lambda m, x: m.linalg.vector_norm(x, -1), [0.0, 1.0, 2.0]),
    "vector_norm_p_half_all_zero": _grad_of(lambda m, x: m.linalg.vector_norm(x, 0.5), [0.0, 0]),
    "norm_p_half": _grad_of(lambda m, x: m.norm(x, 0.5), [[0.0, 3.0], [1.0, 2.0]]),
    "cdist_p_half_shared_coordinate": _grad_of(
        lambda m, x: m.cdist(x, x, p=0.5), [[0.0, 0.0], [0.0, 1.0]], upstream=[[1, 2], [3, 4]]
    ),
    "atan2_at_origin": _grad_of(lambda m, y, x: m.atan2(y, x), [0.0, 1.0], [0.0, 0.0]),
    "xlog1py_x_zero": _grad_of(
        lambda m, x, y: m.special.xlog1py(x, y), [0.0, 1.0], [2.0, 0.5], upstream=[2, 3]
    ),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradient_at_singular_points(name):
    for e, t in zip(GRADS[name](ember), GRADS[name](torch)):
        assert_same(e, t, what=name)


def _x(m):
    return m.tensor([[1.0, 0.0], [2.0, 3.0]])


VALUES = {
    "all_empty_dims": lambda m: m.all(_x(m), dim=()),
    "any_empty_list": lambda m: m.any(_x(m), []),
    "all_uint8_empty_dims": lambda m: m.all(_x(m).to(m.uint8), ()),
    "softmax_empty_dim": lambda m: m.softmax(m.zeros(2, 0), 1),
    "log_softmax_empty": lambda m: m.nn.functional.log_softmax(m.zeros(0, 3), 0),
    "mean_empty": lambda m: m.zeros(0, 3).mean(0),
    "mean_empty_all": lambda m: m.zeros(0).mean(),
    "inf_norm_over_nonempty_dim": lambda m: m.linalg.vector_norm(m.zeros(2, 0), math.inf, dim=0),
    "sum_axis_keepdims": lambda m: m.sum(_x(m), axis=0, keepdims=True),
    "method_argmax_axis": lambda m: _x(m).argmax(axis=1, keepdims=True),
    "cat_axis": lambda m: m.cat([_x(m), _x(m)], axis=1),
    "max_axis": lambda m: m.max(_x(m), axis=0).values,
    "pdist": lambda m: m.pdist(_x(m)),
    "cosine_similarity": lambda m: m.cosine_similarity(_x(m), _x(m).flip(0)),
    "int_lshift_bool": lambda m: 2 << m.tensor([True, False]),
    "bool_rshift_int": lambda m: m.tensor([True, False]) >> 1,
    "int_rshift_int8": lambda m: 16 >> m.tensor([-1, 2], dtype=m.int8),
    "fft_n_given_on_empty": lambda m: m.fft.fft(m.zeros(0), n=4),
    # numpy scalars promote like Python scalars
    "f32_div_np_float64": lambda m: m.ones(2) / np.sqrt(4.0),
    "i32_mul_np_int64": lambda m: m.ones(2, dtype=m.int32) * np.int64(2),
    "f16_mul_np_float32": lambda m: m.ones(2, dtype=m.float16) * np.float32(2),
    "i64_mul_np_float64": lambda m: m.ones(2, dtype=m.int64) * np.float64(2.5),
    "np_float64_radd": lambda m: np.float64(2.5) + m.ones(2),
    "add_np_float64": lambda m: m.ones(2).add(np.float64(1)),
    # true division of integers never narrows a 0-d int64 divisor first
    "uint8_div_its_sum": lambda m: m.ones(1000, dtype=m.uint8) / m.ones(1000, dtype=m.uint8).sum(),
    "int8_div_0d": lambda m: m.tensor([-7, 3], dtype=m.int8) / m.tensor(1000),
    "int32_div_big_0d": lambda m: m.tensor([1, 2], dtype=m.int32) / m.tensor(2**40),
    "int8_true_divide": lambda m: m.true_divide(m.tensor([-7, 3], dtype=m.int8), m.tensor(1000)),
    "int8_floor_div_0d": lambda m: m.div(
        m.tensor([-7, 3], dtype=m.int8), m.tensor(2), rounding_mode="floor"
    ),
    "f32_div_f64_0d": lambda m: m.ones(2) / m.tensor(3.0, dtype=m.float64),
    "int_div_f64_0d": lambda m: m.ones(2, dtype=m.int64) / m.tensor(3.0, dtype=m.float64),
    "bf16_div_scalar": lambda m: (m.ones(2, dtype=m.bfloat16) / 3.0).float(),
    "complex_div_float": lambda m: m.tensor([1 + 1j]) / m.ones(1),
    "float_div_complex_scalar": lambda m: m.ones(2) / 1j,
    # Python's float and complex types as dtypes are double precision
    "zeros_dtype_float": lambda m: m.zeros(2, dtype=float),
    "to_float": lambda m: m.ones(2).to(float),
    "sum_dtype_float": lambda m: m.ones(2).sum(dtype=float),
    "zeros_dtype_complex": lambda m: m.zeros(2, dtype=complex),
    # complex to bool: a nonzero imaginary part is True
    "complex_to_bool": lambda m: m.tensor([1j, 0, 1 + 0j]).bool(),
    # dtype inference from typed list elements
    "list_of_float64_arrays": lambda m: m.tensor([np.array([1.0, 2]), np.array([3.0, 4])]),
    "list_with_np_float64": lambda m: m.tensor([1, np.float64(2.5)]),
    "list_with_float64_0d": lambda m: m.tensor([1, m.tensor(2.5, dtype=m.float64)]),
    "list_of_int32_arrays": lambda m: m.tensor([np.array([1, 2], dtype=np.int32)]),
    "as_tensor_list_of_arrays": lambda m: m.as_tensor([np.ones(2), np.ones(2)]),
    "nested_python_floats": lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "tensor_of_range": lambda m: m.tensor(range(4)),
    "as_tensor_of_range": lambda m: m.as_tensor(range(3)),
    "tensor_of_bytearray": lambda m: m.tensor(bytearray(b"ab")),
    # numpy arrays as operands
    "eq_ndarray": lambda m: m.ones(2) == np.array([1.0, 2]),
    "add_ndarray": lambda m: m.ones(2) + np.array([1.0, 2]),
    "mul_ndarray": lambda m: m.ones(2) * np.array([1.0, 2]),
    "reversed": lambda m: reversed(m.arange(3)),
    "reversed_0d": lambda m: reversed(m.tensor(3.0)),
    "legacy_type_cast": lambda m: m.ones(2).type(m.LongTensor),
    "legacy_type_from_data": lambda m: m.LongTensor([1, 2]),
    "legacy_type_from_sizes": lambda m: m.DoubleTensor(2, 3).zero_(),
    "legacy_type_empty": lambda m: m.FloatTensor(),
}


def test_tensor_split_takes_index_tensors():
    x = ember.arange(6)
    assert [p.tolist() for p in x.tensor_split(ember.tensor([1, 5]))] == [[0], [1, 2, 3, 4], [5]]
    assert [p.tolist() for p in x.tensor_split(ember.tensor(2))] == [[0, 1, 2], [3, 4, 5]]


def test_contains():
    x = ember.arange(20).reshape(5, 4)
    assert 3 in x and ember.tensor(3) in x and 30 not in x and 2.0 in x
    with pytest.raises(RuntimeError, match="Tensor.__contains__ only supports Tensor or scalar"):
        "a" in x  # noqa: B015


def test_legacy_types_isinstance():
    assert isinstance(ember.ones(2), ember.FloatTensor)
    assert not isinstance(ember.ones(2), ember.LongTensor)
    assert isinstance(ember.ones(2, dtype=ember.long), ember.LongTensor)
    assert not isinstance(ember.ones(2), ember.cuda.FloatTensor)
    assert repr(ember.LongTensor) == "<class 'torch.LongTensor'>"
    with pytest.raises(TypeError, match="expected sizes"):
        ember.FloatTensor(2, "a")


@needs_torch
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_like_torch(name):
    assert_same(VALUES[name](ember), VALUES[name](torch), what=name)


def test_empty_softmax_has_a_gradient():
    x = ember.zeros(2, 0, requires_grad=True)
    ember.softmax(x, 1).sum().backward()
    assert x.grad.shape == (2, 0)


def test_all_with_no_dims_keeps_names():
    x = ember.ones(2, 3, names=("N", "C"))
    assert x.all(()).names == ("N", "C")
    assert x.any([]).names == ("N", "C")
    assert x.all("N").names == ("C",)


def test_mean_of_empty_does_not_warn(recwarn):
    assert math.isnan(ember.zeros(0).mean().item())
    assert not recwarn.list


NAN = float("nan")
ERRORS = [
    (lambda m: m.linalg.vector_norm(m.zeros(0), math.inf), RuntimeError,
     ("linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation "
      "does not have an identity")),
    (lambda m: m.norm(m.zeros(0), -math.inf), RuntimeError, "cannot compute the -inf norm"),
    (lambda m: m.linalg.vector_norm(m.zeros(2, 0), math.inf, dim=1), RuntimeError,
     "cannot compute the inf norm on the dimension 1because this dimension is empty"),
    (lambda m: m.linalg.norm(m.ones(2, 2, 2), "fro"), RuntimeError,
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    (lambda m: m.norm(m.ones(2), ()), TypeError,
     "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not tuple"),
    (lambda m: m.linalg.svd(m.tensor([[1.0, NAN], [0.0, 1.0]])), RuntimeError,
     ("linalg.svd: The algorithm failed to converge because the input matrix contained "
      "non-finite values.")),
    (lambda m: m.linalg.svdvals(m.tensor([[1.0, NAN], [0.0, 1.0]])), RuntimeError,
     "linalg.svd: The algorithm failed to converge"),
    (lambda m: m.fft.fft(m.tensor(3.0)), IndexError,
     "Dimension specified as -1 but tensor has no dimensions"),
    (lambda m: m.fft.rfft(m.tensor(3.0)), IndexError, "tensor has no dimensions"),
    (lambda m: m.fft.fft(m.zeros(0)), RuntimeError, "Invalid number of data points (0) specified"),
    (lambda m: m.fft.ifft(m.zeros(0)), RuntimeError, "Invalid number of data points (0)"),
    (lambda m: m.fft.rfft(m.zeros(0)), RuntimeError, "Invalid number of data points (0)"),
    (lambda m: m.fft.fftn(m.zeros(0, 2)), RuntimeError, "Invalid number of data points (0)"),
    (lambda m: m.fft.irfft(m.zeros(0)), RuntimeError, "Invalid number of data points (-2)"),
    (lambda m: m.fft.hfft(m.zeros(0)), RuntimeError, "Invalid number of data points (-2)"),
    (lambda m: m.heaviside(1, m.zeros(2)), TypeError,
     "heaviside(): argument 'input' (position 1) must be Tensor, not int"),
]  # fmt: skip


@pytest.mark.parametrize("fn,exc,msg", ERRORS)
def test_errors_like_torch(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


def test_axis_and_dim_together_is_a_type_error():
    with pytest.raises(TypeError, match="sum\\(\\) got multiple values for argument 'dim'"):
        ember.sum(ember.ones(2), dim=0, axis=0)


def _modified_after_use(op):
    """x.grad after ``op(y)``'s input y is changed in place before backward: fine wherever the
    op's derivative does not need y (torch saves an operand only for the other's gradient)."""

    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        z = op(m, y)
        y.add_(1)
        z.backward(m.arange(z.numel(), dtype=z.dtype).reshape(z.shape) + 1)
        return x.grad

    return run


FROZEN = {
    "mul_scalar": lambda m, y: y * 2,
    "div_scalar": lambda m, y: y / 2,
    "mul_constant": lambda m, y: y * m.ones(3),
    "matmul_frozen": lambda m, y: y @ m.ones(3, 4),
    "linear_frozen": lambda m, y: m.nn.functional.linear(y, m.ones(4, 3)),
    "linear_frozen_bias": lambda m, y: m.nn.functional.linear(
        y.reshape(1, 3), m.ones(4, 3), m.ones(4)
    ),
    "linear_frozen_3d": lambda m, y: m.nn.functional.linear(y.reshape(1, 1, 3), m.ones(4, 3)),
    "mm_frozen": lambda m, y: y.reshape(1, 3).mm(m.ones(3, 2)),
    "bmm_frozen": lambda m, y: y.reshape(1, 1, 3).bmm(m.ones(1, 3, 2)),
    "cast": lambda m, y: y.double(),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(FROZEN))
def test_operand_changed_in_place_when_not_needed(name):
    f = _modified_after_use(FROZEN[name])
    assert_same(f(ember), f(torch), what=name)


def test_operand_changed_in_place_when_needed_is_an_error():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * (x * 1)  # both need gradients: each operand is saved for the other's
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def _u8(m):
    return m.tensor([250, 3], dtype=m.uint8)


def _iadd(m, x, v):
    x += v
    return x


def _setitem0(m, x, v):
    x[0] = v
    return x


OVERFLOW = {
    # arithmetic with an out-of-range int wraps, like torch
    "iadd_neg_into_uint8": lambda m: _iadd(m, _u8(m), -1),
    "iadd_200_into_int8": lambda m: _iadd(m, m.tensor([100, 3], dtype=m.int8), 200),
    "add__neg": lambda m: _u8(m).add_(-1),
    "mul__neg": lambda m: _u8(m).mul_(-1),
    "sub__300": lambda m: _u8(m).sub_(300),
    # fills take -1 into uint8 as 255
    "fill__neg": lambda m: _u8(m).fill_(-1),
    "setitem_neg": lambda m: _setitem0(m, _u8(m), -1),
    "masked_fill__neg": lambda m: _u8(m).masked_fill_(m.tensor([True, False]), -1),
    "full_neg_uint8": lambda m: m.full((2,), -1, dtype=m.uint8),
    "full_like_neg": lambda m: m.full_like(_u8(m), -1),
    "new_full_neg": lambda m: _u8(m).new_full((2,), -1),
    "tensor_numpy_wraps": lambda m: m.tensor(np.array([300]), dtype=m.uint8),
    "fill_float_truncates": lambda m: m.zeros(2, dtype=m.int32).fill_(2.7),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(OVERFLOW))
def test_integer_overflow_like_torch(name):
    assert_same(OVERFLOW[name](ember), OVERFLOW[name](torch), what=name)


OVERFLOW_ERRORS = [
    (lambda m: m.tensor([100], dtype=m.int8).fill_(200), "to type int8_t without overflow"),
    (lambda m: _setitem0(m, _u8(m), 300), "to type uint8_t without overflow"),
    (lambda m: m.full((2,), 300, dtype=m.uint8), "to type uint8_t without overflow"),
    (lambda m: m.zeros(1, dtype=m.int64).fill_(float("nan")), "to type int64_t without overflow"),
    (lambda m: m.zeros(1, dtype=m.int32).fill_(float("inf")), "to type int without overflow"),
    (lambda m: m.zeros(1).fill_(1e300), "to type float without overflow"),
    (
        lambda m: m.tensor([300], dtype=m.uint8),
        "cannot be converted to type uint8 without overflow",
    ),
    (lambda m: m.tensor([-1.0], dtype=m.uint8), "to type uint8 without overflow"),
    (lambda m: m.tensor(float("nan"), dtype=m.int64), "to type int64 without overflow"),
]


@pytest.mark.parametrize("fn,msg", OVERFLOW_ERRORS)
def test_integer_overflow_errors_like_torch(fn, msg):
    raises_like_torch(fn, RuntimeError, msg)


def test_python_int_past_int64_is_torchs_value_error():
    raises_like_torch(lambda m: m.tensor(2**63), ValueError, "Overflow when unpacking long long")


MORE_ERRORS = [
    (lambda m: m.zeros(3).index_select(0, m.tensor([5])), IndexError, "index out of range in self"),
    (lambda m: m.zeros(3, 4).index_select(0, m.tensor([-1])), IndexError, "index out of range"),
    (lambda m: m.zeros(3, 4).index_select(1, m.tensor([4])), RuntimeError,
     "INDICES element is out of DATA bounds, id=4 axis_dim=4"),
    (lambda m: m.where(m.ones(2, 3) > 0, m.ones(2, 3), m.zeros(2)), RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"),
    (lambda m: m.zeros(1, 2).copy_(m.zeros(2, 1)), RuntimeError,
     "output with shape [1, 2] doesn't match the broadcast shape [2, 2]"),
    (lambda m: m.ones(2).__ior__(1), NotImplementedError, "\"bitwise_or_cpu\" not implemented for 'Float'"),
    (lambda m: m.tensor([True]).__isub__(m.tensor([True])), RuntimeError,
     "Subtraction, the `-` operator, with two bool tensors is not supported"),
    (lambda m: m.tensor([True]).__iadd__(2), RuntimeError,
     "result type Long can't be cast to the desired output type Bool"),
    (lambda m: m.ones(2).__isub__(True), RuntimeError,
     "Subtraction, the `-` operator, with a bool tensor is not supported"),
    (lambda m: _setitem0(m, m.zeros(2, dtype=m.long), 1 + 2j), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    (lambda m: m.zeros(2).fill_(1 + 2j), RuntimeError, "to type float without overflow"),
]  # fmt: skip


@pytest.mark.parametrize("fn,exc,msg", MORE_ERRORS)
def test_more_errors_like_torch(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


ONE_ELEMENT = {
    "list_of_one_element_tensor": lambda m: m.tensor([m.tensor([2.5])]),
    "list_of_two_one_element_tensors": lambda m: m.tensor([m.tensor([2.5]), m.tensor([1.0])]),
    "one_element_tensor_with_dtype": lambda m: m.tensor([m.tensor([2.5])], dtype=m.float64),
    "zero_d_tensor_and_int": lambda m: m.tensor([m.tensor(1.0), 2]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(ONE_ELEMENT))
def test_one_element_tensors_in_lists(name):
    assert_same(ONE_ELEMENT[name](ember), ONE_ELEMENT[name](torch), what=name)


def test_list_of_longer_tensors_is_torchs_error():
    raises_like_torch(
        lambda m: m.tensor([m.tensor([2.5, 1.0])]),
        ValueError,
        "only one element tensors can be converted to Python scalars",
    )


def _halves(m, dtype):
    a = np.random.default_rng(0).random(20000).astype(np.float32)
    return m.tensor(a).to(getattr(m, dtype))


LOWP = {
    "sum": lambda x: x.sum(),
    "sum_dim": lambda x: x.reshape(100, 200).sum(1),
    "nansum": lambda x: x.nansum(),
    "mean": lambda x: x.mean(),
    "nanmean": lambda x: x.nanmean(),
    "cumsum_last": lambda x: x.cumsum(0)[-1:],
    "var": lambda x: x.var(),
    "std_dim": lambda x: x.reshape(100, 200).std(1),
    "var_mean": lambda x: ember_or_torch(x).stack(ember_or_torch(x).var_mean(x)),
    "prod": lambda x: (x[:40] + 1).prod(),
    "cumprod_last": lambda x: (x[:40] + 1).cumprod(0)[-1:],
    "logsumexp": lambda x: x.reshape(100, 200).logsumexp(1),
}


def ember_or_torch(x):
    return ember if isinstance(x, ember.Tensor) else torch


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(LOWP))
def test_low_precision_reductions_accumulate_in_float32(name, dtype):
    # numpy alone sums float16/bfloat16 in the 16-bit type (a running sum stalls at 2048/256)
    e, t = (LOWP[name](_halves(m, dtype)) for m in (ember, torch))
    assert str(e.dtype).split(".")[-1] == dtype
    assert_same(e.float(), t.float(), rtol=1e-2 if dtype == "bfloat16" else 2e-3, what=name)


def _unary_ops():
    from ember.core.registry import OPS

    if torch is None:
        return []
    return [
        n
        for n, od in sorted(OPS.items())
        if not n.startswith("_")
        and od.n_in == 1
        and "generator" not in od.opt_names  # random draws differ from torch's
        and hasattr(torch, n)
        and hasattr(ember, n)
    ]


def _on_0d(m, name, v):
    x = m.tensor(v, dtype=m.float64, requires_grad=True)
    try:
        y = getattr(m, name)(x)
        y = y[0] if isinstance(y, tuple) else y
        if y.requires_grad and y.dtype.is_floating_point:
            y.sum().backward()
            return "ok", y.detach(), x.grad
    except (RuntimeError, TypeError, NotImplementedError, ValueError, IndexError) as e:
        return type(e).__name__, None, None
    return "ok", y.detach(), None


@needs_torch
@pytest.mark.parametrize("name", _unary_ops())
def test_unary_ops_on_0d_tensors(name):
    """numpy's ufuncs turn 0-d arrays into scalars: kernels that write into their intermediates
    (out=, item assignment) once crashed on 0-d tensors (sigmoid, abs's gradient, F.silu...)."""
    for v in (0.3, -0.7):
        es, ey, eg = _on_0d(ember, name, v)
        ts, ty, tg = _on_0d(torch, name, v)
        if ts != "ok":
            continue  # torch refuses this call (an op that needs more arguments): nothing to match
        assert es == "ok", f"{name}({v}): ember raised {es}"
        assert_same(ey, ty, what=f"{name}({v})")
        if tg is not None:
            assert eg is not None and eg.shape == (), name
            assert_same(eg, tg, what=f"{name}({v}) grad")


def _backward_twice(make):
    def run(m):
        a = m.ones(2, requires_grad=True)
        b = make(a).sum()
        b.backward()
        try:
            b.backward()
        except RuntimeError as e:
            return str(e)[:50]
        return a.grad.tolist()

    return run


@needs_torch
@pytest.mark.parametrize(
    "make", [lambda a: a * 3, lambda a: a / 3, lambda a: a + 3, lambda a: a, lambda a: a * a]
)
def test_second_backward_like_torch(make):
    # a node that saved a number is freed too (y * 3 keeps 3, not y): a second backward raises
    f = _backward_twice(make)
    assert f(ember) == f(torch)


def _coo(m):
    return m.sparse_coo_tensor(m.tensor([[0, 1], [1, 0]]), m.tensor([1.0, 2.0]), (2, 2))


SPARSE_LEGACY = {
    "spmm_sparse": lambda m: m.spmm(_coo(m), m.ones(2, 1)),
    "spmm_dense": lambda m: m.spmm(m.ones(2, 2), m.ones(2, 1)),
    "sparse_float_tensor": lambda m: m.sparse.FloatTensor(
        m.tensor([[0, 1], [1, 0]]), m.tensor([1.0, 2.0]), m.Size([2, 2])
    ).to_dense(),
    "sparse_double_tensor_sizes": lambda m: m.sparse.DoubleTensor(2, 3).to_dense(),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(SPARSE_LEGACY))
def test_sparse_legacy_api(name, recwarn):
    assert_same(SPARSE_LEGACY[name](ember), SPARSE_LEGACY[name](torch), what=name)


def test_sparse_legacy_types_isinstance():
    a = _coo(ember)
    assert isinstance(a, ember.sparse.FloatTensor) and not isinstance(a, ember.FloatTensor)
    assert not isinstance(ember.ones(2), ember.sparse.FloatTensor)
    assert repr(ember.sparse.LongTensor) == "<class 'torch.sparse.LongTensor'>"
    with pytest.warns(UserWarning, match="torch.sparse.SparseTensor\\(shape"):
        ember.sparse.FloatTensor(2, 2)


def _z(m):
    return m.tensor([1 + 1j, -2 + 0.5j])


COMPLEX_REFUSED = [
    (lambda m: m.nn.functional.softmax(_z(m), 0), "\"softmax_lastdim_kernel_impl\" not implemented for 'ComplexFloat'"),
    (lambda m: m.nn.functional.log_softmax(_z(m), 0), "\"log_softmax_lastdim_kernel_impl\" not implemented"),
    (lambda m: m.nn.functional.cross_entropy(_z(m).reshape(1, 2), m.tensor([0])), "log_softmax_lastdim_kernel_impl"),
    (lambda m: m.nn.functional.gelu(_z(m)), "\"GeluKernelImpl\" not implemented for 'ComplexFloat'"),
    (lambda m: m.nn.functional.hardtanh(_z(m)), "clamp is not supported for complex types"),
    (lambda m: m.nn.functional.relu6(_z(m)), "clamp is not supported for complex types"),
    (lambda m: m.nn.functional.leaky_relu(_z(m)), "\"leaky_relu_cpu\" not implemented"),
    (lambda m: m.nn.functional.elu(_z(m)), "\"elu_cpu\" not implemented for 'ComplexFloat'"),
    (lambda m: m.nn.functional.threshold(_z(m), 0.1, 0.0), "\"threshold_cpu\" not implemented"),
    (lambda m: m.nn.functional.softplus(_z(m)), "\"softplus_cpu\" not implemented"),
    (lambda m: m.nn.functional.logsigmoid(_z(m)), "\"log_sigmoid_cpu\" not implemented"),
    (lambda m: m.nn.functional.mish(_z(m)), "\"mish_cpu\" not implemented"),
    (lambda m: m.nn.functional.glu(_z(m)), "\"glu_cpu\" not implemented"),
    (lambda m: m.nn.functional.hardshrink(_z(m)), "\"hardshrink_cpu\" not implemented"),
]  # fmt: skip


@pytest.mark.parametrize("fn,msg", COMPLEX_REFUSED)
def test_real_only_activations_refuse_complex(fn, msg):
    raises_like_torch(fn, NotImplementedError, msg)


@needs_torch
def test_silu_takes_complex():
    assert_same(ember.nn.functional.silu(_z(ember)), torch.nn.functional.silu(_z(torch)))


def _acc(m, idx):
    x = m.zeros(3)
    return x.index_put_((m.tensor(idx),), m.tensor([1.0, 2.0, 3.0]), accumulate=True)


def _scatter_dups(m):
    idx = np.random.default_rng(0).integers(0, 16, (16, 16))
    v = np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32)
    return m.zeros(16, 16).scatter_add_(0, m.tensor(idx), m.tensor(v))


ACCUMULATE = {
    "index_put_accumulate_negative": lambda m: _acc(m, [-1, -1, 0]),
    "scatter_add_duplicates": _scatter_dups,
    "index_add_rows": lambda m: m.zeros(4, 3).index_add_(
        0, m.tensor([3, 0, 3, 1]), m.arange(12.0).reshape(4, 3)
    ),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(ACCUMULATE))
def test_accumulating_writes_like_torch(name):
    # (the fast paths: index_add_'s sparse product, scatter_add_'s bincount)
    assert_same(ACCUMULATE[name](ember), ACCUMULATE[name](torch), what=name)


def test_accumulating_out_of_range_is_torchs_error():
    raises_like_torch(
        lambda m: _acc(m, [5, 0, 1]), IndexError, "index 5 is out of bounds for dimension 0"
    )


@needs_torch
@pytest.mark.parametrize("dtype", ["int64", "float64", "float32"])
def test_dense_dequantize_gives_float32(dtype):
    def run(m):
        return m.tensor([1, 2]).to(getattr(m, dtype)).dequantize()

    assert_same(run(ember), run(torch))


HISTOGRAMS = {
    "default_bins": lambda m: m.histogram(m.tensor([1.0, 2.0, 2.5, 3.0, 7.0])),
    "method_default": lambda m: m.tensor([1.0, 2.0, 2.5, 3.0, 7.0]).histogram(),
    "edges_keyword": lambda m: m.tensor([1.0, 2.0, 7.0]).histogram(bins=m.tensor([0.0, 2.0, 8.0])),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(HISTOGRAMS))
def test_histogram_bins_default_like_torch(name):
    for e, t in zip(HISTOGRAMS[name](ember), HISTOGRAMS[name](torch)):
        assert_same(e, t, what=name)


@pytest.mark.parametrize(
    "fn", ["cat", "stack", "hstack", "vstack", "dstack", "row_stack", "column_stack"]
)
def test_one_tensor_for_a_sequence_is_torchs_error(fn):
    # iterating the tensor's rows would silently join them
    raises_like_torch(
        lambda m: getattr(m, fn)(m.ones(2, 3)),
        TypeError,
        f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor",
    )


def _sp(m, vals=(1.0, 2.0, 3.0), grad=False):
    v = m.tensor(list(vals), requires_grad=grad)
    return m.sparse_coo_tensor(m.tensor([[0, 1, 2], [1, 0, 2]]), v, (3, 3)), v


SPARSE_OPS = {
    "mv": lambda m: m.mv(_sp(m)[0], m.tensor([1.0, 2.0, 3.0])),
    "mv_method": lambda m: _sp(m)[0].mv(m.tensor([1.0, 2.0, 3.0])),
    "index_select_rows": lambda m: _sp(m)[0].index_select(0, m.tensor([2, 0])).to_dense(),
    "index_select_cols": lambda m: m.index_select(_sp(m)[0], 1, m.tensor([1])).to_dense(),
    "stack": lambda m: m.stack([_sp(m)[0], _sp(m, (4.0, 5.0, 6.0))[0]]).to_dense(),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(SPARSE_OPS))
def test_sparse_inputs_like_torch(name, recwarn):
    assert_same(SPARSE_OPS[name](ember), SPARSE_OPS[name](torch), what=name)


@needs_torch
def test_sparse_mv_gradients(recwarn):
    def run(m):
        a, v = _sp(m, grad=True)
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (m.mv(a, x) * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        return v.grad, x.grad

    for e, t in zip(run(ember), run(torch)):
        assert_same(e, t)


@needs_torch
def test_setitem_drops_the_values_leading_ones_into_a_scalar_slot():
    # buf[i, j] = t where t has shape (1,) or (1, 1): torch drops the leading 1-dims
    def run(m):
        x = m.zeros(3, 2)
        v = m.tensor([[5.0]], requires_grad=True)
        y = x.clone()
        y[1, 0] = v
        y[0, 1] = m.tensor([2.0])
        y[2] = m.ones(1, 1, 2) * 3
        (y * m.arange(1.0, 7.0).reshape(3, 2)).sum().backward()
        return y, v.grad

    for e, t in zip(run(ember), run(torch)):
        assert_same(e, t)
    raises_like_torch(
        lambda m: m.zeros(3, 2).__setitem__(0, m.ones(2, 2)),
        RuntimeError,
        "expand(torch.FloatTensor{[2, 2]}, size=[2]): the number of sizes provided (1)",
    )


@needs_torch
@pytest.mark.parametrize(
    "fn, msg",
    [
        (
            lambda m: m.nn.functional.binary_cross_entropy_with_logits(
                m.zeros(3), m.tensor([0, 1, 1])
            ),
            "result type Float can't be cast to the desired output type Long",
        ),
        (
            lambda m: m.nn.functional.binary_cross_entropy_with_logits(
                m.zeros(3), m.tensor([False, True, True])
            ),
            "Subtraction, the `-` operator, with two bool tensors is not supported.",
        ),
        (
            lambda m: m.nn.functional.binary_cross_entropy(m.zeros(3), m.tensor([0, 1, 1])),
            "Found dtype Long but expected Float",
        ),
        (
            lambda m: m.nn.functional.binary_cross_entropy(m.zeros(3), m.zeros(3).double()),
            "Found dtype Double but expected Float",
        ),
        (
            lambda m: m.nn.functional.linear(m.zeros(4), m.zeros(2, 4), m.zeros(2).double()),
            "self and mat2 must have the same dtype, but got Double and Float",
        ),
        (
            lambda m: m.nn.functional.linear(
                m.zeros(4).double(), m.zeros(2, 4).double(), m.zeros(2)
            ),
            "self and mat2 must have the same dtype, but got Float and Double",
        ),
    ],
)
def test_bce_and_linear_dtype_errors_match_torch(fn, msg):
    raises_like_torch(fn, RuntimeError, msg)


@needs_torch
def test_bce_losses_take_the_target_or_input_dtype_like_torch():
    x, y, w = np.linspace(-1, 1, 6), np.linspace(0.1, 0.9, 6), np.linspace(0.5, 1.5, 6)

    def run(m):
        xi = m.tensor(x, dtype=m.float64, requires_grad=True)
        a = m.nn.functional.binary_cross_entropy_with_logits(xi, m.tensor(y, dtype=m.float32))
        b = m.nn.functional.binary_cross_entropy_with_logits(
            xi.float(), m.tensor(y, dtype=m.float32), weight=m.tensor(w)
        )
        c = m.nn.functional.binary_cross_entropy(
            xi.sigmoid().float(), m.tensor(y, dtype=m.float32), weight=m.tensor(w)
        )
        (a + b + c).backward()
        return a, b, c, xi.grad

    for e, t in zip(run(ember), run(torch)):
        assert_same(e, t)


@needs_torch
@pytest.mark.parametrize(
    "expr",
    [
        "u.clamp(min=-1)",
        "u.clamp(max=-1)",
        "torch.clamp_max(u, -5)",
        "u.clamp(min=2.5)",
        "torch.where(u > 0, u, -1)",
        "torch.where(u > 0, u, 255)",
        "torch.where(u > 0, u, 2.5)",
        "i8.clamp(-128, 127)",
    ],
)
def test_int_bounds_in_range_or_wrapping_match_torch(expr):
    def run(m):
        u = m.tensor([0, 44, 255], dtype=m.uint8)
        i8 = m.tensor([-128, 0, 127], dtype=m.int8)
        return eval(expr, {"torch": m, "u": u, "i8": i8})

    assert_same(run(ember), run(torch))


@needs_torch
@pytest.mark.parametrize(
    "expr, ctype",
    [
        ("u.clamp(min=256)", "uint8_t"),
        ("torch.clamp_min(u, 300)", "uint8_t"),
        ("u.clamp_(max=300)", "uint8_t"),
        ("i8.clamp(min=-129)", "int8_t"),
        ("i8.clamp(-200, 200)", "int8_t"),
        ("torch.where(u > 0, 300, u)", "uint8_t"),
    ],
)
def test_int_bounds_out_of_range_raise_like_torch(expr, ctype):
    def run(m):
        u = m.tensor([0, 44, 255], dtype=m.uint8)
        i8 = m.tensor([-128, 0, 127], dtype=m.int8)
        return eval(expr, {"torch": m, "u": u, "i8": i8})

    raises_like_torch(
        run, RuntimeError, f"value cannot be converted to type {ctype} without overflow"
    )


@needs_torch
@pytest.mark.parametrize(
    "expr",
    ["u == 300", "300 > u", "u.ne(-1)", "u > -1", "i8 < 200", "i8 == 128", "i32 == 2**32",
     "i32 < 2**31", "u.lt(256)", "u >= 256", "u == 44.0", "u < 255.5"],
)  # fmt: skip
def test_int_scalars_compared_with_int_tensors_wrap_like_torch(expr):
    def run(m):
        u = m.tensor([0, 44, 255], dtype=m.uint8)
        i8 = m.tensor([-128, 0, 127], dtype=m.int8)
        i32 = m.tensor([0, 1], dtype=m.int32)
        return eval(expr, {"u": u, "i8": i8, "i32": i32})

    assert_same(run(ember), run(torch))


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "expr",
    ["x * 0.9", "0.3 + x", "x - 0.1", "x + 0.1", "x / 3", "x / 0.7", "x ** 1.5", "x > 0.411",
     "x <= 0.2", "x == 0.411", "torch.clamp(x, 0.1, 0.5)", "torch.where(x > 0.3, x, 0.7)",
     "torch.lerp(x, x * 2, 0.3)", "x % 0.7", "x.mul_(0.9)", "x.div_(0.7)", "x.add_(0.1)",
     "x.sub_(3)"],
)  # fmt: skip
def test_16bit_floats_with_python_scalars_compute_in_float32_like_torch(dtype, expr):
    # torch's mul/div/lerp/comparisons take the scalar in float32 with a half/bfloat16 tensor,
    # its add/sub/pow/remainder round it to 16 bits first (x * 0.9 differed in the last bit)
    def run(m):
        x = (m.arange(64.0) * 0.137 - 3).to(getattr(m, dtype))
        return eval(expr, {"torch": m, "x": x})

    e, t = run(ember), run(torch)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


@needs_torch
def test_16bit_scalar_ops_keep_torchs_gradients():
    def run(m):
        a = (m.arange(1.0, 7.0) * 0.137).half().requires_grad_()
        x = a * 1.0
        x.mul_(0.9)
        y = (x + 0.1) ** 2
        y.backward(m.arange(6.0).half())
        return y, a.grad

    for e, t in zip(run(ember), run(torch)):
        np.testing.assert_array_equal(e.detach().float().numpy(), t.detach().float().numpy())
