"""Runtime utilities (core/runtime.py) and the leftover ops (core/ops/leftovers.py): thread counts,
determinism / precision flags, range, frombuffer, from_file, geqrf, ormqr; compared with torch.

Every test that changes a process-wide setting runs under the ``restore`` fixture, which puts
ember's and torch's settings back afterwards so that other tests are unaffected."""

from __future__ import annotations

import re
import warnings

import ember
import numpy as np
import pytest
from ember.core import runtime
from harness import A, Case, needs_torch, raises_like_torch, run_case, run_gradcheck

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


@pytest.fixture
def restore():
    state = dict(runtime._state)
    threads = ember.get_num_threads()
    if torch is not None:
        t_state = (
            torch.get_num_threads(),
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.get_float32_matmul_precision(),
            torch.is_warn_always_enabled(),
        )
    yield
    runtime._state.clear()
    runtime._state.update(state)
    ember.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(t_state[0])
        torch.use_deterministic_algorithms(t_state[1], warn_only=t_state[2])
        torch.set_float32_matmul_precision(t_state[3])
        torch.set_warn_always(t_state[4])


# ---------------------------------------------------------------------------------- threads
def test_num_threads_round_trip(restore):
    from threadpoolctl import threadpool_info

    ember.set_num_threads(1)
    assert ember.get_num_threads() == 1
    blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
    assert all(i["num_threads"] == 1 for i in blas)  # numpy's BLAS really runs on 1 thread
    ember.set_num_threads(2)
    assert ember.get_num_threads() == 2


def test_interop_threads_round_trip(restore):
    assert isinstance(ember.get_num_interop_threads(), int)
    assert ember.get_num_interop_threads() >= 1
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3


@needs_torch
@pytest.mark.parametrize("fname", ["set_num_threads", "set_num_interop_threads"])
@pytest.mark.parametrize(
    ("arg", "msg"),
    [
        (0, "expects a positive integer"),
        (-2, "expects a positive integer"),
        (1.5, "expects an int, but got float"),
    ],
)
def test_thread_count_errors(restore, fname, arg, msg):
    raises_like_torch(lambda m: getattr(m, fname)(arg), RuntimeError, f"{fname} {msg}")


# ---------------------------------------------------------------------------- determinism
@needs_torch
@pytest.mark.parametrize(("mode", "warn_only"), [(True, False), (True, True), (False, False)])
def test_deterministic_flags_match_torch(restore, mode, warn_only):
    for m in (ember, torch):
        m.use_deterministic_algorithms(mode, warn_only=warn_only)
    for f in ("are_deterministic_algorithms_enabled",
              "is_deterministic_algorithms_warn_only_enabled", "get_deterministic_debug_mode"):  # fmt: skip
        assert getattr(ember, f)() == getattr(torch, f)(), f


@needs_torch
@pytest.mark.parametrize("mode", ["default", "warn", "error", 0, 1, 2])
def test_debug_mode_matches_torch(restore, mode):
    for m in (ember, torch):
        m.set_deterministic_debug_mode(mode)
    assert ember.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
    assert ember.are_deterministic_algorithms_enabled() == (
        torch.are_deterministic_algorithms_enabled()
    )
    assert ember.is_deterministic_algorithms_warn_only_enabled() == (
        torch.is_deterministic_algorithms_warn_only_enabled()
    )


@needs_torch
@pytest.mark.parametrize(
    ("fn", "exc", "msg"),
    [
        (lambda m: m.use_deterministic_algorithms("x"), TypeError,
         "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not str"),
        (lambda m: m.use_deterministic_algorithms(True, warn_only=1), TypeError,
         "_set_deterministic_algorithms(): argument 'warn_only' must be bool, not int"),
        (lambda m: m.set_deterministic_debug_mode("bad"), RuntimeError,
         "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got bad"),
        (lambda m: m.set_deterministic_debug_mode(3), RuntimeError,
         "invalid value of debug_mode, expected 0, 1, or 2, but got 3"),
        (lambda m: m.set_deterministic_debug_mode(1.0), TypeError,
         "debug_mode must be str or int, but got <class 'float'>"),
        (lambda m: m.set_float32_matmul_precision(1), RuntimeError,
         "set_float32_matmul_precision expects a str, but got int"),
        (lambda m: m.set_warn_always(1), RuntimeError, "setWarnOnlyOnce expects a bool, but got int"),
        (lambda m: m._assert(False, "the message"), AssertionError, "the message"),
        (lambda m: m._assert(0, "zero"), AssertionError, "zero"),
        (lambda m: m._assert(m.tensor(False), "tensor"), AssertionError, "tensor"),
    ],
)  # fmt: skip
def test_flag_errors(restore, fn, exc, msg):
    raises_like_torch(fn, exc, msg)


