"""Named dimensions, rule by rule (wave 34): what a check of every rule, example and error of the
names spec (/work/shared/spec/named_tensors.md) against ember found, and a sweep of names through
every layer, loss, gradient, optimizer and checkpoint. torch 2.x has no named tensors: the spec is
the oracle for names, torch (run on the same data without names) for values, gradients and the
errors of unnamed calls.

Covered:

1. Section 1: a dim given as None on a named tensor is a name lookup ("Please look up dimensions
   by name"), for every op whose dim None cannot mean "all dims": the scans (cumsum, cumprod,
   cummax, cummin, logcumsumexp), softmax/log_softmax, logsumexp, transpose/swapaxes, movedim,
   unsqueeze, and the composite ops diff, renorm, trapezoid, cumulative_trapezoid, index_copy(_),
   index_reduce (they raised TypeErrors of Python's making). Unnamed calls keep torch's TypeError;
   a missing dim stays the "missing argument" TypeError.
2. Spec 4.10 / 4.3: a loss whose input and target names clash raises the unify error prefixed
   with the loss's name (it named no op); ``ctc_loss`` unifies the batch names of log_probs
   (dim 1), padded targets (dim 0) and the length tensors (the target's names were ignored).
3. Section 3, "out function and in-place variants": ``ember.fft.*(out=)`` checks a named out
   tensor against the computed names ("Name mismatch"; it silently overwrote them).
4. Spec 4.1: a tensor hook that replaces a gradient: the replacement is named like the gradient
   it replaces (an unnamed one left ``.grad`` unnamed); clashing names are an error naming both
   lists. Forward AD: ``make_dual``'s tangent is named like its primal, checked the same way (the
   spec is silent on forward AD; a tangent is a gradient pushed forward, so 4.1 applies).
5. Spec 4.3: ``F.prelu``/``Tensor.prelu`` check a named slope against the input's channel dim
   with the layers' message (the error was ``mul``'s broadcast error).
6. The sweep itself, kept as regressions: every nn layer given role names ((N, C, H, W),
   (N, L, E), ...) keeps them, and the input's and each parameter's gradient are named like them;
   layers with named weights take the weight's output name and refuse a clashing input; losses
   keep the batch names with reduction='none'; optimizers (plain and foreach) keep parameter
   names and name their state like the parameters, through state_dict round trips; a DataLoader
   stacks named samples under an unnamed batch dim (the spec is silent on collation: ``stack``
   creates an unnamed dim, 4.6).
7. Where the spec is silent, its general rules decide (each test says which): SDPA's batch
   names unify and a named mask unifies with the scores' names (matmul's and add's rules);
   MultiheadAttention checks named key_padding_mask/attn_mask (boolean masks made float kept
   no names); a conv bias must agree with a named weight (as Linear's); bilinear's two inputs'
   batch names unify; addr composes outer's and add's rules (it kept only the input's names).
8. Per-class loss weights (cross_entropy, nll_loss, multi_margin_loss,
   multilabel_soft_margin_loss) are checked against the class dim; BCE-with-logits' pos_weight
   and EmbeddingBag's per_sample_weights unify with the input (all were ignored).
9. nn.utils: parameters_to_vector gives an unnamed vector (differently named biases made it
   fail) and vector_to_parameters keeps the parameters' names; the orthogonal parametrization
   of a square named weight no longer refuses it (X^H X repeated a name).
10. slice_copy takes a dim name and checks its dim (it wrapped it modulo the rank); gather,
    scatter*, index_add and index_copy unify their index/source names with the input's on every
    dim but ``dim``; grid_sample's grid and max_unpool's indices pair with their input's names;
    block_diag takes differently named blocks (its dims are new).
11. Categorical/OneHotCategorical/Multinomial samples keep the parameters' batch (and event)
    names; autograd.functional.jacobian/hessian name their input dims like the input; the RNN
    cells check a named state's batch name as the layers do.
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
NCL = ("N", "C", "L")
NCHW = ("N", "C", "H", "W")
NLE = ("N", "L", "E")
_LOOKUP = "Please look up dimensions by name"


def _np(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _pair(*shape, names=None, seed=0, grad=False):
    """The same data as an ember tensor named ``names`` and an unnamed torch tensor."""
    a = _np(*shape, seed=seed)
    e = ember.tensor(a, names=names, requires_grad=grad)
    t = torch.tensor(a, requires_grad=grad)
    return e, t


def _close(e, t, tol=1e-5):
    np.testing.assert_allclose(
        e.detach().rename(None).numpy(), t.detach().numpy(), rtol=tol, atol=tol
    )


# ------------------------------------------------------------------ 1. None as a dim on named
_NONE_DIM = {
    "cumsum": lambda t: t.cumsum(None),
    "cumprod": lambda t: t.cumprod(None),
    "cummax": lambda t: t.cummax(None),
    "cummin": lambda t: t.cummin(None),
    "logcumsumexp": lambda t: t.logcumsumexp(None),
    "softmax": lambda t: t.softmax(None),
    "log_softmax": lambda t: t.log_softmax(None),
    "logsumexp": lambda t: t.logsumexp(None),
    "transpose": lambda t: t.transpose(None, 0),
    "swapaxes": lambda t: t.swapaxes(0, None),
    "movedim": lambda t: t.movedim(None, 0),
    "unsqueeze": lambda t: t.unsqueeze(None),
    "diff": lambda t: t.diff(dim=None),
    "renorm": lambda t: t.renorm(2, None, 1.0),
    "trapezoid": lambda t: _lib(t).trapezoid(t, dim=None),
    "cumulative_trapezoid": lambda t: _lib(t).cumulative_trapezoid(t, dim=None),
    "index_copy": lambda t: t.index_copy(None, _index(t), t[:, :1]),
    "index_copy_": lambda t: t.clone().index_copy_(None, _index(t), t[:, :1]),
    "index_reduce": lambda t: t.index_reduce(None, _index(t), t[:, :1], "amax"),
}


def _lib(t):
    return ember if isinstance(t, ember.Tensor) else torch


def _index(t):
    return _lib(t).tensor([0])


@pytest.mark.parametrize("op", sorted(_NONE_DIM))
def test_none_dim_on_a_named_tensor_is_a_name_lookup(op):
    x = ember.tensor(_np(2, 3, 4), names=NCL)
    with pytest.raises(RuntimeError, match=_LOOKUP):
        _NONE_DIM[op](x)


@pytest.mark.parametrize("op", ["cumsum", "softmax", "transpose", "movedim", "diff", "renorm"])
def test_none_dim_on_an_unnamed_tensor_stays_a_type_error(op):
    """No names, no lookup: torch's (and ember's) TypeError, as before."""
    e, t = _pair(2, 3, 4)
    with pytest.raises(TypeError):
        _NONE_DIM[op](t)
    with pytest.raises(TypeError):
        _NONE_DIM[op](e)


def test_named_dims_still_resolve_in_the_fixed_ops():
    e, t = _pair(2, 3, 4, names=NCL)
    for call_e, call_t in (
        (lambda x: x.cumsum("C"), lambda x: x.cumsum(1)),
        (lambda x: x.diff(dim="L"), lambda x: x.diff(dim=2)),
        (lambda x: x.renorm(2, "C", 1.0), lambda x: x.renorm(2, 1, 1.0)),
        (lambda x: ember.trapezoid(x, dim="C"), lambda x: torch.trapezoid(x, dim=1)),
        (
            lambda x: x.index_copy("C", ember.tensor([2]), x[:, :1]),
            lambda x: x.index_copy(1, torch.tensor([2]), x[:, :1]),
        ),
    ):
        r = call_e(e)
        _close(r, call_t(t))
        assert r.names in (NCL, ("N", "L"))
    # a dim left out is still torch's "missing argument" TypeError, names or not
    with pytest.raises(TypeError, match="missing"):
        e.cumsum()


# ------------------------------------------------------------------ 2. losses
_CLASH = "Error when attempting to broadcast dims"


@pytest.mark.parametrize(
    "loss, target",
    [
        (F.mse_loss, "same"),
        (F.l1_loss, "same"),
        (F.smooth_l1_loss, "same"),
        (F.huber_loss, "same"),
        (F.binary_cross_entropy_with_logits, "prob"),
        (F.kl_div, "same"),
        (F.soft_margin_loss, "same"),
        (F.cross_entropy, "class"),
        (F.nll_loss, "class"),
        (F.multi_margin_loss, "class"),
    ],
)
def test_loss_name_clash_names_the_loss(loss, target):
    x = ember.tensor(_np(3, 4), names=NC)
    if target == "class":
        t = ember.tensor([0, 2, 1], names=("M",))
    elif target == "prob":
        t = ember.tensor((_np(3, 4, seed=1) > 0).astype(np.float32), names=("M", "C"))
    else:
        t = ember.tensor(_np(3, 4, seed=1), names=("M", "C"))
    with pytest.raises(RuntimeError, match=re.escape(f"{loss.__name__}: {_CLASH}")) as e:
        loss(x, t, reduction="none")
    assert "'N'" in str(e.value) and "'M'" in str(e.value)


def _ctc_inputs(lib, names=True):
    lp = np.log(np.random.default_rng(3).dirichlet(np.ones(4), size=(6, 2))).astype(np.float32)
    tg, il, tl = [[1, 2], [3, 1]], [6, 5], [2, 1]
    if lib is torch:
        return (
            torch.tensor(lp, requires_grad=True),
            torch.tensor(tg),
            torch.tensor(il),
            torch.tensor(tl),
        )
    n = names
    return (
        ember.tensor(lp, names=("T", "N", "C") if n else None, requires_grad=True),
        ember.tensor(tg, names=("N", "S") if n else None),
        ember.tensor(il),
        ember.tensor(tl),
    )


def test_ctc_loss_unifies_target_and_length_batch_names():
    lp, tg, il, tl = _ctc_inputs(ember)
    tlp, ttg, til, ttl = _ctc_inputs(torch)
    out = F.ctc_loss(lp, tg, il, tl, reduction="none")
    ref = torch.nn.functional.ctc_loss(tlp, ttg, til, ttl, reduction="none")
    assert out.names == ("N",)
    _close(out, ref)
    g = _np(2, seed=5)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    assert lp.grad.names == ("T", "N", "C")
    _close(lp.grad, tlp.grad)
    # the batch name may come from the targets alone (log_probs unnamed) ...
    lp2 = lp.detach().rename(None)
    assert F.ctc_loss(lp2, tg, il, tl, reduction="none").names == ("N",)
    # ... or from a length tensor
    il_n = il.rename("N")
    assert F.ctc_loss(lp2, tg.rename(None), il_n, tl, reduction="none").names == ("N",)
    # clashing batch names are the loss's error
    with pytest.raises(RuntimeError, match=re.escape(f"ctc_loss: {_CLASH}")):
        F.ctc_loss(lp, tg.rename("B", "S"), il, tl, reduction="none")
    with pytest.raises(RuntimeError, match=re.escape(f"ctc_loss: {_CLASH}")):
        F.ctc_loss(lp, tg, il.rename("B"), tl)
    # concatenated 1-d targets carry no batch dim: their name is not a batch name
    flat = ember.tensor([1, 2, 3], names=("S",))
    r = F.ctc_loss(lp, flat, il, tl, reduction="none")
    assert r.names == ("N",)


# ------------------------------------------------------------------ 3. fft out=
@pytest.mark.parametrize("fn", ["fft", "ifft", "fftn", "fft2"])
def test_fft_out_follows_the_out_rule(fn):
    e, t = _pair(3, 4, names=NC)
    f = getattr(ember.fft, fn)
    bad = ember.empty(3, 4, names=("M", "C"), dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="Name mismatch") as err:
        f(e, out=bad)
    assert f"fft_{fn}" in str(err.value)
    assert bad.names == ("M", "C")
    partly = ember.empty(3, 4, names=("N", None), dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="Name mismatch"):
        f(e, out=partly)
    # an unnamed out takes the computed names; a named out of the right names is accepted
    for out in (
        ember.empty(3, 4, dtype=ember.complex64),
        ember.empty(3, 4, names=NC, dtype=ember.complex64),
    ):
        r = f(e, out=out)
        assert r is out and out.names == NC
        np.testing.assert_allclose(
            out.rename(None).numpy(),
            getattr(torch.fft, fn)(t).resolve_conj().numpy(),
            rtol=1e-5,
            atol=1e-5,
        )
    # an unnamed result refuses a named out, as abs(out=) does (P89)
    with pytest.raises(RuntimeError, match="Name mismatch"):
        f(e.rename(None), out=ember.empty(3, 4, names=NC, dtype=ember.complex64))


# ------------------------------------------------------------------ 4. hooks and forward AD
def test_hook_replacing_a_gradient_keeps_the_names():
    e, t = _pair(3, 4, names=NC, grad=True)
    e.register_hook(lambda g: g.rename(None) * 2)
    t.register_hook(lambda g: g * 2)
    w = _np(3, 4, seed=2)
    (e * ember.tensor(w)).sum().backward()
    (t * torch.tensor(w)).sum().backward()
    assert e.grad.names == NC
    _close(e.grad, t.grad)
    # on a non-leaf: the gradient flowing on to the leaf stays named too
    e2, t2 = _pair(3, 4, names=NC, grad=True)
    z, tz = e2 * 2, t2 * 2
    z.register_hook(lambda g: g.rename(None) + 1)
    tz.register_hook(lambda g: g + 1)
    (z * z).sum().backward()
    (tz * tz).sum().backward()
    assert e2.grad.names == NC
    _close(e2.grad, t2.grad)


def test_hook_returning_clashing_names_is_an_error():
    e = ember.tensor(_np(3, 4), names=NC, requires_grad=True)
    e.register_hook(lambda g: g.rename("A", "C"))
    with pytest.raises(
        RuntimeError, match=r"hook '<lambda>' returned a gradient named \['A', 'C'\]"
    ):
        (e * 1).sum().backward()
    # an unnamed tensor's gradient stays unnamed whatever the hook names
    u = ember.tensor(_np(3, 4), requires_grad=True)
    u.register_hook(lambda g: g.rename("A", "C"))
    (u * 1).sum().backward()
    assert u.grad.names == (None, None)


def test_make_dual_names_the_tangent_like_the_primal():
    import ember.autograd.forward_ad as fwAD

    p = ember.tensor(_np(3, 4), names=NC)
    tan = _np(3, 4, seed=1)
    with fwAD.dual_level():
        for given in (tan, ember.tensor(tan, names=(None, "C"))):
            d = fwAD.make_dual(p, ember.tensor(given) if isinstance(given, np.ndarray) else given)
            assert fwAD.unpack_dual(d).tangent.names == NC
            out = fwAD.unpack_dual((d * d).sum("C"))
            assert out.tangent.names == ("N",)
            np.testing.assert_allclose(
                out.tangent.rename(None).numpy(), (2 * _np(3, 4) * tan).sum(1), rtol=1e-5
            )
        with pytest.raises(RuntimeError, match=r"make_dual: the tangent's names \['X', 'C'\]"):
            fwAD.make_dual(p, ember.tensor(tan, names=("X", "C")))


# ------------------------------------------------------------------ 5. prelu's named slope
@pytest.mark.parametrize("call", [F.prelu, lambda x, w: x.prelu(w)])
def test_prelu_checks_a_named_slope_against_the_channel_dim(call):
    w = ember.tensor(np.array([0.1, 0.2, 0.3], np.float32), names=("C",))
    for names, shape in ((("N", "X", "H", "W"), (2, 3, 4, 4)), (("N", "X"), (2, 3))):
        x = ember.tensor(_np(*shape), names=names)
        with pytest.raises(RuntimeError, match="prelu: the input's channel dim is named 'X'"):
            call(x, w)
    e, t = _pair(2, 3, 4, 4, names=NCHW, grad=True)
    we = w.detach().requires_grad_()
    wt = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
    out, ref = call(e, we), torch.nn.functional.prelu(t, wt)
    assert out.names == NCHW
    g = _np(2, 3, 4, 4, seed=4)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    assert e.grad.names == NCHW and we.grad.names == ("C",)
    _close(out, ref)
    _close(e.grad, t.grad)
    _close(we.grad, wt.grad)


# ------------------------------------------------------------------ 6. the sweep, as regressions
NCD = ("N", "C", "D", "H", "W")
_SHAPES = {NC: (2, 3), NCL: (2, 3, 6), NCHW: (2, 3, 4, 4), NCD: (2, 3, 4, 4, 4), NLE: (2, 5, 4)}
_LAYERS = [
    (lambda: nn.Linear(4, 3), NLE, NLE),
    (lambda: nn.Conv1d(3, 4, 3, padding=1), NCL, NCL),
    (lambda: nn.Conv2d(3, 4, 3), NCHW, NCHW),
    (lambda: nn.Conv3d(3, 4, 3), NCD, NCD),
    (lambda: nn.ConvTranspose1d(3, 4, 3), NCL, NCL),
    (lambda: nn.ConvTranspose2d(3, 4, 3), NCHW, NCHW),
    (lambda: nn.BatchNorm1d(3), NC, NC),
    (lambda: nn.BatchNorm1d(3), NCL, NCL),
    (lambda: nn.BatchNorm2d(3), NCHW, NCHW),
    (lambda: nn.BatchNorm3d(3), NCD, NCD),
    (lambda: nn.InstanceNorm1d(3, affine=True), NCL, NCL),
    (lambda: nn.InstanceNorm2d(3, affine=True), NCHW, NCHW),
    (lambda: nn.GroupNorm(1, 3), NCHW, NCHW),
    (lambda: nn.LayerNorm(4), NLE, NLE),
    (lambda: nn.RMSNorm(4), NLE, NLE),
    (lambda: nn.LocalResponseNorm(2), NCHW, NCHW),
    (lambda: nn.MaxPool1d(2), NCL, NCL),
    (lambda: nn.MaxPool2d(2), NCHW, NCHW),
    (lambda: nn.AvgPool3d(2), NCD, NCD),
    (lambda: nn.LPPool2d(2, 2), NCHW, NCHW),
    (lambda: nn.AdaptiveAvgPool2d(2), NCHW, NCHW),
    (lambda: nn.AdaptiveMaxPool1d(2), NCL, NCL),
    (lambda: nn.FractionalMaxPool2d(2, output_size=2), NCHW, NCHW),
    (lambda: nn.Flatten(), NCHW, ("N", None)),
    (lambda: nn.PixelShuffle(1), NCHW, NCHW),
    (lambda: nn.ChannelShuffle(3), NCHW, NCHW),
    (lambda: nn.Upsample(scale_factor=2, mode="bilinear"), NCHW, NCHW),
    (lambda: nn.Softmax2d(), NCHW, NCHW),
    (lambda: nn.Softmax(dim=1), NC, NC),
    (lambda: nn.PReLU(3), NCHW, NCHW),
    (lambda: nn.Dropout2d(), NCHW, NCHW),
    (lambda: nn.GELU(), NC, NC),
    (lambda: nn.Hardtanh(), NC, NC),
    (lambda: nn.ReflectionPad2d(1), NCHW, NCHW),
    (lambda: nn.CircularPad1d(1), NCL, NCL),
    (lambda: nn.ReplicationPad3d(1), NCD, NCD),
    (lambda: nn.ConstantPad2d(1, 0.5), NCHW, NCHW),
    (lambda: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True), NLE, NLE),
    (lambda: nn.MultiheadAttention(4, 2, batch_first=True), NLE, NLE),
    (lambda: nn.GRU(4, 3, batch_first=True), NLE, NLE),
    (lambda: nn.LSTMCell(3, 3), NC, NC),
]


@pytest.mark.parametrize("k", range(len(_LAYERS)))
def test_layers_keep_role_names_through_output_and_gradients(k):
    ctor, names, expected = _LAYERS[k]
    ember.manual_seed(0)
    m = ctor()
    x = ember.tensor(_np(*_SHAPES[names]), names=names, requires_grad=True)
    xu = x.detach().rename(None).requires_grad_()
    args = (x, x, x) if isinstance(m, nn.MultiheadAttention) else (x,)
    argsu = (xu, xu, xu) if isinstance(m, nn.MultiheadAttention) else (xu,)
    ember.manual_seed(1)
    out = m(*args)
    ember.manual_seed(1)
    ref = m(*argsu)
    out, ref = (out[0], ref[0]) if isinstance(out, tuple) else (out, ref)
    assert out.names == expected
    np.testing.assert_allclose(out.detach().rename(None).numpy(), ref.detach().numpy(), atol=1e-6)
    g = _np(*out.shape, seed=7)
    out.backward(ember.tensor(g))
    grads = {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}
    m.zero_grad()
    ref.backward(ember.tensor(g))
    assert x.grad.names == names
    np.testing.assert_allclose(x.grad.rename(None).numpy(), xu.grad.numpy(), atol=1e-5)
    for n, p in m.named_parameters():
        if p.grad is not None:
            assert grads[n].names == p.names == (None,) * p.ndim, n  # parameters unnamed
            np.testing.assert_allclose(grads[n].numpy(), p.grad.numpy(), atol=1e-5)


@pytest.mark.parametrize(
    "ctor, names, wnames, out_names, what",
    [
        (lambda: nn.Linear(4, 3), NLE, ("H", "E"), ("N", "L", "H"), "features"),
        (lambda: nn.Conv2d(3, 4, 3), NCHW, ("O", "C", None, None), ("N", "O", "H", "W"), "channel"),
        (
            lambda: nn.ConvTranspose1d(3, 4, 3),
            NCL,
            ("C", "O", None),
            ("N", "O", "L"),
            "channel",
        ),
        (lambda: nn.BatchNorm2d(3), NCHW, ("C",), NCHW, "channel"),
        (lambda: nn.GroupNorm(1, 3), NCHW, ("C",), NCHW, "channel"),
        (lambda: nn.LayerNorm(4), NLE, ("E",), NLE, "normalized"),
        (lambda: nn.PReLU(3), NCHW, ("C",), NCHW, "channel"),
    ],
)
def test_named_weights_name_the_output_and_check_the_input(ctor, names, wnames, out_names, what):
    m = ctor()
    m.weight.rename_(*wnames)
    x = ember.tensor(_np(*_SHAPES[names]), names=names, requires_grad=True)
    out = m(x)
    assert out.names == out_names
    out.backward(ember.tensor(_np(*out.shape, seed=3)))
    assert x.grad.names == names and m.weight.grad.names == wnames
    bad = list(names)
    bad[-1 if what in ("features", "normalized") else 1] = "X"
    with pytest.raises(RuntimeError, match=f"the input's {what} dim is named 'X'"):
        m(ember.tensor(_np(*_SHAPES[names]), names=tuple(bad)))


@pytest.mark.parametrize(
    "loss, target, expected",
    [
        (F.mse_loss, "same", NC),
        (F.binary_cross_entropy, "prob", NC),
        (F.poisson_nll_loss, "same", NC),
        (F.cross_entropy, "class", ("N",)),
        (F.multilabel_soft_margin_loss, "prob", ("N",)),
        (F.multi_margin_loss, "class", ("N",)),
    ],
)
def test_losses_keep_batch_names_and_name_the_input_gradient(loss, target, expected):
    a = np.abs(_np(3, 4)) * 0.4 + 0.1
    e = ember.tensor(a, names=NC, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    if target == "class":
        tg = [0, 2, 1]
        et, tt = ember.tensor(tg, names=("N",)), torch.tensor(tg)
    elif target == "prob":
        tg = (_np(3, 4, seed=1) > 0).astype(np.float32)
        et, tt = ember.tensor(tg, names=NC), torch.tensor(tg)
    else:
        tg = _np(3, 4, seed=1)
        et, tt = ember.tensor(tg, names=NC), torch.tensor(tg)
    out = loss(e, et, reduction="none")
    ref = getattr(torch.nn.functional, loss.__name__)(t, tt, reduction="none")
    assert out.names == expected
    _close(out, ref)
    g = _np(*out.shape, seed=2)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    assert e.grad.names == NC
    _close(e.grad, t.grad)
    assert loss(e, et).names == ()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam"])
@pytest.mark.parametrize("foreach", [False, True])
def test_optimizers_keep_names_and_name_their_state(name, foreach):
    def make(lib):
        m = lib.nn.Linear(4, 3)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(_np(3, 4)))
            m.bias.copy_(lib.tensor(_np(3, seed=1)))
        if lib is ember:  # named before the optimizer sees them (Adagrad makes state at once)
            m.weight.rename_("H", "E")
            m.bias.rename_("H")
        kw = {"lr": 0.05, "foreach": foreach}
        if name == "SGD":
            kw["momentum"] = 0.9
        return m, getattr(lib.optim, name)(m.parameters(), **kw)

    m, opt = make(ember)
    tm, topt = make(torch)
    x = _np(5, 4, seed=2)
    for _ in range(2):
        opt.zero_grad()
        topt.zero_grad()
        m(ember.tensor(x, names=("N", "E"))).pow(2).sum().backward()
        tm(torch.tensor(x)).pow(2).sum().backward()
        opt.step()
        topt.step()
    assert m.weight.names == ("H", "E") and m.bias.names == ("H",)
    _close(m.weight, tm.weight)
    for p in m.parameters():
        for k, v in opt.state[p].items():
            if isinstance(v, ember.Tensor) and v.shape == p.shape:
                assert v.names == p.names, k
    opt2 = getattr(ember.optim, name)(m.parameters(), lr=0.05)
    opt2.load_state_dict(opt.state_dict())
    for p in m.parameters():
        for k, v in opt2.state[p].items():
            if isinstance(v, ember.Tensor) and v.shape == p.shape:
                assert v.names == p.names, k


def test_state_dict_round_trip_and_collation_names(tmp_path):
    m = nn.Linear(4, 3)
    m.weight.rename_("H", "E")
    path = tmp_path / "m.pt"
    ember.save(m.state_dict(), path)
    sd = ember.load(path)
    assert sd["weight"].names == ("H", "E") and sd["bias"].names == (None,)
    m2 = nn.Linear(4, 3)
    m2.load_state_dict(sd)
    assert m2.weight.names == ("H", "E")
    with pytest.raises(RuntimeError, match="copy_: Error when attempting to broadcast"):
        m2.load_state_dict({"weight": ember.zeros(3, 4, names=("X", "E")), "bias": sd["bias"]})
    # collation stacks the samples: the new batch dim is unnamed (stack's rule, spec 4.6)
    from ember.utils.data import DataLoader, default_collate

    samples = [ember.tensor(_np(3, 4, seed=i), names=("C", "L")) for i in range(4)]
    batch = next(iter(DataLoader(samples, batch_size=2)))
    assert batch.names == (None, "C", "L")
    np.testing.assert_array_equal(
        batch.rename(None).numpy(), np.stack([_np(3, 4, seed=i) for i in (0, 1)])
    )
    with pytest.raises(RuntimeError, match="stack: Error when attempting to broadcast"):
        default_collate([samples[0], samples[1].rename("D", "L")])


# ------------------------------------------------------------------ 7. attention, conv bias, bilinear
def test_sdpa_unifies_batch_names_and_checks_a_named_mask():
    """Spec 4.3 says attention keeps the query's names and checks the feature names; it is
    silent on the other dims, so matmul's rule (4.4) for q @ k^T and its product with v decides:
    batch dims unify, and a named mask unifies with the scores' (batch, L, S) names."""
    (q, tq), (k, tk), (v, tv) = (
        _pair(2, 5, 4, names=("N", "L", "E"), seed=0, grad=True),
        _pair(2, 6, 4, names=("N", "S", "E"), seed=1, grad=True),
        _pair(2, 6, 4, names=(None, "S", "E"), seed=2, grad=True),
    )
    m = np.random.default_rng(3).random((5, 6)) > 0.3
    mask = ember.tensor(m, names=("L", "S"))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(m))
    assert out.names == ("N", "L", "E")
    _close(out, ref)
    g = _np(2, 5, 4, seed=4)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    for e, t in ((q, tq), (k, tk), (v, tv)):
        assert e.grad.names == e.names
        _close(e.grad, t.grad)
    who = "scaled_dot_product_attention: Error when attempting to broadcast dims"
    with pytest.raises(RuntimeError, match=re.escape(who)):
        F.scaled_dot_product_attention(q, k.rename("B", "S", "E"), v)
    with pytest.raises(RuntimeError, match=re.escape(who)):
        F.scaled_dot_product_attention(q, k, v.rename("B", "S", "E"))
    with pytest.raises(RuntimeError, match=re.escape(who)):
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask.rename("S", "L"))
    # self-attention: the key's sequence name repeats the query's, so the mask's key dim is free
    self_mask = ember.tensor(np.tril(np.ones((5, 5), bool)), names=("L", None))
    assert F.scaled_dot_product_attention(q, q, q, attn_mask=self_mask).names == ("N", "L", "E")


