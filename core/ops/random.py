"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, multinomial, poisson, the
*_like samplers and the in-place Tensor samplers (uniform_, normal_, ...).

Every sampler takes torch's ``generator=`` keyword; without one it uses the default generator of the
device it samples on (core/random.py). Samples are drawn directly in float32 where numpy can.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...autograd.grad_mode import _state, no_grad
from .. import dtype as _dt
from ..arg_errors import as_int, int_list, int_list_error, invalid_arguments, type_name
from ..device import array_module, get_default_device, module_for, to_device
from ..layout import like_array
from ..names import keep, unify_inputs
from ..random import (
    Generator,
    default_generator,
    default_generator_for,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ..registry import _check_writable, broadcast_error, op, rebase_zero, refuse_no_grad_view
from ..tensor import Tensor, _wrap
from ..torch_function import dispatches_on_input
from ..vmap_state import SLICES as _VMAP_SLICES
from ..vmap_state import like as _vmap_like
from ..vmap_state import mark_results as _vmap_mark
from ..vmap_state import refuse_inplace_random as _vmap_refuse_inplace_random
from .creation import _check_out_dtype, _finish, _size_args

__all__ = [
    "Generator",
    "bernoulli",
    "binomial",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "multinomial",
    "normal",
    "poisson",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
]

_SN = _dt.SCALAR_NAMES


def _sname(npd) -> str:
    return _SN.get(_dt._FROM_NP[np.dtype(npd)].name, str(npd))


def _g(v) -> str:
    """A number as torch prints it in messages (2.0 -> 2, 0.5 -> 0.5)."""
    return f"{v:g}" if isinstance(v, float) else str(v)


def _gd(v) -> str:
    """A number torch holds as a C++ double, as its messages print it (60000, 1e+308)."""
    return f"{float(v):g}"


# torch's C++ element type names (its dtype bounds messages print the TypeMeta name)
_C_NAMES = _dt.C_NAMES
_FMAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
}
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _dname(npd) -> str:
    return _dt._FROM_NP[np.dtype(npd)].name


def _cname(npd) -> str:
    name = _dname(npd)
    return _C_NAMES.get(name, name)


def _check_bounds(frm, to_inc, npd, fn="check_random_bounds", stacklevel=4):
    """torch's check_from_to_in_range: ``from`` and ``to - 1`` must fit the dtype ``npd``."""
    npd = np.dtype(npd)
    name = _dname(npd)
    if npd.kind in "fV":
        lo, hi = -_FMAX[name], _FMAX[name]
    elif name == "uint64":
        lo, hi = 0, (1 << 63) - 1
    elif npd.kind == "b":
        lo, hi = 0, 1
    elif npd.kind in "iu":
        info = np.iinfo(npd)
        lo, hi = int(info.min), int(info.max)
    else:
        raise RuntimeError(f"{fn} handles only integral, floating-point and boolean types")
    for v, what in ((frm, "from"), (to_inc, "to - 1")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{what} is out of bounds for {_cname(npd)}")
    if npd.kind in "fV":
        dg = _DIGITS[name]
        for v, what in ((frm, "from"), (to_inc, "to - 1")):
            if v < -(1 << dg) or v > (1 << dg):
                warnings.warn(
                    f"{what} is out of bounds [-(2^{dg}), 2^{dg}]. Due to precision limitations "
                    f"{_cname(npd)} can support discrete uniform distribution only within this "
                    "range. This warning will become an error in version 1.7 release, please "
                    "fix the code in advance",
                    UserWarning,
                    stacklevel=stacklevel,  # the user's call (via _int_range / random_)
                )


def _as_float_int(v, npd) -> int:
    """static_cast<int64_t>(static_cast<scalar_t>(v)) (an inf cast gives INT64_MIN on x86)."""
    f = float(np.array(float(v)).astype(npd).astype(np.float64))
    return int(f) if math.isfinite(f) else -(1 << 63)


def _float_from_to(frm, to, npd):
    """torch's update_from / update_to: the range ends as the float dtype can hold them."""
    dg = _DIGITS[_dname(npd)]
    f1 = _as_float_int(frm + 1, npd)
    if f1 < frm:
        frm = f1 + (1 << (abs(frm + 1).bit_length() - 1 - dg + 1))
    t1 = _as_float_int(to - 1, npd)
    if t1 >= to:
        to = t1 - (1 << (abs(to - 1).bit_length() - 1 - dg + 1))
    if frm >= to:
        raise RuntimeError(
            "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but "
            f"got from={frm} >= to={to}"
        )
    return frm, to


def _int_range(low, high, npd):
    """random_(from, to)'s checks on a tensor of dtype ``npd``: the (updated) [low, high)."""
    _check_range(low, high)
    if np.dtype(npd).kind in "fV":
        low, high = _float_from_to(low, high, npd)
    _check_bounds(low, high - 1, npd)
    return low, high


def _gen(generator, d, fn=None):
    """The generator to draw with on device ``d`` (checked against the device). ``fn`` names a
    sampler of one signature, whose wrong ``generator`` type torch reports by argument."""
    if generator is None:
        return default_generator_for(d)
    if not isinstance(generator, Generator):
        if fn is not None:
            raise TypeError(
                f"{fn}(): argument 'generator' must be torch.Generator, not "
                f"{type(generator).__name__}"
            )
        raise TypeError(f"generator must be an ember.Generator, not {type(generator).__name__}")
    if d.type == "meta":  # nothing is drawn for a meta tensor (torch accepts any generator)
        return default_generator_for(d)
    if generator._device.type != d.type:
        raise RuntimeError(
            f"Expected a '{d.type}' device type for generator but found '{generator._device.type}'"
        )
    return generator


def _dev(device, out=None):
    if device is not None:
        return to_device(device)
    if out is not None:
        return out.device
    return get_default_device()


def _float_npd(dtype, out, kernel):
    _check_out_dtype(dtype, out)
    if dtype is not None:
        npd = np.dtype(_dt.to_dtype(dtype).np)
    elif out is not None:
        npd = out._data.dtype
    else:
        npd = np.dtype(_dt.get_default_dtype().np)
    if npd.kind not in "fcV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_sname(npd)}'")
    return npd


