"""Parity regressions found by the tenth wave: condensed versions of PyTorch's official tutorials
and recipes (torch is the oracle): the printed node of a custom Function
(``<torch.autograd.function.FooBackward ...>``), a Function whose backward is named ``vjp``, forward
AD through a Function that defines only ``jvp`` (forward_ad, torch.func.jvp), ``grad_fn.metadata``
and ``grad_fn._saved_self/_saved_result/...`` (the saved-tensor hooks tutorial), ``x[range(n), y]``
("What is torch.nn really?"), scatter/gather with a 0-d index (a one-hot target transform),
torch.empty's memory_format and max pooling keeping channels_last, the deprecated
torch.get_autocast_cpu_dtype family (AMP recipe), grid_sample/affine_grid grad_fn names and warning
location (spatial transformer), RNN/GRU/LSTM output grad_fn names, SDPA's output in the query's
layout (``y.transpose(1, 2).view(...)`` in the SDPA tutorial), vmap refusing a training batch norm
with a module's running stats (model ensembling), optimizers stepping complex parameters as real
pairs (complex numbers tutorial), numpy() of a tensor that requires grad outside autograd (a custom
op's numpy kernel), torch.utils.swap_tensors and torch.__future__ (loading-a-checkpoint tips), and
torch._dynamo / torch.compiler.list_backends (torch.compile recipe)."""

from __future__ import annotations

import re
import warnings

import ember
import ember.autograd.forward_ad as e_fwad
import numpy as np
import pytest

torch = pytest.importorskip("torch")
t_fwad = pytest.importorskip("torch.autograd.forward_ad")


def _np(t):
    return t.detach().numpy()


def _node_text(node) -> str:
    return re.sub(r" object at 0x[0-9a-f]+>", ">", repr(node))


# ------------------------------------------------------------------- custom Functions
def _square_fns(lib, formula: str):
    def fwd(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    def bwd(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g

    body = {"forward": staticmethod(fwd), formula: staticmethod(bwd)}
    return type("Square", (lib.autograd.Function,), body)


def test_custom_function_node_repr():
    t = _square_fns(torch, "backward").apply(torch.ones(2, requires_grad=True))
    e = _square_fns(ember, "backward").apply(ember.ones(2, requires_grad=True))
    assert _node_text(e.grad_fn) == _node_text(t.grad_fn)
    assert _node_text(e.grad_fn) == "<torch.autograd.function.SquareBackward>"
    # torch's C++ nodes print bare
    assert _node_text((e * 2).grad_fn) == _node_text((t * 2).grad_fn) == "<MulBackward0>"


def test_custom_function_backward_named_vjp():
    g = np.array([0.5, -1.0, 2.0])
    t = torch.tensor([1.0, 2.0, -3.0], requires_grad=True)
    e = ember.tensor([1.0, 2.0, -3.0], requires_grad=True)
    _square_fns(torch, "vjp").apply(t).backward(torch.tensor(g, dtype=torch.float32))
    _square_fns(ember, "vjp").apply(e).backward(ember.tensor(g, dtype=ember.float32))
    np.testing.assert_allclose(_np(e.grad), _np(t.grad))


def _exp_jvp_only(lib):
    """The forward-mode AD tutorial's Fn: exp with a jvp and no backward."""

    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo, k):
            result = lib.exp(foo) * k
            ctx.result = result
            return result, foo * 2

        @staticmethod
        def jvp(ctx, g_foo, g_k):
            assert g_k is None  # a non-tensor input has no tangent
            out = g_foo * ctx.result
            del ctx.result  # torch calls jvp once per forward
            return out, g_foo * 2

    return Fn


def test_forward_ad_custom_function_with_only_jvp():
    p = np.array([[0.5, -1.0], [2.0, 0.25]])
    tg = np.array([[1.0, 2.0], [-0.5, 3.0]])
    res = []
    for lib, fwad in ((torch, t_fwad), (ember, e_fwad)):
        fn = _exp_jvp_only(lib)
        with fwad.dual_level():
            dual = fwad.make_dual(lib.tensor(p), lib.tensor(tg))
            a, b = fn.apply(dual, 3.0)
            res.append((_np(fwad.unpack_dual(a).tangent), _np(fwad.unpack_dual(b).tangent)))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1])
    np.testing.assert_allclose(res[1][0], tg * np.exp(p) * 3.0, rtol=1e-12)


