"""Named dimensions: errors that name the function the user called (wave 44). Spec 4.10 (see
/work/shared/spec/named_tensors.md): a name error names the op. The wave 34 sweep left composites
(functions built from several registered ops) whose name clash reported an inner op, or none:
torch 2.x has no named tensors, so the spec is the oracle for these errors, and torch (run on the
same data without names) for the values, gradients and errors of unnamed calls, which must not
change.

Covered:

1. A name clash of ``dist`` (was ``sub``), ``F.pairwise_distance`` (``sub``),
   ``F.cosine_similarity`` (``mul``), ``allclose`` (``isclose``), ``trapezoid`` and
   ``cumulative_trapezoid`` (``mul``), ``F.linear_cross_entropy`` (``cross_entropy``), and,
   found by a sweep of the other composites, ``diff`` with prepend/append (``cat``),
   ``linalg.vecdot`` (``mul``), ``linalg.cross`` (``cross``), ``linalg.solve``/``solve_ex``
   (``linalg_solve_ex``), ``linalg.lstsq`` (``matmul``), ``triangular_solve``, ``lu_solve`` and
   ``linalg.lu_solve`` (``linalg_solve_triangular``), ``take_along_dim`` (``gather``),
   ``index_put``/``index_put_`` (``__setitem__``), ``F.grid_sample`` (``grid_sampler``),
   ``F.max_unpool{1,2}d`` (``max_unpool``) and ``pow``/``**`` (the private ``pow_tensor``) now
   names the function called. The same calls without names keep torch's values, gradients and
   shape errors.
2. The norm functions' parameter check names the parameter that clashes: a bias or running
   statistic said "the weight expects".
3. ``nn.AdaptiveLogSoftmaxWithLoss``: a target whose batch name clashes with the input's raises
   the unify error prefixed with the module's name (it named nothing).
"""

from __future__ import annotations

import re

import ember
import numpy as np
import pytest
from ember import nn
from ember.nn import functional as F

torch = pytest.importorskip("torch")

NC = ("N", "C")
MC = ("M", "C")
_CLASH = "Error when attempting to broadcast dims"


