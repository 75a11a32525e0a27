"""Devices: ember.device parity with torch.device, the default device, CUDA-unavailable errors,
and the dispatch-discipline check: every op runs on a cupy-like backend that refuses numpy."""

import pickle
import warnings

import ember
import numpy as np
import pytest
from ember.core import device as devmod
from ember.core.registry import OPS
from harness import needs_torch
from strict_backend import MixedBackendError, StrictArray, strict_cuda

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None

HAS_GPU = devmod.is_cuda_available()


def _outcome(fn):
    try:
        return repr(fn()).replace("torch.", "ember.")
    except Exception as e:  # noqa: BLE001 - the outcome (type + message) is what is compared
        return f"{type(e).__name__}: {e}"


# ---------------------------------------------------------------- device objects vs torch.device
GOOD = ["cpu", "cuda", "cuda:1", "cpu:0", "cuda:0", "cuda:12"]
BAD = ["cuda:x", "cuda:-1", "cuda:01", "cuda:1:2", " cpu", "cuda: 1", "", "cuda:1 ", "cpu:"]


@needs_torch
@pytest.mark.parametrize("spec", GOOD + BAD)
def test_device_string_parity(spec):
    assert _outcome(lambda: ember.device(spec)) == _outcome(lambda: torch.device(spec))


@needs_torch
@pytest.mark.parametrize(
    "args", [("cuda", 1), ("cpu", 0), ("cuda", -2), ("cuda:0", 1), (-1,), ("cuda", -1)]
)
def test_device_args_parity(args):
    assert _outcome(lambda: ember.device(*args)) == _outcome(lambda: torch.device(*args))


def test_device_unknown_type_message():
    # torch's text, which lists every backend torch knows
    with pytest.raises(
        RuntimeError,
        match=r"^Expected one of cpu, cuda, ipu, .*, meta, hpu, mtia, privateuseone device type "
        r"at start of device string: foo$",
    ):
        ember.device("foo")
    with pytest.raises(RuntimeError, match="device type at start of device string: CUDA"):
        ember.device("CUDA")
    with pytest.raises(
        TypeError,
        match=r"device\(\) received an invalid combination of "
        r"arguments - got \(float\)",
    ):
        ember.device(1.5)
    with pytest.raises(TypeError, match=r"got \(bool\)"):
        ember.device(True)


def test_device_attributes_and_equality():
    d = ember.device("cuda", 2)
    assert (d.type, d.index, str(d), repr(d)) == (
        "cuda",
        2,
        "cuda:2",
        "device(type='cuda', index=2)",
    )
    assert ember.device("cpu").index is None
    if ember.cuda.is_available():  # torch (with a GPU): an int is a cuda index (else an error)
        assert ember.device(2) == ember.device("cuda", 2)
    assert ember.device(d) == d and ember.device(d) is not d
    assert ember.device("cuda:2") == d and hash(ember.device("cuda:2")) == hash(d)
    assert ember.device("cuda") != ember.device("cuda:0")  # like torch: no index != index 0
    assert {ember.device("cpu"): 1}[ember.device("cpu")] == 1
    # ember extension (documented): a device equals the string that names it
    assert ember.device("cpu") == "cpu" and ember.device("cuda:1") == "cuda:1"
    assert ember.device("cpu") != "cuda" and ember.device("cpu") != "not a device"
    assert ember.device("cpu") != 5
    assert pickle.loads(pickle.dumps(d)) == d
    assert isinstance(ember.ones(2).device, ember.device)
    assert ember.ones(2).device == ember.device("cpu") and ember.ones(2).get_device() == -1


