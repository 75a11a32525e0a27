"""ember.cuda.random (torch.cuda.random): the GPU generators' seeding and state functions, where
checkpointing code reaches for them (``torch.cuda.random.get_rng_state_all()``)."""

from __future__ import annotations

from . import (
    get_rng_state,
    get_rng_state_all,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)

__all__ = [
    "get_rng_state",
    "get_rng_state_all",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "set_rng_state",
    "set_rng_state_all",
]
