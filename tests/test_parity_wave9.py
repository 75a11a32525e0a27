"""Parity regressions found by the ninth wave of realistic PyTorch programs (vision and classic
machine learning written without torchvision; torch is the oracle): F.interpolate's grad_fn names
per mode and rank, those of F.pad's modes, adaptive pooling (a mean to 1x1, 1-d through a squeeze),
rot90 and pairwise_distance, F.unfold/F.fold as one Im2Col/Col2Im node (also unbatched) and
unfold's IndexError below 3-D, the losses torch computes in one kernel naming their node like it
(MSE, Huber, smooth L1, soft margin, BCE, BCE with logits, the margin losses, nll_loss2d, class-
probability cross entropy), reduction='elementwise_mean' (read as 'mean' with torch's warning, or
refused where torch refuses it), dropout2d's 3-D warning in eval mode, ConvTranspose's output_size
message, its bias of another dtype and its one ConvolutionBackward0 node, the convolutions'
dtype-mismatch messages (a float64 batch into a float32 model), weight norm's fused node,
autograd.grad checking outputs before inputs, torch.tensor(tensor)'s copy-construct warning; the
dtypes torch's cpu kernels lack (integer/bool/complex resampling, integer unfold,
dilated/transposed integer and bool convolutions, bool reflect/replicate padding, local response
norm, half-precision cdist/pdist) and cdist's compute_mode check; numpy arrays torch refuses or
warns about (negative strides as from ``img[..., ::-1]``, another byte order, unsupported types,
read-only arrays such as ``np.asarray(pil_image)``, a list of arrays), embedding's index dtypes
(uint8 refused, embedding_bag's promotion with the offsets), where's uint8-condition warning,
chain_matmul's deprecation, the linear-algebra nodes torch names after its linalg ops (det,
slogdet, logdet, svdvals, matrix_exp, cross, cholesky_inverse, pinv, lstsq, lu_solve, the
deprecated cholesky and triangular_solve) and those deprecation warnings pointing at the user's
line."""

from __future__ import annotations

import re
import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RS = np.random.RandomState(0)


def _up(shape) -> np.ndarray:
    """A non-uniform upstream gradient of ``shape`` (0-d too)."""
    return np.asarray(RS.randn(*shape), dtype=np.float32)


def _pair(*shape, grad=True):
    a = RS.randn(*shape).astype(np.float32)
    return (
        ember.tensor(a, requires_grad=grad),
        torch.tensor(a, requires_grad=grad),
    )


# ------------------------------------------------------------------ interpolate's grad_fn names
_MODES = {
    1: ["nearest", "nearest-exact", "linear", "area"],
    2: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
    3: ["nearest", "nearest-exact", "trilinear", "area"],
}


@pytest.mark.parametrize("nd, mode", [(nd, m) for nd, modes in _MODES.items() for m in modes])
@pytest.mark.parametrize("kw", [{"scale_factor": 2.0}, {"size": 3}, {"size": 4}])
def test_interpolate_grad_fn_name(nd, mode, kw):
    xe, xt = _pair(1, 2, *[4] * nd)
    if "size" in kw:
        kw = {"size": [kw["size"]] * nd}
    ye = ember.nn.functional.interpolate(xe, mode=mode, **kw)
    yt = torch.nn.functional.interpolate(xt, mode=mode, **kw)
    assert ye.grad_fn.name() == yt.grad_fn.name()
    up = _up(yt.shape)
    (ge,) = ember.autograd.grad(ye, xe, ember.tensor(up))
    (gt,) = torch.autograd.grad(yt, xt, torch.tensor(up))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("kw", [{"scale_factor": 1.5}, {"size": (3, 5)}])
def test_interpolate_antialias_grad_fn_name(mode, kw):
    xe, xt = _pair(1, 2, 4, 5)
    ye = ember.nn.functional.interpolate(xe, mode=mode, antialias=True, **kw)
    yt = torch.nn.functional.interpolate(xt, mode=mode, antialias=True, **kw)
    assert ye.grad_fn.name() == yt.grad_fn.name()
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_interpolate_double_backward_still_works():
    x = ember.randn(1, 1, 3, 4, dtype=ember.float64, requires_grad=True)

    def f(a):
        return ember.nn.functional.interpolate(a, size=(5, 3), mode="bicubic") ** 2

    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))


# ------------------------------------------------------------------ unfold / fold
@pytest.mark.parametrize("batched", [True, False])
def test_unfold_fold_one_node_each(batched):
    shape = (2, 3, 5, 6) if batched else (3, 5, 6)
    xe, xt = _pair(*shape)
    kw = {"kernel_size": (2, 3), "stride": (1, 2), "padding": 1}
    ue = ember.nn.functional.unfold(xe, **kw)
    ut = torch.nn.functional.unfold(xt, **kw)
    assert ue.grad_fn.name() == ut.grad_fn.name() == "Im2ColBackward0"
    assert tuple(ue.shape) == tuple(ut.shape)
    fe = ember.nn.functional.fold(ue, (5, 6), **kw)
    ft = torch.nn.functional.fold(ut, (5, 6), **kw)
    assert fe.grad_fn.name() == ft.grad_fn.name() == "Col2ImBackward0"
    np.testing.assert_allclose(fe.detach().numpy(), ft.detach().numpy(), rtol=1e-5, atol=1e-5)
    up = _up(ft.shape)
    (ge,) = ember.autograd.grad(fe, xe, ember.tensor(up))
    (gt,) = torch.autograd.grad(ft, xt, torch.tensor(up))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-5, atol=1e-5)


