"""Parity regressions found by the fourth wave (numerics-heavy user code; torch is the oracle):
pinv's rcond overload, the nuclear norm in torch.norm, half-precision norm/softmax accumulating in
float32, torch.tensor wrapping negative ints into unsigned dtypes, lgamma(-inf), argmax of bool,
mean's dtype check, warnings on empty std/var, and the order of solve/mv error checks."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, run_case, run_gradcheck, torch


def _outcome(fn, m):
    """('ok', value) or (exception type name, message) of fn(m)."""
    try:
        return "ok", fn(m)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)


def _flat(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _same(fn, rtol=1e-6, atol=1e-7) -> None:
    """fn(ember) and fn(torch) agree: values, dtypes and shapes, or error type and message."""
    (ek, ev), (tk, tv) = _outcome(fn, ember), _outcome(fn, torch)
    assert ek == tk, (ek, ev, tk, tv)
    if ek != "ok":
        assert ev == tv
        return
    for e, t in zip(_flat(ev), _flat(tv), strict=True):
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(
            e.detach().double().numpy() if e.dtype.is_floating_point else e.numpy(),
            t.detach().float().numpy().astype(np.float64)
            if t.dtype.is_floating_point
            else t.numpy(),
            rtol=rtol,
            atol=atol,
        )


# ---------------------------------------------------------------------- pinv / pinverse rcond
_NEAR_SING = [[1.0, 0.0, 0.5], [0.0, 1e-3, 0.0], [0.5, 0.0, 1.0]]
PINV = {
    "rcond_pos": lambda m: m.linalg.pinv(m.tensor(_NEAR_SING), 0.01),
    "rcond_kw": lambda m: m.linalg.pinv(m.tensor(_NEAR_SING), rcond=0.01),
    "rcond_kw_small": lambda m: m.linalg.pinv(m.tensor(_NEAR_SING), rcond=1e-6),
    "rcond_tensor": lambda m: m.linalg.pinv(m.tensor(_NEAR_SING), rcond=m.tensor(0.01)),
    "rcond_hermitian_pos": lambda m: m.linalg.pinv(m.tensor(_NEAR_SING), 0.01, True),
    "rtol_batch_tensor": lambda m: m.linalg.pinv(
        m.tensor([_NEAR_SING, _NEAR_SING]), rtol=m.tensor([0.01, 1e-6])
    ),
    "atol_batch_tensor": lambda m: m.linalg.pinv(
        m.tensor([_NEAR_SING, _NEAR_SING]), atol=m.tensor([0.01, 1e-6])
    ),
    "pinverse_pos": lambda m: m.pinverse(m.tensor(_NEAR_SING), 0.01),
    "rcond_and_rtol": lambda m: m.linalg.pinv(m.eye(2), rcond=0.1, rtol=0.1),
    "rcond_and_atol": lambda m: m.linalg.pinv(m.eye(2), rcond=0.1, atol=0.1),
}


@needs_torch
@pytest.mark.parametrize("key", list(PINV))
def test_pinv_rcond(key):
    _same(PINV[key], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------- nuclear norm
def _nuc_in(m):
    return m.tensor([[[1.0, 2.0, 0.0], [3.0, 4.0, 1.0]], [[0.5, -1.0, 2.0], [1.0, 1.0, 1.0]]])


NUC = {
    "2d": lambda m: m.norm(_nuc_in(m)[0], p="nuc"),
    "method": lambda m: _nuc_in(m)[1].norm("nuc"),
    "dims": lambda m: m.norm(_nuc_in(m), p="nuc", dim=(1, 2)),
    "dims_rev_keep": lambda m: m.norm(_nuc_in(m), p="nuc", dim=(2, 0), keepdim=True),
    "dtype": lambda m: m.norm(_nuc_in(m)[0], p="nuc", dtype=m.float64),
    "err_3d_nodim": lambda m: m.norm(_nuc_in(m), p="nuc"),
    "err_1dim": lambda m: m.norm(_nuc_in(m), p="nuc", dim=1),
    "err_1d": lambda m: m.norm(m.ones(3), p="nuc"),
    "err_same_dims": lambda m: m.norm(m.ones(2, 2), p="nuc", dim=(0, -2)),
    "err_int": lambda m: m.norm(m.ones(2, 2, dtype=m.long), p="nuc"),
    "err_bad_order": lambda m: m.norm(m.ones(2, 2), p="bad"),
}


@needs_torch
@pytest.mark.parametrize("key", list(NUC))
def test_norm_nuclear(key):
    _same(NUC[key], rtol=1e-5, atol=1e-6)


NUC_CASES = [
    Case("norm_nuc_dims", lambda m, x: m.norm(x, p="nuc", dim=(0, 2)), [A(3, 2, 4)]),
    Case("norm_nuc_keep", lambda m, x: m.norm(x, p="nuc", dim=(1, 0), keepdim=True), [A(3, 4)]),
]


@needs_torch
@pytest.mark.parametrize("case", NUC_CASES, ids=str)
def test_norm_nuclear_grad(case):
    run_case(case)


@pytest.mark.parametrize("case", NUC_CASES, ids=str)
def test_norm_nuclear_gradcheck(case):
    run_gradcheck(case, gradgrad=False)


# ---------------------------------------------------------------------- half precision accumulates in fp32
HALF = {
    "norm_f16": lambda m: m.full((10,), 100.0, dtype=m.float16).norm(),
    "norm_bf16_p3": lambda m: m.full((10,), 100.0, dtype=m.bfloat16).norm(p=3, dim=0),
    "softmax_f16": lambda m: m.tensor([10.0, 11.0, 9.5], dtype=m.float16).softmax(0),
    "softmax_f16_0d": lambda m: m.tensor(3.0, dtype=m.float16).softmax(0),
    "softmax_bf16": lambda m: m.tensor([[10.0, 11.0], [1.0, -3.0]], dtype=m.bfloat16).softmax(1),
    "log_softmax_f16": lambda m: m.tensor([10.0, 11.0, 9.5], dtype=m.float16).log_softmax(0),
    "softmax_to_f16": lambda m: m.tensor([10.0, 11.0]).softmax(0, dtype=m.float16),
}


@needs_torch
@pytest.mark.parametrize("key", list(HALF))
def test_half_precision_accumulation(key):
    _same(HALF[key], rtol=0, atol=0)


def test_half_softmax_grad_dtype():
    x = ember.tensor([1.0, 2.0, 0.5], dtype=ember.float16, requires_grad=True)
    x.softmax(0)[0].backward()
    assert x.grad.dtype == ember.float16


# ---------------------------------------------------------------------- creation / special / reductions
MISC = {
    "tensor_u8_neg1": lambda m: m.tensor([-1, 3], dtype=m.uint8),
    "tensor_u8_neg129": lambda m: m.tensor([-129], dtype=m.uint8),
    "tensor_u8_neg255": lambda m: m.tensor([-255], dtype=m.uint8),
    "tensor_u8_scalar": lambda m: m.tensor(-1, dtype=m.uint8),
    "tensor_u8_neg256": lambda m: m.tensor([-256], dtype=m.uint8),
    "tensor_u8_negfloat": lambda m: m.tensor([-1.5], dtype=m.uint8),
    "tensor_i8_over": lambda m: m.tensor([300], dtype=m.int8),
    "tensor_i8_neg129": lambda m: m.tensor([-129], dtype=m.int8),
    "lgamma_inf": lambda m: m.lgamma(m.tensor([-float("inf"), float("inf"), -3.0, 0.5])),
    "lgamma_inf_f16": lambda m: m.lgamma(m.tensor([-float("inf")], dtype=m.float16)),
    "special_gammaln_inf": lambda m: m.special.gammaln(m.tensor([-float("inf"), 2.5])),
    "argmax_bool": lambda m: m.tensor([False, True]).argmax(),
    "argmin_bool_dim": lambda m: m.tensor([[False, True]]).argmin(1),
    "argmax_complex": lambda m: m.tensor([1 + 1j]).argmax(),
    "max_bool_dim_ok": lambda m: m.tensor([False, True]).max(0),
    "mean_int_dtype": lambda m: m.tensor([1, 2]).mean(dtype=m.int64),
    "mean_float_dtype_int": lambda m: m.tensor([1.0, 2.0]).mean(dtype=m.int32),
    "mean_int_f64": lambda m: m.tensor([1, 2]).mean(dtype=m.float64),
    "solve_dtype_before_shape": lambda m: m.linalg.solve(m.ones(3, 3, dtype=m.float64), m.ones(2)),
    "solve_shape": lambda m: m.linalg.solve(m.eye(3), m.ones(2)),
    "mv_size_before_dtype": lambda m: m.ones(3, 3, dtype=m.float64) @ m.ones(2),
    "mv_dtype": lambda m: m.ones(3, 3, dtype=m.float64) @ m.ones(3),
    "dot_bool": lambda m: m.dot(m.tensor([True, False]), m.tensor([True, True])),
    "vdot_bool": lambda m: m.vdot(m.tensor([True, False]), m.tensor([True, True])),
    "matmul_1d_bool": lambda m: m.tensor([True, False]) @ m.tensor([True, True]),
    "median_bool": lambda m: m.tensor([True, False, True]).median(),
    "median_bool_dim": lambda m: m.tensor([[True, False, True]]).median(1),
    "nanmedian_bool": lambda m: m.tensor([True, False]).nanmedian(),
    "lstsq_int": lambda m: m.linalg.lstsq(m.ones(3, 2, dtype=m.long), m.ones(3, 1, dtype=m.long)),
    "lstsq_half": lambda m: m.linalg.lstsq(
        m.ones(3, 2, dtype=m.float16), m.ones(3, 1, dtype=m.float16)
    ),
    "eigh_int": lambda m: m.linalg.eigh(m.ones(2, 2, dtype=m.long)),
    "eigvalsh_half": lambda m: m.linalg.eigvalsh(m.ones(2, 2, dtype=m.float16)),
    "eigh_bf16": lambda m: m.linalg.eigh(m.ones(2, 2, dtype=m.bfloat16)),
    "eigh_nonsquare_int": lambda m: m.linalg.eigh(m.ones(2, 3, dtype=m.long)),
    "lu_nopivot": lambda m: m.linalg.lu(m.eye(2), pivot=False),
    "lu_factor_singular": lambda m: m.linalg.lu_factor(m.tensor([[1.0, 2.0], [2.0, 4.0]])),
    "cond_p1_nonsquare": lambda m: m.linalg.cond(m.ones(4, 2), 1),
    "cond_fro_nonsquare": lambda m: m.linalg.cond(m.ones(4, 2), "fro"),
    "cond_fro_1d": lambda m: m.linalg.cond(m.ones(4), "fro"),
    "addcmul_bool": lambda m: m.addcmul(
        m.tensor([True, False]), m.tensor([True, True]), m.tensor([True, False])
    ),
    "addcmul_bool_int": lambda m: m.addcmul(
        m.tensor([True, False]), m.tensor([1, 2]), m.tensor([True, False])
    ),
    "cross_bool": lambda m: m.tensor([True, False, True]).cross(
        m.tensor([True, True, False]), dim=0
    ),
    "cond_inf": lambda m: m.linalg.cond(m.tensor([[2.0, 1.0], [1.0, 3.0]]), float("inf")),
}


@needs_torch
@pytest.mark.parametrize("key", list(MISC))
def test_misc_parity(key):
    _same(MISC[key])


@pytest.mark.parametrize(
    "fn",
    [
        lambda: ember.zeros(2, 0).std(1),
        lambda: ember.zeros(2, 0).var(1, correction=0),
        lambda: ember.var_mean(ember.zeros(0, 3), 0),
    ],
)
def test_empty_var_no_numpy_warning(fn):
    """torch warns about degrees of freedom only; numpy's 'Mean of empty slice' must not leak."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    r = r[0] if isinstance(r, tuple) else r
    assert np.isnan(r.numpy()).all()
    assert not [x for x in w if issubclass(x.category, RuntimeWarning)], [str(x) for x in w]


