"""The op-table harness: run one function in ember and in torch on the same inputs and compare
values, dtypes, shapes and gradients (with a non-uniform upstream gradient); float64 gradcheck.

Usage in a test module::

    from harness import Case, run_case, run_gradcheck
    CASES = [Case("exp", lambda m, x: m.exp(x), [A(3, 4)]), ...]
    @pytest.mark.parametrize("case", CASES, ids=str)
    def test_parity(case): run_case(case)
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable

import ember
import numpy as np
import pytest

try:
    import torch
except ImportError:  # the oracle is optional: parity checks skip, gradchecks still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")


# dtype names, in torch's order; ALL_DTYPES adds the limited unsigned ones
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]  # fmt: skip
ALL_DTYPES = DTYPES[:2] + ["uint16", "uint32", "uint64"] + DTYPES[2:]
REAL_DTYPES = DTYPES[:-2]


def raises_like_torch(fn, exc, msg: str) -> None:
    """``fn(ember)`` raises ``exc`` with ``msg``, and so does ``fn(torch)`` (where installed)."""
    import re

    with pytest.raises(exc, match=re.escape(msg)):
        fn(ember)
    if torch is not None:
        with pytest.raises(exc, match=re.escape(msg)):
            fn(torch)


def same_error(fn, exc: type = Exception, first_line: bool = False) -> str:
    """``fn(torch)`` and ``fn(ember)`` raise the same exception type (by name: ember's LinAlgError
    is its own class) with the same message, only its first line compared when ``first_line``
    (torch's multi-overload texts); returns torch's message."""
    with pytest.raises(exc) as te:
        fn(torch)
    with pytest.raises(exc) as ee:
        fn(ember)
    assert type(ee.value).__name__ == type(te.value).__name__, (ee.value, te.value)
    want, got = str(te.value), str(ee.value)
    if first_line:
        want, got = want.split("\n")[0], got.split("\n")[0]
    assert got == want
    return want


def results_or_same_error(fn) -> list:
    """Run ``fn(torch)`` and ``fn(ember)``. When torch raises, ember must raise the same type with
    the same message, and the answer is ``[]``; otherwise the answer pairs torch's results with
    ember's, ``[(want, got), ...]`` (one pair for a single result, one per item of a tuple or
    list, whose lengths must agree), for the caller to compare."""
    try:
        want = fn(torch)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        with pytest.raises(type(e)) as got:
            fn(ember)
        assert str(got.value) == str(e)
        return []
    got = fn(ember)
    if not isinstance(want, (tuple, list)):
        want, got = (want,), (got,)
    assert len(got) == len(want)
    return list(zip(want, got))


def run_quietly(fn, lib):
    """``fn(lib)`` with warnings silenced: ``(None, result)``, or ``(exception, None)`` when it
    raised (for tests that compare what torch and ember each do)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return None, fn(lib)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return e, None


def outcome(fn, lib):
    """``fn(lib)``'s outcome, warnings silenced: ``("ok", result)`` or ``(error type, text)``."""
    err, value = run_quietly(fn, lib)
    return ("ok", value) if err is None else (type(err).__name__, str(err))


def same_outcome(fn):
    """:func:`outcome` of ``fn``, the same in ember and torch (asserted, results compared with
    ==); returns torch's."""
    want = outcome(fn, torch)
    assert outcome(fn, ember) == want
    return want


def upstream(mod, y):
    """A non-uniform float64 upstream gradient for ``y`` (1, 2, ..., n in its shape)."""
    return mod.arange(1.0, y.numel() + 1, dtype=mod.float64).reshape(y.shape)


def same_grads_or_error(f) -> list | str:
    """``f(torch)`` and ``f(ember)`` (each a list of gradients, None allowed): the same values
    (float64 tolerance), or the same RuntimeError (its text up to a ": [" shape listing);
    returns torch's arrays or text."""
    out = []
    for mod in (torch, ember):
        try:
            out.append(("ok", [None if g is None else g.detach().numpy() for g in f(mod)]))
        except RuntimeError as e:
            out.append(("err", str(e).split(": [")[0]))
    (ka, a), (kb, b) = out
    assert ka == kb, out
    if ka == "err":
        assert a == b
        return a
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(y, x, rtol=1e-10, atol=1e-12)
    return a