def _complex_draw(fn, shape, npd, scale=1.0):
    """A complex sample: independent real and imaginary parts (each scaled by ``scale``)."""
    real = np.dtype(np.float64 if npd == np.complex128 else np.float32)
    re, im = fn(shape, real), fn(shape, real)
    if scale != 1.0:
        re, im = re * real.type(scale), im * real.type(scale)
    out = re.astype(npd)
    out.imag = im
    return out


def _factory_sigs(lead: str) -> tuple:
    """A factory's two torch signatures: with a (required) generator, and without."""
    return tuple(
        f"({lead}, *, {gen}Tensor out = None, torch.dtype dtype = None, torch.layout layout = "
        "None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)"
        for gen in ("torch.Generator generator, ", "")
    )


_SIZE_SIGS = _factory_sigs("tuple of ints size")


def _sizes(size, kw, name, generator):
    if kw:
        return _size_keyword(size, kw, name, generator)
    try:
        return _size_args(size, name)
    except TypeError as e:
        # torch's parser blames the size itself only when one signature takes as many
        # arguments: several (a generator, or loose sizes) make it list them all; a later
        # element's unpack error comes after the overload is chosen
        if (len(size) < 2 and generator is None) or "failed to unpack" in str(e):
            raise
        gen = {} if generator is None else {"generator": generator}
        raise invalid_arguments(name, size, gen, _SIZE_SIGS) from None


def _size_keyword(size, kw, name, generator):
    """:func:`_sizes` of a call with keywords (``size=``), as torch's parser reads it."""
    given = kw.get("size", size)
    gen = {} if generator is None else {"generator": generator}
    if size and "size" in kw:
        raise invalid_arguments(name, size, {**kw, **gen}, _SIZE_SIGS)
    if any(k != "size" for k in kw):
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
    if not isinstance(given, (tuple, list)) or (given and as_int(given[0], True) is None):
        # the overload check (a keyword int[] is a sequence whose first element is an int)
        if generator is not None:
            raise invalid_arguments(name, (), {**kw, **gen}, _SIZE_SIGS)
        raise int_list_error(name, "size", None, given)
    return _size_args((int_list(name, "size", None, given),), name)


# ---------------------------------------------------------------------- rand, randn
def rand(
    *size,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    names=None,
    **kw,
) -> Tensor:
    """Uniform samples on [0, 1) (default float dtype)."""
    _check_generator("rand", size, kw, generator, _SIZE_SIGS)
    shape = _sizes(size, kw, "rand", generator)
    npd = _float_npd(dtype, out, "check_uniform_bounds")
    g = _gen(generator, _dev(device, out))
    arr = _complex_draw(g._uniform, shape, npd) if npd.kind == "c" else g._uniform(shape, npd)
    return _finish(arr, requires_grad, names, out, "rand")


def randn(
    *size,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    names=None,
    **kw,
) -> Tensor:
    """Standard normal samples (complex: real and imaginary parts each of variance 1/2)."""
    _check_generator("randn", size, kw, generator, _SIZE_SIGS)
    shape = _sizes(size, kw, "randn", generator)
    npd = _float_npd(dtype, out, "normal_kernel_cpu")
    g = _gen(generator, _dev(device, out))
    arr = (
        _complex_draw(g._normal, shape, npd, math.sqrt(0.5))
        if npd.kind == "c"
        else g._normal(shape, npd)
    )
    return _finish(arr, requires_grad, names, out, "randn")


# ---------------------------------------------------------------------- integers, permutations
def _check_range(low, high):
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )


_RANDINT_TAIL = (
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device "
    "= None, bool pin_memory = False, bool requires_grad = False)"
)
_RANDINT_SIGS = tuple(
    f"({lead}, *, {gen}{_RANDINT_TAIL}"
    for lead in ("int high, tuple of ints size", "int low, int high, tuple of ints size")
    for gen in ("torch.Generator generator, ", "")
)


