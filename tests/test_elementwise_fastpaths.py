"""Host fast paths against torch: float32 <-> float16 casts (bit-exact), erf, gelu, silu,
hardswish/hardsigmoid, kthvalue/median/nanmedian indices, adaptive max pooling indices.

Every fast path runs only above a size threshold (or for some inputs), so the inputs here are
large enough to take it, and the special values (NaN, inf, ties, signed zeros, subnormals,
overflow) sit inside such arrays.
"""

from __future__ import annotations

import ember
import ember.nn.functional as EF
import numpy as np
import pytest
from ember.core.ops import activation as _act
from ember.core.ops import conversion as _conv
from ember.core.ops import pointwise as _pw
from ember.core.ops import pooling as _pool
from ember.core.ops.sorting import _kth_idx
from harness import A, Case, needs_torch, run_case, run_gradcheck, torch, values_only

if torch is not None:
    import torch.nn.functional as TF

BIG = (96, 128)  # 12288 elements: above every size threshold of these paths


def _bits_f32(u32) -> np.ndarray:
    return np.asarray(u32, np.uint32).view(np.float32)


def _special_f32() -> np.ndarray:
    """float32 bit patterns of every class that matters to a half conversion, tiled past the
    fast path's threshold, with random normals between them."""
    pats = [
        0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000,  # zeros, float32 subnormals
        0x33000000, 0x33000001, 0xB3000000, 0x337FFFFF, 0x33800000,  # around half's 2^-25 / 2^-24
        0x387FC000, 0x387FE000, 0x387FF000, 0x38800000, 0xB87FF000,  # half subnormal/normal edge
        0x3F801000, 0x3F803000, 0x3F800FFF, 0x3F801001, 0xBF803000,  # ties to even at 1.0
        0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000, 0xC77FF000,  # 65504, 65520 -> inf
        0x4F000000, 0x7F7FFFFF, 0x7F800000, 0xFF800000,  # large, max, +-inf
        0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000, 0x7FC01234, 0xFFE12345,  # NaNs
    ]  # fmt: skip
    r = np.random.default_rng(0)
    x = r.standard_normal(12000).astype(np.float32) * np.float32(2.0) ** r.integers(-30, 20, 12000)
    x = x.astype(np.float32)
    x[:: 12000 // len(pats)][: len(pats)] = _bits_f32(pats)
    return x


# ---------------------------------------------------------------------- half casts
@needs_torch
def test_float_to_half_bit_exact_all_classes():
    x = _special_f32()
    e = ember.tensor(x).half()
    assert e.dtype is ember.float16
    t = torch.from_numpy(x).half()
    np.testing.assert_array_equal(e.numpy().view(np.uint16), t.numpy().view(np.uint16))


@needs_torch
def test_float_to_half_fast_path_without_specials():
    # the same values without inf/NaN/|x| >= 2^16 take the fast (non-clamping) path
    x = _special_f32()
    x = x[np.isfinite(x) & (np.abs(x) < 65536)]
    x = np.concatenate([x, x])
    assert x.size >= _conv._BITS_MIN
    assert np.abs(x).max() < 65536
    e = _conv._f32_to_f16(x)
    t = torch.from_numpy(x).half().numpy()
    np.testing.assert_array_equal(e.view(np.uint16), t.view(np.uint16))


@needs_torch
def test_float_to_half_every_rounding_boundary_of_one_binade():
    # all 2^23 mantissas of [1, 2) and of the subnormal halves' range [2^-20, 2^-19)
    m = np.arange(1 << 23, dtype=np.uint32)
    for exp in (127, 107):
        x = _bits_f32((exp << 23) | m)
        e = _conv._f32_to_f16(x)
        t = torch.from_numpy(x).half().numpy()
        np.testing.assert_array_equal(e.view(np.uint16), t.view(np.uint16))


@needs_torch
def test_half_to_float_all_patterns():
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    th = torch.from_numpy(h)
    for d, td in ((ember.float32, torch.float32), (ember.float64, torch.float64)):
        e = ember.tensor(h).to(d)
        assert e.dtype is d
        t = th.to(td).numpy()
        np.testing.assert_array_equal(e.numpy().view(np.uint8), t.view(np.uint8))


@needs_torch
def test_half_casts_non_contiguous_and_grad():
    x = _special_f32()[:12000].reshape(100, 120)
    for v in (x.T, x[::2, ::-1], x[:, 1::2]):
        big = np.concatenate([v, v], axis=0) if v.size < 8192 else v
        e = ember.tensor(big).half().numpy()
        t = torch.from_numpy(np.ascontiguousarray(big)).half().numpy()
        np.testing.assert_array_equal(e.view(np.uint16), t.view(np.uint16))
    a = np.random.default_rng(1).standard_normal(BIG).astype(np.float32)
    g = np.random.default_rng(2).standard_normal(BIG).astype(np.float16)
    ex = ember.tensor(a, requires_grad=True)
    tx = torch.from_numpy(a).requires_grad_()
    ex.half().backward(ember.tensor(g))
    tx.half().backward(torch.from_numpy(g))
    assert ex.grad.dtype is ember.float32
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())


