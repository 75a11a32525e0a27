"""Packaging: every folder of the package is installed (pyproject lists it), so a non-editable
install has every module an editable checkout has."""

import pathlib

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = pathlib.Path(__file__).resolve().parents[1]
SKIP = {"tests", "build", "docs", "bench", ".ci", ".git", ".github"}


def test_every_package_folder_is_listed_in_pyproject():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(conf["tool"]["setuptools"]["packages"])
    found = {"ember"}
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if not rel.parts or rel.parts[0] in SKIP or rel.parts[0].endswith(".egg-info"):
            continue
        if "_shim" in rel.parts:  # the drop-in's `torch` shim ships as package data
            continue
        found.add(".".join(("ember", *rel.parts)))
    assert sorted(found - listed) == [], "package folders missing from pyproject's packages"
    assert sorted(listed - found) == [], "pyproject lists packages that do not exist"
