"""The @op decorator: one registry entry per op = kernel + derivative + name rule.

A kernel is ``fn(xp, *inputs, *options)``: parameters after ``xp`` without defaults are tensor inputs
(or one sequence of tensors with ``seq=True``), the rest are options. So an option must have a
default (``dim=0``), or the registry treats it as an input (promoting and version-checking it). ``@fn.vjp`` registers the
derivative, written in ember ops; its parameters after ``grad`` name what to save: an input's
parameter name, ``result`` (the output), or an option's name. It returns one gradient per input
(a tuple when there are several; None for an input with no gradient).

From one entry the registry makes the public function (``ember.<name>``), the Tensor method, the
dunders and the in-place variant, so an op is written once and a test table row covers it.
"""

from __future__ import annotations

import inspect
import re
import sys

import numpy as np

from ..autograd.grad_mode import _INFERENCE_OPEN as _INF_OPEN
from ..autograd.grad_mode import _INFERENCE_USED as _INF_USED
from ..autograd.grad_mode import INFERENCE_SAVE_MSG, _inference_tensor, _state
from ..autograd.grad_mode import check_inference_inplace as _check_inference_inplace
from ..autograd.node import RESULT as _RESULT
from ..autograd.node import Node
from ..autograd.node import SavedOutput as _SavedOutput
from ..autograd.saved_hooks import HOOKS as _SAVED_HOOKS
from ..autograd.saved_hooks import pack_node as _pack_node
from ..autograd.views import forget as _forget_view
from ..autograd.views import note_views as _note_views
from ..autograd.views import rebased as _rebased_view
from ..autograd.views import refresh as _refresh_view
from . import dtype as _dt
from .autocast import entry as _autocast_entry
from .device import _SEVERAL_GPUS, _XP, array_module, device_of, out_of_memory
from .dims import DimTypeError as _DimTypeError
from .dims import normalize_dim
from .dtype import scalar_name
from .named import _UNALIGNED, _align_call, _by_name
from .names import broadcast_to_self as _broadcast_to_self
from .names import keep as _keep
from .names import unify_inputs as _unify_inputs
from .tensor import Tensor, _generic, _ndarray, _new
from .torch_function import NOT_OVERLOADED as _NOT_OVERLOADED
from .torch_function import OFF as _TF_OFF
from .torch_function import PLAIN as _TF_PLAIN
from .torch_function import overloaded_call as _overloaded_call
from .vmap_state import SLICES as _VMAP_SLICES
from .vmap_state import mark_results as _vmap_mark
from .vmap_state import refuse_inplace as _vmap_refuse_inplace

OPS: dict = {}  # name -> OpDef, for docs, tests and the names coverage table
DIM_ARGS = frozenset(
    ("dim", "dims", "dim0", "dim1", "dim2", "source", "destination", "start_dim", "end_dim")
)
_FROM_NP = _dt._FROM_NP
_FLOAT_KINDS = "fcV"  # V: ml_dtypes' bfloat16
_SCALARS = (int, float, complex, np.generic)
_I64, _I64_MIN = 1 << 63, -(1 << 63)  # a Python int scalar's range (past it: rare checks)


_AFTER_DIGIT = re.compile(r"(?<=[0-9])[a-z]")


class OpDef:
    """One registered op: its kernel, derivative and names rule, and what the public wrapper
    needs on every call (the slots). Options that a few ops need live in ``__dict__``, set
    after the definition (``fn.op.label = "pow"``) and read with ``od.__dict__.get``:

    - ``label``: the name torch's errors show (a private op behind a public function);
      ``arg_names``: the argument names its errors show; ``aliases``: set by ``alias()``.
    - ``overloads`` / ``dim_overloads``: torch's signatures, listed by "expected one of" errors
      (``dim_overloads`` for the errors of a bad dim); ``int_args``: the int[]-typed options
      and the type their errors name; ``list_dims``: dims as torch's int[] (no bare int, no
      tensor); ``dim_error``: a hook raising the op's own error for a bad dim.
    - ``number_self``: a Python number is accepted as the first input.
    - ``no_out``: torch's signature has no ``out=``; ``composite_out``: a composite in torch,
      whose kernel refuses a dtype before out= is checked; ``quiet_resize``: a non-empty out= is
      resized without torch's warning; ``indices_checked_first``: a (values, indices) out=
      checks the indices first.
    - ``inplace_name``: the in-place method's name; ``inplace_is_out``: the in-place form casts as
      its out= kernel does (out=self); ``inplace_backward_name``: its node's name (a string or a
      function of the args); ``scalar_cast_c_name``: with a number argument its cast error names
      self's C++ type.
    - ``torch_saved``: the names torch's nodes give saved tensors (``node._saved_<name>``).
    """

    __slots__ = (
        "__dict__",
        "backward_name",
        "dim_args",
        "floating",
        "kernel",
        "n_diff_out",
        "n_in",
        "name",
        "name_rule",
        "names_always",
        "none_grads",
        "opmath_scalar",
        "opt_defaults",
        "opt_names",
        "out_dtype",
        "out_type",
        "promote",
        "public",
        "rule",
        "save_first",
        "saved_names",
        "seq",
        "spec",
        "tensors_only",
        "ufunc",
        "var_pos",
        "view",
        "vjp",
    )

    def __init__(self, kernel, name, rule, promote, floating, view, out_type, seq):
        self.name = name
        self.kernel = kernel
        self.rule = rule
        self.promote = promote
        self.floating = floating
        self.view = view
        self.out_type = out_type
        self.seq = seq
        params = list(inspect.signature(kernel).parameters.values())[1:]  # skip xp
        n_in = 0
        for p in params:
            if p.default is inspect.Parameter.empty and p.kind in (
                p.POSITIONAL_ONLY,
                p.POSITIONAL_OR_KEYWORD,
            ):
                n_in += 1
            else:
                break
        self.n_in = n_in
        self.in_names = [p.name for p in params[:n_in]]
        # a *varargs option (view(*shape)) binds to all remaining positional options
        self.var_pos = next(
            (i for i, p in enumerate(params[n_in:]) if p.kind == p.VAR_POSITIONAL), None
        )
        self.opt_names = [p.name for p in params[n_in:]]
        self.opt_defaults = {
            p.name: p.default for p in params[n_in:] if p.default is not inspect.Parameter.empty
        }
        # options that take dims: names are resolved to indices before the kernel runs
        self.dim_args = tuple((i, nm) for i, nm in enumerate(self.opt_names) if nm in DIM_ARGS)
        self.vjp = None
        self.spec = ()
        self.save_first = False
        self.n_diff_out = 1
        self.none_grads = False
        # out_dtype(out, res, ins): raises torch's error for an out= tensor whose dtype is not
        # the result's, for ops whose torch kernels refuse to cast (mm, dot, ...); None: cast
        self.out_dtype = None
        camel = "".join(w.capitalize() for w in name.strip("_").split("_"))
        # torch's codegen also capitalizes a letter after a digit (log1p: Log1PBackward0)
        self.backward_name = _AFTER_DIGIT.sub(lambda m: m.group().upper(), camel) + "Backward0"
        # name_rule(node) -> str: the backward node's name where torch's depends on the call
        # (run lazily by Node.name(), never when recording); None: backward_name
        self.name_rule = None
        self.opmath_scalar = False
        self.out_as_dtype = False
        self.saved_names = ()  # the vjp's parameters, in node.saved's order

    def __call__(self, *args, **kwargs):
        return self.public(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<ember op {self.name}>"

    def set_vjp(
        self,
        fn=None,
        *,
        only_for: dict | None = None,
        one_output: tuple = (),
        none_grads: bool = False,
    ):
        """Register the derivative (decorator). Parameter names say what the node saves.

        ``only_for={"input": "other"}``: input ``input`` is used only for ``other``'s gradient,
        so it is saved (and its in-place changes checked) only when ``other`` needs one, as torch
        does (a frozen weight's matmul keeps no activation; ``y * 2`` keeps nothing of y).
        ``one_output=("input", "result")``: saved only by a call that returns one tensor (max of
        all elements); a ``(values, indices)`` call keeps ``indices``, its index output, instead
        (None for a one-tensor call), as torch does: values and input may then change in place.
        ``none_grads=True``: an output that got no gradient passes None (torch's undefined grad)
        instead of zeros, for a derivative where a zero would meet an inf (var_mean's var).
        ``<input>_shape`` / ``<input>_dtype`` save an input's shape or dtype;
        ``<input>_geometry`` its array for the layout alone (as_strided), with no version check.
        """
        if fn is None:
            return lambda f: self.set_vjp(
                f, only_for=only_for, one_output=one_output, none_grads=none_grads
            )
        only_for = only_for or {}
        spec = []
        self.saved_names = tuple(inspect.signature(fn).parameters)[1:]
        for p in self.saved_names:
            if p in one_output:  # kind 5 with no input to wait for: the call's output count
                spec.append(
                    (5, (1, 0, None) if p == "result" else (0, self.in_names.index(p), None))
                )
            elif p == "result":
                spec.append((1, 0))
            elif p == "indices" and p not in self.in_names:  # (embedding's input is indices)
                spec.append((8, 0))
            elif p in only_for:
                spec.append((5, (0, self.in_names.index(p), self.in_names.index(only_for[p]))))
            elif p in self.in_names:
                spec.append((0, self.in_names.index(p)))
            elif p == "needs":
                spec.append((4, 0))  # which inputs need a gradient (tuple of bools)
            elif p.endswith("_shape") and p[:-6] in self.in_names:
                spec.append((3, self.in_names.index(p[:-6])))
            elif p.endswith("_dtype") and p[:-6] in self.in_names:
                spec.append((6, self.in_names.index(p[:-6])))
            elif p.endswith("_geometry") and p[:-9] in self.in_names:
                # the input's array, for its layout only (as_strided): no version check
                spec.append((7, self.in_names.index(p[:-9])))
            elif p in self.opt_names:
                spec.append((2, p))
            else:
                raise TypeError(f"vjp of {self.name}: unknown parameter {p!r}")
        self.vjp = fn
        self.none_grads = none_grads
        self.spec = tuple(spec)
        self.save_first = any(k == 0 and i == 0 or k == 5 and i[:2] == (0, 0) for k, i in spec)
        return fn

    vjp_ = set_vjp


def backward_names(table: dict[str, str]) -> None:
    """Give registered ops torch's grad_fn names (``y.grad_fn.name()``) where ember splits an op
    into other kernels than torch's (conv2d's im2col/Winograd/depthwise ops are all torch's
    ConvolutionBackward0)."""
    for name, bname in table.items():
        OPS[name].backward_name = bname


def op(
    fn=None,
    *,
    name=None,
    names=None,
    promote=False,
    floating=False,
    view=False,
    method=True,
    dunders=(),
    inplace=None,
    out_type=None,
    seq=False,
    n_diff_out=1,
    names_always=False,
    ufunc=None,
    tensors_only=False,
    opmath_scalar=False,
    out_as_dtype=False,
):
    """Register an op. See the module docstring.

    names: the name-inference rule (a function of core/names.py), or names.FALLBACK for the
    generic fallback (spec 4.2); every op declares one (see names_coverage()).
    promote: inputs are promoted to torch's result_type first. floating: integer inputs become the
    default float dtype. view: the output shares storage with the first input. method: install as
    a Tensor method. dunders: dunder names to install (e.g. '__add__'). inplace: the in-place
    method's name ('add_'), which also installs the '__iadd__'-style dunder if dunders has one.
    ufunc: the name of the array-module ufunc that computes the op (binary ops without options),
    used by the in-place variant to write straight into storage when no graph is recorded.
    tensors_only: a Python scalar input is refused (torch has no Scalar overload: logical_and);
    an int n refuses one among the first n inputs only (torch has no (Number self, ...) overload:
    the comparisons, rsub, fmod). (An op whose OpDef has ``number_self`` set takes numbers only,
    the first as a 0-d tensor: add(1, 2), as torch's add, sub, mul and div do.)
    opmath_scalar: with a float16/bfloat16 tensor, a Python scalar operand is taken in float32 and
    the result rounded once, as torch's kernel does (mul, div, lerp; add, sub, pow, remainder
    and the comparisons round the scalar to 16 bits first, like numpy: measured on torch 2.13).
    out_as_dtype: an ``out=`` tensor's dtype is the op's ``dtype=`` when none is given (and must
    be it when one is), as torch's sum/prod/cumsum: they compute in the out tensor's dtype.
    """

    def deco(kernel):
        from .names import FALLBACK, rule_name

        # names=FALLBACK declares "no specific rule" (the registry's generic fallback runs);
        # names=None leaves the op undeclared, which the coverage test refuses
        rule = None if names is FALLBACK else names
        od = OpDef(kernel, name or kernel.__name__, rule, promote, floating, view, out_type, seq)
        od.rule_name = rule_name(names)
        od.n_diff_out = n_diff_out
        od.names_always = names_always  # the rule runs for unnamed inputs too (rename, factories)
        od.ufunc = ufunc  # xp.<ufunc>(a, b, out=a) is the in-place op when no graph is recorded
        od.tensors_only = tensors_only
        od.opmath_scalar = opmath_scalar
        od.out_as_dtype = out_as_dtype
        prev = OPS.get(od.name)
        if prev is not None and prev.kernel.__module__ != kernel.__module__:
            # one op = one place: a second kernel under a registered name would shadow the first
            # in OPS (the names table, kron's out=) while its callers kept the other
            raise RuntimeError(
                f"op '{od.name}' is registered by {prev.kernel.__module__} and {kernel.__module__}"
            )
        OPS[od.name] = od

        public = _make_public(od)
        public.__name__ = public.__qualname__ = od.name
        public.__doc__ = kernel.__doc__
        public.op = od
        public.vjp = od.set_vjp
        od.direct = public  # without the autocast entry: in-place variants (torch casts none)
        od.public = public = _autocast_entry(public)  # the op itself unless a list names it
        if method:
            setattr(Tensor, od.name, public)
        if dunders:
            # the operator form: the same function, answering NotImplemented for an operand no
            # op takes (a second closure, so the common call pays nothing for the check)
            op_form = _make_public(od, dunder=True)
            op_form.__name__ = op_form.__qualname__ = od.name
            op_form.__doc__ = public.__doc__
        for d in dunders:
            setattr(Tensor, d, op_form)
        if inplace:

            def inplace_fn(self, *args, **kwargs):
                return apply_inplace(od, self, args, kwargs)

            inplace_fn.__name__ = od.inplace_name = inplace
            setattr(Tensor, inplace, inplace_fn)
            for d in dunders:
                if d.startswith("__") and not d.startswith("__r"):
                    setattr(Tensor, "__i" + d[2:], _operator_dunder(inplace_fn, inplace=True))
        return public

    return deco(fn) if fn is not None else deco


# operands no tensor op takes: the dunder answers NotImplemented (as torch's do), so Python
# tries the other side ("ab" * t, [0] * t repeat the sequence) or raises its own TypeError
# ("unsupported operand type(s) for +: 'Tensor' and 'str'"), and t == None is plain False
_FOREIGN = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range, type(None))