def _is_int(v) -> bool:
    return hasattr(v, "__index__") and not isinstance(v, (bool, float))


def _check_int64(v) -> None:
    """torch parses an int argument into a C long long: a Python int past it overflows."""
    if v is not None and not -(1 << 63) <= int(v) < (1 << 63):
        raise ValueError("Overflow when unpacking long long")


def _randint_args(args, kw, generator=None):
    """(low, high, size) of randint's two signatures, or torch's TypeError for a call that
    matches neither (two positional arguments are read as ``high, size`` and checked one by
    one, as torch's parser does)."""
    if any(k not in ("low", "high", "size") for k in kw):
        raise invalid_arguments("randint", args, kw, _RANDINT_SIGS)
    named = {k: kw[k] for k in ("low", "high", "size") if k in kw}
    if len(args) == 2 and not named and generator is None:
        high, size = args
        if not _is_int(high):
            raise TypeError(
                f"randint(): argument 'high' (position 1) must be int, not {type(high).__name__}"
            )
        if not isinstance(size, (tuple, list)):
            raise int_list_error("randint", "size", 2, size)
        int_list("randint", "size", 2, size)
        return None, high, size
    return _randint_parse(args, named, generator)


def _randint_parse(args, named, generator):
    """:func:`_randint_args` past its common form, as torch's parser goes: the first signature
    whose arguments fit (an ``int[]`` fits by its first element; the others are unpacked
    after, with their own error), else the one signature that takes as many arguments (its
    own error), else the list of all."""
    gen = {} if generator is None else {"generator": generator}
    count = len(args) + len(named) + len(gen)
    plausible = []
    for params in (("high", "size"), ("low", "high", "size")):
        for with_gen in (True, False):
            if len(params) + with_gen <= count:  # (the parser's test: its required ones)
                plausible.append(params)
            vals = dict(zip(params, args))
            if len(args) > len(params) or with_gen != bool(gen) or any(k in vals for k in named):
                continue
            vals.update(named)
            if len(vals) == len(params) and _randint_error(vals, args) is None:
                int_list("randint", "size", None, vals["size"])  # a later element's unpack
                return vals.get("low"), vals["high"], vals["size"]
    if len(plausible) == 1:
        vals = dict(zip(plausible[0], args))
        lack = [p not in vals and p not in named for p in plausible[0]]
        if any(lack):
            missing = plausible[0][lack.index(True) :]  # (torch lists all from the first)
            s = "s" if len(missing) == 1 else ""
            listed = ", ".join(f'"{p}"' for p in missing)
            raise TypeError(
                f"randint() missing {len(missing)} required positional argument{s}: {listed}"
            )
        if not any(k in vals for k in named) and len(vals) + len(named) == len(plausible[0]):
            vals.update(named)
            err = _randint_error(vals, args)
            if err is not None:
                raise err
    raise invalid_arguments("randint", args, {**named, **gen}, _RANDINT_SIGS)


def _randint_error(vals: dict, args: tuple) -> TypeError | None:
    """torch's parser error for the first of randint's arguments ``vals`` (by name; the
    first ``len(args)`` given by position) of the wrong type, or None."""
    for k, (name, v) in enumerate(vals.items()):
        pos = k + 1 if k < len(args) else None
        if name != "size":
            if not _is_int(v):
                at = "" if pos is None else f" (position {pos})"
                return TypeError(
                    f"randint(): argument '{name}'{at} must be int, not {type_name(v)}"
                )
        elif not isinstance(v, (tuple, list)):
            return int_list_error("randint", "size", pos, v)
        elif v and as_int(v[0], True) is None:
            return int_list_error("randint", "size", pos, v, 0)
    return None


def randint(
    *args,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    names=None,
    **kw,
) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    low, high, size = _randint_args(args, kw, generator)
    _check_generator("randint", args, kw, generator, _RANDINT_SIGS)
    _check_int64(low)
    _check_int64(high)
    low = 0 if low is None else int(low)
    high = int(high)
    shape = _size_args((tuple(size),), "randint")
    _check_out_dtype(dtype, out)
    npd = np.dtype(np.int64) if dtype is None else np.dtype(_dt.to_dtype(dtype).np)
    if dtype is None and out is not None:
        npd = out._data.dtype
    low, high = _int_range(low, high, npd)
    g = _gen(generator, _dev(device, out))
    return _finish(g._integers(low, high, shape, npd), requires_grad, names, out, "randint")


def randperm(
    n: int,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """A random permutation of 0..n-1 (int64 by default)."""
    if not _is_int(n):
        raise TypeError(
            f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}"
        )
    _check_int64(n)
    _check_generator("randperm", (n,), {}, generator, _factory_sigs("int n"))
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    _check_out_dtype(dtype, out)
    npd = np.dtype(np.int64) if dtype is None else np.dtype(_dt.to_dtype(dtype).np)
    if dtype is None and out is not None:
        npd = out._data.dtype
    _check_randperm(n, npd)
    g = _gen(generator, _dev(device, out))
    p = g._permutation(n)
    return _finish(p if p.dtype == npd else p.astype(npd), requires_grad, None, out, "randperm")


