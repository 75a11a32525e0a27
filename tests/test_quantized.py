"""Quantized tensors (core/quantized.py) and fake quantization (core/ops/fake_quant.py), against
torch: integer representations, dequantized values, quantization parameters, reprs, rounding
ties, clamping, per-channel axes, the quantized ops (batch norm, max pools: int_repr equal),
fake-quantize values and gradients, error messages, and dense ops refusing quantized tensors."""

from __future__ import annotations

import io
import pickle
import re
import warnings

import ember
import numpy as np
import pytest
from harness import A, Case, needs_torch, raises_like_torch, run_case

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

QDTYPES = ["quint8", "qint8", "qint32"]
ZP = {"quint8": 60, "qint8": -5, "qint32": 7, "quint4x2": 3, "quint2x4": 1}


@pytest.fixture(autouse=True)
def _quiet():
    # torch 2.13 warns that its quantized tensor creation functions are deprecated
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*quantize.*deprecated.*")
        yield


def _data(seed=0, shape=(4, 5, 6), spread=3.0, scale=0.05):
    """Random float32 values, with exact rounding ties (k + 0.5) * scale mixed in."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal(shape) * spread).astype(np.float32)
    flat = x.reshape(-1)
    n = min(40, flat.size)
    flat[:n] = ((np.arange(n) - n // 2) + 0.5) * np.float32(scale)
    return x


def _same_q(e, t):
    """ember quantized tensor ``e`` equals torch's ``t``: dtype, shape, int_repr, dequantized
    values, scheme and parameters, repr."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.is_quantized and t.is_quantized
    np.testing.assert_array_equal(e.int_repr().numpy(), t.int_repr().numpy())
    assert e.int_repr().dtype.name == str(t.int_repr().dtype).split(".")[-1]
    np.testing.assert_array_equal(e.dequantize().numpy(), t.dequantize().numpy())
    assert repr(e.qscheme()) == repr(t.qscheme()).replace("torch.", "ember.")
    if t.qscheme() == torch.per_tensor_affine:
        assert e.q_scale() == t.q_scale() and type(e.q_scale()) is float
        assert e.q_zero_point() == t.q_zero_point() and type(e.q_zero_point()) is int
    else:
        np.testing.assert_array_equal(
            e.q_per_channel_scales().numpy(), t.q_per_channel_scales().numpy()
        )
        assert e.q_per_channel_scales().dtype.name == str(t.q_per_channel_scales().dtype)[6:]
        np.testing.assert_array_equal(
            e.q_per_channel_zero_points().numpy(), t.q_per_channel_zero_points().numpy()
        )
        zd = t.q_per_channel_zero_points().dtype
        assert e.q_per_channel_zero_points().dtype.name == str(zd)[6:]
        assert e.q_per_channel_axis() == t.q_per_channel_axis()
    assert repr(e) == repr(t).replace("torch.", "ember.")


# ---------------------------------------------------------------------- dtypes and qschemes
@needs_torch
@pytest.mark.parametrize("name", QDTYPES + ["quint4x2", "quint2x4"])
def test_quantized_dtypes_like_torch(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert e.itemsize == t.itemsize
    assert e.is_floating_point is t.is_floating_point is False
    assert e.is_complex is t.is_complex is False
    raises_like_torch(
        lambda m: getattr(m, name).is_signed, RuntimeError, "isSignedType not supported"
    )
    raises_like_torch(
        lambda m: m.promote_types(getattr(m, name), m.float32),
        RuntimeError,
        "promoteTypes with quantized numbers is not handled yet; figure out what the correct "
        f"rules should be, offending types: {e.scalar_type} Float",
    )
    assert ember.promote_types(e, e) is e and torch.promote_types(t, t) is t
    assert pickle.loads(pickle.dumps(e)) is e
    assert ember.core.dtype.to_dtype(name) is e and ember.core.dtype.to_dtype(t) is e


def test_numpy_int8_stays_int8():
    # the quantized dtypes never enter numpy-dtype lookups
    assert ember.tensor(np.array([1, 2], dtype=np.int8)).dtype is ember.int8
    assert ember.tensor(np.array([1, 2], dtype=np.uint8)).dtype is ember.uint8
    assert ember.from_numpy(np.zeros(2, np.int32)).dtype is ember.int32


@needs_torch
def test_qschemes_like_torch():
    for n in [
        "per_tensor_affine",
        "per_channel_affine",
        "per_tensor_symmetric",
        "per_channel_symmetric",
        "per_channel_affine_float_qparams",
    ]:
        assert repr(getattr(ember, n)) == repr(getattr(torch, n)).replace("torch.", "ember.")
        assert str(getattr(ember, n)) == str(getattr(torch, n)).replace("torch.", "ember.")
        assert isinstance(getattr(ember, n), ember.qscheme)
        assert pickle.loads(pickle.dumps(getattr(ember, n))) is getattr(ember, n)


# ---------------------------------------------------------------------- quantize_per_tensor
@needs_torch
@pytest.mark.parametrize("qd", QDTYPES)
@pytest.mark.parametrize("scale", [0.05, 0.1, 1 / 3, 0.00214854861, 0.7])
def test_quantize_per_tensor_like_torch(qd, scale):
    x = _data(shape=(3, 7, 5), scale=scale, spread=scale * 200)  # ties and clamping both
    e = ember.quantize_per_tensor(ember.tensor(x), scale, ZP[qd], getattr(ember, qd))
    t = torch.quantize_per_tensor(torch.tensor(x), scale, ZP[qd], getattr(torch, qd))
    _same_q(e, t)


@needs_torch
def test_rounding_ties_to_even_and_clamping():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 300.0, -300.0], dtype=np.float32)
    e = ember.quantize_per_tensor(ember.tensor(x), 1.0, 0, ember.qint8)
    t = torch.quantize_per_tensor(torch.tensor(x), 1.0, 0, torch.qint8)
    _same_q(e, t)
    assert e.int_repr().tolist() == [0, 2, 2, 0, -2, -2, 4, 127, -128]