def test_func_jvp_custom_function_with_only_jvp():
    class Fn(ember.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            (ctx.x,) = inputs

        @staticmethod
        def jvp(ctx, gx):
            return gx * ctx.x.cos()

    x = np.array([0.1, 1.2, -2.0])
    v = np.array([1.0, -2.0, 0.5])
    out, tangent = ember.func.jvp(Fn.apply, (ember.tensor(x),), (ember.tensor(v),))
    np.testing.assert_allclose(_np(out), np.sin(x))
    np.testing.assert_allclose(_np(tangent), v * np.cos(x), rtol=1e-12)


def test_jvp_only_function_still_refuses_reverse_mode():
    # torch's message, also from autograd.functional.jvp (a double backward, not forward AD)
    msg = "You must implement either the backward or vjp method"
    for lib in (torch, ember):
        x = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
        with pytest.raises(NotImplementedError, match=msg):
            _exp_jvp_only(lib).apply(x, 2.0)[0].sum().backward()
        with pytest.raises(NotImplementedError, match=msg):
            lib.autograd.functional.jvp(
                lambda v, lib=lib: _exp_jvp_only(lib).apply(v, 2.0)[0], (x.detach(),), (x.detach(),)
            )


# ------------------------------------------------------------------- indexing with a range
def test_index_with_range():
    a = np.arange(12.0).reshape(3, 4)
    target = [3, 0, 2]
    g = np.array([1.0, -2.0, 0.5])
    res = []
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        y = x[range(3), lib.tensor(target)]  # -input[range(n), target].mean(): the tutorial's nll
        y.backward(lib.tensor(g))
        res.append((_np(y), _np(x.grad), _np(x[range(1, 3)]), _np(x[:, range(0, 4, 2)])))
        z = lib.tensor(a)
        z[range(2), 1] = -1.0
        res[-1] += (_np(z), tuple(x[range(0)].shape))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_array_equal(e, t)


# ------------------------------------------------------------------- memory formats
@pytest.mark.parametrize(
    "shape, fmt",
    [
        ((2, 3, 4, 5), "channels_last"),
        ((2, 3, 4, 5, 6), "channels_last_3d"),
        ((2, 3, 4, 5), "contiguous_format"),
    ],
)
def test_empty_memory_format(shape, fmt):
    t = torch.empty(*shape, memory_format=getattr(torch, fmt), dtype=torch.float64)
    e = ember.empty(*shape, memory_format=getattr(ember, fmt), dtype=ember.float64)
    assert e.stride() == t.stride() and e.dtype == ember.float64
    assert e.is_contiguous(memory_format=getattr(ember, fmt))


@pytest.mark.parametrize(
    "shape, fmt",
    [
        ((2, 3, 4), "channels_last"),
        ((2, 3, 4, 5, 6), "channels_last"),
        ((2, 3, 4, 5), "preserve_format"),
    ],
)
def test_empty_memory_format_errors(shape, fmt):
    with pytest.raises(RuntimeError) as te:
        torch.empty(*shape, memory_format=getattr(torch, fmt))
    with pytest.raises(RuntimeError) as ee:
        ember.empty(*shape, memory_format=getattr(ember, fmt))
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_zeros_ones_refuse_memory_format(name):
    with pytest.raises(TypeError) as te:
        getattr(torch, name)(2, 3, 4, 5, memory_format=torch.channels_last)
    with pytest.raises(TypeError) as ee:
        getattr(ember, name)(2, 3, 4, 5, memory_format=ember.channels_last)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.max_pool2d(x, 2),
        lambda F, x: F.max_pool2d(x, 3, 1, 1),
        lambda F, x: F.max_pool2d(x, 2, return_indices=True)[0],
        lambda F, x: F.max_pool2d(x, 2, return_indices=True)[1],
    ],
)
def test_max_pool_keeps_channels_last(call):
    a = np.random.RandomState(0).randn(2, 3, 6, 6).astype(np.float32)
    g = np.random.RandomState(1).randn(*call(torch.nn.functional, torch.tensor(a)).shape)
    res = []
    for lib in (torch, ember):
        x = lib.tensor(a).contiguous(memory_format=lib.channels_last).requires_grad_()
        y = call(lib.nn.functional, x)
        res.append((y.stride(), _np(y)))
        if y.dtype == lib.float32:
            y.backward(lib.tensor(g, dtype=lib.float32))
            res[-1] += (_np(x.grad),)
    assert res[1][0] == res[0][0]
    for e, t in zip(res[1][1:], res[0][1:]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)  # overlaps: summation order


