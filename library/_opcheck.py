"""``opcheck``: eager checks of a custom op (schema/mutation, fake metadata, autograd
registration, backward against finite differences)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core import dtype as _dt
from ..core.tensor import Tensor
from ._operators import _FAKE_CTX, FakeImplCtx, OpOverload, OpOverloadPacket, _OpDef, _tensors_in


# ----------------------------------------------------------------------------- opcheck
class OpCheckError(Exception):
    """A check of :func:`opcheck` failed (the cause is chained)."""


class MetadataMismatchError(Exception):
    """The fake implementation's output metadata differ from the real output's."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __repr__(self) -> str:
        return f"MetadataMismatchError(reason={self.reason!r})"


_ALL_TESTS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_static",
    "test_aot_dispatch_dynamic",
)
DEFAULT_TEST_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_dynamic",
)


def _clone(v):
    if isinstance(v, Tensor):
        c = v.detach().clone()
        return c.requires_grad_() if v.requires_grad else c
    if isinstance(v, (list, tuple)):
        return type(v)(_clone(x) for x in v)
    if isinstance(v, dict):
        return {k: _clone(x) for k, x in v.items()}
    return v


def _host(t: Tensor) -> np.ndarray:
    return t.detach().cpu()._data  # (numpy() refuses bfloat16)


def _check_schema(op: OpOverload, args, kwargs, atol, rtol) -> None:
    """Inputs not declared mutable must come back unchanged."""
    args, kwargs = _clone(args), _clone(kwargs)
    if op._opdef is not None:
        values = op._opdef._bind(args, kwargs)
        named = [(a.name, v, a.is_write) for a, v in zip(op._opdef._schema.arguments, values)]
    else:  # ember's own functions: the trailing-underscore ones write their first input
        inplace = op._opname.endswith("_")
        named = [(f"{i}", v, inplace and i == 0) for i, v in enumerate(args)]
        named += [(k, v, k == "out") for k, v in kwargs.items()]
    before = [[_host(t).copy() for t in _tensors_in(v)] for _, v, _ in named]
    from ..autograd.grad_mode import no_grad

    with no_grad():
        op(*args, **kwargs)
    for (name, v, write), old in zip(named, before):
        if write:
            continue
        for t, o in zip(_tensors_in(v), old):
            if not np.array_equal(_host(t), o, equal_nan=o.dtype.kind in "fc"):
                raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")


def _check_autograd_registration(op: OpOverload, args, kwargs, atol, rtol) -> None:
    """When an input requires grad, every floating output must be part of the graph."""
    args, kwargs = _clone(args), _clone(kwargs)
    ins = [t for v in (*args, *kwargs.values()) for t in _tensors_in(v)]
    if not any(t.requires_grad for t in ins):
        return
    out = op(*args, **kwargs)
    for t in _tensors_in(out):
        if t.is_floating_point() and not t.requires_grad:
            raise RuntimeError(
                f"{op}: an input requires grad but an output does not: the op is not "
                "differentiable. Please use register_autograd to add a formula."
            )


def _require_fake(d: _OpDef) -> None:
    if d._fake is None:
        raise RuntimeError(
            f"There was no fake impl registered for {d!r}. This is necessary for "
            "ember.compile/export/fx tracing to work. Please use "
            f"`{d._fn_name}.register_fake` to add an fake impl."
        )


def _check_fake(op: OpOverload, args, kwargs, atol, rtol) -> None:
    """The fake implementation's outputs have the real outputs' shapes, dtypes and devices."""
    d = op._opdef
    if d is None:
        return  # ember's own functions have no separate fake implementation
    _require_fake(d)
    from ..autograd.grad_mode import no_grad

    args, kwargs = _clone(args), _clone(kwargs)
    with no_grad():
        real = op(*args, **kwargs)
        fake_args, fake_kwargs = d._split(d._bind(args, kwargs))
        _FAKE_CTX.append(FakeImplCtx())
        try:
            fake = d._fake(*fake_args, **fake_kwargs)
        finally:
            _FAKE_CTX.pop()
    reals = list(real) if isinstance(real, (list, tuple)) else [real]
    fakes = list(fake) if isinstance(fake, (list, tuple)) else [fake]
    head = (
        f"When comparing the output of {op} on FakeTensor and concrete Tensors, found "
        "mismatched tensor metadata: "
    )
    if len(reals) != len(fakes):
        raise MetadataMismatchError(
            f"{head}the real output has {len(reals)} values, the fake one {len(fakes)}"
        )
    for r, f in zip(reals, fakes):
        if not isinstance(r, Tensor) or not isinstance(f, Tensor):
            if isinstance(r, Tensor) or isinstance(f, Tensor):
                raise MetadataMismatchError(
                    f"{head}types {type(r).__name__} and {type(f).__name__} are not equal!"
                )
            continue
        for what, a, b in (
            ("Shapes", r.shape, f.shape),
            ("Dtypes", r.dtype, f.dtype),
            ("Devices", r.device, f.device),
        ):
            if a != b:
                raise MetadataMismatchError(f"{head}{what} {a!r:s} and {b!r:s} are not equal!")


