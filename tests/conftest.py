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


@pytest.fixture
def ember_alias():
    """``ember_alias(name)`` makes ``import <name>`` import ember for this test (drop-in mode
    under another name: real torch is imported in this process); undone after the test."""
    from ember import dropin

    names = []

    def install(name: str):
        names.append(name)
        return dropin.install(name)

    yield install
    for name in names:
        dropin.uninstall(name)
