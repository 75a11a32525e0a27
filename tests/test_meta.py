"""The meta device: tensors with a shape, a dtype and a device but no data (torch's ``meta``).

Every op row and module row of the device sweeps (tests/test_device*.py) runs on meta inputs,
forward and backward, and gives meta results with the cpu results' shapes and dtypes; ops whose
result depends on the values refuse, as torch's do. Module construction on meta, ``to_empty`` and ``load_state_dict``
follow torch, nothing is drawn or written, and a large meta tensor costs no memory.
"""

from __future__ import annotations

import copy
import itertools
import pickle
import re
import warnings

import ember
import numpy as np
import pytest
import test_device
import test_device_modules
from ember.core.meta import MetaArray
from harness import needs_torch

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None

# rows whose result depends on the values: torch has no meta kernel for them either
VALUE_DEPENDENT = {
    "op:argwhere": "aten::argwhere",
    "op:masked_select": "aten::masked_select",
    "op:nonzero": "aten::nonzero",
    "op:unique": "aten::_unique2",
    "op:unique_consecutive": "aten::unique_consecutive",
    "row:bincount": "aten::bincount",
    "row:getitem_mask": "aten::index",
}
ROWS = sorted(r for r in test_device.ROWS if r != "row:cpu_roundtrip")


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_every_op_row_runs_on_meta(row):
    fn, pattern = test_device.ROWS[row]
    if row in VALUE_DEPENDENT:
        with pytest.raises(NotImplementedError, match=re.escape(VALUE_DEPENDENT[row])):
            test_device._run(fn, pattern, "meta")
        return
    ref_outs, ref_grads = test_device._run(fn, pattern)
    outs, grads = test_device._run(fn, pattern, "meta")
    assert len(outs) == len(ref_outs) and len(grads) == len(ref_grads)
    for got, want in zip(outs + grads, ref_outs + ref_grads):
        assert type(got._data) is MetaArray and got.is_meta and got.device == "meta"
        assert got.shape == want.shape and got.dtype == want.dtype


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the outcome (type + message) is what is compared
        return type(e).__name__, str(e)
    return "ok", repr(r).replace("torch.", "ember.")


def _cases(t):
    x = t.empty(3, 4, device="meta")
    return {
        "repr": lambda: x,
        "repr_int": lambda: t.empty(2, 3, device="meta", dtype=t.int64),
        "repr_empty": lambda: t.empty(0, device="meta", dtype=t.float64),
        "repr_grad": lambda: t.empty(3, device="meta", requires_grad=True) * 2,
        "repr_param": lambda: t.nn.Parameter(t.empty(2, device="meta", dtype=t.float16)),
        "item": lambda: x.sum().item(),
        "bool": lambda: bool(x[0, 0]),
        "float": lambda: float(x[0, 0]),
        "tolist": lambda: x.tolist(),
        "numpy": lambda: x.numpy(),
        "cpu": lambda: x.cpu(),
        "to_cpu": lambda: x.to("cpu"),
        "data_ptr": lambda: x.data_ptr(),
        "get_device": lambda: x.get_device(),
        "flags": lambda: (x.is_meta, x.is_cpu, x.is_cuda, t.ones(1).is_meta),
        "stride": lambda: (x.t().stride(), x.t().is_contiguous(), x.storage_offset()),
        "cpu_operand": lambda: x + t.ones(3, 4),
        "cpu_scalar_operand": lambda: x * t.tensor(2.0),
        "generator": lambda: t.Generator("meta"),
        "cpu_generator": lambda: t.randn(2, device="meta", generator=t.Generator()),
        "randperm": lambda: t.randperm(5, device="meta"),
        "to_meta": lambda: t.ones(2, requires_grad=True).to("meta"),
        "allclose": lambda: t.allclose(x, x),
        "conv": lambda: t.nn.functional.conv2d(
            t.empty(2, 3, 8, 8, device="meta"), t.empty(4, 3, 3, 3, device="meta")
        ),
        "linalg": lambda: t.linalg.svd(t.empty(3, 2, device="meta", dtype=t.float64)),
        "half": lambda: x.half(),
        "module": lambda: t.nn.Linear(2, 3, device="meta").weight,
        "pickle": lambda: pickle.loads(pickle.dumps(t.empty(2, 3, device="meta").requires_grad_())),
        "copy": lambda: copy.copy(t.empty(2, 3, device="meta", dtype=t.float64)),
        "deepcopy_module": lambda: copy.deepcopy(t.nn.Linear(2, 3, device="meta")).weight,
        "assert_close": lambda: t.testing.assert_close(x, t.empty(3, 4, device="meta")),
        "multinomial": lambda: t.multinomial(t.ones(3, device="meta"), 2),
        "repeat_interleave": lambda: t.repeat_interleave(
            x, t.ones(3, dtype=t.long, device="meta"), 0
        ),
    }


