"""Parity regressions found by the twenty-eighth wave, a sweep of how a Tensor behaves as a
Python object and next to numpy (the number protocols, len/iter/contains/format, numpy arrays
and numpy scalars on either side of every operator, numpy ufuncs and functions applied to
tensors, pickle/copy/DLPack round trips; torch is the oracle): operator dunders now answer
NotImplemented for operands no op takes (a str, list, tuple, dict, set, range, None or a bare
object), so ``"ab" * t`` and ``[0] * t`` repeat the sequence and ``t + None`` (``t += None``) is Python's
"unsupported operand" TypeError, where ember raised its argument-parsing TypeError, and an
in-place operator with an ndarray (``t += a``) rebinds to ``t + a`` as torch's does, where ember
raised;
``pow(t, 2, 3)`` is Python's three-argument TypeError; ``+t`` refuses a bool tensor; ``t @ 2``
(a Python or numpy number) is Python's TypeError and ``matmul(t, 2)`` torch's argument error,
where ember failed with an AttributeError; a numpy ufunc (``np.exp(t)``, ``np.add(a, t)``, a
reduction) or ``np.transpose(t)`` answers a cpu tensor, a bool result as uint8 (torch's
``__array_wrap__``), where ember returned an ndarray; and a numpy bool scalar as an index is
torch's IndexError (numpy types named ``numpy.float64`` in the message), where ember indexed
with it as with a Python bool."""

from __future__ import annotations

import operator

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return type(e), str(e)


def _same_error(fn):
    """fn(lib) raises the same error type and message for torch and ember (or, where Python
    itself answers without either library, as for ``"%s" % t``, the same value)."""
    et, em = _outcome(lambda: fn(torch)), _outcome(lambda: fn(ember))
    assert em[0] is et[0] or em[0] == et[0] == "ok", (et, em)
    if et[0] == "ok":
        assert not isinstance(et[1], torch.Tensor), et
    assert em[1] == et[1]


# ------------------------------------------------------------ foreign operands: NotImplemented
@pytest.mark.parametrize(
    "make", [lambda L: L.tensor(2), lambda L: L.tensor(3, dtype=L.int32)], ids=["i64", "i32"]
)
@pytest.mark.parametrize("seq", ["ab", [1, 0], (7,)], ids=["str", "list", "tuple"])
def test_sequence_repeat_by_int_tensor(make, seq):
    for other in (make(ember), make(torch)):
        assert type(seq * other) is type(seq)
    assert seq * make(ember) == seq * make(torch)
    assert make(ember) * seq == make(torch) * seq


@pytest.mark.parametrize(
    "op",
    [
        operator.add,
        operator.sub,
        operator.mul,
        operator.truediv,
        operator.floordiv,
        operator.mod,
        operator.pow,
        operator.and_,
        operator.or_,
        operator.xor,
        operator.lshift,
        operator.rshift,
        operator.matmul,
    ],
)
@pytest.mark.parametrize(
    "other",
    [
        lambda: "a",
        lambda: [1, 2],
        lambda: (1, 2),
        lambda: None,
        lambda: object(),
        lambda: {1: 2},
        lambda: {1},
        lambda: range(2),
        lambda: b"a",
    ],
    ids=["str", "list", "tuple", "None", "object", "dict", "set", "range", "bytes"],
)
def test_foreign_operand_is_pythons_type_error(op, other):
    o = other()  # the same object on both sides (its repr-free type names the error)
    _same_error(lambda L: op(L.tensor([1, 2]), o))
    _same_error(lambda L: op(o, L.tensor([1, 2])))


@pytest.mark.parametrize(
    "op",
    [
        operator.iadd,
        operator.isub,
        operator.imul,
        operator.itruediv,
        operator.ifloordiv,
        operator.imod,
        operator.ipow,
        operator.iand,
        operator.ior,
        operator.ixor,
        operator.ilshift,
        operator.irshift,
    ],
)
@pytest.mark.parametrize(
    "other", [lambda: "a", lambda: [1, 2], lambda: (1, 2), lambda: None], ids=str
)
def test_foreign_operand_in_place_is_pythons_type_error(op, other):
    _same_error(lambda L: op(L.tensor([1, 2]), other()))


def test_in_place_with_ndarray_is_out_of_place():
    # torch's t += array answers NotImplemented, so Python rebinds t to t + array
    out = []
    for L in (torch, ember):
        t = L.tensor([1.0, 2.0])
        u = t
        t += np.array([1.0, 1.0], dtype=np.float32)
        out.append((t.tolist(), u.tolist(), t is u))
        t = L.tensor([1, 2])
        u = t
        t *= np.int64(3)  # a numpy scalar stays in place
        out.append((t.tolist(), u.tolist(), t is u))
    assert out[:2] == out[2:]


