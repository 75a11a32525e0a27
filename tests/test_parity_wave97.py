"""Parity regressions of the ninety-seventh wave: torch's ``int[]`` ("tuple of ints") argument
parser, one spelling in ``arg_errors.int_list``/``int_list_error``/``int_varargs`` for sizes,
pads and dims (first error: type and full text; results: dtype and shape). It covers:

* factory sizes (zeros/ones/empty/rand/randn/full/randint): a bad first element picks no
  overload (a keyword ``size=`` is then blamed as a whole, without a position); a bad later
  element fails the unpack ("failed to unpack the object at pos k"), where a bool is taken;
  numpy integers and 0-d integer tensors are sizes. It found rand/randn/randint not listing
  their signatures where torch's parser finds several that take as many arguments (a
  generator, loose sizes, randint's (low, high, size)), randint's keyword forms refused,
  full and new_full numbering a keyword ``size``/``fill_value``, Tensor.new_zeros taking
  ``size=`` as one int and beside a positional size, and torch's Generator type name;
* F.pad's pad; permute/flip given loose, as one sequence or by keyword (a keyword int[] is
  a sequence only: ``x.permute(dims=1)`` is refused; ``x.flip(True)`` blames the bool
  itself); movedim/roll dims; reshape/view sizes by keyword (no position) and view's
  one-sequence listing; ``x.reshape(6, True)`` (numpy refused the bool);
* reductions (sum/mean/amax/amin/nansum/logsumexp/std/var) given a dim list with a bad
  element, by position and by keyword; an int dim given a bool or a float tensor (it leaked
  numpy's "only integer tensors" error or was taken as 1); ``transpose(0, (1,))``;
* expand/repeat/tile, broadcast_to (named as called), as_strided and unflatten (one int or
  None is no int[] there; ``[[1], 3]`` is no named shape), Tensor.resize_ and sum_to_size
  (floats were truncated), split's sizes, and the pools' kernel_size/stride/output_size
  (numpy scalars named as torch names them; a bool past the first is an int).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly


def _outcome(call, T):
    """(error type, full text) or ("ok", dtype, shape) of ``call(T)`` (of each of its results
    for a tuple: split's)."""
    e, r = run_quietly(call, T)
    if e is not None:
        return type(e).__name__, str(e)
    rs = r if isinstance(r, tuple) else (r,)
    return "ok", [(str(t.dtype).split(".")[-1], tuple(t.shape)) for t in rs]


def _x(T):
    return T.ones(2, 3)


def _x3(T):
    return T.ones(2, 3, 4)


# elements an int[] refuses (or, where marked ok, takes), each made for its library
BAD = {
    "float": lambda T: 1.0,
    "bool": lambda T: True,
    "none": lambda T: None,
    "np_float": lambda T: np.float32(1),
    "float_tensor": lambda T: T.tensor(1.0),
    "list": lambda T: [1],
}
GOOD = {
    "np_int": lambda T: np.int64(1),
    "int_tensor": lambda T: T.tensor(1),
}
ELEMS = {**BAD, **GOOD}

FACTORIES = ("zeros", "ones", "empty", "rand", "randn")

SIZE_CASES = {
    "loose_first": lambda T, f, v: getattr(T, f)(v(T), 2),
    "loose_second": lambda T, f, v: getattr(T, f)(2, v(T)),
    "alone": lambda T, f, v: getattr(T, f)(v(T)),
    "seq_first": lambda T, f, v: getattr(T, f)((v(T), 2)),
    "seq_second": lambda T, f, v: getattr(T, f)([2, v(T)]),
    "kw_first": lambda T, f, v: getattr(T, f)(size=(v(T), 2)),
    "kw_second": lambda T, f, v: getattr(T, f)(size=[2, v(T)]),
    "kw_alone": lambda T, f, v: getattr(T, f)(size=v(T)),
}


@pytest.mark.parametrize("elem", sorted(ELEMS))
@pytest.mark.parametrize("case", sorted(SIZE_CASES))
@pytest.mark.parametrize("fn", FACTORIES)
def test_factory_size(fn, case, elem):
    call = SIZE_CASES[case]
    v = ELEMS[elem]
    assert _outcome(lambda T: call(T, fn, v), ember) == _outcome(lambda T: call(T, fn, v), torch)


def _gen(T):
    return T.Generator()


MISC = {
    # ---- factories: the number of arguments decides whether torch lists its signatures
    "zeros_kw_int": lambda T: T.zeros(size=2),
    "zeros_pos_and_kw": lambda T: T.zeros(2, size=(2,)),
    "rand_pos_and_kw": lambda T: T.rand(2, size=(2,)),
    "rand_kw_int": lambda T: T.rand(size=2),
    "randn_kw_int_generator": lambda T: T.randn(size=2, generator=_gen(T)),
    "rand_float_generator": lambda T: T.rand(2.0, generator=_gen(T)),
    "rand_bool_first_generator": lambda T: T.rand(True, 2, generator=_gen(T)),
    "rand_float_second_generator": lambda T: T.rand(2, 3.0, generator=_gen(T)),
    "rand_kw_bool_second": lambda T: T.rand(size=(2, True)),
    "zeros_np_ints": lambda T: T.zeros(np.int64(2), np.int32(3)),
    "zeros_negative": lambda T: T.zeros(2, -1),
    "ones_negative": lambda T: T.ones(2, -1),
    # ---- full: size and fill_value by position or by keyword
    "full_float": lambda T: T.full(2.0, 1.0),
    "full_int": lambda T: T.full(2, 1.0),
    "full_int_kw_fill": lambda T: T.full(2, fill_value=1.0),
    "full_str": lambda T: T.full("ab", 1.0),
    "full_none": lambda T: T.full(None, 1.0),
    "full_seq_float_first": lambda T: T.full((2.0, 3), 1.0),
    "full_seq_float_second": lambda T: T.full((2, 3.0), 1.0),
    "full_seq_bool_first": lambda T: T.full((True, 2), 1.0),
    "full_seq_bool_second": lambda T: T.full((2, True), 1.0),
    "full_seq_np": lambda T: T.full((np.int64(2), T.tensor(3)), 1.0),
    "full_kw_int": lambda T: T.full(size=2, fill_value=1.0),
    "full_kw_none": lambda T: T.full(size=None, fill_value=1.0),
    "full_kw_float_first": lambda T: T.full(size=(2.0, 3), fill_value=1.0),
    "full_kw_float_second": lambda T: T.full(size=(2, 3.0), fill_value=1.0),
    "full_kw_bool_second": lambda T: T.full(fill_value=2, size=[2, True]),
    "full_kw_str_fill": lambda T: T.full(size=(2,), fill_value="a"),
    "full_kw_none_fill": lambda T: T.full(size=(2,), fill_value=None),
    "full_none_fill": lambda T: T.full((2,), None),
    "full_kw_size_first_bad_fill": lambda T: T.full(size=(2.0,), fill_value="a"),
    "full_missing_fill": lambda T: T.full((2,)),
    "full_missing_both": lambda T: T.full(),
    "full_missing_size": lambda T: T.full(fill_value=1.0),
    "full_three": lambda T: T.full((2,), 1.0, 3),
    "full_three_and_unknown": lambda T: T.full((2,), 1.0, 3, foo=1),
    "full_unknown": lambda T: T.full((2,), 1.0, foo=3),
    "full_unknown_missing": lambda T: T.full((2,), foo=3),
    "full_unknown_and_twice": lambda T: T.full((2,), 1, foo=2, fill_value=3),
    "full_twice_fill": lambda T: T.full((2,), 1.0, fill_value=1.0),
    "full_twice_size_missing_fill": lambda T: T.full((2,), size=(2,)),
    "full_twice_size": lambda T: T.full((2,), size=(2,), fill_value=1),
    "full_kw_ok": lambda T: T.full(size=(2, 3), fill_value=2),
    "full_kw_size_missing_fill": lambda T: T.full(size=(2,)),
    "new_full_kw_size_missing_fill": lambda T: _x(T).new_full(size=(2,)),
    "new_full_missing_both": lambda T: _x(T).new_full(),
    "new_full_three": lambda T: _x(T).new_full((2,), 1.0, 3),
    "new_full_twice_fill": lambda T: _x(T).new_full((2,), 1.0, fill_value=1.0),
    "new_full_unknown": lambda T: _x(T).new_full((2,), 1.0, foo=3),
    "new_full_kw_int": lambda T: _x(T).new_full(size=2, fill_value=1),
    "new_full_kw_str_fill": lambda T: _x(T).new_full(size=(2,), fill_value="a"),
    "new_full_kw_ok": lambda T: _x(T).new_full(size=(2, 3), fill_value=2),
    "new_zeros_pos_and_kw": lambda T: _x(T).new_zeros(2, size=(2,)),
    "resize_no_size": lambda T: _x(T).clone().resize_(),
    # ---- randint: (high, size) and (low, high, size), with or without a generator
    "randint_float_size": lambda T: T.randint(5, 2.0),
    "randint_int_size": lambda T: T.randint(5, 2),
    "randint_seq_float_first": lambda T: T.randint(5, (2.0, 3)),
    "randint_seq_float_second": lambda T: T.randint(5, (2, 3.0)),
    "randint_seq_bool_first": lambda T: T.randint(5, (True, 2)),
    "randint_seq_bool_second": lambda T: T.randint(5, (2, True)),
    "randint_seq_str_second": lambda T: T.randint(5, (2, "a")),
    "randint_seq_np": lambda T: T.randint(5, (np.int64(2), T.tensor(3))),
    "randint_low_seq_float_second": lambda T: T.randint(0, 5, (2, 3.0)),
    "randint_low_seq_float_first": lambda T: T.randint(0, 5, (2.0, 3)),
    "randint_low_float_high": lambda T: T.randint(0, 5.0, (2,)),
    "randint_float_low": lambda T: T.randint(0.0, 5, (2,)),
    "randint_low_int_size": lambda T: T.randint(0, 5, 2),
    "randint_kw_size_float_second": lambda T: T.randint(5, size=(2, 3.0)),
    "randint_kw_size_float_first": lambda T: T.randint(5, size=(2.0, 3)),
    "randint_kw_size_bool_first": lambda T: T.randint(5, size=(True, 2)),
    "randint_kw_size_int": lambda T: T.randint(5, size=2),
    "randint_kw_high_float": lambda T: T.randint(high=5.0, size=(2,)),
    "randint_float_high_kw_size": lambda T: T.randint(5.0, size=(2,)),
    "randint_kw_all_float_second": lambda T: T.randint(low=0, high=5, size=(2, 3.0)),
    "randint_kw_high_size_float_second": lambda T: T.randint(0, high=5, size=(2, 3.0)),
    "randint_low_kw_size_int": lambda T: T.randint(0, 5, size=2),
    "randint_low_kw_size_float_first": lambda T: T.randint(0, 5, size=(2.0,)),
    "randint_generator_ok": lambda T: T.randint(5, (2,), generator=_gen(T)),
    "randint_generator_float_second": lambda T: T.randint(5, (2, 3.0), generator=_gen(T)),
    "randint_generator_int_size": lambda T: T.randint(5, 2, generator=_gen(T)),
    "randint_generator_kw_size_int": lambda T: T.randint(5, size=2, generator=_gen(T)),
    "randint_generator_missing_size": lambda T: T.randint(5, generator=_gen(T)),
    "randint_generator_kw_high_missing_size": lambda T: T.randint(high=5, generator=_gen(T)),
    "randint_generator_missing_high": lambda T: T.randint(size=(2,), generator=_gen(T)),
    "randint_generator_low_float_high": lambda T: T.randint(0, 5.0, (2,), generator=_gen(T)),
    "randint_kw_low_ok": lambda T: T.randint(high=5, size=[2, True]),
    "randint_bool_high": lambda T: T.randint(True, (2,)),
    "randint_none": lambda T: T.randint(),
    # ---- F.pad
    "pad_float": lambda T: T.nn.functional.pad(_x(T), 1.0),
    "pad_int": lambda T: T.nn.functional.pad(_x(T), 1),
    "pad_tensor": lambda T: T.nn.functional.pad(_x(T), T.tensor([1, 1])),
    "pad_seq_float_first": lambda T: T.nn.functional.pad(_x(T), (1.0, 1)),
    "pad_seq_float_second": lambda T: T.nn.functional.pad(_x(T), (1, 1.0)),
    "pad_seq_bool_first": lambda T: T.nn.functional.pad(_x(T), (True, 1)),
    "pad_seq_bool_second": lambda T: T.nn.functional.pad(_x(T), (1, True)),
    "pad_seq_none_second": lambda T: T.nn.functional.pad(_x(T), [1, None]),
    "pad_seq_np": lambda T: T.nn.functional.pad(_x(T), (np.int64(1), T.tensor(2))),
    "pad_seq_reflect_float_second": lambda T: T.nn.functional.pad(_x3(T), (1, 1.0), "reflect"),
    "pad_odd": lambda T: T.nn.functional.pad(_x(T), (1, 1, 1)),
    # ---- permute / flip: loose dims, one sequence, by keyword
    "permute_loose_float_first": lambda T: _x(T).permute(1.0, 0),
    "permute_loose_float_second": lambda T: _x(T).permute(1, 0.0),
    "permute_loose_none_second": lambda T: _x(T).permute(1, None),
    "permute_loose_np": lambda T: _x(T).permute(np.int64(1), T.tensor(0)),
    "permute_seq_float_second": lambda T: _x(T).permute((1, 0.0)),
    "permute_list_bool_second": lambda T: _x(T).permute([1, False]),
    "permute_fn_seq_float_second": lambda T: T.permute(_x(T), (1, 0.0)),
    "permute_fn_kw_float_second": lambda T: T.permute(_x(T), dims=(1, 0.0)),
    "permute_method_kw_float_second": lambda T: _x(T).permute(dims=[1, 0.0]),
    "permute_fn_np": lambda T: T.permute(_x(T), (np.int64(1), T.tensor(0))),
    "permute_repeat": lambda T: _x(T).permute(0, 0),
    "permute_out_of_range": lambda T: _x(T).permute(0, 2),
    "flip_loose_float_first": lambda T: _x(T).flip(1.0, 0),
    "flip_loose_float_second": lambda T: _x(T).flip(0, 1.0),
    "flip_seq_float_second": lambda T: _x(T).flip([0, 1.0]),
    "flip_seq_float_first": lambda T: _x(T).flip([1.0, 0]),
    "flip_alone_float": lambda T: _x(T).flip(1.0),
    "flip_alone_np": lambda T: _x(T).flip(np.int64(1)),
    "flip_fn_seq_float_second": lambda T: T.flip(_x(T), (0, 1.0)),
    "flip_fn_seq_bool_second": lambda T: T.flip(_x(T), (0, True)),
    "flip_fn_float": lambda T: T.flip(_x(T), 1.0),
    "flip_fn_kw_float_second": lambda T: T.flip(_x(T), dims=(0, 1.0)),
    "flip_fn_np": lambda T: T.flip(_x(T), (np.int64(0), T.tensor(1))),
    "flip_repeat": lambda T: _x(T).flip(0, 0),
    # ---- movedim / roll
    "movedim_src_seq_float_second": lambda T: T.movedim(_x3(T), (0, 1.0), (1, 2)),
    "movedim_dst_seq_float_second": lambda T: T.movedim(_x3(T), (0, 1), (2, 1.0)),
    "movedim_kw_dst_float_second": lambda T: _x3(T).movedim(source=(0, 1), destination=(2, 1.0)),
    "movedim_np": lambda T: T.movedim(_x3(T), (np.int64(0), T.tensor(1)), (2, 0)),
    "roll_dims_float": lambda T: T.roll(_x(T), 1, 1.0),
    "roll_dims_seq_float_second": lambda T: T.roll(_x(T), (1, 1), (0, 1.0)),
    "roll_shifts_seq_float_second": lambda T: T.roll(_x(T), (1, 1.0), (0, 1)),
    "roll_kw_dims_float_second": lambda T: _x(T).roll(shifts=1, dims=(0, 1.0)),
    "roll_np": lambda T: T.roll(_x(T), (np.int64(1), T.tensor(1)), (0, np.int64(1))),
    # ---- reshape / view
    "reshape_loose_float_second": lambda T: _x(T).reshape(3, 2.0),
    "reshape_loose_float_first": lambda T: _x(T).reshape(3.0, 2),
    "reshape_alone_float": lambda T: _x(T).reshape(6.0),
    "reshape_seq_float_second": lambda T: _x(T).reshape((3, 2.0)),
    "reshape_seq_float_first": lambda T: _x(T).reshape((3.0, 2)),
    "reshape_seq_bool_second": lambda T: _x(T).reshape((6, True)),
    "reshape_fn_seq_float_second": lambda T: T.reshape(_x(T), (3, 2.0)),
    "reshape_fn_seq_float_first": lambda T: T.reshape(_x(T), (3.0, 2)),
    "reshape_fn_kw_float_second": lambda T: T.reshape(_x(T), shape=(3, 2.0)),
    "reshape_np": lambda T: _x(T).reshape(np.int64(3), T.tensor(2)),
    "view_loose_float_second": lambda T: _x(T).view(3, 2.0),
    "view_loose_float_first": lambda T: _x(T).view(3.0, 2),
    "view_alone_float": lambda T: _x(T).view(6.0),
    "view_seq_float_second": lambda T: _x(T).view((3, 2.0)),
    "view_list_none_second": lambda T: _x(T).view([3, None]),
    "view_kw_float_second": lambda T: _x(T).view(size=(3, 2.0)),
    "view_np": lambda T: _x(T).view(np.int64(3), T.tensor(2)),
    # ---- transpose: a dim is one int
    "transpose_seq_second": lambda T: _x(T).transpose(0, (1,)),
    "transpose_seq_first": lambda T: T.transpose(_x(T), [0], 1),
    "transpose_float_second": lambda T: _x(T).transpose(0, 1.0),
    "transpose_none_second": lambda T: _x(T).transpose(0, None),
    "transpose_np": lambda T: _x(T).transpose(np.int64(0), T.tensor(1)),
    # ---- reshape / view sizes by keyword: a sequence, blamed without a position
    "reshape_kw_first_float": lambda T: _x(T).reshape(shape=(1.0, 3)),
    "reshape_fn_kw_first_float": lambda T: T.reshape(_x(T), shape=(1.0, 3)),
    "reshape_fn_kw_float": lambda T: T.reshape(_x(T), shape=6.0),
    "reshape_fn_kw_int": lambda T: T.reshape(_x(T), shape=6),
    "reshape_t_bool_second": lambda T: _x(T).t().reshape(6, True),
    "view_seq_first_float": lambda T: _x(T).view([1.0, 3]),
    "view_seq_first_none": lambda T: _x(T).view((None, 3)),
    "view_kw_first_float": lambda T: _x(T).view(size=(1.0, 3)),
    "view_kw_int": lambda T: _x(T).view(size=6),
    "view_kw_ok": lambda T: _x(T).view(size=(3, 2)),
    # ---- an int dim refuses a bool, a float tensor, a tensor of floats
    "transpose_bool_second": lambda T: _x(T).transpose(0, True),
    "transpose_fn_bool_first": lambda T: T.transpose(_x(T), True, 0),
    "transpose_float_tensor": lambda T: _x(T).transpose(0, T.tensor(1.0)),
    "roll_dims_float_tensor": lambda T: T.roll(_x(T), 1, T.tensor(1.0)),
    "roll_dims_bool": lambda T: T.roll(_x(T), 1, True),
    "sum_float": lambda T: _x3(T).sum(1.0),
    "sum_bool": lambda T: _x3(T).sum(True),
    "sum_float_tensor": lambda T: _x3(T).sum(T.tensor(1.0)),
    "sum_fn_float_tensor": lambda T: T.sum(_x3(T), T.tensor(1.0)),
    "sum_int_tensor": lambda T: _x3(T).sum(T.tensor(1)),
    "sum_kw_first_float": lambda T: _x3(T).sum(dim=(1.0, 0)),
    "mean_float": lambda T: _x3(T).mean(1.0),
    "std_float": lambda T: _x3(T).std(1.0),
    "amax_float_tensor": lambda T: _x3(T).amax(T.tensor(1.0)),
    "amax_bool": lambda T: _x3(T).amax(True),
    "amax_fn_bool": lambda T: T.amax(_x3(T), True),
    "amax_kw_bool": lambda T: _x3(T).amax(dim=True),
    "cumsum_bool": lambda T: T.cumsum(_x3(T), True),
    "select_bool": lambda T: _x3(T).select(True, 0),
}


@pytest.mark.parametrize("name", sorted(MISC))
def test_like_torch(name):
    call = MISC[name]
    assert _outcome(call, ember) == _outcome(call, torch)


# reductions whose dim is an int[]: a list with a bad element, by position and by keyword
REDUCTIONS = {
    "fn_second": lambda T, v, r: getattr(T, r)(_x3(T), (0, v(T))),
    "fn_first": lambda T, v, r: getattr(T, r)(_x3(T), [v(T), 0]),
    "fn_kw_second": lambda T, v, r: getattr(T, r)(_x3(T), dim=(0, v(T))),
    "fn_kw_first": lambda T, v, r: getattr(T, r)(_x3(T), dim=[v(T), 0]),
}


@pytest.mark.parametrize("elem", sorted(ELEMS))
@pytest.mark.parametrize("case", sorted(REDUCTIONS))
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "nansum", "logsumexp", "std", "var"])
def test_reduction_dims(op, case, elem):
    call = REDUCTIONS[case]
    v = ELEMS[elem]
    assert _outcome(lambda T: call(T, v, op), ember) == _outcome(lambda T: call(T, v, op), torch)