@pytest.mark.parametrize("transposed", [False, True])
def test_conv_bias_agrees_with_a_named_weight(transposed):
    """As Linear's bias (tests/test_names_programs.py): a named weight names the output channels,
    and a named bias must agree; a weight whose output dim is unnamed takes the bias's name."""
    f = F.conv_transpose2d if transposed else F.conv2d
    fname = "conv_transpose2d" if transposed else "conv2d"
    x, tx = _pair(2, 3, 5, 5, names=NCHW)
    shape = (3, 4, 3, 3) if transposed else (4, 3, 3, 3)
    wn = ("C", "O", None, None) if transposed else ("O", "C", None, None)
    w, tw = _pair(*shape, names=wn, seed=1)
    b, tb = _pair(4, names=("O",), seed=2)
    out = f(x, w, b)
    assert out.names == ("N", "O", "H", "W")
    _close(out, getattr(torch.nn.functional, fname)(tx, tw, tb))
    with pytest.raises(RuntimeError, match=f"{fname}: the bias is named \\['P'\\]"):
        f(x, w, b.rename("P"))
    free = ("C", None, None, None) if transposed else (None, "C", None, None)
    assert f(x, w.rename(*free), b.rename("P")).names == ("N", "P", "H", "W")
    # an unnamed weight: the channel dim keeps the input's name; the bias is not consulted
    assert f(x, w.rename(None), b.rename("P")).names == NCHW


