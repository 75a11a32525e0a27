"""Parity regressions found by the eighth wave of realistic PyTorch programs (language models and
sequence code; torch is the oracle): rms_norm's default eps for float16/bfloat16 inputs (float32's,
the dtype it computes in); half-precision GELU (tanh and exact), SiLU, GLU, Mish and logsigmoid
computed in float32 and rounded once (the tanh GELU of a bfloat16 input came back float32), and
log_softmax's last-dim rounding of its sum of exps in the half dtype; the grad_fn names printed
with a transformer's tensors: scaled_dot_product_attention (cpu flash kernel or math path),
MultiheadAttention's batch-first output and per-head weights, reshape of a non-viewable tensor
(repeat_kv, merging heads) or a non-contiguous one (_reshape_alias), a folded linear without bias,
rms_norm, einsum, outer, trace, diag, real/imag, sum_to_size, repeat_interleave, generated names
with a letter after a digit (Log1PBackward0), writes into a buffer (outs[t] = pred: CopySlices,
whose name() is torch::autograd::CopySlices), embedding_bag and the composite activations;
NonDynamicallyQuantizableLinear in nn.modules.linear, sdpa_kernel setting torch.backends.cuda's
switches; the errors of pack_padded_sequence's lengths, LSTM's (h, c), torch.tensor of strings and
a 1-D attention mask on the flash path; and torch's warnings for x.T on a non-matrix,
torch.backends.cuda.sdp_kernel and an rms_norm weight of another dtype."""

from __future__ import annotations