# ---------------------------------------------------------------------- complex gradients
def _cinputs(m, shapes, cplx):
    out = []
    for k, s in enumerate(shapes):
        n = int(np.prod(s))
        re = (m.arange(n, dtype=m.float64) * 1.37 + k).sin().view(*s) * 1.5
        im = (m.arange(n, dtype=m.float64) * 0.71 + 2 * k).cos().view(*s)
        out.append((m.complex(re, im) if cplx else re).requires_grad_())
    return out


CGRAD = {  # name: (fn, shapes, complex inputs); the loss is sum |out|^2 (conjugate Wirtinger)
    "pow_scalar": (lambda m, a: a**3, [(3,)], True),
    "pow_complex_scalar": (lambda m, a: a ** (0.5 + 1j), [(3,)], True),
    "rpow_complex": (lambda m, a: (1.5 + 0.5j) ** a, [(3,)], True),
    "pow_tensor_tensor": (lambda m, a, b: a**b, [(3,), (3,)], True),
    "complex_then_pow": (lambda m, a, b: m.complex(a, b) ** 2, [(3,), (3,)], False),
    "view_as_complex_pow": (lambda m, a: m.view_as_complex(a) ** 2, [(3, 2)], False),
    "prod": (lambda m, a: a.prod(), [(3,)], True),
    "prod_dim": (lambda m, a: a.prod(1), [(2, 3)], True),
    "prod_with_zero": (lambda m, a: (a * m.tensor([1.0, 0.0, 1.0])).prod(), [(3,)], True),
    "cumprod": (lambda m, a: a.cumprod(0), [(3,)], True),
    "cumprod_with_zero": (lambda m, a: (a * m.tensor([1.0, 0.0, 1.0])).cumprod(0), [(3,)], True),
    "addcmul": (lambda m, a, b: m.addcmul(a, a, b, value=0.5), [(3,), (3,)], True),
    "addcdiv": (lambda m, a, b: m.addcdiv(a, a, b, value=0.5), [(3,), (3,)], True),
    "logsumexp": (lambda m, a: m.logsumexp(a, 0), [(3,)], True),
    "vector_norm_p3": (lambda m, a: m.linalg.vector_norm(a, 3), [(3,)], True),
    "vector_norm_p05": (lambda m, a: m.linalg.vector_norm(a, 0.5), [(3,)], True),
    "norm_p3_dim": (lambda m, a: a.norm(p=3, dim=1), [(2, 3)], True),
}