def test_bilinear_unifies_the_batch_names_of_both_inputs():
    (x1, t1), (x2, t2) = _pair(2, 3, names=("N", "A"), grad=True), _pair(2, 4, seed=1, grad=True)
    w, tw = _pair(5, 3, 4, seed=2)
    x2n = x2.rename(None, "B")
    out = F.bilinear(x1, x2n, w)
    ref = torch.nn.functional.bilinear(t1, t2, tw)
    assert out.names == ("N", None)
    _close(out, ref)
    out.backward(ember.tensor(_np(2, 5, seed=3)))
    ref.backward(torch.tensor(_np(2, 5, seed=3)))
    assert x1.grad.names == ("N", "A") and x2.grad.names == (None, None)
    _close(x1.grad, t1.grad)
    _close(x2.grad, t2.grad)
    # the batch name may come from input2 alone
    assert F.bilinear(x1.detach().rename(None), x2n.rename("N", "B"), w).names == ("N", None)
    with pytest.raises(RuntimeError, match=re.escape("bilinear: Error when attempting")):
        F.bilinear(x1, x2.rename("M", "B"), w)


def test_addr_composes_outer_and_add_names():
    """Spec section 3: fused add versions compose the product's rule with add's; addr's product
    is outer (vec1's dim, then vec2's). Its names were the input's only, or none at all."""
    (i, ti), (v1, t1), (v2, t2) = (
        _pair(3, 5, grad=True),
        _pair(3, names=("A",), seed=1, grad=True),
        _pair(5, names=("C",), seed=2, grad=True),
    )
    out = ember.addr(i, v1, v2, beta=0.5, alpha=2.0)
    ref = torch.addr(ti, t1, t2, beta=0.5, alpha=2.0)
    assert out.names == ("A", "C")
    _close(out, ref)
    g = _np(3, 5, seed=3)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    for e, t in ((i, ti), (v1, t1), (v2, t2)):
        assert e.grad.names == e.names
        _close(e.grad, t.grad)
    assert ember.addr(i.rename("A", "C"), v1, v2.rename(None)).names == ("A", "C")
    assert ember.addr(ember.zeros(5, names=("C",)), v1, v2).names == ("A", "C")
    x = ember.zeros(3, 5)
    assert x.addr_(v1.detach(), v2.detach()) is x and x.names == ("A", "C")
    with pytest.raises(RuntimeError, match=re.escape("addr: Error when attempting to broadcast")):
        ember.addr(i.rename("X", "C"), v1, v2)
    with pytest.raises(RuntimeError, match="addr: Misaligned dims"):
        ember.addr(ember.zeros(5, names=("A",)), v1, v2.rename(None))
    with pytest.raises(RuntimeError, match=r"addr: Outer product .* duplicate names"):
        ember.addr(ember.zeros(3, 3), v1, ember.ones(3, names=("A",)))


