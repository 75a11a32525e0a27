"""``ember.quasirandom``: low-discrepancy sequences (torch.quasirandom).

SobolEngine draws Sobol' points through ``scipy.stats.qmc.Sobol`` (Joe & Kuo direction numbers,
30 bits, like torch): unscrambled sequences equal torch's point for point; scrambled ones follow
scipy's random scrambling (same distribution as torch's, not the same numbers).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["SobolEngine"]

_MAXDIM = 21201


def _sobol(dimension: int, scramble: bool, seed):
    from scipy.stats import qmc

    try:  # scipy >= 1.15 names the random source ``rng``
        return qmc.Sobol(dimension, scramble=scramble, rng=seed)
    except TypeError:  # pragma: no cover - older scipy
        return qmc.Sobol(dimension, scramble=scramble, seed=seed)


class SobolEngine:
    """A Sobol' sequence generator: ``draw(n)`` returns the next n points of [0, 1)^dimension."""

    MAXBIT = 30
    MAXDIM = _MAXDIM

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if dimension > _MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {_MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        if scramble and seed is None:
            # follow ember's global generator, so manual_seed makes scrambling reproducible
            from .ops.random import randint

            seed = int(randint(0, 2**62, ()).item())
        self._engine = _sobol(dimension, scramble, None if seed is None else int(seed))
        self.num_generated = 0

    def _wrap(self, pts: np.ndarray, out, dtype):
        from .dtype import get_default_dtype
        from .ops.creation import tensor

        if dtype is None:
            dtype = out.dtype if out is not None else get_default_dtype()
        r = tensor(pts, dtype=dtype)
        if out is not None:
            out.resize_as_(r).copy_(r)
            return out
        return r

    def _random(self, n: int) -> np.ndarray:
        with warnings.catch_warnings():  # scipy warns about non power of 2 draws; torch does not
            warnings.simplefilter("ignore", UserWarning)
            pts = self._engine.random(n)
        self.num_generated += n
        return pts

    def draw(self, n: int = 1, out=None, dtype=None):
        """The next ``n`` points, an (n, dimension) tensor (default dtype unless ``dtype``)."""
        return self._wrap(self._random(n), out, dtype)

    def draw_base2(self, m: int, out=None, dtype=None):
        """The next ``2**m`` points; the total drawn must stay a power of 2 (balance)."""
        n = 2**m
        total_n = self.num_generated + n
        if total_n & (total_n - 1):
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, please "
                "use 'SobolEngine.draw()' instead."
            )
        return self.draw(n, out, dtype)

    def reset(self) -> SobolEngine:
        """Back to the first point (the same scrambling)."""
        self._engine.reset()
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip the next ``n`` points."""
        self._engine.fast_forward(n)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(parts)})"