@needs_torch
@pytest.mark.parametrize(
    "shape", [(), (0,), (0, 3), (1,), (8,), (2, 3), (13, 11)], ids=lambda s: f"shape{s}"
)
def test_quantize_shapes_and_reprs(shape):
    x = _data(shape=shape)
    e = ember.quantize_per_tensor(ember.tensor(x), 0.1, 10, ember.quint8)
    t = torch.quantize_per_tensor(torch.tensor(x), 0.1, 10, torch.quint8)
    _same_q(e, t)
    assert e.size() == tuple(t.size()) and e.dim() == t.dim() and e.numel() == t.numel()
    assert e.stride() == t.stride() and e.element_size() == t.element_size()
    assert e.layout is ember.strided and e.device == ember.device("cpu")
    assert e.requires_grad is False and e.is_leaf and e.grad_fn is None


@needs_torch
def test_quantize_tensor_qparams_and_list_form():
    x = _data(shape=(5,))
    e = ember.quantize_per_tensor(ember.tensor(x), ember.tensor(0.1), ember.tensor(3), ember.quint8)
    t = torch.quantize_per_tensor(torch.tensor(x), torch.tensor(0.1), torch.tensor(3), torch.quint8)
    _same_q(e, t)
    assert e.q_scale() == 0.10000000149011612  # the float32 scale, as torch keeps it
    y = _data(seed=1, shape=(2, 3))
    es = ember.quantize_per_tensor(
        [ember.tensor(x), ember.tensor(y)],
        ember.tensor([0.1, 0.2]),
        ember.tensor([3, 4]),
        ember.qint8,
    )
    ts = torch.quantize_per_tensor(
        [torch.tensor(x), torch.tensor(y)],
        torch.tensor([0.1, 0.2]),
        torch.tensor([3, 4]),
        torch.qint8,
    )
    assert len(es) == len(ts) == 2
    for a, b in zip(es, ts):
        _same_q(a, b)
    ed, td = ember.dequantize(list(es)), torch.dequantize(list(ts))
    for a, b in zip(ed, td):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@needs_torch
@pytest.mark.parametrize("qd", ["quint4x2", "quint2x4"])
@pytest.mark.parametrize("shape", [(6,), (7,), (3, 3), (2, 5)], ids=str)
def test_sub_byte_dtypes(qd, shape):
    x = _data(shape=shape, scale=0.1, spread=0.5)
    e = ember.quantize_per_tensor(ember.tensor(x), 0.1, ZP[qd], getattr(ember, qd))
    t = torch.quantize_per_tensor(torch.tensor(x), 0.1, ZP[qd], getattr(torch, qd))
    _same_q(e, t)  # int_repr: the packed bytes, as torch gives them


@needs_torch
@pytest.mark.parametrize("qd", ["quint8", "qint8"])
@pytest.mark.parametrize("reduce_range", [False, True])
@pytest.mark.parametrize("kind", ["mixed", "positive", "negative", "tiny", "zeros", "one"])
def test_quantize_per_tensor_dynamic(qd, reduce_range, kind):
    x = _data(shape=(4, 6))
    x = {
        "mixed": x,
        "positive": np.abs(x) + 0.5,
        "negative": -np.abs(x) - 0.5,
        "tiny": x * 1e-6,
        "zeros": np.zeros(5, np.float32),
        "one": np.array([2.5], np.float32),
    }[kind]
    e = ember.quantize_per_tensor_dynamic(ember.tensor(x), getattr(ember, qd), reduce_range)
    t = torch.quantize_per_tensor_dynamic(torch.tensor(x), getattr(torch, qd), reduce_range)
    _same_q(e, t)


