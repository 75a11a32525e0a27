"""nn errors a torch user would recognise: uninitialized (lazy) parameters used in ops, a list or
numpy array where F wants a Tensor, cross_entropy's class-probability checks, and
pack_padded_sequence with a length past the padded input."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from harness import assert_same, needs_torch, raises_like_torch, torch

_UNINIT = "Attempted to use an uninitialized parameter in "


# ---------------------------------------------------------------- uninitialized parameters
@pytest.mark.parametrize(
    "use",
    [
        lambda m, p: p + 1,
        lambda m, p: -p,
        lambda m, p: p.sum(),
        lambda m, p: m.exp(p),
        lambda m, p: p == 1,
        lambda m, p: m.nn.init.zeros_(p),
        lambda m, p: m.nn.init.normal_(p),
    ],
    ids=["add", "neg", "sum", "exp", "eq", "zeros_", "normal_"],
)
@pytest.mark.parametrize("which", ["weight", "bias"])
def test_uninitialized_parameter_in_an_op(use, which):
    raises_like_torch(lambda m: use(m, getattr(m.nn.LazyLinear(3), which)), ValueError, _UNINIT)


def test_uninitialized_buffer_in_an_op():
    raises_like_torch(lambda m: m.nn.LazyBatchNorm1d().running_mean * 2, ValueError, _UNINIT)


@needs_torch
def test_lazy_module_still_converts_and_materializes():
    # casts stay allowed before the first call; the first call makes real, usable parameters
    rs = np.random.RandomState(0)
    x, g = rs.randn(4, 5), rs.randn(4, 3)
    el, tl = ember.nn.LazyLinear(3).double(), torch.nn.LazyLinear(3).double()
    assert el.weight.dtype == ember.float64
    el(ember.zeros(1, 5, dtype=ember.float64))
    tl(torch.zeros(1, 5, dtype=torch.float64))
    assert type(el.weight) is ember.nn.Parameter
    with ember.no_grad():
        for name, tp in tl.named_parameters():
            getattr(el, name).copy_(ember.tensor(tp.detach().numpy()))
    res = []
    for m, lin in ((ember, el), (torch, tl)):
        xt = m.tensor(x, requires_grad=True)
        y = lin(xt)
        (y * m.tensor(g)).sum().backward()
        res.append((y, xt.grad, lin.weight.grad, lin.bias.grad))
    for e, t in zip(*res):
        assert_same(e, t)


# ---------------------------------------------------------------- a non-Tensor argument
@pytest.mark.parametrize(
    "call, msg",
    [
        (lambda m: m.nn.functional.relu([1.0, 2.0]), "relu(): argument 'input' (position 1)"),
        (lambda m: m.nn.functional.relu([1.0], inplace=True), "relu_(): argument 'input'"),
        (
            lambda m: m.nn.functional.linear([1.0, 2.0], m.ones(2, 2)),
            "linear(): argument 'input' (position 1) must be Tensor, not list",
        ),
        (
            lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(2, 3), [1.0]),
            "linear(): argument 'bias' (position 3) must be Tensor, not list",
        ),
        (
            lambda m: m.nn.Linear(2, 2)(np.ones((2, 2), np.float32)),
            "linear(): argument 'input' (position 1) must be Tensor, not numpy.ndarray",
        ),
        (
            lambda m: m.nn.functional.layer_norm([1.0, 2.0], (2,)),
            "layer_norm(): argument 'input' (position 1) must be Tensor, not list",
        ),
        (
            lambda m: m.nn.functional.layer_norm(m.ones(2, 3), (3,), [1.0]),
            "layer_norm(): argument 'weight' (position 3) must be Tensor, not list",
        ),
        (
            lambda m: m.nn.functional.dropout([1.0, 2.0]),
            "dropout(): argument 'input' (position 1) must be Tensor, not list",
        ),
        (
            lambda m: m.nn.functional.one_hot([1, 2]),
            "one_hot(): argument 'input' (position 1) must be Tensor, not list",
        ),
        (
            lambda m: m.nn.functional.cross_entropy(m.ones(2, 3), [1, 2]),
            "cross_entropy_loss(): argument 'target' (position 2) must be Tensor, not list",
        ),
        (
            lambda m: m.nn.functional.cross_entropy(
                m.ones(2, 3), m.tensor([1, 2]), weight=[1.0, 1.0, 1.0]
            ),
            "cross_entropy_loss(): argument 'weight' (position 3) must be Tensor, not list",
        ),
        (
            lambda m: m.nn.functional.nll_loss(m.ones(2, 3), [1, 2]),
            "nll_loss_nd(): argument 'target' (position 2) must be Tensor, not list",
        ),
    ],
)
def test_non_tensor_argument_is_a_type_error(call, msg):
    raises_like_torch(call, TypeError, msg)


# ---------------------------------------------------------------- cross_entropy's target checks
def test_cross_entropy_probabilities_reject_ignore_index():
    def call(m):
        x = m.zeros(2, 3)
        return m.nn.functional.cross_entropy(x, m.full((2, 3), 1 / 3), ignore_index=1)

    raises_like_torch(call, RuntimeError, "ignore_index is not supported for floating point target")


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (
            lambda m: m.nn.functional.cross_entropy(m.tensor(1.0), m.tensor(0)),
            RuntimeError,
            "Expected floating point type for target with class probabilities, got Long",
        ),
        (
            lambda m: m.nn.functional.cross_entropy(m.zeros(2, 3), m.zeros(2, 3, dtype=m.long)),
            RuntimeError,
            "Expected floating point type for target with class probabilities, got Long",
        ),
        (
            lambda m: m.nn.functional.cross_entropy(m.tensor(1.0), m.tensor(0.0)),
            IndexError,
            "Dimension specified as 1 but tensor has no dimensions",
        ),
        (
            lambda m: m.nn.functional.cross_entropy(m.tensor(1.0), m.tensor([0])),
            IndexError,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        ),
    ],
)
def test_cross_entropy_target_errors(call, exc, msg):
    raises_like_torch(call, exc, msg)


@needs_torch
@pytest.mark.parametrize("shape", [(4, 3), (3,), (2, 3, 5)])
def test_cross_entropy_probabilities_with_negative_ignore_index(shape):
    # a negative ignore_index never matches a class: allowed, and the loss ignores it
    rs = np.random.RandomState(0)
    x = rs.randn(*shape)
    p = rs.rand(*shape)
    p /= p.sum(1 if len(shape) > 1 else 0, keepdims=True)
    res = []
    for m in (ember, torch):
        xt = m.tensor(x, requires_grad=True)
        y = m.nn.functional.cross_entropy(xt, m.tensor(p), ignore_index=-5, reduction="none")
        up = m.arange(1.0, y.numel() + 1, dtype=m.float64).reshape(y.shape)
        (y * up).sum().backward()
        res.append((y, xt.grad))
    assert_same(res[0][0], res[1][0])
    assert_same(res[0][1], res[1][1], what="grad")


# ---------------------------------------------------------------- pack_padded_sequence
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_sequence_length_past_the_input(enforce_sorted, batch_first):
    # torch does not check and reads past the padded input; ember names the bad length
    x = ember.randn(3, 4, 2) if batch_first else ember.randn(4, 3, 2)
    lengths = [5, 2, 1] if enforce_sorted else [2, 5, 1]
    with pytest.raises(
        RuntimeError, match="at most the padded sequence length 4, but found a length of 5"
    ):
        ember.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