def _foreign(other) -> bool:
    return isinstance(other, _FOREIGN) or type(other) is object


def _operator_dunder(public, *, inplace: bool = False):
    """``public`` as an operator dunder: NotImplemented for a foreign operand. An in-place one
    (``t += a``) also passes an ndarray on, as torch does: Python then computes ``t + a`` into
    a new tensor."""

    def d(self, *args):
        if args:
            tt = type(args[0])
            if (
                tt is not Tensor
                and tt is not float
                and tt is not int
                and (_foreign(args[0]) or inplace and tt is _ndarray)
            ):
                return NotImplemented
        return public(self, *args)

    d.__name__ = d.__qualname__ = public.__name__
    d.__doc__ = public.__doc__
    d.__dict__.update(public.__dict__)
    return d


def reflected(public, *, swapped: bool = False):
    """``other <op> self`` for a binary op's ``__r*__`` dunder: ``public(other, self)``, or
    ``public(self, other)`` for an op that is already the reflected one (rsub)."""

    if swapped:

        def r(self, other):
            if type(other) is not float and type(other) is not int and _foreign(other):
                return NotImplemented
            if isinstance(other, np.ndarray):  # numpy deferred to us (__array_priority__):
                return NotImplemented  # torch's Python raises (np_array - t)
            return public(self, other)

        return r

    def r(self, other):
        if type(other) is not float and type(other) is not int and _foreign(other):
            return NotImplemented
        if isinstance(other, np.ndarray):  # numpy deferred to us (__array_priority__):
            return NotImplemented  # torch's Python raises (np_array - t)
        return public(other, self)

    return r


def _wrap_np(a):
    from .tensor import _wrap

    return _wrap(np.array(a))


# ---------------------------------------------------------------------- dtype handling
def promote_arrays(vals, floating: bool = False):
    """Cast the arrays among ``vals`` to torch's result dtype; return (values, dtype).

    Python scalars stay Python scalars (numpy treats them as weak, as torch does), except beside
    bfloat16, which numpy does not know: they become bfloat16 scalars there, or the result would
    silently be float32. ``floating``: integer results become the default float dtype.
    """
    d = _dt.result_type(*vals)
    if floating and d.category < _dt.FLOAT:
        d = _dt.get_default_dtype()
    npd = d.np
    out = []
    for v in vals:
        if hasattr(v, "dtype"):
            out.append(v if v.dtype is npd else v.astype(npd))
        else:
            # (ml_dtypes' scalar takes no int past C long: its float is the same number)
            out.append(npd.type(float(v) if type(v) is int else v) if npd.kind == "V" else v)
    return out, d


def _promote_arrays(od, ins, arrays):
    arrays[:] = promote_arrays(arrays, od.floating)[0]


def _needs_promotion(od, ins, arrays) -> bool:
    first = None
    for i, t in enumerate(ins):
        if isinstance(t, Tensor):
            d = arrays[i].dtype
            if first is None:
                first = d
            elif d is not first:
                return True
    if first is None:
        return False
    kind = first.kind
    if od.floating and kind not in _FLOAT_KINDS:
        return True
    if kind == "V" and len(arrays) > 1:
        return True  # bfloat16 with a Python scalar (see _promote_arrays)
    for t in ins:
        if not isinstance(t, Tensor):
            tt = type(t)
            if (tt is float and kind not in _FLOAT_KINDS) or (tt is complex and kind != "c"):
                return True
    return False


def _bad_input(od, i, t, args=(), kw=None):
    """torch's TypeError for input ``i`` (``t``) of a call to ``od`` with ``args``/``kw``.

    A private op under a public wrapper sets, next to that wrapper, what torch prints instead
    of its own name and signature: ``label`` (the public name), ``overloads`` (torch's
    signature lines: an "invalid combination" error then, given the call's ``args``),
    ``arg_names`` (its inputs' names). A call spelled with an alias (:func:`alias`) prints
    the alias's name.
    """
    if od.seq:
        return TypeError(
            f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
        )
    extra = od.__dict__
    name, sigs = extra.get("label", od.name), extra.get("overloads")
    spelled = _spelled(od)  # an alias: its name, and its own overloads where torch's differ
    if spelled is not None:
        name = spelled[0]
        if spelled[1] is not None:
            sigs = spelled[1]
    from .arg_errors import invalid_arguments, invalid_method_arguments, tensor_method, type_name

    # a method counts its arguments after self (and the in-place one names itself)
    method = tensor_method(name) if i else None
    if method is not None:
        name = method
    if sigs is not None and args:  # (the in-place path passes no args: the plain text)
        if method is not None:
            return invalid_method_arguments(name, args, kw or {}, sigs)
        return invalid_arguments(name, args, kw or {}, sigs)
    arg = extra.get("arg_names", od.in_names)[i]
    return TypeError(
        f"{name}(): argument '{arg}' (position {i + (method is None)}) must be Tensor, not "
        f"{type_name(t)}"
    )


def alias(
    fn,
    name: str,
    label: str | None = None,
    overloads: tuple | None = None,
    renames: dict | None = None,
):
    """Declare ``name`` (``arccos``; ``special.expit`` for a submodule's) another spelling of
    the registered op ``fn``, and return ``fn`` itself: the alias is the same function, so its
    calls cost nothing more. An error raised for a call whose source spells ``name`` prints
    ``label`` (default ``name``: torch's ``special_expit``), lists ``overloads`` (the alias's
    own signatures, where torch's differ from the op's: ``multiply``) for a wrong-type input,
    and calls an option by its ``renames`` name (swapaxes' ``axis0`` for ``dim0``)."""
    fn.op.__dict__.setdefault("aliases", {})[name] = (label or name, overloads, renames or {})
    return fn


def _spelled(od) -> tuple | None:
    """(label, overloads, renames) of the alias of ``od`` the erring call was spelled with (see
    :func:`alias`); None for the op's own name, or where the source cannot tell."""
    aliases = od.__dict__.get("aliases")
    if not aliases:
        return None
    from .arg_errors import called_as

    callee = called_as()
    if callee is None:
        return None
    for name, spelled in aliases.items():
        if callee == name or callee.endswith("." + name):
            return spelled
    return None