def _check_backward(op: OpOverload, args, kwargs, atol, rtol) -> None:
    """Backward runs; with float64 inputs, gradients match finite differences (gradcheck).
    Like torch's (which traces the op with fake tensors), it needs a fake implementation."""
    from ..autograd import grad
    from ..autograd.gradcheck import gradcheck

    if op._opdef is not None:
        _require_fake(op._opdef)
    args, kwargs = _clone(args), _clone(kwargs)
    diff = [t for v in (*args, *kwargs.values()) for t in _tensors_in(v) if t.requires_grad]
    if not diff:
        return
    out = op(*args, **kwargs)
    outs = [t for t in _tensors_in(out) if t.requires_grad]
    if not outs:
        return
    grad(outs, diff, [t.detach() * 0 + 1 for t in outs], allow_unused=True)
    if not all(t.dtype == _dt.float64 for t in diff):
        return

    def swap(v, new: dict):
        if isinstance(v, Tensor):
            return new.get(id(v), v)
        if isinstance(v, (list, tuple)):
            return type(v)(swap(x, new) for x in v)
        return v

    def fn(*ts):
        new = {id(t): n for t, n in zip(diff, ts)}
        res = op(*swap(args, new), **{k: swap(v, new) for k, v in kwargs.items()})
        return tuple(t for t in _tensors_in(res) if t.is_floating_point())

    tol = {} if atol is None else {"atol": atol, "rtol": rtol}
    gradcheck(fn, tuple(t.detach().requires_grad_() for t in diff), **tol)


_CHECKS = {
    "test_schema": _check_schema,
    "test_autograd_registration": _check_autograd_registration,
    "test_faketensor": _check_fake,
    "test_aot_dispatch_static": _check_backward,
    "test_aot_dispatch_dynamic": _check_backward,
}


def opcheck(
    op,
    args: tuple,
    kwargs: dict | None = None,
    *,
    test_utils: str | Sequence[str] = DEFAULT_TEST_UTILS,
    raise_exception: bool = True,
    atol=None,
    rtol=None,
) -> dict:
    """Check a custom op on sample inputs; returns ``{test name: "SUCCESS" or the exception}``.

    ember's checks, all eager: ``test_schema`` (inputs not declared mutated stay unchanged),
    ``test_autograd_registration`` (outputs join the graph when inputs require grad),
    ``test_faketensor`` (the fake implementation's outputs have the real shapes, dtypes and
    devices) and ``test_aot_dispatch_*`` (backward runs, and with float64 inputs requiring grad
    the gradients match finite differences: ``ember.autograd.gradcheck`` with ``atol``/``rtol``).
    """
    if isinstance(op, _OpDef):
        op = op._opoverload
    elif isinstance(op, OpOverloadPacket):
        op = op.default
    if not isinstance(op, OpOverload):
        raise ValueError(  # noqa: TRY004 - torch's type
            "opcheck(op, ...): op must be instance of ember._ops.OpOverload, e.g. "
            f"ember.ops.aten.sin.default, got {type(op)}"
        )
    if (atol is None) != (rtol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    tests = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    if not set(tests) <= set(_ALL_TESTS):
        raise ValueError(
            f"opcheck(op, ..., test_utils={tests}), expected test_utils to be subset of "
            f"{_ALL_TESTS} but it was not"
        )
    kwargs = {} if kwargs is None else kwargs
    results = {}
    for name in tests:
        try:
            _CHECKS[name](op, tuple(args), kwargs, atol, rtol)
        except Exception as e:
            if raise_exception:
                raise OpCheckError(
                    f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)"
                ) from e
            results[name] = e
        else:
            results[name] = "SUCCESS"
    return results