@needs_torch
@pytest.mark.parametrize("key", list(CGRAD))
def test_complex_gradients(key):
    fn, shapes, cplx = CGRAD[key]
    res = []
    for m in (ember, torch):
        ins = _cinputs(m, shapes, cplx)
        out = fn(m, *ins)
        loss = (out.abs() ** 2).sum()
        grads = m.autograd.grad(loss, ins)
        res.append([out.detach().numpy()] + [g.detach().numpy() for g in grads])
    for e, t in zip(*res, strict=True):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------- torch's once-per-process warnings
def _warns_once(fn, key_reset, match):
    key_reset()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn(ember)
        fn(ember)
    msgs = [str(x.message) for x in w if issubclass(x.category, UserWarning)]
    assert len(msgs) == 1 and msgs[0].startswith(match), msgs
    if torch is not None:  # the oracle says the same (its text adds a "Triggered internally" note)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fn(torch)
        tmsgs = [str(x.message) for x in w]
        assert not tmsgs or tmsgs[0].startswith(msgs[0]), (tmsgs, msgs)


def test_deprecation_warnings_once():
    from ember.core import runtime

    once = runtime._WARNED_ONCE
    _warns_once(
        lambda m: m.cholesky(m.eye(2)), lambda: once.discard("cholesky"), "torch.cholesky is"
    )
    _warns_once(
        lambda m: m.triangular_solve(m.ones(2, 1), m.eye(2)),
        lambda: once.discard("triangular_solve"),
        "torch.triangular_solve is deprecated",
    )
    _warns_once(lambda m: m.lu(m.eye(2)), lambda: once.discard("lu"), "torch.lu is")
    _warns_once(
        lambda m: m.stft(m.ones(16), 4, return_complex=True),
        lambda: runtime._WARNED_ONCE.discard("stft_window"),
        "A window was not provided",
    )


