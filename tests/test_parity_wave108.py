"""Parity regressions of the hundred-and-eighth wave: the per-call cost of training-loop idioms.
The wave gave the common calls fast paths that skip the op registry (plain, unnamed numpy
tensors no gradient flows through); these tests drive the calls each fast path hands back to the
general one, ember against torch in the same test:

* ``cat`` / ``stack`` (dim 0): mixed dtypes, bfloat16, requires_grad, 0-d inputs, legacy
  empty 1-D inputs, bad dims and sizes (stack's sizes that a flat join would still fit),
  transposed and channels_last inputs (the result's strides), inference mode;
* ``view`` / ``reshape`` / ``flatten``: bad sizes and dims, bool sizes, sizes as one tuple or
  Size, non-contiguous inputs, the shared version counter and base, a view made in no_grad then
  written with grad on, inference mode;
* ``zeros_like`` / ``ones_like`` / ``empty_like``: strides, Parameters, inference mode;
* ``to(dtype)`` / ``to("cpu")`` / ``float()`` / ``cpu()``: self when nothing changes, a copy or
  a cast otherwise;
* ``max()`` / ``min()``: empty, complex, NaN, bool, requires_grad;
* the comparison operators: broadcasting errors, mixed dtypes, integer wrap-around, half
  tensors with a scalar, NaN;
* ``where``: broadcasting errors, mixed dtypes, uint8 and float conditions, requires_grad,
  numbers, out=, bfloat16;
* ``topk``: NaN and smallest-k along a 2-D tensor's last dim (one fancy index now).

Left (mismatches at the wave's start, not touched by it): ``cat([zeros(0), zeros(0)], 1)``
raises ember's IndexError (torch skips the legacy empty inputs and returns one); a float16
tensor compared with a Python float compares with the float (torch rounds it to float16 first:
``half_t == 2.0001`` is True at 2.0); topk's order among tied values, and the strides of
``topk(0)``'s empty indices; ``to("cpux")``'s list of device types and ``to(3)``'s
accelerator error; ``x.flatten(True)``'s TypeError says position 2 (torch's method: 1).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly


def _desc(r):
    """What is compared of a result: a tensor's dtype, shape, values, strides and autograd
    flags; tuples element by element; anything else as is."""
    if isinstance(r, (torch.Tensor, ember.Tensor)):
        return (
            str(r.dtype).split(".")[-1],
            tuple(r.shape),
            repr(r.detach().tolist()),
            tuple(r.stride()),
            r.requires_grad,
            r.is_inference(),
        )
    if isinstance(r, (tuple, list)):
        return type(r).__name__, [_desc(x) for x in r]
    return r


def _outcome(fn):
    """``fn`` run on torch and on ember: the same error (type and message) or the same result."""
    (te, tr), (ee, er) = run_quietly(fn, torch), run_quietly(fn, ember)
    if te is not None or ee is not None:
        assert (type(ee).__name__, str(ee)) == (type(te).__name__, str(te))
        return
    assert _desc(er) == _desc(tr)


def _t(m, shape, dtype="float32", start=0):
    n = int(np.prod(shape))
    return m.arange(start, start + n, dtype=getattr(m, dtype)).reshape(shape)


def _cl(m, shape):
    return _t(m, shape).contiguous(memory_format=m.channels_last)


# ---------------------------------------------------------------------- cat / stack
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.cat([_t(m, (2, 3)), _t(m, (1, 3), "float64")]),
        lambda m: m.cat([_t(m, (2, 3), "int64"), _t(m, (1, 3), "int32")]),
        lambda m: m.cat([_t(m, (2, 3), "bfloat16"), _t(m, (1, 3), "bfloat16")]),
        lambda m: m.cat([_t(m, (2, 3)) > 2, _t(m, (2, 3)) < 2], 1),
        lambda m: m.cat((_t(m, (2, 3)), _t(m, (2, 3))), -1),
        lambda m: m.cat([_t(m, (2, 3)).requires_grad_(), _t(m, (2, 3))]),
        lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)]),
        lambda m: m.cat([m.zeros(0), _t(m, (2, 3))], 1),
        lambda m: m.cat([m.zeros(0), _t(m, (4,))]),
        lambda m: m.cat([_t(m, (2, 3)), _t(m, (2, 3))], 2),
        lambda m: m.cat([_t(m, (2, 3)), _t(m, (2, 4))]),
        lambda m: m.cat([_t(m, (2, 3)), _t(m, (3,))]),
        lambda m: m.cat([]),
        lambda m: m.cat([_t(m, (3, 2)).t(), _t(m, (3, 2)).t()]),
        lambda m: m.cat([_t(m, (3, 2)).t(), _t(m, (3, 2)).t()], 1),
        lambda m: m.cat([_cl(m, (2, 3, 4, 5)), _cl(m, (2, 3, 4, 5))]),
        lambda m: m.cat([_cl(m, (2, 3, 4, 5)), _t(m, (2, 3, 4, 5))], 1),
        lambda m: m.stack([_t(m, (2, 4)), _t(m, (1, 4)), _t(m, (3, 4))]),
        lambda m: m.stack([_t(m, (2, 4)), _t(m, (2, 5))]),
        lambda m: m.stack([m.tensor(1.0), m.tensor(2.0), m.tensor(3.0)]),
        lambda m: m.stack([m.zeros(0), m.zeros(0)]),
        lambda m: m.stack([m.tensor(1), m.tensor(2.0)]),
        lambda m: m.stack([m.tensor(True), m.tensor(False)]),
        lambda m: m.stack([m.tensor(1.0), m.tensor([2.0])]),
        lambda m: m.stack([_t(m, (2, 3)), _t(m, (2, 3), "float64")]),
        lambda m: m.stack([_t(m, (2, 3), "bfloat16"), _t(m, (2, 3), "bfloat16")]),
        lambda m: m.stack([_t(m, (2, 3)), _t(m, (2, 3)).requires_grad_()]),
        lambda m: m.stack([_t(m, (3, 2)).t(), _t(m, (3, 2)).t()]),
        lambda m: m.stack([_cl(m, (2, 3, 4, 5)), _cl(m, (2, 3, 4, 5))]),
        lambda m: m.stack([_t(m, (2, 3))] * 3, 1),
        lambda m: m.stack([]),
    ],
)
def test_join_general_cases(call):
    _outcome(call)


def test_join_in_inference_mode():
    def fn(m):
        a, b = _t(m, (2, 3)), _t(m, (2, 3))
        with m.inference_mode():
            return m.cat([a, b]), m.stack([a, b])

    _outcome(fn)


def test_default_collate_of_samples():
    def fn(m):
        rows = m.arange(12, dtype=m.float32).reshape(4, 3)
        labels = m.arange(4)
        batch = [(rows[i], labels[i], i, float(i)) for i in range(4)]
        return m.utils.data.default_collate(batch)

    _outcome(fn)


# ---------------------------------------------------------------------- view / reshape
@pytest.mark.parametrize(
    "call",
    [
        lambda m: _t(m, (3, 4)).view(-2),
        lambda m: _t(m, (3, 4)).view(-1, -1),
        lambda m: _t(m, (3, 4)).view(5),
        lambda m: _t(m, (3, 4)).view(6, True),
        lambda m: _t(m, (3, 4)).view(2, 6),
        lambda m: _t(m, (3, 4)).view(0, -1),
        lambda m: _t(m, (0, 4)).view(0, -1),
        lambda m: m.tensor(2.0).view(-1),
        lambda m: _t(m, (3, 4)).t().view(-1),
        lambda m: _t(m, (3, 4)).reshape(-2),
        lambda m: _t(m, (3, 4)).reshape(2, -1),
        lambda m: _t(m, (3, 4)).t().reshape(-1),
        lambda m: _t(m, (3, 4)).requires_grad_().view(12),
        lambda m: _t(m, (3, 4)).view((2, 6)),
        lambda m: _t(m, (3, 4)).view([2, 6]),
        lambda m: _t(m, (3, 4)).view(m.Size([6, 2])),
        lambda m: _t(m, (3, 4)).view((2, -2)),
        lambda m: _t(m, (3, 4)).view((2, 6), 1),
        lambda m: _t(m, (3, 4)).reshape((2, -1)),
        lambda m: _t(m, (3, 4)).reshape(m.Size([4, 3])),
        lambda m: _t(m, (3, 4)).t().reshape((2, 6)),
        lambda m: _t(m, (2, 3, 4, 5)).flatten(1),
        lambda m: _t(m, (2, 3, 4, 5)).flatten(-3, -2),
        lambda m: _t(m, (2, 3, 4, 5)).flatten(2, 1),
        lambda m: _t(m, (2, 3, 4, 5)).flatten(5),
        lambda m: _t(m, (2, 3, 4, 5)).flatten(0, -5),
        lambda m: _t(m, (2, 3, 4, 5)).transpose(1, 2).flatten(1),
        lambda m: _t(m, (2, 3, 4, 5)).requires_grad_().flatten(1),
        lambda m: _t(m, (3, 4)).flatten(1),
        lambda m: m.tensor(2.0).flatten(),
        lambda m: m.tensor(2.0).flatten(0, -1),
    ],
)
def test_view_general_cases(call):
    _outcome(call)


def test_view_shares_version_and_base():
    def fn(m):
        x = _t(m, (3, 4))
        v, r = x.view(-1), x.reshape(4, 3)
        v.add_(1)
        return x._version, v._version, r._version, v._base is x, r._base is x, x, r

    _outcome(fn)


def test_view_made_in_no_grad_written_with_grad():
    def fn(m):
        x = _t(m, (3, 4))
        with m.no_grad():
            v = x.view(-1)
        v.mul_(m.ones(12, requires_grad=True))
        return v

    _outcome(fn)


def test_view_made_in_inference_mode():
    def fn(m):
        x = _t(m, (3, 4))
        with m.inference_mode():
            v = x.view(-1)
        v.add_(1)
        return v, x._version

    _outcome(fn)


# ---------------------------------------------------------------------- *_like
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like"])
@pytest.mark.parametrize(
    "make",
    [
        lambda m: _t(m, (3, 4)).t(),
        lambda m: _cl(m, (2, 3, 4, 5)),
        lambda m: m.nn.Parameter(_t(m, (3, 4))),
        lambda m: _t(m, (3, 4), "int64") > 3,
        lambda m: m.tensor(1.5),
    ],
)
def test_like_general_cases(name, make):
    def fn(m):
        r = getattr(m, name)(make(m))
        if name == "empty_like":  # (its values are whatever memory held)
            r = r.zero_()
        return type(r).__name__, r

    _outcome(fn)


def test_like_in_inference_mode():
    def fn(m):
        x = _t(m, (3, 4))
        with m.inference_mode():
            return m.zeros_like(x)

    _outcome(fn)


# ---------------------------------------------------------------------- to / float / cpu
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.to(m.float32) is x,
        lambda m, x: x.float() is x,
        lambda m, x: x.cpu() is x,
        lambda m, x: x.to("cpu") is x,
        lambda m, x: x.to("cpu:0") is x,
        lambda m, x: x.to(m.device("cpu")) is x,
        lambda m, x: x.to(x) is x,
        lambda m, x: x.to("cpu", copy=True) is x,
        lambda m, x: x.to(m.float32, copy=True) is x,
        lambda m, x: x.to(m.float64),
        lambda m, x: x.double().float(),
        lambda m, x: x.to("float32"),
        lambda m, x: m.nn.Parameter(x).cpu() is not None,
        lambda m, x: type(m.nn.Parameter(x).float()).__name__,
        lambda m, x: x.requires_grad_().float() is x,
    ],
)
def test_to_cases(call):
    _outcome(lambda m: call(m, _t(m, (3, 4))))


# ---------------------------------------------------------------------- max() / min()
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.zeros(0),
        lambda m: m.zeros(2, 3, dtype=m.complex64),
        lambda m: m.tensor([1.0, float("nan"), 3.0]),
        lambda m: m.tensor([True, False]),
        lambda m: _t(m, (3, 4), "int64"),
        lambda m: _t(m, (3, 4), "float16"),
        lambda m: _t(m, (3, 4), "bfloat16"),
        lambda m: m.tensor(2.5),
        lambda m: _t(m, (3, 4)).requires_grad_(),
    ],
)
def test_max_all_cases(name, make):
    _outcome(lambda m: getattr(make(m), name)())


# ---------------------------------------------------------------------- comparison operators
_OPS = ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"]


@pytest.mark.parametrize("op", _OPS)
@pytest.mark.parametrize(
    "pair",
    [
        lambda m: (_t(m, (2, 3)), _t(m, (3, 2))),
        lambda m: (_t(m, (2, 3)), _t(m, (3,), "float64", 1)),
        lambda m: (_t(m, (2, 3), "int64"), _t(m, (2, 3), start=0.5)),
        lambda m: (_t(m, (2, 3), "uint8"), 260),
        lambda m: (_t(m, (2, 3), "int64"), 2.5),
        lambda m: (_t(m, (2, 3), "bfloat16"), 2.01),
        lambda m: (m.tensor([1.0, float("nan")]), float("nan")),
        lambda m: (m.tensor([0.1, 0.2]), 0.1),
        lambda m: (m.tensor([0.1, 0.2], dtype=m.float64), 0.1),
        lambda m: (m.tensor([1.0, 2.0]), 2**70),
        lambda m: (m.tensor(1.0), m.tensor(1.0)),
        lambda m: (m.tensor([True, False]), m.tensor([True, True])),
        lambda m: (_t(m, (2, 3)).requires_grad_(), _t(m, (2, 3))),
        lambda m: (_t(m, (2, 3)), m.tensor([1.0, 2.0, 3.0], dtype=m.complex64)),
    ],
)
def test_comparison_cases(op, pair):
    _outcome(lambda m: getattr(pair(m)[0], op)(pair(m)[1]))


# ---------------------------------------------------------------------- where
@pytest.mark.parametrize(
    "call",
    [
        lambda m, c, x: m.where(c, x, x * 2),
        lambda m, c, x: m.where(c, x, x[0]),
        lambda m, c, x: m.where(c[0], x, -x),
        lambda m, c, x: m.where(c, x, x.t()),
        lambda m, c, x: m.where(c, x, x[:2]),
        lambda m, c, x: m.where(c[:2], x, -x),
        lambda m, c, x: m.where(c, x, x.double()),
        lambda m, c, x: m.where(c, x.long(), x.int()),
        lambda m, c, x: m.where(c.to(m.uint8), x, -x),
        lambda m, c, x: m.where(c.float(), x, -x),
        lambda m, c, x: m.where(c, x.requires_grad_(), -x),
        lambda m, c, x: m.where(c, x, 0.5),
        lambda m, c, x: m.where(c, x, -x, out=m.empty(3, 3)),
        lambda m, c, x: m.where(m.tensor(True), m.tensor(1.0), m.tensor(2.0)),
        lambda m, c, x: m.where(c, x.bfloat16(), -x.bfloat16()),
    ],
)
def test_where_cases(call):
    def fn(m):
        x = _t(m, (3, 3))
        return call(m, x.remainder(2) == 0, x)

    _outcome(fn)


# ---------------------------------------------------------------------- topk
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.topk(3),
        lambda m, x: x.topk(3, largest=False),
        lambda m, x: x.topk(3, 0),
        lambda m, x: x.reshape(2, 2, 20).topk(3),
        lambda m, x: x[0].topk(3),
    ],
)
def test_topk_nan_and_smallest(call):
    def fn(m):
        x = m.tensor(np.random.RandomState(0).permutation(80).astype(np.float32).reshape(4, 20))
        x[1, 5] = float("nan")
        return tuple(call(m, x))

    _outcome(fn)
