"""ember.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp (torch's signatures).

Everything is built on reverse mode (``autograd.grad``): jvp uses the double-backward trick, and
``vectorize``/``strategy`` are accepted for compatibility but do not change the computation.
"""

from __future__ import annotations

from ..core import tensor as _tm
from ..core.device import array_module
from .engine import grad as _grad
from .grad_mode import _state

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_Tensor = _tm.Tensor


def _as_tuple(x, arg_name: str, fn_name: str):
    """(is_tuple, tuple of tensors), with torch's type errors."""
    is_tuple = isinstance(x, tuple)  # torch's: a list is refused, like any non-Tensor
    xs = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, _Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                    f"tuple of Tensors but the value at index {i} has type "
                    f"{type(t)}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                f"of Tensors but the given {arg_name} has type {type(t)}."
            )
    return is_tuple, xs


def _unpack(xs, is_tuple: bool):
    return xs if is_tuple else xs[0]


def _prepare_inputs(inputs, create_graph: bool):
    """Fresh differentiable versions of the inputs (linked to the originals under create_graph)."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view(t.shape))  # keeps the link to t's graph
        else:
            out.append(t.detach().requires_grad_())  # torch's: integer inputs are refused
    return tuple(out)


def _finish(xs, create_graph: bool):
    """Results leave the function detached unless create_graph is set."""
    if create_graph:
        return xs
    return tuple(None if x is None else x.detach() for x in xs)


def _zeros_like(t):
    return _tm._wrap(array_module(t._data).zeros(t._data.shape, t._data.dtype), t._names)


def _check_v(v, refs, is_tuple: bool):
    """``v`` must match ``refs`` (the outputs or inputs it multiplies) in number and shapes;
    ``is_tuple``: whether the user gave ``refs`` as a tuple (torch words the errors so)."""
    if len(v) != len(refs):
        if not is_tuple:
            raise RuntimeError("The given v should contain a single Tensor.")
        raise RuntimeError(
            f"v is a tuple of invalid length: should be {len(refs)} but got {len(v)}."
        )
    for i, (a, b) in enumerate(zip(v, refs)):
        if a.shape != b.shape:
            where = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(
                f"{where}v has invalid size: should be torch.Size({list(b.shape)}) but got "
                f"torch.Size({list(a.shape)})."
            )


def _autograd_grad(outputs, inputs, grad_outputs, create_graph: bool, retain_graph=None):
    """autograd.grad over the outputs that require grad; None for unreachable inputs."""
    if retain_graph is None:
        retain_graph = create_graph
    outs, gos = [], []
    for i, o in enumerate(outputs):
        if o is not None and o.requires_grad:
            outs.append(o)
            gos.append(grad_outputs[i] if grad_outputs is not None else None)
    if not outs:
        return (None,) * len(inputs)
    return _grad(
        outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True
    )


def _fill_zeros(grads, refs, strict: bool, create_graph: bool, stage: str):
    res = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        "The output of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode."
                    )
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of "
                        f"entry {i} in the grad_outputs when using the double "
                        "backward trick to compute forward mode gradients. This is "
                        "not allowed in strict mode."
                    )
                if stage == "double_back":
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent "
                        f"of input {i}. This is not allowed in strict mode."
                    )
                raise RuntimeError(
                    "The hessian of the user-provided function is independent of "
                    f"entry {i} in the grad_jacobian. This is not allowed in strict "
                    "mode as it prevents from using the double backward trick to "
                    "replace forward mode AD."
                )
            g = _zeros_like(r)
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(
                "The jacobian of the user-provided function is independent of input "
                f"{i}. This is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _check_outputs(outputs, fn_name: str):
    is_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    return is_tuple, outs


def _strict_outputs(outputs, strict: bool, fn_name: str):
    if not strict:
        return
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require "
                "gradients. The outputs must be computed in a differentiable manner "
                "from the input when running in strict mode."
            )


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product of ``func`` at ``inputs``."""
    prev = _state.enabled
    _state.enabled = not _state.inference  # enable_grad's: nothing records in inference mode
    try:
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _prepare_inputs(ins, create_graph)
        is_out_tuple, outs = _check_outputs(func(*ins), "vjp")
        _strict_outputs(outs, strict, "vjp")
        if v is not None:
            _, vs = _as_tuple(v, "v", "vjp")
            _check_v(vs, outs, is_out_tuple)
            if not outs:  # torch indexes the first output
                raise IndexError("tuple index out of range")
        else:
            if len(outs) != 1 or outs[0]._data.size != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function "
                    "returns a single Tensor with a single element."
                )
            vs = None
        g = _autograd_grad(outs, ins, vs, create_graph)
        g = _fill_zeros(g, ins, strict, create_graph, "back")
    finally:
        _state.enabled = prev
    return _unpack(_finish(outs, create_graph), is_out_tuple), _unpack(
        _finish(g, create_graph), is_in_tuple
    )


