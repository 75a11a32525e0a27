"""Module parity helpers: copy a torch module's state into an ember module and compare the two.

Usage in a test module::

    from nn_harness import check_module, copy_state, to_ember, to_torch

    def test_linear():
        check_module(lambda m: m.nn.Linear(3, 4), [A(2, 3)])   # builds both, copies, compares

``check_module`` builds the module with ``ember`` and with ``torch`` (``ctor(module)`` where
``module`` is ``ember`` or ``torch``), copies torch's state_dict into the ember module, runs both
on the same inputs, compares outputs, then backpropagates the same non-uniform upstream gradient
and compares every input gradient and every parameter gradient (by name). It runs in float32 and
in float64 (``dtypes=``). State dict keys and their order must match torch's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ember
import pytest
from harness import A, _flat, _np, assert_same, compare_run

try:
    import torch
except ImportError:  # pragma: no cover - parity checks skip without the oracle
    torch = None

__all__ = [
    "A",
    "assert_same",
    "check_module",
    "compare_modules",
    "copy_state",
    "to_ember",
    "to_torch",
]


def to_ember(t, requires_grad: bool | None = None):
    """An ember tensor with the values and dtype of torch tensor ``t`` (a copy)."""
    a = _np(t).copy()
    e = ember.tensor(a)
    rg = t.requires_grad if requires_grad is None else requires_grad
    if rg and a.dtype.kind in "fc":
        e.requires_grad_(True)
    return e


def to_torch(e, requires_grad: bool | None = None):
    """A torch tensor with the values and dtype of ember tensor ``e`` (a copy)."""
    a = _np(e).copy()
    t = torch.tensor(a)
    rg = e.requires_grad if requires_grad is None else requires_grad
    if rg and a.dtype.kind in "fc":
        t.requires_grad_(True)
    return t


def copy_state(tmod, emod, strict: bool = True) -> None:
    """Load torch module ``tmod``'s state_dict into ember module ``emod`` (values and dtypes),
    after asserting both state dicts have the same keys in the same order."""
    tsd = tmod.state_dict()
    esd = emod.state_dict()
    if strict:
        assert list(esd.keys()) == list(tsd.keys()), (
            f"state_dict keys differ:\n ember {list(esd.keys())}\n torch {list(tsd.keys())}"
        )
    emod.load_state_dict(
        {k: to_ember(v, requires_grad=False) for k, v in tsd.items()}, strict=strict
    )


def _make_inputs(specs, dtype, mod):
    arrays = [s.make(k) if isinstance(s, A) else s for k, s in enumerate(specs)]
    out = []
    for a, s in zip(arrays, specs):
        if not isinstance(s, A):
            out.append(s)
            continue
        if a.dtype.kind == "f" and dtype is not None:
            a = a.astype(dtype)
        t = mod.tensor(a)
        if s.grad and a.dtype.kind in "fc":
            t.requires_grad_(True)
        out.append(t)
    return out


def compare_modules(
    tmod,
    emod,
    inputs: Sequence,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    grad: bool = True,
    dtype=None,
    call: Callable | None = None,
    what: str = "module",
) -> None:
    """Run ``tmod`` and ``emod`` (already holding the same state) on the same ``inputs`` (``A``
    specs or plain values), compare outputs, input gradients and parameter gradients.
    ``call(module, *inputs)`` overrides how the module is invoked."""
    if torch is None:
        pytest.skip("torch is not installed (the parity oracle)")
    e_in = _make_inputs(inputs, dtype, ember)
    t_in = _make_inputs(inputs, dtype, torch)
    if call is None:
        e_out, t_out = emod(*e_in), tmod(*t_in)
    else:
        e_out, t_out = call(emod, *e_in), call(tmod, *t_in)
    compare_run(e_in, t_in, e_out, t_out, what, atol, rtol, grad)
    if not grad or not any(t.requires_grad for t in _flat(t_out)):
        return
    eparams = dict(emod.named_parameters())
    for name, tp in tmod.named_parameters():
        assert name in eparams, f"{what}: ember has no parameter {name}"
        ep = eparams[name]
        if tp.grad is None:
            assert ep.grad is None or not _np(ep.grad).any(), f"{what}: {name}.grad not None"
            continue
        assert ep.grad is not None, f"{what}: parameter {name} got no gradient"
        assert_same(ep.grad, tp.grad, atol * 10, rtol * 10, f"{what} grad of {name}")


def check_module(
    ctor: Callable,
    inputs: Sequence,
    *,
    dtypes: Sequence[str] = ("float32", "float64"),
    atol: float = 1e-5,
    rtol: float = 1e-4,
    grad: bool = True,
    train: bool = True,
    call: Callable | None = None,
    seed: int = 0,
) -> None:
    """Build ``ctor(torch)`` and ``ctor(ember)``, copy torch's state into ember, and compare
    forward and backward (see :func:`compare_modules`) in each of ``dtypes``."""
    if torch is None:
        pytest.skip("torch is not installed (the parity oracle)")
    for dt in dtypes:
        torch.manual_seed(seed)
        tmod = ctor(torch)
        emod = ctor(ember)
        if dt == "float64":
            tmod, emod = tmod.double(), emod.double()
        elif dt == "float32":
            tmod, emod = tmod.float(), emod.float()
        tmod.train(train)
        emod.train(train)
        copy_state(tmod, emod)
        tol = (atol, rtol) if dt != "float64" else (min(atol, 1e-7), min(rtol, 1e-6))
        compare_modules(
            tmod,
            emod,
            inputs,
            atol=tol[0],
            rtol=tol[1],
            grad=grad,
            dtype=dt,
            call=call,
            what=f"{type(emod).__name__}[{dt}]",
        )
