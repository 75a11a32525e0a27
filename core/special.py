"""ember.special: torch.special's functions.

Most are other names of ember ops (``special.expit`` is ``ember.sigmoid``, ``special.gammaln`` is
``ember.lgamma``, ...); the rest are the ``_special_*`` ops of core/ops/special_fns.py.
"""

from __future__ import annotations

import numpy as _np

from .device import array_module as _array_module
from .ops import arithmetic as _ar
from .ops import pointwise as _pw
from .ops import special_fns as _sf
from .ops.softmax import log_softmax as _log_softmax
from .ops.softmax import softmax as _softmax
from .registry import alias as _alias
from .tensor import Tensor

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]

# ---------------------------------------------------------------- other names of ember ops
digamma = psi = _pw.digamma
erf = _pw.erf
erfc = _pw.erfc
erfinv = _pw.erfinv
exp2 = _pw.exp2
expit = _pw.sigmoid
expm1 = _pw.expm1
gammainc = _pw.igamma
gammaincc = _pw.igammac
gammaln = _pw.lgamma
i0 = _pw.i0
log1p = _pw.log1p
logit = _pw.logit
multigammaln = _pw.mvlgamma
polygamma = _pw.polygamma
sinc = _pw.sinc
xlogy = _ar.xlogy
# torch names these special_<name> in its errors (torch.special.erf("a"): special_erf())
for _name in (
    "digamma",
    "psi",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "log1p",
    "logit",
    "multigammaln",
    "sinc",
    "xlogy",
):
    _alias(globals()[_name], "special." + _name, "special_" + _name)


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """torch.round, except that integer inputs are refused (torch.round copies them: its
    special_round has no integer kernel)."""
    if type(decimals) is not int and not isinstance(decimals, (_np.integer, Tensor)):
        from .arg_errors import type_name

        # (special_round has one overload: its parser names the argument)
        raise TypeError(
            f"special_round(): argument 'decimals' must be int, not {type_name(decimals)}"
        )
    if isinstance(input, Tensor) and input._data.dtype.kind in "iu" and decimals == 0:
        raise _pw._not_impl("round_vml", input._data, _array_module(input._data))
    if out is None:
        return _pw.round(input, decimals=decimals)
    return _pw.round(input, decimals=decimals, out=out)


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """log(sum(exp(input), dim)), computed stably."""
    from .. import logsumexp as _lse

    return _lse(input, dim, keepdim) if out is None else _lse(input, dim, keepdim, out=out)


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``."""
    return _softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """x - logsumexp(x) along ``dim``."""
    return _log_softmax(input, dim, dtype)


# ------------------------------------------------------------- the special_fns ops
airy_ai = _sf._special_airy_ai
bessel_j0 = _sf._special_bessel_j0
bessel_j1 = _sf._special_bessel_j1
bessel_y0 = _sf._special_bessel_y0
bessel_y1 = _sf._special_bessel_y1
modified_bessel_i0 = _sf._special_modified_bessel_i0
modified_bessel_i1 = _sf._special_modified_bessel_i1
modified_bessel_k0 = _sf._special_modified_bessel_k0
modified_bessel_k1 = _sf._special_modified_bessel_k1
scaled_modified_bessel_k0 = _sf._special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _sf._special_scaled_modified_bessel_k1
spherical_bessel_j0 = _sf._special_spherical_bessel_j0
erfcx = _sf._special_erfcx
i0e = _sf._special_i0e
i1 = _sf._special_i1
i1e = _sf._special_i1e
ndtr = _sf._special_ndtr
ndtri = _sf._special_ndtri
log_ndtr = _sf._special_log_ndtr
entr = _sf._special_entr
xlog1py = _sf._special_xlog1py
zeta = _sf._special_zeta
chebyshev_polynomial_t = _sf._special_chebyshev_polynomial_t
chebyshev_polynomial_u = _sf._special_chebyshev_polynomial_u
chebyshev_polynomial_v = _sf._special_chebyshev_polynomial_v
chebyshev_polynomial_w = _sf._special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _sf._special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _sf._special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _sf._special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _sf._special_shifted_chebyshev_polynomial_w
hermite_polynomial_h = _sf._special_hermite_polynomial_h
hermite_polynomial_he = _sf._special_hermite_polynomial_he
laguerre_polynomial_l = _sf._special_laguerre_polynomial_l
legendre_polynomial_p = _sf._special_legendre_polynomial_p


# ``import ember.special`` works like ``import torch.special``: the namespace is this module
import sys as _sys

_sys.modules.setdefault(__name__.rsplit(".", 2)[0] + ".special", _sys.modules[__name__])