def test_max_pool_module_on_channels_last():
    x = ember.ones(2, 4, 8, 8).contiguous(memory_format=ember.channels_last)
    t = torch.ones(2, 4, 8, 8).contiguous(memory_format=torch.channels_last)
    assert ember.nn.MaxPool2d(2)(x).stride() == torch.nn.MaxPool2d(2)(t).stride()
    assert ember.nn.MaxPool2d(2)(x).is_contiguous(memory_format=ember.channels_last)


# ------------------------------------------------------------------- the AMP recipe
@pytest.mark.parametrize(
    "name, args, getter, device",
    [
        ("get_autocast_cpu_dtype", (), None, "cpu"),
        ("get_autocast_gpu_dtype", (), None, "cuda"),
        ("is_autocast_cpu_enabled", (), None, "cpu"),
        ("set_autocast_cpu_dtype", ("float16",), "get_autocast_dtype", "cpu"),
        ("set_autocast_gpu_dtype", ("bfloat16",), "get_autocast_dtype", "cuda"),
        ("set_autocast_cpu_enabled", (True,), "is_autocast_enabled", "cpu"),
    ],
)
def test_deprecated_autocast_functions(name, args, getter, device):
    res = []
    for lib in (torch, ember):
        a = tuple(getattr(lib, v) if isinstance(v, str) else v for v in args)
        before = (lib.get_autocast_dtype(device), lib.is_autocast_enabled(device))
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                out = getattr(lib, name)(*a)
            if getter is not None:
                out = getattr(lib, getter)(device)
        finally:
            lib.set_autocast_dtype(device, before[0])
            lib.set_autocast_enabled(device, before[1])
        msgs = [str(m.message).split(" (Triggered internally")[0] for m in w]
        assert [m.category for m in w] == [DeprecationWarning]
        assert w[0].filename == __file__  # the caller's line
        res.append((str(out).split(".")[-1], msgs))
    assert res[1][0] == res[0][0]
    assert res[1][1] == res[0][1]


# ------------------------------------------------------------------- the spatial transformer
@pytest.mark.parametrize("size", [(2, 1, 5, 4), (2, 1, 3, 4, 5)])
def test_affine_grid_grid_sample_grad_fn_names_and_gradients(size):
    k = len(size) - 2
    rs = np.random.RandomState(0)
    th = rs.randn(2, k, k + 1)
    img = rs.randn(*size)
    res = []
    for lib in (torch, ember):
        theta = lib.tensor(th, requires_grad=True)
        x = lib.tensor(img, requires_grad=True)
        grid = lib.nn.functional.affine_grid(theta, size, align_corners=False)
        y = lib.nn.functional.grid_sample(x, grid, align_corners=False)
        y.backward(lib.tensor(rs.__class__(1).randn(*y.shape)))
        res.append((grid.grad_fn.name(), y.grad_fn.name(), _np(y), _np(theta.grad), _np(x.grad)))
    assert res[1][:2] == res[0][:2]
    for e, t in zip(res[1][2:], res[0][2:]):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-12)


def test_grid_sampler_gradcheck():
    rs = np.random.RandomState(3)
    x = ember.tensor(rs.randn(1, 2, 4, 4), requires_grad=True)
    theta = ember.tensor(rs.randn(1, 2, 3) * 0.5, requires_grad=True)

    def f(a, th):
        g = ember.nn.functional.affine_grid(th, (1, 2, 3, 3), align_corners=True)
        return ember.nn.functional.grid_sample(a, g, align_corners=True)

    assert ember.autograd.gradcheck(f, (x, theta))


@pytest.mark.parametrize("which", ["affine_grid", "grid_sample"])
def test_align_corners_warning_points_at_the_caller(which):
    for lib in (torch, ember):
        F = lib.nn.functional
        theta = lib.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        grid = F.affine_grid(theta, (1, 1, 2, 2), align_corners=False)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            if which == "affine_grid":
                F.affine_grid(theta, (1, 1, 2, 2))
            else:
                F.grid_sample(lib.ones(1, 1, 2, 2), grid)
        assert [m.category for m in w] == [UserWarning]
        assert "align_corners=False since 1.3.0" in str(w[0].message)
        assert w[0].filename == __file__


