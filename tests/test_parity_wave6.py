"""Parity regressions found by the sixth wave of realistic PyTorch programs (nn.Module API, data
pipelines, checkpoints; torch is the oracle): whole models, optimizers and schedulers pickled by
torch.save (torch's nn classes and C-bound functions map to ember's), torch's legacy (pre-zip)
checkpoint format, tied weights sharing memory after a round trip, save into a missing folder,
the table-driven collate of torch.utils.data._utils.collate, generic Dataset[T] / Sampler[T],
DataLoader warnings (pin_memory, worker count, IterableDataset length), full backward hooks'
replacement checks, to()'s three signatures, set_rng_state's type errors and multinomial's
with-replacement messages."""

from __future__ import annotations

import collections
import io
import os
import sys
import warnings

import ember
import ember.data as ed
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _outcome(fn, m):
    try:
        out = fn(m)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e).replace("ember.", "torch.")
    return "ok", out


def _tree(x):
    """A checkpoint's content as plain Python (tensors as (dtype name, shape, values))."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return (str(x.dtype).split(".")[-1], tuple(x.shape), x.detach().cpu().tolist())
    if isinstance(x, dict):
        return type(x).__name__, {k: _tree(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_tree(v) for v in x]
    return x


def _torch_net():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(), torch.nn.Linear(4, 2)
    )
    net(torch.randn(5, 3))  # running stats != their initial values
    return net.eval()


EC = sys.modules["ember.data.collate"]
X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)


# -------------------------------------------------------------- whole models pickled by torch
@pytest.mark.parametrize("legacy", [False, True])
def test_load_whole_torch_model(tmp_path, legacy):
    """torch.save(model) then ember.load(weights_only=False): torch's nn classes are ember's."""
    net = _torch_net()
    p = tmp_path / "model.pt"
    torch.save(net, p, _use_new_zipfile_serialization=not legacy)
    m = ember.load(p, weights_only=False)
    assert isinstance(m, ember.nn.Sequential) and isinstance(m[1], ember.nn.BatchNorm1d)
    assert isinstance(m[0].weight, ember.nn.Parameter) and not m.training
    expect = net(torch.from_numpy(X)).detach().numpy()
    np.testing.assert_allclose(m(ember.tensor(X)).detach().numpy(), expect, rtol=1e-6)
    assert list(m.state_dict()) == list(net.state_dict())
    m.train()
    m(ember.tensor(X)).sum().backward()
    assert m[0].weight.grad.shape == (4, 3)
    # still refused without weights_only=False, as torch refuses it
    with pytest.raises(Exception) as e:
        ember.load(p)
    assert type(e.value).__name__ == "UnpicklingError"
    with pytest.raises(Exception) as e:
        torch.load(p)
    assert type(e.value).__name__ == "UnpicklingError"


WHOLE_MODELS = {
    "lstm": (lambda: torch.nn.LSTM(3, 4, num_layers=2, batch_first=True), lambda m, x: m(x)[0]),
    # out_proj is torch.nn.modules.linear.NonDynamicallyQuantizableLinear
    "mha": (
        lambda: torch.nn.MultiheadAttention(3, 1, batch_first=True),
        lambda m, x: m(x, x, x)[0],
    ),
    # the old weight_norm: a torch.nn.utils.weight_norm.WeightNorm forward pre-hook
    "weight_norm": (lambda: torch.nn.utils.weight_norm(torch.nn.Linear(3, 2)), lambda m, x: m(x)),
}


@pytest.mark.parametrize("kind", WHOLE_MODELS)
def test_load_whole_torch_model_kinds(kind):
    make, run = WHOLE_MODELS[kind]
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # weight_norm's deprecation
        net = make().eval()
    buf = io.BytesIO()
    torch.save(net, buf)
    buf.seek(0)
    m = ember.load(buf, weights_only=False)
    assert type(m).__name__ == type(net).__name__
    x = X.reshape(1, 4, 3)
    expect = run(net, torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(run(m, ember.tensor(x)).detach().numpy(), expect, rtol=1e-5)


def test_load_torch_builtin_functions():
    """Functions torch binds in C pickle under torch._C names (F.gelu is torch._C._nn.gelu,
    torch.tanh is getattr(torch._C._VariableFunctionsClass, 'tanh'))."""
    F = torch.nn.functional
    fns = [F.gelu, F.softplus, torch.tanh, torch.special.erf, torch.linalg.norm, torch.Tensor.add]
    buf = io.BytesIO()
    torch.save({"fns": fns}, buf)
    buf.seek(0)
    got = ember.load(buf, weights_only=False)["fns"]
    x = np.linspace(-2, 2, 5)
    for ef, tf in zip(got, fns):
        ex, tx = ember.tensor(x), torch.from_numpy(x)
        e = ef(ex, ex) if tf is torch.Tensor.add else ef(ex)
        t = tf(tx, tx) if tf is torch.Tensor.add else tf(tx)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


class _Net(torch.nn.Module):
    """A user's model class, pickled whole by torch (its module names ember's here on load)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(2, 3, 3, padding=1)
        self.fc = torch.nn.Linear(12, 2)
        self.act = torch.nn.functional.gelu  # pickled as torch._C._nn.gelu

    def forward(self, x):
        return self.fc(self.act(self.conv(x)).flatten(1))


