"""Name-inference rules as pure functions on name tuples (see ../shared/spec/named_tensors.md).

A rule is called only when some input is named; it returns the output's names (a tuple, or None
for unnamed). Ops name their rule in ``@op(names=...)``.
"""

from __future__ import annotations


def names_of(t) -> tuple:
    n = t._names
    return (None,) * t._data.ndim if n is None else n


def _fmt(names) -> str:
    return "[" + ", ".join("None" if n is None else repr(n) for n in names) + "]"


_HINT = (
    " Align the tensors by name with `align_as`/`align_to`, or `rename` a dim so the names agree."
)


def named_like(t, names, clash):
    """``t`` with its dims named ``names`` (unnamed when None), as a gradient or a tangent is
    named like its tensor (spec 4.1): unnamed dims take the names; names that do not unify with
    them raise RuntimeError, ``clash(t_names, names)`` (both as lists) followed by why."""
    if names is None:
        return t.rename(None)
    if t._names is not None:
        try:
            unify(t._names, names)
        except RuntimeError as e:
            raise RuntimeError(f"{clash(list(t._names), list(names))}: {e}") from None
    return t.rename(*names)


def as_op_error(e: RuntimeError, op: str, inner: tuple, *ts) -> RuntimeError:
    """Spec 4.10 for a composite ``op`` built from registered ops: the name error of one of its
    ``inner`` ops (``"sub: ..."``) re-labelled with ``op``, the function the user called; any
    other error, or one raised when none of the tensors ``ts`` is named (no name error then), is
    returned unchanged. Called in an ``except`` clause, so unnamed calls pay nothing."""
    if any(getattr(t, "_names", None) is not None for t in ts):
        msg = str(e)
        for i in inner:
            if msg.startswith(i) and msg.startswith(": ", len(i)):
                return RuntimeError(f"{op}: {msg[len(i) + 2 :]}")
    return e


def unify(a: tuple, b: tuple) -> tuple:
    """Unify two name lists from the right (None is a wildcard), with PyTorch's errors."""
    if a is None:
        return b
    if b is None:
        return a
    la, lb = len(a), len(b)
    out = list(a if la >= lb else b)
    for k in range(1, min(la, lb) + 1):
        x, y = a[-k], b[-k]
        if x is not None and y is not None and x != y:
            raise RuntimeError(
                f"Error when attempting to broadcast dims {_fmt(a)} and dims {_fmt(b)}: dim '{x}' "
                f"and dim '{y}' are at the same position from the right but do not match." + _HINT
            )
        out[-k] = x if x is not None else y
    # a name may appear only once, and at the same position from the right in both lists
    for name in {n for n in out if n is not None}:
        pa = [la - i for i, n in enumerate(a) if n == name]
        pb = [lb - i for i, n in enumerate(b) if n == name]
        if pa and pb and pa != pb:
            short, long_ = (a, b) if la <= lb else (b, a)
            raise RuntimeError(
                f"Misaligned dims when attempting to broadcast dims {_fmt(short)} and dims "
                f"{_fmt(long_)}: dim '{name}' appears in a different position from the right "
                "across both lists." + _HINT
            )
    return tuple(out)


def _clean(names):
    return None if names is None or all(n is None for n in names) else tuple(names)


# ------------------------------------------------------------------ rules
def keep(ins, *args, **kwargs):
    """Keeps input names (unary pointwise ops, softmax, cumsum, ...)."""
    return ins[0]._names