# the method forms, spelled out: torch counts a method's arguments after self
METHODS = {
    "sum_second": lambda T, v: _x3(T).sum((0, v(T))),
    "sum_kw_second": lambda T, v: _x3(T).sum(dim=(1, v(T))),
    "mean_kw_second": lambda T, v: _x3(T).mean(dim=[1, v(T)]),
    "amax_first": lambda T, v: _x3(T).amax((v(T), 1)),
    "amax_second": lambda T, v: _x3(T).amax((1, v(T))),
    "amax_kw_first": lambda T, v: _x3(T).amax(dim=(v(T), 1)),
    "std_second": lambda T, v: _x3(T).std((0, v(T))),
    "var_kw_second": lambda T, v: _x3(T).var(dim=(0, v(T))),
    "logsumexp_first": lambda T, v: _x3(T).logsumexp([v(T), 1]),
    "permute_loose_first": lambda T, v: _x(T).permute(v(T), 0),
    "permute_loose_second": lambda T, v: _x(T).permute(1, v(T)),
    "permute_seq_second": lambda T, v: _x(T).permute([1, v(T)]),
    "flip_loose_second": lambda T, v: _x(T).flip(0, v(T)),
    "flip_seq_second": lambda T, v: _x(T).flip((0, v(T))),
    "reshape_loose_second": lambda T, v: _x(T).reshape(6, v(T)),
    "reshape_seq_second": lambda T, v: _x(T).reshape([6, v(T)]),
    "view_loose_second": lambda T, v: _x(T).view(6, v(T)),
    "view_seq_second": lambda T, v: _x(T).view((6, v(T))),
}


