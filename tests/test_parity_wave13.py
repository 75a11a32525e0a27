"""Parity regressions found by the thirteenth wave, a module-by-module sweep of the nn.Module zoo
(repr, state_dict, parameters and buffers, initialization statistics, forward values with torch's
weights loaded, train/eval, dtype moves, pickling, constructor and forward errors; torch is the
oracle): the recurrent cells' gates as at::linear's addmm (a hidden state of another dtype fails
with addmm's "mat1 and mat2" message) and GRUCell's graph in torch's operand order, RNN/LSTM/GRU's
constructor checks in torch's order (``float(dropout)`` first, then input_size's type and range,
which ember did not check at all), a bad first size element of a creation op or a cell's weight
(``empty((4.5, 4))``, ``zeros(1.5, 2)``), EmbeddingBag's lower-case padding_idx message,
ConvTranspose's padding string split into characters as torch does, and convolutions' int-tuple
arguments refusing floats and strings (``stride=(1, 1.5)`` was truncated, a padding string's
characters were parsed by int()), fractional max pooling's checks (too few dims an IndexError from
drawing the samples, the 3-d kernel's name and strict window bound, a number as the 3-d output
ratio), feature dropout refusing an input without a channel dim, MultiLabelMarginLoss's Long
targets and float inputs, SoftMarginLoss's operand order and its loss in the input's dtype,
batch norm refusing half a pair of running statistics in training, unfold/fold's kernel, stride,
dilation and padding checks (a zero stride divided by zero; a zero dilation or negative padding
ran), and reflect/replicate padding that crops every padded dim to nothing."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e)
    return None


def _same_error(build):
    t = _err(lambda: build(torch))
    e = _err(lambda: build(ember))
    assert t is not None
    assert e == t


# ------------------------------------------------------------------- recurrent cells
@pytest.mark.parametrize(
    "build",
    [
        lambda l: l.nn.LSTMCell(4, 6)(l.ones(3, 4), (l.ones(3, 6, dtype=l.float64), l.ones(3, 6))),
        lambda l: l.nn.GRUCell(4, 6)(l.ones(3, 4), l.ones(3, 6, dtype=l.float64)),
        lambda l: l.nn.RNNCell(4, 6)(l.ones(3, 4, dtype=l.float64)),
        lambda l: l.nn.RNNCell(4, 6, bias=False)(l.ones(3, 4, dtype=l.float64)),
        lambda l: l.nn.RNNCell(4, 6, nonlinearity="relu")(l.ones(4, dtype=l.float64)),
    ],
)
def test_cell_dtype_mismatch_messages(build):
    _same_error(build)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_values_and_grads_with_torch_weights(cls):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(4, 6).double()
    em = getattr(ember.nn, cls)(4, 6).double()
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 4))
    g = np.random.default_rng(1).standard_normal((3, 6))
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    to, eo = tm(tx), em(ex)
    to, eo = (to[0], eo[0]) if cls == "LSTMCell" else (to, eo)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-12, atol=1e-12)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (n, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cell_graph_nodes_follow_torch():
    def names(lib, cls):
        out = getattr(lib.nn, cls)(4, 6)(lib.ones(2, 4))
        out = out[0] if isinstance(out, tuple) else out
        fn = out.grad_fn
        return (
            [fn.name()]
            + [n.name() for n, _ in fn.next_functions if n is not None]
            + [n.name() for n, _ in fn.next_functions[0][0].next_functions if n is not None]
        )

    for cls in ("RNNCell", "GRUCell"):
        assert names(ember, cls) == names(torch, cls)


def test_cell_gradcheck():
    cell = ember.nn.GRUCell(3, 2).double()
    x = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    h = ember.randn(2, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: cell(a, b), (x, h))


# ------------------------------------------------------------------- RNN constructor checks
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((0, 4), {}),
        ((-1, 4), {}),
        ((4.5, 4), {}),
        ((4.5, 4.5), {}),
        ((0, 4.5), {}),
        ((0, 0), {}),
        ((0, 4), {"num_layers": 0}),
        ((4, 4), {"dropout": "a"}),
        ((4, 4), {"dropout": None}),
        ((4, 4), {"dropout": "0.5"}),
        ((4.5, 4), {"dropout": 2}),
    ],
)
def test_rnn_constructor_errors(cls, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(lambda l: getattr(l.nn, cls)(*args, **kwargs))


def test_rnn_zero_input_size_is_refused_not_built():
    with pytest.raises(ValueError, match="input_size must be greater than zero"):
        ember.nn.LSTM(0, 4)


# ------------------------------------------------------------------- creation size parsing
@pytest.mark.parametrize(
    "build",
    [
        lambda l: l.empty((4.5, 4)),
        lambda l: l.ones((1.5,)),
        lambda l: l.rand((1.5, 2)),
        lambda l: l.empty([None, 2]),
        lambda l: l.zeros((True, 2)),
        lambda l: l.zeros(1.5, 2, 3),
        lambda l: l.zeros((2,), (3,)),
        lambda l: l.zeros(4, 1.5),
        lambda l: l.zeros((4, 1.5)),
        lambda l: l.zeros(1.5),
        lambda l: l.nn.GRUCell(4, 4.5),
        lambda l: l.nn.LSTMCell(4, 4.5),
    ],
)
def test_creation_bad_size_messages(build):
    _same_error(build)


# ------------------------------------------------------------------- EmbeddingBag / Embedding
@pytest.mark.parametrize("cls", ["Embedding", "EmbeddingBag"])
@pytest.mark.parametrize("idx", [5, 3, -4, -5])
def test_padding_idx_messages(cls, idx):
    _same_error(lambda l: getattr(l.nn, cls)(3, 2, padding_idx=idx))


# ------------------------------------------------------------------- convolution arguments
@pytest.mark.parametrize("cls", ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"])
@pytest.mark.parametrize("pad", ["same", "valid"])
def test_conv_transpose_padding_string_is_a_sequence(cls, pad):
    t = getattr(torch.nn, cls)(3, 4, 3, padding=pad)
    e = getattr(ember.nn, cls)(3, 4, 3, padding=pad)
    assert repr(e) == repr(t)
    assert e.padding == t.padding
    nd = int(cls[-2])
    _same_error(lambda l: getattr(l.nn, cls)(3, 4, 3, padding=pad)(l.ones(1, 3, *[5] * nd)))


@pytest.mark.parametrize(
    "build",
    [
        lambda l: l.nn.functional.conv_transpose2d(
            l.ones(1, 3, 5, 5), l.ones(3, 4, 3, 3), None, 1, (1, "b")
        ),
        lambda l: l.nn.functional.conv_transpose2d(
            l.ones(1, 3, 5, 5), l.ones(3, 4, 3, 3), None, (1.5, 1)
        ),
        lambda l: l.nn.functional.conv_transpose2d(
            l.ones(1, 3, 5, 5), l.ones(3, 4, 3, 3), None, 1, 0, 0, 1, (1.0, 1)
        ),
        lambda l: l.nn.functional.conv_transpose2d(
            l.ones(1, 3, 5, 5), l.ones(3, 4, 3, 3), None, 1, 0, (0, 0.0)
        ),
        lambda l: l.nn.functional.conv2d(l.ones(1, 3, 5, 5), l.ones(3, 3, 3, 3), None, (1, 1.5)),
        lambda l: l.nn.Conv2d(3, 3, 3, stride=(1, 1.5))(l.ones(1, 3, 5, 5)),
        lambda l: l.nn.Conv1d(3, 3, 3, dilation=(1, 2.0))(l.ones(1, 3, 9)),
    ],
)
def test_conv_int_tuple_arguments(build):
    _same_error(build)


def test_conv_float_first_element_is_refused():
    # torch's conv2d has two overloads and reports an invalid combination, as ember does (it
    # used to truncate 1.5 to a stride of 1)
    for m in (ember, torch):
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            m.nn.Conv2d(3, 3, 3, stride=(1.5, 1))(m.ones(1, 3, 5, 5))


def test_conv_bool_and_tensor_elements_still_accepted():
    for lib in (torch, ember):
        f = lib.nn.functional
        out = f.conv2d(lib.ones(1, 3, 5, 5), lib.ones(3, 3, 3, 3), None, (lib.tensor(1), True))
        assert tuple(out.shape) == (1, 3, 3, 3)


# ------------------------------------------------------------------- fractional max pooling
@pytest.mark.parametrize(
    "build",
    [
        lambda l: l.nn.functional.fractional_max_pool2d(l.ones(5), 2, output_size=2),
        lambda l: l.nn.functional.fractional_max_pool2d(l.ones(2, 5), 2, output_size=2),
        lambda l: l.nn.functional.fractional_max_pool3d(l.ones(3, 4, 4), 2, output_ratio=0.5),
        lambda l: l.nn.functional.fractional_max_pool3d(l.ones(2, 3, 5, 5), 2, output_size=2),
        lambda l: l.nn.functional.fractional_max_pool3d(l.ones(1, 1, 4, 3, 4), 2, output_size=2),
        lambda l: l.nn.functional.fractional_max_pool3d(l.ones(1, 1, 4, 4, 3), 2, output_size=2),
        lambda l: l.nn.functional.fractional_max_pool3d(
            l.ones(1, 1, 1, 1, 1, 4, 4), 2, output_size=2
        ),
        lambda l: l.nn.functional.fractional_max_pool3d(l.ones(1, 1, 0, 4, 4), 2, output_size=2),
        lambda l: l.nn.functional.fractional_max_pool3d(
            l.ones(1, 3, 8, 8, 8), 2, output_ratio=(0.5, 0.5)
        ),
        lambda l: l.nn.functional.fractional_max_pool2d(l.ones(1, 3, 8, 8), 2, output_ratio=(0.5,)),
        lambda l: l.nn.FractionalMaxPool2d(2, output_size=2)(l.ones(5)),
        lambda l: l.nn.FractionalMaxPool3d(2, output_size=2)(l.ones(2, 5)),
    ],
)
def test_fractional_max_pool_errors(build):
    _same_error(build)


def test_fractional_max_pool3d_number_ratio_and_edge_windows():
    for lib in (torch, ember):
        f = lib.nn.functional
        assert tuple(f.fractional_max_pool3d(lib.ones(1, 3, 8, 8, 8), 2, output_ratio=0.5).shape)
        out = lib.nn.FractionalMaxPool3d(2, output_ratio=0.5)(lib.ones(1, 3, 8, 8, 8))
        assert tuple(out.shape) == (1, 3, 4, 4, 4)
        # the 2-d kernel still takes a last window ending at the input's end
        assert tuple(f.fractional_max_pool2d(lib.ones(1, 1, 3, 3), 2, output_size=2).shape) == (
            1,
            1,
            2,
            2,
        )


# ------------------------------------------------------------------- feature dropout ranks
@pytest.mark.parametrize(
    "build",
    [
        lambda l: l.nn.functional.dropout2d(l.ones(5)),
        lambda l: l.nn.functional.dropout2d(l.ones(5), inplace=True),
        lambda l: l.nn.functional.dropout2d(l.ones(())),
        lambda l: l.nn.functional.dropout3d(l.ones(())),
        lambda l: l.nn.functional.feature_alpha_dropout(l.ones(5), training=True),
        lambda l: l.nn.functional.feature_alpha_dropout(l.ones(()), training=True),
        lambda l: l.nn.Dropout2d()(l.ones(5)),
        lambda l: l.nn.FeatureAlphaDropout()(l.ones(4)),
    ],
)
def test_feature_dropout_needs_a_channel_dim(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(build)


def test_feature_dropout_low_rank_passthroughs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, ember):
            f = lib.nn.functional
            assert f.dropout2d(lib.ones(5), p=1.0).sum().item() == 0
            assert f.dropout2d(lib.ones(5), p=0.0).sum().item() == 5
            assert f.dropout2d(lib.ones(5), training=False).sum().item() == 5
            assert tuple(f.dropout3d(lib.ones(5)).shape) == (5,)
            assert lib.nn.FeatureAlphaDropout().eval()(lib.ones(4)).sum().item() == 4


# ------------------------------------------------------------------- margin losses
@pytest.mark.parametrize(
    "build",
    [
        lambda l: l.nn.MultiLabelMarginLoss()(l.ones(4, 5), l.ones(4, 5)),
        lambda l: l.nn.functional.multilabel_margin_loss(l.ones(4, 5), l.ones(4, 5, dtype=l.int32)),
        lambda l: l.nn.functional.multilabel_margin_loss(l.ones(4, 5), l.ones(4, 5, dtype=l.bool)),
        lambda l: l.nn.functional.multilabel_margin_loss(
            l.ones(4, 5, dtype=l.int64), l.ones(4, 5, dtype=l.int64)
        ),
        lambda l: l.nn.functional.multilabel_margin_loss(l.ones(()), l.ones(())),
        lambda l: l.nn.functional.multilabel_margin_loss(l.ones(5), l.ones(5)),
        lambda l: l.nn.SoftMarginLoss()(l.ones(4, 5), l.ones(2, 5)),
        lambda l: l.nn.functional.soft_margin_loss(l.ones(4, 5, dtype=l.long), l.ones(4, 5)),
        lambda l: l.nn.functional.soft_margin_loss(
            l.ones(4, 5, dtype=l.long), l.ones(4, 5, dtype=l.long), reduction="none"
        ),
        lambda l: l.nn.functional.soft_margin_loss(
            l.ones(4, 5, dtype=l.long), l.ones(4, 5, dtype=l.float64)
        ),
    ],
)
def test_margin_loss_errors(build):
    _same_error(build)


@pytest.mark.parametrize(
    "dtypes", [("float32", "float64"), ("float64", "float32"), ("float32", "int64")]
)
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_soft_margin_loss_dtype_and_grad(dtypes, reduction):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5))
    y = np.sign(rng.standard_normal((4, 5)))
    g = rng.standard_normal((4, 5) if reduction == "none" else ())
    out = []
    for lib in (torch, ember):
        xi = lib.tensor(x, dtype=getattr(lib, dtypes[0]), requires_grad=True)
        yi = lib.tensor(y).to(getattr(lib, dtypes[1]))
        loss = lib.nn.functional.soft_margin_loss(xi, yi, reduction=reduction)
        loss.backward(lib.tensor(g, dtype=loss.dtype))
        out.append((str(loss.dtype).split(".")[-1], loss.detach().numpy(), xi.grad.numpy()))
    assert out[0][0] == out[1][0]
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-6, atol=1e-7)


def test_multilabel_margin_loss_long_targets_still_work():
    x = np.random.default_rng(0).standard_normal((3, 5))
    t = [[3, 0, -1, 1, 1], [1, 2, 3, -1, 0], [4, -1, 0, 0, 0]]
    got = ember.nn.MultiLabelMarginLoss()(ember.tensor(x), ember.tensor(t))
    want = torch.nn.MultiLabelMarginLoss()(torch.tensor(x), torch.tensor(t))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)


# ------------------------------------------------------------------- batch norm statistics pair
@pytest.mark.parametrize(
    "build",
    [
        lambda l: l.nn.functional.batch_norm(l.ones(4, 3), None, l.ones(3), training=True),
        lambda l: l.nn.functional.batch_norm(l.ones(4, 3), l.ones(3), None, training=True),
        lambda l: l.nn.functional.batch_norm(l.ones(1, 3), None, l.ones(3), training=True),
        lambda l: l.nn.functional.batch_norm(l.ones(4, 3), None, l.ones(3), training=False),
        lambda l: l.batch_norm(l.ones(4, 3), None, None, None, l.ones(3), True, 0.1, 1e-5, False),
        lambda l: l.native_batch_norm(l.ones(4, 3), None, None, None, l.ones(3), True, 0.1, 1e-5),
    ],
)
def test_batch_norm_running_stats_pair(build):
    _same_error(build)


def test_batch_norm_module_without_running_var():
    def run(lib):
        m = lib.nn.BatchNorm1d(3)
        m.running_var = None
        return m(lib.ones(4, 3))

    _same_error(run)


# ------------------------------------------------------------------- unfold / fold arguments
@pytest.mark.parametrize(
    "build",
    [
        lambda l: l.nn.functional.unfold(l.ones(2, 3, 4, 4), 2, stride=0),
        lambda l: l.nn.functional.unfold(l.ones(2, 3, 4, 4), 2, stride=(1, 0)),
        lambda l: l.nn.functional.unfold(l.ones(2, 3, 4, 4), 2, dilation=0),
        lambda l: l.nn.functional.unfold(l.ones(2, 3, 4, 4), 0),
        lambda l: l.nn.functional.unfold(l.ones(2, 3, 4, 4), 2, padding=-1),
        lambda l: l.nn.functional.unfold(l.ones(2, 2), 0),
        lambda l: l.nn.functional.unfold(l.ones(2, 3, 4, 4), 2, stride=0, dilation=0, padding=-1),
        lambda l: l.nn.functional.fold(l.ones(2, 12, 9), 4, 2, stride=0),
        lambda l: l.nn.functional.fold(l.ones(2, 12, 9), 4, 2, dilation=0),
        lambda l: l.nn.functional.fold(l.ones(2, 12, 9), 4, 0),
        lambda l: l.nn.functional.fold(l.ones(2, 12, 9), 4, 2, padding=-1),
        lambda l: l.nn.functional.fold(l.ones(5), 4, 0),
        lambda l: l.nn.functional.fold(l.ones(2, 13, 9), 4, 2, stride=0),
        lambda l: l.nn.functional.fold(l.ones(2, 12, 9), 4, 2, stride=0, dilation=0, padding=-1),
        lambda l: l.nn.Unfold(2, stride=0)(l.ones(2, 3, 4, 4)),
        lambda l: l.nn.Fold(4, 2, dilation=0)(l.ones(2, 12, 9)),
    ],
)
def test_unfold_fold_argument_checks(build):
    _same_error(build)


# ------------------------------------------------------------------- reflect / replicate crops
@pytest.mark.parametrize(
    "shape, pad, mode",
    [
        ((2, 3, 4), (-5, -1), "replicate"),
        ((2, 3, 4), (-2, -2), "replicate"),
        ((3, 4), (-2, -3), "replicate"),
        ((2, 3, 4, 4), (-5, -5, -5, -5), "replicate"),
        ((2, 3, 4, 4), (-2, -2, -2, -2), "replicate"),
        ((2, 3, 4, 4, 4), (-5, -5, -5, -5, -5, -5), "replicate"),
        ((2, 3, 4), (-2, -2), "reflect"),
        ((2, 3, 4), (-3, -3), "reflect"),
        ((2, 3, 4, 4), (-2, -2, -2, -2), "reflect"),
        ((2, 3, 4, 4, 4), (-2, -2, -2, -2, -2, -2), "reflect"),
    ],
)
def test_pad_crop_to_nothing(shape, pad, mode):
    _same_error(lambda l: l.nn.functional.pad(l.ones(*shape), pad, mode=mode))


@pytest.mark.parametrize(
    "shape, pad, mode",
    [
        ((2, 3, 4, 4), (-2, -2, 0, 0), "replicate"),
        ((2, 3, 4, 4), (-2, -2, 0, 0), "reflect"),
        ((2, 3, 4, 4, 4), (0, 0, 0, 0, -2, -2), "reflect"),
        ((2, 3, 4), (1, -2), "replicate"),
    ],
)
def test_pad_crop_keeping_a_dim(shape, pad, mode):
    shapes = [tuple(lib.nn.functional.pad(lib.ones(*shape), pad, mode=mode).shape) for lib in
              (torch, ember)]  # fmt: skip
    assert shapes[0] == shapes[1]
