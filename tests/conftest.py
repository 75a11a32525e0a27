"""Shared fixtures: torch (the oracle) when installed, and a fresh RNG."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def _restore_defaults():
    import ember

    d = ember.get_default_dtype()
    yield
    ember.set_default_dtype(d)
    ember.set_default_device("cpu")
