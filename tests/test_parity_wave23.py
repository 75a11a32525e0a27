"""Parity regressions found by the twenty-third wave, a function-by-function sweep of
torch.nn.functional (every function's options, dtypes, empty and unbatched inputs, gradients
with a non-uniform upstream gradient, grad_fn names and the errors for bad arguments; torch is the
oracle): the in-place activations' own nodes (EluBackward1, CeluBackward1, LeakyReluBackward1,
ThresholdBackward1, RreluWithNoiseBackward0/1), elu/selu/celu/leaky_relu/softplus/softshrink and
their gradients (hardsigmoid's and hardswish's too) computed in float32 for float16/bfloat16
inputs (softplus returned float32 for bfloat16), the BCE losses' integer-input errors, cosine_similarity of mixed dtypes,
nll_loss/cross_entropy refusing a weight of another dtype, the 1-d pools' and max_unpool's node
names and max_unpool's output_size message, adaptive average pooling's mean path (integer errors,
complex inputs) and kernel names, the adaptive pools' output_size errors (None, negative sizes:
the 1-d pools' 2-d messages), lp_pool's kernel_size errors, channels_last kept by padded average
pooling and by pixel/channel shuffles (and dropped by circular padding, as torch's copy does),
conv's "at least groups" weight check, conv_transpose's bias message and conv_transpose1d's
output-padding message, conv_tbc's node, padding='same' warning once, affine_grid printing the
size as given, instance_norm's node, group_norm's num_groups checks, batch_norm's running-stat
dtype checks, unbatched dropout1d/dropout3d being views of a squeeze, embedding's 2-D weight
check, embedding_bag's offsets and index messages, scaled_dot_product_attention's mask with
is_causal on the math path, integer inputs and no keys, ctc_loss's infeasible-sample gradients
and length checks, and the activations' TypeError for an input that is not a Tensor."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = [[1.5, -2.0, 0.0, 0.3], [3.25, 0.5, -7.0, -0.1]]


def _F(m):
    return m.nn.functional


def _err(fn):
    """(type name, message) of what ``fn`` raises, for torch and ember."""
    out = []
    for m in (torch, ember):
        with pytest.raises(Exception) as ei:
            fn(m)
        out.append((type(ei.value).__name__, str(ei.value)))
    return out


def _same_error(fn):
    t, e = _err(fn)
    assert e == t


def _grads(fn, *arrays):
    """fn(m, *tensors) in float64 for both, backward with a non-uniform upstream gradient:
    (outputs, gradients) per library."""
    res = []
    for m in (torch, ember):
        ins = [m.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
        y = fn(m, *ins)
        g = np.linspace(0.5, 2.0, int(np.prod(tuple(y.shape)))).reshape(tuple(y.shape))
        y.backward(m.tensor(g))
        res.append((y.detach().numpy(), [i.grad.numpy() for i in ins], y.grad_fn.name()))
    return res


# ------------------------------------------------------------------ in-place activation nodes
INPLACE = [
    ("elu", lambda F, x: F.elu(x, 0.7, inplace=True), "EluBackward1"),
    ("elu_", lambda F, x: F.elu_(x), "EluBackward1"),
    ("selu", lambda F, x: F.selu(x, inplace=True), "EluBackward1"),
    ("celu", lambda F, x: F.celu(x, 1.3, inplace=True), "CeluBackward1"),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2, inplace=True), "LeakyReluBackward1"),
    ("threshold", lambda F, x: F.threshold(x, 0.2, -1.0, inplace=True), "ThresholdBackward1"),
    ("threshold_", lambda F, x: F.threshold_(x, 0.2, -1.0), "ThresholdBackward1"),
    ("rrelu", lambda F, x: F.rrelu(x, inplace=True), "RreluWithNoiseBackward1"),
    ("hardtanh", lambda F, x: F.hardtanh(x, inplace=True), "HardtanhBackward0"),
]


@pytest.mark.parametrize("name, fn, node", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_activation_nodes_values_and_grads(name, fn, node):
    (ty, tg, tn), (ey, eg, en) = _grads(lambda m, x: fn(_F(m), x * 1.0), X)
    assert en == tn == node
    np.testing.assert_allclose(ey, ty, rtol=1e-12)
    # (torch's CeluBackward1 rounds its alpha through float32: 4e-8 off in float64)
    np.testing.assert_allclose(eg[0], tg[0], rtol=1e-7)


@pytest.mark.parametrize("training", [False, True])
def test_rrelu_node_name(training):
    names = [
        _F(m).rrelu(m.tensor(X, requires_grad=True), training=training).grad_fn.name()
        for m in (torch, ember)
    ]
    assert names[1] == names[0] == "RreluWithNoiseBackward0"


# ------------------------------------------------------------------ 16-bit activations
HALF = [
    ("elu", lambda F, x: F.elu(x, 0.7)),
    ("selu", lambda F, x: F.selu(x)),
    ("celu", lambda F, x: F.celu(x, 1.3)),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2)),
    ("softplus", lambda F, x: F.softplus(x, beta=2.0, threshold=3.0)),
    ("softplus_default", lambda F, x: F.softplus(x)),
    ("softshrink", lambda F, x: F.softshrink(x, 0.4)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x)),
    ("hardswish", lambda F, x: F.hardswish(x)),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name, fn", HALF, ids=[c[0] for c in HALF])
def test_half_activations_round_once(name, fn, dtype):
    v = np.linspace(-7.0, 4.0, 45).tolist()
    t = fn(torch.nn.functional, torch.tensor(v, dtype=getattr(torch, dtype)))
    e = fn(ember.nn.functional, ember.tensor(v, dtype=getattr(ember, dtype)))
    assert str(e.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name, fn", HALF, ids=[c[0] for c in HALF])
def test_half_activation_gradients_round_once(name, fn, dtype):
    v = np.linspace(-7.0, 4.0, 45).tolist()
    grads = []
    for m in (torch, ember):
        x = m.tensor(v, dtype=getattr(m, dtype), requires_grad=True)
        fn(m.nn.functional, x).backward(m.linspace(0.5, 2.0, 45).to(getattr(m, dtype)))
        assert str(x.grad.dtype).split(".")[-1] == dtype
        grads.append(x.grad.float().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


# ------------------------------------------------------------------ losses
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _F(m).binary_cross_entropy(m.tensor([1, 0]), m.tensor([1, 0])),
        lambda m: _F(m).binary_cross_entropy(m.tensor([True]), m.tensor([True])),
        lambda m: _F(m).binary_cross_entropy_with_logits(m.tensor([1, 0]), m.tensor([1.0, 0.0])),
        lambda m: _F(m).binary_cross_entropy_with_logits(m.tensor([1, 0]), m.tensor([1, 0])),
        lambda m: _F(m).binary_cross_entropy_with_logits(m.tensor([True]), m.tensor([True])),
        lambda m: _F(m).binary_cross_entropy_with_logits(m.tensor([1.0, 0.0]), m.tensor([1, 0])),
        lambda m: _F(m).multilabel_soft_margin_loss(m.tensor([[1, 0]]), m.tensor([[1.0, 0.0]])),
    ],
)
def test_bce_losses_refuse_integer_inputs(fn):
    _same_error(fn)


def test_multilabel_soft_margin_loss_integer_target_passes():
    t = _F(torch).multilabel_soft_margin_loss(torch.tensor([[1.0, -2.0]]), torch.tensor([[1, 0]]))
    e = _F(ember).multilabel_soft_margin_loss(ember.tensor([[1.0, -2.0]]), ember.tensor([[1, 0]]))
    assert e.dtype == ember.float32
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _F(m).nll_loss(
            m.randn(4, 3, dtype=m.float64), m.tensor([0, 1, 2, 5]), weight=m.ones(3)
        ),
        lambda m: _F(m).nll_loss(m.randn(4, 3), m.tensor([0, 1, 2, 1]), weight=m.ones(3).double()),
        lambda m: _F(m).nll_loss(
            m.randn(2, 3, 2, 2), m.zeros(2, 2, 2).long(), weight=m.ones(3).double()
        ),
        lambda m: _F(m).nll_loss(m.randn(2, 3, 2), m.zeros(2, 2).long(), weight=m.ones(3).half()),
        lambda m: _F(m).cross_entropy(
            m.randn(4, 3, dtype=m.float64), m.tensor([0, 1, 2, 1]), weight=m.ones(3)
        ),
        lambda m: _F(m).cross_entropy(
            m.randn(4, 3), m.tensor([0, 1, 2, 1]), weight=m.ones(3).double(), label_smoothing=0.1
        ),
        # the weight's size is checked before its dtype
        lambda m: _F(m).nll_loss(m.randn(4, 3), m.tensor([0, 1, 2, 1]), weight=m.ones(2).double()),
    ],
)
def test_class_losses_refuse_a_weight_of_another_dtype(fn):
    _same_error(fn)


def test_ctc_infeasible_sample_gradient_is_nan():
    lp = np.log(np.random.default_rng(1).dirichlet(np.ones(4), size=(6, 2)))
    out = []
    for m in (torch, ember):
        x = m.tensor(lp, requires_grad=True)
        loss = _F(m).ctc_loss(
            x,
            m.tensor([[1, 1, 1], [1, 1, 1]]),
            m.tensor([3, 5]),
            m.tensor([3, 3]),
            reduction="none",
        )
        loss.backward(m.tensor([1.0, 2.0], dtype=m.float64))
        out.append((loss.detach().numpy(), x.grad.numpy()))
    (tl, tg), (el, eg) = out
    np.testing.assert_allclose(el, tl, rtol=1e-10)
    assert np.isnan(eg[:3, 0]).all() and (eg[3:, 0] == 0).all()
    np.testing.assert_allclose(eg, tg, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _F(m).ctc_loss(
            m.randn(6, 2, 4).log_softmax(-1),
            m.tensor([[1, 1]]),
            m.tensor([6.0, 5.0]),
            m.tensor([2, 2]),
        ),
        lambda m: _F(m).ctc_loss(
            m.randn(6, 2, 4).log_softmax(-1),
            m.tensor([[1, 1]]),
            m.tensor([6, 5]),
            m.tensor([2.0, 2.0]),
        ),
        lambda m: _F(m).ctc_loss(
            m.randn(6, 4).log_softmax(-1), m.tensor([1, 1]), m.tensor([6, 5]), m.tensor([2])
        ),
    ],
)
def test_ctc_length_checks(fn):
    _same_error(fn)


# ------------------------------------------------------------------ cosine_similarity
@pytest.mark.parametrize(
    "a_dtype, b_dtype", [("int64", "float32"), ("float32", "int64"), ("float32", "float64")]
)
def test_cosine_similarity_mixed_dtypes(a_dtype, b_dtype):
    a, b = [[1, 2, 3], [4, -5, 6]], [[1, 0, 2], [3, 2, -1]]
    t = _F(torch).cosine_similarity(
        torch.tensor(a, dtype=getattr(torch, a_dtype)),
        torch.tensor(b, dtype=getattr(torch, b_dtype)),
    )
    e = _F(ember).cosine_similarity(
        ember.tensor(a, dtype=getattr(ember, a_dtype)),
        ember.tensor(b, dtype=getattr(ember, b_dtype)),
    )
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_cosine_similarity_integer_error(dtype):
    _same_error(
        lambda m: _F(m).cosine_similarity(
            m.tensor([[1, 0]], dtype=getattr(m, dtype)), m.tensor([[1, 1]], dtype=getattr(m, dtype))
        )
    )


# ------------------------------------------------------------------ pooling
POOL_NODES = [
    lambda F, x: F.max_pool1d(x, 2),
    lambda F, x: F.max_pool1d(x, 2, return_indices=True)[0],
    lambda F, x: F.max_pool1d_with_indices(x, 3, 2)[0],
    lambda F, x: F.avg_pool1d(x, 3, 2, 1),
    lambda F, x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2),
]


@pytest.mark.parametrize("k", range(len(POOL_NODES)))
@pytest.mark.parametrize("batched", [True, False])
def test_1d_pool_nodes_and_grads(k, batched):
    x = np.random.default_rng(k).standard_normal((2, 3, 8) if batched else (3, 8))
    (ty, tg, tn), (ey, eg, en) = _grads(lambda m, a: POOL_NODES[k](_F(m), a), x)
    assert en == tn == "SqueezeBackward1"
    np.testing.assert_allclose(ey, ty, rtol=1e-12)
    np.testing.assert_allclose(eg[0], tg[0], rtol=1e-12)


@pytest.mark.parametrize("nd", [2, 3])
def test_max_unpool_node_names(nd):
    x = np.random.default_rng(nd).standard_normal((2, 3) + (4,) * nd)

    def fn(m, a):
        F = _F(m)
        out, idx = getattr(F, f"max_pool{nd}d")(a, 2, return_indices=True)
        return getattr(F, f"max_unpool{nd}d")(out, idx, 2)

    (_, tg, tn), (_, eg, en) = _grads(fn, x)
    assert en == tn == f"MaxUnpool{nd}DBackward0"
    np.testing.assert_allclose(eg[0], tg[0], rtol=1e-12)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("size", ["list", "tuple"])
def test_max_unpool_output_size_message_prints_it_as_given(nd, size):
    def fn(m):
        F = _F(m)
        out, idx = getattr(F, f"max_pool{nd}d")(m.randn((2, 3) + (8,) * nd), 2, return_indices=True)
        osz = [20] * nd if size == "list" else (20,) * nd
        return getattr(F, f"max_unpool{nd}d")(out, idx, 2, output_size=osz)

    _same_error(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _F(m).adaptive_avg_pool1d(m.ones(2, 3, 4, dtype=m.int64), 2),
        lambda m: _F(m).adaptive_avg_pool1d(m.ones(2, 3, 4, dtype=m.int64), 1),
        lambda m: _F(m).adaptive_avg_pool2d(m.ones(2, 3, 4, 4, dtype=m.int64), 1),
        lambda m: _F(m).adaptive_avg_pool2d(m.ones(2, 3, 4, 4, dtype=m.bool), (1, 1)),
        lambda m: _F(m).adaptive_avg_pool2d(m.ones(2, 3, 4, 4, dtype=m.bool), 2),
        lambda m: _F(m).adaptive_avg_pool3d(m.ones(1, 2, 4, 4, 4, dtype=m.int64), 1),
        lambda m: _F(m).adaptive_avg_pool3d(m.ones(1, 2, 4, 4, 4, dtype=m.int64), 2),
        lambda m: _F(m).adaptive_max_pool1d(m.ones(2, 3, 4, dtype=m.bool), 1),
        lambda m: _F(m).adaptive_max_pool3d(m.ones(1, 2, 4, 4, 4, dtype=m.int64), 2),
        lambda m: _F(m).adaptive_avg_pool2d(m.ones(2, 3, 4, 4, dtype=m.complex64), 2),
    ],
)
def test_adaptive_pool_dtype_errors(fn):
    _same_error(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _F(m).adaptive_avg_pool1d(m.ones(2, 3, 4), -2),
        lambda m: _F(m).adaptive_avg_pool1d(m.ones(3, 4), -1),
        lambda m: _F(m).adaptive_max_pool1d(m.ones(2, 3, 4), -1),
        lambda m: _F(m).adaptive_avg_pool2d(m.ones(1, 2, 4, 5), (2, -1)),
        lambda m: _F(m).adaptive_avg_pool3d(m.ones(1, 2, 4, 5, 6), (2, -1, 3)),
        lambda m: _F(m).adaptive_max_pool3d(m.ones(1, 2, 4, 5, 6), (2, -1, 3)),
        lambda m: _F(m).adaptive_avg_pool1d(m.ones(2, 3, 4), None),
        lambda m: _F(m).adaptive_max_pool1d(m.ones(2, 3, 4), None),
        lambda m: _F(m).adaptive_avg_pool2d(m.ones(2, 3, 4, 4), None),
        lambda m: _F(m).adaptive_max_pool3d(m.ones(1, 2, 4, 4, 4), None),
        lambda m: _F(m).adaptive_avg_pool1d(m.ones(2, 4), (None,)),
        lambda m: _F(m).lp_pool1d(m.ones(1, 2, 6), 2, 2.0),
        lambda m: _F(m).lp_pool2d(m.ones(1, 2, 6, 6), 2, 2.0),
        lambda m: _F(m).lp_pool2d(m.ones(1, 2, 6, 6), 2, (2, 2, 2)),
        lambda m: _F(m).lp_pool2d(m.ones(1, 2, 6, 6), 2, (2,)),
        lambda m: _F(m).lp_pool3d(m.ones(1, 2, 4, 4, 4), 2, [2, 2]),
    ],
)
def test_adaptive_and_lp_pool_argument_errors(fn):
    _same_error(fn)


def test_adaptive_avg_pool_to_one_takes_complex_inputs():
    a = np.random.default_rng(0).standard_normal((2, 3, 4, 5, 2)).view(np.complex128)[..., 0]
    t = _F(torch).adaptive_avg_pool2d(torch.tensor(a), 1)
    e = _F(ember).adaptive_avg_pool2d(ember.tensor(a), 1)
    assert e.dtype == ember.complex128 and tuple(e.shape) == tuple(t.shape) == (2, 3, 1, 1)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "kw",
    [
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "ceil_mode": True,
            "count_include_pad": False,
        },
        {"kernel_size": 3, "padding": 1, "divisor_override": 2},
        {"kernel_size": 2},
    ],
)
def test_avg_pool2d_keeps_channels_last(kw):
    x = np.random.default_rng(1).standard_normal((2, 4, 7, 6))
    out = []
    for m in (torch, ember):
        r = _F(m).avg_pool2d(m.tensor(x).contiguous(memory_format=m.channels_last), **kw)
        out.append((r.numpy(), r.is_contiguous(memory_format=m.channels_last)))
    assert out[1][1] is out[0][1] is True
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12)


# ------------------------------------------------------------------ shuffles
@pytest.mark.parametrize(
    "fn",
    [
        lambda F, x: F.pixel_shuffle(x, 2),
        lambda F, x: F.pixel_unshuffle(x, 2),
        lambda F, x: F.channel_shuffle(x, 2),
    ],
)
def test_shuffles_keep_channels_last(fn):
    x = np.arange(2 * 8 * 4 * 4, dtype=np.float32).reshape(2, 8, 4, 4)
    out = []
    for m in (torch, ember):
        r = fn(_F(m), m.tensor(x).contiguous(memory_format=m.channels_last))
        out.append((r.numpy(), r.is_contiguous(memory_format=m.channels_last)))
    assert out[1][1] is out[0][1] is True
    np.testing.assert_array_equal(out[1][0], out[0][0])


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_layout_of_a_channels_last_input(mode):
    x = np.arange(2 * 3 * 5 * 4, dtype=np.float32).reshape(2, 3, 5, 4)
    out = []
    for m in (torch, ember):
        r = _F(m).pad(
            m.tensor(x).contiguous(memory_format=m.channels_last), (1, 2, 2, 1), mode=mode
        )
        out.append((r.numpy(), r.is_contiguous(memory_format=m.channels_last), r.is_contiguous()))
    assert out[1][1:] == out[0][1:]
    np.testing.assert_array_equal(out[1][0], out[0][0])


# ------------------------------------------------------------------ convolution
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_conv_weight_with_fewer_rows_than_groups(nd, transposed):
    name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
    _same_error(
        lambda m: getattr(_F(m), name)(
            m.randn((2, 4) + (5,) * nd), m.randn((2, 2) + (3,) * nd), groups=3
        )
    )


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("batched", [True, False])
def test_conv_transpose_bias_message(nd, batched):
    shape = (1, 2) + (4,) * nd if batched else (2,) + (4,) * nd
    _same_error(
        lambda m: getattr(_F(m), f"conv_transpose{nd}d")(
            m.ones(shape), m.ones((2, 3) + (2,) * nd), m.ones(2)
        )
    )


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("dilation", [1, 2])
def test_conv_transpose1d_output_padding_message(batched, dilation):
    shape = (2, 4, 9) if batched else (4, 9)
    _same_error(
        lambda m: _F(m).conv_transpose1d(
            m.randn(*shape), m.randn(4, 2, 3), stride=2, output_padding=2, dilation=dilation
        )
    )


def test_conv_tbc_node_and_grads():
    r = np.random.default_rng(2)
    x, w, b = r.standard_normal((9, 2, 4)), r.standard_normal((3, 4, 5)), r.standard_normal(5)
    (ty, tg, tn), (ey, eg, en) = _grads(lambda m, a, ww, bb: _F(m).conv_tbc(a, ww, bb, 1), x, w, b)
    assert en == tn == "ConvTbcBackward0"
    np.testing.assert_allclose(ey, ty, rtol=1e-10)
    for e, t in zip(eg, tg):
        np.testing.assert_allclose(e, t, rtol=1e-10)


def test_same_padding_even_kernel_warns_once():
    from ember.core.ops import convolution

    convolution._SAME_WARNED[0] = False
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for _ in range(3):
            _F(ember).conv2d(ember.randn(1, 2, 5, 5), ember.randn(3, 2, 2, 2), padding="same")
    msgs = [str(w.message) for w in rec]
    assert len(msgs) == 1 and msgs[0].startswith("Using padding='same' with even kernel lengths")


# ------------------------------------------------------------------ affine_grid
@pytest.mark.parametrize(
    "theta, size",
    [((2, 2, 4), [2, 3, 4, 5]), ((2, 3, 3), [2, 3, 4, 5, 2]), ((2, 2, 3), [2, 3, 4]),
     ((2, 2, 3), [2, 3, 0, 5]), ((2, 2, 3), (2, 3, 0, 5))],
)  # fmt: skip
def test_affine_grid_messages_print_the_size_as_given(theta, size):
    t, e = _err(lambda m: _F(m).affine_grid(m.ones(theta), size, align_corners=False))
    assert e[0] == t[0]
    assert e[1].replace("ember.", "torch.") == t[1]


# ------------------------------------------------------------------ normalization
@pytest.mark.parametrize("stats", [False, True])
def test_instance_norm_node_name(stats):
    x = np.random.default_rng(3).standard_normal((2, 3, 4))

    def fn(m, a):
        if stats:
            return _F(m).instance_norm(
                a, m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64), use_input_stats=False
            )
        return _F(m).instance_norm(a)

    (ty, tg, tn), (ey, eg, en) = _grads(fn, x)
    assert en == tn == "ViewBackward0"
    np.testing.assert_allclose(ey, ty, rtol=1e-10)
    np.testing.assert_allclose(eg[0], tg[0], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _F(m).group_norm(m.randn(2, 3, 4), 0),
        lambda m: _F(m).group_norm(m.randn(2, 3, 4), -1),
        lambda m: m.group_norm(m.randn(2, 3, 4), 0),
        lambda m: m.group_norm(m.randn(2, 3, 4), -3),
    ],
)
def test_group_norm_num_groups_errors(fn):
    _same_error(fn)


@pytest.mark.parametrize(
    "dt, rm, rv, w, training",
    [
        ("float64", "float32", "float32", None, True),
        ("float64", "float32", "float32", None, False),
        ("float32", "float64", "float64", None, False),
        ("float32", "float64", "float32", None, False),
        ("bfloat16", "float64", "float64", None, False),
        ("float64", "float32", "float32", "float64", False),
        ("float16", "float32", "float16", None, False),
        ("float32", "float32", "float16", None, False),
    ],
)
def test_batch_norm_running_stats_dtype(dt, rm, rv, w, training):
    def fn(m):
        return _F(m).batch_norm(
            m.randn(3, 4, 5).to(getattr(m, dt)),
            m.zeros(4, dtype=getattr(m, rm)),
            m.ones(4, dtype=getattr(m, rv)),
            None if w is None else m.ones(4, dtype=getattr(m, w)),
            training=training,
        )

    _same_error(fn)


def test_batch_norm_half_input_float_stats_pass():
    x = np.random.default_rng(4).standard_normal((3, 4, 5))
    t = _F(torch).batch_norm(
        torch.tensor(x).bfloat16(), torch.zeros(4), torch.ones(4), training=False
    )
    e = _F(ember).batch_norm(
        ember.tensor(x).bfloat16(), ember.zeros(4), ember.ones(4), training=False
    )
    assert e.dtype == ember.bfloat16
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=1e-2)


# ------------------------------------------------------------------ dropout
@pytest.mark.parametrize(
    "name, shape", [("dropout1d", (3, 4)), ("dropout3d", (3, 4, 5, 2)), ("dropout3d", (3, 4))]
)
@pytest.mark.parametrize("p, training", [(0.5, True), (1.0, True), (0.0, True), (0.5, False)])
def test_unbatched_feature_dropout_is_a_squeeze_view(name, shape, p, training):
    names = []
    for m in (torch, ember):
        x = m.ones(shape, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(_F(m), name)(x, p, training=training)
        assert y is not x and tuple(y.shape) == shape
        names.append(y.grad_fn.name())
    assert names[1] == names[0] == "SqueezeBackward1"


def test_unbatched_feature_dropout_inplace_node():
    names = []
    for m in (torch, ember):
        x = m.ones(3, 4, requires_grad=True) * 1.0
        y = _F(m).dropout1d(x, 0.5, inplace=True)
        assert y is x
        names.append(y.grad_fn.name())
    assert names[1] == names[0] == "SqueezeBackward4"


def test_unbatched_feature_dropout_values():
    for m in (torch, ember):
        m.manual_seed(0)
    x = np.arange(1.0, 13.0).reshape(3, 4)
    for m in (torch, ember):
        y = _F(m).dropout1d(m.tensor(x), 0.5).numpy()
        rows = [set(r / x[i]) for i, r in enumerate(y)]
        assert all(r in ({0.0}, {2.0}) for r in rows)  # whole channels dropped or scaled


# ------------------------------------------------------------------ embeddings
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: _F(m).embedding(m.tensor([0]), m.randn(6)),
        lambda m: _F(m).embedding_bag(m.tensor([0, 2, 4]), m.randn(6, 3), m.tensor([0, 5])),
        lambda m: _F(m).embedding_bag(m.tensor([[0, 7]]), m.randn(6, 3)),
        lambda m: _F(m).embedding_bag(m.tensor([0, -1, 2]), m.randn(6, 3), m.tensor([0, 2])),
        lambda m: _F(m).embedding_bag(m.tensor([[0, 7]]), m.randn(6, 3), mode="sum"),
        lambda m: _F(m).embedding_bag(m.tensor([[0, 7]]), m.randn(6, 3), mode="max"),
        lambda m: _F(m).embedding_bag(m.tensor([[0, -1]]), m.randn(6, 3), padding_idx=1),
    ],
)
def test_embedding_argument_errors(fn):
    _same_error(fn)


# ------------------------------------------------------------------ attention
def test_sdpa_mask_with_is_causal_off_the_flash_path():
    r = np.random.default_rng(5)
    q, k, v = (
        r.standard_normal((2, 4, 3, 8)),
        r.standard_normal((2, 4, 5, 8)),
        r.standard_normal((2, 4, 5, 6)),
    )
    mask = r.random((3, 5)) > 0.3
    for qq, kk, vv in ((q, k, v), (q[0], k[0], v[0, ..., :8]), (q, k[:1], v[:1, ..., :8])):
        _same_error(
            lambda m, qq=qq, kk=kk, vv=vv: _F(m).scaled_dot_product_attention(
                m.tensor(qq), m.tensor(kk), m.tensor(vv), attn_mask=m.tensor(mask), is_causal=True
            )
        )
    # the flash path (4-d, one head size, no dropout) applies both, as before
    vf = r.standard_normal((2, 4, 5, 8))
    t = _F(torch).scaled_dot_product_attention(
        torch.tensor(q),
        torch.tensor(k),
        torch.tensor(vf),
        attn_mask=torch.tensor(mask),
        is_causal=True,
    )
    e = _F(ember).scaled_dot_product_attention(
        ember.tensor(q),
        ember.tensor(k),
        ember.tensor(vf),
        attn_mask=ember.tensor(mask),
        is_causal=True,
    )
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_sdpa_integer_inputs(dtype):
    _same_error(
        lambda m: _F(m).scaled_dot_product_attention(
            *(m.ones(2, 3, 4, dtype=getattr(m, dtype)) for _ in range(3))
        )
    )


def test_sdpa_without_keys_gives_zeros():
    r = np.random.default_rng(6)
    q = r.standard_normal((2, 4, 3, 8))
    outs = []
    for m in (torch, ember):
        x = m.tensor(q, requires_grad=True)
        y = _F(m).scaled_dot_product_attention(
            x, m.zeros(2, 4, 0, 8, dtype=m.float64), m.zeros(2, 4, 0, 6, dtype=m.float64)
        )
        y.backward(m.ones(2, 4, 3, 6, dtype=m.float64))
        outs.append((y.detach().numpy(), x.grad.numpy()))
    assert outs[1][0].shape == outs[0][0].shape == (2, 4, 3, 6)
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    np.testing.assert_array_equal(outs[1][1], outs[0][1])


# ------------------------------------------------------------------ non-Tensor inputs
@pytest.mark.parametrize(
    "name",
    [
        "elu",
        "selu",
        "celu",
        "gelu",
        "silu",
        "mish",
        "logsigmoid",
        "hardswish",
        "hardsigmoid",
        "relu6",
        "leaky_relu",
        "softplus",
        "hardtanh",
        "softshrink",
        "hardshrink",
    ],
)
@pytest.mark.parametrize("arg", [[1.0, 2.0], None, np.ones(2)])
def test_activations_name_a_non_tensor_input(name, arg):
    _same_error(lambda m: getattr(_F(m), name)(arg))
