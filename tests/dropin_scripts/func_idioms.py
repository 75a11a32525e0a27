"""torch.func idioms: per-sample gradients (vmap of grad over functional_call), jacrev / jacfwd /
hessian of a small MLP, and a MAML inner loop with autograd.grad(create_graph=True)."""

# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, vmap

torch.manual_seed(0)
rs = np.random.RandomState(4)


def arr(*shape, scale=1.0):
    return torch.tensor(rs.normal(0, scale, shape), dtype=torch.float32)


model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(arr(*p.shape, scale=0.5))
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}
x, y = arr(6, 3), torch.tensor(rs.randint(0, 2, 6))


def loss_fn(params, buffers, sample, target):
    out = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
    return F.cross_entropy(out, target.unsqueeze(0))


per_sample = vmap(grad(loss_fn), in_dims=(None, None, 0, 0))(params, buffers, x, y)
for k, g in per_sample.items():
    print("per-sample", k, tuple(g.shape), round(g.sum().item(), 6))
model.zero_grad()
F.cross_entropy(model(x), y, reduction="sum").backward()
print(
    "matches autograd",
    all(
        torch.allclose(per_sample[k].sum(0), p.grad, atol=1e-5) for k, p in model.named_parameters()
    ),
)
g, v = grad_and_value(loss_fn)(params, buffers, x[0], y[0])
print("grad_and_value", round(v.item(), 6), round(g["0.weight"].norm().item(), 6))


def f(inp):
    return functional_call(model, params, (inp,))


xi = arr(3)
jr, jf = jacrev(f)(xi), jacfwd(f)(xi)
print("jac", tuple(jr.shape), torch.allclose(jr, jf, atol=1e-6), round(jr.sum().item(), 6))
h = hessian(lambda inp: f(inp).pow(2).sum())(xi)
print("hessian", tuple(h.shape), torch.allclose(h, h.T, atol=1e-5), round(h.trace().item(), 6))
bj = vmap(jacrev(f))(x)
print("batched jac", tuple(bj.shape), round(bj.abs().sum().item(), 5))
jp = jacrev(lambda p: f(xi).sum() * 0 + functional_call(model, p, (xi,)).sum())(params)
print("jac wrt params", sorted(jp), tuple(jp["0.weight"].shape))

# MAML: sine regression tasks, one inner step with create_graph=True
net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
with torch.no_grad():
    for p in net.parameters():
        p.copy_(arr(*p.shape, scale=0.4))
meta_opt = torch.optim.Adam(net.parameters(), lr=5e-3)
inner_lr = 0.05
for it in range(60):
    meta_opt.zero_grad()
    meta_loss = 0.0
    for task in range(4):
        amp, phase = rs.uniform(0.5, 2.0), rs.uniform(0, 3)
        xs = torch.tensor(rs.uniform(-3, 3, (10, 1)), dtype=torch.float32)
        ys = amp * torch.sin(xs + phase)
        xq = torch.tensor(rs.uniform(-3, 3, (10, 1)), dtype=torch.float32)
        yq = amp * torch.sin(xq + phase)
        fast = dict(net.named_parameters())
        inner = F.mse_loss(functional_call(net, fast, (xs,)), ys)
        grads = torch.autograd.grad(inner, list(fast.values()), create_graph=True)
        fast = {k: w - inner_lr * g for (k, w), g in zip(fast.items(), grads)}
        meta_loss = meta_loss + F.mse_loss(functional_call(net, fast, (xq,)), yq)
    (meta_loss / 4).backward()
    meta_opt.step()
    if it % 10 == 0 or it == 59:
        print(f"meta it {it} loss: {meta_loss.item() / 4:.5f}")