# ------------------------------------------------------------------- the torch.compile recipe
def test_compiler_list_backends():
    # torch.compiler.list_backends is torch._dynamo.list_backends; ember.compile accepts each
    assert ember.compiler.list_backends() == ember._dynamo.list_backends()
    assert set(ember.compiler.list_backends()) <= set(torch._dynamo.list_backends(()))
    for name in ember.compiler.list_backends():
        assert ember.compile(lambda x: x + 1, backend=name)(ember.ones(1)).item() == 2.0


def test_dynamo_reached_as_attribute():
    assert ember._dynamo.reset() is None
    assert callable(ember._dynamo.reset) and callable(torch._dynamo.reset)
    with pytest.raises(AttributeError, match="module 'ember' has no attribute 'nothing_here'"):
        ember.nothing_here  # noqa: B018
    assert not hasattr(ember, "_not_a_module")


# ------------------------------------------------------------------- 0-d index into a 1-d self
@pytest.mark.parametrize(
    "call",
    [
        lambda L, x: x.scatter(0, L.tensor(1), 5.0),
        lambda L, x: x.scatter(-1, L.tensor(2), L.tensor(7.0, dtype=x.dtype)),
        lambda L, x: L.zeros(3, dtype=x.dtype).scatter_(0, L.tensor(1), value=1),  # one-hot
        lambda L, x: x.scatter(0, L.tensor(1), 2.0, reduce="add"),
        lambda L, x: x.scatter_add(0, L.tensor(1), L.tensor(2.0, dtype=x.dtype)),
        lambda L, x: x.scatter_reduce(0, L.tensor(0), L.tensor(2.0, dtype=x.dtype), "amax"),
        lambda L, x: x.gather(0, L.tensor(2)),
        lambda L, x: x.gather(-1, L.tensor(0)),
    ],
)
def test_scatter_gather_zero_dim_index(call):
    a = np.array([1.0, -2.0, 3.0])
    res = []
    for lib in (torch, ember):
        x = lib.tensor(a)
        y = call(lib, x)
        res.append((tuple(y.shape), _np(y)))
    assert res[1][0] == res[0][0]
    np.testing.assert_array_equal(res[1][1], res[0][1])


def test_scatter_gather_zero_dim_index_gradients():
    g = np.array([1.0, 2.0, -3.0])
    res = []
    for lib in (torch, ember):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        s = lib.tensor(4.0, dtype=lib.float64, requires_grad=True)
        y = x.scatter(0, lib.tensor(1), s) * lib.tensor(g) + x.gather(0, lib.tensor(2)) * 5
        y.sum().backward()
        res.append((_np(x.grad), _np(s.grad)))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_array_equal(e, t)
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    s = ember.tensor(4.0, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda a, b: a.scatter(0, ember.tensor(1), b) * a.gather(0, ember.tensor(0)), (x, s)
    )


@pytest.mark.parametrize("which", ["scatter", "gather"])
def test_zero_dim_index_out_of_bounds(which):
    for lib in (torch, ember):
        x = lib.zeros(3)
        with pytest.raises(
            RuntimeError, match="index 5 is out of bounds for dimension 0 with size 3"
        ):
            x.scatter(0, lib.tensor(5), 1.0) if which == "scatter" else x.gather(0, lib.tensor(5))


# ------------------------------------------------------------------- loading-a-checkpoint tips
def test_swap_tensors():
    res = []
    for lib in (torch, ember):
        a = lib.ones(2)
        b = lib.zeros(3, dtype=lib.int64)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = lib.tensor([5.0])
        lib.utils.swap_tensors(a, b)
        lib.utils.swap_tensors(y, z)
        (z * lib.tensor([3.0, 4.0])).sum().backward()  # z took y's history
        res.append(
            (a.tolist(), str(a.dtype).split(".")[-1], b.tolist(), y.tolist(), y.requires_grad,
             x.grad.tolist())
        )  # fmt: skip
    assert res[1] == res[0]


def test_swap_tensors_refuses_weakrefs():
    import weakref

    for lib in (torch, ember):
        a, b = lib.ones(2), lib.zeros(2)
        ref = weakref.ref(b)
        with pytest.raises(RuntimeError, match="Cannot swap t2 because it has weakref associated"):
            lib.utils.swap_tensors(a, b)
        assert ref() is b


