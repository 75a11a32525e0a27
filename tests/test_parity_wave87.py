"""Parity regressions of the eighty-seventh wave, the indexing and scatter/gather family fuzzed
against torch (errors: type and full text; results: dtype and values). It found:

* a Tensor method counting self among its arguments (``x.index_add(0, "a", s)``: "position 3",
  torch's 2; ``x.dot("a")`` alike) and the in-place ones printing their private kernel's name
  (``_index_add()``, ``_scatter_add()``, ``_index_copy()``, ``_scatter_reduce()``), index_reduce
  failing with an AttributeError, ``alpha="a"`` with numpy's UFuncTypeError, index_put naming
  no position; torch counts a method's arguments after self and names the in-place method;
* "invalid combination" errors without torch's "didn't match because ..." line under each
  overload of the call's length (where, index_fill, masked_fill, scatter, fill_, eq_ ...),
  masked_fill / index_fill given a str value naming a Tensor argument, x.scatter_(0, i, s,
  "add") taking "add" for the value, and x.scatter(...) listing the function's overloads;
* torch's order of checks: take_along_dim (ranks before the index dtype), masked_scatter and
  masked_fill out of place (the broadcast first), masked_fill_ (the value's rank, the mask's
  dtype, the shapes, then the value's range), scatter_reduce / scatter (the shapes, then the
  reduction's name, then the index values), index_reduce (the dim first), index_fill (the
  value's rank, the index dtype, a complex value, the dim, the index's rank), indexing (too many
  indices and a bad slice step before a str or float item; a str item is a TypeError; a value
  neither number nor tensor refused before the index is read);
* scatter / scatter_add / scatter_reduce with a src of fewer dims than the index leaking
  numpy's IndexError, and a 0-d src with an n-d index accepted (torch: "Index tensor must have
  the same number of dimensions as src tensor");
* masked_fill_ without grad writing a complex or out-of-range number into a float tensor
  (torch: "value cannot be converted to type float without overflow").
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly
from harness import upstream as _up


def _outcome(call, T):
    """(error type, full text) or ("ok", dtype, values) of ``call(T)``."""
    e, r = run_quietly(call, T)
    if e is not None:
        return type(e).__name__, str(e).replace("torch.", "").replace("ember.", "")
    return "ok", str(r.dtype).split(".")[-1], np.asarray(r.detach().float().numpy()).tolist()


def _x(T):
    return T.arange(6.0).reshape(2, 3)


def _i(T):
    return T.tensor([[0, 1, 0]])


def _s(T):
    return T.ones(2, 3)


def _i1(T):
    return T.tensor([0, 1])


# each call is spelled as a user writes it (method or function): torch tells them apart
CASES = {
    # ---- a method counts after self, an in-place one names itself
    "index_add_method": lambda T: _x(T).index_add(0, "a", _s(T)),
    "index_add_function": lambda T: T.index_add(_x(T), 0, "a", _s(T)),
    "index_add_inplace": lambda T: _x(T).index_add_(0, "a", _s(T)),
    "index_add_inplace_source": lambda T: _x(T).index_add_(0, _i1(T), "a"),
    "index_add_inplace_alpha": lambda T: _x(T).index_add_(0, _i1(T), _s(T), alpha="a"),
    "index_add_alpha": lambda T: _x(T).index_add(0, _i1(T), _s(T), alpha="a"),
    "index_copy_method": lambda T: _x(T).index_copy(0, "a", _s(T)),
    "index_copy_inplace": lambda T: _x(T).index_copy_(0, "a", _s(T)),
    "scatter_add_method": lambda T: _x(T).scatter_add(0, "a", _s(T)),
    "scatter_add_inplace": lambda T: _x(T).scatter_add_(0, "a", _s(T)),
    "scatter_add_inplace_src": lambda T: _x(T).scatter_add_(0, _i(T), "a"),
    "scatter_reduce_method": lambda T: _x(T).scatter_reduce(0, "a", _s(T), "sum"),
    "scatter_reduce_inplace": lambda T: _x(T).scatter_reduce_(0, "a", _s(T), "sum"),
    "index_reduce_method": lambda T: _x(T).index_reduce(0, "a", _s(T), "prod"),
    "index_reduce_inplace": lambda T: _x(T).index_reduce_(0, "a", _s(T), "prod"),
    "index_select_method": lambda T: _x(T).index_select(0, "a"),
    "gather_method": lambda T: _x(T).gather(0, "a"),
    "gather_float_dim": lambda T: _x(T).gather(0.0, _i(T)),
    "gather_function_float_dim": lambda T: T.gather(_x(T), 0.0, _i(T)),
    "take_method": lambda T: _x(T).take("a"),
    "take_along_dim_method": lambda T: _x(T).take_along_dim("a"),
    "put_method": lambda T: _x(T).put("a", _s(T)),
    "put_inplace": lambda T: _x(T).put_("a", _s(T)),
    "masked_scatter_method": lambda T: _x(T).masked_scatter("a", _s(T)),
    "masked_scatter_inplace": lambda T: _x(T).masked_scatter_("a", _s(T)),
    "masked_select_method": lambda T: _x(T).masked_select("a"),
    "dot_method": lambda T: T.ones(3).dot("a"),
    "index_put_method": lambda T: _x(T).index_put("a", _s(T)),
    "index_put_function": lambda T: T.index_put(_x(T), "a", _s(T)),
    "index_put_inplace": lambda T: _x(T).index_put_("a", _s(T)),
    "index_put_chained_receiver": lambda T: (_x(T) + 1).index_put((_i1(T),), [1.0]),
    # ---- "invalid combination" errors: the notes under the overloads, the method's listing
    "scatter_method_index": lambda T: _x(T).scatter(0, "i", _s(T)),
    "scatter_function_index": lambda T: T.scatter(_x(T), 0, "i", _s(T)),
    "scatter_inplace_index": lambda T: _x(T).scatter_(0, "i", _s(T)),
    "scatter_inplace_keyword_value": lambda T: _x(T).scatter_(0, "i", value=_s(T)),
    "scatter_inplace_str_dim": lambda T: _x(T).scatter_("a", _i(T), _s(T)),
    "scatter_inplace_positional_reduce": lambda T: _x(T).scatter_(0, _i(T), _s(T), "add"),
    "index_fill_method_value": lambda T: _x(T).index_fill(0, _i1(T), "a"),
    "index_fill_function_value": lambda T: T.index_fill(_x(T), 0, _i1(T), "a"),
    "index_fill_inplace_list": lambda T: _x(T).index_fill_(0, [1, 2], None),
    "masked_fill_method_mask": lambda T: _x(T).masked_fill("a", 1),
    "masked_fill_method_value": lambda T: _x(T).masked_fill(_x(T) > 0, "a"),
    "masked_fill_function_value": lambda T: T.masked_fill(_x(T), _x(T) > 0, "a"),
    "masked_fill_inplace_value": lambda T: _x(T).masked_fill_(_x(T) > 0, "a"),
    "masked_fill_inplace_tuple": lambda T: _x(T).masked_fill_(_x(T) > 0, (1, "a")),
    "masked_fill_inplace_value_long_mask": lambda T: _x(T).masked_fill_(_i(T), "a"),
    "where_str": lambda T: T.where(_x(T) > 0, "a", _x(T)),
    "where_other_str": lambda T: T.where(_x(T) > 0, _x(T), "a"),
    "fill_str": lambda T: _x(T).fill_("a"),
    # ---- torch's order of checks
    "take_along_dim_rank_before_dtype": lambda T: _x(T).take_along_dim(
        T.tensor([0, 1], dtype=T.int16), 1
    ),
    "masked_scatter_broadcast_first": lambda T: _x(T).masked_scatter(
        T.ones(2, dtype=T.bool), T.ones(6, dtype=T.long)
    ),
    "masked_fill_broadcast_first": lambda T: _x(T).masked_fill(T.ones(2, dtype=T.long), 2),
    "masked_fill_broadcast_before_range": lambda T: (
        _x(T).int().masked_fill(T.ones(2, dtype=T.bool), 1 + 2j)
    ),
    "masked_fill_value_rank_first": lambda T: _x(T).masked_fill(T.tensor(1), T.ones(3)),
    "masked_fill_inplace_value_rank_first": lambda T: _x(T).masked_fill_(
        T.tensor([1, 0, 1]), T.ones(3)
    ),
    "masked_fill_inplace_mask_dtype_first": lambda T: _x(T).masked_fill_(T.ones(2).long(), 2),
    "masked_fill_inplace_shape_before_range": lambda T: (
        _x(T).int().masked_fill_(T.ones(3, 3, dtype=T.bool), 1 + 2j)
    ),
    "scatter_reduce_index_dtype_before_name": lambda T: _x(T).scatter_reduce(
        0, _i(T).byte(), _s(T), "add"
    ),
    "scatter_reduce_src_dtype_before_name": lambda T: _x(T).scatter_reduce_(
        0, _i(T), _s(T).long(), "foo"
    ),
    "scatter_reduce_dim_before_name": lambda T: _x(T).scatter_reduce(3, _i(T), _s(T), "foo"),
    "scatter_reduce_name_before_bounds": lambda T: _x(T).scatter_reduce(
        0, _i(T) + 7, _s(T), "foo", include_self=False
    ),
    "scatter_reduce_src_rank": lambda T: T.ones(3).scatter_reduce(0, _i1(T), T.ones(2, 2), "amax"),
    "scatter_value_reduce_name_first": lambda T: _x(T).scatter(0, _i(T) + 7, 1.0, reduce="sum"),
    "scatter_value_reduce_name_empty": lambda T: _x(T).scatter(
        0, T.zeros(0, dtype=T.long), 1.0, reduce="sum"
    ),
    "scatter_value_range_before_bounds": lambda T: (
        T.ones(3).byte().scatter(0, T.tensor([0, 7]), 1 + 2j)
    ),
    "scatter_src_fewer_dims": lambda T: _x(T).scatter(0, _i(T), T.ones(3)),
    "scatter_add_src_fewer_dims": lambda T: _x(T).scatter_add(0, _i(T), T.ones(3)),
    "scatter_add_src_0d": lambda T: _x(T).scatter_add(0, _i(T), T.tensor(1.0)),
    "scatter_add_src_more_dims": lambda T: T.ones(3).scatter_add(0, _i1(T) + 7, T.ones(2, 2)),
    "scatter_add_src_0d_1d_index": lambda T: T.ones(3).scatter_add(0, T.tensor([0]), T.tensor(2.0)),
    "index_reduce_dim_first": lambda T: _x(T).index_reduce(5, T.zeros(2), _s(T).long(), "prod"),
    "index_reduce_name_before_dim": lambda T: _x(T).index_reduce(5, T.zeros(2), _s(T), "foo"),
    "index_fill_value_rank_first": lambda T: _x(T).index_fill(
        5, T.zeros(2, 2, dtype=T.int16), T.ones(2)
    ),
    "index_fill_dtype_before_complex": lambda T: _x(T).index_fill(0, T.zeros(2, dtype=T.int16), 1j),
    "index_fill_complex_before_dim": lambda T: _x(T).index_fill(5, T.zeros(2).long(), 1j),
    "index_fill_dim_before_rank": lambda T: _x(T).index_fill(-3, T.zeros(2, 2, dtype=T.long), True),
    "index_fill_rank_before_range": lambda T: (
        _x(T).int().index_fill(0, T.zeros(2, 2, dtype=T.long), 1e20)
    ),
    "getitem_too_many_before_str": lambda T: _x(T)["a", ::-1, [0, 1.0]],
    "getitem_too_many_before_float": lambda T: T.tensor(1.0)[3, 1.0],
    "getitem_str": lambda T: _x(T)["a"],
    "getitem_step_before_float": lambda T: _x(T)[::0, 1.0],
    "getitem_0d_slice_step": lambda T: T.tensor(1.0)[::-1],
    "setitem_0d_slice_step": lambda T: T.tensor(1.0).__setitem__(slice(None, None, 0), 1.0),
    "setitem_str_value_before_index": lambda T: _x(T).__setitem__((1.0, 0), "a"),
    "setitem_str_value_before_step": lambda T: _x(T).__setitem__(slice(None, None, -1), "a"),
    # ---- values
    "masked_fill_inplace_complex_into_float": lambda T: _x(T).masked_fill_(_x(T) > 2, 1 + 2j),
    "masked_fill_inplace_overflow_float32": lambda T: _x(T).masked_fill_(_x(T) > 2, 1e300),
    "masked_fill_inplace_overflow_bfloat16": lambda T: (
        _x(T).bfloat16().masked_fill_(_x(T) > 2, 1e300)
    ),
    "masked_fill_inplace_float64_large": lambda T: _x(T).double().masked_fill_(_x(T) > 2, 1e300),
    "masked_fill_inplace_real_complex": lambda T: _x(T).masked_fill_(_x(T) > 2, 1 + 0j),
    "masked_fill_inplace_bool_complex": lambda T: (_x(T) > 1).masked_fill_(_x(T) > 2, 1 + 2j),
    "scatter_value_ok": lambda T: _x(T).scatter(1, _i(T), 2.5, reduce="multiply"),
    "scatter_reduce_amin_ok": lambda T: _x(T).scatter_reduce(
        0, _i(T), -_s(T)[:1], "amin", include_self=False
    ),
    "index_fill_0d_self": lambda T: T.tensor(1.0).index_fill(0, T.tensor([0]), 3),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_outcome_as_torch(name):
    call = CASES[name]
    assert _outcome(call, ember) == _outcome(call, torch)


def test_no_source_call_counts_a_method_after_self():
    # a call compiled from a string has no source line: the bytecode tells a method call
    code = compile("x.index_add(0, 'a', s)", "<no-source>", "eval")
    got = {}
    for T in (torch, ember):
        with pytest.raises(TypeError) as info:
            eval(code, {"x": _x(T), "s": _s(T)})
        got[T] = str(info.value)
    assert (
        got[ember]
        == got[torch]
        == ("index_add(): argument 'index' (position 2) must be Tensor, not str")
    )


def _grad_run(T, f, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    xs = [T.tensor(rng.standard_normal(s)).requires_grad_() for s in shapes]
    y = f(T, *xs)
    y.backward(_up(T, y))
    return [y.detach().numpy()] + [x.grad.numpy() for x in xs]


GRADS = {
    # a mask broadcast along the rows (the check order of masked_fill changed)
    "masked_fill_broadcast": (
        lambda T, x: x.masked_fill(T.tensor([True, False, True]), 0.5),
        [(2, 3)],
    ),
    # ties of amax / amin share the gradient as torch does
    "scatter_reduce_amax_ties": (
        lambda T, x, s: x.scatter_reduce(
            0, T.tensor([[0, 1, 0], [0, 1, 1]]), s.round(), "amax", include_self=False
        ),
        [(2, 3), (2, 3)],
    ),
    "scatter_reduce_amin_ties_self": (
        lambda T, x, s: x.round().scatter_reduce(0, T.tensor([[0, 0, 1], [0, 0, 1]]), s, "amin"),
        [(2, 3), (2, 3)],
    ),
    # duplicate indices accumulate
    "index_put_accumulate_duplicates": (
        lambda T, x, v: x.index_put((T.tensor([0, 2, 0, 0]),), v, accumulate=True),
        [(3, 2), (4, 2)],
    ),
    "scatter_value_reduce_add": (
        lambda T, x: x.scatter(1, T.tensor([[0, 0], [2, 1]]), 1.5) * x,
        [(2, 3)],
    ),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_torch(name):
    f, shapes = GRADS[name]
    a = _grad_run(torch, f, *shapes)
    b = _grad_run(ember, f, *shapes)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["masked_fill_broadcast", "index_put_accumulate_duplicates"])
def test_gradcheck(name):
    f, shapes = GRADS[name]
    rng = np.random.default_rng(1)
    xs = [ember.tensor(rng.standard_normal(s)).requires_grad_() for s in shapes]
    assert ember.autograd.gradcheck(lambda *a: f(ember, *a), xs)


@pytest.mark.parametrize("idx", [[0, 7], [-4, -3]])
def test_scatter_value_range_or_first_index(idx):
    # torch converts the value at its first write: a first index out of bounds is reported
    def call(T):
        return T.ones(2, 3).byte().scatter(1, T.tensor([idx]), 1j)

    assert _outcome(call, ember) == _outcome(call, torch)