# ------------------------------------------------------------------ 8. masks and per-class weights
def test_multihead_attention_checks_named_masks():
    """The spec is silent on attention masks; they are added to the scores, so add's rule
    decides: key_padding_mask (N, S) unifies with (batch, the key's sequence name), attn_mask
    (L, S) with (target, source). Boolean masks made float (TransformerEncoderLayer) keep names."""
    ember.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    tm = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mha.state_dict().items()})
    (q, tq), (k, tk) = _pair(2, 5, 4, names=NLE), _pair(2, 6, 4, names=("N", "S", "E"), seed=1)
    kpm_np = np.zeros((2, 6), bool)
    kpm_np[1, 4:] = True
    am_np = np.random.default_rng(2).random((5, 6)) > 0.8
    kpm, am = ember.tensor(kpm_np, names=("N", "S")), ember.tensor(am_np, names=("L", "S"))
    out, w = mha(q, k, k, key_padding_mask=kpm, attn_mask=am)
    ref, rw = tm(tq, tk, tk, key_padding_mask=torch.tensor(kpm_np), attn_mask=torch.tensor(am_np))
    assert out.names == NLE and w.names == ("N", "L", "S")
    _close(out, ref)
    _close(w, rw)
    who = "multi_head_attention_forward: Error when attempting to broadcast dims"
    for bad in (
        {"key_padding_mask": kpm.rename("M", "S")},
        {"key_padding_mask": kpm.rename("N", "X")},
        {"attn_mask": am.rename("S", "L")},
    ):
        with pytest.raises(RuntimeError, match=re.escape(who)):
            mha(q, k, k, **bad)
    # named masks alone (unnamed inputs) are checked too and leave the output unnamed
    assert mha(q.rename(None), k.rename(None), k.rename(None), attn_mask=am)[0].names == (
        None,
        None,
        None,
    )
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)
    skpm = ember.tensor(np.zeros((2, 5), bool), names=("N", "L"))
    assert layer(q, src_key_padding_mask=skpm).names == NLE
    with pytest.raises(RuntimeError, match=re.escape(who)):
        layer(q, src_key_padding_mask=skpm.rename("B", "L"))


