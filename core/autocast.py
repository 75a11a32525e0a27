"""Autocast (torch.autocast): the op lists, the region state and the casting entry wrapper.

Inside an enabled region of device type D, a listed op whose first tensor is on D casts its
floating-point tensor arguments (float64 and non-floating tensors are left alone, as in torch)
before it runs, and runs with autocast suspended, so the ops it is built from do not cast again:

- ``LOWER``: to the region's dtype (bfloat16 / float16): matmul family, convolutions, linear ...
- ``FP32``: to float32: losses, linalg factorizations, fft, prod, cdist ...
- ``PROMOTE``: to the widest floating input dtype (at least the region's): cat, stack, index_copy.
- ``OWN``: no cast; an ember composite built on listed ops whose torch counterpart is not
  listed (bilinear, linalg.lu_solve, block_diag) just runs with autocast suspended.

A list entry may also be a policy ``(args, kw) -> LOWER/FP32/OWN/None`` for the composites torch
lists only through what they reach: einsum, tensordot, inner, matrix_power and chain_matmul get the
region's dtype exactly where torch's reaches its mm/bmm (not where it multiplies or copies).

The lists are torch 2.13's (CPU: measured op by op with torch's CPU autocast; CUDA: torch's
"Autocast Op Reference"), keyed by the name of ember's entry point: a registered op's name (the
registry wraps it when it is registered) or a composite function's ``__name__`` (decorated with
:func:`entry` where it is defined). A listed op pays one list read per call outside regions;
unlisted ops are not wrapped at all. Calls with ``out=`` and in-place variants are not cast
(torch's eligibility rule). A float32 leaf that requires grad (a weight) is cast once per region
(``cache_enabled``); the cache empties when the outermost region exits. Casts are recorded by
autograd (``ToCopyBackward0``), so gradients reach the weights in float32. The CUDA lists only
wrap ops where cupy is importable (no tensor can be on cuda otherwise).
"""

from __future__ import annotations

import functools
import importlib.util
import threading

from ..autograd.grad_mode import _state as _grad_state
from . import dtype as _dt

LOWER, FP32, PROMOTE, OWN = "lower", "fp32", "promote", "own"

# regions enabled now, over all threads and device types: the one test a listed op pays
ACTIVE = [0]


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cuda": _dt.float16, "cpu": _dt.bfloat16}
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict = {}  # id(weight) -> (weight, its cast)
        self.inside = False  # a listed op is running: the ops it calls do not cast


state = _State()


def set_enabled(device_type: str, on: bool) -> None:
    """Switch autocast for ``device_type`` in this thread (keeps ``ACTIVE`` counting)."""
    on = bool(on)
    if state.enabled.get(device_type, False) != on:
        ACTIVE[0] += 1 if on else -1
    state.enabled[device_type] = on


def clear_cache() -> None:
    state.cache.clear()


def is_any_enabled() -> bool:
    """Whether a region of any device type is enabled in this thread."""
    return ACTIVE[0] > 0 and any(state.enabled.values())


# ---------------------------------------------------------------------- the lists
def _table(**groups) -> dict:
    return {name: pol for pol, names in groups.items() for name in names.split()}


def _pad_policy(args, kw):
    """F.pad: torch lists reflection_pad1d/2d and replication_pad1d/2d/3d, not the others."""
    mode = kw.get("mode", args[2] if len(args) > 2 else "constant")
    k = len(args[1] if len(args) > 1 else kw.get("pad", ())) // 2
    return FP32 if mode == "replicate" or (mode == "reflect" and k < 3) else None


def _no_indices(args, kw):
    """max_pool3d is listed, max_pool3d_with_indices is not (torch's two kernels)."""
    idx = kw.get("return_indices", args[6] if len(args) > 6 else False)
    return None if idx else FP32


