"""dtype objects, finfo/iinfo, the default dtype, torch's promotion rules (full tables vs torch)."""

import pickle
import warnings

import ember
import numpy as np
import pytest
from harness import ALL_DTYPES

torch = pytest.importorskip("torch")

ALL = ALL_DTYPES
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def outcome(fn):
    try:
        return repr(fn()).replace("torch.", "ember.")
    except Exception as e:  # noqa: BLE001 - type + message are compared
        return f"{type(e).__name__}: {e}".replace("torch.", "ember.")


def test_dtype_objects_match_torch():
    for n in ALL:
        e, t = getattr(ember, n), getattr(torch, n)
        assert repr(e) == str(e) == str(t).replace("torch.", "ember.")
        assert (e.is_floating_point, e.is_complex, e.is_signed, e.itemsize) == (
            t.is_floating_point,
            t.is_complex,
            t.is_signed,
            t.itemsize,
        ), n
        assert outcome(e.to_real) == outcome(t.to_real), n
        if n != "float16":  # torch: complex32, which ember does not have (complex64 instead)
            assert outcome(e.to_complex) == outcome(t.to_complex), n
    assert ember.float16.to_complex() is ember.complex64


def test_aliases_and_identity():
    pairs = {
        "half": "float16",
        "float": "float32",
        "double": "float64",
        "cfloat": "complex64",
        "cdouble": "complex128",
        "short": "int16",
        "int": "int32",
        "long": "int64",
    }
    for alias, name in pairs.items():
        assert getattr(ember, alias) is getattr(ember, name)
        assert getattr(torch, alias) is getattr(torch, name)
    assert repr(ember.bool) == "ember.bool" and ember.bool is not bool
    for n in ALL:
        d = getattr(ember, n)
        assert pickle.loads(pickle.dumps(d)) is d and isinstance(d, ember.dtype)
        assert d != getattr(ember, "float64" if n != "float64" else "int64")
    assert {ember.float32: 1}[ember.float] == 1
    with pytest.raises(TypeError):
        ember.float32 < ember.float64  # noqa: B015 - unordered, like torch


def test_tensor_dtype_is_the_dtype_object():
    for n in ALL:
        d = getattr(ember, n)
        assert ember.zeros(2, dtype=d).dtype is d


