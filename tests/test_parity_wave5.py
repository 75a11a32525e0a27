"""Parity regressions found by the fifth wave of realistic PyTorch training scripts (torch is the
oracle): broadcast error messages (which dimension is reported), torch.compile's option checks,
ctc_loss argument-check order, autograd.functional strategy errors, Adafactor/Muon messages and
the location of the losses' target-size warning."""

from __future__ import annotations

import warnings

import ember
import pytest
from harness import needs_torch, torch


def _outcome(fn, m):
    """('ok', repr) or (exception type name, message) of fn(m)."""
    try:
        out = fn(m)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return "ok", repr(out).replace("ember", "torch")


def _same_error(fn) -> None:
    (et, em), (tt, tm) = _outcome(fn, ember), _outcome(fn, torch)
    assert tt != "ok", "torch raised nothing: the row is wrong"
    assert (et, em) == (tt, tm)


def _same(fn) -> None:
    assert _outcome(fn, ember) == _outcome(fn, torch)


# ------------------------------------------------------------- broadcast errors name the last dim
BROADCAST = [
    ((2, 3), (3, 2)),
    ((2, 3, 4), (3, 3, 5)),
    ((2, 3, 4), (5, 4)),
    ((4,), (2, 3)),
    ((2, 1, 4), (3, 1, 5)),
    ((5, 2), (3, 4, 2)),
]


@needs_torch
@pytest.mark.parametrize("a,b", BROADCAST)
@pytest.mark.parametrize("op", ["add", "mul", "sub_t"])
def test_broadcast_error_reports_trailing_mismatch(a, b, op):
    def f(m):
        x, y = m.zeros(a), m.zeros(b)
        if op == "add":
            return x + y
        if op == "mul":
            return m.mul(x, y)
        return x.transpose(0, -1) - y.transpose(0, -1) if len(a) == len(b) else x - y

    _same_error(f)