@needs_torch
@pytest.mark.parametrize("case", sorted(_cases(ember)))
def test_meta_behaviour_matches_torch(case):
    assert _outcome(_cases(ember)[case]) == _outcome(_cases(torch)[case])


def test_value_dependent_ops_refuse():
    x = ember.empty(3, 4, device="meta")
    for fn in (
        lambda: x.nonzero(),
        lambda: x[x > 0],
        lambda: x.unique(),
        lambda: x.masked_select(x > 0),
        lambda: ember.equal(x, x),
        lambda: ember.nn.functional.one_hot(ember.empty(3, dtype=ember.long, device="meta")),
    ):
        with pytest.raises(NotImplementedError, match="attempted to run this operator with Meta"):
            fn()


def test_meta_and_cpu_messages():
    x = ember.empty(3, device="meta")
    with pytest.raises(RuntimeError, match="^Tensor on device cpu is not on the expected device"):
        x + ember.ones(3)
    with pytest.raises(RuntimeError, match=r"^Tensor\.item\(\) cannot be called on meta tensors$"):
        x[0].item()
    with pytest.raises(NotImplementedError, match="^Cannot copy out of meta tensor; no data!$"):
        x.cpu()
    with pytest.raises(RuntimeError, match="^META device type not an accelerator.$"):
        ember.Generator("meta")


def test_meta_draws_nothing_and_writes_nothing():
    state = ember.random.get_rng_state()
    x = ember.randn(1000, device="meta")
    x.uniform_().normal_().bernoulli_(0.5)
    ember.nn.init.kaiming_uniform_(ember.empty(64, 64, device="meta"))
    assert ember.equal(ember.random.get_rng_state(), state)
    n = 1 << 20  # a large meta tensor: writes land nowhere, its memory stays unmapped zeros
    y = ember.empty(n, device="meta")
    y.fill_(3.0).add_(1).copy_(ember.ones(n, device="meta"))
    y[:10] = 5.0
    assert not y._data.view(np.ndarray).any()


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def test_large_meta_model_costs_no_memory():
    before = _rss_mb()
    with ember.device("meta"):
        big = ember.nn.Linear(20_000, 20_000)  # 1.6 GB of weights on a real device
    out = big(ember.empty(8, 20_000, device="meta"))
    assert out.shape == (8, 20_000) and big.weight.is_meta
    assert _rss_mb() - before < 200


def _mem_total_mb() -> float:
    with open("/proc/meminfo") as f:
        return int(f.readline().split()[1]) / 1024


def test_meta_tensors_larger_than_memory():
    # torch's meta tensors have any size; calloc'd stand-ins were refused past the machine's
    # memory (a 160 GB weight on a 24 GB machine raised MemoryError)
    before = _rss_mb()
    big = ember.nn.Linear(200_000, 200_000, device="meta")
    assert big.weight.nbytes / 2**20 > 4 * _mem_total_mb()
    assert big(ember.empty(4, 200_000, device="meta")).shape == (4, 200_000)
    x = ember.empty(10**6, 10**5, device="meta")
    assert x.t().contiguous().shape == (10**5, 10**6)
    assert x.t().reshape(10**5, 10, -1).shape == (10**5, 10, 10**5)
    assert x.t().flatten().shape == (10**11,)
    assert (x * 2 + 1).sum(0).shape == (10**5,)
    # reductions are shapes only too (they read 400 GB of zero pages: minutes)
    assert x.mean((0, 1), keepdim=True).shape == (1, 1) and x.sum().shape == ()
    assert x.max(0).indices.shape == (10**5,) and x.argmin(1).dtype == ember.int64
    assert x.softmax(-1).shape == x.shape and x.logsumexp(1).shape == (10**6,)
    with pytest.raises(RuntimeError, match=r"shape '\[7, -1\]' is invalid for input of size"):
        x.t().reshape(7, -1)
    assert _rss_mb() - before < 200


def test_module_on_meta_then_materialised():
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = ember.nn.Embedding(50, 8)
            self.bn = ember.nn.BatchNorm1d(8)
            self.head = ember.nn.Linear(8, 3)

        def forward(self, tok):
            return self.head(self.bn(self.emb(tok).mean(1)))

    with ember.device("meta"):
        m = Net()
    assert {p.device.type for p in m.parameters()} == {"meta"}
    assert {b.device.type for b in m.buffers()} == {"meta"}
    out = m(ember.randint(0, 50, (4, 5), device="meta"))
    out.sum().backward()
    assert out.shape == (4, 3) and m.head.weight.grad.shape == (3, 8)
    assert m.head.weight.grad.is_meta and m.emb.weight.grad.is_meta
    m.to_empty(device="cpu")
    assert {p.device.type for p in m.parameters()} == {"cpu"}
    assert isinstance(m.head.weight, ember.nn.Parameter) and m.head.weight.shape == (3, 8)
    ref = Net().eval()
    m.load_state_dict(ref.state_dict())
    tok = ember.tensor([[1, 2], [3, 4]])
    np.testing.assert_array_equal(m.eval()(tok).detach().numpy(), ref(tok).detach().numpy())


