"""Storages, vmap, cond, the sym_* helpers and hash_tensor, against torch."""

import warnings

import ember
import numpy as np
import pytest
from harness import needs_torch

try:
    import torch
except ImportError:
    torch = None


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the outcome (type + message) is what is compared
        return f"{type(e).__name__}: {e}"
    return r.detach().numpy() if hasattr(r, "detach") else r


# ---------------------------------------------------------------------- storages
@needs_torch
def test_untyped_storage_views_the_whole_buffer():
    t = torch.arange(6.0).reshape(2, 3)
    e = ember.arange(6.0).reshape(2, 3)
    ts, es = t[1].untyped_storage(), e[1].untyped_storage()
    assert es.nbytes() == ts.nbytes() == len(es) == es.size()
    assert es.tolist() == ts.tolist()
    assert es.data_ptr() == e.data_ptr() and es.element_size() == 1
    assert es[6] == ts[6] and es.device == e.device and not es.is_cuda
    es[0] = 7  # the low byte of element 0: a write through the storage is seen by the tensor
    ts[0] = 7
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    with pytest.raises(IndexError, match="index 100 out of range for storage of size 24"):
        es[100]


@needs_torch
def test_typed_storage_and_legacy_classes():
    t, e = torch.arange(6.0)[2:], ember.arange(6.0)[2:]
    ts, es = t.storage(), e.storage()
    assert es.size() == ts.size() == 6 and es.tolist() == ts.tolist()
    assert es[3] == ts[3] and es.dtype == ember.float32 and es.element_size() == 4
    assert es.untyped().nbytes() == ts.untyped().nbytes()
    es[0] = 10.0
    assert e._base_or_self()[0].item() == 10.0
    with pytest.raises(RuntimeError, match="slices are only supported in UntypedStorage"):
        es[1:2]
    with pytest.raises(IndexError, match="index 6 out of range for storage of size 6"):
        es[6]
    for dt in ["float32", "int64", "bool", "float16", "bfloat16", "complex64", "uint8"]:
        tname = torch.ones(1, dtype=getattr(torch, dt)).storage_type().__name__
        assert ember.ones(1, dtype=getattr(ember, dt)).storage_type().__name__ == tname
    assert ember.FloatStorage(3).tolist() == [0.0, 0.0, 0.0]
    assert ember.FloatStorage.dtype == ember.float32
    assert ember.TypedStorage(5, dtype=ember.float64).size() == 5


def test_is_storage():
    e = ember.ones(2)
    assert ember.is_storage(e.untyped_storage()) and ember.is_storage(e.storage())
    assert not ember.is_storage(e) and not ember.is_storage([1])


def test_storage_copy_and_clone():
    a = ember.UntypedStorage(4)
    b = a.clone().fill_(3)
    assert a.tolist() == [0, 0, 0, 0] and b.tolist() == [3, 3, 3, 3]
    a.copy_(b)
    assert a.tolist() == [3, 3, 3, 3]
    with pytest.raises(RuntimeError, match="size mismatch"):
        a.copy_(ember.UntypedStorage(2))


# ---------------------------------------------------------------------- vmap
def _vm(mod, fn, *args, **kw):
    return mod.vmap(fn, **kw)(*args)


@needs_torch
@pytest.mark.parametrize(
    "fn, shapes, kw",
    [
        (lambda a, b: a * b, [(2, 3), (2, 3)], {}),
        (lambda a, b: a @ b, [(4, 3), (3,)], {"in_dims": (0, None)}),
        (lambda a: a.sum(0), [(2, 3, 4)], {"in_dims": 1}),
        (lambda a: a.sum(), [(2, 3)], {"in_dims": -1}),
        (lambda a: (a, a.sum()), [(2, 3)], {"out_dims": (1, 0)}),
        (lambda a: a * 2, [(2, 3)], {"out_dims": 1}),
        (lambda a, b: a + b, [(2, 3), (3,)], {"in_dims": (0, None)}),
    ],
)
def test_vmap_parity(fn, shapes, kw):
    r = np.random.default_rng(0)
    xs = [r.standard_normal(s) for s in shapes]
    got = _vm(ember, fn, *[ember.tensor(x) for x in xs], **kw)
    want = _vm(torch, fn, *[torch.tensor(x) for x in xs], **kw)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


@needs_torch
def test_vmap_nested_inputs_and_gradients():
    x = np.random.default_rng(1).standard_normal((3, 4))
    ex = ember.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    for mod, t in ((ember, ex), (torch, tx)):
        out = mod.vmap(lambda d: (d["x"] ** 2).sum())({"x": t})
        (out * mod.arange(1.0, 4.0, dtype=mod.float64)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())