def keep_indexed(ins, *args, **kwargs):
    """gather, scatter*, index_add, index_copy: the input's names. Index and source tensors of the
    input's rank pair with it position by position on every dim but ``dim`` (the op's first
    option), so there their names unify with the input's (add's rule, without broadcasting) and
    name its unnamed dims; ``dim`` keeps the input's name."""
    n = names_of(ins[0])
    nd = len(n)
    if not nd:
        return ins[0]._names
    d = (args[0] if args else kwargs.get("dim", 0)) % nd
    out = n
    for t in ins[1:]:
        tn = getattr(t, "_names", None)
        if tn is None or len(tn) != nd:
            continue
        try:
            out = unify(out[:d] + (None,) + out[d + 1 :], tn[:d] + (None,) + tn[d + 1 :])
        except RuntimeError as e:
            raise RuntimeError(
                f"Tensor{_fmt(tn)} pairs with Tensor{_fmt(n)} on every dim but dim {d}, and their "
                f"names do not agree there: {e}"
            ) from None
        out = no_duplicates(
            out[:d] + (n[d],) + out[d + 1 :], f"Indexing Tensor{_fmt(n)} with Tensor{_fmt(tn)}"
        )
    return _clean(out)


def unify_inputs(ins, *args, **kwargs):
    """Unifies names from inputs (binary pointwise ops)."""
    out = None
    for t in ins:
        n = getattr(t, "_names", None)
        if n is not None:
            out = n if out is None else unify(out, n)
        elif out is not None and hasattr(t, "_data") and t._data.ndim > len(out):
            out = unify(out, (None,) * t._data.ndim)
    if out is not None:
        for t in ins:
            if (
                getattr(t, "_names", None) is None
                and hasattr(t, "_data")
                and t._data.ndim > len(out)
            ):
                out = (None,) * (t._data.ndim - len(out)) + out
    return _clean(out)


def remove_dims(names: tuple, dims) -> tuple | None:
    """The names with positions ``dims`` removed (reductions, select, squeeze)."""
    drop = set(dims)
    return _clean(tuple(n for i, n in enumerate(names) if i not in drop))


def check_out_names(out, names, op: str | None = None):
    """out= and in-place semantics: a tensor with no named dim takes the computed names; one with
    a named dim must already carry exactly the computed names (PyTorch's "Name mismatch")."""
    cur = out._names
    if cur is None or all(n is None for n in cur):
        return names
    if tuple(cur) != tuple(names_of_len(names, len(cur))):
        where = f"{op}: " if op else ""
        raise RuntimeError(
            f"{where}Name mismatch: specified out tensor with names {_fmt(cur)} are not the "
            f"same as the computed output names {_fmt(names_of_len(names, len(cur)))}. Please "
            "rename the out tensor's dims with `Tensor.rename` (or `refine_names` to name "
            "its None dims)."
        )
    return cur


def names_of_len(names, n) -> tuple:
    return (None,) * n if names is None else tuple(names)


def check_names(names, ndim: int) -> tuple | None:
    """Validate a ``names=`` argument: one per dim, identifiers or None, no duplicates."""
    if names is None:
        return None
    if isinstance(names, str) or not hasattr(names, "__iter__"):
        raise TypeError(
            f"names must be a tuple or list of str or None (one per dim), not "
            f"{type(names).__name__}"
        )
    names = tuple(names)
    if len(names) != ndim:
        raise RuntimeError(
            f"Number of names ({len(names)}) and number of dimensions in tensor "
            f"({ndim}) do not match. Attempted to create a tensor with names "
            f"{_fmt(names)}"
        )
    seen = set()
    for n in names:
        if n is None:
            continue
        if not isinstance(n, str):
            raise TypeError(f"a name must be a str or None, not {type(n).__name__}: {_fmt(names)}")
        if not n.isidentifier():
            raise RuntimeError(
                f"Invalid name: a valid identifier contains only digits, alphabetical "
                f"characters and/or underscore and starts with a non-digit. got: "
                f"'{n}'."
            )
        if n in seen:
            raise RuntimeError(
                f"Cannot construct a tensor with duplicate names. Got names: {_fmt(names)}."
            )
        seen.add(n)
    return _clean(names)


# ------------------------------------------------------------------ the generic fallback (4.2)
class _Fallback:
    """``@op(names=FALLBACK)``: the op has no specific rule (spec 4.2). A result with the shape of
    the first named input keeps its names; any other result is unnamed. The registry runs this
    choice itself (registry._fallback_names); the marker makes the choice explicit."""

    __name__ = "fallback"

    def __repr__(self) -> str:
        return "FALLBACK"