_CPU_FP32 = """
    prod cdist trace quantile nanquantile polar view_as_complex stft
    avg_pool3d adaptive_avg_pool3d adaptive_max_pool3d adaptive_max_pool3d_with_indices
    max_unpool1d max_unpool2d max_unpool3d fractional_max_pool2d fractional_max_pool3d
    fractional_max_pool2d_with_indices fractional_max_pool3d_with_indices grid_sample grid_sampler
    mse_loss l1_loss smooth_l1_loss huber_loss nll_loss cross_entropy binary_cross_entropy
    binary_cross_entropy_with_logits kl_div poisson_nll_loss hinge_embedding_loss
    margin_ranking_loss soft_margin_loss multilabel_margin_loss multi_margin_loss
    cosine_embedding_loss triplet_margin_loss ctc_loss
    inverse inv inv_ex pinverse cholesky cholesky_ex cholesky_inverse cholesky_solve solve
    solve_ex triangular_solve lu_solve orgqr ormqr geqrf householder_product qr svd svdvals
    eig eigvals eigh eigvalsh lstsq cond matrix_rank tensorinv tensorsolve
    fake_quantize_per_tensor_affine
    fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft
"""

CPU = _table(
    lower="""
        mm bmm matmul addmm addbmm baddbmm linear conv1d conv2d conv3d conv_transpose1d
        conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention
        einsum tensordot inner chain_matmul multi_dot vecdot matrix_power affine_grid
    """,
    fp32=_CPU_FP32,
    promote="cat stack index_copy",
    own="bilinear linalg_lu_solve block_diag",
)
CPU["pad"] = _pad_policy
CPU["max_pool3d"] = _no_indices


def _rnn_policy(args, kw):
    """torch's cpu LSTM (mkldnn_rnn_layer) and Elman RNN (built on linear) run in the lower
    precision. Its GRU casts each step's gates but keeps the hidden state in the dtype of h0 (the
    input's): ember's fused GRU runs in float32 unless the input has the region's dtype."""
    mode = kw.get("mode", args[1] if len(args) > 1 else "LSTM")
    if mode == "LSTM" and kw.get("batch_sizes") is not None:
        return None  # a packed LSTM runs torch's lstm.data overload, which autocast leaves alone
    if mode != "GRU":
        return LOWER
    x = (args[0] if args else kw["tensors"])[0]
    return LOWER if x.dtype is state.dtype["cpu"] else None


CPU["_rnn_layer"] = _rnn_policy


# torch builds einsum, tensordot, inner, matrix_power and chain_matmul from listed ops (mm, bmm,
# the inverse) only on some inputs and from unlisted ones (mul, sum, dot, a copy) on the others:
# these policies pick LOWER exactly when torch reaches its listed matmul and otherwise run the op
# uncast (OWN: ember's einsum under tensordot must not cast either), so its result keeps the
# input's dtype as torch's does.
def _kept_size(shape, dims) -> int:
    n = 1
    for i, s in enumerate(shape):
        if i not in dims:
            n *= s
    return n


def _tensordot_policy(args, kw):
    """torch's tensordot multiplies with mm unless both sides keep a single element (dot)."""
    a, b = args[0], args[1] if len(args) > 1 else kw["b"]
    dims = args[2] if len(args) > 2 else kw.get("dims", 2)
    try:
        if isinstance(dims, int):
            da, db = range(a.ndim - dims, a.ndim), range(dims)
        else:
            da, db = ([d] if isinstance(d, int) else d for d in dims)
        da = {d % a.ndim for d in da}
        db = {d % b.ndim for d in db}
    except (TypeError, ValueError, ZeroDivisionError):
        return LOWER  # a malformed dims: the op raises its own error
    if _kept_size(a.shape, da) == 1 and _kept_size(b.shape, db) == 1:
        return OWN
    return LOWER


def _inner_policy(args, kw):
    """torch's inner: a product with a 0-dim tensor, otherwise tensordot over the last dims."""
    a, b = args[0], args[1] if len(args) > 1 else kw["other"]
    if a.ndim == 0 or b.ndim == 0:
        return OWN
    return _tensordot_policy((a, b, ([-1], [-1])), {})


