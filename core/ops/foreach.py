"""torch's ``_foreach_*`` ops: one op applied to every tensor of a list (what multi-tensor
optimizers use). Out-of-place forms return a tuple of new tensors; in-place forms (trailing ``_``)
update each tensor and return the list.

They are loops over the ember ops, so autograd works as usual. The in-place forms take a fast path
when no graph is recorded (grad mode off, or nothing requires grad): the array module's ufunc
writes straight into each tensor's storage, with no Tensor created per element of the list.
"""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import _state
from ..device import array_module
from ..tensor import Tensor

_SCALARS = (int, float, complex, bool, np.generic)


# ----------------------------------------------------------------------------- checks
def _check_list(name, tensors):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{name}(): argument 'self' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _check_pair(a, b):
    if len(a) != len(b):
        raise RuntimeError(
            f"Tensor lists must have the same number of tensors, got {len(a)} and {len(b)}"
        )


def _others(name, self, other):
    """``other`` (scalar, list of scalars, list of tensors or a tensor) as one value per tensor."""
    if isinstance(other, (*_SCALARS, Tensor)):
        return [other] * len(self)
    if isinstance(other, (list, tuple)):
        if other and all(isinstance(o, Tensor) for o in other):
            _check_pair(self, other)
        elif len(other) != len(self):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return other
    raise TypeError(f"{name}(): argument 'other' must be a Number, a Tensor or a list of them")


def _fast(t: Tensor, o=None) -> bool:
    """True when an in-place update of ``t`` by ``o`` records no graph: raw array math is fine."""
    if t._names is not None or t._data.dtype.kind not in "fc":
        return False
    if _state.enabled and (t.requires_grad or (isinstance(o, Tensor) and o.requires_grad)):
        return False
    if isinstance(o, Tensor):
        return o._names is None and o._data.dtype == t._data.dtype
    return o is None or isinstance(o, (int, float)) and not isinstance(o, bool)


def _raw(o):
    return o._data if isinstance(o, Tensor) else o


def _bump(t: Tensor) -> None:
    t._ver[0] += 1


# ------------------------------------------------------------------------- unary ops
def _unary(name: str, ufunc: str | None):
    def out_of_place(self):
        _check_list(f"_foreach_{name}", self)
        return tuple(getattr(t, name)() for t in self)

    def in_place(self):
        _check_list(f"_foreach_{name}_", self)
        for t in self:
            if ufunc is not None and _fast(t) and t._data.dtype.kind == "f":
                a = t._data
                getattr(array_module(a), ufunc)(a, out=a)
                _bump(t)
            else:
                getattr(t, name + "_")()
        return self

    out_of_place.__name__ = f"_foreach_{name}"
    in_place.__name__ = f"_foreach_{name}_"
    out_of_place.__doc__ = f"[t.{name}() for t in self]."
    in_place.__doc__ = f"t.{name}_() for each t in self."
    return out_of_place, in_place


_UNARY = {
    "abs": "abs", "acos": "arccos", "asin": "arcsin", "atan": "arctan", "ceil": "ceil",
    "cos": "cos", "cosh": "cosh", "erf": None, "erfc": None, "exp": "exp", "expm1": "expm1",
    "floor": "floor", "frac": None, "lgamma": None, "log": "log", "log10": "log10",
    "log1p": "log1p", "log2": "log2", "neg": "negative", "reciprocal": "reciprocal",
    "round": None, "rsqrt": None, "sigmoid": None, "sign": None, "sin": "sin", "sinh": "sinh",
    "sqrt": "sqrt", "tan": "tan", "tanh": "tanh", "trunc": "trunc",
}  # fmt: skip

__all__ = []
for _n, _uf in _UNARY.items():
    _f, _fi = _unary(_n, _uf)
    globals()[_f.__name__] = _f
    globals()[_fi.__name__] = _fi
    __all__ += [_f.__name__, _fi.__name__]  # noqa: PLE0604