_PERM_FLOAT_MAX = {
    "float16": (2049, "2049", "Half"),
    "float32": ((1 << 24) + 1, "2^24+1", "Float"),
    "float64": ((1 << 53) + 1, "2^53+1", "Double"),
}


def _check_randperm(n, npd):
    """torch's randperm dtype checks: n - 1 must fit the dtype (exactly, for floats)."""
    name = _dname(npd)
    if npd.kind in "bc" or name == "uint64":
        raise NotImplementedError(f"\"randperm\" not implemented for '{_sname(npd)}'")
    if npd.kind in "iu" and npd.itemsize <= 2 and n - 1 > np.iinfo(npd).max:
        raise RuntimeError(f"value cannot be converted to type {npd.name}_t without overflow")
    lim = _PERM_FLOAT_MAX.get(name)
    if lim is not None and n > lim[0]:
        raise RuntimeError(f"n cannot be greater than {lim[1]} for {lim[2]} type.")


# ---------------------------------------------------------------------- *_like
def _like_dev(input, device, fn):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input.device if device is None else to_device(device)


_RANDINT_LIKE_SIGS = tuple(
    f"(Tensor input, {lead}, *, {gen}torch.memory_format memory_format = None, torch.dtype dtype "
    "= None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)"
    for lead in ("int low, int high", "Tensor high", "int high")
    for gen in ("torch.Generator generator, ", "")
)


def _like_result(input, arr, requires_grad, names, memory_format):
    """A ``*_like`` sampler's tensor: the drawn values laid out like torch's ``memory_format``
    (by default the input's own strides: core/layout.like_array), named like the input."""
    a = input._data
    if memory_format is not None or not a.flags.c_contiguous:
        out = like_array(
            array_module(arr), a, arr.dtype, lambda xp, s, d: xp.empty(s, d), memory_format
        )
        out[...] = arr
        arr = out
    t = _finish(arr, requires_grad, names)
    if names is None:
        t._names = input._names
    return t


@dispatches_on_input
@_vmap_like
def rand_like(
    input,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    names=None,
) -> Tensor:
    d = _like_dev(input, device, "rand_like")
    npd = _float_npd(dtype if dtype is not None else input.dtype, None, "check_uniform_bounds")
    g = _gen(generator, d)
    shape = input._data.shape
    arr = _complex_draw(g._uniform, shape, npd) if npd.kind == "c" else g._uniform(shape, npd)
    return _like_result(input, arr, requires_grad, names, memory_format)


@dispatches_on_input
@_vmap_like
def randn_like(
    input,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    names=None,
) -> Tensor:
    d = _like_dev(input, device, "randn_like")
    npd = _float_npd(dtype if dtype is not None else input.dtype, None, "normal_kernel_cpu")
    g = _gen(generator, d)
    shape = input._data.shape
    arr = (
        _complex_draw(g._normal, shape, npd, math.sqrt(0.5))
        if npd.kind == "c"
        else g._normal(shape, npd)
    )
    return _like_result(input, arr, requires_grad, names, memory_format)


@dispatches_on_input
@_vmap_like
def randint_like(
    input,
    low=0,
    high=None,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    names=None,
) -> Tensor:
    """``randint_like(x, high)`` or ``randint_like(x, low, high)``: x's shape, dtype and device."""
    d = _like_dev(input, device, "randint_like")
    given = (low,) if high is None else (low, high)
    if not all(_is_int(v) for v in given):  # a float bound matches none of the signatures
        raise invalid_arguments("randint_like", (input, *given), {}, _RANDINT_LIKE_SIGS)
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    npd = input._data.dtype if dtype is None else np.dtype(_dt.to_dtype(dtype).np)
    low, high = _int_range(low, high, npd)
    g = _gen(generator, d)
    arr = g._integers(low, high, input._data.shape, npd)
    return _like_result(input, arr, requires_grad, names, memory_format)