@pytest.mark.parametrize("elem", sorted(ELEMS))
@pytest.mark.parametrize("case", sorted(METHODS))
def test_method_dims(case, elem):
    call = METHODS[case]
    v = ELEMS[elem]
    assert _outcome(lambda T: call(T, v), ember) == _outcome(lambda T: call(T, v), torch)


# permute/flip given one thing (loose, as its only dim, or by keyword): a method takes one int
# (a numpy integer, a 0-d integer tensor) loose; a keyword int[] is a sequence only
ONE = {
    "int": lambda T: 1,
    "bool": lambda T: True,
    "float": lambda T: 1.0,
    "none": lambda T: None,
    "np_int": lambda T: np.int64(1),
    "int_tensor": lambda T: T.tensor(1),
    "tensor_1d": lambda T: T.tensor([1, 0]),
    "ndarray": lambda T: np.array([1, 0]),
    "tuple": lambda T: (1, 0),
    "tuple_float_first": lambda T: (1.0, 0),
    "tuple_float_second": lambda T: (1, 0.0),
}
ONE_CASES = {
    "permute": lambda T, v: _x(T).permute(v(T)),
    "permute_kw": lambda T, v: _x(T).permute(dims=v(T)),
    "flip": lambda T, v: _x(T).flip(v(T)),
    "flip_kw": lambda T, v: _x(T).flip(dims=v(T)),
}


