"""Parity regressions found by the forty-second wave, a function-by-function sweep of torch.nn.init
and torch.nn.utils (every initializer's shapes, errors, generators and statistics; gradient
clipping with every norm type, foreach, empty and mixed inputs; the hook-based and the
parametrization-based weight/spectral norms; parametrize; prune; functional_call; fusion;
parameters_to_vector; the conv weight memory-format conversion; skip_init; torch is the
oracle): trunc_normal_'s tails (an inverse-CDF draw piled up to 5% of the values on a bound of a
window far in a tail; torch rejection-samples), ``clip_grad_norm_``'s warning for an empty
generator of parameters and the foreach wording of an inf norm of an empty gradient, the old
weight_norm's silent wrap of a ``dim`` out of range (and of a 0-dim parameter), prune's
``ln_structured`` norms (torch.norm's semantics: 'nuc' fails, not a TypeError) and its
AssertionError texts, functional_call's checks (a non-dict in a list of dicts, a name that holds
a submodule, None values), the fused linear's dtypes and fusion's AssertionError texts,
``convert_conv2d/3d_weight_memory_format`` (a no-op in ember: now the weights are laid out
channels-last, as torch's), and ``cat``/``hstack``/``vstack``/``dstack`` of an empty list
(torch's texts, where ember named the registry's ``_cat`` kernel)."""

from __future__ import annotations

import math
import warnings

import ember
import numpy as np
import pytest
from harness import same_error

torch = pytest.importorskip("torch")
# torch.nn.utils does not import its prune module itself
pytest.importorskip("torch.nn.utils.prune")


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same_error_text(fn, exc=Exception):
    """Like ``same_error`` with ``torch.Size``/``ember.Size`` (and module paths) made equal."""
    with pytest.raises(exc) as te:
        fn(torch)
    with pytest.raises(exc) as ee:
        fn(ember)
    assert type(ee.value).__name__ == type(te.value).__name__, (ee.value, te.value)
    assert str(ee.value).replace("ember", "torch") == str(te.value)


# ------------------------------------------------------------------ nn.init.trunc_normal_
@pytest.mark.parametrize(
    "mean,std,a,b,dtype",
    [
        (0.0, 1.0, 5.0, 6.0, "float32"),  # far in the right tail: uniform proposals
        (0.0, 1.0, -8.0, -7.0, "float64"),  # far in the left tail
        (0.0, 1.0, -2.0, 2.0, "float32"),  # most of the mass: normal draws redrawn outside
        (1.0, 2.0, 0.0, 3.0, "float32"),
        (0.0, 1.0, -0.1, 0.1, "float32"),  # a narrow window around the mode
    ],
)
def test_trunc_normal_moments_and_no_mass_on_the_bounds(mean, std, a, b, dtype):
    n = 60000
    t = ember.nn.init.trunc_normal_(
        ember.empty(n, dtype=getattr(ember, dtype)), mean, std, a, b
    ).double()
    x = _np(t)
    assert x.min() >= a and x.max() <= b
    # the exact truncated-normal moments
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))
    Z = cdf(beta) - cdf(alpha)
    mu = mean + std * (pdf(alpha) - pdf(beta)) / Z
    var = std**2 * (
        1 + (alpha * pdf(alpha) - beta * pdf(beta)) / Z - ((pdf(alpha) - pdf(beta)) / Z) ** 2
    )
    sd = math.sqrt(var)
    assert abs(x.mean() - mu) < 5 * sd / math.sqrt(n)
    assert abs(x.std() - sd) < 0.03 * sd
    # an inverse-CDF draw rounded thousands of values onto the bounds; a sampler hits one rarely
    assert (x == a).sum() + (x == b).sum() <= 3


def test_trunc_normal_tail_matches_torch_statistics():
    torch.manual_seed(0)
    ember.manual_seed(0)
    t = _np(torch.nn.init.trunc_normal_(torch.empty(100000), 0, 1, 5, 6))
    e = _np(ember.nn.init.trunc_normal_(ember.empty(100000), 0, 1, 5, 6))
    assert abs(t.mean() - e.mean()) < 0.005 and abs(t.std() - e.std()) < 0.005
    assert (e == 5.0).sum() <= 3 and (e == 6.0).sum() <= 3


