"""Tensor printing: repr(ember tensor) must equal torch's repr, 'torch.' replaced by 'ember.'."""

import math
import warnings

import ember
import numpy as np
import pytest
from ember.core import printing

torch = pytest.importorskip("torch")

nan, inf = float("nan"), float("inf")


def _arr(seed, *shape, dtype="float32"):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


CASES = {
    # floating: fixed / integer-looking / scientific choices, widths, nan/inf, signs
    "f_basic": lambda m: m.tensor([1.0, 2.0]),
    "f_frac": lambda m: m.tensor([1.5, 2.25, -3.125]),
    "f_ratio": lambda m: m.tensor([0.1, 100.0]),
    "f_tiny": lambda m: m.tensor([1e-5, 1.0]),
    "f_big": lambda m: m.tensor([1e8, 1.0]),
    "f_huge": lambda m: m.tensor([1e9]),
    "f_huge_frac": lambda m: m.tensor([123456789.5]),
    "f_nonfinite": lambda m: m.tensor([nan, inf, -inf, 1.0]),
    "f_zeros": lambda m: m.tensor([0.0, 0.0]),
    "f_negzero": lambda m: m.tensor([-0.0]),
    "f_nan": lambda m: m.tensor([nan]),
    "f_exp3": lambda m: m.tensor([1e-300, 1.0], dtype=m.float64),
    "f_exp3b": lambda m: m.tensor([1e100, -1e-200], dtype=m.float64),
    "f_2d": lambda m: m.tensor(_arr(0, 3, 4)),
    "f_3d": lambda m: m.tensor(_arr(1, 2, 3, 4)),
    "f_wrap": lambda m: m.tensor(np.linspace(-5, 5, 30).astype("float32")),
    "f_summ1d": lambda m: m.tensor(np.linspace(-5, 5, 2000).astype("float32")),
    "f_summ2d": lambda m: m.tensor(_arr(2, 40, 40)),
    "f_summ3d": lambda m: m.tensor(np.arange(1331.0).reshape(11, 11, 11).astype("float32")),
    "f_int_ratio": lambda m: m.tensor([1.0, 10000.0]),
    "f_int_neg": lambda m: m.tensor([1.0, -10000.0, 3.0]),
    "f_sci_2d": lambda m: m.tensor([[1e-10, 2.0], [3.0, 4.0]]),
    "f_nan_mid": lambda m: m.tensor([0.5, nan, 2.0]),
    "f_round": lambda m: m.tensor([9.99996, -0.00012]),
    "f_int_nan": lambda m: m.tensor([1.0, nan]),
    "f_int_inf2d": lambda m: m.tensor([[1.0, 2.0], [3.0, inf]]),
    "f_1001": lambda m: m.tensor(np.arange(1001.0).astype("float32")),
    "f_100": lambda m: m.tensor(np.arange(100.0).astype("float32") * 1.5),
    "f_col": lambda m: m.tensor(_arr(3, 5, 1)),
    "f_4d": lambda m: m.tensor(_arr(4, 2, 2, 2, 2)),
    "f_wide_rows": lambda m: m.tensor(_arr(5, 3, 25)),
    # other float dtypes
    "f64": lambda m: m.tensor([1.5, 2.0], dtype=m.float64),
    "f16": lambda m: m.tensor([1.5, 2.001, 65504.0], dtype=m.float16),
    "bf16": lambda m: m.tensor([1.5, 2.001, 3e38], dtype=m.bfloat16),
    "bf16_2d": lambda m: m.tensor([[1.5, 2.5]], dtype=m.bfloat16),
    "bf16_0d": lambda m: m.tensor(0.1, dtype=m.bfloat16),
    # integers and bools
    "i32": lambda m: m.tensor([1, -2, 300], dtype=m.int32),
    "i64": lambda m: m.tensor([[1, -2], [300, 4]]),
    "i8": lambda m: m.tensor([1, -128], dtype=m.int8),
    "u8": lambda m: m.tensor([1, 255], dtype=m.uint8),
    "i16": lambda m: m.tensor([1, 255], dtype=m.int16),
    "i64_big": lambda m: m.tensor([2**62, -3]),
    "bool": lambda m: m.tensor([True, False]),
    "bool_2d": lambda m: m.tensor([[True], [True]]),
    "int_summ": lambda m: m.tensor(np.arange(3000).reshape(30, 100)),
    # complex
    "c64": lambda m: m.tensor([1 + 2j, -3.5 - 1j]),
    "c128": lambda m: m.tensor([1 + 2j, 0.001 - 1000j], dtype=m.complex128),
    "c_2d": lambda m: m.tensor([[1 - 0j, 2j], [0j, -1j]]),
    "c_0d": lambda m: m.tensor(1.5 - 2j),
    "c_summ": lambda m: m.tensor(np.arange(2000).astype("complex64") * (1 + 0.5j)),
    "c_nan": lambda m: m.tensor([complex(nan, 1), complex(1, inf)]),
    # 0-d
    "s_float": lambda m: m.tensor(3.0),
    "s_int": lambda m: m.tensor(3),
    "s_bool": lambda m: m.tensor(True),
    "s_tiny": lambda m: m.tensor(1e-8),
    "s_f64": lambda m: m.tensor(2.5, dtype=m.float64),
    "s_neg": lambda m: m.tensor(-0.125),
    "s_inf": lambda m: m.tensor(inf),
    "s_u8": lambda m: m.tensor(7, dtype=m.uint8),
    # empty
    "e_1d": lambda m: m.zeros(0),
    "e_2d": lambda m: m.zeros(0, 3),
    "e_int": lambda m: m.zeros(0, 3, dtype=m.int64),
    "e_3d": lambda m: m.zeros(2, 0, 3),
    "e_bool": lambda m: m.tensor([], dtype=m.bool),
    "e_f64": lambda m: m.zeros(0, dtype=m.float64),
    "e_grad": lambda m: m.zeros(0, requires_grad=True),
    # autograd suffixes
    "g_leaf": lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    "g_mul": lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
    "g_add": lambda m: m.tensor([1.0, 2.0], requires_grad=True) + 2,
    "g_wrap": lambda m: m.tensor(np.linspace(0, 1, 20).astype("float32"), requires_grad=True) * 3,
    "g_suffix_wrap": lambda m: m.tensor(np.linspace(0, 1, 14), requires_grad=True),
    "g_sum": lambda m: m.tensor([0.5, 1.25, 2.0], requires_grad=True).sum(),
    "g_f64_0d": lambda m: (m.tensor(2.0, dtype=m.float64, requires_grad=True) * 3).sum(),
}

