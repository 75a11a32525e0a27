"""Parity regressions found by the seventy-third wave, which built the differentiable ops outside
the products of waves 60/64 (reductions, scans, softmax, norms, pointwise unary and binary ops,
indexing, normalization, losses, activations, pooling, embedding) with only some inputs requiring
grad, changed each input and the output in place, and compared the version error (or the
gradients) with torch's. False errors torch does not raise: the selections along a dim
(``max``/``min``/``median``/``nanmedian``/``mode``/``kthvalue``/``topk``/``sort``) kept their
input and values where torch keeps only the index output (so an in-place change of the input or
of the values was refused; now a change of the indices is, as torch's), ``hypot``/``fmod``/
``remainder``/``copysign`` kept an operand no computed gradient reads, ``erfinv`` kept its result
(torch keeps the input: changing the result is allowed, changing the input is not),
``scatter_add``/``index_add`` kept the index when only ``input`` needed a gradient, and
``F.cosine_similarity`` kept an input that needs no gradient (torch multiplies the normalized
inputs). A missed error: ``x[idx]`` scattered its gradient through an index tensor changed in
place after the forward (torch refuses it, and a second backward, as it saves the index)."""

from __future__ import annotations

import itertools

import ember
import ember.nn.functional as EF
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import same_grads_or_error as _both
from harness import saved_flags
from harness import upstream as _up

TF = torch.nn.functional
LIBS = [torch, ember]


def _F(T):
    return TF if T is torch else EF


def _r(T, spec, seed, rg=False):
    if spec[0] == "i":  # ("i", shape, high): an index tensor
        return T.tensor(np.random.RandomState(seed).randint(0, spec[2], size=spec[1]))
    a = np.random.RandomState(seed).rand(*spec) + 0.5  # float64, away from zero
    if seed % 2:
        a = -a  # mixed signs between operands (copysign, fmod, remainder)
    return T.tensor(a, requires_grad=rg)


S = (3, 4)
_IDX = ("i", (3, 2), 4)
# name -> (input specs, fn, number of outputs to change in place)
_OPS = {
    "max_dim": ([S], lambda T, a: a.max(1), 2),
    "min_dim": ([S], lambda T, a: a.min(1, keepdim=True), 2),
    "median_dim": ([S], lambda T, a: a.median(1), 2),
    "nanmedian_dim": ([S], lambda T, a: a.nanmedian(0), 2),
    "mode_dim": ([S], lambda T, a: a.mode(1), 2),
    "kthvalue": ([S], lambda T, a: a.kthvalue(2, 1), 2),
    "kthvalue_keepdim": ([S], lambda T, a: a.kthvalue(2, 0, keepdim=True), 2),
    "topk": ([S], lambda T, a: a.topk(2, 1), 2),
    "sort": ([S], lambda T, a: a.sort(1, descending=True), 2),
    "max_all": ([S], lambda T, a: a.max(), 1),
    "median_all": ([S], lambda T, a: a.median(), 1),
    "hypot": ([S, S], lambda T, a, b: T.hypot(a, b), 1),
    "fmod": ([S, S], lambda T, a, b: T.fmod(a, b), 1),
    "remainder": ([S, S], lambda T, a, b: T.remainder(a, b), 1),
    "copysign": ([S, S], lambda T, a, b: T.copysign(a, b), 1),
    "erfinv": ([S], lambda T, a: T.erfinv(a * 0.5), 1),
    "scatter_add": ([S, _IDX, (3, 2)], lambda T, a, i, s: a.scatter_add(1, i, s), 1),
    "index_add": ([S, ("i", (2,), 3), (2, 4)], lambda T, a, i, s: a.index_add(0, i, s), 1),
    "cosine_similarity": ([S, S], lambda T, a, b: _F(T).cosine_similarity(a, b), 1),
    "getitem": ([S, ("i", (2,), 3)], lambda T, a, i: a[i], 1),
    "getitem_tuple": ([S, ("i", (2,), 4)], lambda T, a, i: a[1:, i], 1),
}


def _cases():
    for name, (specs, _, n_out) in _OPS.items():
        diff = [s[0] != "i" for s in specs]
        for rgs in itertools.product([False, True], repeat=len(specs)):
            if any(rgs) and all(d or not r for d, r in zip(diff, rgs)):
                for ch in range(len(specs) + n_out):
                    yield name, rgs, ch


def _run(T, name, rgs, changed):
    specs, fn, _ = _OPS[name]
    ts = [_r(T, s, i, r) for i, (s, r) in enumerate(zip(specs, rgs))]
    out = fn(T, *ts)
    outs = list(out) if isinstance(out, tuple) else [out]
    y = outs[0]
    with T.no_grad():
        t = (ts + outs)[changed]
        if t.is_floating_point():
            t.mul_(2)  # an optimizer-style update before backward
        else:
            t.copy_(t.flip(0))  # indices still in range, at other positions
    y.backward(_up(T, y))
    return [t.grad for t in ts]


@pytest.mark.parametrize(("name", "rgs", "changed"), list(_cases()))
def test_in_place_change_before_backward(name, rgs, changed):
    # torch raising the version error or not, and the gradients when neither raises
    _both(lambda T: _run(T, name, rgs, changed))


@pytest.mark.parametrize("name", ["max_dim", "sort", "topk", "getitem"])
def test_changed_indices_refused(name):
    # what torch keeps of a selection (its indices; x[idx]'s index) must not change
    specs = _OPS[name][0]
    changed = 2 if len(specs) == 1 else 1
    msg = _both(lambda T: _run(T, name, (True,) * 1 + (False,) * (len(specs) - 1), changed))
    assert msg.startswith("one of the variables needed for gradient computation")


def test_index_tensor_second_backward_refused():
    def f(T):
        x = _r(T, S, 0, rg=True)
        y = x[T.tensor([0, 2])]
        y.backward(_up(T, y))
        y.backward(_up(T, y))
        return [x.grad]

    assert _both(f).startswith("Trying to backward through the graph a second time")


_SAVED = ["max_dim", "median_dim", "mode_dim", "kthvalue", "topk", "sort", "max_all", "hypot"]
_SAVED += ["fmod", "remainder", "copysign", "erfinv", "scatter_add", "index_add"]


@pytest.mark.parametrize("name", _SAVED)
def test_saved_attributes(name):
    specs, fn, _ = _OPS[name]
    diff = [s[0] != "i" for s in specs]
    for rgs in itertools.product([False, True], repeat=len(specs)):
        if not any(rgs) or not all(d or not r for d, r in zip(diff, rgs)):
            continue
        ys = []
        for T in LIBS:
            out = fn(T, *(_r(T, s, i, r) for i, (s, r) in enumerate(zip(specs, rgs))))
            ys.append(out[0] if isinstance(out, tuple) else out)
        want = saved_flags(ys[0].grad_fn)
        assert want
        assert ys[1].grad_fn.name() == ys[0].grad_fn.name()
        got = {a: getattr(ys[1].grad_fn, a) is None for a in want}
        assert got == want, rgs
        if "_saved_indices" in want:  # the index output itself
            np.testing.assert_array_equal(
                ys[1].grad_fn._saved_indices.numpy(), ys[0].grad_fn._saved_indices.numpy()
            )
