"""Parity regressions of the hundred-and-seventh wave: realistic PyTorch programs (a hand-written
GCN/GAT and GraphSAGE on random graphs, REINFORCE / DQN / PPO on numpy environments, tabular
MLPs and DeepFM with early stopping, causal-conv/LSTM and TCN/Transformer forecasters, a BPR
recommender, SimCLR and MoCo) run under torch and under ``ember run``, and the idioms they use
probed op by op against torch. It found:

* a sparse tensor refusing ``a[i]``, ``a[:, j]``, ``a[i, j]``, ``a[None, i]``, ``a.select``,
  ``ember.select`` and ``unbind`` (torch selects: a COO answer, flagged uncoalesced unless it
  keeps at most one entry or the input was compressed; dense once no sparse dim is left, the
  entries there summed; its own out-of-range texts for ``select()`` and for indexing);
* sparse + sparse of operands not both coalesced answered as their coalesced union (torch's
  kernel walks both entry lists once in stored order, equal heads summed: duplicates and
  unsorted runs stay, as ``adj + adj.t()`` shows before a coalesce);
* ``sum(dim, keepdim=True)`` of a sparse tensor refused (torch: the reduced tensor with each
  summed dim unsqueezed back, a sparse dim even where a dense one was summed);
* a sparse transpose of two dense dims done (torch refuses it), and the coalesced flag of a
  transpose (torch: set only when nothing is stored) and an unsqueeze (at most one entry);
* sparse ``mv`` / ``@ vector`` with a wrong-sized vector failing with addmm's text (torch's
  mv texts; a 3-D operand: matmul's reshape refusal);
* a distribution's validation errors (NaN logits, a negative scale ...) naming ``ember.Size``
  in the distribution's repr, and load_state_dict's size-mismatch text too (torch.Size);
* ``nn.Transformer.generate_square_subsequent_mask`` in float32 under a float64 default dtype
  (torch: the default dtype);
* the optimizers' ``step`` (and ASGD's eta/mu, NAdam's mu_product) state in float32 under a
  float64 default dtype (torch's _get_scalar_dtype: float64 then).

Left: a sparse leaf's gradient through ``mm`` / ``matmul`` / ``addmm`` / ``spmm`` (torch: a
dense, unmasked gradient; ember keeps gradients on the stored values, masked like
``torch.sparse.mm``'s), ``smm``'s backward (torch has no derivative), slices / lists / bools
indexing a sparse tensor (torch's dispatcher NotImplementedError texts), ``topk``'s order among
equal values, Kumaraswamy's ``mode`` (torch's formula gives NaN).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly

_EI = [[0, 1, 1, 2, 3, 3, 0], [1, 0, 2, 1, 0, 3, 1]]  # (0, 1) stored twice: uncoalesced


def _inputs(m, coalesce: bool) -> dict:
    ei = m.tensor(_EI)
    ts = {
        "a": m.sparse_coo_tensor(ei, m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]), (4, 4)),
        "h": m.sparse_coo_tensor(ei, m.arange(14.0).view(7, 2), (4, 4, 2)),  # a dense dim
        "v": m.sparse_coo_tensor(m.tensor([[0, 2, 2]]), m.tensor([1.0, 2.0, 3.0]), (4,)),
        "i": m.sparse_coo_tensor(m.tensor([[0, 1, 0]]), m.tensor([1, 2, 3]), (2,)),
        "b": m.sparse_coo_tensor(m.tensor([[0, 1, 0]]), m.tensor([True, False, True]), (2,)),
        "z": m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.long), m.zeros(0), (3, 3)),
    }
    if coalesce:
        ts = {k: t.coalesce() for k, t in ts.items()}
    ts["c"] = ts["a"].to_dense().to_sparse_csr()
    return ts


def _describe(r):
    if isinstance(r, tuple):
        return tuple(_describe(x) for x in r)
    if not r.is_sparse:
        return ("dense", str(r.dtype).split(".")[-1], tuple(r.shape), r.tolist())
    return (
        tuple(r.shape),
        r.is_coalesced(),
        r.sparse_dim(),
        r.dense_dim(),
        r._indices().tolist(),
        r._values().tolist(),
        r.to_dense().tolist(),
    )


def _outcome(fn, m):
    err, r = run_quietly(fn, m)
    if err is not None:
        return type(err).__name__, str(err)
    return "ok", _describe(r)


SELECTS = [
    lambda m, t: t["a"][1],
    lambda m, t: t["a"][-1],
    lambda m, t: t["a"][:, 1],
    lambda m, t: t["a"][..., 1],
    lambda m, t: t["a"][1, ...],
    lambda m, t: t["a"][0, 1],  # no sparse dim left: a dense 0-d sum of both stored (0, 1)
    lambda m, t: t["a"][(1,)],
    lambda m, t: t["a"][np.int64(2)],
    lambda m, t: t["a"][m.tensor(1)],
    lambda m, t: t["a"][m.tensor(1, dtype=m.int32), 0],
    lambda m, t: t["a"][None],
    lambda m, t: t["a"][None, 1],
    lambda m, t: t["a"][1, None],
    lambda m, t: t["a"][:, :, None],
    lambda m, t: t["a"][None, :, 1],
    lambda m, t: t["a"][None, None, 3, 0],
    lambda m, t: t["a"][..., None, 2],
    lambda m, t: t["a"].select(0, 1),
    lambda m, t: t["a"].select(1, 1),
    lambda m, t: t["a"].select(-1, -1),  # one entry: flagged coalesced
    lambda m, t: t["a"].select(0, m.tensor(1)),
    lambda m, t: m.select(t["a"], 1, 0),
    lambda m, t: t["a"].unbind(0),
    lambda m, t: m.unbind(t["a"], 1),
    lambda m, t: t["h"][1],
    lambda m, t: t["h"][:, :, 0],
    lambda m, t: t["h"].select(2, 1),
    lambda m, t: m.select(t["h"], -1, 0),
    lambda m, t: t["h"][1, 0],
    lambda m, t: t["h"][0, 1, 1],
    lambda m, t: t["h"][1, :, 1],
    lambda m, t: t["h"][0, :, None, 1],
    lambda m, t: t["h"][0, 1, None],
    lambda m, t: t["v"][2],  # duplicates summed
    lambda m, t: t["v"][1],
    lambda m, t: t["v"][-2],
    lambda m, t: m.unbind(t["v"]),
    lambda m, t: t["i"][0],
    lambda m, t: t["b"][0],
    lambda m, t: t["b"][1],
    lambda m, t: t["z"][1],
    lambda m, t: t["z"][1, 2],
    lambda m, t: t["c"][1],  # a compressed input answers in COO, coalesced
    lambda m, t: t["c"][:, 1],
    lambda m, t: t["c"].select(1, 1),
    lambda m, t: t["c"][0, 1],
    # errors: torch's texts
    lambda m, t: t["a"][5],
    lambda m, t: t["a"][-5],
    lambda m, t: t["a"][:, 9],
    lambda m, t: t["a"][1, 2, 3],
    lambda m, t: t["a"].select(0, 4),
    lambda m, t: t["a"].select(0, -5),
    lambda m, t: t["a"].select(2, 0),
]


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("case", range(len(SELECTS)))
def test_sparse_select_and_int_indexing(case, coalesce):
    def fn(m):
        return SELECTS[case](m, _inputs(m, coalesce))

    assert _outcome(fn, ember) == _outcome(fn, torch)


def test_sparse_row_of_a_normalised_adjacency():
    # GraphSAGE / GCN code reads one node's neighbours off the sparse adjacency
    def fn(m):
        adj = m.sparse_coo_tensor(m.tensor(_EI), m.ones(7), (4, 4)).coalesce()
        deg = m.sparse.sum(adj, 1).to_dense()
        norm = m.sparse_coo_tensor(adj.indices(), adj.values() / deg[adj.indices()[0]], (4, 4))
        row = norm[1].coalesce()
        return row.indices(), row.values(), m.sparse.mm(norm, m.eye(4))[1]

    (te, tr), (ee, er) = run_quietly(fn, torch), run_quietly(fn, ember)
    assert te is None and ee is None, (te, ee)
    for t, e in zip(tr, er):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


def test_selected_entries_keep_the_values_graph():
    # torch has no sparse select backward; ember's answer is ember ops on the values
    v = ember.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], requires_grad=True)
    a = ember.sparse_coo_tensor(ember.tensor(_EI), v, (4, 4))
    a[0, 1].backward()
    assert v.grad.tolist() == [1.0, 0, 0, 0, 0, 0, 1.0]


def test_other_sparse_indexing_still_refused():
    a = ember.sparse_coo_tensor(ember.tensor(_EI), ember.ones(7), (4, 4))
    for key in (slice(0, 1), [1], slice(None), Ellipsis, True, 1.0):
        with pytest.raises(RuntimeError, match="sparse"):
            a[key]


def _sparse_pair(m, n1, n2, dense, coalesce, seed):
    rs = np.random.RandomState(seed)
    shape = (3, 3, 2) if dense else (3, 3)
    out = []
    for n, c in zip((n1, n2), coalesce):
        vals = rs.randint(1, 9, (n, 2) if dense else n).astype(np.float32)
        t = m.sparse_coo_tensor(m.tensor(rs.randint(0, 3, (2, n))), m.tensor(vals), shape)
        out.append(t.coalesce() if c else t)
    return out


ADDS = [
    lambda m, a, b: a + b,
    lambda m, a, b: a - b,
    lambda m, a, b: m.add(a, b, alpha=2),
    lambda m, a, b: a.clone().add_(b),
    lambda m, a, b: a + a.t() if a.dim() == 2 else a + a,  # symmetrising an adjacency
]


@pytest.mark.parametrize("coalesce", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("case", range(len(ADDS)))
def test_sparse_add_entries_as_torch_merges_them(case, dense, coalesce):
    # torch walks both entry lists once, equal heads summed: uncoalesced operands give
    # duplicates and unsorted runs, not the coalesced union
    def fn(m):
        results = []
        for seed, (n1, n2) in enumerate([(5, 4), (7, 0), (0, 3), (6, 6)]):
            a, b = _sparse_pair(m, n1, n2, dense, coalesce, seed)
            results.append(ADDS[case](m, a, b))
        return tuple(results)

    assert _outcome(fn, ember) == _outcome(fn, torch)


def test_sparse_add_reaches_both_values():
    def fn(m):
        v = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = m.tensor([5.0, 6.0], dtype=m.float64, requires_grad=True)
        a = m.sparse_coo_tensor(m.tensor([[0, 1, 0]]), v, (3,))
        b = m.sparse_coo_tensor(m.tensor([[1, 2]]), w, (3,))
        r = a - b
        (r.to_dense() * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum().backward()
        return _describe(r), v.grad.tolist(), w.grad.tolist()

    assert fn(ember) == fn(torch)


SUMS = [
    lambda m, t: t["a"].sum(dim=1, keepdim=True),  # a degree column
    lambda m, t: t["a"].sum(0, True),
    lambda m, t: m.sum(t["a"], -1, keepdim=True),
    lambda m, t: t["a"].sum((0, 1), keepdim=True),
    lambda m, t: t["a"].sum(None, keepdim=True),
    lambda m, t: t["a"].sum(1, keepdim=True, dtype=m.float64),
    lambda m, t: t["h"].sum(2, keepdim=True),  # torch makes the kept dense dim a sparse one
    lambda m, t: t["h"].sum(1, keepdim=True),
    lambda m, t: t["h"].sum((0, 2), keepdim=True),
    lambda m, t: t["h"].sum((1, 0), True),
    lambda m, t: t["h"].sum((0, 0), keepdim=True),
    lambda m, t: t["a"].sum(2, keepdim=True),
]


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("case", range(len(SUMS)))
def test_sparse_sum_keepdim(case, coalesce):
    def fn(m):
        return SUMS[case](m, _inputs(m, coalesce))

    assert _outcome(fn, ember) == _outcome(fn, torch)


MVS = [
    lambda m, t: m.mv(t["a"], m.ones(4)),
    lambda m, t: m.mv(t["a"], m.ones(3)),
    lambda m, t: m.mv(t["a"], m.ones(4, 1)),
    lambda m, t: t["a"] @ m.ones(3),
    lambda m, t: t["a"].mv(m.ones(4, dtype=m.float64)),
    lambda m, t: m.mv(t["c"], m.ones(3)),
    lambda m, t: t["c"] @ m.ones(4),
    lambda m, t: t["h"] @ m.ones(2),
]


@pytest.mark.parametrize("case", range(len(MVS)))
def test_sparse_matrix_vector_checks(case):
    def fn(m):
        return MVS[case](m, _inputs(m, False))

    assert _outcome(fn, ember) == _outcome(fn, torch)


RESHAPES = [
    lambda m, t: t.t() if t.dim() == 2 else t.transpose(0, 1),
    lambda m, t: t.transpose(1, 0),
    lambda m, t: t.transpose(0, 0),
    lambda m, t: t.transpose(-1, -2),  # two dense dims of the hybrid: refused
    lambda m, t: t.unsqueeze(0),
    lambda m, t: t.unsqueeze(2),
    lambda m, t: t.unsqueeze(-1),
    lambda m, t: t.permute(1, 0, *range(2, t.dim())),
]


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("nnz", [0, 1, 3])
@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("case", range(len(RESHAPES)))
def test_sparse_transpose_unsqueeze_flags(case, coalesce, nnz, hybrid):
    # the coalesced flag torch gives: a swap of sparse dims is uncoalesced unless empty, an
    # unsqueeze unless it stores at most one entry
    def fn(m):
        idx = m.tensor([[0, 1, 2], [1, 2, 0]])[:, :nnz]
        vals = m.ones(nnz, 2, 2) if hybrid else m.ones(nnz)
        t = m.sparse_coo_tensor(idx, vals, (3, 3, 2, 2) if hybrid else (3, 3))
        return RESHAPES[case](m, t.coalesce() if coalesce else t)

    assert _outcome(fn, ember) == _outcome(fn, torch)


# ------------------------------------------------------------------ texts naming torch.Size
V = {"validate_args": True}  # explicit: another test may turn torch's default validation off
DIST_ERRORS = [
    lambda m: m.distributions.Categorical(logits=m.tensor([[float("nan"), 1.0]]), **V),
    lambda m: m.distributions.Categorical(probs=m.tensor([-0.1, 1.1]), **V),
    lambda m: m.distributions.Normal(m.zeros(2), m.tensor([1.0, -1.0]), **V),
    lambda m: m.distributions.Geometric(probs=m.tensor([0.0, 0.5]), **V),
    lambda m: m.distributions.Categorical(logits=m.zeros(2, 3), **V).log_prob(m.tensor([3, 0])),
    lambda m: m.distributions.Uniform(m.zeros(2), m.ones(2), **V).log_prob(m.tensor([2.0, 0.5])),
    lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(2), -m.ones(2), **V), 1),
    lambda m: m.distributions.Bernoulli(logits=m.zeros(2), **V).log_prob(m.tensor([0.5, 1.0])),
]


@pytest.mark.parametrize("case", range(len(DIST_ERRORS)))
def test_distribution_validation_texts(case):
    te, ee = run_quietly(DIST_ERRORS[case], torch)[0], run_quietly(DIST_ERRORS[case], ember)[0]
    assert te is not None
    assert (type(ee).__name__, str(ee)) == (type(te).__name__, str(te))


def test_load_state_dict_size_mismatch_text():
    def fn(m):
        m.nn.Linear(2, 2).load_state_dict({"weight": m.zeros(3, 2), "bias": m.zeros(2)})

    (te, _), (ee, _) = run_quietly(fn, torch), run_quietly(fn, ember)
    assert (type(ee).__name__, str(ee)) == (type(te).__name__, str(te))


# ------------------------------------------------------------------ a float64 default dtype
def _under_float64(fn, m):
    old = m.get_default_dtype()
    m.set_default_dtype(m.float64)
    try:
        return fn(m)
    finally:
        m.set_default_dtype(old)


@pytest.mark.parametrize("default", ["float64", "float32"])
def test_square_subsequent_mask_takes_the_default_dtype(default):
    def fn(m):
        if default == "float32":
            return m.nn.Transformer.generate_square_subsequent_mask(3)
        return _under_float64(lambda m: m.nn.Transformer.generate_square_subsequent_mask(3), m)

    t, e = fn(torch), fn(ember)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert e.tolist() == t.tolist()


OPTIMS = [
    ("Adam", {}),
    ("AdamW", {"amsgrad": True}),
    ("Adagrad", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("Adamax", {}),
    ("ASGD", {}),
    ("Adafactor", {}),
    ("RMSprop", {"momentum": 0.9}),
]


@pytest.mark.parametrize("default", ["float64", "float32"])
@pytest.mark.parametrize("name,kw", OPTIMS, ids=[n for n, _ in OPTIMS])
def test_optimizer_scalar_state_dtype(name, kw, default):
    def run(m):
        p = m.nn.Parameter(m.tensor([1.0, -2.0]))
        opt = getattr(m.optim, name)([p], **kw)
        for _ in range(2):
            opt.zero_grad()
            (p**2).sum().backward()
            opt.step()
        again = getattr(m.optim, name)([p], **kw)
        again.load_state_dict(opt.state_dict())
        state = {k: str(v.dtype).split(".")[-1] for k, v in opt.state[p].items()}
        loaded = {k: str(v.dtype).split(".")[-1] for k, v in again.state[p].items()}
        return state, loaded, p.tolist()

    def fn(m):
        return run(m) if default == "float32" else _under_float64(run, m)

    (ts, tl, tp), (es, el, ep) = fn(torch), fn(ember)
    assert (es, el) == (ts, tl)
    assert ep == pytest.approx(tp, rel=1e-6)
