"""Parity regressions found by the seventh wave of realistic PyTorch programs (reinforcement
learning, graph message passing, signal processing, statistics, printing; torch is the oracle):
squeeze's and sort's grad_fn overload names, float32 window functions computed in float32 (blackman's
ends), the sign of the zero imaginary parts of a two-sided real FFT, stft/istft's once-per-process
warnings (return_complex=False, istft without a window) and their errors (torch's call prefix,
istft's hop/win checks), and index_add_/index_reduce_/index_fill_'s index checks (message-passing
code with a float or 2-D index), and the bare NotImplementedError of a distribution without a
mean or variance (a tanh-squashed Normal); and torch.segment_reduce (segment pooling in graph
code), which ember lacked."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.core import runtime

torch = pytest.importorskip("torch")


# ------------------------------------------------------------------- squeeze's grad_fn names
@pytest.mark.parametrize("args", [(), (1,), (-2,), ((1,),), ([1],), ((0, 1),)])
def test_squeeze_grad_fn_name(args):
    t = torch.ones(1, 1, 3, requires_grad=True).squeeze(*args)
    e = ember.ones(1, 1, 3, requires_grad=True).squeeze(*args)
    assert e.grad_fn.name() == t.grad_fn.name()
    assert tuple(e.shape) == tuple(t.shape)


def test_squeeze_gradient_still_reshapes():
    x = ember.ones(2, 1, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: a.squeeze(1) * a.squeeze(), (x,))


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.sort(),
        lambda t: t.sort(0, True),
        lambda t: t.sort(stable=False),
        lambda t: t.sort(dim=0, stable=True),
        lambda t: t.sort(descending=True, stable=True),
    ],
)
def test_sort_grad_fn_name(call):
    t = call(torch.tensor([3.0, 1.0, 2.0], requires_grad=True))
    e = call(ember.tensor([3.0, 1.0, 2.0], requires_grad=True))
    assert e.values.grad_fn.name() == t.values.grad_fn.name()
    assert e.values.tolist() == t.values.tolist() and e.indices.tolist() == t.indices.tolist()


def test_sort_stable_gradient():
    x = ember.tensor([3.0, 1.0, 2.0, 0.5], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: a.sort(stable=True, descending=True).values, (x,))


# ------------------------------------------------------------------- windows in their dtype
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("periodic", [True, False])
def test_blackman_window_ends(dtype, periodic):
    t = torch.blackman_window(5, periodic=periodic, dtype=getattr(torch, dtype))
    e = ember.blackman_window(5, periodic=periodic, dtype=getattr(ember, dtype))
    # float32 rounding leaves -3e-08 at the ends (printed in sci mode); float64 gives exactly 0
    assert e[0].item() == t[0].item()
    assert np.allclose(e.numpy(), t.numpy(), atol=1e-6)
    assert str(e) == str(t).replace("torch.", "ember.")


@pytest.mark.parametrize("name", ["blackman", "nuttall", "hann", "hamming"])
def test_signal_windows_float32(name):
    t = getattr(torch.signal.windows, name)(7)
    e = getattr(ember.signal.windows, name)(7)
    assert e.dtype == ember.float32
    assert np.allclose(e.numpy(), t.numpy(), atol=1e-6)
    if name == "blackman":  # 0.42 - 0.5 + 0.08 rounded in float32, summed from a_0
        assert e[0].item() == t[0].item()


@pytest.mark.parametrize("n", [5, 8, 33])
@pytest.mark.parametrize(
    "name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
)
def test_windows_values(name, n):
    for periodic in (True, False):
        t = getattr(torch, name)(n, periodic=periodic)
        e = getattr(ember, name)(n, periodic=periodic)
        assert e.dtype == ember.float32
        assert np.allclose(e.numpy(), t.numpy(), atol=1e-6)


# ------------------------------------------------------------------- two-sided real FFT zeros
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [3, 4, 8])
def test_fft_of_real_input_zero_imag_sign(dtype, n):
    x = np.arange(1, n + 1, dtype=dtype)
    t = torch.fft.fft(torch.tensor(x))
    e = ember.fft.fft(ember.tensor(x))
    # torch's DC bin is +0.0j (printed "+0.0000j"); scipy's real-input path gives -0.0
    assert np.signbit(e.imag[0].item()) == np.signbit(t.imag[0].item())
    assert str(e[:1]) == str(t[:1]).replace("torch.", "ember.")
    assert np.allclose(e.numpy(), t.numpy(), atol=1e-5)


def test_fft_real_input_gradient():
    x = ember.tensor([1.0, 2.0, -0.5, 3.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.view_as_real(ember.fft.fft(a)), (x,))


# ------------------------------------------------------------------- stft / istft warnings
def _warned(fn, m):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn(m)
    return [str(x.message).split(" (Triggered internally")[0] for x in w]


STFT_WARNINGS = {
    "stft_return_complex": lambda m: m.stft(
        m.ones(64), 16, window=m.hann_window(16), return_complex=False
    ),
    "istft_window": lambda m: m.istft(m.ones(9, 17, dtype=m.complex64), 16),
}


@pytest.mark.parametrize("key", sorted(STFT_WARNINGS))
def test_stft_once_warnings(key, monkeypatch):
    monkeypatch.setattr(runtime, "_WARNED_ONCE", set())
    torch.set_warn_always(True)  # torch has warned earlier in this process
    try:
        expected = _warned(STFT_WARNINGS[key], torch)
    finally:
        torch.set_warn_always(False)
    assert len(expected) == 1
    assert _warned(STFT_WARNINGS[key], ember) == expected
    assert _warned(STFT_WARNINGS[key], ember) == []  # once per process, like TORCH_WARN_ONCE


def test_stft_return_complex_false_still_returns_real_pairs():
    x = np.cos(np.arange(64) * 0.3).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.stft(torch.tensor(x), 16, window=torch.hann_window(16), return_complex=False)
        e = ember.stft(ember.tensor(x), 16, window=ember.hann_window(16), return_complex=False)
    assert tuple(e.shape) == tuple(t.shape)
    assert np.allclose(e.numpy(), t.numpy(), atol=1e-5)


# ------------------------------------------------------------------- stft / istft errors
def _error(fn, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(m)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return type(e).__name__, str(e)
    return "ok", None


def _c(m, *shape):
    return m.ones(*shape, dtype=m.complex64)


STFT_ERRORS = {
    "stft-3d": lambda m: m.stft(m.ones(2, 2, 64), 16, return_complex=True),
    "stft-3d-nocenter": lambda m: m.stft(m.ones(2, 2, 64), 16, return_complex=True, center=False),
    "stft-n_fft": lambda m: m.stft(m.ones(1, 64), 100, center=False, return_complex=True),
    "stft-hop": lambda m: m.stft(m.ones(64), 100, return_complex=True, hop_length=0),
    "stft-win": lambda m: m.stft(
        m.ones(1, 64), 16, win_length=20, return_complex=True, window=m.ones(3)
    ),
    "stft-window": lambda m: m.stft(
        m.ones(64, dtype=m.float64),
        16,
        window=m.ones(10, dtype=m.float64),
        return_complex=True,
        onesided=False,
        normalized=True,
    ),
    "stft-complex": lambda m: m.stft(_c(m, 64), 16, hop_length=0, return_complex=True),
    "stft-half": lambda m: m.stft(
        m.ones(64, dtype=m.float16), 16, hop_length=0, return_complex=True
    ),
    "stft-real-pairs": lambda m: m.stft(m.ones(64), 16, hop_length=0, return_complex=False),
    "istft-4d": lambda m: m.istft(_c(m, 2, 2, 9, 5), 16),
    "istft-freq": lambda m: m.istft(_c(m, 9, 17), 40, hop_length=0),
    "istft-freq-twosided": lambda m: m.istft(_c(m, 9, 5), 16, onesided=False),
    "istft-hop-zero": lambda m: m.istft(_c(m, 9, 17), 16, hop_length=0, window=m.ones(3)),
    "istft-hop-big": lambda m: m.istft(_c(m, 9, 17), 16, hop_length=20),
    "istft-win": lambda m: m.istft(_c(m, 9, 17), 16, win_length=20, window=m.ones(3)),
    "istft-window": lambda m: m.istft(_c(m, 9, 17), 16, window=m.ones(10)),
    "istft-nola": lambda m: m.istft(_c(m, 2, 9, 5), 16, center=False, window=m.hann_window(16)),
}


@pytest.mark.parametrize("case", sorted(STFT_ERRORS))
def test_stft_istft_errors(case):
    fn = STFT_ERRORS[case]
    expected = _error(fn, torch)
    assert expected[0] == "RuntimeError"
    assert _error(fn, ember) == expected


# ------------------------------------------------------------------- index_add & co: bad index
def _x(m):
    return m.zeros(3, 2)


INDEX_ERRORS = {
    "add-2d-float": lambda m: _x(m).index_add(0, m.tensor([[0.0, 1]]), m.ones(2, 2)),
    "add-2d-long": lambda m: _x(m).index_add(0, m.tensor([[0, 1]]), m.ones(2, 2)),
    "add-float": lambda m: _x(m).index_add_(0, m.tensor([0.0, 1]), m.ones(2, 2)),
    "add-short": lambda m: m.index_add(_x(m), 0, m.tensor([0, 1], dtype=m.int16), m.ones(2, 2)),
    "add-bool": lambda m: _x(m).index_add_(0, m.tensor([True, False]), m.ones(2, 2)),
    "add-uint8": lambda m: _x(m).index_add(0, m.tensor([0, 1], dtype=m.uint8), m.ones(2, 2)),
    "reduce-2d": lambda m: _x(m).index_reduce(0, m.tensor([[0, 1]]), m.ones(2, 2), "prod"),
    "reduce-float": lambda m: _x(m).index_reduce(0, m.tensor([0.0, 1]), m.ones(2, 2), "amax"),
    "fill-2d-float": lambda m: _x(m).index_fill(0, m.tensor([[0.0, 1]]), 1.0),
    "fill-2d-long": lambda m: _x(m).index_fill(0, m.tensor([[0, 1]]), 1.0),
    "fill-int32": lambda m: _x(m).index_fill_(0, m.tensor([0, 1], dtype=m.int32), 1.0),
    "fill-float-tensor-value": lambda m: _x(m).index_fill(0, m.tensor([0.0]), m.tensor(1.0)),
}


@pytest.mark.parametrize("case", sorted(INDEX_ERRORS))
def test_index_accumulate_and_fill_errors(case):
    fn = INDEX_ERRORS[case]
    expected = _error(fn, torch)
    assert expected[0] in ("RuntimeError", "IndexError")
    assert _error(fn, ember) == expected


def test_index_add_int32_and_scalar_index_still_work():
    for m in (torch, ember):
        x = m.zeros(3, 2)
        x.index_add_(0, m.tensor([2, 0], dtype=m.int32), m.tensor([[1.0, 2.0], [3.0, 4.0]]))
        x.index_reduce_(0, m.tensor(1), m.tensor([[5.0, -1.0]]), "amax", include_self=False)
        x.index_fill_(1, m.tensor(0), -1.0)
        if m is torch:
            expected = x.tolist()
    assert x.tolist() == expected


# ------------------------------------------------------------------- distributions' moments
@pytest.mark.parametrize("attr", ["mean", "variance", "stddev", "mode"])
def test_transformed_distribution_missing_moments(attr):
    def fn(m):
        d = m.distributions
        return getattr(d.TransformedDistribution(d.Normal(0.0, 1.0), [d.TanhTransform()]), attr)

    def outcome(m):
        try:
            fn(m)
        except NotImplementedError as e:
            return str(e).replace("ember.", "torch.")
        return "ok"

    assert outcome(ember) == outcome(torch) != "ok"


# ------------------------------------------------------------------- segment_reduce
X4 = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, -8.0]]
Y6 = np.arange(12.0).reshape(2, 6).tolist()


def _lens(m, *v):
    return m.tensor(list(v))


SEGMENT_CASES = {
    "offsets": lambda m: m.segment_reduce(m.tensor(X4), "sum", offsets=_lens(m, 0, 1, 1, 4)),
    "batched-axis1": lambda m: m.segment_reduce(
        m.tensor(Y6), "sum", lengths=m.tensor([[2, 4], [3, 3]]), axis=-1
    ),
    "batched-mean-initial": lambda m: m.segment_reduce(
        m.tensor(Y6), "mean", lengths=m.tensor([[2, 4], [3, 3]]), axis=1, initial=1.0
    ),
    "batched-offsets": lambda m: m.segment_reduce(
        m.tensor(Y6), "sum", offsets=m.tensor([[0, 2, 6], [0, 0, 6]]), axis=1
    ),
    "int32-lengths": lambda m: m.segment_reduce(
        m.tensor(Y6, dtype=m.float64), "prod", lengths=m.tensor([1, 1], dtype=m.int32)
    ),
}


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod", "amax", "amin"])
@pytest.mark.parametrize("initial", [None, 2.0])
def test_segment_reduce_empty_segments_and_initial(reduce, initial):
    t, e = (
        m.segment_reduce(m.tensor(X4), reduce, lengths=_lens(m, 1, 0, 3), initial=initial)
        for m in (torch, ember)
    )
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)  # nan / inf for empty ones


@pytest.mark.parametrize("case", sorted(SEGMENT_CASES))
def test_segment_reduce_values(case):
    t = SEGMENT_CASES[case](torch)
    e = SEGMENT_CASES[case](ember)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("reduce", ["max", "min", "prod", "mean", "sum"])
@pytest.mark.parametrize("initial", [None, 2.5])
def test_segment_reduce_gradients(reduce, initial):
    # ties (max/min share their gradient) and a zero (prod)
    vals, lens, up = [2.0, 2.0, 1.0, 0.0, 3.0, 0.0], [3, 0, 3], [1.0, 2.0, 3.0]
    grads = []
    for m in (torch, ember):
        g = m.tensor(vals, requires_grad=True)
        m.segment_reduce(g, reduce, lengths=m.tensor(lens), initial=initial).backward(m.tensor(up))
        grads.append(g.grad.tolist())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "amax"])
def test_segment_reduce_gradcheck(reduce):
    x = ember.tensor(
        [[0.5, -1.0], [1.5, 2.0], [-0.7, 0.3]], dtype=ember.float64, requires_grad=True
    )
    lengths = ember.tensor([2, 0, 1])
    assert ember.autograd.gradcheck(
        lambda a: ember.segment_reduce(a, reduce, lengths=lengths, initial=0.25), (x,)
    )


SEGMENT_ERRORS = {
    "reduce": lambda m: m.segment_reduce(m.ones(2, 6), "avg", lengths=_lens(m, 1, 1)),
    "no-lengths": lambda m: m.segment_reduce(m.ones(2, 6), "sum"),
    "indices": lambda m: m.segment_reduce(m.ones(2, 6), "sum", indices=_lens(m, 0, 1)),
    "sums": lambda m: m.segment_reduce(m.ones(2, 6), "sum", lengths=_lens(m, 1, 2)),
    "axis": lambda m: m.segment_reduce(m.ones(2, 6), "sum", lengths=_lens(m, 1, 1), axis=1),
    "float-lengths": lambda m: m.segment_reduce(m.ones(2, 6), "sum", lengths=_lens(m, 1.0, 1.0)),
    "negative": lambda m: m.segment_reduce(m.ones(2, 6), "sum", lengths=_lens(m, -1, 3)),
    "int-data": lambda m: m.segment_reduce(
        m.ones(2, 6, dtype=m.int32), "sum", lengths=_lens(m, 1, 1)
    ),
}


@pytest.mark.parametrize("case", sorted(SEGMENT_ERRORS))
def test_segment_reduce_errors(case):
    expected = _error(SEGMENT_ERRORS[case], torch)
    assert expected[0] in ("RuntimeError", "NotImplementedError")
    assert _error(SEGMENT_ERRORS[case], ember) == expected


def test_segment_reduce_names():
    x = ember.ones(2, 3, names=("N", "C"), requires_grad=True)
    y = ember.segment_reduce(x, "sum", lengths=ember.tensor([2]))
    assert y.names == (None, "C") and y.tolist() == [[2.0, 2.0, 2.0]]
    y.sum().backward()
    assert x.grad.names == ("N", "C")
    z = ember.segment_reduce(
        x.align_to("C", "N"), "mean", lengths=ember.ones(3, 2, dtype=ember.int64), axis=1
    )
    assert z.names == ("C", None)