# ---------------------------------------------------------------------- normal
def _bshape(a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        raise broadcast_error([a, b]) from None


def _device_gen_of(arr, generator, fn=None):
    from ..device import device_of

    return _gen(generator, device_of(arr), fn)


@op(names=unify_inputs, promote=True, floating=True, method=False, name="_normal")
def _normal(xp, mean, std, generator=None):
    shape = _bshape(getattr(mean, "shape", ()), getattr(std, "shape", ()))
    ref = mean if hasattr(mean, "dtype") else std
    if hasattr(std, "dtype"):
        if bool((~(std >= 0)).any()):  # NaN too (a check that no values, on meta, pass)
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    g = _device_gen_of(ref, generator)
    z = g._normal(shape, ref.dtype)
    return z * std + mean


@_normal.vjp
def _(grad):
    # like torch, the sample is not reparameterised: zero gradients for mean and std
    z = grad * 0
    return z, z


_NORMAL_SIGS = (
    "(Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
    "(Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)",
    "(float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
    (
        "(float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
        "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
        "device = None, bool pin_memory = False, bool requires_grad = False)"
    ),
)
_normal.op.label, _normal.op.overloads = "normal", _NORMAL_SIGS


def normal(
    mean=0.0,
    std=1.0,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Normal samples: tensor mean and/or std (broadcast), or float mean and std with ``size``."""
    if (isinstance(mean, Tensor) or isinstance(std, Tensor)) and size is not None:
        # a size goes with float mean and std only: (Tensor, Tensor, tuple) matches nothing
        raise invalid_arguments("normal", (mean, std, size), {}, _NORMAL_SIGS)
    if size is not None and not isinstance(size, (tuple, list)):
        raise invalid_arguments("normal", (mean, std, size), {}, _NORMAL_SIGS)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        for v in (mean, std, out):  # torch draws in the input's (out's) dtype: not in an integer
            if isinstance(v, Tensor) and v._data.dtype.kind not in "fcV":
                raise NotImplementedError(
                    f"\"normal_kernel_cpu\" not implemented for '{_sname(v._data.dtype)}'"
                )
        # no generator argument when none was given: torch's type error lists only what was passed
        r = _normal(mean, std) if generator is None else _normal(mean, std, generator)
        if out is not None:
            out._data, out._names = r._data.astype(out._data.dtype, copy=False), None
            out._ver[0] += 1
            return out
        return r
    if size is None:
        raise TypeError(
            f"normal() received an invalid combination of arguments - got "
            f"({type(mean).__name__}, {type(std).__name__}), but expected one of: "
            "(Tensor mean, Tensor std), (Tensor mean, float std), (float mean, Tensor "
            "std), (float mean, float std, tuple of ints size)"
        )
    if not std >= 0:  # NaN too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    shape = _size_args((tuple(size) if isinstance(size, (list, tuple)) else (size,),), "normal")
    npd = _float_npd(dtype, out, "normal_kernel_cpu")
    g = _gen(generator, _dev(device, out))
    z = g._normal(shape, npd)
    if std != 1:
        z *= std
    if mean != 0:
        z += mean
    return _finish(z, requires_grad, None, out, "normal")


# ---------------------------------------------------------------------- bernoulli, poisson
_P_MSG = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
    "be improved?  If so, please report an enhancement request to PyTorch.)"
)


_BERNOULLI_SIGS = (
    "(Tensor input, *, torch.Generator generator = None, Tensor out = None)",
    "(Tensor input, float p, *, torch.Generator generator = None)",
)


@op(names=keep, method=True, name="bernoulli")
def bernoulli(xp, input, p=None, *, generator=None):
    """0/1 samples with probability ``input`` (or the scalar ``p``), in input's dtype."""
    given = (_wrap(input),) if p is None else (_wrap(input), p)
    if isinstance(p, Tensor) and p.ndim:  # only a 0-dim tensor reads as the float p
        raise invalid_arguments("bernoulli", given, {}, _BERNOULLI_SIGS)
    _check_generator("bernoulli", given, {}, generator, _BERNOULLI_SIGS)
    g = _device_gen_of(input, generator)
    if p is None:
        if input.dtype.kind not in "fV":
            # torch's kernel is chosen by the output's dtype (a complex one has none) and
            # then refuses a non-floating probability
            which = "self" if input.dtype.kind == "c" else "p"
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_{which}_\" not implemented for '{_sname(input.dtype)}'"
            )
        if input.size and bool(((input < 0) | (input > 1) | xp.isnan(input)).any()):
            raise RuntimeError(_P_MSG)
        prob = input
    else:
        if isinstance(p, Tensor):
            p = p.item()
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
        _check_bernoulli_scalar_dtype(input)
        prob = p
    u = g._uniform(input.shape, input.dtype if input.dtype.kind == "f" else np.float32)
    return (u < prob).astype(input.dtype)


@bernoulli.vjp
def _(grad):
    return grad * 0


@op(names=keep, method=False, name="poisson", tensors_only=True)
def poisson(xp, input, generator=None):
    """Poisson samples with rate ``input`` (same dtype)."""
    if input.dtype.kind not in "fV":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_sname(input.dtype)}'")
    if input.size and bool((~(input >= 0)).any()):  # NaN too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    g = _device_gen_of(input, generator, "poisson")
    return g._poisson(input.astype(np.float64)).astype(input.dtype)


@poisson.vjp
def _(grad):
    return grad * 0


