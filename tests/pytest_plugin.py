"""Loaded with ``-p``: collect the repo root (which is the package ``ember``) as a plain directory.

pytest would otherwise treat the root's ``__init__.py`` as a package named after the checkout folder
and import it a second time under that name, giving two copies of every ember class.
"""

from pathlib import Path

import pytest


def pytest_collect_directory(path: Path, parent):
    if (path / "__init__.py").exists() and (path / "pyproject.toml").exists():
        return pytest.Dir.from_parent(parent, path=path)
    return None