def test_complex_to_real_warns_at_user_line():
    c = ember.tensor([1 + 1j])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a = c.float()  # the warning points here, not into ember
        b = c.to(ember.float64)
        z = ember.zeros(1).copy_(c)  # torch's warning, not numpy's ComplexWarning
    assert {str(x.message) for x in w} == {
        "Casting complex values to real discards the imaginary part"
    }
    assert all(x.category is UserWarning and x.filename == __file__ for x in w), w
    assert a.tolist() == b.tolist() == z.tolist() == [1.0]


def test_copy_complex_into_bool_and_real():
    # torch's values, written out: running torch's complex -> real copy here would spend its
    # once-per-process warning, which tests/test_tensor.py expects to see later
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.zeros(2, dtype=ember.bool).copy_(ember.tensor([1j, 0j])).tolist() == [
            True,
            False,
        ]
        assert ember.zeros(2).copy_(ember.tensor([1 + 2j, -3j])).tolist() == [1.0, 0.0]


# ---------------------------------------------------------------------- linspace, bit for bit
LINSPACE = [(-1, 1, 7), (0, 1, 11), (0.1, 2.7, 13), (-3.3, 5.1, 100), (0, 10, 4), (1e-3, 1, 33),
            (-1, 1, 1000), (2, -7.5, 9), (-5, 5, 21), (0.3, 1e5, 777), (1, 1, 3), (0, 1, 2)]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_bitwise(dtype):
    for a, b, n in LINSPACE:
        e = ember.linspace(a, b, n, dtype=getattr(ember, dtype)).numpy()
        t = torch.linspace(a, b, n, dtype=getattr(torch, dtype)).numpy()
        np.testing.assert_array_equal(e, t, err_msg=str((a, b, n)))