# ------------------------------------------------------------------------ precision, warnings
@needs_torch
@pytest.mark.parametrize("precision", ["high", "medium", "highest"])
def test_matmul_precision_round_trip(restore, precision):
    assert ember.get_float32_matmul_precision() == "highest"
    for m in (ember, torch):
        m.set_float32_matmul_precision(precision)
    assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()


@needs_torch
@pytest.mark.parametrize("precision", ["high", "medium", "highest"])
def test_matmul_precision_sets_allow_tf32_like_torch(restore, precision):
    for m in (ember, torch):
        m.set_float32_matmul_precision(precision)
    assert ember.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32


@pytest.mark.parametrize("value, precision", [(True, "high"), (False, "highest")])
def test_allow_tf32_sets_the_matmul_precision(restore, value, precision):
    # torch's documented pairing (torch itself refuses to read the precision back once the
    # legacy flag and the new API were mixed in one process, so it is not run here)
    ember.backends.cuda.matmul.allow_tf32 = value
    assert ember.get_float32_matmul_precision() == precision


@needs_torch
def test_matmul_precision_bad_value_warns_and_keeps(restore):
    ember.set_float32_matmul_precision("medium")
    msg = "bad is not one of 'highest', 'high', or 'medium'; the current"
    with pytest.warns(UserWarning, match=re.escape(msg)):
        ember.set_float32_matmul_precision("bad")
    assert ember.get_float32_matmul_precision() == "medium"


@needs_torch
@pytest.mark.parametrize("b", [True, False])
def test_warn_always_round_trip(restore, b):
    for m in (ember, torch):
        m.set_warn_always(b)
    assert ember.is_warn_always_enabled() is torch.is_warn_always_enabled() is b


def test_misc_flags():
    # numpy cannot switch denormal flushing: ember reports "unsupported" (False), like torch on
    # cpus without the control bits, and nothing changes (a denormal stays a denormal)
    assert ember.set_flush_denormal(True) is False
    assert ember.tensor([1e-320], dtype=ember.float64).item() != 0.0
    if torch is not None:
        assert ember.compiled_with_cxx11_abi() == torch.compiled_with_cxx11_abi()
    assert ember._assert(True, "no") is None


# ------------------------------------------------------------------------------------- range
RANGE_ARGS = [
    ((0, 3), {}),
    ((0.5, 3), {}),
    ((0, 10, 3), {}),
    ((0, 1, 0.1), {}),
    ((3, 0, -1), {}),
    ((0, 3), {"dtype": "int32"}),
    ((1, 2, 0.25), {"dtype": "float64"}),
    ((0, 3), {"requires_grad": True}),
]


@needs_torch
@pytest.mark.parametrize(("args", "kw"), RANGE_ARGS, ids=str)
def test_range_matches_torch(args, kw):
    def call(m):
        k = {a: getattr(m, v) if a == "dtype" else v for a, v in kw.items()}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = m.range(*args, **k)
        return r, [str(x.message) for x in w if x.category is UserWarning]

    (e, ew), (t, tw) = call(ember), call(torch)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6)
    assert e.requires_grad == t.requires_grad
    assert ew == tw and len(ew) == 1  # the deprecation warning, word for word


@needs_torch
@pytest.mark.parametrize(
    ("args", "msg"),
    [
        ((0, 1, 0), "step must be nonzero"),
        ((3, 0), "upper bound and lower bound inconsistent with step sign"),
    ],
)
def test_range_errors(args, msg):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like_torch(lambda m: m.range(*args), RuntimeError, msg)


@needs_torch
def test_range_needs_end():
    msg = 'range() missing 1 required positional arguments: "end"'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like_torch(lambda m: m.range(3), TypeError, msg)


# -------------------------------------------------------------------------------- frombuffer
@needs_torch
@pytest.mark.parametrize(
    ("count", "offset", "dtype"),
    [(-1, 0, "int32"), (2, 4, "int32"), (-1, 4, "int16"), (3, 0, "uint8"), (-1, 0, "float32")],
)
def test_frombuffer_matches_torch_and_shares(count, offset, dtype):
    raw = np.arange(1, 4, dtype=np.int32).tobytes()
    be, bt = bytearray(raw), bytearray(raw)
    e = ember.frombuffer(be, dtype=getattr(ember, dtype), count=count, offset=offset)
    t = torch.frombuffer(bt, dtype=getattr(torch, dtype), count=count, offset=offset)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    be[offset] = bt[offset] = 9  # memory is shared: the tensor sees the write
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    e[0] = 7
    t[0] = 7
    assert be == bt  # and the buffer sees the tensor's write


