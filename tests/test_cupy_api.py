"""Every array-module call the kernels make (``xp.<name>(...)``) exists in cupy, with keywords
cupy's function accepts. The strict fake-cupy backend is numpy underneath, so a numpy-only
function or keyword passes there and breaks only on a GPU; this reads the source instead.

Runs wherever cupy is installed, GPU or not."""

from __future__ import annotations

import ast
import inspect
import pathlib

import ember
import pytest

cupy = pytest.importorskip("cupy", reason="cupy is not installed")

ROOT = pathlib.Path(ember.__file__).parent
SOURCES = [
    p
    for d in ("core", "nn", "optim", "autograd", "data", "utils", "amp", "cuda_")
    for p in sorted((ROOT / d).rglob("*.py"))
]


def _xp_calls():
    """(file:line, dotted name after ``xp.``, keyword names) of every ``xp.*(...)`` call."""
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            chain, f = [], node.func
            while isinstance(f, ast.Attribute):
                chain.append(f.attr)
                f = f.value
            if isinstance(f, ast.Name) and f.id == "xp" and chain:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                yield where, ".".join(reversed(chain)), [k.arg for k in node.keywords if k.arg]


# guarded at the call site (hasattr): cupy has no floating-point error state
OPTIONAL = {"errstate"}


def test_the_scan_sees_the_kernels():
    names = {name for _, name, _ in _xp_calls()}
    assert {"matmul", "empty", "ascontiguousarray", "add.at"} <= names


def test_every_xp_call_exists_in_cupy_with_its_keywords():
    problems = []
    for where, name, keywords in _xp_calls():
        obj = cupy
        try:
            for part in name.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            if name not in OPTIONAL:
                problems.append(f"{where}: cupy has no {name}")
            continue
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):  # ufuncs and other builtins: no signature to read
            continue
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            continue
        bad = [k for k in keywords if k not in params]
        if bad:
            problems.append(f"{where}: cupy.{name} takes no {bad}")
    assert problems == []


def _special_names():
    """The scipy.special names the kernels call by string: ``_sp(xp, "name", ...)`` and
    ``_unary(torch_name, "name")`` (core/ops/pointwise.py, core/ops/special_fns.py)."""
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("_sp", "_unary")
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
            ):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.args[1].value


def test_every_special_function_exists_in_cupyx():
    special = pytest.importorskip("cupyx.scipy.special")
    found = list(_special_names())
    assert len(found) > 20  # the scan sees the kernels
    assert [f"{w}: {n}" for w, n in found if not hasattr(special, n)] == []