def test_foreign_operand_equality_is_false():
    for o in (None, "a", [1, 2], object()):
        assert (ember.tensor([1, 2]) == o) is False
        assert (ember.tensor([1, 2]) != o) is True
        assert (torch.tensor([1, 2]) == o) is False


def test_three_argument_pow():
    _same_error(lambda L: pow(L.tensor([2]), 2, 3))
    _same_error(lambda L: L.tensor([2]) ** "a")
    # the ordinary power still works, both ways
    assert ember.tensor([2, 3]).pow(2).tolist() == (ember.tensor([2, 3]) ** 2).tolist() == [4, 9]
    assert (np.float64(2) ** ember.tensor([2])).tolist() == [4.0]


# ------------------------------------------------------------ unary plus
def test_unary_plus_refuses_bool():
    _same_error(lambda L: +L.tensor([True, False]))
    t = ember.tensor([1.0, -2.0])
    assert (+t) is t
    i = ember.tensor([3])
    assert (+i) is i


# ------------------------------------------------------------ matmul with a number
@pytest.mark.parametrize("num", [2, 2.5, np.float32(2), np.int64(2)], ids=str)
def test_matmul_with_a_number(num):
    _same_error(lambda L: L.tensor([1.0, 2.0]) @ num)
    _same_error(lambda L: num @ L.tensor([1.0, 2.0]))


def test_matmul_function_with_a_number():
    _same_error(lambda L: L.matmul(L.tensor([1.0, 2.0]), 2))
    _same_error(lambda L: L.matmul(2, L.tensor([1.0, 2.0])))
    a = np.ones(2, dtype=np.float32)
    assert (ember.tensor([1.0, 2.0]) @ a).item() == (torch.tensor([1.0, 2.0]) @ a).item()


# ------------------------------------------------------------ numpy ufuncs answer tensors
class _no_deprecation:
    """numpy 2 warns when __array_wrap__ lacks its context/return_scalar parameters."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error", DeprecationWarning)

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


@pytest.mark.parametrize(
    "fn",
    [
        np.exp,
        np.negative,
        np.isnan,
        lambda t: np.add(t, 1),
        lambda t: np.add(np.ones((2, 2)), t),
        lambda t: np.multiply(t, t),
        lambda t: np.greater(t, 0),
        np.add.reduce,
        np.transpose,
        lambda t: np.exp(t[0]),
        lambda t: np.sqrt(t[:, ::2]),
    ],
    ids=[
        "exp",
        "negative",
        "isnan",
        "add1",
        "add_arr",
        "mul",
        "greater",
        "reduce",
        "transpose",
        "exp_row",
        "sqrt_strided",
    ],
)
def test_numpy_ufunc_on_tensor_is_tensor(fn):
    x = [[1.5, 2.0], [3.0, 4.0]]
    t_ = fn(torch.tensor(x))
    with _no_deprecation():
        e = fn(ember.tensor(x))
    assert isinstance(t_, torch.Tensor)
    assert isinstance(e, ember.Tensor)
    assert str(e.dtype).split(".")[1] == str(t_.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t_.shape)
    np.testing.assert_allclose(e.numpy(), t_.numpy(), rtol=1e-6)


def test_numpy_ufunc_result_is_a_plain_cpu_leaf():
    t = ember.tensor([1.0, 4.0], requires_grad=False)
    r = np.sqrt(t)
    assert r.device.type == "cpu"
    assert r.requires_grad is False and r.grad_fn is None
    assert r.is_contiguous()
    assert np.sqrt(ember.tensor(4.0)).dim() == 0


# ------------------------------------------------------------ numpy scalar indices
@pytest.mark.parametrize(
    "index",
    [np.bool_(True), np.bool_(False), np.float64(1), np.float32(0), 1.5, object()],
    ids=["np_true", "np_false", "np_f64", "np_f32", "float", "object"],
)
def test_numpy_scalar_index_refused(index):
    _same_error(lambda L: L.tensor([1.0, 2.0])[index])
    _same_error(lambda L: L.tensor([1.0, 2.0]).__setitem__(index, 0.0))


def test_python_bool_and_numpy_int_index_still_work():
    for idx in (True, False, np.int64(1), np.int32(0)):
        e, t_ = ember.tensor([1.0, 2.0])[idx], torch.tensor([1.0, 2.0])[idx]
        assert tuple(e.shape) == tuple(t_.shape)
        assert e.tolist() == t_.tolist()
    mask = [np.bool_(True), np.bool_(False)]
    assert ember.tensor([1.0, 2.0])[mask].tolist() == torch.tensor([1.0, 2.0])[mask].tolist()
