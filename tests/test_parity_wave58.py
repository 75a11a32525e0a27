"""Parity regressions found by the fifty-eighth wave, a sweep of the public ``torch.*`` names
ember still lacked that real training code and libraries call (torch is the oracle, its CPU
build): the functional recurrent entry points ``torch.lstm`` / ``gru`` / ``rnn_tanh`` /
``rnn_relu`` (torch's argument order, padded and packed overloads, over nn's fused layers),
``torch.native_dropout`` (output and bool mask), ``torch.norm_except_dim`` (weight norm's
norm), ``torch.grid_sampler_2d`` / ``grid_sampler_3d`` (integer mode codes, torch's dimension
errors), ``torch.set_anomaly_enabled``, ``torch.legacy_contiguous_format``, the build flags
``has_lapack`` / ``has_mkl`` / ``has_openmp`` / ``has_spectral``, ``is_distributed``,
``init_num_threads``, ``torch.to_dlpack``, the modules ``torch.torch_version`` (``TorchVersion``,
the str ``__version__`` is, comparing with strings and tuples as versions) and
``torch.functional``, and nn.functional's ``__torch_function__`` helper re-exports. All were
missing, so scripts using them failed under ``ember run`` with an AttributeError."""

from __future__ import annotations

import subprocess
import sys

import ember
import ember.nn.functional as F
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _t(a, **kw):
    return torch.tensor(np.asarray(a), **kw)


def _e(a, **kw):
    return ember.tensor(np.asarray(a), **kw)


def _close(e, t, tol=1e-5):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------- functional recurrent layers
def _rnn_case(mode, *, layers=2, bidir=True, proj=0, batch_first=False, bias=True, seed=0):
    """A torch module's flat weights, inputs and states, and ember copies of them."""
    torch.manual_seed(seed)
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}.get(mode, torch.nn.RNN)
    kw = {"proj_size": proj} if proj else {}
    if mode.startswith("RNN"):
        kw["nonlinearity"] = mode[4:].lower()
    m = cls(3, 4, layers, bias=bias, bidirectional=bidir, batch_first=batch_first, **kw).double()
    D = 2 if bidir else 1
    x = torch.randn(2, 5, 3, dtype=torch.float64)  # (B, T) or (T, B), as batch_first says
    h = torch.randn(layers * D, 2 if batch_first else 5, proj or 4, dtype=torch.float64)
    c = torch.randn(layers * D, 2 if batch_first else 5, 4, dtype=torch.float64)
    tw = [w.detach().clone().requires_grad_() for w in m._flat_weights]
    ew = [_e(w.detach().numpy(), requires_grad=True) for w in tw]
    return tw, ew, x, h, c


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("proj", [0, 2])
def test_lstm_functional_matches_torch_values_and_gradients(batch_first, proj):
    tw, ew, x, h, c = _rnn_case("LSTM", proj=proj, batch_first=batch_first)
    tx, ex = x.clone().requires_grad_(), _e(x.numpy(), requires_grad=True)
    args = (True, 2, 0.0, True, True, batch_first)
    tr = torch.lstm(tx, (h, c), tw, *args)
    er = ember.lstm(ex, (_e(h.numpy()), _e(c.numpy())), ew, *args)
    assert len(er) == 3
    rng = np.random.default_rng(1)
    gs = [rng.standard_normal(tuple(t.shape)) for t in tr]
    for a, b in zip(er, tr):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b)
    torch.autograd.backward(list(tr), [_t(g) for g in gs])
    ember.autograd.backward(list(er), [_e(g) for g in gs])
    _close(ex.grad, tx.grad)
    for a, b in zip(ew, tw):
        _close(a.grad, b.grad)


