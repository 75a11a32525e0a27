"""Parity regressions found by the third wave of realistic PyTorch scripts (torch is the oracle):
optimizers on 0-d parameters, SDPA with a mask and is_causal together, scatter_reduce('prod')
gradients, multinomial without replacement past the positive categories, the matmul family's
dtype errors, torch's warnings (scatter's reduce=, float() of a tensor that requires grad,
too many DataLoader workers) and grad_fn names."""

from __future__ import annotations

import itertools
import os
import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, run_case, run_gradcheck

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _outcome(fn, m):
    """('ok', value) or (exception type name, message) of fn(m)."""
    try:
        return "ok", fn(m)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)


def _same_error(fn) -> None:
    (et, em), (tt, tm) = _outcome(fn, ember), _outcome(fn, torch)
    assert et != "ok" and (et, em) == (tt, tm)


# ---------------------------------------------------------------------- optimizers, 0-d params
OPT_CASES = [
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1}),
    ("AdamW", {"lr": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.1, "foreach": True}),
    ("Rprop", {"lr": 0.1, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "maximize": True}),
]


@needs_torch
@pytest.mark.parametrize("name,kw", OPT_CASES, ids=lambda v: str(v))
def test_optimizer_zero_dim_param(name, kw):
    res = []
    for m in (ember, torch):
        p = m.nn.Parameter(m.tensor(1.5))
        q = m.nn.Parameter(m.tensor([0.5, -1.0]))
        opt = getattr(m.optim, name)([p, q], **kw)
        for _ in range(4):
            opt.zero_grad()
            loss = p**2 * 0.5 + p + (q**2).sum()
            loss.backward()
            opt.step()
        res.append((_np(p), _np(q), tuple(p.shape)))
    (ep, eq, es), (tp, tq, ts) = res
    assert es == ts == ()
    np.testing.assert_allclose(ep, tp, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(eq, tq, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------- SDPA mask + is_causal
def _sdpa_mask(kind):
    def f(m, q, k, v, mk):
        mask = m.tensor(mk, dtype=q.dtype) if kind == "float" else m.tensor(mk > 0)
        return m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)

    return f


def _mask_arr(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    a[..., 0] = 1.0  # every query row keeps key 0 (the causal block keeps it too)
    return a


SDPA_CASES = [
    Case(f"{kind}_{L}x{S}_{'x'.join(map(str, ms))}", _sdpa_mask(kind),
         [A(2, 2, L, 4), A(2, 2, S, 4, seed=1), A(2, 2, S, 4, seed=2), _mask_arr(ms, 3)])
    for kind in ("bool", "float")
    for (L, S, ms) in ((4, 4, (4, 4)), (3, 5, (3, 5)), (5, 3, (2, 1, 5, 3)), (4, 6, (1, 6)))
]  # fmt: skip


@pytest.mark.parametrize("case", SDPA_CASES, ids=str)
def test_sdpa_mask_and_causal(case):
    run_case(case)


def test_sdpa_mask_and_causal_gradcheck():
    run_gradcheck(SDPA_CASES[1], gradgrad=False)
    run_gradcheck(SDPA_CASES[-1], gradgrad=False)


@needs_torch
def test_sdpa_mask_and_causal_fully_masked_row():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 1, 3, 4)).astype(np.float32) for _ in range(3))
    mask = np.ones((3, 3), bool)
    mask[0, 0] = False  # row 0: its only causal key is masked
    outs = [
        _np(m.nn.functional.scaled_dot_product_attention(
            m.tensor(q), m.tensor(k), m.tensor(v), attn_mask=m.tensor(mask), is_causal=True))
        for m in (ember, torch)
    ]  # fmt: skip
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-6)


# ---------------------------------------------------------------------- scatter_reduce prod
def _sr(include_self, dim=0):
    def f(m, inp, src):
        idx = m.tensor(
            [[0, 1, 2, 0], [2, 0, 1, 1]] if dim == 0 else [[0, 1, 1], [2, 0, 0], [3, 3, 1]]
        )
        return inp.scatter_reduce(dim, idx, src, "prod", include_self=include_self)

    return f


