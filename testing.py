"""ember.testing (torch.testing): ``assert_close`` and ``make_tensor``.

``assert_close`` follows torch's rules: the same default tolerances per dtype, recursion into
sequences and mappings, Python and numpy scalars, numpy arrays, the same checks (shape, layout,
device, dtype, optionally stride) and the same AssertionError messages. ``make_tensor`` draws
values from torch's default ranges with ember's random generator.
"""

from __future__ import annotations

import collections.abc
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .core import dtype as _dt
from .core.tensor import Tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# (rtol, atol) per dtype; every other dtype (integers, bool) is compared for equality
_PRECISIONS = {
    _dt.float16: (1e-3, 1e-5),
    _dt.bfloat16: (1.6e-2, 1e-5),
    _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7),
    _dt.complex64: (1.3e-6, 1e-5),
    _dt.complex128: (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: _dt.int64, float: _dt.float64, complex: _dt.complex128}


class _Mismatch(Exception):
    """A failed check: the exception type to raise, its message, and where (item path)."""

    def __init__(self, exc: type[Exception], msg: str, id: tuple = ()) -> None:
        super().__init__(msg)
        self.exc, self.msg, self.id = exc, msg, id

    def error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if isinstance(msg, str):
            return self.exc(msg)
        text = self.msg
        if self.id:
            text += f"\n\nThe failure occurred for item {''.join(str([i]) for i in self.id)}"
        return self.exc(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    pass


def _tolerances(dtypes, rtol, atol, id) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise _Mismatch(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}.",
            id,
        )
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*(_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes), strict=True)
    return max(rtols), max(atols)


# ------------------------------------------------------------------ messages


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind: str, diff, idx, tol) -> str:
        s = (
            f"{kind.title()} difference: {diff}"
            if idx is None
            else f"Greatest {kind} difference: {diff} at index {idx}"
        )
        return s + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol: float, atol: float, identifier: str = "Scalars") -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(
        identifier, f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff, None,
        rtol,
    )  # fmt: skip


def _tensor_msg(
    a: np.ndarray, e: np.ndarray, matches: np.ndarray, rtol, atol, identifier: str
) -> str:
    shape, total = matches.shape, matches.size
    n_bad = total - int(matches.sum())
    extra = f"Mismatched elements: {n_bad} / {total} ({n_bad / total:.1%})"
    a, e, matches = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    integral = a.dtype.kind in "biu"
    if integral:
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[matches] = 0
        i_abs = int(np.argmax(abs_diff))  # the first NaN if any, like torch.max
        den = np.abs(e)
        if integral:  # torch divides integers in the default float dtype
            rel_diff = abs_diff.astype(np.float32) / den.astype(np.float32)
        else:
            rel_diff = abs_diff / den
        rel_diff[matches] = 0
        i_rel = int(np.argmax(rel_diff))

    def where(i: int) -> tuple:
        return tuple(int(k) for k in np.unravel_index(i, shape))

    return _mismatch_msg(
        identifier, extra, abs_diff[i_abs].item(), where(i_abs), atol,
        rel_diff[i_rel].item(), where(i_rel), rtol,
    )  # fmt: skip


# ------------------------------------------------------------------ pairs


def _compare_none(a, e, id, **_) -> None:
    if not (a is None and e is None):
        raise _Mismatch(AssertionError, f"None mismatch: {a} is not {e}", id)


def _compare_bool(a, e, id, **_) -> None:
    a, e = bool(a), bool(e)
    if a is not e:
        raise _Mismatch(AssertionError, f"Booleans mismatch: {a} is not {e}", id)