def test_half_cast_small_arrays_keep_numpy():
    x = np.array([1.0, 65520.0, np.nan, -0.0, 1e-8], np.float32)
    np.testing.assert_array_equal(
        ember.tensor(x).half().numpy().view(np.uint16)[[0, 1, 3, 4]],
        x.astype(np.float16).view(np.uint16)[[0, 1, 3, 4]],
    )


# ---------------------------------------------------------------------- erf
def _erf_inputs():
    r = np.random.default_rng(3)
    x = np.concatenate(
        [
            r.uniform(-5, 5, 9000),
            np.logspace(-40, 1, 2000),
            -np.logspace(-40, 1, 1000),
            [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 3.92, 3.9163, 0.8749881, -0.8749881],
        ]
    )  # fmt: skip
    return x.astype(np.float32)


def test_erf_pieces_meet_exactly():
    b = np.full(64, _pw._ERF_B, np.float32)
    assert _pw._erf_small(b)[0] == _pw._ERF_AT_B
    assert (_pw._erf_large(b) == _pw._ERF_AT_B).all()


def test_erf_accuracy_float32():
    import scipy.special as sp

    x = _erf_inputs()
    r = ember.erf(ember.tensor(x)).numpy()
    ref = sp.erf(x.astype(np.float64))
    fin = np.isfinite(x)
    ulp = np.spacing(np.abs(ref[fin]).astype(np.float32)).astype(np.float64)
    err = np.abs(r[fin].astype(np.float64) - ref[fin]) / ulp
    assert err.max() <= 2.0, (err.max(), x[fin][err.argmax()])
    assert err.mean() < 0.35
    np.testing.assert_array_equal(np.signbit(r[fin]), np.signbit(x[fin]))  # odd, -0 stays -0
    assert np.isnan(r[~np.isfinite(ref)]).all()
    np.testing.assert_array_equal(r[np.isinf(x)], np.sign(x[np.isinf(x)]))


