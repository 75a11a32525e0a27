"""Named-tensor conformance fixes (names spec /work/shared/spec/named_tensors.md): products that
would repeat a name, einsum's ellipsis names, name checks of ``__setitem__`` and boolean-mask
indexing, names through EmbeddingBag and the RNN cells. Each test checks the spec's outcome."""

from __future__ import annotations

import re

import ember
import numpy as np
import pytest
from ember import nn
from ember.nn import functional as F


def _t(*shape, names=None, seed=0, grad=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.tensor(a, names=names, requires_grad=grad)


def _mask(*shape, names=None):
    return ember.tensor(np.random.default_rng(1).standard_normal(shape) > 0, names=names)


def _raises(text):
    return pytest.raises(RuntimeError, match=re.escape(text))


# ---------------------------------------------------------------------- duplicate names (line 11)
_DUP = "would produce output tensor with duplicate names ['N', 'N']"


@pytest.mark.parametrize(
    "who, call",
    [
        ("outer: ", lambda a, b: ember.outer(a, b)),
        ("outer: ", lambda a, b: ember.ger(a, b)),
        ("outer: ", lambda a, b: a.outer(b)),
        ("einsum(): ", lambda a, b: ember.einsum("i,j->ij", a, b)),
        ("einsum(): ", lambda a, b: ember.einsum("i,j,k->ij", a, b, _t(1))),
    ],
)
def test_outer_products_refuse_duplicate_names(who, call):
    a, b = _t(2, names=("N",)), _t(4, names=("N",), seed=1)
    with _raises(who) as e:
        call(a, b)
    assert _DUP in str(e.value)
    assert "rename" in str(e.value)


def test_inner_and_tensordot_refuse_duplicate_names():
    with _raises("inner: Contracting Tensor['N', 'A'] with Tensor['N', 'B'] " + _DUP):
        ember.inner(_t(2, 3, names=("N", "A")), _t(4, 3, names=("N", "B")))
    with _raises("tensordot: Contracting Tensor['N', 'H'] with Tensor['H', 'N'] " + _DUP):
        ember.tensordot(_t(2, 3, names=("N", "H")), _t(3, 4, names=("H", "N")), dims=([1], [0]))


def test_products_without_repeated_names_still_name_their_result():
    a, b = _t(2, names=("N",)), _t(4, names=("M",))
    assert ember.outer(a, b).names == ("N", "M")
    assert ember.outer(a, _t(4)).names == ("N", None)
    assert ember.einsum("i,j->ij", a, b).names == ("N", "M")
    x, y = _t(2, 3, names=("N", "A")), _t(4, 3, names=("M", "B"))
    assert ember.inner(x, y).names == ("N", "M")
    assert ember.tensordot(x, y.t(), dims=1).names == ("N", "M")
    # an intermediate product may repeat a name that a later contraction removes
    r = ember.einsum("i,j,ij->", a, _t(2, names=("N",)), _t(2, 2))
    assert r.names == ()


def test_named_einsum_duplicate_from_the_ellipsis():
    x = _t(7, 2, 3, names=("X", "N", "C"))
    w = _t(3, 4, names=("C", "X"))
    with _raises("einsum(): ") as e:
        ember.einsum("... C, C X -> ... X", x, w)
    assert "would produce output tensor with duplicate names ['X', 'N', 'X']" in str(e.value)


# ---------------------------------------------------------------------- einsum ellipsis (4.4)
def test_named_einsum_keeps_the_ellipsis_names():
    x = _t(7, 2, 3, names=("X", "N", "C"))
    w = _t(3, 4, names=("C", "O"), seed=1)
    r = ember.einsum("... C, C O -> ... O", x, w)
    assert r.names == ("X", "N", "O")
    assert r.names == ember.einsum("...j,jk->...k", x, w).names
    np.testing.assert_allclose(r.rename(None).numpy(), x.numpy() @ w.numpy(), atol=1e-6)
    assert ember.einsum("... C, C O -> O ...", x, w).names == ("O", "X", "N")
    assert ember.einsum("... C, C O", x, w).names == ("X", "N", "O")  # implicit output
    xu = _t(7, 2, 3, names=(None, None, "C"))
    assert ember.einsum("... C, C O -> ... O", xu, w).names == (None, None, "O")


# ---------------------------------------------------------------------- __setitem__ (line 64)
@pytest.mark.parametrize(
    "index", [0, (0,), slice(None), (slice(None), slice(None)), {"N": 0}, (0, slice(0, 3))]
)
def test_setitem_checks_the_value_names_like_copy_(index):
    y = ember.zeros(2, 3, names=("N", "C"))
    with _raises("__setitem__: Error when attempting to broadcast dims") as e:
        y[index] = ember.ones(3, names=("Q",))
    assert "do not match" in str(e.value)
    assert y.names == ("N", "C") and not y.rename(None).numpy().any()


def test_setitem_with_matching_or_unnamed_values():
    y = ember.zeros(2, 3, names=("N", "C"))
    y[0] = ember.ones(3, names=("C",))
    y[1] = ember.full((3,), 2.0, names=(None,))
    y[:, 0] = ember.ones(2, names=("N",)) * 5
    y[ember.tensor([0, 1])] = ember.ones(2, 3, names=("K", "C")) * 7  # advanced dims: unnamed
    assert y.names == ("N", "C")
    np.testing.assert_array_equal(y.rename(None).numpy(), np.full((2, 3), 7.0))
    u = ember.zeros(2, 3)
    u[0] = ember.ones(3, names=("Q",))  # an unnamed target: nothing to match
    assert u.names == (None, None)
    with _raises("__setitem__: "):
        y[:, 0] = ember.ones(2, names=("C",))
    with _raises("__setitem__: "):  # autograd path too
        g = ember.zeros(2, 3, names=("N", "C"), requires_grad=True) * 1
        g[0] = _t(3, names=("Q",), grad=True)


# ---------------------------------------------------------------------- boolean masks (P111)
def test_mask_index_checks_names_like_masked_select():
    x = _t(3, 3, names=("N", "C"))
    bad = _mask(3, 3, names=("C", "N"))
    with _raises("do not match"):
        ember.masked_select(x, bad)
    with _raises("index: ") as e:
        x[bad]
    assert "do not match" in str(e.value)
    with _raises("index: "):
        x[:, _mask(3, names=("N",))]
    with _raises("index: "):
        x[(bad,)]
    with _raises("index: "):
        x[bad] = 1.0
    with _raises("index: "):
        x[..., _mask(3, names=("N",))] = 0.0
    ok = _mask(3, 3, names=("N", None))
    assert x[ok].names == (None,)
    assert x[_mask(3, names=("N",))].names == (None, "C")
    assert x[:, _mask(3, names=("C",))].names == ("N", None)
    assert x[..., _mask(3, names=("C",))].names == ("N", None)
    np.testing.assert_array_equal(x[ok].numpy(), x.numpy()[ok.numpy()])
    x[ok] = 0.0
    assert x.names == ("N", "C")


# ---------------------------------------------------------------------- nn layers (4.3)
def test_embedding_bag_keeps_the_bag_dim_name():
    idx = ember.tensor([[1, 2], [3, 4]], names=("N", "T"))
    for mode in ("mean", "sum", "max"):
        assert nn.EmbeddingBag(10, 4, mode=mode)(idx).names == ("N", None)
    w = _t(10, 4, grad=True)
    r = F.embedding_bag(idx, w)
    assert r.names == ("N", None)
    r.sum().backward()
    assert w.grad.names == (None, None)
    # 1-D input cut at offsets: the bag dim is created, so unnamed
    flat = ember.tensor([1, 2, 3], names=("T",))
    assert nn.EmbeddingBag(10, 4)(flat, ember.tensor([0, 1])).names == (None, None)


@pytest.mark.parametrize("cls", [nn.LSTMCell, nn.GRUCell, nn.RNNCell])
def test_rnn_cells_name_like_the_layers(cls):
    x = _t(2, 3, names=("N", "C"), grad=True)
    cell = cls(3, 4)
    out = cell(x)
    outs = out if isinstance(out, tuple) else (out,)
    assert all(o.names == ("N", "C") for o in outs)  # like nn.LSTM's ('N', 'T', 'C')
    layer = {nn.LSTMCell: nn.LSTM, nn.GRUCell: nn.GRU, nn.RNNCell: nn.RNN}[cls](3, 4)
    assert layer(_t(5, 2, 3, names=("T", "N", "C")))[0].names == ("T", "N", "C")
    sum(o.sum() for o in outs).backward()
    assert x.grad.names == ("N", "C")
    single = cell(_t(3, names=("C",)))
    assert (single[0] if isinstance(single, tuple) else single).names == ("C",)
    cell.weight_hh.rename_("G", "H")  # named weights: the output takes the hidden name
    out = cell(x)
    assert (out[0] if isinstance(out, tuple) else out).names == ("N", "H")
    cell.weight_ih.rename_("G", "D")
    with _raises(f"{cls.__name__}: the input's features dim 'C' does not match"):
        cell(x)
    r = cls(3, 4)(_t(2, 3))  # the unnamed path is untouched
    assert (r[0] if isinstance(r, tuple) else r).names == (None, None)


# ---------------------------------------------------------------------- no op refuses names (4.2)
def test_cov_and_corrcoef_accept_named_inputs():
    x = _t(3, 5, names=("V", "O"))
    ref = np.cov(x.numpy())
    for r in (ember.cov(x), x.cov()):
        # (variables, variables): the rows keep the variables' name, once (wave 56)
        assert r.names == ("V", None)
        np.testing.assert_allclose(r.rename(None).numpy(), ref, rtol=1e-5)
    np.testing.assert_allclose(
        ember.corrcoef(x).rename(None).numpy(), np.corrcoef(x.numpy()), rtol=1e-5
    )
    assert ember.corrcoef(x).names == ("V", None)
    sq = _t(3, 3, names=("V", "O"))
    assert ember.cov(sq).names == ("V", None)  # not the observations' name, whatever the shape
    assert ember.cov(_t(5, names=("O",))).names == ()
    g = _t(3, 5, names=("V", "O"), grad=True)
    ember.cov(g).sum().backward()
    assert g.grad.names == ("V", "O")


def test_kron_accepts_named_inputs():
    a, b = _t(2, names=("N",)), _t(4, names=("N",), seed=1)
    r = ember.kron(a, b)
    assert r.names == (None,)
    np.testing.assert_allclose(r.numpy(), np.kron(a.numpy(), b.numpy()), rtol=1e-6)
    assert ember.kron(a, _t(1)).names == ("N",)  # shape kept
    assert ember.kron(_t(2, 2, names=("N", "C")), _t(2, 2)).names == (None, None)


def test_linear_with_a_1d_weight_accepts_a_named_input():
    x, w = _t(2, 3, names=("N", "C")), _t(3, seed=1)
    r = F.linear(x, w)
    assert r.names == ("N",)
    np.testing.assert_allclose(r.numpy(), x.numpy() @ w.numpy(), rtol=1e-6)
    assert F.linear(x, w, _t(seed=2)).names == ("N",)


# ---------------------------------------------------------------------- checkpoints (4.9, line 383)
def test_load_state_dict_checks_names_like_copy_():
    src, dst = nn.Linear(3, 4), nn.Linear(3, 4)
    src.weight.rename_("H", "C")
    dst.weight.rename_("X", "Y")
    before = dst.weight.detach().rename(None).numpy().copy()
    with _raises("copy_: Error when attempting to broadcast dims ['X', 'Y'] and dims ['H', 'C']"):
        dst.load_state_dict(src.state_dict())
    assert dst.weight.names == ("X", "Y")
    np.testing.assert_array_equal(dst.weight.detach().rename(None).numpy(), before)
    dst.weight.rename_("H", "C")  # matching names load
    dst.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(
        dst.weight.detach().rename(None).numpy(), src.weight.detach().rename(None).numpy()
    )
    fresh = nn.Linear(3, 4)  # an unnamed model takes the checkpoint's names
    fresh.load_state_dict(src.state_dict())
    assert fresh.weight.names == ("H", "C")
    plain = nn.Linear(3, 4)  # an unnamed checkpoint keeps the model's names
    dst.load_state_dict(plain.state_dict())
    assert dst.weight.names == ("H", "C")