SR_CASES = [
    Case("prod_self", _sr(True), [A(3, 4, low=0.5, high=1.5), A(2, 4, low=0.5, high=1.5, seed=1)]),
    Case("prod_noself", _sr(False), [A(3, 4, low=0.5, high=1.5), A(2, 4, low=-1.5, high=1.5, seed=1)]),
    Case("prod_dim1", _sr(True, 1), [A(3, 4, low=-1.5, high=1.5), A(3, 3, low=0.5, high=1.5, seed=1)]),
]  # fmt: skip


@pytest.mark.parametrize("case", SR_CASES, ids=str)
def test_scatter_reduce_prod_grad(case):
    run_case(case)


@pytest.mark.parametrize("case", SR_CASES, ids=str)
def test_scatter_reduce_prod_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


ZERO_ROWS = [
    ([1.5, 2.0, 0.5], [0.5, 2.0, 3.0, 0.0, 4.0], True),  # one zero in src
    ([1.5, 0.0, 0.5], [0.5, 0.0, 3.0, 0.0, 4.0], True),  # zero in self and in src
    ([1.5, 2.0, 0.5], [0.0, 0.0, 3.0, 0.0, 4.0], False),  # two zeros land on one slot
    ([1.5, 2.0, 0.5], [0.5, 2.0, 3.0, -1.0, 4.0], False),
]


@needs_torch
@pytest.mark.parametrize("inp,src,include_self", ZERO_ROWS)
def test_scatter_reduce_prod_grad_with_zeros(inp, src, include_self):
    res = []
    for m in (ember, torch):
        a = m.tensor(inp, dtype=m.float64, requires_grad=True)
        b = m.tensor(src, dtype=m.float64, requires_grad=True)
        out = m.scatter_reduce(
            a, 0, m.tensor([0, 0, 1, 2, 2]), b, "prod", include_self=include_self
        )
        ga, gb = m.autograd.grad((out * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum(), [a, b])
        res.append([_np(out), _np(ga), _np(gb)])
    for e, t in zip(*res):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------- multinomial
@needs_torch
def test_multinomial_without_replacement_uses_zero_weight_categories():
    w = [[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 1.0, 0.0]]
    for m in (ember, torch):  # torch >= 2.x samples them instead of raising
        m.manual_seed(0)
        out = m.multinomial(m.tensor(w), 4)
        assert out.dtype == m.int64 and tuple(out.shape) == (2, 4)
        for row, ws in zip(out.tolist(), w):
            assert sorted(row) == [0, 1, 2, 3]
            npos = sum(x > 0 for x in ws)
            assert all(ws[i] > 0 for i in row[:npos])  # positive weights come first
    _same_error(lambda m: m.multinomial(m.tensor([1.0, 0.0]), 3))  # more than categories


# ---------------------------------------------------------------------- matmul dtype errors
_F, _D = "float32", "float64"
DTYPE_ERR = []
for a, b, c in itertools.product((_F, _D), repeat=3):
    if a == b == c:
        continue
    DTYPE_ERR += [
        (f"addmm_{a}_{b}_{c}", lambda m, a=a, b=b, c=c: m.addmm(
            m.zeros(2, dtype=getattr(m, a)), m.zeros(3, 4, dtype=getattr(m, b)),
            m.zeros(4, 2, dtype=getattr(m, c)))),
        (f"linear_{a}_{b}_{c}", lambda m, a=a, b=b, c=c: m.nn.functional.linear(
            m.zeros(3, 4, dtype=getattr(m, b)), m.zeros(2, 4, dtype=getattr(m, c)),
            m.zeros(2, dtype=getattr(m, a)))),
        (f"linear3d_{a}_{b}_{c}", lambda m, a=a, b=b, c=c: m.nn.functional.linear(
            m.zeros(5, 3, 4, dtype=getattr(m, b)), m.zeros(2, 4, dtype=getattr(m, c)),
            m.zeros(2, dtype=getattr(m, a)))),
        (f"addmv_{a}_{b}_{c}", lambda m, a=a, b=b, c=c: m.addmv(
            m.zeros(3, dtype=getattr(m, a)), m.zeros(3, 4, dtype=getattr(m, b)),
            m.zeros(4, dtype=getattr(m, c)))),
        (f"baddbmm_{a}_{b}_{c}", lambda m, a=a, b=b, c=c: m.baddbmm(
            m.zeros(2, 3, 2, dtype=getattr(m, a)), m.zeros(2, 3, 4, dtype=getattr(m, b)),
            m.zeros(2, 4, 2, dtype=getattr(m, c)))),
        (f"addbmm_{a}_{b}_{c}", lambda m, a=a, b=b, c=c: m.addbmm(
            m.zeros(3, 2, dtype=getattr(m, a)), m.zeros(2, 3, 4, dtype=getattr(m, b)),
            m.zeros(2, 4, 2, dtype=getattr(m, c)))),
    ]  # fmt: skip
for sa, sb in [
    ((4,), (4,)),
    ((4,), (4, 3)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 3)),
    ((2, 3, 4), (2, 4, 3)),
    ((2, 3, 4), (4, 3)),
    ((3, 4), (4, 3)),
    ((3, 4), (2, 4, 3)),
]:
    for x, y in ((_F, _D), (_D, _F), (_F, "int64")):
        DTYPE_ERR.append((f"matmul_{sa}_{sb}_{x}_{y}", lambda m, sa=sa, sb=sb, x=x, y=y: m.matmul(
            m.zeros(*sa, dtype=getattr(m, x)), m.zeros(*sb, dtype=getattr(m, y)))))  # fmt: skip