OPTIONS = {
    "default": {},
    "precision2": {"precision": 2},
    "precision8": {"precision": 8},
    "sci_true": {"sci_mode": True},
    "sci_false": {"sci_mode": False},
    "threshold5": {"threshold": 5},
    "threshold0": {"threshold": 0},
    "edge1": {"edgeitems": 1, "threshold": 10},
    "edge0": {"edgeitems": 0},
    "linewidth40": {"linewidth": 40},
    "linewidth200": {"linewidth": 200},
    "short": {"profile": "short"},
    "full": {"profile": "full"},
    "short_lw": {"profile": "short", "linewidth": 50},
}


@pytest.fixture(autouse=True)
def _reset_printoptions():
    yield
    ember.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def _expected(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's named-tensor / complex-half warnings
        return repr(fn(torch)).replace("torch.", "ember.")


@pytest.mark.parametrize("opts", OPTIONS.values(), ids=OPTIONS.keys())
def test_repr_matches_torch(opts):
    torch.set_printoptions(**opts)
    ember.set_printoptions(**opts)
    bad = []
    for name, fn in CASES.items():
        want, got = _expected(fn), repr(fn(ember))
        if want != got:
            bad.append(f"{name}:\ntorch:\n{want}\nember:\n{got}")
    assert not bad, "\n\n".join(bad)


@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16"])
def test_repr_with_other_default_dtype(default):
    torch.set_default_dtype(getattr(torch, default))
    ember.set_default_dtype(getattr(ember, default))
    skip = {"c64", "c_0d", "c_nan", "c_2d"} if default in ("float16",) else set()  # complex32
    bad = []
    for name, fn in CASES.items():
        if name in skip:
            continue
        try:
            want = _expected(fn)
        except RuntimeError:  # torch: "invalid default scalar type for complex" (bfloat16)
            continue
        got = repr(fn(ember))
        if want != got:
            bad.append(f"{name}:\ntorch:\n{want}\nember:\n{got}")
    assert not bad, "\n\n".join(bad)


# torch 2.13 no longer has named tensors: the expectation is torch's unnamed repr plus the names
# suffix torch printed last (after requires_grad / grad_fn), e.g. "names=('N', 'C')"
NAMED = [
    (lambda m: m.zeros(2, 3), ("N", "C"), False, "names=('N', 'C')"),
    (lambda m: m.zeros(2, 3, dtype=m.float64), ("N", None), True, "names=('N', None)"),
    (lambda m: m.zeros(2, 3), (None, None), False, None),
    (
        lambda m: m.tensor(np.linspace(0, 1, 12).reshape(2, 6)),
        ("batch", "x"),
        True,
        "names=('batch', 'x')",
    ),
]


@pytest.mark.parametrize("k", range(len(NAMED)))
def test_repr_names_suffix(k):
    fn, names, grad, suffix = NAMED[k]
    e = fn(ember).rename(*names).requires_grad_(grad)
    want = repr(fn(torch).requires_grad_(grad)).replace("torch.", "ember.")
    if suffix is not None:
        one_line = len(want) - want.rfind("\n") + 1 + len(suffix) + 2 <= 80
        want = want[:-1] + (", " if one_line else ",\n" + " " * 7) + suffix + ")"
    assert repr(e) == want
    if grad:  # a result of an op on a named tensor: grad_fn, then names
        r = repr(e * 2)
        assert r.endswith(
            (f"grad_fn=<MulBackward0>, {suffix})", f"grad_fn=<MulBackward0>,\n       {suffix})")
        )


def test_str_and_format_use_repr():
    t = ember.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert str(t) == repr(t) == f"{t}" == str(torch.tensor([[1.5, 2.0], [3.0, 4.0]]))


def test_tensor_contents_override():
    t = ember.tensor([1.0, 2.0], dtype=ember.float64)
    want = torch.tensor([1.0, 2.0], dtype=torch.float64).__repr__(tensor_contents="[...]")
    assert t.__repr__(tensor_contents="[...]") == want.replace("torch.", "ember.")


def test_subclass_prefix():
    class MyT(ember.Tensor):
        pass

    class TMyT(torch.Tensor):
        pass

    got = repr(MyT([1.0, 2.0]))
    assert got == repr(TMyT([1.0, 2.0])).replace("TMyT", "MyT")


def test_set_printoptions_state():
    ember.set_printoptions(precision=2, sci_mode=True)
    assert printing.get_printoptions()["sci_mode"] is True
    ember.set_printoptions(threshold=7)  # like torch: sci_mode resets when not given
    opts = printing.get_printoptions()
    assert opts == {
        "precision": 2,
        "threshold": 7,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }
    ember.set_printoptions(profile="full", linewidth=120)  # profile first, then the overrides
    assert printing.get_printoptions()["threshold"] == math.inf
    assert printing.get_printoptions()["linewidth"] == 120
    ember.set_printoptions(profile="no-such-profile")  # torch ignores an unknown profile
    assert printing.get_printoptions()["precision"] == 4


def test_printoptions_context_manager():
    with printing.printoptions(precision=1):
        assert repr(ember.tensor([1.25])) == "tensor([1.2])"
    assert repr(ember.tensor([1.25])) == "tensor([1.2500])"


def test_summarised_print_is_fast_and_cut():
    t = ember.zeros(2000, 2000)
    s = repr(t)
    assert s == repr(torch.zeros(2000, 2000))
    assert s.count("\n") == 6


def test_cuda_device_suffix():
    # the strict test backend stands in for cupy: a cuda tensor prints device='cuda:N' (before the
    # dtype, like torch), its body formatted exactly as on cpu
    from strict_backend import strict_cuda

    with strict_cuda():
        t = ember.tensor([1.0, 2.0], device="cuda")
        assert repr(t) == "tensor([1., 2.], device='cuda:0')"
        g = ember.tensor([1.0, 2.0], dtype=ember.float64, device="cuda:1", requires_grad=True)
        assert repr(g) == (
            "tensor([1., 2.], device='cuda:1', dtype=ember.float64, requires_grad=True)"
        )
        big = ember.tensor(np.arange(3000.0).reshape(3, 1000), dtype=ember.float32, device="cuda")
        assert repr(big) == repr(torch.arange(3000.0).reshape(3, 1000))[:-1] + ", device='cuda:0')"


def test_core_types_print_as_torch_prints_them():
    def kinds(m):
        x = m.ones(2)
        return [str(t) for t in (type(x), type(x.shape), type(x.dtype), type(x.device))]

    assert kinds(ember) == [s.replace("torch", "ember") for s in kinds(torch)]