def label_of(od) -> str:
    """The name torch prints in ``od``'s errors: the alias the call was spelled with, its
    ``label`` (a private op under a public wrapper), else the op's name."""
    spelled = _spelled(od)
    if spelled is not None:
        return spelled[0]
    return od.__dict__.get("label", od.name)


def inplace_call_error(od, args: tuple, kw: dict) -> TypeError | None:
    """torch's parser error for ``self.<op>_(*args, **kw)`` (None when the arguments parse, so
    the failure is the op's own): the in-place method's overloads where it has several
    (core/inplace_signatures.py), "takes no arguments" for a unary op's, a lone
    ``(Tensor other)`` for a binary one's. Only the error path calls it."""
    from .arg_errors import called_as, no_arguments, parse_error, parser_error, plain_call
    from .inplace_signatures import INPLACE_SIGNATURES

    name = od.__dict__.get("inplace_name") or od.name + "_"
    callee = called_as() or ""
    method = callee.rpartition(".")[2]
    if method and getattr(Tensor, method, None) is getattr(Tensor, name, None):
        name = method  # an alias's spelling (greater_ for gt_)
    elif od.__dict__.get("aliases"):  # a computed receiver (f(x).divide_): read the bytecode
        from .arg_errors import tensor_method

        for a in od.aliases:
            if tensor_method(a) == a + "_" and getattr(Tensor, a + "_", 0) is getattr(Tensor, name):
                name = a + "_"
                break
    sigs = INPLACE_SIGNATURES.get(name)
    if sigs is not None:
        return parser_error(name, sigs, args, kw)
    if od.seq or od.opt_names or od.n_in > 2:
        return None
    if od.n_in == 1:
        if not (args or kw):
            return None
        # Python names torch's method by its class: TensorBase for a call spelled x.exp_(1),
        # Tensor for a method bound first (getattr(x, "exp_")(1), x.exp_(*args))
        owner = "TensorBase." if callee.endswith("." + name) and plain_call() else "Tensor."
        return no_arguments(owner + name, args, kw)
    # a binary op's one overload (no hidden ones): torch explains by it whatever the count
    return parse_error(name, f"(Tensor {od.in_names[1]})", args, kw)


def _translate_error(od, e, arrays, opts=(), kw=None):
    msg = str(e)
    if "int_args" in od.__dict__ and msg.startswith("invalid literal for int()"):
        err = _int_arg_error(od, opts, kw or {})
        if err is not None:
            return err
    if type(e).__name__ == "AxisError":
        import re

        m = re.search(r"axis (-?\d+) is out of bounds for array of dimension (\d+)", msg)
        if m:
            d, n = int(m.group(1)), int(m.group(2))
            lo, hi = (-1, 0) if n == 0 else (-n, n - 1)
            return IndexError(
                f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})"
            )
    if "broadcast" in msg:
        return broadcast_error([a.shape for a in arrays if hasattr(a, "shape")])
    return None


def _int_arg_error(od, opts, kw) -> TypeError | None:
    """torch's parser error for an option of ``od`` that should be an int or a tuple of ints
    (``od.int_args``: option name -> "int" or "tuple of ints", set next to the op) and is not:
    the kernel's int() met it (a str)."""
    from .arg_errors import int_list, type_name

    for k, name in enumerate(od.opt_names):
        kind = od.int_args.get(name)
        v = opts[k] if k < len(opts) else kw.get(name)
        if kind is None or v is None or type(v) is int:
            continue
        label = label_of(od)
        if kind != "int" and isinstance(v, (tuple, list)):
            try:
                int_list(label, name, od.n_in + k + 1, v)
            except TypeError as e:
                return e
            continue
        return TypeError(
            f"{label}(): argument '{name}' (position {od.n_in + k + 1}) must be {kind}, "
            f"not {type_name(v)}"
        )
    return None


def _dim_type_error(od, value, ins, opts, kw) -> TypeError | None:
    """torch's parser error for the dim option of ``od`` given ``value`` (neither int nor
    name): ``fn(): argument 'dim' (position k) must be int, not float`` ("tuple of ints" where
    ``od.int_args`` says so), or the "invalid combination" error of the call ``ins`` + ``opts``
    where ``od.dim_overloads`` lists torch's signatures (an op that torch overloads on its dim:
    sum, squeeze ...); None when ``value`` is no option of the call."""
    from .arg_errors import (
        as_int,
        int_list_error,
        invalid_arguments,
        invalid_method_arguments,
        tensor_method,
        type_name,
    )

    hook = od.__dict__.get("dim_error")
    if hook is not None:  # an op whose torch form words its own (norm: linalg_vector_norm's)
        err = hook(opts, kw)
        if err is not None:
            return err
    spelled = _spelled(od)
    label = od.__dict__.get("label", od.name) if spelled is None else spelled[0]
    renames = {} if spelled is None else spelled[2]
    kinds = od.__dict__.get("int_args", {})
    sigs = od.__dict__.get("dim_overloads")
    # a method counts its arguments after self (and lists its signatures without the input)
    method = tensor_method(label) if ins and isinstance(ins[0], Tensor) else None
    if isinstance(value, (tuple, list)):
        bad = next((i for i, x in enumerate(value) if as_int(x, i == 0) is None), None)
        if bad:  # an int first chose the int[] overload, which failed to unpack this one
            name = next(n for k, n in enumerate(od.opt_names) if _option(opts, kw, k, n) is value)
            return int_list_error(method or label, renames.get(name, name), None, value, bad)
    if sigs is not None:
        # torch's parser explains the failure by one signature when only one has room for
        # as many arguments as were given, and lists them all otherwise
        given = len(ins) + len(opts) + len(kw)
        params = [
            [p.split(" = ")[0].rsplit(" ", 1) for p in sig[1:-1].split(", ") if p != "*"]
            for sig in sigs
        ]
        fits = [ps for ps in params if len(ps) >= given]
        if len(fits) != 1:
            if method is not None:
                return invalid_method_arguments(method, (*ins, *opts), kw, sigs)
            return invalid_arguments(label, (*ins, *opts), kw, sigs)
        kinds = {name: kind for kind, name in fits[0]}
    for k, name in enumerate(od.opt_names):
        if _option(opts, kw, k, name) is value:
            kind = kinds.get(name, "int")
            # torch's parser numbers an argument passed by position only
            pos = od.n_in + k + (method is None) if k < len(opts) else None
            if kind == "tuple of ints" and isinstance(value, (tuple, list)):
                return int_list_error(method or label, renames.get(name, name), pos, value, 0)
            at = "" if pos is None else f" (position {pos})"
            return TypeError(
                f"{method or label}(): argument '{renames.get(name, name)}'{at} "
                f"must be {kind}, not {type_name(value)}"
            )
    return None


def _option(opts: tuple, kw: dict, k: int, name: str):
    """Option ``k`` (``name``) of a call: given by position or by keyword."""
    return opts[k] if k < len(opts) else kw.get(name)


def broadcast_error(shapes) -> RuntimeError | None:
    """torch's error for the first of ``shapes`` that does not broadcast with those before it."""
    a = ()
    for b in shapes:
        n = max(len(a), len(b))
        out = []
        for k in range(1, n + 1):  # torch reports the trailing-most mismatch
            x = a[-k] if k <= len(a) else 1
            y = b[-k] if k <= len(b) else 1
            if x != y and x != 1 and y != 1:
                return RuntimeError(
                    f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {n - k}"
                )
            out.append(y if x == 1 else x)  # (a 0 stays 0 against a 1)
        a = tuple(reversed(out))
    return None


# ---------------------------------------------------------------------- sparse / quantized inputs
class NonStridedError(RuntimeError):
    """Raised by a sparse or quantized tensor's ``_data``: a dense op was handed one."""


# op name -> handler(*args, **kwargs) run when a dense op meets a sparse or quantized input
# (ember.mm(sparse, dense), ember.equal(q1, q2) ...); NotImplemented from it keeps the error.
# The check costs the dense path nothing: it is an except clause around the input loop.
NON_STRIDED: dict = {}


def non_strided_call(name: str, args: tuple, kwargs: dict):
    """``NON_STRIDED[name](*args, **kwargs)``, or NotImplemented when no handler takes them."""
    h = NON_STRIDED.get(name)
    return NotImplemented if h is None else h(*args, **kwargs)


def caller_op_name() -> str:
    """The name of the op whose public function read ``_data`` (for a non-strided tensor's
    error message), from the reading frame two levels up."""
    f = sys._getframe(2)
    od = f.f_locals.get("od")
    return getattr(od, "name", None) or f.f_code.co_name


# ---------------------------------------------------------------------- the hot path
def apply(od: OpDef, args: tuple, kw: dict):
    """Run op ``od`` on ``args``/``kw`` (what its public function does)."""
    return od.public(*args, **kw)