def _np(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _spd(seed=0):
    a = _np(2, 3, 3, seed=seed).astype(np.float64)
    return (a @ a.transpose(0, 2, 1) + 3 * np.eye(3)).astype(np.float32)


class _Maker:
    """Builds a case's inputs for one mode: "clash" (ember, the second operand's names clash),
    "same" (ember, names that agree), "plain" (ember, unnamed) or "torch" (unnamed torch). Float
    inputs of the plain modes require grad; ``leaves`` collects them."""

    def __init__(self, mode):
        self.mode = mode
        self.lib = torch if mode == "torch" else ember
        self.leaves = []

    def __call__(self, data, names=None, clash=None, *, dtype=None, grad=True):
        data = np.asarray(data)
        if self.lib is torch:
            t = torch.tensor(data, dtype=dtype and getattr(torch, dtype))
        else:
            n = {"clash": clash or names, "same": names}.get(self.mode)
            t = ember.tensor(data, dtype=dtype and getattr(ember, dtype), names=n)
        if grad and self.mode in ("torch", "plain") and data.dtype.kind == "f":
            t.requires_grad_(True)
            self.leaves.append(t)
        return t


def _lu(mk, seed=0):
    """(LU, pivots) of an SPD batch named ('B', 'I', 'J'), the same data for both libraries
    (torch factors it once; no gradient flows through the factors here)."""
    f = torch.linalg.lu_factor(torch.tensor(_spd(seed)))
    lu, piv = f[0].numpy(), f[1].numpy()
    return mk(lu, ("B", "I", "J"), grad=False), mk(piv, ("B", "I"), dtype="int32", grad=False)


# name -> (the op name the error must carry, call(mk))
_CASES = {
    "dist": ("dist", lambda mk: mk.lib.dist(mk(_np(3, 4), NC), mk(_np(3, 4, seed=1), NC, MC))),
    "pairwise_distance": (
        "pairwise_distance",
        lambda mk: mk.lib.nn.functional.pairwise_distance(
            mk(_np(3, 4), NC), mk(_np(3, 4, seed=1), NC, MC)
        ),
    ),
    "cosine_similarity": (
        "cosine_similarity",
        lambda mk: mk.lib.nn.functional.cosine_similarity(
            mk(_np(3, 4), NC), mk(_np(3, 4, seed=1), NC, MC)
        ),
    ),
    "allclose": (
        "allclose",
        lambda mk: mk.lib.allclose(mk(_np(3, 4), NC), mk(_np(3, 4), NC, MC)),
    ),
    "Tensor.allclose": (
        "allclose",
        lambda mk: mk(_np(3, 4), NC).allclose(mk(_np(3, 4, seed=1), NC, MC)),
    ),
    "trapezoid": (
        "trapezoid",
        lambda mk: mk.lib.trapezoid(mk(_np(3, 4), NC), mk(np.cumsum(np.ones((3, 4)), 1), NC, MC)),
    ),
    "cumulative_trapezoid": (
        "cumulative_trapezoid",
        lambda mk: mk.lib.cumulative_trapezoid(
            mk(_np(3, 4), NC), mk(np.cumsum(np.ones((3, 4)), 1), NC, MC)
        ),
    ),
    "diff_prepend": (
        "diff",
        lambda mk: mk.lib.diff(mk(_np(3, 4), NC), dim=1, prepend=mk(_np(3, 2, seed=1), NC, MC)),
    ),
    "diff_append": (
        "diff",
        lambda mk: mk.lib.diff(mk(_np(3, 4), NC), dim=1, append=mk(_np(3, 2, seed=1), NC, MC)),
    ),
    "linalg.vecdot": (
        "linalg.vecdot",
        lambda mk: mk.lib.linalg.vecdot(mk(_np(3, 4), NC), mk(_np(3, 4, seed=1), NC, MC)),
    ),
    "linalg.cross": (
        "linalg.cross",
        lambda mk: mk.lib.linalg.cross(mk(_np(2, 3), NC), mk(_np(2, 3, seed=1), NC, MC)),
    ),
    "linalg.solve": (
        "linalg.solve",
        lambda mk: mk.lib.linalg.solve(
            mk(_spd(), ("B", "I", "J")), mk(_np(2, 3, seed=1), ("B", "I"), ("K", "I"))
        ),
    ),
    "linalg.solve_ex": (
        "linalg.solve_ex",
        lambda mk: mk.lib.linalg.solve_ex(
            mk(_spd(), ("B", "I", "J")), mk(_np(2, 3, seed=1), ("B", "I"), ("K", "I"))
        )[0],
    ),
    "linalg.lstsq": (
        "linalg.lstsq",
        lambda mk: mk.lib.linalg.lstsq(
            mk(_spd(), ("B", "I", "J")), mk(_np(2, 3, 1, seed=1), ("B", "I", "J"), ("K", "I", "J"))
        )[0],
    ),
    "triangular_solve": (
        "triangular_solve",
        lambda mk: mk.lib.triangular_solve(
            mk(_np(2, 3, 1, seed=1), ("B", "I", "J"), ("K", "I", "J")),
            mk(np.triu(_spd()), ("B", "I", "J")),
        )[0],
    ),
    "lu_solve": (
        "lu_solve",
        lambda mk: mk.lib.lu_solve(
            mk(_np(2, 3, 1, seed=1), ("B", "I", "J"), ("K", "I", "J")), *_lu(mk)
        ),
    ),
    "linalg.lu_solve": (
        "linalg.lu_solve",
        lambda mk: mk.lib.linalg.lu_solve(
            *_lu(mk), mk(_np(2, 3, 1, seed=1), ("B", "I", "J"), ("K", "I", "J"))
        ),
    ),
    "take_along_dim": (
        "take_along_dim",
        lambda mk: mk.lib.take_along_dim(
            mk(_np(3, 4), NC), mk([[0, 3, 1, 2]] * 3, NC, MC, dtype="int64"), 1
        ),
    ),
    "index_put": (
        "index_put",
        lambda mk: mk(_np(3, 4), NC).index_put(
            (mk([0, 2], grad=False),), mk(_np(2, 4, seed=1), (None, "C"), ("M", "K"))
        ),
    ),
    "index_put_": (
        "index_put_",
        lambda mk: mk(_np(3, 4), NC, grad=False).index_put_(
            (mk([0, 2], grad=False),), mk(_np(2, 4, seed=1), (None, "C"), ("M", "K"))
        ),
    ),
    "grid_sample": (
        "grid_sample",
        lambda mk: mk.lib.nn.functional.grid_sample(
            mk(_np(2, 1, 4, 4), ("N", "C", "H", "W")),
            mk(np.tanh(_np(2, 3, 3, 2, seed=1)), ("N", None, None, None), ("M", None, None, None)),
            align_corners=False,
        ),
    ),
    "linear_cross_entropy": (
        "linear_cross_entropy",
        lambda mk: mk.lib.nn.functional.linear_cross_entropy(
            mk(_np(3, 4), NC), mk(_np(5, 4, seed=1)), mk([0, 4, 2], ("N",), ("M",), dtype="int64")
        ),
    ),
    "pow": (
        "pow",
        lambda mk: mk.lib.pow(mk(np.abs(_np(3, 4)) + 0.5, NC), mk(_np(3, 4, seed=1), NC, MC)),
    ),
    "__pow__": (
        "pow",
        lambda mk: mk(np.abs(_np(3, 4)) + 0.5, NC) ** mk(_np(3, 4, seed=1), NC, MC),
    ),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_name_clash_names_the_function_called(case):
    op, call = _CASES[case]
    with pytest.raises(RuntimeError) as e:
        call(_Maker("clash"))
    msg = str(e.value)
    assert msg.startswith(f"{op}: "), msg
    assert _CLASH in msg or "names do not agree" in msg, msg


def _result(r):
    return r if isinstance(r, bool) else r.detach().rename(None).numpy()


@pytest.mark.parametrize("case", list(_CASES))
def test_agreeing_and_missing_names_keep_torch_values_and_gradients(case):
    call = _CASES[case][1]
    mt, mp = _Maker("torch"), _Maker("plain")
    rt, rp = call(mt), call(mp)
    rs = call(_Maker("same"))  # agreeing names: no error, the unnamed call's values
    if isinstance(rt, bool):
        assert rp is rt and rs is rt
        return
    np.testing.assert_allclose(_result(rp), rt.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_result(rs), rt.detach().numpy(), rtol=1e-4, atol=1e-5)
    if not rt.requires_grad:
        return
    up = _np(*rt.shape, seed=7) + 2.0  # a non-uniform upstream gradient
    rt.backward(torch.tensor(up))
    rp.backward(ember.tensor(up))
    for lt, lp in zip(mt.leaves, mp.leaves):
        if lt.grad is None:
            assert lp.grad is None
            continue
        np.testing.assert_allclose(lp.grad.numpy(), lt.grad.numpy(), rtol=1e-4, atol=1e-5)


# unnamed inputs that fail on shapes: torch's error, as before (the re-labelling is for names)
_SHAPE_ERRORS = {
    "dist": lambda lib, a, b: lib.dist(a, b),
    "pairwise_distance": lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b),
    "cosine_similarity": lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b),
    "allclose": lambda lib, a, b: lib.allclose(a, b),
    "trapezoid": lambda lib, a, b: lib.trapezoid(a, b[:2]),
    "linalg.vecdot": lambda lib, a, b: lib.linalg.vecdot(a, b),
    "pow": lambda lib, a, b: lib.pow(a.abs(), b),
}