@pytest.mark.parametrize("mode", ["GRU", "RNN_TANH", "RNN_RELU"])
def test_gru_and_elman_functional_match_torch(mode):
    tw, ew, x, h, _ = _rnn_case(mode, layers=2, bidir=True)
    fn = {"GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}[mode]
    tx, ex = x.clone().requires_grad_(), _e(x.numpy(), requires_grad=True)
    tr = getattr(torch, fn)(tx, h, tw, True, 2, 0.0, False, True, False)
    er = getattr(ember, fn)(ex, _e(h.numpy()), ew, True, 2, 0.0, False, True, False)
    assert len(er) == 2
    g = np.random.default_rng(2).standard_normal(tuple(tr[0].shape))
    for a, b in zip(er, tr):
        _close(a, b)
    tr[0].backward(_t(g))
    er[0].backward(_e(g))
    _close(ex.grad, tx.grad)
    for a, b in zip(ew, tw):
        _close(a.grad, b.grad)


def test_packed_overloads_match_torch():
    tw, ew, x, h, c = _rnn_case("LSTM", layers=1, bidir=False)
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, [2, 1, 1, 1, 1], enforce_sorted=True)
    data, bs = packed.data, packed.batch_sizes
    tr = torch.lstm(data, bs, (h, c), tw, True, 1, 0.0, False, False)
    er = ember.lstm(_e(data.numpy()), _e(bs.numpy()), (_e(h.numpy()), _e(c.numpy())), ew, True, 1,
                    0.0, False, False)  # fmt: skip
    for a, b in zip(er, tr):
        _close(a, b)
    tw, ew, x, h, _ = _rnn_case("GRU", layers=1, bidir=False)
    tr = torch.gru(data, bs, h, tw, True, 1, 0.0, False, False)
    er = ember.gru(_e(data.numpy()), _e(bs.numpy()), _e(h.numpy()), ew, True, 1, 0.0, False,
                   False)  # fmt: skip
    for a, b in zip(er, tr):
        _close(a, b)


def test_lstm_functional_without_bias_and_errors():
    tw, ew, x, h, c = _rnn_case("LSTM", layers=1, bidir=False, bias=False)
    tr = torch.lstm(x, (h, c), tw, False, 1, 0.0, False, False, False)
    er = ember.lstm(_e(x.numpy()), (_e(h.numpy()), _e(c.numpy())), ew, False, 1, 0.0, False,
                    False, False)  # fmt: skip
    for a, b in zip(er, tr):
        _close(a, b)
    with pytest.raises(RuntimeError, match="lstm expects two hidden states"):
        torch.lstm(x, (h,), tw, False, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="lstm expects two hidden states"):
        ember.lstm(_e(x.numpy()), (_e(h.numpy()),), ew, False, 1, 0.0, False, False, False)
    with pytest.raises(TypeError):
        torch.gru(x, h, tw, False, 1, 0.0, False, False)
    with pytest.raises(TypeError):
        ember.gru(_e(x.numpy()), _e(h.numpy()), ew, False, 1, 0.0, False, False)


def test_lstm_functional_gradcheck():
    _, ew, x, h, _ = _rnn_case("LSTM", layers=1, bidir=True)
    ex = _e(x.numpy()[:, :2], requires_grad=True)
    eh = _e(h.numpy()[:, :2], requires_grad=True)

    def f(x, h, *w):
        return ember.lstm(x, (h, h * 0.5), list(w), True, 1, 0.0, False, True, False)

    assert ember.autograd.gradcheck(f, (ex, eh, *ew))


def test_rnn_modules_still_match_after_sharing_the_layer_loop():
    torch.manual_seed(0)
    t = torch.nn.GRU(3, 4, 2, dropout=0.0, bidirectional=True)
    e = ember.nn.GRU(3, 4, 2, dropout=0.0, bidirectional=True)
    e.load_state_dict({k: _e(v.numpy()) for k, v in t.state_dict().items()})
    x = torch.randn(5, 2, 3)
    for a, b in zip(e(_e(x.numpy())), t(x)):
        _close(a, b)


# ---------------------------------------------------------------- native_dropout, norm_except_dim
def test_native_dropout_output_and_mask():
    x = ember.ones(40, 50, requires_grad=True)
    out, mask = ember.native_dropout(x, 0.3, True)
    assert mask.dtype == ember.bool and tuple(mask.shape) == (40, 50)
    want = mask.numpy() / 0.7
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-6)
    assert 0.6 < mask.numpy().mean() < 0.8
    g = np.random.default_rng(3).standard_normal((40, 50)).astype(np.float32)
    out.backward(_e(g))
    np.testing.assert_allclose(x.grad.numpy(), g * want, rtol=1e-6)


@pytest.mark.parametrize("train", [False, True])
def test_native_dropout_edges_match_torch(train):
    t = torch.arange(6.0).reshape(2, 3)
    e = ember.arange(6.0).reshape(2, 3)
    for p in (0.0, 1.0):
        to, tm = torch.native_dropout(t, p, train)
        eo, em = ember.native_dropout(e, p, train)
        _close(eo, to)
        assert em.dtype == ember.bool
        np.testing.assert_array_equal(em.numpy(), tm.numpy())
    to, tm = torch.native_dropout(t, 0.5, False)
    eo, em = ember.native_dropout(e, 0.5, False)
    _close(eo, to)
    np.testing.assert_array_equal(em.numpy(), tm.numpy())
    assert eo is not e