@pytest.mark.parametrize(
    "loss, k",
    [
        (F.cross_entropy, "weight"),
        (F.nll_loss, "weight"),
        (F.multi_margin_loss, "weight"),
        (F.multilabel_soft_margin_loss, "weight"),
    ],
)
def test_loss_class_weight_is_checked_against_the_class_dim(loss, k):
    """Spec 4.3: a per-class weight is a layer weight over the class dim (dim 1): a named one is
    checked against the input's class name; passed by keyword or position alike."""
    x, tx = _pair(3, 4, names=NC, grad=True)
    if loss is F.multilabel_soft_margin_loss:
        tg = (_np(3, 4, seed=1) > 0).astype(np.float32)
        et, tt = ember.tensor(tg, names=NC), torch.tensor(tg)
    else:
        et, tt = ember.tensor([0, 2, 1], names=("N",)), torch.tensor([0, 2, 1])
    wv = np.array([0.5, 1.0, 2.0, 1.5], np.float32)
    out = loss(x, et, **{k: ember.tensor(wv, names=("C",))}, reduction="none")
    ref = getattr(torch.nn.functional, loss.__name__)(
        tx, tt, **{k: torch.tensor(wv)}, reduction="none"
    )
    assert out.names == ("N",)
    _close(out, ref)
    out.backward(ember.tensor(_np(3, seed=2)))
    ref.backward(torch.tensor(_np(3, seed=2)))
    assert x.grad.names == NC
    _close(x.grad, tx.grad)
    with pytest.raises(RuntimeError, match=f"{loss.__name__}: the input's class dim is named 'C'"):
        loss(x, et, **{k: ember.tensor(wv, names=("K",))})
    if loss is F.cross_entropy:  # (N, C, H, W) scores: the class dim is dim 1
        img = ember.tensor(_np(2, 4, 3, 3), names=NCHW)
        cls = ember.tensor(np.random.default_rng(1).integers(0, 4, (2, 3, 3)))
        assert loss(img, cls, weight=ember.tensor(wv, names=("C",)), reduction="none").names == (
            "N",
            "H",
            "W",
        )