def test_default_device_api():
    assert ember.get_default_device() == ember.device("cpu")
    ember.set_default_device("cpu")
    ember.set_default_device(None)  # like torch: None means cpu
    assert ember.get_default_device() == ember.device("cpu")
    with ember.device("cpu") as d:
        assert d == ember.device("cpu")
        assert ember.zeros(2).device == ember.device("cpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        ember.set_default_device("cuda:x")


# ---------------------------------------------------------------- no GPU: clear errors
CUDA_USES = {
    "zeros": lambda: ember.zeros(2, device="cuda"),
    "tensor": lambda: ember.tensor([1.0, 2.0], device="cuda:0"),
    "method_cuda": lambda: ember.ones(2).cuda(),
    "to_cuda": lambda: ember.ones(2).to("cuda"),
    "set_default": lambda: ember.set_default_device("cuda"),
    "context": lambda: ember.device("cuda").__enter__(),
}


@pytest.mark.skipif(HAS_GPU, reason="a GPU (with cupy) is present: cuda works here")
@pytest.mark.parametrize("use", CUDA_USES.values(), ids=CUDA_USES.keys())
def test_cuda_unavailable_is_a_clear_error(use):
    with pytest.raises(RuntimeError, match=r"CUDA is not available \(install cupy.*NVIDIA GPU\): "):
        use()
    assert ember.get_default_device() == ember.device("cpu")  # a failed switch changes nothing


@pytest.mark.skipif(HAS_GPU, reason="a GPU (with cupy) is present")
def test_cuda_availability_queries():
    assert devmod.is_cuda_available() is False
    assert devmod.device_count() == 0


# ---------------------------------------------------------------- the strict backend itself
def test_strict_backend_refuses_numpy():
    with strict_cuda() as xp:
        a = xp.ones(3)
        assert type(a) is StrictArray and type(a + 1) is StrictArray
        assert type(a.sum()) is StrictArray  # 0-d arrays, never numpy scalars (like cupy)
        with pytest.raises(MixedBackendError):
            a + np.ones(3)
        with pytest.raises(MixedBackendError):
            np.concatenate([a, np.ones(3)])
        with pytest.raises(MixedBackendError):
            xp.maximum(a, [1, 2, 3])
        t = ember.tensor([1.0, 2.0], device="cuda")
        assert type(t._data) is StrictArray and t.device == ember.device("cuda", 0)
        assert t.is_cuda and not t.is_cpu
        with pytest.raises(
            TypeError,
            match=r"^can't convert cuda:0 device type tensor to numpy\. "
            r"Use Tensor\.cpu\(\) to copy the tensor to host "
            r"memory first\.$",
        ):
            t.numpy()
        back = t.cpu()
        assert type(back._data) is np.ndarray and back.tolist() == [1.0, 2.0]
        with ember.device("cuda:1"):
            z = ember.zeros(2)
        assert z.device == ember.device("cuda", 1) and type(z._data) is StrictArray
        assert ember.get_default_device() == ember.device("cpu")
    assert ember.zeros(1).device == ember.device("cpu")


# ---------------------------------------------------------------- dispatch discipline: all ops
def _rng_arr(seed, *shape, lo=0.5, hi=1.5):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def _base_inputs():
    """name -> (numpy value, differentiable). float64, positive (log/sqrt stay finite)."""
    return {
        "X": (_rng_arr(1, 3, 4), True),
        "Y": (_rng_arr(2, 3, 4), True),
        "Z": (_rng_arr(3, 3, 4), True),
        "W": (_rng_arr(4, 4, 3), True),
        "V": (_rng_arr(5, 4), True),
        "U": (_rng_arr(6, 4), True),
        "R": (_rng_arr(7, 3), True),
        "Q": (_rng_arr(8, 3, 3), True),
        "B1": (_rng_arr(9, 2, 3, 4), True),
        "B2": (_rng_arr(10, 2, 4, 3), True),
        "B3": (_rng_arr(11, 2, 3, 3), True),
        "I": (np.random.default_rng(12).integers(0, 3, (3, 4)), False),
        "K": (np.random.default_rng(14).integers(0, 3, (3, 4)), False),
        "C": (_rng_arr(15, 3, 4) + 1j * _rng_arr(16, 3, 4), False),
        "J": (np.array([0, 2]), False),
        "M": (np.random.default_rng(13).random((3, 4)) > 0.5, False),
        "P": (_rng_arr(17, 2, 3, 6, 6), True),
    }


# argument patterns tried in order; the first that works on cpu is the op's signature.
# Strings name inputs (a list of strings is a sequence argument); anything else is passed as is.
PATTERNS = [
    ("X",),
    ("X", "Y"),
    ("X", 1),
    ("X", "Y", "Z"),
    (["X", "Y"],),
    (["X", "Y"], 1),
    ("X", 0, 1),
    ("X", "W"),
    ("V", "U"),
    ("X", "V"),
    ("B1", "B2"),
    ("Q", "X", "W"),
    ("R", "X", "V"),
    ("B3", "B1", "B2"),
    ("Q", "B1", "B2"),
    ("X", 12),
    ("X", 4, 3),
    ("X", (1, 0)),
    ("X", 1, "I"),
    ("X", 0, "J"),
    ("X", "M", 0.5),
    ("X", "M"),
    ("X", "J"),
    ("X", 2),
    ("X", 0, 1, 2),
    ("X", 1, 0),
    ("X", 2.0),
    ("X", (2, 1)),
    ("X", 1, "I", "Y"),
    ("X", 0, "J", "Y"),
    ("M", "X", "Y"),
    ("X", "Y", 0.5),
    ("X", 0.5, 1.2),
    ("X", "I"),
    ("V",),
    ("Q",),
    ("B1",),
    ("I",),
    ("M",),
    ("I", "K"),
    ("I", 1),
    ("X", (2, 3, 4)),
    ("C",),
    ("X", "a", "b"),
]
NONDETERMINISTIC = (
    "rand",
    "bernoulli",
    "binomial",
    "poisson",
    "normal",
    "dropout",
    "multinomial",
    "exponential",
    "uniform",
    "cauchy",
    "geometric",
    "log_normal",
)


def _make(spec, inputs, device):
    if isinstance(spec, list):
        return [_make(s, inputs, device) for s in spec]
    if isinstance(spec, str) and spec in inputs:
        arr, diff = inputs[spec]
        t = ember.tensor(arr, device=device)
        return t.requires_grad_() if diff else t
    return spec


def _tensors(obj):
    if isinstance(obj, ember.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    return []


def _run(fn, pattern, device=None):
    """Forward + backward with a non-uniform upstream gradient; returns (outputs, input grads)."""
    inputs = _base_inputs()
    args = [_make(s, inputs, device) for s in pattern]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(*args)
    outs = _tensors(out)
    if not outs:
        raise TypeError("no tensor output")
    leaves = [t for t in _tensors(args) if t.requires_grad]
    diff = [o for o in outs if o.requires_grad and o.dtype.is_floating_point]
    grads = []
    if diff and leaves:
        loss = None
        for k, o in enumerate(diff):
            w = np.linspace(0.5, 1.5 + k, max(o.numel(), 1)).reshape(o.shape)
            w = ember.tensor(w, dtype=o.dtype, device=o.device)
            term = (o * w).sum()
            loss = term if loss is None else loss + term
        gs = ember.autograd.grad(loss, leaves, allow_unused=True)
        grads = [g for g in gs if g is not None]
    return outs, grads


def _signature(name):
    fn = OPS[name].public
    for pattern in PATTERNS:
        try:
            a = _run(fn, pattern)
        except Exception:  # noqa: BLE001,S112 - trying patterns until one fits the op
            continue
        return fn, pattern, a
    return None


# explicit rows: dunders, indexing, in-place ops, conversions, composites
EXPLICIT = {
    "getitem_int": (lambda x: x[1], ("X",)),
    "getitem_slice": (lambda x: x[:, 1:3], ("X",)),
    "getitem_tensor": (lambda x, j: x[j], ("X", "J")),
    "getitem_mask": (lambda x, m: x[m], ("X", "M")),
    "getitem_none_ellipsis": (lambda x: x[None, ..., 0], ("X",)),
    "setitem": (lambda x, y: _setitem(x, y), ("X", "Y")),
    "iadd_nonleaf": (lambda x, y: (x * 1).add_(y), ("X", "Y")),
    "imul_scalar": (lambda x: (x * 1).mul_(2.5), ("X",)),
    "rsub_scalar": (lambda x: 2 - x, ("X",)),
    "rtruediv": (lambda x: 2 / x, ("X",)),
    "pow_scalar": (lambda x: x**2.5, ("X",)),
    "rpow": (lambda x: 2**x, ("X",)),
    "neg": (lambda x: -x, ("X",)),
    "matmul_op": (lambda x, w: x @ w, ("X", "W")),
    "softmax_dim": (lambda x: x.softmax(1), ("X",)),
    "log_softmax_dim": (lambda x: x.log_softmax(0), ("X",)),
    "sum_dim_keep": (lambda x: x.sum(1, keepdim=True), ("X",)),
    "mean_all": (lambda x: x.mean(), ("X",)),
    "max_dim": (lambda x: x.max(1), ("X",)),
    "var_dim": (lambda x: x.var(0), ("X",)),
    "to_float32": (lambda x: x.float() * 2, ("X",)),
    "cast_int": (lambda x: x.long(), ("X",)),
    "cpu_roundtrip": (lambda x: x.to("cpu").to(x.device) * 1, ("X",)),
    "reshape_view": (lambda x: x.reshape(4, 3).t() if hasattr(x, "t") else x.reshape(4, 3), ("X",)),
    "clone": (lambda x: x.clone(), ("X",)),
    "where": (lambda m, x, y: ember.where(m, x, y), ("M", "X", "Y")),
    "cat": (lambda x, y: ember.cat([x, y], 1), ("X", "Y")),
    "stack": (lambda x, y: ember.stack([x, y]), ("X", "Y")),
    "zeros_like": (lambda x: ember.zeros_like(x) + x, ("X",)),
    "full_like": (lambda x: ember.full_like(x, 2.0) * x, ("X",)),
    "compare": (lambda x, y: (x > y) & (x < 1.2), ("X", "Y")),
    "bool_mask_fill": (lambda x, m: x.masked_fill(m, 0.0), ("X", "M")),
    "item_free_chain": (lambda x: (x.exp() - 1).abs().sqrt().log1p().tanh(), ("X",)),
    # ops whose arguments no pattern above fits
    "addr": (lambda x, r, v: ember.addr(x, r, v, beta=0.5), ("X", "R", "V")),
    "as_strided_scatter": (lambda x, v: ember.as_strided_scatter(x, v, (4,), (1,)), ("X", "V")),
    "bincount": (lambda j, r: ember.bincount(j, r[:2], minlength=4), ("J", "R")),
    "diagonal_scatter": (lambda x, r: ember.diagonal_scatter(x, r), ("X", "R")),
    "select_scatter": (lambda x, v: ember.select_scatter(x, v, 0, 1), ("X", "V")),
    "put": (lambda x, j, r: x.put(j, r[:2], accumulate=True), ("X", "J", "R")),
    "complex_parts": (lambda x, y: (ember.complex(x, y) * ember.complex(y, x)).imag, ("X", "Y")),
    "view_as_complex": (
        lambda x: ember.view_as_real(ember.view_as_complex(x.reshape(6, 2)) * (1 + 2j)),
        ("X",),
    ),
    "fake_quantize_tensor": (
        lambda x: ember.fake_quantize_per_tensor_affine(x, 0.1, 0, 0, 255),
        ("X",),
    ),
    "fake_quantize_channel": (
        lambda x, r: ember.fake_quantize_per_channel_affine(
            x,
            (r * 0.1).detach().float(),
            ember.zeros(3, dtype=ember.int32, device=x.device),
            0,
            0,
            255,
        ),
        ("X", "R"),
    ),
    "grid_sampler": (
        lambda p, x: ember.grid_sampler(p, (x - 1).reshape(2, 3, 1, 2), 0, 0, False),
        ("P", "X"),
    ),
    "affine_grid": (
        lambda b: ember.nn.functional.affine_grid(b[:, :2], (2, 1, 3, 4), align_corners=False),
        ("B3",),
    ),
    "max_pool2d": (lambda p: ember.max_pool2d(p, 3, 2, 1), ("P",)),
    "max_pool2x2": (lambda p: ember.max_pool2d(p, 2), ("P",)),
    "einsum1": (lambda x: ember.einsum("ij->j", x), ("X",)),
    "einsum2": (lambda x, w: ember.einsum("ij,jk->ik", x, w), ("X", "W")),
    "index_copy": (lambda x, j, y: x.index_copy(0, j, y[:2]), ("X", "J", "Y")),
    "index_fill": (lambda x, j: x.index_fill(1, j, 2.0), ("X", "J")),
    "index_prod": (lambda x, j, y: x.index_reduce(0, j, y[:2], "prod"), ("X", "J", "Y")),
    "masked_scatter": (lambda x, m, y: x.masked_scatter(m, y), ("X", "M", "Y")),
    "scatter": (lambda x, y: x.scatter(1, _perm_index(x), y), ("X", "Y")),
    "scatter_add": (lambda x, i, y: x.scatter_add(1, i, y), ("X", "I", "Y")),
    "scatter_reduce": (lambda x, i, y: x.scatter_reduce(1, i, y, "amax"), ("X", "I", "Y")),
    # geqrf has no derivative (torch raises in its backward): its outputs enter as constants
    "ormqr": (lambda q, x: ember.ormqr(*[t.detach() for t in ember.geqrf(q)], x), ("Q", "X")),
    # binomial records its draw (backward raises, as torch's): its result enters as a constant
    "binomial_recorded": (
        lambda x: ember.binomial(x.abs().round() + 1, ember.full_like(x, 0.5)).detach() * x,
        ("X",),
    ),
    # heaviside and floor_divide are recorded too, with no derivative (as torch's)
    "heaviside_recorded": (lambda x, y: ember.heaviside(x, y).detach() * y, ("X", "Y")),
    "floor_divide_recorded": (lambda x, y: (x // y.abs().add(0.5)).detach() * x, ("X", "Y")),
    "sdpa_masked": (
        lambda b: ember.nn.functional.scaled_dot_product_attention(
            b,
            b * 2,
            b,
            attn_mask=ember.tensor([[0.0, -1.0, 0.5]] * 3, dtype=b.dtype, device=b.device),
        ),
        ("B1",),
    ),
    "conv_im2col": (lambda p, q: ember.nn.functional.conv2d(p, q.expand(2, 3, 3, 3)), ("P", "Q")),
    "conv_winograd": (
        lambda p, q: ember.nn.functional.conv2d(
            p.repeat(4, 2, 2, 2), q.expand(4, 6, 3, 3), padding=1
        ),
        ("P", "Q"),
    ),
    "conv_stem": (  # a 1-channel stem whose input needs no gradient (_conv_small_k_grads)
        lambda p, q: ember.nn.functional.conv2d(
            p[:, :1].detach(), q.expand(2, 1, 3, 3), q[0, :2], padding=1
        ),
        ("P", "Q"),
    ),
    "conv_depthwise": (  # large enough for the direct path (_DW_MIN_SIZE)
        lambda p, q: (
            ember.nn.functional.conv2d(
                p.repeat(1, 1, 5, 5), q.expand(3, 1, 3, 3), q[0], padding=1, groups=3
            ),
            ember.nn.functional.conv2d(p.repeat(1, 1, 5, 5), q.expand(3, 1, 3, 3), groups=3),
        ),
        ("P", "Q"),
    ),
    # (their derivatives are defined for the second argument only, as in torch)
    "igamma": (
        lambda x, y: ember.igamma(x.detach(), y) + ember.igammac(x.detach(), y * 2),
        ("X", "Y"),
    ),
    "zeta": (lambda x, y: ember.special.zeta(x.detach() + 1, y), ("X", "Y")),
    # derivatives that are ops themselves, reached by differentiating a gradient
    "grad_of_avg_pool": (lambda p: _grad(ember.nn.functional.avg_pool2d, p, 2), ("P",)),
    "grad_of_grad_of_avg_pool": (
        lambda p: _grad(lambda x: _grad(ember.nn.functional.avg_pool2d, x, 2), p),
        ("P",),
    ),
    "grad_of_max_pool": (lambda p: _grad(ember.nn.functional.max_pool2d, p, 3, 2), ("P",)),
    # pooling to one value per plane: an op of its own (torch's mean, which saves no input)
    "global_adaptive_avg_pool": (
        lambda p: (
            ember.nn.functional.adaptive_avg_pool2d(p, 1)
            + ember.nn.functional.adaptive_avg_pool3d(p.unsqueeze(2), 1).squeeze(2)
        ),
        ("P",),
    ),
    "grad_of_adaptive_max_pool": (
        lambda p: _grad(ember.nn.functional.adaptive_max_pool2d, p, 4),
        ("P",),
    ),
    "third_grad_of_adaptive_max_pool": (  # graphs _index_scatter (the gather's derivative)
        lambda p: _grad(
            lambda x: _grad(lambda y: _grad(ember.nn.functional.adaptive_max_pool2d, y, 4), x), p
        ),
        ("P",),
    ),
    "grad_of_diagonal": (lambda x: _grad(ember.diagonal, x), ("X",)),
    "grad_of_index_select": (lambda x, j: _grad(ember.index_select, x, 1, j), ("X", "J")),
    "grad_of_gather": (lambda x, i: _grad(ember.gather, x, 1, i), ("X", "I")),
    "cholesky_solve": (
        lambda q, x: ember.cholesky_solve(
            x, q.tril() + 3 * ember.eye(3, dtype=q.dtype, device=q.device)
        ),
        ("Q", "X"),
    ),
    "ldl": (lambda q, x: _ldl(q, x), ("Q", "X")),
}


def _ldl(q, x):
    # recorded with grad (their nodes raise in backward, like torch's): the values, detached
    LD, piv = ember.linalg.ldl_factor(q + q.mT)
    return LD.detach(), piv, ember.linalg.ldl_solve(LD, piv, x).detach()


def _grad(fn, x, *args):
    """d/dx of sum(fn(x, *args)**2), differentiable again (create_graph)."""
    (g,) = ember.autograd.grad((fn(x, *args) ** 2).sum(), x, create_graph=True)
    return g


def _perm_index(x):
    # a scatter index without repeats in a row: which write wins is then defined on every device
    return ember.tensor([[1, 0, 3, 2], [3, 2, 1, 0], [0, 3, 2, 1]], device=x.device)


def _setitem(x, y):
    z = x * 1
    z[0] = y[1]
    z[:, 1] = 3.0
    return z


SIGS = {name: s for name in sorted(OPS) if (s := _signature(name)) is not None}
ROWS = {f"op:{n}": (s[0], s[1]) for n, s in SIGS.items()}
ROWS.update({f"row:{k}": v for k, v in EXPLICIT.items()})

# ops known to break dispatch discipline today (their owners fix them; see the helper's report).
# A row listed here that passes is fine (xfail is not strict); a new failure fails the suite.
KNOWN_STRICT_FAILURES: dict = {}


def _close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "fc":
        return a.shape == b.shape and np.allclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True)
    return a.shape == b.shape and bool(np.all(a == b))


def _host(t):
    return t.detach().cpu()._data


def _cpu_reference(row, fn, pattern):
    """(outputs, gradients, deterministic) of a row on the cpu: deterministic when it is not a
    random op and a second run gives the same outputs."""
    outs, grads = _run(fn, pattern)
    again = _run(fn, pattern)
    deterministic = not any(s in row for s in NONDETERMINISTIC) and all(
        _close(_host(a), _host(b)) for a, b in zip(outs, again[0])
    )
    return outs, grads, deterministic


def test_strict_backend_keeps_its_cuda_generators():
    # a real GPU's random rows after a strict sweep must not draw from the strict backend's
    # generators (on the H200 they failed with TypeError in normal/bernoulli/poisson)
    from ember.core import random as rnd

    before = dict(rnd._cuda_defaults)
    with strict_cuda():
        ember.manual_seed(0)
        assert type(ember.randn(4, device="cuda")._data) is StrictArray
        assert rnd._cuda_defaults  # the strict backend made its own default generator
    assert rnd._cuda_defaults == before


@pytest.mark.parametrize("row", sorted(ROWS), ids=str)
def test_dispatch_discipline(row):
    if row in KNOWN_STRICT_FAILURES:
        pytest.xfail(KNOWN_STRICT_FAILURES[row])
    fn, pattern = ROWS[row]
    ref_outs, ref_grads, deterministic = _cpu_reference(row, fn, pattern)
    with strict_cuda():
        outs, grads = _run(fn, pattern, "cuda")
    assert len(outs) == len(ref_outs) and len(grads) == len(ref_grads)
    for k, o in enumerate(outs):
        assert type(o._data) is StrictArray, (
            f"output {k} is a {type(o._data).__name__}: the kernel computed on the host"
        )
        assert o.shape == ref_outs[k].shape and o.dtype == ref_outs[k].dtype
        if deterministic:
            assert _close(_host(o), _host(ref_outs[k])), f"output {k} differs from cpu"
    for k, g in enumerate(grads):
        assert type(g._data) is StrictArray, (
            f"gradient {k} is a {type(g._data).__name__}: the derivative computed on the host"
        )
        if deterministic:
            assert _close(_host(g), _host(ref_grads[k])), f"gradient {k} differs from cpu"


@pytest.mark.skipif(not HAS_GPU, reason="no GPU with cupy: the strict sweep above stands in")
@pytest.mark.parametrize("row", sorted(ROWS), ids=str)
def test_real_cuda_matches_cpu(row):
    # the same rows on a real GPU (cupy): outputs and gradients stay on the device and equal the
    # cpu's (float64 inputs; GPU reductions may sum in another order, hence the tolerance)
    fn, pattern = ROWS[row]
    ref_outs, ref_grads, deterministic = _cpu_reference(row, fn, pattern)
    outs, grads = _run(fn, pattern, "cuda")
    assert len(outs) == len(ref_outs) and len(grads) == len(ref_grads)
    gauge = GAUGE.get(row)
    for k, (got, want) in enumerate(
        zip(list(outs) + list(grads), list(ref_outs) + list(ref_grads))
    ):
        assert got.device.type == "cuda" and type(got._data) is not np.ndarray
        assert got.shape == want.shape and got.dtype == want.dtype
        if not deterministic:
            continue
        a, b = np.asarray(_host(got)), np.asarray(_host(want))
        if a.dtype.kind not in "fc":
            np.testing.assert_array_equal(a, b)
        elif gauge is None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)
        elif gauge[1] and k < len(outs):  # equal up to the sign of each vector
            np.testing.assert_allclose(np.abs(a), np.abs(b), rtol=1e-6, atol=1e-9)


# rows whose float results are defined only up to a choice the device library makes its own
# way (cusolver vs LAPACK): (why, whether the outputs still agree up to sign)
GAUGE = {
    "op:_linalg_eigh": ("eigenvector signs (and the gradient of a sign-weighted loss)", True),
    "op:_linalg_svd": ("singular vector signs (and the gradient of a sign-weighted loss)", True),
    "op:_linalg_cholesky_ex": ("the factor left for a non positive-definite input", False),
}


def test_strict_backend_catches_a_numpy_kernel():
    # the check must be able to fail: a kernel that computes with numpy instead of xp is caught
    from ember.core.registry import op

    def bad_host(xp, input):
        return np.exp(np.asarray(input))  # host array: silently computes on the cpu

    def bad_mix(xp, input):
        return input + np.ones(input.shape, input.dtype)  # mixes device data with a host array

    try:
        host = op(name="_strict_probe_host", method=False)(bad_host)
        mix = op(name="_strict_probe_mix", method=False)(bad_mix)
        with strict_cuda():
            x = ember.tensor([1.0, 2.0], device="cuda")
            assert type(host(x)._data) is not StrictArray  # what the sweep's type check flags
            with pytest.raises(MixedBackendError, match="plain numpy array|ndarray"):
                mix(x)
    finally:
        OPS.pop("_strict_probe_host", None)
        OPS.pop("_strict_probe_mix", None)


def test_mixing_devices_is_torchs_error():
    def msg(d0, d1, arg, op):
        return (
            f"Expected all tensors to be on the same device, but found at least two devices, "
            f"{d0} and {d1}! (when checking argument for argument {arg} in method {op})"
        )

    with strict_cuda():
        x, c = ember.ones(2, 3, device="cuda"), ember.ones(2, 3)
        for f, d0, d1, arg, op in (
            (lambda: x + c, "cuda:0", "cpu", "other", "add"),
            (lambda: c * x, "cpu", "cuda:0", "other", "mul"),
            (
                lambda: x.index_select(0, ember.tensor([1])),
                "cuda:0",
                "cpu",
                "index",
                "_index_select",
            ),
            (lambda: x + ember.ones(2, 3, device="cuda:1"), "cuda:0", "cuda:1", "other", "add"),
            (lambda: x.add_(ember.ones(2, 3, device="cuda:1")), "cuda:0", "cuda:1", "other", "add"),
        ):
            with pytest.raises(RuntimeError) as e:
                f()
            assert str(e.value) == msg(d0, d1, arg, op)
        # a 0-dim cpu tensor joins a cuda op as a scalar, as torch allows
        y = x * ember.tensor(2.0) + ember.tensor(1)
        assert y.device == ember.device("cuda", 0) and type(y._data) is StrictArray
        assert y.tolist() == [[3.0] * 3] * 2
    assert not devmod._SEVERAL_GPUS[0]  # the strict backend's second GPU stays its own