def test_native_dropout_errors_match_torch():
    for args in [(1.5, True)]:
        with pytest.raises(RuntimeError) as te:
            torch.native_dropout(torch.ones(2), *args)
        with pytest.raises(RuntimeError) as ee:
            ember.native_dropout(ember.ones(2), *args)
        assert str(ee.value) == str(te.value)
    with pytest.raises(RuntimeError) as te:
        torch.native_dropout(torch.ones(2, dtype=torch.int64), 0.5, True)
    with pytest.raises(RuntimeError) as ee:
        ember.native_dropout(ember.ones(2, dtype=ember.int64), 0.5, True)
    assert str(ee.value) == str(te.value)


def test_native_dropout_mask_keeps_names():
    x = ember.ones(2, 3, names=("N", "C"))
    out, mask = ember.native_dropout(x, 0.5, True)
    assert out.names == ("N", "C") and mask.names == ("N", "C")


@pytest.mark.parametrize("pw, dim", [(2, 0), (2, 1), (3, 0), (2, -1), (1, 2)])
def test_norm_except_dim_matches_torch(pw, dim):
    a = np.random.default_rng(4).standard_normal((2, 3, 4))
    tv, ev = _t(a, requires_grad=True), _e(a, requires_grad=True)
    tr, er = torch.norm_except_dim(tv, pw, dim), ember.norm_except_dim(ev, pw, dim)
    assert tuple(er.shape) == tuple(tr.shape) and er.dtype == ember.float64
    _close(er, tr, 1e-10)
    g = np.random.default_rng(5).standard_normal(tuple(tr.shape))
    tr.backward(_t(g))
    er.backward(_e(g))
    _close(ev.grad, tv.grad, 1e-10)
    assert ember.autograd.gradcheck(lambda v: ember.norm_except_dim(v, pw, dim), (ev,))


def test_norm_except_dim_defaults_match_torch():
    a = np.arange(6.0).reshape(2, 3)
    _close(ember.norm_except_dim(_e(a)), torch.norm_except_dim(_t(a)))


# ---------------------------------------------------------------- embedding_bag (4 results)
_W = np.random.default_rng(8).standard_normal((5, 3))
_W[1, 0] = _W[4, 0]  # a tie in max mode: torch keeps the first row
_I = np.array([0, 2, 1, 4, 3, 3])


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("pad", [None, 3, -1])
def test_embedding_bag_matches_torch_all_four_results(grad, last, mode, pad):
    offs = np.array([0, 2, 2, 6] if last else [0, 2, 2, 5])
    tw, ew = _t(_W, requires_grad=grad), _e(_W, requires_grad=grad)
    args = (False, mode, False, None, last, pad)
    tr = torch.embedding_bag(tw, _t(_I), _t(offs), *args)
    er = ember.embedding_bag(ew, _e(_I), _e(offs), *args)
    assert len(er) == 4
    for a, b in zip(er, tr):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        _close(a, b, 1e-12)
    if grad:
        g = np.random.default_rng(9).standard_normal(tuple(tr[0].shape))
        tr[0].backward(_t(g))
        er[0].backward(_e(g))
        _close(ew.grad, tw.grad, 1e-12)


def test_functional_embedding_bag_max_sends_a_tie_gradient_to_the_first_row():
    # torch routes each (bag, column) gradient to its first maximal row; amax would split it
    tw, ew = _t(_W, requires_grad=True), _e(_W, requires_grad=True)
    offs = np.array([0, 2])
    tr = torch.nn.functional.embedding_bag(_t(_I), tw, _t(offs), mode="max")
    er = F.embedding_bag(_e(_I), ew, _e(offs), mode="max")
    _close(er, tr, 1e-12)
    g = np.random.default_rng(11).standard_normal((2, 3))
    tr.backward(_t(g))
    er.backward(_e(g))
    _close(ew.grad, tw.grad, 1e-12)


