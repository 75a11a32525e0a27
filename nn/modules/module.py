"""Module: the base class of every layer (parameters, buffers, submodules, hooks, state dicts)."""

from __future__ import annotations

import functools
import itertools
import types
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ...autograd.engine import _check_hook_results
from ...core.meta import warn_load_into_meta
from ...core.ops.conversion import _user_level
from ...core.ops.method_aliases import typename as _typename
from ...core.tensor import Tensor
from ..parameter import Buffer, Parameter, _buffer_persistent, is_lazy

__all__ = [
    "Module",
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]


# ---------------------------------------------------------------------------- removable handles
class RemovableHandle:
    """A handle that removes a hook from the dict(s) it was registered in."""

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]

    def __getstate__(self):
        if self.extra_dict_ref:
            return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))
        return (self.hooks_dict_ref(), self.id)

    def __setstate__(self, state) -> None:
        if state[0] is None:
            self.hooks_dict_ref = weakref.ref(OrderedDict())
        else:
            self.hooks_dict_ref = weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = () if len(state) < 3 else tuple(weakref.ref(d) for d in state[2])

    def __enter__(self) -> RemovableHandle:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# ---------------------------------------------------------------------------- global hooks
_global_buffer_registration_hooks: dict = OrderedDict()
_global_module_registration_hooks: dict = OrderedDict()
_global_parameter_registration_hooks: dict = OrderedDict()
_global_backward_pre_hooks: dict = OrderedDict()
_global_backward_hooks: dict = OrderedDict()
_global_is_full_backward_hook: bool | None = None
_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()
_global_forward_hooks_always_called: dict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = OrderedDict()


class _Globals:
    # one flag read by Module.__call__ so the no-hook path tests a single attribute
    any_hooks = False


def _refresh_global_flag() -> None:
    _Globals.any_hooks = bool(
        _global_backward_pre_hooks
        or _global_backward_hooks
        or _global_forward_pre_hooks
        or _global_forward_hooks
    )


class _GlobalHandle(RemovableHandle):
    # removing a global hook also refreshes the fast-path flag
    def remove(self) -> None:
        super().remove()
        _refresh_global_flag()


def _add_hook(
    hooks: dict,
    hook: Callable,
    *flags: tuple[dict, bool],
    prepend: bool = False,
    handle_cls: type = RemovableHandle,
) -> RemovableHandle:
    """Store ``hook`` in ``hooks`` under a fresh handle; each ``(dict, on)`` flag marks the
    hook in that side dict when ``on`` (the handle removes it from there too); a
    ``_GlobalHandle`` also refreshes the fast-path flag."""
    handle = handle_cls(hooks, extra_dict=[d for d, _ in flags] if flags else None)
    hooks[handle.id] = hook
    for d, on in flags:
        if on:
            d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    if handle_cls is _GlobalHandle:
        _refresh_global_flag()
    return handle


def _check_backward_mode(current: bool | None, full: bool, where: str) -> bool:
    # regular and full backward hooks do not mix; returns the mode to record
    if current is (not full):
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks " + where
        )
    return full


_GLOBAL_WHERE = "as a global Module hook. Please use only one of them."
_MODULE_WHERE = "on a single Module. Please use only one of them."