def _make_public(od: OpDef, dunder: bool = False):
    """The op's public function: unwrap, promote, run the kernel, wrap, infer names, record.

    Everything fixed at registration time is bound here once, so a call does no introspection.
    """
    n = od.n_in
    kernel = od.kernel
    seq = od.seq
    casts = od.promote or od.floating
    dim_args = od.dim_args
    view = od.view
    rule = od.rule
    names_always = od.names_always
    n_tensors = n if od.tensors_only is True else int(od.tensors_only)  # inputs no number takes
    opmath_scalar = od.opmath_scalar
    out_as_dtype = od.out_as_dtype
    # ember.named.broadcast_by_name(): named operands of a unify-rule op are aligned by name, and
    # masked_fill's mask (it broadcasts against its input as a binary op's operand does)
    by_name = (
        (rule is _unify_inputs or rule is _broadcast_to_self)
        and not seq
        and od.name not in _UNALIGNED
    )
    one = n == 1 and not seq  # one input (its common plain-tensor case skips the loop)
    # the index of an op's only dim option (-1: several), for the no-resolve test
    dim0 = dim_args[0][0] if len(dim_args) == 1 else -1

    def public(*args, **kw):
        na = len(args)
        if na < n:
            args = _inputs_from_kwargs(od, args, kw)
            na = len(args)
        out = kw.pop("out", None) if kw else None
        if out is not None and out_as_dtype:
            kw = _dtype_of_out(out, kw)
        if seq:
            ins = tuple(args[0])
            if not ins:
                raise ValueError(f"{od.name}(): expected a non-empty list of Tensors")
            opts = args[1:]
        elif na == n:  # (no options: no slicing)
            ins = args
            opts = ()
        else:
            ins = args[:n]
            opts = args[n:]
        need_grad = named = mixed = scalar = False
        t = ins[0] if one else None
        if type(t) is Tensor:  # one plain tensor input: the loop below, unrolled
            first = t._data
            arrays = [first]
            if t.requires_grad:
                need_grad = True
            if t._names is not None:
                named = True
            loop = ()
        else:
            arrays = []
            first = None
            loop = ins
        try:
            for t in loop:
                tt = type(t)
                # (a plain Tensor is tested first: every call has one; a subclass is computed as
                # a Tensor when it never dispatches or dispatch is off; any other goes through
                # __torch_function__ in the else branch)
                if tt is Tensor or (
                    tt is not float
                    and tt is not int
                    and isinstance(t, Tensor)
                    and (tt in _TF_PLAIN or _TF_OFF[0])
                ):
                    a = t._data
                    if first is None:
                        first = a
                    elif type(a) is not type(first):
                        a = _same_device(od, first, a, t, len(arrays))
                    else:
                        if _SEVERAL_GPUS[0] and type(a) is not _ndarray:
                            _same_gpu(od, first, a, len(arrays))
                        if a.dtype is not first.dtype:
                            mixed = True
                    arrays.append(a)
                    if t.requires_grad:
                        need_grad = True
                    if t._names is not None:
                        named = True
                elif tt is float or tt is int:  # a Python scalar: the common second operand
                    if len(arrays) < n_tensors:
                        raise _bad_input(od, len(arrays), t, args, kw)
                    if tt is int and not _I64_MIN <= t < _I64:
                        _dt.check_wide_int(t, ins if casts else ())  # (promoting ops)
                    arrays.append(t)
                    scalar = True
                elif isinstance(t, _SCALARS):
                    if len(arrays) < n_tensors:
                        raise _bad_input(od, len(arrays), t, args, kw)
                    if isinstance(t, _generic):  # numpy scalars promote like Python's, as in torch
                        t = _dt.numpy_scalar(t)
                        ins = _replace_at(ins, len(arrays), t)
                    arrays.append(t)
                    scalar = True
                elif dunder and isinstance(t, _ndarray):  # torch's operators leave an array to
                    # numpy (it computes and wraps a tensor, or Python raises); functions refuse
                    return NotImplemented
                elif dunder and _foreign(t):  # the operator form: Python tries the other side
                    return NotImplemented
                else:
                    # a Tensor subclass or tensor-like with __torch_function__ takes the call
                    r = _overloaded_call(
                        public if dunder else od.public, public, args, kw, out, dunder
                    )
                    if r is _NOT_OVERLOADED:
                        raise _bad_input(od, len(arrays), t, args, kw)
                    return r
        except NonStridedError:
            r = NotImplemented if out is not None else non_strided_call(od.name, args, kw)
            if r is NotImplemented:
                raise
            return r
        if first is None:  # numbers only: torch's parser refuses the first (as given)
            if not seq and isinstance(ins[0], _SCALARS) and od.__dict__.get("number_self"):
                # add/sub/mul/div(1, 2): torch takes the first as a 0-d tensor (ints int64,
                # floats the default dtype)
                from .ops.creation import tensor as _tensor

                return public(_tensor(ins[0]), *args[1:], out=out, **kw)
            raise _bad_input(od, 0, ins[0] if seq else args[0], args, kw)
        if named and by_name and _by_name.on:
            r = _align_call(od, ins, opts, kw, out)
            if r is not None:
                return r
        xp = np if type(first) is _ndarray else (_XP.get(type(first)) or array_module(first))
        # (one dim option given as an int, no keywords: nothing to resolve)
        if (
            dim_args
            and (opts or kw)
            and (kw or dim0 < 0 or (dim0 < len(opts) and type(opts[dim0]) is not int))
        ):
            opts, kw = _resolve_dims(od, ins[0], opts, kw)
        fd = first.dtype
        half = None
        if scalar and opmath_scalar and (fd is _F16 or fd is _BF16) and not mixed:
            # torch computes these in float32 and rounds once (numpy rounds the scalar first)
            half = fd
            arrays = [
                a.astype(np.float32) if getattr(a, "dtype", None) is fd else a for a in arrays
            ]
        elif casts and (mixed or fd.kind not in "fc") and _needs_promotion(od, ins, arrays):
            _promote_arrays(od, ins, arrays)
        try:
            if seq:
                r = kernel(xp, arrays, *opts, **kw)
            elif opts or kw:
                r = kernel(xp, *arrays, *opts, **kw)
            else:
                r = kernel(xp, *arrays)
        except (ValueError, IndexError) as e:
            if named:
                _names_before_shapes(od, ins, opts, kw)
            err = _translate_error(od, e, arrays, opts, kw)
            if err is None:
                raise
            raise err from None
        except RuntimeError as e:  # (NotImplementedError too: a missing kernel)
            if named:
                _names_before_shapes(od, ins, opts, kw)
            if by_name and _kernel_refusal(e):
                _checks_before_kernel(od, arrays, out)
            elif out is not None and rule is _keep and _kernel_refusal(e):
                _unary_out_before_kernel(od, ins, arrays, out)
            raise
        except MemoryError as e:
            raise out_of_memory(e, device_of(first).type) from None
        except _DimTypeError as e:
            if named and dim_args and e.value is None:  # a None dim: a name lookup (spec)
                _none_dim_lookup(od, ins[0], opts, kw)
            err = _dim_type_error(od, e.value, ins, opts, kw)
            if err is None:
                raise
            raise err from None
        except OverflowError:
            # a Python int outside the tensor's integer range wraps, like torch (uint8 + 300)
            _wrap_int_scalars(arrays)
            r = kernel(xp, arrays, *opts, **kw) if seq else kernel(xp, *arrays, *opts, **kw)
        except TypeError as e:
            # (when the kernel's error is about the None or the missing dim, not another one)
            if named and dim_args and ("NoneType" in str(e) or '"dim"' in str(e)):
                _none_dim_lookup(od, ins[0], opts, kw)
            r = _elementwise_0d(od, seq, arrays, xp, opts, kw)
        if half is not None and r.dtype == np.float32:
            r = r.astype(half)
        if named and not _state.names_off:
            if rule is None:
                names = _fallback_names(ins, r)
            else:
                try:
                    names = rule(ins, *opts, **kw)
                except RuntimeError as e:
                    raise _name_error(od, e) from None
        elif names_always:
            names = rule(ins, *opts, **kw)
        else:
            names = None
        tr = type(r)
        if tr is tuple:
            res = outs = _wrap_many(od, ins, r, names)
        else:
            if tr is not _ndarray and isinstance(r, _generic):
                r = np.asarray(r)
            res = _new(Tensor)
            res._data = r
            res.requires_grad = False
            res._grad_fn = None
            res._grad = None
            res._names = names
            if view:
                base = ins[0]
                res._ver = base._ver
                ex = base._extra  # (base._base_or_self(), inline)
                b = ex.get("base") if ex else None
                res._extra = {"base": base if b is None else b}
                if not _state.enabled:  # torch refuses recorded in-place writes to it later
                    res._extra["ng"] = _state.inference  # made in no_grad or inference mode
                    if base.requires_grad:  # torch's view requires grad then: no in-place at all
                        res._extra["ngr"] = base._ver[0]  # (its base must not change since)
                        res.requires_grad = True  # (a leaf no gradient reaches: see below)
            else:
                res._ver = [0]
                res._extra = None
                if _INF_OPEN[0] and _state.inference:
                    res._extra = {"inf": True}  # an inference tensor (views: via their base)
            outs = (res,)
        if _VMAP_SLICES:  # under vmap: results of per-element values are per-element too
            _vmap_mark(ins, outs, od.name)
        if need_grad and _state.enabled and od.vjp is not None:
            # record the node (inline: this is the per-op cost of the tape)
            edges = []
            vers = None
            for t in ins:
                if (type(t) is Tensor or isinstance(t, Tensor)) and t.requires_grad:
                    fn = t._grad_fn
                    if fn is None:
                        ex = t._extra
                        if ex is None or "ngr" not in ex:
                            edges.append((t, 0))
                        else:  # a view made without grad: no edge (its base must be unchanged)
                            check_no_grad_view(t)
                            edges.append(None)
                    else:
                        ex = t._extra
                        if ex is None:
                            edges.append((fn, 0))
                        else:
                            if "gv" in ex and ex["gv"] != t._ver[0]:
                                # a view whose base changed in place: its grad_fn is stale
                                fn = _refresh_view(t)
                                ex = t._extra
                            edges.append((fn, ex.get("nr", 0)) if fn is not None else None)
                else:
                    edges.append(None)
            saved = []
            bound = None
            has_res = False
            for kind, key in od.spec:
                if kind == 5:  # kept only for another input's gradient, or by a one-output call
                    kind, key, cond = key
                    if edges[cond] is None if cond is not None else len(outs) != 1:
                        saved.append(None)
                        continue
                if kind == 0:
                    t = ins[key]
                    saved.append(t)
                    if type(t) is Tensor or isinstance(t, Tensor):
                        if _INF_USED[0] and _inference_tensor(t) and not _state.inference:
                            raise RuntimeError(INFERENCE_SAVE_MSG)
                        if vers is None:
                            vers = [(t, t._ver[0])]
                        else:
                            vers.append((t, t._ver[0]))
                    elif vers is None:
                        vers = []  # a saved number: the node is still freed after backward
                elif kind == 2:
                    if bound is None:
                        bound = _bind_options(od, opts, kw) if (opts or kw) else od.opt_defaults
                    saved.append(bound.get(key))
                elif kind == 4:
                    saved.append(tuple([e is not None for e in edges]))
                elif kind == 1:
                    saved.append(_RESULT)
                    has_res = True
                elif kind == 6:  # an input's dtype (None for a number: name rules tell overloads)
                    t = ins[key]
                    saved.append(t.dtype if isinstance(t, Tensor) else None)
                elif kind == 7:  # an input's raw array: its strides and offset, not its values
                    saved.append(ins[key]._data)
                elif kind == 8:  # the index output of a (values, indices) call
                    if len(outs) == 1:
                        saved.append(None)
                    else:
                        t = outs[-1]  # an integer tensor: no grad_fn, so no reference cycle
                        saved.append(t)
                        if vers is None:
                            vers = [(t, t._ver[0])]
                        else:
                            vers.append((t, t._ver[0]))
                elif od.seq:  # kind 3 of a sequence op (cat): the shapes of all its tensors
                    saved.append(tuple(getattr(x, "shape", ()) for x in ins))
                else:  # kind 3: an input's shape
                    t = ins[key]
                    saved.append(t._data.shape if isinstance(t, Tensor) else ())
            node = _new(Node)  # no __init__ call: the slots are set right here
            node.op = od
            node.edges = edges
            node.saved = saved
            node.vers = vers
            if len(outs) == 1:
                t = outs[0]
                a = t._data
                if a.dtype.kind in _FLOAT_KINDS:
                    t.requires_grad = True
                    t._grad_fn = node
                elif out_as_dtype:  # a dtype= (or out=) that leaves the float types
                    _no_grad_dtype(od, out, a)
                node.meta = ((a.shape, a.dtype, t._names),)
            else:
                meta = []
                for k, t in enumerate(outs):
                    a = t._data
                    if k < od.n_diff_out and a.dtype.kind in _FLOAT_KINDS:
                        t.requires_grad = True
                        t._grad_fn = node
                    meta.append((a.shape, a.dtype, t._names))
                node.meta = meta
            if has_res:
                if vers is None:
                    vers = []
                if len(outs) == 1:  # (the common case, without the loop)
                    t = outs[0]  # (res is a tuple for a tuple-returning kernel)
                    node.res = [t._data]
                    vers.append((_SavedOutput(t._ver, t._data, 0), t._ver[0]))
                else:
                    node.res = [t._data for t in outs]
                    for k, t in enumerate(outs):
                        vers.append((_SavedOutput(t._ver, t._data, k), t._ver[0]))
                node.vers = vers
            if _SAVED_HOOKS:  # saved_tensors_hooks: the node keeps what pack returns
                _pack_node(node, outs[0] if has_res else None)
            if view:
                _note_views(od, ins[0], outs, opts, kw)  # how to replay it from its base
            if _state.anomaly:
                from ..autograd.anomaly import capture_trace

                node.trace = capture_trace()
        if out is not None:
            return _write_out(od, out, res, ins)
        return res

    return public