@pytest.mark.parametrize("case", list(_SHAPE_ERRORS))
def test_unnamed_shape_errors_stay_torchs(case):
    call = _SHAPE_ERRORS[case]
    with pytest.raises(Exception) as et:  # its type and message are ember's oracle below
        call(torch, torch.tensor(_np(3, 4)), torch.tensor(_np(2, 4)))
    with pytest.raises(type(et.value), match=re.escape(str(et.value))):
        call(ember, ember.tensor(_np(3, 4)), ember.tensor(_np(2, 4)))


@pytest.mark.parametrize("nd", [1, 2])
def test_max_unpool_name_clash_names_the_function_called(nd):
    shape, names = (2, 3, 4, 4)[: nd + 2], ("N", "C", "H", "W")[: nd + 2]
    x, tx = ember.tensor(_np(*shape), names=names), torch.tensor(_np(*shape))
    pool = getattr(F, f"max_pool{nd}d")
    unpool = getattr(F, f"max_unpool{nd}d")
    v, i = pool(x, 2, return_indices=True)
    with pytest.raises(RuntimeError, match=re.escape(f"max_unpool{nd}d: {_CLASH}")):
        unpool(v, i.rename("N", "X", *names[2:]), 2)
    tv, ti = getattr(torch.nn.functional, f"max_pool{nd}d")(tx, 2, return_indices=True)
    ref = getattr(torch.nn.functional, f"max_unpool{nd}d")(tv, ti, 2)
    out = unpool(v, i, 2)
    assert out.names == names
    np.testing.assert_allclose(out.rename(None).numpy(), ref.numpy())


