"""Parity regressions of the hundred-and-fourth wave: the numpy boundary against torch (Tensor
operators with ndarrays and numpy scalars on either side and in place, the array protocol, numpy
functions on tensors, numpy() / from_numpy / as_tensor / tensor, numpy numbers as sizes, dims and
indices). Every case runs in both libraries; the result type, dtype, shape, values, error type
and text, and warnings are compared. It found:

* Tensor operators taking an ndarray as a cpu tensor (``t + a`` float32 for an int64 array,
  ``t < a`` a bool tensor, ``a + t`` / ``a - t`` a tensor): torch's operators answer
  NotImplemented, so numpy computes ``t + a`` (its promotion: float64 there; a tensor back
  through ``__array_wrap__``), ``a + t`` is Python's TypeError, ``t < a`` too, and ``t != a``
  is plain True; only ``==`` takes a numeric array, and ``a / t`` is ``reciprocal(t) * a``
  computed by numpy (NotImplemented when that raises a TypeError); ndarray subclasses alike;
* ``np.array(t, copy=False)`` sharing memory (torch's ``__array__`` has no copy=, so numpy
  refuses with a ValueError), and ``np.asarray`` of a tensor that requires grad (torch: "Can't
  call numpy() on Tensor that requires grad");
* ``numpy()`` / ``np.asarray`` of a bfloat16 tensor answering an ml_dtypes array (torch:
  TypeError "Got unsupported ScalarType BFloat16", even with force=True);
* ``torch.tensor([np.array(1.), ...])`` accepted (torch reads a listed array as a sequence:
  TypeError "len() of unsized object");
* ``torch.Size([np.float64(2)])``'s TypeError naming ``float64`` (torch: ``numpy.float64``).

Kept on purpose: ember's ``__array__(dtype, copy)`` and ``__array_wrap__(array, context,
return_scalar)`` have numpy 2's signatures, so numpy's DeprecationWarnings about torch's older
ones (and a direct ``t.__array__(None, True)`` call's TypeError) do not appear (wave 28 asks for
no DeprecationWarning there); the warnings are compared without those two.

Left: conj / neg bits (ember's conj() is eager, so ``t.conj().numpy()`` works where torch
refuses), ``np.sum(t)`` / ``np.mean`` / ``np.max`` / ``np.reshape`` / ``np.round`` /
``np.clip`` / ``np.argmax`` (ember's methods take numpy's ``axis=None, out=None`` / ``order=``
spellings that torch refuses, so numpy does not fall back to its own loop), numpy's
floating-point RuntimeWarnings (ember switches numpy's errstate off at import, process-wide),
``torch.tensor(np.uint64(3))`` (torch: "an integer is required").
"""

from __future__ import annotations

import operator
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember

# numpy 2 on torch's outdated protocol signatures (ember has numpy 2's, so no such warning)
_PROTOCOL_DEPRECATIONS = (
    "__array_wrap__ must accept context and return_scalar",
    "__array__ implementation doesn't accept a copy keyword",
)
_TRIGGERED = re.compile(r"\s*\(Triggered internally at .*\)\s*$", re.DOTALL)


def _desc(r):
    """A library-neutral description of a result."""
    if isinstance(r, (torch.Tensor, ember.Tensor)):
        dt = str(r.dtype).split(".")[-1]
        a = r.detach().cpu()
        if dt == "bfloat16":
            a = a.float()
        return ("Tensor", dt, tuple(r.shape), a.numpy())
    if isinstance(r, np.ndarray):
        return ("ndarray", r.dtype.str, r.shape, r.copy())
    if isinstance(r, np.generic):
        return (type(r).__name__, r.item())
    if isinstance(r, (torch.Size, ember.Size)):
        return ("Size", tuple(r))
    if isinstance(r, (list, tuple)):
        return (type(r).__name__, [_desc(v) for v in r])
    return (type(r).__name__, r)


