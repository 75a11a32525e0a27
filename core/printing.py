"""Tensor printing in torch's exact format (``tensor([1., 2.], requires_grad=True)``).

The layout rules (width of a column, fixed vs scientific notation, ``...`` summaries, line
wrapping, suffixes) follow torch's observable output, so doctests and logs read the same.
Printing works on any backend: a summarised tensor is cut down on its own device first, and only
the cut-down array is copied to the host.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from . import dtype as _dt

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


class _Options:
    __slots__ = ("edgeitems", "linewidth", "precision", "sci_mode", "threshold")

    def __init__(self) -> None:
        for k, v in _PROFILES["default"].items():
            setattr(self, k, v)
        self.sci_mode = None

    def __repr__(self) -> str:
        return f"PrintOptions({', '.join(f'{k}={getattr(self, k)}' for k in self.__slots__)})"


OPTS = _Options()


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (torch.set_printoptions).

    precision: digits after the decimal point (default 4). threshold: element count above which
    the tensor is summarised with ``...`` (default 1000). edgeitems: items kept at each end of a
    summarised dimension (default 3). linewidth: characters per line (default 80). profile:
    ``'default'``, ``'short'`` or ``'full'`` sets the four above first. sci_mode: True/False forces
    scientific/fixed notation; None (always reset unless given) chooses automatically.
    """
    if profile is not None and profile in _PROFILES:  # like torch, an unknown profile is ignored
        for k, v in _PROFILES[profile].items():
            setattr(OPTS, k, v)
    if precision is not None:
        OPTS.precision = precision
    if threshold is not None:
        OPTS.threshold = threshold
    if edgeitems is not None:
        OPTS.edgeitems = edgeitems
    if linewidth is not None:
        OPTS.linewidth = linewidth
    OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options as a dict (keys of set_printoptions, without profile)."""
    return {k: getattr(OPTS, k) for k in _Options.__slots__}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager: set_printoptions(**kwargs) inside the block, restore afterwards."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ------------------------------------------------------------------------------- formatting
class _Formatter:
    """Decides notation and column width from the values a tensor will show."""

    __slots__ = ("floating", "int_mode", "max_width", "sci_mode")

    def __init__(self, a: np.ndarray) -> None:
        self.floating = a.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        v = a.reshape(-1)
        if not self.floating:
            if v.size:
                # str width grows with |value| within one sign, so the extremes decide it
                self.max_width = max(len(str(x)) for x in (v.min().item(), v.max().item()))
            return
        v = v[np.isfinite(v) & (v != 0)]
        if not v.size:
            return  # nothing but zeros/nan/inf: integer look, and sci_mode is not even consulted
        absv = v.astype(np.float64)
        absv = np.abs(absv)
        lo, hi = float(absv.min()), float(absv.max())
        self.int_mode = bool(np.all(v == np.ceil(v)))
        prec = OPTS.precision
        sci = OPTS.sci_mode
        if sci is None:
            sci = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        self.sci_mode = bool(sci)
        if self.sci_mode:
            self.max_width = _width(v, f"{{:.{prec}e}}", sci=True)
        elif self.int_mode:
            self.max_width = _width(v, "{:.0f}") + 1  # room for the trailing "."
        else:
            self.max_width = _width(v, f"{{:.{prec}f}}")

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                s = f"{{:{self.max_width}.{OPTS.precision}e}}".format(value)
            elif self.int_mode:
                s = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    s += "."
            else:
                s = f"{{:.{OPTS.precision}f}}".format(value)
        else:
            s = f"{value}"
        return (self.max_width - len(s)) * " " + s


def _width(v: np.ndarray, fmt: str, sci: bool = False) -> int:
    """The widest formatted value of nonzero finite ``v`` without formatting every element.

    Within one sign, fixed notation widens monotonically with |x|, so the largest |x| of each sign
    decides; scientific notation also widens for tiny |x| (3-digit exponents), so the smallest |x|
    of each sign is a candidate too.
    """
    cands = []
    for part in (v[v > 0], v[v < 0]):
        if part.size:
            a = np.abs(part)
            cands.append(part[np.argmax(a)])
            if sci:
                cands.append(part[np.argmin(a)])
    return max(len(fmt.format(float(x))) for x in cands)


def _format_val(val, f1: _Formatter, f2: _Formatter | None) -> str:
    if f2 is None:
        return f1.format(val)
    real = f1.format(val.real)
    imag = (f2.format(val.imag) + "j").lstrip()
    # a sign of its own (negative, or +/-0.0 style) joins directly; otherwise add '+'
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(a, cut: bool, indent: int, f1, f2) -> str:
    e = OPTS.edgeitems
    elem_len = f1.width() + 2
    if f2 is not None:
        elem_len += f2.width() + 1
    per_line = max(1, math.floor((OPTS.linewidth - indent) / elem_len))
    if cut and not e:
        data = ["..."]
    elif cut:
        vals = a.tolist()
        data = (
            [_format_val(x, f1, f2) for x in vals[:e]]
            + [" ..."]
            + [_format_val(x, f1, f2) for x in vals[e:]]
        )
    else:
        data = [_format_val(x, f1, f2) for x in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(a, cuts: tuple, indent: int, f1, f2) -> str:
    """``a`` is the (already cut down) host array; ``cuts[d]``: dim d was summarised."""
    nd = a.ndim
    if nd == 0:
        return _format_val(a.item(), f1, f2)
    if nd == 1:
        return _vector_str(a, cuts[0], indent, f1, f2)
    e = OPTS.edgeitems
    if cuts[0]:
        rows = [_nd_str(a[i], cuts[1:], indent + 1, f1, f2) for i in range(e)]
        rows.append("...")
        rows += [_nd_str(a[i], cuts[1:], indent + 1, f1, f2) for i in range(e, 2 * e)]
    else:
        rows = [_nd_str(a[i], cuts[1:], indent + 1, f1, f2) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (nd - 1) + " " * (indent + 1)).join(rows) + "]"


def _host(a) -> np.ndarray:
    """A numpy copy/view of any backend's array (cupy: .get(); ndarray subclasses: base view)."""
    if type(a) is np.ndarray:
        return a
    if hasattr(a, "get") and not isinstance(a, np.ndarray):
        return a.get()
    return np.asarray(a).view(np.ndarray)