@needs_torch
def test_broadcast_error_through_parametrization():
    """Registering a parametrization whose forward cannot broadcast (t12: Sym on a 3x2 weight)."""

    def f(m):
        class Sym(m.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

        return m.nn.utils.parametrize.register_parametrization(m.nn.Linear(3, 2), "weight", Sym())

    _same_error(f)


# ------------------------------------------------------------------------- torch.compile options
@needs_torch
@pytest.mark.parametrize(
    "kw",
    [
        {"mode": "foo"},
        {"backend": "nosuch"},
        {"mode": "default", "options": {"a": 1}},
    ],
)
def test_compile_bad_options(kw):
    _same_error(lambda m: m.compile(m.nn.Linear(2, 2), **kw))


@needs_torch
def test_compile_invalid_backend_is_runtime_error():
    with pytest.raises(RuntimeError, match="Invalid backend: 'nosuch', see"):
        ember.compile(ember.nn.Linear(2, 2), backend="nosuch")
    _same_error(lambda m: m.nn.Linear(2, 2).compile(backend="nosuch"))
    _same_error(lambda m: m.nn.Linear(2, 2).compile(mode="fastest"))


@needs_torch
@pytest.mark.parametrize("mode", ["lite", "max-autotune-no-cudagraphs", "reduce-overhead"])
@pytest.mark.parametrize("backend", ["inductor", "eager", "aot_eager", "cudagraphs"])
def test_compile_known_modes_and_backends_run(mode, backend):
    def f(m):
        lin = m.nn.Linear(2, 1)
        with m.no_grad():
            lin.weight.fill_(0.5)
            lin.bias.fill_(0.25)
        return m.compile(lin, mode=mode, backend=backend)(m.ones(1, 2)).tolist()

    assert _outcome(f, ember) == _outcome(f, torch) == ("ok", "[[1.25]]")


# ------------------------------------------------------------------------------ ctc_loss checks
def _ctc(m, dtype="float32", il=(9, 7, 5), tl=(2, 2, 2), flat=False, lengths_as="tensor"):
    lp = m.arange(120.0).reshape(8, 3, 5).log_softmax(2).to(getattr(m, dtype))
    t = m.tensor([[1, 2], [1, 2], [1, 2]])
    if flat:
        t = t.flatten()
    if lengths_as == "tensor":
        il, tl = m.tensor(list(il)), m.tensor(list(tl))
    else:
        il, tl = list(il), list(tl)
    return m.nn.functional.ctc_loss(lp, t, il, tl)


CTC_ERRORS = [
    {},
    {"lengths_as": "list"},
    {"dtype": "float64"},
    {"dtype": "int64"},
    {"dtype": "int64", "il": (8, 7, 5)},
    {"il": (8, 7, 5), "tl": (2, 2, 3)},
    {"il": (9, 7, 5), "tl": (2, 2, 3)},
    {"il": (9, 7, 5), "tl": (2, 2, 3), "flat": True},
    {"il": (8, 7, 5), "tl": (2, 2, 3), "flat": True},
]


@needs_torch
@pytest.mark.parametrize("kw", CTC_ERRORS)
def test_ctc_loss_error_order_and_text(kw):
    _same_error(lambda m: _ctc(m, **kw))


@needs_torch
def test_ctc_loss_values_unchanged():
    def f(m):
        return round(float(_ctc(m, il=(8, 7, 5), tl=(2, 2, 1))), 4)

    _same(f)


# ----------------------------------------------------------- autograd.functional strategy errors
def _jac(m, **kw):
    return m.autograd.functional.jacobian(lambda a: a**2, m.tensor([1.0, 2.0]), **kw)


def _hess(m, **kw):
    return m.autograd.functional.hessian(lambda a: (a**3).sum(), m.tensor([1.0, 2.0]), **kw)


@needs_torch
@pytest.mark.parametrize(
    "fn,kw",
    [
        (_jac, {"strategy": "foo"}),
        (_jac, {"strategy": "forward-mode"}),
        (_jac, {"strategy": "forward-mode", "create_graph": True}),
        (_jac, {"strategy": "forward-mode", "create_graph": True, "vectorize": True}),
        (_hess, {"outer_jacobian_strategy": "foo"}),
        (_hess, {"outer_jacobian_strategy": "forward-mode"}),
        (_hess, {"outer_jacobian_strategy": "forward-mode", "create_graph": True}),
        (
            _hess,
            {"outer_jacobian_strategy": "forward-mode", "create_graph": True, "vectorize": True},
        ),
    ],
)
def test_functional_strategy_errors(fn, kw):
    _same_error(lambda m: fn(m, **kw))


@needs_torch
def test_functional_forward_mode_vectorized_values():
    def f(m):
        return (
            _jac(m, strategy="forward-mode", vectorize=True).tolist(),
            _hess(m, outer_jacobian_strategy="forward-mode", vectorize=True).tolist(),
        )

    _same(f)


# ------------------------------------------------------------------ Adafactor / Muon validation
@needs_torch
@pytest.mark.parametrize(
    "kw",
    [
        {"lr": -0.1},
        {"lr": -0.1, "beta2_decay": 0.5},
        {"lr": "tensor2"},
        {"beta2_decay": 0.5},
        {"eps": (-1.0, 1e-3)},
        {"eps": (None, -1e-3)},
        {"d": 0.5},
        {"weight_decay": -0.1},
    ],
)
def test_adafactor_argument_errors(kw):
    def f(m):
        k = dict(kw)
        if k.get("lr") == "tensor2":
            k["lr"] = m.tensor([0.1, 0.2])
        return m.optim.Adafactor([m.zeros(2, requires_grad=True)], **k)

    _same_error(f)


@needs_torch
@pytest.mark.parametrize(
    "kw", [{"lr": -0.1}, {"weight_decay": -1.0}, {"momentum": -1.0}, {"lr": "tensor2"}]
)
def test_muon_argument_errors(kw):
    def f(m):
        k = dict(kw)
        if k.get("lr") == "tensor2":
            k["lr"] = m.tensor([0.1, 0.2])
        return m.optim.Muon([m.zeros(2, 2, requires_grad=True)], **k)

    _same_error(f)


@needs_torch
def test_adam_family_lr_message_unchanged():
    _same_error(lambda m: m.optim.Adam([m.zeros(2, requires_grad=True)], lr=-1))
    _same_error(lambda m: m.optim.SGD([m.zeros(2, requires_grad=True)], lr=-1))


# ------------------------------------------------------ loss target-size warning points at caller
@needs_torch
@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_target_size_warning_points_at_the_caller(loss):
    def f(m):
        fn = getattr(m.nn.functional, loss)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fn(m.zeros(4, 1), m.zeros(4))  # the warning must name THIS file
        assert len(w) == 1
        return str(w[0].message), w[0].filename, w[0].category.__name__

    e, t = f(ember), f(torch)
    assert e == t
    assert e[1] == __file__


# ---------------------------------------------------- in-place ops on shapes that never broadcast
@needs_torch
@pytest.mark.parametrize(
    "a,b", [((2, 3), (3, 2)), ((2, 3), (2, 2)), ((2, 3, 4), (3, 3, 5)), ((1, 3), (2, 3))]
)
@pytest.mark.parametrize("op", ["mul_", "add_", "sub_", "div_", "pow_", "copy_", "clamp_"])
def test_inplace_broadcast_errors(a, b, op):
    _same_error(lambda m: getattr(m.zeros(a), op)(m.zeros(b)))


# ------------------------------------------------------------ SDPA with heads that do not match
SDPA_SHAPES = [
    ((2, 2, 3, 8), (2, 2, 5, 8), (2, 3, 5, 8)),
    ((2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 8)),
    ((3, 3, 8), (2, 5, 8), (2, 5, 8)),
    ((2, 4, 3, 8), (2, 3, 5, 8), (2, 3, 5, 8)),
]


@needs_torch
@pytest.mark.parametrize("q,k,v", SDPA_SHAPES)
@pytest.mark.parametrize("kw", ["none", "causal", "mask", "gqa"])
def test_sdpa_batch_mismatch_errors(q, k, v, kw):
    def f(m):
        extra = {
            "none": {},
            "causal": {"is_causal": True},
            "mask": {"attn_mask": m.zeros(3, 5)},
            "gqa": {"enable_gqa": True},
        }[kw]
        out = m.nn.functional.scaled_dot_product_attention(
            m.zeros(q), m.zeros(k), m.zeros(v), **extra
        )
        return tuple(out.shape)

    _same(f)


# ------------------------------------------------------------------ F.bilinear argument checks
BILINEAR = [
    ((6, 5), (2, 3, 4), (5, 3, 4), (5,)),
    ((2, 5), (3, 4), (5, 3, 4), (5,)),
    ((2, 3), (3, 4), (5, 3, 4), (5,)),
    ((2, 3), (2, 5), (5, 3, 4), (5,)),
    ((2, 5), (2, 4), (5, 3, 4), (5,)),
    ((2, 4, 3), (2, 5, 4), (5, 3, 4), (5,)),
    ((2, 3), (2, 4), (5, 3, 4), (6,)),
    ((2, 3), (2, 4), (5, 3, 4), (2, 5)),
    ((2, 3), (2, 4), (5, 3, 4), ()),
]


@needs_torch
@pytest.mark.parametrize("a,b,w,bias", BILINEAR)
def test_bilinear_check_order(a, b, w, bias):
    _same_error(
        lambda m: m.nn.functional.bilinear(m.zeros(a), m.zeros(b), m.zeros(w), m.zeros(bias))
    )


@needs_torch
@pytest.mark.parametrize("a,b", [((3,), (4,)), ((2, 3), (2, 4)), ((2, 4, 3), (2, 4, 4))])
def test_bilinear_values(a, b):
    def f(m):
        x1 = m.sin(m.arange(float(m.tensor(a).prod())) * 0.3).reshape(a)
        x2 = m.cos(m.arange(float(m.tensor(b).prod())) * 0.2).reshape(b)
        w = m.sin(m.arange(60.0) * 0.1).reshape(5, 3, 4)
        return [
            round(v, 4) for v in m.nn.functional.bilinear(x1, x2, w, m.ones(5)).flatten().tolist()
        ]

    _same(f)


# ------------------------------------------- class-index losses on (N, C, d...) inputs (nll_loss2d)
NLL_ND = [
    ((2, 4, 6, 6), (2, 5, 6), "long", None),
    ((2, 4, 6, 6), (2, 6, 6), "long", (3,)),
    ((2, 4, 6), (2, 5), "long", None),
    ((2, 4, 6), (2, 6), "long", (3,)),
    ((2, 4), (2,), "long", (3,)),
    ((2, 4), (2,), "long", (2, 2)),
    ((2, 4, 6, 6), (2, 6, 5), "long", None),
    ((2, 4, 6, 6), (2, 6), "long", None),
    ((2, 4, 6, 6, 2), (2, 6, 6, 3), "long", None),
    ((2, 4, 6, 6, 2), (2, 6, 6, 2), "long", (3,)),
    ((2, 4, 6, 6), (3, 6, 6), "long", None),
    ((2, 4, 6), (2, 6, 1), "long", None),
    ((2, 4, 6, 6), (2, 6, 6, 1), "long", None),
    ((2, 4, 6, 6), (2, 6, 6), "float", None),
    ((2, 4, 6, 6), (2, 5, 6), "float", None),
    ((2, 4, 6, 6), (2, 5, 6), "long", (3,)),
    ((2, 4, 6, 6), (2, 6, 6), "float", (3,)),
    ((2, 4, 6, 6), (2, 6, 6, 1), "float", None),
    ((2, 4, 6, 6), (2, 6, 6, 1), "long", (3,)),
]


@needs_torch
@pytest.mark.parametrize("inp,tgt,dt,w", NLL_ND)
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_nll_nd_error_order(inp, tgt, dt, w, loss):
    def f(m):
        x = m.zeros(inp)
        t = m.zeros(tgt, dtype=getattr(m, "int64" if dt == "long" else "float32"))
        return getattr(m.nn.functional, loss)(x, t, weight=None if w is None else m.ones(w))

    _same_error(f)


@needs_torch
@pytest.mark.parametrize(
    "inp,w", [((2, 4, 3, 3), (4, 1)), ((2, 4, 5), (2, 2)), ((2, 4, 3, 3), (4,))]
)
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_nll_nd_weight_of_any_shape_with_c_values(inp, w, loss):
    def f(m):
        n = 1
        for s in inp:
            n *= s
        x = m.sin(m.arange(float(n)) * 0.7).reshape(inp).requires_grad_()
        t = (m.arange(n // inp[1]) % inp[1]).reshape((inp[0],) + inp[2:])
        wt = m.arange(1.0, inp[1] + 1).reshape(w)
        out = getattr(m.nn.functional, loss)(x, t, weight=wt)
        out.backward()
        return round(float(out), 5), [round(v, 5) for v in x.grad.flatten().tolist()]

    _same(f)


# ------------------------------------------------ max_unpool under `ember run` (dtypes read torch.*)
@needs_torch
@pytest.mark.parametrize("display", ["ember", "torch"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_accepts_int64_indices_whatever_the_dtype_display(display, nd):
    """`ember run` makes dtypes print as torch.int64; max_unpool compared that string."""
    from ember.core import dtype as _dt

    old = _dt.DISPLAY[0]
    _dt.DISPLAY[0] = display
    try:
        _check_unpool(nd)
    finally:
        _dt.DISPLAY[0] = old


def _check_unpool(nd):

    def f(m):
        F = m.nn.functional
        shape = (1, 2) + (5,) * nd
        x = m.sin(m.arange(float(2 * 5**nd)) * 0.9).reshape(shape)
        pool = getattr(F, f"max_pool{nd}d")
        o, i = pool(x, 2, stride=2, ceil_mode=True, return_indices=True)
        u = getattr(F, f"max_unpool{nd}d")(o, i, 2, stride=2, output_size=x.shape[2:])
        return str(i.dtype).split(".")[-1], [round(v, 4) for v in u.flatten().tolist()]

    _same(f)


@needs_torch
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_rejects_int32_indices(nd):
    def f(m):
        x = m.zeros((1, 1) + (4,) * nd)
        o, i = getattr(m.nn.functional, f"max_pool{nd}d")(x, 2, return_indices=True)
        return getattr(m.nn.functional, f"max_unpool{nd}d")(o, i.int(), 2)

    _same_error(f)


# ------------------------------------------------------- MHA with kdim/vdim: projection checks
@needs_torch
@pytest.mark.parametrize(
    "kd,vd,kin,vin",
    [(6, 4, 8, 4), (6, 4, 6, 8), (6, 4, 8, 8), (6, 6, 6, 4), (6, 4, 6, 4)],
)
@pytest.mark.parametrize("batch_first", [True, False])
def test_mha_separate_projection_shape_checks(kd, vd, kin, vin, batch_first):
    def f(m):
        m.manual_seed(0)
        mha = m.nn.MultiheadAttention(8, 2, kdim=kd, vdim=vd, batch_first=batch_first)
        with m.no_grad():
            for i, p in enumerate(mha.parameters()):
                p.copy_(m.sin(m.arange(float(p.numel())) * 0.3 + i).reshape(p.shape) * 0.3)
        q = m.cos(m.arange(48.0)).reshape(2, 3, 8)
        k = m.sin(m.arange(10.0 * kin)).reshape(2, 5, kin)
        v = m.sin(m.arange(10.0 * vin) * 0.5).reshape(2, 5, vin)
        if not batch_first:
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        o, w = mha(q, k, v)
        return [round(x, 4) for x in o.flatten().tolist()], [
            round(x, 4) for x in w.flatten().tolist()
        ]

    (et, em), (tt, tm) = _outcome(f, ember), _outcome(f, torch)
    assert (et, em.replace("ember.", "torch.")) == (tt, tm)


@needs_torch
@pytest.mark.parametrize("a, b", [((2, 3, 4), (3, 5, 4)), ((2, 1, 3, 4), (3, 2, 5, 4))])
def test_cdist_batch_broadcast_error_like_torch(a, b):
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            m.cdist(m.zeros(*a), m.zeros(*b))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


@needs_torch
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(2, 3).expand(3, 2),
        lambda m: m.zeros(2, 3).masked_fill(m.zeros(3, 2).bool(), 1.0),
        lambda m: m.zeros(2, 3).view(4, 2),
        lambda m: m.nn.functional.batch_norm(
            m.zeros(2, 4), m.zeros(3), m.zeros(3), m.ones(3), training=True
        ),
        lambda m: m.nn.functional.batch_norm(
            m.zeros(2, 4), m.zeros(4), m.zeros(4), m.ones(3), m.zeros(3), training=False
        ),
    ],
)
def test_shape_errors_name_what_torch_names(fn):
    msgs = []
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            fn(m)
        msgs.append(str(info.value))
        if m is ember:
            assert info.value.__suppress_context__ or info.value.__context__ is None
    assert msgs[0] == msgs[1]
