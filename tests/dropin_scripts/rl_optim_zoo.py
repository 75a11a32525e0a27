"""Optimizers, LR schedulers and distributions as PyTorch scripts use them: one regression model
handed from optimizer to optimizer (each with its scheduler, a state_dict round trip midway),
LBFGS with a strong-Wolfe closure, SparseAdam on a sparse embedding, REINFORCE with a Categorical
policy on a toy chain, and a Gaussian policy fitted by maximum likelihood (Independent Normal,
MultivariateNormal, a tanh-squashed TransformedDistribution, kl_divergence)."""

# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import distributions as D
from torch.optim import lr_scheduler as S

torch.manual_seed(0)
rs = np.random.RandomState(0)
X = torch.from_numpy(rs.randn(48, 5).astype(np.float32))
Y = torch.tanh(X @ torch.from_numpy(rs.randn(5, 1).astype(np.float32)))
model = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 1))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rs.randn(*p.shape).astype(np.float32) * 0.4))

O = torch.optim
phases = [
    ("sgd", lambda ps: O.SGD(ps, lr=0.2, momentum=0.9, nesterov=True), lambda o: S.StepLR(o, 4)),
    ("adam", lambda ps: O.Adam(ps, lr=0.02, amsgrad=True), lambda o: S.CosineAnnealingLR(o, 8)),
    ("adamw", lambda ps: O.AdamW(ps, lr=torch.tensor(0.01)), lambda o: S.ExponentialLR(o, 0.9)),
    (
        "nadam",
        lambda ps: O.NAdam(ps, lr=0.01, decoupled_weight_decay=True, weight_decay=0.01),
        None,
    ),
    ("radam", lambda ps: O.RAdam(ps, lr=0.01), lambda o: S.LinearLR(o, 0.5, total_iters=4)),
    ("rmsprop", lambda ps: O.RMSprop(ps, lr=0.005, centered=True, momentum=0.5), None),
    ("adagrad", lambda ps: O.Adagrad(ps, lr=0.05, lr_decay=0.01), None),
    ("adamax", lambda ps: O.Adamax(ps, lr=0.01), lambda o: S.OneCycleLR(o, 0.02, total_steps=8)),
    ("rprop", lambda ps: O.Rprop(ps, lr=0.001, etas=(0.4, 1.3)), None),
    ("asgd", lambda ps: O.ASGD(ps, lr=0.05, t0=3), None),
    ("adadelta", lambda ps: O.Adadelta(ps, lr=0.5), None),
]
for name, make_opt, make_sched in phases:
    opt = make_opt(model.parameters())
    sched = make_sched(opt) if make_sched else None
    for i in range(8):
        opt.zero_grad(set_to_none=i % 2 == 0)
        loss = F.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        if i == 3:  # resume from a checkpoint: the trajectory continues unchanged
            state = opt.state_dict()
            opt = make_opt(model.parameters())
            opt.load_state_dict(state)
            if sched is not None:
                sched_state = sched.state_dict()
                sched = make_sched(opt)
                sched.load_state_dict(sched_state)
    lr = sched.get_last_lr()[0] if sched is not None else opt.param_groups[0]["lr"]
    print(f"{name:9s} loss: {loss.item():.6f} lr {float(lr):.6f}")


def closure():
    lbfgs.zero_grad()
    out = F.mse_loss(model(X), Y)
    out.backward()
    return out


lbfgs = O.LBFGS(model.parameters(), lr=1, max_iter=10, line_search_fn="strong_wolfe")
for _ in range(3):
    print(f"lbfgs     loss: {lbfgs.step(closure).item():.6f}")

# scheduler stepped before the optimizer: torch's warning
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    S.StepLR(O.SGD(model.parameters(), lr=0.1), 2).step()
print("warned", [str(w.message)[:40] for w in caught])

# SparseAdam on an Embedding(sparse=True)
emb = nn.Embedding(10, 4, sparse=True)
with torch.no_grad():
    emb.weight.copy_(torch.from_numpy(rs.randn(10, 4).astype(np.float32)))
head = torch.from_numpy(rs.randn(4).astype(np.float32))
sparse_opt = O.SparseAdam(list(emb.parameters()), lr=0.1)
idx, target = torch.tensor([[1, 2, 3], [3, 4, 1]]), torch.tensor([0.5, -0.5])
for _ in range(10):
    sparse_opt.zero_grad()
    sparse_loss = ((emb(idx).sum(1) @ head - target) ** 2).mean()
    sparse_loss.backward()
    sparse_opt.step()
print(f"sparse loss {sparse_loss.item():.6f} grad sparse {emb.weight.grad.is_sparse}")

# REINFORCE on a 5-state chain (reward at the right end), fixed exploratory actions
policy = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
with torch.no_grad():
    for p in policy.parameters():
        p.copy_(torch.from_numpy(rs.randn(*p.shape).astype(np.float32) * 0.3))
pg_opt = O.Adam(policy.parameters(), lr=0.05)
actions = rs.randint(0, 2, size=(20, 8))
for ep in range(20):
    s, logps, ents, rewards = 0, [], [], []
    for t in range(8):
        dist = D.Categorical(logits=policy(F.one_hot(torch.tensor(s), 5).float()))
        a = torch.tensor(int(actions[ep, t]))
        assert dist.sample().shape == () and dist.sample().dtype == torch.int64
        logps.append(dist.log_prob(a))
        ents.append(dist.entropy())
        s = min(4, s + 1) if a.item() == 1 else max(0, s - 1)
        rewards.append(1.0 if s == 4 else 0.0)
    ret = torch.tensor(np.cumsum(rewards[::-1])[::-1].copy(), dtype=torch.float32)
    pg_loss = -(torch.stack(logps) * (ret - ret.mean())).sum() - 0.01 * torch.stack(ents).sum()
    pg_opt.zero_grad()
    pg_loss.backward()
    pg_opt.step()
probs = D.Categorical(logits=policy(torch.eye(5))).probs[:, 1]
print("p(right)", np.round(probs.detach().numpy(), 4).tolist())

# Gaussian policy fitted to demonstrations by maximum likelihood
demo = torch.from_numpy(np.tanh(rs.randn(64, 2) * 0.5 + [0.3, -0.2]).astype(np.float32))
mu = torch.zeros(2, requires_grad=True)
log_std = torch.zeros(2, requires_grad=True)
ml_opt = O.Adam([mu, log_std], lr=0.05)
for _ in range(40):
    squashed = D.TransformedDistribution(
        D.Normal(mu, log_std.exp()), [D.transforms.TanhTransform()]
    )
    nll = -squashed.log_prob(demo.clamp(-0.999, 0.999)).sum(-1).mean()
    ml_opt.zero_grad()
    nll.backward()
    ml_opt.step()
base = D.Independent(D.Normal(mu.detach(), log_std.detach().exp()), 1)
print(f"base lp {base.log_prob(torch.atanh(demo[:4].clamp(-0.999, 0.999))).mean().item():.5f}")
mvn = D.MultivariateNormal(mu.detach(), scale_tril=torch.diag(log_std.detach().exp()))
print(f"nll {nll.item():.5f} mvn lp {mvn.log_prob(torch.zeros(2)).item():.5f}")
print(f"kl {D.kl_divergence(mvn, D.MultivariateNormal(torch.zeros(2), torch.eye(2))).item():.5f}")
print("rsample", tuple(squashed.rsample((3,)).shape), base.batch_shape, base.event_shape)
