"""Graph neural networks by hand: an edge_index graph made undirected (unique over columns),
degrees by bincount and scatter_add_, a normalised sparse COO adjacency (coalesce, sparse.mm,
a row read off it), a GCN with index_select / index_add_ message passing and F.dropout, a GAT
whose per-node softmax uses scatter_reduce(amax, include_self=False); bool node masks."""

# ruff: noqa: PLR0402 - `import torch.nn as nn`: the spelling PyTorch scripts use
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rs = np.random.RandomState(0)
N, E, D, C = 40, 120, 8, 3
y_np = rs.randint(0, C, N)
x = torch.tensor(rs.normal(size=(N, D)) + 1.5 * np.eye(C, D)[y_np], dtype=torch.float32)
y = torch.from_numpy(y_np)
src = rs.randint(0, N, E)
dst = np.where(rs.rand(E) < 0.8, [rs.choice(np.flatnonzero(y_np == y_np[s])) for s in src], 0)
edge_index = torch.tensor(np.stack([src, dst]), dtype=torch.long)
loops = torch.arange(N).unsqueeze(0).repeat(2, 1)
edge_index = torch.unique(torch.cat([edge_index, edge_index.flip(0), loops], dim=1), dim=1)
row, col = edge_index
deg = torch.bincount(row, minlength=N).float()
same = torch.equal(deg, torch.zeros(N).scatter_add_(0, row, torch.ones(row.numel())))
print(f"edges {edge_index.shape[1]} max degree {int(deg.max())} degrees agree {same}")
dinv = deg.pow(-0.5)
dinv[torch.isinf(dinv)] = 0
w = dinv[row] * dinv[col]
A = torch.sparse_coo_tensor(edge_index, w, (N, N)).coalesce()
print(f"nnz {A._nnz()} coalesced {A.is_coalesced()} row 0 {A[0].coalesce().indices().tolist()}")
perm = torch.from_numpy(rs.permutation(N))
train_mask = torch.zeros(N, dtype=torch.bool)
train_mask[perm[:24]] = True
test_mask = ~train_mask


def arr(*shape):
    return torch.tensor(rs.normal(0, 0.3, shape), dtype=torch.float32)


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(D, 16), nn.Linear(16, C)

    def forward(self, x):
        h = F.dropout(F.relu(torch.sparse.mm(A, self.l1(x))), p=0.2, training=self.training)
        m = self.l2(h).index_select(0, col) * w.unsqueeze(-1)  # gather, then scatter to rows
        return torch.zeros(N, C).index_add_(0, row, m)


class GAT(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(arr(D, 16))
        self.a_src, self.a_dst = nn.Parameter(arr(16)), nn.Parameter(arr(16))
        self.out = nn.Linear(16, C)

    def forward(self, x):
        h = x @ self.W
        e = F.leaky_relu((h * self.a_src).sum(-1)[col] + (h * self.a_dst).sum(-1)[row], 0.2)
        emax = torch.zeros(N).scatter_reduce(0, row, e, reduce="amax", include_self=False)
        ex = (e - emax[row]).exp()
        alpha = ex / torch.zeros(N).scatter_add(0, row, ex)[row]
        alpha = F.dropout(alpha, 0.1, self.training)
        return self.out(F.elu(torch.zeros_like(h).index_add(0, row, alpha.unsqueeze(-1) * h[col])))


for Model in (GCN, GAT):
    model = Model()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(arr(*p.shape))
    opt = torch.optim.Adam(model.parameters(), lr=0.03, weight_decay=5e-4)
    for epoch in range(50):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x)[train_mask], y[train_mask])
        loss.backward()
        opt.step()
        if epoch % 10 == 0 or epoch == 49:
            print(f"{Model.__name__} epoch {epoch} loss: {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    acc = (pred[test_mask] == y[test_mask]).float().mean().item()
    print(f"{Model.__name__} test accuracy {acc:.3f}")
