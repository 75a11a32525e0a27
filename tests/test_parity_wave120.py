"""Wave 120: an audit of the named-dimension specification (/work/shared/spec/named_tensors.md),
statement by statement. Every scenario row (P02-P141) and every section-4 rule was run against
ember; nearly all already had a test (tests/test_names_*.py). This file holds what had none, the
fixes the audit made, and three realistic named programs whose values are compared with the
same program run unnamed in torch (names must never change values). It covers:

* spec 1, "Passing None where a name is looked up raises": ``squeeze(None)`` / ``squeeze_(None)``
  / ``squeeze(dim=None)`` squeezed every size-1 dim; now a named tensor gets the spec's
  "Please look up dimensions by name" and an unnamed one torch's parser TypeError (torch 2.13
  has no None overload of squeeze);
* spec 4.10, errors name the op: ``dot(x, y, dim='H')`` with a missing name, a dict index
  ``x[{'Q': 0}]`` with a missing name, and index tensors whose names clash said only
  "Name 'H' not found ..." / "Error when attempting to broadcast ..."; they now start with
  ``dot():`` / ``index:``;
* the operator table rows without a test: ``torch.normal`` keeps its input's names (both
  tensor forms), the spec's ``mv`` example (``('something',)`` contracted away);
* spec 3's tutorial example ``imgs * per_batch_scale`` (positional error) and its
  ``align_as`` fix, values against torch;
* spec 4.9, "optimizer state tensors are named like their parameters", for every optimizer
  (for-loop and foreach forms) and through ``state_dict`` / ``save`` / ``load`` /
  ``load_state_dict``; a safetensors file written by torch loads unnamed;
* spec 4.6 (``stack`` adds an unnamed dim) as DataLoader's collate meets it;
* spec 4.5 where the unchanged leading and trailing runs would claim the same result dim (the
  spec is silent: the leading run wins, so no name is used twice);
* spec 3's "Unifies names from inputs" and "Contracts away dims" (matmul) rules as the spec
  words them, written out as reference functions and compared with ember over every pair of name
  lists of 0-3 dims (2-4 for matmul) drawn from N, C, H and None: the result's names, or which
  check fails ("do not match" before "Misaligned"; the misalignment check looks through the
  whole tensor's names, as the spec's bmm row P119 needs), and for in-place ops the out= rule
  of a self with any named dim (spec 3's last rule; P113);
* three programs (spec 1, 3, 4.1, 4.3, 4.8, 4.9): a CNN on ('N','C','H','W') images, a
  transformer block on ('batch','seq','feature'), and data-side idioms (collate, unflatten,
  sum/mean by name, align_as, broadcast_by_name, save/load) -- names checked at every stage and
  on every gradient, values against torch run unnamed.
"""

from __future__ import annotations

import io
import itertools
import operator

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember
from harness import run_quietly


def _outcome(fn):
    """(ember, torch) results of ``fn(module)``; errors as (type name, message)."""
    (te, tr), (ee, er) = run_quietly(fn, torch), run_quietly(fn, ember)
    t_err = None if te is None else (type(te).__name__, str(te))
    e_err = None if ee is None else (type(ee).__name__, str(ee))
    return (e_err, er), (t_err, tr)


def _np(t):
    return t.detach().rename(None).numpy() if isinstance(t, ember.Tensor) else t.detach().numpy()


# ----------------------------------------------------------------- spec 1: None as a dim name
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.randn(2, 1).squeeze(None),
        lambda m: m.randn(2, 1).squeeze(dim=None),
        lambda m: m.randn(2, 1).squeeze_(None),
        lambda m: m.squeeze(m.randn(2, 1), None),
    ],
)
def test_unnamed_squeeze_none_is_torchs_type_error(call):
    (e_err, _), (t_err, _) = _outcome(call)
    assert t_err is not None and e_err is not None
    # torch's parser also marks its hidden () overload; the type and the call it names agree
    assert e_err[0] == t_err[0] == "TypeError"
    assert e_err[1].split(" but expected")[0] == t_err[1].split(" but expected")[0]


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.squeeze(None),
        lambda x: x.squeeze(dim=None),
        lambda x: x.squeeze_(None),
        lambda x: ember.squeeze(x, None),
    ],
)
def test_named_squeeze_none_is_a_name_lookup(call):
    x = ember.randn(2, 1, names=("N", "C"))
    with pytest.raises(RuntimeError, match="Please look up dimensions by name"):
        call(x)
    assert x.names == ("N", "C") and x.shape == (2, 1)  # squeeze_ changed nothing