def test_bce_with_logits_pos_weight_unifies_with_the_input():
    (x, tx), (t, tt) = _pair(3, 4, names=NC, grad=True), _pair(3, 4, seed=1)
    t = t.sigmoid()
    tt = tt.sigmoid()
    pw = np.array([0.5, 1.0, 2.0, 1.5], np.float32)
    out = F.binary_cross_entropy_with_logits(
        x, t, pos_weight=ember.tensor(pw, names=("C",)), reduction="none"
    )
    ref = torch.nn.functional.binary_cross_entropy_with_logits(
        tx, tt, pos_weight=torch.tensor(pw), reduction="none"
    )
    assert out.names == NC
    _close(out, ref)
    # the pos_weight alone names the class dim
    r = F.binary_cross_entropy_with_logits(
        x.detach().rename(None), t, pos_weight=ember.tensor(pw, names=("C",)), reduction="none"
    )
    assert r.names == (None, "C")
    with pytest.raises(
        RuntimeError, match=re.escape(f"binary_cross_entropy_with_logits: {_CLASH}")
    ):
        F.binary_cross_entropy_with_logits(x, t, pos_weight=ember.tensor(pw, names=("K",)))


def test_embedding_bag_per_sample_weights_unify_with_the_input():
    ember.manual_seed(0)
    bag = nn.EmbeddingBag(10, 4, mode="sum")
    tb = torch.nn.EmbeddingBag(10, 4, mode="sum")
    tb.weight.data = torch.tensor(bag.weight.detach().numpy())
    idx = [[1, 2], [3, 4]]
    psw = np.array([[0.5, 1.0], [2.0, 0.25]], np.float32)
    out = bag(ember.tensor(idx, names=("N", "L")), per_sample_weights=ember.tensor(psw))
    ref = tb(torch.tensor(idx), per_sample_weights=torch.tensor(psw))
    assert out.names == ("N", None)
    _close(out, ref)
    # the weights alone name the bag dim; clashing names are the op's error
    r = bag(ember.tensor(idx), per_sample_weights=ember.tensor(psw, names=("N", "L")))
    assert r.names == ("N", None)
    with pytest.raises(RuntimeError, match=re.escape(f"embedding_bag: {_CLASH}")):
        bag(
            ember.tensor(idx, names=("N", "L")),
            per_sample_weights=ember.tensor(psw, names=("M", "L")),
        )