def test_embedding_bag_per_sample_weights_int32_and_errors():
    offs = np.array([0, 3], dtype=np.int32)
    psw = np.linspace(0.5, 2.0, 6)
    tw, ew = _t(_W, requires_grad=True), _e(_W, requires_grad=True)
    tp, ep = _t(psw, requires_grad=True), _e(psw, requires_grad=True)
    tr = torch.embedding_bag(tw, _t(_I.astype(np.int32)), _t(offs), False, 0, False, tp)
    er = ember.embedding_bag(ew, _e(_I.astype(np.int32)), _e(offs), False, 0, False, ep)
    for a, b in zip(er, tr):
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        _close(a, b, 1e-12)
    g = np.random.default_rng(10).standard_normal((2, 3))
    tr[0].backward(_t(g))
    er[0].backward(_e(g))
    _close(ew.grad, tw.grad, 1e-12)
    _close(ep.grad, tp.grad, 1e-12)
    with pytest.raises(RuntimeError, match="`mode` must be sum, mean, or max."):
        torch.embedding_bag(tw, _t(_I), _t(offs), False, 3)
    with pytest.raises(RuntimeError, match="`mode` must be sum, mean, or max."):
        ember.embedding_bag(ew, _e(_I), _e(offs), False, 3)
    f = lambda w: ember.embedding_bag(w, _e(_I), _e(offs), False, 1)[0]
    assert ember.autograd.gradcheck(f, (_e(_W, requires_grad=True),))


# ---------------------------------------------------------------- grid_sampler_2d / 3d
@pytest.mark.parametrize("interp, pad, ac", [(0, 0, False), (1, 1, True), (2, 2, False)])
def test_grid_sampler_2d_matches_torch(interp, pad, ac):
    r = np.random.default_rng(6)
    x, g = r.standard_normal((2, 3, 4, 5)), r.uniform(-1.2, 1.2, (2, 3, 2, 2))
    tx, tg = _t(x, requires_grad=True), _t(g, requires_grad=True)
    ex, eg = _e(x, requires_grad=True), _e(g, requires_grad=True)
    tr = torch.grid_sampler_2d(tx, tg, interp, pad, ac)
    er = ember.grid_sampler_2d(ex, eg, interp, pad, ac)
    _close(er, tr, 1e-10)
    up = r.standard_normal(tuple(tr.shape))
    tr.backward(_t(up))
    er.backward(_e(up))
    _close(ex.grad, tx.grad, 1e-10)
    if interp != 1:  # nearest is piecewise constant in the grid
        _close(eg.grad, tg.grad, 1e-10)


def test_grid_sampler_3d_matches_torch_and_gradchecks():
    r = np.random.default_rng(7)
    x, g = r.standard_normal((1, 2, 3, 4, 5)), r.uniform(-1, 1, (1, 2, 2, 2, 3))
    tr = torch.grid_sampler_3d(_t(x), _t(g), 0, 1, True)
    ex, eg = _e(x, requires_grad=True), _e(g, requires_grad=True)
    _close(ember.grid_sampler_3d(ex, eg, 0, 1, True), tr, 1e-10)
    assert ember.autograd.gradcheck(lambda a, b: ember.grid_sampler_3d(a, b, 0, 0, False), (ex, eg))


@pytest.mark.parametrize(
    "fn, xs, gs",
    [
        ("grid_sampler_2d", (1, 2, 3, 4, 5), (1, 2, 2, 2, 3)),
        ("grid_sampler_3d", (1, 2, 3, 4), (1, 2, 2, 2)),
        ("grid_sampler_2d", (2, 3, 4), (2, 2, 2)),
        ("grid_sampler_3d", (2, 3, 4, 5), (2, 2, 2, 3)),
    ],
)
def test_grid_sampler_nd_errors_match_torch(fn, xs, gs):
    with pytest.raises(RuntimeError) as te:
        getattr(torch, fn)(torch.zeros(xs), torch.zeros(gs), 0, 0, False)
    with pytest.raises(RuntimeError) as ee:
        getattr(ember, fn)(ember.zeros(xs), ember.zeros(gs), 0, 0, False)
    assert str(ee.value) == str(te.value)


# ---------------------------------------------------------------- flags and small utilities
def test_set_anomaly_enabled_matches_torch():
    try:
        for args in [(True,), (True, False), (False, True), (False, False)]:
            torch.set_anomaly_enabled(*args)
            ember.set_anomaly_enabled(*args)
            assert ember.is_anomaly_enabled() == torch.is_anomaly_enabled()
            assert ember.is_anomaly_check_nan_enabled() == torch.is_anomaly_check_nan_enabled()
    finally:
        torch.set_anomaly_enabled(False, True)
        ember.set_anomaly_enabled(False, True)
    assert not ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()
    with pytest.raises(TypeError):
        ember.set_anomaly_enabled()


