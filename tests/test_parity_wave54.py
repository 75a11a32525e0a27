"""Parity regressions found by the fifty-fourth wave, a seeded random fuzz of index expressions
against torch (tensors of 0-4 dims with empty and size-1 dims, permuted, strided and expanded
inputs, every dtype family; ints, slices, None, Ellipsis, bools, masks, integer tensors of every
dtype, lists and numpy arrays, and their combinations; getitem values, shapes, dtypes, views and
gradients, setitem and index_put_ values, errors and gradients, index_add_/index_copy_/
index_fill_/index_select/masked_fill/put_; torch is the oracle): a 0-dim integer tensor of any
integer dtype and a 0-dim numpy integer array select like an int (a view), and a 0-dim byte
tensor indexes as a bool without torch's deprecation warning; the order in which torch reports a
bad index (a bare int or slice on a 0-dim tensor, the count of indexed dims, the items in order,
the index tensors' dtypes, each mask's shape against the shape that bools, 0-dim masks and None
leave, the broadcast message listing a mask once per dim it covers, an index into an empty dim,
the index values last), an out-of-range index value in an empty result or write (torch reads
none), several ``...`` in one index, ints selecting every dim under an advanced index (numpy's
scalar broke the write and the gradient), and the grad_fn of slices torch does not skip; setitem:
a byte mask's masked fill only for a lone mask and a one-element value, copy_'s expand messages
(the value's type, the last mismatching dim, its leading 1s dropped), the value's shape before
the index values, a one-element value under a mask filled as a range-checked number, a Python
number range-checked before the index is read and rounded to inf past a float16/bfloat16 range,
``x[False] = v`` writing and checking nothing, writes into an expanded tensor (a view's region of
shared elements refused, index_put_'s writes with its deprecation warnings), and its node
(CopySlices for bools and slices torch keeps, FillBackward3 for a 0-dim value); index_put_: None
refused, its index count, 0-dim index tensors as index tensors (not selects: their dtype, dim and
shape), the value taken as it is, its dtype check after the index checks and before the index
values, an index below -n (wrapped twice by numpy) and a value broadcasting with the index but
not to the region when accumulating; index_add_'s checks in torch's order, its per-index kernel
along middle dims, its first bad index and an empty self; index_select's, index_copy_'s,
index_fill_'s and put_'s checks and 0-dim and empty cases; masked_fill_'s and masked_scatter's
shape errors (in place, self is named first); augmented writes into a bfloat16 element (numpy's
scalar broke the overlap check) and with several ``...``; and a setitem reading its own elements
once the value's leading 1s are dropped; numpy index arrays of other dtypes read as long
tensors (floats truncated, a 0-dim one a select)."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")


def _same(fn):
    """``fn(torch)`` and ``fn(ember)`` agree in values, shape, dtype and view-ness."""
    t, e = fn(torch), fn(ember)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(_np(e), _np(t))
    assert e._is_view() == t._is_view()


def _np(t):
    t = t.detach()
    return (t.float() if str(t.dtype).endswith("bfloat16") else t).numpy()


def _x(m, *shape):
    return m.arange(float(np.prod(shape))).reshape(shape)


# ------------------------------------------------------------ 0-dim integer indices select
@pytest.mark.parametrize(
    "index",
    [
        lambda m: m.tensor(1, dtype=m.int16),
        lambda m: m.tensor(-1, dtype=m.int8),
        lambda m: np.array(1),
        lambda m: np.array(2, np.int32),
        lambda m: (np.array(1), slice(None, 2)),
        lambda m: (m.tensor([True, False, True]), m.tensor(1, dtype=m.int16)),
    ],
)
def test_zero_dim_integer_index_selects(index):
    _same(lambda m: _x(m, 3, 2)[index(m)])


def test_zero_dim_integer_index_writes_through():
    for m in (torch, ember):
        x = _x(m, 3, 2)
        x[np.array(1)].fill_(7)
        x[m.tensor(2, dtype=m.int8)][0] = -1
        if m is torch:
            want = x
    np.testing.assert_array_equal(x.numpy(), want.numpy())


def test_zero_dim_byte_index_is_a_bool_without_warning():
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = _x(m, 3)[m.tensor(1, dtype=m.uint8)]
        assert not [x for x in w if "uint8" in str(x.message)]
        assert tuple(r.shape) == (1, 3)


# ------------------------------------------------------------ errors in torch's order
@pytest.mark.parametrize(
    "fn",
    [
        # bare int / slice on a 0-dim tensor, a tuple counted first
        lambda m: m.tensor(5.0)[2],
        lambda m: m.tensor(5.0)[-1],
        lambda m: m.tensor(5.0)[(0,)],
        lambda m: m.tensor(5.0)[0, None],
        lambda m: m.tensor(5.0)[1:],
        lambda m: m.tensor(5.0)[m.tensor(0)],
        # the count before the index tensor's dtype; an int's bounds before it
        lambda m: _x(m, 1)[None, m.tensor([True]), m.tensor([[0]], dtype=m.int16)],
        lambda m: _x(m, 3, 0, 5)[m.tensor([[1]], dtype=m.int16), 5, 4:-7:2],
        lambda m: _x(m, 3, 1)[m.tensor([1], dtype=m.int8), -2],
        # an int's dim is its position in the index (a 0-dim bool counts)
        lambda m: _x(m, 3)[m.tensor(False), np.array(6, np.int32), ...],
        lambda m: _x(m, 3, 1, 0, 0)[2, [0, -1], np.array(3, np.int32)],
        # a mask against the shape bools and 0-dim masks leave
        lambda m: _x(m, 3)[m.tensor(True), m.tensor([False]), ...],
        lambda m: _x(m, 2, 1, 3)[..., [False, True], m.tensor(1, dtype=m.uint8)],
        # every mask's shape before any index value
        lambda m: _x(m, 3, 0, 3, 5)[2, [0, 0, 0], m.tensor([0, 3], dtype=m.uint8), m.tensor(False)],
        # the broadcast before the values: a mask is an index per dim, a bool one of size 0/1
        lambda m: _x(m, 4, 1)[False, [-1, -4, -1], 0, ...],
        lambda m: _x(m, 5, 5, 1)[[2, 0], m.ones(5, 1, dtype=m.bool)],
        lambda m: _x(m, 3, 1, 3, 3)[[-2, 0, 0], m.ones(1, 3, 3, dtype=m.bool)],
        lambda m: _x(m, 3, 1, 1, 1)[m.tensor([[1, 3, -2]]), []],
        lambda m: _x(m, 3, 1, 3)[m.tensor([[-2, -4], [0, 1]]), False],
        lambda m: _x(m, 3, 2)[
            np.array([[2], [-3], [1]]), m.tensor([[-1, 0, -2], [-2, -1, -3]], dtype=m.int32)
        ],
        # an index into an empty dim, and a value out of range
        lambda m: _x(m, 2, 0)[:, m.tensor([1])],
        lambda m: _x(m, 5, 3)[m.tensor([8, -2])],
    ],
)
def test_index_errors_in_torch_order(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(fn, IndexError)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _x(m, 4, 0, 3)[m.tensor([[2, -5]], dtype=m.int32)],
        lambda m: _x(m, 5, 0)[m.tensor([8])],
        lambda m: _x(m, 5, 0, 3)[m.tensor([8, -2]), 1:],
    ],
)
def test_out_of_range_value_in_an_empty_result(fn):
    _same(fn)


def test_out_of_range_value_in_an_empty_write():
    for m in (torch, ember):
        x = _x(m, 2, 3)
        x[m.tensor([5]), :0] = 1.0
        np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))


# ------------------------------------------------------------ several ...
@pytest.mark.parametrize(
    "shape, index",
    [
        ((2, 3), (Ellipsis, Ellipsis)),
        ((3,), (slice(None, -2), Ellipsis, Ellipsis, None)),
        ((2, 3), (0, Ellipsis, Ellipsis)),
        ((2, 3), (Ellipsis, None, Ellipsis)),
    ],
)
def test_several_ellipses(shape, index):
    _same(lambda m: _x(m, *shape)[index])


def test_several_ellipses_advanced_and_write():
    _same(lambda m: _x(m, 2, 3, 4)[..., 0, ...])
    _same(lambda m: _x(m, 2, 3)[..., m.tensor([0, 1]), ...])
    for m in (torch, ember):
        x = _x(m, 2, 3)
        x[..., 0, ...] = -1.0
        if m is torch:
            want = x
    np.testing.assert_array_equal(x.numpy(), want.numpy())


# ------------------------------------------------------------ ints selecting every dim
def test_ints_select_every_dim_under_an_advanced_index():
    for m in (torch, ember):
        x = _x(m, 2, 3)
        x[0, 1, True] = 5.0
        x[1, 2, m.tensor(True)] = m.tensor([7.0])
        x[1, 0, False] = 9.0
        if m is torch:
            want = x
    np.testing.assert_array_equal(x.numpy(), want.numpy())


def test_ints_select_every_dim_gradient():
    grads = []
    for m in (torch, ember):
        x = _x(m, 2, 3).double().requires_grad_()
        y = x[0, 1, True] * 3 + x[1, -1, None, True].sum() * 2 + x[0, 0, False].sum()
        x2 = x * 1
        x2[1, 0, True] = 4.0
        (y + (x2 * m.arange(1.0, 7.0, dtype=m.float64).reshape(2, 3)).sum()).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


# ------------------------------------------------------------ setitem's dtype rules
def test_setitem_zero_dim_array_converts_like_a_view():
    for m in (torch, ember):
        x = _x(m, 2, 3)
        x[np.array(1)] = m.tensor(4)
        x[m.tensor(0, dtype=m.int16), 1] = m.tensor(9)
        if m is torch:
            want = x
    np.testing.assert_array_equal(x.numpy(), want.numpy())


@pytest.mark.parametrize(
    "index",
    [
        lambda m: m.tensor(1, dtype=m.uint8),  # a 0-dim byte tensor is an index tensor
        lambda m: (0, 0, m.tensor([0])),  # too many indices: before the dtype
        lambda m: (m.tensor([0, 1]), m.tensor([0, 1, 0])),  # the broadcast: before the dtype
        lambda m: m.tensor([5]),  # a value out of range: after the dtype
        lambda m: (0, m.tensor([5])),
    ],
)
def test_setitem_dtype_error_order(index):
    def fn(m):
        x = _x(m, 3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x[index(m)] = m.tensor([1], dtype=m.int32)

    same_error(fn)


@pytest.mark.parametrize(
    "args",
    [
        lambda m: ((m.tensor(0),) * 3, m.tensor([1.0])),
        lambda m: ((m.tensor(0),) * 3, m.tensor([1])),  # the count before the dtype
        lambda m: ((None, m.tensor([1])), m.tensor(1.0)),
        lambda m: ((m.tensor([1]), None), m.tensor(1.0)),
    ],
)
def test_index_put_refusals(args):
    same_error(lambda m: _x(m, 2, 3).index_put_(*args(m)))


# ------------------------------------------------------------ grad_fn of a slice
@pytest.mark.parametrize(
    "shape, index",
    [
        ((3, 4), (1, slice(-4, None))),
        ((3, 4), (1, slice(-9, None))),
        ((3, 4), (1, slice(None, 9))),
        ((3, 4), (1, slice(0, 4, 1))),
        ((2, 0, 3), (1, slice(3, None))),
        ((2, 0, 3), (1, slice(None, 0))),
        ((2, 0, 3), (1, slice(None, -1))),
        ((3, 1), slice(0, None, 1)),  # a bare slice is never skipped
        ((3, 1), slice(None, 3, 1)),
        ((3, 1), (slice(None, 3, 1),)),
    ],
)
def test_slice_grad_fn_name(shape, index):
    names = []
    for m in (torch, ember):
        r = m.zeros(shape, dtype=m.float64, requires_grad=True)[index]
        names.append(type(r.grad_fn).__name__ if m is torch else r.grad_fn.name())
    assert names[1] == names[0]


# ------------------------------------------------------------ setitem's errors in torch's order
def _set(shape, index, value, dtype="float32"):
    def fn(m):
        x = m.zeros(shape, dtype=getattr(m, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x[index(m)] = value(m) if callable(value) else value
        return x

    return fn


def _u8(m, a):
    return m.tensor(a, dtype=m.uint8)


@pytest.mark.parametrize(
    "fn",
    [
        # a byte mask alone with a one-element value is a masked fill (which refuses it), after
        # the mask's shape check and the ints' bounds
        _set((5, 3), lambda m: (slice(None, 4), _u8(m, [1, 0, 1])), lambda m: m.tensor([1.0])),
        _set((5, 3), lambda m: _u8(m, [[1, 0], [1, 1]]), 1.0),
        _set((0, 2), lambda m: (5, _u8(m, [1, 0])), 1.0),
        # copy_'s expand messages: the value's type, the last mismatching dim, its leading 1s
        _set((2,), lambda m: (0,), lambda m: m.tensor([1, 2], dtype=m.int8), "int8"),
        _set((1,), lambda m: 0, lambda m: m.tensor([1j, 2j]), "complex64"),
        _set((), lambda m: ..., lambda m: m.tensor([True, False]), "bool"),
        _set((), lambda m: ..., lambda m: m.tensor([1.0, 2.0], dtype=m.bfloat16), "bfloat16"),
        _set((3, 2, 4, 1), lambda m: (), lambda m: m.zeros(4, 3, 5, 2)),
        _set((0, 1), lambda m: (), lambda m: m.zeros(1, 2)),
        _set((3,), lambda m: True, lambda m: m.ones(5)),
        # index_put's shape message drops the value's leading 1s; it comes before index values
        _set(
            (4, 1), lambda m: (m.zeros(4, 1, dtype=m.bool), None, None), lambda m: m.ones(1, 2, 2)
        ),
        _set((3, 2), lambda m: (m.tensor([6, -3]),), lambda m: m.ones(1, 3)),
        _set((4,), lambda m: np.array([-1, 7, -3]), lambda m: m.ones(2)),
        # an int's bounds before a later slice's step
        _set((1, 3, 1), lambda m: (3, slice(None, None, -1)), 1.0),
        lambda m: m.zeros(1, 3, 1)[3, ::-1],
        lambda m: m.zeros(1, 3, 1)[0, ::0, m.tensor([0])],
    ],
)
def test_setitem_errors_in_torch_order(fn):
    same_error(fn)


@pytest.mark.parametrize(
    "fn",
    [
        _set((3, 2), lambda m: (_u8(m, [1, 0, 1]), m.tensor([0, 1])), 1.0),  # not a masked fill
        _set((3,), lambda m: (_u8(m, [1, 0, 1]), True), 1.0),
        _set((1,), lambda m: 0, lambda m: m.tensor([1 + 2j]), "complex64"),  # leading 1s
        _set((1,), lambda m: (m.tensor([True]), ...), lambda m: m.ones(1, 1)),
        _set((3,), lambda m: False, lambda m: m.ones(5)),  # torch checks nothing
    ],
)
def test_setitem_torch_allows(fn):
    _same(fn)


def test_setitem_complex_into_an_empty_real_region_does_not_warn():
    x = ember.zeros(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x[2:-2] = ember.tensor(1j)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(1, 1, dtype=m.uint8).index_put_(
            (m.tensor([[False, True], [True, False]]),), m.tensor([1], dtype=m.int32), True
        ),
        lambda m: m.zeros(0, 1).index_put_((m.tensor([0, 0]),), m.tensor([1], dtype=m.int16), True),
        lambda m: m.zeros(5, 5, 1, dtype=m.int32).index_put_(
            (m.tensor([], dtype=m.int64), m.tensor([False, False, True, True, False])),
            m.tensor([1.0]),
        ),
        lambda m: m.zeros(1, 1, dtype=m.float16).index_put_(
            (m.tensor([[1, -1]]),), m.tensor([True, False]), accumulate=True
        ),
        lambda m: m.zeros(3).index_put_((m.tensor([5]),), m.tensor([1], dtype=m.int32)),
    ],
)
def test_index_put_dtype_error_after_the_index_checks(fn):
    same_error(fn)


def test_index_put_value_shapes_as_given():
    # index_put_ takes the value as it is (setitem drops its leading 1s first)
    for fn in (
        lambda m: m.zeros(3, 2).index_put_((m.tensor(0),), m.ones(3)),
        lambda m: m.zeros(1, dtype=m.int64).index_put_((m.tensor(0),), m.ones(1, dtype=m.int32)),
        lambda m: m.zeros(1, 1, 3, dtype=m.int8).index_put_(
            (m.tensor([-1, 0]),), m.ones(1, 2, 3, dtype=m.int8), accumulate=True
        ),
        lambda m: m.zeros(4).index_put_((m.tensor(-3, dtype=m.int16),), m.ones(1)),
        lambda m: (m.zeros(3, 4, dtype=m.float64, requires_grad=True) * 1).index_put_(
            (m.tensor([], dtype=m.int64),), m.zeros(3, 0, dtype=m.float64), accumulate=True
        ),
    ):
        same_error(fn)


# ------------------------------------------------------------ accumulating writes
@pytest.mark.parametrize(
    "fn",
    [
        # an index below -n (numpy would wrap it twice)
        lambda m: m.zeros(2, 1, dtype=m.int64).index_put_(
            (m.tensor([-2, -2, -1, -3], dtype=m.int32),), m.ones(4, 1, dtype=m.int64), True
        ),
        lambda m: m.zeros(2, 1).index_put_((m.tensor([-2, -1, -3]),), m.ones(3, 1), True),
        # a value that broadcasts with the index but not to the indexed shape
        lambda m: m.zeros(3, dtype=m.float64).index_put_(
            (m.tensor([0, -3], dtype=m.int32),), m.ones(2, 2, dtype=m.float64), accumulate=True
        ),
    ],
)
def test_accumulating_index_put_checks(fn):
    same_error(fn)


def test_accumulating_empty_updates():
    for m in (torch, ember):
        x = m.zeros(0).index_add_(0, m.tensor([], dtype=m.int64), m.zeros(0))
        y = m.zeros(0).index_put_((m.tensor([], dtype=m.int64),), m.zeros(0), accumulate=True)
        assert tuple(x.shape) == tuple(y.shape) == (0,)


# ------------------------------------------------------------ index_add_
@pytest.mark.parametrize(
    "fn",
    [
        # the first bad index, in order
        lambda m: m.zeros(2, 1).index_add_(0, m.tensor([-2, -2, -1, -3]), m.ones(4, 1)),
        lambda m: m.zeros(2, 1).index_add_(0, m.tensor([1, 5, -3]), m.ones(3, 1)),
        # a middle dim, alpha != 1 (also for a bool self): torch's per-index kernel
        lambda m: m.zeros(3, 1, 1, dtype=m.bool).index_add_(
            1, m.tensor([-1]), m.ones(3, 1, 1, dtype=m.bool)
        ),
        lambda m: m.zeros(2, 3, 4).index_add_(1, m.tensor([5]), m.ones(2, 1, 4)),
        lambda m: m.zeros(2, 4, dtype=m.bool).index_add_(
            0, m.tensor(-2), m.ones(1, 4, dtype=m.bool), alpha=2
        ),
        # the dim before the index's dtype, that before the source's
        lambda m: m.zeros(3).index_add_(2, m.tensor([0.0]), m.ones(1)),
        lambda m: m.zeros(4).index_add_(0, m.tensor([0.0]), m.ones(1, dtype=m.int8)),
        # the source's shape
        lambda m: m.zeros(2, 3, dtype=m.int32).index_add_(
            -1, m.tensor([], dtype=m.int64), m.zeros(2, 0, 2, dtype=m.int32)
        ),
        lambda m: m.zeros(1, 0).index_add_(0, m.tensor([0]), m.zeros(1, 0, 2)),
        lambda m: m.tensor(1.0).index_add_(0, m.tensor([0]), m.ones(1)),
        lambda m: m.tensor(1.0).index_add_(0, m.tensor([], dtype=m.int64), m.ones(0)),
    ],
)
def test_index_add_errors(fn):
    same_error(fn)


def test_index_add_into_an_empty_self_reads_no_index():
    def fn(m):
        x = m.zeros(0, 4, dtype=m.float64, requires_grad=True)
        s = m.ones(2, 4, dtype=m.float64, requires_grad=True)
        return x.clone().index_add_(0, m.tensor([5, -1]), s)

    _same(fn)
    # its backward's index_select then refuses the empty dim, as torch's does
    same_error(lambda m: fn(m).sum().backward())


# ------------------------------------------------------------ index_select
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(2, 3).index_select(5, m.zeros(2, 2)),
        lambda m: m.zeros(2, 3).index_select(5, m.zeros(2)),
        lambda m: m.tensor(1.0).index_select(0, m.zeros(0)),
        lambda m: m.tensor(1.0).index_select(3, m.zeros(1)),
        lambda m: m.zeros(0).index_select(0, m.tensor([0, 0, -1])),
        lambda m: m.zeros(2, 0).index_select(0, m.tensor([-2, 0], dtype=m.int32)),
        lambda m: m.zeros(0, 3, 2).index_select(2, m.tensor([0, 2])),
        lambda m: m.zeros(0, 3, 2).index_select(0, m.tensor([0, 2])),
    ],
)
def test_index_select_errors(fn):
    same_error(fn)


# ------------------------------------------------------------ index_copy_, index_fill_, put_
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, 4).index_copy_(0, m.tensor([0]), m.zeros(1, 5)),
        lambda m: m.zeros(3, 4, 2).index_copy_(1, m.tensor([0]), m.zeros(2, 1, 5)),
        lambda m: m.zeros(3, 4).index_copy_(0, m.tensor([0, 1]), m.tensor(1.0)),
        lambda m: m.zeros(3, 4).index_copy_(0, m.tensor([0]), m.tensor(1.0)),
        lambda m: m.zeros(2, 1).index_copy_(3, m.tensor([], dtype=m.float32), m.zeros(2, 1)),
        lambda m: m.zeros(4, 2).index_copy_(-1, m.tensor([-2, -2, 0]), m.zeros(4, 3, 2)),
        lambda m: m.zeros(3, 2).index_copy_(0, m.tensor([1]), m.zeros(1, 2, dtype=m.int32)),
        lambda m: m.tensor(3, dtype=m.uint8).index_copy_(
            0, m.tensor([1, -1, 0]), m.tensor([1, 2, 3], dtype=m.uint8)
        ),
        lambda m: m.tensor(3.0).index_copy_(0, m.tensor([0]), m.ones(1, 2, 3)),
        lambda m: m.tensor(3.0).index_fill_(0, m.tensor([5]), 1.0),
        lambda m: m.zeros(0).put_(m.tensor([0, -1]), m.zeros(2)),
    ],
)
def test_index_copy_fill_put_errors(fn):
    same_error(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.tensor(3).index_copy_(0, m.tensor([0, 0, 0, 0]), m.tensor([1, 2, 3, 4])),
        lambda m: m.tensor(3.0).index_copy_(0, m.tensor(0), m.tensor(5.0)),
        lambda m: m.zeros(2, 3).index_copy_(1, m.tensor([2, 0]), m.arange(4.0).reshape(2, 2)),
        lambda m: m.zeros(0, 3, dtype=m.uint8).index_copy_(
            1, m.tensor([-1]), m.zeros(0, 1, dtype=m.uint8)
        ),
        lambda m: m.zeros(3, 0, dtype=m.complex64).index_fill_(0, m.tensor([-2, -3, -4]), 1.0),
        lambda m: m.tensor(3.0).index_fill_(0, m.tensor([0, -1]), 1.0),
    ],
)
def test_index_copy_fill_results(fn):
    _same(fn)


# ------------------------------------------------------------ a one-element value under a mask
_M3 = [True, False, True]


@pytest.mark.parametrize(
    "fn",
    [
        # masked_fill (and setitem's masked fill) fill with value.item(): range-checked
        lambda m: m.zeros(3).masked_fill_(m.tensor(_M3), m.tensor(1e300, dtype=m.float64)),
        lambda m: m.zeros(3).masked_fill(m.tensor(_M3), m.tensor(1e300, dtype=m.float64)),
        lambda m: m.zeros(3, dtype=m.int8).masked_fill_(m.tensor(_M3), m.tensor(300)),
        lambda m: m.zeros(3).masked_fill_(m.tensor(_M3), m.tensor(1 + 1j)),
        _set((3,), lambda m: m.tensor(_M3), lambda m: m.tensor(1e300, dtype=m.float64)),
        _set((3,), lambda m: m.tensor(_M3), lambda m: m.tensor(300), "int8"),
        _set((3,), lambda m: m.tensor(_M3), lambda m: m.tensor(1 + 1j), "float16"),
        # the first index tensor's mask shape before a later one's dtype (a masked fill's try)
        _set((0, 2), lambda m: ([False, False, True, False], m.tensor([1], dtype=m.int8)), 1.0),
        _set((1, 1, 1), lambda m: (m.zeros(1, 3, dtype=m.bool), m.tensor([[-1]], dtype=m.int8)), 1),
    ],
)
def test_one_value_under_a_mask_errors(fn):
    same_error(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, dtype=m.int32).masked_fill_(m.tensor(_M3), m.tensor(2.7)),
        lambda m: m.zeros(3, dtype=m.uint8).masked_fill_(m.tensor(_M3), m.tensor(-1)),
        lambda m: m.zeros(3).masked_fill_(m.tensor(_M3), m.tensor(1 + 0j)),
        lambda m: m.zeros(3, dtype=m.bool).masked_fill_(m.tensor(_M3), m.tensor(1j)),
        _set((3,), lambda m: m.tensor(_M3), lambda m: m.tensor(-1), "uint8"),
        _set((3,), lambda m: m.tensor(_M3), lambda m: m.tensor([2.7]), "int32"),
        _set((3,), lambda m: m.tensor(_M3), lambda m: m.tensor(1 + 0j)),
        _set((3,), lambda m: m.tensor(_M3), lambda m: m.tensor(1j), "bool"),
    ],
)
def test_one_value_under_a_mask_results(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no complex-to-real warning: a number is filled)
        _same(fn)


# ------------------------------------------------------------ numbers written by setitem
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "index", [lambda m: 0, lambda m: [0], lambda m: m.tensor([True, False]), lambda m: ...]
)
@pytest.mark.parametrize("number", [1e40, -1e5, 65519.0, 10**6, 1 + 0j])
def test_setitem_number_past_a_half_range_is_inf(dtype, index, number):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no numpy overflow warning either)
        _same(_set((2,), index, number, dtype))


@pytest.mark.parametrize(
    "fn",
    [
        _set((2,), lambda m: 0, 1j, "float16"),  # through a double, as torch names it
        _set((2,), lambda m: 0, 1j, "bfloat16"),
        # the number's range before the index
        _set((2,), lambda m: m.tensor([0], dtype=m.int8), -1.5, "uint8"),
        _set((2,), lambda m: m.tensor([True, False, True]), -1.5, "uint8"),
        _set((2,), lambda m: m.zeros(0, dtype=m.bool), -1.5, "uint8"),
        _set((2,), lambda m: [5], 1j),
        _set((2,), lambda m: [5], 300, "int8"),
        # a one-element value under a mask: after the index's checks
        _set(
            (5, 1),
            lambda m: (slice(None, 7, 2), slice(1, -2, 3), None, [True, True]),
            lambda m: m.tensor([300.0]),
            "uint8",
        ),
    ],
)
def test_setitem_number_errors(fn):
    same_error(fn)


def test_setitem_false_writes_nothing():
    _same(
        _set((3, 5), lambda m: False, lambda m: m.full((1, 1, 5), -3.5, dtype=m.float64), "uint8")
    )


# ------------------------------------------------------------ index_put_'s 0-dim index tensors
@pytest.mark.parametrize(
    "fn",
    [
        # an index tensor (it is not a select): its dim and the broadcast shapes say so
        lambda m: m.zeros(4, 3, 1).index_put_(
            (m.tensor(-3), m.tensor([[6, -3, 0], [0, 2, 2]])), m.ones(1), accumulate=True
        ),
        lambda m: m.zeros(2, 1, 1, 1, dtype=m.int16).index_put_(
            (m.tensor(1, dtype=m.int32), m.tensor([0, 0]), m.tensor([], dtype=m.int64)),
            m.ones(1, dtype=m.int16),
            accumulate=True,
        ),
        lambda m: m.zeros(1, 1, 1, dtype=m.float16).index_put_(
            (m.tensor([-1, 0]), m.tensor(-1, dtype=m.int32), m.tensor([-2])),
            m.ones(2, dtype=m.float16),
            accumulate=True,
        ),
        lambda m: m.zeros(3, 2, 1, dtype=m.int32).index_put_(
            (m.zeros(0, 2, dtype=m.int64), m.tensor(2)), m.tensor(1), accumulate=True
        ),
        # and the value as it is: no leading 1s dropped
        lambda m: m.zeros(3, 2).index_put_((m.tensor(0),), m.ones(1, 2)),
        lambda m: m.zeros(3, 2).index_put_((m.tensor([0]),), m.ones(1, 1, 2)),
    ],
)
def test_index_put_zero_dim_index_tensors(fn):
    same_error(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, 2).index_put_((m.tensor(1), m.tensor(1)), m.tensor(5.0)),
        lambda m: m.zeros(3, 2).index_put_(
            (m.tensor(1), m.tensor([0, 1, 1])), m.tensor([5.0, 6.0, 7.0]), accumulate=True
        ),
        lambda m: m.zeros(3, 2).index_put_((m.tensor([0]),), m.ones(1, 2)),
        # one mask and one value: a masked fill (any shape, converted)
        lambda m: m.zeros(1, 1, dtype=m.bool).index_put_(
            (m.tensor([[True]]),), m.ones(1, 1, dtype=m.bool)
        ),
        lambda m: m.zeros(3, dtype=m.int32).index_put_(
            (m.tensor([True, False, True]),), m.tensor([[2.5]])
        ),
    ],
)
def test_index_put_results(fn):
    _same(fn)


# ------------------------------------------------------------ writes into an expanded tensor
def _expanded(m):
    return m.arange(3.0).reshape(3, 1).expand(3, 4)


def _write(index, value):
    def fn(m):
        x = _expanded(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x[index(m)] = value(m) if callable(value) else value
        return x

    return fn


@pytest.mark.parametrize(
    "fn",
    [
        _write(lambda m: (slice(None), 0), 1.0),  # a region without shared elements
        _write(lambda m: (0, 0), 1.0),
        _write(lambda m: [0], 1.0),  # index_put_ writes the shared memory
        _write(lambda m: (slice(None), [0]), lambda m: m.ones(3, 1)),
        _write(lambda m: m.tensor([True, False, True]), 1.0),
        _write(lambda m: m.ones(3, 4, dtype=m.bool), 1.0),
        _write(lambda m: (slice(8, -2, 2),), lambda m: m.ones(0, 4)),
        lambda m: _expanded(m).index_put_((m.tensor([0, 0]),), m.ones(4), accumulate=True),
        # every update of elements sharing memory lands
        lambda m: (
            m.tensor([[-3]], dtype=m.int32)
            .expand(5, 1)
            .index_put_((m.tensor([0, -1]),), m.tensor([[1], [2]], dtype=m.int32), True)
        ),
        lambda m: _expanded(m).index_put_((m.tensor([True, False, True]),), m.ones(4), True),
    ],
)
def test_write_into_an_expanded_tensor(fn):
    _same(fn)


@pytest.mark.parametrize(
    "fn",
    [
        _write(lambda m: 0, 1.0),  # the region's elements share memory
        _write(lambda m: ..., 1.0),
        _write(lambda m: 0, lambda m: m.ones(4)),
        _write(lambda m: None, lambda m: m.ones(2, 4, 3)),  # the shapes first
    ],
)
def test_write_into_an_expanded_tensor_errors(fn):
    same_error(fn)


@pytest.mark.parametrize(
    "index, words",
    [
        (lambda m: [0], ["index_put_"]),
        (lambda m: m.zeros(3, dtype=m.bool), ["index_put_", "masked_fill_"]),
        (lambda m: (True, m.tensor([False, True, True])), ["index_put_"]),
        (lambda m: (slice(8, -2, 2), m.tensor([1])), []),  # nothing left to share memory
        (lambda m: m.tensor([], dtype=m.int64), ["index_put_"]),
    ],
)
def test_write_into_an_expanded_tensor_warns(index, words):
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _expanded(m)[index(m)] = 1.0
        got = [str(x.message).split(" (Triggered")[0] for x in w]
        assert [g.split(" ")[2] for g in got] == words
        if m is torch:
            want = got
    assert got == want


@pytest.mark.parametrize(
    "indices",
    [lambda m: (m.tensor(1), m.tensor([0, 1])), lambda m: (m.tensor(1),)],
)
def test_index_put_zero_dim_index_grad(indices):
    names, grads = [], []
    for m in (torch, ember):
        x = m.arange(6.0, dtype=m.float64).reshape(3, 2).requires_grad_()
        v = m.tensor([5.0, 6.0], dtype=m.float64, requires_grad=True)
        y = x * 1
        y.index_put_(indices(m), v, accumulate=True)
        names.append(y.grad_fn.name())
        y.backward(m.arange(1.0, 7.0, dtype=m.float64).reshape(3, 2) / 7)
        grads.append((x.grad.numpy(), v.grad.numpy()))
    assert names[1] == names[0] == "IndexPutBackward0"
    for e, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(e, t)


# ------------------------------------------------------------ setitem's node
@pytest.mark.parametrize(
    "shape, index, value",
    [
        ((3, 2), lambda m: True, lambda m: 1.0),  # a bool unsqueezes: a view
        ((3, 2), lambda m: (m.tensor([0]), True), lambda m: 1.0),
        ((3, 2), lambda m: (m.tensor(False),), lambda m: m.ones(2)),
        ((3, 2), lambda m: (Ellipsis, slice(None, 4, 1)), lambda m: 1.0),  # a skipped slice
        ((3, 2), lambda m: slice(0, None), lambda m: m.ones(1)),
        ((3, 2), lambda m: slice(0, None), lambda m: 1.0),
        ((3, 2), lambda m: slice(-3, None), lambda m: 1.0),
        ((3, 2), lambda m: (), lambda m: m.tensor(1.0)),  # a 0-dim value fills
        ((3, 2), lambda m: (), lambda m: m.ones(2)),
        ((), lambda m: ..., lambda m: 2.5),
        ((3, 2), lambda m: (slice(None), [1]), lambda m: 1.0),
        (
            (1, 1),
            lambda m: (m.tensor([[0, 1], [-1, 0]]), slice(None, -2)),
            lambda m: m.ones(2, 2, 0),
        ),
        (
            (3, 1, 0),
            lambda m: (m.tensor([[1, 0], [3, 0], [2, -3]]), Ellipsis),
            lambda m: m.ones(2, 1, 1),
        ),
        ((3, 2), lambda m: False, lambda m: m.ones(1, 2)),  # nothing written
    ],
)
def test_setitem_node_and_gradients(shape, index, value):
    res = []
    for m in (torch, ember):
        x = m.arange(float(np.prod(shape)), dtype=m.float64).reshape(shape).requires_grad_()
        v = value(m)
        if isinstance(v, m.Tensor):
            v = v.double().requires_grad_()
        y = x * 1
        y[index(m)] = v
        name = type(y.grad_fn).__name__ if m is torch else y.grad_fn.name().split("::")[-1]
        y.backward(m.arange(1.0, y.numel() + 1, dtype=m.float64).reshape(shape) / 7)
        vg = v.grad if isinstance(v, m.Tensor) else None
        res.append((name, x.grad.numpy(), None if vg is None else vg.numpy()))
    (tn, tx, tv), (en, ex, ev) = res
    assert en == tn
    np.testing.assert_allclose(ex, tx)
    assert (ev is None) == (tv is None)
    if tv is not None:
        np.testing.assert_allclose(ev, tv)


# ------------------------------------------------------------ masked_fill_ / masked_scatter shapes
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(2, 3).masked_fill_(m.tensor([True, False]), 1.0),  # self named first
        lambda m: m.zeros(2, 3).masked_fill_(m.tensor([True, False]), m.tensor(1.0)),
        lambda m: (m.zeros(2, 3, requires_grad=True) * 1).masked_fill_(m.tensor([True, False]), 1),
        lambda m: m.zeros(2, 3).masked_fill(m.tensor([True, False]), 1.0),  # the mask first
        lambda m: m.zeros(2, 3).masked_scatter_(m.tensor([True, False]), m.arange(6.0)),
        lambda m: m.zeros(3).masked_scatter_(m.ones(2, 3, dtype=m.bool), m.arange(6.0)),
        lambda m: m.zeros(2, 3).masked_scatter(m.tensor([True, False]), m.arange(6.0)),
    ],
)
def test_mask_shape_errors(fn):
    same_error(fn)


# ------------------------------------------------------------ augmented writes
@pytest.mark.parametrize(
    "make, index",
    [
        (lambda m: m.tensor(3.0).to(m.bfloat16), ()),  # (numpy's bfloat16 scalar)
        (lambda m: m.arange(5.0).reshape(1, 5).to(m.bfloat16), (-1, 0)),
        (lambda m: m.tensor(3, dtype=m.int16), (Ellipsis, Ellipsis)),
    ],
)
def test_augmented_write(make, index):
    def fn(m):
        x = make(m)
        x[index] *= 2
        return x

    _same(fn)


@pytest.mark.parametrize(
    "index, value",
    [
        # the value's leading 1s dropped, then the very same elements: allowed
        (0, lambda x: x[0:1]),
        (slice(0, 2), lambda x: x.view(1, 3)[:, :2]),
    ],
)
def test_setitem_from_its_own_elements(index, value):
    def fn(m):
        x = m.arange(3.0)
        x[index] = value(x)
        return x

    _same(fn)


# ------------------------------------------------------------ numpy index arrays
@pytest.mark.parametrize(
    "index",
    [
        np.array([0.7, 1.9]),  # torch reads them as long tensors, truncating
        np.array([-1.5]),
        np.array([1.0], np.float32),
        np.array([1], np.uint16),
        np.array(1.7),  # 0-dim: a select
        (slice(None), np.array([0.0, 2.0])),
        (0, np.array([0, 2], np.int8)),
    ],
)
def test_numpy_index_arrays(index):
    _same(lambda m: m.arange(6.0).reshape(2, 3)[index])


def test_numpy_index_array_refusals():
    same_error(lambda m: m.zeros(2, 3)[np.array([0, 1], dtype=object)])
    same_error(lambda m: m.zeros(2, 3)[np.array([5], np.int8)])