@needs_torch
def test_erf_matches_torch_values_and_specials():
    x = _erf_inputs()
    e = ember.erf(ember.tensor(x)).numpy()
    t = torch.erf(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(e, t, rtol=3e-7, atol=1e-37)
    np.testing.assert_array_equal(np.isnan(e), np.isnan(t))


@needs_torch
def test_erf_blocks_and_layout():
    r = np.random.default_rng(4)
    x = r.uniform(-4, 4, (3, 300, 200)).astype(np.float32)  # 180000 > 2 blocks
    for v in (x, x.transpose(2, 0, 1)):
        e = ember.erf(ember.tensor(v)).numpy()
        t = torch.erf(torch.from_numpy(np.ascontiguousarray(v))).numpy()
        np.testing.assert_allclose(e, t, rtol=3e-7, atol=1e-37)
    ex = ember.tensor(x.copy())
    ex.erf_()
    np.testing.assert_allclose(ex.numpy(), torch.erf(torch.from_numpy(x)).numpy(), rtol=3e-7)


# ---------------------------------------------------------------------- table: values + grads
CASES = [
    Case("erf", lambda m, x: m.erf(x), [A(*BIG, low=-4, high=4)]),
    Case("erf_f16", lambda m, x: m.erf(x.half()).float(), [A(*BIG, low=-3, high=3)], atol=1e-3),
    Case("erf_bf16", lambda m, x: m.erf(x.bfloat16()).float(), [A(*BIG)], atol=1e-2),
    Case("half", lambda m, x: x.half().float() * 3, [A(*BIG, low=-70000, high=70000)]),
    Case("gelu", lambda m, x: m.nn.functional.gelu(x), [A(*BIG, low=-8, high=8)]),
    Case("gelu_big", lambda m, x: m.nn.functional.gelu(x), [A(3, 250, 200, low=-6, high=6)]),
    Case("gelu_tanh", lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), [A(*BIG)]),
    Case("silu", lambda m, x: m.nn.functional.silu(x), [A(*BIG, low=-30, high=30)]),
    Case("hardswish", lambda m, x: m.nn.functional.hardswish(x), [A(*BIG, low=-5, high=5)]),
    Case("hardsigmoid", lambda m, x: m.nn.functional.hardsigmoid(x), [A(*BIG, low=-5, high=5)]),
    Case("kthvalue", lambda m, x: m.kthvalue(x, 5, 1), [A(40, 64)]),
    Case("kthvalue_dim0", lambda m, x: m.kthvalue(x, 33, 0, keepdim=True), [A(64, 20)]),
    Case("median_dim", lambda m, x: m.median(x, 1), [A(30, 65)]),
    Case("nanmedian_dim", lambda m, x: m.nanmedian(x, -1), [A(30, 64)]),
    Case("nanmedian_all", lambda m, x: m.nanmedian(x), [A(30, 64)]),
    Case("amp2d_3", lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 3), [A(4, 6, 32, 32)]),
    Case("amp2d_5x7", lambda m, x: m.nn.functional.adaptive_max_pool2d(x, (5, 7)), [A(2, 3, 13, 16)]),
    Case("amp2d_9", lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 9), [A(2, 3, 20, 20)]),
    Case("amp1d_3", lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 3), [A(3, 4, 17)]),
    Case("amp3d_2x3x4", lambda m, x: m.nn.functional.adaptive_max_pool3d(x, (2, 3, 4)), [A(2, 2, 5, 7, 9)]),
    Case("amp3d_5", lambda m, x: m.nn.functional.adaptive_max_pool3d(x, 5), [A(1, 2, 7, 7, 7)]),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=str)
def test_parity(case):
    run_case(case)


GRADCHECK = [
    Case("erf", lambda m, x: m.erf(x), [A(3, 5)]),
    Case("gelu", lambda m, x: m.nn.functional.gelu(x), [A(3, 5)]),
    Case("silu", lambda m, x: m.nn.functional.silu(x), [A(3, 5)]),
    Case("kthvalue", lambda m, x: m.kthvalue(x, 3, 1)[0], [A(4, 20)]),
    Case("amp2d_3", lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 3), [A(1, 2, 8, 8)]),
]


@pytest.mark.parametrize("case", GRADCHECK, ids=str)
def test_gradcheck(case):
    # float64 takes the general kernels; the float32 fast paths' derivatives are the same ops
    run_gradcheck(values_only(case), gradgrad=case.name in ("erf", "gelu", "silu"))


# ---------------------------------------------------------------------- activations: specials
def _act_inputs():
    r = np.random.default_rng(5)
    x = r.standard_normal(12000).astype(np.float32) * 4
    x[:14] = [np.nan, np.inf, -np.inf, 0.0, -0.0, -3, 3, 2.9999998, -2.9999998, 1e-40, -1e-40,
              20, -20, -12]  # fmt: skip
    return x


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_hard_activations_bit_exact(name, dtype):
    # half types compute in float32 and round once, as torch does
    x = _act_inputs()
    e = getattr(EF, name)(ember.tensor(x).to(getattr(ember, dtype)))
    t = getattr(TF, name)(torch.from_numpy(x).to(getattr(torch, dtype)))
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    e, t = e.double().numpy().astype(np.float32), t.double().numpy().astype(np.float32)
    np.testing.assert_array_equal(np.isnan(e), np.isnan(t))  # (NaN payloads may differ)
    ok = ~np.isnan(t)
    np.testing.assert_array_equal(e[ok].view(np.uint32), t[ok].view(np.uint32))