# ------------------------------------------------------------------------ binary ops
def _binary(name: str, ufunc: str | None, alpha: bool = False):
    """``name(t, other[, alpha])`` for each t; in place through ``ufunc`` when no graph."""
    method = name

    scalar_method = _SCALAR_METHOD.get(name, name)

    def out_of_place(self, other, **kw):
        _check_list(f"_foreach_{name}", self)
        others = _others(f"_foreach_{name}", self, other)
        f, fs = getattr(Tensor, method), getattr(Tensor, scalar_method)
        return tuple(
            (fs if isinstance(o, _SCALARS) else f)(t, o, **kw) for t, o in zip(self, others)
        )

    def in_place(self, other, **kw):
        _check_list(f"_foreach_{name}_", self)
        others = _others(f"_foreach_{name}_", self, other)
        a_ = kw.get("alpha", 1) if alpha else 1
        for t, o in zip(self, others):
            if ufunc is not None and _fast(t, o) and not isinstance(a_, complex):
                a = t._data
                xp = array_module(a)
                v = _raw(o)
                if a_ != 1:
                    v = v * a_ if isinstance(v, (int, float)) else xp.multiply(v, a_)
                try:
                    getattr(xp, ufunc)(a, v, out=a)
                except ValueError:
                    getattr(t, method + "_")(o, **kw)  # broadcast error: torch's message
                    continue
                _bump(t)
            elif hasattr(Tensor, method + "_"):
                getattr(t, method + "_")(o, **kw)
            elif isinstance(o, _SCALARS):
                getattr(t, scalar_method + "_")(o, **kw)
            else:
                t.copy_(getattr(Tensor, method)(t, o, **kw))
        return self

    out_of_place.__name__ = f"_foreach_{name}"
    in_place.__name__ = f"_foreach_{name}_"
    out_of_place.__doc__ = f"[t.{name}(o) for t, o in zip(self, other)]."
    in_place.__doc__ = f"t.{name}_(o) for t, o in zip(self, other)."
    return out_of_place, in_place


_SCALAR_METHOD = {"maximum": "clamp_min", "minimum": "clamp_max"}  # max(t, scalar)
_BINARY = {
    "add": ("add", True), "sub": ("subtract", True), "mul": ("multiply", False),
    "div": ("true_divide", False), "maximum": ("maximum", False), "minimum": ("minimum", False),
    "clamp_min": ("maximum", False), "clamp_max": ("minimum", False), "pow": (None, False),
}  # fmt: skip

for _n, (_uf, _al) in _BINARY.items():
    _f, _fi = _binary(_n, _uf, _al)
    globals()[_f.__name__] = _f
    globals()[_fi.__name__] = _fi
    __all__ += [_f.__name__, _fi.__name__]  # noqa: PLE0604

_foreach_pow_list = globals()["_foreach_pow"]


def _foreach_pow(self, exponent):  # a scalar base is allowed too
    """[t ** e for t, e in zip(self, exponent)]; ``self`` may be a scalar base."""
    if isinstance(self, _SCALARS):
        from .arithmetic import pow as _pow

        _check_list("_foreach_pow", exponent)
        return tuple(_pow(self, e) for e in exponent)
    return _foreach_pow_list(self, exponent)


# ------------------------------------------------------------------- ternary ops
def _scalars3(name, self, value):
    if isinstance(value, Tensor) and value.ndim == 1 and len(self) > 1:
        value = value.tolist()
    return _others(name, self, value)


def _foreach_addcmul(self, tensor1, tensor2, value=1):
    """[t + value * t1 * t2 for ...]."""
    _check_list("_foreach_addcmul", self)
    _check_pair(self, tensor1)
    _check_pair(self, tensor2)
    vs = _scalars3("_foreach_addcmul", self, value)
    return tuple(t.addcmul(a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, vs))


def _foreach_addcdiv(self, tensor1, tensor2, value=1):
    """[t + value * t1 / t2 for ...]."""
    _check_list("_foreach_addcdiv", self)
    _check_pair(self, tensor1)
    _check_pair(self, tensor2)
    vs = _scalars3("_foreach_addcdiv", self, value)
    return tuple(t.addcdiv(a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, vs))


def _addc_(name, self, tensor1, tensor2, value, div):
    _check_list(name, self)
    _check_pair(self, tensor1)
    _check_pair(self, tensor2)
    vs = _scalars3(name, self, value)
    for t, a, b, v in zip(self, tensor1, tensor2, vs):
        if (
            _fast(t, a)
            and _fast(t, b)
            and isinstance(v, (int, float))
            and a._data.shape == b._data.shape == t._data.shape
        ):
            x = t._data
            xp = array_module(x)
            tmp = xp.true_divide(a._data, b._data) if div else xp.multiply(a._data, b._data)
            if v != 1:
                tmp *= v
            xp.add(x, tmp, out=x, casting="unsafe")
            _bump(t)
        elif div:
            t.addcdiv_(a, b, value=v)
        else:
            t.addcmul_(a, b, value=v)
    return self


