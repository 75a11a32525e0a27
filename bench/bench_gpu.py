"""The training steps of bench_cnn / bench_lstm / bench_transformer on one device, ember vs torch.

Both frameworks build their workload with the device as default device (so every parameter,
buffer and input lives there), start from the same weights, and each step is timed to the end of
its device work (``synchronize()`` after the step). Printed: median step times, ember/torch, and
the achieved TFLOP/s of the step's matrix products (the nominal count: direct convolutions, every
product forward and backward); the CNN once more with ember's 3x3 convs on Winograd (as on the cpu),
and each once more without ember's fused cupy kernels (core/kernels/: the recurrent step, layer
norm, attention's softmax, 2x2 max pooling, im2col/col2im, the SGD update). The first losses of
both frameworks are compared.

Run: python bench/bench_gpu.py --device cuda [--repeat N]   (``--device cpu`` checks it anywhere)
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cnn
import bench_lstm
import bench_transformer
import ember
from _timing import median_time

try:
    import torch
except ImportError:  # pragma: no cover - the comparison needs the oracle
    torch = None


def _cnn_gflop() -> float:
    """bench_cnn's CNN, batch 64: direct-convolution products, forward and backward."""
    n = 64
    conv1 = 2 * 32 * 9 * n * 28 * 28  # forward; its weight gradient as much (no input grad)
    conv2 = 2 * 64 * 288 * n * 14 * 14  # forward, weight and input gradients each
    fc1 = 2 * n * 3136 * 128
    return (2 * conv1 + 3 * conv2 + 3 * fc1) / 1e9


def _jobs():
    """(label, builder(m) -> step, nominal GFLOP) for each workload."""
    from gemm_bound import _lstm, _transformer, gflop

    rng = np.random.default_rng(0)
    x_cnn = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    y_cnn = rng.integers(0, 10, 64)
    x_lstm = rng.standard_normal((bench_lstm.BATCH, bench_lstm.STEPS, bench_lstm.IN))
    x_lstm = x_lstm.astype(np.float32)
    y_lstm = rng.integers(0, bench_lstm.CLASSES, bench_lstm.BATCH)
    shared = {}

    def cnn(m):
        if m is torch:
            shared["cnn"] = bench_cnn.cnn(torch)
        xt, yt = torch.tensor(x_cnn), torch.tensor(y_cnn)
        return bench_cnn.workload(m, bench_cnn.cnn, shared["cnn"], xt, yt)

    def lstm(m):
        net = bench_lstm._Net(m, "lstm")
        if m is torch:
            shared["lstm"] = copy.deepcopy(net)  # the initial weights (torch's net then trains)
        else:
            bench_lstm._copy(shared["lstm"], net)
        return bench_lstm.workload(m, net, x_lstm, y_lstm)

    def transformer(m):
        if m is torch:
            step, model = bench_transformer.workload(torch)
            shared["tr"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
            return step
        return bench_transformer.workload(ember, shared["tr"])[0]

    return [
        ("CNN step (issue 6), batch 64 1x28x28", cnn, _cnn_gflop(), contextlib.nullcontext),
        ("  the same, ember's 3x3 convs on Winograd", cnn, _cnn_gflop(), _winograd),
        ("  the same, without ember's fused kernels", cnn, _cnn_gflop(), _no_fused_kernels),
        ("LSTM(64->256) step (issue 7), 32x50", lstm, gflop(_lstm()), contextlib.nullcontext),
        ("  the same, without ember's fused kernels", lstm, gflop(_lstm()), _no_fused_kernels),
        (
            "Transformer LM step (2L d256 h4, 16x128)",
            transformer,
            gflop(_transformer()),
            contextlib.nullcontext,
        ),
        (
            "  the same, without ember's fused kernels",
            transformer,
            gflop(_transformer()),
            _no_fused_kernels,
        ),
    ]


@contextlib.contextmanager
def _swapped(module: str, name: str, value):
    """``ember.<module>.<name>`` replaced by ``value`` for the block."""
    import importlib

    mod = importlib.import_module(f"ember.{module}")
    old = getattr(mod, name)
    setattr(mod, name, value)
    try:
        yield
    finally:
        setattr(mod, name, old)


def _winograd():
    """ember's 3x3 convolutions on Winograd wherever it fits, as on the cpu (on cupy they take
    im2col by default: Winograd saves flops but costs ~30 more launches and three host syncs per
    conv)."""
    from ember.core.ops import convolution

    return _swapped("core.ops.convolution", "_use_winograd", convolution._winograd_fits)


@contextlib.contextmanager
def _no_fused_kernels():
    """ember without the fused cupy kernels of core/kernels/ (the recurrent step, layer norm,
    attention's softmax, 2x2 max pooling, im2col/col2im, the SGD/Adam updates): what they gain
    on a GPU (on the cpu the generic paths run anyway)."""
    off = lambda *args: None
    with (
        _swapped("core.ops.recurrent", "step_kernels", off),
        _swapped("core.ops.normalization", "layer_norm_kernels", off),
        _swapped("core.kernels.fused_optim", "_kernel", off),
        _swapped("core.ops.pooling", "max_pool_2x2_kernels", off),
        _swapped("nn._attention", "attention_softmax_kernels", off),
        _swapped("core.kernels.im2col", "im2col_kernels", off),
        _swapped("core.ops.convolution", "im2col_kernels", off),
    ):
        yield


@contextlib.contextmanager
def _default_device(m, device: str):
    old = m.get_default_device() if m is ember else None
    m.set_default_device(device)
    try:
        yield
    finally:
        m.set_default_device(old if m is ember else None)


def _sync(m, device: str):
    if device.startswith("cuda"):
        return m.cuda.synchronize
    return lambda: None


def _time_both(build, variant, args):
    """({framework: median step seconds}, {framework: first loss}) of one workload."""
    times, losses = {}, {}
    for m in (torch, ember):  # torch first: ember copies its weights
        with (
            _default_device(m, args.device),
            variant() if m is ember else contextlib.nullcontext(),
        ):
            step = build(m)
            sync = _sync(m, args.device)

            def timed(step=step, sync=sync):
                loss = step()
                sync()
                return loss

            losses[m] = float(timed().item())
            times[m] = median_time(timed, args.repeat, args.warmup)
    return times, losses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    if torch is None:
        raise SystemExit("bench needs torch installed to print ratios")
    print(f"{'workload':42s} {'ember':>9s} {'torch':>9s} {'ratio':>6s} {'TFLOP/s e/t':>12s}")
    for label, build, gflop, variant in _jobs():
        try:
            times, losses = _time_both(build, variant, args)
        except Exception as e:  # noqa: BLE001 - one failing row (a kernel that does not compile,
            # say) must not cost the others' timings on a GPU lent for minutes
            print(f"{label:42s} failed: {type(e).__name__}: {e}", flush=True)
            continue
        te, tt = times[ember], times[torch]
        if abs(losses[ember] - losses[torch]) > 1e-3 * max(1.0, abs(losses[torch])):
            print(
                f"  ! first losses differ: ember {losses[ember]:.6f} torch {losses[torch]:.6f}",
                flush=True,
            )
        print(
            f"{label:42s} {te * 1e3:7.2f}ms {tt * 1e3:7.2f}ms {te / tt:6.2f} "
            f"{gflop / te / 1e3:5.2f}/{gflop / tt / 1e3:5.2f}",
            flush=True,  # a run cut short by its time limit still shows the rows it finished
        )
    print(f"(device {args.device}; torch {torch.__version__}; numpy {np.__version__})")


if __name__ == "__main__":
    main()