DTYPE_ERR += [
    ("bmm", lambda m: m.bmm(m.zeros(2, 3, 4), m.zeros(2, 4, 2, dtype=m.float64))),
    ("bmm_long", lambda m: m.bmm(m.zeros(2, 3, 4), m.zeros(2, 4, 2, dtype=m.int64))),
    ("mv", lambda m: m.mv(m.zeros(3, 4), m.zeros(4, dtype=m.float64))),
    ("mv2", lambda m: m.mv(m.zeros(3, 4, dtype=m.float64), m.zeros(4))),
    ("addmm_shape_and_dtype", lambda m: m.addmm(m.zeros(2), m.zeros(3, 4),
                                                m.zeros(5, 2, dtype=m.float64))),
    ("linear_module", lambda m: m.nn.Linear(3, 2)(m.zeros(4, 3, dtype=m.float64))),
    ("linear_module_double", lambda m: m.nn.Linear(3, 2).double()(m.zeros(4, 3))),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("row", DTYPE_ERR, ids=lambda r: r[0])
def test_matmul_family_dtype_errors(row):
    _same_error(row[1])


# ---------------------------------------------------------------------- scatter reduce=
@needs_torch
def test_scatter_scalar_value_with_reduce():
    for reduce, dt in (("add", "float32"), ("multiply", "float32"), ("add", "int64")):
        outs = []
        for m in (ember, torch):
            base = m.ones(4, dtype=getattr(m, dt)) * 2
            a = base.clone().scatter_(0, m.tensor([1, 1, 3]), 2.5, reduce=reduce)
            b = m.scatter(base, 0, m.tensor([0, 0]), value=3.0, reduce=reduce)
            outs.append((_np(a), _np(b), str(a.dtype).split(".")[-1]))
        (ea, eb, ed), (ta, tb, td) = outs
        np.testing.assert_array_equal(ea, ta)
        np.testing.assert_array_equal(eb, tb)
        assert ed == td


_SCATTER_MSG = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
    "future PyTorch release. Use torch.scatter_reduce instead for more reduction options."
)


def test_scatter_tensor_src_reduce_warns_once(monkeypatch):
    from ember.core.ops import indexing

    monkeypatch.setattr(indexing, "_SCATTER_REDUCE_WARNED", [False])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ember.zeros(3).scatter_(0, ember.tensor([1]), 2.0, reduce="add")  # a scalar: no warning
        assert not rec
        out = ember.zeros(3).scatter_(
            0, ember.tensor([1, 1]), ember.tensor([1.0, 2.0]), reduce="add"
        )
        ember.zeros(3).scatter(0, ember.tensor([1]), ember.tensor([1.0]), reduce="multiply")
    assert [str(w.message) for w in rec] == [_SCATTER_MSG]
    assert rec[0].category is UserWarning and rec[0].filename == __file__
    assert out.tolist() == [0.0, 3.0, 0.0]