import math
import warnings

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(ember) and fn(torch)."""
    return fn(ember), fn(torch)


def _node(t) -> str | None:
    return None if t.grad_fn is None else t.grad_fn.name()


# ------------------------------------------------------------------- rms_norm default eps
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("weight", [False, True])
def test_rms_norm_default_eps_is_the_compute_dtypes(dtype, weight):
    x = np.linspace(-1, 1, 24).reshape(4, 6) * 0.05  # small rows: eps is visible

    def run(m):
        w = m.linspace(0.5, 1.5, 6) if weight else None
        return m.nn.functional.rms_norm(m.tensor(x).to(getattr(m, dtype)), (6,), w)

    e, t = _both(run)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=1e-2, atol=1e-6)
    # the low-precision results agree to the last bit (one rounding of the float32 result)
    assert e.float().tolist() == t.float().tolist() or dtype in ("float32", "float64")


def test_rms_norm_module_in_bfloat16():
    x = np.linspace(-0.02, 0.03, 16).reshape(2, 8)

    def run(m):
        n = m.nn.RMSNorm(8).to(m.bfloat16)
        return n(m.tensor(x, dtype=m.bfloat16))

    e, t = _both(run)
    assert e.float().tolist() == t.float().tolist()


def test_rms_norm_gradient_low_precision_input():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    g = np.arange(12.0).reshape(3, 4) / 7

    def run(m):
        a = m.tensor(x, dtype=m.float16, requires_grad=True)
        m.nn.functional.rms_norm(a, (4,)).backward(m.tensor(g, dtype=m.float16))
        return a.grad

    e, t = _both(run)
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(
    "xdt,wdt",
    [
        ("float32", None),
        ("float32", "float32"),
        ("float64", "float32"),
        ("float32", "float64"),
        ("float16", "float32"),
        ("float16", "float16"),
        ("bfloat16", None),
    ],
)
def test_rms_norm_grad_fn_name(xdt, wdt):
    def run(m):
        x = m.ones(2, 3, dtype=getattr(m, xdt), requires_grad=True)
        w = None if wdt is None else m.ones(3, dtype=getattr(m, wdt))
        return m.nn.functional.rms_norm(x, (3,), w)

    e, t = _both(run)
    assert _node(e) == _node(t)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


# ------------------------------------------------------------------- attention's nodes
SDPA = [
    ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), {}),
    ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), {"is_causal": True}),
    ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), {"mask": (3, 5)}),
    ((1, 4, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), {"enable_gqa": True}),
    ((1, 2, 3, 4), (1, 1, 3, 4), (1, 1, 3, 4), {}),  # heads broadcast: math path
    ((2, 2, 3, 4), (2, 2, 3, 4), (1, 2, 3, 4), {}),  # batch broadcast: math path
    ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 6), {}),  # another value head size
    ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), {"mask_grad": (3, 3)}),
    ((2, 3, 4), (2, 3, 4), (2, 3, 4), {}),
    ((3, 4), (3, 4), (3, 4), {}),
    ((1, 1, 2, 3, 4), (1, 1, 2, 3, 4), (1, 1, 2, 3, 4), {}),
    ((2, 3, 4), (3, 4), (3, 4), {}),
]


@pytest.mark.parametrize("qs,ks,vs,kw", SDPA)
def test_sdpa_grad_fn_name(qs, ks, vs, kw):
    def run(m):
        opts = dict(kw)
        if "mask" in opts:
            opts["attn_mask"] = m.zeros(opts.pop("mask"))
        if "mask_grad" in opts:
            opts["attn_mask"] = m.zeros(opts.pop("mask_grad"), requires_grad=True)
        q, k, v = (
            m.linspace(-1, 1, int(np.prod(s))).reshape(s).requires_grad_() for s in (qs, ks, vs)
        )
        return m.nn.functional.scaled_dot_product_attention(q, k, v, **opts)

    e, t = _both(run)
    assert _node(e) == _node(t)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (2, 3, 4), (3, 4)])
def test_sdpa_dropout_is_the_math_path(shape):
    def run(m):
        q = m.ones(shape, requires_grad=True)
        return m.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)

    e, t = _both(run)
    assert _node(e) == _node(t)


def test_sdpa_without_grad_has_no_node():
    e, t = _both(lambda m: m.nn.functional.scaled_dot_product_attention(*[m.ones(1, 1, 2, 4)] * 3))
    assert e.grad_fn is None and t.grad_fn is None


def test_sdpa_gradient_unchanged():
    q = ember.linspace(-1, 1, 24, dtype=ember.float64).reshape(1, 2, 3, 4).requires_grad_()
    k = ember.linspace(1, -1, 24, dtype=ember.float64).reshape(1, 2, 3, 4).requires_grad_()
    f = ember.nn.functional.scaled_dot_product_attention
    assert ember.autograd.gradcheck(lambda a, b: f(a, b, b * 2, is_causal=True), (q, k))


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_multihead_attention_grad_fn_names(batch_first, need_weights, average):
    def run(m):
        m.manual_seed(0)
        mha = m.nn.MultiheadAttention(8, 2, batch_first=batch_first)
        q = m.linspace(-1, 1, 48).reshape(2, 3, 8)
        return mha(q, q, q, need_weights=need_weights, average_attn_weights=average)

    (eo, ew), (to, tw) = _both(run)
    assert _node(eo) == _node(to)
    assert (ew is None) == (tw is None)
    if tw is not None:
        assert _node(ew) == _node(tw)
        assert tuple(ew.shape) == tuple(tw.shape)


def test_multihead_attention_unbatched_names():
    def run(m):
        mha = m.nn.MultiheadAttention(8, 2, batch_first=True)
        q = m.ones(3, 8)
        return mha(q, q, q, average_attn_weights=False)

    (eo, ew), (to, tw) = _both(run)
    assert (_node(eo), _node(ew)) == (_node(to), _node(tw))


# ------------------------------------------------------------------- reshapes, linear, einsum
RESHAPES = [
    lambda x: x.transpose(1, 2).reshape(2, 12),  # merging heads after attention
    lambda x: x[:, None].expand(2, 2, 3, 4).reshape(4, 3, 4),  # repeat_kv
    lambda x: x.transpose(0, 1).flatten(),
    lambda x: x.permute(2, 0, 1).reshape(4, 6),
    lambda x: x.reshape(6, 4),  # a view
    lambda x: x[0].reshape(12),  # a view of a contiguous slice
    lambda x: x[:, :2].reshape(2, 2, 2, 2),  # _reshape_alias: a view of a non-contiguous one
    lambda x: x.permute(2, 0, 1).flatten(1),
    lambda x: x.mT.reshape(2, 2, 2, 3),
    lambda x: x[:, 1].reshape(8),
    lambda x: x.transpose(0, 1).reshape_as(x.new_ones(6, 4)),
]


@pytest.mark.parametrize("fn", RESHAPES)
def test_reshape_copy_grad_fn_name(fn):
    def run(m):
        x = m.arange(24.0).reshape(2, 3, 4).requires_grad_()
        y = fn(x)
        y.backward(m.arange(float(y.numel())).reshape(y.shape) / 5)
        return y, x.grad

    (ey, eg), (ty, tg) = _both(run)
    assert _node(ey) == _node(ty)
    assert ey.tolist() == ty.tolist() and eg.tolist() == tg.tolist()


@pytest.mark.parametrize("xshape", [(3, 4), (2, 3, 4), (1, 2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [False, True])
def test_linear_grad_fn_name(xshape, bias):
    def run(m):
        x = m.ones(xshape, requires_grad=True)
        w = m.linspace(-1, 1, 20).reshape(5, 4)
        return m.nn.functional.linear(x, w, m.ones(5) if bias else None)

    e, t = _both(run)
    assert _node(e) == _node(t)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)


EINSUM = [
    ("i,j->ij", (3,), (4,)),
    ("i,j->ji", (3,), (4,)),
    ("ij,kj->ik", (3, 4), (5, 4)),
    ("bhid,bhjd->bhij", (2, 2, 3, 4), (2, 2, 5, 4)),
    ("bhij,bhjd->bhid", (2, 2, 3, 5), (2, 2, 5, 4)),
    ("bi,bj->bij", (2, 3), (2, 4)),
    ("ij,k->ik", (2, 3), (4,)),
    ("i,i->", (3,), (3,)),
    ("ij->ji", (3, 4), None),
    ("ii->i", (3, 3), None),
    ("ij->", (3, 4), None),
    ("ij->i", (3, 4), None),
]


@pytest.mark.parametrize("eq,a,b", EINSUM)
def test_einsum_grad_fn_name(eq, a, b):
    def run(m):
        ops = [m.linspace(-1, 1, int(np.prod(s))).reshape(s).requires_grad_() for s in (a, b) if s]
        return m.einsum(eq, *ops)

    e, t = _both(run)
    assert _node(e) == _node(t)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_outer_grad_fn_name_and_gradient():
    def run(m):
        a = m.arange(3.0, requires_grad=True)
        b = m.linspace(0, 1, 4, requires_grad=True)
        y = m.outer(a, b)
        y.backward(m.arange(12.0).reshape(3, 4))
        return y, a.grad, b.grad

    (ey, ea, eb), (ty, ta, tb) = _both(run)
    assert _node(ey) == _node(ty)
    np.testing.assert_allclose(ea.numpy(), ta.numpy(), rtol=1e-6)
    np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=1e-6)


# ------------------------------------------------------------------- composite functions
FUNCTIONAL = {
    "glu": lambda F, x: F.glu(x),
    "mish": lambda F, x: F.mish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "celu": lambda F, x: F.celu(x, 0.7),
    "prelu": lambda F, x: F.prelu(x, x.new_ones(1) * 0.2),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "softshrink": lambda F, x: F.softshrink(x, 0.3),
    "cosine_similarity": lambda F, x: F.cosine_similarity(x, x.flip(0)),
    "pdist": lambda F, x: F.pdist(x),
    "embedding_bag_mean": lambda F, x: F.embedding_bag(x.new_tensor([[0, 1], [2, 1]]).long(), x),
    "embedding_bag_sum": lambda F, x: F.embedding_bag(
        x.new_tensor([0, 2, 1]).long(), x, x.new_tensor([0, 1]).long(), mode="sum"
    ),
    "embedding_bag_max": lambda F, x: F.embedding_bag(x.new_tensor([[0, 1]]).long(), x, mode="max"),
}


def _same_node_value_grad(fn, shape, bound=2.0, grad_atol=1e-6):
    """``fn(m, x)`` on ``x`` = linspace(-bound, bound) of ``shape``: torch's node name, value and
    gradient (for a non-uniform upstream gradient)."""

    def run(m):
        x = m.linspace(-bound, bound, math.prod(shape)).reshape(shape).requires_grad_()
        y = fn(m, x)
        y.backward(m.linspace(0.5, 1.5, y.numel()).reshape(y.shape))
        return y, x.grad

    (ey, eg), (ty, tg) = _both(run)
    assert _node(ey) == _node(ty)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-5, atol=grad_atol)


@pytest.mark.parametrize("name", list(FUNCTIONAL))
def test_composite_grad_fn_names(name):
    _same_node_value_grad(lambda m, x: FUNCTIONAL[name](m.nn.functional, x), (3, 4))


def test_mish_inplace_grad_fn_name():
    def run(m):
        x = m.linspace(-2, 2, 6).requires_grad_()
        return m.nn.functional.mish(x * 1, inplace=True)

    e, t = _both(run)
    assert _node(e) == _node(t)


def test_composite_names_survive_backward():
    """The engine frees what a node saved after backward; the name stays."""
    x = ember.ones(2, 4, requires_grad=True)
    y = ember.nn.functional.glu(x)
    y.sum().backward()
    assert y.grad_fn.name() == "GluBackward0"


# ------------------------------------------------------------------- module and argument checks
def test_non_dynamically_quantizable_linear_lives_in_linear():
    """Weight-decay grouping code imports it from nn.modules.linear (nanoGPT-style)."""
    from ember.nn.modules.linear import NonDynamicallyQuantizableLinear as E
    from torch.nn.modules.linear import NonDynamicallyQuantizableLinear as T

    e = ember.nn.MultiheadAttention(8, 2).out_proj
    t = torch.nn.MultiheadAttention(8, 2).out_proj
    assert isinstance(e, E) and isinstance(t, T)
    assert type(e).__module__.replace("ember", "torch") == type(t).__module__
    assert repr(e) == repr(t)


def _outcome(fn):
    try:
        r = fn()
    except Exception as ex:  # noqa: BLE001 - the type is what is compared
        return type(ex).__name__, str(ex)
    return "ok", r


@pytest.mark.parametrize(
    "lengths",
    [
        lambda m: m.tensor([[3, 2]]),
        lambda m: m.tensor(3),
        lambda m: m.tensor([3, 2]).view(2, 1),
        lambda m: [[3, 2]],
        lambda m: 3,
        lambda m: m.tensor([3, 2]),
        lambda m: m.tensor([3.0, 2.0]),
        lambda m: (3, 2),
    ],
)
def test_pack_padded_sequence_lengths_rank(lengths):
    def run(m):
        p = m.nn.utils.rnn.pack_padded_sequence(m.ones(3, 2, 4), lengths(m))
        return p.batch_sizes.tolist()

    assert _outcome(lambda: run(ember)) == _outcome(lambda: run(torch))


@pytest.mark.parametrize(
    "hx",
    [
        lambda m: m.zeros(1, 3, 4),  # one tensor for (h, c): indexed like torch
        lambda m: m.zeros(2, 3, 4),
        lambda m: (m.zeros(1, 3, 4),),
        lambda m: (m.zeros(1, 3, 4),) * 3,
        lambda m: [m.zeros(1, 3, 4)] * 2,
    ],
)
def test_lstm_hidden_state_arity(hx):
    def run(m):
        m.manual_seed(0)
        out, (h, c) = m.nn.LSTM(4, 4)(m.ones(2, 3, 4), hx(m))
        return tuple(out.shape), tuple(h.shape), tuple(c.shape)

    assert _outcome(lambda: run(ember)) == _outcome(lambda: run(torch))


@pytest.mark.parametrize(
    "data",
    [
        "a",
        b"ab",
        ["a", "b"],  # token strings passed by mistake
        [["a"]],
        ["a", 1],
        [1, "a"],
        [b"a"],
        [1, b"x"],
        [[1, 2], ["a", "b"]],
    ],
)
@pytest.mark.parametrize("factory", ["tensor", "as_tensor"])
def test_tensor_from_strings_errors(data, factory):
    def run(m):
        return getattr(m, factory)(data)

    e, t = _outcome(lambda: run(ember)), _outcome(lambda: run(torch))
    assert t[0] != "ok" and e == t


# ------------------------------------------------------------------- sdpa backend switches
def _sdp_flags(m):
    c = m.backends.cuda
    return (
        c.flash_sdp_enabled(),
        c.mem_efficient_sdp_enabled(),
        c.math_sdp_enabled(),
        c.cudnn_sdp_enabled(),
    )


def _backends(m):
    from importlib import import_module

    att = import_module(f"{m.__name__}.nn.attention")
    return [b.name for b in att._cur_sdpa_kernel_backends()]


@pytest.mark.parametrize(
    "chosen",
    [["MATH"], ["CUDNN_ATTENTION"], ["EFFICIENT_ATTENTION", "MATH"], ["OVERRIDEABLE"]],
)
@pytest.mark.parametrize("set_priority", [False, True])
def test_sdpa_kernel_sets_the_backend_switches(chosen, set_priority):
    def run(m):
        from importlib import import_module

        att = import_module(f"{m.__name__}.nn.attention")
        backends = [getattr(att.SDPBackend, c) for c in chosen]
        before = (_sdp_flags(m), _backends(m))
        with att.sdpa_kernel(backends, set_priority=set_priority):
            inside = (_sdp_flags(m), _backends(m))
            with att.sdpa_kernel(att.SDPBackend.MATH):
                nested = (_sdp_flags(m), _backends(m))
            after_nested = (_sdp_flags(m), _backends(m))
        return before, inside, nested, after_nested, (_sdp_flags(m), _backends(m))

    assert run(ember) == run(torch)


def test_sdpa_kernel_restores_a_disabled_switch():
    def run(m):
        from importlib import import_module

        att = import_module(f"{m.__name__}.nn.attention")
        m.backends.cuda.enable_math_sdp(False)
        try:
            first = (_sdp_flags(m), _backends(m))
            with att.sdpa_kernel([att.SDPBackend.MATH]):
                inside = _sdp_flags(m)
            return first, inside, _sdp_flags(m), m.backends.cuda.is_flash_attention_available()
        finally:
            m.backends.cuda.enable_math_sdp(True)

    assert run(ember) == run(torch)


# ------------------------------------------------------------------- writes into a buffer
_T = "tensor"
SETITEM = [
    1,
    slice(0, 2),
    slice(None),
    (1, 0),
    (slice(None), 0),
    Ellipsis,
    (Ellipsis, slice(None)),
    None,
    (1, Ellipsis),
    (_T, [0, 2]),  # an index tensor alone: index_put
    ((slice(None), (_T, [0, 2]))),
    (((_T, [0, 1]), slice(None))),
    (((_T, [0, 1]), 1)),  # an int besides the tensor: a view is written
    ((1, (_T, [0, 2]))),
    ((slice(1, 3), (_T, [0, 2]))),
    ((None, (_T, [0, 1]))),
    (_T, 1),  # a 0-d index tensor is an int
]


def _index(m, idx):
    if isinstance(idx, tuple) and len(idx) == 2 and idx[0] == _T:
        return m.tensor(idx[1])
    if isinstance(idx, tuple):
        return tuple(_index(m, i) for i in idx)
    return idx


@pytest.mark.parametrize("idx", SETITEM)
def test_setitem_grad_fn_names(idx):
    """outs[t] = pred in a decoding loop: torch prints CopySlices (name()
    torch::autograd::CopySlices), index_put's node only for pure tensor indexing."""

    def run(m):
        p = m.ones(1, requires_grad=True) * 2
        o = m.zeros(4, 3)
        o[_index(m, idx)] = p
        o.backward(m.arange(12.0).reshape(4, 3))
        return o, p

    (eo, _), (to, _) = _both(run)
    assert eo.grad_fn.name() == to.grad_fn.name()
    assert repr(eo.grad_fn).split(" object")[0] == repr(to.grad_fn).split(" object")[0]
    assert str(eo).replace("ember", "torch") == str(to)
    assert eo.tolist() == to.tolist()