def _steps(model, opt, sched, x, n):
    out = []
    for _ in range(n):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        sched.step()
        out.append(round(loss.item(), 5))
    return out, sched.get_last_lr()


def test_load_whole_model_optimizer_and_scheduler_objects():
    torch.manual_seed(0)
    model = _Net()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    x = np.linspace(-1, 1, 40, dtype=np.float32).reshape(5, 2, 4)
    _steps(model, opt, sched, torch.from_numpy(x), 1)
    buf = io.BytesIO()
    torch.save({"model": model, "opt": opt, "sched": sched}, buf)
    ck = ember.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert ck["opt"].param_groups[0]["params"][0] is ck["model"].conv.weight
    assert ck["sched"].optimizer is ck["opt"]
    got = _steps(ck["model"], ck["opt"], ck["sched"], ember.tensor(x), 3)
    assert got == _steps(model, opt, sched, torch.from_numpy(x), 3)


def test_torch_global_ember_lacks_is_still_refused(tmp_path):
    p = tmp_path / "g.pt"
    torch.save({"f": torch.nn.functional.relu, "gen": torch.Generator()}, p)
    with pytest.raises(Exception, match="torch.Generator|_C") as e:
        ember.load(p, weights_only=False)
    assert type(e.value).__name__ == "UnpicklingError"


# ------------------------------------------------------------------ the legacy checkpoint format
def _legacy_payload(m):
    w = m.arange(12.0).reshape(3, 4)
    dtypes = (m.float16, m.bfloat16, m.int8, m.bool, m.float64, m.int64, m.complex64)
    return {
        "views": [w, w[1], w.t(), w[:, 1:3]],
        "dtypes": [m.ones(2, dtype=d) for d in dtypes],
        "od": collections.OrderedDict(a=m.zeros(1), b=3),
        "scalar": m.tensor(2.5),
        "empty": m.zeros(0, 3),
        "meta": ("s", None, 1.5, [m.Size([2, 3])]),
    }


def test_load_torch_legacy_format_values_and_sharing():
    buf = io.BytesIO()
    torch.save(_legacy_payload(torch), buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    ref = torch.load(io.BytesIO(buf.getvalue()))
    got = ember.load(buf)
    assert _tree(got) == _tree(ref)
    assert type(got["od"]) is collections.OrderedDict
    # views of one storage share memory, as they do in torch
    got["views"][0][1, 2] = 100.0
    assert got["views"][1][2].item() == 100.0 and got["views"][2][2, 1].item() == 100.0
    assert got["views"][3][1, 1].item() == 100.0


def test_load_torch_legacy_state_dict_into_model():
    net = _torch_net()
    buf = io.BytesIO()
    torch.save(net.state_dict(), buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    m = ember.nn.Sequential(
        ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.ReLU(), ember.nn.Linear(4, 2)
    ).eval()
    m.load_state_dict(ember.load(buf, map_location="cpu"))
    expect = net(torch.from_numpy(X)).detach().numpy()
    np.testing.assert_allclose(m(ember.tensor(X)).detach().numpy(), expect, rtol=1e-6)


@pytest.mark.parametrize("cut", [20, 60, 200, -10])
def test_load_torch_legacy_truncated_is_an_error(cut):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(100)}, buf, _use_new_zipfile_serialization=False)
    data = buf.getvalue()[:cut]
    with pytest.raises(RuntimeError, match="not a valid checkpoint"):
        ember.load(io.BytesIO(data))
    with pytest.raises(Exception):  # noqa: B017 - torch fails too (its error types vary)
        torch.load(io.BytesIO(data))