# ---------------------------------------------------------------------- per channel
@needs_torch
@pytest.mark.parametrize("qd", QDTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("scale_dtype", ["float64", "float32"])
def test_quantize_per_channel_like_torch(qd, axis, scale_dtype):
    x = _data(shape=(3, 4, 5), scale=0.05)
    r = np.random.default_rng(axis)
    n = x.shape[axis]
    s = (r.random(n) * 0.1 + 0.01).astype(scale_dtype)
    lo = -100 if qd != "quint8" else 0
    z = r.integers(lo, 100, n)
    e = ember.quantize_per_channel(
        ember.tensor(x), ember.tensor(s), ember.tensor(z), axis, getattr(ember, qd)
    )
    t = torch.quantize_per_channel(
        torch.tensor(x), torch.tensor(s), torch.tensor(z), axis, getattr(torch, qd)
    )
    _same_q(e, t)


@needs_torch
def test_per_channel_zero_point_dtypes_and_1d():
    x = _data(shape=(3,))
    for z in ([1, 2, 3], [1.0, 2.0, 3.0], [1.5, 2.7, -3.2], [0.5, 300.2, -1.5]):
        e = ember.quantize_per_channel(
            ember.tensor(x), ember.tensor([0.1, 0.2, 0.3]), ember.tensor(z), 0, ember.quint8
        )
        t = torch.quantize_per_channel(
            torch.tensor(x), torch.tensor([0.1, 0.2, 0.3]), torch.tensor(z), 0, torch.quint8
        )
        _same_q(e, t)  # float zero points stay float32 (and are not bounds-checked)
    x = _data(shape=(300, 4))
    for zd in ("float32", "float64", "int32"):
        z = np.array([1.5, 2.7, -3.2, 0.5]).astype(zd)
        s = np.array([0.1, 0.2, 0.3, 0.05])
        e = ember.quantize_per_channel(
            ember.tensor(x), ember.tensor(s), ember.tensor(z), 1, ember.qint8
        )
        t = torch.quantize_per_channel(
            torch.tensor(x), torch.tensor(s), torch.tensor(z), 1, torch.qint8
        )
        _same_q(e, t)


# ---------------------------------------------------------------------- tensor behaviour
@needs_torch
def test_clone_detach_eq_equal():
    x = _data(shape=(2, 3))
    e = ember.quantize_per_tensor(ember.tensor(x), 0.1, 3, ember.qint8)
    t = torch.quantize_per_tensor(torch.tensor(x), 0.1, 3, torch.qint8)
    for f in (lambda q: q.clone(), lambda q: q.detach(), lambda q: q.contiguous()):
        _same_q(f(e), f(t))
    c = e.clone()
    assert c._q is not e._q and e.detach()._q is e._q
    e2 = ember.quantize_per_tensor(ember.tensor(x), 0.05, 3, ember.qint8)
    t2 = torch.quantize_per_tensor(torch.tensor(x), 0.05, 3, torch.qint8)
    for a, b in [(e, e), (e, e2), (e, e.clone())]:
        ta, tb = (t if a is e else t2), (t if b is not e2 else t2)
        np.testing.assert_array_equal((a == b).numpy(), (ta == tb).numpy())
        assert a.equal(b) is ta.equal(tb)
    np.testing.assert_array_equal((e == 0.1).numpy(), (t == 0.1).numpy())
    assert e.equal(e.dequantize()) is t.equal(t.dequantize()) is False
    assert hash(e) != hash(e2)  # still hashable (a dict key, a set member)
    ec = ember.quantize_per_channel(
        ember.tensor(x), ember.tensor([0.1, 0.2]), ember.tensor([1, 2]), 0, ember.quint8
    )
    assert ec.equal(ec.clone()) and not ec.equal(
        ember.quantize_per_channel(
            ember.tensor(x), ember.tensor([0.1, 0.3]), ember.tensor([1, 2]), 0, ember.quint8
        )
    )


@needs_torch
def test_item_and_dense_dequantize():
    e = ember.quantize_per_tensor(ember.tensor([0.1]), 0.1, 3, ember.quint8)
    t = torch.quantize_per_tensor(torch.tensor([0.1]), 0.1, 3, torch.quint8)
    assert e.item() == t.item()
    d = ember.tensor([1.5, 2.0])
    np.testing.assert_array_equal(
        ember.dequantize(d).numpy(), torch.dequantize(torch.tensor([1.5, 2.0])).numpy()
    )
    assert d.dequantize() is d


def test_save_load_roundtrip(tmp_path):
    x = ember.tensor(_data(shape=(3, 4)))
    q = ember.quantize_per_tensor(x, 0.1, 3, ember.qint8)
    qc = ember.quantize_per_channel(
        x, ember.tensor([0.1, 0.2, 0.3]), ember.tensor([1, 2, 3]), 0, ember.quint8
    )
    p = tmp_path / "q.pt"
    ember.save({"q": q, "qc": qc}, p)
    back = ember.load(p, weights_only=False)
    assert back["q"].equal(q) and back["qc"].equal(qc)
    # the safe (weights-only) loader rebuilds them too (as torch's does)
    safe = ember.load(p)
    assert safe["q"].equal(q) and safe["qc"].equal(qc)
    assert ember.equal(safe["qc"], qc) and not ember.equal(safe["q"], qc)
    assert not ember.equal(q, x) and not ember.equal(x, q)  # as torch: never equal to dense
    assert pickle.loads(pickle.dumps(q)).equal(q)
    buf = io.BytesIO()
    pickle.dump(qc, buf)
    assert pickle.loads(buf.getvalue()).equal(qc)


# ---------------------------------------------------------------------- dense ops refuse
@pytest.mark.parametrize(
    "fn,opname",
    [
        (lambda q: ember.add(q, q), "add"),
        (lambda q: ember.exp(q), "exp"),
        (lambda q: q + 1, "add"),
        (lambda q: q * 2, "mul"),
        (lambda q: ember.matmul(q, q.t()), "matmul"),
        (lambda q: ember.cat([q, q]), None),
        (lambda q: ember.where(q.dequantize() > 0, q, q), None),
        (lambda q: q.sum(), "sum"),
        (lambda q: ember.nn.functional.relu(q), None),
        (lambda q: q.float(), None),
        (lambda q: q.abs(), "abs"),
    ],
)
def test_dense_ops_fail_loudly(fn, opname):
    q = ember.quantize_per_tensor(ember.tensor(_data(shape=(2, 3))), 0.1, 3, ember.quint8)
    msg = "ember does not support quantized tensors (ember.quint8) here; call .dequantize() first"
    with pytest.raises(RuntimeError, match=re.escape(msg)) as info:
        fn(q)
    if opname is not None:
        assert str(info.value).startswith(opname + ":")


VIEWS = [
    ("index_int", lambda q: q[0]),
    ("index_slice", lambda q: q[:, 1]),
    ("index_step", lambda q: q[..., ::2]),
    ("index_list", lambda q: q[[1, 0]]),
    ("reshape", lambda q: q.reshape(6, 4)),
    ("view", lambda q: q.view(4, -1)),
    ("flatten", lambda q: q.flatten()),
    ("permute", lambda q: q.permute(2, 0, 1)),
    ("transpose", lambda q: q.transpose(0, 1)),
    ("t", lambda q: q[0].t()),
    ("squeeze", lambda q: q.unsqueeze(0).squeeze()),
    ("unsqueeze", lambda q: q.unsqueeze(1)),
    ("permute_reshape", lambda q: q.permute(2, 0, 1).reshape(-1)),
    ("permute_contiguous", lambda q: q.permute(2, 0, 1).contiguous()),
    ("permute_clone", lambda q: q.permute(2, 0, 1).clone()),
]


@needs_torch
@pytest.mark.parametrize("fn", [f for _, f in VIEWS], ids=[n for n, _ in VIEWS])
def test_per_tensor_views_like_torch(fn):
    e, t = _pair("quint8", (2, 3, 4))
    er, tr = fn(e), fn(t)
    _same_q(er, tr)
    assert er.stride() == tr.stride() and er.is_contiguous() == tr.is_contiguous()


@needs_torch
def test_views_share_the_integers():
    e, _ = _pair("qint8", (2, 3, 4))
    v = e.permute(2, 0, 1)
    assert np.shares_memory(v._q, e._q) and np.shares_memory(e[0]._q, e._q)
    raises_like_torch(
        lambda m: (
            m.quantize_per_tensor(m.tensor(_data(shape=(2, 3, 4))), 0.1, 3, m.quint8)
            .permute(2, 0, 1)
            .view(-1)
        ),
        RuntimeError,
        "view size is not compatible with input tensor's size and stride",
    )


def test_views_of_per_channel_tensors_refuse():
    q = ember.quantize_per_channel(
        ember.tensor(_data(shape=(2, 3))), ember.tensor([0.1, 0.2]), ember.tensor([1, 2]), 0,
        ember.quint8,
    )  # fmt: skip
    msg = "ember supports this on per-tensor quantized tensors only; call .dequantize() first"
    for f in (lambda: q[0], lambda: q.t(), lambda: q.reshape(6)):
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            f()


@needs_torch
@pytest.mark.parametrize(
    "fn,exc,msg",
    [
        (lambda m, q: q.numpy(), TypeError, "Got unsupported ScalarType QUInt8"),
        (lambda m, q: q.tolist(), RuntimeError, "load_scalar: invalid type"),
        (lambda m, q: q.item(), RuntimeError, "a Tensor with 6 elements cannot be converted"),
        (lambda m, q: q.is_signed(), RuntimeError, "isSignedType not supported"),
        (lambda m, q: q.requires_grad_(), RuntimeError, "only Tensors of floating point dtype"),
        (lambda m, q: q.q_per_channel_scales(), RuntimeError, "kPerChannelAffine ||"),
        (lambda m, q: q.q_per_channel_zero_points(), RuntimeError, "kPerChannelAffine ||"),
        (lambda m, q: q.q_per_channel_axis(), RuntimeError, "kPerChannelAffine ||"),
        (lambda m, q: q.to(m.float32), RuntimeError, "requires quantized dtype like"),
    ],
)
def test_quantized_tensor_errors(fn, exc, msg):
    def run(m):
        x = m.tensor(_data(shape=(2, 3)))
        return fn(m, m.quantize_per_tensor(x, 0.1, 3, m.quint8))

    raises_like_torch(run, exc, msg)


@needs_torch
@pytest.mark.parametrize("name", ["q_scale", "q_zero_point"])
def test_per_tensor_accessors_on_per_channel(name):
    def run(m):
        q = m.quantize_per_channel(
            m.tensor(_data(shape=(2, 3))), m.tensor([0.1, 0.2]), m.tensor([1, 2]), 0, m.quint8
        )
        return getattr(q, name)()

    raises_like_torch(run, RuntimeError, "Expected quantizer->qscheme() == kPerTensorAffine")


# ---------------------------------------------------------------------- quantize errors
def _x(m, dtype=None):
    t = m.tensor(_data(shape=(3, 4)))
    return t if dtype is None else t.to(getattr(m, dtype))


QUANTIZE_ERRORS = [
    (lambda m: m.quantize_per_tensor(_x(m, "float64"), 0.1, 3, m.quint8), RuntimeError,
     "Quantize only works on Float Tensor, got Double"),
    (lambda m: m.quantize_per_tensor(_x(m, "float16"), 0.1, 3, m.quint8), RuntimeError,
     "Quantize only works on Float Tensor, got Half"),
    (lambda m: m.quantize_per_tensor(_x(m, "int64"), 0.1, 3, m.quint8), RuntimeError,
     "Quantize only works on Float Tensor, got Long"),
    (lambda m: m.quantize_per_tensor(_x(m), 0.1, 3, m.float32), RuntimeError,
     "ScalarType Float is not supported in new_qtensor."),
    (lambda m: m.quantize_per_tensor(_x(m), 0.1, 3, m.int8), RuntimeError,
     "ScalarType Char is not supported in new_qtensor."),
    (lambda m: m.quantize_per_tensor(_x(m), 0.1, 300, m.quint8), RuntimeError,
     "quantize_tensor_per_tensor_affine zero_point 300 is above upper bound."),
    (lambda m: m.quantize_per_tensor(_x(m), 0.1, -1, m.quint8), RuntimeError,
     "quantize_tensor_per_tensor_affine zero_point -1 is below lower bound."),
    (lambda m: m.quantize_per_tensor(_x(m), 0.1, -129, m.qint8), RuntimeError,
     "quantize_tensor_per_tensor_affine zero_point -129 is below lower bound."),
    (lambda m: m.quantize_per_tensor(_x(m), 0.1, 3.0, m.quint8), TypeError,
     "quantize_per_tensor()"),
    (lambda m: m.quantize_per_tensor(_x(m), m.tensor([0.1, 0.2]), m.tensor(3), m.quint8),
     RuntimeError, "a Tensor with 2 elements cannot be converted to Scalar"),
    (lambda m: m.quantize_per_tensor([_x(m), _x(m)], m.tensor([0.1]), m.tensor([3]), m.quint8),
     IndexError, "select(): index 1 out of range for tensor of size [1] at dimension 0"),
    (lambda m: m.quantize_per_channel(_x(m), m.tensor([0.1, 0.2]), m.tensor([1, 2]), 0,
                                      m.quint8), RuntimeError,
     "length of scales must equal to channel, expected 3 got, 2"),
    (lambda m: m.quantize_per_channel(_x(m), m.tensor([0.1, 0.2, 0.3]), m.tensor([1, 2]), 0,
                                      m.quint8), RuntimeError,
     "number of elements in scales and zero_points must match"),
    (lambda m: m.quantize_per_channel(_x(m), m.tensor([0.1, 0.2, 0.3]), m.tensor([1, 2, 3]), 2,
                                      m.quint8), RuntimeError,
     "Channel axis out of range in per channel affine quantization. Got: 2Expected: [0, 2)"),
    (lambda m: m.quantize_per_channel(_x(m), m.tensor([0.1, 0.2, 0.3]), m.tensor([1, 2, 3]), -1,
                                      m.quint8), RuntimeError,
     "Channel axis out of range in per channel affine quantization. Got: -1Expected: [0, 2)"),
    (lambda m: m.quantize_per_channel(_x(m), m.tensor([0.1, 0.2, 0.3]), m.tensor([1, 2, 300]),
                                      0, m.quint8), RuntimeError,
     "quantize_tensor_per_channel_affine zero_point 300 is above upper bound."),
    (lambda m: m.quantize_per_channel(_x(m, "float64"), m.tensor([0.1, 0.2, 0.3]),
                                      m.tensor([1, 2, 3]), 0, m.quint8), RuntimeError,
     "quantize_tensor_per_channel_affine expects a Float Tensor, got Double"),
    (lambda m: m.quantize_per_channel(_x(m), m.tensor([[0.1, 0.2, 0.3]]), m.tensor([1, 2, 3]), 0,
                                      m.quint8), RuntimeError,
     "scale tensor must have dimension 1"),
    (lambda m: m.quantize_per_channel(_x(m), [0.1, 0.2, 0.3], m.tensor([1, 2, 3]), 0, m.quint8),
     TypeError, "quantize_per_channel(): argument 'scales' (position 2) must be Tensor, not list"),
    (lambda m: m.quantize_per_channel(_x(m), m.tensor([0.1, 0.2, 0.3]), m.tensor([1, 2, 3]), 0,
                                      m.float32), RuntimeError,
     "ScalarType Float is not supported in new_qtensor."),
    (lambda m: m.quantize_per_channel(_x(m), m.tensor([0.1, 0.2, 0.3]), m.tensor([1, 2, 3]), 0,
                                      m.quint4x2), NotImplementedError,
     "\"quantize_tensor_per_channel_affine\" not implemented for 'QUInt4x2'"),
    (lambda m: m.quantize_per_tensor_dynamic(_x(m), m.qint32, False), RuntimeError,
     "dtype QInt32not supported"),
    (lambda m: m.quantize_per_tensor_dynamic(m.zeros(0), m.quint8, False), RuntimeError,
     "min(): Expected reduction dim to be specified for input.numel() == 0."),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("fn,exc,msg", QUANTIZE_ERRORS, ids=[m[:40] for _, _, m in QUANTIZE_ERRORS])
def test_quantize_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


# ---------------------------------------------------------------------- quantized ops
def _pair(qd, shape, scale=0.05, seed=0):
    x = _data(seed=seed, shape=shape, scale=scale)
    return (
        ember.quantize_per_tensor(ember.tensor(x), scale, ZP[qd], getattr(ember, qd)),
        torch.quantize_per_tensor(torch.tensor(x), scale, ZP[qd], getattr(torch, qd)),
    )


@needs_torch
@pytest.mark.parametrize("qd", QDTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 5), (2, 3, 4, 4), (2, 3, 2, 3, 2)], ids=str)
def test_quantized_batch_norm_like_torch(qd, shape):
    e, t = _pair(qd, shape)
    r = np.random.default_rng(1)
    w = (r.random(3) + 0.5).astype(np.float32)
    b = r.standard_normal(3).astype(np.float32)
    mean = (r.standard_normal(3) * 0.1).astype(np.float32)
    var = (r.random(3) + 0.5).astype(np.float32)
    args = (1e-5, 0.07, ZP[qd] - 4)
    er = ember.quantized_batch_norm(e, *map(ember.tensor, (w, b, mean, var)), *args)
    tr = torch.quantized_batch_norm(t, *map(torch.tensor, (w, b, mean, var)), *args)
    _same_q(er, tr)