@needs_torch
@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        ({"offset": 2}, ("buffer length (10 bytes) after offset (2 bytes) must be a multiple of "
                        "element size (4)")),
        ({"count": 5}, ("requested buffer length (5 * 4 bytes) after offset (0 bytes) must not be "
                       "greater than actual buffer length (12 bytes)")),
        ({"offset": 12}, ("offset (12 bytes) must be non-negative and no greater than buffer "
                         "length (12 bytes) minus 1")),
        ({"offset": -1}, ("offset (-1 bytes) must be non-negative and no greater than buffer "
                         "length (12 bytes) minus 1")),
        ({"count": 0}, "both buffer length (12) and count (0) must not be 0"),
    ],
)  # fmt: skip
def test_frombuffer_errors(kw, msg):
    buf = bytearray(12)
    raises_like_torch(lambda m: m.frombuffer(buf, dtype=m.int32, **kw), ValueError, msg)


@needs_torch
def test_frombuffer_not_a_buffer():
    msg = "object does not implement Python buffer protocol."
    raises_like_torch(lambda m: m.frombuffer([1, 2], dtype=m.uint8), ValueError, msg)


def test_frombuffer_readonly_bytes():
    with pytest.warns(UserWarning, match="The given buffer is not writable"):
        e = ember.frombuffer(b"abcd", dtype=ember.uint8)
    np.testing.assert_array_equal(e.numpy(), [97, 98, 99, 100])


# --------------------------------------------------------------------------------- from_file
@needs_torch
@pytest.mark.parametrize(("size", "dtype"), [(6, None), (3, "int32"), (2, "float64"), (0, None)])
def test_from_file_matches_torch(tmp_path, size, dtype):
    f = tmp_path / "data.bin"
    np.arange(6, dtype=np.float32).tofile(f)
    kw = lambda m: {} if dtype is None else {"dtype": getattr(m, dtype)}
    e = ember.from_file(str(f), size=size, **kw(ember))
    t = torch.from_file(str(f), size=size, **kw(torch))
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_from_file_shared_writes_through(tmp_path):
    f = tmp_path / "data.bin"
    np.arange(6, dtype=np.float32).tofile(f)
    e = ember.from_file(str(f), shared=True, size=6)
    e[0] = 42
    np.testing.assert_array_equal(np.fromfile(f, dtype=np.float32), [42, 1, 2, 3, 4, 5])
    g = tmp_path / "new.bin"  # shared=True creates a missing file, zero-filled
    z = ember.from_file(str(g), shared=True, size=2)
    np.testing.assert_array_equal(z.numpy(), [0, 0])
    assert g.stat().st_size == 8


@needs_torch
def test_from_file_errors(tmp_path):
    f = tmp_path / "data.bin"
    np.arange(6, dtype=np.float32).tofile(f)
    msg = f"file <{f}> size <24> is smaller than the required mapping size <28>"
    raises_like_torch(lambda m: m.from_file(str(f), size=7), RuntimeError, msg)
    g = tmp_path / "missing.bin"
    msg = f"unable to open file <{g}> in read-only mode: No such file or directory (2)"
    raises_like_torch(lambda m: m.from_file(str(g), shared=False, size=2), RuntimeError, msg)


# ------------------------------------------------------------------------------ geqrf, ormqr
def _geqrf_ormqr(left, transpose):
    def fn(m, x, c):
        a, tau = m.geqrf(x.detach())
        return m.ormqr(a, tau, c, left, transpose)

    return fn


def _ormqr_all_grads(left, transpose):
    # input and tau differentiable too: a geqrf result, detached, then made a leaf
    def fn(m, x, c):
        a, tau = m.geqrf(x.detach())
        return m.ormqr(a.requires_grad_(), tau.requires_grad_(), c, left, transpose)

    return fn


