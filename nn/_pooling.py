"""Pooling functionals (torch.nn.functional's pooling names) over the ops of core/ops/pooling.py.

The F forms add what torch's Python layer adds: ``return_indices`` switches, ``output_size``
checks of unpooling, ``output_ratio`` and random samples of fractional pooling (drawn from
ember's global generator), and LP pooling as a composite of average pooling.
"""

from __future__ import annotations

from ..autograd.grad_mode import is_grad_enabled as _grad_enabled
from ..core import dtype as _dt
from ..core.arg_errors import as_int as _as_int
from ..core.arg_errors import int_list_error as _int_list_error
from ..core.autocast import entry as _autocast_entry
from ..core.names import as_op_error as _as_op_error
from ..core.ops import pooling as _P
from ..core.tensor import Tensor
from ._args import arg_type_error

_FLOATS = (_dt.float32, _dt.float64)

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]

_MAX = {1: _P.max_pool1d, 2: _P.max_pool2d, 3: _P.max_pool3d}
_MAX_IDX = {
    1: _P.max_pool1d_with_indices,
    2: _P._max_pool2d_with_indices,
    3: _P._max_pool3d_with_indices,
}
_ADA_MAX = {1: _P.adaptive_max_pool1d, 2: _P._adaptive_max_pool2d, 3: _P._adaptive_max_pool3d}
_ADA_AVG = {1: _P._adaptive_avg_to1, 2: _P._adaptive_avg_to2, 3: _P._adaptive_avg_to3}

# the annotations of the per-dimension functions (strings, as ``from __future__`` leaves them)
_TO_TENSOR = {"input": "Tensor", "return": "Tensor"}
_TO_TUPLE = {"input": "Tensor", "return": "tuple"}