@needs_torch
@pytest.mark.parametrize("name", ["gelu", "silu"])
def test_smooth_activations_specials(name):
    x = _act_inputs()
    g = np.random.default_rng(6).standard_normal(x.shape).astype(np.float32)
    ex, tx = ember.tensor(x, requires_grad=True), torch.from_numpy(x).requires_grad_()
    e, t = getattr(EF, name)(ex), getattr(TF, name)(tx)
    e.backward(ember.tensor(g))
    t.backward(torch.from_numpy(g))
    en, tn = e.detach().numpy(), t.detach().numpy()
    # gelu(+inf): torch's AVX-512 kernel gives NaN, its AVX2 and float64 ones inf (ember's)
    assert en[1] == np.inf
    en[1] = tn[1] = 0
    np.testing.assert_array_equal(np.isnan(en), np.isnan(tn))
    np.testing.assert_allclose(en, tn, rtol=1e-5, atol=3e-6)
    eg, tg = ex.grad.numpy(), tx.grad.numpy()
    fin = np.isfinite(x)
    np.testing.assert_allclose(eg[fin], tg[fin], rtol=1e-4, atol=1e-5)


def test_gelu_fast_path_accuracy():
    import scipy.special as sp

    x = np.linspace(-9, 9, 20001).astype(np.float32)
    r = _act._gelu_f32(x).astype(np.float64)
    ref = x.astype(np.float64) * sp.ndtr(x.astype(np.float64))
    np.testing.assert_allclose(r, ref, rtol=2e-5, atol=1e-30)
    pos = x > 0
    ulp = np.spacing(ref[pos].astype(np.float32)).astype(np.float64)
    assert (np.abs(r[pos] - ref[pos]) / ulp).max() <= 5


@needs_torch
def test_gelu_channels_last_layout():
    x = np.random.default_rng(7).standard_normal((2, 8, 100, 100)).astype(np.float32)
    e = ember.tensor(x).contiguous(memory_format=ember.channels_last)
    r = EF.gelu(e)
    assert r.is_contiguous(memory_format=ember.channels_last)
    np.testing.assert_allclose(r.numpy(), TF.gelu(torch.from_numpy(x)).numpy(), atol=2e-6)


# ---------------------------------------------------------------------- kthvalue / medians
def _stable_kth(a, k, ax):
    return np.take(np.argsort(a, axis=ax, kind="stable"), [k - 1], axis=ax)


@pytest.mark.parametrize("seed", range(4))
def test_kth_index_is_the_stable_sort_position(seed):
    r = np.random.default_rng(seed)
    for _ in range(60):
        shape = tuple(int(v) for v in r.integers(1, 40, size=int(r.integers(1, 4))))
        kind = int(r.integers(0, 4))
        if kind == 0:
            a = r.standard_normal(shape).astype(np.float32)
        elif kind == 1:
            a = r.integers(0, 4, size=shape).astype(np.float32)  # many ties
        elif kind == 2:
            a = r.integers(-3, 3, size=shape)  # int64
        else:
            a = r.integers(0, 4, size=shape).astype(np.float64)
            a[r.random(shape) < 0.2] = np.nan
            a[r.random(shape) < 0.2] = -0.0
        ax = int(r.integers(0, a.ndim))
        k = int(r.integers(1, a.shape[ax] + 1))
        np.testing.assert_array_equal(_kth_idx(np, a, k, ax), _stable_kth(a, k, ax))


@needs_torch
def test_median_and_nanmedian_indices_match_torch_with_ties():
    r = np.random.default_rng(8)
    for _ in range(40):
        a = r.integers(0, 5, size=(int(r.integers(1, 6)), int(r.integers(16, 70)))).astype("f4")
        if r.random() < 0.3:
            a[r.random(a.shape) < 0.1] = np.nan
        for fn in ("median", "nanmedian"):
            e = getattr(ember, fn)(ember.tensor(a), 1)
            t = getattr(torch, fn)(torch.from_numpy(a), 1)
            np.testing.assert_array_equal(e.indices.numpy(), t.indices.numpy())
            np.testing.assert_array_equal(e.values.numpy(), t.values.numpy())