@pytest.mark.parametrize("elem", sorted(ONE))
@pytest.mark.parametrize("case", sorted(ONE_CASES))
def test_one_dims(case, elem):
    call = ONE_CASES[case]
    v = ONE[elem]
    assert _outcome(lambda T: call(T, v), ember) == _outcome(lambda T: call(T, v), torch)


# the function form: no int alone (a 0-d tensor is one; names aside, ember's registry has
# turned it into an int before the kernel sees it, so those are not listed)
@pytest.mark.parametrize(
    "elem", ["bool", "float", "none", "np_int", "ndarray", "tuple_float_first"]
)
@pytest.mark.parametrize("kw", [False, True])
def test_permute_function_dims(elem, kw):
    v = ONE[elem]

    def call(T):
        return T.permute(_x(T), dims=v(T)) if kw else T.permute(_x(T), v(T))

    assert _outcome(call, ember) == _outcome(call, torch)


# the other int[] arguments: expand/repeat/tile sizes, Tensor.new_* sizes, as_strided's size
# and stride, unflatten's sizes, broadcast_to's size, resize_/sum_to_size sizes, split's sizes
SIZES = {
    "expand_loose_first": lambda T, v: _x(T)[:, :1].expand(v(T), 3),
    "expand_loose_second": lambda T, v: _x(T)[:, :1].expand(2, v(T)),
    "expand_seq_first": lambda T, v: _x(T)[:, :1].expand([v(T), 3]),
    "expand_seq_second": lambda T, v: _x(T)[:, :1].expand((2, v(T))),
    "expand_alone": lambda T, v: _x(T)[0, :1].expand(v(T)),
    "broadcast_to_second": lambda T, v: T.broadcast_to(_x(T)[:, :1], (2, v(T))),
    "broadcast_to_alone": lambda T, v: T.broadcast_to(_x(T)[0, :1], v(T)),
    "repeat_loose_first": lambda T, v: _x(T).repeat(v(T), 2),
    "repeat_loose_second": lambda T, v: _x(T).repeat(2, v(T)),
    "repeat_seq_first": lambda T, v: _x(T).repeat([v(T), 2]),
    "repeat_seq_second": lambda T, v: _x(T).repeat((2, v(T))),
    "repeat_alone": lambda T, v: _x(T)[0].repeat(v(T)),
    "tile_seq_first": lambda T, v: _x(T).tile((v(T), 2)),
    "tile_seq_second": lambda T, v: _x(T).tile((2, v(T))),
    "tile_loose_second": lambda T, v: _x(T).tile(2, v(T)),
    "tile_fn_seq_second": lambda T, v: T.tile(_x(T), (2, v(T))),
    "new_zeros_loose_first": lambda T, v: _x(T).new_zeros(v(T), 2),
    "new_zeros_loose_second": lambda T, v: _x(T).new_zeros(2, v(T)),
    "new_zeros_seq_first": lambda T, v: _x(T).new_zeros((v(T), 2)),
    "new_zeros_alone": lambda T, v: _x(T).new_zeros(v(T)),
    "new_zeros_kw_first": lambda T, v: _x(T).new_zeros(size=(v(T), 2)),
    "new_zeros_kw_second": lambda T, v: _x(T).new_zeros(size=(2, v(T))),
    "new_zeros_kw_alone": lambda T, v: _x(T).new_zeros(size=v(T)),
    "new_ones_seq_second": lambda T, v: _x(T).new_ones((2, v(T))),
    "new_empty_alone": lambda T, v: _x(T).new_empty(v(T)),
    "new_full_first": lambda T, v: _x(T).new_full((v(T), 2), 1.0),
    "new_full_second": lambda T, v: _x(T).new_full((2, v(T)), 1.0),
    "new_full_alone": lambda T, v: _x(T).new_full(v(T), 1.0),
    "new_full_kw_first": lambda T, v: _x(T).new_full(size=(v(T), 2), fill_value=1.0),
    "new_full_kw_second": lambda T, v: _x(T).new_full(fill_value=1.0, size=(2, v(T))),
    "as_strided_size_first": lambda T, v: T.as_strided(_x(T), (v(T), 2), (3, 1)),
    "as_strided_size_second": lambda T, v: T.as_strided(_x(T), (2, v(T)), (3, 1)),
    "as_strided_stride_first": lambda T, v: _x(T).as_strided((2, 2), (v(T), 1)),
    "as_strided_stride_second": lambda T, v: _x(T).as_strided((2, 2), (3, v(T))),
    "as_strided_size_alone": lambda T, v: _x(T).as_strided(v(T), (1,)),
    "unflatten_first": lambda T, v: _x(T).unflatten(1, (v(T), 3)),
    "unflatten_second": lambda T, v: _x(T).unflatten(1, (3, v(T))),
    "unflatten_fn_second": lambda T, v: T.unflatten(_x(T), 1, (3, v(T))),
    "unflatten_alone": lambda T, v: _x(T).unflatten(1, v(T)),
    "resize_loose_first": lambda T, v: _x(T).clone().resize_(v(T), 2),
    "resize_loose_second": lambda T, v: _x(T).clone().resize_(2, v(T)),
    "resize_seq_first": lambda T, v: _x(T).clone().resize_((v(T), 2)),
    "resize_seq_second": lambda T, v: _x(T).clone().resize_([2, v(T)]),
    "resize_alone": lambda T, v: _x(T).clone().resize_(v(T)),
    "sum_to_size_loose_first": lambda T, v: _x(T).sum_to_size(v(T), 3),
    "sum_to_size_loose_second": lambda T, v: _x(T).sum_to_size(1, v(T)),
    "sum_to_size_seq_first": lambda T, v: _x(T).sum_to_size((v(T), 3)),
    "sum_to_size_seq_second": lambda T, v: _x(T).sum_to_size([1, v(T)]),
    "sum_to_size_alone": lambda T, v: _x(T)[0].sum_to_size(v(T)),
    "split_sizes_first": lambda T, v: _x(T).split([v(T), 2], 1),
    "split_sizes_second": lambda T, v: _x(T).split([1, v(T)], 1),
}