def _number_pair(a, e, id, rtol, atol, equal_nan, check_dtype, **_):
    a = a.item() if isinstance(a, np.number) else a
    e = e.item() if isinstance(e, np.number) else e
    if type(a) not in _NUMBER_DTYPES or type(e) not in _NUMBER_DTYPES:
        raise RuntimeError(
            f"Originating a NumberPair() at item {''.join(str([i]) for i in id)} with\n\n"
            f"{type(a).__name__}(): {a}\n\nand\n\n{type(e).__name__}(): {e}\n\n"
            "resulted in the unexpected exception above. If you are a user and see this message "
            "during normal operation please file an issue at "
            "https://github.com/pytorch/pytorch/issues. If you are a developer and working on "
            "the comparison functions, please except the previous error and raise an "
            "expressive `ErrorMeta` instead."
        ) from TypeError("booleans are compared with booleans only")
    tol = _tolerances([_NUMBER_DTYPES[type(a)], _NUMBER_DTYPES[type(e)]], rtol, atol, id)

    def compare() -> None:
        if check_dtype and type(a) is not type(e):
            raise _Mismatch(
                AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.", id
            )
        if a == e or (equal_nan and _isnan(a) and _isnan(e)):
            return
        diff = abs(a - e)
        if math.isfinite(diff) and diff <= tol[1] + tol[0] * abs(e):
            return
        raise _Mismatch(AssertionError, _scalar_msg(a, e, rtol=tol[0], atol=tol[1]), id)

    return compare


def _isnan(x) -> bool:
    return x != x  # noqa: PLR0124 - NaN is the one value unequal to itself