def same_type_error(fn, modules: dict) -> str:
    """``fn(m, modules[m])`` raises a TypeError under torch, and ember raises the same type with
    the same text, torch's per-overload "didn't match because ..." lines left out (ember does
    not write them); returns torch's text."""
    got = {}
    for m in (torch, ember):
        with pytest.raises(Exception) as info:
            fn(m, modules[m])
        lines = str(info.value).split("\n")
        text = "\n".join(s for s in lines if not s.startswith("      didn't match"))
        got[m] = (type(info.value).__name__, text)
    assert got[ember] == got[torch]
    assert got[torch][0] == "TypeError"
    return got[torch][1]


_GRAD_SCALES = (1, 0.5, 2, 0.1, 3, 1, 2, 0.5)


def optimizer_steps(name: str, dtype: str, rng, n: int, steps: int, **options) -> list:
    """``steps`` (at most 8) steps of optimizer ``name`` with ``options`` on one parameter of
    ``n`` random values in ``dtype``, gradients of several scales, the same in both frameworks;
    returns (param, state) for torch then ember."""
    p0 = rng.standard_normal(n).astype(np.float32)
    grads = [rng.standard_normal(n).astype(np.float32) * s for s in _GRAD_SCALES[:steps]]
    out = []
    for m in (torch, ember):
        p = m.tensor(p0).to(getattr(m, dtype)).requires_grad_()
        opt = getattr(m.optim, name)([p], **options)
        for g in grads:
            p.grad = m.tensor(g).to(getattr(m, dtype))
            opt.step()
        out.append((p, opt.state[p]))
    return out


@dataclasses.dataclass
class A:
    """An input array spec: shape, dtype, value range, and whether it is differentiable."""

    shape: tuple
    dtype: str = "float32"
    low: float = -2.0
    high: float = 2.0
    grad: bool = True
    seed: int = 0
    positive: bool = False

    def __init__(self, *shape, dtype="float32", low=-2.0, high=2.0, grad=True, seed=0):
        self.shape, self.dtype, self.low, self.high, self.grad, self.seed = (
            shape,
            dtype,
            low,
            high,
            grad,
            seed,
        )

    def make(self, k: int) -> np.ndarray:
        r = np.random.default_rng(1000 + 17 * k + self.seed)
        if self.dtype == "bool":
            return r.random(self.shape) > 0.5
        if self.dtype.startswith(("int", "uint")):
            lo, hi = int(self.low), int(self.high)
            return r.integers(lo, hi + 1, self.shape).astype(self.dtype)
        v = r.uniform(self.low, self.high, self.shape)
        if self.dtype.startswith("complex"):
            v = v + 1j * r.uniform(self.low, self.high, self.shape)
        return v.astype(self.dtype)


@dataclasses.dataclass
class Case:
    """One table row: ``fn(module, *inputs)`` runs with module = ember or torch."""

    name: str
    fn: Callable
    inputs: list
    atol: float = 1e-5
    rtol: float = 1e-4
    grad: bool = True
    gradcheck: bool = True
    kwargs: dict = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


def _mk(mod, arr, spec, dtype=None):
    if not isinstance(spec, A):
        return spec  # a Python scalar or other argument, passed as is
    a = arr if dtype is None else arr.astype(dtype)
    t = mod.tensor(a)
    if spec.grad and a.dtype.kind in "fc":
        t.requires_grad_(True)
    return t


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for o in out if hasattr(o, "shape")]
    return [out]


def _np(t):
    if isinstance(t, ember.Tensor):
        return np.asarray(t.detach().cpu()._data)
    # torch may hand back lazily conjugated/negated views or an efficient "zero tensor" gradient
    t = t.detach().cpu()
    if t._is_zerotensor():
        return np.zeros(tuple(t.shape), str(t.dtype).split(".")[-1])
    return t.resolve_conj().resolve_neg().numpy()