_F16 = np.dtype(np.float16)
_BF16 = _dt.bfloat16.np


def _elementwise_0d(od, seq, arrays, xp, opts, kw):
    """An elementwise kernel that failed on 0-d arrays, run again on 1-element arrays: numpy's
    ufuncs turn 0-d arrays into scalars, which ``out=`` and item assignment refuse (only on
    this failure path, so the common call pays nothing)."""
    if seq or od.dim_args or od.rule not in (_keep, _unify_inputs):
        raise  # noqa: PLE0704  (the kernel's own TypeError)
    if not all(getattr(a, "ndim", 0) == 0 for a in arrays):
        raise  # noqa: PLE0704
    r = od.kernel(xp, *[a.reshape(1) if hasattr(a, "ndim") else a for a in arrays], *opts, **kw)
    if type(r) is tuple:
        return tuple(x.reshape(()) for x in r)
    return r.reshape(())


def _wrap_int_scalars(arrays):
    ref = next((a for a in arrays if hasattr(a, "dtype") and a.dtype.kind in "iu"), None)
    if ref is None:
        raise OverflowError  # not an out-of-range integer scalar: let the caller see it
    for i, a in enumerate(arrays):
        if type(a) is int:
            if a >= 2**64:  # past uint64 torch's parser takes no int at all
                raise OverflowError("int too big to convert") from None
            if a < -(2**63):
                raise OverflowError("can't convert negative int to unsigned") from None
            arrays[i] = _dt.wrap_int(a, ref.dtype)


def _dim_by_name(od, t, dim) -> int:
    """``normalize_dim`` whose name-lookup errors name the op (spec 4.10)."""
    try:
        return normalize_dim(t, dim)
    except RuntimeError as e:
        raise _name_error(od, e) from None


def _resolve_dims(od, t, opts, kw):
    """Dim options given as names (or 0-d integer tensors) become indices of ``t``; numpy's
    spellings ``axis=`` and ``keepdims=`` stand for ``dim=`` and ``keepdim=``, as in torch."""
    if kw and ("axis" in kw or "keepdims" in kw):
        kw = _numpy_spellings(od, kw)
    for i, nm in od.dim_args:
        if i < len(opts):
            v = opts[i]
        elif nm in kw:
            v = kw[nm]
        else:
            continue
        if type(v) is int:
            continue
        if v is None:
            # a dim that None cannot mean (all dims, as None or () defaults say) is a name
            # lookup on a named tensor (spec)
            if t._names is not None and od.opt_defaults.get(nm, 0) not in (None, ()):
                _dim_by_name(od, t, v)
            continue
        if isinstance(v, str):
            v = _dim_by_name(od, t, v)
            if nm == "dims":  # one name for an int[] is a one-dim list (flip's kernel refuses
                v = (v,)  # a bare int, as torch's function form does)
        elif isinstance(v, (list, tuple)) and not all(type(x) is int for x in v):
            if t._names is not None and any(isinstance(x, str) or x is None for x in v):
                v = type(v)(_dim_by_name(od, t, x) for x in v)
            else:
                v = _dim_list(od, t, v, opts, kw)
        elif isinstance(v, Tensor) and v._data.dtype.kind in "iu":
            if od.__dict__.get("list_dims"):  # torch's int[] (flip, permute): no tensor
                raise _dim_type_error(od, v, (t,), opts, kw) or _DimTypeError(v)
            v = v.__index__()  # an integer tensor of one element, as torch takes it
        elif type(v) is float or isinstance(v, Tensor) or (type(v) is bool and _no_bool(od, i)):
            # torch's parser refuses it; the kernels would compare or slice with it (only
            # non-int dims reach this branch: an int dim pays nothing)
            raise _dim_type_error(od, v, (t,), opts, kw) or _DimTypeError(v)
        else:
            continue
        if i < len(opts):
            opts = opts[:i] + (v,) + opts[i + 1 :]
        else:
            kw[nm] = v
    return opts, kw


def _no_bool(od, i: int) -> bool:
    """Whether none of torch's signatures of ``od`` (``od.dim_overloads``) takes a bool where
    option ``i`` stands (std(x, False) is std's unbiased): its dim refuses one (failure path).
    An internal op (_gather) is left as it was: its caller's argument order is not its own."""
    if od.name[0] == "_":
        return False
    for sig in od.__dict__.get("dim_overloads", ()):
        params = sig[1:-1].split(", ")
        if len(params) > od.n_in + i and params[od.n_in + i].startswith("bool "):
            return False
    return True


def _dim_list(od, t, v, opts: tuple, kw: dict):
    """A dim list ``v`` holding more than ints as ints (numpy integers, 0-d integer tensors, a
    bool past the first), or torch's parser error for it (failure path)."""
    from .arg_errors import as_int

    ints = [as_int(x, i == 0) for i, x in enumerate(v)]
    if None in ints:
        raise _dim_type_error(od, v, (t,), opts, kw) or _DimTypeError(v[ints.index(None)])
    return type(v)(ints)


def _none_dim_lookup(od, t, opts, kw) -> None:
    """A dim given as None that the kernel refused (None does not mean all dims there) is a name
    lookup on a named tensor: the spec's "Please look up dimensions by name" (failure path)."""
    if t._names is None:
        return
    for i, nm in od.dim_args:
        if (opts[i] if i < len(opts) else kw.get(nm, 0)) is None:
            normalize_dim(t, None)


def _numpy_spellings(od, kw):
    kw = dict(kw)
    for alias, nm in (("axis", "dim"), ("keepdims", "keepdim")):
        if alias in kw and nm in od.opt_defaults:
            if nm in kw:
                raise TypeError(f"{od.name}() got multiple values for argument '{nm}'")
            kw[nm] = kw.pop(alias)
    return kw


def _replace_at(ins: tuple, i: int, v) -> tuple:
    return ins[:i] + (v,) + ins[i + 1 :]


def _inputs_from_kwargs(od, args, kw):
    args = list(args)
    for nm in od.in_names[len(args) :]:
        if nm in kw:
            args.append(kw.pop(nm))
        elif nm == "input" and "self" in kw:
            args.append(kw.pop("self"))
        else:
            raise TypeError(f"{od.name}() missing required argument '{nm}'")
    return tuple(args)


def _same_device(od, first, a, t, k: int = 1):
    """``a`` (input ``k``) in ``first``'s array module: a 0-dim cpu tensor joins a cuda op as a
    scalar, like torch; any other mix of devices is torch's error."""
    xp = array_module(first)
    if array_module(a) is xp:
        return a
    if a.ndim == 0:
        return a.item() if type(a) is _ndarray else a
    raise _mixed_devices(od, device_of(first), t.device, k)


def _same_gpu(od, first, a, k: int) -> None:
    """Inputs on two GPUs are torch's error too (checked once a GPU other than 0 is in use)."""
    d0, d1 = device_of(first), device_of(a)
    if d0 != d1:
        raise _mixed_devices(od, d0, d1, k)


def _mixed_devices(od, d0, d1, k: int) -> RuntimeError:
    if "meta" in (d0.type, d1.type):  # torch's meta kernels check devices in their own words
        return RuntimeError(f"Tensor on device {d1} is not on the expected device {d0}!")
    arg = od.in_names[k] if k < len(od.in_names) else f"#{k}"
    return RuntimeError(
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{d0} and {d1}! (when checking argument for argument {arg} in method {od.name})"
    )


def _fallback_names(ins, r):
    # ops with no specific rule: a result with the input's shape keeps its names, else unnamed
    src = next(t for t in ins if isinstance(t, Tensor) and t._names is not None)
    shape = r[0].shape if type(r) is tuple else r.shape
    return src._names if shape == src._data.shape else None


def _wrap_many(od, ins, rs, names):
    outs = []
    for k, r in enumerate(rs):
        if type(r) is not _ndarray and isinstance(r, _generic):
            r = np.asarray(r)
        t = _new(Tensor)
        t._data = r
        t.requires_grad = False
        t._grad_fn = None
        t._grad = None
        t._names = names[k] if type(names) is list else names
        if od.view:
            t._ver = ins[0]._ver
            t._extra = {"base": ins[0]._base_or_self(), "nr": k}
            if not _state.enabled:
                t._extra["ng"] = _state.inference
                if ins[0].requires_grad:
                    t._extra["ngr"] = t._ver[0]
                    t.requires_grad = True
        else:
            t._ver = [0]
            t._extra = {"nr": k} if k else None
            if _INF_OPEN[0] and _state.inference:
                t._extra = {"nr": k, "inf": True}
        outs.append(t)
    return od.out_type(*outs) if od.out_type is not None else tuple(outs)


def _bind_options(od, opts, kw) -> dict:
    bound = dict(od.opt_defaults)
    vp = od.var_pos
    if vp is None:
        bound.update(zip(od.opt_names, opts))
    else:
        bound.update(zip(od.opt_names[:vp], opts[:vp]))
        bound[od.opt_names[vp]] = tuple(opts[vp:])
    bound.update(kw)
    return bound