FALLBACK = _Fallback()


def fallback_names(src, shape) -> tuple | None:
    """The fallback for a composite op (a plain function over registered ops) that runs on its
    named input's unnamed data: ``src``'s names when the result has ``src``'s shape, else None."""
    return src._names if tuple(shape) == tuple(src._data.shape) else None


def check_weight_dims(
    fname: str, what: str, xn: tuple, dims, wn: tuple, wdims=None, param: str = "weight"
) -> None:
    """Spec 4.3: the input's dims at ``dims`` (those a layer's weight applies to: features,
    channels, normalized dims) must carry the names of the weight's dims at ``wdims`` (default:
    all of ``wn`` in order); None on either side matches anything. The error names the op, the
    parameter (``param``: weight, bias, running_mean ...), both name lists and the fix."""
    for d, k in zip(dims, range(len(wn)) if wdims is None else wdims):
        x, w = xn[d], wn[k]
        if w is not None and x is not None and x != w:
            raise RuntimeError(
                f"{fname}: the input's {what} dim is named '{x}' (input names {list(xn)}), but "
                f"the {param} expects '{w}' ({param} names {list(wn)}); rename the input's "
                f"{what} dim or the {param} (rename/refine_names)"
            )


def rule_name(rule) -> str | None:
    """The coverage-table name of a rule: its function name, 'fallback', or None (undeclared)."""
    if rule is None:
        return None
    return getattr(rule, "__name__", None) or type(rule).__name__


# ------------------------------------------------------------------ contraction (matmul family)
def no_duplicates(out: tuple, what: str) -> tuple:
    """``out`` when no name repeats in it, else PyTorch's error for a product (mm's wording):
    ``what`` says which product, e.g. "Matrix multiplying Tensor['N', 'K'] with Tensor['K', 'N']".
    The registry prefixes the op's name."""
    named = [n for n in out if n is not None]
    if len(set(named)) != len(named):
        raise RuntimeError(
            f"{what} would produce output tensor with duplicate names {_fmt(out)}. Please rename "
            "the input tensors with `Tensor.rename` to prevent this."
        )
    return out


def _unify_batch(nx: tuple, ny: tuple, bx: tuple, by: tuple) -> tuple:
    """Unify batch names ``bx``/``by`` from the right; the misalignment check looks at the whole
    name lists ``nx``/``ny`` (a batch name matched with a None may not sit elsewhere in the other
    operand). Only positions both operands have are matched (spec 3): the extra leading batch
    dims of the longer one are copied unchecked."""
    lb, common = max(len(bx), len(by)), min(len(bx), len(by))
    out = [None] * lb
    for k in range(1, common + 1):  # names that do not match are reported before misalignment
        x, y = bx[-k], by[-k]
        if x is not None and y is not None and x != y:
            raise RuntimeError(
                f"Error when attempting to broadcast dims {_fmt(nx)} and dims {_fmt(ny)}: dim "
                f"'{x}' and dim '{y}' are at the same position from the right but do not match."
                " Align the operands' batch dims by name with `align_to`/`align_as`, or `rename`."
            )
    for k in range(1, lb + 1):
        x = bx[-k] if k <= len(bx) else None
        y = by[-k] if k <= len(by) else None
        if k <= common and (x is None) != (y is None):
            name, other = (x, ny) if x is not None else (y, nx)
            if name in other:  # the other's dim here is None: the name sits elsewhere
                raise RuntimeError(
                    f"Misaligned dims when attempting to broadcast dims {_fmt(nx)} and dims "
                    f"{_fmt(ny)}: dim '{name}' appears in a different position from the right "
                    "across both lists. Align the operands by name with `align_to`/`align_as`."
                )
        out[-k] = x if x is not None else y
    return tuple(out)