# ---------------------------------------------------------------------------------- finfo / iinfo
@pytest.mark.parametrize("name", FLOATS + ["complex64", "complex128"])
def test_finfo_parity(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for k in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(e, k) == getattr(t, k) and type(getattr(e, k)) is type(getattr(t, k)), k
    assert repr(e) == repr(t)


def test_finfo_default_and_errors():
    assert ember.finfo().dtype == "float32"
    ember.set_default_dtype(ember.float64)
    assert ember.finfo().eps == torch.finfo(torch.float64).eps
    for n in ("int32", "bool"):
        assert outcome(lambda n=n: ember.finfo(getattr(ember, n))) == outcome(
            lambda n=n: torch.finfo(getattr(torch, n))
        )


@pytest.mark.parametrize(
    "name",
    [
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int8",
        "int16",
        "int32",
        "int64",
        "bool",
        "float32",
        "complex64",
    ],
)
def test_iinfo_parity(name):
    def info(m):
        i = m.iinfo(getattr(m, name))
        return (i.bits, i.max, i.min, i.dtype, repr(i))

    assert outcome(lambda: info(ember)) == outcome(lambda: info(torch))


# ---------------------------------------------------------------------------------- default dtype
@pytest.mark.parametrize("name", FLOATS)
def test_default_dtype_drives_creation_and_promotion(name):
    ember.set_default_dtype(getattr(ember, name))
    torch.set_default_dtype(getattr(torch, name))
    try:
        assert ember.get_default_dtype() is getattr(ember, name)
        checks = {
            "tensor_float": lambda m: m.tensor([1.5]).dtype,
            "tensor_int": lambda m: m.tensor([1]).dtype,
            "tensor_scalar": lambda m: m.tensor(2.0).dtype,
            "zeros": lambda m: m.zeros(2).dtype,
            "ones": lambda m: m.ones(2).dtype,
            "empty": lambda m: m.empty(2).dtype,
            "full_float": lambda m: m.full((2,), 1.5).dtype,
            "full_int": lambda m: m.full((2,), 1).dtype,
            "int_div": lambda m: (m.tensor([1, 2]) / 2).dtype,
            "int_true_div": lambda m: (m.tensor([1, 2]) / m.tensor([2, 2])).dtype,
            "int_sqrt": lambda m: m.tensor([4]).sqrt().dtype,
            "int_times_float": lambda m: (m.tensor([1, 2]) * 1.5).dtype,
            "float_times_float": lambda m: (m.ones(2) * 1.5).dtype,
            "f32_times_float": lambda m: (m.ones(2, dtype=m.float32) * 1.5).dtype,
            "arange_float": lambda m: m.arange(0.0, 3.0).dtype,
            "arange_int": lambda m: m.arange(3).dtype,
            "legacy": lambda m: m.Tensor(2).dtype,
        }
        if name not in ("float16", "bfloat16"):
            checks["complex"] = lambda m: m.tensor([1j]).dtype
        bad = {
            k: (outcome(lambda f=f: f(ember)), outcome(lambda f=f: f(torch)))
            for k, f in checks.items()
        }
        bad = {k: v for k, v in bad.items() if v[0] != v[1]}
        assert not bad
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("arg", ["int32", "complex64", "bool", "str", "pyfloat", "uint8"])
def test_set_default_dtype_errors(arg):
    def call(m):
        v = {"str": "float64", "pyfloat": float}.get(arg) or getattr(m, arg)
        return m.set_default_dtype(v)

    try:
        assert outcome(lambda: call(ember)) == outcome(lambda: call(torch))
    finally:
        torch.set_default_dtype(torch.float32)
    assert ember.get_default_dtype() is ember.float32


# ---------------------------------------------------------------------------------- promotion
def test_promote_types_and_can_cast_full_table():
    bad = []
    for a in ALL:
        for b in ALL:
            for fn in ("promote_types", "can_cast"):
                e = outcome(
                    lambda fn=fn, a=a, b=b: getattr(ember, fn)(getattr(ember, a), getattr(ember, b))
                )
                t = outcome(
                    lambda fn=fn, a=a, b=b: getattr(torch, fn)(getattr(torch, a), getattr(torch, b))
                )
                if e != t:
                    bad.append(f"{fn}({a}, {b}): ember {e} torch {t}")
    assert not bad, "\n".join(bad)


def _operands(m):
    out = []
    for n in [
        "bool",
        "uint8",
        "uint16",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ]:
        out.append((f"t1_{n}", m.ones(2, dtype=getattr(m, n))))
        out.append((f"t0_{n}", m.ones((), dtype=getattr(m, n))))
    return out + [("True", True), ("2", 2), ("2.5", 2.5), ("1j", 1j)]


@pytest.mark.parametrize("default", ["float32", "float64", "float16"])
def test_result_type_full_table(default):
    ember.set_default_dtype(getattr(ember, default))
    torch.set_default_dtype(getattr(torch, default))
    bad = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            T, E = _operands(torch), _operands(ember)
            for (na, ta), (_, ea) in zip(T, E):
                for (nb, tb), (_, eb) in zip(T, E):
                    if not any(hasattr(x, "shape") for x in (ta, tb)):
                        continue
                    t = outcome(lambda ta=ta, tb=tb: torch.result_type(ta, tb))
                    if "complex32" in t:  # ember has no complex32: float16 + complex -> complex64
                        assert ember.result_type(ea, eb) is ember.complex64
                        continue
                    e = outcome(lambda ea=ea, eb=eb: ember.result_type(ea, eb))
                    if e != t:
                        bad.append(f"{na}, {nb}: ember {e} torch {t}")
    finally:
        torch.set_default_dtype(torch.float32)
    assert not bad, "\n".join(bad)


def test_promotion_errors_name_torch_scalar_types():
    with pytest.raises(
        RuntimeError,
        match="^Promotion for uint16, uint32, uint64 types is not "
        "supported, attempted to promote UInt16 and Long$",
    ):
        ember.promote_types(ember.uint16, ember.int64)


# ---------------------------------------------------------------------------------- bfloat16
BF16 = {
    "tensor": lambda m: m.tensor([1.5, 2.25, -3.0], dtype=m.bfloat16),
    "add": lambda m: (
        m.tensor([1.5, 2.25], dtype=m.bfloat16) + m.tensor([0.5, 1.0], dtype=m.bfloat16)
    ),
    "mul": lambda m: (
        m.tensor([1.5, 2.25], dtype=m.bfloat16) * m.tensor([2.0, 4.0], dtype=m.bfloat16)
    ),
    "with_f16": lambda m: m.tensor([1.5], dtype=m.bfloat16) + m.tensor([1.0], dtype=m.float16),
    "with_int": lambda m: m.tensor([1.5], dtype=m.bfloat16) + m.tensor([1]),
    "with_f32": lambda m: m.tensor([1.5], dtype=m.bfloat16) + m.tensor([1.0]),
    "sum": lambda m: m.tensor([1.5, 2.25], dtype=m.bfloat16).sum(),
    "cast_up": lambda m: m.tensor([1.5, 0.1], dtype=m.bfloat16).float(),
    "cast_down": lambda m: m.tensor([0.1, 3.14159]).bfloat16(),
    "tolist": lambda m: m.tensor([0.1, 3.14159], dtype=m.bfloat16).tolist(),
    "item": lambda m: m.tensor(0.1, dtype=m.bfloat16).item(),
    "grad": lambda m: _bf16_grad(m),
    "times_scalar": lambda m: m.tensor([1.5, 2.25], dtype=m.bfloat16) * 2.5,
    "plus_scalar": lambda m: m.tensor([1.5, 2.25], dtype=m.bfloat16) + 1,
}
# numpy + ml_dtypes turn bfloat16 (op) Python float into float32; the registry does not yet keep
# bfloat16 (reported to the lead; the fix belongs in core/registry.py / the arithmetic kernels)


def _bf16_grad(m):
    x = m.tensor([1.5, 2.0], dtype=m.bfloat16, requires_grad=True)
    (x * x).sum().backward()
    return x.grad


@pytest.mark.parametrize("case", BF16, ids=str)
def test_bfloat16(case):
    assert outcome(lambda: BF16[case](ember)) == outcome(lambda: BF16[case](torch))


def test_bfloat16_storage_is_ml_dtypes():
    import ml_dtypes

    x = ember.tensor([1.5], dtype=ember.bfloat16)
    # (numpy() refuses bfloat16, as torch's does: the storage itself is checked)
    assert x._data.dtype == np.dtype(ml_dtypes.bfloat16) and x.is_floating_point()