@pytest.mark.parametrize("names", [None, ("N", "C")])
def test_squeeze_without_dim_still_squeezes_all(names):
    x = ember.randn(2, 1, names=names, requires_grad=True)
    xt = torch.tensor(_np(x), requires_grad=True)
    y, yt = x.squeeze(), xt.squeeze()
    assert y.shape == yt.shape and y.grad_fn.name() == yt.grad_fn.name()
    assert y.names == (("N",) if names else (None,))
    y.sum().backward()
    assert x.grad.names == x.names
    z = x.detach().clone()
    assert z.squeeze_().shape == (2,)
    assert ember.squeeze(x.detach()).shape == (2,)


# ----------------------------------------------------------- spec 4.10: errors name the op
def test_dot_by_name_missing_name_names_the_op():
    x = ember.randn(2, 3, names=("N", "C"))
    with pytest.raises(RuntimeError, match=r"^dot\(\): Name 'H' not found in Tensor\['N', 'C'\]"):
        ember.dot(x, ember.randn(3, names=("C",)), dim="H")
    with pytest.raises(RuntimeError, match=r"^dot\(\): Name 'C' not found in Tensor\['D'\]"):
        ember.dot(x, ember.randn(3, names=("D",)), dim="C")


def test_dict_index_missing_name_names_the_op():
    x = ember.randn(2, 3, names=("N", "C"))
    with pytest.raises(RuntimeError, match=r"^index: Name 'Q' not found in Tensor\['N', 'C'\]"):
        x[{"Q": 0}]
    with pytest.raises(RuntimeError, match="^index: Please look up dimensions by name"):
        x[{None: 0}]
    # positional keys still give torch's range error
    (e_err, _), (t_err, _) = _outcome(lambda m: m.zeros(2, 3)[:, :, 0])
    assert e_err == t_err


def test_index_tensor_names_clash_names_the_op():
    x = ember.randn(2, 3, 4, names=("N", "C", "H"))
    k = ember.tensor([0, 1], names=("K",))
    j = ember.tensor([0, 1], names=("J",))
    with pytest.raises(RuntimeError, match=r"^index: the index tensors' names do not match: "):
        x[:, k, j]
    assert x[:, k, k].names == ("N", "K")  # matching names unify


# -------------------------------------------- spec 3: the unify and contraction rules, in full
_ALPHABET = ("N", "C", "H", None)


def _name_lists(n):
    for names in itertools.product(_ALPHABET, repeat=n):
        given = [x for x in names if x is not None]
        if len(given) == len(set(given)):
            yield names


def _spec_unify(a, b, whole_a=None, whole_b=None):
    """Spec 3, "Unifies names from inputs": names must match positionally from the right; then a
    name matched with None must not appear in the other tensor (``whole_*``: the full names the
    lists came from); the output unifies the pairs. An error is returned as its kind."""
    whole_a = a if whole_a is None else whole_a
    whole_b = b if whole_b is None else whole_b
    n = min(len(a), len(b))
    pairs = [(a[-i], b[-i]) for i in range(1, n + 1)]
    if any(x is not None and y is not None and x != y for x, y in pairs):
        return "do not match"
    for x, y in pairs:
        if (x is not None and y is None and x in whole_b) or (
            y is not None and x is None and y in whole_a
        ):
            return "Misaligned"
    longer = a if len(a) >= len(b) else b
    return tuple(longer[: len(longer) - n]) + tuple(
        x if x is not None else y for x, y in reversed(pairs)
    )


def _kind(fn, *args):
    try:
        return fn(*args).names
    except RuntimeError as e:
        for kind in ("do not match", "Misaligned", "duplicate", "Name mismatch"):
            if kind.lower() in str(e).lower():
                return kind
        raise


def _z(names):
    return ember.zeros([2] * len(names), names=names or None)


@pytest.mark.parametrize("la", range(4))
def test_unify_rule_matches_the_spec_for_every_name_pair(la):
    for lb in range(4):
        for a in _name_lists(la):
            for b in _name_lists(lb):
                want = _spec_unify(a, b)
                assert _kind(operator.add, _z(a), _z(b)) == want, (a, b)
                if lb <= la:
                    # in place: a self with any named dim takes no new names (the out= rule)
                    if isinstance(want, tuple) and any(a) and want != a:
                        want = "Name mismatch"
                    assert _kind(ember.Tensor.add_, _z(a), _z(b)) == want, (a, b)


