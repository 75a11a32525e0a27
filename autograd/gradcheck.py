"""gradcheck / gradgradcheck: compare autograd's gradients with float64 central differences."""

from __future__ import annotations

import warnings

import numpy as np

from ..core import tensor as _tm
from .engine import grad as _grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients differ."""


def _outputs(fn, inputs):
    out = fn(*inputs)
    return (
        (out,)
        if isinstance(out, _tm.Tensor)
        else tuple(o for o in out if isinstance(o, _tm.Tensor))
    )


def _values(fn, inputs):
    # grad mode stays on: gradgradcheck's function itself calls autograd.grad
    return [
        o._data.astype(np.complex128 if o.is_complex() else np.float64).reshape(-1)
        for o in _outputs(fn, inputs)
    ]


def _numerical(fn, inputs, idx, eps):
    """d(outputs)/d(inputs[idx]) by central differences: rows = input elements."""
    x = inputs[idx]
    flat = x._data.reshape(-1)  # a view: perturb in place (x is contiguous float64)
    cols = []
    for k in range(flat.size):
        orig = flat[k]
        flat[k] = orig + eps
        plus = _values(fn, inputs)
        flat[k] = orig - eps
        minus = _values(fn, inputs)
        flat[k] = orig
        cols.append(
            np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
            if plus
            else np.zeros(0)
        )
    return np.stack(cols) if cols else np.zeros((0, 0))


def _analytical(fn, inputs, diff_idx):
    outs = _outputs(fn, inputs)
    diff_in = [inputs[i] for i in diff_idx]
    sizes = [o._data.size for o in outs]
    jac = [np.zeros((inputs[i]._data.size, sum(sizes))) for i in diff_idx]
    col = 0
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            col += o._data.size
            continue
        for k in range(o._data.size):
            g = np.zeros(o._data.shape, o._data.dtype)
            g.reshape(-1)[k] = 1
            grads = _grad(o, diff_in, _tm._wrap(g, o._names), retain_graph=True, allow_unused=True)
            for j, gr in enumerate(grads):
                if gr is not None:
                    jac[j][:, col + k] = np.asarray(gr._data, dtype=np.float64).reshape(-1)
        col += o._data.size
    return jac


_NO_GRAD_INPUT = (
    "gradcheck expects at least one input tensor to require gradient, but none of them have "
    "requires_grad=True."
)


def _check_inputs(inputs) -> list:
    """The indices of the inputs requiring grad. Like torch: a warning (not an error) for one
    that is not double precision, a ValueError when there is none."""
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, _tm.Tensor) and t.requires_grad]
    for i in diff_idx:
        if inputs[i]._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                stacklevel=3,
            )
    if not diff_idx:
        raise ValueError(_NO_GRAD_INPUT)
    return diff_idx


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_ignored,
) -> bool:
    """Check gradients of ``func`` at ``inputs`` (float64 tensors requiring grad) numerically."""
    inputs = (inputs,) if isinstance(inputs, _tm.Tensor) else tuple(inputs)
    diff_idx = _check_inputs(inputs)
    inputs = tuple(
        t.contiguous() if i in diff_idx and not t._data.flags.c_contiguous else t
        for i, t in enumerate(inputs)
    )
    analytical = _analytical(func, inputs, diff_idx)
    for j, i in enumerate(diff_idx):
        num = _numerical(func, inputs, i, eps)
        if num.size and not np.allclose(analytical[j], num, atol=atol, rtol=rtol):
            if raise_exception:
                raise GradcheckError(
                    f"Jacobian mismatch for output 0 with respect to input {i},\n"
                    f"numerical:{num}\nanalytical:{analytical[j]}\n"
                )
            return False
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **_ignored,
) -> bool:
    """Check second derivatives: gradcheck of the vector-Jacobian product of ``func``."""
    inputs = (inputs,) if isinstance(inputs, _tm.Tensor) else tuple(inputs)
    if not any(isinstance(t, _tm.Tensor) and t.requires_grad for t in inputs):
        raise ValueError(_NO_GRAD_INPUT)
    outs = _outputs(func, inputs)
    rng = np.random.default_rng(0)
    if grad_outputs is None:
        grad_outputs = [_tm._wrap(rng.standard_normal(o._data.shape)) for o in outs]
        for g in grad_outputs:
            g.requires_grad_(True)
    grad_outputs = list(grad_outputs)

    def vjp(*args):
        ins, gos = args[: len(inputs)], args[len(inputs) :]
        os_ = _outputs(func, ins)
        dins = [t for t in ins if isinstance(t, _tm.Tensor) and t.requires_grad]
        gs = _grad(os_, dins, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        vjp,
        inputs + tuple(grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