def _to_tensor(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from .core.ops.creation import as_tensor

    try:
        return as_tensor(x)
    except Exception as err:
        raise _Unsupported from err


def _tensor_pair(a, e, id, allow_subclasses, rtol, atol, **opts):
    if not (isinstance(a, type(e)) or isinstance(e, type(a))):
        raise _Unsupported
    if not allow_subclasses and type(a) is not type(e):
        raise _Unsupported
    a, e = _to_tensor(a), _to_tensor(e)
    tol = _tolerances([a.dtype, e.dtype], rtol, atol, id)
    return lambda: _compare_tensors(a, e, id, tol, **opts)


def _compare_tensors(
    a: Tensor, e: Tensor, id, tol, equal_nan, check_device, check_dtype, check_layout, check_stride
) -> None:
    def fail(attr: str, x, y):
        raise _Mismatch(
            AssertionError, f"The values for attribute '{attr}' do not match: {x} != {y}.", id
        )

    if a.shape != e.shape:
        fail("shape", a.shape, e.shape)
    strided = _dt_layout_strided()
    if a.layout != e.layout:
        if check_layout:
            fail("layout", a.layout, e.layout)
    elif a.layout == strided and check_stride and a.stride() != e.stride():
        fail("stride()", a.stride(), e.stride())
    if check_device and a.device != e.device:
        fail("device", a.device, e.device)
    if check_dtype and a.dtype != e.dtype:
        fail("dtype", a.dtype, e.dtype)

    if a.is_meta or e.is_meta:
        return  # no values to compare (torch checks only the metadata above)
    if a.layout != e.layout:
        a, e = (t if t.layout == strided else t.to_dense() for t in (a, e))
    if a.dtype != e.dtype:
        from .core.dtype import promote_types

        wide = (_dt.uint16, _dt.uint32, _dt.uint64)
        da = _dt.int64 if a.dtype in wide else a.dtype
        de = _dt.int64 if e.dtype in wide else e.dtype
        common = promote_types(da, de)
        a, e = a.to(common), e.to(common)
    rtol, atol = tol
    if a.layout == strided:
        _compare_values(a, e, id, rtol, atol, equal_nan)
    elif a.is_sparse:
        _compare_sparse_coo(a, e, id, rtol, atol, equal_nan)
    else:
        _compare_sparse_compressed(a, e, id, rtol, atol, equal_nan)


def _compare_values(a: Tensor, e: Tensor, id, rtol, atol, equal_nan, identifier=None) -> None:
    """Elementwise closeness of two strided tensors of one dtype and shape; the message names
    ``identifier`` (default: "Scalars" for 0-d tensors, else "Tensor-likes")."""
    x, y = _numpy(a), _numpy(e)
    matches = _isclose(x, y, rtol, atol, equal_nan)
    if matches.all():
        return
    if x.ndim == 0:
        msg = _scalar_msg(x.item(), y.item(), rtol, atol, identifier or "Scalars")
    else:
        msg = _tensor_msg(x, y, matches, rtol, atol, identifier or "Tensor-likes")
    raise _Mismatch(AssertionError, msg, id)


def _compare_sparse_coo(a, e, id, rtol, atol, equal_nan) -> None:
    """torch's order: sparse dims and nnz equal, then indices equal, then values close (the
    tensors as they are: an uncoalesced one is not coalesced first)."""
    for what, x, y in (
        ("The number of sparse dimensions", a.sparse_dim(), e.sparse_dim()),
        ("The number of specified values", a._nnz(), e._nnz()),
    ):
        if x != y:
            raise _Mismatch(
                AssertionError, f"{what} in sparse COO tensors does not match: {x} != {y}", id
            )
    _compare_values(a._indices(), e._indices(), id, 0, 0, False, "Sparse COO indices")
    _compare_values(a._values(), e._values(), id, rtol, atol, equal_nan, "Sparse COO values")


_COMPRESSED = {  # layout name: (format, compressed indices method, plain indices method)
    "sparse_csr": ("CSR", "crow_indices", "col_indices"),
    "sparse_csc": ("CSC", "ccol_indices", "row_indices"),
    "sparse_bsr": ("BSR", "crow_indices", "col_indices"),
    "sparse_bsc": ("BSC", "ccol_indices", "row_indices"),
}


def _compare_sparse_compressed(a, e, id, rtol, atol, equal_nan) -> None:
    """nnz equal, then compressed and plain indices equal (in a common index dtype), then
    values close."""
    fmt, compressed, plain = _COMPRESSED[str(a.layout).rsplit(".", 1)[-1]]
    if a._nnz() != e._nnz():
        raise _Mismatch(
            AssertionError,
            f"The number of specified values in sparse {fmt} tensors does not match: "
            f"{a._nnz()} != {e._nnz()}",
            id,
        )
    for method in (compressed, plain):
        x, y = getattr(a, method)(), getattr(e, method)()
        if x.dtype != y.dtype:
            x, y = x.to(_dt.int64), y.to(_dt.int64)
        _compare_values(x, y, id, 0, 0, False, f"Sparse {fmt} {method}")
    _compare_values(a.values(), e.values(), id, rtol, atol, equal_nan, f"Sparse {fmt} values")


def _dt_layout_strided():
    from .core.layout import strided

    return strided


def _numpy(t: Tensor) -> np.ndarray:
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    return np.asarray(t._data)  # (numpy() refuses bfloat16, as torch's does)


def _isclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool):
    """torch.isclose on arrays of one dtype: |a - b| <= atol + rtol * |b|, computed in the
    arrays' dtype (integers and bools: the errors in float32, torch's default dtype)."""
    with np.errstate(all="ignore"):
        close = a == b
        floating = a.dtype.kind in "fcV" or a.dtype.name == "bfloat16"
        if floating and equal_nan:
            close |= np.isnan(a) & np.isnan(b)
        if rtol == 0 and atol == 0:
            return np.asarray(close)
        if floating:
            allowed = a.dtype.type(atol) + np.abs(a.dtype.type(rtol) * b)
            err = np.abs(a - b)
        else:
            bf = b.astype(np.float32)
            allowed = np.float32(atol) + np.abs(np.float32(rtol) * bf)
            if a.dtype.kind == "b":
                err = np.abs(a.astype(np.float32) - bf)
            else:
                err = np.abs(a.astype(np.int64) - b.astype(np.int64)).astype(np.float32)
        return np.asarray(close | (np.isfinite(err) & (err <= allowed)))


def _is_seq(x) -> bool:
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _type_text(x) -> str:
    """``str(type(x))`` with ember's classes spelled as torch's (``<class 'torch.Tensor'>``)."""
    text = str(type(x))
    return text.replace("<class 'ember.", "<class 'torch.", 1)