def test_unfold_fold_gradcheck():
    F = ember.nn.functional
    x = ember.randn(2, 2, 4, 5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: F.unfold(a, (2, 3), padding=1, stride=2), (x,))
    assert ember.autograd.gradgradcheck(lambda a: F.unfold(a[0], 2), (x,))
    c = ember.randn(8, 6, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: F.fold(a, (3, 4), 2), (c,))
    assert ember.autograd.gradgradcheck(lambda a: F.fold(a, (3, 4), 2), (c,))


def test_unfold_fold_keep_the_batch_name():
    x = ember.randn(2, 3, 4, 4, names=("N", "C", "H", "W"))
    u = ember.nn.functional.unfold(x, 2)
    assert u.names == ("N", None, None)
    assert ember.nn.functional.fold(u, (4, 4), 2).names == ("N", None, None, None)
    assert ember.nn.functional.unfold(x[0].rename(None), 2).names == (None, None)


@pytest.mark.parametrize("shape", [(8,), (8, 8)])
def test_unfold_below_3d_is_an_index_error(shape):
    with pytest.raises(IndexError) as te:
        torch.nn.functional.unfold(torch.zeros(shape), 2)
    with pytest.raises(IndexError) as ee:
        ember.nn.functional.unfold(ember.zeros(shape), 2)
    assert str(ee.value) == str(te.value)


# ------------------------------------------------------------------ losses' node names
_LOSSES = {
    "mse_loss": lambda F, x, y: F.mse_loss,
    "l1_loss": lambda F, x, y: F.l1_loss,
    "huber_loss": lambda F, x, y: F.huber_loss,
    "smooth_l1_loss": lambda F, x, y: F.smooth_l1_loss,
    "smooth_l1_beta0": lambda F, x, y: lambda a, b, **k: F.smooth_l1_loss(a, b, beta=0.0, **k),
    "soft_margin_loss": lambda F, x, y: F.soft_margin_loss,
    "binary_cross_entropy": lambda F, x, y: (
        lambda a, b, **k: F.binary_cross_entropy(a.sigmoid(), b, **k)
    ),
    "bce_weight": lambda F, x, y: (
        lambda a, b, **k: F.binary_cross_entropy(a.sigmoid(), b, weight=b * 0 + 2, **k)
    ),
    "bce_with_logits": lambda F, x, y: F.binary_cross_entropy_with_logits,
    "bce_with_logits_pw": lambda F, x, y: (
        lambda a, b, **k: F.binary_cross_entropy_with_logits(a, b, pos_weight=b[0] * 0 + 3, **k)
    ),
}


def _same_loss(le, lt, xe, xt):
    """Node name, value and gradient (for a non-uniform upstream gradient) equal torch's."""
    assert le.grad_fn.name() == lt.grad_fn.name()
    np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-5, atol=1e-6)
    up = _up(lt.shape)
    (ge,) = ember.autograd.grad(le, xe, ember.tensor(up))
    (gt,) = torch.autograd.grad(lt, xt, torch.tensor(up))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(_LOSSES))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_elementwise_loss_node_names(name, reduction):
    xe, xt = _pair(4, 3)
    y = RS.rand(4, 3).astype(np.float32)
    le = _LOSSES[name](ember.nn.functional, xe, y)(xe, ember.tensor(y), reduction=reduction)
    lt = _LOSSES[name](torch.nn.functional, xt, y)(xt, torch.tensor(y), reduction=reduction)
    _same_loss(le, lt, xe, xt)


def test_weighted_regression_losses_stay_compositions():
    # torch's weight= versions are Python compositions: no MseLoss/HuberLoss node
    xe, xt = _pair(4, 3)
    w = RS.rand(4, 3).astype(np.float32)
    for fn in ("mse_loss", "huber_loss"):
        for r in ("mean", "sum", "none"):
            le = getattr(ember.nn.functional, fn)(
                xe, xe.detach() * 0, reduction=r, weight=ember.tensor(w)
            )
            lt = getattr(torch.nn.functional, fn)(
                xt, xt.detach() * 0, reduction=r, weight=torch.tensor(w)
            )
            assert le.grad_fn.name() == lt.grad_fn.name()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("batched", [True, False])