@op(names=unify_inputs, method=False, name="binomial", tensors_only=True)
def binomial(xp, count, prob, generator=None):
    """Binomial samples: successes in ``count`` trials of success probability ``prob``
    (broadcast; in count's floating dtype). Drawn directly, not as ``count`` Bernoulli trials."""
    if count.dtype.kind not in "fV":
        raise ValueError(
            f"binomial only supports floating-point dtypes for count, got: {_sname(count.dtype)}"
        )
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_sname(prob.dtype)} but expected {_sname(count.dtype)}")
    shape = _bshape(count.shape, prob.shape)
    n = xp.broadcast_to(xp.maximum(count, 0), shape).astype(np.int64)  # (torch: 0 for count < 0)
    p = xp.broadcast_to(xp.clip(prob, 0, 1), shape).astype(np.float64)
    g = _device_gen_of(count, generator)
    return g._binomial(n, p).astype(count.dtype)


@binomial.vjp
def _(grad):
    # torch records the op in the graph (the draw requires grad) but has no derivative for it
    raise RuntimeError("derivative for aten::binomial is not implemented")


# ---------------------------------------------------------------------- multinomial
def _check_rows_with_replacement(xp, w, total) -> None:
    # torch's with-replacement kernel checks row by row, entry by entry (NaN fails `>= 0`),
    # then the row's sum: the first failure in that order names the error
    bad = ~(w >= 0) | ~xp.isfinite(w)
    row_bad = bad.any(-1) | ~(total > 0)
    if not bool(row_bad.any()):
        return
    r = int(xp.argmax(row_bad))
    if bool(bad[r].any()):
        v = float(w[r, int(xp.argmax(bad[r]))])
        if not v >= 0:
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry < 0)"
            )
        raise RuntimeError(
            "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
        )
    raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(
    input, num_samples: int, replacement: bool = False, *, generator=None, out=None
) -> Tensor:
    """Sample category indices from (rows of) non-negative weights ``input``."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "multinomial(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    if not _is_int(num_samples):
        raise TypeError(
            "multinomial(): argument 'num_samples' (position 2) must be int, not "
            f"{type(num_samples).__name__}"
        )
    num_samples = int(num_samples)
    g = _gen(generator, input.device, "multinomial")
    if out is not None and out._data.dtype != np.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {_sname(out._data.dtype)}")
    a = input._data
    if a.dtype.kind not in "fV":
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {_sname(a.dtype)}"
        )
    if a.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = a.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    xp = module_for(input.device)
    w = a.reshape(a.shape[0] if a.ndim == 2 else 1, n).astype(np.float64)
    if n == 0 and num_samples == 1 and w.shape[0]:
        # torch's one-sample kernel takes each row's min and max first
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
            "identity."
        )
    total = w.sum(-1)
    if replacement and num_samples > 1:
        _check_rows_with_replacement(xp, w, total)
    else:
        if w.size and bool((~xp.isfinite(w) | (w < 0)).any()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if bool((total <= 0).any()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows = w.shape[0]
    if not rows:
        idx = xp.zeros((0, num_samples), dtype=np.int64)
    elif replacement:
        # inverse CDF for all rows at once: offset row r's CDF and draws by r, one searchsorted
        cdf = xp.cumsum(w / total[:, None], axis=-1)
        cdf[:, -1] = 1.0
        off = xp.arange(rows, dtype=np.float64)[:, None]
        u = g._uniform((rows, num_samples), np.float64)
        idx = xp.searchsorted((cdf + off).reshape(-1), (u + off).reshape(-1), side="right")
        idx = idx.reshape(rows, num_samples) - (xp.arange(rows) * n)[:, None]
        idx = xp.minimum(idx, n - 1)
    else:
        # exponential race: the k smallest Exp(1)/w are a weighted sample without replacement;
        # zero-weight categories (key inf) come last, as in torch >= 2.x, which samples them
        # once the positive ones are used up instead of raising
        e = g._exponential((rows, n), np.float64)
        with np.errstate(divide="ignore"):
            keys = e / w
        idx = xp.argsort(keys, axis=-1, kind="stable")[:, :num_samples]
    idx = idx.astype(np.int64).reshape(a.shape[:-1] + (num_samples,))
    # names (spec 4.2): one row of draws per row of weights, so a batch dim keeps its name; the
    # samples dim is created (unnamed); a 1-D input's draws are all new
    pn = input._names
    names = None if pn is None or a.ndim == 1 else (pn[0], None)
    r = _finish(idx, False, names, out)
    if _VMAP_SLICES:  # draws from per-element weights are per-element
        _vmap_mark((input,), (r,), "multinomial")
    return r


# ---------------------------------------------------------------------- in-place samplers
def _fill_(self, arr, bname: str) -> Tensor:
    """Write a sampler's draw ``arr`` into self; in a graph, torch's node ``bname`` passes zeros
    back to self's old history (the draw depends on nothing differentiably)."""
    refuse_no_grad_view(self)
    if _VMAP_SLICES:
        _vmap_refuse_inplace_random(self)
    graph = _state.enabled and self.requires_grad
    if graph and self._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    self._data[...] = arr
    self._ver[0] += 1
    if graph:
        rebase_zero(self, bname)
    return self