def test_copy_and_view_write_names():
    def run(m):
        p = m.ones(3, requires_grad=True) * 2
        a = m.zeros(3)
        a.copy_(p)
        b = m.zeros(4, 3)
        b[1:].copy_(p.expand(3, 3))
        return a, b

    (ea, eb), (ta, tb) = _both(run)
    for e, t in ((ea, ta), (eb, tb)):
        assert e.grad_fn.name() == t.grad_fn.name()
        assert repr(e.grad_fn).split(" object")[0] == repr(t.grad_fn).split(" object")[0]
        assert str(e).replace("ember", "torch") == str(t)


def test_not_implemented_node_prints_its_type_name():
    def run(m):
        a = m.tensor([[4.0, 1.0], [1.0, 3.0]], requires_grad=True)
        ld = m.linalg.ldl_factor_ex(a).LD
        return ld.grad_fn.name(), str(ld).split("grad_fn=")[1]

    assert run(ember) == run(torch)


# ------------------------------------------------------------------- generated node names
NAMED_OPS = {
    "log1p": lambda m, x: m.log1p(x + 2),
    "special_log1p": lambda m, x: m.special.log1p(x + 2),
    "xlog1py": lambda m, x: m.special.xlog1py(x, x + 2),
    "i0e": lambda m, x: m.special.i0e(x),
    "i1e": lambda m, x: m.special.i1e(x),
    "deg2rad": lambda m, x: m.deg2rad(x),
    "rad2deg": lambda m, x: m.rad2deg(x),
    "rfft": lambda m, x: m.view_as_real(m.fft.rfft(x)),
    "fft": lambda m, x: m.view_as_real(m.fft.fft(x)),
    "irfft": lambda m, x: m.fft.irfft(x),
    "expm1": lambda m, x: m.expm1(x),
    "real": lambda m, x: m.complex(x, x * 2).real,
    "imag": lambda m, x: m.complex(x, x * 2).imag,
    "trace": lambda m, x: x[0, :, :3].trace(),
    "diag_of_matrix": lambda m, x: x[0].diag(),
    "diag_offset": lambda m, x: x[0].diag(1),
    "diag_of_vector": lambda m, x: x[0, 0].diag(),
    "sum_to_size_keep": lambda m, x: x.sum_to_size(1, 3, 1),
    "sum_to_size_lead": lambda m, x: x.sum_to_size(3, 4),
    "sum_to_size_both": lambda m, x: x.sum_to_size(3, 1),
    "repeat_interleave_int": lambda m, x: x.repeat_interleave(2, dim=1),
    "repeat_interleave_flat": lambda m, x: x.repeat_interleave(2),
    "repeat_interleave_tensor": lambda m, x: x.repeat_interleave(m.tensor([1, 2, 1]), dim=1),
    "repeat_interleave_0d": lambda m, x: x.repeat_interleave(m.tensor(2), dim=1),
}