def _dtype_of_out(out, kw: dict) -> dict:
    """``kw`` with ``dtype=`` the out= tensor's (an out_as_dtype op's), or torch's error for a
    ``dtype=`` that is not the out tensor's."""
    if not isinstance(out, Tensor):
        return kw  # _write_out raises torch's TypeError
    want = kw.get("dtype")
    if want is None:
        return {**kw, "dtype": out.dtype}
    if want is not out.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_dt.C_NAMES[want.name]}, but got "
            f"{_dt.C_NAMES[out.dtype.name]} instead"
        )
    return kw


def _out_ad_error(od) -> RuntimeError:
    """torch's refusal of ``out=`` for a call autograd records."""
    # torch names its op (a private ember op's label: _where is where; torch.special's ops are
    # aten::special_<name>); float_power writes through pow's out=
    shown = getattr(od, "__dict__", {}).get("label") or od.name
    shown = _OUT_AD_NAMES.get(shown, shown)
    return RuntimeError(
        f"{shown}(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad."
    )


def _no_grad_dtype(od, out, a) -> None:
    """torch's autograd error for a differentiable op whose ``dtype=`` (or ``out=``) result is
    no float type: ``x.sum(dtype=torch.int32)`` of an ``x`` that requires grad."""
    if out is not None:
        raise _out_ad_error(od)
    raise RuntimeError(f"Autograd not support dtype: {_dt.array_scalar_name(a)}")


def _write_out(od, out, res, ins=(), part: bool = False):
    """Copy a result into a user's ``out=`` tensor (resized like torch, names checked); ``part``:
    one tensor of a tuple result."""
    from .names import check_out_names, check_resize

    if od.__dict__.get("no_out"):  # torch's signature has no out= (isnan, isinf, ...)
        raise TypeError(f"{od.name}() got an unexpected keyword argument 'out'")
    if isinstance(res, tuple):
        if not isinstance(out, (tuple, list)):
            raise TypeError(
                f"{od.name.lstrip('_')}(): argument 'out' must be tuple of Tensors, not "
                f"{type(out).__name__}"
            )
        if getattr(od, "__dict__", {}).get("indices_checked_first"):
            # torch's median checks the indices' dtype before the values'
            for o, r in zip(reversed(out), reversed(res)):
                if isinstance(o, Tensor) and o.dtype != r.dtype:
                    od.out_dtype(o, r, ins)
        for o, r in zip(out, res):
            _write_out(od, o, r, ins, True)
        # torch hands back its named tuple's out= variant (max_out: values=, indices=) around
        # the out= tensors
        if not hasattr(res, "_fields"):
            return out
        from .return_types import out_variant

        return out_variant(type(res))(*out)
    if _state.enabled and (res.requires_grad or getattr(out, "requires_grad", False)):
        raise _out_ad_error(od)
    if not isinstance(out, Tensor):
        raise TypeError(f"{od.name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    oa = out._data
    if type(oa) is not type(res._data) and device_of(oa) != device_of(res._data):
        # another device (numpy, cupy and meta arrays; a memmap is a cpu array too)
        raise RuntimeError(
            f"Attempting to copy from device {device_of(res._data)} to device "
            f"{device_of(oa)}, but cross-device copies are not allowed!"
        )
    if res.dtype != out.dtype and od.out_dtype is not None:
        od.out_dtype(out, res, ins)  # a composite's own dtype check comes first in torch
    if ins:
        # an input viewing the out tensor's memory (or the other way round): only such a pair
        # pays for torch's overlap check (the common fresh out tensor shares no base)
        ob = oa.base
        if ob is None:
            ob = oa
        for t in ins:
            if isinstance(t, Tensor):
                a = t._data
                b = a.base
                if (a if b is None else b) is ob:
                    _check_out_overlap(od, out, t, part)
    if res.dtype != out.dtype and not _dt.can_cast(res.dtype, out.dtype):
        _check_writable(oa)  # torch refuses an expanded out before it compares dtypes
        raise _cast_error(res.dtype, out.dtype)
    try:
        names = check_out_names(out, res._names)
    except RuntimeError as e:
        raise _name_error(od, e) from None  # named by the public op (_cat's error is cat's)
    if oa.shape != res._data.shape:
        if getattr(od, "rule", None) is _unify_inputs:
            _check_writable(oa)  # torch's elementwise ops check before resizing, others resize
        if any(t is out for t in ins) and _out_overlap_rule(od, False) == _PARTIAL:
            # torch's elementwise ops do not resize an out= that is also an input
            raise RuntimeError(
                f"output with shape {list(oa.shape)} doesn't match the broadcast shape "
                f"{list(res._data.shape)}"
            )
        if out._names is not None:
            check_resize(out, res._data.shape)
        if oa.size and not getattr(od, "__dict__", {}).get("quiet_resize"):
            _warn_resized(oa.shape, res._data.shape)
        out._data = res._data.astype(oa.dtype)
    else:
        try:
            oa[...] = res._data
        except ValueError:  # numpy's read-only destination: an expanded out tensor (refused)
            _check_writable(oa)  # or a view of one with distinct elements (made writable)
            oa[...] = res._data
    out._names = names
    out._ver[0] += 1
    return out


# torch's name for an op in that refusal where it is not the op's label: the private ops ember
# registers under an underscore, and the ops torch writes through another's out=
_OUT_AD_NAMES = {
    "_cat": "cat",
    "_stack": "stack",
    "_index_select": "index_select",
    "_gather": "gather",
    "float_power": "pow",
    "outer": "mul",
    "norm": "linalg_vector_norm",
    "cross": "linalg_cross",
}
_PARTIAL, _ANY = 1, 2  # torch refuses an out= sharing some elements with an input / any element
# the ops that refuse any overlap of out= with an input (torch's assert_no_overlap), and the
# elementwise ones (by their names rule) that do not check at all
_OUT_NO_OVERLAP = frozenset(
    ("_cat", "_stack", "_take", "take", "masked_select", "outer", "cross", "linalg_cross")
)
_OUT_UNCHECKED = frozenset(("tril", "triu", "softmax", "log_softmax", "mvlgamma", "_special_ndtr"))
# the ops with (values, indices) outs that check like the elementwise ops
_OUT_PARTIAL = frozenset(("max", "min", "cummax", "cummin", "sort", "topk", "kthvalue"))


def _out_overlap_rule(od, part: bool) -> int:
    """How torch checks an out= tensor against the op's inputs: 0 (not at all), _PARTIAL (the
    same elements in the same layout are fine: torch.add(a, b, out=a)) or _ANY. ``part``: the
    out tensor is one of a tuple's."""
    name = getattr(od, "name", "")
    if name in _OUT_NO_OVERLAP:
        return _ANY
    if part and name in _OUT_PARTIAL:
        return _PARTIAL
    rule = getattr(od, "rule", None)
    if (rule is _unify_inputs or rule is _keep) and name not in _OUT_UNCHECKED:
        return _PARTIAL
    return 0


def _check_out_overlap(od, out: Tensor, t: Tensor, part: bool) -> None:
    """torch's refusal of an out= tensor whose memory an input shares (a rare pair: the caller
    found the two arrays on one base). An expanded out is refused first."""
    how = _out_overlap_rule(od, part)
    if not how or (how == _PARTIAL and t._data is out._data):
        return  # torch.add(a, b, out=a): the very same elements
    from .ops.indexing import _OVERLAP_MSG, _overlaps

    _check_writable(out._data)
    if _overlaps(out._data, t._data, full_ok=how == _PARTIAL):
        raise RuntimeError(_OVERLAP_MSG)


def _check_operands_overlap(od, a, operands) -> None:
    """:func:`_check_inplace_overlap` of self's array ``a`` with each Tensor of ``operands``
    (only views can share memory: two arrays that own theirs are not compared)."""
    for o in operands:
        if isinstance(o, Tensor) and o._data is not a:
            b = o._data
            if b.base is not None or a.base is not None:
                _check_inplace_overlap(od, a, b)


def _check_inplace_overlap(od, a, b) -> None:
    """torch refuses an in-place op reading an operand that shares some, not all, of self's
    elements (``x[1:].add_(x[:-1])``); the callers pass only arrays of which one is a view.
    Only torch's elementwise ops of several operands check (an index_fill_ value may be one of
    self's elements)."""
    if od.rule is not _unify_inputs or od.name in _OUT_UNCHECKED:
        return
    from .ops.indexing import _OVERLAP_MSG, _overlaps

    if _overlaps(a, b, full_ok=True):
        _check_writable(a)
        raise RuntimeError(_OVERLAP_MSG)


def _warn_resized(old, new) -> None:
    """torch's warning for an out= tensor with elements that had to be resized, at the user's
    line (Python's default filter then shows it once per call site, as torch's does)."""
    from .ops.conversion import warn_user

    warn_user(
        f"An output with one or more elements was resized since it had shape {list(old)}, "
        f"which does not match the required output shape {list(new)}. This behavior is "
        "deprecated, and in a future PyTorch release outputs will not be resized unless they "
        "have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, "
        "to zero elements with t.resize_(0)."
    )


def _check_writable(a) -> None:
    """In-place writes into an expanded (broadcast) view would hit one element many times."""
    w = getattr(a.flags, "writeable", None)  # numpy marks broadcast views read-only; cupy has none
    if w is False or (w is None and a.size > 1 and 0 in a.strides):
        if not any(n > 1 and not st for n, st in zip(a.shape, a.strides)):
            # a view of an expanded tensor whose own elements are distinct (x.expand(2, 3)[0]):
            # torch writes it; numpy marked it read-only with the broadcast it came from
            if w is None:
                return
            try:
                a.flags.writeable = True
                return
            except ValueError:  # memory that is itself read-only
                pass
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )


def _cast_error(frm, to):
    return RuntimeError(
        f"result type {scalar_name(frm)} can't be cast to the desired output type {scalar_name(to)}"
    )


# in-place ops whose result is bool whatever the operands' promoted type (which so never
# decides a cast error)
_BOOL_RESULT = frozenset(
    ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")
)


# what torch's elementwise kernels refuse once the operands' shapes and dtypes are settled
_KERNEL_REFUSALS = frozenset(
    (
        "ZeroDivisionError",
        "Boolean alpha only supported for Boolean results.",
        "For integral input tensors, argument alpha must not be a floating point number.",
        "For non-complex input tensors, argument alpha must not be a complex number.",
    )
)


