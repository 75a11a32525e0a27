"""Parity regressions found by the thirty-seventh wave, a sweep of reduced precision and autocast
(torch's OpInfo samples run op by op under ``torch.autocast("cpu")`` with bfloat16 and float16,
with float32 and 16-bit inputs, and in bfloat16/float16 without it; nn modules forward and
backward under autocast and converted to 16 bits; optimizers on 16-bit parameters; GradScaler
with inf/NaN gradients; torch is the oracle): the composites torch lists only through the matmul
they may reach (einsum, tensordot, inner, linalg.matrix_power, chain_matmul: ember cast them where
torch multiplies, sums or copies in the input's dtype; a negative matrix power failed), ops off
the lists that ember builds on listed ones (``linalg.lu_solve`` was cast by its inner matmuls;
``block_diag`` and ``local_response_norm`` failed on the other 16-bit dtype through their cat,
and local_response_norm of 4-d+ 16-bit inputs is float32 like torch's avg_pool3d), the empty
``linalg.pinv`` (torch's empty product: the region's dtype, and a gradient), the encoder layer's
inference fast path (its residuals added into the region-dtype outputs), half gradients of a
broadcast (a transposed convolution's bias) summed in 16 bits, ``addr`` of bfloat16 with float
alpha/beta returning float32, ``scatter_reduce``/``index_reduce`` amax/amin without self on
bfloat16 starting from -1/1 instead of -inf/inf, SGD on 16-bit parameters (a bfloat16 momentum
buffer with weight decay made float32; torch's alpha rounded to the parameter's dtype and each
update rounded once, now bit-exact), GradScaler (float32 scale arithmetic, a 0-dim half loss
scaled into float32 rather than overflowing, torch's "Attempting to unscale FP16 gradients." and
its errors before the first ``scale()``), ``soft_margin_loss`` computed as torch's
log1p(exp(.)) (inf and a NaN gradient past the dtype's overflow, which float16 reaches at 11),
tensordot's size-1 contracted dims (broadcast, as torch's), and autocast's device strings
('cuda:0', torch's parser errors) and a dtype that is not a dtype (warned, then TypeError)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(37)


def _r(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


def _np(t):
    return t.detach().float().numpy()


# ------------------------------------------------------------ composites of listed matmuls
# (label, fn(m, *tensors), input shapes): torch reaches mm/bmm (the region's dtype) on some,
# mul/sum/dot/a copy (the input's dtype) on the others
COMPOSITES = [
    ("einsum_outer", lambda m, a, b: m.einsum("i,j->ij", a, b), [(3,), (4,)]),
    ("einsum_mul", lambda m, a, b: m.einsum("ij,ij->ij", a, b), [(3, 4), (3, 4)]),
    ("einsum_one", lambda m, a: m.einsum("ij->j", a), [(3, 4)]),
    ("einsum_own_sums", lambda m, a, b: m.einsum("ij,k->ik", a, b), [(3, 4), (5,)]),
    ("einsum_size1", lambda m, a, b: m.einsum("i,i->", a, b), [(1,), (1,)]),
    ("einsum_bcast1", lambda m, a, b: m.einsum("ij,jk->ik", a, b), [(3, 2), (1, 4)]),
    ("einsum_dot", lambda m, a, b: m.einsum("i,i->", a, b), [(3,), (3,)]),
    ("einsum_mm", lambda m, a, b: m.einsum("ij,jk->ik", a, b), [(3, 4), (4, 5)]),
    (
        "einsum_3_mul_then_bmm",
        lambda m, a, b, c: m.einsum("ij,ij,j->i", a, b, c),
        [(3, 4)] * 2 + [(4,)],
    ),
    ("einsum_3_muls", lambda m, a, b, c: m.einsum("i,j,k->ijk", a, b, c), [(2,), (3,), (4,)]),
    (
        "einsum_3_bmm_then_mul",
        lambda m, a, b, c: m.einsum("ij,jk,l->ikl", a, b, c),
        [(2, 3), (3, 4), (2,)],
    ),
    ("tensordot_vectors", lambda m, a, b: m.tensordot(a, b, 1), [(4,), (4,)]),
    ("tensordot_full", lambda m, a, b: m.tensordot(a, b, 2), [(3, 4), (3, 4)]),
    ("tensordot_1x1", lambda m, a, b: m.tensordot(a, b, 1), [(1, 4), (4, 1)]),
    (
        "tensordot_lists",
        lambda m, a, b: m.tensordot(a, b, ([0, 1], [2, 0])),
        [(2, 2, 1), (2, 1, 2)],
    ),
    ("tensordot_mm", lambda m, a, b: m.tensordot(a, b, 1), [(2, 4), (4, 1)]),
    ("tensordot_outer", lambda m, a, b: m.tensordot(a, b, 0), [(4,), (4,)]),
    ("inner_vectors", lambda m, a, b: m.inner(a, b), [(5,), (5,)]),
    ("inner_scalar", lambda m, a, b: m.inner(a, b), [(), (5, 5)]),
    ("inner_mm", lambda m, a, b: m.inner(a, b), [(3, 5), (5,)]),
    ("chain_matmul_one", lambda m, a: m.chain_matmul(a), [(3, 4)]),
    ("chain_matmul_two", lambda m, a, b: m.chain_matmul(a, b), [(3, 4), (4, 2)]),
]
for _n in (0, 1, 2, 3, -1, -2, -3):
    COMPOSITES.append(
        (
            f"matrix_power_{_n}",
            lambda m, a, n=_n: m.linalg.matrix_power(a, n),
            [(3, 3)],
        )
    )


@pytest.mark.filterwarnings("ignore::UserWarning")  # chain_matmul's deprecation
@pytest.mark.parametrize("region", ["bfloat16", "float16"])
@pytest.mark.parametrize("label,fn,shapes", COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_listed_composites_cast_only_where_torch_reaches_a_matmul(label, fn, shapes, region):
    arrays = [_r(*s) for s in shapes]
    if label.startswith("matrix_power"):
        arrays = [arrays[0] * 0.3 + np.eye(3, dtype=np.float32) * 2]
    res = []
    for m in (torch, ember):
        with m.autocast("cpu", dtype=getattr(m, region)):
            res.append(fn(m, *[m.tensor(a) for a in arrays]))
    t, e = res
    assert _name(e.dtype) == _name(t.dtype)
    # torch's float32 result of a bmm then a mul carries the bmm's rounding; ember's does not
    exact = t.dtype == torch.float32 and "bmm_then_mul" not in label
    tol = 1e-5 if exact else 2e-2
    np.testing.assert_allclose(_np(e), _np(t), rtol=tol, atol=tol * np.abs(_np(t)).max())


def test_negative_matrix_power_gradients_under_autocast():
    a = _r(3, 3) * 0.3 + np.eye(3, dtype=np.float32) * 2
    up = _r(3, 3)
    grads = []
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        with m.autocast("cpu"):
            y = m.linalg.matrix_power(x, -2)
        assert _name(y.dtype) == "bfloat16"  # the inverse in float32, then a bfloat16 product
        y.float().backward(m.tensor(up))
        grads.append(x.grad)
    assert grads[1].dtype == ember.float32
    np.testing.assert_allclose(grads[1].numpy(), grads[0].numpy(), rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize(
    "adjoint,left", [(False, True), (True, True), (False, False), (True, False)]
)
def test_linalg_lu_solve_is_not_cast(adjoint, left):
    a = _r(3, 3) + 3 * np.eye(3, dtype=np.float32)
    b = _r(3, 4) if left else _r(4, 3)
    res = []
    for m in (torch, ember):
        lu, piv = m.linalg.lu_factor(m.tensor(a))
        with m.autocast("cpu"):
            res.append(m.linalg.lu_solve(lu, piv, m.tensor(b), adjoint=adjoint, left=left))
    assert res[0].dtype == torch.float32 and res[1].dtype == ember.float32
    np.testing.assert_allclose(res[1].numpy(), res[0].numpy(), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------ half gradients of a broadcast
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_broadcast_gradient_summed_in_float32(dtype):
    # 486 gradients summed into 3: in 16 bits the running sum loses its low bits (10% off)
    g = np.linspace(-1, 1, 2 * 3 * 9 * 9).reshape(2, 3, 9, 9).astype(np.float32)
    grads = []
    for m in (torch, ember):
        dt = getattr(m, dtype)
        x = m.zeros(2, 3, 9, 9, dtype=dt)
        b = m.zeros(3, 1, 1, dtype=dt, requires_grad=True)
        (x + b).backward(m.tensor(g).to(dt))
        grads.append(b.grad)
    assert _name(grads[1].dtype) == dtype
    np.testing.assert_array_equal(_np(grads[1]), _np(grads[0]))


def test_conv_transpose_bias_gradient_under_autocast():
    x = _r(2, 2, 4, 4)
    torch.manual_seed(0)
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    em = ember.nn.ConvTranspose2d(2, 3, 3, stride=2)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    up = np.linspace(-1, 1, 2 * 3 * 9 * 9).reshape(2, 3, 9, 9).astype(np.float32)
    for m, mod in ((torch, tm), (ember, em)):
        with m.autocast("cpu"):
            y = mod(m.tensor(x))
        y.float().backward(m.tensor(up))
    assert em.bias.grad.dtype == ember.float32
    np.testing.assert_allclose(em.bias.grad.numpy(), tm.bias.grad.numpy(), rtol=1e-2)
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=2e-2, atol=2e-2)


# ------------------------------------------------------------ bfloat16 kernels
@pytest.mark.parametrize("beta,alpha", [(0.6, 0.2), (1, 0.2), (0.6, 1)])
def test_addr_bfloat16_with_float_scalars_stays_bfloat16(beta, alpha):
    a, v, w = _r(5, 10), _r(5), _r(10)
    res = [
        m.addr(*(m.tensor(x).to(m.bfloat16) for x in (a, v, w)), beta=beta, alpha=alpha)
        for m in (torch, ember)
    ]
    assert res[1].dtype == ember.bfloat16
    np.testing.assert_allclose(_np(res[1]), _np(res[0]), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_and_index_reduce_without_self(reduce, dtype):
    x, src = _r(6, 3) * 4, -np.abs(_r(4, 3)) * 4 if reduce == "amax" else np.abs(_r(4, 3)) * 4
    idx = np.array([[0, 1, 0], [0, 1, 2], [5, 5, 5], [0, 1, 2]])
    res = []
    for m in (torch, ember):
        dt = getattr(m, dtype)
        xt, st = m.tensor(x).to(dt), m.tensor(src).to(dt)
        res.append(
            (
                xt.scatter_reduce(0, m.tensor(idx), st, reduce, include_self=False),
                xt.index_reduce(0, m.tensor([1, 4, 1, 0]), st, reduce, include_self=False),
            )
        )
    for e, t in zip(res[1], res[0]):
        assert _name(e.dtype) == dtype
        np.testing.assert_array_equal(_np(e), _np(t))


# ------------------------------------------------------------ optimizers on 16-bit parameters
@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"momentum": 0.9, "weight_decay": 0.01},
        {"momentum": 0.9, "weight_decay": 0.01, "nesterov": True},
        {"momentum": 0.9, "dampening": 0.1},
    ],
)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_sgd_on_16_bit_parameters_is_torch_exact(dtype, kw, foreach):
    # torch rounds an add's alpha (lr, weight decay, 1 - dampening, nesterov's momentum; the
    # momentum too in its foreach path) to the parameter's dtype and rounds each update once;
    # the momentum buffer keeps the parameter's dtype. 512 elements: torch's vectorized loop
    # covers them all (its scalar tail rounds an alpha-scaled add differently)
    p0, grads = _r(512), [_r(512) * s for s in (1, 0.5, 2, 0.1)]
    out = []
    for m in (torch, ember):
        p = m.tensor(p0).to(getattr(m, dtype)).requires_grad_()
        opt = m.optim.SGD([p], lr=0.1, foreach=foreach, **kw)
        for g in grads:
            p.grad = m.tensor(g).to(getattr(m, dtype))
            opt.step()
        out.append((p, opt.state[p].get("momentum_buffer")))
    (tp, tb), (ep, eb) = out
    assert _name(ep.dtype) == dtype
    np.testing.assert_array_equal(_np(ep), _np(tp))
    if tb is not None:
        assert _name(eb.dtype) == _name(tb.dtype) == dtype
        np.testing.assert_array_equal(_np(eb), _np(tb))


# ------------------------------------------------------------ GradScaler
def test_grad_scaler_refuses_fp16_gradients():
    errs = []
    for m in (torch, ember):
        p = m.ones(2, dtype=m.float16, requires_grad=True)
        q = m.ones(2, requires_grad=True)
        opt = m.optim.SGD([q, p], lr=0.1)
        sc = m.amp.GradScaler("cpu", init_scale=4.0)
        sc.scale((p.float() * 3).sum() + q.sum()).backward()
        with pytest.raises(ValueError) as e:
            sc.unscale_(opt)
        errs.append(str(e.value))
        assert q.grad.tolist() == [4.0, 4.0]  # nothing unscaled before the error
    assert errs[0] == errs[1] == "Attempting to unscale FP16 gradients."
    for m in (torch, ember):  # bfloat16 gradients are unscaled
        p = m.ones(2, dtype=m.bfloat16, requires_grad=True)
        opt = m.optim.SGD([p], lr=0.5)
        sc = m.amp.GradScaler("cpu", init_scale=4.0)
        sc.scale((p * 3).sum()).backward()
        sc.step(opt)
        assert p.float().tolist() == [-0.5, -0.5]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int64"])
def test_grad_scaler_scales_by_a_float32_tensor(dtype):
    for shape in ((), (2,)):
        res = []
        for m in (torch, ember):
            sc = m.amp.GradScaler("cpu", init_scale=0.1 if dtype != "float16" else 2.0**16)
            out = sc.scale(m.full(shape, 3, dtype=getattr(m, dtype)))
            res.append((_name(out.dtype), tuple(out.shape), out.double().tolist()))
        assert res[1] == res[0]
    # a 0-dim float16 loss of 3 times 65536: float32 in torch, never inf
    assert res[0][2] != float("inf")


def test_grad_scaler_scale_arithmetic_in_float32():
    res = []
    for m in (torch, ember):
        p = m.ones(2, requires_grad=True)
        opt = m.optim.SGD([p], lr=0.1)
        sc = m.amp.GradScaler(
            "cpu", init_scale=256.0, backoff_factor=0.3, growth_factor=1.7, growth_interval=1
        )
        seen = []
        for bad in (True, False, False, True):
            sc.scale(m.tensor(1.0))
            p.grad = m.tensor([float("inf") if bad else 1.0, 1.0])
            sc.step(opt)
            sc.update()
            seen.append(sc.get_scale())
        sc.update(0.1)
        seen.append(sc.get_scale())
        res.append((seen, sc.state_dict()))
    assert res[1] == res[0]
    assert res[0][0][0] == float(np.float32(76.8))


def test_grad_scaler_before_the_first_scale():
    for m in (torch, ember):
        p = m.ones(2, requires_grad=True)
        opt = m.optim.SGD([p], lr=0.1)
        sc = m.amp.GradScaler("cpu", init_scale=8.0)
        assert sc.get_scale() == 8.0
        assert sc.state_dict()["scale"] == 8.0 and sc.state_dict()["_growth_tracker"] == 0
        for name, call, args in (
            ("step", sc.step, (opt,)),
            ("update", sc.update, ()),
            ("unscale_", sc.unscale_, (opt,)),
        ):
            with pytest.raises(AssertionError) as e:
                call(*args)
            assert str(e.value) == (
                f"Attempted {name} but _scale is None.  This may indicate your script did not "
                "use scaler.scale(loss or outputs) earlier in the iteration."
            )
        sc.load_state_dict({**sc.state_dict(), "scale": 32.0})
        assert sc.scale(m.tensor(1.0)).item() == 32.0


# ------------------------------------------------------------ soft_margin_loss overflow
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_soft_margin_loss_overflows_like_torch(dtype):
    x = np.array([-100.0, -30.0, -12.0, 0.5, 3.0, 90.0], np.float32)
    y = np.array([1.0, 1.0, 1.0, -1.0, 1.0, -1.0], np.float32)
    up = np.array([0.5, -1.0, 2.0, 1.5, -0.5, 1.0], np.float32)
    res = []
    for m in (torch, ember):
        dt = getattr(m, dtype)
        xi = m.tensor(x).to(dt).requires_grad_()
        loss = m.nn.functional.soft_margin_loss(xi, m.tensor(y).to(dt), reduction="none")
        loss.backward(m.tensor(up).to(dt))
        res.append((loss, xi.grad))
        assert loss.grad_fn.name() == "SoftMarginLossBackward0"
    for e, t in zip(res[1], res[0]):
        assert _name(e.dtype) == dtype
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-2, atol=1e-6)


# ------------------------------------------------------------ autocast device strings
@pytest.mark.filterwarnings("ignore::UserWarning")  # cuda without a GPU: autocast disabled
@pytest.mark.parametrize("device", ["cpu", "cuda:0", "cpu:0", "meta", "fpga", "xyz", "CPU"])
def test_autocast_device_strings_like_torch(device):
    res = []
    for m in (torch, ember):
        try:
            with m.autocast(device):
                region = "ok"
        except RuntimeError as e:
            region = str(e)
        try:
            available = m.amp.is_autocast_available(device)
        except RuntimeError as e:
            available = str(e)
        res.append((region, available))
    assert res[1] == res[0]


# ------------------------------------------------------------ linalg.pinv of an empty matrix
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)])
def test_pinv_of_empty_matrices(shape, hermitian):
    for m in (torch, ember):
        x = m.zeros(shape, requires_grad=True)
        with m.autocast("cpu"):
            r = m.linalg.pinv(x, hermitian=hermitian)
        assert _name(r.dtype) == "bfloat16"  # torch's empty product is a listed matmul
        y = m.linalg.pinv(x, hermitian=hermitian)
        assert y.dtype == m.float32 and tuple(y.shape) == shape
        assert y.grad_fn.name() == "LinalgPinvBackward0"
        y.sum().backward()
        assert tuple(x.grad.shape) == shape


# ------------------------------------------------------------ tensordot: size-1 contracted dims
@pytest.mark.parametrize(
    "sa,sb,dims",
    [
        ((1, 1, 1), (2, 1, 2), ([0, 1], [2, 0])),
        ((1, 3), (2, 3), ([0], [0])),
        ((2, 3), (1, 3), ([0], [0])),
        ((2, 1, 4), (3, 5, 4), ([1, 2], [0, 2])),
    ],
)
def test_tensordot_broadcasts_size_one_contracted_dims(sa, sb, dims):
    a0, b0 = _r(*sa), _r(*sb)
    res = []
    for m in (torch, ember):
        a, b = m.tensor(a0, requires_grad=True), m.tensor(b0, requires_grad=True)
        y = m.tensordot(a, b, dims)
        up = np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(np.float32)
        y.backward(m.tensor(up))
        res.append((y.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for e, t in zip(res[1], res[0]):
        assert e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)
    errs = []
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as e:
            m.tensordot(m.ones(2, 3), m.ones(3, 3), ([0], [0]))
        errs.append(str(e.value))
    assert errs[0] == errs[1]


def test_autocast_dtype_that_is_not_a_dtype():
    res = []
    for m in (torch, ember):
        with pytest.warns(UserWarning) as w:
            ctx = m.autocast("cpu", dtype="bfloat16")  # warned, disabled: not a supported dtype
        with pytest.raises(TypeError) as e:
            ctx.__enter__()
        with pytest.raises(TypeError) as e2:
            m.set_autocast_dtype("cpu", 3)
        res.append((str(w[0].message), str(e.value), str(e2.value)))
        m.set_autocast_enabled("cpu", False)
        assert m.get_autocast_dtype("cpu") == m.bfloat16
    assert res[1] == res[0]


# ------------------------------------------------------------ the encoder layer's fused path
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize(
    "grad,train,batch_first",
    [(False, False, True), (True, False, True), (False, True, True), (False, False, False)],
)
@pytest.mark.parametrize("region", ["bfloat16", "float16"])
def test_encoder_layer_inference_under_autocast(region, grad, train, batch_first, norm_first):
    # torch's inference fast path (eval, no grad, batch_first) adds the residuals into the
    # attention's and feed-forward's outputs: the layer's result has the region's dtype there
    x = _r(2, 3, 8)
    torch.manual_seed(0)
    kw = {"batch_first": batch_first, "dropout": 0.0, "norm_first": norm_first}
    tm = torch.nn.TransformerEncoderLayer(8, 2, 16, **kw).train(train)
    em = ember.nn.TransformerEncoderLayer(8, 2, 16, **kw).train(train)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    res = []
    for m, mod in ((torch, tm), (ember, em)):
        with m.set_grad_enabled(grad), m.autocast("cpu", dtype=getattr(m, region)):
            res.append(mod(m.tensor(x)))
    assert _name(res[1].dtype) == _name(res[0].dtype)
    if not grad and not train and batch_first:
        assert _name(res[1].dtype) == region
    np.testing.assert_allclose(_np(res[1]), _np(res[0]), rtol=5e-2, atol=5e-2)


# ------------------------------------------------------------ composites built on cat
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(1, 6, 3), (1, 6, 3, 3), (1, 6, 2, 2, 2)])
def test_local_response_norm_under_autocast(shape, dtype):
    # torch pools the squares with avg_pool2d (3-d: unlisted) or avg_pool3d (listed float32,
    # which also spares 16-bit inputs its missing kernel); ember's cat must not cast either
    x = _r(*shape)
    res = []
    for m in (torch, ember):
        xi = m.tensor(x).to(getattr(m, dtype)).requires_grad_()
        with m.autocast("cpu"):
            y = m.nn.functional.local_response_norm(xi, 3)
        y.float().backward(m.tensor(np.linspace(-1, 1, y.numel()).reshape(shape)))
        res.append((y, xi.grad))
    for e, t in zip(res[1], res[0]):
        assert _name(e.dtype) == _name(t.dtype)
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_block_diag_of_other_half_dtype_under_autocast(dtype):
    a, b = _r(2, 3), _r(1, 2)
    res = []
    for m in (torch, ember):
        with m.autocast("cpu", dtype=m.float16 if dtype == "bfloat16" else m.bfloat16):
            res.append(m.block_diag(*(m.tensor(v).to(getattr(m, dtype)) for v in (a, b))))
    assert _name(res[1].dtype) == _name(res[0].dtype) == dtype
    np.testing.assert_array_equal(_np(res[1]), _np(res[0]))