def _bn_args(m, c=3, dtype="float32"):
    t = lambda v: m.tensor(v, dtype=getattr(m, dtype))
    return t([1.0] * c), t([0.0] * c), t([0.0] * c), t([1.0] * c)


BN_ERRORS = [
    (lambda m, q: m.quantized_batch_norm(q.dequantize(), *_bn_args(m), 1e-5, 0.1, 3), NotImplementedError,
     "Could not run 'aten::quantized_batch_norm' with arguments from the 'CPU' backend"),
    (lambda m, q: m.quantized_batch_norm(q, *_bn_args(m, 2), 1e-5, 0.1, 3), RuntimeError,
     "Expect weight size to match C"),
    (lambda m, q: m.quantized_batch_norm(q, None, None, *_bn_args(m)[2:], 1e-5, 0.1, 3),
     RuntimeError, "Weight must be provided"),
    (lambda m, q: m.quantized_batch_norm(q, *_bn_args(m, dtype="float64"), 1e-5, 0.1, 3),
     RuntimeError, "expected scalar type Float but found Double"),
]  # fmt: skip


POOL2 = [(2,), ([3, 2], [2, 1], [1, 0], [2, 1], True), (3, 1, 1, 1, False),
         ([2, 3], [], [1, 1], [1, 2], True), (2, [1, 1]), (3, 2, 1, 1, True)]  # fmt: skip
