"""Parity regressions of the hundred-and-tenth wave: the registry's per-call cost (``public`` in
core/registry.py) cut without changing behaviour. The common call now skips work; these cases
drive the uncommon side of each shortcut, ember against torch:

* dim options: one int dim given positionally no longer runs the dim resolver, so a dim given
  as a name, a 0-d integer tensor, a float, a bool, a list, a keyword (``dim=``) or numpy's
  ``axis=`` / ``keepdims=`` must still take it (values or torch's error);
* inputs given by keyword (``input=``, ``other=``) and options after the inputs (no slicing
  when a call passes exactly the inputs);
* the operand type test now looks for a plain Tensor first: Python and numpy scalars in either
  place, wide ints, bools, subclasses and foreign operands keep their outcomes;
* a view's base is read inline: views of views, of detached and of ``.data`` tensors keep
  torch's ``_base`` and version sharing;
* a node that saves its one output builds its record without ``SavedOutput.__init__``: the
  in-place check on that output (and on a view's) still raises torch's error, and a
  two-output call that saves its result keeps the per-output check.

Left (torch mismatches seen while writing these, older than this wave): ``x.sum("a")`` on an
unnamed tensor raises RuntimeError (torch: TypeError from its parser); ``x.argmax(tensor([1]))``
is taken (torch: TypeError); ``flatten(x, start_dim=1.0)`` names the position in its TypeError
(torch does not for a keyword); ``add(x)`` / ``sigmoid()`` missing-argument texts differ from
torch's parser's; a view made under no_grad of a leaf that requires grad reports
``requires_grad=True`` (torch 2.13: False; a deliberate choice in the registry's view code).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly


def _summary(r):
    if isinstance(r, (tuple, list)):
        return type(r).__name__, [_summary(x) for x in r]
    if hasattr(r, "detach") and hasattr(r, "shape"):
        a = r.detach().numpy()
        return "T", tuple(r.shape), str(r.dtype).split(".")[-1], a.tolist()
    return r


def _outcome(fn, lib):
    err, r = run_quietly(fn, lib)
    if err is not None:
        return type(err).__name__, str(err)
    return "ok", _summary(r)


def _close(a, b) -> bool:
    # float results to float32 rounding (exp's last ulp differs between numpy and torch)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_close, a, b))
    return a == b


def _same(fn):
    want = _outcome(fn, torch)
    got = _outcome(fn, ember)
    assert _close(got, want), (got, want)
    return want


def _x(m, rg=False):
    return m.arange(24.0).reshape(2, 3, 4).requires_grad_(rg)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.sum(1),
        lambda m, x: x.sum(-1, True),
        lambda m, x: x.sum(dim=1),
        lambda m, x: x.sum(m.tensor(1)),
        lambda m, x: x.sum(1.0),
        lambda m, x: x.sum(True),
        lambda m, x: x.sum([0, 2]),
        lambda m, x: x.sum((0, -1), keepdim=True),
        lambda m, x: x.sum(3),
        lambda m, x: x.sum(axis=1),
        lambda m, x: x.sum(1, keepdims=True),
        lambda m, x: x.mean(0),
        lambda m, x: x.mean(m.tensor(2)),
        lambda m, x: x.argmax(1),
        lambda m, x: x.argmax(1.5),
        lambda m, x: x.argmax(dim=2, keepdim=True),
        lambda m, x: x.unsqueeze(0),
        lambda m, x: x.unsqueeze(-1),
        lambda m, x: x.unsqueeze(4),
        lambda m, x: x.unsqueeze(m.tensor(1)),
        lambda m, x: x.unsqueeze(1.0),
        lambda m, x: x.unsqueeze(dim=1),
        lambda m, x: x.squeeze(0),
        lambda m, x: x.squeeze(m.tensor(0)),
        lambda m, x: x.squeeze((0, 1)),
        lambda m, x: x.transpose(0, 2),
        lambda m, x: x.transpose(0, m.tensor(2)),
        lambda m, x: x.transpose(0.0, 1),
        lambda m, x: x.transpose(dim0=1, dim1=0),
        lambda m, x: x.softmax(1),
        lambda m, x: x.softmax(m.tensor(1)),
        lambda m, x: x.cumsum(2),
        lambda m, x: x.cumsum(2.0),
        lambda m, x: m.flatten(x, 1),
        lambda m, x: x.movedim(0, 2),
        lambda m, x: x.movedim(0, m.tensor(2)),
    ],
)
def test_dim_options(call):
    _same(lambda m: call(m, _x(m)))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.add(input=x, other=x),
        lambda m, x: m.add(x, other=2),
        lambda m, x: m.add(x, 2, alpha=3),
        lambda m, x: m.sigmoid(input=x),
        lambda m, x: m.mul(x, other=x),
        lambda m, x: m.sum(input=x, dim=0),
    ],
)
def test_inputs_by_keyword(call):
    _same(lambda m: call(m, _x(m)))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x + 2,
        lambda m, x: 2 + x,
        lambda m, x: x * 2.5,
        lambda m, x: 2.5 * x,
        lambda m, x: x - True,
        lambda m, x: x.int() + 2**40,
        lambda m, x: x.int() * 2**70,
        lambda m, x: x + 2**70,
        lambda m, x: x + np.float64(1.5),
        lambda m, x: x.float() * np.float64(1.5),
        lambda m, x: x + np.int64(3),
        lambda m, x: x + 1j,
        lambda m, x: m.add(2, x),
        lambda m, x: m.add(2, 3),
        lambda m, x: m.mul(2.0, 3),
        lambda m, x: x + "a",
        lambda m, x: x + None,
        lambda m, x: x + [1],
        lambda m, x: m.add(x, "a"),
        lambda m, x: m.sigmoid(2.0),
        lambda m, x: m.nn.Parameter(x) * 2,
        lambda m, x: x.float().half() * 0.1,
        lambda m, x: m.maximum(x, 2),
        lambda m, x: m.cat([x, x], 1),
        lambda m, x: m.cat([x, 2], 1),
    ],
)
def test_operands(call):
    _same(lambda m: call(m, _x(m)))


def _view_chain(m):
    x = _x(m)
    v = x.t() if x.dim() == 2 else x.transpose(0, 1)
    w = v.unsqueeze(0).squeeze(0)
    d = x.detach().unsqueeze(0)
    e = x.data.unsqueeze(0)
    x.add_(1)
    return (
        v._base is x,
        w._base is x,
        d._base is x,
        e._base is x,
        d._base is None,
        w._version == x._version,
        d._version == x._version,
        e._version == x._version,
        w.sum().item(),
    )


def test_view_bases():
    _same(_view_chain)


def test_view_bases_under_no_grad():
    def f(m):
        x = _x(m, rg=True)
        with m.no_grad():
            v = x.unsqueeze(0)
            w = v.transpose(0, 1)
        return v._base is x, w._base is x, w.is_leaf, v.sum().item()

    _same(f)


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.sigmoid(),
        lambda x: x.exp(),
        lambda x: x.tanh(),
        lambda x: x.sqrt(),
        lambda x: x.relu(),
    ],
)
def test_saved_output_checked(make):
    # the output saved by its node, changed in place: backward refuses, as torch's does
    def f(m):
        x = _x(m, rg=True)
        y = make(x)
        s = y.sum()
        y.add_(1)
        s.backward()
        return x.grad

    _same(f)


@pytest.mark.parametrize("change", [False, True])
def test_saved_output_through_view(change):
    def f(m):
        x = _x(m, rg=True)
        y = x.exp()
        z = y * 2
        (z.sum() + y.sum()).backward(retain_graph=True)
        if change:
            y.unsqueeze(0).mul_(2)
        g = m.autograd.grad(y.sum() + (y * y).sum(), x)
        return x.grad, g, y._version

    _same(f)


def test_saved_output_versions():
    def f(m):
        x = _x(m, rg=True)
        y = x.sigmoid()
        v0 = y._version
        y.mul_(1)
        return v0, y._version, x._version

    _same(f)


@pytest.mark.parametrize("change", [None, 0, 1])
def test_two_outputs_saving_result(change):
    # a (values, indices) call: the per-output record keeps both outputs' checks
    def f(m):
        x = _x(m, rg=True)
        vals, idx = x.max(1)
        y = vals.exp()
        s = y.sum()
        if change == 0:
            y.add_(1)
        elif change == 1:
            vals.add_(1)
        s.backward()
        return x.grad, idx

    _same(f)


def test_saved_output_of_tuple_kernel():
    # a kernel returning a tuple of one tensor still records its one output
    def f(m):
        x = _x(m, rg=True)
        out = x.unbind(1)
        s = sum(o.exp().sum() for o in out)
        s.backward()
        return x.grad, len(out)

    _same(f)