# ... and what their own argument checks refuse before those
_ARGUMENT_REFUSALS = frozenset(
    (
        "clamp is not supported for complex types",
        "floor is not supported for complex inputs",
        "ceil is not supported for complex inputs",
        "trunc is not supported for complex inputs",
        "signbit is not implemented for complex tensors.",
        (
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
            "torch.sgn instead."
        ),
    )
)


def _kernel_refusal(e: RuntimeError) -> bool:
    """Whether torch raises ``e`` only after the checks of :func:`_checks_before_kernel` (a
    missing kernel, a refused value), not from an op's own argument checks before them."""
    msg = str(e)
    if isinstance(e, NotImplementedError):
        return msg not in _ARGUMENT_REFUSALS
    return msg in _KERNEL_REFUSALS


def _checks_before_kernel(od: OpDef, arrays: list, out) -> None:
    """torch's elementwise ops check that their operands broadcast, then that the result type
    casts to an ``out=`` tensor's, before the kernel refuses a dtype or a value (a missing
    kernel, an integer division by zero): the error path of a kernel asks the same."""
    err = broadcast_error([a.shape for a in arrays if hasattr(a, "shape")])
    if err is not None:
        raise err from None
    if out is not None and od.name not in _BOOL_RESULT:
        _check_result_casts(od, arrays, out.dtype)


def _unary_out_before_kernel(od: OpDef, ins: tuple, arrays: list, out) -> None:
    """torch's unary ops check an ``out=`` tensor (the cast of the result type, or the exact
    dtype some write) before the kernel refuses a dtype: entr(complex, out=float) is a cast
    error. Composites (ndtr, mvlgamma) compute first, so their kernel's refusal stands."""
    if od.__dict__.get("composite_out") or not isinstance(out, Tensor):
        return
    if od.out_dtype is None:
        _check_result_casts(od, arrays, out.dtype)
    elif isinstance(ins[0], Tensor) and out.dtype is not ins[0].dtype:
        od.out_dtype(out, ins[0], ins)  # (the input stands for the result: same dtype)


def _cast_before_kernel(od: OpDef, self: Tensor, args: tuple) -> None:
    """torch checks that an in-place op's result type casts to self's before it looks for a
    kernel (``bool_tensor.atan2_(complex_tensor)`` is a cast error, not a missing kernel); the
    error path of :func:`apply_inplace` asks the same question."""
    if not args or not isinstance(args[0], (Tensor, *_SCALARS)):
        return
    if isinstance(args[0], Tensor):  # torch compares shapes first
        err = _inplace_shape_error(self._data, args[0]._data)
        if err is not None:
            raise err from None
    if od.name not in _BOOL_RESULT:
        _check_result_casts(od, (self, args[0]), self.dtype)


def _check_result_casts(od: OpDef, operands, dtype) -> None:
    """torch's cast error when the result type of ``operands`` (a float one for an op that
    computes in floats) does not cast to ``dtype``."""
    try:
        target = _dt.result_type(*operands)
    except RuntimeError:  # no promotion (the wide unsigned types): the kernel's error stands
        return
    if od.floating and target.category < _dt.FLOAT:
        target = _dt.get_default_dtype()
    if not _dt.can_cast(target, dtype):
        raise _cast_error(target, dtype) from None


def apply_inplace(od: OpDef, self: Tensor, args: tuple, kw: dict):
    """``self.op_(...)``: write the op's result into self's storage (version bump)."""
    grad_on = _state.enabled
    if _INF_USED[0]:
        _check_inference_inplace(self)
    if _VMAP_SLICES:
        n = od.__dict__.get("inplace_name") or od.name.lstrip("_")
        _vmap_refuse_inplace(n if n.endswith("_") else n + "_", self, args)
    ex = self._extra
    if grad_on and self._grad_fn is not None and ex and "cm" in ex:
        # split/custom Function outputs (a custom Function's views are made under no_grad: its
        # refusal comes first, as torch's creation meta says IN_CUSTOM_FUNCTION)
        from .ops.indexing import check_multi_view_inplace

        check_multi_view_inplace(self)
    if grad_on and ex and "ngr" in ex:
        refuse_no_grad_view(self)
    if grad_on and self.requires_grad:
        err = leaf_write_error(self)
        if err is not None:  # torch refuses before it looks at the operands (a cast, a kernel)
            raise err
    if (
        od.ufunc is not None
        and not kw
        and len(args) == 1
        and self._names is None
        and not (grad_on and (self.requires_grad or _any_rg(args)))
        and self._data.dtype.kind != "b"  # bool targets and bool operands: the op's own checks
        and type(args[0]) is not bool
    ):
        return _ufunc_inplace(od, self, args[0])
    a = self._data
    _check_operands_overlap(od, a, args)
    src = self
    if grad_on and od.save_first and (self.requires_grad or _any_rg(args)):
        ex = self._extra
        if ex and "gv" in ex and ex["gv"] != self._ver[0]:
            _refresh_view(self)  # the snapshot takes self's grad_fn: make it current first
        src = _snapshot(self)  # the derivative needs self's old value: keep a copy
    try:
        r = od.direct(src, *args, **kw)
    except RuntimeError as e:
        if _kernel_refusal(e) and (isinstance(e, NotImplementedError) or od.rule is _unify_inputs):
            _cast_before_kernel(od, self, args)
        raise
    except TypeError:
        # arguments no overload of the in-place method takes: torch's parser refuses them
        # before any kernel runs, naming the method and counting from its first argument
        err = inplace_call_error(od, args, kw)
        if err is None:
            raise
        raise err from None
    if type(r) is tuple:
        r = r[0]
    if r._data.shape != a.shape:  # torch compares shapes before dtypes
        raise RuntimeError(
            f"output with shape {list(a.shape)} doesn't match the broadcast shape "
            f"{list(r._data.shape)}"
        )
    if r._data.dtype is not a.dtype and not _dt.can_cast(r.dtype, self.dtype):
        _check_writable(a)  # torch refuses an expanded self before it compares dtypes
        if od.__dict__.get("inplace_is_out"):
            # torch runs the out= kernel into self: its refusal, else the values cast to self
            od.out_dtype(self, r, (self, *args))
        elif od.__dict__.get("scalar_cast_c_name") and not isinstance(args[0], Tensor):
            # clamp_min_/clamp_max_ of a number name self's dtype by its C++ type
            raise RuntimeError(
                f"result type {scalar_name(r.dtype)} can't be cast to the desired output type "
                f"{_dt.C_NAMES[self.dtype.name]}"
            )
        else:
            raise _cast_error(r.dtype, self.dtype)
    if od.view:
        raise RuntimeError(f"{od.name}_ is not supported as an in-place op")
    if r._names is not None or self._names is not None:
        names = _inplace_names(od, self, r._names)
    _check_writable(a)
    a[...] = r._data
    self._ver[0] += 1
    if r._names is not None or self._names is not None:
        self._names = names
    if r._grad_fn is not None:
        bname = od.__dict__.get("inplace_backward_name")  # threshold_: ThresholdBackward1
        if bname is not None:  # a name, or a rule naming torch's overload from the arguments
            r._grad_fn.bname = bname if type(bname) is str else bname(args)
        _rebase_history(self, r)
        node = r._grad_fn
        if node.res and node.vers and _torch_saves_result(od, args):
            _adopt_result(node, self)  # the derivative reuses the result: self now holds it
    elif grad_on and self.requires_grad and od.name in _CMP_BACKWARD:
        # the comparison's 0/1 values carry no gradient: self's old history gets zeros
        rebase_zero(self, _CMP_BACKWARD[od.name] + ("1" if isinstance(args[0], Tensor) else "0"))
    return self


def rebase_zero(self: Tensor, bname: str) -> None:
    """torch's history for an in-place write that depends on nothing differentiably (``eq_``,
    ``uniform_`` on a tensor in a graph): a node, named ``bname``, passing zeros back to self's
    old history (through its base for a view), where cutting the graph would leave the old
    node, or a new leaf, in its place."""
    z = OPS["_fill"].public(self, 0)  # _fill's derivative: zeros for self, saving nothing
    z._grad_fn.bname = bname
    _rebase_history(self, z)


# in-place comparisons: torch records <Op>Backward0 (a number) / <Op>Backward1 (a tensor)
_CMP_BACKWARD = {n: n.capitalize() + "Backward" for n in ("eq", "ne", "lt", "le", "gt", "ge")}


def _torch_saves_result(od: OpDef, args: tuple) -> bool:
    """Whether torch's derivative of in-place ``od`` keeps the result too (where ember's uses it
    only to save work, torch keeps the input, and changing the result later is allowed)."""
    if od.name == "erfinv":
        return False
    if od.name == "_pow_tensor":  # pow_(scalar) keeps self, pow_(tensor) its result
        return bool(args) and isinstance(args[0], Tensor)
    return True


def _adopt_result(node, self: Tensor) -> None:
    """An in-place op's node saved its result: keep ``self`` (its array and version counter)
    instead of the temporary, as torch saves the modified tensor, so a later in-place change of
    ``self`` is refused in backward (sigmoid_() then mul_())."""
    node.res = [self._data]
    node.vers = [
        (_SavedOutput(self._ver, self._data, 0), self._ver[0])
        if type(t) is _SavedOutput
        else (t, v)
        for t, v in node.vers
    ]


def _ufunc_inplace(od: OpDef, self: Tensor, o):
    """No graph to record: run the op's ufunc straight into self's storage (optimizer updates)."""
    a = self._data
    if isinstance(o, Tensor):
        if o._names is not None:
            return apply_inplace_slow(od, self, o)
        other = o._data
        if type(other) is not type(a):
            other = _same_device(od, a, other, o)
        elif _SEVERAL_GPUS[0] and type(other) is not _ndarray:
            _same_gpu(od, a, other, 1)
        same = getattr(other, "dtype", a.dtype) is a.dtype
        if (other.base is not None or a.base is not None) and other is not a:
            _check_inplace_overlap(od, a, other)  # only views can share memory
    elif isinstance(o, _SCALARS):
        to = type(o)
        if to is int:
            if not _I64_MIN <= o < _I64:
                _dt.check_wide_int(o, (self, o))
        elif to is not float and isinstance(o, _generic):  # a numpy scalar: as torch reads it
            o = _dt.numpy_scalar(o)
        other = o
        same = not ((type(o) is float and a.dtype.kind not in "fcV") or type(o) is complex)
        if a.dtype is _F16 or a.dtype is _BF16:
            # a 16-bit float: as the out-of-place op computes it (in float32 for
            # opmath_scalar ops; ml_dtypes' in-place loops round otherwise)
            return apply_inplace_slow(od, self, o)
    else:
        raise inplace_call_error(od, (o,), {}) or _bad_input(od, 1, o)
    if not same or (od.floating and a.dtype.kind not in "fcV"):
        if getattr(other, "dtype", None) == np.bool_:
            return apply_inplace_slow(od, self, o)  # bool operands: the op's own checks
        target = _dt.result_type(self, o)
        if od.floating and target.category < _dt.FLOAT:
            target = _dt.get_default_dtype()
        if not _dt.can_cast(target, self.dtype):
            _check_writable(a)  # torch refuses an expanded self, then a growing one, first
            err = _inplace_shape_error(a, other)
            raise err if err is not None else _cast_error(target, self.dtype)
    try:
        _check_writable(a)
        try:
            getattr(array_module(a), od.ufunc)(a, other, out=a, casting="unsafe")
        except OverflowError:  # u8 += -1: an int outside the dtype's range wraps, like torch
            args = [a, other]
            _wrap_int_scalars(args)
            getattr(array_module(a), od.ufunc)(a, args[1], out=a, casting="unsafe")
        except TypeError:  # numpy refuses the dtypes (float |= 1): the op raises torch's error
            try:
                od.public(self, o)
            except NotImplementedError:
                _cast_before_kernel(od, self, (o,))  # a growing self or a cast comes first
                raise
            raise
    except ValueError:
        raise _inplace_shape_error(a, other) from None
    self._ver[0] += 1
    return self


