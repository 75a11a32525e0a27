"""Everyday tensor idioms: f-strings on tensors, .item(), 0-d tensors as slice bounds,
boolean-mask assignment, @torch.no_grad() as a decorator; a linear regression."""

import torch

torch.manual_seed(0)
X = torch.randn(200, 3)
true_w = torch.tensor([1.5, -2.0, 0.5])
Y = X @ true_w + 0.1 * torch.randn(200)

n_train = torch.tensor(150)  # a 0-d tensor used as a slice bound
X_train, Y_train = X[:n_train], Y[:n_train]
X_val, Y_val = X[n_train:], Y[n_train:]
print(f"train {tuple(X_train.shape)} val {tuple(X_val.shape)}")

noisy = Y_train.clone()
noisy[noisy.abs() > 4] = 0.0  # boolean-mask assignment
print(f"clipped {(noisy == 0).sum().item()} outliers")

w = torch.zeros(3, requires_grad=True)
b = torch.zeros((), requires_grad=True)


@torch.no_grad()
def evaluate():
    pred = X_val @ w + b
    return ((pred - Y_val) ** 2).mean()


for step in range(40):
    loss = ((X_train @ w + b - Y_train) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad.zero_()
    b.grad = None
    if step % 5 == 0 or step == 39:
        val = evaluate()
        assert not val.requires_grad
        print(f"step {step:2d} val {val:.4f} loss: {loss:.4f}")

print(f"w = {w.detach()}")
print(f"max |w - true_w| = {(w - true_w).abs().max().item():.3f}")
k = torch.tensor(2)
print(f"w[k] = {w[k].item():.3f}, w[:k] = {w[:k].tolist()}")