def double_backward_jvp(outs, ins, vs, create_graph: bool, strict: bool = False):
    """``J v`` for each output, by the double-backward trick: with a dummy cotangent ``u``, the
    vjp ``g = J^T u`` is linear in ``u``, so ``d(g . v)/du = J v``. ``vs`` holds one tangent per
    input (None: ones, for a single one-element input); None where no input reaches an output.
    Shared by ``jvp`` and ``forward_ad.unpack_dual``."""
    us = tuple(_zeros_like(o) for o in outs)
    for u in us:
        # set on the fresh leaf directly: requires_grad_() from this module is what torch
        # refuses inside a torch.func transform, and forward_ad (allowed there) comes here too
        u.requires_grad = True
    gi = _autograd_grad(outs, ins, us, create_graph=True)
    if strict:
        _fill_zeros(gi, ins, strict, create_graph, "back")
    used = [
        (g, w) for g, w in zip(gi, vs if vs is not None else (None,) * len(gi)) if g is not None
    ]
    if not used:
        return (None,) * len(us)
    return _autograd_grad(
        [g for g, _ in used], us, [w for _, w in used] if vs is not None else None, create_graph
    )


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product (by the double-backward trick)."""
    prev = _state.enabled
    _state.enabled = not _state.inference  # enable_grad's: nothing records in inference mode
    try:
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prepare_inputs(ins, create_graph)
        if v is not None:
            _, vs = _as_tuple(v, "v", "jvp")
            _check_v(vs, ins, is_in_tuple)
        else:
            if len(ins) != 1 or ins[0]._data.size != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided "
                    "function is a single Tensor with a single element."
                )
            vs = None
        is_out_tuple, outs = _check_outputs(func(*ins), "jvp")
        _strict_outputs(outs, strict, "jvp")
        res = double_backward_jvp(outs, ins, vs, create_graph, strict)
        if not outs:  # torch indexes the first output (after its strict check)
            raise IndexError("tuple index out of range")
        res = _fill_zeros(res, outs, strict, create_graph, "back_trick")
    finally:
        _state.enabled = prev
    return _unpack(_finish(outs, create_graph), is_out_tuple), _unpack(
        _finish(res, create_graph), is_out_tuple
    )


def _empty_outputs(outs, vectorize: bool) -> None:
    """torch's reverse-mode jacobian on no output elements at all: its errors."""
    if not outs:
        if vectorize:
            raise AssertionError("Expected at least one tensor")
        raise IndexError("tuple index out of range")
    if vectorize and not any(o._data.size for o in outs):
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")


def _stack_rows(rows, shape):
    """Stack the Jacobian rows (each of the input's shape) into ``shape`` (output + input)."""
    import ember

    if not rows:
        return None
    if not any(r.requires_grad for r in rows):
        xp_rows = [r._data for r in rows]
        xp = array_module(xp_rows[0])
        return _tm._wrap(xp.stack(xp_rows).reshape(shape))
    stack = getattr(ember, "stack", None)
    if stack is not None:
        return stack(rows).reshape(shape)
    # no stack op yet: a differentiable sum of one-hot outer products
    n = len(rows)
    xp = __import__("numpy")
    total = None
    for k, r in enumerate(rows):
        e = xp.zeros((n,) + (1,) * r.dim(), r._data.dtype)
        e[k] = 1
        term = r.unsqueeze(0) * _tm._wrap(e)
        total = term if total is None else total + term
    return total.reshape(shape)


def _jacobian_names(o, x) -> tuple:
    """The names of d o / d x (``o.shape + x.shape``): the input's dims are a gradient's, named
    like the input (spec 4.1); the output's keep the output's names, unnamed where one repeats an
    input name (a name appears once)."""
    xn = tuple(x.names)
    return tuple(None if n in xn else n for n in o.names) + xn


