"""Parity regressions of the hundred-and-third wave: the per-call cost of a small model's
training step (Linear / addmm / matmul / their derivatives). The fast paths it added are driven
here both ways against torch: addmm / addmv / baddbmm / addbmm whose input is a trailing slice
of the product's shape with ``beta = alpha = 1`` (the bias add, now in place without the general
scaling and broadcast checks) and every call around it (other shapes, beta / alpha values and
types, integer / bool / half / complex dtypes, bad shapes); matmul's operand checks (numbers);
F.linear with transposed, named and half weights. It found:

* addmm's (and baddbmm's ...) expand error naming a bfloat16 / bool / complex input
  ``torch.BFloat16Tensor`` (torch: ``CPUBFloat16Type``, ``CPUBoolType``, ...);
* the derivatives of mm / matmul / mv / addmm / addmv / F.linear transposing a matrix with
  ``transpose(-2, -1)`` (TransposeBackward0 under create_graph; torch's are ``t()``,
  TBackward0; batches keep transpose, as torch's bmm).

Left: F.linear of a 1-D input gives the weight a gradient with the transposed layout (strides
(1, out); torch's follow the weight's); under create_graph, a broadcast input's gradient (addmm's bias) is one ViewBackward0
node (torch: SumBackward1 under ViewBackward0); matmul of a 1-D operand records
Unsqueeze/Squeeze/Mm nodes (torch: Mv, or Mm of a view); bmm / 3-D matmul gradients end in
UnsafeViewBackward0 (torch: Bmm/View). ``x.T`` (a permute) costs ~4 us a call over ``t()``.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly


def _outcome(fn, lib):
    """``fn(lib)`` as (error type, text) or ("ok", dtype name, shape, strides, values)."""
    err, r = run_quietly(fn, lib)
    if err is not None:
        return type(err).__name__, str(err)
    outs = r if isinstance(r, (tuple, list)) else (r,)
    got = []
    for t in outs:
        if t is None:
            got.append(None)
            continue
        t = t.detach()
        v = t.float().numpy() if t.dtype in (lib.bfloat16, lib.float16) else t.numpy()
        got.append((str(t.dtype).split(".")[-1], tuple(t.shape), t.stride(), v))
    return "ok", got


def _same(fn, rtol=1e-5, atol=1e-6):
    want, got = _outcome(fn, torch), _outcome(fn, ember)
    assert want[0] == got[0], (want, got)
    if want[0] != "ok":
        assert got == want
        return
    assert len(want[1]) == len(got[1])
    for w, g in zip(want[1], got[1]):
        assert (w is None) == (g is None)
        if w is not None:
            assert g[:3] == w[:3], (g[:3], w[:3])
            np.testing.assert_allclose(g[3], w[3], rtol=rtol, atol=atol)


def _arr(m, shape, dtype, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    dt = getattr(m, dtype)
    if dtype == "bool":
        return m.tensor(a > 0)
    if dtype in ("int64", "int32", "uint8"):
        return m.tensor((a * 3).round().astype(np.int64) % 7).to(dt)
    return m.tensor(a).to(dt)


# ------------------------------------------------------------------------------ addmm family
_BIASES = [(5,), (4, 5), (1, 5), (4, 1), (1,), (), (6,), (3, 4, 5), (5, 4), (0,)]


@pytest.mark.parametrize("bias", _BIASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "bool"])
def test_addmm_input_shapes(bias, dtype):
    def fn(m):
        return m.addmm(_arr(m, bias, dtype, 1), _arr(m, (4, 3), dtype), _arr(m, (3, 5), dtype, 2))

    _same(fn, rtol=2e-2 if dtype == "bfloat16" else 1e-5)


@pytest.mark.parametrize(
    "beta,alpha",
    [(1, 1), (1.0, 1.0), (True, True), (0, 1), (1, 0), (2, 1), (1, 3), (0.5, 1), (1, -1.5)],
    ids=str,
)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "complex64"])
def test_addmm_beta_alpha(beta, alpha, dtype):
    def fn(m):
        return m.addmm(
            _arr(m, (5,), dtype, 1),
            _arr(m, (4, 3), dtype),
            _arr(m, (3, 5), dtype, 2),
            beta=beta,
            alpha=alpha,
        )

    _same(fn, rtol=1e-2 if dtype == "float16" else 1e-5, atol=1e-2 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.addmv(
            _arr(m, (4,), "float32"), _arr(m, (4, 3), "float32"), _arr(m, (3,), "float32")
        ),
        lambda m: m.addmv(
            _arr(m, (1,), "float64"), _arr(m, (4, 3), "float64"), _arr(m, (3,), "float64")
        ),
        lambda m: m.addmv(
            _arr(m, (5,), "float32"), _arr(m, (4, 3), "float32"), _arr(m, (3,), "float32")
        ),
        lambda m: m.baddbmm(
            _arr(m, (5,), "float32"), _arr(m, (2, 4, 3), "float32"), _arr(m, (2, 3, 5), "float32")
        ),
        lambda m: m.baddbmm(
            _arr(m, (4, 5), "float64"), _arr(m, (2, 4, 3), "float64"), _arr(m, (2, 3, 5), "float64")
        ),
        lambda m: m.baddbmm(
            _arr(m, (3, 4, 5), "float32"),
            _arr(m, (2, 4, 3), "float32"),
            _arr(m, (2, 3, 5), "float32"),
        ),
        lambda m: m.addbmm(
            _arr(m, (5,), "float32"), _arr(m, (2, 4, 3), "float32"), _arr(m, (2, 3, 5), "float32")
        ),
        lambda m: m.addbmm(
            _arr(m, (2, 5), "float32"), _arr(m, (2, 4, 3), "float32"), _arr(m, (2, 3, 5), "float32")
        ),
        lambda m: m.addmm(
            _arr(m, (5,), "float32"), _arr(m, (4, 3), "float32"), _arr(m, (3, 5), "float64")
        ),
        lambda m: m.addmm(
            _arr(m, (5,), "float64"), _arr(m, (4, 3), "float32"), _arr(m, (3, 5), "float32")
        ),
        lambda m: m.addmm(
            _arr(m, (5,), "float32"), _arr(m, (4, 3), "float32"), _arr(m, (4, 5), "float32")
        ),
    ],
)
def test_add_product_family(call):
    _same(call)


def test_addmm_result_is_its_own():
    # the in-place bias add writes the fresh product only: the input is left as it was
    def fn(m):
        b = _arr(m, (4, 5), "float32", 1)
        before = b.clone()
        out = m.addmm(b, _arr(m, (4, 3), "float32"), _arr(m, (3, 5), "float32", 2))
        return out, b - before, m.tensor(float(out.data_ptr() != b.data_ptr()))

    _same(fn)


# ------------------------------------------------------------------------------ matmul
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.matmul(_arr(m, (2, 3), "float32"), 2),
        lambda m: m.matmul(2.0, _arr(m, (2, 3), "float32")),
        lambda m: m.matmul(_arr(m, (2, 3), "float32"), _arr(m, (3,), "float32")),
        lambda m: _arr(m, (2, 3), "float32") @ _arr(m, (4, 3), "float32").T,
        lambda m: _arr(m, (2, 3), "float64") @ _arr(m, (4, 3), "float64").t(),
        lambda m: _arr(m, (2, 3), "float32") @ _arr(m, (4, 3), "float32"),
    ],
)
def test_matmul_operands(call):
    _same(call)


# ------------------------------------------------------------------------------ F.linear
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("xshape", [(4, 3), (2, 4, 3), (1, 3)], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_values_and_grads(dtype, xshape, bias):
    def fn(m):
        x = _arr(m, xshape, dtype).requires_grad_()
        w = _arr(m, (5, 3), dtype, 1).requires_grad_()
        b = _arr(m, (5,), dtype, 2).requires_grad_() if bias else None
        y = m.nn.functional.linear(x, w, b)
        g = _arr(m, tuple(y.shape), dtype, 3)
        ins = (x, w) + ((b,) if bias else ())
        return (y, *m.autograd.grad(y, ins, g))

    tol = 3e-2 if dtype == "bfloat16" else 1e-5
    _same(fn, rtol=tol, atol=tol)


def test_linear_transposed_weight():
    # a weight stored transposed (a view): its gradient follows its own layout
    def fn(m):
        x = _arr(m, (4, 3), "float32").requires_grad_()
        base = _arr(m, (3, 5), "float32", 1).requires_grad_()
        y = m.nn.functional.linear(x, base.t(), _arr(m, (5,), "float32", 2))
        return (y, *m.autograd.grad(y.sum(), (x, base)))

    _same(fn)


def test_linear_named_input():
    # torch 2.13 has no named tensors: the values are its unnamed ones, and the batch and
    # features dims keep their names (spec 4.3)
    def fn(m):
        lin = m.nn.Linear(3, 5)
        with m.no_grad():
            lin.weight.copy_(_arr(m, (5, 3), "float32", 1))
            lin.bias.copy_(_arr(m, (5,), "float32", 2))
        x = _arr(m, (4, 3), "float32")
        if m is ember:
            x = x.refine_names("N", "C")
        return lin(x).rename(None) if m is ember else lin(x)

    _same(fn)
    m = ember
    x = _arr(m, (4, 3), "float32").refine_names("N", "C")
    assert m.nn.Linear(3, 5)(x).names == ("N", "C")


def _names(fn, d=0):
    if fn is None or d > 3:
        return []
    out = [(d, fn.name())]
    for nf, _ in fn.next_functions:
        out += _names(nf, d + 1)
    return out


@pytest.mark.parametrize(
    "make",
    [
        lambda m, a: (m.mm(a[0], a[1]), a[:2]),
        lambda m, a: (a[0] @ a[1], a[:2]),
        lambda m, a: (m.mm(a[0], a[3].t()), (a[0], a[3])),
        lambda m, a: (m.addmm(a[2], a[0], a[1]), (a[0], a[1])),
        lambda m, a: (m.nn.functional.linear(a[0], a[3], a[2]), (a[0], a[3])),
        lambda m, a: (m.nn.functional.linear(a[0], a[3]), (a[0], a[3])),
        lambda m, a: (m.mv(a[0], a[4]), (a[4],)),
        lambda m, a: (m.addmv(a[5], a[0], a[4]), (a[4],)),
    ],
)
def test_double_backward_graph_names(make):
    # the derivatives' own graph (create_graph=True): a matrix is transposed by t()
    def fn(m):
        shapes = [(4, 3), (3, 5), (5,), (5, 3), (3,), (4,), (2, 4, 3), (2, 3, 5)]
        a = [_arr(m, s, "float64", k).requires_grad_() for k, s in enumerate(shapes)]
        y, ins = make(m, a)
        gs = m.autograd.grad((y * y).sum(), ins, create_graph=True)
        return [_names(g.grad_fn) for g in gs]

    want, got = (run_quietly(fn, lib) for lib in (torch, ember))
    assert want[0] is None and got[0] is None, (want[0], got[0])
    assert got[1] == want[1]


# ------------------------------------------------------------------------------ a training step
@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW"])
def test_mlp_steps(opt):
    # the measured workload, a few steps: parameters and losses follow torch's
    def fn(m):
        m.manual_seed(0)
        rng = np.random.default_rng(0)
        net = m.nn.Sequential(
            m.nn.Linear(6, 8), m.nn.ReLU(), m.nn.Linear(8, 8), m.nn.ReLU(), m.nn.Linear(8, 3)
        ).double()
        with m.no_grad():
            for p in net.parameters():
                p.copy_(m.tensor(rng.standard_normal(tuple(p.shape))))
        kw = {"momentum": 0.9} if opt == "SGD" else {}
        o = getattr(m.optim, opt)(net.parameters(), 1e-2, **kw)
        x = m.tensor(rng.standard_normal((5, 6)))
        y = m.tensor([0, 2, 1, 1, 0])
        losses = []
        for _ in range(4):
            o.zero_grad()
            loss = m.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            o.step()
            losses.append(loss.detach())
        return (m.stack(losses), *[p.detach() for p in net.parameters()])

    _same(fn, rtol=1e-9, atol=1e-12)