POOL1 = [(2,), (3, 2, 1, 2, True), (3, 1, 1, 1, False), (2, [], 1, 1, True), ([3], [2])]


@needs_torch
@pytest.mark.parametrize("qd", QDTYPES)
@pytest.mark.parametrize("args", POOL2, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 7, 8), (3, 6, 5)], ids=str)
def test_quantized_max_pool2d_like_torch(qd, args, shape):
    e, t = _pair(qd, shape)
    _same_q(ember.quantized_max_pool2d(e, *args), torch.quantized_max_pool2d(t, *args))


@needs_torch
@pytest.mark.parametrize("qd", QDTYPES)
@pytest.mark.parametrize("args", POOL1, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 9), (3, 8)], ids=str)
def test_quantized_max_pool1d_like_torch(qd, args, shape):
    e, t = _pair(qd, shape)
    _same_q(ember.quantized_max_pool1d(e, *args), torch.quantized_max_pool1d(t, *args))


POOL_ERRORS = [
    (lambda m, q: m.quantized_max_pool2d(q.dequantize(), 2), NotImplementedError,
     "Could not run 'aten::quantized_max_pool2d' with arguments from the 'CPU' backend"),
    (lambda m, q: m.quantized_max_pool2d(m.quantize_per_tensor(m.zeros(4, 4), 0.1, 3, m.quint8),
                                         2), RuntimeError,
     "Expecting the input tensor of rank 3 or 4."),
    (lambda m, q: m.quantized_max_pool2d(q, [2, 2, 2]), RuntimeError,
     "Expected 1d or 2d kernel size, got 3"),
    (lambda m, q: m.quantized_max_pool2d(q, [2, 2], [1]), RuntimeError,
     "Expected no strides or 2d strides, got1"),
    (lambda m, q: m.quantized_max_pool2d(q, [0, 2]), RuntimeError,
     "kernel_size should be greater than zero."),
    (lambda m, q: m.quantized_max_pool2d(q, 2, 0), RuntimeError,
     "strides should be greater than zero."),
    (lambda m, q: m.quantized_max_pool2d(q, 2, padding=2), RuntimeError,
     "padding should be smaller than half of kernel_size."),
    (lambda m, q: m.quantized_max_pool2d(q, [2, 2], [1, 1], [-1, 0]), RuntimeError,
     "pad must be non-negative, but got pad: -1"),
    (lambda m, q: m.quantized_max_pool2d(q, [2, 2], [1, 1], [0, 0], [0, 1]), RuntimeError,
     "Expected dilation >= 1"),
    (lambda m, q: m.quantized_max_pool2d(q, 5), RuntimeError,
     "Given input size: (3x4x4). Calculated output size: (3x0x0). Output size is too small."),
    (lambda m, q: m.quantized_max_pool1d(q.dequantize(), 2),
     NotImplementedError,
     "Could not run 'aten::quantized_max_pool1d' with arguments from the 'CPU' backend"),
    (lambda m, q: m.quantized_max_pool1d(q, 2), RuntimeError,
     "max_pool1d() Expected 2D or 3D input tensor, but got [2, 3, 4, 4]"),
    (lambda m, q: m.quantized_max_pool1d(m.quantize_per_tensor(m.zeros(3, 7), 0.1, 3, m.quint8),
                                         [2, 2]), RuntimeError,
     ("max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got "
      "size 2")),
    (lambda m, q: m.quantized_max_pool1d(m.quantize_per_tensor(m.zeros(3, 7), 0.1, 3, m.quint8),
                                         2, 0), RuntimeError,
     "max_pool1d() stride must be greater than zero, but got 0"),
    (lambda m, q: m.quantized_max_pool1d(m.quantize_per_tensor(m.zeros(3, 7), 0.1, 3, m.quint8),
                                         2, 1, 2), RuntimeError,
     ("max_pool1d() padding should be at most half of kernel size, but got padding=2 and "
      "kernel_size=2")),
    (lambda m, q: m.quantized_max_pool1d(m.quantize_per_tensor(m.zeros(3, 7), 0.1, 3, m.quint8),
                                         8), RuntimeError,
     "max_pool1d() Invalid computed output size: 0"),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize(
    "fn,exc,msg", BN_ERRORS + POOL_ERRORS, ids=[m[:40] for _, _, m in BN_ERRORS + POOL_ERRORS]
)
def test_quantized_batch_norm_and_max_pool_errors(fn, exc, msg):
    raises_like_torch(
        lambda m: fn(m, m.quantize_per_tensor(m.tensor(_data(shape=(2, 3, 4, 4))), 0.1, 3,
                                              m.quint8)),
        exc, msg,
    )  # fmt: skip


POOL3 = [(2,), ([3, 2, 2], [2, 1, 2], [1, 0, 1], [1, 2, 1], True), (3, 1, 1, 1, False)]


@needs_torch
@pytest.mark.parametrize("qd", QDTYPES)
@pytest.mark.parametrize("args", POOL3, ids=str)
def test_quantized_max_pool3d_like_torch(qd, args):
    e, t = _pair(qd, (2, 3, 5, 6, 7))
    _same_q(ember.quantized_max_pool3d(e, *args), torch.quantized_max_pool3d(t, *args))


POOL3_ERRORS = [
    (lambda m, q: m.quantized_max_pool3d(q.dequantize(), 2), NotImplementedError,
     "Could not run 'aten::quantized_max_pool3d' with arguments from the 'CPU' backend"),
    (lambda m, q: m.quantized_max_pool3d(m.quantize_per_tensor(m.zeros(3, 5, 6, 7), 0.1, 3,
                                                               m.quint8), 2), RuntimeError,
     "Expecting the input tensor of rank 5."),
    (lambda m, q: m.quantized_max_pool3d(q, [2, 2]), RuntimeError,
     "Expected 3d kernel size, got 2"),
    (lambda m, q: m.quantized_max_pool3d(q, 2, [1, 1]), RuntimeError,
     "Expected no strides or 3d strides, got2"),
    (lambda m, q: m.quantized_max_pool3d(q, 2, 1, 2), RuntimeError,
     "padding should be smaller than half of kernel_size."),
    (lambda m, q: m.quantized_max_pool3d(q, 9), RuntimeError,
     "Given input size: (3t5x6x7). Calculated output size: (3t0x0x0). Output size is too small."),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("fn,exc,msg", POOL3_ERRORS, ids=[m[:40] for _, _, m in POOL3_ERRORS])
def test_quantized_max_pool3d_errors(fn, exc, msg):
    raises_like_torch(
        lambda m: fn(m, m.quantize_per_tensor(m.tensor(_data(shape=(2, 3, 5, 6, 7))), 0.1, 3,
                                              m.quint8)),
        exc, msg,
    )  # fmt: skip


@needs_torch
def test_accessor_functions():
    x = _data(shape=(2, 3))
    e = ember.quantize_per_tensor(ember.tensor(x), 0.1, 3, ember.qint8)
    t = torch.quantize_per_tensor(torch.tensor(x), 0.1, 3, torch.qint8)
    np.testing.assert_array_equal(ember.int_repr(e).numpy(), torch.int_repr(t).numpy())
    assert ember.q_scale(e) == torch.q_scale(t) and ember.q_zero_point(e) == torch.q_zero_point(t)
    ec = ember.quantize_per_channel(
        ember.tensor(x), ember.tensor([0.1, 0.2]), ember.tensor([1, 2]), 0, ember.quint8
    )
    tc = torch.quantize_per_channel(
        torch.tensor(x), torch.tensor([0.1, 0.2]), torch.tensor([1, 2]), 0, torch.quint8
    )
    assert ember.q_per_channel_axis(ec) == torch.q_per_channel_axis(tc) == 0
    np.testing.assert_array_equal(
        ember.q_per_channel_scales(ec).numpy(), torch.q_per_channel_scales(tc).numpy()
    )
    np.testing.assert_array_equal(
        ember.q_per_channel_zero_points(ec).numpy(), torch.q_per_channel_zero_points(tc).numpy()
    )
    raises_like_torch(
        lambda m: m.int_repr(m.ones(2)),
        NotImplementedError,
        "Could not run 'aten::int_repr' with arguments from the 'CPU' backend",
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda: ember.zeros(2, dtype=ember.qint8),
        lambda: ember.tensor([1.0], dtype=ember.quint8),
        lambda: ember.ones(2).to(ember.qint32),
        lambda: ember.empty(2, dtype=ember.quint8),
        lambda: ember.arange(3, dtype=ember.qint8),
    ],
)
def test_dense_tensors_cannot_take_quantized_dtypes(fn):
    # never a silent float64 tensor: the quantized dtypes have no numpy type
    with pytest.raises(RuntimeError, match="is a quantized dtype, which dense tensors cannot hold"):
        fn()


@needs_torch
def test_quantized_ops_on_per_channel_input():
    def run(op):
        def f(m):
            q = m.quantize_per_channel(
                m.tensor(_data(shape=(2, 3, 4, 4))),
                m.tensor([0.1, 0.2]),
                m.tensor([1, 2]),
                0,
                m.quint8,
            )
            return op(m, q)

        return f

    msg = "Expected quantizer->qscheme() == kPerTensorAffine to be true"
    raises_like_torch(run(lambda m, q: m.quantized_max_pool2d(q, 2)), RuntimeError, msg)
    raises_like_torch(
        run(lambda m, q: m.quantized_batch_norm(q, *_bn_args(m), 1e-5, 0.1, 3)), RuntimeError, msg
    )


# ---------------------------------------------------------------------- fake quantization
def _fq_t(m, x, s=0.1, z=3, lo=0, hi=40):
    return m.fake_quantize_per_tensor_affine(x, s, z, lo, hi)


def _fq_tq(m, x, s=0.1, z=3, lo=0, hi=40):
    return m.fake_quantize_per_tensor_affine(x, m.tensor(s), m.tensor(z), lo, hi)


def _fq_c(axis, zdtype="int32", lo=-20, hi=20):
    def f(m, x):
        n = x.shape[axis]
        s = m.tensor([0.05 + 0.03 * i for i in range(n)])
        z = m.tensor([(i % 5) - 2 + (0.5 if zdtype != "int32" else 0) for i in range(n)])
        return m.fake_quantize_per_channel_affine(x, s, z.to(getattr(m, zdtype)), axis, lo, hi)

    return f


FQ_CASES = [
    Case("fq_tensor", _fq_t, [A(4, 5)]),
    Case("fq_tensor_clamp", lambda m, x: _fq_t(m, x, 0.05, 5, 0, 30), [A(4, 5)]),
    Case("fq_tensor_signed", lambda m, x: _fq_t(m, x, 1 / 30, 0, -20, 20), [A(3, 7)]),
    Case("fq_tensor_f64", _fq_t, [A(4, 5, dtype="float64")]),
    Case("fq_tensor_f16", _fq_t, [A(4, 5, dtype="float16")], atol=1e-3, rtol=1e-3),
    Case("fq_tensor_qparams", _fq_tq, [A(4, 5)]),
    Case("fq_tensor_qparams_f64", _fq_tq, [A(2, 3, 4, dtype="float64")]),
    Case("fq_tensor_0d", _fq_t, [A()]),
    Case("fq_channel_0", _fq_c(0), [A(4, 5, 3)]),
    Case("fq_channel_1", _fq_c(1), [A(4, 5, 3)]),
    Case("fq_channel_2", _fq_c(2), [A(4, 5, 3)]),
    Case("fq_channel_f64", _fq_c(1), [A(4, 5, 3, dtype="float64")]),
    Case("fq_channel_zp_float", _fq_c(1, "float32"), [A(4, 5, 3)]),
    Case("fq_channel_zp_half", _fq_c(0, "float16"), [A(4, 5)]),
    Case("fq_channel_narrow", _fq_c(1, "int32", -3, 3), [A(4, 5, 3)]),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("case", FQ_CASES, ids=str)
def test_fake_quantize_parity(case):
    run_case(case)


def test_fake_quantize_ties_and_boundaries():
    # torch's mask is decided on the rounded value: -0.35 -> round(-3.5) = -4 (+3 = -1 < 0)
    x = [-0.3, -0.35, -0.34, -0.36, 0.7, 0.74, 0.75, 0.76, 0.65, 0.25, 0.15]
    if torch is None:
        pytest.skip("torch is not installed (the oracle)")
    e, t = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ey, ty = _fq_t(ember, e, 0.1, 3, 0, 10), _fq_t(torch, t, 0.1, 3, 0, 10)
    np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
    g = np.linspace(0.5, 1.5, len(x)).astype(np.float32)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())
    assert e.grad.numpy()[[1, 3, 6, 7]].tolist() == [0, 0, 0, 0]


def _off_grid(shape, scale, seed=0, lo=-30, hi=30):
    # values k*scale + 0.3*scale: far (in finite-difference terms) from every rounding boundary
    r = np.random.default_rng(seed)
    k = r.integers(lo, hi, shape)
    return ember.tensor((k + 0.3) * scale, dtype=ember.float64, requires_grad=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: _fq_t(m, x, 0.1, 3, 0, 40),
        lambda m, x: _fq_tq(m, x, 0.1, 3, 0, 40),
        lambda m, x: _fq_c(1)(m, x),
    ],
    ids=["per_tensor", "per_tensor_qparams", "per_channel"],
)
def test_fake_quantize_gradchecks(fn):
    # the straight-through gradient is 1 inside the range, which finite differences of the
    # staircase cannot see; outside it (clamped) the function is flat and the gradient 0: there
    # gradcheck applies. gradgradcheck (grad * mask is linear in grad, flat in x) applies anywhere
    # off the rounding boundaries.
    f = lambda x: fn(ember, x)
    outside = ember.tensor(
        np.concatenate([np.linspace(-9, -5, 12), np.linspace(5, 9, 12)]).reshape(2, 3, 4),
        dtype=ember.float64, requires_grad=True,
    )  # fmt: skip
    assert ember.autograd.gradcheck(f, (outside,))
    assert ember.autograd.gradgradcheck(f, (_off_grid((2, 3, 4), 0.05),))
    x = _off_grid((2, 3, 4), 0.05, seed=1)
    y = f(x)
    (g,) = ember.autograd.grad(y, x, ember.ones_like(y), create_graph=True)
    assert g.requires_grad or not g.grad_fn  # differentiable again (double backward works)


