"""Parity regressions found by the seventy-seventh wave, a seeded random fuzz of named dimensions
through small programs (1-6 ops on float64 tensors of 0-4 dims with random names, some None, some
missing): pointwise and broadcasting binary ops, reductions by name or index with keepdim, the
shape ops (transpose, permute, movedim, align_to/align_as, rename, refine_names, flatten,
unflatten, squeeze/unsqueeze, view/reshape, expand), matmul/mm/mv/dot/bmm/einsum, cat/stack,
indexing, select, narrow/split/chunk/unbind, index_select, topk/sort, where, masked_fill, softmax,
Linear/LayerNorm/activations over named inputs, in-place ops and out=. Names were checked against
a model written from the names spec, values and gradients (non-uniform upstream) against torch on
the unnamed data, gradient names against the leaves' names, and the same programs unnamed.

It found matmul's (and cdist's) batch-name check matching the extra leading batch dims of the
longer operand against nothing (a 4-d operand times a matrix that reused one of its batch names
as a matrix dim was refused as misaligned), and reporting a misaligned name before a pair of
names that do not match; a dim name that is not found not naming the op the user called (spec
4.10); the gradient of max/min/median/nanmedian/mode along a dim spreading a NaN or inf upstream
gradient over the unselected elements (a mask product; torch scatters into zeros); mode of a
row whose most frequent value is NaN returning index -1 (its backward then failed); and
elu/selu/celu giving a NaN input a NaN gradient (torch's branch test x <= 0 sends it to the
linear branch). torch's own bugs it hit (median along a dim of an expanded input reads garbage;
batch_norm's backward on a movedim'd input with unit dims is wrong) are not copied."""

from __future__ import annotations

import re

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _a(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _pair(a, names=None):
    e = ember.tensor(a, dtype=ember.float64, names=names).requires_grad_(True)
    t = torch.tensor(a, dtype=torch.float64).requires_grad_(True)
    return e, t


def _check_grads(ye, yt, leaves, seed=9):
    up = _a(*yt.shape, seed=seed) + 1.5  # non-uniform upstream gradient
    ye.backward(ember.tensor(up).rename(*ye.names))
    yt.backward(torch.tensor(up))
    for e, t in leaves:
        np.testing.assert_allclose(e.grad.rename(None).numpy(), t.grad.numpy(), rtol=1e-12)
        assert e.grad.names == e.names


# ------------------------------------------------------------- matmul's batch names (spec 3)
def test_matmul_extra_batch_dims_are_not_matched():
    # only the batch positions both operands have are unified: y has none, so its 'H' (a
    # matrix dim, contracted away) may share a name with x's batch dim
    xe, xt = _pair(_a(2, 3, 2, 4), ("N", "H", None, "L"))
    ye_, yt_ = _pair(_a(4, 5, seed=1), ("H", "W"))
    oe, ot = xe.matmul(ye_), xt.matmul(yt_)
    assert oe.names == ("N", "H", None, "W")
    np.testing.assert_allclose(oe.rename(None).detach().numpy(), ot.detach().numpy())
    _check_grads(oe, ot, [(xe, xt), (ye_, yt_)])


def test_matmul_extra_batch_dims_then_duplicate_output_names():
    # the batch dims unify (None with 'D'); the output repeats 'C': the duplicate-names error
    x = ember.tensor(_a(2, 3, 2, 4), names=("C", None, "N", None))
    y = ember.tensor(_a(3, 4, 5), names=("D", "W", "C"))
    with pytest.raises(RuntimeError, match=re.escape("duplicate names ['C', 'D', 'N', 'C']")):
        x.matmul(y)


def test_matmul_batch_names_that_do_not_match_are_reported_first():
    x = ember.tensor(_a(2, 3, 2, 4), names=("W", None, "L", "D"))
    y = ember.tensor(_a(2, 3, 4, 5), names=("D", "W", "H", "L"))
    with pytest.raises(
        RuntimeError,
        match=re.escape("matmul: Error when attempting to broadcast dims ['W', None, 'L', 'D'] "
                        "and dims ['D', 'W', 'H', 'L']: dim 'W' and dim 'D' are at the same "
                        "position from the right but do not match."),
    ):  # fmt: skip
        x.matmul(y)


@pytest.mark.parametrize(
    ("xn", "yn"),
    [
        (("A", None, None), (None, "X", "A")),  # was: a duplicate-names error
        ((None, None, "A"), ("A", "W", None)),  # was: accepted, giving ('A', None, None)
    ],
)
def test_matmul_batch_name_matched_with_none_found_in_matrix_dims(xn, yn):
    # 'A' is matched with the other's unnamed batch dim while that tensor has 'A' elsewhere
    x = ember.tensor(_a(3, 2, 4), names=xn)
    y = ember.tensor(_a(3, 4, 5), names=yn)
    with pytest.raises(RuntimeError, match=r"matmul: Misaligned dims .* dim 'A' appears in a "):
        x.matmul(y)


# ------------------------------------------------------------- spec 4.10: the op is named
@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("sum", lambda x: x.sum("H")),
        ("sum", lambda x: x.sum(["N", "H"], keepdim=True)),
        ("mean", lambda x: ember.mean(x, "H")),
        ("std", lambda x: x.std("H")),
        ("logsumexp", lambda x: x.logsumexp("H")),
        ("amax", lambda x: x.amax("H")),
        ("max", lambda x: x.max("H")),
        ("cumsum", lambda x: x.cumsum("H")),
        ("softmax", lambda x: x.softmax("H")),
        ("log_softmax", lambda x: ember.nn.functional.log_softmax(x, dim="H")),
        ("select", lambda x: x.select("H", 0)),
        ("transpose", lambda x: x.transpose("H", "N")),
        ("squeeze", lambda x: x.squeeze("H")),
    ],
)
def test_dim_name_not_found_names_the_op(op, call):
    x = ember.tensor(_a(2, 3), names=("N", "C"))
    with pytest.raises(
        RuntimeError, match=re.escape(f"{op}: Name 'H' not found in Tensor['N', 'C'].")
    ):
        call(x)