@pytest.mark.parametrize("la", range(2, 5))
def test_matmul_rule_matches_the_spec_for_every_name_pair(la):
    for lb in range(2, 5):
        for a in _name_lists(la):
            for b in _name_lists(lb):
                want = _spec_unify(a[:-2], b[:-2], a, b)
                if isinstance(want, tuple):
                    want += (a[-2], b[-1])
                    given = [x for x in want if x is not None]
                    if len(given) != len(set(given)):
                        want = "duplicate"
                assert _kind(operator.matmul, _z(a), _z(b)) == want, (a, b)


# ---------------------------------------------------- spec 2: operator table rows untested
def test_normal_keeps_input_names():
    mean = ember.zeros(2, 3, names=("N", "C"))
    assert ember.normal(mean, 1.0).names == ("N", "C")
    assert ember.normal(mean, ember.ones(2, 3)).names == ("N", "C")
    assert ember.normal(0.0, ember.ones(2, 3, names=("N", "C"))).names == ("N", "C")
    # values: same seed, same draw as the unnamed call
    ember.manual_seed(3)
    a = ember.normal(mean, 2.0)
    ember.manual_seed(3)
    b = ember.normal(mean.rename(None), 2.0)
    assert ember.equal(a.rename(None), b)


def test_mv_example_contracts_away_unchecked_names():
    # spec 3 ("Contracts away dims"): x (3,3)[N,D] . y (3)[something] -> ('N',)
    xn = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    yn = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    r = ember.tensor(xn, names=("N", "D")).mv(ember.tensor(yn, names=("something",)))
    assert r.names == ("N",)
    np.testing.assert_allclose(_np(r), torch.tensor(xn).mv(torch.tensor(yn)).numpy())


def test_tutorial_per_batch_scale():
    # spec 3's note: positional broadcasting refuses, align_as fixes it; values as torch's view
    rng = np.random.default_rng(1)
    imgs_np = rng.standard_normal((2, 2, 2, 2)).astype(np.float32)
    s_np = rng.standard_normal(2).astype(np.float32)
    imgs = ember.tensor(imgs_np, names=("N", "C", "H", "W"))
    scale = ember.tensor(s_np, names=("N",))
    with pytest.raises(RuntimeError, match="do not match"):
        imgs * scale
    r = imgs * scale.align_as(imgs)
    assert r.names == ("N", "C", "H", "W")
    want = torch.tensor(imgs_np) * torch.tensor(s_np).view(2, 1, 1, 1)
    np.testing.assert_allclose(_np(r), want.numpy())


