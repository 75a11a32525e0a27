"""Parity regressions of the hundred-and-twelfth wave: the per-call cost of common reductions
and activations cut in their kernels (numpy's ufunc methods called directly instead of
``ndarray.sum/mean/max``, ``np.clip`` and ``np.cumsum``; argmax(dim) no longer computes the max
values; softmax, sigmoid and tanh derivatives on arrays when no graph is recorded). The common
call takes the shortcut; these cases drive both sides of each, ember against torch:

* mean, sum, var and std over all dims, one dim (negative, keepdim), several dims, of 0-d,
  empty, half-precision, float64 and non-contiguous inputs, with ``dtype=``;
* amax/amin, max/min(dim) and argmax/argmin(dim) of 3-d permuted inputs, with NaN, and their
  errors (empty dims, complex, bool);
* norm (2 and 1) and cumsum/cumprod of every float dtype, ints and bools;
* clamp with number bounds (both, one, min > max, NaN), tensor bounds, a half input;
* softmax/log_softmax/sigmoid/tanh gradients: float32/float64 (the array path), float16 and
  0-d (the op path), a broadcast upstream gradient, and double backward (``create_graph``).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly


def _summary(r):
    if isinstance(r, (tuple, list)):
        return [_summary(x) for x in r]
    if hasattr(r, "detach") and hasattr(r, "shape"):
        r = r.detach()
        a = r.numpy() if r.is_complex() else r.double().numpy()  # (bfloat16 has no numpy type)
        return "T", tuple(r.shape), str(r.dtype).split(".")[-1], a.tolist()
    return r


def _outcome(fn, lib):
    err, r = run_quietly(fn, lib)
    if err is not None:
        return type(err).__name__, str(err)
    return "ok", _summary(r)


def _close(a, b) -> bool:
    # float results to a few float32 ulps (numpy and torch sum and exp in different orders)
    if isinstance(a, complex) and isinstance(b, complex):
        return abs(a - b) <= 2e-3 * max(abs(a), abs(b)) + 1e-6
    if isinstance(a, float) and isinstance(b, float):
        if np.isnan(a) or np.isnan(b):
            return bool(np.isnan(a) and np.isnan(b))
        return a == b or abs(a - b) <= 2e-3 * max(abs(a), abs(b)) + 1e-6
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_close, a, b))
    return a == b


def _same(fn):
    want, got = _outcome(fn, torch), _outcome(fn, ember)
    assert _close(got, want), (got, want)


_RNG = np.random.default_rng(112)
_BASE = _RNG.standard_normal((3, 4, 5))
_BASE[0, 1, 2] = np.nan
_BASE[1, 2, 3] = -0.0


def _x(lib, kind, dtype="float32"):
    a = {
        "2d": _BASE[0].copy() + 0.5,
        "nan": _BASE[:2, :, 2].copy(),
        "3d": np.nan_to_num(_BASE),
        "perm": np.nan_to_num(_BASE),
        "0d": np.array(0.75),
        "empty": np.zeros((0, 3)),
        "const": np.full((2, 6), 1.25),
    }[kind]
    t = lib.tensor(a, dtype=getattr(lib, dtype))
    return t.permute(2, 0, 1) if kind == "perm" else t


_KINDS = ["2d", "nan", "3d", "perm", "0d", "empty", "const"]
_DTYPES = ["float32", "float64", "float16", "bfloat16"]

_REDUCTIONS = {
    "sum": lambda x: x.sum(),
    "sum-1k": lambda x: x.sum(-1, keepdim=True),
    "sum01": lambda x: x.sum((0, 1)),
    "sum_f64": lambda x: x.sum(0, dtype=x.new_zeros(()).double().dtype),
    "mean": lambda x: x.mean(),
    "mean0": lambda x: x.mean(0),
    "mean-1k": lambda x: x.mean(-1, keepdim=True),
    "mean01": lambda x: x.mean((0, 1)),
    "mean_f64": lambda x: x.mean(-1, dtype=x.new_zeros(()).double().dtype),
    "var-1": lambda x: x.var(-1),
    "var": lambda x: x.var(),
    "std0k": lambda x: x.std(0, keepdim=True),
    "var_c0": lambda x: x.var(-1, correction=0),
    "amax-1": lambda x: x.amax(-1),
    "amin01": lambda x: x.amin((0, 1)),
    "max-1": lambda x: tuple(x.max(-1)),
    "min0k": lambda x: tuple(x.min(0, keepdim=True)),
    "max": lambda x: x.max(),
    "min": lambda x: x.min(),
    "argmax-1": lambda x: x.argmax(-1),
    "argmin0k": lambda x: x.argmin(0, keepdim=True),
    "argmax": lambda x: x.argmax(),
    "norm": lambda x: x.norm(),
    "norm1": lambda x: x.norm(1),
    "norm-1": lambda x: x.norm(dim=-1),
    "cumsum-1": lambda x: x.cumsum(-1),
    "cumsum0": lambda x: x.cumsum(0),
    "cumprod-1": lambda x: x.cumprod(-1),
    "clamp": lambda x: x.clamp(-0.5, 0.5),
    "clamp_rev": lambda x: x.clamp(0.5, -0.5),
    "clamp_min": lambda x: x.clamp(min=0.1),
    "clamp_nan": lambda x: x.clamp(float("nan"), 1.0),
    "clamp_t": lambda x: x.clamp(x.new_full((), -0.25), x.new_full((), 0.25)),
    "softmax-1": lambda x: x.softmax(-1),
    "softmax0": lambda x: x.softmax(0),
    "log_softmax-1": lambda x: x.log_softmax(-1),
    "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(),
}


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize("name", list(_REDUCTIONS))
def test_kernel_values_and_errors(name, kind, dtype):
    f = _REDUCTIONS[name]
    _same(lambda lib: f(_x(lib, kind, dtype)))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "complex64"])
@pytest.mark.parametrize(
    "name", ["sum", "sum-1k", "mean", "var-1", "amax-1", "max-1", "argmax-1", "norm", "cumsum-1"]
)
def test_other_dtypes(name, dtype):
    f = _REDUCTIONS[name]

    def run(lib):
        return f(lib.tensor(np.arange(-3, 9).reshape(3, 4) % 5).to(getattr(lib, dtype)))

    _same(run)


_ACTS = {
    "softmax-1": lambda x: x.softmax(-1),
    "softmax0": lambda x: x.softmax(0),
    "log_softmax-1": lambda x: x.log_softmax(-1),
    "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("kind", ["2d", "perm", "0d"])
@pytest.mark.parametrize("name", list(_ACTS))
def test_activation_gradients(name, kind, dtype):
    f = _ACTS[name]

    def run(lib):
        x = _x(lib, kind, dtype).detach().requires_grad_(True)
        y = f(x)
        g = lib.arange(1.0, y.numel() + 1).reshape(y.shape).to(y.dtype) / 7
        (gx,) = lib.autograd.grad(y, x, g)
        return gx  # (its summary has its dtype and shape)

    _same(run)


@pytest.mark.parametrize("name", list(_ACTS))
def test_activation_broadcast_upstream(name):
    f = _ACTS[name]

    def run(lib):
        x = _x(lib, "2d", "float32").requires_grad_(True)
        f(x).sum().backward()  # the upstream gradient is an expanded view of a 0-d one
        return x.grad

    _same(run)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_ACTS))
def test_activation_double_backward(name, dtype):
    f = _ACTS[name]

    def run(lib):
        x = _x(lib, "2d", dtype).requires_grad_(True)
        y = f(x)
        (gx,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        assert gx.requires_grad
        (ggx,) = lib.autograd.grad((gx * gx).sum(), x)
        return gx, ggx

    _same(run)