def _run_registration_hooks(hooks: dict, module, name: str, value):
    # each hook may return a replacement for the value being registered
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """Register a hook ``hook(module, name, buffer) -> None or new buffer`` run by every
    ``register_buffer``."""
    return _add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """Register a hook ``hook(module, name, submodule) -> None or new submodule`` run by every
    ``register_module``."""
    return _add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """Register a hook ``hook(module, name, param) -> None or new param`` run by every
    ``register_parameter``."""
    return _add_hook(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Register a forward pre-hook common to all modules (runs before each module's own)."""
    return _add_hook(_global_forward_pre_hooks, hook, handle_cls=_GlobalHandle)


def register_module_forward_hook(
    hook: Callable, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Register a forward hook common to all modules (runs before each module's own)."""
    return _add_hook(
        _global_forward_hooks,
        hook,
        (_global_forward_hooks_always_called, always_call),
        (_global_forward_hooks_with_kwargs, with_kwargs),
        handle_cls=_GlobalHandle,
    )


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """Register a (deprecated, non-full) backward hook common to all modules."""
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _check_backward_mode(
        _global_is_full_backward_hook, False, _GLOBAL_WHERE
    )
    return _add_hook(_global_backward_hooks, hook, handle_cls=_GlobalHandle)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """Register a backward pre-hook common to all modules."""
    return _add_hook(_global_backward_pre_hooks, hook, handle_cls=_GlobalHandle)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """Register a full backward hook common to all modules."""
    global _global_is_full_backward_hook
    _global_is_full_backward_hook = _check_backward_mode(
        _global_is_full_backward_hook, True, _GLOBAL_WHERE
    )
    return _add_hook(_global_backward_hooks, hook, handle_cls=_GlobalHandle)


# ---------------------------------------------------------------------------- backward hooks
def _backward_hook_function():
    from ...autograd.function import Function

    class BackwardHookFunction(Function):
        """Identity on tensors; its backward runs the module's full backward (pre-)hooks."""

        @staticmethod
        def forward(ctx, hook_fn, materialize, *args):
            ctx.hook_fn = hook_fn
            ctx.set_materialize_grads(materialize)
            # a tensor that does not require grad passes as a non-differentiable alias
            out = tuple(a if a.requires_grad else a.detach() for a in args)
            ctx.mark_non_differentiable(*[o for o in out if not o.requires_grad])
            return out

        @staticmethod
        def backward(ctx, *grads):
            res = ctx.hook_fn(grads)
            return (None, None, *(grads if res is None else res))

    return BackwardHookFunction


_BHF = None


_NON_FULL_ADVICE = (
    " is deprecated and will be removed in future versions. This hook will be missing some "
)
_FULL_DOC = " Please use register_full_backward_hook to get the documented behavior."


def _warn_non_full_backward_hook(raw_args: tuple, hooked_args: tuple, result) -> None:
    """torch's FutureWarnings for a deprecated (non-full) backward hook on a module whose forward
    torch's old hook semantics (the output node's own inputs and outputs) misdescribe. ember runs
    such hooks with the full-hook machinery (``hooked_args`` are the inputs the forward saw), so
    the graph is read through it: what feeds the output node is traced back to ``raw_args``."""
    first = result
    while not isinstance(first, Tensor):
        if isinstance(first, dict):
            first = next((v for v in first.values() if isinstance(v, Tensor)), None)
        elif isinstance(first, (list, tuple)) and first:
            first = first[0]
        else:
            return
    node = first._grad_fn
    if node is None:
        return
    outs = (result,) if isinstance(result, Tensor) else result
    msg = None
    if not (isinstance(outs, tuple) and all(isinstance(r, Tensor) for r in outs)):
        msg = (
            "Using non-full backward hooks on a Module that does not return a single Tensor or a "
            "tuple of Tensors" + _NON_FULL_ADVICE + "of the grad_output." + _FULL_DOC
        )
    elif not all(isinstance(a, Tensor) for a in raw_args):
        msg = (
            "Using non-full backward hooks on a Module that does not take as input a single "
            "Tensor or a tuple of Tensors" + _NON_FULL_ADVICE + "of the grad_input." + _FULL_DOC
        )
    else:
        out_nodes = {r._grad_fn for r in outs if r._grad_fn is not None}
        if len(out_nodes) > 1:
            msg = (
                "Using a non-full backward hook when outputs are generated by different autograd "
                "Nodes" + _NON_FULL_ADVICE + "grad_output." + _FULL_DOC
            )
        elif node not in out_nodes:
            msg = (
                "Using a non-full backward hook when outputs are nested in python data structure"
                + _NON_FULL_ADVICE
                + "grad_output."
            )
        else:
            leaf = object()  # an input's AccumulateGrad node: never one of the inputs' grad_fns
            seen_as = {}  # (node, output) the forward read an input from -> the raw input's node
            for raw, hooked in zip(raw_args, hooked_args):
                fn = raw._grad_fn
                if fn is None:
                    fn = leaf if raw.requires_grad else None
                seen_as[(id(hooked._grad_fn), hooked.output_nr)] = fn
            feeds = {seen_as.get((id(n), i), n) for n, i in node.next_functions}
            if feeds != {a._grad_fn for a in raw_args if a._grad_fn is not None}:
                msg = (
                    "Using a non-full backward hook when the forward contains multiple autograd "
                    "Nodes" + _NON_FULL_ADVICE + "grad_input." + _FULL_DOC
                )
    if msg is not None:
        warnings.warn(msg, FutureWarning, stacklevel=4)


class _BackwardHook:
    """Wires a module's full backward hooks around one call: an identity Function on the
    inputs (its backward sees grad_input) and one on the outputs (its backward sees
    grad_output), like torch's BackwardHook."""

    def __init__(self, module, user_hooks, user_pre_hooks, only_non_full: bool = False) -> None:
        self.user_hooks = user_hooks
        # torch's deprecated non-full hooks hang on the output's node: no firing-early warning
        self.only_non_full = only_non_full
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _apply_on_tensors(self, fn, args, materialize):
        global _BHF
        if _BHF is None:
            _BHF = _backward_hook_function()
        from ...autograd.grad_mode import is_grad_enabled

        tensors_idx = []
        tensors = []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and is_grad_enabled()):
            return args, None
        new_tensors = _BHF.apply(fn, materialize, *tensors)
        if not isinstance(new_tensors, tuple):
            new_tensors = (new_tensors,)
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        if type(args) is tuple:
            out = tuple(arg_list)
        else:
            out = type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        # named `hook` as torch's node hook is: its checks of the replaced grads name it
        def hook(grad_input):
            if self.grad_outputs is None:
                # the gradient reached the inputs without passing through the outputs
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, "
                        f"got {len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            new = self._unpack_none(self.input_tensors_index, res)
            return _check_hook_results(hook, tuple(grad_input), new)

        res, input_idx = self._apply_on_tensors(hook, args, True)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        def fn(grad_output):
            self.grad_outputs = self._pack_with_none(
                self.output_tensors_index, grad_output, self.n_outputs
            )
            if self.user_pre_hooks:
                expected_len = len(self.grad_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                    if hook_grad_outputs is None:
                        continue
                    actual_len = len(hook_grad_outputs)
                    if actual_len != expected_len:
                        raise RuntimeError(
                            "Backward pre hook returned an invalid number of grad_output, "
                            f"got {actual_len}, but expected {expected_len}"
                        )
                    self.grad_outputs = hook_grad_outputs
            local = self.grad_outputs
            if self.input_tensors_index is None:
                # no input requires grad: the hooks run now, with None for every grad_input
                if not self.only_non_full:
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect "
                        "to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                        "#torch.nn.Module.register_full_backward_hook for more details.",
                        stacklevel=_user_level(),  # the user's backward() call, as torch's
                    )
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (
                        isinstance(res, tuple) and all(el is None for el in res)
                    ):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires "
                            "gradient should always return None or None for all gradients."
                        )
                self.grad_outputs = None
            return tuple(local[i] for i in self.output_tensors_index)

        is_tuple = True
        if not isinstance(args, tuple):
            args = (args,)
            is_tuple = False
        res, output_idx = self._apply_on_tensors(fn, args, False)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        if not is_tuple:
            res = res[0]
        return res


def _addindent(s_: str, num_spaces: int) -> str:
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line for line in s]
    return first + "\n" + "\n".join(s)


def _forward_unimplemented(self, *input: Any) -> None:
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class _WrappedHook:
    # a hook that receives its module (kept through a weakref so the module can be freed)
    def __init__(self, hook: Callable, module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = False
        if module is not None:
            self.module = weakref.ref(module)
            self.with_module = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict:
        result = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            result["module"] = self.module()
        return result

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _deprecated_module(message: str) -> Callable[[type], type]:
    """torch's ``@deprecated(message, category=FutureWarning)`` on a layer class: construction
    warns before the arguments are bound, so a bad call warns too."""

    def wrap(cls: type) -> type:
        def __new__(klass, *args: Any, **kwargs: Any):
            warnings.warn(message, FutureWarning, stacklevel=2)
            return object.__new__(klass)

        cls.__new__ = staticmethod(__new__)
        return cls

    return wrap


def _name_init(cls: type) -> None:
    """Give ``cls`` a copy of its ``__init__`` whose code is named ``<cls>.__init__``: Python's
    own argument errors (missing/extra arguments) then name the layer, as torch's do, where
    ember shares one ``__init__`` between layers that torch writes out one by one."""
    init = cls.__init__
    code = init.__code__
    if not hasattr(code, "co_qualname"):  # Python 3.10 names no class in these errors
        return
    own = types.FunctionType(
        code.replace(co_qualname=f"{cls.__name__}.__init__"),
        init.__globals__,
        init.__name__,
        init.__defaults__,
        init.__closure__,
    )
    own.__kwdefaults__ = init.__kwdefaults__
    own.__doc__ = init.__doc__
    own.__qualname__ = f"{cls.__qualname__}.__init__"
    own.__module__ = init.__module__
    cls.__init__ = own


# ---------------------------------------------------------------------------- Module
class Module:
    """Base class for all neural network modules (torch.nn.Module)."""

    T_destination = TypeVar("T_destination", bound=dict[str, Any])
    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False
    _compiled_call_impl = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # an ember base marked ``_init_per_layer`` shares the __init__ that torch writes out in
        # each of its layers: the layers inheriting it are named in argument errors, as torch's
        # (a private intermediate base passes the mark on: torch's _ReflectionPadNd has none)
        if (
            "__init__" in cls.__dict__
            or cls.__name__.startswith("_")
            or not cls.__module__.startswith("ember.")
        ):
            return
        owner = next(b for b in cls.__mro__ if "__init__" in b.__dict__)
        if owner.__dict__.get("_init_per_layer", False):
            _name_init(cls)

    forward: Callable[..., Any] = _forward_unimplemented

    # ------------------------------------------------------------------ registration
    def _check_new_tensor_name(self, kind: str, store: str, name) -> None:
        # torch's checks (and messages) on the name given to register_buffer/_parameter
        if store not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[store]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter, e.g. running statistics)."""
        self._check_new_tensor_name("buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        tensor = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (``None`` registers an absent optional parameter such as a bias)."""
        self._check_new_tensor_name("parameter", "_parameters", name)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param._grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' "
                "as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        param = _run_registration_hooks(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as the attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        module = _run_registration_hooks(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is this module)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")  # noqa: TRY004
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless ``strict``, add) the submodule at dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(  # noqa: TRY004
                "`module` is not an nn.Module, found " + str(type(module))
            )
        if len(atoms) == 1:
            parent: Module = self
        else:
            parent = self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            mod = getattr(parent, atoms[-1])
            if not isinstance(mod, Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")  # noqa: TRY004
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def get_extra_state(self) -> Any:
        """Extra state saved in ``state_dict`` under ``_extra_state`` (override with
        ``set_extra_state``)."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore what ``get_extra_state`` saved."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    # ------------------------------------------------------------------ conversion
    def _apply(self, fn: Callable, recurse: bool = True) -> Module:
        from ...autograd.grad_mode import no_grad
        from ...future_ import _FLAGS

        if recurse:
            for module in self.children():
                module._apply(fn)
        # ember.__future__.set_overwrite_module_params_on_conversion(True) (unless swapping):
        # each converted parameter, and its gradient, is a new object; the old ones stay as they were
        overwrite = _FLAGS["overwrite"] and not _FLAGS["swap"]
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            grad = param._grad
            # torch swaps the data of a Parameter only when the new tensor is of a compatible
            # kind: a move to or from the meta device (``to_empty``) makes a new Parameter per
            # module, so weights tied across modules come apart, as in torch
            moved = param_applied.is_meta is not param.is_meta
            if (overwrite or moved) and not is_lazy(param):
                out = Parameter(param_applied, param.requires_grad)
                self._parameters[key] = out
                if grad is not None:
                    with no_grad():
                        grad_applied = fn(grad)
                    # a conversion that is a no-op hands the old gradient back: it stays shared
                    out.grad = grad_applied.requires_grad_(grad.requires_grad)
                continue
            # the Parameter object keeps its identity (optimizers hold it): swap its data
            if param_applied is not param:
                param.data = param_applied
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                if grad_applied is not grad:
                    grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is None:
                continue
            applied = fn(buf)
            if is_lazy(buf) and applied is not buf:
                buf._data = applied._data  # stays uninitialized: materialize keeps the new dtype
            else:
                self._buffers[key] = applied
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cuda(self, device=None) -> Module:
        """Move every parameter and buffer to the GPU."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> Module:
        """Move every parameter and buffer to the CPU."""
        return self._apply(lambda t: t.cpu())

    def ipu(self, device=None) -> Module:
        """torch's move to an IPU (the tensors' own error: ember has none)."""
        return self._apply(lambda t: t.ipu(device))

    def xpu(self, device=None) -> Module:
        """torch's move to an XPU (the tensors' own error: ember has none)."""
        return self._apply(lambda t: t.xpu(device))

    def mtia(self, device=None) -> Module:
        """torch's move to an MTIA device (the tensors' own error: ember has none)."""
        return self._apply(lambda t: t.mtia(device))

    def type(self, dst_type) -> Module:
        """Cast every parameter and buffer to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> Module:
        """Cast floating point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Cast floating point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Cast floating point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Cast floating point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Move parameters and buffers to ``device`` without copying their values."""
        from ...core.ops.creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self) -> Module:
        """Move every parameter, gradient and buffer into shared memory (``Tensor.share_memory_``),
        so processes forked afterwards (``multiprocessing``, Hogwild training) see its updates."""
        return self._apply(lambda t: t.share_memory_())

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``. Integral tensors keep their dtype."""
        from ...core.ops.conversion import _parse_to

        device, dtype, non_blocking, copy, memory_format = _parse_to(args, kwargs)
        if copy is not None:
            raise RuntimeError(".to() does not accept copy argument")
        if dtype is not None:
            from ...core import dtype as _dt

            dtype = _dt.to_dtype(dtype)
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(
                    "nn.Module.to only accepts floating point or complex "
                    f"dtypes, but got desired dtype={dtype}"
                )
            if dtype.is_complex:
                warnings.warn(
                    "Complex modules are a new feature under active development whose "
                    "design may change, and some modules might not work as expected "
                    "when using complex tensors as parameters or buffers. Please file "
                    "an issue at https://github.com/pytorch/pytorch/issues/new?template"
                    "=bug-report.yml if a complex module does not work as expected.",
                    stacklevel=2,
                )

        def convert(t):
            # like torch: memory_format applies to the 4-D and 5-D parameters and buffers only
            fmt = memory_format if t._data.ndim in (4, 5) else None
            if t.is_floating_point() or t.is_complex():
                return t.to(device, dtype, non_blocking=non_blocking, memory_format=fmt)
            return t.to(device, non_blocking=non_blocking, memory_format=fmt)

        return self._apply(convert)

    # ------------------------------------------------------------------ hooks
    def register_full_backward_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_output) -> None or new grad_output`` runs before the gradients
        with respect to the module's inputs are computed."""
        return _add_hook(self._backward_pre_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated: use :meth:`register_full_backward_hook` (run here with its semantics)."""
        self._is_full_backward_hook = _check_backward_mode(
            self._is_full_backward_hook, False, _MODULE_WHERE
        )
        return _add_hook(self._backward_hooks, hook)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None or new grad_input`` runs once the
        gradients with respect to the module's inputs are computed."""
        self._is_full_backward_hook = _check_backward_mode(
            self._is_full_backward_hook, True, _MODULE_WHERE
        )
        return _add_hook(self._backward_hooks, hook, prepend=prepend)

    def _get_backward_hooks(self):
        full_backward_hooks: list = []
        if _global_is_full_backward_hook is True:
            full_backward_hooks += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full_backward_hooks += self._backward_hooks.values()
        non_full_backward_hooks: list = []
        if _global_is_full_backward_hook is False:
            non_full_backward_hooks += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full_backward_hooks += self._backward_hooks.values()
        return full_backward_hooks, non_full_backward_hooks

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args) -> None or new args`` (``with_kwargs``: ``hook(module, args,
        kwargs) -> None or (args, kwargs)``) runs before ``forward``."""
        return _add_hook(
            self._forward_pre_hooks,
            hook,
            (self._forward_pre_hooks_with_kwargs, with_kwargs),
            prepend=prepend,
        )

    def register_forward_hook(
        self,
        hook: Callable,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """``hook(module, args, output) -> None or new output`` (``with_kwargs``: ``hook(module,
        args, kwargs, output)``) runs after ``forward``; ``always_call`` runs it even when
        ``forward`` raises."""
        return _add_hook(
            self._forward_hooks,
            hook,
            (self._forward_hooks_with_kwargs, with_kwargs),
            (self._forward_hooks_always_called, always_call),
            prepend=prepend,
        )

    # ------------------------------------------------------------------ call
    def __call__(self, *args, **kwargs):
        # the no-hook path: four dict truth tests and one flag, then forward
        d = self.__dict__
        try:
            hooked = (
                d["_forward_pre_hooks"]
                or d["_forward_hooks"]
                or d["_backward_hooks"]
                or d["_backward_pre_hooks"]
                or _Globals.any_hooks
            )
        except KeyError:  # Module.__init__ was not called: torch's AttributeError
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '_backward_hooks'"
            ) from None
        if hooked:
            return self._call_with_hooks(self.forward, args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, forward_call, args, kwargs):
        full_backward_hooks: list = []
        non_full_backward_hooks: list = []
        backward_pre_hooks: list = []
        if self._backward_pre_hooks or _global_backward_pre_hooks:
            backward_pre_hooks = self._get_backward_pre_hooks()
        if self._backward_hooks or _global_backward_hooks:
            full_backward_hooks, non_full_backward_hooks = self._get_backward_hooks()
        # the deprecated non-full hooks run with the full-hook machinery here
        only_non_full = bool(non_full_backward_hooks) and not (
            full_backward_hooks or backward_pre_hooks
        )
        full_backward_hooks = full_backward_hooks + non_full_backward_hooks
        called_always_called_hooks: set = set()

        def inner():
            nonlocal args, kwargs
            if _global_forward_pre_hooks or self._forward_pre_hooks:
                for hook_id, hook in (
                    *_global_forward_pre_hooks.items(),
                    *self._forward_pre_hooks.items(),
                ):
                    if hook_id in self._forward_pre_hooks_with_kwargs:
                        args_kwargs_result = hook(self, args, kwargs)
                        if args_kwargs_result is not None:
                            if (
                                isinstance(args_kwargs_result, tuple)
                                and len(args_kwargs_result) == 2
                            ):
                                args, kwargs = args_kwargs_result
                            else:
                                raise RuntimeError(
                                    "forward pre-hook must return None or a tuple "
                                    "of (new_args, new_kwargs), but got "
                                    f"{args_kwargs_result}."
                                )
                    else:
                        args_result = hook(self, args)
                        if args_result is not None:
                            if not isinstance(args_result, tuple):
                                args_result = (args_result,)
                            args = args_result
            bw_hook = None
            raw_args = args
            if full_backward_hooks or backward_pre_hooks:
                bw_hook = _BackwardHook(
                    self, full_backward_hooks, backward_pre_hooks, only_non_full
                )
                args = bw_hook.setup_input_hook(args)
            result = forward_call(*args, **kwargs)
            if _global_forward_hooks or self._forward_hooks:
                for hook_id, hook in (
                    *_global_forward_hooks.items(),
                    *self._forward_hooks.items(),
                ):
                    if (
                        hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called
                    ):
                        called_always_called_hooks.add(hook_id)
                    if (
                        hook_id in self._forward_hooks_with_kwargs
                        or hook_id in _global_forward_hooks_with_kwargs
                    ):
                        hook_result = hook(self, args, kwargs, result)
                    else:
                        hook_result = hook(self, args, result)
                    if hook_result is not None:
                        result = hook_result
            if bw_hook:
                if not isinstance(result, (Tensor, tuple)) and not only_non_full:
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor "
                        f"or a tuple of Tensors but received {type(result)}",
                        stacklevel=3,
                    )
                if only_non_full:
                    _warn_non_full_backward_hook(raw_args, args, result)
                result = bw_hook.setup_output_hook(result)
                if non_full_backward_hooks and not only_non_full:
                    # with full (pre-)hooks too, torch reads the graph through their wrapping
                    _warn_non_full_backward_hook(args, args, result)
            return result

        try:
            return inner()
        except Exception:
            # always_call forward hooks still run when forward (or a hook) raised
            for hook_id, hook in _global_forward_hooks.items():
                if (
                    hook_id in _global_forward_hooks_always_called
                    and hook_id not in called_always_called_hooks
                ):
                    try:
                        hook_result = hook(self, args, None)
                        if hook_result is not None:
                            result = hook_result
                    except Exception as e:  # noqa: BLE001
                        warnings.warn(
                            "global module forward hook with ``always_call=True`` raised an "
                            f"exception that was silenced as another error was raised in "
                            f"forward: {e!s}",
                            stacklevel=2,
                        )
                        continue
            for hook_id, hook in self._forward_hooks.items():
                if (
                    hook_id in self._forward_hooks_always_called
                    and hook_id not in called_always_called_hooks
                ):
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook_result = hook(self, args, kwargs, None)
                        else:
                            hook_result = hook(self, args, None)
                        if hook_result is not None:
                            result = hook_result  # noqa: F841
                    except Exception as e:  # noqa: BLE001
                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an "
                            "exception that was silenced as another error was raised in "
                            f"forward: {e!s}",
                            stacklevel=2,
                        )
                        continue
            raise

    _wrapped_call_impl = __call__
    _call_impl = __call__

    # ------------------------------------------------------------------ attributes
    def __getstate__(self) -> dict:
        # a shallow copy: subclasses commonly drop entries from the state before pickling, which
        # must not delete them from the live module
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        d = self.__dict__
        for name, default in (
            ("_forward_pre_hooks", OrderedDict),
            ("_forward_pre_hooks_with_kwargs", OrderedDict),
            ("_forward_hooks", OrderedDict),
            ("_forward_hooks_with_kwargs", OrderedDict),
            ("_forward_hooks_always_called", OrderedDict),
            ("_state_dict_hooks", OrderedDict),
            ("_state_dict_pre_hooks", OrderedDict),
            ("_load_state_dict_pre_hooks", OrderedDict),
            ("_load_state_dict_post_hooks", OrderedDict),
            ("_non_persistent_buffers_set", set),
            ("_backward_pre_hooks", OrderedDict),
            ("_backward_hooks", OrderedDict),
        ):
            if name not in d:
                d[name] = default()
        if "_is_full_backward_hook" not in d:
            d["_is_full_backward_hook"] = None

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d:
            p = d["_parameters"]
            if name in p:
                return p[name]
        if "_buffers" in d:
            b = d["_buffers"]
            if name in b:
                return b[name]
        if "_modules" in d:
            m = d["_modules"]
            if name in m:
                return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(
                self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set
            )
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(
                    self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set
                )
                for hook in _global_module_registration_hooks.values():
                    output = hook(self, name, value)
                    if output is not None:
                        value = output
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(torch.nn.Module or None expected)"
                    )
                for hook in _global_module_registration_hooks.values():
                    output = hook(self, name, value)
                    if output is not None:
                        value = output
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)"
                        )
                    if buffers is None:
                        raise AttributeError("cannot assign buffer before Module.__init__() call")
                    if isinstance(value, Buffer):
                        persistent = _buffer_persistent(value)
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list:
        module_attrs = dir(self.__class__)
        attrs = list(self.__dict__.keys())
        parameters = list(self._parameters.keys())
        modules = list(self._modules.keys())
        buffers = list(self._buffers.keys())
        keys = module_attrs + attrs + parameters + modules + buffers
        keys = [key for key in keys if not key[0].isdigit()]
        return sorted(keys)

    # ------------------------------------------------------------------ state dict
    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata) -> None or new state_dict`` runs
        after ``state_dict`` collected this module's entries."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata) -> None`` runs after
        ``state_dict`` (it may edit ``state_dict`` in place)."""
        hook._from_public_api = True
        return _add_hook(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars) -> None`` runs before ``state_dict``."""
        return _add_hook(self._state_dict_pre_hooks, hook)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable, with_module: bool = False
    ) -> RemovableHandle:
        return _add_hook(
            self._load_state_dict_pre_hooks, _WrappedHook(hook, self if with_module else None)
        )

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None`` runs before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys) -> None`` runs after ``load_state_dict``; it may
        edit the missing/unexpected key lists in place."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    def _save_tensors(
        self, destination: dict, prefix: str, keep_vars: bool, lazy: bool = False
    ) -> None:
        # every parameter and persistent buffer, detached unless ``keep_vars``; with ``lazy``
        # an uninitialized one is saved as itself (detach would lose its laziness)
        for name, t in itertools.chain(
            self._parameters.items(),
            (i for i in self._buffers.items() if i[0] not in self._non_persistent_buffers_set),
        ):
            if t is not None:
                keep = keep_vars or (lazy and is_lazy(t))
                destination[prefix + name] = t if keep else t.detach()

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        self._save_tensors(destination, prefix, keep_vars)
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict of every parameter and persistent buffer (detached unless
        ``keep_vars``), keyed by dotted path, in torch's order."""
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
    ) -> None:
        """Load this module's own parameters and buffers from ``state_dict`` (no recursion)."""
        from ...autograd.grad_mode import no_grad

        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        persistent_buffers = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local_state = {
            k: v
            for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
            if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    "Tensor-like object from checkpoint but received "
                    f"{type(input_param)}"
                )
                continue
            lazy = is_lazy(param)
            if (
                not lazy
                and param.dim() == 0
                and input_param.dim() == 1
                and input_param.shape[0] == 1
            ):
                # checkpoints of old torch stored scalars as 1-element vectors
                input_param = input_param[0]
            if not lazy and input_param.shape != param.shape:
                error_msgs.append(
                    # torch's text names the shapes torch.Size also outside drop-in mode
                    f"size mismatch for {key}: copying a param with shape torch.Size("
                    f"{list(input_param.shape)}) from checkpoint, the shape in current model is "
                    f"torch.Size({list(param.shape)})."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if (
                            param._names is not None
                            and input_param._names is None
                            and not isinstance(input_param, Parameter)
                        ):
                            # an unnamed checkpoint keeps the layer's axis names
                            input_param = input_param.refine_names(*param._names)
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(
                                    input_param, requires_grad=param.requires_grad
                                )
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    elif lazy:
                        param.materialize(input_param.shape)
                        _copy_keep_names(param, input_param)
                    elif param.is_meta and not input_param.is_meta:
                        warn_load_into_meta(key)  # torch: a no-op, with a warning
                    else:
                        _copy_keep_names(param, input_param)
            except Exception as ex:  # noqa: BLE001
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the '
                    f"model are {param.size()} and whose dimensions in the checkpoint are "
                    f"{input_param.size()}, an exception occurred : {ex.args}."
                )
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and (extra_state_key in state_dict):
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix) :].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict``; returns ``(missing_keys,
        unexpected_keys)``. ``strict`` raises on any mismatch; ``assign`` replaces the tensors
        instead of copying into them."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state_dict,
                prefix,
                local_metadata,
                True,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {
                        k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)
                    }
                    load(child, child_state_dict, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, incompatible_keys)
                if out is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace."
                    )

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected_keys)
                    ),
                )
            if missing_keys:
                error_msgs.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing_keys)
                    ),
                )
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    self.__class__.__name__, "\n\t".join(error_msgs)
                )
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------------ iteration
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo: set = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter (of this module and, with ``recurse``, its submodules), once."""
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs; a tied parameter is listed once unless
        ``remove_duplicate=False``."""
        yield from self._named_members(
            lambda module: module._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer (persistent or not)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs."""
        yield from self._named_members(
            lambda module: module._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self) -> Iterator[Module]:
        """The immediate submodules."""
        for _name, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, submodule)`` for the immediate submodules (each module once)."""
        memo: set = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self) -> Iterator[Module]:
        """This module and every submodule, depth first, each once."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate=True):
        """``(dotted name, module)`` for this module and every submodule, depth first."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=False``: evaluation) on this module and its submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")  # noqa: TRY004
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (``train(False)``)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient (to None by default, else to zeros)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # ------------------------------------------------------------------ repr
    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """The module's own settings, shown inside its repr (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra_lines: list = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str

    def _replicate_for_data_parallel(self) -> Module:
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        return replica

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """No compiler here: ``compile`` checks torch.compile's options, runs eagerly."""
        from ...compiler import _check

        _check(kwargs.get("mode"), kwargs.get("options"), kwargs.get("backend", "inductor"))


def _copy_keep_names(param: Tensor, src: Tensor) -> None:
    """``param.copy_(src)`` by position: an unnamed checkpoint does not rename the model's axes,
    an unnamed param takes the checkpoint's names (spec 4.9), and when both are named copy_'s
    in-place rule checks them (spec lines 382-383: a mismatch is an error, not a silent keep)."""
    names = param._names
    if (names is None) == (src._names is None):
        param.copy_(src)
        return
    param._names = None
    try:
        param.copy_(src.rename(None) if src._names is not None else src)
    finally:
        param._names = names if names is not None else src._names
