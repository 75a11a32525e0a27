"""Parity regressions found by the seventy-ninth wave, a seeded random fuzz of the function forms of
scatter/gather, index_* and the masked ops against torch (gather, scatter with a src, a value and
a reduce, scatter_add, scatter_reduce with every reduce and include_self both ways, index_select,
index_add with alpha, index_copy, index_fill, index_reduce, index_put with accumulate, put,
take, take_along_dim, masked_fill, masked_scatter, masked_select, where, nonzero and argwhere,
with their in-place forms and methods; every dtype family, 0-4 dims, empty and size-1 dims,
negative dims and indices, out-of-range and duplicate indices, index dtypes, non-contiguous
operands, broadcast masks and out=; values, dtypes, shapes, errors, version counters and
gradients with a non-uniform upstream gradient). It found an empty index checked where torch
checks nothing of it (gather's and scatter's index dtype and rank, scatter's shapes) and
scatter_add's and scatter_reduce's dtype errors under their own names (torch: "scatter()"); a
0-dim self of gather, scatter, scatter_add and scatter_reduce not bounds-checked (an index of 1
read element 0) or crashing (numpy's "tuple index out of range"), and scatter_reduce's backward
of a 0-dim self; scatter_reduce(amax, include_self=False) of an unsigned self starting its slots
at -255 (numpy's OverflowError); scatter_reduce's order of its kernel's refusals and the index
bounds (a bool mean of an empty index is torch's div_floor refusal); take_along_dim of a 0-dim
input (a Python IndexError) and its broadcast message (the last mismatching dim, input's sizes
with the index's at dim); index_add_'s and index_reduce_'s 0-dim source with another number of
indices (torch's IndexError), their "Indexing dim" check, index_reduce_'s missing slice-shape
check and its index check before the dtypes, its kernels' refusals of bool and complex selves in
torch's order, with include_self=False's index_fill_ bounds message; index_add's alpha range-
checked into an integer self like torch (numpy's OverflowError); index_fill's value gradient
counting a duplicated index twice (and failing for a 0-dim self); index_reduce(prod)'s backward
with an empty index; index_fill's 0-dim tensor value not range-checked (torch fills its item, a
number like any other) and scatter's value range-checked for an empty index; put_'s source
gradient in the index's shape instead of the source's; masked_select's broadcast message (the
mask is tensor a); masked_scatter's checks in torch's order (the dtypes, then the mask's
broadcast, or in place its expand, then its dtype); and index_put_ of a byte mask with a 0-dim
index tensor sent to masked_fill_'s refusal (a 0-dim index is an index tensor there)."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")
from harness import assert_same, same_error
from harness import same_grads_or_error as _grads
from harness import upstream as _up

warnings.filterwarnings("ignore", message="index_reduce", category=UserWarning)


def _both(f, **kw):
    import ember

    assert_same(f(ember), f(torch), **kw)


def _L(T, v):
    return T.tensor(v, dtype=T.int64)


# ---------------------------------------------------------------------- gather / scatter
def test_empty_index_is_not_checked():
    _both(lambda T: T.gather(T.ones(2, 3), 0, T.zeros(0, dtype=T.uint8)))
    _both(lambda T: T.gather(T.ones(2, 3), 1, T.zeros(0, 3, 4, dtype=T.int64)))
    _both(lambda T: T.scatter_add(T.ones(2, 3), 0, T.zeros(0, dtype=T.uint8), T.ones(2, 3)))
    _both(lambda T: T.scatter(T.ones(2, 3), 0, T.zeros(0, 3, 4, dtype=T.int64), T.ones(2, 3)))
    _both(lambda T: T.ones(2, 3).scatter_reduce(0, T.zeros(5, 0, dtype=T.uint8), T.ones(1), "sum"))
    # the dim and src's dtype still are
    same_error(lambda T: T.gather(T.ones(2, 3), 5, T.zeros(0, dtype=T.int64)), IndexError)
    same_error(
        lambda T: T.scatter(T.ones(2, 3), 0, T.zeros(0, dtype=T.int64), T.ones(2, dtype=T.int64))
    )


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_reduce", "scatter_reduce_"])
def test_scatter_index_dtype_error_says_scatter(op):
    def f(T):
        x, i, s = T.ones(2, 3), T.zeros(1, 2, dtype=T.uint8), T.ones(2, 3)
        if op == "scatter_reduce_":
            return x.scatter_reduce_(0, i, s, "prod")
        return getattr(T, op)(x, 0, i, s, *(["mean"] if op == "scatter_reduce" else []))

    assert same_error(f) == "scatter(): Expected dtype int32/int64 for index"


@pytest.mark.parametrize("op", ["gather", "scatter", "scatter_add", "amax", "prod", "mean"])
def test_zero_dim_self(op):
    def f(T, i):
        x = T.tensor(2.0, dtype=T.float64, requires_grad=True)
        s = T.tensor([-1.5, 3.0], dtype=T.float64, requires_grad=True)
        i = T.tensor(i)
        if op == "gather":
            y = T.gather(x, 0, i)
        elif op in ("scatter", "scatter_add"):
            y = getattr(T, op)(x, 0, i, s[: max(i.numel(), 1)].reshape(i.shape))
        else:
            y = T.scatter_reduce(x, 0, i, s[: max(i.numel(), 1)].reshape(i.shape), op)
        return [y, *T.autograd.grad(y, (x, s), _up(T, y), allow_unused=True)]

    for i in (0, [0], [0, 0]):
        if op == "scatter" and i == [0, 0]:
            continue  # (which write stays is torch's kernel's choice)
        _grads(lambda T, i=i: f(T, i))
    same_error(lambda T: f(T, 1))  # a 0-dim self is one element long
    same_error(lambda T: f(T, [0, -1]))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "bool", "float32"])
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_exclude_self_starts_at_type_bounds(dtype, reduce):
    def f(T):
        dt = getattr(T, dtype)
        x = T.tensor([[3, 0, 1], [1, 2, 0]]).to(dt)
        s = T.tensor([[0, 1, 0], [2, 0, 1]]).to(dt)
        return T.scatter_reduce(x, 1, _L(T, [[1, 1, 0], [2, 2, 2]]), s, reduce, include_self=False)

    _both(f)


def test_scatter_reduce_refusal_order():
    def f(T, n, inc, dtype="bool", reduce="mean"):
        dt = getattr(T, dtype)
        x, s = T.ones(4, 1, dtype=dt), T.ones(4, n, dtype=dt)
        return T.scatter_reduce(x, 0, T.full((3, n), 7), s, reduce, include_self=inc)

    for inc in (True, False):
        same_error(lambda T, inc=inc: f(T, 0, inc), NotImplementedError)  # an empty index too
        same_error(lambda T, inc=inc: f(T, 1, inc), Exception)  # the kernel, else the index, first
        same_error(lambda T, inc=inc: f(T, 1, inc, "complex64", "amax"), Exception)


# ---------------------------------------------------------------------- take_along_dim
def test_take_along_dim_zero_dim_and_broadcast_message():
    for d in (0, -1, 1):
        same_error(lambda T, d=d: T.take_along_dim(T.tensor(1.0), T.tensor(0), dim=d), IndexError)
    x = lambda T: T.ones(3, 4, 2)
    same_error(lambda T: T.take_along_dim(x(T), T.zeros(2, 0, 3, dtype=T.int64), dim=1))
    same_error(lambda T: T.take_along_dim(x(T), T.zeros(2, 0, 2, dtype=T.int64), dim=1))
    same_error(lambda T: T.take_along_dim(x(T), T.zeros(2, 5, 3, dtype=T.int64), dim=-2))


# ---------------------------------------------------------------------- index_add / index_reduce
@pytest.mark.parametrize("op", ["add", "prod"])
def test_index_func_source_checks(op):
    def call(x, dim, i, s):
        if op == "add":
            return x.index_add(dim, i, s)
        return x.index_reduce(dim, i, s, "prod")

    for self_shape in ((), (3,)):
        same_error(
            lambda T, sh=self_shape: call(T.ones(sh), 0, _L(T, [0, 1]), T.tensor(2.0)), IndexError
        )
    same_error(lambda T: call(T.ones(3, 2), 1, _L(T, [0]), T.tensor(2.0)))
    same_error(lambda T: call(T.ones(3, 2), -1, _L(T, [0, 1]), T.tensor(2.0)))
    same_error(lambda T: call(T.ones(3), 0, _L(T, [0]), T.ones(1, 1)))
    same_error(lambda T: call(T.tensor(1.0), 0, _L(T, [0]), T.ones(1)))
    # the index's dtype before self's and source's
    same_error(lambda T: call(T.ones(3), 0, T.tensor([0], dtype=T.int16), T.ones(1).double()))


@pytest.mark.parametrize("alpha", [-1, -1.5, 2.5, 300])
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_index_add_integer_alpha_is_range_checked(alpha, dtype):
    def f(T):
        dt = getattr(T, dtype)
        return T.ones(3, dtype=dt).index_add(0, _L(T, [0, 2]), T.ones(2, dtype=dt) * 3, alpha=alpha)

    try:
        want = f(torch)
    except RuntimeError:
        same_error(f, RuntimeError)
        return
    _both(f)
    assert want is not None


@pytest.mark.parametrize("dtype", ["bool", "complex128", "float32"])
@pytest.mark.parametrize("shape", [(), (3,), (3, 2)])
def test_index_reduce_refusals_in_torch_order(dtype, shape):
    import ember

    for inc in (True, False):
        for reduce in ("prod", "mean", "amax"):
            for idx in ([0, 1], [5], [], [-1], [-4]):
                if not shape and len(idx) != 1:
                    continue

                def f(T, idx=idx, reduce=reduce, inc=inc):
                    dt = getattr(T, dtype)
                    x = T.ones(shape, dtype=dt)
                    s = T.ones((len(idx),) + shape[1:] if shape else (), dtype=dt)
                    return x.index_reduce_(0, _L(T, idx), s, reduce, include_self=inc)

                try:
                    want = f(torch)
                except Exception:  # noqa: BLE001 - the error is compared
                    same_error(f)
                    continue
                assert_same(f(ember), want)


def test_index_reduce_prod_empty_index_backward():
    def f(T):
        x = T.ones(4, 2, dtype=T.float64, requires_grad=True)
        s = T.ones(4, 0, dtype=T.float64, requires_grad=True)
        y = x.index_reduce(1, T.zeros(0, dtype=T.int64), s, "prod")
        return T.autograd.grad(y, (x, s), _up(T, y))

    _grads(f)


# ---------------------------------------------------------------------- index_fill / put
def test_index_fill_value_gradient_counts_each_element_once():
    def f(T, shape, idx):
        x = T.zeros(shape, dtype=T.float64, requires_grad=True)
        v = T.tensor(1.5, dtype=T.float64, requires_grad=True)
        y = x.index_fill(0, _L(T, idx), v)
        return [y, *T.autograd.grad(y, (x, v), _up(T, y))]

    _grads(lambda T: f(T, (3, 2), [1, 1, 2]))
    _grads(lambda T: f(T, (), [0, 0]))
    _grads(lambda T: f(T, (4,), [3, 0, 3, 3]))


def test_put_source_gradient_has_source_shape():
    def f(T, acc):
        x = T.zeros(3, 2, dtype=T.float64, requires_grad=True)
        s = T.tensor([[2.0], [-3.0]], dtype=T.float64, requires_grad=True)
        y = (x * 1).put_(_L(T, [4, 1]), s, accumulate=acc)
        return [y, *T.autograd.grad(y, (x, s), _up(T, y))]

    for acc in (False, True):
        _grads(lambda T, acc=acc: f(T, acc))


# ---------------------------------------------------------------------- masked ops
def test_masked_select_broadcast_message_names_the_mask_first():
    m = lambda T: T.ones(4, 3, 2, dtype=T.bool)
    same_error(lambda T: T.masked_select(T.ones(3, 3, 1), m(T)))
    same_error(lambda T: T.ones(3, 3, 1).masked_select(m(T)))


def test_masked_scatter_check_order():
    u8 = lambda T, *s: T.ones(*s, dtype=T.uint8)
    i8 = lambda T, *s: T.ones(*s, dtype=T.int8)
    same_error(lambda T: T.tensor(1.0).masked_scatter_(u8(T, 2), T.ones(2)))
    same_error(lambda T: i8(T, 2).masked_scatter_(u8(T, 2), T.ones(2, dtype=T.int32)))
    same_error(lambda T: i8(T, 2).masked_scatter(u8(T, 2), T.ones(2, dtype=T.int32)))
    same_error(lambda T: i8(T, 2).masked_scatter_(u8(T, 3, 2), i8(T, 2)))
    same_error(lambda T: T.ones(2, 1).masked_scatter_(T.ones(3, dtype=T.bool), T.ones(6)))
    same_error(lambda T: T.masked_scatter(T.tensor(1.0), u8(T, 2), T.ones(2)))
    # out of place: the mask broadcast with self before its dtype
    same_error(lambda T: T.ones(4, 4, 3).masked_scatter(u8(T, 2), T.ones(49)))


def test_index_put_byte_mask_with_a_zero_dim_index_tensor_is_no_masked_fill():
    def f(T):
        x = T.zeros(3, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch's uint8 deprecation)
            i = (T.tensor([1, 0, 1], dtype=T.uint8), T.tensor(2, dtype=T.int32))
            return x.index_put_(i, T.tensor([5.0]))

    _both(f)


def test_scatter_value_of_empty_index_is_not_range_checked():
    def f(T, n):
        return T.ones(2, 3, dtype=T.uint8).scatter(1, T.zeros(1, n, dtype=T.int64), value=-3.0)

    _both(lambda T: f(T, 0))
    same_error(lambda T: f(T, 1))


@pytest.mark.parametrize("value", [-3.5, 300, 2.7, -3])
def test_index_fill_tensor_value_is_range_checked(value):
    def f(T, dtype):
        x = T.ones(2, 1, dtype=getattr(T, dtype))
        return x.index_fill(1, _L(T, [0]), T.tensor(value, dtype=T.float64))

    for dtype in ("uint8", "int8", "float16"):
        try:
            f(torch, dtype)
        except RuntimeError:
            same_error(lambda T, dtype=dtype: f(T, dtype))
            continue
        _both(lambda T, dtype=dtype: f(T, dtype))


def test_gradcheck_of_the_new_paths():
    import ember

    d = {"dtype": ember.float64, "requires_grad": True}
    x0, s1 = ember.tensor(2.0, **d), ember.tensor([-1.5, 3.0], **d)
    for red in ("prod", "mean", "amin"):
        f = lambda x, s, red=red: ember.scatter_reduce(x, 0, ember.tensor([0, 0]), s, red)
        assert ember.autograd.gradcheck(f, (x0, s1))
    x2, v = ember.tensor([[0.5, -1.0], [2.0, 1.5], [3.0, -2.5]], **d), ember.tensor(1.25, **d)
    f = lambda x, v: x.index_fill(0, ember.tensor([1, 1, 2]), v)
    assert ember.autograd.gradcheck(f, (x2, v))
    s2 = ember.tensor([[2.0], [-3.0]], **d)
    f = lambda x, s: (x * 1).put_(ember.tensor([4, 1]), s)
    assert ember.autograd.gradcheck(f, (x2, s2))