@pytest.mark.parametrize("name", list(NAMED_OPS))
def test_grad_fn_names_of_ops(name):
    _same_node_value_grad(lambda m, x: NAMED_OPS[name](m, x), (2, 3, 4), 1.0, grad_atol=1e-5)


def test_generated_names_capitalize_after_digits():
    """torch's codegen writes log1p's node Log1PBackward0 (a letter after a digit is upper)."""
    from ember.core.registry import OPS

    assert OPS["log1p"].backward_name == "Log1PBackward0"
    assert OPS["_fft_r2c"].backward_name == "FftR2CBackward0"
    assert OPS["log10"].backward_name == "Log10Backward0"
    assert OPS["atan2"].backward_name == "Atan2Backward0"


# ------------------------------------------------------------------- half-precision activations
HALF_ACTS = {
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "glu": lambda F, x: F.glu(x),
    "mish": lambda F, x: F.mish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(HALF_ACTS))
def test_half_activation_forward_rounds_once(name, dtype):
    """torch computes these in float32 and rounds the result once (GPT-2's tanh GELU, SwiGLU's
    SiLU in bfloat16 models); the result keeps the input's dtype."""

    def run(m):
        x = (m.sin(m.arange(256.0) * 0.37) * 4).reshape(16, 16).to(getattr(m, dtype))
        return HALF_ACTS[name](m.nn.functional, x)

    e, t = _both(run)
    assert str(e.dtype).split(".")[-1] == dtype == str(t.dtype).split(".")[-1]
    en, tn = e.float().numpy(), t.float().numpy()
    # bit-equal away from the negative tails, where both float32 formulas cancel differently
    body = np.abs(tn) > 0.02
    assert body.sum() > 100
    assert en[body].tolist() == tn[body].tolist()
    np.testing.assert_allclose(en, tn, rtol=1e-2, atol=1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu", "mish"])
def test_half_activation_gradient_rounds_once(name, dtype):
    def run(m):
        x = (m.sin(m.arange(256.0) * 0.37) * 4).reshape(16, 16).to(getattr(m, dtype))
        x.requires_grad_()
        y = HALF_ACTS[name](m.nn.functional, x)
        y.backward(m.cos(m.arange(256.0)).reshape(16, 16).to(getattr(m, dtype)))
        return x.grad

    e, t = _both(run)
    assert str(e.dtype).split(".")[-1] == dtype
    en, tn = e.float().numpy(), t.float().numpy()
    x = np.sin(np.arange(256.0) * 0.37).reshape(16, 16) * 4
    body = (np.abs(x) < 2.5) & (np.abs(tn) > 0.02)
    assert body.sum() > 60
    assert en[body].tolist() == tn[body].tolist()
    np.testing.assert_allclose(en, tn, rtol=1e-2, atol=1e-5)


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu"])
def test_activation_gradcheck_float64(name):
    x = ember.linspace(-3, 3, 11, dtype=ember.float64).requires_grad_()
    f = HALF_ACTS[name]
    assert ember.autograd.gradcheck(lambda a: f(ember.nn.functional, a), (x,))
    assert ember.autograd.gradgradcheck(lambda a: f(ember.nn.functional, a), (x,))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize(
    "shape,dim",
    [((4, 16), -1), ((2, 300), -1), ((2, 3, 40), -1), ((16, 4), 0), ((3, 5, 7), 1), ((7,), 0)],
)
def test_half_log_softmax_matches_bitwise(dtype, shape, dim):
    """torch's last-dim kernel keeps the sum of exps and its log in the half dtype (other dims
    round once): a language model's bfloat16 log-probabilities depend on it."""

    def run(m):
        n = int(np.prod(shape))
        x = (m.sin(m.arange(float(n)) * 0.37) * 3).reshape(shape).to(getattr(m, dtype))
        return m.log_softmax(x, dim)

    e, t = _both(run)
    assert str(e.dtype).split(".")[-1] == dtype
    assert e.float().tolist() == t.float().tolist()


# ------------------------------------------------------------------- deprecation warnings
_T_PROBE = """
import warnings, {m}
warnings.simplefilter("always")
out = []
for shape in [(2, 3, 4), (3,), (2, 3), (2, 3, 4), (1, 1, 1, 1), ()]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = {m}.ones(shape).T
    out.append((tuple(r.shape), [str(x.message).split(" (Triggered")[0] for x in w]))
print(repr(out))
"""


def test_T_of_non_matrix_warns_once_per_process():
    """x.T on a 3-D (or 0-D) tensor: torch's deprecation warning, once per process each."""
    import subprocess
    import sys

    def run(m):
        p = subprocess.run(
            [sys.executable, "-c", _T_PROBE.format(m=m)], capture_output=True, text=True, check=True
        )
        return p.stdout

    assert run("ember") == run("torch")


def test_backends_cuda_sdp_kernel_is_deprecated():
    def run(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ctx = m.backends.cuda.sdp_kernel(enable_math=False)
            with ctx:
                inside = m.backends.cuda.math_sdp_enabled()
        msgs = [(x.category.__name__, str(x.message)) for x in w]
        return inside, m.backends.cuda.math_sdp_enabled(), msgs

    assert run(ember) == run(torch)


@pytest.mark.parametrize(
    "shape,mask,kw",
    [
        ((1, 2, 3, 4), (3,), {}),  # the flash kernel reads the mask's size(-2)
        ((1, 2, 3, 4), (), {}),
        ((2, 3, 4), (3,), {}),  # the math path broadcasts it
        ((1, 2, 3, 4), (1, 3), {}),
        ((1, 2, 3, 4), (3,), {"dropout_p": 0.0, "scale": 0.5}),
    ],
)
def test_sdpa_low_rank_mask(shape, mask, kw):
    def run(m):
        q = m.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
        try:
            o = m.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=m.zeros(mask), **kw)
        except Exception as ex:  # noqa: BLE001 - the type is what is compared
            return type(ex).__name__, str(ex)
        return tuple(o.shape), np.round(o.numpy(), 5).tolist()

    assert run(ember) == run(torch)


_RMS_PROBE = """
import warnings, {m}
F = {m}.nn.functional
out = []
for xdt, wdt in [("float32", "float32"), ("float16", None), ("bfloat16", "float32"),
                 ("float64", "float32")]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x = {m}.ones(2, 3, dtype=getattr({m}, xdt))
        wt = None if wdt is None else {m}.ones(3, dtype=getattr({m}, wdt))
        r = F.rms_norm(x, (3,), wt)
    out.append((str(r.dtype), [str(x.message).split(" (Triggered")[0] for x in w]))
print(repr(out).replace("{m}.", "torch."))
"""


def test_rms_norm_dtype_mismatch_warns_once():
    """An RMSNorm module left in float32 applied to bfloat16 activations."""
    import subprocess
    import sys

    def run(m):
        code = _RMS_PROBE.format(m=m)
        return subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout

    assert run("ember") == run("torch")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape,dim", [((4, 16), -1), ((4, 16), 0), ((3, 5, 7), 1), ((300, 3), 0)])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_half_softmax_forward_and_gradient_bitwise(dtype, shape, dim, fn):
    """Attention probabilities of a bfloat16 model written by hand (softmax over the keys, or
    over another dim), and their gradients: torch computes both in float32 from the half
    values and rounds once (its other-dim softmax rounds exp(x - max) first)."""

    def run(m):
        n = int(np.prod(shape))
        x = (m.sin(m.arange(float(n)) * 0.37) * 3).reshape(shape).to(getattr(m, dtype))
        x.requires_grad_()
        y = getattr(m, fn)(x, dim)
        y.backward(m.cos(m.arange(float(n))).reshape(shape).to(getattr(m, dtype)))
        return y.detach(), x.grad

    (ey, eg), (ty, tg) = _both(run)
    assert str(ey.dtype).split(".")[-1] == str(eg.dtype).split(".")[-1] == dtype
    assert ey.float().tolist() == ty.float().tolist()
    assert eg.float().tolist() == tg.float().tolist()


def test_half_softmax_double_backward_still_works():
    x = ember.linspace(-1, 1, 6, dtype=ember.float64).reshape(2, 3).requires_grad_()
    assert ember.autograd.gradgradcheck(lambda a: ember.softmax(a, 0), (x,))
    h = ember.ones(3, dtype=ember.bfloat16, requires_grad=True)
    (g,) = ember.autograd.grad(ember.softmax(h, 0)[0], h, create_graph=True)
    assert g.grad_fn is not None and g.dtype == ember.bfloat16
