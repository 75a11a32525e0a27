"""Parity regressions found by the fifty-second wave, complex numbers end to end (torch is the
oracle): construction (complex, polar, dtype inference, view_as_real/view_as_complex, .real/.imag,
conj), type promotion of complex with every real dtype and Python scalar, the pointwise ops and
their branch cuts, the ops that refuse complex, reductions, isclose/allclose/equal, printing,
item/complex()/numpy/checkpoints, and complex autograd (torch's conjugate Wirtinger convention:
real losses of complex inputs, complex matmul/linear/conv, fft in a training loop, gradcheck,
optimizers on complex parameters, nn.init, the losses). Found: the gradients of a complex
convolution (conv1d/2d/3d, transposed, grouped, 1x1: every GEMM derivative paired the output
gradient with the other factor unconjugated), and the dtype errors of a complex convolution
(torch's complex kernel names both types; a transposed convolution's bias of another dtype:
refused by the complex kernel and oneDNN, cast by the native one unless the promoted type cannot
be cast back: int input, float bias); the losses torch has no complex kernel for (mse_loss,
huber_loss, smooth_l1_loss, nll_loss, multi_margin_loss, multilabel_margin_loss, kl_div,
binary_cross_entropy, the log_sigmoid of binary_cross_entropy_with_logits and
multilabel_soft_margin_loss, cosine_similarity) computed complex results or leaked other errors,
and the integer-operand errors of mse/huber/smooth_l1 named the input's type, not the promoted
one (huber also refuses a result its integer input cannot hold; nll_loss and multi_margin_loss
took integer inputs); binary_cross_entropy_with_logits of a real input and a complex target
leaked numpy's casting error (torch: a complex loss); L-BFGS read a complex parameter as complex
numbers (torch views it as twice as many reals); SparseAdam took complex parameters (torch's
ValueError when built); fused Adam/AdamW/SGD/Adagrad stepped complex parameters (torch's errors at
the step); complex logaddexp/logcumsumexp (torch keeps the larger operand's
imaginary part unwrapped) and logsumexp (torch's principal angle) differed by 2*pi, and
logcumsumexp had no complex gradient; scatter_reduce's amax/amin and index_reduce of complex
tensors (torch's kernels refuse them); L-BFGS's strong-Wolfe line search ignored max_eval (torch
gives it what is left: real parameters too); arange/range of complex bounds (torch reads a
double: a nonzero imaginary part is its error) or a complex dtype (no kernel), linspace/logspace
of complex ends into a real dtype (torch's cast error); dropout of complex tensors (no complex
bernoulli); F.pad's complex value (torch's parser wants a float); torch.func.jacrev/jacfwd of
complex arguments and autograd.functional.jacobian/hessian of complex outputs (torch's errors);
view_as_complex of an odd storage offset; abs of a complex tensor into an out= of its own complex
dtype (torch writes |z|; ember's message named the wrong type)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from harness import results_or_same_error

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

INF, NAN = float("inf"), float("nan")


def _np(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.numpy()


def _z(mod, *shape, seed=0, dtype="complex128", rg=False):
    rs = np.random.RandomState(seed)
    a = rs.randn(*shape) + 1j * rs.randn(*shape)
    return mod.tensor(a, dtype=getattr(mod, dtype), requires_grad=rg)


def _same(fn, rtol=1e-6, atol=1e-8) -> None:
    """``fn(torch)`` and ``fn(ember)``: the same error (type and message), or tensors (or
    tuples of them, or plain values) of one dtype and shape with the same values."""
    for w, g in results_or_same_error(fn):
        if not isinstance(w, torch.Tensor):
            assert g == w
            continue
        assert str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1]
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(_np(g), _np(w), rtol=rtol, atol=atol, equal_nan=True)


# ------------------------------------------------------------ complex convolution gradients
CONVS = [
    ("conv1d", (2, 4, 8), (4, 2, 3), {"groups": 2, "stride": 2, "padding": 1}),
    ("conv1d", (1, 4, 8), (2, 4, 1), {}),  # 1x1: the plain GEMM path
    ("conv2d", (1, 3, 5, 5), (2, 3, 3, 3), {"padding": 1}),
    ("conv2d", (2, 4, 6, 6), (4, 1, 3, 3), {"groups": 4}),
    ("conv3d", (1, 2, 4, 4, 4), (2, 2, 2, 2, 2), {}),
    ("conv_transpose1d", (1, 2, 6), (2, 3, 3), {"stride": 2}),
    ("conv_transpose2d", (1, 2, 4, 4), (2, 3, 3, 3), {}),
]


@pytest.mark.parametrize("name,xs,ws,kw", CONVS)
def test_complex_conv_gradients_conjugate_the_other_factor(name, xs, ws, kw):
    def fn(m):
        x, w = _z(m, *xs, seed=1, rg=True), _z(m, *ws, seed=2, rg=True)
        b = _z(m, ws[1] if "transpose" in name else ws[0], seed=5, rg=True)
        y = getattr(m.nn.functional, name)(x, w, b, **kw)
        y.backward(_z(m, *y.shape, seed=3))  # a non-uniform complex upstream gradient
        return y, x.grad, w.grad, b.grad

    _same(fn, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name,xs,ws,kw", CONVS[:3] + CONVS[5:6])
def test_complex_conv_double_backward(name, xs, ws, kw):
    def fn(m):
        x, w = _z(m, *xs, seed=1, rg=True), _z(m, *ws, seed=2, rg=True)
        y = getattr(m.nn.functional, name)(x, w, **kw)
        gx, gw = m.autograd.grad((y.abs() ** 2).sum(), (x, w), create_graph=True)
        (gx.abs().sum() + (gw * gw.conj()).real.sum()).backward()
        return gx, gw, x.grad, w.grad

    _same(fn, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("name", ["conv1d", "conv_transpose1d"])
def test_complex_conv_gradcheck(name):
    x = _z(ember, 1, 2, 5, seed=1, rg=True)
    w = _z(ember, 2, 2, 3, seed=2, rg=True)
    f = getattr(ember.nn.functional, name)
    assert ember.autograd.gradcheck(lambda a, b: f(a, b, padding=1), (x, w))
    assert ember.autograd.gradgradcheck(lambda a, b: f(a, b, padding=1), (x, w))


def test_complex_conv1d_module_trains_like_torch():
    def fn(m):
        conv = m.nn.Conv1d(3, 2, 3, dtype=m.cdouble)
        with m.no_grad():
            conv.weight.copy_(_z(m, 2, 3, 3, seed=2))
            conv.bias.copy_(_z(m, 2, seed=4))
        opt = m.optim.Adam(conv.parameters(), lr=0.1)
        x, tgt = _z(m, 4, 3, 10, seed=5), _z(m, 4, 2, 8, seed=6)
        for _ in range(5):
            opt.zero_grad()
            loss = ((conv(x) - tgt).abs() ** 2).mean()
            loss.backward()
            opt.step()
        return loss, conv.weight, conv.bias

    _same(fn, rtol=1e-7, atol=1e-9)


DTS = ["float32", "float64", "bfloat16", "float16", "complex64", "complex128", "int64"]


@pytest.mark.parametrize("a", DTS)
@pytest.mark.parametrize("b", DTS)
@pytest.mark.parametrize("n", [1, 2])  # batch 2 of float32: torch's oneDNN path
@pytest.mark.parametrize("fn", ["conv1d", "conv_transpose1d", "conv_transpose2d"])
def test_conv_dtype_mismatch_errors(a, b, n, fn):
    shape = (n, 2, 5) if "1d" in fn else (n, 2, 5, 5)
    wshape = (2, 2, 3) if "1d" in fn else (2, 2, 3, 3)

    def weight(m):
        f = getattr(m.nn.functional, fn)
        return f(m.ones(*shape, dtype=getattr(m, a)), m.ones(*wshape, dtype=getattr(m, b)))

    def bias(m):
        f = getattr(m.nn.functional, fn)
        x = m.ones(*shape, dtype=getattr(m, a))
        return f(x, m.ones(*wshape, dtype=x.dtype), m.ones(2, dtype=getattr(m, b)))

    if a == b:
        return  # nothing mismatched
    _same(weight, rtol=1e-2, atol=1e-2)
    _same(bias, rtol=1e-2, atol=1e-2)


# ------------------------------------------------------------ losses that refuse complex
def _c(m, rg=False):
    return _z(m, 2, 3, dtype="complex64", rg=rg)


def _r(m):
    return m.tensor(np.random.RandomState(1).rand(2, 3), dtype=m.float32)


LOSSES = {
    "mse": lambda m: m.nn.functional.mse_loss(_c(m), _c(m)),
    "mse c f64": lambda m: m.nn.functional.mse_loss(_c(m), _r(m).double()),
    "mse f64 c": lambda m: m.nn.functional.mse_loss(_r(m).double(), _c(m)),
    "mse i c": lambda m: m.nn.functional.mse_loss(m.ones(2, 3, dtype=m.int64), _c(m)),
    "MSELoss": lambda m: m.nn.MSELoss()(_c(m), _c(m)),
    "huber": lambda m: m.nn.functional.huber_loss(_c(m), _c(m)),
    "huber f64 c": lambda m: m.nn.functional.huber_loss(_r(m).double(), _c(m)),
    "huber i c": lambda m: m.nn.functional.huber_loss(m.ones(2, 3, dtype=m.int64), _c(m)),
    "huber c i": lambda m: m.nn.functional.huber_loss(_c(m), m.ones(2, 3, dtype=m.int64)),
    "smooth_l1": lambda m: m.nn.functional.smooth_l1_loss(_r(m), _c(m)),
    "nll": lambda m: m.nn.functional.nll_loss(_c(m, True), m.tensor([0, 1])),
    "nll 3d": lambda m: m.nn.functional.nll_loss(
        _z(m, 2, 3, 4, dtype="complex64"), m.zeros(2, 4, dtype=m.int64)
    ),
    "kl": lambda m: m.nn.functional.kl_div(_c(m), _r(m), reduction="sum"),
    "kl r c": lambda m: m.nn.functional.kl_div(_r(m), _c(m), reduction="sum", log_target=True),
    "bce": lambda m: m.nn.functional.binary_cross_entropy(_c(m), _c(m)),
    "bce logits": lambda m: m.nn.functional.binary_cross_entropy_with_logits(_c(m), _c(m)),
    "multilabel soft margin": lambda m: m.nn.functional.multilabel_soft_margin_loss(
        _c(m), m.ones(2, 3)
    ),
    "multi margin": lambda m: m.nn.functional.multi_margin_loss(_c(m), m.tensor([0, 1])),
    "multilabel margin": lambda m: m.nn.functional.multilabel_margin_loss(
        _z(m, 2, 3, dtype="complex128"), m.zeros(2, 3, dtype=m.int64)
    ),
    "cosine": lambda m: m.nn.functional.cosine_similarity(_c(m), _c(m)),
    "cosine r c": lambda m: m.nn.functional.cosine_similarity(_r(m), _c(m)),
}


@pytest.mark.parametrize("case", list(LOSSES))
def test_losses_without_complex_kernels_refuse_complex(case):
    _same(LOSSES[case])


def test_complex_losses_torch_computes():
    _same(lambda m: m.nn.functional.l1_loss(_c(m), _c(m) * 2, reduction="none"), rtol=1e-5)
    _same(lambda m: m.nn.functional.poisson_nll_loss(_c(m), _c(m) * 2), rtol=1e-5)

    def bce_logits(m, **kw):  # a real input with a complex target: torch's loss is complex
        x = m.tensor([[0.3, -2.0, 5.0], [1.0, 0.0, -30.0]])
        return m.nn.functional.binary_cross_entropy_with_logits(x, _c(m), **kw)

    _same(lambda m: bce_logits(m, reduction="none"), rtol=1e-5, atol=1e-6)
    _same(lambda m: bce_logits(m, weight=m.tensor([1.0, 2.0, 0.5])), rtol=1e-5, atol=1e-6)
    _same(lambda m: bce_logits(m, pos_weight=m.ones(3, dtype=m.float64)))  # torch's cast error


INT_PAIRS = [
    ("int32", "int64"),
    ("int64", "int32"),
    ("bool", "int8"),
    ("uint8", "int8"),
    ("bool", "bool"),
    ("int64", "float32"),
    ("float32", "int64"),
]


@pytest.mark.parametrize("loss", ["mse_loss", "huber_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("a,b", INT_PAIRS)
def test_real_losses_name_the_promoted_type(loss, a, b):
    _same(
        lambda m: getattr(m.nn.functional, loss)(
            m.ones(2, 3, dtype=getattr(m, a)), m.ones(2, 3, dtype=getattr(m, b))
        )
    )


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_nll_and_multi_margin_refuse_integer_inputs(dtype):
    def x(m, *shape):
        return m.ones(*shape, dtype=getattr(m, dtype))

    _same(lambda m: m.nn.functional.nll_loss(x(m, 2, 3), m.tensor([0, 1])))
    _same(lambda m: m.nn.functional.nll_loss(x(m, 2, 3, 4), m.zeros(2, 4, dtype=m.int64)))
    _same(lambda m: m.nn.functional.multi_margin_loss(x(m, 2, 3), m.tensor([0, 1])))


# ------------------------------------------------------------ optimizers on complex parameters
@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_views_complex_parameters_as_real(line_search):
    # complex128: in single precision the line search's cubic step turns on float32 rounding
    def fn(m):
        p = m.nn.Parameter(_z(m, 3, 2, seed=7))
        tgt = _z(m, 3, 2, seed=8)
        opt = m.optim.LBFGS([p], lr=0.1, max_iter=3, line_search_fn=line_search)
        out = []

        def closure():
            opt.zero_grad()
            loss = ((p - tgt).abs() ** 2).sum() + (p * p).real.sum() * 0.1
            loss.backward()
            return loss

        for _ in range(3):
            out += [opt.step(closure), p.detach().clone()]
        return out

    _same(fn, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("max_iter", [1, 2, 5])
def test_lbfgs_line_search_spends_only_what_is_left_of_max_eval(max_iter):
    def fn(m):
        p = m.nn.Parameter(m.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.2]], dtype=m.float64))
        tgt = m.tensor([[0.3, -1.0], [2.0, 1.0], [1.0, 1.0]], dtype=m.float64)
        opt = m.optim.LBFGS([p], lr=0.1, max_iter=max_iter, line_search_fn="strong_wolfe")
        out = []

        def closure():
            opt.zero_grad()
            loss = ((p - tgt) ** 4).sum() + (p * p).sum() * 0.1
            loss.backward()
            return loss

        for _ in range(3):
            out += [opt.step(closure), p.detach().clone()]
        return out + [opt.state_dict()["state"][0]["func_evals"]]

    _same(fn, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "Adagrad"])
@pytest.mark.parametrize("fused", [True, None])
def test_fused_optimizers_refuse_complex_parameters_at_step(name, fused):
    def fn(m):
        p = m.nn.Parameter(_z(m, 3, 2, seed=7, dtype="complex64"))
        q = m.nn.Parameter(m.ones(2))
        r = m.nn.Parameter(_z(m, 2, seed=3, dtype="complex64"))
        opt = getattr(m.optim, name)([q, r, p], lr=0.1, fused=fused)
        (p.abs().sum() + q.sum() + r.abs().sum()).backward()
        err = None
        try:
            opt.step()
        except (RuntimeError, NotImplementedError) as e:
            err = (type(e).__name__, str(e).replace("ember", "torch"))
        # the refused step left every parameter as it was (complex, unchanged); without
        # complex gradients the next one steps
        r.grad = p.grad = None
        opt.step()
        return err, p.dtype.is_complex, r.dtype.is_complex, p.detach(), q.detach(), r.detach()

    _same(fn, rtol=1e-5)


def test_sparse_adam_refuses_complex_parameters():
    def fn(m):
        a = [m.nn.Parameter(m.ones(2)), m.nn.Parameter(m.ones(2, dtype=m.cfloat))]
        b = [m.nn.Parameter(m.ones(2, dtype=m.cfloat))]
        return m.optim.SparseAdam([{"params": a}, {"params": b}])

    _same(fn)


# ------------------------------------------------------------ logaddexp / logcumsumexp / logsumexp
_BIG = np.random.RandomState(1).randn(4, 5) * 2 + 1j * np.random.RandomState(2).randn(4, 5) * 6


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_log_sum_exps_keep_torchs_imaginary_parts(dtype):
    def z(m, a):
        return m.tensor(a, dtype=getattr(m, dtype))

    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "complex64" else {}
    _same(lambda m: m.logaddexp(z(m, _BIG[0]), z(m, _BIG[1])), **tol)
    _same(lambda m: m.logaddexp(z(m, _BIG), z(m, _BIG[1, :1])), **tol)
    _same(lambda m: m.logaddexp(z(m, _BIG[0, 0]), z(m, _BIG[1, 1])), **tol)
    _same(lambda m: m.logcumsumexp(z(m, _BIG), 1), **tol)
    _same(lambda m: m.logcumsumexp(z(m, _BIG), 0), **tol)
    _same(lambda m: m.logsumexp(z(m, _BIG), 1), **tol)
    _same(lambda m: m.logsumexp(z(m, _BIG), (0, 1)), **tol)


def test_complex_logaddexp_special_values():
    vals = [complex(-INF, 0), complex(-INF, 2), complex(INF, 1), complex(NAN, 0), 1 + 2j, 1 - 2j]
    a = [u for u in vals for _ in vals]
    b = [v for _ in vals for v in vals]
    _same(lambda m: m.logaddexp(m.tensor(a), m.tensor(b)))
    _same(lambda m: m.logcumsumexp(m.tensor([a, b]), 0))
    _same(lambda m: m.logsumexp(m.tensor([[complex(-INF, 1), complex(-INF, 2)], [INF, 1j]]), 1))


def test_complex_logcumsumexp_gradient():
    def fn(m):
        x = m.tensor(_BIG, requires_grad=True)
        g = _BIG[::-1].copy()
        g[1, 2] = 0  # a zero upstream gradient: log 0 in the reversed scan
        m.logcumsumexp(x, 1).backward(m.tensor(g))
        return x.grad

    _same(fn, rtol=1e-8, atol=1e-10)
    x = ember.tensor(_BIG[:2, :3], requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.logcumsumexp(a, 1), (x,))
    assert ember.autograd.gradgradcheck(lambda a: ember.logcumsumexp(a, 1), (x,))


# ------------------------------------------------------------ scatter/index reductions
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_of_complex_refuses_amax_amin(reduce, include_self):
    def fn(m):
        src = m.tensor([1j, 2, 3 + 1j], dtype=m.complex64)
        z = m.zeros(3, dtype=m.complex64)
        return z.scatter_reduce(0, m.tensor([0, 0, 2]), src, reduce, include_self=include_self)

    _same(fn, rtol=1e-6)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("shape", [(3,), (3, 2)])
def test_index_reduce_of_complex(reduce, shape):
    def fn(m):
        z = m.zeros(*shape, dtype=m.complex128)
        src = m.ones(*shape, dtype=m.complex128) * (1 + 2j)
        return z.index_reduce(0, m.tensor([0, 0, 2]), src, reduce)

    _same(fn)


# ------------------------------------------------------------ creation, dropout, pad
@pytest.mark.parametrize("args", [(2 + 0j,), (0, 2 + 0j), (0, 2, 1 + 0j), (1j,), (0, 5, 1j)])
def test_arange_reads_complex_bounds_as_doubles(args):
    _same(lambda m: m.arange(*args))
    _same(lambda m: m.arange(*args, dtype=m.int64))
    _same(lambda m: m.range(0, args[-1]))


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "bool"])
def test_arange_and_range_have_no_complex_kernel(dtype):
    _same(lambda m: m.arange(3, dtype=getattr(m, dtype)))
    _same(lambda m: m.range(0, 3, dtype=getattr(m, dtype)))


@pytest.mark.parametrize("fn", ["linspace", "logspace"])
@pytest.mark.parametrize("ends", [(0, 1 + 1j), (0, 1 + 0j), (1j, 1)])
@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "complex64", "complex128"])
def test_space_of_complex_ends_casts_only_to_complex(fn, ends, dtype):
    _same(lambda m: getattr(m, fn)(*ends, 3, dtype=getattr(m, dtype)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("p", [0.5, 1.0])
@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_alpha_dropout"])
def test_dropout_of_complex(p, name):
    _same(lambda m: getattr(m.nn.functional, name)(m.ones(3, 4, dtype=m.cfloat), p, True))
    _same(lambda m: m.nn.Dropout(p)(m.ones(3, dtype=m.cfloat)))


@pytest.mark.parametrize("value", [1j, 1 + 0j, 2, True])
def test_pad_value_is_a_float(value):
    z = [[1 + 2j, -1j]]
    _same(lambda m: m.nn.functional.pad(m.tensor(z), (1, 1), value=value))
    _same(lambda m: m.nn.functional.pad(m.tensor([z]), (1, 1), mode="reflect", value=value))
    _same(lambda m: m.constant_pad_nd(m.tensor(z), (1, 1), value))


# ------------------------------------------------------------ jacobians of complex functions
@pytest.mark.parametrize("fn", ["jacrev", "jacfwd"])
def test_func_jacobians_refuse_complex_arguments(fn):
    def z(m):
        return m.tensor([1 + 2j, 2j])

    _same(lambda m: getattr(m.func, fn)(lambda x: x.abs())(z(m)))
    _same(lambda m: getattr(m.func, fn)(lambda x: x * 1j)(m.ones(2)))
    # a complex argument refused though only the real one is differentiated
    _same(lambda m: getattr(m.func, fn)(lambda x, y: (x * y).abs(), argnums=0)(m.ones(2), z(m)))


@pytest.mark.parametrize("kw", [{}, {"vectorize": True}, {"strict": True}])
def test_autograd_functional_jacobian_of_complex_outputs(kw):
    def z(m):
        return m.tensor([1 + 2j, 2j])

    _same(lambda m: m.autograd.functional.jacobian(lambda x: x * x, z(m), **kw))
    _same(lambda m: m.autograd.functional.jacobian(lambda x: x.abs(), z(m), **kw), rtol=1e-6)
    _same(lambda m: m.autograd.functional.jacobian(lambda x: x * 1j, m.ones(2), **kw))
    _same(lambda m: m.autograd.functional.hessian(lambda x: (x * 1j).sum(), m.ones(2)))


# ------------------------------------------------------------ views and out=
def test_view_as_complex_needs_an_even_storage_offset():
    _same(lambda m: m.view_as_complex(m.arange(10.0)[1:9].reshape(4, 2)))
    _same(lambda m: m.view_as_complex(m.arange(10.0, dtype=m.float64)[1:9].reshape(4, 2)))
    _same(lambda m: m.view_as_complex(m.arange(10.0)[2:10].reshape(4, 2)))


@pytest.mark.parametrize(
    "dtype", ["complex64", "complex128", "float64", "float16", "int64", "bool"]
)
def test_abs_of_complex_into_out(dtype):
    _same(
        lambda m: m.abs(m.tensor([1 + 2j, -3j]), out=m.empty(2, dtype=getattr(m, dtype))),
        rtol=1e-3,
    )