# ----------------------------------------------------------- tied weights in a saved state_dict
def _tied_roundtrip(m):
    class LM(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = m.nn.Embedding(5, 3)
            self.head = m.nn.Linear(3, 5, bias=False)
            self.head.weight = self.emb.weight

    buf = io.BytesIO()
    m.save({"sd": LM().state_dict(), "again": [m.arange(3.0)] * 2}, buf)
    buf.seek(0)
    got = m.load(buf)
    sd = got["sd"]
    shared = sd["emb.weight"].data_ptr() == sd["head.weight"].data_ptr()
    sd["emb.weight"][0, 0] = 7.0
    return (
        shared,
        sd["emb.weight"] is sd["head.weight"],
        sd["head.weight"][0, 0].item(),
        got["again"][0] is got["again"][1],
    )


def test_tied_weights_share_memory_after_load():
    """A state_dict holds two detached tensors of one tied parameter: torch stores one storage
    and loads two tensors sharing it."""
    assert _tied_roundtrip(ember) == _tied_roundtrip(torch) == (True, False, 7.0, True)


@pytest.mark.parametrize("sub", ["nodir/x.pt", "nodir/deeper/x.pt"])
def test_save_into_missing_folder(tmp_path, monkeypatch, sub):
    monkeypatch.chdir(tmp_path)
    for p in (sub, str(tmp_path / sub)):
        (et, em), (tt, tm) = (
            _outcome(lambda m, p=p: m.save(m.ones(1), p), m) for m in (ember, torch)
        )
        assert (
            (et, em)
            == (tt, tm)
            == ("RuntimeError", f"Parent directory {os.path.dirname(p)} does not exist.")
        )
    assert not (tmp_path / "nodir").exists()


# --------------------------------------------------------------- torch's table-driven collate
@pytest.fixture
def tortch(ember_alias):
    ember_alias("tortch")
    import tortch

    return tortch


def test_collate_private_module_path(tortch):
    import torch.utils.data._utils.collate as TC
    from tortch.utils.data._utils import collate as C
    from tortch.utils.data._utils.worker import get_worker_info

    assert C is sys.modules["ember.data.collate"] and get_worker_info is ed.get_worker_info

    def key(t):
        return t.__name__ if isinstance(t, type) else tuple(sorted(x.__name__ for x in t))

    ours = [key(t) for t in C.default_collate_fn_map]
    theirs = [key(t) for t in TC.default_collate_fn_map]
    assert ours == theirs
    assert [f.__name__ for f in C.default_collate_fn_map.values()] == [
        f.__name__ for f in TC.default_collate_fn_map.values()
    ]
    assert C.np_str_obj_array_pattern.pattern == TC.np_str_obj_array_pattern.pattern


class Box:
    def __init__(self, v):
        self.v = v


def _custom_collate(m, C):
    def collate_box(batch, *, collate_fn_map=None):
        return m.tensor([b.v for b in batch]) * 100

    table = {**C.default_collate_fn_map, Box: collate_box}
    data = [{"b": Box(i), "x": m.ones(2) * i, "s": f"n{i}", "a": np.float64(i)} for i in range(2)]
    return _tree(C.collate(data, collate_fn_map=table))


def test_collate_fn_map_extends_default_collate():
    import torch.utils.data._utils.collate as TC

    assert _custom_collate(ember, EC) == _custom_collate(torch, TC)


@pytest.mark.parametrize(
    "batch",
    [
        lambda m: [m.ones(1), m.ones(1)],  # no table: not even tensors are collated
        lambda m: [np.ones(2), np.ones(2)],
        lambda m: [1, 2],
    ],
)
def test_collate_without_table_raises_like_torch(batch):
    import torch.utils.data._utils.collate as TC

    (et, em), (tt, tm) = (
        _outcome(lambda m: EC.collate(batch(m)), ember),
        _outcome(lambda m: TC.collate(batch(m)), torch),
    )
    assert (et, tt) == ("TypeError", "TypeError")
    assert em.split("found")[0] == tm.split("found")[0]


def test_default_collate_fn_map_is_what_default_collate_uses():
    import torch.utils.data._utils.collate as TC

    def run(m, C):
        def f(batch, *, collate_fn_map=None):
            return [b.v + 1 for b in batch]

        C.default_collate_fn_map[Box] = f
        try:
            return C.default_collate([Box(1), Box(2)])
        finally:
            del C.default_collate_fn_map[Box]

    assert run(ember, EC) == run(torch, TC) == [2, 3]


def test_collate_batch_dim_name_through_the_table():
    a = ember.ones(2, 3, names=("H", "W"))
    out = ed.default_collate([{"img": a, "n": np.float32(1)}] * 2, batch_dim_name="N")
    assert out["img"].names == ("N", "H", "W") and out["n"].names == ("N",)


# ------------------------------------------------------- typed datasets: Dataset[T], Sampler[T]
def _typed_pipeline(m):
    D = m.utils.data

    class Squares(D.Dataset[tuple]):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return m.tensor([i * i]), i

    class Evens(D.IterableDataset[int]):
        def __iter__(self):
            return iter(range(0, 6, 2))

    class Backwards(D.Sampler[int]):
        def __iter__(self):
            return iter(range(4, -1, -1))

        def __len__(self):
            return 5

    loader: D.DataLoader[tuple] = D.DataLoader(Squares(), batch_size=2, sampler=Backwards())
    subset = D.Subset[tuple](Squares(), [1, 2])
    return (
        [[b[0].tolist(), b[1].tolist()] for b in loader],
        [x.tolist() for x in D.DataLoader(Evens(), batch_size=2)],
        [subset[i][1] for i in range(len(subset))],
        [issubclass(c, D.Dataset) for c in (D.TensorDataset, D.ConcatDataset, D.StackDataset)],
    )


def test_concat_dataset_old_cummulative_sizes_name():
    def f(m):
        ds = m.utils.data.ConcatDataset([[1, 2], [3]])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sizes = ds.cummulative_sizes
        return sizes, [(x.category.__name__, str(x.message), x.filename) for x in w]

    assert _outcome(f, ember) == _outcome(f, torch)
    assert _outcome(f, ember)[1][1][0][2] == __file__


def test_datasets_and_samplers_are_generic():
    assert _typed_pipeline(ember) == _typed_pipeline(torch)


# ---------------------------------------------------------------------- DataLoader warnings
def _warnings(fn, m):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn(m)
    return [str(x.message) for x in w if issubclass(x.category, UserWarning)]


def _pinned(m):
    ds = [m.ones(2) for _ in range(3)]
    list(m.utils.data.DataLoader(ds, batch_size=2, pin_memory=True))


@pytest.mark.skipif(ember.cuda.is_available(), reason="the warning is about having no accelerator")
def test_pin_memory_without_accelerator_warns():
    got = _warnings(_pinned, ember)
    assert got == _warnings(_pinned, torch)
    msg = "'pin_memory' argument is set as true but no accelerator is found, then device pinned"
    assert got == [msg + " memory won't be used."]


def test_too_many_workers_warns_at_construction(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)

    def make(m):
        m.utils.data.DataLoader(list(range(4)), num_workers=2)

    got = _warnings(make, ember)
    assert got == _warnings(make, torch)
    assert len(got) == 1 and got[0].startswith("This DataLoader will create 2 worker processes")

    def check(m):  # torch's public method, which wrappers of DataLoader call
        m.utils.data.DataLoader(list(range(4))).check_worker_number_rationality()

    assert _warnings(check, ember) == _warnings(check, torch) == []


class _Liar:
    """An IterableDataset (made per framework) that yields more samples than its len."""

    @staticmethod
    def make(m):
        class Liar(m.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(4))

            def __len__(self):
                return 2

            def __repr__(self):
                return "Liar"

        return Liar()


@pytest.mark.parametrize("workers", [0, 1])
def test_iterable_dataset_length_warning_text(workers):
    def run(m):
        dl = m.utils.data.DataLoader(_Liar.make(m), batch_size=None, num_workers=workers)
        len(dl)
        list(dl)

    got = _warnings(run, ember)
    assert got == _warnings(run, torch)
    assert got[0].startswith("Length of IterableDataset Liar was reported to be 2(when")


# -------------------------------------------------- full backward hooks replacing grad_input
HOOK_RETURNS = {
    "double": lambda gi: (gi[0].double(),),
    "size": lambda gi: (gi[0].new_ones(3),),
    "int": lambda gi: (3,),
    "count": lambda gi: (gi[0], gi[0]),
    "none": lambda gi: (None,),
    "scaled": lambda gi: (gi[0] * 2,),
}


@pytest.mark.parametrize("kind", HOOK_RETURNS)
def test_full_backward_hook_replacement_checks(kind):
    """A hook's grad_input replacement is checked as torch's node hook (named 'hook') is."""

    def f(m):
        lin = m.nn.Linear(2, 2)
        with m.no_grad():
            lin.weight.copy_(m.tensor([[1.0, 2.0], [3.0, 4.0]]))
        lin.register_full_backward_hook(lambda mod, gi, go: HOOK_RETURNS[kind](gi))
        x = m.ones(1, 2, requires_grad=True)
        lin(x).sum().backward()
        return x.grad.tolist()

    assert _outcome(f, ember) == _outcome(f, torch)


def test_full_backward_hook_without_input_grad_warns_at_the_users_line():
    lin = ember.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda mod, gi, go: None)
    out = lin(ember.ones(1, 2)).sum()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out.backward()
    assert [x.filename for x in w] == [__file__]
    assert str(w[0].message).startswith("Full backward hook is firing when gradients are")