# ---------------------------------------------------------------------- half types: fused ops round once
def _hx(m, dt, *shape, k=0):
    n = int(np.prod(shape))
    data = (np.sin(np.arange(n) * 0.37 - 3 + k) * 50).astype(np.float32)  # same bits in both
    return m.tensor(data).view(*shape).to(dt)


FUSED_HALF = {
    "addmm": lambda m, d: m.addmm(_hx(m, d, 4, 4, k=1), _hx(m, d, 4, 6), _hx(m, d, 6, 4, k=2)),
    "addmm_beta_alpha": lambda m, d: m.addmm(
        _hx(m, d, 4), _hx(m, d, 4, 6), _hx(m, d, 6, 4, k=2), beta=0.5, alpha=0.25
    ),
    "linear_bias": lambda m, d: m.nn.functional.linear(
        _hx(m, d, 4, 6), _hx(m, d, 3, 6, k=1), _hx(m, d, 3, k=2)
    ),
    "addmv": lambda m, d: m.addmv(_hx(m, d, 4, k=1), _hx(m, d, 4, 6), _hx(m, d, 6, k=2)),
    "baddbmm": lambda m, d: m.baddbmm(
        _hx(m, d, 2, 2, 2), _hx(m, d, 2, 2, 6, k=1), _hx(m, d, 2, 6, 2, k=2), beta=0.5, alpha=0.5
    ),
    "addbmm": lambda m, d: m.addbmm(_hx(m, d, 2, 2), _hx(m, d, 3, 2, 6, k=1), _hx(m, d, 3, 6, 2)),
    "addcmul": lambda m, d: m.addcmul(
        _hx(m, d, 4, 6), _hx(m, d, 4, 6, k=1), _hx(m, d, 6), value=0.1
    ),
    "addcdiv": lambda m, d: m.addcdiv(
        _hx(m, d, 4, 6), _hx(m, d, 4, 6, k=1), _hx(m, d, 6), value=0.1
    ),
    "addcmul_inplace": lambda m, d: _hx(m, d, 6).addcmul_(_hx(m, d, 6, k=1), _hx(m, d, 6, k=2)),
    "nanmean": lambda m, d: _hx(m, d, 4, 6).nanmean(1),
    "nanmean_all": lambda m, d: _hx(m, d, 4, 6).nanmean(),
    "mm_plain": lambda m, d: _hx(m, d, 4, 6) @ _hx(m, d, 6, 3),
}


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("key", list(FUSED_HALF))
def test_half_fused_ops_round_once(key, dtype):
    _same(lambda m: FUSED_HALF[key](m, getattr(m, dtype)), rtol=0, atol=0)