def _inplace_shape_error(a, other) -> RuntimeError | None:
    """torch's error for an in-place operand that does not broadcast to self's shape (None
    when it does)."""
    err = broadcast_error([a.shape, getattr(other, "shape", ())])
    if err is not None:  # the shapes do not broadcast at all (torch names the dim)
        return err
    shape = np.broadcast_shapes(a.shape, getattr(other, "shape", ()))
    if shape == a.shape:
        return None
    return RuntimeError(
        f"output with shape {list(a.shape)} doesn't match the broadcast shape {list(shape)}"
    )


def apply_inplace_slow(od: OpDef, self: Tensor, o):
    _check_operands_overlap(od, self._data, (o,))
    try:
        r = od.public(self, o)
    except RuntimeError as e:
        if _kernel_refusal(e):
            _cast_before_kernel(od, self, (o,))
        raise
    if r._data.dtype is not self._data.dtype and not _dt.can_cast(r.dtype, self.dtype):
        _check_writable(self._data)  # torch refuses an expanded self before it compares dtypes
        if type(o) is complex and self._data.dtype is _F16:
            # f16 += 1j: torch's result type is complex32, which ember computes as complex64
            raise RuntimeError(
                "result type ComplexHalf can't be cast to the desired output type Half"
            )
        raise _cast_error(r.dtype, self.dtype)  # no silent narrowing
    if r._data.shape != self._data.shape:
        raise RuntimeError(
            f"output with shape {list(self._data.shape)} doesn't match the broadcast "
            f"shape {list(r._data.shape)}"
        )
    names = _inplace_names(od, self, r._names)
    _check_writable(self._data)
    self._data[...] = r._data
    self._names = names
    self._ver[0] += 1
    return self


def _inplace_names(od: OpDef, self: Tensor, names):
    """In-place names (spec 3): a self with no named dim takes the computed names; a named self
    must already carry exactly them (the out= rule, self being the out tensor)."""
    from .names import check_out_names

    return check_out_names(self, names, od.name + "_")


def _names_before_shapes(od: OpDef, ins, opts, kw) -> None:
    """The kernel failed on named inputs: raise the name error if the names clash too.

    torch checks names before shapes, so (N, C) + (C, N) reports the names that do not match,
    not the sizes that then fail to broadcast. Only the failure path pays for this."""
    if od.rule is None or _state.names_off:
        return
    try:
        od.rule(ins, *opts, **kw)
    except RuntimeError as e:
        raise _name_error(od, e) from None
    except Exception:  # noqa: BLE001, S110 - a rule confused by the bad shapes: the shape error
        pass


def _name_error(od: OpDef, e: RuntimeError) -> RuntimeError:
    """A rule's error names the op (spec 4.10): its public name (``label``) for a private op."""
    msg, name = str(e), od.__dict__.get("label", od.name).lstrip("_")
    if msg.startswith(name):
        return e
    return RuntimeError(f"{name}: {msg}")


def _any_rg(args) -> bool:
    return any(isinstance(a, Tensor) and a.requires_grad for a in args)


def _snapshot(t: Tensor) -> Tensor:
    c = _new(Tensor)
    c._data = t._data.copy()
    c.requires_grad = t.requires_grad
    c._grad_fn = t._grad_fn
    c._grad = None
    c._names = t._names
    c._ver = [0]
    c._extra = {"nr": t._extra["nr"]} if t._extra and "nr" in t._extra else None
    return c


NO_GRAD_VIEW_INPLACE_MSG = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)
INFERENCE_VIEW_INPLACE_MSG = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given "
    "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
    "by moving both the view and the inplace either both inside the inference_mode block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)


def leaf_write_error(self: Tensor, through_view: bool = False) -> RuntimeError | None:
    """torch's refusal of an in-place write into ``self`` (which requires grad, in grad mode):
    a view of a leaf (checked first; the base need not require grad any more: detach_() after
    the view, a view's requires_grad_()), or a leaf (``through_view``: written through a view
    of it, setitem's basic index). None when the write may be recorded."""
    ex = self._extra
    base = ex.get("base") if ex else None
    if base is not None and base._grad_fn is None and not ex.get("detached"):
        what = "a view of a"
    elif self._grad_fn is None:
        what = "a view of a" if through_view else "a"
    else:
        return None
    return RuntimeError(
        f"{what} leaf Variable that requires grad is being used in an in-place operation."
    )


def check_no_grad_view(t: Tensor) -> None:
    """torch's refusal to use (record an op on, read grad_fn or is_leaf of) a view made without
    grad of a tensor requiring grad, once its base changed in place (``_extra["ngr"]`` is the
    version it was made at)."""
    ex = t._extra
    if ex["ngr"] != t._ver[0]:
        msg = INFERENCE_VIEW_INPLACE_MSG if ex["ng"] else NO_GRAD_VIEW_INPLACE_MSG
        raise RuntimeError(
            msg.replace(
                "is being modified", "its base or another view of its base has been modified"
            )
        )


def refuse_no_grad_view(self: Tensor) -> None:
    """torch's refusal, in grad mode, of an in-place write into a view made in no_grad (or
    inference) mode of a tensor requiring grad (the view then requires grad in torch too)."""
    ex = self._extra
    if ex and "ngr" in ex and _state.enabled:
        raise RuntimeError(INFERENCE_VIEW_INPLACE_MSG if ex["ng"] else NO_GRAD_VIEW_INPLACE_MSG)


def check_metadata_inplace(self: Tensor) -> None:
    """torch's checks, in grad mode, of an in-place change of ``self``'s metadata (squeeze_,
    t_, as_strided_, set_ ...), in its order: a view made without grad, a split or custom
    Function output, a view of a leaf or a leaf that requires grad."""
    if not _state.enabled:
        return
    refuse_no_grad_view(self)
    ex = self._extra
    if ex and "cm" in ex and self._grad_fn is not None:
        from .ops.indexing import check_multi_view_inplace

        check_multi_view_inplace(self)
    if self.requires_grad:
        err = leaf_write_error(self)
        if err is not None:
            raise err


def _rebase_history(self: Tensor, r: Tensor) -> None:
    base = self._extra.get("base") if self._extra else None
    if base is not None and "ng" in self._extra:
        raise RuntimeError(
            INFERENCE_VIEW_INPLACE_MSG if self._extra["ng"] else NO_GRAD_VIEW_INPLACE_MSG
        )
    if self._extra and "retain_hook" in self._extra:
        from ..autograd.engine import move_retain_hook

        _rebase_core(self, base, r)
        ex = self._extra
        if "gv" in ex and ex["gv"] != self._ver[0]:
            _refresh_view(self)  # a view written through: torch regenerates its node now
        move_retain_hook(self)  # .grad is the gradient of the new value, as in torch
        return
    _rebase_core(self, base, r)


def _rebase_core(self: Tensor, base, r: Tensor) -> None:
    if base is not None:
        from .ops.indexing import _write_through_view  # torch's CopySlices for views

        if _write_through_view(self, base, r):
            _rebased_view(self)  # its new grad_fn is current as of this version
            return
    if base is not None and (base.requires_grad or base._grad_fn is not None):
        raise RuntimeError(
            "ember: an in-place operation on a view of a tensor that requires grad is not "
            "supported; apply the operation out of place, or to the base tensor"
        )
    if base is not None:
        _forget_view(self)  # the base's history lacks this write: never replay from it
    self._grad_fn = r._grad_fn
    self.requires_grad = True
    ex = r._extra
    if ex and ex.get("nr"):
        self._extra = dict(self._extra or {}, nr=ex["nr"])


# ---------------------------------------------------------------------- named-tensor coverage
def names_coverage() -> list:
    """[(op name, rule name)] for every registered op, sorted by op name. The rule name is the
    rule function's name, 'fallback' for ops declaring ``names=FALLBACK`` (spec 4.2), or None for
    an op that declares nothing (the coverage test refuses those)."""
    return [(n, OPS[n].rule_name) for n in sorted(OPS)]


def coverage_markdown() -> str:
    """The named-tensor coverage table as markdown (docs/named_coverage.md)."""
    from . import names as _names_mod

    lines = [
        "# Named-tensor coverage",
        "",
        "Generated by `python -m ember.core.registry` from the op registry: every registered op",
        "with its name-inference rule (see ../shared/spec/named_tensors.md). `fallback` is the",
        "generic rule of spec 4.2 (a result with the input's shape keeps its names, any other",
        "result is unnamed). Rules are the functions of `core/names.py` or of the op's family",
        "module.",
        "",
        "| op | rule | rule module |",
        "|----|------|-------------|",
    ]
    for n, rn in names_coverage():
        rule = OPS[n].rule
        mod = "core.registry" if rule is None else rule.__module__.replace("ember.", "")
        if rule is not None and getattr(_names_mod, rule.__name__, None) is rule:
            mod = "core.names"
        lines.append(f"| {n} | {rn} | {mod} |")
    return "\n".join(lines) + "\n"


def write_coverage(path=None) -> str:
    """Write docs/named_coverage.md (or ``path``); return the path written."""
    import os

    import ember  # noqa: F401  (registers every op family)

    if path is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = os.path.join(root, "docs", "named_coverage.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(coverage_markdown())
    return path


if __name__ == "__main__":  # run as a script, this file is a second module: use the real one
    from ember.core.registry import write_coverage as _write

    print(_write())