def _named(fn, name, doc, annotations):
    """A per-dimension closure made into the public function ``name`` (its autocast entry)."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__annotations__ = dict(annotations)
    return _autocast_entry(fn)  # fn itself unless an autocast list names it


def _named_max(fn, name, with_indices, indices_doc, doc, annotations=None):
    """``name`` or ``name``_with_indices (which returns the (values, indices) pair)."""
    if with_indices:
        return _named(fn, f"{name}_with_indices", indices_doc, _TO_TUPLE)
    public = _named(fn, name, doc, annotations or {})
    # torch's form dispatches on return_indices to its function _name: Python's own argument
    # errors (an unknown keyword, a missing argument) say that name (and pickle finds it so)
    fn.__qualname__ = f"_{name}"
    globals()[f"_{name}"] = public
    return public


def _stride(stride):
    return () if stride is None else stride


def _triple(v, nd):
    if isinstance(v, int):
        return (v,) * nd
    v = tuple(v)
    return v * nd if len(v) == 1 else v


# ---------------------------------------------------------------------- max pooling
_MAX_IDX_DOC = {
    1: "",
    2: "; indices are flat over each H*W plane",
    3: "; indices are flat over each D*H*W volume",
}


_TWO = (2, (2, 2), [2, 2])


def _is_2x2(input, kernel_size, stride, padding, dilation) -> bool:
    """MaxPool2d(2) on float32/float64 planes with even sides: the fast op (_max_pool2x2)."""
    for v in (kernel_size, stride, padding, dilation):
        # plain ints only, checked first: (2, 2.0) == (2, 2) and True == 1 (the general op
        # raises torch's TypeError for those), and a numpy integer compared with a tuple is an
        # array; the module's plain-int call pays one type check per argument
        if (
            type(v) is not int
            and v is not None
            and (not isinstance(v, (tuple, list)) or any(type(x) is not int for x in v))
        ):
            return False
    if kernel_size not in _TWO or (stride is not None and stride not in _TWO and stride != ()):
        return False
    if padding not in (0, (0, 0), [0, 0]) or dilation not in (1, (1, 1), [1, 1]):
        return False
    if not isinstance(input, Tensor) or input.dim() not in (3, 4):
        return False
    c, h, w = input.shape[-3:]
    # no empty plane either: the general op raises torch's error for it
    return h % 2 == 0 and w % 2 == 0 and h > 0 and w > 0 and c > 0 and input.dtype in _FLOATS


def _max_pool(nd, with_indices):
    def fn(
        input,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        ceil_mode=False,
        return_indices=False,
    ):
        if (
            nd == 2
            and not (with_indices or return_indices)
            and _is_2x2(input, kernel_size, stride, padding, dilation)
        ):
            keep = _grad_enabled() and input.requires_grad
            return _P._max_pool2x2(input, [] if keep else None)
        pool = _MAX_IDX[nd] if with_indices or return_indices else _MAX[nd]
        return pool(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)

    indices_doc = f"{nd}-d max pooling -> (values, indices){_MAX_IDX_DOC[nd]}."
    doc = (
        f"{nd}-d max pooling over the last {nd} dims; with ``return_indices`` also the argmax "
        "(flat per-plane indices, as MaxUnpool expects)."
    )
    return _named_max(fn, f"max_pool{nd}d", with_indices, indices_doc, doc)


max_pool1d_with_indices = _max_pool(1, True)
max_pool2d_with_indices = _max_pool(2, True)
max_pool3d_with_indices = _max_pool(3, True)
max_pool1d = _max_pool(1, False)
max_pool2d = _max_pool(2, False)
max_pool3d = _max_pool(3, False)


# ---------------------------------------------------------------------- average pooling
def avg_pool1d(
    input: Tensor, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
) -> Tensor:
    """1-d average pooling."""
    return _P.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def _avg_pool(nd):
    pool = {2: _P._avg_pool2d, 3: _P._avg_pool3d}[nd]

    def fn(
        input,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        return pool(
            input,
            kernel_size,
            _stride(stride),
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        )

    return _named(fn, f"avg_pool{nd}d", f"{nd}-d average pooling.", _TO_TENSOR)


avg_pool2d = _avg_pool(2)
avg_pool3d = _avg_pool(3)
_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}


# ---------------------------------------------------------------------- LP pooling
def _lp_pool(nd):
    def fn(input, norm_type, kernel_size, stride=None, ceil_mode=False):
        # torch unpacks the window's sizes itself, then hands kernel_size to avg_pool: their
        # errors (a float size, a tuple of another length)
        if isinstance(kernel_size, float):
            raise TypeError(
                f"avg_pool{nd}d(): argument 'kernel_size' (position 2) must be tuple of ints, "
                "not float"
            )
        if nd > 1 and not isinstance(kernel_size, int) and len(kernel_size) != nd:
            k = len(kernel_size)
            raise ValueError(
                f"too many values to unpack (expected {nd})"
                if k > nd
                else f"not enough values to unpack (expected {nd}, got {k})"
            )
        n = 1
        for x in _triple(kernel_size, nd):
            n *= x
        if norm_type == float("inf"):  # the limit of the p-norm: the window's largest |x|
            return _MAX[nd](input.abs(), kernel_size, _stride(stride), 0, 1, ceil_mode)
        if norm_type == -float("inf"):  # and the other limit: the window's smallest |x|
            return -_MAX[nd](-input.abs(), kernel_size, _stride(stride), 0, 1, ceil_mode)
        out = _AVG[nd](input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
        if nd == 1 and isinstance(kernel_size, (tuple, list)):
            # torch's 1-d form multiplies by kernel_size as given: a sequence fails there
            raise TypeError(
                "mul(): argument 'other' (position 1) must be Tensor, not "
                f"{type(kernel_size).__name__}"
            )
        # sign(out) * relu(|out|) zeroes a negative window sum's gradient path, as torch does
        return (out.sign() * out.abs().relu()).mul(n).pow(1.0 / norm_type)

    doc = f"{nd}-d power-average pooling: (sum over the window of x^p)^(1/p)."
    return _named(fn, f"lp_pool{nd}d", doc, _TO_TENSOR)


lp_pool1d = _lp_pool(1)
lp_pool2d = _lp_pool(2)
lp_pool3d = _lp_pool(3)


# ---------------------------------------------------------------------- adaptive pooling
def _adaptive_max(nd, with_indices):
    def fn(input, output_size, return_indices=False):
        r = _ADA_MAX[nd](input, output_size)
        return r if with_indices or return_indices else r[0]

    indices_doc = f"{nd}-d adaptive max pooling -> (values, indices)."
    doc = (
        f"{nd}-d adaptive max pooling: windows [floor(i*L/out), ceil((i+1)*L/out)); "
        "``None`` in output_size keeps that dim's size."
    )
    return _named_max(fn, f"adaptive_max_pool{nd}d", with_indices, indices_doc, doc)


adaptive_max_pool1d_with_indices = _adaptive_max(1, True)
adaptive_max_pool2d_with_indices = _adaptive_max(2, True)
adaptive_max_pool3d_with_indices = _adaptive_max(3, True)
adaptive_max_pool1d = _adaptive_max(1, False)
adaptive_max_pool2d = _adaptive_max(2, False)
adaptive_max_pool3d = _adaptive_max(3, False)


def _adaptive_avg(nd):
    def fn(input, output_size):
        return _ADA_AVG[nd](input, output_size)

    keeps = "" if nd == 1 else " (``None`` in output_size keeps that dim)"
    doc = f"{nd}-d adaptive average pooling{keeps}."
    return _named(fn, f"adaptive_avg_pool{nd}d", doc, _TO_TENSOR)


adaptive_avg_pool1d = _adaptive_avg(1)
adaptive_avg_pool2d = _adaptive_avg(2)
adaptive_avg_pool3d = _adaptive_avg(3)


# ---------------------------------------------------------------------- fractional max pooling
def _fractional(nd, input, kernel_size, output_size, output_ratio, random_samples):
    fn = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:  # torch's Python: a float ratio has no len() in 2-d
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(
                f"{fn} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = _as_tuple(output_ratio, nd)  # (a short one runs out: IndexError)
        output_size = tuple(int(input.size(-nd + i) * ratio[i]) for i in range(nd))
    if random_samples is None:
        # torch draws the samples first (reading the batch and channel dims: too few dims are
        # an IndexError there), in the input's dtype: no integer or bool draws
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        channels = input.size(-nd - 1)
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise NotImplementedError(
                f"\"check_uniform_bounds\" not implemented for '{_scalar_name(input.dtype)}'"
            )
        from ..core.ops.random import rand

        random_samples = rand(n_batch, channels, nd, dtype=input.dtype, device=input.device)
    # torch's argument parser, then its kernel's checks
    word = "" if nd == 2 else " three"
    for what, v in (("kernel_size", kernel_size), ("output_size", output_size)):
        _check_int_list(fn, what, v)
    k = _fr_tuple(
        kernel_size, nd, f"{fn}: kernel_size must either be a single Int or tuple of{word} Ints"
    )
    osz = _fr_tuple(
        output_size, nd, f"{fn}: output_size must either be a single Int or tuple of{word} Ints"
    )
    _fr_check_input(fn if nd == 2 else f"{fn}_out", nd, input)  # torch's 3-d kernel's name
    op = _P._fractional_max_pool2d if nd == 2 else _P._fractional_max_pool3d
    return op(input, random_samples, k, osz)


def _check_int_list(fn: str, what: str, values) -> None:
    """torch's argument-parser TypeError when ``values`` (an int list argument, or one int)
    holds no int (a bool past the first counts as one)."""
    if not isinstance(values, (tuple, list)):
        if _as_int(values, True) is None:
            pos = {"kernel_size": 2, "output_size": 3}.get(what, 2)
            raise _int_list_error(fn, what, pos, values)
        return
    for i, v in enumerate(values):
        if _as_int(v, i == 0) is None:
            raise _P._int_list_error(fn, what, i, values)


def _fr_tuple(v, nd, msg):
    v = tuple(map(int, _as_tuple(v, nd)))  # (parsed: a bool past the first is an int)
    if len(v) != nd:
        raise RuntimeError(msg)
    return v


def _fr_check_input(fn, nd, input):
    shape = tuple(input.shape)
    if len(shape) not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(shape)}"
        )
    for i in range(len(shape) - nd, len(shape)):
        if shape[i] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"got{list(shape)} with dimension {i} being empty."
            )


def _fractional_max_pool(nd, with_indices):
    def fn(
        input,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        r = _fractional(nd, input, kernel_size, output_size, output_ratio, _random_samples)
        return r if with_indices or return_indices else r[0]

    who = " (Graham, 2014)" if nd == 2 else ""
    indices_doc = f"{nd}-d fractional max pooling{who} -> (values, indices)."
    doc = f"{nd}-d fractional max pooling: pseudo-random window starts drawn per plane."
    name = f"fractional_max_pool{nd}d"
    return _named_max(fn, name, with_indices, indices_doc, doc, {"input": "Tensor"})


fractional_max_pool2d_with_indices = _fractional_max_pool(2, True)
fractional_max_pool3d_with_indices = _fractional_max_pool(3, True)
fractional_max_pool2d = _fractional_max_pool(2, False)
fractional_max_pool3d = _fractional_max_pool(3, False)


# ---------------------------------------------------------------------- max unpooling
def _scalar_name(dtype) -> str:
    from ..core.dtype import SCALAR_NAMES

    name = str(dtype).split(".")[-1]
    return SCALAR_NAMES.get(name, name.capitalize())


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch's Python sizing of an unpooling: over len(kernel_size) dims (a shorter stride or
    padding fails on its index), an explicit size checked against the default one."""
    nd = len(kernel_size)
    in_size = tuple(input.shape)
    default = [
        (in_size[d - nd] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nd)
    ]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
                f"has a length of '{len(output_size)}'"
            )
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})'
                )
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                f"output_size[{d}]={ret[d]}"
            )
    return ret


