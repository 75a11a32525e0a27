"""The fused LSTM/GRU step kernels (core/kernels/fused_rnn.py) checked on the host: each C body is
compiled with the machine's C++ compiler into a loop over the elements, with the signature its
``PARAMS`` declare, and the recurrent layers' fused drivers run with them on numpy arrays.
Outputs, states and every gradient must match the generic path's (padded, packed, bidirectional,
under no_grad, both dtypes). Only cupy's own compilation of the same text waits for a GPU
(tests/test_nn_rnn.py's real-cuda rows run the layers there)."""

import ember
import numpy as np
import pytest
from ember.core.kernels import fused_rnn
from ember.core.ops import recurrent
from host_kernels import CXX, kernel_sets

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler to build the host harness")


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """{(mode, dtype): StepKernels backed by the host-compiled kernel bodies}."""
    out = {}
    for mode, bodies in (
        ("lstm", [fused_rnn.LSTM_STEP, fused_rnn.LSTM_STEP_BACKWARD]),
        ("gru", [fused_rnn.GRU_STEP, fused_rnn.GRU_STEP_BACKWARD]),
    ):
        workdir = tmp_path_factory.mktemp(mode)
        sets = kernel_sets(
            bodies, fused_rnn.PARAMS, workdir, lambda *k: fused_rnn.StepKernels(np, *k)
        )
        out.update({(mode, dt): k for dt, k in sets.items()})
    return out


def _run(ctor, dtype, packed, seed=0):
    """Outputs and final states of a recurrent layer under no_grad, then with grad, and every
    gradient (non-uniform upstream)."""
    rng = np.random.default_rng(seed)
    ember.manual_seed(seed)
    mod = ctor().to(getattr(ember, np.dtype(dtype).name))
    x = ember.tensor(rng.standard_normal((5, 3, 4)).astype(dtype), requires_grad=True)
    layers = mod.num_layers * (2 if mod.bidirectional else 1)
    h0 = ember.tensor(rng.standard_normal((layers, 3, 6)).astype(dtype), requires_grad=True)
    c0 = ember.tensor(rng.standard_normal(h0.shape).astype(dtype), requires_grad=True)
    lstm = isinstance(mod, ember.nn.LSTM)
    states = (h0, c0) if lstm else h0

    def forward():
        inp = x
        if packed:
            inp = ember.nn.utils.rnn.pack_padded_sequence(x, [5, 3, 2], enforce_sorted=False)
        out, hid = mod(inp, states)
        if packed:
            out = ember.nn.utils.rnn.pad_packed_sequence(out)[0]
        return (out, *hid) if lstm else (out, hid)

    with ember.no_grad():  # inference: the kernels keep nothing for a backward
        inferred = [t.numpy() for t in forward()]
    outs = forward()
    ws = [ember.tensor(rng.standard_normal(t.shape).astype(dtype)) for t in outs]
    sum((t * w).sum() for t, w in zip(outs, ws)).backward()
    leaves = [x, h0, *((c0,) if lstm else ()), *mod.parameters()]
    return inferred + [t.detach().numpy() for t in outs] + [t.grad.numpy() for t in leaves]


LAYERS = {
    "lstm": lambda: ember.nn.LSTM(4, 6),
    "lstm-2-layer-bidirectional": lambda: ember.nn.LSTM(4, 6, num_layers=2, bidirectional=True),
    "gru": lambda: ember.nn.GRU(4, 6),
    "gru-2-layer-bidirectional": lambda: ember.nn.GRU(4, 6, num_layers=2, bidirectional=True),
    "gru-no-bias": lambda: ember.nn.GRU(4, 6, bias=False),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("packed", [False, True], ids=["padded", "packed"])
@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_fused_steps_match_the_generic_path(host_kernels, monkeypatch, layer, packed, dtype):
    expected = _run(LAYERS[layer], dtype, packed)
    # a run on other data: the buffers numpy recycles for the fused run then hold other values,
    # so an output the kernels fail to write cannot pass by holding the expected run's values
    _run(LAYERS[layer], dtype, packed, seed=1)
    calls = []

    def kernels(xp, dt, mode):
        calls.append(mode)
        return host_kernels[mode, np.dtype(dt)]

    monkeypatch.setattr(recurrent, "step_kernels", kernels)
    got = _run(LAYERS[layer], dtype, packed)
    assert set(calls) == {layer.split("-")[0]}, "the fused driver did not run"
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"result {k}")


def test_fused_steps_only_for_cupy_float_arrays():
    # numpy (and the strict test backend, which has no ElementwiseKernel) keep the generic path
    assert fused_rnn.step_kernels(np, np.dtype(np.float32), "lstm") is None

    class FakeCupy:
        def ElementwiseKernel(self, in_params, out_params, body, name):
            return (in_params, out_params, body, name)

    fake = FakeCupy()
    assert fused_rnn.step_kernels(fake, np.dtype(np.float16), "gru") is None
    for mode, body in (("lstm", fused_rnn.LSTM_STEP), ("gru", fused_rnn.GRU_STEP)):
        k = fused_rnn.step_kernels(fake, np.dtype(np.float64), mode)
        assert isinstance(k, fused_rnn.StepKernels)
        assert k._kernels[0][2] == body  # the text cupy compiles is the text tested here
    fused_rnn._CACHE.clear()