def _outcome(fn, lib):
    """``fn(lib)``: its description or error (type, text), and its warnings."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            got = ("ok", _desc(fn(lib)))
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            got = (type(e).__name__, str(e))
    ws = [
        (x.category.__name__, _TRIGGERED.sub("", str(x.message)))
        for x in w
        if not str(x.message).startswith(_PROTOCOL_DEPRECATIONS)
    ]
    return got, ws


def _same_desc(e, t) -> bool:
    if type(e) is not type(t):
        return False
    if isinstance(t, np.ndarray):
        if e.shape != t.shape or e.dtype != t.dtype:
            return False
        if t.dtype.kind in "fc":
            return np.allclose(e, t, rtol=1e-6, atol=1e-7, equal_nan=True)
        return np.array_equal(e, t)
    if isinstance(t, (list, tuple)):
        return len(e) == len(t) and all(_same_desc(a, b) for a, b in zip(e, t))
    if isinstance(t, float) and np.isnan(t):
        return isinstance(e, float) and np.isnan(e)
    return e == t


def _check(fn, warned: bool = True):
    """ember's outcome of ``fn`` is torch's (its warnings too unless not ``warned``); returns a
    mismatch text or None."""
    (t, tw), (e, ew) = _outcome(fn, torch), _outcome(fn, ember)
    if e[0] != t[0] or (t[0] == "ok" and not _same_desc(e[1], t[1])) or (t[0] != "ok" and e != t):
        return f"result: ember {e!r} / torch {t!r}"
    if warned and ew != tw:
        return f"warnings: ember {ew} / torch {tw}"
    return None


def _same(fn, warned: bool = True):
    bad = _check(fn, warned)
    assert bad is None, bad


# ---------------------------------------------------------------------- operators
_TENSORS = {
    "f32": lambda m: m.tensor([1.5, -2.0, 3.0]),
    "i64": lambda m: m.tensor([1, 2, 3]),
    "bool": lambda m: m.tensor([True, False, True]),
}
_OPERANDS = {
    "a_i64": lambda: np.array([1, 2, 3]),
    "a_i32": lambda: np.array([1, 2, 3], np.int32),
    "a_f32": lambda: np.array([1.0, 2.0, 3.0], np.float32),
    "a_f64": lambda: np.array([1.0, 2.0, 3.0]),
    "a_bool": lambda: np.array([True, False, True]),
    "a_c128": lambda: np.array([1 + 1j, 2, 3]),
    "a_0d": lambda: np.array(2),
    "a_2d": lambda: np.ones((2, 3), np.float32),
    "s_f64": lambda: np.float64(2),
    "s_i64": lambda: np.int64(3),
    "s_bool": lambda: np.bool_(True),
    "s_f32": lambda: np.float32(2),
    "s_c128": lambda: np.complex128(2 + 1j),
}
_OPS = [
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor",
    "lshift", "rshift", "lt", "le", "eq", "ne", "gt", "ge",
]  # fmt: skip


def _binary_cases(fn_of):
    bad = []
    for tn, mk in _TENSORS.items():
        for an, arr in _OPERANDS.items():
            msg = _check(lambda m, mk=mk, arr=arr: fn_of(mk(m), arr()))
            if msg is not None:
                bad.append(f"{tn} {an}: {msg}")
    return bad


@pytest.mark.parametrize("name", _OPS)
@pytest.mark.parametrize("side", ["tensor_left", "tensor_right"])
def test_operator_with_numpy_operand(name, side):
    f = getattr(operator, name)
    if side == "tensor_left":
        bad = _binary_cases(lambda t, a: f(t, a))
    else:
        bad = _binary_cases(lambda t, a: f(a, t))
    assert not bad, "\n".join(bad)


_INPLACE = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior"]


@pytest.mark.parametrize("name", _INPLACE)
@pytest.mark.parametrize("side", ["tensor_target", "array_target"])
def test_inplace_operator_with_numpy_operand(name, side):
    f = getattr(operator, name)

    def run(t, a):
        if side == "tensor_target":
            t = t.clone()
            r = f(t, a)
            return r, t  # a new tensor (numpy's) or t itself, and what t holds
        if isinstance(a, np.generic):
            a = np.array(a)
        r = f(a, t)
        return r, a

    bad = _binary_cases(run)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "case",
    [
        lambda m: m.ones(2, requires_grad=True) + np.array([1.0, 2.0]),  # numpy reads the tensor
        lambda m: np.array([1.0, 2.0]) / m.ones(2, requires_grad=True),
        lambda m: m.ones(2, requires_grad=True) == np.array([1.0, 2.0]),  # == takes it itself
        lambda m: m.ones(2, 1) == np.array([1.0, 2.0]),
        lambda m: m.ones(2) == np.array([1.0, 2.0, 3.0]),
        lambda m: m.ones(2) == np.array(["a", "b"]),
        lambda m: m.ones(2) == np.array([1, None]),
        lambda m: m.ones(2) != np.array([1.0, 1.0]),
        lambda m: m.ones(2) == np.array([1, 2], np.uint16),
        lambda m: m.tensor(2.0) + np.array(3),
        lambda m: m.tensor(2.0) * np.array(3.0, np.float32),
        lambda m: m.ones(2) + np.array([1, 2], np.uint16),
        lambda m: m.ones(2) + np.array([1, 2], np.float16),
        lambda m: m.ones(2, dtype=m.bfloat16) + np.array([1.0, 2.0]),
        lambda m: m.arange(6.0).reshape(2, 3).t() + np.ones((3, 2)),
        lambda m: m.ones(2, 2) @ np.ones((2, 2), np.float32),
        lambda m: np.ones((2, 2)) @ m.ones(2, 2),
        lambda m: -np.ones(2) + m.ones(2),
        lambda m: np.array([2.0, 3.0]) ** m.ones(2),
        lambda m: m.ones(2) ** np.array([2.0, 3.0]),
        lambda m: m.ones(2).add_(np.ones(2)),  # functions and methods refuse arrays
        lambda m: m.add(m.ones(2), np.ones(2)),
        lambda m: m.ones(3) + np.float64(2) * np.ones(3),
        lambda m: np.array(["a", "b"]) / m.ones(2),  # numpy's TypeError: NotImplemented
        lambda m: m.ones(2) + np.array(["a", "b"]),
    ],
)
def test_operator_edges(case):
    _same(case)


class _Sub(np.ndarray):
    pass


_SUBCLASSES = {
    "subclass": lambda: np.array([1.0, 2.0]).view(_Sub),
    "matrix": lambda: np.matrix([[1.0, 2.0]]),
    "masked": lambda: np.ma.masked_array([1.0, 2.0], mask=[0, 1]),
}


_SUBCLASS_CALLS = {
    "radd": lambda t, a: a + t,
    "eq": lambda t, a: t == a,
    "lt": lambda t, a: t < a,
    "rtruediv": lambda t, a: a / t,
    "pow": lambda t, a: t**a,
    "mul": lambda t, a: t * a,
}
# (t * masked: numpy.ma's TypeError names the tensor's dtype, ember.float32 / torch.float32)
_SUBCLASS_CASES = [
    (k, c) for k in _SUBCLASSES for c in _SUBCLASS_CALLS if (k, c) != ("masked", "mul")
]


@pytest.mark.parametrize("kind, call", _SUBCLASS_CASES)
def test_operator_with_ndarray_subclass(kind, call):
    _same(lambda m: _SUBCLASS_CALLS[call](m.tensor([1.0, 2.0]), _SUBCLASSES[kind]()))


# ---------------------------------------------------------------------- the array protocol
def _write_through(make, write):
    def fn(m):
        t = make(m)
        write(m, t)
        return t

    return fn


_PROTOCOL = {
    "asarray": lambda m: np.asarray(m.tensor([1.5, -2.0, 3.0])),
    "asarray_f64": lambda m: np.asarray(m.tensor([1.5, -2.0, 3.0]), dtype=np.float64),
    "asarray_i32": lambda m: np.asarray(m.tensor([1, 2, 3]), dtype="int32"),
    "array_copy_false": lambda m: np.array(m.tensor([1.5, -2.0]), copy=False),
    "array_copy_true": lambda m: np.array(m.tensor([1.5, -2.0]), copy=True),
    "array_copy_false_dtype": lambda m: np.array(m.tensor([1.5]), dtype=np.float64, copy=False),
    "asarray_shares": _write_through(
        lambda m: m.tensor([1.5, -2.0, 3.0]), lambda m, t: np.asarray(t).__setitem__(0, 9)
    ),
    "array_copies": _write_through(
        lambda m: m.tensor([1.5, -2.0, 3.0]), lambda m, t: np.array(t).__setitem__(0, 9)
    ),
    "asarray_grad": lambda m: np.asarray(m.ones(2, requires_grad=True)),
    "asarray_grad_dtype": lambda m: np.asarray(m.ones(2, requires_grad=True), dtype=np.float64),
    "array_grad": lambda m: np.array(m.ones(2, requires_grad=True)),
    "numpy_grad": lambda m: m.ones(2, requires_grad=True).numpy(),
    "numpy_grad_force": lambda m: m.ones(2, requires_grad=True).numpy(force=True),
    "bf16_asarray": lambda m: np.asarray(m.ones(2, dtype=m.bfloat16)),
    "bf16_asarray_f32": lambda m: np.asarray(m.ones(2, dtype=m.bfloat16), dtype=np.float32),
    "bf16_numpy": lambda m: m.ones(2, dtype=m.bfloat16).numpy(),
    "bf16_numpy_force": lambda m: m.ones(2, dtype=m.bfloat16).numpy(force=True),
    "f16_numpy": lambda m: m.ones(2, dtype=m.float16).numpy(),
    "u16_numpy": lambda m: m.ones(2, dtype=m.uint16).numpy(),
    "u64_asarray_f32": lambda m: np.asarray(m.ones(2, dtype=m.uint64), dtype=np.float32),
    "bool_numpy": lambda m: m.ones(2, dtype=m.bool).numpy(),
    "conj_force": lambda m: m.tensor([1 + 2j]).conj().numpy(force=True),
    "neg_force": lambda m: m.tensor([1 + 2j]).conj().imag.numpy(force=True),
    "noncontig": lambda m: np.asarray(m.arange(6).reshape(2, 3).t()),
    "noncontig_strides": lambda m: np.asarray(m.arange(6).reshape(2, 3).t()).strides,
    "noncontig_shares": _write_through(
        lambda m: m.arange(6).reshape(2, 3),
        lambda m, t: np.asarray(t.t()).__setitem__((0, 1), 99),
    ),
    "np_exp": lambda m: np.exp(m.tensor([1.5, -2.0, 3.0])),
    "np_exp_0d": lambda m: np.exp(m.tensor(1.0)),
    "np_add_tensors": lambda m: np.add(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])),
    "np_greater": lambda m: np.greater(m.tensor([1.5, -2.0]), 0),
    "np_isnan": lambda m: np.isnan(m.tensor([1.5, float("nan")])),
    "np_modf": lambda m: np.modf(m.tensor([1.5, -2.25])),
    "np_concatenate": lambda m: np.concatenate([m.tensor([1.0, 2.0]), m.tensor([3.0])]),
    "np_stack": lambda m: np.stack([m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])]),
    "np_where": lambda m: np.where(m.tensor([1.5, -2.0]) > 0, m.tensor([1.5, -2.0]), 0),
    "np_where_1": lambda m: np.where(m.tensor([1.5, -2.0]) > 0),
    "np_sqrt_out": lambda m: np.sqrt(m.tensor([4.0, 9.0]), out=np.empty(2, np.float32)),
    "np_transpose": lambda m: np.transpose(m.ones(2, 3)),
    "np_dot": lambda m: np.dot(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])),
    "np_matmul": lambda m: np.matmul(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])),
    "np_sort": lambda m: np.sort(m.tensor([3.0, 1.0, 2.0])),
    "np_allclose": lambda m: np.allclose(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0])),
    "np_array_equal": lambda m: np.array_equal(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0])),
    "np_shape": lambda m: np.shape(m.ones(2, 3)),
    "np_ndim": lambda m: np.ndim(m.ones(2, 3)),
    "np_float64_of": lambda m: np.float64(m.tensor(2.5)),
    "np_int64_of": lambda m: np.int64(m.tensor(3)),
    "np_array_of_0d_tensors": lambda m: np.array([m.tensor(1.0), m.tensor(2.0)]),
    "np_array_of_tensors": lambda m: np.array([m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])]),
    "array_priority": lambda m: m.Tensor.__array_priority__,
    "has_array_ufunc": lambda m: hasattr(m.ones(1), "__array_ufunc__"),
    "has_array_function": lambda m: hasattr(m.ones(1), "__array_function__"),
    "has_array_interface": lambda m: hasattr(m.ones(1), "__array_interface__"),
    "array_wrap": lambda m: m.ones(1).__array_wrap__(np.array([1, 2])),
    "array_wrap_bool": lambda m: m.ones(1).__array_wrap__(np.array([True])),
    "array_method": lambda m: m.tensor([1.5]).__array__(),
    "array_method_dtype": lambda m: m.tensor([1.5]).__array__(np.float64),
}


@pytest.mark.parametrize("name", list(_PROTOCOL))
def test_array_protocol(name):
    _same(_PROTOCOL[name])


def test_no_grad_numpy_of_grad_tensor():
    def fn(m):
        with m.no_grad():
            return m.ones(2, requires_grad=True).numpy(), np.asarray(m.ones(2, requires_grad=True))

    _same(fn)


# ---------------------------------------------------------------------- numpy -> tensors
_RO = np.arange(3.0)
_RO.flags.writeable = False
_UNALIGNED = np.frombuffer(
    bytearray(b"\0" + np.arange(3, dtype=np.float32).tobytes()), dtype=np.float32, offset=1
)  # (writable: the read-only warning is once per process, compared in a fresh one below)


def _shared_from_numpy(m):
    a = np.arange(3.0)
    t = m.from_numpy(a)
    a[0] = 7
    t[1] = 8
    return t, a


def _shared_numpy(m):
    t = m.arange(3.0)
    a = t.numpy()
    a[0] = 7
    t[1] = 8
    return t, a


def _as_tensor_after_write(dtype=None, device=None):
    def fn(m):
        a = np.arange(3.0)
        t = m.as_tensor(a, dtype=dtype and getattr(m, dtype), device=device)
        a[0] = 7
        return t

    return fn


def _tensor_after_write(m):
    a = np.arange(3.0)
    t = m.tensor(a)
    a[0] = 7
    return t


def _set(make, key, value):
    def fn(m):
        t = make(m)
        t[key] = value
        return t

    return fn


_FROM_NUMPY = {
    "from_object": lambda m: m.from_numpy(np.array([1, None])),
    "from_str": lambda m: m.from_numpy(np.array(["a"])),
    "from_u16": lambda m: m.from_numpy(np.array([1], np.uint16)),
    "from_u32": lambda m: m.from_numpy(np.array([1], np.uint32)),
    "from_u64": lambda m: m.from_numpy(np.array([1], np.uint64)),
    "from_datetime": lambda m: m.from_numpy(np.array(["2020-01-01"], "datetime64[D]")),
    "from_timedelta": lambda m: m.from_numpy(np.array([1], "timedelta64[s]")),
    "from_big_endian": lambda m: m.from_numpy(np.array([1, 2], ">f4")),
    "from_big_endian_i1": lambda m: m.from_numpy(np.array([1, 2], ">i1")),
    "from_unaligned": lambda m: m.from_numpy(_UNALIGNED),
    "from_negative_strides": lambda m: m.from_numpy(np.arange(3.0)[::-1]),
    "from_strided": lambda m: m.from_numpy(np.arange(6.0)[::2]),
    "from_list": lambda m: m.from_numpy([1, 2]),
    "from_numpy_scalar": lambda m: m.from_numpy(np.float64(1)),
    "from_0d": lambda m: m.from_numpy(np.array(5)),
    "from_f16": lambda m: m.from_numpy(np.ones(2, np.float16)),
    "from_c64": lambda m: m.from_numpy(np.ones(2, np.complex64)),
    "from_longdouble": lambda m: m.from_numpy(np.ones(2, np.longdouble)),
    "from_matrix": lambda m: m.from_numpy(np.matrix([[1.0, 2.0]])),
    "from_structured": lambda m: m.from_numpy(np.zeros(2, [("a", "f4")])),
    "from_numpy_shares": _shared_from_numpy,
    "numpy_shares": _shared_numpy,
    "as_tensor_shares": _as_tensor_after_write(),
    "as_tensor_same_dtype_shares": _as_tensor_after_write(dtype="float64"),
    "as_tensor_other_dtype_copies": _as_tensor_after_write(dtype="float32"),
    "as_tensor_cpu_shares": _as_tensor_after_write(device="cpu"),
    "tensor_copies": _tensor_after_write,
    "tensor_read_only": lambda m: m.tensor(_RO),
    "as_tensor_big_endian": lambda m: m.as_tensor(np.array([1, 2], ">f4")),
    "tensor_big_endian": lambda m: m.tensor(np.array([1, 2], ">f4")),
    "tensor_negative_strides": lambda m: m.tensor(np.arange(3.0)[::-1]),
    "as_tensor_negative_strides": lambda m: m.as_tensor(np.arange(3.0)[::-1]),
    "tensor_object": lambda m: m.tensor(np.array([1, None])),
    "tensor_str": lambda m: m.tensor(np.array(["a"])),
    "tensor_datetime": lambda m: m.tensor(np.array(["2020-01-01"], "datetime64[D]")),
    "tensor_u16": lambda m: m.tensor(np.array([1], np.uint16)),
    "tensor_f32_f64_scalars": lambda m: m.tensor([np.float32(1), np.float64(2)]),
    "tensor_f32_scalars": lambda m: m.tensor([np.float32(1), np.float32(2)]),
    "tensor_i32_scalars": lambda m: m.tensor([np.int32(1), np.int32(2)]),
    "tensor_i32_and_float": lambda m: m.tensor([np.int32(1), 2.5]),
    "tensor_f32_and_int": lambda m: m.tensor([np.float32(1), 2]),
    "tensor_bool_scalars": lambda m: m.tensor([np.bool_(True), np.bool_(False)]),
    "tensor_c64_and_int": lambda m: m.tensor([np.complex64(1), 2]),
    "tensor_f16_scalar": lambda m: m.tensor(np.float16(1.5)),
    "tensor_f32_scalar": lambda m: m.tensor(np.float32(1.5)),
    "tensor_i8_scalar": lambda m: m.tensor(np.int8(3)),
    "tensor_0d": lambda m: m.tensor(np.array(5)),
    "tensor_0d_f32": lambda m: m.tensor(np.array(5, np.float32)),
    "tensor_list_of_0d": lambda m: m.tensor([np.array(1.0), np.array(2.0)]),
    "tensor_list_of_0d_f32": lambda m: m.tensor([np.array(1.0, np.float32), np.array(2.0)]),
    "tensor_list_of_0d_dtype": lambda m: m.tensor([np.array(1.0)], dtype=m.float32),
    "tensor_nested_0d": lambda m: m.tensor([[np.array(1.0)]]),
    "tensor_0d_after_number": lambda m: m.tensor([np.float64(1), np.array(2.0)]),
    "tensor_0d_after_tensor": lambda m: m.tensor([m.tensor(1.0), np.array(2.0)]),
    "as_tensor_list_of_0d": lambda m: m.as_tensor([np.array(1.0), np.array(2.0)]),
    "tensor_tensor_and_np_scalar": lambda m: m.tensor([m.tensor(1.0), np.float64(2)]),
    "tensor_0d_tensors": lambda m: m.tensor([m.tensor(1), m.tensor(2)]),
    "tensor_mixed_nested": lambda m: m.tensor([[np.float32(1), 2], [3, np.int64(4)]]),
    "as_tensor_np_scalars": lambda m: m.as_tensor([np.float32(1), np.float32(2)]),
    "as_tensor_np_scalar": lambda m: m.as_tensor(np.float32(2)),
    "tolist_f32": lambda m: [
        type(v).__name__ for v in m.from_numpy(np.ones(2, np.float32)).tolist()
    ],
    "tolist_i16": lambda m: [type(v).__name__ for v in m.from_numpy(np.ones(2, np.int16)).tolist()],
    "tolist_bool": lambda m: [type(v).__name__ for v in m.from_numpy(np.ones(2, bool)).tolist()],
    "tolist_c64": lambda m: [
        type(v).__name__ for v in m.from_numpy(np.ones(2, np.complex64)).tolist()
    ],
    "item_f32": lambda m: type(m.from_numpy(np.ones(1, np.float32)).item()).__name__,
    "item_u8": lambda m: type(m.from_numpy(np.ones(1, np.uint8)).item()).__name__,
    "item_u16": lambda m: type(m.from_numpy(np.ones(1, np.uint16)).item()).__name__,
    "int_of": lambda m: int(m.from_numpy(np.array([2.7]))),
    "float_of": lambda m: float(m.from_numpy(np.array([2], np.int32))),
    "complex_of": lambda m: complex(m.from_numpy(np.array([2.5], np.float32))),
    "bool_of": lambda m: bool(m.from_numpy(np.array([0.0]))),
    "index_of": lambda m: operator.index(m.from_numpy(np.array(3))),
    "index_of_float": lambda m: operator.index(m.from_numpy(np.array(3.0))),
}

_NUMPY_NUMBERS = {
    "size": lambda m: [int(v) for v in m.Size([np.int64(2), np.int32(3)])],
    "size_bool": lambda m: m.Size([np.bool_(True)]),
    "size_float": lambda m: m.Size([np.float64(2)]),
    "size_float32": lambda m: m.Size([2, np.float32(2)]),
    "getitem": lambda m: m.arange(6).reshape(2, 3)[np.int64(1)],
    "getitem_pair": lambda m: m.arange(6).reshape(2, 3)[np.int32(1), np.int64(-1)],
    "getitem_u8": lambda m: m.arange(6)[np.uint8(1)],
    "getitem_bool": lambda m: m.arange(3)[np.bool_(True)],
    "sum_dim": lambda m: m.ones(2, 3).sum(np.int64(0)),
    "sum_dim_kw": lambda m: m.ones(2, 3).sum(dim=np.int32(1)),
    "zeros": lambda m: m.zeros(np.int64(3)),
    "zeros_two": lambda m: m.zeros(np.int64(2), np.int32(3)),
    "zeros_tuple": lambda m: m.zeros((np.int64(2), 3)),
    "zeros_float": lambda m: m.zeros(np.float64(2)),
    "view": lambda m: m.arange(6).view(np.int32(2), -1),
    "reshape": lambda m: m.arange(6).reshape(np.int64(3), np.int64(2)),
    "unsqueeze": lambda m: m.zeros(3).unsqueeze(np.int64(0)),
    "transpose": lambda m: m.zeros(2, 3).transpose(np.int64(0), np.int64(1)),
    "full": lambda m: m.full((np.int64(2),), np.float32(1.5)),
    "arange": lambda m: m.arange(np.int64(3)),
    "arange_float": lambda m: m.arange(np.float32(2.5)),
    "randn_shape": lambda m: m.randn(np.int64(2)).shape,
    "mask": lambda m: m.arange(3)[np.array([True, False, True])],
    "mask_2d": lambda m: m.arange(6).reshape(2, 3)[
        np.array([[True, False, True], [0, 0, 1]], bool)
    ],
    "mask_bad": lambda m: m.arange(3)[np.array([True, False])],
    "index_array": lambda m: m.arange(5)[np.array([0, 2, 4])],
    "index_array_i32": lambda m: m.arange(5)[np.array([0, -1], np.int32)],
    "index_array_u8": lambda m: m.arange(5)[np.array([0, 1], np.uint8)],
    "index_array_out_of_range": lambda m: m.arange(5)[np.array([7])],
    "index_array_float": lambda m: m.arange(5)[np.array([1.0])],
    "index_array_2d": lambda m: m.arange(5)[np.array([[0, 1], [2, 3]])],
    "setitem_index_array": _set(lambda m: m.zeros(3), np.array([0, 2]), 9),
    "setitem_array_value": _set(lambda m: m.zeros(3), slice(None), np.array([1.0, 2.0, 3.0])),
    "setitem_mask": _set(lambda m: m.zeros(3), np.array([True, False, True]), 5),
}


# lists holding arrays: torch warns about those once per process (compared in a fresh one below)
_LISTED_ARRAYS = {n for n in _FROM_NUMPY if "0d_after" in n or "list_of_0d" in n or "nested" in n}


@pytest.mark.parametrize("name", list(_FROM_NUMPY))
def test_numpy_to_tensor(name):
    _same(_FROM_NUMPY[name], warned=name not in _LISTED_ARRAYS)


@pytest.mark.parametrize("name", list(_NUMPY_NUMBERS))
def test_numpy_numbers_as_sizes_dims_indices(name):
    _same(_NUMPY_NUMBERS[name])


_ONCE_SCRIPT = """
import warnings, numpy as np, sys
lib = __import__(sys.argv[1])
ro = np.arange(3.0)
ro.flags.writeable = False
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    for f in (lib.from_numpy, lib.as_tensor, lib.from_numpy):
        t = f(ro)
    lib.tensor([np.ones(2), np.ones(2)])
    lib.tensor([np.ones(2), np.ones(2)])
print(t.dtype, t.tolist())
for x in w:
    print(x.category.__name__, str(x.message).split(" (Triggered internally")[0])
"""


def test_warn_once_texts_in_a_fresh_process():
    """A read-only array (warned about once, by from_numpy or as_tensor, never by tensor) and a
    list of arrays (once): both are once per process, so each library runs in its own."""

    def run(lib):
        p = subprocess.run(
            [sys.executable, "-c", _ONCE_SCRIPT, lib],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert p.returncode == 0, p.stderr
        return p.stdout.replace("ember.", "torch.")

    assert run("ember") == run("torch")
