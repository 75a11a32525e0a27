"""torch.backends.opt_einsum: einsum contraction-order flags (kept; numpy chooses the order)."""

__all__ = ["enabled", "is_available", "strategy"]

enabled = True
strategy = "auto"


def is_available() -> bool:
    """False: ember's einsum is numpy's, not the opt_einsum package."""
    return False
