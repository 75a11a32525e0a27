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


# Complex numbers are checked as pairs of reals (torch's view): a complex output gives two
# columns per element (real part, then imaginary part: all real parts of the output first), a
# complex input two rows per element (d/d real, d/d imag). Every Jacobian is real.
def _values(fn, inputs):
    # grad mode stays on: gradgradcheck's function itself calls autograd.grad
    vals = []
    for o in _outputs(fn, inputs):
        a = o._data.reshape(-1)
        if a.dtype.kind == "c":
            a = a.astype(np.complex128)
            vals.append(np.concatenate([a.real, a.imag]))
        else:
            vals.append(a.astype(np.float64))
    return vals


def _numerical(fn, inputs, idx, eps):
    """d(outputs)/d(inputs[idx]) by central differences: rows = input (real) variables."""
    x = inputs[idx]
    flat = x._data.reshape(-1)  # a view: perturb in place (x is contiguous float64/complex128)
    steps = (eps, 1j * eps) if flat.dtype.kind == "c" else (eps,)
    cols = []
    for k in range(flat.size):
        orig = flat[k]
        for h in steps:
            flat[k] = orig + h
            plus = _values(fn, inputs)
            flat[k] = orig - h
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
    cplx_in = [t._data.dtype.kind == "c" for t in diff_in]
    sizes = [o._data.size * (2 if o._data.dtype.kind == "c" else 1) for o in outs]
    jac = [np.zeros((t._data.size * (2 if c else 1), sum(sizes))) for t, c in zip(diff_in, cplx_in)]
    col = 0
    for o, size in zip(outs, sizes):
        if not o.requires_grad:
            col += size
            continue
        n = o._data.size
        # the upstream gradient of Re(o_k) is 1, of Im(o_k) is 1j (torch's convention)
        units = (1, 1j) if o._data.dtype.kind == "c" else (1,)
        for p, unit in enumerate(units):
            for k in range(n):
                g = np.zeros(o._data.shape, o._data.dtype)
                g.reshape(-1)[k] = unit
                grads = _grad(
                    o, diff_in, _tm._wrap(g, o._names), retain_graph=True, allow_unused=True
                )
                for j, gr in enumerate(grads):
                    if gr is None:
                        continue
                    a = np.asarray(gr._data).reshape(-1)
                    if cplx_in[j]:  # d/d real, d/d imag of each element
                        jac[j][0::2, col + p * n + k] = a.real
                        jac[j][1::2, col + p * n + k] = a.imag
                    else:
                        jac[j][:, col + p * n + k] = a.real
        col += size
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
        grad_outputs = [
            _tm._wrap(
                rng.standard_normal(o._data.shape) + 1j * rng.standard_normal(o._data.shape)
                if o._data.dtype.kind == "c"
                else rng.standard_normal(o._data.shape)
            )
            for o in outs
        ]
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