def _contract(nx: tuple, ny: tuple) -> tuple:
    """Output names of ``matmul(x, y)`` from the operands' full name lists (contracted dims
    vanish unchecked; batch dims unify; the output may not repeat a name)."""
    dx, dy = len(nx), len(ny)
    if dx == 0 or dy == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {dx}D and {dy}D"
        )
    bx = nx[:-2] if dx > 2 else ()
    by = ny[:-2] if dy > 2 else ()
    out = _unify_batch(nx, ny, bx, by) if (bx or by) else ()
    if dx >= 2:
        out += (nx[-2],)
    if dy >= 2:
        out += (ny[-1],)
    return no_duplicates(out, f"Matrix multiplying Tensor{_fmt(nx)} with Tensor{_fmt(ny)}")


def contract(ins, *args, **kwargs):
    """Contracts away dims (mm, bmm, mv, matmul): unify the batch names, then (x[-2], y[-1])."""
    return _clean(_contract(names_of(ins[0]), names_of(ins[1])))


def add_contract(ins, *args, **kwargs):
    """addmm/addmv/baddbmm: the product's names (``contract``) unified with the added input's."""
    mm = _contract(names_of(ins[1]), names_of(ins[2]))
    inp = ins[0]
    if getattr(inp, "_names", None) is None:
        return _clean(mm)
    return _clean(unify(names_of(inp), mm))


def add_contract_batch_sum(ins, *args, **kwargs):
    """addbmm: the batch dim is summed away; (batch1[-2], batch2[-1]) unified with the input's."""
    n1, n2 = names_of(ins[1]), names_of(ins[2])
    mm = _contract(n1[-2:], n2[-2:])
    inp = ins[0]
    if getattr(inp, "_names", None) is None:
        return _clean(mm)
    return _clean(unify(names_of(inp), mm))


def cdist_names(ins, *args, **kwargs):
    """cdist(x1 [..., P, M], x2 [..., R, M]) -> [..., P, R]: batch dims unify, the feature dim is
    contracted (unchecked), P comes from x1 and R from x2."""
    n1, n2 = names_of(ins[0]), names_of(ins[1])
    batch = _unify_batch(n1, n2, n1[:-2], n2[:-2]) if (n1[:-2] or n2[:-2]) else ()
    out = batch + (n1[-2], n2[-2])
    named = [n for n in out if n is not None]
    if len(set(named)) != len(named):
        raise RuntimeError(
            f"cdist: Tensor{_fmt(n1)} and Tensor{_fmt(n2)} would produce an output tensor with "
            f"duplicate names {_fmt(out)}. Please rename the input tensors with `Tensor.rename` "
            "to prevent this."
        )
    return _clean(out)


# ------------------------------------------------------------------ other specific rules
def align_mask_unify(ins, *args, **kwargs):
    """masked_select: the mask is aligned (broadcast from the right) up to the input and their
    names unified, which checks them; the 1-D result is unnamed (the rule returns None)."""
    unify(names_of(ins[0]), names_of(ins[1]))


def check_resize(t, size) -> None:
    """resize_/resize_as_ on a tensor with named dims: only resizes that keep the shape."""
    cur = t._names
    if cur is None or all(n is None for n in cur):
        return
    if tuple(size) != tuple(t._data.shape):
        raise RuntimeError(
            f"Cannot resize named tensor with resize_ or resize_as_ (tried to resize "
            f"Tensor{_fmt(cur)} with size {list(t._data.shape)} to {list(size)}). This may be "
            "caused by passing a named tensor as an `out=` argument to a function whose result "
            "has another shape; pass an unnamed or correctly-shaped out tensor, or drop the "
            "names with `rename(None)`."
        )


def broadcast_to_self(ins, *args, **kwargs):
    """masked_fill, masked_scatter (Keeps input names): the mask broadcasts to the input; the
    unified names must be the input's own when it has named dims (the in-place rule)."""
    x = ins[0]
    out = names_of(x)
    n = getattr(ins[1], "_names", None)
    if n is not None:
        out = unify(out, n)
    if x._names is not None:
        check_out_names(x, out)
    return _clean(out)