def _self_gen(self, generator, fn=None):
    """The generator an in-place sampler draws with, once ``self`` is known writable (an expanded
    view is refused before anything is drawn, leaving the generator's state as it was)."""
    g = _gen(generator, self.device, fn)
    _check_writable(self._data)
    return g


def _float_self(self, kernel):
    npd = self._data.dtype
    if npd.kind not in "fcV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_sname(npd)}'")
    return npd


def uniform_(self, from_=0.0, to=1.0, /, *, generator=None, **kw) -> Tensor:
    """Fill with uniform samples on [from, to)."""
    from_ = kw.pop("from", from_)
    to = kw.pop("to", to)
    if kw:  # torch's keyword is ``from`` (a Python keyword, hence the ** route), nothing else
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kw))}'")
    npd = _float_self(self, "check_uniform_bounds")
    # torch's checks, in its order; a complex tensor is checked (and filled) as its real view
    real = npd if npd.kind != "c" else np.dtype(np.float32 if npd.itemsize == 8 else np.float64)
    name = _dname(real)
    hi = _FMAX[name]
    for v, what in ((from_, "from"), (to, "to")):
        if not -hi <= v <= hi:  # NaN too
            raise RuntimeError(f"{what} is out of bounds for {_cname(real)}")
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from="
            f"{_gd(from_)} > to={_gd(to)}"
        )
    if to - from_ > hi:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{_SN[name]}>::max(), but found "
            f"to={_gd(to)} and from={_gd(from_)} which result in to-from to exceed the limit"
        )
    g = _self_gen(self, generator, "uniform_")
    shape = self._data.shape
    if npd.kind == "c":
        u = _complex_draw(g._uniform, shape, npd)
    else:
        u = g._uniform(shape, npd if npd.kind == "f" else np.float32)
    if to - from_ != 1:
        u = u * (to - from_)
    if from_ != 0:
        u = u + (complex(from_, from_) if npd.kind == "c" else from_)  # both parts, like torch
    return _fill_(self, u, "UniformBackward0")


def normal_(self, mean=0.0, std=1.0, *, generator=None) -> Tensor:
    """Fill with normal samples N(mean, std^2)."""
    if not std >= 0:  # NaN too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    if self._data.size == 0 and self._data.dtype.kind not in "fcV":
        return self  # torch's kernel (and its dtype check) is not reached: nothing to draw
    npd = _float_self(self, "normal_kernel_cpu")
    g = _self_gen(self, generator, "normal_")
    shape = self._data.shape
    z = (
        _complex_draw(g._normal, shape, npd, math.sqrt(0.5))
        if npd.kind == "c"
        else g._normal(shape, npd if npd.kind == "f" else np.float32)
    )
    if std != 1:
        z = z * std
    if mean != 0:
        z = z + mean
    return _fill_(self, z, "NormalBackward0")


_BERN_SIGS = (
    "(Tensor p, *, torch.Generator generator = None)",
    "(float p = 0.5, *, torch.Generator generator = None)",
)
_RANDOM_SIGS = (
    "(*, torch.Generator generator = None)",
    "(int from, int to, *, torch.Generator generator = None)",
    "(int to, *, torch.Generator generator = None)",
)


def _check_generator(fn, args, kw, generator, sigs) -> None:
    """A sampler of several signatures: a wrong ``generator`` matches none of them."""
    if generator is not None and not isinstance(generator, Generator):
        raise invalid_arguments(fn, args, {**kw, "generator": generator}, sigs)


def _check_bernoulli_scalar_dtype(a) -> None:
    """torch's scalar-p Bernoulli kernel has no complex version (an empty tensor draws nothing)."""
    if a.dtype.kind == "c" and a.size:
        raise NotImplementedError(
            f"\"bernoulli_scalar_cpu_\" not implemented for '{_sname(a.dtype)}'"
        )


def bernoulli_(self, p=None, *, generator=None) -> Tensor:
    """Fill with 0/1 samples of probability ``p`` (a float, by default 0.5, or a tensor that
    expands to self's shape)."""
    _check_generator("bernoulli_", () if p is None else (p,), {}, generator, _BERN_SIGS)
    if p is None:
        p = 0.5
    g = _self_gen(self, generator)
    shape = self._data.shape
    if isinstance(p, Tensor):
        if self._data.size == 0:  # torch checks nothing about a tensor p when nothing is drawn
            return self
        if self._data.dtype.kind == "c":
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_self_\" not implemented for '{_sname(self._data.dtype)}'"
            )
        if p._data.dtype.kind not in "fV":
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_sname(p._data.dtype)}'"
            )
        with no_grad():
            pa = p.expand(shape)._data  # torch's expand errors for a p that does not fit self
        if pa.size and bool((~((pa >= 0) & (pa <= 1))).any()):  # NaN too
            raise RuntimeError(_P_MSG)
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
        _check_bernoulli_scalar_dtype(self._data)
        pa = p
    u = g._uniform(shape, np.float64 if self._data.dtype == np.float64 else np.float32)
    # torch's bernoulli_.float (p a number) / bernoulli_.Tensor nodes
    bname = "BernoulliBackward1" if isinstance(p, Tensor) else "BernoulliBackward2"
    return _fill_(self, (u < pa).astype(self._data.dtype), bname)