def _originate(a, e, id: tuple, opts: dict) -> list:
    """The comparisons of the leaves of ``a`` and ``e`` (thunks raising _Mismatch)."""
    if _is_seq(a) and _is_seq(e):
        if len(a) != len(e):
            raise _Mismatch(
                AssertionError, f"The length of the sequences mismatch: {len(a)} != {len(e)}", id
            )
        out = []
        for i in range(len(a)):
            out += _originate(a[i], e[i], (*id, i), opts)
        return out
    if isinstance(a, collections.abc.Mapping) and isinstance(e, collections.abc.Mapping):
        ka, ke = set(a.keys()), set(e.keys())
        if ka != ke:
            raise _Mismatch(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(ke - ka)}\n"
                f"Additional keys in the actual mapping: {sorted(ka - ke)}",
                id,
            )
        keys: Any = ka
        try:
            keys = sorted(ka)
        except Exception:  # noqa: BLE001, S110 - unsortable keys keep set order, as torch's
            pass
        out = []
        for k in keys:
            out += _originate(a[k], e[k], (*id, k), opts)
        return out
    if a is None or e is None:
        return [lambda: _compare_none(a, e, id)]
    if isinstance(a, (bool, np.bool_)) and isinstance(e, (bool, np.bool_)):
        return [lambda: _compare_bool(a, e, id)]
    numbers = (int, float, complex, np.number)
    if isinstance(a, numbers) and isinstance(e, numbers):
        return [_number_pair(a, e, id, **opts)]
    try:
        return [_tensor_pair(a, e, id, **opts)]
    except _Unsupported:
        pass
    raise _Mismatch(
        TypeError,
        f"No comparison pair was able to handle inputs of type {_type_text(a)} and "
        f"{_type_text(e)}.",
        id,
    )


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    r"""Asserts that ``actual`` and ``expected`` are close.

    Tensors (and tensor-likes such as numpy arrays, compared with their own kind) are close if
    their shapes, layouts, devices and dtypes match (the last three checks can be switched off)
    and, elementwise, ``|actual - expected| <= atol + rtol * |expected|``; NaNs are equal only
    with ``equal_nan=True``. Python and numpy scalars compare the same way, booleans and None
    for identity. Sequences and mappings are compared item by item.

    Default tolerances (when both ``rtol`` and ``atol`` are omitted) are the loosest of the two
    inputs' dtypes: float16 ``(1e-3, 1e-5)``, bfloat16 ``(1.6e-2, 1e-5)``, float32 and complex64
    ``(1.3e-6, 1e-5)``, float64 and complex128 ``(1e-7, 1e-7)``, others ``(0, 0)``.

    Args:
        actual: the actual input.
        expected: the expected input.
        allow_subclasses: whether inputs of directly related types (a subclass) are compared.
        rtol: relative tolerance; ``atol`` must be given with it.
        atol: absolute tolerance; ``rtol`` must be given with it.
        equal_nan: whether two NaNs count as equal.
        check_device: whether the devices must match (else both are compared on the cpu).
        check_dtype: whether the dtypes must match (else both are promoted to a common dtype).
        check_layout: whether the layouts must match (else both are made strided).
        check_stride: whether the strides of strided tensors must match.
        msg: the error message to raise instead of the generated one, or a callable that takes
            the generated message and returns the one to raise.

    Raises:
        ValueError: if only one of ``rtol`` and ``atol`` is given.
        TypeError: if an input pair has no comparison (e.g. a tensor and a list).
        AssertionError: with torch's message, if the inputs are not close.
    """
    __tracebackhide__ = True
    opts = {
        "allow_subclasses": allow_subclasses,
        "rtol": rtol,
        "atol": atol,
        "equal_nan": equal_nan,
        "check_device": check_device,
        "check_dtype": check_dtype,
        "check_layout": check_layout,
        "check_stride": check_stride,
    }
    try:
        checks = _originate(actual, expected, (), opts)
    except _Mismatch as m:
        raise m.error() from None
    for check in checks:
        try:
            check()
        except _Mismatch as m:
            raise m.error(msg) from None


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Deprecated (torch 1.12): use :func:`assert_close`. Compares with NaNs equal, dtypes
    promoted, and tolerances float16 ``(1e-3, 1e-3)``, float32 ``(1e-4, 1e-5)``, float64
    ``(1e-5, 1e-8)`` by default."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find detailed "
        "upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    from .core.ops.creation import tensor

    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        table = {_dt.float16: (1e-3, 1e-3), _dt.float32: (1e-4, 1e-5), _dt.float64: (1e-5, 1e-8)}
        rtols, atols = zip(*(table.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)))
        rtol, atol = max(rtols), max(atols)
    assert_close(
        actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
        check_dtype=False, check_stride=False, msg=msg or None,
    )  # fmt: skip