def test_future_module_conversion_flags():
    for lib in (torch, ember):
        fut = lib.__future__
        assert fut.get_swap_module_params_on_conversion() is False
        assert fut.get_overwrite_module_params_on_conversion() is False
        fut.set_swap_module_params_on_conversion(True)
        try:
            m = lib.nn.Linear(2, 2)
            w = m.weight
            m.to(lib.float64)
            assert m.weight is w and m.weight.dtype == lib.float64
        finally:
            fut.set_swap_module_params_on_conversion(False)


# ------------------------------------------------------------------- the Python custom ops tutorial
def test_numpy_of_requires_grad_tensor_outside_autograd():
    for lib in (torch, ember):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        with lib.no_grad():
            np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
            np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
        with lib.inference_mode():
            np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
        with pytest.raises(
            RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"
        ):
            x.numpy()


def test_custom_op_numpy_kernel_with_autograd():
    res = []
    for lib in (torch, ember):
        ns = "wave10_" + lib.__name__

        # (an explicit schema: this file's annotations are strings)
        @lib.library.custom_op(f"{ns}::numpy_sin", mutates_args=(), schema="(Tensor x) -> Tensor")
        def numpy_sin(x, lib=lib):
            return lib.from_numpy(np.sin(x.cpu().numpy()))  # the tutorial's kernel

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        numpy_sin.register_autograd(backward, setup_context=setup_context)
        x = lib.tensor([0.1, 0.5, 1.0], dtype=lib.float64, requires_grad=True)
        y = numpy_sin(x)
        y.backward(lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64))
        res.append((_np(y), _np(x.grad)))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-15)


# ------------------------------------------------------------------- the sequence-model tutorials
_RNN_CASES = {
    "lstm": lambda L: (L.nn.LSTM(3, 3), L.ones(4, 2, 3)),
    "lstm_2layers": lambda L: (L.nn.LSTM(3, 3, num_layers=2), L.ones(4, 2, 3)),
    "lstm_bf16": lambda L: (L.nn.LSTM(3, 3).bfloat16(), L.ones(4, 2, 3, dtype=L.bfloat16)),
    "lstm_f64": lambda L: (L.nn.LSTM(3, 3).double(), L.ones(4, 2, 3, dtype=L.float64)),
    "lstm_proj": lambda L: (L.nn.LSTM(3, 4, proj_size=2), L.ones(4, 2, 3)),
    "lstm_batch_first": lambda L: (L.nn.LSTM(3, 3, batch_first=True), L.ones(2, 4, 3)),
    "gru": lambda L: (L.nn.GRU(3, 3), L.ones(4, 2, 3)),
    "gru_f16": lambda L: (L.nn.GRU(3, 3).half(), L.ones(4, 2, 3, dtype=L.float16)),
    "gru_batch_first": lambda L: (L.nn.GRU(3, 3, batch_first=True), L.ones(2, 4, 3)),
    "rnn_relu": lambda L: (L.nn.RNN(3, 3, nonlinearity="relu"), L.ones(4, 2, 3)),
    "rnn_batch_first_bidir": lambda L: (
        L.nn.RNN(3, 3, batch_first=True, bidirectional=True),
        L.ones(2, 4, 3),
    ),
    "lstm_packed": lambda L: (
        L.nn.LSTM(3, 3),
        L.nn.utils.rnn.pack_padded_sequence(L.ones(4, 2, 3), [4, 2]),
    ),
    "gru_packed": lambda L: (
        L.nn.GRU(3, 3),
        L.nn.utils.rnn.pack_padded_sequence(L.ones(4, 2, 3), [4, 2]),
    ),
}


@pytest.mark.parametrize("case", sorted(_RNN_CASES))
def test_rnn_output_grad_fn_names(case):
    names = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: LSTM projections are not run by oneDNN
            m, x = _RNN_CASES[case](lib)
            out, h = m(x)
        out = out.data if hasattr(out, "batch_sizes") else out
        h = h[0] if isinstance(h, tuple) else h
        names.append((out.grad_fn.name(), h.grad_fn.name()))
    assert names[1] == names[0]


def test_rnn_gradients_unchanged_by_names():
    rs = np.random.RandomState(0)
    x = rs.randn(4, 2, 3)
    g = rs.randn(2, 4, 3)
    res = []
    for lib in (torch, ember):
        m = lib.nn.GRU(3, 3, batch_first=True).double()
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(np.random.RandomState(p.numel()).uniform(-0.5, 0.5, p.shape)))
        xi = lib.tensor(x.transpose(1, 0, 2).copy(), requires_grad=True)
        out, _ = m(xi)
        out.backward(lib.tensor(g))
        res.append((_np(out), _np(xi.grad), _np(m.weight_hh_l0.grad)))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------- the complex numbers tutorial
