"""gradcheck / gradgradcheck: compare autograd's gradients with float64 central differences."""

from __future__ import annotations

import warnings

import numpy as np

from ..core import tensor as _tm
from .engine import grad as _grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients differ."""


def _outputs(fn, inputs, differentiable: bool = True):
    """The floating and complex tensor outputs of ``fn(*inputs)``; only those requiring grad when
    ``differentiable`` (torch compares only these: the others must be constant)."""
    out = fn(*inputs)
    outs = (out,) if isinstance(out, _tm.Tensor) else out
    return tuple(
        o
        for o in outs
        if isinstance(o, _tm.Tensor)
        and (o.requires_grad if differentiable else o._data.dtype.kind in "fc")
    )


# Complex numbers are checked as pairs of reals (torch's view): a complex output gives two
# columns per element (real part, then imaginary part: all real parts of the output first), a
# complex input two rows per element (d/d real, d/d imag). Every Jacobian is real.
def _values(fn, inputs, differentiable: bool = True):
    # grad mode stays on: gradgradcheck's function itself calls autograd.grad
    vals = []
    for o in _outputs(fn, inputs, differentiable):
        a = o._data.reshape(-1)
        if a.dtype.kind == "c":
            a = a.astype(np.complex128)
            vals.append(np.concatenate([a.real, a.imag]))
        else:
            vals.append(a.astype(np.float64))
    return vals


def _numerical(fn, inputs, idx, eps, differentiable: bool = True):
    """d(outputs)/d(inputs[idx]) by central differences: rows = input (real) variables."""
    x = inputs[idx]
    flat = x._data.reshape(-1)  # a view: perturb in place (x is contiguous float64/complex128)
    steps = (eps, 1j * eps) if flat.dtype.kind == "c" else (eps,)
    cols = []
    for k in range(flat.size):
        orig = flat[k]
        for h in steps:
            flat[k] = orig + h
            plus = _values(fn, inputs, differentiable)
            flat[k] = orig - h
            minus = _values(fn, inputs, differentiable)
            flat[k] = orig
            cols.append(
                np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
                if plus
                else np.zeros(0)
            )
    return np.stack(cols) if cols else np.zeros((0, 0))


def _analytical(fn, inputs, diff_idx, check_grad_dtypes: bool = False):
    outs = _outputs(fn, inputs)
    diff_in = [inputs[i] for i in diff_idx]
    cplx_in = [t._data.dtype.kind == "c" for t in diff_in]
    sizes = [o._data.size * (2 if o._data.dtype.kind == "c" else 1) for o in outs]
    jac = [np.zeros((t._data.size * (2 if c else 1), sum(sizes))) for t, c in zip(diff_in, cplx_in)]
    col = 0
    for o, size in zip(outs, sizes):
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
                    if check_grad_dtypes and gr._data.dtype != diff_in[j]._data.dtype:
                        raise GradcheckError("Gradient has dtype mismatch")
                    a = np.asarray(gr._data).reshape(-1)
                    if cplx_in[j]:  # d/d real, d/d imag of each element
                        jac[j][0::2, col + p * n + k] = a.real
                        jac[j][1::2, col + p * n + k] = a.imag
                    else:
                        jac[j][:, col + p * n + k] = a.real
        col += size
    return jac


def _check_zero_grad(fn, inputs, diff_idx) -> None:
    """A zero upstream gradient must give zero (or no) input gradients."""
    outs = _outputs(fn, inputs)
    if not outs:
        return
    zeros = [_tm._wrap(np.zeros(o._data.shape, o._data.dtype), o._names) for o in outs]
    grads = _grad(outs, [inputs[i] for i in diff_idx], zeros, allow_unused=True)
    if any(g is not None and np.any(np.asarray(g._data) != 0) for g in grads):
        raise GradcheckError("backward not multiplied by grad_output")


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


_NONDET = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output "
    "multiple times gives different values, although analytical gradient matches numerical "
    "gradient.The tolerance for nondeterminism was {tol}.\n\nNOTE: If your op relies on "
    "non-deterministic operations, this failure might be expected: call "
    "gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument."
)


def _blocks(jac, outs):
    """Split a Jacobian's columns into one block per output (rows: the input's variables)."""
    sizes = [o._data.size * (2 if o._data.dtype.kind == "c" else 1) for o in outs]
    return np.split(jac, np.cumsum(sizes)[:-1], axis=1) if outs else []


def _as_tensor(block, out):
    real = np.empty(0, out._data.dtype).real.dtype  # a complex output's Jacobian is real
    return _tm._wrap(
        np.asarray(block, real if block.dtype.kind != "c" else np.result_type(real, 1j))
    )


def _torch_blocks(jac, outs, cplx_in: bool, imag: bool) -> list:
    """torch's view of one input's Jacobian: per output a (input elements, output elements)
    matrix of the output's imaginary (``imag``) or real part; for a complex input its entries are
    d/d(real part) + 1j * d/d(imaginary part)."""
    blocks = []
    for blk, o in zip(_blocks(jac, outs), outs):
        if o._data.dtype.kind == "c":
            n = o._data.size
            blk = blk[:, n:] if imag else blk[:, :n]
        blocks.append(blk[0::2] + 1j * blk[1::2] if cplx_in else blk)
    return blocks


_FORWARD = "Jacobian computed with forward mode"
_FAST_MODE_NOTE = (
    "\n\nThe above quantities relating the numerical and analytical jacobians are computed \n"
    "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
    "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
)


def _compare(nums, anas, outs, cplx_in, atol, rtol, what: str, fast_mode: bool = False):
    """Raise torch's message for the first (output, input) pair whose Jacobians differ, in
    torch's order: with complex outputs their imaginary parts first, then their real parts (each
    message saying which); outputs outer, the differentiable inputs (numbered among themselves)
    inner. In ``fast_mode`` torch reports the two Jacobians projected on random vectors first
    (u^T J v; forward mode: J u, a vector), then the full ones and their largest difference;
    ember draws its own vectors."""
    phases = [("", False)]
    if any(o._data.dtype.kind == "c" for o in outs):
        phases = [
            (f"While considering the {part} part of complex outputs only, ", part == "imaginary")
            for part in ("imaginary", "real")
        ]
    for prefix, imag in phases:
        num_b = [_torch_blocks(n, outs, c, imag) for n, c in zip(nums, cplx_in)]
        ana_b = [_torch_blocks(a, outs, c, imag) for a, c in zip(anas, cplx_in)]
        for o, out in enumerate(outs):
            for i in range(len(nums)):
                nb, ab = num_b[i][o], ana_b[i][o]
                if nb.size and not np.allclose(ab, nb, atol=atol, rtol=rtol):
                    raise GradcheckError(prefix + _mismatch(nb, ab, out, o, i, what, fast_mode))


def _mismatch(nb, ab, out, o: int, i: int, what: str, fast_mode: bool) -> str:
    head = f"{what} mismatch for output {o} with respect to input {i},\n"
    n, a = _as_tensor(nb, out), _as_tensor(ab, out)
    if not fast_mode:
        return f"{head}numerical:{n}\nanalytical:{a}\n"
    rng = np.random.default_rng(0)
    u, v = rng.standard_normal(nb.shape[0]), rng.standard_normal(nb.shape[1])
    if what == _FORWARD:
        pn, pa = _as_tensor(u @ nb, out), _as_tensor(u @ ab, out)
    else:
        pn, pa = (u @ nb @ v).item(), (u @ ab @ v).item()
    return (
        f"{head}numerical:{pn}\nanalytical:{pa}"
        f"{_FAST_MODE_NOTE}Numerical:\n {n}\nAnalytical:\n{a}\n\n"
        f"The max per-element difference (slow mode) is: {np.abs(ab - nb).max()}.\n"
    )


def _forward_mode(fn, inputs, diff_idx):
    """The Jacobians by forward-mode AD (one dual evaluation per input variable), of the
    outputs that require grad when ``fn`` runs on ``inputs``."""
    from . import forward_ad as fwad

    keep = [o.requires_grad for o in _outputs(fn, inputs, False)]
    jacs = []
    for i in diff_idx:
        x = inputs[i]
        cplx = x._data.dtype.kind == "c"
        rows = []
        for k in range(x._data.size):
            for unit in (1, 1j) if cplx else (1,):
                t = np.zeros(x._data.shape, x._data.dtype)
                t.reshape(-1)[k] = unit
                with fwad.dual_level():
                    args = list(inputs)
                    args[i] = fwad.make_dual(x.detach(), _tm._wrap(t))
                    cols = []
                    outs = _outputs(fn, args, False)
                    for o in (o for o, kept in zip(outs, keep, strict=True) if kept):
                        tan = fwad.unpack_dual(o).tangent
                        a = (
                            np.zeros(o._data.size, o._data.dtype)
                            if tan is None
                            else np.asarray(tan._data).reshape(-1)
                        )
                        cols.append(np.concatenate([a.real, a.imag]) if a.dtype.kind == "c" else a)
                rows.append(np.concatenate(cols) if cols else np.zeros(0))
        jacs.append(np.stack(rows) if rows else np.zeros((0, 0)))
    return jacs


def _fail(raise_exception: bool, err: GradcheckError) -> bool:
    if raise_exception:
        raise err
    return False


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` (float64 tensors requiring grad) against
    central differences: the backward Jacobian (``check_backward_ad``; run twice, the two must
    agree within ``nondet_tol``, and a zero upstream gradient must give zero gradients) and, with
    ``check_forward_ad``, the forward-mode one. ``check_grad_dtypes``: each gradient has its
    input's dtype. Only outputs that require grad are compared (when none does, the function
    must be constant in its inputs); complex ones as their imaginary, then real parts.

    ember runs the full check in ``fast_mode`` too (same verdict, more work; a failure is
    reported in torch's fast-mode form, with ember's own random projections); the batched checks
    are covered by the plain ones (ember's vmap calls the function once per batch element), and
    ``check_undefined_grad``/``masked`` have nothing more to check (the engine materialises
    missing gradients as zeros; no sparse inputs)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    inputs = (inputs,) if isinstance(inputs, _tm.Tensor) else tuple(inputs)
    diff_idx = _check_inputs(inputs)
    inputs = tuple(
        t.contiguous() if i in diff_idx and not t._data.flags.c_contiguous else t
        for i, t in enumerate(inputs)
    )
    outs = _outputs(func, inputs)
    if not outs:  # nothing to differentiate: the function must then be constant in its inputs
        if any(np.any(_numerical(func, inputs, i, eps, False)) for i in diff_idx):
            return _fail(
                raise_exception,
                GradcheckError("Numerical gradient for function expected to be zero"),
            )
        return True
    nums = [_numerical(func, inputs, i, eps) for i in diff_idx]
    cplx_in = [inputs[i]._data.dtype.kind == "c" for i in diff_idx]
    try:
        if check_backward_ad:
            analytical = _analytical(func, inputs, diff_idx, check_grad_dtypes)
            _compare(nums, analytical, outs, cplx_in, atol, rtol, "Jacobian", fast_mode)
            again = _analytical(func, inputs, diff_idx, False)
            if any(np.abs(a - b).max(initial=0) > nondet_tol for a, b in zip(analytical, again)):
                raise GradcheckError(_NONDET.format(tol=nondet_tol))
            _check_zero_grad(func, inputs, diff_idx)
        if check_forward_ad:
            forward = _forward_mode(func, inputs, diff_idx)
            _compare(nums, forward, outs, cplx_in, atol, rtol, _FORWARD, fast_mode)
    except GradcheckError as err:
        return _fail(raise_exception, err)
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of the vector-Jacobian product of ``func`` (reverse
    over reverse; ``check_fwd_over_rev``: forward mode over it). Random ``grad_outputs`` when
    None (their layout does not matter to ember's kernels: ``gen_non_contig_grad_outputs`` is
    accepted and changes nothing)."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    inputs = (inputs,) if isinstance(inputs, _tm.Tensor) else tuple(inputs)
    if not any(isinstance(t, _tm.Tensor) and t.requires_grad for t in inputs):
        raise ValueError(_NO_GRAD_INPUT)
    outs = _outputs(func, inputs)
    rng = np.random.default_rng(0)
    if grad_outputs is None:  # in each output's dtype, as torch's
        grad_outputs = [
            _tm._wrap(
                (
                    rng.standard_normal(o._data.shape) + 1j * rng.standard_normal(o._data.shape)
                    if o._data.dtype.kind == "c"
                    else rng.standard_normal(o._data.shape)
                ).astype(o._data.dtype)
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
        nondet_tol=nondet_tol,
        check_grad_dtypes=check_grad_dtypes,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        fast_mode=fast_mode,
    )