@pytest.mark.parametrize("elem", sorted(ELEMS))
@pytest.mark.parametrize("case", sorted(SIZES))
def test_sizes(case, elem):
    call = SIZES[case]
    v = ELEMS[elem]
    assert _outcome(lambda T: call(T, v), ember) == _outcome(lambda T: call(T, v), torch)


# pooling's int[] options (kernel_size, stride, output_size). Each case pools its own input
# shape: the pools cache a checked plan per shape and options, and (2, 2.0) == (2, 2)
POOLS = {
    "max_pool2d_kernel_first": lambda T, x, v: T.nn.functional.max_pool2d(x, (v(T), 2)),
    "max_pool2d_kernel_second": lambda T, x, v: T.nn.functional.max_pool2d(x, (2, v(T))),
    "max_pool2d_kernel_alone": lambda T, x, v: T.nn.functional.max_pool2d(x, v(T)),
    "max_pool2d_stride_second": lambda T, x, v: T.nn.functional.max_pool2d(x, 2, (1, v(T))),
    "avg_pool2d_kernel_second": lambda T, x, v: T.nn.functional.avg_pool2d(x, (2, v(T))),
    "avg_pool2d_kernel_alone": lambda T, x, v: T.nn.functional.avg_pool2d(x, v(T)),
    "adaptive_avg_pool2d_second": lambda T, x, v: T.nn.functional.adaptive_avg_pool2d(x, (2, v(T))),
    "fractional_max_pool2d_kernel_second": lambda T, x, v: T.nn.functional.fractional_max_pool2d(
        x, (2, v(T)), output_size=2
    ),
    "fractional_max_pool2d_kernel_alone": lambda T, x, v: T.nn.functional.fractional_max_pool2d(
        x, v(T), output_size=2
    ),
    "fractional_max_pool2d_output_second": lambda T, x, v: T.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(2, v(T))
    ),
}
# (none: the pools' Python wrappers take a missing kernel_size their own way)
POOL_ELEMS = sorted(set(ELEMS) - {"none"})