# ------------------------------------------------------- spec 4.9: optimizer state, files
_OPTIMS = [
    ("SGD", {"momentum": 0.9}),
    ("Adam", {"amsgrad": True}),
    ("AdamW", {}),
    ("RMSprop", {"momentum": 0.9, "centered": True}),
    ("Adagrad", {}),
    ("Adadelta", {}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("ASGD", {}),
    ("Rprop", {}),
]


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(("name", "opts"), _OPTIMS)
def test_optimizer_state_named_like_parameters(name, opts, foreach):
    names = ("O", "I")
    w = np.random.default_rng(2).standard_normal((3, 2)).astype(np.float32)
    p = ember.nn.Parameter(ember.tensor(w, names=names))
    pt = torch.nn.Parameter(torch.tensor(w))
    opt = getattr(ember.optim, name)([p], lr=0.1, foreach=foreach, **opts)
    optt = getattr(torch.optim, name)([pt], lr=0.1, foreach=foreach, **opts)
    for _ in range(2):
        opt.zero_grad()
        optt.zero_grad()
        (p * p).sum().backward()
        (pt * pt).sum().backward()
        opt.step()
        optt.step()
    assert p.names == names and p.grad.names == names
    state = {k: v for k, v in opt.state[p].items() if isinstance(v, ember.Tensor) and v.dim()}
    assert state and all(v.names == names for v in state.values()), {
        k: v.names for k, v in state.items()
    }
    np.testing.assert_allclose(_np(p), _np(pt), rtol=1e-5, atol=1e-6)  # names change no value
    # through state_dict -> save -> load -> load_state_dict
    buf = io.BytesIO()
    ember.save(opt.state_dict(), buf)
    buf.seek(0)
    p2 = ember.nn.Parameter(ember.zeros(3, 2, names=names))
    opt2 = getattr(ember.optim, name)([p2], lr=0.1, foreach=foreach, **opts)
    opt2.load_state_dict(ember.load(buf))
    for k, v in state.items():
        assert opt2.state[p2][k].names == names and ember.equal(opt2.state[p2][k], v)


def test_safetensors_from_torch_loads_unnamed_ember_file_keeps_names(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    from ember.core.serialization import load_safetensors, save_safetensors

    p = tmp_path / "t.safetensors"
    st.save_file({"w": torch.arange(6.0).view(2, 3)}, str(p))
    w = load_safetensors(p)["w"]
    assert w.names == (None, None) and not w.has_names()
    save_safetensors({"w": ember.arange(6.0).view(2, 3).rename("N", "C")}, p)
    assert load_safetensors(p)["w"].names == ("N", "C")
    assert torch.equal(st.load_file(str(p))["w"], torch.arange(6.0).view(2, 3))  # others read it


# ----------------------------------------------------------- spec 4.5 / 4.6 edge cases
@pytest.mark.parametrize(
    ("shape", "new", "want"),
    [
        ((2, 1, 1), (2, 1), ("A", "B")),  # both runs reach the last dim: the leading run wins
        ((2, 1), (2, 1, 1), ("A", "B", None)),
        ((1, 1, 2), (1, 2), ("A", "C")),
        ((3, 1), (1, 3), (None, None)),
    ],
)
def test_reshape_overlapping_runs_never_repeat_a_name(shape, new, want):
    x = ember.randn(*shape, names=("A", "B", "C")[: len(shape)])
    assert x.reshape(new).names == want
    assert x.view(new).names == want
    assert ember.equal(x.reshape(new).rename(None), x.rename(None).reshape(new))


def test_dataloader_collate_stacks_named_items():
    data = np.random.default_rng(4).standard_normal((5, 4, 3)).astype(np.float32)

    class DS(ember.utils.data.Dataset):
        def __len__(self):
            return len(data)

        def __getitem__(self, i):
            return ember.tensor(data[i], names=("seq", "F"))

    (b, *_) = list(ember.utils.data.DataLoader(DS(), batch_size=2))
    assert b.names == (None, "seq", "F")  # spec 4.6: stack's new dim is unnamed
    bt = torch.utils.data.default_collate([torch.tensor(data[i]) for i in range(2)])
    np.testing.assert_allclose(_np(b), bt.numpy())
    with pytest.raises(RuntimeError, match="do not match"):
        ember.utils.data.default_collate([ember.ones(2, names=("A",)), ember.ones(2, names=("B",))])


# ---------------------------------------------------------------------- the three programs
def _copy_weights(em, tm):
    tm.load_state_dict(
        {k: torch.from_numpy(_np(v).copy()) for k, v in em.state_dict().items()}, strict=True
    )


def test_program_cnn_on_named_images():
    # spec 1 (align_to, flatten, rename, refine_names), 4.1, 4.3 (a named Linear, a named loss)
    n, c = 4, 3
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((n, 8, 8, c)).astype(np.float32)  # channels-last from a loader
    y_np = rng.integers(0, 5, n)

    def build(lib):
        nn = lib.nn
        return nn.Sequential(
            nn.Conv2d(c, 6, 3, padding=1),
            nn.BatchNorm2d(6),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(6 * 4 * 4, 5),
        )

    em, tm = build(ember), build(torch)
    _copy_weights(em, tm)
    x = ember.tensor(x_np, names=("N", "H", "W", "C"), requires_grad=True)
    h = x.align_to("N", "C", "H", "W")
    for layer in em[:4]:  # conv, norm, activation, pooling keep every name
        h = layer(h)
        assert h.names == ("N", "C", "H", "W"), (layer, h.names)
    assert em[4](h).names == ("N", None)  # nn.Flatten merges: the merged dim is unnamed
    f = h.flatten(["C", "H", "W"], "features").rename(features="F")
    assert f.names == ("N", "F")
    em[5].weight.rename_("K", "F")  # (output name, input name)
    logits = em[5](f)
    assert logits.names == ("N", "K")
    with pytest.raises(RuntimeError, match="'G'"):
        em[5](f.rename(F="G"))
    per = ember.nn.functional.cross_entropy(
        logits, ember.tensor(y_np).refine_names("N"), reduction="none"
    )
    assert per.names == ("N",)
    loss = per.mean()
    loss.backward()
    assert x.grad.names == ("N", "H", "W", "C")
    assert all(p.grad.names == p.names for p in em.parameters())
    assert em[5].weight.grad.names == ("K", "F")

    xt = torch.tensor(x_np, requires_grad=True)
    lt = tm(xt.permute(0, 3, 1, 2))
    losst = torch.nn.functional.cross_entropy(lt, torch.tensor(y_np))
    losst.backward()
    np.testing.assert_allclose(_np(logits), lt.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(loss.item(), losst.item(), rtol=1e-6)
    np.testing.assert_allclose(_np(x.grad), xt.grad.numpy(), rtol=1e-4, atol=1e-6)
    for p, q in zip(em.parameters(), tm.parameters()):
        np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(em[1].running_var), tm[1].running_var.numpy(), rtol=1e-5)


def test_program_transformer_block_names_every_stage():
    # spec 4.1 (every gradient), 4.3 (norm, Linear, attention keep the query's names)
    b, s, d = 2, 5, 8
    names = ("batch", "seq", "feature")
    x_np = np.random.default_rng(1).standard_normal((b, s, d)).astype(np.float32)

    def build(lib):
        nn = lib.nn
        return nn.ModuleDict(
            {
                "ln1": nn.LayerNorm(d),
                "attn": nn.MultiheadAttention(d, 2, batch_first=True),
                "ln2": nn.LayerNorm(d),
                "fc1": nn.Linear(d, 4 * d),
                "fc2": nn.Linear(4 * d, d),
                "head": nn.Linear(d, 3),
            }
        )

    def block(m, x, F, named):
        stages = []
        h = m["ln1"](x)
        a, w = m["attn"](h, h, h)
        x = x + a
        stages += [h, a, x]
        h = F.gelu(m["fc1"](m["ln2"](x)))
        x = x + m["fc2"](h)
        p = F.softmax(m["head"](x), dim="feature" if named else -1)
        stages += [h, x, p]
        return p.sum("seq" if named else 1), w, stages

    em, tm = build(ember), build(torch)
    _copy_weights(em, tm)
    x = ember.tensor(x_np, names=names, requires_grad=True)
    out, w, stages = block(em, x, ember.nn.functional, True)
    assert all(t.names == names for t in stages), [t.names for t in stages]
    assert out.names == ("batch", "feature") and w.names[:2] == ("batch", "seq")
    (out * ember.arange(3.0).rename("feature")).sum().backward()
    assert x.grad.names == names
    assert all(p.grad.names == p.names for p in em.parameters())

    xt = torch.tensor(x_np, requires_grad=True)
    outt, wt, _ = block(tm, xt, torch.nn.functional, False)
    (outt * torch.arange(3.0)).sum().backward()
    np.testing.assert_allclose(_np(out), outt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(w), wt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(x.grad), xt.grad.numpy(), rtol=1e-4, atol=1e-6)
    for p, q in zip(em.parameters(), tm.parameters()):
        np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-4, atol=1e-6)
    q = ember.randn(b, s, d, names=names)
    with pytest.raises(RuntimeError, match="'f2'"):
        ember.nn.functional.scaled_dot_product_attention(q, q, q.rename(feature="f2"))


def test_program_data_side_idioms():
    # spec 1 (refine_names '...', unflatten, sum/mean by name), 3 (align_as), 4.8, 4.9
    data = np.random.default_rng(2).standard_normal((3, 4, 3)).astype(np.float32)
    xb = ember.utils.data.default_collate([ember.tensor(a, names=("seq", "HW")) for a in data])
    xb = xb.refine_names("batch", ...)
    assert xb.names == ("batch", "seq", "HW")
    img = xb.unflatten("HW", (("H", 1), ("W", 3)))
    assert img.names == ("batch", "seq", "H", "W") and img.shape == (3, 4, 1, 3)
    s, m = img.sum("seq"), img.mean(["H", "W"])
    assert s.names == ("batch", "H", "W") and m.names == ("batch", "seq")
    assert img.mean(["H", "W"], keepdim=True).names == img.names
    scale = ember.tensor([1.0, 2.0, 3.0], names=("batch",))
    with pytest.raises(RuntimeError, match="do not match"):
        img * scale
    y1 = img * scale.align_as(img)
    with ember.named.broadcast_by_name():
        y2 = img * scale
    assert y1.names == y2.names == img.names
    buf = io.BytesIO()
    ember.save({"img": img, "m": m}, buf)
    buf.seek(0)
    back = ember.load(buf)
    assert back["img"].names == img.names and back["m"].names == m.names

    imt = torch.tensor(data).unflatten(2, (1, 3))
    want_y = imt * torch.tensor([1.0, 2.0, 3.0]).view(3, 1, 1, 1)
    for got, want in [
        (s, imt.sum(1)),
        (m, imt.mean([2, 3])),
        (y1, want_y),
        (y2, want_y),
        (back["img"], imt),
    ]:
        np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-6)