@needs_torch
def test_kthvalue_values_and_grad_with_ties_and_nan():
    r = np.random.default_rng(9)
    a = r.integers(0, 6, size=(8, 50)).astype(np.float32)
    a[0, :3] = np.nan
    g = r.standard_normal((8,)).astype(np.float32)
    for k in (1, 7, 25, 48, 50):
        ex = ember.tensor(a, requires_grad=True)
        e = ember.kthvalue(ex, k, 1)
        np.testing.assert_array_equal(
            e.values.detach().numpy(), torch.kthvalue(torch.from_numpy(a), k, 1)[0].numpy()
        )
        np.testing.assert_array_equal(e.indices.numpy(), _stable_kth(a, k, 1)[:, 0])
        e.values.backward(ember.tensor(g))
        want = np.zeros_like(a)
        want[np.arange(8), e.indices.numpy()] = g
        np.testing.assert_array_equal(ex.grad.numpy(), want)


# ---------------------------------------------------------------------- adaptive max pooling
@needs_torch
@pytest.mark.parametrize("seed", range(3))
def test_adaptive_max_indices_match_torch(seed):
    r = np.random.default_rng(seed)
    fns = {1: "adaptive_max_pool1d", 2: "adaptive_max_pool2d", 3: "adaptive_max_pool3d"}
    for _ in range(80):
        nd = int(r.integers(1, 4))
        S = tuple(int(v) for v in r.integers(1, 13, size=nd))
        O = tuple(int(r.integers(1, s + 2)) for s in S)
        shape = (int(r.integers(1, 3)), int(r.integers(1, 4))) + S
        kind = int(r.integers(0, 4))
        a = r.standard_normal(shape).astype(np.float32)
        if kind == 1:
            a = r.integers(0, 3, size=shape).astype(np.float32)
        elif kind == 2:
            a = np.maximum(a, 0) * (r.random(shape) < 0.3)
            a[r.random(shape) < 0.2] = -0.0
        elif kind == 3:
            a[r.random(shape) < 0.1] = np.nan
        f = fns[nd]
        tv, ti = getattr(TF, f)(torch.from_numpy(a), O, return_indices=True)
        ev, ei = getattr(EF, f)(ember.tensor(a), O, return_indices=True)
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
        np.testing.assert_array_equal(ev.numpy(), tv.numpy())


def test_adaptive_max_fast_paths_agree_with_general_kernel():
    r = np.random.default_rng(10)
    for S, O in (((32, 32), (3, 3)), ((20, 20), (9, 9)), ((7, 9, 11), (3, 4, 5))):
        a = r.integers(0, 3, size=(2, 3) + S).astype(np.float32)  # ties everywhere
        want = _pool._adaptive_max_exact(np, a, O)
        got = _pool._adaptive_max_blocks(a, O)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])
    a = r.standard_normal((2, 3, 10, 10)).astype(np.float32)
    a[0, 0, 4, 4] = np.nan
    assert _pool._adaptive_max_blocks(a, (3, 3)) is None  # NaN: the general kernel's rule


# ---------------------------------------------------------------------- big arrays, layouts
@needs_torch
def test_large_casts_and_erf_keep_values_and_layout():
    x = np.random.default_rng(11).standard_normal((2, 8, 100, 100)).astype(np.float32) * 300
    x.reshape(-1)[::1001] = _special_f32()[:160]  # 160000 elements: the blocked paths
    t = torch.from_numpy(x)
    for e in (ember.tensor(x), ember.tensor(x).contiguous(memory_format=ember.channels_last)):
        h = e.half()
        np.testing.assert_array_equal(
            h.contiguous().numpy().view(np.uint16), t.half().numpy().view(np.uint16)
        )
        back = h.float()
        np.testing.assert_array_equal(
            back.contiguous().numpy().view(np.uint32), t.half().float().numpy().view(np.uint32)
        )
        r = ember.erf(e / 300)
        np.testing.assert_allclose(r.contiguous().numpy(), torch.erf(t / 300).numpy(), rtol=3e-7)
        for out in (h, back, r):
            assert out.is_contiguous() == e.is_contiguous()
            assert out.is_contiguous(memory_format=ember.channels_last) == e.is_contiguous(
                memory_format=ember.channels_last
            )


@needs_torch
def test_hardswish_gradient_at_infinities_and_nan_like_torch():
    vals = [float("nan"), float("inf"), -float("inf"), -3.0, 3.0, 0.5, -2.5, 2.75] * 4096
    grads = []
    for m in (ember, torch):
        x = m.tensor(vals, requires_grad=True)
        m.nn.functional.hardswish(x).backward(m.ones(len(vals)))
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