# ---------------------------------------------------------------------- float() of a grad tensor
_FLOAT_MSG = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first."
)


def test_float_of_requires_grad_tensor_warns_once_in_grad_mode(monkeypatch):
    from ember.core import tensor as tensor_mod

    monkeypatch.setattr(tensor_mod, "_FLOAT_WARNED", False)
    x = ember.tensor(1.5, requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        x.item(), int(x), f"{x:.2f}", float(ember.tensor(2.0))  # none of these warn
        with ember.no_grad():
            float(x)
        assert not rec
        assert float(x * 2) == 3.0
        float(x)  # once per process, like torch
    assert [str(w.message) for w in rec] == [_FLOAT_MSG]
    assert rec[0].filename == __file__


@needs_torch
def test_float_warning_text_matches_torch():
    # torch warns once per process: read its text in a fresh interpreter
    import subprocess
    import sys

    code = (
        "import warnings, torch\n"
        "with warnings.catch_warnings(record=True) as r:\n"
        "    warnings.simplefilter('always')\n"
        "    float(torch.tensor(1.5, requires_grad=True))\n"
        "print(str(r[0].message).split(' (Triggered')[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.rstrip("\n") == _FLOAT_MSG


def test_lbfgs_does_not_warn_about_float_of_loss(monkeypatch):
    from ember.core import tensor as tensor_mod

    monkeypatch.setattr(tensor_mod, "_FLOAT_WARNED", False)
    p = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    opt = ember.optim.LBFGS([p], max_iter=5, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((p - 3) ** 2).sum()
        loss.backward()
        return loss

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        opt.step(closure)
    assert not [w for w in rec if "requires_grad=True" in str(w.message)]


# ---------------------------------------------------------------------- DataLoader workers
@needs_torch
def test_dataloader_warns_about_too_many_workers(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    msgs = []
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = sorted(int(x) for x in m.utils.data.DataLoader(list(range(4)), num_workers=2))
        assert out == [0, 1, 2, 3]
        msgs.append({str(w.message) for w in rec if "worker processes" in str(w.message)})
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        list(ember.utils.data.DataLoader(list(range(4)), num_workers=1))
    assert not [w for w in rec if "worker processes" in str(w.message)]


# ---------------------------------------------------------------------- grad_fn names
GRAD_FN = [
    lambda x: x.narrow(1, 0, 2),
    lambda x: x.chunk(2)[1],
    lambda x: x.chunk(3, 1)[0],
    lambda x: x.movedim(0, 1),
    lambda x: x.norm(),
    lambda x: x.norm(dim=0),
    lambda x: x.norm(p=1),
    lambda x: x.scatter_reduce(0, x.new_zeros(1, 3).long(), x, "prod"),
]


@needs_torch
@pytest.mark.parametrize("k", range(len(GRAD_FN)))
def test_grad_fn_names(k):
    names = []
    for m in (ember, torch):
        x = m.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
        names.append(GRAD_FN[k](x).grad_fn.name())
    assert names[0] == names[1]


# ---------------------------------------------------------------------- custom Function errors
def _fn_class(m, ret):
    class Mul(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return ret(g)

    return Mul


@needs_torch
@pytest.mark.parametrize(
    "ret",
    [lambda g: ("a", g), lambda g: (g, 5), lambda g: (1.0, g), lambda g: (np.ones(2), g)],
    ids=["str", "int", "float", "ndarray"],
)
def test_function_backward_returns_non_tensor(ret):
    def run(m):
        x, y = m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)
        _fn_class(m, ret).apply(x, y).sum().backward()

    _same_error(run)


@needs_torch
def test_function_instantiation_warns():
    msgs = []
    for m in (ember, torch):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            cls = _fn_class(m, lambda g: (g, g))
            cls()
            type("Inp", (m.autograd.function.InplaceFunction,), {})(inplace=True)
        msgs.append([(w.category, str(w.message).replace(cls.__qualname__, "F")) for w in rec])
    assert len(msgs[0]) == 2 and msgs[0][0][0] is DeprecationWarning
    assert [c for c, _ in msgs[0]] == [c for c, _ in msgs[1]]
    assert msgs[0][0][1].split("'")[2:] == msgs[1][0][1].split("'")[2:]


# ---------------------------------------------------------------------- transformer masks
@needs_torch
@pytest.mark.parametrize("direct_layer", [False, True])
def test_transformer_encoder_mismatched_masks_warn_once(direct_layer):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    kpm = np.array([[False] * 5, [False, False, False, True, True]])
    outs, msgs = [], []
    tmod = None
    for m in (torch, ember):
        layer = m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        mod = (
            layer if direct_layer else m.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        )
        if tmod is None:
            tmod = mod
        else:
            mod.load_state_dict({k: m.tensor(v.numpy()) for k, v in tmod.state_dict().items()})
        mask = m.nn.Transformer.generate_square_subsequent_mask(5)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            if direct_layer:
                out = mod(m.tensor(x), src_mask=mask, src_key_padding_mask=m.tensor(kpm))
            else:
                out = mod(m.tensor(x), mask=mask, src_key_padding_mask=m.tensor(kpm))
        outs.append(_np(out))
        msgs.append([str(w.message) for w in rec if "mismatched" in str(w.message)])
    assert msgs[1] == msgs[0] and len(msgs[0]) == 1
    np.testing.assert_allclose(outs[1], outs[0], atol=1e-5, rtol=1e-4)


# ---------------------------------------------------------------------- .grad and .data
@needs_torch
def test_nonleaf_grad_access_warns_like_torch():
    counts, texts = [], []
    for m in (ember, torch):
        a = m.ones(2, requires_grad=True)
        q = a * 3
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            assert q.grad is None
            with m.no_grad():
                q.grad  # noqa: B018 - torch warns here too
            b = a * 2
            b.retain_grad()
            b.grad, a.grad, m.ones(2).grad, (m.ones(2) * 2).grad  # no warning
        counts.append(len(rec))
        texts.append({str(w.message).split(" (Triggered")[0] for w in rec})
        assert all(w.category is UserWarning for w in rec)
    assert counts[0] == counts[1] == 2 and texts[0] == texts[1]


@needs_torch
def test_data_setter_checks():
    def int_data(m):
        a = m.ones(2, requires_grad=True)
        a.data = m.zeros(3, dtype=m.int64)

    def not_tensor(m):
        a = m.ones(2)
        a.data = 5

    _same_error(int_data)
    _same_error(not_tensor)
    for m in (ember, torch):
        a = m.ones(2, requires_grad=True)
        a.data = m.zeros(3)  # another shape is fine
        x = m.zeros(2)
        x.data = m.zeros(2, dtype=m.int64)  # and any dtype without requires_grad
        assert tuple(a.shape) == (3,) and a.requires_grad and str(x.dtype).endswith("int64")


# ---------------------------------------------------------------------- multi-output views
MULTI_VIEW = [
    ("unbind", lambda x: x.unbind()[1], lambda v: v.mul_(2)),
    ("split", lambda x: x.split(2)[0], lambda v: v.add_(1)),
    ("chunk", lambda x: x.chunk(2)[1], lambda v: v.zero_()),
    ("split_sizes", lambda x: x.split([1, 3])[1], lambda v: v.mul_(2)),
    ("unbind_2d", lambda x: x.view(2, 2).unbind(1)[0], lambda v: v.mul_(2)),
    ("setitem", lambda x: x.split(2)[0], lambda v: v.__setitem__(0, 5.0)),
]


@needs_torch
@pytest.mark.parametrize("row", MULTI_VIEW, ids=lambda r: r[0])
def test_inplace_on_multi_output_view(row):
    _, view, inplace = row

    def run(m):
        a = m.ones(4, requires_grad=True)
        x = a * 1
        inplace(view(x))

    _same_error(run)
    for m in (ember, torch):  # allowed without grad mode, or when nothing requires grad
        a = m.ones(4, requires_grad=True)
        x = a * 1
        with m.no_grad():
            inplace(view(x))
        y = m.ones(4)
        inplace(view(y))
    outs = []
    for m in (ember, torch):  # tensor_split's pieces may be written (torch allows it)
        a = m.ones(4, requires_grad=True)
        x = a * 1
        x.tensor_split(2)[1].mul_(3)
        (x * m.arange(4.0)).sum().backward()
        outs.append(_np(a.grad))
    np.testing.assert_allclose(outs[0], outs[1])