def _einsum_policy(args, kw):
    """torch's einsum (no opt_einsum): operands contracted left to right; a pair goes to bmm
    when a label it sums out (one no later operand nor the output has) is longer than 1 in both,
    otherwise to mul (after summing each side's own labels). The result has the region's dtype
    when the last pair's product is a bmm, or a mul of two such results."""
    from .ops.linalg import _parse, _sublist_eq
    from .tensor import Tensor

    try:
        if isinstance(args[0], Tensor):
            eq, ops = _sublist_eq(args)
        else:
            eq, ops = args[0], args[1:]
            if len(ops) == 1 and type(ops[0]) in (list, tuple):
                ops = tuple(ops[0])
        ins, out = _parse(eq, [tuple(t.shape) for t in ops])
    except Exception:  # noqa: BLE001 - the op itself raises torch's error
        return LOWER
    if len(ins) < 2:
        return OWN
    last = {c: k for k, sub in enumerate(ins) for c in sub}
    left = {c: s for c, s in zip(ins[0], ops[0].shape)}
    low = False
    for k in range(1, len(ins)):
        right = {c: s for c, s in zip(ins[k], ops[k].shape)}
        bmm = any(
            last[c] == k and c not in out and left[c] != 1 and right[c] != 1
            for c in right
            if c in left
        )
        low = bmm or (low and ops[k].dtype is state.dtype[ops[k].device.type])
        for c, s in right.items():
            left[c] = s if left.get(c, 1) == 1 else left[c]
        left = {c: s for c, s in left.items() if last[c] > k or c in out}
    return LOWER if low else OWN


def _matrix_power_policy(args, kw):
    """torch's matrix_power multiplies (mm) only for |n| >= 2: n = 0 and 1 are an identity and
    a copy, n = -1 the inverse (listed float32). None for n < 2: the op runs unwrapped, so its
    inverse casts to float32 and its products (n <= -2) to the region's dtype, as torch's."""
    n = args[1] if len(args) > 1 else kw.get("n")
    return LOWER if isinstance(n, int) and n >= 2 else None


def _chain_matmul_policy(args, kw):
    """One matrix is returned as a copy (no mm)."""
    mats = args[0] if len(args) == 1 and type(args[0]) in (list, tuple) else args
    return LOWER if len(mats) > 1 else OWN


def _lrn_policy(args, kw):
    """torch's local_response_norm averages the squares with avg_pool2d (3-d input: unlisted,
    so the input's dtype) or avg_pool3d (listed float32); ember's runs as one op."""
    x = args[0] if args else kw["input"]
    return FP32 if x.dim() > 3 else OWN


CPU.update(
    local_response_norm=_lrn_policy,
    tensordot=_tensordot_policy,
    inner=_inner_policy,
    einsum=_einsum_policy,
    matrix_power=_matrix_power_policy,
    chain_matmul=_chain_matmul_policy,
)

CUDA = _table(
    lower="""
        mm bmm matmul addmm addbmm baddbmm addmv addr mv linear conv1d conv2d conv3d
        conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention
        einsum chain_matmul multi_dot vecdot matrix_power affine_grid
    """,
    fp32="""
        acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow
        softplus layer_norm group_norm norm vector_norm matrix_norm cosine_similarity normalize
        softmax log_softmax softmin cumprod cumsum sum prod dist pdist cdist renorm logsumexp
        poisson_nll_loss cosine_embedding_loss nll_loss cross_entropy hinge_embedding_loss
        kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
        multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss
        binary_cross_entropy_with_logits
    """,
    promote="""
        addcdiv addcmul atan2 bilinear cross dot grid_sample index_put scatter_add tensordot
        cat stack index_copy inner
    """,
)
# without cupy no tensor is on cuda: the cuda-only entries then stay unwrapped (and free)
_CUDA_POSSIBLE = importlib.util.find_spec("cupy") is not None
# torch's CUDA fp32 reductions and softmaxes keep an explicit dtype= (fp32_set_opt_dtype)
_CUDA_KEEP_DTYPE = frozenset(
    _table(k="softmax log_softmax softmin cumprod cumsum sum prod vector_norm matrix_norm")
)