# ------------------------------------------------------------- to(): torch's three signatures
TO_CALLS = [
    lambda m, x: x.to("cpu", m.float64, True),  # positional non_blocking
    lambda m, x: x.to("cpu", m.float64, False, True),  # ... and copy
    lambda m, x: x.to(m.float64, True, True),
    lambda m, x: x.to(m.ones(1, dtype=m.int32), True),
    lambda m, x: x.to(tensor=m.ones(1, dtype=m.int16)),
    lambda m, x: x.to(float),
    lambda m, x: x.to(None, None),
    lambda m, x: x.to(device=None, dtype=m.float16, copy=True),
    lambda m, x: x.to(other=x),
    lambda m, x: x.to("cpu", "float"),
    lambda m, x: x.to("cpu", m.float32, "x"),
    lambda m, x: x.to([1]),
    lambda m, x: x.to(m.float32, m.float32),
    lambda m, x: x.to(x, x),
    lambda m, x: x.to("cpu", foo=1),
    lambda m, x: x.to(foo=1, bar=2),
    lambda m, x: x.to(dtype="float"),
    lambda m, x: x.to(device=3.5),
    lambda m, x: x.to(memory_format=3),
    lambda m, x: x.to("cpu", m.float32, False, False, 3),
]


@pytest.mark.parametrize("i", range(len(TO_CALLS)))
@pytest.mark.parametrize("on", ["tensor", "module"])
def test_to_argument_parsing(i, on):
    def f(m):
        x = m.ones(2) if on == "tensor" else m.nn.Linear(1, 1)
        out = TO_CALLS[i](m, x)
        return str((out if on == "tensor" else out.weight).dtype).split(".")[-1]

    assert _outcome(f, ember) == _outcome(f, torch)