CASES = [
    Case("geqrf_tall", lambda m, x: m.geqrf(x), [A(5, 3, grad=False)], grad=False),
    Case("geqrf_wide", lambda m, x: m.geqrf(x), [A(3, 5, grad=False)], grad=False),
    Case("geqrf_batch_f64", lambda m, x: m.geqrf(x), [A(2, 4, 4, dtype="float64", grad=False)],
         grad=False),
    Case("geqrf_complex", lambda m, x: m.geqrf(x), [A(4, 3, dtype="complex128", grad=False)],
         grad=False),
    Case("geqrf_empty", lambda m, x: m.geqrf(x), [A(0, 2, grad=False)], grad=False),
    Case("geqrf_attrs", lambda m, x: (m.geqrf(x).a, m.geqrf(x).tau), [A(3, 2, grad=False)],
         grad=False),
]  # fmt: skip
for _left in (True, False):
    for _tr in (True, False):
        _c = A(4, 2, seed=1) if _left else A(2, 4, seed=1)
        CASES.append(
            Case(f"ormqr_l{_left:d}_t{_tr:d}", _geqrf_ormqr(_left, _tr), [A(4, 3, grad=False), _c])
        )
        _cc = A(4, 2, dtype="complex128", seed=1) if _left else A(2, 4, dtype="complex128", seed=1)
        CASES.append(
            Case(
                f"ormqr_complex_l{_left:d}_t{_tr:d}",
                _geqrf_ormqr(_left, _tr),
                [A(4, 3, dtype="complex128", grad=False), _cc],
            )
        )
CASES.append(Case("ormqr_wide_batch", _geqrf_ormqr(True, False), [A(2, 3, 5, grad=False),
                                                                  A(2, 3, 4, seed=1)]))  # fmt: skip
CASES.append(Case("ormqr_nograd", _geqrf_ormqr(True, True), [A(4, 4, grad=False),
                                                             A(4, 2, grad=False)]))  # fmt: skip
ALL_GRAD = [
    Case(f"ormqr_all_grads_l{lf:d}_t{tr:d}", _ormqr_all_grads(lf, tr),
         [A(4, 3, dtype="float64", grad=False),
          A(4, 2, dtype="float64", seed=1) if lf else A(2, 4, dtype="float64", seed=1)])
    for lf in (True, False) for tr in (True, False)
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("case", CASES + ALL_GRAD, ids=str)
def test_linalg_parity(case):
    run_case(case)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.name.startswith(("ormqr_l", "ormqr_wide"))], ids=str
)
def test_ormqr_gradcheck(case):
    run_gradcheck(case, gradgrad=True)


def test_ormqr_gradcheck_all_inputs():
    x = ember.tensor(A(4, 3).make(0).astype(np.float64))
    a, tau = ember.geqrf(x)
    a.requires_grad_()
    tau.requires_grad_()
    c = ember.tensor(A(4, 2).make(1).astype(np.float64), requires_grad=True)
    f = lambda a, tau, c: ember.ormqr(a, tau, c, True, True)
    assert ember.autograd.gradcheck(f, (a, tau, c), atol=1e-5, rtol=1e-3)
    assert ember.autograd.gradgradcheck(f, (a, tau, c), atol=1e-4, rtol=1e-3)


@needs_torch
@pytest.mark.parametrize(
    ("fn", "exc", "msg"),
    [
        (lambda m: m.geqrf(m.ones(3)), RuntimeError,
         "torch.geqrf: input must have at least 2 dimensions."),
        (lambda m: m.geqrf(m.ones(3, 2, dtype=m.int64)), NotImplementedError,
         "\"geqrf_cpu\" not implemented for 'Long'"),
        (lambda m: m.ormqr(m.ones(4, 3, dtype=m.float64), m.ones(3, dtype=m.float64),
                           m.ones(3, 3, dtype=m.float64)), RuntimeError,
         "torch.ormqr: other.shape[-2] must be equal to input.shape[-2]"),
        (lambda m: m.ormqr(m.ones(4, 3, dtype=m.float64), m.ones(3),
                           m.ones(4, 4, dtype=m.float64)), RuntimeError,
         ("torch.ormqr: Expected input and tau to have the same dtype, but input has "
         "dtypeDouble and tau has dtype Float")),
    ],
)  # fmt: skip
def test_linalg_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


# ---------------------------------------------------------------------- quasirandom.SobolEngine
@needs_torch
@pytest.mark.parametrize("dim", [1, 3, 40])
def test_sobol_matches_torch(dim):
    e, t = ember.quasirandom.SobolEngine(dim), torch.quasirandom.SobolEngine(dim)
    steps = [
        lambda s, m: s.draw(5),
        lambda s, m: s.draw(3, dtype=m.float64),
        lambda s, m: s.fast_forward(4) and s.draw(2),
        lambda s, m: s.reset() and s.draw_base2(3),
        lambda s, m: s.draw_base2(3),
        lambda s, m: s.draw(0),
    ]
    for k, step in enumerate(steps):
        ev, tv = step(e, ember), step(t, torch)
        assert str(ev.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], k
        np.testing.assert_array_equal(ev.numpy(), tv.numpy(), err_msg=str(k))
        assert e.num_generated == t.num_generated
    assert repr(e) == repr(t)