_COMPLEX_OPTIMS = [
    ("Adam", {}),
    ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {}),
    ("SGD", {"momentum": 0.9, "nesterov": True}),
    ("RMSprop", {"momentum": 0.9, "centered": True}),
    ("Adagrad", {}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("Adadelta", {}),
    ("ASGD", {}),
    ("Rprop", {}),
]


@pytest.mark.parametrize("name, kw", _COMPLEX_OPTIMS)
def test_optimizers_step_complex_params_as_real_pairs(name, kw):
    grads = ([[1 + 0j, 0 + 1j], [0.5 - 2j, 3j]], [[0.5 - 0.5j, -1 + 2j], [1 + 1j, -0.25j]])
    res = []
    for lib in (torch, ember):
        a = lib.tensor([[1 + 1j, 2 - 1j], [0.5j, -1 + 0j]], requires_grad=True)
        s = lib.tensor(1 - 2j, requires_grad=True)  # 0-d
        r = lib.tensor([0.5, -1.0], requires_grad=True)  # a real one in the same group
        opt = getattr(lib.optim, name)([a, s, r], lr=0.1, **kw)
        for g in grads:
            a.grad = lib.tensor(g)
            s.grad = lib.tensor(g[1][0])
            r.grad = lib.tensor([g[0][0].real, g[1][1].imag], dtype=lib.float32)
            opt.step()
        state = {k: (str(v.dtype).split(".")[-1], tuple(v.shape)) for k, v in opt.state[a].items()}
        res.append((_np(a), _np(s), _np(r), state, str(a.dtype).split(".")[-1], tuple(a.shape)))
    for e, t in zip(res[1][:3], res[0][:3]):
        np.testing.assert_allclose(e, t, rtol=2e-6, atol=1e-6)
    assert res[1][3:] == res[0][3:]


def test_optimizer_complex_state_dict_round_trip():
    res = []
    for lib in (torch, ember):
        a = lib.tensor([1 + 1j, 2 - 1j], requires_grad=True)
        opt = lib.optim.Adam([a], lr=0.1)
        a.grad = lib.tensor([1 + 0j, 1j])
        opt.step()
        opt2 = lib.optim.Adam([a], lr=0.1)
        opt2.load_state_dict(opt.state_dict())
        a.grad = lib.tensor([-1 + 0.5j, 2j])
        opt2.step()
        res.append((_np(a), _np(opt2.state[a]["exp_avg_sq"])))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-6)


def test_adafactor_refuses_complex_params():
    for lib in (torch, ember):
        c = lib.tensor([1 + 1j, 2], requires_grad=True)
        opt = lib.optim.Adafactor([c])
        opt.step()  # no gradient: nothing to refuse
        c.grad = lib.tensor([1j, 1])
        with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
            opt.step()


# ------------------------------------------------------------------- autograd graph extras
def test_node_metadata_dict():
    for lib in (torch, ember):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a * 3
        node = y.grad_fn
        assert node.metadata == {}
        node.metadata["tag"] = "scale"
        assert y.grad_fn.metadata == {"tag": "scale"}  # the same dict each time
        assert (y + 1).grad_fn.metadata == {}