@pytest.mark.parametrize("where", ["ipu", "xpu"])
def test_module_moves_to_absent_devices(where):
    def f(m):
        return getattr(m.nn.Linear(1, 1), where)()

    (et, em), (tt, tm) = _outcome(f, ember), _outcome(f, torch)
    assert tt != "ok"
    assert (et, em) == (tt, tm)


# ---------------------------------------------------------- restoring RNG state from a checkpoint
@pytest.mark.parametrize("state", ["list", "int", "float_tensor", "none"])
@pytest.mark.parametrize("where", ["global", "generator"])
def test_set_rng_state_bad_type(state, where):
    def f(m):
        bad = {"list": [1, 2], "int": 5, "float_tensor": m.zeros(3), "none": None}[state]
        if where == "global":
            return m.set_rng_state(bad)
        return m.Generator().set_state(bad)

    (et, em), (tt, tm) = _outcome(f, ember), _outcome(f, torch)
    assert tt == "TypeError"
    assert (et, em) == (tt, tm)


# ------------------------------------------------------- multinomial (WeightedRandomSampler)
MULTINOMIAL = [
    ([1.0, -2.0], 2, True),
    ([[1.0, 2.0], [1.0, -1.0]], 3, True),
    ([[1.0, float("nan")], [1.0, -1.0]], 3, True),  # NaN fails `>= 0` first
    ([float("inf"), 1.0], 3, True),
    ([[0.0, 0.0], [1.0, -1.0]], 3, True),  # row 0's sum before row 1's entries
    ([[1.0, 1.0], [0.0, 0.0]], 3, True),
    ([1.0, -2.0], 1, True),  # one sample: the fast path's message
    ([1.0, -2.0], 1, False),
    ([1.0, float("inf")], 2, False),
    ([0.0, 0.0], 1, False),
]


@pytest.mark.parametrize("w,n,replacement", MULTINOMIAL)
def test_multinomial_invalid_distribution_messages(w, n, replacement):
    def f(m):
        return m.multinomial(m.tensor(w, dtype=m.float64), n, replacement)

    (et, em), (tt, tm) = _outcome(f, ember), _outcome(f, torch)
    assert tt == "RuntimeError"
    assert (et, em) == (tt, tm)


def test_weighted_random_sampler_negative_weights():
    def f(m):
        return list(m.utils.data.WeightedRandomSampler([1.0, -2.0], 2))

    assert _outcome(f, ember) == _outcome(f, torch)