def jacobian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """The Jacobian of ``func`` at ``inputs``: for each (output, input) pair a tensor of shape
    ``output.shape + input.shape`` (nested like torch's: tuples only where the arguments were)."""
    # torch checks these with assert (AssertionError), then create_graph, then vectorize
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: '
            'If your function has more outputs than inputs, "forward-mode" tends to '
            'be more performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode" and create_graph:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `create_graph=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either '
            'set `create_graph=False` or `strategy="reverse-mode"`.'
        )
    if strategy == "forward-mode" and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`strict=False` or `strategy="reverse-mode"`.'
        )
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    prev = _state.enabled
    _state.enabled = not _state.inference  # enable_grad's: nothing records in inference mode
    try:
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare_inputs(ins, create_graph)
        if strategy == "forward-mode":  # torch's forward-mode check names no function
            is_out_tuple, outs = _as_tuple(func(*ins), "outputs", None)
        else:
            is_out_tuple, outs = _check_outputs(func(*ins), "jacobian")
        _strict_outputs(outs, strict, "jacobian")
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or `vectorize=False`."
            )
        if strategy == "reverse-mode":
            _empty_outputs(outs, vectorize)
        jac = []
        for oi, o in enumerate(outs):
            if not vectorize and o.requires_grad and o._data.dtype.kind == "c":
                # torch's loop differentiates each element with no grad_output: refused
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"torch.{o.dtype.name}"
                )
            rows = [[] for _ in ins]
            n = o._data.size
            for k in range(n):
                if o.requires_grad:
                    oh = _zeros_like(o.detach())
                    oh._data.reshape(-1)[k] = 1
                    gs = _grad(
                        o, ins, oh, retain_graph=True, create_graph=create_graph, allow_unused=True
                    )
                else:
                    gs = (None,) * len(ins)
                for i, (g, x) in enumerate(zip(gs, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {oi} of the user-provided function is "
                                f"independent of input {i}. This is not allowed in "
                                "strict mode."
                            )
                        g = _zeros_like(x.detach())
                    elif strict and create_graph and not g.requires_grad:
                        # torch's text numbers the output here, though it says "input"
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {oi}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    rows[i].append(g)
            per_in = []
            for i, x in enumerate(ins):
                shape = tuple(o.shape) + tuple(x.shape)
                if n == 0:  # (vectorized only: torch's loop stacks no rows)
                    if not vectorize:
                        raise RuntimeError("stack expects a non-empty TensorList")
                    j = _tm._wrap(x._data.reshape(-1)[:0].reshape(shape))
                else:
                    j = _stack_rows(rows[i], shape)
                if o._names is not None or x._names is not None:
                    j = j.rename(*_jacobian_names(o, x))
                per_in.append(j)
            jac.append(_finish(tuple(per_in), create_graph))
    finally:
        _state.enabled = prev
    if is_out_tuple:
        return tuple(_unpack(j, is_in_tuple) for j in jac)
    return _unpack(jac[0], is_in_tuple)


def hessian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """The Hessian of a scalar ``func`` at ``inputs`` (a tuple of tuples for several inputs)."""
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output(*inp):
        out = func(*inp)
        is_t, t = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _strict_outputs(t, strict, "hessian")
        if is_t or len(t) != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if t[0]._data.size != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain "
                "a single element"
            )
        return t[0].squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output, inp, create_graph=True)
        if strict:  # torch checks the gradient, not the function's output
            for i, j in enumerate(jac):
                if not j.requires_grad:
                    raise RuntimeError(
                        "While computing the hessian, found that the jacobian of the "
                        f"user-provided function with respect to input {i} is independent of the "
                        "input. This is not allowed in strict mode. You should ensure that your "
                        "function is twice differentiable and that the jacobian depends on the "
                        "inputs (this would be violated by a linear function for example)."
                    )
        return jac

    res = jacobian(
        jac_func,
        ins,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return res if is_in_tuple else res[0][0]


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H) for a scalar ``func``."""
    return _vhp(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar ``func`` (equal to v^T H: the Hessian is symmetric)."""
    return _vhp(func, inputs, v, create_graph, strict, "hvp")


def _vhp(func, inputs, v, create_graph: bool, strict: bool, fn_name: str):
    prev = _state.enabled
    _state.enabled = not _state.inference  # enable_grad's: nothing records in inference mode
    try:
        is_in_tuple, ins = _as_tuple(inputs, "inputs", fn_name)
        ins = _prepare_inputs(ins, create_graph)
        vs = _hess_v(v, ins, is_in_tuple, fn_name)
        out = _scalar_output(func(*ins), fn_name)
        _strict_outputs((out,), strict, fn_name)
        jac = _autograd_grad((out,), ins, None, create_graph=True)
        if strict:
            _strict_jacobian(jac)
        used = [
            (j, w)
            for j, w in zip(jac, vs if vs is not None else (None,) * len(jac))
            if j is not None and j.requires_grad
        ]
        if used:
            res = _autograd_grad(
                [j for j, _ in used],
                ins,
                [w for _, w in used] if vs is not None else None,
                create_graph,
            )
        else:
            res = (None,) * len(ins)
        res = _fill_zeros(res, ins, strict, create_graph, "double_back")
    finally:
        _state.enabled = prev
    return _finish((out,), create_graph)[0], _unpack(_finish(res, create_graph), is_in_tuple)


def _strict_jacobian(jac) -> None:
    """strict mode: the Hessian needs a Jacobian that depends on every input."""
    for i, j in enumerate(jac):
        if j is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if not j.requires_grad:
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )


def _hess_v(v, ins, is_in_tuple: bool, fn_name: str):
    if v is not None:
        _, vs = _as_tuple(v, "v", fn_name)
        _check_v(vs, ins, is_in_tuple)
        return vs
    if len(ins) != 1 or ins[0]._data.size != 1:
        raise RuntimeError(
            "The vector v can only be None if the input to the user-provided "
            "function is a single Tensor with a single element."
        )
    return None


def _scalar_output(out, fn_name):
    is_t, outs = _as_tuple(out, "outputs of the user-provided function", fn_name)
    if is_t or len(outs) != 1:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outs[0]._data.size != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should "
            "contain a single element"
        )
    return outs[0]