# ------------------------------------------------------------------ 9. nn.utils with named weights
def test_parameters_to_vector_and_back_keep_parameter_names():
    """The vector's one dim is new, so unnamed (spec 4.3); the parameters' names neither name it
    nor must agree with each other (two biases named differently made cat refuse them), and
    vector_to_parameters leaves each parameter named as it was (its .data came back unnamed)."""
    m = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
    m[0].weight.rename_("H", "E")
    m[0].bias.rename_("H")
    m[1].bias.rename_("O")
    names = [p.names for p in m.parameters()]
    vals = [p.detach().rename(None).numpy().copy() for p in m.parameters()]
    v = nn.utils.parameters_to_vector(m.parameters())
    tv = torch.nn.utils.parameters_to_vector([torch.tensor(a) for a in vals])
    assert v.names == (None,)
    _close(v, tv)
    nn.utils.vector_to_parameters(v * 2, m.parameters())
    assert [p.names for p in m.parameters()] == names
    for p, a in zip(m.parameters(), vals):
        np.testing.assert_allclose(p.detach().rename(None).numpy(), 2 * a, rtol=1e-6)
    assert m(ember.tensor(_np(5, 4), names=("N", "E"))).names == ("N", "H")


@pytest.mark.parametrize("shape", [(3, 3), (3, 4), (4, 3)])
@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_parametrization_of_a_named_weight(shape, orth_map):
    """A square named weight made orthogonal_ refused itself (X^H X would repeat a name); the
    parametrized weight and its original keep the weight's names, gradients too."""
    m = nn.Linear(shape[1], shape[0])
    m.weight.rename_("H", "E")
    nn.utils.parametrizations.orthogonal(m, orthogonal_map=orth_map)
    w = m.weight.rename(None)
    q = w.mT @ w if shape[0] >= shape[1] else w @ w.mT
    np.testing.assert_allclose(q.detach().numpy(), np.eye(min(shape)), atol=1e-5)
    assert m.weight.names == ("H", "E")
    orig = m.parametrizations.weight.original
    assert orig.names == ("H", "E")
    x = ember.tensor(_np(2, shape[1]), names=("N", "E"), requires_grad=True)
    out = m(x)
    assert out.names == ("N", "H")
    out.backward(ember.tensor(_np(2, shape[0], seed=1)))
    assert orig.grad.names == ("H", "E") and x.grad.names == ("N", "E")
    with pytest.raises(RuntimeError, match="the input's features dim is named 'X'"):
        m(ember.tensor(_np(2, shape[1]), names=("N", "X")))


def test_slice_copy_takes_a_name_and_checks_its_dim():
    """slice_copy wrapped its dim modulo the rank (torch: IndexError) and could not take a name
    (section 1: every dim argument accepts one)."""
    e, t = _pair(2, 3, 4, names=NCL)
    r = ember.slice_copy(e, "C", 1, 3)
    assert r.names == NCL
    _close(r, torch.slice_copy(t, 1, 1, 3))
    _close(ember.slice_copy(e, -1, 1, None, 2), torch.slice_copy(t, -1, 1, None, 2))
    u = e.rename(None)
    for bad in (3, -4):
        with pytest.raises(IndexError) as err:
            ember.slice_copy(u, bad)
        with pytest.raises(IndexError) as terr:
            torch.slice_copy(t, bad)
        assert str(err.value) == str(terr.value)
    with pytest.raises(IndexError, match=r"slice\(\) cannot be applied to a 0-dim tensor"):
        ember.slice_copy(ember.tensor(1.0), 0)
    with pytest.raises(TypeError, match="must be int, not NoneType"):
        ember.slice_copy(u, None)
    with pytest.raises(RuntimeError, match=_LOOKUP):
        ember.slice_copy(e, None)
    with pytest.raises(RuntimeError, match="Name 'Q' not found"):
        ember.slice_copy(e, "Q")


# ------------------------------------------------------------------ 10. gather / scatter / index_*
_IDX = np.array([[0, 2], [1, 1], [2, 0]])


@pytest.mark.parametrize(
    "op",
    ["gather", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy"],
)
def test_index_and_source_names_pair_with_the_input_outside_dim(op):
    """Spec 4.6 lets these take names for ``dim``; it is silent on the index and source tensors.
    They pair with the input position by position on every other dim, so add's rule applies
    there (they were ignored: a source named ('K', ...) beside an ('N', ...) input passed)."""
    x, tx = _pair(3, 3, names=NC, grad=True)
    src, tsrc = _pair(3, 2, seed=1, grad=True)
    if op.startswith("index"):
        idx, tidx = ember.tensor([2, 0]), torch.tensor([2, 0])
        args_e, args_t = (idx, src), (tidx, tsrc)
    else:
        idx, tidx = ember.tensor(_IDX), torch.tensor(_IDX)
        args_e, args_t = ((idx,), (tidx,)) if op == "gather" else ((idx, src), (tidx, tsrc))
    extra = ("sum",) if op == "scatter_reduce" else ()

    def call(lib_x, dim, *args):
        return getattr(lib_x, op)(dim, *args, *extra)

    src_named = src.rename("N", "J")
    named_args = tuple(src_named if a is src else a for a in args_e)
    if op == "gather":
        named_args = (idx.rename("N", "J"),)
    out = call(x, "C", *named_args)
    ref = call(tx, 1, *args_t)
    assert out.names == NC
    _close(out, ref)
    g = _np(*out.shape, seed=2)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    assert x.grad.names == NC
    _close(x.grad, tx.grad)
    if op != "gather":
        assert src.grad.names == (None, None)
        _close(src.grad, tsrc.grad)
    bad = tuple(a.rename("K", "J") if a is src_named or op == "gather" else a for a in named_args)
    with pytest.raises(RuntimeError, match=r"\['K', 'J'\] pairs with Tensor\['N', 'C'\]"):
        call(x, 1, *bad)
    # an unnamed input takes the index's / source's names outside dim
    assert call(x.detach().rename(None), 1, *named_args).names == ("N", None)


# ------------------------------------------------------------------ 11. categorical samples
@pytest.mark.parametrize("family", ["Categorical", "OneHotCategorical", "Multinomial"])
def test_categorical_family_samples_keep_batch_and_event_names(family):
    """Every other distribution's sample keeps its parameters' names (spec 4.2: a draw per
    batch element); the categorical family's (drawn through multinomial) came back unnamed."""
    import ember.distributions as ED

    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], np.float32)
    args = (5,) if family == "Multinomial" else ()
    d = getattr(ED, family)(*args, probs=ember.tensor(probs, names=NC))
    td = getattr(torch.distributions, family)(*args, probs=torch.tensor(probs))
    event = () if family == "Categorical" else ("C",)
    for shape in ((), (4,)):
        ember.manual_seed(0)
        s = d.sample(shape)
        assert s.names == (None,) * len(shape) + ("N",) + event
        assert tuple(s.shape) == tuple(td.sample(shape).shape)
        lp = d.log_prob(s)
        assert lp.names == (None,) * len(shape) + ("N",)
        _close(lp, td.log_prob(torch.tensor(s.rename(None).numpy())))
    # unnamed parameters: unnamed samples, as before
    assert getattr(ED, family)(*args, probs=ember.tensor(probs)).sample().names == (None,) * (
        1 + len(event)
    )