def test_build_flags_and_threads():
    assert ember.legacy_contiguous_format is ember.contiguous_format
    assert torch.legacy_contiguous_format is torch.contiguous_format
    for flag in ("has_lapack", "has_spectral", "has_mkl", "has_openmp"):
        assert type(getattr(ember, flag)) is bool
    assert ember.has_lapack and ember.has_spectral  # numpy's LAPACK and pocketfft
    assert ember.is_distributed(ember.ones(2)) is torch.is_distributed(torch.ones(2)) is False
    assert ember.init_num_threads() is None and torch.init_num_threads() is None


def test_to_dlpack_round_trip_shares_memory():
    t = ember.arange(4.0, requires_grad=True)  # the legacy export takes it, as torch's does
    cap = ember.to_dlpack(t)
    assert type(cap).__name__ == "PyCapsule"
    u = ember.from_dlpack(cap)
    np.testing.assert_array_equal(u.numpy(), [0.0, 1.0, 2.0, 3.0])
    assert np.shares_memory(u.numpy(), t.detach().numpy())
    assert ember.to_dlpack is ember.utils.dlpack.to_dlpack
    with pytest.raises(TypeError) as te:
        torch.to_dlpack([1])
    with pytest.raises(TypeError) as ee:
        ember.to_dlpack([1])
    assert str(ee.value) == str(te.value)


def test_torch_version_compares_like_torch():
    from ember.torch_version import TorchVersion as E
    from torch.torch_version import TorchVersion as T

    for s in ("2.13.0", "0.1.0", "1.10.2+cpu"):
        e, t = E(s), T(s)
        assert isinstance(e, str) and str(e) == s and hash(e) == hash(s)
        for o in ("2.13", "2.9", (2, 13), (0, 1), [1, 10], "abc", "1.10.2", 5):
            assert (e == o) == (t == o), (s, o)
            assert (e != o) == (t != o), (s, o)
        for o in ("2.13", "2.9", (2, 14), (0, 1), "abc"):
            for op in ("__lt__", "__le__", "__gt__", "__ge__"):
                assert getattr(e, op)(o) == getattr(t, op)(o), (s, o, op)
        for o in (2, 2.5, object()):
            with pytest.raises(TypeError):
                e < o  # noqa: B015
            with pytest.raises(TypeError):
                t < o  # noqa: B015
    assert isinstance(ember.__version__, E) and ember.__version__ >= (0, 1)
    assert ember.__version__ == ember.version.__version__


def test_functional_module_and_f_reexports():
    import torch.functional as tf

    for name in tf.__all__:
        assert getattr(ember.functional, name) is getattr(ember, name), name
    assert sorted(ember.functional.__all__) == sorted(tf.__all__)
    a = ember.arange(6.0).reshape(2, 3)
    _close(ember.functional.einsum("ij->j", a), torch.functional.einsum("ij->j", torch.arange(
        6.0).reshape(2, 3)))  # fmt: skip
    for name in ("handle_torch_function", "has_torch_function", "has_torch_function_unary",
                 "has_torch_function_variadic"):  # fmt: skip
        assert getattr(F, name) is getattr(ember.overrides, name)
        assert hasattr(torch.nn.functional, name)


def test_new_modules_and_names_import_under_ember_run(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(
        "import torch\n"
        "import torch.functional\n"
        "import torch.torch_version\n"
        "from torch.functional import einsum, split\n"
        "from torch.torch_version import TorchVersion\n"
        "from torch.nn.functional import has_torch_function, handle_torch_function\n"
        "print(isinstance(torch.__version__, TorchVersion), torch.__version__ >= (0, 1))\n"
        "print(torch.has_lapack, torch.legacy_contiguous_format is torch.contiguous_format)\n"
        "x = torch.ones(5, 2, 3)\n"
        "h = torch.zeros(1, 2, 4)\n"
        "w = [torch.ones(12, 3), torch.ones(12, 4), torch.zeros(12), torch.zeros(12)]\n"
        "out, hn = torch.gru(x, h, w, True, 1, 0.0, False, False, False)\n"
        "print(tuple(out.shape), tuple(hn.shape))\n"
        "print(tuple(torch.native_dropout(x, 0.5, False)[1].shape))\n"
    )
    want = "True True\nTrue True\n(5, 2, 4) (1, 2, 4)\n(5, 2, 3)\n"
    got = subprocess.run(
        [sys.executable, "-m", "ember", "run", str(script)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    assert got.stdout == want
    ref = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert ref.returncode == 0, ref.stderr
    assert ref.stdout == want
