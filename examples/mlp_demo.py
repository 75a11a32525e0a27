"""End-to-end demo: a 2-layer MLP trained with raw ember ops on synthetic data.

Three Gaussian blobs in 2-D are classified by a 2-16-3 MLP with cross-entropy and plain SGD; the
loss printed every few epochs falls and the accuracy rises. No nn, no optim: just tensors, the
tape and ``backward()``.

Run: python examples/mlp_demo.py [--epochs N]
"""

from __future__ import annotations

import argparse

import ember


def make_blobs(n_per_class: int = 200, seed: int = 0):
    """Points around three centres, labels 0..2."""
    g = ember.Generator().manual_seed(seed)
    centres = ember.tensor([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]])
    xs = [c + 0.7 * ember.randn(n_per_class, 2, generator=g) for c in centres]
    ys = [ember.full((n_per_class,), k, dtype=ember.int64) for k in range(3)]
    return ember.cat(xs), ember.cat(ys)


def main(epochs: int = 60, lr: float = 0.5) -> list[float]:
    ember.manual_seed(0)
    x, y = make_blobs()
    w1 = (ember.randn(2, 16) * 0.5).requires_grad_()
    b1 = ember.zeros(16, requires_grad=True)
    w2 = (ember.randn(16, 3) * 0.5).requires_grad_()
    b2 = ember.zeros(3, requires_grad=True)
    params = [w1, b1, w2, b2]
    losses = []
    for epoch in range(epochs):
        h = (x @ w1 + b1).tanh()
        logits = h @ w2 + b2
        loss = -logits.log_softmax(dim=1).gather(1, y.unsqueeze(1)).mean()
        loss.backward()
        with ember.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
        losses.append(loss.item())
        if epoch % 10 == 0 or epoch == epochs - 1:
            acc = (logits.argmax(dim=1) == y).float().mean()
            print(f"epoch {epoch:3d}  loss {loss.item():.4f}  accuracy {acc:.3f}")
    return losses


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--epochs", type=int, default=60)
    main(ap.parse_args().epochs)