def test_grid_sample_and_max_unpool_pair_their_inputs_names():
    """grid_sample draws one grid per sample (their batch names unify); max_unpool's indices
    pair with the values one to one (add's rule). Both ignored the second tensor's names."""
    (x, tx), (g, tg) = _pair(2, 3, 4, 4, names=NCHW, grad=True), _pair(2, 3, 3, 2, seed=1)
    g, tg = g.tanh(), tg.tanh()
    grid = g.rename("N", "P", "Q", None)
    out = F.grid_sample(x, grid, align_corners=False)
    ref = torch.nn.functional.grid_sample(tx, tg, align_corners=False)
    assert out.names == ("N", "C", "P", "Q")
    _close(out, ref)
    out.backward(ember.tensor(_np(2, 3, 3, 3, seed=2)))
    ref.backward(torch.tensor(_np(2, 3, 3, 3, seed=2)))
    assert x.grad.names == NCHW
    _close(x.grad, tx.grad)
    assert F.grid_sample(x.detach().rename(None), grid, align_corners=False).names[0] == "N"
    with pytest.raises(RuntimeError, match=re.escape(f"grid_sample: {_CLASH}")):
        F.grid_sample(x, g.rename("M", "P", "Q", None), align_corners=False)
    v, i = F.max_pool2d(x, 2, return_indices=True)
    tv, ti = torch.nn.functional.max_pool2d(tx, 2, return_indices=True)
    u = F.max_unpool2d(v, i, 2)
    assert u.names == NCHW
    _close(u, torch.nn.functional.max_unpool2d(tv, ti, 2))
    assert F.max_unpool2d(v.rename(None), i, 2).names == NCHW  # the indices name the result
    with pytest.raises(RuntimeError, match=re.escape(f"max_unpool2d: {_CLASH}")):
        F.max_unpool2d(v, i.rename("N", "X", "H", "W"), 2)


def test_autograd_functional_jacobian_names_its_input_dims():
    """Spec 4.1: a Jacobian's input dims are a gradient's, named like the input (they were all
    unnamed); its output dims keep the output's names unless one repeats an input name."""
    e, t = _pair(2, 3, names=NC)
    jac = ember.autograd.functional.jacobian(lambda a: a.sin().sum("C"), e)
    ref = torch.autograd.functional.jacobian(lambda a: a.sin().sum(1), t)
    assert jac.names == (None, "N", "C")
    _close(jac, ref)
    jb = ember.autograd.functional.jacobian(lambda a: a.sin().sum("C").rename("B"), e)
    assert jb.names == ("B", "N", "C")
    ja, jb = ember.autograd.functional.jacobian(lambda a, b: a * b, (e, e.detach().rename(None)))
    assert ja.names == (None, None, "N", "C") and jb.names == NC + (None, None)
    h = ember.autograd.functional.hessian(lambda a: (a**3).sum(), e)
    _close(h, torch.autograd.functional.hessian(lambda a: (a**3).sum(), t))
    assert h.names == (None, None, "N", "C")
    assert (
        ember.autograd.functional.jacobian(lambda a: a.sin(), e.rename(None)).names == (None,) * 4
    )


@pytest.mark.parametrize("cell", ["RNNCell", "GRUCell", "LSTMCell"])
def test_rnn_cells_check_and_take_the_state_batch_name(cell):
    """As the fused layers do (tests/test_names_leftovers.py): a state's batch name is checked
    against the input's with the layer's message (it failed inside the step with add's), and an
    unnamed input's batch takes it; the features name follows the input (GRU/LSTM cells gave the
    state's name through their elementwise gates, RNNCell none)."""
    ember.manual_seed(0)
    m = getattr(nn, cell)(4, 3)
    tm = getattr(torch.nn, cell)(4, 3)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    (x, tx), (h, th) = _pair(2, 4, grad=True), _pair(2, 3, seed=1)
    hn = h.rename("N", "H")
    state, tstate = ((hn, hn), (th, th)) if cell == "LSTMCell" else (hn, th)
    out, ref = m(x, state), tm(tx, tstate)
    out, ref = (out[0], ref[0]) if cell == "LSTMCell" else (out, ref)
    assert out.names == ("N", None)
    _close(out, ref)
    out.backward(ember.tensor(_np(2, 3, seed=2)))
    ref.backward(torch.tensor(_np(2, 3, seed=2)))
    assert x.grad.names == (None, None)
    _close(x.grad, tx.grad)
    named = m(x.detach().rename("N", "E"), state)
    assert (named[0] if cell == "LSTMCell" else named).names == ("N", "E")
    with pytest.raises(RuntimeError, match=f"{cell}: the input's batch dim 'M' does not match hx"):
        m(x.detach().rename("M", "E"), state)


def test_block_diag_takes_differently_named_blocks():
    """Spec 4.2: no op refuses a named tensor. block_diag concatenated the padded blocks with
    cat's unify rule, so blocks named differently were refused; its dims are new (unnamed)."""
    (a, ta), (b, tb) = _pair(2, 3, names=NC, grad=True), _pair(3, 4, names=("C", "O"), seed=1)
    b.requires_grad_()
    tb.requires_grad_()
    out, ref = ember.block_diag(a, b), torch.block_diag(ta, tb)
    assert out.names == (None, None)
    _close(out, ref)
    out.backward(ember.tensor(_np(5, 7, seed=2)))
    ref.backward(torch.tensor(_np(5, 7, seed=2)))
    assert a.grad.names == NC and b.grad.names == ("C", "O")
    _close(a.grad, ta.grad)
    _close(b.grad, tb.grad)
    assert ember.block_diag(a).names == NC  # one block: the same tensor, the same names