# ------------------------------------------------------------------- the SDPA tutorial
def _heads(lib, x, b, h):
    """The tutorial's split: (B, L, 3E) -> q, k, v as (B, H, L, E/H) views (chunk, view,
    transpose)."""
    return [t.view(b, -1, h, t.shape[-1] // h).transpose(1, 2) for t in x.chunk(3, -1)]


@pytest.mark.parametrize(
    "make",
    [
        lambda L, a: _heads(L, L.tensor(a), 2, 2),
        lambda L, a: [L.tensor(a[..., :16]).view(2, 5, 2, 8).transpose(1, 2)] * 3,
        lambda L, a: [L.tensor(a[..., :16]).view(2, 5, 2, 8).permute(2, 0, 1, 3)] * 3,
        lambda L, a: [L.tensor(a[..., :16]).view(2, 5, 2, 8)[..., :4]] * 3,
        lambda L, a: [L.tensor(a[..., :16]).view(2, 5, 2, 8).contiguous()] * 3,
    ],
)
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_output_follows_query_layout(make, causal):
    a = np.random.RandomState(0).randn(2, 5, 24).astype(np.float32)
    res = []
    for lib in (torch, ember):
        q, k, v = make(lib, a)
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        res.append((y.stride(), _np(y)))
    assert res[1][0] == res[0][0]
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)


def test_sdpa_tutorial_merge_heads_with_view():
    a = np.random.RandomState(1).randn(2, 5, 24)
    g = np.random.RandomState(2).randn(2, 5, 8)
    res = []
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        q, k, v = _heads(lib, x, 2, 2)
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        merged = y.transpose(1, 2).view(2, -1, 8)  # torch's layout makes this a view
        merged.backward(lib.tensor(g))
        res.append((y.grad_fn.name(), merged.grad_fn.name(), _np(merged), _np(x.grad)))
    assert res[1][:2] == res[0][:2]
    for e, t in zip(res[1][2:], res[0][2:]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------- vmap over batch norm
_BN_MSG = "Batch norm got a batched tensor as input while the running_mean or running_var"


@pytest.mark.parametrize(
    "make",
    [
        lambda L: (L.nn.BatchNorm1d(4), ()),
        lambda L: (
            lambda x, L=L: L.nn.functional.batch_norm(x, L.zeros(4), None, training=True),
            (),
        ),
        lambda L: (L.nn.InstanceNorm1d(4, track_running_stats=True), ()),
    ],
)
def test_vmap_refuses_training_batch_norm_with_module_stats(make):
    x = np.random.RandomState(0).randn(5, 2, 4, 3).astype(np.float32)
    for lib in (torch, ember):
        fn, _ = make(lib)
        arg = lib.tensor(x if isinstance(fn, lib.nn.InstanceNorm1d) else x[..., 0])
        with pytest.raises(RuntimeError) as err:
            lib.func.vmap(fn)(arg)
        assert str(err.value).startswith(_BN_MSG)
        if isinstance(fn, lib.nn.Module) and fn.running_mean is not None:
            assert fn.running_mean.tolist() == [0.0] * 4  # refused before any update


def test_vmap_batch_norm_eval_or_mapped_stats():
    x = np.random.RandomState(1).randn(5, 2, 4).astype(np.float32)
    res = []
    for lib in (torch, ember):
        F = lib.nn.functional
        vm = lib.func.vmap
        rm, rv = lib.zeros(4), lib.ones(4)
        a = vm(lambda t, F=F, rm=rm, rv=rv: F.batch_norm(t, rm, rv, training=False))(lib.tensor(x))
        m, v = lib.zeros(5, 4), lib.ones(5, 4)
        b = vm(lambda t, m, v, F=F: F.batch_norm(t, m, v, training=True))(lib.tensor(x), m, v)
        c = vm(lambda t, F=F: F.batch_norm(t, None, None, training=True))(lib.tensor(x))
        res.append((_np(a), _np(b), _np(c), _np(m), _np(v)))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------- the saved-tensor hooks tutorial
def test_grad_fn_saved_attributes():
    res = []
    for lib in (torch, ember):
        a = lib.tensor([0.5, 1.0, -2.0], dtype=lib.float64, requires_grad=True)
        y = a.exp()
        r = y.grad_fn._saved_result
        row = [r.tolist(), r is y, r.grad_fn is y.grad_fn]
        x = lib.tensor([0.5, 1.0, -2.0], requires_grad=True)
        p = x.pow(2)
        row += [p.grad_fn._saved_self is x, p.grad_fn._saved_exponent]
        m = x * lib.tensor([2.0, 3.0, 4.0])
        row += [m.grad_fn._saved_self is x, m.grad_fn._saved_other.tolist()]
        row += [x.sin().grad_fn._saved_self is x, x.sqrt().grad_fn._saved_result.tolist()[:2]]
        res.append(row)
    assert res[1] == res[0]


def test_grad_fn_saved_attribute_errors():
    for lib in (torch, ember):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = x.pow(2)
        with pytest.raises(AttributeError, match="'PowBackward0' object has no attribute"):
            y.grad_fn._saved_nonsense  # noqa: B018
        y.sum().backward()
        with pytest.raises(RuntimeError, match="directly access saved tensors after they have"):
            y.grad_fn._saved_self  # noqa: B018
        t = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        u = t.sin()
        t.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            u.grad_fn._saved_self  # noqa: B018