def _as_tuple(v, nd):
    """torch's _single/_pair/_triple: a sequence as it is, anything else repeated."""
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd


def _unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    k = _as_tuple(kernel_size, nd)
    s = _as_tuple(stride, nd) if stride is not None else k
    p = _as_tuple(padding, nd)
    osz = list(_unpool_output_size(input, k, s, p, output_size))
    if nd == 1:  # torch runs it as a 2-d unpool of width 1 (its errors say so)
        out = _unpool_kernel(2, input.unsqueeze(-1), indices.unsqueeze(-1), osz + [1])
        return out.squeeze(-1)
    return _unpool_kernel(nd, input, indices, osz, s, p)


def _unpool_kernel(nd, input, indices, osz, stride=None, padding=None):
    """torch's max_unpool{nd}d kernel entry: its checks in its order (stride and padding: 3-d
    only)."""
    _check_int_list(f"max_unpool{nd}d", "output_size", osz)  # a float kernel makes float sizes
    if indices.dtype is not _dt.int64:  # not str(): `ember run` prints dtypes as torch.*
        got = "" if nd == 3 else f" but got: {_scalar_name(indices.dtype)}"
        raise RuntimeError(f"elements in indices should be type int64{got}")
    words = "(depth, height, width)" if nd == 3 else "(height, width)"
    ndim_error = RuntimeError(
        f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
        f"tensor with {input.dim()} dimensions."
    )
    if nd == 3 and input.dim() not in (4, 5):
        raise ndim_error
    if len(osz) != nd:
        raise RuntimeError(
            f"There should be exactly {'three' if nd == 3 else 'two'} elements {words} in "
            f"output_size, but got {len(osz)} elements."
        )
    if nd == 2 and input.dim() not in (3, 4):
        raise ndim_error
    if nd == 3:
        for what, v in (("stride", stride), ("padding", padding)):
            if len(v) != 3:
                raise RuntimeError(
                    f"There should be exactly three elements {words} in {what}, but got: "
                    f"{len(v)} elements."
                )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    shape = list(input.shape)
    for i in range(1, len(shape)):
        if shape[i] == 0:
            raise RuntimeError(
                f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have non-zero size for "
                f"non-batch dimensions, but got {shape} with dimension {i} being empty."
            )
    if nd == 3 and min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if 0 in osz:  # (no kernel runs: no dtype or index check)
        return input.new_zeros(tuple(input.shape[:-nd]) + tuple(osz))
    if input.numel() and not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"max_unpool{nd}d\" not implemented for '{_scalar_name(input.dtype)}'"
        )
    return _P._max_unpool(input, indices, tuple(int(x) for x in osz))


def _max_unpool(nd):
    def fn(input, indices, kernel_size, stride=None, padding=0, output_size=None):
        try:
            return _unpool(nd, input, indices, kernel_size, stride, padding, output_size)
        except RuntimeError as e:  # a name clash is max_unpool{nd}d's (spec 4.10)
            raise _as_op_error(e, f"max_unpool{nd}d", ("max_unpool",), input, indices) from None
        except AttributeError as e:
            # torch's 2-d and 3-d kernels parse indices as a Tensor (its 1-d Python code, like
            # its reading of input.size(), fails on the attribute as here)
            if nd == 1 or not isinstance(input, Tensor):
                raise
            raise arg_type_error(
                f"max_unpool{nd}d", e, ("input", "indices"), (input, indices), required=2
            ) from None

    doc = f"Partial inverse of max_pool{nd}d: values put back at their indices, zeros elsewhere."
    return _named(fn, f"max_unpool{nd}d", doc, {**_TO_TENSOR, "indices": "Tensor"})


max_unpool1d = _max_unpool(1)
max_unpool2d = _max_unpool(2)
max_unpool3d = _max_unpool(3)