def test_trunc_normal_edge_inputs_match_torch():
    # a > b: the uniform proposal's error names the bounds themselves (not CDF values)
    same_error(lambda m: m.nn.init.trunc_normal_(m.empty(3), 0, 1, 2.0, 1.0), RuntimeError)
    # an integer tensor: the normal draw's error
    same_error(lambda m: m.nn.init.trunc_normal_(m.empty(3, dtype=m.int64)), NotImplementedError)
    for m in (torch, ember):
        assert m.nn.init.trunc_normal_(m.empty(0, 3)).shape == (0, 3)
        assert m.nn.init.trunc_normal_(m.empty(()), 0, 1, 4, 5).shape == ()
        z = m.nn.init.trunc_normal_(m.empty(5), 0.0, 1.0, 0.0, 0.0)
        assert _np(z).tolist() == [0.0] * 5
    p = ember.nn.Parameter(ember.empty(4, 3))
    assert ember.nn.init.trunc_normal_(p, 0, 1, 4, 5) is p
    assert p.requires_grad and p.grad_fn is None
    # a non-contiguous view is filled in place, within the bounds
    base = ember.zeros(6, 5)
    ember.nn.init.trunc_normal_(base.t(), 0, 1, 4, 5)
    assert _np(base).min() >= 4 and _np(base).max() <= 5


def test_trunc_normal_generator_is_reproducible_and_keeps_names():
    draws = []
    for _ in range(2):
        g = ember.Generator().manual_seed(7)
        draws.append(_np(ember.nn.init.trunc_normal_(ember.empty(50), 0, 1, 3, 4, generator=g)))
    np.testing.assert_array_equal(draws[0], draws[1])
    t = ember.nn.init.trunc_normal_(ember.empty(3, 4, names=("A", "B")), 0, 1, 4, 5)
    assert t.names == ("A", "B")


# ------------------------------------------------------------------ clip_grad
def test_clip_grad_norm_empty_generator_warns():
    msgs = {}
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            total = m.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        msgs[m] = [(x.category, str(x.message)) for x in w]
        assert float(total) == 0.0
    assert [c.__name__ for c, _ in msgs[ember]] == ["UserWarning"]
    assert [s for _, s in msgs[ember]] == [s for _, s in msgs[torch]]
    # an empty list is not a generator: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.nn.utils.clip_grad_norm_([], 1.0)


def test_clip_grad_norm_generator_clips_every_parameter():
    grads = {}
    for m in (torch, ember):
        ps = [m.nn.Parameter(m.ones(3)), m.nn.Parameter(m.ones(2, 2))]
        for i, p in enumerate(ps):
            p.grad = m.full(p.shape, 3.0 + i)
        total = m.nn.utils.clip_grad_norm_((p for p in ps), 1.0)
        grads[m] = [_np(total)] + [_np(p.grad) for p in ps]
    for a, b in zip(grads[torch], grads[ember]):
        np.testing.assert_allclose(b, a, rtol=1e-6)


@pytest.mark.parametrize("foreach", [None, True, False])
def test_total_norm_inf_of_empty_gradient_error(foreach):
    same_error(
        lambda m: m.nn.utils.get_total_norm([m.ones(2), m.ones(0)], "inf", foreach=foreach),
        RuntimeError,
    )
    same_error(
        lambda m: m.nn.utils.clip_grad_norm_(
            [_with_grad(m, m.ones(0))], 1.0, float("inf"), foreach=foreach
        ),
        RuntimeError,
    )


def _with_grad(m, g):
    p = m.nn.Parameter(m.zeros_like(g))
    p.grad = g
    return p


def test_foreach_norm_inf_of_empty_tensor_error():
    same_error(lambda m: m._foreach_norm([m.ones(2), m.ones(0)], float("inf")), RuntimeError)
    same_error(lambda m: m._foreach_norm([m.ones(0)], -float("inf")), RuntimeError)
    for m in (torch, ember):
        assert [float(x) for x in m._foreach_norm([m.ones(0), m.tensor([3.0, -4.0])], 2)] == [
            0.0,
            5.0,
        ]


@pytest.mark.parametrize("norm_type", [2.0, 1, 0, 3, float("inf"), -float("inf"), 0.5])
@pytest.mark.parametrize("foreach", [None, False])
def test_total_norm_values_with_mixed_dtypes(norm_type, foreach):
    out = {}
    for m in (torch, ember):
        ts = [m.tensor([1.0, -2.0, 3.0]), m.tensor([[4.0, 0.5], [-6.0, 7.0]], dtype=m.float64)]
        r = m.nn.utils.get_total_norm(ts, norm_type, foreach=foreach)
        out[m] = (_np(r), str(r.dtype).split(".")[-1])
    np.testing.assert_allclose(out[ember][0], out[torch][0], rtol=1e-6)
    assert out[ember][1] == out[torch][1]