@needs_torch
def test_sobol_out_and_repr():
    e, t = ember.quasirandom.SobolEngine(2), torch.quasirandom.SobolEngine(2)
    eo, to = ember.empty(1, 2), torch.empty(1, 2)
    assert e.draw(3, out=eo) is eo
    t.draw(3, out=to)
    np.testing.assert_array_equal(eo.numpy(), to.numpy())
    args = {"dimension": 4, "scramble": True, "seed": 7}
    assert repr(ember.quasirandom.SobolEngine(**args)) == repr(
        torch.quasirandom.SobolEngine(**args)
    )


def test_sobol_scrambled():
    a = ember.quasirandom.SobolEngine(3, scramble=True, seed=5).draw(64, dtype=ember.float64)
    b = ember.quasirandom.SobolEngine(3, scramble=True, seed=5).draw(64, dtype=ember.float64)
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # a seed fixes the scrambling
    x = a.numpy()
    assert x.min() >= 0 and x.max() < 1 and (x[0] != 0).all()
    # each of the 8 equal strata of every coordinate holds exactly 8 of the 64 points
    for j in range(3):
        np.testing.assert_array_equal(np.bincount((x[:, j] * 8).astype(int), minlength=8), 8)
    ember.manual_seed(3)
    c = ember.quasirandom.SobolEngine(2, scramble=True).draw(4)
    ember.manual_seed(3)
    d = ember.quasirandom.SobolEngine(2, scramble=True).draw(4)
    np.testing.assert_array_equal(c.numpy(), d.numpy())  # seed=None follows ember's generator


@needs_torch
def test_sobol_errors():
    msg = "Supported range of dimensionality for SobolEngine is [1, 21201]"
    for d in (0, 21202):
        raises_like_torch(lambda m, d=d: m.quasirandom.SobolEngine(d), ValueError, msg)

    def fn(m):
        s = m.quasirandom.SobolEngine(2)
        s.draw(4)
        s.draw_base2(1)

    msg = (
        "The balance properties of Sobol' points require n to be a power of 2. 4 points have been "
        "previously generated, then: n=4+2**1=6. If you still want to do this, please use "
        "'SobolEngine.draw()' instead."
    )
    raises_like_torch(fn, ValueError, msg)


def _ormqr_shapes(a, t, c, left=True):
    d = "float64"
    return lambda m: m.ormqr(
        m.ones(*a, dtype=getattr(m, d)), m.ones(*t, dtype=getattr(m, d)),
        m.ones(*c, dtype=getattr(m, d)), left,
    )  # fmt: skip


@needs_torch
@pytest.mark.parametrize(
    ("fn", "msg"),
    [
        (_ormqr_shapes((4, 3), (2,), (4, 2)),
         "torch.ormqr: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])"),
        (_ormqr_shapes((4, 3), (4,), (2, 4), False),
         "torch.ormqr: tau.shape[-1] must be equal to min(other.shape[-1], input.shape[-1])"),
        (_ormqr_shapes((2, 4, 3), (3, 3), (2, 4, 2)),
         "torch.ormqr: Expected batch dimensions of tau to be equal to input.shape[:-2], but got [3]"),
        (_ormqr_shapes((2, 4, 3), (2, 3), (3, 4, 2)),
         ("torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], but got "
         "[3]")),
        (_ormqr_shapes((4, 3), (3,), (2, 4, 2)),
         ("torch.ormqr: Expected other to have the same number of dimensions as input, but got "
         "other.ndim equal to 3 and input.ndim is equal to 2")),
        (_ormqr_shapes((2, 4, 3), (3,), (2, 4, 2)),
         ("torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim "
         "equal to 1 and input.ndim is equal to 3")),
        (_ormqr_shapes((3,), (3,), (2, 4, 2)), "torch.ormqr: input must have at least 2 dimensions."),
        (_ormqr_shapes((4, 3), (3,), (4,)), "torch.ormqr: other must have at least 2 dimensions."),
    ],
)  # fmt: skip
def test_ormqr_shape_errors(fn, msg):
    raises_like_torch(fn, RuntimeError, msg)