@pytest.mark.parametrize("elem", POOL_ELEMS)
@pytest.mark.parametrize("case", sorted(POOLS))
def test_pool_int_lists(case, elem):
    call, v = POOLS[case], ELEMS[elem]
    shape = (1, 1 + sorted(POOLS).index(case), 6, 5 + POOL_ELEMS.index(elem))

    def run(T):
        return call(T, T.ones(shape), v)

    assert _outcome(run, ember) == _outcome(run, torch)


# convolution's int[] options through the same parser: a bool, a float tensor or a numpy
# float is no size (conv{n}d lists its overloads; conv_transpose{n}d, with one, names the
# argument); a numpy integer or an integer tensor is one
CONV_OPTS = {
    "bool": lambda T: True,
    "bool_first": lambda T: (True, 1),
    "bool_second": lambda T: (1, True),
    "np_int": lambda T: np.int64(1),
    "np_float_second": lambda T: (1, np.float64(1)),
    "int_tensor": lambda T: T.tensor(1),
    "float_tensor_first": lambda T: (T.tensor(1.0), 1),
    "float_tensor_second": lambda T: (1, T.tensor(1.0)),
    "tensor_list": lambda T: T.tensor([1, 1]),
    "ndarray": lambda T: np.array([1, 1]),
}


@pytest.mark.parametrize("opt", sorted(CONV_OPTS))
@pytest.mark.parametrize(
    "fn, name, by_keyword",
    [
        ("conv2d", "stride", True),
        ("conv2d", "padding", True),
        ("conv2d", "dilation", False),
        ("conv_transpose2d", "stride", True),  # no position; a bad first element: "not tuple"
        ("conv_transpose2d", "stride", False),
        ("conv_transpose2d", "output_padding", True),
    ],
)
def test_conv_int_lists(fn, name, by_keyword, opt):
    def call(T):
        x, w, v = T.ones(1, 1, 5, 5), T.ones(1, 1, 3, 3), CONV_OPTS[opt](T)
        f = getattr(T.nn.functional, fn)
        if by_keyword:
            return f(x, w, **{name: v})
        return f(x, w, None, *((1,) * ("stride", "padding", "dilation").index(name)), v)

    assert _outcome(call, ember) == _outcome(call, torch)