def test_none_dim_lookup_names_the_op():
    x = ember.tensor(_a(2, 3), names=("N", "C"))
    with pytest.raises(RuntimeError, match="^sum: Please look up dimensions by name"):
        x.sum(["N", None])


# ------------------------------------------------------------- value-selecting reductions
@pytest.mark.parametrize("fn", ["max", "min", "median", "nanmedian", "mode"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_selecting_reduction_grad_is_scattered(fn, keepdim):
    # torch scatters the upstream gradient into zeros: a NaN/inf there stays at the selected
    # element (a mask product made every element of the row NaN)
    xe, xt = _pair(_a(3, 4), ("N", "C"))
    ve = getattr(xe, fn)("C", keepdim=keepdim)[0]
    vt = getattr(xt, fn)(1, keepdim=keepdim)[0]
    up = _a(*vt.shape, seed=3)
    up.flat[0], up.flat[1] = np.nan, np.inf
    ve.backward(ember.tensor(up))
    vt.backward(torch.tensor(up))
    np.testing.assert_array_equal(xe.grad.rename(None).numpy(), xt.grad.numpy())
    assert xe.grad.names == ("N", "C")


def test_mode_of_nan_rows():
    nan = np.nan
    a = np.array([[nan, nan, 1.0], [nan, 1.0, 1.0], [2.0, 1.0, 2.0]])
    xe, xt = _pair(a, ("N", "C"))
    re_, rt = xe.mode("C"), xt.mode(1)
    np.testing.assert_array_equal(
        re_.values.detach().rename(None).numpy(), rt.values.detach().numpy()
    )
    np.testing.assert_array_equal(re_.indices.rename(None).numpy(), rt.indices.numpy())
    assert re_.values.names == re_.indices.names == ("N",)
    _check_grads(re_.values, rt.values, [(xe, xt)])
    # all NaN: the first index, as torch
    e = ember.tensor([nan, nan]).mode(0)
    t = torch.tensor([nan, nan]).mode(0)
    assert e.indices.item() == t.indices.item() == 0


@pytest.mark.parametrize("fn", ["max", "min", "median", "nanmedian", "mode"])
def test_selecting_reduction_gradcheck(fn):
    x = ember.tensor(_a(3, 4), dtype=ember.float64, names=("N", "C")).requires_grad_(True)
    assert ember.autograd.gradcheck(lambda t: getattr(t, fn)("C")[0], (x,))
    assert ember.autograd.gradgradcheck(lambda t: getattr(t, fn)(1, keepdim=True)[0], (x,))


@pytest.mark.parametrize(("fn", "kw"), [("elu", {}), ("elu", {"alpha": 2.0}), ("selu", {}),
                                        ("celu", {"alpha": 0.7})])  # fmt: skip
@pytest.mark.parametrize("create_graph", [False, True])
def test_elu_family_grad_at_nan_input(fn, kw, create_graph):
    # torch's branch test is x <= 0: a NaN input gets the linear branch's gradient (ember's
    # exp(x) branch made it NaN, and a later maximum/where could not hide it)
    a = np.array([np.nan, -1.0, 2.0, -0.5])
    up = np.array([1.0, 2.0, 3.0, 4.0])
    grads = []
    for m in (ember, torch):
        x = m.tensor(a, dtype=m.float64).requires_grad_(True)
        (g,) = m.autograd.grad(
            getattr(m.nn.functional, fn)(x, **kw),
            x,
            m.tensor(up, dtype=m.float64),
            create_graph=create_graph,
        )
        grads.append(g.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-7)  # torch's celu rounds 1/alpha


@pytest.mark.parametrize(("fn", "kw"), [("elu", {"alpha": 2.0}), ("selu", {}), ("celu", {})])
def test_elu_family_gradgradcheck(fn, kw):
    # the create_graph derivative now selects its exponential branch with a where
    x = ember.tensor(_a(3, 4) + 0.05, dtype=ember.float64).requires_grad_(True)
    f = getattr(ember.nn.functional, fn)
    assert ember.autograd.gradgradcheck(lambda t: f(t, **kw), (x,))