@needs_torch
def test_load_state_dict_into_meta_warns_or_assigns_like_torch():
    def run(t):
        m = t.nn.Linear(4, 3, device="meta")
        sd = {k: t.ones(v.shape) for k, v in t.nn.Linear(4, 3).state_dict().items()}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r1 = repr(m.load_state_dict(sd))
        still_meta = m.weight.is_meta
        r2 = repr(m.load_state_dict(sd, assign=True))
        return (
            r1,
            [str(x.message) for x in w],
            still_meta,
            r2,
            m.weight.device.type,
            type(m.weight).__name__,
            m.weight.requires_grad,
            m.weight.sum().item(),
        )

    assert run(ember) == run(torch)


def test_named_dims_flow_on_meta():
    x = ember.empty(2, 3, device="meta", names=("N", "C"))
    y = (x * 2).sum("C")
    assert y.names == ("N",) and y.is_meta
    assert "names=('N', 'C')" in repr(x)


def _meta_checkpoint(m):
    lin = m.nn.Linear(3, 4, device="meta")
    return {"sd": lin.state_dict(), "p": lin.weight, "t": m.empty(3, 5, device="meta").t()}


def _described(d) -> list:
    return [
        (k, v.device.type, tuple(v.shape), v.stride(), str(v.dtype)[-7:], type(v).__name__)
        + (v.requires_grad,)
        for k, v in [*d["sd"].items(), ("p", d["p"]), ("t", d["t"])]
    ]


@pytest.mark.parametrize("map_location", [None, "cpu"])
def test_meta_tensors_save_and_load_as_meta(map_location, tmp_path):
    # torch writes a meta tensor's shape and dtype (no data) and loads it as meta whatever
    # map_location says; ember's save refused ("no data")
    f = tmp_path / "meta.pt"
    want = []
    for m in (torch, ember):
        m.save(_meta_checkpoint(m), f)
        want.append(_described(m.load(f, map_location=map_location)))
    assert want[0] == want[1]
    torch.save(_meta_checkpoint(torch), f)  # torch's own file, read by ember (weights_only)
    assert _described(ember.load(f, map_location=map_location)) == want[0]
    named = ember.empty(2, 3, device="meta", names=("N", "C"))
    ember.save([named, {"x": named}], f)
    back = ember.load(f)
    assert back[0].names == ("N", "C") and back[0].is_meta and back[1]["x"].shape == (2, 3)


@pytest.mark.parametrize("name", sorted(test_device_modules.SPECS), ids=str)
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_every_module_runs_on_meta(name, training):
    inputs = test_device_modules.SPECS[name][1]
    want = test_device_modules._run(
        test_device_modules._build(name, inputs).train(training), name, "cpu"
    )
    got = test_device_modules._run(
        test_device_modules._build(name, inputs).train(training), name, "meta"
    )
    assert [len(g) for g in got] == [len(w) for w in want]  # outputs, gradients, state
    for g, w in zip(itertools.chain(*got), itertools.chain(*want)):
        assert type(g._data) is MetaArray and g.shape == w.shape and g.dtype == w.dtype


@pytest.mark.parametrize("name", [n for n in dir(ember.nn.init) if n.endswith("_") and n[0] != "_"])
def test_init_functions_on_meta_keep_it_meta(name):
    fn = getattr(ember.nn.init, name)
    # large enough that writes land nowhere: the memory stays the zeros it was made of
    t = (
        ember.empty(64, 32, 6, 6, device="meta")
        if name == "dirac_"
        else ember.empty(400, 300, device="meta")
    )
    args = {"constant_": (0.5,), "sparse_": (0.1,)}.get(name, ())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecated aliases (xavier_uniform, ...)
        r = fn(t, *args)
    assert r is t and t.is_meta and not t._data.view(np.ndarray).any()


def test_meta_to_cuda_is_refused_like_meta_to_cpu():
    from strict_backend import strict_cuda

    with strict_cuda():
        x = ember.empty(3, device="meta")
        with pytest.raises(NotImplementedError, match="^Cannot copy out of meta tensor; no data!$"):
            x.to("cuda")
        assert ember.ones(3, device="cuda").to("meta").is_meta
