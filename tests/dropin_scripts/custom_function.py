"""A custom autograd.Function (ctx.save_for_backward, needs_input_grad) fitted with SGD."""

import torch


class ScaledSoftplus(torch.autograd.Function):
    """y = log(1 + exp(a * x)) / a, with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, a):
        ctx.save_for_backward(x, a)
        return torch.log1p(torch.exp(a * x)) / a

    @staticmethod
    def backward(ctx, grad_out):
        x, a = ctx.saved_tensors
        s = torch.sigmoid(a * x)
        gx = grad_out * s if ctx.needs_input_grad[0] else None
        ga = None
        if ctx.needs_input_grad[1]:
            y = torch.log1p(torch.exp(a * x)) / a
            ga = (grad_out * (x * s / a - y / a)).sum()
        return gx, ga


x = torch.randn(6, dtype=torch.double, requires_grad=True)
a = torch.tensor(1.5, dtype=torch.double, requires_grad=True)
ok = torch.autograd.gradcheck(ScaledSoftplus.apply, (x, a))
print(f"gradcheck {ok}")

torch.manual_seed(0)
inp = torch.linspace(-3, 3, 64)
target = torch.log1p(torch.exp(4.0 * inp)) / 4.0  # a softplus of sharpness 4
w = torch.tensor(1.0, requires_grad=True)
a = torch.tensor(0.5, requires_grad=True)
opt = torch.optim.SGD([w, a], lr=0.1)
for step in range(60):
    opt.zero_grad()
    pred = ScaledSoftplus.apply(w * inp, a)
    loss = ((pred - target) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 59:
        print(f"step {step} a {a.item():.3f} loss: {loss.item():.5f}")
