"""Fused cupy kernels for the SGD and Adam/AdamW parameter updates: one launch per parameter.

On a GPU the generic updates of optim/sgd.py and optim/adam.py are one kernel launch per array
op: SGD with momentum 4 per parameter, Adam about 12, so an optimizer step over a few dozen small
parameters costs hundreds of launches (bench/'s CNN step: 32 of its 215 device-array calls are
SGD's). Here each parameter's whole update is one ``ElementwiseKernel`` over its elements, with
the arithmetic in double and one rounding at each store.

The bodies are plain C over one element ``i`` of linearly indexed raw arrays, as in
fused_rnn.py: the test suite compiles the same text with the host's C++ compiler and runs the
optimizers' steps with it (tests/test_fused_optim.py); only cupy's compilation waits for a GPU.
"""

from __future__ import annotations

from .launch import KernelSet, kernel_set, launch

SGD_STEP = """
double gi = (double)g[i];
if (wd != 0) gi += wd * (double)d[i];
if (has_mom) {
    const double bi = first ? gi : mom * (double)buf[i] + (1 - damp) * gi;
    buf[i] = (T)bi;
    gi = nesterov ? gi + mom * (double)(T)bi : (double)(T)bi;
}
d[i] = (T)((double)d[i] - lr * gi);
"""
"""One SGD update of element ``i``: weight decay, the momentum buffer (``first``: it starts as
the gradient), Nesterov, then d -= lr * g."""

ADAM_STEP = """
double di = (double)d[i], gi = (double)g[i];
if (wd != 0) {
    if (decoupled) di *= 1 - lr * wd;
    else gi += wd * di;
}
const double mi = (double)m[i] + (1 - beta1) * (gi - (double)m[i]);
const double vi = beta2 * (double)v[i] + (1 - beta2) * gi * gi;
m[i] = (T)mi;
v[i] = (T)vi;
double vh = (double)v[i];
if (ams) {
    const double a = (double)mx[i];
    vh = (a != a || a > vh) ? a : vh;  // torch.maximum: NaN wins
    mx[i] = (T)vh;
}
d[i] = (T)(di - (lr / bc1) * (double)m[i] / (sqrt(vh) / bc2s + eps));
"""
"""One Adam/AdamW update of element ``i``: weight decay (L2 or decoupled), the two moments, the
AMSGrad maximum, and the bias-corrected step (``bc1`` = 1 - beta1^t, ``bc2s`` = sqrt(1 -
beta2^t))."""

# (in params, out params) of each body, in the order the optimizers pass them
PARAMS = {
    SGD_STEP: (
        (
            "raw T g, float64 lr, float64 mom, float64 damp, float64 wd, int32 nesterov, "
            "int32 has_mom, int32 first"
        ),
        "raw T d, raw T buf",
    ),
    ADAM_STEP: (
        (
            "raw T g, float64 lr, float64 beta1, float64 beta2, float64 eps, float64 wd, "
            "float64 bc1, float64 bc2s, int32 decoupled, int32 ams"
        ),
        "raw T d, raw T m, raw T v, raw T mx",
    ),
}

_BODIES = {"ember_sgd_step": SGD_STEP, "ember_adam_step": ADAM_STEP}
_ORDER = {body: n for n, body in enumerate(_BODIES.values())}
_CACHE: dict = {}


def _kernel(xp, body, d, g):
    """The body's kernel for parameter data ``d`` and its gradient ``g`` on ``xp`` (the real
    cupy module), or None where the generic update runs: numpy and other array modules,
    non-float or mixed dtypes, a parameter that is not one C-contiguous block."""
    if g.dtype != d.dtype or not d.flags.c_contiguous:
        return None
    kernels = kernel_set(xp, d.dtype, _CACHE, KernelSet, _BODIES, PARAMS)
    return None if kernels is None else kernels._kernels[_ORDER[body]]


def sgd_fusable(xp, d, g) -> bool:
    """Whether SGD's update of ``d`` by ``g`` runs as the fused kernel here (before a first
    momentum buffer is made for it)."""
    return _kernel(xp, SGD_STEP, d, g) is not None


def sgd_step(xp, d, g, buf, lr, momentum, dampening, weight_decay, nesterov, first) -> bool:
    """SGD's update of ``d`` (and of the momentum buffer ``buf``, None without momentum) in one
    launch; False (nothing done) where the generic update must run."""
    k = _kernel(xp, SGD_STEP, d, g)
    if k is None or (buf is not None and not buf.flags.c_contiguous):
        return False
    has_mom = buf is not None
    args = (float(lr), float(momentum), float(dampening), float(weight_decay), int(nesterov))
    launch(
        k,
        (xp.ascontiguousarray(g), *args, int(has_mom), int(first), d, buf if has_mom else d),
        d.size,
    )
    return True


def adam_step(xp, d, g, m, v, mx, lr, beta1, beta2, eps, wd, bc1, bc2s, decoupled) -> bool:
    """Adam's update of ``d`` and its moments ``m``, ``v`` (and the AMSGrad maximum ``mx``, None
    without it) in one launch; False (nothing done) where the generic update must run."""
    k = _kernel(xp, ADAM_STEP, d, g)
    states = (m, v) if mx is None else (m, v, mx)
    if k is None or not all(s.flags.c_contiguous for s in states):
        return False
    args = (float(lr), float(beta1), float(beta2), float(eps), float(wd), float(bc1), float(bc2s))
    flags = (int(decoupled), int(mx is not None))
    launch(k, (xp.ascontiguousarray(g), *args, *flags, d, m, v, d if mx is None else mx), d.size)
    return True