# ------------------------------------------------------------------ 2. norm parameter names
@pytest.mark.parametrize(
    "fn, param, size, agree",
    [
        (lambda x, p: F.group_norm(x, 2, None, p), "bias", 4, "C"),
        (lambda x, p: F.group_norm(x, 2, p, None), "weight", 4, "C"),
        (lambda x, p: F.layer_norm(x, (3,), None, p), "bias", 3, "L"),
        (lambda x, p: F.batch_norm(x, p, ember.ones(4)), "running_mean", 4, "C"),
        (lambda x, p: F.batch_norm(x, ember.zeros(4), p), "running_var", 4, "C"),
        (lambda x, p: F.instance_norm(x, bias=p), "bias", 4, "C"),
    ],
)
def test_norm_check_names_the_clashing_parameter(fn, param, size, agree):
    x = ember.tensor(_np(2, 4, 3), names=("N", "C", "L"))
    p = ember.tensor(np.abs(_np(size, seed=1)) + 0.5)
    with pytest.raises(RuntimeError) as e:
        fn(x, p.rename("K"))
    msg = str(e.value)
    assert f"but the {param} expects 'K' ({param} names ['K'])" in msg, msg
    assert f"or the {param} (rename/refine_names)" in msg, msg
    # agreeing names: the unnamed call's values
    good = fn(x, p.rename(agree))
    np.testing.assert_allclose(good.rename(None).numpy(), fn(x.rename(None), p).numpy(), rtol=1e-6)


# ------------------------------------------------------------------ 3. AdaptiveLogSoftmaxWithLoss
def test_adaptive_log_softmax_target_clash_names_the_module():
    ember.manual_seed(0)
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])
    x = ember.tensor(_np(3, 4), names=NC)
    with pytest.raises(RuntimeError) as e:
        m(x, ember.tensor([0, 1, 7], names=("M",)))
    msg = str(e.value)
    assert msg.startswith(f"AdaptiveLogSoftmaxWithLoss: {_CLASH} ['N'] and dims ['M']"), msg
    out = m(x, ember.tensor([0, 1, 7], names=("N",)))
    assert out.output.names == ("N",)
    ref = m(x.rename(None), ember.tensor([0, 1, 7]))
    np.testing.assert_allclose(
        out.output.detach().rename(None).numpy(), ref.output.detach().numpy(), rtol=1e-6
    )