# ---------------------------------------------------------------------- the wrapper
def entry(fn, name: str | None = None):
    """The autocast entry of ``fn`` (a decorator), listed as ``name`` (default: its own name):
    ``fn`` itself when no list names it."""
    name = name or fn.__name__
    cpu, cuda = CPU.get(name), CUDA.get(name) if _CUDA_POSSIBLE else None
    if cpu is None and cuda is None:
        return fn
    keep_dtype = name in _CUDA_KEEP_DTYPE

    def autocast_entry(*args, **kw):
        if ACTIVE[0]:
            return _call(fn, cpu, cuda, keep_dtype, args, kw)
        return fn(*args, **kw)

    functools.update_wrapper(autocast_entry, fn)
    autocast_entry.autocast_inner = fn
    return autocast_entry


def unwrap(fn):
    """The function an autocast entry wraps (``fn`` itself for any other)."""
    return getattr(fn, "autocast_inner", fn)


def _first_tensor(args, kw):
    from .tensor import Tensor

    for a in (*args, *kw.values()):
        if isinstance(a, Tensor):
            return a
        if type(a) in (list, tuple):
            for b in a:
                if isinstance(b, Tensor):
                    return b
    return None


def _call(fn, cpu, cuda, keep_dtype, args, kw):
    st = state
    if st.inside or kw.get("out") is not None:
        return fn(*args, **kw)
    first = _first_tensor(args, kw)
    if first is None:
        return fn(*args, **kw)
    dev = first.device.type
    if not st.enabled.get(dev, False):
        return fn(*args, **kw)
    pol = cpu if dev == "cpu" else cuda if dev == "cuda" else None
    if pol is not None and not isinstance(pol, str):
        pol = pol(args, kw)
    if pol is None or (keep_dtype and dev == "cuda" and kw.get("dtype") is not None):
        return fn(*args, **kw)
    if pol != OWN:
        lower = st.dtype[dev]
        to = (
            lower if pol == LOWER else _dt.float32 if pol == FP32 else _widest(lower, dev, args, kw)
        )
        args = tuple(_cast_arg(a, to, lower, dev) for a in args)
        kw = {k: _cast_arg(v, to, lower, dev) for k, v in kw.items()} if kw else kw
    st.inside = True
    try:
        return fn(*args, **kw)
    finally:
        st.inside = False


def _eligible(t, dev) -> bool:
    from .tensor import Tensor

    if not isinstance(t, Tensor):
        return False
    d = t.dtype
    return d.category == _dt.FLOAT and d is not _dt.float64 and t.device.type == dev


def _widest(lower, dev, args, kw):
    """torch's promote_type: float32 wins over the region's dtype; any other 16-bit dtype
    beside it is torch's error; float64 tensors do not count."""
    cur = lower
    for a in (*args, *kw.values()):
        for t in a if type(a) in (list, tuple) else (a,):
            if _eligible(t, dev):
                d = t.dtype
                if cur is _dt.float32 or d is _dt.float32:
                    cur = _dt.float32
                elif d is not lower:
                    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return cur


def _cast_arg(a, to, lower, dev):
    if type(a) in (list, tuple):
        return type(a)(_cast_arg(b, to, lower, dev) for b in a)
    if not _eligible(a, dev) or a.dtype is to:
        return a
    from .ops.conversion import _cast

    st = state
    if (
        to is lower
        and st.cache_enabled
        and _grad_state.enabled  # torch does not keep a cast made under no_grad
        and a.requires_grad
        and a._grad_fn is None
        and a.dtype is _dt.float32
        and a._base is None
    ):
        hit = st.cache.get(id(a))
        if hit is not None and hit[0] is a:
            return hit[1]
        c = _cast(a, to)
        st.cache[id(a)] = (a, c)  # the weight is held too, so its id is not reused
        return c
    return _cast(a, to)