@needs_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.vmap(lambda a, b: a * b)(m.ones(2, 3), m.ones(3, 3)),
        lambda m: m.vmap(lambda a: 1)(m.ones(2, 3)),
        lambda m: m.vmap(lambda a: a + m.rand(1))(m.ones(2, 3)),
        lambda m: m.vmap(lambda a: a, in_dims=2)(m.ones(2, 3)),
        lambda m: m.vmap(lambda a: a)(m.ones(())),
        lambda m: m.vmap(lambda a: a, in_dims=None)(m.ones(2)),
        lambda m: m.vmap(lambda a: a)(3),
        lambda m: m.vmap(lambda a: a, randomness="bad")(m.ones(2)),
    ],
)
def test_vmap_errors_like_torch(call):
    assert _outcome(lambda: call(ember)) == _outcome(lambda: call(torch))


def test_vmap_structure_mismatch_and_randomness_modes():
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        ember.vmap(lambda a, b: a + b, in_dims=(0,))(ember.ones(2, 3), ember.ones(3))
    ember.manual_seed(0)
    same = ember.vmap(lambda a: a + ember.rand(()), randomness="same")(ember.zeros(3))
    assert same[0].item() == same[1].item() == same[2].item()
    diff = ember.vmap(lambda a: a + ember.rand(()), randomness="different")(ember.zeros(3))
    assert len({diff[i].item() for i in range(3)}) == 3


# ---------------------------------------------------------------------- cond and sym_*
@needs_torch
@pytest.mark.parametrize(
    "pred",
    [True, False, 1, "tensor_pos", "tensor_neg", "tensor_two", "str"],
)
def test_cond_like_torch(pred):
    def make(m):
        x = m.arange(3.0)
        p = {
            "tensor_pos": x.sum() > 0,
            "tensor_neg": x.sum() < 0,
            "tensor_two": m.tensor([True, False]),
            "str": "x",
        }.get(pred, pred)
        return m.cond(p, lambda a: a + 1, lambda a: a - 1, (x,))

    got, want = _outcome(lambda: make(ember)), _outcome(lambda: make(torch))
    if isinstance(want, str):  # an error: same type, same leading words
        assert got.split(" but got")[0] == want.split(" but got")[0]
    else:
        np.testing.assert_array_equal(got, want)


def test_cond_operands_must_be_a_sequence():
    with pytest.raises(RuntimeError, match="Expected operands to be a tuple or list"):
        ember.cond(True, lambda a: a, lambda a: a, ember.ones(2))


@needs_torch
@pytest.mark.parametrize(
    "name, args",
    [
        ("sym_int", (3.7,)),
        ("sym_int", (-3.7,)),
        ("sym_int", (-0.5,)),
        ("sym_int", ("3",)),
        ("sym_float", (3,)),
        ("sym_float", (True,)),
        ("sym_max", (2, 3.0)),
        ("sym_max", (2, 3)),
        ("sym_max", (True, 3)),
        ("sym_min", (2, 3.0)),
        ("sym_min", (5, 3)),
        ("sym_not", (1,)),
        ("sym_not", (0,)),
        ("sym_sum", ([1, 2, 3.0],)),
        ("sym_sum", (1, 2)),
        ("sym_sum", ([],)),
    ],
)
def test_sym_helpers_like_torch(name, args):
    got, want = getattr(ember, name)(*args), getattr(torch, name)(*args)
    assert got == want and type(got) is type(want)


def test_sym_tensor_arguments_and_errors():
    assert ember.sym_int(ember.tensor(3.5)) == 3 and ember.sym_not(ember.tensor(True)) is False
    with pytest.raises(TypeError, match="sym_max: expected int or float arguments"):
        ember.sym_max("a", "b")


# ---------------------------------------------------------------------- hash_tensor
@needs_torch
@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool"]
)
@pytest.mark.parametrize(
    "kw", [{}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}, {"dim": None}, {"dim": -1}]
)
def test_hash_tensor_parity(dtype, kw):
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0)) * 10
    x = x.to(getattr(torch, dtype))
    e = ember.tensor(x.float().numpy()).to(getattr(ember, dtype))
    got, want = ember.hash_tensor(e, **kw), torch.hash_tensor(x, **kw)
    assert got.dtype == ember.uint64 and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@needs_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.hash_tensor(m.ones(2, 3), mode=1),
        lambda m: m.hash_tensor(m.ones(2, 3), dim=2),
        lambda m: m.hash_tensor(m.ones(0)),
        lambda m: m.hash_tensor(m.ones(0, 3), dim=0),
    ],
)
def test_hash_tensor_errors(call):
    got, want = _outcome(lambda: call(ember)), _outcome(lambda: call(torch))
    assert got.split(":")[0] == want.split(":")[0]  # the exception type
    if "mode" not in want:
        assert got == want


def test_hash_tensor_keeps_names_of_kept_dims():
    x = ember.ones(2, 3, names=("N", "C"))
    assert ember.hash_tensor(x, dim="C").names == ("N",)