def _random_max(npd) -> int:
    npd = np.dtype(npd)
    if npd.kind == "b":
        return 1
    if npd.kind in "iu":
        return int(np.iinfo(npd).max)
    mant = {2: 11, 4: 24, 8: 53}[npd.itemsize]
    if npd.kind == "V":  # bfloat16
        mant = 8
    return 1 << mant


def random_(self, *args, generator=None, **kw) -> Tensor:
    """Fill with integers: [0, 2^mantissa] (floats) / [0, max] (ints), [0, to) or [from, to)."""
    named = dict(kw)
    frm = kw.pop("from", None)
    to = kw.pop("to", None)
    if (
        kw
        or len(args) > 2
        or not all(v is None or _is_int(v) for v in (*args, *named.values()))
        or (len(args) == 2 and named)
        or (len(args) == 1 and "to" in named)
        or (frm is not None and to is None)
    ):
        raise invalid_arguments("random_", args, named, _RANDOM_SIGS)
    _check_generator("random_", args, named, generator, _RANDOM_SIGS)
    if len(args) == 1:
        to = args[0]
    elif len(args) == 2:
        frm, to = args
    which = 2 if to is None else 1 if frm is None else 0  # torch's random_ overloads' nodes
    for v in (frm, to):  # torch reads both as C long long
        _check_int64(v)
    npd = self._data.dtype
    if npd.kind == "c" and frm is None and to is None:
        if self._data.size == 0:  # torch's kernel is not reached: nothing to draw
            return self
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{_sname(npd)}'")
    frm = 0 if frm is None else int(frm)
    g = _self_gen(self, generator)
    shape = self._data.shape
    if to is None:
        if npd.kind == "c":
            raise RuntimeError(
                "random_from_to_impl handles only integral, floating-point and boolean types"
            )
        hi = _random_max(npd)
        _check_bounds(frm, hi, npd, stacklevel=3)
        if hi >= (1 << 63) - 1:
            r = g._integers(frm, hi, shape, np.int64)  # [0, 2^63 - 1): the top value is skipped
        else:
            r = g._integers(frm, hi + 1, shape, np.int64)
    else:
        frm, to = _int_range(frm, int(to), npd)
        r = g._integers(frm, to, shape, np.int64)
    return _fill_(self, r.astype(npd), f"RandomBackward{which}")


def exponential_(self, lambd=1.0, *, generator=None) -> Tensor:
    """Fill with exponential samples of rate ``lambd``."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
    npd = self._data.dtype
    if npd.kind not in "fV":
        if self._data.size == 0:
            return self
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {_sname(npd)}"
        )
    e = _self_gen(self, generator, "exponential_")._exponential(self._data.shape, npd)
    return _fill_(self, e / lambd if lambd != 1 else e, "ExponentialBackward0")


def geometric_(self, p, *, generator=None) -> Tensor:
    """Fill with geometric samples: trials until the first success (support 1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
    if self._data.dtype.kind in "bc":
        if self._data.size == 0:
            return self
        raise NotImplementedError(
            f"\"geometric_cpu\" not implemented for '{_sname(self._data.dtype)}'"
        )
    e = _self_gen(self, generator, "geometric_")._exponential(self._data.shape, np.float64)
    xp = module_for(self.device)
    # P(X > k) = (1-p)^k: X = ceil(E / -log(1-p)) with E ~ Exp(1)
    r = xp.maximum(xp.ceil(e / -math.log1p(-p)), 1)
    return _fill_(self, r.astype(self._data.dtype), "GeometricBackward0")


def log_normal_(self, mean=1.0, std=2.0, *, generator=None) -> Tensor:
    """Fill with exp(N(mean, std^2)) samples."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    npd = self._data.dtype
    if npd.kind not in "fV":
        if self._data.size == 0:
            return self
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{_sname(npd)}'")
    xp = module_for(self.device)
    z = _self_gen(self, generator, "log_normal_")._normal(self._data.shape, npd)
    return _fill_(self, xp.exp(z * std + mean), "LogNormalBackward0")


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None) -> Tensor:
    """Fill with Cauchy samples: median + sigma * tan(pi * (u - 1/2))."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
    npd = self._data.dtype
    if npd.kind not in "fV":
        raise RuntimeError(
            "Cauchy distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {_cname(npd)}"
        )
    xp = module_for(self.device)
    u = _self_gen(self, generator, "cauchy_")._uniform(self._data.shape, np.float64)
    return _fill_(
        self, (median + sigma * xp.tan(math.pi * (u - 0.5))).astype(npd), "CauchyBackward0"
    )


def _install():
    for f in (
        uniform_,
        normal_,
        bernoulli_,
        random_,
        exponential_,
        geometric_,
        log_normal_,
        cauchy_,
    ):
        setattr(Tensor, f.__name__, f)


_install()
