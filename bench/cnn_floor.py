"""The CNN step of issue 6 written straight in numpy, with no framework: how fast numpy's own
kernels can run it, next to ember's step and torch's.

gemm_bound.py shows that the CNN's matrix products take only about half of torch's step, so the
products alone do not rule out ember/torch <= 1. This script asks the next question: with every
product and every elementwise pass written by hand in numpy (channels-last activations, the
im2col columns of the first conv as contiguous planes, Winograd F(2x2, 3x3) for the second,
2x2 pooling with argmax masks from forward, nothing recorded, no Python objects per op), how fast
is the step? It runs the same step three ways:

1. ``numpy``: the hand-written step, as numpy runs it (BLAS on its threads, every elementwise pass
   on one core);
2. ``numpy, 2 halves on 2 threads``: the batch split in two and both halves stepped at once on two
   Python threads, BLAS on one thread each (numpy releases the GIL inside its kernels): what
   numpy's kernels reach when both cores do the elementwise work too, as torch's do;
3. ember's and torch's steps (bench_cnn.py's workload).

The hand-written step is checked against torch first (loss and every gradient). Each framework is
timed alone (median of ``--repeat`` steps).

Run: python bench/cnn_floor.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import ember
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/_timing.py, bench_cnn.py
from _timing import median_time

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs the oracle to print ratios
    torch = None

F32 = np.float32
# Winograd F(2, 3): B^T, G and A^T; the 2-D transforms are their Kronecker squares
_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], F32)
_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], F32)
_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], F32)
_GK = np.kron(_G, _G)  # (16, 9)
_AK = np.kron(_AT, _AT)  # (4, 16)
_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _combine(mat, planes, out) -> None:
    """out[i] = sum_j mat[i, j] * planes[j] for a matrix of 0 and +-1 (adds and subtracts)."""
    for i, row in enumerate(mat):
        terms = [(s, p) for s, p in zip(row, planes) if s != 0]
        s0, p0 = terms[0]
        if s0 == 1:
            out[i][...] = p0
        else:
            np.negative(p0, out=out[i])
        for s, p in terms[1:]:
            (np.add if s == 1 else np.subtract)(out[i], p, out=out[i])


def _pool(r):
    """2x2 max pooling of channels-last ``r`` (N, H, W, C): the maxima and three argmax masks."""
    n, h, w, c = r.shape
    v = r.reshape(n, h // 2, 2, w // 2, 2, c)
    v0, v1, v2, v3 = (v[:, :, i, :, j] for i, j in _CORNERS)
    m01, m23 = np.maximum(v0, v1), np.maximum(v2, v3)
    masks = (v1 > v0, v3 > v2, m23 > m01)
    return np.maximum(m01, m23, out=m01), masks


def _pool_backward(g, masks, shape):
    """The 2x2 max pooling's input gradient: ``g`` into each window's argmax."""
    c01, c23, c = masks
    nc = ~c
    hits = (nc > c01, nc & c01, c > c23, c & c23)  # a > b on bools: a and not b
    out = np.empty(shape, F32)
    n, h, w, ch = shape
    ov = out.reshape(n, h // 2, 2, w // 2, 2, ch)
    for (i, j), hit in zip(_CORNERS, hits):
        np.multiply(g, hit, out=ov[:, :, i, :, j])
    return out


class NumpyCNN:
    """bench_cnn.py's CNN with torch model ``tmodel``'s weights, stepped (SGD, momentum 0.9) on
    the inputs ``x`` (N, 1, 28, 28) and labels ``y`` by hand-written numpy."""

    def __init__(self, tmodel, x, y) -> None:
        sd = {k: v.detach().numpy().astype(F32) for k, v in tmodel.state_dict().items()}
        self.params = [
            sd["0.weight"].reshape(32, 9).copy(),
            sd["0.bias"].copy(),
            sd["3.weight"].copy(),  # (64, 32, 3, 3)
            sd["3.bias"].copy(),
            sd["7.weight"].copy(),  # (128, 3136)
            sd["7.bias"].copy(),
            sd["9.weight"].copy(),
            sd["9.bias"].copy(),
        ]
        self.bufs = None
        self.x = np.ascontiguousarray(x, F32)
        self.y = np.asarray(y)

    def _conv2(self, p1):
        """Winograd forward of the second conv on channels-last ``p1`` (N, 14, 14, 32): its
        output (N, 14, 14, 64) without bias, and (V, U) for the backward."""
        n = p1.shape[0]
        pad = np.zeros((n, 16, 16, 32), F32)
        pad[:, 1:15, 1:15] = p1
        e = np.empty((4, n, 7, 16, 32), F32)  # B^T over rows
        _combine(_BT, [pad[:, r : r + 14 : 2] for r in range(4)], e)
        v = np.empty((4, 4, n, 7, 7, 32), F32)  # then B over columns
        for r in range(4):
            _combine(_BT, [e[r][:, :, s : s + 14 : 2] for s in range(4)], v[r])
        v = v.reshape(16, -1, 32)  # (16, T, C)
        w = self.params[2]
        u = (_GK @ w.reshape(64 * 32, 9).T).reshape(16, 64, 32).transpose(0, 2, 1)  # (16, C, O)
        y = (_AK @ np.matmul(v, u).reshape(16, -1)).reshape(2, 2, n, 7, 7, 64)
        return y, v, u

    def _conv2_input_grad(self, dv, n):
        """The adjoint of the input transform: dV (16, T, C) -> the gradient of ``p1``."""
        dv = dv.reshape(4, 4, n, 7, 7, 32)
        de = np.zeros((4, n, 7, 16, 32), F32)
        tmp = np.empty((4, n, 7, 7, 32), F32)
        for r in range(4):
            _combine(_BT.T, list(dv[r]), tmp)
            for s in range(4):
                de[r][:, :, s : s + 14 : 2] += tmp[s]
        dpad = np.zeros((n, 16, 16, 32), F32)
        rows = np.empty((4, n, 7, 16, 32), F32)
        _combine(_BT.T, list(de), rows)
        for r in range(4):
            dpad[:, r : r + 14 : 2] += rows[r]
        return dpad[:, 1:15, 1:15]

    def step(self, lr: float = 0.01, momentum: float = 0.9):
        """One training step; returns (loss, gradients in ``params`` order)."""
        w1, b1, _w2, b2, w3, b3, w4, b4 = self.params
        n = self.x.shape[0]
        # conv1 (1 -> 32): im2col as 9 contiguous planes, one GEMM into channels-last (P, 32)
        xpad = np.zeros((n, 30, 30), F32)
        xpad[:, 1:29, 1:29] = self.x.reshape(n, 28, 28)
        cols = np.empty((9, n, 28, 28), F32)
        for k in range(9):
            cols[k] = xpad[:, k // 3 : k // 3 + 28, k % 3 : k % 3 + 28]
        cols = cols.reshape(9, -1)
        a1 = cols.T @ w1.T
        a1 += b1
        r1 = np.maximum(a1, np.zeros_like(a1)).reshape(n, 28, 28, 32)
        p1, masks1 = _pool(r1)
        # conv2 (32 -> 64), Winograd; the four output corners of each tile are interleaved
        y, v, u = self._conv2(p1)
        a2 = np.empty((n, 14, 14, 64), F32)
        a2v = a2.reshape(n, 7, 2, 7, 2, 64)
        for i, j in _CORNERS:
            np.add(y[i, j], b2, out=a2v[:, :, i, :, j])
        r2 = np.maximum(a2, np.zeros_like(a2))
        p2, masks2 = _pool(r2)
        flat = np.ascontiguousarray(p2.transpose(0, 3, 1, 2)).reshape(n, 3136)  # torch's order
        h = flat @ w3.T
        h += b3
        hr = np.maximum(h, np.zeros_like(h))
        z = hr @ w4.T
        z += b4
        # cross-entropy (mean) and its gradient
        zm = z - z.max(1, keepdims=True)
        ez = np.exp(zm)
        s = ez.sum(1, keepdims=True)
        rows = np.arange(n)
        loss = float((np.log(s[:, 0]) - zm[rows, self.y]).mean())
        dz = ez / s
        dz[rows, self.y] -= 1
        dz /= n
        # backward
        gw4, gb4 = dz.T @ hr, dz.sum(0)
        dh = dz @ w4
        dh *= h > 0
        gw3, gb3 = dh.T @ flat, dh.sum(0)
        dp2 = np.ascontiguousarray((dh @ w3).reshape(n, 64, 7, 7).transpose(0, 2, 3, 1))
        da2 = _pool_backward(dp2, masks2, (n, 14, 14, 64))
        da2 *= r2 > 0
        # Winograd backward: dM = A dY A^T from the four de-interleaved corners
        corners = np.empty((2, 2, n, 7, 7, 64), F32)
        da2v = da2.reshape(n, 7, 2, 7, 2, 64)
        for i, j in _CORNERS:
            corners[i, j] = da2v[:, :, i, :, j]
        gb2 = corners.reshape(4, -1, 64).sum((0, 1))
        dm = (_AK.T @ corners.reshape(4, -1)).reshape(16, -1, 64)
        du = np.matmul(v.transpose(0, 2, 1), dm)  # (16, C, O)
        gw2 = (du.transpose(0, 2, 1).reshape(16, 64 * 32).T @ _GK).reshape(64, 32, 3, 3)
        dp1 = self._conv2_input_grad(np.matmul(dm, u.transpose(0, 2, 1)), n)
        da1 = _pool_backward(dp1, masks1, (n, 28, 28, 32)).reshape(-1, 32)
        da1 *= r1.reshape(-1, 32) > 0
        gw1, gb1 = da1.T @ cols.T, da1.sum(0)
        grads = [gw1, gb1, gw2, gb2, gw3, gb3, gw4, gb4]
        # SGD with momentum, torch's rule (the first step's buffer is the gradient)
        if self.bufs is None:
            self.bufs = [g.copy() for g in grads]
        else:
            for buf, g in zip(self.bufs, grads):
                buf *= momentum
                buf += g
        for p, buf in zip(self.params, self.bufs):
            p -= lr * buf
        return loss, grads


def check(tmodel, x, y) -> float:
    """The largest gradient error of the numpy step against torch's, relative to each
    gradient's largest entry (exits if the losses or gradients differ)."""
    loss, grads = NumpyCNN(tmodel, x.numpy(), y.numpy()).step(lr=0.0)
    tmodel.zero_grad()
    tloss = torch.nn.functional.cross_entropy(tmodel(x), y)
    tloss.backward()
    errs = [
        float(np.abs(g.reshape(p.shape) - p.grad.numpy()).max() / np.abs(p.grad.numpy()).max())
        for g, p in zip(grads, tmodel.parameters())
    ]
    if abs(loss - tloss.item()) > 1e-5 or max(errs) > 1e-4:
        raise SystemExit(f"numpy step differs from torch: loss {loss} vs {tloss.item()}, {errs}")
    return max(errs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    if torch is None:
        raise SystemExit("bench needs torch installed (pip install -e '.[test]') to print ratios")
    import bench_cnn
    from threadpoolctl import threadpool_limits

    torch.manual_seed(0)
    x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
    tmodel = bench_cnn.cnn(torch)
    err = check(tmodel, x, y)
    whole = NumpyCNN(tmodel, x.numpy(), y.numpy())
    halves = [NumpyCNN(tmodel, x[k::2].numpy(), y[k::2].numpy()) for k in (0, 1)]
    pool = ThreadPoolExecutor(1)

    def both_halves():
        other = pool.submit(halves[1].step)
        halves[0].step()
        other.result()

    times = {"numpy (hand-written step)": median_time(whole.step, args.repeat)}
    with threadpool_limits(1, user_api="blas"):
        times["numpy, 2 halves on 2 threads"] = median_time(both_halves, args.repeat)
    pool.shutdown()
    for m in (ember, torch):
        times[m.__name__] = median_time(
            bench_cnn.workload(m, bench_cnn.cnn, tmodel, x, y), args.repeat
        )
    t_torch = times["torch"]
    print(f"CNN step of issue 6, batch 64 (numpy step checked against torch: max error {err:.1e})")
    print(f"{'step':32s} {'time':>9s} {'/torch':>7s}")
    for name, t in times.items():
        print(f"{name:32s} {t * 1e3:7.2f}ms {t / t_torch:7.2f}")
    print(
        f"(torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__}, "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')})"
    )


if __name__ == "__main__":
    main()