def assert_same(e, t, atol=1e-5, rtol=1e-4, what="value"):
    """ember tensor ``e`` equals torch tensor ``t``: dtype name, shape and values."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (
        f"{what}: dtype {e.dtype} != {t.dtype}"
    )
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != {tuple(t.shape)}"
    ev, tv = _np(e), _np(t)
    if ev.dtype.kind in "biu":
        np.testing.assert_array_equal(ev, tv, err_msg=what)
    else:
        np.testing.assert_allclose(
            ev.astype(np.complex128 if ev.dtype.kind == "c" else np.float64),
            tv,
            atol=atol,
            rtol=rtol,
            equal_nan=True,
            err_msg=what,
        )


def run_case(case: Case) -> None:
    """Forward and backward parity with torch."""
    if torch is None:
        pytest.skip("torch is not installed (the parity oracle)")
    arrays = [s.make(k) if isinstance(s, A) else s for k, s in enumerate(case.inputs)]
    e_in = [_mk(ember, a, s) for a, s in zip(arrays, case.inputs)]
    t_in = [_mk(torch, a, s) for a, s in zip(arrays, case.inputs)]
    e_out, t_out = case.fn(ember, *e_in), case.fn(torch, *t_in)
    compare_run(e_in, t_in, e_out, t_out, case.name, case.atol, case.rtol, case.grad)


def compare_run(e_in, t_in, e_out, t_out, what, atol=1e-5, rtol=1e-4, grad=True) -> None:
    """Outputs equal; then, after backward with the same non-uniform upstream gradient in both,
    every input's gradient equal (inputs without a torch gradient get none, or zeros, in ember)."""
    e_flat, t_flat = _flat(e_out), _flat(t_out)
    assert len(e_flat) == len(t_flat), f"{what}: number of outputs differs"
    for i, (e, t) in enumerate(zip(e_flat, t_flat)):
        assert_same(e, t, atol, rtol, f"{what} output {i}")
    if not grad:
        return
    e_diff = [e for e in e_flat if e.requires_grad]
    t_diff = [t for t in t_flat if t.requires_grad]
    assert len(e_diff) == len(t_diff), f"{what}: which outputs require grad differs"
    if not e_diff:
        return
    r = np.random.default_rng(7)
    ups = [r.uniform(0.5, 1.5, tuple(t.shape)).astype(_np(t).dtype) for t in t_diff]
    ember.autograd.backward(e_diff, [ember.tensor(u) for u in ups])
    torch.autograd.backward(t_diff, [torch.tensor(u) for u in ups])
    for k, (e, t) in enumerate(zip(e_in, t_in)):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            if t.grad is None:
                assert e.grad is None or not _np(e.grad).any(), f"{what}: grad {k} should be None"
                continue
            assert e.grad is not None, f"{what}: input {k} got no gradient"
            assert_same(e.grad, t.grad, atol * 10, rtol * 10, f"{what} grad {k}")


def run_gradcheck(case: Case, gradgrad: bool = False) -> None:
    """float64 gradcheck (and optionally gradgradcheck) of the case's function in ember."""
    arrays = [s.make(k) if isinstance(s, A) else s for k, s in enumerate(case.inputs)]
    ins = []
    for a, s in zip(arrays, case.inputs):
        if isinstance(s, A) and a.dtype.kind == "f":
            ins.append(_mk(ember, a, s, np.float64))
        elif isinstance(s, A) and a.dtype.kind == "c":
            ins.append(_mk(ember, a, s, np.complex128))
        else:
            ins.append(_mk(ember, a, s))
    if not any(isinstance(t, ember.Tensor) and t.requires_grad for t in ins):
        pytest.skip("no differentiable input")  # pragma: no cover - tables only list such rows
    fn = lambda *xs: case.fn(ember, *xs)
    assert ember.autograd.gradcheck(fn, ins, atol=1e-5, rtol=1e-3)
    if gradgrad:
        assert ember.autograd.gradgradcheck(fn, ins, atol=1e-4, rtol=1e-3)


def values_only(case: Case) -> Case:
    """The case with integer outputs (indices) dropped: gradcheck differentiates every output."""

    def fn(m, *xs):
        out = case.fn(m, *xs)
        if isinstance(out, tuple):
            out = tuple(o for o in out if o.dtype.is_floating_point)
            return out[0] if len(out) == 1 else out
        return out

    return Case(case.name, fn, case.inputs)


def saved_flags(node) -> dict:
    """A node's ``_saved_<name>`` tensor attributes (torch's or ember's): for each, whether it
    is None."""
    out = {}
    for attr in dir(node):
        if attr.startswith("_saved_"):
            v = getattr(node, attr)
            if v is None or hasattr(v, "grad_fn"):
                out[attr] = v is None
    return out
