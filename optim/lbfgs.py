"""L-BFGS, with an optional strong-Wolfe line search."""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import enable_grad, no_grad
from ..core.device import array_module
from ..core.ops.reduction import _nonempty
from ..core.tensor import Tensor, _wrap
from .optimizer import Optimizer, _bump, _check_lr, _val

__all__ = ["LBFGS"]


def _as_real(a):
    """A complex array viewed as real (each value as its real and imaginary parts, as torch's
    L-BFGS sees a complex parameter: a real one of twice the size); a real array as is."""
    return a.view(a.real.dtype) if a.dtype.kind == "c" else a


def _cubic_interpolate(xp, x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to ``bounds``."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square >= 0:
        d2 = xp.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(
    xp, obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25
):
    """A line search along ``d`` satisfying the strong Wolfe conditions (bracket, then zoom)."""
    d_norm = xp.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(
            xp, t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            xp, bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        bmax, bmin = max(bracket), min(bracket)
        eps = 0.1 * (bmax - bmin)
        if min(bmax - t, t - bmin) < eps:
            # too close to a bracket end: step away from it unless progress was fine
            if insuf_progress or t >= bmax or t <= bmin:
                t = bmax - eps if abs(t - bmax) < abs(t - bmin) else bmin + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def _arr(v):
    return v._data if isinstance(v, Tensor) else v


def _ten(v):
    """A state entry as a tensor (0-dim for an array scalar), like torch's, so a checkpoint loads
    weights-only; python numbers stay numbers."""
    if isinstance(v, np.generic):  # before the float check: np.float64 is a float
        return _wrap(np.asarray(v))
    if v is None or isinstance(v, (int, float, Tensor)):
        return v
    return _wrap(v)


def _scalar(loss) -> float:
    # torch's step runs under no_grad, so reading the loss does not warn about requires_grad
    with no_grad():
        return float(loss)


class LBFGS(Optimizer):
    """torch.optim.LBFGS (one parameter group; ``step`` needs a closure)."""

    _complex_as_real = False  # its closure runs the model on the complex parameters

    def __init__(
        self,
        params,
        lr=1,
        max_iter=20,
        max_eval=None,
        tolerance_grad=1e-7,
        tolerance_change=1e-9,
        history_size=100,
        line_search_fn=None,
    ):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self, xp):
        parts = []
        for p in self._params:
            g = p._grad
            if g is None:
                parts.append(_as_real(xp.zeros(p._data.size, p._data.dtype)))
            else:
                parts.append(_as_real(g._data.reshape(-1)))
        return xp.concatenate(parts)

    def _add_grad(self, t, d) -> None:
        off = 0
        for p in self._params:
            a = _as_real(p._data)
            n = a.size
            a += t * d[off : off + n].reshape(a.shape)
            _bump(p)
            off += n

    def _set_param(self, xs) -> None:
        for p, x in zip(self._params, xs):
            p._data[...] = x
            _bump(p)

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations, evaluating ``closure`` (the loss)."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure")
        group = self.param_groups[0]
        lr = _val(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        hist, ls_fn = group["history_size"], group["line_search_fn"]
        xp = array_module(self._params[0]._data)

        def evaluate():
            with enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = _scalar(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        with no_grad():
            flat_grad = self._flat_grad(xp)
            _nonempty("max", flat_grad, None)  # no parameter elements: torch's max() refuses
            if xp.abs(flat_grad).max() <= tol_grad:
                return orig_loss
            d = _arr(state.get("d"))
            t = _arr(state.get("t"))
            old_dirs = [_arr(v) for v in state.get("old_dirs", [])]
            old_stps = [_arr(v) for v in state.get("old_stps", [])]
            ro = [_arr(v) for v in state.get("ro", [])]
            h_diag = _arr(state.get("H_diag"))
            prev_flat_grad = _arr(state.get("prev_flat_grad"))
            prev_loss = state.get("prev_loss")
            n_iter = 0
            while n_iter < max_iter:
                n_iter += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d = -flat_grad
                    old_dirs, old_stps, ro = [], [], []
                    h_diag = 1
                else:
                    y = flat_grad - prev_flat_grad
                    s = d * t
                    ys = y.dot(s)
                    if ys > 1e-10:
                        if len(old_dirs) == hist:
                            old_dirs.pop(0)
                            old_stps.pop(0)
                            ro.pop(0)
                        old_dirs.append(y)
                        old_stps.append(s)
                        ro.append(1.0 / ys)
                        h_diag = ys / y.dot(y)
                    al = state.setdefault("al", [None] * hist)
                    q = -flat_grad
                    for i in range(len(old_dirs) - 1, -1, -1):
                        al[i] = old_stps[i].dot(q) * ro[i]
                        q -= al[i] * old_dirs[i]
                    d = r = q * h_diag
                    for i in range(len(old_dirs)):
                        be_i = old_dirs[i].dot(r) * ro[i]
                        r += (al[i] - be_i) * old_stps[i]
                prev_flat_grad = flat_grad.copy()
                prev_loss = loss
                if state["n_iter"] == 1:
                    t = min(1.0, 1.0 / xp.abs(flat_grad).sum()) * lr
                else:
                    t = lr
                gtd = flat_grad.dot(d)
                if gtd > -tol_change:
                    break
                ls_evals = 0
                if ls_fn is not None:
                    if ls_fn != "strong_wolfe":
                        raise RuntimeError("only 'strong_wolfe' is supported")
                    x_init = [p._data.copy() for p in self._params]

                    def obj_func(x, step, direction):
                        self._add_grad(step, direction)
                        f = _scalar(evaluate())
                        fg = self._flat_grad(xp)
                        self._set_param(x)
                        return f, fg

                    left = max_eval - current_evals  # all the line search may spend (torch)
                    loss, flat_grad, t, ls_evals = _strong_wolfe(
                        xp, obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=left
                    )
                    self._add_grad(t, d)
                    opt_cond = xp.abs(flat_grad).max() <= tol_grad
                else:
                    self._add_grad(t, d)
                    opt_cond = False
                    if n_iter != max_iter:
                        loss = _scalar(evaluate())
                        flat_grad = self._flat_grad(xp)
                        opt_cond = xp.abs(flat_grad).max() <= tol_grad
                        ls_evals = 1
                current_evals += ls_evals
                state["func_evals"] += ls_evals
                if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                    break
                if xp.abs(d * t).max() <= tol_change:
                    break
                if abs(loss - prev_loss) < tol_change:
                    break
            state["d"] = _ten(d)
            state["t"] = _ten(t)
            state["old_dirs"] = [_ten(v) for v in old_dirs]
            state["old_stps"] = [_ten(v) for v in old_stps]
            state["ro"] = [_ten(v) for v in ro]
            state["H_diag"] = _ten(h_diag)
            if "al" in state:
                state["al"] = [_ten(v) for v in state["al"]]
            state["prev_flat_grad"] = _ten(prev_flat_grad)
            state["prev_loss"] = prev_loss
        return orig_loss