def _summarise(a, xp):
    """Cut every dim longer than 2*edgeitems down to its edges, on the array's own device.

    Returns (array, cuts): ``cuts[d]`` says dim d was summarised (printed with ``...``).
    """
    e = OPTS.edgeitems
    cuts = tuple(s > 2 * e for s in a.shape)
    for d, c in enumerate(cuts):
        if c:
            head = a[(slice(None),) * d + (slice(0, e),)]
            tail = a[(slice(None),) * d + (slice(a.shape[d] - e, None),)]
            a = xp.concatenate((head, tail), axis=d)
    return a, cuts


def _body(t, indent: int) -> str:
    from .device import array_module

    a = t._data
    if a.size == 0:
        return "[]"
    if a.size > OPTS.threshold and a.ndim:
        if not OPTS.edgeitems:
            return "[...]"  # torch: every summarised dim shows only "..."
        small, cuts = _summarise(a, array_module(a))
        small = _host(small)
    else:
        small, cuts = _host(a), (False,) * a.ndim
    if small.dtype.kind == "V" or (small.dtype.kind == "f" and small.dtype.itemsize == 2):
        small = small.astype(np.float32)  # float16 / bfloat16 print through float32, like torch
    if small.dtype.kind == "c":
        f1, f2 = _Formatter(small.real), _Formatter(small.imag)
    else:
        f1, f2 = _Formatter(small), None
    return _nd_str(small, cuts, indent, f1, f2)


def _add_suffixes(s: str, suffixes: list, indent: int) -> str:
    parts = [s]
    last = len(s) - s.rfind("\n") + 1
    for suf in suffixes:
        if last + len(suf) + 2 > OPTS.linewidth:
            parts.append(",\n" + " " * indent + suf)
            last = indent + len(suf)
        else:
            parts.append(", " + suf)
            last += len(suf) + 2
    parts.append(")")
    return "".join(parts)


def _is_parameter(cls) -> bool:
    return any(c.__name__ == "Parameter" and c.__module__.startswith("ember.") for c in cls.__mro__)


def tensor_repr(t, tensor_contents: str | None = None) -> str:
    """``repr(t)`` exactly as torch prints it, with ``ember.`` where torch writes ``torch.``."""
    from .device import get_default_device
    from .tensor import Tensor

    cls = type(t)
    plain = cls is Tensor or (cls.__name__ == "Parameter" and _is_parameter(cls))
    prefix = "tensor(" if plain else f"{cls.__name__}("
    indent = len(prefix)
    suffixes = []
    a = t._data
    dev = t.device
    default_dev = get_default_device()
    if dev.type != default_dev.type or (
        dev.type == "cuda" and dev.index != (default_dev.index or 0)
    ):
        suffixes.append(f"device='{dev}'")
    dt = t.dtype
    default = _dt.get_default_dtype()
    if dev.type == "meta":  # no values: torch prints its device, size and any other dtype
        if dev.type == default_dev.type:
            suffixes.append(f"device='{dev}'")
        suffixes.append(f"size={tuple(a.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        body = "..."
    elif a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if not OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if dt not in (default, default.to_complex(), _dt.int64, _dt.bool_):
            suffixes.append(f"dtype={dt!r}")
        body = _body(t, indent)
    if tensor_contents is not None:
        body = tensor_contents
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn._type_name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    names = t._names
    if names is not None and any(n is not None for n in names):
        suffixes.append(f"names={tuple(names)}")
    s = _add_suffixes(prefix + body, suffixes, indent)
    if not plain and _is_parameter(cls):
        s = f"Parameter({s})"
    return s
