"""Edge cases where ember once differed from torch: gradients at singular points, empty inputs,
errors that leaked from numpy, numpy's spellings of torch's keywords. Each row runs the same code
under ember and torch and compares values, dtypes and shapes (or the error)."""

import math

import ember
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
}


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