# ------------------------------------------------------------------ old-style weight_norm
@pytest.mark.parametrize("dim", [2, -3])
def test_weight_norm_dim_out_of_range(dim):
    def call(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.nn.utils.weight_norm(m.nn.Linear(3, 4), dim=dim)

    same_error(call, IndexError)


def test_weight_norm_of_a_0dim_parameter():
    def call(m):
        mod = m.nn.Module()
        mod.register_parameter("p", m.nn.Parameter(m.tensor(2.0)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.nn.utils.weight_norm(mod, name="p")

    same_error(call, IndexError)


@pytest.mark.parametrize("dim", [0, 1, -1, -2, None])
def test_weight_norm_dims_in_range_still_match(dim):
    out = {}
    for m in (torch, ember):
        lin = m.nn.Linear(3, 4)
        with m.no_grad():
            lin.weight.copy_(m.arange(12.0).reshape(4, 3).sin())
            lin.bias.zero_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lin = m.nn.utils.weight_norm(lin, dim=dim)
        y = lin(m.arange(6.0).reshape(2, 3).cos())
        y.backward(m.arange(8.0).reshape(2, 4))
        out[m] = [_np(lin.weight_g), _np(y), _np(lin.weight_g.grad), _np(lin.weight_v.grad)]
    for a, b in zip(out[torch], out[ember]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ prune
def _lin(m):
    lin = m.nn.Linear(4, 3)
    with m.no_grad():
        lin.weight.copy_(((m.arange(12.0) * 0.37) ** 2).reshape(3, 4).sin())
    return lin


@pytest.mark.parametrize("n", ["nuc", "x"])
def test_ln_structured_matrix_norm_orders_fail_like_torch_norm(n):
    same_error(
        lambda m: m.nn.utils.prune.ln_structured(_lin(m), "weight", amount=1, n=n, dim=0),
        RuntimeError,
    )


@pytest.mark.parametrize("n", [1, 2, "fro", float("inf"), -float("inf"), 3])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ln_structured_norms_match(n, dim):
    masks = {}
    for m in (torch, ember):
        lin = m.nn.utils.prune.ln_structured(_lin(m), "weight", amount=1, n=n, dim=dim)
        masks[m] = _np(lin.weight_mask)
    np.testing.assert_array_equal(masks[ember], masks[torch])


def test_prune_assertion_texts():
    _same_error_text(
        lambda m: m.nn.utils.prune.l1_unstructured(
            _lin(m), "weight", amount=3, importance_scores=m.ones(3)
        ),
        AssertionError,
    )
    _same_error_text(
        lambda m: m.nn.utils.prune.L1Unstructured(amount=2).prune(
            m.ones(4), importance_scores=m.ones(3)
        ),
        AssertionError,
    )
    _same_error_text(
        lambda m: m.nn.utils.prune.custom_from_mask(_lin(m), "weight", mask=m.ones(3, 3)),
        AssertionError,
    )


# ------------------------------------------------------------------ functional_call
class _Net:
    """A module with a submodule, a buffer and a parameter, built for either library."""

    @staticmethod
    def build(m):
        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.nn.Linear(3, 3)
                self.register_buffer("buf", m.ones(3))
                self.p = m.nn.Parameter(m.tensor([1.0, 2.0, 3.0]))
                self.cfg = None

            def forward(self, x):
                return self.lin(x) + self.buf * self.p

        net = Net()
        with m.no_grad():
            net.lin.weight.copy_(m.arange(9.0).reshape(3, 3).cos())
            net.lin.bias.zero_()
        return net


def test_functional_call_rejects_non_dicts_in_a_sequence():
    for bad in ([("p", 0)], [3], ({"p": 0}, 5)):
        same_error(
            lambda m, bad=bad: m.func.functional_call(_Net.build(m), bad, (m.ones(2, 3),)),
            ValueError,
        )


def test_functional_call_refuses_to_replace_a_submodule():
    def call(m):
        net = _Net.build(m)
        m.func.functional_call(net, {"lin": m.zeros(3)}, (m.ones(2, 3),))

    same_error(call, TypeError)
    net = _Net.build(ember)
    with pytest.raises(TypeError):
        ember.func.functional_call(net, {"lin": ember.zeros(3)}, (ember.ones(2, 3),))
    assert isinstance(net.lin, ember.nn.Linear) and "lin" not in net.__dict__


def test_functional_call_none_values_and_none_attributes():
    out = {}
    for m in (torch, ember):
        net = _Net.build(m)
        x = m.arange(6.0).reshape(2, 3).sin()
        # a None value (drop the bias for the call) and a None attribute given a tensor
        y1 = m.func.functional_call(net, {"lin.bias": None}, (x,))
        y2 = m.func.functional_call(net, {"cfg": m.zeros(3)}, (x,))
        out[m] = [_np(y1), _np(y2), net.cfg is None, _np(net.lin.bias)]
    for a, b in zip(out[torch], out[ember]):
        np.testing.assert_allclose(b, a, rtol=1e-6)


# ------------------------------------------------------------------ fusion
def _bn(m, n=6, track=True):
    bn = m.nn.BatchNorm1d(n, track_running_stats=track)
    with m.no_grad():
        if track:
            bn.running_mean.copy_(m.arange(float(n)).sin())
            bn.running_var.copy_(m.arange(float(n)).cos() ** 2 + 0.5)
        bn.weight.copy_(m.arange(float(n)) * 0.3 + 0.2)
        bn.bias.copy_(m.arange(float(n)) * -0.1)
    return bn.eval()


def test_fusion_assertion_texts():
    same_error(
        lambda m: m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(4, 6).eval(), _bn(m, track=False)),
        AssertionError,
    )
    same_error(
        lambda m: m.nn.utils.fuse_conv_bn_eval(m.nn.Conv1d(4, 6, 3).eval(), _bn(m, track=False)),
        AssertionError,
    )
    same_error(lambda m: m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(4, 6), _bn(m)), AssertionError)
    same_error(
        lambda m: m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(4, 6).eval(), _bn(m, n=5)),
        AssertionError,
    )


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_linear_keeps_the_linear_dtype(bias):
    out = {}
    for m in (torch, ember):
        lin = m.nn.Linear(4, 6, bias=bias).eval()
        with m.no_grad():
            lin.weight.copy_(m.arange(24.0).reshape(6, 4).sin())
            if bias:
                lin.bias.copy_(m.arange(6.0).cos())
        fused = m.nn.utils.fuse_linear_bn_eval(lin, _bn(m).double())
        x = m.arange(8.0).reshape(2, 4).cos()
        out[m] = (str(fused.weight.dtype), str(fused.bias.dtype), _np(fused(x)))
    assert out[ember][0].split(".")[-1] == out[torch][0].split(".")[-1] == "float32"
    assert out[ember][1].split(".")[-1] == out[torch][1].split(".")[-1] == "float32"
    np.testing.assert_allclose(out[ember][2], out[torch][2], rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ memory format
def test_convert_conv2d_weight_memory_format_lays_out_conv_weights():
    res = {}
    for m in (torch, ember):
        net = m.nn.Sequential(m.nn.Conv2d(2, 3, 3), m.nn.ReLU(), m.nn.ConvTranspose2d(3, 2, 2))
        with m.no_grad():
            for p in net.parameters():
                p.copy_(((m.arange(float(p.numel())) * 0.37) ** 2).reshape(p.shape).sin())
        w = net[0].weight
        assert m.nn.utils.convert_conv2d_weight_memory_format(net, m.channels_last) is net
        assert net[0].weight is w  # the Parameter object stays
        x = ((m.arange(100.0) * 0.1).sin()).reshape(2, 2, 5, 5)
        y = net(x)
        y.backward(m.ones_like(y) * 0.5)
        res[m] = [
            [p.is_contiguous(memory_format=m.channels_last) for p in net.parameters()],
            [tuple(p.stride()) for p in net.parameters()],
            _np(y),
            _np(net[0].weight.grad),
        ]
    assert res[ember][0] == res[torch][0]
    assert res[ember][1] == res[torch][1]
    np.testing.assert_allclose(res[ember][2], res[torch][2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[ember][3], res[torch][3], rtol=1e-5, atol=1e-5)
    # and back
    net = ember.nn.Conv2d(2, 3, 3)
    ember.nn.utils.convert_conv2d_weight_memory_format(net, ember.channels_last)
    ember.nn.utils.convert_conv2d_weight_memory_format(net, ember.contiguous_format)
    assert net.weight.is_contiguous()


def test_convert_conv3d_weight_memory_format():
    for m in (torch, ember):
        net = m.nn.Sequential(m.nn.Conv3d(2, 3, 3), m.nn.Conv2d(2, 2, 1))
        m.nn.utils.convert_conv3d_weight_memory_format(net, m.channels_last_3d)
        assert net[0].weight.is_contiguous(memory_format=m.channels_last_3d)
        assert net[1].weight.is_contiguous()  # a 2-d conv is not touched
    same_error(
        lambda m: m.nn.utils.convert_conv2d_weight_memory_format(
            m.nn.Conv2d(2, 3, 3), m.channels_last_3d
        ),
        RuntimeError,
    )


# ------------------------------------------------------------------ cat and friends, empty
@pytest.mark.parametrize("fn", ["cat", "concat", "concatenate", "hstack", "vstack", "dstack"])
def test_empty_list_errors(fn):
    same_error(lambda m: getattr(m, fn)([]), Exception)


def test_parameters_to_vector_of_nothing():
    same_error(lambda m: m.nn.utils.parameters_to_vector([]), ValueError)