def test_fake_quantize_double_backward_matches_torch():
    if torch is None:
        pytest.skip("torch is not installed (the oracle)")
    x = _data(shape=(3, 4), scale=0.1)
    res = []
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        y = _fq_t(m, t, 0.1, 3, 0, 20)
        u = m.tensor(np.linspace(0.5, 1.5, 12).reshape(3, 4).astype(np.float32), requires_grad=True)
        (g,) = m.autograd.grad(y, t, u, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), u)
        res.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])


def _fx(m, dtype="float32"):
    return m.tensor(_data(shape=(2, 3, 4)), dtype=getattr(m, dtype))


def _sz(m, n=3, sd="float32", zd="int32", zv=0):
    return m.tensor([0.1] * n, dtype=getattr(m, sd)), m.tensor([zv] * n, dtype=getattr(m, zd))


FQ_ERRORS = [
    (lambda m: _fq_t(m, _fx(m), 0.1, 3, 10, 0), RuntimeError,
     "`quant_min` should be less than or         equal to `quant_max`."),
    (lambda m: _fq_t(m, _fx(m), 0.1, 30, 0, 10), RuntimeError,
     "`zero_point` must be between `quant_min` and `quant_max`."),
    (lambda m: _fq_tq(m, _fx(m), 0.1, 3, 10, 1), RuntimeError,
     "`quant_min` should be less than or         equal to `quant_max`."),
    (lambda m: _fq_t(m, _fx(m, "int64"), 0.1, 3, 0, 10), NotImplementedError,
     "\"fake_quantize_tensor_cachemask_kernel_type_handling\" not implemented for 'Long'"),
    (lambda m: _fq_t(m, _fx(m), 0.1, 3.5, 0, 10), TypeError,
     "fake_quantize_per_tensor_affine()"),
    (lambda m: m.fake_quantize_per_tensor_affine(_fx(m), m.tensor([0.1, 0.2]), m.tensor(3), 0,
                                                 10), RuntimeError,
     "a Tensor with 2 elements cannot be converted to Scalar"),
    (lambda m: m.fake_quantize_per_tensor_affine(_fx(m), m.tensor(0.1, requires_grad=True),
                                                 m.tensor(3.0), 0, 10), RuntimeError,
     "is not differentiable with respect to argument 'scale'"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m, sd="float64"), 1, 0, 255),
     RuntimeError, "Scale must be Float or BFloat16, found Double"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m, sd="float16"), 1, 0, 255),
     RuntimeError, "Scale must be Float or BFloat16, found Half"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m, zd="int64"), 1, 0, 255),
     RuntimeError, "Zero-point must be Int32, Float or Half, found Long"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), _sz(m)[0], _sz(m)[1].reshape(3, 1), 1,
                                                  0, 255), RuntimeError,
     "zero point should be a 1-D tensor"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), _sz(m)[0].reshape(3, 1),
                                                  _sz(m)[1].reshape(3, 1), 1, 0, 255),
     RuntimeError, "scale should be a 1-D tensor"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), _sz(m)[0], _sz(m, 2)[1], 1, 0, 255),
     RuntimeError, "scale and zero-point need to have the same dimensions"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m), 0, 0, 255), RuntimeError,
     "dimensions of scale and zero-point are not consistent with input tensor"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m), -1, 0, 255), RuntimeError,
     "dimensions of scale and zero-point are not consistent with input tensor"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m), 3, 0, 255), IndexError,
     "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m), -2, 0, 255), RuntimeError,
     "`axis` must be between 0 and number of dimensions of input"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m), 1, 10, 0), RuntimeError,
     "`quant_min` should be less than or         equal to `quant_max`."),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m), *_sz(m), 1, 3, 255), RuntimeError,
     "`zero_point` must be between `quant_min` and `quant_max`."),
    (lambda m: m.fake_quantize_per_channel_affine(m.tensor(0.5), *_sz(m, 1), 0, 0, 255),
     IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (lambda m: m.fake_quantize_per_channel_affine(_fx(m, "int64"), *_sz(m), 1, 0, 255),
     NotImplementedError,
     "\"fake_quantize_channel_cachemask_cpu_type_handling\" not implemented for 'Long'"),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("fn,exc,msg", FQ_ERRORS, ids=[m[:40] for _, _, m in FQ_ERRORS])
def test_fake_quantize_errors(fn, exc, msg):
    raises_like_torch(fn, exc, msg)


def test_fake_quantize_keeps_names():
    x = ember.randn(2, 3, names=("N", "C"))
    assert _fq_t(ember, x).names == ("N", "C")
    assert _fq_c(1)(ember, x).names == ("N", "C")


def test_dense_accessors_still_raise():
    # the dense Tensor's quantized-only methods keep torch's error (tests/test_tensor_methods.py
    # checks the message); the QuantizedTensor subclass is what overrides them
    with pytest.raises(NotImplementedError, match="aten::int_repr"):
        ember.zeros(2).int_repr()
    assert ember.zeros(2).is_quantized is False


# ---------------------------------------------------------------------- device dispatch
def test_strict_cuda_dispatch():
    # the kernels run on the array module of their inputs: on the strict fake-cupy backend a
    # numpy call on device data would raise; results stay on the device and equal the cpu's
    from strict_backend import StrictArray, strict_cuda

    a = _data(shape=(2, 4, 4))
    sc, zp = [0.1, 0.2], [1, 2]

    def runs(m, dev):
        x = m.tensor(a, device=dev)
        s, z = m.tensor(sc, device=dev), m.tensor(zp, device=dev)
        q = m.quantize_per_tensor(x, 0.1, 2, m.quint8)
        return [
            q.int_repr(),
            q.dequantize(),
            m.quantize_per_channel(x, s, z, 0, m.qint8).dequantize(),
            m.fake_quantize_per_tensor_affine(x, 0.1, 2, 0, 255),
            m.fake_quantize_per_channel_affine(x, s, z.to(m.int32), 0, 0, 255),
            m.quantized_max_pool2d(q, 2).int_repr(),
        ]

    want = [r.numpy() for r in runs(ember, "cpu")]
    with strict_cuda():
        for r, w in zip(runs(ember, "cuda"), want):
            assert r.device.type == "cuda" and isinstance(r._data, StrictArray)
            np.testing.assert_allclose(np.asarray(r._data), w, rtol=1e-6, atol=1e-6)