# ------------------------------------------------------------------ make_tensor


def make_tensor(
    *shape: int | tuple[int, ...] | list[int],
    dtype: _dt.dtype,
    device: Any,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Tensor:
    r"""A tensor of ``shape`` and ``dtype`` on ``device``, filled with values drawn uniformly
    from ``[low, high)``.

    Defaults: bool ``[0, 2)``, unsigned integers ``[0, 10)``, signed integers ``[-9, 10)``,
    floating and complex ``[-9, 9)`` (both parts). Bounds outside the dtype's finite range are
    clamped to it; integer bounds are rounded up.

    Args:
        shape: the sizes, as ints or one sequence.
        dtype: the dtype of the result.
        device: the device of the result.
        low: the inclusive lower bound (default: see above).
        high: the exclusive upper bound (default: see above).
        requires_grad: whether the result requires grad (floating and complex dtypes only).
        noncontiguous: make a non-contiguous tensor (when it has more than one element).
        exclude_zero: replace zeros by 1 (integers) or the dtype's smallest normal number.
        memory_format: the memory format of the result (exclusive with ``noncontiguous``).

    Raises:
        ValueError: for ``low >= high``, NaN bounds, an empty interval for the dtype,
            ``requires_grad`` with an integral dtype, or ``noncontiguous`` with
            ``memory_format``.
    """
    from .core.ops import creation as _c
    from .core.ops import random as _r

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)  # validated by the factory below, with its own error
    if not isinstance(dtype, _dt.dtype) or dtype in _dt.QUANTIZED_TYPES:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). "
            "To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    integral = not (dtype.is_floating_point or dtype.is_complex)
    if requires_grad and integral:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            f"but got dtype={dtype}"
        )

    def bounds(lowest: float, highest: float, dlow: float, dhigh: float):
        lo = dlow if low is None else low
        hi = dhigh if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if lo == hi and not integral:
            warnings.warn(
                "Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                "types is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` "
                "instead.",
                FutureWarning,
                stacklevel=3,
            )
        elif lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        elif hi < lowest or lo >= highest:
            raise ValueError(
                f"The value interval specified by `low` and `high` is [{lo}, {hi}), "
                f"but {dtype} only supports [{lowest}, {highest})"
            )
        lo, hi = min(max(lo, lowest), highest), min(max(hi, lowest), highest)
        return (math.ceil(lo), math.ceil(hi)) if integral else (lo, hi)

    if dtype == _dt.bool_:
        lo, hi = bounds(0, 2, 0, 2)
        result = _r.randint(lo, hi, shape, dtype=dtype, device=device)
    elif integral:
        info = _dt.iinfo(dtype)
        lo, hi = bounds(info.min, info.max + (dtype != _dt.int64), -9, 10)
        result = _r.randint(lo, hi, shape, dtype=dtype, device=device)
    else:
        info = _dt.finfo(dtype)
        lo, hi = bounds(info.min, info.max, -9, 9)
        result = _c.empty(shape, dtype=dtype, device=device)
        target = result
        if dtype.is_complex:
            from .core.ops.misc import view_as_real

            target = view_as_real(result)
        if hi - lo >= info.max:
            target.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            target.uniform_(lo, hi)
    if noncontiguous and result.numel() > 1:
        result = result.repeat_interleave(2, dim=-1)[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else _dt.finfo(dtype).tiny
    if not integral:
        result.requires_grad_(requires_grad)
    return result
