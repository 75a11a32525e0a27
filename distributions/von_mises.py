"""Von Mises (circular normal) distribution."""

from __future__ import annotations

import math
from typing import ClassVar

import ember

from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


# Abramowitz & Stegun 9.8.1-9.8.4: I_0, I_1 by polynomials in (x / 3.75)^2 below 3.75 and in
# 3.75 / x above (scaled by e^x / sqrt(x)). torch evaluates log I_n this way, in the input's
# dtype, not exactly: the same polynomials give its float32 roundings (a variance of 0 at large
# concentrations) and its ~1e-7 relative error in float64.
_SMALL = (
    (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813),
    (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411),
)
_LARGE = (
    (0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281)
    + (-0.02057706, 0.02635537, -0.01647633, 0.00392377),
    (0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555)
    + (0.02282967, -0.02895312, 0.01787654, -0.00420059),
)


def _horner(y: ember.Tensor, coeffs: tuple) -> ember.Tensor:
    out = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        out = c + y * out
    return out


def _log_bessel_i(x: ember.Tensor, order: int) -> ember.Tensor:
    """log I_order(x) for x > 0 (order 0 or 1), by the polynomial approximations above."""
    small = _horner((x / 3.75) ** 2, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _horner(3.75 / x, _LARGE[order]).log()
    return ember.where(x < 3.75, small.log(), large)


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best & Fisher (1979) rejection sampler, in float64; returns angles in [-pi, pi)."""
    kappa = concentration.expand(shape).double()
    r = proposal_r.expand(shape).double()
    loc = loc.expand(shape).double()
    done = ember.zeros(shape, dtype=ember.bool, device=loc.device)
    x = ember.empty(shape, dtype=ember.float64, device=loc.device)
    while not bool(done.all()):
        u = ember.rand((3,) + tuple(shape), dtype=ember.float64, device=loc.device)
        u1, u2, u3 = u[0], u[1], u[2]
        z = ember.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        new = accept & ~done
        if bool(new.any()):
            theta = ember.sign(u3 - 0.5) * f.acos()
            x = ember.where(new, theta, x)
            done = done | accept
    return ((x + math.pi + loc) % (2 * math.pi)) - math.pi


class VonMises(Distribution):
    r"""A circular von Mises distribution.

    This implementation uses polar coordinates: ``loc`` and ``value`` may be any real number
    (to allow unconstrained optimization), but are interpreted as angles modulo 2 pi.

    Example::

        >>> m = VonMises(ember.tensor([1.0]), ember.tensor([1.0]))
        >>> m.sample()  # von Mises distributed with loc=1 and concentration=1
        tensor([1.9777])

    Args:
        loc (Tensor): an angle in radians.
        concentration (Tensor): concentration parameter.
        validate_args (bool, optional): whether to validate arguments.
    """

    arg_constraints: ClassVar[dict] = {
        "loc": constraints.real,
        "concentration": constraints.positive,
    }
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, ember.Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> VonMises:
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value: ember.Tensor) -> ember.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ember.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_bessel_i(self.concentration, 0)

    @lazy_property
    def _loc(self) -> ember.Tensor:
        return self.loc.double()

    @lazy_property
    def _concentration(self) -> ember.Tensor:
        return self.concentration.double()

    @lazy_property
    def _proposal_r(self) -> ember.Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        _proposal_r = (1 + rho**2) / (2 * rho)
        # second-order Taylor expansion around 0 for small kappa
        _proposal_r_taylor = 1 / kappa + kappa
        return ember.where(kappa < 1e-5, _proposal_r_taylor, _proposal_r)

    def sample(self, sample_shape=()) -> ember.Tensor:
        """The von Mises distribution is sampled with the rejection method of Best and Fisher
        (1979), in double precision."""
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            x = _rejection_sample(self._loc, self._concentration, self._proposal_r, shape)
            return x.to(self.loc.dtype)

    @property
    def mean(self) -> ember.Tensor:
        """The provided mean is the circular one."""
        return self.loc

    @property
    def mode(self) -> ember.Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> ember.Tensor:
        """The provided variance is the circular one."""
        k = self.concentration
        return 1 - (_log_bessel_i(k, 1) - _log_bessel_i(k, 0)).exp()