def test_margin_loss_node_names(reduction, batched):
    shape = (4, 3) if batched else (3,)
    xe, xt = _pair(*shape)
    t = np.array([0, 2, 1, 2]) if batched else np.array(1)
    mt = np.array([[0, 2, -1], [1, -1, 0], [2, 0, 1], [-1, 0, 0]])
    mt = mt if batched else mt[0]
    for fn, tgt in (("multi_margin_loss", t), ("multilabel_margin_loss", mt)):
        le = getattr(ember.nn.functional, fn)(xe, ember.tensor(tgt), reduction=reduction)
        lt = getattr(torch.nn.functional, fn)(xt, torch.tensor(tgt), reduction=reduction)
        assert le.grad_fn.name() == lt.grad_fn.name()
        np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 4, 5), (2, 4, 5, 6), (2, 4, 3, 2, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_2d_node_names(shape, reduction):
    xe, xt = _pair(*shape)
    tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    t = RS.randint(0, 4, size=tshape)
    for fn in ("nll_loss", "cross_entropy"):
        le = getattr(ember.nn.functional, fn)(xe, ember.tensor(t), reduction=reduction)
        lt = getattr(torch.nn.functional, fn)(xt, torch.tensor(t), reduction=reduction)
        assert le.grad_fn.name() == lt.grad_fn.name()
        np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-5)
        up = _up(lt.shape)
        (ge,) = ember.autograd.grad(le, xe, ember.tensor(up))
        (gt,) = torch.autograd.grad(lt, xt, torch.tensor(up))
        np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "kw", [{}, {"label_smoothing": 0.1}, {"weight": np.array([1.0, 2.0, 0.5], np.float32)}]
)
@pytest.mark.parametrize("shape", [(4, 3), (3,), (2, 3, 2, 2)])
def test_cross_entropy_probability_target_node_names(reduction, kw, shape):
    xe, xt = _pair(*shape)
    p = RS.rand(*shape).astype(np.float32)
    ke = {k: ember.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    kt = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    le = ember.nn.functional.cross_entropy(xe, ember.tensor(p), reduction=reduction, **ke)
    lt = torch.nn.functional.cross_entropy(xt, torch.tensor(p), reduction=reduction, **kt)
    _same_loss(le, lt, xe, xt)


def test_loss_node_name_survives_backward():
    x = ember.randn(3, 2, requires_grad=True)
    loss = ember.nn.functional.mse_loss(x, ember.zeros(3, 2))
    loss.backward()
    assert loss.grad_fn.name() == "MseLossBackward0"
    assert repr(loss.grad_fn).startswith("<MseLossBackward0 object at")


# ------------------------------------------------------------------ dropout2d's 3-D warning
@pytest.mark.parametrize("training", [False, True])
def test_dropout2d_3d_input_warns_in_eval_too(training):
    msgs = {}
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = m.nn.functional.dropout2d(m.ones(2, 3, 4), 0.5, training=training)
        msgs[m] = [str(x.message) for x in w]
        assert tuple(y.shape) == (2, 3, 4)
    assert msgs[ember] == msgs[torch]
    assert len(msgs[ember]) == 1


def test_dropout2d_module_eval_warns():
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        ember.nn.Dropout2d().eval()(ember.ones(2, 3, 4))


# ------------------------------------------------------------------ ConvTranspose output_size
@pytest.mark.parametrize("size", [[14, 14], (14, 14), (1, 3, 14, 14), "Size"])
def test_conv_transpose_output_size_message(size):
    msgs = []
    for m in (ember, torch):
        ct = m.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        s = m.Size([14, 14]) if size == "Size" else size
        with pytest.raises(ValueError) as e:
            ct(m.zeros(1, 3, 6, 6), output_size=s)
        msgs.append(str(e.value).replace("ember.", "torch."))
    assert msgs[0] == msgs[1]


def test_conv_transpose_output_size_still_picks_padding():
    for s in ((11, 12), [1, 2, 12, 11]):
        ct = ember.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        y = ct(ember.zeros(1, 3, 6, 6), output_size=s)
        assert tuple(y.shape[2:]) == tuple(s[-2:])


# ------------------------------------------------------------------ negative numpy strides
_CONVERTERS = ["from_numpy", "as_tensor", "tensor", "asarray", "Tensor"]


@pytest.mark.parametrize("fn", _CONVERTERS)
@pytest.mark.parametrize(
    "view", [lambda a: a[:, ::-1], lambda a: a[::-2], lambda a: a.T[::-1], lambda a: a[::-1][:0]]
)
def test_negative_numpy_strides_refused(fn, view):
    a = view(np.arange(12.0).reshape(3, 4))
    msgs = []
    for m in (ember, torch):
        with pytest.raises(ValueError) as e:
            getattr(m, fn)(a)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("fn", _CONVERTERS)
def test_copied_or_positive_strided_arrays_still_convert(fn):
    a = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    for v in (
        np.ascontiguousarray(a[:, ::-1]),
        a[:, ::2],
        a.transpose(2, 0, 1),
        np.zeros((3, 0))[::-1],
    ):
        e = getattr(ember, fn)(v)
        t = getattr(torch, fn)(v)
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


# ------------------------------------------------------------------ conv dtype mismatches
_DT = ["float32", "float64", "float16", "bfloat16", "int64"]
_GEOMS = [  # (batch or None for unbatched, channels, kernel, stride, groups, spatial)
    (1, 2, 3, 1, 1, 6),
    (2, 2, 3, 1, 1, 6),
    (1, 2, 5, 1, 1, 6),
    (1, 2, 1, 1, 1, 6),
    (1, 2, 3, 2, 1, 6),
    (1, 2, 3, 1, 2, 6),
    (1, 16, 3, 1, 1, 40),
    (None, 2, 4, 1, 1, 6),
]


@pytest.mark.parametrize("xd, wd", [(a, b) for a in _DT for b in _DT if a != b])
@pytest.mark.parametrize("bias", ["none", "input", "weight"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_conv_dtype_mismatch_messages(xd, wd, bias, nd, transposed):
    # a float64 batch (numpy data) into a float32 model: torch checks a bias first, then names
    # the backend that met the weight (oneDNN for bfloat16 and some float32 inputs)
    for n, c, k, s, g, sp in _GEOMS:
        msgs = []
        for m in (ember, torch):
            x = m.ones(*((n,) if n else ()), c, *[sp] * nd, dtype=getattr(m, xd))
            w = m.ones(c, c // g, *[k] * nd, dtype=getattr(m, wd))
            b = (
                None
                if bias == "none"
                else m.ones(c, dtype=getattr(m, xd if bias == "input" else wd))
            )
            fn = getattr(m.nn.functional, f"conv_transpose{nd}d" if transposed else f"conv{nd}d")
            with pytest.raises(RuntimeError) as e:
                fn(x, w, b, stride=s, groups=g)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1], (n, c, k, s, g, sp)


@pytest.mark.parametrize("bd", ["float64", "float16", "int64"])
def test_conv_transpose_casts_a_mismatched_bias(bd):
    out = {}
    xa = RS.randn(1, 2, 4, 4).astype(np.float32)
    for m in (ember, torch):
        x = m.tensor(xa, requires_grad=True)
        w = m.ones(2, 3, 3, 3)
        b = m.tensor([1, 2, 3], dtype=getattr(m, bd))
        if bd == "float64":
            b.requires_grad_()
        y = m.nn.functional.conv_transpose2d(x, w, b)
        y.backward(m.ones(y.shape) * 0.5)
        out[m] = (y, b.grad)
    (ye, gbe), (yt, gbt) = out[ember], out[torch]
    assert ye.dtype == ember.float32 and yt.dtype == torch.float32
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5)
    if bd == "float64":
        assert gbe.dtype == ember.float64
        np.testing.assert_allclose(gbe.numpy(), gbt.numpy())


def test_conv_bias_mismatch_still_refused():
    with pytest.raises(RuntimeError, match=r"Input type \(float\) and bias type \(double\)"):
        ember.nn.functional.conv2d(
            ember.ones(1, 2, 4, 4), ember.ones(3, 2, 3, 3), ember.ones(3).double()
        )


@pytest.mark.parametrize("cl", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_is_one_convolution_node(cl, bias):
    names = []
    for m in (ember, torch):
        m.manual_seed(0)
        mod = m.nn.ConvTranspose2d(2, 3, 3, stride=2, bias=bias)
        x = m.ones(2, 2, 4, 4, requires_grad=True)
        if cl:
            x = x.contiguous(memory_format=m.channels_last)
        y = mod(x)
        names.append((y.grad_fn.name(), mod(x[0]).grad_fn.name()))
    assert names[0] == names[1]


# ------------------------------------------------------------------ autograd.grad check order
@pytest.mark.parametrize(
    "call",
    [
        lambda m, a, b: m.autograd.grad(a.sum(), a),
        lambda m, a, b: m.autograd.grad(a.sum(), b),
        lambda m, a, b: m.autograd.grad((b * 2).sum(), a),
        lambda m, a, b: m.autograd.grad(b * 2, a, m.ones(2)),
        lambda m, a, b: m.autograd.grad(b * 2, a),
        lambda m, a, b: m.autograd.grad([b * 2, a], [b], [m.ones(3), m.ones(3)]),
        lambda m, a, b: m.autograd.grad(a.sum(), []),
    ],
)
def test_autograd_grad_checks_outputs_before_inputs(call):
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as e:
            call(m, m.ones(3), m.ones(3, requires_grad=True))
        msgs.append(str(e.value).replace("ember.", "torch."))
    assert msgs[0] == msgs[1]


# ------------------------------------------------------------------ weight norm's node
@pytest.mark.parametrize("dim", [0, 1, 2, -1, None])
@pytest.mark.parametrize("api", ["parametrizations", "hook"])
def test_weight_norm_node_name(dim, api):
    res = []
    w0 = RS.randn(3, 2, 3).astype(np.float32)
    for m in (ember, torch):
        conv = m.nn.Conv1d(2, 3, 3)
        with m.no_grad():
            conv.weight.copy_(m.tensor(w0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            if api == "hook":
                m.nn.utils.weight_norm(conv, dim=dim)
            else:
                m.nn.utils.parametrizations.weight_norm(conv, dim=dim)
        w = conv.weight
        res.append((w.grad_fn.name(), w.detach().numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ reduction='elementwise_mean'
_EM_LOSSES = {
    "mse_loss": lambda F, x, y, t: F.mse_loss(x, y, reduction="elementwise_mean"),
    "l1_loss": lambda F, x, y, t: F.l1_loss(x, y, reduction="elementwise_mean"),
    "bce": lambda F, x, y, t: F.binary_cross_entropy(x, y, reduction="elementwise_mean"),
    "cross_entropy": lambda F, x, y, t: F.cross_entropy(x, t, reduction="elementwise_mean"),
    "nll_loss": lambda F, x, y, t: F.nll_loss(x, t, reduction="elementwise_mean"),
    "kl_div": lambda F, x, y, t: F.kl_div(x, y, reduction="elementwise_mean"),
    "triplet": lambda F, x, y, t: F.triplet_margin_loss(
        x, y, y.flip(0), reduction="elementwise_mean"
    ),
    "ctc": lambda F, x, y, t: F.ctc_loss(
        x.reshape(3, 1, 4).log_softmax(2),
        t[:2].reshape(1, 2) + 1,
        [3],
        [2],
        reduction="elementwise_mean",
    ),
    "multilabel_soft_margin": lambda F, x, y, t: F.multilabel_soft_margin_loss(
        x, y, reduction="elementwise_mean"
    ),
    "poisson_nll": lambda F, x, y, t: F.poisson_nll_loss(x, y, reduction="elementwise_mean"),
    "triplet_with_distance": lambda F, x, y, t: F.triplet_margin_with_distance_loss(
        x, y, y.flip(0), reduction="elementwise_mean"
    ),
    "mlsm_bad": lambda F, x, y, t: F.multilabel_soft_margin_loss(x, y, reduction="avg"),
}


@pytest.mark.parametrize("name", list(_EM_LOSSES))
def test_elementwise_mean_reduction(name):
    x = RS.rand(3, 4).astype(np.float32)
    y = RS.rand(3, 4).astype(np.float32)
    t = np.array([0, 2, 1])
    res = []
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out = _EM_LOSSES[name](m.nn.functional, m.tensor(x), m.tensor(y), m.tensor(t))
                r = ("ok", out.numpy().tolist())
            except ValueError as e:
                r = ("ValueError", str(e))
        res.append((r, [str(x.message) for x in w]))
    assert res[0][1] == res[1][1]
    assert res[0][0][0] == res[1][0][0]
    if res[0][0][0] == "ok":
        np.testing.assert_allclose(res[0][0][1], res[1][0][1], rtol=1e-5)
    else:
        assert res[0][0][1] == res[1][0][1]


# ------------------------------------------------------------------ copy-constructing a tensor
def _copy_warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message).replace("ember.tensor", "torch.tensor") for x in w]


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.tensor(x),
        lambda m, x: m.tensor(x, dtype=m.float64, requires_grad=True),
        lambda m, x: m.tensor(m.tensor(1.0)),
        lambda m, x: x.new_tensor(x),
        lambda m, x: m.Tensor(x),
        lambda m, x: m.FloatTensor(x),
        lambda m, x: m.asarray(x, copy=True),
        lambda m, x: m.as_tensor(x),
        lambda m, x: m.tensor(x.tolist()),
        lambda m, x: m.tensor(x.numpy()),
    ],
)
def test_tensor_from_a_tensor_warns_like_torch(call):
    we = _copy_warnings(lambda: call(ember, ember.ones(2)))
    wt = _copy_warnings(lambda: call(torch, torch.ones(2)))
    assert we == wt


def test_tensor_copy_warning_points_at_the_caller():
    with pytest.warns(UserWarning, match="To copy construct from a tensor") as rec:
        ember.tensor(ember.ones(2))
    assert rec[0].filename == __file__


# ------------------------------------------------------------------ dtypes the cpu kernels lack
def _same_outcome(call):
    res = []
    for m in (ember, torch):
        try:
            r = call(m)
            res.append(("ok", str(r.dtype).split(".")[-1], tuple(r.shape)))
        except (NotImplementedError, RuntimeError, ValueError, TypeError) as e:
            res.append((type(e).__name__, str(e)))
    assert res[0] == res[1]
    return res[0]


_INT_DTYPES = ["int64", "int32", "int16", "int8", "uint8", "bool", "complex64"]


@pytest.mark.parametrize("dt", _INT_DTYPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize(
    "mode", ["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area"]
)
def test_interpolate_refused_dtypes(dt, nd, mode):
    def call(m):
        x = m.ones(2, 3, *[4] * nd).to(getattr(m, dt))
        return m.nn.functional.interpolate(x, size=[3] * nd, mode=mode)

    _same_outcome(call)


@pytest.mark.parametrize("dt", _INT_DTYPES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias_refused_dtypes(dt, mode):
    def call(m):
        x = m.ones(1, 2, 5, 5).to(getattr(m, dt))
        return m.nn.functional.interpolate(x, size=(3, 3), mode=mode, antialias=True)

    _same_outcome(call)


@pytest.mark.parametrize("dt", ["int64", "int32", "uint8", "bool", "float16", "bfloat16"])
def test_unfold_fold_integer_inputs_refused(dt):
    x = np.arange(32).reshape(2, 1, 4, 4) % 3
    _same_outcome(lambda m: m.nn.functional.unfold(m.tensor(x).to(getattr(m, dt)), 2))
    cols = x.reshape(2, 4, 4)
    _same_outcome(lambda m: m.nn.functional.fold(m.tensor(cols).to(getattr(m, dt)), (3, 3), 2))


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8", "uint8", "bool"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize(
    "kw", [{}, {"stride": 2}, {"dilation": 2}, {"groups": 2}, {"padding": 1}, {"kernel": 1}]
)
@pytest.mark.parametrize("transposed", [False, True])
def test_conv_integer_and_bool_kernels(dt, nd, kw, transposed):
    kw = dict(kw)
    k = kw.pop("kernel", 3)

    def call(m):
        x = m.ones(2, 2, *[5] * nd).to(getattr(m, dt))
        w = m.ones(2, 2 // kw.get("groups", 1), *[k] * nd).to(getattr(m, dt))
        name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
        return getattr(m.nn.functional, name)(x, w, **kw)

    if _same_outcome(call)[0] == "ok" and dt != "bool":
        # the integer kernels torch has compute exactly
        x = np.arange(2 * 2 * 5**nd).reshape(2, 2, *[5] * nd) % 7
        w = np.arange(2 * (2 // kw.get("groups", 1)) * k**nd) % 3
        res = []
        for m in (ember, torch):
            xx = m.tensor(x).to(getattr(m, dt))
            ww = m.tensor(w).reshape(2, -1, *[k] * nd).to(getattr(m, dt))
            name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
            res.append(getattr(m.nn.functional, name)(xx, ww, **kw).numpy())
        np.testing.assert_array_equal(res[0], res[1])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_pad_bool_modes(mode, nd):
    _same_outcome(
        lambda m: m.nn.functional.pad(m.ones(1, 2, *[3] * nd, dtype=m.bool), (1, 1) * nd, mode=mode)
    )


@pytest.mark.parametrize(
    "dt", ["float16", "bfloat16", "int64", "int32", "uint8", "bool", "complex64"]
)
@pytest.mark.parametrize("dim", [3, 4, 5])
def test_local_response_norm_dtypes(dt, dim):
    x = np.arange(2 * 4 * 3 ** (dim - 2)).reshape(2, 4, *[3] * (dim - 2)) % 5
    out = _same_outcome(
        lambda m: m.nn.functional.local_response_norm(m.tensor(x).to(getattr(m, dt)), 2)
    )
    if out[0] == "ok":
        re = ember.nn.functional.local_response_norm(ember.tensor(x).to(getattr(ember, dt)), 2)
        rt = torch.nn.functional.local_response_norm(torch.tensor(x).to(getattr(torch, dt)), 2)
        np.testing.assert_allclose(re.float().numpy(), rt.float().numpy(), rtol=1e-2)


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize(
    "rows, p, mode",
    [
        ((30, 3), 2.0, None),
        ((3, 30), 2.0, None),
        ((25, 25), 2.0, None),
        ((26, 3), 1.0, None),
        ((3, 3), 2.0, "use_mm_for_euclid_dist"),
        ((30, 3), 2.0, "donot_use_mm_for_euclid_dist"),
        ((0, 3), 2.0, None),
        ((3, 3), 2.0, "use_mm_for_euclid_dist_if_necessary"),
        ((3, 3), 2.0, "none"),
        ((3, 3), 2.0, "bad"),
    ],
)
def test_cdist_half_and_compute_mode(dt, rows, p, mode):
    def call(m):
        kw = {} if mode is None else {"compute_mode": None if mode == "none" else mode}
        a = m.ones(rows[0], 2, dtype=getattr(m, dt))
        b = m.ones(rows[1], 2, dtype=getattr(m, dt))
        return m.cdist(a, b, p=p, **kw)

    _same_outcome(call)


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "int64", "bool", "complex64", "float64"])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_pdist_dtypes(dt, n):
    _same_outcome(lambda m: m.pdist(m.ones(n, 2).to(getattr(m, dt))))


# ------------------------------------------------------------------ numpy arrays torch refuses
@pytest.mark.parametrize("fn", _CONVERTERS)
@pytest.mark.parametrize(
    "arr",
    [
        np.arange(3, dtype=">f4"),
        np.array(["a", "b"]),
        np.array([1, "a"], dtype=object),
        np.array([1], dtype="datetime64[s]"),
        np.arange(3, dtype=np.uint64),
    ],
)
def test_numpy_byte_order_and_dtype_errors(fn, arr):
    _same_outcome(lambda m: getattr(m, fn)(arr))


@pytest.mark.parametrize("obj", [3.0, [1, 2], np.float64(1.0), np.int64(2), None])
def test_from_numpy_type_error_names_numpy_types(obj):
    msgs = []
    for m in (ember, torch):
        with pytest.raises(TypeError) as e:
            m.from_numpy(obj)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def _msg(w) -> str:
    # torch's C++ warnings end with where they were raised
    return re.sub(r" \(Triggered internally at .*\)$", "", str(w.message))


@pytest.fixture
def warn_always():
    ember.set_warn_always(True)
    torch.set_warn_always(True)
    yield
    ember.set_warn_always(False)
    torch.set_warn_always(False)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, a: m.from_numpy(a),
        lambda m, a: m.as_tensor(a),
        lambda m, a: m.as_tensor(a, dtype=m.float32),
        lambda m, a: m.asarray(a),
        lambda m, a: m.Tensor(a),
        lambda m, a: m.tensor(a),
        lambda m, a: m.from_numpy(np.lib.stride_tricks.sliding_window_view(a, 2)),
    ],
)
def test_read_only_numpy_array_warns(call, warn_always):
    a = np.arange(3.0)
    a.setflags(write=False)
    got = []
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = call(m, a)
        got.append(([_msg(x) for x in w], t.numpy().tolist()))
    assert got[0] == got[1]


def test_read_only_numpy_warning_is_once_per_process():
    from ember.core import runtime as rt

    rt._WARNED_ONCE.discard("numpy_not_writable")
    a = np.arange(3.0)
    a.setflags(write=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.from_numpy(a)
        ember.as_tensor(a)
    assert len(w) == 1
    assert w[0].filename == __file__


# ------------------------------------------------------------------ chain_matmul
@pytest.mark.parametrize(
    "args",
    [(), ((3,),), ((2, 3),), ((2, 3), (3, 2)), ((2, 3), (3, 4), (4, 2)), ((2, 3), (3,))],
)
def test_chain_matmul(args, warn_always):
    res = []
    for m in (ember, torch):
        mats = [m.arange(float(np.prod(s))).reshape(s) for s in args]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = ("ok", m.chain_matmul(*mats).numpy().tolist())
            except RuntimeError as e:
                r = ("RuntimeError", str(e))
        res.append((r, [_msg(x) for x in w]))
    assert res[0] == res[1]
    assert len(res[0][1]) == 1


def test_chain_matmul_of_one_matrix_is_a_copy():
    a = ember.ones(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.chain_matmul(a) is not a


# ------------------------------------------------------------------ embedding index dtypes
_IDX_DTYPES = ["uint8", "int16", "int32", "int64", "bool", "float32"]


@pytest.mark.parametrize("dt", _IDX_DTYPES)
@pytest.mark.parametrize(
    "call",
    [
        lambda m, i, w: m.nn.functional.embedding(i, w),
        lambda m, i, w: m.nn.functional.embedding(i, w, max_norm=1.0),
        lambda m, i, w: m.nn.functional.embedding_bag(i, w, m.tensor([0, 2])),
        lambda m, i, w: m.nn.functional.embedding_bag(i.view(2, 2), w, mode="max"),
        lambda m, i, w: m.nn.functional.embedding_bag(i, w, m.tensor([0, 2]), max_norm=1.0),
    ],
)
def test_embedding_index_dtypes(dt, call):
    res = []
    for m in (ember, torch):
        w = m.arange(12.0).view(4, 3)
        idx = m.tensor([0, 1, 1, 0]).to(getattr(m, dt))
        try:
            res.append(("ok", call(m, idx, w).numpy().round(5).tolist()))
        except (RuntimeError, NotImplementedError) as e:
            res.append((type(e).__name__, str(e)))
    assert res[0] == res[1]


# ------------------------------------------------------------------ where with a uint8 condition
@pytest.mark.parametrize(
    "call",
    [
        lambda m, c: m.where(c, 1.0, 0.0),
        lambda m, c: m.where(c, m.ones(2), m.zeros(2)),
        lambda m, c: m.ones(2).where(c, 0.0),
        lambda m, c: m.where(c)[0],
    ],
)
def test_where_uint8_condition_warns(call, warn_always):
    res = []
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = call(m, m.tensor([1, 0], dtype=m.uint8))
        res.append((r.numpy().tolist(), [_msg(x) for x in w]))
    assert res[0] == res[1]


# ------------------------------------------------------------------ torch.tensor(list of arrays)
@pytest.mark.parametrize(
    "make",
    [
        lambda: [np.ones(2), np.zeros(2)],
        lambda: (np.ones(2), np.zeros(2)),
        lambda: [np.ones(2)],
        lambda: [[1.0, 2.0], np.ones(2)],
        lambda: [[np.ones(2), np.ones(2)]],
        lambda: [np.ones(0), np.ones(0)],
        lambda: [np.float64(1.0), np.float64(2.0)],
        lambda: [[1.0, 2.0], [3.0, 4.0]],
        lambda: [np.ones(2), np.zeros(3)],
        lambda: [np.ones(2), 1.0],
    ],
)
def test_tensor_from_a_list_of_arrays(make, warn_always):
    res = []
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = ("ok", m.tensor(make()).numpy().tolist())
            except (TypeError, ValueError) as e:
                r = (type(e).__name__, str(e))
        # (under set_warn_always torch may repeat the warning per array it meets)
        res.append((r, sorted({_msg(x) for x in w})))
    assert res[0] == res[1]


# ------------------------------------------------------------------ more torch node names
def _grad_fn_and_grads(call, shape):
    res = []
    a = RS.randn(*shape).astype(np.float32)
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        y = call(m, x)
        up = np.asarray(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), np.float32)
        (g,) = m.autograd.grad(y, x, m.tensor(up))
        res.append((y.grad_fn.name(), tuple(y.shape), y.detach().numpy(), g.numpy()))
    (ne, se, ye, ge), (nt, st, yt, gt) = res
    assert (ne, se) == (nt, st)
    np.testing.assert_allclose(ye, yt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ge, gt, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kind", ["both", "one", "crop"])
def test_pad_node_names(mode, nd, kind):
    pad = {"both": (1, 2) * nd, "one": (1, 0) + (0, 0) * (nd - 1), "crop": (-1, 1) * nd}[kind]
    _grad_fn_and_grads(lambda m, x: m.nn.functional.pad(x, pad, mode=mode), (2, 2, *[4] * nd))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 2, "mixed"])
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool_node_names(nd, size, kind):
    osz = (1, 2, 1)[:nd] if size == "mixed" else size
    name = f"adaptive_{kind}_pool{nd}d"
    _grad_fn_and_grads(lambda m, x: getattr(m.nn.functional, name)(x, osz), (2, 3, *[4] * nd))


@pytest.mark.parametrize("size", [(1, 1), (1, 2), 1])
def test_area_interpolation_to_one_pixel_is_a_mean(size):
    _grad_fn_and_grads(
        lambda m, x: m.nn.functional.interpolate(x, size=size, mode="area"), (2, 3, 4, 5)
    )


@pytest.mark.parametrize("k", [0, 1, 2, 3, -1, 5])
@pytest.mark.parametrize("dims", [(2, 3), (3, 2), (0, 1)])
def test_rot90_node_name(k, dims):
    _grad_fn_and_grads(lambda m, x: m.rot90(x, k, dims), (2, 3, 4, 5))


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance_node_name(p, keepdim):
    other = RS.randn(4, 5).astype(np.float32)
    _grad_fn_and_grads(
        lambda m, x: m.nn.functional.pairwise_distance(x, m.tensor(other), p=p, keepdim=keepdim),
        (4, 5),
    )


def test_pairwise_distance_l0_node_name():
    names = [
        m.nn.functional.pairwise_distance(
            m.ones(2, 3, requires_grad=True), m.zeros(2, 3), p=0
        ).grad_fn.name()
        for m in (ember, torch)
    ]
    assert names[0] == names[1]


def test_rot90_gradcheck():
    x = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
    for k in range(4):
        assert ember.autograd.gradcheck(lambda a, k=k: ember.rot90(a, k, (1, 2)), (x,))


# ------------------------------------------------------------------ linear algebra node names
_LINALG_CALLS = {
    "det": lambda m, A: m.det(A),
    "linalg.det": lambda m, A: m.linalg.det(A),
    "slogdet": lambda m, A: m.linalg.slogdet(A)[1],
    "logdet": lambda m, A: m.logdet(A),
    "svdvals": lambda m, A: m.linalg.svdvals(A),
    "matrix_exp": lambda m, A: m.linalg.matrix_exp(A * 0.1),
    "cross": lambda m, A: m.cross(A, A.flip(0), dim=1),
    "linalg.cross": lambda m, A: m.linalg.cross(A, A.flip(0)),
    "cholesky_inverse": lambda m, A: m.cholesky_inverse(m.linalg.cholesky(A)),
    "pinv": lambda m, A: m.linalg.pinv(A),
    "lstsq": lambda m, A: m.linalg.lstsq(A, A[:, :2]).solution,
    "lstsq vector": lambda m, A: m.linalg.lstsq(A, A[:, 0]).solution,
    "lu_solve": lambda m, A: m.linalg.lu_solve(*m.linalg.lu_factor(A), A[:, :2]),
}


@pytest.mark.parametrize("name", list(_LINALG_CALLS))
def test_linalg_node_names(name):
    a = RS.randn(3, 3)
    a = a @ a.T + 3 * np.eye(3)  # symmetric positive definite
    res = []
    for m in (ember, torch):
        A = m.tensor(a, requires_grad=True)
        y = _LINALG_CALLS[name](m, A)
        up = m.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
        (g,) = m.autograd.grad(y, A, up)
        res.append((y.grad_fn.name(), y.detach().numpy(), g.numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-6, atol=1e-8)


def test_hermitian_pinv_node_name():
    names = [
        m.linalg.pinv(m.eye(3, requires_grad=True) * 2, hermitian=True).grad_fn.name()
        for m in (ember, torch)
    ]
    assert names[0] == names[1]


@pytest.mark.parametrize(
    "name, call",
    [
        ("cholesky", lambda m, A: m.cholesky(A)),
        ("triangular_solve", lambda m, A: m.triangular_solve(A, A).solution),
    ],
)
def test_deprecated_linalg_nodes_and_warning_line(name, call):
    from ember.core import runtime

    runtime._WARNED_ONCE.discard(name)
    names = []
    for m in (ember, torch):
        A = m.eye(3, dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = call(m, A)
        names.append(y.grad_fn.name())
        if m is ember:
            assert [x.filename for x in w] == [__file__]
    assert names[0] == names[1]
