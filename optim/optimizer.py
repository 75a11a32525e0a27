"""Optimizer: the base class of every ember.optim optimizer (torch.optim.Optimizer)."""

from __future__ import annotations

import math
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from itertools import chain
from typing import Any, NamedTuple

import numpy as np

from ..core.device import array_module
from ..core.dtype import float32, float64, get_default_dtype
from ..core.registry import NonStridedError
from ..core.tensor import Tensor, _wrap
from ..nn.modules.module import RemovableHandle, _add_hook

__all__ = [
    "Optimizer",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
]

_GLOBAL_PRE_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_POST_HOOKS: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """A hook ``hook(optimizer, args, kwargs)`` run before every optimizer's step."""
    return _add_hook(_GLOBAL_PRE_HOOKS, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """A hook ``hook(optimizer, args, kwargs)`` run after every optimizer's step."""
    return _add_hook(_GLOBAL_POST_HOOKS, hook)


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return obj.type()
    m = type(obj).__module__
    return type(obj).__qualname__ if m in ("builtins", None) else f"{m}.{type(obj).__qualname__}"


def _val(x) -> float:
    """A python float from a float or a one-element tensor (tensor learning rates)."""
    return float(x) if isinstance(x, Tensor) else x


_STEPPING: list = [None]  # the optimizer whose step runs now (for its sparse-gradient rule)


def _with_hooks(step):
    def wrapper(self, *args, **kwargs):
        if self.__dict__.get("_in_step"):  # a subclass's step calling super().step(): hooks once
            return step(self, *args, **kwargs)
        self._in_step = True
        outer = _STEPPING[0]
        _STEPPING[0] = self
        try:
            return _run_hooked(step, self, args, kwargs)
        finally:
            self._in_step = False
            _STEPPING[0] = outer

    wrapper.__wrapped__ = step
    wrapper.__name__ = step.__name__
    wrapper.__doc__ = step.__doc__
    wrapper._ember_hooked = True
    return wrapper


def _run_hooked(step, self, args, kwargs):
    """Global and per-optimizer step pre-hooks, the step, then the post-hooks. As torch's,
    the hooks' ``args`` are the step's positional arguments with the optimizer first (a
    pre-hook's new args replace them all, the optimizer included)."""
    pres, posts = self._optimizer_step_pre_hooks, self._optimizer_step_post_hooks
    with_self = bool(_GLOBAL_PRE_HOOKS or pres or posts or _GLOBAL_POST_HOOKS)
    if with_self:
        args = (self, *args)
    for pre in chain(_GLOBAL_PRE_HOOKS.values(), pres.values()):
        res = pre(self, args, kwargs)
        if res is not None:
            if not (isinstance(res, tuple) and len(res) == 2):
                raise RuntimeError(
                    f"{step} must return None or a tuple of (new_args, new_kwargs), but got {res}."
                )
            args, kwargs = res
    swapped = _complex_as_real(self)
    try:
        out = step(*args, **kwargs) if with_self else step(self, *args, **kwargs)
    finally:
        if swapped:
            _real_as_complex(self, swapped)
    self._opt_called = True
    for post in chain(posts.values(), _GLOBAL_POST_HOOKS.values()):
        post(self, args, kwargs)
    return out


def _as_real(a):
    """The float view of complex array ``a`` (real and imaginary parts interleaved on the last
    axis, 0-d as one pair), or None when its layout cannot be viewed so."""
    if a.ndim == 0:
        a = a.reshape(1)
    try:
        return a.view(a.real.dtype)
    except ValueError:  # a non-contiguous last axis
        return None


def _complex_as_real(opt) -> list:
    """torch steps a complex parameter as its view_as_real: each real and imaginary part is a
    parameter of its own (Adam's second moment, Rprop's signs...). Here the complex parameters,
    their gradients and their complex state take float views for the step; returns what to
    restore: (tensor, complex dtype, shape) per swapped tensor, state made during the step
    included (``_real_as_complex``)."""
    swapped: list = []
    if not opt._complex_as_real:
        return swapped
    for group in opt.param_groups:
        for p in group["params"]:
            d = p._data
            if d.dtype.kind != "c":
                continue
            if p._grad is not None:
                err = opt._complex_error(group, p)
                if err is not None:
                    _real_as_complex(opt, swapped)  # the parameters viewed so far, restored
                    raise err
            rd = _as_real(d)
            if rd is None:
                continue
            todo = [(p, rd)]
            g = p._grad
            if g is not None:
                try:
                    gd = g._data
                except NonStridedError:  # a sparse gradient stays as it is
                    gd = None
                if gd is not None and gd.dtype.kind == "c" and gd.shape == d.shape:
                    rg = _as_real(gd)
                    if rg is not None:
                        todo.append((g, rg))
            for v in opt.state.get(p, {}).values():
                if isinstance(v, Tensor) and v._data.dtype.kind == "c" and v.shape == p.shape:
                    rv = _as_real(v._data)
                    if rv is not None:
                        todo.append((v, rv))
            for t, r in todo:
                swapped.append((t, t._data.dtype, t._data.shape))
                t._data = r
            swapped.append((p, None, d.shape))  # marks p: its new state is converted back
    return swapped


def _real_as_complex(opt, swapped: list) -> None:
    """Undo ``_complex_as_real``: complex arrays again (the float views' updates are theirs),
    and the state a first step created from the float view of a parameter made complex."""
    done = set()
    for t, cdt, shape in swapped:
        if cdt is None:  # a parameter's marker (after its own entries): state made in the step
            rshape = _as_real(t._data).shape
            real_dt = t._data.real.dtype
            for v in opt.state.get(t, {}).values():
                new = isinstance(v, Tensor) and id(v) not in done
                if new and v._data.shape == rshape and v._data.dtype == real_dt:
                    v._data = v._data.view(t._data.dtype).reshape(shape)
                    done.add(id(v))
            continue
        t._data = t._data.view(cdt).reshape(shape)
        done.add(id(t))


def _zeros(p: Tensor) -> Tensor:
    """Optimizer state like ``p``: same dtype, device and names (spec 4.9)."""
    return _wrap(array_module(p._data).zeros_like(p._data), p._names)


def _full(p: Tensor, v: float) -> Tensor:
    xp = array_module(p._data)
    return _wrap(xp.full_like(p._data, v), p._names)


def _scalar(v: float) -> Tensor:
    """A 0-dim state tensor (torch keeps ``step`` and similar counters as tensors): float32, or
    float64 while that is the default dtype (torch's _get_scalar_dtype)."""
    wide = get_default_dtype() is float64
    return _wrap(np.array(v, dtype=np.float64 if wide else np.float32))


def _bump(t: Tensor) -> None:
    t._ver[0] += 1


def _lerp_(xp, a, b, w: float) -> None:
    """a.lerp_(b, w) in place, with torch's two formulas (exact at both ends)."""
    if abs(w) < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


def _half(a) -> bool:
    """Whether ``a`` is float16 or bfloat16 (numpy's bfloat16 is kind ``V``): such parameters
    update in float32, rounded where torch's single-tensor loop rounds (see ``_Half``)."""
    return a.dtype.itemsize == 2 and a.dtype.kind in "fV"


class _Half:
    """torch's arithmetic on a 16-bit tensor of dtype ``dt``, on float32 arrays: every in-place
    op computes in float32 and rounds its result once to ``dt`` (``r``); an ``add``'s alpha or
    scalar operand is first rounded to ``dt`` (``alpha``), and so is a 0-d float32 tensor
    operand (``F``), while ``addcmul``/``addcdiv``/``div`` scalars stay float32 (``s``), and
    so do ``mul_`` multipliers except in the foreach path (``mul``, which rounds them like an
    alpha). Plain numpy on the 16-bit arrays would round each temporary instead. Used by the
    16-bit paths of Adam/AdamW, RMSprop, Adagrad, NAdam, Adamax, RAdam, Adadelta and ASGD."""

    __slots__ = ("dt", "fe")

    def __init__(self, dt, foreach: bool = False):
        self.dt = dt
        self.fe = foreach

    def r(self, a):
        return a.astype(self.dt).astype(np.float32)

    def alpha(self, x: float):
        return np.float32(self.dt.type(x))

    @staticmethod
    def s(x: float):
        return np.float32(x)

    def mul(self, x: float):
        return np.float32(self.dt.type(x)) if self.fe else np.float32(x)

    @staticmethod
    def f(a):
        return a.astype(np.float32)

    def F(self, x: float):
        """A 0-d float32 tensor's value as an operand: rounded to ``dt`` (a tensor of more
        dimensions sets the result dtype)."""
        return np.float32(self.dt.type(np.float32(x)))

    def addcmul(self, a, b, c, value: float):
        """``a.addcmul_(b, c, value=value)`` on float32 arrays, rounded to ``dt`` (see
        ``addcmul32``)."""
        return self.r(self.addcmul32(a, b, c, value))

    @staticmethod
    def addcmul32(a, b, c, value: float):
        """``a.addcmul_(b, c, value=value)`` on float32 arrays, in float32: torch scales ``b``
        and then adds its product with ``c`` to ``a`` in one fused step."""
        bv = b * np.float32(value)
        return (a.astype(np.float64) + bv.astype(np.float64) * c).astype(np.float32)

    def lerp(self, a, b, w: float):
        """``a.lerp_(b, w)`` on float32 ``a``, ``b``, rounded to ``dt`` (see ``lerp32``)."""
        return self.r(self.lerp32(a, b, w))

    @staticmethod
    def lerp32(a, b, w: float):
        """``a.lerp_(b, w)`` on float32 ``a``, ``b``, in float32: torch's kernel multiplies and
        adds in one fused step (one rounding to float32), which float64 arithmetic reproduces
        (the product of two float32 values is exact in it)."""
        d = (b - a).astype(np.float64)
        if abs(w) < 0.5:
            out = a.astype(np.float64) + np.float64(np.float32(w)) * d
        else:
            out = b.astype(np.float64) - np.float64(np.float32(1 - w)) * d
        return out.astype(np.float32)

    def moments(self, d, g, m, v, lr: float, wd: float, dec: bool, beta1: float, beta2: float):
        """The Adam family's first steps on 16-bit parameter ``d`` with gradient ``g`` (float32):
        weight decay (decoupled: ``d`` scaled in place; else added to the gradient), then the
        moments ``m``, ``v`` (16-bit arrays) updated as torch's ``lerp_``/``mul_``/``addcmul_``.
        Returns the gradient used and the new moments as float32 (``m``, ``v`` not yet stored)."""
        if wd:
            if dec:
                d[...] = self.f(d) * self.mul(1 - lr * wd)
            else:
                g = self.r(g + self.alpha(wd) * self.f(d))
        mf = self.lerp(self.f(m), g, 1 - beta1)
        vf = self.addcmul(self.r(self.f(v) * self.mul(beta2)), g, g, 1 - beta2)
        return g, mf, vf


class Optimizer:
    """Base class of optimizers: holds param_groups (each a dict with 'params' and its options)
    and per-parameter ``state``; subclasses implement ``step``."""

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        st = cls.__dict__.get("step")
        if st is not None and not getattr(st, "_ember_hooked", False):
            cls.step = _with_hooks(st)

    # complex parameters step as float views of their real and imaginary parts (torch's
    # view_as_real), unless _complex_as_real is False (the optimizer calls the model: LBFGS)
    # or _complex_msg (or _complex_error) refuses them
    _complex_as_real = True
    _complex_msg: str | None = None

    # sparse gradients: refused with this message, unless _sparse_wd_msg is set (the optimizer
    # takes them, and refuses them with that message when a group has weight decay)
    _sparse_msg = "{} does not support sparse gradients"
    _sparse_wd_msg: str | None = None

    # capturable=True steps only parameters on a graph-capturing device (cuda); a cpu parameter
    # fails the step as torch's does. The message names the tensors checked and the devices
    # allowed, per implementation: (single-tensor, foreach)
    _capturable_what = ("params and state_steps", "params and state_steps")
    _capturable_xla = (True, False)
    # a differentiable foreach step is refused (AssertionError) unless the optimizer's foreach
    # path is differentiable (SGD's); Adam checks the device first
    _foreach_refuses_autograd = True
    _capturable_first = False

    # what __setstate__ (unpickling, load_state_dict) fills in, as torch's subclasses do for
    # state saved by older versions: the group options set when a group lacks them, and the
    # per-parameter counters made float32 0-dim tensors when saved as Python numbers
    _setstate_group_defaults: tuple[tuple[str, Any], ...] = ()
    _setstate_tensor_state: tuple[str, ...] = ()

    def __init__(self, params, defaults: dict[str, Any]):
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_typename(params)}"
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for k in (
            "step_pre",
            "step_post",
            "state_dict_pre",
            "state_dict_post",
            "load_state_dict_pre",
            "load_state_dict_post",
        ):
            self.__dict__.setdefault(f"_optimizer_{k}_hooks", OrderedDict())
        self.defaults.setdefault("differentiable", False)
        fill, counters = self._setstate_group_defaults, self._setstate_tensor_state
        for group in self.param_groups:
            for k, v in fill:
                group.setdefault(k, v)
            for p in group["params"] if counters else ():
                st = self.state.get(p)
                for k in counters if st else ():
                    if not isinstance(st[k], Tensor):
                        st[k] = _scalar(float(st[k]))

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n"
            s += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (with its own options) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        if any(isinstance(p, tuple) for p in param_group["params"]):
            # named parameters: (name, tensor) pairs, as from Module.named_parameters()
            pairs = param_group["params"]
            param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in pairs]
            if not all(isinstance(p, tuple) for p in pairs):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = [p[0] for p in pairs]
        if self.param_groups and (
            ("param_names" in param_group) != ("param_names" in self.param_groups[0])
        ):
            kind = "with" if "param_names" in param_group else "without"
            raise ValueError(
                "all optimizer param groups should be with/without names. "
                f"cannot add param group {kind} names to the optimizer"
            )
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + _typename(p)
                )
            if not self.defaults.get("differentiable", None) and not (
                p._grad_fn is None or getattr(p, "retains_grad", False)
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            import warnings

            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                "more information",
                stacklevel=3,
            )
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if not seen.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ grads
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized parameters (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    # the same gradient tensor, cut from its graph (torch's detach_) or no
                    # longer requiring grad, is zeroed in place
                    if g._grad_fn is not None:
                        g.detach_()
                    elif g.requires_grad:
                        g.requires_grad = False
                    try:
                        g._data[...] = 0
                        _bump(g)
                    except NonStridedError:  # a sparse gradient: no entries left
                        g.zero_()

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` before each step."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None`` after each step."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend=prepend)

    def register_state_dict_post_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend=prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend=prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend=prepend)

    # ------------------------------------------------------------------ state dict
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``."""
        for pre in self._optimizer_state_dict_pre_hooks.values():
            pre(self)
        index: dict[int, int] = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        # keys that are not parameters (state loaded for indices the groups lack) stay as they are
        state = {
            (index[id(k)] if isinstance(k, Tensor) else k): v
            for k, v in self.state.items()
            if id(k) in index or not isinstance(k, Tensor)
        }
        sd = {"state": state, "param_groups": groups}
        for post in self._optimizer_state_dict_post_hooks.values():
            r = post(self, sd)
            if r is not None:
                sd = r
        return sd

    @staticmethod
    def _process_value_according_to_param_policy(param, value, key=None, step_f32=False):
        if key == "step":
            # a fused or capturable group's step counter is float32 on the parameter's device
            if step_f32:
                return _copy_tensor(value).to(dtype=float32, device=param.device)
            return _copy_tensor(value)
        # every saved state tensor takes a floating-point parameter's dtype (integer ones too)
        if param._data.dtype.kind == "f" or _half(param._data):
            out = _copy_tensor(value).to(dtype=param.dtype, device=param.device)
        else:
            out = _copy_tensor(value).to(device=param.device)
        if param._names is not None and out._names is None:
            out = _named_like_param(out, param)
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state_dict made by :meth:`state_dict` (state is copied, cast to each
        parameter's dtype and device, ``step`` counters kept as saved)."""
        state_dict = _deepcopy(state_dict)
        for pre in self._optimizer_load_state_dict_pre_hooks.values():
            r = pre(self, state_dict)
            if r is not None:
                state_dict = r
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        # the saved groups' flags decide how their parameters' step counters load
        step_f32 = {
            i for g in saved_groups if g.get("fused") or g.get("capturable") for i in g["params"]
        }

        def cast(param, value, f32, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, key, f32)
            if isinstance(value, dict):
                return {k: cast(param, v, f32, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, f32, key=key) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, k in step_f32)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved = dict(saved)
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        # torch loads through __setstate__: the subclass fills options the saved groups lack
        self.__setstate__({"state": state, "param_groups": new_groups})
        for post in self._optimizer_load_state_dict_post_hooks.values():
            post(self)

    def _complex_error(self, group: dict, p: Tensor) -> Exception | None:
        """The error a step raises for a complex parameter ``p`` of ``group`` that has a
        gradient; None: it steps as its real view."""
        return None if self._complex_msg is None else RuntimeError(self._complex_msg)

    def _check_capturable(self, group: dict, p: Tensor) -> None:
        """torch's AssertionError for a ``capturable`` group's parameter that is on the cpu."""
        if not group.get("capturable") or p.device.type == "cuda":
            return
        i = 1 if group.get("foreach") else 0
        devices = ["cuda", "xpu", "hpu", "privateuseone"] + (
            ["xla"] if self._capturable_xla[i] else []
        )
        raise AssertionError(
            f"If capturable=True, {self._capturable_what[i]} must be on supported devices: "
            f"{devices}."
        )

    def _check_fused(self) -> None:
        """The constructor's checks of ``fused=True`` (SGD, Adam, AdamW, Adagrad)."""
        if not self.defaults.get("fused"):
            return
        if self.defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if self.defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def step(self, closure: Callable | None = None):
        """Perform one optimization step (re-evaluating the loss with ``closure`` if given)."""
        raise NotImplementedError

    # helpers for subclasses
    def _step_state(self, p: Tensor, **init: Callable | None) -> tuple[dict, float]:
        """``p``'s state with its ``step`` advanced, as (state, step). First use creates
        ``step`` and then ``key = factory(p)`` for each factory that is not None."""
        st = self.state[p]
        if not st:
            st["step"] = _scalar(0.0)
            for key, make in init.items():
                if make is not None:
                    st[key] = make(p)
        st["step"]._data += 1
        return st, float(st["step"]._data)

    def _closure_loss(self, closure):
        if closure is None:
            return None
        from ..autograd.grad_mode import enable_grad

        with enable_grad():
            return closure()


def _named_like_param(state: Tensor, param: Tensor) -> Tensor:
    """An unnamed state tensor loaded for a named parameter (a checkpoint written by torch, or
    before the model's axes were named), named like the parameter as the state the optimizer
    creates is (spec 4.9), when it is laid out like it: the same rank, each dim the
    parameter's size or 1 (Adafactor's factored moments). Other state (flat buffers) stays."""
    ps, ss = param._data.shape, state._data.shape
    if len(ss) != len(ps) or any(s not in (p, 1) for s, p in zip(ss, ps)):
        return state
    return state.rename(*param._names)


def _copy_tensor(t: Tensor) -> Tensor:
    out = _wrap(t._data.copy(), t._names)
    return out


def _deepcopy(obj):
    if isinstance(obj, Tensor):
        return _copy_tensor(obj)
    if isinstance(obj, dict):
        return {k: _deepcopy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_deepcopy(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_deepcopy(v) for v in obj)
    return obj


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def _check_adam_args(eps, betas, weight_decay) -> None:
    """The eps / betas / weight_decay checks the Adam family shares (torch's messages)."""
    _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
    _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
    _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")


def _nonneg(v) -> bool:
    return 0.0 <= v  # NaN fails (and a non-number raises torch's TypeError text)


def _check_lr(lr, msg: str = "Invalid learning rate: {}", valid: Callable = _nonneg) -> None:
    """A one-element lr that ``valid`` accepts (torch's comparison differs per optimizer:
    ``0.0 <= lr`` refuses NaN, SGD's ``lr < 0.0`` takes it, SparseAdam refuses 0)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check(valid(_val(lr)), msg.format(lr))


def _adam_defaults(lr, betas, eps, weight_decay, **rest) -> dict[str, Any]:
    """Validate the Adam-family arguments and build ``defaults`` (keys in torch's order)."""
    _check_lr(lr)
    _check_adam_args(eps, betas, weight_decay)
    return {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, **rest}


def _lr_scalar_type(lr) -> type:
    """The type learning-rate arithmetic runs in: a tensor lr's dtype (torch computes
    ``lr / bias_correction`` or ``1 - lr * weight_decay`` as 0-d tensors of lr's dtype, each
    operand rounded to it, which shows in float64 parameters), else Python floats."""
    return lr._data.dtype.type if isinstance(lr, Tensor) else float


def _scalar_pow(b, step: float, t: type):
    """``b ** step`` as torch computes it: on Python floats as Python does, on a 0-d tensor of
    type ``t`` (see ``_lr_scalar_type``) in ``t``: squares and cubes by multiplication, a
    power of 0.5 as a square root."""
    if t is float:
        return b**step
    b = t(b)
    if step == 0.5:
        return np.sqrt(b)
    if step == 2:
        return b * b
    if step == 3:
        return b * b * b
    return t(float(b) ** step)


def _promote_scalar_types(a: type, b: type) -> type:
    """The type an operation on two scalars of ``_lr_scalar_type``'s types runs in: a Python
    float takes the other's type, two 0-d tensors promote."""
    if a is float or b is float:
        return b if a is float else a
    return np.promote_types(a, b).type


def _weight_decay(g, d, lr: float, wd: float, decoupled: bool = False, lr_type: type = float):
    """Weight decay: decoupled shrinks ``d`` in place (the factor computed in ``lr_type``,
    see ``_lr_scalar_type``), else returns ``g + wd * d``."""
    if wd != 0:
        if decoupled:
            t = lr_type
            d *= float(t(1) - t(t(lr) * t(wd)))
        else:
            g = g + wd * d
    return g


def _params_with_grad(group, sparse_rows: bool = False):
    """(param, grad array, xp) for each param of ``group`` that has a gradient. A sparse
    gradient comes as a SparseRows when the caller updates rows (``sparse_rows``), else dense."""
    out = []
    opt = _STEPPING[0]
    # (decided once per group; torch's fused step does not check the device)
    capturable = opt is not None and group.get("capturable", False) and not group.get("fused")
    maximize = group.get("maximize", False)
    differentiable = group.get("differentiable", False)
    foreach_ad = (
        opt is not None
        and differentiable
        and group.get("foreach")
        and opt._foreach_refuses_autograd
        and not (capturable and opt._capturable_first)
    )
    for p in group["params"]:
        g = p._grad
        if g is None:
            continue
        if foreach_ad:
            raise AssertionError("_foreach ops don't support autograd")
        if capturable:
            opt._check_capturable(group, p)
        if differentiable and p.requires_grad and p._grad_fn is None:
            # torch runs a differentiable step with grad mode on: its in-place update of a leaf
            # that requires grad is refused by autograd
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        xp = array_module(p._data)
        try:
            gd = g._data
        except NonStridedError:
            gd = _sparse_grad(group, g, sparse_rows)
        if maximize:
            if type(gd) is SparseRows:
                gd = SparseRows(gd.index, -gd.values)
            else:
                gd = -gd
                if not gd.ndim:  # numpy negates a 0-d array into a scalar
                    gd = xp.asarray(gd)
        out.append((p, gd, xp))
    return out


class SparseRows(NamedTuple):
    """A coalesced sparse gradient as the entries an update touches: ``index`` (one index array
    per sparse dim, for ``param[index]``) and ``values``."""

    index: tuple
    values: Any


def _sparse_grad(group, g, rows: bool):
    """A sparse gradient (embedding(sparse=True)) for an optimizer that takes one (SGD,
    Adagrad): its entries (``rows``: the optimizer updates only them, as torch's sparse update
    does), else its dense array (the dense update equals torch's sparse one: absent rows get a
    zero update and keep their state). Others refuse it with torch's message."""
    opt = _STEPPING[0]
    if opt is None or opt._sparse_wd_msg is None:
        msg = getattr(opt, "_sparse_msg", "{} does not support sparse gradients")
        raise RuntimeError(msg.format(type(opt).__name__))
    if group.get("weight_decay", 0):
        raise RuntimeError(opt._sparse_wd_msg)
    if rows:
        c = g.coalesce()
        return SparseRows(tuple(c._ci._data), c._vals._data)
    return g.to_dense()._data


_sqrt = math.sqrt