# ---------------------------------------------------------------------- streams, events, cpu
@needs_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.Stream().synchronize(),
        lambda m: m.Stream().query(),
        lambda m: m.Stream().wait_stream(m.Stream()),
        lambda m: m.Stream().record_event(),
        lambda m: m.Stream().wait_event(m.Event()),
        lambda m: m.Event().query(),
        lambda m: m.Event().synchronize(),
        lambda m: m.Event().record(),
        lambda m: m.Event().elapsed_time(m.Event()),
        lambda m: m.Stream() == m.Stream(),
        lambda m: (m.Stream().device_type, m.Stream().device_index, m.Stream().stream_id),
        lambda m: m.get_device_module(1),
        lambda m: m.get_device_module().__name__,
        lambda m: m.get_device_module("cpu").device_count(),
        lambda m: m.cpu.is_available() and m.cpu.current_device(),
    ],
)
def test_streams_events_like_torch(call):
    got, want = _outcome(lambda: call(ember)), _outcome(lambda: call(torch))
    if isinstance(want, str):
        want = want.replace("torch", "ember")
    assert got == want


def test_stream_repr_and_cuda_without_gpu():
    assert repr(ember.Stream()) == "ember.Stream device_type=cpu, device_index=-1, stream_id=0"
    if not ember.core.device.is_cuda_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            ember.Stream("cuda")


# ---------------------------------------------------------------------- lobpcg
def _spd(n, seed):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


@needs_torch
@pytest.mark.parametrize(
    "kw", [{"k": 2}, {"k": 3, "largest": False}, {"k": 1, "B": True}, {"k": 2, "B": True}]
)
def test_lobpcg_like_torch(kw):
    a = _spd(12, 0)
    b = np.diag(np.arange(1.0, 13.0)) if kw.pop("B", False) else None
    wt = torch.tensor([1.0, 2.0, 3.0][: kw["k"]], dtype=torch.float64)
    ea = ember.tensor(a, requires_grad=True)
    ta = torch.tensor(a, requires_grad=True)
    eb = None if b is None else ember.tensor(b)
    tb = None if b is None else torch.tensor(b)
    ee, ex = ember.lobpcg(ea, B=eb, **kw)
    te, tx = torch.lobpcg(ta, B=tb, **kw)
    np.testing.assert_allclose(ee.detach().numpy(), te.detach().numpy(), rtol=1e-8)
    # eigenvectors up to sign: the projections agree
    exn, txn = ex.detach().numpy(), tx.detach().numpy()
    np.testing.assert_allclose(np.abs(np.sum(exn * txn, 0)), np.abs(np.sum(txn * txn, 0)), 1e-6)
    if b is not None:  # torch has no backward with B != I (ember's is gradchecked below)
        return
    (ee * ember.tensor(wt.numpy())).sum().backward()
    (te * wt).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), atol=1e-5)


@needs_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.lobpcg(m.tensor(_spd(9, 1)), k=4),
        lambda m: m.lobpcg(m.tensor(_spd(9, 1)), k=2, n=4),
        lambda m: m.lobpcg(m.ones(3, 4)),
    ],
)
def test_lobpcg_errors_like_torch(call):
    got, want = _outcome(lambda: call(ember)), _outcome(lambda: call(torch))
    assert got.replace("ember.Size", "torch.Size") == want


def test_lobpcg_gradcheck():
    a = ember.tensor(_spd(6, 2), requires_grad=True)
    b = ember.tensor(np.diag(np.arange(1.0, 7.0)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: ember.lobpcg((x + x.mT) / 2, k=2)[0], (a,))
    assert ember.autograd.gradcheck(
        lambda x, y: ember.lobpcg((x + x.mT) / 2, k=2, B=(y + y.mT) / 2)[0], (a, b)
    )


@pytest.mark.parametrize("axes", [(0,), (1,), (2,), (0, 2), (1, 2), (0, 1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_hash_tensor_xor_fold_equals_reduce(axes, keepdim):
    # the device path (cupy has no bitwise_xor.reduce) folds halves; it must equal numpy's
    # reduce for every axis set, odd lengths included
    from ember.core.ops.hashing import xor_fold

    bits = np.random.default_rng(3).integers(0, 2**63, (3, 5, 7), dtype=np.uint64)
    want = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim)
    np.testing.assert_array_equal(xor_fold(np, bits, axes, keepdim), want)


def test_typed_storage_warns_once_like_torch():
    from ember.core import runtime

    runtime._WARNED_ONCE.discard("typed_storage")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.ones(2).storage()
        ember.FloatStorage(2)
        ember.TypedStorage(3)
    msg = (
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
        "of tensor.storage()"
    )
    assert [(str(x.message), x.filename) for x in w] == [(msg, __file__)]