def test_addmm_half_grad_dtype():
    x = _hx(ember, ember.float16, 4, 6).requires_grad_()
    w = _hx(ember, ember.float16, 3, 6, k=1).requires_grad_()
    ember.nn.functional.linear(x, w, _hx(ember, ember.float16, 3)).sum().backward()
    assert x.grad.dtype == w.grad.dtype == ember.float16


@needs_torch
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("dim", [0, 1])
def test_logcumsumexp_complex(dtype, dim):
    v = [[1 + 1j, 2j, -3 + 0.5j, 50 + 1j], [0.5, -1j, 2 + 2j, -50j]]
    _same(lambda m: m.tensor(v, dtype=getattr(m, dtype)).logcumsumexp(dim), rtol=1e-5, atol=1e-5)


COMPLEX_MISC = {
    "complex_mixed_dtypes": lambda m: m.complex(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
    "complex_mixed_rev": lambda m: m.complex(m.tensor([1.0], dtype=m.float64), m.tensor([1.0])),
    "complex_int_float": lambda m: m.complex(m.tensor([1]), m.tensor([1.0])),
    "complex_bcast": lambda m: m.complex(m.tensor([1.0, 2.0]), m.tensor(3.0)),
    "polar_mixed": lambda m: m.polar(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
    "polar_f64": lambda m: m.polar(
        m.tensor([1.0, 2.0], dtype=m.float64), m.tensor([0.0, 1.0], dtype=m.float64)
    ),
    "pow_half_complex": lambda m: m.tensor([-4 + 0j, 3 + 4j, -1j]) ** 0.5,
    "reciprocal_complex_zero": lambda m: m.tensor(
        [0j, 1 + 1j, complex(float("inf"), 0)]
    ).reciprocal(),
    "rsqrt_complex_zero": lambda m: m.tensor([0j, 1 + 1j, -4 + 0j]).rsqrt(),
}


@needs_torch
@pytest.mark.parametrize("key", list(COMPLEX_MISC))
def test_complex_misc(key):
    _same(COMPLEX_MISC[key], rtol=0, atol=1e-7)


# ---------------------------------------------------------------------- float32 scans accumulate in double
@needs_torch
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.cumsum(0),
        lambda m, x: x.view(-1)[:99999].view(33333, 3).cumsum(1),
        lambda m, x: x.view(-1)[:99999].view(33333, 3).cumsum(0),
        lambda m, x: (x[:60] * 0 + 1.0001).cumprod(0),
        lambda m, x: m.complex(x, x.flip(0)).cumsum(0),
        lambda m, x: m.full((100000,), 0.1).cumsum(0)[-1:],
    ],
)
def test_float32_scans_match_torch_bitwise(fn):
    data = (np.sin(np.arange(100003) * 0.001) + 0.1).astype(np.float32)  # the same bits in both

    def run(m):
        return fn(m, m.tensor(data))

    e, t = run(ember), run(torch)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@needs_torch
def test_float32_cumsum_backward_matches_torch():
    res = []
    for m in (ember, torch):
        x = m.full((50000,), 0.1, requires_grad=True)
        (x.cumsum(0) * m.full((50000,), 0.3)).sum().backward()
        res.append(x.grad.numpy())
    np.testing.assert_array_equal(*res)


@needs_torch
@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_reduce_takes_max_and_min_like_torch(reduce):
    outs = []
    for m in (ember, torch):
        x = m.tensor([0.5, 3.0, 1.0])
        src = m.tensor([1.0, 5.0, 2.0, 7.0])
        outs.append(x.scatter_reduce(0, m.tensor([0, 0, 1, 2]), src, reduce=reduce).tolist())
    assert outs[0] == outs[1]