def _foreach_addcmul_(self, tensor1, tensor2, value=1):
    """t.addcmul_(t1, t2, value) for each t."""
    return _addc_("_foreach_addcmul_", self, tensor1, tensor2, value, False)


def _foreach_addcdiv_(self, tensor1, tensor2, value=1):
    """t.addcdiv_(t1, t2, value) for each t."""
    return _addc_("_foreach_addcdiv_", self, tensor1, tensor2, value, True)


def _foreach_lerp(self, tensors1, weight):
    """[t + w * (end - t) for ...]."""
    _check_list("_foreach_lerp", self)
    _check_pair(self, tensors1)
    ws = _others("_foreach_lerp", self, weight)
    return tuple(t.lerp(e, w) for t, e, w in zip(self, tensors1, ws))


def _foreach_lerp_(self, tensors1, weight):
    """t.lerp_(end, w) for each t."""
    _check_list("_foreach_lerp_", self)
    _check_pair(self, tensors1)
    ws = _others("_foreach_lerp_", self, weight)
    for t, e, w in zip(self, tensors1, ws):
        if _fast(t, e) and isinstance(w, (int, float)) and e._data.shape == t._data.shape:
            x = t._data
            array_module(x).add(x, (e._data - x) * w, out=x, casting="unsafe")
            _bump(t)
        else:
            t.lerp_(e, w)
    return self


# ------------------------------------------------------------------------ the rest
def _foreach_norm(self, ord=2, dtype=None):
    """[vector norm of t for t in self] (0-dim tensors)."""
    from ..linalg import vector_norm

    _check_list("_foreach_norm", self)
    try:
        return tuple(vector_norm(t, ord, dtype=dtype) for t in self)
    except RuntimeError:
        # torch's fused kernel words the +inf norm of an empty tensor its own way (-inf keeps
        # vector_norm's text there too)
        if ord == float("inf") and any(t.numel() == 0 for t in self):
            raise RuntimeError(
                "_foreach_norm cannot compute the infinity norm on an empty tensor because the "
                "operation does not have an identity"
            ) from None
        raise


def _foreach_max(self):
    """[t.max() for t in self]."""
    _check_list("_foreach_max", self)
    return tuple(t.max() for t in self)


def _foreach_powsum(self, ord=2, dtype=None):
    """[sum(|t| ** ord) for t in self]."""
    _check_list("_foreach_powsum", self)
    return tuple((t if dtype is None else t.to(dtype)).abs().pow(ord).sum() for t in self)


def _foreach_mm(self, mat2):
    """[a @ b for a, b in zip(self, mat2)]."""
    _check_list("_foreach_mm", self)
    _check_pair(self, mat2)
    return tuple(a.mm(b) for a, b in zip(self, mat2))


def _foreach_clone(self):
    """[t.clone() for t in self]."""
    _check_list("_foreach_clone", self)
    return tuple(t.clone() for t in self)


def _foreach_copy_(self, src, non_blocking: bool = False):
    """t.copy_(s) for each pair."""
    _check_list("_foreach_copy_", self)
    _check_pair(self, src)
    for t, s in zip(self, src):
        t.copy_(s)
    return self


def _foreach_zero_(self):
    """Fills every tensor with zeros."""
    _check_list("_foreach_zero_", self)
    for t in self:
        if _state.enabled and t.requires_grad and t._grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        if t.requires_grad and _state.enabled:
            t.copy_(t.detach() * 0)
        else:
            t._data[...] = 0
            _bump(t)
    return self


__all__ += [
    "_foreach_addcdiv",
    "_foreach_addcdiv_",
    "_foreach_addcmul",
    "_foreach_addcmul_",
    "_foreach_clone",
    "_foreach_copy_",
    "_foreach_lerp",
    "_foreach_lerp_",
    "_foreach_max",
    "_foreach_mm",
    "_foreach_norm",
    "_foreach_pow",
    "_foreach_powsum",
    "_foreach_zero_",
]
